"""Run-folder records: metrics as JSON lines + TensorBoard, and versions.json.

metrics.jsonl (one JSON object per line, appended and flushed as they happen):
    {"step", "tokens", "train_loss", "lr", "tokens_per_s", "time_s", "grad_norm"}     training rows
        + "grad_norm_input" / "grad_norm_head" (before clipping: the input side, an untied head;
          single-process runs) and, on the first logged row after a compiled first step, "compile_s"
    {"step", "tokens", "val_loss", "val_ppl", "val_bpb", "split"}                      validation rows
    and, in every row, "run_id": the run's id (``leviathan.run_identity``; absent in logs written before)
TensorBoard (``<run_dir>/tensorboard``) gets the same numbers as ``train/*`` and ``val/*`` scalars.
Readers take the lines back typed (``read_metric_rows`` -> ``MetricsRow``, a missing key None), each checked first
(``metrics_row_problem``): a line that is not an object or holds a mistyped field is skipped with one ``warning:
PATH:N: ...`` line (issue 30 round 4), and so is a line cut short (round 14, A133; a reader polling a run being
trained passes ``report=None`` and stays quiet).

On resume from step s the rows after s (written by the interrupted run after its last checkpoint) are dropped from
metrics.jsonl (rewritten atomically) and TensorBoard is told to purge them, so the records read as one run; a log
that lacks rows of the steps the checkpoint trained (emptied, cut short) is said so in one note (``lost_rows``).
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..codec import DROP, decode
from ..eval.consistency import exp_shown, ppl_contradicts
from ..io import atomic_write_text, check_some_json, cpu_id, metrics_file, named
from ..run_identity import RUN_FILE, is_run_id, quiet_identity, read_identity
from .event_writer import event_writer, events_named
from .metrics_order import in_order
from ..jsonl import CUT_SHORT, line_value


@dataclass
class MetricsRow:
    """One line of metrics.jsonl, read back (see the module docstring for which rows have which keys)."""

    step: int | None = None
    tokens: float | None = None
    train_loss: float | None = None
    lr: float | None = None
    tokens_per_s: float | None = None
    time_s: float | None = None
    grad_norm: float | None = None
    grad_norm_input: float | None = None
    grad_norm_head: float | None = None
    compile_s: float | None = None
    val_loss: float | None = None
    val_ppl: float | None = None
    val_bpb: float | None = None
    split: str | None = None  # validation rows: the split scored
    run_id: str | None = None  # the run that logged it (``leviathan.run_identity``; None: before run ids)


_NUMBER_FIELDS = ("train_loss", "lr", "tokens_per_s", "time_s", "grad_norm", "grad_norm_input", "grad_norm_head",
                  "compile_s", "val_loss", "val_ppl", "val_bpb")


def metrics_row_problem(row: object) -> str | None:
    """Why a parsed line of metrics.jsonl is not a metrics row (None: it is one). The logger writes an object with an
    integer step >= 0, a token count >= 0, numbers (a diverged loss may be NaN or infinity) and a split name."""
    if not isinstance(row, dict):
        return f"is not a metrics row (a JSON object), but a JSON {type(row).__name__}"
    step = row.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
        return f"has step {step!r}, not an integer >= 0"
    tokens = row.get("tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, (int, float)) or not tokens >= 0):
        return f"has tokens {tokens!r}, not a count"
    for key in _NUMBER_FIELDS:
        value = row.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"has {key} {value!r}, not a number"
    if row.get("split") is not None and not isinstance(row["split"], str):
        return f"has split {row['split']!r}, not a split name"
    if row.get("run_id") is not None and not is_run_id(row["run_id"]):
        return f"has run_id {row['run_id']!r}, not a run id (32 hex digits)"
    return _impossible_numbers(row)


# the logger's numbers that are never below 0: a learning rate, a speed, a time, a gradient's norm (lr -1 was read
# back without a word while train_loss -3 is refused: issue 30 round 28, U544)
_AT_LEAST_ZERO = ("lr", "tokens_per_s", "time_s", "grad_norm", "grad_norm_input", "grad_norm_head", "compile_s")


def _impossible_numbers(row: dict) -> str | None:
    """Why a row's numbers cannot be ones the logger wrote (issue 30 round 11, S30: a validation line edited to loss
    -1.0, perplexity 0.37 was quoted on an export's card): a cross-entropy is >= 0 and its perplexity exp(loss) >= 1
    (a diverged run's NaN loss and inf perplexity are what it logged, and pass); a validation row's perplexity is
    exp of its loss (round 14, A130: loss 0.1 beside perplexity 237.09 was quoted on the card). Bits per byte are
    not checked against the loss: their ratio is the split's tokens per byte, which the row does not hold."""
    for key, low, what in (("train_loss", 0, "a loss >= 0"), ("val_loss", 0, "a loss >= 0"),
                           ("val_bpb", 0, "bits per byte >= 0"), ("val_ppl", 1, "a perplexity (>= 1)"),
                           *((key, 0, "a number >= 0") for key in _AT_LEAST_ZERO)):
        if row.get(key) is not None and row[key] < low:
            return f"has {key} {row[key]!r}, not {what}"
    if ppl_contradicts(row.get("val_loss"), row.get("val_ppl")):  # round 14 (A130): loss 0.1 beside ppl 237.09
        return (f"has val_ppl {row['val_ppl']!r}, not exp(val_loss) = {exp_shown(row['val_loss'])} (fields edited "
                f"apart)")
    return None


def _keep_aside(path: Path) -> Path:
    """Copy a damaged metrics.jsonl beside it before a resume rewrites it without its bad lines, and return the copy's
    path: a file of random bytes was dropped and rewritten without a word (issue 30 round 15, A203)."""
    from ..io import atomic_write_bytes

    number = 0
    while (aside := path.with_name(f"{path.name}.damaged{'-' + str(number) if number else ''}")).exists():
        number += 1
    atomic_write_bytes(aside, path.read_bytes())
    return aside


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def read_metric_rows(path: str | os.PathLike, report=_warn, given: bool = False) -> list[MetricsRow]:
    """The rows of a run's metrics.jsonl (a run folder or the file), typed; a missing file is a UserError
    (``io.metrics_file``). A line that is not a metrics row (``metrics_row_problem``) is skipped and reported
    (``report(message)``, default stderr; ``None``: quietly), and so is a line cut short or not UTF-8 (issue 30
    round 14, A133: a torn last line left an export's card saying "Not evaluated at this step" without a word, while an
    impossible value was warned about), and so is a row that cannot follow the rows before it (``metrics_order``:
    a step twice or going backwards, tokens going down, another run's id; round 28, U481-U547). ``given``: the path is the user's (``analyze efficiency --model``), and a file
    none of whose lines is JSON is a UserError (a PNG passed by mistake was reported as "no validation rows", issue 30
    round 6). Footgun: a file polled while training writes it (``demo_progress``) passes ``report=None``: a line being
    written is normal there, and stays quiet."""
    from ..value_rules import check_callback, check_switches
    from ..jsonl import read_json_lines

    check_callback("read_metric_rows", "report", report)  # as read_results' (round 17, E27, E30)
    check_switches("read_metric_rows", given=given)

    path = metrics_file(path)  # the UserError of a missing file
    bad = []
    values, damaged = read_json_lines(path)
    if given:
        check_some_json(path, values, damaged)
    alone = []
    for number, value in values:
        problem = metrics_row_problem(value)
        if problem is None:
            alone.append((number, value))
        else:
            bad.append((number, problem))
    own = quiet_identity(path.parent)  # whose rows these are (round 28, U547), where run.json says
    kept, disordered = in_order(alone, own.run_id if own is not None else None)
    bad += disordered
    rows = [decode(MetricsRow, value, DROP) for _, value in kept]  # a key of another version: left out
    if report is not None:  # a torn line too (round 14, A133): the card said "Not evaluated" without a word why
        from ..jsonl import bad_line_notes

        for note in bad_line_notes(path, sorted(bad + damaged), "metrics", "the run's other rows are used"):
            report(note)
    return rows


class MetricsLogger:
    """JSON lines + TensorBoard on rank 0; a no-op elsewhere (``enabled=False``)."""

    def __init__(self, run_dir: Path, enabled: bool = True, resume_step: int | None = None,
                 tensorboard: bool = True, run_id: str | None = None, expect: list[int] | None = None):
        """``expect``: the training-row steps a resumed log must hold (``lost_rows.expected_rows``; round 16, C290)."""
        self.enabled = enabled
        self.run_id = run_id  # written into every line (round 14, A239: two runs' logs swapped were not noticed)
        self.path = Path(run_dir) / "metrics.jsonl"
        self._file = None
        self._tb = None
        if not enabled:
            return
        kept, bad, steps = [], [], set()
        from ..errors import UserError, not_regular

        if (kind := not_regular(self.path)) is not None:  # a resume hung in open(), deaf to SIGTERM (round 12, T64)
            raise UserError(f"{str(self.path)!r} {kind}; move it out of the run folder (train writes its metrics "
                            f"there)")
        if resume_step is not None and self.path.exists():
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()  # damage: skipped below
            for number, line in enumerate(lines, start=1):
                row, problem = line_value(line)  # a key given twice too: kept, every reader skipped it (W383)
                if problem is not None:
                    if line.strip() and (number < len(lines) or problem != CUT_SHORT):  # only the last line is
                        bad.append((number, "is not JSON" if problem == CUT_SHORT else problem))  # cut short (A203)
                    continue
                problem = metrics_row_problem(row)
                if problem is not None:
                    bad.append((number, problem))
                elif (row.get("step") or 0) <= resume_step:
                    kept.append(line)
                    if "train_loss" in row and row.get("step") is not None:
                        steps.add(row["step"])
        if bad:
            from ..jsonl import bad_line_notes

            aside = _keep_aside(self.path)
            for note in bad_line_notes(self.path, bad, "metrics", "dropped from the file on this resume"):
                _warn(note)
            _warn(f"note: the damaged {self.path.name} as it was is kept as '{aside}'")
        if resume_step is not None and expect:
            from .lost_rows import lost_rows_note

            if (note := lost_rows_note(self.path, steps, expect, resume_step)) is not None:
                _warn(note)
        atomic_write_text(self.path, "".join(line + "\n" for line in kept))  # a kill now keeps the old file
        self._file = open(self.path, "a")
        self._tb_dir = Path(run_dir) / "tensorboard"
        if tensorboard:  # None when tensorboard is not installed: JSON lines are the record
            self._tb = event_writer(self._tb_dir, resume_step + 1 if resume_step is not None else None)

    def log(self, row: dict) -> None:
        if not self.enabled:
            return
        if self.run_id is not None:
            row = {**row, "run_id": self.run_id}
        try:
            self._file.write(json.dumps(row) + "\n")
            self._file.flush()
        except OSError as e:  # a full disk: name the file (io.named)
            raise named(e, self.path) from None
        if self._tb is not None:
            prefix = "val" if "val_loss" in row else "train"
            with events_named(self._tb, self._tb_dir):  # its thread's storage error, named (round 18, F79, F109)
                for key, value in row.items():
                    if key in ("step", "split") or not isinstance(value, (int, float)) or value is None:
                        continue
                    name = key.removeprefix("val_").removeprefix("train_")
                    self._tb.add_scalar(f"{prefix}/{name}", value, global_step=row["step"])

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tb is not None:
            tb, self._tb = self._tb, None
            with events_named(tb, self._tb_dir):
                tb.flush()
                tb.close()


def git_revision() -> str | None:
    """``<sha>[-dirty]`` of the source tree leviathan is imported from, or None outside git."""
    src = Path(__file__).resolve().parents[1]
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True, timeout=5)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=src,
                               capture_output=True, text=True, timeout=5)
        return sha.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def collect_versions(device: "torch.device", tokenizer: str | None, world_size: int = 1) -> dict:
    """What versions.json records: enough to tell two runs' software and hardware apart."""
    import torch

    from .. import __version__

    try:
        import transformers

        tf_version = transformers.__version__
    except ImportError:
        tf_version = None
    if device.type == "cuda":
        device_name = torch.cuda.get_device_name(device)
    else:
        device_name = platform.processor() or platform.machine()
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "transformers": tf_version,
        "leviathan": __version__,
        "git_revision": git_revision(),
        "device": str(device),
        "device_name": device_name,
        "cpu_id": cpu_id(),  # the model name alone does not tell two hosts' numerics apart (io.cpu_id)
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_threads": torch.get_num_threads(),
        "world_size": world_size,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "tokenizer": tokenizer,
    }


def foreign_metrics(run_dir: Path) -> str | None:
    """Why ``run_dir``'s metrics.jsonl is not this run's log (a line records another run id than run.json; the run
    folder beside it that has that id is named), or None (no run.json, no ids in the log, or they agree)."""
    own = read_identity(run_dir)
    path = run_dir / "metrics.jsonl"
    if own is None or not path.is_file():
        return None
    from ..jsonl import read_json_lines

    # every row's id, one of another run too (read_metric_rows skips such rows: metrics_order)
    ids = {row.get("run_id") for _, row in read_json_lines(path)[0] if metrics_row_problem(row) is None}
    others = sorted(i for i in ids if i and i != own.run_id)
    if not others:
        return None
    home = next((str(p) for p in sorted(run_dir.parent.glob(f"*/{RUN_FILE}"))
                 if (i := quiet_identity(p.parent)) is not None and i.run_id == others[0]), None)
    whose = f"the log of run folder {str(Path(home).parent)!r} ({home!r})" if home else "another run's log"
    return (f"{str(path)!r} holds lines of run_id {others[0]}, {whose}, not of this run (run_id {own.run_id} in "
            f"{str(run_dir / RUN_FILE)!r})")

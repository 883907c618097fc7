"""A step folder's state.json read back checked, and the fingerprints that tie the step folder's files together.

    files = fingerprints(tmp)                       # {file: sha256} of every other file, written into state.json
    state = read_step_state(step_dir)               # every field typed and in range; UserError naming file + field
    verify_companions(step_dir, state, ("model.safetensors", "config.yaml"))   # the files read now are the saved ones

state.json decides where a resumed run stands (step, tokens, the loader's position, the RNG states), and a step
folder's files were taken together on trust (issue 30: a step of -7 or weights of step 2 copied over step 4's
resumed with exit 0). Now:
- ``read_step_state`` checks every field (type, range) and its consistency with its neighbours: the step is the
  folder's number, at least one token and one loader sequence per step, a shuffle buffer of in-range windows, RNG
  states of the length their generators have. A bad field is one ``UserError``: the file, the field, what it holds,
  what it should, and the fix (restore the file, or move the step folder out of ``checkpoints/`` to continue from
  the previous one: nothing is deleted).
- Saving writes the sha256 of every other file into state.json (``files``, written last). Whoever reads a file of
  the folder (``verify_companions``: a resume all of them, eval / export / generate the weights, config and
  tokenizer) checks it first, so a file swapped in from another checkpoint, or damaged on disk, is refused by name
  (one read of each file, about a second per GB). A state.json written before has no ``files``: its fields are
  checked, its companions cannot be; one that records a field written only with ``files`` (its run id, its data's
  fingerprint) and not ``files`` lost it, and is refused (issue 30 round 21, P513).
- state.json records the id of the run that saved it (``run_id``, ``leviathan.run_identity``): a whole step folder of
  another run copied into a run folder agrees with itself, and only that id tells it apart (issue 30 round 14, A156,
  A157). None in a folder saved before run ids.
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..data.integrity import recorded_tokenizer_name
from ..errors import UserError, not_a_file
from ..integers import is_integer
from ..io import sha256_file
from ..run_identity import is_run_id
from ..seeds import MAX_SEED
from .layout import step_of
from .. import json_text

STATE_FILE = "state.json"
FORMAT = 1
SHUFFLE_MODES = ("windows", "buffer", "none")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_U32 = 2**32
_MAX_COUNT = 2**62  # tokens trained: far beyond any run, and within numpy's int64 with room for a step


@dataclass(frozen=True)
class StepState:
    """state.json, checked: progress, where the data loader stands, RNG states, world size, tokenizer, and the
    fingerprints of the other files (None for a folder saved before they were recorded). ``raw`` is the file's
    object as read (what the resume hands to the loader and the RNGs, every part of it checked here)."""

    step: int
    tokens: int
    loader: dict
    rng: dict | None
    world_size: int
    train_time_s: float
    tokenizer: str | None
    files: dict[str, str] | None
    raw: dict
    run_id: str | None = None  # the run that saved it (``leviathan.run_identity``; None: saved before run ids)
    data_fingerprint: str | None = None  # meta.json's fingerprint of the data it trained on (None: saved before)


# ---- writing -------------------------------------------------------------------------------------
def fingerprints(folder: str | os.PathLike, exclude: Iterable[str] = (STATE_FILE,)) -> dict[str, str]:
    """{file name: sha256} of every file in ``folder`` but ``exclude`` (what state.json records as ``files``)."""
    skip = set(exclude)
    return {p.name: sha256_file(p) for p in sorted(Path(folder).iterdir()) if p.is_file() and p.name not in skip}


# ---- reading -------------------------------------------------------------------------------------
class _Bad(Exception):
    """A field of state.json that is not what the format says: (field, problem)."""

    def __init__(self, field: str, problem: str):
        super().__init__(field, problem)
        self.field, self.problem = field, problem


def _damaged(path: Path, field: str, problem: str) -> UserError:
    return UserError(f"{str(path)!r}: field {field!r} {problem}; the checkpoint was damaged or edited by hand: "
                     f"restore the file from a copy, or move the step folder {str(path.parent)!r} out of checkpoints/ "
                     f"to go on from the previous one")


def _int(raw: Any, field: str, low: int | None = None, high: int | None = None) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise _Bad(field, f"is {raw!r}, expected an integer")
    if (low is not None and raw < low) or (high is not None and raw > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise _Bad(field, f"is {raw}, expected an integer {bounds}")
    return raw


def _number(raw: Any, field: str, low: float = 0.0) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw < low:
        raise _Bad(field, f"is {raw!r}, expected a finite number >= {low:g}")
    return float(raw)


def _words(raw: Any, field: str, length: int) -> None:
    """A list of ``length`` 32-bit unsigned integers (a Mersenne Twister's state)."""
    if not isinstance(raw, list) or len(raw) != length:
        got = f"a list of {len(raw)}" if isinstance(raw, list) else repr(raw)[:40]
        raise _Bad(field, f"is {got}, expected a list of {length} 32-bit integers")
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < _U32 for v in raw):
        raise _Bad(field, f"holds values that are not 32-bit unsigned integers, expected {length} of them")


def _is_format(value: Any, expected: int) -> bool:
    """``value`` is the whole number ``expected``: true and 1.0 equal 1 to Python, and no writer writes them (round 28,
    U410's kind); numpy's 1 is 1 (``integers.is_integer``, as ``BatchLoader.load_state_dict``'s, round 29 W323)."""
    return is_integer(value) and value == expected


def _loader(raw: Any, step: int, tokens: int) -> dict:
    """The data loader's state (``data.loader.BatchLoader.state_dict``), checked; ``position`` counts sequences read,
    so it lies between the steps taken and the tokens trained (an int past numpy's int64 ended in an OverflowError
    traceback at the first batch, issue 30 round 6)."""
    if not isinstance(raw, dict):
        raise _Bad("loader", f"is {raw!r}, expected an object")
    if not _is_format(raw.get("format", 1), 1):
        raise _Bad("loader.format", f"is {raw.get('format')!r}, expected 1")
    position = _int(raw.get("position"), "loader.position", 0)
    _int(raw.get("seed"), "loader.seed", 0, MAX_SEED)
    seq_len = _int(raw.get("seq_len"), "loader.seq_len", 1)
    windows = _int(raw.get("num_windows"), "loader.num_windows", 1)
    if raw.get("shuffle") not in SHUFFLE_MODES:
        raise _Bad("loader.shuffle", f"is {raw.get('shuffle')!r}, expected one of {', '.join(SHUFFLE_MODES)}")
    if position < step:
        raise _Bad("loader.position", f"is {position}, fewer sequences than the {step} steps taken (each step reads "
                                      f"at least one)")
    if position > tokens:
        raise _Bad("loader.position", f"is {position}, more sequences than the {tokens} tokens trained (each sequence "
                                      f"is at least one token)")
    _tokens_read(position, seq_len, tokens)
    if raw["shuffle"] == "buffer":
        size = _int(raw.get("shuffle_buffer"), "loader.shuffle_buffer", 1, windows)
        buffer = raw.get("buffer")
        if not isinstance(buffer, list) or len(buffer) != size:
            raise _Bad("loader.buffer", f"is not a list of {size} window indices (shuffle_buffer)")
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < windows for v in buffer):
            raise _Bad("loader.buffer", f"holds entries that are not window indices in [0, {windows})")
    return raw


def _tokens_read(position: int, seq_len: int, tokens: int) -> None:
    """``tokens`` is the sequences read times their length (issue 30 round 14, A11, A19: tokens edited to 4096, or the
    position to 33, beside 32 sequences of 32 tokens resumed without a word). Always true of a step folder train
    wrote: an optimizer step adds ``batch_tokens`` to tokens and reads ``grad_accum x micro_batch_size x world_size``
    sequences, exactly ``batch_tokens / seq_len`` (``RunConfig.grad_accum_steps`` refuses any remainder), on every rank
    alike (``position`` is the global stream's); a snapshot is taken only between steps; a resume restores both and
    refuses another seq_len (``BatchLoader.load_state_dict``), so a changed batch_tokens or world size keeps it."""
    if position * seq_len != tokens:
        raise _Bad("tokens", f"is {tokens}, but loader.position {position} sequences x loader.seq_len {seq_len} = "
                             f"{position * seq_len} tokens read (train counts exactly the tokens it reads, so the two "
                             f"always agree): one of tokens, loader.position and loader.seq_len was edited")


def _rng(raw: Any) -> dict | None:
    """python's and numpy's generator states as ``train.checkpoint.capture_rng`` writes them, checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _Bad("rng", f"is {raw!r}, expected an object")
    py = raw.get("python")
    if not (isinstance(py, list) and len(py) == 3):
        raise _Bad("rng.python", "is not [version, state, gauss] (python's random.getstate())")
    _int(py[0], "rng.python[0]", 1, 3)
    _words(py[1], "rng.python[1]", 625)
    if not 0 <= py[1][-1] <= 624:
        raise _Bad("rng.python[1]", f"ends with position {py[1][-1]}, expected one in [0, 624]")
    if py[2] is not None:
        _number(py[2], "rng.python[2]", -math.inf)
    np_state = raw.get("numpy")
    if not (isinstance(np_state, list) and len(np_state) == 5 and np_state[0] == "MT19937"):
        raise _Bad("rng.numpy", "is not ['MT19937', keys, pos, has_gauss, cached_gaussian] (numpy's get_state())")
    _words(np_state[1], "rng.numpy[1]", 624)
    _int(np_state[2], "rng.numpy[2]", 0, 624)
    _int(np_state[3], "rng.numpy[3]", 0, 1)
    _number(np_state[4], "rng.numpy[4]", -math.inf)
    return raw


# every step folder that records ``files`` was saved with these (``train.checkpoint.save_checkpoint``); rng.pt's
# record deleted and step 2's rng.pt copied in resumed step 4 with step 2's RNG state, exit 0 (issue 30 round 20, K12)
_ALWAYS_SAVED = ("model.safetensors", "optimizer.pt", "rng.pt", "config.yaml")


# fields only a writer that also records ``files`` writes (run ids, round 14; the data's fingerprint, round 15)
_WRITTEN_WITH_FILES = ("run_id", "data_fingerprint")


def _files(raw: Any, state: dict) -> dict[str, str] | None:
    """The ``files`` map checked; None only for a state.json saved before it was recorded. One that records a field
    of a later writer (``_WRITTEN_WITH_FILES``) lost it: with the map removed and step 2's weights copied into step 4,
    eval and export quoted step 4's loss beside step 2's weights, exit 0 (issue 30 round 21, P513)."""
    if raw is None:
        later = [name for name in _WRITTEN_WITH_FILES if name in state]
        if later:
            raise _Bad("files", f"is missing, but every state.json that records {later[0]} records the sha256 of each "
                                f"file saved beside it; without it a file swapped in from another step is taken on "
                                f"trust")
        return None
    if not isinstance(raw, dict) or not all(isinstance(k, str) and "/" not in k and isinstance(v, str)
                                            and _SHA256.match(v) for k, v in raw.items()):
        raise _Bad("files", "is not an object of file name -> sha256 (64 hex digits)")
    unrecorded = [name for name in _ALWAYS_SAVED if name not in raw]
    if unrecorded:  # every writer that records files records these: `files: {}` turned the check off (round 11, S6)
        raise _Bad("files", f"does not record {', '.join(unrecorded)} (a step folder's state.json records every "
                            f"file saved beside it)")
    return raw


def read_step_state(step_dir: str | os.PathLike) -> StepState:
    """state.json of ``step_dir``, every field checked (see the module docstring); a UserError names the file and field.

    Pure JSON is read with duplicate keys refused (a file leviathan wrote never repeats one). A path that is no step
    folder (a run folder, a file) is named as such, not as a damaged checkpoint (``_refuse_other_kinds``)."""
    from ..value_rules import check_read_path

    check_read_path("read_step_state", "step_dir", step_dir, _STEP_FIX)
    _refuse_other_kinds(Path(step_dir))
    path = Path(step_dir) / STATE_FILE
    try:
        raw = json_text.read_file(path, object_pairs_hook=json_text.no_repeats)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UserError(f"{str(path)!r} is not readable JSON ({e}); the checkpoint is damaged: restore the file from "
                        f"a copy, or move the step folder out of checkpoints/ to go on from the previous one") from None
    if not isinstance(raw, dict):
        raise _damaged(path, "(top level)", f"is {type(raw).__name__}, expected an object")
    try:
        if not _is_format(raw.get("format", FORMAT), FORMAT):
            raise _Bad("format", f"is {raw.get('format')!r}, expected {FORMAT}")
        step = _int(raw.get("step"), "step", 0)
        named = step_of(Path(step_dir).name)
        if named is not None and named != step:
            raise _Bad("step", f"is {step} but the folder is {Path(step_dir).name}")
        tokens = _int(raw.get("tokens"), "tokens", step)  # every step trains at least one token
        if tokens > _MAX_COUNT:
            raise _Bad("tokens", f"is {tokens}, more than any run trains (at most {_MAX_COUNT})")
        loader = _loader(raw.get("loader"), step, tokens)
        rng = _rng(raw.get("rng"))
        world = _int(raw.get("world_size", 1), "world_size", 1)
        seconds = _number(raw.get("train_time_s", 0.0), "train_time_s")
        if seconds > time.time():  # round 10 (Q4): 1e308 s was carried into every later checkpoint and summary
            raise _Bad("train_time_s", f"is {seconds:g} s, longer than the clock has run since 1970 "
                                       f"({time.time():,.0f} s)")
        tokenizer = raw.get("tokenizer")
        if tokenizer is not None and not (isinstance(tokenizer, str) and tokenizer):
            raise _Bad("tokenizer", f"is {tokenizer!r}, expected a tokenizer name or null")
        saved = recorded_tokenizer_name(Path(step_dir))  # round 5: a name the files beside it contradicted resumed
        if tokenizer is not None and saved is not None and saved != tokenizer:
            raise _Bad("tokenizer", f"is {tokenizer!r}, but the step's leviathan_tokenizer.json is {saved!r}")
        files = _files(raw.get("files"), raw)
        run_id = raw.get("run_id")
        if run_id is not None and not is_run_id(run_id):  # round 14 (A156): which run saved the step
            raise _Bad("run_id", f"is {run_id!r}, expected a run id (32 hex digits) or null")
        data = _data_fingerprint(raw.get("data_fingerprint"))
        _validation(raw.get("validation"))
    except _Bad as e:
        raise _damaged(path, e.field, e.problem) from None
    return StepState(step, tokens, loader, rng, world, seconds, tokenizer, files, raw, run_id, data)


_STEP_FIX = ("pass one of a run's checkpoints/step-XXXXXXXX folders (leviathan.checkpoint.find.find_checkpoint(RUN) "
             "gives a run's latest)")


def _refuse_other_kinds(step_dir: Path) -> None:
    """UserError when ``step_dir`` is no step folder: not a folder, or one without state.json that neither is named
    as train names steps nor holds weights. ``read_step_state('run1')`` (a run folder) said "'run1/state.json' is not
    readable JSON ...; the checkpoint is damaged" with a fix that moves an intact folder (issue 30 round 25, Y648;
    ``find_checkpoint`` names the mistake, round 24, Y495). A step folder without its state.json is still damage."""
    from ..errors import missing, not_a_folder_there

    if not os.path.isdir(step_dir):
        what = missing(step_dir) if not os.path.lexists(step_dir) else not_a_folder_there(step_dir)
        raise UserError(f"step folder {str(step_dir)!r} {what}; {_STEP_FIX}")
    if os.path.lexists(step_dir / STATE_FILE) or step_of(step_dir.name) is not None \
            or os.path.lexists(step_dir / "model.safetensors"):
        return
    kind = " (a run folder: its steps are in checkpoints/)" if (step_dir / "checkpoints").is_dir() else ""
    raise UserError(f"{str(step_dir)!r} is not a step folder{kind}: it has no {STATE_FILE} and is not named "
                    f"step-XXXXXXXX; {_STEP_FIX}")


def _data_fingerprint(raw: Any) -> str | None:
    """The data's fingerprint the step records (train writes meta.json's, a sha256, or null), checked like
    ``run_id``: an integer was taken as no fingerprint and the data check skipped, exit 0, even on other data (issue
    30 round 16, C189, C190), and ``'zz'`` was compared with the data's, the data blamed for the step's damage
    (C186)."""
    if raw is not None and not (isinstance(raw, str) and _SHA256.match(raw)):
        raise _Bad("data_fingerprint", f"is {raw!r:.40}, expected the data's fingerprint (64 hex digits, as "
                                       f"meta.json records it) or null")
    return raw


def _validation(raw: Any) -> None:
    """The step's validation as train records it (``EvalResult.metrics_row``: val_loss, val_ppl, val_bpb; null for a
    step not evaluated), checked as a metrics.jsonl row is (``train.metrics.metrics_row_problem``): a val_loss of
    'abc' or NaN beside its perplexity was the one field taken unchecked, by export's card and by a resume (issue 30
    round 20, M18, M19)."""
    from ..train.metrics import metrics_row_problem  # train's reader of the same three numbers

    keys = ("val_loss", "val_ppl", "val_bpb")
    if raw is not None and not (isinstance(raw, dict) and set(raw) == set(keys) and raw["val_loss"] is not None
                                and raw["val_ppl"] is not None):
        raise _Bad("validation", f"is {raw!r:.60}, expected null or an object of {', '.join(keys)} (the step's "
                                 f"validation as train recorded it)")
    problem = metrics_row_problem(raw) if raw is not None else None
    if problem is not None:
        raise _Bad("validation", problem)


def _check_companion_arguments(state, names, optional) -> None:
    """ArgumentTypeError unless ``state`` is a StepState, ``names`` None or a list of file names (a text was read
    letter by letter) and ``optional`` a switch (``verify_companions``' arguments)."""
    from ..errors import ArgumentTypeError
    from ..value_rules import check_switches

    if not isinstance(state, StepState):
        raise ArgumentTypeError(f"verify_companions: state must be the StepState read_step_state(STEP) returns, got "
                                f"{type(state).__name__}; pass read_step_state(step_dir)")
    if names is not None and (isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple, set, frozenset))
                              or not all(isinstance(n, str) for n in names)):
        raise ArgumentTypeError(f"verify_companions: names must be a list of file names of the step folder (or None "
                                f"for every recorded one), got {names!r:.60}; e.g. ['model.safetensors']")
    check_switches("verify_companions", optional=optional)


def _check_unrecorded(path: Path) -> None:
    """UserError when ``path``, a file a reader uses from a step folder whose state.json fingerprints its files, is
    there but not recorded: train records every file it saves with the step, so it was added later, or its record
    was deleted from state.json. Issue 30 round 17 (E121): tokenizer.json's record deleted and another run's
    tokenizer.json swapped in was read, and the data was blamed ("data1 was prepared with a different one"), with a
    fix that spread the damage (prepare the corpus with the swapped tokenizer)."""
    if path.is_file():
        raise UserError(f"{str(path)!r} is not recorded in {STATE_FILE}, which fingerprints every file saved with "
                        f"the checkpoint: the file was added after the save, or its record was deleted from "
                        f"{STATE_FILE}; restore the step folder from a copy, or move it out of checkpoints/ to go on "
                        f"from the previous one")


def verify_companions(step_dir: str | os.PathLike, state: StepState, names: Iterable[str] | None = None,
                      optional: bool = False) -> None:
    """UserError unless each file ``names`` lists (None: every recorded one) that state.json fingerprints is the file
    saved with it (sha256). A recorded file that is missing is refused too; files of a folder saved before
    fingerprints were recorded are not checked. A mismatch names both possible causes: the file changed, or its
    record in state.json was edited (``files['model.safetensors']`` set to '0'*64 blamed the untouched weights
    alone: issue 30 round 21, N226). ``state`` is what ``read_step_state`` returns (None was an AttributeError), and a
    name neither recorded nor in the folder is refused, as nothing of it could be verified (it was "verified"
    without a word: issue 30 round 25, Y649, Y651); ``optional``: such names are the reader's optional files (a
    built-in tokenizer has no tokenizer.json), passed over."""
    _check_companion_arguments(state, names, optional)
    if state.files is None:
        return
    step_dir = Path(step_dir)
    wanted = list(state.files) if names is None else [n for n in names if n in state.files]
    for name in [] if names is None else [n for n in names if n not in state.files]:
        _check_unrecorded(step_dir / name)
        if not optional and not os.path.lexists(step_dir / name):
            raise UserError(f"verify_companions: names: {name!r:.60} is neither in {str(step_dir)!r} nor recorded in "
                            f"its {STATE_FILE}, so there is nothing to verify; pass names of the step's files "
                            f"(recorded: {', '.join(sorted(state.files)) or 'none'})")
    for name in wanted:
        path = step_dir / name
        if not path.is_file():  # a pipe or a folder there was "is missing" (issue 30 round 23, U401)
            raise UserError(f"{str(path)!r} {not_a_file(path) or 'is missing'}, but {STATE_FILE} records it; the "
                            f"checkpoint is incomplete: "
                            f"restore the file, or move the step folder out of checkpoints/ to go on from the "
                            f"previous one")
        found = sha256_file(path)
        if found != state.files[name]:
            raise UserError(f"{str(path)!r} is not the file saved with this checkpoint (sha256 {found[:12]}..., "
                            f"{STATE_FILE} records {state.files[name][:12]}...): the file was replaced (by "
                            f"another checkpoint's) or damaged, or {STATE_FILE}'s record of it was edited; restore it "
                            f"from a copy of this step folder (with its {STATE_FILE}), or move the step folder out of "
                            f"checkpoints/ to go on from the previous one")

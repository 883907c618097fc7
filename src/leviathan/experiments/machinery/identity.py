"""What a results row measured: its identity, so that two rows compare only when they measured the same thing.

    evaluation_settings(grid.eval_sets, grid.eval_options)   # Evaluation: what a row records as ``evaluation``
    evaluation_differences(row.evaluation, now)               # ["eval.max_tokens: 4096 in the row, 8192 now", ...]
    measurement_differences(a, b)                              # []: the same run, measured the same way, same numbers
    rows, notes = resolve_duplicates(numbered_rows, path)     # one row per run (the rule below), or a UserError

A row's numbers depend on more than its training settings (``drift``): which eval sets on how many tokens with which
window, bucketed how (issue 30, kind 4).

- ``evaluation`` (an ``Evaluation``): every row records the eval sets and options that decide its eval numbers
  (``max_tokens``, ``seq_len``, the buckets; not ``batch_size``, which changes how fast, not what). The sweep's drift
  check refuses kept rows whose ``evaluation`` differs from the grid's now, a report refuses rows that differ
  (``check_one_evaluation``); rows written before rows recorded it are noted and not checked.
- Duplicates (one run, several rows in one file or in two shards being merged): rows that are the same measurement
  (the same resolved config, evaluation, data fingerprint, training progress and every eval number) are one row,
  the first, and a note says so (the report prints it). Rows that differ are refused, naming the run, where both
  rows are and what differs: which one is right is the user's call (delete the other line). Where the same
  measurement was made at another speed or on other hardware (``tokens_per_s``, ``wall_time_s``, ``hardware``: not
  what was measured), the note names those differences and says the first row's are shown (round 17, E180, E181).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ...codec import decode, encode, extra_keys
from ...errors import UserError


@dataclass
class EvaluatedSet:
    """Where an eval set's text came from: a split of the prepared data or a text file."""

    split: str | None = None
    text: str | None = None
    extra: dict = extra_keys()


@dataclass
class EvaluationOptions:
    """The eval options that change what an eval number measures (``batch_size`` only changes how fast)."""

    seq_len: int | None = None
    max_tokens: int | None = None
    buckets: int | None = None
    bucket_method: str | None = None
    bucket_sets: list | None = None
    extra: dict = extra_keys()


@dataclass
class Evaluation:
    """A row's ``evaluation``: its eval sets by name and the options that decide its eval numbers."""

    sets: dict[str, EvaluatedSet] = field(default_factory=dict)
    options: EvaluationOptions = field(default_factory=EvaluationOptions)
    extra: dict = extra_keys()


EVAL_OPTIONS = tuple(f.name for f in dataclasses.fields(EvaluationOptions) if f.name != "extra")


def plain(value: Any) -> Any:
    """JSON values only (tuples -> lists, anything else as text), so a value read from a file and one built now
    compare equal."""
    return json.loads(json.dumps(value, default=str))


def evaluation_settings(eval_sets: Iterable, eval_options: Any) -> Evaluation:
    """The ``Evaluation`` of a grid's eval sets and options (``grid_file`` or ``sweep_grid`` records)."""
    sets = {str(es.name): {"split": es.split, "text": es.text} for es in eval_sets}
    options = {k: getattr(eval_options, k) for k in EVAL_OPTIONS}
    return decode(Evaluation, plain({"sets": sets, "options": options}))


def evaluation_differences(recorded: Evaluation | None, now: Evaluation) -> list[str]:
    """``eval.KEY: VALUE in the row, VALUE now`` for each setting that differs (none for a row that records none)."""
    if recorded is None:
        return []
    out = [f"eval.{key}: {getattr(recorded.options, key)!r} in the row, {getattr(now.options, key)!r} now"
           for key in EVAL_OPTIONS if getattr(recorded.options, key) != getattr(now.options, key)]
    for name in sorted(set(recorded.sets) | set(now.sets)):
        was, is_now = encode(recorded.sets.get(name)), encode(now.sets.get(name))
        if was != is_now:
            out.append(f"eval.sets.{name}: {was!r} in the row, {is_now!r} now")
    return out


def measurement(row) -> dict:
    """The parts of a row that say what it measured and what it found (not when, where or how fast)."""
    return plain(encode({"config": row.config, "evaluation": row.evaluation, "data": row.data_provenance.fingerprint,
                         "steps": row.steps, "tokens": row.tokens, "final_val_loss": row.final_val_loss,
                         "eval": row.eval, "buckets": row.buckets}))


def measurement_differences(a, b) -> list[str]:
    """The parts of ``measurement`` in which rows ``a`` and ``b`` differ (empty: the same measurement)."""
    ma, mb = measurement(a), measurement(b)
    return [key for key in ma if ma[key] != mb[key]]


def resolve_duplicates(numbered: list[tuple[str, Any]], source: str) -> tuple[list, list[str]]:
    """(one row per run, notes) from ``[(where, row)]`` in reading order (``where``: "line 7", or a folder), by the
    rule of the module docstring; a run with two different rows is a UserError naming both places."""
    first: dict[str, tuple[str, Any]] = {}
    repeats: dict[str, list[str]] = {}
    circumstances: dict[str, list[str]] = {}
    out = []
    for where, row in numbered:
        seen = first.get(row.name)
        if seen is None:
            first[row.name] = (where, row)
            out.append(row)
            continue
        differ = measurement_differences(seen[1], row)
        if differ:
            raise UserError(f"run {row.name!r} has two different rows in {source} ({seen[0]} and {where}; they differ "
                            f"in {', '.join(differ)}): two measurements of one run cannot both be reported; keep the "
                            f"one you trust (delete the other row) and run the command again")
        repeats.setdefault(row.name, [seen[0]]).append(where)
        circumstances.setdefault(row.name, []).extend(circumstance_differences(seen, (where, row)))
    notes = [f"note: run {name!r} appears {len(places)} times in {source} ({', '.join(places)}), the same "
             f"measurement each time; counted once (the first)" + _speeds_apart(circumstances.get(name))
             for name, places in repeats.items()]
    return out, notes



def arm_clash(numbered: Iterable[tuple[str, Any]]) -> str | None:
    """Why ``[(where, row)]`` hold one arm twice (None: they do not): ``WHERE ('NAME') and WHERE ('NAME') are both
    variant V of size S, seed N in regime R: one would hide the other``. An arm (a variant at a size and seed in a
    regime) is what the comparisons pair; two rows of it under two names (a row copied and renamed) paired with
    whichever came last, or ended in ``paired_comparisons``' traceback after ``report`` had made its --out (issue 30
    round 19, J88-J95). Rows in no regime (a learning-rate search's, named by their lr) are paired by nothing and
    pass. Footgun: two rows of one *name* are ``resolve_duplicates``' to judge, not this."""
    arms: dict[tuple, tuple[str, Any]] = {}
    for where, row in numbered:
        for regime in row.regimes or ([row.regime] if row.regime else []):
            seen = arms.setdefault((regime, str(row.size), row.seed, row.variant), (where, row))
            if seen[1].name != row.name:
                return (f"{where} ({row.name!r}) and {seen[0]} ({seen[1].name!r}) are both variant {row.variant!r} "
                        f"of size {row.size!r}, seed {row.seed} in regime {regime!r}: one would hide the other")
    return None

CIRCUMSTANCES = ("tokens_per_s", "wall_time_s", "hardware")  # how fast and where: not part of ``measurement``


def circumstance_differences(first: tuple[str, Any], other: tuple[str, Any]) -> list[str]:
    """``KEY: VALUE (WHERE), VALUE (WHERE)`` for each of ``CIRCUMSTANCES`` (the hardware key by key) in which two
    rows of one measurement differ, ``(where, row)`` each: rows of one run trained at 917 and at 5000 tokens/s, or on
    two machines, were counted once with no word of the speed dropped (issue 30 round 17, E180, E181)."""
    (wa, a), (wb, b) = first, other
    out = []
    for key in CIRCUMSTANCES:
        va, vb = plain(getattr(a, key, None)), plain(getattr(b, key, None))
        if va == vb:
            continue
        if isinstance(va, dict) and isinstance(vb, dict):
            out += [f"{key}.{k}: {va.get(k)!r} ({wa}), {vb.get(k)!r} ({wb})" for k in sorted(set(va) | set(vb))
                    if va.get(k) != vb.get(k)]
        else:
            out.append(f"{key}: {va!r} ({wa}), {vb!r} ({wb})")
    return out


def _speeds_apart(differences: list[str] | None) -> str:
    if not differences:
        return ""
    shown = "; ".join(differences[:4]) + (f"; ... {len(differences) - 4} more" if len(differences) > 4 else "")
    return (f", but measured at another speed or on other hardware ({shown}): the speed and hardware shown are the "
            f"first row's; delete the row you do not trust to choose the other")


def check_one_evaluation(rows: Iterable, source: str) -> None:
    """UserError when rows of one report record different evaluation settings (rows that record none are not
    compared), or when some hold eval numbers and others none (trained with ``--skip-eval``): their numbers were
    measured differently and cannot share a table (the mix ended in a traceback of the report, issue 30 round 5)."""
    rows = list(rows)
    evaluated = [row.name for row in rows if row.eval]
    unevaluated = [row.name for row in rows if not row.eval]
    if evaluated and unevaluated:
        raise UserError(f"the rows of {source} were not all evaluated: {_few(unevaluated)} hold no eval numbers "
                        f"(trained with --skip-eval, or not evaluated) but {_few(evaluated)} do; their numbers cannot "
                        f"share a table: evaluate the first (delete their rows and run the sweep without --skip-eval: their runs are "
                        f"trained, so it only evaluates them), or report them separately")
    shown = evaluation_mismatch(((row.name, row.evaluation) for row in rows), "for")
    if shown:
        raise UserError(f"the rows of {source} were evaluated differently ({shown}); their numbers cannot share "
                        f"a table: evaluate them again with one setting (a sweep with the same eval section), "
                        f"or report them separately")


def unrecorded_evaluation_note(rows: Iterable, source: str) -> str | None:
    """A ``warning:`` line when some rows of ``source`` record how they were evaluated and other evaluated rows do
    not: ``check_one_evaluation`` compares only recorded evaluations, so a row whose ``evaluation`` was deleted was
    reported beside rows of eval.max_tokens 512, exit 0, no word (issue 30 round 18, G318), where the same row
    recording max_tokens 256 is refused. By design a warning, not a refusal: a row written before rows recorded their
    evaluation may be reused into a newer sweep (``reuse.reusable_rows``), and a report of such a folder still
    reads. None when every evaluated row records it, or none does (old rows alone: nothing to compare)."""
    evaluated = [row for row in rows if row.eval]
    recorded = [row.name for row in evaluated if row.evaluation is not None]
    unrecorded = [row.name for row in evaluated if row.evaluation is None]
    if not recorded or not unrecorded:
        return None
    return (f"warning: {len(unrecorded)} row(s) of {source} record no evaluation settings ({_few(unrecorded)}) "
            f"while the others do ({_few(recorded)}): their eval numbers cannot be checked against the others' (eval "
            f"sets, max_tokens, seq_len, buckets) and are compared as if measured alike; a row written before rows "
            f"recorded them is such a row, an edited one too: evaluate it again (delete its row and run the sweep) to "
            f"be sure")


def evaluation_mismatch(labelled: Iterable[tuple[str, Evaluation | None]], prep: str) -> str | None:
    """The settings in which the first evaluation of ``labelled`` ((label, evaluation or None) pairs, read in order,
    None skipped) that differs from the first recorded one does so: ``eval.KEY: A {prep} LABEL1, B {prep} LABEL2``,
    at most 4, joined by "; ". None when every recorded evaluation agrees (the rows of one sweep, or of the folders of
    one ablation, B247)."""
    seen: tuple[str, Evaluation] | None = None
    for label, evaluation in labelled:
        if evaluation is None:
            continue
        if seen is None:
            seen = (label, evaluation)
            continue
        differ = evaluation_differences(seen[1], evaluation)
        if differ:
            return "; ".join(d.replace(" in the row,", f" {prep} {seen[0]},").replace(" now", f" {prep} {label}")
                             for d in differ[:4])
    return None


def check_eval_set(rows: Iterable, eval_set: str, source: str) -> None:
    """UserError when the rows were evaluated but none on ``eval_set`` (``--eval-set`` of report and analyze): a
    report of empty tables was written (round 10, Q170) and ``analyze compare`` printed "ppl -" for every run, exit 0
    (round 11, S119, S121). Rows of a sweep run with --skip-eval hold no eval sets and pass."""
    held = sorted({name for row in rows for name in (getattr(row, "eval", None) or {})})
    if held and eval_set not in held:
        raise UserError(f"--eval-set {eval_set!r}: no row of {source} was evaluated on it (the rows hold: "
                        f"{', '.join(held)}); pass one of those")


def check_one_grid(rows: Iterable, source: str, grid_name: str | None, grid_file: str | None = None) -> None:
    """UserError when the rows of one report name several grids (a row of another sweep pasted into the results
    file), or another grid than the grid.json read beside them (``grid_file``, a copy from another sweep): a 3-step
    row of grid 'other' was compared with the 2-step rows of grid 'tiny', and a swapped grid.json's plateau and ladder
    were used, exit 0 (issue 30 round 7). Rows that name no grid are not compared."""
    by_grid: dict[str, list[str]] = {}
    for row in rows:
        if isinstance(row.grid, str) and row.grid:
            by_grid.setdefault(row.grid, []).append(row.name)
    if len(by_grid) > 1:
        listed = "; ".join(f"grid {g!r}: {_few(names)}" for g, names in by_grid.items())
        raise UserError(f"the rows of {source} come from different grids ({listed}); a report compares the runs of "
                        f"one grid: move the other grid's rows to its own results file, or report each grid on its "
                        f"own")
    if grid_name and by_grid and grid_name not in by_grid:
        (row_grid, names), = by_grid.items()
        raise UserError(f"{grid_file or 'the grid.json'} is of grid {grid_name!r}, but the rows of {source} are of "
                        f"grid {row_grid!r} ({_few(names)}): it was copied from another sweep; put back the sweep's "
                        f"own grid.json (`leviathan sweep --grid {row_grid} --out FOLDER` writes it again without "
                        f"training a run that has its row)")
    check_one_data(rows, source)
    check_one_budget(rows, source)


# the note of a row the sweep resumed (``sweep._resume_notes``): its first N steps may have trained another batch
RESUMED_NOTE = re.compile(r"^resumed from its step-(\d+) checkpoint")


def check_one_budget(rows: Iterable, source: str) -> None:
    """UserError when two rows of one size and seed (the pairs ``analyze compare`` and a report set side by side as
    "same size, same seed: same tokens in the same order") record different training tokens: a 60-step row of another
    sweep of grid 'g1' (or with its grid field edited to 'g1') was paired with a 2-step baseline, 'reduction +71.7%',
    exit 0; the check existed only when the rows' grid.json was beside them (issue 30 round 18, F89, F90). Rows that
    record no tokens, size or seed are not compared. A row the sweep resumed (its note ``resumed from its step-N
    checkpoint``) may count an earlier session's other batch in its tokens, legitimately (round 9, N53): beside such a
    row the steps are compared instead."""
    def resumed(row) -> bool:
        return any(isinstance(n, str) and RESUMED_NOTE.match(n) for n in getattr(row, "notes", None) or [])

    first: dict[tuple, Any] = {}
    for row in rows:
        size, seed, tokens = getattr(row, "size", None), getattr(row, "seed", None), getattr(row, "tokens", None)
        if size is None or seed is None or not isinstance(tokens, int):
            continue
        other = first.setdefault((size, seed), row)
        if (other.steps != row.steps) if resumed(row) or resumed(other) else (other.tokens != tokens):
            raise UserError(f"the rows of {source} of size {size!r}, seed {seed} trained different budgets: "
                            f"{other.name} {other.steps} steps, {other.tokens:,} tokens; {row.name} {row.steps} steps, "
                            f"{tokens:,} tokens; a comparison pairs runs that saw the same tokens: one row comes from "
                            f"another sweep (another max_steps) or was edited: move it to the results of its own "
                            f"sweep, or resweep it with the grid's settings")


def check_one_data(rows: Iterable, source: str) -> None:
    """UserError when two rows of one grid record data fingerprints that differ in the newest version both record
    above version 1 (``data_match``'s rule 1): a grid trains every run on its one data folder, and a row of the grid
    trained on other data was reported beside the others, exit 0 (issue 30 round 9, N49). Rows recording only
    version-1 fingerprints (which hashed the text's path, so differ for the same text prepared at two places) or none
    are not compared."""
    from ...data.fingerprint import LEGACY_VERSION

    first = None
    for row in rows:
        data = getattr(row, "data_provenance", None)
        mine = data.fingerprints() if data is not None else {}
        if not mine:
            continue
        if first is None:
            first = (row.name, mine, data, row)
            continue
        shared = sorted((set(mine) & set(first[1])) - {LEGACY_VERSION})
        if shared and mine[shared[-1]] != first[1][shared[-1]]:
            version = shared[-1]
            raise UserError(f"the rows of {source} were trained on different data (data fingerprint "
                            f"{mine[version][:12]}... for {row.name}, {first[1][version][:12]}... for {first[0]}, "
                            f"version {version}); a grid trains its runs on one data folder: move the odd row to the "
                            f"results of its own sweep, or resweep it on the grid's data")
        if shared:
            _check_same_summary(first, (row.name, data, row), source)


_DATA_SUMMARY = ("tokenizer", "vocab_size", "train_tokens", "val_tokens")


def _measured_differently(a: str, row_a, b: str, row_b) -> list[str]:
    """``eval.SET.tokens ...`` where two rows evaluated alike (one ``evaluation``) on one data folder record another
    number of targets (scored plus outside a restricted softmax), or another bits-per-byte for their loss (bpb / loss
    is the tokens per byte of the set): the same windows were measured, so one row's numbers were edited (issue 30
    round 10, P46, P64: eval.val.tokens halved, bpb edited, reported as written)."""
    if row_a.evaluation is None or encode(row_a.evaluation) != encode(row_b.evaluation):
        return []
    out = []
    for name in sorted(set(row_a.eval) & set(row_b.eval)):
        ea, eb = row_a.eval[name], row_b.eval[name]
        ta, tb = (e.tokens + (e.targets_outside or 0) if e.tokens is not None else None for e in (ea, eb))
        if None not in (ta, tb) and ta != tb:
            out.append(f"eval.{name}: {ta:,} targets for {a}, {tb:,} for {b}")
        elif ea.targets_outside is None and eb.targets_outside is None and all(
                isinstance(v, (int, float)) and v > 0 for v in (ea.loss, eb.loss, ea.bpb, eb.bpb)) and \
                abs(ea.bpb / ea.loss - eb.bpb / eb.loss) > 1e-6 * (ea.bpb / ea.loss):
            out.append(f"eval.{name}: bpb / loss {ea.bpb / ea.loss:.6g} for {a}, {eb.bpb / eb.loss:.6g} for {b} (the "
                       f"set's tokens per byte)")
    return out


def _check_same_summary(first: tuple, other: tuple, source: str) -> None:
    """UserError when two rows record one data fingerprint but different summaries of that data (tokenizer, vocabulary,
    token counts): a fingerprint fixes the folder's files, so one row's summary was edited (issue 30 round 10, P47,
    P61: a row's val_tokens or tokenizer edited was reported beside the others)."""
    (a, data_a), (b, data_b) = (first[0], first[2]), other[:2]
    differ = [f"{key}: {getattr(data_a, key)!r} for {a}, {getattr(data_b, key)!r} for {b}" for key in _DATA_SUMMARY
              if None not in (getattr(data_a, key), getattr(data_b, key))
              and getattr(data_a, key) != getattr(data_b, key)]
    if len(first) > 3 and len(other) > 2:
        measured = _measured_differently(first[0], first[3], other[0], other[2])
        if measured and not differ:
            _refuse_changed_text(first[3], measured, source)
        differ += measured
    if differ:
        raise UserError(f"the rows of {source} record one data fingerprint but what they record of that data "
                        f"differs ({'; '.join(differ)}); one fingerprint is one prepared folder (and one evaluation "
                        f"scores the same windows of it), so a row was edited: put back the row you trust "
                        f"from the sweep's own results.jsonl (or delete the edited row; the sweep measures its run "
                        f"again)")


def _refuse_changed_text(row, measured: list[str], source: str) -> None:
    """UserError naming the text file of an eval set when every difference ``_measured_differently`` found is on sets
    read from a text file: a row records that file's path, not its content, so a text replaced between two shards'
    runs measured other windows, and "a row was edited: put back the row you trust" named the wrong cause (issue 30
    round 21, P541)."""
    sets = (getattr(row.evaluation, "sets", None) or {}) if row.evaluation is not None else {}
    texts = {name: getattr(spec, "text", None) for name, spec in sets.items()}
    names = [line.split(":", 1)[0].removeprefix("eval.") for line in measured]
    if not all(texts.get(name) for name in names):
        return
    files = ", ".join(sorted({repr(str(texts[name])) for name in names}))
    raise UserError(f"the rows of {source} evaluated the text file {files} of their eval set(s) alike but "
                    f"measured it differently ({'; '.join(measured)}): a row records the text's path, not its content, "
                    f"so the file most likely changed between the runs (or a row was edited); put the text back as it "
                    f"was for the first runs, or resweep every run into a new --out with the text as it is now")


def check_evaluated_like(rows: Iterable, skip_eval: bool, results: str) -> None:
    """UserError when a sweep would append rows of the other kind than ``rows`` (those kept in ``results``): rows
    with eval numbers beside rows trained with ``--skip-eval``, which no report can put in one table. Before (issue
    30 round 5), a sweep without --skip-eval into a --skip-eval sweep's folder evaluated only its new runs and kept
    the old rows unevaluated, without a word."""
    from ...value_rules import check_switches

    check_switches("check_evaluated_like", skip_eval=skip_eval)  # 'no' was true (round 30, Y621's kind)
    other = [row.name for row in rows if skipped_eval(row) != skip_eval]
    if not other:
        return
    if skip_eval:
        raise UserError(f"{results} holds evaluated rows ({_few(other)}) and this sweep skips evaluation "
                        f"(--skip-eval): one results file cannot hold both kinds of row; run it without --skip-eval, "
                        f"or sweep into another --out")
    raise UserError(f"{results} holds rows trained with --skip-eval ({_few(other)}), which have no eval numbers, and "
                    f"this sweep evaluates its runs: one results file cannot hold both kinds of row; run it with "
                    f"--skip-eval, or delete those rows from {results} (their runs are trained, so the sweep then "
                    f"only evaluates them)")


def _few(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


SKIPPED_EVAL_NOTE = "evaluation skipped (--skip-eval)"  # the note of a row trained with --skip-eval (sweep.SKIPPED_EVAL)


def skipped_eval(row) -> bool:
    """Whether ``row`` was written by a sweep run with ``--skip-eval`` (its note says so, it holds no eval numbers)."""
    return SKIPPED_EVAL_NOTE in (row.notes or []) and not row.eval


# what a run is, beside how it trained: a row whose size ('b' -> 'c'), regime or data_seed was edited was reported
# and collected as another run, exit 0, since only the settings were compared (issue 30 round 15, B5, B9, B15, B18-B20)
IDENTITY = ("size", "variant", "regimes", "seed", "data_seed")


def identity_differences(row, run) -> list[str]:
    """``RUN: FIELD: A in the row, B in grid.json`` (grid.json's run, or the grid's run now: ``drift``) for every field of ``IDENTITY`` that both the row and grid.json's
    run record, and differently; the row's ``regime`` must be the first of grid.json's regimes."""
    out = []
    for key in IDENTITY:
        recorded, said = getattr(row, key, None), getattr(run, key, None)
        if recorded not in (None, []) and said not in (None, []) and plain(recorded) != plain(said):
            out.append(f"{row.name}: {key}: {plain(recorded)!r} in the row, {plain(said)!r} in grid.json")
    regime, regimes = getattr(row, "regime", None), getattr(run, "regimes", None)
    if regime is not None and regimes and regime != regimes[0]:
        out.append(f"{row.name}: regime: {regime!r} in the row, {regimes[0]!r} (the first of its regimes) in grid.json")
    return out

"""Rows of another round that are exactly a run of this grid: found by what they trained, not by their name.

    rows = reusable_rows(grid, runs, read_results("results/o200k"), data_provenance(grid.data_dir))
    leviathan sweep --grid o200k-width --reuse results/o200k --out runs/o200k-width     # the CLI form

The width round (results/o200k-width/PLAN.md) reuses width-64 arms an earlier round already trained. A row stands
for a run of this grid when it trained exactly what the grid would train now: the same variant and seed, no
difference in the settings that decide a run's numbers (``drift.config_differences``), the same data
(``data_match``) and the same evaluation (the source folder's grid.json lists the grid's eval sets and options).
Its name may differ (``d64L6-leviathan-s0`` is the width grid's ``d64L6-pick-leviathan-s0`` when the pick is the
reference): the copy takes the run's name, size and regimes, keeps everything it measured, and says where it came
from in its ``notes``; the sweep then finds the run done, and ``drift`` sees the same config again. A row of this
grid's own run (its name, grid and size) is taken as written: that is how a sweep continues from the rows
scripts/collect_results.py committed, and a note would make the row differ from the committed one, which collect then
refuses to merge.

Footgun: equal settings at a different code commit are the same run only if that code trains the same numbers; the
plan that reuses rows says how that was checked (``scripts/same_numbers.py``). The copy keeps the row's ``code``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ...config import to_dict
from ...errors import UserError
from .data_match import match_data
from .drift import config_differences
from .grid import Grid, RunSpec
from .identity import evaluation_differences, evaluation_settings, skipped_eval
from .provenance import DataProvenance
from .results import RESULTS, ResultRow, append_result, grid_subfolders, read_results
from .sweep_grid import SweepGrid, read_sweep_grid


def same_evaluation(grid: Grid, source: SweepGrid) -> bool:
    """Whether a source folder's grid.json says it evaluated as ``grid`` does (False where it does not say): the
    settings that decide a row's eval numbers (``identity.evaluation_settings``; not the batch size)."""
    return bool(source.eval_sets) and (evaluation_settings(source.eval_sets, source.eval_options)
                                       == evaluation_settings(grid.eval_sets, grid.eval_options))


def reusable_rows(grid: Grid, runs: Iterable[RunSpec], candidates: Iterable[ResultRow], data: DataProvenance,
                  config_fn: Callable, source: str, why: dict[str, str] | None = None,
                  skip_eval: bool = False) -> list[ResultRow]:
    """For each of ``runs``, the first of ``candidates`` that trained exactly that run (module docstring), copied
    under the run's name; runs without one are left out. ``config_fn(grid, spec)`` builds a run's config. ``why``
    (when given) gets, per run left out that has a row of its variant and seed, what that row differs in: rows of
    another corpus or budget were passed over without a word (issue 30 round 20, K84). ``skip_eval``: the sweep's
    --skip-eval; a row of the other kind (``_kind_difference``) is not its run's. Parameters: each is one thing a row
    must match (the grid and its runs, the data, the config builder, --skip-eval) or what is reported back (``source``,
    ``why``); ``adopt_rows`` passes them through one each."""
    from ...value_rules import check_switches

    check_switches("reusable_rows", skip_eval=skip_eval)  # 'no' was true (round 30, Y621's kind)
    candidates = [r for r in candidates if r.config is not None]
    evaluation = evaluation_settings(grid.eval_sets, grid.eval_options)
    out = []
    for spec in runs:
        now = to_dict(config_fn(grid, spec).resolved())
        differing = {}
        for r in (r for r in candidates if r.variant == spec.variant and r.seed == spec.seed):
            differences = [*config_differences(r.config, now), *match_data(r.data_provenance, data).differences,
                           *evaluation_differences(r.evaluation, evaluation), *_kind_difference(r, skip_eval)]
            if not differences:
                out.append(_as_run(r, spec, grid, source))
                break
            differing.setdefault(r.name, differences)
        else:
            if why is not None and differing:
                name, differences = next(iter(differing.items()))
                why[spec.name] = f"its row {name} differs ({'; '.join(differences[:3])})"
    return out


def _kind_difference(row: ResultRow, skip_eval: bool) -> list[str]:
    """What sets ``row`` apart from the rows a sweep of ``skip_eval`` writes (``identity.check_evaluated_like``'s
    rule), or nothing: a --skip-eval row of a source folder mixing both kinds was copied into an evaluating sweep's
    results.jsonl, which the sweep then refused, naming that new file and not the --reuse source (issue 30 round 23,
    T58)."""
    if skipped_eval(row) == skip_eval:
        return []
    return ["it holds no eval numbers (trained with --skip-eval), and this sweep evaluates its runs" if not skip_eval
            else "it is evaluated, and this sweep skips evaluation (--skip-eval)"]


def _as_run(row: ResultRow, spec: RunSpec, grid: Grid, source: str) -> ResultRow:
    """A copy of ``row`` under ``spec``'s name, size and regime, with a note naming where it was trained. A row of
    this grid's own run is kept as written, so collecting the sweep back merges the same row (round 19, H170)."""
    copy = ResultRow.from_dict(row.to_dict())
    if (row.name, row.grid, row.size) == (spec.name, grid.name, spec.size):
        return copy
    copy.name, copy.size, copy.regimes, copy.regime = spec.name, spec.size, list(spec.regimes), spec.regime
    copy.grid = grid.name
    copy.notes = list(copy.notes) + [f"reused: trained as {row.name} in {source} (grid {row.grid}); the same "
                                     f"settings, data and evaluation as this grid's run"]
    return copy


def check_reuse_sources(sources: Iterable[str | os.PathLike]) -> None:
    """UserError for a ``--reuse`` source that is not a sweep's folder (or its results.jsonl), before anything is
    written. Issue 30 round 17 (D298, D299, D303): a report's, a data or a train run folder was "no rows there yet;
    nothing reused from it" and every run trained again, exit 0; a missing folder too, and a plain file (round 19,
    H192: the folder it lies in was read). A sweep folder without rows
    yet (its marker says sweep) keeps that note. The folder is named by ``leviathan.file_kinds``."""
    from ...errors import missing
    from ...file_kinds import folder_kind

    for source in sources:
        folder = Path(source) if os.path.isdir(source) else Path(source).parent
        if not os.path.lexists(source):
            raise UserError(f"--reuse {source} {missing(source)}; pass a sweep's --out folder (it holds "
                            f"results.jsonl)")
        if not os.path.isdir(source) and Path(source).name != RESULTS:  # a file's folder was read (round 19, H192)
            from ...errors import not_a_folder_there  # a pipe was "is a file" (issue 30 round 30, X26's kind)

            what = not_a_folder_there(source).removesuffix(", not a folder")
            raise UserError(f"--reuse {source} {what}, not a sweep's folder or its {RESULTS}: it holds no result "
                            f"rows to reuse; pass a sweep's --out folder (it holds {RESULTS})")
        kind = folder_kind(folder)
        if not os.path.lexists(folder / RESULTS) and kind is not None and "`leviathan sweep`" not in kind:
            raise UserError(f"--reuse {source} is {kind}, not a sweep's folder: it holds no result rows to reuse; "
                            f"pass a sweep's --out folder (it holds results.jsonl)")
        _refuse_a_folder_of_grid_folders(source, folder)


def _refuse_a_folder_of_grid_folders(source: str | os.PathLike, folder: Path) -> None:
    """UserError for a folder without results.jsonl whose subfolders hold one: scripts/collect_results.py's --dest
    keeps each grid's rows in DEST/GRID, and ``--reuse DEST`` was "no rows there yet; nothing reused from it", every
    run trained again (issue 30 round 20, K222). The subfolders are named, to pass one."""
    inner = grid_subfolders(folder)
    if inner:
        shown = ", ".join(str(p) for p in inner[:4]) + (" ..." if len(inner) > 4 else "")
        raise UserError(f"--reuse {source} holds no {RESULTS} itself, but its subfolders do ({shown}: the layout of "
                        f"scripts/collect_results.py's --dest, a folder per grid); pass --reuse {inner[0]}"
                        + (" (the grid's own subfolder)" if len(inner) > 1 else ""))


def adopt_rows(grid: Grid, runs: list[RunSpec], sources: list[str | os.PathLike], out_dir: str | os.PathLike,
               data: DataProvenance, config_fn: Callable, log: Callable[[str], None] = print,
               skip_eval: bool = False) -> list[ResultRow]:
    """Append to ``out_dir``'s results.jsonl the rows of ``sources`` (results folders) that are exactly one of
    ``runs`` without a row there yet; the rows appended. A source without rows is skipped (said in ``log``); one
    with rows that evaluated differently is refused. ``skip_eval``: the sweep's --skip-eval (a row of the other kind
    is not reused: said in ``log``). Parameters: ``reusable_rows``'s, plus where the rows come from and go (``sources``,
    ``out_dir``) and where it reports (``log``)."""
    from ...value_rules import check_callback, check_switches

    check_callback("adopt_rows", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    check_switches("adopt_rows", skip_eval=skip_eval)  # 'no' was true (round 30, Y621's kind)
    from .folder_grid import check_folder_grid, check_folder_runs

    out = Path(out_dir)
    kept = read_results(out / RESULTS)
    check_folder_grid(grid, kept, out)  # rows of grid 'g1b' appended to a folder of grid 'g1' (round 16, C82)
    check_folder_runs(grid, kept, out)  # --seeds leaving out rows there, before any is appended (round 17, D20)
    done = {r.name for r in kept}
    todo = [spec for spec in runs if spec.name not in done]
    adopted: list[ResultRow] = []
    for source in sources:
        if not todo:
            break
        folder = Path(source) if Path(source).is_dir() else Path(source).parent
        candidates = read_results(folder / RESULTS)
        if not candidates:
            log(f"--reuse {source}: no rows there yet; nothing reused from it")
            continue
        if not same_evaluation(grid, read_sweep_grid(folder)):
            raise UserError(f"{folder} did not evaluate as grid {grid.name!r} does (its grid.json lists other eval "
                            f"sets or options, or none): its rows cannot stand for this grid's runs; drop --reuse "
                            f"{source} or give the grid that folder's eval section")
        why: dict[str, str] = {}
        rows = reusable_rows(grid, todo, candidates, data, config_fn, str(source), why, skip_eval)
        if rows:
            out.mkdir(parents=True, exist_ok=True)
        for row in rows:
            append_result(out / RESULTS, row)
            log(f"{row.name}: " + (row.notes[-1] if row.notes and row.notes[-1].startswith("reused: ") else
                                   f"this grid's own row in {source}, taken as written"))
        adopted += rows
        names = {r.name for r in rows}
        for name, reason in why.items():
            log(f"--reuse {source}: {name} not reused: {reason}; it trains here")
        if not rows and not why:
            log(f"--reuse {source}: none of its {len(candidates)} rows is a variant and seed of the runs to go; "
                f"nothing reused from it")
        todo = [spec for spec in todo if spec.name not in names]
    return adopted

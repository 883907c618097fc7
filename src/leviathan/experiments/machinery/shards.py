"""A grid split across machines: disjoint shards of its runs, and their sweep folders merged for the report.

    leviathan sweep --grid cpu-bpe32k --shard 2/4 --out runs/cpu-bpe32k/shard-2    # one task of a job array
    leviathan report runs/cpu-bpe32k/shard-* --out results/cpu-bpe32k             # the whole grid's report

Sharding. ``shard_of(runs, (i, n))`` keeps the runs at positions i-1, i-1+n, ... of the selection in the grid's
order (round robin: every shard gets a mix of sizes). Shards started with the same grid, selection and overrides
are disjoint and cover the selection; each writes whole rows into its own ``--out`` (one writer per folder).

Merging. ``merge_sweeps(folders)`` reads every folder's rows. The folders must hold the same grid (its name in
grid.json; the first folder's serves the report) started with the same settings (issue 30): base overrides, eval
sets and options, data fingerprint and seeds, and the settings of every run both list (its sizes: round 14, B352), else the merge is refused naming the folders and the first
differences; their rows must record one evaluation, and a run with rows in two folders follows ``identity``'s rule.
Rows come out in the grid's run order, so the merged report equals the report of one sweep of the whole grid.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from ...codec import encode
from ...errors import UserError, missing, not_a_file
from .data_match import same_sweep_data
from .grid_agreement import check_grid_describes_rows, run_differences
from .identity import arm_clash, check_one_evaluation, check_one_grid, evaluation_settings, resolve_duplicates
from .results import ResultRow, load_results, to_stderr
from .summary_check import check_rows_match_runs
from .sweep_grid import SweepGrid, read_sweep_grid

SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> (I, N) with 1 <= I <= N; a UserError names the form otherwise."""
    m = SHARD_RE.match(str(text))
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise UserError(f"--shard {text!r} is not I/N with 1 <= I <= N (e.g. --shard 2/4, or in a SLURM array "
                        f"--array=1-4: --shard $SLURM_ARRAY_TASK_ID/4)")
    return int(m.group(1)), int(m.group(2))


def shard_problem(value) -> str | None:
    """Why ``value`` is not a shard (i, n) with 1 <= i <= n, both integers: ``parse_shard``'s rule for a Python caller
    (``SweepOptions(shard=(2, 1))`` selected nothing and blamed the selection, issue 30 round 17, E69)."""
    from ...integers import is_integer

    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(is_integer(v) for v in value):
        return f"expected a pair of integers (i, n), got {value!r:.60}"
    i, n = value
    return None if 1 <= i <= n else f"({i}, {n}) is not (i, n) with 1 <= i <= n: part {i} of {n} does not exist"


def shard_of(runs: list, shard: tuple[int, int] | None) -> list:
    """The runs of shard (i, n): positions i-1, i-1+n, ... (all runs for None)."""
    if shard is None:
        return list(runs)
    i, n = shard
    return [r for k, r in enumerate(runs) if k % n == i - 1]


def empty_shard(grid_name: str, selected: int, shard: tuple[int, int] | None) -> str | None:
    """The one line for shard (i, n) of a selection of ``selected`` runs that has none of them because there are more
    shards than runs (i > selected), None otherwise. ``--shard 3/3`` of a 2-run grid was refused as "no run matches the
    selection ... give --only", naming neither cause, and failed a job array's extra task (issue 30 round 21, N285,
    N286). Such a shard has nothing to do, which is no error: the sweep says so in this line and ends with exit 0
    (``--list`` and ``--commands`` too), writing nothing; the shards that hold runs cover the selection."""
    if shard is None or selected == 0 or shard[0] <= selected:
        return None
    i, n = shard
    empty = f"shard {n} is" if selected + 1 == n else f"shards {selected + 1}-{n} are"
    return (f"shard {i}/{n} of grid {grid_name!r} has no runs: the selection has {selected} run"
            f"{'' if selected == 1 else 's'} for {n} shards, so {empty} empty; nothing to do, "
            f"nothing written (exit 0, as a job array's extra task wants); --shard I/{selected} gives every task a run")


def _folder(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path if path.is_dir() else path.parent


def _settings(grid: SweepGrid) -> dict:
    """What every shard of one grid must have been started with (see the module docstring)."""
    return {"base overrides": sorted(grid.base_overrides),
            "evaluation": encode(evaluation_settings(grid.eval_sets, grid.eval_options)),
            "seeds": grid.seeds}  # the data: ``data_match.same_sweep_data`` (fingerprints of two versions can agree)


def _difference(key: str, a, b, folder_a: Path, folder_b: Path) -> str:
    if key == "base overrides":  # long lists: name what only one of them has, counting copies: a second copy of an
        # override (`eval_interval=3` typed over the base's own) named two empty lists as sets (round 26, P86)
        only_a, only_b = sorted((Counter(a) - Counter(b)).elements()), sorted((Counter(b) - Counter(a)).elements())
        return f"base overrides {only_a} only in {folder_a}, {only_b} only in {folder_b}"
    return f"{key}: {a!r} in {folder_a}, {b!r} in {folder_b}"


def check_shard_settings(grid_a: SweepGrid, grid_b: SweepGrid, folder_a: Path, folder_b: Path) -> None:
    """UserError when two sweep folders of one grid were started with different settings (``_settings``, and the
    settings of every run both list: its sizes, round 14, B352): their rows measure different things. The merge of
    shards and the ablation report (round 17, D235: two folders of grid g1, one swept with optim.lr=0.001 and seed
    1, shown as two identical 'g1/a' rows) both apply it."""
    first, other = _settings(grid_a), _settings(grid_b)
    differ = [_difference(key, first[key], other[key], folder_a, folder_b) for key in first if first[key] != other[key]]
    differ += run_differences(grid_a, grid_b, folder_a, folder_b)
    if differ:
        raise UserError(f"these shards of grid {grid_b.name!r} were started with different settings ("
                        + "; ".join(differ[:3]) + "): their rows measure different things and cannot be merged; "
                        "run every shard with the same grid, overrides and eval section (resweep the odd one "
                        "into a new --out)")


def _check_merge_inputs(paths: list[str | os.PathLike]) -> None:
    """UserError naming the first of ``paths`` that does not exist, or whose folder holds no grid.json: the merge
    compares the folders' grids, and such a folder was named as "sw5 (None)" or ". (None)" among "different grids"
    (issue 30 round 14, B33, B355); ``[None]`` was os.stat's bare TypeError (round 20, M350). One path given as a
    str was read character by character, "sweep folder 's' does not exist" (round 21, P327)."""
    from ...value_rules import check_read_path

    if isinstance(paths, (str, bytes, os.PathLike)):
        raise UserError(f"merge_sweeps: paths: expected a list of sweep folders, got the single path "
                        f"{os.fsdecode(paths)!r}; pass a list, e.g. merge_sweeps([{os.fsdecode(paths)!r}])")
    check_read_path("merge_sweeps", "paths", paths if isinstance(paths, (list, tuple)) else [paths],
                    "pass a list of sweep --out folders", many=True)
    _check_named_once(paths)  # first: a folder without grid.json named twice was blamed on grid.json (round 35, AI170)
    for path in paths:
        if not os.path.exists(path):  # False too for a dead link or a name too long: ``missing`` says which
            raise UserError(f"sweep folder {str(path)!r} {missing(path)}; pass the --out folder of a sweep (or its "
                            f"results.jsonl)")
        grid_json = _folder(path) / "grid.json"
        if (what := not_a_file(grid_json)) is not None:  # not "has no grid.json" (issue 30 round 23, U379's kind)
            raise UserError(f"{str(grid_json)!r} {what}, where the sweep's grid.json should be; put the sweep's "
                            f"grid.json back (rerun its command: runs with a row are not trained again)")
        if not grid_json.is_file():
            raise UserError(f"{str(path)!r} has no grid.json ({str(grid_json)!r}), which names the grid and settings "
                            f"its rows were swept with, so it cannot be merged with other sweep folders: it is not a "
                            f"sweep's --out folder, or its grid.json was removed; put the sweep's grid.json back (the "
                            f"sweep writes it again on every start: rerun its command, runs with a row are not trained "
                            f"again), or report it on its own")


def _check_named_once(paths: list[str | os.PathLike]) -> None:
    """UserError naming both paths when two of ``paths`` are one sweep folder (the same name, a symbolic link to it, or
    the folder and its results.jsonl): ``merge_sweeps([sw1, sw1])`` and ``write_report([sw1, sw1], out)`` merged the
    folder with itself without a word, so a shard mistyped for another went unnoticed (issue 30 round 30, Y379, Y380,
    Y393), where ``report --ablation`` (``ablation.analysis.collect``) and ``prepare`` (Y209) refuse it."""
    seen: dict[str, str] = {}
    for path in paths:
        folder = os.path.realpath(_folder(path))
        if folder in seen:
            raise UserError(f"{os.fsdecode(path)!r} is the sweep folder {seen[folder]!r} again ({folder}): its rows "
                            f"would be merged with themselves; give each shard's sweep folder once")
        seen[folder] = os.fsdecode(path)


def merge_sweeps(paths: list[str | os.PathLike], report=None) -> tuple[list[ResultRow], SweepGrid]:
    """(every run's row once, the grid.json of the first folder) over several sweep folders of one grid;
    ``report`` receives the readers' warnings and notes (default: stderr)."""
    from ...value_rules import check_callback

    check_callback("merge_sweeps", "report", report)  # a function of one message (round 31, AA281, AA714)
    _check_merge_inputs(paths)
    folders = [_folder(p) for p in paths]
    grids = {f: read_sweep_grid(f) for f in folders}
    if len({g.name for g in grids.values()}) > 1:
        listed = ", ".join(f"{f} ({g.name})" for f, g in grids.items())
        raise UserError(f"these sweep folders hold different grids: {listed}; report each grid on its own "
                        f"(several folders merge only as shards of one grid), or pair their arms with --ablation")
    for folder in folders[1:]:
        check_shard_settings(grids[folders[0]], grids[folder], folders[0], folder)
    rows = {folder: load_results(path, report) for path, folder in zip(paths, folders)}
    for path, folder in zip(paths, folders):  # each shard's grid.json its own (round 9, N27)
        check_grid_describes_rows(rows[folder], grids[folder], str(folder / "grid.json"), str(path))
        check_rows_match_runs(rows[folder], path)  # its rows their runs' (round 24, V14: one folder's report)
    for folder in folders[1:]:
        if not same_sweep_data(grids[folders[0]], rows[folders[0]], grids[folder], rows[folder]):
            raise UserError(f"these shards of grid {grids[folder].name!r} were trained on different data (data "
                            f"fingerprint {grids[folders[0]].data_fingerprint!r} in {folders[0]}, "
                            f"{grids[folder].data_fingerprint!r} in {folder}): their rows measure different things "
                            f"and cannot be merged; resweep the odd one on the grid's data folder into a new --out")
    numbered = [(str(folder), row) for folder in folders for row in rows[folder]]
    unique, notes = resolve_duplicates(numbered, "these shards")
    clash = arm_clash(numbered)  # round 19 (J88-J95): one arm under two names, one in each shard
    if clash is not None:
        raise UserError(f"these shards hold one arm twice: {clash}; delete the row you do not trust from its "
                        f"folder's results.jsonl, or correct its variant, size or seed")
    for note in notes:
        (report or to_stderr)(note)
    check_one_evaluation(unique, "these shards")
    check_one_grid(unique, "these shards", grids[folders[0]].name, str(folders[0] / "grid.json"))
    grid = grids[folders[0]]
    order = {run.name: k for k, run in enumerate(grid.runs)}  # the grid's order, as one sweep writes it
    merged = sorted(unique, key=lambda r: order.get(r.name, len(order)))
    return merged, grid

"""A sweep folder's grid.json read beside its rows must describe them.

    check_grid_describes_rows(rows, grid, "sweep/grid.json", "sweep/results.jsonl")   # UserError naming what differs

A report reads the grid's name, unigram plateau and run order from grid.json. A grid.json copied from another sweep
of the same grid name (one started with ``max_steps=3``) was taken as the rows' own, exit 0 (issue 30 round 9, N27):
only the name was compared. Now every row whose run grid.json lists is compared with what grid.json says that run
trained with (its ``base_overrides`` and ``run_overrides`` on the settings that decide the numbers, ``drift``'s
keys; its ``model`` fields), with the grid's seeds and with its evaluation. The sweep rewrites grid.json only when
every kept row agrees with it (``drift``), so its own grid.json always passes. Rows of runs grid.json no longer lists
(the grid dropped them) are compared on the base overrides and the vocabulary only (round 11, S203: grid.json's
``vocab_size`` was not compared at all); rows or grid.json fields that record nothing are not compared. Across the
rows, a compared setting outside ``model`` that no run's ``run_overrides`` varies (and not the seed) must be one value
(issue 30 round 10, P48: one row's optim.lr edited). Each row's data is compared with grid.json's fingerprint (round
20, K168), and a compared setting grid.json's overrides leave at its default with that default (round 20, K169).
"""

from __future__ import annotations

from typing import Any, Iterable

from ...errors import UserError
from .data_match import FINGERPRINT, grid_data, match_data
from .drift import COMPARED_KEYS, COMPARED_SECTIONS, compared_view
from .identity import evaluation_differences, evaluation_settings, identity_differences, plain
from .results import setting
from .sweep_grid import GridRun, SweepGrid

MAX_SHOWN = 4


def _compared(key: str) -> bool:
    return key in COMPARED_KEYS or key.split(".", 1)[0] in COMPARED_SECTIONS


def _said(grid: SweepGrid, run) -> dict[str, Any]:
    """{dotted key: value} grid.json says ``run`` trained with: its overrides in order (the last wins), then its
    model fields."""
    from ...config import ConfigError, parse_override

    said: dict[str, Any] = {}
    for text in [*grid.base_overrides, *run.run_overrides]:
        try:
            parts, value = parse_override(text)
        except ConfigError:
            continue  # not an override the sweep wrote; the sweep's own would have parsed
        said[".".join(parts)] = value
    said.update({f"model.{k}": v for k, v in run.model.items()})
    return {k: v for k, v in {**_unsaid_defaults(grid, said), **said}.items() if _compared(k)}


def _unsaid_defaults(grid: SweepGrid, said: dict[str, Any]) -> dict[str, Any]:
    """{dotted key: default} of the compared settings outside ``model`` that neither grid.json's overrides set, when
    the grid builds on no base config file: what such a run trained with. A grid.json whose ``max_steps=2`` override
    was deleted was read beside rows trained 2 steps without a word, while an edited value was named (issue 30 round
    20, K169, K171). A default of None is "not set" (a row of max_steps 2 beside a grid.json that sets no
    max_steps differs); a grid of ``base_config`` (a file
    grid.json does not hold) is not either. A run's model fields are grid.json's own, not defaults."""
    if not grid.defaults_based or not (grid.base_overrides or grid.runs):
        return {}
    from .drift import field_defaults

    return {k: v for k, v in field_defaults().items()
            if k not in said and k != "seed" and not k.startswith("model.")}  # the seed: the run's own


def _same(a: Any, b: Any) -> bool:
    """Equal as the config reads them (YAML 1.1 reads ``1e-3`` as text; the config makes it a number)."""
    a, b = plain(a), plain(b)
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _differences(row, said: dict[str, Any], grid: SweepGrid, listed: bool, grid_run=None) -> list[str]:
    out = []
    config = row.config if isinstance(row.config, dict) else {}
    for key, value in sorted(said.items()):
        recorded = setting(config, key)
        if recorded is not None and not _same(recorded, value):
            out.append(f"{row.name}: {key}: {plain(recorded)!r} in the row, {_unset(value)} in grid.json")
    if grid.vocab_size is not None and row.vocab_size is not None and row.vocab_size != grid.vocab_size:
        # round 11 (S203): the grid's vocabulary (its data's) is every run's, listed or not
        out.append(f"{row.name}: vocab_size: {row.vocab_size!r} in the row, {grid.vocab_size!r} in grid.json")
    if grid.data_seed is not None and row.data_seed is not None and row.data_seed != grid.data_seed:
        # round 17 (D313): the grid's data_seed is every run's (grid.load_grid refuses one that would not be)
        out.append(f"{row.name}: data_seed: {row.data_seed!r} in the row, {grid.data_seed!r} in grid.json's data_seed")
    out += _data_differences(row, grid)
    if not listed:  # a run the grid no longer has (fewer seeds now): its base overrides only
        return out
    out += identity_differences(row, grid_run)
    if grid.seeds and row.seed is not None and row.seed not in grid.seeds:
        out.append(f"{row.name}: seed {row.seed} is not among grid.json's seeds {grid.seeds}")
    if grid.eval_sets:
        now = evaluation_settings(grid.eval_sets, grid.eval_options)
        out += [f"{row.name}: " + d.replace(" now", " in grid.json")
                for d in evaluation_differences(row.evaluation, now)]
    return out


def _data_differences(row, grid: SweepGrid) -> list[str]:
    """``ROW: data fingerprint: X in the row, Y in grid.json`` when grid.json's fingerprint and the row's are of one
    version and differ (``data_match``'s rule). A grid.json whose data_fingerprint was edited to another corpus's
    was read beside rows of the first: report and collect blamed the data folder's place ("not found from here")
    and collect stored it (issue 30 round 20, K168, K170, M210)."""
    match = match_data(row.data_provenance, grid_data(grid))
    if match.how != FINGERPRINT:
        return []  # no fingerprint of one version on both sides: nothing to say (a summary match needs counts)
    return [f"{row.name}: " + d.replace(" now (", " in grid.json (") for d in match.differences]


def _unvaried(rows: list, grid: SweepGrid) -> list[str]:
    """``KEY: VALUE for A, VALUE for B`` for a compared setting outside ``model`` that two rows record differently
    although the grid sets it for every run alike (no run's ``run_overrides`` name it, and it is not the seed): a
    row whose config says optim.lr 0.5 beside rows of 0.0003 was compared with them (issue 30 round 10, P48)."""
    varied = {".".join(parse_key(o)) for run in grid.runs for o in run.run_overrides} | {"seed"}
    first, out = None, []
    for row in rows:
        config = row.config if isinstance(row.config, dict) else None
        if config is None:
            continue
        view = {k: v for k, v in compared_view(config).items()
                if v is not None and not k.startswith("model.") and k not in varied}
        if first is None:
            first = (row.name, view)
            continue
        out += [f"{key}: {first[1][key]!r} for {first[0]}, {value!r} for {row.name}" for key, value in view.items()
                if key in first[1] and not _same(first[1][key], value)]
    return out


def parse_key(override: str) -> list[str]:
    return override.split("=", 1)[0].strip().lstrip("-").split(".")


def run_differences(grid_a: SweepGrid, grid_b: SweepGrid, where_a, where_b) -> list[str]:
    """``RUN: KEY: A in WHERE_A, B in WHERE_B`` for every setting that decides a run's numbers (``_said``: its own
    overrides and model fields; the base overrides are compared on their own) that two grid.json files of one grid name set differently for a run both list. Shards, and a
    sweep collected into the results of another, were taken as one grid when only their overrides and evaluation
    agreed: a size at another width was paired with the other's as the same body (issue 30 round 14, B352), and its
    grid.json put in place of the one that described the kept rows (B353)."""
    runs_b = {run.name: run for run in grid_b.runs}
    out = []
    for run in grid_a.runs:
        if run.name not in runs_b:
            continue  # a grid with more seeds or sizes: the runs both have are what must agree
        said_a, said_b = _said(SweepGrid(), run), _said(SweepGrid(), runs_b[run.name])  # base overrides: apart
        for key in sorted(set(said_a) | set(said_b)):
            a, b = said_a.get(key), said_b.get(key)
            if not _same(a, b):
                out.append(f"{run.name}: {key}: {_unset(a)} in {where_a}, {_unset(b)} in {where_b}")
    return out


def _unset(value: Any) -> str:
    return "not set" if value is None else repr(plain(value))


def check_grid_describes_rows(rows: Iterable, grid: SweepGrid, grid_file: str, source: str) -> None:
    """UserError when ``grid`` (read from ``grid_file``) says the runs of ``source``'s rows trained or were evaluated
    otherwise than the rows record, or when the rows trained a setting the grid sets alike for every run differently
    (see the module docstring)."""
    rows = list(rows)
    runs = {run.name: run for run in grid.runs}
    base = GridRun(name="") if grid.runs or grid.base_overrides else None
    differ: list[str] = []
    for row in rows:  # a row of a run grid.json does not list still trained with the grid's base overrides
        run = runs.get(row.name, base)
        if run is not None:
            differ += _differences(row, _said(grid, run), grid, row.name in runs, run)
    unvaried = _unvaried(rows, grid) if grid.runs else []  # without runs, grid.json cannot say what varies
    if unvaried:
        shown = "; ".join(unvaried[:MAX_SHOWN])
        raise UserError(f"the rows of {source} trained with different settings that their grid {grid.name!r} sets "
                        f"alike for every run ({shown}): a row was edited or pasted from another sweep; put back the "
                        f"sweep's own results.jsonl rows, or report the runs of each setting on their own")
    if differ:
        shown = "; ".join(differ[:MAX_SHOWN]) + (f"; ... {len(differ) - MAX_SHOWN} more" if len(differ) > MAX_SHOWN
                                                  else "")
        raise UserError(f"{grid_file} does not describe the rows of {source} ({len(differ)} difference(s): {shown}): "
                        f"it was copied from another sweep of grid {grid.name!r} or edited (or a row was); put back the "
                        f"sweep's own grid.json and results.jsonl rows (the sweep's own command, `leviathan sweep --grid {grid.name} --out FOLDER` with "
                        f"the overrides its rows trained with, writes it again without training a run that has its "
                        f"row)")

"""The grid YAML an ablation report reads by name is used only when it describes the sweep's grid.json.

    gf, note = grid_file_of(grid, "runs/ablate-o200k")   # (GridFile, None) or (empty GridFile, "warning: ...")

The ablation report takes each size's run overrides (the "change" column) and the ``ablations:`` factors (the
figures) from the grid's YAML, found by name, and the current folder's ``configs/`` comes first. A file there of the
same name (size a with ``optim.lr: 1.0e-2``, ``ablations: {shape: [a, zz]}``) that the sweep never used labelled
two arms "optim.lr=0.01" though both trained at 0.003, and drew a "shape" figure of a size the grid has not, exit 0
(issue 30 round 15, B244). The file is used when every run grid.json lists (with its overrides recorded) has the
overrides the file gives its size, and every ablation entry names a size of grid.json's runs; otherwise it is left
out with a warning naming the difference, and the report reads grid.json alone (its runs' own overrides).
Footgun: grid.json files written before runs recorded ``run_overrides`` (null) cannot contradict the file; they
keep it.
"""

from __future__ import annotations

from ...config import ConfigError
from ...errors import UserError
from ..machinery.grid_agreement import _same
from ..machinery.grid_file import GridFile, SizeSpec, read_grid_file
from ..machinery.sweep_grid import SweepGrid


def _parsed(overrides: list[str]) -> dict:
    from ...config import parse_override

    out = {}
    for text in overrides:
        try:
            parts, value = parse_override(text)
        except ConfigError:
            continue
        out[".".join(parts)] = value
    return out


def size_overrides(gf: GridFile) -> dict[str, list[str]]:
    """Each size of the grid file -> its run-config overrides, as the sweep writes them."""
    from ..machinery.grid import flatten

    return {s: [o for run in SizeSpec.of(s, v).run for o in flatten(run)]
            for s, v in (gf.sizes or {}).items() if isinstance(v, dict)}


def _shown(value) -> str:
    return "not set" if value is None else repr(value)


def _differences(gf: GridFile, grid: SweepGrid) -> list[str]:
    sizes = size_overrides(gf)
    out = []
    for run in grid.runs:
        if run.size is None or not getattr(run, "overrides_recorded", False):
            continue
        file, said = _parsed(sizes.get(run.size, [])), _parsed(run.run_overrides)
        for key in sorted(set(file) | set(said)):
            if not _same(file.get(key), said.get(key)):
                out.append(f"run {run.name}: {key} {_shown(file.get(key))} in the file, {_shown(said.get(key))} in "
                           f"grid.json")
    known = {run.size for run in grid.runs if run.size is not None}
    for factor, entries in (gf.ablations or {}).items():
        out += [f"ablation {factor!r} names size {str(e).partition(':')[0]!r}, which grid.json's runs have not"
                for e in entries or [] if known and str(e).partition(":")[0] not in known]
    return out


def grid_file_of(grid: SweepGrid, folder: str) -> tuple[GridFile, str | None]:
    """(the grid file of ``grid``'s name, None) when it describes grid.json; (an empty GridFile, a warning line)
    when it does not; (an empty GridFile, None) when there is none."""
    try:
        gf, path = read_grid_file(grid.name)
    except (UserError, OSError):
        return GridFile(), None
    differ = _differences(gf, grid) if grid.runs else []
    if not differ:
        return gf, None
    return GridFile(), (f"warning: {path} (found by the grid's name {grid.name!r}) does not describe {folder}'s "
                        f"grid.json ({'; '.join(differ[:3])}{' ...' if len(differ) > 3 else ''}): it is not the file "
                        f"the sweep ran; its sizes' settings and ablation factors are left out (the change column is "
                        f"grid.json's). Run the report from the folder the sweep ran in to use the grid's own file")

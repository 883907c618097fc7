"""The report's section on a fair-shot round (``leviathan report DIR --fair-shot COMMITTED``): its Markdown.

The numbers come from ``experiments.method.fair_shot``; this lays out the reproduction check, the screening table
(generator and untied-table arms at seed 0, each against its reference), what the rules chose and why, and the
primary comparison with its interval once its seeds are in. The arms screened are the seed-0 runs of the round's
grid file (``load_grid``), so a missing row keeps a choice pending instead of letting the rows that exist decide.
"""

from __future__ import annotations

from ...config import ConfigError
from ...errors import UserError
from ..method.fair_shot import GENERATOR, TABLE, ArmResult, FairShot, fair_shot
from ..machinery.grid import load_grid
from ..method.paired import PairedComparison
from ..machinery.results import ResultRow
from ...tables import cell


def planned_arms(grid_name: str | None, reference: str = "d64L6",
                 grid_file: str | None = None) -> tuple[list[str] | None, list[str] | None]:
    """(generator arms, untied-table arms) the round's grid runs at seed 0 besides the reference; None without a grid.
    The grid is found by its name (grid.json records the name and, as ``grid_file``, the file the sweep read): a grid
    the sweep was given as a file of another name was "unknown grid 'tiny'" after the report's figures were written
    (issue 30 round 11, R54); the caller asks before writing, and the line says how to give such a grid."""
    if not grid_name:
        return None, None
    from ...configs import find_grid_file

    try:
        find_grid_file(grid_name)
        grid = None
    except ConfigError:
        grid = _recorded_grid(grid_name, grid_file)
        if grid is None:
            read = f" (the sweep read it from {grid_file!r}, grid.json's path)" if grid_file else ""
            raise UserError(f"--fair-shot: the round's planned arms come from its grid, found by the name grid.json "
                            f"records, and no grid is named {grid_name!r}{read} (none in ./configs/experiments, none "
                            f"packaged, and that file is not there or names another grid); copy that grid file to "
                            f"configs/experiments/{grid_name}.yaml and run the report from the folder holding "
                            f"configs/") from None
    grid = grid or load_grid(grid_name)
    arms = {v: sorted({r.size for r in grid.runs if r.variant == v and r.seed == 0 and r.size != reference})
            for v in (GENERATOR, TABLE)}
    return arms[GENERATOR], arms[TABLE]


def check_same_data(rows: list[ResultRow], committed: list[ResultRow], folder: str) -> None:
    """UserError when the committed round (``--fair-shot FOLDER``) holds rows of other data than the round being
    reported (``data_match``'s rule, or another vocabulary): the rules
    compare this round's arms with the round it re-examines, on the same tokens. A committed round of another grid,
    corpus and vocabulary was taken, and its rules applied to g1's arms, exit 0 (issue 30 round 20, K147)."""
    from ..machinery.data_match import match_data

    mine = next((r for r in rows if r.data is not None), None)
    theirs = next((r for r in committed if r.data is not None), None)
    if mine is None or theirs is None:
        return  # rows that record no data: nothing to compare (rows written before they carried it)
    match = match_data(mine.data_provenance, theirs.data_provenance)
    differ = list(match.differences)  # by fingerprint, or (version-1 on one side) on the token counts
    if not differ and mine.vocab_size is not None and theirs.vocab_size is not None and mine.vocab_size != theirs.vocab_size:
        differ.append(f"vocab_size {mine.vocab_size} in the row, {theirs.vocab_size} in {folder}")
    if differ:
        shown = "; ".join(d.replace(" now", f" in {folder}") for d in differ)
        raise UserError(f"--fair-shot {folder!r} holds rows of other data than the round being reported ({mine.name}: "
                        f"{shown}): the fair-shot rules compare a round's arms with the committed round it "
                        f"re-examines, on the same tokens; pass that round's results folder (results/o200k for "
                        f"o200k-fair), or leave --fair-shot out")


def _recorded_grid(grid_name: str, grid_file: str | None):
    """The grid at ``grid_file`` (grid.json's record of the file the sweep read) when it is there and still names
    ``grid_name``; None otherwise. It was not looked at: ``g1.yaml`` in the current folder, as grid.json records it,
    was "no grid is named 'g1'" (issue 30 round 17, E277)."""
    import os

    if not grid_file or not os.path.isfile(grid_file):
        return None
    try:
        grid = load_grid(grid_file)
    except (ConfigError, UserError):
        return None
    return grid if grid.name == grid_name else None


def _arm_table(results: list[ArmResult], what: str, reference: str) -> list[str]:
    lines = [f"| {what} | run | final val loss | - reference | beats it by > margin |", "|---|---|---|---|---|"]
    for r in results:
        beats = "reference" if r.arm == reference else ("yes" if r.beats_margin else "no")
        lines.append(f"| {r.arm} | {r.run} | {cell(r.loss, '.4f')} | {cell(r.diff, '+.4f')} | {beats} |")
    return lines


def _paired_line(c: PairedComparison) -> str:
    e = c.eval.get("val")
    if e is None:
        return f"- {c.size} {c.model} - {c.baseline_size or c.size} {c.baseline}: no val pairs"
    st = e.loss
    ci = "-" if st.ci is None else f"[{st.ci[0]:+.4f}, {st.ci[1]:+.4f}]"
    per_seed = ", ".join(f"{d:+.4f}" for d in st.diffs)
    return (f"- **{c.size} {c.model} - {c.baseline_size or c.size} {c.baseline}**: seeds {c.seeds}, d_s = {per_seed}; "
            f"mean {cell(st.mean, '+.4f')} {ci}: **{st.verdict}**")


def render_fair_shot(fs: FairShot, source: str) -> list[str]:
    md = ["## The fair-shot round: the plan's rules applied", "", f"Reference rows compared with `{source}`.", ""]
    rep = fs.reproduction
    if rep is None:
        md += ["**Reproduction check:** pending (no rerun of the untied table's seed 0 yet).", ""]
    else:
        md += [f"**Reproduction check** ({rep.run}, committed at {str(rep.committed_commit)[:7]}, rerun at "
               f"{str(rep.rerun_commit)[:7]}): {rep.equal_points} of {rep.points} curve points equal bit for bit; "
               f"final loss {cell(rep.committed_final, '.10f')} committed, {cell(rep.rerun_final, '.10f')} rerun; largest "
               f"difference {cell(rep.max_abs_diff, '.3e')}. **{'Reproduced' if rep.bitwise else 'Not reproduced'}**: "
               f"the reference arms are the {fs.reference_rows} rows.", ""]
    md += ["### Screening (seed 0)", "", *_arm_table(fs.screening, "generator arm", fs.reference), "",
           *_arm_table(fs.tables, "untied-table arm", fs.reference), "",
           f"- **Pick:** {fs.pick or 'pending'} ({fs.pick_reason}).",
           f"- **Combination:** " + (f"{' + '.join(fs.combination) if fs.combination else 'none'} "
                                      f"({fs.combination_reason})." if fs.pick is not None else "pending (the screening)."),
           f"- **Control:** {fs.control or 'pending'} ({fs.control_reason}).", ""]
    if fs.primary is not None:
        md += ["### Primary: the pick against the control", "", _paired_line(fs.primary), ""]
        md += [_paired_line(c) for c in fs.secondary] + [""]
    return md


def fair_shot_section(rows: list[ResultRow], committed: list[ResultRow], source: str,
                      planned: tuple[list[str] | None, list[str] | None], reference: str = "d64L6", ci: float = 0.95,
                      plateau: float | None = None) -> tuple[list[str], FairShot]:
    """(Markdown lines, the FairShot record: analysis.json's ``fair_shot``); ``planned``: ``planned_arms``."""
    gens, tables = planned
    fs = fair_shot(rows, committed, reference, gens, tables, ci=ci, plateau=plateau)
    return render_fair_shot(fs, source), fs

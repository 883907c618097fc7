"""``leviathan report RESULTS --out DIR``: a Markdown report with tables and PNG figures from a sweep.

Reads ``results.jsonl`` (``experiments.machinery.results``) and each run's ``metrics.jsonl``; writes
``DIR/report.md``, ``DIR/analysis.json`` (every number in the report) and ``DIR/*.png``, never over a file of those
names it did not write (``leviathan.ownership``). One job per part: ``analysis`` (the numbers, one ``Analysis``),
``figures`` (the PNGs), ``markdown`` (report.md) and ``embeddings`` (the input side at init and at the end, from
the records of ``leviathan analyze embeddings``). The unigram plateau the paired gap curves mark comes from the
sweep's grid.json (its data folder's train_freq.npy, or the ``unigram_entropy`` a copied grid.json holds).

Missing inputs degrade gracefully: a section whose data is absent (no ladder, no buckets, metrics
files moved) says so in the report instead of failing, so a half-finished sweep reports what it has.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ...errors import UserError
from ...io import atomic_write_json, atomic_write_text
from ...locking import folder_lock
from ...ownership import CONTAINERS, check_claim, check_not_inside, mark
from ..machinery.arm_rates import mixed_rates_note
from ..machinery.embedding_files import read_records, record_row_problem, records_dir
from ..machinery.grid_coverage import coverage_notes
from ..machinery.identity import check_eval_set, unrecorded_evaluation_note
from ..machinery.one_sweep import check_one_sweep
from .presweep_of import check_presweep_of_grid
from ..machinery.data_match import grid_plateau
from ..machinery.results import COMPARISONS, json_safe, load_results
from ..machinery.shards import merge_sweeps
from ..machinery.summary_check import check_rows_match_runs
from ..machinery.sweep_grid import grid_json_of, read_sweep_grid
from ..staged import staged_output
from .arguments import check_report_arguments
from .analysis import Analysis, analyze, comparison_table
from .figures import FIGURE_NAMES, draw_figures
from .markdown import render_markdown
from ...storage import api_write

__all__ = ["COMPARISONS", "Analysis", "analyze", "comparison_table", "render_markdown", "write_report"]


@api_write("write_report", "out_dir")
def write_report(results: str | os.PathLike | list, out_dir: str | os.PathLike, eval_set: str = "val",
                 num_bootstrap: int = 1000, ci: float = 0.95, seed: int = 0, ladder: str | None = None,
                 lr_sweep: str | os.PathLike | list | None = None,
                 fair_shot: str | os.PathLike | None = None) -> Path:
    """Analyse a sweep's results (several folders: the shards of one grid, merged) and write report.md, analysis.json and
    the figures into ``out_dir``; with ``lr_sweep`` (the pre-sweep's folder, or its shards' folders) also the pre-sweep's
    table and picks, with ``fair_shot`` (the results folder of the round it re-examines) the fair-shot rules applied.

    Parameters: the options of ``leviathan report``, keyword arguments one each (the library entry point mirrors the
    verb).
    """
    check_report_arguments(results, out_dir, eval_set, num_bootstrap, ci, seed, ladder, lr_sweep, fair_shot)
    folders = list(results) if isinstance(results, (list, tuple)) else [results]
    notes: list[str] = []

    def note(message: str) -> None:  # warnings and notes of the readers: on stderr, and in the report
        print(message, file=sys.stderr)
        notes.append(message)

    if isinstance(results, (list, tuple)) and len(results) > 1:
        rows, grid = merge_sweeps(results, note)
        results = " + ".join(str(r) for r in results)
    else:
        results = results[0] if isinstance(results, (list, tuple)) else results
        rows = load_results(results, note)
        grid = read_sweep_grid(results)
        check_one_sweep(rows, grid, str(results), str(grid_json_of(results)))
        check_rows_match_runs(rows, results)  # a row's edited final numbers were reported (round 24, V14)
    if (mixed := mixed_rates_note(rows)) is not None:  # seeds of one arm at other rates (round 14, B34)
        note(mixed)
    if (unrecorded := unrecorded_evaluation_note(rows, str(results))) is not None:  # round 18 (G318)
        note(unrecorded)
    for line in coverage_notes(rows, grid, str(results)):  # round 15 (B203, B163): runs and rows that differ
        note(line)
    if lr_sweep is not None:  # read (and checked) before the first file is written
        sweeps = list(lr_sweep) if isinstance(lr_sweep, (list, tuple)) else [lr_sweep]
        lr_rows = merge_sweeps(sweeps)[0] if len(sweeps) > 1 else load_results(sweeps[0])
        _check_presweep_apart(lr_rows, grid.name, sweeps)
        check_presweep_of_grid(lr_rows, rows, grid.name, sweeps, eval_set)  # round 15, B178
    records = read_records_of(folders, rows, note)  # read and checked before the first file is written
    if fair_shot is not None:  # likewise (round 11, R54: an unknown grid after four figures were written)
        from .fair_shot import check_same_data, planned_arms

        committed = load_results(fair_shot)
        check_same_data(rows, committed, str(fair_shot))  # round 20 (K147): a round of other data was taken
        planned = planned_arms(grid.name, grid_file=grid.path)
    check_eval_set(rows, eval_set, str(results))  # round 10 (Q170): a report of empty tables was written, exit 0
    out = Path(out_dir)
    check_not_inside(out, "--out", ("train", "prepare", "export"), within=CONTAINERS, verb="report")  # N11, D137
    check_claim(out, "report", REPORT_FILES, "choose another --out",
                legacy=lambda folder: (folder / "report.md").is_file() and (folder / "analysis.json").is_file(),
                alone=True)  # not among a user's files (round 18, G133, G134)
    # one writer at a time: two reports into one folder at once both said done, one replaced by the other without
    # a word (issue 30 round 25, Y505); the second is refused naming the first, as a second sweep or export is
    with folder_lock(out, "write a report", "choose another --out", who="`leviathan report`"):
        mark(out, "report", REPORT_FILES)  # before the first file: a report stopped part-way (full disk, SIGTERM)
        # left figures it had not claimed, and the rerun it advised was refused as writing over them (round 5)
        plateau = grid_plateau(grid)
        if plateau is None and grid.data_dir:  # "Unigram plateau: - nats" without a word (issue 30 round 12, U201)
            note(f"note: the unigram plateau is not shown: grid.json's data folder {grid.data_dir!r} (a path from "
                 f"the folder the sweep ran in) is not found from here, or is not the sweep's data; run the report "
                 f"from that folder, or collect the sweep with scripts/collect_results.py, which stores the plateau")
        a = analyze(rows, eval_set, num_bootstrap, ci, seed, ladder, plateau, records)
        a.notes = [n.split(": ", 1)[1] if n.startswith(("note: ", "warning: ")) else n for n in notes] or None
        with staged_output(out, "report", REPORT_FILES, stale=FIGURE_NAMES) as stage:  # replaced as a whole (B289)
            md = render_markdown(a, draw_figures(rows, a, stage), str(results))
            md = _extra_sections(md, a, rows, ci, plateau, lr_sweep and (lr_rows, sweeps),
                                 fair_shot and (committed, fair_shot, planned))
            atomic_write_text(stage / "report.md", md)
            atomic_write_json(stage / "analysis.json", json_safe(a))
    return out / "report.md"


def _extra_sections(md: str, a: Analysis, rows: list, ci: float, plateau, lr_sweep, fair_shot) -> str:
    """``md`` with the pre-sweep's section (``lr_sweep``: its rows and folders) and the fair-shot section
    (``fair_shot``: the committed rows, their folder and the planned arms) added, each when given."""
    if lr_sweep:
        from ..method.lr_sweep import lr_sweep_section

        lr_rows, sweeps = lr_sweep
        section, a.lr_sweep = lr_sweep_section(lr_rows, " + ".join(map(str, sweeps)), a.eval_set)
        md = md.rstrip("\n") + "\n\n" + "\n".join(section) + "\n"
    if fair_shot:
        from .fair_shot import fair_shot_section

        committed, folder, planned = fair_shot
        section, a.fair_shot = fair_shot_section(rows, committed, str(folder), planned, ci=ci, plateau=plateau)
        md = md.rstrip("\n") + "\n\n" + "\n".join(section) + "\n"
    return md


# What a report writes into its --out (``ownership.check_claim``: never over a user's file of the same name).
REPORT_FILES = ("report.md", "analysis.json", "*.png")


def read_records_of(folders: list, rows: list | None = None, report=None) -> list:
    """The ``leviathan analyze embeddings`` records of every results folder (``<folder>/embeddings/*.json``; a user's
    file there is left out with a note to ``report``); with ``rows``, a record whose row (the run of its name) measured
    another step or token count is a UserError: records made from another sweep's runs (``analyze embeddings --sweep
    OTHER --dest THIS``) were reported as this sweep's, exit 0 (issue 30 round 9, N57/N58). Records made with other
    bucket settings are a UserError too: the section compares them bucket by bucket (round 11, R27)."""
    from ...value_rules import check_callback

    check_callback("read_records_of", "report", report)  # a function of one message (round 31, AA281, AA714)
    by_name = {row.name: row for row in rows or []}
    out, strays = [], []
    for folder in folders:
        for record in read_records(folder, report):
            row = by_name.get(record.run)
            if by_name and row is None:  # round 15 (B265): another grid's records shown as this sweep's runs
                strays.append(record.run)
                continue
            if (problem := record_row_problem(record, row)) is not None:  # a row may not record its steps
                path = records_dir(folder) / f"{record.run}.json"
                raise UserError(f"{str(path)!r} is {problem}: it was made from other weights (another sweep's run, or "
                                f"the run trained on since); remake it: leviathan analyze embeddings --sweep SWEEP "
                                f"--dest {folder} --redo, or delete it")
            out.append(record)
    if strays and report is not None:
        report(f"warning: {len(strays)} embeddings record(s) of runs that have no row here left out "
               f"({', '.join(strays[:3])}{' ...' if len(strays) > 3 else ''}): records of another sweep's runs; "
               f"remake this sweep's with leviathan analyze embeddings --sweep SWEEP, and move the others away")
    settings: dict[tuple, list[str]] = {}
    for record in out:
        settings.setdefault((record.num_buckets, record.bucket_method), []).append(record.run)
    if len(settings) > 1:
        shown = "; ".join(f"{n} {method} buckets: {', '.join(runs[:3])}{' ...' if len(runs) > 3 else ''}"
                          for (n, method), runs in settings.items())
        raise UserError(f"the embeddings records of {' + '.join(map(str, folders))} were made with different bucket "
                        f"settings ({shown}), and the report's section compares them bucket by bucket; remake them "
                        f"alike with the grid's buckets (leviathan analyze embeddings --sweep SWEEP --redo, with "
                        f"--dest RESULTS for a results folder's records), or delete the records made otherwise")
    return out


def _check_presweep_apart(lr_rows, grid_name: str, sweeps: list) -> None:
    """UserError when the ``--lr-sweep`` rows are of the reported grid itself (the sweep given as its own pre-sweep, or
    a copy of it): its runs at their one lr were tabled as a pre-sweep and "picked", exit 0 (issue 30 round 8, D9).
    A pre-sweep is a grid of its own (``G-lr``)."""
    own = sorted({row.name for row in lr_rows if row.grid == grid_name})
    if grid_name and own:
        raise UserError(f"--lr-sweep {' '.join(map(str, sweeps))}: its rows are of grid {grid_name!r}, the grid this "
                        f"report is of ({', '.join(own[:3])}{' ...' if len(own) > 3 else ''}), not of its learning-rate "
                        f"pre-sweep; pass the pre-sweep's folder (the --out of `leviathan sweep --grid {grid_name}-lr` "
                        f"or of --presweep), or leave --lr-sweep out")

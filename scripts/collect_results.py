"""Copy what a sweep folder has finished into the repository, so a later session (or a reader) has it.

    python scripts/collect_results.py runs/ablate-bpe32k runs/ablate-bpe8k --dest results/ablations
    leviathan report results/ablations/ablate-bpe8k results/ablations/ablate-bpe32k --ablation --out results/ablations
    python scripts/collect_results.py --rewrite results     # make committed JSON files portable in place

Run folders (checkpoints) are not committed; ``results.jsonl`` rows carry each run's validation curve,
so the copies regenerate every report. ``grid.json`` is copied with the unigram entropy of the
training tokens added (``unigram_entropy``, from the data folder's train_freq.npy), because the data
folder is not in the repository. Every copied file goes through ``provenance.portable_tree``: no
machine-absolute path reaches the repository. Rows merge: the rows already in ``<dest>/<grid>/results.jsonl`` are
kept, in their order, and the sweep's rows for other runs are added after them (a round whose runs went from
several sweep folders collects each in turn); a run with a row in both must have the same row, or nothing is
written. To continue a sweep on a fresh machine, copy
``results.jsonl`` and ``grid.json`` back into the sweep's ``--out`` folder: the sweep skips every run that has a row
(a ``results.jsonl`` alone is refused: the sweep writes only into its own results file, ``leviathan.ownership``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from leviathan.errors import UserError

# folders whose files are fingerprinted by the verb that wrote them (an export's marker, a step folder's state.json, a
# data folder's meta.json): --rewrite reformatting a tokenizer.json there made them refuse to load (issue 30 round 8)
FINGERPRINTED = ("export", "prepare", "train", "demo")


def _portable_jsonl(text: str) -> str:
    """JSON-lines ``text`` with every path made portable (``provenance.portable_tree``); blank lines dropped."""
    from leviathan.experiments.machinery.provenance import portable_tree
    from leviathan.experiments.machinery.results import dumps

    return "".join(dumps(portable_tree(json.loads(line))) + "\n" for line in text.splitlines() if line.strip())


def _whole_rows(path: Path) -> str:
    """The rows of a sweep's results.jsonl that are whole JSON objects with a name, as JSON-lines text; each other line
    (cut short by a killed sweep, damaged) is named in a ``warning:`` and left out, as the sweep itself leaves it out
    (its run has no row and is trained again). It ended in a JSONDecodeError traceback (issue 30 round 7)."""
    from leviathan.jsonl import bad_line_notes, read_json_lines

    values, bad = read_json_lines(path)
    bad += [(number, "is not a results row (a JSON object with a name)") for number, row in values
            if not (isinstance(row, dict) and isinstance(row.get("name"), str))]
    for note in bad_line_notes(path, sorted(bad), "row", "not copied (its run has no row: the sweep trains it again)"):
        print(note, file=sys.stderr)
    skipped = {number for number, _ in bad}
    return "".join(json.dumps(row) + "\n" for number, row in values if number not in skipped)


def _quiet(_message: str) -> None:
    """Readers' notes while comparing settings: the copy below reads (and reports) every row itself."""


def check_same_settings(sweep: Path, out: Path) -> None:
    """UserError when the results folder ``out`` holds rows of its grid started with other settings than the sweep
    folder's (base overrides, evaluation, data; ``experiments.machinery.shards``' rule for shards, seeds aside: a
    later sweep may add seeds): their rows measure different things. A sweep of the same grid name with another
    learning rate had its rows added beside the others and its grid.json put in place of theirs, and the report of
    the folder compared them, exit 0 (issue 30 round 7)."""
    from leviathan.experiments.machinery.provenance import portable_tree
    from leviathan.experiments.machinery.data_match import same_sweep_data
    from leviathan.experiments.machinery.results import load_results
    from leviathan.experiments.machinery.shards import _difference, _settings
    from leviathan.experiments.machinery.sweep_grid import SweepGrid

    if not (out / "grid.json").is_file() or not (out / "results.jsonl").is_file():
        return
    kept_grid = SweepGrid.from_dict(json.loads((out / "grid.json").read_text()))
    new_grid = SweepGrid.from_dict(portable_tree(json.loads((sweep / "grid.json").read_text())))
    kept, new = _settings(kept_grid), _settings(new_grid)
    differ = [_difference(key, kept[key], new[key], out, sweep) for key in kept
              if key != "seeds" and kept[key] != new[key]]
    if not same_sweep_data(kept_grid, load_results(out / "results.jsonl", _quiet), new_grid,
                           load_results(sweep / "results.jsonl", _quiet)):
        differ.append(_difference("data fingerprint", kept_grid.data_fingerprint, new_grid.data_fingerprint, out, sweep))
    if differ:
        raise UserError(f"{sweep} was started with other settings than the rows in {out} ("
                         + "; ".join(differ[:3]) + "): their rows measure different things; nothing was written; "
                         f"collect it into another --dest, or resweep it with the settings of {out / 'grid.json'}")


def check_destination(dest: Path, out: Path, name: str) -> None:
    """UserError before anything is written when ``out`` (``dest/<grid>``) is not a results folder the script may
    write its results.jsonl and grid.json into: ``dest`` or ``out`` the output of a verb other than report (a data
    folder, an export, a run, a sweep), a results.jsonl whose lines are not rows with a name, a grid.json of another
    grid. A user's grid.json there was written over, and a results.jsonl of notes ended in a traceback (issue 30
    round 8, E3-E6)."""
    from leviathan.jsonl import read_json_lines
    from leviathan.ownership import CONTAINERS, MARKER, check_not_inside, read_marker

    for folder in (dest, out):
        marker = read_marker(folder) if folder.is_dir() else None
        if marker is not None and marker.verb != "report":
            raise UserError(f"--dest {str(folder)!r} is the output of `leviathan {marker.verb}` (its {MARKER} says "
                            f"so), not a results folder; nothing was written; choose another --dest")
    check_not_inside(out, "--dest", ("train", "prepare", "export"), within=CONTAINERS)  # round 9, N113
    results, grid = out / "results.jsonl", out / "grid.json"
    if results.exists():
        values, bad = read_json_lines(results)
        if bad or not all(isinstance(row, dict) and isinstance(row.get("name"), str) for _, row in values):
            raise UserError(f"{str(results)!r} is not a results file (its lines are not results rows with a name); "
                            f"nothing was written; move it out of {str(out)!r}, or choose another --dest")
    if grid.exists():
        try:
            kept = json.loads(grid.read_text())
        except (OSError, ValueError) as e:
            raise UserError(f"{str(grid)!r} is not a grid.json ({e}); nothing was written; move it out of "
                            f"{str(out)!r}, or choose another --dest") from None
        if not isinstance(kept, dict) or kept.get("name") != name:
            found = kept.get("name") if isinstance(kept, dict) else None
            raise UserError(f"{str(grid)!r} is not the grid.json of grid {name!r} (its name: {found!r}); nothing was "
                            f"written; move it out of {str(out)!r}, or choose another --dest")


def merged_rows(kept: str, new: str) -> str:
    """The JSON-lines text ``kept`` followed by the lines of ``new`` whose run (``name``) it lacks. A run in both
    with different rows is a UserError naming it (one run trained twice: decide by hand which row stands)."""
    kept_lines = [line for line in kept.splitlines() if line.strip()]
    rows = {row["name"]: row for row in map(json.loads, kept_lines)}
    added = []
    for line in new.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["name"] in rows and rows[row["name"]] != row:
            raise UserError(f"run {row['name']!r} has a row in the results folder and a different one in the "
                             f"sweep folder (trained twice?); nothing was written; remove one of the two rows by hand")
        if row["name"] not in rows:
            rows[row["name"]] = row
            added.append(line)
    return "".join(line + "\n" for line in [*kept_lines, *added])


def _data_folder(sweep: Path, grid: dict) -> Path | None:
    """The sweep's prepared data folder: ``data_dir`` as grid.json writes it is relative to the folder the sweep ran
    in, which grid.json does not record, so it is looked for from here and from each folder above the sweep's (run
    from another checkout, ``data/...`` of the worktree that trained it was missed and the copy's plateau written
    null over the one already committed). A candidate counts only when ``data_match.grid_plateau``'s rule trusts it
    (its fingerprint is the one grid.json records): ``data/gutenberg-o200k`` of another checkout may hold another
    preparation, whose plateau would be stored as this sweep's."""
    from dataclasses import replace

    from leviathan.experiments.machinery.data_match import trusted_data_folder
    from leviathan.experiments.machinery.sweep_grid import SweepGrid

    data_dir = grid.get("data_dir")
    if not data_dir:
        return None
    bases = [Path("/")] if Path(data_dir).is_absolute() else [Path.cwd(), *sweep.resolve().parents]
    recorded = SweepGrid.from_dict(grid)
    for base in bases:
        folder = base / data_dir
        if (folder / "train_freq.npy").is_file() and trusted_data_folder(replace(recorded, data_dir=str(folder))):
            return folder
    return None


def collect(sweep: Path, dest: Path) -> Path:
    from leviathan.experiments.method.plateau import unigram_entropy
    from leviathan.experiments.machinery.provenance import portable_tree
    from leviathan.io import atomic_write_text

    grid = json.loads((sweep / "grid.json").read_text())
    out = dest / grid["name"]
    check_destination(dest, out, grid["name"])
    out.mkdir(parents=True, exist_ok=True)
    check_same_settings(sweep, out)
    kept = (out / "results.jsonl").read_text() if (out / "results.jsonl").is_file() else ""
    atomic_write_text(out / "results.jsonl", merged_rows(kept, _portable_jsonl(_whole_rows(sweep / "results.jsonl"))))
    if grid.get("unigram_entropy") is None:
        data = _data_folder(sweep, grid)
        kept_grid = json.loads((out / "grid.json").read_text()) if (out / "grid.json").is_file() else {}
        grid["unigram_entropy"] = (unigram_entropy(data) if data else None) or kept_grid.get("unigram_entropy")
    atomic_write_text(out / "grid.json", json.dumps(portable_tree(grid), indent=1) + "\n")
    return out


def _fingerprinted(path: Path, root: Path) -> bool:
    """Whether ``path`` lies in a step folder (``checkpoints/``) or in a folder (at or under ``root``) that a verb of
    ``FINGERPRINTED`` wrote: its bytes are checked against the fingerprints recorded beside it."""
    from leviathan.ownership import read_marker

    if "checkpoints" in path.relative_to(root).parts:
        return True
    for folder in [path.parent, *path.parent.parents]:
        marker = read_marker(folder) if (folder / "leviathan_output.json").is_file() else None
        if marker is not None and marker.verb in FINGERPRINTED:
            return True
        if folder == root:
            return False
    return False


# The JSON files of a results folder that leviathan writes (a sweep, collect_results, report, report --ablation,
# lm-eval) and whose machine paths --rewrite makes portable; embeddings records are recognised by their contents.
REWRITTEN = {"results.jsonl", "grid.json", "analysis.json", "ablations.json", "lm_eval.json"}


def _ours(path: Path) -> bool:
    """Whether ``path`` is a file of a results folder that leviathan wrote: one of ``REWRITTEN`` or an embeddings
    record. Anything else under the folder is a user's (a project's .vscode/settings.json, a downloaded model's
    config.json), and --rewrite turned its absolute paths relative without a word (issue 30 round 11, R115, R119)."""
    from leviathan.experiments.machinery.embedding_files import _looks_like_record

    return path.name in REWRITTEN or (path.suffix == ".json" and _looks_like_record(path))


def rewrite(folder: Path) -> list[Path]:
    """Make the JSON files leviathan wrote under ``folder`` (``_ours``) portable in place; returns the files changed.
    A changed file is replaced atomically (``io.atomic_write_text``: a temporary file beside it, fsync,
    ``os.replace``)."""
    from leviathan.experiments.machinery.provenance import portable_tree
    from leviathan.io import atomic_write_text

    changed = []
    for path in sorted(folder.rglob("*.json*")):
        if not path.is_file() or _fingerprinted(path, folder) or not _ours(path):
            continue
        text = path.read_text()
        if path.suffix == ".jsonl":
            new = _portable_jsonl(text)
        elif path.suffix == ".json":
            second = text.splitlines()[1] if text.count("\n") > 1 else ""
            indent = len(second) - len(second.lstrip(" ")) or None  # keep the file's own layout
            new = json.dumps(portable_tree(json.loads(text)), indent=indent) + "\n"
        else:
            continue
        if new != text:
            atomic_write_text(path, new)
            changed.append(path)
    return changed


def main(argv=None) -> int:
    """The script's exit status: a refusal or a storage failure is one line ``error: ...``, status 2."""
    from leviathan.cli import one_line_errors

    return one_line_errors(lambda: _main(argv))


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweeps", nargs="*", type=Path, help="sweep --out folders")
    parser.add_argument("--dest", type=Path, help="results folder in the repository")
    parser.add_argument("--rewrite", type=Path, default=None, help="make the JSON files under this folder portable")
    args = parser.parse_args(argv)
    if args.rewrite:
        for path in rewrite(args.rewrite):
            print(f"rewrote {path}")
    if args.sweeps and not args.dest:
        parser.error("--dest is required with sweep folders")
    for sweep in args.sweeps:
        if not (sweep / "results.jsonl").is_file():
            print(f"{sweep}: no results.jsonl yet, skipped", file=sys.stderr)
            continue
        rows = sum(1 for line in (sweep / "results.jsonl").read_text().splitlines() if line.strip())
        print(f"{sweep} -> {collect(sweep, args.dest)} ({rows} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

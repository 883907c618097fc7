"""Copy what a sweep folder has finished into the repository, so a later session (or a reader) has it.

    python scripts/collect_results.py runs/ablate-bpe32k runs/ablate-bpe8k --dest results/ablations
    leviathan report results/ablations/ablate-bpe8k results/ablations/ablate-bpe32k --ablation --out results/ablations

Run folders (checkpoints) are not committed; ``results.jsonl`` rows carry each run's validation curve,
so the copies regenerate every report. ``grid.json`` is copied with the unigram entropy of the
training tokens added (``unigram_entropy``, from the data folder's train_freq.npy), because the data
folder is not in the repository. To continue a sweep on a fresh machine, copy ``results.jsonl`` back
into the sweep's ``--out`` folder: the sweep skips every run that has a row.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path


def collect(sweep: Path, dest: Path) -> Path:
    from leviathan.experiments.ablation import unigram_entropy

    grid = json.loads((sweep / "grid.json").read_text())
    out = dest / grid["name"]
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sweep / "results.jsonl", out / "results.jsonl")
    if grid.get("unigram_entropy") is None and grid.get("data_dir"):
        grid["unigram_entropy"] = unigram_entropy(grid["data_dir"])
    (out / "grid.json").write_text(json.dumps(grid, indent=1) + "\n")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweeps", nargs="+", type=Path, help="sweep --out folders")
    parser.add_argument("--dest", type=Path, required=True, help="results folder in the repository")
    args = parser.parse_args(argv)
    for sweep in args.sweeps:
        if not (sweep / "results.jsonl").is_file():
            print(f"{sweep}: no results.jsonl yet, skipped", file=sys.stderr)
            continue
        rows = sum(1 for line in (sweep / "results.jsonl").read_text().splitlines() if line.strip())
        print(f"{sweep} -> {collect(sweep, args.dest)} ({rows} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

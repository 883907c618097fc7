"""Does a results row's data hold the same tokens as the data folder a sweep resumes with? The rule across the
fingerprint versions of ``data.fingerprint``.

    match = match_data(row.data_provenance, data_provenance(grid.data_dir))
    match.how, match.differences       # "fingerprint" | "summary" | "unchecked", ("data ...: X in the row, Y now",)

A version-2 fingerprint names the tokens and nothing else; a version-1 one (no ``fingerprint_version``) also hashed
the raw text's paths, so two of them differ for the same text prepared at two places. The rule:

1. Both record a fingerprint above version 1: the newest version they share must be equal, else refused.
2. Otherwise, both record an equal version-1 fingerprint (a version-2 folder keeps its own as
   ``legacy_fingerprint``): the same data, prepared at the same place.
3. Otherwise the row is matched on its tokenizer, vocabulary size and train and validation token counts
   (``SUMMARY_FIELDS``), which must all be recorded and equal; the sweep names the rows matched this way. Only an
   edit of the text that keeps both counts to the token would pass, the price of resuming sweeps whose data was
   prepared elsewhere before version 2 (refusing them would strand every committed row on every other machine).
4. A row or folder with no fingerprint at all is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...data.fingerprint import LEGACY_VERSION
from ..method.plateau import unigram_entropy
from .provenance import DataProvenance, data_provenance
from .results import ResultRow
from .sweep_grid import SweepGrid

FINGERPRINT, SUMMARY, UNCHECKED = "fingerprint", "summary", "unchecked"
SUMMARY_FIELDS = ("tokenizer", "vocab_size", "train_tokens", "val_tokens")


@dataclass(frozen=True)
class DataMatch:
    """How a row's data was compared with the folder's (``FINGERPRINT``, ``SUMMARY`` or ``UNCHECKED``) and what
    differs (``key: VALUE in the row, VALUE now``; empty: the same data)."""

    how: str
    differences: tuple[str, ...] = ()


def match_data(recorded: DataProvenance, now: DataProvenance) -> DataMatch:
    """Compare the data a row records with the data folder's now, by the rule of the module docstring."""
    mine, theirs = recorded.fingerprints(), now.fingerprints()
    if not mine or not theirs:
        return DataMatch(UNCHECKED)
    shared = sorted((set(mine) & set(theirs)) - {LEGACY_VERSION})
    if shared:
        version = shared[-1]
        a, b = mine[version], theirs[version]
        return DataMatch(FINGERPRINT, () if a == b else (
            f"data fingerprint: {a[:12]}... in the row, {b[:12]}... now (version {version})",))
    if mine.get(LEGACY_VERSION) is not None and mine.get(LEGACY_VERSION) == theirs.get(LEGACY_VERSION):
        return DataMatch(FINGERPRINT)
    differ = [f"{key} {getattr(recorded, key)!r} in the row, {getattr(now, key)!r} now" for key in SUMMARY_FIELDS
              if getattr(recorded, key) is None or getattr(recorded, key) != getattr(now, key)]
    return DataMatch(SUMMARY, (f"data (a version-1 fingerprint, which hashed the text's path, so compared on "
                               f"{', '.join(SUMMARY_FIELDS)}): {', '.join(differ)}",) if differ else ())


def grid_data(grid: SweepGrid) -> DataProvenance:
    """The fingerprints a grid.json records, as a ``DataProvenance`` (no token counts: a grid.json has none)."""
    return DataProvenance(fingerprint=grid.data_fingerprint, fingerprint_version=grid.data_fingerprint_version,
                          legacy_fingerprint=grid.data_legacy_fingerprint)


def same_sweep_data(a: SweepGrid, a_rows: list[ResultRow], b: SweepGrid, b_rows: list[ResultRow]) -> bool:
    """Do two folders of one grid (shards, or a sweep and its copy under results/) hold rows of the same data? Their
    grid.json fingerprints are compared by the rule above; where they cannot say (a grid.json written before it
    recorded versions, beside one written after), the rows are, since they record every fingerprint and the token
    counts: a row of ``b`` against every row of ``a`` (where ``a`` holds a version-2 row, its fingerprint decides,
    not only the counts). Fingerprints of two versions are not two data sets: the o200k rows of version 1 and a sweep
    resumed on the same folder prepared again by version 2 are one data set (issue 29's fingerprint change)."""
    if a.data_fingerprint == b.data_fingerprint:
        return True
    match = match_data(grid_data(a), grid_data(b))
    if match.how == FINGERPRINT:
        return not match.differences
    mine = [row.data for row in a_rows if row.data is not None]
    theirs = next((row.data for row in b_rows if row.data is not None), None)
    if not mine or theirs is None:
        return False
    matches = [match_data(x, theirs) for x in mine]  # every row of a (one data set), so a version-2 row decides
    return all(m.how != UNCHECKED and not m.differences for m in matches)


def grid_plateau(grid: SweepGrid) -> float | None:
    """The unigram plateau of a sweep's grid.json: from its data folder when that is provably the sweep's data, else
    the ``unigram_entropy`` grid.json holds (scripts/collect_results.py stores it in a copy of the sweep).

    Footgun: grid.json's ``data_dir`` is relative to the folder the sweep ran in, so read from another folder it
    names whatever lies at that path there (a report of committed results run from a checkout whose
    ``data/gutenberg-o200k`` holds another preparation). The folder counts only when its fingerprint is the one
    grid.json records; a grid.json that records none falls back to the folder only when it stores no value."""
    if not grid.data_dir:
        return grid.unigram_entropy
    folder = Path(grid.data_dir)  # unigram_entropy refuses a folder with neither file (AI202, AI203)
    prepared = (folder / "meta.json").is_file() or (folder / "train_freq.npy").is_file()
    plateau = unigram_entropy(grid.data_dir) if prepared and trusted_data_folder(grid) else None
    return grid.unigram_entropy if plateau is None else plateau


def trusted_data_folder(grid: SweepGrid) -> bool:
    """Is ``grid.data_dir`` (resolved by the caller) provably the sweep's data: its fingerprint is the one grid.json
    records, or grid.json records none and stores no plateau of its own (nothing better to fall back on)?"""
    match = match_data(grid_data(grid), data_provenance(grid.data_dir))
    return (not match.differences) if match.how == FINGERPRINT else grid.unigram_entropy is None

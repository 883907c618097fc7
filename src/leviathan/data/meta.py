"""A prepared data folder's meta.json as one type, read in one place.

    meta = read_meta("data/stdlib")      # PreparedMeta, every field typed and checked; UserError naming the fix
    meta.vocab_size, meta.splits["val"].tokens, meta.tokens("train")
    find_meta("runs/x")                  # None where the folder holds no meta.json (a checkpoint, an export)

``data.prepare`` is the one writer (the dict it returns is what it wrote); everything reads meta.json through
``read_meta``: prepare's check of an existing --out, the loader, the companions' digests, the tokenizer check, the
run config's vocabulary, the grid's vocabulary, the provenance of a results row, the verbs. The checks (issue 30) are
the loader's of before: format 1, the required keys, dtype, every number an integer in range, split file names inside
the folder, ``files`` a mapping of names to digests. Footgun: ``raw`` keeps the whole JSON object for the fields no
reader types (source_stats, val_assignment, timing, ...); read a field through an attribute, never through ``raw``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError, dead_link, missing, not_a_file, not_a_folder
from .fingerprint_fields import recorded_problem
from .meta_digest import edited_field
from .. import json_text

META_FILE = "meta.json"
FORMAT = 1
_REQUIRED = ("tokenizer", "vocab_size", "dtype", "eot_id", "splits")
# A split's text bytes per token of text, at most: o200k's longest token is 128 bytes; an average past this is no
# tokenization of text but a damaged or edited count (round 11, S201)
MAX_BYTES_PER_TOKEN = 1000


@dataclass(frozen=True)
class SplitInfo:
    """One split of meta.json: its token file and what prepare counted (None where an old file does not say)."""

    file: str
    tokens: int | None = None
    documents: int | None = None
    bytes: int | None = None


@dataclass(frozen=True)
class PreparedMeta:
    """meta.json of a prepared data folder (written by ``data.prepare._meta``)."""

    tokenizer: str
    vocab_size: int
    dtype: str  # "uint16" | "uint32"
    eot_id: int
    splits: dict[str, SplitInfo]
    files: dict[str, str] | None = None  # {file: digest}; None: prepared before digests were recorded
    source: str | None = None
    fingerprint: str | None = None
    fingerprint_version: int | None = None  # None: written before versions (version 1)
    legacy_fingerprint: str | None = None
    settings: dict | None = None  # what prepare was asked for (its up-to-date check)
    source_stat: str | None = None  # the sources' names, sizes and mtimes, hashed (its up-to-date check)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def tokens(self, split: str) -> int | None:
        """The tokens of a split (None where meta.json does not say or has no such split)."""
        info = self.splits.get(split)
        return info.tokens if info is not None else None


NO_META = f"is not a prepared data folder (no {META_FILE})"


def data_folder_problem(path: str | os.PathLike,
                        fix: str = "create it with `leviathan prepare` or point data.path at one") -> str:
    """Why ``path``, given as a prepared data folder, holds no meta.json, and the fix: ``not_prepared`` for a path
    that exists, else why it cannot be found (``errors.missing``: a name too long, a file above it, a dead link) and
    ``fix``. Round 33 (AD36, AD37): a 300-byte data.path got the output's line "the file name is too long ...; choose
    a shorter name (--run-dir)" (pathlib's ``exists`` raised ENAMETOOLONG; eval --data the same), and one under a
    file "has no meta.json; prepare the data first", where the same path with model.vocab_size set was named by
    ``missing``. One rule for the config reader, train and eval."""
    if os.path.exists(path) and dead_link(path) is None:  # os.path: Path.exists raised ENAMETOOLONG (AD36)
        return not_prepared(path)
    return f"{missing(path)}; {fix}"


def not_prepared(path: str | os.PathLike) -> str:
    """Why an existing ``path`` given as a prepared data folder is not one, and the fix, as ``problem; fix``, with the
    way on when it is another verb's output: a run folder as ``data.path`` was "has no meta.json; prepare the data
    first", and the data folder's meta.json given as ``--data`` "is not a prepared data folder (no meta.json)" (issue 30
    round 10, Q141, Q157); a text file as ``data.path`` said no fix, and eval's fix "pass --data or --text" named the
    option the user had passed (round 14, A70, A71, A167). Starts with ``NO_META`` for a plain folder."""
    p = Path(path)
    prepare = _prepare_fix(p)
    if not p.is_file() and (special := not_a_folder(p)) is not None:  # a pipe was "no meta.json" (round 28, T48)
        return (f"{special}; pass a folder `leviathan prepare` wrote, or a new folder for `leviathan prepare SOURCE "
                f"--out NEW_DIR` to make one")
    if p.is_file():
        if p.name == META_FILE or (p.parent / META_FILE).is_file():  # a shard was to be "prepared" as text (K186)
            return f"is a file, not a folder; pass its folder ({str(p.parent)!r}), which `leviathan prepare` wrote"
        return (f"is a file, not a folder; pass a folder `leviathan prepare` wrote (`leviathan prepare {p} --out DIR` "
                f"makes one of a text file)")
    if (p / "checkpoints").is_dir() or (p / "metrics.jsonl").is_file():
        return ("is a run folder (checkpoints/, as `leviathan train` writes), not prepared data; pass the data folder "
                "it trained on (data.path in its config.yaml), or prepare one into a new folder (`leviathan prepare "
                "SOURCE --out NEW_DIR`)")
    if (p / "results.jsonl").is_file() or (p / "grid.json").is_file():
        return ("is a sweep folder (results.jsonl, grid.json), not prepared data; pass the data folder of its grid "
                "(data_dir in grid.json)")
    if (p / "config.json").is_file():
        return "is a Hugging Face folder (config.json), not prepared data; pass a folder `leviathan prepare` wrote"
    if (what := not_a_file(p / META_FILE)) is not None:  # a link to nothing was "no meta.json" (round 18, G411)
        return (f"has a {META_FILE} that cannot be read: {str(p / META_FILE)!r} {what}; restore it from a copy, or "
                f"{prepare}")
    return f"{NO_META}; {prepare}"


def _prepare_fix(p: Path) -> str:
    """How to get a prepared data folder for ``p``, which is none: a folder that holds files (a corpus) is prepared
    into a NEW folder (the fix said `prepare SOURCE --out CORPUS`, which prepare refuses: its output must be apart
    from its input, issue 30 round 20, K187); a missing or empty folder may be prepare's output itself."""
    try:
        holds = p.is_dir() and any(os.scandir(p))
    except OSError:
        holds = False
    if holds:
        return (f"if it holds the text to train on, prepare it into a new folder (`leviathan prepare {p} --out "
                f"NEW_DIR`) and pass that, or pass a folder `leviathan prepare` wrote")
    return f"prepare it with `leviathan prepare SOURCE --out {p}`, or pass a folder `leviathan prepare` wrote"


def find_meta(data_dir: str | os.PathLike, fix: str | None = None) -> PreparedMeta | None:
    """``read_meta`` of a folder that holds a meta.json, None for one that holds none."""
    meta = Path(data_dir) / META_FILE  # os.path: a 300-byte name raised ENAMETOOLONG (round 18, G238's kind); a
    # meta.json linked to nothing is named by read_meta, not taken for a folder without one (G411)
    return read_meta(data_dir, fix) if os.path.isfile(meta) or not_a_file(meta) is not None else None


DATA_DIR_FIX = "pass the path of a prepared data folder (leviathan prepare's --out)"  # the readers' (round 20)


def read_meta(data_dir: str | os.PathLike, fix: str | None = None) -> PreparedMeta:
    """Read and check ``meta.json`` of a prepared data dir (UserError ending in ``fix``, default: how to prepare it)."""
    from ..value_rules import check_read_path

    check_read_path("read_meta", "data_dir", data_dir, DATA_DIR_FIX)  # M333, M334 (round 20)
    d = Path(data_dir)
    given_fix, fix = fix, fix or f"run `leviathan prepare SOURCE --out {d}` to create it"
    if not_a_folder(d) is not None:  # a corpus file was "does not exist; run prepare --out FILE" (issue 30 round 24,
        raise UserError(f"data dir {d} {not_prepared(d)}")  # W382); a pipe "...; run prepare --out PIPE" (round 28)
    if not os.path.isdir(d):
        raise UserError(f"data dir {d} {missing(d)}; {fix}")
    p = d / META_FILE
    if (what := not_a_file(p)) is not None:  # a link to nothing, a folder was "no meta.json" (round 18 G411, 19 J51)
        raise UserError(f"{str(p)!r} {what}; restore it from a copy, or {fix}")
    if not p.is_file():
        other = not_prepared(d)  # another verb's folder: preparing into it was the fix given (round 19, J267)
        raise UserError(f"{d} {other}" if not other.startswith(NO_META) or given_fix is None else
                        f"{d} is not a prepared data dir (no meta.json); {fix}")  # a user's texts: not_prepared's
        # fix prepares them into a NEW folder; the default one, `prepare SOURCE --out {d}`, is refused (round 25, X30)
    try:
        raw = json_text.read_file(p, object_pairs_hook=json_text.no_repeats)
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{p} is not valid JSON ({e}); the data dir is damaged; {fix}") from None
    shown = raw.get("format") if isinstance(raw, dict) else "?"
    if not isinstance(raw, dict) or isinstance(shown, bool) or shown != FORMAT:  # round 8: "format 1, expected 1"
        raise UserError(f"{p} is not a leviathan data dir meta.json (format {shown!r}, expected {FORMAT}); {fix}")
    lacking = [k for k in _REQUIRED if k not in raw]  # not `missing`: that name is the function above's message
    if lacking:
        raise UserError(f"{p} lacks {', '.join(lacking)}; it was not written by leviathan prepare; {fix}")
    if raw["dtype"] not in ("uint16", "uint32"):
        raise UserError(f"{p}: dtype {raw['dtype']!r} is not uint16 or uint32; {fix}")
    _Checker(p, fix).fields(raw)
    edited = edited_field(raw)  # round 14 (A25, A26): a count edited within its range changed bits per byte
    if edited is not None:
        field_name, problem = edited
        raise UserError(f"{p}: field {field_name!r} {problem}: meta.json was edited after prepare wrote it, and "
                        f"its readers trust every field (a split's bytes set eval's bits per byte); prepare the data "
                        f"again (leviathan prepare SOURCE --out {d} --overwrite)")
    if raw["dtype"] == "uint16" and int(raw["vocab_size"]) > 65536:
        raise UserError(f"{p}: vocab_size {raw['vocab_size']} does not fit uint16 ids; {fix}")
    return PreparedMeta(tokenizer=raw["tokenizer"], vocab_size=raw["vocab_size"], dtype=raw["dtype"],
                        eot_id=raw["eot_id"], splits={name: _split(name, info) for name, info in raw["splits"].items()},
                        files=raw.get("files"), source=raw.get("source"), fingerprint=raw.get("fingerprint"),
                        fingerprint_version=raw.get("fingerprint_version"),
                        legacy_fingerprint=raw.get("legacy_fingerprint"), settings=raw.get("settings"),
                        source_stat=raw.get("source_stat"), raw=raw)


def _split(name: str, info: dict) -> SplitInfo:
    return SplitInfo(file=info.get("file", f"{name}.bin"), tokens=info.get("tokens"),
                     documents=info.get("documents"), bytes=info.get("bytes"))


@dataclass(frozen=True)
class _Checker:
    """Every number meta.json holds typed and in range (issue 30): a hand-edited or damaged value is one error naming
    the field, not a model of the wrong size or a traceback later."""

    path: Path
    fix: str

    def whole(self, value: Any, name: str, low: int, high: int | None = None) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            rng = f">= {low}" if high is None else f"in [{low}, {high}]"
            self.bad(f"field {name!r} is {value!r}, expected an integer {rng}")

    def counts(self, name: str, info: dict) -> None:
        """A split's numbers agree with each other (issue 30 round 5: a hand-edited ``bytes`` of 7 for 3,316 tokens
        gave bits per byte of 2,905, exit 0). Every document ends with one end-of-text token, so tokens >= documents;
        every other token covers at least one byte of text, or is at most one word-start marker per word
        (SentencePiece's dummy prefix), so the text's tokens are at most twice its UTF-8 bytes."""
        tokens, documents, size = info.get("tokens"), info.get("documents"), info.get("bytes")
        if tokens is not None and documents is not None and documents > tokens:
            self.bad(f"field 'splits.{name}.documents' is {documents:,}, more than the split's {tokens:,} tokens "
                     f"(every document ends with an end-of-text token)")
        if tokens and documents == 0:  # round 10 (Q11): 0 documents of 8,666 tokens was read as it was
            self.bad(f"field 'splits.{name}.documents' is 0, but the split holds {tokens:,} tokens, and tokens come "
                     f"in documents (each ends with an end-of-text token)")
        if tokens is not None and size is not None:
            text_tokens = tokens - (documents or 0)
            if text_tokens > 2 * size:
                self.bad(f"field 'splits.{name}.bytes' is {size:,}, too few for the split's {text_tokens:,} tokens "
                         f"of text (a token covers at least one byte, or half of one with a word-start marker)")
            if size > MAX_BYTES_PER_TOKEN * max(text_tokens, 1):  # round 11 (S201): 10^15 bytes gave "bpb 0.0000"
                self.bad(f"field 'splits.{name}.bytes' is {size:,}, too many for the split's {text_tokens:,} tokens "
                         f"of text (more than {MAX_BYTES_PER_TOKEN:,} bytes per token; no tokenizer's tokens are "
                         f"that long)")

    def bad(self, problem: str) -> None:
        raise UserError(f"{self.path}: {problem}; meta.json was damaged or edited by hand; {self.fix}")

    def fields(self, meta: dict) -> None:
        if not isinstance(meta["tokenizer"], str) or not meta["tokenizer"]:
            self.bad(f"field 'tokenizer' is {meta['tokenizer']!r}, expected a tokenizer name")
        self.whole(meta["vocab_size"], "vocab_size", 1)
        self.whole(meta["eot_id"], "eot_id", 0, meta["vocab_size"] - 1)
        splits = meta["splits"]
        if not isinstance(splits, dict) or not splits:
            self.bad(f"field 'splits' is {splits!r}, expected an object of splits (train, val)")
        for name, info in splits.items():
            if not isinstance(info, dict):
                self.bad(f"field 'splits.{name}' is {info!r}, expected an object")
            file = info.get("file", f"{name}.bin")
            if not isinstance(file, str) or not file or "/" in file or file in (".", ".."):
                self.bad(f"field 'splits.{name}.file' is {file!r}, expected a file name in the data folder")
            for key in ("tokens", "documents", "bytes"):
                if key in info and info[key] is not None:
                    self.whole(info[key], f"splits.{name}.{key}", 0)
            self.counts(name, info)
        files_of = {}
        for name, info in splits.items():  # two splits reading one file would train on the validation text
            file = info.get("file", f"{name}.bin")
            if file in files_of:
                self.bad(f"fields 'splits.{files_of[file]}.file' and 'splits.{name}.file' both name {file!r}; "
                         f"each split has its own token file")
            files_of[file] = name
        problem = recorded_problem(meta.get("fingerprint"), meta.get("fingerprint_version"),
                                   meta.get("legacy_fingerprint"))
        if problem is not None:
            self.bad(problem)
        files = meta.get("files")
        if files is not None and not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                                      for k, v in files.items())):
            self.bad("field 'files' is not an object of file name -> digest")

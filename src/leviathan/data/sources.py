"""Document sources: everything ``leviathan prepare`` can read, each yielding documents (str).

    open_source("stdlib")                          # the Python standard library's .py files (default corpus)
    open_source("books/")                          # a folder, recursive: text files one document each,
                                                   #   plus any .jsonl / .jsonl.zst / .parquet inside
    open_source("data/*.txt")                      # a glob (``**`` recurses)
    open_source("pile/00.jsonl.zst")               # JSON lines with a "text" field, plain or zstd (the Pile)
    open_source("shard.parquet", text_field="content")
    open_source("hf:wikitext:wikitext-2-raw-v1@train")   # Hugging Face datasets, streaming (needs network)
    open_source(["a.txt", "b/"])                   # several, concatenated in order

A source is re-iterable (each ``iter()`` reads it again, in sorted path order) and knows ``description`` (recorded
in meta.json), ``stat_fingerprint()`` (sha256 over file names, sizes and mtimes: whether a data dir is up to date)
and ``total_bytes()`` (for the progress bar); ``stats`` counts what the last iteration read and skipped. Text is
decoded as UTF-8 (a leading BOM dropped); invalid bytes become U+FFFD and are counted (``stats.decode_errors``), or
with ``strict=True`` the first one raises ``UserError`` naming the file and byte offset. Empty documents are skipped
and counted.

The ``stdlib`` corpus: every ``.py`` file under ``sysconfig.get_paths()["stdlib"]``, except test folders,
``site-packages``/``dist-packages`` and caches, sorted; about 12 MB / 730 files on CPython 3.11, no download, but it
differs between Python versions (which the fingerprint in meta.json records).
"""

from __future__ import annotations

import codecs
import glob as _glob
import hashlib
import io
import json
import os
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ..empty_paths import refuse_file_typed_as_folder
from ..errors import UserError, dead_link, missing, not_regular
from .. import json_text

__all__ = [
    "Source",
    "SourceStats",
    "TextFiles",
    "JsonLines",
    "Parquet",
    "HFDataset",
    "Stdlib",
    "Concat",
    "Limit",
    "open_source",
    "stdlib_files",
    "DEFAULT_TEXT_EXTENSIONS",
]

#: Files a folder source reads as one document each.
DEFAULT_TEXT_EXTENSIONS = (
    ".txt", ".text", ".md", ".markdown", ".rst", ".tex", ".org", ".html", ".htm", ".xml",
    ".py", ".pyi", ".c", ".h", ".cc", ".cpp", ".hpp", ".rs", ".go", ".java", ".js", ".ts",
    ".sh", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".css", ".csv", ".tsv",
)
JSONL_SUFFIXES = (".jsonl", ".jsonl.zst", ".json.zst", ".ndjson", ".ndjson.zst", ".jsonl.zstd")
PARQUET_SUFFIXES = (".parquet",)
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", "node_modules", ".ipynb_checkpoints"}
_STDLIB_SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}


@dataclass
class SourceStats:
    """What the last iteration read (reset at the start of each ``iter()``)."""

    documents: int = 0
    bytes: int = 0
    decode_errors: int = 0
    files_with_decode_errors: list[str] = field(default_factory=list)
    skipped_empty: int = 0
    skipped_records: int = 0  # JSON lines that did not parse (non-strict) or null texts
    skipped_files: int = 0  # files in folders with an extension no reader handles
    skipped_file_names: list[str] = field(default_factory=list)  # the first of them, named (round 26, P61)
    skipped_links: list[str] = field(default_factory=list)  # links to a folder read already (round 26, P60)
    skipped_file_links: list[str] = field(default_factory=list)  # names of a file read already (round 27, R84)
    unparsed_records: int = 0  # of skipped_records, the lines that were not JSON (not in meta.json: ``as_dict``)
    first_unparsed: str | None = None  # the first of them: "FILE line N: not valid JSON (why)" (round 30, X48)

    def merge(self, other: "SourceStats") -> None:
        for k in ("documents", "bytes", "decode_errors", "skipped_empty", "skipped_records", "skipped_files",
                  "unparsed_records"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.first_unparsed = self.first_unparsed or other.first_unparsed
        self.files_with_decode_errors.extend(other.files_with_decode_errors)
        self.skipped_file_names.extend(other.skipped_file_names[:100 - len(self.skipped_file_names)])
        self.skipped_links.extend(other.skipped_links[:100 - len(self.skipped_links)])
        self.skipped_file_links.extend(other.skipped_file_links[:100 - len(self.skipped_file_links)])

    def unparsed_note(self) -> str | None:
        """Why a source read no document when lines were skipped as not JSON: "its 2 line(s) that hold anything
        were skipped as not valid JSON (the first: FILE line 1: ...)"; None when none was. A .jsonl whose every line
        is not JSON (or nested past reading) was "cannot train a BPE on an empty corpus; give it some text" or
        "holds no text; check the path, --text-field or the file extensions" (issue 30 round 30, X48)."""
        if not self.unparsed_records:
            return None
        return (f"{self.unparsed_records:,} of its line(s) were skipped as not valid JSON (the first, "
                f"{self.first_unparsed}), so no document was read; write one JSON object per line (--strict stops at "
                f"the first bad line)")

    def unparsed_aside(self) -> str:
        """" (and N line(s) skipped as not valid JSON, the first FILE line N: WHY)" when some were, for a line about
        the documents that were read: a .jsonl whose second line was cut short was "a single document", the line
        dropped not named (issue 30 round 31, Z37); "" when none was."""
        if not self.unparsed_records:
            return ""
        return (f" (and {self.unparsed_records:,} line(s) skipped as not valid JSON, the first "
                f"{self.first_unparsed})")

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        for key in ("unparsed_records", "first_unparsed"):  # meta.json's source_stats as before (X48 needs them only
            d.pop(key)  # for its line)
        for key in ("files_with_decode_errors", "skipped_file_names", "skipped_links", "skipped_file_links"):
            d[key] = list(getattr(self, key)[:20])
        return d


# --------------------------------------------------------------------------------------------
# decoding with counted errors

_ERRORS = [0]
# A document whose invalid UTF-8 sequences pass both (issue 30: random bytes taken as text) is not text at all:
# refused. Text in another encoding with a few accented letters (latin-1: a few percent of bytes) is replaced and
# counted, as before.
NOT_TEXT_ERRORS = 16
NOT_TEXT_SHARE = 0.05


def _count_and_replace(exc: UnicodeDecodeError):
    _ERRORS[0] += 1
    return "\ufffd", exc.end


codecs.register_error("leviathan.count", _count_and_replace)


def utf8_size(text: str, where: str) -> int:
    """The UTF-8 size of ``text``, or a UserError naming ``where`` and the character when it holds a lone surrogate
    (U+D800-U+DFFF, half of a UTF-16 pair), which no UTF-8 can hold: JSON writes one as the escape ``\\ud800``, valid
    JSON that decodes to a str Python cannot encode, and prepare ended in a raw UnicodeEncodeError (issue 30 round 29,
    W745). Decoded bytes never hold one (``decode_utf8`` replaces invalid UTF-8), so only JSON text, and values
    handed over as str (parquet, Hugging Face datasets), can."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise UserError(f"{where}: the text holds \\u{ord(text[e.start]):04x} at character {e.start:,}, a lone "
                        f"surrogate (half of a UTF-16 pair, in JSON that escape alone) that is not valid Unicode "
                        f"text; write the whole character (or both escapes of its pair), or remove it") from None


def decode_utf8(data: bytes, where: str, strict: bool, stats: SourceStats, base_offset: int = 0,
                offset_kind: str = "byte offset") -> str:
    """UTF-8 -> str; counts replaced sequences in ``stats`` or raises UserError when ``strict``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if strict:
            raise UserError(
                f"{where}: invalid UTF-8 at {offset_kind} {base_offset + e.start} ({e.reason}); convert the "
                f"file to UTF-8 (e.g. iconv -f latin1 -t utf-8) or drop --strict to replace bad bytes "
                f"with U+FFFD (they are counted and reported)") from None
        before = _ERRORS[0]
        text = data.decode("utf-8", errors="leviathan.count")
        errors = _ERRORS[0] - before
        if errors >= NOT_TEXT_ERRORS and errors > NOT_TEXT_SHARE * len(data):
            raise UserError(f"{where} is not UTF-8 text: {errors:,} of its {len(data):,} bytes do not decode "
                            f"({errors / len(data):.0%}), so it is binary data or text in another encoding; convert "
                            f"it to UTF-8 (e.g. iconv -f latin1 -t utf-8) or remove it")
        stats.decode_errors += errors
        if len(stats.files_with_decode_errors) < 100 and where not in stats.files_with_decode_errors:
            stats.files_with_decode_errors.append(where)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


# --------------------------------------------------------------------------------------------
# sources


class Source:
    """A re-iterable stream of documents. Subclasses implement ``_documents()``."""

    description: str = "?"

    def __init__(self) -> None:
        self.stats = SourceStats()
        self.walked = SourceStats()  # what a folder walk passed over (``_folder_files``), counted in every iteration

    def __iter__(self) -> Iterator[str]:
        self.stats = SourceStats()
        self.stats.merge(self.walked)
        for doc in self._documents():
            if not doc or doc.isspace():
                self.stats.skipped_empty += 1
                continue
            self.stats.documents += 1
            yield doc

    def _documents(self) -> Iterator[str]:
        raise NotImplementedError

    def stat_fingerprint(self) -> str:
        """sha256 over what identifies the input cheaply (file names, sizes, mtimes). A name that is not UTF-8 counts
        as its bytes (a UnicodeEncodeError traceback before: issue 30 round 18, G418)."""
        h = hashlib.sha256(self.description.encode("utf-8", "surrogateescape"))
        for item in self._stat_items():
            h.update(repr(item).encode())
        return h.hexdigest()

    def _stat_items(self) -> Iterable:
        return ()

    def total_bytes(self) -> int | None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"


def _file_stat(path: Path) -> tuple:
    st = path.stat()
    return (str(path), st.st_size, st.st_mtime_ns)


class _FileSource(Source):
    def __init__(self, paths: Sequence[str | os.PathLike], strict: bool = False, description: str | None = None):
        super().__init__()
        self.paths = [Path(p) for p in paths]
        self.strict = strict
        if not self.paths:
            raise UserError(f"{description or type(self).__name__}: no input files; check the path")
        self.description = description or (str(self.paths[0]) if len(self.paths) == 1 else
                                            f"{len(self.paths)} files from {self.paths[0].parent}")

    def _stat_items(self):
        return (_file_stat(p) for p in self.paths)

    def total_bytes(self) -> int | None:
        return sum(p.stat().st_size for p in self.paths)

    def _read(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise UserError(f"{path} disappeared while reading; re-run when the corpus is complete") from None
        except OSError as e:
            raise UserError(f"cannot read {path}: {e}; check permissions") from None


class TextFiles(_FileSource):
    """Each file is one document."""

    def _documents(self):
        from .binary import binary_kind, not_text_fix

        for path in self.paths:
            data = self._read(path)
            kind = binary_kind(data)
            if kind is not None:  # tokenized as text it would be replacement characters and noise
                raise UserError(f"{path} is not text: it looks like {kind}; {not_text_fix(kind)}")
            self.stats.bytes += len(data)
            yield decode_utf8(data, str(path), self.strict, self.stats)


class _Record(dict):
    """A JSON object of a source line, with ``repeated``: the keys given more than once in it (json keeps the last
    value without a word). Only the text field's repeat is refused (``JsonLines``): it is the one field prepare
    reads, and a user's file may repeat a field prepare never looks at."""

    repeated: frozenset = frozenset()

    @classmethod
    def of(cls, pairs: list) -> "_Record":
        record = cls(pairs)
        if len(record) < len(pairs):
            seen: set = set()
            record.repeated = frozenset(key for key, _ in pairs if key in seen or seen.add(key))
        return record


class JsonLines(_FileSource):
    """JSON lines, one document per line in field ``text_field``; ``.zst`` files stream-decompressed."""

    def __init__(self, paths, text_field: str = "text", strict: bool = False, description: str | None = None):
        super().__init__(paths, strict, description)
        self.text_field = text_field
        self.description += f" [field {text_field}]" if text_field != "text" else ""

    def total_bytes(self) -> int | None:
        # progress counts raw line bytes; compressed sizes would not match
        if any(p.name.endswith((".zst", ".zstd")) for p in self.paths):
            return None
        return super().total_bytes()

    def _lines(self, path: Path) -> Iterator[bytes]:
        if path.name.endswith((".zst", ".zstd")):
            import zstandard

            with open(path, "rb") as raw:
                # The Pile's shards need a long window; 2 GiB is zstd's maximum.
                dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
                try:
                    with dctx.stream_reader(raw, read_size=1 << 20) as reader:
                        yield from io.BufferedReader(reader, buffer_size=1 << 20)
                except zstandard.ZstdError as e:
                    raise UserError(f"{path}: not a valid zstd stream ({e}); check the download or "
                                    f"decompress it with `zstd -d`") from None
        else:
            with open(path, "rb") as f:
                yield from f

    def _documents(self):
        from .binary import binary_kind, not_text_fix

        compressed = None
        for path in self.paths:
            if not path.exists():
                raise UserError(f"{path} {missing(path)}; check the path")
            compressed = path.name.endswith((".zst", ".zstd"))
            offset = 0
            for lineno, line in enumerate(self._lines(path), 1):
                start, offset = offset, offset + len(line)
                if lineno == 1 and (kind := binary_kind(line)) is not None:  # UTF-16 was "not valid JSON" (Z35, Z36)
                    raise UserError(f"{path} is not text: it looks like {kind}; {not_text_fix(kind)}")
                if not line.strip():
                    continue
                where = f"{path} line {lineno}"
                text = decode_utf8(line, where, self.strict, self.stats, base_offset=start,
                                   offset_kind="decompressed byte offset" if compressed else "byte offset")
                try:
                    record = json_text.loads(text, object_pairs_hook=_Record.of)
                except json.JSONDecodeError as e:
                    if self.strict:
                        raise UserError(f"{where}: not valid JSON ({e.msg}); fix the line or drop --strict "
                                        f"to skip bad lines (they are counted)") from None
                    self.stats.skipped_records += 1
                    self.stats.unparsed_records += 1  # named when no document is left (round 30, X48)
                    self.stats.first_unparsed = self.stats.first_unparsed or f"{where}: {e.msg}"
                    continue
                if not isinstance(record, dict) or self.text_field not in record:
                    keys = ", ".join(map(str, record)) if isinstance(record, dict) else type(record).__name__
                    raise UserError(f"{where}: no {self.text_field!r} field (found: {keys}); pass "
                                    f"--text-field NAME to read another field")
                if self.text_field in record.repeated:  # json kept the last text without a word (round 29, W439)
                    raise UserError(f"{where}: field {self.text_field!r} is given twice in one record, of which "
                                    f"JSON would keep only the last text; keep one {self.text_field!r} per line (or "
                                    f"pass --text-field NAME for another field)")
                value = record[self.text_field]
                if value is None:
                    self.stats.skipped_records += 1
                    continue
                if not isinstance(value, str):
                    raise UserError(f"{where}: field {self.text_field!r} holds {type(value).__name__}, not "
                                    f"text; pass --text-field NAME for the field with the document text")
                if "\\u" in text:  # an escape may decode to a lone surrogate (W745)
                    utf8_size(value, where)
                self.stats.bytes += len(line)
                yield value


class Parquet(_FileSource):
    """Parquet files, one document per row of column ``text_field`` (read in record batches)."""

    def __init__(self, paths, text_field: str = "text", strict: bool = False, description: str | None = None,
                 batch_rows: int = 1024):
        super().__init__(paths, strict, description)
        self.text_field = text_field
        self.batch_rows = batch_rows
        self.description += f" [column {text_field}]" if text_field != "text" else ""

    def total_bytes(self) -> int | None:
        return None  # compressed columnar data: the file size says little about the text

    def _documents(self):
        import pyarrow.parquet as pq

        for path in self.paths:
            try:
                pf = pq.ParquetFile(path)
            except Exception as e:  # noqa: BLE001 - pyarrow raises several types
                raise UserError(f"{path}: not a readable parquet file ({e}); check the file") from None
            names = pf.schema_arrow.names
            if self.text_field not in names:
                raise UserError(f"{path}: no column {self.text_field!r} (columns: {', '.join(names)}); "
                                f"pass --text-field NAME")
            row = 0
            for batch in pf.iter_batches(batch_size=self.batch_rows, columns=[self.text_field]):
                for value in batch.column(0).to_pylist():
                    row += 1
                    if value is None:
                        self.stats.skipped_records += 1
                        continue
                    if isinstance(value, bytes):
                        value = decode_utf8(value, str(path), self.strict, self.stats)
                    elif not isinstance(value, str):
                        raise UserError(f"{path}: column {self.text_field!r} is not text; pass --text-field NAME")
                    self.stats.bytes += utf8_size(value, f"{path} row {row}")
                    yield value


class HFDataset(Source):
    """A Hugging Face ``datasets`` dataset, streamed (nothing cached to disk): a hub id (needs network) or a builder such as
    ``json``/``parquet``/``text`` with ``data_files`` (offline; how the tests exercise this path).
    """

    def __init__(self, name: str, config: str | None = None, split: str = "train", text_field: str = "text",
                 data_files=None, streaming: bool = True, strict: bool = False):
        super().__init__()
        self.name, self.config, self.split = name, config, split
        self.text_field, self.data_files, self.streaming, self.strict = text_field, data_files, streaming, strict
        self.description = f"hf:{name}" + (f":{config}" if config else "") + f"@{split}"
        if data_files is not None:
            self.description += f" data_files={data_files}"
        if text_field != "text":
            self.description += f" [field {text_field}]"

    def _stat_items(self):
        files = self.data_files
        if files is None:
            return ()
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        if isinstance(files, dict):
            files = [f for v in files.values() for f in ([v] if isinstance(v, (str, os.PathLike)) else v)]
        return [_file_stat(Path(f)) for f in files if Path(f).exists()]

    def _open(self):
        try:
            import datasets
        except ImportError:  # pragma: no cover - a dependency
            raise UserError("hf: sources need the `datasets` package; pip install datasets") from None
        kwargs = {"split": self.split, "streaming": self.streaming}
        if self.data_files is not None:
            kwargs["data_files"] = self.data_files
        try:
            return datasets.load_dataset(self.name, self.config, **kwargs)
        except Exception as e:  # noqa: BLE001 - datasets raises many types, incl. network errors
            raise UserError(
                f"could not open Hugging Face dataset {self.description} ({type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''}); check the name, config and split, and network "
                f"access (offline machines: download the files and pass their path instead)") from None

    def _read_failure_fix(self) -> str:
        """The fix for a failure while rows are read: a local file's row that does not parse was told to "check
        network access" (noticed in issue 30's fix29a), which only a hub stream's failure calls for."""
        if self.data_files is not None:
            return ("fix the row the error names in the data files (it does not parse as their format), or pass "
                    "other files")
        if self.streaming:
            return "check network access and retry"
        return "the dataset's downloaded files may be damaged: remove it from the datasets cache and retry"

    def _documents(self):
        ds = self._open()
        it = iter(ds)
        row_number = 0
        while True:
            try:
                row = next(it)
            except StopIteration:
                return
            except UserError:
                raise
            except Exception as e:  # noqa: BLE001 - streaming can fail mid-way (network, a row that does not parse)
                raise UserError(f"reading {self.description} failed after {row_number} rows "
                                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); "
                                f"{self._read_failure_fix()}") from None
            row_number += 1
            if self.text_field not in row:
                raise UserError(f"{self.description}: rows have no {self.text_field!r} field (found: "
                                f"{', '.join(row)}); pass --text-field NAME")
            value = row[self.text_field]
            if value is None:
                self.stats.skipped_records += 1
                continue
            if not isinstance(value, str):
                raise UserError(f"{self.description}: field {self.text_field!r} is not text; pass --text-field NAME")
            self.stats.bytes += utf8_size(value, f"{self.description} row {row_number}")
            yield value


def stdlib_files() -> list[Path]:
    """The standard library's own .py files (no tests, no site-packages), sorted."""
    root = Path(sysconfig.get_paths()["stdlib"])
    if not root.is_dir():
        raise UserError(f"the Python standard library directory {root} does not exist on this machine; "
                        f"pass another SOURCE")
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _STDLIB_SKIP_DIRS and not d.startswith("."))
        out.extend(Path(dirpath) / f for f in filenames if f.endswith(".py"))
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


class Stdlib(TextFiles):
    """The embedded default corpus: the standard library's .py sources (see module docstring)."""

    def __init__(self, strict: bool = False):
        import sys

        files = stdlib_files()
        super().__init__(files, strict, description=f"stdlib (Python {sys.version.split()[0]}, "
                                                    f"{sysconfig.get_paths()['stdlib']})")
        self.root = Path(sysconfig.get_paths()["stdlib"])

    def _stat_items(self):
        # names relative to the stdlib root: the same Python in another prefix is the same corpus
        for p in self.paths:
            st = p.stat()
            yield (p.relative_to(self.root).as_posix(), st.st_size)


def reads_fields(src: Source | None) -> bool:
    """Whether ``src`` reads its text from a field or column (JSON lines, parquet, an ``hf:`` dataset), where
    ``text_field`` applies; text files are read whole."""
    if isinstance(src, Concat):
        return any(reads_fields(part) for part in src.sources)
    return isinstance(src, (JsonLines, Parquet, HFDataset))


class Concat(Source):
    """Several sources, one after the other."""

    def __init__(self, sources: Sequence[Source]):
        super().__init__()
        if not sources:
            raise UserError("no sources given; pass at least one SOURCE")
        self.sources = list(sources)
        self.description = " + ".join(s.description for s in self.sources)

    def _documents(self):
        for s in self.sources:
            yield from s
            self.stats.merge(_without_counts(s.stats))

    def _stat_items(self):
        return [s.stat_fingerprint() for s in self.sources]

    def total_bytes(self):
        sizes = [s.total_bytes() for s in self.sources]
        return None if any(v is None for v in sizes) else sum(sizes)


class Limit(Source):
    """The first ``max_documents`` (non-empty) documents of ``source``."""

    def __init__(self, source: Source, max_documents: int):
        super().__init__()
        if max_documents < 1:
            raise UserError(f"max_documents must be at least 1, got {max_documents}")
        self.source, self.max_documents = source, int(max_documents)
        self.description = f"{source.description} (first {self.max_documents} documents)"

    def _documents(self):
        n = 0
        for doc in self.source:
            yield doc
            n += 1
            if n >= self.max_documents:
                break
        self.stats.merge(_without_counts(self.source.stats))

    def _stat_items(self):
        return [self.source.stat_fingerprint()]


def _without_counts(stats: SourceStats) -> SourceStats:
    s = SourceStats()
    s.merge(stats)
    s.documents = 0
    return s


# --------------------------------------------------------------------------------------------
# spec -> source


def _kind_of(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return "text"


def _group_files(paths: Sequence[Path], text_field: str, strict: bool, description: str) -> Source:
    """Files of mixed kinds -> one source reading them in the given (sorted) order."""
    groups: list[tuple[str, list[Path]]] = []
    for p in paths:
        kind = _kind_of(p)
        if groups and groups[-1][0] == kind:
            groups[-1][1].append(p)
        else:
            groups.append((kind, [p]))
    parts: list[Source] = []
    for kind, files in groups:
        desc = description if len(groups) == 1 else None
        if kind == "jsonl":
            parts.append(JsonLines(files, text_field, strict, desc))
        elif kind == "parquet":
            parts.append(Parquet(files, text_field, strict, desc))
        else:
            parts.append(TextFiles(files, strict, desc))
    if len(parts) == 1:
        return parts[0]
    out = Concat(parts)
    out.description = description
    return out


def _refuse_dead_link(path: Path, root: Path) -> None:
    """UserError naming ``path``, a file of the corpus folder ``root`` that is a symbolic link leading nowhere (to a
    missing target, or back to itself): its stat ended in a FileNotFoundError traceback, nothing written (issue 30
    round 18, G391, G392)."""
    import shlex

    found = dead_link(path)
    if found is not None and found[0] == str(path):
        raise UserError(f"{str(path)!r} in the corpus folder {str(root)!r} {found[1]}; remove the link (rm "
                        f"{shlex.quote(str(path))}) or point it at the file it stands for")


def _folder_files(root: Path, extensions: Sequence[str]) -> tuple[list[Path], SourceStats]:
    """The files of the corpus folder ``root`` a reader takes, and what the walk passed over (``SourceStats``'
    ``skipped_*``: files of no reader's extension, named; links to a folder read already). A link to a folder is
    followed as a link to a file is read: ``more -> ../more`` was left out without a word or a count (issue 30 round
    26, P60). Footgun: a link back up (``loop -> ..``, or to a folder holding the corpus) or to a folder read already
    would read it again, for ever: each folder is read once, and such a link is skipped and named."""
    exts = tuple(e.lower() for e in extensions)
    data_exts = JSONL_SUFFIXES + PARQUET_SUFFIXES
    files, walked, read = [], SourceStats(), set()
    tops = [Path(os.path.realpath(root))]  # the corpus and each linked folder followed: none is read twice
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        real = Path(os.path.realpath(dirpath))
        if real in read or (os.path.islink(dirpath) and any(top.is_relative_to(real) for top in tops)):
            dirnames[:] = []  # a folder reached again through a link, or one holding the corpus ('loop -> ..')
            walked.skipped_links.append(dirpath)
            continue
        if os.path.islink(dirpath):
            tops.append(real)
        read.add(real)
        if Path(dirpath) != root:
            _check_not_an_output(Path(dirpath), dirpath, root)
        for f in sorted(filenames):
            if f.startswith("."):
                continue
            low = f.lower()
            if low.endswith(data_exts) or Path(low).suffix in exts:
                if (kind := not_regular(Path(dirpath) / f)) is not None:  # read, it hung prepare (round 12, T60, T204)
                    raise UserError(f"{str(Path(dirpath) / f)!r} in the corpus folder {str(root)!r} {kind}; move it "
                                    f"out of the folder (a corpus folder's files are read whole)")
                _refuse_dead_link(Path(dirpath) / f, root)
                files.append(Path(dirpath) / f)
            else:
                walked.skipped_files += 1
                if len(walked.skipped_file_names) < 100:
                    walked.skipped_file_names.append(str(Path(dirpath) / f))
    files, walked.skipped_file_links = _once_each(sorted(files, key=lambda p: p.relative_to(root).as_posix()))
    return files, walked


def _file_key(path: Path) -> tuple:
    """What makes two names one file: its (device, inode), which a hard link shares (``os.path.realpath`` tells a
    symbolic link's target, not a hard link's: round 28, T19); the real path where the file cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return (st.st_dev, st.st_ino)


def _once_each(files: list[Path]) -> tuple[list[Path], list[str]]:
    """``files`` with each real file once, and the names left out (links to a file listed already). A file reached
    through two more names (``b.txt -> a.txt``, ``sub/c.txt -> ../a.txt``) was read as three documents, without a word
    (issue 30 round 27, R84): round 26 read a linked folder once (P60), not a linked file; a hard link too (round 28,
    T19: one file by its inode, ``_file_key``). Of the names of one file the first that is no symbolic link is kept
    (the file's own name), else the first; the order of ``files`` is kept."""
    names: dict[tuple, list[Path]] = {}
    for p in files:
        names.setdefault(_file_key(p), []).append(p)
    kept = {min(group, key=lambda p: (os.path.islink(p), group.index(p))) for group in names.values()}
    return [p for p in files if p in kept], [str(p) for p in files if p not in kept][:100]


def _once_across(sources: list[Source]) -> list[str]:
    """Leave out of each of ``sources`` the files an earlier one reads (one file by ``_file_key``); return the names
    left out. Two sources naming one file (``'corpus/*.txt' corpus``, or two globs both matching b0.txt) read it
    twice, without a word (issue 30 round 28, T21): ``_once_each`` kept each file once within one source only. A
    source named twice, or a file inside a folder also named, is refused before (``prepare._check_named_once``)."""
    seen: set[tuple] = set()
    twice: list[str] = []
    for files in (part for src in sources for part in _file_sources(src)):
        kept = []
        for p in files.paths:
            key = _file_key(p)
            if key in seen:
                twice.append(str(p))
            else:
                seen.add(key)
                kept.append(p)
        files.paths = kept
    return twice[:100]


def _file_sources(src: Source) -> Iterator["_FileSource"]:
    """The file-reading sources ``src`` is made of (itself, or a Concat's parts), in reading order."""
    if isinstance(src, _FileSource):
        yield src
    elif isinstance(src, Concat):
        for part in src.sources:
            yield from _file_sources(part)


def parse_hf_spec(spec: str) -> tuple[str, str | None, str]:
    """``hf:NAME[:CONFIG][@SPLIT]`` -> (name, config, split); split defaults to ``train``."""
    body = spec[3:]
    split = "train"
    if "@" in body:
        body, split = body.rsplit("@", 1)
    name, _, config = body.partition(":")
    if not name or not split:
        raise UserError(f"bad Hugging Face source {spec!r}; write hf:NAME[:CONFIG][@SPLIT], "
                        f"e.g. hf:wikitext:wikitext-103-raw-v1@train")
    return name, (config or None), split


def _check_not_an_output(path: Path, spec: str, corpus: Path | None = None) -> None:
    """UserError for a folder another leviathan verb wrote (its marker says which), given as a corpus: a run folder was
    read as text, and the line blamed its metrics.jsonl's missing 'text' field and offered --text-field (issue 30
    round 14, A117). Its outputs are not text to train on. ``corpus``: the corpus folder ``path`` lies inside, whose
    walk met it: an export there had its README.md (the model card) tokenized as a document, without a word
    (round 18, F72), and a sweep there was refused at its results.jsonl, the cause unnamed (F74)."""
    from ..file_kinds import COLLECTED, is_collected
    from ..ownership import read_marker

    if is_collected(path):  # no marker: its rows were read as text after a tokenizer was trained (round 20, K125)
        where = f"{spec!r} in the corpus folder {str(corpus)!r}" if corpus is not None else f"source {spec!r}"
        fix = "move it out of the corpus folder" if corpus is not None else "pass the text files or folder to prepare"
        raise UserError(f"{where} is {COLLECTED}, not text: its results rows would be read as documents; {fix}")
    try:
        marker = read_marker(path)
    except UserError:
        return  # a damaged marker: the folder's files are judged as they are
    if marker is not None and corpus is not None:
        raise UserError(f"{spec!r} in the corpus folder {str(corpus)!r} is the output of `leviathan {marker.verb}` "
                        f"(its leviathan_output.json says so), not text: its files would be read as documents; move "
                        f"it out of the corpus folder")
    if marker is not None:
        raise UserError(f"source {spec!r} is the output of `leviathan {marker.verb}` (its leviathan_output.json says "
                        f"so), not a corpus; pass the text files or folder to prepare")


def open_source(spec, *, text_field: str = "text", strict: bool = False,
                extensions: Sequence[str] = DEFAULT_TEXT_EXTENSIONS, max_documents: int | None = None) -> Source:
    """A ``Source`` for ``spec``: a path (file, folder, glob), ``hf:...``, ``stdlib``, a Source, or a list."""
    from ..value_rules import check_switches

    check_switches("open_source", strict=strict)  # 'no' was true (round 30, Y635)
    if isinstance(spec, Source):
        src = spec
    elif isinstance(spec, (list, tuple)):
        src = Concat([open_source(s, text_field=text_field, strict=strict, extensions=extensions) for s in spec])
        src.walked.skipped_file_links = _once_across(src.sources)
        if len(src.sources) == 1:
            src = src.sources[0]
    else:
        if not isinstance(spec, (str, os.PathLike)):  # prepare(123, ...) was os.fspath's TypeError (round 9, M132)
            raise TypeError(f"source must be a path (str or Path), hf:NAME, stdlib, a Source or a list of them, got "
                            f"{type(spec).__name__} {spec!r:.60}")
        spec = os.fspath(spec)
        if not isinstance(spec, str) or not spec:
            raise UserError(f"source {spec!r} is empty; pass a file, folder, glob, hf:NAME or stdlib")
        refuse_file_typed_as_folder(spec, "source")  # 'b1.txt/' was read as the file b1.txt (round 28, U777)
        path = Path(spec).expanduser()
        if spec == "stdlib":
            src = Stdlib(strict)
        elif spec.startswith("hf:"):
            name, config, split = parse_hf_spec(spec)
            src = HFDataset(name, config, split, text_field, strict=strict)
        elif path.is_dir():
            _check_not_an_output(path, spec)
            files, walked = _folder_files(path, extensions)
            if not files:
                raise UserError(f"folder {spec} holds no readable files (looked for {', '.join(extensions[:6])}, "
                                f"..., .jsonl, .jsonl.zst, .parquet); point at the right folder or use a glob")
            src = _group_files(files, text_field, strict, f"{path}/ ({len(files)} files)")
            src.walked = walked
        elif path.is_file():
            src = _group_files([path], text_field, strict, str(path))
        elif any(c in spec for c in "*?["):
            files = sorted((Path(p) for p in _glob.glob(os.path.expanduser(spec), recursive=True)
                            if Path(p).is_file()), key=str)
            if not files:
                raise UserError(f"glob {spec!r} matches no files; check the pattern (quote it so the shell "
                                f"does not expand it)")
            files, twice = _once_each(files)  # a link matched beside its file: read once (R84)
            src = _group_files(files, text_field, strict, f"{spec} ({len(files)} files)")
            src.walked = SourceStats(skipped_file_links=twice)
        else:
            raise UserError(f"source {spec!r} {missing(spec)}; pass a file, a folder, a glob, "
                            f"hf:NAME[:CONFIG][@SPLIT] or stdlib")
    if max_documents is not None:
        src = Limit(src, max_documents)
    return src

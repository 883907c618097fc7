"""Files that are not text, recognised before they are tokenized as if they were.

    kind = binary_kind(data)    # "gzip-compressed data", "binary data (NUL bytes)", ... or None for text

``prepare`` reads a plain file as UTF-8, replacing (and counting) invalid sequences unless ``--strict``: an
archive or an image became thousands of replacement characters in the training data. A file whose first bytes are
a known binary signature, or whose first 8 KiB hold a NUL byte (git's rule), is refused with what it looks like and
the fix. Footgun: only the start is looked at (binary data appended to text is not caught; its invalid bytes are
still counted); UTF-16 text (NUL bytes, or a UTF-16 byte order mark) is refused too: convert it to UTF-8. JSON
lines are looked at the same way, on their first line (issue 30 round 31, Z35, Z36). A UTF-32 byte order mark
(ff fe 00 00, 00 00 fe ff) is told from UTF-16's: UTF-32LE's starts with UTF-16LE's, and was called UTF-16 text with
the iconv line that turns it into text full of NUL characters (issue 30 round 32, AB3). Without a mark, UTF-32 and
UTF-16 text of mostly Latin letters is told by where its NUL bytes fall (``_unmarked_kind``): UTF-32LE was "binary
data (NUL bytes; or UTF-16 text)" with "convert UTF-16 with iconv", which gives text full of NULs (round 33, AD19,
AD20, AD29). Footgun: UTF-16 or UTF-32 text of other scripts (few or no NUL bytes) is not told apart; its NULs, if
any, still refuse it as binary data.
"""

from __future__ import annotations

SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"PK\x03\x04", "a zip archive"),
    (b"PAR1", "a parquet file"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"%PDF", "a PDF document"),
    (b"\x93NUMPY", "a numpy array"),
    (b"\x7fELF", "an executable"),
    (b"SQLite format 3\x00", "an SQLite database"),
)
UTF16_MARKS = {b"\xff\xfe": "little-endian", b"\xfe\xff": "big-endian"}
UTF32_MARKS = {b"\xff\xfe\x00\x00": "little-endian", b"\x00\x00\xfe\xff": "big-endian"}
SNIFF_BYTES = 8192


def binary_kind(data: bytes) -> str | None:
    """What a file starting with ``data`` looks like when it is not text; None when it may be text."""
    for signature, kind in SIGNATURES:
        if data.startswith(signature):
            return kind
    if (order := UTF32_MARKS.get(data[:4])) is not None:  # before UTF-16: ff fe 00 00 starts with ff fe (AB3)
        return f"UTF-32 text (a {order} byte order mark)"
    if (kind := _utf16_kind(data)) is not None:
        return kind
    if b"\x00" in data[:SNIFF_BYTES]:
        return _unmarked_kind(data[:SNIFF_BYTES]) or "binary data (NUL bytes)"
    return None


_UNMARKED = ((4, (1, 2, 3), "UTF-32LE"), (4, (0, 1, 2), "UTF-32BE"), (2, (1,), "UTF-16LE"), (2, (0,), "UTF-16BE"))


def _unmarked_kind(data: bytes) -> str | None:
    """"UTF-32LE text (no byte order mark)" and the like when ``data``'s NUL bytes fall where that encoding puts them
    for text of mostly Latin letters (the high bytes of each code unit all NUL, the low ones not), else None. Round 33
    (AD19, AD20, AD29): such UTF-32 was called "binary data (NUL bytes; or UTF-16 text)", its fix UTF-16's iconv."""
    for width, zero, name in _UNMARKED:  # UTF-32 first: its NUL columns hold UTF-16's
        units = [data[i:i + width] for i in range(0, len(data) - len(data) % width, width)]
        if len(units) < 2:
            continue
        high = sum(all(u[k] == 0 for k in zero) for u in units)
        low = sum(any(u[k] != 0 for k in range(width) if k not in zero) for u in units)
        if high >= 0.95 * len(units) and low >= 0.95 * len(units):
            return f"{name} text (no byte order mark)"
    return None


def _utf16_kind(data: bytes) -> str | None:
    """What a file starting with a UTF-16 byte order mark is (Windows Notepad's "Unicode"): UTF-16 text when NUL bytes
    follow, else a stray mark before 8-bit text. A .jsonl of either was "not valid JSON ... Expecting value", the
    cause and the fix wrong (issue 30 round 31, Z35, Z36)."""
    order = UTF16_MARKS.get(data[:2])
    if order is None:
        return None
    if b"\x00" in data[2:SNIFF_BYTES]:
        return f"UTF-16 text (a {order} byte order mark)"
    return f"a UTF-16 byte order mark (bytes {data[0]:#04x} {data[1]:#04x}) before text that is not UTF-16"


def not_text_fix(kind: str) -> str:
    """The fix for a file of ``kind`` given where text is expected."""
    if "compressed" in kind or "archive" in kind:
        return "decompress it first (prepare reads .txt, .jsonl, .jsonl.zst and .parquet files)"
    if kind.endswith("(no byte order mark)"):  # iconv's utf-16 / utf-32 read big-endian without a mark (AD19, AD20)
        return f"convert it to UTF-8 (iconv -f {kind.split()[0].lower()} -t utf-8 FILE > NEW)"
    if kind.startswith("UTF-32"):  # iconv -f utf-16 made it text full of NUL characters (issue 30 round 32, AB3)
        return "convert it to UTF-8 (iconv -f utf-32 -t utf-8 FILE > NEW)"
    if kind.startswith("UTF-16"):
        return "convert it to UTF-8 (iconv -f utf-16 -t utf-8 FILE > NEW)"
    if kind.startswith("a UTF-16 byte order mark"):
        return "remove those first two bytes (tail -c +3 FILE > NEW), or save the file as UTF-8"
    if kind.startswith("a parquet"):
        return "name it *.parquet so prepare reads its text column"
    return "pass UTF-8 text in its place, or leave the file out"  # prepare's corpus or eval's one file (AD29)

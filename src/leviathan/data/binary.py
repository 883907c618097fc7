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
AD20, AD29). UTF-16 or UTF-32 text of other scripts, whose NULs fall in no one column, is told by decoding it
(``_decoded_kind``, round 35, AH26, AH27, AH31, AH33). Footgun: such text with no NUL byte at all in its first 8 KiB
is not looked at here (it is read as UTF-8, its invalid bytes counted, or refused under --strict).
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
    return _decoded_kind(data)


_WIDTHS = {"UTF-32LE": 4, "UTF-32BE": 4, "UTF-16LE": 2, "UTF-16BE": 2}


def _decoded_kind(data: bytes) -> str | None:
    """"UTF-16LE text (no byte order mark)" and the like for UTF-16 or UTF-32 text of other scripts, whose NUL bytes
    do not fall in one column (Chinese or Cyrillic in UTF-16, emoji beside Latin letters in UTF-32), else None. Round
    35 (AH26, AH27, AH31, AH33): such text was called "binary data (NUL bytes)" with "pass UTF-8 text", though iconv
    converts it. The rule: the encoding decodes the bytes without error into text (at least 95% of the characters
    assigned, printable or whitespace, no NUL) whose letters keep to one script (``_one_script``); where more than
    one does (UTF-16 read with its bytes swapped often
    decodes too), the one whose characters fall in the fewest Unicode blocks of 128 is taken, since text keeps to
    its script's few blocks and swapped bytes scatter them. Binary data with NUL bytes decodes to control characters
    or unassigned ones and stays "binary data"."""
    import unicodedata

    best: tuple[int, str] | None = None
    for name, width in _WIDTHS.items():
        chunk = data[:len(data) - len(data) % width]
        try:
            text = chunk.decode(name.lower())
        except UnicodeDecodeError as err:
            if err.start < len(chunk) - 4:  # only a character cut at the end of the sample is forgiven
                continue
            text = chunk[:err.start].decode(name.lower(), errors="replace")
        if len(text) < 2 or "\x00" in text:
            continue
        texty = sum(ch in "\t\n\r" or unicodedata.category(ch) not in ("Cc", "Cn", "Co", "Cs") for ch in text)
        if texty < 0.95 * len(text) or not _one_script(text, unicodedata):
            continue
        blocks = len({ord(ch) >> 7 for ch in text})
        if best is None or blocks < best[0]:
            best = (blocks, name)
    return None if best is None else f"{best[1]} text (no byte order mark)"


def _one_script(text: str, unicodedata) -> bool:
    """Whether ``text``'s letters are written in one script, as a language's text is (at least 90% of them share the
    first word of their Unicode name: CJK, CYRILLIC, LATIN, ...), Latin letters mostly plain ASCII. A prepared
    folder's token ids (train.bin, uint16) also decode as UTF-16, into a soup of accented and extended Latin letters
    from every block, which this tells from text."""
    letters = [ch for ch in text if unicodedata.category(ch).startswith("L")]
    if not letters:
        return False
    scripts: dict[str, int] = {}
    for ch in letters:
        script = unicodedata.name(ch, "?").split()[0]
        scripts[script] = scripts.get(script, 0) + 1
    script, count = max(scripts.items(), key=lambda item: item[1])
    if count < 0.9 * len(letters):
        return False
    return script != "LATIN" or sum(ch < "\x80" for ch in letters) >= 0.8 * len(letters)


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


def other_encoding(data: bytes) -> str | None:
    """"UTF-16LE text (no byte order mark)" and the like when ``data`` (a file's first bytes) is text in UTF-16 or
    UTF-32, with or without a mark; None otherwise (UTF-8 text, or binary data). For the readers of text that is
    read as UTF-8 (YAML settings, JSON lines), whose line for such a file named no conversion (round 35, AH34-AH38)."""
    kind = binary_kind(data[:SNIFF_BYTES])
    return kind if kind is not None and kind.startswith("UTF-") else None


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

"""Tokenizers, all local: o200k_base / cl100k_base (quicktok), any ``tokenizer.json``, trained BPE.

The paper trains with OpenAI's ``o200k_base`` (vocabulary 200,019 ids with its special tokens), the default here.
Every tokenizer exposes the same small interface (docs/CONTRACTS.md, section Data):

    tok = load_tokenizer("o200k_base")        # or "cl100k_base", "path/tokenizer.json", a data dir
    tok.name, tok.vocab_size, tok.eot_id      # "o200k_base", 200019, 199999
    ids = tok.encode("hello")                 # list[int]; special-token strings are plain text
    tok.decode(ids)
    tok.save(directory)                       # tokenizer.json (if not built-in) + leviathan_tokenizer.json
    bpe = train_bpe(texts, vocab_size=8192)   # byte-level BPE, "<|endoftext|>" is id 0, name "bpe:8192"

``.name`` is the spec recorded in meta.json, checkpoints and exports: a built-in encoding name, ``bpe:VOCAB`` for a
BPE trained by ``leviathan prepare`` (load it from its data dir, which holds its ``tokenizer.json``), or the absolute
path of a ``tokenizer.json``.

Speed: quicktok encodes with native threads, an order of magnitude faster than the ``tokenizers`` library on
book-length documents (docs/benchmarks.md, "Data preparation"), so a byte-level BPE ``tokenizer.json`` whose
pre-tokenizer quicktok knows (o200k, cl100k, llama3, qwen; ``train_bpe`` uses o200k's for this reason) is imported
into quicktok at load time; quicktok verifies the import token by token and refuses anything it would approximate,
in which case the ``tokenizers`` path is kept.

Footguns:
- ``encode`` treats special-token strings ("<|endoftext|>") in the text as ordinary text (tiktoken's
  ``encode_ordinary``): a document quoting the string never produces a fake separator. The
  end-of-text id is inserted only by the data pipeline, between documents.
- ``vocab_size`` counts special tokens (o200k: 200,019 = 199,998 ranks + gaps + specials; it is
  ``max id + 1``), which is what a model's embedding/head size must be.
- A ``tokenizer.json`` without any end-of-text-like special token gets "<|endoftext|>" appended
  (one more id); the saved copy in the data dir records it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import operator
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..empty_paths import refuse_file_typed_as_folder
from ..errors import (ArgumentTypeError, ArgumentValueError, UserError, missing, name_too_long, not_a_file,
                      nul_byte)
from ..integers import is_integer
from .integrity import check_meta_tokenizer
from .meta import find_meta
from .. import json_text

__all__ = [
    "BUILTIN_ENCODINGS",
    "EOT_TEXT",
    "Tokenizer",
    "BuiltinTokenizer",
    "HFTokenizer",
    "load_tokenizer",
    "train_bpe",
]

BUILTIN_ENCODINGS = ("o200k_base", "cl100k_base")
EOT_TEXT = "<|endoftext|>"
TOKENIZER_FILE = "tokenizer.json"
INFO_FILE = "leviathan_tokenizer.json"
# End-of-text-like special tokens looked up (in this order) in a foreign tokenizer.json.
_EOT_CANDIDATES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<|eos|>", "[EOS]")

# The o200k_base pre-tokenizer regex (tiktoken's, verbatim). ``train_bpe`` splits with it so that
# (1) the BPE learns on the same pre-tokens as the paper's tokenizer and (2) quicktok can run it.
O200K_PATTERN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# A newline followed by an ASCII letter is a pre-token boundary in the o200k, cl100k, llama3 and
# GPT-2 grammars (no alternative can consume "\n" together with a following letter, and merges
# never cross pre-tokens), so a long document cut right after such a newline encodes to exactly
# the same ids as the whole document. The data pipeline uses this to spread one huge document
# over several threads; tests check the equality.
_SAFE_CUT = re.compile(r"\n(?=[A-Za-z])")


class Tokenizer:
    """Interface shared by all tokenizers (see module docstring)."""

    name: str
    vocab_size: int
    eot_id: int
    #: True when cutting text after "\n" + ASCII letter never changes the ids (see ``_SAFE_CUT``).
    newline_cut_safe: bool = False

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def encode_batch(self, texts: Sequence[str], num_threads: int = 0) -> list[list[int]]:
        toks, offsets = self.encode_flat(texts, num_threads)
        return [toks[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))]

    def encode_flat(self, texts: Sequence[str], num_threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Encode many texts at once -> (ids uint32 (N,), offsets int64 (len(texts)+1,)).

        Text i is ``ids[offsets[i]:offsets[i+1]]``. ``num_threads=0`` uses every core.
        """
        raise NotImplementedError

    def decode(self, ids: Iterable[int]) -> str:
        raise NotImplementedError

    @staticmethod
    def _checked_text(text) -> str:
        """``text`` as the str an encoder takes: None, a number or a list ended in quicktok's pybind signature dump,
        and a lone surrogate ('a\\ud800b', not UTF-8) was named as a wrong argument type (issue 30 round 14, B86,
        B87). Bytes are refused, naming .decode(): they were decoded with errors='replace', so b'\\xff\\xfe' (not UTF-8)
        encoded as two replacement characters without a word (round 21, P35b); which encoding and which repair is the
        caller's to say."""
        if isinstance(text, (bytes, bytearray, memoryview)):
            raise ArgumentTypeError(
                f"encode takes a str, got {type(text).__name__} {bytes(text)!r:.40}; decode it first: "
                f"data.decode('utf-8') (errors='replace' to keep bytes that are not UTF-8 as \\ufffd)")
        if not isinstance(text, str):
            raise ArgumentTypeError(
                f"encode takes a str, got {type(text).__name__} {text!r:.40}; for several texts use "
                f"encode_batch")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ArgumentValueError(
                f"the text holds {text[e.start]!r} at character {e.start:,}, a lone surrogate that is not "
                f"UTF-8; decode the source with errors='replace' (or 'surrogatepass' and re-encode)") \
                from None
        return text

    @staticmethod
    def _checked_batch(texts, num_threads) -> tuple[list[str], int]:
        """(texts, num_threads) for encode_batch / encode_flat: a single str was encoded character by character,
        a thread count 1.5 truncated, -1 a pybind dump (round 14, B89-B91), and 10**6 started threads by the hundred
        (158 on 2 cores, slower than 2; round 18, G271): above 0 it is held to --threads' rule, at most 4 x the usable
        cores (``value_rules.thread_problem``)."""
        from ..value_rules import thread_problem

        if isinstance(texts, (str, bytes)):
            raise ArgumentTypeError("encode_batch takes a list of texts, got one str; pass [text], or use encode(text)")
        if isinstance(num_threads, bool) or not is_integer(num_threads) or num_threads < 0:
            raise ArgumentValueError(
                f"num_threads must be a whole number >= 0 (0: every core), got {num_threads!r:.40}")
        if num_threads > 0 and (problem := thread_problem(num_threads)) is not None:
            raise ArgumentValueError(f"num_threads {problem}; more threads than that are no faster (0: every core)")
        return [Tokenizer._checked_text(t) for t in texts], int(num_threads)

    def _checked_ids(self, ids: Iterable[int]) -> list[int]:
        """``ids`` as ints, each in [0, vocab_size): ``decode([-1])`` ended in an OverflowError and ``decode([10**6])``
        returned '' without a word (issue 30 round 12, U152, U153); ``decode([1.5])`` and ``decode([True])`` decoded
        ids 1 (round 13, W92, W94): an id is an integer (int, a numpy or torch integer), never a bool, float or text."""
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__") or getattr(ids, "ndim", 1) != 1:
            raise ArgumentTypeError(
                f"decode takes a sequence of token ids (a list or a 1-d array), got {type(ids).__name__} "
                f"{ids!r:.40}; pass one row of ids (decode(ids[0]), or each row in turn for a batch)")  # decode(5): "'int' object is not iterable" (round 14, B95, B98, B99)
        out = []
        for i in ids:
            if isinstance(i, bool) or str(getattr(i, "dtype", "")) in ("bool", "torch.bool"):  # numpy's, torch's
                raise ArgumentTypeError(f"token ids are integers, got the bool {i!r}; pass ints such as [15, 2047]")
            try:
                out.append(operator.index(i))
            except TypeError:
                raise ArgumentTypeError(f"token ids are integers, got {type(i).__name__} {i!r:.40}; pass ints such as "
                                f"[15, 2047]") from None
        bad = next((i for i in out if not 0 <= i < self.vocab_size), None)
        if bad is not None:
            raise ArgumentValueError(f"token id {bad} is outside this tokenizer's ids [0, {self.vocab_size}); pass "
                                     f"ids this tokenizer makes (a model's vocabulary may be larger than its tokenizer's)")
        return out

    def save(self, directory: str | os.PathLike) -> Path:
        """Write what ``load_tokenizer(directory)`` needs; returns the directory. A storage failure (a read-only disk,
        a file where the folder belongs, a full disk) is an ``errors.StorageError`` naming the path and the fix, not a
        raw OSError (issue 30 round 14, B344). The files are written together or not at all (``save_owned``); a folder
        that is a verb's output is refused (C275);
        a ``directory`` that is not a path is named (round 19, as J244)."""
        from ..ownership import check_path_given

        check_path_given(directory, "Tokenizer.save")
        directory = Path(directory)
        _check_not_an_output(directory)
        return self.save_owned(directory)

    def save_owned(self, directory: str | os.PathLike) -> Path:
        """``save`` without its check of whose folder ``directory`` is: for a verb saving into a new folder of its own
        (a step's, an export's or a data folder's temporary one), which may lie inside its output (round 18, G47).
        The files are written together or not at all (``io.atomic_write_together``) and a failure removes the folders
        this call made: a full disk, or one out of inodes, left tokenizer.json alone in the new folder, which
        ``load_tokenizer`` took without its record (issue 30 round 20, M158, M160). The record holds the sha256 of
        tokenizer.json, which ``load_tokenizer`` checks (M89). The set is replaced whole, all or none (round 22, S22,
        S547: ``_earlier_files``), under the folder's exclusive lock, which ``load_tokenizer`` waits for
        (``swap_lock``: a load among the renames read another save's record beside this tokenizer.json, round 23)."""
        from ..io import atomic_write_together
        from ..locking import missing_folders, remove_if_empty
        from ..ownership import check_path_given
        from ..storage import api_writes
        from ..swap_lock import swapping

        check_path_given(directory, "Tokenizer.save_owned")  # round 22: save_owned(5) was os.fspath's TypeError
        directory = Path(directory)
        created: list[Path] = []
        own = self._own_files()
        files = {directory / name: text for name, text in own.items()}
        info = {"format": INFO_FORMATS[-1], "name": self.name, "kind": self.kind, "vocab_size": self.vocab_size,
                "eot_id": self.eot_id}
        if TOKENIZER_FILE in own:
            info["sha256"] = hashlib.sha256(own[TOKENIZER_FILE].encode()).hexdigest()
        files[directory / INFO_FILE] = json.dumps(info, indent=2) + "\n"
        try:
            with api_writes("Tokenizer.save", directory):
                created = missing_folders(directory)  # inside: a 300-byte name is the verbs' line (ENAMETOOLONG)
                directory.mkdir(parents=True, exist_ok=True)
                with swapping(directory):  # a load among the renames read a mix of two saves (round 23, U515's kind)
                    atomic_write_together(files, remove=_earlier_files(directory, own))
        except BaseException:
            remove_if_empty(created)
            raise
        return directory

    def _own_files(self) -> dict[str, str]:
        """The tokenizer's own files (name -> text), written with ``save``'s INFO_FILE (a built-in has none)."""
        return {}

    def fingerprint(self) -> str:
        """Equal for two tokenizers that map every text to the same ids (a built-in: its name)."""
        return self.name

    kind = "abstract"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, vocab_size={self.vocab_size}, eot_id={self.eot_id})"


# --------------------------------------------------------------------------------------------
# built-in encodings (quicktok)


class BuiltinTokenizer(Tokenizer):
    """``o200k_base`` or ``cl100k_base`` through quicktok (ids identical to tiktoken's)."""

    kind = "builtin"
    newline_cut_safe = True

    def __init__(self, name: str):
        import quicktok

        if name not in BUILTIN_ENCODINGS:
            raise UserError(f"unknown built-in tokenizer {name!r}; choose one of {', '.join(BUILTIN_ENCODINGS)}")
        self.name = name
        self._enc = quicktok.get_encoding(name)
        self.vocab_size = int(self._enc.n_vocab)
        self.eot_id = int(self._enc.eot_token)

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(self._checked_text(text))

    def encode_flat(self, texts, num_threads=0):
        texts, num_threads = self._checked_batch(texts, num_threads)
        toks, offsets = self._enc.encode_batch(texts, num_threads)
        return np.asarray(toks, dtype=np.uint32), np.asarray(offsets, dtype=np.int64)

    def decode(self, ids) -> str:
        return self._enc.decode(self._checked_ids(ids))


# --------------------------------------------------------------------------------------------
# tokenizer.json (Hugging Face tokenizers), with a verified quicktok fast path


class HFTokenizer(Tokenizer):
    """A Hugging Face ``tokenizers`` tokenizer (any ``tokenizer.json``); ``fast=True`` imports a byte-level BPE with a
    grammar quicktok knows into quicktok (verified by quicktok), and ``self.fast`` says whether that worked.
    """

    kind = "tokenizers"

    def __init__(self, hf_tokenizer, name: str, fast: bool = True):
        check_not_builtin_name(name, "HFTokenizer", "such as the path of its tokenizer.json")
        self.name = name
        self._hf = hf_tokenizer
        # Special-token strings inside documents stay text (like quicktok's encode_ordinary).
        try:
            self._hf.encode_special_tokens = True
        except AttributeError:  # tokenizers < 0.15: best effort
            pass
        vocab = self._hf.get_vocab(with_added_tokens=True)
        eot = next((vocab[t] for t in _EOT_CANDIDATES if t in vocab), None)
        if eot is None:
            self._hf.add_special_tokens([EOT_TEXT])
            vocab = self._hf.get_vocab(with_added_tokens=True)
            eot = vocab[EOT_TEXT]
        self.eot_id = int(eot)
        self.vocab_size = int(max(max(vocab.values()) + 1, self._hf.get_vocab_size(with_added_tokens=True)))
        self._qt = _import_into_quicktok(self._hf) if fast else None
        self.newline_cut_safe = self._qt is not None  # quicktok only accepts the safe grammars

    @property
    def fast(self) -> bool:
        return self._qt is not None

    def encode(self, text: str) -> list[int]:
        text = self._checked_text(text)
        if self._qt is not None:
            return self._qt.encode_ordinary(text)
        return self._hf.encode(text, add_special_tokens=False).ids

    def encode_flat(self, texts, num_threads=0):
        texts, num_threads = self._checked_batch(texts, num_threads)
        if self._qt is not None:
            toks, offsets = self._qt.encode_batch(texts, int(num_threads))
            return np.asarray(toks, dtype=np.uint32), np.asarray(offsets, dtype=np.int64)
        # tokenizers parallelises encode_batch itself (rayon; RAYON_NUM_THREADS caps it).
        encs = self._hf.encode_batch(texts, add_special_tokens=False) if texts else []
        lens = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs))
        offsets = np.zeros(len(encs) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        toks = np.empty(int(offsets[-1]), dtype=np.uint32)
        for i, e in enumerate(encs):
            toks[offsets[i]:offsets[i + 1]] = e.ids
        return toks, offsets

    def decode(self, ids) -> str:
        return self._hf.decode(self._checked_ids(ids), skip_special_tokens=False)

    def _own_files(self) -> dict[str, str]:
        return {TOKENIZER_FILE: self._hf.to_str(pretty=True)}  # what _hf.save writes

    def to_json(self) -> str:
        return self._hf.to_str()

    def fingerprint(self) -> str:
        """sha256 of what fixes the ids: the model (vocabulary, merges), added tokens and pre-processing."""
        spec = json.loads(self._hf.to_str())
        keys = ("model", "added_tokens", "normalizer", "pre_tokenizer")
        return hashlib.sha256(json.dumps({k: spec.get(k) for k in keys}, sort_keys=True).encode()).hexdigest()


def _byte_alphabet() -> list[str]:
    """The 256 characters a byte-level BPE writes bytes as (GPT-2's byte-to-unicode map)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = [], 0
    for b in range(256):
        if b in printable:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


def _complete_byte_level(model: dict) -> bool:
    """Whether a tokenizer.json model is a BPE whose vocabulary holds every byte and every merge's parts."""
    vocab = model.get("vocab")
    if model.get("type") != "BPE" or not isinstance(vocab, dict):
        return False
    if not all(ch in vocab for ch in _byte_alphabet()):
        return False
    for merge in model.get("merges") or []:
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(parts, list) or len(parts) != 2 or not all(p in vocab for p in parts):
            return False
    return True


def _import_into_quicktok(hf_tokenizer):
    """Return a quicktok.Tokenizer equivalent to ``hf_tokenizer``, or None if quicktok refuses it."""
    try:
        import quicktok
    except ImportError:  # pragma: no cover - quicktok is a dependency
        return None
    spec = json.loads(hf_tokenizer.to_str())
    if not _complete_byte_level(spec.get("model") or {}):  # quicktok's import crashed the process (SIGSEGV) on a
        return None  # BPE without all 256 byte tokens (issue 30 round 12, U67, U88): tokenizers reads it as it is
    # quicktok treats every added token as special (never matched by encode_ordinary); tokenizers
    # matches non-special added tokens inside text. Only import when the two agree.
    if any(not t.get("special", False) for t in spec.get("added_tokens", [])):
        return None
    tmp = tempfile.mkdtemp(prefix="leviathan-qt-")
    try:
        path = os.path.join(tmp, TOKENIZER_FILE)
        with open(path, "w") as f:
            f.write(hf_tokenizer.to_str())
        with contextlib.redirect_stdout(io.StringIO()):
            quicktok.import_tokenizer(path, "leviathan_import", data_dir=tmp)
        qt = quicktok.Tokenizer("leviathan_import", tmp)  # loads its tables into memory
        probe = "Leviathan: 3 digits, 42 émigrés\n\n  def f(x):\treturn x<|endoftext|>"
        if qt.encode_ordinary(probe) != hf_tokenizer.encode(probe, add_special_tokens=False).ids:
            return None
        return qt
    except Exception:  # noqa: BLE001 - any refusal just means "use tokenizers"
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# training a byte-level BPE


def check_bpe_vocab_size(vocab_size) -> int:
    """A BPE vocabulary size to train: 257 (256 bytes and <|endoftext|>) to 262,144; checked before any work (prepare
    said "training a byte-level BPE with 99,999,999,999 ids" before refusing it). A whole number: '300' was taken as
    300 and True as 1 (issue 30 round 14, B360, B361)."""
    if isinstance(vocab_size, bool) or not is_integer(vocab_size):
        raise UserError(f"BPE vocabulary size must be a whole number such as 8192, got {vocab_size!r:.40}")
    vocab_size = int(vocab_size)
    if vocab_size < 257:
        raise UserError(f"BPE vocabulary size {vocab_size} is too small: it needs 256 byte tokens plus "
                        f"<|endoftext|>; use at least 257 (typical: 4096-32768)")
    if vocab_size > 262_144:
        raise UserError(f"BPE vocabulary size {vocab_size} is above the 262,144 supported here; use a smaller one")
    return vocab_size


def _earlier_files(directory: Path, own: dict) -> list[Path]:
    """The files of an earlier ``Tokenizer.save`` in ``directory`` that this save does not write, removed with it: a
    built-in's save over a BPE's left the BPE's tokenizer.json beside the built-in's record, a folder that neither
    save had written and that did not load (issue 30 round 22, S547). A tokenizer.json is the earlier save's only when
    its record holds the file's sha256 (what ``save`` writes beside it); a user's own file is left alone."""
    if TOKENIZER_FILE in own or not (directory / TOKENIZER_FILE).is_file():
        return []
    try:
        record = json_text.read_file(directory / INFO_FILE)
    except (OSError, ValueError):
        return []
    return [directory / TOKENIZER_FILE] if isinstance(record, dict) and "sha256" in record else []


def _check_not_an_output(directory: Path) -> None:
    """UserError when ``directory`` is, or lies inside, a verb's output (a marker says so): ``load_tokenizer('data1')
    .save('run1')`` wrote tokenizer.json and leviathan_tokenizer.json among a train run's files, no word (issue 30
    round 16, C275), and into a run's step folder it replaced the checkpoint's tokenizer (round 18, G47, G54-G59). A
    user's own tokenizer.json or leviathan_tokenizer.json in a folder with no marker was replaced, no word (round 17,
    E86, E87): only a tokenizer save wrote earlier is written over (``ownership.check_api_folder``)."""
    from ..ownership import check_api_folder

    check_api_folder(directory, "Tokenizer.save", (TOKENIZER_FILE, INFO_FILE), legacy=_saved_here)


def _saved_here(directory: Path) -> bool:
    """Whether ``directory`` holds what ``Tokenizer.save`` wrote there: its leviathan_tokenizer.json, every field as
    save writes it, and a tokenizer.json (a tokenizers JSON) exactly when the record is not a built-in's."""
    try:
        info = json_text.read_file(directory / INFO_FILE)
        if not (isinstance(info, dict) and set(info) - {"sha256"} == {"format", "name", "kind", "vocab_size", "eot_id"}
                and info["format"] in INFO_FORMATS and isinstance(info["name"], str) and isinstance(info["kind"], str)):
            return False
        builtin = info["kind"] == BuiltinTokenizer.kind
        if builtin or not (directory / TOKENIZER_FILE).is_file():
            return builtin and not os.path.lexists(directory / TOKENIZER_FILE)
        spec = json_text.read_file(directory / TOKENIZER_FILE)
    except (OSError, ValueError):
        return False
    return isinstance(spec, dict) and isinstance(spec.get("model"), dict)


def train_bpe(texts: Iterable[str], vocab_size: int, *, min_frequency: int = 2,
              show_progress: bool = False, name: str | None = None) -> HFTokenizer:
    """Train a byte-level BPE with ``vocab_size`` ids ("<|endoftext|>" is id 0) on ``texts``: o200k's regex, then GPT-2's
    byte-to-unicode map, so every byte string is encodable and quicktok can run it. On a small corpus the vocabulary can
    stop short of ``vocab_size`` (no pair left that occurs ``min_frequency`` times): the default ``.name`` is then the
    size reached (``bpe:259`` where 300 were asked) and a warning says so (``short_vocabulary``). The name was the
    request, a size the tokenizer did not have, without a word (issue 30 round 27, S537).
    """
    from tokenizers import Regex, Tokenizer as _HF, decoders, models, pre_tokenizers, trainers

    if isinstance(texts, (str, bytes, bytearray)):  # one text iterated as characters: 257 ids, no merges (C273)
        raise UserError(f"train_bpe takes an iterable of texts, got one {type(texts).__name__} ({texts!r:.40}), which "
                        f"would be read as one text per character; pass a list of texts, e.g. [text]")
    vocab_size = check_bpe_vocab_size(vocab_size)
    from ..value_rules import check_switches

    check_switches("train_bpe", show_progress=show_progress)  # 'no' was the tokenizers library's TypeError (E434)
    if name is not None and (not isinstance(name, str) or not name.strip()):  # saved, then refused by its reader (E433)
        raise UserError(f"train_bpe's name is the tokenizer's spec recorded in meta.json and checkpoints: a text such "
                        f"as 'bpe:{vocab_size}', or None for that default; got {type(name).__name__} {name!r:.40}")
    check_not_builtin_name(name, "train_bpe", f"such as 'bpe:{vocab_size}'")  # before training (round 22, S244)
    if isinstance(min_frequency, bool) or not is_integer(min_frequency) or min_frequency < 0:  # round 14, B362, B363
        raise UserError(f"min_frequency must be a whole number >= 0 (a pair merges once it occurs that often), got "
                        f"{min_frequency!r:.40}")
    tok = _HF(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(O200K_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=[EOT_TEXT], show_progress=show_progress,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    seen = [0]  # texts given: the initial alphabet alone makes 257 ids (round 14, B364: train_bpe([]) gave a BPE)

    def given():
        for t in texts:
            if not isinstance(t, str):  # bytes ended in tokenizers' "'int' object is not an instance of 'str'"
                raise UserError(f"train_bpe takes texts (str), got {type(t).__name__} {t!r:.40}"  # (round 15, B129)
                                + ("; decode them first, e.g. [t.decode('utf-8') for t in texts]"
                                   if isinstance(t, (bytes, bytearray)) else "; pass an iterable of strings"))
            if t:
                seen[0] += 1
                yield t

    try:
        tok.train_from_iterator(given(), trainer=trainer)
    except UnicodeEncodeError as e:  # a lone surrogate: the tokenizers library's raw error (round 29, W745's kind)
        raise UserError(f"train_bpe: a text holds \\u{ord(e.object[e.start]):04x} at character {e.start:,}, a lone "
                        f"surrogate (half of a UTF-16 pair) that is not valid Unicode text; remove it from the "
                        f"text, or decode the source with errors='replace'") from None
    if not seen[0] or tok.get_vocab_size() <= 1:
        raise UserError("cannot train a BPE on an empty corpus; give it some text")
    reached = tok.get_vocab_size()
    if reached < vocab_size:
        import warnings

        warnings.warn(short_vocabulary(reached, vocab_size, min_frequency, name or f"bpe:{reached}"), stacklevel=2)
    return HFTokenizer(tok, name or f"bpe:{reached}")


def short_vocabulary(reached: int, asked: int, min_frequency: int, name: str) -> str:
    """The line saying a BPE stopped short of the ids asked, its name and what to do (``train_bpe``, ``prepare``)."""
    why = "to merge" if min_frequency <= 1 else f"that occurs {min_frequency} or more times"
    return (f"the BPE reached {reached:,} of the {asked:,} ids asked (no pair of its text is left {why}): it is "
            f"named {name} and a model of its data has vocab_size {reached}; give more text for a larger vocabulary")


def check_not_builtin_name(name, who: str, example: str) -> None:
    """UserError when a tokenizer that is not a built-in is to be named like one (``BUILTIN_ENCODINGS``): the names
    are reserved, since a spec that names a built-in is loaded as that built-in. ``train_bpe([text], 300,
    name='o200k_base')`` made a 300-id BPE that ``prepare`` recorded in meta.json as tokenizer 'o200k_base', with no
    tokenizer.json saved: the data folder claimed o200k_base, no word (issue 30 round 22, S244)."""
    if isinstance(name, str) and name.strip().lower() in BUILTIN_ENCODINGS:
        raise UserError(f"{who}: name {name!r} is reserved for the built-in tokenizer {name.strip().lower()} (the "
                        f"reserved names: {', '.join(BUILTIN_ENCODINGS)}): a data folder prepared with it would record "
                        f"that built-in, not this tokenizer; pass another name ({example}), or None for the default")


# --------------------------------------------------------------------------------------------
# loading by spec

_BUILTIN_CACHE: dict[str, BuiltinTokenizer] = {}

_SPEC_HELP = ("use o200k_base (default), cl100k_base, the path of a tokenizer.json, or a directory "
              "holding one (a prepared data dir, a checkpoint); bpe:VOCAB is only valid for "
              "`leviathan prepare`, which trains it")


def _from_json_file(path: Path, name: str) -> HFTokenizer:
    """The tokenizer.json at ``path``, read by Python and parsed by the tokenizers library: its own ``from_file``
    takes only a UTF-8 name, so a folder named 'd\\udcff' (not UTF-8) that prepare wrote was refused by every reader
    as "not a readable tokenizer.json" (issue 30 round 18, G427, G428)."""
    from tokenizers import Tokenizer as _HF

    try:
        text = path.read_text(encoding="utf-8")
        hf = _HF.from_str(text)
    except Exception as e:  # noqa: BLE001 - the library raises plain Exception
        raise UserError(f"{path} is not a readable Hugging Face tokenizer.json ({e}); "
                        f"pass a valid tokenizer.json or a built-in name (o200k_base)") from None
    _refuse_empty_vocab(path, hf)
    _refuse_shared_ids(path, hf)
    _refuse_moved_added_tokens(path, hf, text)
    return HFTokenizer(hf, name)


_DAMAGED = "pass an undamaged tokenizer.json (save the tokenizer again, or prepare the data again)"


def _refuse_empty_vocab(path: Path, hf) -> None:
    """UserError when the tokenizer's model holds no token: a BPE (or Unigram, WordLevel) vocab of nothing loaded as
    a tokenizer of 1 id, its end-of-text added, and ``prepare`` turned 39,000 bytes of text into the 3 document
    separators, meta.json saying vocab_size 1, without a word (issue 30 round 30, Y472, Y695, Y700)."""
    if hf.get_vocab_size(with_added_tokens=False) == 0:
        raise UserError(f"{path}: its model's vocab holds no tokens, so it could encode no text (every document would "
                        f"be dropped): the vocab was emptied or never trained; {_DAMAGED}")


def _refuse_moved_added_tokens(path: Path, hf, text: str) -> None:
    """UserError when an added token of the file is not at the id the file gives it: the tokenizers library moves an
    added token whose id a vocab token holds to a new id past the vocab without a word (``<|pad|>`` given id 5, the
    vocab's '%', became id 300: a 301-id tokenizer whose id 5 decodes to '%'; issue 30 round 30, Y691, Y698), the
    kind ``_refuse_shared_ids`` refuses within the vocab (W421)."""
    try:
        added = json.loads(text).get("added_tokens") or []
    except (ValueError, AttributeError):
        return  # the library read it: a shape it takes, but not the one read here (nothing to compare)
    for entry in added if isinstance(added, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            continue
        given, got = entry.get("id"), hf.token_to_id(entry["content"])
        if isinstance(given, int) and got is not None and got != given:
            holder = hf.id_to_token(given)
            held = f", the id of the vocab's {holder!r:.40}" if holder is not None and holder != entry["content"] else ""
            raise UserError(f"{path}: added token {entry['content']!r:.40} is given id {given}{held}, so the "
                            f"tokenizers library moved it to id {got} (two tokens on one id, and a vocabulary one "
                            f"id larger): the added tokens were edited or damaged; {_DAMAGED}")


def _refuse_shared_ids(path: Path, hf) -> None:
    """UserError when the tokenizer ``hf`` read from ``path`` gives one id to two tokens: the tokenizers library
    loads such a vocab without a word (a 300-id tokenizer whose id then decodes to one of two texts, issue 30 round
    29, W421); no trainer writes one. A token listed both in the model's vocab and as an added token, under its one
    id, is one token."""
    owner: dict[int, str] = {}
    for token, number in sorted(hf.get_vocab(with_added_tokens=True).items(), key=lambda item: (item[1], item[0])):
        if number in owner:
            raise UserError(f"{path}: id {number} is given to two tokens, {owner[number]!r:.40} and {token!r:.40}, "
                            f"so decoding it could give either: the vocab was edited or damaged; pass an undamaged "
                            f"tokenizer.json (save the tokenizer again, or prepare the data again)")
        owner[number] = token


def _tokenizer_record(directory: Path) -> dict:
    """{name, eot_id, vocab_size} of a folder: its leviathan_tokenizer.json, else a data folder's meta.json
    (``data.meta.read_meta``, checked), else empty. A record that is there but no JSON object (``[record]``, a folder,
    a pipe) is refused as damaged: it was passed over, and the folder loaded as an unrecorded tokenizer, the record's
    sha256 check of tokenizer.json with it (issue 30 round 23, U523, U527)."""
    p = directory / INFO_FILE
    if (what := not_a_file(p)) is not None:  # was read as no record (round 23, U379, U523)
        raise UserError(f"{str(p)!r} {what}, where {directory}'s tokenizer record should be; move it away, then "
                        f"{_recreate(directory)}")
    if p.is_file():
        try:
            data = json_text.read_file(p, object_pairs_hook=json_text.no_repeats)  # a key twice (round 29's kind)
        except json.JSONDecodeError as e:
            raise UserError(f"{p} is not valid JSON ({e}); re-create the directory") from None
        if not isinstance(data, dict):  # [record] was passed over, its sha256 check with it (round 23, U523, U527)
            shown = {"list": "array", "str": "string", "NoneType": "null"}.get(type(data).__name__, "number")
            raise UserError(f"{p} is a JSON {shown}, not a tokenizer record (an object with name, eot_id and "
                            f"vocab_size): the directory was damaged or edited by hand; {_recreate(directory)}")
        _check_record_format(p, data)
        info = {"name": data.get("name", data.get("tokenizer")), "eot_id": data.get("eot_id"),
                "vocab_size": data.get("vocab_size"), "kind": data.get("kind"), "sha256": data.get("sha256")}
        if info["name"] is not None and not isinstance(info["name"], str):
            raise UserError(f"{p}: field 'name' is {info['name']!r}, not a tokenizer name; the directory was "
                            f"damaged or edited by hand; re-create it")
        return info
    meta = find_meta(directory)
    return {"name": meta.tokenizer, "eot_id": meta.eot_id, "vocab_size": meta.vocab_size} if meta else {}


INFO_FORMATS = (1,)  # the formats of leviathan_tokenizer.json this version reads (``Tokenizer.save`` writes the last)


def _check_record_format(path: Path, data: dict) -> None:
    """UserError when the record ``path`` says a ``format`` this version does not know: format 2 was read as format
    1, no word (issue 30 round 22, S250); a newer writer's fields may mean other things. A record with no format
    (the cache records of earlier versions) is read as before."""
    said = data.get("format")
    if "format" in data and (type(said) is not int or said not in INFO_FORMATS):
        raise UserError(f"{path}: format {said!r:.20} is not one this version of leviathan reads (it knows "
                        f"{', '.join(map(str, INFO_FORMATS))}); it was written by a newer version or edited by hand: "
                        f"load it with the version that saved it, or save the tokenizer again with this one")


def _check_step_companions(directory: Path) -> None:
    """A checkpoint's step folder (it holds state.json): its tokenizer files must be the ones its state.json
    fingerprints. ``load_tokenizer(step)`` loaded another data folder's tokenizer.json swapped into a step folder
    without a word, while ``checkpoint.read.load_tokenizer(run)`` refused it (issue 30 round 15, B280)."""
    from ..checkpoint.state import STATE_FILE, read_step_state, verify_companions

    if (directory / STATE_FILE).is_file():
        verify_companions(directory, read_step_state(directory), ("tokenizer.json", "leviathan_tokenizer.json"),
                          optional=True)


def _from_directory(directory: Path) -> Tokenizer:
    _check_step_companions(directory)
    info = _tokenizer_record(directory)
    name = info.get("name")
    if (directory / TOKENIZER_FILE).is_file():
        if name in (None, "") or name in BUILTIN_ENCODINGS:
            name = str(directory.resolve())
        tok: Tokenizer = _from_json_file(directory / TOKENIZER_FILE, str(name))
    elif (what := not_a_file(directory / TOKENIZER_FILE)) is not None:  # not "holds none" (round 23, U379, U383)
        raise UserError(f"{str(directory / TOKENIZER_FILE)!r} {what}, where {directory}'s tokenizer file should be; "
                        f"move it away and copy the tokenizer.json back, or re-run `leviathan prepare`")
    elif name in BUILTIN_ENCODINGS:
        tok = load_tokenizer(name)
    elif name:
        raise UserError(f"{directory} records tokenizer {name!r} but holds no {TOKENIZER_FILE}; "
                        f"copy the tokenizer.json back or re-run `leviathan prepare`")
    else:
        raise UserError(f"{directory} holds no tokenizer ({TOKENIZER_FILE}, {INFO_FILE} or meta.json)"
                        f"{_run_folder_hint(directory)}; {_SPEC_HELP}")
    for key in ("eot_id", "vocab_size"):
        want = info.get(key)
        if want is not None and (isinstance(want, bool) or not isinstance(want, int)):
            raise UserError(f"{directory}: field {key!r} of its tokenizer record is {want!r}, not an integer; the "
                            f"directory was damaged or edited by hand; {_recreate(directory)}")
        if want is not None and want != getattr(tok, key):
            raise UserError(f"tokenizer in {directory} has {key}={getattr(tok, key)} but its metadata says "
                            f"{want}; the directory was edited by hand; {_recreate(directory)}")
    check_meta_tokenizer(directory, tok)  # a data folder's meta.json too, not only the tokenizer's own record
    _check_saved_file(directory, info, tok)  # after: a data folder's meta.json names its own fix (prepare again)
    return tok


def _check_saved_file(directory: Path, info: dict, tok: Tokenizer) -> None:
    """UserError when ``Tokenizer.save``'s record does not describe the tokenizer found: its ``kind`` edited
    ('tokenizers' -> 'tiktoken') was ignored, and a tokenizer.json edited (half its merges cut) loaded other ids, no
    word (issue 30 round 20, M89, M90). A record of an older save holds no sha256 and is not checked for it."""
    kind, digest = info.get("kind"), info.get("sha256")
    if kind is not None and kind != tok.kind:
        raise UserError(f"{directory / INFO_FILE} says kind {kind!r} but the folder holds a {tok.kind!r} tokenizer; "
                        f"the directory was edited by hand; {_recreate(directory)}")
    if digest is not None and (directory / TOKENIZER_FILE).is_file():
        found = hashlib.sha256((directory / TOKENIZER_FILE).read_bytes()).hexdigest()
        if found != digest:
            raise UserError(f"{directory / TOKENIZER_FILE} is not the file Tokenizer.save wrote (sha256 "
                            f"{found[:12]}..., {INFO_FILE} records {str(digest)[:12]}...): it was edited or replaced; "
                            f"{_recreate(directory)}")


def _check_export_companions(directory: Path) -> None:
    """An export's tokenizer files must be the ones its marker fingerprints (``leviathan.ownership``): a tokenizer.json
    of another preparation copied into an export was taken by ``prepare --tokenizer EXPORT`` and ``load_tokenizer``
    without a word, while eval of the same folder refuses it (issue 30 round 15, A195). A step folder's are checked
    against its state.json (``_check_step_companions``: B280, A197)."""
    from ..ownership import check_output_files, export_again

    if not (directory / "state.json").is_file():
        check_output_files(directory, f"{export_again(directory)}, or pass the run's step folder as the tokenizer",
                           (TOKENIZER_FILE, INFO_FILE))


def _recreate(directory: Path) -> str:
    """How to make ``directory``'s tokenizer files again: "re-create it" said not how (round 15, A196, A42)."""
    from ..ownership import export_again, read_marker

    try:
        marker = read_marker(directory)
    except UserError:
        marker = None
    if marker is not None and marker.verb == "export":
        return f"re-create it: {export_again(directory)}"
    if (directory / "state.json").is_file():
        return "re-create it: restore the step folder from a copy, or use another step of the run"
    if (directory / "meta.json").is_file():
        return "re-create it: prepare the data again (leviathan prepare CORPUS --out DIR --tokenizer ...)"
    return ("re-create it with what wrote it (a tokenizer's folder: Tokenizer.save it again; a bench cache folder: "
            "delete it, and bench builds it again)")


def _run_folder_hint(directory: Path) -> str:
    """For a run folder, its newest step folder, which holds the tokenizer: the line said only "holds no tokenizer"
    of a folder eval, export and generate take for its newest step (round 15, A198)."""
    from ..checkpoint.layout import latest_checkpoint

    step = latest_checkpoint(directory) if (directory / "checkpoints").is_dir() else None
    return (f"; it is a run folder: its newest step folder {str(step)!r} holds the run's tokenizer, pass that"
            if step is not None and (step / TOKENIZER_FILE).is_file() else "")


def load_tokenizer(spec) -> Tokenizer:
    """``o200k_base`` | ``cl100k_base`` | path to a tokenizer.json | a directory (data dir, checkpoint)."""
    if isinstance(spec, Tokenizer):
        return spec
    if spec is None:
        spec = "o200k_base"
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str) or not spec:
        raise UserError(f"tokenizer spec {spec!r} is not a string; {_SPEC_HELP}")
    if spec in BUILTIN_ENCODINGS:
        if spec not in _BUILTIN_CACHE:
            _BUILTIN_CACHE[spec] = BuiltinTokenizer(spec)
        return _BUILTIN_CACHE[spec]
    if spec.startswith("bpe:"):
        raise UserError(f"tokenizer {spec!r} is a BPE trained by `leviathan prepare`; load it from the "
                        f"prepared data dir (or its tokenizer.json), not by name")
    refuse_file_typed_as_folder(spec, "load_tokenizer: spec")  # 'tok.json/' read the file (round 28, U778)
    path = Path(spec).expanduser()
    if os.path.isdir(path):  # os.path: Path.is_dir raised ENAMETOOLONG for a 300-byte name (round 18, G238)
        from ..swap_lock import reading_whole

        with reading_whole(path, "load_tokenizer"):  # a Tokenizer.save renaming its files waited for (U515's kind)
            _check_export_companions(path)
            return _from_directory(path)
    if os.path.isfile(path):
        return _from_json_file(path, str(path.resolve()))
    # a device, a dead link, a long name: "no such file" (G233); a NUL: "no such built-in, file or directory" (Y591)
    if os.path.lexists(path) or name_too_long(path) or nul_byte(spec):
        raise UserError(f"tokenizer {spec!r} {missing(path)}; {_SPEC_HELP}")
    lowered = spec.lower().replace("-", "_")
    if lowered.startswith("bpe:"):  # 'BPE:300' in prepare was told bpe:VOCAB is for prepare (round 29, V43)
        raise UserError(f"unknown tokenizer {spec!r}: the bpe: prefix is written in lower case, as the built-in names "
                        f"are; write 'bpe:{spec[4:]}' (a BPE that `leviathan prepare` trains)")
    hint = next((b for b in BUILTIN_ENCODINGS if lowered.startswith(b[:4])), None)
    extra = f"; did you mean {hint!r}?" if hint else ""
    raise UserError(f"unknown tokenizer {spec!r} (no such built-in, file or directory){extra}; {_SPEC_HELP}")


def split_for_threads(text: str, max_chars: int) -> list[str]:
    """Cut ``text`` after "\\n"+letter near every ``max_chars`` chars (ids unchanged; see ``_SAFE_CUT``). ``max_chars``
    0 or True was taken as no cut and bytes were cut as text (issue 30 round 22): both are refused."""
    from ..value_rules import whole_problem

    if not isinstance(text, str):
        raise ArgumentTypeError(f"split_for_threads: text must be a str, got {type(text).__name__}; decode it first")
    if (problem := whole_problem(max_chars, 1, "a whole number >= 1")) is not None:
        raise ArgumentValueError(f"split_for_threads: max_chars {problem}; pass the piece length in characters")
    if len(text) <= max_chars:
        return [text]
    pieces, start = [], 0
    while len(text) - start > max_chars:
        m = _SAFE_CUT.search(text, start + max_chars)
        if m is None:
            break
        pieces.append(text[start:m.end()])
        start = m.end()
    pieces.append(text[start:])
    return pieces

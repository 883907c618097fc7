"""A tokenizer transformers loads, for an exported model: ``write_hf_tokenizer`` (tokenizer.json +
tokenizer_config.json) and ``builtin_tokenizer_json``, the byte-level BPE equivalent of a quicktok built-in
encoding (o200k_base, cl100k_base): ranks from quicktok, merges reconstructed as transformers'
TikTokenConverter does, the encoding's own pre-tokenizer regex, checked against quicktok's ids on a probe.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import json_text
from ..errors import UserError
from ..io import cache_root

PROBE_TEXT = ("The quick brown fox, 42 times: jumps over the lazy dog.\nLeviathan's émigrés said \"hello\"  "
              "and   left.\n\n\tdef f(x): return x**2  # 3.14159")

# cl100k_base's pre-tokenizer (tiktoken's pat_str, verbatim); o200k's lives in data.tokenizer.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
                  r"""|\s*[\r\n]|\s+(?!\S)|\s+""")


def builtin_tokenizer_json(name: str) -> str:
    """A ``tokenizer.json`` (byte-level BPE) equivalent to the quicktok built-in encoding ``name``.

    Cached under ``$LEVIATHAN_CACHE`` (default ~/.cache/leviathan) after the first build (seconds).
    """
    from ..data.tokenizer import O200K_PATTERN

    patterns = {"o200k_base": O200K_PATTERN, "cl100k_base": CL100K_PATTERN}
    if name not in patterns:
        raise UserError(f"no tokenizer.json recipe for built-in encoding {name!r}; known: {', '.join(patterns)}")
    cache = cache_root() / "tokenizers" / f"{name}.tokenizer.json"
    if cache.is_file():
        return cache.read_text()
    import quicktok

    enc = quicktok.get_encoding(name)
    ranks, specials = _ranks_and_specials(enc)
    tok = _byte_level_bpe(ranks, specials, patterns[name], name)
    probe = PROBE_TEXT + " 1234567 ÆØÅ 日本語のテキスト 🙂"
    if tok.encode(probe, add_special_tokens=False).ids != list(enc.encode_ordinary(probe)):
        raise UserError(f"the tokenizer.json rebuilt for {name} does not reproduce quicktok's ids; "
                        f"cannot export a transformers tokenizer for it")
    text = tok.to_str()
    cache.parent.mkdir(parents=True, exist_ok=True)
    from ..io import atomic_write_text

    atomic_write_text(cache, text)
    return text


def _ranks_and_specials(enc) -> tuple[dict[bytes, int], list[tuple[int, str]]]:
    """({token bytes: rank} of the ordinary tokens, [(id, text)] of the special ones) of a quicktok encoding."""
    ranks: dict[bytes, int] = {}
    specials: list[tuple[int, str]] = []
    for i in range(enc.n_vocab):
        try:
            b = bytes(enc.decode_single_token_bytes(i))
        except Exception:  # noqa: BLE001 - unused ids inside the vocabulary range
            continue
        if enc.is_special_token(i):
            specials.append((i, b.decode("utf-8")))
        else:
            ranks[b] = i
    return ranks, specials


def _byte_level_bpe(ranks: dict[bytes, int], specials: list[tuple[int, str]], pattern: str, name: str):
    """A ``tokenizers.Tokenizer`` with these ranks, the merges they imply, ``pattern`` and the special tokens."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    byte_encoder = bytes_to_unicode()

    def to_str(b: bytes) -> str:
        return "".join(byte_encoder[c] for c in b)

    # tiktoken's BPE merges by rank; the HF equivalent lists, for each token, the split into two
    # tokens that exist, ordered by the merged token's rank (transformers' TikTokenConverter)
    merges = []
    for token, rank in ranks.items():
        if len(token) == 1:
            continue
        local = [(token[:k], token[k:]) for k in range(1, len(token)) if token[:k] in ranks and token[k:] in ranks]
        local.sort(key=lambda p: (ranks[p[0]], ranks[p[1]]))
        merges += [(rank, p) for p in local]
    merges.sort(key=lambda m: m[0])
    vocab = {to_str(b): i for b, i in ranks.items()}
    vocab.update({text: i for i, text in specials})  # so the added special tokens keep their ids
    tok = Tokenizer(models.BPE(vocab, [(to_str(a), to_str(b)) for _, (a, b) in merges], fuse_unk=False,
                               ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    for i, text in sorted(specials):
        got = tok.add_special_tokens([AddedToken(text, normalized=False, special=True)])
        if tok.token_to_id(text) != i:
            raise UserError(f"special token {text!r} of {name} got id {tok.token_to_id(text)} instead of {i} "
                            f"(added {got}); the tokenizer.json recipe needs updating")
    return tok


def _eot_text(tokenizer) -> str:
    hf = getattr(tokenizer, "_hf", None)
    if hf is not None:
        tok = hf.id_to_token(int(tokenizer.eot_id))
        if tok:
            return tok
    return "<|endoftext|>"


HF_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def write_hf_tokenizer(tokenizer, directory: str | os.PathLike, model_max_length: int | None = None) -> None:
    """Make ``directory`` loadable by ``AutoTokenizer``: tokenizer.json + tokenizer_config.json. A folder that is a
    verb's output, or one holding a tokenizer.json or tokenizer_config.json this function did not write, is refused
    (``ownership.check_api_folder``): a user's own tokenizer.json was replaced without a word (issue 30 round 25,
    Y628), where ``Tokenizer.save`` refuses the same case. The verbs write into folders of their own
    (``write_hf_tokenizer_owned``). A folder that is not there is made, as ``Tokenizer.save`` and ``save_pretrained``
    make theirs (it was a raw FileNotFoundError naming tokenizer.json, round 25, Y629), and removed again when the
    write fails; a storage failure is an ``errors.StorageError``."""
    from ..locking import missing_folders, remove_if_empty
    from ..ownership import check_api_folder
    from ..storage import api_writes

    from ..integers import as_int, is_integer

    # numpy's ints are whole numbers (round 29, W575), kept as a plain int for tokenizer_config.json; True is not 1
    if model_max_length is not None and (not is_integer(model_max_length) or model_max_length < 1):
        raise UserError(f"write_hf_tokenizer: model_max_length must be a positive whole number of positions (or None "
                        f"for no limit), got {model_max_length!r:.40}; pass the model's max_position_embeddings")
    model_max_length = as_int(model_max_length)
    check_api_folder(directory, "write_hf_tokenizer", HF_TOKENIZER_FILES, legacy=_written_here)
    with api_writes("write_hf_tokenizer", directory):
        created = missing_folders(Path(directory))
        try:
            Path(directory).mkdir(parents=True, exist_ok=True)
            write_hf_tokenizer_owned(tokenizer, directory, model_max_length)
        except BaseException:
            remove_if_empty(created)
            raise


def _written_here(directory: Path) -> bool:
    """Whether ``directory``'s tokenizer_config.json is one this module wrote (it records ``leviathan_tokenizer``)."""
    try:
        return "leviathan_tokenizer" in json_text.read_file(directory / "tokenizer_config.json")
    except (OSError, ValueError, TypeError):
        return False


def write_hf_tokenizer_owned(tokenizer, directory: str | os.PathLike, model_max_length: int | None = None) -> None:
    """``write_hf_tokenizer`` without its check of whose folder ``directory`` is: for a verb writing into a folder of
    its own (an export's temporary folder, the harness's view). Its place is still a path (a NUL byte was open's raw
    ValueError, issue 30 round 27, S555's kind)."""
    from ..ownership import check_path_given

    check_path_given(directory, "write_hf_tokenizer_owned")
    directory = Path(directory)
    if hasattr(tokenizer, "to_json"):
        text = tokenizer.to_json()
    elif getattr(tokenizer, "kind", None) == "builtin":
        text = builtin_tokenizer_json(tokenizer.name)
    else:
        raise UserError(f"cannot write a tokenizer.json for {tokenizer!r:.80}: it is neither a tokenizer.json-based "
                        f"tokenizer nor a known built-in encoding; pass the model's tokenizer, loaded with "
                        f"leviathan.data.tokenizer.load_tokenizer(RUN_OR_DATA)")
    (directory / "tokenizer.json").write_text(text)
    eot = _eot_text(tokenizer)
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eot, "bos_token": None, "unk_token": None,
              "pad_token": eot, "add_bos_token": False, "add_eos_token": False,
              "clean_up_tokenization_spaces": False, "model_max_length": model_max_length or 1_000_000,
              "leviathan_tokenizer": getattr(tokenizer, "name", None)}
    (directory / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")

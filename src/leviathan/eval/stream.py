"""The evaluation stream: the tokens a model is scored on and the UTF-8 bytes they encode (docs/DESIGN.md §7).

Every evaluation (a run's validation, ``leviathan eval``, a sweep's eval sets, ``analyze frequency --runs``) scores
one ``EvalStream``:

    stream = EvalStream.from_split("data/stdlib", "val", max_tokens=65_536)     # a prepared split
    stream = EvalStream.from_text("wiki.valid.tokens", tokenizer, max_tokens)    # a raw text file
    evaluate(model, stream.tokens, run_seq_len(cfg), 8, num_bytes=stream.num_bytes)

A split's byte count comes from meta.json; a text file's is its UTF-8 size (``data.prepare.prepare_eval_text``).
``max_tokens`` caps the *predictions* (the stream keeps its first ``max_tokens + 1`` tokens) and scales the byte
count by the share of tokens kept: an estimate that makes bits per byte of a prefix comparable with the whole
stream's (over tens of thousands of tokens the difference is noise).

Footguns: a text file must be tokenized with the tokenizer the model was trained with (the data
folder's or the checkpoint's), or the ids mean other strings; ``num_bytes`` is None when a split
records no byte count, and bits per byte are then None too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError, missing


@dataclass(frozen=True)
class EvalStream:
    """Tokens to score (stream order) and the UTF-8 bytes they encode (None: unknown).

    ``source`` names where the tokens come from (``DATA_DIR:SPLIT`` or the text file's path), for messages.
    """

    tokens: np.ndarray
    num_bytes: float | None
    source: str
    data_dir: str | None = None  # the prepared data folder of a split's stream: its tokenizer is checked against the
    # model's (``evaluate_checkpoint``, round 22 S397); None for a text file or a hand-made stream

    @classmethod
    def from_split(cls, data_dir: str | os.PathLike, split: str = "val", max_tokens: int | None = None) -> "EvalStream":
        """A split of a prepared data folder (read as a memmap), capped to ``max_tokens`` predictions."""
        from ..data.loader import TokenDataset

        check_max_tokens(max_tokens)
        ds = TokenDataset(data_dir, split)
        return cls(ds.tokens, ds.num_bytes or None, f"{data_dir}:{split}", os.fspath(data_dir)).capped(max_tokens)

    @classmethod
    def from_text(cls, path: str | os.PathLike, tokenizer, max_tokens: int | None = None) -> "EvalStream":
        """A raw UTF-8 text file tokenized with ``tokenizer`` (a ``load_tokenizer`` spec or object)."""
        from ..data.prepare import prepare_eval_text

        check_max_tokens(max_tokens)  # before the text is tokenized
        if not os.path.isfile(path):  # a folder or a device was said not to exist (issue 30 round 6)
            what = (missing(path) if not os.path.exists(path) else  # a 300-byte name: ENAMETOOLONG (round 14, B328)
                    "is a folder" if Path(path).is_dir() else "is not a regular file (a device, a pipe or a socket)")
            raise UserError(f"text file {str(path)!r} {what}; pass the path of a UTF-8 text file")
        tokens, num_bytes = prepare_eval_text(str(path), tokenizer)
        return cls(np.asarray(tokens, dtype=np.int64), num_bytes, str(path)).capped(max_tokens)

    def capped(self, max_tokens: int | None) -> "EvalStream":
        """The first ``max_tokens`` predictions (``max_tokens + 1`` tokens), bytes scaled by the share kept; None:
        every token (``check_max_tokens``)."""
        check_max_tokens(max_tokens)
        if max_tokens is None or len(self.tokens) <= max_tokens + 1:
            return self
        kept = max_tokens + 1
        num_bytes = self.num_bytes * (kept / len(self.tokens)) if self.num_bytes else self.num_bytes
        return EvalStream(self.tokens[:kept], num_bytes, self.source, self.data_dir)

    def _more_text(self) -> str:
        """The way to something to score: the line had no fix (issue 30 round 15, A54)."""
        if self.source.endswith(":val"):
            return ("prepare the data with a validation split (leviathan prepare ... --val-fraction 0.01, or "
                    "--val-source FILE), or evaluate another split (--split train)")
        if ":" in self.source and not Path(self.source).exists():
            return "evaluate another split of the data (--split val or --split train)"
        return "pass a longer text"

    def check_fits(self, vocab_size: int) -> None:
        """UserError unless the stream has a prediction to score and only ids below ``vocab_size``."""
        if len(self.tokens) < 2:
            raise UserError(f"{self.source} has fewer than 2 tokens; nothing to evaluate: {self._more_text()}")
        top = int(np.max(self.tokens))
        if top >= vocab_size:
            raise UserError(f"{self.source} holds token ids up to {top}, beyond the model's vocabulary "
                            f"({vocab_size}); was it tokenized with another tokenizer?")


def short_split_problem(what: str, split: str, tokens: int, seq_len: int, setting: str) -> str:
    """The line for a split of ``what`` (a data folder, as its option names it) that holds fewer tokens than one
    evaluation window (``seq_len`` + 1 tokens: ``seq_len`` targets), named by the ``setting`` that sets the window. A
    val split of 4 tokens passed every check (round 27's R59 refuses fewer than 2), and the rows and the run's summary
    gave a val loss measured on 3 targets (issue 30 round 28, T13). One window is the floor: such a loss is that of a
    sequence's first few positions, with almost no context, so it compares with no other run's; a window is the
    evaluator's unit, the least that scores every position the model was trained on."""
    fix = ("prepare the data with more validation text (leviathan prepare ... --val-source FILE, or a larger "
           "--val-fraction)" if split == "val" else f"prepare the data with more text in its {split} split")
    return (f"{what}: its {split} split holds {tokens:,} tokens, fewer than one evaluation window ({setting} {seq_len:,} "
            f"+ 1): its loss would be measured on {max(tokens - 1, 0):,} target(s); {fix}, or lower {setting}")


def check_max_tokens(max_tokens) -> None:
    """UserError unless ``max_tokens`` is None (no cap) or a whole number >= 1: ``from_split(D, 'val',
    max_tokens=0)`` returned the whole split (0 read as "no cap", the falsy-as-unset kind of round 21's P234), and
    ``max_tokens=True`` a stream of 2 tokens (True taken as 1), no word (issue 30 round 22, S389, S390)."""
    from ..value_rules import api_check, whole_problem

    if max_tokens is not None:
        api_check("EvalStream", "max_tokens", whole_problem(max_tokens, 1, "a whole number >= 1 (or None: no cap)"),
                  "pass the number of predictions to score, or None for the whole stream")


def run_seq_len(cfg, requested: int | None = None, option: str = "--seq-len") -> int:
    """Window length to evaluate a run with: ``requested``, else the run's ``data.seq_len`` (``cfg``, its resolved RunConfig:
    the context the model was trained with). A window longer than ``model.max_position_embeddings`` is a UserError
    naming ``option``; so is a ``requested`` that is not None or a whole number >= 1: ``evaluate_checkpoint(...,
    seq_len=0)`` scored with the run's 32 (0 read as unset), True as 1 and 2.5 as 2, no word (issue 30 round 22, the
    kind of S389)."""
    if requested is not None:
        from ..value_rules import whole_problem

        problem = whole_problem(requested, 1, "a whole number >= 1 (or None: the run's data.seq_len)")
        if problem is not None:
            raise UserError(f"{option}: {problem}; pass the window length in tokens, or leave it out")
    seq_len = int(requested if requested is not None else cfg.data.seq_len)
    limit = cfg.model.max_position_embeddings
    if seq_len > limit:
        raise UserError(f"{option} {seq_len} exceeds the model's max_position_embeddings ({limit}); "
                        f"pass a smaller {option}")
    return seq_len

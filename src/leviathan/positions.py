"""How much of a prompt and of the requested new tokens fit a model's positions, said out loud.

    keep, new, notes = fit_positions(prompt_len=900, max_new_tokens=500, limit=1024)
    # keep 900, new 124, notes ["note: --max-new-tokens 500 does not fit: ..."]

``generation.generate`` stops at ``limit`` tokens and refuses a prompt of ``limit`` tokens or more (it kept the last
``limit - 1`` without a word until round 16, C102); done silently, that looked like a model that stopped early or
ignored the prompt's start. ``leviathan generate`` crops the prompt itself with this (the text it prints continues
what the model saw) and prints each note on stderr.

``model_positions`` is the one reader of a model's number of positions, for scoring windows, generation and
adoption: leviathan's config and most of transformers' name it ``max_position_embeddings``, GPT-2's ``n_positions``.
"""

from __future__ import annotations


def model_positions(model) -> int | None:
    """The number of positions of a model (leviathan's or transformers'), or of its config; None where it names none.

    A bool or a non-integer value is no limit a model could have been built with, so it reads as none."""
    config = getattr(model, "config", model)
    for name in ("n_positions", "max_position_embeddings"):
        limit = getattr(config, name, None)
        if isinstance(limit, int) and not isinstance(limit, bool):
            return limit
    return None


def fit_positions(prompt_len: int, max_new_tokens: int, limit: int) -> tuple[int, int, list[str]]:
    """(prompt tokens kept, the last ones; new tokens that fit; one note per limit applied). Each argument is a whole
    number (``limit`` >= 1): -1, 'a' and True were computed with, or Python's TypeError (issue 30 round 22)."""
    from .value_rules import api_check, whole_problem

    for name, value, least in (("prompt_len", prompt_len, 0), ("max_new_tokens", max_new_tokens, 0),
                               ("limit", limit, 1)):
        api_check("fit_positions", name, whole_problem(value, least, f"a whole number >= {least}"),
                  "pass token counts (limit: the model's positions, model_positions(model))")
    keep = min(prompt_len, limit - 1)
    new = max(0, min(max_new_tokens, limit - keep))
    notes = []
    if keep < prompt_len:
        notes.append(f"note: the prompt has {prompt_len:,} tokens but the model has {limit:,} positions: only its "
                     f"last {keep:,} tokens are used")
    if new < max_new_tokens:
        notes.append(f"note: --max-new-tokens {max_new_tokens:,} does not fit: {keep:,} prompt tokens + {new:,} new "
                     f"fill the model's {limit:,} positions; generating {new:,}")
    return keep, new, notes


def check_within_positions(past: int, length: int, limit: int) -> None:
    """ValueError when ``past`` cached positions and ``length`` new ids pass the model's ``limit`` positions:
    ``CausalLM`` given 65 ids with 64 positions returned logits for position 65 without a word, while ``evaluate``
    refuses such a window and ``generate`` stops at the limit (issue 30 round 21, P425). Called only past the limit,
    from a shape comparison, so compiled graphs hold no check (as ``check_input_ids`` keeps value reads out). Each
    argument is a whole number (``limit`` >= 1), as ``fit_positions``' are: a negative ``past`` passed (round 28,
    U565); a ValueError (a UserError too, ``ArgumentValueError``) or TypeError (``ArgumentTypeError``)."""
    from .value_rules import check_whole

    for name, value, least in (("past", past, 0), ("length", length, 0), ("limit", limit, 1)):
        check_whole("check_within_positions", name, value, least, fix="pass token counts (limit: the model's "
                    "positions, model_positions(model))")
    if past + length > limit:
        cached = f"{past:,} cached + {length:,} new" if past else f"{length:,}"
        raise ValueError(f"the input reaches position {past + length:,} ({cached} ids), past the model's "
                         f"max_position_embeddings ({limit:,}); pass at most {limit:,} positions: crop the sequence, "
                         f"or score a long text in windows of at most {limit:,} (leviathan.eval.perplexity.evaluate)")

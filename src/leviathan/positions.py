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


def check_within_positions(past: int, length: int, limit: int, api: str | None = None) -> None:
    """ValueError when ``past`` cached positions and ``length`` new ids pass the model's ``limit`` positions:
    ``CausalLM`` given 65 ids with 64 positions returned logits for position 65 without a word, while ``evaluate``
    refuses such a window and ``generate`` stops at the limit (issue 30 round 21, P425). Called only past the limit,
    from a shape comparison, so compiled graphs hold no check (as ``check_input_ids`` keeps value reads out). Each
    argument is a whole number (``limit`` >= 1), as ``fit_positions``' are: a negative ``past`` passed (round 28,
    U565); a ValueError (a UserError too, ``ArgumentValueError``) or TypeError (``ArgumentTypeError``). ``api`` (the
    caller's name) starts the line when given: both HF classes ask this of a forward without position_ids (round 30,
    Y514), whose explicit positions past the limit are refused since round 29 (W525)."""
    from .value_rules import check_whole

    for name, value, least in (("past", past, 0), ("length", length, 0), ("limit", limit, 1)):
        check_whole("check_within_positions", name, value, least, fix="pass token counts (limit: the model's "
                    "positions, model_positions(model))")
    if past + length > limit:
        from .errors import ArgumentValueError  # a UserError too (round 30: it was a plain ValueError)

        cached = f"{past:,} cached + {length:,} new" if past else f"{length:,}"
        where = f"{api}: " if api else ""
        raise ArgumentValueError(f"{where}the input reaches position {past + length:,} ({cached} ids), past the "
                                 f"model's max_position_embeddings ({limit:,}); pass at most {limit:,} positions: "
                                 f"crop the sequence, or score a long text in windows of at most {limit:,} "
                                 f"(leviathan.eval.perplexity.evaluate)")


def check_counted_positions(model, length: int | None, cache, api: str) -> None:
    """``check_within_positions`` for a Hugging Face forward given no position_ids, which counts them itself from
    what ``cache`` holds: ``length`` ids after it past the ``model``'s positions ran on rotary angles it was never
    trained on, while the same positions given as position_ids are refused (issue 30 round 30, Y514, decided: refused
    in both of leviathan's HF classes, as leviathan's own ``CausalLM`` refuses them since round 21, P425). A shape
    comparison only (no value is read); nothing where the model names no limit or the length is unknown."""
    limit = model_positions(model)
    if limit is None or length is None:
        return
    past = cache.get_seq_length() if cache is not None and hasattr(cache, "get_seq_length") else 0
    if isinstance(past, int) and past + length > limit:
        check_within_positions(past, length, limit, api)


def check_generation_room(limit: int | None, max_length: int, prompt_length: int, max_new_tokens: int | None,
                          api: str, prompt_said: str | None = None) -> None:
    """``ArgumentValueError`` (a UserError) before a Hugging Face ``generate`` starts when its ``max_length`` tokens
    (the prompt's ``prompt_length`` and ``max_new_tokens``, or ``max_length`` itself) pass the model's ``limit``
    positions: the forward's position check (round 29, W525) stopped it partway, with a line about position_ids the
    caller never passed and an evaluation's fix (issue 30 round 30, Y495, Y496, Y517). The fix named is the argument
    the caller gave: max_new_tokens <= limit - prompt, as leviathan's own ``generate`` fits a continuation
    (``fit_positions``); a prompt of ``limit`` ids or more is refused as that ``generate`` refuses it (round 16,
    C102). Nothing is checked where the model names no limit (None). ``prompt_said`` names what fills the prompt's
    positions when they are not all ids ("3 embeddings (inputs_embeds)", "60 cached positions and 3 ids"): counted as
    the ids alone, the line named a room past the positions (issue 30 round 31, AA108, AA105)."""
    from .errors import ArgumentValueError

    if limit is None or max_length <= limit:
        return
    where = f"the model's {limit:,} positions (max_position_embeddings)"
    said = prompt_said or f"{prompt_length:,} ids"
    if prompt_length >= limit:
        raise ArgumentValueError(f"{api}: the prompt has {said} but the model has {limit:,} positions "
                                 f"(max_position_embeddings), so no new id fits after it; pass at most its last "
                                 f"{limit - 1:,} ids")
    room = limit - prompt_length
    if max_new_tokens is not None:
        raise ArgumentValueError(f"{api}: max_new_tokens={max_new_tokens:,} after the prompt's {said} "
                                 f"reaches {max_length:,} tokens, past {where}; pass max_new_tokens <= {room:,} (or "
                                 f"a shorter prompt)")
    raise ArgumentValueError(f"{api}: max_length={max_length:,} (the prompt's {said} and what is "
                             f"generated) is past {where}; pass max_new_tokens <= {room:,}, or max_length <= "
                             f"{limit:,}")

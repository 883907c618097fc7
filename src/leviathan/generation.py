"""Sampling from a CausalLM: temperature, top-k, top-p (nucleus), with the native KV cache.

    ids = generate(model, prompt_ids, max_new_tokens=64, temperature=0.8, top_k=50, top_p=0.95, seed=0)

The prompt is run once (prefill) into a ``KVCache``; each new token is a single-position forward over the cached
keys and values (``use_cache=False`` re-runs the whole sequence each step: a reference for tests). ``Decoder`` is
that loop one token at a time, for callers that time or steer each token (``leviathan bench``'s decode section).
Serve a leviathan model baked (``model.bake_()``): the generator becomes the table it computes, so decoding pays
nothing for it (``leviathan generate`` does this by default).

Footguns: generation stops at ``model.config.max_position_embeddings`` total tokens (the model was
never trained on later positions; a prompt that fills them is refused: crop it first); ``temperature=0`` means
greedy decoding (argmax), and top-k / top-p are then irrelevant.
"""

from __future__ import annotations

from typing import Sequence

import torch

from .errors import ArgumentTypeError, ArgumentValueError, UserError

from .model.llama import KVCache
from .positions import model_positions
from .value_rules import check_switches


def sample_next_token(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """logits (B, V) -> next ids (B,). Filters are applied in the order temperature, top-k, top-p (checked as
    ``generate`` checks them: ``top_k=-3`` and ``top_p=2.0`` sampled a token, ``top_k=1.5`` and ``temperature=nan``
    ended in torch's errors; issue 30 round 14, B116, B329-B331)."""
    check_filters(temperature, top_k, top_p)
    check_logits(logits, generator)
    if temperature < torch.finfo(torch.float32).tiny:  # 0, or a temperature float32 holds as 0 (1e-300): greedy
        check_a_likeliest(logits)
        return logits.argmax(dim=-1)
    given, logits = logits, logits.float()
    # shifted so the largest is 0 before the division: a tiny temperature (1e-300, 1e-39) turned the logits into
    # +-inf, softmax into NaN and torch.multinomial into a RuntimeError (issue 30 round 11, S79); the same
    # distribution otherwise (softmax, top-k and top-p do not see a shift)
    logits = (logits - logits.amax(dim=-1, keepdim=True)) / temperature
    if top_k is not None and 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and 0 < top_p < 1:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
        probs = sorted_logits.softmax(dim=-1)
        # drop a token when the tokens ranked above it already hold top_p of the mass (the first is always kept)
        drop = (probs.cumsum(dim=-1) - probs) >= top_p
        drop[..., 0] = False  # a top_p below float32's range (1e-300) compared as 0 and dropped it too: NaN (round 10)
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    probs = logits.softmax(dim=-1)
    try:
        return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
    except RuntimeError as e:  # NaN logits: "probability tensor contains either inf, nan or element < 0" (B117)
        if "probability tensor" not in str(e):
            raise
        raise ArgumentValueError(_unsampleable(given)) from None


def _unsampleable(logits: torch.Tensor) -> str:
    """Why ``logits`` cannot be sampled from, and the fix. Issue 30 round 17 (E405): the line offered "pass
    temperature=0 for the likeliest token" for all-NaN logits, where no token is likelier than another (greedy
    returned id 0); it is offered only where the logits hold inf and no NaN, which argmax does rank."""
    if torch.isnan(logits).any():
        return ("the logits hold NaN, so no token can be sampled or is likelier than another (a diverged or damaged "
                "model?); check the model's weights (a checkpoint from before the loss diverged, or one that loads "
                "without damage)")
    return ("the logits hold inf, so no token can be sampled (a diverged or damaged model?); check the model's "
            "weights, or pass temperature=0 for the likeliest token")


def check_a_likeliest(logits: torch.Tensor) -> None:
    """ValueError when a row of ``logits`` (B, V) holds a NaN or is -inf throughout: no token is the likeliest there.
    Greedy decoding took argmax's answer, id 0, as the likeliest token of NaN logits (a diverged model, a damaged
    weight) and ``generate`` returned four id-0 tokens without a word, where sampling refused them (issue 30 round 17,
    E410-E412). A row with some -inf (masked ids) or a +inf still has its likeliest token."""
    rows = logits.isnan().any(dim=-1) | (logits == float("-inf")).all(dim=-1)
    if bool(rows.any()):
        row = int(rows.nonzero()[0, 0])
        what = "hold NaN" if bool(logits[row].isnan().any()) else "are -inf for every id"
        raise ArgumentValueError(f"the logits of row {row} {what}, so no token is the likeliest (a diverged or "
                                 f"damaged model?); check the model's weights (its training run's last finite "
                                 f"checkpoint)")


class Decoder:
    """Incremental decoding with the native KV cache: ``prefill`` the prompt once, then ``step`` per token (the ids just
    chosen, or whatever should be fed instead); both return the next ids (B,) of ``sample_next_token`` with this
    decoder's settings. No position limit is checked here; ``generate`` stops at ``max_position_embeddings``."""

    def __init__(self, model, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 generator: torch.Generator | None = None):
        check_model(model, "Decoder")  # a transformers model, a str, an nn.Linear: raw errors in prefill (S503-S515)
        check_filters(temperature, top_k, top_p)  # Decoder(m, nan) / (m, 1.0, -5, 3.0) sampled (round 14, B333)
        self.model, self.temperature, self.top_k, self.top_p, self.generator = model, temperature, top_k, top_p, generator
        self.cache: KVCache | None = None

    def pick(self, logits: torch.Tensor) -> torch.Tensor:
        """logits (B, T, V) -> the next ids (B,) after the last position. Logits (B, V) of one position were read as
        B positions of one sequence, one id returned without a word, and a text was Python's "string indices must be
        integers" (issue 30 round 22, the S513 kind)."""
        if not isinstance(logits, torch.Tensor) or logits.dim() != 3:
            shown = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
            raise ArgumentValueError(f"Decoder.pick takes the model's logits (B, T, V), got {shown}; pass "
                                     f"model(ids)[0] (for the logits of one position (B, V), call sample_next_token)")
        return sample_next_token(logits[:, -1], self.temperature, self.top_k, self.top_p, self.generator)

    @torch.no_grad()
    def prefill(self, ids: torch.Tensor) -> torch.Tensor:
        """Run the prompt (B, T) into a fresh cache; returns the first new ids (B,). An empty prompt is refused as
        ``generate`` refuses it: it ended in torch's "index -1 is out of bounds" (issue 30 round 21, P412)."""
        if isinstance(ids, torch.Tensor) and ids.dim() == 2 and ids.shape[1] == 0:
            raise ArgumentValueError("Decoder.prefill: the prompt is empty (shape (B, 0)); there is no position to "
                                     "predict after: give at least one token id per sequence, e.g. a BOS id")
        self.cache = KVCache()
        logits, _ = self.model(ids, cache=self.cache)
        return self.pick(logits)

    @torch.no_grad()
    def step(self, ids: torch.Tensor) -> torch.Tensor:
        """Feed one id per sequence (B,) after the cached positions; returns the next ids (B,)."""
        if self.cache is None:
            raise RuntimeError("Decoder.step before prefill: run the prompt first")
        if not isinstance(ids, torch.Tensor):  # [4] ended in "list indices must be integers or slices" (round 21, P417)
            raise ArgumentTypeError(f"Decoder.step takes the ids just chosen as a tensor (B,), one per sequence, "
                                    f"got {type(ids).__name__} {ids!r:.40}; e.g. torch.tensor([4]) (prefill and step "
                                    f"return one)")
        if ids.dim() != 1:
            raise ArgumentValueError(f"Decoder.step takes one id per sequence, a tensor (B,), got shape "
                                     f"{tuple(ids.shape)}; pass the ids prefill or step returned")
        logits, _ = self.model(ids[:, None], cache=self.cache)
        return self.pick(logits)


@torch.no_grad()
def _flat(values) -> list:
    """The items of a list of ids or of a list of lists of ids."""
    out = []
    for v in values:
        out.extend(_flat(v) if isinstance(v, (list, tuple)) else [v])
    return out


def _first_not_whole(values):
    """The first item of a list of ids (or of lists of ids) that is not a whole number, to name in the refusal."""
    from .integers import is_integer

    return next(v for v in _flat(values) if not is_integer(v))


def check_not_arrays(**options) -> None:
    """TypeError for the first option given as a tensor or a numpy array where a plain number is meant:
    ``max_new_tokens=torch.tensor(3)`` was "must be a whole number >= 0, got tensor(3)", which blamed the value
    (issue 30 round 19, J9, J12, J15)."""
    import numpy as np

    for name, value in options.items():
        if isinstance(value, (torch.Tensor, np.ndarray)):
            raise ArgumentTypeError(f"{name} must be a plain number, got a {type(value).__name__} ({value!r:.40}); "
                                    f"pass a Python number, e.g. {name}=value.item()")


def check_filters(temperature, top_k, top_p) -> None:
    """``ArgumentValueError`` naming the sampling filter outside its range and the fix: temperature a finite number >=
    0, top_k a whole number >= 1, top_p a number in (0, 1] (each of the last two may be None); a tensor is refused by
    its type. Every refusal of this module is the API's refusal class (a UserError), still the ValueError or TypeError
    it was: plain ones without a fix (issue 30 round 33, AE351-AE362, as round 32's AC373 for the generator)."""
    import math
    import numbers

    from .integers import is_integer

    check_not_arrays(temperature=temperature, top_k=top_k, top_p=top_p)

    def number(value) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)

    if not number(temperature) or not math.isfinite(temperature) or temperature < 0:
        raise ArgumentValueError(f"temperature must be a finite number >= 0 (0: the likeliest token), got "
                                 f"{temperature!r}; pass temperature=0 for greedy decoding, or a positive number such "
                                 f"as 1.0")
    if top_k is not None and (not is_integer(top_k) or top_k < 1):
        raise ArgumentValueError(f"top_k must be a whole number >= 1 (or None), got {top_k!r}; pass the number of "
                                 f"likeliest ids to sample from (such as 50), or top_k=None to keep every id")
    if top_p is not None and (not number(top_p) or not 0 < top_p <= 1):
        raise ArgumentValueError(f"top_p must be a number in (0, 1] (or None), got {top_p!r}; pass the share of the "
                                 f"probability mass to sample from (such as 0.9), or top_p=None to keep every id")


def check_logits(logits, generator) -> None:
    """TypeError / ValueError unless ``logits`` is a tensor whose last dimension holds at least one id's score and
    ``generator`` None or a ``torch.Generator``: ``sample_next_token(torch.randn(1, 0))`` ended in torch's "amax():
    Expected reduction dim -1 to have non-zero size" (issue 30 round 18, G150)."""
    if not isinstance(logits, torch.Tensor) or logits.dtype == torch.bool or logits.dtype.is_complex:
        raise ArgumentTypeError(f"logits must be a tensor (B, V) of scores, got {type(logits).__name__} "
                                f"{getattr(logits, 'dtype', '')}; pass the model's output logits[:, -1]")
    if logits.dim() == 0 or logits.shape[-1] == 0:
        raise ArgumentValueError(f"logits must hold one score per id in their last dimension (B, V) with V >= 1, got "
                                 f"shape {tuple(logits.shape)}; pass the model's output logits[:, -1]")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise ArgumentTypeError(f"generator must be a torch.Generator (or None), got {type(generator).__name__}; "
                                f"pass e.g. torch.Generator().manual_seed(0)")


def check_sampling(max_new_tokens, temperature, top_k, top_p, eos_id, seed, vocab_size: int) -> None:
    """ArgumentValueError (ArgumentTypeError for a wrong type) naming the option, its range and the fix (round 33,
    AE351-AE354), as ``leviathan generate``'s flags check them: the Python API took ``max_new_tokens=-1``,
    ``top_k=-1``, ``eos_id=1000`` past the vocabulary, ``seed=-1``, ``top_p=True``, and ``temperature=nan`` ended in
    torch.multinomial's RuntimeError (issue 30 round 12, U128-U135)."""
    from .seeds import is_integer, seed_problem

    def whole(value) -> bool:  # numpy integers too
        return is_integer(value)

    check_not_arrays(max_new_tokens=max_new_tokens, eos_id=eos_id, seed=seed)
    if not whole(max_new_tokens) or max_new_tokens < 0:
        raise ArgumentValueError(f"max_new_tokens must be a whole number >= 0, got {max_new_tokens!r}; pass the "
                                 f"number of ids to add after the prompt (0 returns the prompt)")
    check_filters(temperature, top_k, top_p)
    if eos_id is not None and (not whole(eos_id) or not 0 <= eos_id < vocab_size):
        raise ArgumentValueError(f"eos_id must be a token id in [0, {vocab_size}) (or None), got {eos_id!r}; pass the "
                                 f"tokenizer's end-of-text id (tokenizer.eot_id), or eos_id=None to stop at "
                                 f"max_new_tokens only")
    if seed is not None and (problem := seed_problem(seed)) is not None:
        raise ArgumentValueError(f"seed: {problem}; pass a seed in that range, or seed=None for fresh randomness")


def check_eos_predicted(model, eos_id, option: str | None = None) -> None:
    """ValueError (a UserError too) when ``eos_id`` is an id that ``model``'s restricted softmax (``restrict_output_``,
    data.softmax=corpus) gives probability 0: no sequence could ever end at it, and ``generate`` ran to
    ``max_new_tokens`` without a word (issue 30 round 26, Q653; ``evaluate`` names targets outside the subset, Q655).
    The prompt is input, which every id of the vocabulary may be (its range is checked by the model). ``option``: the
    command-line flag that chose the id (``leviathan generate --stop-at-eot``), whose line named the API's
    ``eos_id=None`` (round 33, a carried item): the line is then in the flag's words."""
    output_ids = getattr(model, "output_ids", None)
    if eos_id is None or output_ids is None or bool((output_ids == int(eos_id)).any()):
        return
    outside = (f"is outside this model's restricted softmax ({output_ids.numel():,} of {model.config.vocab_size:,} "
               f"ids, data.softmax=corpus), which never samples it, so no")
    if option is not None:
        raise ArgumentValueError(f"{option}: the end-of-text id {eos_id} {outside} sample could end there; leave out "
                                 f"{option} (each sample then runs to --max-new-tokens)")
    raise ArgumentValueError(f"eos_id {eos_id} {outside} sequence could end there; pass an id the model predicts (its "
                             f"data's end-of-text id), or eos_id=None")


def check_model(model, who: str = "generate()") -> None:
    """UserError unless ``model`` is a leviathan ``CausalLM`` (its forward takes the native KV cache) with values: a
    text gave "'str' object has no attribute 'config'" (issue 30 round 15, B124), a transformers model (an adopted one
    too) "'KVCache' object has no attribute 'get_query_offset'" from deep in transformers (B303), and a model on the
    meta device torch's "Cannot copy out of meta tensor" (B121). ``who`` is the caller (``Decoder`` since round 22:
    S503, S513-S515, the same raw errors at its first ``prefill``)."""
    from .meta_device import refuse_meta
    from .value_rules import model_problem

    if (problem := model_problem(model)) is not None:  # never the repr: a module's is many lines (round 25, Y413)
        raise UserError(f"{who} takes leviathan's CausalLM (e.g. leviathan.checkpoint.read.load_model(RUN)[0]): "
                        f"model {problem}; pass the model")
    if any(cls.__module__.startswith("transformers.") for cls in type(model).__mro__):
        raise UserError(f"{who} takes leviathan's own CausalLM, and {type(model).__name__} is a transformers "
                        f"model (adopted or not), whose forward takes no leviathan KV cache: use its own "
                        f"model.generate(torch.tensor([ids]), max_new_tokens=...)")
    if not hasattr(model, "config") or not hasattr(model.config, "vocab_size"):
        raise UserError(f"{who} takes leviathan's CausalLM (a model with a config), got {type(model).__name__}")
    refuse_meta(model, "the model", "load it with its weights (leviathan.checkpoint.read.load_model(RUN)), or call "
                "model.to_empty(device=...) and load a state dict first")


def generate(model, prompt_ids: Sequence[int] | torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None, eos_id: int | None = None,
             seed: int | None = None, use_cache: bool = True) -> torch.Tensor:
    """Continue ``prompt_ids`` ((T,) or (B, T), equal lengths) and return (B, T + new) ids, prompt included.

    Sampling stops for a sequence at ``eos_id`` (later positions repeat it) and for all of them after
    ``max_new_tokens`` or at ``max_position_embeddings`` tokens. A prompt of ``max_position_embeddings`` ids or more
    leaves no room for a new one and is refused (ValueError naming how to crop it): it was cut to its last
    ``max_position_embeddings - 1`` ids without a word, and the result was not the prompt plus its continuation (issue
    30 round 16, C102). ``leviathan.positions.fit_positions`` says how much of a prompt fits.

    Parameters: the sampling options (temperature, top-k, top-p, ...), keyword arguments one each as ``leviathan
    generate`` passes them.
    """
    check_model(model)
    check_sampling(max_new_tokens, temperature, top_k, top_p, eos_id, seed, model.config.vocab_size)
    check_eos_predicted(model, eos_id)
    check_switches("generate", use_cache=use_cache)  # "no" read as true (round 14, B115); np.False_ a switch (W768)
    use_cache = bool(use_cache)
    device = next(model.parameters()).device
    if isinstance(prompt_ids, torch.Tensor) and (prompt_ids.dtype.is_floating_point or prompt_ids.dtype.is_complex
                                                 or prompt_ids.dtype == torch.bool):
        raise ArgumentTypeError(f"prompt_ids must be integer token ids, got a {prompt_ids.dtype} tensor; pass the "
                                f"tokenizer's ids (prompt_ids.long() if they are whole numbers)")
    from .integers import is_integer

    if not isinstance(prompt_ids, torch.Tensor) and not all(is_integer(i) for i in _flat(prompt_ids)):  # [5.7] was
        # truncated to id 5 (U135)
        raise ArgumentTypeError(f"prompt_ids must be integer token ids (a list of ints, or an integer tensor), got "
                                f"{_first_not_whole(prompt_ids)!r}; pass the ids a tokenizer's encode returns")
    from .meta_device import refuse_meta

    refuse_meta(prompt_ids, "prompt_ids", "pass the ids themselves (a list of ints, or a tensor on the CPU or a GPU)")
    try:  # B121: "Cannot copy out of meta tensor; no data!"
        ids = torch.as_tensor(prompt_ids, dtype=torch.long, device=device)
    except ValueError:  # [[1, 2], [3]]: torch's "expected sequence of length 2 at dim 1" (round 14, B111)
        raise ArgumentValueError("prompt_ids of several sequences must have equal lengths (a (B, T) batch); pad "
                                 "them, or generate each on its own") from None
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    if ids.shape[1] == 0:
        raise ArgumentValueError("the prompt is empty; give at least one token (for example the end-of-text id)")
    limit = model_positions(model)  # leviathan's config always names it (check_model)
    if ids.shape[1] >= limit:
        raise ArgumentValueError(f"the prompt has {ids.shape[1]:,} ids but the model has {limit:,} positions, so no "
                                 f"new id fits after it; pass at most its last {limit - 1:,} ids (prompt_ids[..., "
                                 f"-{limit - 1}:]), as `leviathan generate` does")
    generator = None
    if seed is not None:
        generator = torch.Generator(device=device)
        generator.manual_seed(int(seed))  # a numpy integer: torch's "an integer is required" (round 18, G146)
    was_training = model.training
    model.eval()
    finished = torch.zeros(ids.shape[0], dtype=torch.bool, device=device)
    decoder = Decoder(model, temperature, top_k, top_p, generator)
    try:
        for i in range(min(max_new_tokens, limit - ids.shape[1])):
            if not use_cache:
                nxt = decoder.pick(model(ids)[0])  # (B,); the whole sequence again
            elif i == 0:
                nxt = decoder.prefill(ids)
            else:
                nxt = decoder.step(nxt)
            if eos_id is not None:
                nxt = torch.where(finished, torch.full_like(nxt, eos_id), nxt)
                finished |= nxt == eos_id
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            if eos_id is not None and bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return ids

"""Adoption: the Leviathan generator as the input embedding of any Hugging Face causal LM (Llama, Qwen2, Mistral,
Gemma, GPT-2, GPT-NeoX, ...), saved and reloaded in transformers' own format, and baked back into the original class.

    model = adopt(Qwen2ForCausalLM(cfg), seed_dim=64)   # or adopt(cfg, ...): a fresh model
    model.save_pretrained(d); model = load_adopted(d)    # safetensors; the settings live in config.json
    bake_adopted(model, out)                             # a plain Qwen2ForCausalLM directory (transformers alone)

What ``adopt`` does (docs/DESIGN.md §2: e(i) is a pure function of the id, a drop-in for the table):
- replaces ``get_input_embeddings()`` (an ``nn.Embedding`` of V rows, D wide) with a ``LeviathanGenerator(V, D,
  **settings)`` on the embedding's device and dtype, freshly initialised (the reference init), or with ``fit=``
  fitted to the table it replaces (``adoption_fit``: a trained model keeps most of what its table knew); V and D
  are the embedding's own (``num_embeddings``, ``embedding_dim``), so a padded vocabulary stays padded;
- a table that scales its rows by a constant (Gemma's ``*ScaledWordEmbedding``: row times ``embed_scale``,
  sqrt(hidden_size)) gets a ``ScaledLeviathanGenerator``: the generator's output times the same constant, rounded
  to the output dtype as Gemma rounds it, so the body sees what it saw from the table (``output_scale`` in the
  stored settings); the baked table is the unscaled generator output, which the original class scales again;
- unties the head: ``config.tie_word_embeddings = False``; a tied head keeps the values it had (the old table,
  cloned into a tensor of its own), so adopting a *trained* model keeps its trained output side, and adopting a
  fresh one keeps a fresh head; an untied head is untouched;
- stores the generator's settings (base resolved) in ``config.leviathan_generator``, a dict;
- switches the instance to a subclass of its own class, ``Leviathan<Class>`` (``adopted_class``): ``isinstance``
  checks, ``forward``, ``generate``, ``transformers.Trainer`` and ``save_pretrained`` are the original's. The
  subclass only rebuilds the generator in ``post_init`` when the config carries ``leviathan_generator`` (so
  ``from_pretrained`` creates it before the weights load), refuses ``resize_token_embeddings`` and a non-generator
  ``set_input_embeddings``, and refuses a checkpoint that lacks the generator's tensors (``from_pretrained``);
- keeps everything else (position embeddings such as GPT-2's ``wpe``, norms, layers, head, generation config).

Saving, loading and baking (docs/USING.md §3-4, which also lists what cannot be adopted: a ``UserError``
``<problem>; <fix>``): ``save_pretrained`` writes the generator's parameters and, beside them, the baked (V, D)
table under the original embedding's key, and keeps the original ``model_type``, so transformers alone loads the
original class with the same logits, never a random embedding. ``load_adopted`` finds the original class, calls
``adopted_class(cls)._from_folder`` (the original's load; the class's ``from_pretrained`` is ``load_adopted``, round
30) and ignores the baked table; a folder whose file lacks the generator's
tensors (what transformers alone writes when it re-saves an adopted folder) is refused: it is a table model.
``bake_adopted`` writes the table (``LeviathanGenerator.bake``) as the original class's embedding weight, drops
``leviathan_generator`` from the config (the head stays untied) and saves with the original ``save_pretrained``.

Footguns: ``padding_idx`` is not enforced by the generator (the pad id gets an embedding like any other id; padded
positions are masked anyway, and a baked table loads as is). An embedding with ``max_norm`` (rows renormalised as
they are looked up) or ``scale_grad_by_freq`` (each row's gradient divided by its id's count in the batch) is refused:
the generator has no rows of its own to renormalise or to scale, and would drop either without a word (round 24, W652;
round 26, Q132); set the option off first to adopt the model without it. ``sparse=True`` is dropped: the generator's
gradients are dense (it has no table to update row by row), so build a dense optimizer (not SparseAdam) after. The
generator is created in the embedding's dtype; a bf16/fp16 one computes in fp32 inside and returns its dtype
(``generator.py``, Precision). An optimizer built before ``adopt`` holds the old parameters: build it after. The
subclass is created at run time and registered in this module under its name, so pickling an adopted model works
only in a process that has adopted or loaded that class.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import PretrainedConfig, PreTrainedModel
from transformers import initialization as hf_init

from ..errors import UserError
from ..meta_device import refuse_meta_arguments
from ..model.attention_inputs import check_position_values
from ..model.generator import GENERATOR_FORMS, GENERATOR_INITS, LeviathanGenerator
from ..positions import check_counted_positions, check_generation_room, model_positions
from .adoption_config import check_source_config
from .adoption_table import check_fit_table
from .cache_position import check_cache_position
from .adoption_fit import Fit, FitReport, as_fit, bucket_fits, fit_to_table, row_weights, text_ids, text_loss
from .config_file import check_saved_dtype, read_config_json, saved_config
from .config_save import held_config
from .forward_switches import check_forward_switches
from .generate_guard import GenerateGuard
from .generate_ids import check_generate_ids
from .flex_cpu import check_flex_cpu_forward
from .load_keywords import check_attention_set
from .logits_to_keep import check_kept_for_loss, check_logits_to_keep, input_length
from .weights_digest import RECORD as WEIGHTS_RECORD, check_weights
from .modeling import (InputEmbeddingError, LeviathanForCausalLM, check_hf_labels, check_items_count, init_generator,
                       loss_count)
from .settings_digest import check_settings_mapping as _check_saved_settings, check_stamp, stamp

CONFIG_KEY = "leviathan_generator"
# the generator's settings a caller may choose (LeviathanGenerator's keyword arguments, paper defaults there);
# vocab_size and hidden_size come from the adopted embedding
SETTINGS = ("k", "seed_dim", "modes", "knots", "rank", "degree", "ln_eps", "base", "init", "center", "norm", "form",
            "table_std", "norm_eps")
# taken from the adopted embedding, not chosen: its size, and the constant a scaled table multiplies its rows by
FIXED = ("vocab_size", "hidden_size", "output_scale")
MIN_OUTPUT_SCALE, MAX_OUTPUT_SCALE = 2.0**-24, 65_504.0  # fp16's smallest and largest non-zero numbers


ARGUMENT_SCALE_FIX = "pass the scale the original model applies to its table's rows, as a number (float(t) of a tensor)"
SAVED_SCALE_FIX = "config.json's leviathan_generator was edited or damaged: adopt the model again"
ADOPTED_SCALE_FIX = ("the adopted embedding's embed_scale is one no generator can apply: adopt a model whose table's "
                     "scale is in that range")


def check_output_scale(scale: Any, fix: str) -> float:
    """``scale`` as a float when it is a real number (numpy's scalars too) in [``MIN_OUTPUT_SCALE``,
    ``MAX_OUTPUT_SCALE``]; else a UserError whose ``fix`` says where the value came from (a constructor argument, a
    config.json, an adopted embedding). A table's scale is a positive finite number (Gemma's sqrt(hidden)): an adopted
    config.json edited to NaN loaded a model whose every embedding was NaN, and -1 one that flipped them (issue 30
    round 14, B256, B257); 1e308 passed as finite, yet is inf in float32 (round 25, Y94). It is rounded to the output's
    dtype (``ScaledLeviathanGenerator``), so it must be one fp16 holds as a non-zero number. ``np.float32(4.0)`` was
    refused as no number, blaming an edited config.json (round 26, Q75): ``Fit(lr=...)`` takes numpy floats."""
    import numbers

    import numpy as np

    if isinstance(scale, numbers.Real) and not isinstance(scale, (bool, np.bool_)) and math.isfinite(scale) \
            and MIN_OUTPUT_SCALE <= scale <= MAX_OUTPUT_SCALE:
        return float(scale)
    raise UserError(f"output_scale must be a finite number > 0, in [{MIN_OUTPUT_SCALE:.0e}, {MAX_OUTPUT_SCALE:,.0f}] "
                    f"(what fp16, the narrowest output dtype, holds; the scale the original model applied to its "
                    f"table, e.g. sqrt(hidden_size) for Gemma), got {scale!r:.40}; {fix}")



def _generator_of(generator: LeviathanGenerator, state_dict: dict, prefix: str) -> LeviathanGenerator:
    """A copy of ``generator`` holding ``state_dict``'s generator tensors (under ``prefix``), whose ``bake()`` is the
    table of the model the state_dict describes: the live generator's was baked beside another model's tensors
    (an EMA's, another step's), so the original class (AutoModelForCausalLM) read one model and ``load_adopted``
    another from the one file (issue 30 round 33, AE328). ``check_save_arguments`` has already held the state_dict
    to the model's keys."""
    import copy

    own = generator.state_dict()
    given = {name: state_dict[f"{prefix}.{name}"] for name in own if f"{prefix}.{name}" in state_dict}
    if all(given.get(name) is tensor for name, tensor in own.items()):
        return generator  # the model's own tensors: nothing to copy
    copied = copy.deepcopy(generator)
    copied.load_state_dict({**own, **given})
    return copied

class ScaledLeviathanGenerator(LeviathanGenerator):
    """A ``LeviathanGenerator`` whose embedding is multiplied by a constant, for a model whose input table does the
    same (Gemma: ``GemmaTextScaledWordEmbedding``, row x sqrt(hidden_size)). e(i) is still a pure function of the id.
    Footgun: the constant is rounded to the output's dtype before the product, as Gemma's ``embed_scale.to(dtype)`` is
    (sqrt(640) = 25.298 is 25.25 in bf16; a float product would differ from the baked model by up to 0.2%); ``bake()``
    stays the unscaled table, which the original class stores and scales at run time.
    """

    def __init__(self, *args: Any, output_scale: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.output_scale = check_output_scale(output_scale, ARGUMENT_SCALE_FIX)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        out = super().forward(input_ids)  # (..., D)
        return out * out.new_tensor(self.output_scale)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, output_scale={self.output_scale:g}"


# ---- the subclass --------------------------------------------------------------------------------------------
class _AdoptedMixin(GenerateGuard):
    """Mixed in before the original class by ``adopted_class``; see the module docstring. ``GenerateGuard``:
    transformers' argument steps of ``generate`` inside one guard (issue 30 round 33)."""

    _tied_weights_keys = None  # the head is never tied to the generator
    _leviathan_base: type[PreTrainedModel]

    def post_init(self):
        settings = getattr(self.config, CONFIG_KEY, None)
        if settings and not isinstance(self.get_input_embeddings(), LeviathanGenerator):
            # from_pretrained / cls(config): build the generator before weights load and tying is computed
            current = self.get_input_embeddings()
            generator = _build_generator(settings)
            if current is not None and hasattr(current, "weight"):
                generator.to(device=current.weight.device, dtype=current.weight.dtype)
            self._leviathan_base.set_input_embeddings(self, generator)
            self.config.tie_word_embeddings = False
        super().post_init()
        if isinstance(self.get_input_embeddings(), LeviathanGenerator):
            # the baked table save_pretrained writes for transformers alone (see save_pretrained): not ours to load
            self._keys_to_ignore_on_load_unexpected.add(rf"^{re.escape(self._generator_prefix())}\.weight$")

    def set_attn_implementation(self, attn_implementation, *args, **kwargs):
        """transformers' ``set_attn_implementation``, after ``load_keywords.check_attention_change``, the rule
        LeviathanForCausalLM's asks (issue 30 round 32, AC240's sibling): the same names as the loaders take."""
        from .load_keywords import check_attention_change

        check_attention_change(self, attn_implementation, f"{type(self).__name__}.set_attn_implementation")
        return super().set_attn_implementation(attn_implementation, *args, **kwargs)

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        """``load_adopted`` of the folder, refused when it holds another class's model: both ways in hold the folder
        and the keywords to the same rules (``_adopted_from_pretrained``; issue 30 round 30, Y714-Y720)."""
        return _adopted_from_pretrained(cls, args, kwargs)

    @classmethod
    def _from_folder(cls, *args, output_loading_info: bool = False, **kwargs):
        """The original's ``from_pretrained`` (``load_adopted``'s load, after its checks), refusing a file that lacks
        any of the generator's tensors: transformers initialises whatever a file lacks, and a folder re-saved by
        transformers alone keeps ``leviathan_generator`` in config.json but only the baked table among the weights
        (the generator at random init: logits off by ~0.6).
        """
        source = args[0] if args else kwargs.get("pretrained_model_name_or_path")
        model, info = super().from_pretrained(*args, output_loading_info=True, **kwargs)
        generator = model.get_input_embeddings()
        if isinstance(generator, LeviathanGenerator):
            prefix = model._generator_prefix() + "."
            missing = sorted(k for k in info["missing_keys"] if k.startswith(prefix))
            _refuse_no_model_weights(model, info, source)  # round 22, S531: before the line blaming a re-save
            if missing:
                raise UserError(_missing_generator_tensors(source, missing, len(generator.state_dict())))
            _refuse_drawn_at_random(model, info["missing_keys"], source)
            _refuse_dropped(model, info["unexpected_keys"], source)
        return (model, info) if output_loading_info else model

    def load_state_dict(self, state_dict, *args, **kwargs):
        """torch's ``load_state_dict``, after naming a generator of other settings: ``transformers.Trainer`` resuming
        a rank-4 adopted checkpoint into a model adopted at rank 8 ended in torch's raw 3-line "size mismatch for
        model.embed_tokens.spline_coeff", naming neither the cause nor a fix (issue 30 round 24, W636). The weights
        file of the checkpoint folder the Trainer resumes from must be the one its config.json records
        (``trainer_resume.check_trainer_resume``): another run's was resumed without a word (round 30, Y535), and so
        were settings edited in its config.json (round 32, AC345, AC347, AC352: ``check_resumed_settings``)."""
        from .trainer_resume import check_resumed_settings, check_trainer_resume

        resumed = check_trainer_resume()
        _refuse_other_generator(self, state_dict)
        check_resumed_settings(self, resumed)  # round 32, AC347's kind
        return super().load_state_dict(state_dict, *args, **kwargs)

    def _generator_prefix(self) -> str:
        """The generator's module path (``model.embed_tokens``, ``transformer.wte``, ...)."""
        generator = self.get_input_embeddings()
        return next(name for name, module in self.named_modules() if module is generator)

    def save_pretrained(self, save_directory, *args, state_dict=None, **kwargs):
        """The original's ``save_pretrained``, plus the baked (V, D) table under the original embedding's key beside the
        generator's parameters, and the umask's file modes. The table is what transformers alone loads into the original
        class (the folder keeps its ``model_type``: same logits; before issue 31 the embedding was left at random init);
        ``load_adopted`` ignores it. Costs a (V, D) tensor on disk and one ``bake()`` per save. Refused into a verb's
        output or over a file it did not write (``hf.save_folder``; round 18, G244-G248); written whole or not at all,
        a storage failure an ``errors.StorageError``, the files at the umask's modes even after Ctrl-C
        (``save_folder.save_whole``; round 19, J54, J58, J63, J69, J75, J322). A sharded save's index records the
        digests of its weight map and shards (``save_whole``), which ``load_adopted`` checks (``shard_index``; round 25,
        Y509-Y512).
        """
        from .checkpoint_record import note_trainer_save, trainer_folder_dropped_on_refusal

        with trainer_folder_dropped_on_refusal(save_directory):  # nothing left by a refused Trainer save (AI375)
            saved = self._save_checked(save_directory, args, state_dict, kwargs)
        note_trainer_save(save_directory)  # a Trainer checkpoint gets its files' record (round 33, AE158)
        return saved

    def _save_checked(self, save_directory, args, state_dict, kwargs):
        """``save_pretrained``'s checks, the baked table and the whole-or-nothing save."""
        from .save_folder import check_save_arguments, check_save_directory, save_keywords, save_whole

        check_save_directory(save_directory, "save_pretrained")
        kwargs = save_keywords(args, {**kwargs, **({} if state_dict is None else {"state_dict": state_dict})})  # AE1
        state_dict = kwargs.pop("state_dict", None)
        check_save_arguments(self, state_dict, kwargs)  # round 20: push_to_hub (M10), a partial state_dict (M8)
        _check_source_before_save(self.config)  # eos_token_id 400 set after adopt (round 31, AA427)
        _check_json_settings(getattr(self.config, CONFIG_KEY, None))
        generator = self.get_input_embeddings()
        if isinstance(getattr(self.config, CONFIG_KEY, None), dict):
            stamp(getattr(self.config, CONFIG_KEY))  # checked by load_adopted (round 17, E169)
        if isinstance(generator, LeviathanGenerator):
            prefix = self._generator_prefix()
            baked = generator if state_dict is None else _generator_of(generator, state_dict, prefix)
            state_dict = dict(self.state_dict() if state_dict is None else state_dict)
            state_dict[f"{prefix}.weight"] = baked.bake()  # (V, D)
        original = super().save_pretrained
        from .generation_save import generation_config_as_saved

        with generation_config_as_saved(self):  # the form its loader takes (round 34, AG393)
            return save_whole(lambda folder: original(folder, state_dict=state_dict, **kwargs), save_directory,
                              variant=kwargs.get("variant"))

    @torch.no_grad()
    @hf_init.guard_torch_init_functions()
    def initialize_weights(self):
        super().initialize_weights()
        # transformers dispatches a submodule's init to its own PreTrainedModel (e.g. Qwen2Model), which does not
        # know the generator; its reference init runs here, and under the guard skips tensors loaded from a file
        generator = self.get_input_embeddings()
        if isinstance(generator, LeviathanGenerator):
            init_generator(generator)

    def _validate_generated_length(self, generation_config, input_ids_length, has_default_max_length):
        """transformers' check of ``generate``'s lengths, then ``positions.check_generation_room``: a generation past
        the model's positions is refused before it starts, naming max_new_tokens, where the forward's position check
        (round 29, W525) stopped it partway (issue 30 round 30, Y496, Y517)."""
        super()._validate_generated_length(generation_config, input_ids_length, has_default_max_length)
        check_generation_room(model_positions(self), generation_config.max_length, input_ids_length,
                              generation_config.max_new_tokens, f"{type(self).__name__}.generate")

    def generate(self, inputs=None, generation_config=None, *args, **kwargs):
        """transformers' ``generate``, its arguments checked first (``generate_arguments.check_generate_arguments``):
        a length, beam count or sampling value it cannot use, a prompt on meta, or a generation past the positions
        counted from a cached prefix or inputs_embeds ended in its raw errors or ran on (issue 30 round 31, AA90-AA108,
        AA523, AA619-AA649); settings transformers refuses or takes as nonsense, ids past the vocabulary, an empty
        prompt, a mask or callable of the wrong kind, and numpy scalars taken as Python's (round 32, AC2-AC138)."""
        from .generate_arguments import check_generate_arguments, positional_into_keywords
        from .generate_cache import cache_kept_on_refusal

        api = f"{type(self).__name__}.generate"
        from .config_in_memory import check_config_in_memory
        from .generate_streamer import streamer_ended_on_refusal

        with streamer_ended_on_refusal(args, kwargs):  # a threaded stream's loop ended (round 34, AG410, AG411)
            positional_into_keywords(api, args, kwargs)  # round 34, AG376-AG382
            check_config_in_memory(self, api)  # the config changed after the load (round 34, AG224, AG370, AG371)
            generation_config = check_generate_arguments(self, api, inputs, generation_config, kwargs)
            with cache_kept_on_refusal(kwargs):  # the caller's cache as it was after an error (round 34, AG268)
                return super().generate(inputs, generation_config, **kwargs)

    def _prepare_special_tokens(self, generation_config, *args, **kwargs):
        """transformers' preparation of ``generate``'s token ids, after ``generate_ids.check_generate_ids``: an
        ``eos_token_id`` the model does not have was taken without a word (issue 30 round 31, AA623, AA624)."""
        check_generate_ids(self, generation_config, f"{type(self).__name__}.generate")
        return super()._prepare_special_tokens(generation_config, *args, **kwargs)

    def set_input_embeddings(self, value: nn.Module) -> None:
        if not isinstance(value, LeviathanGenerator):
            raise InputEmbeddingError(
                f"set_input_embeddings({type(value).__name__}) would replace this adopted model's LeviathanGenerator "
                f"and leave config.{CONFIG_KEY} describing a generator that is gone; to get a table back, "
                "bake it: leviathan.hf.bake_adopted(model, out_dir) or leviathan.hf.to_original(model)")
        self._leviathan_base.set_input_embeddings(self, value)

    def resize_token_embeddings(self, *args, **kwargs):
        raise InputEmbeddingError(
            "resize_token_embeddings would replace this adopted model's LeviathanGenerator with a plain table; "
            f"ids up to b^k - 1 (here {self.get_input_embeddings().capacity:,}) already have embeddings, so grow "
            "the head (get_output_embeddings) and config.vocab_size instead, or bake first "
            "(leviathan.hf.to_original(model)) and resize the baked model")


def _adopted_from_pretrained(cls: type, args: tuple, kwargs: dict) -> Any:
    """An adopted class's ``from_pretrained(path, **kwargs)``: ``load_adopted(path, **kwargs)``, refused when the
    folder holds a model of another class. Its own ``from_pretrained`` skipped load_adopted's rules:
    ``output_loading_info='no'`` or ``1`` was read as true (issue 30 round 30, Y714, Y715), ``foo=1`` was
    transformers' raw "__init__() got an unexpected keyword argument" (Y718), and another model's model.safetensors
    of the same shapes loaded without a word, where load_adopted refuses it by the weights digest config.json records
    (Y720). Footgun: the lines say ``load_adopted``, the one loader of an adopted folder."""
    path = args[0] if args else kwargs.pop("pretrained_model_name_or_path", None)
    if len(args) > 1:
        raise UserError(f"{cls.__name__}.from_pretrained: {len(args) - 1} positional argument(s) after the folder "
                        f"({args[1]!r:.40}, ...) are not taken: an adopted model is built from the config.json its "
                        f"folder holds; pass the folder alone, and options by name (dtype=..., device_map=...)")
    model = load_adopted(path, **kwargs)
    loaded = model[0] if isinstance(model, tuple) else model
    if not isinstance(loaded, cls):
        raise UserError(f"{cls.__name__}.from_pretrained: {str(path)!r} holds a {type(loaded).__name__}, not a "
                        f"{cls.__name__}; load it with leviathan.hf.load_adopted({str(path)!r}) (it builds the class "
                        f"the folder was saved as)")
    return model


def adopted_class(base: type[PreTrainedModel]) -> type[PreTrainedModel]:
    """The subclass ``Leviathan<base.__name__>`` of a causal LM class (created once, registered in this module); its
    ``_from_folder`` is what ``load_adopted`` calls, and its ``from_pretrained`` calls ``load_adopted`` (round 30).
    A ``base`` that is no transformers model class is refused: 'x' was Python's "issubclass() arg 1 must be a
    class", and ``int`` made a class ``Leviathanint`` without a word (issue 30 round 22, the S514 kind).
    """
    if not (isinstance(base, type) and issubclass(base, PreTrainedModel)):
        raise UserError(f"adopted_class takes a transformers model class (such as transformers.LlamaForCausalLM), got "
                        f"{type(base).__name__} {base!r:.60}")
    if not issubclass(base, _AdoptedMixin) and (problem := _not_adoptable_class(base)) is not None:
        raise UserError(f"adopted_class({base.__name__}): {problem}")
    return _adopted_class(base)


def _causal_class_of(cls: type) -> type | None:
    """``AutoModelForCausalLM``'s class for ``cls``'s config class, or None (none mapped, or no config class:
    ``PreTrainedModel``'s is None, which the mapping's lookup took for a class and failed on with AttributeError)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    config_class = getattr(cls, "config_class", None)
    if not isinstance(config_class, type):
        return None
    try:
        return MODEL_FOR_CAUSAL_LM_MAPPING.get(config_class, None)
    except (KeyError, AttributeError):
        return None


def _not_adoptable_class(cls: type) -> str | None:
    """What makes ``cls`` no class ``adopt`` adopts (its rule, ``_check_instance``, for a class), and the fix; None when
    nothing does. adopted_class
    made ``LeviathanPreTrainedModel`` of the abstract base, ``LeviathanLeviathanForCausalLM`` of the project's own
    model, and ``LeviathanBertForMaskedLM`` of a model adopt refuses as not causal, without a word (issue 30 round 25,
    Y600-Y602)."""
    if issubclass(cls, LeviathanForCausalLM):
        return ("it is leviathan's own model, whose input embedding is a LeviathanGenerator already (nothing to "
                "adopt); use it as it is (LeviathanForCausalLM.from_pretrained loads its exports)")
    causal = _causal_class_of(cls)
    config = getattr(getattr(cls, "config_class", None), "__name__", None)
    if causal is not None and issubclass(cls, causal):
        return None
    why = ("it has no config class: an abstract base" if config is None else
           f"AutoModelForCausalLM maps no class to its config, {config}" if causal is None else
           f"AutoModelForCausalLM maps its config, {config}, to {causal.__name__}")
    return (f"it is no causal language model class ({why}), and adopt takes only one; pass a causal LM class "
            f"(such as transformers.LlamaForCausalLM)")


@functools.cache
def _adopted_class(base: type[PreTrainedModel]) -> type[PreTrainedModel]:
    """``adopted_class`` once its argument is checked (cached: one class per base)."""
    if issubclass(base, _AdoptedMixin):
        return base
    name = f"Leviathan{base.__name__}"
    cls = type(name, (_AdoptedMixin, base), {"__module__": __name__, "__qualname__": name, "_leviathan_base": base,
                                              "forward": _counted_forward(base.forward, name),
                                              "__doc__": f"{base.__name__} whose input embedding is a "
                                                         "LeviathanGenerator (see leviathan.hf.adopt)."})
    globals()[name] = cls  # so pickle finds it by name in this process
    return cls


def _counted_forward(forward: Any, name: str) -> Any:
    """``forward`` after ``modeling.check_items_count`` on its ``num_items_in_batch`` (the Trainer's count, which
    the summed loss is divided by): 0 gave an adopted model an inf loss without a word, which LeviathanForCausalLM
    refuses since round 27 (issue 30 round 28, U619); 0 beside labels with no target is the Trainer's count of a fully
    masked batch, taken as a loss of 0 (``modeling.loss_count``, round 29, W681). A tensor argument on the meta device
    is refused too (``meta_device.refuse_meta_arguments``, round 29, W744's kind); and ``position_ids`` past the model's
    positions, which the original's rotary embedding computes without a word (round 29, W525,
    ``check_position_values``). A numpy ``logits_to_keep`` is passed on as Python's int: transformers takes only an
    ``int`` as a count, and ``np.int64(1)`` was read as an index, the position axis dropped (round 29, W504's kind);
    it is checked as LeviathanForCausalLM's is (``_checked_logits_to_keep``, round 30), and ids counted past the
    positions are refused as given ones are (``_check_counted_positions``, round 30, Y514). Round 31: its switches
    (``forward_switches``, AA634-AA636), its ids and 2-D mask (``_check_ids_and_mask``, AA625, AA630) and its labels
    (``modeling.check_hf_labels``, AA632, AA633; beside ``logits_to_keep``, AA86) are held to LeviathanForCausalLM's
    rules.
    Footgun: ``functools.wraps`` keeps the original's signature, which the Trainer reads (the dataset columns it
    keeps, whether the model takes loss kwargs)."""
    names = [*inspect.signature(forward).parameters][1:]  # after self: input_ids, attention_mask, position_ids, ...

    @functools.wraps(forward)
    def counted(self, *args: Any, **kwargs: Any) -> Any:
        given = [*zip(names, args), *kwargs.items()]
        named = dict(given)
        check_forward_switches(f"{name}.forward", named)  # 'no' read as true (round 31, AA634-AA636)
        check_attention_set(self, f"{name}.forward")  # one set on the config after the load (round 32, AC239's kind)
        check_items_count(kwargs.get("num_items_in_batch"), f"{name}.forward", named.get("labels"))
        refuse_meta_arguments(self, f"{name}.forward", given)
        check_position_values(named.get("position_ids"), model_positions(self), f"{name}.forward")  # W525
        _check_counted_positions(self, named, f"{name}.forward")  # Y514
        _check_ids_and_mask(self, named, f"{name}.forward")  # AA625, AA630
        check_flex_cpu_forward(self, f"{name}.forward", named.get("attention_mask"),  # aborts torch (AI380, AI403)
                               named.get("cache", named.get("past_key_values")))
        check_cache_position(named.get("cache_position"), input_length(named.get("input_ids"),  # read by no one
                                                                       named.get("inputs_embeds")),  # (AC173)
                             named.get("cache", named.get("past_key_values")), f"{name}.forward")
        if named.get("labels") is not None:  # float labels, labels past the vocabulary (round 31, AA632, AA633)
            check_hf_labels(named["labels"], _input_shape(named), self.config.vocab_size,
                            kwargs.get("num_items_in_batch"), f"{name}.forward")
        if "num_items_in_batch" in kwargs:
            kwargs["num_items_in_batch"] = loss_count(kwargs["num_items_in_batch"])
        if "logits_to_keep" in named:  # checked, numpy's int as Python's (W504's kind; round 30, Y77, Y80, Y97-Y100)
            args, kwargs = _checked_logits_to_keep(names, args, kwargs, named, f"{name}.forward")
        return forward(self, *args, **kwargs)

    return counted


def _checked_logits_to_keep(names: list, args: tuple, kwargs: dict, named: dict, api: str) -> tuple[tuple, dict]:
    """``(args, kwargs)`` with ``logits_to_keep`` (given by name or in its place) as ``hf.logits_to_keep`` checks it,
    the rule LeviathanForCausalLM's forward follows: transformers' own forward indexed with a float, a text, numpy's
    bool or an index past the sequence (raw IndexError / TypeError, issue 30 round 30, Y80, Y98-Y100) and read -1 and
    True as counts without a word (Y77, Y97)."""
    length = input_length(named.get("input_ids"), named.get("inputs_embeds"))
    kept = check_logits_to_keep(named["logits_to_keep"], length, api)
    check_kept_for_loss(kept, named.get("labels"), length, api)  # a count beside labels (round 31, AA86)
    if "logits_to_keep" in kwargs:
        return args, {**kwargs, "logits_to_keep": kept}
    return tuple(kept if n == "logits_to_keep" else a for n, a in zip(names, args)) + args[len(names):], kwargs


def _input_shape(named: dict) -> tuple[int, int] | None:
    """The (B, T) of a forward's input (``input_ids``, or ``inputs_embeds`` (B, T, D)); None when neither is such a
    tensor (the original model names that itself)."""
    for value, dims in ((named.get("input_ids"), 2), (named.get("inputs_embeds"), 3)):
        if isinstance(value, torch.Tensor) and value.dim() == dims:
            return int(value.shape[0]), int(value.shape[1])
    return None


def _check_ids_and_mask(model: nn.Module, named: dict, api: str) -> None:
    """The input rules of leviathan's own models for an adopted model's forward: ids in [0, config.vocab_size)
    (``model.labels.check_input_ids``), where the generator embeds any id below its capacity b^k, so ``generate`` on
    prompt ids past the 300 of the vocabulary ran without a word (issue 30 round 31, AA625); and a 2-D
    ``attention_mask`` of shape (B, cached + T) with 0/1 values (``model.attention_inputs.check_attention_inputs``):
    one of 5 positions for 9 ids was taken without a word (AA630). A 4-D mask (transformers' custom masks) is the
    original's to read. Costs one scan of the ids and of a 2-D mask per call (one device sync each, as in
    LeviathanForCausalLM); none on meta or while compiling."""
    from ..model.attention_inputs import check_attention_inputs, check_custom_mask_shape, check_mask_dims
    from ..model.labels import check_input_ids

    if torch.compiler.is_compiling():
        return
    ids, vocab = named.get("input_ids"), getattr(model.config, "vocab_size", None)
    if isinstance(ids, torch.Tensor) and not ids.is_meta and isinstance(vocab, int):
        check_input_ids(ids, vocab)
    mask, shape = named.get("attention_mask"), _input_shape(named)
    if mask is not None and not isinstance(mask, torch.Tensor):  # a numpy mask: transformers' raw AttributeError
        from ..errors import ArgumentValueError  # in masking_utils, under sdpa and flex alike (round 36, AK68)

        raise ArgumentValueError(f"{api}: attention_mask must be a torch.Tensor (batch, keys) of 0 and 1, got "
                                 f"{type(mask).__name__}; pass torch.as_tensor(mask), or leave it out")
    check_mask_dims(mask, api, dims=(2, 4))  # a 3-D mask was taken without a word (round 32, AC171)
    if isinstance(mask, torch.Tensor) and shape is not None and not mask.is_meta:
        cache = named.get("cache", named.get("past_key_values"))
        past = cache.get_seq_length() if cache is not None and hasattr(cache, "get_seq_length") else 0
        if mask.dim() == 2:
            check_attention_inputs(None, mask, batch=shape[0], length=shape[1], past=int(past))
        else:  # a 4-D mask of another width was torch's raw size mismatch (round 33, AE170)
            heads = getattr(model.config, "num_attention_heads", 1)
            check_custom_mask_shape(mask, api, batch=shape[0], length=shape[1], past=int(past), heads=int(heads),
                                    keys=_fixed_mask_widths(cache, shape[1]))


def _fixed_mask_widths(cache: Any, length: int) -> tuple[int, ...]:
    """The key widths a fixed-size cache makes transformers' 4-D mask (a StaticCache of 64: (1, 1, 1, 64)), read from
    its layers (``max_cache_len``, ``get_mask_sizes``). The mask check (AE170) asked ``get_max_cache_shape``, which
    transformers 5 no longer has, so a StaticCache of the model's positions was refused at its first forward (issue
    30 round 34, AG32, a regression of fix34b). Reads attributes only."""
    widths = set()
    for layer in getattr(cache, "layers", None) or ():
        most = getattr(layer, "max_cache_len", None)
        if isinstance(most, int) and not isinstance(most, bool) and most > 0:
            widths.add(most)
        try:
            width = layer.get_mask_sizes(length)[0] if hasattr(layer, "get_mask_sizes") else None
        except Exception:  # a layer not yet filled, or of another kind: its width is not this check's to name
            width = None
        if isinstance(width, int) and not isinstance(width, bool) and width > 0:
            widths.add(width)
    return tuple(sorted(widths))


def _check_counted_positions(model: nn.Module, named: dict, api: str) -> None:
    """``positions.check_counted_positions`` for a forward given no positions (transformers counts them from the
    cache): ids past max_position_embeddings ran, while the same positions given as position_ids are refused since
    round 29, W525 (issue 30 round 30, Y514, decided: refused, as in LeviathanForCausalLM and leviathan's CausalLM)."""
    if named.get("position_ids") is not None:
        return  # given: their values are checked (check_position_values); a cache_position is the counted ones
    cache = named.get("cache", named.get("past_key_values"))
    check_counted_positions(model, input_length(named.get("input_ids"), named.get("inputs_embeds")), cache, api)


def is_adopted(model: Any) -> bool:
    """True for a model returned by ``adopt`` or ``load_adopted``."""
    return isinstance(model, _AdoptedMixin)


# ---- checks --------------------------------------------------------------------------------------------------
def _settings(generator_settings: dict[str, Any]) -> dict[str, Any]:
    fixed = set(FIXED) & set(generator_settings)
    if fixed:
        raise UserError(f"generator setting(s) {sorted(fixed)} are taken from the model's input embedding; "
                        f"leave them out (choose among {', '.join(SETTINGS)})")
    unknown = sorted(set(generator_settings) - set(SETTINGS))
    if unknown:
        raise UserError(f"unknown generator setting(s) {unknown}; choose among {', '.join(SETTINGS)} "
                        "(LeviathanGenerator's arguments, paper defaults)")
    return dict(generator_settings)


def _refuse_no_model_weights(model: PreTrainedModel, info: dict, source: Any) -> None:
    """UserError when the weights file holds none of the model's tensors: an optimizer.pt copied in as
    pytorch_model.bin was blamed on "a folder re-saved by transformers" with the fix of loading its baked table,
    which it does not have (issue 30 round 22, S531): the file is not a model's weights at all."""
    tied = set(getattr(model, "all_tied_weights_keys", None) or {})
    if set(model.state_dict()) - tied - set(info["missing_keys"]):
        return
    from ..eval.weight_names import shown_names

    folder = Path(str(source)) if isinstance(source, (str, os.PathLike)) else None
    file = next((folder / n for n in _PLAIN_WEIGHTS if folder is not None and (folder / n).is_file()), None)
    held = sorted(info.get("unexpected_keys") or ())
    raise UserError(f"{str(file or source)!r} holds none of the model's tensors"
                    + (f" (only {shown_names(held)})" if held else "") + ": it is not a model's weights (an "
                    "optimizer's state, or another file copied in its place); restore the model's weights file from a "
                    "copy, or save the adopted model again (model.save_pretrained(DIR))")


def _missing_generator_tensors(source: Any, missing: list[str], total: int) -> str:
    """The line for a saved folder whose file lacks ``missing`` of the generator's ``total`` tensors. None of them: a
    folder re-saved by transformers alone (the baked table only). Some: config.json's ``leviathan_generator`` was
    edited (form 'khronos' for 'paper', center true for false: settings that need tensors these weights never had),
    or the weights file lost them; that was blamed on a transformers re-save and answered with re-adopting (issue 30
    round 17, E175, E177). Footgun: the two causes look alike from the folder, so the line names both."""
    shown = f"{', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}"
    if len(missing) < total:
        return (f"{source} lacks {len(missing)} of the generator's tensors ({shown}) that config.json's {CONFIG_KEY} "
                f"asks for, while it holds the generator's other tensors: config.json's settings were edited (they are "
                f"not the ones saved with these weights), or the weights file lost them; restore config.json (or the "
                f"weights) from a copy")
    return (f"{source} has {CONFIG_KEY} in config.json but lacks {len(missing)} of the generator's tensors "
            f"({shown}), so the generator would be random (a folder re-saved by transformers without leviathan keeps "
            "only the baked table); load it as the table model with transformers.AutoModelForCausalLM.from_pretrained, "
            "and leviathan.hf.adopt(model, fit=Fit(...)) to start a generator from that table")


def _refuse_other_generator(model: PreTrainedModel, state_dict: Any) -> None:
    """UserError when ``state_dict`` holds the generator's tensors in other shapes than ``model``'s generator (it was
    saved from a model adopted with other settings: ``rank``, ``knots``, ``modes``, ``seed_dim``, ...), naming the
    first such tensor and the adoption to use (``_AdoptedMixin.load_state_dict``; round 24, W636)."""
    generator = model.get_input_embeddings()
    if not isinstance(generator, LeviathanGenerator) or not hasattr(state_dict, "items"):
        return
    prefix = model._generator_prefix() + "."
    own = {prefix + k: tuple(v.shape) for k, v in generator.state_dict().items()}
    fix = (f"adopt the model with the settings the checkpoint's config.json records under {CONFIG_KEY} (or load it: "
           f"load_adopted(checkpoint)), then resume")
    for key, value in state_dict.items():
        shape = tuple(getattr(value, "shape", ()))
        if key in own and shape != own[key]:
            raise UserError(f"the weights loaded into this {type(model).__name__} hold its generator's {key} in shape "
                            f"{shape}, where this model's is {own[key]}: they were saved from a model adopted with "
                            f"other generator settings (this one: {_shown_settings(generator)}); {fix}")
    _refuse_other_tensors(model, state_dict, own, fix)


def _refuse_other_tensors(model: PreTrainedModel, state_dict: Any, own: dict, fix: str) -> None:
    """UserError when ``state_dict`` holds some of the generator's tensors but lacks one of ``own`` or holds one the
    generator has not (the baked ``.weight`` table aside): the Trainer loads with ``strict=False``, so a center=False
    checkpoint resumed into a model adopted with center=True kept the model's own initial ``center`` buffer, a
    generator the checkpoint was never trained as, without a word (issue 30 round 27, S478). A state dict holding none
    of them (the head alone) is left to torch."""
    prefix = model._generator_prefix() + "."
    given = {k for k in state_dict if k.startswith(prefix) and k != prefix + "weight"}
    if not given:
        return
    lacking, extra = sorted(set(own) - given), sorted(given - set(own))
    if lacking or extra:
        said = "; ".join(part for part in (f"lack its {', '.join(lacking)}" if lacking else "",
                                           f"hold {', '.join(extra)}, which it has not" if extra else "") if part)
        settings = model.get_input_embeddings().settings()
        shown = ", ".join(f"{k}={settings[k]!r}" for k in ("center", "norm", "form", "init"))
        raise UserError(f"the weights loaded into this {type(model).__name__} {said}: they were saved from a "
                        f"generator adopted with other settings (this one: {shown}); {fix}")


def _shown_settings(generator: LeviathanGenerator) -> str:
    """The generator's size settings as ``seed_dim=8, modes=2, knots=8, rank=8``."""
    settings = generator.settings()
    return ", ".join(f"{k}={settings[k]}" for k in ("seed_dim", "modes", "knots", "rank", "k", "base"))


def _refuse_drawn_at_random(model: PreTrainedModel, missing: Any, source: Any) -> None:
    """UserError when the saved weights lack tensors of the model other than the generator's (named by
    ``_missing_generator_tensors``), which transformers draws at random with only its LOAD REPORT: a sharded save's
    index that lost its ``lm_head.weight`` entry, or a model.safetensors without it, loaded a random head (issue 30
    round 25, Y510), where ``LeviathanForCausalLM.from_pretrained`` refuses the same (``check_weight_names``, W289)."""
    ignored = [re.compile(p) for p in (model._keys_to_ignore_on_load_missing or ())]
    tied = set(getattr(model, "all_tied_weights_keys", None) or {})
    lacking = sorted(k for k in missing or () if k not in tied and not any(p.search(k) for p in ignored))
    if lacking:
        from ..eval.weight_names import shown_names

        raise UserError(f"the weights in {source} lack {len(lacking)} of the model's tensors ({shown_names(lacking)}), "
                        f"which would be drawn at random: the weights file (or a sharded save's index) lost them; "
                        f"restore the folder from a copy, or save the model again (model.save_pretrained(DIR))")


def _refuse_dropped(model: PreTrainedModel, unexpected: Any, source: Any) -> None:
    """UserError when the file holds tensors the model its config.json builds has no place for (the baked table
    aside): a config.json edited to num_hidden_layers 1 over weights of 2 layers loaded a 1-layer model, layer 1's
    tensors dropped, other logits, with only transformers' LOAD REPORT table (issue 30 round 20, M190; the native
    loader's ``eval.weight_names`` refuses the same case)."""
    ignored = [re.compile(p) for p in (model._keys_to_ignore_on_load_unexpected or ())]
    dropped = sorted(k for k in unexpected or () if not any(p.search(k) for p in ignored))
    if dropped:
        from ..eval.weight_names import shown_names

        raise UserError(f"the weights in {source} hold {len(dropped)} tensor(s) the model its config.json describes "
                        f"has no place for ({shown_names(dropped)}), which would be dropped: config.json was edited "
                        f"or comes from another model; restore it from a copy, or save the model again")


def _check_saved_values(settings: dict[str, Any], where: str) -> None:
    """UserError naming config.json when its generator settings are ones the generator refuses: ``norm: 'yes'`` was
    "invalid generator setting ...; pick values LeviathanGenerator accepts", a fix for ``adopt``'s caller, where the
    cause is an edited file (issue 30 round 17, E174). The generator's own checks, without building it."""
    from ..model.generator import _check_settings

    params = inspect.signature(LeviathanGenerator).parameters
    lacking = [name for name, p in params.items() if p.default is p.empty and name not in settings]
    if lacking:  # was "vocab_size must be an integer >= 1, got <class 'inspect._empty'>" (round 27, S89)
        raise UserError(f"{where}: {CONFIG_KEY} lacks {', '.join(lacking)}, which adopt writes: config.json was "
                        f"edited or damaged; restore it from a copy, or adopt the original model again")
    given = {name: settings.get(name, p.default) for name, p in params.items()}
    try:
        _check_settings(**{k: v for k, v in given.items() if k not in ("init", "form")})
        for name, allowed in (("init", GENERATOR_INITS), ("form", GENERATOR_FORMS)):
            if given[name] not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {given[name]!r}")
    except ValueError as e:
        # the generator's own fix left out: this one's is config.json's (round 32, AC373's line)
        raise UserError(f"{where}: {CONFIG_KEY} holds a setting the generator refuses ({getattr(e, 'problem', e)}): "
                        f"config.json was edited or damaged; restore it from a copy, or adopt the original model "
                        f"again") from None


def _check_json_settings(settings: Any) -> None:
    """UserError, before anything is written, when ``config.leviathan_generator`` holds a value JSON cannot write (a
    numpy scalar put there by hand): ``save_pretrained`` raised json's TypeError and left a config.json cut short
    alone in the folder (issue 30 round 18, G82, G83; adopt itself now stores plain numbers)."""
    try:
        json.dumps(settings)
    except (TypeError, ValueError) as e:
        raise UserError(f"the model's config: {CONFIG_KEY} holds a value config.json cannot hold ({e}); set it to "
                        f"plain numbers (int(...), float(...)), or adopt the original model again") from None


def _build_generator(settings: dict[str, Any], scale_fix: str = SAVED_SCALE_FIX) -> LeviathanGenerator:
    """The generator of ``settings`` (config.leviathan_generator, or adopt's resolved settings); ``scale_fix`` says
    where an output_scale outside its range came from (config.json by default; adopt: the embedding's own scale)."""
    _check_saved_settings(settings)
    params = inspect.signature(LeviathanGenerator).parameters
    kwargs = {k: v for k, v in settings.items() if k in params}
    if settings.get("output_scale") is not None:
        check_output_scale(settings["output_scale"], scale_fix)
    try:
        if settings.get("output_scale") is not None:
            return ScaledLeviathanGenerator(**kwargs, output_scale=settings["output_scale"])
        return LeviathanGenerator(**kwargs)
    except (TypeError, ValueError) as e:
        raise UserError(f"invalid generator setting: {e}; pick values LeviathanGenerator accepts (e.g. a base with "
                        f"base^k >= vocab_size; the settings given: {settings})") from e


def _causal_lm_class(config: PretrainedConfig) -> type[PreTrainedModel]:
    """The ``AutoModelForCausalLM`` class of ``config``; UserError for what adoption does not support."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    what = f"{type(config).__name__} (model_type {getattr(config, 'model_type', None)!r})"
    if getattr(config, "is_encoder_decoder", False):
        raise UserError(f"{what} is an encoder-decoder model, which adopt does not support; adopt a decoder-only "
                        "causal LM (Llama, Qwen2, Mistral, GPT-2, ...)")
    sub_configs = getattr(config, "sub_configs", None) or {}
    if sub_configs:
        raise UserError(f"{what} is a composite (multimodal) model with sub-configs {sorted(sub_configs)}, which "
                        "adopt does not support; adopt its text-only causal LM instead (e.g. built from "
                        "config.text_config)")
    try:
        return MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]
    except KeyError:
        raise UserError(f"{what} has no causal language model class (AutoModelForCausalLM does not map it: an "
                        "encoder-only or non-text model); adopt a causal LM or its config (Llama, Qwen2, Mistral, "
                        "GPT-2, ...)") from None


def _check_instance(model: PreTrainedModel) -> tuple[nn.Embedding, float]:
    """-> (the model's input embedding, the constant it multiplies its rows by: 1.0 for a plain table), after every
    check adoption needs."""
    name = type(model).__name__
    if is_adopted(model):
        raise UserError(f"{name} is already adopted (its input embedding is a LeviathanGenerator); adopt a model "
                        "once, or bake it first (leviathan.hf.to_original) to adopt a fresh generator")
    expected = _causal_lm_class(model.config)
    if not isinstance(model, expected):
        raise UserError(f"{name} is not a causal language model (AutoModelForCausalLM maps "
                        f"{type(model.config).__name__} to {expected.__name__}); pass a {expected.__name__} or "
                        "its config")
    bidirectional = _bidirectional_self_attention(model)
    if bidirectional:
        raise UserError(f"{name} is an encoder-only model: its attention ({', '.join(bidirectional)}) sees both "
                        "directions (is_causal False; for BERT-like configs, is_decoder=False), so it is no causal "
                        "LM although AutoModelForCausalLM maps it; adopt a decoder-only causal LM (Llama, Qwen2, "
                        "Mistral, GPT-2, ...), or build this one with is_decoder=True to adopt its decoder form")
    try:
        embedding = model.get_input_embeddings()
    except NotImplementedError:
        embedding = None
    if embedding is None:
        raise UserError(f"{name} has no input embedding that get_input_embeddings() returns; adopt needs a model "
                        "whose get_input_embeddings()/set_input_embeddings() reach its token table")
    if isinstance(embedding, LeviathanGenerator):
        raise UserError(f"{name}'s input embedding is already a LeviathanGenerator; adopt a model with a table, or "
                        "use this one as it is")
    scale = 1.0 if type(embedding) is nn.Embedding else _output_scale(embedding)
    options = _lookup_options(embedding) if scale is not None else []
    if options:  # max_norm (round 24, W652), scale_grad_by_freq (round 26, Q132)
        option, value, does, off = options[0]
        raise UserError(f"{name}'s input embedding has {option}={value!r}: it {does} (it does more than look up a "
                        f"row, and the generator would silently drop that); set model.get_input_embeddings()."
                        f"{option} = {off} first if the model should run without it, or adopt a model whose "
                        f"embedding is a plain lookup")
    _refuse_hooks(embedding, name)
    if scale is None:
        raise UserError(f"{name}'s input embedding is a {type(embedding).__name__}, not a plain torch.nn.Embedding "
                        "nor a table scaled by a constant embed_scale (it does more than look up a row, and the "
                        "generator would silently drop that); adopt supports models whose get_input_embeddings() is "
                        "an nn.Embedding, or one that multiplies its rows by embed_scale (Gemma)")
    if getattr(model.config, "tie_word_embeddings", False) and model.get_output_embeddings() is None:
        raise UserError(f"{name} ties its head to the input table but get_output_embeddings() returns None, so the "
                        "head cannot be untied; adopt a model whose get_output_embeddings() is its head")
    return embedding, scale


def _refuse_hooks(embedding: nn.Module, name: str) -> None:
    """UserError when a hook is registered on the input embedding adopt replaces: the hook lives on that module and
    cannot be carried over to the generator, so a forward hook scaling the output by 0 was dropped and the logits
    changed without a word (issue 30 round 28, U221). ``enable_input_require_grads()`` registers such a hook too."""
    kinds = {"forward ": embedding._forward_hooks, "forward pre-": embedding._forward_pre_hooks,
             "backward ": embedding._backward_hooks, "backward pre-": embedding._backward_pre_hooks}
    found = {kind: len(hooks) for kind, hooks in kinds.items() if hooks}
    if found:
        shown = ", ".join(f"{count} {kind}hook{'s' if count > 1 else ''}" for kind, count in found.items())
        raise UserError(f"{name}'s input embedding has {shown} registered on it: adopt replaces that module, and a "
                        f"hook on it cannot be carried over to the generator (it would be dropped without a word); "
                        f"remove the hook (handle.remove()) before adopt, or register it after adopt on "
                        f"model.get_input_embeddings()")


def _lookup_options(embedding: nn.Embedding) -> list[tuple[str, Any, str, Any]]:
    """(option, its value, what it does, the value that turns it off) for each ``nn.Embedding`` option that is set
    and changes what the table does beyond a row lookup, which no generator carries: ``max_norm`` renormalises each
    row it looks up and writes it back (issue 30 round 24, W652), ``scale_grad_by_freq`` divides each row's gradient
    by its id's count in the batch (round 26, Q132: both were dropped without a word). The generator's parameters are
    shared by every id, so neither has a row to act on; ``sparse`` only changes the gradient's layout, and
    ``padding_idx`` is in the module docstring's footguns."""
    options = [("max_norm", getattr(embedding, "max_norm", None), "renormalises every row it looks up", None),
               ("scale_grad_by_freq", getattr(embedding, "scale_grad_by_freq", False),
                "divides each row's gradient by how often its id occurs in the batch", False)]
    return [option for option in options if option[1] not in (None, False)]


# the names transformers gives a decoder layer's cross-attention (Marian/Bart ``encoder_attn``, BERT ``crossattention``,
# T5 ``EncDecAttention``, ...): attention over an encoder's output, which is never causal and says nothing of the
# decoder's own self-attention
_CROSS_ATTENTION = frozenset({"encoder_attn", "crossattention", "cross_attention", "cross_attn", "EncDecAttention"})


def _bidirectional_self_attention(model: nn.Module) -> list[str]:
    """The class names of ``model``'s self-attention modules that set ``is_causal`` False (they see both directions).
    Cross-attention is skipped (a module named as one in ``_CROSS_ATTENTION``, or flagged ``is_cross_attention``, and
    everything under it): MarianForCausalLM and BartForCausalLM built with is_decoder=True have a causal self_attn
    and a non-causal ``encoder_attn`` in each decoder layer, and reading the latter called them encoder-only models
    (issue 30 round 24, W181, W644)."""
    cross: list[str] = []
    found = set()
    for name, module in model.named_modules():
        if any(name == c or name.startswith(c + ".") for c in cross):
            continue
        if name.rpartition(".")[2] in _CROSS_ATTENTION or getattr(module, "is_cross_attention", False) is True:
            cross.append(name)
            continue
        if getattr(module, "is_causal", None) is False:
            found.add(type(module).__name__)
    return sorted(found)


def _output_scale(embedding: nn.Module) -> float | None:
    """The constant an ``nn.Embedding`` subclass multiplies its rows by (its ``embed_scale``), when its forward is exactly
    that on a few ids; None for anything else. Gemma keeps the constant as a float (``scalar_embed_scale``), taken as a
    float32 when present, and as a buffer cast with the model: a bf16 model's scale is then not stored pre-rounded."""
    scale = getattr(embedding, "embed_scale", None)
    if not isinstance(embedding, nn.Embedding) or not isinstance(scale, (float, int, torch.Tensor)):
        return None
    if isinstance(scale, torch.Tensor):
        if scale.numel() != 1 or scale.is_meta:
            return None
        scale = scale.item()
    if isinstance(getattr(embedding, "scalar_embed_scale", None), (float, int)):
        scale = torch.tensor(float(embedding.scalar_embed_scale), dtype=torch.float32).item()
    weight = embedding.weight
    if not weight.is_meta:  # on meta the class's embed_scale is all there is to go by
        ids = torch.tensor([0, embedding.num_embeddings // 2, embedding.num_embeddings - 1], device=weight.device)
        with torch.no_grad():
            got = embedding(ids)  # (3, D)
            want = nn.functional.embedding(ids, weight) * torch.tensor(scale, device=weight.device).to(weight.dtype)
        if got.shape != want.shape or not torch.equal(got, want):
            return None
    return float(scale)


# ---- adopt ---------------------------------------------------------------------------------------------------
def adopt(model_or_config: PreTrainedModel | PretrainedConfig, *, fit: Fit | bool | None = None,
          **generator_settings: Any) -> PreTrainedModel:
    """Give a transformers causal LM a ``LeviathanGenerator`` input embedding (see the module docstring).

    model_or_config: a causal LM instance (changed in place and returned: its class becomes
    ``Leviathan<Class>``) or its config (a fresh model is built; the config is copied, not changed).
    fit: ``Fit(frequency=..., text=...)`` (or True: uniform weights) fits the generator to the instance's trained
    input table before returning, and leaves its ``FitReport`` in ``model.leviathan_fit`` (``adoption_fit``:
    per-bucket cosine and MSE, the text's loss before adoption, with the untrained generator and after the fit).
    generator_settings: ``k, seed_dim, modes, knots, rank, degree, ln_eps, base`` (LeviathanGenerator's arguments;
    paper defaults: 3, 128, 8, 32, 64, 2, 1e-5, smallest b with b^k >= V) and the options ``init, center, norm, form,
    table_std, norm_eps`` (defaults "reference", False, False, "paper", 0.02, 1e-6; see ``model/generator.py``).

    Footguns: an input embedding built with ``max_norm`` or ``scale_grad_by_freq`` is refused (the generator would
    drop either: module docstring); ``padding_idx`` and ``sparse`` are not carried.
    """
    settings = _settings(generator_settings)
    fit = as_fit(fit)
    if isinstance(model_or_config, PretrainedConfig):
        if fit is not None:
            raise UserError("fit= fits the generator to a trained model's input table, and a config has none (adopt "
                            "builds a fresh model); pass the trained model instance, or leave fit out")
        config = copy.deepcopy(model_or_config)
        cls = _causal_lm_class(config)
        check_source_config(config)  # hidden_size=0: transformers' raw ZeroDivisionError (round 26, Q128)
        model_or_config = cls(config)  # a fresh model, then adopted like any instance
    if not isinstance(model_or_config, PreTrainedModel):
        raise UserError(f"adopt takes a transformers causal LM (a PreTrainedModel) or its config, got "
                        f"{type(model_or_config).__name__}; for a model of your own, use "
                        "leviathan.LeviathanGenerator(vocab_size, hidden_size) as its nn.Embedding")
    model = model_or_config
    embedding, scale = _check_instance(model)
    base = type(model)
    resolved = _resolved(settings, embedding, scale, base)
    if fit is not None:  # checked, and the trained model measured, before anything changes
        weights = row_weights(fit.frequency, embedding.num_embeddings, fit.buckets)
        positions = model_positions(model)
        text = (text_ids(fit.text, embedding.num_embeddings, embedding.weight.device, positions)
                if fit.text is not None else None)
        check_fit_table(embedding.weight)  # NaN rows, all zeros, a scale no fit follows (round 14, B252-B254)
        table = embedding.weight.detach().clone()  # (V, D): the fit's target
        loss_before = text_loss(model, text) if text is not None else None
    generator = _build_generator(resolved, ADOPTED_SCALE_FIX).to(device=embedding.weight.device,
                                                                 dtype=embedding.weight.dtype)
    undo = _swap_in(model, base, embedding, generator, resolved)
    if fit is not None:
        try:
            loss_untrained = text_loss(model, text) if text is not None else None
            objective = fit_to_table(generator, table, weights, fit)
            model.leviathan_fit = FitReport(steps=fit.steps, objective=objective,
                                            buckets=bucket_fits(generator, table, weights, fit.buckets),
                                            loss_before=loss_before, loss_untrained=loss_untrained,
                                            loss_fit=text_loss(model, text) if text is not None else None)
        except BaseException as e:  # Ctrl-C or a failed fit: the caller's model as it was (round 21, P211)
            undo()
            e.add_note(f"adopt did not finish: the model passed in is left as it was ({base.__name__}, its trained "
                       f"input table and config restored)")
            raise
    return model


def _swap_in(model: PreTrainedModel, base: type, embedding: nn.Module, generator: LeviathanGenerator,
             resolved: dict[str, Any]) -> Any:
    """Adopt ``model`` in place (generator in, head untied, settings stored, class switched); returns the function
    that puts it back as it was. ``adopt(b, fit=...)`` changes the caller's ``b`` before its fit, which can take
    minutes: Ctrl-C there left ``b`` half-adopted, its class ``Leviathan...``, its trained table replaced by a partly
    fitted generator and lost (issue 30 round 21, P211); ``adopt`` undoes the swap when the fit does not finish.

    The adopted model gets a config of its own (a deep copy, set on every part that held the caller's): models built
    from one ``LlamaConfig`` share it, and adopting one at rank 4 and another at rank 8 wrote rank 8 into the first
    one's config too; its save then held rank-4 weights under a rank-8 config.json, refused on load (issue 30 round
    23, U249, damage), and a plain model of that config saved ``leviathan_generator`` in its config.json (U250)."""
    head = model.get_output_embeddings()
    tied = head is not None and getattr(head, "weight", None) is embedding.weight
    original, config = model.config, copy.deepcopy(model.config)
    holders = [m for m in model.modules() if getattr(m, "config", None) is original]  # the model and its parts
    tied_keys = getattr(model, "all_tied_weights_keys", None)
    if tied:  # the head keeps the values, in a tensor of its own
        head.weight = nn.Parameter(embedding.weight.detach().clone(), requires_grad=embedding.weight.requires_grad)
    model.set_input_embeddings(generator)
    for holder in holders:  # a config of its own: the caller's may be shared (round 23, U249, U250)
        holder.config = config
    config.tie_word_embeddings = False
    setattr(config, CONFIG_KEY, resolved)
    held_config(config)  # its own save_pretrained keeps a model folder's config.json (round 35, AI585, AI588)
    model.__class__ = adopted_class(base)
    model.all_tied_weights_keys = model.get_expanded_tied_weights_keys(all_submodels=True)  # now {}

    def undo() -> None:
        model.__class__ = base
        model.set_input_embeddings(embedding)
        if tied:
            head.weight = embedding.weight
        for holder in holders:
            holder.config = original  # never written: the caller's config as it was
        model.all_tied_weights_keys = tied_keys
        model.__dict__.pop("leviathan_fit", None)

    return undo


def _resolved(settings: dict[str, Any], embedding: nn.Embedding, scale: float, base: type) -> dict[str, Any]:
    """The settings stored in config.json: sized to the embedding, every default explicit, base resolved, and the
    embedding's row scale when it is not 1."""
    generator = _build_generator({"vocab_size": embedding.num_embeddings, "hidden_size": embedding.embedding_dim,
                                  **settings}).to("meta")
    out = {"vocab_size": generator.vocab_size, "hidden_size": generator.hidden_size}
    out.update({k: v for k, v in generator.settings().items() if k in SETTINGS})
    if scale != 1.0:  # a table scaled by 1 is a plain table
        out["output_scale"] = scale
    out["architecture"] = base.__name__  # the class bake_adopted writes and load_adopted subclasses
    return out


# ---- load ----------------------------------------------------------------------------------------------------
def _base_class(config: PretrainedConfig, where: Path) -> type[PreTrainedModel]:
    """The class the adoption recorded (``leviathan_generator.architecture``), else the config's causal LM class.
    One that is no causal LM is refused, as ``adopt`` refuses it: ``LlamaForSequenceClassification`` or ``LlamaModel``
    edited in loaded that class, the trained lm_head dropped for a head of random values, with only transformers'
    load report (issue 30 round 18, G96, G97; a folder saved before the settings digest had no other check)."""
    import transformers

    settings = getattr(config, CONFIG_KEY, None)
    name = settings.get("architecture") if isinstance(settings, dict) else None
    cls = getattr(transformers, name, None) if name else None
    if not (isinstance(cls, type) and issubclass(cls, PreTrainedModel)):
        return _causal_lm_class(config)
    causal = _causal_class_of(cls)
    if causal is None or not issubclass(cls, causal):  # the causal LM of the class's own config (model_type: below)
        shown = f" ({causal.__name__} for its config)" if causal is not None else ""
        raise UserError(f"{where}: {CONFIG_KEY}.architecture is {name!r}, which is no causal language model (adopt "
                        f"takes only one{shown}), so the saved lm_head would be dropped; config.json was edited; "
                        f"restore it from a copy, or put the causal LM class it was saved as back"
                        + (f" ({causal.__name__!r})" if causal is not None else ""))
    return cls


def load_adopted(path: str | os.PathLike, **from_pretrained_kwargs: Any) -> PreTrainedModel:
    """Load a directory written by an adopted model's ``save_pretrained`` (or a Trainer checkpoint of one);
    ``from_pretrained_kwargs`` go to ``from_pretrained`` (``dtype``, ``device_map``, ...). Read under the folder's
    shared lock, so a ``save_pretrained`` renaming its files into it is waited for, not read half done (round 23,
    U515: ``swap_lock``).
    """
    from ..devices import check_device_map
    from ..empty_paths import refuse_empty_path

    refuse_empty_path(path, "load_adopted's path")  # '' was read as '.' (issue 30 round 17, E168)
    check_device_map(from_pretrained_kwargs.get("device_map"), "load_adopted")  # round 22, S608, S609
    from ..value_rules import check_read_path

    check_read_path("load_adopted", "path", path, "pass the folder an adopted model was saved in")  # M346 (round 20)
    path = Path(path)
    if os.path.isfile(path):  # "PATH/config.json has no config.json" before (issue 30 round 6)
        raise UserError(f"{path} is a file; pass the directory that holds it (written by save_pretrained)")
    from ..swap_lock import reading_whole

    with reading_whole(path, "load_adopted"):  # a save racing this load read as a mix (round 23, U515)
        return _load_whole(path, from_pretrained_kwargs)


def _check_saved_source(config: Any, where: Path) -> None:
    """``adopt``'s own check of the transformers settings (``check_source_config``), on the config a folder saved:
    config.json edited to ``hidden_act: 'nope'``, ``attention_dropout: 5`` or GPT-2's ``n_positions: -1`` ended in the
    raw KeyError / RuntimeError that round 27 fixed for ``adopt`` (issue 30 round 28, U238-U240, U732-U805). One line
    naming the file and the setting."""
    try:
        check_source_config(config)
    except UserError as e:
        raise UserError(f"{str(where)!r}: {str(e).removeprefix('adopt: ')} (config.json was edited, or written by "
                        f"another program)") from None


def _check_source_before_save(config: Any) -> None:
    """``_check_saved_source``'s rule before an adopted model's ``save_pretrained`` writes: ``A.config.eos_token_id =
    400`` set after ``adopt`` over 300 ids was saved without a word, and ``load_adopted`` then refused the folder,
    blaming an edit of config.json (issue 30 round 31, AA427); the generation_config's ids were refused at save
    already (AA426, ``save_folder._check_generation_ids``). One line naming the setting; nothing is written."""
    try:
        check_source_config(config)
    except UserError as e:
        raise UserError(f"save_pretrained: {str(e).removeprefix('adopt: ')} (load_adopted would refuse the saved "
                        f"config.json); nothing was written") from None


def _load_whole(path: Path, from_pretrained_kwargs: dict) -> PreTrainedModel:
    """``load_adopted``'s checks of the folder and its load, under the folder's shared lock (``swap_lock``)."""
    from .configuration import check_generation_ids

    _check_config_there(path)
    fix = "restore it from a copy, or save the model again (save_pretrained writes it)"
    raw = read_config_json(path / "config.json", fix)  # G446 (round 18); S118 (round 22) for from_pretrained
    check_saved_dtype(raw, path / "config.json", fix)  # 'float8': transformers' AttributeError (round 22, S119)
    config = saved_config(path, raw, fix)  # vocab_size 300.0: transformers' StrictDataclassFieldValidationError (S90)
    config.__dict__.pop(WEIGHTS_RECORD, None)  # checked after the load; never carried into a later save or bake
    held_config(config)  # its own save_pretrained keeps the folder's config.json (round 35, AI585, AI588)
    if CONFIG_KEY not in raw:  # present but [] or {}: a damaged adopted folder, not a table model (round 21, P308)
        raise UserError(f"{path} is not an adopted model (its config.json has no {CONFIG_KEY!r}); load it with "
                        "transformers.AutoModelForCausalLM.from_pretrained, or adopt it after loading")
    _check_saved_settings(raw[CONFIG_KEY], str(path / "config.json"))
    _check_saved_values(getattr(config, CONFIG_KEY), str(path / "config.json"))
    _check_saved_source(config, path / "config.json")
    from ..eval.weight_names import saved_names

    # a model.safetensors holding 'hello' or nothing was safetensors' raw "header too small" (round 18, G378, G380)
    saved_names(path, "restore it from a copy, or save the adopted model again (model.save_pretrained(DIR))",
                variant=from_pretrained_kwargs.get("variant"))  # the save's files only (round 33, AE11, AE20)
    from .shard_index import check_shards

    check_shards(path, from_pretrained_kwargs.get("variant"))  # a shard from another save (round 25, Y509-Y512)
    base = _base_class(config, path / "config.json")
    _check_model_type(config, base, path / "config.json")
    _check_load_options(config, from_pretrained_kwargs, path)
    from .load_keywords import check_load_keywords

    check_load_keywords(from_pretrained_kwargs, path)  # subfolder=, attn_implementation=, state_dict= (round 25)
    from .generation_file import check_generation_json

    check_generation_json(path)  # max_new_tokens -5: transformers' raw ValueError out of the load (round 28, U298)
    _check_map_covers(base, config, from_pretrained_kwargs.get("device_map"))
    try:
        model = adopted_class(base)._from_folder(str(path), config=config, **from_pretrained_kwargs)
        _check_saved_vocab(config, path / "config.json")  # after: weights that do not fit are named first
        # after: weights that are no model's, or not this config's, are named first (the catch-all of round 27, S475)
        check_weights(path, raw, from_pretrained_kwargs.get("variant"))
        check_stamp(getattr(config, CONFIG_KEY), str(path / "config.json"))  # last, as the catch-all (round 17, E169)
        check_generation_ids(model[0] if isinstance(model, tuple) else model, path)  # round 22, S104 (loading info)
        return model
    except OSError as e:  # a folder without weights: transformers' "no file named model.safetensors" (round 28, U274)
        from .model_path import weights_failure

        refused = weights_failure(e, path, "load_adopted")
        if refused is None:
            raise
        raise refused from None
    except TypeError as e:  # an option from_pretrained does not take reached the model's __init__ (round 24, W597)
        refused = _unknown_option(e, path)
        if refused is None:
            raise
        raise refused from None
    except RuntimeError as e:  # round 8: config.json's vocab_size edited to 301 ended in transformers' traceback
        from ..eval.weight_names import sizes_refused

        refused = sizes_refused(e, path, "restore it from a copy, or save the model again")
        if refused is None:
            raise
        raise refused from None


def _check_map_covers(base: type, config: PretrainedConfig, device_map: Any) -> None:
    """``devices.check_map_covers`` for the model the folder builds: a device_map leaving the generator unmapped
    (``'model.embed_token'`` misspelt) was accelerate's raw ValueError (issue 30 round 30, Y91)."""
    from ..devices import check_map_covers
    from ..meta_device import model_on_meta

    check_map_covers(device_map, lambda: model_on_meta(adopted_class(base), config), "load_adopted")


# from_pretrained's own options that share a name with a config setting: taken by from_pretrained, not the config
_LOAD_OPTIONS = frozenset({"dtype", "torch_dtype", "quantization_config", "generation_config"})


def _check_load_options(config: PretrainedConfig, kwargs: dict, path: Path) -> None:
    """UserError for a ``load_adopted`` keyword that would change the saved config: ``config=`` was Python's "got
    multiple values for keyword argument 'config'" (issue 30 round 24, W193), and a setting such as ``rope_theta=1.0``
    or ``vocab_size=299`` reached the model's ``__init__`` as transformers' raw "unexpected keyword argument" (W597,
    W598): load_adopted builds the model its folder's config.json describes (the settings its weights, generator and
    digest were saved with), so neither is taken."""
    keep = "load_adopted builds the model that config.json describes (the settings its weights were saved with)"
    if "config" in kwargs:
        raise UserError(f"load_adopted: config={type(kwargs['config']).__name__} is not taken: {keep}, "
                        f"{str(path / 'config.json')!r}; leave config out (to build another model from a config of "
                        f"your own, adopt(config, ...) and train it)")
    saved = config.to_dict()
    nested = {k for v in saved.values() if isinstance(v, dict) for k in v}  # rope_theta in rope_parameters
    settings = sorted(k for k in kwargs if k not in _LOAD_OPTIONS and (k in saved or k in nested
                                                                        or _a_setting(config, k)))
    if settings:
        shown = ", ".join(f"{k}={kwargs[k]!r:.40}" for k in settings)
        raise UserError(f"load_adopted: {shown} would change a setting of {str(path / 'config.json')!r}, and {keep}; "
                        f"leave {'it' if len(settings) == 1 else 'them'} out, and pass only from_pretrained's "
                        f"options (dtype, device_map, ...)")


def _a_setting(config: PretrainedConfig, name: str) -> bool:
    """Whether ``name`` is an attribute of ``config`` that its dict does not list (a property such as
    ``num_labels``), not one of its methods."""
    try:
        return not callable(getattr(config, name))
    except AttributeError:
        return False


def _unknown_option(error: TypeError, path: Path) -> UserError | None:
    """The one line for transformers' raw "__init__() got an unexpected keyword argument 'X'": a keyword that is
    neither a from_pretrained option nor a config setting (a misspelled ``dtpye=``) reaches the model's ``__init__``
    when a config is given, as load_adopted gives it (round 24, W597's kind); None for another TypeError."""
    from .modeling import unknown_keyword

    if (name := unknown_keyword(error)) is None:
        return None
    return UserError(f"load_adopted({str(path)!r}): {name!r} is no option of from_pretrained (nor a setting "
                     f"it may change); check its spelling, or leave it out (options: dtype, device_map, variant, ...)")


_PLAIN_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                  "pytorch_model.bin.index.json")


def _check_config_there(path: Path) -> None:
    """UserError unless ``path`` is a folder holding a regular config.json. A 300-byte name was the raw "[Errno 36]
    File name too long" of ``Path.is_file`` (issue 30 round 18, G240), and a config.json that is a link to a device
    (or to nothing) "has no config.json" while ``ls`` lists it (G236): ``errors.missing`` names what is there."""
    from ..errors import missing, name_too_long, not_a_file

    config_json = path / "config.json"
    if os.path.isfile(config_json):
        return
    if not os.path.isdir(path) and (os.path.lexists(path) or name_too_long(path)):
        raise UserError(f"{str(path)!r} {missing(path)}; pass a directory written by save_pretrained")
    if (what := not_a_file(config_json)) is not None:
        raise UserError(f"{str(config_json)!r} {what}; restore config.json from a copy, or save the model again "
                        f"(save_pretrained writes it)")
    if not os.path.lexists(path):  # "nope has no config.json" of a folder that is not there (round 23, U43's kind)
        raise UserError(f"{str(path)!r} {missing(path)}; check the path, or pass a directory written by "
                        f"save_pretrained")
    from ..file_kinds import folder_kind

    kind = folder_kind(path) if os.path.isdir(path) else None  # a data or run folder named (round 23, U61's kind)
    raise UserError(f"{path} has no config.json{f' (it is {kind})' if kind else ''}; pass a directory written by "
                    f"save_pretrained")


def _check_saved_vocab(config: PretrainedConfig, where: Path) -> None:
    """UserError when the generator's saved ``vocab_size`` is not the model's: config.json's
    ``leviathan_generator.vocab_size`` edited 300 -> 301 loaded a generator of 301 ids under a 300-id model without a
    word (issue 30 round 15, B78). The generator makes one row per id of the model's vocabulary."""
    saved, model = getattr(config, CONFIG_KEY).get("vocab_size"), getattr(config, "vocab_size", None)
    if saved is not None and model is not None and saved != model:
        raise UserError(f"{where}: {CONFIG_KEY}.vocab_size is {saved!r}, but the model's vocab_size is {model!r}; the "
                        f"generator makes one row per id of the model's vocabulary: config.json was edited or mixes "
                        f"two models; restore it from a copy, or save the model again")


def _check_model_type(config: PretrainedConfig, base: type[PreTrainedModel], where: Path) -> None:
    """UserError when config.json's ``model_type`` is not the one of the class the adoption recorded
    (``leviathan_generator.architecture``): a config.json edited to ``mistral`` or ``gpt2`` loaded as the Llama it
    was saved as, without a word, while transformers alone builds the edited type from the same folder (issue 30
    round 8, A21 A22)."""
    recorded = getattr(getattr(base, "config_class", None), "model_type", None)
    written = getattr(config, "model_type", None)
    if recorded and written != recorded:
        raise UserError(f"{where}: model_type is {written!r}, but the adopted model was saved as {base.__name__} "
                        f"(model_type {recorded!r}, recorded in {CONFIG_KEY}.architecture): config.json was edited or "
                        f"comes from another model; restore it from a copy, or save the model again")


# ---- bake ----------------------------------------------------------------------------------------------------
def _check_adopted(model: Any) -> LeviathanGenerator:
    if not is_adopted(model):
        raise UserError(f"{type(model).__name__} is not an adopted model; pass a model returned by "
                        "leviathan.hf.adopt or leviathan.hf.load_adopted")
    generator = model.get_input_embeddings()
    if not isinstance(generator, LeviathanGenerator):
        raise UserError(f"this adopted model's input embedding is a {type(generator).__name__}, not a "
                        "LeviathanGenerator; adopt the model again")
    return generator


def _original(model: PreTrainedModel, clone: bool) -> PreTrainedModel:
    """The original class with the generator baked into its embedding (built on meta, tensors assigned)."""
    generator = _check_adopted(model)
    base = model._leviathan_base
    prefix = next(name for name, module in model.named_modules() if module is generator)
    config = copy.deepcopy(model.config)
    delattr(config, CONFIG_KEY)
    config.tie_word_embeddings = False
    config.architectures = [base.__name__]
    state = {k: v for k, v in model.state_dict().items() if not k.startswith(prefix + ".")}
    state[f"{prefix}.weight"] = generator.bake()  # (V, D), detached
    state = {k: (v.detach().clone() if clone else v.detach()) for k, v in state.items()}
    with torch.device("meta"):
        plain = base(config)
    plain.load_state_dict(state, strict=True, assign=True)
    # non-persistent buffers (rotary inv_freq, causal masks) are not in a state dict: take the adopted model's
    buffers = dict(model.named_buffers())
    if isinstance(generator, ScaledLeviathanGenerator):  # the table's own embed_scale buffer (float32, as Gemma's)
        buffers[f"{prefix}.embed_scale"] = torch.tensor(generator.output_scale, device=generator.spline_coeff.device)
    for name, buffer in list(plain.named_buffers()):
        if buffer.is_meta:
            owner, _, leaf = name.rpartition(".")
            source = buffers[name]
            plain.get_submodule(owner).register_buffer(leaf, source.clone() if clone else source, persistent=False)
    # a class that does not generate (LlamaForSequenceClassification, recorded as the architecture) has no
    # generation_config: reading it was torch's AttributeError (issue 30 round 18, G99)
    if getattr(model, "generation_config", None) is not None:
        plain.generation_config = copy.deepcopy(model.generation_config)
    return plain.train(model.training)


def to_original(model: PreTrainedModel) -> PreTrainedModel:
    """An instance of the original class (e.g. ``Qwen2ForCausalLM``) with the generator baked into an
    ``nn.Embedding`` table and every other tensor copied; the head stays untied."""
    return _original(model, clone=True)


def _check_bake_options(save_kwargs: dict) -> None:
    """UserError for the ``save_pretrained`` options a baked folder cannot honour: ``is_main_process=False`` wrote no
    config.json and ended in a raw FileNotFoundError from the bake's own read of it (issue 30 round 25, Y170); a
    ``variant`` named the weights ``model.VARIANT.safetensors`` without a word, and the load line of the folder's own
    model card (``AutoModelForCausalLM.from_pretrained(folder)``) then failed in transformers' raw "no file named
    model.safetensors" (Y173)."""
    if "is_main_process" in save_kwargs and save_kwargs["is_main_process"] is not True:
        raise UserError(f"bake_adopted: is_main_process={save_kwargs['is_main_process']!r:.40} would write no model "
                        f"into the folder bake_adopted makes whole; call bake_adopted on the main process only "
                        f"(if is_main_process: bake_adopted(...)), and leave is_main_process out")
    if save_kwargs.get("variant") is not None:
        raise UserError(f"bake_adopted: variant={save_kwargs['variant']!r:.40} is not taken: the baked folder is for "
                        f"transformers alone, loaded as its model card says (AutoModelForCausalLM.from_pretrained("
                        f"folder)), which reads no variant's weights; leave variant out (convert the dtype with "
                        f"model.half() before baking for a float16 folder)")


def bake_adopted(model: PreTrainedModel, out_dir: str | os.PathLike, tokenizer: Any = None, *,
                 overwrite: bool = False, **save_kwargs: Any) -> Path:
    """Write ``model`` as a checkpoint of its original class that transformers alone loads (no leviathan import), with a
    model card (``model_card.adopted_card``) and ``tokenizer`` (optional, as in ``export``); ``save_kwargs`` go to
    ``save_pretrained``. ``out_dir`` is written atomically; a non-empty one needs ``overwrite=True``. Returns ``out_dir``.
    """
    from ..storage import api_writes
    from .export import _atomic_dir, _save_tokenizer, check_tokenizer_fits
    from .model_card import adopted_card
    from .save_folder import check_save_arguments

    generator = _check_adopted(model)
    if tokenizer is not None:  # G299: o200k's tokenizer beside a 300-id model
        check_tokenizer_fits(tokenizer, model.config.vocab_size, "bake_adopted")
    plain = _original(model, clone=False)
    check_save_arguments(plain, save_kwargs.get("state_dict"), save_kwargs, "bake_adopted")  # round 20, round 29
    _check_bake_options(save_kwargs)  # is_main_process=False, variant= (round 25, Y170, Y173)
    with api_writes("bake_adopted", out_dir), _atomic_dir(out_dir, overwrite) as tmp:  # round 14 (B260): the
        # verbs' one line (errors.StorageError), not a raw OSError
        from .generation_save import generation_config_as_saved

        with generation_config_as_saved(plain):  # the form its loader takes (round 34, AG393)
            plain.save_pretrained(str(tmp), **save_kwargs)
        if tokenizer is not None:
            _save_tokenizer(tokenizer, tmp)
        card = adopted_card(type(plain).__name__, generator, plain.num_parameters(),
                            tokenizer=(tmp / "tokenizer.json").is_file())
        (tmp / "README.md").write_text(card.render())
        config = json.loads((tmp / "config.json").read_text())
        if CONFIG_KEY in config:  # defensive: the baked directory must not claim a generator
            raise RuntimeError(f"baked config.json still has {CONFIG_KEY}")
    return Path(out_dir)

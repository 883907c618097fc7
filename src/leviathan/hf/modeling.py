"""``LeviathanForCausalLM``: a thin Hugging Face adapter around the native backbone.

It builds the *same* submodules as ``leviathan.model.llama.CausalLM`` (``self.model = LlamaModel(cfg)``,
``self.lm_head``), so its state dict keys equal the native model's, and a dense model's keys equal
``transformers.LlamaForCausalLM``'s. All the math lives in ``leviathan.model``; this file only speaks transformers'
protocol: ``forward(...) -> CausalLMOutputWithPast``, a ``DynamicCache`` (the native attention calls
``cache.update`` and ``cache.get_seq_length()``), ``generate()``, ``save_pretrained``/``from_pretrained`` and the
Auto classes (registered on ``import leviathan.hf``). Training uses the native ``CausalLM``; this class is for
shipping and for tools that expect a ``PreTrainedModel``. Convert with ``hf.export.from_native`` / ``to_native``.

Differences from the native model a caller must know:
- ``labels`` follow Hugging Face's convention (the inputs; the loss shifts them by one).
- ``get_input_embeddings()`` returns whatever the input side is (for ``leviathan`` the generator);
  ``resize_token_embeddings`` / ``set_input_embeddings`` raise ``InputEmbeddingError`` for the digit-based and
  factorised inputs (an ``nn.Embedding`` swapped in would silently throw the generator away). Grow a leviathan
  vocabulary with ``CausalLM.add_tokens`` (ids up to b^k - 1 already have embeddings).
- ``inputs_embeds``, ``output_attentions`` / ``output_hidden_states`` and static/compiled caches (4D masks) are not
  supported.

Footgun (transformers 5 loading): ``from_pretrained`` builds the model on the meta device, loads the checkpoint,
then calls ``_init_weights`` on everything not loaded, including the non-persistent rotary ``inv_freq`` buffer,
which ``_init_weights`` therefore recomputes (through ``transformers.initialization``, so loaded tensors, flagged
``_is_hf_initialized``, are never overwritten).
"""

from __future__ import annotations

import copy
import fnmatch
import os
from pathlib import Path
from typing import Any, Optional

import torch
from torch import nn
from transformers import GenerationMixin, PreTrainedModel
from transformers import initialization as hf_init
from transformers.cache_utils import DynamicCache
from transformers.modeling_outputs import CausalLMOutputWithPast

from ..errors import ArgumentValueError, UserError
from ..meta_device import refuse_meta_arguments
from ..model.attention_inputs import check_mask_dims
from ..model.embedding import CompositionalEmbedding, FactorizedEmbedding
from ..model.generator import LeviathanGenerator
from ..model.output_norm import OutputNorm
from ..model.llama import LlamaModel, LlamaRMSNorm, LlamaRotaryEmbedding
from ..positions import check_counted_positions, check_generation_room, model_positions
from .cache_position import check_cache_position
from .configuration import LeviathanConfig
from .forward_switches import check_forward_switches
from .generate_guard import GenerateGuard
from .generate_ids import check_generate_ids
from .load_keywords import check_attention_set
from .logits_to_keep import check_kept_for_loss, check_logits_to_keep, input_length

TIED_WEIGHTS = {"lm_head.weight": "model.embed_tokens.weight"}
# transformers 5 renamed the output's ``past_key_values`` field to ``cache``
_CACHE_FIELD = "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"


class InputEmbeddingError(UserError, NotImplementedError):
    """An operation that would replace a non-table input side (generator, codebooks, factorised table)."""


class LeviathanPreTrainedModel(PreTrainedModel):
    config_class = LeviathanConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    _no_split_modules = ["LlamaDecoderLayer"]
    _supports_sdpa = True  # the native attention always calls F.scaled_dot_product_attention
    supports_gradient_checkpointing = False

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *args, **kwargs):
        """transformers' load, after checking that a local folder's weights are the model its config.json builds
        (``eval.weight_names``): an export whose config.json was edited to ``dense_tied`` loaded with the generator's
        six tensors dropped as "unexpected" and the head tied to the table, a different model, no error (issue 30
        round 15, A66); and that an export's config.json and weights are the ones ``leviathan export`` wrote (its
        marker's sha256: round 18, G210; round 20, M14, M16: another export's model.safetensors or marker loaded
        without a word). Weights of other sizes than config.json gives are one UserError (round 20, M175, M178, M179:
        transformers' RuntimeError traceback); an adopted model's folder is sent to ``load_adopted`` (M301), a folder
        of another model_type (a ``bake_adopted`` llama: round 21, P464) to transformers' own loader; a path that is
        not one (``None``) is named (M349: a hub connection error), and ``device_map='meta'`` too (round 21, P470:
        transformers' kernels ValueError); so are a file, a folder without config.json (a data or run folder) and a
        path that is nothing here (round 23, U43, U60-U62: ``model_path``). A hub name is left to transformers, its
        failure said with both readings. A local folder is read under its shared lock (``swap_lock``): a
        ``save_pretrained`` into it waits, and this load waits for one renaming its files (round 23, U515)."""
        where = pretrained_model_name_or_path
        if (where is None and "state_dict" not in kwargs) or not isinstance(where, (str, os.PathLike, type(None))):
            raise UserError(f"from_pretrained: expected the path of a folder (an export, or a save_pretrained) or a "
                            f"hub model id, got {where!r:.60}; pass the folder to load")
        from ..devices import check_device_map

        check_device_map(kwargs.get("device_map"), "from_pretrained")  # meta (P470), a GPU not here (S604)
        from .load_keywords import check_transformers_keywords

        check_transformers_keywords(kwargs, where, "LeviathanForCausalLM.from_pretrained",  # raw ValueErrors (round 25)
                                    model_class=cls)
        from .model_path import check_model_path

        local = _local_folder(where, kwargs.get("subfolder"))
        # a file, a data or run folder, a missing folder: transformers blamed the JSON, the weights or the network
        check_model_path(local or where, "from_pretrained", config_given=kwargs.get("config") is not None)  # (U43-U62)
        if not local:
            return cls._load_checked(None, pretrained_model_name_or_path, *args, **kwargs)
        from ..swap_lock import reading_whole

        with reading_whole(local, "from_pretrained"):  # a save racing this load read as a mix (round 23, U515)
            _check_local_folder(local, kwargs.get("variant"))
            _check_overrides(cls, local, kwargs)
            _check_map_covers(cls, local, kwargs)
            from .shard_index import check_shards

            check_shards(Path(local), kwargs.get("variant"))  # a shard from another save (round 25, Y509's kind)
            from .generation_file import check_generation_json

            check_generation_json(local)  # max_new_tokens -5: transformers' raw ValueError (round 28, U298's kind)
            return cls._load_checked(local, pretrained_model_name_or_path, *args, **kwargs)

    @classmethod
    def _load_checked(cls, local, pretrained_model_name_or_path, *args, **kwargs):
        """``from_pretrained``'s transformers load, its errors in our words, and the loaded model's generation ids;
        ``local``: the local folder read, None for a hub name."""
        from .model_path import hub_failure, weights_failure

        where = pretrained_model_name_or_path
        try:
            model = super().from_pretrained(pretrained_model_name_or_path, *args, **kwargs)
        except OSError as e:
            fail = weights_failure if local else hub_failure
            refused = fail(e, local or where, "from_pretrained")
            if refused is None:
                raise
            raise refused from None
        except TypeError as e:  # a keyword transformers hands on to __init__ (round 29, W165's kind)
            if (name := unknown_keyword(e)) is None:
                raise
            raise UserError(f"from_pretrained({str(where)!r}): {name!r} is no option of from_pretrained (nor a "
                            f"setting of LeviathanConfig); check its spelling, or leave it out (options: dtype, "
                            f"device_map, variant, ...)") from None
        except RuntimeError as e:
            from ..eval.weight_names import sizes_refused

            fix = "restore config.json from a copy, or export the checkpoint again (leviathan export RUN OUT)"
            refused = sizes_refused(e, local, fix) if local else None
            if refused is None:
                raise
            raise refused from None
        if local:
            from .configuration import check_generation_ids
            from .save_record import check_save_record

            check_generation_ids(model[0] if isinstance(model, tuple) else model, local)  # round 22, S104
            # last, as the adopted class's weights digest: the sharper checks name what they can first; this
            # catches the rest, another model's weights of the same shapes or an edited setting that still loads
            # (round 35, AI57, AI64, AI497)
            check_save_record(local)
        return model

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """The native initialisation (``CausalLM.init_weights``, ``build_input_embedding``), guarded."""
        std = self.config.initializer_range
        if isinstance(module, (nn.Linear, nn.Embedding)):  # backbone, head, dense tables, factorised proj
            hf_init.normal_(module.weight, std=std)
        elif isinstance(module, LlamaRMSNorm):
            hf_init.ones_(module.weight)
        elif isinstance(module, LlamaRotaryEmbedding):
            d = module.inv_freq.shape[0] * 2  # head_dim
            inv_freq = 1.0 / (self.config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float) / d))
            hf_init.copy_(module.inv_freq, inv_freq)
        elif isinstance(module, FactorizedEmbedding):
            hf_init.normal_(module.table, std=std)
        elif isinstance(module, CompositionalEmbedding):
            hf_init.normal_(module.codebooks, std=std)
        elif isinstance(module, LeviathanGenerator):
            init_generator(module)
        elif isinstance(module, OutputNorm):
            module.reset_parameters()


def _local_folder(where: Any, subfolder: Any) -> str | None:
    """The local folder ``from_pretrained`` reads (``where``, or ``where/subfolder``), None for a hub name. A
    ``subfolder`` that is not there was transformers' "no file named model.safetensors ... found in directory
    where", naming ``where``, not the missing ``where/subfolder`` (issue 30 round 22, S607)."""
    if not isinstance(where, (str, os.PathLike)) or not os.path.isdir(where):
        return None
    if not subfolder:
        return os.fspath(where)
    if not isinstance(subfolder, (str, os.PathLike)):
        raise UserError(f"from_pretrained: subfolder must be the name of a folder inside {os.fspath(where)!r}, got "
                        f"{subfolder!r:.60}; pass its name, or leave subfolder out")
    folder = os.path.join(os.fspath(where), os.fspath(subfolder))
    if not os.path.isdir(folder):
        from ..errors import missing, not_a_folder_there

        what = not_a_folder_there(folder) if os.path.exists(folder) else missing(folder)
        raise UserError(f"from_pretrained: subfolder {os.fspath(subfolder)!r}: {folder!r} {what}; pass "
                        f"the subfolder of {os.fspath(where)!r} that holds config.json and the weights, or leave "
                        f"subfolder out")
    return folder


def _check_local_folder(where, variant=None) -> None:
    """``from_pretrained``'s checks of a local folder (see its docstring)."""
    from pathlib import Path

    from ..errors import not_regular
    from ..eval.weight_names import check_weight_names
    from ..ownership import check_output_files, export_again
    from .config_file import check_saved_dtype, read_config_json
    from .save_folder import SAVED_FILES, refuse_adopted, refuse_other_model_type

    config_json = Path(where) / "config.json"
    if config_json.is_file() or not_regular(config_json):  # a FIFO hung, then read as absent (round 23, U385); and
        # transformers' OSError named no fix for a binary one (round 22, S118), and 'float8'
        fix = "restore it from a copy, or export the checkpoint again (leviathan export RUN OUT)"  # its AttributeError
        check_saved_dtype(read_config_json(config_json, fix), config_json, fix)  # (S108)
    refuse_adopted(Path(where))
    refuse_other_model_type(Path(where))  # round 21, P464: a bake_adopted (llama) folder
    check_weight_names(Path(where), variant if isinstance(variant, str) else None)  # its files only (AE20's)
    # G210: an export's config.json edited (rope_theta 10000 -> 500) loaded other logits without a word, though
    # export's marker records its sha256 (the adopted folders' kind, E169); M14, M16: its weights too
    names = [n for n in os.listdir(where) if any(fnmatch.fnmatch(n, pattern) for pattern in SAVED_FILES)]
    check_output_files(where, export_again(where), names=names)


def _check_overrides(cls: type, where: str, kwargs: dict) -> None:
    """UserError when ``from_pretrained``'s settings (``embedding='dense_untied'``, ``generator_rank=8``, or a
    ``config=``) build a model whose tensors are not the folder's: transformers draws the ones the file lacks at
    random and drops the others, with its LOAD REPORT only; ``from_pretrained('ex1', embedding='dense_untied')`` loaded
    a random table in place of a trained generator (issue 30 round 24, W593), where the same edit made in config.json is
    refused (``check_weight_names``). Settings that change no tensor (``rope_theta``) are taken, as transformers takes
    them. Both models are built on the meta device: names and shapes only."""
    import dataclasses

    from ..model.config import ModelConfig

    fields = {f.name for f in dataclasses.fields(ModelConfig)}
    given = {k: v for k, v in kwargs.items() if k in fields}
    config = kwargs.get("config")
    if not given and not isinstance(config, LeviathanConfig):
        return
    saved = LeviathanConfig.from_pretrained(where)
    wanted = copy.deepcopy(config) if isinstance(config, LeviathanConfig) else LeviathanConfig.from_pretrained(where)
    wanted = LeviathanConfig(**{**wanted.to_dict(), **given})  # validated as a whole (tying derived again)

    def tensors(c: LeviathanConfig) -> dict[str, tuple]:
        with torch.device("meta"):
            model = cls(c)
        tied = set(getattr(model, "all_tied_weights_keys", None) or {})
        return {k: tuple(v.shape) for k, v in model.state_dict().items() if k not in tied}

    have, want = tensors(saved), tensors(wanted)
    if have == want:
        return
    from ..eval.weight_names import shown_names

    shown = ", ".join([f"{k}={v!r:.40}" for k, v in given.items()] + (["config=..."] if config is not None else []))
    lacks = sorted(k for k in want if have.get(k) != want[k])
    raise UserError(f"from_pretrained({where!r}, {shown}) would build a model whose tensors are not the folder's "
                    f"({shown_names(lacks or sorted(set(have) - set(want)))} would be drawn at random, or the "
                    f"saved ones dropped); leave the setting out (config.json holds the settings its weights were "
                    f"saved with), or train a model with that setting")


def _check_map_covers(cls: type, where: str, kwargs: dict) -> None:
    """``devices.check_map_covers`` for the model the folder (or ``config=``) builds: a device_map leaving a module
    unmapped was accelerate's raw ValueError after the weights were read (issue 30 round 30, Y91's kind)."""
    from ..devices import check_map_covers
    from ..meta_device import model_on_meta

    def model_of() -> Any:
        config = kwargs.get("config")
        saved = config if isinstance(config, LeviathanConfig) else LeviathanConfig.from_pretrained(where)
        return model_on_meta(cls, saved)

    check_map_covers(kwargs.get("device_map"), model_of, "LeviathanForCausalLM.from_pretrained")


@torch.no_grad()
def init_generator(module: LeviathanGenerator) -> None:
    """The generator's init (docs/DESIGN.md §2) inside transformers' loader, skipping every tensor it loaded: the
    torch.nn.init calls of ``reset_parameters`` skip loaded (``_is_hf_initialized``) tensors under transformers'
    ``guard_torch_init_functions``, and the options' calibration (``table_rms``, ``center``) is written through
    ``hf_init.copy_``, which skips them too. Anything but a generator was an AttributeError (issue 30 round 22).
    """
    if not isinstance(module, LeviathanGenerator):
        raise TypeError(f"init_generator takes a LeviathanGenerator, got {type(module).__name__} {module!r:.60}")
    module.reset_parameters(calibrate=False)
    out, center = module.calibration()
    hf_init.copy_(module.out, out)
    if center is not None:
        hf_init.copy_(module.center, center)


def _refuse_inputs_embeds(api: str) -> None:
    """``ArgumentValueError`` (a UserError, still the ValueError it was) for ``inputs_embeds``: the input side is the
    model's own; ``generate(inputs_embeds=...)`` counted them as 0 ids and named a room for them (issue 30 round 31,
    AA106's sibling in this class)."""
    from ..errors import ArgumentValueError

    raise ArgumentValueError(f"{api}: LeviathanForCausalLM computes its own input embeddings, so inputs_embeds is "
                             f"not taken; pass input_ids instead")


class LeviathanForCausalLM(LeviathanPreTrainedModel, GenerateGuard, GenerationMixin):
    """``LlamaModel`` (any input side) + linear head, as a ``PreTrainedModel`` with ``generate``."""

    # its attention reads a growing cache (DynamicCache) only: a fixed-size one is refused by generate (issue 30
    # round 33, AE31, AE198: a plain ValueError naming an attn_mask never given; ``generate_needs``)
    _leviathan_growing_cache_only = True

    def __init__(self, config: LeviathanConfig):
        if not isinstance(config, LeviathanConfig):  # a LlamaConfig was transformers' raw AttributeError (round 24,
            from ..errors import ArgumentTypeError  # W224): 'LlamaConfig' object has no attribute 'to_model_config'

            raise ArgumentTypeError(f"LeviathanForCausalLM takes a LeviathanConfig, got a {type(config).__name__}; "
                                    f"build one with leviathan.hf.LeviathanConfig(...) (ModelConfig's "
                                    f"fields) or LeviathanConfig.from_model_config(cfg), or load a transformers model "
                                    f"with its own class")
        from .load_keywords import check_attention

        # 'flash' set on the config: transformers' raw ValueError from its __init__ (issue 30 round 31, AA221, AA657)
        check_attention(getattr(config, "_attn_implementation", None), "LeviathanForCausalLM(config)", type(self))
        super().__init__(config)
        # tying only for dense_tied: transformers reads this {target: source} dict in post_init
        self._tied_weights_keys = dict(TIED_WEIGHTS) if config.tie_word_embeddings else None
        cfg = config.to_model_config().resolved()
        self.model = LlamaModel(cfg)
        self.vocab_size = cfg.vocab_size
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.post_init()  # init (see _init_weights) and tie

    # ---- saving ------------------------------------------------------------------------------
    def save_pretrained(self, save_directory, *args, **kwargs):
        """transformers' ``save_pretrained``, refused into a verb's output or over a file it did not write
        (``hf.save_folder``; round 18, G249: ``from_native(...).save_pretrained`` replaced a checkpoint's weights), and
        written whole or not at all, a storage failure an ``errors.StorageError`` (``save_folder.save_whole``; round 19,
        J55, J59, J64, J70, J76: a full disk left config.json without weights, under a raw SafetensorError)."""
        from .checkpoint_record import note_trainer_save, trainer_folder_dropped_on_refusal

        with trainer_folder_dropped_on_refusal(save_directory):  # nothing left by a refused Trainer save (AI376)
            saved = self._save_checked(save_directory, args, kwargs)
        note_trainer_save(save_directory)  # a Trainer checkpoint gets its files' record (round 33, AE158)
        return saved

    def _save_checked(self, save_directory, args, kwargs):
        """``save_pretrained``'s checks and its whole-or-nothing save."""
        from .generation_save import generation_config_as_saved
        from .save_folder import check_save_arguments, save_keywords, save_whole

        kwargs = save_keywords(args, kwargs)  # a variant given by position is checked too (round 33, AE18)
        check_save_arguments(self, kwargs.get("state_dict"), kwargs)  # round 20: push_to_hub (M10), state_dict (M8)
        with generation_config_as_saved(self):  # the form its loader takes (round 34, AG393)
            return save_whole(lambda folder: self.save_owned(folder, **kwargs), save_directory,
                              variant=kwargs.get("variant"))

    def save_owned(self, save_directory, *args, **kwargs):
        """``save_pretrained`` without the check: for ``export``, saving into a new temporary folder of its own. Its
        place is still a path (a NUL byte was os.makedirs' raw ValueError, issue 30 round 27, S474's kind)."""
        from ..ownership import check_path_given

        from .save_place import model_save

        check_path_given(save_directory, "save_owned")
        with model_save():  # config.json is written into this folder by transformers (save_place.model_save)
            return super().save_pretrained(save_directory, *args, **kwargs)

    # ---- embeddings --------------------------------------------------------------------------
    def get_input_embeddings(self) -> nn.Module:
        """The input side: an ``nn.Embedding`` table for dense models, the generator for leviathan."""
        return self.model.embed_tokens

    def _refuse_table_swap(self, what: str) -> None:
        kind = self.config.embedding
        if kind in ("dense_tied", "dense_untied"):
            return
        hint = ("convert with leviathan.hf.export.to_native(model), call CausalLM.add_tokens(n) (ids up to "
                "b^k - 1 already have embeddings, no retraining of the input side), then export.from_native"
                if kind in ("leviathan", "compositional") else
                "this input side has no resize operation; build a new model with the larger vocab_size")
        raise InputEmbeddingError(f"{what} would replace this model's {kind!r} input side with a plain table "
                                  f"and discard its trained parameters; to grow the vocabulary, {hint}")

    def set_input_embeddings(self, value: nn.Module) -> None:
        self._refuse_table_swap("set_input_embeddings")
        self.model.embed_tokens = value

    def resize_token_embeddings(self, new_num_tokens: Optional[int] = None, pad_to_multiple_of: Optional[int] = None,
                                mean_resizing: bool = True):
        """transformers' resize of a dense table (the other input sides are refused: ``_refuse_table_swap``), its
        arguments checked first: 'x' was torch's "empty(): argument 'size' must be tuple of ints" and True was taken
        as 1 (issue 30 round 22, the S593 kind)."""
        from ..value_rules import api_check, check_switches, whole_problem

        self._refuse_table_swap("resize_token_embeddings")
        fix = "pass the new number of ids (or None), as transformers' resize_token_embeddings takes"
        for name, value in (("new_num_tokens", new_num_tokens), ("pad_to_multiple_of", pad_to_multiple_of)):
            if value is not None:
                api_check("resize_token_embeddings", name, whole_problem(value, 1, "a whole number >= 1"), fix)
        check_switches("resize_token_embeddings", mean_resizing=mean_resizing)
        return super().resize_token_embeddings(new_num_tokens, pad_to_multiple_of, mean_resizing)

    def get_output_embeddings(self) -> nn.Module:
        return self.lm_head

    def set_output_embeddings(self, new_embeddings: nn.Module) -> None:
        self.lm_head = new_embeddings

    def _validate_generated_length(self, generation_config, input_ids_length, has_default_max_length):
        """transformers' check of ``generate``'s lengths, then ``positions.check_generation_room``: a generation past
        the model's positions is refused before it starts, naming max_new_tokens, where the forward's position check
        stopped it partway (issue 30 round 30, Y495)."""
        super()._validate_generated_length(generation_config, input_ids_length, has_default_max_length)
        check_generation_room(model_positions(self), generation_config.max_length, input_ids_length,
                              generation_config.max_new_tokens, "LeviathanForCausalLM.generate")

    def generate(self, inputs=None, generation_config=None, *args, **kwargs):
        """transformers' ``generate``, its arguments checked first (``generate_arguments.check_generate_arguments``):
        a length, beam count or sampling value it cannot use, a prompt on meta, or a generation past the positions
        counted from a cached prefix or inputs_embeds ended in its raw errors or ran on (issue 30 round 31, AA90-AA108,
        AA523, AA619-AA649); settings transformers refuses or takes as nonsense, ids past the vocabulary, an empty
        prompt, a mask or callable of the wrong kind, and numpy scalars taken as Python's (round 32, AC2-AC138)."""
        from .generate_arguments import check_generate_arguments, positional_into_keywords
        from .generate_cache import cache_kept_on_refusal

        from .generate_streamer import streamer_ended_on_refusal

        with streamer_ended_on_refusal(args, kwargs):  # a threaded stream's loop ended (round 34, AG410, AG411)
            positional_into_keywords("LeviathanForCausalLM.generate", args, kwargs)  # round 34, AG376-AG382
            if kwargs.get("inputs_embeds") is not None:  # forward's refusal, before the lengths are counted (AA106)
                _refuse_inputs_embeds("LeviathanForCausalLM.generate")
            generation_config = check_generate_arguments(self, "LeviathanForCausalLM.generate", inputs,
                                                         generation_config, kwargs)
            with cache_kept_on_refusal(kwargs):  # the caller's cache as it was after an error (round 34, AG268)
                return super().generate(inputs, generation_config, **kwargs)

    def _prepare_special_tokens(self, generation_config, *args, **kwargs):
        """transformers' preparation of ``generate``'s token ids, after ``generate_ids.check_generate_ids``: an
        ``eos_token_id`` the model does not have was taken without a word (issue 30 round 31, AA645)."""
        check_generate_ids(self, generation_config, "LeviathanForCausalLM.generate")
        return super()._prepare_special_tokens(generation_config, *args, **kwargs)

    def load_state_dict(self, state_dict, *args, **kwargs):
        """torch's ``load_state_dict``, after ``trainer_resume.check_native_resume`` when ``transformers.Trainer`` is
        resuming this model from a checkpoint folder: one without trainer_state.json, or with an empty one, or whose
        config.json records other settings, resumed into a raw FileNotFoundError / JSONDecodeError or without a word
        (issue 30 round 33, AE153, AE155, AE164). Any other caller loads as before."""
        from .trainer_resume import check_native_resume

        check_native_resume(self, state_dict)  # its shapes too (round 35, AI56)
        return super().load_state_dict(state_dict, *args, **kwargs)

    def set_attn_implementation(self, attn_implementation, *args, **kwargs):
        """transformers' ``set_attn_implementation``, after ``load_keywords.check_attention_change`` (round 32, AC240:
        'flash_attention_2' was transformers' raw "does not support Flash Attention 2 yet" ValueError)."""
        from .load_keywords import check_attention_change

        check_attention_change(self, attn_implementation, "LeviathanForCausalLM.set_attn_implementation")
        return super().set_attn_implementation(attn_implementation, *args, **kwargs)

    # ---- forward -----------------------------------------------------------------------------
    def forward(
        self,
        input_ids: Optional[torch.LongTensor] = None,
        attention_mask: Optional[torch.Tensor] = None,
        position_ids: Optional[torch.LongTensor] = None,
        cache=None,
        inputs_embeds: Optional[torch.Tensor] = None,
        labels: Optional[torch.LongTensor] = None,
        use_cache: Optional[bool] = None,
        logits_to_keep: int | torch.Tensor = 0,
        return_dict: Optional[bool] = None,
        past_key_values=None,
        **kwargs,
    ) -> CausalLMOutputWithPast | tuple:
        """input_ids (B, T) -> logits (B, T', V), T' = T or ``logits_to_keep``; loss when labels are given.

        attention_mask: (B, S) with 1 for tokens to attend, S = cached + T (left padding for batches).
        position_ids: (B, T); default past .. past+T-1 (``generate`` derives them from the mask).
        cache: a transformers ``Cache`` (``DynamicCache``) or native ``KVCache``; ``past_key_values``
        is accepted as its older name. With ``use_cache`` (config default True) and no cache, a
        ``DynamicCache`` is created and returned.

        Parameters: Hugging Face's ``forward`` signature, which generation and the Trainer call by keyword.
        """
        if inputs_embeds is not None:
            _refuse_inputs_embeds("LeviathanForCausalLM.forward")
        api = "LeviathanForCausalLM.forward"
        if input_ids is None:  # a UserError too, still the ValueError it was (round 32, AC204's kind)
            raise ArgumentValueError(f"{api}: input_ids is required; pass the token ids, a (batch, length) tensor")
        check_forward_switches("LeviathanForCausalLM.forward",  # 'no' read as true (round 31, AA637-AA639)
                               {**kwargs, "use_cache": use_cache, "return_dict": return_dict})
        for flag in ("output_attentions", "output_hidden_states"):
            if kwargs.get(flag):  # a UserError too (still the ValueError it was): round 31, AA638
                raise ArgumentValueError(f"{flag}=True is not supported by LeviathanForCausalLM; leave {flag} out "
                                         f"(or pass False)")
        check_mask_dims(attention_mask, api)  # the adopted class's line too (round 32, AC171, AC207)
        check_attention_set(self, api)  # 'bogus' set on the config after the load (round 32, AC239)
        # no tensor argument on meta (round 32, AC186: logits_to_keep there kept 2 positions of unknown choice)
        # (ids, mask, positions and labels have their own lines, in LlamaModel and the label checks)
        refuse_meta_arguments(self, api, [("logits_to_keep", logits_to_keep), *kwargs.items()])
        cache = cache if cache is not None else past_key_values
        # read by no one (transformers 5): taken only where it is what the model counts (round 32, AC209)
        check_cache_position(kwargs.get("cache_position"), input_length(input_ids), cache, api)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if use_cache and cache is None:
            cache = DynamicCache(config=self.config)

        logits_to_keep = check_logits_to_keep(logits_to_keep, input_length(input_ids),  # Y99: an index past T
                                              "LeviathanForCausalLM.forward")
        if position_ids is None:  # counted from the cache: past the limit ran without a word (round 30, Y514)
            check_counted_positions(self, input_length(input_ids), cache, "LeviathanForCausalLM.forward")
        h = self.model(input_ids, cache=cache, position_ids=position_ids, attention_mask=attention_mask)  # (B, T, D)
        if isinstance(logits_to_keep, int):
            h = h[:, -logits_to_keep:, :] if logits_to_keep > 0 else h
        else:
            h = h[:, logits_to_keep, :]
        logits = self.lm_head(h)  # (B, T', V)

        loss = None
        if labels is not None:
            check_hf_labels(labels, input_ids.shape, self.config.vocab_size, kwargs.get("num_items_in_batch"))
            check_kept_for_loss(logits_to_keep, labels, input_length(input_ids), "LeviathanForCausalLM.forward")  # AA85
            # Hugging Face convention: labels == inputs, shifted inside (ignore_index -100)
            loss = self.loss_function(logits=logits, labels=labels, vocab_size=self.config.vocab_size,
                                      num_items_in_batch=loss_count(kwargs.get("num_items_in_batch")))
        out = CausalLMOutputWithPast(loss=loss, logits=logits, **{_CACHE_FIELD: cache if use_cache else None})
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        return out if return_dict else out.to_tuple()


def check_hf_labels(labels: Any, shape: Any, vocab_size: int, num_items_in_batch: Any = None, api: str = "") -> None:
    """The native model's label checks (``model.labels``: an integer tensor of ``input_ids``' shape, ids in
    [0, vocab_size) or -100) for Hugging Face's labels, which are the inputs, shifted inside the loss: labels of
    another length were torch's raw "Expected input batch_size (18) to match target batch_size (10)" (issue 30 round
    24, W226). Labels with no target after the shift (all -100, or only each row's first label) are refused as
    ``check_labels`` refuses them: transformers' mean over no target was a NaN loss without a word (round 26, Q187).
    Footgun kept: with ``num_items_in_batch`` (the Trainer's gradient accumulation) the loss is a sum divided by the
    whole batch's count, so a micro-batch of padding alone is a loss of 0, not NaN, and is taken. ``shape``: the
    input's (B, T) (None: not known, left to the model); ``api``: the forward a line names, for an adopted model's
    forward, which took float labels and labels past the vocabulary to torch's raw errors (issue 30 round 31, AA632,
    AA633; none of these rules were its)."""
    from ..errors import ArgumentValueError
    from ..model.labels import check_label_type, check_label_values

    prefix = f"{api}: " if api else ""
    check_label_type(labels, f"{prefix}labels")
    check_items_count(num_items_in_batch, labels=labels)
    if shape is not None and labels.shape != tuple(shape):
        raise ArgumentValueError(f"{prefix}labels must have the shape of input_ids {tuple(shape)} (Hugging Face's "
                                 f"convention: the inputs themselves, shifted inside the loss), got "
                                 f"{tuple(labels.shape)}")
    if labels.numel():
        check_label_values(labels, vocab_size)
    if num_items_in_batch is None and not bool((labels[..., 1:] != -100).any()):  # transformers shifts them
        raise ArgumentValueError(f"{prefix}labels {tuple(labels.shape)} hold no target after Hugging Face's shift "
                                 f"(labels[..., 1:], the ids the positions predict, are all -100 or none), so the loss "
                                 f"would be a mean over no target (NaN); give at least one target id, or leave out a "
                                 f"batch with nothing to score")


def check_items_count(count: Any, api: str = "LeviathanForCausalLM.forward", labels: Any = None) -> None:
    """ArgumentTypeError / ArgumentValueError unless ``num_items_in_batch`` (the Trainer's count of the targets of
    the whole accumulated batch, which the summed loss is divided by) is None or a positive whole number: 0 returned
    a loss of inf, -1 a negative cross-entropy and 2.5 a loss 2.5 times too small, all without a word (issue 30 round
    27, S463-S465). A Python count is an integer (``value_rules.check_whole``: a float is refused, not rounded). The
    Trainer passes a one-value tensor on the model's device (``Trainer._get_num_items_in_batch``: ``labels.ne(-100)
    .sum()`` divided by its parallel sizes, so a float tensor of a whole value): any integer or float dtype is taken.
    Footgun: its value is read only on the CPU; on a GPU reading it would stall every step on a host sync (the
    Trainer keeps the count on the device to avoid one), so there only its dtype and size are checked.
    ``api``: the forward the line names (an adopted model's forward is held to this rule too: round 28, U619). A count
    of 0 beside ``labels`` with no target after the shift is the Trainer's for a batch with nothing to score (a fully
    masked fine-tuning batch), and is taken: the loss is then 0 (``loss_count``; round 29, W681)."""
    import math

    from ..errors import ArgumentTypeError, ArgumentValueError
    from ..integers import is_integer
    from ..value_rules import check_whole

    fix = ("pass the number of target positions (labels != -100 after the shift) of the whole batch (0 only where "
           "it has none), or leave it out")
    if count is None:
        return
    if not isinstance(count, torch.Tensor):
        if not (is_integer(count) and count == 0 and _no_target(labels)):
            check_whole(api, "num_items_in_batch", count, 1, fix=fix)
        return
    if count.numel() != 1 or count.dtype == torch.bool or count.dtype.is_complex:
        raise ArgumentTypeError(f"{api}: num_items_in_batch must be a whole number >= 1 (an "
                                f"int, or a one-value integer or float tensor), got a {count.dtype} tensor of shape "
                                f"{tuple(count.shape)}; {fix}")
    if count.is_meta:  # transformers' loss read it: torch's raw "Cannot copy out of meta tensor" (round 29, W744)
        from ..meta_device import refuse_meta

        refuse_meta(count, f"{api}: num_items_in_batch", fix)
    if count.device.type == "cpu":
        value = float(count)
        if value == 0 and _no_target(labels):
            return
        if not (math.isfinite(value) and value >= 1 and value == int(value)):
            raise ArgumentValueError(f"{api}: num_items_in_batch must be a whole number >= 1, "
                                     f"got tensor({value:g}); {fix}")


def _no_target(labels: Any) -> bool:
    """Whether ``labels`` (Hugging Face's: shifted inside the loss) hold no target: every ``labels[..., 1:]`` -100."""
    return isinstance(labels, torch.Tensor) and not labels.is_meta and not bool((labels[..., 1:] != -100).any())


def loss_count(count: Any) -> Any:
    """``num_items_in_batch`` as the loss divides by it: a count of 0 (a batch with no target, ``check_items_count``)
    as 1, so the summed loss over no target is 0 with zero gradients, as the step of transformers' own models (their
    0 / 0, a NaN loss the Trainer leaves out of its log, whose gradients are zero; issue 30 round 29, W681). A tensor
    is clamped on its device: no host sync. Footgun: on a GPU a count of 0 beside targets is not seen (its value is
    not read there, ``check_items_count``) and divides by 1."""
    if isinstance(count, torch.Tensor):
        return count.clamp(min=1)
    return 1 if count == 0 else count


def unknown_keyword(error: TypeError) -> str | None:
    """The keyword of transformers' raw "__init__() got an unexpected keyword argument 'X'", None for another
    TypeError: ``from_pretrained`` hands a keyword that is neither its option nor a config setting (a misspelled
    ``dtpye=``) to the model's ``__init__`` (``load_adopted``: round 24, W597's kind; ``LeviathanForCausalLM``:
    round 29, beside W165)."""
    import re

    match = re.search(r"__init__\(\) got an unexpected keyword argument '(\w+)'", str(error))
    return None if match is None else match.group(1)

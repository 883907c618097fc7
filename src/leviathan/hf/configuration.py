"""``LeviathanConfig``: the Hugging Face config of a leviathan model (model_type ``"leviathan"``).

It carries every field of ``leviathan.model.config.ModelConfig`` under the same name (the backbone fields are
LlamaConfig's names, the generator's prefixed ``generator_``), so ``LeviathanConfig.from_model_config(cfg)
.to_model_config() == cfg.resolved()``; validation is ModelConfig's. ``tie_word_embeddings`` is derived, never
chosen: True exactly for ``embedding="dense_tied"`` (transformers reads it to tie ``lm_head.weight``).

Footguns:
- transformers 5 configs are dataclasses: every field below needs a class-level annotation, and
  this module must not use ``from __future__ import annotations`` (the strict validator reads the
  annotations as types).
- ``from_model_config`` stores the *resolved* config (explicit ``intermediate_size``, ``head_dim``,
  ``num_key_value_heads``, ``generator_base``), so config.json is self-contained and the digit base
  survives a later vocabulary change (see ``ModelConfig``'s footgun).
- A field added to ``ModelConfig`` must be added here too; ``to_model_config`` raises if one is
  missing rather than silently dropping it (tests/integration/test_hf.py checks the two agree).
"""

import copy
import dataclasses
import numbers
import os
from typing import Any

from transformers import PretrainedConfig

from ..config import ConfigError, warn_retired
from ..errors import UserError
from ..integers import is_integer
from ..model.config import ModelConfig

from .config_file import dtype_problem
from .config_values import check_config_values, config_values_problem, hf_fields_problem, repeated_keys, tie_problem

# Llama-family settings a config.json may carry that this model does not read: the one value it implements. Any other
# value was loaded, shown as the model's (config.hidden_act 'gelu') and ignored, the logits unchanged (issue 30 round
# 19, J42; the root of round 18's G210). Every declared field above is read: the backbone's and the generator's by
# ``to_model_config``, the Hugging Face ones by transformers.
IMPLEMENTED_ONLY = {"hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "attention_dropout": 0.0,
                    "rope_scaling": None, "pretraining_tp": 1, "sliding_window": None, "use_sliding_window": False,
                    "partial_rotary_factor": 1.0, "hidden_dropout": 0.0, "embd_pdrop": 0.0, "resid_pdrop": 0.0}


def _check_implemented(extra: dict) -> None:
    """ConfigError naming a setting of ``IMPLEMENTED_ONLY`` (or a rope other than the default one) whose value the
    model does not implement (round 19, J42: an export's hidden_act edited to gelu loaded and ran SiLU)."""
    wrong = {k: v for k, v in extra.items() if k in IMPLEMENTED_ONLY and v != IMPLEMENTED_ONLY[k]}
    rope = extra.get("rope_parameters")
    if rope is not None and (not isinstance(rope, dict) or rope.get("rope_type", "default") != "default"):
        wrong["rope_parameters"] = rope
    if wrong:
        key, value = next(iter(wrong.items()))
        implemented = IMPLEMENTED_ONLY.get(key, "{'rope_type': 'default'}")
        raise ConfigError(f"{key} {value!r:.60} is a setting this model does not implement (it computes "
                          f"{key}={implemented!r} whatever config.json says); write {implemented!r} or remove the "
                          f"key from config.json, or re-export the run (`leviathan export RUN OUT`)")


def _check_unknown(extra: dict) -> None:
    """ConfigError for a key that is no field and that neither transformers nor this config reads
    (``config_keys.check_config_keys``): a near miss of a field (``generator_rnk``, round 24, W259) and any other key
    (``factorized_rank=0``, ``unknown_key=5``: stored, saved and read by nothing, issue 30 round 30, Y483, Y488)."""
    from .config_keys import check_config_keys

    own = set(IMPLEMENTED_ONLY) | set(ModelConfig.RETIRED_KEYS)
    check_config_keys(extra, [f.name for f in dataclasses.fields(ModelConfig)], own)


class LeviathanConfig(PretrainedConfig):
    """Hugging Face twin of ``ModelConfig`` (see that class for every field), plus Hugging Face's ``use_cache``,
    ``bos_token_id``, ``eos_token_id``, ``pad_token_id`` and ``tie_word_embeddings`` (derived from ``embedding``).
    """

    model_type = "leviathan"

    # ---- ModelConfig fields (same names, same defaults) ------------------------------------
    vocab_size: int = 200_019
    hidden_size: int = 512
    intermediate_size: int | None = None
    num_hidden_layers: int = 6
    num_attention_heads: int = 8
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    max_position_embeddings: int = 512
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    initializer_range: float = 0.02
    embedding: str = "leviathan"
    embedding_rank: int = 128
    generator_k: int = 3
    generator_seed_dim: int = 128
    generator_modes: int = 8
    generator_knots: int = 32
    generator_rank: int = 64
    generator_degree: int = 2
    generator_ln_eps: float = 1e-5
    generator_base: int | None = None
    embedding_norm: bool = False
    generator_init: str = "reference"
    generator_center: bool = False
    generator_form: str = "paper"

    # ---- Hugging Face fields ------------------------------------------------------------------
    use_cache: bool = True
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    pad_token_id: int | None = None
    tie_word_embeddings: bool | None = None  # derived from embedding; None: not given (round 35, AI69)

    def __post_init__(self, **kwargs):
        for key, reason in ModelConfig.RETIRED_KEYS.items():  # config.json of an older export
            if key in kwargs:
                kwargs.pop(key)
                warn_retired(key, reason)
        if self.tie_word_embeddings is not None:  # given: a switch that agrees with the embedding (round 35, AI69)
            _check_tie(self.tie_word_embeddings, self.embedding)
        self.tie_word_embeddings = self.embedding == "dense_tied"
        for name in ("rope_theta", "rms_norm_eps", "initializer_range", "generator_ln_eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy's too (np.float32: round 29)
                raise ConfigError(f"{name} must be a number, got {value!r}")
            setattr(self, name, float(value))  # config.json then always holds a float
        _check_implemented(kwargs)
        _check_unknown(kwargs)
        if (problem := hf_fields_problem(vars(self))) is not None:  # before transformers reads them (round 33, AE252)
            raise ConfigError(problem)
        self._check_dtype(kwargs.get("torch_dtype"))  # before transformers' getattr(torch, name) (round 22, S108)
        super().__post_init__(**kwargs)
        self._check_switches()
        self._check_dtype()
        model = self.to_model_config()  # validate with ModelConfig's messages
        # its switches as ModelConfig stores them: numpy's bool taken (round 28, U19), config.json holds true or false
        self.embedding_norm, self.generator_center = model.embedding_norm, model.generator_center
        self._plain_numbers()
        self._check_token_ids()  # of vocab_size, checked above

    def __setattr__(self, key, value):
        """Setting ``embedding`` derives ``tie_word_embeddings`` again, as the constructor does, whichever door set
        it: ``update_from_string('embedding=dense_tied')``, ``from_dict(d, embedding='dense_tied')`` and
        ``from_pretrained(DIR, embedding='dense_tied')`` left it False (only ``update`` derived it), so the model of
        that config had an untied head (issue 30 round 33, AE104, AE130, AE339, AE340, AE345). Setting
        ``tie_word_embeddings`` itself, once the config is made, is held to the same rule: ``c.tie_word_embeddings =
        False`` (or 0) beside 'dense_tied' was kept, and the model of that config had an untied head and saved a folder
        its loader refused (issue 30 round 35, AI72, AI87, AI93; the keyword door of ``from_dict``, AE343's, too)."""
        if key == "tie_word_embeddings" and getattr(self, "_post_init_done", False):
            try:
                _check_tie(value, self.embedding)
            except ConfigError as e:
                error = ConfigError(f"LeviathanConfig: {e}")
                error.from_keywords = True  # from_pretrained's keyword, not config.json (``_check_keyword_values``)
                raise error from None
        # numpy's numbers stored as Python's at every door (the constructor's ``_plain_numbers``): rms_norm_eps set to
        # np.float32 after construction ended its save in json's raw TypeError, config.json left truncated (round 36,
        # AK123, AK127-AK130)
        super().__setattr__(key, _plain(value))
        if key == "embedding":
            super().__setattr__("tie_word_embeddings", value == "dense_tied")

    def _plain_numbers(self) -> None:
        """numpy's numbers, once validated (ModelConfig takes them: round 28, U19), stored as Python's: a numpy int
        was kept, and ``to_json_string`` (what ``save_pretrained`` and ``print(config)`` write) ended in json's raw
        TypeError (issue 30 round 29, W489, W503); inside a list too (``eos_token_id=[np.int64(2), ...]``, W504's)."""
        for name, value in list(vars(self).items()):
            setattr(self, name, _plain(value))

    def _check_switches(self) -> None:
        """The Hugging Face switches are True or False (None where transformers takes "decide for me"):
        ``from_native(m, use_cache='no')`` stored the text, which transformers reads as true, a cache used, without a
        word (issue 30 round 27, S133), as ``output_hidden_states='no'`` and ``return_dict='no'`` were."""
        from ..value_rules import switch_problem

        for name, optional in _SWITCHES.items():
            value = getattr(self, name, None)
            if (value is not None or not optional) and (problem := switch_problem(value)) is not None:
                raise ConfigError(f"{name} {problem}; pass {name}=True or {name}=False (a text such as 'no' or a "
                                  f"number is not a switch)" + (", or None" if optional else ""))

    def _check_dtype(self, older_name=None) -> None:
        """config.json's ``dtype`` (and ``older_name``, the ``torch_dtype`` older folders carry) names a floating type a
        model's weights load in: ``float8_e4m3fn`` ended in transformers' "couldn't find storage object
        Float8_e4m3fnStorage" TypeError (issue 30 round 11, S35), and ``float8``, a name torch lacks, in its
        "module 'torch' has no attribute 'float8'" AttributeError, so this runs before transformers' own conversion
        too (round 22, S108)."""
        for key, value in (("dtype", getattr(self, "dtype", None)), ("torch_dtype", older_name)):
            if (problem := dtype_problem(value)) is not None:
                raise ConfigError(f"{key} {problem}; write one of those as config.json's {key} (the export writes "
                                  f"float32)")

    def _check_token_ids(self) -> None:
        """``bos_token_id``, ``eos_token_id`` (an id or a list of them) and ``pad_token_id`` are None or ids of the
        model's vocabulary: ``from_native(m, bos_token_id=999)`` on 300 ids, ``eos_token_id=-5`` and ``pad_token_id=1.5``
        were taken and written into config.json and generation_config.json without a word (issue 30 round 17, E419,
        E420); generation would then stop on, or pad with, a token the model cannot emit or read."""
        for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
            if (problem := token_id_problem(name, getattr(self, name, None), self.vocab_size)) is not None:
                raise ConfigError(f"{problem}; pass the id of its tokenizer's token (such as its end-of-text id), or "
                                  f"None")

    # ---- changes after construction (issue 30 round 31) ------------------------------------------
    def update(self, config_dict: dict[str, Any]) -> None:
        """transformers' ``update``, after refusing a key the constructor refuses (``_check_implemented``,
        ``_check_unknown``): ``config.update({'factorized_rank': 0})`` stored the key ``LeviathanConfig(...,
        factorized_rank=0)`` refuses, saved and read by nothing (issue 30 round 31, AA209)."""
        if not isinstance(config_dict, dict):
            raise ConfigError(f"update: expected a dict of setting -> value, got {type(config_dict).__name__}; pass "
                              f"e.g. config.update({{'hidden_size': 64}})")
        extra = {k: v for k, v in config_dict.items() if k not in _field_names()}
        try:
            _check_implemented(extra)
            _check_unknown(extra)
        except ConfigError as e:
            raise ConfigError(f"update: {e}") from None
        config_dict = {k: _plain(v) for k, v in config_dict.items()}  # numpy's numbers as Python's (round 29, W489)
        trial = copy.deepcopy(self)  # the values held to the constructor's rules, nothing changed unless all take
        PretrainedConfig.update(trial, _tie_last(config_dict))
        if (problem := tie_problem(config_dict, trial.embedding)) is not None:  # round 33, AE343
            raise ConfigError(f"update: {problem}; nothing was changed")
        check_config_values(trial, "update", _UNCHANGED)
        super().update(_tie_last(config_dict))  # the tie checked against the embedding it comes with (AI72)
        self.tie_word_embeddings = self.embedding == "dense_tied"  # derived, as the constructor derives it

    def update_from_string(self, update_str: str) -> None:
        """transformers' ``update_from_string`` (``'hidden_size=64,num_hidden_layers=2'``), its refusals in one
        ConfigError line naming the key and its near spelling: ``'num_hidden_layer=2'`` was transformers' raw
        "ValueError: key num_hidden_layer isn't in the original config dict" (issue 30 round 31, AA210), a value that is
        no number its raw ``int()`` ValueError, a setting that is None its TypeError."""
        fix = "write KEY=VALUE pairs of the config's settings, separated by commas (e.g. 'hidden_size=64,rope_theta=1e4')"
        if not isinstance(update_str, str):
            raise ConfigError(f"update_from_string: expected a text, got {type(update_str).__name__}; {fix}")
        pairs = update_str.split(",")
        if (bad := next((p for p in pairs if p.count("=") != 1 or not p.split("=")[0]), None)) is not None:
            raise ConfigError(f"update_from_string: {bad!r:.60} is no KEY=VALUE pair; {fix}")
        if (twice := repeated_keys(pairs)) is not None:  # the last was kept without a word (round 32, AC259)
            raise ConfigError(f"update_from_string: {twice!r:.60} is given twice in {update_str!r:.80}; give each "
                              f"setting once; nothing was changed")
        for key in (p.split("=")[0] for p in pairs):
            if not hasattr(self, key):
                from .config_keys import near_field

                raise ConfigError(f"update_from_string: LeviathanConfig has no setting {key!r:.60}"
                                  f"{near_field(key, sorted(_field_names()))}; {fix}")
        trial = copy.deepcopy(self)  # each pair tried alone, so the line names it; nothing changed unless all take
        pairs = sorted(pairs, key=lambda p: p.split("=")[0] == "tie_word_embeddings")  # after its embedding (AI72)
        for pair in pairs:
            try:
                PretrainedConfig.update_from_string(trial, pair)
            except ConfigError as e:  # the tie held to the embedding (``__setattr__``, AI72)
                raise ConfigError(f"update_from_string: {str(e).removeprefix('LeviathanConfig: ')}; nothing was "
                                  f"changed") from None
            except (ValueError, TypeError) as e:
                raise ConfigError(f"update_from_string: {pair!r:.60}: {str(e).split(' (key ')[0]:.120}; write a whole "
                                  f"number for an integer setting, a number for a float, true or false for a switch "
                                  f"(a setting that is None is set as an attribute: config.NAME = value)") from None
        given = {p.split("=")[0]: getattr(trial, p.split("=")[0]) for p in pairs}
        if (problem := tie_problem(given, trial.embedding)) is not None:  # round 33, AE343's door
            raise ConfigError(f"update_from_string: {problem}; nothing was changed")
        check_config_values(trial, "update_from_string", _UNCHANGED)  # AC264, AC265, AC268
        super().update_from_string(",".join(pairs))

    @classmethod
    def from_dict(cls, config_dict: dict[str, Any], **kwargs: Any) -> Any:
        """transformers' ``from_dict``, refusing a keyword it would drop: ``LeviathanConfig.from_dict(d,
        factorized_rank=0)`` returned the config without the key and without a word (issue 30 round 31, AA203), where
        the constructor refuses it; ``from_pretrained(DIR, factorized_rank=0)`` reads through here too. A caller that
        asks for the keywords left over (``return_unused_kwargs=True``: transformers' model loaders, which pass their
        own options along) gets them, as before."""
        if not isinstance(config_dict, dict):  # transformers' raw "argument after ** must be a mapping" (AC271)
            raise ConfigError(f"from_dict: expected a dict of setting -> value, got {type(config_dict).__name__}; pass "
                              f"e.g. LeviathanConfig.from_dict(config.to_dict()), or LeviathanConfig.from_json_file("
                              f"PATH) for a file")
        # numpy's numbers as Python's: transformers sets a keyword after the constructor, and its log line then ended
        # in json's raw "Object of type int64 is not JSON serializable" (round 32, AC273)
        kwargs = _tie_last({k: _plain(v) for k, v in kwargs.items()})
        _check_keyword_kinds(kwargs)
        from ..value_rules import check_switches

        check_switches("from_dict", return_unused_kwargs=kwargs.get("return_unused_kwargs", False))  # AE108
        if kwargs.get("return_unused_kwargs"):
            config, unused = super().from_dict(config_dict, **kwargs)
            _check_keyword_values(config, kwargs)
            return config, unused
        config, unused = super().from_dict(config_dict, return_unused_kwargs=True, **kwargs)
        _check_keyword_values(config, kwargs)
        unused = {k: v for k, v in unused.items() if v is not None and k not in _LOADER_KEYS}  # lm-eval's gguf_file=None
        if unused:
            from .config_keys import near_field

            key = next(iter(unused))
            raise ConfigError(f"LeviathanConfig has no setting {key!r:.60}{near_field(key, sorted(_field_names()))}, "
                              f"so {key}={unused[key]!r:.40} would be dropped without a word; pass one of its "
                              f"settings, or leave it out")
        return config

    def save_pretrained(self, save_directory, push_to_hub: bool = False, **kwargs):
        """transformers' ``save_pretrained``, after ``check_saveable``: a config changed after it was made
        (``config.unknown_attr = 5``) was written into config.json, which ``from_pretrained`` then refused (issue 30
        round 31, AA204). Its place is held to the model saves' rules (``save_place.check_save_directory``) and a
        storage failure is their ``errors.StorageError`` (``storage.api_writes``): a file or a pipe in the folder's
        place, a NUL byte and a 300-byte name were transformers' AssertionError or os.makedirs' raw errors, and
        ``push_to_hub='no'`` was read as true, the network tried after config.json was written (issue 30 round 32,
        AC281-AC285). Into a folder holding weights it writes only what their config.json says already, and then
        nothing (``config_save.keep_weights_config``, round 35, AI581-AI583, AI586)."""
        from ..value_rules import check_switches, hub_token_problem
        from .config_save import save_config

        check_switches("save_pretrained", push_to_hub=push_to_hub)
        if (problem := hub_token_problem(kwargs.get("token"))) is not None:  # token=5 (round 35, AI330's sibling)
            raise ConfigError(f"save_pretrained: {problem}; pass the token's text, or leave token out")
        self.check_saveable()
        return save_config(self, save_directory, push_to_hub, kwargs, super().save_pretrained)

    @classmethod
    def _dict_from_json_file(cls, json_file):
        """transformers' reader of a config's JSON file (``from_json_file``, ``from_pretrained``), by
        ``config_file.read_config_json``: a key given twice was taken as "the last one wins" by ``from_json_file``,
        where ``from_pretrained`` refuses the same file (issue 30 round 32, AC287; round 27, S89)."""
        from .config_file import read_config_json

        raw = read_config_json(json_file, "restore the file from a copy, or export the checkpoint again (leviathan "
                                          "export RUN OUT)")
        return cls._decode_special_floats(raw)

    @classmethod
    def from_json_file(cls, json_file):
        """transformers' ``from_json_file``, its refusal of a value naming the file as ``from_pretrained``'s does:
        ``hidden_size: NaN`` was "model.hidden_size must be a positive integer, got nan", no file and no fix (issue 30
        round 33, AE114). Another model type's file is named as such (``_refuse_other_model_type``, AI418's sibling)."""
        from .config_file import read_config_json

        if isinstance(json_file, (str, os.PathLike)) and os.path.isfile(json_file):
            _refuse_other_model_type(read_config_json(json_file, "restore the file from a copy, or export the "
                                                                "checkpoint again (leviathan export RUN OUT)"),
                                     os.fspath(json_file))
        try:
            return super().from_json_file(json_file)
        except ConfigError as e:
            raise ConfigError(f"{os.fspath(json_file)!r}: {e} (the file was edited or damaged); restore it from a "
                              f"copy, or export the checkpoint again (leviathan export RUN OUT)") from None

    def check_saveable(self) -> None:
        """ConfigError unless the config.json this config writes is one ``from_pretrained`` reads back: the config is
        built again from its own ``to_dict`` (the constructor's checks: unknown keys, settings the model does not
        implement, sizes, token ids), so an attribute set after construction that the constructor refuses is named
        before anything is written (AA204; the model's ``save_pretrained`` asks this too, AA427's kind)."""
        check_config_values(self, "save_pretrained", "it was set after the config was made, and from_pretrained "
                                                     "would refuse the saved config.json: set it back (or del "
                                                     "config.NAME), then save; nothing was written")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *args, **kwargs):
        """transformers' read, after the checks of ``model_path.check_model_path``: an empty folder, a data or run
        folder, and a folder whose config.json is a named pipe each returned the default LeviathanConfig (200,019 ids,
        width 512) without a word, not the folder's, where ``LeviathanForCausalLM.from_pretrained`` refuses the same
        folders (issue 30 round 23, U412). A JSON file itself may be given, as transformers allows; it is read by
        ``config_file.read_config_json`` first (another file, such as the weights, is refused as no folder). A hub
        name is left to transformers, its failure said with both readings (``model_path.hub_failure``)."""
        from .config_file import read_config_json
        from .model_path import check_model_path, hub_failure

        where, subfolder = pretrained_model_name_or_path, kwargs.get("subfolder")
        fix = "restore it from a copy, or export the checkpoint again (leviathan export RUN OUT)"
        file = None
        if isinstance(where, (str, os.PathLike)):
            folder = os.path.join(os.fspath(where), os.fspath(subfolder)) if subfolder else os.fspath(where)
            if os.path.isfile(folder) and folder.endswith(".json"):
                file = folder
            else:
                check_model_path(folder, "from_pretrained")
                file = os.path.join(folder, "config.json") if os.path.isdir(folder) else None
            if file is not None:
                _refuse_other_model_type(read_config_json(file, fix), file)  # a key twice too (round 27, S89's kind)
        try:
            return super().from_pretrained(pretrained_model_name_or_path, *args, **kwargs)
        except ConfigError as e:  # vocab_size 300.0 named no file and no fix (round 27, S90's kind)
            if file is None or getattr(e, "from_keywords", False):
                raise
            raise ConfigError(f"{file!r}: {e} (config.json was edited or damaged); {fix}") from None
        except OSError as e:
            refused = hub_failure(e, where, "from_pretrained")
            if refused is None:
                raise
            raise refused from None

    # ---- conversions ---------------------------------------------------------------------------
    def to_model_config(self) -> ModelConfig:
        """The native ``ModelConfig`` (validated) this config describes."""
        values = {}
        for f in dataclasses.fields(ModelConfig):
            if not hasattr(self, f.name):
                raise ConfigError(f"LeviathanConfig has no field {f.name!r}, which ModelConfig has; "
                                  "add it to leviathan/hf/configuration.py")
            values[f.name] = getattr(self, f.name)
        return ModelConfig(**values)

    @classmethod
    def from_model_config(cls, cfg: ModelConfig, **kwargs) -> "LeviathanConfig":
        """A config for ``cfg`` with every default made explicit; ``kwargs`` set Hugging Face fields."""
        values = dataclasses.asdict(cfg.resolved())
        return cls(**values, **kwargs)


# from_pretrained's own options that callers (lm-evaluation-harness: gguf_file=None) hand to AutoConfig, which
# transformers drops here by design: not settings, so never refused as unknown ones
_LOADER_KEYS = frozenset({"gguf_file", "cache_dir", "force_download", "proxies", "token", "use_auth_token",
                          "local_files_only", "revision", "subfolder", "trust_remote_code", "code_revision",
                          "_commit_hash", "user_agent", "resume_download"})


# the fix every refused change of a config's values ends with (check_config_values)
_UNCHANGED = "nothing was changed: give the setting a value LeviathanConfig(...) takes"


def _check_tie(value: Any, embedding: Any) -> None:
    """ConfigError unless ``value``, a ``tie_word_embeddings`` given, is a switch agreeing with ``embedding`` (True
    exactly for 'dense_tied'): the constructor dropped a False given beside 'dense_tied' without a word, through
    ``from_dict``'s dict and ``AutoConfig.for_model`` too (issue 30 round 35, AI69, AI73, AI75), and read the text
    'yes' as True, its line speaking of the embedding (AI76)."""
    from ..value_rules import switch_problem

    if (problem := switch_problem(value)) is not None:
        raise ConfigError(f"tie_word_embeddings {problem}; it is derived from the embedding (True exactly for "
                          f"embedding='dense_tied'): set embedding, and leave tie_word_embeddings out")
    if value and embedding != "dense_tied":
        raise ConfigError(f"tie_word_embeddings=True needs embedding='dense_tied' (got {embedding!r}); "
                          "tying is derived from the embedding variant, set embedding instead")
    if (problem := tie_problem({"tie_word_embeddings": value}, embedding)) is not None:
        raise ConfigError(problem)


def _tie_last(settings: dict) -> dict:
    """``settings`` with ``tie_word_embeddings`` last: set after the ``embedding`` given with it, which it is held to
    (``LeviathanConfig.__setattr__``)."""
    return dict(sorted(settings.items(), key=lambda item: item[0] == "tie_word_embeddings"))


def _refuse_other_model_type(raw: Any, file: str) -> None:
    """ConfigError when config.json ``file`` (read as ``raw``) is another model type's: ``from_pretrained`` of an adopted
    Qwen2's folder printed transformers' "model of type qwen2 to instantiate a model of type leviathan" note, then
    refused its first Qwen2 key ('layer_types') as a key to remove from the file (issue 30 round 35, AI418), as the
    model loader names such a folder (``save_folder.refuse_other_model_type``, round 21, P464)."""
    kind = raw.get("model_type") if isinstance(raw, dict) else None
    if not isinstance(kind, str) or kind == "leviathan":
        return
    folder = os.path.dirname(file) or "."
    use = (f"leviathan.hf.load_adopted({folder!r}) loads it (an adopted model: leviathan_generator in its config.json)"
           if "leviathan_generator" in raw else f"transformers.AutoConfig.from_pretrained({folder!r}) reads it")
    raise ConfigError(f"{file!r} is a {kind!r} model's config (its model_type), not a LeviathanConfig; {use}")


def _check_keyword_values(config: "LeviathanConfig", kwargs: dict) -> None:
    """ConfigError when the settings ``from_dict`` (and ``from_pretrained``, through it) set from its keywords, after
    the constructor, are values the constructor refuses: ``from_pretrained(DIR, hidden_size=-1)`` returned a config of
    width -1 without a word (issue 30 round 32, AC277). Marked ``from_keywords`` so ``from_pretrained`` does not blame
    config.json."""
    given = {k: v for k, v in kwargs.items() if k != "return_unused_kwargs" and hasattr(config, k)}
    if (tie := tie_problem(given, config.embedding)) is not None:  # round 33, AE343's door
        error = ConfigError(f"LeviathanConfig: {tie}")
        error.from_keywords = True
        raise error
    if not given or (problem := config_values_problem(config)) is None:
        return
    shown = ", ".join(f"{k}={v!r:.30}" for k, v in given.items())
    error = ConfigError(f"LeviathanConfig: {problem} (from the keywords {shown}); pass values the config takes, or "
                        f"leave them out")
    error.from_keywords = True
    raise error



def _check_keyword_kinds(kwargs: dict) -> None:
    """ConfigError for a keyword setting of ``from_dict`` / ``from_pretrained`` that is a torch tensor or a numpy
    array, which no config.json holds: ``from_dict(d, hidden_size=torch.tensor(32))`` ended in json's raw "Object of
    type Tensor is not JSON serializable" from transformers' log line, before any check (issue 30 round 33, AE347),
    where the constructor refuses the same value. (transformers' own keywords, such as a Path ``name_or_path`` or a
    torch.dtype ``dtype``, are left to it.)"""
    import sys

    import numpy as np

    torch = sys.modules.get("torch")
    kinds = (np.ndarray,) + ((torch.Tensor,) if torch is not None else ())
    for key, value in kwargs.items():
        if isinstance(value, kinds) and key in _field_names():
            hint = " (tensor.item() gives its number)" if value.ndim == 0 else ""
            error = ConfigError(f"LeviathanConfig: {key}={value!r:.40} is a {type(value).__name__}, not a value "
                                f"config.json can hold; pass a plain Python value{hint}, or leave it out")
            error.from_keywords = True
            raise error from None


def _field_names() -> set[str]:
    """The names ``LeviathanConfig`` declares and those transformers' ``PretrainedConfig`` does (fields, attributes)."""
    from .config_keys import transformers_keys

    return {f.name for f in dataclasses.fields(LeviathanConfig)} | set(transformers_keys())


# LeviathanConfig's switches (its own use_cache, and PretrainedConfig's) -> whether None is taken too
_SWITCHES = {"use_cache": False, "output_hidden_states": True, "return_dict": True, "is_encoder_decoder": False}

GENERATION_IDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")


def _plain(value: Any) -> Any:
    """``value`` with numpy's bools, ints and floats (also inside lists, tuples and a dict's keys and values, as
    ``sequence_bias`` holds them: issue 30 round 33, AE389) as Python's own."""
    import numpy as np

    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return float(value) if isinstance(value, np.floating) else value


def token_id_problem(name: str, value: Any, vocab_size: int) -> str | None:
    """"eos_token_id 999 is not a token id of this model (...)" when ``value`` (None, an id, or for eos a list of
    ids) holds something other than a whole number in [0, vocab_size); None when it is fine (round 17, E419, E420)."""
    ids = value if name == "eos_token_id" and isinstance(value, (list, tuple)) else [value]
    bad = next((i for i in ids if i is not None and (not is_integer(i) or not 0 <= i < vocab_size)), "ok")  # numpy's
    if bad == "ok":
        return None
    return (f"{name} {bad!r} is not a token id of this model (whole numbers 0 to {vocab_size - 1}, its vocabulary of "
            f"{vocab_size:,})")


def check_generation_ids(model: Any, folder: Any) -> None:
    """UserError when the loaded ``model``'s generation settings (generation_config.json) name a token id outside its
    vocabulary: a marker-less folder whose generation_config.json had eos_token_id 999 over 300 ids loaded and
    generated without a word, never able to stop at its end of text (issue 30 round 22, S104). config.json's own ids
    are checked by ``LeviathanConfig``. The file itself and its other values next (``generation_file``: a damaged
    file was skipped without a word, max_length -5 taken, round 25, Y514, Y515)."""
    from .generation_file import check_generation_file

    if (problem := generation_id_problem(model)) is not None:
        where = os.path.join(os.fspath(folder), "generation_config.json")
        why = ("generate could never stop at, or would read, an id the model does not have" if "not a token id" in
               problem else "laid out as transformers' generate cannot read it (issue 30 round 33, AE200)")
        raise UserError(f"{where!r}: {problem}; {why}: set it to the tokenizer's id (or remove the line), or save the "
                        f"model again")
    check_generation_file(model, folder)


def generation_id_problem(model: Any) -> str | None:
    """``token_id_problem`` of the first of ``model``'s generation settings (its ``generation_config``) that names a
    token id outside its vocabulary; None when all are fine or the model has none. Read by the loaders
    (``check_generation_ids``) and, for the same rule, by the savers (``save_folder.check_save_arguments``)."""
    from .setting_ids import LISTED_IDS, setting_ids_problem

    generation = getattr(model, "generation_config", None)
    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    if generation is None or not is_integer(vocab):
        return None
    for name in GENERATION_IDS:
        if (problem := token_id_problem(name, getattr(generation, name, None), vocab)) is not None:
            return problem
    for name in LISTED_IDS:  # suppress_tokens [400] loaded without a word (issue 30 round 32, AC408)
        if (problem := setting_ids_problem(name, getattr(generation, name, None), vocab)) is not None:
            return problem
    return None

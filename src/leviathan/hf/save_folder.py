"""Whose folder a public ``save_pretrained`` may write into (issue 30 round 18, G244-G249).

    check_save_directory(save_directory, "save_pretrained")   # before an API save_pretrained writes anything

Footgun: transformers' ``save_pretrained`` writes config.json, generation_config.json and the weights into any folder,
over what is there. An adopted model's or ``from_native``'s ``save_pretrained`` wrote over an export's files, a run's
checkpoint weights (which eval then refused as not the files saved with that checkpoint), and a user's own
config.json, and mixed model files into a data or a sweep folder, no word. The rule is ``ownership``'s, as for
``Tokenizer.save``: no folder that is or lies inside a verb's output, and no file written over that an earlier
``save_pretrained`` did not write. ``export`` saves into its own temporary folder (``LeviathanForCausalLM.save_owned``).

    save_whole(super().save_pretrained, save_directory)        # checked, written whole or not at all

Footgun 2 (round 19, J54-J76, J322): transformers writes config.json and generation_config.json first and the weights
last, straight into the folder; a full disk, ``ulimit -f``, a read-only disk, a 300-byte name or a parent that is a
file ended in a raw SafetensorError/OSError traceback, and the folder was left holding the two JSON files without
weights (a half-written save that looks like one). Ctrl-C left model.safetensors at safetensors' private mode 0600.
``save_whole`` saves into a hidden temporary folder inside it, gives the files the umask's modes, and only then
renames them into place; a failure removes what it wrote and is an ``errors.StorageError`` in the verbs' words.
It is ``experiments.staged.staged_output``'s rule without its marker: a marker would make the folder a verb's output,
which ``check_save_directory`` then refuses (the user's next save into it) and which is no file of a model's.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import json_text
from ..errors import UserError
from .save_place import LOADABLE, SAVED_FILES, check_save_directory  # noqa: F401 (read from here before: modeling, adoption)

# what a model folder's temporary folder may hold (an export's or a save's: the model's files, its card, a tokenizer,
# lm-eval's tokenizer files, the export marker): a killed writer's leftover holding anything else is named, not deleted
MODEL_FOLDER_FILES = ("config.json", "generation_config.json", "leviathan_save.json", "*.safetensors",
                      "model.safetensors.index.json", "pytorch_model*.bin", "pytorch_model.bin.index.json",
                      "README.md", "tokenizer*", "*tokenizer.json", "special_tokens_map.json", "added_tokens.json", "vocab.*", "merges.txt",
                      "*.model", "chat_template.*", "leviathan_output.json")


def check_save_arguments(model: Any, state_dict: Any, kwargs: dict, who: str = "save_pretrained") -> None:
    """UserError for the ``save_pretrained`` arguments a whole save cannot honour (issue 30 round 20):
    ``push_to_hub=True`` pushed the hidden temporary folder ``save_whole`` saves into, its name taken as the repo id
    (M10); a ``state_dict`` lacking the model's tensors (``{}``) wrote a folder that looks like a save, which no loader
    takes (M8); one holding tensors the model has no place for (``junk.weight``) saved without a word, and the folder's
    own loader then blamed config.json (round 21, P578). A ``max_shard_size`` of -5 wrote one-tensor shards (round 22,
    S140, S420, S425: the check ``to_hf`` has made since round 15, B248) and a ``variant`` of '../x' ended in a raw
    FileNotFoundError (S421); ``is_main_process='no'`` was read as true (``value_rules.check_switches``), and
    ``push_to_hub='yes'`` too, and ``token=5`` taken (round 35, AI389, AI330). Generation ids
    outside the vocabulary were saved for the loader to refuse (round 23, U65: ``_check_generation_ids``). A keyword
    save_pretrained does not take is named (``_refuse_unknown_keywords``, round 29, W165), in ``who``'s words."""
    _refuse_unknown_keywords(kwargs, who)
    from ..value_rules import check_switches

    check_switches(who, **{name: kwargs[name] for name in ("push_to_hub",) if name in kwargs})  # 'yes' (AI389)
    if kwargs.get("push_to_hub"):
        raise UserError("save_pretrained(push_to_hub=True) is not supported for this model: the save is staged in a "
                        "temporary folder, whose name would be the repo id; save it, then upload the folder "
                        "(huggingface_hub.upload_folder(repo_id=..., folder_path=DIR)) or call "
                        "model.push_to_hub(repo_id)")
    _check_save_options(kwargs)
    if callable(check := getattr(getattr(model, "config", None), "check_saveable", None)):
        check()  # a LeviathanConfig changed after it was made (issue 30 round 31, AA204's kind)
    _check_generation_ids(model)
    _check_distributed(model, kwargs)
    if state_dict is None:
        _refuse_meta_model(model)
        return
    if not isinstance(state_dict, dict):
        raise TypeError(f"save_pretrained: state_dict must be a dict of tensors, got {type(state_dict).__name__}")
    _refuse_meta_tensors(state_dict)
    tied = set(getattr(model, "all_tied_weights_keys", None) or {})
    lacking = sorted(set(model.state_dict()) - set(state_dict) - tied)
    if lacking:
        from ..eval.weight_names import shown_names

        raise UserError(f"save_pretrained: state_dict lacks {len(lacking)} of the model's tensors "
                        f"({shown_names(lacking)}): the "
                        f"folder would look like a save but not load; pass the model's full state_dict (or none: "
                        f"model.state_dict() is saved), nothing was written")
    _refuse_extra_tensors(model, state_dict)


def _check_distributed(model: Any, kwargs: dict) -> None:
    """UserError for ``distributed_checkpoint=True`` on a model that is not sharded (no ``distributed_config`` of
    more than one TP or DP rank, transformers' own condition): transformers' raw "requires an FSDP- or TP-sharded
    model" ValueError came through the save's keyword check (issue 30 round 35, AI327)."""
    if not kwargs.get("distributed_checkpoint"):
        return
    config = getattr(getattr(model, "config", None), "distributed_config", None)
    if config is None or (getattr(config, "tp_size", 1) <= 1 and getattr(config, "dp_size", 1) <= 1):
        raise UserError("save_pretrained(distributed_checkpoint=True) needs a model sharded by FSDP or tensor "
                        "parallelism (a distributed_config of more than one rank), and this one is whole in this "
                        "process; leave distributed_checkpoint out (the whole model is saved)")


def _refuse_meta_model(model: Any) -> None:
    """UserError when the model to save has a tensor on the meta device (no values): the native class's save was
    safetensors' raw "Cannot copy out of meta tensor; no data!" (issue 30 round 35, AI556); the adopted class's bake
    named it (AI554), and now both name the first tensor."""
    import torch

    first = next(((name, t) for name, t in [*model.named_parameters(), *model.named_buffers()]
                  if isinstance(t, torch.Tensor) and t.is_meta), None)
    if first is not None:
        from ..meta_device import refuse_meta

        refuse_meta(first[1], f"save_pretrained: the model's {first[0]}",
                    "build the model off the meta device (or load its weights: from_pretrained, load_adopted, "
                    "to_empty and init), then save it; nothing was written")


def _refuse_meta_tensors(state_dict: dict) -> None:
    """UserError naming the first tensor of a given ``state_dict`` on the meta device: ``model.norm.weight`` moved
    there was safetensors' raw "Cannot copy out of meta tensor; no data!" (issue 30 round 35, AI335)."""
    import torch

    from ..meta_device import refuse_meta

    for key, value in state_dict.items():
        if isinstance(value, torch.Tensor) and value.is_meta:
            refuse_meta(value, f"save_pretrained: state_dict[{key!r:.80}]",
                        "pass the tensors with values (model.state_dict() of a loaded model); nothing was written")


def _refuse_unknown_keywords(kwargs: dict, who: str) -> None:
    """UserError naming the keywords transformers' ``save_pretrained`` does not take: it gathers them in ``**kwargs``
    for the hub upload (``push_to_hub``, refused above), so ``bake_adopted(model, DIR, safe_serialisation=False)``, a
    typo of an option, was dropped without a word (issue 30 round 29, W165), as by ``save_pretrained`` itself. The
    keywords taken are read from transformers' own signature, so a new option is taken when transformers adds it."""
    import inspect

    from transformers import PreTrainedModel

    taken = [name for name, parameter in inspect.signature(PreTrainedModel.save_pretrained).parameters.items()
             if name not in ("self", "save_directory") and parameter.kind is not parameter.VAR_KEYWORD]
    if unknown := sorted(set(kwargs) - set(taken), key=str):
        shown = ", ".join(f"{name}={kwargs[name]!r:.30}" for name in unknown)
        raise UserError(f"{who}: {shown} {'is no keyword' if len(unknown) == 1 else 'are no keywords'} of "
                        f"save_pretrained, which would drop {'it' if len(unknown) == 1 else 'them'} without a word; "
                        f"check the spelling, or leave {'it' if len(unknown) == 1 else 'them'} out (the keywords it "
                        f"takes: {', '.join(taken)}); nothing was written")


def _check_generation_ids(model: Any) -> None:
    """UserError when ``model``'s generation settings name a token id outside its vocabulary, which its loader
    refuses (``configuration.check_generation_ids``): an adopted GPT-2 of 300 ids, built with GPT2Config's default
    bos/eos 50256, was saved without a word, and ``load_adopted`` then refused the folder, saving again writing the
    same (issue 30 round 23, U65). A length or sampling value no generation can use (max_length -5), which the loader
    refuses too (``generation_file``, round 25, Y514), likewise."""
    import types

    from .configuration import generation_id_problem
    from .generation_file import generation_value_problem
    from .generation_save import json_problem, saved_settings

    # the settings as the save writes them (round 34, AG390-AG396, AG399: numpy numbers, sequence_bias's tuple keys)
    owner = model
    model = types.SimpleNamespace(generation_config=saved_settings(getattr(model, "generation_config", None)),
                                  config=getattr(model, "config", None))
    if model.generation_config is not None and (problem := json_problem(model.generation_config)) is not None:
        name = problem.split(" ", 1)[0]
        raise UserError(f"save_pretrained: the model's generation_config: {problem}, which generation_config.json "
                        f"cannot hold; set model.generation_config.{name} to a number, text, list or dict of them, "
                        f"or None, then save; nothing was written")
    _check_transformers_validate(model.generation_config)
    if (problem := generation_id_problem(model)) is not None:
        name = problem.split(" ", 1)[0]
        why = ("generate could never stop at, or would read, an id the model does not have" if "not a token id" in
               problem else "laid out as generate cannot read it")  # bad_words_ids [[]] (round 33, AE200's kind)
        raise UserError(f"save_pretrained: the model's generation_config: {problem}, which its loader refuses "
                        f"({why}); set "
                        f"model.generation_config.{name} and model.config.{name} to the tokenizer's id, or None, "
                        f"then save; nothing was written")
    from .generate_needs import fixed_cache_problem

    problem = fixed_cache_problem(owner, model.generation_config) if model.generation_config is not None else None
    if (problem := generation_value_problem(model.generation_config) or problem) is not None:
        name = problem.split(" ", 1)[0]
        raise UserError(f"save_pretrained: the model's generation_config: {problem}, which its loader refuses; set "
                        f"model.generation_config.{name} to a usable value, or None, then save; nothing was written")


def _check_transformers_validate(generation: Any) -> None:
    """transformers' own check of a ``GenerationConfig`` at its save (``validate(strict=True)`` once changed since its
    load: ``top_k=5`` without ``do_sample``), its raw ValueError raised from inside the save turned into one line
    before anything is written (issue 30 round 34, met fixing AG390: a numpy top_k had been refused first)."""
    if generation is None or not callable(getattr(generation, "validate", None)):
        return
    try:
        generation.validate(strict=getattr(generation, "_original_object_hash", None) != hash(generation))
    except (ValueError, TypeError, AttributeError) as e:
        lines = [line.strip(" -") for line in str(e).splitlines() if line.strip().startswith("- ")]
        said = lines[0] if lines else str(e).splitlines()[0] if str(e) else type(e).__name__
        said = said.replace("`", "").rstrip(".")
        raise UserError(f"save_pretrained: the model's generation_config: {said}, which transformers refuses to "
                        f"save; change model.generation_config as it says, then save; nothing was written") from None


# save_pretrained's switches: a text such as 'no' is read as true
_SWITCHES = ("is_main_process", "save_peft_format", "save_original_format", "distributed_checkpoint")


def _check_save_options(kwargs: dict) -> None:
    """``save_pretrained``'s ``max_shard_size``, ``variant`` and switches, as ``check_save_arguments`` says."""
    from ..value_rules import check_switches, hub_token_problem

    if "max_shard_size" in kwargs:
        kwargs["max_shard_size"] = check_shard_size(kwargs["max_shard_size"])  # the dict save_owned is given
    check_variant(kwargs.get("variant"))
    check_switches("save_pretrained", **{name: kwargs[name] for name in _SWITCHES if name in kwargs})
    if (problem := hub_token_problem(kwargs.get("token"))) is not None:  # token=5 (round 35, AI330)
        raise UserError(f"save_pretrained: {problem}; pass the token's text, or leave token out (it is read only "
                        f"with push_to_hub)")


def check_shard_size(value: Any) -> Any:
    """UserError unless ``value`` is a size above zero (``"5GB"``, ``"500MB"``, or a byte count): a negative or zero
    size was taken as "as small as possible" and the export written as one-tensor shards, without a word (issue 30
    round 15, B248; every save path since round 22, S140, S420, S425). A text is read by huggingface_hub's own parser,
    which every save path hands it to: ``'1B'`` and ``'5GiB'`` passed a looser pattern here and ended in its raw
    "Unit '1B' not supported" (round 25, Y191). Returns ``value``, a numpy int as Python's: huggingface_hub reads
    any other number as text, and ``np.int64(1000)`` was refused here as no size (round 29, W575's kind)."""
    from huggingface_hub.serialization._base import parse_size_to_int

    from ..integers import as_int, is_integer

    value = as_int(value)
    number = value if is_integer(value) else None
    if isinstance(value, str):
        try:
            number = parse_size_to_int(value)
        except ValueError:
            number = None
    if number is None or number <= 0:
        raise UserError(f"max_shard_size must be a size above zero, such as '5GB' or '500MB' (or a byte count), got "
                        f"{value!r}; write it with a unit of KB, MB, GB or TB")
    return value


def check_variant(variant: Any) -> None:
    """UserError unless ``variant`` is None or a plain name (transformers puts it inside the weight files' names,
    ``model.VARIANT.safetensors``): ``variant='../x'`` ended in a raw FileNotFoundError naming a folder the caller
    never gave (issue 30 round 22, S421). One ending like a shard's name is refused too (``shard_like_variant``,
    round 33, AE22)."""
    from .weights_variant import variant_problem  # the rule the loaders hold a variant to (round 30, Y737, Y738)

    if (problem := variant_problem(variant)) is not None:
        raise UserError(f"save_pretrained: variant {problem}; pass a name without a path, or leave variant out")
    if (like := shard_like_variant(variant)) is not None:
        raise UserError(f"save_pretrained: variant {variant!r:.60} ends like a shard's name (-N-of-M), so its file "
                        f"{like} reads as a shard of variant {variant.rsplit('-', 3)[0]!r}, and the loaders' advice for "
                        f"it fails; choose a variant that does not end in -N-of-M (e.g. "
                        f"{variant.rsplit('-', 3)[0] + '_' + '_'.join(variant.rsplit('-', 3)[1:])!r}), or leave "
                        f"variant out")


def shard_like_variant(variant: Any) -> str | None:
    """The weight file name of ``variant`` (``model.x-1-of-1.safetensors``) when the variant ends like a shard's
    name, ``-N-of-M``; None otherwise. ``weights_variant.held_variants`` reads such a file as shard 1 of 1 of variant
    'x' (transformers' shard names are ``model.V-00001-of-00002.safetensors``), so a folder saved with
    ``variant='x-1-of-1'`` was told to load ``variant='x'``, which then found a shard without its index (issue 30
    round 33, AE22). Refused at the save, where the name is chosen."""
    import re

    if isinstance(variant, str) and re.search(r"-\d+-of-\d+$", variant):
        return f"model.{variant}.safetensors"
    return None


def _refuse_extra_tensors(model: Any, state_dict: dict) -> None:
    """UserError when ``state_dict`` holds tensors ``model`` has no place for, which its loader would drop (the keys
    the model ignores on load, such as an adopted model's baked table, aside): see ``check_save_arguments``."""
    import re

    ignored = [re.compile(p) for p in (getattr(model, "_keys_to_ignore_on_load_unexpected", None) or ())]
    extra = sorted(k for k in set(state_dict) - set(model.state_dict()) if not any(p.search(k) for p in ignored))
    if extra:
        from ..eval.weight_names import shown_names

        raise UserError(f"save_pretrained: state_dict holds {len(extra)} tensor(s) the model has no place for "
                        f"({shown_names(extra)}): the folder would look like a save its loader refuses; pass the "
                        f"model's own state_dict (or none: model.state_dict() is saved), nothing was written")


SAVE_TEMP = ".save_pretrained.tmp-"  # + PID-XXXXXXXX: save_whole's folder inside save_directory (round 24)


def save_whole(save: Callable[[str], Any], save_directory: str | os.PathLike, variant: str | None = None) -> Any:
    """``save(folder)`` (transformers' ``save_pretrained``) into ``save_directory`` after ``check_save_directory``,
    whole or not at all (see Footgun 2 above): written into a hidden temporary folder inside it, published
    (``io.publish``: the umask's modes) and put in place all or none (``_move_in``, round 22); weights an earlier save
    recorded that this one did not write (another shard count) are removed with it, under the folder's exclusive lock,
    which the loaders' reads wait for (``swap_lock``, round 23, U515). On any failure, Ctrl-C included, the
    temporary folder and the folders this call made are removed; a storage failure is an ``errors.StorageError``. A
    sharded save's index records the digests of its weight map and shards (``shard_index.record_shards``), which the
    loaders check (round 25, Y509-Y512); an adopted whole-file save's config.json its weights file's
    (``weights_digest.record_weights``, round 27, S475). ``variant``: the save's ``variant``, whose earlier weights
    are the ones replaced (``_earlier_weights``); weights of other variants are kept only under the same config.json
    (``_refuse_other_settings``)."""
    from ..io import publish
    from ..locking import missing_folders, remove_if_empty
    from ..stop_signals import held_stops
    from ..storage import api_writes
    from ..swap_lock import swapping
    from ..dead_writers import remove_killed
    from .shard_index import record_shards
    from .save_record import record_save
    from .weights_digest import keep_earlier_variants, record_weights

    if not callable(save):  # round 22: "'int' object is not callable" from inside the staging
        raise UserError(f"save_whole: save: expected a function writing a model into the folder it is given (such as "
                        f"model.save_pretrained), got {save!r:.60}; pass one")
    check_save_directory(save_directory, "save_pretrained")
    out = Path(save_directory)
    with api_writes("save_pretrained", out), contextlib.ExitStack() as held:
        created = missing_folders(out)  # the folders this call makes, innermost first (as a folder lock's)
        tmp = None
        try:
            # first (it makes the folder): a bad name or place fails before the model is written; released last, it
            # removes the folders it made when the save failed
            held.enter_context(_one_save_at_a_time(out))
            remove_killed(out, SAVE_TEMP, out, MODEL_FOLDER_FILES, "a save_pretrained")  # a killed save's whole-looking model (W539's kind)
            tmp = Path(tempfile.mkdtemp(prefix=f"{SAVE_TEMP}{os.getpid()}-", dir=out))
            result = save(str(tmp))
            record_shards(tmp)  # a sharded save's index records its shards, checked on load (round 25, Y509-Y512)
            record_weights(tmp)  # an adopted whole-file save's config.json its weights (round 27, S475)
            # other variants kept (round 31, AA751); only this save's variant's earlier weights replaced (round 32,
            # AC289, AC419, AC422: a variant='v2' save deleted the folder's model.safetensors)
            replaced = _earlier_weights(out, variant)
            _refuse_other_settings(tmp, out, replaced)  # round 33, AE299-AE304
            keep_earlier_variants(tmp, out, replaced)
            record_save(tmp, out, replaced)  # a native save's files' digests (round 35, AI57, AI64, AI497)
            publish(tmp)
            # a Ctrl-C among the renames would leave a mix of two saves, and a load among them read one (U515)
            with swapping(out), held_stops(deliver_after=True):
                _move_in(tmp, out, replaced)
            return result
        except BaseException as e:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            remove_if_empty(created)
            raise _failure_as_asked(e, tmp, out) from None


def _one_save_at_a_time(out: Path) -> contextlib.AbstractContextManager:
    """The lock of ``out`` (``out/.lock``, taken as the locked verbs take theirs, ``locking.folder_lock``), which the
    save holds until its files are in place: two processes saving into one folder at once both returned, one save
    replaced by the other without a word (issue 30 round 25, Y499, Y500). The second is refused at once, naming the
    first, as the export writers refuse a second (round 24, W545): waiting would only let it replace the first's save
    the moment it is made. The lock lives inside the folder (saved in place, as a run's or a sweep's ``.lock``), so
    the folder's name needs no room for a longer one beside it; ``ownership`` counts a lock file among no folder's
    files. A lock file a read-only or full disk refuses is named as the folder asked for (``_failure_as_asked``)."""
    from ..locking import folder_lock

    return folder_lock(out, "save_pretrained", "save into another folder", who="save_pretrained")


def _failure_as_asked(e: BaseException, tmp: Path | None, out: Path) -> BaseException:
    """``e``, a failed write (``storage.storage_oserror``: safetensors' own class too), as an OSError naming the path
    inside ``save_directory`` rather than the temporary folder; anything else as it was."""
    from ..storage import as_asked, storage_oserror

    failed = storage_oserror(e, out) if isinstance(e, Exception) else None
    if failed is None or failed.errno is None:
        return e
    return OSError(failed.errno, failed.strerror, os.fspath(as_asked(failed.filename, tmp, out) if tmp else out))


def _move_in(tmp: Path, out: Path, replaced: list[str]) -> None:
    """Rename every file of ``tmp`` into ``out`` and remove ``out``'s weights of an earlier save that this one did not
    write, all or none (``replace_together``: a file that cannot be replaced, immutable or a folder in its place,
    left the new weights beside the earlier config.json, round 22, S21, S368, S371); then remove ``tmp``."""
    from ..replace_together import replace_together

    names = sorted(os.listdir(tmp), key=lambda name: name == "config.json")
    stale = [out / name for name in replaced if name not in names]
    earlier = tmp / ".earlier"
    earlier.mkdir()
    replace_together([(tmp / name, out / name) for name in names], aside=lambda target: earlier / target.name,
                     remove=stale)
    shutil.rmtree(tmp, ignore_errors=True)


# an unsharded save's weights and a sharded save's record: transformers 5 writes safetensors only, so a
# pytorch_model.bin in the folder is no save's own (a user's torch.save was deleted by a re-save, round 33, AE24)
_WEIGHT_FILES = ("model.safetensors",)
_INDEX_FILES = ("model.safetensors.index.json",)
# every weights file or index a loader reads, of any variant and either format: what other settings must not reach
_LOADABLE = LOADABLE


def _earlier_weights(out: Path, variant: str | None) -> list[str]:
    """The weight files of ``out`` that an earlier ``save_pretrained`` of ``variant`` (None: the default weights) wrote:
    an unsharded save's weights, its index and the shards the index names. A glob of weight names
    (``model-*.safetensors``, ``pytorch_model*.bin``) removed a user's own ``model-mine.safetensors`` and
    ``pytorch_model_backup.bin`` on a rerun (round 22, S485): only a name the earlier save recorded (and a weight's
    name at that) is its own. Another variant's weights are not this save's to replace: taking the default weights as
    the earlier save's whatever the variant, a save with variant='v2' deleted the folder's model.safetensors, and a
    whole v1 save left a sharded v1 beside it (issue 30 round 32, AC289, AC419, AC422, AC421). The variant is the one
    the caller gave, not read back from the names written: 'ckpt-1-of-3' reads as a shard of 'ckpt' (round 33, AE4,
    AE19)."""
    from .weights_variant import with_variant

    shard = f"model.{variant}-*.safetensors" if variant else "model-*.safetensors"
    whole = {with_variant(name, variant) for name in _WEIGHT_FILES}
    indexes = {with_variant(name, variant) for name in _INDEX_FILES}
    own = {name for name in whole | indexes if (out / name).is_file()}
    for index in own & indexes:
        try:
            weight_map = json_text.read_file(out / index).get("weight_map")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(weight_map, dict):
            own |= {name for name in weight_map.values() if isinstance(name, str) and os.path.basename(name) == name
                    and fnmatch.fnmatch(name, shard)}
    return sorted(name for name in own if (out / name).is_file())


def _refuse_other_settings(tmp: Path, out: Path, replaced: list[str]) -> None:
    """UserError, before anything in ``out`` changes, when ``out`` holds weights this save keeps (another variant's,
    or the default weights beside a variant save) and this save's config.json (in ``tmp``) says other settings than
    the folder's: the folder's one config.json is what every weights file in it loads under, so a variant saved by a
    model of rms_norm_eps 1e-2 made the default weights load under 1e-2 (other logits, no word), and a
    LeviathanForCausalLM variant saved into an adopted folder left neither loading (issue 30 round 33, AE299, AE301,
    AE303, AE304). The weights-digest record (``weights_digest.RECORD``) is the save's own and not compared."""
    from .weights_digest import RECORD

    kept = sorted(name for name in os.listdir(out) if _LOADABLE.match(name) and name not in replaced
                  and (out / name).is_file())
    if not kept or not (out / "config.json").is_file() or not (tmp / "config.json").is_file():
        return
    try:
        earlier = json_text.read_file(out / "config.json")
    except (OSError, ValueError):
        earlier = None
    new = json_text.read_file(tmp / "config.json")
    if isinstance(earlier, dict) and ({k: v for k, v in earlier.items() if k != RECORD}
                                      == {k: v for k, v in new.items() if k != RECORD}):
        return
    differ = sorted(k for k in {*(earlier or {}), *new} - {RECORD}
                    if not isinstance(earlier, dict) or earlier.get(k) != new.get(k))
    shown = ", ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
    said = (f"its config.json differs in {', '.join(differ[:4])}" if isinstance(earlier, dict) else
            "its config.json is not one this save can read")
    raise UserError(f"save_pretrained: {str(out)!r} holds {shown}, weights this save keeps, and {said}: the folder's "
                    f"one config.json would then describe them with this model's settings, so they would load as "
                    f"another model; nothing was written; save into another folder, or move {shown} out first")


def refuse_adopted(folder: Path) -> None:
    """UserError sending an adopted model's folder (config.json of its original ``model_type`` with
    ``leviathan_generator``) to ``load_adopted``: ``LeviathanForCausalLM.from_pretrained`` of one said "config.json
    was edited or comes from another model" of a folder nobody edited (issue 30 round 20, M301)."""
    try:
        config = json_text.read_file(folder / "config.json")
    except (OSError, ValueError):
        return
    if isinstance(config, dict) and config.get("leviathan_generator") and config.get("model_type") != "leviathan":
        raise UserError(f"{str(folder)!r} is an adopted model ({config.get('model_type')!r} with leviathan_generator "
                        f"in its config.json), not a leviathan export; load it with "
                        f"leviathan.hf.load_adopted({str(folder)!r})")


def refuse_other_model_type(folder: Path) -> None:
    """UserError when ``folder``'s config.json is a model of another ``model_type`` than leviathan's: a
    ``bake_adopted`` output (a plain ``llama`` folder) loaded into ``LeviathanForCausalLM`` with its trained table
    dropped as unexpected and a random generator built, only transformers' "model of type llama to instantiate a
    model of type leviathan" line and its LOAD REPORT said so (issue 30 round 21, P464). An adopted folder is named
    first (``refuse_adopted``)."""
    try:
        config = json_text.read_file(folder / "config.json")
    except (OSError, ValueError):
        return
    kind = config.get("model_type") if isinstance(config, dict) else None
    if isinstance(kind, str) and kind != "leviathan":
        raise UserError(f"{str(folder)!r} holds a {kind!r} model (config.json's model_type), not a leviathan export: "
                        f"LeviathanForCausalLM would drop its weights and draw its own at random; load it with "
                        f"transformers.AutoModelForCausalLM.from_pretrained({str(folder)!r}) (what bake_adopted "
                        f"writes), and leviathan.hf.adopt(model, fit=Fit(...)) to start a generator from its table")


def save_keywords(args: tuple, kwargs: dict, who: str = "save_pretrained") -> dict:
    """``save_pretrained``'s arguments after ``save_directory`` as keywords, bound to transformers' own signature:
    the checks read keywords only, so a ``variant`` of '../x' given by position reached transformers (a raw
    FileNotFoundError naming the save folder), and the adopted class's state_dict given by position was handed on
    twice (a raw TypeError) (issue 30 round 33, AE1, AE18). Too many positional arguments, or one given twice, are a
    UserError in ``who``'s words."""
    import inspect

    from transformers import PreTrainedModel

    try:
        bound = inspect.signature(PreTrainedModel.save_pretrained).bind(None, ".", *args, **kwargs)
    except TypeError as e:
        raise UserError(f"{who}: {e}; pass the options after the folder as keywords (variant=..., "
                        f"max_shard_size=...)") from None
    given = dict(bound.arguments)
    given.pop("self", None), given.pop("save_directory", None)
    return {**given.pop("kwargs", {}), **given}

"""An adopted model resumed by ``transformers.Trainer`` from a checkpoint folder holds that folder's own weights.

    resumed = check_trainer_resume()   # in load_state_dict: UserError when the Trainer's checkpoint weights are not its
                                       # save's (or its config.json is missing or not the adopted save's: round 31,
                                       # AA736, AA737; its settings edited: round 32, AC345, AC347, AC352)
    check_resumed_settings(model, resumed)   # the checkpoint's settings are the model's (round 32)

``Trainer.train(resume_from_checkpoint=...)`` reads ``model.safetensors`` itself and hands the tensors to the model's
``load_state_dict``; ``load_adopted`` checks the file against the sha256 its config.json records
(``weights_digest.check_weights``, round 27, S475), but this path skipped it: another run's checkpoint-2
model.safetensors (same shapes) copied over this run's was resumed without a word, the other run's weights going on
under this run's optimizer, scheduler and data position (issue 30 round 30, Y535). ``load_state_dict`` gets only the
tensors, so the folder is read from the Trainer's own frame (``Trainer._load_from_checkpoint``'s
``resume_from_checkpoint``): the one place transformers loads a checkpoint's weights file into a built model.
Footgun: it depends on that method's name and argument; a transformers that renames them resumes unchecked, as
before (tests/reliability/test_trainer_resume_weights_held_to_the_save.py notices).

Round 33: ``LeviathanForCausalLM`` resumes through the same frame (its own ``load_state_dict``:
``check_native_resume``), and both classes hold the checkpoint's trainer_state.json to ``check_trainer_state``.
Another run's optimizer.pt, scheduler.pt or trainer_state.json of the same step were read as this run's (issue 30
round 33, AE158, AE159, AE165): the Trainer writes them after the model's save, so config.json cannot record them;
``checkpoint_record`` writes a record of every file after the Trainer's save and both classes check it here.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from ..errors import UserError

_LOADER = "_load_from_checkpoint"  # transformers.Trainer's method that loads a checkpoint folder's weights file


def resumed_folder(depth: int = 2) -> Path | None:
    """The checkpoint folder ``transformers.Trainer._load_from_checkpoint`` is loading, when it is the caller
    ``depth`` frames up (``load_state_dict``'s caller); None otherwise."""
    frame = sys._getframe(depth)
    for _ in range(3):  # load_state_dict may be reached through a wrapper or two (torch's, accelerate's)
        if frame is None:
            return None
        if frame.f_code.co_name == _LOADER and frame.f_globals.get("__name__", "").startswith("transformers."):
            folder = frame.f_locals.get("resume_from_checkpoint")
            return Path(folder) if isinstance(folder, (str, os.PathLike)) and os.path.isdir(folder) else None
        frame = frame.f_back
    return None


def check_trainer_resume() -> tuple[Path, dict] | None:
    """UserError when ``Trainer`` is resuming this adopted model from a checkpoint folder whose whole weights file
    is not the one its config.json records (``weights_digest.check_weights``'s line: another save's file, or a
    record edited); nothing is loaded then. The folder's config.json must be the adopted save's, read as
    ``load_adopted`` reads it (``config_file.read_config_json``): a checkpoint without config.json, or whose
    config.json was '{"a": 1, "a": 2}' (a key twice, no ``leviathan_generator``), resumed without a word, the digest
    check skipped for want of a record, so any run's weights were taken (issue 30 round 31, AA736, AA737). Its
    ``leviathan_generator`` is held to the rules ``load_adopted`` holds it to (a mapping, its ``settings_sha256``
    theirs): null, a rank edited 4 -> 5 and an edited digest resumed without a word (issue 30 round 32, AC345, AC347,
    AC352). A folder without trainer_state.json (an adopted save, no checkpoint) is named before anything is loaded:
    the Trainer read it after loading the weights, transformers' raw FileNotFoundError (round 32, AC350). Returns the config.json and its settings, for ``check_resumed_settings``; None when no Trainer resumes."""
    from .config_file import read_config_json
    from .settings_digest import check_settings_mapping, check_stamp
    from .weights_digest import check_weights

    folder = resumed_folder(depth=3)
    if folder is None:
        return
    check_trainer_state(folder, "load_adopted(folder)")  # AC350; round 33, AE155-AE157
    config = folder / "config.json"
    fix = ("restore the checkpoint folder from a copy, or resume from another checkpoint "
           "(trainer.train(resume_from_checkpoint=FOLDER))")
    if not config.is_file():
        raise UserError(f"{str(config)!r} is missing, though an adopted model's save_pretrained writes it into every "
                        f"checkpoint with the sha256 of the weights saved with it, so weights of another run could not "
                        f"be told from this one's; {fix}")
    raw = read_config_json(config, fix)
    if "leviathan_generator" not in raw:
        raise UserError(f"{str(config)!r} is not an adopted model's config.json (it has no leviathan_generator), "
                        f"while the model resumed from it is adopted: config.json was edited or replaced, or the "
                        f"checkpoint is another model's; {fix}")
    settings = raw["leviathan_generator"]
    check_settings_mapping(settings, repr(str(config)))  # null, text, {}: round 32, AC345
    check_stamp(settings, repr(str(config)))  # a setting or the digest edited: round 32, AC347, AC352
    check_weights(folder, raw, None)
    return config, settings


def check_trainer_state(folder: Path, load: str) -> None:
    """UserError unless ``folder`` (a checkpoint the Trainer is resuming from) holds the trainer_state.json the
    Trainer reads right after the weights, as a JSON object whose ``global_step`` is a whole number >= 0. Asked by
    both classes' ``load_state_dict``, before anything is loaded: without it (a folder saved by save_pretrained) the
    resume ended in transformers' raw FileNotFoundError (round 32, AC350; the native class's, round 33, AE153); an
    empty file in json's raw "JSONDecodeError: Expecting value" (AE155); a folder of that name was said to be no file
    at all (AE156); a ``global_step`` of -3 resumed to step 6 without a word (AE157). ``load``: how the model is loaded
    from that folder, for the line's second fix."""
    from .. import json_text
    from ..errors import not_a_file

    state = folder / "trainer_state.json"
    if (problem := not_a_file(state)) is not None:  # a folder, a pipe, a dead link in its place (AE156)
        raise UserError(f"{str(state)!r} {problem}, where a Trainer checkpoint holds the trainer state (its step, "
                        f"log and schedule) as a file; restore the checkpoint folder from a copy, or resume from another "
                        f"checkpoint (trainer.train(resume_from_checkpoint=FOLDER))")
    if not state.is_file():  # the Trainer reads it next, as a raw FileNotFoundError (AC350, AE153)
        raise UserError(f"{str(folder)!r} is not a Trainer checkpoint (it has no trainer_state.json): a folder saved "
                        f"by save_pretrained holds the model, not the optimizer, schedule and step a resume goes on "
                        f"from; pass a checkpoint-N folder the Trainer wrote (trainer.train(resume_from_checkpoint="
                        f"FOLDER)), or start a new run from that model (trainer.train() of {load})")
    fix = ("the checkpoint is damaged: restore it from a copy, or resume from another checkpoint "
           "(trainer.train(resume_from_checkpoint=FOLDER))")
    try:
        raw = json_text.read_file(state, object_pairs_hook=json_text.no_repeats)
    except (OSError, ValueError) as e:  # an empty file (AE155)
        raise UserError(f"{str(state)!r} is not readable JSON ({e}); {fix}") from None
    step = raw.get("global_step") if isinstance(raw, dict) else None
    if not isinstance(raw, dict):
        raise UserError(f"{str(state)!r} is a JSON {type(raw).__name__}, not the object the Trainer writes; {fix}")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:  # -3 resumed to step 6 (AE157)
        shown = "has no global_step" if "global_step" not in raw else f"has global_step {step!r:.40}"
        raise UserError(f"{str(state)!r} {shown}, where the Trainer writes the whole number of steps done (0 or "
                        f"more); {fix}")
    named = re.fullmatch(r"checkpoint-(\d+)", Path(os.path.abspath(folder)).name)
    if named is not None and int(named.group(1)) != step:  # 2 or 10**6 in checkpoint-4 resumed (round 35, AI47, AI50)
        raise UserError(f"{str(state)!r} has global_step {step}, but the Trainer names each checkpoint after its step "
                        f"(this folder is checkpoint-{named.group(1)}): the file was edited or comes from another "
                        f"checkpoint; {fix}")
    history = raw.get("log_history", [])
    if not isinstance(history, list) or not all(isinstance(entry, dict) for entry in history):  # 'x': AI48
        raise UserError(f"{str(state)!r} has a log_history of {history!r:.40}, where the Trainer writes a list of "
                        f"log entries (objects) and appends to it at the next log; {fix}")
    size = raw.get("train_batch_size")  # 'x': transformers' raw TypeError at the resume (round 36, AK37)
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise UserError(f"{str(state)!r} has train_batch_size {size!r:.40}, where the Trainer writes the batch size "
                        f"it trained with (a whole number of 1 or more); {fix}")
    callbacks = raw.get("stateful_callbacks", {})  # 'x': transformers' raw TypeError (round 36, AK39)
    if not isinstance(callbacks, dict):
        raise UserError(f"{str(state)!r} has stateful_callbacks {callbacks!r:.40}, where the Trainer writes an object "
                        f"of its callbacks' states by name; {fix}")


def check_resume_checkpoint(checkpoint, output_dir=None) -> Path | None:
    """The checkpoint folder ``trainer.train(resume_from_checkpoint=checkpoint)`` would resume from, checked first;
    UserError in one line where transformers' own first lines would end in a raw error, before any code of the model
    runs (so no hook of ours can): a number (``resume_from_checkpoint=5``: "TypeError: expected str, bytes or
    os.PathLike object, not int", issue 30 round 33, AE163), a path holding a NUL ("Can't find a valid checkpoint"
    with the NUL unnamed, round 32, AC349), an empty or damaged config.json (json's raw JSONDecodeError, AC343), and
    what ``check_trainer_state`` names. ``True`` is the last checkpoint in ``output_dir`` (None when there is none, as
    a first run), ``False`` / None resume nothing. docs/USING.md section 5 says to call it before resuming."""
    from ..errors import missing
    from ..value_rules import check_read_path
    from .checkpoint_files import check_checkpoint_files
    from .checkpoint_record import check_checkpoint_record
    from .config_file import read_config_json

    fix = ("pass the path of a checkpoint-N folder the Trainer wrote, True for the last one in output_dir, or leave "
           "resume_from_checkpoint out")
    if output_dir is not None:  # 5 taken beside a checkpoint path (round 35, AI426)
        check_read_path("check_resume_checkpoint", "output_dir", output_dir, "pass the Trainer's output_dir")
        if os.path.exists(output_dir) and not os.path.isdir(output_dir):  # a file: "no checkpoint yet" (AI421)
            raise UserError(f"check_resume_checkpoint: output_dir {os.fspath(output_dir)!r} is a file, not a folder: "
                            f"no checkpoint can be there, and the Trainer's save into it would fail; pass the "
                            f"Trainer's output_dir (trainer.args.output_dir)")
    if checkpoint is None or checkpoint is False:
        return None
    if checkpoint is True:
        if output_dir is None:
            raise UserError(f"check_resume_checkpoint: checkpoint=True needs output_dir (the TrainingArguments' "
                            f"output_dir, where the Trainer looks for the last checkpoint); pass "
                            f"output_dir=trainer.args.output_dir")
        from transformers.trainer_utils import get_last_checkpoint

        # str(): numpy's text passed check_read_path and was get_last_checkpoint's raw TypeError (round 36, AK108)
        last = get_last_checkpoint(str(os.fspath(output_dir))) if os.path.isdir(output_dir) else None
        if last is None:
            return None
        checkpoint = last
    if isinstance(checkpoint, bool) or not isinstance(checkpoint, (str, os.PathLike)):
        raise UserError(f"check_resume_checkpoint: resume_from_checkpoint={checkpoint!r:.40} (of type "
                        f"{type(checkpoint).__name__}) is no checkpoint folder; {fix}")
    check_read_path("check_resume_checkpoint", "resume_from_checkpoint", checkpoint, fix)  # a NUL (AC349)
    folder = Path(checkpoint)
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.is_file() else missing(folder)
        raise UserError(f"check_resume_checkpoint: {str(folder)!r} {what}; {fix}")
    check_trainer_state(folder, "from_pretrained(folder), or load_adopted(folder) for an adopted model")
    if (folder / "config.json").exists() or os.path.lexists(folder / "config.json"):  # an empty one: AC343
        read_config_json(folder / "config.json", "restore the checkpoint folder from a copy, or resume from another "
                                                 "checkpoint")
    check_checkpoint_record(folder)  # round 33, AE158, AE159, AE165
    check_checkpoint_files(folder)  # without a record: removed or truncated files (round 35, AI52, AI60, AI61, AI66)
    return folder


def check_native_resume(model, state_dict=None) -> None:
    """UserError when ``Trainer`` is resuming a ``LeviathanForCausalLM`` from a checkpoint folder that is no
    checkpoint (``check_trainer_state``: no trainer_state.json was transformers' raw FileNotFoundError after the
    weights were loaded, issue 30 round 33, AE153), or whose config.json records settings other than the model's:
    ``generator_rank`` edited 4 -> 5 there resumed to step 6 without a word, the weights going on under a config.json
    that no longer describes them (AE164; round 32 left it, fix33c's "sibling not fixed"). The settings compared are
    the model's (``LeviathanConfig.to_model_config().resolved()``), so defaults written out or left implicit agree.
    Nothing is loaded on a refusal."""
    import dataclasses

    from ..config import ConfigError
    from .checkpoint_files import check_checkpoint_files
    from .checkpoint_record import check_checkpoint_record
    from .config_file import read_config_json

    folder = resumed_folder(depth=3)
    if folder is None:
        return
    check_trainer_state(folder, "LeviathanForCausalLM.from_pretrained(folder)")
    config = folder / "config.json"
    fix = ("restore the checkpoint folder from a copy, or resume from another checkpoint "
           "(trainer.train(resume_from_checkpoint=FOLDER))")
    if not config.is_file():
        raise UserError(f"{str(config)!r} is missing, though LeviathanForCausalLM's save_pretrained writes it into "
                        f"every checkpoint, so the settings its weights were trained under are unknown; {fix}")
    raw = read_config_json(config, fix)
    if "leviathan_generator" in raw or raw.get("model_type") != model.config.model_type:  # round 35, AI54
        raise UserError(f"{str(config)!r} is the config of another model class (model_type "
                        f"{raw.get('model_type')!r:.40}{', adopted' if 'leviathan_generator' in raw else ''}), not "
                        f"of the LeviathanForCausalLM being resumed: the checkpoint is another run's; resume it into "
                        f"the model it was saved from (load_adopted(checkpoint) for an adopted one), or {fix}")
    try:
        saved = type(model.config).from_dict(raw).to_model_config().resolved()
    except (ConfigError, UserError) as e:
        raise UserError(f"{str(config)!r} is not a config LeviathanConfig reads ({e}); {fix}") from None
    own = model.config.to_model_config().resolved()
    shown = _differences(dataclasses.asdict(saved), dataclasses.asdict(own))
    if shown:
        raise UserError(f"{str(config)!r} records settings other than those of the LeviathanForCausalLM being resumed "
                        f"({shown}): the checkpoint's weights were trained under its own, or its config.json was "
                        f"edited; resume into the model the checkpoint describes "
                        f"(LeviathanForCausalLM.from_pretrained(checkpoint)), or {fix.split(', or ')[0]}")
    check_checkpoint_record(folder)  # the optimizer, scheduler and state files the save recorded (round 33, AE158)
    check_checkpoint_files(folder)  # a truncated optimizer.pt without a record (round 35, AI66)
    _check_shapes(model, state_dict, folder)  # another class's weights without a record (round 35, AI56)


def _check_shapes(model, state_dict, folder: Path) -> None:
    """UserError when a tensor of the ``state_dict`` the Trainer read from ``folder``'s weights file has another
    shape than the model's tensor of that name: another model's model.safetensors copied into a checkpoint without a
    record was torch's raw "Error(s) in loading state_dict ... size mismatch" (issue 30 round 35, AI56). Reads
    shapes only."""
    if not isinstance(state_dict, dict):
        return
    own = model.state_dict()
    for key, value in state_dict.items():
        mine = own.get(key)
        if mine is not None and hasattr(value, "shape") and tuple(value.shape) != tuple(mine.shape):
            raise UserError(f"{str(folder)!r}: its weights file holds {key} of shape {tuple(value.shape)}, where the "
                            f"{type(model).__name__} being resumed has {tuple(mine.shape)}: the weights are another "
                            f"model's (copied in, or another run's); restore the checkpoint folder from a copy, or "
                            f"resume from another checkpoint (trainer.train(resume_from_checkpoint=FOLDER))")


def check_resumed_settings(model, resumed: tuple[Path, dict] | None) -> None:
    """UserError when the generator settings a resumed checkpoint's config.json records (``check_trainer_resume``'s
    ``resumed``) are not those of the ``model`` being resumed: the Trainer loads the weights alone, so weights trained
    under one ``ln_eps`` or ``base`` would go on under another without a word (issue 30 round 32, AC347's kind).
    ``_refuse_other_generator`` names a difference of shapes first (round 24, W636); this is the rest. Last, the
    checkpoint's files are held to their record (``checkpoint_record``; round 33, AE158, AE159, AE165)."""
    from .checkpoint_files import check_checkpoint_files
    from .checkpoint_record import check_checkpoint_record
    from .settings_digest import DIGEST_KEY

    if resumed is None:
        return
    config, saved = resumed
    own = getattr(model.config, "leviathan_generator", None)

    def plain(settings: dict) -> dict:
        return json.loads(json.dumps({k: v for k, v in settings.items() if k != DIGEST_KEY}, default=str))

    shown = _differences(plain(saved), plain(own)) if isinstance(own, dict) else ""
    if shown:
        raise UserError(f"{str(config)!r} records generator settings (leviathan_generator) other than those of the "
                        f"{type(model).__name__} being resumed ({shown}): the checkpoint's weights were trained under "
                        f"its own; resume into a model adopted with them (load_adopted(checkpoint)), or resume from "
                        f"another checkpoint")
    check_checkpoint_record(config.parent)  # the optimizer, scheduler and state files the save recorded (AE158)
    check_checkpoint_files(config.parent)  # a truncated optimizer.pt without a record (round 35, AI66)


def _differences(theirs: dict, mine: dict) -> str:
    """The first four keys whose values differ between a checkpoint's settings (``theirs``) and the model's
    (``mine``), as "key=THEIRS there, MINE here" joined by commas; '' when none differ."""
    differ = sorted(k for k in theirs.keys() | mine.keys() if theirs.get(k) != mine.get(k))
    return ", ".join(f"{k}={theirs.get(k)!r} there, {mine.get(k)!r} here" for k in differ[:4])

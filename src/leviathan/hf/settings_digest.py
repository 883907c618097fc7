"""The sha256 of an adopted model's generator settings, written beside them in config.json and checked on load.

    stamp(settings)                              # settings["settings_sha256"] = the digest of the others
    check_stamp(settings, "ad/config.json")      # UserError when the others were edited since the save

``leviathan_generator`` in config.json holds settings no weight can vouch for: ``ln_eps`` edited from 1e-5 to 1e-3
loaded without a word and gave logits up to 0.32 apart (issue 30 round 17, E169). ``save_pretrained`` now records
the digest of the settings it saved, and ``load_adopted`` refuses settings that no longer match it. Settings without
the digest are refused too: its absence switched the check off, and ``ln_eps`` edited with the digest taken out loaded
without a word (issue 30 round 21, P305); every ``save_pretrained`` writes it. Footgun: transformers' own fields (``rms_norm_eps``) are
transformers' to trust, as every HF model folder does; this covers what leviathan adds.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..errors import UserError

DIGEST_KEY = "settings_sha256"


def settings_digest(settings: dict[str, Any]) -> str:
    """sha256 of ``settings`` without the digest itself, as JSON with sorted keys (a float as it round-trips)."""
    plain = {k: v for k, v in settings.items() if k != DIGEST_KEY}
    return hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()


def stamp(settings: dict[str, Any]) -> None:
    """Record the digest of ``settings`` in them (``save_pretrained``, before config.json is written)."""
    settings[DIGEST_KEY] = settings_digest(settings)


def check_stamp(settings: dict[str, Any], where: str) -> None:
    """UserError when ``settings`` (read back from ``where``) record no digest, or one that is not theirs."""
    recorded = settings.get(DIGEST_KEY)
    if recorded is None:
        raise UserError(f"{where}: the generator settings (leviathan_generator) lack their {DIGEST_KEY}, which "
                        f"save_pretrained writes with them, so an edited value could not be told from the saved one: "
                        f"config.json was edited; restore it from a copy, or load the weights without the generator "
                        f"(transformers.AutoModelForCausalLM.from_pretrained) and adopt them again")
    if recorded != settings_digest(settings):
        raise UserError(f"{where}: the generator settings (leviathan_generator) are not the ones save_pretrained "
                        f"wrote (their {DIGEST_KEY} is {str(recorded)[:16]}..., theirs now "
                        f"{settings_digest(settings)[:16]}...): a value was edited, and the weights were trained with "
                        f"the saved one; restore config.json from a copy (or put the saved value back)")


def check_settings_mapping(settings: Any, where: str = "the model's config") -> None:
    """UserError unless ``settings`` (config.leviathan_generator as read back) is a mapping: a hand-edited config.json
    holding text there ended in an AttributeError traceback (issue 30 round 6), and ``[]`` was "not an adopted model
    (no leviathan_generator)", whose fix loads the weights without their generator (round 21, P308): a value that is
    no mapping, or one holding nothing, is a damaged config.json. Its values are checked by the generator itself
    (``adoption._build_generator``). Here, not in adoption, so that ``trainer_resume`` holds a resumed checkpoint's
    settings to it too (issue 30 round 32, AC345) without an import circle."""
    if not isinstance(settings, dict) or not settings:
        raise UserError(f"{where}: leviathan_generator is {settings!r:.60}, not the mapping of generator settings "
                        "that adopt writes (config.json was edited or damaged); restore config.json from a copy, or "
                        "adopt the original model again")

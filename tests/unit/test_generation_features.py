"""The allow-list of generation features (``hf.generation_features``, issue 30 round 34): every field of transformers'
``GenerationConfig`` is classified, so a transformers release that adds one fails here until it is classified
(supported, with its rule, or refused), and the surface cannot grow unseen."""

from __future__ import annotations

from leviathan.hf.generation_features import BOOKKEEPING, REFUSED, SUPPORTED, feature_problem


def test_every_generation_config_field_is_classified_supported_or_refused():
    from transformers import GenerationConfig

    fields = {name for name in vars(GenerationConfig()) if not name.startswith("_")}
    unclassified = fields - SUPPORTED - set(REFUSED) - BOOKKEEPING
    assert not unclassified, f"classify these GenerationConfig fields in hf/generation_features.py: {unclassified}"
    assert not SUPPORTED & set(REFUSED)
    assert all(getattr(GenerationConfig(), name) is None for name in REFUSED)  # the default is None: "not set"


def test_a_refused_feature_is_named_and_its_off_value_is_not():
    assert feature_problem({"prefill_chunk_size": 4}.get) == (
        "prefill_chunk_size=4 asks for chunked prefill, which leviathan's classes do not support")
    assert "continuous batching" in feature_problem({"cache_implementation": "paged"}.get)
    for off in ({"low_memory": False}, {"num_beam_groups": 1}, {"cache_implementation": "dynamic"}, {}):
        assert feature_problem(off.get) is None, off
    assert feature_problem({"low_memory": 0}.get) is not None  # 0 is no switch's off: the switch rule's to name

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


def test_an_off_value_of_another_kind_is_named_as_such_not_as_a_request():
    """Round 35 (AI280, AI282, AI283, AI285, AI302-AI304): ``diversity_penalty=0.0`` and ``penalty_alpha=0.0`` (no
    penalty: float fields, transformers 4's written defaults) were "asks for group beam search" / "contrastive
    search", in generate, in generation_config.json at load and at save; ``low_memory=0`` or ``'False'`` and
    ``num_beam_groups=1.0`` were called requests for the feature. A number equal to a penalty's off value is off; a
    value of another kind is named as that kind (``_kind_problem``), an ``ArgumentTypeError`` in generate."""
    import types

    import pytest

    from leviathan.errors import ArgumentTypeError
    from leviathan.hf.generation_features import check_generate_features

    for off in ({"diversity_penalty": 0.0, "num_beam_groups": 1}, {"penalty_alpha": 0.0}, {"penalty_alpha": 0}):
        assert feature_problem(off.get) is None, off
    for given, said in ((dict(low_memory=0), "low_memory=0 is not True or False"),
                        (dict(low_memory="False"), "low_memory='False' is not True or False"),
                        (dict(num_beam_groups=1.0), "num_beam_groups=1.0 is not a whole number"),
                        (dict(penalty_alpha="0"), "penalty_alpha='0' is not a number")):
        assert feature_problem(given.get).startswith(said), given
        assert "asks for" not in feature_problem(given.get)
        model = types.SimpleNamespace(generation_config=None)
        with pytest.raises(ArgumentTypeError, match=said):
            check_generate_features(model, "M.generate", None, given)
    model = types.SimpleNamespace(generation_config=types.SimpleNamespace(penalty_alpha=0.0, diversity_penalty=0.0))
    check_generate_features(model, "M.generate", None, {})  # the model's settings at their off values: nothing
    assert "asks for contrastive search" in feature_problem({"penalty_alpha": 0.6}.get)

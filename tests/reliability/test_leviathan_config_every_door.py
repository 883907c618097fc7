"""Every way a ``LeviathanConfig`` changes holds its values to one rule (issue 30 round 33): the tie derived from
the embedding by each door (``update_from_string``, ``from_dict`` / ``from_pretrained`` keywords left it False:
AE104, AE130, AE339, AE340, AE345; a contradicting tie_word_embeddings dropped: AE343), transformers' own fields
held to what it reads (model_type 'llama', architectures 5, id2label 5: AE94, AE97, AE128, AE129, AE252), from_dict's
switch and a tensor keyword (AE108, AE347), a push to an unreachable Hub (AE260) and from_json_file's lines (AE110-
AE115). Round 35: a tie given by any door, the constructor and the attribute included, held to the embedding
(AI69, AI72, AI73, AI75, AI76, AI87, AI93); labels that are no names (AI387). In-process, no model built except one tiny one for the head's tie.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

from leviathan.config import ConfigError
from leviathan.errors import UserError
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

pytestmark = [pytest.mark.reliability]

SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, generator_seed_dim=8,
             generator_modes=2, generator_knots=8, generator_rank=4)


def _from_string(c):
    c.update_from_string("embedding=dense_tied")
    return c


def _from_pretrained(c, tmp_path):
    c.save_pretrained(tmp_path / "c")
    return LeviathanConfig.from_pretrained(tmp_path / "c", embedding="dense_tied")


@pytest.mark.parametrize("door", ["update", "update_from_string", "from_dict", "from_pretrained", "attribute"])
def test_dense_tied_ties_the_head_by_every_door(door, tmp_path):
    """AE104, AE130 (update_from_string), AE339, AE345 (from_dict's keyword), AE340 (from_pretrained's)."""
    c = LeviathanConfig(**SMALL)
    if door == "update":
        c.update({"embedding": "dense_tied"})
    elif door == "update_from_string":
        c = _from_string(c)
    elif door == "from_dict":
        c = LeviathanConfig.from_dict(c.to_dict(), embedding="dense_tied")
    elif door == "from_pretrained":
        c = _from_pretrained(c, tmp_path)
    else:
        c.embedding = "dense_tied"
    assert (c.embedding, c.tie_word_embeddings) == ("dense_tied", True)
    if door == "from_dict":  # the model of that config ties its head (AE345)
        model = LeviathanForCausalLM(c)
        assert model.lm_head.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    c.update({"embedding": "leviathan"})
    assert c.tie_word_embeddings is False


@pytest.mark.parametrize("change", ["update", "update_from_string", "from_dict"])
def test_a_tie_contradicting_the_embedding_is_refused(change):
    """AE343: update({'embedding': 'dense_tied', 'tie_word_embeddings': False}) dropped the False without a word."""
    c = LeviathanConfig(**SMALL)
    before = c.to_dict()
    with pytest.raises(ConfigError, match=r"tie_word_embeddings=False contradicts embedding='dense_tied' \(tying is "
                                          r"derived from the embedding"):
        if change == "update":
            c.update({"embedding": "dense_tied", "tie_word_embeddings": False})
        elif change == "update_from_string":
            c.update_from_string("embedding=dense_tied,tie_word_embeddings=false")
        else:
            LeviathanConfig.from_dict(c.to_dict(), embedding="dense_tied", tie_word_embeddings=False)
    assert c.to_dict() == before


@pytest.mark.parametrize("door", ["constructor", "from_dict", "for_model", "attribute", "attribute_number",
                                  "from_pretrained"])
def test_a_tie_given_by_any_door_is_held_to_the_embedding(door, tmp_path):
    """Round 35, AI69 (the constructor), AI73 (from_dict's dict), AI75 (AutoConfig.for_model): a False given beside
    'dense_tied' was dropped; AI72, AI93 (the attribute, False or 0): kept, so the model had an untied head and its
    save did not load (AI87). Each is one ConfigError line; an agreeing tie, and the tie given after its embedding,
    are taken."""
    import transformers

    said = r"tie_word_embeddings(=False contradicts embedding='dense_tied'| must be True or False, got 0)"
    given = {**SMALL, "embedding": "dense_tied", "tie_word_embeddings": False}
    c = LeviathanConfig(**SMALL, embedding="dense_tied")
    with pytest.raises(ConfigError, match=said) as e:
        if door == "constructor":
            LeviathanConfig(**given)
        elif door == "from_dict":
            LeviathanConfig.from_dict(given)
        elif door == "for_model":
            transformers.AutoConfig.for_model("leviathan", **given)
        elif door == "from_pretrained":
            c.save_pretrained(tmp_path / "c")
            LeviathanConfig.from_pretrained(tmp_path / "c", tie_word_embeddings=False)
        else:
            c.tie_word_embeddings = 0 if door == "attribute_number" else False
    assert "\n" not in str(e.value) and "config.json" not in str(e.value)
    assert c.tie_word_embeddings is True
    assert LeviathanConfig(**{**given, "tie_word_embeddings": True}).tie_word_embeddings is True
    plain = LeviathanConfig(**SMALL)
    plain.update({"tie_word_embeddings": True, "embedding": "dense_tied"})
    assert plain.tie_word_embeddings is True


def test_a_tie_given_as_text_is_named_as_no_switch():
    """AI76: tie_word_embeddings='yes' was read as True and refused as needing 'dense_tied'."""
    with pytest.raises(ConfigError, match=r"^tie_word_embeddings must be True or False, got 'yes'; it is derived"):
        LeviathanConfig(**SMALL, tie_word_embeddings="yes")


@pytest.mark.parametrize("key, value, said", [
    ("model_type", "llama", r"model_type 'llama' is not this config's: a LeviathanConfig is model_type 'leviathan'"),
    ("architectures", 5, r"architectures must be a list of model class names .* or None, got 5"),
    ("id2label", 5, r"id2label must be a dict .* or None, got 5"),
    ("label2id", 5, r"label2id must be a dict .* or None, got 5"),
    ("id2label", {0: 5}, r"id2label must map label ids \(whole numbers\) to label names \(text\), got '?0'?: 5"),  # AI387
    ("label2id", {"a": "b"}, r"label2id must map label names \(text\) to label ids .*, got 'a': 'b'"),  # AI387
])
def test_transformers_fields_are_held_to_what_transformers_reads(key, value, said, tmp_path):
    """AE94, AE128 (model_type 'llama' kept, config.json saying 'leviathan'), AE97, AE129 (architectures 5 saved and
    read back), AE252 (id2label 5: transformers' raw AttributeError); round 35, AI387 (id2label {0: 5}, a number as
    a label's name, stored and saved without a word)."""
    c = LeviathanConfig(**SMALL)
    before = c.to_dict()
    with pytest.raises(ConfigError, match=rf"^update: {said}.*nothing was changed"):
        c.update({key: value})
    assert c.to_dict() == before and c.model_type == "leviathan"
    with pytest.raises(ConfigError, match=said):
        LeviathanConfig.from_dict(c.to_dict(), **{key: value})
    if key != "model_type":
        with pytest.raises(ConfigError, match=said):
            LeviathanConfig(**SMALL, **{key: value})
        raw = c.to_dict() | {key: value}
        (tmp_path / "config.json").write_text(json.dumps(raw))
        with pytest.raises(ConfigError, match=said):
            LeviathanConfig.from_pretrained(tmp_path)


def test_from_dict_holds_its_switch_and_keyword_kinds():
    """AE108 (return_unused_kwargs='yes' read as true), AE347 (a 0-d tensor keyword: json's raw TypeError)."""
    d = LeviathanConfig(**SMALL).to_dict()
    with pytest.raises(UserError, match=r"^from_dict: return_unused_kwargs must be True or False, got 'yes'"):
        LeviathanConfig.from_dict(dict(d), return_unused_kwargs="yes", foo=1)
    with pytest.raises(ConfigError, match=r"^LeviathanConfig: hidden_size=tensor\(32\) is a Tensor, not a value "
                                          r"config\.json can hold; pass a plain Python value \(tensor\.item\(\)"):
        LeviathanConfig.from_dict(dict(d), hidden_size=torch.tensor(32))
    assert LeviathanConfig.from_dict(dict(d), return_unused_kwargs=True, foo=1)[1] == {"foo": 1}


def test_a_push_to_an_unreachable_hub_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    """AE260: save_pretrained(push_to_hub=True) offline was httpx's raw ConnectError, an empty folder left behind.
    The Hub is made unreachable here (no network is asked in the test)."""
    import transformers.configuration_utils as cu

    class Offline:
        def create_repo(self, *args, **kwargs):
            raise ConnectionError("[Errno -2] Name or service not known")

    monkeypatch.setattr(cu, "hf_api", lambda *a, **k: Offline())
    with pytest.raises(UserError, match=r"^save_pretrained\(push_to_hub=True\): the Hugging Face Hub could not be "
                                        r"reached \(ConnectionError: .*\); nothing was written: save without "
                                        r"push_to_hub") as caught:
        LeviathanConfig(**SMALL).save_pretrained(tmp_path / "ph1", push_to_hub=True)
    assert "\n" not in str(caught.value) and not (tmp_path / "ph1").exists()


def test_from_json_file_gives_each_cause_its_fix(tmp_path):
    """AE110-AE113, AE115: every cause ended in "give each setting once (restore the file ...)", the fix of a key
    given twice; AE114: a NaN size named without the file."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "afile").write_text("x")
    (tmp_path / "u16.json").write_bytes("{}".encode("utf-16"))
    (tmp_path / "list.json").write_text("[1]")
    raw = LeviathanConfig(**SMALL).to_dict() | {"hidden_size": float("nan")}
    (tmp_path / "nan.json").write_text(json.dumps(raw))
    for name, said in [("fifo", r"named pipe .*; pass the path of a regular file \(config\.json as save_pretrained"),
                       ("afile/config.json", r"'.*afile' above it is a file, not a folder.*pass the path of a JSON "
                                             r"file\)$"),
                       ("", r"is a folder, not a file; pass the path of a JSON file\)$"),
                       ("u16.json", r"not UTF-8 text.*; restore the file from a copy, or export the checkpoint again"),
                       ("list.json", r"is a JSON list, not the object save_pretrained writes; restore the file"),
                       ("nan.json", r"nan\.json': model\.hidden_size must be a positive integer, got nan \(the file "
                                    r"was edited or damaged\); restore it from a copy")]:
        with pytest.raises((UserError, ConfigError), match=said) as caught:
            LeviathanConfig.from_json_file(tmp_path / name if name else tmp_path)
        assert "give each setting once" not in str(caught.value)

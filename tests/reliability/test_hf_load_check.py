"""``AutoModelForCausalLM.from_pretrained`` of an export whose config.json was edited (issue 30 round 15, A66): from
``embedding: leviathan`` to ``dense_tied`` it loaded with the generator's six tensors dropped as "unexpected" (a line
of transformers' load report that "can be ignored") and the input table tied to the head: a different model, no
error. The model class's from_pretrained now runs the weight-name check eval runs (``eval.weight_names``)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_from_pretrained_refuses_weights_its_edited_config_does_not_describe(exported, tmp_path):
    import leviathan.hf  # noqa: F401  (registers the Auto classes)
    from transformers import AutoModelForCausalLM

    from leviathan.errors import UserError

    edited = Path(shutil.copytree(exported, tmp_path / "D"))
    config = json.loads((edited / "config.json").read_text())
    assert config["embedding"] == "leviathan"
    config.pop("tie_word_embeddings", None)  # a coherent edit: tying follows the embedding (a contradiction is refused)
    (edited / "config.json").write_text(json.dumps({**config, "embedding": "dense_tied"}))
    with pytest.raises(UserError, match=r"are not the model its config\.json describes: .*which would be dropped"):
        AutoModelForCausalLM.from_pretrained(str(edited))
    assert AutoModelForCausalLM.from_pretrained(str(exported)) is not None  # the export as written loads


def test_from_pretrained_refuses_an_exports_edited_config_json(exported, tmp_path):
    """G210: an export whose config.json had rope_theta edited 10000 -> 500 loaded through
    ``LeviathanForCausalLM.from_pretrained`` (and AutoModelForCausalLM) and gave other logits, without a word, though
    the export's marker records config.json's sha256. It is refused naming the file and how to export again; the
    export as written loads, and a generation_config.json edited likewise is refused too."""
    import leviathan.hf  # noqa: F401  (registers the Auto classes)
    from transformers import AutoModelForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf.modeling import LeviathanForCausalLM

    edited = Path(shutil.copytree(exported, tmp_path / "e212"))
    config = json.loads((edited / "config.json").read_text())
    (edited / "config.json").write_text(json.dumps({**config, "rope_theta": 500.0}, indent=2))
    for load in (LeviathanForCausalLM.from_pretrained, AutoModelForCausalLM.from_pretrained):
        with pytest.raises(UserError, match=r"config\.json' is not the file `leviathan export` wrote there .*delete "
                                            r"the edited export and export the checkpoint again"):
            load(str(edited))
    shutil.copy2(exported / "config.json", edited / "config.json")
    generation = json.loads((edited / "generation_config.json").read_text())
    (edited / "generation_config.json").write_text(json.dumps({**generation, "eos_token_id": 7}))
    with pytest.raises(UserError, match=r"generation_config\.json' is not the file"):
        LeviathanForCausalLM.from_pretrained(str(edited))
    assert LeviathanForCausalLM.from_pretrained(str(exported)).config.rope_theta == config["rope_theta"]


def _adopted_folder(folder: Path, architecture: str | None = None) -> Path:
    """A tiny adopted Llama saved into ``folder`` (its recorded architecture edited when given)."""
    from transformers import LlamaConfig

    from leviathan.hf import adopt

    adopt(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                      max_position_embeddings=64), seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(folder)
    if architecture is not None:  # an edit made with its digest (E169), as save_pretrained of that class writes it
        from leviathan.hf.settings_digest import stamp

        config = json.loads((folder / "config.json").read_text())
        config["leviathan_generator"]["architecture"] = architecture
        stamp(config["leviathan_generator"])
        (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_load_adopted_of_a_weights_file_that_is_not_one_is_one_error(tmp_path):
    """G378, G380: an adopted folder whose model.safetensors holds the text 'hello', or nothing, ended in safetensors'
    raw "SafetensorError: header too small" from deep in transformers. It is one UserError naming the file."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    folder = _adopted_folder(tmp_path / "ad")
    for content in (b"hello\n", b""):
        (folder / "model.safetensors").write_bytes(content)
        with pytest.raises(UserError, match=r"model\.safetensors' does not read as a safetensors file .*; restore it "
                                            r"from a copy, or save the adopted model again"):
            load_adopted(folder)


def test_an_adopted_folder_recording_a_class_that_does_not_generate_is_refused(tmp_path):
    """G96, G97 (and G99 before them): an adopted folder whose recorded architecture was edited to
    LlamaForSequenceClassification or LlamaModel (with its digest, or in a folder saved before the digest) loaded as
    that class, the trained lm_head dropped for a head of random values, with only transformers' load report; G99's
    ``bake_adopted`` of it then wrote that class. ``adopt`` takes only a causal LM, so ``load_adopted`` refuses any
    other recorded class naming the one to put back; the folder as saved loads."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    for architecture in ("LlamaForSequenceClassification", "LlamaModel"):
        folder = _adopted_folder(tmp_path / architecture, architecture)
        with pytest.raises(UserError, match=rf"architecture is '{architecture}', which is no causal language model "
                                            r".*put the causal LM class it was saved as back \('LlamaForCausalLM'\)"):
            load_adopted(folder)
        config = json.loads((folder / "config.json").read_text())
        del config["leviathan_generator"]["settings_sha256"]  # as a folder saved before the digest (E169)
        (folder / "config.json").write_text(json.dumps(config))
        with pytest.raises(UserError, match="which is no causal language model"):
            load_adopted(folder)
    assert type(load_adopted(_adopted_folder(tmp_path / "ad"))).__name__ == "LeviathanLlamaForCausalLM"


def _native_folder(folder: Path, **edits) -> Path:
    """A tiny ``from_native(...).save_pretrained`` folder (no marker), its config.json edited with ``edits``."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native

    from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                     max_position_embeddings=64))).save_pretrained(folder)
    if edits:  # an edited config.json: the sharper checks name it before the save record would (save_record)
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, **edits}))
    return folder


@pytest.mark.parametrize("edit", [{"head_dim": 8}, {"vocab_size": 299}, {"num_key_value_heads": 2}])
def test_from_pretrained_of_weights_of_other_sizes_is_one_error(tmp_path, edit):
    """Round 20, M175, M178, M179: transformers' "RuntimeError: You set `ignore_mismatched_sizes` to `False`"
    traceback; now load_adopted's one line (M189)."""
    from leviathan.errors import UserError
    from leviathan.hf.modeling import LeviathanForCausalLM

    folder = _native_folder(tmp_path / "n", **edit)
    with pytest.raises(UserError, match=r"do not fit the sizes its config\.json gives .*restore config\.json"):
        LeviathanForCausalLM.from_pretrained(str(folder))


def test_from_pretrained_of_none_or_an_adopted_folder_names_it(tmp_path):
    """Round 20, M349: None was a hub connection error; M301: an adopted folder was "config.json was edited"."""
    from leviathan.errors import UserError
    from leviathan.hf.modeling import LeviathanForCausalLM

    with pytest.raises(UserError, match=r"from_pretrained: expected the path of a folder .*got None"):
        LeviathanForCausalLM.from_pretrained(None)
    adopted = _adopted_folder(tmp_path / "ad")
    with pytest.raises(UserError, match=r"is an adopted model \('llama' .*load_adopted\("):
        LeviathanForCausalLM.from_pretrained(str(adopted))


def test_from_pretrained_refuses_an_exports_weights_or_marker_of_another_export(finished_run, exported, tmp_path):
    """Round 20, M16, M14: an export with another export's model.safetensors (or marker) loaded the other weights
    under this card, no word: the marker's sha256 of the weights is checked, not only config.json's."""
    from reliability_support import cli

    from leviathan.errors import UserError
    from leviathan.hf.modeling import LeviathanForCausalLM

    other = tmp_path / "step2"
    assert cli(["export", finished_run / "checkpoints" / "step-00000002", other]).returncode == 0
    for name in ("model.safetensors", "leviathan_output.json"):
        swapped = Path(shutil.copytree(exported, tmp_path / f"swapped-{name}"))
        shutil.copy2(other / name, swapped / name)
        with pytest.raises(UserError, match=r"model\.safetensors' is not the file `leviathan export` wrote there"):
            LeviathanForCausalLM.from_pretrained(str(swapped))


def test_load_adopted_of_a_variant_save_or_a_config_with_fewer_layers(tmp_path):
    """Round 20, M9: a ``save_pretrained(variant='v1')`` folder was transformers' raw OSError; it names the variant.
    M190: config.json edited to fewer layers than the weights loaded a smaller model, layer 1 dropped; refused."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    folder = _adopted_folder(tmp_path / "ad")
    model = load_adopted(folder)
    model.save_pretrained(tmp_path / "v", variant="v1")
    with pytest.raises(UserError, match=r"saved with variant='v1' .*load_adopted\('.*', variant='v1'\)"):
        load_adopted(tmp_path / "v")
    assert load_adopted(tmp_path / "v", variant="v1") is not None
    from transformers import LlamaConfig  # _adopted_folder's model has 1 layer: one of 2 to cut down

    from leviathan.hf import adopt

    two = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      max_position_embeddings=64)
    adopt(two, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "l2")
    config = json.loads((tmp_path / "l2" / "config.json").read_text())
    (tmp_path / "l2" / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 1}))
    with pytest.raises(UserError, match=r"hold 9 tensor\(s\) .*has no place for \(model\.layers\.1\."):
        load_adopted(tmp_path / "l2")


@pytest.mark.parametrize("edit, said", [
    (lambda g: g.update(ln_eps=0.05), r"lack their settings_sha256, which save_pretrained writes"),
    (lambda g: g.update(table_std=5.0), r"lack their settings_sha256, which save_pretrained writes")])
def test_load_adopted_refuses_settings_without_their_digest(tmp_path, edit, said):
    """Round 21, P305: the settings digest taken out switched its check off: ln_eps or table_std edited with it
    loaded and ran without a word (the same edit with the digest kept was refused, E169)."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    folder = _adopted_folder(tmp_path / "ad")
    config = json.loads((folder / "config.json").read_text())
    del config["leviathan_generator"]["settings_sha256"]
    edit(config["leviathan_generator"])
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match=said + r".*restore it from a copy"):
        load_adopted(folder)


@pytest.mark.parametrize("settings", [[], {}, "x"])
def test_load_adopted_calls_damaged_settings_damaged(tmp_path, settings):
    """Round 21, P308: ``leviathan_generator: []`` was "not an adopted model (no 'leviathan_generator')", whose fix
    (AutoModelForCausalLM) loads the weights without their generator: the key is there, damaged."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    folder = _adopted_folder(tmp_path / "ad")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "leviathan_generator": settings}))
    with pytest.raises(UserError, match=r"leviathan_generator is .*, not the mapping of generator settings that adopt "
                                        r"writes \(config\.json was edited or damaged\); restore config\.json"):
        load_adopted(folder)


def test_loads_onto_the_meta_device_are_one_line(exported, tmp_path):
    """Round 21, P470: ``load_adopted(DIR, device_map='meta')`` was transformers' hub-kernels "ValueError:
    Unsupported device type 'meta'" traceback; so was an export's from_pretrained."""
    import torch

    from leviathan.errors import UserError
    from leviathan.hf import load_adopted
    from leviathan.hf.modeling import LeviathanForCausalLM

    folder = _adopted_folder(tmp_path / "ad")
    for device_map in ("meta", {"": "meta"}, torch.device("meta")):
        with pytest.raises(UserError, match=r"device_map=.* puts the weights on the meta device .*leave device_map out"):
            load_adopted(folder, device_map=device_map)
    with pytest.raises(UserError, match=r"device_map='meta' puts the weights on the meta device"):
        LeviathanForCausalLM.from_pretrained(str(exported), device_map="meta")
    assert load_adopted(folder, device_map="cpu") is not None


def test_from_pretrained_of_a_baked_folder_sends_it_to_transformers(tmp_path):
    """Round 21, P464: ``LeviathanForCausalLM.from_pretrained`` of a ``bake_adopted`` output (a plain llama folder)
    loaded with the trained table dropped and a random generator built, only transformers' LOAD REPORT said so."""
    from transformers import AutoModelForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import bake_adopted, load_adopted
    from leviathan.hf.modeling import LeviathanForCausalLM

    baked = bake_adopted(load_adopted(_adopted_folder(tmp_path / "ad")), tmp_path / "baked")
    with pytest.raises(UserError, match=r"holds a 'llama' model \(config\.json's model_type\), not a leviathan export"
                                        r".*AutoModelForCausalLM\.from_pretrained\("):
        LeviathanForCausalLM.from_pretrained(str(baked))
    assert type(AutoModelForCausalLM.from_pretrained(str(baked))).__name__ == "LlamaForCausalLM"


def test_from_pretrained_refuses_an_export_marker_without_the_weights_digest(exported, tmp_path):
    """Round 21, P318: an export with other weights and the marker's digest of model.safetensors taken out (the rest
    kept) was taken as an export written before digests and loaded, no word; the swap alone was refused (M16)."""
    from safetensors.torch import load_file, save_file

    from leviathan.errors import UserError
    from leviathan.hf.modeling import LeviathanForCausalLM

    edited = Path(shutil.copytree(exported, tmp_path / "e318"))
    tensors = load_file(edited / "model.safetensors")
    name = sorted(tensors)[0]
    tensors[name] = tensors[name] + 1.0  # another run's weights, same names and sizes
    save_file(tensors, edited / "model.safetensors", metadata={"format": "pt"})
    marker = json.loads((edited / "leviathan_output.json").read_text())
    del marker["sha256"]["model.safetensors"]
    (edited / "leviathan_output.json").write_text(json.dumps(marker))
    with pytest.raises(UserError, match=r"lists model\.safetensors but records no sha256 of it, .*marker was edited"):
        LeviathanForCausalLM.from_pretrained(str(edited))


def test_a_folder_in_the_weights_files_place_is_named_as_a_folder(tmp_path):
    """Round 22, S528: an adopted folder with a folder in model.safetensors' place was "does not read as a safetensors
    file (No such device (os error 19))", no word of the folder."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    folder = _adopted_folder(tmp_path / "ad")
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").mkdir()
    with pytest.raises(UserError, match=r"model\.safetensors' is a folder, not a file, where the model's weights file "
                                        r"should be; move it away, then restore it from a copy"):
        load_adopted(folder)


def test_an_optimizer_state_in_the_weights_files_place_is_named_as_no_models_weights(tmp_path):
    """Round 22, S531: an optimizer.pt copied in as pytorch_model.bin was blamed on "a folder re-saved by
    transformers", with the fix of loading its baked table, which it does not have."""
    import torch

    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    folder = _adopted_folder(tmp_path / "ad")
    model = load_adopted(folder)
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.tensor([[1, 2]])).logits.sum().backward()
    optimizer.step()
    (folder / "model.safetensors").unlink()
    torch.save(optimizer.state_dict(), folder / "pytorch_model.bin")
    with pytest.raises(UserError, match=r"pytorch_model\.bin' holds none of the model's tensors \(only param_groups, "
                                        r"state\): it is not a model's weights") as caught:
        load_adopted(folder)
    assert "re-saved by transformers" not in str(caught.value)


def test_from_pretrained_of_a_missing_subfolder_names_the_subfolder(tmp_path):
    """Round 22, S607: ``from_pretrained(ex1, subfolder='nope')`` was transformers' OSError naming ex1, not ex1/nope;
    a subfolder that is there loads (and is checked as a folder is)."""
    from leviathan.errors import UserError
    from leviathan.hf.modeling import LeviathanForCausalLM

    folder = _native_folder(tmp_path / "ex1" / "inner")
    with pytest.raises(UserError, match=r"subfolder 'nope': '.*ex1/nope' does not exist; pass the subfolder of "
                                        r"'.*ex1' that holds config\.json and the weights, or leave subfolder out"):
        LeviathanForCausalLM.from_pretrained(str(tmp_path / "ex1"), subfolder="nope")
    assert LeviathanForCausalLM.from_pretrained(str(folder.parent), subfolder="inner") is not None


@pytest.mark.parametrize("edit", [{"eos_token_id": 999}, {"pad_token_id": -1}, {"eos_token_id": [2, 300]},
                                  {"bos_token_id": True}])
def test_generation_config_ids_past_the_vocabulary_are_refused(tmp_path, edit):
    """Round 22, S104: a marker-less folder whose generation_config.json had eos_token_id 999 over 300 ids loaded and
    generated without a word (it could never stop); config.json's own ids are checked since round 17 (E419)."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted
    from leviathan.hf.modeling import LeviathanForCausalLM

    native, adopted = _native_folder(tmp_path / "n"), _adopted_folder(tmp_path / "ad")
    for folder, load in ((native, LeviathanForCausalLM.from_pretrained), (adopted, load_adopted)):
        generation = json.loads((folder / "generation_config.json").read_text())
        (folder / "generation_config.json").write_text(json.dumps({**generation, **edit}))
        name, value = next(iter(edit.items()))
        with pytest.raises(UserError, match=rf"generation_config\.json': {name} .* is not a token id of this model "
                                            r"\(whole numbers 0 to 299"):
            load(str(folder))

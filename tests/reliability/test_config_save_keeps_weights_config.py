"""A config's ``save_pretrained`` never replaces the config.json that the weights beside it were saved with (issue 30
round 35, AI581-AI583, AI586).

``LeviathanConfig.save_pretrained(DIR)`` into a model folder replaced its config.json without a word: rope_theta 10
made the weights load as another model (AI581), other sizes left the folder unloadable (AI582), a native config saved
into an adopted folder dropped its generator settings (AI583), and one saved into a Trainer checkpoint changed it
(AI586). Now it is one UserError line and the folder is unchanged (``config_save.keep_weights_config``); the folder's
own config saved back writes nothing (AI587), and a fresh or config-only folder is written as before. An adopted
model's config (transformers' own class) follows the same rule (``config_save.held_config``): saved into a native
folder it replaced its config.json (AI585), and saved back into its own folder it dropped the weights' sha256 record,
so the folder no longer loaded (AI588). Reading another model type's config.json names it as such (AI418).
"""

from __future__ import annotations

import hashlib

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt, load_adopted  # noqa: E402

from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability

SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64)


def _digests(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A native model folder and an adopted one, saved once."""
    root = tmp_path_factory.mktemp("config_save")
    torch.manual_seed(0)
    LeviathanForCausalLM(LeviathanConfig(**SMALL)).save_pretrained(root / "native")
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(root / "adopted")
    return root


def _changed(config, **settings):
    for name, value in settings.items():
        setattr(config, name, value)
    return config


@pytest.mark.parametrize("target, change", [("native", {"rope_theta": 10.0}),
                                            ("native", {"hidden_size": 64, "intermediate_size": 192}),
                                            ("adopted", {})],
                         ids=["AI581-rope_theta", "AI582-sizes", "AI583-native-into-adopted"])
def test_a_config_of_other_settings_is_refused_beside_weights(folders, tmp_path, target, change):
    import shutil

    folder = shutil.copytree(folders / target, tmp_path / target)
    before = _digests(folder)
    config = _changed(LeviathanConfig.from_pretrained(folders / "native"), **change)
    with pytest.raises(UserError, match=r"^config\.save_pretrained: .* holds model\.safetensors, saved with its own "
                                        r"config\.json, .*nothing was written") as e:
        config.save_pretrained(folder)
    assert "\n" not in str(e.value)
    assert _digests(folder) == before


def test_the_folders_own_config_and_fresh_folders_still_save(folders, tmp_path):
    """AI587: the folder's own config saved back leaves the file as it is; a fresh folder and a config-only folder
    are written."""
    import shutil

    folder = shutil.copytree(folders / "native", tmp_path / "native")
    before = _digests(folder)
    LeviathanConfig.from_pretrained(folder).save_pretrained(folder)
    assert _digests(folder) == before
    config = _changed(LeviathanConfig.from_pretrained(folder), rope_theta=10.0)
    config.save_pretrained(tmp_path / "fresh")
    config.save_pretrained(tmp_path / "fresh")  # a config-only folder: no weights to describe
    assert LeviathanConfig.from_pretrained(tmp_path / "fresh").rope_theta == 10.0


def test_an_adopted_models_config_follows_the_rule(folders, tmp_path):
    """AI585: refused beside a native model's weights, the folder unchanged; AI588: saved back into its own folder,
    the folder keeps its record and loads; a fresh folder is written, and transformers still maps the config to its
    model class."""
    import shutil

    native = shutil.copytree(folders / "native", tmp_path / "native")
    adopted = shutil.copytree(folders / "adopted", tmp_path / "adopted")
    config = load_adopted(adopted).config
    before = _digests(native), _digests(adopted)
    with pytest.raises(UserError, match=r"^config\.save_pretrained: .* is a 'leviathan' model's, this config a "
                                        r"'llama' one's: .*nothing was written"):
        config.save_pretrained(native)
    config.save_pretrained(adopted)
    assert (_digests(native), _digests(adopted)) == before
    load_adopted(adopted)
    config.save_pretrained(tmp_path / "fresh")
    assert type(transformers.AutoModelForCausalLM.from_config(config)) is transformers.LlamaForCausalLM
    import pickle  # pickled by the original class (the held one exists only in this process), held again on reading

    assert b"HeldLlamaConfig" not in pickle.dumps(config)
    again = pickle.loads(pickle.dumps(config))
    with pytest.raises(UserError, match=r"^config\.save_pretrained: "):
        again.save_pretrained(native)


def test_another_model_types_config_is_named_as_such(folders):
    """AI418: LeviathanConfig.from_pretrained of an adopted model's folder printed transformers' note, then refused its
    first foreign key as one to remove from config.json; now one line naming the model type and the loader to use
    (from_json_file too)."""
    from leviathan.config import ConfigError

    said = r"config\.json' is a 'llama' model's config \(its model_type\), not a LeviathanConfig; leviathan\.hf\.load_adopted"
    with pytest.raises(ConfigError, match=said):
        LeviathanConfig.from_pretrained(folders / "adopted")
    with pytest.raises(ConfigError, match=said):
        LeviathanConfig.from_json_file(folders / "adopted" / "config.json")

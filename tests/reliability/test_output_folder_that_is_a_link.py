"""An output folder given as a symbolic link is refused, naming the folder it links to (issue 30 round 29, W153,
W646, W647).

``bake_adopted``, ``prepare`` and ``to_plain_llama`` with ``overwrite=True`` into a path that was a symlink to an
earlier output built the new output beside the link and renamed it into the link's place: the link became a folder,
and the earlier output the user meant to replace was left as it was, without a word. One rule now holds for every
writer that replaces its folder (prepare, export and its API, demo: ``ownership.replaced_folder`` asks
``check_not_a_link``): the link is refused in one line naming it and the folder it names (the path to give), and
nothing is written. A link among the folders above the output is followed as before. (demo and the prepare CLI are
pinned in test_destructive_flags.py.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import tree_hashes  # noqa: E402

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _model():
    from leviathan import CausalLM, ModelConfig

    return CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                max_position_embeddings=64))


def _adopted():
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt

    return adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32,
                                              num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)))


def _writers():
    from leviathan.hf import bake_adopted
    from leviathan.hf.export import to_hf, to_plain_llama

    return {"to_plain_llama": lambda out, **kw: to_plain_llama(_model(), out, **kw),
            "to_hf": lambda out, **kw: to_hf(_model(), out, **kw),
            "bake_adopted": lambda out, **kw: bake_adopted(_adopted(), out, **kw)}


@pytest.mark.parametrize("writer", ["to_plain_llama", "to_hf", "bake_adopted"])
def test_an_export_over_a_link_to_an_earlier_export_is_refused(tmp_path, writer):
    write = _writers()[writer]
    earlier = write(tmp_path / "earlier")
    before = tree_hashes(earlier)
    link = tmp_path / "link"
    link.symlink_to("earlier")
    for overwrite in (True, False):
        with pytest.raises(UserError, match=rf"^out_dir '{link}' is a symbolic link to '{earlier}': the output is "
                                            r"built beside the link and renamed into its place, which would replace "
                                            rf"the link by a new folder .*; give that folder itself \(out_dir "
                                            rf"{earlier}\), or remove the link"):
            write(link, overwrite=overwrite)
    assert link.is_symlink() and tree_hashes(earlier) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier", "link"]  # no temporary folder or lock left


def test_prepare_over_a_link_to_a_data_folder_is_refused(data, tmp_path):
    import shutil

    from leviathan.data.prepare import prepare

    target = Path(shutil.copytree(data, tmp_path / "data"))
    before = tree_hashes(target)
    (tmp_path / "link").symlink_to("data")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("other words for another tokenizer\n" * 200)
    with pytest.raises(UserError, match=rf"^--out '{tmp_path / 'link'}' is a symbolic link to '{target}'"):
        prepare(str(corpus), tmp_path / "link", "bpe:300", overwrite=True)
    assert (tmp_path / "link").is_symlink() and tree_hashes(target) == before


def test_an_output_under_a_linked_parent_is_written_and_replaced(tmp_path):
    from leviathan.hf.export import to_plain_llama

    (tmp_path / "real").mkdir()
    (tmp_path / "parent").symlink_to("real")
    to_plain_llama(_model(), tmp_path / "parent" / "ex")
    to_plain_llama(_model(), tmp_path / "parent" / "ex", overwrite=True)
    assert (tmp_path / "parent").is_symlink() and (tmp_path / "real" / "ex" / "model.safetensors").is_file()

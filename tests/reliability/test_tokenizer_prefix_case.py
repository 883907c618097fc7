"""A tokenizer spec with the bpe: prefix in upper case names the case as the fault (issue 30 round 29, V43).

``prepare corpus --tokenizer BPE:300`` said "bpe:VOCAB is only valid for `leviathan prepare`", inside prepare
itself, and not that the prefix is lower case (as the built-in names are: 'O200K_BASE' is refused too, with a
"did you mean"). ``load_tokenizer``'s unknown-spec line now names the lower-case spelling.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, write_corpus  # noqa: E402

from leviathan.data.tokenizer import load_tokenizer  # noqa: E402
from leviathan.errors import UserError  # noqa: E402


def test_prepare_with_an_upper_case_bpe_prefix_names_the_lower_case_spelling(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=2)
    err = cli_error(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "BPE:300"])
    assert "the bpe: prefix is written in lower case" in err and "'bpe:300'" in err, err
    assert "only valid for" not in err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("spec", ["BPE:300", "Bpe:8192"])
def test_load_tokenizer_names_the_lower_case_spelling(spec):
    with pytest.raises(UserError, match=f"write 'bpe:{spec[4:]}'"):
        load_tokenizer(spec)

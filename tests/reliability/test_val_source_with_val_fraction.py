"""``prepare()`` given both a validation corpus and a validation fraction refuses them (issue 30 round 29, W753).

``prepare(..., val_source=FILE, val_fraction=0.5)`` took the validation from the file and dropped ``val_fraction``
without a word (all documents went to training), where ``leviathan prepare`` refuses ``--val-fraction`` beside
``--val-source`` (round 25). ``val_fraction`` now defaults to None (0.01 without a val_source), so a fraction that was
given is told from the default: one UserError naming both, before anything is read or written.
"""

from __future__ import annotations

import pytest

from leviathan.data.prepare import prepare
from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _texts(tmp_path):
    (tmp_path / "c").mkdir()
    for i in range(4):
        (tmp_path / "c" / f"d{i}.txt").write_text(f"document {i} has a few words of text.\n" * 20)
    (tmp_path / "v.txt").write_text("the validation text, a few words long.\n" * 20)
    return tmp_path / "c", tmp_path / "v.txt"


@pytest.mark.parametrize("fraction", [0.5, 0.01, 0.0])
def test_a_fraction_beside_a_val_source_is_refused(tmp_path, fraction):
    corpus, val = _texts(tmp_path)
    with pytest.raises(UserError, match=rf"prepare: val_fraction={fraction!r} holds out part of the source, and "
                                        rf"val_source='.*v\.txt' is the validation corpus itself: pass one of the two"):
        prepare(str(corpus), tmp_path / "out", "bpe:300", val_source=str(val), val_fraction=fraction, progress=False)
    assert not (tmp_path / "out").exists()


def test_either_alone_is_taken(tmp_path):
    corpus, val = _texts(tmp_path)
    quiet = dict(progress=False, log=lambda message: None)
    meta = prepare(str(corpus), tmp_path / "a", "bpe:300", val_source=str(val), **quiet)
    assert meta["splits"]["train"]["documents"] == 4 and meta["splits"]["val"]["documents"] == 1
    meta = prepare(str(corpus), tmp_path / "b", "bpe:300", val_fraction=0.5, **quiet)
    assert meta["splits"]["val"]["documents"] >= 1 and meta["val_source"] is None

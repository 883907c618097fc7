"""``prepare``'s two sizes in characters, ``batch_chars`` and ``piece_chars``, held to one rule (issue 30 round 27,
S408), and a batch of one document (round 25, Y383).

``batch_chars`` sizes the text handed to the tokenizer at once (memory against thread use): a batch is sent once it
holds at least that many characters, so 1 sends each document as its own batch. The tokens never depend on the
batching, so the data prepared with 1 is the data prepared with the default. Round 25 judged ``batch_chars=0`` right
by design as the same batch of one document; round 27 (S408) found it taken while ``piece_chars=0`` was refused
("must be a positive integer"): both are now positive integers, 0 refused in one line naming the argument and the
1 that means a batch per document. Beside it: ``max_documents`` given as numpy's int64 passed its check and ended in
json's raw "Object of type int64 is not JSON serializable" when meta.json was written.
"""

from __future__ import annotations

import numpy as np
import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_batch_chars_1_prepares_the_defaults_data(data, tmp_path):
    from leviathan.data.prepare import prepare

    out = tmp_path / "d1"
    prepare(str(data.parent / "corpus"), out, tokenizer=str(data), val_fraction=0.2, batch_chars=1, progress=False,
            log=lambda msg: None)
    for name in ("train.bin", "val.bin"):
        assert (out / name).read_bytes() == (data / name).read_bytes()


@pytest.mark.parametrize("name", ["batch_chars", "piece_chars"])
def test_a_size_of_0_characters_is_refused_for_both(data, tmp_path, name):
    from leviathan.data.prepare import prepare

    with pytest.raises(UserError) as info:
        prepare(str(data.parent / "corpus"), tmp_path / "d0", tokenizer=str(data), progress=False,
                log=lambda msg: None, **{name: 0})
    assert str(info.value).startswith(f"prepare: {name}: must be a positive integer, got 0; pass a number of "
                                      "characters such as"), info.value
    assert "\n" not in str(info.value)
    assert not (tmp_path / "d0").exists()


def test_max_documents_as_numpys_integer_is_read_as_its_number(data, tmp_path):
    from leviathan.data.prepare import prepare

    meta = prepare(str(data.parent / "corpus"), tmp_path / "dn", tokenizer=str(data), max_documents=np.int64(2),
                   progress=False, log=lambda msg: None)
    assert meta["settings"]["max_documents"] == 2

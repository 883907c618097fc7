"""``prepare(..., batch_chars=0)`` is a batch per document, and the data it writes is the default's (issue 30 round 25,
Y383, judged right by design).

``batch_chars`` sizes the text handed to the tokenizer at once (memory against thread use): a batch is sent once it
holds at least that many characters, so 0 sends each document as its own batch. The tokens never depend on the
batching, so the data prepared with 0 is the data prepared with the default, which the finding took for a value
ignored. Negative and non-whole values are refused (round 19, test_api_arguments.py).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.reliability]


def test_batch_chars_0_prepares_the_defaults_data(data, tmp_path):
    from leviathan.data.prepare import prepare

    out = tmp_path / "d0"
    prepare(str(data.parent / "corpus"), out, tokenizer=str(data), val_fraction=0.2, batch_chars=0, progress=False,
            log=lambda msg: None)
    for name in ("train.bin", "val.bin"):
        assert (out / name).read_bytes() == (data / name).read_bytes()

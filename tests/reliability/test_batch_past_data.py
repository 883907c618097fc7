"""A batch needs no more windows than the data has (issue 30 round 20, M288): ``BatchLoader(data, 32, 10**6)`` over
447 windows returned a (1000000, 32) batch, each window about 2,237 times in it, without a word, while a seq_len past
the data was refused (M287). The global batch (batch_size x world_size) is refused past the windows, naming the most
that fits; a batch of every window still loads.
"""

from __future__ import annotations

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_a_batch_past_the_datas_windows_is_refused_naming_the_most_that_fits(data):
    from leviathan.data.loader import BatchLoader

    windows = BatchLoader(data, 32, 1).num_windows
    with pytest.raises(UserError, match=rf"BatchLoader: batch_size: one batch of 1,000,000 sequences is more than the "
                                        rf"data's {windows:,} windows .*; use a batch_size of at most {windows:,}"):
        BatchLoader(data, 32, 10**6)
    half = windows // 2
    with pytest.raises(UserError, match=rf"sequences x world_size 2 .*at most {half:,}"):
        BatchLoader(data, 32, half + 1, rank=1, world_size=2)
    assert BatchLoader(data, 32, windows).next_batch()[0].shape == (windows, 32)
    assert BatchLoader(data, 32, half, rank=1, world_size=2).next_batch()[0].shape == (half, 32)

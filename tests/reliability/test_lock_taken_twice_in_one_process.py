"""A folder's lock taken again by the process holding it names that cause and the keyword (issue 30 round 29, W243).

``locking.folder_lock('t/l243', 'train')`` inside a ``folder_lock`` of the same folder was refused naming this very
process as the writer, with the fix "wait for it to finish or stop it": it would wait for itself. The refusal now
says this process holds the lock already and names ``again=True`` (go on under the lock held) or ending the first.
"""

from __future__ import annotations

import os

import pytest

from leviathan.errors import UserError
from leviathan.locking import folder_lock

pytestmark = [pytest.mark.reliability]


def test_a_second_lock_of_a_folder_this_process_holds_names_again(tmp_path):
    folder = tmp_path / "l243"
    with folder_lock(folder, "train") as held:
        with pytest.raises(UserError) as caught:
            with folder_lock(folder, "train"):
                pass
        said = str(caught.value)
        assert said == (f"cannot train into '{folder}': this process holds its lock already (it holds '{held}', taken "
                        f"by an enclosing folder_lock that has not ended); pass again=True to go on under the lock it "
                        f"holds, or end the first folder_lock before taking it again")
        assert f"process {os.getpid()}" not in said and "wait for it to finish" not in said
        with folder_lock(folder, "train", again=True) as again:
            assert again == held
        assert os.path.exists(held)  # the inner refusal and the again=True block left the held lock in place
    with folder_lock(folder, "train"):  # taken again once the first has ended
        pass

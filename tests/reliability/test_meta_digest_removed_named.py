"""A meta.json whose ``field_digests`` entry of one field was removed names the missing digest (issue 30 round 29,
W705): it was refused as "field 'format' was added after prepare wrote meta.json", though the field was there all
along and only its digest was gone. The refusal (and its fix, prepare again) stays.
"""

from __future__ import annotations

import json
import shutil

import pytest

from leviathan.data.meta import read_meta
from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_a_removed_digest_is_named(data, tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    shutil.copy(data / "meta.json", folder / "meta.json")
    raw = json.loads((folder / "meta.json").read_text())
    del raw["field_digests"]["format"]
    (folder / "meta.json").write_text(json.dumps(raw))
    with pytest.raises(UserError, match=r"meta\.json: field 'format' has no digest in field_digests, where prepare "
                                        r"records one of every field it writes \(the digest was removed from "
                                        r"field_digests, or the field added after prepare wrote meta\.json\).*prepare "
                                        r"the data again"):
        read_meta(folder)

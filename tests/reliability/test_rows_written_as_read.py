"""``append_result`` refuses the rows its reader would refuse, and the readers name a file that is a folder (issue 30
round 19).

- J246-J251: ``append_result`` wrote a run name with a newline or ``../``, seed 'zero', steps inf (stored as null),
  final_val_loss -5 and hidden_size NaN (stored as null) without a word; ``read_results`` then skipped the line or
  read it as another row. The writer now applies the reader's rule (``results.row_problem``) before writing.
- J252 (and J88's kind): a row of another grid, or of an arm the file holds under another name, was appended; every
  reader then refused the file. The writer refuses them with the readers' own checks (``identity.check_one_grid``,
  ``identity.arm_clash``).
- J160: ``read_results`` of a folder whose results.jsonl is a folder returned []; J51: ``read_meta`` of a folder whose
  meta.json is a folder said "no meta.json".
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability]


def _nan_hidden(row: dict):
    from leviathan.experiments.machinery.results import ResultRow

    typed = copy.deepcopy(ResultRow.from_dict(row))
    typed.name, typed.hidden_size = "n251", float("nan")
    return typed


@pytest.mark.parametrize("edit, said", [
    (lambda d: dict(d, name="a\nb"), "the row 'a\\nb' has name 'a\\nb', not a run's folder name"),
    (lambda d: dict(d, name="../../x247"), "the row '../../x247' has name '../../x247', not a run's folder name"),
    (lambda d: dict(d, name="n248", seed="zero"), "the row 'n248' has seed 'zero', not a whole number >= 0"),
    (lambda d: dict(d, name="n249", steps=float("inf")), "the row 'n249' has steps inf, not a whole number >= 0 (it would be written as null)"),
    (lambda d: dict(d, name="n250", final_val_loss=-5.0), "the row 'n250' has final_val_loss -5.0, not a number >= 0"),
    (_nan_hidden, "the row 'n251' has hidden_size nan, not a whole number >= 0"),
    (lambda d: dict(d, name="n551", final_val_loss=float("nan"), final_val_ppl=float("inf")),
     "the row 'n551' has final_val_loss null (a NaN written as null, or an edit), though its curve's last validation "
     "measured"),
    (lambda d: dict(d, name="n252", size="b", grid="other"), "nothing was written: the rows of 'RES' with the row "
                                                             "'n252' appended come from different grids"),
    (lambda d: dict(d, name="n252-copy"), "in 'RES', the row appended ('n252-copy') and line 1 ('a-dense_tied-s0') "
                                          "are both variant 'dense_tied' of size 'a', seed 0"),
    (lambda d: dict(d, name="n194", variant=None, regime=None, regimes=[]), "the row 'n194' has no variant (every row names its arm and seed"),
    (lambda d: {"name": "n194b", "variant": d["variant"]}, "the row 'n194b' has no seed"),
], ids=["J246-newline", "J247-dotdot", "J248-seed", "J249-inf", "J250-negative", "J251-nan", "P551-final-nan",
        "J252-grid", "J88-arm", "S194-variant", "S194-seed"])
def test_append_result_refuses_a_row_its_reader_would_refuse(swept, tmp_path, edit, said):
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import append_result, read_results

    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    results = sweep / "results.jsonl"
    before = results.read_bytes()
    row = edit(json.loads(before.decode().splitlines()[0]))
    with pytest.raises(UserError) as caught:
        append_result(results, row)
    assert said.replace("RES", str(results)) in str(caught.value), caught.value
    assert results.read_bytes() == before
    assert len(read_results(sweep)) == 2


def test_append_result_refuses_a_row_of_nulls_into_a_new_file(tmp_path):
    """S194: ``append_result('new7/results.jsonl', {'name': 'x'})`` wrote a row of nulls that read_results returned
    and write_report reported as '1 runs' with empty tables; now refused, and nothing (no folder) is made."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import append_result

    with pytest.raises(UserError, match="the row 'x' has no variant.*nothing was written"):
        append_result(tmp_path / "new7" / "results.jsonl", {"name": "x"})
    assert not (tmp_path / "new7").exists()


def test_append_result_still_appends_a_row_of_the_grid(swept, tmp_path):
    from leviathan.experiments.machinery.results import append_result, read_results

    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    rows = [json.loads(line) for line in (sweep / "results.jsonl").read_text().splitlines()]
    (sweep / "results.jsonl").write_text(json.dumps(rows[0]) + "\n")
    append_result(sweep / "results.jsonl", rows[1])
    append_result(sweep / "results.jsonl", rows[1])  # the same row again: one run, counted once by the reader
    assert [r.name for r in read_results(sweep, report=lambda message: None)] == [rows[0]["name"], rows[1]["name"]]


def test_read_results_skips_a_row_whose_final_loss_is_null_beside_its_curve(swept, tmp_path):
    """P551: a final_val_loss NaN stored as null was read back as "not recorded", though the row's curve ends at a
    measured loss; the reader now skips it with a warning naming the field."""
    from leviathan.experiments.machinery.results import read_results

    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    lines = (sweep / "results.jsonl").read_text().splitlines()
    row = dict(json.loads(lines[1]), final_val_loss=None, final_val_ppl=None)
    (sweep / "results.jsonl").write_text(lines[0] + "\n" + json.dumps(row) + "\n")
    said = []
    assert [r.name for r in read_results(sweep, report=said.append)] == [json.loads(lines[0])["name"]]
    assert "line 2 has final_val_loss null (a NaN written as null, or an edit)" in said[0], said


def test_append_result_makes_a_missing_parent_folder_as_write_record_does(swept, tmp_path):
    """P149: ``append_result('newdir/x/results.jsonl', row)`` was the raw FileNotFoundError; the other writers
    (``write_record``, the sweep) make their parent folders, and so does it now."""
    from leviathan.experiments.machinery.results import append_result, read_results

    row = json.loads((swept / "results.jsonl").read_text().splitlines()[0])
    append_result(tmp_path / "newdir" / "x" / "results.jsonl", row)
    assert [r.name for r in read_results(tmp_path / "newdir" / "x")] == [row["name"]]
    (tmp_path / "afile.txt").write_text("mine\n")
    from leviathan.errors import StorageError

    with pytest.raises(StorageError, match="a file is in the way where a folder is expected"):
        append_result(tmp_path / "afile.txt" / "o" / "results.jsonl", row)
    assert (tmp_path / "afile.txt").read_text() == "mine\n"


def test_read_results_names_a_results_jsonl_that_is_a_folder(tmp_path):
    """J160 (``load_results`` said so since round 14, B180; ``read_results`` returned [])."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results

    (tmp_path / "sdir" / "results.jsonl").mkdir(parents=True)
    for given in (tmp_path / "sdir", tmp_path / "sdir" / "results.jsonl"):
        with pytest.raises(UserError, match=r"results.jsonl' is a folder, not the results file `leviathan sweep` "
                                            r"writes; pass a sweep output dir that holds its results.jsonl"):
            read_results(given)


def test_read_meta_names_a_meta_json_that_is_a_folder(tmp_path):
    """J51."""
    from leviathan.data.meta import read_meta
    from leviathan.errors import UserError

    (tmp_path / "d54" / "meta.json").mkdir(parents=True)
    with pytest.raises(UserError, match=r"meta.json' is a folder, not a file; restore it from a copy, or run "
                                        r"`leviathan prepare"):  # errors.not_a_file (fix19c's, the same rule)
        read_meta(tmp_path / "d54")

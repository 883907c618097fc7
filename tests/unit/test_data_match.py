"""A results row's data against the data folder a sweep resumes with: the rule across fingerprint versions."""

import json

from leviathan.experiments.machinery.data_match import FINGERPRINT, SUMMARY, UNCHECKED, DataMatch, match_data
from leviathan.experiments.machinery.provenance import DataProvenance, data_provenance

COUNTS = {"tokenizer": "bpe:300", "vocab_size": 300, "train_tokens": 1000, "val_tokens": 100}


def v2(fp: str, legacy: str | None = None, **kw) -> DataProvenance:
    return DataProvenance(fingerprint=fp, fingerprint_version=2, legacy_fingerprint=legacy, **{**COUNTS, **kw})


def v1(fp: str, **kw) -> DataProvenance:
    return DataProvenance(fingerprint=fp, **{**COUNTS, **kw})


def test_version_2_fingerprints_must_be_equal():
    assert match_data(v2("a" * 64), v2("a" * 64)) == DataMatch(FINGERPRINT)
    assert match_data(v2("a" * 64, "x"), v2("a" * 64, "y")) == DataMatch(FINGERPRINT)  # legacy ones may differ
    # counts that agree do not excuse a different version-2 fingerprint, nor does an equal legacy one
    m = match_data(v2("a" * 64, "x"), v2("b" * 64, "x"))
    assert m.how == FINGERPRINT and m.differences == ("data fingerprint: aaaaaaaaaaaa... in the row, "
                                                      "bbbbbbbbbbbb... now (version 2)",)


def test_a_version_1_row_of_the_same_place_matches_exactly():
    assert match_data(v1("old"), v2("new", legacy="old")) == match_data(v1("old"), v1("old"))
    assert match_data(v1("old"), v1("old")).how == FINGERPRINT
    # a version-2 row against a folder prepared (at the same place) before versions: its legacy fingerprint
    assert match_data(v2("new", legacy="old", train_tokens=1), v1("old")).how == FINGERPRINT


def test_a_version_1_row_from_elsewhere_is_matched_on_tokenizer_vocabulary_and_counts():
    m = match_data(v1("prepared-at-/a"), v2("new", legacy="prepared-at-/b"))
    assert m.how == SUMMARY and m.differences == ()
    assert match_data(v1("prepared-at-/a"), v1("prepared-at-/b")) == m  # both written before versions
    m = match_data(v1("prepared-at-/a", train_tokens=999, tokenizer="o200k_base"), v2("new"))
    assert m.how == SUMMARY and len(m.differences) == 1
    assert "tokenizer 'o200k_base' in the row, 'bpe:300' now, train_tokens 999 in the row, 1000 now" in \
        m.differences[0]
    assert "version-1 fingerprint" in m.differences[0] and "val_tokens 100" not in m.differences[0]
    # what a legacy row does not record cannot be confirmed
    assert match_data(v1("a", val_tokens=None), v2("new")).differences
    # a version-2 row against a folder prepared elsewhere before versions: its counts too
    assert match_data(v2("new", legacy="x"), v1("y")).how == SUMMARY


def test_no_fingerprint_is_not_checked():
    assert match_data(DataProvenance(), v2("a")).how == UNCHECKED
    assert match_data(v2("a"), DataProvenance()).how == UNCHECKED


def test_rows_and_meta_json_of_either_version_read_back(tmp_path):
    old_row = {"dir": "data/x", "fingerprint": "f" * 64, **COUNTS}
    d = DataProvenance.from_dict({**old_row, "unknown_key": 1})
    assert d.version == 1 and d.as_dict() == {**old_row, "unknown_key": 1}  # a legacy row writes back as it was
    new = v2("a" * 64, "b" * 64)
    assert DataProvenance.from_dict(new.as_dict()) == new and new.fingerprints() == {2: "a" * 64, 1: "b" * 64}
    meta = {"fingerprint": "c" * 64, "fingerprint_version": 2, "legacy_fingerprint": "d" * 64, "tokenizer": "bpe:300",
            "vocab_size": 300, "splits": {"train": {"tokens": 1000}, "val": {"tokens": 100}},
            "format": 1, "dtype": "uint16", "eot_id": 0}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert data_provenance(tmp_path).as_dict() == {"dir": data_provenance(tmp_path).dir, "fingerprint": "c" * 64,
                                                   **COUNTS, "fingerprint_version": 2, "legacy_fingerprint": "d" * 64}


def test_two_folders_of_one_grid_compare_their_data_across_fingerprint_versions():
    """A sweep resumed on its data folder prepared again by version 2 (grid.json: the version-2 fingerprint) and the
    committed copy of its rows (version 1): one data set. collect_results refused it ("started with other settings")
    the first time the o200k-fair rows met the folder prepared after issue 29."""
    from leviathan.experiments.machinery.data_match import same_sweep_data
    from leviathan.experiments.machinery.results import ResultRow
    from leviathan.experiments.machinery.sweep_grid import SweepGrid

    old = SweepGrid(name="g", data_fingerprint="old")
    new = SweepGrid(name="g", data_fingerprint="new", data_fingerprint_version=2, data_legacy_fingerprint="old")
    assert same_sweep_data(old, [], new, []) and same_sweep_data(new, [], old, [])
    other = SweepGrid(name="g", data_fingerprint="other", data_fingerprint_version=2, data_legacy_fingerprint="x")
    assert not same_sweep_data(new, [], other, []) and not same_sweep_data(old, [], other, [])
    # a grid.json written before it recorded versions: its rows decide (they record every fingerprint and the counts)
    unversioned = SweepGrid(name="g", data_fingerprint="new")
    rows_old, rows_new = [ResultRow(name="a", data=v1("old"))], [ResultRow(name="b", data=v2("new", legacy="old"))]
    assert not same_sweep_data(old, [], unversioned, [])
    assert same_sweep_data(old, rows_old, unversioned, rows_new)
    assert not same_sweep_data(old, rows_old, unversioned, [ResultRow(name="b", data=v2("new", legacy="x",
                                                                                          train_tokens=5))])

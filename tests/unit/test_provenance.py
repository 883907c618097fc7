"""Committed results name no machine folder: portable paths, and the rewrite of old rows."""

from pathlib import Path

from leviathan.experiments.machinery.provenance import data_provenance, portable_path, portable_tree


def test_portable_path_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path / "shared-data"))
    monkeypatch.chdir(tmp_path)
    assert portable_path("data/x") == "data/x"  # relative: kept
    assert portable_path(tmp_path / "sweep" / "runs" / "a", tmp_path / "sweep") == "runs/a"  # under a base
    assert portable_path(tmp_path / "shared-data" / "ptb" / "t.txt") == "$LEVIATHAN_DATA/ptb/t.txt"
    assert portable_path("/elsewhere/shared/data/wikitext-2/w.txt") == "$LEVIATHAN_DATA/wikitext-2/w.txt"
    assert portable_path("/old/worktree/src/leviathan/configs/experiments/g.yaml") == \
        "leviathan/configs/experiments/g.yaml"
    assert portable_path(tmp_path / "data" / "bpe") == "data/bpe"  # under the current folder
    assert portable_path("/var/other/place/data-dir") == "place/data-dir"  # under nothing: last two parts
    assert portable_path(None) is None


def test_portable_tree_rewrites_old_rows_and_keeps_the_rest():
    row = {"name": "m-s0", "run_dir": "/work/runs/cpu-bpe32k/runs/m-s0",
           "metrics": "/work/runs/cpu-bpe32k/runs/m-s0/metrics.jsonl",
           "eval": {"val": {"loss": 5.25, "tokens": 131071}}, "notes": ["a note / with a slash"],
           "grid": {"data_dir": "/work/data/gutenberg-o200k"}}
    out = portable_tree(row)
    assert out["run_dir"] == "runs/m-s0" and out["metrics"] == "runs/m-s0/metrics.jsonl"
    assert out["grid"]["data_dir"] == "data/gutenberg-o200k"
    assert out["eval"] == row["eval"] and out["notes"] == row["notes"]


def test_data_provenance_reads_the_fingerprint(tmp_path):
    (tmp_path / "meta.json").write_text('{"format": 1, "fingerprint": "abc", "tokenizer": "bpe:300", "vocab_size": 300, '
                                        '"dtype": "uint16", "eot_id": 0, '
                                        '"splits": {"train": {"tokens": 10}, "val": {"tokens": 2}}}')
    d = data_provenance(tmp_path, tmp_path.parent)
    assert d.as_dict() == {"dir": tmp_path.name, "fingerprint": "abc", "tokenizer": "bpe:300", "vocab_size": 300,
                           "train_tokens": 10, "val_tokens": 2}
    assert data_provenance(Path("/nonexistent/x")).fingerprint is None


def test_code_provenance_records_only_what_a_row_may_hold(tmp_path):
    """Round 33 (AD3-AD17): a row's code record is held to its format on reading (``code_field_problem``), so the
    sweep records a versions.json value of another format as null (the file does not say), not as a row that every
    later read would skip as edited."""
    import json

    from leviathan.experiments.machinery.provenance import code_provenance

    (tmp_path / "versions.json").write_text(json.dumps({"git_revision": "zzz not a sha", "leviathan": "0.1.0",
                                                        "torch": "2.5.1+cpu"}))
    assert code_provenance(tmp_path).as_dict() == {"commit": None, "leviathan": "0.1.0", "torch": "2.5.1+cpu"}
    (tmp_path / "versions.json").write_text(json.dumps({"git_revision": "ab" * 20 + "-dirty", "leviathan": "\x00",
                                                        "torch": 2}))
    assert code_provenance(tmp_path).as_dict() == {"commit": "ab" * 20 + "-dirty", "leviathan": None, "torch": None}


def test_code_provenance_names_a_versions_value_it_drops(tmp_path):
    """Round 35 (AH187): a run evaluated again from its folder whose versions.json was damaged ('zzz not a sha',
    a torch version with a newline, or the file not JSON) got a row recording null without a word. Each dropped
    value is reported, naming the file and the field."""
    import json

    from leviathan.experiments.machinery.provenance import code_provenance

    said = []
    (tmp_path / "versions.json").write_text(json.dumps({"git_revision": "zzz not a sha", "leviathan": "0.1.0",
                                                        "torch": "2.13.0+cpu\n"}))
    assert code_provenance(tmp_path, said.append).as_dict() == {"commit": None, "leviathan": "0.1.0", "torch": None}
    assert len(said) == 2 and "versions.json: git_revision 'zzz not a sha'" in said[0] and "code.commit" in said[0]
    assert "torch '2.13.0+cpu\\n'" in said[1] and "code.torch as null" in said[1], said
    said.clear()
    (tmp_path / "versions.json").write_text("{not json")
    assert code_provenance(tmp_path, said.append).as_dict() == {"commit": None, "leviathan": None, "torch": None}
    assert len(said) == 1 and "is not a JSON object of versions" in said[0], said
    said.clear()
    (tmp_path / "versions.json").unlink()  # no file: an older run, quietly null as before
    assert code_provenance(tmp_path, said.append).as_dict() == {"commit": None, "leviathan": None, "torch": None}
    assert said == []

"""Rows of another round that are exactly a run of this grid (experiments.machinery.reuse): matched by what they trained."""

import json

import pytest

from leviathan.config import to_dict
from leviathan.errors import UserError
from leviathan.experiments.machinery.grid import load_grid
from leviathan.experiments.machinery.provenance import DataProvenance
from leviathan.experiments.machinery.results import ResultRow, append_result, read_results
from leviathan.experiments.machinery.reuse import adopt_rows, reusable_rows
from leviathan.experiments.machinery.sweep import grid_snapshot
from leviathan.run_config import load_run_config

DATA = {"dir": "data/bpe512", "fingerprint": "ab" * 32, "fingerprint_version": 2, "tokenizer": "bpe:512",
        "vocab_size": 512}  # a sweep always records its data folder (rows without one are skipped: round 31, Z74)


def config_fn(grid, spec):
    return load_run_config(None, grid.run_overrides(spec), check_data=False)


def grid(name, sizes, experiments, lr=1e-2):
    return load_grid({"name": name, "data": {"dir": "/nonexistent", "vocab_size": 512}, "seeds": [0, 1],
                      "base": {"max_steps": 10, "data.seq_len": 16}, "eval": {"sets": {"val": "val"}, "max_tokens": 100},
                      "sizes": sizes, "experiments": experiments, "variant_run": {"leviathan": {"optim.lr": lr}}})


MODEL = {"preset": "cpu-tiny", "hidden_size": 16, "num_attention_heads": 2}


def source_rows(g, data=DATA):
    """The rows a sweep of ``g`` would have written (their resolved configs), with made-up losses."""
    return [ResultRow.from_dict({"name": s.name, "variant": s.variant, "size": s.size, "seed": s.seed,
                                 "regimes": s.regimes, "grid": g.name, "eval": {"val": {"loss": 5.0 + s.seed}},
                                 "config": to_dict(config_fn(g, s).resolved()), "data": data,
                                 "code": {"commit": "c0ffee"}}) for s in g.runs]


def test_rows_that_trained_the_same_run_are_reused_under_its_name():
    old = grid("old", {"d16": MODEL}, {"iso_body": {"variants": ["dense_untied", "leviathan"], "sizes": ["d16"]}})
    new = grid("new", {"d16": MODEL, "d16-pick": MODEL, "d32": {**MODEL, "hidden_size": 32}},
               {"iso_body": {"variants": ["dense_untied"], "sizes": ["d16", "d32"]},
                "iso_body:gen": {"variants": ["leviathan"], "sizes": ["d16-pick"]}})
    rows = reusable_rows(new, new.runs, source_rows(old), DataProvenance(**DATA), config_fn, "results/old")
    assert sorted(r.name for r in rows) == ["d16-dense_untied-s0", "d16-dense_untied-s1", "d16-pick-leviathan-s0",
                                            "d16-pick-leviathan-s1"]
    lev = next(r for r in rows if r.name == "d16-pick-leviathan-s1")
    assert lev.size == "d16-pick" and lev.grid == "new" and lev.loss() == 6.0 and lev.code.commit == "c0ffee"
    assert lev.notes == ["reused: trained as d16-leviathan-s1 in results/old (grid old); the same settings, data and "
                         "evaluation as this grid's run"]
    # another lr, other data, or another seed is not the same run
    other_lr = grid("new", {"d16-pick": MODEL}, {"iso_body": {"variants": ["leviathan"], "sizes": ["d16-pick"]}},
                    lr=3e-3)
    assert reusable_rows(other_lr, other_lr.runs, source_rows(old), DataProvenance(**DATA), config_fn, "x") == []
    moved = source_rows(old, data={**DATA, "fingerprint": "cd" * 32})
    assert reusable_rows(new, new.runs, moved, DataProvenance(**DATA), config_fn, "x") == []


def test_adopt_rows_appends_once_and_refuses_a_source_that_evaluated_otherwise(tmp_path, monkeypatch):
    old = grid("old", {"d16": MODEL}, {"iso_body": {"variants": ["dense_untied"], "sizes": ["d16"]}})
    new = grid("new", {"d16": MODEL, "d32": {**MODEL, "hidden_size": 32}},
               {"iso_body": {"variants": ["dense_untied"], "sizes": ["d16", "d32"]}})
    monkeypatch.setattr("leviathan.experiments.machinery.sweep.data_provenance", lambda d: DataProvenance(**DATA))
    src = tmp_path / "old"
    src.mkdir()
    (src / "grid.json").write_text(json.dumps(grid_snapshot(old)))
    for r in source_rows(old):
        append_result(src / "results.jsonl", r)
    out = tmp_path / "new"
    empty = tmp_path / "empty"  # a round that has no rows yet: nothing to reuse, not an error
    empty.mkdir()
    notes = []
    assert adopt_rows(new, new.runs, [empty], out, DataProvenance(**DATA), config_fn, log=notes.append) == []
    assert notes == [f"--reuse {empty}: no rows there yet; nothing reused from it"]
    added = adopt_rows(new, new.runs, [src], out, DataProvenance(**DATA), config_fn, log=lambda s: None)
    assert [r.name for r in added] == ["d16-dense_untied-s0", "d16-dense_untied-s1"]
    assert adopt_rows(new, new.runs, [src], out, DataProvenance(**DATA), config_fn, log=lambda s: None) == []
    assert [r.name for r in read_results(out)] == ["d16-dense_untied-s0", "d16-dense_untied-s1"]
    snap = grid_snapshot(old)
    snap["eval_options"]["max_tokens"] = 200
    (src / "grid.json").write_text(json.dumps(snap))
    with pytest.raises(UserError, match="did not evaluate as grid 'new' does"):
        adopt_rows(new, new.runs, [src], tmp_path / "other", DataProvenance(**DATA), config_fn, log=lambda s: None)

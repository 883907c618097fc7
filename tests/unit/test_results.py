"""Typed results rows: old rows load (missing keys -> None), unknown keys survive a rewrite, one regime map."""

import json
import math

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.model.accounting import ParamCounts
from leviathan.eval.result import EvalResult
from leviathan.experiments.machinery.results import (BASELINES, COMPARISONS, ResultRow, append_result,
                                           baseline_of, comparison_groups, json_safe, read_results)

OLD_ROW = {  # a row as an early sweep wrote it: no curve, no model, no regimes list, a key this version never knew
    "name": "s-leviathan-s0", "regime": "iso_body", "variant": "leviathan", "size": "s", "seed": 0,
    "params": {"input": 10, "body": 20, "head": 30, "total": 60, "tied": False},
    "eval": {"val": {"loss": 2.0, "ppl": math.exp(2.0)}}, "tokens_per_s": 100, "final_val_loss": 2.1,
    "hardware": "a string, as very old rows had", "legacy_field": {"kept": [1, 2]},
}


def test_an_old_row_loads_with_defaults_and_typed_access():
    row = ResultRow.from_dict(OLD_ROW)
    assert row.curve is None and row.model is None and row.regimes == [] and row.notes == []
    assert row.all_regimes == ["iso_body"] and row.in_regime("iso_body") and not row.in_regime("scaling")
    assert row.params == ParamCounts(input=10, body=20, head=30, total=60, tied=False)
    assert row.eval["val"] == EvalResult(loss=2.0, ppl=math.exp(2.0))
    assert row.loss("val") == 2.0 and row.bpb("val") is None and row.loss("wikitext2") is None
    assert row.hardware_key() == "a string, as very old rows had"
    assert isinstance(row.tokens_per_s, int)  # values stay as written
    assert row.extra == {"legacy_field": {"kept": [1, 2]}}


def test_val_loss_falls_back_to_the_training_loops_final_validation():
    row = ResultRow.from_dict({**OLD_ROW, "eval": {}})
    assert row.loss("val") == 2.1 and row.loss("ptb") is None


def test_rewriting_a_row_loses_nothing(tmp_path):
    path = tmp_path / "results.jsonl"
    append_result(path, OLD_ROW)
    (row,) = read_results(tmp_path)
    written = json.loads(path.read_text())
    for key, value in OLD_ROW.items():
        if key == "eval":  # eval entries gain their missing fields as null
            assert written[key]["val"] == {"loss": 2.0, "ppl": math.exp(2.0), "bpb": None, "tokens": None,
                                           "targets_outside": None, "share_outside": None}
        else:
            assert written[key] == value, key
    assert written["curve"] is None and written["regimes"] == []
    append_result(path, row)  # read and written again: the same line
    first, second = path.read_text().splitlines()
    assert first == second



def test_a_rows_evaluation_is_typed_and_rewrites_byte_for_byte(tmp_path):
    """``evaluation`` reads as ``identity.Evaluation`` (keys it does not know kept), and the line it was read from
    is the line written back; a row without one reads None."""
    from leviathan.experiments.machinery.identity import Evaluation, EvaluationOptions, evaluation_differences

    evaluation = {"sets": {"val": {"split": "val", "text": None, "later": 1}},
                  "options": {"seq_len": 32, "max_tokens": 400, "buckets": 2, "bucket_method": "mass",
                              "bucket_sets": None}, "later": [2]}
    path = tmp_path / "results.jsonl"
    append_result(path, {**OLD_ROW, "evaluation": evaluation})
    (row,) = read_results(tmp_path)
    assert isinstance(row.evaluation, Evaluation) and row.evaluation.options.max_tokens == 400
    assert row.evaluation.sets["val"].split == "val" and row.evaluation.extra == {"later": [2]}
    append_result(path, row)
    first, second = path.read_text().splitlines()
    assert first == second and json.loads(first)["evaluation"] == evaluation
    now = Evaluation(row.evaluation.sets, EvaluationOptions(32, 300, 2, "mass"))
    assert evaluation_differences(row.evaluation, now) == ["eval.max_tokens: 400 in the row, 300 now"]
    assert ResultRow.from_dict(OLD_ROW).evaluation is None


@pytest.mark.parametrize("evaluation", [{"sets": [1]}, {"sets": {"val": None}}, {"options": "x"}])
def test_a_damaged_evaluation_is_reported_and_skipped(tmp_path, evaluation):
    notes = []
    (tmp_path / "results.jsonl").write_text(json.dumps({**OLD_ROW, "evaluation": evaluation}) + "\n")
    assert read_results(tmp_path, notes.append) == []
    assert "not eval sets and options" in notes[0]

def test_a_row_reads_by_attribute_and_its_dict_is_what_is_written():
    """Rows are no longer a Mapping (issue 20): the fields are attributes, ``to_dict`` is the written form."""
    from collections.abc import Mapping

    row = ResultRow.from_dict(OLD_ROW)
    assert row.eval["val"].loss == 2.0 and row.params.total == 60
    assert row.extra["legacy_field"] == {"kept": [1, 2]} and row.extra.get("missing", "default") == "default"
    written = row.to_dict()
    assert "name" in written and "curve" in written and "missing" not in written
    assert written["eval"]["val"]["loss"] == 2.0 and written["params"]["total"] == 60
    assert written["legacy_field"] == {"kept": [1, 2]}
    assert not isinstance(row, Mapping)
    with pytest.raises(TypeError):
        row["name"]  # noqa: B018
    with pytest.raises(KeyError):
        written["missing"]  # noqa: B018
    with pytest.raises(UserError, match="name"):
        ResultRow.from_dict({"variant": "leviathan"})


def test_json_safe_makes_strict_json():
    data = json_safe({"a": float("nan"), "b": np.float32(1.5), "c": np.arange(2), "d": (1, np.int64(2)),
                      "e": [float("inf")], "row": ResultRow(name="x")})
    assert data["a"] is None and data["b"] == 1.5 and data["c"] == [0, 1] and data["d"] == [1, 2]
    assert data["e"] == [None] and data["row"]["name"] == "x"
    json.dumps(data, allow_nan=False)


def test_one_regime_map():
    assert dict(COMPARISONS) == BASELINES == {"iso_body": "dense_tied", "isoparametric": "dense_untied",
                                              "variants": "dense_untied"}
    assert baseline_of("isoparametric") == "dense_untied" and baseline_of("an-ablation-label") == "dense_tied"
    rows = [ResultRow.from_dict({**OLD_ROW, "name": f"{size}-{variant}-s{seed}", "variant": variant, "size": size,
                                 "seed": seed, "params": {"total": total}})
            for size, total in (("m", 200), ("s", 100)) for variant in ("dense_tied", "leviathan") for seed in (1, 0)]
    groups = comparison_groups(rows, "iso_body")
    assert list(groups) == [("s", 0), ("s", 1), ("m", 0), ("m", 1)]  # smallest models first, then seed
    assert set(groups[("s", 0)]) == {"dense_tied", "leviathan"}
    assert comparison_groups(rows, "isoparametric") == {}


def test_cli_and_result_readers_do_not_import_torch():
    """`leviathan --help`, the verb table and the result readers stay light: torch loads only when a verb needs it."""
    import subprocess
    import sys

    code = ("import sys, leviathan, leviathan.cli, leviathan.experiments.machinery.results, leviathan.experiments.method.paired, "
            "leviathan.train.metrics; leviathan.cli.build_parser(); "
            "assert 'torch' not in sys.modules, 'torch was imported'; "
            "from leviathan import ModelConfig; assert ModelConfig.__name__ == 'ModelConfig'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_every_lazily_exported_name_loads():
    import leviathan
    import leviathan.train

    for package in (leviathan, leviathan.train):
        for name in package.__all__:
            assert getattr(package, name) is not None, name
            assert name in dir(package)
        with pytest.raises(AttributeError, match="no attribute"):
            package.not_a_name  # noqa: B018


def test_read_results_of_a_folder_that_is_not_there_names_it(tmp_path):
    """Issue 30 round 15 (B204): ``read_results("nonexist")`` (a mistyped path) returned [] without a word, while
    ``read_results(None)`` named what to pass. A sweep folder whose results.jsonl is not written yet is still [] (one
    with its grid.json: a folder with nothing of a sweep is refused since round 28, U603)."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results

    with pytest.raises(UserError, match=f"results '{tmp_path / 'nonexist'}' does not exist; pass a sweep output dir"):
        read_results(tmp_path / "nonexist")
    (tmp_path / "grid.json").write_text("{}")
    assert read_results(tmp_path) == [] and read_results(tmp_path / "results.jsonl") == []

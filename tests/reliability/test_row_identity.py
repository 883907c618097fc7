"""Everything that changes what a results row measures is part of its identity (issue 30, kind 4): how it was
evaluated joins the drift check, shards started with different settings are not merged, and a run with two rows
in one report is resolved by a stated rule, which the report states (``experiments.machinery.identity``).

Before, rows evaluated on 400 and on 300 tokens shared a results file, a shard started with its own
``optim.lr=...`` merged into one report, and a run that appeared twice was reported from its last row, all
without a word; a row holding NaN was read as a number.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from leviathan.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, copied_sweep, grid_file, one_error, tree_hashes  # noqa: E402,F401

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(two_run_sweep, tmp_path_factory) -> Path:
    """A finished sweep of ``grid_file``'s two runs (real training and evaluation)."""
    return copied_sweep(two_run_sweep, tmp_path_factory, "identity")


@pytest.fixture
def sweep_copy(swept, tmp_path) -> Path:
    return Path(shutil.copytree(swept, tmp_path / "sweep"))


def fails(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 2
    return one_error(capsys.readouterr().err)


def test_rows_record_how_they_were_evaluated(swept):
    row = json.loads((swept / "results.jsonl").read_text().splitlines()[0])
    assert row["evaluation"] == {"sets": {"val": {"split": "val", "text": None}},
                                 "options": {"seq_len": 32, "max_tokens": 400, "buckets": 2, "bucket_method": "mass",
                                             "bucket_sets": None}}


def test_a_changed_eval_section_is_refused_before_anything_is_written(capsys, data, sweep_copy, tmp_path):
    before = (sweep_copy / "grid.json").read_text()
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, max_tokens=300), "--out", sweep_copy)
    assert "a-dense_tied-s0: eval.max_tokens: 400 in the row, 300 now" in line
    assert (sweep_copy / "grid.json").read_text() == before
    assert "eval.buckets: 2 in the row, 3 now" in fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, buckets=3),
                                                        "--out", sweep_copy)
    # the batch size changes how fast, not what: accepted
    assert main(["sweep", "--grid", str(grid_file(tmp_path, data, batch_size=2)), "--out", str(sweep_copy)]) == 0


def _lines(sweep: Path) -> list[str]:
    return (sweep / "results.jsonl").read_text().splitlines()


def test_a_run_twice_with_the_same_measurement_is_counted_once_and_the_report_says_so(capsys, sweep_copy):
    lines = _lines(sweep_copy)
    (sweep_copy / "results.jsonl").write_text("\n".join(lines + lines[:1]) + "\n")
    assert main(["report", str(sweep_copy), "--bootstrap", "10"]) == 0
    note = "run 'a-dense_tied-s0' appears 2 times in"
    assert note in capsys.readouterr().err
    md = (sweep_copy / "report" / "report.md").read_text()
    assert "Notes on the rows:" in md and note in md and "counted once (the first)" in md
    assert "(2 runs)" in md


def test_a_run_with_two_different_rows_is_refused(capsys, sweep_copy):
    lines = _lines(sweep_copy)
    other = json.loads(lines[0])
    other["eval"]["val"]["loss"] += 0.25
    other["eval"]["val"]["ppl"] = math.exp(other["eval"]["val"]["loss"])  # a consistent row, not a damaged one:
    for b in (other.get("buckets") or {}).values():  # its buckets are the same evaluation's (round 26, P14)
        b["overall_loss"] += 0.25
        b["loss"] = [x if x is None else x + 0.25 for x in b["loss"]]
        b["ppl"] = [x if x is None else math.exp(x) for x in b["loss"]]
    (sweep_copy / "results.jsonl").write_text("\n".join(lines + [json.dumps(other)]) + "\n")
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "10")
    assert "run 'a-dense_tied-s0' has two different rows in" in line
    assert "(line 1 and line 3; they differ in eval, buckets)" in line
    assert "delete the other row" in line
    assert not (sweep_copy / "report").exists()


def test_rows_evaluated_differently_do_not_share_a_report(capsys, sweep_copy):
    lines = _lines(sweep_copy)
    other = json.loads(lines[1])
    other["evaluation"]["options"]["max_tokens"] = 131072
    (sweep_copy / "results.jsonl").write_text("\n".join([lines[0], json.dumps(other)]) + "\n")
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "10")
    assert "were evaluated differently (eval.max_tokens: 400 for a-dense_tied-s0, 131072 for a-dense_untied-s0)" in line


def test_shards_started_with_different_settings_are_not_merged(capsys, data, tmp_path):
    grid = grid_file(tmp_path, data)
    assert main(["sweep", "--grid", str(grid), "--shard", "1/2", "--out", str(tmp_path / "s1")]) == 0
    assert main(["sweep", "--grid", str(grid), "--shard", "2/2", "--out", str(tmp_path / "s2"), "optim.lr=0.05"]) == 0
    line = fails(capsys, "report", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "r", "--bootstrap", "10")
    assert "were started with different settings (base overrides [] only in" in line
    assert "['optim.lr=0.05'] only in" in line and not (tmp_path / "r").exists()


@pytest.mark.parametrize("line, why", [
    ('{"name": "x", "eval": {"val": {"loss": NaN}}}', "holds NaN or infinity"),
    ("[1, 2]", "is not a results row (a JSON object with a name), but a JSON list"),
    ('{"name": "x", "eval": {"val": {"loss": "low"}}}', "has eval.val.loss 'low', not a number"),
    ('{"name": "x", "steps": -1.5}', "has steps -1.5, not a whole number"),
], ids=["nan", "array", "text-loss", "steps"])
def test_a_damaged_row_is_reported_and_skipped(capsys, sweep_copy, line, why):
    with open(sweep_copy / "results.jsonl", "a") as f:
        f.write(line + "\n")
    assert main(["report", str(sweep_copy), "--bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert f"results.jsonl:3: line 3 {why}" in err and "skipped" in err and "Traceback" not in err


# Every typed field of a row, hand-edited in a real row of the sweep (issue 30 round 4): a params.total of "x" and a
# variant of null ended in tracebacks of the report; an evaluation, config or size of the wrong type, negative tokens
# and a curve of text passed unchecked.
@pytest.mark.parametrize("key, value, why", [
    ("params", {"total": "x"}, "has params.total 'x', not a count"),
    ("variant", None, "has variant None in regime 'iso_body', not a variant name"),
    ("evaluation", "abc", "has evaluation 'abc', not an object"),
    ("config", [1], "has config [1], not an object"),
    ("size", 5, "has size 5, not a name"),
    ("tokens", -100, "has tokens -100, not a whole number >= 0"),
    ("curve", {"tokens": [1], "val_loss": ["a"]}, "has curve.val_loss ['a'], not a list of numbers"),
    ("regimes", "iso_body", "has regimes 'iso_body', not a list of names"),
], ids=["params", "variant", "evaluation", "config", "size", "tokens", "curve", "regimes"])
def test_a_mistyped_field_of_a_real_row_is_reported_and_skipped(sweep_copy, key, value, why):
    from reliability_support import cli

    path = sweep_copy / "results.jsonl"
    first, second = path.read_text().splitlines()
    row = json.loads(second)
    row[key] = value
    path.write_text(first + "\n" + json.dumps(row) + "\n")
    proc = cli(["report", sweep_copy, "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"results.jsonl:2: line 2 {why}; skipped" in proc.stderr, proc.stderr


def test_a_damaged_second_line_of_a_run_with_a_sound_row_says_that_row_is_read(capsys, sweep_copy):
    """Round 19 (H95, H96): a copy of a row with its loss edited was skipped "its run has no result here (the sweep
    trains or evaluates it again ...)", while the run's sound row on another line was read and reported. A skipped
    line of a run that has a sound row says so; a line of a run without one keeps the old consequence."""
    from leviathan.experiments.machinery.results import read_results

    path = sweep_copy / "results.jsonl"
    first, second = path.read_text().splitlines()
    copy = json.loads(second)
    copy["final_val_loss"] -= 1
    lone = dict(copy, name="a-dense_untied-s9", seed=9)
    path.write_text("\n".join([first, second, json.dumps(copy), json.dumps(lone)]) + "\n")
    assert sorted(r.name for r in read_results(sweep_copy)) == ["a-dense_tied-s0", "a-dense_untied-s0"]
    err = capsys.readouterr().err
    assert (f"{path}:3: line 3 has final_val_ppl" in err and "skipped, the sound row of its run 'a-dense_untied-s0' "
            "(line 2) is read instead; delete this line" in err), err
    assert f"{path}:4: line 4 has final_val_ppl" in err and "line 4" in err.split("its run has no result here")[0], err


# Round 5: a row of well-typed fields that still cannot be. A loss of -3 made a report, a params.total of 1 gave an
# input share of 480,000%, lists of different lengths were cut short, a loss measured on 0 tokens passed; all exit 0.
def _edit_second_row(path: Path, change) -> None:
    first, second = path.read_text().splitlines()
    row = json.loads(second)
    change(row)
    path.write_text(first + "\n" + json.dumps(row) + "\n")


@pytest.mark.parametrize("change, why", [
    (lambda r: r["eval"]["val"].update(loss=-3.0), "has eval.val.loss -3.0, not a number >= 0"),
    (lambda r: r.update(final_val_loss=-0.5), "has final_val_loss -0.5, not a number >= 0"),
    (lambda r: r["eval"]["val"].update(tokens=0), "has eval.val.loss from eval.val.tokens 0"),
    (lambda r: r["buckets"]["val"].update(loss=[5.0]), "has buckets.val lists of different lengths (loss 1, ppl 2"),
    (lambda r: r["curve"].update(tokens=[1, 2, 3]), "has curve lists of different lengths (tokens 3, val_loss 1)"),
    (lambda r: r["params"].update(total=1), "has params.total 1, not the sum of its parts"),
    # round 7 (B94): a perplexity edited apart from its loss was shown in the report's table of final losses
    (lambda r: r["eval"]["val"].update(ppl=2.0), "has eval.val.ppl 2.0, not exp(eval.val.loss) = "),
    (lambda r: r.update(final_val_ppl=2.0), "has final_val_ppl 2.0, not exp(final_val_loss) = "),
    # round 8 (R1, R8, R3): a name that is a path was joined to runs/ and embeddings/ (a record written outside the
    # sweep); a fingerprint version no prepare writes was matched as version 1
    (lambda r: r.update(name="../../x"), "has name '../../x', not a run's folder name (no '/' or control character, not '.' or '..')"),
    (lambda r: r["data"].update(fingerprint_version=3), "has a data fingerprint prepare never writes (its data: "
                                                         "field 'fingerprint_version' is 3, expected 1 or 2)"),
    # round 8 left (R5): a commit that is not text passed
    (lambda r: r["code"].update(commit=42), "has code.commit 42, not text"),
    (lambda r: r["data"].update(train_tokens="8666"), "has data.train_tokens '8666', not a whole number >= 0"),
    # round 9 (M26): negative token counts in the curve ended in a TypeError traceback in `analyze efficiency`
    (lambda r: r["curve"].update(tokens=[-5] * len(r["curve"]["tokens"])), "has curve.tokens [-5"),
    (lambda r: r["curve"].update(grad_tokens=[256, 128], grad_norm_input=[1.0, 1.0], grad_norm_head=[1.0, 1.0]),
     "has curve.grad_tokens [256, 128], not token counts >= 0 in training order"),
    (lambda r: r["buckets"]["val"].update(count=[-3, 5]), "has buckets.val.count [-3, 5], not token counts >= 0"),
    # round 9 left (N53): training tokens edited away from steps x batch_tokens were reported as written
    (lambda r: r.update(tokens=999_999), "has tokens 999999, not its 2 steps x config.batch_tokens 128 = 256"),
    (lambda r: r.update(tokens=100, notes=["resumed from its step-1 checkpoint: wall_time_s and tokens_per_s cover "
                                           "steps 2-2"]),
     "has tokens 100, fewer than its steps 2-2 x config.batch_tokens 128 after its resume, plus one per earlier "
     "step = 129"),
    # round 10 (P49, P58, P65): steps apart from the config's, a curve past the row's tokens, a final loss apart from
    # the curve's last validation
    (lambda r: r["config"].update(max_steps=3), "has steps 2, not the 3 its config trains (config.max_steps 3"),
    (lambda r: r["curve"].update(tokens=[t * 2 for t in r["curve"]["tokens"]]),
     "has curve.tokens up to 512 tokens, past the 256 the row trained"),
    (lambda r: r.update(final_val_loss=1.0, final_val_ppl=math.e), "has final_val_loss 1.0, not the last validation "
                                                                   "of its curve"),
    # round 10 (P59): counts edited with their sum kept right went into the parameter table
    (lambda r: r["params"].update(input=r["params"]["input"] + 10, total=r["params"]["total"] + 10),
     "has params.input 4,810, not the 4,800 its config's model has"),
    # round 10 (Q16): a loss past exp's range beside a finite ppl ended in an OverflowError as the warning was worded
    (lambda r: r["eval"]["val"].update(loss=800.0, ppl=1e308), "has eval.val.ppl 1e+308, not exp(eval.val.loss) = inf"),
    # round 10 (Q17): a curve past the row's tokens was "reaches ... after 1,000,000,000 tokens vs 256"
    (lambda r: r["curve"]["tokens"].__setitem__(-1, 10**9), "has curve.tokens up to 1000000000 tokens, past the "),
    # round 11 (S22, S23): an untied model with a head of 0 parameters, a wall time of 1e308 s, were reported
    (lambda r: r["params"].update(head=0, total=r["params"]["input"] + r["params"]["body"]),
     "has params.tied False beside params.head 0: a tied head is counted in input (head 0), an untied one is not "
     "empty"),
    (lambda r: r.update(wall_time_s=1e308), "has wall_time_s 1e+308, longer than the clock has run since 1970"),
    # round 12 (U216, U219, U17): a bucket description, a config section, a config count of the wrong kind ended in
    # AttributeErrors of report and analyze, or passed
    (lambda r: r["buckets"]["val"].update(buckets="x"), "has buckets.val.buckets 'x', not a bucket description"),
    (lambda r: r["config"].update(model="x"), "has config.model 'x', not a section of a run config (an object)"),
    (lambda r: r["config"].update(max_steps="2"), "has config.max_steps '2', not a whole number >= 0"),
    # round 15 (B217): a negative gradient norm went into the ablation's gradient column
    (lambda r: r["curve"].update(grad_norm_input=[-1.0, 2.0]), "has curve.grad_norm_input [-1.0, 2.0], not gradient "
                                                               "norms >= 0"),
    # round 15 (B282, B283, B285): a bucket definition edited apart from the vocabulary, the targets, the options
    (lambda r: r["buckets"]["val"]["buckets"].update(num_ids=[1, 1]), "has buckets.val.buckets.num_ids [1, 1] (sum "
                                                                      "2), not a split of its 300-id vocabulary"),
    (lambda r: r["buckets"]["val"].update(count=[1, 1]), "has buckets.val.count [1, 1] (sum 2), not the "
                                                         "eval.val.tokens 400 it was measured on"),
    (lambda r: r["buckets"]["val"]["buckets"].update(method="log"), "has buckets.val.buckets.method 'log', not its "
                                                                    "evaluation.options.bucket_method 'mass'"),
    # round 15 (B211): numbers of a set the row's evaluation did not measure
    (lambda r: r["eval"].update(ptb=dict(r["eval"]["val"])), "has eval.ptb but no evaluation.sets.ptb"),
    # round 20 (M71's side note): a set scoring more tokens than the evaluation's own cap
    (lambda r: r["eval"]["val"].update(tokens=500), "has eval.val.tokens 500, more than its "
                                                    "evaluation.options.max_tokens 400 allows"),
    # round 21 (P571, P572, P551): a model summary apart from its config, a thread count of 0, a final loss null
    # beside its curve were read without a word
    (lambda r: r["model"].update(num_attention_heads=4), "has model.num_attention_heads 4 but its config says "
                                                         "model.num_attention_heads: 2"),
    (lambda r: r["hardware"].update(torch_threads=0), "has hardware.torch_threads 0, not a whole number >= 1"),
    (lambda r: r.update(final_val_loss=None, final_val_ppl=None), "has final_val_loss null (a NaN written as null, "
                                                                  "or an edit), though its curve's last validation"),
], ids=["eval-loss", "final-loss", "no-tokens", "buckets", "curve", "params-sum", "ppl-not-exp-loss",
        "final-ppl-not-exp-loss", "name-a-path", "fingerprint-version", "commit-a-number", "data-count-as-text",
        "curve-tokens-negative", "curve-tokens-backwards", "bucket-count-negative", "tokens-not-steps-x-batch",
        "tokens-of-a-resumed-row-too-few", "steps-not-configs", "curve-past-tokens", "final-loss-not-curves",
        "params-not-configs", "loss-past-exp", "curve-past-the-row", "untied-head-of-0", "wall-time-past-the-clock",
        "bucket-description-text", "config-section-text", "config-count-text", "B217-grad-norm-negative",
        "B282-num-ids", "B283-count", "B285-method", "B211-eval-set-not-measured",
        "M71-tokens-past-max-tokens", "P571-model-not-configs", "P572-threads-0", "P551-final-loss-null"])
def test_a_real_row_with_an_impossible_value_is_reported_and_skipped(sweep_copy, change, why):
    from reliability_support import cli

    _edit_second_row(sweep_copy / "results.jsonl", change)
    proc = cli(["report", sweep_copy, "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"results.jsonl:2: line 2 {why}" in proc.stderr and "skipped" in proc.stderr, proc.stderr


@pytest.mark.parametrize("change, why", [
    (lambda r: r.pop("data"), "has no data beside its code"),
    (lambda r: r.update(data={}), "has data {} beside its code"),
    (lambda r: r.update(data=None), "has no data beside its code"),
], ids=["removed", "empty", "null"])
def test_a_row_whose_data_was_removed_is_reported_and_skipped(sweep_copy, change, why):
    """Round 30 (X75): a row of this version (config, code, evaluation) whose whole ``data`` object was removed or set
    to {} was reported beside the other run without a word, while a fingerprint removed inside ``data`` was skipped and
    named. The sweep writes config, code and data together, data always with its folder: the line is named, skipped."""
    from reliability_support import cli

    _edit_second_row(sweep_copy / "results.jsonl", change)
    proc = cli(["report", sweep_copy, "--bootstrap", "5", "--out", sweep_copy / "rp"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "results.jsonl:2: line 2 has " in proc.stderr and why in proc.stderr and "skipped" in proc.stderr, \
        proc.stderr


def test_a_row_from_before_provenance_still_reads(sweep_copy, capsys):
    """X75's rule reads a row without config, code and data (written before rows recorded provenance) as before."""
    from leviathan.experiments.machinery.results import read_results

    _edit_second_row(sweep_copy / "results.jsonl", lambda r: [r.pop(k) for k in ("config", "code", "data")])
    assert len(read_results(sweep_copy)) == 2 and "skipped" not in capsys.readouterr().err


@pytest.mark.parametrize("change, why", [
    (lambda r: r.pop("config"), "has no config beside its code and data"),
    (lambda r: r.update(config={}), "has config {} beside its code and data"),
    (lambda r: r.update(code={}), "has code {} beside its data"),
    (lambda r: r["data"].update(dir=None), "has data.dir None, where the sweep always records its data folder"),
    (lambda r: r.update(code={"commit": ""}), "has code.commit '', where the sweep records the run's commit as text"),
    (lambda r: r.update(code={"note": "x"}), "has code {'note': 'x'} with no commit and no leviathan or torch"),
], ids=["config-removed", "config-empty", "code-empty", "data-dir-null", "code-commit-emptied", "code-fields-gone"])
def test_a_row_missing_part_of_its_provenance_is_named_and_skipped(capsys, sweep_copy, change, why):
    """Round 31 (Z74, Z75, Z155): X75's kind beyond data: a row whose config or code was removed or emptied beside
    the rest of its provenance, or whose data.dir was set to null, was read by report and analyze without a word (as
    a row "written before rows carried one"). The sweep writes config, code and data together: named and skipped."""
    from leviathan.experiments.machinery.results import read_results

    _edit_second_row(sweep_copy / "results.jsonl", change)
    assert [r.name for r in read_results(sweep_copy)] == ["a-dense_tied-s0"]
    err = capsys.readouterr().err
    assert "results.jsonl:2: line 2 " in err and why in err and "skipped" in err, err


def test_a_sweep_over_rows_whose_config_was_removed_leaves_grid_json_alone(capsys, data, sweep_copy, tmp_path):
    """Round 31 (Z76, near damage): rows whose config was removed (code and data kept) were "rows written before
    rows carried one": the drift check skipped them and the sweep rewrote grid.json with the new grid's lr, so the
    folder recorded a learning rate its runs never trained with. The rows are skipped as damaged now, and their run
    folders' checkpoints are checked against the grid before grid.json is written; collect_results.py (Z145, Z146)
    names them too."""
    import yaml

    rows = [json.loads(line) for line in (sweep_copy / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("config")
    (sweep_copy / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = (sweep_copy / "grid.json").read_text()
    grid = grid_file(tmp_path, data)
    g = yaml.safe_load(grid.read_text())
    g["base"]["optim"] = {"lr": 0.1}
    grid.write_text(yaml.safe_dump(g))
    line = fails(capsys, "sweep", "--grid", grid, "--out", sweep_copy)
    assert "optim.lr" in line and "0.1" in line, line
    assert (sweep_copy / "grid.json").read_text() == before
    proc = _collect_results(sweep_copy, "--dest", tmp_path / "res")
    assert "has no config beside its code and data" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_sweep_over_rows_without_evaluation_settings_holds_them_to_grid_json(capsys, data, sweep_copy, tmp_path):
    """Round 31 (Z77): rows whose evaluation settings were removed (config, code, data kept) were "written before
    rows carried them": a sweep with another eval.max_tokens was taken with that note and grid.json rewritten. The
    folder's grid.json stands in for what those rows do not record: refused, nothing written; the same grid passes."""
    rows = [json.loads(line) for line in (sweep_copy / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("evaluation")
    (sweep_copy / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = (sweep_copy / "grid.json").read_text()
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, max_tokens=300), "--out", sweep_copy)
    assert "evaluates otherwise than the grid.json of " in line and "eval.max_tokens: 400 in grid.json, 300 now" in \
        line and "2 row(s) that record no evaluation settings" in line, line
    assert (sweep_copy / "grid.json").read_text() == before
    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(sweep_copy)]) == 0


def test_a_resumed_rows_tokens_may_include_an_earlier_sessions_other_batch(sweep_copy):
    """Round 9 left (N53): a row's tokens must be its steps x batch_tokens, except a run the sweep resumed (its note
    says from which step), whose earlier session may have trained with another batch: that row is reported."""
    from reliability_support import cli

    note = "resumed from its step-1 checkpoint: wall_time_s and tokens_per_s cover steps 2-2"
    _edit_second_row(sweep_copy / "results.jsonl", lambda r: r.update(tokens=320, notes=[note]))
    proc = cli(["report", sweep_copy, "--bootstrap", "5"])
    assert proc.returncode == 0 and "skipped" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def _halve_eval_tokens(row: dict) -> None:
    row["eval"]["val"]["tokens"] //= 2
    count, tokens = row["buckets"]["val"]["count"], row["eval"]["val"]["tokens"]  # the bucket counts sum to the
    count[:] = [tokens // len(count)] * (len(count) - 1) + [tokens - tokens // len(count) * (len(count) - 1)]  # B283


def _lr_half(row: dict) -> None:
    row["config"]["optim"]["lr"] = 0.5


@pytest.mark.parametrize("change, said", [
    (lambda r: r["data"].update(val_tokens=99), "one data fingerprint but what they record of that data differs "
                                                "(val_tokens: "),
    (lambda r: r["data"].update(tokenizer="gpt2"), "(tokenizer: 'bpe:300' for a-dense_tied-s0, 'gpt2' for "),
    (_halve_eval_tokens, " targets for a-dense_tied-s0, "),
    (lambda r: r["eval"]["val"].update(bpb=0.001), "eval.val: bpb / loss "),
    (_lr_half, "trained with different settings that their grid 'tiny' sets alike for every run (optim.lr: "),
], ids=["val-tokens", "tokenizer", "eval-targets", "bpb", "lr"])
def test_rows_that_record_one_data_and_one_grid_but_other_numbers_are_refused(capsys, sweep_copy, tmp_path, change,
                                                                              said):
    """Round 10 (P46-P48, P61, P64): one row's data summary, eval token count, bits per byte or a setting the grid
    sets alike for every run, edited, was reported beside the others (exit 0). Rows of one data fingerprint and one
    evaluation scored the same windows; a grid's base settings are every run's: report and analyze refuse, naming
    both rows."""
    _edit_second_row(sweep_copy / "results.jsonl", change)
    assert said in fails(capsys, "report", sweep_copy, "--out", tmp_path / "r")
    assert said in fails(capsys, "analyze", "compare", sweep_copy)
    assert not (tmp_path / "r").exists()


def test_a_row_pasted_under_a_run_the_grid_does_not_list_is_held_to_its_base_settings(capsys, sweep_copy, tmp_path):
    """Round 10 (P50): a row of the same grid trained with max_steps=3, renamed to seed 1 (a run grid.json does not
    list), was reported beside the 2-step rows."""
    first = json.loads((sweep_copy / "results.jsonl").read_text().splitlines()[0])
    steps = first["steps"] + 1
    pasted = {**first, "name": "a-dense_tied-s1", "seed": 1, "steps": steps, "tokens": steps * 128,
              "config": {**first["config"], "seed": 1, "max_steps": steps}}
    with open(sweep_copy / "results.jsonl", "a") as f:
        f.write(json.dumps(pasted) + "\n")
    line = fails(capsys, "report", sweep_copy, "--out", tmp_path / "r")
    assert "sets alike for every run (max_steps: 2 for a-dense_tied-s0, 3 for a-dense_tied-s1)" in line, line


def test_rows_copied_under_other_seeds_make_no_verdict(sweep_copy):
    """Round 5: both rows copied as seed 1 (name and seed edited, their config still seed 0) made two identical 'seeds'
    and a 'better' verdict with an interval of zero width. The row's seed must be its config's."""
    from reliability_support import cli

    path = sweep_copy / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    copies = [{**r, "name": r["name"].replace("-s0", "-s1"), "seed": 1} for r in rows]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + copies))
    proc = cli(["report", sweep_copy, "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "line 3 has seed 1 but its config says seed: 0" in proc.stderr
    assert "line 4 has seed 1 but its config says seed: 0" in proc.stderr
    report = (sweep_copy / "report" / "report.md").read_text()
    assert "| better |" not in report and "| worse |" not in report


def test_rows_trained_with_skip_eval_never_share_a_file_or_a_report_with_evaluated_rows(data, swept, tmp_path):
    """Round 5: a --skip-eval shard reported with an evaluated one, or a sweep without --skip-eval into a --skip-eval
    sweep's folder (it evaluated only its new runs and kept the old rows unevaluated, without a word) and its report,
    ended in an IndexError traceback. Now one line each, nothing written; the fix the sweep names works."""
    from reliability_support import cli_error

    grid = grid_file(tmp_path, data)
    trained = tmp_path / "trained"
    assert main(["sweep", "--grid", str(grid), "--out", str(trained), "--skip-eval", "--only", "*dense_tied*"]) == 0
    evaluated = tmp_path / "evaluated"
    shutil.copytree(swept, evaluated)
    path = evaluated / "results.jsonl"
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if "dense_untied" in line))
    line = cli_error(["report", trained, evaluated, "--out", tmp_path / "report"])
    assert "were not all evaluated: a-dense_tied-s0 hold no eval numbers" in line
    assert not (tmp_path / "report").exists()
    mixed = tmp_path / "mixed.jsonl"  # one file of both kinds: analyze compare set a training-time loss against an eval
    mixed.write_text((trained / "results.jsonl").read_text() + path.read_text())
    for analysis in ("compare", "frequency"):
        assert "were not all evaluated" in cli_error(["analyze", analysis, mixed])
    before = tree_hashes(trained)
    line = cli_error(["sweep", "--grid", grid, "--out", trained])
    assert "holds rows trained with --skip-eval (a-dense_tied-s0)" in line and "delete those rows" in line
    assert tree_hashes(trained) == before
    line = cli_error(["sweep", "--grid", grid, "--out", evaluated, "--skip-eval"])
    assert "holds evaluated rows (a-dense_untied-s0) and this sweep skips evaluation" in line
    (trained / "results.jsonl").write_text("")  # the fix: the trained runs are evaluated, not trained again
    assert main(["sweep", "--grid", str(grid), "--out", str(trained)]) == 0
    rows = [json.loads(line) for line in (trained / "results.jsonl").read_text().splitlines()]
    assert all(row["eval"]["val"]["loss"] > 0 for row in rows) and len(rows) == 2


def test_a_baseline_whose_row_was_skipped_is_shown_missing_not_infinite(sweep_copy):
    """Round 5: with the baseline's row skipped as damaged, ``analyze compare`` printed its perplexity as 'inf'."""
    from reliability_support import cli

    path = sweep_copy / "results.jsonl"
    first, second = path.read_text().splitlines()
    row = json.loads(first)
    row["seed"] = -1
    path.write_text(json.dumps(row) + "\n" + second + "\n")
    proc = cli(["analyze", "compare", sweep_copy])
    assert proc.returncode == 0 and "line 1 has seed -1" in proc.stderr, proc.stderr
    assert "dense_tied ppl         -" in proc.stdout and "inf" not in proc.stdout, proc.stdout


def test_a_report_holds_the_rows_of_one_grid_and_its_own_grid_json(capsys, sweep_copy, tmp_path):
    """Round 7 (E6, E10): a row of another grid in the results file (here: grid 'other''s a-dense_tied-s0, standing
    in for this grid's) and a grid.json copied from another sweep were reported with exit 0, the other grid's
    numbers and plateau taken for this one's."""
    results = sweep_copy / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[0]["grid"] = "other"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    line = fails(capsys, "report", sweep_copy, "--out", tmp_path / "r1")
    assert "come from different grids (grid 'other': a-dense_tied-s0; grid 'tiny': a-dense_untied-s0)" in line
    rows[0]["grid"] = "tiny"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    grid = json.loads((sweep_copy / "grid.json").read_text())
    (sweep_copy / "grid.json").write_text(json.dumps({**grid, "name": "other"}))
    line = fails(capsys, "report", results, "--out", tmp_path / "r2")
    assert f"{sweep_copy}/grid.json is of grid 'other', but the rows of {results} are of grid 'tiny'" in line
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()
    (sweep_copy / "grid.json").write_text(json.dumps(grid))
    assert main(["report", str(sweep_copy), "--out", str(tmp_path / "r3")]) == 0


def _max_steps_3(grid: dict) -> None:
    grid["base_overrides"].append("max_steps=3")  # what `leviathan sweep ... max_steps=3` records


@pytest.mark.parametrize("change, said", [
    (_max_steps_3, "a-dense_tied-s0: max_steps: 2 in the row, 3 in grid.json"),
    (lambda g: g["runs"][1]["model"].update(hidden_size=32), "a-dense_untied-s0: model.hidden_size: 16 in the row, "
                                                            "32 in grid.json"),
    (lambda g: g["eval_options"].update(max_tokens=300), "a-dense_tied-s0: eval.max_tokens: 400 in the row, 300 in "
                                                         "grid.json"),
    (lambda g: g.update(seeds=[1]), "a-dense_tied-s0: seed 0 is not among grid.json's seeds [1]"),
    # round 11 (S203): grid.json's vocab_size 299 beside rows of 300 was reported without a word
    (lambda g: g.update(vocab_size=299), "a-dense_tied-s0: vocab_size: 300 in the row, 299 in grid.json"),
], ids=["base-override", "run-model", "eval", "seeds", "vocab-size"])
def test_a_grid_json_of_the_same_grid_name_must_describe_the_rows(capsys, sweep_copy, tmp_path, change, said):
    """Round 9 left (N27): a sweep's grid.json swapped for another sweep's of the same grid name (started with
    max_steps=3) was accepted by report, which compared only the name. The rows' configs, seeds and evaluation are
    compared with what grid.json says their runs trained with; report, a merge of shards and an ablation refuse before
    writing, naming the file and how to write it again."""
    file = sweep_copy / "grid.json"
    own = file.read_text()
    grid = json.loads(own)
    change(grid)
    file.write_text(json.dumps(grid))
    line = fails(capsys, "report", sweep_copy, "--out", tmp_path / "r1")
    assert line.startswith(f"error: {file} does not describe the rows of {sweep_copy} (") and said in line, line
    assert "put back the sweep's own grid.json" in line and not (tmp_path / "r1").exists()
    other = Path(shutil.copytree(sweep_copy, tmp_path / "shard"))  # a shard with the same swapped grid.json
    assert said in fails(capsys, "report", other, sweep_copy, "--out", tmp_path / "r2")
    (other / "grid.json").write_text(own)
    assert said in fails(capsys, "report", "--ablation", other, sweep_copy, "--out", tmp_path / "r3")
    file.write_text(own)
    assert main(["report", str(sweep_copy), "--out", str(tmp_path / "r4"), "--bootstrap", "5"]) == 0


def test_collect_results_keeps_rows_of_other_settings_apart_and_skips_a_torn_line(swept, tmp_path):
    """Round 7 (E2, E3): scripts/collect_results.py added the rows of a sweep of the same grid name started with
    another learning rate beside the committed ones, and put its grid.json in place of theirs (the report of the
    folder then compared them, exit 0); a sweep's results.jsonl cut short by a kill ended in a JSONDecodeError."""
    import subprocess

    from reliability_support import REPO

    def collect(sweep: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), str(sweep), "--dest",
                               str(tmp_path / "results")], capture_output=True, text=True,
                              env={**__import__("os").environ, "PYTHONPATH": str(REPO / "src")})

    first = Path(shutil.copytree(swept, tmp_path / "first"))
    rows = (first / "results.jsonl").read_text().splitlines(keepends=True)
    (first / "results.jsonl").write_text(rows[0] + rows[1][:40])  # the second run's row cut short by a kill
    done = collect(first)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"{first}/results.jsonl:2: line 2 is not a whole JSON value" in done.stderr
    kept = tmp_path / "results" / "tiny" / "results.jsonl"
    assert [json.loads(line)["name"] for line in kept.read_text().splitlines()] == ["a-dense_tied-s0"]
    other = Path(shutil.copytree(swept, tmp_path / "other"))
    row = json.loads(rows[1])
    row["config"]["optim"]["lr"] = 0.05  # its rows trained at that rate (round 14, B217: collect checks them too)
    (other / "results.jsonl").write_text(json.dumps(row) + "\n")
    grid = json.loads((other / "grid.json").read_text())
    grid["base_overrides"] = [*grid["base_overrides"], "optim.lr=0.05"]  # started with `sweep ... optim.lr=0.05`
    (other / "grid.json").write_text(json.dumps(grid))
    before = tree_hashes(tmp_path / "results")
    done = collect(other)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{other} was started with other settings than the rows in {tmp_path}/results/tiny (base overrides [] " \
           f"only in {tmp_path}/results/tiny, ['optim.lr=0.05'] only in {other})" in done.stderr
    assert tree_hashes(tmp_path / "results") == before
    (other / "grid.json").write_text((swept / "grid.json").read_text())  # the same settings: its row is added
    (other / "results.jsonl").write_text(rows[1])
    assert collect(other).returncode == 0 and len(kept.read_text().splitlines()) == 2


def test_analyses_take_the_rows_of_one_grid_and_an_ablation_each_folder_once(capsys, sweep_copy, tmp_path):
    """Round 7 (G1, G2, G4): `analyze compare` and `analyze frequency` compared a row pasted from another grid's sweep
    with this grid's (exit 0); `report --ablation S S/results.jsonl` showed every arm twice."""
    results = sweep_copy / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[0]["grid"] = "other"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for verb in ("compare", "frequency"):
        line = fails(capsys, "analyze", verb, sweep_copy)
        assert "come from different grids (grid 'other': a-dense_tied-s0; grid 'tiny': a-dense_untied-s0)" in line
    rows[0]["grid"] = "tiny"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["analyze", "compare", str(sweep_copy)]) == 0
    line = fails(capsys, "report", "--ablation", sweep_copy, results, "--out", tmp_path / "ablation")
    assert f"'{results}' is the sweep folder '{sweep_copy}' again: its arms would be counted twice" in line


def test_a_run_trained_on_after_the_sweep_gets_no_record_under_its_row(capsys, sweep_copy):
    """Round 8 (D10): a sweep's run continued by hand (``train --run-dir S/runs/NAME --resume auto max_steps=4``, its
    row measured step 2) had ``analyze embeddings --sweep`` write a record of the step-4 weights under the row's name,
    exit 0. The run folder's newest step must be the row's. (``leviathan train`` now refuses to continue a run a row
    measured, round 8 A12; the Python API, which the sweep trains through, still can.)"""
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    run = sweep_copy / "runs" / "a-dense_tied-s0"
    step = run / "checkpoints" / "step-00000002"
    train(load_run_config(str(step / "config.yaml"), ["max_steps=4", "keep_last=2"]), run, resume="auto", quiet=True)
    line = fails(capsys, "analyze", "embeddings", "--sweep", sweep_copy)
    assert f"{run}'s newest checkpoint is step 4, but its row in {sweep_copy}/results.jsonl measured step 2" in line
    assert not (sweep_copy / "embeddings" / "a-dense_tied-s0.json").exists()
    shutil.move(run / "checkpoints" / "step-00000004", sweep_copy / "step-00000004")  # the fix the line gives
    assert main(["analyze", "embeddings", "--sweep", str(sweep_copy)]) == 0


def test_a_sweep_given_as_its_own_lr_pre_sweep_is_refused_before_any_file(capsys, swept, tmp_path):
    """Round 8 (D9): ``report S --lr-sweep S`` (or a copy of S) tabled the grid's own runs, each at its one lr, as a
    learning-rate pre-sweep and "picked" from them, exit 0. A pre-sweep's rows are of its own grid (``G-lr``)."""
    copy = Path(shutil.copytree(swept, tmp_path / "copy"))
    for lr_sweep in (swept, copy):
        line = fails(capsys, "report", swept, "--lr-sweep", lr_sweep, "--out", tmp_path / "report")
        assert f"--lr-sweep {lr_sweep}: its rows are of grid 'tiny', the grid this report is of" in line
    assert not (tmp_path / "report").exists()


def test_an_ablation_takes_each_run_of_a_grid_once(capsys, swept, tmp_path):
    """Round 8 (I16): ``report --ablation S S300``, two folders of one grid (here a copy; in the try, the grid
    evaluated on fewer tokens), showed every run twice, as two arms, exit 0; round 7 refused only the same folder
    given twice. The refusal comes before --out is claimed."""
    copy = Path(shutil.copytree(swept, tmp_path / "copy"))
    line = fails(capsys, "report", "--ablation", swept, copy, "--out", tmp_path / "ablation")
    assert f"run 'a-dense_tied-s0' of grid 'tiny' is in '{swept}' and again in '{copy}'" in line
    assert not (tmp_path / "ablation").exists()


def test_a_row_named_with_a_path_writes_no_record_outside_the_sweep(capsys, sweep_copy, tmp_path):
    """Round 8 (R8): a row whose name was edited to ``../../R8run`` (a copy of a run folder there) had its embeddings
    record written beside the sweep's parent, ``../../R8run.json``, exit 0. The row is skipped with a warning."""
    shutil.copytree(sweep_copy / "runs" / "a-dense_tied-s0", tmp_path / "R8run")
    _edit_second_row(sweep_copy / "results.jsonl", lambda r: r.update(name="../../R8run"))
    assert main(["analyze", "embeddings", "--sweep", str(sweep_copy), "--probes", "2"]) == 0
    assert "has name '../../R8run', not a run's folder name" in capsys.readouterr().err
    assert not (tmp_path / "R8run.json").exists() and not list(tmp_path.glob("*.json"))


def test_a_rows_curve_is_its_own_when_its_run_folder_was_swapped(sweep_copy):
    """Round 9 (N37): a sweep's run folder replaced by another run's (trained on other data) had that run's loss curve
    drawn for the row, exit 0: the run's metrics.jsonl is used only while its validation points are the row's."""
    from leviathan.experiments.machinery.results import load_results
    from leviathan.experiments.method.efficiency import row_curve

    row = load_results(sweep_copy / "results.jsonl")[0]
    metrics = sweep_copy / "runs" / row.name / "metrics.jsonl"
    row.metrics = str(metrics)  # the copy's own run folder (the row names the path it was written with)
    own = row_curve(row)
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    for line in lines:  # another run's file: the same steps, other losses
        line.update({"val_loss": line["val_loss"] + 0.5} if "val_loss" in line else {})
    metrics.write_text("".join(json.dumps(line) + "\n" for line in lines))
    swapped = row_curve(row)
    assert list(swapped.tokens) == list(own.tokens) and list(swapped.loss) == list(own.loss)
    assert list(own.loss) == list(row.curve.val_loss)


def _rows_measured_longer(results: Path) -> None:
    """Rewrite ``results`` as the rows of a longer training of the same runs (step 3, 384 tokens, not 2 and 256), and
    the grid.json beside it as that sweep's (max_steps=3): rows and grid.json agree, as a real sweep's do."""
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:
        row.update(steps=3, tokens=384)
        row["config"]["max_steps"] = 3
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    grid = json.loads((results.parent / "grid.json").read_text())
    grid["base_overrides"] = [o for o in grid["base_overrides"] if not o.startswith("max_steps=")] + ["max_steps=3"]
    (results.parent / "grid.json").write_text(json.dumps(grid))


def test_embedding_records_are_of_the_step_their_rows_measured(capsys, swept, sweep_copy, tmp_path):
    """Round 9 (N57, N58): ``analyze embeddings --sweep OTHER --dest THIS``, OTHER's runs trained to another step than
    THIS's rows measured, wrote records that ``report THIS`` then showed as THIS's runs, exit 0 each."""
    longer = Path(shutil.copytree(swept, tmp_path / "longer"))
    _rows_measured_longer(longer / "results.jsonl")
    line = fails(capsys, "analyze", "embeddings", "--sweep", sweep_copy, "--dest", longer)
    assert "measured step 2 (256 tokens), but its row in" in line and "nothing was written" in line
    assert not (longer / "embeddings").exists()
    assert main(["analyze", "embeddings", "--sweep", str(sweep_copy)]) == 0  # records of the rows' own runs
    shutil.copytree(sweep_copy / "embeddings", longer / "embeddings")
    line = fails(capsys, "report", longer, "--out", tmp_path / "report")
    assert "is a record of run 'a-dense_tied-s0' at step 2 (256 tokens), but the row of that run measured step 3" in line
    assert not (tmp_path / "report").exists()


def test_records_of_another_sweeps_runs_are_not_kept_as_this_sweeps(capsys, swept, sweep_copy, tmp_path):
    """Round 21 (N339, N340, N341): ``analyze embeddings --sweep SW2 --dest D``, D holding SW1's records of the same
    run names (step 2 where SW2's rows measured another step), printed "exists, kept (--redo remakes it)" and "0
    record(s) written", exit 0: another sweep's records kept as this one's. Also into a collected folder of SW2's
    rows (N341). Refused now, before anything is written (a kept record is read, never written: N340's immutable
    file is the same case)."""
    longer = Path(shutil.copytree(swept, tmp_path / "longer"))
    _rows_measured_longer(longer / "results.jsonl")
    assert main(["analyze", "embeddings", "--sweep", str(sweep_copy), "--dest", str(tmp_path / "emb1"),
                 "--probes", "2"]) == 0
    collected = Path(shutil.copytree(longer, tmp_path / "collected", ignore=shutil.ignore_patterns("runs")))
    shutil.copytree(tmp_path / "emb1" / "embeddings", collected / "embeddings")
    emb2 = Path(shutil.copytree(tmp_path / "emb1", tmp_path / "emb2"))
    for dest in (emb2, collected):
        before = tree_hashes(dest)
        done = cli(["analyze", "embeddings", "--sweep", longer, "--dest", dest, "--probes", "2"])
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        line = one_error(done.stderr)
        assert f"{dest}/embeddings/a-dense_tied-s0.json' is a record of run 'a-dense_tied-s0' at step 2 (256 " \
               f"tokens), but the row of that run measured step 3 (384 tokens) in {longer}/results.jsonl" in line
        assert "nothing was written; remake it with --redo, or pass another --dest" in line
        assert "exists, kept" not in done.stdout and tree_hashes(dest) == before
    assert main(["analyze", "embeddings", "--sweep", str(sweep_copy), "--dest", str(emb2), "--probes", "2"]) == 0
    assert "exists, kept (--redo remakes it)" in capsys.readouterr().out  # the records of its own runs are kept


def test_rows_of_one_grid_trained_on_other_data_are_not_reported_together(capsys, sweep_copy, tmp_path):
    """Round 9 (N49): a row whose data fingerprint is not the other rows' (a run of the grid trained on other data)
    was reported in one table with them, exit 0."""
    results = sweep_copy / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[1]["data"]["fingerprint"] = "0" * len(rows[1]["data"]["fingerprint"])
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for argv in (["report", sweep_copy, "--out", tmp_path / "report"], ["analyze", "compare", sweep_copy]):
        line = fails(capsys, *argv)
        assert "were trained on different data (data fingerprint 000000000000... for a-dense_untied-s0" in line
    assert not (tmp_path / "report").exists()


def test_a_model_that_reaches_the_baseline_at_zero_tokens_is_said_in_words(sweep_copy):
    """Round 9 (M26c): two rows whose curves hold one validation at 0 tokens ended in a TypeError traceback
    (``format_efficiency`` formatted a factor of None); a curve that ends at 0 tokens bounds no factor either."""
    from reliability_support import cli

    path = sweep_copy / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["curve"]["tokens"] = [0]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    proc = cli(["analyze", "efficiency", sweep_copy])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "before any training (at 0 tokens)" in proc.stdout or "does not reach" in proc.stdout, proc.stdout


def test_a_report_on_an_eval_set_no_row_holds_is_refused(sweep_copy, tmp_path):
    """Round 10 (Q170): ``report --eval-set ''`` (or a name no row was evaluated on) wrote a report of empty tables,
    exit 0; the sets the rows hold are named."""
    from reliability_support import cli_error

    line = cli_error(["report", sweep_copy, "--out", tmp_path / "rep", "--eval-set", "nosuch"])
    assert f"--eval-set 'nosuch': no row of {sweep_copy} was evaluated on it (the rows hold: val); pass one of " \
           f"those" in line
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("analysis", ["compare", "lr"])
def test_an_analysis_on_an_eval_set_no_row_holds_is_refused(sweep_copy, analysis):
    """Round 11 (S119, S121): ``analyze compare SWEEP --eval-set ''`` printed "ppl -" for every run, exit 0 (Q170's
    fix covered report only); an empty name is refused by every --eval-set, a name no row holds by the analyses of
    eval numbers."""
    from reliability_support import cli_error

    line = cli_error(["analyze", analysis, sweep_copy, "--eval-set", "nosuch"])
    assert f"--eval-set 'nosuch': no row of {sweep_copy} was evaluated on it (the rows hold: val)" in line
    for verb in (["analyze", "throughput", sweep_copy], ["analyze", "compare", sweep_copy], ["report", sweep_copy]):
        line = cli_error([*verb, "--eval-set", ""])
        assert "expected the name of an eval set such as val or wikitext2, got an empty name" in line, line


def _drop_row(sweep: Path, name: str) -> None:
    path = sweep / "results.jsonl"
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if json.loads(line)["name"] != name))


def test_a_run_folder_trained_otherwise_than_the_grid_is_not_resumed_or_evaluated(capsys, data, sweep_copy, tmp_path):
    """Round 11 (R155, R24): a sweep rerun with another ``optim.lr`` resumed a run from its checkpoint and its row
    recorded the new lr for every step; a finished run folder of another sweep put in place was evaluated as this
    grid's run. A run folder whose checkpoint was trained with other settings is refused before any work."""
    grid = grid_file(tmp_path, data)
    for name in ("a-dense_tied-s0", "a-dense_untied-s0"):
        _drop_row(sweep_copy, name)
    (sweep_copy / "runs" / "a-dense_untied-s0" / "sweep_train.json").unlink()
    before = (sweep_copy / "results.jsonl").read_text()
    line = fails(capsys, "sweep", "--grid", grid, "--out", sweep_copy, "optim.lr=0.02")
    assert "was trained with other settings than grid run" in line and "optim.lr:" in line, line
    assert "in the checkpoint, 0.02 now" in line, line
    assert (sweep_copy / "results.jsonl").read_text() == before


@pytest.mark.parametrize("how", ["swapped", "steps"])
def test_a_training_summary_of_another_run_is_not_made_a_row(capsys, data, sweep_copy, tmp_path, how):
    """Round 11 (R186, R187): the two runs' ``sweep_train.json`` swapped (or one of 3 steps copied from another
    sweep into a 2-step grid's run), the row removed: the sweep wrote the other run's summary as this run's row."""
    runs = sweep_copy / "runs"
    mine, other = runs / "a-dense_untied-s0" / "sweep_train.json", runs / "a-dense_tied-s0" / "sweep_train.json"
    if how == "swapped":
        a, b = mine.read_text(), other.read_text()
        mine.write_text(b)
        other.write_text(a)
        words = "is the training summary of run folder"
    else:
        summary = json.loads(mine.read_text())
        summary["steps"], summary["tokens"] = 3, 384
        mine.write_text(json.dumps(summary))
        words = "records 3 steps, but grid run 'a-dense_untied-s0' trains 2"
    _drop_row(sweep_copy, "a-dense_untied-s0")
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy)
    assert words in line, line


@pytest.mark.parametrize("edit, words", [
    ("loss", "final_val_ppl {ppl!r} is not exp(final_val_loss) = 2.71828 (fields edited apart)"),
    ("all", "final_val_loss 1.0 is not the run's own last validation at step 2 (val_loss {loss!r} in "),
], ids=["A233-loss-only", "A234-consistent"])
def test_a_training_summary_whose_final_numbers_were_edited_is_not_made_a_row(capsys, data, sweep_copy, tmp_path,
                                                                              edit, words):
    """Round 14 (A233, A234): a run's ``sweep_train.json`` with final_val_loss edited to 1.0 (its perplexity kept; or
    loss, perplexity and bpb edited consistently), the row removed: the sweep wrote the edited numbers as the run's
    row, exit 0, though its metrics.jsonl ends at another loss at that step. Refused with the fix (delete the file),
    which then works: the run is evaluated again and its row holds the run's own numbers."""
    name = "a-dense_untied-s0"
    path = sweep_copy / "runs" / name / "sweep_train.json"
    summary = json.loads(path.read_text())
    loss, ppl = summary["final_val_loss"], summary["final_val_ppl"]
    summary["final_val_loss"] = 1.0
    if edit == "all":
        summary.update(final_val_ppl=math.e, final_val_bpb=0.96)
    path.write_text(json.dumps(summary))
    _drop_row(sweep_copy, name)
    before = (sweep_copy / "results.jsonl").read_text()
    grid = grid_file(tmp_path, data)
    line = fails(capsys, "sweep", "--grid", grid, "--out", sweep_copy)
    assert f"{str(path)!r}: " + words.format(ppl=ppl, loss=loss) in line, line
    assert "delete it (the run is evaluated again from its checkpoint)" in line, line
    assert (sweep_copy / "results.jsonl").read_text() == before
    path.unlink()
    assert main(["sweep", "--grid", str(grid), "--out", str(sweep_copy)]) == 0
    row = [json.loads(x) for x in (sweep_copy / "results.jsonl").read_text().splitlines()][-1]
    assert row["name"] == name and row["final_val_loss"] == pytest.approx(loss, rel=1e-6)


@pytest.mark.parametrize("edit, words", [
    (lambda s: s["params"].update(total=1), "has params.total 1, not the sum of its parts"),
    (lambda s: s.update(tokens=10**9), "has tokens 1000000000, not its 2 steps x config.batch_tokens"),
    (lambda s: s["params"].update(tied=not s["params"]["tied"]), "beside params.head"),
], ids=["K191-params-total", "K192-tokens", "K194-params-tied"])
def test_a_training_summary_edited_against_the_row_rules_names_the_file(data, sweep_copy, tmp_path, edit, words):
    """K191, K192, K194 (round 20): sweep_train.json with params.total 1, tokens 10**9 or params.tied flipped, the
    run's row removed: the sweep was refused by append_result's API line ("append_result: the row ... correct that
    value"), naming no file. Now it is refused before any work naming sweep_train.json and the fix (delete it), like
    every other damaged field of the file; results.jsonl is left as it was."""
    from reliability_support import cli_error

    name = "a-dense_untied-s0"
    path = sweep_copy / "runs" / name / "sweep_train.json"
    summary = json.loads(path.read_text())
    edit(summary)
    path.write_text(json.dumps(summary))
    _drop_row(sweep_copy, name)
    before = (sweep_copy / "results.jsonl").read_text()
    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy])
    assert f"{str(path)!r}: the results row made of it " in line and words in line, line
    assert "append_result" not in line and "delete it (the run is evaluated again" in line, line
    assert (sweep_copy / "results.jsonl").read_text() == before


def _collect_results(*argv) -> "subprocess.CompletedProcess":
    """``python scripts/collect_results.py <argv>`` in a real process."""
    import os
    import subprocess

    from reliability_support import REPO

    return subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), *map(str, argv)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                          timeout=300)


def test_a_results_file_that_is_a_pipe_is_named_as_one(capsys, sweep_copy, tmp_path):
    """Round 11 (R107, R108): a sweep's results.jsonl that was a named pipe made report say "no result rows in
    'sweep'" and collect_results "no results.jsonl yet, skipped" (exit 0): the file is there, and is a pipe. Both
    name it (neither reads it: a pipe would block), and nothing is written."""
    import os

    (sweep_copy / "results.jsonl").unlink()
    os.mkfifo(sweep_copy / "results.jsonl")
    line = fails(capsys, "report", sweep_copy, "--out", tmp_path / "r")
    assert f"results '{sweep_copy / 'results.jsonl'}' is a named pipe (FIFO), not a regular file" in line, line
    assert not (tmp_path / "r").exists()
    done = _collect_results(sweep_copy, "--dest", tmp_path / "d")
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert f"'{sweep_copy / 'results.jsonl'}' is a named pipe (FIFO), not a regular file; nothing was written" in line
    assert not (tmp_path / "d").exists()


def test_a_results_file_saved_with_a_byte_order_mark_is_read_whole(capsys, sweep_copy, tmp_path):
    """Round 11 (R52): a results.jsonl saved by an editor that writes a UTF-8 byte order mark lost its first row ("line
    1 is not a whole JSON value (cut short or damaged)") and the report was written with one run fewer. The mark is
    read past, by report and by collect_results (in a sweep folder and in the results folder it merges into)."""
    bom = b"\xef\xbb\xbf"
    path = sweep_copy / "results.jsonl"
    path.write_bytes(bom + path.read_bytes())
    assert main(["report", str(sweep_copy), "--out", str(tmp_path / "r"), "--bootstrap", "5"]) == 0
    err = capsys.readouterr().err
    assert "skipped" not in err and "warning" not in err, err
    assert "(2 runs)" in (tmp_path / "r" / "report.md").read_text()
    done = _collect_results(sweep_copy, "--dest", tmp_path / "d")
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    collected = tmp_path / "d" / "tiny" / "results.jsonl"
    assert len(collected.read_text().splitlines()) == 2
    collected.write_bytes(bom + collected.read_bytes())
    done = _collect_results(sweep_copy, "--dest", tmp_path / "d")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert len(collected.read_text("utf-8-sig").splitlines()) == 2


def test_collect_results_checks_every_sweep_before_writing_and_names_an_unevaluated_row(data, swept, tmp_path):
    """Round 11 (R46): ``collect_results.py SWEEP SWEEP_K --dest D`` (an evaluated sweep and a --skip-eval one of the
    same grid) wrote D/tiny from the first, then refused the second with "(trained twice?); nothing was written". Every
    sweep of a call is checked and merged before any file is written, and the line says the rows differ in being
    evaluated; the sweep it names as the one to leave out is collected alone."""
    skipped = tmp_path / "skipped"
    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(skipped), "--skip-eval"]) == 0
    dest = tmp_path / "d"
    done = _collect_results(swept, skipped, "--dest", dest)
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert (f"run 'a-dense_tied-s0' has a row in {swept} (collected first in this call) and a different one in the "
            f"sweep folder {skipped} (the first is evaluated, the second is not: swept with --skip-eval;") in line, line
    assert f"nothing was written; leave {skipped} out of the call to keep the evaluated row" in line, line
    assert "trained twice" not in line and not dest.exists()
    done = _collect_results(swept, "--dest", dest)
    assert done.returncode == 0, done.stderr
    assert len((dest / "tiny" / "results.jsonl").read_text().splitlines()) == 2


def test_a_fair_shot_report_of_a_grid_given_as_a_file_says_how_to_name_it_before_writing(capsys, data, sweep_copy,
                                                                                           tmp_path, monkeypatch):
    """Round 11 (R54): ``report SWEEP --fair-shot OTHER`` of a sweep whose grid was given as a YAML file ended in
    "unknown grid 'tiny'" after four figures were written: the planned arms come from the grid by name. The grid is
    looked up before any file is written, and the line names the file the sweep read and where a grid found by name
    goes; put there, the report is written."""
    committed = Path(shutil.copytree(sweep_copy, tmp_path / "committed"))  # the round re-examined (E277: not itself)
    recorded = json.loads((sweep_copy / "grid.json").read_text())  # the file the sweep read, gone since (E277: a
    (sweep_copy / "grid.json").write_text(json.dumps({**recorded, "path": str(tmp_path / "gone.yaml")}))  # file there
    line = fails(capsys, "report", sweep_copy, "--fair-shot", committed, "--out", tmp_path / "r", "--bootstrap", "5")
    assert (f"--fair-shot: the round's planned arms come from its grid, found by the name grid.json records, and no grid "
            f"is named 'tiny' (the sweep read it from ") in line, line
    assert "copy that grid file to configs/experiments/tiny.yaml and run the report from the folder holding" in line
    assert not (tmp_path / "r").exists()
    (tmp_path / "configs" / "experiments").mkdir(parents=True)
    grid_file(tmp_path / "configs" / "experiments", data).rename(tmp_path / "configs" / "experiments" / "tiny.yaml")
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(sweep_copy), "--fair-shot", str(committed), "--out", str(tmp_path / "r"),
                 "--bootstrap", "5"]) == 0
    assert "## The fair-shot round" in (tmp_path / "r" / "report.md").read_text()


def test_a_fair_shot_report_reads_the_grid_file_grid_json_records_and_refuses_its_own_round(capsys, swept, sweep_copy,
                                                                                            tmp_path, monkeypatch):
    """Round 17 (E277): ``write_report('sw1', out, fair_shot='sw1')`` run beside g1.yaml, the file grid.json records,
    said "no grid is named 'g1' ...; copy that grid file to configs/experiments/": the recorded file was not looked
    at, and the misuse (the round reported given as the committed round it re-examines) was not named. The recorded
    file is read when it is there and names the grid; the round itself as --fair-shot is refused first."""
    line = fails(capsys, "report", sweep_copy, "--fair-shot", sweep_copy / "results.jsonl", "--out", tmp_path / "r")
    assert f"--fair-shot (fair_shot) '{sweep_copy}/results.jsonl' is the round being reported: the fair-shot rules " \
           f"compare this round with the committed round it re-examines; pass that round's results folder" in line
    assert not (tmp_path / "r").exists()
    committed = Path(shutil.copytree(sweep_copy, tmp_path / "committed"))
    monkeypatch.chdir(swept.parent.parent)  # where grid.json's path, 'identity0/grid.yaml', names the file read
    assert Path(json.loads((sweep_copy / "grid.json").read_text())["path"]).is_file()
    assert main(["report", str(sweep_copy), "--fair-shot", str(committed), "--out", str(tmp_path / "r"),
                 "--bootstrap", "5"]) == 0
    assert "## The fair-shot round" in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.parametrize("field, value", [("eval_sets", "val"), ("runs", {"a": 1}), ("eval_options", [1])])
def test_a_grid_json_field_of_the_wrong_shape_is_one_error(sweep_copy, tmp_path, field, value):
    """Round 12 (U20, U252, U269): grid.json's ``"eval_sets": "val"`` ended in an AttributeError of report, analyze
    compare and report --ablation."""
    from reliability_support import cli_error

    path = sweep_copy / "grid.json"
    grid = json.loads(path.read_text())
    grid[field] = value
    path.write_text(json.dumps(grid))
    for argv in (["report", sweep_copy, "--out", tmp_path / "rep"], ["analyze", "compare", sweep_copy]):
        line = cli_error(argv)
        assert "is not a sweep's grid.json (" in line and (field in line or "GridEvalOptions" in line), line


def test_a_report_without_its_plateau_says_why(sweep_copy, tmp_path, monkeypatch):
    """Round 12 (U201): a report of a copied sweep made from another folder showed "Unigram plateau: - nats" without a
    word (grid.json's data_dir is a path from the folder the sweep ran in)."""
    from reliability_support import cli

    grid = json.loads((sweep_copy / "grid.json").read_text())
    grid["data_dir"], grid["unigram_entropy"] = "no/such/data", None
    (sweep_copy / "grid.json").write_text(json.dumps(grid))
    proc = cli(["report", sweep_copy, "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert proc.returncode == 0, proc.stderr
    assert "note: the unigram plateau is not shown: grid.json's data folder 'no/such/data'" in proc.stderr
    assert "the unigram plateau is not shown" in (tmp_path / "rep" / "report.md").read_text()


def test_a_sweep_rerun_with_other_validation_tokens_is_refused(capsys, data, sweep_copy, tmp_path):
    """Round 12 (T32): a finished sweep rerun with the grid's ``eval_tokens`` changed from 200 to 100 exited 0 and
    rewrote grid.json, while its rows' validation curves and final_val_loss were measured on 200."""
    before = (sweep_copy / "grid.json").read_text()
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy, "eval_tokens=100")
    assert "eval_tokens: 200 in the row, 100 now" in line, line
    assert (sweep_copy / "grid.json").read_text() == before


def test_a_copied_sweep_folder_reads_its_own_runs_metrics(capsys, data, sweep_copy, tmp_path):
    """Round 14 (A240, A241): in a copy of a sweep folder whose rows were removed, the sweep's new rows read the curve
    of the ORIGINAL folder's metrics.jsonl (the path the runs' sweep_train.json recorded) and named it as theirs; with
    the original moved away, every row lost its curve without a word. A row reads its own run folder's log."""
    import json

    (sweep_copy / "results.jsonl").write_text("")
    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(sweep_copy)]) == 0
    rows = [json.loads(line) for line in (sweep_copy / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["metrics"] == f"runs/{row['name']}/metrics.jsonl", row["metrics"]
        assert row["curve"] is not None and row["curve"]["tokens"], row["name"]


@pytest.mark.parametrize("sets, words", [
    ({"w": {"text": "/nonexistent/wiki.txt"}}, "eval set 'w': text: '/nonexistent/wiki.txt' does not exist"),
    ({"val": {"split": "nope"}}, "has no split 'nope'"),
], ids=["missing-text", "missing-split"])
def test_a_grids_eval_set_that_cannot_be_read_is_refused_before_any_training(capsys, data, tmp_path, sets, words):
    """Round 14 (B272-B274): an eval set whose text file is missing or whose split the data lacks was named only after
    a run had trained (and its checkpoint was written)."""
    out = tmp_path / "sweep"
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, sets=sets), "--out", out)
    assert words in line, line
    assert not (out / "runs").exists()


@pytest.mark.parametrize("change", [
    lambda r: (r["curve"]["val_loss"].__setitem__(-1, None), r.update(final_val_loss=None, final_val_ppl=None)),
    lambda r: r["curve"]["val_loss"].__setitem__(-1, None),
], ids=["curve-and-final-loss-null", "curve-point-null"])
def test_a_row_whose_validation_curve_holds_a_null_is_reported_and_skipped(sweep_copy, change):
    """Round 14 (B301, B304): a row whose curve.val_loss ended in null (with final_val_loss null too, or alone) ended
    `leviathan report` in a TypeError traceback in the paired gap curve. The sweep keeps only validations that measured
    a number: such a row is warned about and skipped like every impossible row."""
    from reliability_support import cli

    _edit_second_row(sweep_copy / "results.jsonl", change)
    proc = cli(["report", sweep_copy, "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    n = len(json.loads((sweep_copy / "results.jsonl").read_text().splitlines()[1])["curve"]["val_loss"])
    assert f"results.jsonl:2: line 2 has curve.val_loss null at point {n} of {n}" in proc.stderr, proc.stderr
    assert "skipped" in proc.stderr


def test_collect_results_does_not_copy_a_row_whose_commit_was_emptied(swept, tmp_path):
    """Round 32, AB43 (AB24 through report): a row whose code was set to {"commit": ""} (the commit emptied, the
    versions removed) was copied as whole provenance, "sD -> resD/g (2 rows)", exit 0. ``line_problem`` names it."""
    from reliability_support import script

    sweep = Path(shutil.copytree(swept, tmp_path / "sweep"))
    _edit_second_row(sweep / "results.jsonl", lambda r: r.update(code={"commit": ""}))
    done = script("collect_results.py", [sweep, "--dest", tmp_path / "results"])
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{sweep}/results.jsonl:2: line 2 has code.commit ''" in done.stderr, done.stderr


@pytest.mark.parametrize("change, why", [
    (lambda r: r["code"].update(commit="zzz not a sha"), "has code.commit 'zzz not a sha', not a git commit"),
    (lambda r: r["code"].update(commit="\u0000"), "has code.commit '\\x00', not a git commit"),
    (lambda r: r["code"].update(commit="fcb4a0fe" * 100), "has code.commit 'fcb4a0fefcb4a0fe"),
    (lambda r: r["code"].update(torch="2.x y"), "has code.torch '2.x y', not a version"),
    (lambda r: r["code"].pop("torch"), "has no code.torch beside its code.commit"),
    (lambda r: r["code"].update(torch="2.13.0+cpu+cpu"), "has code.torch '2.13.0+cpu+cpu', not a version"),
    (lambda r: r["code"].update(leviathan="0..1"), "has code.leviathan '0..1', not a version"),
    (lambda r: r["code"].update(torch="9" * 64), "has code.torch '99999"),
], ids=["AD3-not-a-sha", "AD7-nul", "AD17-800-chars", "torch-not-a-version", "AD8-torch-removed",
        "AH14-two-local-parts", "AH15-empty-number", "AH286-64-nines"])
def test_a_row_whose_code_record_is_not_the_sweeps_is_named_and_skipped(capsys, sweep_copy, change, why):
    """Round 33 (AD3, AD7, AD8, AD14, AD17): a row's code.commit was checked only for being empty, so a commit no
    git writes ('zzz not a sha', a NUL, 800 characters) and a code whose torch field was removed were read by report
    and analyze as the row's provenance without a word. ``row_provenance.code_field_problem``: named and skipped.
    Round 35 (AH14, AH15, AH18, AH20, AH22, AH286): a version is held to PEP 440's form (``row_provenance.VERSION``),
    no longer any text that begins with a digit."""
    from leviathan.experiments.machinery.results import read_results

    _edit_second_row(sweep_copy / "results.jsonl", change)
    assert [r.name for r in read_results(sweep_copy)] == ["a-dense_tied-s0"]
    err = capsys.readouterr().err
    assert "results.jsonl:2: line 2 " in err and why in err and "skipped" in err, err


def test_collect_results_does_not_copy_a_row_whose_code_was_edited(swept, tmp_path):
    """Round 33 (AD10, AD11): scripts/collect_results.py copied a row whose code.commit was 'zzz not a sha', or
    whose code.torch was removed, as provenance ("cC -> res_cC/g (2 rows)", exit 0). ``line_problem`` names it."""
    from reliability_support import script

    sweep = Path(shutil.copytree(swept, tmp_path / "sweep"))
    _edit_second_row(sweep / "results.jsonl", lambda r: r["code"].update(commit="zzz not a sha"))
    done = script("collect_results.py", [sweep, "--dest", tmp_path / "results"])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"{sweep}/results.jsonl:2: line 2 has code.commit 'zzz not a sha'" in done.stderr, done.stderr
    assert "(1 rows)" in done.stdout + done.stderr, done.stdout + done.stderr


def test_collect_results_does_not_copy_a_row_holding_nan(swept, tmp_path):
    """Round 14 (B300): a row whose losses were NaN was copied by scripts/collect_results.py with each NaN written as
    null, exit 0, and the report of the collected folder ended in a TypeError traceback. The row is not copied, with a
    warning naming it; the report of the folder then has the other row."""
    import os
    import subprocess

    from reliability_support import REPO, cli

    sweep = Path(shutil.copytree(swept, tmp_path / "sweep"))

    def nan(r):
        r.update(final_val_loss=math.nan, final_val_ppl=math.nan)
        r["eval"]["val"].update(loss=math.nan, ppl=math.nan, bpb=math.nan)
        r["curve"]["val_loss"][-1] = math.nan
    _edit_second_row(sweep / "results.jsonl", nan)
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), str(sweep), "--dest",
                           str(tmp_path / "results")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"{sweep}/results.jsonl:2: line 2 holds NaN or infinity" in done.stderr and "not copied" in done.stderr
    kept = tmp_path / "results" / "tiny"
    assert [json.loads(line)["name"] for line in (kept / "results.jsonl").read_text().splitlines()] == \
        ["a-dense_tied-s0"]
    proc = cli(["report", kept, "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_a_grid_of_the_same_name_with_a_size_at_another_width_is_neither_merged_nor_collected(data, tmp_path):
    """Round 14 (B352, B353): shard 1/2 of a grid and a sweep of the same grid name whose size trains at another
    width were merged by ``report SH1 SW3`` as shards of one grid (a width-24 dense_untied paired with the width-16
    dense_tied as the same body, exit 0), and scripts/collect_results.py added the second one's row to the first's
    collected folder and put its grid.json in place (the folder's report then refused the whole folder). Both name
    the run setting that differs; the collected folder is left as it was."""
    import os
    import subprocess

    from reliability_support import REPO, cli_error

    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(tmp_path / "sh1"),
                 "--shard", "1/2"]) == 0
    wide = yaml.safe_load((tmp_path / "grid.yaml").read_text())
    wide["sizes"]["a"]["hidden_size"] = 24
    (tmp_path / "wide").mkdir()
    (tmp_path / "wide" / "grid.yaml").write_text(yaml.safe_dump(wide))
    assert main(["sweep", "--grid", str(tmp_path / "wide" / "grid.yaml"), "--out", str(tmp_path / "sw3"),
                 "--only", "a-dense_untied*"]) == 0
    said = "a-dense_tied-s0: model.hidden_size: 16 in {a}, 24 in {b}"
    line = cli_error(["report", tmp_path / "sh1", tmp_path / "sw3", "--out", tmp_path / "rep"])
    assert said.format(a=tmp_path / "sh1", b=tmp_path / "sw3") in line, line
    assert not (tmp_path / "rep").exists()

    def collect(sweep: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), str(sweep), "--dest",
                               str(tmp_path / "c6")], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO / "src")})

    assert collect(tmp_path / "sh1").returncode == 0
    before = tree_hashes(tmp_path / "c6")
    done = collect(tmp_path / "sw3")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert said.format(a=tmp_path / "c6" / "tiny", b=tmp_path / "sw3") in done.stderr, done.stderr
    assert tree_hashes(tmp_path / "c6") == before


def test_the_seeds_of_one_arm_trained_at_different_learning_rates_are_warned_about(data, tmp_path):
    """Round 14 (B34, B220, B312): the rows of two shards trained with different ``optim.lr`` overrides, concatenated
    into one results.jsonl without a grid.json, were reported without a word. Per-arm rates are by design (each arm
    its own, compared as they are); the seeds of one arm are averaged as repeats, so rows of one arm at two rates get
    one warning line naming them, and the report is still written."""
    from reliability_support import cli

    grid = yaml.safe_load(grid_file(tmp_path, data).read_text())
    grid["seeds"] = [0, 1]
    grid["experiments"]["iso_body"]["variants"] = ["dense_tied"]
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    assert main(["sweep", "--grid", str(tmp_path / "grid.yaml"), "--out", str(tmp_path / "sh1"), "--shard", "1/2"]) == 0
    assert main(["sweep", "--grid", str(tmp_path / "grid.yaml"), "--out", str(tmp_path / "sh2"), "--shard", "2/2",
                 "optim.lr=0.05"]) == 0
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "results.jsonl").write_text((tmp_path / "sh1" / "results.jsonl").read_text()
                                                      + (tmp_path / "sh2" / "results.jsonl").read_text())
    proc = cli(["report", tmp_path / "mixed", "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "trained at different learning rates" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: "), proc.stderr
    assert "a dense_tied (iso_body): lr " in warned[0] and "a-dense_tied-s0" in warned[0] \
        and "lr 0.05 in a-dense_tied-s1" in warned[0], warned[0]
    assert "different learning rates" in (tmp_path / "rep" / "report.md").read_text()


def test_a_sweep_folder_without_grid_json_or_not_there_is_named_as_such_among_shards(capsys, swept, tmp_path):
    """Round 14 (B33, B355): ``report sh1 sh2y``, sh2y a copy whose grid.json was deleted, said "different grids: sh1
    (tinyg), sh2y (None)", and ``report sh1 sw5`` with no sw5 named '.' and None. The folder without grid.json is
    named with what is missing and the fix; the folder that is not there is said not to exist. Nothing is written."""
    bare = Path(shutil.copytree(swept, tmp_path / "sh2y"))
    (bare / "grid.json").unlink()
    line = fails(capsys, "report", swept, bare, "--out", tmp_path / "rep", "--bootstrap", "5")
    assert f"'{bare}' has no grid.json ('{bare}/grid.json')" in line and "put the sweep's grid.json back" in line
    assert "None" not in line and "different grids" not in line
    line = fails(capsys, "report", swept, tmp_path / "sw5", "--out", tmp_path / "rep", "--bootstrap", "5")
    assert f"sweep folder '{tmp_path / 'sw5'}' does not exist; pass the --out folder of a sweep" in line
    assert "None" not in line and "'.'" not in line
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("change, said", [
    (lambda r: r["evaluation"]["options"].update(max_tokens=512),
     "were evaluated differently (eval.max_tokens: 400 for a-dense_tied-s0, 512 for a-dense_untied-s0)"),
    (lambda r: r.update(grid="othergrid"), "come from different grids (grid 'tiny': a-dense_tied-s0; grid "
                                           "'othergrid': a-dense_untied-s0)"),
], ids=["B217-max-tokens", "B263-grid"])
def test_collect_results_refuses_the_rows_of_one_sweep_that_report_refuses(capsys, sweep_copy, tmp_path, change, said):
    """Round 14 (B217, B263): one row of a sweep folder with its evaluation.options.max_tokens or its grid edited was
    copied by collect_results (rc 0, no word) while ``leviathan report`` of the same folder refused it. Both refuse
    now, by one rule (``one_sweep.check_one_sweep``), and collect writes nothing."""
    _edit_second_row(sweep_copy / "results.jsonl", change)
    assert said in fails(capsys, "report", sweep_copy, "--out", tmp_path / "r", "--bootstrap", "5")
    done = _collect_results(sweep_copy, "--dest", tmp_path / "c")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert said in one_error(done.stderr) and "(nothing was written)" in done.stderr
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("change, said", [
    (lambda r: r.update(size="c"), "a-dense_untied-s0: size: 'c' in the row, 'a' in grid.json"),
    (lambda r: r.update(regime="scaling", regimes=["scaling"]),
     "a-dense_untied-s0: regimes: ['scaling'] in the row, ['iso_body'] in grid.json"),
    (lambda r: r.update(data_seed=7), "a-dense_untied-s0: data_seed: 7 in the row, 0 in grid.json"),
], ids=["B18-size", "B19-regime", "B20-data-seed"])
def test_a_row_whose_size_regime_or_data_seed_contradicts_grid_json_is_neither_collected_nor_reported(
        capsys, sweep_copy, tmp_path, change, said):
    """Round 15 (B18-B20; B5, B9, B15 for report): a row whose size ('b' -> 'c'), regime or data_seed was edited was
    copied by collect_results and reported as another run, exit 0: only how the runs trained was compared with
    grid.json, not what each run is. Both refuse it by one rule (``identity.identity_differences``, inside
    ``one_sweep.check_one_sweep``)."""
    _edit_second_row(sweep_copy / "results.jsonl", change)
    done = _collect_results(sweep_copy, "--dest", tmp_path / "c")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert said in one_error(done.stderr) and "(nothing was written)" in done.stderr
    assert not (tmp_path / "c").exists()
    assert said in fails(capsys, "report", sweep_copy, "--out", tmp_path / "r", "--bootstrap", "5")


def _other_grid(swept: Path, folder: Path, name: str, change_row=None, change_grid=None, keep=None) -> Path:
    """A copy of ``swept`` as a sweep of grid ``name`` (grid.json and rows renamed), each row and grid.json changed,
    only the rows ``keep`` keeps."""
    copy = Path(shutil.copytree(swept, folder))
    rows = [json.loads(line) for line in (copy / "results.jsonl").read_text().splitlines()]
    grid = json.loads((copy / "grid.json").read_text())
    grid["name"] = name
    for row in rows:
        row["grid"] = name
        if change_row:
            change_row(row)
    if change_grid:
        change_grid(grid)
    (copy / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows if keep is None or keep(row)))
    (copy / "grid.json").write_text(json.dumps(grid))
    return copy


def test_an_ablation_of_grids_evaluated_differently_is_refused(capsys, swept, tmp_path):
    """Round 14 (B247): two grids evaluated on 1024 and on 512 tokens (eval.max_tokens) had their arms' perplexity
    changes put side by side in "Final numbers" without a word; the plain report refuses such rows (B2). The ablation
    refuses too, naming the setting and both folders, before --out is made. (The other grid's cap is the larger one:
    a row scoring more tokens than its own cap is skipped as impossible, round 20's M71 note.)"""
    other = _other_grid(swept, tmp_path / "abB", "tinyB",
                        change_row=lambda r: r["evaluation"]["options"].update(max_tokens=800),
                        change_grid=lambda g: g["eval_options"].update(max_tokens=800))
    line = fails(capsys, "report", "--ablation", swept, other, "--out", tmp_path / "abrep")
    assert f"were evaluated differently (eval.max_tokens: 400 in {swept}, 800 in {other})" in line, line
    assert not (tmp_path / "abrep").exists()


def test_an_ablation_names_its_bucket_columns_by_the_rows_and_the_runs_it_left_out(capsys, swept, tmp_path):
    """Round 14 (B248, B358): the frequency-bucket table's header had 5 columns ("bucket 1 ... bucket 5") while the
    rows held eval.buckets values (2 here); a run with no dense_tied of its width, depth and seed (here: its folder's
    dense_tied row removed) was left out of the ablation without a note. The header has one column per bucket, and
    the README and stderr name the run left out and why."""
    unpaired = _other_grid(swept, tmp_path / "abC", "tinyC", keep=lambda r: r["variant"] != "dense_tied")
    assert main(["report", "--ablation", str(swept), str(unpaired), "--out", str(tmp_path / "abrep")]) == 0
    readme = (tmp_path / "abrep" / "README.md").read_text()
    assert "| arm | bucket 1 | bucket 2 |\n|---|---|---|\n| tiny/a (dense_untied) | " in readme, readme
    said = (f"run 'a-dense_untied-s0' of grid 'tinyC' ({unpaired}; dense_untied, width 16, depth 2, seed 0) is left "
            f"out: no dense_tied run of the same width, depth and seed in its folder to pair it with")
    assert f"## Runs left out\n\n- {said}" in readme, readme
    assert f"note: {said}" in capsys.readouterr().err


def test_two_runs_metrics_swapped_in_a_sweep_folder_are_refused_naming_both(data, sweep_copy, tmp_path):
    """Round 15 (A239): in a copy of a sweep folder with its rows removed, the two runs' metrics.jsonl swapped made the
    rerun's rows of the wrong curves (since A240, the summary check blamed sweep_train.json, and deleting it as told
    made the rows silently). Every metrics line records its run's id (run.json): the sweep, and a resume of the run,
    refuse the swapped log, naming it and the run folder whose log it is."""
    from reliability_support import cli_error

    (sweep_copy / "results.jsonl").write_text("")
    a, b = (sweep_copy / "runs" / name for name in ("a-dense_tied-s0", "a-dense_untied-s0"))
    (a / "metrics.jsonl").rename(tmp_path / "swap")
    (b / "metrics.jsonl").rename(a / "metrics.jsonl")
    (tmp_path / "swap").rename(b / "metrics.jsonl")
    for summary in (a / "sweep_train.json", b / "sweep_train.json"):
        summary.unlink()  # what the summary check's line said to do: the swap itself must be named
    before = tree_hashes(sweep_copy)
    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy])
    theirs = json.loads((b / "run.json").read_text())["run_id"]
    assert (f"'{a / 'metrics.jsonl'}' holds lines of run_id {theirs}, the log of run folder '{b}' "
            f"('{b / 'run.json'}'), not of this run") in line, line
    assert "put each run's metrics.jsonl back into its own run folder" in line, line
    assert tree_hashes(sweep_copy) == before
    line = cli_error(["train", "--run-dir", a, "--resume", "auto", "--quiet"])
    assert f"cannot resume run folder '{a}': '{a / 'metrics.jsonl'}' holds lines of run_id {theirs}" in line, line

@pytest.mark.parametrize("row_change, grid_change, said", [
    (lambda r: r.update(size="c"), None, "a-dense_untied-s0: size: 'c' in the row, 'a' in grid.json"),
    (lambda r: r.update(regime="scaling", regimes=["scaling"]), None,
     "a-dense_untied-s0: regimes: ['scaling'] in the row, ['iso_body'] in grid.json"),
    (lambda r: r.update(data_seed=7), None, "a-dense_untied-s0: data_seed: 7 in the row, 0 in grid.json"),
    (None, lambda g: g["runs"][1].update(regimes=["scaling"]),
     "a-dense_untied-s0: regimes: ['iso_body'] in the row, ['scaling'] in grid.json"),
], ids=["B5-size", "B9-regimes", "B15-data-seed", "B164-grid-regimes"])
def test_a_row_that_says_it_is_another_run_than_grid_json_lists_is_refused(capsys, sweep_copy, tmp_path, row_change,
                                                                            grid_change, said):
    """Round 15 (B5, B9, B15, B164): a row whose size (b -> c), regimes (iso_body -> scaling) or data_seed (0 -> 7)
    was edited, or a grid.json whose run's regimes were, was reported without a word: the table said "c (vs b)" or
    lost the iso_body pair. What the run is (size, variant, regimes, data order) is compared with grid.json's entry of
    the run, by report as by every reader of ``check_one_sweep``."""
    if row_change is not None:
        _edit_second_row(sweep_copy / "results.jsonl", row_change)
    if grid_change is not None:
        grid = json.loads((sweep_copy / "grid.json").read_text())
        grid_change(grid)
        (sweep_copy / "grid.json").write_text(json.dumps(grid))
    line = fails(capsys, "report", sweep_copy, "--out", tmp_path / "r")
    assert said in line and "put back the sweep's own grid.json and results.jsonl rows" in line, line
    assert not (tmp_path / "r").exists()


def _presweep_of(swept: Path, folder: Path, grid: str, picked_lr: float) -> Path:
    """A pre-sweep folder of grid ``grid`` made from ``swept``'s rows: each variant at ``picked_lr`` (the lower loss)
    and at 0.05."""
    folder.mkdir()
    lines = []
    for line in (swept / "results.jsonl").read_text().splitlines():
        for lr, shift in ((picked_lr, 0.0), (0.05, 1.0)):
            row = json.loads(line)
            row.update(grid=grid, size=f"lr{lr:g}", name=f"lr{lr:g}-{row['variant']}-s0")
            if shift:  # a worse loss at 0.05: the fields that follow the loss moved with it
                loss = row["eval"]["val"]["loss"] + shift
                row["eval"]["val"].update(loss=loss, ppl=math.exp(loss), bpb=None)
                row.update(buckets={}, curve=None, final_val_loss=None, final_val_ppl=None)
            row["config"]["optim"]["lr"] = lr
            lines.append(json.dumps(row))
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_a_pre_sweep_of_another_grid_whose_picks_the_runs_did_not_train_at_is_refused(capsys, swept, tmp_path):
    """Round 15 (B178): ``report SW --lr-sweep LRO`` with LRO a pre-sweep of another grid said "Each arm's main runs
    use the lr picked here" and "picked 0.01" while every run trained at 0.0003, exit 0. A pre-sweep is the grid's when
    it is of grid ``GRID-lr`` or picked the rates its runs trained at; otherwise the report is refused, naming both."""
    other = _presweep_of(swept, tmp_path / "lro", "otherlr", 0.01)
    line = fails(capsys, "report", swept, "--lr-sweep", other, "--out", tmp_path / "r1")
    assert "is a pre-sweep of grid otherlr, not of 'tiny''s runs (dense_tied: picked 0.01, the runs trained at " \
           "0.0003" in line and not (tmp_path / "r1").exists(), line
    same = _presweep_of(swept, tmp_path / "lrp", "otherlr", 0.0003)  # its picks are the runs' rates: accepted
    assert main(["report", str(swept), "--lr-sweep", str(same), "--out", str(tmp_path / "r2")]) == 0
    own = _presweep_of(swept, tmp_path / "lrn", "tiny-lr", 0.01)  # the grid's own pre-sweep by name: accepted
    assert main(["report", str(swept), "--lr-sweep", str(own), "--out", str(tmp_path / "r3")]) == 0


def test_an_ablation_does_not_take_a_grid_file_of_the_current_folder_that_the_sweep_never_ran(data, swept, tmp_path):
    """Round 15 (B244): ``cd X; leviathan report SW --ablation`` with X/configs/experiments/tiny.yaml (the grid's
    name; size a with ``run: {optim.lr: 0.01}``, ``ablations: {shape: [a, zz]}``) labelled the arm "optim.lr=0.01"
    though it trained at the grid's rate, and drew a "shape" figure of the size zz the grid has not, exit 0. The
    file is left out with a warning naming the difference; the change column is grid.json's."""
    grid = yaml.safe_load(grid_file(tmp_path, data).read_text())
    grid["sizes"]["a"]["run"] = {"optim.lr": 0.01}
    grid["ablations"] = {"shape": ["a", "zz"]}
    (tmp_path / "cwd" / "configs" / "experiments").mkdir(parents=True)
    (tmp_path / "cwd" / "configs" / "experiments" / "tiny.yaml").write_text(yaml.safe_dump(grid))
    proc = cli(["report", swept, "--ablation", "--out", tmp_path / "ab"], cwd=tmp_path / "cwd")
    assert proc.returncode == 0, proc.stderr
    assert "tiny.yaml (found by the grid's name 'tiny') does not describe" in proc.stderr, proc.stderr
    assert "optim.lr 0.01 in the file, not set in grid.json" in proc.stderr
    assert "optim.lr" not in (tmp_path / "ab" / "README.md").read_text()
    assert not (tmp_path / "ab" / "gap_shape.png").exists()


@pytest.mark.parametrize("analysis", ["compare", "frequency", "efficiency", "throughput", "scaling"])
def test_an_analysis_of_rows_beside_another_grids_grid_json_is_refused_as_report_refuses_it(capsys, sweep_copy,
                                                                                            analysis):
    """Round 15 (B291): a folder holding one grid's results.jsonl beside another grid's grid.json (tinylr's) was
    analysed by compare, frequency, efficiency, throughput and scaling, exit 0, while ``report`` refused it. Every
    analysis of a sweep's rows compares them with the grid.json beside them, as report does."""
    grid = json.loads((sweep_copy / "grid.json").read_text())
    grid["name"] = "tinylr"
    (sweep_copy / "grid.json").write_text(json.dumps(grid))
    line = fails(capsys, "analyze", analysis, sweep_copy)
    assert f"{sweep_copy}/grid.json is of grid 'tinylr', but the rows of {sweep_copy} are of grid 'tiny'" in line


def test_an_efficiency_analysis_says_when_a_regime_has_no_pairs_and_names_an_unknown_split(capsys, swept):
    """Round 15 (B85, B89): ``analyze efficiency SW --regime scaling`` (no pairs there) printed nothing at all, exit 0;
    (B86) ``--model A --reference B --split nope`` blamed training ("was validation enabled?") though both runs
    validated on split 'val'. The first says there are no pairs; the second names the split and the ones there are."""
    assert main(["analyze", "efficiency", str(swept), "--regime", "scaling"]) == 0
    assert f"no scaling pairs in {swept}: no run of regime 'scaling' there" in capsys.readouterr().out
    runs = swept / "runs"
    line = fails(capsys, "analyze", "efficiency", "--model", runs / "a-dense_untied-s0", "--reference",
                 runs / "a-dense_tied-s0", "--split", "nope")
    assert line == "error: no validation rows of split 'nope' in the metrics (their splits: val); pass one of those " \
                   "to --split", line


def test_an_embeddings_record_of_another_run_at_out_is_not_replaced(swept, tmp_path):
    """Round 15 (B307): ``analyze embeddings RUN3 --out F`` with F run1's record replaced it with run3's, exit 0 "wrote
    F" (a user's file there was refused, B220). A record at --out is rewritten only by its own run's."""
    runs, out = swept / "runs", tmp_path / "keep.json"
    assert cli(["analyze", "embeddings", runs / "a-dense_tied-s0", "--out", out]).returncode == 0
    kept = out.read_bytes()
    proc = cli(["analyze", "embeddings", runs / "a-dense_untied-s0", "--out", out])
    assert proc.returncode == 2 and one_error(proc.stderr) == (
        f"error: '{out}' holds the embeddings record of run 'a-dense_tied-s0', not of 'a-dense_untied-s0': writing "
        f"this run's record there would lose it; choose another --out (e.g. a-dense_untied-s0.json), or move that "
        f"record away"), proc.stderr
    assert out.read_bytes() == kept
    assert cli(["analyze", "embeddings", runs / "a-dense_tied-s0", "--out", out]).returncode == 0  # its own: rewritten


@pytest.mark.parametrize("options, named", [
    (["--lr-sweep", "{swept}"], "--lr-sweep is an option of the sweep report"),
    (["--ladder", "dense_untied", "--bootstrap", "5"], "--ladder, --bootstrap are options of the sweep report"),
    (["--eval-set", "nope"], "--eval-set is an option of the sweep report"),
], ids=["B114-lr-sweep", "B115-ladder-bootstrap", "B116-eval-set"])
def test_an_ablation_refuses_the_sweep_reports_options_it_would_ignore(swept, tmp_path, options, named):
    """Round 15 (B114, B115, B116): ``report --ablation`` with --lr-sweep, --ladder, --bootstrap or --eval-set nope
    accepted them and wrote the README as if they were not given, exit 0. They are refused by name, before --out."""
    proc = cli(["report", swept, "--ablation", *[o.format(swept=swept) for o in options], "--out", tmp_path / "ab"])
    assert proc.returncode == 2 and named in one_error(proc.stderr), proc.stderr
    assert "which --ablation does not use" in proc.stderr and not (tmp_path / "ab").exists()


def test_embedding_records_of_another_grid_are_neither_written_nor_reported_as_this_sweeps(capsys, swept, sweep_copy,
                                                                                         tmp_path):
    """Round 15 (B264, B265): ``analyze embeddings --sweep LRO --dest SW4`` (LRO of grid tinylr, SW4 of grid tinyg)
    wrote LRO's records into SW4/embeddings, exit 0, and ``report SW4`` showed them as its runs'. The first is refused
    before any record; records of runs that have no row in the report are left out with a warning."""
    other = _other_grid(swept, tmp_path / "lro", "tinylr", change_row=lambda r: r.update(name="lr-" + r["name"]))
    for run in (other / "runs").iterdir():
        run.rename(run.parent / ("lr-" + run.name))
    line = fails(capsys, "analyze", "embeddings", "--sweep", other, "--dest", sweep_copy)
    assert f"--dest {sweep_copy} holds the results of grid 'tiny', but {other}'s runs are of grid 'tinylr'" in line
    assert "nothing was written" in line and not (sweep_copy / "embeddings").exists()
    assert main(["analyze", "embeddings", "--sweep", str(other)]) == 0
    shutil.copytree(other / "embeddings", sweep_copy / "embeddings")  # as the unchecked --dest left them
    assert main(["report", str(sweep_copy), "--out", str(tmp_path / "report"), "--bootstrap", "5"]) == 0
    err = capsys.readouterr().err
    assert "warning: 2 embeddings record(s) of runs that have no row here left out (lr-a-dense_tied-s0" in err, err
    assert "From embeddings/" not in (tmp_path / "report" / "report.md").read_text()


def test_a_report_names_the_runs_of_grid_json_without_a_row_and_the_rows_grid_json_does_not_list(capsys, sweep_copy,
                                                                                                  tmp_path):
    """Round 15 (B203): the report of one shard of two said "Source: `shA` (4 runs)" and nothing of the grid's other
    runs; (B163) a row of a run removed from grid.json's runs was reported as before. Both are named in a note, on
    stderr and in the report."""
    _drop_row(sweep_copy, "a-dense_untied-s0")
    assert main(["report", str(sweep_copy), "--out", str(tmp_path / "r1"), "--bootstrap", "5"]) == 0
    said = f"note: 1 of grid 'tiny''s 2 runs (grid.json) have no row in {sweep_copy} (a-dense_untied-s0)"
    assert said in capsys.readouterr().err and said[6:] in (tmp_path / "r1" / "report.md").read_text()
    grid = json.loads((sweep_copy / "grid.json").read_text())
    grid["runs"] = [run for run in grid["runs"] if run["name"] != "a-dense_tied-s0"]
    (sweep_copy / "grid.json").write_text(json.dumps(grid))
    assert main(["report", str(sweep_copy), "--out", str(tmp_path / "r2"), "--bootstrap", "5"]) == 0
    assert f"note: 1 row(s) of {sweep_copy} are of runs grid.json does not list (a-dense_tied-s0)" in \
        capsys.readouterr().err


def test_a_sigterm_during_an_analysis_imports_is_never_swallowed(swept):
    """Round 15 (B258): a SIGTERM 0.1-0.16 s into ``analyze throughput`` (while it imported) was at times swallowed:
    the table printed and exit 0, as if no signal came. A stop held over an import is redelivered by a timer thread
    that may not run before the verb ends; the verb's end now raises it. Every signalled process ends 143 (or is
    killed by the signal before the CLI's handler is in place)."""
    import os
    import signal
    import subprocess
    import time

    from reliability_support import REPO

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    statuses = []
    for i in range(12):
        proc = subprocess.Popen([sys.executable, "-m", "leviathan", "analyze", "throughput", str(swept)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.04 + 0.01 * i)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
            statuses.append((proc.returncode, err[-200:]))
        else:
            proc.communicate()
    assert statuses and all(status in (143, -signal.SIGTERM) for status, _ in statuses), statuses


def test_a_sweep_folder_of_one_grid_refuses_a_sweep_of_another_name(data, sweep_copy, tmp_path):
    """Round 16 (C82): a copy of grid 'tiny''s sweep swept with a grid file that differs only by its name took the rows
    as the new grid's ('2 already in ... 0 to go'), exit 0, and rewrote grid.json under the new name; the report then
    refused the folder. The folder holds one grid: refused with the fix, nothing rewritten."""
    from reliability_support import cli_error

    import yaml

    grid = tmp_path / "renamed.yaml"
    grid.write_text(yaml.safe_dump({**yaml.safe_load(grid_file(tmp_path, data).read_text()), "name": "tinyb"}))
    before = tree_hashes(sweep_copy)
    line = cli_error(["sweep", "--grid", grid, "--out", sweep_copy])
    assert f"'{sweep_copy}' holds the sweep of grid 'tiny' (its grid.json says so), not of grid 'tinyb'" in line, line
    assert "sweep grid 'tinyb' into a new --out, or give the grid its old name again (`name: tiny` in" in line, line
    assert tree_hashes(sweep_copy) == before
    from leviathan.experiments.machinery.sweep import SWEEP_FILES
    from leviathan.ownership import mark

    mark(sweep_copy, "sweep", SWEEP_FILES)  # the sweep's own folder (its marker written here), its grid.json gone:
    (sweep_copy / "grid.json").unlink()  # the rows say which grid they are of
    line = cli_error(["sweep", "--grid", grid, "--out", sweep_copy])
    assert "holds the sweep of grid 'tiny' (its rows say so: a-dense_tied-s0, a-dense_untied-s0)" in line, line


def test_a_copied_sweep_folder_without_grid_json_names_the_missing_grid_json(data, sweep_copy, tmp_path):
    """Round 16 (C255): with grid.json removed, a copy of a sweep folder was refused as 'the folder has no
    leviathan_output.json: no leviathan verb made it', though it has one; the line names the missing grid.json."""
    from reliability_support import cli_error

    (sweep_copy / "grid.json").unlink()
    before = tree_hashes(sweep_copy)
    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy])
    assert f"'{sweep_copy}' holds a sweep's results.jsonl and runs" in line and "but no grid.json" in line, line
    assert "put the sweep's grid.json back" in line and "no leviathan verb made it" not in line, line
    assert tree_hashes(sweep_copy) == before


def test_a_copied_sweep_folder_whose_grid_json_lists_no_runs_names_grid_json(data, sweep_copy, tmp_path):
    """Round 17 (D317): grid.json's runs edited to [] in a copy of a sweep folder was blamed on the copy ("would
    write over grid.json, results.jsonl, runs ... its leviathan_output.json was written in another folder"), while
    the same copy with grid.json intact resumes; the line names grid.json and what is wrong with it."""
    from reliability_support import cli_error

    recorded = json.loads((sweep_copy / "grid.json").read_text())
    (sweep_copy / "grid.json").write_text(json.dumps({**recorded, "runs": []}))
    before = tree_hashes(sweep_copy)
    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy])
    assert f"'{sweep_copy}' holds a sweep's results.jsonl and runs" in line, line
    assert "but a grid.json that lists no runs (edited, or replaced" in line and "would write over" not in line, line
    assert "put the sweep's grid.json back" in line, line
    assert tree_hashes(sweep_copy) == before


@pytest.mark.parametrize("change, said", [
    (lambda r: r.update(regime="scaling", regimes=["scaling"]), "a-dense_untied-s0: regimes: ['scaling'] in the row, "
                                                                "['iso_body'] now"),
    (lambda r: r.update(data_seed=7), "a-dense_untied-s0: data_seed: 7 in the row, 0 now"),
], ids=["regime", "data-seed"])
def test_a_sweep_rerun_refuses_a_row_whose_identity_the_grid_no_longer_gives(data, sweep_copy, tmp_path, change, said):
    """Round 16 (C82, the kind): a sweep compared its kept rows with the grid on their settings only, so a row whose
    regime or data_seed the grid no longer gives was counted as done and grid.json rewritten over it (report and
    collect refuse such a row against grid.json: B18-B20). The sweep applies the same rule against the grid now."""
    from reliability_support import cli_error

    _edit_second_row(sweep_copy / "results.jsonl", change)
    before = tree_hashes(sweep_copy)
    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy])
    assert "grid 'tiny' has changed since these rows were trained" in line and said in line, line
    assert tree_hashes(sweep_copy) == before


@pytest.mark.parametrize("given, said", [
    ({"results": []}, "write_report: results: is an empty list: no results folder was given; pass a sweep folder"),
    ({"ci": float("nan")}, "write_report: ci: must be a finite number, got nan; pass the intervals' coverage"),
    ({"ci": 2}, "write_report: ci: must lie strictly between 0 and 1, got 2;"),
    ({"seed": True}, "write_report: seed: must be an integer in [0, 4294967295], got True;"),
    ({"num_bootstrap": -1}, "write_report: num_bootstrap: must be a whole number >= 0, got -1;"),
    ({"num_bootstrap": 2.5}, "write_report: num_bootstrap: expected a whole number >= 0, got 2.5;"),
    ({"eval_set": ""}, "write_report: eval_set: expected the name of an eval set such as val or wikitext2"),
    ({"ladder": "nope"}, "write_report: ladder: must be one of dense_tied, "),
], ids=["C238-empty-list", "C243-ci-nan", "C241-ci-2", "C242-seed-true", "C245-bootstrap-negative", "bootstrap-float",
        "eval-set-empty", "ladder"])
def test_write_reports_python_arguments_are_checked_by_the_flags_rules_before_anything_is_written(
        swept, tmp_path, given, said):
    """Round 16 (C238, C241-C243, C245): write_report's Python arguments were taken unchecked: results=[] ended in an
    IndexError, ci=nan in a ValueError traceback leaving a marker-only --out, ci=2 wrote a '200% interval', seed=True
    was seed 1 and num_bootstrap=-1 no draws. Each is one UserError by its flag's rule, before --out is made."""
    from leviathan.errors import UserError
    from leviathan.experiments.report import write_report

    arguments = {"results": str(swept), "out_dir": tmp_path / "rep", "num_bootstrap": 5, **given}
    with pytest.raises(UserError) as caught:
        write_report(**arguments)
    assert said in str(caught.value), str(caught.value)
    assert not (tmp_path / "rep").exists()


def test_sweep_seeds_that_leave_out_the_folders_rows_are_refused(sweep_copy, data, tmp_path):
    """Round 17 (D20, D61): ``sweep --seeds 1`` over a folder of seed-0 rows rewrote grid.json with seeds [1], and the
    report then called the seed-0 rows "runs grid.json does not list"; when grid.json could not be written, a note
    followed that the grid "no longer has" runs its file still lists. A seeds flag that leaves out runs with rows
    there is refused in one line before anything is written, naming the seeds that keep them."""
    from reliability_support import cli, tree_hashes

    grid = grid_file(tmp_path, data)
    before = tree_hashes(sweep_copy)
    proc = cli(["sweep", "--grid", grid, "--out", sweep_copy, "--seeds", "1", "--only", "a-dense_tied*"])
    assert proc.returncode == 2 and "note:" not in proc.stderr, proc.stderr
    line = one_error(proc.stderr)
    assert "--seeds 1 leaves out 2 run(s) whose rows" in line and "(a-dense_tied-s0, a-dense_untied-s0)" in line \
        and "pass their seeds too (--seeds 0,1), or sweep into a new --out" in line, line
    assert tree_hashes(sweep_copy) == before
    proc = cli(["sweep", "--grid", grid, "--out", sweep_copy, "--seeds", "0"])  # the rows' own seeds: 0 to go
    assert proc.returncode == 0 and "2 already in" in proc.stdout, proc.stderr


def test_a_grids_text_eval_set_that_is_a_folder_or_relative_is_named_with_its_fix(capsys, data, tmp_path):
    """Round 20 (K92, K93): a ``text:`` eval set that is a folder was "/path not found", and a relative one that is
    missing was "not found" with no fix and no word that it is read against --data-root ($LEVIATHAN_DATA)."""
    folder = tmp_path / "tdir"
    folder.mkdir()
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, sets={"v": {"text": str(folder)}}),
                 "--out", tmp_path / "s1")
    assert f"eval set 'v': text: '{folder}' is a folder, not a file; set the grid's eval set text: to the path of a " \
           f"UTF-8 text file" in line, line
    optional = {"v": {"text": str(folder), "optional": True}}  # optional skips a missing file, not a folder
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, sets=optional), "--out", tmp_path / "s1")
    assert f"text: '{folder}' is a folder, not a file" in line, line
    root = tmp_path / "root"
    root.mkdir()
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data, sets={"v": {"text": "nofile.txt"}}),
                 "--out", tmp_path / "s2", "--data-root", root)
    assert f"text: '{root / 'nofile.txt'}' does not exist; a relative text: path is read against --data-root " \
           f"(default $LEVIATHAN_DATA), here '{root}'" in line, line
    assert not (tmp_path / "s1" / "runs").exists() and not (tmp_path / "s2" / "runs").exists()

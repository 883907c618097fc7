"""Every value read back from a checkpoint's sidecar is checked (issue 30, kind 2): a damaged or hand-edited field of
state.json is one error naming the file and the field, before anything is loaded or written
(``leviathan.checkpoint.state``); so are meta.json's numbers (``data.loader.load_meta``) and train_freq.npy.

Before, ``"step": -7`` or ``"tokens": "lots"`` ended in tracebacks, and a loader position or a step that
contradicts the folder resumed a run in a state that cannot exist, with exit 0.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from leviathan.cli import main
from leviathan.experiments.machinery.embedding_files import content_sha256

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, run_overrides, tree_hashes  # noqa: E402
from test_bad_input import fails, resume  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

NEWEST = "checkpoints/step-00000004/state.json"


def _edit(path: Path, change) -> None:
    """Edit a JSON sidecar; a meta.json's own field digests are rewritten too (round 14, A25: a folder edited as a
    whole), so the deeper check each test is about is the one that answers."""
    from leviathan.data.meta_digest import DIGESTS, field_digests

    state = json.loads(path.read_text())
    change(state)
    if path.name == "meta.json" and DIGESTS in state:
        state[DIGESTS] = field_digests(state)
    path.write_text(json.dumps(state))


@pytest.mark.parametrize("change, field, problem", [
    (lambda s: s.update(step=-7), "step", "is -7, expected an integer >= 0"),
    (lambda s: s.update(step=2), "step", "is 2 but the folder is step-00000004"),
    (lambda s: s.update(step=True), "step", "is True, expected an integer"),
    (lambda s: s.update(tokens="lots"), "tokens", "is 'lots', expected an integer"),
    (lambda s: s.update(tokens=3), "tokens", "is 3, expected an integer >= 4"),
    (lambda s: s.update(world_size=0), "world_size", "is 0, expected an integer >= 1"),
    (lambda s: s.update(train_time_s=float("nan")), "train_time_s", "is nan, expected a finite number >= 0"),
    (lambda s: s["loader"].update(position=1), "loader.position", "fewer sequences than the 4 steps taken"),
    (lambda s: s["loader"].update(seq_len=0), "loader.seq_len", "is 0, expected an integer >= 1"),
    (lambda s: s["loader"].update(shuffle="random"), "loader.shuffle", "expected one of windows, buffer, none"),
    (lambda s: s["loader"].pop("num_windows"), "loader.num_windows", "is None, expected an integer"),
    (lambda s: s["rng"].update(python=[3, [1, 2], None]), "rng.python[1]", "expected a list of 625 32-bit integers"),
    (lambda s: s["rng"]["numpy"].__setitem__(2, 700), "rng.numpy[2]", "is 700, expected an integer in [0, 624]"),
    (lambda s: s.update(files={"model.safetensors": "abc"}), "files", "sha256 (64 hex digits)"),
    (lambda s: s.update(format=2), "format", "is 2, expected 1"),
    # round 5: a name the step's own tokenizer files contradict resumed without a word
    (lambda s: s.update(tokenizer="bpe:301"), "tokenizer", "is 'bpe:301', but the step's leviathan_tokenizer.json is "
                                                           "'bpe:300'"),
    # round 6: numbers past numpy's int64 ended in an OverflowError traceback at the first resumed batch
    (lambda s: s["loader"].update(position=10**30), "loader.position", "more sequences than the 1024 tokens trained"),
    (lambda s: s.update(tokens=10**30), "tokens", f"is {10**30}, more than any run trains (at most {2**62})"),
    # round 10 (Q4): 1e308 s of training was carried into every later checkpoint and the run's summary
    (lambda s: s.update(train_time_s=1e308), "train_time_s", "is 1e+308 s, longer than the clock has run since 1970"),
    # Round 14 (A11, A19): tokens or the position edited apart from the other resumed without a word
    (lambda s: s.update(tokens=4096), "tokens", "is 4096, but loader.position 32 sequences x loader.seq_len 32 = 1024 "
                                                "tokens read"),
    (lambda s: s["loader"].update(position=33), "tokens", "is 1024, but loader.position 33 sequences x loader.seq_len "
                                                          "32 = 1056 tokens read"),
    # Round 15 (A156): the id of the run that saved the step is a run id or null
    (lambda s: s.update(run_id="run-b"), "run_id", "is 'run-b', expected a run id (32 hex digits) or null"),
    # Round 16 (C186): 'zz' was compared with the data's fingerprint and the data blamed; (C189) an integer skipped
    # the data check
    (lambda s: s.update(data_fingerprint="zz"), "data_fingerprint", "is 'zz', expected the data's fingerprint (64 hex"),
    (lambda s: s.update(data_fingerprint=12345), "data_fingerprint", "is 12345, expected the data's fingerprint"),
    # Round 20 (M18, M19): the step's validation was the one field taken unchecked (by export's card and a resume)
    (lambda s: s["validation"].update(val_loss="abc"), "validation", "has val_loss 'abc', not a number"),
    (lambda s: s["validation"].update(val_loss=float("nan")), "validation", "not exp(val_loss) = inf"),
    (lambda s: s.update(validation=[1]), "validation", "is [1], expected null or an object of val_loss"),
], ids=["step-negative", "step-not-the-folder", "step-bool", "tokens-text", "tokens-fewer-than-steps", "world-0",
        "time-nan", "loader-behind", "loader-seq-0", "loader-shuffle", "loader-missing", "rng-python", "rng-numpy",
        "files", "format", "tokenizer-name", "loader-past-the-tokens", "tokens-past-int64", "time-past-the-clock",
        "A11-tokens-apart-from-the-position", "A19-position-apart-from-the-tokens", "A156-run-id-not-an-id",
        "C186-data-fingerprint-not-a-digest", "C189-data-fingerprint-an-integer", "M18-validation-text",
        "M19-validation-nan", "M18-validation-not-an-object"])
def test_a_bad_field_of_state_json_stops_a_resume(capsys, data, run_copy, change, field, problem):
    """A field out of range, or fields that contradict each other: Round 14 (A11, A19) added tokens against
    loader.position x loader.seq_len, which every step folder train writes satisfies (``checkpoint.state``)."""
    _edit(run_copy / NEWEST, change)
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6))
    assert f"state.json': field {field!r} " in line and problem in line, line
    assert "restore the file from a copy, or move the step folder" in line
    assert tree_hashes(run_copy) == before


@pytest.mark.parametrize("first, then", [
    ({"data.shuffle": "windows", "micro_batch_size": 2}, {"batch_tokens": 128}),  # 4 micro steps, then 2
    ({"data.shuffle": "buffer", "data.shuffle_buffer": 5}, {"batch_tokens": 512}),
    ({"data.shuffle": "none", "micro_batch_size": 8}, {"micro_batch_size": 1}),  # no accumulation, then 8 micro steps
], ids=["windows", "buffer", "none"])
def test_every_step_folder_train_writes_has_its_tokens_equal_to_the_sequences_read(data, tmp_path, first, then):
    """Round 14 (A11, A19): the rule state.json is now held to (tokens = loader.position x loader.seq_len) is true of
    real checkpoints in every shuffle mode, with gradient accumulation, and across a resume that changes batch_tokens
    or the micro batch: each such resume and every step folder it leaves read back."""
    from leviathan.checkpoint.layout import list_checkpoints
    from leviathan.checkpoint.state import read_step_state

    run = tmp_path / "run"
    code = cli(["train", *run_overrides(data, **first), "--run-dir", run, "--quiet"]).returncode
    assert code == 0
    done = cli(["train", *run_overrides(data, **{**first, **then, "max_steps": 7}), "--run-dir", run, "--resume", "auto",
                "--quiet"])
    assert done.returncode == 0, done.stderr
    steps = list_checkpoints(run)
    assert [s for s, _ in steps] == [2, 4, 6, 7]
    for _, folder in steps:
        state = read_step_state(folder)
        assert state.tokens == state.loader["position"] * state.loader["seq_len"]


def test_a_bad_field_stops_eval_and_export(capsys, run_copy, tmp_path):
    _edit(run_copy / NEWEST, lambda s: s.update(tokens=-1))
    assert "field 'tokens' is -1, expected an integer >= 4" in cli_error(["eval", run_copy])  # a real process
    assert "field 'tokens' is -1, expected an integer >= 4" in fails(capsys, "export", run_copy, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


@pytest.mark.parametrize("loss", ["abc", float("nan")], ids=["M18-text", "M19-nan"])
def test_an_edited_validation_in_state_json_stops_export(run_copy, tmp_path, loss):
    """M18, M19 (round 20): state.json's validation.val_loss edited to 'abc' or NaN was exported with exit 0 (the
    card saying "Not quoted"), the damaged field never named. Now the export is refused by name, nothing written."""
    _edit(run_copy / NEWEST, lambda s: s["validation"].update(val_loss=loss))
    line = cli_error(["export", run_copy, tmp_path / "hf"])
    assert "state.json': field 'validation' has val" in line and "restore the file from a copy" in line, line
    assert not (tmp_path / "hf").exists()


def test_a_repeated_key_in_state_json_is_refused(capsys, data, run_copy):
    path = run_copy / NEWEST
    path.write_text(path.read_text().replace('"step": 4,', '"step": 4, "step": 2,', 1))
    assert "appears twice" in fails(capsys, *resume(run_copy, data, max_steps=6))


@pytest.fixture
def data_copy(data, tmp_path) -> Path:
    return Path(shutil.copytree(data, tmp_path / "data"))


@pytest.mark.parametrize("field, value, shown", [
    ("vocab_size", -5, "field 'vocab_size' is -5, expected an integer >= 1"),
    ("eot_id", 10**6, "field 'eot_id' is 1000000, expected an integer in [0, 299]"),
    ("splits", [], "field 'splits' is [], expected an object of splits"),
    ("splits.train.tokens", "many", "field 'splits.train.tokens' is 'many', expected an integer >= 0"),
    ("splits.val.file", "../../etc/passwd", "field 'splits.val.file' is '../../etc/passwd', expected a file name"),
    # round 8 (M6, M12): fingerprints no prepare writes went into new rows beside the old ones
    ("fingerprint", 42, "field 'fingerprint' is 42, expected a digest (text, a sha256 as prepare writes) or null"),
    ("fingerprint", None, "field 'fingerprint' is null beside 'fingerprint_version' 2, which always records one"),
    ("fingerprint_version", 3, "field 'fingerprint_version' is 3, expected 1 or 2"),
    # round 10 (Q11): no documents in a split of tokens was read as it was
    ("splits.train.documents", 0, "field 'splits.train.documents' is 0, but the split holds "),
], ids=["vocab", "eot", "splits-shape", "tokens-text", "file-outside", "fingerprint-number", "fingerprint-null",
        "fingerprint-version", "no-documents"])
def test_a_bad_number_in_meta_json(capsys, data_copy, tmp_path, field, value, shown):
    meta_path = data_copy / "meta.json"
    meta = json.loads(meta_path.read_text())
    node, *rest = field.split(".")
    if rest:
        target = meta[node]
        for part in rest[:-1]:
            target = target[part]
        target[rest[-1]] = value
    else:
        meta[node] = value
    meta_path.write_text(json.dumps(meta))

    line = fails(capsys, "train", *run_overrides(data_copy), "--run-dir", tmp_path / "run", "--quiet")
    assert shown in line and "meta.json was damaged or edited by hand" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("scale", [10, 0.35], ids=["A25-ten-times", "A26-a-third"])
def test_a_byte_count_of_meta_json_edited_within_its_range_is_refused_by_eval(capsys, finished_run, data_copy, scale):
    """Round 14 (A25, A26): ``splits.val.bytes`` edited to 10x (or about a third of) what prepare counted passed the
    range checks and changed eval's bits per byte without a word (5.27 read as 0.53 or 15.04). meta.json records a
    digest of each of its fields as prepare wrote them: the edit is one error naming the file, the field and the fix;
    a meta.json of before (no digests) still reads."""
    meta_path = data_copy / "meta.json"
    pristine = json.loads(meta_path.read_text())
    assert "field_digests" in pristine
    meta = json.loads(json.dumps(pristine))
    meta["splits"]["val"]["bytes"] = int(meta["splits"]["val"]["bytes"] * scale)
    meta_path.write_text(json.dumps(meta, indent=2))
    line = fails(capsys, "eval", finished_run, "--data", data_copy)
    assert f"{meta_path}: field 'splits' is not the value prepare wrote" in line, line
    assert f"prepare the data again (leviathan prepare SOURCE --out {data_copy} --overwrite)" in line, line
    meta.pop("field_digests")  # prepared before round 14: read as before
    meta["created"] = BEFORE_DIGESTS
    meta["splits"]["val"]["bytes"] = pristine["splits"]["val"]["bytes"]
    meta_path.write_text(json.dumps(meta, indent=2))
    assert main(["eval", str(finished_run), "--data", str(data_copy)]) == 0


# when the width round's data folder was prepared, an hour before prepare wrote field_digests (round 19, H214)
BEFORE_DIGESTS = "2026-12-04T22:52:55+00:00"


def test_a_meta_json_that_lost_its_digests_is_refused_by_eval(capsys, finished_run, data_copy):
    """Round 21 (P512): meta.json's ``field_digests`` removed and ``splits.val.bytes`` doubled gave bits per byte
    halved, exit 0: without digests a meta.json read as one prepared before them. One created since prepare writes
    them is refused naming the missing field; one created before (H214's folder) still reads."""
    meta_path = data_copy / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta.pop("field_digests")
    meta["splits"]["val"]["bytes"] *= 2
    meta_path.write_text(json.dumps(meta, indent=2))
    line = fails(capsys, "eval", finished_run, "--data", data_copy)
    assert f"{meta_path}: field 'field_digests' is missing, but every prepare since 2026-12-04" in line, line
    assert f"was created {meta['created']}" in line and "prepare the data again" in line, line
    meta["created"] = BEFORE_DIGESTS
    meta_path.write_text(json.dumps(meta, indent=2))
    assert main(["eval", str(finished_run), "--data", str(data_copy)]) == 0


@pytest.mark.parametrize("damage, shown", [
    (lambda f: f[:-1], "expected 300 integer counts"),
    (lambda f: f.astype(np.float64), "expected 300 integer counts"),
    (lambda f: f * 2, "tokens but meta.json's train split has"),
], ids=["short", "floats", "other-counts"])
def test_a_damaged_train_freq_is_refused(capsys, finished_run, data_copy, damage, shown):
    path = data_copy / "train_freq.npy"
    freq = np.load(path)
    np.save(path, damage(freq))
    meta = json.loads((data_copy / "meta.json").read_text())
    meta.pop("files", None)  # the digest would catch it first: check the content rules themselves
    meta.pop("field_digests", None)  # and so would meta.json's own (round 14), read as a folder of before them
    meta["created"] = BEFORE_DIGESTS  # (round 21, P512: one created since must have them)
    (data_copy / "meta.json").write_text(json.dumps(meta))
    line = fails(capsys, "analyze", "frequency", "--runs", finished_run, "--data", data_copy)
    assert shown in line, line


# ---- the other sidecars: a run's training summary, a sweep's grid.json, a tokenizer's record --------------------
@pytest.fixture
def sweep_copy(data, tmp_path) -> Path:
    from leviathan.cli import main
    from test_row_identity import grid_file

    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(tmp_path / "sweep")]) == 0
    return tmp_path / "sweep"


def test_a_damaged_training_summary_is_refused_by_name(capsys, data, sweep_copy, tmp_path):
    from test_row_identity import grid_file

    summary = sweep_copy / "runs" / "a-dense_untied-s0" / "sweep_train.json"
    _edit(summary, lambda s: s.update(steps="many"))
    lines = (sweep_copy / "results.jsonl").read_text().splitlines()
    (sweep_copy / "results.jsonl").write_text(lines[0] + "\n")  # the run has no row: the sweep reads its summary
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data), "--out", sweep_copy)
    assert "sweep_train.json': field 'steps' is 'many', expected an integer >= 0" in line
    assert len((sweep_copy / "results.jsonl").read_text().splitlines()) == 1  # no row from it


def test_a_damaged_grid_json_is_refused_by_name(capsys, sweep_copy):
    original = (sweep_copy / "grid.json").read_text()
    _edit(sweep_copy / "grid.json", lambda g: g.update(unigram_entropy="abc"))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5")
    assert "is not a sweep's grid.json (field 'unigram_entropy' is 'abc', expected a finite number" in line
    # round 8 (G1, G8): a run's name that is a path, a fingerprint no prepare writes
    _edit(sweep_copy / "grid.json", lambda g: g.update(unigram_entropy=None, data_fingerprint_version=3))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5")
    assert "(field 'data_fingerprint_version' is 3, expected 1 or 2)" in line
    _edit(sweep_copy / "grid.json", lambda g: (g.update(data_fingerprint_version=2), g["runs"][0].update(name="../x")))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5")
    assert "(a run of field 'runs' has name '../x', expected a run's folder name)" in line
    # round 10 (P137, P138): overrides that are not a list, or not KEY=VALUE, were read as nothing
    _edit(sweep_copy / "grid.json", lambda g: (g["runs"][0].update(name="a-dense_tied-s0", run_overrides="x")))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5")
    assert "(field 'runs.run_overrides' is 'x', not a list of KEY=VALUE strings)" in line, line
    _edit(sweep_copy / "grid.json", lambda g: (g["runs"][0].update(run_overrides=[]),
                                               g["base_overrides"].append("nonsense")))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5")
    assert "(field 'base_overrides' holds 'nonsense', not a KEY=VALUE string)" in line, line
    # round 10 (Q28): an empty name turned off the check that a report's rows are of its grid
    (sweep_copy / "grid.json").write_text(original)
    _edit(sweep_copy / "grid.json", lambda g: g.update(name=""))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5")
    assert "(field 'name' is '', expected the grid's name (or null))" in line


def test_a_grid_jsons_unigram_plateau_above_ln_vocab_is_refused(capsys, sweep_copy):
    """Round 21 (P353): a collected grid.json with unigram_entropy 50.0, read where its data folder is not found, made
    a report saying "Unigram plateau ...: 50.000 nats", impossible for a 300-id vocabulary (at most ln 300 = 5.70)."""
    vocab = json.loads((sweep_copy / "grid.json").read_text())["vocab_size"]
    _edit(sweep_copy / "grid.json", lambda g: g.update(unigram_entropy=50.0, data_dir="no/such/data"))
    line = fails(capsys, "report", sweep_copy, "--bootstrap", "5", "--out", sweep_copy.parent / "rp")
    assert (f"is not a sweep's grid.json (field 'unigram_entropy' is 50.0, more than ln({vocab}) = "
            f"{math.log(vocab):.3f} nats") in line, line
    assert not (sweep_copy.parent / "rp").exists()
    _edit(sweep_copy / "grid.json", lambda g: g.update(unigram_entropy=math.log(vocab) * 0.9))
    assert main(["report", str(sweep_copy), "--bootstrap", "5", "--out", str(sweep_copy.parent / "rp")]) == 0


def test_a_copied_sweep_with_a_damaged_grid_json_names_the_field(capsys, data, sweep_copy, tmp_path):
    """Round 9 (M30): a sweep folder copied elsewhere (its marker then proves nothing) whose grid.json holds
    ``eval_options.buckets: -2`` was refused as "would write over grid.json, results.jsonl, runs ..., which it did not
    create": the sweep's own folder, the damaged field unnamed."""
    from test_row_identity import grid_file

    from reliability_support import tree_hashes

    copied = Path(shutil.copytree(sweep_copy, tmp_path / "copied"))
    _edit(copied / "grid.json", lambda g: g["eval_options"].update(buckets=-2))
    before = tree_hashes(copied)
    capsys.readouterr()
    line = fails(capsys, "sweep", "--grid", grid_file(tmp_path, data), "--out", copied)
    assert "grid.json is not a sweep's grid.json (field 'eval_options.buckets' is -2" in line, line
    assert tree_hashes(copied) == before


def test_a_damaged_tokenizer_record_is_refused_by_name(capsys, run_copy):
    from reliability_support import refingerprint

    step = run_copy / "checkpoints" / "step-00000004"
    _edit(step / "leviathan_tokenizer.json", lambda t: t.update(eot_id="x"))
    refingerprint(step)  # consistent fingerprints: the field check must hold on its own
    line = fails(capsys, "generate", run_copy, "--max-new-tokens", "2")
    assert "field 'eot_id' of its tokenizer record is 'x', not an integer" in line


# ---- metrics.jsonl: a damaged line is skipped with a warning, never trusted (issue 30 round 4) --------------------
DAMAGED_METRICS = ['{"step": 4, "tokens": 1024, "val_loss": "NaN", "val_ppl": null, "split": "val"}',
                   "[1, 2]", '{"step": "x", "tokens": 5}', '{"step": 5, "tokens": "many", "val_loss": 4.1}']


def test_a_damaged_metrics_line_is_skipped_by_every_reader(capsys, data, run_copy, tmp_path):
    from reliability_support import cli

    metrics = run_copy / "metrics.jsonl"
    good = metrics.read_text()
    metrics.write_text(good + "\n".join(DAMAGED_METRICS) + "\n")
    n = len(good.splitlines())  # the damaged lines are n + 1 ... n + 4
    proc = cli(["export", run_copy, tmp_path / "hf"])  # the model card reads the validation of the step: a real process
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"metrics.jsonl:{n + 1}: line {n + 1} has val_loss 'NaN', not a number; skipped" in proc.stderr
    assert f"line {n + 2} is not a metrics row (a JSON object), but a JSON list" in proc.stderr
    proc = cli(["analyze", "efficiency", "--model", metrics, "--reference", metrics])
    assert proc.returncode == 0 and f"line {n + 4} has tokens 'many', not a count" in proc.stderr, proc.stderr
    png = tmp_path / "curve.png"  # round 6: another file passed as the metrics was "no validation rows"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    proc = cli(["analyze", "efficiency", "--model", png, "--reference", metrics])
    assert proc.returncode == 2 and f"error: {str(png)!r} is not a run's metrics.jsonl (a PNG image;" in proc.stderr
    from leviathan.cli import main

    assert main(resume(run_copy, data, max_steps=5)) == 0  # the resume rewrites the file: the damaged lines go
    assert f"line {n + 3} has step 'x', not an integer >= 0; skipped, dropped from the file" in capsys.readouterr().err
    rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert all(isinstance(r, dict) and isinstance(r["step"], int) for r in rows) and rows[-1]["step"] == 5


@pytest.mark.parametrize("change, shown", [
    (lambda m: m["splits"].__setitem__("train", dict(m["splits"]["val"])),
     "fields 'splits.train.file' and 'splits.val.file' both name 'val.bin'"),
    (lambda m: m["splits"]["val"].update(bytes=7), "field 'splits.val.bytes' is 7, too few for the split's"),
    (lambda m: m["splits"]["val"].update(documents=10**6), "more than the split's"),
    # round 11 (S201): 10^15 bytes for 3,316 tokens gave "bpb 0.0000", exit 0
    (lambda m: m["splits"]["val"].update(bytes=10**15), "field 'splits.val.bytes' is 1,000,000,000,000,000, too many "
                                                         "for the split's"),
], ids=["train-reads-val", "bytes-too-few", "documents-more-than-tokens", "bytes-too-many"])
def test_split_numbers_that_contradict_each_other(finished_run, data_copy, change, shown):
    """Round 5: meta.json's splits are checked against each other, not only one by one. A train split pointed at
    val.bin trained on the validation text, and 7 bytes for 3,000 tokens gave bits per byte of 2,905, both exit 0."""
    meta_path = data_copy / "meta.json"
    meta = json.loads(meta_path.read_text())
    change(meta)
    meta_path.write_text(json.dumps(meta))
    before = tree_hashes(data_copy)
    line = cli_error(["eval", finished_run, "--data", data_copy])
    assert shown in line and "meta.json was damaged or edited by hand" in line
    assert tree_hashes(data_copy) == before


def test_a_tokenizer_name_in_meta_json_its_tokenizer_files_contradict(capsys, finished_run, data_copy, tmp_path):
    """Round 6: meta.json's tokenizer edited to 'o200k_base' beside the bpe:300 files was evaluated (and trained on)
    without a word; every number was right, the name in every row and report wrong. Checked as state.json's is."""
    _edit(data_copy / "meta.json", lambda m: m.update(tokenizer="o200k_base"))
    before = tree_hashes(data_copy)
    shown = "meta.json says tokenizer 'o200k_base' but the folder's leviathan_tokenizer.json is 'bpe:300'"
    assert shown in cli_error(["eval", finished_run, "--data", data_copy])
    assert shown in fails(capsys, "train", *run_overrides(data_copy), "--run-dir", tmp_path / "run", "--quiet")
    assert tree_hashes(data_copy) == before and not (tmp_path / "run").exists()


def test_an_adopted_folders_generator_settings_edited_to_text_are_refused_by_name(tmp_path):
    """Round 6: config.json's ``leviathan_generator`` edited from its mapping to text ended in an AttributeError
    traceback in ``load_adopted`` (and in the adopted class's own ``from_pretrained``)."""
    from transformers import LlamaConfig

    from leviathan.errors import UserError
    from leviathan.hf import adopt, load_adopted

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    model = adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4)
    model.save_pretrained(tmp_path / "adopted")
    config = tmp_path / "adopted" / "config.json"
    _edit(config, lambda c: c.update(leviathan_generator="abc"))
    with pytest.raises(UserError) as info:
        load_adopted(tmp_path / "adopted")
    assert f"{config}: leviathan_generator is 'abc', not the mapping of generator settings" in str(info.value)
    with pytest.raises(UserError, match="leviathan_generator is 'abc'"):
        type(model).from_pretrained(tmp_path / "adopted")  # the adopted class, as transformers' Auto classes load it


@pytest.mark.parametrize("edit, said", [
    ({"norm": "yes"}, "leviathan_generator holds a setting the generator refuses (norm must be true or false, got "
                      "'yes'): config.json was edited or damaged; restore it from a copy"),  # E174
    ({"form": "khronos"}, "lacks 2 of the generator's tensors (model.embed_tokens.knot_log_scale, "),  # E175
    ({"center": True}, "lacks 1 of the generator's tensors (model.embed_tokens.center) that config.json's "
                       "leviathan_generator asks for, while it holds the generator's other tensors: config.json's "
                       "settings were edited"),  # E177
], ids=["norm-text", "form", "center"])
def test_an_adopted_folders_edited_generator_settings_name_config_json(tmp_path, edit, said):
    """Round 17 (E174, E175, E177): config.json's generator settings edited were blamed elsewhere: a value the
    generator refuses got adopt()'s fix ("pick values LeviathanGenerator accepts"), and a form or center that needs
    tensors the file lacks was called "a folder re-saved by transformers without leviathan", with re-adopting as the
    fix. Both now name config.json as edited and say to restore it; a real re-save keeps its own line."""
    from transformers import LlamaConfig

    from leviathan.errors import UserError
    from leviathan.hf import adopt, load_adopted

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "adopted")
    config = tmp_path / "adopted" / "config.json"
    _edit(config, lambda c: c["leviathan_generator"].update(edit))
    with pytest.raises(UserError) as info:
        load_adopted(tmp_path / "adopted")
    assert said in str(info.value) and "re-saved by transformers" not in str(info.value), str(info.value)
    assert "config.json" in str(info.value) and "restore" in str(info.value), str(info.value)


@pytest.mark.parametrize("model_type", ["mistral", "gpt2"])
def test_an_adopted_folder_whose_model_type_was_edited_is_refused(tmp_path, model_type):
    """Round 8 left (A21, A22): config.json's model_type edited to mistral or gpt2 loaded as the Llama the adoption
    recorded (``leviathan_generator.architecture``), without a word; transformers alone builds the edited type from
    the same folder. Now the file, both types and the fix are named."""
    from transformers import LlamaConfig

    from leviathan.errors import UserError
    from leviathan.hf import adopt, load_adopted

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "adopted")
    config = tmp_path / "adopted" / "config.json"
    _edit(config, lambda c: c.update(model_type=model_type))
    with pytest.raises(UserError) as info:
        load_adopted(tmp_path / "adopted")
    assert (f"{config}: model_type is {model_type!r}, but the adopted model was saved as LlamaForCausalLM "
            f"(model_type 'llama'") in str(info.value)
    _edit(config, lambda c: c.update(model_type="llama"))
    assert type(load_adopted(tmp_path / "adopted")).__name__ == "LeviathanLlamaForCausalLM"


# ---- embeddings records ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recorded_sweep(data, tmp_path_factory) -> Path:
    """A finished two-run sweep with the embeddings record of each run (real training and analysis)."""
    from leviathan.cli import main
    from reliability_support import swept_grid
    from test_row_identity import grid_file

    root = tmp_path_factory.mktemp("records")
    swept_grid(grid_file(root, data), root)
    assert main(["analyze", "embeddings", "--sweep", str(root / "sweep"), "--probes", "4"]) == 0
    return root / "sweep"


def _stats(record: dict, when: str, group: str) -> dict:
    return next(g for g in record[when] if g["group"] == group)


@pytest.mark.parametrize("change, shown", [
    (lambda r: _stats(r, "final", "all").update(rms=-1.0), "final[all].rms is -1.0, not a root mean square >= 0"),
    (lambda r: _stats(r, "final", "all").update(mean_cosine=7.0), "final[all].mean_cosine is 7.0, not a cosine in [-1, 1]"),
    (lambda r: _stats(r, "init", "seen").update(effective_rank=500.0),
     "init[seen].effective_rank is 500.0, not a rank in [1, 16] (hidden_size)"),
    (lambda r: _stats(r, "final", "all").update(shared_share=1.5), "final[all].shared_share is 1.5, not a share in"),
    (lambda r: _stats(r, "final", "all").update(num_ids=10**6), "final[all].num_ids is 1000000, not a count of ids"),
    (lambda r: r["probes"][0].update(final=[9999, -3]), "probes[0].final is [9999, -3], not at most 10 (top_k) ids"),
    (lambda r: r.update(step=99), "step is 99, past the run's 2 steps (total_steps)"),
    (lambda r: r.update(num_buckets=0), "num_buckets is 0, not an integer >= 1"),
    (lambda r: r.update(final=r["final"][:1]), "final holds the groups ['all'], not all, seen, unseen and bucket 1"),
    # round 8 left (E4): a count written as text was read as the number (config.from_dict reads "300" as 300)
    (lambda r: _stats(r, "final", "all").update(num_ids="300"), "final[all].num_ids is '300' (text), not an integer"),
    (lambda r: r["code"].update(commit=42), "code.commit is 42 (an integer), not text"),
], ids=["rms", "cosine", "rank", "share", "num-ids", "probe-ids", "step", "buckets", "groups-left-out",
        "count-as-text", "commit-a-number"])
def test_an_embeddings_record_with_an_impossible_number_is_refused_by_name(recorded_sweep, tmp_path, change, shown):
    """Round 8 (E1-E8): a record edited by hand or damaged went into the report as it was, exit 0: a mean cosine of
    7 was shown as +7.0000. Now the file and the field are named (``machinery.record_checks``), nothing written."""
    sweep = Path(shutil.copytree(recorded_sweep, tmp_path / "sweep"))
    path = sweep / "embeddings" / "a-dense_untied-s0.json"
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))
    before = tree_hashes(sweep)
    line = cli_error(["report", sweep, "--out", tmp_path / "report"])
    assert f"{path} is a damaged embeddings record ({shown}" in line, line
    assert "--redo" in line and not (tmp_path / "report" / "report.md").exists() and tree_hashes(sweep) == before


def test_a_format_field_of_true_or_text_and_a_step_config_of_another_depth_are_named(capsys, data_copy, run_copy,
                                                                                     tmp_path):
    """Round 8 (M4, M13, K18, K13): meta.json's ``format: "1"`` said "format 1, expected 1"; ``format: true`` in
    meta.json or an output marker was taken as 1 (true == 1 in Python); a step's config.yaml edited from 2 layers to
    1 (its digest rewritten) blamed "another embedding variant"."""
    from reliability_support import refingerprint

    for value, shown in (("1", "(format '1', expected 1)"), (True, "(format True, expected 1)")):
        _edit(data_copy / "meta.json", lambda m: m.update(format=value))
        assert shown in fails(capsys, "eval", run_copy, "--data", data_copy, "--max-tokens", "64")
    _edit(data_copy / "meta.json", lambda m: m.update(format=1))
    _edit(run_copy / "leviathan_output.json", lambda m: m.update(format=True))
    assert "leviathan_output.json': field 'format' is True, expected 1" in \
        fails(capsys, "train", *run_overrides(data_copy), "--run-dir", run_copy, "--resume", "auto", "--quiet")
    step = run_copy / "checkpoints" / "step-00000004"
    config = step / "config.yaml"
    config.write_text(config.read_text().replace("num_hidden_layers: 2", "num_hidden_layers: 1"))
    refingerprint(step)
    line = fails(capsys, "export", run_copy, tmp_path / "hf")
    assert "they come from a model of another depth (model.num_hidden_layers)" in line
    assert not (tmp_path / "hf").exists()


def test_a_loader_state_or_a_dtype_edited_apart_from_the_files_names_the_sidecar(capsys, data, data_copy, run_copy):
    """Round 7 left these (B2, B13): state.json's ``loader.num_windows`` edited to 10 named no file and said only
    "resume with the same data" (the data was the same: the file was edited); meta.json's ``dtype`` edited from
    uint16 to uint32 blamed val.bin ("truncated or from another preparation")."""
    _edit(run_copy / NEWEST, lambda s: s["loader"].update(num_windows=10))
    line = fails(capsys, *resume(run_copy, data))
    assert f"{run_copy / NEWEST}: cannot resume the data loader: the saved num_windows is 10" in line
    assert "the saved state was edited or damaged: restore state.json from a copy" in line
    _edit(data_copy / "meta.json", lambda m: m.update(dtype="uint32"))
    line = fails(capsys, "eval", run_copy / "checkpoints" / "step-00000002", "--data", data_copy, "--max-tokens", "64")
    assert f"{data_copy / 'meta.json'}: field 'dtype' is 'uint32', but val.bin's" in line
    assert "meta.json records as uint16: meta.json was edited or damaged; restore it (dtype 'uint16')" in line


def test_a_token_count_edited_in_meta_json_names_meta_json_not_the_token_file(data_copy, tmp_path):
    """Round 9 (M18): meta.json's ``splits.train.tokens`` edited by one blamed train.bin ("the file is truncated or
    from another preparation") although train.bin has the digest meta.json itself records."""
    _edit(data_copy / "meta.json", lambda m: m["splits"]["train"].update(tokens=m["splits"]["train"]["tokens"] + 1))
    line = cli_error(["train", *run_overrides(data_copy), "--run-dir", tmp_path / "run"])
    assert f"{data_copy / 'meta.json'}: field 'splits.train.tokens' is " in line, line
    assert "the file prepared with this meta.json" in line and not (tmp_path / "run").exists()


def test_an_embeddings_record_of_format_zero_or_of_another_size_than_its_row_is_refused(recorded_sweep, tmp_path):
    """Round 9 (M34, M33): a record's ``format: 0`` (no leviathan writes one) and a ``vocab_size`` edited from 300 to
    301 (every number still in range for 301) went into the report, exit 0."""
    sweep = Path(shutil.copytree(recorded_sweep, tmp_path / "sweep"))
    path = sweep / "embeddings" / "a-dense_untied-s0.json"
    original = path.read_text()
    _edit(path, lambda r: r.update(format=0))
    assert f"{path} is not an embeddings record (no format number >= 1)" in \
        cli_error(["report", sweep, "--out", tmp_path / "r1"])
    path.write_text(original)
    # edited whole (its sha256 too), as a record written by another run of vocabulary 301 would be
    _edit(path, lambda r: r.update(vocab_size=301, sha256=content_sha256({**r, "vocab_size": 301})))
    line = cli_error(["report", sweep, "--out", tmp_path / "r2"])
    assert f"{str(path)!r}: field 'vocab_size' is 301, but the results row of run 'a-dense_untied-s0' says 300" in line
    assert not (tmp_path / "r2" / "report.md").exists()


def test_an_embeddings_record_edited_within_range_is_refused_without_a_row(recorded_sweep, tmp_path):
    """Round 9 (M35): a record's ``hidden_size`` edited from 16 to 32, compared as two files (``analyze embeddings
    A.json B.json``, no results row to check it against), was accepted: every rank still fits D = 32. A record now holds
    the sha256 of its other fields (format 2); one whose fields no longer match it is refused by name."""
    first, second = sorted((recorded_sweep / "embeddings").glob("*.json"))[:2]
    a, b = Path(shutil.copy(first, tmp_path / "A.json")), Path(shutil.copy(second, tmp_path / "B.json"))
    assert json.loads(a.read_text())["format"] == 2
    assert cli(["analyze", "embeddings", a, b]).returncode == 0
    hidden = json.loads(a.read_text())["hidden_size"]
    _edit(a, lambda r: r.update(hidden_size=2 * hidden))
    before = tree_hashes(tmp_path)
    line = cli_error(["analyze", "embeddings", a, b])
    assert f"{a} is a damaged embeddings record (its fields are not those it was written with: their sha256 is " in line
    assert "a value was edited or the file damaged); remake it with `leviathan analyze embeddings RUN_DIR" in line
    _edit(a, lambda r: r.pop("sha256"))  # the digest taken out too
    assert "the record says None; a value was edited" in cli_error(["analyze", "embeddings", a, b])
    _edit(a, lambda r: r.update(format=1, sha256="0" * 64))  # an older format that holds a digest
    assert "the record says 000000000000...; a value was edited" in cli_error(["analyze", "embeddings", a, b])
    after = tree_hashes(tmp_path)
    assert set(after) == set(before) and after["B.json"] == before["B.json"]  # nothing written, nothing else touched


def test_a_damaged_record_is_remade_where_the_error_says(recorded_sweep, tmp_path):
    """Round 10 (Q1): a damaged record's error says "remake it with `leviathan analyze embeddings RUN_DIR --out PATH`
    (in a sweep: ... --redo)", and both were refused: "exists and is not an embeddings record ... will not write over
    it". A record, whole or damaged, is the verb's own file; a user's JSON file is still never written over."""
    sweep = Path(shutil.copytree(recorded_sweep, tmp_path / "sweep"))
    path = sorted((sweep / "embeddings").glob("*.json"))[0]
    _edit(path, lambda r: _stats(r, "final", "all").update(rms=-1.0))
    line = cli_error(["report", sweep, "--out", tmp_path / "r"])
    assert "is a damaged embeddings record (final[all].rms is -1.0" in line
    assert cli(["analyze", "embeddings", "--sweep", sweep, "--redo", "--probes", "4"]).returncode == 0
    assert json.loads(path.read_text())["sha256"]
    _edit(path, lambda r: r.update(hidden_size=7))
    # with the sweep's buckets: a record of the default 5 beside the sweep's of 2 is refused since round 11 (R27)
    proc = cli(["analyze", "embeddings", sweep / "runs" / path.stem, "--out", path, "--probes", "4", "--buckets", "2"])
    assert proc.returncode == 0, proc.stderr
    assert cli(["report", sweep, "--out", tmp_path / "r2"]).returncode == 0
    user = tmp_path / "mine.json"
    user.write_text('{"format": 1, "run": "x"}')
    line = cli_error(["analyze", "embeddings", sweep / "runs" / path.stem, "--out", user])
    assert "exists and is not an embeddings record" in line and user.read_text() == '{"format": 1, "run": "x"}'


def test_records_made_with_other_buckets_are_not_reported_or_compared_together(recorded_sweep, tmp_path):
    """Round 11 (R27): one record of a sweep remade with ``--buckets 3`` beside the sweep's of 2 went into one report
    section, exit 0: its neighbour table had a "bucket 3" column for a pair where one record holds 2 buckets. The
    report refuses records of different bucket settings before writing, naming each setting's runs, and two such
    records are not compared (`analyze embeddings A B`) either; remade alike, the report is written."""
    sweep = Path(shutil.copytree(recorded_sweep, tmp_path / "sweep"))
    path = sweep / "embeddings" / "a-dense_tied-s0.json"
    proc = cli(["analyze", "embeddings", sweep / "runs" / "a-dense_tied-s0", "--buckets", "3", "--probes", "4",
                "--out", path])
    assert proc.returncode == 0, proc.stderr
    line = cli_error(["report", sweep, "--out", tmp_path / "r"])
    assert (f"the embeddings records of {sweep} were made with different bucket settings (3 mass buckets: "
            f"a-dense_tied-s0; 2 mass buckets: a-dense_untied-s0)") in line, line
    assert "--redo" in line and not (tmp_path / "r").exists()
    line = cli_error(["analyze", "embeddings", path, sweep / "embeddings" / "a-dense_untied-s0.json"])
    assert ("a-dense_tied-s0 was analysed with 3 mass buckets and a-dense_untied-s0 with 2 mass buckets: their groups "
            "differ") in line, line
    assert cli(["analyze", "embeddings", "--sweep", sweep, "--redo", "--probes", "4"]).returncode == 0
    assert cli(["report", sweep, "--out", tmp_path / "r"]).returncode == 0


def test_a_users_file_among_a_sweeps_records_is_left_out_with_a_note(recorded_sweep, tmp_path):
    """Round 11 (R77): a user's README.json in SWEEP/embeddings blocked the report with "is not an embeddings record
    ...; pass a file `leviathan analyze embeddings RUN_DIR --out FILE` wrote, or a run folder", a fix that does not
    apply to a report. A file there that is no record and is named after no run of the sweep is left out with a note
    naming it; the report is written from the records, and the file is untouched."""
    sweep = Path(shutil.copytree(recorded_sweep, tmp_path / "sweep"))
    readme = sweep / "embeddings" / "README.json"
    readme.write_text('{"about": "my notes on these records"}\n')
    proc = cli(["report", sweep, "--out", tmp_path / "r", "--bootstrap", "5"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert (f"note: {readme} is not an embeddings record and is named after no run of {sweep}; left out") in proc.stderr
    assert "From `embeddings/` (2 records" in (tmp_path / "r" / "report.md").read_text()
    assert readme.read_text() == '{"about": "my notes on these records"}\n'


def test_an_adopted_folders_generator_vocabulary_edited_apart_from_the_models_is_refused(tmp_path):
    """Round 15 (B78): config.json's ``leviathan_generator.vocab_size`` edited 300 -> 301 (the model's vocab_size and
    lm_head stay 300) loaded a LeviathanGenerator(vocab_size=301) under the 300-id model without a word."""
    from transformers import LlamaConfig

    from leviathan.errors import UserError
    from leviathan.hf import adopt, load_adopted

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "adopted")
    config = tmp_path / "adopted" / "config.json"
    _edit(config, lambda c: c["leviathan_generator"].update(vocab_size=301))
    with pytest.raises(UserError) as info:
        load_adopted(tmp_path / "adopted")
    assert f"{config}: leviathan_generator.vocab_size is 301, but the model's vocab_size is 300" in str(info.value)


def test_an_adopted_folders_generator_setting_edited_within_range_is_refused(tmp_path):
    """Round 17 (E169): config.json's ``leviathan_generator.ln_eps`` edited 1e-5 -> 1e-3, a value the generator
    accepts, loaded without a word and gave other logits. ``save_pretrained`` records the settings' sha256
    (``hf.settings_digest``) and ``load_adopted`` refuses settings that are not the saved ones; saved again, the
    folder loads."""
    from transformers import LlamaConfig

    from leviathan.errors import UserError
    from leviathan.hf import adopt, load_adopted

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "adopted")
    load_adopted(tmp_path / "adopted").save_pretrained(tmp_path / "again")  # a loaded model saved again loads
    assert load_adopted(tmp_path / "again") is not None
    config = tmp_path / "adopted" / "config.json"
    _edit(config, lambda c: c["leviathan_generator"].update(ln_eps=1e-3))
    with pytest.raises(UserError) as info:
        load_adopted(tmp_path / "adopted")
    assert f"{config}: the generator settings (leviathan_generator) are not the ones save_pretrained wrote" \
        in str(info.value), str(info.value)
    _edit(config, lambda c: c["leviathan_generator"].update(ln_eps=1e-5))
    assert load_adopted(tmp_path / "adopted") is not None  # the saved value put back

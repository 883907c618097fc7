"""Files that belong together are checked against each other (issue 30, kind 3): a step folder's state.json records
the sha256 of every other file of the folder, a prepared folder's meta.json a digest of every other file; a file
swapped in from elsewhere (same shape, same size) is refused by name when it is read (``checkpoint.state``,
``data.companions``).

Before, step 2's weights copied over step 4's resumed and evaluated as step 4, and another preparation's
train_freq.npy or tokenizer.json was taken as this data's.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides, tree_hashes  # noqa: E402
from test_bad_input import fails, huge_lr_allowed, resume  # noqa: E402,F401

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

STEP2, STEP4 = "checkpoints/step-00000002", "checkpoints/step-00000004"
# the card of a step whose state.json records its validation, metrics.jsonl's row at the step skipped (round 20, K198)
NO_ROW = "Not quoted: the checkpoint recorded a validation at step 4, but the run's metrics.jsonl has no usable"


def _recorded(run: Path, name: str) -> str:
    return json.loads((run / STEP4 / "state.json").read_text())["files"][name]


@pytest.mark.parametrize("name", ["model.safetensors", "optimizer.pt", "rng.pt", "config.yaml", "tokenizer.json"])
def test_a_file_of_another_step_is_refused_on_resume(capsys, data, run_copy, name):
    path = run_copy / STEP4 / name
    shutil.copy(run_copy / STEP2 / name, path)
    if hashlib.sha256(path.read_bytes()).hexdigest() == _recorded(run_copy, name):
        path.write_bytes(path.read_bytes() + b"\n")  # step 2's file has the same bytes: change them as an edit would
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6))
    assert f"{STEP4}/{name}' is not the file saved with this checkpoint" in line
    assert "restore it from a copy of this step folder" in line
    assert tree_hashes(run_copy) == before


def test_swapped_weights_are_refused_by_eval_generate_and_export(capsys, run_copy, tmp_path):
    shutil.copy(run_copy / STEP2 / "model.safetensors", run_copy / STEP4 / "model.safetensors")
    assert "model.safetensors' is not the file saved with this checkpoint" in cli_error(["eval", run_copy])
    for argv in (["generate", run_copy, "--max-new-tokens", "2"], ["export", run_copy, tmp_path / "hf"]):
        assert "model.safetensors' is not the file saved with this checkpoint" in fails(capsys, *argv)
    assert not (tmp_path / "hf").exists()


def test_an_edited_weights_record_names_state_json_as_a_possible_cause(capsys, data, run_copy, tmp_path):
    """Issue 30 round 21 (N226): state.json's files['model.safetensors'] set to '0'*64, the weights untouched: eval,
    resume and export blamed model.safetensors alone ("replaced by a file from another checkpoint or damaged")."""
    state = run_copy / STEP4 / "state.json"
    raw = json.loads(state.read_text())
    raw["files"]["model.safetensors"] = "0" * 64
    state.write_text(json.dumps(raw))
    before = tree_hashes(run_copy)
    lines = [cli_error(["eval", run_copy]), fails(capsys, *resume(run_copy, data, max_steps=6)),
             fails(capsys, "export", run_copy, tmp_path / "hf")]
    for line in lines:
        assert "model.safetensors' is not the file saved with this checkpoint" in line, line
        assert "state.json's record of it was edited" in line, line
    assert tree_hashes(run_copy) == before and not (tmp_path / "hf").exists()


def test_an_edited_record_in_an_exports_marker_is_named_as_a_possible_cause(exported, tmp_path):
    """N226's kind (round 21) in an export: its marker's sha256 of tokenizer.json edited, the file untouched, was
    blamed on the file alone ("replaced by a file from elsewhere or damaged")."""
    from leviathan.errors import UserError
    from leviathan.ownership import MARKER, check_output_files

    hf = Path(shutil.copytree(exported, tmp_path / "hf"))
    marker = json.loads((hf / MARKER).read_text())
    marker["sha256"]["tokenizer.json"] = "0" * 64
    (hf / MARKER).write_text(json.dumps(marker))
    with pytest.raises(UserError, match=r"tokenizer\.json' is not the file `leviathan export` wrote there .*"
                                        r"or leviathan_output\.json's record of it was edited; "):
        check_output_files(hf, "export it again")


def test_a_recorded_file_that_is_missing(capsys, data, run_copy):
    (run_copy / STEP4 / "rng.pt").unlink()
    line = fails(capsys, *resume(run_copy, data, max_steps=6))
    assert "rng.pt' is missing, but state.json records it" in line


@pytest.fixture
def data_copy(data, tmp_path) -> Path:
    return Path(shutil.copytree(data, tmp_path / "data"))


def _other_preparation(data_copy: Path, tmp_path: Path) -> Path:
    """Another corpus prepared with the same tokenizer: files of the same kinds and shapes, other contents."""
    from leviathan.data.prepare import prepare
    from reliability_support import write_corpus

    other = tmp_path / "other"
    prepare(str(write_corpus(tmp_path / "corpus", seed=3)), other, tokenizer=str(data_copy), val_fraction=0.2,
            progress=False, log=lambda msg: None)
    return other


def test_a_train_freq_of_another_preparation_is_refused(capsys, finished_run, data_copy, tmp_path):
    other = _other_preparation(data_copy, tmp_path)
    shutil.copy(other / "train_freq.npy", data_copy / "train_freq.npy")
    line = fails(capsys, "analyze", "frequency", "--runs", finished_run, "--data", data_copy)
    assert "train_freq.npy' is not the file prepared with this meta.json" in line


def test_frequency_buckets_of_data_with_another_tokenizer_are_refused(finished_run, tmp_path):
    """Round 6: ``analyze frequency --runs RUN --data OTHER`` scored the run on a folder prepared with another BPE of
    the same size (other ids for the same text) and printed a table, exit 0, where ``eval --data OTHER`` refused."""
    from leviathan.data.prepare import prepare
    from reliability_support import cli_error, write_corpus

    other = tmp_path / "other"
    prepare(str(write_corpus(tmp_path / "corpus", seed=3)), other, tokenizer="bpe:300", val_fraction=0.2,
            progress=False, log=lambda msg: None)
    line = cli_error(["analyze", "frequency", "--runs", finished_run, "--data", other])
    assert "cannot analyze its frequency buckets: the checkpoint" in line and "maps text to other ids" in line


def test_a_token_file_of_the_same_size_is_refused(capsys, data_copy, tmp_path):
    path = data_copy / "train.bin"
    tokens = np.fromfile(path, dtype=np.uint16)
    tokens[::-1].tofile(path)  # the same ids, the same size, another order
    line = fails(capsys, "train", *run_overrides(data_copy), "--run-dir", tmp_path / "run", "--quiet")
    assert "train.bin' is not the file prepared with this meta.json" in line
    assert not (tmp_path / "run").exists()


def test_a_tokenizer_of_another_preparation_is_refused(capsys, data_copy, tmp_path):
    path = data_copy / "tokenizer.json"
    path.write_text(path.read_text() + " ")  # still the same JSON, but not the file prepared with meta.json
    line = fails(capsys, "train", *run_overrides(data_copy), "--run-dir", tmp_path / "run", "--quiet")
    assert "tokenizer.json' is not the file prepared with this meta.json" in line


def test_large_files_are_sampled_not_read_whole(tmp_path, monkeypatch):
    """A token file over the full-hash limit is fingerprinted from its size and evenly spread blocks (a full hash
    of a 40 GB file would add a minute to every start); a change inside a sampled block is still seen."""
    from leviathan.data import companions

    monkeypatch.setattr(companions, "FULL_HASH_BYTES", 1 << 20)
    path = tmp_path / "big.bin"
    data = np.random.default_rng(0).integers(0, 255, size=4 << 20, dtype=np.uint8)
    data.tofile(path)
    digest = companions.file_digest(path)
    assert digest.startswith("sampled-sha256:")
    data[0] ^= 1
    data.tofile(path)
    assert companions.file_digest(path) != digest


def test_export_refuses_a_damaged_tokenizer_instead_of_dropping_it(run_copy, tmp_path):
    """Before (issue 30 round 4) export caught the tokenizer's error and wrote the model without it, exit 0."""
    from reliability_support import cli_error, refingerprint

    step = run_copy / "checkpoints" / "step-00000004"
    record = json.loads((step / "leviathan_tokenizer.json").read_text())
    (step / "leviathan_tokenizer.json").write_text(json.dumps({**record, "vocab_size": -1}))
    refingerprint(step)  # the fingerprints agree: the tokenizer's own check must stop it
    assert "has vocab_size=300 but its metadata says -1" in cli_error(["export", run_copy, tmp_path / "hf"])
    assert not (tmp_path / "hf").exists()


def _piqa_root(folder: Path) -> Path:
    """A data root with two piqa examples (lm-eval's task files, as test_harness writes them)."""
    (folder / "piqa").mkdir(parents=True)
    rows = [{"goal": "To dry a wet towel", "sol1": "hang it in the sun", "sol2": "put it in the freezer"},
            {"goal": "To open a jar", "sol1": "twist the lid", "sol2": "paint the lid"}]
    (folder / "piqa" / "valid.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "piqa" / "valid-labels.lst").write_text("0\n0\n")
    return folder


def test_lm_eval_scores_an_export_as_its_run_and_refuses_a_swapped_file(finished_run, tmp_path):
    """Round 5: ``lm-eval EXPORTED_DIR`` on a folder ``leviathan export`` wrote ended in a traceback ('Transformers
    does not recognize this architecture', then a tokenizer without an end-of-text token), so an export could not be
    scored at all; and an export's files were never checked against each other. Now the export records the sha256
    of every file in its marker; lm-eval scores an intact export exactly as the run, and refuses a file swapped in
    from elsewhere by name."""
    from leviathan.data.prepare import prepare
    from reliability_support import cli, write_corpus

    root = _piqa_root(tmp_path / "tasks")
    hf = tmp_path / "hf"
    assert cli(["export", finished_run, hf]).returncode == 0
    assert set(json.loads((hf / "leviathan_output.json").read_text())["sha256"]) >= {"model.safetensors",
                                                                                    "tokenizer.json"}
    scores = []
    for source in (finished_run, hf):
        proc = cli(["lm-eval", source, "--tasks", "piqa", "--data-root", root, "--threads", "1", "--json"])
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        scores.append(json.loads(proc.stdout)["tasks"]["piqa"]["acc"])
    assert scores[0] == scores[1]
    other = prepare(str(write_corpus(tmp_path / "corpus2", seed=1)), tmp_path / "data2", "bpe:300",
                    val_fraction=0.2, progress=False, log=lambda msg: None)
    assert other["tokenizer"] == "bpe:300"
    shutil.copy(tmp_path / "data2" / "tokenizer.json", hf / "tokenizer.json")  # same vocabulary size, other ids
    line = cli_error(["lm-eval", hf, "--tasks", "piqa", "--data-root", root, "--threads", "1"])
    assert f"'{hf}/tokenizer.json' is not the file `leviathan export` wrote there" in line


def test_a_step_tokenizer_json_without_its_record_is_named_not_the_data(run_copy):
    """Round 17 (E121): state.json's record of tokenizer.json deleted and another tokenizer.json put in its place:
    eval read it, and blamed the data ("'data1' was prepared with a different one"), with a fix (prepare the corpus
    with that tokenizer) that spreads the damage. A file the reader uses that state.json does not record, in a step
    folder whose state.json records its files, is refused by name."""
    step = run_copy / "checkpoints" / "step-00000004"
    state = json.loads((step / "state.json").read_text())
    del state["files"]["tokenizer.json"]
    (step / "state.json").write_text(json.dumps(state))
    tokenizer = json.loads((step / "tokenizer.json").read_text())
    (step / "tokenizer.json").write_text(json.dumps(tokenizer, indent=1))  # another file, the same tokenizer
    line = cli_error(["eval", run_copy, "--max-tokens", "64"])
    assert f"'{step}/tokenizer.json' is not recorded in state.json, which fingerprints every file saved with the " \
           f"checkpoint" in line and "prepared with a different one" not in line, line


def test_an_edited_export_is_told_a_fix_that_export_takes(exported, finished_run, tmp_path):
    """Round 17 (E325): lm-eval of an export whose config.json was edited was refused with "export the checkpoint
    again (leviathan export RUN EXP --overwrite)", which export then refused (the export holds a file changed since
    it wrote it: E326). The fix named is one export takes: delete the edited export by hand, then export again."""
    from reliability_support import cli

    ex = Path(shutil.copytree(exported, tmp_path / "ex"))
    config = json.loads((ex / "config.json").read_text())
    (ex / "config.json").write_text(json.dumps({**config, "rms_norm_eps": 0.5}))
    line = cli_error(["lm-eval", ex, "--tasks", "piqa", "--limit", "2", "--data-root", _piqa_root(tmp_path / "t")])
    fix = f"delete the edited export and export the checkpoint again (rm -r {ex}; leviathan export RUN {ex})"
    assert "config.json' is not the file `leviathan export` wrote there" in line and fix in line, line
    assert "--overwrite" not in line, line
    shutil.rmtree(ex)  # the fix, as named
    proc = cli(["export", finished_run, ex])
    assert proc.returncode == 0, proc.stderr


def test_lm_eval_on_an_export_without_its_marker_says_so_and_refuses_a_tokenizer_the_model_cannot_hold(
        finished_run, tmp_path):
    """Round 5 left this: with the marker deleted, an export reads as a folder of transformers' own, so its files
    cannot be checked, and nothing said so. Now a note says the files were taken as they are, and a tokenizer with
    more ids than the model's vocabulary (a swap nothing else can show) is refused in one line."""
    from leviathan.data.prepare import prepare
    from reliability_support import cli, write_corpus

    root = _piqa_root(tmp_path / "tasks")
    hf = tmp_path / "hf"
    assert cli(["export", finished_run, hf]).returncode == 0
    (hf / "leviathan_output.json").unlink()
    proc = cli(["lm-eval", hf, "--tasks", "piqa", "--data-root", root, "--threads", "1", "--limit", "4"])
    assert proc.returncode == 0, proc.stderr
    assert f"note: '{hf}' holds no leviathan_output.json, so its files are evaluated as they are" in proc.stderr
    prepare(str(write_corpus(tmp_path / "corpus2", seed=1)), tmp_path / "data2", "bpe:400", val_fraction=0.2,
            progress=False, log=lambda msg: None)
    shutil.copy(tmp_path / "data2" / "tokenizer.json", hf / "tokenizer.json")
    (hf / "leviathan_tokenizer.json").unlink()  # a folder holding a transformers tokenizer only
    line = cli_error(["lm-eval", hf, "--tasks", "piqa", "--data-root", root, "--threads", "1"])
    found = re.search(f"the tokenizer of '{hf}' has ([0-9,]+) ids but the model's config.json has vocab_size 300: "
                      f"they come from different models", line)
    assert found and int(found.group(1)) > 300, line  # the BPE stops short of 400 on so little text
    # round 8 (K20): a config.json whose vocab_size was edited to -5 blamed the tokenizer ("different models")
    config = json.loads((hf / "config.json").read_text())
    (hf / "config.json").write_text(json.dumps({**config, "vocab_size": -5}))
    line = cli_error(["lm-eval", hf, "--tasks", "piqa", "--data-root", root, "--threads", "1"])
    assert f"'{hf / 'config.json'}': field 'vocab_size' is -5, not a vocabulary size (>= 1): config.json was " \
           f"edited or damaged" in line


def test_embedding_records_refuse_run_folders_swapped_between_runs(data, tmp_path):
    """Round 5: with a sweep's runs/a-dense_tied-s0 and runs/a-dense_untied-s0 swapped by hand, ``analyze embeddings
    --sweep`` wrote a-dense_tied-s0.json holding the dense_untied run's embeddings, exit 0. The run folder must be the
    row's (its config.yaml's seed, variant and size)."""
    from leviathan.cli import main
    from test_row_identity import grid_file

    sweep = tmp_path / "sweep"
    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(sweep)]) == 0
    runs = sweep / "runs"
    (runs / "a-dense_tied-s0").rename(runs / "swap")
    (runs / "a-dense_untied-s0").rename(runs / "a-dense_tied-s0")
    (runs / "swap").rename(runs / "a-dense_untied-s0")
    line = cli_error(["analyze", "embeddings", "--sweep", sweep, "--probes", "2"])
    assert f"{runs}/a-dense_tied-s0 does not hold run 'a-dense_tied-s0'" in line
    assert "variant 'dense_tied' in the row, 'dense_untied' in its config.yaml" in line
    assert not (sweep / "embeddings").exists() or not list((sweep / "embeddings").glob("a-dense_tied-s0.json"))


def test_an_embeddings_record_is_the_run_its_name_says(data, tmp_path):
    """Round 7 (C1, B3): a copy of a-dense_untied-s0's record saved as a-dense_tied-s0.json was reported as that run
    (its arm "seeds 0, 0", the run's neighbour agreement with itself 1.000, the dense_tied arm gone; exit 0), and
    ``--sweep`` said a user's file under a record's name "exists, kept". Both are named now."""
    from leviathan.cli import main
    from test_row_identity import grid_file

    sweep = tmp_path / "sweep"
    assert main(["sweep", "--grid", str(grid_file(tmp_path, data)), "--out", str(sweep)]) == 0
    records = sweep / "embeddings"
    records.mkdir()
    (records / "a-dense_tied-s0.json").write_text('{"mine": 1}\n')
    line = cli_error(["analyze", "embeddings", "--sweep", sweep, "--probes", "2"])
    assert f"'{records}/a-dense_tied-s0.json' exists and is not an embeddings record" in line
    assert "choose another --dest" in line and (records / "a-dense_tied-s0.json").read_text() == '{"mine": 1}\n'
    (records / "a-dense_tied-s0.json").unlink()
    assert main(["analyze", "embeddings", "--sweep", str(sweep), "--probes", "2"]) == 0
    shutil.copy(records / "a-dense_untied-s0.json", records / "a-dense_tied-s0.json")
    before = tree_hashes(sweep)
    line = cli_error(["report", sweep, "--out", tmp_path / "report"])
    assert f"'{records}/a-dense_tied-s0.json' is the embeddings record of run 'a-dense_untied-s0', not of " \
           f"'a-dense_tied-s0'" in line and "--redo" in line
    line = cli_error(["analyze", "embeddings", "--sweep", sweep, "--probes", "2"])
    assert "is the embeddings record of run 'a-dense_untied-s0'" in line
    assert tree_hashes(sweep) == before


def test_lm_eval_on_an_export_without_its_config_names_the_missing_file(capsys, finished_run, tmp_path):
    """Round 7 (B93): an export whose config.json was deleted was taken for a checkpoint: "checkpoint ... is
    incomplete (missing optimizer.pt, state.json, config.yaml)". Its marker says it is an export: the line names the
    missing file and the re-export."""
    from leviathan.cli import main

    export = tmp_path / "hf"
    assert main(["export", str(finished_run), str(export)]) == 0
    capsys.readouterr()
    (export / "config.json").unlink()
    root = _piqa_root(tmp_path / "tasks")  # the task files exist: lm-eval checks them before its source (round 16)
    line = cli_error(["lm-eval", export, "--tasks", "piqa", "--limit", "2", "--data-root", root])
    assert f"{str(export / 'config.json')!r} is missing, but leviathan_output.json records it" in line, line
    assert f"(rm -r {export}; leviathan export RUN {export})" in line and "optimizer.pt" not in line, line  # E325:
    # --overwrite refuses an export whose files were edited, so the fix deletes it first


def test_an_export_given_where_a_run_belongs_is_named_as_an_export(finished_run, tmp_path):
    """Round 8 (C3): ``eval``, ``generate`` and ``analyze embeddings`` given an export (whose weights had been swapped
    for another export's) said "checkpoint 'hf' is incomplete (missing optimizer.pt, state.json, config.yaml)",
    sending the user after files an export never has. The line says what the folder is and what to pass."""
    from leviathan.cli import main

    export = tmp_path / "hf"
    assert main(["export", str(finished_run), str(export)]) == 0
    for argv in (["eval", export], ["generate", export, "--max-new-tokens", "2"], ["analyze", "embeddings", export]):
        line = cli_error(argv)
        assert f"'{export}' is a Hugging Face folder" in line and "pass the run it was exported from" in line, line


def test_sample_efficiency_of_runs_with_different_tokenizers_is_refused(finished_run, tmp_path):
    """Round 8 (I13): ``analyze efficiency --model RUN --reference RUN2`` with RUN2 trained on another preparation
    (another BPE of the same size) said "RUN reaches RUN2's final loss 4.3193 after 1,024 tokens", comparing losses over
    different ids, exit 0."""
    from leviathan.cli import main
    from leviathan.data.prepare import prepare
    from reliability_support import write_corpus

    other = prepare(str(write_corpus(tmp_path / "corpus2", seed=1)), tmp_path / "data2", "bpe:300", val_fraction=0.2,
                    progress=False, log=lambda msg: None)
    assert other["tokenizer"] == "bpe:300"
    assert main(["train", "--run-dir", str(tmp_path / "run2"), *run_overrides(tmp_path / "data2", max_steps=2),
                 "--quiet"]) == 0
    line = cli_error(["analyze", "efficiency", "--model", finished_run, "--reference", tmp_path / "run2"])
    assert "were trained with different tokenizers" in line


def test_an_export_card_quotes_only_the_metrics_of_its_own_checkpoint(finished_run, tmp_path):
    """Round 8 (C6): a run's metrics.jsonl swapped for another run's (same steps and tokens, its own times and losses)
    was quoted on the export's card as this checkpoint's validation, exit 0. The card quotes the figures only when the
    step's training row records the checkpoint's own training time; otherwise it says why it quotes none."""
    from leviathan.cli import main

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    assert main(["export", str(run), str(tmp_path / "own")]) == 0
    own = (tmp_path / "own" / "README.md").read_text()
    val = [r for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines()) if "val_loss" in r][-1]
    assert f"loss {val['val_loss']:.4f} nats" in own
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for row in rows:  # another run's file: the same steps and tokens, other training times and losses
        row.update({"time_s": row["time_s"] * 1.5} if "time_s" in row else {})
        row.update({"val_loss": 3.1234, "val_ppl": math.exp(3.1234)} if "val_loss" in row else {})  # consistent
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["export", str(run), str(tmp_path / "swapped")]) == 0
    card = (tmp_path / "swapped" / "README.md").read_text()
    assert "3.1234" not in card and "Not quoted: the run's metrics.jsonl has validation figures for step 4" in card


def test_a_models_card_does_not_quote_a_validation_loss_edited_in_metrics_jsonl(finished_run, tmp_path):
    """F34: the step-4 validation row of a run's own metrics.jsonl edited consistently (val_loss 1.2345, val_ppl its
    exp, val_bpb scaled; the training row and its time untouched) was quoted on the export's card, 'loss 1.2345
    nats', for a model whose loss is 4.26, exit 0. The checkpoint's state.json records the step's validation when it
    is saved; the card quotes metrics.jsonl's figures only when they are those (a real ``leviathan export``)."""
    from reliability_support import cli

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    recorded = json.loads((run / "checkpoints" / "step-00000004" / "state.json").read_text())["validation"]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    val = [r for r in rows if "val_loss" in r][-1]
    assert val["step"] == 4 and recorded == {k: val[k] for k in ("val_loss", "val_ppl", "val_bpb")}
    scale = 1.2345 / val["val_loss"]
    val.update(val_loss=1.2345, val_ppl=math.exp(1.2345), val_bpb=val["val_bpb"] * scale)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = cli(["export", run, tmp_path / "e34"])
    assert proc.returncode == 0, proc.stderr
    card = (tmp_path / "e34" / "README.md").read_text()
    assert "1.2345" not in card and "or they are not the figures the checkpoint recorded when it was saved" in card


def test_embeddings_of_a_run_whose_data_folder_was_replaced_by_another_tokenizers_are_refused(data_copy, tmp_path):
    """Round 11 (R41): ``analyze embeddings RUN`` (no --data: the folder the run's config names) read the frequency
    buckets of a data folder replaced by one of another tokenizer and recorded them, exit 0; --data OTHER was refused."""
    from leviathan.data.prepare import prepare
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train
    from reliability_support import cli_error, write_corpus

    run = tmp_path / "run"
    train(load_run_config(None, run_overrides(data_copy, max_steps=2)), run, quiet=True)
    other = tmp_path / "other"
    prepare(str(write_corpus(tmp_path / "corpus", seed=3)), other, tokenizer="bpe:300", val_fraction=0.2,
            progress=False, log=lambda msg: None)
    shutil.rmtree(data_copy)
    shutil.copytree(other, data_copy)
    line = cli_error(["analyze", "embeddings", run, "--out", tmp_path / "rec.json"])
    assert "cannot analyze this run's embeddings: the checkpoint" in line and "maps text to other ids" in line, line
    assert not (tmp_path / "rec.json").exists()


def test_lm_eval_keep_export_run_twice_replaces_its_own_export(finished_run, tmp_path):
    """Round 11 (R14c): ``lm-eval RUN --out le --keep-export`` run twice: the rerun refused its own le/hf ("holds
    files the earlier `leviathan export` did not write (tokenizer.json, tokenizer_config.json)"), since the harness's
    tokenizer was written after the export's marker. Now it is part of the export, and the rerun replaces it."""
    from reliability_support import cli

    root = _piqa_root(tmp_path / "tasks")
    out = tmp_path / "le"
    argv = ["lm-eval", finished_run, "--tasks", "piqa", "--data-root", root, "--threads", "1", "--out", out,
            "--keep-export"]
    for _ in range(2):
        proc = cli(argv)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    listed = set(json.loads((out / "hf" / "leviathan_output.json").read_text())["sha256"])
    assert {"tokenizer.json", "tokenizer_config.json", "model.safetensors"} <= listed
    # round 13 (V140): with a file of the user's added to le/hf, the refusal named --overwrite, which lm-eval lacks
    (out / "hf" / "notes.txt").write_text("mine\n")
    line = cli_error(argv)
    assert "--keep-export (keep_export=True) would delete" in line and "--overwrite" not in line, line
    assert (out / "hf" / "notes.txt").read_text() == "mine\n"


def test_lm_eval_without_keep_export_into_the_same_out_removes_the_earlier_export(finished_run, tmp_path):
    """Round 15 (B293, B294 damage): ``lm-eval RUN --out lek --keep-export``, then ``lm-eval OTHER --out lek``: lek/hf,
    the first run's model, stayed beside the second run's lm_eval.json, exit 0. A rerun that keeps no export removes
    its own earlier one once its results are in; one holding a user's file is refused before any work."""
    from reliability_support import cli, cli_error

    root = _piqa_root(tmp_path / "tasks")
    other = Path(shutil.copytree(finished_run, tmp_path / "run3"))
    out = tmp_path / "lek"
    argv = ["--tasks", "piqa", "--data-root", root, "--threads", "1", "--limit", "2", "--out", out]
    proc = cli(["lm-eval", finished_run, *argv, "--keep-export"])
    assert proc.returncode == 0 and (out / "hf" / "config.json").is_file(), proc.stderr
    (out / "hf" / "notes.txt").write_text("mine\n")
    line = cli_error(["lm-eval", other, *argv])
    assert "lm-eval without --keep-export would delete" in line and "notes.txt" in line, line
    assert (out / "hf" / "notes.txt").read_text() == "mine\n"
    (out / "hf" / "notes.txt").unlink()
    proc = cli(["lm-eval", other, *argv])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads((out / "lm_eval.json").read_text())["source"] == str(other)
    assert sorted(p.name for p in out.iterdir()) == ["leviathan_output.json", "lm_eval.json"]


def test_lm_eval_never_deletes_an_hf_folder_it_did_not_keep_itself(exported, tmp_path):
    """Round 17 (D148, D150, D151 damage): ``lm-eval EXPORT --keep-export --out le`` over an le/hf that ``leviathan
    export`` wrote (with the user's NOTES.md in it), or a folder of the user's own, deleted it and kept no export
    either (an HF source is evaluated as it is), exit 0. --keep-export of an HF folder is refused now, and le/hf goes
    only when it is lm-eval's own export; both refusals come before any work."""
    from reliability_support import cli

    root = _piqa_root(tmp_path / "tasks")
    out = tmp_path / "le"
    argv = ["lm-eval", exported, "--tasks", "piqa", "--data-root", root, "--threads", "1", "--limit", "2", "--out", out]
    proc = cli(argv)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    for name, users in (("an export", lambda hf: shutil.copytree(exported, hf)), ("a folder", Path.mkdir)):
        users(out / "hf")
        (out / "hf" / "NOTES.md").write_text("mine\n")
        before = tree_hashes(out)
        line = cli_error([*argv, "--keep-export"])
        assert f"--keep-export keeps the HF export lm-eval makes of a checkpoint, but {str(exported)!r} is an HF " \
               "folder already" in line, (name, line)
        line = cli_error(argv)
        assert "lm-eval without --keep-export would delete" in line and "NOTES.md" in line, (name, line)
        assert tree_hashes(out) == before, name
        shutil.rmtree(out / "hf")


@pytest.mark.parametrize("files", [{}, "drop-weights"], ids=["empty", "no-weights"])
def test_a_state_json_that_records_no_files_is_refused(capsys, run_copy, files):
    """Round 11 (S6): ``files: {}`` in state.json turned the companion check off (a current writer records every
    file saved beside it); ``eval`` evaluated with no file checked."""
    path = run_copy / STEP4 / "state.json"
    state = json.loads(path.read_text())
    state["files"] = {} if files == {} else {k: v for k, v in state["files"].items() if k != "model.safetensors"}
    path.write_text(json.dumps(state))
    line = cli_error(["eval", run_copy])
    assert "field 'files' does not record model.safetensors" in line, line


@pytest.mark.parametrize("damage", ["deleted", "a-folder"])
def test_an_export_without_the_runs_metrics_says_the_log_is_missing(finished_run, tmp_path, damage):
    """K198 (round 20): metrics.jsonl deleted or replaced by a folder gave a card saying "Not evaluated at this step"
    beside a state.json recording step 4's validation, exit 0 without a word. Now the card says the log is missing
    and export warns, naming the file."""
    from reliability_support import cli

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    (run / "metrics.jsonl").unlink()
    if damage == "a-folder":
        (run / "metrics.jsonl").mkdir()
    proc = cli(["export", run, tmp_path / "e"])
    assert proc.returncode == 0, proc.stderr
    assert f"warning: the model card quotes no validation: {str(run / 'metrics.jsonl')!r} is missing" in proc.stderr
    card = (tmp_path / "e" / "README.md").read_text()
    assert "Not evaluated" not in card and "but the run's metrics.jsonl is missing or unreadable" in card, card


def test_a_deleted_rng_record_with_another_steps_rng_is_refused(data, run_copy):
    """K12 (round 20): rng.pt's record deleted from step 4's state.json and step 2's rng.pt copied in resumed from
    step 4 with step 2's RNG state, exit 0 (the same deletion for optimizer.pt was refused). Every writer that records
    files records rng.pt: the resume is refused naming the field, and nothing is written."""
    path = run_copy / STEP4 / "state.json"
    state = json.loads(path.read_text())
    del state["files"]["rng.pt"]
    path.write_text(json.dumps(state))
    shutil.copy(run_copy / STEP2 / "rng.pt", run_copy / STEP4 / "rng.pt")
    before = tree_hashes(run_copy)
    line = cli_error(["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"])
    assert "field 'files' does not record rng.pt" in line and "restore the file" in line, line
    assert tree_hashes(run_copy) == before


def test_a_removed_files_map_with_another_steps_weights_is_refused(data, run_copy, tmp_path):
    """P513 (round 21): step 4's state.json with its whole ``files`` map removed and step 2's weights copied in: eval
    printed step 2's loss labelled step 4, export's card quoted step 4's validation beside step 2's weights, exit 0
    (the map was read as that of a folder saved before it was recorded). A state.json that records run_id (written
    only with the map) must hold it: eval, export and a resume are refused naming the field, nothing written."""
    path = run_copy / STEP4 / "state.json"
    state = json.loads(path.read_text())
    del state["files"]
    path.write_text(json.dumps(state))
    shutil.copy(run_copy / STEP2 / "model.safetensors", run_copy / STEP4 / "model.safetensors")
    before = tree_hashes(run_copy)
    said = "field 'files' is missing, but every state.json that records run_id records the sha256 of each file"
    for argv in (["eval", run_copy, "--data", data], ["export", run_copy, tmp_path / "x"],
                 ["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"]):
        line = cli_error(argv)
        assert said in line and "restore the file from a copy" in line, line
    assert tree_hashes(run_copy) == before and not (tmp_path / "x").exists()


def test_an_export_card_quotes_no_impossible_validation(capsys, finished_run, tmp_path):
    """Round 11 (S30): the last validation line of metrics.jsonl edited to loss -1.0, perplexity 0.37 (its step,
    tokens and the training row beside it kept) was quoted on the export's card: "loss -1.0000 nats". A loss below 0
    or a perplexity below 1 is no line the logger writes: skipped with a warning naming it, the card quotes nothing."""
    from leviathan.cli import main

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    lines = (run / "metrics.jsonl").read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if "val_loss" in json.loads(line))
    row = json.loads(lines[last])
    row.update(val_loss=-1.0, val_ppl=0.36787944)
    lines[last] = json.dumps(row)
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["export", str(run), str(tmp_path / "e")]) == 0
    err = capsys.readouterr().err
    assert f"metrics.jsonl:{last + 1}: line {last + 1} has val_loss -1.0, not a loss >= 0; skipped" in err, err
    card = (tmp_path / "e" / "README.md").read_text()
    assert "-1.0000" not in card and "0.37" not in card and NO_ROW in card  # K198: not "Not evaluated"


def test_an_export_card_quotes_no_validation_whose_loss_and_perplexity_contradict(capsys, finished_run, tmp_path):
    """Round 14 (A130): the last validation line of metrics.jsonl edited to loss 0.1 with its perplexity 237.09 kept
    was quoted on the export's card ("loss 0.1000 nats, perplexity 237.09"). A perplexity is exp(loss), written from
    one number: a line where they differ is skipped with a warning naming it, the card quotes nothing. A consistent
    edit (A131) was quoted as what the log says until round 18 (F34): the step's state.json now records the figures
    the checkpoint was validated at, and the card quotes none that differ from them."""
    import math

    from leviathan.cli import main

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    lines = (run / "metrics.jsonl").read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if "val_loss" in json.loads(line))
    row = json.loads(lines[last])
    ppl = row["val_ppl"]
    for loss, card_says in ((0.1, None), (0.1, "or they are not the figures the checkpoint recorded")):
        row.update(val_loss=loss, val_ppl=ppl if card_says is None else math.exp(loss))
        lines[last] = json.dumps(row)
        (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
        capsys.readouterr()
        out = tmp_path / ("e" if card_says is None else "f")
        assert main(["export", str(run), str(out)]) == 0
        err = capsys.readouterr().err
        card = (out / "README.md").read_text()
        if card_says is None:
            assert (f"metrics.jsonl:{last + 1}: line {last + 1} has val_ppl {ppl!r}, not exp(val_loss) = 1.10517 "
                    f"(fields edited apart); skipped") in err, err
            assert "0.1000" not in card and NO_ROW in card  # K198: not "Not evaluated"
        else:
            assert "val_ppl" not in err and card_says in card and "0.1000" not in card, err


def test_lm_eval_on_a_folder_whose_tokenizer_has_no_end_of_text_token_is_one_error(tmp_path, finished_run):
    """Round 12 (U191): a plain Llama folder (save_pretrained) with a bare tokenizer.json (no tokenizer_config.json,
    no special tokens): lm-eval ended in a TypeError (``tokenizer.decode(None)`` for the request's first token)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from reliability_support import cli_error

    plain = tmp_path / "plain"
    LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=2,
                                 max_position_embeddings=128)).save_pretrained(str(plain))
    spec = json.loads((finished_run / "checkpoints" / "step-00000004" / "tokenizer.json").read_text())
    spec["added_tokens"] = []  # no special token at all
    (plain / "tokenizer.json").write_text(json.dumps(spec))
    line = cli_error(["lm-eval", plain, "--tasks", "piqa", "--data-root", _piqa_root(tmp_path / "tasks"),
                      "--limit", "2", "--threads", "1"])
    assert "defines no end-of-text (eos) or beginning (bos) token" in line, line


def test_lm_eval_refuses_an_export_whose_config_describes_another_model_than_its_weights(finished_run, tmp_path):
    """Round 13 (W30): an export's config.json edited to another embedding, its digest recomputed in the marker (so
    the export's fingerprints agree), was scored by lm-eval: transformers dropped the generator's tensors as unexpected
    and drew the table at random, exit 0. The weights' names are checked against the model the config builds; the
    line names what the weights lack and what they hold that the model does not take."""
    from leviathan.cli import main

    export = tmp_path / "hf"
    assert main(["export", str(finished_run), str(export)]) == 0
    config = json.loads((export / "config.json").read_text())
    was = config["embedding"]
    config["embedding"] = "dense_tied" if was == "leviathan" else "leviathan"
    config.pop("tie_word_embeddings", None)  # a coherent edit: tying follows the embedding (a contradiction is refused)
    (export / "config.json").write_text(json.dumps(config, indent=2))
    marker = json.loads((export / "leviathan_output.json").read_text())
    marker["sha256"]["config.json"] = hashlib.sha256((export / "config.json").read_bytes()).hexdigest()
    (export / "leviathan_output.json").write_text(json.dumps(marker, indent=2))
    root = _piqa_root(tmp_path / "tasks")
    line = cli_error(["lm-eval", export, "--tasks", "piqa", "--data-root", root, "--threads", "1", "--limit", "2"])
    assert f"the weights of '{export}' are not the model its config.json describes" in line, line
    assert "lack 1 tensor(s) its model needs (model.embed_tokens.weight)" in line or "codebooks" in line, line
    assert "which would be dropped" in line and "export the checkpoint again" in line, line
    assert not (tmp_path / "out").exists()


def test_frequency_buckets_of_a_diverged_run_are_a_table_not_an_overflow(data, finished_run, tmp_path,
                                                                          huge_lr_allowed):
    """Round 14 (B295): ``analyze frequency --runs RUN DIVERGED`` (a 1-step run at lr 1000, val loss ~340,000) ended
    in an OverflowError traceback computing 1 - exp(L_model - L_baseline). Either order now prints the table, the
    diverged run's reduction shown as -inf% (its perplexity past float range times the other's)."""
    from reliability_support import cli

    from leviathan.cli import main

    diverged = tmp_path / "diverged"  # lr 1000 is past optim.lr's range since round 15: in process, the bound lifted
    assert main(["train", *run_overrides(data, max_steps=1, checkpoint_interval=1, eval_interval=1, batch_tokens=512,
                                         eval_tokens=256, **{"data.seq_len": 64, "model.hidden_size": 32,
                                                             "optim.lr": 1e3, "schedule.warmup_steps": 0}),
                 "--run-dir", str(diverged), "--quiet"]) == 0
    assert json.loads((diverged / "summary.json").read_text())["final_val_loss"] > 1000  # diverged
    for runs in ([finished_run, diverged], [diverged, finished_run]):
        proc = cli(["analyze", "frequency", "--runs", *runs, "--data", data])
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert ("-inf%" in proc.stdout) == (runs[0] == finished_run), proc.stdout


def test_an_export_of_a_run_whose_last_metrics_line_is_torn_warns_about_that_line(finished_run, tmp_path):
    """Round 15 (A133): metrics.jsonl's last line cut short (``head -c -40``) was exported without a word, the card saying
    "Not evaluated at this step" though step 4 was evaluated, while an impossible value gets a warning (A132). The
    export's reader names the torn line in one warning; the polling reader of a run being trained stays quiet."""
    from reliability_support import cli

    from leviathan.train.metrics import read_metric_rows

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    data = (run / "metrics.jsonl").read_bytes()
    (run / "metrics.jsonl").write_bytes(data[:-40])
    torn = data[:-40].count(b"\n") + 1
    proc = cli(["export", run, tmp_path / "e"])
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [f"warning: {run / 'metrics.jsonl'}:{torn}: line {torn} is not a whole JSON value (cut short or "
                        f"damaged); skipped, the run's other rows are used"], proc.stderr
    assert NO_ROW in (tmp_path / "e" / "README.md").read_text()  # K198: step 4 was evaluated
    assert read_metric_rows(run / "metrics.jsonl", report=None)  # the polling reader: no report, no line


def test_a_step_folder_of_another_run_copied_in_is_refused_by_resume_eval_and_export(finished_run, other_run, tmp_path):
    """Round 15 (A156, A157): run B's whole step-00000004 folder copied over run X's (``cp -a``) was resumed (X went on
    from B's weights and config, its config.yaml then saying seed 2), evaluated and exported as X's, exit 0: the step's
    files agree with its own state.json. Every run has an id (run.json) that each of its step folders records; a step
    of another run is refused by each verb with one line naming the step, both ids and the fix, nothing written. Given
    itself, the step folder is evaluated; moved out, the run goes on from its step 2; a run folder without run.json
    (written before run ids) reads as before."""
    from reliability_support import cli

    run = Path(shutil.copytree(finished_run, tmp_path / "X"))
    shutil.rmtree(run / STEP4)
    shutil.copytree(other_run / STEP4, run / STEP4)
    own, theirs = (json.loads((r / "run.json").read_text())["run_id"] for r in (run, other_run))
    assert own != theirs and json.loads((run / STEP4 / "state.json").read_text())["run_id"] == theirs
    before = tree_hashes(run)
    for argv in (["train", "--run-dir", run, "--resume", "auto", "max_steps=5", "--quiet"], ["eval", run],
                 ["export", run, tmp_path / "Y"]):
        line = cli_error(argv)
        assert (f"step folder '{run / STEP4}' belongs to another run (run_id {theirs} in its state.json) than run "
                f"folder '{run}' (run_id {own} in its run.json)") in line, line
        assert f"move it out of '{run / 'checkpoints'}'" in line, line
    assert tree_hashes(run) == before and not (tmp_path / "Y").exists()
    assert cli(["eval", run / STEP4]).returncode == 0  # the step folder given itself: taken as what it is
    shutil.move(run / STEP4, tmp_path / "moved")
    proc = cli(["train", "--run-dir", run, "--resume", "auto", "max_steps=5", "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads((run / "checkpoints/step-00000005/state.json").read_text())["run_id"] == own
    legacy = Path(shutil.copytree(finished_run, tmp_path / "old"))
    shutil.rmtree(legacy / STEP4)
    shutil.copytree(other_run / STEP4, legacy / STEP4)
    (legacy / "run.json").unlink()
    assert cli(["eval", legacy]).returncode == 0  # no id: no check, as before


def test_an_edited_run_json_is_blamed_not_the_steps_that_agree_with_the_log(finished_run, tmp_path):
    """Round 18 (G257): run.json's run_id edited (every step folder and metrics line still recording the run's own)
    was blamed on the newest step folder, "copied in from another run; move it out", a fix that would move every step
    of the run out. When every step and log line agree and run.json alone differs, run.json is named, with the id to
    write back; train and eval (real processes) refuse before anything is written, and the run works once it is back."""
    from reliability_support import cli

    run = Path(shutil.copytree(finished_run, tmp_path / "r"))
    own = json.loads((run / "run.json").read_text())["run_id"]
    (run / "run.json").write_text(json.dumps({"format": 1, "run_id": "0" * 32}))
    before = tree_hashes(run)
    for argv in (["train", "--run-dir", run, "--resume", "auto", "max_steps=5", "--quiet"], ["eval", run]):
        line = cli_error(argv)
        assert line.startswith(f"error: '{run / 'run.json'}' records run_id {'0' * 32}, but every step folder in "
                               f"'{run / 'checkpoints'}' and every line of its metrics.jsonl record {own}"), line
        assert "belongs to another run" not in line and "move it out" not in line, line
    assert tree_hashes(run) == before
    (run / "run.json").write_text(json.dumps({"format": 1, "run_id": own}))
    assert cli(["eval", run]).returncode == 0


def test_a_fork_gets_its_own_run_id_and_records_the_run_it_forked_from(finished_run, tmp_path):
    """Round 15 (A156): forking (``--resume OTHER/checkpoints/step-N`` into a new run folder, A180) stays legitimate:
    the new run has its own id, recorded in its steps and metrics lines, and run.json names the run and step it
    continued from."""
    from reliability_support import cli

    step = finished_run / STEP2
    proc = cli(["train", "--run-dir", tmp_path / "fork", "--resume", step, "max_steps=3", "--quiet"])
    assert proc.returncode == 0, proc.stderr
    parent = json.loads((finished_run / "run.json").read_text())["run_id"]
    record = json.loads((tmp_path / "fork" / "run.json").read_text())
    assert record["run_id"] != parent and record["forked_from"] == {"run_id": parent, "step": str(step)}
    saved = json.loads((tmp_path / "fork/checkpoints/step-00000003/state.json").read_text())
    assert saved["run_id"] == record["run_id"]
    lines = [json.loads(line) for line in (tmp_path / "fork" / "metrics.jsonl").read_text().splitlines()]
    assert lines and {line["run_id"] for line in lines if line["step"] > 2} == {record["run_id"]}
def test_a_step_folders_tokenizer_swapped_for_another_is_refused_when_the_step_is_loaded_directly(run_copy):
    """Round 15 (B280): ``data.tokenizer.load_tokenizer(STEP)`` loaded a tokenizer.json swapped into the step folder
    (another data folder's: 'The cat' -> other ids) without a word, while ``checkpoint.read.load_tokenizer(RUN)``
    refused it by its sha256. A directory holding state.json is a step folder, and its tokenizer files are checked
    against state.json's fingerprints whichever loader reads them."""
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import UserError

    step = sorted((run_copy / "checkpoints").glob("step-*"))[-1]
    assert load_tokenizer(step).encode("The cat")  # its own: loads
    path = step / "tokenizer.json"
    path.write_text(path.read_text() + " ")  # the same JSON, but not the file saved with this step
    with pytest.raises(UserError, match="tokenizer.json"):
        load_tokenizer(step)


def test_the_fix_for_a_step_of_another_run_says_what_moving_it_out_leaves(finished_run, other_run, tmp_path):
    """Round 35 (AH256-AH258): a run whose only step folder was copied in from another run was told "move it out (the
    run's previous step is then used)" by eval and export, and "(--resume auto then goes on from this run's previous
    step)" by train: there is none. The fix now names the previous step (``layout.step_before``), or says the run then
    holds none (eval, export) / starts again from step 0 (train)."""
    from leviathan.checkpoint.find import find_checkpoint
    from leviathan.errors import UserError
    from leviathan.train.branch import refuse_other_runs_step

    run = Path(shutil.copytree(finished_run, tmp_path / "X"))
    shutil.rmtree(run / STEP4)
    shutil.copytree(other_run / STEP4, run / STEP4)
    with pytest.raises(UserError, match=r"\(the run's previous step, step-00000002, is then used\)"):
        find_checkpoint(run)
    with pytest.raises(UserError, match=r"\(--resume auto then goes on from this run's previous step, step-00000002\)"):
        refuse_other_runs_step(run / STEP4, run)
    for step in (run / "checkpoints").iterdir():
        if step.name != STEP4.split("/")[-1]:
            shutil.rmtree(step)
    with pytest.raises(UserError) as refused:
        find_checkpoint(run)
    assert "(the run then holds no checkpoint of its own: train it to get one)" in str(refused.value)
    assert "previous step" not in str(refused.value)
    with pytest.raises(UserError) as refused:
        refuse_other_runs_step(run / STEP4, run)
    assert "(--resume auto then starts this run again from step 0, as it holds no other step)" in str(refused.value)

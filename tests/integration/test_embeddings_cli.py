"""``leviathan analyze embeddings`` on tiny runs trained here: the init rebuilt bit for bit, records, pairs, sweeps.

The runs train with the real loop on a corpus prepared in a temp dir (``test_train.make_data``); the weights each
run started from are captured from inside training (``train.loop._build`` wrapped), so the rebuild of the init
(``initial_model``) is checked against what training really used, not against a second call of the same code.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from leviathan import checkpoint as ckpt
from leviathan.cli import main
from leviathan.experiments.method import embeddings as E
from leviathan.experiments.machinery.embedding_files import read_record
from leviathan.experiments.machinery.results import ResultRow, append_result
from leviathan.initial_model import initial_model
from leviathan.run_config import load_run_config
from leviathan.train import loop

sys.path.insert(0, str(Path(__file__).parent))
from test_train import make_data, tiny_overrides  # noqa: E402

pytestmark = pytest.mark.usefixtures("single_thread")

VARIANTS = ("dense_tied", "dense_untied", "leviathan")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A sweep-like folder: runs/<name> for three arms of seed 0 (3 steps each), the weights each started from,
    and a results.jsonl listing two of them as finished. Returns (data dir, sweep dir, {name: initial state})."""
    root = tmp_path_factory.mktemp("emb")
    data = make_data(root)
    out = root / "sweep"
    captured = {}
    build = loop._build

    def capturing(cfg, device, info):
        parts = build(cfg, device, info)
        captured[cfg.model.embedding] = {k: v.detach().clone() for k, v in parts[0].state_dict().items()}
        return parts

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loop, "_build", capturing)
        for variant in VARIANTS:
            cfg = load_run_config(None, tiny_overrides(data, max_steps=3, checkpoint_interval=3, eval_interval=3,
                                                       seed=3, **{"model.embedding": variant}))
            loop.train(cfg, out / "runs" / f"t-{variant}-s3", quiet=True)
    for variant in ("dense_tied", "leviathan"):
        append_result(out / "results.jsonl", ResultRow(name=f"t-{variant}-s3", variant=variant, seed=3))
    (out / "grid.json").write_text(json.dumps({"name": "t", "eval_options": {"buckets": 3, "bucket_method": "mass"}}))
    return data, out, {f"t-{v}-s3": captured[v] for v in VARIANTS}


def test_initial_model_rebuilds_the_weights_training_started_from_bit_for_bit(sweep):
    _, out, initial = sweep
    for name, state in initial.items():
        cfg = ckpt.run_config_from_dict(yaml.safe_load((out / "runs" / name / "config.yaml").read_text()))
        rebuilt = initial_model(cfg).state_dict()
        assert rebuilt.keys() == state.keys(), name
        for key, value in state.items():
            assert torch.equal(rebuilt[key], value), (name, key)  # bitwise: same dtype, shape and every bit
        trained, _ = ckpt.load_model(out / "runs" / name)
        assert not torch.equal(trained.state_dict()["model.norm.weight"], state["model.norm.weight"])  # it trained
    # the two dense arms of one seed start from the same table (the report's claim)
    assert torch.equal(initial["t-dense_tied-s3"]["model.embed_tokens.weight"],
                       initial["t-dense_untied-s3"]["model.embed_tokens.weight"])


def test_record_of_a_run_through_the_cli(sweep, tmp_path, capsys):
    _, out, initial = sweep
    run = out / "runs" / "t-leviathan-s3"
    path = tmp_path / "rec" / "t-leviathan-s3.json"
    assert main(["analyze", "embeddings", str(run), "--out", str(path), "--probes", "6", "--top-k", "4"]) == 0
    printed = capsys.readouterr().out
    assert "t-leviathan-s3 (leviathan, seed 3): init -> step 3" in printed and "effective rank" in printed
    rec = read_record(path)
    assert (rec.run, rec.arm, rec.variant, rec.seed, rec.step, rec.total_steps) == (
        "t-leviathan-s3", "t-leviathan", "leviathan", 3, 3, 3)
    assert rec.top_k == 4 and rec.probes_per_group == 6 and rec.data.tokenizer == "bpe:300"
    assert str(tmp_path) not in path.read_text() and str(out) not in path.read_text()  # no machine path
    # the numbers are those of the captured init and of the final checkpoint's baked generator
    model, cfg = ckpt.load_model(run)
    final = model.model.embed_tokens.bake().numpy()
    freq = np.load(Path(cfg.data.path) / "train_freq.npy")
    groups = E.frequency_groups(freq, len(final), 5)
    assert rec.final == E.table_geometry(final, groups)
    init_model = initial_model(cfg)
    init_model.load_state_dict(initial["t-leviathan-s3"])
    assert rec.init == E.table_geometry(init_model.model.embed_tokens.bake().numpy(), groups)
    assert {p.group for p in rec.probes} <= {g.name for g in groups} and all(len(p.final) == 4 for p in rec.probes)
    # --json prints the record itself
    assert main(["analyze", "embeddings", str(run), "--probes", "6", "--top-k", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["probes"] == json.loads(path.read_text())["probes"]


def test_pair_from_records_and_run_folders(sweep, tmp_path, capsys):
    _, out, _ = sweep
    paths = []
    for name in ("t-dense_tied-s3", "t-dense_untied-s3"):
        paths.append(tmp_path / f"{name}.json")
        assert main(["analyze", "embeddings", str(out / "runs" / name), "--out", str(paths[-1])]) == 0
    capsys.readouterr()
    assert main(["analyze", "embeddings", *map(str, paths), "--json"]) == 0
    pair = json.loads(capsys.readouterr().out)
    assert pair["run_a"] == "t-dense_tied-s3" and pair["top_k"] == 10
    assert all(g["init"] == 1.0 for g in pair["groups"])  # the dense arms share their initial table
    assert main(["analyze", "embeddings", str(paths[0]), str(paths[0]), "--json"]) == 0
    assert all(g["final"] == 1.0 for g in json.loads(capsys.readouterr().out)["groups"])  # identical: 1.0
    # a record against a run folder analysed now; the text form names both runs and the agreement
    assert main(["analyze", "embeddings", str(paths[0]), str(out / "runs" / "t-leviathan-s3")]) == 0
    text = capsys.readouterr().out
    assert "neighbour agreement" in text and "t-leviathan-s3 (leviathan, seed 3)" in text


def test_sweep_form_writes_every_finished_run_and_the_report_shows_it(sweep, tmp_path, capsys):
    _, out, _ = sweep
    dest = tmp_path / "results"
    assert main(["analyze", "embeddings", "--sweep", str(out), "--dest", str(dest), "--probes", "5"]) == 0
    files = sorted(p.name for p in (dest / "embeddings").glob("*.json"))
    assert files == ["t-dense_tied-s3.json", "t-leviathan-s3.json"]  # the rows; the third run has none
    made = read_record(dest / "embeddings" / files[0])
    assert (made.num_buckets, made.probes_per_group) == (3, 5)  # the grid's buckets, the given probes
    before = (dest / "embeddings" / files[0]).stat().st_mtime_ns
    assert main(["analyze", "embeddings", "--sweep", str(out), "--dest", str(dest)]) == 0
    assert "exists, kept" in capsys.readouterr().out
    assert (dest / "embeddings" / files[0]).stat().st_mtime_ns == before
    shutil.copy(out / "results.jsonl", dest / "results.jsonl")
    assert main(["report", str(dest), "--out", str(tmp_path / "report"), "--bootstrap", "0"]) == 0
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Input side at init and at the end" in md and "### t-leviathan (leviathan; seed 3; final step 3)" in md
    assert "| 3 | t-dense_tied-s3 | t-leviathan-s3 |" in md
    assert "embeddings" in json.loads((tmp_path / "report" / "analysis.json").read_text())


def test_bad_input_names_the_problem_and_the_fix(sweep, tmp_path, capsys):
    _, out, _ = sweep
    run = out / "runs" / "t-leviathan-s3"
    assert main(["analyze", "embeddings"]) == 2
    assert "pass one run folder" in capsys.readouterr().err
    assert main(["analyze", "embeddings", str(run), str(run), str(run)]) == 2
    assert main(["analyze", "embeddings", str(run), "--dest", str(tmp_path)]) == 2
    assert "go with --sweep" in capsys.readouterr().err
    assert main(["analyze", "embeddings", str(run), str(run), "--out", str(tmp_path / "x.json")]) == 2
    assert "--out writes one run's record" in capsys.readouterr().err
    assert main(["analyze", "embeddings", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["analyze", "embeddings", str(run), "--data", str(tmp_path)]) == 2
    assert "not a prepared data folder" in capsys.readouterr().err
    # the data folder moved since training (the run's config.yaml still names its old place; editing config.yaml
    # instead would be refused as a file that is not the one saved with the checkpoint)
    data = Path(sweep[0])
    moved = tmp_path / "moved-data"
    data.rename(moved)
    try:
        assert main(["analyze", "embeddings", str(run)]) == 2
        assert "pass --data DIR" in capsys.readouterr().err
        assert main(["analyze", "embeddings", str(run), "--data", str(moved), "--probes", "2"]) == 0
    finally:
        moved.rename(data)
    assert main(["analyze", "embeddings", "--sweep", str(tmp_path)]) == 2
    assert "holds no results.jsonl" in capsys.readouterr().err
    # --dest must be a folder the report reads records from: a prepared data folder (or any folder of other
    # files without a results.jsonl) is refused before anything is written into it
    before = sorted(p.name for p in data.iterdir())
    assert main(["analyze", "embeddings", "--sweep", str(out), "--dest", str(data)]) == 2
    assert "holds no results.jsonl and is not empty" in capsys.readouterr().err
    assert sorted(p.name for p in data.iterdir()) == before
    assert main(["analyze", "embeddings", "--sweep", str(out), "--dest", str(out / "runs" / "t-leviathan-s3")]) == 2
    assert "records go beside a results.jsonl" in capsys.readouterr().err

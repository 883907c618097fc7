"""Sweep: resumable execution of a grid, atomic results rows, evaluation hooks.

The fast tests drive ``run_sweep`` with a fake training function (the contract:
``train(cfg, run_dir, resume="auto") -> summary``); ``test_real_sweep_on_tiny_corpus`` runs the real
training loop, checkpoint loading and evaluation on a corpus prepared in a temp dir (seconds).
"""

import contextlib
import json
import math
import os

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.experiments.machinery.grid import load_grid
from leviathan.eval.result import EvalResult
from leviathan.experiments.machinery.provenance import DataProvenance
from leviathan.experiments.machinery.results import BucketResult, append_result, read_results
from leviathan.experiments.machinery import sweep as sweep_module
from leviathan.eval.score import summarize_losses
from leviathan.experiments.machinery.sweep import RunEvaluation, SweepOptions, run_sweep, select_runs, sweep_lock, train_commands
from leviathan.io import hardware_info

# one intra-op thread: on the shared 2-core machine OpenMP stalls cost far more than they gain
pytestmark = pytest.mark.usefixtures("single_thread")


def grid_dict(data_dir="/nonexistent"):
    return {
        "name": "fake",
        "base": {"max_steps": 4, "data": {"seq_len": 16}},
        "data": {"dir": str(data_dir), "vocab_size": 1024},
        "seeds": [0],
        "sizes": {"a": {"preset": "cpu-tiny", "hidden_size": 16, "num_attention_heads": 2},
                  "b": {"preset": "cpu-tiny", "hidden_size": 32, "num_attention_heads": 2},
                  "c": {"preset": "cpu-tiny", "hidden_size": 48, "num_attention_heads": 2}},
        "experiments": {"iso_body": {"variants": ["dense_tied", "leviathan"], "sizes": ["a"]},
                        "scaling": {"variant": "dense_untied", "sizes": ["a", "b", "c"]}},
    }


class FakeTrainer:
    """Writes a metrics file, 'checkpoints' progress into the run dir, can be told to die mid-run."""

    def __init__(self, die_on=None):
        self.calls = []
        self.die_on = die_on

    def __call__(self, cfg, run_dir, resume=None):
        name = os.path.basename(run_dir)
        self.calls.append((name, resume))
        progress = os.path.join(run_dir, "progress")
        step = start = int(open(progress).read()) if os.path.exists(progress) else 0
        while step < 4:
            step += 1
            with open(os.path.join(run_dir, "metrics.jsonl"), "a") as f:
                f.write(json.dumps({"step": step, "tokens": step * 100, "val_loss": 5.0 - step * 0.1}) + "\n")
            open(progress, "w").write(str(step))
            if self.die_on == name and step == 2:
                raise KeyboardInterrupt("killed")
        return {"run_dir": run_dir, "steps": 4, "tokens": 400, "wall_time_s": 1.0, "tokens_per_s": 400.0,
                "final_val_loss": 4.6, "final_val_ppl": math.exp(4.6),
                "params": {"input": 1, "body": 2, "head": 3, "total": 6, "tied": False},
                "metrics": os.path.join(run_dir, "metrics.jsonl"), "resumed_from": start or None}


def fake_eval(grid, spec, run_dir, eval_data):
    return RunEvaluation(eval={"val": EvalResult(loss=4.5, ppl=math.exp(4.5), bpb=1.2, tokens=10)},
                         buckets={"val": BucketResult(loss=[5.0, 4.0], count=[5, 5])})


@contextlib.contextmanager
def replaced(trainer, eval_fn=fake_eval, config_fn=lambda grid, spec: grid.run_overrides(spec)):
    """The sweep's production path with training, evaluation and the run config replaced (monkeypatch)."""
    from leviathan.train import loop
    from leviathan.train.summary import TrainSummary

    def train(cfg, run_dir, resume=None):  # the fakes describe their summary as a dict
        return TrainSummary.from_dict(trainer(cfg, run_dir, resume=resume))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loop, "train", train)
        mp.setattr(sweep_module, "evaluate_run", eval_fn)
        mp.setattr(sweep_module, "check_eval_sets", lambda grid, root: None)  # the fake evaluation reads no data
        mp.setattr(sweep_module, "build_run_config", config_fn)
        mp.setattr(sweep_module, "_check_memory", lambda configs, jobs: None)  # it sizes the real configs replaced here
        yield


def sweep(tmp_path, trainer, **kw):
    g = load_grid(grid_dict())
    with replaced(trainer):
        return run_sweep(g, tmp_path / "out", SweepOptions(**kw), log=lambda s: None)


def test_sweep_appends_rows_and_resumes_after_a_kill(tmp_path):
    t = FakeTrainer(die_on="b-dense_untied-s0")
    rows = sweep(tmp_path, t, max_runs=2)
    assert [r.name for r in rows] == ["a-dense_tied-s0", "a-leviathan-s0"]
    with pytest.raises(KeyboardInterrupt):
        sweep(tmp_path, t)  # trains a-dense_untied, dies half-way through b-dense_untied
    results = tmp_path / "out" / "results.jsonl"
    assert [r.name for r in read_results(results)] == ["a-dense_tied-s0", "a-leviathan-s0", "a-dense_untied-s0"]
    t.die_on = None
    rows = sweep(tmp_path, t)
    assert [r.name for r in rows] == ["b-dense_untied-s0", "c-dense_untied-s0"]
    # every run was trained with resume="auto"; the killed one was called twice and continued
    assert all(resume == "auto" for _, resume in t.calls)
    assert [n for n, _ in t.calls].count("b-dense_untied-s0") == 2
    steps = [json.loads(line)["step"] for line in open(tmp_path / "out/runs/b-dense_untied-s0/metrics.jsonl")]
    assert steps == [1, 2, 3, 4]
    # its row says that its timings cover the resumed session only; a run trained in one go has no such note
    assert rows[0].notes == ["resumed from its step-2 checkpoint: wall_time_s and tokens_per_s cover steps 3-4"]
    assert rows[1].notes == []
    # a complete sweep does nothing more
    assert sweep(tmp_path, t) == []
    rows = read_results(results)
    assert len(rows) == 5 and len({r.name for r in rows}) == 5
    row = rows[0]
    for key in ("name", "regime", "regimes", "variant", "size", "seed", "data_seed", "params", "tokens",
                "wall_time_s", "hardware", "tokens_per_s", "eval", "buckets", "metrics"):
        assert key in row.to_dict()
    assert row.eval["val"].loss == 4.5 and row.hardware["cores"] == os.cpu_count()
    assert row.regime == "iso_body"
    shared = [r for r in rows if r.name == "a-dense_untied-s0"][0]
    assert shared.regimes == ["scaling"]
    snap = json.loads((tmp_path / "out" / "grid.json").read_text())
    assert len(snap["runs"]) == 5


def test_trained_but_not_evaluated_run_skips_training(tmp_path):
    t = FakeTrainer()
    calls = []

    def failing_eval(grid, spec, run_dir, eval_data):
        calls.append(spec.name)
        raise RuntimeError("eval crashed")

    g = load_grid(grid_dict())
    with pytest.raises(RuntimeError):
        with replaced(t, failing_eval, lambda g_, s: None):
            run_sweep(g, tmp_path / "out", log=lambda s: None)
    assert len(t.calls) == 1 and (tmp_path / "out/runs/a-dense_tied-s0/sweep_train.json").is_file()
    sweep(tmp_path, t, only=["a-dense_tied-*"])
    assert len(t.calls) == 1  # not trained again
    assert read_results(tmp_path / "out")[0].tokens == 400


def test_throughput_of_a_run_trained_elsewhere_comes_from_its_metrics(tmp_path):
    class Finished(FakeTrainer):  # what train(resume="auto") returns for a run finished by `leviathan train`
        def __call__(self, cfg, run_dir, resume=None):
            summary = super().__call__(cfg, run_dir, resume)  # its validation rows of steps 1-4
            with open(os.path.join(run_dir, "metrics.jsonl"), "a") as f:  # each step once, in order (round 28, U481)
                for step, tps in enumerate((100.0, 300.0, 200.0), start=5):
                    f.write(json.dumps({"step": step, "tokens": 100 * step, "train_loss": 5.0, "tokens_per_s": tps})
                            + "\n")
            return {**summary, "tokens_per_s": None}

    rows = sweep(tmp_path, Finished(), only=["a-dense_tied-*"])
    assert rows[0].tokens_per_s == 200.0


def test_a_run_stopped_by_sigterm_gets_no_row_and_stops_the_sweep(tmp_path):
    class Stopping(FakeTrainer):
        def __call__(self, cfg, run_dir, resume=None):
            summary = super().__call__(cfg, run_dir, resume)
            return {**summary, "stopped": "SIGTERM"} if len(self.calls) == 1 else summary

    t = Stopping()
    assert sweep(tmp_path, t) == []
    assert len(t.calls) == 1 and not (tmp_path / "out/runs/a-dense_tied-s0/sweep_train.json").exists()
    rows = sweep(tmp_path, t)
    assert len(rows) == 5 and t.calls[1] == ("a-dense_tied-s0", "auto")


def test_results_rows_are_atomic_and_torn_lines_ignored(tmp_path):
    path = tmp_path / "results.jsonl"
    append_result(path, {"name": "a", "variant": "dense_tied", "seed": 0, "x": float("nan"), "v": np.float32(1.5),
                         "arr": np.arange(2)})
    with open(path, "a") as f:
        f.write('{"name": "torn", "x": ')  # a crash in the middle of a write
    append_result(path, {"name": "b", "variant": "dense_tied", "seed": 1})
    rows = read_results(path)
    assert [r.name for r in rows] == ["a", "b"]
    assert rows[0].extra["x"] is None and rows[0].extra["v"] == 1.5 and rows[0].extra["arr"] == [0, 1]


def test_refuses_to_run_under_torchrun(tmp_path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(UserError, match="--commands"):
        sweep(tmp_path, FakeTrainer())


def test_lock_refuses_a_second_sweep(tmp_path):
    with sweep_lock(tmp_path):  # in one process the second is named as this process's own lock (round 29, W243)
        with pytest.raises(UserError, match="this process holds its lock already"):
            with sweep_lock(tmp_path):
                pass
    with sweep_lock(tmp_path):  # released
        pass


def test_selection_commands_and_helpers(tmp_path):
    g = load_grid(grid_dict())
    lines = train_commands(g, tmp_path)
    assert len(lines) == 5 and all(line.startswith("leviathan train") for line in lines)
    with pytest.raises(UserError, match="matches"):
        sweep(tmp_path, FakeTrainer(), only=["nothing*"])
    rows = sweep(tmp_path, FakeTrainer(), regimes=["iso_body"])
    assert {r.variant for r in rows} == {"dense_tied", "leviathan"}
    s = summarize_losses(np.array([1.0, 2.0]), num_bytes=8)
    assert s.loss == 1.5 and s.bpb == pytest.approx(3.0 / math.log(2) / 8) and s.tokens == 2
    assert hardware_info()["torch_threads"] >= 1


def test_threads_per_run_and_the_listing_of_a_selection(tmp_path, capsys):
    """--threads N: each run trains with N torch threads (the row records it; the caller's setting is restored),
    and --commands lines carry it; --list and --list --json show the runs the selection would train (--shard)."""
    import torch

    from leviathan.cli import main

    seen = []

    class CountingTrainer(FakeTrainer):
        def __call__(self, cfg, run_dir, resume=None):
            seen.append(torch.get_num_threads())
            return super().__call__(cfg, run_dir, resume)

    before = torch.get_num_threads()
    rows = sweep(tmp_path, CountingTrainer(), threads=2, regimes=["iso_body"])
    assert seen == [2, 2] and {r.hardware["torch_threads"] for r in rows} == {2}
    assert torch.get_num_threads() == before
    with pytest.raises(UserError, match="threads"):
        sweep(tmp_path / "x", FakeTrainer(), threads=0)
    g = load_grid(grid_dict())
    lines = train_commands(g, tmp_path, threads=1)
    assert all(line.startswith("OMP_NUM_THREADS=1 leviathan train") for line in lines)

    grid_file = tmp_path / "fake.yaml"
    grid_file.write_text(json.dumps(grid_dict()))  # JSON is YAML
    halves = []
    for i in (1, 2):
        assert main(["sweep", "--grid", str(grid_file), "--list", "--shard", f"{i}/2"]) == 0
        out = capsys.readouterr().out
        assert f"grid 'fake': {3 if i == 1 else 2} of 5 runs (--shard {i}/2)" in out
        halves.append({r.name for r in select_runs(g, shard=(i, 2))})
        assert all(name in out for name in halves[-1])
        assert not any(name in out for name in {r.name for r in g.runs} - halves[-1])
    assert main(["sweep", "--grid", str(grid_file), "--list", "--json", "--shard", "2/2"]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in snapshot["runs"]} == halves[1] and snapshot["selection"] == "--shard 2/2"
    assert main(["sweep", "--grid", str(grid_file), "--commands", "--shard", "1/2", "--threads", "1"]) == 0
    commands = capsys.readouterr().out.splitlines()
    assert len(commands) == 3 and all(c.startswith("OMP_NUM_THREADS=1 leviathan train") for c in commands)
    for shown in ("--commands", "--list"):  # round 6 of issue 30: a run that cannot train was printed as a command
        assert main(["sweep", "--grid", str(grid_file), shown, "optim.lr=1e400"]) == 2
        captured = capsys.readouterr()
        assert "optim.lr: '1e400' is too large for a 64-bit float and reads as inf (overflow)" in captured.err  # P30
        assert "leviathan train" not in captured.out


def test_the_shipped_grids_are_listed_a_line_each(capsys):
    from leviathan.cli import main
    from leviathan.configs import GRIDS, packaged_names

    assert main(["sweep", "--grids"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line.startswith("leviathan ")}
    assert set(packaged_names(GRIDS)) <= set(lines)
    assert "smoke" in lines and "pipeline check" in lines["smoke"]  # the small test grid
    for name in packaged_names(GRIDS):
        runs = len(load_grid(name).runs)
        assert f" {runs} runs  " in lines[name], lines[name]
    assert main(["sweep"]) == 2
    assert "error: no grid given; pass --grid NAME" in capsys.readouterr().err


def test_seed_order_puts_every_first_seed_first():
    g = load_grid({**grid_dict(), "seeds": [0, 1]})
    by_grid = [r.name for r in select_runs(g)]
    by_seed = [r.name for r in select_runs(g, order="seed")]
    assert sorted(by_grid) == sorted(by_seed) and by_grid != by_seed
    seeds = [r.seed for r in select_runs(g, order="seed")]
    assert seeds == sorted(seeds)
    # within a seed the grid's order is kept
    assert [n for n in by_seed if n.endswith("-s0")] == [n for n in by_grid if n.endswith("-s0")]
    with pytest.raises(UserError, match="run order"):
        select_runs(g, order="random")


# --------------------------------------------------------------------------------------------
# the real thing: prepare a tiny corpus, train, evaluate, report (seconds)

WORDS = ("the cat dog bird sat ran flew on under over a mat tree house quickly slowly and then "
         "saw heard found big small red green old new river stone light dark").split()


def tiny_corpus(root, num_docs=40, seed=0):
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    for d in range(num_docs):
        sentences = [" ".join(rng.choice(WORDS, size=rng.integers(4, 10))).capitalize() + "."
                     for _ in range(rng.integers(5, 15))]
        (root / f"doc{d:03d}.txt").write_text(" ".join(sentences) + "\n")
    return root


def test_real_sweep_on_tiny_corpus(tmp_path, capsys):
    pytest.importorskip("leviathan.data.prepare")
    pytest.importorskip("leviathan.train.loop")
    from leviathan.cli import main
    from leviathan.data.prepare import prepare
    from leviathan.experiments.report import write_report

    data = tmp_path / "data"
    prepare(str(tiny_corpus(tmp_path / "corpus")), str(data), "bpe:300", val_fraction=0.2, progress=False,
            log=lambda s: None)
    eval_text = tmp_path / "extra.txt"
    eval_text.write_text(" ".join(WORDS) + ". The red bird flew over the old house.\n")
    raw = {
        "name": "tiny",
        "base": {"data": {"seq_len": 16}, "batch_tokens": 64, "micro_batch_size": 4, "max_steps": 3,
                 "log_interval": 1, "eval_interval": 1, "eval_tokens": 256, "checkpoint_interval": 2,
                 "schedule": {"warmup_steps": 1}, "device": "cpu", "dtype": "float32"},
        "data": {"dir": str(data)},
        "seeds": [0],
        "eval": {"sets": {"val": {"split": "val"}, "extra": {"text": "extra.txt"},
                          "missing": {"text": "nope.txt", "optional": True}},
                 "buckets": 3, "seq_len": 16, "batch_size": 4, "max_tokens": 400},
        "sizes": {s: {"hidden_size": h, "num_hidden_layers": 1, "num_attention_heads": 2,
                      "max_position_embeddings": 16, "generator_seed_dim": 8, "generator_modes": 2,
                      "generator_knots": 6, "generator_rank": 4} for s, h in (("a", 16), ("b", 24), ("c", 32))},
        "experiments": {"iso_body": {"variants": ["dense_tied", "leviathan"], "sizes": ["a"]},
                        "scaling": {"variant": "dense_tied", "sizes": ["a", "b", "c"]}},
        "variant_run": {"leviathan": {"optim": {"lr": 0.002}}},  # each arm at its own learning rate
    }
    grid = load_grid(raw)
    assert grid.vocab_from == "meta.json"
    out = tmp_path / "sweep"
    rows = run_sweep(grid, out, SweepOptions(root=tmp_path), log=lambda s: None)
    assert len(rows) == 4  # a-dense_tied serves iso-body and the ladder
    for r in rows:
        assert r.steps == 3 and r.tokens == 192 and r.params.total == r.params.input + \
            r.params.body + r.params.head
        val = r.eval["val"]
        assert math.isfinite(val.loss) and val.ppl == pytest.approx(math.exp(val.loss)) and val.bpb > 0
        assert val.tokens <= 400 and r.eval["extra"].tokens > 10
        b = r.buckets["val"]
        assert sum(b.count) == val.tokens and len(b.loss) == 3
        # the per-bucket means recombine into the overall loss
        assert sum(l * c for l, c in zip(b.loss, b.count) if l is not None) / sum(b.count) == \
            pytest.approx(val.loss)
        assert any("missing" in n for n in r.notes)
        assert read_results(out) and os.path.isfile(out / r.metrics)  # relative to the sweep folder
        # provenance: the resolved config it trained with, the code, the data it saw
        assert r.config["optim"]["lr"] == (0.002 if r.variant == "leviathan" else 3e-4)
        assert r.config["model"]["embedding"] == r.variant and r.config["seed"] == r.seed
        assert r.data.fingerprint == json.loads((data / "meta.json").read_text())["fingerprint"]
        assert set(r.code.as_dict()) == {"commit", "leviathan", "torch"}
    for text in [(out / "results.jsonl").read_text(), (out / "grid.json").read_text()]:
        assert str(tmp_path) not in text  # no machine-absolute path in what gets committed
    # the model evaluated is the trained one: its val loss matches the loop's final validation
    # (the loop evaluates eval_tokens=256 tokens, the sweep 400: close, not equal)
    assert all(abs(r.eval["val"].loss - r.final_val_loss) < 0.5 for r in rows)
    assert run_sweep(grid, out, SweepOptions(root=tmp_path), log=lambda s: None) == []  # resumable: nothing left
    md = write_report(out, tmp_path / "report", num_bootstrap=10).read_text()
    assert "Iso-body" in md and "dense_tied ladder" in md
    # the printed train commands are valid `leviathan train` invocations
    line = train_commands(grid, out)[0].split()
    assert main(line[1:] + ["--print-config"]) == 0
    assert "embedding: dense_tied" in capsys.readouterr().out

    # downstream: `leviathan lm-eval RUN_DIR` exports the checkpoint with its own BPE and scores it
    pytest.importorskip("lm_eval")
    pytest.importorskip("accelerate")
    root = tmp_path / "bench"
    (root / "lambada_openai").mkdir(parents=True)
    (root / "lambada_openai" / "lambada_test.jsonl").write_text(
        "".join(json.dumps({"text": t}) + "\n" for t in ("the red bird flew over the house",
                                                          "the cat sat on the mat")))
    lev = [r for r in rows if r.variant == "leviathan"][0]
    assert main(["lm-eval", str(out / lev.run_dir), "--tasks", "lambada_openai", "--data-root", str(root), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["verify"]["max_abs_logit_diff"] < 1e-4
    assert res["tasks"]["lambada_openai"]["num_samples"] == 2
    assert math.isfinite(res["tasks"]["lambada_openai"]["perplexity"])


def test_parallel_jobs_match_a_serial_sweep(tmp_path):
    """--jobs 2 trains two runs at once in worker processes (one thread each): the same rows as a serial
    sweep, bit for bit in the losses, each with its validation curve and input-side gradient norms."""
    from leviathan.data.prepare import prepare

    data = tmp_path / "data"
    prepare(str(tiny_corpus(tmp_path / "corpus")), str(data), "bpe:300", val_fraction=0.2, progress=False,
            log=lambda s: None)
    raw = _one_size_grid(data, max_steps=3, eval_tokens=128, max_tokens=200,
                         experiments={"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]},
                                      "iso_body:arms": {"variants": ["leviathan"], "sizes": ["a"]}})
    grid = load_grid(raw)
    assert [r.name for r in grid.runs] == ["a-dense_tied-s0", "a-leviathan-s0"]
    serial = {r.name: r for r in run_sweep(grid, tmp_path / "serial", log=lambda s: None)}
    parallel = {r.name: r for r in run_sweep(grid, tmp_path / "parallel", SweepOptions(jobs=2), log=lambda s: None)}
    assert serial.keys() == parallel.keys() == {"a-dense_tied-s0", "a-leviathan-s0"}
    for name, row in parallel.items():
        assert row.final_val_loss == serial[name].final_val_loss
        assert row.eval["val"].loss == serial[name].eval["val"].loss
        assert row.hardware["jobs"] == 2
        curve = row.curve
        assert curve.tokens == [64, 128, 192] and len(curve.val_loss) == 3
        assert len(curve.grad_norm_input) == 3 and all(g > 0 for g in curve.grad_norm_input)
    assert len(read_results(tmp_path / "parallel")) == 2
    assert run_sweep(grid, tmp_path / "parallel", SweepOptions(jobs=2), log=lambda s: None) == []  # resumable
    with pytest.raises(UserError, match="jobs"):
        run_sweep(grid, tmp_path / "x", SweepOptions(jobs=0), log=lambda s: None)


def _one_size_grid(data_dir, max_steps: int = 2, eval_tokens: int = 64, max_tokens: int = 100,
                   experiments: dict | None = None) -> dict:
    """Runs of one tiny size on a prepared folder (seconds on a CPU); by default dense_tied and leviathan, 2 steps."""
    return {
        "name": "tiny",
        "base": {"data": {"seq_len": 16}, "batch_tokens": 64, "micro_batch_size": 4, "max_steps": max_steps,
                 "log_interval": 1, "eval_interval": 1, "eval_tokens": eval_tokens, "schedule": {"warmup_steps": 1},
                 "device": "cpu", "dtype": "float32"},
        "data": {"dir": str(data_dir)},
        "eval": {"sets": {"val": {"split": "val"}}, "buckets": 2, "seq_len": 16, "batch_size": 4,
                 "max_tokens": max_tokens},
        "sizes": {"a": {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                        "max_position_embeddings": 16, "generator_seed_dim": 8, "generator_modes": 2,
                        "generator_knots": 6, "generator_rank": 4}},
        "experiments": experiments or {"iso_body": {"variants": ["dense_tied", "leviathan"], "sizes": ["a"]}},
    }


def _rewrite_rows_data(sweep_dir, change) -> None:
    """Replace every row's ``data`` by ``change(data)`` (rows as an older version, or another place, wrote them)."""
    rows = read_results(sweep_dir)
    (sweep_dir / "results.jsonl").unlink()
    for row in rows:
        row.data = DataProvenance.from_dict(change(row.data.as_dict()))
        append_result(sweep_dir / "results.jsonl", row)


def test_a_sweep_resumes_after_its_data_moved_or_was_prepared_elsewhere(tmp_path):
    """Issue 29: the data fingerprint names the tokens, not where the text lay. A sweep whose prepared folder and
    sweep folder moved, or whose text was prepared again at another place, resumes with its committed rows and
    trains nothing; rows and meta.json written before version 2 follow ``experiments.machinery.data_match``'s rule."""
    import shutil

    from leviathan.data.prepare import prepare
    from leviathan.train import loop

    def prepared(text, data):
        prepare(str(text), str(data), "bpe:300", val_fraction=0.2, progress=False, log=lambda s: None)
        return data

    first = tmp_path / "first"
    data = prepared(tiny_corpus(first / "corpus"), first / "data")
    assert len(run_sweep(load_grid(_one_size_grid(data)), first / "sweep", log=lambda s: None)) == 2
    committed = (first / "sweep" / "results.jsonl").read_bytes()
    moved = tmp_path / "second" / "place"
    moved.mkdir(parents=True)
    for name in ("corpus", "data", "sweep"):
        shutil.move(first / name, moved / name)
    first.rmdir()
    shutil.copytree(moved / "corpus", tmp_path / "third" / "text")
    elsewhere = prepared(tmp_path / "third" / "text", tmp_path / "third" / "data")
    sweep_dir, log = moved / "sweep", []

    def resume(data_dir):
        log.clear()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(loop, "train", lambda *a, **k: pytest.fail("a finished run was trained again"))
            return run_sweep(load_grid(_one_size_grid(data_dir)), sweep_dir, log=log.append)

    def notes():
        return [m for m in log if "matched on tokenizer, vocabulary and train/val token counts" in m]

    for data_dir in (moved / "data", elsewhere):  # the folder moved; the same text prepared at another place
        assert resume(data_dir) == [] and "2 already in" in log[-1] and not notes()
    assert (sweep_dir / "results.jsonl").read_bytes() == committed
    rows = read_results(sweep_dir)
    assert all(r.data.fingerprint_version == 2 and r.data.legacy_fingerprint for r in rows)
    original = rows[0].data.as_dict()

    # meta.json written before version 2 (its fingerprint hashed the text's path): matched on what rows record
    meta = json.loads((elsewhere / "meta.json").read_text())
    old_meta = {k: v for k, v in meta.items() if k not in ("fingerprint_version", "legacy_fingerprint",
                                                           "field_digests")}  # (nor its own digests: round 14)
    old_meta["created"] = "2026-12-04T22:52:55+00:00"  # before digests (round 21, P512: one since must have them)
    (elsewhere / "meta.json").write_text(json.dumps({**old_meta, "fingerprint": meta["legacy_fingerprint"]}))
    assert resume(elsewhere) == [] and len(notes()) == 1 and "2 row(s)" in notes()[0]
    (elsewhere / "meta.json").write_text(json.dumps(meta))

    # rows written before version 2, from data prepared elsewhere: the same rule
    version_1 = {k: v for k, v in original.items() if k not in ("fingerprint_version", "legacy_fingerprint")}
    _rewrite_rows_data(sweep_dir, lambda d: {**version_1, "fingerprint": "0" * 64})
    assert resume(elsewhere) == [] and len(notes()) == 1
    _rewrite_rows_data(sweep_dir, lambda d: {**d, "train_tokens": d["train_tokens"] + 1})
    with pytest.raises(UserError, match=r"data \(a version-1 fingerprint.*: train_tokens \d+ in the row, \d+ now"):
        resume(elsewhere)
    # ... and a version-2 fingerprint that differs is refused, as before
    _rewrite_rows_data(sweep_dir, lambda d: {**original, "fingerprint": "f" * 64})
    with pytest.raises(UserError, match=r"data fingerprint: ffffffffffff\.\.\. in the row, .* now \(version 2\)"):
        resume(elsewhere)


def test_two_shards_merged_report_like_one_sweep(tmp_path, capsys):
    """--shard 1/2 and 2/2 are disjoint and cover the grid; their folders merged give the one sweep's report."""
    from leviathan.cli import main
    from leviathan.experiments.report import write_report
    from leviathan.experiments.machinery.shards import merge_sweeps, parse_shard, shard_of

    g = load_grid(grid_dict())
    halves = [select_runs(g, shard=(i, 2)) for i in (1, 2)]
    assert {r.name for r in halves[0]}.isdisjoint({r.name for r in halves[1]})
    assert sorted(r.name for h in halves for r in h) == sorted(r.name for r in g.runs)
    with replaced(FakeTrainer()):
        whole = run_sweep(g, tmp_path / "whole", log=lambda s: None)
        for i in (1, 2):
            run_sweep(g, tmp_path / f"shard-{i}", SweepOptions(shard=(i, 2)), log=lambda s: None)
    assert [len(read_results(tmp_path / f"shard-{i}")) for i in (1, 2)] == [3, 2]
    merged, _ = merge_sweeps([tmp_path / "shard-2", tmp_path / "shard-1"])
    assert [r.name for r in merged] == [r.name for r in whole]  # the grid's order, whatever the folders' order

    def report(results, out):
        text = write_report(results, tmp_path / out, num_bootstrap=20).read_text()
        return [line for line in text.splitlines() if not line.startswith("Source:")]

    assert report([tmp_path / "shard-1", tmp_path / "shard-2"], "r2") == report(tmp_path / "whole", "r1")
    a1, a2 = (json.loads((tmp_path / r / "analysis.json").read_text()) for r in ("r1", "r2"))
    assert a1 == a2
    # the CLI: several folders need --out; a changed row of one run in two folders is refused
    assert main(["report", str(tmp_path / "shard-1"), str(tmp_path / "shard-2")]) == 2
    assert "--out" in capsys.readouterr().err
    row = read_results(tmp_path / "shard-1")[0]
    row.eval["val"].loss += 0.5
    row.eval["val"].ppl = math.exp(row.eval["val"].loss)  # a consistent row (ppl = exp(loss)), not a damaged one
    append_result(tmp_path / "shard-2" / "results.jsonl", row)
    with pytest.raises(UserError, match=f"run {row.name!r} has two different rows"):
        merge_sweeps([tmp_path / "shard-1", tmp_path / "shard-2"])
    assert shard_of([1, 2, 3, 4, 5], (2, 2)) == [2, 4]
    for bad in ("0/2", "3/2", "1", "a/b"):
        with pytest.raises(UserError, match="I/N"):
            parse_shard(bad)

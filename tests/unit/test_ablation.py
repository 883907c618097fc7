"""Ablation report: pairing of leviathan arms with their dense_tied run, gap curves, plateau, tables, figures."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from leviathan.errors import UserError

from leviathan.cli import main
from leviathan.experiments.ablation import collect, pair_arms, write_ablation_report
from leviathan.experiments.method.plateau import unigram_entropy
from leviathan.experiments.machinery.results import ResultRow
from leviathan.experiments.machinery.sweep_grid import SweepGrid


def row(name, grid, size, variant, width, layers, losses, val_loss, buckets=None, vocab=1000, seed=0, grads=None):
    tokens = [100 * (i + 1) for i in range(len(losses))]
    return {"name": name, "grid": grid, "size": size, "variant": variant, "seed": seed, "hidden_size": width,
            "num_hidden_layers": layers, "vocab_size": vocab, "tokens": tokens[-1], "tokens_per_s": 10.0,
            "params": {"total": 1}, "model": {"generator_seed_dim": 8, "generator_modes": 2, "generator_knots": 4,
                                              "generator_rank": 2},
            "eval": {"val": {"loss": val_loss, "ppl": math.exp(val_loss), "bpb": val_loss / 2, "tokens": 10}},
            "buckets": {"val": {"loss": buckets or [val_loss] * 5, "count": [2] * 5}},
            "curve": {"tokens": tokens, "val_loss": losses, "grad_norm_input": grads or [], "grad_norm_head":
                      [1.0] * len(grads or [])}}


def write_sweep(path, name, rows, data_dir=None, base_overrides=()):
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "grid.json").write_text(json.dumps({"name": name, "data_dir": str(data_dir) if data_dir else None,
                                                "runs": [], "base_overrides": list(base_overrides)}))


@pytest.fixture
def sweeps(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "train_freq.npy", np.array([50, 25, 25, 0], dtype=np.int64))
    a = tmp_path / "ablate-small"
    write_sweep(a, "ablate-small", [
        row("d-dense", "ablate-small", "d", "dense_tied", 8, 2, [3.0, 2.0, 1.0, 0.2], 0.2, vocab=100),
        row("d-lev", "ablate-small", "d", "leviathan", 8, 2, [2.5, 2.1, 1.2, 0.3], 0.3, vocab=100),
    ], data)
    b = tmp_path / "ablate-large"
    write_sweep(b, "ablate-large", [
        row("d-dense", "ablate-large", "d", "dense_tied", 8, 2, [4.0, 3.0, 2.0, 1.5], 1.5, [2.0, 1.8, 1.5, 1.2, 1.0]),
        row("d-lev", "ablate-large", "d", "leviathan", 8, 2, [3.5, 2.8, 1.9, 1.4], 1.4, [1.8, 1.7, 1.5, 1.2, 1.0],
            grads=[0.5, 0.3, 0.1]),
        row("w-lev", "ablate-large", "w", "leviathan", 16, 2, [3.0, 2.0, 1.0, 0.5], 0.5),  # no dense pair: left out
        row("d-lev-s1", "ablate-large", "d", "leviathan", 8, 2, [3.0], 3.0, seed=1),  # no seed-1 dense: left out
        row("d-untied", "ablate-large", "d", "dense_untied", 8, 2, [3.9, 2.9, 1.95, 1.45], 1.45),  # a control arm
    ])
    return a, b


def test_pairs_by_backbone_and_seed(sweeps):
    _, b = sweeps
    rows = [ResultRow.from_dict(json.loads(line)) for line in (b / "results.jsonl").read_text().splitlines()]
    arms = pair_arms(rows, SweepGrid(name="ablate-large"))
    assert [(a.lev.name, a.dense.name) for a in arms] == [("d-lev", "d-dense"), ("d-untied", "d-dense")]
    assert [a.label for a in arms] == ["large/d", "large/d (dense_untied)"]
    t, gap, dense = arms[0].gap_curve()
    assert t.tolist() == [100, 200, 300, 400]
    np.testing.assert_allclose(gap, [-0.5, -0.2, -0.1, -0.1])


def test_unigram_entropy(tmp_path):
    np.save(tmp_path / "train_freq.npy", np.array([2, 1, 1, 0]))
    assert unigram_entropy(tmp_path) == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    with pytest.raises(UserError, match="does not exist"):  # a mistyped folder is named, not "no plateau" (AI203)
        unigram_entropy(tmp_path / "missing")


def test_summaries_and_vocabulary_factor(sweeps):
    a, b = sweeps
    result = collect([a, b])
    by = {s.label: s for s in result.arms}
    assert set(by) == {"small/d", "large/d", "large/d (dense_untied)"}
    assert by["large/d (dense_untied)"].gap_at[1.0] == pytest.approx(-0.05)
    assert by["large/d (dense_untied)"].generator == {}
    small, large = by["small/d"], by["large/d"]
    assert small.gap_at[1.0] == pytest.approx(0.1) and small.gap_at[0.25] == pytest.approx(-0.5)
    assert small.plateau == pytest.approx(-(0.5 * math.log(0.5) + 0.5 * math.log(0.25)))
    assert small.tokens_past_plateau == 400  # first point whose dense loss is 0.5 below the entropy (1.04)
    assert large.eval["val"].gap == pytest.approx(-0.1)
    assert large.eval["val"].ppl_change == pytest.approx(math.exp(-0.1) - 1)
    assert large.buckets[0] == pytest.approx(1 - math.exp(-0.2)) and large.buckets[4] == pytest.approx(0.0)
    assert large.input_to_head_grad == pytest.approx(0.3)
    # the same size in two grids of different vocabularies is the vocabulary ablation, small V first
    assert result.factors == {"vocabulary (d)": ["small/d", "large/d"]}


def test_report_files_and_cli(sweeps, tmp_path, capsys):
    a, b = sweeps
    out = tmp_path / "report"
    assert main(["report", str(a), str(b), "--ablation", "--out", str(out)]) == 0
    md = (out / "README.md").read_text()
    assert "| small/d | 100 | 8 x 2 | 8, 2, 4, 2 |" in md and "+0.100 |" in md and "-0.100 |" in md
    assert "### vocabulary (d)" in md and (out / "gap_vocabulary__d.png").stat().st_size > 1000
    saved = json.loads((out / "ablations.json").read_text())
    assert len(saved["arms"]) == 3
    assert "## Findings" not in md
    # hand-written findings beside the report open it, and survive regeneration
    (out / "findings.md").write_text("**Vocabulary.** The small grid loses by 0.1 nats.\n")
    assert main(["report", str(a), str(b), "--ablation", "--out", str(out)]) == 0
    md = (out / "README.md").read_text()
    assert md.index("## Findings") < md.index("**Vocabulary.** The small grid") < md.index("## Final numbers")
    assert "softmax over the data's ids" not in md
    assert main(["report", str(a), str(b), "--out", str(out)]) == 2  # two grids: only with --ablation (shards merge)
    assert "--ablation" in capsys.readouterr().err
    with pytest.raises(Exception, match="dense_tied pair"):
        empty = tmp_path / "empty"
        write_sweep(empty, "x", [row("w", "x", "w", "leviathan", 4, 1, [1.0], 1.0)])
        write_ablation_report([empty], tmp_path / "r2")


def test_a_packaged_grid_names_each_arms_change_and_factors(tmp_path):
    """A sweep of a packaged ablation grid: each arm lists its run-config change, the grid's factors group
    the figures, and a SIZE:VARIANT entry names the dense_untied control."""
    sweep = tmp_path / "ablate-bpe32k"
    write_sweep(sweep, "ablate-bpe32k", [
        row("d64-dense_tied-s0", "ablate-bpe32k", "d64", "dense_tied", 64, 2, [3.0, 2.0], 2.0),
        row("d64-leviathan-s0", "ablate-bpe32k", "d64", "leviathan", 64, 2, [2.9, 1.9], 1.9),
        row("d64-head-wd0-leviathan-s0", "ablate-bpe32k", "d64-head-wd0", "leviathan", 64, 2, [2.8, 1.8], 1.8),
        row("d64-dense_untied-s0", "ablate-bpe32k", "d64", "dense_untied", 64, 2, [3.0, 2.1], 2.1),
    ])
    result = collect([sweep])
    by = {s.label: s for s in result.arms}
    assert by["bpe32k/d64-head-wd0"].overrides == ["optim.head_weight_decay=0.0"]
    assert by["bpe32k/d64"].overrides == []
    assert result.factors["head weight decay"] == ["bpe32k/d64", "bpe32k/d64-head-wd0"]
    assert result.factors["untied head"] == ["bpe32k/d64", "bpe32k/d64 (dense_untied)"]
    assert by["bpe32k/d64 (dense_untied)"].gap_at[1.0] == pytest.approx(0.1)


def test_a_corpus_softmax_sweep_is_marked_in_the_report(tmp_path):
    """A grid whose runs score only the data's ids (data.softmax=corpus) is named in the change column, with a note."""
    c = tmp_path / "ablate-huge"
    write_sweep(c, "ablate-huge", [
        row("d-dense", "ablate-huge", "d", "dense_tied", 8, 2, [3.0, 2.0], 2.0, vocab=5000),
        row("d-lev", "ablate-huge", "d", "leviathan", 8, 2, [2.5, 1.9], 1.9, vocab=5000),
    ], base_overrides=["data.seq_len=128", "data.softmax=corpus"])
    assert [s.softmax for s in collect([c]).arms] == ["corpus"]
    md = write_ablation_report([c], tmp_path / "r").read_text()
    assert "| huge/d | 5,000 | 8 x 2 | 8, 2, 4, 2 | softmax over the data's ids* |" in md
    assert "\\* Both runs of the pair score only the ids that occur" in md


def test_gradient_medians_carried_in_the_row_survive_without_the_run_folder(tmp_path):
    """Rows written before the head's norm was in the curve carry only medians: the report must keep them."""
    lev = row("d-lev", "ablate-old", "d", "leviathan", 8, 2, [3.0, 2.0], 2.0)
    lev["curve"].update(grad_norm_input=[], grad_norm_head=[], grad_norm_input_median=0.6,
                        grad_norm_head_median=0.15)
    lev["metrics"] = str(tmp_path / "gone" / "metrics.jsonl")  # the run folder is not on this machine
    write_sweep(tmp_path / "ablate-old", "ablate-old",
                [row("d-dense", "ablate-old", "d", "dense_tied", 8, 2, [3.1, 2.1], 2.1), lev])
    (arm,) = collect([tmp_path / "ablate-old"]).arms
    assert arm.input_grad_norm == pytest.approx(0.6) and arm.head_grad_norm == pytest.approx(0.15)
    assert arm.input_to_head_grad == pytest.approx(4.0)


def test_sweep_rows_carry_the_gradient_medians(tmp_path):
    from leviathan.experiments.machinery.sweep import _curve

    metrics = tmp_path / "metrics.jsonl"
    logged = [{"tokens": 8 * i, "grad_norm_input": g, "grad_norm_head": h}
              for i, (g, h) in enumerate([(1.0, 0.1), (3.0, None), (2.0, 0.3)], 1)]
    metrics.write_text("".join(json.dumps(r) + "\n" for r in logged + [{"tokens": 24, "val_loss": 5.0}]))
    c = _curve(str(metrics))
    assert c.grad_norm_input == [1.0, 3.0, 2.0] and c.grad_norm_head == [0.1, None, 0.3]
    assert c.grad_norm_input_median == pytest.approx(2.0) and c.grad_norm_head_median == pytest.approx(0.2)
    assert c.tokens == [24] and c.val_loss == [5.0]


def test_an_arm_without_a_vocabulary_size_prints_a_dash(tmp_path):
    """A row written before rows carried ``vocab_size`` still renders (its vocabulary column: a dash)."""
    rows = [row("d-dense", "x", "d", "dense_tied", 8, 2, [3.0, 2.0, 1.0], 1.0),
            row("d-lev", "x", "d", "leviathan", 8, 2, [2.5, 2.1, 1.2], 1.2)]
    for r in rows:
        del r["vocab_size"]
    write_sweep(tmp_path / "x", "x", rows)
    md = write_ablation_report([tmp_path / "x"], tmp_path / "report").read_text()
    assert "| x/d | – | 8 x 2 |" in md


def test_a_rerun_with_fewer_arms_removes_the_earlier_reports_figures_it_does_not_draw(sweeps, tmp_path):
    """Round 14 (B322): ``report A B --ablation --out R`` then ``report B --ablation --out R`` left the earlier
    report's gap_vocabulary__d.png beside a README that no longer names it. The stale figure goes with the new report;
    a user's own file in the folder stays."""
    import re

    a, b = sweeps
    out = tmp_path / "report"
    assert main(["report", str(a), str(b), "--ablation", "--out", str(out)]) == 0
    assert (out / "gap_vocabulary__d.png").is_file()
    (out / "notes.png").write_bytes(b"mine")
    assert main(["report", str(b), "--ablation", "--out", str(out)]) == 0
    named = set(re.findall(r"gap_[A-Za-z0-9_]*\.png", (out / "README.md").read_text()))
    assert {p.name for p in out.glob("gap_*.png")} == named and "gap_vocabulary__d.png" not in named
    assert (out / "notes.png").read_bytes() == b"mine"
    assert not [p for p in out.iterdir() if ".stage-" in p.name]


def _ablation(*argv):
    """``leviathan report ... --ablation`` in a real process (S433 was a CLI run)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(src)}
    return subprocess.run([sys.executable, "-m", "leviathan", "report", *map(str, argv), "--ablation"], env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_rerun_keeps_a_users_figure_named_like_its_own(sweeps, tmp_path):
    """Round 22 (S433): ``report S --ablation --out abl`` rerun removed a user's ``gap_mine.png`` beside its own
    ``gap_*.png``: the marker marked the folder whole, so every ``gap_*`` match was taken for a stale figure of its
    own. The marker now lists the figures written; the user's file is refused by name (nothing written, exit 2), and
    once moved away the rerun writes again; a figure of its own it no longer draws still goes (B322)."""
    from leviathan.ownership import read_marker

    a, b = sweeps
    out = tmp_path / "abl"
    first = _ablation(a, b, "--out", out)
    assert first.returncode == 0, first.stderr
    own = sorted(p.name for p in out.glob("gap_*.png"))
    assert own and set(own) <= set(read_marker(out).files)
    (out / "gap_mine.png").write_bytes(b"mine")
    (out / "notes.md").write_text("x\n")
    again = _ablation(a, b, "--out", out)
    assert again.returncode == 2 and "would write over gap_mine.png" in again.stderr, again.stderr
    assert (out / "gap_mine.png").read_bytes() == b"mine" and sorted(p.name for p in out.glob("gap_*.png")) == \
        sorted(own + ["gap_mine.png"])
    (out / "gap_mine.png").rename(tmp_path / "gap_mine.png")
    assert _ablation(b, "--out", out).returncode == 0
    assert "gap_vocabulary__d.png" not in {p.name for p in out.glob("gap_*.png")}  # its own stale figure: removed
    assert (out / "notes.md").read_text() == "x\n"


def test_a_folder_marked_whole_by_an_earlier_version_keeps_a_users_figure(sweeps, tmp_path):
    """S433 for an ablation folder written before: its marker marks it whole, so which ``gap_*.png`` are its own is
    unknown; the user's is kept (not removed as stale), and the marker then lists what the rerun wrote."""
    from leviathan.ownership import read_marker, write_marker

    a, b = sweeps
    out = tmp_path / "abl"
    assert _ablation(a, b, "--out", out).returncode == 0
    write_marker(out, "report --ablation")  # as versions before round 22 left it
    (out / "gap_mine.png").write_bytes(b"mine")
    proc = _ablation(a, b, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert (out / "gap_mine.png").read_bytes() == b"mine"
    assert "gap_mine.png" not in read_marker(out).files and "README.md" in read_marker(out).files

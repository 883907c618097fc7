"""Report and analyze verbs on a synthetic sweep whose answers are known by construction."""

import json
import math
import re

import numpy as np
import pytest

from leviathan.ownership import write_marker

from leviathan.cli import main
from leviathan.experiments.report import analyze, comparison_table, write_report
from leviathan.experiments.machinery.results import append_result, json_safe, read_results

E, A, ALPHA = 2.0, 60.0, 0.3
HW = {"device": "cpu", "cpu": "test", "torch_threads": 2}


def law(n):
    return E + A * n ** -ALPHA


def curve(final_loss, total_tokens, speed=1.0):
    # L(t) = final + 3 * ((t*speed)^-0.5 - T^-0.5*...) shaped so L(total) = final for speed 1
    t = np.linspace(total_tokens / 10, total_tokens, 10)
    return t, final_loss + 2.0 * ((speed * t / total_tokens) ** -0.5 - 1.0)


def make_sweep(tmp_path, with_metrics=True):
    out = tmp_path / "sweep"
    (out / "runs").mkdir(parents=True)
    rows = []

    def row(name, regimes, variant, size, params, loss, buckets=None, tps=1000.0, speed=1.0, layers=4):
        run_dir = out / "runs" / name
        run_dir.mkdir()
        if with_metrics:
            t, L = curve(loss, 1e6, speed)
            with open(run_dir / "metrics.jsonl", "w") as f:
                for ti, li in zip(t, L):
                    f.write(json.dumps({"step": int(ti // 1000), "tokens": float(ti), "val_loss": float(li),
                                        "split": "val"}) + "\n")
        r = {"name": name, "regime": regimes[0], "regimes": regimes, "variant": variant, "size": size, "seed": 0,
             "num_hidden_layers": layers, "params": params, "tokens": 1e6, "tokens_per_s": tps, "hardware": HW,
             "final_val_loss": loss, "eval": {"val": {"loss": loss, "ppl": math.exp(loss)}},
             "buckets": {"val": buckets} if buckets else {}, "metrics": str(run_dir / "metrics.jsonl")}
        rows.append(r)

    def p(inp, body, head, tied=False):
        return {"input": inp, "body": body, "head": head, "total": inp + body + head, "tied": tied}

    bucket_meta = {"method": "mass", "min_count": [0, 10, 100], "max_count": [9, 99, 1000]}
    for size, n in (("xs", 1e6), ("s", 2e6), ("m", 4e6), ("l", 8e6)):
        regimes = ["scaling"] + (["isoparametric"] if size in ("s", "m") else [])
        row(f"{size}-dense_untied-s0", regimes, "dense_untied", size, p(int(n * 0.3), int(n * 0.4), int(n * 0.3)),
            law(n))
    for size, n in (("xs", 1e6), ("s", 2e6), ("m", 4e6)):
        dense_loss = law(n) + 0.05
        row(f"{size}-dense_tied-s0", ["iso_body"], "dense_tied", size, p(int(n * 0.3), int(n * 0.4), 0, True),
            dense_loss, {"loss": [6.0, 4.0, 2.0], "count": [10, 10, 10], "buckets": bucket_meta})
        row(f"{size}-leviathan-s0", ["iso_body"], "leviathan", size, p(10_000, int(n * 0.4), int(n * 0.3)),
            dense_loss - 0.1, {"loss": [5.0, 3.9, 2.0], "count": [10, 10, 10], "buckets": bucket_meta},
            tps=700.0, speed=2.0)
    # isoparametric leviathan with the loss of a dense model twice its size
    for size, n in (("s", 2e6), ("m", 4e6)):
        row(f"{size}-leviathan-L9-s0", ["isoparametric"], "leviathan", size, p(10_000, int(n * 0.7) - 10_000,
            int(n * 0.3)), law(2 * n), layers=9)
    for r in rows:
        append_result(out / "results.jsonl", r)
    return out


def test_analysis_numbers_match_the_construction(tmp_path):
    out = make_sweep(tmp_path)
    rows = read_results(out)
    a = analyze(rows, num_bootstrap=50)
    iso = a.comparisons["iso_body"]
    assert len(iso) == 3 and all(e.reduction == pytest.approx(1 - math.exp(-0.1)) for e in iso)
    sc = a.scaling
    assert sc.variant == "dense_untied" and sc.fit.alpha == pytest.approx(ALPHA, rel=1e-3)
    mult = {e.name: e.value for e in sc.equivalents}
    assert mult["s-leviathan-L9"].multiplier == pytest.approx(2.0, rel=1e-3)
    assert mult["m-leviathan-L9"].flag in ("ok", "extrapolated")
    freq = [f for f in a.frequency if f.regime == "iso_body"]
    assert len(freq) == 3
    assert freq[0].reduction[0] == pytest.approx(1 - math.exp(-1.0)) and freq[0].reduction[2] == 0.0
    eff = [e for e in a.efficiency if e.regime == "iso_body"]
    # the leviathan curve is the dense curve's shape at twice the speed, shifted 0.1 lower
    assert all(e.result.reached and e.result.factor > 2.0 for e in eff)
    tp = [t for t in a.throughput if t.regime == "iso_body" and t.variant == "leviathan"]
    assert all(t.slowdown == pytest.approx(0.3) for t in tp)
    assert comparison_table(rows, "isoparametric", "dense_untied")[0].reduction > 0


def test_write_report_makes_markdown_json_and_figures(tmp_path):
    out = make_sweep(tmp_path)
    md_path = write_report(out, tmp_path / "report", num_bootstrap=30)
    md = md_path.read_text()
    for section in ("Iso-body", "Isoparametric", "Scaling", "Parameter allocation", "frequency", "Sample efficiency",
                    "Throughput"):
        assert section in md
    assert "2.00x" in md  # the isoparametric multiplier
    assert "not identified" not in md  # an exact law over 8x of sizes
    for fig in ("loss_curves", "frontier", "reduction_by_size", "param_allocation", "frequency_reduction",
                "gain_over_training"):
        png = tmp_path / "report" / f"{fig}.png"
        assert png.is_file() and png.read_bytes()[:4] == b"\x89PNG", fig
        assert f"({fig}.png)" in md
    data = json.loads((tmp_path / "report" / "analysis.json").read_text())
    assert data["scaling"]["fit"]["alpha"] == pytest.approx(ALPHA, rel=1e-3)
    # analysis.json is the typed sections' JSON, in their order
    assert list(data) == ["num_runs", "eval_set", "eval_sets", "unigram_entropy", "comparisons", "paired", "scaling",
                          "frequency", "efficiency", "throughput", "params", "per_set"]
    assert data == json_safe(analyze(read_results(out), num_bootstrap=30))


def test_report_degrades_gracefully_without_metrics_or_ladder(tmp_path):
    out = make_sweep(tmp_path, with_metrics=False)
    rows = [r for r in read_results(out) if r.variant != "dense_untied"]
    (out / "results.jsonl").unlink()
    for r in rows:
        append_result(out / "results.jsonl", r)
    (tmp_path / "r2").mkdir()
    (tmp_path / "r2" / "frontier.png").write_bytes(b"an earlier report's figure")
    write_marker(tmp_path / "r2", "report", ["frontier.png"])  # which an earlier report wrote (leviathan.ownership)
    md = write_report(out, tmp_path / "r2", num_bootstrap=10).read_text()
    assert "No metrics.jsonl" in md
    data = json.loads((tmp_path / "r2" / "analysis.json").read_text())
    # no run in the scaling regime: no ladder to fit, so no Scaling section and no frontier figure
    assert data["scaling"] is None and "Scaling" not in md and not (tmp_path / "r2" / "frontier.png").exists()
    assert all(list(e)[-1] == "error" and "reached" not in e for e in data["efficiency"])  # no numbers, the reason


def test_report_says_why_a_ladder_could_not_be_fitted(tmp_path):
    out = make_sweep(tmp_path, with_metrics=False)
    rows = [r for r in read_results(out) if r.variant != "dense_untied" or r.size == "xs"]  # one ladder point
    (out / "results.jsonl").unlink()
    for r in rows:
        append_result(out / "results.jsonl", r)
    md = write_report(out, tmp_path / "r3", num_bootstrap=10).read_text()
    data = json.loads((tmp_path / "r3" / "analysis.json").read_text())
    assert list(data["scaling"]) == ["error"]
    assert "## Scaling" in md and "_Not computed: " in md


def pct(fraction: float) -> str:
    """A reduction as the CLI prints it (``+9.5%``), escaped for a regular expression."""
    return re.escape(f"{100 * fraction:+.1f}%")


def test_cli_analyze_and_report(tmp_path, capsys):
    out = make_sweep(tmp_path)
    assert main(["analyze", "scaling", str(out), "--bootstrap", "20"]) == 0
    text = capsys.readouterr().out
    assert "alpha = 0.3" in text and "s-leviathan-L9" in text
    assert main(["analyze", "scaling", str(out), "--bootstrap", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fit"]["alpha"] == pytest.approx(ALPHA, rel=1e-3)
    # compare: iso-body leviathan is 0.1 nats below dense_tied at every size; isoparametric leviathan has the
    # loss of a dense model twice its size
    assert main(["analyze", "compare", str(out)]) == 0
    text = capsys.readouterr().out
    iso, isoparam = text.split("isoparametric:")
    for size in ("xs", "s", "m"):
        assert re.search(rf"size {size} +seed 0 +leviathan +ppl +[\d.]+ +dense_tied ppl +[\d.]+ +reduction "
                         + pct(1 - math.exp(-0.1)), iso), size
    for size, n in (("s", 2e6), ("m", 4e6)):
        expected = pct(1 - math.exp(law(2 * n) - law(n)))
        assert re.search(rf"size {size} +seed 0 +leviathan +ppl +{math.exp(law(2 * n)):.3f} +dense_untied ppl +"
                         rf"{math.exp(law(n)):.3f} +reduction " + expected, isoparam), size
    # frequency: bucket losses 6/4/2 (dense) vs 5/3.9/2 (leviathan), rarest first
    assert main(["analyze", "frequency", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("leviathan vs dense_tied (mass buckets, rarest first)") == 3
    for bucket, (dense, lev) in enumerate(((6.0, 5.0), (4.0, 3.9), (2.0, 2.0))):
        line = rf"{bucket} +train count .* targets +10 +ppl +{math.exp(dense):.2f} -> +{math.exp(lev):.2f} +reduction "
        assert len(re.findall(line + pct(1 - math.exp(lev - dense)), text)) == 3, bucket
    # efficiency: the leviathan curve is the dense one at twice the speed, 0.1 lower: it reaches the dense
    # final loss L where 2 ((2 t / T)^-0.5 - 1) = 0.1, i.e. after T / (2 * 1.05^2) tokens (interpolated)
    assert main(["analyze", "efficiency", str(out)]) == 0
    found = re.findall(r"(\w+)-leviathan-s0 reaches \1-dense_tied-s0's final loss [\d.]+ after ([\d,]+) tokens "
                       r"vs 1,000,000: ([\d.]+)x fewer tokens", capsys.readouterr().out)
    assert sorted(size for size, _, _ in found) == ["m", "s", "xs"]
    for _, tokens, factor in found:
        assert float(factor) == pytest.approx(2 * 1.05 ** 2, rel=0.01)
        assert int(tokens.replace(",", "")) == pytest.approx(1e6 / float(factor), rel=0.01)
    # throughput: leviathan 700 vs dense 1,000 tokens/s at iso-body; equal at isoparametric
    assert main(["analyze", "throughput", str(out)]) == 0
    text = capsys.readouterr().out
    for size in ("xs", "s", "m"):
        assert re.search(rf"iso_body +{size} +s0 leviathan +700 tok/s +30% slower than dense_tied", text), size
        assert re.search(rf"iso_body +{size} +s0 dense_tied +1,000 tok/s\n", text), size
    for size in ("s", "m"):
        assert re.search(rf"isoparametric +{size} +s0 leviathan +1,000 tok/s +0% slower than dense_untied", text)
    assert len(re.findall(r"scaling +\w+ +s0 dense_untied +1,000 tok/s", text)) == 4
    assert main(["analyze", "efficiency", "--model", str(out / "runs/s-leviathan-s0"),
                 "--reference", str(out / "runs/s-dense_tied-s0")]) == 0
    single = re.search(r"s-leviathan-s0 reaches .*s-dense_tied-s0's final loss ([\d.]+) after [\d,]+ tokens vs "
                       r"1,000,000: ([\d.]+)x fewer tokens", capsys.readouterr().out)
    assert float(single[1]) == pytest.approx(law(2e6) + 0.05, abs=1e-4)  # the reference's final loss
    assert float(single[2]) == pytest.approx(2 * 1.05 ** 2, rel=0.01)
    assert main(["analyze", "fit", "--sizes", "1e6,2e6,4e6,8e6",
                 "--losses", ",".join(str(law(n)) for n in (1e6, 2e6, 4e6, 8e6)),
                 "--invert", f"{law(3e6)}:1.5e6,1.0:1e6", "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    assert "multiplier 2.00x" in text and "below_irreducible" in text
    assert main(["analyze", "scaling", str(tmp_path / "nothing")]) == 2
    assert f"results '{tmp_path / 'nothing'}' does not exist" in capsys.readouterr().err  # round 14 (B310)
    assert main(["report", str(out), "--bootstrap", "10"]) == 0
    report = (out / "report" / "report.md").read_text()
    assert "Iso-body" in report and "2.00x" in report  # the isoparametric multiplier of the construction


def test_report_says_when_the_power_law_is_not_identified(tmp_path):
    out = make_sweep(tmp_path)
    rows = read_results(out)
    (out / "results.jsonl").unlink()
    flat = {"xs": 5.62, "s": 5.55, "m": 5.60, "l": 5.53}  # 8x of sizes, losses that do not bend, CPU-ladder noise
    for row in rows:
        r = row.to_dict()
        if r["variant"] == "dense_untied":
            r["final_val_loss"] = r["eval"]["val"]["loss"] = flat[r["size"]]
            r["eval"]["val"]["ppl"] = math.exp(flat[r["size"]])  # a consistent row: ppl = exp(loss)
        append_result(out / "results.jsonl", r)
    md = write_report(out, tmp_path / "r3", num_bootstrap=100).read_text()
    assert "**The power law is not identified**: alpha's 95% interval" in md
    data = json.loads((tmp_path / "r3" / "analysis.json").read_text())
    assert data["scaling"]["fit"]["unidentified"]

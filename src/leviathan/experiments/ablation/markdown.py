"""The ablation report's README.md: final numbers, frequency buckets, plateaus and the gap figures, as Markdown."""

from __future__ import annotations

from .analysis import AblationResult, ArmSummary

EVAL_COLUMNS = ("val", "wikitext2", "ptb")  # the eval sets whose perplexity change the table shows


def _fmt(v, spec="+.3f"):
    return "–" if v is None else format(v, spec)


def _row(s: ArmSummary) -> str:
    """One arm's line of the final-numbers table."""
    shape = ", ".join(str(v) for v in s.shape) if s.shape else "–"
    change = s.overrides + (["softmax over the data's ids*"] if s.softmax == "corpus" else [])
    ppl = [_fmt(s.eval[k].ppl_change if k in s.eval else None, "+.1%") for k in EVAL_COLUMNS]
    bpb = _fmt(s.eval["val"].bpb_gap if "val" in s.eval else None, "+.4f")
    vocab = f"{s.vocab:,}" if s.vocab else "–"
    return (f"| {s.label} | {vocab} | {s.width} x {s.layers} | {shape} | "
            f"{', '.join(change) or '–'} | {(s.tokens or 0) / 1e6:.1f}M | "
            f"{_fmt(s.gap_at[0.25])} | {_fmt(s.gap_at[0.5])} | {_fmt(s.gap_at[0.75])} | {_fmt(s.gap_at[1.0])} | "
            + " | ".join(ppl) + f" | {bpb} | {_fmt(s.input_to_head_grad, '.2f')} |")


def markdown(result: AblationResult, figures: dict[str, str], command: str, findings: str | None = None) -> str:
    """README.md of an ablation report; ``findings``: the hand-written paragraphs (findings.md) it opens with."""
    arms = result.arms
    md = ["# Ablations: leviathan vs dense-tied, one factor at a time", "",
          f"Produced by `{command}` from the sweeps' `results.jsonl`. Each leviathan run is paired with the "
          "dense_tied run of the same grid (vocabulary), width, depth and seed: same tokens, same order. "
          "Gap = the arm's (leviathan's, unless the arm names another variant) minus dense_tied's validation loss "
          "in nats (negative: the arm is better). One seed per arm: "
          "directions, not intervals (the seeded grid gives those).", ""]
    if findings:
        md += ["## Findings", "", "_Written by hand in `findings.md` beside this file, from the numbers below._", "",
               findings.strip(), ""]
    md += ["## Final numbers", "",
           "| arm | V | D x L | generator (d_s, M, kappa, r) | change | tokens | gap @25% | @50% | @75% | end | "
           "ppl change (val) | wikitext2 | ptb | bpb gap (val) | grad norm input / head |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    md += [_row(s) for s in arms]
    if any(s.softmax == "corpus" for s in arms):
        md += ["", "\\* Both runs of the pair score only the ids that occur in their prepared data (`data.softmax: "
               "corpus`, the same set for both; inputs keep the tokenizer's ids): their losses are cross-entropies "
               "over that subset, so the gap compares within the pair, not the absolute loss across grids; "
               "out-of-domain sets are not scored."]
    # as many columns as the rows hold (eval.buckets): a hard-coded 5 headed rows of 3 (round 14, B248)
    count = max((len(s.buckets) for s in arms if s.buckets), default=5)
    md += ["", "## Perplexity reduction by training-frequency bucket (val; equal-mass buckets, rare -> frequent)", "",
           "| arm | " + " | ".join(f"bucket {i + 1}" for i in range(count)) + " |", "|---|" + "---|" * count]
    for s in arms:
        if s.buckets:
            md.append(f"| {s.label} | " + " | ".join(_fmt(b, "+.1%") for b in s.buckets) + " |")
    md += ["", "Positive = leviathan's perplexity is lower in that bucket.", ""]
    if result.left_out:  # round 14 (B358): a run without a pair was left out without a word
        md += ["## Runs left out", ""] + [f"- {line}" for line in result.left_out] + [""]
    plateaus = {s.grid: s.plateau for s in arms if s.plateau}
    if plateaus:
        md += ["## The unigram plateau", "", "| grid | unigram entropy of the training tokens (nats) |", "|---|---|"]
        md += [f"| {g} | {p:.3f} |" for g, p in plateaus.items()] + [""]
    md += ["## Gap over training", ""]
    for factor, fig in figures.items():
        md += [f"### {factor}", "", f"![{factor}]({fig})", ""]
    return "\n".join(md)

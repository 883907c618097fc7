"""``leviathan bench --only modes``: what a training step of the experiment configurations costs, per mode.

For each configuration and each of dense_tied and leviathan, three ways to run the same step
(forward + backward + AdamW on the same batches):

- ``plain``: eager, full (tokens x V) logits and ``F.cross_entropy`` (the path before chunking);
- ``chunked``: eager, the head scored over chunks of positions (``leviathan.model.loss``), what
  ``leviathan train`` does by default;
- ``compiled``: ``chunked`` with the model under ``torch.compile`` (the loss stays eager).

All six steps are built in one process and alternated step by step (``bench.alternate``); ratios of
medians are the numbers to read. The compile time is the first compiled call minus a typical step.
Peak resident memory cannot be separated inside one process, so each (variant, mode) also runs a few
steps in a fresh subprocess that reports its ``ru_maxrss`` (``--rss``): the memory a training process
of that mode needs, model and optimizer state included.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Callable

import torch

MODES = ("plain", "chunked", "compiled")
VARIANTS = ("dense_tied", "leviathan")


class ModeStep:
    """Callable: one training step of ``model`` in ``mode`` on the next batch (cycling)."""

    def __init__(self, model, batches, mode: str):
        from .bench import build_optimizer

        self.model, self.batches, self.mode = model, batches, mode
        self.forward = torch.compile(model) if mode == "compiled" else model
        self.optimizer = build_optimizer(model)
        self.i = 0
        self.last_loss = float("nan")

    def __call__(self) -> None:
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        _, loss = self.forward(x, labels=y, return_logits=self.mode == "plain")
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.last_loss = float(loss.detach())


def bench_modes(bc, batches, repeats: int, warmup: int = 1, rss: bool = True,
                log: Callable[[str], None] = print) -> dict:
    """Tokens/s of every (variant, mode) side by side, compile time, and (``rss``) peak memory per process."""
    from .bench import _free, _stats, alternate, build_model, median

    steps, compile_s = {}, {}
    for v in VARIANTS:
        for mode in MODES:
            step = ModeStep(build_model(bc.model(v)), batches, mode)
            t0 = time.perf_counter()
            step()  # the first call compiles (compiled mode); for the others it is a warm-up step
            compile_s[(v, mode)] = time.perf_counter() - t0
            steps[f"{v}/{mode}"] = step
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = batches[0][0].numel()
    rows = {name: {**_stats(t, cpu[name]), "tokens_per_s": tokens / median(t), "final_loss": steps[name].last_loss}
            for name, t in times.items()}
    for v in VARIANTS:
        first, typical = compile_s[(v, "compiled")], rows[f"{v}/compiled"]["median_s"]
        rows[f"{v}/compiled"]["compile_s"] = max(0.0, first - typical)
    out = {"config": bc.name, "description": bc.description, "batch_size": bc.batch_size, "seq_len": bc.seq_len,
           "tokens_per_batch": tokens, "repeats": repeats, "warmup": warmup, "steps": rows,
           "ratios": _ratios(rows)}
    del steps
    _free()
    if rss:
        out["peak_rss_mb"] = {}
        for v in VARIANTS:
            for mode in MODES:
                log(f"[modes] {bc.name}: peak memory of {v}/{mode} in a fresh process ...")
                out["peak_rss_mb"][f"{v}/{mode}"] = peak_rss_mb(bc.name, v, mode, batches)
    return out


def _ratios(rows: dict) -> dict:
    def speed(name):
        return rows[name]["tokens_per_s"]

    out = {}
    for v in VARIANTS:
        out[f"{v} chunked / plain"] = speed(f"{v}/chunked") / speed(f"{v}/plain")
        out[f"{v} compiled / chunked"] = speed(f"{v}/compiled") / speed(f"{v}/chunked")
    for mode in MODES:  # step time, as the other training ratios of the benchmark
        out[f"leviathan / dense_tied step, {mode}"] = rows[f"leviathan/{mode}"]["median_s"] / \
            rows[f"dense_tied/{mode}"]["median_s"]
    return out


def peak_rss_mb(config: str, variant: str, mode: str, batches, steps: int = 3) -> float | None:
    """Peak resident MB of a fresh process that builds the model and runs ``steps`` training steps."""
    x, y = batches[0]
    payload = json.dumps({"config": config, "variant": variant, "mode": mode, "steps": steps,
                          "x": x.tolist(), "y": y.tolist(), "threads": torch.get_num_threads()})
    proc = subprocess.run([sys.executable, "-m", "leviathan.bench_modes", "--rss"], input=payload, text=True,
                          capture_output=True, timeout=1800)
    if proc.returncode != 0:
        return None
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["peak_rss_mb"])


def _rss_child() -> None:
    """Entry of ``peak_rss_mb``'s subprocess: build, train ``steps`` steps, print the peak RSS."""
    from .bench import CONFIGS, build_model

    req = json.loads(sys.stdin.read())
    torch.set_num_threads(req["threads"])
    x, y = torch.tensor(req["x"]), torch.tensor(req["y"])
    step = ModeStep(build_model(CONFIGS[req["config"]].model(req["variant"])), [(x, y)], req["mode"])
    for _ in range(req["steps"]):
        step()
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def format_modes(section: dict) -> list[str]:
    """Report lines for the modes section (one table per configuration)."""
    from .bench import _ms, _table

    out = ["\nTraining step by mode (plain logits / chunked head / chunked + torch.compile), alternating, median"]
    for name, r in section.items():
        rows = []
        for key, m in r["steps"].items():
            v, mode = key.split("/")
            rss = (r.get("peak_rss_mb") or {}).get(key)
            rows.append([v, mode, _ms(m["median_s"]), f"{m['tokens_per_s']:,.0f}",
                         f"{m.get('compile_s', 0):.0f}" if mode == "compiled" else "",
                         f"{rss:,.0f}" if rss else ""])
        out.append(f"  {name}: {r['description']}; {r['batch_size']}x{r['seq_len']} tokens, {r['repeats']} repeats")
        out.append(_table(["model", "mode", "median ms", "tokens/s", "compile s", "peak RSS MB"], rows))
        out.append("  " + "; ".join(f"{k} {v:.2f}" for k, v in r["ratios"].items()))
        rss = r.get("peak_rss_mb") or {}
        for v in VARIANTS:
            if rss.get(f"{v}/plain") and rss.get(f"{v}/chunked"):
                out.append(f"  {v}: peak memory chunked / plain {rss[f'{v}/chunked'] / rss[f'{v}/plain']:.2f}")
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--rss"]:
        _rss_child()
    else:
        raise SystemExit("usage: python -m leviathan.bench_modes --rss  (reads a JSON request on stdin)")

"""GPU readiness check: the Python half of ``scripts/gpu_check.sh`` (see docs/benchmarks.md, "GPU check").

Stages (each a subcommand; ``gpu_check.sh`` runs them under their own timeouts, ``all`` runs them in turn):

- ``env``: python, torch, CUDA, the GPU, and which of the package's dependencies import.
- ``bench``: training step (forward + backward + the training loop's AdamW, under bf16 autocast by
  default) of leviathan vs dense_tied at the ``paper-109m`` preset (o200k V=200,019, width 512,
  6 layers, generator at paper defaults), sequence 512, random token ids; both models live in one
  process, are warmed up, then alternated (a b, b a, ...) and each step is timed between
  device synchronisations; medians and the ratio of medians, eagerly and under ``torch.compile``.
  Uniform ids are the generator's worst case (almost every id distinct); Zipf-distributed ids
  (closer to text) are measured too, eagerly. Results are written after every measurement, so a
  stage killed by its timeout still reports what it finished.
- ``fsdp``: (1) ``torchrun --nproc_per_node=N -m leviathan train --config tiny parallel=fsdp
  device=DEV`` (``configs/tiny.yaml`` where that file still exists) on a small generated corpus
  prepared with ``leviathan prepare`` (BPE 512), checks the run finishes with finite losses on N ranks,
  then resumes it (``--resume auto``) to more steps; N is 2 where ``--device cuda`` sees 2 or more GPUs
  (parameters really sharded, validation included), else 1; (2) FSDP2 itself at world size 1, in this process:
  ``fully_shard`` (the loop's ``apply_fsdp``) on cpu-tiny dense_tied and leviathan models, steps
  compared with an unsharded twin, the full state dict gathered (as checkpoints do) and loaded back
  into a fresh sharded model. Part (2) exists because the training loop shards only when
  WORLD_SIZE > 1, so a one-process torchrun run is an ordinary run.
- ``report``: a markdown table of every stage's status plus the measured numbers, from the files
  the stages left in the work folder (``*.status``, ``env.json``, ``bench.json``, ``fsdp.json``,
  ``pytest.xml``); printed, and written to ``$OUT/gpu_check.md`` when ``OUT`` is set.

CPU rehearsal (no GPU needed; the default test suite runs the quick bench and the report):
    python scripts/gpu_check.py all --device cpu --quick --no-compile --dtype fp32 --work /tmp/gc
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from xml.etree import ElementTree

REPO = Path(__file__).resolve().parents[1]
STAGES = ("setup", "gpu-tests", "fsdp", "bench")
STAGE_TITLES = {"setup": "setup (python, torch, install)", "gpu-tests": "GPU tests (pytest -m gpu tests/gpu)",
                "fsdp": "FSDP2 smoke (torchrun, 2 ranks on 2+ GPUs, + resume; fully_shard in process)",
                "bench": "training step time, leviathan / dense_tied (eager, compiled)"}


def _now() -> float:
    return time.perf_counter()


def _write_json(path: str | os.PathLike | None, obj: dict) -> None:
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str))
    os.replace(tmp, path)


def _short_error(e: BaseException, limit: int = 300) -> str:
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= limit else text[:limit] + "..."


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


# ---------------------------------------------------------------------------------------------
# env


def env_info(device: str) -> dict:
    import importlib

    import torch

    info = {"python": sys.version.split()[0], "executable": sys.executable, "torch": torch.__version__,
            "torch_cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
            "requested_device": device, "cpu_count": os.cpu_count()}
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_count"] = torch.cuda.device_count()
        info["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
        info["bf16_supported"] = torch.cuda.is_bf16_supported()
        info["nccl"] = torch.distributed.is_available() and torch.distributed.is_nccl_available()
    try:
        import leviathan

        info["leviathan"] = str(Path(leviathan.__file__).resolve().parent)
    except Exception as e:  # noqa: BLE001 - reported, not raised
        info["leviathan"] = f"not importable: {_short_error(e)}"
    modules = {"numpy": "numpy", "safetensors": "safetensors", "yaml": "pyyaml", "tqdm": "tqdm",
               "tokenizers": "tokenizers", "transformers": "transformers", "pytest": "pytest",
               "quicktok": "quicktok-v1", "datasets": "datasets", "zstandard": "zstandard", "pyarrow": "pyarrow",
               "tensorboard": "tensorboard", "scipy": "scipy", "matplotlib": "matplotlib"}
    missing = []
    for module, dist in modules.items():
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001
            missing.append(dist)
    info["missing_packages"] = missing
    return info


def cmd_env(args) -> int:
    info = env_info(args.device)
    for k, v in info.items():
        print(f"{k}: {v}")
    _write_json(args.json, info)
    if args.device.startswith("cuda") and not info["cuda_available"]:
        print("error: device cuda requested but torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    return 0 if not str(info["leviathan"]).startswith("not importable") else 1


# ---------------------------------------------------------------------------------------------
# bench: training step, leviathan vs dense_tied


class Step:
    """One training step (forward + loss + backward + AdamW) of ``model`` on the next of ``batches``."""

    def __init__(self, model, batches, device, amp_dtype, compiled: bool):
        import torch

        from leviathan.train.config import OptimConfig
        from leviathan.train.optim import build_optimizer

        self.model = model
        self.fn = torch.compile(model) if compiled else model
        self.batches, self.device, self.amp_dtype = batches, device, amp_dtype
        self.optimizer = build_optimizer(model, OptimConfig(), device.type)
        self.i = 0
        self.last_loss = float("nan")

    def __call__(self) -> None:
        import torch

        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        if self.amp_dtype is not None:
            with torch.autocast(self.device.type, dtype=self.amp_dtype):
                _, loss = self.fn(x, labels=y)
        else:
            _, loss = self.fn(x, labels=y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.last_loss = loss.detach()


def _device(spec: str):
    """``torch.device`` with an explicit index for CUDA (``set_device`` and ``device_id`` reject a bare "cuda")."""
    import torch

    device = torch.device(spec)
    if device.type == "cuda":
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(device)
    return device


class ModelStepError(RuntimeError):
    """One or both models' training step failed (each error is in the model's own entry)."""


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def alternate_timed(steps: dict, device, repeats: int, warmup: int) -> dict[str, list[float]]:
    """Seconds per call of each step, alternating models (a b, then b a, ...) after ``warmup`` untimed calls
    each; every call is timed between device synchronisations."""
    names = list(steps)
    for _ in range(warmup):
        for name in names:
            steps[name]()
    _sync(device)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            _sync(device)
            t0 = _now()
            steps[name]()
            _sync(device)
            times[name].append(_now() - t0)
    return times


def make_batches(kind: str, vocab: int, batch: int, seq: int, count: int, device, seed: int = 0):
    """``count`` (x, y) int64 batches of random ids: ``uniform`` over the vocabulary (nearly every id distinct:
    the generator's worst case) or ``zipf`` (rank-frequency 1/(rank + 2.7), ranks shuffled over the ids: a
    text-like number of distinct ids)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    out = []
    if kind == "zipf":
        ranks = torch.arange(vocab, dtype=torch.float64)
        probs = 1.0 / (ranks + 2.7)
        perm = torch.randperm(vocab, generator=g)
    for _ in range(count):
        if kind == "uniform":
            block = torch.randint(0, vocab, (batch, seq + 1), generator=g)
        elif kind == "zipf":
            block = perm[torch.multinomial(probs, batch * (seq + 1), replacement=True, generator=g)]
            block = block.view(batch, seq + 1)
        else:
            raise ValueError(f"unknown ids kind {kind!r}")
        out.append((block[:, :-1].contiguous().to(device), block[:, 1:].contiguous().to(device)))
    return out


def bench_sizes(args) -> dict:
    """Preset, vocabulary override, batch, sequence, repeats, warmup for this run."""
    if args.quick:
        return dict(preset="cpu-tiny", overrides={"vocab_size": 512, "max_position_embeddings": 64},
                    batch=args.batch or 2, seq=args.seq or 32, repeats=args.repeats or 3, warmup=args.warmup or 1)
    return dict(preset=args.preset, overrides={}, batch=args.batch or 16, seq=args.seq or 512,
                repeats=args.repeats or 10, warmup=args.warmup or 3)


def _peak_gib(step, device) -> float | None:
    import torch

    if device.type != "cuda":
        return None
    _sync(device)
    torch.cuda.reset_peak_memory_stats(device)
    step()
    _sync(device)
    return round(torch.cuda.max_memory_allocated(device) / 2**30, 2)


def cmd_bench(args) -> int:
    import torch

    from leviathan.model.accounting import count_model
    from leviathan.model.llama import CausalLM
    from leviathan.presets import preset

    t_start = _now()
    budget = args.budget_s or float("inf")
    device = _device(args.device)
    amp_dtype = {"bf16": torch.bfloat16, "fp32": None}[args.dtype]
    if args.threads:
        torch.set_num_threads(args.threads)
    sz = bench_sizes(args)
    out = {"device": str(device), "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
           "torch": torch.__version__, "dtype": args.dtype, "preset": sz["preset"], "overrides": sz["overrides"],
           "batch": sz["batch"], "seq": sz["seq"], "tokens_per_step": sz["batch"] * sz["seq"],
           "repeats": sz["repeats"], "warmup": sz["warmup"], "runs": [], "params": {}}
    print(f"bench: {sz['preset']} {sz['overrides'] or ''} batch {sz['batch']} x seq {sz['seq']}, {args.dtype}, "
          f"{device}, {sz['repeats']} repeats after {sz['warmup']} warm-up steps", flush=True)

    models = {}
    for variant in ("dense_tied", "leviathan"):
        cfg = preset(sz["preset"], embedding=variant, **sz["overrides"])
        torch.manual_seed(0)
        models[variant] = CausalLM(cfg).to(device).train()
        out["params"][variant] = count_model(models[variant]).as_dict()
    vocab = models["leviathan"].config.vocab_size

    plan = [("eager", "uniform"), ("eager", "zipf")]
    if not args.no_compile:
        plan.append(("compile", "uniform"))
    failures = 0
    for mode, ids in plan:
        row = {"mode": mode, "ids": ids}
        out["runs"].append(row)
        left = budget - (_now() - t_start)
        need = 20.0 if mode == "eager" else 90.0
        if left < need:
            row["status"] = f"skipped: {left:.0f} s of the stage budget left (needs ~{need:.0f})"
            _write_json(args.json, out)
            print(f"  {mode}/{ids}: {row['status']}", flush=True)
            continue
        row["status"] = "started, not finished (killed by the stage timeout?)"
        _write_json(args.json, out)
        try:
            compiled = mode == "compile"
            # compiled: 2 batches with different distinct-id counts, so the graphs recompile once with a dynamic
            # id count (as in training) inside the warm-up, instead of once per batch
            nb = 2 if compiled else 4
            batches = make_batches(ids, vocab, sz["batch"], sz["seq"], nb, device)
            row["distinct_ids"] = [int(x.unique().numel()) for x, _ in batches]
            steps = {v: Step(m, batches, device, amp_dtype, compiled) for v, m in models.items()}
            row["first_step_s"] = {}  # includes the compilation when compiled
            for v in list(steps):  # a model whose step fails is reported and the other still timed
                try:
                    t1 = _now()
                    steps[v]()
                    _sync(device)
                    row["first_step_s"][v] = round(_now() - t1, 2)
                except Exception as e:  # noqa: BLE001
                    row[v] = {"error": _short_error(e)}
                    print(f"  {mode}/{ids}: {v} step failed: {row[v]['error']}", flush=True)
                    traceback.print_exc()
                    del steps[v]
            warmup = max(0, sz["warmup"] - 1) + (nb + 1 if compiled else 0)
            t0 = _now()
            times = alternate_timed(steps, device, sz["repeats"], warmup) if steps else {}
            row["wall_s"] = round(_now() - t0, 1)
            for v, t in times.items():
                loss = float(steps[v].last_loss)
                row[v] = {"median_ms": statistics.median(t) * 1e3, "min_ms": min(t) * 1e3, "max_ms": max(t) * 1e3,
                          "tokens_per_s": out["tokens_per_step"] / statistics.median(t), "last_loss": loss,
                          "peak_gib": _peak_gib(steps[v], device)}
                if not math.isfinite(loss):
                    row[v]["error"] = f"loss is {loss}"
            bad = [f"{v}: {row[v]['error']}" for v in models if "error" in row[v]]
            if bad:
                raise ModelStepError("; ".join(bad))
            row["ratio"] = row["leviathan"]["median_ms"] / row["dense_tied"]["median_ms"]
            row["status"] = "ok"
            print(f"  {mode}/{ids}: dense_tied {row['dense_tied']['median_ms']:.2f} ms, leviathan "
                  f"{row['leviathan']['median_ms']:.2f} ms, ratio {row['ratio']:.3f} "
                  f"(distinct ids {row['distinct_ids']}, first steps {row['first_step_s']} s, timed part "
                  f"{row['wall_s']} s)", flush=True)
        except Exception as e:  # noqa: BLE001 - one failing measurement must not stop the others
            failures += 1
            row["status"] = f"error: {_short_error(e)}"
            print(f"  {mode}/{ids}: {row['status']}", flush=True)
            if not isinstance(e, ModelStepError):  # those tracebacks were printed per model
                traceback.print_exc()
        finally:
            steps = batches = None  # free this measurement's optimizer state and batches
            if device.type == "cuda":
                torch.cuda.empty_cache()
        _write_json(args.json, out)
    eager = next((r for r in out["runs"] if r["mode"] == "eager" and r["ids"] == "uniform" and "ratio" in r), None)
    comp = next((r for r in out["runs"] if r["mode"] == "compile" and "ratio" in r), None)
    if eager and comp:
        out["compile_speedup"] = {v: eager[v]["median_ms"] / comp[v]["median_ms"] for v in models}
    out["wall_s"] = round(_now() - t_start, 1)
    _write_json(args.json, out)
    print(bench_table(out))
    return 1 if failures else 0


def bench_table(b: dict) -> str:
    kind = f"{b.get('dtype')}{' autocast' if b.get('dtype') == 'bf16' else ''}"
    lines = [f"training step ({kind}): {b.get('preset')} {b.get('overrides') or ''}, batch {b.get('batch')} x seq "
             f"{b.get('seq')} ({b.get('tokens_per_step')} tokens), {b.get('device')}"
             f"{' (' + b['gpu'] + ')' if b.get('gpu') else ''}, median of {b.get('repeats')} alternated repeats "
             f"after {b.get('warmup')} warm-up steps", "",
             "| mode | ids | distinct ids / batch | dense_tied ms | leviathan ms | leviathan / dense_tied "
             "| dense_tied tok/s | leviathan tok/s | peak GiB (dense / lev) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in b.get("runs", []):
        cells = []
        for v in ("dense_tied", "leviathan"):
            m = r.get(v) or {}
            cells.append(f"{m['median_ms']:.2f}" if "median_ms" in m else _clip(m.get("error", ""), 120))
        if "ratio" in r:
            d, lv = r["dense_tied"], r["leviathan"]
            peak = f"{d['peak_gib']} / {lv['peak_gib']}" if d.get("peak_gib") is not None else "n/a"
            ratio, tps = f"**{r['ratio']:.3f}**", [f"{d['tokens_per_s']:,.0f}", f"{lv['tokens_per_s']:,.0f}"]
        else:
            status = r.get("status", "?")
            ratio = "error (see the model columns)" if status.startswith("error") and any(
                "error" in (r.get(v) or {}) for v in ("dense_tied", "leviathan")) else _clip(status, 160)
            peak, tps = "", [f"{(r.get(v) or {}).get('tokens_per_s', 0):,.0f}" if "tokens_per_s" in (r.get(v) or {})
                             else "" for v in ("dense_tied", "leviathan")]
        lines.append(f"| {r['mode']} | {r['ids']} | {_fmt_ids(r.get('distinct_ids'))} | {cells[0]} | {cells[1]} | "
                     f"{ratio} | {tps[0]} | {tps[1]} | {peak} |")
    comp = [r for r in b.get("runs", []) if r.get("mode") == "compile" and r.get("first_step_s")]
    if comp:
        lines += ["", "first compiled step (compilation included): " + ", ".join(
            f"{v} {t:.1f} s" for v, t in comp[0]["first_step_s"].items())]
    if b.get("compile_speedup"):
        s = b["compile_speedup"]
        lines += ["", f"torch.compile speedup (eager / compiled, uniform ids): dense_tied {s['dense_tied']:.2f}x, "
                      f"leviathan {s['leviathan']:.2f}x"]
    return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    text = str(text).replace("|", "/").replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."


def _fmt_ids(ids) -> str:
    if not ids:
        return ""
    return f"{min(ids)}-{max(ids)}" if min(ids) != max(ids) else str(ids[0])


# ---------------------------------------------------------------------------------------------
# fsdp: torchrun world size 1 + resume, and fully_shard in process

WORDS = ("the a model token embedding generator spline layer loss train data step value code python function "
         "return def class import self seed mode rank knot basis product sum head body input output shard "
         "gradient batch device kernel memory").split()


def write_corpus(root: Path, seed: int = 0) -> tuple[Path, Path]:
    """Deterministic pseudo-text: ``train/`` (120 docs) and ``val/`` (12 docs), ~25 lines each."""
    import random

    rng = random.Random(seed)
    dirs = []
    for split, docs in (("train", 120), ("val", 12)):
        d = root / split
        d.mkdir(parents=True, exist_ok=True)
        for i in range(docs):
            lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12))) + "." for _ in range(25)]
            (d / f"doc{i:03d}.txt").write_text("\n".join(lines) + "\n")
        dirs.append(d)
    return dirs[0], dirs[1]


def _run(cmd: list[str], log: Path, timeout: float, env: dict | None = None) -> tuple[int, str, float]:
    """Run ``cmd`` in its own process group, appending its output to ``log``; (returncode, output, seconds).
    On timeout the whole group (torchrun and its workers) is killed and the return code is 124."""
    import signal

    t0 = _now()
    with open(log, "a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO,
                            start_new_session=True)
    try:
        text, _ = proc.communicate(timeout=max(timeout, 1))
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue
        text = (proc.communicate()[0] or "") + f"\n[timed out after {timeout:.0f} s]"
        rc = 124
    with open(log, "a") as f:
        f.write(text)
    print(text[-2500:], flush=True)
    return rc, text, _now() - t0


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def torchrun_smoke(args, work: Path, deadline: float) -> dict:
    """Prepare a tiny dataset, torchrun one process with parallel=fsdp, check it, resume it to more steps."""
    res: dict = {"status": "running"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "PYTHONUNBUFFERED": "1"}
    env.pop("WORLD_SIZE", None), env.pop("RANK", None), env.pop("LOCAL_RANK", None)
    log = work / "fsdp-torchrun.log"
    data = work / "fsdp-data"
    run_dir = work / "fsdp-run"
    shutil.rmtree(run_dir, ignore_errors=True)
    py = sys.executable
    if not (data / "meta.json").is_file():
        train_dir, val_dir = write_corpus(work / "fsdp-corpus")
        rc, text, secs = _run([py, "-m", "leviathan", "prepare", str(train_dir), "--val-source", str(val_dir),
                               "--out", str(data), "--tokenizer", "bpe:512", "--no-progress"],
                              log, deadline - _now(), env)
        res["prepare"] = {"rc": rc, "s": round(secs, 1), "line": text.strip().splitlines()[-1] if text.strip() else ""}
        if rc != 0:
            res["status"] = f"prepare failed (rc {rc})"
            return res
    steps1, steps2 = (4, 6) if args.quick else (20, 30)
    config = REPO / "configs" / "tiny.yaml"  # moved into the package (``--config tiny``) in later commits
    common = ["--config", str(config) if config.is_file() else "tiny", "parallel=fsdp", f"device={args.device}",
              f"data.path={data}", "data.seq_len=64", "micro_batch_size=8", "batch_tokens=1024",
              "log_interval=1" if args.quick else "log_interval=5", f"eval_interval={steps1 // 2}",
              "eval_tokens=2048", f"checkpoint_interval={steps1 // 2}", "schedule.warmup_steps=2", "keep_last=2",
              "dtype=float32" if args.dtype == "fp32" else "dtype=auto"]  # auto: bf16 autocast on CUDA
    nproc = fsdp_world_size(args.device)
    res["nproc"] = nproc
    launcher = [py, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", "-m", "leviathan",
                "train"]
    for phase, steps, extra in (("first", steps1, []), ("resume", steps2, ["--resume", "auto"])):
        left = deadline - _now()
        if left < 10:
            res["status"] = f"{phase} run skipped: {left:.0f} s left"
            return res
        rc, text, secs = _run(launcher + common + [f"max_steps={steps}", "--run-dir", str(run_dir)] + extra,
                              log, left, env)
        summary_path = run_dir / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
        versions = json.loads((run_dir / "versions.json").read_text()) if (run_dir / "versions.json").is_file() else {}
        rows = [r for r in _read_jsonl(run_dir / "metrics.jsonl") if "train_loss" in r]
        info = {"rc": rc, "s": round(secs, 1), "steps": summary.get("steps"),
                "final_val_loss": summary.get("final_val_loss"),
                "last_train_loss": rows[-1]["train_loss"] if rows else None,
                "first_train_loss": rows[0]["train_loss"] if rows else None,
                "world_size": versions.get("world_size"), "device": versions.get("device"),
                "resumed": "resumed from" in text}
        res[phase] = info
        problems = []
        if rc != 0:
            problems.append(f"rc {rc}")
        if summary.get("steps") != steps:
            problems.append(f"steps {summary.get('steps')} != {steps}")
        if rc == 0 and info["world_size"] != nproc:
            problems.append(f"world size {info['world_size']} != {nproc}")
        if not (_finite(info["final_val_loss"]) and _finite(info["last_train_loss"])):
            problems.append("loss not finite / missing")
        if phase == "resume" and not info["resumed"]:
            problems.append("no 'resumed from' line")
        if problems:
            errors = [ln.strip() for ln in text.splitlines()
                      if re.match(r"\s*(error: |[\w.]*(Error|Exception): )", ln) and "ChildFailedError" not in ln]
            info["error"] = _clip(errors[-1], 300) if errors else None
            res["status"] = (f"{phase} run: " + ", ".join(problems) + (f"; {info['error']}" if info["error"] else "")
                             + " (log: fsdp-torchrun.log)")
            return res
    res["status"] = "ok"
    return res


def fsdp_world_size(device: str) -> int:
    """Ranks of the torchrun smoke: 2 where ``device`` is the bare ``cuda`` and 2 GPUs exist, else 1."""
    if device != "cuda":
        return 1
    import torch

    return 2 if torch.cuda.is_available() and torch.cuda.device_count() >= 2 else 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fully_shard_variant(variant: str, device, amp, res: dict) -> None:
    """Sharded (``apply_fsdp``) vs unsharded twin for 3 steps, then gather the full state dict and reload it."""
    import torch
    from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                         get_optimizer_state_dict, set_model_state_dict)

    from leviathan.model.llama import CausalLM
    from leviathan.presets import preset
    from leviathan.train import distributed as D
    from leviathan.train.config import OptimConfig
    from leviathan.train.optim import build_optimizer

    cfg = preset("cpu-tiny", embedding=variant, vocab_size=512, max_position_embeddings=64)

    def build():
        torch.manual_seed(0)
        return CausalLM(cfg).to(device).train()

    sharded, plain = D.apply_fsdp(build()), build()
    res["dtensor_params"] = all(type(p).__name__ == "DTensor" for p in sharded.parameters())
    opts = {"s": build_optimizer(sharded, OptimConfig(), device.type),
            "p": build_optimizer(plain, OptimConfig(), device.type)}
    batches = make_batches("uniform", cfg.vocab_size, 4, 32, 3, device, seed=1)
    losses = {"s": [], "p": []}
    for x, y in batches:
        for key, model in (("s", sharded), ("p", plain)):
            with torch.autocast(device.type, dtype=amp or torch.bfloat16, enabled=amp is not None):
                _, loss = model(x, labels=y)
            loss.backward()
            norm = float(D.grad_norm_value(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
            value = float(loss.detach())
            if not (math.isfinite(value) and math.isfinite(norm)):
                raise FloatingPointError(f"non-finite loss {value} / grad norm {norm}")
            opts[key].step()
            opts[key].zero_grad(set_to_none=True)
            losses[key].append(value)
    res["losses_sharded"], res["losses_plain"] = losses["s"], losses["p"]
    res["max_loss_diff"] = max(abs(a - b) for a, b in zip(losses["s"], losses["p"]))
    full = StateDictOptions(full_state_dict=True, cpu_offload=True)
    state = get_model_state_dict(sharded, options=full)
    get_optimizer_state_dict(sharded, opts["s"], options=full)  # gathered as checkpoints do
    ref = plain.state_dict()
    res["state_keys_match"] = sorted(state) == sorted(ref)
    res["max_weight_diff"] = max(float((state[k].float() - ref[k].detach().cpu().float()).abs().max())
                                 for k in ref if k in state)
    fresh = D.apply_fsdp(build())
    set_model_state_dict(fresh, state, options=StateDictOptions(full_state_dict=True, strict=False))
    x, y = batches[0]
    with torch.no_grad():
        a = float(fresh(x, labels=y)[1])
        b = float(sharded(x, labels=y)[1])
    res["reload_loss_diff"] = abs(a - b)
    tol_loss = 2e-2 if amp is not None else 1e-4
    ok = (res["dtensor_params"] and res["state_keys_match"] and res["max_loss_diff"] <= tol_loss
          and res["max_weight_diff"] <= 1e-3 and res["reload_loss_diff"] <= 1e-5)
    res["status"] = "ok" if ok else "mismatch (see values)"


def fully_shard_check(args) -> dict:
    """FSDP2 at world size 1 in this process, dense_tied and leviathan: sharded vs unsharded twin, full state
    dict gather and reload."""
    import torch
    import torch.distributed as dist

    try:
        device = _device(args.device)
    except Exception as e:  # noqa: BLE001
        return {"status": f"error: {_short_error(e)}"}
    backend = "nccl" if device.type == "cuda" else "gloo"
    amp = torch.bfloat16 if (device.type == "cuda" and args.dtype == "bf16") else None
    res: dict = {"backend": backend, "autocast": str(amp).removeprefix("torch.") if amp else "fp32"}
    owns = not dist.is_initialized()
    if owns:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(_free_port())
        kwargs = {"device_id": device} if device.type == "cuda" else {}
        dist.init_process_group(backend, rank=0, world_size=1, **kwargs)
    try:
        res["variants"] = {}
        for variant in ("dense_tied", "leviathan"):  # dense first: tells FSDP trouble from generator trouble
            r = res["variants"][variant] = {}
            try:
                _fully_shard_variant(variant, device, amp, r)
            except Exception as e:  # noqa: BLE001
                r["status"] = f"error: {_short_error(e)}"
                traceback.print_exc()
        bad = [f"{v}: {r['status']}" for v, r in res["variants"].items() if r["status"] != "ok"]
        res["status"] = "ok" if not bad else "; ".join(bad)
    except Exception as e:  # noqa: BLE001
        res["status"] = f"error: {_short_error(e)}"
        traceback.print_exc()
    finally:
        if owns and dist.is_initialized():
            dist.destroy_process_group()
    return res


def cmd_fsdp(args) -> int:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    deadline = _now() + (args.budget_s or 3600)
    out = {"device": args.device}
    print(f"fsdp: torchrun --nproc_per_node={fsdp_world_size(args.device)} -m leviathan train --config tiny "
          f"parallel=fsdp ...", flush=True)
    try:
        out["torchrun"] = torchrun_smoke(args, work, deadline - 15)
    except Exception as e:  # noqa: BLE001
        out["torchrun"] = {"status": f"error: {_short_error(e)}"}
        traceback.print_exc()
    _write_json(args.json, out)
    print(f"  torchrun: {out['torchrun']['status']}", flush=True)
    print("fsdp: fully_shard at world size 1 in process ...", flush=True)
    out["fully_shard"] = fully_shard_check(args)
    _write_json(args.json, out)
    print(f"  fully_shard: {json.dumps(out['fully_shard'])}", flush=True)
    return 0 if out["torchrun"]["status"] == "ok" and out["fully_shard"]["status"] == "ok" else 1


# ---------------------------------------------------------------------------------------------
# report


def read_status(work: Path, stage: str) -> dict | None:
    """``<stage>.status`` holds ``RC SECONDS LIMIT`` (or ``skip ...``); None if the stage never ran."""
    path = work / f"{stage}.status"
    if not path.is_file():
        return None
    parts = path.read_text().split()
    if not parts:
        return None
    if parts[0] == "skip":
        return {"result": "SKIPPED", "why": " ".join(parts[1:]) or "no time left"}
    rc = int(parts[0])
    secs = int(float(parts[1])) if len(parts) > 1 else None
    limit = int(float(parts[2])) if len(parts) > 2 else None
    result = "PASS" if rc == 0 else ("TIMEOUT" if rc in (124, 137) else "FAIL")
    return {"result": result, "rc": rc, "s": secs, "limit": limit}


def read_junit(path: Path) -> dict | None:
    if not path.is_file():
        return None
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    failed, skipped_reasons, props = [], set(), []
    for s in suites:
        for k in counts:
            counts[k] += int(s.get(k, 0))
        for case in s.iter("testcase"):
            name = case.get("name")
            for tag in ("failure", "error"):
                el = case.find(tag)
                if el is not None:
                    message = (el.get("message") or tag).strip().splitlines() or [tag]
                    failed.append(f"{name}: {message[0][:200]}")
            sk = case.find("skipped")
            if sk is not None:
                skipped_reasons.add((sk.get("message") or "").strip()[:120])
            p = case.find("properties")
            if p is not None:
                vals = ", ".join(f"{e.get('name')}={e.get('value')}" for e in p.iter("property"))
                if vals:
                    props.append(f"{name}: {vals}")
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    return {**counts, "failed": failed, "skipped_reasons": sorted(skipped_reasons), "properties": props}


def read_pytest_log(path: Path) -> dict | None:
    """Counts from ``pytest -v`` lines (``tests/x.py::name PASSED``), for a run that never finished."""
    if not path.is_file():
        return None
    outcome: dict[str, str] = {}
    for m in re.finditer(r"^(\S+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)", path.read_text(errors="replace"),
                         re.M):
        outcome[m.group(1)] = m.group(2)
    if not outcome:
        return None
    values = list(outcome.values())
    failed = [f"{name.split('::', 1)[1]}: failed" for name, o in outcome.items() if o in ("FAILED", "ERROR")]
    return {"tests": len(values), "passed": values.count("PASSED"), "failures": len(failed), "errors": 0,
            "skipped": values.count("SKIPPED"), "failed": failed, "skipped_reasons": [], "properties": []}


def _stage_details(stage: str, work: Path) -> list[str]:
    """Short detail strings for a stage's row."""
    d: list[str] = []
    if stage == "setup":
        env = _load(work / "env.json")
        if env:
            gpu = f"{env.get('gpu')} ({env.get('gpu_memory_gib')} GiB)" if env.get("gpu") else "no CUDA device"
            d.append(f"python {env.get('python')}, torch {env.get('torch')} (CUDA {env.get('torch_cuda')}), {gpu}")
            if env.get("missing_packages"):
                d.append("missing: " + ", ".join(env["missing_packages"]))
        note = work / "setup.note"
        if note.is_file():
            d.append(note.read_text().strip().replace("\n", "; "))
    elif stage == "gpu-tests":
        j = read_junit(work / "pytest.xml")
        if j is None:  # killed before pytest wrote its report: the verbose log's per-test lines
            j = read_pytest_log(work / "gpu-tests.log")
            if j:
                d.append("(no JUnit report: from the log)")
        if j:
            d.append(f"{j['passed']} passed, {j['failures'] + j['errors']} failed, {j['skipped']} skipped")
            d += [f"FAILED {f}" for f in j["failed"][:6]]
            if j["skipped"] and j["skipped_reasons"]:
                d.append("skip reason: " + "; ".join(j["skipped_reasons"])[:200])
    elif stage == "fsdp":
        f = _load(work / "fsdp.json")
        if f:
            t = f.get("torchrun", {})
            if t.get("first") and t.get("status") != "ok" and not t.get("resume"):
                d.append(f"torchrun: {_clip(t.get('status'), 400)}")
            elif t.get("first"):
                a, b = t["first"], t.get("resume") or {}
                d.append(f"torchrun world {a.get('world_size')} on {a.get('device')}: {a.get('steps')} steps, val loss "
                         f"{_num(a.get('final_val_loss'))}; resumed to {b.get('steps')} steps, val loss "
                         f"{_num(b.get('final_val_loss'))} -> {t.get('status')}")
            else:
                d.append(f"torchrun: {t.get('status')}")
            s = f.get("fully_shard", {})
            for v, r in (s.get("variants") or {}).items():
                if "max_loss_diff" in r:
                    d.append(f"fully_shard {v} ({s.get('backend')}, {s.get('autocast')}): DTensor params "
                             f"{r.get('dtensor_params')}, loss sharded vs plain max diff {r['max_loss_diff']:.1e}, "
                             f"gathered weights diff {r.get('max_weight_diff', float('nan')):.1e}, reload loss diff "
                             f"{r.get('reload_loss_diff', float('nan')):.1e} -> {r.get('status')}")
                else:
                    d.append(f"fully_shard {v}: {r.get('status')}")
            if not s.get("variants"):
                d.append(f"fully_shard: {s.get('status')}")
    elif stage == "bench":
        b = _load(work / "bench.json")
        if b:
            for r in b.get("runs", []):
                d.append(f"{r['mode']}/{r['ids']}: " + (f"ratio {r['ratio']:.3f}" if "ratio" in r
                                                         else _clip(r.get("status", "?"), 160)))
    return d


def _num(x) -> str:
    return f"{x:.4f}" if _finite(x) else str(x)


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def build_report(work: Path) -> tuple[str, bool]:
    """(markdown, all stages passed)."""
    env = _load(work / "env.json") or {}
    title = f"# GPU check ({time.strftime('%Y-%m-%d %H:%M:%S')})"
    lines = [title, "", f"Device: {env.get('gpu') or env.get('requested_device', '?')}; torch {env.get('torch', '?')}; "
             f"work folder {work}", "",
             "| stage | result | time s | limit s | details |", "|---|---|---|---|---|"]
    all_ok = True
    for stage in STAGES:
        st = read_status(work, stage)
        if st is None:
            result, secs, limit = "NOT RUN", "", ""
        elif st["result"] == "SKIPPED":
            result, secs, limit = "SKIPPED", "", st["why"]
        else:
            result, secs, limit = st["result"], st.get("s", ""), st.get("limit") or ""
            if st["result"] == "TIMEOUT":
                result = f"TIMEOUT (rc {st['rc']})"
            elif st["result"] == "FAIL":
                result = f"FAIL (rc {st['rc']})"
        if st is None or st["result"] != "PASS":
            all_ok = False
        details = "<br>".join(x.replace("|", "/") for x in _stage_details(stage, work)) or ""
        lines.append(f"| {STAGE_TITLES[stage]} | {result} | {secs} | {limit} | {details} |")
    b = _load(work / "bench.json")
    if b and b.get("runs"):
        lines += ["", bench_table(b)]
    j = read_junit(work / "pytest.xml")
    if j and j["properties"]:
        lines += ["", "GPU test measurements:", ""] + [f"- {p}" for p in j["properties"]]
    lines += ["", f"Overall: {'PASS' if all_ok else 'NOT ALL PASSED'}"]
    return "\n".join(lines) + "\n", all_ok


def cmd_report(args) -> int:
    work = Path(args.work)
    text, ok = build_report(work)
    print(text)
    targets = [Path(args.md)] if args.md else []
    if os.environ.get("OUT"):
        targets.append(Path(os.environ["OUT"]) / "gpu_check.md")
    for path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"(written to {path})")
    if os.environ.get("OUT"):  # everything measured, for whoever reads the results later
        data = {name: _load(work / f"{name}.json") for name in ("env", "bench", "fsdp")}
        data["stages"] = {stage: read_status(work, stage) for stage in STAGES}
        data["pytest"] = read_junit(work / "pytest.xml")
        _write_json(Path(os.environ["OUT"]) / "gpu_check.json", data)
    return 0 if ok else 1


# ---------------------------------------------------------------------------------------------
# all: every stage in turn (the CPU rehearsal; on a GPU use gpu_check.sh)


def cmd_all(args) -> int:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = _now()  # the GPU tests (they skip without CUDA), in a subprocess as gpu_check.sh runs them
    with open(work / "gpu-tests.log", "w") as log:
        cmd = [sys.executable, "-m", "pytest", "-v", "-m", "gpu", str(REPO / "tests" / "gpu"), "-rfEs",
               "-p", "no:cacheprovider", f"--junitxml={work / 'pytest.xml'}", "-o", "junit_family=xunit1"]
        rc = subprocess.call(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    (work / "gpu-tests.status").write_text(f"{rc} {_now() - t0:.0f} 0\n")
    for name in ("env", "bench", "fsdp"):
        stage = {"env": "setup"}.get(name, name)
        ns = argparse.Namespace(**vars(args))
        ns.json = str(work / f"{name}.json")
        t0 = _now()
        try:
            rc = {"env": cmd_env, "bench": cmd_bench, "fsdp": cmd_fsdp}[name](ns)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            rc = 1
        (work / f"{stage}.status").write_text(f"{rc} {_now() - t0:.0f} 0\n")
    ns = argparse.Namespace(**vars(args))
    return cmd_report(ns)


def _env_budget() -> float | None:
    limit = os.environ.get("GPU_CHECK_STAGE_LIMIT")
    return max(float(limit) - 10.0, 1.0) if limit else None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, json_default=True):
        sp.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
        sp.add_argument("--quick", action="store_true", help="tiny sizes (seconds on a CPU): rehearse the logic")
        sp.add_argument("--no-compile", action="store_true", help="skip the torch.compile measurement")
        sp.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16", help="autocast dtype (default bf16)")
        sp.add_argument("--budget-s", type=float, default=_env_budget(),
                        help="seconds this stage may take: no new measurement starts that would not fit "
                             "(default: $GPU_CHECK_STAGE_LIMIT minus 10 s, set by gpu_check.sh; else none)")
        sp.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
        if json_default:
            sp.add_argument("--json", default=None, help="write the results here")

    for name in ("env", "bench", "fsdp", "all"):
        sp = sub.add_parser(name)
        common(sp)
        sp.add_argument("--preset", default="paper-109m")
        sp.add_argument("--batch", type=int, default=None, help="sequences per step (default 16; quick 2)")
        sp.add_argument("--seq", type=int, default=None, help="sequence length (default 512; quick 32)")
        sp.add_argument("--repeats", type=int, default=None, help="timed steps per model (default 10; quick 3)")
        sp.add_argument("--warmup", type=int, default=None, help="untimed steps per model first (default 3; quick 1)")
        sp.add_argument("--work", default=os.environ.get("GPU_CHECK_WORK", "/tmp/gpu_check"),
                        help="scratch folder (data, runs, stage files)")
        sp.add_argument("--md", default=None, help="also write the markdown report here")
    sp = sub.add_parser("report")
    sp.add_argument("--work", default=os.environ.get("GPU_CHECK_WORK", "/tmp/gpu_check"))
    sp.add_argument("--md", default=None, help="write the markdown here too ($OUT/gpu_check.md is automatic)")
    args = p.parse_args(argv)
    return {"env": cmd_env, "bench": cmd_bench, "fsdp": cmd_fsdp, "report": cmd_report, "all": cmd_all}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())

"""The ``fsdp`` stage of the GPU check: ``torchrun`` at world size 1 on a generated corpus, then ``--resume auto``;
and FSDP2's ``fully_shard`` in process against an unsharded twin (``scripts/gpu_check.py``)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import traceback
from pathlib import Path

from gpu_check_common import (REPO, WORK_FILES, _clip, _device, _finite, _now, _short_error, _write_json, check_output,
                              claim_folder, json_with, work_lock)
from gpu_check_bench import make_batches


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


def _remove_earlier_run(run_dir: Path, data: Path) -> None:
    """Delete the stage's own earlier run, and nothing else: a `leviathan train` run folder (its marker, only train's
    files) that trained on this work folder's ``fsdp-data``. The work folder's claim says the folder is the check's, not
    what a user put inside it: a run and NOTES.txt copied into a claimed ``fsdp-run`` were deleted without a word
    (issue 30 round 25, X25). Anything else is a UserError naming it and the ``rm -r`` to do it by hand."""
    from leviathan.errors import UserError
    from leviathan.ownership import check_replaceable
    from leviathan.strict_yaml import load_strict
    from leviathan.train.loop import RUN_FILES

    if not os.path.lexists(run_dir):
        return
    fix = f"move it out of the work folder, or delete it by hand (rm -r {str(run_dir)!r}), then run the stage again"
    if run_dir.is_symlink():
        raise UserError(f"{str(run_dir)!r} is a link, not the fsdp stage's earlier run; {fix}")
    check_replaceable(run_dir, "train", "the fsdp stage", own=RUN_FILES + tuple(f"{name}/*" for name in RUN_FILES))
    try:
        config = run_dir / "config.yaml"
        trained_on = load_strict(config.read_text(encoding="utf-8"), str(config))["data"]["path"]
    except Exception:  # missing, damaged or of another shape: not provably the stage's run
        trained_on = None
    if trained_on != str(data):
        raise UserError(f"{str(run_dir)!r} is a `leviathan train` run on {trained_on!r}, not the fsdp stage's earlier "
                        f"run (on {str(data)!r}); {fix}")
    shutil.rmtree(run_dir)


def torchrun_smoke(args, work: Path, deadline: float) -> dict:
    """Prepare a tiny dataset, torchrun one process with parallel=fsdp, check it, resume it to more steps."""
    res: dict = {"status": "running"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "PYTHONUNBUFFERED": "1"}
    env.pop("WORLD_SIZE", None), env.pop("RANK", None), env.pop("LOCAL_RANK", None)
    log = work / "fsdp-torchrun.log"
    data = work / "fsdp-data"
    run_dir = work / "fsdp-run"
    _remove_earlier_run(run_dir, data)  # cmd_fsdp checked it first; a no-op unless another stage wrote one since
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
    from leviathan.run_config import OptimConfig
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
    """The stage's exit status. The work folder is claimed first (``claim_folder``): ``torchrun_smoke`` deletes its
    ``fsdp-run`` and writes ``fsdp-corpus``, ``fsdp-data`` and ``fsdp-torchrun.log`` there, which deleted a user's
    ``DIR/fsdp-run`` without a word (issue 30 round 24, V36). ``args.work`` is absolute (``gpu_check.main``): the
    commands run from the repository, where a relative one named another folder (V37)."""
    check_output(args.json, "--json", json_with("device", "torchrun"), "an earlier `gpu_check.py fsdp` result")
    work = claim_folder(args.work, WORK_FILES, "--work")
    with work_lock(work):  # a second check in the folder shared fsdp-run (round 25, X74)
        return _fsdp(args, work)


def _fsdp(args, work: Path) -> int:
    """The stage itself, under the work folder's lock."""
    _remove_earlier_run(work / "fsdp-run", work / "fsdp-data")  # before any work: a user's run there is one line (X25)
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

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
- ``claim``: make ``--work`` (and ``$OUT`` when set) the check's folder (``gpu_check.sh`` runs it before it writes or
  deletes anything there).

The verbs' output rules hold here too (``gpu_check_common``): the work folder and ``$OUT`` are claimed with a
marker (a user's file of a stage file's name there is refused, never deleted), ``--json`` and ``--md`` write only
where nothing is or over an earlier output of their kind, numeric options are checked with their range, and a
refusal or a storage failure is one line ``error: ...``, exit status 2 (``leviathan.cli.one_line_errors``).

CPU rehearsal (no GPU needed; the default test suite runs the quick bench and the report):
    python scripts/gpu_check.py all --device cpu --quick --no-compile --dtype fp32 --work /tmp/gc

Files: this one (the ``env`` stage, ``all``, the command line), ``gpu_check_bench.py``, ``gpu_check_fsdp.py``,
``gpu_check_report.py`` (one stage each) and ``gpu_check_common.py`` (what they share).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the stage modules beside this file

import gpu_check_bench as bench  # noqa: E402
import gpu_check_fsdp as fsdp  # noqa: E402
from gpu_check_fsdp import fsdp_world_size  # noqa: E402,F401 - the stage's rank choice (tests/gpu)
import gpu_check_report as report  # noqa: E402
from gpu_check_settings import check_settings  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.once_options import once_options  # noqa: E402
from gpu_check_common import (OUT_FILES, REPO, WHO, WORK_FILES, _now, _short_error, _write_json,  # noqa: E402
                              check_device, check_output, check_work_unlocked, claim_folder, json_with, work_lock)

ENV_KEYS = ("python", "torch", "requested_device", "missing_packages")  # an env.json of this stage has them all


def env_info(device: str) -> dict:
    import importlib

    import torch

    info = {"python": sys.version.split()[0], "executable": sys.executable, "torch": torch.__version__,
            "torch_cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
            "requested_device": device, "cpu_count": os.cpu_count(),
            "hostname": platform.node()}  # pytest.xml's testsuite names its host too (report: check_junit, P72)
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


# the options each stage reads ("sizes": --preset, --batch, --seq, --repeats, --warmup); all: every stage's, its JSON
# files in the work folder
STAGE_OPTIONS = {"env": {"json"},
                 "bench": {"quick", "no_compile", "dtype", "budget_s", "threads", "json", "sizes"},
                 "fsdp": {"quick", "dtype", "budget_s", "json", "work"},
                 "all": {"quick", "no_compile", "dtype", "budget_s", "threads", "sizes", "work"}}


def cmd_env(args) -> int:
    check_output(args.json, "--json", json_with(*ENV_KEYS), "an earlier `gpu_check.py env` record")
    info = env_info(args.device)
    for k, v in info.items():
        print(f"{k}: {v}")
    _write_json(args.json, info)
    if args.cmd == "env":  # the verb's own output, not all's env stage: a stop from here on finds it complete
        from leviathan import stop_signals  # (the process spent ~2 s after it, issue 30 round 28, T34)

        stop_signals.output_in_place = True
    if args.device.startswith("cuda") and not info["cuda_available"]:
        print("error: device cuda requested but torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    return 0 if not str(info["leviathan"]).startswith("not importable") else 1


# ---------------------------------------------------------------------------------------------
# all: every stage in turn (the CPU rehearsal; on a GPU use gpu_check.sh)


def cmd_all(args) -> int:
    work = claim_folder(args.work, WORK_FILES, "--work")
    report.check_outputs(args)  # before minutes of stages, not after
    with work_lock(work):  # one check at a time in a work folder (round 25, X74)
        return _all(args, work)


def _all(args, work) -> int:
    """``all``'s stages, under the work folder's lock."""
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
            rc = {"env": cmd_env, "bench": bench.cmd_bench, "fsdp": fsdp.cmd_fsdp}[name](ns)
        except UserError:  # a refusal ends the check in one line
            raise
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            rc = 1
        (work / f"{stage}.status").write_text(f"{rc} {_now() - t0:.0f} 0\n")
    ns = argparse.Namespace(**vars(args))
    return report.cmd_report(ns)


def cmd_claim(args) -> int:
    """Claim ``--work`` (and ``$OUT``) for the check: gpu_check.sh's first step, before its ``rm -f`` (V104); its
    refusals name GPU_CHECK_WORK, the setting that gives the folder there. The script's other settings are checked
    first, in this one call before any stage (``gpu_check_settings``, round 25, X20-X23)."""
    check_settings()
    check_work_unlocked(Path(args.work), "GPU_CHECK_WORK")
    claim_folder(args.work, WORK_FILES, "GPU_CHECK_WORK")
    if os.environ.get("OUT"):
        claim_folder(os.environ["OUT"], OUT_FILES, "OUT")
    return 0


def _env_budget() -> float | None:
    """$GPU_CHECK_STAGE_LIMIT minus 10 s (at least 1 s), the default of ``--budget-s``; None when unset."""
    limit = os.environ.get("GPU_CHECK_STAGE_LIMIT")
    if not limit:
        return None
    try:
        seconds = float(limit)
    except ValueError:
        seconds = float("nan")
    if not (seconds > 0 and seconds != float("inf")):
        raise UserError(f"GPU_CHECK_STAGE_LIMIT={limit!r} is not a number of seconds > 0; set it to one, or unset it")
    return max(seconds - 10.0, 1.0)


def main(argv=None) -> int:
    """The exit status: a refusal or a storage failure is one line ``error: ...``, status 2 (as the verbs end);
    scripts/gpu_check.py ended in tracebacks (a damaged stage file, V77) or ran bad values (V38, V39)."""
    from leviathan.cli import _stoppable, one_line_errors

    # a stop (Ctrl-C, SIGTERM) ended it with no line at all, exit 143 (issue 30 round 25, X88): the verbs' handler
    # and a stop as the process ended, its work done, killed it without a word (round 28, T34): ``ending``, as the
    # verbs and collect_results.py end, says it in one line
    return one_line_errors(lambda: _stoppable("gpu_check", lambda: _main(argv), WHO, ending=argv is None),
                           "gpu_check")


def _main(argv) -> int:
    from leviathan.commands.values import harness_device, non_negative_int, positive_float, positive_int, thread_count
    from leviathan.empty_paths import refuse_empty_path

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, uses):
        sp.add_argument("--device", type=harness_device, default="cuda", help="cuda (default), cuda:N or cpu")
        if "quick" in uses:
            sp.add_argument("--quick", action="store_true", help="tiny sizes (seconds on a CPU): rehearse the logic")
        if "no_compile" in uses:
            sp.add_argument("--no-compile", action="store_true", help="skip the torch.compile measurement")
        if "dtype" in uses:
            sp.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16", help="autocast dtype (default bf16)")
        if "budget_s" in uses:
            sp.add_argument("--budget-s", type=positive_float, default=_env_budget(),
                            help="seconds this stage may take: no new measurement starts that would not fit "
                                 "(default: $GPU_CHECK_STAGE_LIMIT minus 10 s, set by gpu_check.sh; else none)")
        if "threads" in uses:
            sp.add_argument("--threads", type=thread_count, default=None, help="torch intra-op threads")
        if "json" in uses:
            sp.add_argument("--json", default=None, help="write the results here")

    # each stage takes only the options it uses (STAGE_OPTIONS): `env --md r.md`, `all --json x.json` and `fsdp --batch
    # 4` were taken and ignored, nothing written or changed, no word (issue 30 round 24, V38's kind); so were `env
    # --quick --dtype fp32 --work w`, `bench --work w` and `fsdp --no-compile` (round 25, the kind of X15)
    for name, uses in STAGE_OPTIONS.items():
        sp = sub.add_parser(name)
        common(sp, uses)
        if "sizes" in uses:
            sp.add_argument("--preset", default=None, help="model preset (default paper-109m; not with --quick)")
            sp.add_argument("--batch", type=positive_int, default=None,
                            help="sequences per step (default 16; quick 2)")
            sp.add_argument("--seq", type=positive_int, default=None, help="sequence length (default 512; quick 32)")
            sp.add_argument("--repeats", type=positive_int, default=None,
                            help="timed steps per model (default 10; quick 3)")
            sp.add_argument("--warmup", type=non_negative_int, default=None,
                            help="untimed steps per model first (default 3; quick 1)")
        if "work" in uses:
            sp.add_argument("--work", default=os.environ.get("GPU_CHECK_WORK") or "/tmp/gpu_check",
                            help="scratch folder (data, runs, stage files)")
        if name == "all":
            sp.add_argument("--md", default=None, help="also write the markdown report here")
    sp = sub.add_parser("report")
    sp.add_argument("--work", default=os.environ.get("GPU_CHECK_WORK") or "/tmp/gpu_check")
    sp.add_argument("--md", default=None, help="write the markdown here too ($OUT/gpu_check.md is automatic)")
    sp = sub.add_parser("claim", help="make --work (and $OUT) the check's folders (gpu_check.sh's first step)")
    sp.add_argument("--work", default=os.environ.get("GPU_CHECK_WORK") or "/tmp/gpu_check")
    args = once_options(p).parse_args(argv)
    for dest in ("work", "json", "md"):  # '' was the current folder, or nothing written (round 25, X4, X7, X8, X12)
        refuse_empty_path(getattr(args, dest, None), f"--{dest}")
    if args.cmd in ("bench", "fsdp", "all"):  # before anything is written (round 25, X17, X18)
        check_device(args.device)
    if hasattr(args, "work"):
        args.work = os.path.abspath(args.work)  # the fsdp stage runs its commands from the repository (V37)
    return {"env": cmd_env, "bench": bench.cmd_bench, "fsdp": fsdp.cmd_fsdp, "report": report.cmd_report,
            "all": cmd_all, "claim": cmd_claim}[args.cmd](args)


if __name__ == "__main__":  # without the interpreter's finalization, whose default stop actions killed a
    from leviathan.cli import end_program  # finished check without a word, -15 (the CI of stop 55, gpu_check env)

    end_program(main())

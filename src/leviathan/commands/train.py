"""``leviathan train``: train from a YAML config plus dotted overrides; resumable, torchrun-ready.

    leviathan train --config tiny model.hidden_size=128 optim.lr=1e-3     # a packaged config, by name
    leviathan train --config my-run.yaml --run-dir runs/mine --resume auto  # or any YAML file
    torchrun --nproc_per_node=2 -m leviathan train --config tiny

Exit status: 0 when finished or stopped by SIGTERM (a checkpoint is saved first), 130 after Ctrl-C
(also saved), 2 for a bad config or a diverged run (the message says what to change), and under torchrun 2 on the
surviving ranks when a rank died: the lowest of them prints one line naming it and the resume command.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from ..errors import UserError


def add_arguments(parser) -> None:
    parser.add_argument("overrides", nargs="*", help="KEY=VALUE settings, e.g. optim.lr=1e-3 model.preset=cpu-small")
    parser.add_argument("--config", default=None, help="YAML run config: a path, or the name of a packaged one (tiny, cpu-small, "
                             "paper-109m); overrides apply on top")
    parser.add_argument("--run-dir", default=None, help="output folder (default: runs/<config name>)")
    parser.add_argument("--resume", default=None, metavar="auto|PATH",
                        help="'auto': continue from the latest complete checkpoint of --run-dir if any; "
                             "or a run folder / step folder to continue from")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or log lines")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")


def run(args) -> int:
    from ..config import dump_yaml
    from ..run_config import load_run_config
    from ..train.distributed import env_world

    run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / (Path(args.config).stem if args.config else "run")
    source = _config_source(args, run_dir)
    try:
        cfg = load_run_config(source, args.overrides)
    except UserError as e:
        if source is None and args.config is None and args.resume is not None:
            raise UserError(_nothing_to_resume(run_dir, e)) from None
        _refuse_other_tokenizer(args, run_dir, source)  # the real cause, when it is one
        raise
    _check_not_measured(run_dir, cfg.total_steps if args.resume == "auto" else None)
    if args.print_config:
        print(dump_yaml(cfg.resolved()), end="")
        return 0
    _check_memory(cfg)
    from ..cli import Stopped
    from ..stop_signals import held_stops
    from ..train.loop import train

    try:
        try:
            summary = train(cfg, run_dir, resume=args.resume, quiet=args.quiet)
        except Exception as e:  # under torchrun: a rank that died, said once in one line (train/rank_failure.py)
            with held_stops():  # torchrun's SIGTERM to the survivors must not cut that line off
                return _peer_failure(e, args, run_dir)
    except Stopped as stop:  # the SIGTERM came as the transport error unwound, before the line above began
        with held_stops():
            if isinstance(stop.__context__, Exception) and _peer_died(stop.__context__):
                return _peer_failure(stop.__context__, args, run_dir)
        raise
    if env_world()[0] == 0 and not args.quiet:
        shown = ("run_dir", "steps", "tokens", "final_val_loss", "final_val_ppl", "final_val_bpb", "tokens_per_s",
                 "wall_time_s", "checkpoint", "stopped")
        print(json.dumps({k: getattr(summary, k) for k in shown}, indent=2))
    return 0


def _check_memory(cfg) -> None:
    """``memory_preflight``'s refusal, before the model is built, for a model and micro batch this machine's memory
    cannot train (issue 30 round 25, X70's kind: the allocator's traceback, or the out-of-memory killer; round 26,
    P18: the step's activations were not counted; round 27, R9: nor the validation batch's); one process on the CPU
    only: a GPU's model is not held here, and torchrun's ranks share the work."""
    from ..memory_preflight import check_run_memory, larger_batch
    from ..train.distributed import env_world, resolve_device

    if env_world()[2] > 1 or resolve_device(cfg.device).type != "cpu":
        return
    check_run_memory([cfg], f"the run's model (model.*) and {larger_batch(cfg)}", "a smaller micro_batch_size "
                     "(batch_tokens stays: more accumulation steps) or eval_batch_size (validation's windows per "
                     "forward), a smaller model.preset (cpu-tiny, cpu-small, ...) or smaller model sizes")


def _check_not_measured(run_dir: Path, resumed_to: int | None) -> None:
    """UserError when ``run_dir`` is a sweep's run (``SWEEP/runs/NAME``) that a row of the sweep's results.jsonl
    measured: training it on would change the weights the row describes, and ``keep_last`` deleted the checkpoint the
    row measured (issue 30 round 8, A12). The sweep itself trains its runs through ``train.loop.train``, not here; a
    run of the sweep with no row yet (stopped part-way) is the sweep's to resume, and ``--resume auto`` to the row's
    own step (``resumed_to``: a scheduler rerunning the sweep's ``train_commands`` line of a finished run) trains
    nothing and is let through."""
    from ..experiments.machinery.results import read_results
    from ..ownership import read_marker

    real = Path(os.path.realpath(run_dir))
    sweep = real.parent.parent
    if real.parent.name != "runs" or not (sweep / "results.jsonl").is_file():
        return
    try:
        marker = read_marker(sweep)
    except UserError:
        return  # a damaged marker: not provably a sweep; the run folder's own checks apply
    if marker is None or marker.verb != "sweep":
        return
    rows = [r for r in read_results(sweep / "results.jsonl", report=lambda msg: None) if r.name == real.name]
    if not rows:
        return
    step = rows[-1].steps
    if resumed_to is not None and resumed_to == step:
        return
    from ..checkpoint.layout import step_name

    raise UserError(f"--run-dir {str(run_dir)!r} is run {real.name!r} of the sweep {str(sweep)!r}, and a row of its "
                    f"results.jsonl measured it at step {step}: training it again or further would change the weights "
                    f"the row describes (and keep_last would delete the checkpoint it measured); continue it in "
                    f"another folder: leviathan train --run-dir NEW_DIR --resume "
                    f"{shlex.quote(str(Path(run_dir) / 'checkpoints' / step_name(step)))} [overrides]")


def _config_source(args, run_dir: Path) -> str | None:
    """The config to build from: ``--config``; else, when resuming, the config.yaml of the checkpoint it resumes (so
    ``train --run-dir RUN --resume auto`` continues RUN as it was trained, overrides on top); else None (the defaults).

    Footgun it closes: without this, a resume with no ``--config`` built the *default* config and stopped on the
    default data path, or on a model section that differs from the checkpoint's, naming neither cause."""
    if args.config is not None or args.resume is None:
        return args.config
    import sys

    from ..checkpoint.find import find_checkpoint
    from ..checkpoint.layout import latest_checkpoint
    from ..checkpoint.read import checked_step
    from ..checkpoint.read import load_run_config as read_step_config
    from ..train.branch import refuse_other_runs_step

    step = latest_checkpoint(run_dir) if args.resume == "auto" else find_checkpoint(args.resume)
    if step is None:  # nothing to resume: a fresh start, as --resume auto promises
        _refuse_other_verbs_output(run_dir)
        return _started_config(run_dir, args)
    refuse_other_runs_step(step, run_dir)  # before the note: a step of another run copied in (round 14, A156)
    checked_step(step, ("config.yaml",))  # the file saved with the weights, not one edited or swapped in since
    read_step_config(step)  # a value that cannot be: named as this file's, with the way out
    saved = step / "config.yaml"
    print(f"note: no --config given: resuming with the checkpoint's own config ({saved})"
          + (f", overrides on top ({' '.join(args.overrides)})" if args.overrides else ""), file=sys.stderr)
    return str(saved)


def _refuse_other_tokenizer(args, run_dir: Path, source: str | None) -> None:
    """The resume's tokenizer refusal, where the data the resume is pointed at was prepared with another tokenizer
    than the checkpoint's: that is the cause, yet the config's checks against the data ran first and named a symptom
    with a fix that fails in turn (issue 30 round 25, X94: "model.vocab_size=300 is smaller than the data's vocabulary
    (512); set model.vocab_size=512", then a generator_base refusal, and only then the tokenizer). Called when
    ``load_run_config`` refused; any trouble finding the step or the data path leaves that refusal to stand."""
    from ..checkpoint.find import find_checkpoint
    from ..checkpoint.layout import latest_checkpoint
    from ..checkpoint.read import check_tokenizer
    from ..data.meta import find_meta
    from ..run_config import load_run_config

    if args.resume is None:
        return
    try:
        step = latest_checkpoint(run_dir) if args.resume == "auto" else find_checkpoint(args.resume)
        data_path = None if step is None else load_run_config(source, args.overrides, check_data=False).data.path
        if data_path is None or find_meta(data_path) is None:
            return
    except UserError:
        return
    check_tokenizer(step, data_path, "resume")


def _nothing_to_resume(run_dir: Path, error: Exception) -> str:
    """The line for ``--resume`` without ``--config`` where there is no run to resume: the defaults' own complaint
    ("set exactly one of max_steps and max_tokens ... neither is set") was the whole line, for a folder that does not
    exist or is prepare's output (issue 30 round 15, A200, A201)."""
    what = ("does not exist" if not run_dir.exists() else
            "is a prepared data folder (meta.json, as `leviathan prepare` writes), not a run"
            if (run_dir / "meta.json").is_file() else "holds no checkpoint and no config.yaml train started it with")
    fix = (f"set data.path={run_dir} and train into another --run-dir" if (run_dir / "meta.json").is_file()
           else f"start a run there with --config CONFIG (with --resume auto it starts at step 0)")
    return (f"no run to resume: {str(run_dir)!r} {what}, and without --config the built-in defaults fail "
            f"({str(error).removeprefix('error: ')}); {fix}")


def _refuse_other_verbs_output(run_dir: Path) -> None:
    """UserError when the folder ``--resume`` is given without ``--config`` is another verb's output (its marker says
    so): a sweep's folder was "no run to resume ... the built-in defaults fail ...; start a run there with --config",
    and that fix, followed, was refused as the sweep's folder (issue 30 round 27, R73). A sweep is resumed by its own
    command. A damaged marker is left to the folder claim, later."""
    from ..ownership import MARKER, read_marker

    try:
        marker = read_marker(run_dir) if run_dir.is_dir() else None
    except UserError:
        return
    if marker is None or marker.verb in ("train", "prepare"):  # prepare's: `_nothing_to_resume` names data.path
        return
    said = f"{str(run_dir)!r} is the output of `leviathan {marker.verb}` (its {MARKER} says so), not a run of train"
    if marker.verb == "sweep":
        raise UserError(f"{said}; to resume the sweep, run the same `leviathan sweep --grid GRID --out "
                        f"{shlex.quote(str(run_dir))}` command again (it trains only the runs results.jsonl lacks)")
    raise UserError(f"{said}; give --run-dir a run folder `leviathan train` wrote, or a new folder with --config CONFIG")


def _started_config(run_dir: Path, args) -> str | None:
    """For ``--resume auto`` without ``--config`` on a run folder of train's that saved no checkpoint yet (stopped or
    killed before its first one): the config.yaml train wrote when it started, so the run starts again as it was
    begun; None (the defaults) for any other folder. The defaults' data path ended the restart of such a run in
    "model.vocab_size is null ... 'data/stdlib' has no meta.json" (issue 30 round 14, A247, A252)."""
    import sys

    from ..ownership import read_marker

    saved = run_dir / "config.yaml"
    try:
        marker = read_marker(run_dir) if run_dir.is_dir() else None
    except Exception:  # noqa: BLE001 - a damaged marker is the folder claim's to name, later
        marker = None
    if marker is None or marker.verb != "train" or not saved.is_file():
        return None
    print(f"note: no --config given and no checkpoint in {str(run_dir)!r} yet: starting the run again with the "
          f"config.yaml it was started with ({saved})"
          + (f", overrides on top ({' '.join(args.overrides)})" if args.overrides else ""), file=sys.stderr)
    return str(saved)


def _peer_died(e: Exception) -> bool:
    from ..train.rank_failure import peer_failure

    return peer_failure(e) is not None


def _peer_failure(e: Exception, args, run_dir: Path) -> int:
    """Re-raise ``e`` unless a peer rank died; then the reporting rank prints one line ``error: ...`` (the rank that
    died, the last complete checkpoint, the resume command) and every surviving rank returns status 2."""
    from ..checkpoint.layout import latest_checkpoint
    from ..train.rank_failure import peer_failure, resume_command

    failure = peer_failure(e)
    if failure is None:
        raise e
    if not failure.reporter:
        return 2
    latest = latest_checkpoint(run_dir)
    start = f"from its last complete checkpoint ({latest.name})" if latest else "(no checkpoint was complete: from " \
                                                                                "step 0)"
    train_args = (["--config", args.config] if args.config else []) + list(args.overrides) + \
        ["--run-dir", str(run_dir), "--resume", "auto"] + (["--quiet"] if args.quiet else [])
    # Printed here, inside the caller's ``held_stops``: raised as a UserError, the line was printed by the CLI only
    # after the stop handlers were put back, and torchrun's SIGTERM to the survivors in that moment killed the rank
    # without it (exit -15, no line: the fresh-clone CI of fe884db, test_rank_kill), or replaced it with "stopped by
    # SIGTERM".
    print(f"error: {failure.describe()}; resume the run {start} with: {resume_command(train_args)}", file=sys.stderr,
          flush=True)
    return 2

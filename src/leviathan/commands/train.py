"""``leviathan train``: train from a YAML config plus dotted overrides; resumable, torchrun-ready.

    leviathan train --config tiny model.hidden_size=128 optim.lr=1e-3     # a packaged config, by name
    leviathan train --config my-run.yaml --run-dir runs/mine --resume auto  # or any YAML file
    torchrun --nproc_per_node=2 -m leviathan train --config tiny

``--config NAME`` reads ``./configs/NAME.yaml`` when the current folder has one, else the config shipped
in the package (``leviathan/configs``: tiny, cpu-small, paper-109m); see ``leviathan.configs``.

Exit status: 0 when finished or stopped by SIGTERM (a checkpoint is saved first), 130 after Ctrl-C
(also saved), 2 for a bad config or a diverged run (the message says what to change).
"""

from __future__ import annotations

import json
from pathlib import Path


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

    cfg = load_run_config(args.config, args.overrides)
    if args.print_config:
        print(dump_yaml(cfg.resolved()), end="")
        return 0
    run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / (Path(args.config).stem if args.config else "run")
    from ..train.loop import train

    summary = train(cfg, run_dir, resume=args.resume, quiet=args.quiet)
    if env_world()[0] == 0 and not args.quiet:
        shown = ("run_dir", "steps", "tokens", "final_val_loss", "final_val_ppl", "final_val_bpb", "tokens_per_s",
                 "wall_time_s", "checkpoint", "stopped")
        print(json.dumps({k: getattr(summary, k) for k in shown}, indent=2))
    return 0

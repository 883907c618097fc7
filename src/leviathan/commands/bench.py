"""``leviathan bench``: side-by-side speed and memory of leviathan vs dense, in one process.

    leviathan bench                          # every section, both configurations (several minutes)
    leviathan bench --config cpu             # the CPU experiment configuration only (cpu-small, BPE 8192)
    leviathan bench --quick                  # a smoke test: fewer repeats, fewer ids
    leviathan bench --only train,generator --json bench.json --threads 1
    leviathan bench --only modes --config experiments --threads 1   # what the experiments pay per step
    leviathan bench --only width --config widths --threads 1        # the width round's arms at widths 32, 64, 128

The sections (``leviathan.bench.sections``, each saying what it times) alternate their models step by step and
compare medians; see ``leviathan.bench`` for the method and docs/benchmarks.md for recorded results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..bench import (CONFIGS, DEFAULT_SECTIONS, EXPERIMENT_CONFIGS, SECTIONS, WIDTH_CONFIGS, BenchOptions,
                     default_cache_dir, format_report, run_benchmark)
from ..bench.configs import CONFIG_SECTIONS
from ..errors import UserError
from ..io import atomic_write_text
from ..ownership import CONTAINERS, MARKER, check_not_inside, read_marker
from ..result_json import check_earlier_result, check_json_target
from ..value_rules import MAX_BENCH_ROUNDS
from .values import bench_repeats, bench_warmup, positive_int, thread_count


def add_arguments(parser) -> None:
    parser.add_argument("--config", dest="config_names", default=None,  # names, not a path (round 29, V7)
                        help=f"comma-separated configurations for the {'/'.join(CONFIG_SECTIONS)} sections "
                             f"({', '.join(CONFIGS)}; refused with the others alone); "
                             "default cpu,paper; 'all' means cpu,paper; 'experiments' the experiments' "
                             "configurations (bpe8k-d128, bpe32k-d64, bpe32k-d128, o200k-d64); 'widths' the width "
                             "round's (o200k-d32L6, o200k-d64L6, o200k-d128L6)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated sections to run (of {', '.join(SECTIONS)}; default: all but width)")
    parser.add_argument("--quick", action="store_true", help="few repeats and ids: a smoke test, not a measurement")
    parser.add_argument("--repeats", type=bench_repeats, default=None,
                        help=f"timed repeats per model, at most {MAX_BENCH_ROUNDS:,} (default depends on section)")
    parser.add_argument("--warmup", type=bench_warmup, default=1,
                        help=f"untimed rounds before timing, at most {MAX_BENCH_ROUNDS:,} (default 1)")
    parser.add_argument("--threads", type=thread_count, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--decode-tokens", type=positive_int, default=None, help="new tokens per decode run (default 64)")
    parser.add_argument("--json", dest="json_out", default=None, help="also write the full result as JSON here")
    parser.add_argument("--cache-dir", default=None,
                        help=f"where the benchmark's trained BPE is cached (default {default_cache_dir()})")


def _split(value: str, option: str) -> tuple[str, ...]:
    """The comma-separated items of ``option``'s ``value``; UserError for an empty item among others (``--only
    'generator,'``) and, for ``--only``, a section named twice: both ran without a word, exit 0 (issue 30 round 28,
    T12), where lm-eval's --tasks refuses the empty item and bench's --config the name given twice. An all-empty
    value is ``run``'s to refuse, with its own line."""
    items = tuple(v.strip() for v in value.split(","))
    if any(items) and not all(items):
        raise UserError(f"an empty item in {option} {value!r}; give comma-separated names with nothing between two "
                        f"commas or after the last")
    twice = next((v for i, v in enumerate(items) if v and v in items[:i]), None)
    if option == "--only" and twice is not None:
        raise UserError(f"--only names the section {twice!r} twice; name each section once")
    return tuple(v for v in items if v)


def run(args) -> int:
    configs = ("cpu", "paper") if args.config_names in (None, "all") else _split(args.config_names, "--config")
    if "experiments" in configs:
        configs = tuple(c for c in configs if c != "experiments") + EXPERIMENT_CONFIGS
    if "widths" in configs:
        configs = tuple(c for c in configs if c != "widths") + WIDTH_CONFIGS
    if not configs:
        raise UserError(f"--config is empty (an unset shell variable?); give comma-separated configuration names "
                        f"(of {', '.join(CONFIGS)}, experiments, widths), or leave --config out for cpu,paper")
    for name, value in (("--repeats", args.repeats), ("--threads", args.threads), ("--decode-tokens", args.decode_tokens)):
        if value is not None and value < 1:
            raise UserError(f"{name} must be at least 1, got {value}")
    if args.warmup < 0:
        raise UserError(f"--warmup must be >= 0, got {args.warmup}")
    if args.json_out:
        _check_json_target(args.json_out)  # as typed, "bx/" a folder (round 26, P3); before minutes of timing
    if args.cache_dir:  # its BPE folder was written inside a data folder (issue 30 round 14, A144)
        _check_cache_dir(Path(args.cache_dir))
    sections = _split(args.only, "--only") if args.only is not None else DEFAULT_SECTIONS
    if not sections:  # '' ran every section for a minute and more, where --config '' is refused (round 15, A34)
        raise UserError(f"--only is empty; name the sections to run (of {', '.join(SECTIONS)}), or leave --only out "
                        f"to run all but width")
    _check_options_used(args, configs, sections)
    opts = BenchOptions(configs=configs, sections=sections, quick=args.quick,
                        repeats=args.repeats, warmup=args.warmup, threads=args.threads,
                        decode_tokens=args.decode_tokens,
                        cache_dir=Path(args.cache_dir) if args.cache_dir else default_cache_dir())
    result = run_benchmark(opts, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    result["command"] = "leviathan bench " + " ".join(sys.argv[2:]) if len(sys.argv) > 1 else "leviathan bench"
    print(format_report(result))
    if args.json_out:
        atomic_write_text(args.json_out, json.dumps(result, indent=2) + "\n")
    return 0


def _check_options_used(args, configs: tuple[str, ...], sections: tuple[str, ...]) -> None:
    """UserError when ``--config``, ``--decode-tokens`` or ``--cache-dir`` is given and no section of ``sections``
    uses it: ``--only generator --config widths`` loaded the four width configurations' data and measured the paper
    defaults, as without it, exit 0 (issue 30 round 27, R36); ``--decode-tokens`` without the decode section was
    dropped the same way, and ``--cache-dir`` where no BPE is trained (round 28, T12). An unknown section or configuration is left to ``run_benchmark``'s line, which names it."""
    if not set(sections) <= set(SECTIONS) or not set(configs) <= set(CONFIGS):
        return
    if args.config_names is not None and not set(CONFIG_SECTIONS) & set(sections):
        raise UserError(f"--config {args.config_names!r} is not used by the section(s) {', '.join(sections)}, which measure "
                        f"the paper defaults; drop --config, or add a section that measures configurations "
                        f"({', '.join(CONFIG_SECTIONS)}) to --only")
    if args.decode_tokens is not None and "decode" not in sections:
        raise UserError(f"--decode-tokens {args.decode_tokens} is used by the decode section alone, not by "
                        f"{', '.join(sections)}; drop --decode-tokens, or add decode to --only")
    if args.cache_dir is not None and not _trains_a_bpe(configs, sections):
        given = f" with --config {args.config_names}" if args.config_names is not None else ""
        raise UserError(f"--cache-dir {args.cache_dir!r} is not used by the section(s) {', '.join(sections)}{given}: "
                        f"only a configuration of a BPE tokenizer "
                        f"({', '.join(c for c in CONFIGS if CONFIGS[c].tokenizer.startswith('bpe:'))}) in a section "
                        f"that measures configurations ({', '.join(CONFIG_SECTIONS)}) caches one; drop --cache-dir")


def _trains_a_bpe(configs: tuple[str, ...], sections: tuple[str, ...]) -> bool:
    """Whether the run reads the BPE cache (``--cache-dir``): a BPE configuration in a configuration section, as
    ``run_benchmark`` loads it (the generator and memory sections measure the paper defaults, of o200k, bundled)."""
    return bool(set(CONFIG_SECTIONS) & set(sections)) and any(CONFIGS[c].tokenizer.startswith("bpe:") for c in configs)


def _check_cache_dir(path: Path) -> None:
    """UserError when --cache-dir is, or lies inside, another verb's output (the BPE folder it writes would be mixed
    into a data folder, an export or a run), or is anything but a folder: a named pipe or a user's file was taken
    without a word, exit 0, when no BPE was trained (issue 30 round 28, T12), and was a storage line after the
    timing's start otherwise."""
    from ..errors import file_above, not_a_folder_there

    if path.exists() and not path.is_dir():  # one helper names a file, a pipe, a device (issue 30 round 30, X25's kind)
        raise UserError(f"--cache-dir {str(path)!r} {not_a_folder_there(path)}; give a folder (a new one, or one "
                        f"bench cached its BPE in)")
    if (blocker := file_above(path)) is not None:
        raise UserError(f"--cache-dir {str(path)!r} cannot be made: {blocker!r} {not_a_folder_there(blocker)}; choose "
                        f"another --cache-dir, or move that file away")
    marker = read_marker(path) if path.is_dir() else None
    if marker is not None:
        raise UserError(f"--cache-dir {str(path)!r} is the output of `leviathan {marker.verb}` (its {MARKER} says so): "
                        f"the benchmark's BPE would be mixed into it; choose another --cache-dir")
    check_not_inside(path, "--cache-dir", ("prepare", "export", "train", "demo"), within=CONTAINERS, verb="bench")


def _check_json_target(path: str | Path) -> None:
    """UserError unless ``--json`` names a free path or an earlier ``bench --json`` result (a JSON object with the
    bench's ``environment`` and ``sections``): bench wrote its JSON over a user's file of that name, exit 0 (issue 30
    round 5). Then an OSError if the file could not be written there (read-only, a missing folder): found out only
    after the benchmark before. The rule is ``leviathan.result_json``'s, shared with the scripts (round 24, V40)."""
    check_json_target(path, "--json", _is_bench_result, "`leviathan bench --json`", by="bench", verb="bench")


def _check_earlier_result(path: Path) -> None:
    """UserError unless the file at ``path`` is an earlier ``bench --json`` result."""
    check_earlier_result(path, "--json", _is_bench_result, "`leviathan bench --json`", by="bench")


def _is_bench_result(earlier) -> bool:
    return isinstance(earlier, dict) and {"environment", "sections"} <= set(earlier)

"""One benchmark run: check the options, tokenize the text once per configuration, run the sections."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Callable

import torch

from ..errors import UserError
from ..io import hardware_info, load_average
from .configs import CONFIG_SECTIONS, CONFIGS, SECTIONS, BenchOptions, check_configs_once
from .data import TokenData, bench_tokenizer, token_stream
from .report import evaluate_targets
from .sections import decode, generator, hf, memory, modes, train, width

# in SECTIONS order: a run measures its sections in this order whatever order --only names them
RUNNERS = {"train": train.run, "modes": modes.run, "generator": generator.run, "memory": memory.run,
           "decode": decode.run, "hf": hf.run, "width": width.run}
assert tuple(RUNNERS) == SECTIONS


def environment() -> dict:
    """torch, threads, CPU, cores, Python, load average and OMP_WAIT_POLICY: what the timings depend on."""
    hw = hardware_info()
    return {"torch": hw["torch"], "threads": hw["torch_threads"], "cpu": hw["cpu"], "cores": hw["cores"],
            "python": platform.python_version(), "load_avg": load_average() or [float("nan")] * 3,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}


def load_data(configs, cache_dir: Path, log: Callable[[str], None] = print) -> dict[str, TokenData]:
    """The validation id stream of each configuration's tokenizer (a BPE is trained once and cached; configurations
    of one tokenizer share its stream, encoded once)."""
    from ..value_rules import check_callback

    check_callback("load_data", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    from ..io import books_note

    if configs and (note := books_note()) is not None:  # "training a BPE ... on stdlib sources" did not name
        log(note)  # $LEVIATHAN_DATA, whose folder holds no books (round 32's note, carried in round 33); demo's line
    data: dict[str, TokenData] = {}
    by_tokenizer: dict[str, TokenData] = {}
    for name in sorted(configs):
        bc = CONFIGS[name]
        if bc.tokenizer not in by_tokenizer:
            tok = bench_tokenizer(bc.tokenizer, cache_dir, log)
            stream, description = token_stream(tok)
            by_tokenizer[bc.tokenizer] = TokenData(stream, description, bc.tokenizer, int(tok.vocab_size))
        data[name] = by_tokenizer[bc.tokenizer]
        if data[name].vocab > bc.model("dense_tied").vocab_size:
            raise UserError(f"tokenizer {bc.tokenizer} has {data[name].vocab} ids, more than config {name}'s "
                            f"vocabulary")
    return data


def run_benchmark(opts: BenchOptions, log: Callable[[str], None] = print) -> dict:
    """Run the selected sections for the selected configurations; returns the JSON-able result. ``log`` None is
    print, as ``run_sweep``'s (issue 30 round 24, W718's kind: None was "'NoneType' object is not callable")."""
    from ..value_rules import check_callback

    check_callback("run_benchmark", "log", log)
    from ..value_rules import api_check, bench_rounds_problem

    if opts.repeats is not None:  # the flags' rule for a Python caller (Z157, Z166)
        api_check("run_benchmark", "opts.repeats", bench_rounds_problem(opts.repeats, 1), "pass 1 to a few dozen")
    api_check("run_benchmark", "opts.warmup", bench_rounds_problem(opts.warmup, 0), "pass 0 to a few")
    log = print if log is None else log
    if opts.threads is not None:
        torch.set_num_threads(opts.threads)
    unknown = [s for s in opts.sections if s not in SECTIONS]
    if unknown:
        raise UserError(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    bad = [c for c in opts.configs if c not in CONFIGS]
    if bad:
        raise UserError(f"unknown config(s) {', '.join(bad)}; choose from {', '.join(CONFIGS)}")
    check_configs_once(opts.configs)
    decode.check_decode_tokens(opts)  # before the data and the models (round 17, D339)
    result: dict = {"environment": environment(), "quick": opts.quick, "sections": {}}
    t_start = time.perf_counter()

    # token ids per configuration (cheap next to the model work; shared by the sections)
    needed = set(opts.configs) if set(CONFIG_SECTIONS) & set(opts.sections) else set()  # none: loaded for nothing
    if {"generator", "memory"} & set(opts.sections):
        needed.add("paper")  # the generator sections run on a real o200k batch at paper defaults
    data = load_data(needed, opts.cache_dir, log)
    result["data"] = {n: d.summary() for n, d in data.items()}

    for name, run in RUNNERS.items():
        if name in opts.sections:
            result["sections"][name] = run(opts, data, log)

    result["targets"] = evaluate_targets(result)
    result["environment"]["load_avg_end"] = load_average()
    result["wall_s"] = time.perf_counter() - t_start
    return result

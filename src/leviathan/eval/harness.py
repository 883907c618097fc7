"""Downstream evaluation through lm-evaluation-harness, offline, on OUR weights (docs/DESIGN.md §7).

    leviathan lm-eval runs/cpu/runs/m-leviathan-s0 --data-root ../shared/data --tasks paper --limit 200

Flow (``evaluate``):
1. Export: a run dir / checkpoint is loaded, its input side baked (every variant is then a table lookup) and
   written as a plain ``LlamaForCausalLM`` directory with a tokenizer transformers loads
   (``lm_export.export_for_harness``); an existing HF directory is used as is.
2. Guard: the exported directory is loaded back with transformers and its logits on a probe compared with our
   model's (``lm_export.verify_export``), and its tokenizer's ids with ours; if either differs, nothing is
   evaluated (never a hub model or a mismatched tokenizer scored silently).
3. Tasks: ``tasks.prepare_tasks`` renders the templates of ``leviathan/eval/tasks`` into a temporary folder with
   the absolute paths of the local data files under the data folder (``--data-root`` / ``$LEVIATHAN_DATA``;
   PIQA's separate labels merged into a temporary JSONL).
4. ``lm_eval.simple_evaluate(model=FittingHFLM(...), task_manager=TaskManager(include_path=TASKDIR,
   include_defaults=False))`` with ``HF_DATASETS_OFFLINE=1`` and ``HF_HUB_OFFLINE=1`` set for the call.

Short contexts (``hflm.fitting_hflm``). Our models have few positions (128-256), and lm-eval's HFLM cuts a long
context from the left but asserts ``len(continuation_enc) <= self.max_length``, aborting a whole run on the first
long answer. The subclass fits every request into the window first: the context cut from the left, a longer
continuation scored on its last ``max_length`` tokens. Footgun: such a log-likelihood is a partial sum (fewer, so
fewer negative, terms), which favours that choice; the counts are reported per task (``context_truncated``,
``continuation_truncated`` next to ``requests``), each request once, under the stronger cut.

Tasks (prefixed ``lev_``, never colliding with lm-eval's hub-backed ones): LAMBADA (OpenAI; acc and perplexity of
the last word), HellaSwag, PIQA, ARC-Easy, ARC-Challenge (test sets) and WinoGrande (dev), zero-shot, prompts as in
lm-eval's own definitions; ``paper`` selects all six.

Tokenizers: transformers needs a ``tokenizer.json``. A BPE trained by ``leviathan prepare`` has one; for the
built-in ``o200k_base``/``cl100k_base`` ``hf_tokenizer.builtin_tokenizer_json`` builds the equivalent byte-level BPE
(ranks from quicktok, merges as transformers' TikTokenConverter reconstructs them, the encoding's own regex), checked
to give quicktok's ids on a probe. ``tokenizer_config.json`` declares the end-of-text token as EOS and no BOS, so
lm-eval prefixes an empty context with end-of-text (how our models separate documents) and adds nothing else.

Footgun: our tokenizers treat special-token strings inside text as plain text; a transformers
tokenizer matches "<|endoftext|>" in text as the special token. The benchmark texts never contain it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ..errors import UserError, missing, not_a_folder_there, temporary_storage_error
from ..ownership import (CONTAINERS, MARKER, check_apart, check_claim, check_not_inside, check_output_files,
                         check_replaceable, export_again, mark, read_marker)
from .hflm import fitting_hflm, offline_env
from .lm_export import export_for_harness, is_hf_dir, verify_export
from .tasks import TASKS, check_present, prepare_tasks, resolve_tasks, task_data_root
from .weight_names import check_weight_names
from .. import json_text


def run_harness(hf_dir: str | os.PathLike, task_dir: str | os.PathLike, task_names: Sequence[str], *,
                limit: int | float | None = None, batch_size: int | str = 8, device: str = "cpu",
                dtype: str = "float32", num_fewshot: int | None = None, log_samples: bool = False,
                seed: int = 1234, shown: str | os.PathLike | None = None) -> dict:
    """``lm_eval.simple_evaluate`` on a local HF directory and local task YAMLs, offline.

    Parameters: lm-evaluation-harness's options, passed through one each; ``shown``: the folder to name in an error
    (the user's, when ``hf_dir`` is a view of it).
    """
    from ..value_rules import check_switches

    check_switches("run_harness", log_samples=log_samples)  # 'no' was true (round 30, Y621's kind)
    shown = hf_dir if shown is None else shown
    from ..devices import device_problem

    problem = device_problem(device, auto=False)  # the harness ran device="tpu" on the CPU without a word
    if problem is not None:
        raise UserError(f"lm-eval's device {problem}; pass one of those")
    try:
        import accelerate  # noqa: F401 - lm-eval's "hf" model imports it at module level
    except ImportError:
        raise UserError("lm-evaluation-harness's hf model needs the accelerate package: pip install accelerate "
                        "(or pip install 'lm-eval[hf]')") from None
    from .. import hf  # noqa: F401 - registers model_type "leviathan" with the Auto classes lm-eval loads through;
    # `leviathan lm-eval EXPORTED_DIR` never imported it and ended in "Transformers does not recognize this
    # architecture" (issue 30 round 5)
    with offline_env():
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager

        tm = TaskManager(include_path=str(task_dir), include_defaults=False)
        hf_dir = str(Path(hf_dir).resolve())
        # lm-eval prints progress to stdout; keep stdout for our own (JSON) output
        with contextlib.redirect_stdout(sys.stderr):
            try:
                lm = fitting_hflm()(pretrained=hf_dir, tokenizer=hf_dir, dtype=dtype, batch_size=batch_size,
                                    device=device)
            except (OSError, ValueError, RuntimeError, KeyError) as e:  # transformers' load errors: shapes, files
                first = next((line for line in str(e).splitlines() if line.strip()), type(e).__name__)
                raise UserError(f"lm-eval could not load {str(shown)!r} as a model ({first.strip()[:300]}); pass a folder "
                                f"written by `leviathan export` or `save_pretrained`, or the run folder") from None
            try:
                with _quiet_git_hash():
                    results = simple_evaluate(model=lm, tasks=list(task_names), task_manager=tm, limit=limit,
                                              num_fewshot=num_fewshot, log_samples=log_samples,
                                              random_seed=seed, numpy_random_seed=seed, torch_random_seed=seed,
                                              fewshot_random_seed=seed, bootstrap_iters=1000)
            except ValueError as e:
                if "larger than population" not in str(e):
                    raise
                raise UserError(f"--num-fewshot {num_fewshot} asks for more few-shot examples than a task holds "
                                f"({_fewshot_pools(task_names, tm)}); pass a smaller --num-fewshot") from None
        results["truncation"] = {"max_length": lm.max_length, "tasks": lm.truncation}
        return results


@contextlib.contextmanager
def _quiet_git_hash():
    """lm-eval records the git commit of the working folder with ``git describe`` and lets git's stderr through: run
    from a folder outside a repository, ``fatal: not a git repository ...`` reached the user's terminal beside a
    correct result (issue 30 round 11, R14). The same lookup, with git's complaint kept out of the output."""
    import subprocess
    from unittest import mock

    import lm_eval.evaluator as evaluator

    def quiet() -> str | None:
        try:
            out = subprocess.run(["git", "describe", "--always"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() or None if out.returncode == 0 else None

    with mock.patch.object(evaluator, "get_git_commit_hash", quiet):
        yield


def _fewshot_pools(task_names: Sequence[str], tm) -> str:
    """"TASK: N examples, ..." of each task's few-shot pool, for the error of a --num-fewshot beyond it: lm-eval's
    sampler ended in "ValueError: Sample larger than population" (issue 30 round 11, S107). The pool counts the
    example being scored when it is drawn from the evaluated split, so at most N - 1 are usable then."""
    from lm_eval.tasks import get_task_dict

    try:
        tasks = get_task_dict(list(task_names), tm)
        return ", ".join(f"{getattr(name, 'group_name', name)}: {len(list(task.fewshot_docs()))} examples"
                         for name, task in tasks.items() if hasattr(task, "fewshot_docs"))
    except Exception:  # noqa: BLE001 - only the numbers of a message: the error stands without them
        return "fewer than asked"


def summarize(results: dict, keys: Sequence[str]) -> dict:
    """{task key: {metric: value, metric_stderr: value}} from simple_evaluate's results."""
    out = {}
    for key in keys:
        name = TASKS[key].name
        r = (results.get("results") or {}).get(name, {})
        metrics = {}
        for k, v in r.items():
            if k == "alias" or not isinstance(v, (int, float)):
                continue
            metric = k.split(",")[0]
            metrics[metric] = float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None
        metrics["main_metric"] = TASKS[key].main_metric
        n = (results.get("n-samples") or {}).get(name, {})
        metrics["num_samples"] = n.get("effective")
        cuts = ((results.get("truncation") or {}).get("tasks") or {}).get(name, {})
        for k in ("requests", "context_truncated", "continuation_truncated"):
            metrics[k] = cuts.get(k, 0)
        out[key] = metrics
    return out


def evaluate(source: str | os.PathLike, tasks: str | Sequence[str] = "paper", *,
             data: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None,
             keep_export: bool = False, **kwargs) -> dict:
    """Evaluate a run dir, a checkpoint step dir, or an HF directory on downstream tasks: ``{"source", "hf_dir", "tasks":
    summary, "verify": {...}, "results": lm-eval's dict}``. ``out_dir`` (optional) receives ``lm_eval.json`` and, with
    ``keep_export``, the exported model as ``out_dir/hf``; other keyword arguments are ``evaluate_model``'s.
    """
    from ..value_rules import check_switches

    check_switches("evaluate", keep_export=keep_export)  # 'no' was true (round 30, Y621's kind)
    src = Path(source)
    if not os.path.exists(src):  # Path.exists raised ENAMETOOLONG for a 300-byte name (round 14, B328)
        raise UserError(f"{str(src)!r} {missing(src)}; pass a run dir, a checkpoint step dir or an HF directory")
    marker = read_marker(src) if src.is_dir() else None
    hf_source = is_hf_dir(src) or (marker is not None and marker.verb == "export")  # evaluated as it is: no export
    if out_dir:  # before the evaluation: never over a user's lm_eval.json or hf/ (``leviathan.ownership``)
        _check_out(src, data, out_dir, keep_export, hf_source)
    check_model_options(tasks, data, **kwargs)  # all before --out is made (round 16, C51, C56-C58)
    model = tokenizer = export = None  # the export kept as out_dir/hf
    if hf_source:  # an export without its config.json was
        _check_hf_folder(src)  # "checkpoint ... is incomplete (missing optimizer.pt, state.json, ...)" (round 7)
    else:
        from ..checkpoint.read import load_model, load_tokenizer

        model, _ = load_model(str(src))  # a data folder, no checkpoint: refused before --out is made (C59)
        tokenizer = load_tokenizer(str(src))
        export = Path(out_dir) / "hf" if (out_dir and keep_export) else None
    if out_dir:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        mark(out_dir, "lm-eval", OUT_FILES)  # before the export into it: a stopped evaluation can be rerun
    out = evaluate_model(model, tokenizer, tasks, data=data, hf_dir=src if model is None else export, **kwargs)
    out["source"] = str(src)
    if out_dir:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        from ..io import atomic_write_json
        from .. import stop_signals

        with stop_signals.held_stops(deliver_after=True):  # a stop is said once the results are in (round 23, T11's
            atomic_write_json(Path(out_dir) / "lm_eval.json", _jsonable(out))  # kind: "run it again" re-scored them)
            if export is None:
                _remove_earlier_export(Path(out_dir))
            mark(out_dir, "lm-eval", OUT_FILES)
            stop_signals.placed(out_dir)  # `lm-eval --out`'s output: a stop from here on says it is complete
    return out


def _check_out(src: Path, data, out_dir, keep_export: bool, hf_source: bool) -> None:
    """UserError, before any work, when ``out_dir`` is not a place lm-eval may write (apart from the model and the task
    data, not inside another output, no user file of lm-eval's names) or its ``hf`` would be deleted unproven. An HF
    source is evaluated as it is, so ``--keep-export`` kept nothing and the earlier OUT/hf was removed unchecked: an
    export of the user's with their NOTES.md, or a folder of their own, deleted, exit 0 (issue 30 round 17, D148,
    D150, D151). ``--keep-export`` of an HF folder is refused now; OUT/hf goes only when it is lm-eval's own export."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):  # named before the task data: without
        # --data-root a pipe as --out got "the task files live in the data folder" (the CI of f9cb519)
        raise UserError(f"--out {os.fspath(out_dir)!r} {not_a_folder_there(out_dir)}; choose another --out")
    check_apart(src, "the evaluated model's folder", out_dir, "--out")
    _check_out_not_in_data(data, out_dir)
    check_not_inside(out_dir, "--out", ("train", "prepare", "export"), within=CONTAINERS, verb="lm-eval")  # C204
    check_claim(out_dir, "lm-eval", OUT_FILES, "choose another --out", legacy=_earlier_out,
                alone=True)  # not among a user's files (round 18, the kind of G133)
    if keep_export and hf_source:
        raise UserError(f"--keep-export keeps the HF export lm-eval makes of a checkpoint, but {str(src)!r} is an HF "
                        f"folder already, evaluated as it is (nothing is exported); drop --keep-export")
    if not keep_export and os.path.lexists(Path(out_dir) / "hf"):  # removed once the results are in (B293)
        check_replaceable(Path(out_dir) / "hf", "export", "lm-eval without --keep-export", digested=True)


def _check_out_not_in_data(data, out_dir) -> None:
    """UserError when ``--out`` is the task data root (``--data-root``) or lies inside it: lm_eval.json and a marker
    saying the folder is lm-eval's output were written into the task files' folder (issue 30 round 15, B105). An --out
    that holds the data root (``--out . --data-root ./data``) is fine: nothing is written into the data."""
    if not data:
        return
    root, out = Path(os.path.realpath(data)), Path(os.path.realpath(out_dir))
    if out == root or out.is_relative_to(root):
        raise UserError(f"--out {str(out_dir)!r} {'is' if out == root else 'lies inside'} the task data root "
                        f"(--data-root {str(data)!r}): lm-eval's results would be written among its task files; "
                        f"choose an --out outside it")


def _remove_earlier_export(out_dir: Path) -> None:
    """Remove ``out_dir/hf`` left by an earlier ``--keep-export`` evaluation into the same --out (its own: check_claim
    let this one in) once this evaluation's lm_eval.json, which kept no export, is in place. It stayed beside the new
    results, and after an evaluation of another run the folder held that run's results with the first run's model
    (issue 30 round 15, B293, B294)."""
    from ..removal import remove_tree

    earlier = out_dir / "hf"
    if not os.path.lexists(earlier):
        return
    problem = remove_tree(earlier) if earlier.is_dir() and not earlier.is_symlink() else None
    if not earlier.is_dir() or earlier.is_symlink():
        earlier.unlink(missing_ok=True)
    if problem is not None:
        print(f"warning: the earlier evaluation's export {str(earlier)!r} could not all be removed ({problem}): it is "
              f"not the model of {str(out_dir / 'lm_eval.json')!r}; delete it by hand", file=sys.stderr)


# What ``evaluate`` writes into its out_dir (``ownership.check_claim``).
OUT_FILES = ("lm_eval.json", "hf")


def _earlier_out(out_dir: Path) -> bool:
    """An out_dir an earlier version of lm-eval wrote (no ownership marker yet): its lm_eval.json."""
    try:
        summary = json_text.read_file(out_dir / "lm_eval.json")
    except (OSError, ValueError):
        return False
    # every field as lm-eval writes it: a user's {"tasks": 5, "source": null} was taken for one and written over
    # (issue 30 round 12, U84)
    return (isinstance(summary, dict) and isinstance(summary.get("source"), str)
            and isinstance(summary.get("tasks"), dict) and all(isinstance(v, dict) for v in summary["tasks"].values())
            and isinstance(summary.get("results"), dict))


def _check_hf_folder(src: Path) -> None:
    """An HF folder evaluated as is: the files its export marker fingerprints must be the ones written; a folder with
    no marker (transformers' own, an export of an earlier version, or one whose marker was removed) cannot be checked,
    and a note says so; either way a tokenizer with ids the model has no row for is refused.

    Footgun: without the marker a tokenizer.json swapped in from another preparation of the same size is scored as
    it is (issue 30 round 5); nothing in the folder can tell it from a user's own tokenizer."""
    if read_marker(src) is None:
        print(f"note: {str(src)!r} holds no {MARKER}, so its files are evaluated as they are, not checked against "
              f"the fingerprints `leviathan export` records", file=sys.stderr)
    else:
        check_output_files(src, f"{export_again(src)}, or evaluate the run folder itself")
    ids, rows = _tokenizer_size(src), _config_vocab(src)
    if rows is not None and rows < 1:  # round 8 (K20): -5 blamed the tokenizer
        raise UserError(f"{str(src / 'config.json')!r}: field 'vocab_size' is {rows}, not a vocabulary size (>= 1): "
                        f"config.json was edited or damaged; {export_again(src)}")
    if ids is not None and rows is not None and ids > rows:
        raise UserError(f"the tokenizer of {str(src)!r} has {ids:,} ids but the model's config.json has vocab_size "
                        f"{rows:,}: they come from different models; put the model's own tokenizer in the folder")
    check_weight_names(src)  # an edited config.json: tensors drawn at random or dropped (round 13, W30)
    if (src / "tokenizer.json").is_file() and ((src / "tokenizer_config.json").is_file()
                                               or not (src / "leviathan_tokenizer.json").is_file()):
        _check_end_of_text(src)


def _check_end_of_text(src: Path) -> None:
    """UserError when the folder's transformers tokenizer has neither an end-of-text (eos) nor a beginning (bos) token:
    lm-eval starts every request with one of them and ended in a TypeError (``tokenizer.decode(None)``) on a plain
    Llama folder with a bare tokenizer.json (issue 30 round 12, U191)."""
    from transformers import AutoTokenizer

    try:
        with offline_env():
            tok = AutoTokenizer.from_pretrained(str(src))
    except Exception:  # noqa: BLE001 - a folder transformers cannot read is named by the harness's own load
        return
    if tok.eos_token_id is None and tok.bos_token_id is None:
        raise UserError(f"the tokenizer of {str(src)!r} defines no end-of-text (eos) or beginning (bos) token, which "
                        f"lm-eval starts every request with; add a tokenizer_config.json naming eos_token, or evaluate "
                        f"the leviathan run folder (its export writes one)")


def _tokenizer_size(src: Path) -> int | None:
    """Ids of the folder's tokenizer (leviathan's file, else a transformers tokenizer.json), None when it has neither."""
    if (src / "leviathan_tokenizer.json").is_file():
        from ..data.tokenizer import load_tokenizer

        return load_tokenizer(src).vocab_size
    if (src / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        try:
            text = (src / "tokenizer.json").read_text(encoding="utf-8")  # from_file: UTF-8 names only (G428)
            return Tokenizer.from_str(text).get_vocab_size(with_added_tokens=True)
        except Exception as e:  # tokenizers raises its own Exception type for a damaged file
            raise UserError(f"{str(src / 'tokenizer.json')!r} does not load as a tokenizer ({e}); put the model's "
                            f"own tokenizer in the folder") from None
    return None


def _config_vocab(src: Path) -> int | None:
    try:
        value = json_text.read_file(src / "config.json").get("vocab_size")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None  # transformers names a damaged config.json itself
    return value if isinstance(value, int) and not isinstance(value, bool) else None


DTYPES = ("float32", "bfloat16", "float16", "float64")  # lm-eval's --dtype: what transformers loads a model in
MAX_LIMIT = 10**9  # examples per task: lm-eval slices a task's documents with it


def check_harness_options(limit, batch_size, num_fewshot, device) -> None:
    """ConfigError (a ValueError) naming the option and its valid values, before any work (the Python API had no checks: ``limit=1e30``
    ended in lm-eval's islice ValueError, ``limit=float('inf')`` in an OverflowError, ``num_fewshot=1.5`` in its
    sampler's TypeError; ``limit=True``, ``num_fewshot=True`` and ``batch_size=-3`` were taken; ``device='cuda:7'`` ran
    on the CPU: issue 30 round 12, U78, U155-U162)."""
    from ..devices import device_problem, device_unavailable
    from ..errors import ConfigError

    if limit is not None:
        whole = isinstance(limit, int) or (isinstance(limit, float) and limit.is_integer())
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0 or \
                (limit >= 1 and not (whole and limit <= MAX_LIMIT)):
            raise ConfigError(f"limit must be a fraction in (0, 1) of each task's examples or a whole number of "
                             f"examples from 1 to {MAX_LIMIT:,}, got {limit!r}")
    if not (batch_size == "auto" or (isinstance(batch_size, int) and not isinstance(batch_size, bool)
                                     and batch_size >= 1)):
        raise ConfigError(f"batch_size must be 'auto' or a whole number >= 1, got {batch_size!r}")
    if num_fewshot is not None and (isinstance(num_fewshot, bool) or not isinstance(num_fewshot, int)
                                    or num_fewshot < 0):
        raise ConfigError(f"num_fewshot must be a whole number >= 0 (or None for the tasks' own), got {num_fewshot!r}")
    problem = device_problem(device, auto=False) or device_unavailable(device)
    if problem is not None:
        raise ConfigError(f"device {problem}")


def check_model_options(tasks: str | Sequence[str], data: str | os.PathLike | None, *, limit=None, batch_size=8,
                        device: str = "cpu", dtype: str = "float32", num_fewshot=None, **_) -> tuple[list[str], Path]:
    """``evaluate_model``'s checks of what it is asked, none of which needs the model: the options, the task names, the
    data root and every task's files there; returns (task keys, data root). ``evaluate`` runs them before it makes
    its --out: an unknown task, a missing data file, --device cuda without CUDA or an empty --tasks item each left an
    --out holding only lm-eval's marker (issue 30 round 16, C51, C56, C57, C58). Parameters: ``evaluate_model``'s
    own, one each, so that each is checked as it will be used."""
    check_harness_options(limit, batch_size, num_fewshot, device)
    if dtype not in DTYPES:  # "bogus": an AttributeError inside lm-eval; "int8": blamed the model (round 14, B135)
        from ..errors import ConfigError

        raise ConfigError(f"dtype must be one of {', '.join(DTYPES)} (the floating-point types a model loads in), "
                          f"got {dtype!r:.40}")
    keys = resolve_tasks(tasks)
    root = task_data_root(data)
    for key in keys:
        check_present(key, [root / p for p in TASKS[key].files])
    return keys, root


def evaluate_model(model, tokenizer, tasks: str | Sequence[str] = "paper", *, data: str | os.PathLike | None = None,
                   hf_dir: str | os.PathLike | None = None, limit: int | float | None = None,
                   batch_size: int | str = 8, device: str = "cpu", dtype: str = "float32",
                   num_fewshot: int | None = None, verify: bool = True, log_samples: bool = False) -> dict:
    """Export ``model`` (a ``CausalLM``) with ``tokenizer`` to ``hf_dir`` (kept) or a temporary folder (removed) and run
    the tasks on it; with ``model=None``, ``hf_dir`` is an existing HF directory, evaluated as is. The task files come
    from the data folder ``data`` (``task_data_root``); ``limit`` caps examples per task.

    Parameters: the options of ``leviathan lm-eval``, keyword arguments one each, passed on to the harness.
    """
    if model is not None:  # a path was taken as a built-in encoding's name, after the tasks were built (U510)
        from ..hf.export import refuse_tokenizer_path

        refuse_tokenizer_path(tokenizer, "evaluate_model")
    from ..integers import as_int
    from ..value_rules import check_switches

    # verify='no' was read as true; numpy's ints and bools are integers and switches, kept as Python's for the
    # returned record (round 29: W768's and W504's kind)
    check_switches("evaluate_model", verify=verify, log_samples=log_samples)
    verify, log_samples = bool(verify), bool(log_samples)
    limit, batch_size, num_fewshot = as_int(limit), as_int(batch_size), as_int(num_fewshot)
    keys, root = check_model_options(tasks, data, limit=limit, batch_size=batch_size, device=device, dtype=dtype,
                                     num_fewshot=num_fewshot)
    try:
        work = Path(tempfile.mkdtemp(prefix="leviathan-lm-eval-"))
    except OSError as e:
        raise _in_temporary(e, Path(tempfile.gettempdir())) from None
    try:
        return _evaluate_in(work, model, tokenizer, keys, root, hf_dir, limit, batch_size, device, dtype, num_fewshot,
                            verify, log_samples)
    except OSError as e:
        raise _in_temporary(e, work) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _in_temporary(e: OSError, work: Path) -> Exception:
    """A storage failure in lm-eval's temporary folder (its task files, the model's export) as one line naming the
    file and TMPDIR (``errors.temporary_storage_error``); ``e`` itself for any other error."""
    return temporary_storage_error(e, work, "lm-eval writes its task files and the model's export",
                                   "leviathan lm-eval ...") or e


def _evaluate_in(work: Path, model, tokenizer, keys, root, hf_dir, limit, batch_size, device, dtype, num_fewshot,
                 verify, log_samples) -> dict:
    """``evaluate_model``'s work in the temporary folder ``work``. Parameters: ``evaluate_model``'s own, passed on one
    each, and the folder."""
    names = prepare_tasks(root, work / "tasks", keys)
    check = None
    if model is None:
        if hf_dir is None:
            raise UserError("evaluate_model needs a model or an existing hf_dir")
        target = _with_hf_tokenizer(Path(hf_dir), work / "view")
    else:
        target = Path(hf_dir) if hf_dir is not None else work / "hf"
        export_for_harness(model, tokenizer, target, overwrite_flag="--keep-export (keep_export=True)")
        if verify:
            check = verify_export(model, tokenizer, target)
    results = run_harness(target, work / "tasks", [names[k] for k in keys], limit=limit, batch_size=batch_size,
                          device=device, dtype=dtype, num_fewshot=num_fewshot, log_samples=log_samples,
                          shown=hf_dir if model is None else None)
    return {"hf_dir": str(target), "tasks": summarize(results, keys), "verify": check, "limit": limit,
            "task_names": names, "results": results}


def _with_hf_tokenizer(hf_dir: Path, view: Path) -> Path:
    """``hf_dir``, or, for a folder ``leviathan export`` wrote (its tokenizer in leviathan's files, no
    tokenizer_config.json), a view of it (links to its files) with the transformers tokenizer lm-eval loads
    (``write_hf_tokenizer``, as for a run): before, lm-eval met a tokenizer without an end-of-text token and ended in a
    TypeError traceback (issue 30 round 5)."""
    if (hf_dir / "tokenizer_config.json").is_file() or not (hf_dir / "leviathan_tokenizer.json").is_file():
        return hf_dir
    from ..data.tokenizer import load_tokenizer
    from .hf_tokenizer import write_hf_tokenizer_owned

    tokenizer = load_tokenizer(hf_dir)
    try:
        positions = json_text.read_file(hf_dir / "config.json").get("max_position_embeddings")
    except (OSError, ValueError, AttributeError):
        positions = None
    view.mkdir(parents=True)
    for item in hf_dir.iterdir():
        if item.name not in ("tokenizer.json", "tokenizer_config.json"):
            os.symlink(item.resolve(), view / item.name)
    write_hf_tokenizer_owned(tokenizer, view, positions if isinstance(positions, int) else None)
    return view


def _jsonable(obj: Any) -> Any:
    """lm-eval's results as plain JSON values; a NaN or infinite score (a standard error of one document) as null:
    ``io.atomic_write_json`` writes strict JSON and refuses them (issue 30 round 25, Y311)."""
    text = json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o))
    return json.loads(text, parse_constant=lambda constant: None)


def format_summary(summary: dict) -> str:
    lines = [f"{'task':<16} {'metric':<12} {'value':>10}"]
    for key, metrics in summary.items():
        for m in ("acc", "acc_norm", "perplexity"):
            if metrics.get(m) is not None:
                err = metrics.get(f"{m}_stderr")
                lines.append(f"{key:<16} {m:<12} {metrics[m]:>10.4f}" + (f" ± {err:.4f}" if err else ""))
    cut = {k: m for k, m in summary.items() if m.get("context_truncated") or m.get("continuation_truncated")}
    if cut:
        lines.append("requests longer than the model's context (context cut from the left; a continuation cut to "
                     "its last positions, so scored partially):")
        lines.append(f"{'task':<16} {'requests':>9} {'ctx cut':>9} {'cont cut':>9}")
        for key, m in cut.items():
            lines.append(f"{key:<16} {m['requests']:>9} {m['context_truncated']:>9} {m['continuation_truncated']:>9}")
    return "\n".join(lines)

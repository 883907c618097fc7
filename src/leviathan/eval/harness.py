"""Downstream evaluation through lm-evaluation-harness, offline, on OUR weights (docs/DESIGN.md §7).

    leviathan lm-eval runs/cpu/runs/m-leviathan-s0 --data-root ../shared/data --tasks paper --limit 200

Flow (``evaluate``):
1. Export. A run dir / checkpoint is loaded (``leviathan.checkpoint.load_model``), its input side baked,
   and written as a plain ``LlamaForCausalLM`` directory (``hf.export.to_plain_llama``) together with
   a tokenizer that transformers loads (``export_for_harness``). An existing HF directory is used as
   is. Every variant (dense, leviathan, factorised, compositional) exports the same way: after
   baking, all are a table lookup.
2. Guard. The exported directory is loaded back with transformers and its logits on a probe are
   compared with our model's (``verify_export``), and its tokenizer's ids with ours: if either
   differs, nothing is evaluated (users of other projects were bitten by silently scoring a hub
   model or a mismatched tokenizer).
3. Tasks. ``prepare_tasks`` renders the task templates of ``leviathan/eval/tasks`` into a temporary
   folder with the absolute paths of the local data files (``dataset_path: json``) under the data
   folder (``--data-root`` / ``$LEVIATHAN_DATA``; nothing is copied into the repository). PIQA's
   labels live in a separate file; they are merged into a temporary JSONL there.
4. ``lm_eval.simple_evaluate(model=FittingHFLM(pretrained=DIR, tokenizer=DIR, ...),
   task_manager=TaskManager(include_path=TASKDIR, include_defaults=False))`` with
   ``HF_DATASETS_OFFLINE=1`` and ``HF_HUB_OFFLINE=1`` set for the call.

Short contexts (``fitting_hflm``). Our models have few positions (128-256), and lm-eval's ``hf``
model (HFLM) only half-handles requests longer than that: it cuts the context from the left, but
asserts ``len(continuation_enc) <= self.max_length`` and so aborts a whole full-set run on the first
long answer (a PIQA solution, say). The subclass fits every request into the window before HFLM
sees it: the context is cut from the left (what HFLM itself does, minus its one warning line per
request), and a continuation longer than the window is scored on its last ``max_length`` tokens --
the positions that fit, conditioned on the continuation's own earlier tokens. Footgun: such a
log-likelihood is a partial sum (fewer, so fewer negative, terms), so that choice is favoured in a
multiple-choice comparison; the counts are therefore reported per task (``context_truncated``,
``continuation_truncated`` next to ``requests`` in the summary) so a reader can judge whether they
matter. A request is counted once, under the stronger cut.

Tasks (names prefixed ``lev_`` so they never collide with lm-eval's hub-backed ones): LAMBADA
(OpenAI; acc and perplexity of the last word), HellaSwag, PIQA, ARC-Easy, ARC-Challenge (test sets)
and WinoGrande (dev), zero-shot, prompts as in lm-eval's own definitions. ``paper`` selects all six.

Tokenizers. transformers needs a ``tokenizer.json``. A BPE trained by ``leviathan prepare`` has one.
The built-in ``o200k_base``/``cl100k_base`` (quicktok) do not; ``builtin_tokenizer_json`` builds the
equivalent byte-level BPE (ranks from quicktok, merges reconstructed as transformers'
TikTokenConverter does, the encoding's own pre-tokenizer regex) and the export checks it produces
quicktok's ids on a probe. ``tokenizer_config.json`` declares ``PreTrainedTokenizerFast`` with the
end-of-text token as EOS and no BOS, so lm-eval prefixes an empty context with end-of-text (how
our models separate documents) and adds nothing else.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import UserError
from ..io import cache_root, data_root

TASK_DIR = Path(__file__).with_name("tasks")
PROBE_TEXT = ("The quick brown fox, 42 times: jumps over the lazy dog.\nLeviathan's émigrés said \"hello\"  "
              "and   left.\n\n\tdef f(x): return x**2  # 3.14159")

# cl100k_base's pre-tokenizer (tiktoken's pat_str, verbatim); o200k's lives in data.tokenizer.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
                  r"""|\s*[\r\n]|\s+(?!\S)|\s+""")


@dataclass(frozen=True)
class TaskSpec:
    """A benchmark: its template, its files under the data folder, and the metric the summary shows."""

    name: str  # lm-eval task name
    template: str
    files: tuple[str, ...]
    main_metric: str
    kind: str = "plain"  # "piqa": labels merged from a separate file


TASKS: dict[str, TaskSpec] = {
    "lambada_openai": TaskSpec("lev_lambada_openai", "lambada_openai.yaml",
                               ("lambada_openai/lambada_test.jsonl",), "acc"),
    "hellaswag": TaskSpec("lev_hellaswag", "hellaswag.yaml",
                          tuple(f"hellaswag/hellaswag_val.part{i}of3.jsonl" for i in (1, 2, 3)), "acc_norm"),
    "piqa": TaskSpec("lev_piqa", "piqa.yaml", ("piqa/valid.jsonl", "piqa/valid-labels.lst"), "acc_norm", "piqa"),
    "arc_easy": TaskSpec("lev_arc_easy", "arc_easy.yaml", ("arc_easy/ARC-Easy-Test.jsonl",), "acc_norm"),
    "arc_challenge": TaskSpec("lev_arc_challenge", "arc_challenge.yaml",
                              ("arc_challenge/ARC-Challenge-Test.jsonl",), "acc_norm"),
    "winogrande": TaskSpec("lev_winogrande", "winogrande.yaml", ("winogrande/winogrande_dev.jsonl",), "acc"),
}
PAPER_TASKS = ("lambada_openai", "hellaswag", "piqa", "arc_easy", "arc_challenge", "winogrande")


def resolve_tasks(names: str | Sequence[str]) -> list[str]:
    """``"paper"`` or comma-separated names (with or without the ``lev_`` prefix) -> our task keys."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    out = []
    for n in names:
        if n in ("paper", "all"):
            out += [t for t in PAPER_TASKS if t not in out]
            continue
        key = n.removeprefix("lev_")
        if key not in TASKS:
            raise UserError(f"unknown task {n!r}; choose from paper, {', '.join(TASKS)}")
        if key not in out:
            out.append(key)
    if not out:
        raise UserError("no tasks given; use --tasks paper or a comma-separated list")
    return out


def task_data_root(explicit: str | os.PathLike | None = None) -> Path:
    """The data folder holding the task files (``leviathan.io.data_root``); a UserError when none is given."""
    value = data_root(explicit)
    if not value:
        raise UserError("the downstream task files live in the data folder: pass --data-root DIR or set "
                        "LEVIATHAN_DATA (e.g. ../shared/data)")
    root = Path(value).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"data folder {str(root)!r} does not exist; pass --data-root or set LEVIATHAN_DATA")
    return root


# --------------------------------------------------------------------------------------------
# tasks


def prepare_tasks(root: str | os.PathLike, out_dir: str | os.PathLike, tasks: Sequence[str],
                  files: dict[str, Sequence[str | os.PathLike]] | None = None) -> dict[str, str]:
    """Render task YAMLs with absolute data paths into ``out_dir``; returns {our key: lm-eval task name}.

    ``files`` replaces the default files of a task (absolute paths or relative to ``root``); the
    tests use it to point at tiny fixtures.
    """
    root, out = Path(root), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(TASK_DIR / "utils.py", out / "utils.py")
    cache = out / "hf_datasets_cache"
    names = {}
    for key in tasks:
        spec = TASKS[key]
        paths = [Path(p) if Path(p).is_absolute() else root / p for p in (files or {}).get(key, spec.files)]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise UserError(f"task {key}: missing data file(s) {', '.join(missing)}; is the data folder right "
                            f"(--data-root / LEVIATHAN_DATA)?")
        if spec.kind == "piqa":
            paths = [_merge_piqa(paths[0], paths[1], out / "piqa_valid_labeled.jsonl")]
        text = (TASK_DIR / spec.template).read_text()
        text = text.replace("__DATA_FILES__", json.dumps([str(p.resolve()) for p in paths]))
        text = text.replace("__CACHE_DIR__", json.dumps(str(cache.resolve())))
        (out / spec.template).write_text(text)
        names[key] = spec.name
    return names


def _merge_piqa(docs: Path, labels: Path, out: Path) -> Path:
    lines = [json.loads(line) for line in docs.read_text().splitlines() if line.strip()]
    gold = [int(v) for v in labels.read_text().split()]
    if len(lines) != len(gold):
        raise UserError(f"PIQA: {docs} has {len(lines)} examples but {labels} has {len(gold)} labels")
    with open(out, "w") as f:
        for doc, label in zip(lines, gold):
            f.write(json.dumps({"goal": doc["goal"], "sol1": doc["sol1"], "sol2": doc["sol2"], "label": label}) + "\n")
    return out


# --------------------------------------------------------------------------------------------
# tokenizer.json for transformers


def builtin_tokenizer_json(name: str) -> str:
    """A ``tokenizer.json`` (byte-level BPE) equivalent to the quicktok built-in encoding ``name``.

    Cached under ``$LEVIATHAN_CACHE`` (default ~/.cache/leviathan) after the first build (seconds).
    """
    from ..data.tokenizer import O200K_PATTERN

    patterns = {"o200k_base": O200K_PATTERN, "cl100k_base": CL100K_PATTERN}
    if name not in patterns:
        raise UserError(f"no tokenizer.json recipe for built-in encoding {name!r}; known: {', '.join(patterns)}")
    cache = cache_root() / "tokenizers" / f"{name}.tokenizer.json"
    if cache.is_file():
        return cache.read_text()
    import quicktok
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    enc = quicktok.get_encoding(name)
    ranks: dict[bytes, int] = {}
    specials: list[tuple[int, str]] = []
    for i in range(enc.n_vocab):
        try:
            b = bytes(enc.decode_single_token_bytes(i))
        except Exception:  # noqa: BLE001 - unused ids inside the vocabulary range
            continue
        if enc.is_special_token(i):
            specials.append((i, b.decode("utf-8")))
        else:
            ranks[b] = i
    byte_encoder = bytes_to_unicode()

    def to_str(b: bytes) -> str:
        return "".join(byte_encoder[c] for c in b)

    # tiktoken's BPE merges by rank; the HF equivalent lists, for each token, the split into two
    # tokens that exist, ordered by the merged token's rank (transformers' TikTokenConverter)
    merges = []
    for token, rank in ranks.items():
        if len(token) == 1:
            continue
        local = [(token[:k], token[k:]) for k in range(1, len(token)) if token[:k] in ranks and token[k:] in ranks]
        local.sort(key=lambda p: (ranks[p[0]], ranks[p[1]]))
        merges += [(rank, p) for p in local]
    merges.sort(key=lambda m: m[0])
    vocab = {to_str(b): i for b, i in ranks.items()}
    vocab.update({text: i for i, text in specials})  # so the added special tokens keep their ids
    tok = Tokenizer(models.BPE(vocab, [(to_str(a), to_str(b)) for _, (a, b) in merges], fuse_unk=False,
                               ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(patterns[name]), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    for i, text in sorted(specials):
        got = tok.add_special_tokens([AddedToken(text, normalized=False, special=True)])
        if tok.token_to_id(text) != i:
            raise UserError(f"special token {text!r} of {name} got id {tok.token_to_id(text)} instead of {i} "
                            f"(added {got}); the tokenizer.json recipe needs updating")
    probe = PROBE_TEXT + " 1234567 ÆØÅ 日本語のテキスト 🙂"
    if tok.encode(probe, add_special_tokens=False).ids != list(enc.encode_ordinary(probe)):
        raise UserError(f"the tokenizer.json rebuilt for {name} does not reproduce quicktok's ids; "
                        f"cannot export a transformers tokenizer for it")
    text = tok.to_str()
    cache.parent.mkdir(parents=True, exist_ok=True)
    from ..io import atomic_write_text

    atomic_write_text(cache, text)
    return text


def _eot_text(tokenizer) -> str:
    hf = getattr(tokenizer, "_hf", None)
    if hf is not None:
        tok = hf.id_to_token(int(tokenizer.eot_id))
        if tok:
            return tok
    return "<|endoftext|>"


def write_hf_tokenizer(tokenizer, directory: str | os.PathLike, model_max_length: int | None = None) -> None:
    """Make ``directory`` loadable by ``AutoTokenizer``: tokenizer.json + tokenizer_config.json."""
    directory = Path(directory)
    if hasattr(tokenizer, "to_json"):
        text = tokenizer.to_json()
    elif getattr(tokenizer, "kind", None) == "builtin":
        text = builtin_tokenizer_json(tokenizer.name)
    else:
        raise UserError(f"cannot write a tokenizer.json for {tokenizer!r}: it is neither a tokenizer.json-based "
                        f"tokenizer nor a known built-in encoding")
    (directory / "tokenizer.json").write_text(text)
    eot = _eot_text(tokenizer)
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eot, "bos_token": None, "unk_token": None,
              "pad_token": eot, "add_bos_token": False, "add_eos_token": False,
              "clean_up_tokenization_spaces": False, "model_max_length": model_max_length or 1_000_000,
              "leviathan_tokenizer": getattr(tokenizer, "name", None)}
    (directory / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")


# --------------------------------------------------------------------------------------------
# export and verification


def export_for_harness(model, tokenizer, out_dir: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """Plain-Llama HF directory (baked input side) + a transformers tokenizer for ``model``."""
    from ..hf.export import to_plain_llama

    out = Path(to_plain_llama(model, out_dir, overwrite=overwrite))
    write_hf_tokenizer(tokenizer, out, model.config.max_position_embeddings)
    return out


def verify_export(model, tokenizer, hf_dir: str | os.PathLike, atol: float = 1e-3) -> dict:
    """Load ``hf_dir`` with transformers alone; its tokenizer and logits must match ours."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hf_tok = AutoTokenizer.from_pretrained(str(hf_dir))
    ours = list(tokenizer.encode(PROBE_TEXT))
    theirs = hf_tok.encode(PROBE_TEXT, add_special_tokens=False, verbose=False)
    if ours != theirs:
        raise UserError(f"the exported tokenizer in {hf_dir} encodes differently from the model's own "
                        f"({len(theirs)} vs {len(ours)} ids); refusing to evaluate")
    hf = AutoModelForCausalLM.from_pretrained(str(hf_dir), dtype=torch.float32)
    hf.eval()
    n = min(len(ours), model.config.max_position_embeddings)
    ids = torch.tensor([ours[:n]])
    with torch.no_grad():
        ref, _ = model(ids.to(model.device))
        got = hf(ids).logits
    diff = float((ref.float().cpu() - got.float()).abs().max())
    if not diff <= atol:
        raise UserError(f"the exported model's logits differ from ours by {diff:.3g} (> {atol}); refusing to "
                        f"evaluate a model that is not the checkpoint")
    return {"probe_tokens": n, "max_abs_logit_diff": diff}


@contextlib.contextmanager
def offline_env():
    keys = ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM")
    old = {k: os.environ.get(k) for k in keys}
    os.environ.update({"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                       "TOKENIZERS_PARALLELISM": old["TOKENIZERS_PARALLELISM"] or "false"})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _is_hf_dir(path: Path) -> bool:
    return (path / "config.json").is_file() and not (path / "checkpoints").exists() and \
        not (path / "state.json").is_file()


# --------------------------------------------------------------------------------------------
# evaluation


def run_harness(hf_dir: str | os.PathLike, task_dir: str | os.PathLike, task_names: Sequence[str], *,
                limit: int | float | None = None, batch_size: int | str = 8, device: str = "cpu",
                dtype: str = "float32", num_fewshot: int | None = None, log_samples: bool = False,
                seed: int = 1234) -> dict:
    """``lm_eval.simple_evaluate`` on a local HF directory and local task YAMLs, offline."""
    try:
        import accelerate  # noqa: F401 - lm-eval's "hf" model imports it at module level
    except ImportError:
        raise UserError("lm-evaluation-harness's hf model needs the accelerate package: pip install accelerate "
                        "(or pip install 'lm-eval[hf]')") from None
    with offline_env():
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager

        tm = TaskManager(include_path=str(task_dir), include_defaults=False)
        hf_dir = str(Path(hf_dir).resolve())
        # lm-eval prints progress to stdout; keep stdout for our own (JSON) output
        with contextlib.redirect_stdout(sys.stderr):
            lm = fitting_hflm()(pretrained=hf_dir, tokenizer=hf_dir, dtype=dtype, batch_size=batch_size,
                                device=device)
            results = simple_evaluate(model=lm, tasks=list(task_names), task_manager=tm, limit=limit,
                                      num_fewshot=num_fewshot, log_samples=log_samples,
                                      random_seed=seed, numpy_random_seed=seed, torch_random_seed=seed,
                                      fewshot_random_seed=seed, bootstrap_iters=1000)
        results["truncation"] = {"max_length": lm.max_length, "tasks": lm.truncation}
        return results


_FITTING_HFLM = None


def fitting_hflm():
    """lm-eval's ``HFLM`` with every loglikelihood request fitted into the model's window (see the
    module docstring). Built on first use: importing lm-eval is slow and it is an optional dependency."""
    global _FITTING_HFLM
    if _FITTING_HFLM is not None:
        return _FITTING_HFLM
    from lm_eval.models.huggingface import HFLM

    class FittingHFLM(HFLM):
        """``truncation``: {task name: {"requests", "context_truncated", "continuation_truncated"}}."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.truncation: dict[str, dict[str, int]] = {}
            self._request_tasks: list[str] | None = None

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            # the base class tokenizes the Instances (which know their task) and hands the token
            # lists, in the same order, to _loglikelihood_tokens (which does not)
            self._request_tasks = [r.task_name for r in requests]
            try:
                return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
            finally:
                self._request_tasks = None

        def _loglikelihood_tokens(self, requests, disable_tqdm: bool = False, override_bs: int | None = None):
            tasks = self._request_tasks
            if tasks is None or len(tasks) != len(requests):
                tasks = [None] * len(requests)  # loglikelihood_rolling: its windows fit by construction
            n = self.max_length
            fitted = []
            for task, (key, ctx, cont) in zip(tasks, requests):
                cut = None
                if len(cont) > n:  # HFLM asserts here; score the positions that fit
                    ctx, cont, cut = ctx + cont[:-n], cont[-n:], "continuation_truncated"
                if len(ctx) + len(cont) > n + 1:  # inputs are (ctx + cont)[:-1]: n + 1 tokens fill n positions
                    ctx, cut = ctx[len(ctx) + len(cont) - n - 1:], cut or "context_truncated"
                if task is not None:
                    stats = self.truncation.setdefault(
                        task, {"requests": 0, "context_truncated": 0, "continuation_truncated": 0})
                    stats["requests"] += 1
                    if cut:
                        stats[cut] += 1
                fitted.append((key, ctx, cont))
            return super()._loglikelihood_tokens(fitted, disable_tqdm=disable_tqdm, override_bs=override_bs)

    _FITTING_HFLM = FittingHFLM
    return FittingHFLM


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
    """Evaluate a run dir, a checkpoint step dir, or an HF directory on downstream tasks.

    Returns ``{"source", "hf_dir", "tasks": summary, "verify": {...}, "results": lm-eval's dict}``.
    ``out_dir`` (optional) receives ``lm_eval.json`` (summary + lm-eval's results) and, with
    ``keep_export``, the exported model as ``out_dir/hf``. Other keyword arguments: see
    ``evaluate_model``.
    """
    src = Path(source)
    if not src.exists():
        raise UserError(f"{str(src)!r} does not exist; pass a run dir, a checkpoint step dir or an HF directory")
    if _is_hf_dir(src):
        out = evaluate_model(None, None, tasks, data=data, hf_dir=src, **kwargs)
    else:
        from ..checkpoint import load_model, load_tokenizer

        model, _ = load_model(str(src))
        tokenizer = load_tokenizer(str(src))
        export = Path(out_dir) / "hf" if (out_dir and keep_export) else None
        out = evaluate_model(model, tokenizer, tasks, data=data, hf_dir=export, **kwargs)
    out["source"] = str(src)
    if out_dir:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        from ..io import atomic_write_json

        atomic_write_json(Path(out_dir) / "lm_eval.json", _jsonable(out))
    return out


def evaluate_model(model, tokenizer, tasks: str | Sequence[str] = "paper", *, data: str | os.PathLike | None = None,
                   hf_dir: str | os.PathLike | None = None, limit: int | float | None = None,
                   batch_size: int | str = 8, device: str = "cpu", dtype: str = "float32",
                   num_fewshot: int | None = None, verify: bool = True, log_samples: bool = False) -> dict:
    """Export ``model`` (a ``CausalLM``) with ``tokenizer`` and run the tasks on the export.

    With ``model=None``, ``hf_dir`` must be an existing HF directory, evaluated as is. Otherwise the
    export goes to ``hf_dir`` (kept) or a temporary folder (removed); the task files are read from the data
    folder ``data`` (``task_data_root``); ``limit`` caps examples per task.
    """
    keys = resolve_tasks(tasks)
    root = task_data_root(data)
    work = Path(tempfile.mkdtemp(prefix="leviathan-lm-eval-"))
    try:
        names = prepare_tasks(root, work / "tasks", keys)
        check = None
        if model is None:
            if hf_dir is None:
                raise UserError("evaluate_model needs a model or an existing hf_dir")
            target = Path(hf_dir)
        else:
            target = Path(hf_dir) if hf_dir is not None else work / "hf"
            export_for_harness(model, tokenizer, target)
            if verify:
                check = verify_export(model, tokenizer, target)
        results = run_harness(target, work / "tasks", [names[k] for k in keys], limit=limit, batch_size=batch_size,
                              device=device, dtype=dtype, num_fewshot=num_fewshot, log_samples=log_samples)
        return {"hf_dir": str(target), "tasks": summarize(results, keys), "verify": check, "limit": limit,
                "task_names": names, "results": results}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


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

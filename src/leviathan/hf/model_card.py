"""The model card (README.md) every exported folder carries: what the model is, how it was trained, its
evaluation, how to load it.

    card = native_card(model, "plain_llama", training=checkpoint_training("runs/tiny"))
    (out_dir / "README.md").write_text(card.render())

A folder shared on the hub or a disk is read by people who did not train it (issue 31). The card is Markdown with
the hub's YAML front matter (``library_name``, ``license``, ``tags``, ``pipeline_tag``). Its training comes from
``checkpoint_training`` (a step folder's config.yaml and state.json, the run's metrics.jsonl) for ``leviathan
export``; an in-memory model without a run gets a card that says its training was not recorded, never an invented
one. Footgun: the validation figures are the ones logged at the exported step (``eval_interval``); a step without a
validation row gets "not evaluated at this step" and the command to evaluate it, not the run's final figures. The
rows are quoted only when tied to the checkpoint (``_tied``: the step's training row records its training time).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

LICENSE = "apache-2.0"  # the project's; the card's front matter names it for the weights (the user may change it)


@dataclass
class Evaluation:
    """Validation figures logged at one step of a run (metrics.jsonl)."""

    loss: float
    ppl: float
    bpb: float | None = None
    tokens: int | None = None  # the cap on tokens evaluated (eval_tokens; None: the whole split)


@dataclass
class Training:
    """How a checkpoint was trained: its step folder and run config, and the validation logged at that step."""

    step: int
    tokens: int
    data: str  # the data folder's name (no machine path)
    tokenizer: str | None
    seq_len: int
    batch_tokens: int
    lr: float
    max_steps: int | None
    seed: int
    evaluation: Evaluation | None = None
    untied: bool = False  # the run's metrics.jsonl has validation at this step, from another run or session (_tied)
    unconfirmed: str = ""  # why state.json's validation of the step has no metrics.jsonl row beside it (K198)
    source: str | None = None  # the step folder read: the exporters check the model's weights are its (W671)


@dataclass
class ModelCard:
    """A README.md for an exported folder; ``render`` writes it."""

    title: str
    summary: str  # what it is: one paragraph
    architecture: str  # the transformers class that loads it
    params: dict[str, int] = field(default_factory=dict)  # group -> count (input, body, head, total)
    training: Training | None = None
    loader: str = ""  # Python that loads the folder
    tags: list[str] = field(default_factory=list)
    untrained_note: str = ""  # said under Training when ``training`` is None: how to record it

    def render(self) -> str:
        tags = "".join(f"\n- {t}" for t in dict.fromkeys(["leviathan", *self.tags]))  # in order, once each
        out = [f"---\nlibrary_name: transformers\nlicense: {LICENSE}\npipeline_tag: text-generation\ntags:{tags}\n---",
               "", f"# {self.title}", "", self.summary, "", "## Model", "",
               f"- Class: `{self.architecture}`"]
        out += [f"- Parameters, {name}: {count:,}" for name, count in self.params.items()]
        out += ["", "## Training", ""] + _training_lines(self.training, self.untrained_note)
        out += ["", "## Evaluation", ""] + _evaluation_lines(self.training)
        out += ["", "## How to load", "", "```python", self.loader.rstrip(), "```", "",
                "Written by [leviathan](https://arxiv.org/abs/2601.22040) (a learned continuous generator in place of "
                "the input embedding table: Batley and Saha, arXiv 2601.22040)."]
        return "\n".join(out) + "\n"


def _training_lines(t: Training | None, note: str) -> list[str]:
    if t is None:
        return [f"Not recorded: this folder was written from a model in memory, which carries no record of its "
                f"training. {note}".rstrip()]
    steps = f"{t.step:,} optimizer steps" + (f" of {t.max_steps:,}" if t.max_steps else "")
    return [f"- Trained with `leviathan train`: {steps}, {t.tokens:,} tokens",
            f"- Data: `{t.data}` (tokenizer {t.tokenizer or 'not recorded'}), sequences of {t.seq_len}, "
            f"{t.batch_tokens:,} tokens per step",
            f"- Optimizer: AdamW, peak learning rate {t.lr:g}, warmup then cosine decay; seed {t.seed}"]


def _evaluation_lines(t: Training | None) -> list[str]:
    e = t.evaluation if t is not None else None
    if e is None and t is not None and t.untied:
        return [f"Not quoted: the run's metrics.jsonl has validation figures for step {t.step:,}, but no training row "
                f"at that step recording this checkpoint's training time and tokens ties them to it, or they are not "
                f"the figures the checkpoint recorded when it was saved (the file may be from another run or session, "
                f"or edited). Evaluate the checkpoint with `leviathan "
                f"eval RUN_DIR`, or this folder with lm-evaluation-harness (`leviathan lm-eval`)."]
    if e is None and t is not None and t.unconfirmed:
        return [f"Not quoted: the checkpoint recorded a validation at step {t.step:,}, but {t.unconfirmed}, and the "
                f"card quotes figures only where the run's log confirms them. Put the run's metrics.jsonl back and "
                f"export again, or evaluate the checkpoint with `leviathan eval RUN_DIR`, or this folder with "
                f"lm-evaluation-harness (`leviathan lm-eval`)."]
    if e is None:
        return ["Not evaluated at this step. Evaluate the run's checkpoint with `leviathan eval RUN_DIR`, or this "
                "folder with lm-evaluation-harness (`leviathan lm-eval`)."]
    bpb = f", {e.bpb:.4f} bits per byte" if e.bpb is not None else ""
    tokens = f" (at most {e.tokens:,} tokens)" if e.tokens else ""
    return [f"Held-out validation split of `{t.data}` at step {t.step:,}{tokens}: loss {e.loss:.4f} nats, "
            f"perplexity {e.ppl:.2f}{bpb}."]


# ---- sources -------------------------------------------------------------------------------------------------
def checkpoint_training(path: str | os.PathLike) -> Training:
    """The ``Training`` of a checkpoint (a run folder: its latest complete step; or a step folder)."""
    from ..checkpoint.find import find_checkpoint
    from ..checkpoint.read import load_run_config
    from ..checkpoint.state import read_step_state
    from ..errors import UserError
    from ..train.metrics import read_metric_rows

    step_dir = find_checkpoint(path)
    cfg = load_run_config(step_dir)
    state = read_step_state(step_dir)
    step, tokens, tokenizer = state.step, state.tokens, state.tokenizer
    evaluation = None
    metrics = step_dir.parent.parent / "metrics.jsonl"
    try:
        rows, unread = read_metric_rows(metrics), ""
    except UserError as e:  # a step folder copied without its run folder, or the file gone
        rows, unread = [], str(e)
    vals = [r for r in rows if r.step == step and r.val_loss is not None and r.val_ppl is not None]
    tied = _tied(rows, step, tokens, state.train_time_s) and _as_recorded(vals, state.raw.get("validation"))
    if vals and tied:
        r = vals[-1]
        evaluation = Evaluation(loss=float(r.val_loss), ppl=float(r.val_ppl), bpb=r.val_bpb, tokens=cfg.eval_tokens)
    return Training(step=step, tokens=tokens, data=Path(cfg.data.path).name, tokenizer=tokenizer,
                    seq_len=cfg.data.seq_len, batch_tokens=cfg.batch_tokens, lr=cfg.optim.lr,
                    max_steps=cfg.max_steps, seed=cfg.seed, evaluation=evaluation, untied=bool(vals) and not tied,
                    unconfirmed=_unconfirmed(state.raw.get("validation"), vals, unread, metrics),
                    source=os.path.abspath(step_dir))


def _unconfirmed(recorded, vals: list, unread: str, metrics: Path) -> str:
    """Why the step's validation, which state.json records, has no row of metrics.jsonl to confirm it ("" when it
    has one, or records none). A metrics.jsonl deleted or replaced by a folder gave a card saying "Not evaluated at
    this step" beside a state.json recording the validation, exit 0 without a word (issue 30 round 20, K198); the card
    now says the log is missing (export warns), or that its rows at the step were not usable."""
    if not isinstance(recorded, dict) or vals:
        return ""
    if not unread:  # its rows at the step were skipped, each with the reader's warning naming the line
        return "the run's metrics.jsonl has no usable validation row at that step"
    reason = "is missing or unreadable"
    warnings.warn(f"leviathan: the model card quotes no validation: {str(metrics)!r} {reason}, while the "
                  f"checkpoint's state.json records one; put the run's metrics.jsonl back and export again to have "
                  f"it quoted")
    return f"the run's metrics.jsonl {reason}"  # no machine path on the card


def _as_recorded(vals: list, recorded) -> bool:
    """Whether metrics.jsonl's validation row at the step holds the numbers the checkpoint's state.json recorded when
    it was saved (``validation``; a checkpoint saved before it records none and is not compared). A metrics.jsonl
    whose step-4 row was edited to loss 1.2345 (and a matching ppl and bpb) was quoted on the card for a model whose
    loss is 5.45, exit 0 (issue 30 round 18, F34): the card then says the figures cannot be tied to the checkpoint."""
    if not isinstance(recorded, dict) or not vals:
        return True
    row = vals[-1]
    return all(repr(recorded.get(key)) == repr(getattr(row, key))  # repr: a NaN recorded is the NaN logged
               for key in ("val_loss", "val_ppl", "val_bpb"))


def _tied(rows: list, step: int, tokens: int, train_time_s: float) -> bool:
    """Whether a run's metrics rows are those of the session that saved the checkpoint of ``step``: its training row
    at that step records the checkpoint's own tokens and training time (state.json's ``train_time_s``, the same float
    the logger wrote at that step). A metrics.jsonl swapped in from another run (same settings, same step count) was
    quoted on the card as this checkpoint's validation, exit 0 (issue 30 round 8, C6); a file that cannot be tied
    (no training row at the step: a log_interval that does not divide it) is not quoted either: the card then says
    the step was not evaluated and how to evaluate it, which is true of what the export can vouch for."""
    trains = [r for r in rows if r.step == step and r.train_loss is not None]
    return bool(trains) and trains[-1].tokens == tokens and trains[-1].time_s == train_time_s


def _loader(plain: bool, tokenizer: bool) -> str:
    lines = [] if plain else [
        "import leviathan.hf  # registers model_type \"leviathan\" with the Auto classes",
        "# without it transformers refuses this folder (\"does not recognize this architecture\": a newer "
        "transformers will not help; `leviathan export --plain-llama` writes a folder transformers alone loads)"]
    lines += ["from transformers import AutoModelForCausalLM"]
    lines += ["from transformers import PreTrainedTokenizerFast"] if tokenizer else []
    lines += ["", 'model = AutoModelForCausalLM.from_pretrained("path/to/this/folder")' +
              ("  # transformers alone: no leviathan code" if plain else "")]
    if tokenizer:
        lines += ['tokenizer = PreTrainedTokenizerFast(tokenizer_file="path/to/this/folder/tokenizer.json")']
    return "\n".join(lines)


NATIVE_NOTE = "`leviathan export RUN_DIR OUT` exports a run folder's checkpoint with its training and evaluation."


def native_card(model, kind: str, training: Training | None = None, tokenizer: bool = False) -> ModelCard:
    """The card of a native model exported by ``to_hf`` (``kind="leviathan"``) or ``to_plain_llama``
    (``kind="plain_llama"``)."""
    from ..model.accounting import count_model

    _check_card_arguments(model, kind, training, tokenizer)
    cfg = model.config
    counts = count_model(model)
    params = {"input side": counts.input, "body": counts.body, "head": counts.head, "total": counts.total}
    if kind == "plain_llama" and cfg.embedding != "dense_tied":  # the folder holds the baked (V, D) table instead
        table = cfg.vocab_size * cfg.hidden_size
        params = {"input side as trained": counts.input, "input table (baked)": table, "body": counts.body,
                  "head": counts.head, "total in this folder": table + counts.body + counts.head}
    shape = (f"width {cfg.hidden_size}, {cfg.num_hidden_layers} layers, {cfg.num_attention_heads} heads, "
             f"vocabulary {cfg.vocab_size:,}")
    if kind == "plain_llama":
        summary = (f"A LLaMA-style language model ({shape}) trained with leviathan, its input side "
                   f"(`{cfg.embedding}`) baked into an ordinary embedding table: a plain `LlamaForCausalLM` that "
                   "transformers loads with no leviathan code, with the logits of the trained model (fp32 rounding).")
        return ModelCard(title="LLaMA-style model (input side baked)", summary=summary,
                         architecture="LlamaForCausalLM", params=params, training=training,
                         loader=_loader(True, tokenizer), tags=[cfg.embedding, "llama"], untrained_note=NATIVE_NOTE)
    summary = (f"A LLaMA-style language model ({shape}) whose input side is `{cfg.embedding}`"
               + (": the Leviathan generator computes each token's input embedding from its id (a few parameters "
                  "in place of a vocabulary-by-width table)" if cfg.embedding == "leviathan" else "")
               + ". model_type `leviathan`: load it with the leviathan package installed; "
                 "`leviathan export --plain-llama` writes a folder transformers loads alone.")
    return ModelCard(title=f"leviathan model ({cfg.embedding})", summary=summary, architecture="LeviathanForCausalLM",
                     params=params, training=training, loader=_loader(False, tokenizer), tags=[cfg.embedding],
                     untrained_note=NATIVE_NOTE)


CARD_KINDS = ("leviathan", "plain_llama")  # native_card's kinds: to_hf's folder, to_plain_llama's


def _check_card_arguments(model, kind, training, tokenizer) -> None:
    """UserError naming ``native_card``'s argument that is not what it takes: an unknown ``kind`` ('nonsense-kind',
    'plain') was written as a ``leviathan`` card, and ``training=5`` taken, without a word (issue 30 round 25, Y640,
    Y641); a model that is no native one (no ModelConfig) ended in an AttributeError from inside the counting."""
    from ..model.config import ModelConfig
    from ..value_rules import api_check, switch_problem

    if not isinstance(getattr(model, "config", None), ModelConfig):
        api_check("native_card", "model", f"expected a native leviathan model (CausalLM), got {type(model).__name__}",
                  "pass the model to_hf or to_plain_llama exports (for an adopted model, bake_adopted writes its card)")
    if not (isinstance(kind, str) and kind in CARD_KINDS):
        api_check("native_card", "kind", f"{kind!r:.60} is none of {', '.join(map(repr, CARD_KINDS))}",
                  "pass 'leviathan' (to_hf's folder) or 'plain_llama' (to_plain_llama's)")
    if training is not None and not isinstance(training, Training):
        api_check("native_card", "training", f"expected a Training or None, got {type(training).__name__} "
                  f"{training!r:.40}", "pass checkpoint_training(step folder), or None for a card that says the "
                  "training was not recorded")
    api_check("native_card", "tokenizer", switch_problem(tokenizer), "pass True (the folder holds tokenizer.json) or "
              "False")


def adopted_card(base_name: str, generator, num_params: int, tokenizer: bool = False) -> ModelCard:
    """The card of ``bake_adopted``'s folder: a transformers model whose generator was baked into its table."""
    from ..value_rules import check_switches

    check_switches("adopted_card", tokenizer=tokenizer)  # 'no' was true (round 30, Y621's kind)
    summary = (f"A `{base_name}` whose input embedding was a Leviathan generator (adopted with `leviathan.hf.adopt`: "
               f"vocabulary {generator.vocab_size:,}, width {generator.hidden_size}, seed width {generator.seed_dim}, "
               f"{generator.modes} modes, {generator.knots} knots, rank {generator.rank}), baked back into an ordinary "
               "embedding table: transformers loads it alone, with the adopted model's logits (fp32 rounding). The "
               "head is its own matrix (`tie_word_embeddings` false).")
    return ModelCard(title=f"{base_name} (Leviathan generator baked)", summary=summary, architecture=base_name,
                     params={"total": num_params}, training=None, loader=_loader(True, tokenizer),
                     tags=["adopted"], untrained_note="Describe the data, steps and evaluation here before sharing it.")

"""``leviathan export``: a checkpoint as a Hugging Face directory, with its tokenizer and a model card (``hf.model_card``).

    leviathan export runs/tiny hf/tiny                 # model_type "leviathan" (import leviathan.hf to load)
    leviathan export runs/tiny hf/tiny-llama --plain-llama   # baked table: plain LlamaForCausalLM, no leviathan code
"""

from __future__ import annotations


def add_arguments(parser) -> None:
    parser.add_argument("checkpoint", help="run folder or checkpoints/step-XXXXXXXX folder")
    parser.add_argument("out_dir", help="output directory (must not exist or be empty, unless --overwrite)")
    parser.add_argument("--plain-llama", action="store_true",
                        help="bake the input side and write a plain LlamaForCausalLM directory")
    parser.add_argument("--overwrite", action="store_true", help="replace a non-empty out_dir")


def run(args) -> int:
    from ..hf import export
    from ..hf.model_card import checkpoint_training
    from ..locking import folder_lock
    from ..ownership import check_apart
    from ..stop_signals import final_output
    from .. import checkpoint as ckpt

    step = ckpt.find_checkpoint(args.checkpoint)
    source = step.parent.parent if step.parent.name == ckpt.CHECKPOINTS else step  # the run folder, if any
    # out_dir replaced by the export must not be (or hold) the run it reads
    check_apart(source, "the checkpoint's folder", args.out_dir, "out_dir", inside_ok=True)
    # (out_dir inside a data folder or another export: refused by the writer, ``hf.export``)
    model, _ = ckpt.load_model(step)
    try:
        tokenizer = ckpt.saved_tokenizer(step)  # a damaged one is an error, never dropped from the export
    except ImportError:  # a built-in encoding whose package is not installed
        tokenizer = None
    writer = export.to_plain_llama if args.plain_llama else export.to_hf
    final_output(args.out_dir)  # a stop once it is in place says the export is complete (round 23, T11)
    with folder_lock(args.out_dir, "export", "choose another output folder", beside=True):  # one writer per folder
        out = writer(model, args.out_dir, tokenizer, overwrite=args.overwrite,
                     training=checkpoint_training(args.checkpoint))
    kind = "plain LlamaForCausalLM (baked input table)" if args.plain_llama else f"leviathan ({model.config.embedding})"
    print(f"wrote {kind} to {out}" + ("" if tokenizer is not None else " (no tokenizer found in the checkpoint)"))
    return 0

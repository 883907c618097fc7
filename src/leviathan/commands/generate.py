"""``leviathan generate``: sample text from a checkpoint (temperature, top-k, top-p, KV cache).

    leviathan generate runs/tiny --prompt "def main(" --max-new-tokens 80 --temperature 0.8 --top-k 50

A leviathan model is baked first (its generator computed once into a table; same logits up to
float rounding, no per-token generator cost); ``--no-bake`` keeps the generator.
"""

from __future__ import annotations

import math
import sys

from ..errors import UserError
from .values import device, positive_int, seed, utf8_text, written_float


def add_arguments(parser) -> None:
    parser.add_argument("checkpoint", help="run folder or checkpoints/step-XXXXXXXX folder")
    parser.add_argument("--prompt", default="", type=utf8_text, help="text to continue (default: start of a document)")
    parser.add_argument("--max-new-tokens", type=positive_int, default=100)
    parser.add_argument("--temperature", type=written_float, default=0.8, help="0 = greedy")
    parser.add_argument("--top-k", type=positive_int, default=None)
    parser.add_argument("--top-p", type=written_float, default=None)
    parser.add_argument("--num-samples", type=positive_int, default=1)
    parser.add_argument("--seed", type=seed, default=None, help="sampling seed (reproducible output)")
    parser.add_argument("--no-bake", action="store_true", help="keep the generator instead of its baked table")
    parser.add_argument("--no-cache", action="store_true", help="re-run the full context each token (slow; for checks)")
    parser.add_argument("--stop-at-eot", action="store_true", help="end a sample at the end-of-text token")
    parser.add_argument("--device", type=device, default="auto", help="auto | cpu | cuda | cuda:N")


def run(args) -> int:
    from ..generation import check_eos_predicted, generate
    from ..positions import fit_positions
    from .. import checkpoint as ckpt
    from ..train.distributed import resolve_device

    if args.max_new_tokens < 1 or args.num_samples < 1:
        raise UserError("--max-new-tokens and --num-samples must be at least 1")
    if not 0 <= args.temperature < math.inf:  # nan fails it too; each flag named alone (round 14, B198)
        raise UserError(f"--temperature must be a finite number >= 0 (0: the likeliest token), got {args.temperature}")
    if args.top_p is not None and not 0 < args.top_p <= 1:
        raise UserError(f"--top-p must be in (0, 1], got {args.top_p}")
    device = resolve_device(args.device, "--device ")  # the fix names the option (round 26, P33)
    model, _ = ckpt.load_model(args.checkpoint, device=device)
    if not args.no_bake:
        model.bake_()
    tokenizer = ckpt.load_tokenizer(args.checkpoint)
    if args.stop_at_eot:  # its line named generate()'s eos_id=None (round 33, carried): the flag's words
        check_eos_predicted(model, tokenizer.eot_id, "--stop-at-eot")
    prompt = tokenizer.encode(args.prompt) if args.prompt else [tokenizer.eot_id]
    keep, max_new, notes = fit_positions(len(prompt), args.max_new_tokens, model.config.max_position_embeddings)
    for note in notes:  # the model's positions limit both: say so (leviathan.positions)
        print(note, file=sys.stderr)
    prompt = prompt[len(prompt) - keep:]  # what generate would keep; the new ids start after it
    for i in range(args.num_samples):
        seed = None if args.seed is None else args.seed + i
        out = generate(model, prompt, max_new, temperature=args.temperature, top_k=args.top_k,
                       top_p=args.top_p, eos_id=tokenizer.eot_id if args.stop_at_eot else None, seed=seed,
                       use_cache=not args.no_cache)
        new = out[0, len(prompt):].tolist()
        if args.stop_at_eot and tokenizer.eot_id in new:
            new = new[: new.index(tokenizer.eot_id)]
        if args.num_samples > 1:
            print(f"--- sample {i + 1} ---")
        print(args.prompt + tokenizer.decode(new))
    return 0

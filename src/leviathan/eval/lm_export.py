"""Export for lm-eval and the guard on it: ``export_for_harness`` writes a plain-Llama HF directory (input side
baked) with a transformers tokenizer; ``verify_export`` loads it back with transformers alone and refuses it unless
its tokenizer's ids and its logits match our model's (so lm-eval scores our weights, never a hub model).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UserError
from .hf_tokenizer import PROBE_TEXT, write_hf_tokenizer_owned
from ..storage import api_write


@api_write("export_for_harness", "out_dir")
def export_for_harness(model, tokenizer, out_dir: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """Plain-Llama HF directory (baked input side) + a transformers tokenizer for ``model``."""
    from ..hf.export import refuse_tokenizer_path, to_plain_llama

    refuse_tokenizer_path(tokenizer, "export_for_harness")  # round 23, U510: taken as a built-in encoding's name
    positions = model.config.max_position_embeddings
    return Path(to_plain_llama(model, out_dir, overwrite=overwrite,
                               also_write=lambda folder: write_hf_tokenizer_owned(tokenizer, folder, positions),
                               overwrite_flag="--keep-export (keep_export=True)", verb="lm-eval"))


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


def is_hf_dir(path: Path) -> bool:
    return (path / "config.json").is_file() and not (path / "checkpoints").exists() and \
        not (path / "state.json").is_file()

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
def export_for_harness(model, tokenizer, out_dir: str | os.PathLike, *, overwrite: bool = True,
                       overwrite_flag: str = "overwrite=True") -> Path:
    """Plain-Llama HF directory (baked input side) + a transformers tokenizer for ``model``. The tokenizer must fit the
    model (``check_tokenizer_fits``, as ``to_hf``'s: o200k's 200,019 ids beside a 300-id model were written without a
    word, issue 30 round 25, Y627). ``overwrite_flag``: the option a refusal to replace ``out_dir`` names, this
    function's own keyword unless a caller has its own (lm-eval's ``--keep-export``: the API's refusal named that
    flag, which export_for_harness does not have, Y622)."""
    from ..hf.export import check_tokenizer_fits, to_plain_llama

    # a path (round 23, U510: taken as a built-in encoding's name), or more ids than the model has (Y627)
    check_tokenizer_fits(tokenizer, model.config.vocab_size, "export_for_harness")
    positions = model.config.max_position_embeddings
    return Path(to_plain_llama(model, out_dir, overwrite=overwrite,
                               also_write=lambda folder: write_hf_tokenizer_owned(tokenizer, folder, positions),
                               overwrite_flag=overwrite_flag, verb="lm-eval"))


def verify_export(model, tokenizer, hf_dir: str | os.PathLike, atol: float = 1e-3) -> dict:
    """Load ``hf_dir`` with transformers alone; its tokenizer and logits must match ours. A folder that is no export
    (no config.json or no tokenizer) is named as such (``_check_export_folder``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _check_export_folder(hf_dir)

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


def _check_export_folder(hf_dir: str | os.PathLike) -> None:
    """UserError unless ``hf_dir`` is a folder holding a model's config.json and a transformers tokenizer: a folder of
    texts ended in transformers' raw "Couldn't instantiate the backend tokenizer ... You need to have sentencepiece or
    tiktoken installed", a wrong cause (issue 30 round 25, Y626)."""
    from ..errors import missing
    from ..file_kinds import folder_kind

    folder = Path(hf_dir)
    if not folder.is_dir():
        raise UserError(f"verify_export: hf_dir {str(hf_dir)!r} {missing(folder)}; pass the folder export_for_harness "
                        f"wrote")
    lacking = [name for name in ("config.json", "tokenizer.json") if not (folder / name).is_file()]
    if lacking:
        kind = folder_kind(folder)
        raise UserError(f"verify_export: hf_dir {str(hf_dir)!r} is no export of a model (it has no "
                        f"{' and no '.join(lacking)}{f'; it is {kind}' if kind else ''}); pass the folder "
                        f"export_for_harness wrote")


def is_hf_dir(path: Path) -> bool:
    return (path / "config.json").is_file() and not (path / "checkpoints").exists() and \
        not (path / "state.json").is_file()

"""``leviathan params``: parameter groups (input, body, head, total) and FLOPs for any configuration.

    leviathan params --preset paper-1.2b                     # dense-tied vs leviathan, same body
    leviathan params --preset paper-109m --isoparametric     # + the leviathan depth matching dense-untied
    leviathan params model.hidden_size=256 model.vocab_size=8192
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace

from ..config import apply_overrides, check_repeated_overrides, from_dict, parse_override
from ..errors import UserError
from ..model.accounting import count_config, flops_per_token, format_table, isoparametric_depth, layer_params
from ..model.config import EMBEDDING_KINDS, ModelConfig
from ..presets import preset_dict_named
from .demo import variant_list

DEFAULT_VARIANTS = "dense_tied,dense_untied,leviathan"


def add_arguments(parser) -> None:
    parser.add_argument("overrides", nargs="*", help="model.KEY=VALUE settings (ModelConfig fields)")
    parser.add_argument("--preset", default=None, help="start from a named preset (see leviathan.presets)")
    parser.add_argument("--variants", default=None, type=variant_list,
                        help=f"comma-separated embedding variants to list (of {', '.join(EMBEDDING_KINDS)}; default "
                             f"{DEFAULT_VARIANTS}, or the one model.embedding=... names)")
    parser.add_argument("--isoparametric", action="store_true",
                        help="also solve the leviathan depth whose total matches dense_untied (its row "
                             "shown too)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def listed_variants(variants: list[str] | None, embedding) -> list[str]:
    """The variants the table lists: ``--variants``, or the one ``model.embedding=...`` names, or the default three.
    ``params --preset cpu-tiny model.embedding=factorized model.embedding_rank=8`` printed the default table, the
    override read and dropped without a word (issue 30 round 17, E244); both given and not one list: a UserError."""
    if embedding is None:
        return variants or variant_list(DEFAULT_VARIANTS)
    if variants is not None and variants != [str(embedding)]:
        raise UserError(f"model.embedding={embedding} and --variants {','.join(variants)} both say which variants "
                        f"to count; give one: drop --variants to count {embedding} alone, or drop model.embedding "
                        f"and list it in --variants")
    return [str(embedding)]


def iso_rows(base: ModelConfig, listed: list[str]) -> tuple[list[tuple[str, ModelConfig]], str | None]:
    """The rows ``--isoparametric`` adds: the leviathan depth whose total matches dense_untied's, and dense_untied
    itself, named as its target, when the table does not list it. ``params --isoparametric model.embedding=
    dense_tied`` showed dense_tied beside an "iso" model twice its size, matched to a row left out, without a word
    (issue 30 round 27, R87). With the note to print when no depth matches (the solver's bound, or one layer too
    many): the row is then labelled "not iso", where it read "leviathan iso" (round 28, T17)."""
    untied = replace(base, embedding="dense_untied")
    sol = isoparametric_depth(untied)
    target = [] if "dense_untied" in listed else [("dense_untied (iso target)", untied)]
    generator, table = count_config(sol.config).input, count_config(untied).input
    why = sol.bound or (f"the generator alone ({generator:,} parameters) outweighs dense_untied's input table "
                        f"({table:,}), so there is no table budget to spend on depth" if generator > table else None)
    if why is None:
        return target + [(f"leviathan iso ({sol.relative_gap:+.2%})", sol.config)], None
    note = (f"note: no leviathan depth is isoparametric with dense_untied: {why}; the row 'leviathan not iso' is the "
            f"closest depth ({sol.config.num_hidden_layers:,}), not a match ({_iso_fix(base, sol)})")
    return target + [(f"leviathan not iso ({sol.relative_gap:+.2%})", sol.config)], note


def _iso_fix(base: ModelConfig, sol) -> str:
    """What makes a depth match when ``sol`` stopped at a bound. At the deepest bound, leviathan needs as many layers
    more than dense_untied's as its saved table buys, whatever the depth: when the target's own depth leaves no room
    for them, a lower model.num_hidden_layers solves it (``--isoparametric model.num_hidden_layers=1024`` was told to
    change the vocabulary or the width, where 2 layers solve the same preset; issue 30 round 29, V13)."""
    if sol.config.num_hidden_layers == sol.max_layers and sol.gap < 0:
        extra = sol.max_layers + math.ceil(-sol.gap / layer_params(sol.config) - 0.5) - base.num_hidden_layers
        if sol.max_layers - extra >= 1:
            return (f"leviathan needs {extra:,} layers more than dense_untied's {base.num_hidden_layers:,}: set "
                    f"model.num_hidden_layers to {sol.max_layers - extra:,} or fewer, or change model.vocab_size "
                    f"or the width")
    return "change model.vocab_size or the width"


def run(args) -> int:
    for text in args.overrides:
        parse_override(text)  # the user's own text named (an empty key part, a repeated key in a value)
    check_repeated_overrides(args.overrides, "model.")  # `model.hidden_size=64 hidden_size=128`: the last won silently
    overrides = [o if o.startswith("model.") or o.split("=", 1)[0].strip() == "model" else f"model.{o}"
                 for o in args.overrides]
    data = {"model": {} if args.preset is None else preset_dict_named("--preset", args.preset)}
    apply_overrides(data, overrides)
    named = data["model"].pop("preset", None)  # `model.preset=cpu-tiny`, as train takes it (round 9, M81: "unknown
    if named is not None:                       # key 'model.preset' in ModelConfig")
        if args.preset is not None and str(named) != args.preset:
            raise UserError(f"--preset {args.preset} and model.preset={named} name two presets; give one")
        data["model"] = {**preset_dict_named("model.preset", str(named)), **data["model"]}
    base = from_dict(ModelConfig, data["model"], prefix="model.")
    rows = [(v, base if v == base.embedding else replace(base, embedding=v))  # each once (round 11, S93, S95)
            for v in listed_variants(args.variants, data["model"].get("embedding"))]
    note = None
    if args.isoparametric:
        added, note = iso_rows(base, [c.embedding for _, c in rows])
        rows += added
    if args.json:
        out = [{"name": n, "num_hidden_layers": c.num_hidden_layers, **count_config(c).as_dict(),
                "flops_per_token": flops_per_token(c)} for n, c in rows]
        print(json.dumps(out, indent=2))
        if note:
            print(note, file=sys.stderr)  # stdout stays one JSON document
        return 0
    print(format_table(rows))
    if note:
        print(f"\n{note}")
    lev = [c for n, c in rows if c.embedding == "leviathan"]
    if lev:
        f = flops_per_token(lev[0])
        print(f"\ngenerator: {count_config(lev[0]).input:,} parameters (base b={lev[0].base}, "
              f"capacity b^k={lev[0].id_capacity:,}); {f['generator_per_distinct_id'] / 1e6:.2f} MFLOP per distinct id "
              f"(literal formula: {f['generator_literal_per_position'] / 1e6:.2f} MFLOP per position)")
    return 0

"""Experiment grids as data: a YAML file names the runs of the paper's comparisons; this expands it.

A grid is a YAML file selected by name (``leviathan sweep --grid cpu``; ``leviathan.configs``' lookup) or by path:

    name: cpu
    base_config: cpu-small                # optional training config (leviathan.run_config.RunConfig YAML): a name or path
    base: {train.max_tokens: 2_000_000}   # optional dotted (or nested) overrides applied to it
    data: {dir: data/gutenberg-bpe, vocab_size: 8192}   # prepared data; vocab_size only if not prepared yet
    seeds: [0]                            # each comparison is repeated per seed
    data_seed: null                       # a fixed data order for every run, if the run config has one
    keys: {seed: seed, data_seed: null, data_dir: data.path}   # where these go in the run config
    eval: {sets: {...}, buckets: 5, bucket_method: mass, seq_len: 256, batch_size: 8, max_tokens: null}
    sizes:                                # model fields per size (+ optional run-config overrides)
      s: {preset: cpu-small}
      m: {preset: cpu-small, hidden_size: 192, run: {optim.lr: 2e-3}}
    variant_run:                          # optional run-config overrides per variant (each arm's own lr)
      leviathan: {optim.lr: 1e-2}
      m:dense_untied: {optim.lr: 3e-3}    # ... or per arm at one size (applied after the variant's)
    experiments:
      iso_body:      {variants: [dense_tied, leviathan], sizes: [s, m]}   # same backbone
      isoparametric: {baseline: dense_untied, variants: [leviathan], sizes: [s, m]}   # deeper, same total
      scaling:       {variant: dense_untied, sizes: [xs, s, m, l]}        # dense ladder for the power law
      variants:      {baseline: dense_untied, variants: [factorized, compositional], sizes: [m]}

An experiment key may carry a label after a colon (``iso_body:arms``) to hold a second experiment of
the same regime, e.g. leviathan-only ablation arms compared with the base size's dense run.

Regimes and their baselines (docs/DESIGN.md §4): ``iso_body`` gives every variant the size's backbone unchanged;
``isoparametric`` and ``variants`` give the baseline (dense_untied) the size's backbone and every other variant the
depth whose total is closest to the baseline's (``accounting.isoparametric_depth``), its SwiGLU width trimmed when
depth alone misses ``tolerance`` (default 1%; ``match_total``, the name then says ``-F<width>``); ``scaling`` is
one dense variant at every listed size. Runs are identified by content, not by regime: one run that serves two
regimes trains once and its row lists both. Names: ``<size>-<variant>[-L<layers>][-F<ffn>]-s<seed>`` (``-L``/``-F``
when depth/SwiGLU width differ from the size's).

Same data for every run: one data dir, the data order fixed by the seed (RunConfig's single ``seed`` is the model
init *and* the data order, so the runs of one comparison see the same tokens in the same order); a run config with a
separate data-order seed is named by ``keys.data_seed``, and ``data_seed`` then fixes it for every run. Parameter
counts are analytic (``count_config``) with the prepared data's vocabulary, or ``data.vocab_size`` before it is
prepared (the sweep re-checks against meta.json before training).

The file is read into typed sections by ``experiments.machinery.grid_file``; this module expands them.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...config import ConfigError, check_repeated_overrides, from_dict, keys_overlap, override_key, override_list, to_dict
from ...configs import GRIDS, available, find_grid_file
from ...data.meta import NO_META, find_meta, not_prepared
from ...errors import UserError, missing
from ...model.accounting import ParamCounts, count_config, isoparametric_depth
from ...model.config import EMBEDDING_KINDS, ModelConfig
from ...presets import preset_dict
from ...seeds import check_seed
from .grid_file import (DataSection, EvalOptions, EvalSet, ExperimentSpec, GridKeys, SizeSpec, mapping, parse_eval,
                        plain_name, read_grid_file, seed_list, tolerance_of)
from .results import BASELINES, DEFAULT_LADDER, REGIMES
from .grid_values import command_line_text, override_text, scalar_text



def available_grids() -> list[str]:
    return available(GRIDS)


def find_grid(name_or_path: str | os.PathLike) -> Path:
    """A grid by name (``cpu``, ``paper``) or by path to a YAML file (``leviathan.configs`` has the rules)."""
    return find_grid_file(name_or_path)  # a ConfigError (a UserError) names the grids there are


@dataclass
class RunSpec:
    """One training run of a grid, fully resolved."""

    name: str
    regimes: list[str]
    variant: str
    size: str
    seed: int
    data_seed: int  # the seed that fixes the data order (= seed unless the grid sets data_seed)
    model: ModelConfig  # no vocab-dependent defaults left implicit
    params: ParamCounts  # analytic counts by group (``count_config``)
    model_keys: tuple[str, ...]  # the model fields the grid sets, in its order (``model_fields``)
    target_total: int | None = None  # isoparametric: the baseline's total this run matches
    run_overrides: list[str] = field(default_factory=list)  # the size's, then the variant's run-config overrides

    @property
    def regime(self) -> str:
        return self.regimes[0]

    @property
    def num_hidden_layers(self) -> int:
        return self.model.num_hidden_layers

    def model_fields(self) -> dict:
        """The model fields the grid sets (the rest are ``ModelConfig`` defaults), in the grid's order: what
        grid.json and the results rows record and what the run's ``model.*`` overrides name."""
        return {k: getattr(self.model, k) for k in self.model_keys}


@dataclass
class Grid:
    name: str
    path: Path | None
    base_config: Path | None
    base_overrides: list[str]
    data_dir: Path
    vocab_size: int
    vocab_from: str  # "meta.json" | "grid"
    data_seed: int | None
    seeds: list[int]
    keys: GridKeys
    eval_sets: list[EvalSet]
    eval_options: EvalOptions
    runs: list[RunSpec] = field(default_factory=list)
    seeds_given: bool = False  # ``seeds`` replace the file's (``sweep --seeds``): ``folder_grid.check_folder_runs``
    base_written: list[str] = field(default_factory=list)  # the file's base alone, without the command line's

    def run(self, name: str) -> RunSpec:
        for r in self.runs:
            if r.name == name:
                return r
        raise UserError(f"no run named {name!r} in grid {self.name!r}")

    def run_overrides(self, spec: RunSpec) -> list[str]:
        """Dotted overrides that turn the base config into this run's config."""
        out = list(self.base_overrides) + list(spec.run_overrides)
        out += [f"model.{k}={scalar_text(v)}" for k, v in spec.model_fields().items()]
        out.append(f"{self.keys.seed}={spec.seed}")
        if self.keys.data_seed and self.data_seed is not None:
            out.append(f"{self.keys.data_seed}={self.data_seed}")
        out.append(f"{self.keys.data_dir}={self.data_dir}")
        return out


def flatten(d: dict, prefix: str = "") -> list[str]:
    """Nested or dotted mapping -> ``["a.b=1", ...]`` overrides, each value read by the run config's rule for its key
    (``grid_values.override_text``: a quoted number refused, ``max_steps: 2.0`` written as 2; round 16, C135, C156)."""
    out = []
    for k, v in (d or {}).items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out += flatten(v, key + ".")
        else:
            out.append(override_text(key, v))
    return out


def _resolve_path(value: str, grid_path: Path | None) -> Path:
    p = Path(os.path.expandvars(os.path.expanduser(value)))
    if p.is_absolute() or p.exists() or grid_path is None:
        return p
    # <root>/configs/experiments/x.yaml -> relative to the folder holding configs/ (a project, or the
    # installed package for a packaged grid); otherwise a name (cpu-small) for run_config to resolve
    root = grid_path.resolve().parent.parent.parent
    return root / p if (root / p).exists() else p


def read_vocab_size(data_dir: Path) -> int | None:
    """The vocabulary of a prepared data folder (its meta.json, ``data.meta``), None where it is not prepared yet."""
    meta = find_meta(data_dir)
    return meta.vocab_size if meta else None


def _size_model(name: str, size: SizeSpec, vocab_size: int) -> dict:
    """The ModelConfig fields of a size entry (its preset's, then its own), checked and read as a config file's
    (``hidden_size: 32.0`` is 32: it was refused as "model.hidden_size must be a positive integer, got 32.0" where the
    grid's base and the overrides read it as 32 by round 16's rule, C156; round 17, E226)."""
    spec = dict(size.fields)
    fields = preset_dict(spec.pop("preset")) if "preset" in spec else {}
    fields.update(spec)
    fields["vocab_size"] = vocab_size
    read = to_dict(from_dict(ModelConfig, fields, prefix=f"sizes.{name}."))  # validate every key now
    return {key: read[key] if key in read else value for key, value in fields.items()}


def load_grid(name_or_path: str | os.PathLike | dict, *, data_dir: str | None = None, seeds: list[int] | None = None,
              overrides: list[str] | None = None) -> Grid:
    """Read and expand a grid. ``data_dir``/``seeds``/``overrides`` replace the file's settings."""
    if not isinstance(name_or_path, dict):  # M337, M338 (round 20): os.fspath's bare TypeError
        from ...value_rules import check_read_path

        check_read_path("load_grid", "name_or_path", name_or_path, "pass a grid's name (cpu, paper), its YAML file or "
                        "a dict")
    if data_dir is not None:  # data_dir=5 was Path('5') without a word (round 24, W504), as the run config's data.path
        from ...value_rules import api_check, path_problem

        api_check("load_grid", "data_dir", path_problem(data_dir), "pass the prepared data folder, or None for the "
                  "grid's data.dir")
    gf, path = read_grid_file(name_or_path)
    # `name: ""` trained under the file's name without a word (round 13, X13): only a grid without `name` takes it
    name = plain_name(gf.name if gf.name is not None else (path.stem if path else "grid"), "the grid's name")
    ddir, vocab, vocab_from = _grid_data(DataSection.of(gf.data), name, data_dir)

    base_config = _resolve_path(str(gf.base_config), path) if gf.base_config else None
    base = gf.base or {}
    if not isinstance(base, dict):
        raise ConfigError(f"grid {name!r}: base must be a mapping of config keys")
    # one key spelt twice in a section (`optim.lr: 1` beside `optim: {lr: 2}`): YAML sees two keys, the last won
    check_repeated_overrides(flatten(base), where=f"in the base of grid {name!r}")
    base_overrides = flatten(base) + [command_line_text(o) for o in override_list(overrides)]  # one rule (C156);
    # a list, as load_run_config's: a str was read letter by letter, "override 'm' must look like key=value" (E62)
    keys = GridKeys.of(gf.keys)
    data_seed = None if gf.data_seed is None else check_seed(gf.data_seed, "data_seed")
    if data_seed is not None and not keys.data_seed:  # round 17 (D313): read, recorded in grid.json, used by no run
        raise ConfigError(f"grid {name!r}: data_seed: {data_seed} has no effect: leviathan's run config has no "
                          f"data-order seed of its own (each run's seed fixes its data order); delete data_seed, or "
                          f"name the run-config key that takes it with keys.data_seed")
    seeds_given = seeds is not None
    seeds = seed_list(seeds if seeds is not None else gf.seeds, "seeds")
    if not seeds:
        raise ConfigError(f"grid {name!r}: seeds must list at least one seed")
    tolerance = tolerance_of(gf.tolerance)

    eval_sets, eval_options = parse_eval(gf.eval, name)

    sizes_raw = mapping(gf.sizes, "sizes")
    if not sizes_raw:
        raise ConfigError(f"grid {name!r} defines no sizes")
    parsed = {n: SizeSpec.of(plain_name(n, "a size's name"), s) for n, s in sizes_raw.items()}
    for n, spec in parsed.items():
        for run in spec.run:  # each mapping on its own: a list of them is applied in order, on purpose
            check_repeated_overrides(flatten(run), where=f"in sizes.{n}.run of grid {name!r}")
    sizes = {n: _size_model(n, spec, vocab) for n, spec in parsed.items()}
    _check_ablations(gf.ablations, sizes, name)

    grid = Grid(name=name, path=path, base_config=base_config, base_overrides=base_overrides, data_dir=ddir,
                vocab_size=vocab, vocab_from=vocab_from, data_seed=data_seed, seeds=seeds, keys=keys,
                eval_sets=eval_sets, eval_options=eval_options, seeds_given=seeds_given, base_written=flatten(base))
    grid.runs = expand(mapping(gf.experiments, "experiments"), sizes, seeds, data_seed if keys.data_seed else None,
                       tolerance, name)
    _check_eval_positions(grid)
    variant_runs = _variant_runs(gf.variant_run, name, sizes)
    for r in grid.runs:
        r.run_overrides = [o for run in parsed[r.size].run for o in flatten(run)] + variant_runs.get(r.variant, []) \
            + variant_runs.get(f"{r.size}:{r.variant}", [])
        _check_not_grid_owned(grid, r, [("in the grid's base", o) for o in flatten(base)]
                              + [("on the command line", o) for o in overrides or []]
                              + [(f"in sizes.{r.size}.run", o) for run in parsed[r.size].run for o in flatten(run)]
                              + [(f"in variant_run.{key}", o) for key in (r.variant, f"{r.size}:{r.variant}")
                                 for o in variant_runs.get(key, [])])
        _check_command_line_reaches(grid, r, overrides or [],
                                    [(f"sizes.{r.size}.run", o) for run in parsed[r.size].run for o in flatten(run)]
                                    + [(f"variant_run.{key}", o) for key in (r.variant, f"{r.size}:{r.variant}")
                                       for o in variant_runs.get(key, [])])
    if not grid.runs:
        given = sorted(map(str, mapping(gf.experiments, "experiments")))
        if given:  # round 10 (Q70): `iso_body: {variants: []}` was "has no experiments; add iso_body, ..."
            raise ConfigError(f"grid {name!r}: its experiments ({', '.join(given)}) make no run (no variants or sizes "
                              f"listed in them); list at least one variant and size in each")
        raise ConfigError(f"grid {name!r} has no experiments; add iso_body, isoparametric, scaling or variants")
    _check_overrides_load(grid, overrides or [])
    _check_eval_window(grid)
    _check_run_name_lengths(grid)
    _check_sizes_differ(grid)
    _check_size_keys(grid, parsed)
    return grid


def _check_size_keys(grid: Grid, parsed: dict[str, SizeSpec]) -> None:
    """ConfigError when a size sets a model field the grid sets for every run after it: ``embedding`` (each run's is
    its experiment's variant) or a ``vocab_size`` other than the data's. ``a: {..., embedding: dense_untied}`` trained
    dense_tied and leviathan arms and ``vocab_size: 500`` trained 300-token models, exit 0, without a word, where a
    base ``seed: 5`` is refused as having no effect (issue 30 round 21, P192, P193; the owners are
    ``_check_not_grid_owned``'s)."""
    for size, spec in parsed.items():
        variants = sorted({r.variant for r in grid.runs if r.size == size})
        if "embedding" in spec.fields:
            raise ConfigError(f"grid {grid.name!r}: sizes.{size} sets embedding: {spec.fields['embedding']}, which the "
                              f"grid sets for each run from {_OWNERS['model.embedding']} (size {size!r} trains "
                              f"{', '.join(variants) or 'no run'}), so it would have no effect; delete embedding from "
                              f"sizes.{size}, and list the embedding you want among an experiment's variants")
        given = spec.fields.get("vocab_size")
        if "vocab_size" in spec.fields and (isinstance(given, bool) or given != grid.vocab_size):
            raise ConfigError(f"grid {grid.name!r}: sizes.{size} sets vocab_size: {given}, but the grid sets each "
                              f"run's to {grid.vocab_size} from {_OWNERS['model.vocab_size']}, so it would have no "
                              f"effect; delete vocab_size from sizes.{size} (for another vocabulary, prepare the data "
                              f"with a tokenizer of that size)")


def base_problem(grid: Grid, problem: str) -> str | None:
    """The line naming the grid's file and its base for a run config that failed with ``problem``, when the base
    alone (with base_config) fails the same way, else None: ``base: {unknown: 1}`` or both max_steps and max_tokens
    were refused by the sweep naming neither the grid nor its base (issue 30 round 21, P185, P200). Asked only once a
    run's config fails (``sweep._run_config_of``): a base completed later (a size's run overrides, the command line, a
    pre-sweep's stage) loads as before, and what a run's own layers break stays the run's to name."""
    from ...run_config import load_run_config

    config = str(grid.base_config) if grid.base_config else None
    try:
        load_run_config(config, grid.base_written, check_data=False, layered=True)
        return None
    except ConfigError as e:
        if str(e) != problem:
            return None
    except (UserError, OSError):
        return None  # a base_config that cannot be read: the run's line names it
    where = f"file {str(grid.path)!r}" if grid.path else "given as a dict"
    section = f"base (with base_config {config})" if config else "base"
    return (f"grid {grid.name!r} ({where}), in its {section}: {problem}; fix it under base: in the grid (every run "
            f"starts from it)")


def _check_sizes_differ(grid: Grid) -> None:
    """ConfigError when two sizes of the grid are one model with the same run settings (``b: *a``, a YAML alias of
    ``a``): the model trained twice under two names and entered the ladder as two sizes, exit 0 (issue 30 round 16,
    C289), where a size listed twice is refused (round 4). Sizes of one model that train with other settings (the
    fair-lr grids' ``run: {optim.lr: ...}`` per size) differ. The models are compared with every default filled in
    (``ModelConfig.resolved``): ``b`` = ``a`` plus ``num_key_value_heads: 4`` (= its 4 heads) or ``head_dim: 8``
    (= 32 / 4) was taken as another size (round 17, E369, E370)."""
    seen: dict[tuple, RunSpec] = {}
    for run in grid.runs:
        key = (run.variant, run.seed, repr(sorted(to_dict(run.model.resolved()).items())), tuple(run.run_overrides))
        first = seen.setdefault(key, run)
        if first.size != run.size:
            raise ConfigError(f"grid {grid.name!r}: sizes {first.size!r} and {run.size!r} are the same model with the "
                              f"same settings ({run.params.total:,} parameters), so runs {first.name} and {run.name} "
                              f"would train it twice and count as two sizes (is one a YAML alias of the other?); "
                              f"delete one of them, or make them differ")


def _check_eval_positions(grid: Grid) -> None:
    """ConfigError when ``eval.seq_len`` is past a run's ``max_position_embeddings``: the sweep trained the first run
    and only then refused to evaluate it, naming a bare "seq_len" (issue 30 round 15, B31)."""
    seq_len = grid.eval_options.seq_len
    for run in grid.runs if seq_len else []:
        limit = getattr(run.model, "max_position_embeddings", None)
        if isinstance(limit, int) and seq_len > limit:
            raise ConfigError(f"grid {grid.name!r}: eval.seq_len {seq_len:,} exceeds run {run.name}'s "
                              f"max_position_embeddings ({limit:,}, size {run.size!r}); set eval.seq_len to at most "
                              f"{limit:,}, or leave it out (each run's own data.seq_len)")


def _check_eval_window(grid: Grid) -> None:
    """ConfigError when ``eval.max_tokens`` is fewer than one evaluation window (``eval.seq_len``, else a run's own
    ``data.seq_len``, + 1 tokens): the grid loaded and its sweep scored every run on 9 targets without a word, while a
    split that short is refused (``short_split_problem``; issue 30 round 29, W692). A run whose config does not load
    is left to the sweep, which names it (``base_problem``)."""
    from ...eval.window_floor import short_cap_problem
    from ...run_config import load_run_config

    cap, seq_len = grid.eval_options.max_tokens, grid.eval_options.seq_len
    if cap is None:
        return
    if seq_len is not None:
        problem = short_cap_problem("eval.max_tokens", cap, seq_len, "eval.seq_len", "null (the whole set)")
    else:
        config = str(grid.base_config) if grid.base_config else None
        problem = None
        for run in grid.runs:
            try:
                run_len = load_run_config(config, grid.run_overrides(run), check_data=False, layered=True).data.seq_len
            except (UserError, OSError):
                continue
            problem = short_cap_problem("eval.max_tokens", cap, run_len, f"run {run.name}'s data.seq_len",
                                        "null (the whole set)")
            if problem is not None:
                break
    if problem is not None:
        raise ConfigError(f"grid {grid.name!r}: {problem}")


def _check_ablations(raw, sizes: dict, grid_name: str) -> None:
    """ConfigError unless ``ablations:`` maps each factor to a list of ``SIZE`` or ``SIZE:VARIANT`` entries naming sizes
    of the grid: ``{shape: [a, zz]}`` was accepted and the ablation report drew a "shape" figure of a size the grid
    has not (issue 30 round 15, B243, B244)."""
    for factor, entries in mapping(raw, "ablations").items():
        if not isinstance(entries, list):
            raise ConfigError(f"grid {grid_name!r}: ablations.{factor} is {entries!r}, not a list of SIZE or "
                              f"SIZE:VARIANT entries")
        unknown = [str(e) for e in entries if str(e).partition(":")[0] not in sizes]
        if unknown:
            raise ConfigError(f"grid {grid_name!r}: ablations.{factor} names {', '.join(map(repr, unknown))}, no size "
                              f"of the grid (its sizes: {', '.join(sizes)}); name a size (or SIZE:VARIANT) of sizes:")
def _check_run_name_lengths(grid: Grid) -> None:
    """ConfigError when a run's folder name (SIZE-VARIANT-sSEED...) is past a file name's 255 bytes: a 245-letter size
    name was refused only when the sweep made the run's folder, the fix pointing at --out (issue 30 round 15, A145)."""
    for run in grid.runs:
        if len(run.name.encode()) > 255:
            raise ConfigError(f"grid {grid.name!r}: run {run.name[:40]!r}... has a folder name of "
                              f"{len(run.name.encode())} bytes, past the 255 a file name may have (its size "
                              f"{run.size[:40]!r}... is {len(run.size.encode())} bytes); give that size a shorter "
                              f"name under sizes:")


# the model fields the grid sets for every run after its sizes, and where they come from
_OWNERS = {"model.embedding": "the experiment's variants (experiments.<regime>.variants in the grid)",
           "model.vocab_size": "the data's vocabulary (the data folder's meta.json, or data.vocab_size in the grid)"}


def _check_not_grid_owned(grid: Grid, spec: RunSpec, sources: list[tuple[str, str]]) -> None:
    """ConfigError when a setting of the grid's base, a size's or a variant's run overrides, or the command line sets a
    key the grid sets for each run after them (its seed, data folder, data seed, the size's model fields): it had no
    effect, without a word (``sweep seed=5`` trained seed 0, ``data.path=OTHER`` the grid's data, issue 30 round 7)."""
    owned = {f"model.{k}": f"the size's model fields (sizes.{spec.size}.{k} in the grid)"
             for k in spec.model_fields()}
    owned.update(_OWNERS)
    owned[grid.keys.seed] = "the grid's seeds (seeds: in the grid, or --seeds)"
    owned[grid.keys.data_dir] = "the grid's data folder (data.dir in the grid, or --data-dir)"
    if grid.keys.data_seed and grid.data_seed is not None:
        owned[grid.keys.data_seed] = "the grid's data_seed"
    for where, text in sources:
        key = override_key(text)
        hit = next((k for k in owned if keys_overlap(k, key)), None)
        if hit is not None:
            raise ConfigError(f"grid {grid.name!r}: {text!r} {where} sets {hit}, which the grid sets for each run "
                              f"after it (run {spec.name}), so it would have no effect; set it through {owned[hit]}, "
                              f"or leave it out")


def _check_command_line_reaches(grid: Grid, spec: RunSpec, overrides: list[str], layers: list[tuple[str, str]]) -> None:
    """ConfigError when an override given on the command line sets a key that one of the run's own layers (its size's
    run overrides, the variant's ``variant_run``) sets too: those are applied after the command line, so
    ``sweep --grid o200k optim.lr=1e-3`` left every arm with a tuned lr at its own rate, without a word (found while
    fixing issue 30 round 18, fix19a). The grid's base is a default the layers refine on purpose; the command line is
    the user's explicit value, so it is refused rather than silently overruled."""
    for text in overrides:
        key = override_key(text)
        for where, layer in layers:
            other = override_key(layer)
            if keys_overlap(other, key):
                raise ConfigError(f"grid {grid.name!r}: {text!r} on the command line sets {other}, which {where} sets "
                                  f"for run {spec.name} after the command line, so it would not reach that run; edit "
                                  f"{where} in the grid, or leave the override out")


def _check_overrides_load(grid: Grid, overrides: list[str]) -> None:
    """ConfigError naming the overrides given on the command line (``overrides=``) when the grid's first run config
    fails with them and loads without them: ``load_grid(..., overrides=['optim.lr=nan'])`` returned a Grid carrying it
    without a word, refused only once the sweep built that run, where ``load_run_config`` refuses it at once (issue 30
    round 24, W497). Checked together, not one by one: ``max_steps=null max_tokens=N`` holds only as a pair. A run
    that fails without them is left to the sweep, which names the grid's own layer (``base_problem``)."""
    from ...run_config import load_run_config

    if not overrides:
        return
    config = str(grid.base_config) if grid.base_config else None

    def loads(given: list[str]) -> None:
        base = [*grid.base_written, *(command_line_text(o) for o in given)]
        load_run_config(config, replace(grid, base_overrides=base).run_overrides(grid.runs[0]), check_data=False,
                        layered=True)

    try:
        loads(overrides)
        return
    except ConfigError as e:
        problem = str(e)
    except (UserError, OSError):
        return
    try:
        loads([])
    except (UserError, OSError):
        return
    shown = ", ".join(repr(o) for o in overrides)
    raise ConfigError(f"grid {grid.name!r}, with the overrides given ({shown:.200}): {problem}")


def _own_folder(ddir: Path, data: DataSection, data_dir: str | None) -> bool:
    """Whether ``ddir`` is the grid's own data folder (its data.dir): no ``data_dir`` given, or one naming that very
    folder. ``load_grid(g, data_dir='/work/d')`` of a grid whose data.dir is ``d`` (the same folder, from /work) skipped
    the M59 check as if it were another preparation: data.vocab_size 299 beside the folder's 300 was dropped, the runs
    sized for 300, without a word (issue 30 round 30, Y688)."""
    if not data_dir:
        return True
    if not data.dir:
        return False
    own = Path(os.path.expandvars(os.path.expanduser(str(data.dir))))
    try:
        return os.path.samefile(own, ddir)
    except (OSError, ValueError):  # the grid's folder is not there (or not a path): another preparation
        return False


def _grid_data(data: DataSection, name: str, data_dir: str | None) -> tuple[Path, int, str]:
    """(data folder, vocabulary size, where the size came from: ``meta.json`` or ``grid``)."""
    ddir = data_dir or data.dir
    if not ddir:
        raise ConfigError(f"grid {name!r} names no data dir; set data.dir in the grid or pass --data-dir")
    from ...value_rules import path_problem

    if data_dir is None and (problem := path_problem(ddir)) is not None:  # "d1\0": read as a folder not prepared,
        raise ConfigError(f"grid {name!r}: data.dir {problem}; set data.dir to the prepared data folder")  # V1
    ddir = Path(os.path.expandvars(os.path.expanduser(str(ddir))))
    vocab = read_vocab_size(ddir)
    if vocab is not None and data.vocab_size and int(data.vocab_size) != vocab and _own_folder(ddir, data, data_dir):
        # the grid's own folder prepared with another vocabulary: the grid's was dropped unsaid (round 20, M59); a
        # folder given with --data-dir is another preparation, whose meta.json rules (data.vocab_size plans the grid's)
        raise UserError(f"grid {name!r} says data.vocab_size {data.vocab_size}, but its data folder {str(ddir)!r} is "
                        f"prepared with a vocabulary of {vocab} (its meta.json): the grid's runs would be sized for "
                        f"the folder's, not the grid's; set data.vocab_size: {vocab} in the grid (or drop it), or "
                        f"prepare the data with the grid's tokenizer")
    if vocab is not None:
        return ddir, vocab, "meta.json"
    if not ddir.exists() and (why := missing(ddir)) != "does not exist":  # round 35 (AH49): a looping link was
        raise UserError(f"grid {name!r}: data dir {str(ddir)!r} {why}")  # "not prepared (no meta.json)" or the output's fix
    other = not_prepared(ddir) if ddir.exists() else NO_META
    if not other.startswith(NO_META):  # a train run's folder was "not prepared ... run `leviathan prepare`": preparing
        raise UserError(f"grid {name!r}: data dir {str(ddir)!r} {other}")  # into it (issue 30 round 19, J267)
    if not data.vocab_size:
        raise UserError(f"data dir {str(ddir)!r} is not prepared (no meta.json) and grid {name!r} gives no "
                        f"data.vocab_size; run `{data.prepare or 'leviathan prepare ...'}` first")
    return ddir, int(data.vocab_size), "grid"


def _variant_runs(raw: Any, grid_name: str, sizes: dict | None = None) -> dict[str, list[str]]:
    """``variant_run: {leviathan: {optim.lr: 1e-2}}`` -> {variant: overrides}: run-config settings of one
    variant wherever it runs (each arm at its own tuned learning rate), applied after the size's ``run``. A key
    ``SIZE:VARIANT`` holds the settings of that variant at that size only, applied after the variant's (the arms
    of a width round, each width with its own lr)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"grid {grid_name!r}: variant_run must map a variant to run-config keys, got {raw!r}")
    out = {}
    for key, overrides in raw.items():
        size, _, variant = str(key).rpartition(":")
        if size and sizes is not None and size not in sizes:
            raise ConfigError(f"grid {grid_name!r} variant_run.{key}: unknown size {size!r}; defined sizes: "
                              f"{', '.join(sizes)}")
        _check_variant(variant, f"grid {grid_name!r} variant_run")
        if not isinstance(overrides, dict):
            raise ConfigError(f"grid {grid_name!r}: variant_run.{key} must be a mapping of run-config keys "
                              f"(e.g. {{optim.lr: 1e-3}}), got {overrides!r}")
        out[str(key)] = flatten(overrides)
        check_repeated_overrides(out[str(key)], where=f"in variant_run.{key} of grid {grid_name!r}")
    return out


def _check_variant(v: str, where: str) -> str:
    if v not in EMBEDDING_KINDS:
        raise ConfigError(f"{where}: unknown variant {v!r}; choose from {', '.join(EMBEDDING_KINDS)}")
    return v


def match_total(baseline: ModelConfig, variant: str, tolerance: float = 0.01,
                where: str = "") -> tuple[ModelConfig, int]:
    """``variant`` with ``baseline``'s width and the total closest to the baseline's (within ``tolerance``): the depth
    first (``isoparametric_depth``); when depth alone misses the tolerance (one layer can be several percent of a CPU
    model), the SwiGLU width of the deeper model is trimmed too, trying depths L-1, L, L+1 and keeping the smallest gap
    (then the smallest change of width). Returns (config, target total); the config's ``intermediate_size`` is
    explicit (None only when the default was kept).
    """
    sol = isoparametric_depth(baseline, embedding=variant)
    target = sol.target_total
    if abs(sol.relative_gap) <= tolerance:
        return replace(sol.config, intermediate_size=baseline.intermediate_size), target
    D = baseline.hidden_size
    F0 = baseline.resolved_intermediate_size
    best = None
    for layers in (sol.config.num_hidden_layers - 1, sol.config.num_hidden_layers, sol.config.num_hidden_layers + 1):
        if layers < 1:
            continue
        cfg = replace(sol.config, num_hidden_layers=layers, intermediate_size=F0)
        slope = 3 * D * layers  # parameters per unit of intermediate_size
        F = max(1, F0 + round((target - count_config(cfg).total) / slope))
        cfg = replace(cfg, intermediate_size=F)
        gap = abs(count_config(cfg).total - target)
        key = (gap, abs(F - F0))
        if best is None or key < best[0]:
            best = (key, cfg)
    cfg = best[1]
    rel = (count_config(cfg).total - target) / target
    if abs(rel) > tolerance:
        raise ConfigError(f"{where}: {variant} cannot match the {baseline.embedding} total {target:,} within "
                          f"{tolerance:.0%} (best {rel:+.2%} at {cfg.num_hidden_layers} layers); change the size "
                          f"or raise the grid's tolerance")
    return cfg, target


def expand(experiments: dict, sizes: dict[str, dict], seeds: list[int], data_seed: int | None, tolerance: float,
           grid_name: str = "grid") -> list[RunSpec]:
    """The runs of all experiments, deduplicated by content, in a stable order (experiments, sizes, variants, seeds)."""
    runs = _Runs(sizes, data_seed)
    empty = []
    for key, exp in experiments.items():
        regime, where, spec = _read_experiment(key, exp, sizes, seeds, grid_name)
        add = functools.partial(runs.add, regime)
        if not (spec.sizes and spec.seeds and spec.variants):
            empty.append(where)

        if regime in ("iso_body", "scaling"):  # the same backbone for every variant
            for size in spec.sizes:
                for seed in spec.seeds:
                    for v in spec.variants:
                        add(v, size, {**sizes[size], "embedding": v}, seed)
            continue
        # isoparametric / variants: match the baseline's total by depth
        baseline = spec.baseline
        for size in spec.sizes:
            base_model = {**sizes[size], "embedding": baseline}
            base_cfg = ModelConfig(**base_model)
            for seed in spec.seeds:
                add(baseline, size, base_model, seed)
                for v in spec.variants:
                    if v == baseline:
                        continue
                    cfg, target = match_total(base_cfg, v, tolerance, where=f"{where} size {size!r}")
                    add(v, size, {**base_model, "embedding": v, "num_hidden_layers": cfg.num_hidden_layers,
                                  "intermediate_size": cfg.intermediate_size}, seed, target=target)
    if empty and runs.by_name:  # round 15 (B36): `iso_body: {sizes: []}` beside others: iso_body gone, no word
        raise ConfigError(f"grid {grid_name!r}: {', '.join(empty)} makes no run (no sizes, variants or seeds listed "
                          f"in it); list at least one of each, or remove the experiment")
    return list(runs.by_name.values())


def _read_experiment(key: str, exp: dict | None, sizes: dict[str, dict], seeds: list[int],
                     grid_name: str) -> tuple[str, str, ExperimentSpec]:
    """(regime, where for messages, the entry with its defaults filled in) of one ``experiments:`` entry, checked:
    ``seeds`` the grid's unless it names its own, ``variants`` the ladder's one variant for ``scaling``,
    ``baseline`` the regime's unless it names one (and None for the regimes that keep one backbone)."""
    regime = str(key).split(":", 1)[0]  # "iso_body:arms": a second iso_body experiment of the same grid
    if regime not in REGIMES:
        raise ConfigError(f"grid {grid_name!r}: unknown experiment {key!r}; choose from {', '.join(REGIMES)} "
                          f"(optionally with a label: iso_body:arms)")
    where = f"experiments.{key}"
    spec = ExperimentSpec.of(exp, where)
    for s in spec.sizes:
        if s not in sizes:
            raise ConfigError(f"{where}.sizes: unknown size {s!r}; defined sizes: {', '.join(sizes)}")
    spec.seeds = list(seeds if spec.seeds is None else spec.seeds)
    if regime == "scaling":
        spec.variants = [_check_variant(DEFAULT_LADDER if spec.variant is None else spec.variant, where)]
        if len(set(spec.sizes)) < 3:
            raise ConfigError(f"{where}: a power-law fit needs at least 3 sizes (4 or more recommended)")
    else:
        spec.variants = [_check_variant(v, where) for v in spec.variants]
    if regime in ("isoparametric", "variants"):
        spec.baseline = _check_variant(BASELINES[regime] if spec.baseline is None else spec.baseline, where)
    else:
        spec.baseline = None
    return regime, where, spec


@dataclass
class _Runs:
    """A grid's runs as ``expand`` finds them: one per distinct content, named by it, in first-seen order."""

    sizes: dict[str, dict]  # the grid's sizes: a run's name says where it departs from its size's backbone
    data_seed: int | None  # the grid's data order; None: each run's own seed
    by_name: dict[str, RunSpec] = field(default_factory=dict)

    def add(self, regime: str, variant: str, size: str, model: dict, seed: int, target: int | None = None) -> None:
        """Add a run, or add ``regime`` (and a target total) to the identical run already there."""
        default, cfg = ModelConfig(**self.sizes[size]), ModelConfig(**model)
        layers, ffn = cfg.num_hidden_layers, cfg.intermediate_size
        name = f"{size}-{variant}" + (f"-L{layers}" if layers != default.num_hidden_layers else "") \
            + (f"-F{ffn}" if ffn is not None and ffn != default.intermediate_size else "") + f"-s{seed}"
        if name in self.by_name:
            run = self.by_name[name]
            if regime not in run.regimes:
                run.regimes.append(regime)
            if target is not None and run.target_total is None:
                run.target_total = target
            return
        self.by_name[name] = RunSpec(name=name, regimes=[regime], variant=variant, size=size, seed=seed,
                                     data_seed=seed if self.data_seed is None else self.data_seed, model=cfg,
                                     params=count_config(cfg), model_keys=tuple(model), target_total=target)


def format_runs(grid: Grid, runs: list[RunSpec] | None = None, selection: str | None = None) -> str:
    """Table of the expanded runs (``runs``: a selection of them, ``selection`` saying how it was made; default
    the whole grid): name, regimes, layers, parameter groups."""
    runs = grid.runs if runs is None else runs
    head = f"{'run':<34} {'regimes':<32} {'layers':>6} {'input':>12} {'body':>12} {'head':>12} {'total':>13}"
    order = f"data seed {grid.data_seed}" if grid.keys.data_seed and grid.data_seed is not None \
        else "data order fixed by each run's seed"
    count = f"{len(grid.runs)} runs" if selection is None else f"{len(runs)} of {len(grid.runs)} runs ({selection})"
    lines = [f"grid {grid.name!r}: {count}, data {grid.data_dir} (vocab {grid.vocab_size:,} from "
             f"{grid.vocab_from}), {order}", head, "-" * len(head)]
    for r in runs:
        p = r.params
        extra = ""
        if r.target_total:
            extra = f"  ({(p.total - r.target_total) / r.target_total:+.2%} vs baseline)"
        lines.append(f"{r.name:<34} {','.join(r.regimes):<32} {r.num_hidden_layers:>6} {p.input:>12,} "
                     f"{p.body:>12,} {'tied' if p.tied else format(p.head, ','):>12} {p.total:>13,}{extra}")
    return "\n".join(lines)


def format_grids() -> str:
    """A line per grid a bare ``--grid NAME`` can take (``available_grids``: the packaged ones and ./configs'):
    name, number of runs, description; a grid that does not load says why on its line."""
    from ...configs import local_dir

    lines, local_smoke = [], (local_dir(GRIDS) / "smoke.yaml").is_file()
    for name in available_grids():
        where = " (./configs)" if (local_dir(GRIDS) / f"{name}.yaml").is_file() else ""
        try:
            grid, top = load_grid(name), read_grid_file(name)[0]
            # round 15 (B298): smoke.yaml holding grid 'tinyg' was listed as smoke; its rows are of grid 'tinyg'
            named = "" if grid.name == name else (f" [the file names grid {grid.name!r}: its rows are of grid "
                                                  f"{grid.name!r}; rename the file {grid.name}.yaml]")
            lines.append(f"{name:<14} {len(grid.runs):>3} runs  {top.description or '(no description)'}{where}{named}")
        except UserError as e:
            lines.append(f"{name:<14}   ?        does not load: {e}{where}")
    smoke = "" if local_smoke else ("; smoke is the small pipeline check (a few CPU minutes on a prepared BPE "
                                    "folder: --data-dir)")
    return "\n".join(lines + ["", f"leviathan sweep --grid NAME --list shows a grid's runs{smoke}."])

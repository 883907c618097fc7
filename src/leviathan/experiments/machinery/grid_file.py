"""A grid YAML read into typed sections: what ``experiments.machinery.grid`` expands into runs.

    gf = read_grid_file("cpu-bpe32k")                # GridFile (a name or a path; a dict is taken as the file)
    gf.seeds, DataSection.of(gf.data).dir, gf.sizes  # the file's keys, a key left out at its default

The top level (``GridFile``) is checked when it is read: a key a grid does not have is a ConfigError with the
closest valid one. Its sections are parsed where the grid is expanded, in the order ``grid.load_grid`` checks them
(a file with several mistakes reports the same one first): ``data`` -> ``DataSection`` (a folder name alone is its
``dir``), ``keys`` -> ``GridKeys``, ``eval`` -> ``EvalSet``s and ``EvalOptions``, each ``sizes`` entry ->
``SizeSpec`` (a preset name, or model fields and a ``run`` mapping, or a list of them applied in order), each
``experiments`` entry -> ``ExperimentSpec``. Every section is read strictly (issue 30): an unknown key, a value of
the wrong type (``buckets: five``) or shape is a ConfigError naming the key; seeds are checked against
``leviathan.seeds``' range, ``tolerance`` must be a finite fraction.

``anchors:`` holds YAML anchors and nothing else: settings written once that several sizes merge with YAML's
merge key (``d32L6-pick: {<<: [*d32L6, *pick]}``), so that one line changes them all (the width round's generator
arm, results/o200k-width/PLAN.md). YAML resolves them while reading; the grid never reads the key. Footgun:
``<<`` merges one level deep, so a size that merges a ``run`` mapping and writes its own ``run`` loses the merged
one; write ``run: [*merged_run, {optim.lr: 1e-3}]`` instead (a list of mappings, applied in order).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


from ...config import ConfigError, from_dict, load_yaml, require
from ...configs import find_grid_file
from ...seeds import check_seed
from ...settings_kind import other_settings_file
from ...strict_yaml import QuotedText, as_text_in_quotes


@dataclass
class GridFile:
    """The top-level keys of a grid YAML, as written (``None``: left out; ``seeds`` and ``tolerance`` default)."""

    name: str | None = None
    description: str | None = None
    base_config: str | None = None  # a run-config name or path
    base: Any = None  # dotted or nested run-config overrides of every run
    data: Any = None  # ``DataSection``
    data_seed: int | None = None
    seeds: Any = field(default_factory=lambda: [0])
    keys: Any = None  # ``GridKeys``
    eval: Any = None  # ``parse_eval``
    sizes: Any = None  # {size: ``SizeSpec``}
    experiments: Any = None  # {regime[:label]: ``ExperimentSpec``}
    tolerance: Any = 0.01  # isoparametric: relative gap of totals that counts as equal
    notes: Any = None
    ablations: Any = None  # {factor: [SIZE or SIZE:VARIANT]}: the ablation report's figure groups
    variant_run: Any = None  # {VARIANT or SIZE:VARIANT: run-config overrides}
    anchors: Any = None  # YAML anchors that sizes merge (``<<: *name``); read by YAML only, never by the grid


GRID_KEYS = frozenset(f.name for f in dataclasses.fields(GridFile))


def read_grid_file(name_or_path: str | os.PathLike | dict) -> tuple[GridFile, Path | None]:
    """(the grid's top level, its file; None for a grid given as a dict). A grid by name (``cpu``, ``paper``) or
    path follows ``leviathan.configs``' rules; an unknown top-level key is a ConfigError naming the closest one."""
    if isinstance(name_or_path, dict):  # its text is text, as a file's quoted scalars are (round 23, U226)
        raw, path = as_text_in_quotes(dict(name_or_path)), None
    else:
        path = find_grid_file(name_or_path)
        raw = load_yaml(path)
    unknown = set(raw) - GRID_KEYS
    if unknown:  # a run config given to sweep (round 16, C264)
        from ...run_config import RunConfig  # here: run_config is heavier than a grid file's reader

        run_keys = {f.name for f in dataclasses.fields(RunConfig)}
        if other := other_settings_file(raw, "grid", path, run_keys, GRID_KEYS):
            raise ConfigError(other)
    if unknown:
        k = sorted(unknown, key=str)[0]  # a key YAML reads as a number (`1: 2`): a TypeError before (round 6)
        hint = difflib.get_close_matches(str(k), GRID_KEYS, n=1)
        raise ConfigError(f"unknown key {k!r} in grid {raw.get('name', path)}" +
                          (f"; did you mean {hint[0]!r}?" if hint else f"; valid keys: {', '.join(sorted(GRID_KEYS))}"))
    if raw.get("description") is not None and not isinstance(raw["description"], str):  # round 15 (B39)
        raise ConfigError(f"grid {raw.get('name', path)}: description is {raw['description']!r}, not text; write it "
                          f"as one line of text (quoted if it holds ': ' or starts with '[')")
    return GridFile(**raw), path


def plain_name(raw: Any, where: str) -> str:
    """``raw`` as a name that is one folder name: a grid's name is its default --out (``runs/<name>``) and a size's
    name starts its runs' folders (``OUT/runs/<size>-<variant>-s<seed>``), so a ``/`` or ``..`` in them put a run
    outside the sweep (issue 30 round 6: a size named ``../../x`` trained into a folder beside the sweep's)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):  # round 8: `name: !!binary aGVsbG8=` named "b'hello'"
        raise ConfigError(f"{where}: expected a name (text), got {type(raw).__name__} {raw!r:.40}; write a plain name "
                          f"(letters, digits, '-', '_')")
    name = str(raw)
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ConfigError(f"{where}: {name!r} is not a plain name (it names a folder: runs/<name>, "
                          f"runs/<size>-<variant>-s<seed>); use letters, digits, '-', '_' or '.' and no '/'")
    if not name.isprintable() or name != name.strip() or name.startswith("-"):  # round 11 (S59, S60): a newline
        raise ConfigError(f"{where}: {name!r} is not a plain name (a control character, a space at either end or a "  # or
                          f"leading '-' would be part of a folder name); use letters, digits, '-', '_' or '.'")  # a space
    return name


def mapping(raw: Any, where: str) -> dict:
    """A section that must be a mapping of keys (``None``: empty); another shape is a ConfigError naming it."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping of keys (key: value lines), got {raw!r}")
    return dict(raw)


def seed_list(raw: Any, where: str) -> list[int]:
    """A list of seeds (a single integer is refused: write ``[0]``), each in ``leviathan.seeds``' range, none
    twice (a repeated seed would name one run twice)."""
    if not isinstance(raw, (list, tuple)):
        raise ConfigError(f"{where}: expected a list of seeds such as [0, 1, 2], got {raw!r}")
    return no_repeats([check_seed(s, f"{where}[{i}]") for i, s in enumerate(raw)], where)


def no_repeats(values: list, where: str) -> list:
    """``values`` unchanged, or a ConfigError naming the first value written twice: a list whose repeat would
    be dropped silently (seeds, sizes, variants name runs, and a run exists once)."""
    for i, v in enumerate(values):
        if v in values[:i]:  # a list, not a set: an entry written as a mapping is refused later, by name
            raise ConfigError(f"{where}: {v!r} is listed twice; list each once (a run exists once)")
    return values


def tolerance_of(raw: Any, where: str = "tolerance") -> float:
    """The isoparametric tolerance: a finite number in (0, 1) (a relative gap of totals)."""
    if isinstance(raw, QuotedText):  # a quoted number is text (round 16, C135)
        raise ConfigError(f"{where}: {str(raw)!r} is in quotes{raw.where()}, which makes it text, not a number; remove "
                          f"the quotes")
    if isinstance(raw, str):  # YAML 1.1 reads `1e-2` (no dot) as text; a config's numbers take it (round 11, S207)
        try:
            raw = float(raw)
        except ValueError:
            pass
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or not 0 < raw < 1:
        raise ConfigError(f"{where}: expected a number in (0, 1) (the relative gap of totals that counts as equal, "
                          f"e.g. 0.01), got {raw!r}")
    return float(raw)


@dataclass
class DataSection:
    """``data:``: the prepared data folder, and the vocabulary size to plan with before it is prepared."""

    dir: str | None = None
    vocab_size: int | None = None
    prepare: str | None = None  # the command that prepares it (named when the folder is not prepared yet)

    @classmethod
    def of(cls, raw: Any) -> DataSection:
        """From the section as written: a mapping, a folder name, or nothing."""
        if isinstance(raw, str):
            return cls(dir=raw)
        return from_dict(cls, mapping(raw, "data"), prefix="data.")


@dataclass
class GridKeys:
    """``keys:``: the dotted run-config keys the grid's seed, data seed and data folder are written to (no data
    seed key: the run config has none, and each run's seed fixes its data order)."""

    seed: str = "seed"
    data_seed: str | None = None
    data_dir: str = "data.path"

    @classmethod
    def of(cls, raw: Any) -> GridKeys:
        """From the section as written (a key left out keeps its default). A key that names a setting of the run
        config names one of the kind the grid writes there (an integer for the seeds, text for the data folder):
        ``keys: {seed: optim.lr}`` wrote each seed into the learning rate and was refused as "optim.lr must be
        positive, got 0.0", which named no grid key (issue 30 round 7, D33)."""
        keys = from_dict(cls, mapping(raw, "keys"), prefix="keys.")
        for name, kind, what in (("seed", int, "an integer setting such as seed"),
                                 ("data_seed", int, "an integer setting"),
                                 ("data_dir", str, "a text setting such as data.path")):
            dotted = getattr(keys, name)
            found = None if dotted is None else _setting_type(dotted)
            if found is not None and found is not kind:  # a key the run config lacks is its own error, per run
                said = _KIND_NAMES.get(found, "another kind of setting")
                raise ConfigError(f"keys.{name}: {dotted!r} is {said}; the grid writes each run's "
                                  f"{name.replace('_', ' ')} there, so it must name {what} (or leave keys.{name} out "
                                  f"for the default)")
        return keys


_KIND_NAMES = {int: "an integer setting", float: "a number setting", str: "a text setting",
               bool: "a true/false setting", dict: "a section, not a setting"}


def _setting_type(dotted: str) -> type | None:
    """The scalar type of the run-config setting ``dotted`` names (``optim.lr`` -> float); ``dict`` for a section,
    None for no setting of leviathan's run config (``keys.data_seed`` may name one a base config of its own has)."""
    import dataclasses
    import types
    import typing

    from ...run_config import RunConfig  # here: run_config is heavier than a grid file's reader

    tp: Any = RunConfig
    for part in dotted.split("."):
        if not (isinstance(tp, type) and dataclasses.is_dataclass(tp)):
            return None
        hints = typing.get_type_hints(tp)
        if part not in hints or part not in {f.name for f in dataclasses.fields(tp)}:
            return None
        tp = hints[part]
        if typing.get_origin(tp) in (typing.Union, types.UnionType):  # Optional[int]: int
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return dict
    return tp if tp in _KIND_NAMES else object  # a list, a choice of names


@dataclass
class EvalSet:
    """``split``: a split of the prepared data dir; ``text``: a raw text file (tokenized with the data's tokenizer)."""

    name: str
    split: str | None = None
    text: str | None = None  # path; relative paths resolve against the data folder (LEVIATHAN_DATA)
    optional: bool = False  # skip (with a note) instead of failing when the file is missing


@dataclass
class EvalOptions:
    """``eval:`` options besides ``sets`` (grid.json records them as written)."""

    buckets: int = 5  # training-frequency buckets
    bucket_method: Literal["mass", "log"] = "mass"  # eval.frequency's rule
    seq_len: int | None = None  # None: the run's
    batch_size: int = 8
    max_tokens: int | None = None  # tokens evaluated per set (None: all)
    bucket_sets: list[str] | None = None  # eval sets with per-bucket losses (None: every set)

    def __post_init__(self) -> None:
        for name in ("buckets", "batch_size", "seq_len", "max_tokens"):
            value = getattr(self, name)
            require(value is None or (isinstance(value, int) and value >= 1),
                    f"eval.{name} must be a positive integer{' or null' if name in ('seq_len', 'max_tokens') else ''}"
                    f", got {value!r}")
        from ...eval.frequency import MAX_BUCKETS

        require(2 <= self.buckets <= MAX_BUCKETS, f"eval.buckets must be between 2 and {MAX_BUCKETS} (each bucket "
                                                  f"averages a share of the training tokens), got {self.buckets:,}")


def parse_eval(raw: Any, grid_name: str) -> tuple[list[EvalSet], EvalOptions]:
    """The grid's eval sets (default: the val split) and options; a set with neither or both of ``split`` and
    ``text``, or an unknown option, is a ConfigError."""
    ev = mapping(raw, "eval")
    sets_raw = mapping(ev.pop("sets", None), "eval.sets") or {"val": {"split": "val"}}
    eval_sets = []
    for set_name, s in sets_raw.items():
        where = f"eval.sets.{set_name}"
        s = {"split": s} if isinstance(s, str) else mapping(s, where)
        if "name" in s:
            raise ConfigError(f"{where}: 'name' is the set's key itself; delete it")
        if "optional" in s and not isinstance(s["optional"], bool):  # round 15 (B41): "yes" was read as true
            raise ConfigError(f"{where}.optional: expected true or false, got {s['optional']!r}; write true or "
                              f"false without quotes")
        es = from_dict(EvalSet, {"name": str(set_name), **s}, prefix=f"{where}.")
        if (es.split is None) == (es.text is None):
            raise ConfigError(f"grid {grid_name!r}: eval set {set_name!r} needs exactly one of split: or text:")
        _check_set_names(es, grid_name)
        eval_sets.append(es)
    options = [f.name for f in dataclasses.fields(EvalOptions)]
    for k in ev:
        if k not in options:
            raise ConfigError(f"unknown key eval.{k} in grid {grid_name!r}; valid: sets, {', '.join(options)}")
    opts = from_dict(EvalOptions, ev, prefix="eval.")
    unknown = [str(n) for n in opts.bucket_sets or [] if n not in {es.name for es in eval_sets}]
    if unknown:  # round 15 (B43): `bucket_sets: [nope]` wrote rows with no per-bucket losses at all, no word
        raise ConfigError(f"grid {grid_name!r}: eval.bucket_sets names {', '.join(map(repr, unknown))}, which is no "
                          f"eval set of the grid (its sets: {', '.join(es.name for es in eval_sets)}); name sets of "
                          f"eval.sets")
    return eval_sets, opts


def _check_set_names(es: EvalSet, grid_name: str) -> None:
    """ConfigError when an eval set's ``text:`` path or ``split:`` name holds a NUL byte: the text was "does not
    exist" (the file does; an optional set was skipped as missing), where data.dir's line names the NUL (issue 30
    round 29, V2; data.path's rule, round 28 T4, and data.dir's, V1). Refused here, so --list and --commands refuse
    it with the run."""
    from ...value_rules import path_problem

    for key, value in (("text", es.text), ("split", es.split)):
        if isinstance(value, str) and "\0" in value and (problem := path_problem(value)) is not None:
            raise ConfigError(f"grid {grid_name!r}: eval set {es.name!r}: {key}: {problem}; set {key}: to "
                              + ("the path of a UTF-8 text file" if key == "text" else "a split of the data folder "
                                 "(val, or one prepare wrote)"))


@dataclass
class SizeSpec:
    """A ``sizes:`` entry: model fields as written (``preset`` among them) and the size's run-config overrides."""

    fields: dict
    run: list[dict]  # mappings of nested or dotted run-config keys, applied in order

    @classmethod
    def of(cls, name: str, spec: Any) -> SizeSpec:
        """From a preset name or a mapping of model fields with an optional ``run`` mapping, or list of mappings
        applied in order (checked)."""
        if isinstance(spec, str):
            spec = {"preset": spec}
        if not isinstance(spec, dict):
            raise ConfigError(f"sizes.{name}: expected a preset name or a mapping of model fields, got {spec!r}")
        spec = dict(spec)
        run = spec.pop("run", None) or {}
        runs = run if isinstance(run, list) else [run]
        if not runs or not all(isinstance(r, dict) for r in runs):
            raise ConfigError(f"sizes.{name}.run: expected a mapping of run-config keys (or a list of them, applied "
                              f"in order), got {run!r}")
        return cls(spec, runs)


@dataclass
class ExperimentSpec:
    """An ``experiments:`` entry as written; what it leaves out (None) is the grid's or the regime's default."""

    sizes: list = field(default_factory=list)
    seeds: list | None = None  # None: the grid's seeds
    variant: str | None = None  # scaling: the ladder's variant (None: results.DEFAULT_LADDER)
    variants: list = field(default_factory=list)
    baseline: str | None = None  # isoparametric / variants (None: results.BASELINES of the regime)

    @classmethod
    def of(cls, raw: Any, where: str = "experiments entry") -> ExperimentSpec:
        """From the entry as written (an empty entry: no sizes, no variants); unknown keys and wrong shapes refused."""
        spec = from_dict(cls, mapping(raw, where), prefix=f"{where}.")
        spec.sizes = no_repeats(list(spec.sizes or []), f"{where}.sizes")
        spec.variants = no_repeats(list(spec.variants or []), f"{where}.variants")
        if spec.seeds is not None:
            spec.seeds = seed_list(spec.seeds, f"{where}.seeds")
        return spec

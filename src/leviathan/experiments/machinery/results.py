"""Typed rows of a sweep's ``results.jsonl``, their one reader and writer, and the regime -> baseline map.

    rows = read_results("runs/cpu")                  # [ResultRow]; torn or damaged lines skipped, reported by number;
                                                     # one row per run (``identity.resolve_duplicates``)
    rows[0].eval["val"].bpb, rows[0].params.total    # typed access
    append_result("runs/cpu/results.jsonl", row)     # one atomic line per row

A row is one finished run of a grid (``sweep.make_row``): who it is, its backbone and parameter groups
(docs/DESIGN.md §5), its training summary, its evaluation per eval set (§7) and per training-frequency bucket, its
validation curve, where it ran, how it was evaluated (``identity``) and what produced it (``provenance``).
``ResultRow.from_dict`` reads rows of any earlier version (a missing key is None or empty; an unknown one is kept in
``extra`` and written back), values kept as written, so numbers derived from old rows do not change.

``BASELINES`` maps each comparison regime (docs/DESIGN.md §4) to the variant the others are compared with;
``DEFAULT_LADDER`` is the scaling ladder's variant when a grid names none. ``json_safe`` makes every file the
experiments write strict JSON, non-finite floats as null.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import numpy as np

from ...codec import DROP, decode, encode, encode_fields, extra_keys
from ...data.fingerprint_fields import recorded_problem
from ...errors import ArgumentTypeError, ArgumentValueError, UserError, dead_link, missing, not_regular
from ...eval.consistency import ppl_contradicts
from ...eval.result import EvalResult
from ...storage import api_write
from ... import json_text
from ...model.accounting import ParamCounts
from .identity import Evaluation
from .provenance import CodeProvenance, DataProvenance

if TYPE_CHECKING:
    from ...run_config import RunConfig

RESULTS = "results.jsonl"

# docs/DESIGN.md §4: the variant each regime's comparisons are made against
BASELINES: dict[str, str] = {"iso_body": "dense_tied", "isoparametric": "dense_untied", "variants": "dense_untied"}
COMPARISONS: tuple[tuple[str, str], ...] = tuple(BASELINES.items())  # (regime, baseline), in report order
DEFAULT_LADDER = "dense_untied"  # the scaling ladder's variant when the grid's scaling experiment names none


REGIMES = ("iso_body", "isoparametric", "scaling", "variants")  # a grid's experiments (the rows' regimes)


def check_comparison(api: str, regime, baseline) -> str:
    """The baseline variant of a comparison in ``regime`` (``baseline`` None: the regime's own), after refusing a
    regime no row can serve and a baseline that is no embedding variant (as ``analyze --regime/--baseline``'s
    choices do): ``efficiency_from_results(rows, regime='nope')`` and ``frequency_from_results(rows,
    baseline='nope')`` returned [] without a word (issue 30 round 19, J283, J284)."""
    from ...value_rules import api_check
    from ...model.config import EMBEDDING_KINDS

    api_check(api, "regime", None if regime in REGIMES else f"no such regime {regime!r:.40}",
              f"pass one of {', '.join(REGIMES)}")
    api_check(api, "baseline", None if baseline is None or baseline in EMBEDDING_KINDS else f"no such variant "
              f"{baseline!r:.40}", f"pass one of {', '.join(EMBEDDING_KINDS)}, or None for the regime's own")
    return baseline or baseline_of(regime)


def baseline_of(regime: str | None) -> str:
    """The baseline variant of a regime; a regime outside ``BASELINES`` compares with dense_tied (same backbone)."""
    return BASELINES.get(regime or "", BASELINES["iso_body"])


# --------------------------------------------------------------------------------------------
# JSON


def json_safe(o: Any) -> Any:
    """``o`` as plain JSON values: non-finite floats -> None, numpy scalars and arrays -> numbers and lists,
    tuples -> lists, paths -> strings, dataclasses (rows, records, counts) -> their JSON (``codec.encode``).
    Dict keys are kept as they are."""
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (int, np.integer)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        v = float(o)
        return v if math.isfinite(v) else None
    if isinstance(o, str) or o is None:
        return o
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return json_safe(encode(o))
    if isinstance(o, Mapping):
        return {k: json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [json_safe(v) for v in o]
    if isinstance(o, np.ndarray):
        return json_safe(o.tolist())
    if isinstance(o, PurePath):
        return str(o)
    return o


def json_default(o: Any) -> Any:
    """``json.dumps(..., default=json_default)`` hook for the types ``json_safe`` converts."""
    out = json_safe(o)
    if out is o:
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")
    return out


def dumps(o: Any, **kwargs) -> str:
    """Strict JSON text of ``o`` (``json_safe`` first; NaN and infinity never reach the file, nor an object whose keys
    collide as text, ``json_text.repeated_key``: the readers refuse it, round 29 W209's kind)."""
    plain = json_safe(o)
    if (repeated := json_text.repeated_key(plain, "the record")) is not None:
        raise ArgumentValueError(f"{repeated[0]} has keys {repeated[1]!r} and {repeated[2]!r}, both written as the key "
                                 f"\"{repeated[3]}\", which the readers refuse; give each key once, as text")
    return json.dumps(plain, allow_nan=False, **kwargs)


# --------------------------------------------------------------------------------------------
# the parts of a row


class _RowPart:
    """A part of a row: ``codec``'s decode / encode, unknown keys kept in its ``extra`` field."""

    extra: dict

    @classmethod
    def from_dict(cls, d: Mapping | _RowPart | None):
        if d is not None and not isinstance(d, (Mapping, cls)):
            raise UserError(f"expected a mapping for {cls.__name__}, got {type(d).__name__}")
        return decode(cls, d)

    def to_dict(self) -> dict:
        return encode_fields(self)


@dataclass(frozen=True)
class BucketScheme:
    """What a row's bucket description says, typed: the rule (``mass`` | ``log``; None where not recorded) and each
    bucket's range of training counts, rarest first (empty where not recorded)."""

    method: str | None
    ranges: list[tuple[int, int]]

    @classmethod
    def of(cls, description: Mapping) -> BucketScheme:
        """From a description as rows hold it (``eval.frequency.Buckets.as_dict``: method, min_count, max_count, ...)."""
        return cls(description.get("method"),
                   list(zip(description.get("min_count") or [], description.get("max_count") or [])))


@dataclass
class BucketResult(_RowPart):
    """Losses of one eval set per training-frequency bucket, rarest first (``frequency.BucketLosses``); ``buckets`` is the
    bucket description as written (``frequency.Buckets.as_dict``), read by ``BucketScheme.of``.
    """

    loss: list = field(default_factory=list)
    ppl: list | None = None
    count: list | None = None
    num_unseen_targets: int | None = None
    overall_loss: float | None = None
    buckets: dict = field(default_factory=dict)
    extra: dict = extra_keys()


@dataclass
class TrainingCurve(_RowPart):
    """The validation curve and the logged gradient norms of a run, kept in its row so that a results.jsonl alone
    (run folders are not committed) redraws the curves; ``grad_norm_*_median`` are the medians over training (rows
    written before the head's norm was logged in the curve carry only the median)."""

    tokens: list = field(default_factory=list)
    val_loss: list = field(default_factory=list)
    grad_tokens: list = field(default_factory=list)
    grad_norm_input: list = field(default_factory=list)
    grad_norm_head: list = field(default_factory=list)
    grad_norm_input_median: float | None = None
    grad_norm_head_median: float | None = None
    extra: dict = extra_keys()


# --------------------------------------------------------------------------------------------
# the row

_NESTED = ("eval", "buckets")  # {eval set: part}; a null part is left out


@dataclass
class ResultRow:
    """One line of results.jsonl: a finished run of a grid with its training summary and evaluation."""

    name: str
    regime: str | None = None  # the first of ``regimes``
    regimes: list[str] = field(default_factory=list)  # every comparison this run serves (docs/DESIGN.md §4)
    variant: str | None = None
    size: str | None = None
    seed: int | None = None
    data_seed: int | None = None
    num_hidden_layers: int | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    params: ParamCounts | None = None  # model.accounting's counts
    target_total: int | None = None  # isoparametric: the baseline total this run matches
    model: dict | None = None  # the run's ModelConfig fields
    steps: int | None = None
    tokens: int | None = None  # training tokens
    wall_time_s: float | None = None
    tokens_per_s: float | None = None
    final_val_loss: float | None = None  # the training loop's last validation
    final_val_ppl: float | None = None
    eval: dict[str, EvalResult] = field(default_factory=dict)
    buckets: dict[str, BucketResult] = field(default_factory=dict)
    hardware: dict | str | None = None
    run_dir: str | None = None  # relative to the sweep folder (rows written before issue 19: absolute)
    metrics: str | None = None  # the run's metrics.jsonl, relative like run_dir
    curve: TrainingCurve | None = None
    grid: str | None = None
    created: str | None = None
    notes: list[str] = field(default_factory=list)
    config: dict | None = None  # the resolved RunConfig as written (``provenance.resolved_config``); read ``run_config``
    evaluation: Evaluation | None = None  # how its eval numbers were measured (``identity.evaluation_settings``)
    code: CodeProvenance | None = None  # the commit and versions it trained with
    data: DataProvenance | None = None  # its prepared data: folder, fingerprint, tokenizer, token counts
    extra: dict = extra_keys()  # keys this version does not know, kept as read

    # ---- reading and writing

    @classmethod
    def from_dict(cls, d: Mapping) -> ResultRow:
        """A row from its JSON object, tolerant of rows written by earlier versions (see the module docstring)."""
        if isinstance(d, ResultRow):
            return d
        if not isinstance(d, Mapping) or d.get("name") is None:
            raise UserError(f"a results row is a JSON object with a name, got {str(d)[:80]!r}")
        # what earlier writers left empty in other ways reads as the empty value this one writes
        empty = {"regimes": d.get("regimes") or [], "notes": d.get("notes") or [], "params": d.get("params") or None,
                 "curve": d.get("curve") or None,
                 **{key: {k: v for k, v in (d.get(key) or {}).items() if v is not None} for key in _NESTED}}
        return decode(cls, {**d, **empty})

    def to_dict(self) -> dict:
        """The row as written: every field (None where unknown), then the ``extra`` keys."""
        return copy.deepcopy(encode_fields(self))

    # ---- typed questions the analyses ask

    @cached_property
    def run_config(self) -> RunConfig | None:
        """``config`` typed, decoded once (None for a row written before configs were recorded). ``config`` stays the dict as
        written (rows reread and rewrite byte for byte; ``drift`` compares it key by key). Footgun: this view is tolerant (a
        retired key dropped, a new one at its default): ask it what the run trained with, and ``config`` (or ``drift``)
        whether two configs are the same.
        """
        from ...run_config import RunConfig

        try:
            return None if self.config is None else decode(RunConfig, self.config, DROP)
        except (TypeError, ValueError) as e:  # RunConfig's own checks: a partial or edited config
            raise UserError(f"row {self.name!r}: its config does not read as a RunConfig ({e})") from None

    def recorded(self, dotted: str) -> Any:
        """A setting of ``config`` as written (``"optim.lr"``); None where the row does not record it."""
        return setting(self.config, dotted)

    @property
    def data_provenance(self) -> DataProvenance:
        """``data``, or an empty ``DataProvenance`` (every field None) for a row that records none."""
        return self.data or DataProvenance()

    @property
    def all_regimes(self) -> list[str | None]:
        """``regimes``, or ``[regime]`` for a row that lists only its first regime."""
        return list(self.regimes) or [self.regime]

    def in_regime(self, regime: str) -> bool:
        return regime in self.all_regimes

    def metric(self, eval_set: str, name: str) -> Any:
        """A number of the row's evaluation on ``eval_set`` (an ``EvalResult`` field: ``loss``, ``bpb``,
        ``share_outside``, ...); None where the set was not evaluated or the number not recorded."""
        ev = self.eval.get(eval_set)
        return None if ev is None else getattr(ev, name)

    def loss(self, eval_set: str = "val") -> float | None:
        """Loss on an eval set; for ``val`` the training loop's final validation loss when the set was not evaluated."""
        loss = self.metric(eval_set, "loss")
        if loss is not None:
            return float(loss)
        if eval_set == "val" and self.final_val_loss is not None:
            return float(self.final_val_loss)
        return None

    def bpb(self, eval_set: str = "val") -> float | None:
        return self.metric(eval_set, "bpb")

    @property
    def total_params(self) -> int | None:
        return None if self.params is None else self.params.total

    def hardware_key(self) -> str:
        """Where the run's throughput was measured, as one string (runs compare fairly only when equal)."""
        if isinstance(self.hardware, str):
            return self.hardware
        hw = decode(_Hardware, self.hardware or {}, DROP)  # only the parts that say where
        parts = [str(hw.device), str(hw.cpu), f"threads={hw.torch_threads}"] + ([str(hw.gpu)] if hw.gpu else [])
        return " / ".join(p for p in parts if p)


def setting(config: Any, dotted: str) -> Any:
    """``config["optim"]["lr"]`` for ``"optim.lr"`` of a config dict as written; None where it holds none."""
    for part in dotted.split("."):
        config = config.get(part) if isinstance(config, dict) else None
    return config


@dataclass
class _Hardware:
    """The parts of a row's ``hardware`` (``io.hardware_info``) that say where its throughput was measured."""

    device: Any = ""
    cpu: Any = ""
    torch_threads: Any = ""
    gpu: Any = None


# --------------------------------------------------------------------------------------------
# results.jsonl


def _skipped_line_notes(path: Path, bad: list[tuple[int, str]], values: list[tuple[int, Any]],
                        rows: list[tuple[str, ResultRow]]) -> list[str]:
    """The warnings of ``bad`` lines, each saying what follows from skipping it: a line whose run has a sound row on
    another line is replaced by that row; any other leaves its run without a result. Every skipped line was said to
    leave its run without one, where another line of that run was read and reported (issue 30 round 19, H95, H96)."""
    from ...jsonl import bad_line_notes

    alone = "its run has no result here (the sweep trains or evaluates it again; once it has a new row, delete this line)"
    return bad_line_notes(path, bad, "row", skipped_consequence(values, {row.name: where for where, row in rows},
                                                                 "is read instead", alone))


def skipped_consequence(values: list[tuple[int, Any]], kept: dict[str, str], instead: str, alone: str):
    """``bad_line_notes``' consequence of skipping line N: ``the sound row of its run 'R' (WHERE) INSTEAD; delete this
    line`` when the line names a run ``kept`` holds (run name -> where its sound row is), else ``alone``. One rule for
    the readers and collect_results, which said a damaged duplicate's run "has no row: the sweep trains it again"
    while it copied the run's sound row (issue 30 round 21, N279)."""
    named = {number: d.get("name") for number, d in values if isinstance(d, dict)}

    def consequence(number: int) -> str:
        name = named.get(number)
        if isinstance(name, str) and name in kept:
            return f"the sound row of its run {name!r} ({kept[name]}) {instead}; delete this line"
        return alone

    return consequence


def read_results(path: str | os.PathLike, report=None) -> list[ResultRow]:
    """Rows of a results.jsonl (a sweep dir or the file). Blank lines are skipped; a torn, non-UTF-8 or nameless
    line is skipped and reported with its line number (``report(message)``, default: stderr), so no reader
    (report, analyze, the sweep) drops a run silently. The sweep reruns a run whose row was skipped."""
    from ...value_rules import check_callback
    from ...jsonl import read_json_lines

    check_callback("read_results", "report", report)  # round 17 (E27, E30): report='yes'
    if not isinstance(path, (str, os.PathLike)):  # read_results(123): Path's TypeError (round 9, M138)
        raise TypeError(f"path must be a sweep folder or its results.jsonl (str or Path), got {type(path).__name__} "
                        f"{path!r:.60}")
    from ...value_rules import check_read_path

    # '' read the current folder: [] without a word (issue 30 round 23, U480's kind)
    check_read_path("read_results", "path", path, "pass a sweep output dir or its results.jsonl")
    path = Path(path)
    if path.name != RESULTS and not os.path.lexists(path) or dead_link(path) is not None:
        # round 15 (B204): read_results("nonexist"), a mistyped folder, was [] without a word; a results.jsonl not
        # written yet (a sweep folder before its first row) is still no rows
        raise UserError(f"results {str(path)!r} {missing(path)}; pass a sweep output dir or its results.jsonl")
    if os.path.isdir(path) and path.name != RESULTS:  # False, not ENAMETOOLONG, for a 300-byte name: ``missing``
        # names it (round 14, B328)
        if not os.path.lexists(path / RESULTS) and (what := _not_a_sweep(path)) is not None:
            raise UserError(f"results {str(path)!r} holds no results.jsonl: it is {what}; pass a sweep output dir "
                            f"or its results.jsonl")
        if not os.path.lexists(path / RESULTS) and not _may_be_a_sweep(path):
            raise UserError(f"results {str(path)!r} holds no results.jsonl, and nothing of a sweep (no grid.json, no "
                            f"sweep's leviathan_output.json); pass a sweep output dir or its results.jsonl")
        path = path / RESULTS
    if os.path.isdir(path):  # round 14 (B180) in load_results; round 19 (J160): read_results was [] without a word
        raise UserError(f"{str(path)!r} is a folder, not the results file `leviathan sweep` writes; pass a sweep "
                        f"output dir that holds its results.jsonl")
    if not os.path.isfile(path):
        if dead_link(path) is not None:  # a sweep folder's results.jsonl linked to nothing: "no rows" (round 18, G407)
            raise UserError(f"results {str(path)!r} {missing(path)}; pass a sweep output dir or its results.jsonl")
        if (kind := not_regular(path)) is not None:  # round 11 (R107): a pipe was "no result rows"
            raise UserError(f"results {str(path)!r} {kind}; rows are read from the file a sweep writes: put the "
                            f"sweep's results.jsonl in its place")
        return []
    from .identity import arm_clash, resolve_duplicates
    from .not_results import other_file
    from .unknown_fields import unknown_field_note

    values, bad = read_json_lines(path)
    unparsed = list(bad)
    rows = []
    for number, d in values:
        problem = line_problem(d)  # a line's provenance part removed too (X75, Z74-Z76)
        if problem is None:
            rows.append((f"line {number}", ResultRow.from_dict(d)))
        else:
            bad.append((number, problem))
    if not rows and (what := other_file(path, values, unparsed)) is not None:  # round 16 (C239, C240)
        raise UserError(f"no result rows in {str(path)!r}, which is not a results file: {what}; pass a sweep output "
                        f"dir or its results.jsonl (written by `leviathan sweep`)")
    for note in _skipped_line_notes(path, sorted(bad), values, rows):
        (report or to_stderr)(note)
    unique, notes = resolve_duplicates(rows, str(path))  # one row per run, or a UserError naming both lines
    clash = arm_clash(rows)  # round 19 (J88-J95): one arm under two names (one name twice: resolved above)
    if clash is not None:
        raise UserError(f"results {str(path)!r}: {clash}; delete the line of the row you do not trust, or correct "
                        f"its variant, size or seed")
    for note in notes:
        (report or to_stderr)(note)
    if (note := unknown_field_note(path, rows)) is not None:  # a misspelt field was read without a word (X43)
        (report or to_stderr)(note)
    return unique


def _not_a_sweep(folder: Path) -> str | None:
    """What ``folder``, which holds no results.jsonl, is when it is no sweep folder before its first row (None: it
    may be one): another verb's folder, or a folder inside a sweep. ``read_results('sw1/runs')``, the sweep's runs
    folder, was [] without a word, as for a sweep that wrote no row yet (issue 30 round 24, W455)."""
    from ...file_kinds import folder_kind

    sweep = "a sweep folder (written by `leviathan sweep`)"
    kind = folder_kind(folder)
    if kind is not None and kind != sweep:
        return kind
    parent = folder.resolve().parent
    if kind is None and folder_kind(parent) == sweep:
        return f"a folder inside the sweep folder {str(parent)!r}"
    return None


def _may_be_a_sweep(folder: Path) -> bool:
    """Whether ``folder``, which holds no results.jsonl, may be a sweep folder before its first row (its marker, or
    the grid.json a sweep writes first) or a collected --dest whose rows are in subfolders (``load_results`` names
    them). ``read_results('corpus')``, a folder of text files, and an empty folder were [] without a word, as a
    sweep that wrote no row yet (issue 30 round 28, U603)."""
    from ...file_kinds import folder_kind

    sweep = "a sweep folder (written by `leviathan sweep`)"
    return (folder_kind(folder) == sweep or os.path.lexists(folder / "grid.json")
            or bool(grid_subfolders(folder)))


_NUMBERS = ("loss", "ppl", "bpb", "share_outside")
_COUNTS = ("tokens", "targets_outside")


# the sections of a run config (``RunConfig``) that are objects
_CONFIG_SECTIONS = ("model", "optim", "schedule", "data")
_CONFIG_COUNTS = ("batch_tokens", "micro_batch_size", "max_steps", "max_tokens", "seed")
_BUCKET_LISTS = ("min_count", "max_count", "num_ids", "mass")  # a bucket description's per-bucket lists


def row_problem(d: Any) -> str | None:
    """Why a parsed line is not a results row (None: it is one). The writer never writes NaN or infinity
    (``dumps``), a name that is not text, or an eval number that is not a number; a line that holds one was damaged
    or edited, and is reported and skipped like a torn line."""
    if not isinstance(d, dict):
        return f"is not a results row (a JSON object with a name), but a JSON {type(d).__name__}"
    if not isinstance(d.get("name"), str) or not d["name"]:
        return "is not a results row (a JSON object with a name)"
    if not _plain(d["name"]):  # it names runs/<name> and embeddings/<name>.json (round 8: "../../x" wrote outside)
        return f"has name {_shown(d['name'])}, not a run's folder name (no '/' or control character, not '.' or '..')"
    data = d.get("data")
    if data is not None and not isinstance(data, dict):
        return f"has data {_shown(data)}, not an object"
    problem = recorded_problem(*((data or {}).get(k) for k in ("fingerprint", "fingerprint_version",
                                                                "legacy_fingerprint")))
    if problem is not None:
        return f"has a data fingerprint prepare never writes (its data: {problem})"
    if _non_finite(d):
        return "holds NaN or infinity, which leviathan never writes into a results row"
    for keys, ok, what in _FIELD_RULES:
        for key in keys:
            if d.get(key) is not None and not ok(d[key]):
                return f"has {key} {_shown(d[key])}, not {what}"
    if (d.get("regime") or d.get("regimes")) and not isinstance(d.get("variant"), str):  # compared by variant
        return f"has variant {_shown(d.get('variant'))} in regime {_shown(d.get('regime'))}, not a variant name"
    for key in ("regimes", "notes"):
        if d.get(key) is not None and not (isinstance(d[key], list) and all(isinstance(x, str) for x in d[key])):
            return f"has {key} {_shown(d[key])}, not a list of names"
    params = d.get("params")
    for key in ParamCounts.KEYS if isinstance(params, dict) else ():
        ok = isinstance(params.get(key), bool) if key == "tied" else _is_count(params.get(key))
        if params.get(key) is not None and not ok:
            return f"has params.{key} {_shown(params[key])}, not {'true or false' if key == 'tied' else 'a count'}"
    curve = d.get("curve")
    for key, value in (curve.items() if isinstance(curve, dict) else ()):
        if key.endswith("_median") and value is not None and not _is_number(value):
            return f"has curve.{key} {_shown(value)}, not a number"
        if key in _CURVE_LISTS and not (isinstance(value, list) and all(v is None or _is_number(v) for v in value)):
            return f"has curve.{key} {_shown(value)}, not a list of numbers"
    buckets = d.get("buckets")
    for name, b in (buckets.items() if isinstance(buckets, dict) else ()):
        if b is not None and not isinstance(b, dict):
            return f"has buckets.{name} {_shown(b)}, not an object"
        for key in ("loss", "ppl", "count"):
            value = (b or {}).get(key)
            if value is not None and not (isinstance(value, list) and all(_is_number(v) for v in value)):
                return f"has buckets.{name}.{key} {_shown(value)}, not a list of numbers"
        scheme = (b or {}).get("buckets")  # the description: an AttributeError of report (round 12, U216, U268)
        if scheme is not None and not isinstance(scheme, dict):
            return f"has buckets.{name}.buckets {_shown(scheme)}, not a bucket description (an object)"
        for key, value in (scheme.items() if isinstance(scheme, dict) else ()):
            if key in _BUCKET_LISTS and value is not None and not (isinstance(value, list)
                                                                  and all(_is_number(v) for v in value)):
                return f"has buckets.{name}.buckets.{key} {_shown(value)}, not a list of numbers"  # U234: num_ids
        if isinstance(scheme, dict) and scheme.get("num_buckets") is not None and not _is_count(scheme["num_buckets"]):
            return f"has buckets.{name}.buckets.num_buckets {_shown(scheme['num_buckets'])}, not a count"
    config = d.get("config")  # the resolved run config: its sections are objects (round 12, U219, U225, U231, U235,
    if config is not None and not isinstance(config, dict):  # U266, U267: "x" ended in an AttributeError of
        return f"has config {_shown(config)}, not a run config (an object)"  # report, or read as the defaults)
    for key, value in (config.items() if isinstance(config, dict) else ()):
        if key in _CONFIG_SECTIONS and value is not None and not isinstance(value, dict):
            return f"has config.{key} {_shown(value)}, not a section of a run config (an object)"
        if key in _CONFIG_COUNTS and value is not None and not _is_count(value):  # "2" passed (round 12, U17)
            return f"has config.{key} {_shown(value)}, not a whole number >= 0"
    for part, names, counts in _PROVENANCE_RULES:  # round 9 (R5): code.commit 42 passed unchecked
        fields = d.get(part) if isinstance(d.get(part), dict) else {}
        for key in names:
            if fields.get(key) is not None and not isinstance(fields[key], str):
                return f"has {part}.{key} {_shown(fields[key])}, not text"
        for key in counts:
            if fields.get(key) is not None and not _is_count(fields[key]):
                return f"has {part}.{key} {_shown(fields[key])}, not a whole number >= 0"
    how = d.get("evaluation")
    sets = how.get("sets", {}) if isinstance(how, dict) else {}
    if isinstance(how, dict) and not (isinstance(how.get("options", {}), dict) and isinstance(sets, dict)
                                      and all(isinstance(s, dict) for s in sets.values())):
        return f"has evaluation {_shown(how)}, not eval sets and options (objects)"
    for name, ev in (d.get("eval") or {}).items():  # an object (``_FIELD_RULES``)
        if ev is None:
            continue
        if not isinstance(ev, dict):
            return f"has eval.{name} {str(ev)[:40]!r}, not an object"
        for key in _NUMBERS:
            if ev.get(key) is not None and not _is_number(ev[key]):
                return f"has eval.{name}.{key} {ev[key]!r}, not a number"
        for key in _COUNTS:
            if ev.get(key) is not None and not _is_count(ev[key]):
                return f"has eval.{name}.{key} {ev[key]!r}, not a count"
    return _impossible(d)


def line_problem(d: dict) -> str | None:
    """Why a line of a results file is skipped (None: it is read): ``row_problem``, or part of the provenance the
    sweep writes together removed or emptied (``row_provenance.provenance_problem``: X75, Z74-Z76). One rule for
    ``read_results`` and collect_results.py, which copied a row whose data (X75) or config (Z145, Z146) was removed
    without a word. Rows built in Python (``append_result``, ``paired_of(rows)``) may leave provenance out."""
    from .row_provenance import provenance_problem

    return row_problem(d) or provenance_problem(d)


def _impossible(d: dict) -> str | None:
    """Why a row of well-typed fields still cannot be (issue 30 round 5): a number out of its range, or fields that
    contradict each other. Before, a loss of -3 made a report, a row copied under another seed's name (its config
    still saying seed 0) gave a 'better' verdict from two identical 'seeds', and lists of different lengths were
    cut short without a word. None for a row the sweep could have written."""
    for key in ("final_val_loss", "wall_time_s", "tokens_per_s"):
        if d.get(key) is not None and d[key] < 0:
            return f"has {key} {_shown(d[key])}, not a number >= 0"
    if d.get("tokens_per_s") == 0:  # the sweep writes a measured speed or none (make_row): 0 for tokens trained in
        # a positive time was taken without a word, and ranked the run slowest (issue 30 round 28, U677)
        return (f"has tokens_per_s 0 for {_shown(d.get('tokens'))} tokens trained in {_shown(d.get('wall_time_s'))} "
                f"s, a throughput no run has (the sweep writes a measured speed, or none)")
    if d.get("wall_time_s") is not None and d["wall_time_s"] > time.time():  # round 11 (S23): 1e308 s was reported
        return (f"has wall_time_s {d['wall_time_s']:g}, longer than the clock has run since 1970 "
                f"({time.time():,.0f} s)")
    if d.get("final_val_ppl") is not None and d["final_val_ppl"] < 1:
        return f"has final_val_ppl {_shown(d['final_val_ppl'])}, not a perplexity (>= 1)"
    for name, ev in (d.get("eval") or {}).items():
        for key, low in (("loss", 0), ("bpb", 0), ("ppl", 1)):
            if (ev or {}).get(key) is not None and ev[key] < low:
                return f"has eval.{name}.{key} {_shown(ev[key])}, not a number >= {low}"
        if (ev or {}).get("share_outside") is not None and not 0 <= ev["share_outside"] <= 1:
            return f"has eval.{name}.share_outside {_shown(ev['share_outside'])}, not a share in [0, 1]"
        if (ev or {}).get("loss") is not None and ev.get("tokens") == 0:
            return f"has eval.{name}.loss from eval.{name}.tokens 0: a loss needs at least one token"
        if (problem := _tokens_past_cap(d, name, (ev or {}).get("tokens"))) is not None:
            return problem
        if ppl_contradicts((ev or {}).get("loss"), (ev or {}).get("ppl")):
            return (f"has eval.{name}.ppl {_shown(ev['ppl'])}, not exp(eval.{name}.loss) = "
                    f"{_exp_shown(ev['loss'])} (fields edited apart)")
    if ppl_contradicts(d.get("final_val_loss"), d.get("final_val_ppl")):
        return (f"has final_val_ppl {_shown(d['final_val_ppl'])}, not exp(final_val_loss) = "
                f"{_exp_shown(d['final_val_loss'])} (fields edited apart)")
    for name, b in (d.get("buckets") or {}).items():
        lengths = {key: len(b[key]) for key in ("loss", "ppl", "count") if (b or {}).get(key) is not None}
        if len(set(lengths.values())) > 1:
            return f"has buckets.{name} lists of different lengths ({_lengths(lengths)}), one value per bucket each"
        if any(v < 0 for v in (b or {}).get("loss") or []) or any(v < 1 for v in (b or {}).get("ppl") or []):
            return f"has buckets.{name} losses below 0 or perplexities below 1"
        if any(v < 0 for v in (b or {}).get("count") or []):  # round 9 (M167): a count of -3 went into the report
            return f"has buckets.{name}.count {_shown(b['count'])}, not token counts >= 0"
    if (problem := _buckets_contradict(d)) is not None or (problem := _sets_unbacked(d)) is not None:
        return problem
    curve = d.get("curve") if isinstance(d.get("curve"), dict) else {}
    if (problem := _curve_null(curve)) is not None:
        return problem
    for xs, ys in (("tokens", ("val_loss",)), ("grad_tokens", ("grad_norm_input", "grad_norm_head"))):
        lengths = {k: len(curve[k]) for k in (xs, *ys) if isinstance(curve.get(k), list)}
        if xs in lengths and len(set(lengths.values())) > 1:
            return f"has curve lists of different lengths ({_lengths(lengths)}), one value per point each"
        points = [v for v in curve.get(xs) or [] if v is not None]
        if any(v < 0 for v in points) or any(b < a for a, b in zip(points, points[1:])):
            # round 9 (M26): token counts of -5 ended in a TypeError traceback in `analyze efficiency`
            return f"has curve.{xs} {_shown(curve[xs])}, not token counts >= 0 in training order"
    for key in ("grad_norm_input", "grad_norm_head", "grad_norm_input_median", "grad_norm_head_median"):
        value = curve.get(key)  # round 15 (B217): a norm of -1.0 went into the ablation's gradient column
        if any(_is_number(v) and v < 0 for v in (value if isinstance(value, list)
                                                                            else [value])):
            return f"has curve.{key} {_shown(value)}, not gradient norms >= 0"
    params = d.get("params") if isinstance(d.get("params"), dict) else {}
    if params.get("tied") is not None and params.get("head") is not None and params["tied"] != (params["head"] == 0):
        # round 11 (S22): a tied head is counted in input (head 0); an untied one is a V x D matrix, never empty
        return (f"has params.tied {_shown(params['tied'])} beside params.head {params['head']:,}: a tied head is "
                f"counted in input (head 0), an untied one is not empty (fields edited apart)")
    parts = [params.get(k) for k in ("input", "body", "head")]
    if params.get("total") is not None and all(p is not None for p in parts) and sum(parts) != params["total"]:
        return (f"has params.total {params['total']:,}, not the sum of its parts (input + body + head = "
                f"{sum(parts):,})")
    config = d.get("config") if isinstance(d.get("config"), dict) else {}
    model = config.get("model") if isinstance(config.get("model"), dict) else {}
    said = [("seed", d.get("seed"), config.get("seed"), "seed"), ("variant", d.get("variant"), model.get("embedding"),
            "model.embedding")] + [(k, d.get(k), model.get(k), f"model.{k}")
                                   for k in ("hidden_size", "num_hidden_layers", "vocab_size")]
    for key, mine, configured, where in said:
        if mine is not None and configured is not None and mine != configured:
            return (f"has {key} {_shown(mine)} but its config says {where}: {_shown(configured)} (a row edited or "
                    f"copied under another run's name)")
    return (_model_contradicts(d, model) or _hardware_impossible(d) or _tokens_contradict(d, config)
            or _steps_contradict(d, config) or _curve_contradicts(d) or _params_contradict(params, model)
            or _derived_contradicts(d) or _name_contradicts(d))


def _name_contradicts(d: dict) -> str | None:
    """Why a row's ``name`` says another run than its own variant and seed: two rows whose names were swapped (an
    'a-leviathan-s0' holding the dense_tied row) were read as each other's runs without a word (issue 30 round 27,
    S571; the variant and seed were held to the config, S565, the name to nothing). Only a contradiction counts: a name
    whose dash-separated parts include an embedding kind other than the row's (and not the row's own), or end in
    ``s<N>`` with N not the row's seed. A name that says neither (a hand-made 'n249', a size edited in the name) is
    left to the checks that hold size and identity (``identity``, the grid's run list), which refuse rather than skip.
    Last in ``_impossible``, so every sharper line comes first."""
    from ...model.embedding_kinds import EMBEDDING_KINDS

    name, variant, seed = d.get("name"), d.get("variant"), d.get("seed")
    if not isinstance(name, str):
        return None
    parts = name.split("-")
    named = [kind for kind in EMBEDDING_KINDS if kind in parts]
    if isinstance(variant, str) and named and variant not in named:
        return (f"has name {_shown(name)}, which names variant {named[0]!r}, but its variant is {variant!r} (a row "
                f"edited or copied under another run's name)")
    last = parts[-1]
    if len(parts) > 1 and _is_count(seed) and last[:1] == "s" and last[1:].isdigit() and int(last[1:]) != seed:
        return (f"has name {_shown(name)}, which names seed {int(last[1:])}, but its seed is {seed} (a row edited or "
                f"copied under another run's name)")
    return None


def _model_contradicts(d: dict, configured: dict) -> str | None:
    """Why a row's ``model`` summary (``SweepRun.model_fields``: the model fields its grid sets, copied from the run's
    config) cannot be its own config's: ``model.generator_rank`` 8 beside ``config.model.generator_rank`` 16 was read
    without a word, where the same edit of ``hidden_size`` is refused (issue 30 round 21, P571; P119)."""
    model = d.get("model") if isinstance(d.get("model"), dict) else {}
    for key, mine in model.items():
        if mine is not None and configured.get(key) is not None and mine != configured[key]:
            return (f"has model.{key} {_shown(mine)} but its config says model.{key}: {_shown(configured[key])} (a "
                    f"row edited or copied under another run's name)")
    return None


def _hardware_impossible(d: dict) -> str | None:
    """Why a row's ``hardware`` (``io.hardware_info``) cannot be where a run trained: ``torch_threads`` 0 was read
    without a word and keys the throughput comparison (``hardware_key``), while tokens_per_s -5 is refused (issue 30
    round 21, P572). Threads and cores are whole numbers >= 1 where recorded."""
    hardware = d.get("hardware") if isinstance(d.get("hardware"), dict) else {}
    for key in ("torch_threads", "cores"):
        if hardware.get(key) is not None and (not _is_count(hardware[key]) or hardware[key] < 1):
            return f"has hardware.{key} {_shown(hardware[key])}, not a whole number >= 1 (no run trains on 0 threads)"
    return None




def _tokens_contradict(d: dict, config: dict) -> str | None:
    """Why a row's training ``tokens`` cannot be the ``steps`` its config's ``batch_tokens`` trained (issue 30 round
    9, N53: tokens edited to 999,999 beside 2 steps of 128 were reported as written). Every step adds ``batch_tokens``
    (``train.loop``), so a run trained in one session has exactly steps x batch_tokens. A run the sweep resumed (its
    note ``resumed from its step-N checkpoint``) may have trained its first N steps with another batch, legitimately:
    it needs only the last session's steps x batch_tokens plus one token per earlier step. None where a field is
    unrecorded."""
    steps, tokens, batch = d.get("steps"), d.get("tokens"), config.get("batch_tokens")
    if not (_is_count(steps) and _is_count(tokens) and _is_count(batch)) or batch == 0:
        return None
    from .identity import RESUMED_NOTE

    resumed = [int(m.group(1)) for n in d.get("notes") or [] if isinstance(n, str) and (m := RESUMED_NOTE.match(n))]
    if not resumed:
        if tokens != steps * batch:
            return (f"has tokens {_shown(tokens)}, not its {steps:,} steps x config.batch_tokens {batch:,} = "
                    f"{steps * batch:,} (fields edited apart)")
        return None
    earlier = min(resumed[0], steps)
    least = (steps - earlier) * batch + earlier
    if tokens < least:
        return (f"has tokens {_shown(tokens)}, fewer than its steps {earlier + 1}-{steps} x config.batch_tokens "
                f"{batch:,} after its resume, plus one per earlier step = {least:,} (fields edited apart)")
    return None


def _steps_contradict(d: dict, config: dict) -> str | None:
    """Why a row's ``steps`` are not the run its config describes (issue 30 round 10, P49: a row whose config was
    edited to max_steps 3 beside 2 steps was compared with 2-step rows). A sweep writes a row only for a finished run:
    max_steps, or max_tokens // batch_tokens (``RunConfig.total_steps``)."""
    steps, max_steps, max_tokens, batch = (d.get("steps"), config.get("max_steps"), config.get("max_tokens"),
                                           config.get("batch_tokens"))
    if not _is_count(steps):
        return None
    if _is_count(max_steps):
        total, said = max_steps, f"config.max_steps {max_steps:,}"
    elif _is_count(max_tokens) and _is_count(batch) and batch > 0:
        total, said = max_tokens // batch, f"config.max_tokens {max_tokens:,} // batch_tokens {batch:,}"
    else:
        return None
    if steps != total:
        return f"has steps {_shown(steps)}, not the {total:,} its config trains ({said}; fields edited apart)"
    return None


def _params_contradict(params: dict, model: dict) -> str | None:
    """Why a row's parameter counts are not those of the model its config describes (issue 30 round 10, P59: input
    and total both raised by 10, their sum still right, went into the report's parameter table). Counted from the
    config as ``leviathan params`` counts (``model.accounting.count_config``, no torch); a config this version cannot
    read is not compared."""
    if not params or not model:
        return None
    from ...config import from_dict
    from ...model.accounting import count_config
    from ...model.config import ModelConfig

    try:
        counts = count_config(from_dict(ModelConfig, model))
    except (UserError, ValueError, TypeError, KeyError):  # a config of another version: nothing to compare with
        return None
    for key in ("input", "body", "head", "total"):
        if params.get(key) is not None and params[key] != getattr(counts, key):
            return (f"has params.{key} {params[key]:,}, not the {getattr(counts, key):,} its config's model has "
                    f"(fields edited apart)")
    return None


def _curve_contradicts(d: dict) -> str | None:
    """Why a row's training curve cannot be its own run's (issue 30 round 10, P58, Q17, P65: a curve's tokens past the
    row's tokens, drawn and tabled as written or said to reach a loss "after 1,000,000,000 tokens vs 256"; a final loss
    edited apart from the curve's last validation): the curve's points lie within the tokens the row trained, and its
    last validation is the row's final one, so a row with a curve has a final loss (round 21, P551: null was read as
    "not recorded"). Checked after the row's tokens against its steps, the plainer fault."""
    curve = d.get("curve") if isinstance(d.get("curve"), dict) else {}
    trained = d.get("tokens")
    for key in ("tokens", "grad_tokens"):
        points = [v for v in curve.get(key) or [] if v is not None]
        if points and _is_number(trained) and points[-1] > trained:
            return f"has curve.{key} up to {_shown(points[-1])} tokens, past the {_shown(trained)} the row trained"
    losses = [v for v in curve.get("val_loss") or [] if v is not None]
    final = d.get("final_val_loss")
    if losses and _is_number(final) and abs(losses[-1] - final) > 1e-6 * max(1.0, abs(final)):
        return (f"has final_val_loss {_shown(final)}, not the last validation of its curve ({losses[-1]:.6g}; fields "
                f"edited apart)")
    if losses and final is None and _is_count(d.get("steps")):  # round 21 (P551): a NaN written as null was read as
        # "not recorded"; a row the sweep wrote records its steps (a hand-made row of curve and eval alone is spared)
        return (f"has final_val_loss null (a NaN written as null, or an edit), though its curve's last validation "
                f"measured {losses[-1]:.6g} (a run with a curve ends on a finite final loss)")
    return None


def _buckets_contradict(d: dict) -> str | None:
    """Why a row's bucket definition cannot be what its evaluation measured (issue 30 round 15, B282, B283, B285):
    ``num_ids`` [1, 1, 1] under a 300-id vocabulary, ``count`` [1, 1, 1] beside eval.val.tokens 1024, or method
    ``log`` under evaluation.options.bucket_method ``mass`` were compared with the pair's buckets, exit 0. The
    buckets partition the vocabulary (``num_ids`` sum to vocab_size), their counts the evaluated targets (sum to
    eval.NAME.tokens), and their method and number are the evaluation's options."""
    evaluation = d.get("evaluation") if isinstance(d.get("evaluation"), dict) else {}
    options = evaluation.get("options") if isinstance(evaluation.get("options"), dict) else {}
    for name, b in (d.get("buckets") or {}).items():
        scheme = (b or {}).get("buckets") if isinstance((b or {}).get("buckets"), dict) else {}
        ids, count = scheme.get("num_ids"), (b or {}).get("count")
        tokens = ((d.get("eval") or {}).get(name) or {}).get("tokens")
        if _numbers(ids) and _is_number(d.get("vocab_size")) and sum(ids) != d["vocab_size"]:
            return (f"has buckets.{name}.buckets.num_ids {_shown(ids)} (sum {sum(ids):,}), not a split of its "
                    f"{d['vocab_size']:,}-id vocabulary (fields edited apart)")
        if _numbers(count) and _is_number(tokens) and sum(count) != tokens:
            return (f"has buckets.{name}.count {_shown(count)} (sum {sum(count):,}), not the eval.{name}.tokens "
                    f"{tokens:,} it was measured on (fields edited apart)")
        for key, option in (("method", "bucket_method"), ("num_buckets", "buckets")):
            if scheme.get(key) is not None and options.get(option) is not None and scheme[key] != options[option]:
                return (f"has buckets.{name}.buckets.{key} {_shown(scheme[key])}, not its "
                        f"evaluation.options.{option} {_shown(options[option])} (fields edited apart)")
        if (problem := _overall_contradicts(name, b or {}, ((d.get("eval") or {}).get(name) or {}).get("loss"))):
            return problem
    return None


def _overall_contradicts(name: str, b: dict, loss: Any) -> str | None:
    """Why a set's bucket losses cannot be the evaluation its eval loss is: ``overall_loss`` is the mean of the very
    per-token losses ``eval.NAME.loss`` averages (``eval.score.evaluate_checkpoint``), and the buckets' losses
    weighted by their counts are that mean again. eval.val.loss edited to 4.0 beside overall_loss 5.57 was tabled as
    written, "+349.3%" (issue 30 round 26, P14), while final_val_loss is held to the curve's last point. The tolerance
    is float summation's (the slack of ``_curve_contradicts``)."""
    overall = b.get("overall_loss")

    def apart(x: float, y: float) -> bool:
        return abs(x - y) > 1e-6 * max(1.0, abs(y))

    if _is_number(overall) and _is_number(loss) and apart(loss, overall):
        return (f"has eval.{name}.loss {_shown(loss)}, not its own buckets.{name}.overall_loss {_shown(overall)} (the "
                f"same evaluation's mean loss; fields edited apart)")
    losses, counts = b.get("loss"), b.get("count")
    pairs = list(zip(losses, counts)) if isinstance(losses, list) and _numbers(counts) else []
    if _is_number(overall) and pairs and sum(counts) > 0 and all(_is_number(x) for x, c in pairs if c):
        mean = sum(x * c for x, c in pairs if c) / sum(counts)
        if apart(mean, overall):
            return (f"has buckets.{name}.loss {_shown(losses)}, whose mean weighted by buckets.{name}.count is "
                    f"{mean:.6g}, not its buckets.{name}.overall_loss {_shown(overall)} (fields edited apart)")
    return None


def _derived_contradicts(d: dict) -> str | None:
    """Why a number a row derives from its other fields is not what they give (issue 30 round 29, W283, W290, W291,
    W293: each was read as valid, edited apart from its source). The writer derives them: a bucket scheme's ``mass``
    are shares of the training occurrences (``frequency.make_buckets``: they sum to 1); ``share_outside`` is
    ``targets_outside`` over every target (``eval.score``: the two are written together, or neither, for a full
    softmax); ``regime`` is the first of ``regimes`` (``SweepRun.regime``, and the report pairs by it); a curve's
    ``*_median`` is the median of its list's numbers (``sweep._curve``). The slack is float summation's. Asked after
    the checks of the numbers themselves (a negative norm, curve points out of order), which name the plainer fault."""
    for name, b in (d.get("buckets") or {}).items():
        scheme = (b or {}).get("buckets") if isinstance((b or {}).get("buckets"), dict) else {}
        mass = scheme.get("mass")
        if _numbers(mass) and (any(not 0 <= m <= 1 for m in mass) or abs(sum(mass) - 1) > 1e-6):
            return (f"has buckets.{name}.buckets.mass {_shown(mass)} (sum {sum(mass):.6g}), not shares of the training "
                    f"tokens (each in [0, 1], summing to 1; fields edited apart)")
    for name, ev in (d.get("eval") or {}).items():
        if (problem := _outside_contradicts(name, ev or {})) is not None:
            return problem
    regimes = d.get("regimes")
    if isinstance(regimes, list) and regimes and d.get("regime") is not None and d["regime"] != regimes[0]:
        return (f"has regime {_shown(d['regime'])}, not the first of its regimes {_shown(regimes)} (the regime decides "
                f"what the report pairs it with; fields edited apart)")
    curve = d.get("curve") if isinstance(d.get("curve"), dict) else {}
    for key in ("grad_norm_input", "grad_norm_head"):
        values = sorted(v for v in curve.get(key) or [] if _is_number(v))
        median = curve.get(f"{key}_median")
        if values and _is_number(median):
            middle = len(values) // 2
            true = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
            if abs(median - true) > 1e-6 * max(1.0, abs(true)):
                return (f"has curve.{key}_median {_shown(median)}, not the median of its curve.{key} ({true:.6g}; "
                        f"fields edited apart)")
    return None


def _outside_contradicts(name: str, ev: dict) -> str | None:
    """Why a set's ``share_outside`` is not its ``targets_outside`` over every target (``tokens`` scored inside the
    softmax set plus those left out): a share without its count (W290) or a count without its share."""
    share, outside, tokens = ev.get("share_outside"), ev.get("targets_outside"), ev.get("tokens")
    if (share is None) != (outside is None):
        given, missing = ("share_outside", "targets_outside") if outside is None else ("targets_outside",
                                                                                      "share_outside")
        return (f"has eval.{name}.{given} {_shown(ev[given])} beside {missing} null (the evaluation writes both for a "
                f"restricted softmax, neither for a full one; fields edited apart)")
    if _is_number(share) and _is_count(outside) and _is_count(tokens) and tokens + outside > 0:
        true = outside / (tokens + outside)
        if abs(share - true) > 1e-6:
            return (f"has eval.{name}.share_outside {_shown(share)}, not its targets_outside {outside:,} over "
                    f"tokens {tokens:,} + targets_outside = {true:.6g} (fields edited apart)")
    return None


def _tokens_past_cap(d: dict, name: str, tokens: Any) -> str | None:
    """Why a set's scored tokens cannot be what the row's evaluation measured (issue 30 round 20, M71's side note:
    eval.val.tokens 500 beside evaluation.options.max_tokens 400 was read and reported). ``EvalStream.capped``
    keeps at most ``max_tokens`` predictions, so no set of a capped evaluation scores more."""
    evaluation = d.get("evaluation") if isinstance(d.get("evaluation"), dict) else {}
    options = evaluation.get("options") if isinstance(evaluation.get("options"), dict) else {}
    cap = options.get("max_tokens")
    if _is_count(cap) and cap > 0 and _is_count(tokens) and tokens > cap:
        return (f"has eval.{name}.tokens {tokens:,}, more than its evaluation.options.max_tokens {cap:,} allows "
                f"(fields edited apart)")
    return None


def _sets_unbacked(d: dict) -> str | None:
    """Why a row's eval or bucket numbers name a set its evaluation did not measure (issue 30 round 15, B211: a copy
    of the val numbers under eval.ptb, with no evaluation.sets.ptb, was reported as a 'ptb' loss, exit 0). A row that
    records its evaluation's sets measured those and no other."""
    evaluation = d.get("evaluation") if isinstance(d.get("evaluation"), dict) else {}
    sets = evaluation.get("sets")
    if not isinstance(sets, dict) or not sets:
        return None  # a row written before evaluations were recorded
    for section in ("eval", "buckets"):
        extra = sorted(str(name) for name in (d.get(section) or {}) if name not in sets)
        if extra:
            return (f"has {section}.{extra[0]} but no evaluation.sets.{extra[0]}: numbers of a set its evaluation "
                    f"did not measure (its sets: {', '.join(map(str, sets))}; fields edited apart)")
    return None


def _numbers(values: Any) -> bool:
    return isinstance(values, list) and bool(values) and all(_is_number(v) for v in values)


def _curve_null(curve: dict) -> str | None:
    """Why a validation curve with a null point cannot be a sweep's (None: it has none). The sweep keeps only the
    validations that measured a loss (``sweep._curve``), so a null is a NaN that a writer turned into null (a diverged
    loss copied by collect_results.py) or an edit; it ended ``leviathan report`` in a TypeError traceback in the paired
    gap curve (issue 30 round 14, B300, B301, B304)."""
    for key in ("tokens", "val_loss"):
        values = curve.get(key) if isinstance(curve.get(key), list) else []
        nulls = [i for i, v in enumerate(values) if v is None]
        if nulls:
            return (f"has curve.{key} null at point {nulls[0] + 1} of {len(values)} (a validation that measured no "
                    f"number: a NaN written as null, or an edit)")
    return None


def _exp_shown(loss: float) -> str:
    """exp(loss) as a row's perplexity is written: inf past float64's range (round 10, Q16: an edited loss of 800
    beside a finite ppl ended in an OverflowError traceback as the warning was worded)."""
    return "inf" if loss >= 700 else f"{math.exp(loss):.6g}"


def _plain(name: str) -> bool:
    """Whether ``name`` is one folder name (the sweep names runs ``<size>-<variant>-s<seed>``)."""
    return name not in (".", "..") and not any(c in name for c in "/\\") and name.isprintable()  # round 19 (J246):
    # a newline or another control character ('\0' among them) is no name the sweep makes


def _lengths(lengths: dict) -> str:
    return ", ".join(f"{k} {n}" for k, n in lengths.items())


def _is_count(v: Any) -> bool:
    return _is_int(v) and v >= 0


def _shown(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(v: Any) -> bool:
    """A whole number (rows of earlier versions wrote token counts as floats: 1e6)."""
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_time_stamp(v: Any) -> bool:
    """Whether ``v`` is a time as the sweep writes a row's ``created`` (``datetime.isoformat``, with its zone): "not a
    date" was copied by collect_results and read by every verb without a word, while every other field of a row is
    held to what the writer puts there (issue 30 round 24, V88)."""
    import datetime

    try:
        return isinstance(v, str) and datetime.datetime.fromisoformat(v).tzinfo is not None
    except ValueError:
        return False


# Every typed field of a row (``ResultRow``): what the writer puts there, so that no reader meets a text where it
# sorts names or a list where it adds numbers (a ``variant`` of null, a ``params.total`` of "x", an ``evaluation``
# that is not an object ended in tracebacks or passed unchecked before issue 30's round 4).
_FIELD_RULES = (
    (("steps", "tokens", "seed", "data_seed", "num_hidden_layers", "hidden_size", "intermediate_size", "vocab_size",
      "target_total"), _is_count, "a whole number >= 0"),
    (("wall_time_s", "tokens_per_s", "final_val_loss", "final_val_ppl"), _is_number, "a number"),
    (("regime", "variant", "size", "grid", "run_dir", "metrics"), lambda v: isinstance(v, str), "a name"),
    (("created",), lambda v: _is_time_stamp(v), "a time stamp (ISO 8601 with its zone, as the sweep writes it)"),
    (("params", "model", "eval", "buckets", "curve", "config", "evaluation", "code", "data"),
     lambda v: isinstance(v, dict), "an object"),
    (("hardware",), lambda v: isinstance(v, (dict, str)), "an object"),
)
# The provenance a row records (``CodeProvenance``, ``DataProvenance``): text fields and counts; the fingerprint fields
# are checked by ``recorded_problem``.
_PROVENANCE_RULES = (("code", ("commit", "leviathan", "torch"), ()),
                     ("data", ("dir", "tokenizer"), ("vocab_size", "train_tokens", "val_tokens")))
_CURVE_LISTS = ("tokens", "val_loss", "grad_tokens", "grad_norm_input", "grad_norm_head")


def _count_non_finite(d: dict) -> str | None:
    """Why a row about to be written holds NaN or infinity where it counts (steps, seed, hidden_size, a params
    count): ``dumps`` writes it as null, which reads back as "not recorded" (issue 30 round 19, J249, J251). Elsewhere
    (a perplexity past exp's range, an extra key) null is what the writer means."""
    params = d.get("params") if isinstance(d.get("params"), dict) else {}
    counted = [(key, d.get(key)) for key in _FIELD_RULES[0][0]] + [(f"params.{k}", v) for k, v in params.items()]
    for key, value in counted:
        if _non_finite(value):
            return f"has {key} {value!r}, not a whole number >= 0 (it would be written as null)"
    return None


def _non_finite(v: Any) -> bool:
    if isinstance(v, (float, np.floating)):
        return not math.isfinite(v)
    if isinstance(v, dict):
        return any(_non_finite(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return any(_non_finite(x) for x in v)
    return False


def to_stderr(message: str) -> None:
    """The default ``report`` of the row readers: a warning on stderr."""
    import sys

    print(message, file=sys.stderr)


def load_results(path: str | os.PathLike, report=None) -> list[ResultRow]:
    """Like ``read_results`` (``report`` receives its warnings and notes) but a missing or empty file is an error
    naming the fix."""
    from ...value_rules import check_callback

    check_callback("load_results", "report", report)  # a function of one message (round 31, AA281, AA714)
    rows = read_results(path, report)
    if not rows and (dead_link(path) is not None or not os.path.lexists(path)):  # a folder that is not there was
        # "no result rows in 'nonexist'" (issue 30 round 14, B310)
        raise UserError(f"results {str(path)!r} {missing(path)}; pass a sweep output dir or its results.jsonl")
    if not rows:
        inner = grid_subfolders(path)
        if inner:  # round 21 (P564): a collected --dest was "no result rows" without naming where they are
            raise UserError(f"no result rows in {str(path)!r}, which holds no {RESULTS} itself, but its subfolders do "
                            f"({_listed(inner)}: the layout of scripts/collect_results.py's --dest, a folder per "
                            f"grid); pass {str(inner[0])!r}" + (" (one grid's subfolder)" if len(inner) > 1 else ""))
        if lines := _refused_rows(path):  # every row refused, each named in a warning: the fix "pass a sweep
            # output dir" was given for a sweep's own results.jsonl whose rows were edited (issue 30 round 23, U103)
            raise UserError(f"no result rows in {str(path)!r}: none of its {lines} line(s) is a row the readers take "
                            f"(each is named in a warning with its problem); correct or delete those lines, or pass "
                            f"another sweep output dir")
        raise UserError(f"no result rows in {str(path)!r}; pass a sweep output dir or its results.jsonl "
                        f"(written by `leviathan sweep`)")
    return rows


def _refused_rows(path: str | os.PathLike) -> int:
    """The number of lines of ``path`` (a sweep folder or its results.jsonl) when it is recognisably a results file
    (``file_kinds.RESULTS_KIND``: results rows, each refused); 0 for anything else (an empty file, another kind of
    file, a file of junk, one that cannot be read), whose "pass a sweep output dir" stands."""
    from ...file_kinds import RESULTS_KIND, file_kind

    file = Path(path) / RESULTS if os.path.isdir(path) else Path(path)
    if not os.path.isfile(file) or file_kind(file) != RESULTS_KIND:
        return 0
    try:
        with open(file, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def grid_subfolders(folder: str | os.PathLike) -> list[Path]:
    """The subfolders of ``folder`` that hold a results.jsonl, where ``folder`` is a folder holding none itself:
    scripts/collect_results.py's --dest keeps each grid's rows in DEST/GRID, and such a folder given where a sweep's
    is expected held "no result rows" (``--reuse``: issue 30 round 20, K222; ``report``: round 21, P564). [] for
    anything else."""
    folder = Path(folder)
    if os.path.lexists(folder / RESULTS) or not folder.is_dir():
        return []
    return sorted(p.parent for p in folder.glob(f"*/{RESULTS}"))


def _listed(paths: list[Path]) -> str:
    return ", ".join(str(p) for p in paths[:4]) + (" ..." if len(paths) > 4 else "")


@api_write("append_result", "path")
def append_result(path: str | os.PathLike, row: ResultRow | Mapping) -> None:
    """Append one row atomically (one write of the whole line on an O_APPEND descriptor, then fsync); a row given as a
    dict is written through ``ResultRow`` too, so every line has the same fields. ``path`` must be a results file
    (``_check_results_file``), and the row one its readers take beside the rows already there (``_check_row_fits``);
    one hard-linked with another copy, or a symbolic link to another file, is given a file of its own first
    (``_unshare``). A storage failure (a folder as ``path``, a file in the way, a read-only or full disk, ``ulimit -f``,
    a name too long) is one ``StorageError`` naming the file and the fix, not the raw OSError (issue 30 round 18, G122,
    G126, G168, G169, G230, G243). A missing parent folder is made, as ``write_record`` and the sweep make theirs: it
    was the raw FileNotFoundError (issue 30 round 21, P149).
    """
    from ...value_rules import api_check, path_problem

    api_check("append_result", "path", path_problem(path), "pass the path of a results.jsonl")  # None: os.fspath's
    # TypeError (round 22)
    # a dict's numpy arrays and NaN as their JSON first: the codec takes only what JSON holds (round 29, W248); a
    # field's own NaN or inf is left for the row check to name (json_safe's None hid `steps: inf`, J249)
    if isinstance(row, Mapping):
        row = {k: v if isinstance(v, float) and not math.isfinite(v) else json_safe(v) for k, v in row.items()}
    row = ResultRow.from_dict(row)
    data = (dumps(row.to_dict()) + "\n").encode()
    _check_results_file(path, row, data)
    _check_no_other_writer(path)
    _unshare(path)
    if not os.path.lexists(Path(path).parent):  # after every check: nothing is made for a refused row; a file in the
        Path(path).parent.mkdir(parents=True)  # parent's place is left to open(), named as a file in a folder's way
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        # a torn last line (crash mid-write) would glue onto this row: start on a fresh line
        size = os.fstat(fd).st_size
        if size:
            with open(os.fspath(path), "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    data = b"\n" + data
        try:
            written = os.write(fd, data)
        except OSError:
            os.ftruncate(fd, size)  # nothing of the row stays
            raise
        if written != len(data):  # a full disk or a file-size limit took part of the line (issue 30 round 12, T52,
            from ...storage import storage_oserror  # T54: a torn line was left, and the short write ended in a

            failed = storage_oserror(OSError(f"{len(data)} requested and {written} written"), path)  # traceback):
            os.ftruncate(fd, size)  # judged first, then cut off again, so the file holds whole rows only
            raise failed
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_no_other_writer(path: str | os.PathLike) -> None:
    """UserError when another live process holds the write lock of the folder ``path`` is in (a running sweep's
    ``OUT/.lock``, or a lock beside it): a row appended into a running sweep's results.jsonl was written without a word,
    and one landing before the sweep's own row would be taken as that run's (issue 30 round 20, M282). The sweep's own
    appends hold that lock themselves (``locking.held_by_another`` skips this process's)."""
    from ...locking import _describe, held_by_another, lock_path

    folder = Path(os.path.abspath(path)).parent
    for lock in (lock_path(folder), lock_path(folder, beside=True)):
        held = held_by_another(lock)
        if held is not None:
            raise UserError(f"append_result: {_describe(*held)} is writing into {str(folder)!r} (it holds "
                            f"{str(lock)!r}); nothing was written; wait for it to finish (a sweep appends its own "
                            f"rows), or append to another results file")


def _check_results_file(path: str | os.PathLike, row: ResultRow, line: bytes) -> None:
    """UserError unless ``path`` may take a results row: not inside the output of a verb other than a sweep (a run, a
    data folder, an export, a report: ``ownership.check_not_inside``), and, when it holds anything, a file with at
    least one results row. ``append_result`` appended a JSON row to a user's notes.txt, to a run's config.yaml and
    into a prepared data folder (whose ``prepare --overwrite`` then refused it), no word (issue 30 round 18, G120,
    G121, G127)."""
    from ...jsonl import read_json_lines
    from ...ownership import CONTAINERS, check_not_inside

    check_not_inside(path, "append_result's path", ("train", "prepare", "export"), within=CONTAINERS, verb="sweep")
    problem = row_problem(json.loads(line)) or _count_non_finite(row.to_dict())
    if problem is not None:  # round 19 (J246-J251): written, then skipped or misread (inf as null) by read_results
        raise UserError(f"append_result: the row {_shown(row.name)} {problem}, so read_results would skip or misread "
                        f"it; nothing was written; correct that value")
    if (problem := _missing_field(row.to_dict())) is not None:
        raise UserError(f"append_result: the row {_shown(row.name)} {problem}, so no report or comparison could "
                        f"place it; nothing was written; give the row that field")
    from ...errors import not_regular

    if (special := not_regular(path)) is not None:  # a pipe blocked the open for ever, a device was errno 22 naming no
        raise UserError(f"append_result: {str(path)!r} {special}; nothing was written; append to a sweep's "
                        f"results.jsonl, or to a new file")  # path (issue 30 round 26, Q425, Q417)
    if os.path.isdir(path):  # the open's "a folder is in the way ... move that folder away" moved the user's sweep
        # away (issue 30 round 29, W300): the file it takes is named
        raise UserError(f"append_result: path {str(path)!r} is a folder, not a results file (read_results takes a "
                        f"sweep folder, append_result the file itself); nothing was written; pass the file to append "
                        f"to, e.g. {str(Path(path) / RESULTS)!r}")
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return  # a new results file (a missing folder in its way: the open names it)
    values, _ = read_json_lines(path)
    kept = [(f"line {n}", ResultRow.from_dict(d)) for n, d in values if isinstance(d, dict) and row_problem(d) is None]
    if not kept:
        raise UserError(f"append_result: {str(path)!r} holds no results row, so it is not a results file (a file of "
                        f"yours, or another verb's) and a row appended would be mixed into it; append to a sweep's "
                        f"results.jsonl, or to a new file")
    _check_row_fits(path, kept, row)


# What every row a sweep writes holds: the arm (``variant``) and ``seed`` its readers pair and group it by.
ROW_NEEDS = ("variant", "seed")


def _missing_field(d: dict) -> str | None:
    """Why a row to be appended is not one its readers can place: it lacks a field of ``ROW_NEEDS`` (the first
    missing named). ``append_result(path, {'name': 'x'})`` wrote a row of nulls, which read_results returned and
    write_report turned into a report of "1 runs" with empty tables, exit 0 (issue 30 round 22, S194)."""
    missing = next((key for key in ROW_NEEDS if d.get(key) is None), None)
    if missing is None:
        return None
    return (f"has no {missing} (every row names its arm and seed: {', '.join(ROW_NEEDS)}; read_results(SWEEP)[0] "
            f"shows a whole row)")


def _check_row_fits(path: str | os.PathLike, kept: list[tuple[str, ResultRow]], row: ResultRow) -> None:
    """UserError when ``row`` and the rows ``kept`` in ``path`` are rows its readers refuse together: one arm under
    two names (``identity.arm_clash``) or rows of two grids or two data folders (``identity.check_one_grid``). Both
    were appended without a word and refused only later, by every verb that read the file (issue 30 round 19, J252;
    J88-J95 the same kind), or rows evaluated with other settings (``identity.evaluation_mismatch``: a row of
    max_tokens 256 beside rows of 512 was appended, and ``report`` then refused the whole file, round 20, M71).
    Footgun: a second row of one name is the sweep's own rerun of a skipped row, not checked."""
    from .identity import arm_clash, check_one_grid, evaluation_mismatch

    clash = arm_clash([*kept, ("the row appended", row)])
    if clash is not None:
        raise UserError(f"append_result: in {str(path)!r}, {clash}; nothing was written; append the row of another "
                        f"arm, or to another results file")
    try:
        check_one_grid([r for _, r in kept] + [row], f"{str(path)!r} with the row {row.name!r} appended", None)
    except UserError as e:
        raise UserError(f"append_result: nothing was written: {e}") from None
    first = next(((n, r.evaluation) for n, r in kept if r.evaluation is not None), None)  # the file's setting
    shown = first and evaluation_mismatch([first, ("the row appended", row.evaluation)], "in")
    if shown:
        raise UserError(f"append_result: in {str(path)!r}, the row {row.name!r} was evaluated otherwise than the rows "
                        f"there ({shown}); nothing was written: its readers (report) refuse rows evaluated "
                        f"differently; evaluate it with the file's settings, or append it to another results file")


def _unshare(path: str | os.PathLike) -> None:
    """Give ``path`` an inode of its own when it is hard-linked with another name (``cp -al``, ``rsync
    --link-dest``, a snapshot tool): a row appended in place was appended to every copy, and the original sweep then
    listed runs its grid.json did not (issue 30 round 18, F125). A symbolic link (``cp -as``, a link to another
    sweep's results.jsonl) is the same case and gets the same rule (round 19, J245: the row went into the other
    sweep's file through the link, no word): a row names a run of the folder it is appended in (``runs/<name>``
    beside it), which the link's target folder does not hold, so the link is replaced by a file of its own holding
    the rows it showed; the target keeps its rows as they were. The file is copied whole and renamed over itself,
    or over the link (``io.atomic_write_bytes``)."""
    from ...io import atomic_write_bytes

    try:
        linked = os.path.isfile(path) and (os.path.islink(path) or os.stat(path).st_nlink > 1)
    except OSError:
        return  # missing: the open creates it
    if linked:
        atomic_write_bytes(path, Path(path).read_bytes())


# --------------------------------------------------------------------------------------------
# rows handed over in Python, and comparison groups


def check_typed_rows(rows: Iterable, who: str, one_per_arm: bool = False, compared: bool = False,
                     notes: list[str] | None = None) -> list[ResultRow]:
    """``rows`` as a list, one row per run, or the error naming the first row the file reader would refuse: an
    ``ArgumentTypeError`` (a TypeError) for a path or objects that are not rows, an ``ArgumentValueError`` (a
    ValueError) for a row's values. With ``one_per_arm`` (a function that pairs rows by size, seed and variant), two
    rows of one arm under two names are refused too (a pre-sweep's rows of one arm at several lrs are not: they are
    not paired); with ``compared`` (a function that compares the rows' eval numbers), rows evaluated differently.

    ``read_results`` warns about and skips a line holding NaN, a seed that is not a whole number or a variant its own
    config contradicts (``row_problem``). A list of rows edited in Python skipped all of that: ``paired_comparisons``
    compared a pair whose loss was NaN as "no pairs" beside the same pair's bits per byte (issue 30 round 17, E322),
    dropped a row whose seed was ``True`` (E323) and a second row of one size, seed and variant (E324) without a
    word. Footgun: call it where a public function first takes the rows, before grouping them
    (``comparison_groups`` keeps the last of two rows of one arm)."""
    from ...value_rules import check_switches

    check_switches("check_typed_rows", one_per_arm=one_per_arm, compared=compared)  # 'no' was true (round 30, Y711)
    if isinstance(rows, (str, os.PathLike)):  # round 8: a sweep's path ended in an AttributeError
        raise ArgumentTypeError(f"rows must be results rows, e.g. {who}(read_results({os.fspath(rows)!r})), got the "
                                f"path {os.fspath(rows)!r}")
    rows = list(rows)
    if not all(isinstance(r, ResultRow) for r in rows):
        others = sorted({type(r).__name__ for r in rows if not isinstance(r, ResultRow)})
        raise ArgumentTypeError(f"rows must be ResultRow objects (leviathan.experiments.machinery.results."
                                f"read_results), got {', '.join(others)}")
    from .identity import arm_clash

    for i, row in enumerate(rows):
        problem = row_problem(row.to_dict())
        if problem is not None:
            raise ArgumentValueError(f"{who}: rows[{i}] ({row.name!r}) {problem}; pass the rows as read_results reads "
                                     f"them, or correct that value")
    clash = arm_clash((f"rows[{i}]", row) for i, row in enumerate(rows)) if one_per_arm else None
    if clash is not None:
        raise ArgumentValueError(f"{who}: {clash}; drop one, or correct the edited variant, size or seed")
    rows = _one_row_per_run(rows, who, notes)
    if compared:
        _check_evaluated_alike(rows, who)
    return rows


def _one_row_per_run(rows: list[ResultRow], who: str, notes: list[str] | None) -> list[ResultRow]:
    """The rows with a run given twice, the same measurement, kept once (its note appended to ``notes``), by
    ``read_results``' rule (``identity.resolve_duplicates``); two different rows of one run are an
    ``ArgumentValueError``. ``analyze(rows + rows)`` counted 8 runs for 4, without a word, and a run's second,
    different row hid its first in the comparisons (issue 30 round 23, U417). A caller with no ``notes`` to say the
    rule in (``paired_comparisons``, ``comparison_table``, ...) refuses the repeat instead, naming the run: its note was
    dropped, and ``paired_comparisons(rows + rows)`` paired every run as once without a word (round 29, W310)."""
    from .identity import resolve_duplicates

    try:
        unique, said = resolve_duplicates([(f"rows[{i}]", row) for i, row in enumerate(rows)], "the rows given")
    except UserError as e:
        raise ArgumentValueError(f"{who}: {str(e).replace('and run the command again', 'and call it again')}") from None
    if notes is None and said:
        repeat = said[0].removeprefix("note: ").split("; counted once")[0]
        raise ArgumentValueError(f"{who}: {repeat}; pass each run once, as read_results returns them (analyze counts "
                                 f"a repeat once and says so)")
    if notes is not None:
        notes.extend(said)
    return unique


def _check_evaluated_alike(rows: list[ResultRow], who: str) -> None:
    """``ArgumentValueError`` when the rows record different evaluation settings, or some hold eval numbers and others
    none (``identity.check_one_evaluation``, the report's rule): ``analyze`` and ``paired_comparisons`` compared rows
    evaluated at eval.seq_len 32 with rows evaluated at 16, without a word (issue 30 round 23, U415, U416)."""
    from .identity import check_one_evaluation

    try:
        check_one_evaluation(rows, "this call")
    except UserError as e:
        raise ArgumentValueError(f"{who}: {e}") from None


def check_eval_set_held(who: str, rows: Iterable[ResultRow], eval_set) -> None:
    """UserError naming ``eval_set`` when it is no eval set's name, or when the rows were evaluated but none on it
    (as ``identity.check_eval_set`` refuses ``--eval-set``; rows of a --skip-eval sweep hold none and pass):
    ``analyze(rows, eval_set='nope')`` returned comparisons of loss None and ``frequency_from_results`` [], without
    a word (issue 30 round 23, U420; ``paired_buckets``' rule since round 20, M235)."""
    from ...value_rules import api_check, eval_set_problem

    api_check(who, "eval_set", eval_set_problem(eval_set), "pass an eval set the rows hold, e.g. val")
    held = sorted({s for r in rows for s in (*r.eval, *r.buckets)})
    api_check(who, "eval_set", None if not held or eval_set in held else f"no row was evaluated on {eval_set!r:.40}",
              f"pass one the rows hold: {', '.join(held)}")


def comparison_groups(rows: Iterable[ResultRow], regime: str) -> dict[tuple, dict[str, ResultRow]]:
    """Rows of one regime grouped by (size, seed) -> {variant: row}, smallest models first, then seed."""
    groups: dict[tuple, dict[str, ResultRow]] = {}
    for r in rows:
        if r.in_regime(regime):
            groups.setdefault((str(r.size), r.seed), {})[r.variant] = r

    def order(kv):
        totals = [r.total_params or 0 for r in kv[1].values()]
        return (min(totals), str(kv[0][0]), str(kv[0][1]))

    return dict(sorted(groups.items(), key=order))

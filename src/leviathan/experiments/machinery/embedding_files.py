"""Every file ``leviathan analyze embeddings`` touches: run folders in, portable records out and back in.

    record = record_of_run("runs/o200k/runs/d64L6-leviathan-s0")       # EmbeddingRecord (experiments.method.embeddings)
    write_record("results/o200k/embeddings/d64L6-leviathan-s0.json", record)
    record = read_record("results/o200k/embeddings/d64L6-leviathan-s0.json")
    records = read_records("results/o200k")                            # every embeddings/*.json beside results.jsonl
    write_sweep_records("runs/o200k", dest="results/o200k")              # one record per finished run of a sweep

From a run folder (``record_of_run``): the end is its latest complete checkpoint (a step short of the schedule is a
run that has not finished; the CLI says so); the init is rebuilt from that checkpoint's config and seed exactly as
training builds it (``initial_model``: a run folder holds no step-0 checkpoint); the input side of both is baked
into a (V, D) table; ``train_freq.npy`` comes from the data folder the run trained on (its ``data.path``, or
``data_dir`` where the folder has moved; one prepared with another tokenizer is refused).

A sweep's records are ``<results dir>/embeddings/<run name>.json``, beside ``results.jsonl``, where ``leviathan
report`` finds them: strict JSON (``results.dumps``) with one space of indent, no machine path. Footgun: the init is
rebuilt with the seed of the checkpoint's config; a run resumed under another seed would be rebuilt with the new one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ...config import ConfigError, from_dict
from ...empty_paths import refuse_folder_spelling, refuse_up_through_nothing
from ...errors import UserError, missing, not_a_file, not_regular
from ...io import atomic_write_text
from ...ownership import RUN_CONTAINERS, check_not_dangling, check_not_inside, check_not_special
from ..method.embeddings import FORMAT, Definitions, EmbeddingRecord, analyze_tables
from .provenance import CodeProvenance, code_provenance, data_provenance
from .record_checks import record_problem, written_types_problem
from .results import RESULTS, dumps, read_results
from .sweep_grid import read_sweep_grid
from ...storage import api_write
from ... import json_text, stop_signals

EMBEDDINGS = "embeddings"  # the records' folder beside results.jsonl


@dataclass
class RecordOptions:
    """How a record is made; records compare only when they were made with the same options on the same data."""

    num_buckets: int | None = None  # None: 5, or a sweep's grid's
    bucket_method: str | None = None  # None: mass, or a sweep's grid's
    probes_per_group: int = 200
    top_k: int = 10

    def filled(self, num_buckets: int = 5, bucket_method: str = "mass") -> RecordOptions:
        """These options with the buckets left open (None) set to the given ones. Only None is "left open":
        ``num_buckets=0`` (and False) was read as not given and made a record of 5 buckets without a word; now
        ``analyze_tables`` refuses it as it refuses 1 (issue 30 round 21, P234)."""
        return replace(self, num_buckets=num_buckets if self.num_buckets is None else self.num_buckets,
                       bucket_method=bucket_method if self.bucket_method is None else self.bucket_method)


def _input_table(model) -> np.ndarray:
    """The model's input side as a (V, D) float32 array (``embed_tokens.bake()``)."""
    import torch

    with torch.no_grad():
        return model.model.embed_tokens.bake().float().cpu().numpy()  # (V, D)


def _train_freq(data_dir: Path, given: bool) -> np.ndarray:
    path = data_dir / "train_freq.npy"
    if (what := not_a_file(path)) is not None:  # a link to nothing was "not found: not prepared" (round 18, G400)
        raise UserError(f"{str(path)!r} {what}; restore train_freq.npy from a copy, or prepare the data folder again "
                        f"(leviathan prepare SOURCE --out {data_dir} --overwrite)")
    if not path.is_file():
        how = ("it is not a prepared data folder (re-run leviathan prepare)" if given else
               "the run's config.yaml names that folder as data.path and it is not on this machine (or not "
               "prepared); pass --data DIR, the prepared folder the run trained on")
        raise UserError(f"{path} not found: {how}")
    from ...data.companions import load_train_freq

    return load_train_freq(data_dir)


def _arm(name: str, seed: int) -> str:
    suffix = f"-s{seed}"
    return name[:-len(suffix)] if name.endswith(suffix) else name


def record_of_run(run_dir: str | os.PathLike, data_dir: str | os.PathLike | None = None,
                  options: RecordOptions | None = None) -> EmbeddingRecord:
    """The ``EmbeddingRecord`` of a run folder (or one of its step folders): see the module docstring."""
    import torch

    from ... import __version__
    from ...checkpoint.find import find_checkpoint
    from ...checkpoint.read import check_tokenizer, load_model, load_run_config
    from ...checkpoint.state import read_step_state
    from ...initial_model import initial_model
    from ...train.metrics import git_revision

    options = (options or RecordOptions()).filled()
    step = find_checkpoint(run_dir).resolve()  # <run folder>/checkpoints/step-XXXXXXXX
    run_folder = step.parent.parent
    cfg = load_run_config(step)
    data = Path(data_dir) if data_dir is not None else Path(cfg.data.path)
    freq = _train_freq(data, given=data_dir is not None)
    check_tokenizer(step, data, "analyze this run's embeddings")  # also the folder the run's config names: one
    # replaced by data of another tokenizer gave the record its frequency buckets without a word (round 11, R41)
    final_model, _ = load_model(step)
    final = _input_table(final_model)
    del final_model
    init = _input_table(initial_model(cfg))
    state = read_step_state(step)  # checked: its step and token count go into the record
    found = analyze_tables(init, final, freq, options.num_buckets, options.bucket_method, options.probes_per_group,
                           options.top_k)
    name = run_folder.name
    return EmbeddingRecord(
        format=FORMAT, run=name, arm=_arm(name, cfg.seed), variant=cfg.model.embedding, seed=cfg.seed,
        code=code_provenance(run_folder), analysed_with=CodeProvenance(git_revision(), __version__, torch.__version__),
        data=data_provenance(data), vocab_size=int(final.shape[0]), hidden_size=int(final.shape[1]),
        step=state.step, total_steps=cfg.total_steps, tokens=state.tokens,
        num_buckets=options.num_buckets, bucket_method=options.bucket_method,
        probes_per_group=options.probes_per_group, top_k=options.top_k, num_candidates=found.num_candidates,
        definitions=Definitions(), init=found.init, final=found.final, probes=found.probes)


# ---- the record file: one writer, one reader ---------------------------------------------------------
def check_record_target(path: str | os.PathLike, flag: str = "--out") -> None:
    """UserError unless ``path`` is free or holds a record (this verb's own file): a record is never written over a
    file the verb did not write (issue 30), nor a FILE named ae written for an ``--out ae/`` typed as a folder
    (round 26, P3)."""
    refuse_folder_spelling(path, flag, "record.json")
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return
    if path.is_dir():
        raise UserError(f"{str(path)!r} is a folder; --out names the record's file (e.g. {path}/record.json)")
    check_not_dangling(path, str(path), flag, "record")  # "exists and is not an embeddings record" (round 20, K185)
    check_not_special(path, "--out")
    if not _looks_like_record(path):
        raise UserError(f"{str(path)!r} exists and is not an embeddings record, so `leviathan analyze embeddings` "
                        f"did not write it and will not write over it; choose another {flag}, or move the file "
                        f"away")


def _check_same_run(path: Path, run: str, flag: str) -> None:
    """UserError when ``path`` holds the record of another run than ``run``: ``analyze embeddings run3 --out F``
    replaced run1's record in F without a word (issue 30 round 15, B307). A record is rewritten only by its own run's."""
    if not path.is_file() or not _looks_like_record(path):
        return
    theirs = json_text.read_file(path).get("run")
    if theirs != run:
        raise UserError(f"{str(path)!r} holds the embeddings record of run {theirs!r}, not of {run!r}: writing this "
                        f"run's record there would lose it; choose another {flag} (e.g. {run}.json), or move that "
                        f"record away")


_RECORD_KEYS = {"format", "run", "arm", "variant", "definitions", "init", "final", "probes"}


def _looks_like_record(path: Path) -> bool:
    """Whether ``path`` holds a record, whole or damaged: a JSON object with a format number and a record's parts. A
    damaged record is refused by ``read_record`` with the advice to remake it at the same path (``--out`` it, or
    ``--redo``), which ``check_record_target`` then refused as "not an embeddings record" (issue 30 round 10)."""
    if not_regular(path) is not None:  # a pipe: reading it would hang (round 12, T65)
        return False
    try:
        raw = json_text.read_file(path)
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and _RECORD_KEYS <= set(raw) and isinstance(raw["format"], int)


@api_write("write_record", "path")
def write_record(path: str | os.PathLike, record: EmbeddingRecord, flag: str = "--out") -> Path:
    """Write ``record`` to ``path`` atomically (strict JSON, one space of indent); its folder is created. A file
    there that is not a record is refused (``check_record_target``)."""
    from ..method.embeddings import check_records

    check_records("write_record", "record", [record])  # round 24, W630's kind: 'a' was an AttributeError
    check_record_target(path, flag)  # as typed: Path('ae/') is Path('ae') (round 27, R3's kind)
    path = Path(path)
    _check_same_run(path, record.run, flag)
    check_not_inside(path, flag, ("train", "prepare", "export"), within=RUN_CONTAINERS, verb="analyze")  # N124, C204, E352
    path.parent.mkdir(parents=True, exist_ok=True)
    record = replace(record, sha256=content_sha256(json.loads(dumps(record))))
    text = dumps(record, indent=1) + "\n"
    with stop_signals.held_stops(deliver_after=True):  # a stop is said once the record is in place (round 23, T13)
        atomic_write_text(path, text)
        stop_signals.placed(path)  # `analyze embeddings --out`'s output: a stop from here on says it is complete
    return path


def content_sha256(raw: dict) -> str:
    """The sha256 of a record's JSON (``raw``, as parsed) without its own ``sha256``: keys sorted, no spaces."""
    fields = {key: value for key, value in raw.items() if key != "sha256"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _edited_problem(raw: dict) -> str | None:
    """Why a record of format 2 or later is not the one ``write_record`` wrote: its ``sha256`` is not that of its
    other fields. A field edited to another value in range (``hidden_size`` 16 -> 32: every rank still fits) passed
    every check of ``record_checks`` and was compared as written, with no results row to check it against (issue 30
    round 9, M35). A record of format 1 (written before) holds no digest, unless one was added to it."""
    if raw["format"] < 2 and "sha256" not in raw:
        return None
    said, found = raw.get("sha256"), content_sha256(raw)
    if said != found:
        shown = f"{said[:12]}..." if isinstance(said, str) else repr(said)
        return (f"its fields are not those it was written with: their sha256 is {found[:12]}..., the record says "
                f"{shown}; a value was edited or the file damaged")
    return None


def read_record(path: str | os.PathLike) -> EmbeddingRecord:
    """The ``EmbeddingRecord`` in ``path``; a file that is not one (or a newer format) is a UserError naming it."""
    from ...value_rules import check_read_path

    check_read_path("read_record", "path", path, "pass the path of an embeddings record (.json)")  # M342 (round 20)
    path = Path(path)
    if (kind := not_regular(path)) is not None:  # reading it hung `report` (issue 30 round 12, T65)
        raise UserError(f"{str(path)!r} {kind}; put the record file itself there, or move it out of the folder")
    try:
        raw = json_text.read_file(path, object_pairs_hook=json_text.no_repeats)
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path} as an embeddings record ({e}); pass a file `leviathan analyze "
                        f"embeddings RUN_DIR --out FILE` wrote, or a run folder") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("format"), int) or isinstance(raw["format"], bool) \
            or raw["format"] < 1:  # round 9 (M34): format 0 (no leviathan writes one) was read as a record
        raise UserError(f"{path} is not an embeddings record (no format number >= 1); pass a file `leviathan analyze "
                        f"embeddings RUN_DIR --out FILE` wrote, or a run folder")
    if raw["format"] > FORMAT:
        raise UserError(f"{path} has record format {raw['format']}, newer than this leviathan reads ({FORMAT}); "
                        f"update leviathan")
    problem = written_types_problem(EmbeddingRecord, raw)  # a number written as text (round 9, E4)
    if problem is None:
        try:
            record = from_dict(EmbeddingRecord, raw)
            problem = record_problem(record) or _edited_problem(raw)  # in range (round 8), as written (round 10)
        except (ConfigError, TypeError) as e:  # TypeError: a field left out
            problem = str(e)
    if problem is not None:
        raise UserError(f"{path} is a damaged embeddings record ({problem}); remake it with `leviathan analyze "
                        f"embeddings RUN_DIR --out {path}` (in a sweep: leviathan analyze embeddings --sweep DIR "
                        f"--redo)") from None
    return record


def record_or_run(path: str | os.PathLike, data_dir: str | os.PathLike | None = None,
                  options: RecordOptions | None = None) -> EmbeddingRecord:
    """A record file as it is, or a run folder analysed now."""
    path = Path(path)
    if path.is_file():
        return read_record(path)
    if path.is_dir():
        return record_of_run(path, data_dir, options)
    raise UserError(f"{str(path)!r} {missing(path)}; pass a run folder or an embeddings record (.json)")


def _check_dest(dest: Path) -> None:
    """UserError unless ``dest`` can take records: a folder with a results.jsonl (a results or sweep folder,
    where the report finds them), or one not made yet, empty, or holding only records from an earlier call. A
    prepared data folder, a run folder or any other folder of files would get an ``embeddings/`` no reader looks
    for (issue 30). A '..' out of a folder that does not exist is named on --dest as typed: the shared output check,
    asked later of each record's path, named 'sd/x/../embeddings/R.json' and offered that path as the fix (issue 30
    round 29, V17)."""
    refuse_up_through_nothing(dest, "--dest")
    if dest.exists() and not dest.is_dir():
        from ...errors import not_a_folder_there  # a pipe was "is a file" (issue 30 round 30, X26's kind)

        raise UserError(f"--dest {str(dest)!r} {not_a_folder_there(dest)}; pass a results folder (one holding "
                        f"{RESULTS})")
    if dest.is_dir() and not (dest / RESULTS).is_file() and any(p.name != EMBEDDINGS for p in dest.iterdir()):
        raise UserError(f"--dest {str(dest)!r} holds no {RESULTS} and is not empty (a data, run or other folder); "
                        f"records go beside a results.jsonl, where `leviathan report` reads them: pass the results "
                        f"folder (e.g. results/<grid>), or a new folder")


def records_dir(results: str | os.PathLike) -> Path:
    """``<results dir>/embeddings`` of a sweep or results folder (or of the folder of its results.jsonl)."""
    results = Path(results)
    return (results if os.path.isdir(results) or results.suffix != ".jsonl" else results.parent) / EMBEDDINGS


def read_records(results: str | os.PathLike, report: Callable[[str], None] | None = None) -> list[EmbeddingRecord]:
    """Every record in ``<results>/embeddings/*.json``, by file name; [] when the folder does not exist. A file there
    that is not a record and is named after no run of the results is a user's (a README.json): left out, with a note
    to ``report`` (default: stderr). It blocked the report with a fix that did not apply, "pass a file or a run
    folder" (issue 30 round 11, R77)."""
    from ...value_rules import check_callback

    check_callback("read_records", "report", report)  # a function of one message (round 31, AA281, AA714)
    folder = records_dir(results)
    paths = sorted(folder.glob("*.json")) if os.path.isdir(folder) else []  # a long name: no ENAMETOOLONG (G241)
    if not paths:
        return []
    # quietly: the caller's own read of the rows warns about a damaged line; a folder of records without a
    # results.jsonl has no rows to hold them to (read_results refuses such a folder as no sweep's, round 28 U603)
    held = (folder.parent / RESULTS).is_file()
    rows = {row.name: row for row in read_results(folder.parent, report=lambda message: None)} if held else {}
    for path in [p for p in paths if p.stem not in rows and not _looks_like_record(p)]:
        (report or _to_stderr)(f"note: {path} is not an embeddings record and is named after no run of "
                               f"{folder.parent}; left out (the folder holds the records <run>.json of `leviathan "
                               f"analyze embeddings`: move it out of {folder})")
        paths.remove(path)
    records = [read_record_of(p, p.stem) for p in paths]
    for path, record in zip(paths, records):
        _check_record_fits_row(path, record, rows.get(record.run))
    return records


def _to_stderr(message: str) -> None:
    import sys

    print(message, file=sys.stderr)


def _check_record_fits_row(path: Path, record: EmbeddingRecord, row) -> None:
    """UserError when ``record`` says another size, seed or variant than its run's results row: a record whose
    ``vocab_size`` was edited from 300 to 301 (every number still in range for 301) went into the report as the run's
    (issue 30 round 9, M33)."""
    if row is None:
        return
    for name in ("vocab_size", "hidden_size", "seed", "variant"):
        mine, said = getattr(record, name), getattr(row, name, None)
        if said is not None and mine != said:
            raise UserError(f"{str(path)!r}: field {name!r} is {mine!r}, but the results row of run {record.run!r} "
                            f"says {said!r}: the record was edited or comes from another run; delete it and make it "
                            f"again (leviathan analyze embeddings --sweep DIR --redo)")


def read_record_of(path: Path, run: str) -> EmbeddingRecord:
    """The record in ``path``, which must be run ``run``'s (a sweep's records are named ``<run>.json``): a record of
    another run copied under that name was reported as that run (its arm shown twice as "seeds 0, 0", the run
    compared with itself, exit 0: issue 30 round 7)."""
    record = read_record(path)
    if record.run != run:
        raise UserError(f"{str(path)!r} is the embeddings record of run {record.run!r}, not of {run!r} (a sweep's "
                        f"records are named <run>.json): it was copied or renamed from another run; move it back to "
                        f"{record.run}.json, or delete it and make the record again (leviathan analyze embeddings "
                        f"--sweep DIR --redo)")
    return record


@api_write("write_sweep_records", "dest")
def write_sweep_records(sweep: str | os.PathLike, dest: str | os.PathLike | None = None,
                        data_dir: str | os.PathLike | None = None, options: RecordOptions | None = None,
                        redo: bool = False, log: Callable[[str], None] = print) -> list[Path]:
    """A record for every finished run of a sweep (a row in its results.jsonl, its folder in ``runs/<name>``),
    written to ``<dest>/embeddings/<name>.json`` (``dest`` defaults to the sweep folder). A record already there is
    kept unless ``redo``. Buckets that ``options`` leave open are those of the sweep's grid.json. ``redo`` and ``log``
    are checked before anything is written: ``log='x'`` failed after the first record was written, and ``redo='no'``
    was read as true and rewrote every record (issue 30 round 19, J222, J224)."""
    from ...value_rules import check_callback, check_read_path, check_switches

    check_read_path("write_sweep_records", "sweep", sweep, "pass a sweep's --out folder")  # '' named '.' (U480's kind)
    if dest is not None:  # a NUL: os.stat's raw ValueError after the first record was computed (round 27, S95's kind)
        check_read_path("write_sweep_records", "dest", dest, "pass the results folder to write the records into")
    check_switches("write_sweep_records", redo=redo)
    check_callback("write_sweep_records", "log", log)
    log = log if log is not None else print
    sweep = Path(sweep)
    if (what := not_a_file(sweep / RESULTS)) is not None:  # not "holds no results.jsonl" (round 23, U379's kind)
        raise UserError(f"{str(sweep / RESULTS)!r} {what}, where the sweep's rows should be; move it away, and pass "
                        f"a sweep's --out folder")
    if not (sweep / RESULTS).is_file():
        raise UserError(f"{sweep} holds no {RESULTS}: pass a sweep's --out folder once some of its runs finished")
    grid = read_sweep_grid(sweep).eval_options
    options = (options or RecordOptions()).filled(grid.buckets, grid.bucket_method)
    if dest is not None:
        _check_dest(Path(dest))
    out = records_dir(dest if dest is not None else sweep)
    rows = read_results(sweep / RESULTS)
    if dest is not None:
        _check_dest_grid(rows, sweep, Path(dest))
    if dest is not None and (Path(dest) / RESULTS).is_file():
        _check_dest_rows(rows, read_results(Path(dest) / RESULTS), sweep, Path(dest))
    if not redo:
        _check_kept_records(rows, out, sweep / RESULTS)
    _check_runs_folder(sweep, rows, out, redo)
    written = []
    for row in rows:
        path = out / f"{row.name}.json"
        run_dir = sweep / "runs" / row.name
        if path.is_file() and not redo:
            log(f"{row.name}: {path} exists, kept (--redo remakes it)")
            continue
        if not run_dir.is_dir():
            log(f"{row.name}: no run folder {run_dir}, skipped")
            continue
        _check_run_is_row(run_dir, row, sweep / RESULTS)
        _check_not_trained_past_row(run_dir, row, sweep / RESULTS)
        written.append(write_record(path, record_of_run(run_dir, data_dir, options), "--dest"))
        log(f"{row.name}: wrote {path}")
    return written


def _check_kept_records(rows: list, out: Path, results: Path) -> None:
    """UserError, before any record is written, unless every record that ``out`` already holds for a row (and that
    is kept, without --redo) is that row's run: a user's file there is named (not reported as a record kept), and a
    record of another step or token count (another sweep's run of the same name: ``--sweep sw2 --dest D``, D holding
    sw1's records of step 2 where sw2's rows measured step 40) was "exists, kept", exit 0, as this sweep's (issue 30
    round 21, N339, N340, N341)."""
    for row in rows:
        path = out / f"{row.name}.json"
        if not path.is_file():
            continue
        check_record_target(path, "--dest")
        record = read_record_of(path, row.name)
        _check_record_fits_row(path, record, row)
        if (problem := record_row_problem(record, row)) is not None:
            raise UserError(f"{str(path)!r} is {problem} in {results}: it was made from other weights (another sweep's "
                            f"run of that name, or the run trained on since) and would be kept as this sweep's; "
                            f"nothing was written; remake it with --redo, or pass another --dest")


def record_row_problem(record: EmbeddingRecord, row) -> str | None:
    """Why ``record`` is not of the weights its run's results ``row`` measured (another step or token count), as
    "a record of run R at step S (T tokens), but the row of that run measured ..."; None when it is, or when the row
    records no steps. One rule for the report's reader (round 9, N57/N58) and the records a sweep keeps (round 21,
    N339)."""
    if row is None or None in (record.step, row.steps):
        return None
    if record.step == row.steps and (None in (record.tokens, row.tokens) or record.tokens == row.tokens):
        return None
    return (f"a record of run {record.run!r} at step {record.step:,} ({record.tokens} tokens), but the row of that "
            f"run measured step {row.steps:,} ({row.tokens} tokens)")


def _grid_name_of(folder: Path, rows: list) -> str | None:
    """The grid a folder's rows are of: its grid.json's name, else the one grid its rows name."""
    names = {row.grid for row in rows if isinstance(row.grid, str) and row.grid}
    return read_sweep_grid(folder).name or (names.pop() if len(names) == 1 else None)


def _check_dest_grid(rows: list, sweep: Path, dest: Path) -> None:
    """UserError, before any record is written, when ``dest`` is a sweep or results folder of another grid than
    ``sweep``: ``--sweep lro --dest sw4`` wrote tinylr's records into tinyg's folder, and its report then showed
    them as its runs' (issue 30 round 15, B264, B265)."""
    if not (dest / RESULTS).is_file() and not (dest / "grid.json").is_file():
        return
    dest_rows = read_results(dest / RESULTS, report=lambda message: None) if (dest / RESULTS).is_file() else []
    mine, theirs = _grid_name_of(sweep, rows), _grid_name_of(dest, dest_rows)
    if mine and theirs and mine != theirs:
        raise UserError(f"--dest {dest} holds the results of grid {theirs!r}, but {sweep}'s runs are of grid {mine!r}: "
                        f"their records would be reported as {dest}'s runs; nothing was written; pass the folder of "
                        f"grid {mine!r} (or a new one) as --dest")


def _check_dest_rows(rows: list, dest_rows: list, sweep: Path, dest: Path) -> None:
    """UserError, before any record is written, when ``dest``'s results.jsonl has a row of one of the sweep's runs that
    measured another step or token count: the records would be reported as the runs of ``dest``'s rows, made from
    other weights (a sweep of other settings given as the source, exit 0: issue 30 round 9, N57). Rows of one training
    evaluated differently stay welcome (round 8, D8)."""
    theirs = {row.name: row for row in dest_rows}
    for row in rows:
        other = theirs.get(row.name)
        if other is not None and (other.steps, other.tokens) != (row.steps, row.tokens):
            raise UserError(f"run {row.name!r} of {sweep} measured step {row.steps:,} ({row.tokens:,} tokens), but its "
                            f"row in {dest / RESULTS} measured step {other.steps:,} ({other.tokens:,} tokens): records "
                            f"of {sweep}'s runs would be reported as other runs there; nothing was written; pass the "
                            f"sweep whose runs {dest}'s rows measured, or another --dest")


def _check_runs_folder(sweep: Path, rows: list, out: Path, redo: bool) -> None:
    """UserError when ``sweep`` holds no ``runs/`` folder but a row still needs its record (none kept in ``out``, or
    ``redo``): a record is made from a run's weights. A collected folder (rows only) or a sweep whose runs were moved
    away printed "no run folder ..., skipped" for every row, then "0 record(s) written", exit 0 (issue 30 round 24,
    V105)."""
    from ...file_kinds import is_collected

    if (sweep / "runs").is_dir() or not any(redo or not (out / f"{row.name}.json").is_file() for row in rows):
        return
    what = ("a results folder scripts/collect_results.py wrote (rows only, no run folders)" if is_collected(sweep)
            else "a folder without the runs/ folder a sweep trains its runs in")
    raise UserError(f"sweep folder {str(sweep)!r} is {what}: a record is made from a run's checkpoint, under "
                    f"<sweep>/runs/<name>; nothing was written; pass the sweep folder the runs were trained in "
                    f"(the --out of `leviathan sweep`), with --dest {str(sweep)!r} to write the records beside these "
                    f"rows")


def _check_not_trained_past_row(run_dir: Path, row, results: Path) -> None:
    """UserError when the run folder's newest step is not the step the row measured (``steps``): a sweep's run
    continued by hand (``train --run-dir S/runs/NAME --resume auto max_steps=...``) had its record made of the later
    weights under the row's name, exit 0 (issue 30 round 8, D10)."""
    from ...checkpoint.layout import list_checkpoints

    steps, found = getattr(row, "steps", None), list_checkpoints(run_dir)
    if not isinstance(steps, int) or not found or found[-1][0] == steps:
        return
    raise UserError(f"{run_dir}'s newest checkpoint is step {found[-1][0]:,}, but its row in {results} measured step "
                    f"{steps:,}: the run was trained on after the sweep, and a record of it would not be the row's "
                    f"run; move the later step folders out of {run_dir / 'checkpoints'} (the row's step is "
                    f"step-{steps:08d}), or sweep the longer run into a new --out")


def _check_run_is_row(run_dir: Path, row, results: Path) -> None:
    """UserError when ``runs/<name>`` holds another run than the row of that name: its config.yaml says another seed,
    variant or size. Run folders swapped by hand made records named after one run that measured the other, exit 0
    (issue 30 round 5)."""
    from ...config import ConfigError, load_yaml

    try:
        config = load_yaml(run_dir / "config.yaml")
    except ConfigError:
        return  # missing or unreadable: reading the run names that problem
    model = config.get("model") if isinstance(config.get("model"), dict) else {}
    pairs = [("seed", row.seed, config.get("seed")), ("variant", row.variant, model.get("embedding")),
             ("hidden_size", row.hidden_size, model.get("hidden_size")),
             ("num_hidden_layers", row.num_hidden_layers, model.get("num_hidden_layers"))]
    differ = [f"{key} {mine!r} in the row, {theirs!r} in its config.yaml" for key, mine, theirs in pairs
              if mine is not None and theirs is not None and mine != theirs]
    if differ:
        raise UserError(f"{run_dir} does not hold run {row.name!r} of {results} ({'; '.join(differ)}): run folders "
                        f"were moved or swapped; put each back under runs/<its name> (its config.yaml says which run "
                        f"it is), then run the command again")

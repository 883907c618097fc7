"""What a results row must carry to be checked later, and paths that travel with a committed file.

    provenance = run_provenance(run_dir, data_dir)        # RunProvenance: config, code, data of a finished run
    portable_path("/work/runs/cpu/runs/m-s0", base)        # "runs/m-s0": relative, never machine-absolute

A committed ``results.jsonl`` is read on other machines, long after its run folders are gone, so each row records
what produced it, read here once:

- ``config``: the run's resolved ``RunConfig`` as its run folder's ``config.yaml`` holds it, ``data.path`` portable;
- ``code`` (``CodeProvenance``): the commit the run trained from (``versions.json``'s ``git_revision``; ``-dirty``
  with uncommitted changes) and the versions of leviathan and torch;
- ``data`` (``DataProvenance``): the prepared data's fingerprint (``data.fingerprint``; a version-2 folder also its
  ``legacy_fingerprint``), tokenizer, vocabulary and token counts; ``data_match`` states how a resumed sweep
  compares them across fingerprint versions.

Paths: ``portable_path`` writes a path relative to the folder it belongs to (the sweep folder, the data
folder as ``$LEVIATHAN_DATA/...``, the installed package, the current folder); a path under none of them
is reduced to its last two parts, so no committed file names a folder of the machine that wrote it.
Footgun: a relative path in a row is relative to the sweep folder (``run_dir``, ``metrics``), or to the
folder the sweep ran in (``data.dir``); readers that open them must resolve them against that folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...codec import extra_keys
from ...data.fingerprint import LEGACY_VERSION, fingerprint_version
from ...data.meta import find_meta
from ...io import data_root
from ...strict_yaml import parse as parse_yaml
from ..method.records import Record, optional
from ... import json_text


def _package_root() -> Path:
    return Path(__file__).resolve().parents[2]  # the folder holding the ``leviathan`` package


def _data_root() -> Path | None:
    value = data_root()
    return Path(os.path.abspath(value)) if value else None


def _relative(p: Path, base: str | os.PathLike) -> str | None:
    try:
        return p.relative_to(Path(os.path.abspath(Path(base).expanduser()))).as_posix() or "."
    except ValueError:
        return None


def portable_path(path: str | os.PathLike | None, *bases: str | os.PathLike) -> str | None:
    """``path`` as a committed file may hold it (never a folder of the machine that wrote it).

    A relative path is kept as written. An absolute one becomes, in this order: relative to the first of
    ``bases`` it lies under; ``$LEVIATHAN_DATA/<rest>`` under the data folder (``$LEVIATHAN_DATA``, or any
    ``.../shared/data``; ``os.path.expandvars`` turns it back into a path); ``leviathan/<rest>`` inside the
    installed package; relative to the current folder; else its last two parts.
    """
    if path is None:
        return None
    p = Path(os.path.expanduser(str(path)))
    if not p.is_absolute():
        return p.as_posix()
    p = Path(os.path.abspath(p))
    for base in bases:
        if (rel := _relative(p, base)) is not None:
            return rel
    root = _data_root()
    if root is not None and (rel := _relative(p, root)) is not None:
        return f"$LEVIATHAN_DATA/{rel}"
    parts = p.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "shared" and parts[i + 1] == "data":
            return "/".join(["$LEVIATHAN_DATA", *parts[i + 2:]])
    if (rel := _relative(p, _package_root())) is not None:
        return rel
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "leviathan" and parts[i + 1] == "configs":
            return "/".join(parts[i:])
    if (rel := _relative(p, Path.cwd())) is not None:
        return rel
    return Path(*parts[-2:]).as_posix()


def _read_json(path: Path) -> dict:
    try:
        return json_text.read_file(path)
    except (OSError, ValueError):
        return {}


@dataclass
class CodeProvenance(Record):
    """The code a run trained with (None where its versions.json does not say)."""

    commit: str | None = None  # git commit, ``-dirty`` with uncommitted changes
    leviathan: str | None = None
    torch: str | None = None
    extra: dict = extra_keys()  # keys this version does not know, kept as read


@dataclass
class DataProvenance(Record):
    """A prepared data folder (None where its meta.json does not say; every field None without one), as a results
    row records it. The version fields are left out of the JSON while None, so a row of a folder prepared before
    fingerprints had versions reads and writes as it did."""

    dir: str | None = None  # portable (``portable_path``)
    fingerprint: str | None = None
    tokenizer: str | None = None
    vocab_size: int | None = None
    train_tokens: int | None = None
    val_tokens: int | None = None
    fingerprint_version: int | None = optional()  # None: version 1 (path-dependent; ``data.fingerprint``)
    legacy_fingerprint: str | None = optional()  # the version-1 fingerprint a version-2 prepare also records
    extra: dict = extra_keys()  # keys this version does not know, kept as read

    @property
    def version(self) -> int:
        """The version of ``fingerprint`` (1 when none is recorded: written before versions)."""
        return fingerprint_version(self.fingerprint_version)

    def fingerprints(self) -> dict[int, str]:
        """{version: fingerprint} of every fingerprint recorded (``fingerprint`` and ``legacy_fingerprint``)."""
        out = {LEGACY_VERSION: self.legacy_fingerprint} if self.legacy_fingerprint else {}
        if self.fingerprint:
            out[self.version] = self.fingerprint
        return out


@dataclass
class RunProvenance:
    """What produced a finished run's numbers: its resolved config, code and data."""

    config: dict | None  # the run folder's config.yaml (``resolved_config``)
    code: CodeProvenance
    data: DataProvenance

    def row_fields(self) -> dict:
        """The ``config``, ``code`` and ``data`` fields of its results row (``results.ResultRow``)."""
        return {"config": self.config, "code": self.code, "data": self.data}


def code_provenance(run_dir: Path, report=None) -> CodeProvenance:
    """Commit and versions from the run folder's versions.json (what the run trained with). A value the row may not
    record, or a versions.json that is there but not a JSON object, is recorded as null and reported
    (``report(message)``, default stderr): round 35 (AH187) found it dropped without a word."""
    from ...value_rules import check_callback

    check_callback("code_provenance", "report", report)
    path = Path(run_dir) / "versions.json"
    versions = _read_json(path)
    if not isinstance(versions, dict):
        versions = {}
    if not versions and path.is_file():
        _report(report, f"warning: {path} is not a JSON object of versions (damaged or edited); the run's results row "
                        f"records its commit and versions as null (not known)")
    return CodeProvenance(*(_recordable(key, versions.get(name), path, name, report) for key, name in
                            (("commit", "git_revision"), ("leviathan", "leviathan"), ("torch", "torch"))))


def _report(report, message: str) -> None:
    if report is None:
        import sys

        print(message, file=sys.stderr)
    else:
        report(message)


def _recordable(key: str, value: Any, path: Path | None = None, name: str = "", report=None) -> str | None:
    """``value`` of versions.json if a results row may record it as ``code.<key>``, else None (the file does not say
    it): a row the sweep writes must read back (``row_provenance.code_field_problem``, round 33, AD3-AD17), or it
    would be skipped as edited on every later read. Round 35 (AH187): a value dropped so is reported, naming the file
    and the field, not recorded as null without a word."""
    from .row_provenance import code_field_problem

    if code_field_problem(key, value) is None:
        return value
    if path is not None:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        _report(report, f"warning: {path}: {name} {shown} is not what a run records there (damaged or edited); the "
                        f"run's results row records code.{key} as null (not known); restore the file from a copy to "
                        f"keep it")
    return None


def data_provenance(data_dir: str | os.PathLike, *bases: str | os.PathLike) -> DataProvenance:
    """Folder, fingerprint, tokenizer, vocabulary and token counts of a prepared data folder (its meta.json)."""
    meta = find_meta(data_dir) if Path(data_dir).is_dir() else None
    if meta is None:  # not a prepared folder (any more): nothing to record but where it was
        return DataProvenance(dir=portable_path(data_dir, *bases))
    return DataProvenance(dir=portable_path(data_dir, *bases), fingerprint=meta.fingerprint, tokenizer=meta.tokenizer,
                          vocab_size=meta.vocab_size, train_tokens=meta.tokens("train"), val_tokens=meta.tokens("val"),
                          fingerprint_version=meta.fingerprint_version, legacy_fingerprint=meta.legacy_fingerprint)


def resolved_config(run_dir: Path, *bases: str | os.PathLike) -> dict | None:
    """The run folder's config.yaml (the resolved RunConfig) as a dict, ``data.path`` portable."""
    try:
        cfg: Any = parse_yaml((run_dir / "config.yaml").read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if isinstance(cfg, dict) and isinstance(cfg.get("data"), dict) and cfg["data"].get("path"):
        cfg["data"]["path"] = portable_path(cfg["data"]["path"], *bases)
    return cfg if isinstance(cfg, dict) else None


def run_provenance(run_dir: str | os.PathLike, data_dir: str | os.PathLike, *bases: str | os.PathLike) -> RunProvenance:
    """The config, code and data of a finished run (see the module docstring)."""
    run_dir = Path(run_dir)
    return RunProvenance(resolved_config(run_dir, *bases), code_provenance(run_dir), data_provenance(data_dir, *bases))


def _looks_absolute(value: str) -> bool:
    return value.startswith("/") and len(value) > 1 and "\n" not in value and " " not in value.strip()


def portable_tree(obj: Any) -> Any:
    """``obj`` (parsed JSON) with every absolute-path string made portable (``portable_path``); a row's
    ``run_dir`` / ``metrics`` become relative to its sweep folder (``runs/<name>[/metrics.jsonl]``).
    Rewrites files committed before rows were portable (``scripts/collect_results.py --rewrite``)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in ("run_dir", "metrics") and isinstance(v, str) and _looks_absolute(v) and "runs" in Path(v).parts[:-1]:
                parts = Path(v).parts
                last = max(i for i, part in enumerate(parts[:-1]) if part == "runs")
                out[k] = "/".join(parts[last:])
            else:
                out[k] = portable_tree(v)
        return out
    if isinstance(obj, list):
        return [portable_tree(v) for v in obj]
    if isinstance(obj, str) and _looks_absolute(obj):
        return portable_path(obj)
    return obj

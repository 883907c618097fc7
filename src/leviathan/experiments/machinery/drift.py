"""A sweep rerun checks that the rows it keeps were trained with the runs its grid describes now.

    check_rows_against_grid(grid, rows, config_fn, log)   # UserError listing what changed, before anything is written

A row records the resolved run config it trained with (``provenance``), its data's fingerprint and how it was
evaluated (``identity.Evaluation``). A rerun used to count old rows of a changed grid as done and rewrite grid.json
to describe runs never trained that way (issue 22). Now, for every row whose run is still in the grid, the config
the grid builds for it today is compared with the row's on what decides the numbers (``model``, ``optim``,
``schedule``, ``batch_tokens``, ``max_steps`` / ``max_tokens``, ``seed``, ``data.seq_len`` / ``data.shuffle`` /
``data.softmax``, ``eval_tokens``: the tokens of the validation curve and of ``final_val_loss``), and so are its evaluation settings and its data (``data_match``). Left out on purpose: where
things are (``data.path``), how often the run logs, evaluates or checkpoints, the device and the dtype choice,
compile, ``micro_batch_size`` and ``parallel`` (the same math split differently).

A changed run is refused (UserError, one line per differing key, at most 12) with the fix: sweep into a new --out,
or remove those rows (and their run folders). The sweep refuses before it writes grid.json, so grid.json only ever
describes runs whose rows agree with it. Rows that record no config or no evaluation (written before rows carried
them), rows matched on their data's summary and rows of runs the grid no longer has are accepted with a note.
"""

from __future__ import annotations

from typing import Any, Callable

from ...errors import UserError
from .data_match import SUMMARY, match_data
from .identity import evaluation_differences, evaluation_settings, identity_differences, plain
from .provenance import DataProvenance
from .results import setting

COMPARED_SECTIONS = ("model", "optim", "schedule")
COMPARED_KEYS = ("batch_tokens", "max_steps", "max_tokens", "seed", "data.seq_len", "data.shuffle", "data.softmax",
                 "eval_tokens")  # the tokens of the validation curve and final_val_loss (round 12, T32)
MAX_SHOWN = 12


def compared_view(config: dict) -> dict[str, Any]:
    """{dotted key: value} of the settings that decide a run's numbers (see the module docstring)."""
    out: dict[str, Any] = {}
    for section in COMPARED_SECTIONS:
        for key, value in sorted((config.get(section) or {}).items()):
            out[f"{section}.{key}"] = plain(value)
    for dotted in COMPARED_KEYS:
        out[dotted] = plain(setting(config, dotted))
    return out


_MISSING = object()


def _recorded(config: dict, dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return plain(node)


def field_defaults() -> dict[str, Any]:
    """{dotted key: default} of the compared settings (what a row written before a field existed trained with)."""
    import dataclasses

    from ...run_config import DataConfig, OptimConfig, RunConfig, ScheduleConfig
    from ...model.config import ModelConfig

    out: dict[str, Any] = {}
    for prefix, cls in (("model.", ModelConfig), ("optim.", OptimConfig), ("schedule.", ScheduleConfig),
                        ("data.", DataConfig), ("", RunConfig)):
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[prefix + f.name] = plain(f.default)
            elif f.default_factory is not dataclasses.MISSING and prefix:
                out[prefix + f.name] = plain(f.default_factory())
    return out


def config_differences(trained: dict, now: dict, where: str = "in the row") -> list[str]:
    """``key: VALUE in the row, VALUE now`` for every compared key that differs (``where``: what ``trained`` is, as the
    line names it: "in the checkpoint" for a run folder's config).

    A key the row's config does not hold at all (written before that setting existed) is compared with the
    setting's default instead, and skipped when the default is null (resolved at run time)."""
    current = {k: v for k in compared_view(now) if (v := _recorded(now, k)) is not _MISSING}
    defaults = field_defaults()
    out = []
    for key in sorted(current):
        was = _recorded(trained, key)
        if was is _MISSING:
            was = defaults.get(key)
            if was is None:
                continue
        if was != current[key]:
            out.append(f"{key}: {was!r} {where}, {current[key]!r} now")
    return out


def _config_now(cfg: Any) -> dict | None:
    """The resolved config dict of what ``config_fn`` built (None for anything that is not a RunConfig)."""
    from ...config import to_dict

    if not hasattr(cfg, "resolved"):
        return None
    return to_dict(cfg.resolved())


def _names(names: list[str]) -> str:
    """The first five of ``names`` (sorted, once each), for a note."""
    unique = sorted(set(names))
    return ", ".join(unique[:5]) + (" ..." if len(unique) > 5 else "")


def _identity_differences(row, spec) -> list[str]:
    """What the row says the run is (size, variant, regimes, seed, data_seed) against what the grid makes it now: only
    the settings were compared, so a row of another regime was taken as done (issue 30 round 16, C82: the rule of
    ``identity.identity_differences``, which report and collect apply against grid.json)."""
    prefix = f"{row.name}: "
    return [d.removeprefix(prefix).replace(" in grid.json", " now") for d in identity_differences(row, spec)]


def check_rows_against_grid(grid, rows: list, config_fn: Callable, log: Callable[[str], None],
                            data: DataProvenance | None = None) -> None:
    """UserError if a row's recorded config (or data) differs from what ``grid`` builds for that run now (and from
    ``data``, the grid's data folder: ``provenance.data_provenance``)."""
    from ...value_rules import check_callback

    check_callback("check_rows_against_grid", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    specs = {spec.name: spec for spec in grid.runs}
    evaluation = evaluation_settings(grid.eval_sets, grid.eval_options)
    changed, unchecked, foreign, by_summary, no_evaluation = [], [], [], [], []
    for row in rows:
        spec = specs.get(row.name)
        if spec is None:
            foreign.append(row.name)
            continue
        match = match_data(row.data_provenance, data or DataProvenance())
        data_diff = list(match.differences)
        if match.how == SUMMARY and not data_diff:
            by_summary.append(row.name)
        now = _config_now(config_fn(grid, spec)) if row.config else None
        if row.config is None or now is None:
            unchecked.append(row.name)
            diff = data_diff
        else:
            diff = config_differences(row.config, now) + data_diff
        if row.evaluation is None and row.eval:  # a row without eval numbers (--skip-eval) has nothing to check
            no_evaluation.append(row.name)
        diff += evaluation_differences(row.evaluation, evaluation)
        diff += _identity_differences(row, spec)
        changed.extend(f"{row.name}: {d}" for d in diff)
    if unchecked:
        log(f"note: {len(unchecked)} row(s) record no config (written before rows carried one) and are not checked "
            f"against the grid: {_names(unchecked)}")
    if by_summary:
        log(f"note: {len(by_summary)} row(s) could not be matched with the data folder by fingerprint (a version-1 "
            f"fingerprint, which hashed the text's path, on one side); matched on tokenizer, vocabulary and train/val "
            f"token counts instead, which agree: {_names(by_summary)}")
    if no_evaluation:
        log(f"note: {len(no_evaluation)} row(s) record no evaluation settings (written before rows carried them); "
            f"their eval numbers are not checked against the grid's eval section: {_names(no_evaluation)}")
    if foreign:
        log(f"note: {len(foreign)} row(s) are of runs grid {grid.name!r} no longer has: "
            f"{_names(foreign)}")
    if changed:
        shown = changed[:MAX_SHOWN] + ([f"... {len(changed) - MAX_SHOWN} more"] if len(changed) > MAX_SHOWN else [])
        raise UserError(f"grid {grid.name!r} has changed since these rows were trained ({len(changed)} difference(s): "
                        + "; ".join(shown) + "); sweep into a new --out, or remove those runs' rows (and their "
                        "runs/<name> folders) from results.jsonl to train them again")


def check_run_folders_against_grid(out_dir, configs: dict, summary_file: str) -> None:
    """UserError before any work when a run folder the sweep would resume or evaluate was not trained as the grid
    builds that run now: its latest checkpoint's config differs on a compared key (a sweep rerun with another
    ``optim.lr`` resumed at step 600 and its row recorded the new lr for all 3,000 steps; a finished run folder of
    another sweep swapped in was evaluated as this grid's: issue 30 round 11, R155, R24), or its training summary
    (``sweep_train.json``) names another run folder or another number of steps (another run's summary became this
    run's row: R186, R187), or final validation numbers that contradict themselves or the run's metrics.jsonl
    (round 14, A233, A234: ``summary_check``). ``configs``: {run name: RunConfig} of the runs to go."""
    from pathlib import Path

    from ...checkpoint.layout import latest_checkpoint
    from ...config import load_yaml
    from ...train.summary import TrainSummary
    from .summary_check import summary_contradiction, summary_row_problem
    from ...train.metrics import foreign_metrics

    for name, cfg in configs.items():
        if not hasattr(cfg, "resolved"):  # a test's stand-in for a RunConfig
            continue
        run_dir = Path(out_dir) / "runs" / name
        fix = (f"remove the folder {str(run_dir)!r} to train the run afresh, or sweep into a new --out")
        problem = foreign_metrics(run_dir)  # round 14 (A239): two runs' metrics.jsonl swapped made rows of the wrong
        if problem is not None:  # curves (and blamed sweep_train.json, whose deletion then made them silently)
            raise UserError(f"{problem}; put each run's metrics.jsonl back into its own run folder, or {fix}")
        summary_path = run_dir / summary_file
        if summary_path.is_file():
            summary = TrainSummary.read(summary_path)
            if Path(summary.run_dir).name != name:
                raise UserError(f"{str(summary_path)!r} is the training summary of run folder {summary.run_dir!r}, "
                                f"not of {name!r}: delete it (the run is evaluated again from its checkpoint), or "
                                f"{fix}")
            if summary.steps != cfg.total_steps:
                raise UserError(f"{str(summary_path)!r} records {summary.steps} steps, but grid run {name!r} trains "
                                f"{cfg.total_steps}: delete it (the run is evaluated again from its checkpoint), or "
                                f"{fix}")
            problem = (summary_contradiction(summary, run_dir)  # round 14 (A233, A234): edited final numbers
                       or summary_row_problem(summary, cfg.batch_tokens))  # round 20 (K191, K192, K194)
            if problem is not None:
                raise UserError(f"{str(summary_path)!r}: {problem}; the file was damaged or edited by hand: delete it "
                                f"(the run is evaluated again from its checkpoint), or {fix}")
        latest = latest_checkpoint(run_dir)
        if latest is None:
            continue
        diff = config_differences(load_yaml(latest / "config.yaml"), _config_now(cfg), "in the checkpoint")
        if diff:
            shown = "; ".join(diff[:MAX_SHOWN])
            raise UserError(f"run folder {str(run_dir)!r} was trained with other settings than grid run {name!r} "
                            f"has now ({shown}; its checkpoint {latest.name}): resuming or evaluating it would give "
                            f"a row that describes neither; run the sweep with the settings it was started with, or "
                            f"{fix}")
        _refuse_other_data(run_dir, latest, name, cfg, fix)


def _refuse_other_data(run_dir, latest, name: str, cfg, fix: str) -> None:
    """UserError when a run folder's latest checkpoint trained on other data than the grid's (its state.json's
    ``data_fingerprint``, ``train.data_identity``): a finished run folder of a sweep of another corpus, copied in,
    was "trained already, evaluating" and its row recorded the grid's data (issue 30 round 20, K139)."""
    from ...checkpoint.state import read_step_state
    from ...train.data_identity import data_changed

    changed = data_changed(read_step_state(latest).raw, cfg.data.path,
                           cause="the data of grid run " + repr(name) + "; the run folder trained on another")
    if changed is not None:
        raise UserError(f"run folder {str(run_dir)!r} (its checkpoint {latest.name}): {changed}: resuming or "
                        f"evaluating it would give a row that records data it did not train on; {fix}")

"""``write_report``'s Python arguments checked at the API boundary by the rules of ``leviathan report``'s flags.

    check_report_arguments(results, out_dir, eval_set, num_bootstrap, ci, seed, ladder, lr_sweep, fair_shot)

The verb's flags refuse ``--ci 2``, ``--bootstrap -1``, ``--seed`` past 32 bits and ``--eval-set ''``; the library
entry point took them unchecked: ``write_report([], out)`` ended in an IndexError, ``ci=nan`` in a ValueError
traceback after the output folder was claimed (a folder holding only its marker), ``ci=2`` wrote a '200% interval',
``seed=True`` was taken as seed 1 and ``num_bootstrap=-1`` as no draws (issue 30 round 16, C238, C241-C243, C245).
Each value is judged by the rule its flag applies (``value_rules``: one rule per value), before any file is read
or written; the line names the argument and what to pass.
"""

from __future__ import annotations

import os

from ...value_rules import api_check, bootstrap_problem, eval_set_problem, fraction_problem, path_problem
from ...errors import UserError
from ...seeds import seed_problem

API = "write_report"


def check_report_arguments(results, out_dir, eval_set, num_bootstrap, ci, seed, ladder, lr_sweep,
                           fair_shot) -> None:
    """UserError naming the first of ``write_report``'s arguments its flag would refuse (module docstring).
    Parameters: ``write_report``'s own, one each, as its caller gave them."""
    api_check(API, "results", path_problem(results, many=True),
              "pass a sweep folder or its results.jsonl, or a list of the shard folders of one grid")
    api_check(API, "out_dir", path_problem(out_dir, many=False), "pass the folder to write the report into")
    if os.path.isfile(out_dir) and os.path.realpath(out_dir) in _results_files(results):  # round 35, AI482: the
        # results file itself was blamed on the report marker of the folder above (other files in the way keep
        # the place rules' own lines)
        raise UserError(f"{API}: out_dir: {os.fsdecode(out_dir)!r} is a file, not a folder (it is the results file "
                        f"given); pass the folder to write the report into")
    if lr_sweep is not None:
        api_check(API, "lr_sweep", path_problem(lr_sweep, many=True),
                  "pass the pre-sweep's folder (or its shards' folders), or None")
    if fair_shot is not None:
        api_check(API, "fair_shot", path_problem(fair_shot, many=False),
                  "pass the results folder of the round it re-examines, or None")
        _check_fair_shot_apart(results, fair_shot)
    check_analysis_options(API, eval_set, num_bootstrap, ci, seed, ladder)


def check_analysis_options(api: str, eval_set, num_bootstrap, ci, seed, ladder) -> None:
    """UserError naming the first of the analysis options (shared by ``write_report`` and ``analyze``) that its flag
    would refuse: ``analyze(rows, num_bootstrap=-1)``, ``seed=-1`` and ``ladder='nope'`` were taken without a word
    while ``write_report`` refused them (issue 30 round 24, W476-W478)."""
    from ...model.config import EMBEDDING_KINDS

    api_check(api, "eval_set", eval_set_problem(eval_set), "pass the name of an eval set the rows hold (as --eval-set)")
    api_check(api, "num_bootstrap", bootstrap_problem(num_bootstrap),
              "pass a number of draws such as 1000 (0: none), as --bootstrap takes")
    api_check(api, "ci", fraction_problem(ci), "pass the intervals' coverage as a fraction such as 0.95, as --ci takes")
    api_check(api, "seed", seed_problem(seed), "pass an integer seed such as 0, as --seed takes")
    if ladder is not None and (not isinstance(ladder, str) or ladder not in EMBEDDING_KINDS):
        raise UserError(f"{api}: ladder: must be one of {', '.join(EMBEDDING_KINDS)} or None, got {ladder!r:.60}; "
                        f"pass the variant of the scaling ladder, as --ladder takes")


def _folder(path) -> str:
    """The folder a results argument names (a results.jsonl stands for its folder), resolved."""
    real = os.path.realpath(path)
    return os.path.dirname(real) if os.path.basename(real) == "results.jsonl" else real


def _check_fair_shot_apart(results, fair_shot) -> None:
    """UserError when the committed round (``--fair-shot``, ``fair_shot=``) is the round being reported: the
    fair-shot rules compare a new round with the committed one it re-examines. ``write_report('sw1', out,
    fair_shot='sw1')`` was refused about a grid file instead (issue 30 round 17, E277)."""
    given = results if isinstance(results, (list, tuple)) else [results]
    if _folder(fair_shot) in {_folder(r) for r in given}:
        raise UserError(f"--fair-shot (fair_shot) {os.fspath(fair_shot)!r} is the round being reported: the fair-shot "
                        f"rules compare this round with the committed round it re-examines; pass that round's "
                        f"results folder (e.g. --fair-shot results/o200k), or leave it out")


def _results_files(results) -> set[str]:
    """The resolved paths of the results files ``results`` names (a folder stands for its results.jsonl)."""
    paths = results if isinstance(results, (list, tuple)) else [results]
    out = set()
    for path in paths:
        if isinstance(path, (str, os.PathLike)):
            real = os.path.realpath(path)
            out.add(os.path.join(real, "results.jsonl") if os.path.isdir(real) else real)
    return out

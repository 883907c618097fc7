"""A report's files replaced as a whole: written into a staging folder inside ``--out``, then put in place together.

    with staged_output(out, "report", stale=FIGURE_NAMES) as stage:   # stage: OUT/.report.stage-PID/
        draw_figures(rows, a, stage); atomic_write_text(stage / "report.md", md)
    # here every staged file has replaced its namesake in OUT, and OUT's stale figures are gone

``leviathan report`` rerun into its own --out wrote its figures one by one over the earlier report's: a full disk
at the second figure (issue 30 round 14, B289) or a SIGTERM while the figures were written (B324) left a folder
mixing two reports (the new loss_curves.png beside the old report.md). Now nothing in ``out`` changes until every
file is written; a failure or a stop before that removes the staging folder and leaves the earlier report as it was.
The swap itself is renames within one folder (no space needed) with the stop signals held back until it is done, and
a figure of the earlier report that the new one does not draw (``stale``: a glob of the verb's figure names, and only
a file the folder's marker says is the verb's) is removed with it (B322: ``report --ablation`` with fewer arms left a
``gap_*.png`` its new README does not name). For a glob, the marker lists the files written: a user's
``gap_mine.png`` was removed as stale (round 22, S433). An error names the file in ``out``, never the staging folder's.

The swap is all or none: a file of ``out`` that cannot be replaced (immutable, or a folder in its place) leaves
``out`` as it was (round 21, N191, N269; ``_swap``).

Footgun: a stop held back during the swap is delivered right after it: the verb then exits as stopped, with the new
output whole in place (its rerun writes the same). A SIGKILL during the swap (a few renames) can still leave a mix
(the earlier files then lie in the staging folder's ``.earlier``); a staging folder a killed process left is
removed by the next run into the same ``out`` once its process is gone (and only when it holds the verb's files).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any, Iterable, Iterator

from .. import stop_signals
from ..stop_signals import held_stops
from ..dead_writers import leftovers
from ..ownership import _matches, _proof, leftover_is_own, mark, read_marker, record_digests, refuse_edited
from ..replace_together import replace_together


def _stage_prefix(verb: str) -> str:
    return "." + "".join(c if c.isalnum() else "-" for c in verb) + ".stage-"


@contextlib.contextmanager
def staged_output(out: Path, verb: str, files: Iterable[str], stale: Iterable[str] = ()) -> Iterator[Path]:
    """A fresh staging folder in ``out`` for ``verb``'s files (glob patterns ``files``); on a normal exit its files
    replace their namesakes in ``out`` and the verb's ``stale`` files it does not hold are removed, on any exception
    (a storage error, ``Stopped``, Ctrl-C) it is removed and ``out`` is left as it was (issue 30 round 14, B289, B324,
    B322). The marker records each file's sha256 with the swap, and a file changed since (a report.md the user
    edited) is refused before anything is staged, as export refuses it (round 29, W651; ``ownership.refuse_edited``)."""
    files, stale = _check_staged(out, verb, files, stale)
    out = Path(out)
    refuse_edited(out, verb)  # a rerun replaced a report.md the user had edited, no word (issue 30 round 29, W651)
    _remove_dead_stages(out, verb, files)
    stage = out / f"{_stage_prefix(verb)}{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    try:
        stage.mkdir()
        yield stage
    except OSError as e:
        shutil.rmtree(stage, ignore_errors=True)
        raise _named_in_out(e, stage, out) from None
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    try:
        with held_stops(deliver_after=True):  # a stop mid-swap would leave the mix the staging prevents
            written, removed = _swap(stage, out, verb, tuple(stale))
            mark(out, verb, files)  # the names it now writes there, before a held stop is delivered
            if any(_is_glob(pattern) for pattern in stale):
                _record_written(out, verb, written, removed)
            record_digests(out, verb, files)  # with the files in place: a held stop cannot part the two
            stop_signals.output_in_place = True  # a held stop then says the report is complete (round 22, Q106)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _check_staged(out: Any, verb: Any, files: Any, stale: Any) -> tuple[tuple, tuple]:
    """UserError naming the argument of ``staged_output`` that is not what it takes (issue 30 round 22): ``files`` (or
    ``stale``) given as one glob '*.png' was iterated letter by letter, its marker listing '*', '.', 'p', ...; a verb
    that is no name and an ``out`` that is no path ended in a traceback from inside the staging. Returns ``files`` and
    ``stale`` as tuples."""
    from ..value_rules import api_check, path_problem

    api_check("staged_output", "out", path_problem(out), "pass the output folder")
    if not isinstance(verb, str) or not verb:
        api_check("staged_output", "verb", f"expected the verb's name (such as 'report'), got {verb!r:.40}",
                  "pass the name")
    checked = []
    for name, globs in (("files", files), ("stale", stale)):
        listed = None if isinstance(globs, (str, bytes)) or not hasattr(globs, "__iter__") else tuple(globs)
        if listed is None or not all(isinstance(g, str) and g for g in listed):
            api_check("staged_output", name, f"expected a list of file names or globs, got {globs!r:.60}",
                      "pass a list such as ['*.png'] (one glob in a list)")
        checked.append(listed)
    return checked[0], checked[1]


def _swap(stage: Path, out: Path, verb: str, stale: tuple[str, ...]) -> tuple[list[str], set[str]]:
    """Rename every file of ``stage`` over its namesake in ``out``, all or none; then remove ``out``'s files matching
    ``stale`` that the new output does not hold, where the folder's marker makes them the verb's (``_stale_own``).
    Returns (the names written, the names removed).

    All or none (issue 30 round 21, N191, N269): a namesake that could not be replaced (a file made immutable, a
    folder in its place) stopped the renames half-way, leaving the new analysis.json beside the old report.md, and
    the error named the staging folder's file. ``replace_together`` (shared with ``save_pretrained`` and
    ``Tokenizer.save``, round 22): a folder in a file's place is refused before anything moves; the earlier files are
    first moved aside into the staging folder (``.earlier``), and a rename that fails puts back everything moved so
    far, so ``out`` is left as it was and the error names the file of ``out``."""
    new = sorted(name for name in os.listdir(stage) if name != _EARLIER)
    earlier = stage / _EARLIER
    earlier.mkdir()
    try:
        replace_together([(stage / name, out / name) for name in new], aside=lambda target: earlier / target.name)
    except OSError as e:
        raise _named_in_out(e, stage, out) from None
    marker, removed = _proof(read_marker(out), out), set()
    for name in os.listdir(out):
        if name in new or not _matches(name, stale) or not (out / name).is_file():
            continue
        if _stale_own(marker, verb, name, stale):
            (out / name).unlink(missing_ok=True)
            removed.add(name)
    return new, removed


def _is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _stale_own(marker, verb: str, name: str, stale: tuple[str, ...]) -> bool:
    """Whether the stale file ``name`` is the verb's to remove: the marker is the verb's and lists it, or marks the
    folder whole and ``name`` is one of the verb's fixed names (the plain report's figures). A file a glob matches
    (``report --ablation``'s ``gap_*.png``) in a folder marked whole may be a user's: ``gap_mine.png`` beside the
    ablation's figures was removed by its rerun, no word (issue 30 round 22, S433); it is kept, and the verb's own
    are those its marker lists (``_record_written``)."""
    if marker is None or marker.verb != verb:
        return False
    return name in marker.files if marker.files is not None else name in stale


def _record_written(out: Path, verb: str, written: list[str], removed: set[str]) -> None:
    """List in ``out``'s marker the files the verb's output now is (those it listed, less those removed, and those
    just ``written``), for a verb whose stale names are a glob: its rerun then removes only the files it wrote
    (``_stale_own``), and ``check_claim`` refuses a user's file matching its names rather than writing over it, as
    for every verb whose marker lists its files (round 22, S433). A folder marked whole becomes a listed one."""
    from ..ownership import write_marker

    marker = _proof(read_marker(out), out)
    if marker is None or marker.verb != verb:
        return
    files = (set(marker.files or ()) - removed) | set(written)
    if marker.files is None or files != set(marker.files):
        write_marker(out, verb, files)


_EARLIER = ".earlier"  # inside the staging folder: the files of ``out`` the swap replaces, until it is done


def _named_in_out(e: OSError, stage: Path, out: Path) -> OSError:
    """``e`` naming the file of ``out`` its staged file stands for (``OUT/frontier.png``, not the staging folder's)."""
    name = os.fspath(e.filename) if e.filename is not None else None
    if e.errno is None or name is None or not name.startswith(os.fspath(stage) + os.sep):
        return e
    return OSError(e.errno, e.strerror, os.path.join(os.fspath(out), os.path.relpath(name, stage)))


def _remove_dead_stages(out: Path, verb: str, files: tuple[str, ...]) -> None:
    """Remove the staging folders of ``verb`` that processes no longer running left in ``out`` (SIGKILL), when they
    hold only the verb's files (``ownership.leftover_is_own``)."""
    for path, pid in leftovers(out, _stage_prefix(verb)):
        if pid is not None and path.is_dir() and leftover_is_own(path, files + (".*",)):
            shutil.rmtree(path, ignore_errors=True)

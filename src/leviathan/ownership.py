"""Which folders a verb may delete or write into: its own earlier output, recognised by a marker it wrote.

    write_marker(tmp, "export", listed_files(tmp))        # the last file of an output built in a temporary folder
    check_replaceable(out, "export", "--overwrite")       # UserError unless `out` is export's own earlier output
    check_claim(run_dir, "train", RUN_FILES, fix, legacy=looks_like_run)   # before writing: no user file written over
    mark(run_dir, "train")                                # the folder is train's from now on
    check_apart(data_dir, "data.path", run_dir, "--run-dir")               # an output folder is not an input folder

A flag that deletes, and a verb that writes into an existing folder, need proof that the folder is theirs (issue
30: ``export --overwrite`` replaced a user's documents, ``train --run-dir`` wrote over a user's ``config.yaml``):

- **The marker**, ``leviathan_output.json``: the verb that wrote the folder and, for an output built in a temporary
  folder and renamed into place (export, prepare), every file it wrote. Written last: a folder holding it is complete.
- **Replacing** (``check_replaceable``) needs the marker of the same verb and exactly the files it lists; and no
  live process may hold a lock inside the folder or beside it (``locking``). A folder written before markers is
  replaced only when the verb's ``legacy`` test recognises it. Every refusal names what would be deleted and the
  command to delete it by hand.
- **Writing into** a folder (``check_claim``): with the verb's marker for the whole folder (a run, a sweep), written
  in this very folder, the folder is the verb's. Otherwise a file the verb would write that is already there, and that its marker does not
  list, stops it, unless ``legacy`` recognises an earlier output of the verb; other files are left alone, except by
  a verb that marks the folder as its output (``alone``: a run, a sweep, a report), which refuses a folder holding
  files it does not write (round 18, G133, G157: a user's corpus was then refused as that verb's output). ``mark``
  then records the folder (or the files written) as the verb's. A folder marked by another verb is refused whole.
- **The API's writers** (``check_api_folder``: ``Tokenizer.save``, ``save_pretrained``) refuse a folder that is, or
  lies inside, any verb's output; the verbs save into new folders of their own without that check (round 18, G47).

- **Home**: a marker for a whole folder records the folder it was written in (``home``: device and inode). A copy of
  it elsewhere (a run folder copied, cloned or moved to another disk; a marker copied into a folder of the user's)
  proves nothing about its new folder, which is then judged as one without a marker (``legacy``, then file by file);
  ``mark`` records the new home once that has passed. ``train --run-dir`` on a user's folder holding a copy of a
  run's marker wrote over the user's ``config.yaml`` (issue 30 round 8, G5); a copied sweep marker let a sweep append
  rows to a user's ``results.jsonl`` (G4).

Footgun: a marker that lists files is not tied to its folder (an export's or a data folder's is copied with it and
must stay valid): its files are checked against the verb's names and digests, not its home. Lock files (``.lock``, ``.NAME.lock``) and a verb's temporary files are not part of an output.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

from .empty_paths import refuse_folder_above, refuse_up_through_nothing
from .errors import UserError, not_a_file
from .io import sha256_file
from .mounts import is_mount_point
from . import json_text

MARKER = "leviathan_output.json"
FORMAT = 1
# the verbs that write a marker (``mark``, ``write_marker``; scripts/gpu_check.py's work folder is "gpu_check"): the
# one rule of a marker's verb for its writer and its reader (issue 30 round 28, U531, U629: 'export ' and 'train\0'
# were written or read back, and no verb's ownership check matched them)
MARKER_VERBS = ("train", "sweep", "prepare", "export", "report", "report --ablation", "lm-eval", "demo", "gpu_check")
_SHOWN = 5  # files named in a refusal
_WALK_LIMIT = 100_000  # entries looked at in a folder before it counts as "too many to be an output"


@dataclass(frozen=True)
class OutputMarker:
    """A folder's marker: the verb that wrote it and every file it wrote (None: the verb owns the whole folder)."""

    verb: str
    files: tuple[str, ...] | None = None
    created: str | None = None
    sha256: dict[str, str] | None = None  # {file: digest} of an output whose files are checked when read (export)
    home: str | None = None  # "device:inode" of the folder a whole-folder marker was written in (None: not recorded)

    def owns(self, folder: str | os.PathLike) -> bool:
        """Whether the marker proves that its verb wrote all of ``folder``: a whole-folder marker written there (a
        copy elsewhere, or one written before homes were recorded, proves nothing: see the module docstring)."""
        return self.files is None and self.home is not None and self.home == folder_home(folder)


def _matches(name: str, patterns) -> bool:
    """Whether ``name`` matches one of the glob ``patterns`` (case-sensitive, as the verbs write their names)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _proof(marker: OutputMarker | None, folder: str | os.PathLike) -> OutputMarker | None:
    """``marker`` as proof about ``folder``: None for a whole-folder marker written elsewhere (copied, or with no
    home recorded), which proves nothing; the folder is then judged as one without a marker (module docstring)."""
    if marker is not None and marker.files is None and not marker.owns(folder):
        return None
    return marker


def folder_home(folder: str | os.PathLike) -> str | None:
    """``folder``'s identity, "device:inode" (None when it cannot be read): the same folder after a rename, another
    one after a copy."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


def read_marker(folder: str | os.PathLike) -> OutputMarker | None:
    """The marker of ``folder`` (None when it has none); a damaged one is a UserError naming the file and field, a
    ``folder`` that is not a path one naming the argument (pathlib's raw TypeError before, issue 30 round 25, Y364)."""
    from .value_rules import check_read_path

    check_read_path("read_marker", "folder", folder, "pass the output folder whose marker to read")
    path = Path(folder) / MARKER
    fix = (f"if it is a file of yours, move it out of the folder (leviathan keeps its output marker under that "
           f"name); if it is leviathan's marker, restore it, or delete it (rm {_quote(path)}): the folder is then "
           f"judged as one written before markers existed")
    if not os.path.isfile(path):  # os.path: Path.is_file raised ENAMETOOLONG for a 300-byte name (round 18, G241)
        # a pipe (or a folder, a link to nothing) there was read as no marker: an export's files check was skipped
        # without a word (issue 30 round 27, S576)
        if (what := not_a_file(path)) is not None:
            raise UserError(f"{str(path)!r} {what}, where leviathan keeps its output marker; {fix}")
        return None
    try:
        raw = json_text.read_file(path, object_pairs_hook=json_text.no_repeats)  # a key twice: round 29's kind
    except (OSError, ValueError) as e:
        raise UserError(f"{str(path)!r} is not readable JSON ({e}); {fix}") from None
    shown = raw.get("format") if isinstance(raw, dict) else raw
    if not isinstance(raw, dict) or type(shown) is not int or shown != FORMAT:  # true and 1.0 == 1 in Python (round
        raise UserError(f"{str(path)!r}: field 'format' is {shown!r}, "    # 8; round 29, W232)
                        f"expected {FORMAT}; {fix}")
    verb, files, created = raw.get("verb"), raw.get("files"), raw.get("created")
    if verb not in MARKER_VERBS or not isinstance(verb, str):  # True == 1: a str alone (none is a number)
        raise UserError(f"{str(path)!r}: field 'verb' is {verb!r:.60}, expected the name of a leviathan verb that "
                        f"writes markers ({', '.join(MARKER_VERBS)}); {fix}")
    if files is not None and not (isinstance(files, list) and all(_relative(f) for f in files)):
        raise UserError(f"{str(path)!r}: field 'files' is not a list of relative file names inside the folder; {fix}")
    if created is not None and not _is_time_stamp(created):  # 'yesterday' was read back (round 28, U535)
        raise UserError(f"{str(path)!r}: field 'created' is {created!r:.60}, expected a time stamp as write_marker "
                        f"writes it (ISO 8601 with its UTC offset, e.g. 2026-01-01T00:00:00+00:00); {fix}")
    digests = raw.get("sha256")
    if digests is not None and not (isinstance(digests, dict) and all(
            _relative(k) and isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v)
            for k, v in digests.items())):
        raise UserError(f"{str(path)!r}: field 'sha256' is not an object of file name -> sha256 (64 hex digits); {fix}")
    home = raw.get("home")
    if home is not None and not isinstance(home, str):
        raise UserError(f"{str(path)!r}: field 'home' is {home!r}, expected the folder's \"device:inode\"; {fix}")
    _check_as_written(path, raw, fix)
    return OutputMarker(verb, None if files is None else tuple(files), created, digests, home)


def _check_as_written(path: Path, raw: dict, fix: str) -> None:
    """UserError for a field ``write_marker`` never writes as it is here (``raw``'s other fields checked already):
    the writer's version (``leviathan``) as anything but text, the number 5 (issue 30 round 29, W230); a file listed
    twice (W233: the writer refuses one, round 28 U628); a digest of a file not listed (round 30, Y416). A marker of
    before the version field (none) reads."""
    version, files = raw.get("leviathan"), raw.get("files")
    if "leviathan" in raw and not (isinstance(version, str) and version.strip()):
        raise UserError(f"{str(path)!r}: field 'leviathan' is {version!r:.40}, expected the version of leviathan "
                        f"that wrote it (text, e.g. '0.1.0'); {fix}")
    seen: dict[str, str] = {}
    for name in files or ():
        if (earlier := seen.get(os.path.normpath(name))) is None:
            seen[os.path.normpath(name)] = name
        else:
            raise UserError(f"{str(path)!r}: field 'files' names one file twice ({earlier!r} and {name!r}), which "
                            f"write_marker never writes; {fix}")
    _check_digests_listed(path, raw, fix)


def _check_digests_listed(path: Path, raw: dict, fix: str) -> None:
    """UserError for a ``sha256`` entry of a file the marker's ``files`` do not list (or any, where it lists none: a
    whole-folder marker): ``write_marker`` records a digest for each listed file and no other, so a digest for
    extra.bin, unlisted, was read back as a valid marker without a word (issue 30 round 30, Y416), a file the
    folder's checks then held to a digest while its marker did not own it."""
    digests, files = raw.get("sha256"), raw.get("files")
    if not digests:
        return
    listed = {os.path.normpath(name) for name in files or ()}
    if files is None:
        raise UserError(f"{str(path)!r}: field 'sha256' records digests ({', '.join(map(repr, sorted(digests)[:3]))}) "
                        f"but field 'files' is null (the whole folder), which write_marker never writes; {fix}")
    if extra := sorted(name for name in digests if os.path.normpath(name) not in listed):
        raise UserError(f"{str(path)!r}: field 'sha256' records {extra[0]!r}, a file its field 'files' does not list "
                        f"(write_marker records a digest for each listed file, no other); {fix}")


def _is_time_stamp(value: object) -> bool:
    """Whether ``value`` is a time as ``write_marker`` writes it: ISO 8601 text with its UTC offset."""
    try:
        return isinstance(value, str) and datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _relative(name: object) -> bool:
    """Whether ``name`` is one a marker may list (``_name_problem``), for the reader and the writer alike."""
    return _name_problem(name) is None


def _name_problem(name: object) -> str | None:
    """Why ``name`` is not a file (or glob) name inside the folder a marker may list: one that is empty, absolute,
    goes up through '..', is the folder itself ('.', './.'), holds a NUL byte or has a part no file system takes
    (over 255 bytes, or not encodable) names no file in it. 'f\\x00' and '.' were recorded and read back (issue 30
    round 27, S287, S288)."""
    if not isinstance(name, str) or not name:
        return "is not a relative file name inside the folder"
    if os.path.isabs(name) or ".." in Path(name).parts:
        return "is not a relative file name inside the folder (absolute, or through '..')"
    if "\0" in name:
        return "holds a NUL byte, which no file name can hold"
    if os.path.normpath(name) == ".":
        return "names the folder itself, not a file in it"
    try:
        too_long = any(len(os.fsencode(part)) > 255 for part in Path(name).parts)
    except UnicodeEncodeError:
        return "is not text a file name can hold (not encodable to the file system's encoding)"
    return "has a part longer than the 255 bytes a file name may have" if too_long else None


def write_marker(folder: str | os.PathLike, verb: str, files: Iterable[str] | None = None,
                 digests: bool = False, replace: bool = False, own: Iterable[str] = ()) -> None:
    """Write ``folder``'s marker (atomically): ``verb`` wrote it, and ``files`` (None: owns the whole folder); with
    ``digests``, the sha256 of each of those files too (``check_output_files`` compares them when the folder is
    read). A ``folder`` that is not a path is a UserError naming the argument, as ``read_marker``'s (round 25, Y364);
    so is what ``read_marker`` would refuse (``_check_marker_request``). Another verb's marker there is refused unless
    the caller says the verb's output replaces it, ``replace=True``: ``write_marker(data, 'export')`` turned a data
    folder into export's output without a word, which ``export --overwrite`` may then delete (round 28, U540). A
    whole-folder marker (``files`` None) is refused over a folder holding anything but the verb's names ``own`` (glob
    patterns: ``mark``'s) and its own earlier whole-folder output (``_not_the_verbs``)."""
    from . import __version__
    from .io import atomic_write_json
    from .value_rules import api_check, check_switches, path_problem

    api_check("write_marker", "folder", path_problem(folder), "pass the output folder to mark")
    # 't/o/..' marked t, a folder of the user's files, as train's output, and train then wrote its run among them
    # (issue 30 round 29, W603, W607): a last '..' names the folder above, never a folder of the verb's own
    refuse_folder_above(folder, "write_marker: folder")
    check_switches("write_marker", replace=replace)
    files = _check_marker_request(folder, verb, files, digests)
    if files is None and (found := _not_the_verbs(folder, verb, own)) is not None:
        api_check("write_marker", "folder", f"{str(folder)!r} holds {found!r:.60}, which a whole-folder {verb!r} "
                  f"marker (files=None) would make `leviathan {verb}`'s output, for its reruns to replace",
                  "mark an empty folder, or list the files the verb wrote (files=[...])")
    # a user's own file under the marker's name is refused, not replaced (issue 30 round 27, S290)
    if (earlier := read_marker(folder)) is not None and earlier.verb != verb and not replace:
        api_check("write_marker", "folder", f"{str(folder)!r} is the output of `leviathan {earlier.verb}` (its "
                  f"{MARKER} says so), which a {verb!r} marker would replace", f"mark a folder of its own, or pass "
                  f"replace=True when the {verb} output replaces the {earlier.verb} one")
    marker = {"format": FORMAT, "verb": verb, "files": files,
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "leviathan": __version__}
    if files is None:  # whole-folder: tied to this folder (a copy elsewhere proves nothing, module docstring)
        marker["home"] = folder_home(folder)
    if digests and files is not None:
        marker["sha256"] = {name: sha256_file(Path(folder) / name) for name in files}
    atomic_write_json(Path(folder) / MARKER, marker)


def _not_the_verbs(folder: str | os.PathLike, verb: str, own: Iterable[str]) -> str | None:
    """The first entry of ``folder`` (sorted) that a whole-folder ``verb`` marker may not cover, None when there is
    none: every entry but the marker, lock files, names matching ``own`` and those the verb's own marker there lists
    (or all, where it marks the folder whole, written there). ``write_marker(a folder holding the user's mine.txt,
    'export')`` marked it as export's output without a word (issue 30 round 29, W613); the verbs mark a folder whole
    only when it is new or holds their names alone (``mark``, demo's fresh --run-dir)."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return None  # not a folder there: the marker's own write names it
    patterns = list(own)
    found = [e for e in entries if e != MARKER and not _is_lock(e, os.path.join(folder, e)) and not
             _matches(e, patterns)]
    marker = read_marker(folder) if found else None
    if marker is not None and marker.verb == verb:  # its own earlier output: marked whole here, or what it lists
        if marker.owns(folder):
            return None
        listed = list(marker.files or ())
        found = [e for e in found if not _matches(e, listed) and e not in {Path(n).parts[0] for n in listed}]
    return found[0] if found else None


def _check_marker_request(folder: str | os.PathLike, verb: object, files: object, digests: object) -> list | None:
    """``files`` sorted (None stays None), once ``write_marker``'s arguments hold what ``read_marker`` takes back: a
    verb's name, file names relative to the folder (none empty, absolute or through '..'), each named once, and with
    ``digests`` each a file there. A marker listing '../user.txt' was written without a word and then refused by its
    reader, and every verb, as damaged (issue 30 round 26, Q388, Q413); a text as ``files`` was listed letter by
    letter. A UserError naming the argument; nothing is written."""
    from .value_rules import api_check, check_switches

    check_switches("write_marker", digests=digests)
    if verb not in MARKER_VERBS or not isinstance(verb, str):
        api_check("write_marker", "verb", f"expected the name of a leviathan verb that writes markers, got "
                  f"{verb!r:.40}", f"pass one of {', '.join(MARKER_VERBS)}")
    if files is None:
        return None
    fix = "pass the names of the files written, relative to the folder (or None for the whole folder)"
    if isinstance(files, (str, bytes, os.PathLike)) or not hasattr(files, "__iter__"):
        api_check("write_marker", "files", f"expected a list of file names, got {files!r:.40}", fix)
    names = list(files)
    seen: dict[str, str] = {}
    for name in names:
        if (problem := _name_problem(name)) is not None:
            api_check("write_marker", "files", f"{name!r:.60} {problem} (read_marker refuses a marker listing it as "
                      f"damaged)", fix)
        if os.path.normpath(name) in seen:
            api_check("write_marker", "files", f"names one file twice ({seen[os.path.normpath(name)]!r} and "
                      f"{name!r})", fix)
        seen[os.path.normpath(name)] = name
        if digests and not os.path.isfile(Path(folder) / name):
            api_check("write_marker", "files", f"{name!r} is not a file in {str(folder)!r}, so it has no sha256 to "
                      f"record", "write the files first, then their marker")
    return sorted(names)


def export_again(folder: str | os.PathLike) -> str:
    """How to make an export whose files changed (edited, swapped, missing) again, as the fix of a line that finds
    it. ``export --overwrite`` replaces only an export whose files are exactly the ones it wrote (``check_replaceable``),
    so the line offered "leviathan export RUN DIR --overwrite", which export then refused (issue 30 round 17, E325,
    E326): the edited export is deleted by hand first."""
    return f"delete the edited export and export the checkpoint again (rm -r {_quote(folder)}; leviathan export RUN " \
           f"{_quote(folder)})"


def check_output_files(folder: str | os.PathLike, fix: str, names: Iterable[str] | None = None) -> None:
    """UserError unless every file ``folder``'s marker fingerprints is there and is the file the verb wrote (a folder
    whose marker records no digests, or that has no marker, is not checked). Companion files swapped between exports
    (a tokenizer.json of another preparation, weights of another run) were loaded as they were (issue 30 round 5). A
    mismatch names the marker's record as a possible cause too (round 21, N226's kind)."""
    marker = read_marker(folder)
    if marker is not None:
        _check_digests_recorded(marker, folder, fix, names)
    if marker is None or not marker.sha256:
        return
    for name, digest in marker.sha256.items():
        if names is not None and name not in names:  # only the files a reader uses (the tokenizer's, round 15)
            continue
        path = Path(folder) / name
        if not path.is_file():  # a pipe or a folder there was "is missing" (issue 30 round 23, U388, U398, U409)
            what = not_a_file(path) or "is missing"
            raise UserError(f"{str(path)!r} {what}, but {MARKER} records it: the folder is incomplete; {fix}")
        found = sha256_file(path)
        if found != digest:
            raise UserError(f"{str(path)!r} is not the file `leviathan {marker.verb}` wrote there (sha256 "
                            f"{found[:12]}..., {MARKER} records {digest[:12]}...): the file was replaced (by one from "
                            f"elsewhere) or damaged, or {MARKER}'s record of it was edited; {fix}")


# the verbs whose marker records the sha256 of every file it lists (write_marker(..., digests=True))
DIGEST_VERBS = ("export",)


def _check_digests_recorded(marker: OutputMarker, folder: str | os.PathLike, fix: str,
                            names: Iterable[str] | None) -> None:
    """UserError when the marker of a verb that fingerprints its files (``DIGEST_VERBS``) lists a file it records no
    sha256 of: an export with another export's model.safetensors and that one digest taken out of the marker (the
    rest kept) was loaded as a pre-digest export, no word (issue 30 round 21, P318); the swap alone was refused."""
    if marker.verb not in DIGEST_VERBS or marker.files is None:
        return
    wanted = None if names is None else set(names)
    recorded = marker.sha256 or {}
    lacking = sorted(n for n in marker.files if n not in recorded and (wanted is None or n in wanted)
                     and not any(c in n for c in "*?["))
    if lacking:
        raise UserError(f"{str(Path(folder) / MARKER)!r} lists {', '.join(lacking[:3])}"
                        f"{', ...' if len(lacking) > 3 else ''} but records no sha256 of it, though `leviathan "
                        f"{marker.verb}` records one of every file it writes: the marker was edited, so the file "
                        f"cannot be told from one of another run; {fix}")


def edited_since_written(folder: str | os.PathLike) -> list[str]:
    """The files of ``folder`` whose sha256 its marker records, that are there and are not those files any more:
    changed since the verb wrote them (a user's edits). A verb that rewrites its own output in place refuses them
    rather than replace the edits (``export``'s rule through ``check_replaceable``, round 28 U249; ``report``'s since
    round 29, W651). [] for a folder with no marker or no digests."""
    marker = read_marker(folder)
    if marker is None or not marker.sha256:
        return []
    return sorted(name for name, digest in marker.sha256.items()
                  if os.path.isfile(Path(folder) / name) and sha256_file(Path(folder) / name) != digest)


def refuse_edited(folder: str | os.PathLike, verb: str) -> None:
    """UserError when a file of ``verb``'s earlier output in ``folder`` was changed since it was written
    (``edited_since_written``), before ``verb`` rewrites the folder in place."""
    edited = edited_since_written(folder)
    if edited:
        raise UserError(f"{str(folder)!r} holds {', '.join(edited[:3])}{', ...' if len(edited) > 3 else ''} changed "
                        f"since `leviathan {verb}` wrote it (its sha256 is not the one its {MARKER} records): "
                        f"rewriting the folder would replace those edits; nothing was written; move the edited file "
                        f"out of the folder (or copy the edits elsewhere) and run again, or choose another --out")


def record_digests(folder: str | os.PathLike, verb: str, names: Iterable[str]) -> None:
    """Rewrite ``verb``'s marker of ``folder`` with the sha256 of each of its files that is there, so that a rerun can
    tell a file the user edited since (``edited_since_written``). Its files: those the marker lists, or for a marker
    of the whole folder those matching ``names`` (glob patterns; the folder becomes a listed one, as
    ``staged._record_written`` makes it). A marker of another verb is left as it is."""
    marker = read_marker(folder)
    if marker is None or marker.verb != verb:
        return
    files = marker.files if marker.files is not None else [f for f in listed_files(folder) if _matches(f, names)]
    write_marker(folder, verb, [f for f in files if os.path.isfile(Path(folder) / f)], digests=True)


def mark(folder: str | os.PathLike, verb: str, names: Iterable[str]) -> None:
    """Record in ``folder``'s marker that ``verb`` writes ``names`` there (glob patterns allowed): the whole folder
    when it holds nothing else (a folder the verb created), else just those names, added to what an earlier marker of
    the verb lists. A folder marked whole, or by another verb, is left as it is (``check_claim`` refused the latter)."""
    found = read_marker(folder)
    marker = _proof(found, folder)  # a copied one: check_claim judged the folder without it
    if marker is not None and (marker.verb != verb or marker.files is None):
        return
    copied = found is not None and marker is None  # proves nothing here: replaced (write_marker's replace)
    patterns = list(names)
    entries = [e for e in os.listdir(folder) if e != MARKER and not _is_lock(e, os.path.join(folder, e))]
    ours = {e for e in entries if _matches(e, patterns)}
    if marker is None and ours == set(entries):
        write_marker(folder, verb, replace=copied, own=patterns)
        return
    literal = {p for p in patterns if not any(c in p for c in "*?[")}
    files = set(marker.files if marker is not None else ()) | ours | literal
    if marker is not None and files == set(marker.files):
        return  # unchanged: rewriting would only move its time stamp (a diff in every committed results folder)
    write_marker(folder, verb, files, replace=copied)


def listed_files(folder: str | os.PathLike, limit: int = _WALK_LIMIT) -> list[str]:
    """Every file under ``folder`` (relative paths, sorted) but the marker and lock files; at most ``limit``."""
    root = Path(folder)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel == MARKER or _is_lock(name, os.path.join(dirpath, name)):
                continue
            out.append(rel)
            if len(out) >= limit:
                return out
    return out


def _folders_and_links(folder: Path, limit: int = _WALK_LIMIT) -> list[str]:
    """What ``listed_files`` does not see under ``folder``: empty folders (``NAME/``) and links to folders
    (``NAME ->``), which the outputs that list their files never hold. ``--overwrite`` deleted a user's empty folder
    tree, or a link they had put in an earlier export, without a word (issue 30 round 7; a link's target was kept)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = os.path.relpath(dirpath, folder)
        if rel != "." and not dirnames and not filenames:
            out.append(rel + "/")
        out += [os.path.relpath(os.path.join(dirpath, d), folder) + " ->" for d in sorted(dirnames)
                if os.path.islink(os.path.join(dirpath, d))]
        if len(out) >= limit:
            break
    return sorted(out)


def _is_lock(name: str, path: str | os.PathLike | None = None) -> bool:
    """Whether ``name`` is a lock file's name (``.lock``, ``.NAME.lock``) and, given its ``path``, the file holds what
    a lock holds (``locking.is_lock_record``): a user's ``.notes.lock`` is a file of the folder like any other."""
    if not (name == ".lock" or (name.startswith(".") and name.endswith(".lock"))):
        return False
    if path is None:
        return True
    from .locking import is_lock_record

    return is_lock_record(path)


def _quote(path: str | os.PathLike) -> str:
    return shlex.quote(str(path))


def _some(names: list[str], total: int | None = None) -> str:
    total = len(names) if total is None else total
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {total - _SHOWN} more" if total > _SHOWN else "")


# ---- replacing a folder --------------------------------------------------------------------------
def check_replaceable(folder: str | os.PathLike, verb: str, flag: str,
                      legacy: Callable[[Path, list[str]], bool] | None = None, own: Iterable[str] = ("*",),
                      digested: bool = False) -> None:
    """UserError unless ``folder`` may be deleted and replaced by ``verb`` (see the module docstring).

    ``flag`` is the option that asked for it (``--overwrite``); ``legacy(folder, files)`` may recognise an output the
    verb wrote before markers existed (it sees the folder's files); ``own``: glob patterns of every path the verb ever
    writes there (``*`` spans folders), so a marker edited to list a user's file (or to claim the whole folder) does not
    make it the verb's, and a file whose sha256 the marker records is replaced only while it is that file.
    ``digested``: the verb's marker always records every file's sha256 (an export's), so one that records none was
    written by hand: a forged export marker listing a user's notes.txt had it deleted (issue 30 round 14, A223)."""
    from .value_rules import check_switches

    check_switches("check_replaceable", digested=digested)  # 'no' was true (round 30, Y621's kind)
    folder = Path(folder)
    if not folder.exists():
        return
    if not folder.is_dir():
        from .errors import not_a_folder_there  # a pipe named as what it is (issue 30 round 30, X25)

        raise UserError(f"{str(folder)!r} {not_a_folder_there(folder)}; {flag} replaces only a folder that an earlier "
                        f"`leviathan {verb}` wrote; choose another output folder")
    files = listed_files(folder)
    marker = read_marker(folder)
    reason = None
    if marker is None:
        if legacy is None or len(files) >= _WALK_LIMIT or not legacy(folder, files):
            reason = f"it has no {MARKER} (the marker `leviathan {verb}` writes into its output), so it is not " \
                     f"provably {verb}'s output"
    elif marker.verb != verb:
        reason = f"its {MARKER} says `leviathan {marker.verb}` wrote it, not `leviathan {verb}`"
    elif marker.files is not None:
        added = sorted(set(files) - set(marker.files)) + _folders_and_links(folder)
        if added:
            reason = f"it holds files the earlier `leviathan {verb}` did not write ({_some(added)})"
    if reason is None and marker is not None and digested and marker.sha256 is None:
        reason = (f"its {MARKER} records no sha256 of its files, which every `leviathan {verb}` records (the marker "
                  f"was written or edited by hand)")
    if reason is None and marker is not None:
        reason = _not_own(folder, verb, files, marker, tuple(own))
    if reason is not None:
        what = f"{len(files):,}{'+' if len(files) >= _WALK_LIMIT else ''} file(s)" + (f": {_some(files)}" if files
                                                                                         else "")
        raise UserError(f"{flag} would delete {str(folder)!r} ({what}), but {reason}; {flag} replaces only a folder "
                        f"that an earlier `leviathan {verb}` wrote, holding just what it wrote; choose another output "
                        f"folder, or, to replace this one, delete it by hand first: rm -r {_quote(folder)}")
    check_unlocked(folder, f"{flag} would delete")


def _not_own(folder: Path, verb: str, files: list[str], marker: OutputMarker, own: tuple[str, ...]) -> str | None:
    """Why ``folder``'s files are not all ``verb``'s own although its marker lists them (None when they are): a file
    the verb never writes, or one changed since it was written (its sha256 is not the one the marker records). A user's
    notes.txt added to an export's or a data folder's marker list was deleted by --overwrite, exit 0 (issue 30 round
    8, A4/A5)."""
    foreign = [f for f in files if not _matches(f, own)]
    if foreign:
        return (f"it holds files `leviathan {verb}` never writes ({_some(foreign)}), though its {MARKER} lists them "
                f"(the marker was edited, or copied into a folder of yours)")
    if marker.sha256 is not None:
        changed = [f for f in files if marker.sha256.get(f) != sha256_file(Path(folder) / f)]
        if changed:
            return (f"it holds files changed since `leviathan {verb}` wrote them, or that it did not write "
                    f"({_some(changed)}: their sha256 is not the one its {MARKER} records)")
    return None


def leftover_is_own(folder: str | os.PathLike, own: Iterable[str]) -> bool:
    """Whether every file under ``folder`` (a temporary folder a crashed writer left, ``.tmp-*``) matches one of the
    ``own`` glob patterns of what that writer puts there: only then may it be deleted as the writer's leftover. A
    user's folder that happened to bear such a name (``.data.tmp-99999-x``, ``checkpoints/.tmp-step-00000006``) was
    deleted with what it held (issue 30 round 8, A17/A18)."""
    patterns = tuple(own)
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), folder)
            if not _matches(rel, patterns):
                return False
    return not os.path.islink(folder)


def check_unlocked(folder: Path, doing: str) -> None:
    """UserError when a live process holds a lock inside ``folder`` (a run, a sweep; a training run's claim on its data
    folder, ``locking.reading``) or its lock beside it."""
    from .locking import held_by_another, is_reader_lock, lock_path

    candidates = [lock_path(Path(os.path.abspath(folder)), beside=True)]
    for dirpath, _, filenames in os.walk(folder):
        candidates += [Path(dirpath) / name for name in filenames if _is_lock(name)]
    for path in candidates:
        held = held_by_another(path)
        if held is not None:
            pid, command = held
            who = f"process {pid}" + (f" ({command})" if command else "") if pid is not None else "another process"
            use = "is reading it" if is_reader_lock(path.name) else "is writing there"  # locking.reading: a run's data
            fix = "wait for it to finish or stop it"
            if pid == os.getpid():  # a TokenDataset / BatchLoader of this very process (round 27, S521)
                who, fix = "this process", "drop the BatchLoader or TokenDataset reading it first (del it)"
            raise UserError(f"{doing} {str(folder)!r}, but {who} {use} (it holds {str(path)!r}); nothing "
                            f"was deleted; {fix}, or choose another output folder")


# ---- writing into a folder -----------------------------------------------------------------------
def check_claim(folder: str | os.PathLike, verb: str, names: Iterable[str], fix: str,
                legacy: Callable[[Path], bool] | None = None, who: str | None = None, alone: bool = False) -> None:
    """UserError when ``verb`` would write over something in ``folder`` it did not create (see the module docstring).

    ``names`` are the files and folders the verb writes there (glob patterns allowed: ``*.png``); ``fix`` is the
    way out (``choose another --run-dir``); ``who``: how a refusal names the writer (default ``leviathan VERB``; an
    API call such as ``Tokenizer.save``, round 17). ``alone``: the verb marks the folder as its output (a run, a
    sweep, a report), so a folder it has not claimed before must hold nothing but what it writes (``_check_alone``)."""
    from .value_rules import check_switches

    check_switches("check_claim", alone=alone)  # 'no' was true (round 30, Y621's kind)
    who = who or f"`leviathan {verb}`"
    folder = Path(folder)
    if not os.path.isdir(folder):  # Path.is_dir raises on a 300-byte name (Python 3.11): the write reports it
        return
    marker = read_marker(folder)
    if marker is not None and marker.verb != verb:
        # "not of {who}": a script's refusal named a verb `leviathan gpu_check` that does not exist (round 25, X13)
        raise UserError(f"{str(folder)!r} is the output of `leviathan {marker.verb}` (its {MARKER} says so), not "
                        f"of {who}, which would write its own files there; {fix}")
    copied = marker is not None and _proof(marker, folder) is None  # a whole-folder marker written elsewhere
    marker = _proof(marker, folder)
    if marker is not None and marker.files is None:
        return  # the whole folder is the verb's
    if marker is None and legacy is not None and legacy(folder):
        return
    patterns = list(names)
    try:
        entries = sorted(p.name for p in folder.iterdir())
    except OSError:
        return  # unreadable: the write itself reports it
    own = set(marker.files) if marker is not None and marker.files is not None else set()
    clashes = [name for name in entries
               if name not in own and _matches(name, patterns)]
    if clashes:
        # round 15 (A138): named a marker the folder did not have; round 16 (C255): called a copied one missing
        why = (f"the folder's {MARKER} does not list it" if marker is not None else
               f"its {MARKER} was written in another folder, so it proves nothing here (a copy, or a move to "
               f"another disk)" if copied else f"the folder has no {MARKER}: no leviathan verb made it")
        raise UserError(f"{who} would write over {_some(clashes)} in {str(folder)!r}, which it did not "
                        f"create ({why}); move it out of the folder, or {fix}")
    if alone and marker is None:
        _check_alone(folder, [name for name in entries if not _collected_entry(folder, name, verb)], patterns, who,
                     fix)


def _check_alone(folder: Path, entries: list[str], patterns: list[str], who: str, fix: str) -> None:
    """UserError when ``folder`` (not yet the verb's: no marker of its own) holds files the verb does not write. A
    report, a run or a sweep written into a user's corpus folder of .txt files claimed it with its marker, and the next
    ``leviathan prepare`` refused the corpus as that verb's output (issue 30 round 18, G133, G134, G157, G291)."""
    foreign = [name for name in entries
               if name != MARKER and not _is_lock(name, folder / name) and not _matches(name, patterns)]
    if foreign:
        raise UserError(f"{who} would write its output among files it did not write in {str(folder)!r} "
                        f"({_some(foreign)}) and mark the folder as its own, after which other verbs take those files "
                        f"for its output (a corpus is then refused); {fix}: a new or empty folder")


# What scripts/collect_results.py writes into a grid's results folder (it writes no marker): the rows, grid.json (with
# the unigram_entropy only it adds, ``file_kinds.is_collected``) and the embeddings records copied beside them
COLLECTED_FILES = ("results.jsonl", "grid.json", "embeddings")


def _collected_entry(folder: Path, name: str, verb: str) -> bool:
    """Whether ``name`` in ``folder`` is part of a results folder collect_results wrote, beside which ``verb`` (one of
    ``COLLECTED_HOLDS``: a report, an ablation report) may write its output: the collected files of ``folder`` when it
    is one, or a grid's collected folder inside it (``results/o200k/o200k-lr``; an ablation's ``results/ablations/
    ablate-bpe8k``). README's ``leviathan report results/cpu-bpe32k --out results/cpu-bpe32k`` on a fresh collect was
    refused as "among files it did not write (grid.json, results.jsonl)" (issue 30 round 21, N345, N346). A user's own
    file there is still foreign."""
    from .file_kinds import is_collected

    if verb not in COLLECTED_HOLDS:
        return False
    if name in COLLECTED_FILES and is_collected(folder):
        return True
    return os.path.isdir(folder / name) and not os.path.islink(folder / name) and is_collected(folder / name)


def check_api_folder(folder: str | os.PathLike, who: str, names: Iterable[str],
                     legacy: Callable[[Path], bool] | None = None) -> None:
    """UserError when an API writer (``Tokenizer.save``, ``save_pretrained``) would write into ``folder`` that is, or
    lies inside, a verb's output (a marker in it or in a folder above it), or over a file of ``names`` there it did
    not write (``check_claim``; ``legacy`` recognises its own earlier save). ``Tokenizer.save`` into a run's step
    folder replaced the checkpoint's tokenizer.json, and an adopted model's ``save_pretrained`` its weights, which
    eval then refused; into a run's checkpoints/ or tensorboard/, inside an export, a data folder or a sweep their
    files were mixed into that output, no word (issue 30 round 18, G47, G54-G59, G244-G249). The verbs themselves
    save into a new folder of their own (a step's, an export's temporary one) without this check. A folder whose
    name is not UTF-8 is refused as the verbs refuse it (``locking.check_utf8_name``; round 18, G426). A folder
    typed with a last '..' names the folder above, where the files went among the user's own without a word
    (``write_hf_tokenizer('t/k/..')``, issue 30 round 29, W576): refused for every API writer here
    (``empty_paths.refuse_folder_above``, as ``save_pretrained`` and the exports refuse it since round 28)."""
    from .locking import check_utf8_name

    check_path_given(folder, who)
    refuse_folder_above(folder, who)
    check_utf8_name(folder, f"save ({who})")
    real = Path(os.path.realpath(folder))
    for parent in (real, *real.parents):
        if not os.path.isfile(parent / MARKER):  # a 300-byte name: False
            continue
        try:
            marker = read_marker(parent)
        except UserError:
            if parent == real:
                raise
            continue  # a damaged marker of a folder above is that folder's business
        where = "" if parent == real else f"lies inside {str(parent)!r}, which "
        raise UserError(f"{str(folder)!r} {where}is the output of `leviathan {marker.verb}` (its {MARKER} says so): "
                        f"{who} would write its files among that output's; save into a folder of its own")
    check_claim(folder, who, names, "save into a folder of its own", legacy=legacy, who=who)


def check_not_special(path: str | os.PathLike, flag: str) -> None:
    """UserError when the output file ``path`` exists and is not a regular file (a device, a pipe, a socket): the
    checks that a file there is the verb's own read it whole, and ``--json /dev/full`` read an endless device until
    memory ran out (a MemoryError traceback, issue 30 round 6); a pipe would block."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        raise UserError(f"{flag} {str(path)!r} is not a regular file (a device, a pipe or a socket); the verb writes "
                        f"its result as a file; name a file path")


# ---- inputs and outputs --------------------------------------------------------------------------
def check_path_given(path, name: str, place: str = "the folder to write") -> None:
    """UserError naming ``name`` when an API writer's place ``path`` is not a path (``value_rules.path_problem``):
    ``to_hf(m, None)`` was os.fspath's "expected str, bytes or os.PathLike object, not NoneType", naming no argument
    (issue 30 round 19, J244); a NUL byte in it was os.stat's raw "embedded null byte" (round 27, S95). ``place``:
    what the path names, for the fix."""
    from .value_rules import path_problem

    if (problem := path_problem(path)) is not None:
        raise UserError(f"{name}: {problem}; pass the path of {place}")


def replaced_folder(folder: str | os.PathLike, flag: str) -> Path:
    """``folder`` as an absolute path, for a verb that builds its output beside it and renames it into place
    (prepare, export, demo): its name and its parent are those of the folder itself, also when it was given as
    ``.``, ``..`` or ``dir/.`` (whose name is empty, which ended in a traceback after the work was done, issue 30
    round 5). UserError when it is the current folder or holds it: the rename would leave the shell in a deleted
    folder; and when it is a mount point (a bind mount, a volume), which cannot be renamed: the rename failed with
    EBUSY after the work, leaving a ``.NAME.old-*`` folder (issue 30 round 6), and demo's delete would empty it."""
    check_path_given(folder, flag)
    given = os.fspath(folder)
    out = Path(os.path.abspath(os.path.expanduser(given)))
    real, cwd = Path(os.path.realpath(out)), Path(os.path.realpath(os.getcwd()))
    if out.parent == out or cwd == real or cwd.is_relative_to(real):
        raise UserError(f"{flag} {given!r} is the current folder or holds it ({cwd}): the output is built beside "
                        f"that folder and renamed into its place, which would leave this shell in a deleted folder; "
                        f"run the command from outside it (cd {out.parent}) and give the folder by name "
                        f"({flag} {out.name or out})")
    check_not_dangling(out, given, flag, "folder")  # renaming a folder over a link fails (ENOTDIR) after the work
    # (issue 30 round 7: "a file is in the way", "another process may be writing there")
    check_not_a_link(out, given, flag)
    if is_mount_point(out):
        raise UserError(f"{flag} {given!r} is a mount point: the output is built beside it and renamed into its "
                        f"place, and a mount point cannot be renamed; give a new folder inside it "
                        f"({flag} {_quote(out / 'NAME')}), or unmount it")
    return out


def check_not_a_link(out: Path, given: str, flag: str) -> None:
    """UserError when the output folder ``out`` (given as ``given``) is itself a symbolic link (one that names
    nothing is ``check_not_dangling``'s). The output is built beside it and renamed into its place, so the link was
    replaced by a new folder and the folder it names, the earlier output the user meant to replace, was left as it was,
    without a word (issue 30 round 29, W153, W646, W647: bake_adopted, prepare, to_plain_llama with overwrite=True).
    One rule for every writer that replaces its folder (prepare, export and its API, demo): refuse, naming the link
    and the folder it names, which is the path to give. A link among the folders above ``out`` is followed as the
    system follows it (``out``'s own name is not a link there)."""
    if not os.path.islink(out):
        return
    target = os.path.realpath(out)
    raise UserError(f"{flag} {given!r} is a symbolic link to {target!r}: the output is built beside the link and "
                    f"renamed into its place, which would replace the link by a new folder and leave the folder it "
                    f"names as it was; give that folder itself ({flag} {_quote(target)}), or remove the link "
                    f"(rm {_quote(out)}) to write a new folder in its place")


def check_not_dangling(path: str | os.PathLike, given: str, flag: str, what: str) -> None:
    """UserError when the output ``path`` (given as ``given``) is a symbolic link to nothing: remove the link, or give
    the path it names. That path is offered only where a new output may go: the line offered one inside a run's
    checkpoints/ or a data folder, which the next run then refused (issue 30 round 20, K183); `analyze embeddings
    --out` said such a link "exists and is not an embeddings record ... move the file away" (K185)."""
    if not (os.path.islink(path) and not os.path.exists(path)):
        return
    target = os.readlink(path)
    named = os.path.join(os.path.dirname(os.path.abspath(path)), target)
    try:
        check_not_inside(named, flag, ("train", "prepare", "export"), within=CONTAINERS)
        other = f", or give the path it names ({flag} {_quote(named)})"
    except UserError:  # the path it names lies in another verb's output, where a new one is refused
        other = f", or give another {flag} (the path it names lies inside another verb's output)"
    raise UserError(f"{flag} {given!r} is a symbolic link to {target!r}, which does not exist; remove the link "
                    f"(rm {_quote(os.path.abspath(path))}) and run again to write the {what} in its place{other}")


def check_apart(source: str | os.PathLike, source_what: str, out: str | os.PathLike, out_what: str, *,
                inside_ok: bool = False) -> None:
    """UserError when the output folder ``out`` is the input ``source``, holds it, or (unless ``inside_ok``: an
    export kept in its run folder) lies inside it: writing or replacing one would change the other."""
    from .value_rules import check_switches

    check_switches("check_apart", inside_ok=inside_ok)  # 'no' was true (round 30, Y621's kind)
    check_path_given(out, out_what, "the output to write")  # a NUL: realpath's raw ValueError (round 27, S554)
    check_path_given(source, source_what, "the input to read")  # a grid's data.dir "d1\0" (round 29, V1)
    a, b = Path(os.path.realpath(source)), Path(os.path.realpath(out))
    if a == b:
        relation = "is the same folder as"
    elif b.is_relative_to(a) and not inside_ok:
        relation = "lies inside"
    elif a.is_relative_to(b):
        relation = "holds"
    else:
        return
    raise UserError(f"{out_what} {str(out)!r} {relation} {source_what} {str(source)!r}: an output folder must be "
                    f"apart from its input; choose another {out_what}")


def check_not_inside(folder: str | os.PathLike, what: str, verbs: Iterable[str],
                     within: dict[str, tuple[str, ...]] | None = None, verb: str | None = None) -> None:
    """UserError when the output folder ``folder`` lies inside a folder that one of ``verbs`` wrote (its marker says
    so): ``train --run-dir RUN/checkpoints`` made a second run inside the first one's checkpoints folder, exit 0 (issue
    30 round 8, G14). Containers (a sweep's runs, a demo's variants) are not in ``verbs``: ``within`` names, per verb,
    the one subfolder of its output where the folder (or a new folder directly in it) is refused (``{"sweep":
    "runs"}``: a second sweep's results.jsonl, grid.json and runs were written among the first one's run folders,
    exit 0; round 8, G15; an export, a data folder, a demo, lm-eval's results likewise, round 9); the rest of the
    container stays open (a plan's stages and shards are sweeps inside its folder), and what lies inside one of its
    runs is judged by that run's marker (a folder there without one is no run: what lies in it is refused too).
    ``folder`` may be an output file too (a record, a JSON result).

    ``verb``: the verb writing ``folder``; given, a folder of another output that holds only its own kind
    (``HOLDS``: a sweep's folder holds sweeps, reports and its runs; a report's holds nothing else) refuses it too
    (``_foreign``): prepare's data folder, lm-eval's results and bench's JSON were written among a sweep's or a
    report's files, exit 0, while report and train refused theirs there (issue 30 round 16, C203, C204, C251)."""
    check_path_given(folder, what, "the output to write")  # a NUL: realpath's raw ValueError (round 27, S95's kind)
    refuse_up_through_nothing(folder, what)  # 'tr/x/..' with no tr/x: made x on the way (round 28, T2)
    verbs, within = set(verbs), within or {}
    real = Path(os.path.realpath(folder))
    nearest = True  # the nearest output above judges a foreign verb (a stage's run lies in the plan's folder)
    for parent in real.parents:
        _check_not_in_collected(folder, what, parent, verb)
        if not (parent / MARKER).is_file():
            continue
        try:
            marker = read_marker(parent)
        except UserError:
            continue  # a damaged marker of a folder above is that folder's business
        parts = real.relative_to(parent).parts  # the container itself or a new folder in it; deeper is a run's
        foreign, nearest = (nearest and marker is not None and _foreign(marker.verb, parts, verb)
                            and not _records_of_collected(parent, parts, verb)), False
        inner = marker is not None and parts[0] in within.get(marker.verb, ()) and (len(parts) <= 2 or not any(
            (parent / parts[0] / parts[1] / name).exists() for name in (MARKER, "checkpoints")))  # deeper through a
        # folder that is no run (a run written before markers has its checkpoints/): a file in a new folder there
        # (append_result 'S/runs/x/results.jsonl', report --out S/runs/y/z) was written among the runs, exit 0,
        # while S/runs/x itself was refused (issue 30 round 23, U283, U290)
        # a run's checkpoints/ holds its step folders only, whoever writes: an export there named like a step was
        # taken for a damaged newest checkpoint (issue 30 round 12, T81b, T82, T86)
        steps = marker is not None and marker.verb == "train" and parts[0] == "checkpoints"
        if steps and (marker.verb not in verbs or len(parts) > 1):  # RUN/checkpoints itself: the line below
            raise UserError(f"{what} {str(folder)!r} lies inside {str(parent / 'checkpoints')!r}, which holds the "
                            f"run's step folders only (a new folder there reads as a damaged checkpoint); choose "
                            f"another {what} outside it")
        sealed = marker is not None and marker.verb in SEALED and not (len(parts) == 1 and parts[0] in
                                                                       SEALED[marker.verb]())
        if marker is not None and (marker.verb in verbs or inner or steps or sealed or foreign):
            raise UserError(f"{what} {str(folder)!r} lies inside {str(parent)!r}, the output of `leviathan "
                            f"{marker.verb}` (its {MARKER} says so): a new output there would be mixed into it; "
                            f"choose another {what} outside it")


def _check_not_in_collected(folder, what: str, parent: Path, verb: str | None) -> None:
    """UserError when ``parent`` (a folder above the output ``folder``) is a results folder collect_results wrote and
    ``verb`` is not one of what such a folder holds (``COLLECTED_HOLDS``): collect writes no marker, so an export or a
    run there was accepted, exit 0, where every verb's output refuses them (issue 30 round 20, K148)."""
    from .file_kinds import COLLECTED, is_collected

    if verb not in COLLECTED_HOLDS and (parent / "grid.json").is_file() and is_collected(parent):
        raise UserError(f"{what} {str(folder)!r} lies inside {str(parent)!r}, {COLLECTED}: a new output there would "
                        f"be mixed into its collected rows; choose another {what} outside it")


def _records_of_collected(parent: Path, parts: tuple[str, ...], verb: str | None) -> bool:
    """Whether ``verb``'s output at ``parts`` is an embeddings record (``embeddings/<run>.json``) of ``parent``, a
    results folder collect_results wrote, marked by the report written beside its rows: README's layout
    (RESULTS/embeddings/<run>.json beside RESULTS/report.md). ``analyze embeddings --sweep S --dest RESULTS`` was
    refused there as "inside the output of `leviathan report`" once the report was written (issue 30 round 21,
    N345's kind)."""
    from .file_kinds import is_collected

    return (verb == "analyze" and len(parts) <= 2 and parts[0] == COLLECTED_FILES[2]
            and (parent / "grid.json").is_file() and is_collected(parent))


def _foreign(container: str, parts: tuple[str, ...], verb: str | None) -> bool:
    """Whether ``verb``'s output at ``parts`` (relative to a folder ``container`` wrote) would be mixed into that
    folder: ``container`` is one of ``HOLDS``, ``verb`` is not among what it holds, and ``parts`` does not lie in one
    of its ``CONTAINERS`` subfolders (a sweep's runs/: what lies there is judged by the run's own marker)."""
    if verb is None or container not in HOLDS or verb in HOLDS[container]:
        return False
    if verb == container and parts in OWN.get(container, ()):
        return False  # the verb's own output written by another verb's writer (lm-eval's OUT/hf, an export)
    return parts[0] not in CONTAINERS.get(container, ())


def _demo_arms() -> tuple[str, ...]:
    from .model.embedding_kinds import EMBEDDING_KINDS

    return EMBEDDING_KINDS


# verb -> the entries of its output another verb may name, the folder itself only: a demo's arms are train run folders
# a user may resume (`train --run-dir DEMO/leviathan --resume auto`); anything else written into a demo's folder (a
# sweep, a data folder, an export, a run, even inside an arm) was mixed into it and made the demo's rerun refuse its
# own folder (issue 30 round 14, A127, A184, A187-A189)
SEALED = {"demo": _demo_arms}


# verb -> the subfolders of its output that hold what it makes itself: a sweep's run folders, and the embeddings
# records `analyze embeddings --sweep` writes beside its rows (a report written into SWEEP/embeddings mixed its
# report.md, figures and analysis.json among the records, exit 0: issue 30 round 10, P87)
CONTAINERS = {"sweep": ("runs", "embeddings")}
# verb -> the verbs whose output may lie inside its output folder (``check_not_inside(..., verb=...)``): a sweep's
# folder holds its stages and shards (sweeps), its reports and analyses; a report's folder holds nothing else. A data
# folder, an export, a run, a demo, lm-eval's results or a benchmark's JSON there were mixed into it (round 16).
# lm-eval's folder holds its own kept export (OUT/hf) only: a report, a data folder, a run, a sweep or an export of
# `leviathan export` were written there, exit 0, and the export at OUT/hf was then deleted by the next `lm-eval
# --keep-export` (issue 30 round 17, D137-D141, D148)
HOLDS = {"sweep": ("sweep", "report", "report --ablation", "analyze"), "report": (), "lm-eval": ()}
# verb -> the paths in its output (as parts) it writes through another verb's writer, under its own name (``verb=``)
OWN = {"lm-eval": (("hf",),)}
# the verbs whose output may lie inside a results folder scripts/collect_results.py wrote: the grids it collects
# there (results/o200k/o200k-lr), and the reports and analyses of its rows
COLLECTED_HOLDS = ("collect_results", "report", "report --ablation", "analyze")
RUN_CONTAINERS = {"sweep": ("runs",)}  # for a record's own file (`analyze embeddings RUN --out SWEEP/embeddings/...`)


def check_not_container(folder: str | os.PathLike, what: str) -> None:
    """UserError when ``folder`` is the folder of another output that holds its runs (``SWEEP/runs``): ``train
    --run-dir SWEEP/runs`` wrote a run's config.yaml, metrics and checkpoints among the sweep's run folders, exit 0
    (issue 30 round 9, N18). A run inside it (``SWEEP/runs/NAME``) is how the sweep trains, and stays allowed."""
    real = Path(os.path.realpath(folder))
    try:
        marker = read_marker(real.parent) if (real.parent / MARKER).is_file() else None
    except UserError:
        return  # a damaged marker of a folder above is that folder's business
    if marker is not None and real.name in CONTAINERS.get(marker.verb, ()):
        raise UserError(f"{what} {str(folder)!r} is the {real.name}/ folder of {str(real.parent)!r}, the output of "
                        f"`leviathan {marker.verb}` (its {MARKER} says so), which holds that {marker.verb}'s "
                        f"{'run folders' if real.name == 'runs' else real.name + ' records'}: a run written there "
                        f"would be mixed into them; choose another {what} outside it")

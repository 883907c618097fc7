"""The ``report`` stage of the GPU check: one markdown table from the files the stages left in the work folder
(``*.status``, ``env.json``, ``bench.json``, ``fsdp.json``, ``pytest.xml``; ``scripts/gpu_check.py``).

The stages write their files whole (``_write_json`` is atomic), so a file that cannot be read as what its stage
writes is damaged, or not the check's: the report then stops with one line naming it (``damaged``), instead of a
traceback (a ``setup.status`` of "x y z", a bench.json nested 100,000 deep: issue 30 round 24, V77, V78), a hang
(a named pipe in a file's place, V76) or passing it over without a word (an env.json of "not json{").
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from xml.etree import ElementTree

from gpu_check_common import OUT_FILES, STAGES, STAGE_TITLES, _clip, _finite, _write_json, check_output, claim_folder, \
    is_report
from gpu_check_bench import bench_table


def read_status(work: Path, stage: str) -> dict | None:
    """``<stage>.status`` holds ``RC SECONDS LIMIT`` (or ``skip ...``); None if the stage never ran."""
    path = work / f"{stage}.status"
    text = _read_text(path)
    parts = text.split() if text is not None else []
    if not parts:
        return None
    if parts[0] == "skip":
        return {"result": "SKIPPED", "why": " ".join(parts[1:]) or "no time left"}
    try:
        rc = int(parts[0])
        secs = int(float(parts[1])) if len(parts) > 1 else None
        limit = int(float(parts[2])) if len(parts) > 2 else None
    except (ValueError, OverflowError):  # "x y z", "nan", "inf"
        raise damaged(path, f"it holds {_clip(text.strip(), 60)!r}, not 'RC SECONDS LIMIT' or 'skip WHY'") from None
    if (problem := _status_problem(rc, secs, limit)) is not None:
        raise damaged(path, f"it holds {_clip(text.strip(), 60)!r}: {problem}")
    result = "PASS" if rc == 0 else ("TIMEOUT" if rc in (124, 137) else STOPS.get(rc, "FAIL"))
    return {"result": result, "rc": rc, "s": secs, "limit": limit}


# gpu_check.sh's status of a stage it stopped for a stop signal (round 25, X87): 128 + the signal's number
STOPS = {129: "STOPPED (SIGHUP)", 130: "STOPPED (Ctrl-C)", 143: "STOPPED (SIGTERM)"}


def _status_problem(rc: int, secs: int | None, limit: int | None) -> str | None:
    """What no stage writes in a status file, or None: an exit status outside 0-255, a negative time or limit, or a
    time past the limit and ``timeout``'s 10 s grace (a limit of 0: none, as ``setup`` and ``all`` write). A status of
    "0 -5 30" read as a PASS of -5 s (issue 30 round 25, X109): a saved number trusted as written."""
    if not 0 <= rc <= 255:
        return f"the exit status {rc} is not one a process ends with (0 to 255)"
    if secs is not None and secs < 0 or limit is not None and limit < 0:
        return "a time or a limit is negative"
    if secs is not None and limit and secs > limit + STATUS_SLACK_S:
        return f"the stage took {secs} s, past its limit of {limit} s (the stage timeout stops it by then)"
    return None


STATUS_SLACK_S = 30  # timeout's --kill-after=10, and the seconds of gpu_check.sh's own lines around the stage


def read_junit(path: Path) -> dict | None:
    """Counts, failures, skip reasons and recorded properties of pytest's JUnit report; None if there is none."""
    text = _read_text(path)
    if text is None:
        return None
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as e:
        raise damaged(path, f"it is not XML ({e})") from None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    failed, skipped_reasons, props = [], set(), []
    for s in suites:
        for k in counts:
            try:
                counts[k] += int(s.get(k, 0))
            except ValueError:
                raise damaged(path, f"its testsuite's {k}={s.get(k)!r} is not a count") from None
        for case in s.iter("testcase"):
            name = case.get("name")
            for tag in ("failure", "error"):
                el = case.find(tag)
                if el is not None:
                    message = (el.get("message") or tag).strip().splitlines() or [tag]
                    failed.append(f"{name}: {message[0][:200]}")
            sk = case.find("skipped")
            if sk is not None:
                skipped_reasons.add((sk.get("message") or "").strip()[:120])
            p = case.find("properties")
            if p is not None:
                vals = ", ".join(f"{e.get('name')}={e.get('value')}" for e in p.iter("property"))
                if vals:
                    props.append(f"{name}: {vals}")
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    hosts = sorted({s.get("hostname") for s in suites if s.get("hostname")})  # the machine pytest ran on (P72)
    return {**counts, "failed": failed, "skipped_reasons": sorted(skipped_reasons), "properties": props,
            "hosts": hosts}


def read_pytest_log(path: Path) -> dict | None:
    """Counts from ``pytest -v`` lines (``tests/x.py::name PASSED``), for a run that never finished."""
    text = _read_text(path, errors="replace")
    if text is None:
        return None
    outcome: dict[str, str] = {}
    for m in re.finditer(r"^(\S+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)", text, re.M):
        outcome[m.group(1)] = m.group(2)
    if not outcome:
        return None
    values = list(outcome.values())
    failed = [f"{name.split('::', 1)[1]}: failed" for name, o in outcome.items() if o in ("FAILED", "ERROR")]
    return {"tests": len(values), "passed": values.count("PASSED"), "failures": len(failed), "errors": 0,
            "skipped": values.count("SKIPPED"), "failed": failed, "skipped_reasons": [], "properties": []}


def _stage_details(stage: str, work: Path) -> list[str]:
    """Short detail strings for a stage's row."""
    d: list[str] = []
    if stage == "setup":
        env = _load(work / "env.json")
        if env:
            gpu = f"{env.get('gpu')} ({env.get('gpu_memory_gib')} GiB)" if env.get("gpu") else "no CUDA device"
            d.append(f"python {env.get('python')}, torch {env.get('torch')} (CUDA {env.get('torch_cuda')}), {gpu}")
            if env.get("missing_packages"):
                d.append("missing: " + ", ".join(env["missing_packages"]))
        note = _read_text(work / "setup.note", errors="replace")
        if note is not None:
            d.append(note.strip().replace("\n", "; "))
    elif stage == "gpu-tests":
        j = read_junit(work / "pytest.xml")
        if j is None:  # killed before pytest wrote its report: the verbose log's per-test lines
            j = read_pytest_log(work / "gpu-tests.log")
            if j:
                d.append("(no JUnit report: from the log)")
        if j:
            d.append(f"{j['passed']} passed, {j['failures'] + j['errors']} failed, {j['skipped']} skipped")
            d += [f"FAILED {f}" for f in j["failed"][:6]]
            if j["skipped"] and j["skipped_reasons"]:
                d.append("skip reason: " + "; ".join(j["skipped_reasons"])[:200])
    elif stage == "fsdp":
        f = _load(work / "fsdp.json")
        if f:
            t = f.get("torchrun", {})
            if t.get("first") and t.get("status") != "ok" and not t.get("resume"):
                d.append(f"torchrun: {_clip(t.get('status'), 400)}")
            elif t.get("first"):
                a, b = t["first"], t.get("resume") or {}
                d.append(f"torchrun world {a.get('world_size')} on {a.get('device')}: {a.get('steps')} steps, val loss "
                         f"{_num(a.get('final_val_loss'))}; resumed to {b.get('steps')} steps, val loss "
                         f"{_num(b.get('final_val_loss'))} -> {t.get('status')}")
            else:
                d.append(f"torchrun: {t.get('status')}")
            s = f.get("fully_shard", {})
            for v, r in (s.get("variants") or {}).items():
                if "max_loss_diff" in r:
                    d.append(f"fully_shard {v} ({s.get('backend')}, {s.get('autocast')}): DTensor params "
                             f"{r.get('dtensor_params')}, loss sharded vs plain max diff {r['max_loss_diff']:.1e}, "
                             f"gathered weights diff {r.get('max_weight_diff', float('nan')):.1e}, reload loss diff "
                             f"{r.get('reload_loss_diff', float('nan')):.1e} -> {r.get('status')}")
                else:
                    d.append(f"fully_shard {v}: {r.get('status')}")
            if not s.get("variants"):
                d.append(f"fully_shard: {s.get('status')}")
    elif stage == "bench":
        b = _load(work / "bench.json")
        if b:
            for r in b.get("runs", []):
                d.append(f"{r['mode']}/{r['ids']}: " + (f"ratio {r['ratio']:.3f}" if "ratio" in r
                                                         else _clip(r.get("status", "?"), 160)))
    return d


def _num(x) -> str:
    return f"{x:.4f}" if _finite(x) else str(x)


def damaged(path: Path, problem: str):
    """The UserError for a stage file ``path`` that cannot be read as its stage writes it."""
    from leviathan.errors import UserError

    return UserError(f"{str(path)!r} is not a file the GPU check wrote: {problem}; run the check again into a new "
                     f"work folder (--work), or move the file out of the way")


def _read_text(path: Path, errors: str = "strict") -> str | None:
    """The text of the stage file ``path``; None when nothing is there. A named pipe, device or folder in its place
    is refused (``read_text`` of a pipe waited forever, V76), and so is text that is not UTF-8 (unless ``errors``)."""
    from leviathan.errors import not_a_file, not_regular

    if not os.path.lexists(path):
        return None
    if (kind := not_regular(path) or not_a_file(path)) is not None:
        raise damaged(path, f"it {kind}" if kind.startswith("is ") else kind)
    try:
        return path.read_bytes().decode("utf-8", errors=errors)
    except UnicodeDecodeError as e:
        raise damaged(path, f"it is not UTF-8 text (byte at offset {e.start:,})") from None


def _load(path: Path) -> dict | None:
    """The JSON object of the stage file ``path`` (``leviathan.json_text``: bounded nesting, V78); None when there
    is none."""
    from leviathan import json_text

    if _read_text(path) is None:
        return None
    try:
        value = json_text.read_file(path)
    except ValueError as e:
        raise damaged(path, f"it is not readable JSON ({e})") from None
    if not isinstance(value, dict):
        raise damaged(path, f"it holds a JSON {type(value).__name__}, not an object")
    return value


STAGE_FILES = {"setup": "env.json", "gpu-tests": "pytest.xml", "fsdp": "fsdp.json", "bench": "bench.json"}


def _shaped(show, stage: str, work: Path):
    """``show(stage, work)``, with a stage file of the wrong shape (a field missing or of another type, as no stage
    writes it) refused naming the file, not a KeyError or TypeError traceback (V77's kind)."""
    try:
        return show(stage, work)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        raise damaged(work / STAGE_FILES[stage], f"a field is missing or of the wrong type ({type(e).__name__}: "
                                                 f"{_clip(e, 80)})") from None


def check_companion(path: Path, env: dict) -> None:
    """UserError (``damaged``) when the stage file ``path`` (bench.json, fsdp.json) was not written on the machine
    env.json describes: another torch, a CUDA device where env.json saw none, another GPU. A bench.json of an H100's
    check copied into a CPU rehearsal's folder was reported as this machine's, "Overall: PASS" (issue 30 round 25,
    X111): companion files are checked against each other, as an export's are (``ownership.check_output_files``)."""
    stage = _load(path) if env else None
    if not stage:
        return
    device, gpu = str(stage.get("device") or ""), stage.get("gpu")
    if stage.get("torch") and env.get("torch") and stage["torch"] != env["torch"]:
        problem = f"it was written with torch {stage['torch']}, and env.json records torch {env['torch']}"
    elif device.startswith("cuda") and env.get("cuda_available") is False:
        problem = f"it was measured on {device}, and env.json records no CUDA device on this machine"
    elif gpu and env.get("gpu") and gpu != env["gpu"] and device in ("cuda", "cuda:0"):  # env.json names GPU 0
        problem = f"it was measured on a {gpu}, and env.json records a {env['gpu']}"
    else:
        return
    raise damaged(path, f"{problem} (a file of another machine's check?)")


def check_junit(path: Path, env: dict) -> None:
    """UserError (``damaged``) when the gpu-tests stage's pytest.xml was not written on the machine env.json
    describes: pytest ran on another host than env.json's, or GPU tests ran (passed or failed) where env.json saw no
    CUDA device, on which every test of tests/gpu skips (its module's skipif). A pytest.xml of another machine's run
    put into a CPU rehearsal's folder was reported as "GPU tests PASS, 11 passed" and "Overall: PASS" (issue 30 round
    26, P72), while check_companion held bench.json and fsdp.json to env.json. Errors are not counted: a collection
    error (a missing package) is this machine's own."""
    junit = read_junit(path) if env else None
    if not junit:
        return
    ran = junit["passed"] + junit["failures"]
    if env.get("hostname") and junit["hosts"] and junit["hosts"] != [env["hostname"]]:
        problem = f"pytest ran on {', '.join(junit['hosts'])}, and env.json records host {env['hostname']}"
    elif ran and env.get("cuda_available") is False:
        problem = (f"{ran} GPU test{'' if ran == 1 else 's'} ran (passed or failed), and env.json records no CUDA "
                   f"device on this machine, where every GPU test skips")
    else:
        return
    raise damaged(path, f"{problem} (a file of another machine's check?)")


def build_report(work: Path) -> tuple[str, bool]:
    """(markdown, all stages passed)."""
    env = _load(work / "env.json") or {}
    for name in ("bench.json", "fsdp.json"):
        check_companion(work / name, env)
    check_junit(work / "pytest.xml", env)
    title = f"# GPU check ({time.strftime('%Y-%m-%d %H:%M:%S')})"
    lines = [title, "", f"Device: {env.get('gpu') or env.get('requested_device', '?')}; torch {env.get('torch', '?')}; "
             f"work folder {work}", "",
             "| stage | result | time s | limit s | details |", "|---|---|---|---|---|"]
    all_ok = True
    for stage in STAGES:
        st = read_status(work, stage)
        if st is None:
            result, secs, limit = "NOT RUN", "", ""
        elif st["result"] == "SKIPPED":
            result, secs, limit = "SKIPPED", "", st["why"]
        else:
            result, secs, limit = st["result"], st.get("s", ""), st.get("limit") or ""
            if st["result"] == "TIMEOUT":
                result = f"TIMEOUT (rc {st['rc']})"
            elif st["result"] == "FAIL":
                result = f"FAIL (rc {st['rc']})"
        if st is None or st["result"] != "PASS":
            all_ok = False
        details = "<br>".join(x.replace("|", "/") for x in _shaped(_stage_details, stage, work)) or ""
        lines.append(f"| {STAGE_TITLES[stage]} | {result} | {secs} | {limit} | {details} |")
    b = _load(work / "bench.json")
    if b and b.get("runs"):
        lines += ["", _shaped(lambda _, __: bench_table(b), "bench", work)]
    j = read_junit(work / "pytest.xml")
    if j and j["properties"]:
        lines += ["", "GPU test measurements:", ""] + [f"- {p}" for p in j["properties"]]
    lines += ["", f"Overall: {'PASS' if all_ok else 'NOT ALL PASSED'}"]
    return "\n".join(lines) + "\n", all_ok


def check_outputs(args) -> None:
    """UserError before anything is written when ``--md`` names a user's file (it wrote over one, V35) or ``$OUT``
    holds files the check did not write (``claim_folder``)."""
    check_output(args.md, "--md", is_report, "an earlier GPU check report")
    if os.environ.get("OUT"):
        claim_folder(os.environ["OUT"], OUT_FILES, "OUT")


def check_work_folder(work: Path) -> None:
    """UserError when ``work`` is not a GPU check's work folder: another verb's output (its marker says so), or a
    folder of other files holding no stage file and no marker of the check. A training run or a user's corpus given
    as --work read as a check whose four stages never ran, exit 1, without a word (issue 30 round 25, X9). An empty
    folder, or one the check claimed before any stage wrote there, is a check that has not run yet: reported."""
    from leviathan.errors import UserError
    from leviathan.ownership import MARKER, read_marker

    from gpu_check_common import VERB, WORK_FILES

    fix = "give the work folder the stages wrote (GPU_CHECK_WORK, printed at gpu_check.sh's start)"
    marker = read_marker(work)
    if marker is not None and marker.verb != VERB:
        raise UserError(f"--work {str(work)!r} is the output of `leviathan {marker.verb}` (its {MARKER} says so), "
                        f"not a GPU check's work folder; {fix}")
    if marker is None and any(work.iterdir()) and not any(os.path.lexists(work / n) for n in WORK_FILES):
        raise UserError(f"--work {str(work)!r} is not a GPU check's work folder: it holds no file a stage writes "
                        f"(*.status, env.json, bench.json, ...) and no {MARKER} of the check; {fix}")


def cmd_report(args) -> int:
    from leviathan.errors import UserError, not_a_folder_there
    from leviathan.io import atomic_write_text

    work = Path(args.work)
    if not work.is_dir():  # a typo was a table of NOT RUN stages, as if the check had not run
        # what stands there named (a pipe, a file; issue 30 round 30, X105's kind)
        what = not_a_folder_there(work) if os.path.lexists(work) else "does not exist"
        raise UserError(f"--work {str(work)!r} {what}: no stage wrote its files there; give the work folder the "
                        f"stages wrote (GPU_CHECK_WORK, printed at gpu_check.sh's start)")
    check_work_folder(work)
    check_outputs(args)
    text, ok = build_report(work)
    print(text)
    targets = [Path(args.md)] if args.md else []
    if os.environ.get("OUT"):
        targets.append(Path(os.environ["OUT"]) / "gpu_check.md")
    for path in targets:
        atomic_write_text(path, text)
        print(f"(written to {path})")
    if os.environ.get("OUT"):  # everything measured, for whoever reads the results later
        data = {name: _load(work / f"{name}.json") for name in ("env", "bench", "fsdp")}
        data["stages"] = {stage: read_status(work, stage) for stage in STAGES}
        data["pytest"] = read_junit(work / "pytest.xml")
        _write_json(Path(os.environ["OUT"]) / "gpu_check.json", data)
    return 0 if ok else 1

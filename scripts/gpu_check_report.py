"""The ``report`` stage of the GPU check: one markdown table from the files the stages left in the work folder
(``*.status``, ``env.json``, ``bench.json``, ``fsdp.json``, ``pytest.xml``; ``scripts/gpu_check.py``)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from xml.etree import ElementTree

from gpu_check_common import STAGES, STAGE_TITLES, _clip, _finite, _write_json
from gpu_check_bench import bench_table


def read_status(work: Path, stage: str) -> dict | None:
    """``<stage>.status`` holds ``RC SECONDS LIMIT`` (or ``skip ...``); None if the stage never ran."""
    path = work / f"{stage}.status"
    if not path.is_file():
        return None
    parts = path.read_text().split()
    if not parts:
        return None
    if parts[0] == "skip":
        return {"result": "SKIPPED", "why": " ".join(parts[1:]) or "no time left"}
    rc = int(parts[0])
    secs = int(float(parts[1])) if len(parts) > 1 else None
    limit = int(float(parts[2])) if len(parts) > 2 else None
    result = "PASS" if rc == 0 else ("TIMEOUT" if rc in (124, 137) else "FAIL")
    return {"result": result, "rc": rc, "s": secs, "limit": limit}


def read_junit(path: Path) -> dict | None:
    if not path.is_file():
        return None
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    failed, skipped_reasons, props = [], set(), []
    for s in suites:
        for k in counts:
            counts[k] += int(s.get(k, 0))
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
    return {**counts, "failed": failed, "skipped_reasons": sorted(skipped_reasons), "properties": props}


def read_pytest_log(path: Path) -> dict | None:
    """Counts from ``pytest -v`` lines (``tests/x.py::name PASSED``), for a run that never finished."""
    if not path.is_file():
        return None
    outcome: dict[str, str] = {}
    for m in re.finditer(r"^(\S+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)", path.read_text(errors="replace"),
                         re.M):
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
        note = work / "setup.note"
        if note.is_file():
            d.append(note.read_text().strip().replace("\n", "; "))
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


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def build_report(work: Path) -> tuple[str, bool]:
    """(markdown, all stages passed)."""
    env = _load(work / "env.json") or {}
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
        details = "<br>".join(x.replace("|", "/") for x in _stage_details(stage, work)) or ""
        lines.append(f"| {STAGE_TITLES[stage]} | {result} | {secs} | {limit} | {details} |")
    b = _load(work / "bench.json")
    if b and b.get("runs"):
        lines += ["", bench_table(b)]
    j = read_junit(work / "pytest.xml")
    if j and j["properties"]:
        lines += ["", "GPU test measurements:", ""] + [f"- {p}" for p in j["properties"]]
    lines += ["", f"Overall: {'PASS' if all_ok else 'NOT ALL PASSED'}"]
    return "\n".join(lines) + "\n", all_ok


def cmd_report(args) -> int:
    work = Path(args.work)
    text, ok = build_report(work)
    print(text)
    targets = [Path(args.md)] if args.md else []
    if os.environ.get("OUT"):
        targets.append(Path(os.environ["OUT"]) / "gpu_check.md")
    for path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"(written to {path})")
    if os.environ.get("OUT"):  # everything measured, for whoever reads the results later
        data = {name: _load(work / f"{name}.json") for name in ("env", "bench", "fsdp")}
        data["stages"] = {stage: read_status(work, stage) for stage in STAGES}
        data["pytest"] = read_junit(work / "pytest.xml")
        _write_json(Path(os.environ["OUT"]) / "gpu_check.json", data)
    return 0 if ok else 1

"""Each downstream task's local data file read and checked before lm-evaluation-harness sees it.

    docs = read_task_rows("arc_easy", path)     # list of dicts, or UserError naming the file, line and field

lm-eval reads the files through ``datasets`` and applies the task's template to every row; a file that is not what
the task expects ended in a traceback deep inside either library (random bytes as LAMBADA: pyarrow's JSON parse
error; an ARC answerKey that is not one of its choices' labels: ``'Z' is not in list``; a PIQA label 'yes':
``int('yes')``), or was scored without a word (a PIQA label 7 of two choices: lm-eval warned per sample and counted
it wrong): issue 30 round 14, B129-B133, B236, B239. Each row is checked for the fields its task's template reads,
with their types and, for the gold answer, its range; the first bad row is named with its line and the fix.

Footgun: the check reads every row once (the paper's six tasks: about 30 MB, a second or two); a file that is right
for another task of the same shape (ARC-Easy's test as ARC-Challenge's) cannot be told apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ...errors import UserError, not_regular
from ... import json_text

_FIX = "put the task's own file there (see the data folder's MANIFEST.md), or --data-root the folder that holds it"


def _text(doc: dict, key: str) -> str | None:
    return None if isinstance(doc.get(key), str) else f"field {key!r} is not text"


def _choice_index(value: Any, count: int, key: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) and not (isinstance(value, str) and value.isdigit()):
        return f"field {key!r} is {value!r:.40}, not the index of a choice"
    return None if 0 <= int(value) < count else f"field {key!r} is {value}, but there are {count} choices"


def _arc(doc: dict) -> str | None:
    question = doc.get("question")
    if not isinstance(question, dict) or not isinstance(question.get("stem"), str):
        return "field 'question' is not {'stem': text, 'choices': [...]}"
    choices = question.get("choices")
    if not isinstance(choices, list) or not choices or not all(
            isinstance(c, dict) and isinstance(c.get("text"), str) and isinstance(c.get("label"), str)
            for c in choices):
        return "field 'question.choices' is not a list of {'text', 'label'}"
    labels = [c["label"] for c in choices]
    if doc.get("answerKey") not in labels:
        return f"answerKey {doc.get('answerKey')!r:.20} is not one of its choices' labels ({', '.join(labels)})"
    return None


def _hellaswag(doc: dict) -> str | None:
    problem = _text(doc, "activity_label") or _text(doc, "ctx")
    endings = doc.get("endings")
    if problem is None and (not isinstance(endings, list) or not endings or not all(isinstance(e, str)
                                                                                  for e in endings)):
        problem = "field 'endings' is not a list of texts"
    return problem or _choice_index(doc.get("label"), len(endings), "label")


def _winogrande(doc: dict) -> str | None:
    options = doc.get("context_options")
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
        return "field 'context_options' is not a list of two or more texts"
    return _text(doc, "continuation") or _choice_index(doc.get("gold"), len(options), "gold")


def _lambada(doc: dict) -> str | None:
    problem = _text(doc, "text")
    return problem or (None if len(doc["text"].split(" ")) > 1 else "field 'text' has no last word to predict")


def _piqa(doc: dict) -> str | None:
    return _text(doc, "goal") or _text(doc, "sol1") or _text(doc, "sol2")


ROW_CHECKS: dict[str, Callable[[dict], str | None]] = {
    "lambada_openai": _lambada, "hellaswag": _hellaswag, "piqa": _piqa, "arc_easy": _arc, "arc_challenge": _arc,
    "winogrande": _winogrande}


def read_task_rows(key: str, path: Path) -> list[dict]:
    """The rows of a task's JSONL file, each checked by ``ROW_CHECKS[key]``; UserError for the first that is not."""
    check = ROW_CHECKS[key]
    rows = []
    for number, line in enumerate(_lines(key, path), 1):
        if not line.strip():
            continue
        if number == 1 and line.startswith("\ufeff"):  # "line 1 is not a JSON object ('\ufeff{...')" (round 15,
            # B296): the mark, which some editors save, was the only problem and went unnamed
            raise UserError(f"task {key}: {str(path)!r} starts with a UTF-8 byte order mark (BOM), which is not part "
                            f"of JSON lines; save the file without it (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' "
                            f"{str(path)!r}), or put the task's own file there")
        try:
            doc = json_text.loads(line)
        except ValueError:
            raise UserError(f"task {key}: {str(path)!r} line {number} is not a JSON object ({line[:40]!r}); "
                            f"{_FIX}") from None
        problem = check(doc) if isinstance(doc, dict) else "it is not a JSON object"
        if problem is not None:
            raise UserError(f"task {key}: {str(path)!r} line {number}: {problem}; {_FIX}")
        rows.append(doc)
    if not rows:
        raise UserError(f"task {key}: {str(path)!r} holds no examples; {_FIX}")
    return rows


def read_piqa_labels(path: Path, count: int) -> list[int]:
    """PIQA's labels file: one 0 or 1 per example of its valid.jsonl (``count``)."""
    gold = []
    for number, word in enumerate(_lines("piqa", path), 1):
        if not word.strip():
            continue
        if word.strip() not in ("0", "1"):
            raise UserError(f"task piqa: {str(path)!r} line {number} is {word.strip()[:20]!r}, not a label 0 or 1 "
                            f"(one per line, the right one of sol1 and sol2); {_FIX}")
        gold.append(int(word))
    if len(gold) != count:
        raise UserError(f"task piqa: {str(path)!r} has {len(gold):,} labels but its valid.jsonl has {count:,} "
                        f"examples: the two files are of different versions; {_FIX}")
    return gold


def check_present(key: str, paths: list[Path]) -> None:
    """UserError naming each of ``paths`` that is not there, or is there as a folder, a pipe or a device (B317: a
    pipe or a folder was "missing data file(s)")."""
    for path in paths:
        if path.is_dir():
            raise UserError(f"task {key}: {str(path)!r} is a folder, not a data file; {_FIX}")
        if (kind := not_regular(path)) is not None:
            raise UserError(f"task {key}: {str(path)!r} {kind}; {_FIX}")
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise UserError(f"task {key}: missing data file(s) {', '.join(missing)}; is the data folder right "
                        f"(--data-root / LEVIATHAN_DATA)?")


def _lines(key: str, path: Path) -> list[str]:
    if (kind := not_regular(path)) is not None:
        raise UserError(f"task {key}: {str(path)!r} {kind}; {_FIX}")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise UserError(f"task {key}: {str(path)!r} is not UTF-8 text (byte {e.start:,}); {_FIX}") from None

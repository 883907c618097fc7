"""``prepare``'s Python arguments checked at the API boundary by the rules of ``leviathan prepare``'s flags.

    check_prepare_arguments("prepare", out_dir, text_field, max_documents, num_workers, batch_chars, piece_chars)

The verb's flags refuse ``--max-documents 0`` or ``x`` (``positive_int``) and a thread count past the cores
(``thread_count``); the library entry point took its values unchecked (issue 30 round 19): ``max_documents=True``
was read as 1 document ("first 1 documents", J182), ``text_field=5`` was accepted and entered the data fingerprint
(J183), and ``piece_chars=-1`` cut every long document into the same piece forever, the process growing to 6.9 GB
until killed (J190, a hang); ``out_dir=None`` was pathlib's TypeError. Each value is judged by the rule its flag
applies (``value_rules``: one rule per value), before any file is read or written; the line names the argument
and what to pass. ``batch_chars`` and ``piece_chars`` have no flag; both are sizes in characters held to one rule,
a positive integer (issue 30 round 27, S408: ``batch_chars=0`` was taken while ``piece_chars=0`` was refused). A
batch is sent once it holds at least ``batch_chars`` characters, so 1 sends each document alone (round 25's Y383
read 0 that way; 0 is no size of a batch, and 1 says the same).
"""

from __future__ import annotations

from ..value_rules import api_check, path_problem, thread_problem, whole_problem


def check_prepare_arguments(api: str, out_dir, text_field, max_documents, num_workers, batch_chars,
                            piece_chars) -> None:
    """UserError naming the first of ``prepare``'s arguments its rule refuses (see the module docstring).
    Parameters: ``prepare``'s own, one each, as its caller gave them, after the API's name."""
    api_check(api, "out_dir", path_problem(out_dir), "pass the folder to write the prepared data into")
    if not isinstance(text_field, str) or not text_field:
        api_check(api, "text_field", f"expected a field name (a non-empty str), got {text_field!r:.60}",
                  "pass the name of the field or column holding the text, such as 'text' (as --text-field)")
    if max_documents is not None:
        api_check(api, "max_documents", whole_problem(max_documents, 1, "a positive integer"),
                  "pass a number of documents such as 1000, or None for all (as --max-documents)")
    api_check(api, "num_workers", thread_problem(num_workers), "pass a number of tokenizer threads such as 2 "
              "(as --workers)")
    api_check(api, "batch_chars", whole_problem(batch_chars, 1, "a positive integer"),
              "pass a number of characters such as 8000000 (1: a batch per document)")
    api_check(api, "piece_chars", whole_problem(piece_chars, 1, "a positive integer"),
              "pass a number of characters such as 1000000")

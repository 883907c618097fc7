"""The caller's streamer told the stream has ended when ``generate`` ends in an error, for both of leviathan's Hugging
Face classes.

    with streamer_ended_on_refusal(args, kwargs):
        ...  # the checks and transformers' generate

transformers calls ``streamer.end()`` only at a normal finish. Its documented pattern runs ``generate`` in a thread
and reads a ``TextIteratorStreamer`` in the caller's loop, so a refusal (an argument's line before the first token,
or one at the first token) reached only the thread's excepthook, and the loop waited forever for an end that never
came (issue 30 round 34, hangs AG410, AG411). Now ``end()`` is called on any error, as transformers would at a
finish, and the error goes on as it was. Costs nothing on success.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


def _streamer(args: tuple, kwargs: dict) -> Any:
    """The streamer of a ``generate`` call: by keyword, or by position after (inputs, generation_config)."""
    from .generate_arguments import _POSITIONAL

    if kwargs.get("streamer") is not None:
        return kwargs["streamer"]
    index = _POSITIONAL.index("streamer")
    return args[index] if len(args) > index else None


@contextlib.contextmanager
def streamer_ended_on_refusal(args: tuple, kwargs: dict) -> Iterator[None]:
    """Calls the streamer's ``end()`` (read at the error: ``args`` / ``kwargs`` as ``generate`` was given them) when
    the block ends in an error; the error is raised unchanged. A streamer's own error in ``end()`` is not raised over
    the first."""
    try:
        yield
    except BaseException:
        end = getattr(_streamer(args, kwargs), "end", None)
        if callable(end):
            with contextlib.suppress(Exception):
                end()
        raise

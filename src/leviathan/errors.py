"""Errors a user can act on. The CLI prints their message (no traceback) and exits with status 2."""


class UserError(Exception):
    """Bad input: the message names the problem and the fix."""

"""A number written as text that a 64-bit float cannot hold: named as written, never as the 0.0 or inf it reads as.

    lost = float_lost("1e-400", float("1e-400"))   # "is too small for a 64-bit float and reads as 0.0 (underflow)"
    if lost: raise ConfigError(f"optim.lr: '1e-400' {lost}; {FLOAT_SIZES}")

``float('1e-400')`` is 0.0 and ``float('1e400')`` is inf, without a word: ``optim.lr=1e-400`` was refused as "optim.lr
must be positive, got 0.0", a value the user never typed, with no range (issue 30 round 26, P30). The config's
readers (``strict_yaml``'s float constructor, ``config._coerce_float``) and the command line's number types
(``commands.values``) ask this first. Footgun: ``inf`` / ``.inf`` / ``nan`` written as such are not lost, they are
refused by their readers' own rules; 0, 0.0 and 0e5 are a zero as written.
"""

from __future__ import annotations

import math

FLOAT_SIZES = "a 64-bit float holds sizes from about 4.9e-324 to 1.8e308 (or 0); write the number meant within them"


def float_lost(text: str, value) -> str | None:
    """Why ``value``, the float read from ``text``, is not the number ``text`` writes (its underflow to 0.0 or its
    overflow to inf), to follow the text in a message; None when it is that number (to float precision)."""
    if not isinstance(text, str) or not isinstance(value, float):
        return None
    written = text.strip().lower().replace("_", "").lstrip("+-")
    if value == 0.0 and any(digit in "123456789" for digit in written.split("e")[0]):
        return "is too small for a 64-bit float and reads as 0.0 (underflow)"
    if math.isinf(value) and "inf" not in written:
        return f"is too large for a 64-bit float and reads as {value} (overflow)"
    return None

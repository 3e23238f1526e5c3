"""How numbers and names are written in reports, charts and folder names.

Shared by ``sim.report.html``, ``sim.display.charts``, ``sim.openings.output`` and
``sim.tournament``, so a rate, an interval or a p-value reads the same everywhere.
"""

from __future__ import annotations

import math
import re

__all__ = ["ci", "p_value_text", "pct", "pp", "printable", "shown_name", "signed", "slug"]


def pct(value: float, digits: int = 1) -> str:
    """A rate as a percentage (``42.5%``); ``n/a`` for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * value:.{digits}f}%"


def ci(low: float, high: float, digits: int = 1) -> str:
    """An interval of rates: ``40.1%–44.9%``."""
    return f"{pct(low, digits)}–{pct(high, digits)}"


def pp(value: float) -> str:
    """Percentage points, signed."""
    if value is None or math.isnan(value):
        return "n/a"
    return f"{100 * value:+.2f} pp"


def p_value_text(p: float) -> str:
    """A p-value as people read it: ``< 0.0001`` rather than ``1.2e-19``."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    if p < 1e-4:
        return "< 0.0001"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def signed(value: float, digits: int = 2) -> str:
    """``+1.25``, ``-0.50``; ``nan`` for a value that is not finite."""
    return "nan" if not math.isfinite(value) else f"{value:+.{digits}f}"


def slug(text: str) -> str:
    """A name safe in a file name: runs of other characters become one ``-``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


# every escaping of data for a terminal or a text file is here (printable, shown_name)
_SPECIAL = r"\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f" + _SPECIAL + "]")
_ANY_CONTROL = re.compile(r"[\x00-\x1f" + _SPECIAL + "]")  # newlines and tabs too


def printable(text: str, one_line: bool = False) -> str:
    """``text`` safe for a terminal: control characters (an escape sequence that would move
    the cursor, recolour or retitle the terminal, a bidirectional override) written as
    ``\\x1b``-style escapes; newlines and tabs kept, unless ``one_line`` (an error, a
    notice, a name: a newline there could forge a line of its own, ``sniff: error: ...``).
    Names from a trace or a folder are data, never commands to the terminal."""
    pattern = _ANY_CONTROL if one_line else _CONTROL
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def shown_name(name: object) -> str:
    """A name (a folder, a file, a title, a label) inside a longer text: on one line, every
    control character escaped (``\\n``, ``\\x1b``)."""
    return printable(str(name), one_line=True)

"""Docstrings and comments say what the code does and why; they hold no lab notes.

A measurement goes stale the day the code changes, so the figures live in docs/speed.md,
each beside its command and machine; a date says when, not why; an issue number sends the
reader away from the code to learn what it means. So no docstring or comment of ``sim/``,
``strategies/``, ``scripts/``, ``benchmarks/`` or ``examples/`` holds a date (a year 20xx, a
month with a day), an issue reference (``#12``, ``issue 12``) or a measured figure (a number
with a time unit, a number of games or decisions per second or minute, a number of times
faster or slower, "measured" beside a number, or a "(measured: ...)", "(measured there)"
aside: the figure kept elsewhere). A definition is not a measurement: a unit
named alone (``seconds``, ``games/s``) or a constant's meaning worded through its name
passes. The few lines that must name a figure as a definition are in ``ALLOWED``, each with
the text that makes it one. The files are read with ``ast`` and ``tokenize``, nothing is
imported.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import ROOT

FOLDERS = ("sim", "strategies", "scripts", "benchmarks", "examples")
MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
          "December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
UNIT = (r"(?:ms|µs|us|ns|min|mins|secs?|seconds?|minutes?|hours?|milliseconds?|microseconds?|"
        r"nanoseconds?)")
RATE = (r"(?:games|decisions|rounds|moves|hints|requests|steps|calls)\s*"
        r"(?:/\s*s\b|(?:a|per)\s+(?:second|minute|hour)\b)")
PATTERNS = {
    "a date": re.compile(rf"\b20\d\d\b|\b(?:{MONTHS})\.? \d{{1,2}}\b|\b\d{{1,2}} (?:{MONTHS})\b"),
    "an issue reference": re.compile(r"(?<![\w&/])#\d+\b|\bissues? #?\d+\b", re.I),
    "a measured figure": re.compile(
        rf"\d[\d,.]*\s?(?:{UNIT}\b|s\b(?!\s*[-=(]))(?<!\ds)"  # 20 s, 13 ms (not "5s": fives)
        rf"|\d[\d,.]*\s*[kKM]?\s*{RATE}"  # 4,000 games/s, 90 decisions a minute
        r"|\d[\d.]*\s*(?:x|times)\s+(?:faster|slower|longer|shorter|the)\b"
        r"|\d[\d.]*\s*[KMG]i?B/s\b"  # 1.6 GB/s
        r"|\bmeasured\b.*\d|\d.*\bmeasured\b"
        r"|\(measured(?::|\s+(?:there|here|on|as|at)\b)", re.I),  # an aside, not a pointer
}
# (path, text of the line): a figure that is a definition, and why.
ALLOWED = {
    # a citation's year: the paper, not a date of this code
    ("sim/stats/multiple.py", "Benjamini & Yekutieli"),
}


def texts(source: str) -> Iterator[tuple[int, str]]:
    """Every comment and every line of every docstring of ``source``, with its line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    kinds = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr):
            value = node.body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                for offset, line in enumerate(value.value.splitlines()):
                    yield value.lineno + offset, line


def lab_notes(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line: what: text`` for each docstring or comment line of ``path`` that holds a
    date, an issue reference or a measured figure (``ALLOWED`` aside)."""
    name = path.relative_to(root).as_posix()
    found = []
    for line, text in texts(path.read_text(encoding="utf-8")):
        if any(name == where and allowed in text for where, allowed in ALLOWED):
            continue
        for what, pattern in PATTERNS.items():
            match = pattern.search(text)
            if match:
                found.append(f"{name}:{line}: {what} ({match.group(0)!r}): {text.strip()}")
                break
    return found


def test_no_docstring_or_comment_holds_a_date_an_issue_or_a_measurement() -> None:
    files = [path for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 200
    problems = [problem for path in files for problem in lab_notes(path)]
    assert not problems, ("say what and why; figures go to docs/speed.md:\n"
                          + "\n".join(problems))


LAB_NOTES = '''"""Played 4,000 games/s on the laptop.

Faster since issue 50, 2.5 times faster than before.
"""
# about 25 s to compile (#60)
X = 1  # measured on 3 December: 13 ms a decision
Y = 2  # 1.6 GB/s with SHA instructions
Z = 3  # costs six times the decision (measured there); 3 microseconds a call
'''
DEFINITIONS = '''"""Prints games/s and decisions per minute; ``timeout`` in seconds.

The tally of the whole 5s, then the rest in digits; 95% intervals; 12.6 MB of slots.
"""
GRACE = 15  # seconds between Ctrl-C and SIGKILL
FACTOR = 2.3  # the table and the frame both alive (measured in docs/query.md)
'''


def test_the_check_finds_lab_notes_and_passes_definitions(tmp_path) -> None:
    notes, definitions = tmp_path / "notes.py", tmp_path / "definitions.py"
    notes.write_text(LAB_NOTES)
    definitions.write_text(DEFINITIONS)
    found = lab_notes(notes, tmp_path)
    assert [entry.split(" (")[0] for entry in found] == [
        "notes.py:5: an issue reference", "notes.py:6: a date", "notes.py:7: a measured figure",
        "notes.py:8: a measured figure",
        "notes.py:1: a measured figure", "notes.py:3: an issue reference"]
    assert lab_notes(definitions, tmp_path) == []

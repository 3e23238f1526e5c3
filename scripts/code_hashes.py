"""The entries of ``sim/kernels/rewrites.py`` for code rewritten since an earlier commit.

Usage::

    python scripts/code_hashes.py --write
    python scripts/code_hashes.py --all
    python scripts/code_hashes.py [--old tests/fixtures/run-on-b65694f/b65694f_hashes.json]
    python scripts/code_hashes.py --json > hashes.json

Compares the code hash of every compiled module the built-in strategies play (and of the
kernel template) with a JSON of the hashes at the earlier commit (module name -> hash, as
``--json`` prints them), and prints, for each module whose hash changed, the line
``"now": "then",  # module`` of that era's table; ``None`` for a module that the earlier code
did not have (the second half of a split: map the first half to the old module's hash by
hand). Modules of the earlier code that are gone are listed as comments. ``--old`` compares
with one JSON (by default main's at 55805d0: the lines of ``REWRITES``); ``--all`` prints
every era's lines under the name of its table: ``REWRITES`` (main at 55805d0) and each stop
of ``SINCE_STOPS``, whose JSON is tests/fixtures/run-on-COMMIT/COMMIT_hashes.json; ``--write``
writes them into the tables of ``sim/kernels/rewrites.py`` (of the checkout imported: run it
with ``PYTHONPATH`` at the checkout), keeping the value of an entry whose key is still code
now (it may be written by hand). Write or paste the lines only for a rewrite proven to change
no game (the golden tables); an import added since that makes an unchanged module part of a
lineup's code belongs in ``NEW_IMPORTS``, which this script cannot see.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

from sim.kernels import rewrites
from sim.kernels.generate import code_hashes, code_modules
from strategies import available, get

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
DEFAULT_OLD = FIXTURES / "run-on-main" / "main_hashes.json"


def current_hashes() -> dict[str, str]:
    """The code hash of every compiled module of the built-ins and of the kernel template."""
    return code_hashes(code_modules([get(name) for name in sorted(available())]))


def changed(old: dict[str, str], now: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    """Each module whose hash is not the one in ``old`` -> (its hash now, its hash then or
    ``None`` where the earlier code had no such module): the keys and values of an era's
    table."""
    return {name: (digest, old.get(name)) for name, digest in sorted(now.items())
            if old.get(name) != digest}


def rewrite_lines(old: dict[str, str], now: dict[str, str], indent: str = "    ",
                  kept: Mapping[str, str | None] | None = None) -> list[str]:
    """An era's table lines for the modules whose hash is not the one in ``old``; an entry
    of ``kept`` (the table as it is) keeps its value, since it may be written by hand (the
    first half of a split)."""
    kept = kept or {}
    lines = []
    for name, (digest, then) in changed(old, now).items():
        then = kept.get(digest, then)
        lines.append(f"{indent}{json.dumps(digest)}: {json.dumps(then) if then else 'None'},"
                     f"  # {name}")
    lines += [f"{indent}# gone since: {name} ({old[name]})" for name in sorted(set(old) - set(now))]
    return lines


def era_files() -> dict[str, Path]:
    """Each era's table in ``sim/kernels/rewrites.py`` -> the JSON of its code hashes then."""
    eras = {"REWRITES": DEFAULT_OLD}
    for commit in rewrites.SINCE_STOPS:
        eras[f"SINCE_STOPS[{json.dumps(commit)}]"] = stop_hashes(commit)
    return eras


def stop_hashes(commit: str) -> Path:
    """Where the code hashes of an earlier stop are: next to the run folder its code wrote."""
    return FIXTURES / f"run-on-{commit}" / f"{commit}_hashes.json"


def era_lines(now: dict[str, str]) -> list[str]:
    """Every era's lines under a comment naming its table, indented as they paste there."""
    lines = []
    for table, path in era_files().items():
        indent = " " * (4 if table == "REWRITES" else 8)
        entries = rewrite_lines(json.loads(path.read_text()), now, indent)
        lines += [f"# {table} ({path.relative_to(FIXTURES.parents[1])})",
                  *(entries or [f"{indent}# no module changed since"])]
    return lines


def write_tables(path: Path, now: dict[str, str]) -> str:
    """The text of ``rewrites.py`` at ``path`` with ``REWRITES`` and ``SINCE_STOPS`` made of
    every era's entries now (the import tables, which this cannot see, are left alone)."""
    old = json.loads(DEFAULT_OLD.read_text())
    text = replace_table(path.read_text(), "REWRITES: dict[str, str | None] = {", [
        *rewrite_lines(old, now, kept=rewrites.REWRITES), "}"])
    stops = []
    for commit, kept in rewrites.SINCE_STOPS.items():
        then = json.loads(stop_hashes(commit).read_text())
        lines = rewrite_lines(then, now, " " * 8, kept)
        stops += [f"    {json.dumps(commit)}: {{", *lines, "    },"] if lines else [
            f"    {json.dumps(commit)}: {{}},"]
    return replace_table(text, "SINCE_STOPS: dict[str, dict[str, str | None]] = {",
                          [*stops, "}"])


def replace_table(text: str, opening: str, body: list[str]) -> str:
    """``text`` with the lines after ``opening`` up to the first ``}`` alone on its line
    replaced by ``body``."""
    start = text.index(opening + "\n") + len(opening) + 1
    end = text.index("\n}\n", start - 1) + 3  # from the opening's own line end: {} empty
    return text[:start] + "\n".join(body) + "\n" + text[end:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, default=DEFAULT_OLD,
                        help="JSON of the earlier code hashes (default: %(default)s)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--json", action="store_true", help="print the hashes now as JSON")
    what.add_argument("--all", action="store_true",
                      help="print the lines of every era: REWRITES and each stop's")
    what.add_argument("--write", action="store_true",
                      help="write every era's lines into sim/kernels/rewrites.py")
    args = parser.parse_args()
    now = current_hashes()
    if args.json:
        print(json.dumps(now, indent=1, sort_keys=True))
        return
    if args.all:
        print("\n".join(era_lines(now)))
        return
    if args.write:
        path = Path(rewrites.__file__)
        path.write_text(write_tables(path, now))
        print(f"wrote every era's entries into {path}: review them with git diff")
        return
    lines = rewrite_lines(json.loads(args.old.read_text()), now)
    print("\n".join(lines) if lines else "# no module changed since")


if __name__ == "__main__":
    main()

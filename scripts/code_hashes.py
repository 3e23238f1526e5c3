"""The entries of ``sim/kernels/rewrites.py`` for code rewritten since an earlier commit.

Usage::

    python scripts/code_hashes.py [--old tests/fixtures/run-on-main/main_hashes.json]
    python scripts/code_hashes.py --json > hashes.json

Compares the code hash of every compiled module the built-in strategies play (and of the
kernel template) with a JSON of the hashes at the earlier commit (module name -> hash, as
``--json`` prints them), and prints, for each module whose hash changed, the line
``"now": "then",  # module`` of ``REWRITES``; ``None`` for a module that the earlier code did
not have (the second half of a split: map the first half to the old module's hash by hand).
Modules of the earlier code that are gone are listed as comments. Paste the lines only for a
rewrite proven to change no game (the golden tables); an import added since that makes an
unchanged module part of a lineup's code belongs in ``NEW_IMPORTS``, which this script
cannot see.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sim.kernels.generate import code_hashes, code_modules
from strategies import available, get

DEFAULT_OLD = Path(__file__).resolve().parents[1] / "tests/fixtures/run-on-main/main_hashes.json"


def current_hashes() -> dict[str, str]:
    """The code hash of every compiled module of the built-ins and of the kernel template."""
    return code_hashes(code_modules([get(name) for name in sorted(available())]))


def rewrite_lines(old: dict[str, str], now: dict[str, str]) -> list[str]:
    """``REWRITES`` lines for the modules whose hash is not the one in ``old``."""
    lines = []
    for name, digest in sorted(now.items()):
        if old.get(name) == digest:
            continue
        then = json.dumps(old[name]) if name in old else "None"
        lines.append(f"    {json.dumps(digest)}: {then},  # {name}")
    lines += [f"    # gone since: {name} ({old[name]})" for name in sorted(set(old) - set(now))]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, default=DEFAULT_OLD,
                        help="JSON of the earlier code hashes (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the hashes now as JSON")
    args = parser.parse_args()
    now = current_hashes()
    if args.json:
        print(json.dumps(now, indent=1, sort_keys=True))
        return
    lines = rewrite_lines(json.loads(args.old.read_text()), now)
    print("\n".join(lines) if lines else "# no module changed since")


if __name__ == "__main__":
    main()

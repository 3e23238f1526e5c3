"""What the tests share: running ``sniff``, compiled functions, fixtures' builders, and the
repository's paths (``ROOT``, ``TESTS``), computed once here so that no test file counts how
deep it sits in the tree."""

import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


@functools.cache
def module_file(module: str) -> Path | None:
    """The file of one of the repository's modules or packages (``sim.stats.tally``), or
    None if there is none."""
    base = ROOT.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None

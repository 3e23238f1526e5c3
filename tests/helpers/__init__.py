"""What the tests share: running ``sniff``, compiled functions, fixtures' builders, and the
repository's paths (``ROOT``, ``TESTS``), computed once here so that no test file counts how
deep it sits in the tree."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"

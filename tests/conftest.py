"""Test-suite settings shared by every test module."""

import os

import pytest

from sim.kernels.precompile import compile_shared
from sim.kernels.shared import builtin_strategies

# The background compile of the shared kernel (sim.kernels.shared) would compete with the
# tests for the cores; tests that exercise it turn it back on for themselves.
os.environ["SNIFF_PRECOMPILE"] = "0"


@pytest.fixture(scope="session", autouse=True)
def shared_kernel_compiled():
    """Compile (or load) the kernel of every built-in strategy before any test.

    ``test_strategies`` plays in exactly this kernel anyway, and once it is compiled every
    lineup of built-in strategies in every test (and in the CLI processes tests start)
    loads it instead of compiling a kernel of its own: one compile for the whole suite.
    """
    compile_shared(builtin_strategies())

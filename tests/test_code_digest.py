"""What a run records as its code, and what a moved module keeps.

A run records the digest of the code its lineup plays; ``--resume`` refuses when it changed.
The digest must see every change to what the code computes, and nothing else: not a module
moved to another package, an import renamed, a docstring or comment edited, nor a strategy
the lineup does not play.
"""

from __future__ import annotations

import warnings

from sim.kernels import generate
from sim.kernels.legacy import PREVIOUS_RELEASE
from sim.kernels.runner import lineup_of, lineup_strategies
from strategies import get as get_strategy
from strategies import parse_spec

SOURCE = '''"""A module."""
from sim.core import tiles


def f(x):
    """Twice x."""
    return 2 * x  # doubled
'''


def test_code_hash_ignores_imports_docstrings_and_layout():
    moved = SOURCE.replace("from sim.core import tiles", "from sim import tiles as t")
    redocumented = SOURCE.replace('"""Twice x."""', '"""Double."""').replace("# doubled", "")
    reflowed = SOURCE.replace("return 2 * x", "return (\n        2 * x\n    )")
    base = generate.code_hash(SOURCE)
    assert generate.code_hash(moved) == base
    assert generate.code_hash(redocumented) == base
    assert generate.code_hash(reflowed) == base


def test_code_hash_sees_a_change_of_code():
    assert generate.code_hash(SOURCE.replace("2 * x", "3 * x")) != generate.code_hash(SOURCE)
    assert generate.code_hash(SOURCE.replace("def f(x)", "def g(x)")) != generate.code_hash(
        SOURCE)


def test_the_digest_covers_the_engine_and_the_strategies_that_play():
    modules = generate.code_modules([get_strategy("expert")])
    assert {"sim.core.engine", "sim.core.layout", "strategies.expert",
            "strategies.playout", "strategies.determinize"} <= set(modules)
    assert "strategies" not in modules  # the registry holds no compiled code
    greedy = generate.code_modules([get_strategy("greedy")])
    assert "strategies.expert" not in greedy and "strategies.greedy" in greedy
    assert generate.code_digest([get_strategy("greedy")]) != generate.code_digest(
        [get_strategy("greedy"), get_strategy("expert")])


def test_a_lineup_code_does_not_depend_on_seat_order():
    one = lineup_of(2, [parse_spec("blocker"), parse_spec("greedy")])
    other = lineup_of(2, [parse_spec("greedy"), parse_spec("blocker")])
    assert [s.name for s in lineup_strategies(one)] == ["blocker", "greedy"]
    assert generate.code_digest(lineup_strategies(one)) == generate.code_digest(
        lineup_strategies(other))


def test_runs_of_the_previous_release_are_recognised():
    """The flat release recorded one digest for every built-in lineup; the code of these
    strategies has not changed since, so those runs resume (a changed module would not)."""
    (recorded,) = PREVIOUS_RELEASE
    for names in (["greedy", "random"], ["blocker", "greedy"], ["partner", "greedy"]):
        played = [get_strategy(name) for name in names]
        now = generate.code_digest(played)
        assert generate.same_code(recorded, now, played)
        assert not generate.same_code(recorded, now[::-1], played)  # the code changed since
        assert not generate.same_code("0123456789abcdef", now, played)
    template, modules = PREVIOUS_RELEASE[recorded]
    assert set(generate.CORE_MODULES) <= set(modules) and len(template) == 16


def test_the_old_flat_module_names_still_import_as_the_same_modules():
    import sys

    import sim.core.observation
    import sim.store.io

    for old in ("sim.io", "sim.observation"):  # imported earlier in this process: again
        sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from sim import io as old_io
        from sim import observation as old_view
    assert old_view is sim.core.observation and old_io is sim.store.io
    assert old_view.__spec__.name == "sim.core.observation"  # the real module is untouched
    assert any("sim.observation is now sim.core.observation" in str(w.message) for w in caught)

"""What a run records as its code, and what a moved or re-documented module keeps.

A run records the digest of the code its lineup plays; ``--resume`` refuses when it changed.
The digest must see every change to what the code computes, and nothing else: not a module
moved to another package, an import renamed, a docstring or comment edited, nor a strategy
the lineup does not play.
"""

from __future__ import annotations

from sim.kernels import generate
from sim.kernels.runner import lineup_of, lineup_strategies
from strategies import get as get_strategy
from strategies import parse_spec
from tests.helpers import TESTS

FIXTURES = TESTS / "fixtures"

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
    assert {"sim.core.engine", "sim.core.layout", "strategies.search.expert",
            "strategies.search.playout", "strategies.search.determinize"} <= set(modules)
    assert "strategies" not in modules  # the registry holds no compiled code
    greedy = generate.code_modules([get_strategy("greedy")])
    assert "strategies.search.expert" not in greedy and "strategies.heuristics.greedy" in greedy
    assert generate.code_digest([get_strategy("greedy")]) != generate.code_digest(
        [get_strategy("greedy"), get_strategy("expert")])


def test_a_lineup_code_does_not_depend_on_seat_order():
    one = lineup_of(2, [parse_spec("blocker"), parse_spec("greedy")])
    other = lineup_of(2, [parse_spec("greedy"), parse_spec("blocker")])
    assert [s.name for s in lineup_strategies(one)] == ["blocker", "greedy"]
    assert generate.code_digest(lineup_strategies(one)) == generate.code_digest(
        lineup_strategies(other))


def test_a_model_module_of_another_template_is_rewritten(tmp_path, monkeypatch):
    """``learned:model=PATH`` modules are cached by the model's bytes: one written by another
    version of the template is rewritten on the next use; a current one is left alone."""
    import hashlib

    from strategies.learned import model_files
    from strategies.learned.player import shipped_path

    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path))
    path = shipped_path(2)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    module = tmp_path / "learned" / f"sniff_learned_{digest}.py"
    module.parent.mkdir(parents=True)
    old = model_files.MODULE_TEMPLATE.replace(
        "strategies.learned.net", "strategies.elsewhere_net")
    module.write_text(old.format(source="elsewhere", copy="x", players=2))
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    model_files.model_strategy(get_strategy("learned"), str(path))
    text = module.read_text()
    assert "from strategies.learned.net import load_model" in text
    assert "strategies.elsewhere_net" not in text
    stamp = module.stat().st_mtime_ns
    model_files.model_strategy(get_strategy("learned"), str(path))
    assert module.stat().st_mtime_ns == stamp  # the current template is left alone

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
    added_since = {"sim.core.loop", "sim.core.buffers"}  # the loop, out of the engine since
    assert set(generate.CORE_MODULES) - added_since <= set(modules) and len(template) == 16


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


# The digest each built-in strategy alone recorded before strategies/ moved into rooms
# (release of commit 39a7345, module paths strategies.greedy, strategies.expert, ...).
BEFORE_ROOMS_DIGESTS = {
    "blocker": "a722f3e016c82fcb", "defensive": "16e2fb72aecf9918",
    "expert": "ba3f7c2acaf2e481", "greedy": "2300c51527dcd9d8", "heavy": "be6424ab9f3c0e0f",
    "learned": "fe10dc93d039aedf", "partner": "bd9d18b4b27b1452",
    "random": "86179ad2a1846f84", "rollout": "d0ea84420dd12aa6",
    "weighted": "66b337b288f73326",
}


def test_runs_from_before_the_rooms_resume_unless_their_code_changed_since():
    """Moving strategies/ into rooms left every built-in's code digest as it was; an edit of
    the code is refused. ``learned``'s compiled code changed since (feature version 3: the
    record block and the once-per-decision first layer), so the lineups that can play it
    (``learned``, ``expert``, ``rollout``) recorded then do not resume."""
    changed_since = ("learned", "expert", "rollout")
    for name, recorded in BEFORE_ROOMS_DIGESTS.items():
        played = [get_strategy(name)]
        now = generate.code_digest(played)
        if name in changed_since:
            assert not generate.same_code(recorded, now, played), name
            continue
        # blind to where a module lives; the engine's rewrite for the batch (issue #50)
        # changed no game, so legacy.REWRITTEN still takes the digest recorded then
        assert generate.same_code(recorded, now, played), name
        assert not generate.same_code(recorded[::-1], now, played), name
    for name in changed_since:  # no module without compiled code
        held = generate.code_modules([get_strategy(name)])
        assert not {"strategies.learned.model_files", "sim.errors", "sim.files"} & set(held)
    blocker = get_strategy("blocker")
    assert not generate.same_code(BEFORE_ROOMS_DIGESTS["partner"],
                                  generate.code_digest([blocker]), [blocker])


def test_the_flat_strategy_module_names_still_import_as_the_same_modules():
    import sys

    import strategies.heuristics.features
    import strategies.learned.player
    import strategies.search.expert

    for old in ("strategies.features", "strategies.expert"):
        sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from strategies import expert as old_expert
        from strategies import features as old_features
        from strategies.learned import learned_choice
    assert old_features is strategies.heuristics.features
    assert old_expert is strategies.search.expert
    assert learned_choice is strategies.learned.player.learned_choice
    messages = [str(w.message) for w in caught]
    assert any("strategies.features is now strategies.heuristics.features" in m
               for m in messages)
    assert any("strategies.learned.learned_choice is now strategies.learned.player" in m
               for m in messages)


def test_a_model_module_generated_before_the_rooms_is_rewritten(tmp_path, monkeypatch):
    """``learned:model=PATH`` modules cached before the move import the flat names: the next
    use writes the current template over one; one whose code is current is left alone."""
    import hashlib

    from strategies.learned import model_files
    from strategies.learned.player import shipped_path

    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path))
    path = shipped_path(2)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    module = tmp_path / "learned" / f"sniff_learned_{digest}.py"
    module.parent.mkdir(parents=True)
    old = model_files.MODULE_TEMPLATE.replace(
        "strategies.learned.player", "strategies.learned").replace(
        "strategies.learned.net", "strategies.learned_net")
    module.write_text(old.format(source="elsewhere", copy="x", players=2))
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    model_files.model_strategy(get_strategy("learned"), str(path))
    text = module.read_text()
    assert "from strategies.learned.player import learned_choice" in text
    assert "strategies.learned_net" not in text
    stamp = module.stat().st_mtime_ns
    model_files.model_strategy(get_strategy("learned"), str(path))
    assert module.stat().st_mtime_ns == stamp  # the current template is left alone

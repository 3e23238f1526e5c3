"""What a run records as its code, and what a moved or rewritten module keeps.

A run records the digest of the code its lineup plays; ``--resume`` refuses when it changed.
The digest must see every change to what the code computes, and nothing else: not a module
moved to another package, an import renamed, a docstring or comment edited, nor a strategy
the lineup does not play.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.kernels import generate, rewrites
from sim.kernels.runner import lineup_of, lineup_strategies
from strategies import available, parse_spec
from strategies import get as get_strategy

FIXTURES = Path(__file__).resolve().parent / "fixtures"

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


# The digest each built-in strategy alone recorded with the code on main at commit 55805d0
# (tests/fixtures/run-on-main/make_run.py printed them): runs of that code must resume.
MAIN_DIGESTS = {
    "blocker": "12b854c69e1f674b", "defensive": "1a49368b145f969a",
    "expert": "28979fe0caa0415e", "greedy": "53f24cd70bad9e88", "heavy": "c2aac8efa9afa831",
    "learned": "42a801d581a241a5", "partner": "54597e70f716635c",
    "random": "4266f950db6f35d9", "rollout": "7a0ee17856cf5d31",
    "weighted": "69af549db4f52205",
}


# The code hash now of every compiled module the built-ins play, and of the kernel template.
NOW = generate.code_hashes(generate.code_modules([get_strategy(n) for n in sorted(available())]))


# The digest each built-in strategy alone recorded with the code on main at each earlier stop
# of the project (tests/fixtures/run-on-COMMIT/make_run.py printed them).
STOP_DIGESTS = {
    "5a87044": {
        "blocker": "75561ffbaf04f5d8", "defensive": "e7312d9a2d67acdf",
        "expert": "9246290d7e41bc67", "greedy": "7156eb2603e1227a",
        "heavy": "1aaef4cfe72f79e6", "learned": "90a723d92fadeeb2",
        "partner": "a63da60c0a02d37d", "random": "fa65a1a8dc0c10fb",
        "rollout": "de05bdee606fb470", "weighted": "41da75ee8c8e759d",
    },
    "b65694f": {
        "blocker": "28bcb6a67f1fb0b2", "defensive": "1edf63d8bbd95781",
        "expert": "6ecd3d172d200bea", "greedy": "6cf77cc015ddb529",
        "heavy": "3763820fd868039e", "learned": "5224964d70e4bb6a",
        "partner": "eb9b34b4304677b3", "random": "d39aff132c58d427",
        "rollout": "1994531639808668", "weighted": "2a5da7d38d82dac3",
    },
}


@pytest.mark.parametrize("digests", [MAIN_DIGESTS, *STOP_DIGESTS.values()],
                         ids=["main-55805d0", *(f"stop-{c}" for c in STOP_DIGESTS)])
def test_every_builtin_digest_of_earlier_code_is_still_accepted(digests):
    """A rewrite since that code that changed no game lists its hashes in
    sim.kernels.rewrites, so the digest each built-in recorded then is accepted now; a
    reversed digest, none, or another built-in's is not."""
    assert set(digests) == set(available())
    for name, recorded in digests.items():
        played = [get_strategy(name)]
        now = generate.code_digest(played)
        assert generate.same_code(recorded, now, played), name
        assert not generate.same_code(recorded[::-1], now, played), name
        assert not generate.same_code(None, now, played), name
    blocker = get_strategy("blocker")
    assert not generate.same_code(digests["partner"], generate.code_digest([blocker]),
                                  [blocker])


def test_every_stop_has_its_digests_and_its_fixture():
    """A stop listed in sim.kernels.rewrites is checked here and by tests/test_earlier_runs.py
    (its run folder), and its code hashes then are where scripts/code_hashes.py reads them."""
    assert set(STOP_DIGESTS) == set(rewrites.SINCE_STOPS)
    for commit in rewrites.SINCE_STOPS:
        folder = FIXTURES / f"run-on-{commit}"
        assert (folder / "manifest.json").is_file() and (folder / "README.md").is_file()
        assert set(json.loads((folder / f"{commit}_hashes.json").read_text())) == set(NOW)


def _era_tables() -> dict[str, tuple[dict, Path]]:
    """Each era's table and the JSON of the code hashes then."""
    eras = {"REWRITES": (rewrites.REWRITES, FIXTURES / "run-on-main" / "main_hashes.json")}
    for commit, table in rewrites.SINCE_STOPS.items():
        eras[commit] = (table, FIXTURES / f"run-on-{commit}" / f"{commit}_hashes.json")
    return eras


@pytest.mark.parametrize("era", list(_era_tables()))
def test_every_hash_changed_since_an_era_has_its_entry(era):
    """Each module whose code changed since an era's commit has an entry keyed by its hash
    now in that era's table (what ``scripts/code_hashes.py --all`` prints), and no entry is
    keyed by code that is gone: a module edited without its entries is caught here."""
    table, path = _era_tables()[era]
    then = json.loads(path.read_text())
    changed = {digest for name, digest in NOW.items() if then.get(name) != digest}
    assert changed <= set(table), sorted(changed - set(table))
    assert set(table) <= set(NOW.values()), sorted(set(table) - set(NOW.values()))


def test_the_tables_are_what_code_hashes_writes(tmp_path):
    """``scripts/code_hashes.py --write`` (what regenerates every era's entries after a
    rewrite) gives back rewrites.py as it is, from tables emptied too: none is missing, none
    stale, each era's lines in their table."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "code_hashes", FIXTURES.parents[1] / "scripts" / "code_hashes.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    path = Path(rewrites.__file__)
    text = path.read_text()
    assert script.write_tables(path, NOW) == text
    emptied = tmp_path / "rewrites.py"
    emptied.write_text(script.replace_table(script.replace_table(
        text, "REWRITES: dict[str, str | None] = {", ["}"]),
        "SINCE_STOPS: dict[str, dict[str, str | None]] = {", ["}"]))
    assert "sim.core.loop" not in emptied.read_text()
    assert script.write_tables(emptied, NOW) == text


def _hash(name: str) -> str:
    module = get_strategy(name).module
    return generate.code_hashes([module])[module]


def _digest(*names: str) -> str:
    return generate.code_digest([get_strategy(name) for name in names])


def _same(recorded: str, *names: str) -> bool:
    played = [get_strategy(name) for name in names]
    return generate.same_code(recorded, generate.code_digest(played), played)


# greedy and random import only the engine's modules; blocker and heavy import features too.
FEATURES = "strategies.heuristics.features"


@pytest.fixture
def no_rewrites(monkeypatch):
    """Synthetic tables start from none: the real ones map this code to main's."""
    for table in ("REWRITES", "NEW_IMPORTS", "OLD_IMPORTS", "SINCE_STOPS"):
        monkeypatch.setattr(rewrites, table, {})


def test_a_rewritten_module_is_translated(monkeypatch, no_rewrites):
    """Pretend greedy's module is random's rewritten: random's old digest is greedy's then."""
    assert not _same(_digest("random"), "greedy")
    monkeypatch.setattr(rewrites, "REWRITES", {_hash("greedy"): _hash("random")})
    assert _same(_digest("random"), "greedy")
    assert not _same(_digest("heavy"), "greedy")


def test_a_module_split_in_two_maps_one_half_to_none(monkeypatch, no_rewrites):
    """Pretend random was split into blocker and features: blocker maps to random's hash,
    features (new then) to None, so random's old digest is blocker's then."""
    monkeypatch.setattr(rewrites, "REWRITES", {_hash("blocker"): _hash("random")})
    assert not _same(_digest("random"), "blocker")  # features was not in the code then
    features = generate.code_hashes([FEATURES])[FEATURES]
    monkeypatch.setattr(rewrites, "REWRITES", {_hash("blocker"): _hash("random"),
                                               features: None})
    assert _same(_digest("random"), "blocker")


def test_a_module_newly_imported_is_left_out_only_where_it_is_new(monkeypatch, no_rewrites):
    """Pretend blocker is greedy rewritten to newly import features (unchanged). The edge is
    left out, not the module: a lineup that reaches features through heavy still holds it."""
    monkeypatch.setattr(rewrites, "REWRITES", {_hash("blocker"): _hash("greedy")})
    assert not _same(_digest("greedy"), "blocker")
    monkeypatch.setattr(rewrites, "NEW_IMPORTS", {get_strategy("blocker").module:
                                                  frozenset({FEATURES})})
    assert _same(_digest("greedy"), "blocker")
    assert _same(_digest("greedy", "heavy"), "blocker", "heavy")
    # Mapping features to None instead would have dropped it from heavy's lineup too.
    features = generate.code_hashes([FEATURES])[FEATURES]
    monkeypatch.setattr(rewrites, "NEW_IMPORTS", {})
    monkeypatch.setattr(rewrites, "REWRITES", {_hash("blocker"): _hash("greedy"),
                                               features: None})
    assert not _same(_digest("greedy", "heavy"), "blocker", "heavy")


def test_an_import_dropped_since_is_followed_again(monkeypatch, no_rewrites):
    """Pretend greedy is blocker rewritten to no longer import features (unchanged): the
    closure then is rebuilt with the dropped edge, so blocker's old digest is greedy's then."""
    monkeypatch.setattr(rewrites, "REWRITES", {_hash("greedy"): _hash("blocker")})
    assert not _same(_digest("blocker"), "greedy")
    monkeypatch.setattr(rewrites, "OLD_IMPORTS", {get_strategy("greedy").module:
                                                  frozenset({FEATURES})})
    assert _same(_digest("blocker"), "greedy")
    assert not _same(_digest("random"), "greedy")


def test_a_rewrite_since_a_stop_is_translated_in_its_era_alone(monkeypatch, no_rewrites):
    """Pretend greedy's module is random's rewritten since a stop: random's old digest is
    greedy's at that stop. An entry of another era (another stop's, or main's at 55805d0)
    never mixes into it: no code held both."""
    assert not _same(_digest("random"), "greedy")  # a missing entry: refused
    rewritten = {_hash("greedy"): _hash("random")}
    monkeypatch.setattr(rewrites, "SINCE_STOPS", {"one": rewritten, "two": {}})
    assert _same(_digest("random"), "greedy")
    assert not _same(_digest("heavy"), "greedy")
    template = generate.code_hashes([])[generate.TEMPLATE]
    monkeypatch.setattr(rewrites, "SINCE_STOPS",
                        {"both": {**rewritten, template: "0123456789abcdef"}})
    mixed = generate.digest_at_stop([get_strategy("greedy")], "both")
    assert _same(mixed, "greedy")
    monkeypatch.setattr(rewrites, "SINCE_STOPS",
                        {"one": rewritten, "two": {template: "0123456789abcdef"}})
    assert _same(_digest("random"), "greedy") and not _same(mixed, "greedy")
    monkeypatch.setattr(rewrites, "SINCE_STOPS", {"two": {template: "0123456789abcdef"}})
    monkeypatch.setattr(rewrites, "REWRITES", rewritten)
    assert _same(_digest("random"), "greedy") and not _same(mixed, "greedy")


def test_a_rewritten_template_is_translated(monkeypatch, no_rewrites):
    """The kernel template is keyed by its hash as the modules are."""
    now = generate.code_hashes([])[generate.TEMPLATE]
    played = [get_strategy("greedy")]
    before = generate.digest_before_rewrites(played)
    assert before == _digest("greedy")  # no entry applies to greedy today
    monkeypatch.setattr(rewrites, "REWRITES", {now: "0123456789abcdef"})
    assert generate.digest_before_rewrites(played) != before


def test_a_core_module_new_to_the_kernel_is_left_out(monkeypatch, no_rewrites):
    """``NEW_IMPORTS["<template>"]``: core modules the kernel did not include then. Leaving
    the game loop out that way gives the digest of mapping its hash to None."""
    played = [get_strategy("greedy")]
    loop = generate.code_hashes(["sim.core.loop"])["sim.core.loop"]
    monkeypatch.setattr(rewrites, "NEW_IMPORTS", {generate.TEMPLATE: frozenset({"sim.core.loop"})})
    without = generate.digest_before_rewrites(played)
    assert without != _digest("greedy")
    monkeypatch.setattr(rewrites, "NEW_IMPORTS", {})
    monkeypatch.setattr(rewrites, "REWRITES", {loop: None})
    assert generate.digest_before_rewrites(played) == without


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

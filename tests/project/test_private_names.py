"""No module of ``sim``, ``strategies``, ``scripts``, ``benchmarks`` or ``examples`` reaches
for another package's private name (an underscore name imported, or read off an imported
module): what one package offers another is public, so a private name can change without
breaking a caller elsewhere.
Inside one package (``sim.stats.tally`` and ``sim.stats.intervals``) private names are the
package's own business.

No test reaches a private name either (#61): a test imports no underscore name of ``sim``
or ``strategies`` and reads no ``thing._name`` off an object of ours, so that a test checks
what a caller can rely on and a private name stays free to change. A test's own helpers
(``self._x``), another library's modules (``os._exit``) and pytest's own objects aside."""

from __future__ import annotations

import ast

from tests.helpers import ROOT


def _package(module: str) -> str:
    return module.rsplit(".", 1)[0]


def _ours(module: str) -> bool:
    return module.split(".")[0] in ("sim", "strategies")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _reaches(text: str, module: str) -> list[str]:
    """The private names of other packages that ``module`` (its source ``text``) uses."""
    own = _package(module)
    tree = ast.parse(text)
    found, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if _private(alias.name) and _ours(node.module) and _package(
                        node.module) != own:
                    found.append(f"from {node.module} import {alias.name}")
                elif not _private(alias.name):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            target = modules[node.value.id]
            if _ours(target) and target != own and _package(target) != own:
                found.append(f"{node.value.id}.{node.attr} ({target})")
    return found


# pytest's own objects, as the fixtures that hand them are named: not ours
PYTEST_OBJECTS = frozenset(("request", "monkeypatch", "pytester", "pytestconfig", "config",
                            "capsys", "capfd", "caplog", "recwarn"))


def _test_reaches(text: str) -> list[str]:
    """What a test (its source ``text``) reaches that is private: an underscore name imported
    from ``sim`` or ``strategies``, and each ``thing._name`` read off anything but ``self``
    or ``cls``, a name bound to another library (``os._exit``) or a tests helper, or one of
    pytest's objects (``PYTEST_OBJECTS``)."""
    tree = ast.parse(text)
    found, others = [], set(PYTEST_OBJECTS) | {"self", "cls"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if _ours(node.module) and _private(alias.name):
                    found.append(f"from {node.module} import {alias.name}")
                elif not _ours(node.module):
                    others.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            others.update(alias.asname or alias.name.split(".")[0] for alias in node.names
                          if not _ours(alias.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not (
                isinstance(node.value, ast.Name) and node.value.id in others):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_private_name_is_used_across_packages() -> None:
    folders = ("sim", "strategies", "scripts", "benchmarks", "examples")
    files = [path for folder in folders
             for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 100
    problems = [f"{path.relative_to(ROOT)}: {what}" for path in files
                for what in _reaches(path.read_text(encoding="utf-8"),
                                     ".".join(path.relative_to(ROOT).with_suffix("").parts))]
    assert problems == []


def test_the_check_sees_a_private_import_and_a_private_attribute() -> None:
    """The check itself finds both kinds (else the test above could never fail)."""
    text = ("from sim.hint.position import _kernel\n"
            "from sim.report.aggregate import _same\n"
            "from sim.learn import training\n"
            "training._recorded_config\n")
    assert _reaches(text, "sim.report.example") == [
        "from sim.hint.position import _kernel",
        "training._recorded_config (sim.learn.training)"]


def test_no_test_reaches_a_private_name() -> None:
    """Every Python file under tests/ (its plugins and helpers included), but the fixtures,
    whose scripts record how a fixture was made with the code of their time."""
    tests = ROOT / "tests"
    files = [path for path in sorted(tests.rglob("*.py"))
             if "fixtures" not in path.relative_to(tests).parts]
    assert len(files) > 80
    problems = [f"{path.relative_to(ROOT)}: {what}" for path in files
                for what in _test_reaches(path.read_text(encoding="utf-8"))]
    assert problems == []


def test_the_tests_check_sees_a_private_import_and_a_private_read() -> None:
    """Not vacuous: an underscore import and a private attribute of an object of ours fail;
    a test's own ``self._x``, another library's ``os._exit`` and pytest's objects do not."""
    text = ("import os\n"
            "from sim.kernels.batch import GameBatch, _tiles_of\n"
            "batch = GameBatch(2, ['greedy', None], 1, 0)\n"
            "batch._state\n"
            "self._own, os._exit, monkeypatch._setattr\n")
    assert _test_reaches(text) == ["from sim.kernels.batch import _tiles_of",
                                   "line 4: batch._state"]

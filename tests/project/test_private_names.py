"""No module of ``sim``, ``strategies``, ``scripts``, ``benchmarks`` or ``examples`` reaches
for another package's private name (an underscore name imported, or read off an imported
module): what one package offers another is public, so a private name can change without
breaking a caller elsewhere.
Inside one package (``sim.stats.tally`` and ``sim.stats.intervals``) private names are the
package's own business. The same holds for a name a module leaves out of its ``__all__``: it
is internal to the module's package, and no other package uses it.

No test reaches a private name either: a test imports no underscore name of ``sim``
or ``strategies`` and reads no ``thing._name`` off an object of ours, so that a test checks
what a caller can rely on and a private name stays free to change. A test's own helpers
(``self._x``), another library's modules (``os._exit``) and pytest's own objects aside."""

from __future__ import annotations

import ast
import functools

from tests.helpers import ROOT, module_file


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


@functools.cache
def _face(module: str) -> tuple[set[str], set[str]] | None:
    """What ``module`` offers another package: the names in its ``__all__`` and the library
    modules it imports (``np``); None if it states no ``__all__``. Cached: each module is
    parsed once however many imports name it."""
    tree = ast.parse(module_file(module).read_text(encoding="utf-8"))
    listed = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            listed = set(ast.literal_eval(node.value))
    libraries = {(alias.asname or alias.name).split(".")[0] for node in tree.body
                 if isinstance(node, ast.Import) for alias in node.names}
    return None if listed is None else (listed, libraries)


def _internal_uses(text: str, module: str) -> list[str]:
    """The names of another package's modules, outside their ``__all__``, that ``module``
    (its source ``text``) imports or reads off an imported module."""
    own, found, bound = _package(module), [], {}
    tree = ast.parse(text)

    def check(target: str, name: str, how: str) -> None:
        path = module_file(target) if _ours(target) else None
        face = _face(target) if path else None
        room = target if path and path.name == "__init__.py" else _package(target)
        if face and room != own and not _private(name) and not name.startswith("__") and (
                name not in face[0] | face[1]):
            found.append(how)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if module_file(f"{node.module}.{alias.name}"):
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                else:
                    check(node.module, alias.name, f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            bound.update({alias.asname: alias.name for alias in node.names if alias.asname})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                node.value.id in bound):
            check(bound[node.value.id], node.attr, f"{node.value.id}.{node.attr}")
    return found


def _templates(text: str) -> list[str]:
    """The sources of the generated modules a module's strings hold (``ENGINE_TEMPLATE``):
    each string that imports one of our modules and parses as Python once its format fields
    are filled."""
    import re
    import textwrap

    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(
                r"^\s*(from|import) (sim|strategies)\b", node.value, flags=re.M):
            filled = re.sub(r"(?<!\{)\{[^{}\n]*\}(?!\})", "0", node.value)
            for source in (node.value, filled.replace("{{", "{").replace("}}", "}")):
                try:
                    ast.parse(textwrap.dedent(source))
                except SyntaxError:
                    continue
                found.append(textwrap.dedent(source))
                break
    return found


def test_no_module_uses_another_packages_internal_names() -> None:
    """A name outside its module's ``__all__`` is internal to its package (docs/design.md,
    "Public names"): no other package's module imports it or reads it off the module, nor
    does a generated module whose source it holds (the analyze kernel reads
    ``hint_search.VALUE_WIN``)."""
    files = [path for folder in ("sim", "strategies")
             for path in sorted((ROOT / folder).rglob("*.py"))]
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        problems += [f"{path.relative_to(ROOT)}: {what}"
                     for source in [text, *_templates(text)]
                     for what in _internal_uses(source, module)]
    assert problems == []
    assert len(_templates((ROOT / "sim" / "kernels" / "template.py").read_text())) >= 3
    text = ("from sim.kernels.generate import code_digest, engine_kernel_nowhere\n"
            "from sim.core import engine\nengine.nowhere\nengine.np\n")
    assert _internal_uses(text, "sim.report.example") == [
        "from sim.kernels.generate import engine_kernel_nowhere", "engine.nowhere"]

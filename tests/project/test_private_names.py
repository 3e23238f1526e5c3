"""No module of ``sim``, ``strategies``, ``scripts``, ``benchmarks`` or ``examples`` reaches
for another package's private name (an underscore name imported, or read off an imported
module): what one package offers another is public, so a private name can change without
breaking a caller elsewhere.
Inside one package (``sim.stats.tally`` and ``sim.stats.intervals``) private names are the
package's own business."""

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

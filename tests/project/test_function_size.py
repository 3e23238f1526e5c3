"""No function outside ``sim/cli`` takes more than 10 parameters or runs over 80 lines, no
module runs over 500 lines and no package holds more than 12 modules (#61).

A long function is split into named helpers, a long list of parameters grouped into a frozen
dataclass (``RunControl``, ``Plan``, ``BatchSettings``). Every function counts: methods,
nested and numba-compiled ones (their factories' inner functions too), scripts, benchmarks,
examples and the tests' own helpers. The parameters are the named ones, ``self`` and
``cls`` included (``*args`` and ``**kwargs`` name none); the lines run from ``def`` to the
function's last line (its decorators left out). The generated modules' templates are
strings, not functions of this code, and ``sim/cli``'s click commands take one parameter
per option by design. A module over 500 lines holds two jobs, a package (a folder with an
``__init__.py`` or a ``__main__.py``) of more than 12 modules two concerns: each is split
along its seam. The files are read with ``ast``, nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

FOLDERS = ("sim", "strategies", "scripts", "benchmarks", "examples", "tests")
EXEMPT = ROOT / "sim" / "cli"
MOST_PARAMETERS = 10
MOST_LINES = 80
MODULE_FOLDERS = ("sim", "strategies", "scripts", "benchmarks", "examples")
MOST_MODULE_LINES = 500
MOST_MODULES = 12


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    arguments = function.args
    return len(arguments.posonlyargs) + len(arguments.args) + len(arguments.kwonlyargs)


def oversized(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line name: sizes`` (``path`` relative to ``root``) for each function of
    ``path`` over a limit."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        lines, count = node.end_lineno - node.lineno + 1, parameters(node)
        if count > MOST_PARAMETERS or lines > MOST_LINES:
            name = getattr(node, "name", "lambda")
            found.append(f"{path.relative_to(root)}:{node.lineno} {name}: {count} parameters, "
                         f"{lines} lines")
    return found


def checked_files() -> list[Path]:
    return [path for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
            if not path.is_relative_to(EXEMPT)]


def test_no_function_takes_over_10_parameters_or_runs_over_80_lines() -> None:
    files = checked_files()
    assert len(files) > 200
    problems = [problem for path in files for problem in oversized(path)]
    assert not problems, "split these (#61):\n" + "\n".join(problems)


def test_the_check_finds_a_long_function_and_a_long_signature(tmp_path) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(80))
    source = (f"def long():\n{body}\n\n"
              "class C:\n    def wide(self, a, b, c, d, e, f, g, h, i, *rest, j, **more):\n"
              "        return a\n\n"
              "def fine(a, b, c, d, e, f, g, h, i, j):\n    return a\n")
    path = tmp_path / "example.py"
    path.write_text(source)
    problems = oversized(path, tmp_path)
    assert problems == ["example.py:1 long: 0 parameters, 81 lines",
                        "example.py:85 wide: 11 parameters, 2 lines"]


def long_modules(root: Path = ROOT) -> list[str]:
    """``path: lines`` for each module of ``MODULE_FOLDERS`` under ``root`` over the limit."""
    found = []
    for folder in MODULE_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MOST_MODULE_LINES:
                found.append(f"{path.relative_to(root)}: {lines} lines")
    return found


def crowded_packages(root: Path = ROOT) -> list[str]:
    """``folder: modules`` for each package of ``MODULE_FOLDERS`` under ``root`` (a folder
    with an ``__init__.py`` or a ``__main__.py``) that holds more than ``MOST_MODULES``
    modules (its ``*.py`` but ``__init__.py``)."""
    found = []
    for folder in MODULE_FOLDERS:
        marks = [*(root / folder).rglob("__init__.py"), *(root / folder).rglob("__main__.py")]
        for package in sorted({mark.parent for mark in marks}):
            modules = [p for p in package.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > MOST_MODULES:
                found.append(f"{package.relative_to(root)}: {len(modules)} modules")
    return found


def test_no_module_runs_over_500_lines_and_no_package_holds_over_12() -> None:
    modules = [path for folder in MODULE_FOLDERS for path in (ROOT / folder).rglob("*.py")]
    assert len(modules) > 200
    problems = long_modules() + crowded_packages()
    assert not problems, "split these along a seam (#61):\n" + "\n".join(problems)


def test_the_check_finds_a_long_module_and_a_crowded_package(tmp_path) -> None:
    package = tmp_path / "sim" / "room"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for n in range(13):
        (package / f"m{n}.py").write_text("x = 1\n" * (501 if n == 0 else 500))
    runnable = tmp_path / "scripts" / "tool"
    runnable.mkdir(parents=True)
    (runnable / "__main__.py").write_text("x = 1\n")
    assert long_modules(tmp_path) == ["sim/room/m0.py: 501 lines"]
    assert crowded_packages(tmp_path) == ["sim/room: 13 modules"]
    (package / "m12.py").unlink()
    assert crowded_packages(tmp_path) == []

"""The modules of ``sim/`` and ``strategies/`` import one another in one direction only.

The graph is read from the source with ``ast``, so it holds every import, including those
inside functions (a lazy import is still a dependency). Imports under ``if TYPE_CHECKING:``
are left out: they never run. An edge goes to the module an import names: ``from sim import
io`` is an edge to ``sim.store.io``; ``from sim.core.layout import ARM_L`` an edge to
``sim.core.layout``.
The import of a package's ``__init__`` that Python makes before any of its submodules is
not an edge (every module would depend on it); an explicit ``from sim import name`` is.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

PACKAGES = ("sim", "strategies")

# Strongly connected groups that are known and being removed (none left).
KNOWN_CYCLES: list[set[str]] = []


def module_names() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import and ImportFrom node, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in _imports(ast.parse(path.read_text(), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative import
                    anchor = name.split(".")
                    anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in modules else base)
            for target in targets:
                resolved = _resolve(target, modules)
                if resolved is not None and resolved != name:
                    graph[name].add(resolved)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm: the groups of modules that reach one another (size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def a_cycle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """One shortest cycle through the group's first module, for the message."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    return paths[node] + [start]
                if target not in paths:
                    paths[target] = paths[node] + [target]
                    following.append(target)
        frontier = following
    return sorted(group)


def test_the_graph_is_read():
    graph = import_graph()
    assert "sim.core.engine" in graph["sim.kernels.runner"]
    assert "sim.core.observation" in graph["strategies.heuristics.features"]
    assert "strategies" in graph["strategies.heuristics.greedy"]


def test_no_import_cycles():
    graph = import_graph()
    cycles = [group for group in strongly_connected(graph)
              if not any(group <= known for known in KNOWN_CYCLES)]
    described = [" -> ".join(a_cycle(graph, group)) for group in cycles]
    assert not cycles, "import cycles:\n" + "\n".join(described)


# strategies/ in rooms, bottom first: the registry, the package's own __init__ (which
# re-exports the registry), then the players. heuristics and value are siblings: neither
# imports the other.
STRATEGY_ROOMS = [
    ("strategies.registry",), ("strategies",), ("strategies.heuristics", "strategies.value"),
    ("strategies.learned",), ("strategies.search",),
]
STRATEGIES = {room for layer in STRATEGY_ROOMS for room in layer}

# The map of docs/design.md, bottom first: a room imports only itself and the rooms below
# it. ``sim`` is the package's own ``__init__`` (``sim.simulate``, ``sim.load``).
LAYERS = [
    ("sim.errors", "sim.version", "sim.files"),
    ("sim.cache", "sim.children", "sim.reference"),  # the cache writes its seals with sim.files
    ("sim.core",),
    ("sim.stats",), ("sim.display",),
    *STRATEGY_ROOMS, ("sim.kernels",), ("sim.env",), ("sim.checks",), ("sim.store",),
    ("sim.cluster",), ("sim.run",), ("sim.audit",), ("sim.hint",),
    ("sim.table",), ("sim.openings",), ("sim.analyze",), ("sim.report",), ("sim.compare",),
    ("sim.tune", "sim.learn"),
    ("sim.tournament",), ("sim.precompile",), ("sim.serve",), ("sim.cli",), ("sim",),
]


def room_of(module: str) -> str:
    """The room a module belongs to: the longest room name that is a prefix of it."""
    rooms = [room for layer in LAYERS for room in layer]
    return max((room for room in rooms if module == room or module.startswith(room + ".")),
               key=len)


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        room = room_of(module)
        graph.setdefault(room, set()).update(room_of(t) for t in targets if room_of(t) != room)
    return graph


def test_every_module_is_in_a_room_of_the_map():
    rooms = {room for layer in LAYERS for room in layer}
    assert set(package_graph()) == rooms
    direct = [path.name for path in (ROOT / "sim").glob("*.py")]
    assert len(direct) <= 8, f"sim/ holds {len(direct)} modules directly: {sorted(direct)}"


def test_rooms_import_only_rooms_below_them():
    level = {room: i for i, layer in enumerate(LAYERS) for room in layer}
    upward = [f"{room} -> {target}" for room, targets in sorted(package_graph().items())
              for target in sorted(targets) if level[target] >= level[room]]
    assert not upward, "imports that do not go down the map:\n" + "\n".join(upward)


def test_the_compiled_core_imports_nothing_above_it():
    """The game imports only itself; the kernels only the game and the strategies."""
    graph = package_graph()
    assert graph["sim.core"] <= {"sim.errors"}
    below = {"sim.errors", "sim.files", "sim.cache", "sim.children", "sim.core"} | STRATEGIES
    for room in STRATEGIES:
        assert graph[room] <= below, room
    assert graph["sim.kernels"] <= below


def test_no_room_of_sim_holds_more_than_12_modules():
    """A room that outgrows 12 modules holds two concerns: split it (#61)."""
    crowded = []
    for init in sorted((ROOT / "sim").rglob("__init__.py")):
        modules = [path.name for path in init.parent.glob("*.py") if path.name != "__init__.py"]
        if len(modules) > 12:
            crowded.append(f"{init.parent.relative_to(ROOT)} holds {len(modules)} modules")
    assert not crowded, "\n".join(crowded)


def test_strategies_is_in_rooms():
    """At most 8 modules directly in strategies/, none of its rooms over 12."""
    root = ROOT / "strategies"
    direct = sorted(path.name for path in root.glob("*.py"))
    assert len(direct) <= 8, f"strategies/ holds {len(direct)} modules directly: {direct}"
    for room in sorted(path.parent for path in root.glob("*/__init__.py")):
        modules = [path.name for path in room.glob("*.py") if path.name != "__init__.py"]
        assert len(modules) <= 12, f"{room.name} holds {len(modules)} modules"
        assert f"strategies.{room.name}" in STRATEGIES, f"{room.name} is not in the map"
    assert graph_rooms_of_strategies() == STRATEGIES


def graph_rooms_of_strategies() -> set[str]:
    return {room_of(module) for module in import_graph() if module.startswith("strategies")}


def test_a_room_below_is_refused():
    """The check is not vacuous: an upward import is reported."""
    level = {room: i for i, layer in enumerate(LAYERS) for room in layer}
    assert level[room_of("sim.core.engine")] < level[room_of("sim.run.plan")]
    assert room_of("sim.tournament") == "sim.tournament" and room_of("sim") == "sim"


def test_a_cycle_is_found_and_named():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [{"a", "b", "c"}]
    assert a_cycle(graph, {"a", "b", "c"}) == ["a", "b", "c", "a"]

"""Compiled batch kernels, one per set of strategies, generated as small cached modules.

Why generate source: numba caches a function by its own bytecode and file, and does not
cache closures, while first-class function arguments are experimental and cache
unreliably (numba issues #2956, #6972, #7923). A generated module whose dispatcher calls
the strategies' ``choose`` functions as plain globals compiles with ``cache=True`` and
inlines them. Its file name
carries a hash of the engine's and the strategies' source files, so editing either gives a
new module (and a fresh compile) instead of a stale cache.

Only these generated kernels are cached. The engine's and the strategies' own functions are
plain ``@njit``: numba's cache of a function does not notice edits to the functions it
calls in other files, so a cached callee could link stale rules into a fresh kernel.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from numba import types

from sim.cache import cache_base
from sim.files import write_once
from sim.kernels import rewrites
from sim.kernels.template import KERNEL_TEMPLATE
from strategies import Strategy, StrategyError

_loaded: dict[str, ModuleType] = {}

# Argument types the engine passes to every ``choose``: observation, moves, n_moves, params
# (one row of the seats' parameter matrix), rng.
CHOOSE_SIGNATURE = (
    types.int64[::1], types.int64[::1], types.int64, types.float64[::1], types.uint64[::1]
)
COMPILE_SECONDS = 20


def _stderr_notice(text: str) -> None:
    print(f"sniff: {text}", file=sys.stderr, flush=True)


# Called with one line before a kernel is compiled (None: say nothing, e.g. ``--quiet``).
notice: Callable[[str], None] | None = _stderr_notice


@contextmanager
def compile_notice(function: Callable[[str], None] | None) -> Iterator[None]:
    """Where the one-line "compiling the engine" notice goes within the block (None silences
    it, e.g. ``--quiet``); the previous place is restored after it, however it ends."""
    global notice
    previous, notice = notice, function
    try:
        yield
    finally:
        notice = previous


def cache_dir() -> Path:
    """Where generated kernel modules and their numba caches live (``SNIFF_CACHE_DIR``)."""
    return cache_base() / "kernels"


def kernel_source(strategies: list[Strategy]) -> str:
    imports = "\n".join(
        f"from {s.module} import {s.attribute} as strategy_{i}" for i, s in enumerate(strategies)
    )
    branches = "\n".join(
        f"    {'if' if i == 0 else 'elif'} function == {i}:\n"
        f"        return strategy_{i}(observation, moves, n_moves, params, rng)"
        for i in range(len(strategies))
    )
    return KERNEL_TEMPLATE.format(
        names=docstring_text(", ".join(s.name for s in strategies)), imports=imports,
        branches=branches,
    )


def docstring_text(text: str) -> str:
    """``text`` safe inside a generated module's docstring: printable ASCII but quotes and
    backslashes (a model path such as ``x\"\"\"; import os ...`` would otherwise end the
    docstring and run as code); anything else becomes ``?``."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in text)


# The modules whose compiled functions every kernel contains (besides its strategies' own);
# editing any other module (reports, the command line) leaves every cached kernel valid.
CORE_MODULES = (
    "sim.core.tiles", "sim.core.layout", "sim.core.rng", "sim.core.seating", "sim.core.record",
    "sim.core.observation", "sim.core.engine", "sim.core.buffers", "sim.core.loop",
)
# Modules that hold no compiled code: the strategies' registry (names, parameters and parsing;
# a run records its parameters itself, so adding a strategy leaves the code of every other
# unchanged), the exceptions, the file writers and the cache's place. Their edits change no
# game, so they are in no code digest.
NOT_COMPILED = ("strategies", "sim.errors", "sim.files", "sim.cache")
# A module whose compiled code bakes in the contents of files (a learned strategy's shipped
# networks) lists their paths in this attribute; their bytes are part of the code digest.
DATA_FILES = "COMPILED_DATA_FILES"
# The kernel template's name among module names (code_hashes, sim.kernels.rewrites).
TEMPLATE = "<template>"


def _module(name: str) -> ModuleType:
    return sys.modules.get(name) or importlib.import_module(name)


# (path, mtime, size) -> parsed tree or code hash: a kernel is looked up per traced game, and
# parsing every module each time cost 40 times the games; an edited file has a new key.
_parsed: dict[tuple, ast.Module] = {}
_hashed: dict[tuple, str] = {}
_imports: dict[tuple, set[tuple[str, str]]] = {}


def _file_key(path: Path) -> tuple:
    stat = path.stat()
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _parse(path: Path) -> ast.Module:
    key = _file_key(path)
    if key not in _parsed:
        _parsed[key] = ast.parse(path.read_text())
    return _parsed[key]


def _file_code_hash(path: Path) -> str:
    key = _file_key(path)
    if key not in _hashed:
        _hashed[key] = code_hash(path.read_text())
    return _hashed[key]


def _imported_modules(module: ModuleType) -> set[str]:
    """The modules a module's source imports (inside functions too), as loaded module names."""
    path = Path(inspect.getfile(module))
    key = _file_key(path)
    if key not in _imports:
        _imports[key] = _imported_names(_parse(path))
    found = {full if full in sys.modules else base for full, base in _imports[key]}
    return {name for name in found if name in sys.modules}


def _imported_names(tree: ast.Module) -> set[tuple[str, str]]:
    """(``a.b``, ``a``) for ``from a import b``: a module ``a.b`` if there is one, else ``a``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((alias.name, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update((f"{node.module}.{alias.name}", node.module) for alias in node.names)
    return names


def code_modules(strategies: Sequence[Strategy]) -> list[str]:
    """Every module whose code the games of these strategies run: the engine's, each
    strategy's module and what it imports from ``strategies``, ``sim`` or its own package."""
    return module_closure([s.module for s in strategies])


def module_closure(modules: Sequence[str],
                   skip: Mapping[str, Collection[str]] | None = None,
                   extra: Mapping[str, Collection[str]] | None = None) -> list[str]:
    """The engine's modules, these modules and every module they import, directly or not,
    from ``sim``, ``strategies`` or their own packages (``NOT_COMPILED`` left out). ``skip``
    leaves out import edges (module -> the imports not followed; ``"<template>"``: core
    modules left out) and ``extra`` adds edges (module -> imports it no longer has), to
    rebuild a closure as it was before imports were changed."""
    skip, extra = skip or {}, extra or {}
    found = set(CORE_MODULES) - set(skip.get(TEMPLATE, ()))
    pending = list(modules)
    roots = {"sim", "strategies"} | {name.split(".")[0] for name in modules}
    while pending:
        name = pending.pop()
        if name in found or name in NOT_COMPILED:
            continue
        found.add(name)
        pending.extend(n for n in _imported_modules(_module(name))
                       if n.split(".")[0] in roots and n not in skip.get(name, ()))
        pending.extend(extra.get(name, ()))
    return sorted(found)


def source_files(strategies: Sequence[Strategy]) -> list[Path]:
    """The files of :func:`code_modules`."""
    return module_files(code_modules(strategies))


def module_files(modules: Sequence[str]) -> list[Path]:
    return [Path(inspect.getfile(_module(name))) for name in modules]


def data_files(modules: Sequence[str]) -> list[Path]:
    """The files whose contents these modules' compiled code bakes in (``DATA_FILES``)."""
    return [Path(path) for name in modules for path in getattr(_module(name), DATA_FILES, ())]


def _strip(tree: ast.AST) -> ast.AST:
    """Drop imports and docstrings everywhere: they do not change what the code computes."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        kept = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
        if kept and isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and (
                isinstance(kept[0], ast.Expr) and isinstance(kept[0].value, ast.Constant)
                and isinstance(kept[0].value.value, str)):
            kept = kept[1:]
        node.body = kept or [ast.Pass()]
    return tree


def code_hash(source: str) -> str:
    """A hash of what a module's code computes, blind to its imports, docstrings, comments
    and line layout: a module moved to another package, or re-documented, keeps its hash."""
    return hashlib.sha256(ast.dump(_strip(ast.parse(source))).encode()).hexdigest()[:16]


@functools.cache
def template_hash() -> str:
    """:func:`code_hash` of the generated kernel's own code (the template, filled neutrally)."""
    return code_hash(KERNEL_TEMPLATE.format(names="", imports="", branches="    pass"))


def generated_name(prefix: str, template: str, roots: Sequence[str]) -> str:
    """The name of a generated one-file module of ``cache=True`` wrappers (``sniff hint``'s
    search, ``sniff learn``'s games): ``prefix`` and a hash of its template and of every file
    whose compiled code it may hold (``roots`` and what they import, their data files).
    numba keys a function's cache by its own file only, so an edit of any callee gives the
    module a new name, and a fresh compile, instead of a stale cache."""
    digest = hashlib.sha256(template.encode())
    modules = module_closure(roots)
    for path in [*module_files(modules), *data_files(modules)]:
        digest.update(path.read_bytes())
    return f"{prefix}_{digest.hexdigest()[:16]}"


def write_generated(name: str, source: str) -> Path:
    """Write a generated module ``name`` into the cache folder, once (``sim.files``); its
    path."""
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    return write_once(directory / f"{name}.py", source.encode())


def import_generated(path: Path) -> ModuleType:
    """Import a generated module from its file (numba then finds its cache beside it)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _combined(template: str, hashes: list[str]) -> str:
    return hashlib.sha256("".join([template, *sorted(hashes)]).encode()).hexdigest()[:16]


def code_digest(strategies: Sequence[Strategy]) -> str:
    """A hash of the code that the games of these strategies run (:func:`code_modules`, the
    kernel template, the data files their code bakes in), blind to where each module lives
    and how it is documented.

    Pass the strategies that play (a run's lineup), not the kernel's whole set: two kernels
    that hold the lineup play the same games whatever else they hold (the dispatch id of a
    strategy never reaches a result), so a run compares this to know whether the code
    changed under it, and adding or editing a strategy it does not play changes nothing.
    """
    return _digest_of(code_modules(strategies))


def _digest_of(names: Sequence[str]) -> str:
    """The digest of these modules' code and the data files it bakes in."""
    return _combined(template_hash(), _hashes_of(names))


def _hashes_of(names: Sequence[str]) -> list[str]:
    """The code hash of each module and the hash of each data file its code bakes in."""
    hashes = [_file_code_hash(path) for path in module_files(names)]
    return hashes + [hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in data_files(names)]


def code_hashes(modules: Sequence[str]) -> dict[str, str]:
    """The code hash of each of these modules and of the kernel template (``"<template>"``):
    what ``sim.kernels.rewrites`` compares with the code of an earlier commit."""
    hashes = {TEMPLATE: template_hash()}
    hashes.update(zip(modules, (_file_code_hash(p) for p in module_files(modules)), strict=True))
    return hashes


def same_code(recorded: str | None, current: str, strategies: Sequence[Strategy]) -> bool:
    """Whether a run that recorded the digest ``recorded`` ran the code whose digest is
    ``current`` (these strategies' now): the same digest, or one this code had before
    rewrites that changed no game (``sim.kernels.rewrites``: on main at 55805d0 or at any
    earlier stop)."""
    if recorded == current:
        return True
    if recorded is None or current != code_digest(strategies):
        return False
    return recorded == digest_before_rewrites(strategies) or any(
        recorded == digest_at_stop(strategies, commit) for commit in rewrites.SINCE_STOPS)


def digest_before_rewrites(strategies: Sequence[Strategy]) -> str:
    """The digest these strategies' code had before the rewrites of ``sim.kernels.rewrites``:
    the closure without the imports added since, each hash as it was, new modules left out."""
    names = module_closure([s.module for s in strategies], skip=rewrites.NEW_IMPORTS,
                           extra=rewrites.OLD_IMPORTS)
    return _digest_then(names, rewrites.REWRITES)


def digest_at_stop(strategies: Sequence[Strategy], commit: str) -> str:
    """The digest these strategies' code had on main at the earlier stop ``commit`` (a key of
    ``rewrites.SINCE_STOPS``; the same imports): that era's table alone, so that a run is
    matched with code that existed, never with a mix of two eras'."""
    return _digest_then(code_modules(strategies), rewrites.SINCE_STOPS[commit])


def _digest_then(names: Sequence[str], table: Mapping[str, str | None]) -> str:
    """The digest of these modules with each hash that ``table`` lists as it was then."""
    then = [table.get(h, h) for h in _hashes_of(names)]
    template = table.get(template_hash(), template_hash())
    return _combined(template, [h for h in then if h is not None])


def kernel_path(strategies: list[Strategy]) -> tuple[Path, str, str]:
    """The generated module's file for these strategies (written if absent), its source and
    the code digest."""
    source = kernel_source(strategies)
    code = code_digest(strategies)
    name = f"sniff_kernel_{hashlib.sha256((source + code).encode()).hexdigest()[:16]}"
    path = write_generated(name, source)
    return path, source, code


def load_kernel(strategies: list[Strategy]) -> ModuleType:
    """The kernel module for these strategies, in this order (dispatch id = position).

    The module's ``code`` attribute is its :func:`code_digest`.
    """
    source = kernel_source(strategies)
    if source in _loaded:
        # One kernel per strategy set and process: the code a run started with is the code
        # it finishes with, even if the source files are edited meanwhile.
        return _loaded[source]
    path, source, code = kernel_path(strategies)
    if not is_compiled(path):
        for strategy in strategies:
            if not strategy.module.startswith("strategies."):
                check_signature(strategy)
        if notice is not None:
            notice(
                f"compiling the engine for {', '.join(s.name for s in strategies)} (first use "
                f"of this set of strategies, about {COMPILE_SECONDS} s; later runs load it "
                "from the cache)"
            )
    module = import_generated(path)
    module.code = code
    _loaded[source] = module
    return module


def is_loaded(strategies: list[Strategy]) -> bool:
    """Whether this process has loaded the kernel for these strategies already."""
    return kernel_source(strategies) in _loaded


def is_compiled(path: Path, functions: tuple[str, ...] = ("play_batch",)) -> bool:
    """Whether numba's cache beside the kernel module holds these compiled functions (numba
    writes a function's index file last, so its presence means the entry is complete)."""
    cache = path.parent / "__pycache__"
    return all(any(cache.glob(f"{path.stem}.{name}-*.nbi")) for name in functions)


def check_signature(strategy: Strategy) -> None:
    """Compile a plugin's ``choose`` alone with the engine's argument types.

    A mistake then gets one line naming the plugin, instead of the pages of typing errors
    numba gives when it meets the mistake inside the whole game loop.
    """
    module = sys.modules.get(strategy.module) or importlib.import_module(strategy.module)
    function = getattr(module, strategy.attribute)
    where = f"strategy {strategy.name!r} (module {strategy.module})"
    try:
        function.compile(CHOOSE_SIGNATURE)
    except Exception as error:
        first = next((line for line in str(error).splitlines() if line.strip()), "")
        raise StrategyError(
            f"{where}: choose(observation, moves, n_moves, params, rng) does not compile "
            f"with the engine's argument types: {type(error).__name__}: {first.strip()}"
        ) from None
    returned = function.overloads[CHOOSE_SIGNATURE].signature.return_type
    if not isinstance(returned, types.Integer):
        raise StrategyError(f"{where}: choose must return an integer index, it returns {returned}")

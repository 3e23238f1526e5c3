"""The compiled code of the game, generated as small cached modules: the game loop once, and
each strategy on its own.

Why two kinds: the game loop (``sim.core.loop``) is what takes numba a minute to compile; a
strategy's ``choose`` takes a second. So the loop is compiled once per machine
(``engine_kernel``, from ``sim.kernels.template.ENGINE_TEMPLATE``) around a dispatcher that
calls each seat's strategy through its address (``sim.core.calls``), and each strategy is
compiled alone into a C-callable wrapper (``chooser``, ``CHOOSER_TEMPLATE``) whose address a
run hands the loop. A new lineup compiles nothing; a new or edited strategy compiles itself.

Why generated source: numba caches a function by its own bytecode and file, and does not
notice edits to the functions it calls in other files. A generated module's name carries a
hash of every file whose compiled code it may hold (``generated_name``), so editing the
engine or a strategy gives a new module (and a fresh compile) instead of a stale cache. Only
these generated modules are cached; the engine's and the strategies' own functions are plain
``@njit``.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from numba import types

from sim.core.calls import PAIRED_SLOT, SEARCH_SLOT, SLOTS
from sim.kernels.cachefiles import (
    compiling_alone,
    docstring_text,
    import_generated,
    is_compiled,
    write_generated,
)
from sim.kernels.template import (
    CHOOSER_TEMPLATE,
    ENGINE_TEMPLATE,
    PAIRED_TEMPLATE,
    SEARCHER_TEMPLATE,
)
from strategies import Strategy, StrategyError, get

__all__ = [
    "chooser", "chooser_path", "chooser_source", "code_digest", "compile_notice",
    "engine_kernel", "engine_path", "generated_name", "load_paired", "load_policies",
    "load_search", "notice", "paired_path", "python_choose", "python_search",
]

_loaded: dict[str, ModuleType] = {}

# Argument types the engine passes to every ``choose``: observation, moves, n_moves, params
# (one row of the seats' parameter matrix), rng.
ARRAY_SIGNATURE = (
    types.int64[::1], types.int64[::1], types.int64, types.float64[::1], types.uint64[::1]
)
# About how long the first compile of the game loop takes on a quiet 2-core machine
# (docs/speed.md), and of one strategy.
ENGINE_SECONDS = 25
SEARCH_SECONDS = 60
PAIRED_SECONDS = 40  # the paired search alone (its play-outs, deals and valuation)


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


# The modules whose compiled functions every kernel contains (besides its strategies' own);
# editing any other module (reports, the command line) leaves every cached kernel valid.
CORE_MODULES = (
    "sim.core.tiles", "sim.core.layout", "sim.core.rng", "sim.core.seating", "sim.core.record",
    "sim.core.observation", "sim.core.engine", "sim.core.buffers", "sim.core.loop",
    "sim.core.calls",
)
# Modules that hold no compiled code: the strategies' registry (names, parameters and parsing;
# a run records its parameters itself, so adding a strategy leaves the code of every other
# unchanged), the exceptions, the file writers and the cache's place. Their edits change no
# game, so they are in no code digest.
NOT_COMPILED = ("strategies", "sim.errors", "sim.files", "sim.cache")
# A module whose compiled code bakes in the contents of files (a learned strategy's shipped
# networks) lists their paths in this attribute; their bytes are part of the code digest.
DATA_FILES = "COMPILED_DATA_FILES"


def _module(name: str) -> ModuleType:
    return sys.modules.get(name) or importlib.import_module(name)


# (path, mtime, size) -> parsed tree or code hash: a kernel is looked up per traced game, and
# parsing every module each time cost far more than the games; an edited file has a new key.
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
    names: set[tuple[str, str]] = set()
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


def module_closure(modules: Sequence[str], engine: bool = True) -> list[str]:
    """These modules and every module they import, directly or not, from ``sim``,
    ``strategies`` or their own packages (``NOT_COMPILED`` left out); with ``engine``, the
    engine's modules (``CORE_MODULES``) too."""
    found: set[str] = set(CORE_MODULES) if engine else set()
    pending = list(modules)
    roots = {"sim", "strategies"} | {name.split(".")[0] for name in modules}
    while pending:
        name = pending.pop()
        if name in found or name in NOT_COMPILED:
            continue
        found.add(name)
        pending.extend(n for n in _imported_modules(_module(name)) if n.split(".")[0] in roots)
    return sorted(found)


def module_files(modules: Sequence[str]) -> list[Path]:
    return [Path(inspect.getfile(_module(name))) for name in modules]


def data_files(modules: Sequence[str]) -> list[Path]:
    """The files whose contents these modules' compiled code bakes in (``DATA_FILES``)."""
    return [Path(path) for name in modules for path in getattr(_module(name), DATA_FILES, ())]


def _strip(tree: ast.AST) -> ast.AST:
    """Drop imports and docstrings everywhere: they do not change what the code computes."""
    node: Any  # any node whose ``body`` is a list of statements
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
    """:func:`code_hash` of the generated modules' own code (the engine's and a strategy
    wrapper's templates, filled neutrally)."""
    return code_hash(ENGINE_TEMPLATE + SEARCHER_TEMPLATE
                     + CHOOSER_TEMPLATE.format(name="", module="m", attribute="choose"))


def generated_name(prefix: str, template: str, roots: Sequence[str], engine: bool = True) -> str:
    """The name of a generated one-file module of ``cache=True`` wrappers (``sniff hint``'s
    search, ``sniff learn``'s games): ``prefix`` and a hash of its template and of every file
    whose compiled code it may hold (``roots`` and what they import, their data files).
    numba keys a function's cache by its own file only, so an edit of any callee gives the
    module a new name, and a fresh compile, instead of a stale cache."""
    digest = hashlib.sha256(template.encode())
    modules = module_closure(roots, engine)
    for path in [*module_files(modules), *data_files(modules)]:
        digest.update(path.read_bytes())
    return f"{prefix}_{digest.hexdigest()[:16]}"


def _combined(template: str, hashes: list[str]) -> str:
    return hashlib.sha256("".join([template, *sorted(hashes)]).encode()).hexdigest()[:16]


def code_digest(strategies: Sequence[Strategy]) -> str:
    """A hash of the code that the games of these strategies run (:func:`code_modules`, the
    generated modules' templates, the data files their code bakes in), blind to where each
    module lives and how it is documented.

    Pass the strategies that play (a run's lineup): adding or editing a strategy a run does
    not play changes nothing for it. A run records this to know, at ``--resume``, whether the
    code changed under it.
    """
    names = code_modules(strategies)
    hashes = [_file_code_hash(path) for path in module_files(names)]
    hashes += [hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in data_files(names)]
    return _combined(template_hash(), hashes)


# --- the generated modules

_engine: ModuleType | None = None
_announced: set[str] = set()  # entry points whose compile this process announced
_choosers: dict[tuple[str, str, str], tuple[ModuleType, int]] = {}
# One thread at a time loads or compiles (sniff serve's warm-up thread and a request may ask
# at once); reentrant, since a search player's wrapper loads the play-out policies first.
_loading = threading.RLock()


def engine_path() -> Path:
    """The generated module of the game loop (written if absent): its name hashes the
    template and every engine module."""
    return write_generated(generated_name("sniff_engine", ENGINE_TEMPLATE, ["sim.core.calls"]),
                           ENGINE_TEMPLATE)


def engine_kernel(uses: tuple[str, ...] = ("play_batch",)) -> ModuleType:
    """The game loop compiled once: the module whose entry points play any lineup (loaded once
    per process, so that a run finishes with the code it started with). ``uses``: the entry
    points the caller is about to call, whose first compile (numba compiles each at its first
    call, then loads it from the cache) is announced through :data:`notice`."""
    global _engine
    with _loading:
        path = engine_path() if _engine is None else Path(inspect.getfile(_engine))
        if not set(uses) <= _announced and not is_compiled(path, uses) and notice is not None:
            _announced.update(uses)
            notice(f"compiling the game engine ({', '.join(uses)}; first use on this machine "
                   f"or after an update, about {ENGINE_SECONDS} s; every lineup then starts "
                   "at once)")
        if _engine is None:
            _engine = import_generated(path)
        return _engine


def chooser_source(strategy: Strategy) -> str:
    """One strategy's generated wrapper module, named without a model file's path (the name
    before ``:``): a moved model keeps its wrapper; its module (hash of its bytes) differs."""
    return CHOOSER_TEMPLATE.format(name=docstring_text(strategy.name.split(":", 1)[0]),
                                   module=strategy.module, attribute=strategy.attribute)


def chooser_path(strategy: Strategy) -> Path:
    """One strategy's generated wrapper module (written if absent), named by a hash of it and
    of every file its compiled code may hold: an edit compiles that strategy alone again."""
    source = chooser_source(strategy)
    safe = "".join(c if c.isalnum() else "_" for c in strategy.name.split(":", 1)[0])[:24]
    return write_generated(generated_name(f"sniff_choose_{safe}", source, [strategy.module],
                                          engine=False), source)


def load_policies() -> None:
    """Put the address of every play-out policy (``strategies.search.playout.POLICIES`` but
    greedy, which is compiled in) in its slot of ``sim.core.calls.SLOTS``, compiling each the
    first time: the play-outs of ``expert``, ``rollout`` and ``sniff hint`` call them there."""
    from strategies.search.playout import POLICIES

    # learned first: the slowest to compile, and sniff serve's default opponent, which the
    # first game then loads instead of waiting for the other five
    order = sorted(range(1, len(POLICIES)), key=lambda index: POLICIES[index] != "learned")
    missing = [(index, get(POLICIES[index])) for index in order if not SLOTS[index]]
    if not missing:
        return
    new = [s.name for _, s in missing if not is_compiled(chooser_path(s), ("chooser",))]
    if new and notice is not None:
        notice(f"compiling the play-out policies {', '.join(new)} (first use on this machine "
               "or after an update, a few seconds each)")
    with compile_notice(None):  # said above, once
        for index, strategy in missing:
            SLOTS[index] = chooser(strategy)


_searcher: list[ModuleType] = []  # the searches, kept alive while their addresses are in use


def searcher_path() -> Path:
    """The generated module of expert's search (written if absent), named by a hash of every
    file its compiled code may hold."""
    return write_generated(generated_name("sniff_search_expert", SEARCHER_TEMPLATE,
                                          ["strategies.search.expert"], engine=False),
                           SEARCHER_TEMPLATE)


def paired_path() -> Path:
    """The generated module of the paired search (``sniff hint``'s and ``sniff analyze``'s),
    named like :func:`searcher_path`'s."""
    return write_generated(generated_name("sniff_search_paired", PAIRED_TEMPLATE,
                                          ["strategies.search.paired"], engine=False),
                           PAIRED_TEMPLATE)


def load_search() -> None:
    """Put the address of ``expert``'s search (``strategies.search.expert.run_search``,
    compiled alone the first time) in ``SLOTS[SEARCH_SLOT]``, and the play-out policies it
    calls in theirs: ``expert``'s ``choose``, ``sniff learn``'s teacher and the tests call it
    there, so the search is compiled once for all of them."""
    _load_searcher(SEARCH_SLOT, searcher_path, "expert's search", SEARCH_SECONDS)


def load_paired() -> None:
    """The same for the paired search (``strategies.search.paired``) in
    ``SLOTS[PAIRED_SLOT]``: ``sniff hint``, ``sniff serve``'s hints and ``sniff analyze``
    call it there."""
    _load_searcher(PAIRED_SLOT, paired_path, "the hint search", PAIRED_SECONDS)


def _load_searcher(index: int, where: Callable[[], Path], name: str, seconds: int) -> None:
    if SLOTS[index]:
        return
    load_policies()
    with _loading:
        if SLOTS[index]:
            return
        path = where()
        with compiling_alone(path, ("searcher",)):
            if not is_compiled(path, ("searcher",)) and notice is not None:
                notice(f"compiling {name} (first use on this machine or after an update, "
                       f"about {seconds} s)")
            module = import_generated(path)
        _searcher.append(module)
        SLOTS[index] = int(module.searcher.address)


def python_search(mode: int, observation, moves, n_moves: int, params, rng, values) -> int:
    """``strategies.search.expert.run_search`` called from Python through its compiled-alone
    wrapper (:func:`load_search`; no compile of its own): the arrays as for
    :func:`python_choose`, ``values`` a float64 array it fills."""
    import ctypes

    import numpy as np

    load_search()
    function = _searcher[0].searcher.ctypes
    if not (isinstance(rng, np.ndarray) and rng.dtype == np.uint64 and rng.flags.c_contiguous):
        raise TypeError("rng must be a contiguous uint64 array (its word is advanced)")
    if not (isinstance(values, np.ndarray) and values.dtype == np.float64
            and values.flags.c_contiguous):
        raise TypeError("values must be a contiguous float64 array (it is filled)")
    arrays = [np.ascontiguousarray(observation, dtype=np.int64),
              np.ascontiguousarray(moves, dtype=np.int64),
              np.ascontiguousarray(params, dtype=np.float64), rng, values]
    pointers = (arrays[0].ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                arrays[1].ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                arrays[2].ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                arrays[3].ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)),
                arrays[4].ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    return int(function(int(mode), pointers[0], arrays[0].size, pointers[1], arrays[1].size,
                        int(n_moves), pointers[2], arrays[2].size, pointers[3], arrays[3].size,
                        pointers[4], arrays[4].size))


def _searches(strategy: Strategy) -> bool:
    """Whether the strategy's compiled code may call expert's search through its slot."""
    return "strategies.search.expert" in module_closure([strategy.module], engine=False)


def _plays_out(strategy: Strategy) -> bool:
    """Whether the strategy's compiled code may call the play-out policies' slots."""
    return "strategies.search.playout" in module_closure([strategy.module], engine=False)


def chooser(strategy: Strategy) -> int:
    """The address of ``strategy``'s compiled ``choose`` (compiled alone the first time, then
    loaded from the cache), which the game loop calls (``sim.core.calls.call_choose``).
    Loaded once per process and kept alive, so that the address stays valid."""
    key = (strategy.module, strategy.attribute, strategy.name)
    with _loading:
        if key not in _choosers:
            _choosers[key] = _load_chooser(strategy)
        return _choosers[key][1]


def _load_chooser(strategy: Strategy) -> tuple[ModuleType, int]:
    if _searches(strategy):
        load_search()
    elif _plays_out(strategy):
        load_policies()
    path = chooser_path(strategy)
    with compiling_alone(path, ("chooser",)):
        if not is_compiled(path, ("chooser",)):
            if notice is not None:
                notice(f"compiling strategy {strategy.name} (first use, or its code changed; "
                       "a few seconds)")
            if not strategy.module.startswith(("strategies.", "sim.")):
                check_signature(strategy)  # a plugin's mistake in one line naming it
        try:
            module = import_generated(path)
        except Exception as error:  # a plugin numba cannot compile in the wrapper
            raise StrategyError(f"strategy {strategy.name!r} (module {strategy.module}) does "
                                f"not compile: {_first_line(error)}") from None
    return module, int(module.chooser.address)


def python_choose(strategy: Strategy) -> Callable[..., int]:
    """``strategy``'s compiled ``choose(observation, moves, n_moves, params, rng)`` callable
    from Python, through the same cached wrapper the game loop calls (no compile of its own):
    ``observation`` and ``moves`` int64 arrays, ``params`` float64, ``rng`` a one-element
    uint64 array whose word it advances, as in the engine. Returns the chosen index (an
    exception inside the strategy is ``RAISED``)."""
    import ctypes

    import numpy as np

    chooser(strategy)
    function = _choosers[(strategy.module, strategy.attribute, strategy.name)][0].chooser.ctypes
    kinds = (np.int64, np.int64, np.float64, np.uint64)

    def choose(observation, moves, n_moves, params, rng) -> int:
        if not (isinstance(rng, np.ndarray) and rng.dtype == np.uint64
                and rng.flags.c_contiguous):
            raise TypeError("rng must be a contiguous uint64 array (its word is advanced)")
        arrays = [np.ascontiguousarray(a, dtype=kind) for a, kind in
                  zip((observation, moves, params), kinds[:3], strict=True)] + [rng]
        pointers = (arrays[0].ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                    arrays[1].ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                    arrays[2].ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                    arrays[3].ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)))
        return int(function(pointers[0], arrays[0].size, pointers[1], arrays[1].size,
                            int(n_moves), pointers[2], arrays[2].size, pointers[3],
                            arrays[3].size))

    return choose


def _first_line(error: BaseException) -> str:
    first = next((line for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {first.strip()}"


def check_signature(strategy: Strategy) -> None:
    """Compile a plugin's ``choose`` alone with the engine's argument types.

    A mistake then gets one line naming the plugin, instead of the pages of typing errors
    numba gives when it meets the mistake inside the whole game loop.
    """
    module = sys.modules.get(strategy.module) or importlib.import_module(strategy.module)
    function = getattr(module, strategy.attribute)
    where = f"strategy {strategy.name!r} (module {strategy.module})"
    try:
        function.compile(ARRAY_SIGNATURE)
    except Exception as error:
        raise StrategyError(
            f"{where}: choose(observation, moves, n_moves, params, rng) does not compile "
            f"with the engine's argument types: {_first_line(error)}"
        ) from None
    returned = function.overloads[ARRAY_SIGNATURE].signature.return_type
    if not isinstance(returned, types.Integer):
        raise StrategyError(f"{where}: choose must return an integer index, it returns {returned}")

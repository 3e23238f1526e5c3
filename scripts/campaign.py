"""An adversarial campaign against sniff: hostile caches, folders, plugins, inputs, requests.

Each case runs one ``sniff`` command in a process of its own, in a fresh folder (with its
own copy of the compile cache where the case tampers with one), under a time limit and an
address-space limit, and is classified by what came of it:

- ``clean``: one clear line and a non-zero exit, or the right output (exit 0);
- ``code execution``: a module, pickle or file the case planted ran (it leaves a file);
- ``data loss``: a file the case protects (a victim outside the folder, a run's parts)
  changed or went away;
- ``silently wrong``: exit 0 with an answer the case knows is wrong (a refusal expected);
- ``hang``: still running at the limit (a case that may block on purpose, such as a Python
  player that sleeps, gets Ctrl-C first: ending then in one line is clean);
- ``traceback``: a Python traceback, or death by a signal;
- ``unbounded memory``: past the memory bound;
- ``unclear``: refused, but not in one line (several lines, or none).

Surfaces: ``cache`` (``SNIFF_CACHE_DIR``, the generated modules and numba's files beside
them, the locks and markers of the background compile), ``folders`` (run, tournament,
openings and tuning folders, and the outputs every command writes), ``plugins``
(``--plugin`` modules and ``register_python`` players), ``cli`` (flags, numbers, names,
special files as inputs), ``serve`` (requests to one ``sniff serve``) and ``query`` (SQL).

Usage: ``python scripts/campaign.py`` (every case, a few minutes; ``--cases N``: the first N
of each surface, ``--surface S``: one surface, ``--out FILE``: one JSON line per case,
``--keep``: leave the work folder). Run it as root for the cases that need another owner
(they are skipped otherwise). Prints the table of outcomes by surface and each case that
is not clean.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("clean", "code execution", "data loss", "silently wrong", "hang", "traceback",
         "harness error", "unbounded memory", "unclear")
SURFACES = ("cache", "folders", "plugins", "cli", "serve", "query")
MEMORY_LIMIT = 6 * 2**30  # address space of a case (numba and DuckDB map much more than they use)
MEMORY_BOUND = 2 * 2**30  # resident: past this, a case used unbounded memory
NOBODY = 65534
GRACE = 15  # seconds between the Ctrl-C of a case at its limit and its SIGKILL
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Outcome:
    rc: int | None
    out: str
    err: str
    seconds: float
    rss: int  # bytes, the case's process (and the children it waited for)
    interrupted: bool = False


@dataclass
class Case:
    surface: str
    name: str
    argv: list[str] | Callable  # sniff's arguments, or (for serve) a request maker
    setup: Callable | None = None  # setup(ctx) before the command
    expect: str = "refuse"  # refuse | ok | either
    check: Callable | None = None  # check(ctx, outcome) -> None when the output is right
    env: dict = field(default_factory=dict)
    timeout: float = 90.0
    stdin: str | None = None  # a path to read standard input from
    interrupt: bool = False  # may block on purpose: Ctrl-C at the limit
    root_only: bool = False  # needs another owner (chown)
    own_memory: bool = False  # the plugin itself allocates without bound: no resident bound
    user: int | None = None  # run the command as this uid


class Context:
    """A case's folder and what it set up: the files it protects, its planted sentinel."""

    def __init__(self, campaign: Campaign, case: Case, folder: Path) -> None:
        self.campaign, self.case, self.dir = campaign, case, folder
        self.sentinel = folder / "PWNED"
        self.protected: dict[Path, str | None] = {}
        self.env: dict[str, str] = {}
        self.cwd = folder

    # --- fixtures
    def copy(self, name: str, to: str | None = None) -> Path:
        """A copy of a base folder (run, tour, open, tune, trace.jsonl, model.npz)."""
        source = self.campaign.folder(name)
        target = self.dir / (to or name)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)
        return target

    def cache(self) -> Path:
        """This case's own copy of the compile cache, used through SNIFF_CACHE_DIR."""
        target = self.dir / "cache"
        if not target.exists():
            shutil.copytree(self.campaign.cache, target, symlinks=True)
        self.env["SNIFF_CACHE_DIR"] = str(target)
        return target

    def protect(self, *paths: Path) -> None:
        for path in paths:
            self.protected[Path(path)] = digest(Path(path))

    def victim(self, name: str = "victim.txt") -> Path:
        """A file outside every folder the command should touch; protected."""
        path = self.dir / name
        path.write_text("precious data\n")
        self.protect(path)
        return path

    def payload(self) -> str:
        """Python that proves it ran by leaving the sentinel file."""
        return f"import pathlib; pathlib.Path({str(self.sentinel)!r}).write_text('ran')\n"


def digest(path: Path) -> str | None:
    """A folder's or file's content hash (None: missing)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        parts = []
        for child in sorted(Path(path).rglob("*")):
            if child.is_file() and not child.is_symlink():
                parts.append(f"{child.relative_to(path)}:{hashlib.sha256(child.read_bytes()).hexdigest()}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()
    if stat.S_ISREG(info.st_mode):
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return f"mode {info.st_mode:o}"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()
    # a campaign started in the background (nohup ... &) ignores SIGINT, and a child would
    # inherit that: Python then installs no KeyboardInterrupt handler, Ctrl-C does nothing
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_process(argv: list[str], env: dict, cwd: Path, timeout: float, stdin: str | None,
                interrupt: bool, user: int | None) -> Outcome:
    """Run ``argv``; at the limit Ctrl-C (``interrupt``) then, ``GRACE`` seconds on, SIGKILL."""
    def prepare() -> None:
        _limits()
        if user is not None:
            os.setgid(user)
            os.setuid(user)

    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(stdin or os.devnull, "rb", buffering=0) as given:
        process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err,
                                   stdin=given, preexec_fn=prepare)
        status, usage, interrupted, killed = None, None, False, False
        deadline = started + timeout
        while status is None:
            pid, code, rusage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status, usage = code, rusage
                break
            now = time.monotonic()
            if now > deadline:
                if interrupt and not interrupted:
                    interrupted = True
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(process.pid, signal.SIGINT)
                    deadline = now + GRACE
                else:
                    killed = True
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    _, code, usage = os.wait4(process.pid, 0)
                    break
            time.sleep(0.05)
        process.returncode = 0  # reaped here
        out.seek(0)
        err.seek(0)
        text = out.read().decode("utf-8", "replace")
        errors = err.read().decode("utf-8", "replace")
    rc = None if killed else (os.waitstatus_to_exitcode(status))
    return Outcome(rc, text, errors, time.monotonic() - started, usage.ru_maxrss * 1024,
                   interrupted)


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def classify(ctx: Context, outcome: Outcome) -> tuple[str, str]:
    """The case's kind, and a few words of why."""
    case = ctx.case
    planted = [p for p in ctx.dir.rglob("PWNED*")] if ctx.dir.exists() else []
    if planted or ctx.sentinel.exists():
        return "code execution", f"{planted[0] if planted else ctx.sentinel} was written"
    for path, before in ctx.protected.items():
        if digest(path) != before:
            return "data loss", f"{path} changed"
    if outcome.rc is None:
        return "hang", f"still running after {case.timeout:g} s" + (
            " and Ctrl-C" if outcome.interrupted else "")
    both = outcome.out + outcome.err
    if outcome.rss > MEMORY_BOUND and not case.own_memory:
        return "unbounded memory", f"{outcome.rss / 2**30:.1f} GiB resident"
    if "Traceback (most recent call last)" in both:
        last = [line for line in outcome.err.splitlines() if line.strip()][-1:]
        return "traceback", (last[0] if last else "traceback")[:160]
    if outcome.rc < 0:
        return "traceback", f"killed by signal {-outcome.rc}"
    lines = error_lines(outcome.err)
    errors = [line for line in lines if line.startswith("sniff: error:")]
    others = [line for line in lines if not line.startswith("sniff")]
    one_line = (len(errors) == 1 or (outcome.rc in (130, 143) and len(lines) == 1)) \
        and not others
    if outcome.interrupted:
        if outcome.rc in (130, 2) and not others:
            return "clean", "stopped by Ctrl-C in one line"
        return "hang", f"Ctrl-C gave exit {outcome.rc}"
    if outcome.rc != 0:
        if case.expect == "ok":
            return "unclear", f"refused what it should do: {(errors or lines or ['?'])[0][:160]}"
        if one_line:
            return "clean", (errors or lines)[0][:160]
        return "unclear", f"exit {outcome.rc}, {len(lines)} line(s) on stderr: " + (
            " | ".join(lines[:3])[:200])
    wrong = case.check(ctx, outcome) if case.check else None
    if case.expect == "refuse" and case.check is None:
        return "silently wrong", "exit 0 where a refusal was expected: " + (
            error_lines(outcome.out) or ["(no output)"])[-1][:120]
    if wrong:
        return "silently wrong", wrong[:200]
    return "clean", "the right output"


# the base folders the cases copy, by name: the command that makes each (in the base folder)
BASE_COMMANDS: dict[str, list[str]] = {
    "run": ["simulate", "--players", "2", "--strategies", "greedy,random", "--games", "200",
            "--chunk-size", "100", "--seed", "3", "-o", "run", "-q"],
    "tour": ["tournament", "--players", "2", "--strategies", "greedy,random,heavy",
             "--games-per-pair", "40", "--out", "tour", "-q"],
    "open": ["openings", "--players", "2", "--deals", "1", "-o", "open", "-q"],
    "tune": ["tune", "defensive", "--against", "random", "--players", "2", "--games", "400",
             "--games-per-trial", "50", "--popsize", "4", "--validate-games", "0", "-o",
             "tune", "-q"],
    "trace.jsonl": ["trace", "--players", "2", "--strategies", "greedy,random", "--games", "2",
                    "-o", "trace.jsonl"],
    "cmp": ["compare", "greedy", "random", "--players", "2", "--max-games", "400",
            "--chunk-size", "100", "-o", "cmp", "-q"],
    "runl": ["simulate", "--players", "2", "--strategies", "learned:model=model.npz,greedy",
             "--games", "100", "--seed", "3", "-o", "runl", "-q"],
}


class Campaign:
    def __init__(self, work: Path, cache: Path, code: Path = ROOT) -> None:
        self.work, self.base = work, work / "base"
        self.cache = self.base / "cache"
        self.source_cache = cache
        python = Path(sys.executable)
        script = python.with_name("sniff")
        self.sniff = [str(script)] if script.exists() else [str(python), "-P", "-m", "sim.cli"]
        self.is_root = os.geteuid() == 0
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SNIFF_")}
        self.env.update(SNIFF_PRECOMPILE="0", PYTHONIOENCODING="utf-8", COLUMNS="100",
                        PYTHONPATH=os.pathsep.join(filter(None, [str(code),
                                                                 os.environ.get("PYTHONPATH")])))
        self.server: subprocess.Popen | None = None

    def build_base(self) -> None:
        """What every case may use: a copy of the compile cache, a model file and the
        plugins; the folders the cases copy are made when a case first asks (``folder``)."""
        self.base.mkdir(parents=True)
        shutil.copytree(self.source_cache / "kernels", self.cache / "kernels", symlinks=True)
        if (self.source_cache / "learned").is_dir():
            shutil.copytree(self.source_cache / "learned", self.cache / "learned",
                            symlinks=True)
        (self.cache / "kernels" / "precompile.lock").unlink(missing_ok=True)
        models = sorted((ROOT / "strategies" / "learned" / "models").glob("*2*.npz"))
        if models:
            shutil.copy2(models[0], self.base / "model.npz")
        plugins = self.base / "plugins"
        plugins.mkdir()
        for name, text in PLUGINS.items():
            (plugins / f"{name}.py").write_text(text)

    def folder(self, name: str) -> Path:
        """The base folder or file ``name`` (a run, a tournament, an openings study, a
        tuning run, a trace, a comparison, a learned run), made by its command the first
        time a case asks for it, so a smoke run of a few cases makes only what they copy."""
        path = self.base / name
        if path.exists() or name not in BASE_COMMANDS:
            return path
        env = dict(self.env, SNIFF_CACHE_DIR=str(self.cache))
        command = BASE_COMMANDS[name]
        done = subprocess.run(self.sniff + command, cwd=self.base, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0 and not path.exists():
            raise SystemExit(f"campaign: could not build {command}: {done.stderr}")
        return path

    def run_case(self, case: Case, index: int) -> dict:
        folder = self.work / "cases" / f"{index:03d}-{re.sub(r'[^a-z0-9]+', '-', case.name)[:40]}"
        folder.mkdir(parents=True)
        ctx = Context(self, case, folder)
        ctx.env = dict(self.env, SNIFF_CACHE_DIR=str(self.cache), HOME=str(folder / "home"),
                       PYTHONPATH=os.pathsep.join([self.env["PYTHONPATH"],
                                                   str(self.base / "plugins")]))
        (folder / "home").mkdir()
        if case.setup:
            try:
                case.setup(ctx)
            except Exception as error:  # the campaign's own mistake: said, not a case
                return {"surface": case.surface, "case": case.name, "kind": "harness error",
                        "why": f"{type(error).__name__}: {error}"[:200], "rc": None,
                        "seconds": 0, "rss_mb": 0, "stderr": ""}
        ctx.env.update(case.env)
        started = time.monotonic()
        if case.surface == "serve":
            kind, why = case.argv(ctx)
            return {"surface": case.surface, "case": case.name, "kind": kind, "why": why,
                    "rc": None, "seconds": round(time.monotonic() - started, 2), "rss_mb": 0,
                    "stderr": ""}
        outcome = run_process(self.sniff + [str(a) for a in case.argv], ctx.env, ctx.cwd,
                              case.timeout, case.stdin, case.interrupt, case.user)
        kind, why = classify(ctx, outcome)
        stop_left_behind(folder)
        return {"surface": case.surface, "case": case.name, "kind": kind, "why": why,
                "rc": outcome.rc, "seconds": round(outcome.seconds, 2),
                "rss_mb": round(outcome.rss / 2**20), "stderr": outcome.err[-600:]}

    def game_id(self, ctx: Context) -> str:
        """A game of the server, made once."""
        if not hasattr(self, "_game"):
            address, port, secret = self.serve()
            body = json.dumps({"players": 2, "seat": 0, "opponents": ["greedy"],
                               "target": 250}).encode()
            status, _, text = request(address, port, "POST", "/api/games", body, {
                "Host": f"{address}:{port}", "x-sniff-token": secret,
                "Content-Type": "application/json"})
            if status != 200:
                raise SystemExit(f"campaign: sniff serve made no game: {status} {text[:200]}")
            self._game = json.loads(text)["session"]
        return self._game

    def runs_as(self, user: int) -> bool:
        """Whether sniff starts as ``user`` (its interpreter and code readable by it)."""
        if not self.is_root:
            return False

        def become() -> None:
            os.setgid(user)
            os.setuid(user)
        try:
            done = subprocess.run(self.sniff + ["--version"], env=self.env, cwd="/",
                                  capture_output=True, preexec_fn=become, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0

    # --- one server for every serve case
    def serve(self) -> tuple[str, int, str]:
        if self.server is None:
            log = open(self.work / "serve.log", "wb")
            self.server = subprocess.Popen(
                self.sniff + ["serve", "--port", "0"], cwd=self.work, stdout=log,
                stderr=subprocess.STDOUT, env=dict(self.env, SNIFF_CACHE_DIR=str(self.cache)),
                preexec_fn=_limits)
            for _ in range(600):
                text = (self.work / "serve.log").read_text(errors="replace")
                found = re.search(r"http://([^:/]+):(\d+)/", text)
                if found:
                    break
                time.sleep(0.1)
            else:
                raise SystemExit("campaign: sniff serve did not start: " + text)
            host, port = found.group(1), int(found.group(2))
            page = request(host, port, "GET", "/", headers={"Host": f"{host}:{port}"})[2]
            token = re.search(r'name="sniff-token" content="([^"]+)"', page).group(1)
            self.server_address = (host, port, token)
        return self.server_address

    def serve_log(self) -> str:
        return (self.work / "serve.log").read_text(errors="replace")

    def stop_server(self) -> dict | None:
        if self.server is None:
            return None
        alive = self.server.poll() is None
        self.server.send_signal(signal.SIGINT)
        try:
            self.server.wait(20)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        return {"alive_at_end": alive, "log_tracebacks": self.serve_log().count("Traceback")}


def stop_left_behind(folder: Path) -> None:
    """Stop what a case started and left running (a background compile, detached in its
    own session) by its id: the processes whose cache or working folder is the case's."""
    mark = str(folder).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cwd = os.readlink(entry / "cwd").encode()
        except OSError:
            continue
        if any(v.startswith(b"SNIFF_CACHE_DIR=" + mark) for v in environ.split(b"\0")) or \
                cwd.startswith(mark):
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def request(host: str, port: int, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None, timeout: float = 30.0) -> tuple[int, dict, str]:
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for key, value in (headers or {}).items():
        connection.putheader(key, value)
    if body is not None and not any(k.lower() == "content-length" for k in (headers or {})):
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    text = response.read(1 << 20).decode("utf-8", "replace")
    connection.close()
    return response.status, dict(response.getheaders()), text


# ------------------------------------------------------------------ plugins the cases load

PLUGINS = {
    "cp_raise_import": "raise RuntimeError('broken at import')\n",
    "cp_exit_import": "import sys\nsys.exit(3)\n",
    "cp_syntax": "def choose(:\n",
    "cp_baseexc_import": "raise KeyboardInterrupt\n",
    "cp_registers_nothing": "X = 1\n",
    "cp_hang_import": "import time\ntime.sleep(10**6)\n",
    "cp_players": '''"""Python players that misbehave, one way each (the campaign's)."""
import time

import numpy as np

from strategies import register_python


class _Bad:
    def __array__(self, *args, **kwargs):
        raise ValueError("no array here")


class _Len:
    def __len__(self):
        raise RuntimeError("no length")


@register_python("cp_value_error", "raises ValueError")
def value_error(observations, masks):
    raise ValueError("bad model")


@register_python("cp_recursion", "recurses without end")
def recursion(observations, masks):
    return recursion(observations, masks)


@register_python("cp_alloc", "allocates without bound")
def alloc(observations, masks):
    return np.ones(10**11)


@register_python("cp_grow", "grows a list without bound")
def grow(observations, masks):
    items = []
    while True:
        items.append(bytearray(2**24))


@register_python("cp_sleep", "sleeps forever")
def sleep(observations, masks):
    time.sleep(10**6)


@register_python("cp_spin", "loops forever")
def spin(observations, masks):
    while True:
        pass


@register_python("cp_none", "returns None")
def none(observations, masks):
    return None


@register_python("cp_floats", "returns floats")
def floats(observations, masks):
    return masks.argmax(axis=1).astype(float)


@register_python("cp_bool", "returns booleans")
def booleans(observations, masks):
    return masks.any(axis=1)


@register_python("cp_2d", "returns a 2-D array")
def two_d(observations, masks):
    return masks.argmax(axis=1)[:, None]


@register_python("cp_huge_int", "returns Python ints beyond int64")
def huge_int(observations, masks):
    return [2**70] * observations.shape[0]


@register_python("cp_uint", "returns uint64 words that wrap to negative")
def uint(observations, masks):
    return np.full(observations.shape[0], 2**64 - 1, dtype=np.uint64)


@register_python("cp_bad_array", "returns an object whose __array__ raises")
def bad_array(observations, masks):
    return _Bad()


@register_python("cp_bad_len", "returns an object whose __len__ raises")
def bad_len(observations, masks):
    return _Len()


@register_python("cp_string", "returns a string")
def string(observations, masks):
    return "0" * observations.shape[0]


@register_python("cp_generator", "returns a generator")
def generator(observations, masks):
    return (int(a) for a in masks.argmax(axis=1))


@register_python("cp_negative", "returns -1")
def negative(observations, masks):
    return np.full(observations.shape[0], -1)


@register_python("cp_keyboard", "raises KeyboardInterrupt itself")
def keyboard(observations, masks):
    raise KeyboardInterrupt


@register_python("cp_systemexit", "calls sys.exit(0)")
def system_exit(observations, masks):
    raise SystemExit(0)


@register_python("cp_mutates", "writes into what it is given, then plays the first legal move")
def mutates(observations, masks):
    actions = masks.argmax(axis=1)
    observations[:] = -1
    masks[:] = True
    return actions


@register_python("cp_good", "plays the first legal action")
def good(observations, masks):
    return masks.argmax(axis=1)
''',
    "cp_compiled": '''"""Compiled strategies that misbehave (the campaign's)."""
import numpy as np
from numba import njit

from strategies import register


@njit
def raises(observation, moves, n_moves, params, rng):
    raise ValueError("compiled failure")


@njit
def out_of_range(observation, moves, n_moves, params, rng):
    return 1000


@njit
def allocates(observation, moves, n_moves, params, rng):
    block = np.ones(10**11)
    return int(block[0]) - 1


@njit
def floats(observation, moves, n_moves, params, rng):
    return 0.5


register("cp_c_raises", "raises in compiled code")(raises)
register("cp_c_range", "returns an index out of range")(out_of_range)
register("cp_c_alloc", "allocates without bound in compiled code")(allocates)
''',
    "cp_float_choose": '''from numba import njit

from strategies import register


@register("cp_c_float", "returns a float")
@njit
def floats(observation, moves, n_moves, params, rng):
    return 0.5
''',
    "cp_name_clash": '''from numba import njit

from strategies import register


@register("greedy", "takes a built-in's name")
@njit
def choose(observation, moves, n_moves, params, rng):
    return 0
''',
}


def _mkfifo(path: Path) -> Path:
    """A FIFO at ``path`` (in place of whatever file was there)."""
    if os.path.lexists(path) and not os.path.isdir(path):
        os.unlink(path)
    os.mkfifo(path)
    return path


def _chown_tree(path: Path, uid: int) -> None:
    for child in [path, *path.rglob("*")]:
        os.lchown(child, uid, uid)


def _same_games(reference: str) -> Callable:
    """A check: the case's ``out`` run holds the games of the base folder ``reference``."""
    def check(ctx: Context, outcome: Outcome) -> str | None:
        import pyarrow.parquet as pq

        mine = ctx.dir / "out" / "games"
        theirs = ctx.campaign.folder(reference) / "games"
        if not mine.is_dir():
            return "no games written"
        columns = ["game_id", "winner_side", "rounds"]
        a = pq.read_table(mine, columns=columns).sort_by("game_id").to_pydict()
        b = pq.read_table(theirs, columns=columns).sort_by("game_id").to_pydict()
        return None if a == b else "the games differ from the same command with a sound cache"
    return check


SIM = ["simulate", "--players", "2", "--strategies", "greedy,random", "--games", "200",
       "--chunk-size", "100", "--seed", "3", "-o", "out", "-q"]


# ------------------------------------------------------------------ the cache


class _Pickled:
    """A pickle whose loading runs the code given (what a forged numba cache file holds)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


NAMES_CODE = """
import json
from sim.kernels import generate
from strategies import get
print(json.dumps({"engine": generate.engine_path().stem,
                  "greedy": generate.chooser_path(get("greedy")).stem,
                  "random": generate.chooser_path(get("random")).stem}))
"""


def _names(campaign: Campaign) -> dict[str, str]:
    """The generated modules' names in the base cache as the code the cases run names them
    (``--code``: another checkout's engine is another module): the engine, greedy's and
    random's wrappers, what the command of the cache cases loads. Named by this process's
    code, the cache cases of another checkout tampered with files it never reads."""
    done = subprocess.run([sys.executable, "-P", "-c", NAMES_CODE], capture_output=True,
                          text=True, env=dict(campaign.env, SNIFF_CACHE_DIR=str(campaign.cache)),
                          check=True)
    return json.loads(done.stdout)


NAMES: dict[str, str] = {}


def kernel_file(ctx: Context, which: str, suffix: str = ".py") -> Path:
    return ctx.cache() / "kernels" / f"{NAMES[which]}{suffix}"


def numba_file(ctx: Context, which: str, function: str, kind: str) -> Path:
    """A numba cache file of a generated module: ``kind`` ``nbi`` (the index) or ``nbc``."""
    folder = ctx.cache() / "kernels" / "__pycache__"
    pattern = f"{NAMES[which]}.{function}-*.{kind}" if kind == "nbi" else \
        f"{NAMES[which]}.{function}-*.1.nbc"
    found = sorted(folder.glob(pattern))
    if not found:
        raise SystemExit(f"campaign: the base cache lacks {pattern}")
    return found[0]


def forge_module(which: str, how: str) -> Callable:
    """Setups that tamper with a generated module."""
    def setup(ctx: Context) -> None:
        path = kernel_file(ctx, which)
        text = path.read_text()
        times = (path.stat().st_atime, path.stat().st_mtime)
        if how == "payload":
            path.write_text(ctx.payload() + text)
        elif how == "payload-end":
            path.write_text(text + "\n" + ctx.payload())
        elif how == "empty":
            path.write_text("")
        elif how == "half":
            path.write_text(text[: len(text) // 2])
        elif how == "garbage":
            path.write_bytes(b"\xff\xfe\x00garbage\x00" * 100)
        elif how == "fifo":
            path.unlink()
            _mkfifo(path)
            return
        elif how == "folder":
            path.unlink()
            path.mkdir()
            return
        elif how == "link-payload":
            outside = ctx.dir / "elsewhere.py"
            outside.write_text(ctx.payload() + text)
            path.unlink()
            path.symlink_to(outside)
            return
        elif how == "link-same":
            outside = ctx.dir / "elsewhere.py"
            outside.write_text(text)
            path.unlink()
            path.symlink_to(outside)
            return
        elif how == "link-zero":
            path.unlink()
            path.symlink_to("/dev/zero")
            return
        elif how == "hardlink-payload":
            outside = ctx.dir / "elsewhere.py"
            outside.write_text(ctx.payload() + text)
            path.unlink()
            os.link(outside, path)
        elif how == "other-owner":
            path.write_text(ctx.payload() + text)
            os.utime(path, times)
            os.chown(path, NOBODY, NOBODY)
            return
        elif how == "world-writable":
            os.chmod(path, 0o666)
            return
        os.utime(path, times)  # numba's cache is keyed by the source's mtime and size
    return setup


def forge_numba(which: str, function: str, kind: str, how: str) -> Callable:
    def setup(ctx: Context) -> None:
        path = numba_file(ctx, which, function, kind)
        data = path.read_bytes()
        if how == "truncate":
            path.write_bytes(data[: len(data) // 3])
        elif how == "empty":
            path.write_bytes(b"")
        elif how == "garbage":
            path.write_bytes(os.urandom(len(data)))
        elif how == "fifo":
            path.unlink()
            _mkfifo(path)
        elif how == "folder":
            path.unlink()
            path.mkdir()
        elif how == "link-zero":
            path.unlink()
            path.symlink_to("/dev/zero")
        elif how == "pickle-own":  # a copy of someone else's cache, made one's own: the
            # index's first pickle (numba's version) replaced, so the file is still two
            import io
            import pickle
            import pickletools

            stream = io.BytesIO(data)
            for _ in pickletools.genops(stream):
                pass
            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data[stream.tell():])
        elif how == "pickle-other-owner":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            os.chown(path, NOBODY, NOBODY)
        elif how == "pickle-world-writable-folder":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            os.chmod(path.parent, 0o777)
        elif how == "pickle-other-folder":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            _chown_tree(path.parent, NOBODY)
        elif how == "pickle-linked-folder":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            elsewhere = ctx.dir / "their-pycache"
            shutil.move(path.parent, elsewhere)
            _chown_tree(elsewhere, NOBODY)
            (ctx.cache() / "kernels" / "__pycache__").symlink_to(elsewhere)
    return setup


def forge_lock(which: str, how: str) -> Callable:
    """A chooser's compile lock, with its compiled code removed so that it compiles."""
    def setup(ctx: Context) -> None:
        for path in (ctx.cache() / "kernels" / "__pycache__").glob(f"{NAMES[which]}.*"):
            path.unlink()
        lock = kernel_file(ctx, which, ".lock")
        lock.unlink(missing_ok=True)
        if how == "fifo":
            _mkfifo(lock)
        elif how == "link-victim":
            lock.symlink_to(ctx.victim())
        elif how == "folder":
            lock.mkdir()
        elif how == "link-fifo":
            lock.symlink_to(_mkfifo(ctx.dir / "fifo"))
    return setup


def forge_precompile(how: str) -> Callable:
    def setup(ctx: Context) -> None:
        kernels = ctx.cache() / "kernels"
        for done in kernels.glob("precompile-*"):
            done.unlink()
        ctx.env["SNIFF_PRECOMPILE"] = "1"
        if how == "lock-fifo":
            _mkfifo(kernels / "precompile.lock")
        elif how == "lock-link-fifo":
            (kernels / "precompile.lock").symlink_to(_mkfifo(ctx.dir / "fifo"))
        elif how == "lock-zero":
            (kernels / "precompile.lock").symlink_to("/dev/zero")
        elif how == "log-fifo":
            _mkfifo(kernels / "precompile.log")
        elif how == "log-link-victim":
            (kernels / "precompile.log").unlink(missing_ok=True)
            (kernels / "precompile.log").symlink_to(ctx.victim())
        elif how == "log-folder":
            (kernels / "precompile.log").unlink(missing_ok=True)
            (kernels / "precompile.log").mkdir()
        elif how == "done-fifo":
            _mkfifo(kernels / f"precompile-{NAMES['engine']}.done")
    return setup


def cache_at(how: str) -> Callable:
    """SNIFF_CACHE_DIR pointed somewhere odd (a copy of the cache where it is a folder)."""
    def setup(ctx: Context) -> None:
        if how == "file":
            (ctx.dir / "cachefile").write_text("x")
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir / "cachefile")
        elif how == "devnull":
            ctx.env["SNIFF_CACHE_DIR"] = "/dev/null"
        elif how == "fifo":
            ctx.env["SNIFF_CACHE_DIR"] = str(_mkfifo(ctx.dir / "cachefifo"))
        elif how == "relative":
            ctx.cache()
            ctx.env["SNIFF_CACHE_DIR"] = "cache"
        elif how == "newline":
            shutil.copytree(ctx.campaign.cache, ctx.dir / "ca\nche\x1b[31m", symlinks=True)
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir / "ca\nche\x1b[31m")
        elif how == "non-utf8":
            name = os.fsdecode(b"cache-\xff\xfe")
            shutil.copytree(ctx.campaign.cache, ctx.dir / name, symlinks=True)
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir / name)
        elif how == "too-long":
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir) + ("/" + "x" * 300) * 20
        elif how == "proc":
            ctx.env["SNIFF_CACHE_DIR"] = "/proc/self"
        elif how == "empty-env":
            home = ctx.dir / "home" / ".cache"
            home.mkdir(parents=True)
            shutil.copytree(ctx.campaign.cache, home / "sniff", symlinks=True)
            ctx.env["SNIFF_CACHE_DIR"] = ""
        elif how == "other-owner":
            _chown_tree(ctx.cache(), NOBODY)
        elif how == "kernels-other-owner":
            _chown_tree(ctx.cache() / "kernels", NOBODY)
        elif how == "world-writable":
            os.chmod(ctx.cache(), 0o777)
            os.chmod(ctx.cache() / "kernels", 0o777)
            path = kernel_file(ctx, "engine")
            text, times = path.read_text(), (path.stat().st_atime, path.stat().st_mtime)
            path.write_text(ctx.payload() + text)  # what anyone could have written there
            os.utime(path, times)
        elif how == "kernels-link-other":
            elsewhere = ctx.dir / "their-kernels"
            shutil.move(ctx.cache() / "kernels", elsewhere)
            path = elsewhere / f"{NAMES['engine']}.py"
            text, times = path.read_text(), (path.stat().st_atime, path.stat().st_mtime)
            path.write_text(ctx.payload() + text)
            os.utime(path, times)
            _chown_tree(elsewhere, NOBODY)
            (ctx.cache() / "kernels").symlink_to(elsewhere)
        elif how == "nobody-unwritable":  # the command runs as nobody: a cache it cannot write
            ctx.cache()
            for folder in [ctx.dir, ctx.dir / "home"]:
                os.chmod(folder, 0o755)
            ctx.cwd = ctx.dir / "home"
            os.chown(ctx.cwd, NOBODY, NOBODY)
        elif how in ("tmp-squatted", "tmp-world-writable"):
            # HOME cannot be written, so the cache falls back to TMPDIR/sniff-cache-UID
            ctx.env.pop("SNIFF_CACHE_DIR")
            ctx.env["HOME"] = "/nonexistent"
            tmp = ctx.dir / "tmp"
            tmp.mkdir()
            os.chmod(tmp, 0o1777)
            os.chmod(ctx.dir, 0o755)
            ctx.env["TMPDIR"] = str(tmp)
            squat = tmp / f"sniff-cache-{NOBODY}"
            shutil.copytree(ctx.campaign.cache, squat, symlinks=True)
            path = squat / "kernels" / f"{NAMES['engine']}.py"
            text, times = path.read_text(), (path.stat().st_atime, path.stat().st_mtime)
            path.write_text(ctx.payload() + text)
            os.utime(path, times)
            os.chmod(ctx.dir / "home", 0o777)
            ctx.cwd = ctx.dir / "home"
            if how == "tmp-squatted":
                _chown_tree(squat, 1)  # daemon: another user got there first
            else:
                _chown_tree(squat, 0)
                for folder in [squat, *squat.rglob("*")]:
                    if folder.is_dir():
                        os.chmod(folder, 0o777)
    return setup


def learned_forged(how: str) -> Callable:
    def setup(ctx: Context) -> None:
        ctx.copy("model.npz")
        learned = ctx.cache() / "learned"
        digest_ = hashlib.sha256((ctx.dir / "model.npz").read_bytes()).hexdigest()[:16]
        copy, module = learned / f"model_{digest_}.npz", learned / f"sniff_learned_{digest_}.py"
        if how == "model-swapped":  # another network of 2 players under this model's name
            import numpy as np

            with np.load(copy, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
            first = next(k for k, v in arrays.items() if v.dtype.kind == "f" and v.ndim == 2)
            arrays[first] = -arrays[first]
            np.savez(ctx.dir / "other.npz", **arrays)
            shutil.copy2(ctx.dir / "other.npz", copy)
        elif how == "module-payload":
            module.write_text(module.read_text() + "\n" + ctx.payload())
        elif how == "module-first-line":
            text = module.read_text().split("\n", 1)
            module.write_text("# Generated\n" + ctx.payload() + text[1])
        elif how == "module-carriage-return":  # a CR ends the comment line for Python
            text = module.read_text().split("\n", 1)
            module.write_text("# Generated\r" + ctx.payload().strip() + "\n" + text[1])
        elif how == "model-fifo":
            copy.unlink()
            _mkfifo(copy)
        elif how == "model-link-zero":
            copy.unlink()
            copy.symlink_to("/dev/zero")
    return setup


def cache_cases(root: bool) -> list[Case]:
    ok = {"expect": "either", "check": _same_games("run")}
    cases = []
    for how in ("payload", "payload-end", "empty", "half", "garbage", "fifo", "folder",
                "link-payload", "link-same", "link-zero", "hardlink-payload", "world-writable"):
        cases.append(Case("cache", f"greedy's wrapper module: {how}", SIM,
                          forge_module("greedy", how), timeout=150, **ok))
    for how in ("payload", "fifo", "link-payload"):  # the engine compiles again: slow
        cases.append(Case("cache", f"engine module: {how}", SIM, forge_module("engine", how),
                          timeout=240, **ok))
    cases.append(Case("cache", "engine module of another owner, with a payload", SIM,
                      forge_module("engine", "other-owner"), root_only=True, **ok))
    for kind in ("nbi", "nbc"):
        for how in ("truncate", "empty", "garbage", "fifo", "folder", "link-zero"):
            cases.append(Case("cache", f"greedy's numba {kind}: {how}", SIM,
                              forge_numba("greedy", "chooser", kind, how), **ok))
    for how in ("pickle-other-owner", "pickle-world-writable-folder", "pickle-other-folder",
                "pickle-linked-folder"):
        cases.append(Case("cache", f"engine's numba index: {how}", SIM,
                          forge_numba("engine", "play_batch", "nbi", how),
                          root_only=how != "pickle-world-writable-folder", **ok))
    cases.append(Case("cache", "engine's numba index: a forged pickle in a cache of one's own "
                      "(a copied cache)", SIM,
                      forge_numba("engine", "play_batch", "nbi", "pickle-own"), **ok))
    for how in ("fifo", "link-victim", "folder", "link-fifo"):
        cases.append(Case("cache", f"greedy's compile lock: {how}", SIM,
                          forge_lock("greedy", how), timeout=150, **ok))
    for how in ("lock-fifo", "lock-link-fifo", "lock-zero", "log-fifo", "log-link-victim",
                "log-folder", "done-fifo"):
        cases.append(Case("cache", f"background compile: {how}", SIM, forge_precompile(how),
                          **ok))
    for how in ("file", "devnull", "fifo", "relative", "newline", "non-utf8", "too-long",
                "proc", "empty-env", "world-writable"):
        cases.append(Case("cache", f"SNIFF_CACHE_DIR: {how}", SIM, cache_at(how), **ok))
    for how in ("other-owner", "kernels-other-owner", "kernels-link-other"):
        cases.append(Case("cache", f"SNIFF_CACHE_DIR: {how}", SIM, cache_at(how),
                          root_only=True, **ok))
    cases.append(Case("cache", "a cache the user cannot write (root's, used by nobody)",
                      [*SIM[:-3], "-o", "out", "-q"], cache_at("nobody-unwritable"),
                      root_only=True, user=NOBODY, timeout=240, expect="either",
                      check=_same_games("run")))
    for how in ("tmp-squatted", "tmp-world-writable"):
        cases.append(Case("cache", f"the temporary fallback: {how}", SIM, cache_at(how),
                          root_only=True, user=NOBODY, timeout=240, expect="either",
                          check=_same_games("run")))
    learned = ["simulate", "--players", "2", "--strategies", "learned:model=model.npz,greedy",
               "--games", "100", "--seed", "3", "-o", "out", "-q"]
    for how in ("model-swapped", "module-payload", "module-first-line",
                "module-carriage-return", "model-fifo", "model-link-zero"):
        cases.append(Case("cache", f"learned's cached model: {how}", learned,
                          learned_forged(how), expect="either", check=_same_games("runl")))
    return [c for c in cases if root or not c.root_only]


# ------------------------------------------------------------------ folders


def folder_setup(base: str, how: Callable[[Context, Path], None]) -> Callable:
    def setup(ctx: Context) -> None:
        folder = ctx.copy(base)
        how(ctx, folder)
    return setup


def _replace(path: Path, how: str, ctx: Context) -> None:
    """``path`` (a file of a folder) made into something else."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if how == "fifo":
        _mkfifo(path)
    elif how == "zero":
        path.symlink_to("/dev/zero")
    elif how == "folder":
        path.mkdir()
    elif how == "link-victim":
        path.symlink_to(ctx.victim())
    elif how == "nested":
        path.write_text("[" * 200_000 + "]" * 200_000)
    elif how == "huge-number":
        path.write_text('{"games": 1' + "0" * 5000 + "}")
    elif how == "non-utf8":
        path.write_bytes(b'{"x": "\xff\xfe"}')
    elif how == "big":
        with open(path, "wb") as handle:
            handle.truncate(300 * 2**20)  # sparse: 300 MB of zeros, no disk
    elif how == "nan":
        path.write_text('{"games": NaN, "seed": Infinity}')


def _edit_json(path: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _run_folder_cases() -> list[Case]:
    """Run folders: the manifest, the ledger, the parts, the lock, links."""
    cases = []
    for how in ("fifo", "zero", "folder", "nested", "huge-number", "non-utf8", "big", "nan"):
        cases.append(Case("folders", f"run manifest.json: {how}", ["report", "run", "-o", "rep"],
                          folder_setup("run", lambda c, f, h=how: _replace(
                              f / "manifest.json", h, c))))
    for how in ("fifo", "zero", "folder", "big"):
        cases.append(Case("folders", f"run parts.jsonl: {how}", ["verify", "run"],
                          folder_setup("run", lambda c, f, h=how: _replace(
                              f / "parts.jsonl", h, c))))
    for how in ("fifo", "zero", "folder"):
        cases.append(Case("folders", f"a games part: {how}", ["query", "run",
                                                              "SELECT count(*) FROM games"],
                          folder_setup("run", lambda c, f, h=how: _replace(
                              f / "games" / "part-000000.parquet", h, c))))

    def lock(how):
        def edit(ctx, folder):
            _replace(folder / ".lock", how, ctx)
            ctx.protect(folder / "games", folder / "rounds")
        return edit
    for how in ("fifo", "link-victim", "folder", "zero"):
        cases.append(Case("folders", f"run .lock then --overwrite: {how}",
                          [*SIM[:-3], "-o", "run", "--overwrite", "-q"],
                          folder_setup("run", lock(how))))

    def games_link(ctx, folder):
        other = ctx.copy("run", "other")
        ctx.protect(other)
        shutil.rmtree(folder / "games")
        (folder / "games").symlink_to(other / "games")
    cases.append(Case("folders", "run games/ a link to another run's, then --overwrite",
                      [*SIM[:-3], "-o", "run", "--overwrite", "-q"],
                      folder_setup("run", games_link)))

    def truncated(ctx, folder):
        part = folder / "games" / "part-000001.parquet"
        part.write_bytes(part.read_bytes()[:-100])
    cases.append(Case("folders", "a truncated part, report", ["report", "run", "-o", "rep"],
                      folder_setup("run", truncated)))
    cases.append(Case("folders", "a truncated part, resume",
                      ["simulate", "--resume", "-o", "run", "-q"],
                      folder_setup("run", truncated), expect="either",
                      check=lambda c, o: None))

    def many_parts(ctx, folder):
        for index in range(2, 5000):
            (folder / "games" / f"part-{index:06d}.parquet").write_bytes(b"")
    cases.append(Case("folders", "5,000 empty parts beside a run's", ["report", "run", "-o", "rep"],
                      folder_setup("run", many_parts), timeout=60))

    def ledger_lines(ctx, folder):
        with open(folder / "parts.jsonl", "a") as handle:
            line = (folder / "parts.jsonl").read_text().splitlines()[0]
            handle.write((line + "\n") * 200_000)
    cases.append(Case("folders", "a ledger of 200,000 lines", ["verify", "run"],
                      folder_setup("run", ledger_lines), timeout=60))

    def labels_newline(ctx, folder):
        _edit_json(folder / "manifest.json", lambda d: d["config"].__setitem__(
            "labels", ["greedy\nsniff: error: forged\x1b[31m", "random"]))
    cases.append(Case("folders", "a label with a newline and ESC", ["report", "run", "-o", "rep"],
                      folder_setup("run", labels_newline)))

    cases.append(Case("folders", "a run folder that is a link", ["query", "linked",
                                                               "SELECT count(*) AS n FROM games"],
                      lambda ctx: (ctx.copy("run"),
                                   (ctx.dir / "linked").symlink_to(ctx.dir / "run")),
                      expect="either", check=lambda c, o: None if re.search(r"\b200\b", o.out)
                      else "not 200 games"))
    return cases


def _tournament_cases() -> list[Case]:
    """Tournament folders: the tournament file, its pairings."""
    cases = []
    for how in ("fifo", "zero", "nested", "non-utf8"):
        cases.append(Case("folders", f"tournament.json: {how}", ["report", "tour", "-o", "rep"],
                          folder_setup("tour", lambda c, f, h=how: _replace(
                              f / "tournament.json", h, c))))

    def pair_link(ctx, folder):
        outside = ctx.copy("run", "outside")
        pair = folder / "pairs" / "01-greedy-vs-random"
        shutil.rmtree(pair)
        pair.symlink_to(outside)
    cases.append(Case("folders", "a pairing that is a link out", ["report", "tour", "-o", "rep"],
                      folder_setup("tour", pair_link)))

    def pairs_traversal(ctx, folder):
        ctx.victim()
        def edit(data):
            key = next(k for k, v in data.items() if isinstance(v, (list, dict)) and "pair" in k)
            entries = data[key]
            if isinstance(entries, list) and entries and isinstance(entries[0], dict):
                for name in ("name", "folder", "path"):
                    if name in entries[0]:
                        entries[0][name] = "../../victim.txt"
        _edit_json(folder / "tournament.json", edit)
    cases.append(Case("folders", "a pairing named ../../victim.txt, resume",
                      ["tournament", "--players", "2", "--strategies", "greedy,random,heavy",
                       "--games-per-pair", "40", "--out", "tour", "--resume", "-q"],
                      folder_setup("tour", pairs_traversal), expect="either",
                      check=lambda c, o: None))

    def pairs_link(ctx, folder):
        other = ctx.copy("tour", "other")
        ctx.protect(other)
        shutil.rmtree(folder / "pairs")
        (folder / "pairs").symlink_to(other / "pairs")
    cases.append(Case("folders", "pairs/ a link to another tournament's, --overwrite",
                      ["tournament", "--players", "2", "--strategies", "greedy,random",
                       "--games-per-pair", "20", "--out", "tour", "--overwrite", "-q"],
                      folder_setup("tour", pairs_link)))
    return cases


def _openings_cases() -> list[Case]:
    """Openings folders: the summary, the games, the ranking."""
    cases = []
    for how in ("fifo", "zero", "big", "nested"):
        cases.append(Case("folders", f"openings summary.json: {how}",
                          ["query", "open", "SELECT count(*) FROM openings"],
                          folder_setup("open", lambda c, f, h=how: _replace(
                              f / "summary.json", h, c))))

    def open_games_link(ctx, folder):
        other = ctx.copy("run", "other")
        ctx.protect(other)
        shutil.rmtree(folder / "games")
        (folder / "games").symlink_to(other / "games")
    cases.append(Case("folders", "openings games/ a link to a run's, --overwrite",
                      ["openings", "--players", "2", "--deals", "1", "-o", "open", "--overwrite",
                       "-q"], folder_setup("open", open_games_link)))

    def ranking_edit(ctx, folder):
        path = folder / "ranking.md"
        path.write_text(path.read_text().replace("1", "9"))
    cases.append(Case("folders", "openings ranking.md edited", ["verify", "open"],
                      folder_setup("open", ranking_edit)))
    return cases


def _tune_compare_cases() -> list[Case]:
    """Tuning and comparison folders."""
    cases = []
    for how in ("fifo", "zero", "big", "nan"):
        cases.append(Case("folders", f"tune best.json: {how}",
                          ["simulate", "--players", "2", "--strategies",
                           "defensive:@tune/best.json,random", "--games", "10", "-o", "out", "-q"],
                          folder_setup("tune", lambda c, f, h=how: _replace(
                              f / "best.json", h, c))))

    def best_huge(ctx, folder):
        _edit_json(folder / "best.json", lambda d: d.update(
            {k: 1e308 for k, v in d.items() if isinstance(v, float)}))
    cases.append(Case("folders", "tune best.json: 1e308 values",
                      ["simulate", "--players", "2", "--strategies",
                       "defensive:@tune/best.json,random", "--games", "10", "-o", "out", "-q"],
                      folder_setup("tune", best_huge), expect="either",
                      check=lambda c, o: "1e308 accepted" if "1e+308" in o.out + o.err else None))
    for how in ("fifo", "nested", "non-utf8"):
        cases.append(Case("folders", f"tune manifest.json: {how}, resume",
                          ["tune", "defensive", "--against", "random", "--players", "2",
                           "--games", "400", "-o", "tune", "--resume", "-q"],
                          folder_setup("tune", lambda c, f, h=how: _replace(
                              f / "manifest.json", h, c))))
    for how in ("fifo", "zero", "nested"):
        cases.append(Case("folders", f"compare.json: {how}", ["verify", "cmp"],
                          folder_setup("cmp", lambda c, f, h=how: _replace(
                              f / "compare.json", h, c))))
    return cases


def _output_cases() -> list[Case]:
    """What the commands write to: FIFOs, links, files, other folders."""
    cases = []
    outputs = {
        "a FIFO": lambda ctx: _mkfifo(ctx.dir / "out"),
        "/dev/null": None,
        "a link to a victim folder": lambda ctx: (ctx.copy("run", "victim"),
                                                  ctx.protect(ctx.dir / "victim"),
                                                  (ctx.dir / "out").symlink_to(ctx.dir / "victim")),
        "a regular file": lambda ctx: (ctx.dir / "out").write_text("keep me"),
        "inside another run's games/": lambda ctx: ctx.copy("run"),
        "an openings folder": lambda ctx: ctx.copy("open", "out"),
    }
    for name, setup in outputs.items():
        target = "/dev/null" if name == "/dev/null" else (
            "run/games/new" if "inside" in name else "out")
        protect = setup

        def both(ctx, setup=protect, name=name):
            if setup:
                setup(ctx)
            for path in (ctx.dir / "out", ctx.dir / "run"):
                if path.exists() and not stat.S_ISFIFO(os.lstat(path).st_mode):
                    ctx.protect(path)
        cases.append(Case("folders", f"simulate -o {name} --overwrite",
                          [*SIM[:-3], "-o", target, "--overwrite", "-q"], both))
    cases.append(Case("folders", "trace -o over a Parquet file",
                      ["trace", "--players", "2", "--strategies", "greedy,random", "-o",
                       "run/games/part-000000.parquet", "--overwrite"],
                      lambda ctx: (ctx.copy("run"), ctx.protect(ctx.dir / "run"))))
    cases.append(Case("folders", "query --parquet over a CSV",
                      ["query", "run", "SELECT 1", "--parquet", "keep.csv", "--overwrite"],
                      lambda ctx: (ctx.copy("run"), (ctx.dir / "keep.csv").write_text("a,b\n"),
                                   ctx.protect(ctx.dir / "keep.csv"))))
    cases.append(Case("folders", "an output name with a newline and ESC",
                      [*SIM[:-3], "-o", "out\nsniff: error: forged\x1b[2J", "-q"],
                      expect="either", check=lambda c, o: (
                          "a raw ESC or a forged line" if "\x1b" in o.out + o.err or
                          "\nsniff: error: forged" in o.out + o.err else None)))
    return cases


def folder_cases() -> list[Case]:
    return [*_run_folder_cases(), *_tournament_cases(), *_openings_cases(),
            *_tune_compare_cases(), *_output_cases()]


# ------------------------------------------------------------------ plugins


def plugin_cases() -> list[Case]:
    cases = []
    small = ["simulate", "--players", "2", "--games", "20", "-o", "out", "-q"]

    def with_plugin(module: str, *command: str) -> list[str]:
        return ["--plugin", module, *command]

    for module in ("cp_raise_import", "cp_exit_import", "cp_syntax", "cp_registers_nothing",
                   "does_not_exist", "../etc/passwd", "/tmp/x.py", "", "os", "a b",
                   "cp_players.value_error", "pl\u00e4gin", "x" * 5000, "sim.cli.main"):
        expect = "either" if module in ("os", "cp_registers_nothing", "sim.cli.main") else "refuse"
        cases.append(Case("plugins", f"--plugin {module[:40]!r}",
                          with_plugin(module, *small, "--strategies", "greedy,random"),
                          expect=expect, check=(lambda c, o: None) if expect == "either"
                          else None))
    cases.append(Case("plugins", "--plugin whose import raises KeyboardInterrupt",
                      with_plugin("cp_baseexc_import", *small, "--strategies", "greedy,random"),
                      expect="either", check=lambda c, o: None))
    cases.append(Case("plugins", "--plugin whose import hangs (Ctrl-C)",
                      with_plugin("cp_hang_import", *small, "--strategies", "greedy,random"),
                      interrupt=True, timeout=15))
    cases.append(Case("plugins", "SNIFF_PLUGINS of garbage", [*small, "--strategies",
                                                             "greedy,random"],
                      env={"SNIFF_PLUGINS": ",,;\x1b[31m,../x"}))
    players = ("cp_value_error", "cp_recursion", "cp_alloc", "cp_grow", "cp_none", "cp_floats",
               "cp_bool", "cp_2d", "cp_huge_int", "cp_uint", "cp_bad_array", "cp_bad_len",
               "cp_string", "cp_generator", "cp_negative", "cp_systemexit")
    for name in players:
        cases.append(Case("plugins", f"Python player {name}",
                          with_plugin("cp_players", *small, "--strategies", f"{name},greedy"),
                          timeout=120, own_memory=name in ("cp_alloc", "cp_grow")))
    cases.append(Case("plugins", "Python player cp_keyboard (raises KeyboardInterrupt)",
                      with_plugin("cp_players", *small, "--strategies", "cp_keyboard,greedy"),
                      expect="either", check=lambda c, o: None))
    for name in ("cp_sleep", "cp_spin"):
        cases.append(Case("plugins", f"Python player {name} (Ctrl-C)",
                          with_plugin("cp_players", *small, "--strategies", f"{name},greedy"),
                          interrupt=True, timeout=20))
    commands = {
        "tournament": ["tournament", "--players", "2", "--strategies", "cp_value_error,greedy",
                       "--games-per-pair", "20", "--out", "out", "-q"],
        "openings": ["openings", "--players", "2", "--strategies", "cp_value_error", "--deals",
                     "1", "-o", "out", "-q"],
        "compare": ["compare", "cp_value_error", "greedy", "--players", "2", "--max-games",
                    "100", "-o", "out", "-q"],
        "play": ["play", "--players", "2", "--opponents", "cp_value_error", "--seed", "1",
                 "--trace", "out"]}

    def nothing_left(ctx, outcome):
        return None if not (ctx.dir / "out").exists() else "left out/ behind"
    for command, args in commands.items():
        cases.append(Case("plugins", f"{command} with a Python player that raises",
                          with_plugin("cp_players", *args), check=nothing_left,
                          stdin="/dev/null"))
    cases.append(Case("plugins", "Python player that writes into its inputs",
                      with_plugin("cp_players", *small, "--strategies", "cp_mutates,greedy"),
                      expect="either", check=lambda c, o: _verify_replays(c)))
    for name in ("cp_c_raises", "cp_c_range", "cp_c_alloc"):
        cases.append(Case("plugins", f"compiled strategy {name}",
                          with_plugin("cp_compiled", *small, "--strategies", f"{name},greedy"),
                          timeout=180, own_memory=name == "cp_c_alloc"))
    cases.append(Case("plugins", "compiled strategy returning a float",
                      with_plugin("cp_float_choose", *small, "--strategies", "cp_c_float,greedy"),
                      timeout=180))
    cases.append(Case("plugins", "a plugin registering a built-in's name",
                      with_plugin("cp_name_clash", *small, "--strategies", "greedy,random")))
    cases.append(Case("plugins", "a multiprocessing.py in the working folder, local:2",
                      ["simulate", "--players", "2", "--games", "400", "--scheduler", "local:2",
                       "-o", "out", "-q"],
                      lambda ctx: (ctx.dir / "multiprocessing.py").write_text(ctx.payload()),
                      expect="either", check=lambda c, o: None, timeout=240))
    cases.append(Case("plugins", "a numba.py in the working folder",
                      [*small, "--strategies", "greedy,random"],
                      lambda ctx: (ctx.dir / "numba.py").write_text(ctx.payload()),
                      expect="either", check=lambda c, o: None))
    return cases


def _verify_replays(ctx: Context) -> str | None:
    done = subprocess.run(ctx.campaign.sniff + ["--plugin", "cp_players", "verify", "out",
                                                "--replay", "20"],
                          cwd=ctx.dir, env=ctx.env, capture_output=True, text=True, timeout=120)
    return None if done.returncode == 0 else \
        f"verify --replay: {done.stdout[-200:]} {done.stderr[-200:]}"


# ------------------------------------------------------------------ the command line


def _cli_flag_cases() -> list[Case]:
    """Flags, numbers, strategy specs and special files as inputs."""
    base = ["simulate", "--players", "2", "--strategies", "greedy,random", "-o", "out", "-q"]
    cases = []
    for flags in (["--games", str(10**30)], ["--games", "-5"], ["--games", "1e3"],
                  ["--games", "0"], ["--seed", str(2**64)], ["--seed", "-1"],
                  ["--chunk-size", "0"], ["--chunk-size", str(10**20)], ["--precision", "0"],
                  ["--precision", "nan"], ["--precision", "1e-320"], ["--precision", "-1"],
                  ["--games", "10", "--threads", "0"], ["--games", "10", "--bogus"],
                  ["--games", "10", "--round-cap", "0"]):
        cases.append(Case("cli", f"simulate {' '.join(flags)[:50]}", [*base, *flags]))
    cases.append(Case("cli", "simulate --games in Arabic-Indic digits (twelve)",
                      [*base, "--games", "\u0661\u0662"], expect="either",
                      check=lambda c, o: _games_in(c, 12)))
    cases.append(Case("cli", "simulate --threads 100000", [*base, "--games", "10", "--threads",
                                                         "100000"], expect="either",
                      check=lambda c, o: None))
    for players in ("5", "0", "1", "x"):
        cases.append(Case("cli", f"--players {players}", ["simulate", "--players", players,
                                                         "--games", "10", "-o", "out"]))
    specs = ["nosuch,greedy", "greedy:x=1,random", "expert:budget=1e9,random",
             "weighted:points=nan,random", "weighted:points=1e309,random",
             "weighted:points=1e308,random", "greedy,\x1b[31mred\nsniff: error: x",
             "gr\u00ebedy,random", "@/dev/zero", "@fifo", "@.", "defensive:@/dev/zero,random",
             "defensive:@fifo,random", ",".join(["greedy"] * 5000),
             "learned:model=/dev/zero,greedy",
             "learned:model=fifo,greedy", "learned:model=.,greedy", "expert:policy=expert,random",
             "rollout:base=rollout,random"]
    for spec in specs:
        def setup(ctx):
            _mkfifo(ctx.dir / "fifo")
        cases.append(Case("cli", f"--strategies {spec[:40]!r}",
                          ["simulate", "--players", "2", "--strategies", spec, "--games", "10",
                           "-o", "out", "-q"], setup, timeout=60))
    cases.append(Case("cli", "an argument of 120 KB", ["simulate", "--strategies", "g" * 120_000,
                                                      "--games", "10", "-o", "out"]))
    special = {"/dev/zero": "/dev/zero", "a FIFO": "fifo", "a folder": ".",
               "/dev/stdin": "/dev/stdin", "a 300 MB sparse file": "big"}
    for name, path in special.items():
        def setup(ctx):
            _mkfifo(ctx.dir / "fifo")
            with open(ctx.dir / "big", "wb") as handle:
                handle.truncate(300 * 2**20)
        for command in (["report", path, "-o", "rep"], ["replay", path], ["hint", path],
                        ["verify", path], ["query", path, "SELECT 1"]):
            cases.append(Case("cli", f"{command[0]} {name}", command, setup, timeout=60,
                              stdin="/dev/zero"))
    return cases


def _cli_input_cases() -> list[Case]:
    """Traces, positions, folders and standard inputs of the other commands."""
    cases = []
    cases.append(Case("cli", "hint - from /dev/zero", ["hint", "-"], stdin="/dev/zero", timeout=60))
    cases.append(Case("cli", "replay a trace, game 10**20",
                      ["replay", "trace.jsonl", "--game", str(10**20)],
                      lambda ctx: ctx.copy("trace.jsonl")))

    def nested_trace(ctx):
        (ctx.dir / "t.jsonl").write_text("[" * 100_000 + "\n")
    cases.append(Case("cli", "replay a trace of one deeply nested line", ["replay", "t.jsonl"],
                      nested_trace))

    def long_line(ctx):
        with open(ctx.dir / "t.jsonl", "w") as handle:
            handle.write('{"event": "' + "x" * 50_000_000 + '"}\n')
    cases.append(Case("cli", "replay a trace with a 50 MB line", ["replay", "t.jsonl"], long_line))
    cases.append(Case("cli", "verify /", ["verify", "/"], timeout=60))
    cases.append(Case("cli", "verify /proc", ["verify", "/proc"], timeout=60))
    for flags in (["--difference", "0"], ["--difference", "nan"], ["--difference", "1e-300"],
                  ["--difference", "0.02", "--power", "2"],
                  ["--difference", "0.02", "--confidence", "1"],
                  ["--difference", "0.02", "--paired", "--sd", "-1"]):
        cases.append(Case("cli", f"plan {' '.join(flags)}", ["plan", *flags]))
    for points in (str(10**12), "1e3", "nan", "--"):
        cases.append(Case("cli", f"tally {points}", ["tally", points], timeout=30))
    cases.append(Case("cli", "tally -5 (a minus sign, then the tally)", ["tally", "--", "-5"],
                      expect="either", check=lambda c, o: None if o.out.lstrip().startswith(
                          ("\u2212", "-", "\u2572")) else f"not a negative tally: {o.out[:40]}"))
    cases.append(Case("cli", "trace --games 10**12", ["trace", "--players", "2", "--strategies",
                                                      "greedy,random", "--games", str(10**12),
                                                      "-o", "t.jsonl"], timeout=30))
    cases.append(Case("cli", "report --title with control characters",
                      ["report", "run", "-o", "rep", "--title", "T\x1b[2J\x07\nline"],
                      lambda ctx: ctx.copy("run"), expect="either", check=_no_raw_controls))
    cases.append(Case("cli", "play with an empty standard input",
                      ["play", "--players", "2", "--seed", "1", "--trace", "t.jsonl"],
                      stdin="/dev/null", expect="either", check=lambda c, o: None))
    cases.append(Case("cli", "play with /dev/zero as standard input",
                      ["play", "--players", "2", "--seed", "1", "--trace", "t.jsonl"],
                      stdin="/dev/zero", expect="either", check=lambda c, o: None, timeout=60))
    cases.append(Case("cli", "compare with --h1 nan", ["compare", "greedy", "random", "--h1",
                                                       "nan", "-o", "out"]))
    cases.append(Case("cli", "compare with --h0 above --h1", ["compare", "greedy", "random",
                                                              "--h0", "0.1", "--h1", "0.05",
                                                              "-o", "out"]))
    cases.append(Case("cli", "hint --budget 10**9 of a position",
                      ["hint", "--trace", "trace.jsonl", "--round", "1", "--turn", "1",
                       "--budget", str(10**9)], lambda ctx: ctx.copy("trace.jsonl")))
    cases.append(Case("cli", "learn -o a FIFO", ["learn", "--players", "2", "--iterations", "1",
                                                 "--games", "10", "-o", "fifo"],
                      lambda ctx: _mkfifo(ctx.dir / "fifo")))
    return cases


def cli_cases() -> list[Case]:
    return [*_cli_flag_cases(), *_cli_input_cases()]


def _games_in(ctx: Context, games: int) -> str | None:
    import pyarrow.parquet as pq

    found = pq.read_table(ctx.dir / "out" / "games", columns=["game_id"]).num_rows
    return None if found == games else f"{found} games where {games} were asked"


def _no_raw_controls(ctx: Context, outcome: Outcome) -> str | None:
    text = outcome.out + outcome.err
    for path in (ctx.dir / "rep").rglob("*.md"):
        text += path.read_text(errors="replace")
    return "a raw control character reached the output" if re.search(
        "[\x00-\x08\x0b-\x1f\x7f]", text.replace("\r", "")) else None


# ------------------------------------------------------------------ sniff serve


@dataclass(frozen=True)
class Asked:
    """How a serve case asks: its headers, the statuses that are a clean answer, whether it
    sends the page's token, its Host and Origin, whether it names a game, how many times."""

    headers: dict | None = None
    statuses: tuple = (400,)
    token: bool = True
    host: str | None = None
    origin: str | None = None
    game: bool = False
    repeat: int = 1


def serve_case(name: str, method: str, path: str, body: bytes | None = None,
               **options) -> Case:
    """A request (``{game}`` in ``path`` is a game of this server) and the statuses that
    are a clean answer (``options``: ``Asked``'s fields)."""
    asked = Asked(**options)
    headers, statuses, token, host, origin, game, repeat = (
        asked.headers, asked.statuses, asked.token, asked.host, asked.origin, asked.game,
        asked.repeat)

    def send(ctx: Context) -> tuple[str, str]:
        campaign = ctx.campaign
        address, port, secret = campaign.serve()
        before = campaign.serve_log().count("Traceback")
        given = {"Host": host if host is not None else f"{address}:{port}"}
        if token:
            given["x-sniff-token"] = secret
        if origin:
            given["Origin"] = origin
        if body is not None:
            given.setdefault("Content-Type", "application/json")
        given.update(headers or {})
        target = path
        if game or "{game}" in path:
            target = path.replace("{game}", campaign.game_id(ctx))
        seen = []
        try:
            for _ in range(repeat):
                status, _, text = request(address, port, method, target.replace(
                    "{random}", os.urandom(8).hex()), body, given, timeout=20)
                seen.append(status)
        except TimeoutError:
            return "hang", "no answer in 20 s"
        except (ConnectionError, http.client.HTTPException) as error:
            if campaign.server.poll() is not None:
                return "traceback", f"the server died: {error}"
            seen.append(f"closed: {type(error).__name__}")
        time.sleep(0.2)
        if campaign.serve_log().count("Traceback") > before:
            return "traceback", "a traceback in the server's log"
        if campaign.server.poll() is not None:
            return "traceback", "the server died"
        if 500 in seen:
            return "traceback", "a 500"
        last = seen[-1]
        if repeat > 1:
            return ("clean", f"{Counter(seen)}") if any(s in statuses for s in seen) else (
                "silently wrong", f"never {statuses}: {Counter(seen)}")
        if last in statuses:
            return "clean", f"{last}: {text[:100]}"
        return "silently wrong", f"{last} where {statuses} was expected: {text[:100]}"
    return Case("serve", name, send)


def _new_game(**fields) -> bytes:
    """A request body for a new game, ``fields`` replaced."""
    return json.dumps({"players": 2, "seat": 0, "opponents": ["greedy"], "target": 250,
                       **fields}).encode()


def _serve_new_game_cases() -> list[Case]:
    """Requests that open a game: the Host, Origin and token checks, the body's size and
    shape, the new game's settings."""
    new, game = _new_game(), _new_game
    nested = ("[" * 30_000 + "]" * 30_000).encode()
    return [
        serve_case("Host of another site", "GET", "/api/strategies", host="evil.example:80",
                   statuses=(421,)),
        serve_case("no Host header", "GET", "/api/strategies", host="", statuses=(400, 421)),
        serve_case("Origin of another site", "POST", "/api/games", new,
                   origin="http://evil.example", statuses=(403,)),
        serve_case("no token", "POST", "/api/games", new, token=False, statuses=(403,)),
        serve_case("a non-ASCII token", "POST", "/api/games", new, token=False,
                   headers={"x-sniff-token": "t\u00f6k\u00e9n".encode().decode("latin-1")},
                   statuses=(403,)),
        serve_case("a body of 10 MB", "POST", "/api/games", b"{" + b" " * 10_000_000 + b"}",
                   statuses=(413,)),
        serve_case("Content-Length 10**12, a small body", "POST", "/api/games", b"{}",
                   headers={"Content-Length": str(10**12)}, statuses=(413, 400)),
        serve_case("Content-Length not a number", "POST", "/api/games", b"{}",
                   headers={"Content-Length": "abc"}, statuses=(400, 413)),
        serve_case("bad JSON", "POST", "/api/games", b"{", statuses=(400,)),
        serve_case("JSON nested 30,000 deep", "POST", "/api/games", nested, statuses=(400,)),
        serve_case("JSON not an object", "POST", "/api/games", b"[1, 2]", statuses=(400,)),
        serve_case("players 1e999", "POST", "/api/games", b'{"players": 1e999, "seat": 0, '
                   b'"opponents": ["greedy"], "target": 250}', statuses=(400,)),
        serve_case("players as a string", "POST", "/api/games", game(players="2"),
                   statuses=(400, 200)),
        serve_case("seed 2**80", "POST", "/api/games", game(seed=2**80), statuses=(400,)),
        serve_case("seed -1", "POST", "/api/games", game(seed=-1), statuses=(400,)),
        serve_case("target 10**30", "POST", "/api/games", game(target=10**30), statuses=(400,)),
        serve_case("7,000 opponents", "POST", "/api/games", game(opponents=["greedy"] * 7000),
                   statuses=(400, 413)),
        serve_case("500 opponents", "POST", "/api/games", game(opponents=["greedy"] * 500),
                   statuses=(400,)),
        serve_case("an opponent reading a file", "POST", "/api/games",
                   game(opponents=["defensive:@/etc/passwd"]), statuses=(400,)),
        serve_case("a NUL in a name", "POST", "/api/games", game(opponents=["gre\u0000edy"]),
                   statuses=(400,)),
    ]


def _serve_session_cases() -> list[Case]:
    """Requests to the static files, a game in progress, replays and positions, and many
    headers or requests."""
    return [
        serve_case("a path out of static", "GET", "/static/../../../../etc/passwd",
                   statuses=(404, 400)),
        serve_case("an encoded path out of static", "GET", "/static/%2e%2e/%2e%2e/app.py",
                   statuses=(404, 400)),
        serve_case("a session id of 8,000 characters", "GET", "/api/games/" + "a" * 8000,
                   statuses=(404, 400, 414)),
        serve_case("since=-1", "GET", "/api/games/{game}?since=-1", statuses=(400,)),
        serve_case("since=10**30", "GET", f"/api/games/{{game}}?since={10**30}",
                   statuses=(400, 200)),
        serve_case("since=abc", "GET", "/api/games/{game}?since=abc", statuses=(400,)),
        serve_case("a move of 10**30", "POST", "/api/games/{game}/move",
                   json.dumps({"move": 10**30, "version": 0}).encode(), statuses=(400, 409)),
        serve_case("a move as a list", "POST", "/api/games/{game}/move",
                   json.dumps({"move": [1], "version": "x"}).encode(), statuses=(400, 409)),
        serve_case("a hint of 10**9 play-outs", "POST", "/api/games/{game}/hint",
                   json.dumps({"budget": 10**9}).encode(), statuses=(400,)),
        serve_case("a hint budget NaN", "POST", "/api/games/{game}/hint",
                   b'{"budget": NaN}', statuses=(400,)),
        serve_case("position at event 10**20", "POST", "/api/games/{game}/position",
                   json.dumps({"event": 10**20}).encode(), statuses=(400, 404)),
        serve_case("a replay of a trace that is not one", "POST", "/api/replay?game=0",
                   b"\x00\xff" * 1000, statuses=(400,)),
        serve_case("a replay of a trace nested deep", "POST", "/api/replay?game=0",
                   b"[" * 100_000 + b"\n", statuses=(400,)),
        serve_case("a replay of game 10**20", "POST", f"/api/replay?game={10**20}",
                   b'{"event": "game_start"}\n', statuses=(400, 404)),
        serve_case("a position to read that is binary", "POST", "/api/position/read",
                   json.dumps({"text": "\u0000\ud7ff" * 1000}).encode(), statuses=(400,)),
        serve_case("a position hint of 10**9 play-outs", "POST", "/api/position/hint",
                   json.dumps({"text": "x", "budget": 10**9}).encode(), statuses=(400,)),
        serve_case("a draft position of junk", "POST", "/api/position/write",
                   json.dumps({"hand": "x" * 1000, "table": [[10**20, "Q"]]}).encode(),
                   statuses=(400,)),
        serve_case("200 headers", "GET", "/api/strategies",
                   headers={f"x-h{i}": "v" * 50 for i in range(200)}, statuses=(200, 400, 431)),
        serve_case("a header of 100 KB", "GET", "/api/strategies",
                   headers={"x-big": "v" * 100_000}, statuses=(200, 400, 431)),
        serve_case("300 requests naming random sessions", "GET", "/api/games/{random}",
                   statuses=(429,), repeat=300),
    ]


def serve_cases() -> list[Case]:
    return [*_serve_new_game_cases(), *_serve_session_cases()]


# ------------------------------------------------------------------ sniff query


def query_cases() -> list[Case]:
    cases = []

    def q(name, sql, *flags, expect="refuse", check=None, setup=None, timeout=90):
        def prepare(ctx):
            ctx.copy("run")
            ctx.protect(ctx.dir / "run")
            ctx.victim()
            if setup:
                setup(ctx)
        cases.append(Case("query", name, ["query", "run", sql, *flags], prepare, expect=expect,
                          check=check, timeout=timeout))
    victim = "victim.txt"
    q("COPY to a file", f"COPY (SELECT 1) TO '{victim}'")
    q("COPY to a new file", "COPY (SELECT 1) TO 'new.csv'",
      check=lambda c, o: "wrote new.csv" if (c.dir / "new.csv").exists() else None)
    q("ATTACH a database", "ATTACH 'x.db' AS x")
    q("INSTALL an extension", "INSTALL httpfs")
    q("LOAD an extension", "LOAD httpfs")
    q("read a file", "SELECT * FROM read_csv('/etc/passwd')")
    q("read a file as text", "SELECT * FROM read_text('/etc/hostname')")
    q("glob the file system", "SELECT * FROM glob('/etc/*')")
    q("switch external access on", "SET enable_external_access = true")
    q("raise the memory limit", "SET memory_limit = '100GB'")
    q("raise the threads", "SET threads = 1000")
    q("PRAGMA", "PRAGMA enable_profiling")
    q("EXPORT DATABASE", "EXPORT DATABASE 'exported'",
      check=lambda c, o: "exported" if (c.dir / "exported").exists() else None)
    q("two statements", f"SELECT 1; COPY (SELECT 1) TO '{victim}'")
    q("DROP a view, then read", "DROP VIEW games", expect="either",
      check=lambda c, o: None)
    q("CREATE a table", "CREATE TABLE t AS SELECT 1", expect="either", check=lambda c, o: None)
    q("a 10**12-row answer, shown", "SELECT * FROM range(1000000000000)", "--max-rows", "5",
      expect="either", check=lambda c, o: None, timeout=60)
    q("a 10**12-row answer, as CSV", "SELECT * FROM range(1000000000000)", "--csv",
      "--timeout", "5", timeout=60)
    q("a string of 2**31 bytes", "SELECT repeat('x', 2147483647) AS s", "--timeout", "30",
      timeout=90)
    # a top-1 of a billion rows streams in bounded memory: its answer, or (on a slow
    # machine) the time limit's one line, are both right
    q("a sort of 10**9 random rows", "SELECT * FROM range(1000000000) ORDER BY random() LIMIT 1",
      "--timeout", "20", timeout=90, expect="either",
      check=lambda c, o: None if re.search(r"\b\d{1,10}\b", o.out) else "no row")
    q("a cross join past memory", "SELECT list(a.range) FROM range(100000000) a, range(100) b",
      "--timeout", "30", timeout=90)
    q("--timeout 0", "SELECT 1", "--timeout", "0")
    q("--timeout nan", "SELECT 1", "--timeout", "nan")
    q("--timeout 10**20", "SELECT 1", "--timeout", str(10**20))
    q("getenv", "SELECT getenv('HOME')", expect="either", check=lambda c, o: None)
    q("SQL with a control character", "SELECT 1\x1b; DROP VIEW games")
    q("SQL of 120 KB", "SELECT " + "1+" * 60_000 + "1", timeout=90)
    q("a syntax error", "SELEC 1")
    q("--parquet to a FIFO", "SELECT 1", "--parquet", "fifo",
      setup=lambda c: _mkfifo(c.dir / "fifo"))
    q("--parquet into the run's games/", "SELECT 1", "--parquet", "run/games/x.parquet")
    q("--parquet to /dev/null", "SELECT 1", "--parquet", "/dev/null")
    q("--parquet through a link to the victim", "SELECT 1", "--parquet", "link.parquet",
      "--overwrite", setup=lambda c: (c.dir / "link.parquet").symlink_to(c.dir / victim))
    q("the answer's names with control characters", "SELECT 1 AS \"a\x1b[2J\nsniff: error: x\"",
      expect="either", check=lambda c, o: "raw ESC" if "\x1b" in o.out else None)
    q("a right count", "SELECT count(*) AS n FROM games", expect="ok",
      check=lambda c, o: None if re.search(r"\b200\b", o.out) else f"not 200: {o.out[-80:]}")
    return cases


def all_cases(root: bool) -> list[Case]:
    return [*cache_cases(root), *folder_cases(), *plugin_cases(), *cli_cases(),
            *serve_cases(), *query_cases()]


def table(rows: list[dict]) -> str:
    counts = Counter((row["surface"], row["kind"]) for row in rows)
    kinds = [k for k in KINDS if any(counts[(s, k)] for s in SURFACES)] or ["clean"]
    lines = ["| surface | cases | " + " | ".join(kinds) + " |",
             "|---|---:|" + "---:|" * len(kinds)]
    for surface in SURFACES:
        total = sum(counts[(surface, k)] for k in KINDS)
        if total:
            lines.append(f"| {surface} | {total} | " + " | ".join(
                str(counts[(surface, k)]) for k in kinds) + " |")
    lines.append(f"| all | {len(rows)} | " + " | ".join(
        str(sum(counts[(s, k)] for s in SURFACES)) for k in kinds) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, metavar="N",
                        help="only the first N cases of each surface (a smoke run)")
    parser.add_argument("--surface", choices=SURFACES, action="append",
                        help="only this surface (repeatable)")
    parser.add_argument("--match", metavar="TEXT", help="only the cases whose name holds TEXT")
    parser.add_argument("--out", type=Path, help="one JSON line per case")
    parser.add_argument("--cache", type=Path,
                        help="the compile cache the cases copy [default: this user's]")
    parser.add_argument("--keep", action="store_true", help="leave the work folder")
    parser.add_argument("--code", type=Path, default=ROOT, metavar="DIR",
                        help="the checkout whose sniff the cases run [default: this one]")
    parser.add_argument("--from", dest="first", type=int, default=0, metavar="N",
                        help="start at case N (of the cases chosen), e.g. after a stop")
    parser.add_argument("--table", type=Path, metavar="JSONL",
                        help="print the table of the cases in this --out file, run nothing")
    args = parser.parse_args()
    if args.table:
        rows = [json.loads(line) for line in args.table.open()]
        print(table(rows))
        return
    from sim.cache import cache_base

    source = args.cache or cache_base()
    work = Path(tempfile.mkdtemp(prefix="sniff-campaign-"))
    os.chmod(work, 0o755)
    campaign = Campaign(work, source, args.code.resolve())
    print(f"campaign: work folder {work}", flush=True)
    rows: list[dict] = []
    try:
        campaign.build_base()
        NAMES.update(_names(campaign))
        cases = all_cases(campaign.is_root)
        if not campaign.runs_as(NOBODY):
            skipped = [c.name for c in cases if c.user is not None]
            print(f"campaign: {len(skipped)} case(s) skipped: sniff cannot run as uid {NOBODY} "
                  "here (its interpreter is not readable by that user)", flush=True)
            cases = [c for c in cases if c.user is None]
        if args.surface:
            cases = [c for c in cases if c.surface in args.surface]
        if args.match:
            cases = [c for c in cases if args.match in c.name]
        if args.cases is not None:
            kept: Counter = Counter()
            chosen = []
            for case in cases:
                if kept[case.surface] < args.cases:
                    kept[case.surface] += 1
                    chosen.append(case)
            cases = chosen
        for index, case in enumerate(cases):
            if index < args.first:
                continue
            row = campaign.run_case(case, index)
            rows.append(row)
            mark = "  " if row["kind"] == "clean" else "!!"
            print(f"{mark} {index:3d} {row['surface']:7s} {row['kind']:15s} {case.name[:60]}"
                  f" ({row['seconds']:.1f} s): {row['why'][:100]}", flush=True)
            if args.out:
                with args.out.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
            if not args.keep:
                shutil.rmtree(work / "cases", ignore_errors=True)
        server = campaign.stop_server()
        if server and (not server["alive_at_end"] or server["log_tracebacks"]):
            print(f"campaign: the server at the end: {server}")
    finally:
        if campaign.server is not None and campaign.server.poll() is None:
            campaign.server.kill()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(rows))
    bad = [row for row in rows if row["kind"] != "clean"]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} clean")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

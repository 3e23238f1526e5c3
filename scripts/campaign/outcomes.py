"""The campaign's vocabulary: the kinds of outcome and the surfaces, a case and its
context, one case run in a process of its own under its limits, and the classifier that
names what came of it (one ``sniff: error:`` line, a traceback, a hang, a planted file
that ran, a protected file changed)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the campaign hands each case its context
    from campaign_run import Campaign



KINDS = ("clean", "code execution", "data loss", "silently wrong", "hang", "traceback",
         "harness error", "unbounded memory", "unclear")
SURFACES = ("cache", "folders", "plugins", "cli", "serve", "query")
MEMORY_LIMIT = 6 * 2**30  # address space of a case (numba and DuckDB map much more than they use)
MEMORY_BOUND = 2 * 2**30  # resident: past this, a case used unbounded memory
NOBODY = 65534
GRACE = 15  # seconds between the Ctrl-C of a case at its limit and its SIGKILL
ROOT = Path(__file__).resolve().parents[2]


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

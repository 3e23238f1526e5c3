"""The campaign itself: its work folder and base folders, each case run in order and
recorded, what a case left running stopped; a request to ``sniff serve``; the helpers
several surfaces' cases share (FIFOs, owners, the same games as a sound run)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from outcomes import BASE_COMMANDS, ROOT, Case, Context, Outcome, _limits, classify, run_process
from plugin_sources import PLUGINS


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

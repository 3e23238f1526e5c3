"""Every long command on a Dask cluster of separate processes gives what it gives locally.

One cluster serves the module: a ``dask scheduler`` and two ``dask worker`` processes (each
under its nanny, which restarts a killed worker), started here with this interpreter on
127.0.0.1 and always torn down. Each test runs a command locally and on the cluster and
compares the folders file by file (timings aside); the fault tests kill a worker mid-run,
or the scheduler (on a cluster of their own), and check the results and the resume.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from distributed import Client

from sim.cli.options import error_text
from sim.run.settings import RunControl
from tests.helpers import ROOT
from tests.helpers.cli import run_main

START_TIMEOUT = 60  # seconds for the scheduler and workers to come up
# what differs between two runs of the same command: when, how long, where, by whom
VOLATILE = {"started_at", "finished_at", "created_at", "written_at", "session_started_at",
            "seconds", "games_per_second", "sessions", "command", "sha256", "bytes",
            "timing", "folder", "workers", "cluster", "elapsed", "tell_seconds"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def child_env() -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", SNIFF_PRECOMPILE="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


class TcpCluster:
    """A scheduler and ``workers`` worker processes of one thread, on 127.0.0.1."""

    def __init__(self, workers: int = 2) -> None:
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.processes: list[subprocess.Popen] = []
        self.scheduler = self._start("dask_scheduler", "--host", "127.0.0.1", "--port",
                                     self.address.rsplit(":", 1)[1], "--dashboard-address",
                                     ":0", "--no-show")
        for _ in range(workers):
            self._start("dask_worker", self.address, "--nthreads", "1", "--no-dashboard",
                        "--host", "127.0.0.1")
        self.client = Client(self.address, timeout=START_TIMEOUT, set_as_default=False)
        self.client.wait_for_workers(workers, timeout=START_TIMEOUT)

    def _start(self, module: str, *args: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-m", f"distributed.cli.{module}", *args], env=child_env(),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.processes.append(process)
        return process

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)

    def kill_a_worker(self) -> str:
        """SIGKILL one worker process (its nanny starts a new one); its address."""
        address, pid = sorted(self.worker_pids().items())[0]
        os.kill(pid, signal.SIGKILL)
        return address

    def kill_when_busy(self, prefix: str) -> KillWhenBusy:
        return KillWhenBusy(self, prefix)

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


class KillWhenBusy(threading.Thread):
    """Beside a command: SIGKILL the first worker seen holding a task named ``prefix...``
    (``sniff-chunk-``, ``sniff-part-``, ...); ``killed`` then holds its address and keys."""

    def __init__(self, cluster: TcpCluster, prefix: str) -> None:
        super().__init__(daemon=True)
        self.cluster, self.prefix, self.killed = cluster, prefix, {}
        self.pids = cluster.worker_pids()
        self.start()

    def run(self) -> None:
        with Client(self.cluster.address, set_as_default=False) as client:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                for address, keys in client.processing().items():
                    mine = [k for k in keys if str(k).startswith(self.prefix)]
                    if mine and address in self.pids:
                        os.kill(self.pids[address], signal.SIGKILL)
                        self.killed.update(address=address, keys=mine)
                        return
                time.sleep(0.005)

    def check(self) -> None:
        """The worker was killed holding tasks, and the cluster is whole again."""
        self.join(timeout=5)
        assert self.killed, f"no worker was seen holding a {self.prefix} task"
        self.cluster.client.wait_for_workers(len(self.pids), timeout=START_TIMEOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while set(self.cluster.worker_pids().values()) & {self.pids[self.killed["address"]]}:
            assert time.monotonic() < deadline
            time.sleep(0.1)



@pytest.fixture(scope="module")
def tcp():
    cluster = TcpCluster()
    try:
        yield cluster
    finally:
        cluster.close()


# --- folders compared file by file


def _stable(value):
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _json_lines(path: Path) -> list:
    return [_stable(json.loads(line)) for line in path.read_text().splitlines() if line]


def files_of(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and p.name != ".lock")


def assert_same_folder(a: Path, b: Path) -> None:
    """The same files with the same content; timings, commands and hashes of parts whose
    metadata holds a timing aside (the rows are compared instead)."""
    assert files_of(a) == files_of(b)
    for name in files_of(a):
        left, right = a / name, b / name
        if name.endswith(".parquet"):
            one, two = pq.read_table(left), pq.read_table(right)
            assert one.replace_schema_metadata(None).equals(
                two.replace_schema_metadata(None)), name
            meta = [_stable(json.loads((t.schema.metadata or {}).get(b"sniff", b"{}")))
                    for t in (one, two)]
            assert meta[0] == meta[1], name
        elif name.endswith(".json"):
            assert _stable(json.loads(left.read_text())) == _stable(
                json.loads(right.read_text())), name
        elif name.endswith(".jsonl"):
            assert _json_lines(left) == _json_lines(right), name
        else:
            assert left.read_bytes() == right.read_bytes(), name


def test_tasks_come_back_in_the_order_asked_however_they_finish(tcp):
    from sim.cluster.dask import DaskCluster

    def late(index: int) -> int:  # (a local function: pickled whole, for the workers)
        import time

        time.sleep(0.02 * (5 - index % 5))  # the earlier asked, the later done
        return -index

    done = []
    with DaskCluster(tcp.address) as cluster:
        cluster.workers = [{"dask_threads": 1}]  # a window of 4: tasks wait their turn
        quick = list(cluster.ordered(range(30), abs, lambda i: (-i,), lambda: None))
        late = list(cluster.ordered(range(30), late, lambda i: (i,), lambda: None,
                                    done.append))
    assert quick == list(range(30))  # many finish at once: none is left behind
    assert late == [-i for i in range(30)] and sorted(done) == list(range(30))


# --- tournament and compare: runs of the run layer


def test_tournament_on_a_cluster_is_the_local_tournament(tmp_path, tcp, capsys):
    from sim.tournament import run_tournament

    options = {"players": 2, "strategies": "greedy,random,heavy", "games_per_pair": 600,
               "seed": 3, "chunk_size": 200}
    here = run_tournament(**options, out=tmp_path / "here")
    killer = tcp.kill_when_busy("sniff-chunk-")
    code, out, err = run_main(["tournament", "--players", "2", "--strategies",
                               "greedy,random,heavy", "--games-per-pair", "600", "--seed", "3",
                               "--chunk-size", "200", "--out", str(tmp_path / "there"), "-q",
                               "--scheduler", tcp.address], capsys)
    assert code == 0, err
    killer.check()
    assert_same_folder(tmp_path / "here", tmp_path / "there")
    assert out.strip() == str(here).replace(str(tmp_path / "here"), str(tmp_path / "there"))


def test_compare_on_a_cluster_decides_in_chunk_order(tmp_path, tcp, capsys):
    from sim.compare.play import compare

    options = {"players": 2, "seed": 4, "chunk_size": 200, "max_games": 6000}
    here = compare("greedy", "random", out=tmp_path / "here", **options)
    assert here.decision == "H1"
    assert 0 < here.games < 6000  # decided before the cap: chunks past it are never written
    killer = tcp.kill_when_busy("sniff-chunk-")
    code, out, err = run_main(["compare", "greedy", "random", "--players", "2", "--seed", "4",
                               "--chunk-size", "200", "--max-games", "6000", "-q",
                               "--out", str(tmp_path / "there"), "--scheduler", tcp.address],
                              capsys)
    assert code == 0, err
    killer.check()
    assert out.splitlines()[0] == here.decision_text().splitlines()[0]
    assert_same_folder(tmp_path / "here", tmp_path / "there")


# --- openings: parts on the cluster, and a study stopped part way


OPENINGS = {"players": 2, "strategies": "random", "deals": 40, "seed": 6}
SIZES = {"chunk_deals": 2, "part_deals": 5}  # 8 parts of 5 deals, 2 deals per kernel call


def openings_config():
    from sim.openings.play import make_config

    return make_config(*OPENINGS.values())


@pytest.fixture(scope="module")
def openings_reference(tmp_path_factory) -> Path:
    """The study played here, in one go."""
    from sim.openings.study import measure_openings

    folder = tmp_path_factory.mktemp("openings") / "here"
    measure_openings(openings_config(), folder, **SIZES)
    return folder


def test_openings_on_a_cluster_with_a_worker_killed_is_the_local_study(
        tmp_path, tcp, openings_reference):
    from sim.openings.study import measure_openings

    folder = tmp_path / "there"
    killer = tcp.kill_when_busy("sniff-part-")
    table, summary = measure_openings(openings_config(), folder, lambda deals: time.sleep(0.05),
                                      RunControl(scheduler=tcp.address), **SIZES)
    killer.check()
    assert summary["deals"] == OPENINGS["deals"]
    assert_same_folder(openings_reference, folder)


STUDY_SCRIPT = """
import sys, time
from pathlib import Path
from sim.openings.play import make_config
from sim.openings.study import measure_openings
from sim.run.chunks import StopOnInterrupt
from sim.run.settings import RunControl
config = make_config(2, "random", 40, 6)
with StopOnInterrupt(print) as stop:
    measure_openings(config, Path(sys.argv[1]), lambda deals: time.sleep(0.2),
                     RunControl(scheduler=sys.argv[2] if sys.argv[2:] else None),
                     chunk_deals=2, part_deals=5, between_chunks=stop.check)
"""


def start_study(folder: Path, *scheduler: str) -> subprocess.Popen:
    """The study in a process of its own, slowed (0.2 s a chunk, a part on Dask) to be
    stopped part way."""
    return subprocess.Popen([sys.executable, "-c", STUDY_SCRIPT, str(folder), *scheduler],
                            env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for_parts(folder: Path, process: subprocess.Popen, parts: int) -> None:
    ledger = folder / "parts.jsonl"
    deadline = time.monotonic() + 120
    while not ledger.is_file() or len(ledger.read_text().splitlines()) < parts:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)


def sniff_openings(capsys, *args: str) -> tuple[int, str, str]:
    return run_main(["openings", *args], capsys)


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM on a cluster"])
def test_an_openings_study_stopped_part_way_resumes_to_the_same_tables(
        tmp_path, tcp, openings_reference, how, capsys):
    folder = tmp_path / "stopped"
    on_cluster = how != "SIGKILL"
    process = start_study(folder, *([tcp.address] if on_cluster else []))
    wait_for_parts(folder, process, 2)
    process.send_signal(signal.SIGTERM if on_cluster else signal.SIGKILL)
    process.communicate(timeout=60)
    assert process.returncode != 0
    assert not (folder / "summary.json").exists()
    done = len((folder / "parts.jsonl").read_text().splitlines())
    assert 2 <= done < 8
    # the stopped study is not a result, and --resume completes it (with its own sizes)
    code, _, err = sniff_openings(capsys, "--out", str(folder), "--resume", "--deals", "41")
    assert code == 2 and "other deals" in err
    code, out, err = sniff_openings(capsys, "--out", str(folder), "--resume", "-q",
                                    *(["--scheduler", tcp.address] if on_cluster else []))
    assert code == 0, err
    assert "1,160 games" in out
    assert_same_folder(openings_reference, folder)
    code, again, err = sniff_openings(capsys, "--out", str(folder), "--resume")
    assert code == 0 and again == out.split("\n1,160 games")[0]  # it played nothing
    assert_same_folder(openings_reference, folder)


# --- a scheduler that goes away


@pytest.mark.parametrize("command", ["simulate", "openings"])
def test_a_lost_scheduler_stops_with_one_line_and_the_folder_resumes(
        tmp_path, openings_reference, command):
    from sim.cluster.dask import ClusterLost
    from sim.openings.study import measure_openings
    from sim.run.plan import resolve_plan
    from sim.run.simulation import execute

    own = TcpCluster(workers=1)
    try:
        def lose_the_scheduler(*_) -> None:
            if own.scheduler.poll() is None:
                os.killpg(own.scheduler.pid, signal.SIGKILL)
                own.scheduler.wait(timeout=30)

        folder = tmp_path / command
        plan = resolve_plan({"players": 4, "strategies": "greedy,random", "games": 3000,
                             "seed": 11, "chunk_size": 250})
        with pytest.raises(ClusterLost) as lost:
            if command == "simulate":
                execute(plan, folder, RunControl(scheduler=own.address,
                                               on_chunk=lose_the_scheduler))
            else:
                measure_openings(openings_config(), folder, lose_the_scheduler,
                                 RunControl(scheduler=own.address), **SIZES)
        message = str(lost.value)
        assert "\n" not in message and f"lost the Dask scheduler at {own.address}" in message
        assert message.endswith("what was finished is kept: run it again with resume")
        assert error_text(lost.value).endswith("run it again with --resume")
    finally:
        own.close()
    if command == "simulate":
        execute(plan, folder, RunControl(mode="resume"))
        reference = tmp_path / "reference"
        execute(plan, reference)
        assert_same_folder(reference, folder)
    else:
        measure_openings(openings_config(), folder, control=RunControl(mode="resume"),
                         **SIZES)
        assert_same_folder(openings_reference, folder)


# --- tune and learn: the same candidates and the same networks


def test_tune_on_a_cluster_with_a_worker_killed_gives_the_same_trials_and_result(
        tmp_path, tcp, capsys):
    from sim.tune.study import tune

    options = {"strategy": "blocker", "against": "greedy,random", "players": 2,
               "games": 1_600, "seed": 5, "games_per_trial": 200, "popsize": 4,
               "validate_games": 400, "accept": "sprt"}
    here = tune(out=tmp_path / "here", **options)
    killer = tcp.kill_when_busy("sniff-match-")
    code, out, err = run_main(["tune", "blocker", "--against", "greedy,random", "--players",
                               "2", "--games", "1600", "--seed", "5", "--games-per-trial",
                               "200", "--popsize", "4", "--validate-games", "400", "--accept",
                               "sprt", "-q", "--out", str(tmp_path / "there"), "--scheduler",
                               tcp.address], capsys)
    assert code == 0, err
    killer.check()
    assert len(here.trials) == 8 and here.spec in out
    assert_same_folder(tmp_path / "here", tmp_path / "there")


def test_learn_on_a_cluster_trains_the_same_network_bit_for_bit(tmp_path, tcp):
    from sim.learn.config import LearnConfig
    from sim.learn.training import learn

    config = LearnConfig(players=2, seed=7, iterations=2, games=1000, eval_games=12,
                         epochs=1, hidden="8", window=2, batch=64)
    learn(config, tmp_path / "here")
    killer = tcp.kill_when_busy("sniff-games-")
    learn(config, tmp_path / "there", scheduler=tcp.address)
    killer.check()
    for name in ("model.npz", "state.npz", "snapshots/iter-001.npz", "snapshots/iter-002.npz"):
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes()
    assert_same_folder(tmp_path / "here", tmp_path / "there")


# --- every command: the same option, the same one-line refusals


COMMANDS = {
    "tournament": ["tournament", "--strategies", "greedy,random"],
    "compare": ["compare", "greedy", "random"],
    "openings": ["openings", "--deals", "10"],
    "tune": ["tune", "blocker", "--against", "greedy"],
    "learn": ["learn"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("scheduler, message", [
    ("somewhere", "give a Dask scheduler address"),
    ("local:0", "local:N needs a number of workers N >= 1"),
    ("local:2", "Dask, which is not installed"),
    ("tcp://[::1", "is not a Dask scheduler address (invalid address"),  # K273a
    ("file:///etc/passwd", "unknown address scheme 'file'"),  # K273b
    ("tcp://127.0.0.1", "missing port number"),  # phase 2, P237
])
def test_a_bad_scheduler_or_no_dask_is_one_line_and_nothing_written(
        tmp_path, monkeypatch, capsys, command, scheduler, message):
    if scheduler == "local:2":
        monkeypatch.setitem(sys.modules, "distributed", None)  # what a missing package does
    folder = tmp_path / "out"
    code, out, err = run_main([*COMMANDS[command], "--out", str(folder), "--scheduler",
                               scheduler], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("sniff: error: ") and message in err
    assert not folder.exists()


def test_a_resume_sets_aside_a_changed_part_and_plays_it_again(tmp_path, openings_reference):
    from sim.errors import Stopped
    from sim.openings.study import measure_openings, resume_config

    folder = tmp_path / "changed"
    chunks = []

    def stop_in_part_four() -> None:  # 3 chunks a part (2, 2, 1 deals): 3 parts finished
        chunks.append(1)
        if len(chunks) == 10:
            raise Stopped(signal.SIGINT)

    with pytest.raises(Stopped):
        measure_openings(openings_config(), folder, between_chunks=stop_in_part_four, **SIZES)
    assert len((folder / "parts.jsonl").read_text().splitlines()) == 3
    part = folder / "games" / "part-000001.parquet"
    part.write_bytes(part.read_bytes() + b"x")  # changed after it was recorded
    said = []
    measure_openings(resume_config(folder), folder,
                     control=RunControl(mode="resume", alert=said.append), **SIZES)
    assert len(said) == 1 and said[0].startswith("part 1: ") and "set aside" in said[0]
    assert (folder / "set-aside" / "games-part-000001.parquet").is_file()
    (folder / "set-aside" / "games-part-000001.parquet").unlink()
    (folder / "set-aside").rmdir()
    assert_same_folder(openings_reference, folder)

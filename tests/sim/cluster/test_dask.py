"""``sniff simulate --scheduler``: chunks as Dask tasks give the tables of a local run.

One 2-worker ``LocalCluster`` (worker processes, as on a real cluster) serves most tests;
``--scheduler local:2`` starts its own. The reference run in this process compiles (or
loads) the kernel first, so the workers load it from the cache instead of compiling.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

import sim
from sim.checks.footers import read_footer
from sim.cluster import dask as dask_cluster
from sim.errors import SniffError
from sim.files import TEMP_SUFFIX
from sim.kernels.runner import lineup_code
from sim.run import cluster_chunks
from sim.run.chunks import RunInterrupted
from sim.run.plan import Plan, resolve_plan
from sim.run.settings import RunControl
from sim.run.simulation import execute
from sim.store import io as run_io
from tests.helpers.cli import default_sigint, imported_from, run_main, shadow_modules
from tests.helpers.frames import assert_frame_equal

GAMES = 3000
CHUNK = 250
SEED = 11


def plan_of(**options):
    base = {"players": 4, "strategies": "greedy,random", "games": GAMES, "seed": SEED,
            "chunk_size": CHUNK}
    return resolve_plan({**base, **options})


def assert_same_tables(a: Path, b: Path) -> None:
    left, right = sim.load(a), sim.load(b)
    assert_frame_equal(left.games, right.games)
    assert_frame_equal(left.rounds, right.rounds)


def assert_whole_dataset(folder: Path, chunks: int) -> None:
    """Every chunk once, no duplicate game, no temporary file left."""
    games = sim.load(folder).games
    assert len(run_io.part_files(folder, "games")) == chunks
    assert len(run_io.part_files(folder, "rounds")) == chunks
    assert games["game_id"].is_unique and games["game_id"].tolist() == list(range(len(games)))
    assert not [p for p in folder.rglob("*") if p.name.endswith(TEMP_SUFFIX)]
    assert not (folder / run_io.PARTIAL_DIR).exists()


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())




@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The local run (it also compiles the kernel before any worker needs it)."""
    folder = tmp_path_factory.mktemp("dask") / "local"
    execute(plan_of(), folder)
    return folder


@pytest.fixture(scope="module")
def cluster(reference):
    """Two worker processes of one thread; their numba pools are left at all cores."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as local:
        with Client(local, set_as_default=False) as client:
            yield local, client


def test_local_scheduler_gives_the_local_tables_and_summary(tmp_path, reference, capsys):
    folder = tmp_path / "dask"
    code, out, err = run_main(["simulate", "--games", str(GAMES), "--seed", str(SEED),
                               "--chunk-size", str(CHUNK), "--out", str(folder), "-q",
                               "--scheduler", "local:2"], capsys)
    assert code == 0, err
    assert_same_tables(reference, folder)
    assert_whole_dataset(folder, GAMES // CHUNK)
    ran = manifest(folder)
    assert ran["status"] == "complete"
    assert ran["summary"] == manifest(reference)["summary"]
    assert ran["run_id"] == manifest(reference)["run_id"]
    assert out.splitlines()[:3] == str(sim.load(reference).summary).splitlines()[:3]
    assert "of 2 Dask worker(s)" in out
    # NUMBA_NUM_THREADS reached the worker processes before numba's import: measured inside
    # a task on each worker, numba threads x Dask threads stay within the cores.
    cores = dask_cluster.machine_cores()
    workers = ran["sessions"][-1]["cluster"]["workers"]
    assert len(workers) == 2
    for worker in workers:
        assert worker["numba_pool"] == worker["numba_threads"] == max(1, cores // 2)
        assert worker["dask_threads"] == 1
        assert worker["kernel"] == lineup_code(Plan.from_config(ran["config"]).lineup)


def test_scheduler_address_gives_the_local_tables(tmp_path, reference, cluster):
    local, _ = cluster
    folder = tmp_path / "tcp"
    run = execute(plan_of(), folder, RunControl(scheduler=local.scheduler_address))
    assert_same_tables(reference, folder)
    assert_whole_dataset(folder, GAMES // CHUNK)
    assert run.summary.to_dict() == sim.load(reference).summary.to_dict()
    # The workers' numba pools have every core; each task lowers its own threads so that
    # numba threads x Dask threads on this machine stay within the cores.
    cores = dask_cluster.machine_cores()
    for worker in manifest(folder)["sessions"][-1]["cluster"]["workers"]:
        assert worker["numba_threads"] == max(1, cores // 2)
        assert worker["numba_threads"] * 2 <= max(cores, 2)
    metadata = read_footer(folder / "games" / run_io.part_name(3))[1]
    assert metadata["chunk"]["first_game"] == 3 * CHUNK and metadata["run_id"] == run.manifest[
        "run_id"]


def test_in_memory_duplicate_and_precision_runs_match_local(cluster):
    local, _ = cluster
    address = local.scheduler_address
    options = {"games": 1200, "seed": 5, "chunk_size": 200, "duplicate": True}
    here = sim.simulate(**options)
    there = sim.simulate(**options, scheduler=address)
    assert_frame_equal(here.games, there.games)
    assert_frame_equal(here.rounds, there.rounds)
    assert str(here.summary).splitlines()[:-1] == str(there.summary).splitlines()[:-1]
    # --precision stops at the same game (chunks played past the stop are dropped).
    options = {"precision": 0.012, "max_games": GAMES, "seed": SEED, "chunk_size": 250}
    here = sim.simulate(**options)
    there = sim.simulate(**options, scheduler=address)
    assert 0 < len(here.games) < GAMES
    assert_frame_equal(here.games, there.games)
    assert here.summary.stopped == there.summary.stopped
    # --no-rounds: the workers send back the games' point sums the summary reads.
    options = {"games": 1200, "seed": 5, "chunk_size": 200, "rounds": False}
    here = sim.simulate(**options)
    there = sim.simulate(**options, scheduler=address)
    assert_frame_equal(here.games, there.games)
    assert here.summary.to_dict() == there.summary.to_dict()


def test_interrupted_dask_run_resumes_to_the_same_tables(tmp_path, reference, cluster):
    local, _ = cluster
    folder = tmp_path / "stopped"

    def stop_after_third(chunk):
        if chunk == 2:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        execute(plan_of(), folder, RunControl(scheduler=local.scheduler_address,
                                              on_chunk=stop_after_third))
    assert manifest(folder)["status"] == "interrupted"
    assert len(run_io.part_files(folder, "games")) >= 3
    execute(plan_of(), folder, RunControl(mode="resume", scheduler=local.scheduler_address))
    assert_same_tables(reference, folder)
    assert_whole_dataset(folder, GAMES // CHUNK)
    assert [s["status"] for s in manifest(folder)["sessions"]] == ["interrupted", "complete"]


def test_a_worker_killed_mid_run_has_its_chunks_played_again(tmp_path, reference, cluster):
    local, client = cluster
    folder = tmp_path / "killed"
    chunk_size = 300  # 10 chunks of some 50 ms or more: the killed worker holds some
    killed: dict = {}

    def kill_a_busy_worker(chunk):
        if chunk != 1 or killed:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            busy = {address: keys for address, keys in client.processing().items()
                    if any(str(key).startswith("sniff-chunk-") for key in keys)}
            if busy:
                break
            time.sleep(0.01)
        assert busy, "no worker held a chunk task"
        address, keys = next(iter(busy.items()))
        nanny = next(n for n in local.workers.values() if n.worker_address == address)
        os.kill(nanny.pid, signal.SIGKILL)
        killed.update(address=address, keys=keys)

    execute(plan_of(chunk_size=chunk_size), folder,
            RunControl(scheduler=local.scheduler_address, on_chunk=kill_a_busy_worker))
    assert killed["address"] not in client.scheduler_info(n_workers=-1)["workers"]
    # The chunks the killed worker held were scheduled again (and played elsewhere).
    for key in killed["keys"]:
        scheduler = [entry for entry in client.story(key) if entry[0] == "scheduler"]
        assert sum(entry[3] == "processing" for entry in scheduler) >= 2, key
        assert any(str(entry[5]).startswith("handle-worker-cleanup") for entry in scheduler)
    assert_same_tables(reference, folder)
    assert_whole_dataset(folder, GAMES // chunk_size)
    assert manifest(folder)["status"] == "complete"
    client.wait_for_workers(2, timeout=30)  # the nanny restarted it


# --- without Dask, and bad addresses


def test_without_dask_scheduler_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # what a missing package does
    folder = tmp_path / "none"
    code, out, err = run_main(["simulate", "--games", "100", "--out", str(folder),
                               "--scheduler", "local:2"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("sniff: error: ")
    assert "Dask, which is not installed" in err and "pip install 'sniff[dask]'" in err
    assert not folder.exists()


def test_sim_imports_dask_only_for_a_scheduler():
    code = ("import sys, sim.cli.main, sim.run.simulation, sim.cluster.dask; "
            "assert 'distributed' not in sys.modules and 'dask' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("scheduler, message", [
    ("somewhere", "give a Dask scheduler address"),
    ("local:0", "local:N needs a number of workers N >= 1"),
    ("local:two", "local:N needs a number of workers N >= 1"),
    ("local:99999", "local:N starts N worker processes on this machine, at most"),  # S28
    ("tcp://127.0.0.1:9", "cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
])
def test_bad_scheduler_gives_one_line_and_no_run(tmp_path, monkeypatch, capsys, scheduler,
                                                 message):
    monkeypatch.setattr(dask_cluster, "CONNECT_TIMEOUT", 1.0)
    folder = tmp_path / "bad"
    code, out, err = run_main(["simulate", "--games", "100", "--out", str(folder),
                               "--scheduler", scheduler], capsys)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not folder.exists()


def test_worker_with_other_code_is_refused(cluster, monkeypatch):
    local, _ = cluster
    plan = plan_of(games=100)
    executor = cluster_chunks.DaskChunks(local.scheduler_address, plan, "sniff_kernel_other")
    try:
        with pytest.raises(SniffError, match="runs other sniff code than this machine"):
            executor.warm_up()
    finally:
        executor.close()


def test_ctrl_c_stops_a_local_cluster_run_cleanly_and_resume_completes(tmp_path, reference):
    # (reference: the kernel is compiled before the workers start)
    """A terminal's Ctrl-C (SIGINT to the whole process group, workers included)."""
    folder = tmp_path / "sigint"
    games, chunk = 200_000, 2_000  # seconds of play left after two parts: time to stop it
    command = [sys.executable, "-c", "from sim.cli.main import main; main()", "simulate",
               "--games", str(games), "--chunk-size", str(chunk), "--seed", str(SEED),
               "--out", str(folder), "--scheduler", "local:2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path, start_new_session=True,
                               preexec_fn=default_sigint)
    deadline = time.monotonic() + 180
    while len(run_io.part_files(folder, "games")) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "--resume" in err
    # only sniff's own lines: no worker traceback, no Dask warning (e.g. a port in use)
    assert all(line.startswith("sniff: ") for line in err.splitlines() if line), err
    assert manifest(folder)["status"] == "interrupted"
    resumed = subprocess.run(command[:-2] + ["--resume", "-q"], capture_output=True, text=True,
                             cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert_whole_dataset(folder, games // chunk)
    local = tmp_path / "local"
    execute(plan_of(games=games, chunk_size=10_000), local)
    assert_same_tables(local, folder)


@pytest.mark.parametrize("whole_group", [False, True], ids=["command", "process-group"])
def test_ctrl_c_while_local_workers_start_stops_them_all_in_one_line(tmp_path, reference,
                                                                     whole_group):
    """S28b: a Ctrl-C while ``local:N`` starts its workers is held until the cluster stands,
    then stops it whole: "sniff: interrupted", exit 130, no atexit traceback, no process
    left behind. N17: a terminal's Ctrl-C (the whole process group) reaches the workers
    too while they still import Dask; they start with it blocked, so none prints a
    traceback."""
    import psutil

    command = [sys.executable, "-c", "from sim.cli.main import main; main()", "simulate",
               "--games", "100", "--out", str(tmp_path / "s28b"), "--scheduler", "local:2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path, preexec_fn=default_sigint,
                               start_new_session=whole_group)
    parent, deadline = psutil.Process(process.pid), time.monotonic() + 120
    while not any("spawn_main" in " ".join(child.cmdline())
                  for child in parent.children(recursive=True)):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.01)
    children = parent.children(recursive=True)
    if whole_group:  # as a terminal's Ctrl-C: the workers, importing Dask, get it too
        time.sleep(0.3)  # past Python's start in the workers (where SIGINT kills silently)
        os.killpg(process.pid, signal.SIGINT)
    else:  # the command alone: its workers are its own to stop
        process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert [line for line in err.splitlines() if line] == ["sniff: interrupted"], err
    psutil.wait_procs(children, timeout=30)
    assert not [child for child in children if child.is_running()
                and child.status() != psutil.STATUS_ZOMBIE]


def test_ctrl_c_during_the_warm_up_leaves_no_stray_traceback(tmp_path, capfd, caplog):
    """N17: a Ctrl-C while the workers of ``local:N`` warm up (load the kernel) stops
    there, and stopping the cluster then leaves no "Task exception was never retrieved"
    traceback behind (as Dask's ``client.gather`` of the second wave did, interrupted)."""
    import gc
    import threading

    marker = tmp_path / "first-wave-done"

    def load(path: str) -> dict:  # (a local function: pickled whole, for the workers)
        import os
        import time

        if not os.path.exists(path):  # the first wave (one worker per machine): quick
            open(path, "w").close()
            return {"kernel": "any"}
        time.sleep(10)  # the second wave: interrupted
        return {"kernel": "any"}

    def interrupt_in_the_second_wave() -> None:
        while not marker.exists():
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    with dask_cluster.DaskCluster("local:4") as open_cluster:
        timer = threading.Thread(target=interrupt_in_the_second_wave, daemon=True)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            open_cluster.warm_up(load, lambda: str(marker), "any")
    timer.join()
    gc.collect()  # where asyncio logs a task's exception that nobody retrieved
    err = capfd.readouterr().err
    logged = [record.getMessage() for record in caplog.records]  # (stderr, outside pytest)
    assert "Traceback" not in err and "never retrieved" not in err, err
    assert not [line for line in logged if "never retrieved" in line], logged


def test_a_worker_that_cannot_see_the_run_folder_says_so(tmp_path, cluster):
    local, client = cluster
    plan = plan_of(games=100)
    job = cluster_chunks.ChunkJob(
        config=plan.config(), kernel="any", run_id=plan.run_id,
        folder=str(tmp_path / "not-on-this-machine"), metadata={}, write=True,
        threads_by_host={}, threads=None)
    future = client.submit(cluster_chunks.play_chunk_task, job, 0, 0, 100, pure=False)
    with pytest.raises(SniffError, match="cannot see the run folder .* same path"):
        future.result()


def test_no_worker_imports_code_from_the_working_folder(tmp_path, reference):
    """#63: ``sniff simulate --scheduler local:2`` from a folder holding a
    ``multiprocessing.py`` ran it three times (the resource tracker and each worker start
    with ``python -c``, which puts the current folder first on ``sys.path``)."""
    folder, launcher = tmp_path / "hostile", tmp_path / "bin"
    folder.mkdir()
    launcher.mkdir()
    shadow_modules(folder, "multiprocessing", "dask", "distributed", "numba")
    # as the installed ``sniff`` script starts: its own folder, not the working one, on
    # sys.path
    (launcher / "sniff.py").write_text(
        "from sim.cli.main import main\nif __name__ == '__main__':\n    main()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(sim.__file__).parents[1]),
                                                      env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(launcher / "sniff.py"), "simulate", "--players", "2", "--games",
         "400", "--scheduler", "local:2", "-o", "run", "-q"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert imported_from(folder) == []
    assert done.returncode == 0, done.stderr
    assert len(sim.load(folder / "run").games) == 400

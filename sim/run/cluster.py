"""``sniff simulate --scheduler``: a run's chunks as tasks on a Dask cluster.

A task is (the run's plan, one chunk): the worker plays the chunk's games in its own
compiled kernel and writes the chunk's two parts into the run folder itself, through the
same atomic write as a local run (a uniquely named temporary file in ``NAME/.partial/``,
renamed to the fixed part name). A game depends only on (seed, game id), so a part's
content does not depend on which worker played it, how often, or in which order: a task
that Dask runs again after its worker was lost rewrites the same part with the same rows
(only the timing in its metadata differs), and the dataset never holds a chunk twice.
The task hands back only the columns the summary needs; ``sim.run.simulation.execute`` takes
the chunks in chunk order from ``DaskChunks.play`` (as from the local executor) for the
progress bar, the summary and the manifest, so they are the same as a local run's.

A ``--precision`` run decides where to stop in game order, after the chunks before, so
there the workers hand the played tables back and ``execute`` writes them, as locally:
chunks played past the stop are dropped, never written.

Threads: a worker process sets its numba threads per task so that numba threads x Dask
threads on a machine stay within its cores (``local:N`` also sizes each worker's numba
pool to that with ``NUMBA_NUM_THREADS``). Kernels: a worker loads the generated kernel
module by path from ``SNIFF_CACHE_DIR`` exactly as a local run does (``sim.kernels.generate``);
one worker per machine warms it up (compiles it if that machine's cache lacks it) before
the others load it.

Dask is optional (``pip install 'sniff[dask]'``): it is imported here only, and only when
``--scheduler`` is given.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.errors import SniffError

CONNECT_TIMEOUT = 15.0  # seconds to reach a scheduler
WORKER_TIMEOUT = 60.0  # seconds to wait for a first worker to join it
POLL_SECONDS = 0.2  # wait at most this long for results before looking at Ctrl-C again
INSTALL_HINT = ("pip install 'sniff[dask]' (from a clone of sniff: pip install -e '.[dask]'; "
                "or pip install 'dask[distributed]')")
LOCAL = re.compile(r"local:(\d+)")


def import_distributed():
    """``dask.distributed``, or a one-line error that says how to install it."""
    try:
        import distributed
    except ImportError:
        raise SniffError(f"--scheduler runs the chunks on Dask, which is not installed: "
                         f"{INSTALL_HINT}") from None
    return distributed


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``("local", N)`` for ``local:N``, ``("address", text)`` for a scheduler address."""
    if not isinstance(text, str) or not text.strip():
        raise SniffError("--scheduler needs tcp://HOST:PORT or local:N")
    text = text.strip()
    if text.startswith("local:"):
        match = LOCAL.fullmatch(text)
        if not match or int(match.group(1)) < 1:
            raise SniffError(f"--scheduler {text}: local:N needs a number of workers N >= 1, "
                             "e.g. local:4")
        return "local", int(match.group(1))
    if re.fullmatch(r"[a-z]+://\S+", text):
        return "address", text
    raise SniffError(f"--scheduler {text}: give a Dask scheduler address (tcp://HOST:PORT, "
                     "as `dask scheduler` prints it) or local:N (N local worker processes)")


def check_scheduler(text: str) -> None:
    """Refuse a malformed ``--scheduler``, or one given without Dask installed."""
    parse_scheduler(text)
    import_distributed()


def dask_setup(worker) -> None:
    """Preload of the ``local:N`` workers: Ctrl-C is for the run's process, not for them.

    A terminal's Ctrl-C reaches every process of the foreground group; the run stops its
    workers itself (``DaskChunks.close``), so they ignore it instead of dying with tracebacks.
    They also keep their logs to themselves: when the run stops its scheduler first, a
    worker's next heartbeat fails and Dask logs that as an error with a traceback on the
    user's terminal. A chunk's own error reaches the run through its future.
    """
    import signal
    import threading

    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def machine_cores() -> int:
    """Cores this process may use (its CPU affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# --- on the workers


@dataclass(frozen=True)
class ChunkJob:
    """What a task needs besides its chunk: small, pickled with every task."""

    config: dict  # Plan.config(): the plan is rebuilt from it on the worker
    kernel_strategies: tuple[tuple[str, str], ...]  # (name, module) of extra kernel strategies
    kernel: str  # the kernel name the run was started with (same code everywhere)
    run_id: str
    folder: str | None  # absolute run folder; None: hand the tables back (in-memory run)
    metadata: dict | None  # the parts' run metadata (sim.run.simulation.execute)
    write: bool  # the worker writes the parts (not for --precision or in-memory runs)
    threads_by_host: dict  # host -> numba threads per task (cores / Dask threads there)
    threads: int | None  # --threads: numba threads per task, instead of the above


_plans: dict = {}  # per worker process: (plan, kernel strategies) of a job, built once


def _job_plan(job: ChunkJob):
    key = (job.run_id, job.kernel, job.kernel_strategies)
    if key not in _plans:
        from sim.run.plan import Plan, recorded_kernel_strategies

        # the job comes from the user's own client (not a folder): import its plugins
        plan = Plan.from_config(job.config, import_plugins=True)
        strategies = recorded_kernel_strategies({"kernel_strategies": [
            {"name": name, "module": module} for name, module in job.kernel_strategies]},
            import_plugins=True)
        _plans[key] = plan, strategies
    return _plans[key]


def _worker_threads(job: ChunkJob) -> tuple[int, str, int]:
    """Set this task's numba threads; return them, the worker's address, its Dask threads."""
    import numba
    from distributed import get_worker
    from distributed.comm import get_address_host

    worker = get_worker()
    host = get_address_host(worker.address)
    dask_threads = worker.state.nthreads
    wanted = (job.threads or job.threads_by_host.get(host)
              or max(1, machine_cores() // dask_threads))  # a machine that joined later
    threads = max(1, min(int(wanted), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)  # per thread: this task's kernel calls
    return threads, worker.address, dask_threads


def warm_up_task(job: ChunkJob) -> dict:
    """Load (or compile) the kernel on this worker; report what it runs with."""
    import numba

    from sim.kernels.runner import lineup_code, play_batch

    started = time.perf_counter()
    threads, address, dask_threads = _worker_threads(job)
    plan, strategies = _job_plan(job)
    kernel = lineup_code(plan.lineup, strategies)
    play_batch(plan.lineup, plan.seed, np.zeros(1, dtype=np.int64), round_cap=plan.round_cap,
               kernel_strategies=strategies)
    return {"address": address, "kernel": kernel, "numba_threads": numba.get_num_threads(),
            "numba_pool": numba.config.NUMBA_NUM_THREADS, "dask_threads": dask_threads,
            "cores": machine_cores(), "load_seconds": round(time.perf_counter() - started, 2)}


def play_chunk_task(job: ChunkJob, chunk: int, lo: int, hi: int):
    """Play games ``lo..hi-1``; write the chunk's parts (when ``job.write``); report back."""
    from sim.kernels.runner import lineup_code
    from sim.run.chunks import PlayedChunk, batch_games, play_chunk, write_parts
    from sim.store.summary import summary_columns

    started = time.perf_counter()
    threads, address, _ = _worker_threads(job)
    plan, strategies = _job_plan(job)
    if job.write and not Path(job.folder, "games").is_dir():
        raise SniffError(
            f"the Dask worker {address} cannot see the run folder {job.folder}: on a cluster "
            "of several machines, --out must be on storage that every machine mounts at the "
            "same path")
    tables = play_chunk(plan, job.run_id, lo, hi, batch_games(threads), lambda games: None,
                         strategies)
    kernel = lineup_code(plan.lineup, strategies)
    if kernel != job.kernel:  # edited while playing: write nothing, execute says so
        return PlayedChunk(chunk, {}, kernel)
    if not job.write:
        return PlayedChunk(chunk, tables, kernel)
    record = write_parts(Path(job.folder), chunk, lo, hi, time.perf_counter() - started,
                         tables, job.metadata, exclusive=True)
    columns = summary_columns(plan.players, plan.rounds)
    return PlayedChunk(chunk, {name: tables[name].select(columns[name]) for name in columns},
                       kernel, written=True, record=record)


# --- on the client


class DaskChunks:
    """The Dask executor of ``sim.run.simulation.execute`` (see ``sim.run.chunks.LocalChunks``)."""

    def __init__(self, scheduler: str, plan, kernel: str, kernel_strategies=(),
                 threads: int | None = None) -> None:
        distributed = import_distributed()
        kind, value = parse_scheduler(scheduler)
        self.scheduler = scheduler
        self.plan = plan
        self.kernel = kernel
        self.kernel_strategies = tuple((s.name, s.module) for s in kernel_strategies)
        self.threads_option = threads
        self.cluster = None
        self.client = None
        self.pending: dict = {}  # future -> chunk
        self.workers: list[dict] = []
        self.threads_by_host: dict[str, int] = {}
        try:
            if kind == "local":
                per_worker = threads or max(1, machine_cores() // value)
                self.cluster = distributed.LocalCluster(
                    n_workers=value, threads_per_worker=1, processes=True,
                    # no dashboard; its small HTTP server on a free port, not 8787 (which
                    # another cluster may hold: a warning on the user's terminal)
                    dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                    silence_logs=logging.CRITICAL, preload=[__name__],  # see dask_setup
                    # before numba's import in the worker: the size of its thread pool
                    env={"NUMBA_NUM_THREADS": str(per_worker)},
                )
                self.client = distributed.Client(self.cluster, set_as_default=False)
            else:
                try:
                    self.client = distributed.Client(value, timeout=CONNECT_TIMEOUT,
                                                     set_as_default=False)
                except (OSError, TimeoutError) as error:
                    raise SniffError(
                        f"cannot reach the Dask scheduler at {value} ({error}); start one "
                        f"with `dask scheduler` and give the address it prints") from None
                try:
                    self.client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
                except TimeoutError:
                    raise SniffError(
                        f"no Dask worker joined the scheduler at {value} within "
                        f"{WORKER_TIMEOUT:.0f} s; start workers with: dask worker {value} "
                        "--nthreads 1") from None
        except BaseException:
            self.close()
            raise

    # -- what execute asks

    @property
    def threads(self) -> int:
        """Compute threads of the whole cluster: numba threads x Dask threads, summed."""
        return sum(w["numba_threads"] * w["dask_threads"] for w in self.workers)

    def describe(self) -> dict:
        return {"scheduler": self.scheduler, "workers": self.workers}

    def _job(self, run_id: str, folder: Path | None, metadata: dict | None) -> ChunkJob:
        return ChunkJob(
            config=self.plan.config(), kernel_strategies=self.kernel_strategies,
            kernel=self.kernel, run_id=run_id,
            folder=None if folder is None else str(Path(folder).resolve()), metadata=metadata,
            write=folder is not None and self.plan.precision is None,
            threads_by_host=dict(self.threads_by_host), threads=self.threads_option,
        )

    def warm_up(self) -> None:
        """Size each machine's threads; load the kernel on every worker (one per machine
        first, so that a machine compiles it once and its other workers load the cache)."""
        from distributed.comm import get_address_host

        info = self.client.scheduler_info(n_workers=-1)["workers"]
        cores = self.client.run(machine_cores)
        by_host: dict[str, list[str]] = {}
        for address in sorted(info):
            by_host.setdefault(get_address_host(address), []).append(address)
        for host, addresses in by_host.items():
            dask_threads = sum(info[a]["nthreads"] for a in addresses)
            host_cores = max(cores.get(a, 1) for a in addresses)
            self.threads_by_host[host] = max(1, host_cores // dask_threads)
        job = self._job(self.plan.run_id, None, None)
        first = [addresses[0] for addresses in by_host.values()]
        rest = [a for addresses in by_host.values() for a in addresses[1:]]
        for wave in (first, rest):
            futures = [self.client.submit(warm_up_task, job, workers=[address], pure=False,
                                          key=f"sniff-warm-up-{uuid.uuid4().hex}")
                       for address in wave]
            try:
                self.workers += self.client.gather(futures)
            except ImportError as error:
                raise SniffError(f"a Dask worker cannot import sniff's code ({error}): install "
                                 "sniff (and any --plugin module) on every machine") from None
        for worker in self.workers:
            if worker["kernel"] != self.kernel:
                raise SniffError(
                    f"the Dask worker {worker['address']} runs other sniff code than this "
                    f"machine (kernel {worker['kernel']}, here {self.kernel}), so its games "
                    "would not match: install the same sim/ and strategies/ everywhere")

    def play(self, todo: list[int], bounds, run_id: str, folder: Path | None, metadata: dict,
             on_games, check, enough=None):
        """Yield a ``PlayedChunk`` per chunk of ``todo``, in chunk order.

        Keeps a window of tasks submitted (a few per Dask thread), reports each chunk's
        games to ``on_games`` as it completes (in any order), and calls ``check`` (Ctrl-C)
        at least every ``POLL_SECONDS`` while waiting. ``enough`` is not asked: a worker
        plays its chunk whole, and ``execute`` cuts the run at the stop.
        """
        from distributed import wait
        from distributed.scheduler import KilledWorker

        job = self._job(run_id, folder, metadata)
        token = uuid.uuid4().hex[:8]
        window = max(4, 3 * sum(w["dask_threads"] for w in self.workers))
        queue = iter(todo)
        ready: dict = {}

        def submit() -> None:
            while len(self.pending) + len(ready) < window:
                chunk = next(queue, None)
                if chunk is None:
                    return
                lo, hi = bounds(chunk)
                future = self.client.submit(play_chunk_task, job, chunk, lo, hi, pure=False,
                                            key=f"sniff-chunk-{chunk:06d}-{token}")
                self.pending[future] = chunk

        submit()
        for chunk in todo:
            while chunk not in ready:
                try:
                    with self.client.as_current():
                        finished = wait(list(self.pending), timeout=POLL_SECONDS,
                                        return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    finished = ()
                check()
                for future in finished:
                    got = self.pending.pop(future)
                    try:
                        ready[got] = future.result()
                    except KilledWorker as error:
                        raise SniffError(
                            f"chunk {got} could not be played: Dask workers died each time "
                            f"they ran it ({error}); the finished chunks are kept") from None
                    lo, hi = bounds(got)
                    on_games(hi - lo)
                submit()
            yield ready.pop(chunk)

    def close(self) -> None:
        """Cancel what is still queued and let go of the cluster (a local one stops)."""
        pending, self.pending = list(self.pending), {}
        client, self.client = self.client, None
        cluster, self.cluster = self.cluster, None
        steps = []
        if client is not None:
            steps += [lambda: client.cancel(pending, force=True) if pending else None,
                      client.close]
        if cluster is not None:
            steps.append(cluster.close)
        for step in steps:
            try:
                step()
            except Exception:  # closing must not hide the error that got us here
                pass

"""``--scheduler``: the Dask cluster every long command plays on, and its faults.

One :class:`DaskCluster` per command: a ``local:N`` cluster it starts (and stops), or a
running scheduler's address (``tcp://HOST:PORT``). It sizes each machine's threads, warms
the kernel up on every worker and plays tasks in a window, handing their results back in
the order they were asked for, whatever order they finish in, so a command's tables do not
depend on the cluster. What a task is belongs to the command: a run's chunk
(``sim.run.cluster_chunks``: ``simulate``, ``tournament``, ``compare``), an openings part
(``sim.openings.parts``), a tuning match (``sim.tune.player``), a batch of
self-play games (``sim.learn.training``).

Threads: a worker process sets its numba threads per task so that numba threads x Dask
threads on a machine stay within its cores (``local:N`` also sizes each worker's numba
pool to that with ``NUMBA_NUM_THREADS``). Kernels: a worker loads the generated kernel
module by path from ``SNIFF_CACHE_DIR`` exactly as a local run does (``sim.kernels.generate``);
one worker per machine warms it up (compiles it if that machine's cache lacks it) before
the others load it.

Faults: a worker that dies has its tasks run again elsewhere by Dask (a task's result
depends only on its arguments, so the rerun gives the same); a task that kills every
worker it runs on, and a scheduler that goes away, stop the command with one line
(:class:`ClusterLost`) and what was finished kept for ``--resume``.

Dask is optional (``pip install 'sniff[dask]'``): it is imported here only, and only when
``--scheduler`` is given.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sim.errors import SettingError, SniffError

__all__ = [
    "check_scheduler", "check_threads_option", "ClusterLost", "DaskCluster", "worker_report",
    "worker_threads",
]

CONNECT_TIMEOUT = 15.0  # seconds to reach a scheduler
WORKER_TIMEOUT = 60.0  # seconds to wait for a first worker to join it
POLL_SECONDS = 0.2  # wait at most this long for results before looking at Ctrl-C again
INSTALL_HINT = ("pip install 'sniff[dask]' (from a clone of sniff: pip install -e '.[dask]'; "
                "or pip install 'dask[distributed]')")
LOCAL = re.compile(r"local:(\d+)")
LOCAL_PER_CORE = 4  # local:N starts at most this many worker processes per core


class ClusterLost(SettingError):
    """The scheduler went away (or every worker died running one task): one line."""


def import_distributed():
    """``dask.distributed``, or a one-line error that says how to install it."""
    try:
        import distributed
    except ImportError:
        raise SettingError(f"{{scheduler}} runs the work on Dask, which is not installed: "
                           f"{INSTALL_HINT}") from None
    return distributed


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``("local", N)`` for ``local:N``, ``("address", text)`` for a scheduler address."""
    if not isinstance(text, str) or not text.strip():
        raise SettingError("{scheduler} needs tcp://HOST:PORT or local:N")
    text = text.strip()
    if text.startswith("local:"):
        match = LOCAL.fullmatch(text)
        if not match or int(match.group(1)) < 1:
            raise SettingError(f"{{scheduler}} {text}: local:N needs a number of workers N >= 1, "
                               "e.g. local:4")
        most = max_local_workers()
        if int(match.group(1)) > most:  # thousands of processes would only thrash
            raise SettingError(f"{{scheduler}} {text}: local:N starts N worker processes on "
                               f"this machine, at most {most} (its {machine_cores()} cores x "
                               f"{LOCAL_PER_CORE})")
        return "local", int(match.group(1))
    if re.fullmatch(r"[a-z]+://\S+", text):
        return "address", text
    raise SettingError(f"{{scheduler}} {text}: give a Dask scheduler address (tcp://HOST:PORT, "
                       "as `dask scheduler` prints it) or local:N (N local worker processes)")


def check_scheduler(text) -> None:
    """Refuse a malformed ``--scheduler``, or one given without Dask installed (an open
    :class:`DaskCluster` passes)."""
    if isinstance(text, DaskCluster):
        return
    _, value = parse_scheduler(text)
    import_distributed()
    if isinstance(value, str):  # an address (local:N gives its N)
        check_address(value)


def check_address(address: str) -> None:
    """A scheduler address Dask can dial (its scheme one of Dask's, a host and port that
    parse), or one line at once: Dask itself would fail after its 30-second connect timeout
    with tracebacks (``file:///x``, ``tcp://[::1``)."""
    from distributed.comm import parse_address, parse_host_port
    from distributed.comm.registry import backends

    try:
        scheme, location = parse_address(address, strict=True)
        if scheme not in backends:
            raise ValueError(f"unknown address scheme {scheme!r}, Dask's are "
                             f"{', '.join(sorted(backends))}")
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)  # a port is needed: Dask's client assumes none
    except ValueError as error:
        raise SettingError(f"{{scheduler}} {address} is not a Dask scheduler address "
                           f"({error}); give tcp://HOST:PORT as `dask scheduler` prints it, "
                           "or local:N") from None


def check_threads_option(threads) -> None:
    """``--threads`` with ``--scheduler``: numba threads per task (the workers' cores)."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise SettingError(f"{{threads}} must be a positive integer, got {threads!r}")


def dask_setup(worker) -> None:
    """Preload of the ``local:N`` workers: Ctrl-C is for the command's process, not for them.

    A terminal's Ctrl-C reaches every process of the foreground group; the command stops
    its workers itself (``DaskCluster.close``), so they ignore it instead of dying with
    tracebacks. They also keep their logs to themselves: when the command stops its
    scheduler first, a worker's next heartbeat fails and Dask logs that as an error with a
    traceback on the user's terminal. A task's own error reaches the command through its
    future.
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


def max_local_workers() -> int:
    """The most worker processes ``local:N`` starts: the cores x ``LOCAL_PER_CORE``."""
    return machine_cores() * LOCAL_PER_CORE


# --- on the workers


def worker_threads(threads_by_host: dict, threads: int | None) -> tuple[int, str, int]:
    """Set this task's numba threads; return them, the worker's address, its Dask threads.

    ``threads`` (``--threads``) wins; else the share of this machine's cores measured at
    the warm-up (``threads_by_host``); else, on a machine that joined later, its cores over
    this worker's Dask threads."""
    import numba
    from distributed import get_worker
    from distributed.comm import get_address_host

    # numba rereads its settings from the environment at every compile (a module's own
    # @njit functions, not the cached kernels) and fails if NUMBA_NUM_THREADS there is not
    # the size its pool started with, which a worker's environment need not keep
    # numba.config sets its settings when imported, out of the type checker's sight
    os.environ["NUMBA_NUM_THREADS"] = str(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
    worker = get_worker()
    host = get_address_host(worker.address)
    dask_threads = worker.state.nthreads
    wanted = (threads or threads_by_host.get(host)
              or max(1, machine_cores() // dask_threads))
    # numba.config sets its settings when imported, out of the type checker's sight
    threads = max(1, min(int(wanted), numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    numba.set_num_threads(threads)  # per thread: this task's kernel calls
    return threads, worker.address, dask_threads


def worker_report(kernel: str, threads_by_host: dict, threads: int | None,
                  load: Callable[[], object]) -> dict:
    """What a warm-up task reports: ``load()`` (the kernel, loaded or compiled; what it
    returns is not used), timed."""
    import numba

    started = time.perf_counter()
    _, address, dask_threads = worker_threads(threads_by_host, threads)
    load()
    # numba.config sets its settings when imported, out of the type checker's sight
    pool = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    return {"address": address, "kernel": kernel, "numba_threads": numba.get_num_threads(),
            "numba_pool": pool, "dask_threads": dask_threads,
            "cores": machine_cores(), "load_seconds": round(time.perf_counter() - started, 2)}


# --- on the client


class DaskCluster:
    """A command's connection to a Dask cluster; see the module doc.

    ``DaskCluster("local:2")`` starts two single-threaded worker processes here and stops
    them on ``close``; ``DaskCluster("tcp://HEAD:8786")`` uses a running scheduler. A
    command of many runs (a tournament's pairings, a tuning's matches) opens one and hands
    it to each (``execute(scheduler=cluster)``), which then leaves it open.
    """

    def __init__(self, scheduler: str, threads: int | None = None) -> None:
        distributed = import_distributed()
        _, value = parse_scheduler(scheduler)
        check_threads_option(threads)
        self.scheduler = scheduler
        self.threads_option = threads
        # distributed's LocalCluster (local:N) and Client once started: Dask has no type hints
        self.cluster: Any = None
        self.client: Any = None
        self.pending: dict = {}  # future -> its place in the current ``ordered`` call
        self.workers: list[dict] = []  # the last warm-up's worker reports
        self.threads_by_host: dict[str, int] = {}
        self._log_level = None
        try:
            if isinstance(value, int):  # local:N
                self._start_local(distributed, value, threads)
            else:  # a scheduler's address
                self._connect(distributed, value)
            # A lost scheduler is said in one line (ClusterLost), not in the client's
            # reconnection tracebacks.
            logger = logging.getLogger("distributed")
            self._log_level = logger.level
            logger.setLevel(logging.CRITICAL)
        except BaseException:
            self.close()
            raise

    def _start_local(self, distributed, workers: int, threads: int | None) -> None:
        """Start ``local:N``'s cluster with Ctrl-C held back until it stands: the worker
        processes start with it blocked (their ``dask_setup`` then ignores it), so none
        dies in a traceback half-started (still importing Dask), and the command, stopped
        only once it can stop the whole cluster, leaves no process behind (nor an atexit
        traceback)."""
        import signal
        import threading

        from sim.children import protect_children

        # the workers and the resource tracker start with ``python -c``: not from the
        # working folder's modules (a multiprocessing.py there), then or at a restart
        protect_children()
        hold = threading.current_thread() is threading.main_thread() and hasattr(
            signal, "pthread_sigmask")
        if hold:
            # multiprocessing starts its resource tracker with the first worker, and
            # unblocks Ctrl-C in the starting thread afterwards (bpo-33613): the worker
            # processes, started from threads of that thread, would not inherit the block.
            # Started here first, it leaves the block alone.
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            per_worker = threads or max(1, machine_cores() // workers)
            self.cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                # no dashboard; its small HTTP server on a free port, not 8787 (which
                # another cluster may hold: a warning on the user's terminal)
                dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                silence_logs=logging.CRITICAL, preload=[__name__],  # see dask_setup
                # before numba's import in the worker: the size of its thread pool
                env={"NUMBA_NUM_THREADS": str(per_worker)},
            )
            self.client = distributed.Client(self.cluster, set_as_default=False)
        finally:
            if hold:  # a Ctrl-C held back is raised here, and __init__ closes the cluster
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def _connect(self, distributed, address: str) -> None:
        check_address(address)
        try:
            self.client = distributed.Client(address, timeout=CONNECT_TIMEOUT,
                                             set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise SniffError(
                f"cannot reach the Dask scheduler at {address} ({error}); start one "
                f"with `dask scheduler` and give the address it prints") from None
        try:
            self.client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
        except TimeoutError:
            raise SniffError(
                f"no Dask worker joined the scheduler at {address} within "
                f"{WORKER_TIMEOUT:.0f} s; start workers with: dask worker {address} "
                "--nthreads 1") from None

    def __enter__(self) -> DaskCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def threads(self) -> int:
        """Compute threads of the whole cluster: numba threads x Dask threads, summed."""
        return sum(w["numba_threads"] * w["dask_threads"] for w in self.workers)

    @property
    def dask_threads(self) -> int:
        return sum(w["dask_threads"] for w in self.workers) or 1

    def describe(self) -> dict:
        return {"scheduler": self.scheduler, "workers": self.workers}

    def lost(self, error: BaseException | None = None) -> ClusterLost:
        """The one-line error of a scheduler that went away."""
        why = f" ({str(error).splitlines()[0]})" if error is not None and str(error) else ""
        return ClusterLost(f"lost the Dask scheduler at {self.scheduler}{why}; what was "
                           "finished is kept: run it again with {resume}")

    def _size_threads(self) -> dict:
        """Each machine's numba threads per task: its cores over its workers' Dask threads."""
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
        return by_host

    def warm_up(self, task: Callable, make_job: Callable, kernel: str) -> list[dict]:
        """Size each machine's threads; run ``task(make_job())`` (the job made once the
        threads are sized; the task loads the kernel and returns ``worker_report``) on every
        worker, one per machine first, so that a machine
        compiles a kernel once and its other workers load the cache; refuse a worker that
        runs other code (``kernel``). Returns the reports (also ``self.workers``)."""
        from distributed import wait

        try:
            by_host = self._size_threads()
        except (OSError, TimeoutError) as error:
            raise self.lost(error) from None
        job = make_job()
        first = [addresses[0] for addresses in by_host.values()]
        rest = [a for addresses in by_host.values() for a in addresses[1:]]
        reports: list[dict] = []
        for wave in (first, rest):
            futures = [self.client.submit(task, job, workers=[address], pure=False,
                                          key=f"sniff-warm-up-{uuid.uuid4().hex}")
                       for address in wave]
            try:
                # wait, then each result: a Ctrl-C in ``client.gather`` leaves its waiting
                # tasks to log "Task exception was never retrieved" tracebacks (N17)
                with self.client.as_current():
                    wait(futures)
                reports += [future.result() for future in futures]
            except ImportError as error:
                raise SniffError(f"a Dask worker cannot import sniff's code ({error}): install "
                                 "sniff (and any --plugin module) on every machine") from None
            except _connection_errors() as error:
                if self._connected():
                    raise
                raise self.lost(error) from None
        for worker in reports:
            if worker["kernel"] != kernel:
                raise SniffError(
                    f"the Dask worker {worker['address']} runs other sniff code than this "
                    f"machine (kernel {worker['kernel']}, here {kernel}), so its games "
                    "would not match: install the same sim/ and strategies/ everywhere")
        self.workers = reports
        return reports

    def ordered(self, todo: Iterable, task: Callable, arguments: Callable, check: Callable,
                on_done: Callable | None = None, name: str = "task") -> Iterator:
        """Yield ``task(*arguments(item))`` for each item of ``todo``, in ``todo``'s order.

        Keeps a window of tasks submitted (a few per Dask thread), calls ``on_done(item)``
        as each completes (in any order) and ``check()`` (Ctrl-C) at least every
        ``POLL_SECONDS`` while waiting. A task's own error is raised as it is.
        """
        from distributed import wait
        from distributed.scheduler import KilledWorker

        token = uuid.uuid4().hex[:8]
        window = max(4, 3 * self.dask_threads)
        queue = iter(enumerate(todo))
        ready: dict = {}
        items: dict = {}

        def submit() -> None:
            while len(self.pending) + len(ready) < window:
                index, item = next(queue, (None, None))
                if index is None:
                    return
                items[index] = item
                future = self.client.submit(task, *arguments(item), pure=False,
                                            key=f"sniff-{name}-{index:06d}-{token}")
                self.pending[future] = index

        try:
            index = 0
            while True:
                submit()  # tasks are submitted in order: a task not submitted now is none
                if index not in items:
                    return
                while index not in ready:
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
                            raise ClusterLost(
                                f"{name} {items[got]} could not be played: Dask workers died "
                                f"each time they ran it ({error}); what was finished is "
                                "kept") from None
                        if on_done is not None:
                            on_done(items[got])
                    submit()
                result = ready.pop(index)
                del items[index]
                index += 1
                yield result
        except _connection_errors() as error:
            if self._connected():
                raise
            raise self.lost(error) from None

    def _connected(self) -> bool:
        return self.client is not None and self.client.status == "running"

    def cancel(self) -> None:
        """Cancel the tasks still queued (a stop, an error): they write nothing more."""
        pending, self.pending = list(self.pending), {}
        if pending and self.client is not None:
            try:
                self.client.cancel(pending, force=True)
            except Exception:  # cancelling must not hide the error that got us here
                pass

    def close(self) -> None:
        """Cancel what is still queued and let go of the cluster (a local one stops)."""
        self.cancel()
        client, self.client = self.client, None
        cluster, self.cluster = self.cluster, None
        for step in ([client.close] if client is not None else []) + (
                [cluster.close] if cluster is not None else []):
            try:
                step()
            except Exception:  # closing must not hide the error that got us here
                pass
        if self._log_level is not None:
            logging.getLogger("distributed").setLevel(self._log_level)
            self._log_level = None


def _connection_errors() -> tuple[type[BaseException], ...]:
    """What a client raises when its scheduler is gone: a closed connection, or futures
    cancelled for ``scheduler-connection-lost``."""
    from concurrent.futures import CancelledError

    from distributed.comm.core import CommClosedError

    return CommClosedError, CancelledError, OSError

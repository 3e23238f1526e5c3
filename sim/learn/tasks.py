"""An iteration's self-play games in chunks: played here, or as Dask tasks (``--scheduler``).

Why chunks: the compiled loop (``sim.learn.kernel``) plays a chunk of games into record
buffers of a bounded size; an iteration is many chunks, each a function of the seed, its
game ids and its seats' roles (the network before the iteration travels inside the roles'
rows). So a chunk is the same whichever thread or machine plays it, and the records,
concatenated in chunk order, are the same: the network trained on them is the same bit for
bit with or without a cluster. The fit stays in the command's process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.kernels.runner import ROUND_CAP

__all__: list[str] = []  # nothing here is used outside sim.learn


@dataclass(frozen=True)
class GamesJob:
    """What every chunk of an iteration shares: small, pickled with every task."""

    seed: int
    players: int
    inputs: int  # features per record
    per_seat: int  # records a seat may keep per game (the buffers' size)
    threads_by_host: dict
    threads: int | None


def play_records(job: GamesJob, roles: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """One chunk: the records ``(inputs, value, outcome)`` of games ``ids``."""
    from sim.learn import kernel

    rows = ids.size * job.per_seat
    x = np.zeros((rows, job.inputs), dtype=np.float32)
    value = np.zeros(rows)
    outcome = np.zeros(rows)
    winners = np.zeros(ids.size, dtype=np.int64)
    n = kernel.play_games(np.uint64(job.seed), ids, ids, ids % job.players, job.players,
                                 roles, ROUND_CAP, (x, value, outcome), winners)
    return x[:n].copy(), value[:n], outcome[:n]


def warm_up_task(job: GamesJob, roles: np.ndarray) -> dict:
    """Load (or compile) the self-play loop on this worker by playing one game."""
    from sim.cluster.dask import worker_report
    from sim.learn import kernel

    return worker_report(kernel.module_name(), job.threads_by_host, job.threads,
                         lambda: play_records(job, roles, np.zeros(1, dtype=np.int64)))


def records_task(job: GamesJob, roles: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """One chunk on a worker."""
    from sim.cluster.dask import worker_threads

    worker_threads(job.threads_by_host, job.threads)
    return play_records(job, roles, ids)


def play_on_cluster(cluster, job: GamesJob, chunks: list) -> list[tuple[np.ndarray, ...]]:
    """The chunks ``(roles, ids)`` as tasks of ``cluster`` (``sim.cluster.dask``), in order."""
    from dataclasses import replace
    from functools import partial

    from sim.learn import kernel

    def made() -> GamesJob:
        return replace(job, threads_by_host=dict(cluster.threads_by_host),
                       threads=cluster.threads_option)

    if not cluster.workers:  # once per command: the loop is the same every iteration
        cluster.warm_up(partial(warm_up_task, roles=chunks[0][0]), made, kernel.module_name())
    sized = made()
    return list(cluster.ordered(chunks, records_task, lambda chunk: (sized, *chunk),
                                lambda: None, name="games"))

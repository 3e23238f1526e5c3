"""``sniff learn``: train ``learned``'s value network by Monte-Carlo self-play (docs/learned.md).

One iteration:

1. **Games** (``sim.learn.selfplay``, compiled): iteration 1 plays the strongest heuristic
   (``partner`` with 4 players, else ``blocker``) in every seat; later iterations play the
   previous iteration's network, in every seat in half the games and against the heuristic
   in the other half. Every seat explores (a random legal move with probability
   ``epsilon``) and records each decision's chosen afterstate with its Monte-Carlo return
   (``target``: ``value``, the chance to win at the round's end as ``expert`` values it;
   ``outcome``, the game's win or loss; ``mix``, their mean).
2. **Fit**: ``epochs`` passes of scikit-learn's ``MLPRegressor.partial_fit`` (Adam, ReLU,
   squared error) over the records of the last ``window`` iterations.
3. **Measure**: the network against the heuristic on held-out duplicate deals (another
   seed's deals, seats rotating), with the paired 95% interval: one row of the learning
   curve.

The folder holds ``model.npz`` (the latest network, the file ``learned:model=PATH``
plays), ``settings.json``, ``log.jsonl`` (one line per iteration), ``curve.csv`` and
``curve.png``, ``snapshots/iter-NNN.npz`` (each iteration's network: the games of an
iteration are a function of the seed and the network before it, so ``--resume``
regenerates the window's records from them) and ``state.npz`` with ``state.json`` (the
regressor and its optimiser after the last finished iteration, as plain arrays and numbers:
``sim.learn.state``; nothing in the folder is ever unpickled). Ctrl-C or SIGTERM keeps
every finished iteration; ``--resume`` continues and ends with the same model as an
uninterrupted run. scikit-learn is the optional extra ``learn`` and is imported only here.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from sim.errors import SettingError, SniffError, Stopped
from sim.files import check_replaceable, own_folder, own_inode, read_regular, write_atomic
from sim.learn import seat
from sim.learn.config import LearnConfig
from sim.learn.curve import read_log, write_curve
from sim.learn.measure import EVAL_SALT, evaluate, seat_roles
from sim.learn.state import load_state, save_state
from sim.learn.tasks import GamesJob, play_on_cluster, play_records
from sim.store.folders import check_writable_folder
from sim.store.io import write_json
from sim.store.lock import LOCK_NAME, RunLock
from strategies.learned.net import pack, save_model

__all__ = ["learn", "main_progress"]

RECORDS_PER_SEAT = 600
LABELLED_PER_SEAT = 2000  # every candidate of a labelled decision is a record
CHUNK = 500  # games per call of the compiled loop (bounds the record buffers)
LABELLED_CHUNK = 100

def _sklearn():
    try:
        from sklearn.neural_network import MLPRegressor
    except ImportError:
        raise SniffError("sniff learn needs scikit-learn: pip install 'sniff[learn]'") from None
    return MLPRegressor


def new_regressor(config: LearnConfig):
    return _sklearn()(
        hidden_layer_sizes=config.layers(), activation="relu", solver="adam",
        learning_rate_init=config.rate, batch_size=config.batch, alpha=1e-5,
        random_state=config.seed, shuffle=True)


def network_row(weights, sizes, epsilon: float = 0.0, recording: bool = False,
                config: LearnConfig | None = None, teacher: np.ndarray | None = None
                ) -> np.ndarray:
    """A network's seat row; recording Monte-Carlo returns, or with ``teacher`` (its
    parameter row) the teacher's labels at ``config.label_rate``."""
    if teacher is not None and recording:
        assert config is not None  # the teacher labels at its config's rate
        return seat.player_row(seat.NET, epsilon, True, LABELLED_PER_SEAT, weights,
                                   sizes, config.label_rate, teacher)
    return seat.player_row(seat.NET, epsilon, recording,
                               RECORDS_PER_SEAT if recording else 0, weights, sizes)


def iteration_games(config: LearnConfig, iteration: int,
                    network: tuple[np.ndarray, np.ndarray] | None, threads: int = 1,
                    cluster=None) -> tuple[np.ndarray, ...]:
    """Records ``(inputs, value, outcome)`` of one iteration's games (``network``:
    ``(weights, sizes)`` of the network before it, None for the heuristic's games).

    The games are played in chunks, ``threads`` at a time (the compiled loop releases the
    GIL), or as the tasks of ``cluster`` (``sim.learn.tasks``); the records are those of
    the chunks in order, whatever ``threads`` or the cluster is.
    """
    players, eps = config.players, config.epsilon
    base = np.int64(iteration) * 100_000_000
    teacher = config.teacher_row()
    if teacher is not None:
        per_seat, chunk = LABELLED_PER_SEAT, LABELLED_CHUNK
        heuristic = seat.player_row(config.heuristic, eps, True, per_seat,
                                        label_rate=config.label_rate, teacher=teacher,
                                        inputs=config.inputs)
    else:
        per_seat, chunk = RECORDS_PER_SEAT, CHUNK
        heuristic = seat.player_row(config.heuristic, eps, True, per_seat,
                                        inputs=config.inputs)
    if network is None:
        parts = [(seat_roles(players, heuristic, heuristic), config.games)]
    else:
        own = network_row(*network, epsilon=eps, recording=True, config=config,
                          teacher=teacher)
        half = config.games // 2
        parts = [(seat_roles(players, own, own), config.games - half),
                 (seat_roles(players, own, heuristic), half)]
    jobs = []
    for index, (roles, games) in enumerate(parts):
        for start in range(0, games, chunk):
            ids = base + index * 50_000_000 + np.arange(start, min(games, start + chunk),
                                                        dtype=np.int64)
            jobs.append((roles, ids))

    job = GamesJob(config.seed, players, config.inputs, per_seat, {}, None)
    if cluster is not None:
        results = play_on_cluster(cluster, job, jobs)
    elif threads > 1 and len(jobs) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads, thread_name_prefix="sniff-learn") as pool:
            results = list(pool.map(lambda chunk: play_records(job, *chunk), jobs))
    else:
        results = [play_records(job, *chunk) for chunk in jobs]
    return tuple(np.concatenate([r[k] for r in results]) for k in range(3))


def targets(config: LearnConfig, value: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    if config.target == "value":
        return value
    if config.target == "outcome":
        return outcome
    return 0.5 * (value + outcome)


class _Folder:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.snapshots = self.path / "snapshots"

    def snapshot(self, iteration: int) -> Path:
        return self.snapshots / f"iter-{iteration:03d}.npz"

    def records(self, iteration: int) -> Path:
        return self.path / "records" / f"iter-{iteration:03d}.npz"

    def write_json(self, name: str, data: dict) -> None:
        write_json(self.path / name, data)


def _settings(config: LearnConfig) -> dict:
    return {"format": "sniff-learn/1", **asdict(config)}


def _open(folder: _Folder, config: LearnConfig, resume: bool, given: set[str]) -> tuple:
    """``(config, regressor, iterations done)`` for a new or resumed folder."""
    own_folder(folder.snapshots, "snapshots")  # written each iteration: never a link out
    for name in ("log.jsonl", "model.npz", "state.npz", "state.json", "curve.csv",
                 "curve.png"):  # refused now, not after an iteration's minutes of play
        check_replaceable(folder.path / name, name)
    if not resume:  # the folder is empty but its lock (checked by _lock)
        folder.write_json("settings.json", _settings(config))
        return config, None, 0
    try:
        saved = json.loads(read_regular(folder.path / "settings.json", 2**20, "settings.json"))
    except (OSError, ValueError, RecursionError):
        saved = None
    if not isinstance(saved, dict) or saved.get("format") != "sniff-learn/1":
        raise SniffError(f"{folder.path} is not a sniff learn folder (no readable "
                         "settings.json)")
    if "feature_version" not in saved:
        raise SniffError(f"{folder.path}/settings.json records no feature version; the folder "
                         "is damaged or was edited")
    recorded = recorded_config(folder.path, saved)
    for name in given:
        if getattr(config, name) != getattr(recorded, name):
            if name == "iterations":
                continue  # more iterations may be asked for
            raise SettingError(f"{{{name}={getattr(config, name)}}} differs from "
                               f"the folder's {getattr(recorded, name)}")
    regressor = new_regressor(recorded)
    done = load_state(folder.path, regressor)
    if done == 0:
        regressor = None
    if "iterations" in given:
        if config.iterations < done:
            raise SettingError(f"{{iterations={config.iterations}}} is fewer than the {done} "
                               f"already done in {folder.path}")
        recorded = LearnConfig(**{**asdict(recorded), "iterations": config.iterations})
        folder.write_json("settings.json", _settings(recorded))
    return recorded, regressor, done


def recorded_config(path: Path, saved: dict) -> LearnConfig:
    """The settings a folder records, held to the checks of new settings (a folder may
    come from someone else): one line naming what is wrong."""
    kinds = {f.name: f.type for f in fields(LearnConfig)}
    if missing := [name for name in kinds if name not in saved]:
        raise SniffError(f"{path}: records no {missing[0]} (every sniff learn folder records "
                         "all its settings); a folder of another version of sniff is not read")
    given = {name: saved[name] for name in kinds}
    types: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float), "str": str}
    for name, value in given.items():
        wanted = types.get(str(kinds[name]), object)
        if isinstance(value, bool) or not isinstance(value, wanted):
            raise SniffError(f"{path}/settings.json: {name} is {value!r}, which no training "
                             "records; the folder is damaged or was edited")
    try:
        recorded = LearnConfig(**given)
    except TypeError:  # a setting without a default is missing
        raise SniffError(f"{path}/settings.json lacks settings every training records; the "
                         "folder is damaged or was edited") from None
    try:
        recorded.check()
    except SniffError as error:
        raise SniffError(f"{path}/settings.json records settings no training has ({error}); "
                         "the folder is damaged or was edited") from None
    return recorded


def read_network(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A saved network's weights and biases, packed as the learned player reads them."""
    with np.load(path) as data:
        coefs = [data[f"W{i}"] for i in range(len(data.files)) if f"W{i}" in data.files]
        intercepts = [data[f"b{i}"] for i in range(len(coefs))]
    return pack(coefs, intercepts)


class Signals:
    """Ctrl-C and SIGTERM raise :class:`Stopped`, except while scikit-learn fits: its
    ``partial_fit`` catches a KeyboardInterrupt and carries on with a half-done epoch, so
    there the signal is held and raised once the fit returns."""

    def __init__(self) -> None:
        self.fitting = False
        self.pending = 0

    def __enter__(self):
        self.previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        for signum in self.previous:
            signal.signal(signum, self.handler)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def handler(self, signum, frame) -> None:
        if self.fitting:
            self.pending = signum
        else:
            raise Stopped(signum)

    def fit(self, regressor, inputs, wanted) -> None:
        self.fitting = True
        try:
            regressor.partial_fit(inputs, wanted)
        finally:
            self.fitting = False
        if self.pending:
            raise Stopped(self.pending)


def _records(config: LearnConfig, folder: _Folder, iteration: int, threads: int,
             cluster=None) -> tuple[np.ndarray, ...]:
    """One iteration's records: played (from the seed and the network before it), or, for
    a teacher's labels (minutes of search), read back from ``records/`` where an earlier
    run kept them."""
    path = folder.records(iteration)
    if config.labelled and path.exists():
        with np.load(path) as data:
            return data["x"], data["value"], data["outcome"]
    network = None if iteration == 1 else read_network(folder.snapshot(iteration - 1))
    x, value, outcome = iteration_games(config, iteration, network, threads, cluster)
    if config.labelled:
        own_folder(path.parent, "records")  # never a link out of the folder

        def write(temporary: Path) -> None:
            with temporary.open("wb") as handle:
                np.savez_compressed(handle, x=x, value=value, outcome=outcome)

        write_atomic(path, write)
    return x, value, outcome


def learn(config: LearnConfig, out: Path, resume: bool = False, given: set[str] | None = None,
          progress=None, threads: int = 1, scheduler: str | None = None) -> dict:
    """Train into ``out``; returns the last curve row. ``progress(text)`` gets a line per
    step (None: quiet); ``threads`` play an iteration's games (the model does not depend
    on it); ``scheduler`` (``tcp://HOST:PORT`` or ``local:N``) plays them on a Dask
    cluster instead (``sim.learn.tasks``), with the same model bit for bit."""
    config.check()
    if scheduler is not None:
        from sim.cluster.dask import check_scheduler

        check_scheduler(scheduler)
    folder = _Folder(out)
    lock = _lock(folder.path, resume)
    cluster = None
    try:
        if scheduler is not None:
            from sim.cluster.dask import DaskCluster

            cluster = DaskCluster(scheduler)
        return _train(folder, config, resume, given, progress, threads, cluster)
    finally:
        if cluster is not None:
            cluster.close()
        lock.release()


def _lock(path: Path, resume: bool) -> RunLock:
    """One writer per training folder: a second ``sniff learn`` into it, new or ``--resume``,
    is refused in one line (the lock ends with its process however it ends)."""
    if resume and not (path / "settings.json").is_file():
        raise SniffError(f"{path} is not a sniff learn folder (no readable settings.json)")
    if not resume and path.exists() and any(p.name != LOCK_NAME for p in path.iterdir()):
        raise SettingError(f"{path} is not empty: choose another {{out}} or {{resume}} it")
    check_writable_folder(path)  # not inside another folder's tables, and writable
    path.mkdir(parents=True, exist_ok=True)
    held = RunLock(path)
    held.acquire("sniff learn")
    return held


def _train(folder: _Folder, config: LearnConfig, resume: bool, given: set[str] | None,
           progress, threads: int, cluster=None) -> dict:
    say = progress or (lambda text: None)
    config, regressor, done = _open(folder, config, resume, given or set())
    if done >= config.iterations:
        say(f"{folder.path}: {done} of {config.iterations} iterations already done")
        return {}
    regressor = regressor if regressor is not None else new_regressor(config)
    window: list[tuple[np.ndarray, np.ndarray]] = []
    heuristic = seat.player_row(config.heuristic)
    eval_seed = config.seed + EVAL_SALT
    signals = Signals()
    signals.__enter__()
    try:
        # The records of the window's finished iterations: kept (labelled) or played again
        # (deterministic).
        for iteration in range(max(1, done - config.window + 2), done + 1):
            x, value, outcome = _records(config, folder, iteration, threads, cluster)
            window.append((x, targets(config, value, outcome)))
        for iteration in range(done + 1, config.iterations + 1):
            started = time.perf_counter()
            x, value, outcome = _records(config, folder, iteration, threads, cluster)
            window.append((x, targets(config, value, outcome)))
            window = window[-config.window:]
            played = time.perf_counter() - started
            what = "labelled records" if config.labelled else "decisions"
            say(f"iteration {iteration}/{config.iterations}: {config.games:,} games, "
                f"{x.shape[0]:,} {what} in {played:.0f} s; fitting "
                f"{sum(w[0].shape[0] for w in window):,} records x {config.epochs} epochs")
            inputs = np.concatenate([w[0] for w in window])
            wanted = np.concatenate([w[1] for w in window])
            for _ in range(config.epochs):
                signals.fit(regressor, inputs, wanted)
            del inputs
            weights, sizes = pack(regressor.coefs_, regressor.intercepts_)
            result = evaluate(config.players, eval_seed, config.eval_games,
                              network_row(weights, sizes), heuristic)
            row = {"iteration": iteration, "games_played": iteration * config.games,
                   "records": int(x.shape[0]), "loss": float(regressor.loss_),
                   "opponent": config.heuristic_name, "eval_games": result["games"],
                   "win_rate": result["rate"], "low": result["low"], "high": result["high"],
                   "seconds": round(time.perf_counter() - started, 1)}
            save_model(folder.snapshot(iteration), regressor.coefs_, regressor.intercepts_,
                       config.players, iteration=iteration)
            save_model(folder.path / "model.npz", regressor.coefs_, regressor.intercepts_,
                       config.players, iteration=iteration)
            save_state(folder.path, regressor, iteration)
            check_replaceable(folder.path / "log.jsonl", "training log")  # never through a
            own_inode(folder.path / "log.jsonl")  # link, into a FIFO or a hard-linked copy
            with (folder.path / "log.jsonl").open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            write_curve(folder.path)
            say(f"iteration {iteration}/{config.iterations}: loss {row['loss']:.4f}; against "
                f"{config.heuristic_name} {row['win_rate']:.1%} [{row['low']:.1%}, "
                f"{row['high']:.1%}] on {result['games']:,} duplicate games "
                f"({row['seconds']:.0f} s)")
    except KeyboardInterrupt:
        finished = len(read_log(folder.path))
        say(f"stopped: {finished} of {config.iterations} iterations kept in {folder.path}; "
            f"continue with: sniff learn --out {folder.path} --resume")
        raise
    finally:
        signals.__exit__()
    return row


def main_progress(text: str) -> None:
    """Print one line of progress on stderr."""
    print(text, file=sys.stderr, flush=True)

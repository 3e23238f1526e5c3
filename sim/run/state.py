"""A run in progress: its manifest, summary and session, kept chunk by chunk.

``sim.run.simulation.execute`` checks the folder and the code and opens an executor; a
:class:`RunState` then plays the chunks in order (``play``): a resumed chunk is read back for
the summary, a played one is cut at a ``precision`` stop, written (or kept in memory) and
counted, and the run ends after the chunk that decides a stopping rule. Whatever ends the
loop (done, Ctrl-C, a write error), ``finish`` records the session in the manifest.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim.display.progress import ProgressBar
from sim.errors import SettingError
from sim.run.chunks import (
    ChunkSizes,
    MissingChunks,
    RunInterrupted,
    StopOnInterrupt,
    utc_now,
    write_parts,
)
from sim.run.plan import Plan
from sim.run.precision import (
    precision_stop,
    stop_record,
    stopped_games,
    truncate_chunk,
    widest_half_width,
)
from sim.run.sequential import SequentialStop
from sim.run.session import Session, new_manifest, prepare_folder, write_error
from sim.run.settings import RunControl
from sim.store.arrow import to_numpy
from sim.store.summary import Summary

__all__: list[str] = []  # nothing here is used outside sim.run


@dataclass
class RunState:
    """What a run has done so far; ``start`` makes the folder ready, ``play`` plays the rest."""

    plan: Plan
    folder: Path | None
    control: RunControl
    kernel: str
    manifest: dict
    session: Session
    summary: Summary
    metadata: dict
    total: int  # the games the run plays: a stopped run's prefix, else the plan's
    done: set[int]  # chunks finished before this session
    memory: dict[str, list] = field(default_factory=dict)
    played_chunks: int = 0
    stopped: dict | None = None

    @classmethod
    def start(cls, plan: Plan, folder: Path | None, control: RunControl,
              recorded: dict | None, code: tuple[str, dict], executor) -> RunState:
        """The manifest (the recorded one on a resume), the folder made ready, the summary.
        ``code``: the code key of the compiled code the lineup plays (each chunk's is compared
        with it) and the identity the manifest records (``sim.run.signature``)."""
        from sim.store import io

        session = Session(control.command, threads=executor.threads,
                          cluster=executor.describe())
        kernel, identity = code
        manifest = recorded or new_manifest(plan, plan.run_id, identity, session)
        # A run that stopped for a precision ends inside its last chunk: its games are the
        # prefix 0..stopped-1 (a resume of it plays nothing).
        total = stopped_games(recorded) or plan.games
        done = set() if folder is None else prepare_folder(
            folder, control.mode, manifest, control.notice, control.alerts)
        if control.announce is not None:
            control.announce()
        metadata = {
            "format": io.FORMAT, "run_id": plan.run_id, "version": manifest["version"],
            "identity": identity, "command": control.command, "config": plan.config(),
            "session_started_at": session.started_at,
        }
        summary = Summary(plan.players, plan.labels, plan.group, plan.round_cap)
        return cls(plan, folder, control, kernel, manifest, session, summary, metadata, total,
                   done, {name: [] for name in io.tables_for(plan.rounds)},
                   played_chunks=len(done))

    @property
    def n_chunks(self) -> int:
        return -(-self.total // self.plan.chunk_size)

    @property
    def done_games(self) -> int:
        sizes = ChunkSizes(self.total, self.plan.chunk_size)
        return sum(sizes[chunk] for chunk in self.done)

    def bounds(self, chunk: int) -> tuple[int, int]:
        size = self.plan.chunk_size
        return chunk * size, min(self.total, (chunk + 1) * size)

    def play(self, executor, sequential: SequentialStop | None) -> None:
        """Every chunk in order, until the last or a stop; the manifest records how it ended."""
        status, stop = "failed", None
        done_games = self.done_games
        try:
            with StopOnInterrupt(self.control.notice) as stop, ProgressBar(
                unit=" games", shown=self.control.progress, total=self.plan.games,
                initial=done_games, scale=True,
            ) as bar:
                self._play_chunks(executor, sequential, stop, bar)
            status = "complete"
        except KeyboardInterrupt as error:
            status = "interrupted"
            # The signal that asked for the stop, whichever thread's exception carried it.
            signum = stop.signum if stop is not None else None
            if signum is None:
                signum = int(getattr(error, "signum", signal.SIGINT))
            raise RunInterrupted(self.folder, self.played_chunks, self.n_chunks,
                                 done_games + self.session.played, signum) from None
        except OSError as error:
            if self.folder is None:
                raise
            raise write_error(error, self.folder, self.played_chunks) from None
        finally:
            self.finish(status, sequential)

    def _play_chunks(self, executor, sequential, stop, bar: ProgressBar) -> None:
        plan, summary = self.plan, self.summary

        def on_batch(games: int) -> None:
            bar.add(games)
            stop.check()

        precision = plan.precision

        def enough(lo: int, winner_side: np.ndarray) -> bool:
            # Asked between batches of chunk lo's games, once every chunk before it is in
            # the summary (a --precision run's only).
            assert summary.games == lo, (summary.games, lo)
            return precision is not None and precision_stop(
                summary.wins, summary.games, winner_side, precision) is not None

        played = executor.play(MissingChunks(self.n_chunks, self.done), self.bounds,
                               plan.run_id, self.folder, self.metadata, on_batch, stop.check,
                               enough if precision is not None else None)
        for chunk in range(self.n_chunks):
            if chunk in self.done:
                self._read_back(chunk, sequential)
                continue
            self._take(chunk, played, sequential, bar)
            if self.control.on_chunk is not None:
                self.control.on_chunk(chunk)
            if self.stopped is not None:
                break
            stop.check()

    def _read_back(self, chunk: int, sequential: SequentialStop | None) -> None:
        """A resumed chunk: its parts are there, read them for the summary."""
        from sim.store import io

        assert self.folder is not None  # a resumed run has a folder
        parts = io.summary_part(self.folder, io.part_name(chunk), self.manifest["config"])
        self.summary.add_tables(*parts)
        if sequential is not None:
            sequential.add(parts[0])

    def _take(self, chunk: int, played, sequential, bar: ProgressBar) -> None:
        """The next played chunk: checked, cut at a precision stop, kept, counted."""
        plan = self.plan
        lo, hi = self.bounds(chunk)
        started = time.perf_counter()
        result = next(played)  # this chunk: played here, or on a Dask worker
        tables = result.tables
        if result.kernel != self.kernel:  # an edit to sim/ or strategies/ during the run
            self._code_changed(chunk)
        if plan.precision is not None:
            stop_at = precision_stop(self.summary.wins, self.summary.games,
                                     to_numpy(tables["games"]["winner_side"]), plan.precision)
            if stop_at is not None:
                hi = stop_at[0]
                tables = truncate_chunk(tables, hi)
                self.stopped = stop_record(plan, "precision", hi, chunk + 1, stop_at[1])
        self._keep(chunk, lo, hi, result, tables, started)
        self.session.played += hi - lo
        self.session.seconds += time.perf_counter() - started
        self.played_chunks += 1
        self.summary.add_tables(*(tables[name] for name in self.memory))
        if sequential is not None:
            sequential.add(tables["games"])
            bar.note(f"LLR {sequential.llr:+.2f}")
            if sequential.decision is not None:
                self.stopped = sequential.stop_record("sprt", chunk + 1)
        if plan.precision is not None:
            bar.note(f"widest half-width {widest_half_width(self.summary):.2%}"
                     f" (target {plan.precision:.2%})")

    def _code_changed(self, chunk: int) -> None:
        kept = "run it again" if self.folder is None else (
            f"the {self.played_chunks} finished chunk(s) in {self.folder} are kept, but "
            "only a new run ({overwrite}) can give a consistent dataset")
        raise SettingError(
            "the simulator's code (sim/ or strategies/) changed while the run "
            f"was playing, so chunk {chunk} on would not match the first; {kept}")

    def _keep(self, chunk: int, lo: int, hi: int, result, tables: dict, started: float) -> None:
        """Into memory, or the chunk's parts into the folder and its record into the ledger."""
        from sim.checks.integrity import append_record
        from sim.run import space as run_space

        if self.folder is None:
            for name in self.memory:
                self.memory[name].append(tables[name])
            return
        record = result.record if result.written else write_parts(
            self.folder, chunk, lo, hi, time.perf_counter() - started, tables, self.metadata)
        # The chunk is finished here: its parts are in place and vouched for.
        append_record(self.folder, record)
        if self.control.check_space and self.session.played == 0:
            run_space.check_measured_space(self.plan, self.folder, record,
                                           self.total - self.done_games - (hi - lo))

    def finish(self, status: str, sequential: SequentialStop | None) -> None:
        """The session's line, the stop and the summary into the manifest, written."""
        from sim.store import io

        manifest, summary, plan = self.manifest, self.summary, self.plan
        manifest["sessions"].append(self.session.record(status))
        manifest["status"] = status
        if status == "complete" and plan.precision is not None:
            manifest["stopped"] = self.stopped or manifest.get("stopped") or stop_record(
                plan, "max_games", summary.games, self.n_chunks, widest_half_width(summary))
            summary.stopped = manifest["stopped"]
        elif status == "complete" and sequential is not None:
            manifest["stopped"] = self.stopped or manifest.get("stopped") or (
                sequential.stop_record("max_games", self.n_chunks))
            summary.stopped = manifest["stopped"]
        if status == "complete":
            self._complete()
        if self.folder is not None:
            try:
                if status == "complete":
                    io.remove_temporaries(self.folder)
                io.write_json(self.folder / io.MANIFEST, manifest)
            except OSError:
                if status == "complete":
                    raise

    def _complete(self) -> None:
        from sim.store import io

        session, summary, manifest = self.session, self.summary, self.manifest
        summary.timing = {"played": session.played, "seconds": session.seconds,
                          "threads": session.threads,
                          "workers": len((session.cluster or {}).get("workers", []))}
        summary.folder = self.folder
        summary.tables = io.tables_for(self.plan.rounds)
        manifest["finished_at"] = utc_now()
        played = sum(s["games_played"] for s in manifest["sessions"])
        seconds = sum(s["seconds"] for s in manifest["sessions"])
        manifest["games_per_second"] = round(played / seconds, 1) if seconds else None
        manifest["summary"] = summary.to_dict()

    def run(self):
        """The finished run, as ``sim.store.io.Run`` (its tables too when kept in memory)."""
        import pyarrow as pa

        from sim.store import io

        if self.folder is None:
            tables = {name: pa.concat_tables(parts) for name, parts in self.memory.items()}
            return io.Run(None, self.manifest, tables, summary=self.summary)
        return io.Run(self.folder, self.manifest, summary=self.summary)

"""What a session of a run records, and its folder made ready: the manifest of a new run, the
folder prepared (a resume's finished chunks found, an overwrite cleared), the session's line
in the manifest, and the one-line error a failed write becomes (the finished chunks kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sim.errors import SettingError, SniffError
from sim.run.chunks import utc_now
from sim.run.plan import Plan
from sim.run.settings import Mode

__all__: list[str] = []  # nothing here is used outside sim.run


@dataclass
class Session:
    command: str
    started_at: str = field(default_factory=utc_now)
    played: int = 0
    seconds: float = 0.0
    threads: int = 0
    cluster: dict | None = None  # a Dask run: scheduler and workers (sim.cluster.dask)

    def record(self, status: str) -> dict:
        return {
            "command": self.command, "started_at": self.started_at, "ended_at": utc_now(),
            "status": status, "games_played": self.played, "seconds": round(self.seconds, 3),
            "games_per_second": round(self.played / self.seconds, 1) if self.seconds else None,
            "threads": self.threads,
            **({"cluster": self.cluster} if self.cluster else {}),
        }


def new_manifest(plan: Plan, run_id: str, identity: dict, session: Session) -> dict:
    """A new run's manifest; ``identity``: the engine's version and each strategy's behaviour
    signature (``sim.run.signature.lineup_identity``), which ``--resume`` compares."""
    from sim.checks.integrity import LEDGER
    from sim.store import io
    from sim.version import __version__

    return {
        "format": io.FORMAT, "run_id": run_id, "version": __version__,
        "identity": identity,
        "command": session.command, "config": plan.config(), "started_at": session.started_at,
        "status": "running", "sessions": [],
        "tables": {name: f"{name}/" for name in io.tables_for(plan.rounds)},
        "ledger": LEDGER,
    }


def prepare_folder(folder: Path, mode: Mode, manifest: dict, notice, alert) -> set[int]:
    """Make the folder ready and write the manifest; return the chunks already finished
    (on a resume, every part hashed against the ledger: ``sim.checks.resume.resume_chunks``)."""
    from sim.checks.resume import resume_chunks
    from sim.files import own_folder
    from sim.store import io

    done: set[int] = set()
    try:
        if mode == "resume":
            io.remove_temporaries(folder)
            for name in io.tables_of(manifest["config"]):  # never a link out of the run
                own_folder(folder / name, name)
            done = resume_chunks(folder, manifest, notice, alert)
        elif mode == "overwrite" and folder.exists():
            io.clear_run(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name in io.tables_of(manifest["config"]):
            own_folder(folder / name, name)
        io.mark_running(manifest)
        io.write_json(folder / io.MANIFEST, manifest)
    except OSError as error:
        raise SniffError(f"cannot write to {error.filename or folder}: "
                         f"{error.strerror or error}") from None
    return done


def write_error(error: OSError, folder: Path, chunks_done: int) -> SettingError:
    where = error.filename or folder
    reason = error.strerror or str(error)
    return SettingError(
        f"cannot write {where}: {reason}; the {chunks_done} finished chunk(s) in {folder} are "
        "kept: fix the cause and complete the run with {resume}"
    )

"""Running ``sniff`` from the tests: in this process, or as a child of this interpreter.

A child runs ``python -m sim.cli`` with the interpreter that runs the tests, never a
``sniff`` found on PATH: on a fresh clone there is none, or it belongs to another install.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sim.cli.main import main
from sim.precompile import POSITION
from tests.helpers import ROOT

SNIFF = [sys.executable, "-m", "sim.cli"]
COMPILE_NOTICE = "sniff: compiling the engine"


def invoke(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    """``sniff ARGS`` in this process: ``sim.cli.main.main`` (its one-line errors and exit
    statuses) inside click's ``CliRunner``, which gives it its own stdin (``stdin``, else
    empty), stdout and stderr: exit code, stdout, stderr."""
    with CliRunner().isolation(input=stdin) as (out, err, _):
        try:
            main(args, prog_name="sniff")
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        finally:  # what was written past click.echo, still in the text buffers
            sys.stdout.flush()
            sys.stderr.flush()
        return code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")


def sniff_here(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """:func:`invoke` with :func:`sniff`'s answer (exit status, stdout, stderr), for a test
    of a command's output where a process of its own is not the point (no signal, no
    ``PATH``, no import from the working folder): it saves a child's start and numba's
    set-up in it (docs/testing.md)."""
    code, out, err = invoke(list(args), stdin)
    return subprocess.CompletedProcess(["sniff", *args], code, out, err)


def run_main(args: list[str], capsys, stdin: str | None = None) -> tuple[int, str, str]:
    """:func:`invoke`, for a test that also reads ``capsys`` (what was printed before is
    dropped first)."""
    capsys.readouterr()
    return invoke(args, stdin)


def sniff(
    *args: str, stdin: str = "", cwd: Path | None = None, env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``sniff ARGS`` as a child process of this interpreter, from the repository root."""
    env = dict(os.environ if env is None else env, PYTHONIOENCODING="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [*SNIFF, *args], input=stdin, capture_output=True, text=True, encoding="utf-8",
        timeout=timeout, cwd=cwd or ROOT, env=env,
    )


def error_lines(stderr: str) -> list[str]:
    """Lines of stderr besides the one-time "compiling the engine" notice (a cold cache
    prints it before anything else; the tests must not depend on a warm cache)."""
    return [line for line in stderr.strip().splitlines() if not line.startswith(COMPILE_NOTICE)]


def default_sigint() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C: a shell runs background jobs with
    SIGINT ignored, and Python then never turns SIGINT into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def one_line(code: int, err: str, text: str) -> None:
    """The command refused its input in one line naming ``text`` (exit 2, no traceback)."""
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and text in lines[0], err
    assert "Traceback" not in err


def copy_of(run: Path, tmp_path: Path) -> Path:
    """A copy of a module-scoped run for a test to edit (links copied as links)."""
    target = tmp_path / "copy"
    shutil.copytree(run, target, symlinks=True)
    return target


def as_stopped_before(run: Path, chunk: int) -> None:
    """Make ``run`` look as a stop left it while ``chunk`` was being written: the chunk not in
    the ledger, the manifest's status interrupted (its parts are the caller's to remove)."""
    import json

    ledger = run / "parts.jsonl"
    ledger.write_text("".join(line + "\n" for line in ledger.read_text().splitlines()
                              if json.loads(line)["chunk"] != chunk))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))


UNVERIFIED = "was not verified since it last changed"  # sim.checks.verified's reader note


def load_unverified(folder: Path):
    """``sim.load`` of a folder its writer did not finish, or that changed since (a stopped,
    killed or edited run, a copy): it must say that it was not verified."""
    import pytest

    import sim

    with pytest.warns(UserWarning, match=UNVERIFIED):
        return sim.load(folder)


# A legal position of sniff hint's text format (docs/hint.md), 2 players, seat 0 to move.
POSITION_TEXT = POSITION  # a position with a choice (sim.precompile compiles on it too)


# A module of the working folder that leaves a marker when some process imports it, then
# hands the importer the real module (so that the run goes on as it would).
SHADOW = """
import importlib, os, sys
here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(here, "imported-" + __name__ + "-" + str(os.getpid())), "w").close()
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)
"""


def shadow_modules(folder: Path, *names: str) -> None:
    """Put modules named ``names`` in ``folder`` that leave a marker when imported."""
    for name in names:
        (folder / f"{name}.py").write_text(SHADOW)


def imported_from(folder: Path) -> list[str]:
    """The markers of :func:`shadow_modules`' modules that some process imported."""
    return sorted(path.name for path in folder.glob("imported-*"))

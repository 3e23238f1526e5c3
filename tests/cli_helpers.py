"""Running ``sniff`` in the test process with the CLI's own error handling."""

from __future__ import annotations

import signal
import sys

from sim.cli import main


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    """``sniff ARGS`` in this process (``sim.cli.main``): exit code, stdout, stderr."""
    capsys.readouterr()
    old = sys.argv
    sys.argv = ["sniff", *args]
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    return code, out, err


def default_sigint() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C: a shell runs background jobs with
    SIGINT ignored, and Python then never turns SIGINT into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

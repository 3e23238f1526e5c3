"""The project's exceptions that end a command with one line and a non-zero exit."""

import signal
from pathlib import Path


class SniffError(ValueError):
    """Bad input or an impossible request, explained in the message: the CLI prints it on
    one line and exits with status 2."""


class Stopped(KeyboardInterrupt):
    """A stop asked for by a signal: Ctrl-C (SIGINT) or SIGTERM (``timeout``, a batch
    scheduler). ``exit_status`` is the shell's convention for it, 128 + the signal."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__()
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + int(self.signum)


def read_user_text(path: Path, kind: str, described: str) -> str:
    """The text of a file a user named (a trace, a position): a missing file, a folder or
    bytes that are not UTF-8 is one ``SniffError`` line (``described``: what it should be)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SniffError(f"no such {kind} file: {path}") from None
    except IsADirectoryError:
        raise SniffError(f"{path} is a folder, not a {kind} file") from None
    except UnicodeDecodeError:
        raise SniffError(f"{path} is not a {described} (not UTF-8 text)") from None

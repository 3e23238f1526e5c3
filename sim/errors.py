"""The project's exceptions that end a command with one line and a non-zero exit."""

import os
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


MAX_USER_FILE = 256 * 2**20  # a trace of thousands of games; /dev/zero is refused, not read


def read_user_text(path: Path, kind: str, described: str, limit: int | None = None) -> str:
    """The text of a file a user named (a trace, a position): a missing file, a folder, one
    over ``limit`` bytes (``/dev/zero`` among them) or bytes that are not UTF-8 is one
    ``SniffError`` line (``described``: what it should be). At most ``limit + 1`` bytes are
    ever read, so memory stays bounded whatever the file is (default ``MAX_USER_FILE``)."""
    from sim.files import UnsafeFile, open_regular

    limit = MAX_USER_FILE if limit is None else limit
    try:  # never blocks: a FIFO or a device is refused before a byte is read
        with os.fdopen(open_regular(Path(path), f"{kind} file"), "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise SniffError(f"no such {kind} file: {path}") from None
    except IsADirectoryError:
        raise SniffError(f"{path} is a folder, not a {kind} file") from None
    except UnsafeFile as error:
        raise SniffError(str(error)) from None
    except OSError as error:
        raise SniffError(f"cannot read {kind} file {path}: {error.strerror or error}") from None
    if len(data) > limit:
        raise SniffError(f"{path} is larger than {limit // 2**20} MiB: not a {described} "
                         "sniff can read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SniffError(f"{path} is not a {described} (not UTF-8 text)") from None

"""The project's exceptions that end a command with one line and a non-zero exit."""

import signal


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

"""The project's exceptions that end a command with one line and a non-zero exit."""

import re
import signal
from collections.abc import Callable

__all__ = ["SettingError", "SniffError", "Stopped"]

# "{name}" or "{name=value}": a setting, or a setting with the value it was given
_SETTING = re.compile(r"\{([a-z][a-z0-9_]*(?:=[^{}]*)?)\}")


class SniffError(ValueError):
    """Bad input or an impossible request, explained in the message: the CLI prints it on
    one line and exits with status 2."""


class SettingError(SniffError):
    """A bad setting, its message naming the settings it is about in braces (``"{resume} needs
    {out}"``, or with a value: ``"{games=400}"``). The library is called with Python names, so
    ``str()`` reads them as those ("resume needs out", "games=400"); the command line is
    called with flags, so it words them as its flags (``error.worded(flag_of)``: "--resume
    needs --out", "--games 400"), from one mapping in ``sim.cli``.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        super().__init__(self.worded(str))

    def __reduce__(self):
        """Pickled with its template (a Dask worker's error reaches the command whole)."""
        return type(self), (self.template,)

    @property
    def settings(self) -> list[str]:
        """The settings the message names, in order."""
        return [text.partition("=")[0] for text in _SETTING.findall(self.template)]

    def worded(self, name_of: Callable[[str], str]) -> str:
        """The message with each ``{setting}`` (or ``{setting=value}``) written as
        ``name_of("setting")`` (``name_of("setting=value")``)."""
        return _SETTING.sub(lambda match: name_of(match.group(1)), self.template)


class Stopped(KeyboardInterrupt):
    """A stop asked for by a signal: Ctrl-C (SIGINT) or SIGTERM (``timeout``, a batch
    scheduler). ``exit_status`` is the shell's convention for it, 128 + the signal."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__()
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + int(self.signum)

"""Option types and checks shared by the ``sniff`` commands' modules (``main``, ``hint``, ...):
a path whose name must be UTF-8, whole numbers, counts, player counts. Every refusal is one
line and exit 2 (click's own errors, printed by ``sim.cli.main.main``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from sim.errors import SniffError

__all__ = ["error_text", "flag_of"]


class TextPath(click.Path):
    """A path option or argument whose name must be valid UTF-8
    (``sim.store.folders.check_text_path``): refused at once, before anything is read or
    written, in one line."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():  # Path("") is "." : the cwd
            self.fail("an empty name: give a file or folder name", param, ctx)
        if isinstance(value, str) and not self.dir_okay and value.endswith(("/", os.sep)):
            # Path("out/") is "out": the slash, which says a folder, would be dropped
            self.fail(f"{value} names a folder (it ends with a slash): give a file name",
                      param, ctx)
        path = super().convert(value, param, ctx)
        from sim.store.folders import check_text_path

        if str(path) != "-":  # standard input, where the option allows it
            try:
                check_text_path(Path(path), "the name")
            except SniffError as error:
                self.fail(error_text(error), param, ctx)
        return path


class WholeRange(click.IntRange):
    """``click.IntRange`` that calls a non-number what it is ("'abc' is not a valid
    integer"), not "not a valid integer range"."""

    name = "integer"


def positive(ctx, param, value):
    if value is not None and value <= 0:
        raise click.BadParameter(f"must be a positive integer, got {value}")
    return value


def at_most(maximum: int):
    """A callback for a count from 1 to ``maximum``: sizes that cannot work are refused
    before anything starts."""

    def check(ctx, param, value):
        positive(ctx, param, value)
        if value is not None and value > maximum:
            raise click.BadParameter(f"must be at most {maximum:,}, got {value:,}")
        return value

    return check


# Settings whose flag is not "--" + the setting's name with "-" for "_" (sim.errors.SettingError),
# and settings with a value whose flag is not the setting's flag with that value.
FLAG_NAMES: dict[str, str] = {"out": "--out", "strategy": "STRATEGY", "delta": "--difference",
                              "round_number": "--round", "trace_path": "--trace",
                              "check_space=False": "--ignore-disk-space"}


def flag_of(setting: str) -> str:
    """The flag of a library setting, for the command line's wording of a ``SettingError``:
    ``resume`` is ``--resume``, ``chunk_size`` ``--chunk-size``, ``games=400`` ``--games
    400``, ``rounds=False`` ``--no-rounds``; the one mapping from the library's names to the
    command line's."""
    if setting in FLAG_NAMES:
        return FLAG_NAMES[setting]
    name, given, value = setting.partition("=")
    flag = FLAG_NAMES.get(name, "--" + name.replace("_", "-"))
    if not given or value == "True":
        return flag
    return f"--no-{flag[2:]}" if value == "False" else f"{flag} {value}"


def error_text(error: SniffError) -> str:
    """A library error as the command line says it: settings named as their flags."""
    from sim.errors import SettingError

    return error.worded(flag_of) if isinstance(error, SettingError) else str(error)


def command_line() -> str:
    """The command as typed (quoted for a shell), as a run's manifest records it."""
    import shlex

    return shlex.join(["sniff", *invoked_args()])


def run_control(resume: bool = False, overwrite: bool = False, **how):
    """The ``RunControl`` of a command's flags (``--resume``, ``--overwrite``, ``--threads``,
    ``--scheduler``, ...), with the command line it records; built once, passed down."""
    from sim.run.settings import RunControl, mode_of

    return RunControl(mode=mode_of(resume, overwrite), command=command_line(), **how)


def players_option(ctx, param, value):
    """Every ``--players``: 2, 3 or 4 (``sim.core.checks.check_players``): one line
    otherwise, the library's own, worded with the flag (``main``)."""
    from sim.core.checks import check_players

    return check_players(value)


def players_given(ctx, param, value):
    return None if value is None else players_option(ctx, param, value)


def sprt_options(show: bool = True):
    """``--h0``, ``--h1``, ``--alpha`` and ``--beta``, the sequential test's settings, as
    ``sniff compare`` defines them: one definition for every command that runs the test
    (``compare``; ``tune --accept sprt``), so their names, types and help never drift.

    ``show``: the defaults are the option defaults (compare); False leaves them None and
    only shows them (tune, whose ``--resume`` must tell a given option from an omitted one).
    Their checks are ``sim.stats.sprt.Sprt``'s, where the test is built: one line, exit 2.
    """
    from sim.compare import ALPHA, BETA, H0, H1

    settings = (
        ("--h0", H0, "H0: A's win-rate advantage over B is at most this (0.05 = 5 points)."),
        ("--h1", H1, "H1: A's win-rate advantage is at least this (0.05 is about 17 Elo)."),
        ("--alpha", ALPHA, "Chance of deciding H1 when H0 holds."),
        ("--beta", BETA, "Chance of deciding H0 when H1 holds."),
    )

    def decorate(command):
        for name, default, text in reversed(settings):
            command = click.option(name, type=float, default=default if show else None,
                                   show_default=True if show else str(default),
                                   help=text)(command)
        return command

    return decorate


def scheduler_option(what: str = "the chunks"):
    """``--scheduler``: one definition for every command that plays on a Dask cluster
    (``sim.cluster.dask``), so its name and help never drift."""
    return click.option(
        "--scheduler", metavar="ADDRESS",
        help=f"Play {what} on a Dask cluster: tcp://HOST:PORT (a running scheduler) or "
             "local:N (N local worker processes); same results. Needs pip install "
             "'sniff[dask]'.")


def seed_value(ctx, param, value):
    """Every ``--seed``: an integer 0..2**63-1 (``sim.core.checks.check_seed``), never
    wrapped around (``2**64`` is not seed 0, ``-3`` not ``2**64 - 3``): one line otherwise."""
    if value is None:
        return None
    from sim.core.checks import check_seed

    return check_seed(value)  # the same line as every library function's (flags: main)



def invoked_args() -> list[str]:
    """The arguments this ``sniff`` was run with, as a run records its command: those given
    to ``sim.cli.main.main`` (the root context's ``obj``), else the process's."""
    context = click.get_current_context(silent=True)
    root = context.find_root().obj if context is not None else None
    if isinstance(root, dict) and "argv" in root:
        return list(root["argv"])
    return sys.argv[1:]


class ReaderGone(Exception):
    """Standard output's reader went away (``| head``); click would make it exit 1."""


class SniffGroup(click.Group):
    """``sniff``'s command group: a closed pipe reaches ``main`` (which ends with exit 0,
    quietly) before click's own handler of it (exit 1) sees it."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as error:
            raise ReaderGone() from error

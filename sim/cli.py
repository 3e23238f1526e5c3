"""The ``sniff`` command line: thin wrappers over library functions a notebook can call."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sim.errors import SniffError


def _positive(ctx, param, value):
    if value is not None and value <= 0:
        raise click.BadParameter(f"must be a positive integer, got {value}")
    return value


def _players(ctx, param, value):
    if value not in (2, 3, 4):
        raise click.BadParameter(f"must be 2, 3 or 4, got {value}")
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sniff")
def cli() -> None:
    """sniff: a compiled Monte Carlo simulator for the domino game American Sniff."""


@cli.command()
@click.option("--players", default=4, show_default=True, type=int, callback=_players,
              help="2, 3 or 4 (4 = partnerships 0+2 vs 1+3).")
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed.")
@click.option("--strategies", required=True,
              help="One strategy per seat, or with 4 players one per partnership "
                   "(A,B = seats 0,2 play A and seats 1,3 play B).")
@click.option("--games", default=1, show_default=True, type=int, callback=_positive,
              help="Number of games (game ids 0..K-1).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON Lines here instead of standard output.")
def trace(players: int, seed: int, strategies: str, games: int, output: Path | None) -> None:
    """Write whole games as JSON Lines events (the trace format of RULES.md)."""
    from sim.runner import lineup_of
    from sim.trace import iter_trace, write_trace
    from strategies import parse_lineup_text

    lineup = lineup_of(players, parse_lineup_text(strategies))
    events = iter_trace(lineup, seed, games)
    if output is None:
        write_trace(events, sys.stdout)
        return
    if output.parent and not output.parent.exists():
        raise SniffError(f"output folder does not exist: {output.parent}")
    temporary = output.with_name(output.name + ".partial")
    try:
        lines = write_trace(events, temporary)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    temporary.replace(output)
    click.echo(f"wrote {lines} events of {games} game(s) to {output}", err=True)


@cli.command()
@click.option("--players", default=4, show_default=True, type=int, callback=_players,
              help="2, 3 or 4 (4 = partnerships 0+2 vs 1+3).")
@click.option("--strategies", default="greedy,random", show_default=True,
              help="One strategy per seat, or with 4 players one per partnership.")
@click.option("--games", default=100_000, show_default=True, type=int, callback=_positive)
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed.")
def simulate(players: int, strategies: str, games: int, seed: int) -> None:
    """Play many games (seats rotate game by game) and print who wins."""
    from sim.runner import lineup_of
    from sim.simulate import quick_simulate
    from strategies import parse_lineup_text

    lineup = lineup_of(players, parse_lineup_text(strategies))
    for line in quick_simulate(lineup, games, seed).lines():
        click.echo(line)


def main() -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("sniff: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("sniff: interrupted", err=True)
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else str(error))
        sys.exit(2)
    except click.ClickException as error:
        click.echo(f"sniff: error: {error.format_message()}", err=True)
        sys.exit(error.exit_code)
    except SniffError as error:
        click.echo(f"sniff: error: {error}", err=True)
        sys.exit(2)
    except OSError as error:
        click.echo(f"sniff: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
                   err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()

"""``sniff play``: a person plays one seat against built-in strategies, in the terminal.

The game is a one-game ``sim.kernels.batch.GameBatch`` in which the person's seat is an
outside seat: the compiled engine plays the other seats and stops at each of the person's
decisions, which :meth:`PlayGame.decide` asks for. Turns, drawing, passing, blocking and
settlement are the engine's; this module only shows what happened and asks for a number.

What the person sees comes from the engine's own trace rows: the event buffer is a numpy
array this module also holds, so before each question the rows the engine has written so
far are decoded (``sim.kernels.trace.EventDecoder``) and shown. That is also how moves the engine
makes without asking are reported: a single legal placement is played at once, and a
player with nothing to place draws automatically.

The person sees only public information and their own hand: the other hands appear
as tile counts, and other players' draws as "draws a tile", until settlement, where every
hand is counted in the open.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sim.core import engine
from sim.core import observation as view
from sim.core.checks import check_players, check_seed
from sim.core.layout import (
    EMPTY_LAYOUT,
    decode_ends,
    move_points,
)
from sim.core.seating import team_count, team_name, team_of
from sim.core.tiles import tile_name
from sim.errors import SettingError, SniffError
from sim.files import write_atomic
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import BatchSettings
from sim.kernels.result import ROUND_CAP
from sim.kernels.runner import Lineup
from sim.kernels.trace import EventDecoder, start_event, write_trace
from sim.store.folders import check_output_file, check_writable_folder
from sim.table.human import HUMAN
from sim.table.moves import explain_count, move_text
from sim.table.render import ReplayState, halves, render_event, render_layout
from strategies import StrategySpec

__all__ = ["GAME_ID", "new_seed", "person_lineup", "play_game", "PlayQuit"]

GAME_ID = 0
HUMAN_SPEC = StrategySpec(HUMAN, ())
# Rows a round can write at most: its start, 28 placements, the draws (at most the whole
# boneyard), passes (at most one per seat between two placements) and its end.
ROWS_PER_ROUND = 1 + 28 + 28 + 29 * engine.MAX_PLAYERS + 1


class PlayAborted(SniffError):
    """The person quit, or the input ended, before the game did."""


class PlayQuit(PlayAborted):
    """The person typed q: what they asked for, so ``sniff play`` ends quietly (exit 0)."""


def person_lineup(players: int, seat: int, opponents: list[StrategySpec]) -> Lineup:
    """The person at ``seat``; ``opponents`` fill the other seats in seat order (one spec
    fills them all). With 4 players the other seats include the person's partner.
    ``players``: a checked count (``sim.core.checks.check_players``)."""
    if not 0 <= seat < players:
        raise SettingError(f"{{seat}} must be 0..{players - 1} with {players} players, got {seat}")
    others = [s for s in range(players) if s != seat]
    if len(opponents) == 1:
        opponents = opponents * len(others)
    if len(opponents) != len(others):
        raise SettingError(
            f"{{opponents}} needs 1 strategy name or {len(others)} (one per other seat, in the "
            f"order of seats {', '.join(map(str, others))}), got {len(opponents)}"
        )
    python = [spec.label for spec in opponents if spec.strategy.python]
    if python:
        raise SettingError(f"{{opponents}} {python[0]} is a Python player: sniff play takes "
                           "compiled strategies only (simulate, compare, tournament and "
                           "openings take Python players)")
    seats = list(opponents)
    seats.insert(seat, HUMAN_SPEC)
    return Lineup(players, tuple(seats))


class PlayGame:
    """One game with a person at ``seat``; :meth:`run` plays it and returns its events."""

    def __init__(
        self,
        lineup: Lineup,
        seat: int,
        seed: int,
        read_line: Callable[[], str],
        write: Callable[[str], None],
        echo_input: bool = False,
        ascii: bool = False,
        hint_budget: int | None = None,
    ) -> None:
        self.lineup, self.seat, self.seed = lineup, seat, seed
        self.hint_budget = hint_budget  # None: no hints offered
        self.players = lineup.players
        self.read_line, self.write = read_line, write
        self.echo_input, self.ascii = echo_input, ascii
        self.rows = np.zeros((ROUND_CAP * ROWS_PER_ROUND + 2, engine.EVENT_WIDTH), np.int64)
        self.decoder = EventDecoder(self.players)
        self.events: list[dict] = [start_event(lineup, seed, GAME_ID, ROUND_CAP)]
        self.rows_read = 0
        self.state = ReplayState()
        self.chosen: int | None = None  # the move the person chose, until it is shown
        self.drew = False  # the person drew since their last placement
        self.result = ""  # the one-line outcome, once the game is over

    # ------------------------------------------------------------ running the game

    def run(self) -> list[dict]:
        seats = [None if spec.strategy is HUMAN else spec for spec in self.lineup.seats]
        self.show(self.events[0], None)
        batch = GameBatch(self.players, seats, 1, self.seed,
                          BatchSettings(first_game=GAME_ID, round_cap=ROUND_CAP), events=self.rows)
        while not batch.done:
            decision = batch.pending()
            observation = decision.observations[0]
            options = decision.moves[0, : decision.n_moves[0]].tolist()
            index = self.decide(int(observation[view.LAYOUT]), bool(observation[view.FORCED]),
                                options)
            batch.advance(np.array([options[index]], dtype=np.int64))
        self.catch_up()
        if self.events[-1]["event"] != "game_end":
            raise SniffError("the game's event buffer filled up before the game ended")
        return self.events

    def catch_up(self) -> None:
        """Decode and show the rows the engine has written since the last look."""
        kinds = self.rows[:, engine.EVENT_KIND]
        while self.rows_read < len(kinds) and kinds[self.rows_read] != 0:
            row = self.rows[self.rows_read]
            self.rows_read += 1
            event = self.decoder.decode(row)
            self.events.append(event)
            self.show(event, row)

    def decide(self, layout: int, forced: bool, options: list[int]) -> int:
        """The person's turn (the game waits for it): show, ask, return an index."""
        self.catch_up()
        self.show_turn(layout, forced, options)
        index = self.ask(len(options), options)
        self.chosen = options[index]
        return index

    def ask(self, n_options: int, options: list[int] | None = None) -> int:
        """Read a placement number until a valid one comes; raise PlayAborted on EOF or q.

        With hints on, ``h`` prints the analysis of the position (``show_hint``) and asks
        again."""
        hints = self.hint_budget is not None and options is not None
        while True:
            offer = "h for a hint, " if hints else ""
            self.write(f"your move (1-{n_options}, {offer}q to quit): ")
            line = self.read_line()
            if line == "":
                self.write("\n")
                raise PlayAborted("play aborted: input ended before the game did")
            answer = line.strip()
            if self.echo_input:
                self.write(answer + "\n")
            if answer.lower() in ("q", "quit", "exit"):
                raise PlayQuit("play aborted: you quit the game")
            if hints and options is not None and answer.lower() in ("h", "hint"):
                self.show_hint(options)
                continue
            if not answer:
                self.write(f"  please type a placement number from 1 to {n_options}\n")
                continue
            try:
                number = int(answer)
            except ValueError:
                self.write(
                    f"  {answer!r} is not a placement number: type a number from 1 to "
                    f"{n_options}\n"
                )
                continue
            if not 1 <= number <= n_options:
                self.write(
                    f"  there is no placement {number}: type a number from 1 to {n_options}\n"
                )
                continue
            return number - 1

    def show_hint(self, options: list[int]) -> None:
        """The analysis of ``sniff hint`` for the person's seat, from its public view only:
        the position is rebuilt from the events shown so far (``sim.hint.position``), where the
        other hands are sizes and lacks, never tiles."""
        from sim.hint.estimate import analyse, hint_text
        from sim.hint.tracker import PublicTracker

        tracker = PublicTracker(self.players, self.target)
        for event in self.events[1:]:
            tracker.apply(event)
        try:
            position = tracker.position(self.seat).check()
        except SniffError as error:  # never expected: the engine's own game is legal
            self.write(f"  (no hint: {error})\n")
            return
        if position.legal_moves() != options:
            self.write("  (no hint: the position rebuilt from the events does not offer "
                       "these placements)\n")
            return
        self.write(f"  thinking ({self.hint_budget:,} play-outs per move)...\n")
        assert self.hint_budget is not None  # hints are offered with a budget only
        hint = analyse(position, self.hint_budget, "greedy", self.seed)
        numbers = {move: number for number, move in enumerate(options, start=1)}
        text = "hint: " + hint_text(hint, numbers).replace("\n", "\n  ").rstrip() + "\n"
        self.write(text.translate(_ASCII) if self.ascii else text)

    # ------------------------------------------------------------ what the person sees

    def you(self, seat: int) -> bool:
        return seat == self.seat

    def side(self, seat: int) -> str:
        """Who a placement by ``seat`` scores for, as the person reads it."""
        if self.players != 4:
            return "you" if self.you(seat) else f"seat {seat}"
        team = team_of(seat, 4)
        mine = " (your side)" if team == team_of(self.seat, 4) else ""
        return team_name(team, 4) + mine

    def show(self, event: dict, row: np.ndarray | None) -> None:
        self.state.apply(event)
        kind = event["event"]
        text = getattr(self, f"_show_{kind}")(event, row)
        if self.ascii:
            text = text.translate(_ASCII)
        self.write(text + "\n")

    def _show_game_start(self, event: dict, row) -> str:
        lines = [render_event(event, self.state, ascii=self.ascii)]
        you = f"You play seat {self.seat}"
        if self.players == 4:
            you += f", partnered with seat {(self.seat + 2) % 4}"
        lines.append(
            f"{you}. Target {event['target']} points. Seats play in order "
            f"{' → '.join(str(s) for s in range(self.players))} → 0 ..."
        )
        return "\n".join(lines)

    def _show_round_start(self, event: dict, row) -> str:
        state = self.state
        lines = [
            f"\n── round {state.round} · seat {event['leader']} leads"
            f"{' (you)' if self.you(event['leader']) else ''} · boneyard {state.boneyard} tiles ──",
            f"  your hand: {self._hand()}",
            "  " + self._sizes(),
            "  " + self._scores(),
        ]
        return "\n".join(lines)

    def _show_play(self, event: dict, row) -> str:
        seat = event["seat"]
        lines = render_event(event, self.state, ascii=self.ascii).split("\n")
        explained = explain_count(
            int(row[engine.EVENT_LAYOUT]), event["count"], event["points"], self.side(seat)
        )
        lines[1] = f"  ends {self._open_ends(int(row[engine.EVENT_LAYOUT]))} · {explained}"
        if self.you(seat):
            rest = lines[0][len(f"seat {seat} ") :]
            lines[0] = "you " + rest.replace("plays ", "play ", 1).replace("opens ", "open ", 1)
            placed = f"{event['tile']} on {event['end']}" if event["end"] else event["tile"]
            if self.chosen is None or self.chosen >> 2 != int(row[engine.EVENT_TILE]):
                if self.drew:
                    note = (f"the tile you drew fits only {event['end']}: placed there at "
                            "once, as the rules require")
                else:
                    note = f"you had one legal placement, {placed}: played it for you"
                lines.insert(1, f"  ({note})")
            self.chosen = None
            self.drew = False
        return "\n".join(lines)

    def _show_draw(self, event: dict, row) -> str:
        seat = event["seat"]
        left = f"boneyard {self.state.boneyard} left"
        if not self.you(seat):
            return f"seat {seat} draws a tile · {left}"
        first = not self.drew
        self.drew = True
        text = f"you draw {event['tile']} · {left}"
        if first:
            ends = self._open_values()
            text = (f"nothing in your hand fits the open ends ({ends}): you draw until a tile "
                    "fits or the boneyard is empty\n" + text)
        return text

    def _show_pass(self, event: dict, row) -> str:
        seat = event["seat"]
        if self.you(seat):
            self.drew = False
            return "you pass: nothing in your hand fits and the boneyard is empty"
        return f"seat {seat} passes: nothing fits and the boneyard is empty"

    def _show_round_end(self, event: dict, row) -> str:
        text = render_event(event, self.state, ascii=self.ascii)
        lines = text.split("\n")
        lines.insert(
            1,
            "  settlement: each hand's pips, rounded to the nearest 5 on their own (remainder "
            "1-2 down, 3-4 up),\n  are taken off that hand's side; nobody gains points",
        )
        return "\n".join(lines)

    def _show_game_end(self, event: dict, row) -> str:
        lines = [render_event(event, self.state, ascii=self.ascii)]
        winner = event["winner"]
        scores = ", ".join(
            f"{team_name(team, self.players)} {score}" for team, score in enumerate(event["scores"])
        )
        if winner is None:
            self.result = f"result: no winner after {event['rounds']} rounds ({scores})"
        else:
            mine = team_of(self.seat, self.players)
            if winner == mine:
                outcome = "you win" if self.players != 4 else "you and your partner win"
            else:
                outcome = f"you lose: {team_name(winner, self.players)} won"
            lines.insert(
                1, f"  {team_name(winner, self.players)} reached {self.target} with that "
                "placement: the game ends at once, the round is not settled",
            )
            self.result = f"result: {outcome} ({scores})"
        return "\n".join(lines)

    @property
    def target(self) -> int:
        return int(self.events[0]["target"])

    def show_turn(self, layout: int, forced: bool, options: list[int]) -> None:
        state = self.state
        lines = [f"\n── your turn (seat {self.seat}) · round {state.round} ──"]
        if layout == EMPTY_LAYOUT:
            lines.append("  the table is empty: you lead, any tile may open")
        else:
            picture = render_layout(state, ascii=self.ascii)
            lines += ["    " + line if line else line for line in picture.split("\n")]
            lines.append(f"  open ends {self._open_ends(layout)}")
        lines += [f"  your hand: {self._hand()}", "  " + self._sizes()]
        lines.append("  " + self._scores())
        if forced:
            tile = options[0] >> 2
            lines.append(f"  the tile you drew, {tile_name(tile)}, must be placed now: "
                         "choose its end")
        else:
            lines.append("  legal placements:")
        for number, move in enumerate(options, start=1):
            points = int(move_points(layout, move))
            gain = f"scores {points}" if points else "no points"
            lines.append(f"    {number:>2}) {move_text(layout, move):<16} {gain}")
        text = "\n".join(lines)
        self.write((text.translate(_ASCII) if self.ascii else text) + "\n")

    def _hand(self) -> str:
        return " ".join(sorted(self.state.hands[self.seat], key=lambda t: sorted(halves(t))))

    def _open_ends(self, layout: int) -> str:
        ends = decode_ends(layout)
        return " ".join(f"{arm}={value}" for arm, value in ends.items() if value is not None)

    def _open_values(self) -> str:
        values = sorted({v for v in self.state.ends.values() if v is not None})
        return ", ".join(map(str, values))

    def _sizes(self) -> str:
        parts = [
            f"seat {seat}: {len(hand)} tile{'s' * (len(hand) != 1)}"
            for seat, hand in enumerate(self.state.hands)
            if not self.you(seat)
        ]
        return "hands  " + " · ".join(parts) + f" · boneyard {self.state.boneyard}"

    def _scores(self) -> str:
        from sim.table.tally import tally_inline

        parts = []
        mine = team_of(self.seat, self.players)
        for team, score in enumerate(self.state.scores or [0] * team_count(self.players)):
            name = team_name(team, self.players) + (" (you)" if team == mine else "")
            parts.append(f"{name}: {tally_inline(score, ascii=self.ascii)}")
        return "scores  " + "   ".join(parts)


_ASCII = str.maketrans({"→": "->", "×": "x", "─": "-", "·": ".", "—": "-", "═": "="})


def new_seed() -> int:
    """A fresh seed for a game whose seed was not given (printed, so it can be replayed)."""
    return secrets.randbelow(2**31)


def default_trace_path(seed: int, folder: Path = Path("results")) -> Path:
    """``results/play-seed<seed>.jsonl``, numbered ``-2``, ``-3``... rather than overwritten."""
    path = folder / f"play-seed{seed}.jsonl"
    number = 1
    while path.exists():
        number += 1
        path = folder / f"play-seed{seed}-{number}.jsonl"
    return path


def play_game(
    players: int,
    seat: int,
    opponents: list[StrategySpec],
    seed: int | None,
    trace_path: Path | None,
    read_line: Callable[[], str],
    write: Callable[[str], None],
    echo_input: bool = False,
    ascii: bool = False,
    hint_budget: int | None = None,
) -> Path:
    """Play one game with the person at ``seat``, save its trace; return the trace's path.

    Raises :class:`PlayAborted` when the input ends or the person quits (nothing is saved:
    a trace without its ``game_end`` is not a game).
    """
    lineup = person_lineup(check_players(players), seat, opponents)
    seed = new_seed() if seed is None else check_seed(seed)
    if trace_path is None:
        trace_path = default_trace_path(seed)
        trace_path.parent.mkdir(parents=True, exist_ok=True)
    elif not trace_path.parent.is_dir():
        raise SniffError(f"trace folder does not exist: {trace_path.parent}")
    if trace_path.is_dir() and not trace_path.is_symlink():
        raise SettingError(f"{{trace_path}} {trace_path} is a folder; give a file name")
    check_output_file(trace_path, "{trace_path}", "trace")  # the output check every command makes
    # A real write, before the game: a folder that refuses the trace would lose the game.
    check_writable_folder(trace_path.parent)
    write(f"sniff play: seed {seed} (--seed {seed} with the same options deals this game again)\n")
    game = PlayGame(lineup, seat, seed, read_line, write, echo_input, ascii, hint_budget)
    events = game.run()
    write_atomic(trace_path, lambda temporary: write_trace(iter(events), temporary))
    write(f"trace saved to {trace_path} (watch it again: sniff replay {trace_path})\n")
    write(game.result + "\n")
    return trace_path

"""A run's summary: wins, points per round and paired differences, with their text.

Computed from the tables as they are written (or read back, for chunks a resumed run
already had), streaming, so memory stays bounded whatever the number of games;
``sim.store.io.summarise_folder`` recomputes it from a run folder.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from sim.core.seating import side_of_team, team_count
from sim.display.formatting import shown_name
from sim.stats.intervals import Z95, Moments, wilson_interval
from sim.store.arrow import to_numpy

__all__ = ["stop_text", "Summary", "summary_columns"]


def side_labels(players: int, labels: list[str]) -> tuple[list[str], list[str]]:
    """Long and short names of the lineup sides (partnerships with 4 players)."""
    if players == 4:
        short = [labels[k] if labels[k] == labels[k + 2] else f"{labels[k]}+{labels[k + 2]}"
                 for k in range(2)]
        long = [f"seats {k}+{k + 2}: {short[k]}" for k in range(2)]
        if short[0] == short[1]:
            short = [f"{short[k]} (seats {k}+{k + 2})" for k in range(2)]
        return long, short
    long = [f"seat {k}: {label}" for k, label in enumerate(labels)]
    if len(set(labels)) < len(labels):
        return long, [f"{label} (seat {k})" for k, label in enumerate(labels)]
    return long, list(labels)


class Summary:
    """Wins, points per round and (duplicate deals) the paired win-rate differences.

    Fed chunk by chunk, in game id order, with columns of the ``games`` and ``rounds``
    tables; keeps only running counts and moments.
    """

    def __init__(self, players: int, labels: list[str], group: int, round_cap: int) -> None:
        self.players = players
        self.labels, self.short = side_labels(players, labels)
        self.n_sides = team_count(players)
        self.group = group
        self.round_cap = round_cap
        self.games = 0
        self.unfinished = 0
        self.wins = np.zeros(self.n_sides, dtype=np.int64)
        self.points = [Moments() for _ in range(self.n_sides)]
        self.pairs = [(i, j) for i in range(self.n_sides) for j in range(i + 1, self.n_sides)]
        self.by_game = [Moments() for _ in self.pairs]
        self.by_deal = [Moments(scale=1 / group) for _ in self.pairs]  # fed deal sums
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self.timing: dict | None = None  # played, seconds, threads of the last session
        self.folder: Path | None = None
        self.tables: tuple[str, ...] = ("games", "rounds")  # the run folder's tables
        self.stopped: dict | None = None  # --precision or compare: why and where it stopped

    def add_tables(self, games, rounds=None) -> None:
        """Add a chunk given as pyarrow tables (or anything with the same columns).

        ``rounds`` None: a ``--no-rounds`` run, whose games table carries each game's
        point sums and sums of squares instead (``summary_columns``).
        """
        teams = team_count(self.players)
        rounds_per_game = to_numpy(games["rounds"])
        if rounds is None:
            sums = np.column_stack([to_numpy(games[f"team{t}_points"]) for t in range(teams)])
            squares = np.column_stack(
                [to_numpy(games[f"team{t}_points_sq"]) for t in range(teams)])
        else:
            sums, squares = game_point_sums(
                [to_numpy(rounds[f"team{t}_points"]) for t in range(teams)], rounds_per_game)
        self.add(to_numpy(games["winner_side"]), to_numpy(games["deal_id"]),
                 to_numpy(games["rotation"]), rounds_per_game, sums, squares)

    def add(self, winner_side, deal_ids, rotations, rounds_per_game, point_sums,
            point_squares) -> None:
        """Add games: ``point_sums[g, t]`` (and of squares) over game g's rounds of the
        points team t scored (``game_point_sums``)."""
        self.games += winner_side.size
        self.unfinished += int((winner_side < 0).sum())
        self.wins += np.bincount(winner_side[winner_side >= 0], minlength=self.n_sides)
        # Points of each side in each round: team t of a game with rotation r is side
        # (t + r) % players (folded onto the two partnerships with 4 players), worked out
        # once per game from the game's sums. Float sums of integers stay exact far beyond
        # a chunk's (|points| < 2**12, rows < 2**28: squares sum below 2**53).
        for team in range(point_sums.shape[1]):
            side = side_of_team(team, rotations, self.players)
            counts = np.bincount(side, weights=rounds_per_game, minlength=self.n_sides)
            sums = np.bincount(side, weights=point_sums[:, team], minlength=self.n_sides)
            squares = np.bincount(side, weights=point_squares[:, team], minlength=self.n_sides)
            for k in range(self.n_sides):
                self.points[k].add_sums(int(counts[k]), int(sums[k]), int(squares[k]))
        if not self.pairs or self.group == 1:
            return
        x = np.column_stack(
            [(winner_side == i).astype(np.int64) - (winner_side == j) for i, j in self.pairs]
        )
        for index in range(len(self.pairs)):
            self.by_game[index].add(x[:, index])
        # Per deal: the difference summed over the deal's games (``by_deal`` scales the sums
        # to means). A deal's games are consecutive; one cut by a chunk boundary waits for
        # the rest in ``_pending``.
        if self._pending is not None:
            deal_ids = np.concatenate([self._pending[0], deal_ids])
            x = np.concatenate([self._pending[1], x])
            self._pending = None
        if deal_ids.size == 0:
            return
        starts = np.flatnonzero(np.r_[True, deal_ids[1:] != deal_ids[:-1]])
        sizes = np.diff(np.r_[starts, deal_ids.size])
        if sizes[-1] < self.group:
            cut = starts[-1]
            self._pending = (deal_ids[cut:], x[cut:])
            deal_ids, x, starts, sizes = deal_ids[:cut], x[:cut], starts[:-1], sizes[:-1]
        if starts.size:
            sums = np.add.reduceat(x, starts, axis=0)
            for index in range(len(self.pairs)):
                self.by_deal[index].add(sums[:, index])

    def to_dict(self) -> dict:
        sides = []
        for k in range(self.n_sides):
            low, high = wilson_interval(int(self.wins[k]), self.games)
            mean, p_low, p_high = self.points[k].interval()
            sides.append({
                "side": self.labels[k], "wins": int(self.wins[k]),
                "win_rate": self.wins[k] / self.games if self.games else math.nan,
                "win_rate_ci95": [low, high],
                "points_per_round": mean, "points_per_round_ci95": [p_low, p_high],
            })
        out = {"games": self.games, "unfinished": self.unfinished, "sides": sides}
        if self.stopped is not None:
            out["stopped"] = dict(self.stopped)
        if self.group > 1:
            out["duplicate"] = [self._pair(index) for index in range(len(self.pairs))]
        return out

    def _pair(self, index: int) -> dict:
        i, j = self.pairs[index]
        paired = self.by_deal[index].half_width(Z95)
        independent = self.by_game[index].half_width(Z95)
        ratio = paired / independent if independent > 0 else math.nan
        return {
            "sides": [self.short[i], self.short[j]],
            "difference": self.by_game[index].mean,
            "deals": self.by_deal[index].n,
            "paired_half_width": paired,
            "independent_half_width": independent,
            "narrower_by": 1 - ratio,
            "equivalent_games_factor": 1 / ratio**2 if ratio > 0 else math.inf,
        }

    def lines(self) -> list[str]:
        teams = " in 2 partnerships" if self.players == 4 else ""
        target = {2: 250, 3: 200, 4: 200}.get(self.players)  # docs/rules.md#the-target
        out = [f"{self.games:,} games, {self.players} players{teams}, target {target} points: "
               + " vs ".join(self.short)]
        width = max(len(label) for label in self.labels)
        for side in self.to_dict()["sides"]:
            low, high = side["win_rate_ci95"]
            p_low, p_high = side["points_per_round_ci95"]
            out.append(
                f"  {side['side']:<{width}}  wins {side['win_rate']:7.2%} "
                f"(95% CI {low:.2%}-{high:.2%})   points/round {side['points_per_round']:6.2f} "
                f"(95% CI {p_low:.2f}-{p_high:.2f})"
            )
        out.append("  points/round: placement points, before settlement penalties")
        if self.n_sides >= 2 and self.games >= 2:
            from sim.stats.planning import detectable_line

            decided = (self.games - self.unfinished) / self.games * 2 / self.n_sides
            out.append("  " + detectable_line(self.games, max(decided, 1e-9)))
        if self.unfinished:
            out.append(f"  undecided at the {self.round_cap}-round cap: {self.unfinished:,} games")
        if self.group > 1:
            deals = self.by_deal[0].n if self.pairs else 0
            out.append(f"  duplicate deals: {deals:,} deals, each played {self.group} times; "
                       "win-rate difference ± 95% half-width, paired by deal vs independent deals:")
            for index in range(len(self.pairs)):
                pair = self._pair(index)
                a, b = pair["sides"]
                narrower = pair["narrower_by"]
                change = (f"{narrower:.0%} narrower" if narrower >= 0
                          else f"{-narrower:.0%} wider")
                factor = pair["equivalent_games_factor"]
                if not math.isfinite(narrower) or not math.isfinite(factor):
                    # self-play: every deal's games cancel exactly, nothing left to compare
                    out.append(f"    {a} - {b}: {pair['difference']:+.2%}: the paired "
                               "differences are all 0 (the same strategy both ways), so no "
                               "precision gain can be stated")
                    continue
                out.append(
                    f"    {a} - {b}: {pair['difference']:+.2%} ± "
                    f"{pair['paired_half_width']:.2%} paired, ± "
                    f"{pair['independent_half_width']:.2%} independent: {change} "
                    f"(as precise as {factor:.2f}x the games)"
                )
        if self.stopped is not None:
            out.append(f"  {stop_text(self.stopped)}")
        if self.timing:
            played, seconds = self.timing["played"], self.timing["seconds"]
            rate = played / seconds if seconds > 0 else math.nan
            what = (f"{played:,} games" if played == self.games
                    else f"{played:,} of the games (the rest were already there)")
            workers = self.timing.get("workers")
            if played == 0:  # a resume of a complete run: no rate to give (not "nan")
                out.append("  played no game: every game was already there")
            else:
                out.append(f"  played {what} in {seconds:.1f} s: {rate:,.0f} games/s "
                           f"on {self.timing['threads']} thread(s)"
                           + (f" of {workers} Dask worker(s)" if workers else ""))
        if self.folder is not None:
            tables = "".join(f"{name}/, " for name in self.tables)
            out.append(f"  data: {shown_name(self.folder)}/ ({tables}manifest.json)")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def game_point_sums(team_points: list, rounds_per_game: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per game, the sum and the sum of squares of each team's round points.

    ``team_points[t]`` holds team t's points of every round, a game's rounds consecutive
    and ``rounds_per_game`` of them. Returns two ``(games, teams)`` int64 arrays: what
    the summary needs of the rounds, and what a ``--no-rounds`` games table keeps.
    """
    ends = np.cumsum(rounds_per_game, dtype=np.int64)
    sums = np.empty((rounds_per_game.size, len(team_points)), dtype=np.int64)
    squares = np.empty_like(sums)
    for team, points in enumerate(team_points):
        points = np.asarray(points, dtype=np.int64)
        for out, values in ((sums, points), (squares, points * points)):
            running = np.zeros(values.size + 1, dtype=np.int64)
            np.cumsum(values, out=running[1:])
            taken = running[ends]
            out[:, team] = taken - np.r_[0, taken[:-1]] if taken.size else taken
    return sums, squares


def stop_text(stop: dict) -> str:
    """Why a run stopped early: ``--precision`` reached (or its cap), or a sequential test
    (``sniff compare``) decided (or its cap)."""
    if "decision" in stop:
        why = ("the test decided " + stop["decision"] if stop["reason"] == "sprt"
               else "the --max-games cap, undecided")
        return (f"sequential test: stopped at {stop['games']:,} games ({why}); LLR "
                f"{stop['llr']:+.2f} in [{stop['lower']:+.2f}, {stop['upper']:+.2f}]")
    why = ("precise enough" if stop["reason"] == "precision"
           else f"the --max-games cap, not yet +-{stop['precision']:.2%}")
    return (f"--precision {stop['precision']:g}: stopped at {stop['games']:,} games ({why}); "
            f"widest win-rate half-width {stop['half_width']:.2%}")


def summary_columns(players: int, rounds: bool = True) -> dict[str, list[str]]:
    """The columns the summary reads: of both tables, or of the games table alone when
    the run kept no rounds table (``--no-rounds``)."""
    teams = team_count(players)
    games = ["winner_side", "deal_id", "rotation", "rounds"]
    if not rounds:
        return {"games": games + [f"team{t}_points{kind}" for t in range(teams)
                                  for kind in ("", "_sq")]}
    return {"games": games, "rounds": [f"team{t}_points" for t in range(teams)]}

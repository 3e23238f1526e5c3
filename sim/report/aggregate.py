"""Every count a report needs of one run, added up chunk by chunk in one pass over its parts.

Why: the report used to hold a run's games and rounds in pandas (16 GB for 10 million
games). Each of its figures is a sum over games or rounds — wins by side and seat, counts of
points, penalties, margins and lengths, score-state cells, running win counts at the
convergence chart's marks — so :class:`RunFigures` adds them up a chunk at a time
(``sim.store.scan``: the checked parts, page checksums verified) and ``sim.report.tables``,
``sim.report.effects`` and ``sim.report.states`` turn the counts into the same tables the
in-memory arrays gave. The counts are exact integers (``sim.stats.tally``), so the figures do
not depend on the order or the threads the parts were read with. A game's rounds are in its
chunk's rounds part, so per-game quantities (score states) are complete within a chunk; a
duplicate deal cut by a chunk boundary waits for its other games (``_pending``).
"""

from __future__ import annotations

import os
from itertools import combinations

import numpy as np
import pyarrow as pa

from sim.core.engine import END_NAMES
from sim.core.seating import side_of_team, team_count, team_of, team_of_side
from sim.errors import SniffError
from sim.stats.score_states import DEFAULT_BIN
from sim.stats.tally import Tally
from sim.store.arrow import to_numpy

__all__ = ["RunFigures"]

SAMPLE_COLUMNS = ("game_id", "deal_id", "rotation", "winner_side")


def _labels(column) -> np.ndarray:
    """A dictionary (or string) column as an array of Python strings."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(array.type):
        names = np.array(array.dictionary.to_pylist(), dtype=object)
        return names[to_numpy(array.indices)]
    return np.array(array.to_pylist(), dtype=object)


def _by_side(values: np.ndarray, rotation: np.ndarray, players: int) -> np.ndarray:
    """``(rows, teams)`` team columns reordered by side (the rotation undone)."""
    teams = values.shape[1]
    out = np.empty_like(values)
    if teams == 2:
        flip = (rotation % 2).astype(bool)  # side 0 played team 0 unless the rotation is odd
        out[:, 0] = np.where(flip, values[:, 1], values[:, 0])
        out[:, 1] = np.where(flip, values[:, 0], values[:, 1])
        return out
    columns = [values[:, t] for t in range(teams)]
    for k in range(teams):
        out[:, k] = np.choose(team_of_side(k, rotation, players), columns)
    return out


def _within(columns: dict, name: str, low: int, high: int, label: str | None = None) -> None:
    """Refuse a column holding a value outside ``low..high`` (never trusted as an index)."""
    values = columns[name]
    if values.size and (int(values.min()) < low or int(values.max()) > high):
        raise SniffError(f"its {label or name} column holds values outside {low}..{high}: "
                         "not a sniff run's table (or a damaged one: `sniff verify`)")


def _margins(scores: np.ndarray) -> np.ndarray:
    """Per side: own score minus the best other side's."""
    out = np.empty_like(scores)
    for k in range(scores.shape[1]):
        out[:, k] = scores[:, k] - np.delete(scores, k, axis=1).max(axis=1)
    return out


def _same(columns: list) -> tuple:
    """Columns as one tuple of one integer type (int64 when their types differ): the
    compiled pass indexes the tuple by team or seat."""
    kinds = {c.dtype for c in columns}
    return tuple(columns) if len(kinds) == 1 else tuple(c.astype(np.int64) for c in columns)


def _places(game_ids: np.ndarray, row_games: np.ndarray) -> np.ndarray:
    """Each row's game as its place among the chunk's (sorted) ``game_ids``."""
    where = np.searchsorted(game_ids, row_games)
    lacking = np.minimum(where, game_ids.size - 1)
    if np.any(game_ids[lacking] != row_games):
        raise SniffError("its rounds table has games its games table lacks")
    return where.astype(np.int64)


def _sorted(rows, order: np.ndarray):
    """``rows`` (``sim.report.passes.RoundRows``) with every column in ``order``."""
    return type(rows)(*(tuple(c[order] for c in field) if isinstance(field, tuple)
                        else field[order] for field in rows))


def _add_lonely(counts, winner: np.ndarray) -> None:
    """A game without round rows still started round 1 at 0-0: its cell, once per side."""
    lonely = np.flatnonzero(~counts.has_rows)
    if not lonely.size:
        return
    home = -counts.bin_low
    for side in range(counts.cell_games.shape[0]):
        counts.cell_games[side, home, home] += lonely.size
        counts.cell_wins[side, home, home] += int((winner[lonely] == side).sum())


class RunFigures:
    """The counts behind every figure of one run's report (see the module doc).

    ``marks``: the game counts n (1-based) at which the running wins of each side are
    kept (the convergence charts); ``sample``: how many of the first games' rows to keep
    (the placement sample traces them again).
    """

    def __init__(self, players: int, group: int, marks=(), sample: int = 0,
                 bin_size: int = DEFAULT_BIN) -> None:
        self.players = players
        self.sides = team_count(players)
        self.group = group
        self.bin_size = bin_size
        k = self.sides
        self.games = 0
        self.rounds = 0
        self.wins = np.zeros(k, dtype=np.int64)
        self.unfinished = 0
        self.seat_games = np.zeros((k, k), dtype=np.int64)  # [side, position]
        self.seat_wins = np.zeros((k, k), dtype=np.int64)
        orders = 2 if players == 4 else players
        self.lead_games = np.zeros((k, orders), dtype=np.int64)  # [side, turn in round 1]
        self.lead_wins = np.zeros((k, orders), dtype=np.int64)
        self.pairs = list(combinations(range(k), 2))
        self.by_deal = {pair: Tally(1 / group) for pair in self.pairs}  # deal sums
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self.leader_values = Tally(1 / (k - 1))  # [leader won] - others' mean, x (k - 1)
        self.leader_won = 0
        self.others_won = 0
        self.leader_counts = np.zeros((k, 4), dtype=np.int64)
        self.seat_values = [Tally(1 / k) for _ in range(k)]  # [won] - mean, x k
        self.team_wins = np.zeros(k, dtype=np.int64)
        self.margins = [Tally() for _ in range(k)]  # every game
        self.winner_margins = [Tally() for _ in range(k)]  # games side k won
        self.length = Tally()
        self.points = [Tally() for _ in range(k)]
        self.penalties = [Tally() for _ in range(k)]  # settled rounds
        self.endings = np.zeros(len(END_NAMES), dtype=np.int64)
        self.domino = np.zeros(k, dtype=np.int64)
        self.cells: dict[tuple[int, int, int], list[int]] = {}  # (side, own, opp): games, wins
        self.marks = np.asarray(sorted(set(int(m) for m in marks)), dtype=np.int64)
        self.running = np.zeros((self.marks.size, k), dtype=np.int64)
        self._so_far = np.zeros(k, dtype=np.int64)
        self.sample_size = sample
        self.sample: dict[str, list[np.ndarray]] = {}
        self.first_labels: list[str] | None = None
        # side_of[rotation, team]: the side that played the team (sim.core.seating, tabled)
        self.side_of = np.array([[side_of_team(t, r, players) for t in range(k)]
                                 for r in range(players)], dtype=np.int64)
        self.seat_team = np.array([team_of(s, players) for s in range(players)],
                                  dtype=np.int64)

    # --- adding a chunk

    def add(self, games: pa.Table, rounds: pa.Table) -> None:
        """Add one chunk: its games and the rounds of those games."""
        self.consume(self.prepare(games, rounds))

    def prepare(self, games: pa.Table, rounds: pa.Table) -> dict | None:
        """The chunk's arrays and its compiled round pass, without touching the counts: a
        reader thread prepares the next chunk while :meth:`consume` adds this one."""
        players, k = self.players, self.sides
        g = {name: to_numpy(games[name]) for name in games.column_names
             if not name.endswith("_strategy")}
        if g["game_id"].size == 0:
            return None
        order = np.argsort(g["game_id"], kind="stable")
        if np.any(order != np.arange(order.size)):
            g = {name: values[order] for name, values in g.items()}
        if np.any(g["players"] != players):
            raise SniffError("the games table mixes player counts; pass one run at a time")
        # every value used as an index, checked first (the compiled pass trusts them)
        _within(g, "rotation", 0, players - 1)
        _within(g, "first_leader", 0, players - 1)
        _within(g, "winner_side", -1, k - 1)
        _within(g, "winner_team", -1, k - 1)
        rotation = int(g["rotation"][0])
        labels = [str(_labels(games[f"seat{int(team_of_side(s, rotation, players))}"
                                    "_strategy"].slice(int(order[0]), 1))[0])
                  for s in range(k)]
        return {"games": g, "labels": labels, **self._prepare_rounds(g, rounds)}

    def consume(self, prepared: dict | None) -> None:
        """Add a chunk :meth:`prepare` made ready (chunks in game id order)."""
        if prepared is None:
            return
        if self.first_labels is None:
            self.first_labels = prepared["labels"]
        self._add_games(prepared["games"])
        k = self.sides
        self.rounds += prepared["rounds"]
        for s in range(k):
            self.points[s].add_counts(prepared["point_low"], prepared["points"][s])
            self.penalties[s].add_counts(prepared["penalty_low"], prepared["penalties"][s])
        self.endings += prepared["endings"]
        self.domino += prepared["domino"]
        low, size = prepared["bin_low"], self.bin_size
        games, wins = prepared["cell_games"], prepared["cell_wins"]
        for side, own, opp in zip(*np.nonzero(games)):
            entry = self.cells.setdefault(
                (int(side), (int(own) + low) * size, (int(opp) + low) * size), [0, 0])
            entry[0] += int(games[side, own, opp])
            entry[1] += int(wins[side, own, opp])

    def _add_games(self, g: dict) -> None:
        players, k = self.players, self.sides
        n = g["game_id"].size
        winner = g["winner_side"]
        rotation = g["rotation"]
        self._keep_sample(g)
        self._add_running(winner)
        self.games += n
        self.unfinished += int((winner < 0).sum())
        self.wins += np.bincount(winner[winner >= 0], minlength=k)[:k]
        leader = g["first_leader"] % 2 if players == 4 else g["first_leader"]
        for side in range(k):
            team = team_of_side(side, rotation, players)
            won = winner == side
            self.seat_games[side] += np.bincount(team, minlength=k)[:k]
            self.seat_wins[side] += np.bincount(team[won], minlength=k)[:k]
            turn = ((g["first_leader"] % 2 != team).astype(np.int64) if players == 4
                    else (team - g["first_leader"]) % players)
            self.lead_games[side] += np.bincount(turn, minlength=self.lead_games.shape[1])
            self.lead_wins[side] += np.bincount(turn[won], minlength=self.lead_games.shape[1])
            leads = team == leader
            self.leader_counts[side] += [int(won[leads].sum()), int(leads.sum()),
                                         int(won[~leads].sum()), int((~leads).sum())]
        winner_team = g["winner_team"]
        won = (winner_team[:, None] == np.arange(k)[None, :]).astype(np.int64)
        total = won.sum(axis=1)
        at_leader = won[np.arange(n), leader]
        self.leader_values.add(at_leader * (k - 1) - (total - at_leader))
        self.leader_won += int((winner_team == leader).sum())
        self.others_won += int(((winner_team >= 0) & (winner_team != leader)).sum())
        self.team_wins += won.sum(axis=0)
        for t in range(k):
            self.seat_values[t].add(won[:, t] * k - total)
        scores = np.column_stack([g[f"team{t}_score"] for t in range(k)])
        margins = _margins(_by_side(scores, rotation, players))
        for side in range(k):
            self.margins[side].add(margins[:, side])
            self.winner_margins[side].add(margins[winner == side, side])
        self.length.add(g["rounds"])
        if self.group > 1:
            self._add_deals(g["deal_id"], winner)

    def _keep_sample(self, g: dict) -> None:
        wanted = self.sample_size - sum(part.size for part in self.sample.get("game_id", []))
        if wanted <= 0:
            return
        for name in list(SAMPLE_COLUMNS) + [f"team{t}_score" for t in range(self.sides)]:
            self.sample.setdefault(name, []).append(g[name][:wanted])

    def _add_running(self, winner: np.ndarray) -> None:
        """Running wins at the marks that fall in this chunk (games start+1..end)."""
        if not self.marks.size:
            return
        start = self.games
        inside = (self.marks > start) & (self.marks <= start + winner.size)
        won = winner[:, None] == np.arange(self.sides)[None, :]
        if inside.any():
            running = np.cumsum(won, axis=0)
            self.running[inside] = self._so_far + running[self.marks[inside] - start - 1]
        self._so_far += won.sum(axis=0)

    def _add_deals(self, deal_ids: np.ndarray, winner: np.ndarray) -> None:
        x = np.column_stack([(winner == i).astype(np.int64) - (winner == j)
                             for i, j in self.pairs])
        if self._pending is not None:
            deal_ids = np.concatenate([self._pending[0], deal_ids])
            x = np.concatenate([self._pending[1], x])
            self._pending = None
        starts = np.flatnonzero(np.r_[True, deal_ids[1:] != deal_ids[:-1]])
        sizes = np.diff(np.r_[starts, deal_ids.size])
        if sizes[-1] < self.group:  # its other games may be in the next chunk
            cut = starts[-1]
            self._pending = (deal_ids[cut:], x[cut:])
            deal_ids, x, starts, sizes = deal_ids[:cut], x[:cut], starts[:-1], sizes[:-1]
        if not starts.size:
            return
        sums = np.add.reduceat(x, starts, axis=0)
        complete = sizes == self.group
        for index, pair in enumerate(self.pairs):
            self.by_deal[pair].add(sums[complete, index])

    def _prepare_rounds(self, g: dict, rounds: pa.Table) -> dict:
        """The chunk's rounds added into small count arrays (``sim.report.passes``)."""
        from sim.report.passes import BAD_GAME, BAD_ORDER, ChunkGames, round_pass

        rows, reason_code = self._round_rows(rounds)
        games = ChunkGames(0, g["rotation"], g["winner_side"])
        if np.all(np.diff(g["game_id"]) == 1):  # the chunk's game ids are consecutive
            games = games._replace(first_id=int(g["game_id"][0]))
        else:  # rows by their game's place in the chunk instead
            rows = rows._replace(game=_places(g["game_id"], rows.game))
        counts = self._counts(rows, g["game_id"].size)
        if rows.game.size:
            seating = self._seating(reason_code)
            status = round_pass(rows, games, seating, counts)
            if status == BAD_ORDER:  # rows not in game, then round order: sort, pass again
                rows = _sorted(rows, np.lexsort((rows.round_number, rows.game)))
                status = round_pass(rows, games, seating, counts)
            if status == BAD_GAME:
                raise SniffError("its rounds table has games its games table lacks")
        _add_lonely(counts, g["winner_side"])
        return {"rounds": int(rows.game.size), "endings": counts.endings,
                "domino": counts.domino, "point_low": counts.point_low,
                "points": counts.point_hist, "penalty_low": counts.penalty_low,
                "penalties": counts.penalty_hist, "bin_low": counts.bin_low,
                "cell_games": counts.cell_games, "cell_wins": counts.cell_wins}

    def _round_rows(self, rounds: pa.Table):
        """The chunk's round columns as ``sim.report.passes.RoundRows`` (their own integer
        types, int16 mostly, read without a copy; each team's or seat's columns of one type)
        and the end reasons' codes, every value used as an index checked first."""
        from sim.report.passes import RoundRows

        r = {name: to_numpy(rounds[name], None) for name in rounds.column_names
             if name != "end_reason"}
        reason = rounds["end_reason"].combine_chunks()
        if not pa.types.is_dictionary(reason.type):
            reason = reason.dictionary_encode()
        r["reason_index"] = to_numpy(reason.indices, None)
        reason_code = np.array([END_NAMES.index(v) if v in END_NAMES else -1
                                for v in reason.dictionary.to_pylist()] or [-1],
                               dtype=np.int64)
        _within(r, "reason_index", 0, reason_code.size - 1, "end_reason")
        _within(r, "domino_seat", -1, self.players - 1)
        rows = RoundRows(
            game=r["game_id"], round_number=r["round_number"],
            points=_same([r[f"team{t}_points"] for t in range(self.sides)]),
            scores=_same([r[f"team{t}_score"] for t in range(self.sides)]),
            penalties=_same([r[f"seat{s}_penalty"] for s in range(self.players)]),
            reason=r["reason_index"], domino_seat=r["domino_seat"])
        return rows, reason_code

    def _counts(self, rows, count: int):
        """Zeroed ``sim.report.passes.Counts`` wide enough for every value of ``rows``."""
        from sim.report.passes import Counts

        k, size = self.sides, self.bin_size
        if rows.game.size:
            point_low = min(int(c.min()) for c in rows.points)
            point_high = max(int(c.max()) for c in rows.points)
            team_seats = [[s for s in range(self.players) if self.seat_team[s] == t]
                          for t in range(k)]
            penalty_low = min(sum(int(rows.penalties[s].min()) for s in seats)
                              for seats in team_seats)
            penalty_high = max(sum(int(rows.penalties[s].max()) for s in seats)
                               for seats in team_seats)
            bin_low = min(0, min(int(c.min()) // size for c in rows.scores))
            bin_high = max(0, max(int(c.max()) // size for c in rows.scores))
        else:
            point_low = point_high = penalty_low = penalty_high = bin_low = bin_high = 0
        bins = bin_high - bin_low + 1
        return Counts(
            point_low=point_low,
            point_hist=np.zeros((k, point_high - point_low + 1), dtype=np.int64),
            penalty_low=penalty_low,
            penalty_hist=np.zeros((k, penalty_high - penalty_low + 1), dtype=np.int64),
            bin_low=bin_low, cell_games=np.zeros((k, bins, bins), dtype=np.int64),
            cell_wins=np.zeros((k, bins, bins), dtype=np.int64),
            endings=np.zeros(len(END_NAMES), dtype=np.int64),
            domino=np.zeros(k, dtype=np.int64), has_rows=np.zeros(count, dtype=np.bool_))

    def _seating(self, reason_code: np.ndarray):
        """The run's tables for the compiled pass (``sim.report.passes.Seating``)."""
        from sim.report.passes import Seating

        return Seating(side_of=self.side_of, seat_team=self.seat_team,
                       reason_code=reason_code, target_code=END_NAMES.index("target"),
                       bin_size=self.bin_size)

    # --- after the last chunk

    def finish(self) -> RunFigures:
        """Close the stream: a duplicate deal still waiting is incomplete (not counted)."""
        self._pending = None
        return self

    def sample_rows(self) -> dict[str, np.ndarray]:
        """The kept first games' columns (``SAMPLE_COLUMNS`` and the final scores)."""
        return {name: np.concatenate(parts) for name, parts in self.sample.items()}

    def running_wins(self, marks) -> np.ndarray:
        """Each side's wins over the first ``m`` games for each of ``marks`` (kept marks)."""
        index = np.searchsorted(self.marks, np.asarray(marks, dtype=np.int64))
        return self.running[index]


# --- the runs of a report


def convergence_marks(n: int, points: int = 200) -> np.ndarray:
    """The game counts ``sim.report.states.convergence_table`` shows for ``n`` games."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    start = min(10, n)
    return np.unique(np.clip(np.round(np.geomspace(start, n, num=min(points, n))), 1, n)
                     .astype(np.int64))


def field_marks(lengths, points: int = 200) -> np.ndarray:
    """The game counts per pairing ``sim.report.states.field_convergence_table`` shows."""
    longest = max(lengths) if len(lengths) else 0
    if longest <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.clip(np.round(np.geomspace(min(10, longest), longest,
                                                   num=min(points, longest))), 1, longest)
                     .astype(np.int64))


def read_figures(runs, samples: dict[str, int] | None = None, progress=None) -> None:
    """Add up each run's figures (``run.figures``), chunk by chunk over its checked parts.

    ``samples``: per run name, how many of its first games' rows to keep (the placement
    sample). ``progress(done, total)`` hears every chunk read, over all the runs.
    """
    from sim.store.rundata import required_columns
    from sim.store.scan import chunk_parts, scan

    samples = samples or {}
    tournaments: dict[object, list[int]] = {}
    for run in runs:
        if run.tournament is not None:
            tournaments.setdefault(run.tournament, []).append(run.n_games)
    totals = [len(chunk_parts(run.run)) if run.path is not None else 1 for run in runs]
    done = 0
    for run, total in zip(runs, totals):
        if run.figures is not None:
            done += total
            continue
        marks = set(convergence_marks(run.n_games).tolist())
        if run.tournament is not None:
            marks |= set(np.minimum(field_marks(tournaments[run.tournament]),
                                    run.n_games).tolist())
        figures = RunFigures(run.players, run.group, marks, samples.get(run.name, 0))
        columns = required_columns(run.players)
        offset = done

        def step(index: int, _total: int, offset: int = offset) -> None:
            if progress is not None:
                progress(offset + index, sum(totals))

        try:
            if run.path is None:
                for chunk in scan(run.run, columns, step):
                    figures.add(chunk["games"], chunk["rounds"])
            else:
                _pipeline(figures, chunk_parts(run.run), columns, step, _workers(run))
        except SniffError as error:
            where = str(run.path) if run.path else "in-memory run"
            text = str(error)
            raise SniffError(text if text.startswith(("/", where)) or ".parquet" in text
                             else f"{where}: {text}") from None
        run.figures = figures.finish()
        done += total


def _workers(run) -> int:
    """Reader threads: the threads the run was played with (its last session's), 1 to 4."""
    sessions = run.manifest.get("sessions") or [{}]
    threads = sessions[-1].get("threads")
    if not isinstance(threads, int) or threads < 1:
        threads = os.cpu_count() or 1
    return max(1, min(4, threads))


def _pipeline(figures: RunFigures, chunks: list, columns: dict, step, workers: int) -> None:
    """Add the chunks (``sim.store.scan.chunk_parts``) to ``figures`` in game id order, each
    read and prepared by one of ``workers`` threads a few chunks ahead (pyarrow and the
    compiled pass release the GIL). The counts are exact integers added in order, so the
    figures do not depend on the threads; at most ``workers + 1`` chunks are in memory."""
    from concurrent.futures import ThreadPoolExecutor

    from sim.store.scan import read_chunk

    def prepared(index: int):
        chunk = read_chunk(chunks[index], columns)
        return figures.prepare(chunk["games"], chunk["rounds"])

    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = [pool.submit(prepared, index) for index in range(min(workers, len(chunks)))]
        for index in range(len(chunks)):
            result = pending.pop(0).result()
            if index + workers < len(chunks):
                pending.append(pool.submit(prepared, index + workers))
            figures.consume(result)
            step(index + 1, len(chunks))

"""``sniff compare A B``: play duplicate deals until a sequential test decides.

The run is a ``sniff simulate --duplicate`` run of A against B (with 3 players A against two
seats of B) whose plan carries the test's settings (``Plan.sequential``): it plays chunks of
whole deals and stops after the first chunk whose log-likelihood ratio crosses a bound, or
at ``max_games`` (then "undecided"). The same seed gives the same games and so the same
decision, for any thread count. ``compare.json`` in the run folder keeps the decision, the
LLR and its bounds, the hypotheses and the estimate with its interval.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sim.compare import ALPHA, BETA, CHUNK_DEALS, DEFAULT_MAX_GAMES, H0, H1, RESULT
from sim.core.checks import check_players
from sim.errors import SettingError, SniffError
from sim.run.plan import Plan, deal_group, resolve_plan, spec_text
from sim.run.sequential import SequentialStop
from sim.run.settings import RunControl
from sim.stats.sprt import Sprt, elo_of_difference

__all__ = ["compare", "Comparison"]

ESTIMATE_NOTE = (
    "naive mean over the deals played, with its fixed-sample 95% interval; a test that "
    "stops when a bound is crossed tends to overstate the difference in the direction it "
    "decided (measured in docs/compare.md), so read the decision first and the estimate as "
    "an approximate size")


@dataclass
class Comparison:
    """What a compare run decided, and how far it went.

    Attributes:
        a: the first strategy's spec.
        b: the second strategy's spec.
        players: the player count.
        seed: the run's seed.
        sprt: the sequential test that decided.
        decision: "H0", "H1" or "undecided".
        games: the games played.
        deals: the whole duplicate deals played.
        llr: the log-likelihood ratio when the run stopped.
        estimate: (difference, low, high).
        folder: the run folder, or None for a run kept in memory.
        history: one record per chunk: its games, LLR and bounds.
    """

    a: str
    b: str
    players: int
    seed: int
    sprt: Sprt
    decision: str  # "H0", "H1" or "undecided"
    games: int
    deals: int
    llr: float
    estimate: tuple[float, float, float]  # (difference, low, high)
    folder: Path | None = None
    history: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        difference, low, high = self.estimate
        return {
            "decision": self.decision, "games": self.games, "deals": self.deals,
            "llr": self.llr, "lower": self.sprt.lower, "upper": self.sprt.upper,
            "a": self.a, "b": self.b, "players": self.players, "seed": self.seed,
            "hypotheses": self.sprt.to_dict(),
            "estimate": {"difference": difference, "ci95": [low, high],
                         "elo": elo_of_difference(difference) if self.players != 3 else None,
                         "note": ESTIMATE_NOTE},
            "chunks": self.history,
        }

    def decision_text(self) -> str:
        h0, h1 = self.sprt.h0, self.sprt.h1
        if self.decision == "H1":
            verdict = (f"H1: {self.a} is better than {self.b} by at least the tested "
                       f"{h1:+.1%} (error rate at most {self.sprt.alpha:g} if it were not)")
        elif self.decision == "H0":
            verdict = (f"H0: {self.a}'s advantage over {self.b} is at most {h0:+.1%} (a "
                       f"{h1:+.1%} advantage would be missed at most {self.sprt.beta:g} of "
                       "the time)")
        else:
            verdict = ("undecided: the games ran out before the test crossed a bound; the "
                       "difference is likely between the hypotheses")
        difference, low, high = self.estimate
        return (f"{verdict}\n  after {self.games:,} games ({self.deals:,} deals): LLR "
                f"{self.llr:+.2f} (bounds {self.sprt.lower:+.2f}, {self.sprt.upper:+.2f}); "
                f"win-rate difference {difference:+.2%} [{low:+.2%}, {high:+.2%}] "
                "(naive at a stopping time: see compare.json's note)")


def chunk_line(row: dict, sprt: Sprt) -> str:
    """The line printed after each chunk."""
    return (f"{row['games']:>9,} games  LLR {row['llr']:+6.2f}  in [{sprt.lower:+.2f}, "
            f"{sprt.upper:+.2f}]  difference {row['estimate']:+.2%}")


def lineup_text(a: str | None, b: str | None, players: int) -> str:
    """A against B: one strategy per side (with 3 players, B in both other seats); a
    missing or malformed name is one line."""
    from strategies import parse_lineup_text

    texts = []
    for name, text in (("A", a), ("B", b)):
        if not isinstance(text, str) or not text.strip():
            raise SniffError(f"strategy {name} must be a strategy name, got {text!r}")
        specs = parse_lineup_text(text)
        if len(specs) != 1:
            raise SniffError(f"strategy {name} must be one strategy, got {text!r}")
        texts.append(spec_text(specs[0]))
    a, b = texts
    return ",".join([a, b, b] if players == 3 else [a, b])


def compare_plan(a: str | None, b: str | None, *, players: int = 4, seed: int = 0,
                 test: Sprt | None = None, max_games: int = DEFAULT_MAX_GAMES,
                 chunk_size: int | None = None) -> Plan:
    """The run plan of a comparison (checked: one line for each bad setting); ``test``: the
    sequential test's hypotheses and error rates (default ``Sprt(H0, H1, ALPHA, BETA)``)."""
    test = test or DEFAULT_TEST
    players = check_players(players)
    group = deal_group(players, True)
    chunk = CHUNK_DEALS * group if chunk_size is None else chunk_size
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1 or chunk % group:
        raise SettingError(f"{{chunk_size}} must be a positive multiple of {group} games "
                           f"(whole duplicate deals), got {chunk}")
    if isinstance(max_games, bool) or not isinstance(max_games, int) or max_games < chunk:
        raise SettingError(f"{{max_games}} must be at least one chunk ({chunk:,} games), got "
                           f"{max_games}")
    games = max_games - max_games % chunk
    return Plan.build(players, lineup_text(a, b, players), games, seed, True, chunk,
                      sequential=(test.h0, test.h1, test.alpha, test.beta))


DEFAULT_TEST = Sprt(H0, H1, ALPHA, BETA)


def compare(a: str | None = None, b: str | None = None, *, players: int = 4, seed: int = 0,
            out: str | Path | None = None, test: Sprt | None = None,
            max_games: int | None = None, chunk_size: int | None = None,
            control: RunControl | None = None,
            on_line: Callable[[str], None] | None = None) -> Comparison:
    """Play A against B until the test decides; a :class:`Comparison`.

    ``out``: the run folder (None: in memory, no ``compare.json``). ``test``: the sequential
    test (``sim.stats.sprt.Sprt``: its hypotheses and error rates; default
    ``DEFAULT_TEST``). ``max_games``: the cap (default ``DEFAULT_MAX_GAMES``; on a resume
    the run's own, and another is refused). ``control`` (``sim.run.settings.RunControl``)
    says how to play: with mode ``"resume"`` it completes an interrupted comparison in
    ``out`` (its own settings; a decided one plays nothing); its ``scheduler`` plays the
    chunks on Dask: the workers hand each chunk back and the test takes them in
    chunk order, so the decision, the games and the folder are the same as locally,
    whatever order the chunks finish in.
    ``on_line`` gets the line of each chunk.
    """
    from sim.run.simulation import execute
    from sim.store import io

    control = control or RunControl()
    control.check()
    folder = Path(out) if out is not None else None
    if control.mode == "resume":
        plan = _resumed_plan(folder, test, max_games)
    else:
        plan = compare_plan(a, b, players=players, seed=seed, test=test, chunk_size=chunk_size,
                            max_games=DEFAULT_MAX_GAMES if max_games is None else max_games)
    state = SequentialStop(plan)
    shown = 0

    def on_chunk(chunk: int) -> None:
        nonlocal shown
        if on_line is not None:
            for row in state.history[shown:]:
                on_line(chunk_line(row, state.sprt))
        shown = len(state.history)

    execute(plan, folder, control.but(command=control.command or "sim.compare.compare(...)",
                                      on_chunk=on_chunk), state)
    on_chunk(-1)  # a resumed run's chunks, read back, when nothing was left to play
    lineup = list(plan.lineup.seats)
    comparison = Comparison(
        a=lineup[0].label, b=lineup[1].label, players=plan.players, seed=plan.seed,
        sprt=state.sprt, decision=state.decision or "undecided", games=state.games,
        deals=state.outcomes.deals, llr=state.llr, estimate=state.outcomes.interval(),
        folder=folder, history=state.history)
    if folder is not None:
        io.write_json(folder / RESULT, _finite(comparison.to_dict()))
    return comparison


def _resumed_plan(folder: Path | None, test: Sprt | None, max_games: int | None) -> Plan:
    """The plan of the comparison in ``folder``, whose test goes on as it started, to the
    cap it started with."""
    from sim.store import io

    if folder is None or not (folder / io.MANIFEST).is_file():
        raise SniffError(f"nothing to resume: {folder} holds no compare run")
    plan = resolve_plan({}, io.read_manifest(folder), folder)
    if plan.sequential is None:
        raise SniffError(f"{folder} is a simulate run, not a compare run: resume it with "
                         "sniff simulate --resume")
    if test is not None and test != DEFAULT_TEST and test != Sprt(*plan.sequential):
        asked = (test.h0, test.h1, test.alpha, test.beta)
        raise SettingError(  # the test goes on with the hypotheses it started with
            f"{{h0}}/{{h1}}/{{alpha}}/{{beta}} {', '.join(f'{x:g}' for x in asked)} differ "
            f"from the run's own {', '.join(f'{x:g}' for x in plan.sequential)}; a resumed "
            "comparison keeps its test: leave them out, or start a new run")
    if max_games is not None and (isinstance(max_games, bool) or not isinstance(
            max_games, int) or max_games - max_games % plan.chunk_size != plan.games):
        raise SettingError(  # every part's footer records the plan: its cap cannot move
            f"{{max_games={max_games}}} differs from the run's own {plan.games:,}; a resumed "
            "comparison keeps its cap: leave it out, or start a new run")
    return plan


def _finite(data: dict) -> dict:
    """JSON without NaN or infinities (null instead), so any reader can parse it."""
    return json.loads(json.dumps(data), parse_constant=lambda _: None)

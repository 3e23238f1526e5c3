"""``sniff tournament`` and the ratings: all pairings in one kernel, a matrix and ratings that
match the games, resume, and the rating fit itself on known cases.

The tournament plays greedy, random and heavy: one extra strategy, one shared kernel
(compiled once for the whole module).

A tournament none of whose pairings is played yet: the run ids ``tournament.json``
recorded when it started bind its settings, so an edited ``games_per_pair`` or
``precision`` is one line at ``--resume`` naming ``tournament.json`` and the pairing's run
id, before anything is written (it was refused only when the first pairing's folder was
checked, as "--out .../pairs/01-... is inside the sniff folder", which blamed no edit; #51).
"""

from __future__ import annotations

import itertools
import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest

import sim
import strategies
from sim.core.identity import ENGINE_VERSION
from sim.errors import SniffError
from sim.run.settings import RunControl
from sim.run.signature import strategy_signature
from sim.stats.ratings import ELO_SCALE, Contest, fit_ratings
from sim.store.rundata import open_runs
from sim.tournament import load as load_tournament
from sim.tournament import pairings, run_tournament
from tests.helpers.cli import as_stopped_before, load_unverified, one_line, run_main
from tests.helpers.frames import assert_frame_equal

STRATEGIES = "greedy,random,heavy"
GAMES = 400


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tournament") / "t"
    return run_tournament(4, STRATEGIES, GAMES, seed=3, out=folder, chunk_size=150)


def test_every_pairing_is_a_run_played_in_one_kernel(tournament):
    folder = tournament.folder
    manifest = json.loads((folder / "tournament.json").read_text())
    assert manifest["status"] == "complete"
    lineups = [tuple(p["lineup"]) for p in manifest["pairings"]]
    assert lineups == [("greedy", "random"), ("greedy", "heavy"), ("random", "heavy")]
    for pairing in manifest["pairings"]:
        run = sim.load(folder / pairing["folder"])
        assert run.complete and len(run.games) == GAMES
        assert run.config["labels"] == [*pairing["lineup"], *pairing["lineup"]]
        assert run.config["seed"] == pairing["seed"]
        assert run.manifest["identity"] == {"engine": ENGINE_VERSION, "strategies": {
            name: strategy_signature(strategies.parse_spec(name), 4)
            for name in pairing["lineup"]}}  # what its lineup plays
    assert len({p["seed"] for p in manifest["pairings"]}) == 3  # independent deals
    for name in ("matrix.png", "ratings.png"):
        data = (folder / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 5000
    games = tournament.games
    assert len(games) == 3 * GAMES and set(games["pairing"]) == {
        p["name"] for p in manifest["pairings"]}


def test_matrix_and_ratings_match_the_games(tournament):
    folder = tournament.folder
    manifest = json.loads((folder / "tournament.json").read_text())
    wins: dict[tuple[str, str], int] = {}
    contests = []
    for pairing in manifest["pairings"]:
        games = pd.read_parquet(folder / pairing["folder"] / "games")
        a, b = pairing["lineup"]
        # Partnership of seats 0+2 in each game, from the seat labels.
        first = games["seat0_strategy"].astype(str).to_numpy()
        won_by = np.where(games["winner_team"] == 0, first,
                          np.where(first == a, b, a))
        won_by = np.where(games["winner_team"] < 0, "", won_by)
        wins[(a, b)] = int((won_by == a).sum())
        wins[(b, a)] = int((won_by == b).sum())
        contests.append(Contest((a, b), (wins[(a, b)], wins[(b, a)])))
    matrix = tournament.matrix.set_index(["row", "column"])
    csv = pd.read_csv(folder / "matrix.csv").set_index(["row", "column"])
    for (a, b), won in wins.items():
        games = won + wins[(b, a)]
        assert matrix.loc[(a, b), "wins"] == won and matrix.loc[(a, b), "games"] == games
        assert matrix.loc[(a, b), "share"] == pytest.approx(won / games)
        assert csv.loc[(a, b), "share"] == pytest.approx(won / games)
    direct = fit_ratings(contests).table.set_index("strategy")
    table = tournament.ratings.table.set_index("strategy")
    ranking = pd.read_csv(folder / "ranking.csv").set_index("strategy")
    for name in ("greedy", "random", "heavy"):
        assert table.loc[name, "rating"] == pytest.approx(direct.loc[name, "rating"])
        assert ranking.loc[name, "rating"] == pytest.approx(direct.loc[name, "rating"])
        assert table.loc[name, "low"] < table.loc[name, "rating"] < table.loc[name, "high"]
    assert list(tournament.ratings.table["strategy"])[-1] == "random"
    assert tournament.ratings.table["rating"].mean() == pytest.approx(1500)
    assert manifest["ratings"]["ratings"][0]["strategy"] == tournament.ratings.table[
        "strategy"][0]
    again = load_tournament(folder)
    assert again.ratings.table.equals(tournament.ratings.table)


def test_report_reads_the_tournament(tournament, tmp_path, capsys):
    out = tmp_path / "report"
    code, stdout, err = run_main(["report", str(tournament.folder), "-o", str(out),
                                  "--placement-sample", "0"], capsys)
    assert code == 0, err
    assert (out / "matrix.png").exists() and (out / "ratings.png").exists()
    data = json.loads((out / "report.json").read_text())
    assert len(data["runs"]) == 3
    report_ratings = {r["strategy"]: r["rating"] for r in data["ratings"]["ratings"]}
    table = tournament.ratings.table
    for _, row in table.iterrows():
        assert report_ratings[row["strategy"]] == pytest.approx(row["rating"])
    assert data["comparisons"] == []  # a tournament's runs are left to its ratings
    page = (out / "report.html").read_text()
    assert "Pairwise results and ratings" in page and "Bradley–Terry" in page


AGGREGATE_FILES = {"field.png", "differences.png", "matrix.png", "ratings.png",
                   "score-states.png", "score-states.csv", "convergence.png", "report.html",
                   "report.md", "report.json"}


def _wins_from_tables(folder) -> dict[str, tuple[int, int]]:
    """Each strategy's (wins, games) over the tournament, from the games tables' seat labels."""
    manifest = json.loads((folder / "tournament.json").read_text())
    totals: dict[str, list[int]] = {}
    for pairing in manifest["pairings"]:
        games = pd.read_parquet(folder / pairing["folder"] / "games")
        first = games["seat0_strategy"].astype(str).to_numpy()  # partnership of seats 0+2
        a, b = pairing["lineup"]
        won_by = np.where(games["winner_team"] == 0, first, np.where(first == a, b, a))
        won_by = np.where(games["winner_team"] < 0, "", won_by)
        for name in (a, b):
            entry = totals.setdefault(name, [0, 0])
            entry[0] += int((won_by == name).sum())
            entry[1] += len(games)
    return {name: (w, g) for name, (w, g) in totals.items()}


def test_tournament_report_is_compact_by_default(tournament, tmp_path, capsys):
    out = tmp_path / "compact"
    code, _, err = run_main(["report", str(tournament.folder), "-o", str(out)], capsys)
    assert code == 0, err
    assert {p.name for p in out.iterdir()} == AGGREGATE_FILES  # no per-pairing file
    assert "tracing" not in err  # no placement sample traced again
    data = json.loads((out / "report.json").read_text())
    assert all(sample["games"] == 0 for sample in data["placements"].values())
    assert len(data["compact"]) == 3
    expected = _wins_from_tables(tournament.folder)
    field = {row["strategy"]: row for row in data["field"]}
    assert set(field) == set(expected)
    for name, (wins, games) in expected.items():
        assert (field[name]["wins"], field[name]["games"]) == (wins, games)
        assert field[name]["win_rate"] == pytest.approx(wins / games)
    # strongest first, by rating; differences read stronger − weaker, sorted the same way
    assert [row["strategy"] for row in data["field"]] == list(tournament.ratings.table["strategy"])
    assert all(row["estimate"] >= 0 for row in data["differences"])
    order = list(tournament.ratings.table["strategy"])
    keys = [(order.index(r["strategy_a"]), order.index(r["strategy_b"]))
            for r in data["differences"]]
    assert keys == sorted(keys)
    page = (out / "report.html").read_text()
    assert "Strategies against the field" in page and "Run 01-" not in page
    assert "all pairings pooled" in page  # effects pooled over the pairings
    states = pd.read_csv(out / "score-states.csv")
    assert set(states["strategy"]) == set(expected) and (states["opponents"] == "the field").all()


def test_tournament_report_with_pairings_adds_their_sections(tournament, tmp_path, capsys):
    out = tmp_path / "full"
    code, _, err = run_main(["report", str(tournament.folder), "-o", str(out), "--pairings",
                             "--placement-sample", "8"], capsys)
    assert code == 0, err
    names = {p.name for p in out.iterdir()}
    assert AGGREGATE_FILES <= names
    for pairing in json.loads((tournament.folder / "tournament.json").read_text())["pairings"]:
        for chart in ("by-position", "score-margin", "placement-scores"):
            assert f"{pairing['name']}-{chart}.png" in names
    data = json.loads((out / "report.json").read_text())
    assert data["compact"] == []
    assert all(sample["games"] == 8 for sample in data["placements"].values())
    assert err.count("tracing 8 games again") == 3


def test_tournament_report_refuses_a_sample_without_pairings(tournament, tmp_path, capsys):
    code, _, err = run_main(["report", str(tournament.folder), "-o", str(tmp_path / "r"),
                             "--placement-sample", "20"], capsys)
    assert code == 2 and "--pairings" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r" / "report.html").exists()


def test_resume_plays_only_what_is_missing(tournament, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(tournament.folder, folder)
    second, third = folder / "pairs" / "02-greedy-vs-heavy", folder / "pairs" / "03-random-vs-heavy"
    before = {path: load_unverified(path).games for path in (second, third)}  # copies
    # Pairing 2 stopped after two of its three chunks, pairing 3 never started.
    for table in ("games", "rounds"):
        (second / table / "part-000002.parquet").unlink()
    as_stopped_before(second, 2)
    shutil.rmtree(third)
    manifest = json.loads((folder / "tournament.json").read_text())
    manifest["status"] = "interrupted"
    (folder / "tournament.json").write_text(json.dumps(manifest))
    partial = open_runs([folder])  # a report covers the pairings that have games, and says so
    assert [r.name for r in partial] == ["01-greedy-vs-random", "02-greedy-vs-heavy"]
    assert "is interrupted: 2 of its 3 pairings have games" in partial[0].notes[0]
    assert "300 of 400 games" in partial[1].notes[0]
    lines = []
    result = run_tournament(out=folder, control=RunControl(mode="resume", notice=lines.append))
    assert lines[0].endswith("already played") and not lines[1].endswith("already played")
    for path, games in before.items():
        assert_frame_equal(sim.load(path).games, games)
    assert sim.load(second).manifest["sessions"][-1]["games_played"] == GAMES - 300
    assert result.ratings.table.equals(tournament.ratings.table)
    assert json.loads((folder / "tournament.json").read_text())["status"] == "complete"
    with pytest.raises(SniffError, match="started with other games_per_pair"):
        run_tournament(out=folder, games_per_pair=10, control=RunControl(mode="resume"))


def test_tournament_errors(tmp_path, capsys):
    cases = [
        (["--strategies", "greedy,greedy"], "strategy greedy is named twice"),
        (["--players", "3", "--strategies", "greedy,random"], "name at least 3"),
        (["--strategies", "greedy,nosuch"], "unknown strategy 'nosuch'"),
        (["--strategies", "greedy,random", "--precision", "0.01", "--games-per-pair", "10"],
         "--games-per-pair and --precision exclude each other"),
        (["--strategies", "greedy,random", "--max-games", "10"], "--max-games is the cap"),
        (["--games-per-pair", "10"], "give the strategies to play"),
    ]
    for args, message in cases:
        code, _, err = run_main(["tournament", *args, "--out", str(tmp_path / "t")], capsys)
        assert code == 2 and message in err, (message, err)
        assert err.count("\n") == 1
    assert not (tmp_path / "t").exists()


def test_three_players_play_every_triple():
    assert pairings(3, ["a", "b", "c", "d"]) == list(itertools.combinations("abcd", 3))
    assert pairings(4, ["a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]


# --- the rating fit


def test_two_strategies_have_the_closed_form_rating():
    ratings = fit_ratings([Contest(("a", "b"), (600, 400))]).table.set_index("strategy")
    gap = ELO_SCALE * math.log(600 / 400)
    assert ratings.loc["a", "rating"] - ratings.loc["b", "rating"] == pytest.approx(gap)
    # Var(log(600/400)) = 1/600 + 1/400; each centred rating carries half the difference.
    se = ELO_SCALE * math.sqrt(1 / 600 + 1 / 400) / 2
    assert ratings.loc["a", "se"] == pytest.approx(se, rel=1e-6)


@pytest.mark.parametrize("size", [2, 3])
def test_the_fit_recovers_known_strengths(size):
    rng = np.random.default_rng(7)
    theta = {"a": 0.8, "b": 0.0, "c": -0.6, "d": 0.3}
    contests = []
    for lineup in itertools.combinations(theta, size):
        p = np.exp([theta[s] for s in lineup])
        wins = rng.multinomial(40_000, p / p.sum())
        contests.append(Contest(lineup, tuple(int(w) for w in wins)))
    table = fit_ratings(contests).table.set_index("strategy")
    mean = np.mean(list(theta.values()))
    for name, value in theta.items():
        truth = 1500 + ELO_SCALE * (value - mean)
        row = table.loc[name]
        assert abs(row["rating"] - truth) < 4 * row["se"], (name, row["rating"], truth)


def test_a_strategy_that_never_lost_still_gets_a_finite_rating():
    ratings = fit_ratings([Contest(("a", "b"), (50, 0)), Contest(("b", "c"), (30, 20))])
    assert ratings.pseudo_wins == 0.5 and ratings.notes
    assert np.isfinite(ratings.table["rating"]).all()
    assert list(ratings.table["strategy"]) == ["a", "b", "c"]
    with pytest.raises(SniffError, match="never met"):
        fit_ratings([Contest(("a", "b"), (5, 5)), Contest(("c", "d"), (5, 5))])


@pytest.fixture(scope="module")
def unplayed_tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run-ids") / "t"
    run_tournament(2, "greedy,random,heavy", 40, seed=3, out=folder, chunk_size=40)
    return folder


def unplayed(unplayed_tournament, tmp_path, edit=None):
    """A copy as a tournament stopped before its first pairing: no pairing folder."""
    folder = tmp_path / "copy"
    shutil.copytree(unplayed_tournament, folder)
    for pairing in (folder / "pairs").iterdir():
        shutil.rmtree(pairing)
    manifest = json.loads((folder / "tournament.json").read_text())
    manifest["status"] = "interrupted"
    if edit is not None:
        edit(manifest["config"])
    (folder / "tournament.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize("edit", [lambda c: c.update(games_per_pair=5000),
                                  lambda c: c.update(precision=0.01)])
def test_an_edited_setting_is_refused_before_any_game(unplayed_tournament, tmp_path, capsys,
                                                      edit) -> None:
    folder = unplayed(unplayed_tournament, tmp_path, edit)
    code, out, err = run_main(["tournament", "-o", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, "its settings do not give pairing 1's run id")
    assert not any((folder / "pairs").iterdir())


def test_the_recorded_settings_resume(unplayed_tournament, tmp_path, capsys) -> None:
    folder = unplayed(unplayed_tournament, tmp_path)
    code, out, err = run_main(["tournament", "-o", str(folder), "--resume", "-q"], capsys)
    assert code == 0 and "3 pairings, 40 games each" in out, (out, err)

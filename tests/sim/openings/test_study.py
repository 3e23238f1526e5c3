"""``sniff openings``: forced leads really happen, common deals, figures that match the games.

Small runs (40 deals x 29 games) with ``greedy`` and ``random`` only, so the suite's one
compiled kernel is reused.
"""

from __future__ import annotations

import json
import math
import re
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from sim.core.tiles import N_TILES, tile_name
from sim.errors import SniffError
from sim.openings.output import load_openings
from sim.openings.play import SLOTS_PER_DEAL, make_config, play_openings
from sim.openings.study import openings_section, run_openings, trace_opening_game
from sim.openings.tally import summarise_openings
from sim.stats.intervals import Z95
from tests.helpers import ROOT
from tests.helpers.cli import invoke

DEALS = 40
SEED = 5
STRATEGIES = "greedy,random"
TILES = [tile_name(t) for t in range(N_TILES)]


def cli(args: list[str]) -> tuple[int, str]:
    """``sniff ARGS`` in this process (``tests.helpers.cli.invoke``): (exit code, stdout); its
    stderr goes on to this process's, for ``capsys``."""
    code, out, err = invoke(args)
    sys.stderr.write(err)
    return code, out


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("openings") / "run"
    code, out = cli(["openings", "--players", "4", "--strategies", STRATEGIES, "--deals",
                     str(DEALS), "--seed", str(SEED), "--out", str(folder), "-q"])
    assert code == 0
    table, summary = load_openings(folder)
    return {
        "folder": folder,
        "stdout": out,
        "table": table,
        "summary": summary,
        "games": pd.read_parquet(folder / "games"),
        "config": make_config(4, STRATEGIES, DEALS, SEED),
    }


def forced_games(games: pd.DataFrame) -> pd.DataFrame:
    return games[games["forced"]]


def round_events(events: list[dict], number: int) -> list[dict]:
    """The events of round ``number`` (its round_start up to the next round_start)."""
    out, current = [], 0
    for event in events:
        if event["event"] == "round_start":
            current = event["round"]
        if current == number and event["event"] != "game_start":
            out.append(event)
    return out


def locations(round_start: dict) -> dict[str, tuple]:
    """Where each tile of a deal is: ``("hand", seat)`` or ``("boneyard", index)``."""
    where: dict[str, tuple] = {}
    for seat, hand in enumerate(round_start["hands"]):
        for tile in hand:
            where[tile] = ("hand", seat)
    for index, tile in enumerate(round_start["boneyard"]):
        where[tile] = ("boneyard", index)
    return where


# --- the 28 tiles, the files


def test_all_28_tiles_are_present(run):
    table, games = run["table"], run["games"]
    assert list(table["tile"]) == TILES
    assert sorted(table["rank"]) == list(range(1, N_TILES + 1))
    assert (table["deals"] == DEALS).all()
    assert len(games) == DEALS * SLOTS_PER_DEAL
    forced = forced_games(games)
    per_deal = forced.groupby("deal_id")["opening_tile"].apply(lambda s: sorted(map(str, s)))
    assert len(per_deal) == DEALS
    assert all(tiles == sorted(TILES) for tiles in per_deal)
    assert (games.groupby("deal_id").size() == SLOTS_PER_DEAL).all()
    slot = np.where(games["forced"], games["opening_tile_id"], N_TILES)
    assert (games["game_id"] == games["deal_id"] * SLOTS_PER_DEAL + slot).all()


def test_output_files_and_printed_ranking(run):
    folder = run["folder"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [".lock", "games", "heatmap.png", "openings.parquet", "ranking.md", "summary.json",
         "tile-pairs.csv"]
    )
    assert [p.name for p in (folder / "games").iterdir()] == ["part-000000.parquet"]
    png = (folder / "heatmap.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    ranking = (folder / "ranking.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (\d-\d) \|", ranking, flags=re.M)
    best_first = run["table"].sort_values("rank")
    assert rows == [(str(r), t) for r, t in zip(best_first["rank"], best_first["tile"])]
    printed = run["stdout"]
    assert printed.index(str(best_first["tile"].iloc[0])) < printed.index(
        str(best_first["tile"].iloc[-1]))
    assert "Value of leading" in printed and str(folder) in printed
    metadata = json.loads(pq.read_schema(folder / "openings.parquet").metadata[b"sniff"])
    assert metadata["format"] == "sniff-openings/1"
    assert metadata["config"]["strategies_from_leader"] == ["greedy", "random"] * 2
    assert json.loads((folder / "summary.json").read_text())["deals"] == DEALS


def test_existing_folder_is_not_overwritten(run):
    code, _ = cli(["openings", "--deals", "1", "--out", str(run["folder"]), "-q"])
    assert code == 2
    assert len(pd.read_parquet(run["folder"] / "games")) == DEALS * SLOTS_PER_DEAL


# --- the forced lead happens, on the deals the table says


def test_traced_games_show_the_forced_lead(run):
    games, config = run["games"], run["config"]
    forced = forced_games(games)
    picks = [forced[forced["swapped"]].iloc[0], forced[~forced["swapped"]].iloc[0]]
    picks += [row for _, row in forced.sample(4, random_state=1).iterrows()]
    for row in picks:
        events = trace_opening_game(config, int(row["game_id"]))
        start, first_round = events[0], round_events(events, 1)
        round_start, opening = first_round[0], first_round[1]
        leader = int(row["leader"])
        assert start["forced_lead"] == row["opening_tile"]
        assert round_start["round"] == 1 and round_start["leader"] == leader
        assert row["opening_tile"] in round_start["hands"][leader]  # the leader held it
        assert " ".join(sorted(round_start["hands"][leader], key=TILES.index)) == row[
            "leader_hand"]
        assert opening["event"] == "play" and opening["seat"] == leader
        assert opening["tile"] == row["opening_tile"] and opening["end"] is None
        assert opening["points"] == row["opening_points"]
        # The leader's side plays the first --strategies name.
        assert start["strategies"][leader] == "greedy"
        assert start["strategies"][(leader + 1) % 4] == "random"
        # The recorded round and game are the traced ones.
        side = {leader % 2, leader % 2 + 2}
        points = sum(e["points"] for e in first_round if e["event"] == "play"
                     and e["seat"] in side)
        assert points == row["side_points"]
        end = events[-1]
        assert end["event"] == "game_end" and end["winner"] == row["winner_team"]
        assert end["rounds"] == row["rounds"]


def test_unforced_game_is_the_strategys_choice(run):
    games, config = run["games"], run["config"]
    unforced = games[~games["forced"]]
    row = unforced.iloc[3]
    events = trace_opening_game(config, int(row["game_id"]))
    assert events[0]["forced_lead"] is None
    opening = round_events(events, 1)[1]
    assert opening["seat"] == row["leader"] and opening["tile"] == row["opening_tile"]
    assert row["opening_tile"] in row["leader_hand"].split()


def test_opening_points_follow_the_rules(run):
    points = dict(zip(run["table"]["tile"], run["table"]["opening_points"]))
    assert points["5-5"] == 10 and points["4-6"] == 10
    assert points["0-5"] == points["1-4"] == points["2-3"] == 5
    assert points["6-6"] == 0 and points["0-0"] == 0 and points["3-4"] == 0
    assert sum(1 for v in points.values() if v) == 5


def test_common_deals_differ_by_one_swap(run):
    """Each forced deal is the unforced deal with at most one swap (the forced tile against
    the leader's first dealt tile); later rounds are dealt the same in every game."""
    games, config = run["games"], run["config"]
    for deal in (0, 7, 19):
        rows = games[games["deal_id"] == deal].set_index("game_id")
        unforced_id = deal * SLOTS_PER_DEAL + N_TILES
        unforced_events = trace_opening_game(config, unforced_id)
        base = locations(round_events(unforced_events, 1)[0])
        leader = rows.loc[unforced_id, "leader"]
        hand = rows.loc[unforced_id, "leader_hand"].split()
        # One tile the deal gave the leader (no swap), two it did not (one swap each).
        tiles = [TILES.index(hand[0])] + [t for t in (0, 13, 27, 5) if TILES[t] not in hand][:2]
        seconds = []
        for tile in tiles:
            game_id = deal * SLOTS_PER_DEAL + tile
            events = trace_opening_game(config, game_id)
            start = round_events(events, 1)[0]
            assert start["leader"] == leader
            moved = {t for t, where in locations(start).items() if where != base[t]}
            name = TILES[tile]
            assert rows.loc[game_id, "swapped"] == (name not in hand)
            if rows.loc[game_id, "swapped"]:
                assert len(moved) == 2 and name in moved
                other = (moved - {name}).pop()
                assert base[other] == ("hand", leader)
                assert locations(start)[other] == base[name]
            else:
                assert moved == set() and base[name] == ("hand", leader)
            later = round_events(events, 2)
            if later:
                seconds.append(later[0])
        unforced_second = round_events(unforced_events, 2)
        if unforced_second:
            seconds.append(unforced_second[0])
        assert len(seconds) >= 2
        for second in seconds:
            assert second["hands"] == seconds[0]["hands"]
            assert second["boneyard"] == seconds[0]["boneyard"]


def test_more_deals_repeat_the_smaller_runs_games(run):
    config = make_config(4, STRATEGIES, 6, SEED)
    small = play_openings(config)
    pd.testing.assert_frame_equal(small, run["games"].iloc[: len(small)].reset_index(drop=True),
                                  check_categorical=False)


# --- figures equal a direct computation from the games table


def test_figures_agree_with_the_recorded_games(run):
    table, games, summary = run["table"], run["games"], run["summary"]
    table = table.set_index("tile")
    forced = forced_games(games).copy()
    forced["tile"] = forced["opening_tile"].astype(str)
    teams = 2
    recomputed = (forced["side_points"] - forced["side_penalty"]) - (
        forced["others_points"] - forced["others_penalty"]) / (teams - 1)
    assert np.allclose(recomputed, forced["differential"])
    by_tile = forced.groupby("tile")
    for metric, column in [("side_points", "side_points"), ("differential", "differential"),
                           ("p_out", "side_out"), ("p_win", "side_won")]:
        values = forced[column].astype(float)
        mean = values.groupby(forced["tile"]).mean()
        assert np.allclose(table.loc[mean.index, metric], mean)
        centred = values - values.groupby(forced["deal_id"]).transform("mean")
        paired = centred.groupby(forced["tile"])
        half = Z95 * paired.std(ddof=1) / np.sqrt(paired.size())
        assert np.allclose(table.loc[half.index, f"{metric}_vs_avg"], paired.mean())
        assert np.allclose(table.loc[half.index, f"{metric}_vs_avg_high"], paired.mean() + half)
        if not metric.startswith("p_"):
            std = values.groupby(forced["tile"]).std(ddof=1)
            high = mean + Z95 * std / np.sqrt(by_tile.size())
            assert np.allclose(table.loc[high.index, f"{metric}_high"], high)
        else:
            inside = (table[f"{metric}_low"] <= table[metric]) & (
                table[metric] <= table[f"{metric}_high"])
            assert inside.all()
    # P(chosen | held) from the unforced games.
    unforced = games[~games["forced"]]
    held = unforced["leader_hand"].str.split().explode().value_counts()
    chosen = unforced["opening_tile"].astype(str).value_counts()
    for tile in TILES:
        h, c = int(held.get(tile, 0)), int(chosen.get(tile, 0))
        assert table.loc[tile, "held"] == h and table.loc[tile, "chosen"] == c
        if h:
            assert math.isclose(table.loc[tile, "p_chosen"], c / h)
        else:
            assert math.isnan(table.loc[tile, "p_chosen"])
    assert math.isclose(table["chosen_share"].sum(), 1.0)
    # The value of leading at all, and the ranking.
    assert math.isclose(summary["lead_value"]["mean"], unforced["differential"].mean())
    ranked = table.sort_values("rank")
    assert (np.diff(ranked["differential"].to_numpy()) <= 0).all()
    assert summary["best_tile"] == ranked.index[0]


def test_in_memory_api_matches_the_folder(run):
    table = run_openings(players=4, strategies=STRATEGIES, deals=DEALS, seed=SEED)
    pd.testing.assert_frame_equal(table, run["table"], check_dtype=False)
    assert table.attrs["summary"]["lead_value"] == run["summary"]["lead_value"]


def test_report_section(run):
    section = openings_section(run["folder"])
    assert section.html.startswith('<section id="openings">')
    assert 'src="data:image/png;base64,' in section.html
    # the ranked table (header + 28 tiles) and the neighbours, tile against tile (header + 27)
    assert section.html.count("<tr>") == (N_TILES + 1) + N_TILES
    assert "| 1 |" in section.markdown and "heatmap.png" in section.markdown
    assert section.figure.axes


def test_report_blocks_render_in_the_report_style(run):
    from sim.display import blocks
    from sim.openings.output import openings_blocks

    items = openings_blocks(run["folder"])
    html = blocks.to_html(items)
    markdown = blocks.to_markdown(items)
    assert "Opening tiles" in html and html.count("<tr>") == (N_TILES + 1) + N_TILES
    assert "data:image/png;base64," in html and "(openings-heatmap.png)" in markdown


@pytest.mark.parametrize("players, strategies", [(3, "greedy,random"), (2, "random")])
def test_two_and_three_players(players, strategies):
    config = make_config(players, strategies, 8, 2)
    games = play_openings(config)
    table, summary = summarise_openings(games, config)
    assert len(table) == N_TILES and len(games) == 8 * SLOTS_PER_DEAL
    hand_size = {2: 7, 3: 6}[players]
    assert (games["leader_hand"].str.split().str.len() == hand_size).all()
    assert (games["leader_team"] == games["leader"]).all()
    others = players - 1
    expected = (games["side_points"] - games["side_penalty"]) - (
        games["others_points"] - games["others_penalty"]) / others
    assert np.allclose(expected, games["differential"])
    row = games[games["forced"]].iloc[5]
    start = trace_opening_game(config, int(row["game_id"]))[0]
    names = [s.split(",")[-1] for s in strategies.split(",")]
    assert start["strategies"][row["leader"]] == names[0]
    assert start["strategies"][(row["leader"] + 1) % players] == names[-1]


# --- bad input: one line, no run


@pytest.mark.parametrize("args, message", [
    (["--players", "5"], "--players"),
    (["--players", "1"], "--players"),
    (["--deals", "0"], "--deals"),
    (["--deals", "-3"], "--deals"),
    (["--strategies", "nonesuch"], "unknown strategy 'nonesuch'"),
    (["--strategies", "greedy,random,greedy"], "--strategies takes"),
    (["--seed", "-1"], "seed"),
])
def test_bad_input_is_one_line(tmp_path, capsys, args, message):
    capsys.readouterr()
    out = tmp_path / "never"
    code, _ = cli(["openings", "--deals", "2", "--out", str(out), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("sniff: error: ") and err.count("\n") == 1 and message in err
    assert not out.exists()


@pytest.mark.parametrize("kwargs", [{"players": 5}, {"deals": 0}, {"deals": -1},
                                    {"strategies": "nonesuch"}, {"seed": -2}])
def test_api_refuses_bad_input(kwargs):
    with pytest.raises(SniffError):
        make_config(**kwargs)


def test_readme_documents_every_column(run):
    text = (ROOT / "docs" / "openings.md").read_text()
    pairs = pd.read_csv(run["folder"] / "tile-pairs.csv")
    for heading, frame in [("\n## `openings.parquet`", run["table"]),
                           ("\n## `games/` of an openings run", run["games"]),
                           ("\n## Tile against tile", pairs)]:
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        names = re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)
        assert names == list(frame.columns)

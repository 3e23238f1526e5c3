"""``sniff report``: every chart and page is produced and valid, and its numbers are the ones
a direct pandas computation on the same Parquet gives; bad input gets one clear line.

Small runs of ``greedy`` and ``random`` only (the suite's shared kernel); the placement
sample traces a few dozen games with the same kernel.
"""

from __future__ import annotations

import base64
import json
import math
import shutil
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import sim
from sim.report import build as report_module
from sim.stats.intervals import Z95, wilson_interval
from tests.helpers.cli import run_main
from tests.helpers.verify import reledger

SEED = 5
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"




@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-runs")
    shapes = {
        "four": {"players": 4, "strategies": "greedy,random", "games": 1200},
        "dup": {"players": 4, "strategies": "greedy,random", "games": 1200, "duplicate": True},
        "three": {"players": 3, "strategies": "greedy,random,random", "games": 600},
        "two": {"players": 2, "strategies": "greedy,random", "games": 300},
    }
    for name, options in shapes.items():
        sim.simulate(**options, seed=SEED, chunk_size=500, out=root / name)
    return {name: root / name for name in shapes}


@pytest.fixture(scope="module")
def written(runs, tmp_path_factory) -> tuple[report_module.Report, Path, dict]:
    out = tmp_path_factory.mktemp("report") / "out"
    report = report_module.build([runs["four"], runs["dup"]], placement_sample=40)
    return report, out, report.write(out)


# --- the files


class _Checker(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.images: list[str] = []
        self.text: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def assert_png(data: bytes, path: str = "") -> None:
    assert data.startswith(PNG_SIGNATURE), path
    from io import BytesIO

    image = matplotlib.image.imread(BytesIO(data), format="png")
    assert image.shape[0] > 200 and image.shape[1] > 300, (path, image.shape)
    assert float(image[..., :3].std()) > 0.05, f"{path} is blank"


def test_every_chart_is_a_valid_png(written):
    _, out, files = written
    charts = [name for name in files if name.endswith(".png")]
    kinds = ["by-position", "points-per-round", "score-margin", "game-length",
             "placement-scores", "penalties", "round-endings"]
    expected = {"win-rates.png", "differences.png", "score-states.png", "convergence.png"} | {
        f"{run}-{kind}.png" for run in ("four", "dup") for kind in kinds}
    assert set(charts) == expected
    for name in charts:
        assert_png((out / name).read_bytes(), name)


def test_html_is_self_contained_and_holds_every_chart(written):
    report, out, files = written
    page = (out / "report.html").read_text()
    checker = _Checker()
    checker.feed(page)
    assert not checker.errors and checker.stack == []
    pngs = sorted(name for name in files if name.endswith(".png"))
    assert len(checker.images) == len(pngs)
    for src in checker.images:  # embedded, nothing fetched from elsewhere
        assert src.startswith("data:image/png;base64,")
        assert_png(base64.b64decode(src.split(",", 1)[1]))
    assert "http://" not in page and "https://" not in page and "<link" not in page
    for name in pngs:
        assert f"({name})" in page
    # The Markdown links the same PNGs, which sit beside it; report.json holds the numbers.
    markdown = (out / "report.md").read_text()
    for name in pngs:
        assert f"]({name})" in markdown and (out / name).exists()
    data = json.loads((out / "report.json").read_text())
    assert data["format"] == "sniff-report/1" and len(data["runs"]) == 2
    assert sorted(data["files"]) == pngs


def test_the_pages_show_the_numbers(written, runs):
    report, out, _ = written
    page = (out / "report.html").read_text()
    markdown = (out / "report.md").read_text()
    games = pd.read_parquet(runs["four"] / "games")
    greedy = (games["winner_side"] == 0).mean()
    low, high = wilson_interval(int((games["winner_side"] == 0).sum()), len(games))
    text = f"{100 * greedy:.2f}% ({100 * low:.2f}%–{100 * high:.2f}%)"
    assert text in page and text in markdown
    row = report.summary.iloc[0]
    assert f"{row['points_per_round']:.2f} ± {row['points_se']:.2f}" in page
    for heading in ("Summary", "Differences between strategies", "Run four", "Run dup",
                    "How the numbers are computed"):
        assert heading in page and heading in markdown
    assert "paired" in page
    assert "Placement scores are a <strong>sample</strong>: games 0..39" in page


def test_writing_again_replaces_only_a_report(runs, tmp_path):
    out = tmp_path / "again"
    first = report_module.build([runs["two"]], placement_sample=0).write(out)
    (out / "stale.png").write_bytes(b"old chart")
    report = report_module.build([runs["two"]], placement_sample=0, title="again")
    assert report.write(out).keys() == first.keys()  # the previous report is replaced
    assert not (out / "stale.png").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(sim.errors.SniffError, match="not empty and holds no sniff report"):
        report.write(other)
    assert (other / "notes.txt").read_text() == "mine"


# --- the numbers, against pandas on the same Parquet


def test_four_player_numbers_match_pandas(written, runs):
    report, _, _ = written
    games = pd.read_parquet(runs["four"] / "games")
    rounds = pd.read_parquet(runs["four"] / "rounds")
    n = len(games)
    # Which team was greedy's in each game, from the seat labels (not the rotation rule).
    greedy_team = np.where(games["seat0_strategy"].astype(str) == "greedy", 0, 1)
    winner_team = games["winner_team"].to_numpy()
    wins = {"greedy": int((winner_team == greedy_team).sum()),
            "random": int((winner_team == 1 - greedy_team).sum())}
    summary = report.summary[report.summary["run"] == "four"].set_index("side")
    merged = rounds.merge(pd.DataFrame({"game_id": games["game_id"], "gt": greedy_team}),
                          on="game_id")
    points = {"greedy": np.where(merged["gt"] == 0, merged["team0_points"],
                                 merged["team1_points"]),
              "random": np.where(merged["gt"] == 0, merged["team1_points"],
                                 merged["team0_points"])}
    for side in ("greedy", "random"):
        row = summary.loc[side]
        assert row["games"] == n and row["wins"] == wins[side]
        assert math.isclose(row["win_rate"], wins[side] / n)
        assert (row["low"], row["high"]) == pytest.approx(wilson_interval(wins[side], n))
        values = points[side].astype(float)
        assert row["points_per_round"] == pytest.approx(values.mean())
        assert row["points_se"] == pytest.approx(values.std(ddof=1) / math.sqrt(values.size))
        assert row["points_low"] == pytest.approx(values.mean() - Z95 * row["points_se"])

    seat = report.by_seat[report.by_seat["run"] == "four"]
    for team, name in ((0, "seats 0+2"), (1, "seats 1+3")):
        mask = greedy_team == team
        row = seat[(seat["side"] == "greedy") & (seat["position"] == name)].iloc[0]
        assert row["games"] == mask.sum()
        assert row["wins"] == (winner_team[mask] == team).sum()
    leader = report.by_leader[report.by_leader["run"] == "four"]
    leads = games["first_leader"].to_numpy() % 2 == greedy_team
    row = leader[(leader["side"] == "greedy")
                 & (leader["position"] == "own partnership leads round 1")].iloc[0]
    assert row["games"] == leads.sum()
    assert row["wins"] == (winner_team[leads] == greedy_team[leads]).sum()

    difference = report.differences[(report.differences["run"] == "four")].iloc[0]
    x = (winner_team == greedy_team).astype(float) - (winner_team == 1 - greedy_team)
    assert difference["estimate"] == pytest.approx(x.mean())
    assert difference["se"] == pytest.approx(x.std(ddof=1) / math.sqrt(n))
    assert difference["low"] == pytest.approx(x.mean() - Z95 * difference["se"])
    assert 0 <= difference["p_value"] < 1e-6

    dist = report.distributions["four"]
    shares = rounds["end_reason"].astype(str).value_counts(normalize=True)
    endings = dist["endings"][dist["endings"]["side"] == ""].set_index("ending")["share"]
    for ending in ("domino", "blocked", "target"):
        assert endings[ending] == pytest.approx(shares.get(ending, 0.0))
    settled = merged[merged["end_reason"].astype(str) != "target"]
    greedy_penalty = np.where(settled["gt"] == 0,
                              settled["seat0_penalty"] + settled["seat2_penalty"],
                              settled["seat1_penalty"] + settled["seat3_penalty"])
    assert dist["penalty_mean"]["greedy"][0] == pytest.approx(greedy_penalty.mean())
    penalties = dist["penalties"]
    counts = penalties[penalties["side"] == "greedy"].set_index("penalty")["rounds"]
    assert counts.to_dict() == pd.Series(greedy_penalty).value_counts().sort_index().to_dict()
    decided = winner_team >= 0
    margin = (games["team0_score"] - games["team1_score"]).abs()[decided]
    assert dist["margin_mean"][0] == pytest.approx(margin.mean())
    assert dist["length_mean"][0] == pytest.approx(games["rounds"].mean())
    length = dist["length"].set_index("rounds")["games"]
    assert length.to_dict() == games["rounds"].value_counts().sort_index().to_dict()
    per_round = dist["points_per_round"]
    greedy_points = per_round[per_round["side"] == "greedy"].set_index("points")["rounds"]
    assert greedy_points.to_dict() == pd.Series(points["greedy"]).value_counts().to_dict()


def test_duplicate_paired_estimate_matches_pandas_and_the_run_summary(written, runs):
    report, _, _ = written
    games = pd.read_parquet(runs["dup"] / "games")
    x = (games["winner_side"] == 0).astype(float) - (games["winner_side"] == 1)
    per_deal = x.groupby(games["deal_id"]).mean()
    rows = report.differences[report.differences["run"] == "dup"].set_index("unit")
    paired = rows.loc["deal"]
    assert paired["n"] == len(per_deal) == len(games) // 2
    assert paired["estimate"] == pytest.approx(per_deal.mean())
    assert paired["se"] == pytest.approx(per_deal.std(ddof=1) / math.sqrt(len(per_deal)))
    summary = sim.load(runs["dup"]).manifest["summary"]["duplicate"][0]
    assert Z95 * paired["se"] == pytest.approx(summary["paired_half_width"])
    assert Z95 * rows.loc["game", "se"] == pytest.approx(summary["independent_half_width"])


def test_three_player_numbers_match_pandas(runs):
    report = report_module.build([runs["three"]], placement_sample=0)
    games = pd.read_parquet(runs["three"] / "games")
    labels = sim.load(runs["three"]).config["labels"]
    assert list(report.summary["side"]) == ["greedy (seat 0)", "random (seat 1)",
                                            "random (seat 2)"]
    assert list(report.summary["strategy"]) == ["greedy", "random", "random"]
    winner = games["winner_side"].to_numpy()
    assert list(report.summary["wins"]) == [int((winner == k).sum()) for k in range(3)]
    # docs/simulate.md: seat s of a game with rotation r is played by lineup seat (s + r) % 3.
    rotation = games["rotation"].to_numpy()
    greedy_seat = (0 - rotation) % 3
    assert labels[0] == "greedy"
    leader = report.by_leader[(report.by_leader["side"] == "greedy (seat 0)")]
    leader = leader.set_index("position")
    first = games["first_leader"].to_numpy()
    for order, name in enumerate(["leads round 1", "plays 2nd in round 1",
                                  "plays 3rd in round 1"]):
        mask = (greedy_seat - first) % 3 == order
        assert leader.loc[name, "games"] == mask.sum()
        assert leader.loc[name, "wins"] == (winner[mask] == 0).sum()
    assert len(report.differences) == 3  # every pair of the three sides
    assert report.matrix is None  # two strategies: no ratings


def test_placement_sample_is_the_runs_own_games(written, runs):
    report, _, _ = written
    sample = report.placements["four"]
    assert sample["games"] == 40 and sample["first_game"] == 0 and "40 games" in sample["note"]
    rounds = pd.read_parquet(runs["four"] / "rounds")
    games = pd.read_parquet(runs["four"] / "games")
    ids = games["game_id"][:40]
    greedy_team = np.where(games["seat0_strategy"].astype(str) == "greedy", 0, 1)[:40]
    mine = rounds[rounds["game_id"].isin(ids)].merge(
        pd.DataFrame({"game_id": ids, "gt": greedy_team}), on="game_id")
    table = sample["table"]
    for side, own in (("greedy", True), ("random", False)):
        rows = table[table["side"] == side]
        total = int((rows["points"] * rows["placements"]).sum())
        expected = np.where((mine["gt"] == 0) == own, mine["team0_points"],
                            mine["team1_points"]).sum()
        assert total == expected
        assert set(rows["points"]) <= set(range(0, 100, 5))
    placements = games["placements"][:40].sum()
    assert sample["placements"] == placements


# --- bad input: one clear line each


def test_bad_input_gets_one_clear_line(runs, tmp_path, capsys):
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    part = runs["four"] / "games" / "part-000000.parquet"
    # a run whose games table lacks a column
    broken = tmp_path / "broken"
    shutil.copytree(runs["four"], broken)
    table = pq.read_table(broken / "games" / "part-000001.parquet")
    pq.write_table(table.drop(["winner_side"]), broken / "games" / "part-000001.parquet")
    altered = tmp_path / "altered"  # the ledger (sim.checks.integrity) catches the rewrite first
    shutil.copytree(broken, altered)
    reledger(broken)  # the ledger made to agree: what is left to find is the missing column
    # a run with no finished chunk
    no_games = tmp_path / "no-games"
    no_games.mkdir()
    manifest = json.loads((runs["four"] / "manifest.json").read_text())
    (no_games / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    complete = tmp_path / "complete"  # the same, said to be complete: its parts are missing
    complete.mkdir()
    shutil.copy(runs["four"] / "manifest.json", complete / "manifest.json")
    out = tmp_path / "out"
    cases = [
        ([str(tmp_path / "missing")], "no such run folder"),
        ([str(empty_dir)], "is not a sniff run: it has no manifest.json"),
        ([str(part)], "is a Parquet file; sniff report reads run folders"),
        ([str(runs["four"] / "manifest.json")], "is a file, not a run folder"),
        ([str(broken)], "part-000001.parquet lacks column(s) winner_side"),
        ([str(altered)], "part-000001.parquet: is "),
        ([str(no_games)], "holds no finished games"),
        ([str(complete)], "part-000000.parquet: missing: the run is complete"),
        ([str(runs["four"]), str(runs["two"])],
         "cannot mix runs with different player counts in one report: four (4), two (2)"),
        ([str(runs["four"]), "--placement-sample", "-1"], "--placement-sample must be 0"),
    ]
    for args, message in cases:
        code, stdout, err = run_main(["report", *args, "-o", str(out)], capsys)
        assert code == 2, (args, err)
        assert err.startswith("sniff: error: ") and message in err, (message, err)
        assert err.count("\n") == 1 and "Traceback" not in err
        assert not out.exists()
    hint = tmp_path / "holder"
    shutil.copytree(runs["two"], hint / "inner")
    code, _, err = run_main(["report", str(hint)], capsys)
    assert code == 2 and "(it holds runs: inner)" in err


def test_cli_writes_the_report(runs, tmp_path, capsys):
    out = tmp_path / "cli"
    code, stdout, err = run_main(["report", str(runs["two"]), "-o", str(out),
                                  "--placement-sample", "0", "--title", "Two players"], capsys)
    assert code == 0, err
    assert str(out / "report.html") in stdout
    page = (out / "report.html").read_text()
    assert "<title>Two players</title>" in page
    assert "placement scores not sampled" in page
    assert not list(out.glob("*placement-scores.png"))


# --- effects, differences' orientation and chart, comparisons across runs


def test_effects_match_pandas_and_are_in_the_pages(written, runs):
    report, out, _ = written
    games = pd.read_parquet(runs["four"] / "games")
    greedy_team = np.where(games["seat0_strategy"].astype(str) == "greedy", 0, 1)
    led = greedy_team == games["first_leader"].to_numpy() % 2
    won = games["winner_team"].to_numpy() == greedy_team
    row = report.effects["four"]["leader_by_side"].set_index("side").loc["greedy"]
    assert row["win_rate_leading"] == pytest.approx(won[led].mean())
    assert row["win_rate_not_leading"] == pytest.approx(won[~led].mean())
    assert row["estimate"] == pytest.approx(won[led].mean() - won[~led].mean())
    assert row["low"] < row["estimate"] < row["high"]
    # signed margins: greedy's final score minus random's
    scores = games[["team0_score", "team1_score"]].to_numpy()
    margin = scores[np.arange(len(games)), greedy_team] - scores[np.arange(len(games)),
                                                                 1 - greedy_team]
    margins = report.effects["four"]["margins"].set_index("side")
    assert margins.loc["greedy", "mean"] == pytest.approx(margin.mean())
    assert margins.loc["random", "mean"] == pytest.approx(-margin.mean())
    assert margins.loc["greedy", "q50"] == pytest.approx(np.quantile(margin, 0.5))
    seats = report.effects["four"]["seats"]
    assert list(seats["position"]) == ["seats 0+2", "seats 1+3"]
    markdown = (out / "report.md").read_text()
    assert "## Effects: leading, seats and final margins" in markdown
    assert "| leading round 1: greedy |" in markdown and "| seats 0+2 |" in markdown


def test_differences_read_stronger_minus_weaker_and_the_axis_stays_within_100_points(
        written, runs):
    from sim.display import charts

    report, out, _ = written
    assert (report.differences["estimate"] >= 0).all()
    assert (report.differences["win_rate_a"] >= report.differences["win_rate_b"]).all()
    figure = charts.differences(report.differences)
    low, high = figure.axes[0].get_xlim()
    assert -1.0 <= low and high <= 1.0
    # every column of the differences table has a header, with or without paired rows
    for markdown in [(out / "report.md").read_text()]:
        header = next(line for line in markdown.splitlines() if line.startswith("| run | diff"))
        assert "|  |" not in header and header.count("|") - 1 == 10
    single = report_module.build([runs["two"]], placement_sample=0)
    from sim.display.blocks import Table
    from sim.report.html import blocks

    (table,) = [block for block in blocks(single) if isinstance(block, Table)
                and block.columns[:2] == ["run", "difference"]]
    assert all(column.strip() for column in table.columns)
    assert all(len(row) == len(table.columns) and row[-1].strip() for row in table.rows)


def test_across_runs_lists_each_comparison_once(runs):
    import copy
    import dataclasses

    from sim.report.aggregate import read_figures
    from sim.report.tables import comparison_rows
    from sim.store.rundata import open_runs

    three = open_runs([runs["three"]])[0]  # greedy, random, random
    read_figures([three])  # the counts the tables are made of, read from the parts
    manifest = copy.deepcopy(three.manifest)
    manifest["config"]["labels"] = ["greedy", "heavy", "random"]
    other = dataclasses.replace(three, name="other", manifest=manifest)
    rows = comparison_rows([three, other])
    keys = [(r["run_a"], r["side_a"].split(" (")[0], r["run_b"], r["side_b"]) for r in rows]
    # random (seat 1) and random (seat 2) against heavy, both facing greedy and random:
    # one comparison, listed once
    assert keys == [("three", "random", "other", "heavy")]


def test_ctrl_c_while_a_chart_is_drawn_is_a_stop_not_a_traceback() -> None:
    """G07: Ctrl-C inside matplotlib's C code came out as its ValueError ("Invalid bounding
    box"); under ``ctrl_c_stops`` (around ``sniff report``'s build and write) any error
    after a Ctrl-C is the stop (exit 130, "sniff: interrupted")."""
    import os
    import signal
    import time

    from sim.cli.commands import ctrl_c_stops
    from sim.errors import Stopped

    def draw_like_agg() -> None:  # C code that turns the interrupt into its own error
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            raise ValueError("Invalid bounding box") from None

    with pytest.raises(Stopped) as stopped, ctrl_c_stops():
        draw_like_agg()
    assert stopped.value.exit_status == 130
    with pytest.raises(ValueError, match="not a stop"), ctrl_c_stops():
        raise ValueError("not a stop")  # without Ctrl-C an error stays itself
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

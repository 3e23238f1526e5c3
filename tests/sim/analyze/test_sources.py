"""A person's game analysed by ``sniff analyze``: a game played at the browser table
(its downloaded trace) and one played with ``sniff play --trace``, end to end.

The browser's game is played through the app itself (Starlette's TestClient, the first
legal move each time); its trace is what *Download trace* gives, under the name it gives.
The analysis of the person's seat must value exactly the person's decisions with a choice,
with the very figures, marks and accuracy the browser's own analysis shows, and write
positions ``sniff hint`` reads.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sim.analyze.folder import read_record, table_files
from sim.hint.position import parse_position
from tests.helpers.cli import invoke, one_line, sniff

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from sim.serve.app import create_app  # noqa: E402
from sim.serve.guard import TOKEN_HEADER, Guard  # noqa: E402
from sim.serve.sessions import Sessions  # noqa: E402

pytestmark = pytest.mark.usefixtures("hint_search_compiled")


@pytest.fixture()
def served_client():
    """The app as the page sees it: its token, no rate limit."""
    guard = Guard(("testserver",), rate=1e6, burst=10**6)
    with TestClient(create_app(Sessions(), guard), raise_server_exceptions=False,
                    headers={TOKEN_HEADER: guard.token}) as client:
        yield client


def play_at_the_table(client) -> dict:
    """A 2-player game to a house target of 40 points (the browser's target field), the
    person always playing the first legal move; the finished view."""
    view = client.post("/api/games", json={"players": 2, "seat": 1, "opponents": "greedy",
                                           "target": 40, "seed": 5}).json()
    while view["phase"] != "over":
        url = f"/api/games/{view['session']}"
        if view["phase"] == "settled":
            view = client.post(url + "/next", json={"version": view["version"]}).json()
        else:
            move = view["options"][0]["move"]
            view = client.post(url + "/move", json={"move": move,
                                                    "version": view["version"]}).json()
    return view


def decisions_of(folder) -> pd.DataFrame:
    return pd.concat(pd.read_parquet(path) for path in table_files(folder)["decisions"])


def download_name(response) -> str:
    """The file name *Download trace* saves the game under."""
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("attachment; filename=")
    return disposition.split("filename=", 1)[1].strip('"')


FIGURES = ["decision", "round", "turn", "seat", "phase", "kind", "moves", "played", "best",
           "win_played", "win_best", "loss", "loss_full", "loss_low", "loss_high", "separated",
           "best_separated", "deals", "exact"]


def test_a_game_played_at_the_browser_table_is_analysed(served_client, tmp_path):
    client = served_client
    view = play_at_the_table(client)
    trace = client.get(f"/api/games/{view['session']}/trace")
    assert trace.status_code == 200
    path = tmp_path / download_name(trace)
    assert path.name == "serve-seed5.jsonl"
    path.write_text(trace.text)
    assert json.loads(trace.text.splitlines()[0])["strategies"] == ["greedy", "human"]
    out = tmp_path / "analysis"
    code, text, err = invoke(["analyze", str(path), "--strategy", "human", "--budget", "8",
                              "-o", str(out), "-q"])
    assert code == 0, err
    assert text.splitlines()[2].startswith("human ")
    rows = decisions_of(out).reset_index(drop=True)
    assert set(rows["strategy"]) == {"human"} and set(rows["seat"]) == {1}
    assert read_record(out)["sources"][0]["kind"] == "trace"
    # the browser's analysis is sniff analyze's on the downloaded trace: every figure
    board = client.post(f"/api/games/{view['session']}/analysis", json={"budget": 8}).json()
    assert board["command"] == f"sniff analyze {path.name} --strategy human --budget 8"
    assert len(board["decisions"]) == len(rows) > 5
    for mine, theirs in zip(board["decisions"], rows.to_dict("records")):
        assert {column: mine[column] for column in FIGURES} == {
            column: theirs[column] for column in FIGURES}
        assert mine["grade"] == theirs["mark"]
    assert len({d["win_played"] for d in board["decisions"]}) > 1  # real values, not a default
    summary = json.loads((out / "summary.json").read_text())["strategies"][0]
    assert board["accuracy"] == pytest.approx(summary["accuracy"], abs=1e-9)
    for column in ("loss", "loss_full", "noise_share", "inaccuracies", "mistakes", "blunders"):
        assert board["summary"][column] == pytest.approx(summary[column], abs=1e-9), column
    assert board["grades"] == {"inaccuracy": summary["inaccuracies"],
                               "mistake": summary["mistakes"], "blunder": summary["blunders"]}
    # each row names its placement: the person's play of that move, in that round
    history = client.get(f"/api/games/{view['session']}/history").json()["frames"]
    for row in board["decisions"]:
        frame = history[row["event"]]
        assert (frame["kind"], frame["seat"], frame["round"]) == ("play", 1, row["round"]), row
    assert parse_position((out / "positions" / "01.txt").read_text()).legal_moves()
    # its end at the house target (40 points) must be where a placement reached it
    lines = trace.text.splitlines()
    end = json.loads(lines[-1])
    assert end["reason"] == "target" and max(end["scores"]) < 250
    end["scores"] = [score + 5 for score in end["scores"]]
    path.write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    code, _, err = invoke(["analyze", str(path), "-o", str(tmp_path / "edited"), "-q"])
    one_line(code, err, "a target no placement reached")


def test_a_game_played_with_sniff_play_is_analysed(tmp_path):
    trace = tmp_path / "game.jsonl"
    played = sniff("play", "--players", "2", "--seat", "1", "--opponents", "greedy", "--seed",
                   "7", "--trace", str(trace), stdin="1\n" * 3000)
    assert played.returncode == 0, played.stderr
    out = tmp_path / "analysis"
    code, _, err = invoke(["analyze", str(trace), "--strategy", "human", "--budget", "8",
                           "-o", str(out), "-q"])
    assert code == 0, err
    rows = decisions_of(out)
    assert set(rows["strategy"]) == {"human"} and len(rows) > 5
    strategies = pd.read_csv(out / "strategies.csv")
    assert strategies["games"].tolist() == [1]
    # one game: no interval over games can be drawn, and none is claimed
    assert strategies[["loss_low", "loss_high"]].isna().all().all()

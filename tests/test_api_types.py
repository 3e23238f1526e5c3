"""A library setting of the wrong type is a ``SettingError`` naming the setting, never an
AttributeError or TypeError from deep inside (#51, campaign 2: K165, K168)."""

from __future__ import annotations

import pytest

import sim
from sim.errors import SettingError


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return sim.simulate(2, "greedy,random", 20, 1, out=tmp_path_factory.mktemp("types") / "r")


@pytest.mark.parametrize("setting, value", [
    ("players", 2.0), ("players", "2"), ("players", True), ("duplicate", "no"),
    ("rounds", "yes")])
def test_simulate_names_a_setting_of_the_wrong_type(tmp_path, setting, value) -> None:
    """``players=2.0`` was a TypeError from the lineup code; ``duplicate="no"`` played
    duplicate deals (a non-empty text is true)."""
    settings = {"players": 2, "strategies": "greedy,random", "games": 10, setting: value}
    with pytest.raises(SettingError, match=f"^{setting} must be .*got {value!r}$"):
        sim.simulate(**settings, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("sql", [None, b"select count(*) from games", 3])
def test_run_query_names_sql_of_the_wrong_type(run, sql) -> None:
    with pytest.raises(SettingError, match="^sql must be the text of one SELECT statement"):
        run.query(sql)
    assert int(run.query("select count(*) as n from games")["n"][0]) == 20

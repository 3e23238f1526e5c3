"""A tournament none of whose pairings is played yet: the run ids ``tournament.json``
recorded when it started bind its settings, so an edited ``games_per_pair`` or
``precision`` is one line at ``--resume`` naming ``tournament.json`` and the pairing's run
id, before anything is written (it was refused only when the first pairing's folder was
checked, as "--out .../pairs/01-... is inside the sniff folder", which blamed no edit; #51)."""

from __future__ import annotations

import json
import shutil

import pytest

from sim.tournament import run_tournament
from tests.helpers.cli import one_line, run_main


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run-ids") / "t"
    run_tournament(2, "greedy,random,heavy", 40, seed=3, out=folder, chunk_size=40)
    return folder


def unplayed(tournament, tmp_path, edit=None):
    """A copy as a tournament stopped before its first pairing: no pairing folder."""
    folder = tmp_path / "copy"
    shutil.copytree(tournament, folder)
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
def test_an_edited_setting_is_refused_before_any_game(tournament, tmp_path, capsys,
                                                      edit) -> None:
    folder = unplayed(tournament, tmp_path, edit)
    code, out, err = run_main(["tournament", "-o", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, "its settings do not give pairing 1's run id")
    assert not any((folder / "pairs").iterdir())


def test_the_recorded_settings_resume(tournament, tmp_path, capsys) -> None:
    folder = unplayed(tournament, tmp_path)
    code, out, err = run_main(["tournament", "-o", str(folder), "--resume", "-q"], capsys)
    assert code == 0 and "3 pairings, 40 games each" in out, (out, err)

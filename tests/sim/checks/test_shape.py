"""A folder never makes sniff run code, and a folder that lies is refused, not believed.

What every reader checks of what a folder says (docs/data-format.md, "What is verified"): a
plugin module its manifest names, a manifest edited after the games were written, a
tournament's pairing pointing at another run, an openings summary edited.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import sim
from sim.checks import integrity
from sim.errors import SniffError
from sim.openings.study import run_openings
from sim.tournament import load as load_tournament
from sim.tournament import run_tournament
from tests.helpers.cli import copy_of, load_unverified, one_line, run_main


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A complete 4-player run of two chunks (copied by each test that edits it)."""
    folder = tmp_path_factory.mktemp("trust") / "run"
    sim.simulate(4, "greedy,random", 400, 1, chunk_size=200, out=folder)
    return folder


def edit_manifest(run: Path, edit) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    edit(manifest["config"])
    (run / "manifest.json").write_text(json.dumps(manifest))


def forge_everywhere(run: Path, edit) -> None:
    """Edit the configuration in the manifest and in every part's footer, and record the
    parts' new bytes in the ledger: a folder that lies consistently."""
    edit_manifest(run, edit)
    records = integrity.read_ledger(run)
    for record in records.values():
        for table, part in record["parts"].items():
            path = run / table / part["file"]
            data = pq.read_table(path)
            meta = json.loads(data.schema.metadata[b"sniff"])
            edit(meta["config"])
            pq.write_table(data.replace_schema_metadata(
                {**data.schema.metadata, b"sniff": json.dumps(meta).encode()}), path)
            record["parts"][table] = integrity.part_record(path, part["rows"])
    (run / integrity.LEDGER).write_text("".join(json.dumps(r) + "\n" for r in records.values()))


def test_a_plugin_module_a_folder_names_is_never_imported(played, tmp_path, capsys,
                                                          monkeypatch) -> None:
    """A run whose manifest and parts name a strategy of an unloaded module: report,
    resume and ``sim.load`` import nothing; the resume says which ``--plugin`` to pass."""
    marker = tmp_path / "ran"
    (tmp_path / "evilmod.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)  # the module is importable from here, as a planted one would be
    run = copy_of(played, tmp_path)

    def name_a_plugin(config: dict) -> None:
        config["strategy_names"][1] = config["strategy_names"][3] = "doubles_evil"
        config["modules"][1] = config["modules"][3] = "evilmod"

    forge_everywhere(run, name_a_plugin)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = run_main(["simulate", "-o", str(run), "--resume", "-q"], capsys)
    one_line(code, err, "from module 'evilmod', which is not loaded")
    assert "--plugin evilmod" in err
    code, out, err = run_main(["report", str(run), "-o", str(tmp_path / "report")], capsys)
    assert code == 0, err
    assert "--plugin evilmod" in (tmp_path / "report" / "report.md").read_text()
    assert load_unverified(run).summary.games == 400
    assert not marker.exists() and "evilmod" not in sys.modules


@pytest.mark.parametrize("field, edit", [
    ("labels", lambda c: c["labels"].reverse()),
    ("strategies", lambda c: c["strategies"].reverse()),
    ("players", lambda c: c.update(players=2)),
    ("seed", lambda c: c.update(seed=7)),
    ("duplicate", lambda c: c.update(duplicate=True)),
    ("round_cap", lambda c: c.update(round_cap=50)),
])
def test_an_edited_manifest_is_named_by_every_reader(played, tmp_path, capsys, field,
                                                    edit) -> None:
    """Swapped labels credited random with greedy's wins; 2 players on a 4-player run gave a
    2-player summary: now verify, report, resume and ``sim.load`` name the field."""
    run = copy_of(played, tmp_path)
    edit_manifest(run, edit)
    said = f"config.{field} is "
    for command in (["verify", str(run)], ["report", str(run), "-o", str(tmp_path / "r")],
                    ["simulate", "-o", str(run), "--resume", "-q"]):
        code, out, err = run_main(command, capsys)
        assert code == 2 and said in out + err and "Traceback" not in err, (command, out, err)
    with pytest.raises(SniffError, match=said):
        sim.load(run).summary  # noqa: B018
    assert not (tmp_path / "r").exists()


def test_a_part_that_disagrees_alone_is_the_bad_part(played, tmp_path, capsys) -> None:
    """When the manifest agrees with the other parts, the one that differs is set aside and
    replayed by a resume, not blamed on the manifest."""
    run = copy_of(played, tmp_path)
    path = run / "games" / integrity.part_name(1)
    data = pq.read_table(path)
    meta = json.loads(data.schema.metadata[b"sniff"])
    meta["config"]["seed"] = 99
    pq.write_table(data.replace_schema_metadata({b"sniff": json.dumps(meta).encode()}), path)
    records = integrity.read_ledger(run)
    records[1]["parts"]["games"] = integrity.part_record(path, 200)
    (run / integrity.LEDGER).write_text("".join(json.dumps(r) + "\n" for r in records.values()))
    code, out, err = run_main(["verify", str(run)], capsys)
    assert code == 2 and "part-000001.parquet: records another configuration" in out, out
    assert "1 of 2 chunks sound" in out
    code, out, err = run_main(["simulate", "-o", str(run), "--resume", "-q"], capsys)
    assert code == 0, err
    code, out, err = run_main(["verify", str(run)], capsys)
    assert code == 0 and "2 of 2 chunks sound" in out, out


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("trust") / "tournament"
    run_tournament(2, "greedy,random,heavy", 100, 1, out=folder)
    return folder


@pytest.mark.parametrize("how", ["parent", "absolute", "link", "another run copied in",
                                 "seed"])
def test_a_pairing_is_only_what_the_tournament_implies(tournament, played, tmp_path, capsys,
                                                       how) -> None:
    """A pairing pointed at ``../another-run`` put that run's games into the matrix."""
    folder = tmp_path / "t"
    shutil.copytree(tournament, folder)
    manifest = json.loads((folder / "tournament.json").read_text())
    first = manifest["pairings"][0]
    inside = folder / first["folder"]
    if how == "parent":
        first["folder"] = f"../{played.name}"
        shutil.copytree(played, tmp_path / played.name)
    elif how == "absolute":
        first["folder"] = str(played)
    elif how == "link":
        shutil.rmtree(inside)
        inside.symlink_to(played, target_is_directory=True)
    elif how == "another run copied in":
        shutil.rmtree(inside)
        shutil.copytree(played, inside)
    else:
        first["seed"] += 1
    (folder / "tournament.json").write_text(json.dumps(manifest))
    for command in (["verify", str(folder)], ["report", str(folder), "-o", str(tmp_path / "r")]):
        code, out, err = run_main(command, capsys)
        one_line(code, err, "tournament.json: pairing 1 ")
    with pytest.raises(SniffError, match="pairing 1 "):
        load_tournament(folder)


def test_a_sound_tournament_still_reads(tournament, capsys) -> None:
    code, out, err = run_main(["verify", str(tournament)], capsys)
    assert code == 0 and out.count("1 of 1 chunks sound") == 3, out
    assert len(load_tournament(tournament).runs) == 3


@pytest.fixture(scope="module")
def openings(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("trust") / "openings"
    run_openings(2, "greedy", 20, 1, out=folder)
    return folder


@pytest.mark.parametrize("field, edit", [
    ("best_tile", lambda s: s.update(best_tile="0-0")),
    ("config.seed", lambda s: s["config"].update(seed=9)),
    ("lead_value.mean", lambda s: s["lead_value"].update(mean=5.0)),
])
def test_an_edited_openings_summary_is_named(openings, tmp_path, capsys, field, edit) -> None:
    folder = tmp_path / "o"
    shutil.copytree(openings, folder)
    summary = json.loads((folder / "summary.json").read_text())
    edit(summary)
    (folder / "summary.json").write_text(json.dumps(summary))
    said = f"summary.json: its {field} does not match"
    code, out, err = run_main(["verify", str(folder)], capsys)
    assert code == 2 and said in out, out
    for command in (["report", str(folder), "-o", str(tmp_path / "r")],
                    ["query", str(folder), "select count(*) from games"]):
        code, out, err = run_main(command, capsys)
        one_line(code, err, said)


def test_a_tournament_folder_has_one_writer(tournament, tmp_path, capsys) -> None:
    """Two tournaments (or resumes) into one folder at once: the second is refused in one
    line and changes nothing."""
    from sim.store.lock import RunLock

    folder = tmp_path / "t"
    shutil.copytree(tournament, folder)
    before = (folder / "tournament.json").read_bytes()
    with RunLock(folder) as other:
        other.acquire("another sniff tournament")
        for command in (["tournament", "-o", str(folder), "--resume", "-q"],
                        ["tournament", "-o", str(folder), "--overwrite", "--strategies",
                         "greedy,random", "-q"]):
            code, out, err = run_main(command, capsys)
            one_line(code, err, "is being written by")
    assert (folder / "tournament.json").read_bytes() == before


@pytest.mark.parametrize("command", [
    ["tournament", "--strategies", "greedy,random"],
    ["learn", "--players", "2", "--iterations", "1", "--games", "20", "--eval-games", "0"],
])
def test_no_tournament_or_training_inside_another_runs_table(played, capsys,
                                                             command) -> None:
    code, out, err = run_main([*command, "-o", str(played / "rounds" / "t"), "-q"], capsys)
    one_line(code, err, "inside the")
    code, out, err = run_main([*command, "-o", str(played / "games" / "t"), "-q"], capsys)
    one_line(code, err, "inside the")
    assert sorted(p.name for p in (played / "games").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]


@pytest.mark.parametrize("edit, said", [
    (lambda m: m.update(config=5), "config is not a table of settings"),
    (lambda m: m.pop("config"), "config is not a table of settings"),
    (lambda m: m["config"].update(chunk_size=0), "config.chunk_size is 0"),
    (lambda m: m["config"].update(chunk_size="x"), "config.chunk_size is 'x'"),
    (lambda m: m["config"].update(games=10**30), "config.games is 1000"),
    (lambda m: m["config"].update(labels=["a"]), "config.labels names 1 seats, but config.p"),
    (lambda m: m["config"].update(labels=[1, 2, 3, 4]), "config.labels is [1, 2, 3, 4]"),
    (lambda m: m.update(stopped={"games": "x"}), "stopped is {'games': 'x'}"),
    (lambda m: m.update(sessions=[5]), "sessions is [5]"),
])
def test_a_manifest_of_no_runs_shape_is_one_line(played, tmp_path, capsys, edit, said) -> None:
    """Fields of the wrong type or range (a divisor of 0, a plan of 10^30 games) were
    tracebacks or a check without end: refused where the manifest is read."""
    run = copy_of(played, tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    edit(manifest)
    (run / "manifest.json").write_text(json.dumps(manifest))
    for command in (["verify", str(run)], ["report", str(run), "-o", str(tmp_path / "r")],
                    ["simulate", "-o", str(run), "--resume", "-q"],
                    ["query", str(run), "select count(*) from games"]):
        code, out, err = run_main(command, capsys)
        one_line(code, err, said)
    with pytest.raises(SniffError, match="the run folder is damaged or was edited"):
        sim.load(run)


def test_a_ledger_line_without_end_is_no_record(played, tmp_path, capsys) -> None:
    run = copy_of(played, tmp_path)
    with open(run / integrity.LEDGER, "ab") as handle:
        handle.write(b'{"chunk": 5, "x": "' + b"y" * (integrity.MAX_LEDGER_LINE * 3))
    assert sorted(integrity.read_ledger(run)) == [0, 1]
    code, out, err = run_main(["verify", str(run)], capsys)
    assert code == 0 and "2 of 2 chunks sound" in out, out


@pytest.mark.parametrize("edit, said", [
    (lambda m: m.update(config=5), "config is not a table of settings"),
    (lambda m: m.update(pairings=5), "pairings is 5"),
    (lambda m: m["config"].update(players="2"), "config.players is '2'"),
    (lambda m: m["config"].update(seed="x"), "config.seed is 'x'"),
    (lambda m: m["pairings"].__setitem__(0, "x"), "pairings is ['x'"),
])
def test_a_tournament_manifest_of_no_tournaments_shape_is_one_line(tournament, tmp_path,
                                                                   capsys, edit, said) -> None:
    folder = tmp_path / "t"
    shutil.copytree(tournament, folder)
    manifest = json.loads((folder / "tournament.json").read_text())
    edit(manifest)
    (folder / "tournament.json").write_text(json.dumps(manifest))
    for command in (["verify", str(folder)], ["report", str(folder), "-o", str(tmp_path / "r")],
                    ["tournament", "-o", str(folder), "--resume", "-q"]):
        code, out, err = run_main(command, capsys)
        one_line(code, err, said)


@pytest.mark.parametrize("edit, said", [
    (lambda m: m.update(config=5), "config does not hold the tuning's settings"),
    (lambda m: m["config"].update(against=5), "its config is not one sniff tune records"),
    # the recorded setting, as the manifest names it (the command was not given --popsize)
    (lambda m: m["config"].update(popsize=0), "(popsize must be an integer of at least 2, got 0)"),
    (lambda m: m.update(sessions=5), "sessions is not a list"),
    (lambda m: m.update(generations_done="x"), "generations_done is 'x', not a count"),
])
def test_a_tuning_manifest_of_no_tunings_shape_is_one_line(tmp_path, capsys, edit,
                                                           said) -> None:
    """These were tracebacks of ``sniff tune --resume``."""
    from sim.tune.folder import load as load_tuning
    from sim.tune.study import tune

    folder = tmp_path / "tuning"
    tune("weighted", "greedy", players=2, games=800, games_per_trial=100, popsize=4,
         validate_games=0, out=folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    manifest["status"] = "interrupted"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = run_main(["tune", "-o", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, said)
    with pytest.raises(SniffError, match="the tuning folder is damaged or was edited"):
        load_tuning(folder)


@pytest.fixture(scope="module")
def training(tmp_path_factory) -> Path:
    from sim.learn.config import LearnConfig
    from sim.learn.training import learn

    folder = tmp_path_factory.mktemp("trust") / "training"
    learn(LearnConfig(players=2, iterations=1, games=40, eval_games=0, hidden="8"), folder)
    return folder


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("name, edit, said", [
    ("settings.json", lambda p: p.write_text("5"), "is not a sniff learn folder"),
    ("settings.json", lambda p: _edit_json(p, lambda d: d.update(players="2")),
     "settings.json: players is '2'"),
    ("settings.json", lambda p: _edit_json(p, lambda d: d.update(games=0)),
     "(games must be between 2 and"),  # the recorded setting, as settings.json names it
    ("state.json", lambda p: p.write_text("5"), "its training state"),
    ("state.json", lambda p: _edit_json(p, lambda d: d.update(iterations_done=-3)),
     "its training state"),
])
def test_a_training_folder_of_no_trainings_shape_is_one_line(training, tmp_path, capsys,
                                                             name, edit, said) -> None:
    """These were tracebacks (or a snapshot named iter--03) of ``sniff learn --resume``."""
    folder = tmp_path / "t"
    shutil.copytree(training, folder)
    edit(folder / name)
    code, out, err = run_main(["learn", "-o", str(folder), "--resume", "--iterations", "2",
                               "-q"], capsys)
    one_line(code, err, said)


def test_a_torn_training_log_line_is_no_iteration(training, tmp_path) -> None:
    from sim.learn.curve import read_log

    folder = tmp_path / "t"
    shutil.copytree(training, folder)
    with open(folder / "log.jsonl", "a") as handle:
        handle.write('{"iteration": 2, "win_r\n{{{{\n[1]\n')
    assert [row["iteration"] for row in read_log(folder)] == [1]


def test_a_model_path_cannot_become_code(tmp_path, monkeypatch) -> None:
    """A model file named ``x\"\"\"; import os; os.system(...) #.npz`` closed the docstring of
    its generated module, and the rest of its name ran at import: the path is now an ASCII
    comment."""
    from strategies import get
    from strategies.learned import model_files
    from strategies.learned.player import shipped_path

    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    name = 'x"""; import os; os.system("touch ran") #\u00e9\n.npz'
    shutil.copy(shipped_path(2), tmp_path / name)
    strategy = model_files.model_strategy(get("learned"), name)
    generated = next((tmp_path / "cache" / "learned").glob("sniff_learned_*.py"))
    first = generated.read_text(encoding="ascii").split("\n", 1)[0]
    assert first.startswith("# Generated") and "\\n" in first and "\\xe9" in first
    assert not (tmp_path / "ran").exists()
    # Its compiled wrapper is named by the strategy's name without the path.
    import ast

    from sim.kernels.generate import chooser_source

    tree = ast.parse(chooser_source(strategy))
    calls = {node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute)}
    assert "system" not in calls and "import os" not in ast.get_docstring(tree)
    assert "strategy learned." in ast.get_docstring(tree)


def test_a_model_that_inflates_without_end_is_not_read(tmp_path, monkeypatch) -> None:
    import numpy as np

    from strategies.learned import model_files
    from strategies.learned.net import ModelError

    monkeypatch.setattr(model_files, "MAX_MODEL_BYTES", 2**20)
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, big=np.zeros(2**18))  # 2 MiB of zeros, a few KB on disk
    with pytest.raises(ModelError, match="holds 2,097,"):
        model_files.model_players(path)


@pytest.mark.parametrize("edit, said", [
    (lambda s: s.update(deals="x"), "its deals is \"x\""),
    (lambda s: s.pop("lead_value"), "its lead_value is null"),
    (lambda s: s.update(median_half_width=[1]), "its median_half_width is [1]"),
])
def test_an_openings_summary_of_no_runs_shape_is_one_line(openings, tmp_path, capsys, edit,
                                                          said) -> None:
    """With the footer's copy of the summary stripped and the record rewritten to match (a
    folder forged throughout), the figures a report prints were tracebacks."""
    import hashlib

    folder = tmp_path / "o"
    shutil.copytree(openings, folder)
    table = folder / "openings.parquet"
    pq.write_table(pq.read_table(table).replace_schema_metadata({}), table)
    summary = json.loads((folder / "summary.json").read_text())
    summary["files"]["openings.parquet"].update(
        bytes=table.stat().st_size, sha256=hashlib.sha256(table.read_bytes()).hexdigest())
    edit(summary)
    (folder / "summary.json").write_text(json.dumps(summary))
    for command in (["verify", str(folder)], ["report", str(folder), "-o", str(tmp_path / "r")],
                    ["query", str(folder), "select count(*) from openings"]):
        code, out, err = run_main(command, capsys)
        assert code == 2 and said in out + err and "Traceback" not in err, (command, out, err)


def test_a_tuning_manifest_without_every_setting_is_refused(tmp_path) -> None:
    """A tuning records every setting that decides its result; a manifest without one (a
    folder of another version of sniff) is refused in one line, never read as defaults."""
    from sim.errors import SniffError
    from sim.tune.folder import read
    from sim.tune.study import tune

    folder = tmp_path / "tuning"
    tune("weighted", "greedy", players=2, games=800, games_per_trial=100, popsize=4,
         validate_games=0, out=folder)
    assert read(folder)["config"]["strategy"].startswith("weighted:points=")
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["config"]["accept"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SniffError, match="config does not hold the tuning's settings"):
        read(folder)

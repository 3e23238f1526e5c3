"""The ``folders`` surface: run, tournament, openings, tuning and comparison folders edited,
truncated, linked or replaced, and the outputs every command writes."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from campaign_run import SIM, _mkfifo
from outcomes import Case, Context

# ------------------------------------------------------------------ folders


def folder_setup(base: str, how: Callable[[Context, Path], None]) -> Callable:
    def setup(ctx: Context) -> None:
        folder = ctx.copy(base)
        how(ctx, folder)
    return setup


def _replace(path: Path, how: str, ctx: Context) -> None:
    """``path`` (a file of a folder) made into something else."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if how == "fifo":
        _mkfifo(path)
    elif how == "zero":
        path.symlink_to("/dev/zero")
    elif how == "folder":
        path.mkdir()
    elif how == "link-victim":
        path.symlink_to(ctx.victim())
    elif how == "nested":
        path.write_text("[" * 200_000 + "]" * 200_000)
    elif how == "huge-number":
        path.write_text('{"games": 1' + "0" * 5000 + "}")
    elif how == "non-utf8":
        path.write_bytes(b'{"x": "\xff\xfe"}')
    elif how == "big":
        with open(path, "wb") as handle:
            handle.truncate(300 * 2**20)  # sparse: 300 MB of zeros, no disk
    elif how == "nan":
        path.write_text('{"games": NaN, "seed": Infinity}')


def _edit_json(path: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _run_folder_cases() -> list[Case]:
    """Run folders: the manifest, the ledger, the parts, the lock, links."""
    cases = []
    for how in ("fifo", "zero", "folder", "nested", "huge-number", "non-utf8", "big", "nan"):
        cases.append(Case("folders", f"run manifest.json: {how}", ["report", "run", "-o", "rep"],
                          folder_setup("run", lambda c, f, h=how: _replace(
                              f / "manifest.json", h, c))))
    for how in ("fifo", "zero", "folder", "big"):
        cases.append(Case("folders", f"run parts.jsonl: {how}", ["verify", "run"],
                          folder_setup("run", lambda c, f, h=how: _replace(
                              f / "parts.jsonl", h, c))))
    for how in ("fifo", "zero", "folder"):
        cases.append(Case("folders", f"a games part: {how}", ["query", "run",
                                                              "SELECT count(*) FROM games"],
                          folder_setup("run", lambda c, f, h=how: _replace(
                              f / "games" / "part-000000.parquet", h, c))))

    def lock(how):
        def edit(ctx, folder):
            _replace(folder / ".lock", how, ctx)
            ctx.protect(folder / "games", folder / "rounds")
        return edit
    for how in ("fifo", "link-victim", "folder", "zero"):
        cases.append(Case("folders", f"run .lock then --overwrite: {how}",
                          [*SIM[:-3], "-o", "run", "--overwrite", "-q"],
                          folder_setup("run", lock(how))))

    def games_link(ctx, folder):
        other = ctx.copy("run", "other")
        ctx.protect(other)
        shutil.rmtree(folder / "games")
        (folder / "games").symlink_to(other / "games")
    cases.append(Case("folders", "run games/ a link to another run's, then --overwrite",
                      [*SIM[:-3], "-o", "run", "--overwrite", "-q"],
                      folder_setup("run", games_link)))

    def truncated(ctx, folder):
        part = folder / "games" / "part-000001.parquet"
        part.write_bytes(part.read_bytes()[:-100])
    cases.append(Case("folders", "a truncated part, report", ["report", "run", "-o", "rep"],
                      folder_setup("run", truncated)))
    cases.append(Case("folders", "a truncated part, resume",
                      ["simulate", "--resume", "-o", "run", "-q"],
                      folder_setup("run", truncated), expect="either",
                      check=lambda c, o: None))

    def many_parts(ctx, folder):
        for index in range(2, 5000):
            (folder / "games" / f"part-{index:06d}.parquet").write_bytes(b"")
    cases.append(Case("folders", "5,000 empty parts beside a run's", ["report", "run", "-o", "rep"],
                      folder_setup("run", many_parts), timeout=60))

    def ledger_lines(ctx, folder):
        with open(folder / "parts.jsonl", "a") as handle:
            line = (folder / "parts.jsonl").read_text().splitlines()[0]
            handle.write((line + "\n") * 200_000)
    cases.append(Case("folders", "a ledger of 200,000 lines", ["verify", "run"],
                      folder_setup("run", ledger_lines), timeout=60))

    def labels_newline(ctx, folder):
        _edit_json(folder / "manifest.json", lambda d: d["config"].__setitem__(
            "labels", ["greedy\nsniff: error: forged\x1b[31m", "random"]))
    cases.append(Case("folders", "a label with a newline and ESC", ["report", "run", "-o", "rep"],
                      folder_setup("run", labels_newline)))

    cases.append(Case("folders", "a run folder that is a link", ["query", "linked",
                                                               "SELECT count(*) AS n FROM games"],
                      lambda ctx: (ctx.copy("run"),
                                   (ctx.dir / "linked").symlink_to(ctx.dir / "run")),
                      expect="either", check=lambda c, o: None if re.search(r"\b200\b", o.out)
                      else "not 200 games"))
    return cases


def _tournament_cases() -> list[Case]:
    """Tournament folders: the tournament file, its pairings."""
    cases = []
    for how in ("fifo", "zero", "nested", "non-utf8"):
        cases.append(Case("folders", f"tournament.json: {how}", ["report", "tour", "-o", "rep"],
                          folder_setup("tour", lambda c, f, h=how: _replace(
                              f / "tournament.json", h, c))))

    def pair_link(ctx, folder):
        outside = ctx.copy("run", "outside")
        pair = folder / "pairs" / "01-greedy-vs-random"
        shutil.rmtree(pair)
        pair.symlink_to(outside)
    cases.append(Case("folders", "a pairing that is a link out", ["report", "tour", "-o", "rep"],
                      folder_setup("tour", pair_link)))

    def pairs_traversal(ctx, folder):
        ctx.victim()
        def edit(data):
            key = next(k for k, v in data.items() if isinstance(v, (list, dict)) and "pair" in k)
            entries = data[key]
            if isinstance(entries, list) and entries and isinstance(entries[0], dict):
                for name in ("name", "folder", "path"):
                    if name in entries[0]:
                        entries[0][name] = "../../victim.txt"
        _edit_json(folder / "tournament.json", edit)
    cases.append(Case("folders", "a pairing named ../../victim.txt, resume",
                      ["tournament", "--players", "2", "--strategies", "greedy,random,heavy",
                       "--games-per-pair", "40", "--out", "tour", "--resume", "-q"],
                      folder_setup("tour", pairs_traversal), expect="either",
                      check=lambda c, o: None))

    def pairs_link(ctx, folder):
        other = ctx.copy("tour", "other")
        ctx.protect(other)
        shutil.rmtree(folder / "pairs")
        (folder / "pairs").symlink_to(other / "pairs")
    cases.append(Case("folders", "pairs/ a link to another tournament's, --overwrite",
                      ["tournament", "--players", "2", "--strategies", "greedy,random",
                       "--games-per-pair", "20", "--out", "tour", "--overwrite", "-q"],
                      folder_setup("tour", pairs_link)))
    return cases


def _openings_cases() -> list[Case]:
    """Openings folders: the summary, the games, the ranking."""
    cases = []
    for how in ("fifo", "zero", "big", "nested"):
        cases.append(Case("folders", f"openings summary.json: {how}",
                          ["query", "open", "SELECT count(*) FROM openings"],
                          folder_setup("open", lambda c, f, h=how: _replace(
                              f / "summary.json", h, c))))

    def open_games_link(ctx, folder):
        other = ctx.copy("run", "other")
        ctx.protect(other)
        shutil.rmtree(folder / "games")
        (folder / "games").symlink_to(other / "games")
    cases.append(Case("folders", "openings games/ a link to a run's, --overwrite",
                      ["openings", "--players", "2", "--deals", "1", "-o", "open", "--overwrite",
                       "-q"], folder_setup("open", open_games_link)))

    def ranking_edit(ctx, folder):
        path = folder / "ranking.md"
        path.write_text(path.read_text().replace("1", "9"))
    cases.append(Case("folders", "openings ranking.md edited", ["verify", "open"],
                      folder_setup("open", ranking_edit)))
    return cases


def _tune_compare_cases() -> list[Case]:
    """Tuning and comparison folders."""
    cases = []
    for how in ("fifo", "zero", "big", "nan"):
        cases.append(Case("folders", f"tune best.json: {how}",
                          ["simulate", "--players", "2", "--strategies",
                           "defensive:@tune/best.json,random", "--games", "10", "-o", "out", "-q"],
                          folder_setup("tune", lambda c, f, h=how: _replace(
                              f / "best.json", h, c))))

    def best_huge(ctx, folder):
        _edit_json(folder / "best.json", lambda d: d.update(
            {k: 1e308 for k, v in d.items() if isinstance(v, float)}))
    cases.append(Case("folders", "tune best.json: 1e308 values",
                      ["simulate", "--players", "2", "--strategies",
                       "defensive:@tune/best.json,random", "--games", "10", "-o", "out", "-q"],
                      folder_setup("tune", best_huge), expect="either",
                      check=lambda c, o: "1e308 accepted" if "1e+308" in o.out + o.err else None))
    for how in ("fifo", "nested", "non-utf8"):
        cases.append(Case("folders", f"tune manifest.json: {how}, resume",
                          ["tune", "defensive", "--against", "random", "--players", "2",
                           "--games", "400", "-o", "tune", "--resume", "-q"],
                          folder_setup("tune", lambda c, f, h=how: _replace(
                              f / "manifest.json", h, c))))
    for how in ("fifo", "zero", "nested"):
        cases.append(Case("folders", f"compare.json: {how}", ["verify", "cmp"],
                          folder_setup("cmp", lambda c, f, h=how: _replace(
                              f / "compare.json", h, c))))
    return cases


def _output_cases() -> list[Case]:
    """What the commands write to: FIFOs, links, files, other folders."""
    cases = []
    outputs = {
        "a FIFO": lambda ctx: _mkfifo(ctx.dir / "out"),
        "/dev/null": None,
        "a link to a victim folder": lambda ctx: (ctx.copy("run", "victim"),
                                                  ctx.protect(ctx.dir / "victim"),
                                                  (ctx.dir / "out").symlink_to(ctx.dir / "victim")),
        "a regular file": lambda ctx: (ctx.dir / "out").write_text("keep me"),
        "inside another run's games/": lambda ctx: ctx.copy("run"),
        "an openings folder": lambda ctx: ctx.copy("open", "out"),
    }
    for name, setup in outputs.items():
        target = "/dev/null" if name == "/dev/null" else (
            "run/games/new" if "inside" in name else "out")
        protect = setup

        def both(ctx, setup=protect, name=name):
            if setup:
                setup(ctx)
            for path in (ctx.dir / "out", ctx.dir / "run"):
                if path.exists() and not stat.S_ISFIFO(os.lstat(path).st_mode):
                    ctx.protect(path)
        cases.append(Case("folders", f"simulate -o {name} --overwrite",
                          [*SIM[:-3], "-o", target, "--overwrite", "-q"], both))
    cases.append(Case("folders", "trace -o over a Parquet file",
                      ["trace", "--players", "2", "--strategies", "greedy,random", "-o",
                       "run/games/part-000000.parquet", "--overwrite"],
                      lambda ctx: (ctx.copy("run"), ctx.protect(ctx.dir / "run"))))
    cases.append(Case("folders", "query --parquet over a CSV",
                      ["query", "run", "SELECT 1", "--parquet", "keep.csv", "--overwrite"],
                      lambda ctx: (ctx.copy("run"), (ctx.dir / "keep.csv").write_text("a,b\n"),
                                   ctx.protect(ctx.dir / "keep.csv"))))
    cases.append(Case("folders", "an output name with a newline and ESC",
                      [*SIM[:-3], "-o", "out\nsniff: error: forged\x1b[2J", "-q"],
                      expect="either", check=lambda c, o: (
                          "a raw ESC or a forged line" if "\x1b" in o.out + o.err or
                          "\nsniff: error: forged" in o.out + o.err else None)))
    return cases


def folder_cases() -> list[Case]:
    return [*_run_folder_cases(), *_tournament_cases(), *_openings_cases(),
            *_tune_compare_cases(), *_output_cases()]

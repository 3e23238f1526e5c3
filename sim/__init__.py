"""sniff: a compiled Monte Carlo simulator for the domino game American Sniff.

``sim.simulate(...)`` plays games and returns their tables; ``sim.load(path)`` opens a run
folder written by ``sniff simulate``. Both are imported on first use, so ``import sim``
stays cheap (no numba, numpy or pyarrow).

The modules live in sub-packages that follow docs/design.md (``sim.core``, ``sim.run``, …).
The flat names of the previous release (``sim.engine``, ``sim.io``, ``sim.observation``, …)
still import, as the same module objects, with a DeprecationWarning; they go in the next
release.
"""

from sim.moved import serve_moved_names
from sim.version import __version__ as __version__

__all__ = ["load", "simulate"]

# The previous release's flat module names and where each module lives now.
MOVED = {
    "tiles": "core.tiles", "rng": "core.rng", "seating": "core.seating",
    "record": "core.record", "observation": "core.observation", "layout": "core.layout",
    "engine": "core.engine", "kernels": "kernels.generate", "shared_kernel": "kernels.shared",
    "precompile": "kernels.precompile", "runner": "kernels.runner", "gather": "kernels.gather",
    "trace": "kernels.trace", "stats": "stats.intervals", "multiple": "stats.multiple",
    "planning": "stats.planning", "ratings": "stats.ratings", "ranking": "stats.ranking",
    "effects": "stats.effects", "sides": "stats.sides", "score_states": "stats.score_states",
    "arrow": "store.arrow", "folders": "store.folders", "io": "store.io",
    "rundata": "store.rundata", "summary": "store.summary", "plan": "run.plan",
    "precision": "run.precision", "chunks": "run.chunks", "simulation": "run.simulation",
    "cluster": "run.cluster", "bench": "run.bench", "formatting": "display.formatting",
    "blocks": "display.blocks", "charts": "display.charts", "position": "hint.position",
    "hint_search": "hint.search", "hint_kernel": "hint.kernel", "hint": "hint.estimate",
    "analyze": "hint.analyze", "render": "table.render", "replay": "table.replay",
    "play": "table.play", "human": "table.human", "tally": "table.tally",
    "openings": "openings.study", "openings_play": "openings.play",
    "openings_output": "openings.output", "openings_pairs": "openings.pairs",
    "report": "report.build", "report_html": "report.html", "report_tables": "report.tables",
    "report_effects": "report.effects", "placements": "report.placements",
    "tune": "tune.study", "tune_setup": "tune.setup", "tune_run": "tune.generations",
    "tune_folder": "tune.folder", "tune_chart": "tune.chart", "cli": "cli.main",
    "cli_hint": "cli.hint", "commands": "cli.commands",
}


serve_moved_names("sim", MOVED)


def __getattr__(name: str):
    if name == "simulate":
        from sim.run.simulation import simulate

        return simulate
    if name == "load":
        from sim.store.io import load

        return load
    raise AttributeError(f"module 'sim' has no attribute {name!r}")

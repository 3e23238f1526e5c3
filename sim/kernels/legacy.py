"""What the runs of the previous release ran, so that they still resume.

The previous release (0.1.0 with a flat ``sim/``) recorded a run's code as a hash of its
source files' bytes, which moving the modules into packages changed without changing any
code. Its runs of built-in strategies all recorded one digest; this table holds, for that
digest, the :func:`sim.kernels.generate.code_hash` of each module as it was then, so
:func:`sim.kernels.generate.same_code` can tell whether a lineup's code is unchanged since.
Runs with a plugin strategy from that release cannot be translated (their digest included
the plugin's bytes) and start again. The table goes with the old module names.

The release after it moved ``strategies/`` into rooms (``strategies.greedy`` is now
``strategies.heuristics.greedy``; ``strategies.MOVED``). Its code digests are blind to where a
module lives, so they still hold. (Those of the lineups that can play ``learned`` held
three modules no digest holds now and were translated here too, until feature version 3
changed ``learned``'s compiled code: a run of such a lineup recorded before it cannot
resume in any case.)

Rewrites that changed no game keep the runs made before them resumable: ``REWRITTEN`` maps
the code hash of each rewritten module (and of the kernel template) now to its hash before
(``None`` for a module that did not exist), and ``same_code`` accepts the digest the code had
before. The one entry so far: the engine's game loop made resumable for the batch (issue
#50); the golden tables and tests/test_batch.py show that every game is the same.
"""

from strategies import MOVED

_FLAT = {f"strategies.{new}": f"strategies.{old}" for old, new in MOVED.items()}


def flat_name(module: str) -> str:
    """The name a module had in the flat ``strategies/`` of the previous releases."""
    return _FLAT.get(module, module)


# digest recorded by the previous release -> (template hash, code hash of each module)
PREVIOUS_RELEASE: dict[str, tuple[str, dict[str, str]]] = {
    "81e81bf653842798": ("5cdd74a47445cd2f", {
        "sim.core.tiles": "041527a3fcea90de",
        "sim.core.layout": "4bb0b4d1f9062056",
        "sim.core.rng": "48e581781083e552",
        "sim.core.seating": "dbd4ff8eaca7a0f3",
        "sim.core.record": "7fcfad9e9ea9faba",
        "sim.core.observation": "be450496c4e6ffde",
        "sim.core.engine": "b48e89f4304ad41c",
        "sim.table.human": "a70e00bfb2649706",
        "strategies.blocker": "191df18e64455ab7",
        "strategies.defensive": "443fc265599ed9ec",
        "strategies.determinize": "f685d9b67d7d4733",
        "strategies.draw_history": "839f44a922f61915",
        "strategies.expert": "ef17e13a0a650a0f",
        "strategies.features": "e6a838e50aeaa69b",
        "strategies.greedy": "d8c28fc22a166b1e",
        "strategies.heavy": "93624c9de4401b0a",
        "strategies.inference": "a28a7b58ae23921f",
        "strategies.partner": "85d0f89b644721f4",
        "strategies.playout": "1c3cf1a8e2958a4a",
        "strategies.random": "7eea2ad90fee707f",
        "strategies.rollout": "b05fe3754bd82880",
        "strategies.score_table": "d4f62a728505dd54",
        "strategies.weighted": "8fb26d8d2dcd7de1",
    }),
}

# code hash now -> code hash before a rewrite that changed no game (see the docstring)
REWRITTEN: dict[str, str | None] = {
    "cd99e0d596b31e7f": "5cdd74a47445cd2f",  # <template>
    "79e8238fb280e1f0": "b48e89f4304ad41c",  # sim.core.engine
    "d7279dc09366f210": None,  # sim.core.loop
    "db3f38176f69bb9e": "09c1c6fe1ba9d889",  # strategies.search.playout
}

"""``sniff serve``: a table in the browser (play, hint), served by Starlette from this package.

May import: every room below ``sim.cli`` (it drives ``sim.table``'s game and ``sim.hint``'s
analysis); only ``sim.cli`` imports it. Starlette and uvicorn (the ``serve`` extra) are
imported only by ``sim.serve.app`` and the command, so the rest of sniff never needs them.
"""

__all__ = [
    "app", "frames", "game", "guard", "hints", "lines", "replay", "review", "sessions", "setup",
    "table", "views",
]

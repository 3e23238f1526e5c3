"""Rewrites of compiled code that changed no game, so that runs made before them resume.

A run records the digest of the code its lineup plays (``sim.kernels.generate.code_digest``:
the kernel template's code hash and each module's, blind to imports and docstrings), and
``--resume`` refuses another. A rewrite that plays every game the same (a module split in
two, a function cut into phases) still changes code hashes, so it lists here what the code
was on main at commit 55805d0, the oldest code whose run folders must still resume
(tests/fixtures/run-on-main: its ``main_hashes.json`` holds every module's hash then):

- ``REWRITES``: a code hash now (of a module, or of the kernel template) -> its hash then,
  or ``None`` for a module that did not exist then. A module split in two maps one half to
  the old module's hash and the other to ``None``.
- ``NEW_IMPORTS``: a module now -> the modules it imports now that it (or the code it came
  from) did not import then (``"<template>"``: modules the kernel includes now but did
  not). An unchanged module that a lineup newly reaches through them was not in that
  lineup's digest then, though it stays in the digest of every lineup that reached it
  another way; so the edge is what is listed, not the module.
- ``OLD_IMPORTS``: a module now -> the modules it imported then and no longer does, so that
  the closure of then is rebuilt with them.

``same_code`` rebuilds a lineup's digest then from these and accepts it.

Runs made by the main of each earlier stop of the project resume too, each stop its own era:
``SINCE_STOPS`` maps the stop's commit to its table, a code hash now -> its hash on main at
that commit (``None``: new since). No import changed since any stop; a rewrite that adds or
drops one gives the stops import tables of their own, as ``REWRITES`` has. The eras are kept
apart: a digest then is rebuilt from one era's table, never from entries of two, since no
code ever held the one era's module with the other era's.

Each era's hashes then are in its fixture, next to a run folder its code wrote:
tests/fixtures/run-on-main/main_hashes.json and, for a stop,
tests/fixtures/run-on-COMMIT/COMMIT_hashes.json (``scripts/code_hashes.py --json`` run on
that commit). A new stop adds its commit here with an empty table, and its fixture.
``scripts/code_hashes.py --write`` writes every era's entries for the modules whose hash
changed since (``--all`` prints them; ``--old`` with one JSON: that era's alone). An entry is
keyed by the code as it is now: the next edit of that module makes the entry miss, and the
run is refused, as it must be, until the entries are written again. A rewrite lists them
here only with proof that every game is the same (the golden tables,
tests/test_engine_vs_oracle.py).
"""

from __future__ import annotations

# code hash now -> code hash on main at 55805d0 (None: the module did not exist then)
REWRITES: dict[str, str | None] = {
    "7e443c4832286887": "cd99e0d596b31e7f",  # <template>
    "897cec61957d6b80": None,  # sim.core.buffers
    "2fcdc381712dcf75": "d7279dc09366f210",  # sim.core.loop
    "9fd08d7b093c9802": "191df18e64455ab7",  # strategies.heuristics.blocker
    "63431b0e0fc1f70e": "443fc265599ed9ec",  # strategies.heuristics.defensive
    "b8f6abad96147764": "e6a838e50aeaa69b",  # strategies.heuristics.features
    "99edd7b327272360": "93624c9de4401b0a",  # strategies.heuristics.heavy
    "1a6f0f248b28a46d": "85d0f89b644721f4",  # strategies.heuristics.partner
    "103ee33a749c0eeb": "8fb26d8d2dcd7de1",  # strategies.heuristics.weighted
    "4a8051809c61a89e": "c4b59fd9e31dd06e",  # strategies.learned.features
    "4090ca77712fd0f0": "fbdad9bf440964bd",  # strategies.search.expert
    "d24d38e1136c302a": "db3f38176f69bb9e",  # strategies.search.playout
    "e8ab8058293b4582": "b05fe3754bd82880",  # strategies.search.rollout
    "3bc85ecb54b8d4c0": "c7c5af0bb75cfee6",  # strategies.value.round_value
}

# module now -> the modules it newly imports since main at 55805d0
NEW_IMPORTS: dict[str, frozenset[str]] = {
    # learned's win-chance input now calls value's logistic (one home, the same floats)
    "strategies.learned.features": frozenset({"strategies.value.round_value"}),
}

# module now -> the modules it imported on main at 55805d0 and imports no more
OLD_IMPORTS: dict[str, frozenset[str]] = {
    # ... in place of reading value's coefficients itself
    "strategies.learned.features": frozenset({"strategies.value.score_table"}),
}

# stop's commit -> {code hash now -> code hash on main at that commit}, for the runs made by
# the code of each earlier stop (a stop with no entry: no compiled code changed since)
SINCE_STOPS: dict[str, dict[str, str | None]] = {
    "5a87044": {
        "7e443c4832286887": "756714aba75f3df2",  # <template>
        "897cec61957d6b80": "b40181efa67712dc",  # sim.core.buffers
        "2fcdc381712dcf75": "7c4f39668b5b398a",  # sim.core.loop
    },
    "b65694f": {
        "897cec61957d6b80": "a7ae83e0a7074309",  # sim.core.buffers
        "2fcdc381712dcf75": "c057f99a081f053b",  # sim.core.loop
    },
}

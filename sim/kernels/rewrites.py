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

``same_code`` rebuilds a lineup's digest then from these and accepts it. An entry is keyed
by the code as it is now: the next edit of that module makes the entry miss, and the run is
refused, as it must be. ``scripts/code_hashes.py`` prints the entries for the modules whose
hash changed; a rewrite lists them here only with proof that every game is the same (the
golden tables, tests/test_engine_vs_oracle.py).
"""

from __future__ import annotations

# code hash now -> code hash on main at 55805d0 (None: the module did not exist then)
REWRITES: dict[str, str | None] = {}

# module now -> the modules it newly imports since main at 55805d0
NEW_IMPORTS: dict[str, frozenset[str]] = {}

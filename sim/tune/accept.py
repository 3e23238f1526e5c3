"""``sniff tune --accept sprt``: accept the tuned values against the strategy's defaults by
``sniff compare``'s sequential test instead of a match of fixed size.

Why: a fixed match must be long enough for the smallest difference that matters, whatever
the difference really is; the sequential test stops as soon as the evidence suffices, so a
clearly better (or clearly equal) candidate is decided in far fewer games, at the same
planned error rates (measured in docs/tune.md, "Measured: where --accept sprt saves games").

The test is ``sim.compare.play.compare`` itself, in memory: the tuned values as A against
the defaults as B, on the validation seed, capped at ``--validate-games``. So the decision
is exactly what ``sniff compare TUNED DEFAULTS --seed SEED --max-games CAP`` with the same
``--h0/--h1/--alpha/--beta`` decides (``command`` in the record), and the same run seed
always gives the same decision. Accepted is H1 (better by at least ``h1``), rejected H0,
undecided when the cap is reached first.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Callable

from sim.compare import CHUNK_DEALS
from sim.compare.play import Comparison, compare
from sim.run.settings import RunControl, quiet_notice
from sim.stats.sprt import Sprt
from sim.tune.setup import TuneConfig, derived_seed

__all__: list[str] = []  # nothing here is used outside sim.tune

VERDICT = {"H1": "accepted", "H0": "rejected", "undecided": "undecided"}


def accept(config: TuneConfig, tuned: str, defaults: str, label: str,
           notice: Callable[[str], None] | None = None, cluster=None) -> dict:
    """Test ``tuned`` (a spec text) against ``defaults``; the record ``best.json`` keeps as
    ``acceptance``: compare's record (decision, games, llr, bounds, hypotheses, the estimate
    with its note) less the per-chunk rows, with the verdict, the command that repeats it and
    the lines to print. ``cluster``: the tuning's ``sim.cluster.dask.DaskCluster``, if any."""
    seed = derived_seed(config.seed, "validate")
    result = compare(tuned, defaults, players=config.players, seed=seed, out=None,
                     test=Sprt(config.h0, config.h1, config.alpha, config.beta),
                     max_games=config.validate_games, control=RunControl(
                         notice=notice or quiet_notice,
                         command="sim.tune.accept.accept(...)", scheduler=cluster))
    record = result.to_dict()
    del record["chunks"]
    record.update(method="sprt", opponent=f"{label} (defaults)",
                  verdict=VERDICT[result.decision], cap=cap(config),
                  command=repeat_command(config, tuned, defaults, seed),
                  text=text(result, label))
    # JSON without NaN or infinities (an Elo of a +-100% difference): null, as compare.json
    return json.loads(json.dumps(record), parse_constant=lambda _: None)


def cap(config: TuneConfig) -> int:
    """The test's cap: ``--validate-games`` cut to whole chunks, as ``compare_plan`` cuts it."""
    chunk = CHUNK_DEALS * config.group
    return config.validate_games - config.validate_games % chunk


def text(result: Comparison, label: str) -> str:
    """Compare's decision in words, naming the sides as tune does."""
    named = dataclasses.replace(result, a="the tuned strategy", b=f"the defaults ({label})")
    lines = named.decision_text().replace("compare.json's note", "best.json's acceptance")
    return f"{VERDICT[result.decision]} by SPRT against the defaults: {lines}"


def repeat_command(config: TuneConfig, tuned: str, defaults: str, seed: int) -> str:
    """The ``sniff compare`` command that plays the same games to the same decision."""
    return shlex.join([
        "sniff", "compare", tuned, defaults, "--players", str(config.players),
        "--seed", str(seed), "--h0", str(config.h0), "--h1", str(config.h1),
        "--alpha", str(config.alpha), "--beta", str(config.beta),
        "--max-games", str(config.validate_games)])

"""``sniff tune``: tune a strategy's numeric parameters with CMA-ES on duplicate deals.

Why CMA-ES from the ``cma`` package: the objective (a win rate measured by playing games)
is noisy, has no gradient and a handful of continuous parameters, which is what CMA-ES is
built for; ``cma`` is small (pure Python and numpy) and has an ask/tell interface, so this
module decides when games are played and what is kept. Its sampling takes a ``randn``
function, so the optimiser draws from its own seeded stream (never numpy's global one), and
the whole search is a function of the run seed: a resumed run rebuilds the optimiser by
replaying ``ask``/``tell`` over the generations stored in ``trials.parquet`` and continues
to exactly the result an uninterrupted run gives. (optuna's CMA-ES sampler would bring a
study database and its own trial bookkeeping for the same algorithm.)

Common random numbers: every candidate of generation ``k`` plays the same deals (deal ids
``k * deals ..``), each deal twice with the sides swapped (3 players: three times, every
seating), against every opponent of the field. Differences between candidates of a
generation then come from their parameters much more than from the cards, so the ranking
CMA-ES needs is measured with far fewer games. The objective is the candidate's win rate
averaged over the field (what the user wants to raise; a margin would also reward running
up scores in games already won or lost).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sim.errors import SettingError, SniffError
from sim.run.chunks import StopOnInterrupt
from sim.run.settings import RunControl, quiet_notice
from sim.tune import folder as tune_folder
from sim.tune.folder import load
from sim.tune.generations import run
from sim.tune.setup import (
    TuneConfig,
    TuneInterrupted,
    TuneResult,
)

__all__ = ["load", "tune", "TuneInterrupted"]


def tune(strategy: str | None = None, against: str | Sequence[str] | None = None, *,
         out: str | Path | None = None, control: RunControl | None = None,
         **settings) -> TuneResult:
    """Tune ``strategy``'s numeric parameters against the field ``against``; see the module.

    ``strategy`` is a spec (``weighted``, or ``weighted:block=5`` to start elsewhere than the
    defaults); ``against`` the field, as text (``"blocker,weighted"``) or a list of specs.
    ``settings`` (``TuneConfig``'s fields), defaults: 4 ``players``, ``games`` (the trial
    budget) 200,000, ``seed`` 0, every numeric parameter (``params``), 4,000
    ``games_per_trial``, CMA-ES's own ``popsize`` for the dimension, ``sigma`` 0.5, 20,000
    ``validate_games`` per validation match; ``out`` ``results/tune-DATE-TIME``.
    ``accept="sprt"`` decides the match against the defaults by ``sniff compare``'s
    sequential test (``h0``, ``h1``, ``alpha``, ``beta``; ``validate_games`` its cap) instead
    of a fixed-size match (``"fixed"``, the default): ``sim.tune.accept``.
    ``control`` (``sim.run.settings.RunControl``) says how: mode ``"resume"`` completes the
    run in ``out`` (settings left out are the recorded ones, settings given must match
    them); ``progress``, ``notice`` (default: none), ``command``; ``scheduler``
    (``tcp://HOST:PORT`` or ``local:N``) plays every match on a Dask cluster
    (``sim.tune.player``), with the same trials and result. Ctrl-C (or SIGTERM) raises
    :class:`TuneInterrupted` after keeping the finished generations.
    """
    control = control or RunControl(notice=quiet_notice)
    given = {key: value for key, value in settings.items() if value is not None}
    if control.scheduler is not None:
        from sim.cluster.dask import check_scheduler

        check_scheduler(control.scheduler)
    resume = control.mode == "resume"
    if resume:
        if out is None:
            raise SettingError("{resume} needs the tuning folder: {out}")
        folder = Path(out)
        tune_folder.read(folder)  # a tuning folder, before a lock file is added to it
    else:
        if strategy is None or against is None:
            raise SniffError("name the strategy to tune and the field: "
                             "sniff tune STRATEGY --against A,B")
        config = TuneConfig.build(strategy, against, **given)
        folder = Path(out) if out is not None else tune_folder.default_folder()
        tune_folder.check_new(folder)  # before a lock file is added to it
    lock = tune_folder.lock(folder, control.command or None)
    cluster = None
    try:
        if resume:  # read under the lock: no other writer can be changing it
            manifest = tune_folder.read(folder)
            config = TuneConfig.from_dict(manifest["config"])
            named = {"strategy": strategy, "against": against}
            tune_folder.check_resume(folder, manifest, config, {
                **{key: value for key, value in named.items() if value is not None}, **given})
        else:
            manifest = tune_folder.create(folder, config, control.command or None)
        if isinstance(control.scheduler, str):
            from sim.cluster.dask import DaskCluster

            cluster = DaskCluster(control.scheduler)
        with StopOnInterrupt(at_once=True):  # SIGTERM keeps the generations as Ctrl-C does
            return run(folder, config, manifest, control, cluster)
    finally:
        if cluster is not None:
            cluster.close()
        lock.release()

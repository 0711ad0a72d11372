"""The pipeline load → plan → execute → analyse, for loaded experiments.

:func:`run_experiments` takes experiments read by :mod:`govlab.experiment`
(load), expands them into run requests with :mod:`govlab.plan` (plan), records
them in the results database and simulates the runs it lacks with
:mod:`govlab.sweep` (execute), then analyses every experiment with
:mod:`govlab.analysis` (analyse). Rendering (text tables, JSON, HTML) is left to
the caller: the ``govlab`` command's handlers in :mod:`govlab.cli`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from govlab import analysis as compare, plan
from govlab.experiment import Experiment, ExperimentError
from govlab.store import Store
from govlab.sweep import LOCAL, SweepReport, execute

__all__ = ["Executed", "run_experiments"]


@dataclass(frozen=True)
class Executed:
    """What :func:`run_experiments` did: per experiment its analysis and its run requests, and the sweep's counts."""

    experiments: list[Experiment]
    planned: list[list[plan.RunSpec]]
    analyses: list[dict[str, Any]]
    report: SweepReport
    #: stored results read once after the sweep, by key (a reproduction's 60 MB of JSON is read once, not twice)
    loaded: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def results(self, store: Store) -> dict[str, dict[str, Any]]:
        """The stored results of every planned run, by key."""
        keys = {r.key for runs in self.planned for r in runs}
        if keys <= self.loaded.keys():
            return {k: self.loaded[k] for k in keys}
        return store.results(keys)


def run_experiments(
    experiments: Sequence[Experiment],
    store: Store,
    jobs: int | None = None,
    progress: bool | None = None,
    on_stored: Callable[..., object] | None = None,
    executor: str = LOCAL,
    max_events: int | None = None,
) -> Executed:
    """Record the experiments in ``store``, run what it lacks (see :func:`govlab.sweep.execute`), and analyse them all.

    ``max_events`` raises the ceiling on each run's estimated ops (:func:`govlab.api.check_cost`)."""
    names = [e.name for e in experiments]
    for e in experiments:
        if names.count(e.name) > 1:
            raise ExperimentError(e.path, None, "experiment.name", f"two experiments are named {e.name!r}")
    planned = []
    for e in experiments:
        runs = plan.runs(e, max_events)
        store.save_experiment(e.to_dict(), [plan.run_row(r) for r in runs])
        planned.append(runs)
    everything = [r for runs in planned for r in runs]
    desc = names[0] if len(names) == 1 else f"{len(names)} experiments"
    report = execute(everything, store, jobs=jobs, progress=progress, desc=desc, on_stored=on_stored, executor=executor)
    results = store.results({r.key for r in everything})
    analyses = [
        compare.analyse(e.to_dict(), [plan.run_row(r) for r in runs], results)
        for e, runs in zip(experiments, planned, strict=True)
    ]
    return Executed(list(experiments), planned, analyses, report, results)

"""Executing the plan: the run requests the store does not have (pipeline stage: execute).

:func:`execute` skips every run whose key is already stored, runs the rest on
a local process pool (``jobs`` workers, default ``os.cpu_count()``; ``jobs=1``
runs in this process) and stores each result, in its own transaction, the
moment it arrives. A progress bar (runs done, elapsed and ETA) goes to stderr
when it is a terminal.

Interruption: the workers ignore SIGINT, so Ctrl-C reaches only this process.
It cancels the runs not yet started, waits for the ones in flight and stores
them, then raises KeyboardInterrupt; a second Ctrl-C while it waits abandons
them. Whatever was stored stays stored, so running the same experiment again
resumes where it stopped.

``executor`` chooses where runs are simulated: ``"local"`` (the process pool
above) or the address of a Dask distributed scheduler (``tcp://HOST:PORT``,
from ``--executor dask://HOST:PORT`` through :func:`parse_executor`), for
which :mod:`govlab.sweep.dask` submits the runs and this process still
stores every result as it arrives.

This module chooses the executor; :mod:`govlab.sweep.worker` is what a worker
does, :mod:`govlab.sweep.local` the process pool, :mod:`govlab.sweep.dask` the
Dask client. The run requests come from :mod:`govlab.plan`.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from govlab.plan import RunSpec
from govlab.store import Store
from govlab.sweep import worker

__all__ = ["execute", "SweepReport", "parse_executor", "LOCAL"]

#: The executor of a process pool on this machine.
LOCAL = "local"

_DASK_ADDRESS = re.compile(r"^dask://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class SweepReport:
    """What :func:`execute` did: runs asked for, found stored, and simulated now."""

    total: int
    stored: int
    simulated: int
    wall_s: float


def parse_executor(text: str) -> str:
    """``"local"``, or the scheduler address ``tcp://HOST:PORT`` of ``dask://HOST:PORT``."""
    if text == LOCAL:
        return LOCAL
    m = _DASK_ADDRESS.match(text)
    if m is None or not 0 < int(m["port"]) < 65536:
        raise ValueError(f"--executor: expected 'local' or 'dask://HOST:PORT', got {text!r}")
    return f"tcp://{m['host']}:{int(m['port'])}"


def execute(
    runs: Sequence[RunSpec],
    store: Store,
    jobs: int | None = None,
    progress: bool | None = None,
    desc: str = "runs",
    on_stored: Callable[[RunSpec], object] | None = None,
    executor: str = LOCAL,
) -> SweepReport:
    """Run and store whichever of ``runs`` the store lacks; see the module doc.

    ``progress`` forces the bar on or off (default: on when stderr is a
    terminal). ``on_stored(run)`` is called after each run is committed; an
    exception it raises stops the sweep like Ctrl-C does. ``executor`` is
    ``"local"`` or a Dask scheduler address (``jobs`` is for local only).
    """
    start = time.perf_counter()
    unique: dict[str, RunSpec] = {}
    for run in runs:
        unique.setdefault(run.key, run)
    stored = store.present(unique)
    missing = [r for k, r in unique.items() if k not in stored]
    report = SweepReport(len(unique), len(stored), len(missing), 0.0)
    if not missing:
        return SweepReport(report.total, report.stored, 0, time.perf_counter() - start)

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(missing)))
    bar = _bar(len(missing), desc, progress, len(stored))

    def keep(run: RunSpec, outcome: tuple[dict[str, Any], float], notify: bool = True) -> None:
        result, wall_s = outcome
        store.put(run.key, run.identity, result, wall_s)
        if bar is not None:
            bar.update(1)
        if notify and on_stored is not None:
            on_stored(run)

    try:
        if executor != LOCAL:
            from govlab.sweep import dask

            dask.run(missing, executor, keep)
        elif jobs == 1:
            for run in missing:
                keep(run, worker.simulate(run.kwargs))
        else:
            from govlab.sweep import local

            local.run(missing, jobs, keep)
    finally:
        if bar is not None:
            bar.close()
    return SweepReport(report.total, report.stored, report.simulated, time.perf_counter() - start)


def _bar(total: int, desc: str, progress: bool | None, already: int) -> Any:
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="run",
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        postfix=f"{already} stored" if already else None,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} runs "
        "[{elapsed}<{remaining}{postfix}]",
    )

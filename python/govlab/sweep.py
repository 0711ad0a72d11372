"""Running many runs: the runs an experiment needs that the store does not have.

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
which :mod:`govlab.dask_sweep` submits the runs and this process still
stores every result as it arrives.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from govlab.experiment import RunSpec
from govlab.store import Store

__all__ = ["execute", "SweepReport", "simulate", "parse_executor", "LOCAL"]

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


def simulate(kwargs: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """One run in a worker: ``govlab.run(**kwargs).to_dict()`` and its wall time."""
    import govlab

    start = time.perf_counter()
    result = govlab.run(**kwargs).to_dict()
    return result, time.perf_counter() - start


def govlab_version() -> str:
    """The govlab version where this runs (a Dask worker, to check it matches the client's)."""
    import govlab

    return govlab.__version__


def parse_executor(text: str) -> str:
    """``"local"``, or the scheduler address ``tcp://HOST:PORT`` of ``dask://HOST:PORT``."""
    if text == LOCAL:
        return LOCAL
    m = _DASK_ADDRESS.match(text)
    if m is None or not 0 < int(m["port"]) < 65536:
        raise ValueError(f"--executor: expected 'local' or 'dask://HOST:PORT', got {text!r}")
    return f"tcp://{m['host']}:{int(m['port'])}"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
            from govlab import dask_sweep

            dask_sweep.run(missing, executor, keep)
        elif jobs == 1:
            for run in missing:
                keep(run, simulate(run.kwargs))
        else:
            _pool(missing, jobs, keep)
    finally:
        if bar is not None:
            bar.close()
    return SweepReport(report.total, report.stored, report.simulated, time.perf_counter() - start)


def _pool(missing: Sequence[RunSpec], jobs: int, keep: Callable[..., None]) -> None:
    # spawn: a clean interpreter per worker, safe whatever threads this process runs.
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_ignore_sigint)
    pending: dict[Future, RunSpec] = {}
    queue = iter(missing)
    try:
        # At most `jobs` runs are submitted at a time, so that every submitted
        # run is really running: on Ctrl-C there is no queue to cancel.
        for run in itertools.islice(queue, jobs):
            pending[executor.submit(simulate, run.kwargs)] = run
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                run = pending.pop(future)
                keep(run, future.result())
                for following in itertools.islice(queue, 1):
                    pending[executor.submit(simulate, following.kwargs)] = following
    except BaseException:
        _drain(executor, pending, keep)
        raise
    else:
        executor.shutdown(wait=True)


def _drain(executor: ProcessPoolExecutor, pending: dict[Future, RunSpec], keep: Callable[..., None]) -> None:
    """After an error or Ctrl-C: cancel what has not started, store what finishes."""
    for future in pending:
        future.cancel()
    running = {f: r for f, r in pending.items() if not f.cancelled()}
    try:
        if running:
            print(
                f"govlab: stopping; storing the {len(running)} run(s) in flight (Ctrl-C again to abandon them)",
                file=sys.stderr,
            )
        for future, run in running.items():
            try:
                outcome = future.result()
            except Exception:  # a failed run in flight: nothing to store
                continue
            keep(run, outcome, notify=False)
        executor.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        # Abandon the runs in flight: stop their processes and do not wait.
        for process in list(getattr(executor, "_processes", {}).values()):
            process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)


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

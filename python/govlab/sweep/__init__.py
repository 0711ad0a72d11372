"""Executing the plan: the run requests the store does not have (pipeline stage: execute).

:func:`execute` skips every run whose key is already stored, runs the rest on
a local process pool (``jobs`` workers, default ``os.cpu_count()``; ``jobs=1``
runs in this process) and stores each result, in its own transaction, the
moment it arrives. A progress bar (runs done, elapsed and ETA) goes to stderr
when it is a terminal.

Two processes on one database: before simulating, a process claims the runs
it will do in the database (:meth:`govlab.store.Store.claim`: its pid, host and
start time), so a second ``compare`` on the same database simulates only the
runs nobody holds, then waits (saying so) for the others to be stored. A claim
whose process is gone expires, and the waiting or resumed process takes the
run over; a process releases its claims when it stops.

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

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from govlab.plan import RunSpec
from govlab.store import Store
from govlab.sweep import worker

__all__ = ["execute", "SweepReport", "parse_executor", "LOCAL"]

#: The executor of a process pool on this machine.
LOCAL = "local"
#: The most local worker processes (``--jobs``): each is a Python interpreter
#: with the engine, some 60 MB (measured with ps on a local run); 256 of them
#: already need 15 GB (the ceiling is assumed, not measured against a machine).
MAX_JOBS = 256

#: Seconds between looks at the database while another process simulates the runs left.
CLAIM_POLL_S = 1.0

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
    todo = [r for k, r in unique.items() if k not in stored]
    if not todo:
        return SweepReport(len(unique), len(stored), 0, time.perf_counter() - start)
    _check_costs(todo)

    bar = _bar(len(todo), desc, progress, len(stored))
    simulated = 0

    def keep(run: RunSpec, outcome: tuple[str, float], notify: bool = True) -> None:
        nonlocal simulated
        result, wall_s = outcome
        store.put(run.key, run.identity, result, wall_s)
        simulated += 1
        if bar is not None:
            bar.update(1)
        if notify and on_stored is not None:
            on_stored(run)

    def claimed(runs: Sequence[RunSpec], held: dict[str, Any]) -> Iterator[RunSpec]:
        """``runs`` one by one as this process claims them; the ones another process holds go to ``held``."""
        for run in runs:
            got, others = store.claim([run.key])
            held.update(others)
            if got:
                yield run

    waiting_for: set[str] = set()
    try:
        while todo:
            held: dict[str, Any] = {}
            if executor != LOCAL:
                # A cluster takes every run at once: claim them all, then submit.
                got, held = store.claim(r.key for r in todo)
                mine: Iterable[RunSpec] = [unique[k] for k in got]
            else:
                # Claimed as they are started, so that two processes share the runs.
                mine = claimed(todo, held)
            simulated_before = simulated
            _simulate(mine, len(todo), jobs, executor, keep)
            if not held:
                break
            if simulated == simulated_before:
                # Every run left is claimed by another live process: wait for it to store them.
                holders = sorted({c.describe() for c in held.values()})
                if set(holders) != waiting_for:
                    waiting_for = set(holders)
                    print(
                        f"govlab: waiting for {len(held)} run(s) that {', '.join(holders)} is simulating "
                        f"(another govlab on {store.path}); they are taken over if it stops",
                        file=sys.stderr,
                    )
                time.sleep(CLAIM_POLL_S)
            present = store.present(held)
            todo = [unique[k] for k in held if k not in present]
    finally:
        store.release()
        if bar is not None:
            bar.close()
    return SweepReport(len(unique), len(unique) - simulated, simulated, time.perf_counter() - start)


def _check_costs(runs: Sequence[RunSpec]) -> None:
    """Refuse the sweep before any run starts when a run is estimated to take more ops than its
    ceiling (:func:`govlab.api.check_cost`); runs that differ only in their seed are checked once."""
    from govlab import api

    seen: set[str] = set()
    for run in runs:
        kwargs = {k: v for k, v in run.kwargs.items() if k not in ("seed", "max_events")}
        group = json.dumps(kwargs, sort_keys=True, default=str)
        if group in seen:
            continue
        seen.add(group)
        config = api.config_json(
            kwargs["platform"], kwargs["workload"], kwargs["cpufreq"], kwargs["cpuidle"], kwargs["duration"],
            run.seed, kernel=kwargs.get("kernel"),
        )
        api.check_cost(config, run.kwargs.get("max_events"))


def _simulate(
    missing: Iterable[RunSpec], count: int, jobs: int | None, executor: str, keep: Callable[..., None]
) -> None:
    """Simulate ``missing`` (at most ``count`` runs) where ``executor`` says, ``keep(run, outcome)`` each result."""
    if executor != LOCAL:
        from govlab.sweep import dask

        runs = list(missing)
        if runs:
            dask.run(runs, executor, keep)
        return
    jobs = max(1, min(jobs or os.cpu_count() or 1, count))
    if jobs == 1:
        for run in missing:
            keep(run, worker.simulate(run.kwargs))
    else:
        from govlab.sweep import local

        local.run(missing, jobs, keep)


def _bar(total: int, desc: str, progress: bool | None, already: int) -> Any:
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    postfix = f"{already} stored" if already else None
    if _in_notebook():
        return _NotebookBar(total, desc, postfix)
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="run",
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        postfix=postfix,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} runs "
        "[{elapsed}<{remaining}{postfix}]",
    )


def _in_notebook() -> bool:
    """In a Jupyter kernel with ipywidgets (where tqdm.auto would pick its widget)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython

        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


class _NotebookBar:
    """tqdm's notebook widget, replaced by one line of text when the sweep ends.

    A saved notebook keeps a widget's text form as it was when first shown (0 %),
    so the bar is shown through a display handle and, at the end, that output
    is updated to say what was done: the live notebook and the saved one then
    both read the same line.
    """

    def __init__(self, total: int, desc: str, postfix: str | None) -> None:
        from IPython.display import display
        from tqdm.notebook import tqdm

        self._desc = desc
        self._start = time.perf_counter()
        self._bar = tqdm(total=total, desc=desc, unit="run", leave=True, postfix=postfix, display=False)
        self._handle = display(self._bar.container, display_id=True)

    def update(self, n: int) -> None:
        self._bar.update(n)

    def close(self) -> None:
        from IPython.display import Pretty

        done, total = self._bar.n, self._bar.total
        self._bar.close()
        elapsed = time.perf_counter() - self._start
        self._handle.update(Pretty(f"{self._desc}: {done} of {total} runs simulated in {elapsed:.1f} s"))

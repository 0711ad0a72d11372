"""The local process pool (pipeline stage: execute).

:func:`run` simulates run requests on ``jobs`` spawned worker processes
(:func:`govlab.sweep.worker.simulate` in each) and hands every outcome to
``keep`` as it arrives. The workers ignore SIGINT, so Ctrl-C reaches only this
process (and SIGTERM, which the command line turns into the same
interruption): it cancels the runs not yet started, waits for the ones in flight and
keeps them, then re-raises; a second Ctrl-C while it waits abandons them.
A worker dies with this process, however it ends (``kill -9`` included):
see :func:`govlab.sweep.worker.die_with_parent`.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from govlab.plan import RunSpec
from govlab.sweep import worker

__all__ = ["run"]


#: Seconds between a worker's looks at whether its parent is still there.
PARENT_POLL_S = 1.0


def _init_worker(parent_pid: int) -> None:
    """A worker's start: ignore Ctrl-C (the parent handles it) and die with the parent.

    On Linux the kernel kills the worker when the parent goes
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``); everywhere, a daemon thread also
    polls :func:`os.getppid` and ends the worker once the parent is gone, which
    covers a parent that died before the prctl was made. With no worker left,
    multiprocessing's resource tracker sees its pipe close and exits too.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    worker.die_with_parent(parent_pid, PARENT_POLL_S)


def run(missing: Iterable[RunSpec], jobs: int, keep: Callable[..., None]) -> None:
    """Simulate ``missing`` on a pool of ``jobs`` processes; ``keep(run, outcome)`` each result.

    ``missing`` is read as runs are started (the sweep claims each run in the
    database when it is taken from it); the pool starts only if it yields one.
    """
    # spawn: a clean interpreter per worker, safe whatever threads this process runs.
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),)
    )
    pending: dict[Future, RunSpec] = {}
    queue = iter(missing)
    try:
        # At most `jobs` runs are submitted at a time, so that every submitted
        # run is really running: on Ctrl-C there is no queue to cancel.
        for r in itertools.islice(queue, jobs):
            pending[executor.submit(worker.simulate, r.kwargs)] = r
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                r = pending.pop(future)
                keep(r, future.result())
                for following in itertools.islice(queue, 1):
                    pending[executor.submit(worker.simulate, following.kwargs)] = following
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
        for future, r in running.items():
            try:
                outcome = future.result()
            except Exception:  # a failed run in flight: nothing to store
                continue
            keep(r, outcome, notify=False)
        executor.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        # Abandon the runs in flight: stop their processes and do not wait.
        for process in list(getattr(executor, "_processes", {}).values()):
            process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)

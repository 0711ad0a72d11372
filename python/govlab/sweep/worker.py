"""What a worker process does: simulate one run request (pipeline stage: execute).

A worker gets a run request's keyword arguments (:attr:`govlab.plan.RunSpec.kwargs`,
built once by :mod:`govlab.plan`) and returns the result dict and the wall time it
took. The local pool (:mod:`govlab.sweep.local`) and the Dask executor
(:mod:`govlab.sweep.dask`) both send these functions to their workers, so the
workers need nothing but govlab itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

__all__ = ["simulate", "govlab_version", "die_with_parent"]

#: prctl(2) option: the signal this process gets when its parent thread ends (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def simulate(kwargs: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """One run in a worker: ``govlab.run(**kwargs).to_dict()`` and its wall time."""
    from govlab.api import run

    start = time.perf_counter()
    result = run(**kwargs).to_dict()
    return result, time.perf_counter() - start


def govlab_version() -> str:
    """The govlab version where this runs (a Dask worker, to check it matches the client's)."""
    from govlab._core import __version__

    return __version__


def die_with_parent(parent_pid: int, poll_s: float) -> None:
    """End this process when the process ``parent_pid`` (its parent) ends, however it ends.

    On Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` has the kernel do it; a
    daemon thread polling :func:`os.getppid` every ``poll_s`` seconds does it
    elsewhere, and catches a parent that was gone before the prctl was made.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="govlab-parent-watch", daemon=True).start()

"""What a worker process does: simulate one run request (pipeline stage: execute).

A worker gets a run request's keyword arguments (:attr:`govlab.plan.RunSpec.kwargs`,
built once by :mod:`govlab.plan`) and returns the result dict and the wall time it
took. The local pool (:mod:`govlab.sweep.local`) and the Dask executor
(:mod:`govlab.sweep.dask`) both send these functions to their workers, so the
workers need nothing but govlab itself.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["simulate", "govlab_version"]


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

"""The Dask executor (pipeline stage: execute): ``govlab compare --executor dask://HOST:PORT``.

This process is the Dask client. It submits one task per missing run, each
calling :func:`govlab.sweep.worker.simulate` on a worker, and stores every result in
the results database here the moment it arrives, as the local executor does:
the database never leaves the client, the workers need only govlab itself,
of the same version (checked before anything is submitted, since a run's key
names the version it was made with).

A worker that dies (killed, out of memory, its machine gone) costs only the
runs it held: the scheduler hands them to other workers. Dask gives up on a
run after it has been on ``distributed.scheduler.allowed-failures`` workers
that died (3 by default) and govlab then stops with an error naming the run.
A run that raises an error fails the sweep as it does locally; simulations
are deterministic, so it is not tried again.

A cluster left with no worker at all (every one killed, none restarted) would
keep the runs waiting forever: after :data:`NO_WORKERS_TIMEOUT_S` without a
worker govlab stops with "no workers" (exit 2), keeping every finished run.
A scheduler that goes away mid-sweep cancels every run it held: govlab stops
with "the Dask scheduler ... is gone" and the count of runs stored (exit 2).

Ctrl-C (or an error): the results that have arrived are stored, the other
runs are cancelled on the cluster, and whatever was stored stays stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from govlab.exceptions import ClusterError
from govlab.plan import RunSpec
from govlab.sweep.worker import govlab_version, simulate

__all__ = ["ClusterError", "CONNECT_TIMEOUT_S", "NO_WORKERS_TIMEOUT_S", "run"]

#: How long to wait for the scheduler to answer and for a first worker.
CONNECT_TIMEOUT_S = 30

#: How long a sweep waits while the cluster has no worker at all before it stops
#: with "no workers" (the runs stored so far are kept).
NO_WORKERS_TIMEOUT_S = 60.0

#: Seconds between looks at whether the cluster has any worker.
POLL_S = 1.0
#: Seconds between looks for results that have arrived.
_READY_POLL_S = 0.02


def run(missing: Sequence[RunSpec], address: str, keep: Callable[..., None]) -> None:
    """Simulate ``missing`` on the cluster whose scheduler is at ``address``; ``keep(run, outcome)`` each result."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(
            "--executor dask:// needs Dask's distributed package: pip install 'govlab[dask]'"
        ) from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    with client:
        _check_workers(client, address)
        futures = {
            client.submit(simulate, r.kwargs, key=f"govlab-run-{r.key}", pure=False): r for r in missing
        }
        kept: set[str] = set()
        try:
            _collect(client, futures, kept, keep, address)
        except BaseException:
            _store_arrived(futures, kept, keep)
            try:
                client.cancel(list(futures))
            except (OSError, TimeoutError):  # the scheduler is gone, and the runs with it
                pass
            raise


def _collect(client: Any, futures: dict[Any, RunSpec], kept: set[str], keep: Callable[..., None], address: str) -> None:
    """``keep`` each result as it arrives; raise ClusterError after NO_WORKERS_TIMEOUT_S without a worker,
    or when the scheduler is gone."""
    from distributed import as_completed
    from distributed.utils import CancelledError

    def gone(why: str) -> ClusterError:
        return ClusterError(
            f"the Dask scheduler at {address} is gone ({why}), with {len(pending)} run(s) left; "
            f"the {len(kept)} finished run(s) are stored: run the same command again to resume"
        )

    arriving = as_completed(list(futures), loop=client.loop)
    pending = set(futures)
    alone_since: float | None = None
    last_look = time.monotonic()
    while pending:
        done = arriving.next_batch(block=False) if arriving.has_ready() else []
        for future in done:
            r = futures[future]
            try:
                outcome = _outcome(future, r)
            except TimeoutError:  # its result was lost with the worker that held it: it is run again
                arriving.add(future)
                continue
            except CancelledError:  # only the scheduler's loss cancels a run govlab did not cancel
                raise gone("it cancelled the runs") from None
            keep(r, outcome)
            kept.add(r.key)
            pending.discard(future)
        if not done:
            time.sleep(_READY_POLL_S)
        if time.monotonic() - last_look < POLL_S:
            continue
        last_look = time.monotonic()
        try:
            workers = client.nthreads()
        except (OSError, TimeoutError):  # CommClosedError is an OSError
            raise gone("it does not answer") from None
        if workers:
            alone_since = None
        elif alone_since is None:
            alone_since = time.monotonic()
        elif time.monotonic() - alone_since > NO_WORKERS_TIMEOUT_S:
            raise ClusterError(
                f"no workers: the Dask scheduler at {address} has had no worker for {NO_WORKERS_TIMEOUT_S:.0f} s, "
                f"with {len(pending)} run(s) left; the {len(kept)} finished run(s) are stored"
            )


def _check_workers(client: Any, address: str) -> None:
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError):
        raise ClusterError(f"the Dask scheduler at {address} has no workers") from None
    try:
        versions = client.run(govlab_version)
    except ImportError as e:
        raise ClusterError(f"the Dask workers of {address} cannot import govlab: {e}") from None
    mine = govlab_version()
    wrong = {worker: v for worker, v in versions.items() if v != mine}
    if wrong:
        listing = ", ".join(f"{w} has {v}" for w, v in sorted(wrong.items()))
        raise ClusterError(f"the Dask workers must run govlab {mine}, as this client: {listing}")


def _outcome(future: Any, r: RunSpec) -> tuple[str, float]:
    from distributed import KilledWorker

    try:
        return future.result(timeout=POLL_S)
    except KilledWorker:
        raise ClusterError(
            f"run {r.key[:12]} ({r.config}, seed {r.seed}) was lost with every Dask worker that took it; "
            "Dask gave up on it (distributed.scheduler.allowed-failures)"
        ) from None


def _store_arrived(futures: dict[Any, RunSpec], kept: set[str], keep: Callable[..., None]) -> None:
    for future, r in futures.items():
        if r.key not in kept and future.status == "finished":
            try:
                outcome = future.result(timeout=POLL_S)
            except Exception:  # lost with its worker, or the cluster is gone: nothing to store
                continue
            keep(r, outcome, notify=False)
            kept.add(r.key)

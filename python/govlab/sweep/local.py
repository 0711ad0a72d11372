"""The local process pool (pipeline stage: execute).

:func:`run` simulates run requests on ``jobs`` worker processes and hands
every outcome to ``keep`` as it arrives. Each worker is a fresh interpreter
started as ``python -m govlab._worker`` (:func:`govlab.sweep.worker.serve`),
one run at a time over a pair of pipes. Unlike multiprocessing's spawn and
forkserver, which re-run the parent's main module in every worker, nothing of
the user's program is imported there: ``govlab.compare`` works the same from a
script without an ``if __name__ == "__main__":`` guard, a script on standard
input, ``python -c``, a notebook and the command line. A worker gets the
parent's ``sys.path`` and working directory.

The workers run in their own process group and ignore SIGINT, so Ctrl-C
reaches only this process (and SIGTERM, which the command line turns into the
same interruption): it waits for the runs in flight and keeps them, then
re-raises; a second Ctrl-C while it waits abandons them. A worker dies with
this process, however it ends (``kill -9`` included): see
:func:`govlab.sweep.worker.die_with_parent`. A worker that cannot start, or
dies during a run, raises one :class:`govlab.exceptions.WorkerError`.
"""

from __future__ import annotations

import itertools
import os
import selectors
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from govlab.exceptions import WorkerError
from govlab.plan import RunSpec
from govlab.sweep import worker

__all__ = ["run"]


#: Seconds between a worker's looks at whether its parent is still there.
PARENT_POLL_S = 1.0

#: Seconds a worker gets to exit once its request pipe is closed, before it is killed.
EXIT_WAIT_S = 10.0

_HINT = "simulate in this process instead with jobs=1 (--jobs 1)"


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self) -> None:
        requests_r, self.requests = os.pipe()
        self.answers, answers_w = os.pipe()
        try:
            stderr = os.dup(2)
        except OSError:  # no standard error to share: the worker's goes nowhere
            stderr = os.open(os.devnull, os.O_WRONLY)
        # Its standard error until it has started, for the message if it cannot.
        self.startup_log = tempfile.TemporaryFile()
        argv = [sys.executable, "-P", "-m", "govlab._worker", str(os.getpid()), str(requests_r), str(answers_w)]
        argv += [str(stderr), str(PARENT_POLL_S)]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(os.path.abspath(p) if p else os.getcwd() for p in sys.path if isinstance(p, str)))
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stderr=self.startup_log,
                pass_fds=(requests_r, answers_w, stderr),
                env=env,
                process_group=0,
            )
        except OSError as e:
            self.close()
            raise WorkerError(f"cannot start a worker process ({sys.executable} -m govlab._worker): {e}; {_HINT}") from None
        finally:
            for fd in (requests_r, answers_w, stderr):
                os.close(fd)
        self.started = False

    def submit(self, kwargs: dict[str, Any]) -> None:
        try:
            worker.send(self.requests, kwargs)
        except OSError:
            raise self._gone(None) from None

    def answer(self, run: RunSpec | None) -> Any:
        """The next message; None for ``ready``, the outcome of ``run`` for its answer."""
        try:
            kind, payload = worker.receive(self.answers)
        except EOFError:
            raise self._gone(run) from None
        if kind == "ready":
            self.started = True
            self.startup_log.close()
            return None
        if kind == "error":
            raise payload
        return payload

    def _gone(self, run: RunSpec | None) -> WorkerError:
        """The error for a worker whose pipe closed: it could not start, or died."""
        status = self.process.wait()
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        if not self.started:
            self.startup_log.seek(0)
            lines = self.startup_log.read().decode(errors="replace").strip().splitlines()
            said = f": {lines[-1]}" if lines else ""
            return WorkerError(f"govlab's worker process ({sys.executable} -m govlab._worker) {how}{said}; {_HINT}")
        doing = f" during run {run.key[:12]} ({run.config}, seed {run.seed})" if run is not None else ""
        return WorkerError(f"a worker process (pid {self.process.pid}) {how}{doing}; the runs finished are stored")

    def close(self, kill: bool = False) -> None:
        if self.requests >= 0:
            os.close(self.requests)
            self.requests = -1
        process = getattr(self, "process", None)
        if process is not None:
            if kill:
                process.kill()
            try:
                process.wait(EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.answers >= 0:
            os.close(self.answers)
            self.answers = -1
        self.startup_log.close()


def run(missing: Iterable[RunSpec], jobs: int, keep: Callable[..., None]) -> None:
    """Simulate ``missing`` on a pool of ``jobs`` processes; ``keep(run, outcome)`` each result.

    ``missing`` is read as runs are started (the sweep claims each run in the
    database when it is taken from it); the pool starts only if it yields one.
    """
    queue = iter(missing)
    # At most `jobs` runs are submitted at a time, one per worker, so that every
    # submitted run is really running: on Ctrl-C there is no queue to cancel.
    first = list(itertools.islice(queue, jobs))
    if not first:
        return
    workers: list[_Worker] = []
    busy: dict[_Worker, RunSpec] = {}
    select = selectors.DefaultSelector()
    abandoned = False
    try:
        for r in first:
            w = _Worker()
            workers.append(w)
            select.register(w.answers, selectors.EVENT_READ, w)
            w.submit(r.kwargs)
            busy[w] = r
        while busy:
            for key, _ in select.select():
                w = key.data
                if w not in busy:  # idle for good (no runs left), and its pipe closed: it ended
                    select.unregister(w.answers)
                    continue
                # Out of `busy` before its answer is read: a run that failed is not waited for again.
                r = busy.pop(w)
                outcome = w.answer(r)
                if outcome is None:
                    busy[w] = r
                    continue
                keep(r, outcome)
                for following in itertools.islice(queue, 1):
                    w.submit(following.kwargs)
                    busy[w] = following
    except BaseException:
        abandoned = _drain(busy, keep)
        raise
    finally:
        select.close()
        for w in workers:
            w.close(kill=abandoned)


def _drain(busy: dict[_Worker, RunSpec], keep: Callable[..., None]) -> bool:
    """After an error or Ctrl-C: keep what the workers in flight finish; True if abandoned."""
    try:
        if busy:
            print(
                f"govlab: stopping; storing the {len(busy)} run(s) in flight (Ctrl-C again to abandon them)",
                file=sys.stderr,
            )
        for w, r in busy.items():
            try:
                outcome = w.answer(r)
                while outcome is None:
                    outcome = w.answer(r)
            except Exception:  # a failed run in flight: nothing to store
                continue
            keep(r, outcome, notify=False)
        return False
    except KeyboardInterrupt:
        return True

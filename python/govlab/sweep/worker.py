"""What a worker process does: simulate one run request (pipeline stage: execute).

A worker gets a run request's keyword arguments (:attr:`govlab.plan.RunSpec.kwargs`,
built once by :mod:`govlab.plan`) and returns the result as JSON text and the wall
time it took. The Dask executor (:mod:`govlab.sweep.dask`) sends :func:`simulate` to its
workers; the local pool (:mod:`govlab.sweep.local`) starts each worker as
``python -m govlab._worker``, which runs :func:`serve`: the workers need nothing
but govlab itself, and never import the user's main module (a script without an
``if __name__ == "__main__":`` guard, a script on standard input, ``python -c``).

:func:`serve` talks to its parent over two pipes, one message a frame
(:func:`send`, :func:`receive`: an 8-byte length, then a pickle): it answers
``("ready", pid)`` once started, then for each request ``("done", (result,
wall_s))`` or ``("error", exception)``, until the request pipe closes.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import struct
import sys
import threading
import time
from typing import Any

__all__ = ["simulate", "govlab_version", "die_with_parent", "serve", "send", "receive"]

_FRAME = struct.Struct("!Q")

#: prctl(2) option: the signal this process gets when its parent thread ends (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def simulate(kwargs: dict[str, Any]) -> tuple[str, float]:
    """One run in a worker: its result as JSON text (``govlab.run(**kwargs).to_dict()`` as the
    engine wrote it, for the store as it stands) and its wall time.

    ``kwargs["samples"]``, ``{"sampler", "interval_ns"[, "warmup_ns"]}`` (:mod:`govlab.samples`),
    runs it with the engine's workload intervals and keeps, in their place, what the samples
    are read from: ``result["samples"]`` (:func:`govlab.samples.compact`; without the
    warm-up's intervals)."""
    from govlab.api import _run_text

    start = time.perf_counter()
    kwargs = dict(kwargs)
    sampling = kwargs.pop("samples", None)
    if sampling is None:
        text = _run_text(**kwargs)
    else:
        from govlab import samples

        result = json.loads(_run_text(**kwargs, interval=f"{sampling['interval_ns']}ns", workload_intervals=True))
        result["samples"] = samples.compact(sampling["sampler"], result.pop("intervals"), sampling.get("warmup_ns", 0))
        text = json.dumps(result, separators=(",", ":"))
    return text, time.perf_counter() - start


def govlab_version() -> str:
    """The govlab version and engine digest where this runs (a Dask worker, to check it matches the client's)."""
    from govlab._core import __engine__, __version__

    return f"{__version__} (engine {__engine__})"


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


def send(fd: int, message: Any) -> None:
    """Write ``message`` to the pipe ``fd`` as one frame."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int) -> Any:
    """The next frame's message from the pipe ``fd``; EOFError when the pipe is closed."""
    (size,) = _FRAME.unpack(_read_exactly(fd, _FRAME.size))
    return pickle.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def serve(parent_pid: int, requests: int, answers: int, stderr: int, poll_s: float) -> None:
    """A local pool's worker: simulate each request from the pipe ``requests``, answer on ``answers``.

    Ctrl-C is for the parent (it stores the runs in flight), so this ignores
    SIGINT, and it dies with the parent (:func:`die_with_parent`). Until it
    answers ``ready`` its standard error is a file the parent reads if it
    cannot start; then it writes to ``stderr``, the parent's.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent_pid, poll_s)
    os.dup2(stderr, 2)
    os.close(stderr)
    send(answers, ("ready", os.getpid()))
    while True:
        try:
            kwargs = receive(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("done", simulate(kwargs))
        except Exception as e:
            answer = ("error", e)
        try:
            send(answers, answer)
        except Exception as e:  # an exception that does not pickle
            from govlab.exceptions import WorkerError

            send(answers, ("error", WorkerError(f"a run's error could not be sent from its worker: {answer[1]!r} ({e})")))

"""Faults for the Dask executor's tests; workers import this module, so it lives in a file.

:class:`KillOnce` is a worker plugin: the worker named ``victim`` kills its own
process with SIGKILL when its ``nth`` task starts executing, as the OOM killer
or a lost machine would, mid-task. A marker file makes this happen once in the
whole cluster: the worker the nanny starts in its place runs normally.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin


class KillOnce(WorkerPlugin):
    name = "govlab-test-kill-once"

    def __init__(self, marker: str, victim: Any = 0, nth: int = 2) -> None:
        self.marker = marker
        self.victim = victim
        self.nth = nth
        self.started = 0
        self.worker_name: Any = None

    def setup(self, worker: Any) -> None:
        self.worker_name = worker.name

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish != "executing" or self.worker_name != self.victim:
            return
        self.started += 1
        if self.started != self.nth:
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, f"{os.getpid()} {key}\n".encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)

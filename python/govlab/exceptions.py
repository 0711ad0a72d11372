"""govlab's exceptions: the whole hierarchy, written down here and nowhere else.

Every error govlab raises on purpose is a :class:`GovlabError`. A wrong value
is also a ``ValueError``, a file the operating system refuses also an
``OSError`` (``FileNotFoundError`` or ``PermissionError`` where it is one),
with ``errno`` and ``filename``; an interrupted run raises
``KeyboardInterrupt``::

    Exception
    └── GovlabError
        ├── UnknownNameError     (ValueError)         an unknown platform, workload, governor, ...
        ├── InvalidValueError    (ValueError)         a tunable, parameter or argument value out of range
        │   └── InvalidTypeError (TypeError)          a Python argument of the wrong type
        ├── UnknownKeyError      (ValueError)         a tunable or parameter its owner does not have
        ├── ExperimentError      (ValueError)         a mistake in an experiment file: FILE:LINE: KEY: message
        ├── ResultsError         (ValueError)         a comparison that cannot be made
        │   ├── StoreError                            a results database that cannot be used
        │   └── UnfinishedRuns                        runs that did not end within the duration
        ├── MissingTraceEventError (KeyError)         an event the trace does not hold (Trace.df_event)
        ├── FileFormatError                           a platform or workload file that cannot be used
        ├── TraceError                                a trace that cannot be read
        ├── UnsupportedError                          a governor the platform's driver cannot serve
        ├── GovernorError                             a governor written in Python failed during a run
        ├── WorkerError                               a local worker process that could not start or died
        ├── ClusterError                              a Dask cluster that cannot run the sweep
        └── FileAccessError      (OSError)            a file the operating system refuses
            ├── MissingFileError    (FileNotFoundError)
            ├── FilePermissionError (PermissionError)
            └── OutputError                           an output file that cannot be written

The engine's classes (the first three and ``FileFormatError`` to
``GovernorError``) are built in Rust (``crates/govlab-py/src/error.rs``) and
re-exported here; the others are defined here. A file error from the engine
comes through :func:`file_error`, so ``govlab.run``, ``govlab.Trace`` and the
command line all raise the same classes. ``MissingTraceEventError`` is a
``KeyError`` as LISA's is (``except KeyError`` works on both); its ``str()`` is
the message, not a quoted key.
"""

from __future__ import annotations

import difflib
import errno as _errno
import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import TypeVar

from govlab._core import (
    FileFormatError,
    GovernorError,
    GovlabError,
    InvalidValueError,
    TraceError,
    UnknownKeyError,
    UnknownNameError,
    UnsupportedError,
)


class ResultsError(GovlabError, ValueError):
    """A comparison that cannot be made: a results database without the experiment
    asked for, runs that did not finish, a database gone bad."""


class InvalidTypeError(InvalidValueError, TypeError):
    """An argument of the wrong type (``open_results(None)``): also a
    ``TypeError``, and an ``InvalidValueError`` as a wrong value is."""


class StoreError(ResultsError):
    """A results database that cannot be used: not govlab's, corrupted, or in a place that cannot be opened."""


class UnfinishedRuns(ResultsError):
    """Runs of a workload that ends by itself did not end within the experiment's duration.

    Their primary metric (the time so far, or a rate over part of the work) is
    no result, so no table is made of them: the message names the benchmark,
    configuration, axis value and how far each got, and the fix is a longer
    ``duration``.
    """


class ExperimentError(GovlabError, ValueError):
    """A mistake in an experiment file: ``FILE:LINE: KEY: message``.

    ``path``, ``line`` (1-based, or None when it cannot be told) and ``key``
    (a dotted TOML path such as ``config[2].cpufreq``) are attributes too.
    """

    def __init__(self, path: str, line: int | None, key: str | None, message: str) -> None:
        self.path, self.line, self.key, self.message = path, line, key, message
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.path, self.line, self.key, self.message))


class MissingTraceEventError(GovlabError, KeyError):
    """An event the trace does not hold, asked of :meth:`govlab.Trace.df_event`
    (LISA's ``MissingTraceEventError``). ``event``: the name asked for;
    ``available``: the events the trace holds; ``closest``: the nearest of them, or None."""

    def __init__(self, event: str, available: Iterable[str]) -> None:
        self.event = event
        self.available = sorted(available)
        near = difflib.get_close_matches(event, self.available, n=1, cutoff=0.6)
        self.closest = near[0] if near else None
        hint = f"; did you mean {self.closest!r}?" if self.closest else ""
        listing = ", ".join(self.available) or "none"
        super().__init__(f"event {event!r}: not in this trace{hint} (the trace has: {listing})")

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.event, self.available))


class WorkerError(GovlabError):
    """A worker process of the local pool could not start, or died during a run."""


class ClusterError(GovlabError):
    """The Dask cluster cannot run the sweep (unreachable, no workers, wrong govlab, runs lost)."""


class FileAccessError(GovlabError, OSError):
    """A file the operating system refuses (not there, not readable): an ``OSError``
    with ``errno``, ``strerror`` and ``filename``; its message is ``FILE: reason``."""

    def __str__(self) -> str:
        if self.filename is not None and self.strerror:
            return f"{self.filename}: {self.strerror}"
        if self.errno is None and len(self.args) == 1:
            return str(self.args[0])
        if self.filename is None and self.strerror:
            return str(self.strerror)
        return OSError.__str__(self)


class MissingFileError(FileAccessError, FileNotFoundError):
    """A file that is not there."""


class FilePermissionError(FileAccessError, PermissionError):
    """A file that may not be read or written."""


class OutputError(FileAccessError):
    """An output file that cannot be written: its directory is missing or read-only, or it is not a regular file."""


def file_error(
    errno: int | None, message: str | None = None, filename: str | None = None, like: type[OSError] = OSError
) -> FileAccessError:
    """The :class:`FileAccessError` for ``errno`` on ``filename``
    (``MissingFileError`` for ENOENT, ``FilePermissionError`` for EACCES and EPERM),
    its message ``FILE: message`` (``message`` None: the system's text for ``errno``).
    Without an errno, ``message`` stands alone and ``like`` (the original
    error's class) chooses the class."""
    if errno is None:
        cls = MissingFileError if issubclass(like, FileNotFoundError) else FilePermissionError if issubclass(like, PermissionError) else FileAccessError
        err = cls(message or cls.__name__)
        if filename is not None:
            err.filename = filename
        return err
    cls = {_errno.ENOENT: MissingFileError, _errno.EACCES: FilePermissionError, _errno.EPERM: FilePermissionError}.get(
        errno, FileAccessError
    )
    return cls(errno, message or os.strerror(errno), filename)


_T = TypeVar("_T")


#: CLI flags and the Python arguments that stand for them.
_FLAGS = {"--jobs": "jobs", "--db": "db", "--executor": "executor", "--experiment": "experiment", "--quick": "quick"}


def _python_names(message: str) -> str:
    return re.sub(r"--[a-z][a-z-]*", lambda m: _FLAGS.get(m.group(0), m.group(0)), message)


def checked(call: Callable[[], _T]) -> _T:
    """``call()``, its errors raised as :class:`GovlabError` subclasses with the command's messages."""
    try:
        return call()
    except GovlabError:
        raise
    except sqlite3.Error as e:
        raise StoreError(f"the results database cannot be used: {e}") from e
    except OSError as e:
        if e.errno is None:
            raise file_error(None, _python_names(str(e) or type(e).__name__), like=type(e)) from e
        raise file_error(e.errno, e.strerror, e.filename, like=type(e)) from e
    except ValueError as e:
        raise ResultsError(_python_names(str(e) or type(e).__name__)) from e


__all__ = [
    "GovlabError",
    "UnknownNameError",
    "InvalidValueError",
    "InvalidTypeError",
    "UnknownKeyError",
    "ExperimentError",
    "ResultsError",
    "StoreError",
    "UnfinishedRuns",
    "MissingTraceEventError",
    "FileFormatError",
    "TraceError",
    "UnsupportedError",
    "GovernorError",
    "WorkerError",
    "ClusterError",
    "FileAccessError",
    "MissingFileError",
    "FilePermissionError",
    "OutputError",
    "file_error",
]

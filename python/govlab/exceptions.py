"""govlab's exceptions.

The engine's classes are built in Rust (``crates/govlab-py/src/error.rs``)
and re-exported here; the notebook API's two (``ResultsError``,
``FileAccessError``) are defined here::

    Exception
    └── GovlabError
        ├── UnknownNameError                  unknown platform, workload, governor, ...
        ├── InvalidValueError  (ValueError)   a tunable or parameter value out of range
        │   └── InvalidTypeError (TypeError)  a Python argument of the wrong type
        ├── UnknownKeyError    (ValueError)   a tunable or parameter its owner does not have
        ├── FileFormatError                   a platform or workload file that cannot be used
        ├── TraceError                        a trace that cannot be read
        ├── UnsupportedError                  a governor the platform's driver cannot serve
        ├── GovernorError                     a governor written in Python failed during a run
        ├── ResultsError       (ValueError)   a comparison that cannot be made (notebook API)
        └── FileAccessError    (OSError)      a file the OS refuses (notebook API)

A file the operating system refuses raises the built-in FileNotFoundError,
PermissionError or OSError from ``govlab.run`` and the trace functions of
``govlab.trace``, and an interrupted run raises KeyboardInterrupt. The
notebook API (``govlab.compare``, ``govlab.open_results``,
``govlab.reproduce``, ``govlab.Trace``) raises only ``GovlabError``s: a
refused file there is a :class:`FileAccessError`, also an ``OSError`` with
the same errno and message.
"""

import re
import sqlite3
from collections.abc import Callable
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


class FileAccessError(GovlabError, OSError):
    """A file the operating system refuses (not there, not readable), from the
    notebook API; also an ``OSError`` with the errno and message of the original."""


class InvalidTypeError(InvalidValueError, TypeError):
    """An argument of the wrong type (``open_results(None)``): also a
    ``TypeError``, and an ``InvalidValueError`` as a wrong value is."""


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
        raise ResultsError(f"the results database cannot be used: {e}") from e
    except OSError as e:
        if e.errno is None:
            raise FileAccessError(_python_names(str(e) or type(e).__name__)) from e
        raise FileAccessError(e.errno, e.strerror, *([e.filename] if e.filename is not None else [])) from e
    except ValueError as e:
        raise ResultsError(_python_names(str(e) or type(e).__name__)) from e


__all__ = [
    "ResultsError",
    "FileAccessError",
    "GovlabError",
    "UnknownNameError",
    "InvalidValueError",
    "InvalidTypeError",
    "UnknownKeyError",
    "FileFormatError",
    "TraceError",
    "UnsupportedError",
    "GovernorError",
]

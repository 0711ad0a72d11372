"""govlab's exceptions.

The engine's classes are built in Rust (``crates/govlab-py/src/error.rs``)
and re-exported here; the notebook API's two (``ResultsError``,
``FileAccessError``) are defined here::

    Exception
    └── GovlabError
        ├── UnknownNameError                  unknown platform, workload, governor, ...
        ├── InvalidValueError  (ValueError)   a tunable or parameter value out of range
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


__all__ = [
    "ResultsError",
    "FileAccessError",
    "GovlabError",
    "UnknownNameError",
    "InvalidValueError",
    "UnknownKeyError",
    "FileFormatError",
    "TraceError",
    "UnsupportedError",
    "GovernorError",
]

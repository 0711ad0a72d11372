"""govlab's exceptions.

The classes are built in Rust (``crates/govlab-py/src/error.rs``); this module
only re-exports them::

    Exception
    └── GovlabError
        ├── UnknownNameError                  unknown platform, workload, governor, ...
        ├── InvalidValueError  (ValueError)   a tunable or parameter value out of range
        ├── UnknownKeyError    (ValueError)   a tunable or parameter its owner does not have
        ├── FileFormatError                   a platform or workload file that cannot be used
        ├── TraceError                        a trace that cannot be read
        ├── UnsupportedError                  a governor the platform's driver cannot serve
        └── GovernorError                     a governor written in Python failed during a run

A file the operating system refuses raises the built-in FileNotFoundError,
PermissionError or OSError, and an interrupted run raises KeyboardInterrupt.
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

__all__ = [
    "GovlabError",
    "UnknownNameError",
    "InvalidValueError",
    "UnknownKeyError",
    "FileFormatError",
    "TraceError",
    "UnsupportedError",
    "GovernorError",
]

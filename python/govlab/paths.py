"""Where govlab's source tree keeps what comes beside the code: ``experiments/`` and ``data/``.

govlab is installed from its source tree (``make build``, an editable
install), so the package sits at ``python/govlab`` of the checkout and the
tree's folders are found from there, never from the working directory: a
notebook or script runs the same wherever it is started.
"""

from __future__ import annotations

import errno
from pathlib import Path

__all__ = ["ROOT", "data_file"]

#: The source tree: this file is python/govlab/paths.py.
ROOT = Path(__file__).resolve().parents[2]


def data_file(*parts: str) -> Path:
    """The file ``data/<parts...>`` of govlab's source tree (``data_file("real", "lisa",
    "sched_load", "trace.dat")``); a :class:`govlab.MissingFileError` when it is not there."""
    path = ROOT.joinpath("data", *parts)
    if not path.exists():
        from govlab.exceptions import file_error

        raise file_error(errno.ENOENT, "not in govlab's data folder (it comes with a source checkout)", str(path))
    return path

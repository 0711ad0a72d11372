"""Output files: checked before any work, written whole, through symlinks, never over a device.

Every file govlab writes (the HTML reports of ``compare``, ``report``,
``reproduce`` and ``trace stats``; the results database when it is created;
the trace of ``run --trace``, whose writer is in the core) goes through here:

- :func:`check` is called before anything is simulated. It resolves a
  symlink to the file it names (so ``--html link.html`` keeps the link and
  writes its target), refuses anything that exists and is not a regular file
  (a directory, a device such as ``/dev/full`` or ``/dev/stdout``, a FIFO, a
  socket), and checks that the directory exists and is writable, so that a
  sweep never runs only to fail at its last step.
- :func:`refuse_inputs` is called there too: an output may not be the same
  file as an input of the command or the results database (the same device
  and inode, or the same resolved path for a file not yet there), so that
  ``report R.sqlite --html R.sqlite`` or ``trace stats T --html T`` cannot
  replace what they read.
- :func:`write_text` writes a temporary file in the target's directory and
  renames it over the target: a reader sees the old file or the new one, never
  half of one. The temporary file is removed on any error, Ctrl-C included.

Errors are :class:`OutputError` (a :class:`govlab.GovlabError` and an
:class:`OSError`, so the command line reports it as bad input: exit 2, one line).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence

from govlab.exceptions import OutputError
from govlab.fmt import clip

__all__ = ["OutputError", "check", "refuse_inputs", "write_text"]


def check(path: str | os.PathLike[str], what: str = "output file") -> str:
    """The real path ``path`` will be written at, after checking it can be; raises :class:`OutputError`.

    ``what`` names the file in the message (``"HTML report"``, ``"trace"``, ...).
    """
    shown = os.fspath(path)
    if not shown.strip():
        raise OutputError(f"the {what}'s file name is empty")
    if shown.endswith(os.sep):
        raise OutputError(f"cannot write the {what} {shown}: the name ends in '{os.sep}', which names a directory, not a file")
    # The type of what the name stands for, through every link (including
    # /dev/stdout's /proc/self/fd/1, which realpath cannot follow).
    try:
        st = os.stat(shown)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"cannot write the {what} {shown}: {e.strerror or e}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputError(f"cannot write the {what} {shown}: it is {_kind(st.st_mode)}, not a regular file")
    # The file a symlink (or a chain of them, or a dangling one) names is the one to write.
    target = os.path.realpath(shown)
    if st is not None and not os.path.isfile(target):
        raise OutputError(f"cannot write the {what} {shown}: it does not name a file in a directory")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write the {what} {shown}: the directory {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write the {what} {shown}: the directory {directory} is not writable")
    if st is not None and not os.access(target, os.W_OK):
        raise OutputError(f"cannot write the {what} {shown}: the file is not writable")
    return target


#: Files SQLite keeps beside a database, part of it while it is open.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def refuse_inputs(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[tuple[str, str | None]]) -> None:
    """Raise :class:`OutputError` when an output is the same file as an input or another output.

    Each entry is ``(option, path)``, ``option`` naming it in the message
    (``"--html"``, ``"DB"``); a None path is left out. A results database
    among ``outputs`` or ``inputs`` is named by an option ending in ``db``
    or ``DB``: its SQLite side files count as it.
    """
    seen: list[tuple[str, str, tuple[object, ...]]] = []
    for option, path in inputs:
        if path is not None:
            seen += [(option, shown, key) for shown, key in _identities(option, path)]
    for option, path in outputs:
        if path is None:
            continue
        key = _identity(path)
        for other, other_path, other_key in seen:
            if key == other_key:
                raise OutputError(
                    f"{option} {clip(path)} is the same file as {other} {clip(other_path)}: "
                    "an output never replaces an input; choose another file"
                )
        seen += [(option, shown, k) for shown, k in _identities(option, path)]


def _identities(option: str, path: str) -> list[tuple[str, tuple[object, ...]]]:
    names = [path]
    if option.lower().endswith("db"):
        names += [path + side for side in SQLITE_SIDE_FILES]
    return [(name, _identity(name)) for name in names]


def _identity(path: str) -> tuple[object, ...]:
    """What makes two names the same file: device and inode when it exists, else its resolved path."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def write_text(path: str | os.PathLike[str], text: str, what: str = "output file") -> None:
    """Write ``text`` (UTF-8) to ``path`` whole: see the module doc. Raises :class:`OutputError`."""
    shown = os.fspath(path)
    target = check(path, what)
    directory, name = os.path.split(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".govlab-tmp", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write the {what} {shown}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        _keep_mode(target, tmp)
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OutputError(f"cannot write the {what} {shown}: {e.strerror or e}") from None
        raise


def _keep_mode(target: str, tmp: str) -> None:
    """Give the new file the old one's permissions, or the umask's default for a new file."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"

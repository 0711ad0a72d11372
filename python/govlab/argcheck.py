"""The arguments of the public Python functions, checked at their entry.

One call per argument (``path("db", db, none=True)``) states what it takes;
a wrong type raises :class:`govlab.exceptions.InvalidTypeError` (also a
``TypeError``), a value out of range :class:`InvalidValueError` (also a
``ValueError``), each naming the argument and showing at most
:data:`govlab.fmt.MAX_SHOWN_CHARS` characters of the value. Each returns the
value in the form the function uses (a path as ``str``).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Sequence
from typing import Any

from govlab.exceptions import InvalidTypeError, InvalidValueError
from govlab.fmt import clip

__all__ = ["path", "text", "texts", "integer", "flag", "function"]


def _shown(value: Any) -> str:
    try:
        return clip(repr(value))
    except Exception:  # a repr that fails is the caller's object's, not ours to raise
        return f"<{type(value).__name__}>"


def _wrong(name: str, value: Any, expected: str) -> InvalidTypeError:
    return InvalidTypeError(f"{name}: expected {expected}, got {type(value).__name__} {_shown(value)}")


def path(name: str, value: Any, none: bool = False) -> str | None:
    """A file path: ``str`` or ``os.PathLike`` of ``str``, not empty."""
    if value is None and none:
        return None
    if not isinstance(value, (str, os.PathLike)) or not isinstance(os.fspath(value), str):
        raise _wrong(name, value, "a file path (str or os.PathLike)" + (" or None" if none else ""))
    shown = os.fspath(value)
    if not shown.strip():
        raise InvalidValueError(f"{name}: the file path is empty")
    return shown


def text(name: str, value: Any, none: bool = False) -> str | None:
    """A non-empty ``str``."""
    if value is None and none:
        return None
    if not isinstance(value, str):
        raise _wrong(name, value, "a str" + (" or None" if none else ""))
    if not value.strip():
        raise InvalidValueError(f"{name}: the value is empty")
    return value


def texts(name: str, value: Any, none: bool = False) -> list[str] | None:
    """A non-empty ``str``, or a sequence of them (answered as a list)."""
    if value is None and none:
        return None
    if isinstance(value, str):
        return [text(name, value) or ""]
    if not isinstance(value, Sequence) or not value:
        raise _wrong(name, value, "a str or a non-empty list of str" + (" or None" if none else ""))
    return [text(f"{name}[{i}]", v) or "" for i, v in enumerate(value)]


def integer(name: str, value: Any, low: int, high: int, none: bool = False) -> int | None:
    """An integer (not a bool) from ``low`` to ``high``."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _wrong(name, value, "an integer" + (" or None" if none else ""))
    if not low <= value <= high:
        raise InvalidValueError(f"{name}: {clip(str(value))} is out of range: an integer from {low} to {high}")
    return int(value)


def flag(name: str, value: Any) -> bool:
    """``True`` or ``False``."""
    if not isinstance(value, bool):
        raise _wrong(name, value, "True or False")
    return value


def function(name: str, value: Any, none: bool = False) -> Callable[..., Any] | None:
    """Something callable."""
    if value is None and none:
        return None
    if not callable(value):
        raise _wrong(name, value, "a callable" + (" or None" if none else ""))
    return value

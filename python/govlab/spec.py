"""The spec grammar ``NAME[:k=v,...]``, read in one place (used by every stage).

A platform, workload or governor is named by a spec such as
``periodic:tasks=4,run_us=2000``: a name (a built-in name, a file path, or
``py:FILE.py:CLASS`` for a governor written in Python), then optional
``key=value`` settings after the first colon, separated by commas. The engine
checks names and values; this module only splits the text. Writing a spec
from its parts is :func:`govlab.api.spec_text`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["split", "parts", "settings", "looks_like_file", "files"]


def split(text: str) -> tuple[str, str, str]:
    """``(name, ":", settings text)`` of ``text``, as :meth:`str.partition` at the first colon."""
    return text.partition(":")


def settings(text: str) -> dict[str, str]:
    """``"k=v, k2=v2"`` as ``{k: v, k2: v2}`` (keys and values stripped, empty items skipped)."""
    out: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        k, _, v = item.partition("=")
        out[k.strip()] = v.strip()
    return out


def parts(spec: str) -> dict[str, Any]:
    """``"name:k=v,..."`` as ``{"name", "params": {k: v}}``."""
    name, _, rest = split(spec)
    return {"name": name.strip(), "params": settings(rest)}


def looks_like_file(name: str) -> bool:
    """Whether a spec's name is a file path (a platform or workload file) rather than a built-in name."""
    return "/" in name or name.endswith((".toml", ".json"))


def files(text: str | None) -> list[str]:
    """The files a spec reads: a platform or workload file (``NAME.toml``), an
    rt-app file (``rtapp:file=PATH``), a Python governor's file (``py:PATH.py:CLASS``)."""
    if not isinstance(text, str):
        return []
    text = text.strip()
    if text.startswith("py:"):
        body = text[3:]
        path, sep, _ = body.partition(".py:")
        return [path + ".py" if sep else body] if body else []
    name, _, rest = split(text)
    out = [name.strip()] if name.strip().lower().endswith(".toml") else []
    if name.strip() == "rtapp" and settings(rest).get("file"):
        out.append(settings(rest)["file"])
    return out

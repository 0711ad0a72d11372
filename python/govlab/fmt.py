"""Numbers, times and values as text, written in one place (used by every render step).

Every table the ``govlab`` command prints and the HTML reports show goes
through these helpers, so the same figure reads the same everywhere. They
only format: no rounding for analysis happens here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "finite",
    "fixed",
    "pct",
    "signed_pct",
    "value_label",
    "seed_range",
    "compact",
    "number",
    "seconds",
    "short_seconds",
    "right_aligned",
    "clip",
    "MAX_SHOWN_CHARS",
]

#: The most characters of a value an error message echoes.
MAX_SHOWN_CHARS = 200


def clip(text: str, most: int = MAX_SHOWN_CHARS) -> str:
    """``text`` cut to ``most`` characters for echoing a value in a message: its start and its
    end (a path's file name) around an ellipsis."""
    if len(text) <= most:
        return text
    tail = (most - 1) // 3
    return text[: most - 1 - tail] + "…" + text[len(text) - tail :]


def finite(data: Any) -> Any:
    """nan and infinities as None (null in standard JSON), through dicts, lists and tuples."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, Mapping):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def fixed(v: float | None, decimals: int) -> str:
    """``v`` with ``decimals`` decimals; ``-`` when undefined, ``inf``/``-inf`` when infinite."""
    if v is None or math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{decimals}f}"


def pct(p: float | None) -> str:
    """A difference in percent; ``n/a`` when undefined, including against a zero
    baseline (a Stddev of 0 when every repeat gave the same value)."""
    if p is None or not math.isfinite(p):
        return "n/a"
    return f"{p:.2f}%"


def signed_pct(p: float) -> str:
    """A difference in percent with its sign; ``n/a`` when not finite."""
    if not math.isfinite(p):
        return "n/a"
    return f"{p:+.2f}%"


def value_label(value: Any, none: str = "") -> str:
    """A parameter value as written in tables: booleans in TOML's spelling, None as ``none``."""
    if value is None:
        return none
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def seed_range(seeds: Sequence[int]) -> str:
    """``1-5`` for consecutive seeds (more than two), else ``1, 7, 42``."""
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def compact(value: Any) -> str:
    """A string as it is; anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def number(value: Any) -> str:
    """Integers with thousands separators; floats to 6 significant digits (or whole, from a million)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return compact(value)
    if isinstance(value, int):
        return f"{value:,}"
    if math.isfinite(value) and abs(value) >= 1e6:
        return f"{value:,.0f}"
    return f"{value:.6g}"


def seconds(s: float) -> str:
    """A duration with its unit: ``1.25s``, ``12.5ms``, ``40us``, or ``0``."""
    if s >= 1:
        return f"{s:.2f}s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f}ms"
    if s > 0:
        return f"{s * 1e6:.0f}us"
    return "0"


def short_seconds(s: float) -> str:
    """Seconds to 3 decimals, or whole microseconds (``12us``) below a millisecond."""
    return f"{s:.3f}" if s >= 0.001 or s == 0 else f"{s * 1e6:.0f}us"


def right_aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of cells as lines, each column right-aligned to its widest cell, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]

"""Real traces: ``govlab trace stats``.

:func:`stats` reads a trace (raw ftrace text, ``trace-cmd report`` text,
Android systrace HTML or trace-cmd's ``trace.dat``) and returns what the
engine's ``trace::stats`` computes: per CPU, time at each frequency and in
each idle state, idle-state usage, idle-period lengths, wakeups per second,
busy percentage, and the idle governor's accuracy against the oracle.
:func:`format_stats` prints it for a terminal.
"""

from __future__ import annotations

import json
import os
from typing import Any

from govlab import _core

__all__ = ["stats", "format_stats"]


def stats(path: str | os.PathLike[str], platform: str | None = None) -> dict[str, Any]:
    """Analyse the trace in ``path``; ``platform`` gives the idle states'
    target residencies (a platform name, spec or file; default: the engine's
    defaults, named in the result's ``idle_states_from``)."""
    return json.loads(_core.trace_stats(os.fspath(path), platform))


def format_stats(d: dict[str, Any]) -> str:
    """A compact human summary of :func:`stats`' result."""
    events = ", ".join(f"{name} {n}" for name, n in sorted(d["events"].items(), key=lambda kv: -kv[1]))
    lines = [
        f"{d['format']} | {d['nr_cpus']} CPUs | {d['duration_s']:.6f} s from {d['start_s']:.6f} s"
        f" | {sum(d['events'].values())} events",
        f"events: {events}",
        f"idle states from {d['idle_states_from']}",
        *(f"note: {n}" for n in d["notes"]),
        "",
    ]
    cpus = d["cpus"]
    states = [s["name"] for s in cpus[0]["idle_states"]] if cpus else []
    head = ["cpu", "busy", "unknown", "avg MHz", "trans", "wakeups/s", "idle exits/s", *(f"{s} usage/time" for s in states)]
    rows = [head]
    for c in cpus:
        khz = _avg_khz(c["time_in_state"])
        rows.append(
            [
                str(c["cpu"]),
                f"{c['busy_pct']:.1f}%",
                _s(c["unknown_ns"] / 1e9),
                f"{khz / 1000:.0f}" if khz else "-",
                str(c["transitions"]),
                f"{c['wakeups_per_s']:.1f}",
                f"{c['idle_exits_per_s']:.1f}",
                *(f"{s['usage']}/{_s(s['time_s'])}" for s in c["idle_states"]),
            ]
        )
    lines += _table(rows)

    lines += ["", "time in frequency (s; '?' before the first frequency event):"]
    freqs = sorted({int(k) for c in cpus for k in c["time_in_state"]})
    rows = [["cpu", *(f"{k // 1000} MHz" for k in freqs), "?"]]
    for c in cpus:
        tis = {int(k): v for k, v in c["time_in_state"].items()}
        rows.append([str(c["cpu"]), *(_s(tis[k]) if k in tis else "-" for k in freqs), _s(c["freq_unknown_s"])])
    lines += _table(rows)

    lines += ["", "idle periods (completed; µs) and the idle governor against the oracle:"]
    rows = [["cpu", "periods", "p50", "p99", "max", "<10", "<100", "<1ms", "<10ms", "<100ms", ">=100ms",
             "correct", "too deep", "too shallow", "oracle usage"]]
    for c in cpus:
        p = c["idle_periods"]
        a = c["idle_accuracy"]
        n = a["samples"]
        deep = sum(a["too_deep"].values())
        shallow = sum(a["too_shallow"].values())
        rows.append(
            [
                str(c["cpu"]),
                str(p["count"]),
                f"{p['p50_us']:.0f}",
                f"{p['p99_us']:.0f}",
                f"{p['max_us']:.0f}",
                *(str(k) for _, k in p["decades"]),
                _pct(a["correct"], n),
                _pct(deep, n),
                _pct(shallow, n),
                "/".join(str(u) for u in c["oracle_usage"]),
            ]
        )
    lines += _table(rows)
    return "\n".join(lines) + "\n"


def _avg_khz(tis: dict[str, float]) -> float | None:
    total = sum(tis.values())
    return sum(int(k) * v for k, v in tis.items()) / total if total else None


def _s(seconds: float) -> str:
    return f"{seconds:.3f}" if seconds >= 0.001 or seconds == 0 else f"{seconds * 1e6:.0f}us"


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.0f}% ({k})" if n else "-"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]

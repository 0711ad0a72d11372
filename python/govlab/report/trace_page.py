"""The HTML page of ``govlab trace stats --html`` (pipeline stage: render).

One self-contained file, like the compare report (same frame, plotly.js
embedded): the tables of ``govlab trace stats`` and a per-CPU timeline of
what each CPU was doing and at which frequency. Both come from the engine's
one sweep over the trace (``_core.trace_timeline``), so they cannot disagree.

Each number cell carries in ``data-path`` the JSON path (a list of keys) of
the figure of ``trace stats --format json`` it shows (times as s: that figure
times ``data-scale``); cells without one are labels or sums of such figures. Strings from the trace (comms, event names,
notes, the file name) are escaped as in :mod:`govlab.report`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from govlab._core import __version__
from govlab.report import figures, script_json
from govlab.report.timeline import CpuTimeline, from_engine
from govlab.result import avg_khz

__all__ = ["render", "write_html", "cpu_timeline"]

Cell = dict[str, Any]


def cpu_timeline(data: Mapping[str, Any]) -> CpuTimeline:
    """The engine's timeline (``_core.trace_timeline``'s ``timeline``) as the report's :class:`CpuTimeline`."""
    return from_engine(data)


def render(stats: Mapping[str, Any], timeline: Mapping[str, Any], source: str) -> str:
    """The whole page for the trace ``source``: its ``stats`` and ``timeline``."""
    import jinja2
    from plotly.offline import get_plotlyjs

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("govlab.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    return env.get_template("trace.html.j2").render(
        title=f"govlab trace stats: {source}",
        version=__version__,
        source=source,
        plotly_js=get_plotlyjs(),
        facts={
            "format": stats["format"],
            "nr_cpus": stats["nr_cpus"],
            "duration": f"{stats['duration_s']:.6f} s",
            "start": f"{stats['start_s']:.6f} s",
            "events": sum(stats["events"].values()),
            "idle_states_from": stats["idle_states_from"],
        },
        notes=stats["notes"],
        tables=[
            _events(stats),
            _per_cpu(stats),
            _idle_states(stats),
            _frequencies(stats),
            _idle_periods(stats),
        ],
        timeline=_timeline(timeline),
    )


def _num(value: float, decimals: int, *path: str | int, scale: float = 1.0) -> Cell:
    """``value × scale`` shown with ``decimals``; ``path`` names ``value`` in the JSON."""
    return {"text": f"{value * scale:.{decimals}f}", "path": json.dumps(list(path)), "scale": f"{scale:g}"}


def _label(text: Any) -> Cell:
    return {"text": str(text), "path": None, "scale": None}


#: What the tables say of a trace without sched_wakeup events, instead of counting 0 wakeups.
NO_WAKEUPS = "This trace has no sched_wakeup or sched_wakeup_new events: wakeups were not traced, so none are counted."


def has_wakeups(stats: Mapping[str, Any]) -> bool:
    """Whether the trace holds the events wakeups are counted from."""
    return any(stats["events"].get(name) for name in ("sched_wakeup", "sched_wakeup_new"))


def _table(anchor: str, title: str, note: str, head: Sequence[str], rows: list[list[Cell]]) -> dict[str, Any]:
    return {"anchor": anchor, "title": title, "note": note, "head": list(head), "rows": rows}


def _events(stats: Mapping[str, Any]) -> dict[str, Any]:
    rows = [[_label(name), _num(n, 0, "events", name)] for name, n in sorted(stats["events"].items(), key=lambda kv: (-kv[1], kv[0]))]
    return _table("events", "Events", "Count per event type.", ["event", "count"], rows)


def _per_cpu(stats: Mapping[str, Any]) -> dict[str, Any]:
    head = ["cpu", "running %", "running s", "idle s", "unknown s", "Bzy_MHz", "transitions", "wakeups", "wakeups/s", "idle exits/s"]
    rows = []
    traced = has_wakeups(stats)
    for i, c in enumerate(stats["cpus"]):
        khz = avg_khz(c["time_in_state"])
        rows.append(
            [
                _label(c["cpu"]),
                _num(c["busy_pct"], 2, "cpus", i, "busy_pct"),
                _num(c["busy_s"], 6, "cpus", i, "busy_s"),
                _num(c["idle_s"], 6, "cpus", i, "idle_s"),
                _num(c["unknown_ns"], 6, "cpus", i, "unknown_ns", scale=1e-9),
                _label(f"{khz / 1000:.0f}" if khz else "-"),
                _num(c["transitions"], 0, "cpus", i, "transitions"),
                _num(c["wakeups"], 0, "cpus", i, "wakeups") if traced else _label("not traced"),
                _num(c["wakeups_per_s"], 2, "cpus", i, "wakeups_per_s") if traced else _label("-"),
                _num(c["idle_exits_per_s"], 2, "cpus", i, "idle_exits_per_s"),
            ]
        )
    note = (
        "Running while a task other than the idle task runs (without sched_switch: out of cpu_idle states; busy_pct and busy_s in the JSON); "
        "unknown: time the trace says nothing about. Bzy_MHz: the clock time-weighted over the known frequencies (turbostat's name for it)."
    )
    if not traced:
        note += " " + NO_WAKEUPS
    return _table("per-cpu", "Per CPU", note, head, rows)


def _idle_states(stats: Mapping[str, Any]) -> dict[str, Any]:
    cpus = stats["cpus"]
    names = [s["name"] for s in cpus[0]["idle_states"]] if cpus else []
    head = ["cpu"]
    for name in names:
        head += [f"{name} usage", f"{name} time s", f"{name} above", f"{name} below"]
    head += ["idle, no traced state s", "idle, state unknown s"]
    rows = []
    for i, c in enumerate(cpus):
        row = [_label(c["cpu"])]
        for k, s in enumerate(c["idle_states"]):
            row += [
                _num(s["usage"], 0, "cpus", i, "idle_states", k, "usage"),
                _num(s["time_s"], 6, "cpus", i, "idle_states", k, "time_s"),
                _num(s["above"], 0, "cpus", i, "idle_states", k, "above"),
                _num(s["below"], 0, "cpus", i, "idle_states", k, "below"),
            ]
        row += [_num(c["idle_no_state_s"], 6, "cpus", i, "idle_no_state_s"), _num(c["idle_unknown_state_s"], 6, "cpus", i, "idle_unknown_state_s")]
        rows.append(row)
    note = (
        "cpuidle's usage, time, above and below per state; usage counts periods that ended within the trace. "
        f"Idle states from {stats['idle_states_from']}."
    )
    return _table("idle-states", "Idle states", note, head, rows)


def _frequencies(stats: Mapping[str, Any]) -> dict[str, Any]:
    cpus = stats["cpus"]
    freqs = sorted({int(k) for c in cpus for k in c["time_in_state"]})
    rows = []
    for i, c in enumerate(cpus):
        tis = {int(k): k for k in c["time_in_state"]}
        row = [_label(c["cpu"])]
        row += [_num(c["time_in_state"][tis[f]], 6, "cpus", i, "time_in_state", tis[f]) if f in tis else _label("-") for f in freqs]
        row.append(_num(c["freq_unknown_s"], 6, "cpus", i, "freq_unknown_s"))
        rows.append(row)
    head = ["cpu", *(f"{f / 1000:g} MHz s" for f in freqs), "unknown s"]
    return _table("frequencies", "Time at each frequency", "cpufreq's time_in_state, s; unknown: before the CPU's first frequency event.", head, rows)


def _idle_periods(stats: Mapping[str, Any]) -> dict[str, Any]:
    cpus = stats["cpus"]
    decades = cpus[0]["idle_periods"]["decades"] if cpus else []
    names = [s["name"] for s in cpus[0]["idle_states"]] if cpus else []
    head = ["cpu", "periods", "mean µs", "p50 µs", "p99 µs", "max µs"]
    head += [f"< {_us(hi)}" if hi is not None else f">= {_us(decades[-2][0])}" for hi, _ in decades]
    head += ["judged", "correct", "too deep", "too shallow", *(f"oracle {n}" for n in names)]
    rows = []
    for i, c in enumerate(cpus):
        p = c["idle_periods"]
        a = c["idle_accuracy"]
        row = [_label(c["cpu"]), _num(p["count"], 0, "cpus", i, "idle_periods", "count")]
        row += [_num(p[k], 1, "cpus", i, "idle_periods", k) for k in ("mean_us", "p50_us", "p99_us", "max_us")]
        row += [_num(n, 0, "cpus", i, "idle_periods", "decades", d, 1) for d, (_, n) in enumerate(p["decades"])]
        row += [
            _num(a["samples"], 0, "cpus", i, "idle_accuracy", "samples"),
            _num(a["correct"], 0, "cpus", i, "idle_accuracy", "correct"),
            _label(sum(a["too_deep"].values())),
            _label(sum(a["too_shallow"].values())),
        ]
        row += [_num(n, 0, "cpus", i, "oracle_usage", k) for k, n in enumerate(c["oracle_usage"])]
        rows.append(row)
    note = (
        "Completed idle periods (cpu_idle entry to exit) and their lengths; each judged against the oracle, the "
        "deepest state whose target residency fits the idle time: correct, too deep or too shallow (sums over "
        "the distance in states), and how often the oracle would have chosen each state."
    )
    return _table("idle-periods", "Idle periods and the idle governor against the oracle", note, head, rows)


def _us(us: int) -> str:
    return f"{us // 1000} ms" if us >= 1000 else f"{us} µs"


def _timeline(data: Mapping[str, Any]) -> dict[str, Any]:
    binned = [c["resolution_s"] for c in data["cpus"] if c["resolution_s"] is not None]
    caption = (
        "Top: each CPU's frequency from its first cpu_frequency event (or devlib marker) on. Below, one row per "
        "CPU: when it was running a task, in which idle state, idle in no traced state, or unknown; the same intervals "
        "the tables account, in ms from the trace's first event."
    )
    if binned:
        caption += (
            f" The trace has more than {data['max_spans']} intervals of a kind on some CPUs: their span is cut into "
            f"{data['max_spans']} equal bins (up to {1e3 * max(binned):.3f} ms wide), each showing what the CPU spent "
            "most of it doing and the frequency it held longest; the tables are exact."
        )
    return {"id": "plot-1", "caption": caption, "json": script_json(figures.cpu_timeline(cpu_timeline(data), data["idle_states"]))}


def write_html(
    path: str | os.PathLike[str], out: str | os.PathLike[str], platform: str | None = None, max_spans: int | None = None
) -> dict[str, Any]:
    """Write the HTML page of the trace in ``path`` (its stats tables and
    timeline) to ``out``, whole or not at all; returns the stats."""
    from govlab import trace
    from govlab.report import write

    stats, timeline = trace.stats_and_timeline(path, platform, max_spans)
    write(out, render(stats, timeline, os.fspath(path)))
    return stats

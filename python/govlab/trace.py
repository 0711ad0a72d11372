"""Real traces: ``govlab trace stats`` and ``govlab trace replay``.

:func:`stats` reads a trace (raw ftrace text, ``trace-cmd report`` text,
Android systrace HTML or trace-cmd's ``trace.dat``) and returns what the
engine's ``trace::stats`` computes: per CPU, time at each frequency and in
each idle state, idle-state usage, idle-period lengths, wakeups per second,
busy percentage, and the idle governor's accuracy against the oracle.
:func:`format_stats` prints it for a terminal; :func:`write_html` writes it
as a page with a per-CPU timeline (:mod:`govlab.report.trace_page`). :func:`replay` rebuilds the
trace's tasks as a workload and re-simulates it under chosen governors on a
chosen platform; :func:`format_replay` sets the replay beside the recording.
"""

from __future__ import annotations

import json
import os
from typing import Any

from govlab import _core, fmt
from govlab.result import Result

__all__ = ["stats", "stats_and_timeline", "write_html", "format_stats", "replay", "format_replay"]


def stats(path: str | os.PathLike[str], platform: str | None = None) -> dict[str, Any]:
    """Analyse the trace in ``path``; ``platform`` gives the idle states'
    target residencies (a platform name, spec or file; default: the engine's
    defaults, named in the result's ``idle_states_from``)."""
    return json.loads(_core.trace_stats(os.fspath(path), platform))


def stats_and_timeline(
    path: str | os.PathLike[str], platform: str | None = None, max_spans: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`stats` of the trace in ``path`` and its per-CPU timeline (see
    ``_core.trace_timeline``), from one reading of the trace."""
    d = json.loads(_core.trace_timeline(os.fspath(path), platform, max_spans))
    return d["stats"], d["timeline"]


def write_html(
    path: str | os.PathLike[str], out: str | os.PathLike[str], platform: str | None = None, max_spans: int | None = None
) -> dict[str, Any]:
    """Write the HTML page of the trace in ``path`` (its stats tables and
    timeline) to ``out``, whole or not at all; returns the stats."""
    from govlab import report
    from govlab.report import trace_page

    stats, timeline = stats_and_timeline(path, platform, max_spans)
    report.write(out, trace_page.render(stats, timeline, os.fspath(path)))
    return stats


def replay(
    path: str | os.PathLike[str],
    platform: str = "skylake-e3-1240v5",
    cpufreq: str = "schedutil",
    cpuidle: str = "menu",
    seed: int = 1,
    pin: bool = False,
    progress: Any = None,
    timed_wakeups: bool = False,
) -> tuple[Result, dict[str, Any], int]:
    """Re-simulate the tasks of the trace in ``path`` (their bursts as work at
    the frequency they ran at; a sleep ended by another task as a wait for
    that task to get there, any other sleep timed) on ``platform`` under the
    two governors, for the trace's span; ``pin`` keeps each task on the CPUs
    it ran on; ``timed_wakeups`` times every sleep as recorded. Returns the
    run's result, :func:`stats` of the recording, and the number of tasks
    replayed."""
    config = json.dumps({"platform": platform, "cpufreq": cpufreq, "cpuidle": cpuidle, "seed": seed})
    d = json.loads(_core.replay(os.fspath(path), config, pin, progress, timed_wakeups))
    return Result.from_json(json.dumps(d["run"])), d["recorded"], d["tasks"]


def format_replay(result: Result, recorded: dict[str, Any]) -> str:
    """Per CPU, the recording beside the replay: busy %, average MHz, idle time."""
    run = result.to_dict()
    rows = [["cpu", "busy rec", "busy replay", "MHz rec", "MHz replay", "idle-state s rec", "idle-state s replay"]]
    rec_cpus = {c["cpu"]: c for c in recorded["cpus"]}
    for c in run["cpus"]:
        r = rec_cpus.get(c["cpu"])
        span = c["busy_s"] + c["idle_s"]
        khz = _avg_khz({str(k): v for k, v in c["time_in_state"].items()})
        rows.append(
            [
                str(c["cpu"]),
                f"{r['busy_pct']:.1f}%" if r else "-",
                f"{100 * c['busy_s'] / span:.1f}%" if span else "-",
                f"{_avg_khz(r['time_in_state']) / 1000:.0f}" if r and _avg_khz(r["time_in_state"]) else "-",
                f"{khz / 1000:.0f}" if khz else "-",
                f"{sum(s['time_s'] for s in r['idle_states']):.3f}" if r else "-",
                f"{sum(s['time_s'] for s in c['idle_states']):.3f}",
            ]
        )
    return "recording vs replay, per CPU:\n" + "\n".join(fmt.right_aligned(rows)) + "\n"


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
                fmt.short_seconds(c["unknown_ns"] / 1e9),
                f"{khz / 1000:.0f}" if khz else "-",
                str(c["transitions"]),
                f"{c['wakeups_per_s']:.1f}",
                f"{c['idle_exits_per_s']:.1f}",
                *(f"{s['usage']}/{fmt.short_seconds(s['time_s'])}" for s in c["idle_states"]),
            ]
        )
    lines += fmt.right_aligned(rows)

    lines += ["", "time in frequency (s; '?' before the first frequency event):"]
    freqs = sorted({int(k) for c in cpus for k in c["time_in_state"]})
    rows = [["cpu", *(f"{k // 1000} MHz" for k in freqs), "?"]]
    for c in cpus:
        tis = {int(k): v for k, v in c["time_in_state"].items()}
        rows.append([str(c["cpu"]), *(fmt.short_seconds(tis[k]) if k in tis else "-" for k in freqs), fmt.short_seconds(c["freq_unknown_s"])])
    lines += fmt.right_aligned(rows)

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
    lines += fmt.right_aligned(rows)
    return "\n".join(lines) + "\n"


def _avg_khz(tis: dict[str, float]) -> float | None:
    total = sum(tis.values())
    return sum(int(k) * v for k, v in tis.items()) / total if total else None


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.0f}% ({k})" if n else "-"

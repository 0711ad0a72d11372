"""Runs, the catalogue and traces as text: ``govlab run``, ``list`` and ``trace`` (pipeline stage: render).

:func:`format_text` writes a run's result dict as a header, its metrics,
energy and a per-CPU table; :func:`format_list` writes what ``govlab list``
shows; :func:`format_stats` and :func:`format_replay` write what
``govlab trace stats`` and ``govlab trace replay`` found
(:mod:`govlab.trace`). Numbers and times are written by :mod:`govlab.fmt`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from govlab import fmt
from govlab.result import Result, avg_khz

__all__ = ["format_text", "format_turbostat", "format_turbostat_intervals", "format_list", "format_kernels", "format_stats", "format_replay"]


def format_text(result: Result) -> str:
    """A compact human summary of a run."""
    d = result.to_dict()
    header = [
        _label(d.get("platform")),
        *([f"kernel {kernel_text(d)}"] if d.get("kernel") else []),
        _label(d.get("workload")),
        f"cpufreq {_label(d.get('cpufreq'))}, cpuidle {_label(d.get('cpuidle'))}",
        *([f"driver: {d['driver']}"] if d.get("driver") else []),
        f"seed {d.get('seed')}",
        f"{fmt.number(d.get('sim_time_s'))} s simulated",
        f"{fmt.number(d.get('events'))} events",
    ]
    lines = [" | ".join(header), ""]
    pm = d.get("primary_metric") or {}
    if d.get("finished") is False:
        # An unfinished run says so first: its primary metric is no result.
        lines.insert(0, unfinished_text(d))

    missing = pm.get("missing") or ("no samples" if pm.get("value") is None else None)
    value = f"({missing})" if missing else fmt.number(pm.get("value"))
    primary = f"{pm.get('name')} = {value}"
    if pm.get("unit") and not missing:
        primary += f" {pm['unit']}"
    better = pm.get("better")
    if better in ("lower", "higher"):
        primary += f"  ({better} is better)"
    elif better:
        primary += f"  ({better})"
    rows = [("primary metric", primary)]
    others = [(k, v) for k, v in (d.get("metrics") or {}).items() if k != pm.get("name")]
    for i, (name, value) in enumerate(others):
        rows.append(("other metrics" if i == 0 else "", f"{name} = {_metric(value)}"))
    rows.append(("energy", f"{d.get('energy_j', float('nan')):.3f} J"))
    rows.append(("average power", f"{d.get('avg_power_w', float('nan')):.3f} W"))
    secs = d.get("sim_time_s") or 0.0
    if secs and "package_j" in d:
        rows.append(("package / DRAM", f"{d['package_j'] / secs:.3f} W / {d['dram_j'] / secs:.3f} W"))
    scored = d.get("scored_power")
    if scored:
        rows.append(("package, scored", f"{scored['package_w']:.3f} W over the {scored['time_s']:g} s the run stands for"))
    width = max(len(label) for label, _ in rows)
    lines += [f"{label:<{width}}  {text}" for label, text in rows]
    lines += ["", *_cpu_table(d.get("cpus") or [])]
    return "\n".join(lines) + "\n"


def format_turbostat(rows: list[dict[str, Any]], cols: list[str] | None = None) -> str:
    """turbostat's table as turbostat prints it: tab-separated (:func:`govlab.turbostat.format_table`)."""
    from govlab.turbostat import format_table

    return format_table(rows, cols if cols is not None else list(rows[0]) if rows else [])


def format_turbostat_intervals(intervals: list[dict[str, Any]], cols: list[str] | None = None) -> str:
    """One turbostat table per interval, header first, as ``turbostat -i`` prints them."""
    return "".join(format_turbostat(iv["rows"], cols) for iv in intervals)


def unfinished_text(d: Mapping[str, Any]) -> str:
    """``UNFINISHED: ...``: an unfinished run's first line, how far it got and what to do."""
    sim_s = d.get("sim_time_s") or 0.0
    text = f"UNFINISHED: {d.get('workload')} did not end within --duration {fmt.number(d.get('duration_s'))} s"
    p = d.get("progress")
    if p and p.get("total"):
        text += f" ({p['done']:,} of {p['total']:,} {p['what']} at {fmt.number(sim_s)} s)"
        if 0 < p["done"] < p["total"]:
            needed = sim_s * p["total"] / p["done"]
            text += f"; at that rate it needs about {needed:.3g} s"
    return text + "; give a longer --duration"


def _cpu_table(cpus: list[dict[str, Any]]) -> list[str]:
    """cpu, busy %, average MHz, transitions, then usage/time per idle state."""
    states: list[str] = []
    for cpu in cpus:
        for s in cpu.get("idle_states", []):
            if s["name"] not in states:
                states.append(s["name"])
    header = ["cpu", "busy", "Bzy_MHz", "transitions", *(f"{s} usage/time" for s in states)]
    table = [header]
    for cpu in cpus:
        total_s = cpu["busy_s"] + cpu["idle_s"]
        khz = avg_khz(cpu.get("time_in_state", {}))
        by_state = {s["name"]: s for s in cpu.get("idle_states", [])}
        row = [
            str(cpu["cpu"]),
            f"{100 * cpu['busy_s'] / total_s:.1f}%" if total_s else "-",
            f"{khz / 1000:.0f}" if khz is not None else "-",
            str(cpu["transitions"]),
        ]
        for name in states:
            s = by_state.get(name)
            row.append(f"{s['usage']}/{fmt.seconds(s['time_s'])}" if s else "-")
        table.append(row)
    return fmt.right_aligned(table)


def kernel_text(d: Mapping[str, Any]) -> str:
    """The run's kernel as named, with the semantics it ran when the named
    version lies between two supported ones (``5.4 (5.2 semantics)``)."""
    text = str(d.get("kernel"))
    if d.get("kernel_semantics"):
        text += f" ({d['kernel_semantics']} semantics)"
    return text


def format_kernels(entries: list[dict[str, Any]]) -> str:
    """``govlab list kernels``: each supported version, then what changes
    after it, up to the next supported one (version, commit, subject)."""
    lines: list[str] = []
    for i, entry in enumerate(entries):
        default = " (default)" if entry.get("default") else ""
        lines.append(f"{entry['version']}{default}")
        eras = entry.get("until_next") or []
        if not eras:
            last = i == len(entries) - 1
            lines.append("    (the newest modelled)" if last else "    (no modelled difference from the next)")
        for era in eras:
            first = f"v{era['first']['major']}.{era['first']['minor']}"
            if not era.get("first_confirmed"):
                first += " (inferred)"
            status = {"modelled": "", "exposed": " [not yet used by the engine]", "not_modelled": " [not modelled]"}[
                era.get("status", "modelled")
            ]
            lines.append(f"    {first} {era['name']}: {era['description']}{status}")
            lines.append(f"        {era['commit']} \"{era['subject']}\"")
    return "\n".join(lines) + "\n"


def format_list(entries: Any) -> str:
    """One line per entry (name, description), its other keys and its
    parameters with their defaults indented below; governors grouped by kind."""
    if isinstance(entries, Mapping):  # {name: {...}} is accepted too
        entries = [{"name": k, **v} for k, v in entries.items()]
    groups: dict[Any, list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry.get("kind"), []).append(entry)
    lines: list[str] = []
    for kind, group in groups.items():
        indent = ""
        if kind is not None:
            lines.append(f"{kind}:")
            indent = "  "
        width = max(len(str(e.get("name", ""))) for e in group)
        for entry in group:
            name = str(entry.get("name", "?"))
            lines.append(f"{indent}{name:<{width}}  {entry.get('description', '')}".rstrip())
            for key, value in entry.items():
                if key in ("name", "description", "kind", "params"):
                    continue
                if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                    lines.append(f"{indent}    {key}:")  # one line per item (a governor's eras)
                    lines += [f"{indent}      - {v}" for v in value]
                else:
                    lines.append(f"{indent}    {key}: {fmt.compact(value)}")
            lines += _param_lines(entry.get("params") or [], indent + "    ")
    return "\n".join(lines) + "\n"


def _param_lines(params: list[dict[str, Any]], indent: str) -> list[str]:
    lefts = [
        f"{p.get('name')} = {fmt.compact(p['default'])}" if "default" in p else str(p.get("name"))
        for p in params
    ]
    width = max((len(left) for left in lefts), default=0)
    lines = []
    for left, p in zip(lefts, params, strict=True):
        extra = {k: v for k, v in p.items() if k not in ("name", "default", "help")}
        text = f"{left:<{width}}  {p.get('help', '')}"
        if extra:
            text += " (" + ", ".join(f"{k}: {fmt.compact(v)}" for k, v in extra.items()) + ")"
        lines.append((indent + text).rstrip())
    return lines


def _label(value: Any) -> str:
    if isinstance(value, Mapping) and "name" in value:
        return str(value["name"])
    return fmt.compact(value)


def _metric(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"[{len(value)} values; see --format json]"
    if isinstance(value, Mapping):
        return f"{{{len(value)} entries; see --format json}}"
    return fmt.number(value)


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
    traced = any(d["events"].get(name) for name in ("sched_wakeup", "sched_wakeup_new"))
    if not traced:
        lines[-1:-1] = ["wakeups: not traced (no sched_wakeup or sched_wakeup_new events), so none are counted"]
    states = [s["name"] for s in cpus[0]["idle_states"]] if cpus else []
    head = ["cpu", "busy", "unknown", "Bzy_MHz", "trans", "wakeups/s", "idle exits/s", *(f"{s} usage/time" for s in states)]
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
                f"{c['wakeups_per_s']:.1f}" if traced else "-",
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

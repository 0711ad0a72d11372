"""One run and the catalogue as text: ``govlab run`` and ``govlab list`` (pipeline stage: render).

:func:`format_text` writes a run's result dict as a header, its metrics,
energy and a per-CPU table; :func:`format_list` writes what ``govlab list``
shows. Numbers and times are written by :mod:`govlab.fmt`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from govlab import fmt
from govlab.result import Result, avg_khz

__all__ = ["format_text", "format_list"]


def format_text(result: Result) -> str:
    """A compact human summary of a run."""
    d = result.to_dict()
    header = [
        _label(d.get("platform")),
        _label(d.get("workload")),
        f"cpufreq {_label(d.get('cpufreq'))}, cpuidle {_label(d.get('cpuidle'))}",
        f"seed {d.get('seed')}",
        f"{fmt.number(d.get('sim_time_s'))} s simulated",
        f"{fmt.number(d.get('events'))} events",
    ]
    lines = [" | ".join(header), ""]

    pm = d.get("primary_metric") or {}
    primary = f"{pm.get('name')} = {fmt.number(pm.get('value'))}"
    if pm.get("unit"):
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
    width = max(len(label) for label, _ in rows)
    lines += [f"{label:<{width}}  {text}" for label, text in rows]
    lines += ["", *_cpu_table(d.get("cpus") or [])]
    return "\n".join(lines) + "\n"


def _cpu_table(cpus: list[dict[str, Any]]) -> list[str]:
    """cpu, busy %, average MHz, transitions, then usage/time per idle state."""
    states: list[str] = []
    for cpu in cpus:
        for s in cpu.get("idle_states", []):
            if s["name"] not in states:
                states.append(s["name"])
    header = ["cpu", "busy", "avg MHz", "transitions", *(f"{s} usage/time" for s in states)]
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
                if key not in ("name", "description", "kind", "params"):
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

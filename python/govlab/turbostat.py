"""A run as turbostat would show it (``govlab run --turbostat``; pipeline stage: analyse).

turbostat (tools/power/x86/turbostat/turbostat.8, Linux v6.8) prints one
summary row, then one row per CPU; the package columns appear on the first
CPU of each package. Its columns, as govlab fills them over the whole run:

* ``Avg_MHz``: cycles over elapsed time, idle included = ``Bzy_MHz`` × ``Busy%``.
* ``Busy%``: time in C0 (a task running) over elapsed time.
* ``Bzy_MHz``: the clock while busy, APERF/MPERF: the CPU's clock averaged
  over its time in C0 (the result's ``c0_avg_khz``). Per interval
  (``-i``) govlab has no per-CPU counters yet: there it is the CPU's clock
  averaged over the interval, idle included, an approximation where the
  clock moves while the CPU idles.
* ``CPU%cN``: time in hardware core state N. turbostat reads the core's
  counters; here it is the CPU's own residency in the kernel states that
  request N (C1 and C1E are c1; C7s and deeper are c7). POLL is C0 to the
  hardware and counts in no column. States without an Intel name keep theirs
  (``CPU%nap``).
* ``Pkg%pcN``: time in package C-state N (the package's counters).
* ``PkgWatt``, ``CorWatt``, ``RAMWatt``: the package, cores (PP0) and DRAM
  energy counters over elapsed time, where the platform has them
  (``power_domains``); POWER's OCC sensors ``chip`` and ``memory`` appear as
  ``ChipWatt`` and ``MemWatt``.
* ``PKG_%``: time the package's power limit held its clock down (turbostat:
  "percent of the interval that RAPL throttling was active on the Package",
  from MSR_PKG_PERF_STATUS), where the platform has a limit; on POWER, the
  time the OCC's ceiling held (powernv counts such spells in ``throttle_stats``).

Per interval (``--turbostat-interval``, turbostat's ``-i``): the engine
keeps the same counters per interval when the run is asked for them (the
result's ``intervals``, machine/intervals.rs), and each interval gets the
same table, its figures over that interval. The intervals add up to the run.
Two counters are placed when known rather than as they ran: an idle period
open at a boundary is split across it when it ends (at once for most
governors, in hindsight for the oracle), and the oracle's energy corrections
fall in the interval where it chooses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["turbostat_rows", "interval_rows", "frame", "columns"]


def _core_state_column(name: str) -> str | None:
    """``CPU%c1`` for C1/C1E, ``CPU%c7`` for C7s..C10, ``CPU%<name>`` otherwise; None for POLL."""
    if name.upper() == "POLL":
        return None
    m = re.fullmatch(r"C(\d+)[A-Za-z]*", name)
    if m:
        n = int(m.group(1))
        return f"CPU%c{min(n, 7)}"
    return f"CPU%{name}"


def _pkg_column(name: str) -> str:
    m = re.fullmatch(r"PC(\d+)", name)
    return f"Pkg%pc{m.group(1)}" if m else f"Pkg%{name}"


def _avg_mhz(time_in_state: Mapping[str, float]) -> float | None:
    total = sum(time_in_state.values())
    if total <= 0:
        return None
    return sum(int(k) * v for k, v in time_in_state.items()) / total / 1000.0


_WATT_COLUMNS = (("package", "PkgWatt"), ("cores", "CorWatt"), ("dram", "RAMWatt"), ("chip", "ChipWatt"), ("memory", "MemWatt"))


def turbostat_rows(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary row (Package, Core, CPU ``-``), then one row per CPU, as dicts of column → value."""
    secs = float(d.get("sim_time_s") or 0.0)
    domains = set(d.get("power_domains") or [])
    packages = {p["package"]: p for p in d.get("packages") or []}
    rows: list[dict[str, Any]] = []
    seen_pkg: set[int] = set()
    # turbostat numbers cores within their package.
    first_core: dict[Any, int] = {}
    for cpu in d.get("cpus") or []:
        pkg, core = cpu.get("package"), cpu.get("core")
        if core is not None:
            first_core[pkg] = min(first_core.get(pkg, core), core)
    for cpu in d.get("cpus") or []:
        total = cpu["busy_s"] + cpu["idle_s"]
        busy = cpu["busy_s"] / total if total else 0.0
        c0_khz = cpu.get("c0_avg_khz")
        bzy = c0_khz / 1000.0 if c0_khz is not None else _avg_mhz(cpu.get("time_in_state") or {})
        row: dict[str, Any] = {
            "Package": cpu.get("package"),
            "Core": None if cpu.get("core") is None else cpu["core"] - first_core[cpu.get("package")],
            "CPU": cpu["cpu"],
            "Avg_MHz": None if bzy is None else bzy * busy,
            "Busy%": 100.0 * busy,
            "Bzy_MHz": bzy,
        }
        for s in cpu.get("idle_states") or []:
            col = _core_state_column(s["name"])
            if col:
                row[col] = row.get(col, 0.0) + (100.0 * s["time_s"] / total if total else 0.0)
        pkg = cpu.get("package")
        if pkg is not None and pkg not in seen_pkg and pkg in packages and secs > 0:
            seen_pkg.add(pkg)
            p = packages[pkg]
            for c in p.get("cstates") or []:
                row[_pkg_column(c["name"])] = 100.0 * c["time_s"] / secs
            watts = {"package": p["package_j"], "cores": p["cores_j"], "dram": p["dram_j"], "chip": p["package_j"], "memory": p["dram_j"]}
            for dom, col in _WATT_COLUMNS:
                if dom in domains:
                    row[col] = watts[dom] / secs
            if p.get("power_limited_s") is not None:
                row["PKG_%"] = 100.0 * p["power_limited_s"] / secs
        rows.append(row)
    summary: dict[str, Any] = {"Package": "-", "Core": "-", "CPU": "-"}
    for col in columns(rows)[3:]:
        vals = [r[col] for r in rows if r.get(col) is not None]
        if not vals:
            summary[col] = None
        elif col.endswith("Watt"):
            summary[col] = sum(vals)
        else:
            summary[col] = sum(vals) / len(vals)
    return [summary, *rows]


def interval_rows(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per interval of the run ``d`` (one asked for intervals): ``{"start_s", "end_s", "rows"}``,
    ``rows`` as :func:`turbostat_rows` gives them for that interval; ``[]`` without intervals."""
    out = []
    for iv in d.get("intervals") or []:
        part = {
            "sim_time_s": iv["end_s"] - iv["start_s"],
            "power_domains": d.get("power_domains"),
            "cpus": iv["cpus"],
            "packages": iv["packages"],
        }
        out.append({"start_s": iv["start_s"], "end_s": iv["end_s"], "rows": turbostat_rows(part)})
    return out


def frame(d: Mapping[str, Any]) -> Any:
    """turbostat's rows as a pandas DataFrame: ``start_s``, ``end_s``, then its columns,
    one row per interval and turbostat row (the whole run as one interval when the run has none)."""
    import pandas as pd

    parts = interval_rows(d) or [{"start_s": 0.0, "end_s": float(d.get("sim_time_s") or 0.0), "rows": turbostat_rows(d)}]
    records = [{"start_s": p["start_s"], "end_s": p["end_s"], **r} for p in parts for r in p["rows"]]
    return pd.DataFrame(records, columns=["start_s", "end_s", *columns([r for p in parts for r in p["rows"]])])


def columns(rows: list[dict[str, Any]]) -> list[str]:
    """Every column of the rows, in order of first appearance."""
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    return cols

"""A run as turbostat prints it (``govlab run --turbostat``; pipeline stage: analyse).

The columns, their order, which of them a CPU model shows and their formats
follow turbostat's source, tools/power/x86/turbostat/turbostat.c of Linux v6.8
(turbostat 2023.11.07): ``print_header()`` for names and order,
``format_counters()`` for formats and for which rows carry which columns,
``sum_counters()``/``compute_average()`` for the summary row,
``topology_probe()`` for the topology columns, ``probe_sysfs()`` for the
per-idle-state columns and the per-model ``platform_features`` tables
(``skl_features``, ``bdx_features``: ``supported_cstates``, ``rapl_msrs``,
``has_ext_cst_msrs``) for the rest. Read in torvalds/linux at the 2022 and the
2025 revision of the file; the columns below are the same in both but for
columns added after v6.8 (``NMI``, ``LLC``, ``SysWatt``, ``CPU%c1e``), which
are left out.

What turbostat prints, and how govlab fills it:

* ``Package``, ``Core``, ``CPU``: only where there is more than one
  (``topology_probe``); ``-`` on the summary row. Rows come in topology order
  (package, core, thread), so SMT siblings sit together. Cores are numbered
  within their package.
* ``Avg_MHz`` (cycles over elapsed time) = ``Bzy_MHz`` × ``Busy%``.
* ``Busy%``: time in C0 over elapsed time; C0 includes the kernel's POLL state
  (MPERF counts while the CPU spins).
* ``Bzy_MHz``: the clock while in C0, APERF/MPERF: over the whole run the
  CPU's clock averaged over its time in C0 (the result's ``c0_avg_khz``);
  per interval (``-i``) govlab has no per-CPU counters yet, so there it is the
  CPU's policy clock averaged over the interval, idle included, an
  approximation where the clock moves while the CPU idles. govlab's own
  summary calls the same figure ``Bzy_MHz``.
* ``TSC_MHz``: the part's base clock.
* Per kernel idle state (``probe_sysfs``): its usage count under its name
  (``C1``), then its residency as a percentage (``C1%``), usage columns first.
* ``CPU%c1``: as turbostat derives it, 100 − ``Busy%`` − the core's c3, c6, c7.
  ``CPU%c3``/``c6``/``c7`` are core counters (first thread of a core only):
  the core's residency in the kernel states that request that hardware state
  (C3; C6; C7s and deeper), the smaller of its threads' (the overlap of the
  threads' idle periods is not kept, so this is its upper bound).
* ``Pkg%pcN``: the package's residency in PCN, for each package state the CPU
  model supports up to the deepest the platform enters (the limit turbostat
  reads from MSR_PKG_CST_CONFIG_CONTROL).
* ``PkgWatt``, ``CorWatt``, ``RAMWatt``: the package, cores (PP0) and DRAM
  energy over elapsed time. ``GFXWatt`` is 0.00 on a part without graphics.
* ``PKG_%``: time the package's RAPL limit held its clock down (turbostat:
  MSR_PKG_PERF_STATUS); ``RAM_%``: the same for DRAM, which govlab never
  limits (0.00). The summary row sums them over packages, as turbostat does.
* ``UncMHz``: the uncore clock (the intel_uncore_frequency driver's
  ``current_freq_khz`` at the end of the interval, present on the server parts
  it supports); here its mean while the package is in PC0.
* ``SMI`` and ``CoreThr`` are 0: nothing in the simulation enters SMM or
  throttles on temperature. ``GFX%C0`` and ``CPUGFX%`` are 0.00 without graphics.
* Values govlab cannot give (``IPC``, ``IRQ``, ``CoreTmp``, ``PkgTmp``,
  ``Totl%C0``, ``Any%C0``, a package state the platform does not model) are
  printed ``nan``, as turbostat prints a value it cannot trust (since its
  "Print "nan" for out of range percentages" change); pandas reads them as NaN.

Platforms turbostat does not know (Arm, POWER, a platform file without an
x86 model below) get the same layout from what the platform has: its idle
states, package states, power domains (POWER's OCC sensors ``chip`` and
``memory`` as ``ChipWatt`` and ``MemWatt``), power limit and uncore clock.

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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from govlab.exceptions import GovlabError

__all__ = [
    "turbostat_rows",
    "interval_rows",
    "frame",
    "columns",
    "select_columns",
    "format_table",
    "COLUMN_NAMES",
]

@dataclass(frozen=True)
class Features:
    """What turbostat v6.8 shows on one Intel CPU model (its ``platform_features`` entry)."""

    name: str
    core_cstates: tuple[int, ...]  # supported_cstates CC1/CC3/CC6/CC7
    pkg_cstates: tuple[int, ...]  # supported_cstates PC2..PC10
    ext_cst: bool  # has_ext_cst_msrs: Totl%C0 Any%C0 GFX%C0 CPUGFX%
    rapl: tuple[str, ...]  # the RAPL columns rapl_msrs enables, in print_header order
    uncore_sysfs: bool  # the intel_uncore_frequency driver supports the model: UncMHz
    dts: bool = True  # CPUID.06H digital thermal sensors (Intel): CoreTmp, CoreThr, PkgTmp


# turbostat.c skl_features (INTEL_SKYLAKE_L, INTEL_SKYLAKE): CC1|CC3|CC6|CC7,
# PC2|PC3|PC6|PC7|PC8|PC9|PC10, has_ext_cst_msrs, RAPL_PKG_ALL | RAPL_CORE_ALL |
# RAPL_DRAM | RAPL_DRAM_PERF_STATUS | RAPL_GFX. The uncore frequency driver
# (drivers/platform/x86/intel/uncore-frequency/uncore-frequency.c,
# intel_uncore_cpu_ids) does not list SKYLAKE: no UncMHz.
SKL = Features("skl_features", (1, 3, 6, 7), (2, 3, 6, 7, 8, 9, 10), True,
               ("PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "PKG_%", "RAM_%"), False)
# turbostat.c bdx_features (INTEL_BROADWELL_X): CC1|CC3|CC6, PC2|PC3|PC6,
# RAPL_PKG_ALL | RAPL_DRAM_ALL (no PP0, no PP1). intel_uncore_cpu_ids lists
# BROADWELL_X, so /sys/devices/system/cpu/intel_uncore_frequency exists: UncMHz.
BDX = Features("bdx_features", (1, 3, 6), (2, 3, 6), False, ("PkgWatt", "RAMWatt", "PKG_%", "RAM_%"), True)
# turbostat.c amd_features_with_rapl (AMD family 0x17 and later): no
# supported_cstates (only CPU%c1, which every model prints), rapl_msrs =
# RAPL_AMD_F17H (package and per-core energy, has_per_core_rapl: CorWatt is a
# core column, printed before the package's PkgWatt; govlab fills it with the
# package's cores' energy on the package's first core), no perf-status
# columns; no Intel DTS, so no temperatures (read in the 2025 revision).
AMD_F17H = Features("amd_features_with_rapl", (1,), (), False, ("CorWatt", "PkgWatt"), False, dts=False)

# turbostat.c adl_features (INTEL_ALDERLAKE; "Copied from cnl_features, with
# PC7/PC9 removed"): CC1|CC6|CC7, PC2|PC3|PC6|PC8|PC10, has_ext_cst_msrs,
# RAPL_PKG_ALL | RAPL_CORE_ALL | RAPL_DRAM | RAPL_DRAM_PERF_STATUS | RAPL_GFX
# (cnl's RAPL_PSYS, SysWatt, came after v6.8). intel_uncore_cpu_ids lists
# ALDERLAKE ("Make Intel uncore frequency driver support to client processor
# starting from Alder Lake", Srinivas Pandruvada, 2023): UncMHz.
ADL = Features("adl_features", (1, 6, 7), (2, 3, 6, 8, 10), True,
               ("PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "PKG_%", "RAM_%"), True)

@dataclass(frozen=True)
class Part:
    features: Features
    tsc_mhz: float  # the base clock, which the TSC runs at
    graphics: bool  # a GPU: /sys/class/drm/card0 gives GFX%rc6, GFXMHz, GFXAMHz


# govlab's x86 platforms (data/platforms/*.toml name the family/model and base clock).
PARTS: dict[str, Part] = {
    "skylake-e3-1240v5": Part(SKL, 3500.0, False),  # family 6 model 94; base 3.5 GHz; E3-1240 v5 has no graphics
    "broadwell-2s-e5-2698v4": Part(BDX, 2200.0, False),  # family 6 model 79; base 2.2 GHz
    "epyc-7702-2s": Part(AMD_F17H, 2000.0, False),  # family 0x17 model 0x31; base (nominal) 2.0 GHz
    "i9-12900k": Part(ADL, 3200.0, True),  # family 6 model 0x97; TSC at the P-cores' base 3.2 GHz (assumed); UHD 770 graphics
}

# turbostat's built-in column names (its bic[] table), which --show/--hide accept, and its groups.
COLUMN_NAMES = (
    "usec", "Time_Of_Day_Seconds", "Package", "Node", "Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "IRQ", "SMI",
    "sysfs", "CPU%c1", "CPU%c3", "CPU%c6", "CPU%c7", "ThreadC", "CoreTmp", "CoreCnt", "PkgTmp", "GFX%rc6",
    "GFXMHz", "Pkg%pc2", "Pkg%pc3", "Pkg%pc6", "Pkg%pc7", "Pkg%pc8", "Pkg%pc9", "Pk%pc10", "CPU%LPI", "SYS%LPI",
    "PkgWatt", "CorWatt", "GFXWatt", "PkgCnt", "RAMWatt", "PKG_%", "RAM_%", "Pkg_J", "Cor_J", "GFX_J", "RAM_J",
    "Mod%c6", "Totl%C0", "Any%C0", "GFX%C0", "CPUGFX%", "Core", "CPU", "APIC", "X2APIC", "Die", "GFXAMHz", "IPC",
    "CoreThr", "UncMHz",
)
_GROUPS = {
    "topology": {"Package", "Node", "CoreCnt", "PkgCnt", "Core", "CPU", "Die"},
    "power": {"CoreTmp", "PkgTmp", "PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "PKG_%", "RAM_%"},
    "frequency": {"Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "GFXMHz", "GFXAMHz", "UncMHz"},
    "idle": {"sysfs", "CPU%c1", "CPU%c3", "CPU%c6", "CPU%c7", "GFX%rc6", "Pkg%pc2", "Pkg%pc3", "Pkg%pc6",
             "Pkg%pc7", "Pkg%pc8", "Pkg%pc9", "Pk%pc10", "CPU%LPI", "SYS%LPI", "Mod%c6", "Totl%C0", "Any%C0",
             "GFX%C0", "CPUGFX%"},
    "other": {"IRQ", "SMI", "ThreadC", "CoreTmp", "IPC"},
}

_TOPOLOGY = ("Package", "Core", "CPU")
# Where a row stops (format_counters' "goto done"): a thread that is not its core's first
# prints no core columns; a core that is not its package's first prints no package columns.
_CORE_SCOPE = {"CPU%c3", "CPU%c6", "CPU%c7", "CoreTmp", "CoreThr"}
_INT_COLUMNS = {"Package", "Core", "CPU", "IRQ", "SMI", "CoreTmp", "CoreThr", "PkgTmp", "UncMHz"}
_MHZ_COLUMNS = {"Avg_MHz", "Bzy_MHz", "TSC_MHz"}
_SUMMED = {"IRQ", "SMI", "PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "ChipWatt", "MemWatt", "PKG_%", "RAM_%"}
_MAXED = {"CoreTmp", "CoreThr", "PkgTmp"}
_WATTS = (("package", "PkgWatt"), ("cores", "CorWatt"), ("dram", "RAMWatt"), ("chip", "ChipWatt"), ("memory", "MemWatt"))


def _pkg_column(n: int) -> str:
    return "Pk%pc10" if n == 10 else f"Pkg%pc{n}"


def _state_column(name: str, x86: bool = True) -> str:
    """probe_sysfs: the state's name cut at '-', underscores removed (``C1-SKL`` → ``C1``);
    elsewhere (turbostat does not run there) the name as the kernel gives it."""
    return name.split("-", 1)[0].replace("_", "") if x86 else name


def _hw_cstate(name: str) -> int | None:
    """The hardware core state a kernel idle state requests: 1 for C1/C1E, 3, 6, 7 for C7s and deeper."""
    if len(name) < 2 or name[0].upper() != "C" or not name[1].isdigit():
        return None
    digits = "".join(ch for ch in name[1:] if ch.isdigit())
    n = int(digits[:2] if digits.startswith("10") else digits[0])
    return 1 if n < 3 else 3 if n < 6 else 6 if n < 7 else 7


def _part(d: Mapping[str, Any]) -> Part | None:
    label = str(d.get("platform") or "")
    return PARTS.get(label.split(":", 1)[0])


def _bzy_mhz(time_in_state: Mapping[str, float]) -> float | None:
    total = sum(time_in_state.values())
    if total <= 0:
        return None
    return sum(int(k) * v for k, v in time_in_state.items()) / total / 1000.0


def columns(d: Mapping[str, Any]) -> list[str]:
    """Every column turbostat prints for the run ``d``, in print_header's order."""
    part = _part(d)
    cpus = d.get("cpus") or []
    packages = d.get("packages") or []
    cols: list[str] = []
    if len({c.get("package") for c in cpus}) > 1:
        cols.append("Package")
    per_pkg: dict[Any, set[Any]] = {}
    for c in cpus:
        per_pkg.setdefault(c.get("package"), set()).add(c.get("core"))
    if max((len(v) for v in per_pkg.values()), default=0) > 1:
        cols.append("Core")
    if len(cpus) > 1:
        cols.append("CPU")
    cols += ["Avg_MHz", "Busy%", "Bzy_MHz"]
    if part is not None:
        cols += ["TSC_MHz", "IPC", "IRQ", "SMI"]
    names = [_state_column(s["name"], part is not None) for s in (cpus[0].get("idle_states") or [])] if cpus else []
    cols += names + [f"{n}%" for n in names]
    pkg_states = sorted({int(c["name"][2:]) for p in packages for c in p.get("cstates") or [] if c["name"][2:].isdigit()})
    other_pkg = [c["name"] for c in (packages[0].get("cstates") or []) if not c["name"][2:].isdigit()] if packages else []
    domains = set(d.get("power_domains") or [])
    limited = any(p.get("power_limited_s") is not None for p in packages)
    uncore = any(p.get("uncore_avg_mhz") is not None for p in packages)
    if part is not None:
        f = part.features
        cols += [f"CPU%c{n}" for n in f.core_cstates]
        if f.dts:
            cols += ["CoreTmp", "CoreThr", "PkgTmp"]
        if part.graphics:
            cols += ["GFX%rc6", "GFXMHz", "GFXAMHz"]
        if f.ext_cst:
            cols += ["Totl%C0", "Any%C0", "GFX%C0", "CPUGFX%"]
        limit = max(pkg_states, default=0)
        cols += [_pkg_column(n) for n in f.pkg_cstates if n <= limit]
        cols += list(f.rapl)
        if f.uncore_sysfs:
            cols.append("UncMHz")
        return cols
    cores = sorted({n for s in names if (n := _hw_cstate(s)) is not None})
    cols += [f"CPU%c{n}" for n in cores]
    cols += [_pkg_column(n) for n in pkg_states] + [f"Pkg%{n}" for n in other_pkg]
    cols += [col for dom, col in _WATTS if dom in domains]
    if limited:
        cols.append("PKG_%")
    if uncore:
        cols.append("UncMHz")
    return cols


def _cpu_values(cpu: Mapping[str, Any], part: Part | None) -> dict[str, Any]:
    total = cpu["busy_s"] + cpu["idle_s"]
    states = cpu.get("idle_states") or []
    poll = sum(s["time_s"] for s in states if s["name"].upper() == "POLL")
    busy = (cpu["busy_s"] + poll) / total if total else 0.0
    c0_khz = cpu.get("c0_avg_khz")
    bzy = c0_khz / 1000.0 if c0_khz is not None else _bzy_mhz(cpu.get("time_in_state") or {})
    row: dict[str, Any] = {
        "Avg_MHz": None if bzy is None else bzy * busy,
        "Busy%": 100.0 * busy,
        "Bzy_MHz": bzy,
    }
    if part is not None:
        row.update({"TSC_MHz": part.tsc_mhz, "IPC": None, "IRQ": None, "SMI": 0})
    for s in states:
        name = _state_column(s["name"], part is not None)
        row[name] = s["usage"]
        row[f"{name}%"] = 100.0 * s["time_s"] / total if total else 0.0
    return row


def _core_residency(threads: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Per hardware state 3/6/7: the core's residency in %, the smallest of its threads'."""
    out: dict[int, float] = {}
    for n in (3, 6, 7):
        vals = []
        for cpu in threads:
            total = cpu["busy_s"] + cpu["idle_s"]
            t = sum(s["time_s"] for s in cpu.get("idle_states") or [] if _hw_cstate(s["name"]) == n)
            vals.append(100.0 * t / total if total else 0.0)
        out[n] = min(vals) if vals else 0.0
    return out


def _package_values(p: Mapping[str, Any], secs: float, domains: set[str], part: Part | None) -> dict[str, Any]:
    row: dict[str, Any] = {}
    by_n = {int(c["name"][2:]): c for c in p.get("cstates") or [] if c["name"][2:].isdigit()}
    for n in range(2, 11):
        c = by_n.get(n)
        row[_pkg_column(n)] = None if c is None else 100.0 * c["time_s"] / secs
    for c in p.get("cstates") or []:
        if not c["name"][2:].isdigit():
            row[f"Pkg%{c['name']}"] = 100.0 * c["time_s"] / secs
    joules = {"package": p["package_j"], "cores": p["cores_j"], "dram": p["dram_j"], "chip": p["package_j"], "memory": p["dram_j"]}
    for dom, col in _WATTS:
        if dom in domains:
            row[col] = joules[dom] / secs
    limited = p.get("power_limited_s")
    row["PKG_%"] = 0.0 if limited is None else 100.0 * limited / secs
    row["RAM_%"] = 0.0
    row["GFXWatt"] = 0.0
    row["UncMHz"] = None if p.get("uncore_avg_mhz") is None else p["uncore_avg_mhz"]
    row.update({"PkgTmp": None, "Totl%C0": None, "Any%C0": None, "GFX%C0": 0.0, "CPUGFX%": 0.0})
    return row


def turbostat_rows(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary row (its topology columns ``-``), then one row per CPU in topology order,
    each a dict of the columns turbostat prints on that row (a later thread of a core has no
    core or package columns, a later core of a package no package columns). A value govlab
    cannot give is None."""
    cols = columns(d)
    part = _part(d)
    secs = float(d.get("sim_time_s") or 0.0)
    domains = set(d.get("power_domains") or [])
    packages = {p["package"]: p for p in d.get("packages") or []}
    cpus = sorted(d.get("cpus") or [], key=lambda c: (c.get("package") or 0, c.get("core") or 0, c["cpu"]))
    first_core: dict[Any, int] = {}
    threads: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for cpu in cpus:
        pkg, core = cpu.get("package"), cpu.get("core")
        if core is not None:
            first_core[pkg] = min(first_core.get(pkg, core), core)
        threads.setdefault((pkg, core), []).append(cpu)
    full: list[dict[str, Any]] = []  # every value of every row, before truncation
    kinds: list[str] = []
    seen_core: set[tuple[Any, Any]] = set()
    seen_pkg: set[Any] = set()
    for cpu in cpus:
        pkg, core = cpu.get("package"), cpu.get("core")
        row: dict[str, Any] = {
            "Package": pkg,
            "Core": None if core is None else core - first_core[pkg],
            "CPU": cpu["cpu"],
            **_cpu_values(cpu, part),
        }
        res = _core_residency(threads[(pkg, core)])
        for n in (3, 6, 7):
            row[f"CPU%c{n}"] = res[n]
        row["CPU%c1"] = max(0.0, 100.0 - row["Busy%"] - res[3] - res[6] - res[7])
        row.update({"CoreTmp": None, "CoreThr": 0})
        kind = "thread"
        if (pkg, core) not in seen_core:
            seen_core.add((pkg, core))
            kind = "core"
            if pkg not in seen_pkg and pkg in packages and secs > 0:
                seen_pkg.add(pkg)
                kind = "package"
                row.update(_package_values(packages[pkg], secs, domains, part))
        full.append(row)
        kinds.append(kind)
    summary = _summary(full, kinds, cols)
    rows = [summary]
    for row, kind in zip(full, kinds):
        out: dict[str, Any] = {}
        for col in cols:
            if kind == "thread" and (col in _CORE_SCOPE or _is_package_column(col)):
                break
            if kind == "core" and _is_package_column(col):
                break
            out[col] = row.get(col)
        rows.append(out)
    return rows


def _is_package_column(col: str) -> bool:
    return col.startswith(("Pkg", "Pk%")) or col in {
        "CorWatt", "GFXWatt", "RAMWatt", "ChipWatt", "MemWatt", "PKG_%", "RAM_%", "UncMHz",
        "Totl%C0", "Any%C0", "GFX%C0", "CPUGFX%", "GFX%rc6", "GFXMHz", "GFXAMHz",
    }


def _summary(full: list[dict[str, Any]], kinds: list[str], cols: list[str]) -> dict[str, Any]:
    """compute_average(): thread figures averaged over CPUs, core figures over cores, package
    figures over packages; counts, energy and RAPL throttle time summed; temperatures the
    maximum; UncMHz the last package's. Bzy_MHz is total cycles over total C0 time."""
    summary: dict[str, Any] = {}
    for col in cols:
        if col in _TOPOLOGY:
            summary[col] = "-"
            continue
        if col in _CORE_SCOPE:
            scope = [r for r, k in zip(full, kinds) if k != "thread"]
        elif _is_package_column(col):
            scope = [r for r, k in zip(full, kinds) if k == "package"]
        else:
            scope = full
        vals = [r.get(col) for r in scope]
        if not vals or any(v is None for v in vals):
            summary[col] = None
        elif col in _SUMMED or (col not in COLUMN_NAMES and not col.endswith("%") and isinstance(vals[0], int)):
            summary[col] = sum(vals)
        elif col in _MAXED:
            summary[col] = max(vals)
        elif col == "UncMHz":
            summary[col] = vals[-1]
        else:
            summary[col] = sum(vals) / len(vals)
    if summary.get("Busy%") and summary.get("Avg_MHz") is not None:
        summary["Bzy_MHz"] = summary["Avg_MHz"] / (summary["Busy%"] / 100.0)
    return summary


def interval_rows(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per interval of the run ``d`` (one asked for intervals): ``{"start_s", "end_s", "rows"}``,
    ``rows`` as :func:`turbostat_rows` gives them for that interval; ``[]`` without intervals."""
    out = []
    for iv in d.get("intervals") or []:
        part = {
            "platform": d.get("platform"),
            "sim_time_s": iv["end_s"] - iv["start_s"],
            "power_domains": d.get("power_domains"),
            "cpus": iv["cpus"],
            "packages": iv["packages"],
        }
        out.append({"start_s": iv["start_s"], "end_s": iv["end_s"], "rows": turbostat_rows(part)})
    return out


def select_columns(cols: Sequence[str], show: str | None = None, hide: str | None = None) -> list[str]:
    """turbostat's ``--show``/``--hide``: a comma-separated list of column names or groups
    (``all``, ``topology``, ``power``, ``idle``, ``frequency``, ``other``; ``sysfs`` for the
    idle-state columns). ``--show`` keeps only those, ``--hide`` drops those. A name that is
    neither one of turbostat's columns nor one of this run's is an error."""
    sysfs = {c for c in cols if c not in COLUMN_NAMES and c not in ("ChipWatt", "MemWatt") and not c.startswith("Pkg%")}

    def names(option: str, text: str) -> set[str]:
        out: set[str] = set()
        for name in (n.strip() for n in text.split(",")):
            if name == "all":
                out |= set(cols)
            elif name in _GROUPS:
                out |= _GROUPS[name] | (sysfs if name == "idle" else set())
            elif name == "sysfs":
                out |= sysfs
            elif name in COLUMN_NAMES or name in cols:
                out.add(name)
            else:
                raise GovlabError(f"--{option}: no turbostat column {name!r} (columns here: {', '.join(cols)})")
        return out

    keep = list(cols)
    if show is not None:
        wanted = names("show", show)
        keep = [c for c in keep if c in wanted]
    if hide is not None:
        unwanted = names("hide", hide)
        keep = [c for c in keep if c not in unwanted]
    return keep


def frame(d: Mapping[str, Any], show: str | None = None, hide: str | None = None) -> Any:
    """turbostat's rows as a pandas DataFrame: ``start_s``, ``end_s``, ``summary`` (True on
    each interval's summary row), then turbostat's columns; one row per interval and
    turbostat row (the whole run as one interval when the run has none). Package, Core and
    CPU are nullable integers, missing on summary rows; every other column is numeric, NaN
    where turbostat prints nothing on that row or govlab cannot give the value."""
    import pandas as pd

    parts = interval_rows(d) or [{"start_s": 0.0, "end_s": float(d.get("sim_time_s") or 0.0), "rows": turbostat_rows(d)}]
    cols = select_columns(columns(d), show, hide)
    records = []
    for p in parts:
        for i, r in enumerate(p["rows"]):
            rec: dict[str, Any] = {"start_s": p["start_s"], "end_s": p["end_s"], "summary": i == 0}
            for c in cols:
                v = r.get(c)
                rec[c] = None if (v is None or v == "-") else v
            records.append(rec)
    df = pd.DataFrame(records, columns=["start_s", "end_s", "summary", *cols])
    for c in cols:
        df[c] = df[c].astype("Int64") if c in _TOPOLOGY else pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


def _cell(col: str, v: Any, wide: bool) -> str:
    if v is None:
        return "nan"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if col in _INT_COLUMNS or (isinstance(v, int) and not isinstance(v, bool)):
        text = f"{int(round(v))}"
        return f"{text:>8}" if wide and col not in _TOPOLOGY and col not in ("CoreTmp", "PkgTmp", "UncMHz", "CoreThr") else text
    if col in _MHZ_COLUMNS:
        return f"{v:.0f}"
    return f"{v:.2f}"


def format_table(rows: Sequence[Mapping[str, Any]], cols: Iterable[str]) -> str:
    """Header and rows as turbostat prints them: tab-separated, a row ending where turbostat's
    does (format_counters), ``nan`` for a value govlab cannot give. Counts are printed 8 wide,
    header included, when a summary sum passes 9999999 (turbostat's sums_need_wide_columns)."""
    cols = list(cols)
    summary = rows[0] if rows else {}
    counts = [c for c in cols if c == "IRQ" or (c not in COLUMN_NAMES and isinstance(summary.get(c), int))]
    wide = any((summary.get(c) or 0) > 9999999 for c in counts)
    header = [f"{c:>8}" if wide and c in counts else c for c in cols]
    lines = ["\t".join(header)]
    for r in rows:
        cells = []
        for c in cols:
            if c not in r:
                if any(k in r for k in cols[cols.index(c) + 1 :]):
                    cells.append("nan")
                    continue
                break
            cells.append(_cell(c, r[c], wide and c in counts))
        if cells:  # a row with nothing to print prints no line (format_counters' final newline check)
            lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"

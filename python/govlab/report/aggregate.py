"""What the report's plots show, computed from stored run results (pipeline stage: render).

Each function takes the result dicts of the repeats of one configuration at
one parameter value (as the engine returns them) and sums or averages them;
none of them plots anything.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from govlab.result import time_in_state_pairs

__all__ = [
    "BUSY",
    "OTHER_IDLE",
    "frequency_residency",
    "state_residency",
    "wakeup_cdf",
    "latency_series",
    "stat_key",
    "pareto_front",
]

Results = Sequence[Mapping[str, Any]]

#: The residency of CPUs that were running something.
BUSY = "busy"
#: Idle time not counted in any idle state (idle, but not yet or no longer in a state).
OTHER_IDLE = "idle, no traced state"

#: A workload latency metric: ``<series>_<statistic>_us``.
_LATENCY_METRIC = re.compile(r"^(?P<series>.+)_(?P<stat>p\d+(?:\.\d+)?|mean|max)_us$")
_STAT_ORDER = {"mean": -1.0, "max": math.inf}


def frequency_residency(results: Results) -> dict[int, float]:
    """Share of CPU time at each frequency (kHz), over every CPU of every run; sums to 1."""
    seconds: dict[int, float] = {}
    for result in results:
        for cpu in result.get("cpus", []):
            for khz, s in time_in_state_pairs(cpu.get("time_in_state", {})):
                seconds[khz] = seconds.get(khz, 0.0) + s
    return _shares(seconds)


def state_residency(results: Results) -> dict[str, float]:
    """Share of CPU time busy and in each idle state (table order), over every CPU of every run.

    Idle time that no idle state accounts for goes to :data:`OTHER_IDLE`. Sums to 1.
    """
    seconds: dict[str, float] = {BUSY: 0.0}
    other = 0.0
    for result in results:
        for cpu in result.get("cpus", []):
            seconds[BUSY] += cpu["busy_s"]
            in_states = 0.0
            for state in cpu.get("idle_states", []):
                seconds[state["name"]] = seconds.get(state["name"], 0.0) + state["time_s"]
                in_states += state["time_s"]
            other += max(0.0, cpu["idle_s"] - in_states)
    if other > 0:
        seconds[OTHER_IDLE] = other
    return _shares(seconds)


def _shares(seconds: Mapping[Any, float]) -> dict[Any, float]:
    total = math.fsum(seconds.values())
    if total <= 0:
        return {}
    return {k: v / total for k, v in seconds.items()}


def wakeup_cdf(results: Results) -> tuple[list[float], list[float]]:
    """The scheduler's wakeup latency over all runs as a CDF: bucket lower bounds (µs), cumulative share.

    The engine's histogram buckets are within 1.6 % of their values, so the
    CDF is exact to that resolution. Empty when no wakeup was recorded.
    """
    counts: dict[float, int] = {}
    for result in results:
        for low_us, n in (result.get("wakeup_latency") or {}).get("buckets", []):
            counts[float(low_us)] = counts.get(float(low_us), 0) + int(n)
    total = sum(counts.values())
    if total == 0:
        return [], []
    xs, ys, seen = [], [], 0
    for low_us in sorted(counts):
        seen += counts[low_us]
        xs.append(low_us)
        ys.append(seen / total)
    return xs, ys


def latency_series(results: Results) -> dict[str, dict[str, float]]:
    """The workload's own latency figures, ``{series: {"p50": µs, ..., "max": µs}}``, mean over the runs.

    A workload has them when it reports metrics named ``<series>_<stat>_us``
    (``stat`` one of mean, max, pNN) with unit ``us``. Statistics are ordered
    mean, percentiles ascending, max.
    """
    return {
        series: {stat: math.fsum(v) / len(v) for stat, v in by_stat.items()}
        for series, by_stat in latency_runs(results).items()
    }


def latency_runs(results: Results) -> dict[str, dict[str, list[float]]]:
    """:func:`latency_series`' figures before the mean: each run's value, ``{series: {stat: [µs per run]}}``."""
    sums: dict[str, dict[str, list[float]]] = {}
    for result in results:
        units = result.get("units") or {}
        for name, value in (result.get("metrics") or {}).items():
            m = _LATENCY_METRIC.match(name)
            if m is None or units.get(name, "us") != "us" or not isinstance(value, (int, float)):
                continue
            sums.setdefault(m["series"], {}).setdefault(m["stat"], []).append(float(value))
    return {
        series: dict(sorted(by_stat.items(), key=lambda kv: stat_key(kv[0])))
        for series, by_stat in sums.items()
    }


def stat_key(stat: str) -> float:
    """Sort key of a latency statistic: mean, then the percentiles ascending, then max."""
    return _STAT_ORDER.get(stat, float(stat[1:]) if stat.startswith("p") else 0.0)


def pareto_front(points: Sequence[tuple[float, float]], better: str) -> list[int]:
    """Indices of the points (energy, performance) that no other point dominates, by energy.

    Lower energy is better; performance is better ``"higher"`` or ``"lower"``.
    A point is dominated when another is at least as good on both and better
    on one. Points with a nan are never on the front.
    """
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    sign = 1.0 if better == "higher" else -1.0
    finite = [(e, sign * p) for e, p in points]

    def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] <= b[0] and a[1] >= b[1] and a != b

    front = [
        i
        for i, p in enumerate(finite)
        if not any(math.isnan(x) for x in p) and not any(dominates(q, p) for q in finite if not any(map(math.isnan, q)))
    ]
    return sorted(front, key=lambda i: points[i][0])

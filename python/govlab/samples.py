"""Within-run samples: what MMTests' extract modules took from one run of a timed benchmark.

MMTests (github.com/gormanm/mmtests at ffca095a, 18 January 2020: the tree
the x86 frequency-invariance evaluation of v5.7 ran) iterated some
benchmarks (NETPERF_ITERATIONS, KERNBENCH_ITERATIONS, GITSOURCE_ITERATIONS
in its configs: one figure per iteration) and ran the timed ones once per
client count. For those, compare-mmtests' mean, spread and t-test
(``Summarise.pm`` ``extractSummary``, ``Compare.pm`` ``_significanceTest``)
were over the samples the benchmark's Extract module read from that one
run:

* **pgbench** (``ExtractPgbench.pm``; ``shellpacks/pgbench-bench`` runs
  ``pgbench -l --aggregate-interval=1 -T 300``, PGBENCH_MAX_TIME of the
  ``db-pgbench-timed-*-small`` configs): the log's transactions of each
  second; the first 9 seconds skipped, then the mean of each 4 consecutive
  seconds, one sample each (72 in 300 s).
* **tbench4** (``ExtractTbench4.pm``; ``tbench -t 180``, TBENCH_DURATION of
  ``config-network-tbench``): every "execute" line, one a second after a
  warm-up of a fifth of the time (dbench 4.0's ``sig_alarm``, PRINT_FREQ 1,
  warmup = timelimit / 5), each the MB/s moved *since the warm-up ended*:
  180 running averages. compare-mmtests reports their harmonic mean (the
  source's "Hmean" rows), which is the run's figure after a warm-up
  (:func:`window`), not the bytes of the whole run over its time.
* **dbench4** (``ExtractDbench4.pm``; ``dbench --warmup 0 -t 180+…
  --show-execute-time``): every "N completed in T ms" line, one per pass of
  the load file per client.

govlab's runs mostly last 1 simulated second, not 180–300 (the x86
evaluation's hard-disk dbench4 and pgbench-rw run MMTests' own lengths:
experiments/x86-freq-invariance-haswell.toml), so each sampler here
divides the run into as many intervals as MMTests' benchmark had seconds
(the engine's interval counters, ``machine/intervals.rs``) and reads them
as the Extract module read its seconds. That scaling is govlab's choice,
not MMTests': a sample covers a few milliseconds of simulated time, not a
second. dbench4's passes are not seen one by one (the engine keeps the
operations' count and summed time per interval, of all clients together):
a sample is the summed time of the next run of consecutive intervals that
holds at least a pass's operations (3573, ``load=tiny``), per pass, so the samples are
about as many as the clients' passes in the run, and each is a pass's
worth of operations, as MMTests' were. Package power is sampled on the
same intervals (all of them, as turbostat's average covers the whole
benchmark).

**Warm-up** (``warmup = "3s"`` of an experiment's benchmark): the start-up
transient a benchmark's skip was for lasts as long as the kernel's
real-time constants make it (PELT's 32-ms half-life, kernel/sched/pelt.c
v5.2; a new task's ``post_init_entity_util_avg``, kernel/sched/fair.c v5.2;
schedutil's rate limit and its busy-CPU hold, ``sugov_cpu_is_busy``,
kernel/sched/cpufreq_schedutil.c v5.2; intel_cpufreq starting at the
lowest P-state), not as long as a fraction of the benchmark: MMTests'
seconds skipped 9 and 36 *real* seconds (and pgbench-bench ran pgbench for
5 minutes before its first step). Scaled to a 1-s run those skips are 30
and 167 ms. With a warm-up the run is simulated for the warm-up first
(rounded to whole sample intervals), then for the benchmark's duration,
cut into intervals as above; the warm-up's intervals are dropped
(:func:`compact`), the samples are read from the rest, and so are the
run's score and package power (:func:`window`): turbostat's average over
180-300 s is the steady state's. docs/validation.md, section 6, "Session
20", has the measurement the warm-up's length comes from.

A sampled run keeps its intervals' workload counters and package energy
(:func:`compact`, ``result["samples"]``); :func:`of` reads its samples,
``{"values", "pkg_power_w"}``, when the run is analysed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SAMPLERS", "Sampler", "sampler", "interval_ns", "warmup_ns", "compact", "of", "extract", "window"]


@dataclass(frozen=True)
class Sampler:
    name: str
    #: the benchmark's seconds in MMTests: the run is cut into this many intervals
    intervals: int
    #: what the Extract module read, from the run's intervals (each with ``dt_s``)
    read: Callable[[Sequence[Mapping[str, Any]]], list[float]]
    #: the workloads it reads (its counter and series indices are theirs)
    workloads: tuple[str, ...]
    #: the run's figure over some of its intervals (the engine's primary metric there; tbench4's,
    #: compare-mmtests' Hmean of its samples)
    primary: Callable[[Sequence[Mapping[str, Any]], float], float]


def _pgbench(ivs: Sequence[Mapping[str, Any]]) -> list[float]:
    # ExtractPgbench: skip the first 9 seconds (startSamples = 1 + 2 x batch), then average batches of 4
    per_s = [iv["counters"][0] / iv["dt_s"] for iv in ivs]  # pgbench.rs: counter 0, transactions
    out = []
    for i in range(9, len(per_s) - 3, 4):
        out.append(math.fsum(per_s[i : i + 4]) / 4)
    return out


def _tbench(ivs: Sequence[Mapping[str, Any]]) -> list[float]:
    # ExtractTbench4 on dbench 4.0's execute lines: after a warm-up of a fifth, the bytes since it ended
    # over the time since it ended, at each second
    warmup = len(ivs) // 6  # 36 of 216 seconds: 180 s after a warm-up of 180 / 5
    out, moved, t = [], 0.0, 0.0
    for iv in ivs[warmup:]:
        moved += iv["counters"][1]  # tbench.rs: counter 1, bytes
        t += iv["dt_s"]
        out.append(moved / t / 1e6)
    return out


def _dbench4(ivs: Sequence[Mapping[str, Any]]) -> list[float]:
    # ExtractDbench4 reads each pass's time; here each run of intervals that holds a pass's operations
    out, count, sum_ns = [], 0, 0.0
    for iv in ivs:
        s = iv["series"][0]  # dbench.rs: series 0, each operation's time
        count += s["count"]
        sum_ns += s["sum_ns"]
        if count >= DBENCH_OPS_PER_PASS:
            out.append(sum_ns / count * DBENCH_OPS_PER_PASS / 1e6)
            count, sum_ns = 0, 0.0
    return out


def _tps(ivs: Sequence[Mapping[str, Any]], secs: float) -> float:
    # pgbench.rs: tps, transactions (counter 0) per second
    return math.fsum(iv["counters"][0] for iv in ivs) / secs


def _tbench_hmean(ivs: Sequence[Mapping[str, Any]], secs: float) -> float:
    # compare-mmtests' figure for tbench4, its "Hmean" row: the harmonic mean of the execute lines
    values = _tbench(_timed(ivs))
    if not values or min(values) <= 0:
        return math.nan
    return len(values) / math.fsum(1 / v for v in values)


def _loadfile_ms(ivs: Sequence[Mapping[str, Any]], secs: float) -> float:
    # dbench.rs: loadfile_ms, the mean operation's time x a pass's operations
    count = sum(iv["series"][0]["count"] for iv in ivs)
    if count == 0:
        return math.nan
    return math.fsum(iv["series"][0]["sum_ns"] for iv in ivs) / count * DBENCH_OPS_PER_PASS / 1e6


#: Operations in one pass of MMTests' client-tiny.txt, which the experiments sampled
#: this way replay (``dbench:load=tiny``, crates/govlab-core/src/workload/dbench.rs;
#: data/dbench/client-tiny.ops).
DBENCH_OPS_PER_PASS = 3573

SAMPLERS: dict[str, Sampler] = {
    s.name: s
    for s in (
        Sampler("pgbench", 300, _pgbench, ("pgbench",), _tps),
        Sampler("tbench4", 216, _tbench, ("tbench",), _tbench_hmean),
        Sampler("dbench4", 180, _dbench4, ("dbench",), _loadfile_ms),
    )
}


def sampler(name: str) -> Sampler:
    try:
        return SAMPLERS[name]
    except KeyError:
        raise ValueError(f"no sampler named {name!r}; the samplers are {', '.join(SAMPLERS)}") from None


def interval_ns(name: str, duration_ns: int) -> int:
    """The engine's interval for ``name``'s samples of a run of ``duration_ns``."""
    return max(1, duration_ns // sampler(name).intervals)


def warmup_ns(name: str, duration_ns: int, warmup_ns: int) -> int:
    """The warm-up of ``name``'s run of ``duration_ns`` after a warm-up of ``warmup_ns``:
    rounded to whole intervals, so the benchmark's intervals start where it ends."""
    step = interval_ns(name, duration_ns)
    return round(warmup_ns / step) * step


def compact(name: str, intervals: Sequence[Mapping[str, Any]], warmup_ns: int = 0) -> dict[str, Any]:
    """What a sampled run keeps of its intervals (``result["intervals"]`` of
    ``govlab.run(..., sample_interval=...)``): per interval its times, the workload's
    counters and series, and the packages' energy; none of the first ``warmup_ns``."""
    warm_s = warmup_ns / 1e9
    kept = {
        "sampler": name,
        "intervals": [
            {
                "start_s": iv["start_s"],
                "end_s": iv["end_s"],
                "counters": iv["counters"],
                "series": iv["series"],
                "package_j": math.fsum(p["package_j"] for p in iv["packages"]),
                "dram_j": math.fsum(p.get("dram_j", 0.0) for p in iv["packages"]),
            }
            for iv in intervals
            # an interval's times are its ns / 1e9: half an interval decides, not the last bit
            if iv["start_s"] >= warm_s - (iv["end_s"] - iv["start_s"]) / 2
        ],
    }
    if warmup_ns:
        kept["warmup_s"] = warm_s
    return kept


def window(result: Mapping[str, Any]) -> dict[str, float] | None:
    """A run with a warm-up: its primary metric, package and DRAM energy and seconds after
    the warm-up, ``{"value", "package_j", "dram_j", "seconds"}`` (``dram_j`` nan for a run
    stored before the intervals kept it); None for a run without one."""
    kept = result.get("samples")
    if kept is None or not kept.get("warmup_s"):
        return None
    ivs = kept["intervals"]
    secs = math.fsum(iv["end_s"] - iv["start_s"] for iv in ivs)
    if not secs > 0:
        return None
    return {
        "value": sampler(kept["sampler"]).primary(ivs, secs),
        "package_j": math.fsum(iv["package_j"] for iv in ivs),
        "dram_j": math.fsum(iv["dram_j"] for iv in ivs) if all("dram_j" in iv for iv in ivs) else math.nan,
        "seconds": secs,
    }


def of(result: Mapping[str, Any]) -> dict[str, list[float]] | None:
    """A sampled run's samples, ``{"values", "pkg_power_w"}``; None for a run without."""
    kept = result.get("samples")
    if kept is None:
        return None
    return extract(kept["sampler"], kept["intervals"])


def extract(name: str, intervals: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """``name``'s samples of a run from its intervals (:func:`compact`'s); an interval
    under half the others' length (the run's remainder at its end) is left out."""
    ivs = _timed(intervals)
    power = [iv["package_j"] / iv["dt_s"] for iv in ivs]
    return {"values": sampler(name).read(ivs), "pkg_power_w": power}


def _timed(intervals: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The intervals with their lengths (``dt_s``), less one under half the others' length."""
    ivs = [{**iv, "dt_s": iv["end_s"] - iv["start_s"]} for iv in intervals]
    full = max((iv["dt_s"] for iv in ivs), default=0.0)
    return [iv for iv in ivs if iv["dt_s"] >= full / 2 and iv["dt_s"] > 0]

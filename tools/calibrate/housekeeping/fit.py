#!/usr/bin/env python3
"""Fit govlab's housekeeping gap distribution to a real recording's idle statistics.

The gap between two housekeeping wakeups of one CPU is a two-phase
hyperexponential: with probability p a short gap (exponential, mean s: the
follow-up work of a burst -- a timer softirq raising RCU or a kworker item),
else a long gap (exponential, mean L). Three numbers fix it: the per-CPU
wakeup rate (mean gap = 1/rate) and the median and 90th percentile idle
period, taken from tools/calibrate/idle_recordings/idle_stats.out (real
recordings, independent of govlab). Standard library only.

Usage: python3 fit.py > fit.out
"""
import math

# (name, wakeups/s per idle CPU, median idle s, p90 idle s, source)
RECORDINGS = [
    ("juno (lisa sched_load, Juno r0, 4.19)", 92.3, 0.985e-3, 7.06e-3,
     "idle_recordings/idle_stats.out, lisa/sched_load/trace.report.txt"),
    ("phone (trappy trace_surfaceflinger, SD835)", 39.1, 0.760e-3, 58.1e-3,
     "idle_recordings/idle_stats.out, trappy/trace_surfaceflinger.html"),
]


def cdf(x, p, s, big):
    return p * (1 - math.exp(-x / s)) + (1 - p) * (1 - math.exp(-x / big))


def quantile(q, p, s, big):
    lo, hi = 0.0, 100.0 * max(s, big)
    for _ in range(200):
        mid = (lo + hi) / 2
        if cdf(mid, p, s, big) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def fit(rate, med, p90):
    mean = 1.0 / rate
    best = None
    # grid over p and s; L follows from the mean. Error: log ratios of median and p90.
    for i in range(1, 400):
        p = i / 400
        for j in range(1, 400):
            s = mean * j / 400
            big = (mean - p * s) / (1 - p)
            if big <= s:
                continue
            e = math.log(quantile(0.5, p, s, big) / med) ** 2 + math.log(quantile(0.9, p, s, big) / p90) ** 2
            if best is None or e < best[0]:
                best = (e, p, s, big)
    return best


for name, rate, med, p90, src in RECORDINGS:
    e, p, s, big = fit(rate, med, p90)
    print(f"{name}: source {src}")
    print(f"  target rate {rate}/s median {med*1e3:.3f} ms p90 {p90*1e3:.2f} ms")
    print(f"  fit p_short={p:.4f} short_mean_us={s*1e6:.1f} long_mean_ms={big*1e3:.3f}")
    print(f"  fit gives median {quantile(0.5, p, s, big)*1e3:.3f} ms p90 {quantile(0.9, p, s, big)*1e3:.2f} ms"
          f" mean gap {(p*s+(1-p)*big)*1e3:.3f} ms (rate {1/(p*s+(1-p)*big):.1f}/s) residual {e:.2e}")

"""A trace.dat's sched_switch events as a DataFrame, timed on one core (run by bench/run.py).

    python bench/df_event.py TRACE.dat

Pins this process to one CPU and keeps pyarrow and polars to one thread
each, then, best of three: ``govlab.Trace(path)`` (the engine reads the
file), ``df_event("sched_switch")`` into pandas (the table is built in
Rust and handed over as Arrow), and the same into polars. Prints one JSON
object: the seconds of each step, the rows, and the totals (read + table).
"""

from __future__ import annotations

import json
import os
import sys
import time

# One thread for polars and Arrow's pools; set before either is imported.
os.environ["POLARS_MAX_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

REPEATS = 3


def best(fn):
    times, out = [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> int:
    path = sys.argv[1]
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import pyarrow as pa
    import polars as pl  # noqa: F401  (imported before timing)

    import govlab

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    read_s, trace = best(lambda: govlab.Trace(path))
    pandas_s, df = best(lambda: trace.df_event("sched_switch"))
    polars_s, pf = best(lambda: trace.df_event("sched_switch", backend="polars"))
    assert len(df) == pf.height
    print(json.dumps({
        "events": sum(trace.events.values()),
        "rows": len(df),
        "read_s": read_s,
        "pandas_s": pandas_s,
        "polars_s": polars_s,
        "pandas_total_s": read_s + pandas_s,
        "polars_total_s": read_s + polars_s,
        "cpus_used": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())

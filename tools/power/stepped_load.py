"""Modelled power of a platform idle and under a SPECpower-like stepped load.

SPECpower_ssj2008 runs open-loop transactions at 100%, 90% ... 10% of the
machine's calibrated maximum throughput, then "active idle". Here: a Poisson
stream of 1 ms requests (time at the reference clock) served by one worker per
CPU; the maximum is calibrated as SPECpower does, by a saturating closed-loop
run (every CPU busy), and each step offers that fraction of it. Prints one
row per step: offered load, package W, DRAM W, total W (the run's energy over
its time), per platform, as a Markdown table (docs/platforms.md).

    .venv/bin/python tools/power/stepped_load.py [PLATFORM...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import govlab

PLATFORMS = ["broadwell-2s-e5-2698v4", "skylake-e3-1240v5", "power8", "power9"]
DURATION = "2s"


def workload(nr_cpus: int, rate: float | None) -> str:
    """Workers on every CPU; with `rate` an open-loop stream, without it a closed loop (saturation)."""
    if rate is None:
        return f'[[task]]\ncomm = "sat"\ninstances = {nr_cpus}\nloop = "forever"\nops = [ {{ run = "1ms" }}, {{ count = "done" }} ]\n'
    return (
        '[[channel]]\nname = "req"\n[[source]]\nname = "clients"\nchannel = "req"\n'
        f'rate = {rate:.3f}\narrivals = "poisson"\n'
        f'[[task]]\ncomm = "worker"\ninstances = {nr_cpus}\nloop = "forever"\n'
        'ops = [ { recv = "req" }, { run = "1ms" } ]\n'
    )


def run(platform: str, text: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        return govlab.run(platform=platform, workload=f.name, duration=DURATION).to_dict()
    finally:
        Path(f.name).unlink()


def main(names: list[str]) -> None:
    for name in names or PLATFORMS:
        idle = govlab.run(platform=name, workload="idle", duration=DURATION).to_dict()
        nr = len(idle["cpus"])
        sat = run(name, workload(nr, None))
        max_rate = sat["metrics"].get("done_per_s", 0.0)
        if not max_rate:
            secs = sat["sim_time_s"]
            max_rate = sum(c["busy_s"] for c in sat["cpus"]) / secs * 1000.0
        print(f"\n{name}: calibrated maximum {max_rate:.0f} requests/s\n")
        print("| load | package W | DRAM W | total W |")
        print("|---:|---:|---:|---:|")
        for pct in range(100, 0, -10):
            r = run(name, workload(nr, max_rate * pct / 100))
            s = r["sim_time_s"]
            print(f"| {pct}% | {r['package_j'] / s:.1f} | {r['dram_j'] / s:.1f} | {r['avg_power_w']:.1f} |")
        s = idle["sim_time_s"]
        print(f"| active idle | {idle['package_j'] / s:.1f} | {idle['dram_j'] / s:.1f} | {idle['avg_power_w']:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])

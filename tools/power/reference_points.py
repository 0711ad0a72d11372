"""The Intel platforms' package power at four reference points, as docs/platforms.md tabulates them.

Idle; one core busy at the lowest clock; one core busy at the 1-core turbo;
every thread busy at the all-core turbo (read over the last of 8 seconds, so
that RAPL's PL1, a 1 s average, has settled); and, where a measurement at a
fixed clock exists, every core busy at that clock on one thread each. Each beside its source in
docs/platforms.md ("Reference points"); here only the model's figures.

    .venv/bin/python tools/power/reference_points.py [PLATFORM...]

prints one Markdown table per platform: package W of each package, DRAM W
of the machine, and the uncore clock of package 0 in PC0.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import govlab

# The lowest P-state of each part (its platform file's first OPP).
LOWEST_KHZ = {
    "broadwell-2s-e5-2698v4": 1_200_000,
    "haswell-2s-e5-2670v3": 1_200_000,
    "skylake-e3-1240v5": 800_000,
}
ALL_BUSY_S = 8
# A clock at which a measurement of every core busy exists, one thread a core (SMT off): RAPL of
# 2 x E5-2680 v3 under FIRESTARTER at 2.0 GHz (docs/research/sources.md C.10).
EVERY_CORE_AT_KHZ = {
    "haswell-2s-e5-2670v3": 2_000_000,
}


def spin_file(tmp: Path, cpus: int | None) -> str:
    """A workload of one spinning task pinned to CPU 0, or one per CPU."""
    path = tmp / f"spin-{cpus}.toml"
    where = 'cpus = [0]\n' if cpus is None else f"instances = {cpus}\n"
    path.write_text(f'[[task]]\ncomm = "spin"\n{where}ops = [ {{ run = "100s" }} ]\n')
    return str(path)


def row(label: str, r: govlab.Result, interval: int | None = None) -> str:
    d = r.to_dict()
    if interval is None:
        span, pkgs = d["sim_time_s"], d["packages"]
    else:
        iv = d["intervals"][interval]
        span, pkgs = iv["end_s"] - iv["start_s"], iv["packages"]
    pkg_w = " / ".join(f"{p['package_j'] / span:.1f}" for p in pkgs)
    dram_w = sum(p["dram_j"] for p in pkgs) / span
    unc = d["packages"][0].get("uncore_avg_mhz")
    unc_text = f"{unc:.0f}" if unc is not None else "-"
    return f"| {label} | {pkg_w} | {dram_w:.1f} | {unc_text} |"


def main(platforms: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        for plat in platforms:
            ncpus = len(govlab.run(platform=plat, workload="idle", duration="1ms").cpus)
            lowest = LOWEST_KHZ[plat]
            one = spin_file(tmp, None)
            every = spin_file(tmp, ncpus)
            print(f"\n{plat}\n")
            print("| point | package W (each) | DRAM W (all) | uncore MHz, package 0 in PC0 |")
            print("|---|---:|---:|---:|")
            print(row("idle (default governors, 2 s)", govlab.run(platform=plat, workload="idle", duration="2s")))
            low = govlab.run(platform=plat, workload=one, cpufreq=f"userspace:scaling_setspeed={lowest}", duration="2s")
            print(row(f"one core busy at {lowest // 1000} MHz", low))
            top = govlab.run(platform=plat, workload=one, cpufreq="performance", duration="2s")
            print(row("one core busy at the 1-core turbo (`performance`)", top))
            full = govlab.run(
                platform=plat, workload=every, cpufreq="performance", duration=f"{ALL_BUSY_S}s", turbostat_interval="1s"
            )
            print(row("every thread busy, first second (`performance`)", full, 0))
            print(row(f"every thread busy, second {ALL_BUSY_S} (PL1 settled)", full, ALL_BUSY_S - 1))
            if plat in EVERY_CORE_AT_KHZ:
                khz = EVERY_CORE_AT_KHZ[plat]
                cores = len(govlab.run(platform=f"{plat}:smt=off", workload="idle", duration="1ms").cpus)
                fixed = govlab.run(
                    platform=f"{plat}:smt=off",
                    workload=spin_file(tmp, cores),
                    cpufreq=f"userspace:scaling_setspeed={khz}",
                    duration="2s",
                )
                print(row(f"every core busy at {khz // 1000} MHz, one thread each (SMT off)", fixed))


if __name__ == "__main__":
    main(sys.argv[1:] or list(LOWEST_KHZ))

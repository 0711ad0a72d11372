"""How much of the Xeons' package-power rise with invariance is the uncore's, in the model.

docs/validation.md §6, session 19 (branch `uncore`). For each Xeon and configuration (v5.2's
non-invariant schedutil, the invariant 4C), one `govlab run` (seed 1, the evaluation's kernel,
governor and cpuidle) of gitsource (the experiments' 60 scripts) and of kernbench at 2 and 160 jobs
(the whole tree's default files), and per run: the elapsed time, the package power of both packages
(turbostat's summary PkgWatt), its cores' and uncores' parts, the uncore part beside the constant
`uncore_mw` (the clock's share: what UFS moves), each package's mean uncore clock in PC0
(turbostat's UncMHz) and its PC0 time, and the busy CPUs (sum of busy time / elapsed).

    python3 tools/power/uncore_share.py [--govlab .venv/bin/govlab] > tools/power/uncore_share.out
"""

from __future__ import annotations

import argparse
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

MACHINES = {"broadwell": "broadwell-2s-e5-2698v4", "haswell": "haswell-2s-e5-2670v3"}
# The files' constant PC0 uncore power per package and their PC6 power, mW (`uncore_mw`, PC6 `power_mw`).
UNCORE_MW = {"broadwell": 12500.0, "haswell": 12500.0}
PC6_MW = {"broadwell": 3000.0, "haswell": 3000.0}
CONFIGS = {"v5.2": "5.2", "4C": "5.2:freq_invariance=4c"}
WORKLOADS = {
    "gitsource": ("gitsource:scripts=60", "600s"),
    "kernbench-2": ("kernbench:jobs=2", "2000s"),
    "kernbench-160": ("kernbench:jobs=160", "2000s"),
}


def run(govlab: str, machine: str, config: str, workload: str) -> dict:
    spec, duration = WORKLOADS[workload]
    out = subprocess.run(
        [govlab, "run", "--platform", f"{MACHINES[machine]}:intel_pstate=passive", "--kernel", CONFIGS[config],
         "--cpufreq", "schedutil", "--cpuidle", "menu", "--workload", spec, "--duration", duration,
         "--seed", "1", "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout
    r = json.loads(out)
    secs = r["sim_time_s"]
    pkgs = r["packages"]
    pc0_s = [secs - sum(s["time_s"] for s in p["cstates"]) for p in pkgs]
    return {
        "machine": machine, "config": config, "workload": workload, "secs": secs,
        "pkg_w": sum(p["package_j"] for p in pkgs) / secs,
        "cores_w": sum(p["cores_j"] for p in pkgs) / secs,
        "uncore_w": sum(p["uncore_j"] for p in pkgs) / secs,
        # The constant part is drawn in PC0, PC6's power outside it; what is left is the clock's.
        "clock_w": sum(p["uncore_j"] - UNCORE_MW[machine] / 1000.0 * t - PC6_MW[machine] / 1000.0 * (secs - t)
                       for p, t in zip(pkgs, pc0_s)) / secs,
        "unc_mhz": [p.get("uncore_avg_mhz") or 0.0 for p in pkgs],
        "pc0": [t / secs for t in pc0_s],
        "busy": sum(c["busy_s"] for c in r["cpus"]) / secs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--govlab", default=".venv/bin/govlab")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    keys = [(m, c, w) for m in MACHINES for w in WORKLOADS for c in CONFIGS]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        rows = list(ex.map(lambda k: run(args.govlab, *k), keys))
    print("machine    workload       config  elapsed_s  pkg_W  cores_W  uncore_W  (clock_W)  UncMHz pkg0/pkg1  PC0 pkg0/pkg1  busy_CPUs")
    for r in rows:
        print(f"{r['machine']:<10} {r['workload']:<14} {r['config']:<6} {r['secs']:9.2f}  {r['pkg_w']:5.1f}  {r['cores_w']:7.1f}"
              f"  {r['uncore_w']:8.1f}  ({r['clock_w']:7.2f})  {r['unc_mhz'][0]:5.0f}/{r['unc_mhz'][1]:5.0f}"
              f"    {r['pc0'][0]:5.3f}/{r['pc0'][1]:5.3f}  {r['busy']:9.2f}")
    print()
    print("rise v5.2 -> 4C (W): package, cores, uncore, of which the uncore clock's")
    for i in range(0, len(rows), 2):
        a, b = rows[i], rows[i + 1]
        print(f"{a['machine']:<10} {a['workload']:<14} {b['pkg_w'] - a['pkg_w']:+6.2f} {b['cores_w'] - a['cores_w']:+6.2f}"
              f" {b['uncore_w'] - a['uncore_w']:+6.2f} {b['clock_w'] - a['clock_w']:+6.2f}")


if __name__ == "__main__":
    main()

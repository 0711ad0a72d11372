"""Where the Xeons' package power goes under kernbench, per job count, beside the source's watts.

docs/validation.md §6, session 18 (branch `xeonpower`). For each machine, configuration (v5.2's
non-invariant schedutil, the invariant 4C, intel_pstate's powersave) and job count, one `govlab
run` (seed 1, the evaluation's kernel, governors and cpuidle) of kernbench at the reduced tree
(`files=400`) and at the model's whole tree (`files=2700`), and per run: the elapsed time, the
package power (cores + uncore of both packages, turbostat's summary PkgWatt), its cores' and
uncores' parts, the busy CPUs (Σ busy time / elapsed), their clock (APERF/MPERF over C0, weighted
by busy time), the cores' watts per busy CPU, and the time in PC6. Then, per machine and tree,
the benchmark's power as the source took it (all job counts' energy over their time), its energy,
and its per-watt ratio split as speed-up (geometric mean over the job counts) x time ratio over
the energy ratio.

    python3 tools/power/xeon_load_power.py [--govlab .venv/bin/govlab] [--jobs 2,8]
        [--files 400,2700] [--machines broadwell,haswell] > tools/power/xeon_load_power.out
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
from concurrent.futures import ThreadPoolExecutor

MACHINES = {"broadwell": "broadwell-2s-e5-2698v4", "haswell": "haswell-2s-e5-2670v3"}
# The experiments' configurations: intel_pstate's mode, kernel, cpufreq governor.
CONFIGS = {
    "v5.2": ("passive", "5.2", "schedutil"),
    "4C": ("passive", "5.2:freq_invariance=4c", "schedutil"),
    "powersave": ("active", "5.2", "intel_pstate:hwp=off,policy=powersave"),
}
# MMTests' kernbench steps, 2 .. 2 x NUMCPUS (the experiments' axes).
JOBS = {"broadwell": [2, 4, 8, 16, 32, 64, 128, 160], "haswell": [2, 4, 8, 16, 32, 64, 96]}


def run(govlab: str, machine: str, config: str, files: int, jobs: int) -> dict:
    mode, kernel, cpufreq = CONFIGS[config]
    out = subprocess.run(
        [govlab, "run", "--platform", f"{MACHINES[machine]}:intel_pstate={mode}", "--kernel", kernel, "--cpufreq", cpufreq,
         "--cpuidle", "menu", "--workload", f"kernbench:files={files},jobs={jobs}", "--duration", "2000s",
         "--seed", "1", "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout
    r = json.loads(out)
    secs = r["sim_time_s"]
    busy_s = sum(c["busy_s"] for c in r["cpus"])
    khz_s = sum((c["c0_avg_khz"] or 0.0) * c["busy_s"] for c in r["cpus"])
    cores_j = sum(p["cores_j"] for p in r["packages"])
    uncore_j = sum(p["uncore_j"] for p in r["packages"])
    pc6_s = sum(s["time_s"] for p in r["packages"] for s in p["cstates"])
    return {
        "machine": machine, "config": config, "files": files, "jobs": jobs, "secs": secs,
        "pkg_j": r["package_j"], "cores_j": cores_j, "uncore_j": uncore_j, "busy_s": busy_s,
        "mhz": khz_s / busy_s / 1000 if busy_s else 0.0, "pc6": pc6_s / secs / len(r["packages"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--govlab", default=".venv/bin/govlab")
    ap.add_argument("--jobs", help="job counts (default: the experiment's)")
    ap.add_argument("--files", default="400,2700")
    ap.add_argument("--machines", default="broadwell,haswell")
    ap.add_argument("--parallel", type=int, default=2)
    a = ap.parse_args()
    cases = [(m, c, int(f), j) for m in a.machines.split(",") for f in a.files.split(",")
             for j in ([int(x) for x in a.jobs.split(",")] if a.jobs else JOBS[m]) for c in CONFIGS]
    with ThreadPoolExecutor(a.parallel) as pool:
        rows = list(pool.map(lambda k: run(a.govlab, *k), cases))
    print("machine   files jobs config     elapsed s  pkg W  cores W  uncore W  busy CPUs  clock MHz  cores W/busy CPU  PC6")
    for r in rows:
        s = r["secs"]
        print(f"{r['machine']:9} {r['files']:5} {r['jobs']:4} {r['config']:9} {s:10.2f} {r['pkg_j'] / s:6.1f} "
              f"{r['cores_j'] / s:8.1f} {r['uncore_j'] / s:9.1f} {r['busy_s'] / s:10.2f} {r['mhz']:10.0f} "
              f"{r['cores_j'] / r['busy_s'] if r['busy_s'] else 0:17.2f} {100 * r['pc6']:4.1f} %")
    print()
    print("the benchmark as the source took it (every job count's package energy over their time), against v5.2:")
    for m in a.machines.split(","):
        for f in a.files.split(","):
            mine = [r for r in rows if (r["machine"], r["files"]) == (m, int(f))]
            base = {r["jobs"]: r for r in mine if r["config"] == "v5.2"}
            t0 = sum(r["secs"] for r in base.values())
            w0 = sum(r["pkg_j"] for r in base.values()) / t0
            for c in [c for c in CONFIGS if c != "v5.2"]:
                rs = [r for r in mine if r["config"] == c]
                t1 = sum(r["secs"] for r in rs)
                w1 = sum(r["pkg_j"] for r in rs) / t1
                speed = math.prod(base[r["jobs"]]["secs"] / r["secs"] for r in rs) ** (1 / len(rs))
                print(f"  {m:9} files={f:5} {c:9}: time {t0:7.1f} -> {t1:7.1f} s ({t1 / t0:.3f}), package {w0:5.1f} -> "
                      f"{w1:5.1f} W ({w1 / w0:.3f}), energy {w1 * t1 / (w0 * t0):.3f}; speed (geometric mean over the "
                      f"job counts) {speed:.3f}, x time ratio {speed * t1 / t0:.3f}; per watt {speed / (w1 / w0):.3f}")

if __name__ == "__main__":
    main()

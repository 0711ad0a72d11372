"""How the timed benchmarks' score and package power depend on how much of the run is skipped.

For pgbench (ro, rw), tbench4 and dbench4 on the three x86 machines of the frequency-invariance
evaluation, v5.2 (non-invariant schedutil), 4C (the merged invariant level) and intel_pstate
(active, powersave), at the experiment's smallest and largest client count: one run of
DURATION simulated seconds, kept per 50-ms interval (govlab.run(..., sample_interval=)).
Writes one JSON line per run: per interval the score (pgbench tps, tbench MB/s, dbench ms per
pass of client-tiny's 3573 operations) and the package power.

    .venv/bin/python tools/warmup/measure.py OUT.jsonl [DURATION_S [MACHINE,... [BENCH=C/C,...]]]
"""

import json
import math
import sys
import time

import govlab

MACHINES = {
    "skylake": ("skylake-e3-1240v5", "on", 1, {"pgbench-ro": 16, "pgbench-rw": 8, "tbench4": 32, "dbench4": 64}),
    "broadwell": ("broadwell-2s-e5-2698v4", "off", 2, {"pgbench-ro": 160, "pgbench-rw": 80, "tbench4": 320, "dbench4": 128}),
    "haswell": ("haswell-2s-e5-2670v3", "off", 2, {"pgbench-ro": 96, "pgbench-rw": 48, "tbench4": 192, "dbench4": 64}),
}
IV_MS = 50


def workload(bench, threads, clients):
    return {
        "pgbench-ro": f"pgbench:mode=ro,fs=xfs,threads={threads},clients={clients}",
        "pgbench-rw": f"pgbench:mode=rw,fs=xfs,threads={threads},clients={clients}",
        "tbench4": f"tbench:clients={clients}",
        "dbench4": f"dbench:fs=xfs,score=loadfile,load=tiny,clients={clients}",
    }[bench]


def score(bench, iv, dt):
    if bench.startswith("pgbench"):
        return iv["counters"][0] / dt
    if bench == "tbench4":
        return iv["counters"][1] / dt / 1e6
    s = iv["series"][0]
    return s["sum_ns"] / s["count"] * 3573 / 1e6 if s["count"] else math.nan


def main():
    done = set()
    try:
        done = {tuple(json.loads(line)[k] for k in ("machine", "bench", "clients", "config", "duration_s")) for line in open(sys.argv[1])}
    except FileNotFoundError:
        pass
    out = open(sys.argv[1], "a")
    dur = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    for m, (plat, hwp, threads, largest) in MACHINES.items():
        if only and m not in only:
            continue
        configs = {
            "v5.2": dict(kernel="5.2", cpufreq="schedutil", popt="passive"),
            "4C": dict(kernel="5.2:freq_invariance=4c", cpufreq="schedutil", popt="passive"),
            "intel_pstate": dict(kernel="5.2", cpufreq=f"intel_pstate:hwp={hwp},policy=powersave", popt="active"),
        }
        for bench, top in largest.items():
            steps = (1, top)
            if len(sys.argv) > 4:  # BENCH=C/C/...,...: those benchmarks at those client counts only
                chosen = dict(x.split("=") for x in sys.argv[4].split(","))
                if bench not in chosen:
                    continue
                steps = tuple(int(c) for c in chosen[bench].split("/"))
            for clients in steps:
                for cname, c in configs.items():
                    if (m, bench, clients, cname, dur) in done:
                        continue
                    t0 = time.perf_counter()
                    r = govlab.run(
                        platform=f"{plat}:intel_pstate={c['popt']}",
                        workload=workload(bench, threads, clients),
                        cpufreq=c["cpufreq"],
                        cpuidle="menu",
                        kernel=c["kernel"],
                        duration=f"{dur}s",
                        seed=1,
                        sample_interval=f"{IV_MS}ms",
                        max_events=10**10,
                    ).to_dict()
                    ivs = r["intervals"]
                    rows = []
                    for iv in ivs:
                        dt = iv["end_s"] - iv["start_s"]
                        if dt <= 0:
                            continue
                        pj = math.fsum(p["package_j"] for p in iv["packages"])
                        rows.append([round(iv["end_s"], 4), score(bench, iv, dt), pj / dt])
                    rec = {"machine": m, "bench": bench, "clients": clients, "config": cname, "duration_s": dur,
                           "wall_s": round(time.perf_counter() - t0, 2), "intervals": rows}
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    print(m, bench, clients, cname, rec["wall_s"], file=sys.stderr, flush=True)


main()

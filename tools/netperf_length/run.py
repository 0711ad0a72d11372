"""netperf -i 3,3 at netperf's own test length against shorter tests (docs/validation.md §6, session 19).

    .venv/bin/python tools/netperf_length/run.py OUT.json [CASES...]

Each case is machine:proto:size:test_len_s[:scored_len_s] (test_len 0: the one 1-s test of before; pad = test_len x PAD_TIME / 10 s for UDP_STREAM, as netperf's
4-s PAD_TIME is to its default 10-s test), run under v5.2 schedutil and 4C (and 8C/12C on the Xeons),
seed 1. A diagnostic of the approximation's cost, not a calibration: prints score and package power
ratios against v5.2, the events and the wall time per run. With scored_len the power is printed twice:
the simulated run's (pkg_w) and the invocation's it stands for (scored_w: `scored_power`, each test's
second half and each pad's extended as the score is; session 20).
"""
import json
import subprocess
import sys
import time

PLAT = {"skl": "skylake-e3-1240v5", "bdw": "broadwell-2s-e5-2698v4", "hsw": "haswell-2s-e5-2670v3"}
KERNELS = ["5.2", "5.2:freq_invariance=4c"]


def run(machine, proto, size, test_len, kernel, tests=3, seed=1, scored=0.0):
    pad = test_len * 0.4 if proto == "udp" else 0.0
    wl = f"netperf:test={proto}_stream,size={size}"
    if test_len > 0:
        wl += f",tests={tests},test_len={int(test_len * 1000)}ms"
        if proto == "udp":
            wl += f",pad={int(pad * 1000)}ms"
        if scored:
            wl += f",scored_len={int(scored * 1000)}ms"
        dur = tests * (test_len + pad)
    else:
        dur = 1.0
    t = time.time()
    out = subprocess.run([".venv/bin/govlab", "run", "--platform", PLAT[machine], "--kernel", kernel, "--workload", wl,
                          "--cpufreq", "schedutil", "--duration", f"{int(round(dur * 1000))}ms", "--seed", str(seed),
                          "--format", "json"], capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    return {"machine": machine, "proto": proto, "size": size, "test_len": test_len, "scored_len": scored, "kernel": kernel, "seed": seed,
            "mbps": d["metrics"]["mbps"], "pkg_w": d["package_j"] / d["sim_time_s"] if isinstance(d["package_j"], float) else d["avg_power_w"],
            "scored_w": (d.get("scored_power") or {}).get("package_w"), "events": d["events"], "wall_s": time.time() - t}


def main():
    out_path, cases = sys.argv[1], sys.argv[2:]
    rows = []
    for case in cases:
        machine, proto, size, test_len, *scored = case.split(":")
        for k in KERNELS:
            r = run(machine, proto, int(size), float(test_len), k, scored=float(scored[0]) if scored else 0.0)
            rows.append(r)
            print(json.dumps(r), flush=True)
        base, inv = rows[-2], rows[-1]
        line = f"== {case}: 4C/v5.2 score {inv['mbps'] / base['mbps']:.4f} power {inv['pkg_w'] / base['pkg_w']:.4f}"
        if base["scored_w"] and inv["scored_w"]:
            line += f" scored power {inv['scored_w'] / base['scored_w']:.4f}"
        print(line, flush=True)
    with open(out_path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

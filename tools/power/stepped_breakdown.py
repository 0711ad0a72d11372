"""Where the modelled power of a SPECpower-like stepped load goes, step by step.

For each step of `stepped_load.py` (same workload, same calibrated maximum)
this runs the model with a trace and splits the package + DRAM power into

* core dynamic and core leakage power, priced from the trace: each core's
  busy time per clock, with one or both of its threads running, at the
  platform file's `ceff_nf`, `leakage_mw_per_v`, `smt_power` and OPP voltages
  (the formulas of crates/govlab-core/src/platform/energy.rs, repeated here);
* core idle power and idle-state entry/exit energy: the rest of the cores'
  energy the run reports (`cores_j`); at 100 % it is ~0, which checks the
  repetition above;
* uncore and DRAM, as the run reports them;

and shows what the CPUs did: clock while busy, thread and core busy time,
the share of core busy time with both SMT threads running, core C-state
residency and C6 entries, package C-state residency, and the idle
governor's too-deep choices.

    .venv/bin/python tools/power/stepped_breakdown.py [--cpufreq GOV | --lowest-clock] [--steps 40,50] [PLATFORM[:OPTIONS]]

The load steps are calibrated as `stepped_load.py` does, by a saturating
run under the platform's default governor, whatever `--cpufreq` says.
`--lowest-clock` runs each step at the lowest fixed clock (`userspace`) that
carries it, taken as the lowest OPP at which the threads are busy less than
`CARRIES_BUSY_PCT` of the time (at 100 % busy an open-loop queue grows).

Only for platforms with one CPU type and a trace of sched_switch and
cpu_frequency events (broadwell-2s-e5-2698v4 and skylake-e3-1240v5; raw
outputs `stepped_breakdown.out` and `stepped_breakdown_skylake.out`).
PLATFORM may carry options: `skylake-e3-1240v5:hwp=off --lowest-clock`
holds a HWP machine at fixed clocks. The powersave table of
`stepped_breakdown.out` was run as `--cpufreq powersave` when that named
intel_pstate's own policy on broadwell under 6.8; it is
`--cpufreq intel_pstate:policy=powersave` now (docs/governors.md).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import tomllib
from pathlib import Path

import govlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stepped_load as sl  # noqa: E402

# 2 s per step, traced: the split of the low and middle steps, where no
# power limit binds (stepped_load.py reads settled 8 s runs instead).
DURATION = "2s"

ROOT = Path(__file__).resolve().parents[2]
CARRIES_BUSY_PCT = 95.0
EVENT = re.compile(r"\[(\d+)\]\s+\S+\s+([\d.]+): (sched_switch|cpu_frequency):\s+(.*)")


class CoreLedger:
    """Busy time and dynamic/leakage energy of one core from its threads' switches and clock."""

    def __init__(self, ct: dict, mv: dict[int, int], khz: int) -> None:
        self.ct, self.mv, self.khz = ct, mv, khz
        self.running: dict[int, bool] = {}
        self.since_ns = 0
        self.ns_by_threads = [0, 0, 0]
        self.dyn_j = self.leak_j = self.khz_ns = 0.0

    def advance(self, t_ns: int) -> None:
        dt = t_ns - self.since_ns
        n = sum(self.running.values())
        self.ns_by_threads[min(n, 2)] += dt
        if n:
            v = self.mv[self.khz] / 1000.0
            dyn_mw = self.ct["ceff_nf"] * v * v * self.khz / 1000.0 * (self.ct["smt_power"] if n > 1 else 1.0)
            self.dyn_j += dyn_mw * dt * 1e-12
            self.leak_j += self.ct["leakage_mw_per_v"] * v * dt * 1e-12
            self.khz_ns += self.khz * dt
        self.since_ns = t_ns


def platform_file(name: str) -> dict:
    """The shipped platform file of `name`, options (`:hwp=off`) left out."""
    return tomllib.loads((ROOT / "data/platforms" / f"{name.split(':')[0]}.toml").read_text())


def breakdown(name: str, text: str, cpufreq: str | None, idle_w: float) -> dict:
    spec = platform_file(name)
    (ct,) = spec["cpu_type"]
    mv = {o["khz"]: o["mv"] for o in ct["opps"]}
    with tempfile.TemporaryDirectory() as d:
        wl, tr = Path(d) / "w.toml", Path(d) / "trace.txt"
        wl.write_text(text)
        r = govlab.run(platform=name, workload=str(wl), duration=DURATION, cpufreq=cpufreq, trace=str(tr)).to_dict()
        core_of = {c["cpu"]: (c["package"], c["core"]) for c in r["cpus"]}
        start_khz = min(mv)
        cores = {k: CoreLedger(ct, mv, start_khz) for k in set(core_of.values())}
        with tr.open() as f:
            for line in f:
                m = EVENT.search(line)
                if not m:
                    continue
                t_ns = round(float(m[2]) * 1e9)
                if m[3] == "sched_switch":
                    cpu = int(m[1])
                    c = cores[core_of[cpu]]
                    c.advance(t_ns)
                    c.running[cpu] = "next_comm=swapper" not in m[4]
                else:
                    fields = dict(kv.split("=") for kv in m[4].split())
                    c = cores[core_of[int(fields["cpu_id"])]]
                    c.advance(t_ns)
                    c.khz = int(fields["state"])
    s = r["sim_time_s"]
    for c in cores.values():
        c.advance(r["sim_time_ns"])
    pk = r["packages"]
    total_core_ns = sum(sum(c.ns_by_threads) for c in cores.values())
    busy_ns = sum(c.ns_by_threads[1] + c.ns_by_threads[2] for c in cores.values())
    corun_ns = sum(c.ns_by_threads[2] for c in cores.values())
    cores_w = sum(p["cores_j"] for p in pk) / s
    dyn_w = sum(c.dyn_j for c in cores.values()) / s
    leak_w = sum(c.leak_j for c in cores.values()) / s
    nr = len(r["cpus"])
    in_state = {}
    entries_c6 = too_deep = samples = 0
    for c in r["cpus"]:
        for st in c["idle_states"]:
            in_state[st["name"]] = in_state.get(st["name"], 0.0) + st["time_s"]
            if st["name"] == "C6":
                entries_c6 += st["usage"]
        acc = c["idle_accuracy"]
        samples += acc["samples"]
        too_deep += sum(acc["too_deep"].values())
    pkg_states = sum(cs["time_s"] for p in pk for cs in p["cstates"])
    total_w = sum(p["package_j"] + p["dram_j"] for p in pk) / s
    return {
        "rise": total_w - idle_w,
        "dyn": dyn_w,
        "leak": leak_w,
        "idle_exit": cores_w - dyn_w - leak_w,
        "uncore": sum(p["uncore_j"] for p in pk) / s,
        "dram": sum(p["dram_j"] for p in pk) / s,
        "mhz": busy_ns and sum(c.khz_ns for c in cores.values()) / busy_ns / 1000.0,
        "thread_busy": 100.0 * sum(c["busy_s"] for c in r["cpus"]) / (nr * s),
        "core_busy": 100.0 * busy_ns / total_core_ns,
        "corun": busy_ns and 100.0 * corun_ns / busy_ns,
        "c1": 100.0 * (in_state.get("C1", 0.0) + in_state.get("C1E", 0.0)) / (nr * s),
        "c6": 100.0 * in_state.get("C6", 0.0) / (nr * s),
        "c6_per_s": entries_c6 / (nr * s),
        "too_deep": samples and 100.0 * too_deep / samples,
        "pkg_cstate": 100.0 * pkg_states / (len(pk) * s),
        "wake_us": r["wakeup_latency"]["mean_us"],
    }


COLUMNS = [
    ("rise", "rise W", "{:.1f}"),
    ("dyn", "core dynamic W", "{:.1f}"),
    ("leak", "core leakage W", "{:.1f}"),
    ("idle_exit", "core idle + exits W", "{:.1f}"),
    ("uncore", "uncore W", "{:.1f}"),
    ("dram", "DRAM W", "{:.1f}"),
    ("mhz", "busy MHz", "{:.0f}"),
    ("thread_busy", "thread busy %", "{:.1f}"),
    ("core_busy", "core busy %", "{:.1f}"),
    ("corun", "both threads, % of core busy", "{:.1f}"),
    ("c1", "C1+C1E %", "{:.1f}"),
    ("c6", "C6 %", "{:.1f}"),
    ("c6_per_s", "C6 entries /s per CPU", "{:.0f}"),
    ("too_deep", "menu too deep %", "{:.1f}"),
    ("pkg_cstate", "package C-state %", "{:.1f}"),
    ("wake_us", "mean wakeup latency µs", "{:.0f}"),
]


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("platform", nargs="?", default="broadwell-2s-e5-2698v4")
    ap.add_argument("--cpufreq", default=None, help="governor for the steps (the calibration always uses the platform's default)")
    ap.add_argument("--lowest-clock", action="store_true", help="each step at the lowest fixed clock that carries it")
    ap.add_argument("--steps", default=",".join(map(str, sl.STEPS)), help="comma-separated load steps, %%")
    args = ap.parse_args(argv)
    name = args.platform
    idle = govlab.run(platform=name, workload="idle", duration=DURATION).to_dict()
    idle_w = sum(sl.watts(idle))
    nr = len(idle["cpus"])
    max_rate = sl.run(name, sl.workload(nr, None), None)["metrics"]["done_per_s"]
    refs = [r for r in sl.REFERENCES.get(name.split(":")[0], []) if r.judged]
    gov = "userspace at the lowest clock that carries each step" if args.lowest_clock else args.cpufreq or "default"
    print(f"{name}, cpufreq {gov}: active idle {idle_w:.1f} W, calibrated maximum {max_rate:.0f} requests/s\n")
    head = ["load"] + [f"{r.label.split(',')[0]} rise W" for r in refs] + [h for _, h, _ in COLUMNS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    opps = sorted(o["khz"] for o in platform_file(name)["cpu_type"][0]["opps"])
    for pct in (int(p) for p in args.steps.split(",")):
        text = sl.workload(nr, max_rate * pct / 100)
        if args.lowest_clock:
            for khz in opps:
                d = breakdown(name, text, f"userspace:scaling_setspeed={khz}", idle_w)
                if d["thread_busy"] < CARRIES_BUSY_PCT:
                    break
        else:
            d = breakdown(name, text, args.cpufreq, idle_w)
        cells = [fmt.format(d[k]) for k, _, fmt in COLUMNS]
        if refs:
            cells[0] += " (" + "; ".join(f"{100 * (d['rise'] / r.rise_w(pct) - 1):+.0f} %" for r in refs) + ")"
        cells[:0] = [f"{r.rise_w(pct):.1f}" for r in refs]
        cells.insert(0, f"{pct} %")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

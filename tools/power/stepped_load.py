"""Modelled power of a platform idle and under a SPECpower-like stepped load, beside published references.

SPECpower_ssj2008 runs open-loop transactions at 100%, 90% ... 10% of the
machine's calibrated maximum throughput, then "active idle". Here: a Poisson
stream of 1 ms requests (time at the reference clock) served by one worker per
CPU; the maximum is calibrated as SPECpower does, by a saturating closed-loop
run (every CPU busy), and each step offers that fraction of it.

The references are SPECpower_ssj2008 results (wall power of whole servers,
docs/research/sources.md C.4). What is compared is the rise over active idle,
the only part of a wall reading a package + DRAM model can be held to: the
rest of the node (board, BMC, fans at their floor, disk) is taken as constant
across steps and cancels, and the supply's loss is removed with a fixed
efficiency. The active-idle wall reading only bounds the modelled idle from
above.

    .venv/bin/python tools/power/stepped_load.py [--cpufreq GOV] [--plot PNG] [PLATFORM...]

prints the Markdown tables of docs/platforms.md; --plot (needs matplotlib)
draws every platform's steps beside its references.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import govlab

PLATFORMS = ["broadwell-2s-e5-2698v4", "skylake-e3-1240v5", "power8", "power9"]
# Each step runs DURATION and is read over its last SETTLED: SPECpower's
# levels last 240 s, long enough for any package power limit to have
# settled (RAPL's PL1 averages over 1 s; a run starts with the budget of an
# idle package).
DURATION = "8s"
SETTLED = "2s"
STEPS = list(range(10, 101, 10))
TOLERANCE = 0.20

# AC-to-DC efficiency of the server's supply between 20 % and 100 % of its
# rating: 80 PLUS Platinum asks at least 90 % at 20 %, 94 % at 50 %, 91 % at
# 100 % (Intel P4000IP TPS rev. 1.2, Table 34; sources.md C.4).
PSU_EFFICIENCY = 0.92


@dataclass(frozen=True)
class Reference:
    """One SPECpower_ssj2008 result: average wall watts at active idle, 10 % ... 100 %.

    `judged`: the server has the platform's part, or its die under another
    name at the same TDP, and the model is held to it (±20 %); otherwise it
    is kin, shown but not judged.
    """

    label: str
    url: str
    nodes: int
    wall_w: tuple[float, ...]
    judged: bool

    def rise_w(self, step: int) -> float:
        """Package + DRAM rise over active idle per node at `step` %, as the supply's output."""
        i = step // 10
        return PSU_EFFICIENCY * (self.wall_w[i] - self.wall_w[0]) / self.nodes

    def idle_bound_w(self) -> float:
        """Everything one node draws at active idle, after the supply: the modelled idle must be below it."""
        return PSU_EFFICIENCY * self.wall_w[0] / self.nodes


REFERENCES: dict[str, list[Reference]] = {
    "broadwell-2s-e5-2698v4": [
        Reference(
            "Huawei RH2288H V3, 2x E5-2698 v4 (one node)",
            "https://www.spec.org/power_ssj2008/results/res2016q2/power_ssj2008-20160412-00725.html",
            1,
            (43.5, 83.7, 101, 117, 131, 145, 164, 187, 228, 277, 329),
            True,
        ),
        Reference(
            "Huawei XH620 V3, 2x E5-2698 v4 per node (4-node chassis / 4)",
            "https://www.spec.org/power_ssj2008/results/res2016q2/power_ssj2008-20160412-00726.html",
            4,
            (217, 396, 476, 553, 598, 668, 787, 863, 1042, 1213, 1419),
            True,
        ),
        Reference(
            "Huawei XH321 V3, 2x E5-2699 v4 per node (4-node chassis / 4)",
            "https://www.spec.org/power_ssj2008/results/res2017q1/power_ssj2008-20170306-00743.html",
            4,
            (232, 419, 502, 579, 645, 705, 764, 852, 966, 1132, 1322),
            False,
        ),
        Reference(
            "HPE DL360 Gen9, 2x E5-2699 v3 (Haswell-EP)",
            "https://www.spec.org/power_ssj2008/results/res2016q1/power_ssj2008-20151215-00708.html",
            1,
            (45, 83.7, 101, 118, 133, 145, 162, 188, 218, 248, 276),
            False,
        ),
    ],
    "skylake-e3-1240v5": [
        Reference(
            "Supermicro SYS-5019S-M, 1x E3-1270 v5 (same die, 80 W)",
            "https://www.spec.org/power_ssj2008/results/res2015q4/power_ssj2008-20151111-00705.html",
            1,
            (15.0, 19.7, 23.0, 26.5, 31.3, 37.1, 46.0, 54.8, 62.0, 65.5, 66.0),
            True,
        ),
        Reference(
            "Fujitsu RX1330 M3, 1x E3-1230 v6 (Kaby Lake, 72 W): kin",
            "https://www.spec.org/power_ssj2008/results/res2017q2/power_ssj2008-20170315-00744.html",
            1,
            (13.1, 17.5, 20.5, 23.0, 25.4, 28.2, 31.9, 37.3, 44.5, 51.5, 56.1),
            False,
        ),
    ],
}


# Package TDP of the whole machine, the limit a package holds at sustained
# all-core load of Intel's high-complexity workload (quattor hardware
# templates: E5-2698 v4 135 W, E3-1240 v5 80 W; sources.md C.4).
TDP_W = {"broadwell-2s-e5-2698v4": 2 * 135.0, "skylake-e3-1240v5": 80.0}


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


def run(platform: str, text: str, cpufreq: str | None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        return govlab.run(platform=platform, workload=f.name, duration=DURATION, cpufreq=cpufreq, turbostat_interval=SETTLED).to_dict()
    finally:
        Path(f.name).unlink()


def watts(r: dict) -> tuple[float, float]:
    """Package and DRAM watts over the run's last interval (SETTLED)."""
    last = r["intervals"][-1]
    s = last["end_s"] - last["start_s"]
    return sum(p["package_j"] for p in last["packages"]) / s, sum(p["dram_j"] for p in last["packages"]) / s


def model(name: str, cpufreq: str | None) -> dict:
    """Package and DRAM watts at active idle and at every step, with the calibrated maximum."""
    idle = govlab.run(platform=name, workload="idle", duration=DURATION, cpufreq=cpufreq, turbostat_interval=SETTLED).to_dict()
    nr = len(idle["cpus"])
    sat = run(name, workload(nr, None), cpufreq)
    max_rate = sat["metrics"].get("done_per_s", 0.0)
    if not max_rate:
        max_rate = sum(c["busy_s"] for c in sat["cpus"]) / sat["sim_time_s"] * 1000.0
    steps = {pct: watts(run(name, workload(nr, max_rate * pct / 100), cpufreq)) for pct in STEPS}
    return {"max_rate": max_rate, "idle": watts(idle), "steps": steps}


def print_model(name: str, m: dict) -> None:
    print(f"\n{name}: calibrated maximum {m['max_rate']:.0f} requests/s\n")
    print("| load | package W | DRAM W | total W |")
    print("|---:|---:|---:|---:|")
    for pct in reversed(STEPS):
        p, d = m["steps"][pct]
        print(f"| {pct}% | {p:.1f} | {d:.1f} | {p + d:.1f} |")
    p, d = m["idle"]
    print(f"| active idle | {p:.1f} | {d:.1f} | {p + d:.1f} |")


def low_load_line(rise) -> tuple[float, float]:
    """Least-squares line through the rises (`rise(step)`, W) at 10-40 %: (W at 0 %, W per 10 %).

    Its value at 0 % estimates what the machine spends as soon as any core is
    awake (both packages out of their package C-states, DRAM out of
    self-refresh) apart from the work itself, assuming the low steps grow
    linearly with load; the 10 % rise itself bounds it from above.
    """
    xs = [10, 20, 30, 40]
    ys = [rise(p) for p in xs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope * 10


def print_comparison(name: str, m: dict) -> None:
    refs = REFERENCES.get(name, [])
    if not refs:
        return
    idle = sum(m["idle"])
    judged = [r for r in refs if r.judged]
    print(f"\n{name}: rise of package + DRAM over active idle (W), beside each reference's (wall rise x {PSU_EFFICIENCY})\n")
    heads = [f"model vs {r.label.split(',')[0]}" for r in judged] or ["model vs reference"]
    print("| load | model | " + " | ".join(r.label for r in refs) + " | " + " | ".join(heads) + " |")
    print("|---:|---:|" + "---:|" * (len(refs) + len(heads)))
    for pct in STEPS:
        rise = sum(m["steps"][pct]) - idle
        cells = " | ".join(f"{r.rise_w(pct):.1f}" for r in refs)
        verdicts = []
        for r in judged:
            diff = rise / r.rise_w(pct) - 1.0
            verdicts.append(f"{diff * 100:+.0f} %" + ("" if abs(diff) <= TOLERANCE else " (outside ±20 %)"))
        print(f"| {pct}% | {rise:.1f} | {cells} | " + (" | ".join(verdicts) or "not judged: no reference with this part") + " |")
    bounds = " | ".join(f"< {r.idle_bound_w():.1f}" for r in refs)
    print(f"| active idle (whole node after the supply) | {idle:.1f} | {bounds} |" + " |" * len(heads))
    print("\nLines through the 10-40 % rises:\n")
    lines = [("model", lambda p: sum(m["steps"][p]) - idle)] + [(r.label, r.rise_w) for r in judged]
    for label, rise in lines:
        at0, per10 = low_load_line(rise)
        print(f"- {label}: {at0:.1f} W at 0 % + {per10:.1f} W per 10 % of load")


def plot(models: dict[str, dict], path: str) -> None:
    """One panel per platform: modelled package + DRAM at active idle and every step; where a
    reference exists, its rise over idle put on the modelled idle, each judged one with a ±20 % band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8), constrained_layout=True)
    xs = [0] + STEPS
    for ax, (name, m) in zip(axes.flat, models.items()):
        idle = sum(m["idle"])
        ys = [idle] + [sum(m["steps"][p]) for p in STEPS]
        ax.plot(xs, ys, "o-", color="black", label="model: package + DRAM")
        for r in REFERENCES.get(name, []):
            ref = [idle] + [idle + r.rise_w(p) for p in STEPS]
            style = "s--" if r.judged else "^:"
            (line,) = ax.plot(xs, ref, style, label=f"{r.label}")
            if r.judged:
                lo = [idle] + [idle + (1 - TOLERANCE) * r.rise_w(p) for p in STEPS]
                hi = [idle] + [idle + (1 + TOLERANCE) * r.rise_w(p) for p in STEPS]
                ax.fill_between(xs, lo, hi, alpha=0.12, color=line.get_color(), label=f"±20 % of {r.label.split(',')[0]}")
        if name in TDP_W:
            ax.axhline(TDP_W[name], color="grey", lw=0.8, ls="-.", label="package TDP (model's package W: +)")
            ax.plot(xs[1:], [m["steps"][p][0] for p in STEPS], "+", color="grey")
        if not any(r.judged for r in REFERENCES.get(name, [])):
            ax.text(0.97, 0.04, "no published per-step reference for this part", transform=ax.transAxes, fontsize=9, ha="right")
        ax.set_title(name)
        ax.set_xlabel("target load, % of calibrated maximum (0 = active idle)")
        ax.set_ylabel("W")
        ax.set_xticks(xs)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Stepped load (SPECpower_ssj2008 steps): references as rise over idle, wall x {PSU_EFFICIENCY}", fontsize=11)
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("platforms", nargs="*", default=PLATFORMS)
    ap.add_argument("--cpufreq", default=None, help="governor for every run (default: each platform's)")
    ap.add_argument("--plot", metavar="PNG", help="write the figure of docs/platforms.md here")
    args = ap.parse_args(argv)
    models = {}
    for name in args.platforms:
        m = model(name, args.cpufreq)
        models[name] = m
        print_model(name, m)
        print_comparison(name, m)
    if args.plot:
        plot(models, args.plot)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Which of the Xeon's power terms would make running faster cost more energy, in the model.

docs/validation.md §6, "Session 21 (branch `xeonpower`)"; docs/research/sources.md C.14. This is a
sensitivity study, not a calibration: each variant changes one power term of the platform file by a
round factor chosen to show the term's leverage on the energy ratio 4C / v5.2; none comes from a
measurement, and none is applied to the platform files. The published energy ratios printed at the end
are the source's own figures combined (docs/validation.md §6, session 18 (b)): package power ratio x time
ratio, the time ratio being the sum of the per-job-count elapsed times where the source gives them
(Broadwell-EP kernbench), else the score (gitsource: one run, its comparison ratio is the time ratio;
Haswell-EP kernbench: only the geometric mean over job counts, marked "score").

For each variant and workload, one `govlab run` (seed 1, the evaluation's governor, cpuidle and
kernels) under v5.2 and 4C; per run: elapsed time, package power of both packages, and its cores'
and uncores' parts; per pair: the power rise and the energy ratio 4C / v5.2.

    python3 tools/power/xeon_energy_sensitivity.py [--govlab .venv/bin/govlab] [--machine broadwell|haswell] \
        > tools/power/xeon_energy_sensitivity_MACHINE.out
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MACHINES = {"broadwell": "broadwell-2s-e5-2698v4", "haswell": "haswell-2s-e5-2670v3"}
PUBLISHED = Path("data/published/x86-freq-invariance.toml")
CONFIGS = {"v5.2": "5.2", "4C": "5.2:freq_invariance=4c"}
WORKLOADS = {
    "gitsource": ("gitsource:scripts=60", "600s"),
    "kernbench-8": ("kernbench:jobs=8", "2000s"),
    "kernbench-160": ("kernbench:jobs=160", "2000s"),
}


def opp_slope(text: str, factor: float) -> str:
    """Every OPP's voltage above the lowest moved `factor` times as far from the lowest's."""
    mvs = [int(m) for m in re.findall(r"\{ khz = \d+, mv = (\d+)", text)]
    low = min(mvs)
    return re.sub(r"(\{ khz = \d+, mv = )(\d+)", lambda m: f"{m.group(1)}{round(low + factor * (int(m.group(2)) - low))}", text)


def scale_key(text: str, section: str, key: str, factor: float) -> str:
    """`key` of the first `[section]` table multiplied by `factor`."""
    start = text.index(f"[{section}]")
    m = re.compile(rf"^{key} = ([0-9.]+)", re.M).search(text, start)
    assert m is not None
    return text[: m.start(1)] + repr(float(m.group(1)) * factor) + text[m.end(1):]


VARIANTS = {
    "file": lambda t: t,
    "V(f) slope x1.5": lambda t: opp_slope(t, 1.5),
    "leakage x3": lambda t: scale_key(t, "[cpu_type]", "leakage_mw_per_v", 3.0),
    "uncore ceff x5": lambda t: scale_key(t, "package.uncore", "ceff_nf", 5.0),
    "uncore_mw x0.5": lambda t: scale_key(t, "package", "uncore_mw", 0.5),
}


def run(govlab: str, path: str, config: str, workload: str) -> dict:
    spec, duration = WORKLOADS[workload]
    out = subprocess.run(
        [govlab, "run", "--platform", f"{path}:intel_pstate=passive", "--kernel", CONFIGS[config],
         "--cpufreq", "schedutil", "--cpuidle", "menu", "--workload", spec, "--duration", duration,
         "--seed", "1", "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout
    r = json.loads(out)
    secs = r["sim_time_s"]
    pkgs = r["packages"]
    return {
        "secs": secs,
        "pkg_j": sum(p["package_j"] for p in pkgs),
        "cores_j": sum(p["cores_j"] for p in pkgs),
        "uncore_j": sum(p["uncore_j"] for p in pkgs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--govlab", default=".venv/bin/govlab")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--machine", choices=sorted(MACHINES), default="broadwell")
    args = ap.parse_args()
    base = Path(f"data/platforms/{MACHINES[args.machine]}.toml").read_text()
    tmp = Path(tempfile.mkdtemp(prefix="xeon-sens-"))
    paths = {}
    for i, (name, edit) in enumerate(VARIANTS.items()):
        p = tmp / f"variant{i}.toml"
        p.write_text(edit(base))
        paths[name] = str(p)
    keys = [(v, w, c) for v in VARIANTS for w in WORKLOADS for c in CONFIGS]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        res = dict(zip(keys, ex.map(lambda k: run(args.govlab, paths[k[0]], k[2], k[1]), keys)))
    print("variant          workload        v5.2: s     W  cores W  unc W |   4C: s     W  cores W  unc W | rise W  perf  energy 4C/v5.2")
    for v in VARIANTS:
        for w in WORKLOADS:
            a, b = res[(v, w, "v5.2")], res[(v, w, "4C")]
            cells = []
            for r in (a, b):
                s = r["secs"]
                cells.append(f"{s:7.2f} {r['pkg_j'] / s:6.1f} {r['cores_j'] / s:7.1f} {r['uncore_j'] / s:5.1f}")
            rise = b["pkg_j"] / b["secs"] - a["pkg_j"] / a["secs"]
            print(f"{v:<16} {w:<14} {cells[0]} | {cells[1]} | {rise:+6.1f} {a['secs'] / b['secs']:5.2f}  {b['pkg_j'] / a['pkg_j']:6.3f}")
    print()
    print(f"published, {args.machine}, v5.2 -> 4C: package W, time ratio (from), energy 4C/v5.2")
    for bench in ("kernbench", "gitsource"):
        p0, p1, t0, t1, score = published(args.machine, bench)
        how = "per-count elapsed" if t0 else "score"
        ratio = t1 / t0 if t0 else score
        print(f"{bench:<10} {p0:6.1f} -> {p1:6.1f}  {ratio:5.3f} ({how})  {p1 / p0 * ratio:5.3f}")


def published(machine: str, bench: str) -> tuple[float, float, float, float, float]:
    """The source's 4C figures for `bench`: package W before and after, summed per-count elapsed times
    (0 where it gives none) and the score's comparison ratio."""
    figs = [f for f in tomllib.loads(PUBLISHED.read_text())["figure"]
            if f["benchmark"] == f"{machine}/{bench}" and f["config"] == "4C"]
    power = next(f for f in figs if f["metric"] == "pkg_power_w")
    score = next(f for f in figs if f["metric"] == "score")
    times = [f for f in figs if f["metric"] == "elapsed_s"]
    return (power["baseline_value"], power["value"], sum(f["baseline_value"] for f in times),
            sum(f["value"] for f in times), score["value"] / score["baseline_value"])


if __name__ == "__main__":
    main()

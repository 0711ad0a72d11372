"""The Xeons' uncore power against the uncore clock, from a measured sweep on a Haswell-EP.

The Cuttlefish SC'21 artifact (data/cuttlefish_e5-2650v3_uncore.tsv, its source in the file's header)
ran two compute-bound OpenMP codes on 2 x Xeon E5-2650 v3, 20 threads, one per core, the cores at a
fixed clock and the uncore fixed at 1.2, 2.1 or 3.0 GHz on both sockets, and logged RAPL package energy
summed over both packages. uts (a tree search) and sorIR retire the same instructions at the same rate at
every uncore clock, so the difference in package power between the uncore clocks is the uncore's own (its
clock, its voltage and what they drag along). Half of each difference is one package's.

The model's uncore draws `ceff_nf` * V(f)^2 * f (platform::Uncore::power_mw, V linear between the
file's min_mv at min_khz and max_mv at max_khz) beside the clock-independent `uncore_mw`. With a file's
assumed voltages, the least-squares `ceff_nf` for the measured rises over 1.2 GHz is printed, with what
the model then gives at the measured points and, as a check of the whole package, the sweep's absolute
power against the model's at the cores' clock.

    .venv/bin/python tools/power/uncore_sweep.py [PLATFORM.toml ...] [--no-check]

(default: the Haswell-EP's file). Output kept in uncore_sweep.out. Then, as a check of the whole
package, govlab's Haswell-EP with 20 busy tasks at the sweep's 2.3 GHz (its uncore follows the cores under
UFS, so 2.3 GHz) beside the sweep at that uncore clock: interpolated between 2.1 and 3.0 GHz, and the
artifact's runs with the firmware's own UFS (its `policy` session, ten runs each: uts 136.7-138.7 W,
sorIR 125.6-126.2 W, read from the same repository's logs/policy/OpenMP/*.C23.U30.log).
"""

from __future__ import annotations

import csv
import sys
import tomllib
from pathlib import Path

import govlab

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "cuttlefish_e5-2650v3_uncore.tsv"
DEFAULT = HERE.parent.parent / "data" / "platforms" / "haswell-2s-e5-2670v3.toml"
PACKAGES = 2


def runs() -> list[dict[str, float | str]]:
    with DATA.open(newline="\n") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        out = []
        for r in rows:
            secs = float(r["TIME"]) / 1000.0
            out.append(
                {
                    "bench": r["bench"],
                    "core": float(r["core_ghz"]),
                    "uncore": float(r["uncore_ghz"]),
                    "watts": float(r["PWR_PKG_ENERGY"]) / secs,
                    "ginst_s": float(r["INST_RETIRED"]) / secs / 1e9,
                }
            )
        return out


def uncore_w(unc: dict, ghz: float, ceff: float) -> float:
    lo, hi = unc["min_khz"] / 1e6, unc["max_khz"] / 1e6
    x = min(max((ghz - lo) / (hi - lo), 0.0), 1.0)
    v = (unc["min_mv"] + x * (unc["max_mv"] - unc["min_mv"])) / 1000.0
    return ceff * v * v * ghz


def main() -> None:
    files = [Path(a) for a in sys.argv[1:] if not a.startswith("--")] or [DEFAULT]
    measured = runs()
    print("measured (both packages), cores fixed, uncore fixed on both sockets:")
    print("| code | core GHz | uncore GHz | package W | G instructions/s |")
    print("|---|---:|---:|---:|---:|")
    for r in measured:
        print(f"| {r['bench']} | {r['core']} | {r['uncore']} | {r['watts']:.1f} | {r['ginst_s']:.1f} |")
    rises = []  # (uncore GHz, W per package over 1.2 GHz), both codes
    for bench in ("uts", "sorIR"):
        at = {r["uncore"]: r["watts"] for r in measured if r["bench"] == bench and r["core"] == 2.3}
        for ghz in (2.1, 3.0):
            rises.append((ghz, (at[ghz] - at[1.2]) / PACKAGES))
    print("\nper package, over the uncore at 1.2 GHz (cores at 2.3 GHz): "
          + ", ".join(f"+{w:.2f} W at {g} GHz" for g, w in rises))
    for path in files:
        plat = tomllib.loads(path.read_text())
        unc = plat["package"]["uncore"]
        # Least squares of rise = ceff * (g(f) - g(1.2)), g(f) = V(f)^2 f, over both codes' rises.
        basis = [(uncore_w(unc, g, 1.0) - uncore_w(unc, 1.2, 1.0), w) for g, w in rises]
        ceff = sum(b * w for b, w in basis) / sum(b * b for b, _ in basis)
        print(f"\n{plat['name']}: uncore {unc['min_mv']}-{unc['max_mv']} mV over "
              f"{unc['min_khz'] / 1e6}-{unc['max_khz'] / 1e6} GHz (the file's voltages), "
              f"least-squares ceff_nf = {ceff:.2f} (the file has {unc['ceff_nf']})")
        for g, w in rises:
            model = uncore_w(unc, g, ceff) - uncore_w(unc, 1.2, ceff)
            print(f"  rise at {g} GHz: measured {w:.2f} W, model {model:.2f} W")
        print("  uncore clock power at: " + ", ".join(
            f"{g} GHz {uncore_w(unc, g, ceff):.1f} W" for g in (1.2, 2.0, 2.3, 2.7, 3.0)
            if g <= unc["max_khz"] / 1e6 + 1e-9))
    if "--no-check" not in sys.argv:
        check()


def check() -> None:
    at = {r["uncore"]: r["watts"] for r in runs() if r["bench"] == "uts" and r["core"] == 2.3}
    interp = at[2.1] + (2.3 - 2.1) / (3.0 - 2.1) * (at[3.0] - at[2.1])
    args = {
        "platform": "haswell-2s-e5-2670v3:intel_pstate=passive",
        "kernel": "5.2",
        "workload": "cpu-bound:tasks=20",
        "cpufreq": "userspace:scaling_setspeed=2300000",
        "duration": "3s",
    }
    row = govlab.run(**args).turbostat()[0]  # the summary row
    print(f"\ncheck: govlab.run({', '.join(f'{k}={v!r}' for k, v in args.items())})")
    print(f"  govlab: Busy% {row['Busy%']:.2f}, Bzy_MHz {row['Bzy_MHz']:.0f}, UncMHz {row['UncMHz']:.0f}, "
          f"PkgWatt {row['PkgWatt']:.2f} (both packages)")
    print(f"  measured uts at uncore 2.3 GHz, interpolated: {interp:.1f} W; under the firmware's UFS: 136.7-138.7 W")


if __name__ == "__main__":
    main()

"""POWER9 chip power against busy cores: the model beside the chip's own OCC readings.

The reference is the data published with Tröpgen, Bielert and Ilsche's
evaluation of the POWER9 On-Chip Controller (ICPE 2023): on a 2 x 22-core
SMT4 node, roco2 runs its busy_wait kernel on 1, 2, ... cores (4 threads
each, 60 s per step), filling socket 0 first, and the OCC reports each
socket's processor power (docs/research/sources.md C.3). The model runs
the same shape on `power9` (2 x 20 cores): k cores of chip 0 spinning on
all four threads, the other chip idle, under the platform's default
governors, and reports chip 0's `package_j` (the OCC's processor sensor).

    .venv/bin/python tools/power/power9_cores.py [--plot PNG]

prints the Markdown table of docs/platforms.md; --plot (needs matplotlib)
draws it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import govlab

PLATFORM = "power9"
THREADS_PER_CORE = 4
DURATION = "1s"

# Busy cores on the socket -> its processor power, W (the TSV's
# occ_power_proc.0, power_from_energy, busy_wait rows; 0 is the other,
# unloaded socket while one core runs). Repository tud-zih-energy/2022-power9-occ,
# psu_comparison/data/it01_run03.tsv, commit 331b4967ee45.
MEASURED_22_CORE_W = {0: 72.3, 1: 92.9, 2: 110.0, 4: 139.9, 8: 195.8, 11: 237.4, 15: 257.5, 22: 259.4}


def chip0_watts(cores: int) -> float:
    """Chip 0's power with `cores` of its cores spinning on every thread, W."""
    if cores == 0:
        workload = "idle"
    else:
        text = "".join(
            f'[[task]]\ncomm = "spin{cpu}"\ncpus = [{cpu}]\nops = [ {{ run = "10s" }} ]\n'
            for cpu in range(cores * THREADS_PER_CORE)
        )
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(text)
        workload = f.name
    try:
        r = govlab.run(platform=PLATFORM, workload=workload, duration=DURATION).to_dict()
    finally:
        if cores:
            Path(workload).unlink()
    return r["packages"][0]["package_j"] / r["sim_time_s"]


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", metavar="PNG", help="write the figure of docs/platforms.md here")
    args = ap.parse_args(argv)
    nr_cores = len(govlab.run(platform=PLATFORM, workload="idle", duration="1ms").to_dict()["cpus"]) // THREADS_PER_CORE // 2
    steps = [k for k in MEASURED_22_CORE_W if k < 22] + [nr_cores]
    model = {k: chip0_watts(k) for k in steps}
    print(f"| busy cores on the chip | {' | '.join(str(k) for k in steps[:-1])} | all (22 measured, {nr_cores} modelled) |")
    print("|---|" + "---:|" * len(steps))
    print("| measured, 22-core chip, processor W | " + " | ".join(f"{MEASURED_22_CORE_W[k]:.1f}" for k in steps[:-1]) + f" | {MEASURED_22_CORE_W[22]:.1f} |")
    print(f"| model, {nr_cores}-core chip, W | " + " | ".join(f"{model[k]:.1f}" for k in steps) + " |")
    diffs = [model[k] / MEASURED_22_CORE_W[k] - 1 for k in steps[:-1]] + [model[nr_cores] / MEASURED_22_CORE_W[22] - 1]
    print("| difference | " + " | ".join(f"{100 * d:+.0f} %" for d in diffs) + " |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 4.2), constrained_layout=True)
        ax.plot(list(MEASURED_22_CORE_W), list(MEASURED_22_CORE_W.values()), "s--", label="measured: 22-core POWER9, OCC processor sensor")
        ax.plot(steps, [model[k] for k in steps], "o-", color="black", label=f"model: power9 ({nr_cores}-core chip), default governors")
        ax.set_xlabel("busy cores on the chip (4 threads each; 0 = unloaded)")
        ax.set_ylabel("chip power, W")
        ax.set_title("POWER9 chip power against busy cores (busy_wait)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])

"""POWER9 chip power against busy cores: the model beside the chip's own OCC readings.

The reference is the data published with Tröpgen, Bielert and Ilsche's
evaluation of the POWER9 On-Chip Controller (ICPE 2023), transcribed in
tools/power/data/power9_occ_it01_run03.tsv: on a 2 x 22-core SMT4 node
(2.8 GHz, 3.1 GHz boost), roco2 runs its busy_wait kernel on 1, 2, ... 44
cores (4 threads each, 60 s per step), filling socket 0 first, and the OCC
reports each socket's processor power (docs/research/sources.md C.3). The
curve used is the socket filled second (cores 23-44): its unloaded reading
is the one `uncore_mw` comes from, and socket 0 reads about 10 W more at
every load (it is never seen unloaded).

The model runs the same shape on `power9` (2 x 20 cores): n cores of chip 0
spinning on all four threads, the other chip idle, and reports chip 0's
`package_j` (the OCC's processor sensor), at the measured part's 3.1 GHz
(`userspace`) and under the platform's default governors (up to 3.8 GHz).

    .venv/bin/python tools/power/power9_cores.py [--plot PNG]

prints the Markdown table of docs/platforms.md; --plot (needs matplotlib)
draws it.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import govlab

PLATFORM = "power9"
THREADS_PER_CORE = 4
DURATION = "1s"
MEASURED_CLOCK = "userspace:scaling_setspeed=3100000"
DATA = Path(__file__).parent / "data" / "power9_occ_it01_run03.tsv"
STEPS = [0, 1, 2, 4, 8, 11, 15, 20]


def measured_w() -> dict[int, float]:
    """Busy cores on the socket loaded second -> its processor power, W (busy_wait rows 22-44)."""
    with DATA.open() as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["kernel_inferred"] == "busy_wait"]
    return {int(r["busy_cores_inferred"]) - 22: float(r["proc.1"]) for r in rows if int(r["busy_cores_inferred"]) >= 22}


def chip0_watts(cores: int, cpufreq: str | None) -> float:
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
        r = govlab.run(platform=PLATFORM, workload=workload, duration=DURATION, cpufreq=cpufreq).to_dict()
    finally:
        if cores:
            Path(workload).unlink()
    return r["packages"][0]["package_j"] / r["sim_time_s"]


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", metavar="PNG", help="write the figure of docs/platforms.md here")
    args = ap.parse_args(argv)
    measured = measured_w()
    at_clock = {k: chip0_watts(k, MEASURED_CLOCK) for k in STEPS}
    default = {k: chip0_watts(k, None) for k in STEPS}
    print(f"| busy cores on the chip | {' | '.join(str(k) for k in STEPS)} | 22 |")
    print("|---|" + "---:|" * (len(STEPS) + 1))
    print("| measured, 22-core chip, processor W | " + " | ".join(f"{measured[k]:.1f}" for k in STEPS) + f" | {measured[22]:.1f} |")
    for label, model in (("model at 3.1 GHz", at_clock), ("model, default governors", default)):
        print(f"| {label}, W | " + " | ".join(f"{model[k]:.1f}" for k in STEPS) + " | |")
        print("| difference | " + " | ".join(f"{100 * (model[k] / measured[k] - 1):+.0f} %" for k in STEPS) + " | |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 4.2), constrained_layout=True)
        ax.plot(list(measured), list(measured.values()), "s--", label="measured: 22-core POWER9, OCC processor sensor (busy_wait)")
        ax.plot(STEPS, [at_clock[k] for k in STEPS], "o-", color="black", label="model: power9 (20 cores) at 3.1 GHz")
        ax.plot(STEPS, [default[k] for k in STEPS], "^:", color="grey", label="model: default governors (to 3.8 GHz)")
        ax.set_xlabel("busy cores on the chip (4 threads each; 0 = unloaded)")
        ax.set_ylabel("chip power, W")
        ax.set_title("POWER9 chip power against busy cores")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])

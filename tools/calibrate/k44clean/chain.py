#!/usr/bin/env python3
"""The logged `make clean` as one chain of processes for workload/kernbench.rs (`clean_chain.txt`).

    python3 tools/calibrate/k44clean/chain.py clean.proclog.xz clock.txt > clean_chain.txt

One line per process image in the order they started: `clean COMM OWN_NS 0`, each image's own CPU time
(summarize.py's `own`: from its fork or exec to its exit or next exec) taken as cycles at this sitting's core
clock (the fastest `clock_ghz` of clock.txt) and written as ns at the calibration clock
(workload::CALIBRATION_CORE_KHZ, 3.244 GHz), as kernbench.rs reads every measured time. The last field is
kernbench.rs's `grows` flag: 0, the clean's work is not scaled with the object count.
"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "kbuild"))
import summarize  # noqa: E402

CALIBRATION_GHZ = 3.244


def main():
    log, clock = sys.argv[1], sys.argv[2]
    ghz = max(float(g) for g in re.findall(r"clock_ghz ([0-9.]+)", Path(clock).read_text()))
    ims = sorted(summarize.load(log), key=lambda im: (im["t0"], im["t1"]))
    scale = ghz / CALIBRATION_GHZ
    total = sum(im["own"] for im in ims)
    print(f"# {log}: {len(ims)} images, {total / 1e9:.3f} s of CPU at {ghz} GHz; ns below at {CALIBRATION_GHZ} GHz")
    print("# phase comm own_ns grows")
    for im in ims:
        print(f"clean {im['comm']} {im['own'] * scale:.0f} 0")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The constants of workload/fs.rs and workload/dbench.rs (`TINY_*`) from one sitting of run.sh.

    python3 tools/calibrate/cycleclock/costs.py DIR...     # e.g. run1 run2 (this directory's)

fs.rs's figures as session 20 took them from tools/calibrate/fs_fsync (means over the runs): the caller's CPU
per journalled write+fsync less the buffered write of its page, the same on the journal-less root file system
(an fdatasync that needs no commit), jbd2's CPU per fsync over its commits per fsync. Then dbench's op_costs.py
over the runs' xfs-output.txt with those caller costs. Last, the core clock: the fastest dependent-add chain
of every kpath sample in the sitting (clock.txt and clock-during.txt), and cycles at it."""
import os
import re
import subprocess
import sys


def fsync_figures(path):
    """{section: {key: value}} of one fs_fsync output (sections: 'loop', 'root')."""
    out, cur = {}, None
    for line in open(path):
        if line.startswith("# loop-ext4 results"):
            cur = out.setdefault("loop", {})
        elif line.startswith("# root-fs results"):
            cur = out.setdefault("root", {})
        elif cur is not None and (m := re.match(r"(\w+) ([\d.]+) ", line)):
            cur[m[1]] = float(m[2])
    return out


def mean(xs):
    return sum(xs) / len(xs)


def main(dirs):
    f = [fsync_figures(os.path.join(d, "fs_fsync-output.txt")) for d in dirs]
    caller = mean([r["loop"]["caller_cpu_per_fsync"] for r in f]) - mean([r["loop"]["buffered_cpu_per_page"] for r in f])
    fdatasync = mean([r["root"]["caller_cpu_per_fsync"] for r in f]) - mean([r["root"]["buffered_cpu_per_page"] for r in f])
    commit = mean([r["loop"]["jbd2_cpu_per_fsync"] / r["loop"]["jbd2_commits_per_fsync"] for r in f])
    for d, r in zip(dirs, f):
        print(f"{d}: loop caller {r['loop']['caller_cpu_per_fsync']} page {r['loop']['buffered_cpu_per_page']}"
              f" jbd2 {r['loop']['jbd2_cpu_per_fsync']} / {r['loop']['jbd2_commits_per_fsync']} commits;"
              f" root caller {r['root']['caller_cpu_per_fsync']} page {r['root']['buffered_cpu_per_page']} (us)")
    print(f"FSYNC_CALLER {caller:.1f} us, FDATASYNC_CALLER {fdatasync:.1f} us, JBD2_COMMIT {commit:.1f} us")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "..", "dbench", "op_costs.py"), "--flush-caller-us",
                    f"{caller:.1f},{fdatasync:.1f}"] + [os.path.join(d, "xfs-output.txt") for d in dirs], check=True)
    ghz, med = [], []
    for d in dirs:
        for name in ("clock.txt", "clock-during.txt"):
            for line in open(os.path.join(d, name)):
                if m := re.match(r"cpu \d clock_ghz ([\d.]+) median ([\d.]+)", line):
                    ghz.append(float(m[1]))
                    med.append(float(m[2]))
    print(f"core clock: fastest batch {min(ghz):.3f}-{max(ghz):.3f} GHz over {len(ghz)} samples,"
          f" medians {min(med):.3f}-{max(med):.3f} GHz")
    print(f"kcycles at {max(ghz):.3f} GHz: fsync caller {caller * max(ghz):.0f}, fdatasync {fdatasync * max(ghz):.0f},"
          f" jbd2 commit {commit * max(ghz):.0f}")


main(sys.argv[1:] or ["run1", "run2"])

#!/usr/bin/env python3
"""git v2.15.1's `make test`, logged by run.sh, as the figures workload/gitsource.rs reads (`commands.txt`).

    python3 tools/calibrate/gitsuite/summarize.py test.proclog.xz clock.txt overhead.txt > commands.txt

A test script is a `bash tNNNN-*.sh` that t/Makefile's make runs; its commands are every process instance (a fork
and the images it exec'd) below it, nested ones included (a subshell, the git it runs, the git that git runs), each
with its own CPU summed over its images (../kbuild/summarize.py's `own`: from its fork or exec to its exit). The
script's own bash is its shell. Everything else (the top make's checks of the built tree, t/Makefile's make, its
pre-clean, test-lint and aggregate-results) is make's. Times are taken as cycles at this sitting's core clock (the
fastest `clock_ghz` of clock.txt) and written as ns at the calibration clock (workload::CALIBRATION_CORE_KHZ,
3.244 GHz), less proclog.so's own cost per image by how the image began (overhead.txt, measured at that clock too).

The commands' CPU is written as BINS bin means of its sorted values (each bin holds the same number of commands), so
the table keeps the total and the long tail that a fitted distribution would lose.
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "kbuild"))
import summarize  # noqa: E402

CALIBRATION_GHZ = 3.244
BINS = 1000
SCRIPT = re.compile(r"(^|[ /])t\d{4}-[^ /]*\.sh( |$)")


# An image whose process CPU clock read less than this when it started began at a fork (the clock starts at zero
# there; the log's fork images start at 25-65 us); one that began at an exec has paid its exec and dynamic linking
# (0.8-2.3 ms in the log).
FORK_START_NS = 300_000


def began_at_exec(im):
    return im["execd_from"] is not None or im["cpu0"] >= FORK_START_NS


def figures(ims, ghz, fork_ns, exec_ns):
    """The suite's figures from summarize.load()'s images: each process instance's own CPU, less proclog.so's own
    cost per image (fork_ns for an image that began at a fork, exec_ns for one that began at an exec), as ns at
    CALIBRATION_GHZ, split into the scripts' commands, their shells and make's."""
    parent = summarize.parent_of(ims)
    own = defaultdict(int)
    first = {}
    for im in ims:
        own[im["inst"]] += im["own"] - (exec_ns if began_at_exec(im) else fork_ns)
        first.setdefault(im["inst"], im)
    # A script's shell: bash running tNNNN-*.sh (its subshells carry the same argv) with no such bash above it
    # (t0000-basic.sh's sub-tests run scripts of their own, which are its commands). t/Makefile runs 790.
    in_script = {}

    def script_of(i):
        """The outermost script shell at or above process instance i, or None."""
        if i in in_script:
            return in_script[i]
        up = parent.get(i)
        above = script_of(up) if up is not None else None
        im = first[i]
        mine = i if im["comm"] == "bash" and SCRIPT.search(im["args"]) else None
        in_script[i] = above if above is not None else mine
        return in_script[i]

    for i in sorted(first, key=lambda i: first[i]["t0"]):
        script_of(i)
    # A script's background process whose parent had exited before it was logged has no parent in the log (it
    # was reparented to init): it belongs to the script of its name that make ran.
    by_name = {first[r]["args"]: r for r in set(in_script.values()) if r is not None and parent.get(r) is not None}
    for i, r in in_script.items():
        if r is not None and parent.get(r) is None:
            in_script[i] = by_name.get(first[r]["args"])
    scripts = {r for r in in_script.values() if r is not None}
    scale = ghz / CALIBRATION_GHZ

    def cost(i):
        return max(0.0, own[i]) * scale

    commands = sorted(cost(i) for i in first if in_script[i] is not None and i not in scripts)
    per_script = defaultdict(int)
    for i in first:
        if in_script[i] is not None and i not in scripts:
            per_script[in_script[i]] += 1
    outside = [i for i in first if in_script[i] is None]
    return dict(
        scripts=len(scripts),
        commands=commands,
        shell=sum(cost(i) for i in scripts),
        make=sum(cost(i) for i in outside),
        n_make=len(outside),
        per_script=sorted(per_script.get(r, 0) for r in scripts),
        processes=len(first),
        cpu=sum(im["own"] for im in ims),
        wall=max(im["t1"] for im in ims) - min(im["t0"] for im in ims),
    )


def main():
    log, clock, overhead = sys.argv[1], sys.argv[2], sys.argv[3]
    ghz = max(float(g) for g in re.findall(r"clock_ghz ([0-9.]+)", Path(clock).read_text()))
    # proclog.so's cost per image, ns at the sitting's clock (overhead.txt's medians).
    text = Path(overhead).read_text()
    fork_ns, exec_ns = (float(re.findall(rf"{k}_image_ns ([0-9.]+)", text)[-1]) for k in ("fork", "exec"))
    ims = summarize.load(log)
    f = figures(ims, ghz, fork_ns, exec_ns)
    commands, scripts, counts = f["commands"], f["scripts"], f["per_script"]
    cpu, wall = f["cpu"] / 1e9, f["wall"] / 1e9
    total = sum(commands)
    print(f"# {log}: {len(ims)} images, {f['processes']} processes, {cpu:.3f} s of CPU at {ghz} GHz in {wall:.3f} s wall")
    print(f"# ({cpu / wall * 100:.1f} % of one CPU); proclog.so's {fork_ns:.0f} / {exec_ns:.0f} ns an image begun at "
          f"a fork / an exec taken out; ns below at {CALIBRATION_GHZ} GHz")
    zero = sum(1 for c in f["commands"] if c == 0)
    print(f"# commands left with no CPU after that: {zero} of {len(f['commands'])}")
    print(f"# commands per script: median {counts[len(counts) // 2]}, max {counts[-1]}, min {counts[0]}")
    print(f"# make's processes outside the scripts: {f['n_make']}, {f['make'] / 1e9:.3f} s")
    print(f"# commands' CPU: total {total / 1e9:.3f} s, mean {total / len(commands) / 1e3:.1f} us, "
          f"median {commands[len(commands) // 2] / 1e3:.1f} us, max {commands[-1] / 1e6:.2f} ms")
    for ms in (5, 20, 50, 100):
        long = [c for c in commands if c > ms * 1e6]
        print(f"# commands over {ms} ms: {len(long)}, {sum(long) / total * 100:.1f} % of their CPU")
    print(f"# the scripts' shells: {f['shell'] / 1e9:.3f} s")
    print(f"scripts {scripts}")
    print(f"commands_per_script {len(commands) / scripts:.2f}")
    print(f"shell_per_command_ns {f['shell'] / len(commands):.0f}")
    print(f"make_per_script_ns {f['make'] / scripts:.0f}")
    print(f"# {BINS} bin means of the commands' own CPU, ascending, ns")
    n = len(commands)
    for b in range(BINS):
        lo, hi = b * n // BINS, max((b + 1) * n // BINS, b * n // BINS + 1)
        part = commands[min(lo, n - 1):min(hi, n)]
        print(f"q {sum(part) / len(part):.0f}")


if __name__ == "__main__":
    main()

"""The constants the kcycles sitting gives the workload models (issue 35, session 25).

Run: python3 tools/calibrate/kcycles/costs.py [DIR]   (DIR: the sitting's outputs, default this directory;
needs DIR/kbuild-summary.json, written by ../kbuild/summarize.py DIR/build.proclog.xz --json ...)

Each figure is a CPU time in ns on the sitting's machine; the models turn it into cycles at the sitting's core
clock (the fastest batch of kpath.c's add chain in clock.txt/clock-during.txt), workload::CALIBRATION_CORE_KHZ.
- process.rs: spawn.c's best round, the fastest of both runs.
- hackbench.rs: syscall_cost.c's figures, the fastest of both runs.
- tbench.rs: loopback.c's send+recv, the fastest of both runs, mean of 100 B and 4 KiB; split as before
  (sender 3.5/5.5 of it, assumed).
- netperf.rs UDP: least-squares line through both runs' udp.out, every size (udp/fit.py's method).
- gitsource.rs GIT_WORK: perf stat's mean task-clock per exec over both runs' eight scripts, less spawn_git.
- kernbench.rs: the kernel build's per-object roles (summarize.py), mv from the preparation, objtool's shell
  as the compile phase's shells that are not a recipe's; serial_chains.txt is summarize.py --chains.
"""
import json
import re
import statistics as st
import sys
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
runs = [d / "run1", d / "run2"]


def each(name, pat):
    return [[float(x) for x in m] if isinstance(m, tuple) else float(m)
            for r in runs for m in re.findall(pat, (r / name).read_text())]


clocks = [float(g) for f in ("clock.txt", "clock-during.txt")
          for g in re.findall(r"clock_ghz ([\d.]+)", (d / f).read_text())]
print(f"clock: fastest batch {max(clocks):.3f} GHz, slowest sample's fastest {min(clocks):.3f}, {len(clocks)} samples")

spawn = {k: min(each("spawn.out", rf"{k}\s+best\s+(\d+) ns")) for k in ("fork_exit", "fork_exec", "spawn_sh", "spawn_git")}
for k, v in spawn.items():
    print(f"process {k:10s} {v:9.0f} ns")

sc = {k: min(each("syscall_cost.out", pat)) for k, pat in [
    ("pipe_write", r"pipe: write (\d+)"), ("pipe_read", r"pipe: write \d+ ns, read (\d+)"),
    ("socket_write", r"socket: write (\d+)"), ("socket_read", r"socket: write \d+ ns, read (\d+)")]}
for k, v in sc.items():
    print(f"hackbench {k:12s} {v:6.0f} ns")

lb = st.mean(min(each("loopback.out", rf"cost\s+{s} B:\s+(\d+) ns")) for s in (100, 4096))
print(f"tbench send+recv {lb:.0f} ns: send {lb * 3.5 / 5.5:.0f}, recv {lb * 2 / 5.5:.0f}")

rows = each("udp.out", r"size\s+(\d+) B: send\s+(\d+) ns, recv\s+(\d+) ns, send dropped\s+(\d+)")
xs = [r[0] for r in rows]
for i, name in [(1, "send"), (2, "recv"), (3, "send dropped")]:
    ys = [r[i] for r in rows]
    mx, my = st.mean(xs), st.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"udp {name:13s} {my - b * mx:7.0f} ns + {b:.4f} ns/B")

tc = each("perf_stat.out", r"([\d.]+) msec task-clock")
ex = each("perf_stat.out", r"(\d+)\s+sched:sched_process_exec")
per = st.mean(tc) / st.mean(ex) * 1e6
print(f"gitsource task-clock {min(tc):.1f}-{max(tc):.1f} ms over {len(tc)} scripts, {st.mean(ex):.0f} execs: "
      f"{per:.0f} ns a process, GIT_WORK {per - spawn['spawn_git']:.0f} ns")

k = json.loads((d / "kbuild-summary.json").read_text())
roles = k["objects"]["roles"]
for r in ("cc1", "as", "gcc", "sh", "fixdep", "rm", "objtool"):
    print(f"kbuild {r:8s} mean {roles[r]['mean_ms']:8.2f} ms cv {roles[r]['cv']:.2f} (n {roles[r]['n']})")
mv = k["phases"]["prepare"]["by_comm"]["mv"]
print(f"kbuild mv       mean {mv['mean_ms']:8.2f} ms (preparation, n {mv['n']})")
sh = k["phases"]["compile"]["by_comm"]["sh"]
rs = roles["sh"]
other = (sh["sum_ms"] - rs["mean_ms"] * rs["n"]) / (sh["n"] - rs["n"])
print(f"kbuild objtool_sh mean {other:6.2f} ms (compile-phase shells not a recipe's: {sh['n'] - rs['n']})")
print(f"kbuild objects {k['objects']['count']}, images {k['images']}, wall {k['wall_s']:.1f} s, "
      + ", ".join(f"{p} CPU {v['cpu_s']:.2f} s" for p, v in k["phases"].items()))

"""A kernbench run split into its serial and compile phases, and the frequency a new task starts at.

docs/validation.md §6, session 16 (branch `kbench`). Two inputs, both from `govlab run`:

- the JSON of a run with `--format json --turbostat-interval T`: an interval counts as serial
  when at most 1.05 CPUs are busy in it (make's preparation and link), the rest as the compile
  phase; per phase it prints the time, the busy CPUs, their clock (Bzy_MHz weighted by busy
  CPUs) and the package power;
- the text of a run with `--trace FILE`: for each gcc, cc1 and as started (sched_wakeup_new),
  whether it starts on its parent's CPU, the request (cpu_frequency) its CPU had when it
  started, and how long until that CPU's request reaches CEILING kHz (2.7 GHz: the
  Broadwell-EP's all-core turbo bin).

    python3 tools/kernbench_phases.py run.json [run2.json ...]
    python3 tools/kernbench_phases.py --trace trace.txt [--from 1.9 --to 3.9 --ceiling 2700000]
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import statistics
from collections import defaultdict

SERIAL_BUSY_CPUS = 1.05
EVENT = re.compile(r"^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+):\s+(.*)")


def phases(path: str) -> str:
    run = json.load(open(path))
    acc = {"serial": [0.0, 0.0, 0.0, 0.0], "compile": [0.0, 0.0, 0.0, 0.0]}  # s, busy·s, MHz·busy·s, J
    for interval in run["turbostat_intervals"]:
        dt = interval["end_s"] - interval["start_s"]
        summary, cpus = interval["rows"][0], interval["rows"][1:]
        busy = sum(c["Busy%"] for c in cpus) / 100
        a = acc["serial" if busy <= SERIAL_BUSY_CPUS else "compile"]
        a[0] += dt
        a[1] += busy * dt
        a[2] += summary["Bzy_MHz"] * busy * dt
        a[3] += summary["PkgWatt"] * dt
    elapsed = run["sim_time_s"]
    out = [f"{path}: elapsed {elapsed:.2f} s, package {run['package_j'] / elapsed:.1f} W"]
    for name, (secs, busy_s, mhz, joules) in acc.items():
        if secs > 0:
            out.append(
                f"  {name:8} {secs:7.2f} s  busy CPUs {busy_s / secs:5.1f}  "
                f"clock {mhz / busy_s if busy_s else 0:6.0f} MHz  package {joules / secs:6.1f} W"
            )
    return "\n".join(out)


def starts(path: str, t_from: float, t_to: float, ceiling_khz: int) -> str:
    events = []
    for line in open(path):
        m = EVENT.search(line)
        if m:
            events.append((float(m.group(4)), int(m.group(3)), m.group(5), m.group(6)))
    requests: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for t, _, name, args in events:
        if name == "cpu_frequency":
            kv = dict(x.split("=") for x in args.split())
            requests[int(kv["cpu_id"])].append((t, int(kv["state"])))
    found: dict[str, list[tuple[bool, int, float]]] = defaultdict(list)
    for t0, parent_cpu, name, args in events:
        if name != "sched_wakeup_new" or not t_from <= t0 <= t_to:
            continue
        comm = args.split("comm=")[1].split()[0]
        cpu = int(args.split("target_cpu=")[1])
        if comm not in ("gcc", "cc1", "as"):
            continue
        seq = requests[cpu]
        i = bisect.bisect_right([t for t, _ in seq], t0) - 1
        at_start = seq[i][1] if i >= 0 else 0
        if at_start >= ceiling_khz:
            wait = 0.0
        else:
            wait = next(((t - t0) * 1e3 for t, khz in seq[max(i, 0):] if t >= t0 and khz >= ceiling_khz), float("inf"))
        found[comm].append((cpu == parent_cpu, at_start, wait))
    out = []
    for comm, rows in found.items():
        waits = [w for _, _, w in rows]
        never = sum(1 for w in waits if w == float("inf"))
        out.append(
            f"{comm}: {len(rows)} started, {sum(1 for s, _, _ in rows if s)} on the parent's CPU; "
            f"request at start median {statistics.median(k for _, k, _ in rows) / 1000:.0f} MHz; "
            f"to >= {ceiling_khz / 1000:.0f} MHz median {statistics.median(waits):.0f} ms "
            f"({never} never before the trace ends)"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--trace", action="store_true", help="the files are ftrace text from govlab run --trace")
    ap.add_argument("--from", dest="t_from", type=float, default=0.0, help="first start counted, s")
    ap.add_argument("--to", dest="t_to", type=float, default=float("inf"), help="last start counted, s")
    ap.add_argument("--ceiling", type=int, default=2_700_000, help="kHz")
    args = ap.parse_args()
    for f in args.files:
        print(starts(f, args.t_from, args.t_to, args.ceiling) if args.trace else phases(f))


if __name__ == "__main__":
    main()

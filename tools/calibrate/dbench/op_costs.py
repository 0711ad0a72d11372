#!/usr/bin/env python3
"""CPU per client-tiny.txt operation class, from the XFS run in xfs-output.txt (workload/dbench.rs, `load=tiny`).

    tools/calibrate/dbench/op_costs.py [--flush-caller-us FSYNC,FDATASYNC] [XFS-OUTPUT...]

Default: tools/calibrate/dbench/xfs-output.txt with fs.rs's caller costs of session 20 (79,72 µs). With several
files (several runs of one sitting) the CPU per pass is the mean over all their client counts and the latencies
the mean of their one-client runs. Times are CPU time on the measuring machine: they become cycles at that
machine's core clock (tools/calibrate/cycleclock), not at the `cpu MHz` its header prints.

The run measured two things per client count: the dbench process's CPU (user + system, GNU time) and dbench's
mean latency per operation kind. The CPU is the quantity the model needs; the latencies only say how it splits
between the kinds. So: the CPU of one pass (3573 operations; passes = ReadX count / 962) less the 43 Flushes'
own caller CPU, which fs.rs models separately (34 fsyncs at FSYNC_CALLER_NS, 9 at FDATASYNC_CALLER_NS), is
shared among the other operations in proportion to their mean latencies at one client (the fewest CPU waits).
QUERY_FS_INFORMATION's latency is left out: on this Linux 6.18 statfs waits for XFS's background inode
inactivation (a v5.15 mechanism, not v5.2's), so it is given the mean of the other metadata kinds. The
classes are the model's: m (metadata kinds), c (Close), r (ReadX), w (WriteX); their counts are
client-tiny.txt's (the file's header line)."""
import re
import sys

COUNTS = {"ReadX": 962, "NTCreateX": 613, "QUERY_PATH_INFORMATION": 584, "Close": 450, "WriteX": 303,
          "FIND_FIRST": 215, "Unlink": 124, "QUERY_FS_INFORMATION": 102, "QUERY_FILE_INFORMATION": 97,
          "SET_FILE_INFORMATION": 50, "Rename": 26, "UnlockX": 2, "LockX": 2}
CLASS = {"ReadX": "r", "WriteX": "w", "Close": "c"}
FLUSH_CALLER_US = (79.0, 72.0)  # fs.rs FSYNC_CALLER_NS, FDATASYNC_CALLER_NS of session 20


def runs(path):
    out, cur = [], None
    for line in open(path):
        if m := re.match(r"## clients (\d+)", line):
            cur = {"clients": int(m[1]), "lat": {}}
            out.append(cur)
        elif cur is not None and (m := re.match(r"\s(\w+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$", line)):
            cur["lat"][m[1]] = (int(m[2]), float(m[3]))
        elif cur is not None and (m := re.match(r"dbench_cpu_s user ([\d.]+) system ([\d.]+)", line)):
            cur["cpu_s"] = float(m[1]) + float(m[2])
    return out


def main(paths, caller_us):
    flush_caller_ms = (34 * caller_us[0] + 9 * caller_us[1]) / 1000
    rs = [r for p in paths for r in runs(p)]
    per_pass = []
    for r in rs:
        passes = r["lat"]["ReadX"][0] / COUNTS["ReadX"]
        per_pass.append(1000 * r["cpu_s"] / passes)
        print(f"clients {r['clients']}: {passes:.1f} passes, {per_pass[-1]:.2f} ms of CPU a pass")
    cpu_ms = sum(per_pass) / len(per_pass) - flush_caller_ms
    ones = [r for r in rs if r["clients"] == 1]
    lat = {k: sum(r["lat"][k][1] for r in ones) * 1000 / len(ones) for k in ones[0]["lat"]}  # one client, µs
    meta = [k for k in COUNTS if k not in CLASS and k != "QUERY_FS_INFORMATION"]
    meta_mean = sum(COUNTS[k] * lat[k] for k in meta) / sum(COUNTS[k] for k in meta)
    lat["QUERY_FS_INFORMATION"] = meta_mean
    total_lat_ms = sum(COUNTS[k] * lat[k] for k in COUNTS) / 1000
    scale = cpu_ms / total_lat_ms
    print(f"CPU a pass, Flush callers excluded: {cpu_ms:.2f} ms; latencies sum {total_lat_ms:.2f} ms; scale {scale:.3f}")
    for cls in "mcrw":
        kinds = [k for k in COUNTS if CLASS.get(k, "m") == cls]
        n = sum(COUNTS[k] for k in kinds)
        us = scale * sum(COUNTS[k] * lat[k] for k in kinds) / n
        print(f"  {cls}: {n:5d} operations, {us:5.2f} us each")


args = sys.argv[1:]
caller = FLUSH_CALLER_US
if args and args[0] == "--flush-caller-us":
    caller = tuple(float(x) for x in args[1].split(","))
    args = args[2:]
main(args or ["tools/calibrate/dbench/xfs-output.txt"], caller)

#!/usr/bin/env python3
"""Per client count of xfs.sh's output: operations, passes of client-tiny.txt, a client's time
per pass (clients x 3573 operations / the rate), the dbench processes' CPU per operation and per
pass, and the share of the run the clients spent in Flush (count x mean latency / clients x time).

    tools/calibrate/dbench/summarise.py tools/calibrate/dbench/xfs-output.txt
"""
import re
import sys

OPS_PER_PASS = 3573

def main(path):
    print("clients  ops/s  pass_ms  cpu_us/op  cpu_ms/pass  flush_ms  flush_share  cpu_share")
    block = None
    for line in open(path):
        m = re.match(r"## clients (\d+), (\d+) s", line)
        if m:
            block = {"n": int(m[1]), "t": int(m[2]), "ops": 0}
            continue
        if block is None:
            continue
        m = re.match(r" (\w+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$", line)
        if m:
            block["ops"] += int(m[2])
            if m[1] == "Flush":
                block["flush"] = (int(m[2]), float(m[3]))
        m = re.match(r"dbench_cpu_s user ([\d.]+) system ([\d.]+) wall ([\d.]+)", line)
        if m:
            b = block
            cpu = float(m[1]) + float(m[2])
            rate = b["ops"] / b["t"]
            pass_ms = b["n"] * OPS_PER_PASS / rate * 1e3
            fl_n, fl_ms = b["flush"]
            print(f"{b['n']:7d} {rate:6.0f} {pass_ms:8.1f} {cpu / b['ops'] * 1e6:10.1f} "
                  f"{cpu / b['ops'] * OPS_PER_PASS * 1e3:12.1f} {fl_ms:9.2f} "
                  f"{fl_n * fl_ms / 1e3 / (b['n'] * b['t']):12.2f} {cpu / float(m[3]):10.2f}")
            block = None

main(sys.argv[1])

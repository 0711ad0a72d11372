#!/usr/bin/env python3
"""Per-CPU interrupt and softirq rates from measure.sh's two snapshots (10 s apart).
Usage: python3 rates.py raw > rates.out"""
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "raw"
SPAN = 10.0


def table(path):
    rows = {}
    with open(path) as f:
        ncpu = len(f.readline().split())
        for line in f:
            parts = line.split()
            if not parts:
                continue
            name = parts[0].rstrip(":")
            vals = []
            for x in parts[1:1 + ncpu]:
                if not x.isdigit():
                    break
                vals.append(int(x))
            if len(vals) == ncpu:
                rows[name] = vals
    return rows


for kind in ("interrupts", "softirqs"):
    a, b = table(f"{d}/{kind}.0"), table(f"{d}/{kind}.1")
    print(f"{kind} per second per CPU over {SPAN:.0f} s:")
    for name in a:
        if name in b:
            r = [(y - x) / SPAN for x, y in zip(a[name], b[name])]
            if any(r):
                print(f"  {name:10s} " + " ".join(f"{v:9.1f}" for v in r))
with open(f"{d}/loadavg_before.txt") as f:
    print("loadavg before:", f.read().strip())

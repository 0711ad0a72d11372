#!/bin/sh
# Idle-wakeup measurement of the machine this runs on (issue 19, housekeeping).
# Takes /proc/interrupts, /proc/softirqs and /proc/stat 10 s apart and keeps both
# snapshots plus lscpu/uname/loadavg, so the rates can be recomputed by rates.py.
# Usage: sh measure.sh OUTDIR
out=${1:-raw}
mkdir -p "$out"
uname -a > "$out/uname.txt"
lscpu > "$out/lscpu.txt"
cat /proc/loadavg > "$out/loadavg_before.txt"
for f in interrupts softirqs stat; do cat /proc/$f > "$out/$f.0"; done
sleep 10
for f in interrupts softirqs stat; do cat /proc/$f > "$out/$f.1"; done
cat /proc/loadavg > "$out/loadavg_after.txt"

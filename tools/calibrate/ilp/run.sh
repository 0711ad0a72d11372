#!/bin/sh
# Adds per nanosecond, one dependent chain against eight independent ones (ilp.c), with the machine
# it ran on. Usage: sh tools/calibrate/ilp/run.sh [OUTDIR]   (default: this directory)
set -eu
here=$(dirname "$0")
out=${1:-$here}
cc -O2 -o /tmp/govlab-ilp "$here/ilp.c"
{
    date -u '+%Y-%m-%d %H:%M:%S UTC'
    uptime
    grep -m1 'model name' /proc/cpuinfo
    nproc
    uname -r
    for i in 1 2 3; do /tmp/govlab-ilp; done
} > "$out/ilp.out"
cat "$out/ilp.out"

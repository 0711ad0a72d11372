#!/bin/sh
# One sitting: the IO costs of workload/fs.rs and workload/dbench.rs and the core clock they
# are converted at, on one machine (issue 35, session 24, branch cycleclock). As root.
#
#   sh tools/calibrate/cycleclock/run.sh [OUTDIR]     # default OUTDIR: this directory
#
# clock.txt: kpath.c's dependent-add chain (tools/calibrate/kpath, `kpath CPU clock`) on CPU 0 and
# CPU 1 before, between and after the two measurements, and a sampler that repeats it every ~10 s
# (alternating CPUs) while they run (the core clock under the benchmarks' load and the host's).
# fs_fsync-output.txt: tools/calibrate/fs_fsync/run.sh unchanged.
# xfs-output.txt: tools/calibrate/dbench/xfs.sh "1 2 4 8" 15 unchanged (DBENCH: dbench 5.0 built
# from sahlberg/dbench, default /tmp/dbench-src/dbench).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${1:-$here}")
mkdir -p "$out"
cc -O2 -Wall -pthread "$here/../kpath/kpath.c" -o /tmp/kpath
clock() {
	echo "## $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	/tmp/kpath 0 clock; /tmp/kpath 1 clock
}
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu family' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc)"
	clock before
} > "$out/clock.txt"
( c=0; while :; do sleep 10; echo "## during $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath $c clock; c=$((1 - c)); done ) > "$out/clock-during.txt" 2>&1 &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
sh "$here/../fs_fsync/run.sh" "$out/fs_fsync-output.txt" > /dev/null
kill $sampler; echo "## (fs_fsync done)" >> "$out/clock-during.txt"
clock "after fs_fsync, before dbench" >> "$out/clock.txt"
( c=0; while :; do sleep 10; echo "## during $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath $c clock; c=$((1 - c)); done ) >> "$out/clock-during.txt" 2>&1 &
sampler=$!
DBENCH=${DBENCH:-/tmp/dbench-src/dbench} bash "$here/../dbench/xfs.sh" "1 2 4 8" 15 > "$out/xfs-output.txt"
kill $sampler; echo "## (dbench done)" >> "$out/clock-during.txt"
clock after >> "$out/clock.txt"
cat "$out/clock.txt"

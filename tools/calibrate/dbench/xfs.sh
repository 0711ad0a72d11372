#!/bin/bash
# dbench4 on XFS as MMTests' io-dbench4-async ran it (issue 35, branch dbench).
#
#   tools/calibrate/dbench/xfs.sh "CLIENTS..." [SECONDS] > tools/calibrate/dbench/xfs-output.txt
#
# dbench built from sahlberg/dbench (the mirror's a8e1c0f, "5.0"; DBENCH=path to use another;
# Debian's 4.0 lacks --run-once and --warmup; its fileio backend) with MMTests' load files cut from its NBENCH trace as
# shellpack_src/src/dbench/dbench-install (gormanm/mmtests ffca095a) cuts them:
# client-warmup.txt = lines 1-600, client-tiny.txt = lines 601-4173. An XFS file
# system (mkfs.xfs defaults) on a loop device over a file in /tmp. Per client count:
# a warm-up that creates the tree (client-warmup.txt, --skip-cleanup), then
# `dbench --warmup 0 -t SECONDS -c client-tiny.txt N` (no -s, -S, -F: asynchronous), as
# dbench-bench runs it but for --show-execute-time (MMTests' patch, not upstream): a pass's
# time is N x 3573 operations / the operations per second. Measured: dbench's per-kind counts
# and mean latencies; the dbench processes' CPU (GNU time, user+system, warm-up
# included); the CPU of the kernel threads that work for XFS (kworkers, xfs*,
# loop*: /proc/<pid>/task/<tid>/stat utime+stime, over the whole run, shared host);
# the machine's /proc/stat split over the run (user, system, iowait, softirq, idle).
set -e
DBENCH="${DBENCH:-/tmp/dbench-src/dbench} -B fileio"
CLIENTS=${1:-"1 2"}
T=${2:-20}
SRC=/usr/share/dbench/client.txt
W=$(mktemp -d /tmp/dbench-xfs.XXXX)
head -n 600 $SRC > $W/client-warmup.txt
head -n 4173 $SRC | tail -n 3573 > $W/client-tiny.txt
truncate -s 4G $W/img
LOOP=$(losetup -f --show $W/img)
mkfs.xfs -q $W/img >/dev/null 2>&1 || mkfs.xfs -q -f $LOOP
mkdir $W/mnt
mount -t xfs $LOOP $W/mnt
cleanup() { umount $W/mnt || true; losetup -d $LOOP || true; rm -rf $W; }
trap cleanup EXIT
echo "# $($DBENCH --help 2>&1 | head -1); $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(findmnt -n -o SOURCE,FSTYPE,OPTIONS $W/mnt); $(xfs_info $W/mnt | head -1)"
echo "# client-tiny.txt: $(wc -l < $W/client-tiny.txt) operations; by kind: $(awk '{print $1}' $W/client-tiny.txt | sort | uniq -c | sort -rn | awk '{printf "%s %s, ", $2, $1}')"
kthreads_ticks() {
    # utime+stime (clock ticks) of kernel threads that do XFS and block work
    for s in /proc/[0-9]*/task/[0-9]*/stat; do
        read -r line < $s 2>/dev/null || continue
        comm=${line#*(}; comm=${comm%%)*}
        case "$comm" in kworker*|xfs*|loop*) set -- ${line##*) }; echo "$comm $(( ${12} + ${13} ))";; esac
    done | awk '{split($1,a,"/"); k=$1; sub(/\/[0-9]+:[0-9]+.*|\/u[0-9]+:[0-9]+.*/,"",k); t[k]+=$2; s+=$2} END{for (k in t) printf "%s=%d ", k, t[k]; printf "total=%d\n", s}'
}
cpu_line() { awk '/^cpu /{print $2+$3, $4, $5, $6, $7+$8}' /proc/stat; }
for N in $CLIENTS; do
    rm -rf $W/mnt/clients; sync
    $DBENCH --run-once --skip-cleanup -D $W/mnt -c $W/client-warmup.txt $N > /dev/null 2>&1
    sync
    echo "## clients $N, ${T} s, load $(cut -d' ' -f1-3 /proc/loadavg)"
    K0=$(kthreads_ticks); C0=$(cpu_line)
    /usr/bin/time -f "dbench_cpu_s user %U system %S wall %e" \
        $DBENCH -D $W/mnt --warmup 0 -t $T -c $W/client-tiny.txt $N 2>&1 | \
        grep -v -E "^ *[0-9]+ +[0-9]+ +[0-9.]+ MB/sec|^\[|^$" | tail -30
    K1=$(kthreads_ticks); C1=$(cpu_line)
    echo "# kthreads ticks before: $K0"
    echo "# kthreads ticks after:  $K1"
    echo "# /proc/stat user system idle iowait irq+softirq (ticks, whole machine): before $C0 after $C1"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/bash
# CPU per dbench operation on this machine (issue 35, branch stall).
#
#   tools/calibrate/dbench/run.sh [SECONDS] > tools/calibrate/dbench/output.txt
#
# Debian's dbench 4.0 (fileio backend, its NBENCH load file /usr/share/dbench/client.txt) with one
# client on the machine's root file system (ext4 on a virtio disk; no XFS here), asynchronous as
# MMTests' io-dbench4-async (no -s, -S, -F). dbench prints per operation kind its count and mean
# latency; GNU time gives the process tree's CPU (user+system). The Flush lines are fsyncs that wait
# for the disk; every other operation is served from the page and dentry caches, so its latency is
# its CPU time plus any wait for a CPU on this shared host: the CPU per operation, all kinds but
# Flush together, is (CPU - Flush count x measured fsync CPU) / operations, and the wait share is
# 1 - CPU / (wall - Flush time).
set -e
T=${1:-20}
D=$(mktemp -d /tmp/stall-dbench.XXXX)
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(findmnt -n -o SOURCE,FSTYPE,OPTIONS --target $D)"
/usr/bin/time -f "dbench_cpu_s user %U system %S wall %e" dbench -D $D -c /usr/share/dbench/client.txt -t $T 1 2>&1 | \
    grep -v "^ *[0-9]* *[0-9]* *[0-9.]* MB/sec" | tail -40
rm -rf $D
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

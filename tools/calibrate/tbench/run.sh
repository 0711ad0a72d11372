#!/bin/bash
# CPU per tbench operation (issue 35, session 23): Debian's dbench 4.0 tbench and tbench_srv, one
# client, both pinned to one CPU at SCHED_FIFO 50 so that nothing else on the shared host runs
# there and nothing idles: the pair then gets RT throttling's 950 ms of every second
# (/proc/sys/kernel/sched_rt_runtime_us), and the CPU time of an operation is 0.95 s / (ops/s).
# Load files: MMTests' client-tiny.txt (lines 601-4173 of dbench's NBENCH client.txt, as
# shellpack_src/src/dbench/dbench-install cuts it) and one-kind files that isolate the per-byte
# cost (sockio.c's do_packets: request and reply sizes per kind). The core clock from kpath.c's
# dependent-add chain (tools/calibrate/kpath/).
#
#   tools/calibrate/tbench/run.sh [SECONDS] [REPEATS] > tools/calibrate/tbench/output.txt
set -e
T=${1:-4}; R=${2:-3}; CPU=${CPU:-1}
HERE=$(cd $(dirname $0) && pwd)
W=$(mktemp -d /tmp/tbench-cal.XXXX)
trap 'pkill -x tbench_srv || true; rm -rf $W' EXIT
head -n 4173 /usr/share/dbench/client.txt | tail -n 3573 > $W/client-tiny.txt
mk() { yes "$2" | head -3000 > $W/$1.txt; }
mk read1 "ReadX 10003 0 1 1 NT_STATUS_OK"
mk read4k "ReadX 10003 0 4096 4096 NT_STATUS_OK"
mk read64k "ReadX 10003 0 65536 65536 NT_STATUS_OK"
mk write4k "WriteX 10011 0 4096 4096 NT_STATUS_OK"
mk write64k "WriteX 10011 0 65536 65536 NT_STATUS_OK"
cc -O2 -o $W/kpath $HERE/../kpath/kpath.c
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg); rt_runtime_us $(cat /proc/sys/kernel/sched_rt_runtime_us)"
echo "# $($W/kpath $CPU 2>/dev/null | grep -m1 clock_ghz)"
echo "# loadfile repeat ops seconds mb_per_s client_user_s client_sys_s wall_s"
for f in client-tiny read1 read4k read64k write4k write64k; do
    for r in $(seq $R); do
        pkill -x tbench_srv || true; sleep 0.3
        chrt -f 50 taskset -c $CPU tbench_srv > /dev/null 2>&1 &
        sleep 0.5
        /usr/bin/time -f "%U %S %e" -o $W/time chrt -f 50 taskset -c $CPU tbench -t $T -c $W/$f.txt 1 127.0.0.1 > $W/out 2>&1
        ops=$(grep -E "^ [A-Za-z]+ +[0-9]+ +[0-9.]+ +[0-9.]+$" $W/out | awk '{n+=$2} END{print n}')
        mbs=$(grep -o 'Throughput [0-9.]*' $W/out | cut -d' ' -f2)
        echo "$f $r $ops $T $mbs $(cat $W/time)"
    done
done
echo "# $($W/kpath $CPU 2>/dev/null | grep -m1 clock_ghz) (after); load $(cut -d' ' -f1-3 /proc/loadavg)"

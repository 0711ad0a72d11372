#!/bin/bash
# Where a one-client tbench pair runs, and what that costs (issue 35, session 38): Debian's dbench 4.0
# `tbench` and `tbench_srv`, MMTests' client-tiny.txt, one client, at normal priority (SCHED_OTHER), in
# three placements: both processes on one CPU (`same`: the ping-pong never idles), client and server
# pinned to two CPUs (`split`), and unpinned (`free`: where this host's scheduler puts them). Each CPU's
# busy share comes from /proc/stat over the run (user, system and softirq; the idle loop, polling
# included, is idle there). Needs two CPUs and a quiet host.
#
#   tools/calibrate/tbench/pair.sh [SECONDS] [REPEATS] > tools/calibrate/tbench/pair-output.txt
set -e
T=${1:-5}; R=${2:-2}
HERE=$(cd $(dirname $0) && pwd)
W=$(mktemp -d /tmp/tbench-pair.XXXX)
trap 'pkill -x tbench_srv || true; rm -rf $W' EXIT
head -n 4173 /usr/share/dbench/client.txt | tail -n 3573 > $W/client-tiny.txt
snap() { grep -E '^cpu[0-9]' /proc/stat > $1; }
report() {
    # per CPU: busy % (all but idle and iowait) and its user, system, softirq shares
    paste $1 $2 | awk '{n=NF/2; tb=0; ta=0; for(i=2;i<=9;i++){ta+=$i; tb+=$(i+n)}; t=tb-ta;
        idle=($(5+n)+$(6+n))-($5+$6);
        printf "%s busy %.1f%% user %.1f sys %.1f softirq %.1f\n", $1, 100*(t-idle)/t,
            100*($(2+n)-$2)/t, 100*($(4+n)-$4)/t, 100*($(8+n)-$8)/t}'
}
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc); cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)/$(cat /sys/devices/system/cpu/cpuidle/current_governor_ro 2>/dev/null); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(cc -O2 -o $W/kpath $HERE/../kpath/kpath.c && $W/kpath 1 2>/dev/null | grep -m1 clock_ghz)"
for r in $(seq $R); do
    for mode in same split free; do
        case $mode in
            same) S="taskset -c 1"; C="taskset -c 1";;
            split) S="taskset -c 1"; C="taskset -c 0";;
            free) S=""; C="";;
        esac
        pkill -x tbench_srv || true; sleep 0.3
        $S tbench_srv > /dev/null 2>&1 &
        sleep 0.5
        snap $W/a
        $C tbench -t $T -c $W/client-tiny.txt 1 127.0.0.1 > $W/out 2>&1
        snap $W/b
        ops=$(grep -E "^ [A-Za-z]+ +[0-9]+ +[0-9.]+ +[0-9.]+$" $W/out | awk '{n+=$2} END{print n}')
        mbs=$(grep -o 'Throughput [0-9.]*' $W/out | cut -d' ' -f2)
        echo "$mode repeat $r: $ops operations in $T s, $mbs MB/s"
        report $W/a $W/b
    done
done
echo "# $($W/kpath 1 2>/dev/null | grep -m1 clock_ghz) (after); load $(cut -d' ' -f1-3 /proc/loadavg)"

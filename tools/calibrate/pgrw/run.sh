#!/bin/bash
# CPU per pgbench read/write (tpcb-like) transaction, with synchronous_commit off and on (issue 35,
# session 20, branch pgrw).
#
#   tools/calibrate/pgrw/run.sh [SECONDS] [ROUNDS] > tools/calibrate/pgrw/output.txt   # as root
#
# As MMTests' pgbench-bench at ffca095a runs it: libpq over TCP on 127.0.0.1, `pgbench -r -l
# --aggregate-interval=1 -c 1 -j 1` (simple query protocol, the default tpcb-like script), and
# postgresbuild-bench's `synchronous_commit = on`. A throw-away cluster of Debian's PostgreSQL 15 in
# /tmp/pgrw-pg (scale 10, shared_buffers 256MB: cache-hot). Each round runs synchronous_commit=off
# (commits return before their WAL flush: the statements' CPU alone) and =on (each commit waits for
# the backend's fdatasync of the WAL) back to back, so both see the same host load.
# Per transaction, in a window from 2 s into the run to 1 s before its end (transactions from pgbench's
# per-second aggregate log): CPU (utime+stime, clock ticks) of the connection's backend, of pgbench, and
# of the other postgres processes (checkpointer, WAL writer, background writer, launcher), read from
# /proc; and pgbench -r's per-statement latencies (ms, whole run).
set -e
T=${1:-10}
R=${2:-3}
PG=/usr/lib/postgresql/15/bin
D=/tmp/pgrw-pg
S=$D/sock
mkdir -p $D $S; chown postgres $D $S
[ -d $D/data ] || su postgres -s /bin/bash -c "$PG/initdb -D $D/data -A trust -U postgres" >/dev/null
as_pg() { su postgres -s /bin/bash -c "$*"; }
ticks() {  # utime+stime (clock ticks) of process $1
    local f=($(sed 's/^.*) //' /proc/$1/stat)); echo $((${f[11]} + ${f[12]}))
}
others() {  # utime+stime of the live postgres processes other than the backend $1 (ticks)
    local s=0 p
    for p in $(pgrep -u postgres -x postgres); do [ "$p" = "$1" ] || s=$((s + $(ticks $p))); done
    echo $s
}
start() {
    as_pg "$PG/pg_ctl -D $D/data -l $D/log -w -o '-k $S -p 5497 -c listen_addresses=127.0.0.1 -c shared_buffers=256MB $1' start" >/dev/null
}
stop() { as_pg "$PG/pg_ctl -D $D/data -w stop" >/dev/null; }
run() {  # $1 label. CPU is read from /proc at 2 s and at T-1 s into the run; the transactions
         # in between come from pgbench's per-second aggregate log (-l --aggregate-interval=1).
    local tck=$(getconf CLK_TCK) out pb be b0 b1 c0 c1 o0 o1 t0 t1
    rm -f $D/pgbench_log.*
    su postgres -s /bin/bash -c "cd $D && exec pgbench -n -r -l --aggregate-interval=1 -h 127.0.0.1 -p 5497 -c 1 -j 1 -T $T bench" > $D/out.txt 2>&1 &
    sleep 2
    pb=$(pgrep -u postgres -x pgbench); be=$(pgrep -u postgres -f 'postgres: postgres bench 127.0.0.1')
    t0=$(date +%s.%N); b0=$(ticks $be); c0=$(ticks $pb); o0=$(others $be)
    sleep $((T - 3))
    t1=$(date +%s.%N); b1=$(ticks $be); c1=$(ticks $pb); o1=$(others $be)
    wait
    python3 - "$D" "$t0" "$t1" <<PY
import glob, sys
d, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
tx = 0.0
for f in glob.glob(d + '/pgbench_log.*'):
    for line in open(f):
        s, n = int(line.split()[0]), int(line.split()[1])
        tx += n * max(0.0, min(s + 1, t1) - max(s, t0))   # the part of each 1-s interval in the window
tck = $tck
print('%-22s %6.0f tx in %.2f s: per transaction backend %6.1f us, pgbench %5.1f us, other postgres %5.1f us, wall %6.1f us' % (
    '$1', tx, t1 - t0, ($b1 - $b0) / tck / tx * 1e6, ($c1 - $c0) / tck / tx * 1e6, ($o1 - $o0) / tck / tx * 1e6, (t1 - t0) / tx * 1e6))
PY
    awk '/statement latencies/ {p=1; next} p && NF>1 && !/\\set/ {printf "    %s\n", $0}' $D/out.txt
}
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $($PG/postgres --version); pgbench $(pgbench --version | awk '{print $NF}'); WAL on $(df -T $D | awk 'NR==2 {print $2, $1}')"
start "-c synchronous_commit=off"
as_pg "psql -h $S -p 5497 -q -c 'DROP DATABASE IF EXISTS bench' postgres; psql -h $S -p 5497 -q -c 'CREATE DATABASE bench' postgres"
as_pg "pgbench -h $S -p 5497 -i -q -s 10 bench" >/dev/null 2>&1
as_pg "pgbench -h $S -p 5497 -c 1 -j 1 -T 5 bench" >/dev/null 2>&1   # warm the caches
stop
for r in $(seq $R); do
    start "-c synchronous_commit=off"; run "synchronous_commit=off"; stop
    start "-c synchronous_commit=on";  run "synchronous_commit=on";  stop
done
rm -f $D/pgbench_log.*
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

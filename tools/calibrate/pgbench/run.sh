#!/bin/bash
# CPU per pgbench transaction, client and server side, on this machine (issue 35, branch stall).
#
#   sudo tools/calibrate/pgbench/run.sh [SECONDS] > tools/calibrate/pgbench/output.txt
#
# A throw-away PostgreSQL cluster (Debian's postgresql 15) in /tmp/stall-pg, cache-hot (scale 10,
# shared_buffers 256MB), one client over the Unix socket (pgbench -c 1 -j 1), as MMTests' pgbench-bench
# runs it (-S for select-only, the default tpcb-like script for read/write). The CPU time of every
# postgres process (utime+stime from /proc/PID/stat, and the postmaster's cutime+cstime for the backend it
# reaped at the end of the run; so the backend and the WAL writer and checkpointer beside it) and of pgbench (GNU time) is divided by the transactions pgbench reports.
# rw runs twice: synchronous_commit=off and fsync=off (no flush: the CPU alone), then the MMTests
# setting (synchronous_commit=on, fsync on: each commit fdatasyncs the WAL on this machine's disk).
set -e
T=${1:-20}
PG=/usr/lib/postgresql/15/bin
D=/tmp/stall-pg
S=$D/sock
mkdir -p $D $S; chown postgres $D $S
[ -d $D/data ] || su postgres -s /bin/bash -c "$PG/initdb -D $D/data -A trust -U postgres" >/dev/null
as_pg() { su postgres -s /bin/bash -c "$*"; }
pg_cpu() {  # utime+stime (clock ticks) of every postgres process, live or reaped by the postmaster
    local s=0 pm=$(head -1 $D/data/postmaster.pid) f
    for p in $(pgrep -u postgres postgres); do
        f=($(sed 's/^.*) //' /proc/$p/stat 2>/dev/null)); s=$((s + ${f[11]:-0} + ${f[12]:-0}))
        [ "$p" = "$pm" ] && s=$((s + ${f[13]:-0} + ${f[14]:-0}))
    done
    echo $s
}
start() {
    as_pg "$PG/pg_ctl -D $D/data -l $D/log -w -o '-k $S -p 5499 -c listen_addresses= -c shared_buffers=256MB $1' start" >/dev/null
}
stop() { as_pg "$PG/pg_ctl -D $D/data -w stop" >/dev/null; }
run() {  # $1 label, $2 pgbench args
    local tck=$(getconf CLK_TCK) c0 c1 out
    c0=$(pg_cpu)
    out=$( { /usr/bin/time -f "pgbench_cpu_s %U %S" su postgres -s /bin/bash -c "pgbench -h $S -p 5499 -c 1 -j 1 -T $T $2 bench" ; } 2>&1 )
    c1=$(pg_cpu)
    local tx=$(echo "$out" | awk '/number of transactions actually processed/ {print $NF}')
    local tps=$(echo "$out" | awk '/^tps/ {print $3; exit}')
    local pgb=$(echo "$out" | awk '/pgbench_cpu_s/ {print $2+$3}')
    echo "$1: transactions $tx in ${T} s, tps $tps; postgres CPU $(( (c1-c0) )) ticks of 1/$tck s; pgbench CPU $pgb s"
    python3 -c "tx=$tx; print('  per transaction: postgres %.1f us, pgbench %.1f us, wall %.1f us' % (($c1-$c0)/$tck/tx*1e6, $pgb/tx*1e6, $T/tx*1e6))"
}
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $($PG/postgres --version); pgbench $(pgbench --version | awk '{print $NF}')"
start "-c synchronous_commit=off -c fsync=off"
as_pg "psql -h $S -p 5499 -q -c 'DROP DATABASE IF EXISTS bench' postgres; psql -h $S -p 5499 -q -c 'CREATE DATABASE bench' postgres"
as_pg "pgbench -h $S -p 5499 -i -q -s 10 bench" >/dev/null 2>&1
as_pg "pgbench -h $S -p 5499 -c 1 -j 1 -T 5 -S bench" >/dev/null 2>&1   # warm the caches
run "ro (select-only, -S)" "-S"
run "rw (tpcb-like), fsync=off" ""
stop
start "-c synchronous_commit=on"
run "rw (tpcb-like), synchronous_commit=on" ""
stop
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

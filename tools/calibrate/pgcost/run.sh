#!/bin/bash
# CPU per pgbench transaction as MMTests ran it (TCP on 127.0.0.1), beside the core clock, on a quiet
# host (issue 35, session 26). tools/calibrate/pgbench (session 14, Unix socket, load 12-14) and
# tools/calibrate/pgro (session 19, both transports, load 10-13) measured about twice the model's
# assumed costs and were not applied for want of a quiet host; this sitting is the re-measurement.
#
#   tools/calibrate/pgcost/run.sh [SECONDS] [ROUNDS] [OUTDIR]   # as root; default 10 s, 3 rounds, this directory
#
# A throw-away cluster of Debian's PostgreSQL 15 in /tmp/pgcost-pg (scale 10, shared_buffers 256MB:
# cache-hot) on 127.0.0.1:5497. MMTests' pgbench-bench (gormanm/mmtests ffca095a) runs
# `pgbench -v -h 127.0.0.1 -r -l --aggregate-interval=1 [-S] -c N -j NUMNODES -T 300`; here -c 1 and
# -c 4 with one thread (-j 1), select-only (-S) and tpcb-like with synchronous_commit=off, fsync=off
# (the CPU without the flush), each ROUNDS times, and tpcb-like with synchronous_commit=on once.
# CPU: utime+stime of every postgres process (and the postmaster's cutime+cstime for reaped
# backends), pgbench's from GNU time, divided by the transactions pgbench reports; `-r`'s
# per-statement latencies at one client are kept (statements.txt) for the split between statements.
# clock.txt: ../kpath/kpath.c's dependent-add chain on CPU 0 and 1 before and after.
set -e
T=${1:-10}
R=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${3:-$here}")
mkdir -p "$out"
PG=/usr/lib/postgresql/15/bin
D=/tmp/pgcost-pg
PORT=5497
mkdir -p $D; chown postgres $D
[ -d $D/data ] || su postgres -s /bin/bash -c "$PG/initdb -D $D/data -A trust -U postgres" >/dev/null
cc -O2 -Wall -pthread "$here/../kpath/kpath.c" -o /tmp/kpath
as_pg() { su postgres -s /bin/bash -c "$*"; }
clock() { echo "## $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath 0 clock; /tmp/kpath 1 clock; }
pg_cpu() {
    local s=0 pm=$(head -1 $D/data/postmaster.pid) f
    for p in $(pgrep -u postgres postgres); do
        f=($(sed 's/^.*) //' /proc/$p/stat 2>/dev/null)); s=$((s + ${f[11]:-0} + ${f[12]:-0}))
        [ "$p" = "$pm" ] && s=$((s + ${f[13]:-0} + ${f[14]:-0}))
    done
    echo $s
}
start() { as_pg "$PG/pg_ctl -D $D/data -l $D/log -w -o '-k $D -p $PORT -c listen_addresses=127.0.0.1 -c shared_buffers=256MB $1' start" >/dev/null; }
stop() { as_pg "$PG/pg_ctl -D $D/data -w stop" >/dev/null; }
run() {  # $1 label, $2 clients, $3 pgbench script args
    local tck=$(getconf CLK_TCK) c0 c1 o
    c0=$(pg_cpu)
    o=$( { /usr/bin/time -f "pgbench_cpu_s %U %S" su postgres -s /bin/bash -c "cd $D && pgbench -n -r -l --aggregate-interval=1 -h 127.0.0.1 -p $PORT -c $2 -j 1 -T $T $3 bench" ; } 2>&1 )
    c1=$(pg_cpu)
    local tx=$(echo "$o" | awk '/number of transactions actually processed/ {print $NF}')
    local pgb=$(echo "$o" | awk '/pgbench_cpu_s/ {print $2+$3}')
    python3 -c "tx=$tx; print('%-28s c=%d: %7d tx, per transaction: postgres %6.1f us, pgbench %5.1f us, wall %6.1f us' % ('$1', $2, tx, ($c1-$c0)/$tck/tx*1e6, $pgb/tx*1e6, $T/tx*1e6))"
    [ "$2" = 1 ] && { echo "### $1 c=1 $(date -u +%T)"; echo "$o" | sed -n '/statement latencies/,$p'; } >> "$out/statements.txt"
    return 0
}
{
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu family' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc)"
echo "# $($PG/postgres --version); pgbench $(pgbench --version | awk '{print $NF}')"
clock before
} > "$out/clock.txt"
: > "$out/statements.txt"
{
echo "# $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg)"
start "-c synchronous_commit=off -c fsync=off"
as_pg "psql -h $D -p $PORT -q -c 'DROP DATABASE IF EXISTS bench' postgres; psql -h $D -p $PORT -q -c 'CREATE DATABASE bench' postgres"
as_pg "pgbench -h $D -p $PORT -i -q -s 10 bench" >/dev/null 2>&1
as_pg "pgbench -h 127.0.0.1 -p $PORT -c 4 -j 1 -T 5 -S bench" >/dev/null 2>&1   # warm the caches
for r in $(seq $R); do
    echo "## round $r $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    for c in 1 4; do
        run "ro (-S)" $c "-S"
        run "rw (tpcb-like), fsync=off" $c ""
    done
done
stop
start "-c synchronous_commit=on"
run "rw (tpcb-like), sync commit" 1 ""
stop
rm -f $D/pgbench_log.*
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/output.txt" 2>&1
clock after >> "$out/clock.txt"
cat "$out/clock.txt" "$out/output.txt"

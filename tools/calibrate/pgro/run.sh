#!/bin/bash
# CPU per select-only pgbench transaction over a Unix socket and over TCP on 127.0.0.1 (issue 35,
# branch pgro). MMTests' pgbench-bench at ffca095a (January 2020) connects with `-h 127.0.0.1 -p 5432`
# (TCP over loopback) and runs `pgbench -v -r -l --aggregate-interval=1 -S -c N -j NUMNODES` (simple
# query protocol); session 14's tools/calibrate/pgbench measured the Unix socket only.
#
#   tools/calibrate/pgro/run.sh [SECONDS] [ROUNDS] > tools/calibrate/pgro/output.txt   # as root
#
# A throw-away cluster of Debian's PostgreSQL 15 in /tmp/pgro-pg (scale 10, shared_buffers 256MB:
# cache-hot), listening on a Unix socket and on 127.0.0.1:5498. Each round runs, for 1 and 4 clients
# (one pgbench thread), the Unix socket and TCP back to back, so both see the same host load. CPU of
# every postgres process (utime+stime, and the postmaster's cutime+cstime for reaped backends) and
# of pgbench (GNU time), divided by the transactions pgbench reports.
set -e
T=${1:-10}
R=${2:-3}
PG=/usr/lib/postgresql/15/bin
D=/tmp/pgro-pg
S=$D/sock
mkdir -p $D $S; chown postgres $D $S
[ -d $D/data ] || su postgres -s /bin/bash -c "$PG/initdb -D $D/data -A trust -U postgres" >/dev/null
as_pg() { su postgres -s /bin/bash -c "$*"; }
pg_cpu() {
    local s=0 pm=$(head -1 $D/data/postmaster.pid) f
    for p in $(pgrep -u postgres postgres); do
        f=($(sed 's/^.*) //' /proc/$p/stat 2>/dev/null)); s=$((s + ${f[11]:-0} + ${f[12]:-0}))
        [ "$p" = "$pm" ] && s=$((s + ${f[13]:-0} + ${f[14]:-0}))
    done
    echo $s
}
run() {  # $1 label, $2 host, $3 clients
    local tck=$(getconf CLK_TCK) c0 c1 out
    c0=$(pg_cpu)
    out=$( { /usr/bin/time -f "pgbench_cpu_s %U %S" su postgres -s /bin/bash -c "cd $D && pgbench -n -r -l --aggregate-interval=1 -h $2 -p 5498 -c $3 -j 1 -T $T -S bench" ; } 2>&1 )
    c1=$(pg_cpu)
    local tx=$(echo "$out" | awk '/number of transactions actually processed/ {print $NF}')
    local pgb=$(echo "$out" | awk '/pgbench_cpu_s/ {print $2+$3}')
    python3 -c "tx=$tx; print('%-6s c=%d: %7d tx, per transaction: postgres %5.1f us, pgbench %5.1f us, wall %6.1f us' % ('$1', $3, tx, ($c1-$c0)/$tck/tx*1e6, $pgb/tx*1e6, $T/tx*1e6))"
}
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $($PG/postgres --version); pgbench $(pgbench --version | awk '{print $NF}')"
as_pg "$PG/pg_ctl -D $D/data -l $D/log -w -o '-k $S -p 5498 -c listen_addresses=127.0.0.1 -c shared_buffers=256MB' start" >/dev/null
as_pg "psql -h $S -p 5498 -q -c 'DROP DATABASE IF EXISTS bench' postgres; psql -h $S -p 5498 -q -c 'CREATE DATABASE bench' postgres"
as_pg "pgbench -h $S -p 5498 -i -q -s 10 bench" >/dev/null 2>&1
as_pg "pgbench -h $S -p 5498 -c 1 -j 1 -T 5 -S bench" >/dev/null 2>&1   # warm the caches
for r in $(seq $R); do
    for c in 1 4; do
        run unix $S $c
        run tcp 127.0.0.1 $c
    done
done
as_pg "$PG/pg_ctl -D $D/data -w stop" >/dev/null
rm -f $D/pgbench_log.*
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# One sitting: the measured CPU costs that session 24's audit (tools/calibrate/cycleclock/audit.md)
# found converted at the simulated platform's base clock, re-measured beside the core clock
# they are now converted at (issue 35, session 25, branch kcycles). As root, ~10 min.
#
#   KSRC=/path/to/linux-source-6.1 sh tools/calibrate/kcycles/run.sh [OUTDIR]   # default OUTDIR: this directory
#
# KSRC: Debian's linux-source-6.1 unpacked and prepared as tools/calibrate/kbuild/README.md says
# (tinyconfig + KALLSYMS, olddefconfig, `make -j2 syncconfig scripts`, `make clean`).
# Every benchmark is run unchanged from its directory; the micro-benchmarks twice (run1 before
# the kernel build, run2 after it), the kernel build once (its processes are the sample).
# clock.txt: kpath.c's dependent-add chain (`kpath CPU clock`) on CPU 0 and CPU 1 before,
# between and after; clock-during.txt: a sampler repeating it every ~10 s, alternating CPUs.
set -e
here=$(cd "$(dirname "$0")" && pwd)
cal=$here/..
out=$(realpath -m "${1:-$here}")
mkdir -p "$out"
cc -O2 -Wall -pthread "$cal/kpath/kpath.c" -o /tmp/kpath
cc -O2 "$cal/process_spawn/spawn.c" -o /tmp/spawn
cc -O2 "$cal/loopback/loopback.c" -o /tmp/loopback
cc -O2 "$cal/udp/udp.c" -o /tmp/udp
cc -O2 "$cal/../syscall_cost.c" -o /tmp/syscall_cost
gcc -O2 -shared -fPIC -o /tmp/proclog.so "$cal/kbuild/proclog.c" -ldl -lpthread
clock() {
	echo "## $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	/tmp/kpath 0 clock; /tmp/kpath 1 clock
}
sampler() {
	( c=0; while :; do sleep 10; echo "## during $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath $c clock; c=$((1 - c)); done ) >> "$out/clock-during.txt" 2>&1 &
	echo $!
}
micro() {
	d=$out/$1; mkdir -p "$d"
	/tmp/spawn > "$d/spawn.out"
	/tmp/loopback > "$d/loopback.out"
	/tmp/udp > "$d/udp.out"
	/tmp/syscall_cost > "$d/syscall_cost.out"
	( cd "$cal/gitsource" && for i in 1 2 3 4; do
		perf stat -e task-clock,context-switches,cpu-migrations,sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit -- dash ./git_test_like.sh
	done ) > /dev/null 2> "$d/perf_stat.out"
}
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu family' /proc/cpuinfo); $(grep -m1 'cpu MHz' /proc/cpuinfo); nproc $(nproc)"
	clock before
} > "$out/clock.txt"
: > "$out/clock-during.txt"
s=$(sampler); trap 'kill $s 2>/dev/null || true' EXIT
micro run1
kill $s; echo "## (run1 done)" >> "$out/clock-during.txt"
clock "after run1, before the kernel build" >> "$out/clock.txt"
s=$(sampler)
( cd "$KSRC" && make ARCH=x86_64 clean > /dev/null && rm -f build.proclog &&
  PROCLOG=$PWD/build.proclog LD_PRELOAD=/tmp/proclog.so make ARCH=x86_64 -j2 vmlinux > /dev/null 2>&1 )
xz -c "$KSRC/build.proclog" > "$out/build.proclog.xz"
kill $s; echo "## (kernel build done)" >> "$out/clock-during.txt"
clock "after the kernel build, before run2" >> "$out/clock.txt"
s=$(sampler)
micro run2
kill $s; echo "## (run2 done)" >> "$out/clock-during.txt"
clock after >> "$out/clock.txt"
lscpu > "$out/machine.txt"; uname -r >> "$out/machine.txt"
cat "$out/clock.txt"

#!/bin/sh
# Runs the kpath measurements; raw output to OUT (default kpath.out), the machine to machine.txt.
# usage: run.sh [OUT]
set -e
OUT=$(realpath -m "${1:-kpath.out}")
cd "$(dirname "$0")"
cc -O2 -Wall -pthread kpath.c -o /tmp/kpath
{
	echo "## date"; date -u
	echo "## uptime (load before)"; uptime
	echo "## kpath on CPU 1"; /tmp/kpath 1
	echo "## kpath on CPU 0"; /tmp/kpath 0
	for i in 1 2 3; do
		echo "## perf bench sched pipe, both ends on CPU 1 (run $i)"; taskset -c 1 perf bench sched pipe -l 100000
		echo "## perf bench sched pipe, ends free on CPUs 0-1 (run $i)"; perf bench sched pipe -l 100000
		echo "## perf bench sched pipe -T (threads), both ends on CPU 1 (run $i)"; taskset -c 1 perf bench sched pipe -T -l 100000
	done
	echo "## perf bench sched messaging (default: 10 groups, 20+20 processes, sockets)"; perf bench sched messaging
	echo "## perf bench sched messaging -p (pipes)"; perf bench sched messaging -p
	echo "## uptime (load after)"; uptime
} > "$OUT" 2>&1
{
	echo "## lscpu"; lscpu
	echo "## uname -a"; uname -a
	echo "## cpuidle"; cat /sys/devices/system/cpu/cpuidle/current_driver /sys/devices/system/cpu/cpuidle/current_governor
	for s in /sys/devices/system/cpu/cpu0/cpuidle/state*; do echo "$s $(cat $s/name) latency $(cat $s/latency) us"; done
	echo "## guest_halt_poll_ns"; cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo "(not readable)"
	echo "## mitigations"; grep -r . /sys/devices/system/cpu/vulnerabilities/
	echo "## kernel command line"; cat /proc/cmdline
	echo "## perf version"; perf --version
	echo "## cc"; cc --version | head -1
} > machine.txt 2>&1

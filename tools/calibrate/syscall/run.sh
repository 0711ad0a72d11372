#!/bin/sh
# Runs the null-syscall measurement on both CPUs; raw output to OUT (default nullsys.out), the machine to machine.txt.
# usage: run.sh [OUT]
set -e
OUT=$(realpath -m "${1:-nullsys.out}")
cd "$(dirname "$0")"
cc -O2 -Wall nullsys.c -o /tmp/nullsys
{
	echo "## date"; date -u
	echo "## uptime (load before)"; uptime
	for i in 1 2 3; do
		echo "## nullsys on CPU 1 (run $i)"; /tmp/nullsys 1
		echo "## nullsys on CPU 0 (run $i)"; /tmp/nullsys 0
	done
	echo "## uptime (load after)"; uptime
} > "$OUT" 2>&1
{
	echo "## lscpu"; lscpu
	echo "## uname -a"; uname -a
	echo "## mitigations"; grep -r . /sys/devices/system/cpu/vulnerabilities/
	echo "## kernel command line"; cat /proc/cmdline
	echo "## cc"; cc --version | head -1
} > machine.txt 2>&1

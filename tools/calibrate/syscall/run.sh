#!/bin/sh
# Runs kpath.c's null-syscall measurement on both CPUs; raw output to OUT (default nullsys.out), the machine to machine.txt.
# usage: run.sh [OUT]
set -e
OUT=$(realpath -m "${1:-$(dirname "$0")/nullsys.out}")
cd "$(dirname "$0")"
cc -O2 -Wall -pthread ../kpath/kpath.c -o /tmp/kpath
{
	echo "## date"; date -u
	echo "## uptime (load before)"; uptime
	for i in 1 2 3; do
		echo "## kpath getppid on CPU 1 (run $i)"; /tmp/kpath 1 getppid
		echo "## kpath getppid on CPU 0 (run $i)"; /tmp/kpath 0 getppid
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

#!/bin/sh
# One run of tcp.c beside the core clock (kpath.c's add chain on CPU 0 and 1, before and after).
#   sh tools/calibrate/tcp/run.sh OUT     (OUT: run1.out, run2.out)
set -e
here=$(cd "$(dirname "$0")" && pwd)
cc -O2 -Wall "$here/tcp.c" -o /tmp/tcp
cc -O2 -Wall -pthread "$here/../kpath/kpath.c" -o /tmp/kpath
clock() {
	echo "## clock $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	/tmp/kpath 0 clock; /tmp/kpath 1 clock
}
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); $(grep -m1 'cpu family' /proc/cpuinfo); nproc $(nproc)"
	echo "# $(sysctl net.ipv4.tcp_wmem net.ipv4.tcp_rmem net.ipv4.tcp_autocorking net.core.rmem_default net.core.wmem_default | tr '\n' ';')"
	clock before
	/tmp/tcp
	clock after
} > "$here/$1"

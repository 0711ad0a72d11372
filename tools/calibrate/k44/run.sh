#!/bin/sh
# Every process of a Linux 4.4 x86_64 *defconfig* vmlinux build, measured as ../kdefconfig/run.sh measured the 6.1
# defconfig (the same proclog.so, the same -j2 and the same scripts / make clean / timed-build order), with the core
# clock sampled beside it (kpath.c's dependent-add chain) so that CPU times can be taken as cycles. Issue 35, session 28:
# the evaluation's kernbench built Linux 4.4 (MMTests' `preamble kernbench 4.4`); this is that tree's build.
#
#   KSRC=/path/to/linux-4.4.178 sh tools/calibrate/k44/run.sh [OUTDIR]
#
# KSRC: a vanilla 4.4.y tree (README.md: where from), patched with fixes.patch if it is not empty.
# KCC: the compiler for the kernel and its host programs (make CC= HOSTCC=), default gcc; ../k44gcc7/ sets gcc 7.3.
# Differences from ../kdefconfig/run.sh: v4.4 has no `syncconfig` (its name was `silentoldconfig`).
set -e
kcc=${KCC:-gcc}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kbuild/tools.sh"
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc); $($kcc --version | head -1)"
	clock "before the first build"
} > "$out/clock.txt"
cd "$KSRC"
make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" mrproper > /dev/null
make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" defconfig > /dev/null
grep -c '=y' .config > "$out/config-y-count.txt"
cp .config "$out/defconfig.config"
make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" -j2 silentoldconfig scripts > /dev/null 2>&1
make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" clean > /dev/null
clock "after scripts and make clean" >> "$out/clock.txt"
( c=0; while :; do sleep 10; echo "## during $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath $c clock; c=$((1 - c)); done ) > "$out/clock-during.txt" 2>&1 &
s=$!; trap 'kill $s 2>/dev/null || true' EXIT
rm -f build.proclog
start=$(date +%s)
PROCLOG=$PWD/build.proclog LD_PRELOAD=/tmp/proclog.so make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" -j2 vmlinux > /tmp/k44-kbuild.log 2>&1 || echo "make failed: $?" >> "$out/clock.txt"
end=$(date +%s)
kill $s
echo "timed build: $((end - start)) s wall" >> "$out/clock.txt"
xz -c build.proclog > "$out/build.proclog.xz"
clock "after the timed build" >> "$out/clock.txt"
lscpu > "$out/machine.txt"; uname -r >> "$out/machine.txt"
cat "$out/clock.txt"

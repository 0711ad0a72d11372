#!/bin/sh
# Every process of a Linux 6.1 x86_64 *defconfig* vmlinux build, measured as tools/calibrate/kbuild/ measured the
# tinyconfig one (the same proclog.so, the same -j2 and the same scripts / make clean / timed-build order), with the core clock sampled beside it (kpath.c's dependent-add chain) so that CPU times
# can be taken as cycles. Issue 35, session 27: the model's 2,700 objects are a defconfig's, but their costs
# were a tinyconfig's (core kernel only: kernel/, mm/, fs/, lib/), so this measures the defconfig's own.
#
#   KSRC=/path/to/linux-source-6.1 sh tools/calibrate/kdefconfig/run.sh [OUTDIR]
#
# KSRC: Debian's linux-source-6.1 unpacked (a copy: this configures it as defconfig).
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kbuild/tools.sh"
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc); $(gcc --version | head -1)"
	clock "before the first build"
} > "$out/clock.txt"
cd "$KSRC"
make ARCH=x86_64 mrproper > /dev/null
make ARCH=x86_64 defconfig > /dev/null
grep -c '=y' .config > "$out/config-y-count.txt"
cp .config "$out/defconfig.config"
# As tools/calibrate/kbuild/ did: host tools and scripts first, then make clean, then the timed build (MMTests'
# warming build is a whole vmlinux; its effect on the timed build's CPU times is the page cache, warm here too).
make ARCH=x86_64 -j2 syncconfig scripts > /dev/null 2>&1
make ARCH=x86_64 clean > /dev/null
clock "after scripts and make clean" >> "$out/clock.txt"
( c=0; while :; do sleep 10; echo "## during $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath $c clock; c=$((1 - c)); done ) > "$out/clock-during.txt" 2>&1 &
s=$!; trap 'kill $s 2>/dev/null || true' EXIT
rm -f build.proclog
start=$(date +%s)
PROCLOG=$PWD/build.proclog LD_PRELOAD=/tmp/proclog.so make ARCH=x86_64 -j2 vmlinux > /dev/null 2>&1
end=$(date +%s)
kill $s
echo "timed build: $((end - start)) s wall" >> "$out/clock.txt"
xz -c build.proclog > "$out/build.proclog.xz"
clock "after the timed build" >> "$out/clock.txt"
lscpu > "$out/machine.txt"; uname -r >> "$out/machine.txt"
cat "$out/clock.txt"

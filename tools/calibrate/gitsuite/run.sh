#!/bin/sh
# Every process of git v2.15.1's own test suite, `make test` at the top of the built tree as MMTests' gitsource-bench
# times it (shellpack_src/src/gitsource/gitsource-bench: `preamble gitsource-bench v2.15.1`, a warm-up `make test`,
# then `make test` per iteration between the monitor hooks), logged with ../kbuild/proclog.so, with the core clock
# sampled beside it (../kpath/kpath.c's dependent-add chain) so that CPU times can be taken as cycles.
#
#   GSRC=/tmp/git2151 sh tools/calibrate/gitsuite/run.sh [OUTDIR] [T]
#
# GSRC: git v2.15.1's tree (README.md: where from), built here with SHELL_PATH=/bin/bash: the source's machines ran
# SUSE, whose /bin/sh is bash, and t/Makefile runs every test script with $(SHELL_PATH). T (optional): the test
# scripts to run (t/Makefile's T=), default all of them. The warm-up run is left out: the tree was just built, so its
# files are in the page cache, which is what MMTests' warm-up leaves.
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kbuild/tools.sh"
cd "$GSRC"
make -j2 SHELL_PATH=/bin/bash NO_CURL=1 NO_TCLTK=1 NO_GETTEXT=1 NO_PYTHON=1 all > /tmp/gitsuite-build.log 2>&1
{
	echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc); git $(./git --version)"
	echo "# /bin/bash: $(/bin/bash --version | head -1)"
	clock "before make test"
} > "$out/clock.txt"
( c=0; while :; do sleep 20; echo "## during $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; /tmp/kpath $c clock; c=$((1 - c)); done ) > "$out/clock-during.txt" 2>&1 &
s=$!; trap 'kill $s 2>/dev/null || true' EXIT
rm -f /tmp/gitsuite.proclog
start=$(date +%s%N)
# make test's own make is MMTests' (no -j): the scripts run one after another.
PROCLOG=/tmp/gitsuite.proclog LD_PRELOAD=/tmp/proclog.so make SHELL_PATH=/bin/bash NO_CURL=1 NO_TCLTK=1 NO_GETTEXT=1 \
	NO_PYTHON=1 test ${2:+"T=$2"} > /tmp/gitsuite-test.log 2>&1 || echo "make test failed: $?" >> "$out/clock.txt"
end=$(date +%s%N)
kill $s
echo "make test: $(( (end - start) / 1000000 )) ms wall" >> "$out/clock.txt"
clock "after make test" >> "$out/clock.txt"
grep -E "^(fixed|success|failed|broken|total)" /tmp/gitsuite-test.log > "$out/results.txt" || true
xz -c /tmp/gitsuite.proclog > "$out/test.proclog.xz"
lscpu > "$out/machine.txt"; uname -r >> "$out/machine.txt"
cat "$out/clock.txt"

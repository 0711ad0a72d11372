#!/bin/sh
# Re-compile a random sample of the timed build's kernel objects one at a time (-j1), each under proclog.so, after
# the timed build: the same objects' cc1 at the load of this moment, against the timed build's, says how much the
# load during the build raised its CPU times (README.md, "The sitting").
#
#   KSRC=/path/to/linux-4.4.178 sh tools/calibrate/k44/resample.sh N SEED OUT.proclog
set -e
n=$1; seed=$2; out=$(realpath -m "$3")
cd "$KSRC"
rm -f "$out"
find . -name '*.o' -newer .config ! -name 'built-in.o' ! -path './scripts/*' ! -path './tools/*' \
	! -path './arch/x86/boot/*' | sed 's|^\./||' | sort | awk -v s="$seed" 'BEGIN{srand(s)} {print rand(), $0}' |
	sort -n | head -n "$n" | cut -d' ' -f2 > /tmp/k44-sample.txt
echo "## $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" > "$out.load"
while read -r o; do
	[ -f "${o%.o}.c" ] || continue
	rm -f "$o"
	PROCLOG=$out LD_PRELOAD=/tmp/proclog.so make ARCH=x86_64 "$o" > /dev/null 2>&1
done < /tmp/k44-sample.txt
echo "## $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out.load"

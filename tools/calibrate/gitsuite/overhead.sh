#!/bin/sh
# proclog.so's own cost per logged image, by how the image started: dash loops of N spawns with and without the
# logger preloaded, rounds alternating, the wall time per spawn (each loop keeps one CPU busy; both sides of a spawn
# are the loop's). `exec`: fork and exec of /bin/true (the logger is mapped and its constructor and destructor run,
# and the forked child's pre-exec image is logged too); `fork`: a subshell `( : )`, fork only (its atfork handler
# and one log write). summarize.py takes the medians off each image: fork_image_ns off an image that began at a
# fork, exec_image_ns (the exec loop's less the fork's) off one that began at an exec.
#
#   sh tools/calibrate/gitsuite/overhead.sh [N] [ROUNDS] > overhead.txt     (after ../kbuild/tools.sh built /tmp/proclog.so)
set -e
n=${1:-5000}; rounds=${2:-5}
echo "# $(date -u) $(uname -r); $(grep -m1 'model name' /proc/cpuinfo); load $(cut -d' ' -f1-3 /proc/loadavg); $n spawns a round"
ns() { date +%s%N; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for kind in exec fork; do
	if [ $kind = exec ]; then body="/bin/true"; else body="( : )"; fi
	loop="i=0; while [ \$i -lt $n ]; do $body; i=\$((i+1)); done"
	diffs=""
	r=0
	while [ $r -lt $rounds ]; do
		a=$(ns); dash -c "$loop"; b=$(ns)
		PROCLOG=/tmp/overhead.proclog LD_PRELOAD=/tmp/proclog.so dash -c "$loop"; c=$(ns)
		rm -f /tmp/overhead.proclog
		plain=$(( (b - a) / n )); logged=$(( (c - b) / n ))
		echo "$kind round $r plain_ns $plain logged_ns $logged diff_ns $((logged - plain))"
		diffs="$diffs $((logged - plain))"
		r=$((r + 1))
	done
	eval "med_$kind=$(echo $diffs | median)"
done
echo "fork_image_ns $med_fork"
echo "exec_image_ns $((med_exec - med_fork))"

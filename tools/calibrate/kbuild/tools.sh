# Sourced by the process-logging measurements (../k44/run.sh, ../k44clean/run.sh, ../kdefconfig/run.sh,
# ../gitsuite/run.sh) with $here set to the measurement's directory and their own arguments: sets $cal
# (tools/calibrate) and $out (the first argument, else $here; created), builds the process logger
# (/tmp/proclog.so, proclog.c) and the core-clock probe (/tmp/kpath, ../kpath/kpath.c's dependent-add chain), and
# defines `clock LABEL`, which prints the time, the load and both CPUs' clock.
cal=$here/..
out=$(realpath -m "${1:-$here}")
mkdir -p "$out"
cc -O2 -Wall -pthread "$cal/kpath/kpath.c" -o /tmp/kpath
gcc -O2 -shared -fPIC -o /tmp/proclog.so "$cal/kbuild/proclog.c" -ldl -lpthread
clock() {
	echo "## $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	/tmp/kpath 0 clock; /tmp/kpath 1 clock
}

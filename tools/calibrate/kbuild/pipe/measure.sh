#!/bin/sh
# gcc -pipe against no -pipe on one C file: the processes, the writes cc1 makes into the pipe and
# the reads as makes from it, and each process's CPU time (strace -f; see README.md in this directory).
# usage: measure.sh FILE.c [extra gcc flags]
set -e
f=$1; shift
for mode in nopipe pipe; do
  flag=""; [ $mode = pipe ] && flag=-pipe
  out=/tmp/pipe-measure.$mode.strace
  strace -f -qq -tt -e trace=execve,read,write,exit_group -o $out gcc -O2 -w $flag "$@" -c "$f" -o /tmp/pipe-measure.o
  echo "== $mode ($(basename $f)): $(gcc --version | head -1)"
  awk -v mode=$mode '
    /execve\(/ { split($0, a, "\""); n=split(a[2], p, "/"); comm[$1]=p[n] }
    / write\(1,/ && comm[$1]=="cc1" { w++; match($0, /= [0-9]+$/); wb += substr($0, RSTART+2) }
    / read\(0,/ && comm[$1]=="as" { r++; match($0, /= [0-9]+$/); rb += substr($0, RSTART+2) }
    END { for (q in comm) procs[comm[q]]++; s=""; for (c in procs) s = s " " c "=" procs[c];
          printf "processes:%s\ncc1 write(1): %d calls, %d bytes; as read(0): %d calls, %d bytes\n", s, w, wb, r, rb }' $out
done

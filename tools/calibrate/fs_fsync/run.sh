#!/bin/sh
# One command: sh tools/calibrate/fs_fsync/run.sh [OUT]  (needs root for the loop mount)
# Mounts a fresh 512 MiB ext4 image (with its jbd2 journal, default mount
# options: commit=5, data=ordered) on a loop device, measures fsync there and
# on the directory's own file system, records the machine, unmounts.
set -e
here=$(dirname "$0")
out=${1:-$here/output.txt}
img=$(mktemp /tmp/govlab-fs-XXXXXX.img); mnt=$(mktemp -d /tmp/govlab-fs-XXXXXX)
cleanup() { umount "$mnt" 2>/dev/null || true; rmdir "$mnt"; rm -f "$img"; }
trap cleanup EXIT
truncate -s 512M "$img"; mkfs.ext4 -q -F "$img"; mount -o loop "$img" "$mnt"
{
  echo "# date"; date -u
  echo "# uname -r"; uname -r
  echo "# lscpu"; lscpu
  echo "# MHz the machine reports"; grep MHz /proc/cpuinfo
  echo "# vm defaults"; for k in dirty_expire_centisecs dirty_writeback_centisecs dirty_background_ratio dirty_ratio; do echo "$k $(cat /proc/sys/vm/$k)"; done
  echo "# file system under test (loop ext4 with journal)"; grep " $mnt " /proc/mounts; cat /proc/fs/ext4/$(basename $(grep " $mnt " /proc/mounts | cut -d' ' -f1))/options | tr '\n' ' '; echo
  echo "# loop-ext4 results"; python3 "$here/fsync_bench.py" "$mnt" 2000
  echo "# the machine's root file system (ext4 without a journal: /proc/fs/jbd2 has no entry for it)"; grep " / " /proc/mounts
  echo "# root-fs results"; d=$(mktemp -d /tmp/govlab-fsroot-XXXXXX); python3 "$here/fsync_bench.py" "$d" 2000; rm -rf "$d"
} > "$out" 2>&1
cat "$out"

#!/usr/bin/env python3
"""Measure what an fsync costs on this machine, for govlab's file-system layer (issue 20).

    python3 tools/calibrate/fs_fsync/fsync_bench.py DIR [N]

DIR is a directory on the file system under test (run.sh mounts a fresh ext4
loop image with its journal, as the machine's root file system has none).
Prints, as `key value unit` lines:

- the fsync latency of a 4 KiB overwrite (mean, p50, p99; µs, wall time),
- the caller's CPU time per write+fsync (getrusage, µs),
- the journal thread's CPU time per fsync (/proc/PID/stat utime+stime of the
  jbd2 thread of the mount, in clock ticks, so only meaningful over many
  fsyncs) and the commits jbd2 reports in /proc/fs/jbd2/DEV/info,
- the rate of dd oflag=dsync 4 KiB writes, and of sqlite3 autocommit inserts
  (journal_mode=DELETE, synchronous=FULL: the MMTests sqlite shellpack's
  defaults),
- buffered write CPU per 4 KiB page (dd of 256 MiB without sync, getrusage of
  the child).
"""

import os
import resource
import statistics
import subprocess
import sys
import time


def jbd2_thread(path):
    """(pid, info file) of the jbd2 thread journaling the file system of `path`, or (None, None)."""
    dev = os.stat(path).st_dev
    name = None
    for d in os.listdir("/proc/fs/jbd2"):
        # d is like "loop0-8" or "vda1-8"; its device number is in /sys/class/block/<dev>/dev
        blk = d.rsplit("-", 1)[0]
        try:
            with open(f"/sys/class/block/{blk}/dev") as f:
                major, minor = map(int, f.read().split(":"))
        except OSError:
            continue
        if os.makedev(major, minor) == dev:
            name = d
    if name is None:
        return None, None
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == f"jbd2/{name}":
                        return int(pid), f"/proc/fs/jbd2/{name}/info"
            except OSError:
                pass
    return None, f"/proc/fs/jbd2/{name}/info"


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def commits(info):
    with open(info) as f:
        return int(f.readline().split()[0])


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    hz = os.sysconf("SC_CLK_TCK")
    pid, info = jbd2_thread(d)
    print(f"jbd2_thread {pid} pid")
    path = os.path.join(d, "fsync.dat")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"\0" * 65536)
    os.fsync(fd)
    buf = b"x" * 4096
    lat = []
    j0 = ticks(pid) if pid else 0
    c0 = commits(info) if info else 0
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for i in range(n):
        os.pwrite(fd, buf, (i % 16) * 4096)
        t = time.perf_counter_ns()
        os.fsync(fd)
        lat.append((time.perf_counter_ns() - t) / 1000)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    os.close(fd)
    lat.sort()
    print(f"fsync_n {n} count")
    print(f"fsync_mean {statistics.mean(lat):.1f} us")
    print(f"fsync_p50 {lat[n // 2]:.1f} us")
    print(f"fsync_p99 {lat[n * 99 // 100]:.1f} us")
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e6 / n
    print(f"caller_cpu_per_fsync {cpu:.1f} us")
    if pid:
        print(f"jbd2_cpu_per_fsync {(ticks(pid) - j0) * 1e6 / hz / n:.1f} us")
        print(f"jbd2_commits_per_fsync {(commits(info) - c0) / n:.3f} ratio")
    # dd with O_DSYNC: every 4 KiB write waits for its data and the journal.
    out = subprocess.run(["dd", "if=/dev/zero", f"of={d}/dd.dat", "bs=4k", "count=500", "oflag=dsync"],
                         capture_output=True, text=True).stderr.strip().splitlines()[-1]
    print(f"dd_dsync_4k {out}")
    # Buffered writes: CPU per page of a 256 MiB dd without sync.
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["dd", "if=/dev/zero", f"of={d}/buf.dat", "bs=1M", "count=256"], capture_output=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e6 / (256 * 256)
    print(f"buffered_cpu_per_page {cpu:.2f} us")
    os.unlink(f"{d}/buf.dat")
    # sqlite3 autocommit inserts with the shell's defaults (DELETE journal, synchronous FULL).
    db = os.path.join(d, "t.db")
    for p in (db, db + "-journal"):
        if os.path.exists(p):
            os.unlink(p)
    rows = 300
    sql = "CREATE TABLE t(a, b, c, d);\n" + "".join(
        f"INSERT INTO t VALUES (10, CURRENT_TIMESTAMP, 'abcd', 'abcdefghijklmnop{i}');\n" for i in range(rows))
    t = time.perf_counter()
    subprocess.run(["sqlite3", db], input=sql, text=True, check=True)
    print(f"sqlite_insert_tps {rows / (time.perf_counter() - t):.0f} trans/s")


if __name__ == "__main__":
    main()

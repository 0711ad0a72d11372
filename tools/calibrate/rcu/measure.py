#!/usr/bin/env python3
"""Time RCU grace periods from user space: membarrier(MEMBARRIER_CMD_GLOBAL)
calls synchronize_rcu() in the kernel (kernel/sched/membarrier.c), so each
call lasts one normal grace period plus the wakeup of the caller.

    python3 tools/calibrate/rcu/measure.py [N] > output.txt

Two series: back to back (a grace period requested as soon as the last one
ended) and spaced (the caller sleeps a random 0-20 ms first, so the request
comes at an arbitrary point of the tick). Prints the query mask, then per
series the count and the 10/50/90/99th percentiles and mean in ms.
"""
import ctypes, os, random, statistics, sys, time

SYS_MEMBARRIER = 324          # x86_64 (arch/x86/entry/syscalls/syscall_64.tbl)
CMD_QUERY, CMD_GLOBAL = 0, 1  # include/uapi/linux/membarrier.h

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def membarrier(cmd):
    r = libc.syscall(SYS_MEMBARRIER, cmd, 0, 0)
    if r < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r


def series(n, spaced, rng):
    out = []
    for _ in range(n):
        if spaced:
            time.sleep(rng.uniform(0.0, 0.020))
        t0 = time.perf_counter_ns()
        membarrier(CMD_GLOBAL)
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


def report(name, xs):
    q = statistics.quantiles(xs, n=100)
    print(f"{name}: n={len(xs)} p10={q[9]:.2f} p50={q[49]:.2f} p90={q[89]:.2f} p99={q[98]:.2f} mean={statistics.fmean(xs):.2f} ms")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    mask = membarrier(CMD_QUERY)
    print(f"membarrier query mask: {mask:#x} (bit 0: MEMBARRIER_CMD_GLOBAL)")
    print(f"uname: {' '.join(os.uname())}")
    print(f"loadavg: {open('/proc/loadavg').read().strip()}")
    rng = random.Random(1)
    report("back-to-back", series(n, False, rng))
    report("spaced 0-20 ms", series(n, True, rng))
    print(f"loadavg after: {open('/proc/loadavg').read().strip()}")


if __name__ == "__main__":
    main()

"""CPU per sample of the monitors MMTests ran beside the x86 evaluation's benchmarks.

    python3 tools/calibrate/monitors/measure.py > tools/calibrate/monitors/results.txt

The configs of the evaluation (gormanm/mmtests ffca095a: MONITORS_GZIP="proc-vmstat mpstat top iotop",
MONITORS_WITH_LATENCY="vmstat iostat", MONITOR_UPDATE_FREQUENCY=10) run each monitor as its
monitors/watch-*.sh does: top -b, mpstat -P ALL -u, iotop -k -b, vmstat -n, iostat -x, a loop of
cat /proc/vmstat; most through a perl filter. Here each runs with a 1-s interval in a session of its
own; the user + system CPU of every process of that session (/proc/PID/stat, clock ticks) is read
after 10.5 and after 30.5 s: the difference over 20 samples is the CPU of one sample, the rest its
start. The interval does not change a sample's work. The source's own turbostat is not measured (no
MSRs in this guest); a monitor's own short-lived children (the proc-vmstat loop's cat and sleep) are
not counted once they have exited.
"""

import os
import platform
import signal
import subprocess
import time

MONITORS = {
    # as monitors/watch-*.sh at ffca095a run them, the interval 1 s
    "top": "top -b -d 1 | perl -ne 'print'",
    "mpstat": "mpstat -P ALL -u 1 | perl -ne 'print'",
    "iotop": "iotop -k -b -d 1 2>&1 | perl -ne 'print'",
    "vmstat": "vmstat -n 1",
    "iostat": "iostat -x 1",
}
TICK = os.sysconf("SC_CLK_TCK")


def session_cpu(sid: int) -> float:
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # field 6 of stat: the session id
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


def measure(cmd: str) -> tuple[float, float]:
    p = subprocess.Popen(["sh", "-c", f"{cmd} > /dev/null"], start_new_session=True)
    start = time.monotonic()
    time.sleep(10.5)
    short = session_cpu(p.pid)
    time.sleep(30.5 - (time.monotonic() - start))
    long = session_cpu(p.pid)
    os.killpg(p.pid, signal.SIGTERM)
    p.wait()
    return short, long


def main() -> None:
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {platform.node()}, {platform.platform()}, {os.cpu_count()} CPUs,"
          f" {sum(1 for d in os.listdir('/proc') if d.isdigit())} tasks; clock tick {1000 // TICK} ms")
    print("# monitor  cpu_at_10.5s_ms  cpu_at_30.5s_ms  per_sample_ms  start_ms")
    for name, cmd in MONITORS.items():
        short, long = measure(cmd)
        per = (long - short) / 20
        print(f"{name:8s} {short * 1e3:9.1f} {long * 1e3:9.1f} {per * 1e3:8.2f} {(short - 10 * per) * 1e3:8.1f}", flush=True)


if __name__ == "__main__":
    main()

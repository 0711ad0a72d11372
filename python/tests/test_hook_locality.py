"""Where the scheduler's cpufreq hook calls come from, by kernel version
(issue 34): a wakeup onto an idle CPU of the waker's last-level cache, and a
forked child, seen by a probe governor written in Python on per-CPU
policies (the Broadwell-EP without SMT: one policy per CPU, one LLC per
socket)."""

from __future__ import annotations

import re
from pathlib import Path

import govlab
from govlab.governors import CpufreqGovernor

PLATFORM = "broadwell-2s-e5-2698v4:smt=off"


def probe_calls(tmp_path: Path, kernel: str, workload: str) -> tuple[list[tuple[int, int, int]], str]:
    """(cpu, time ns, flags) of every hook call the governor got, and the run's trace."""
    calls: list[tuple[int, int, int]] = []

    class Probe(CpufreqGovernor):
        def start(self, policy):
            policy.set_target(policy.min_khz)

        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            calls.append((cpu, time_ns, flags))

    wl = tmp_path / f"wl-{kernel}.toml"
    wl.write_text(workload)
    trace = tmp_path / f"run-{kernel}.trace"
    govlab.run(platform=PLATFORM, kernel=kernel, workload=str(wl), cpufreq=Probe, cpuidle="menu", duration="200ms", trace=trace, seed=1)
    return calls, trace.read_text()


def event_times_us(trace: str, event: str, comm: str) -> list[tuple[int, int]]:
    """(time µs, target CPU) of each `event` line for task `comm`."""
    out = []
    for m in re.finditer(rf" (\d+)\.(\d{{6}}): {event}:\s+comm={comm} .*?target_cpu=(\d+)", trace):
        out.append((int(m.group(1)) * 1_000_000 + int(m.group(2)), int(m.group(3))))
    return out


WAKEUPS = """
[[channel]]
name = "c"

[[task]]
comm = "waker"
cpus = [0]
loop = "forever"
ops = [ { sleep = "7ms" }, { send = "c", bytes = 8 } ]

[[task]]
comm = "wakee"
cpus = [2]
loop = "forever"
ops = [ { recv = "c" }, { run = "100us" } ]
"""


def calls_at_wakeups(tmp_path: Path, kernel: str) -> tuple[int, int]:
    """How many of the wakee's wakeups onto idle CPU 2 got a hook call for CPU 2 at once, of how many."""
    calls, trace = probe_calls(tmp_path, kernel, WAKEUPS)
    wakeups = event_times_us(trace, "sched_wakeup", "wakee")
    assert len(wakeups) >= 20 and all(cpu == 2 for _, cpu in wakeups), wakeups[:5]
    at = {t // 1000 for c, t, _ in calls if c == 2}
    return sum(1 for t, _ in wakeups if t in at), len(wakeups)


def test_a_wakeup_onto_an_idle_cpu_calls_its_hook_from_6_0_only(tmp_path):
    # 6.8 (ttwu_queue_cond, f3dd3f674555 in v6.0): CPU 2 takes the wakeup
    # from its wake list and enqueues the task itself; the idle time decayed
    # its runqueue's signal, so the enqueue calls its hook, locally; not
    # when CPU 2's own idle work (a housekeeping wakeup) updated the signal
    # earlier in the same 1024-us PELT period: nothing decayed, no call
    # (update_load_avg; one wakeup of 28 here since the package exit counts once).
    hit, n = calls_at_wakeups(tmp_path, "6.8")
    assert hit * 10 >= n * 9, f"6.8: {hit} of {n} wakeups called CPU 2's hook"
    # 5.2: CPU 0 enqueues on CPU 2's runqueue; the hook call is remote and
    # a per-CPU policy turns it away (cpufreq_this_cpu_can_update).
    hit, n = calls_at_wakeups(tmp_path, "5.2")
    assert hit == 0, f"5.2: {hit} of {n} wakeups called CPU 2's hook"


FORKS = """
[[task]]
comm = "child"
template = true
ops = [ { run = "200us" } ]

[[task]]
comm = "parent"
cpus = [0]
loop = 10
ops = [ { sleep = "9ms" }, { fork = "child" }, { join = true } ]
"""


def test_a_forked_child_on_another_cpu_gets_no_hook_call_at_the_fork(tmp_path):
    # wake_up_new_task() enqueues the child from the parent's CPU on every
    # version (no wake list): on another CPU's per-CPU policy the call is
    # remote and turned away, on 6.8 as on 5.2.
    for kernel in ("6.8", "5.2"):
        calls, trace = probe_calls(tmp_path, kernel, FORKS)
        forks = event_times_us(trace, "sched_wakeup_new", "child")
        assert len(forks) == 10 and all(cpu != 0 for _, cpu in forks), forks
        at = {(c, t // 1000) for c, t, _ in calls}
        hit = [(t, cpu) for t, cpu in forks if (cpu, t) in at]
        assert hit == [], f"{kernel}: hook calls for the child's CPU at the fork: {hit}"

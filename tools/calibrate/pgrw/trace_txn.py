"""Where a pgbench transaction's time goes, from a govlab ftrace text (issue 35, session 20, branch pgrw).

usage: trace_txn.py TRACE TMIN_S TMAX_S TRANSACTIONS_PER_S [bdw]

Per transaction, for the pgbench and postgres tasks together: time running (and the mean clock while
running, from cpu_frequency), time from sched_wakeup to running (the idle exit of the target CPU, or a
wait behind another task), time asleep; wakeups by waker kind (another task, or an interrupt: an IO
completion, `X.h.` in the flags column), idle exits by state and their exit latency (intel_idle
skl_cstates: POLL 0, C1 2, C1E 10, C3 70, C6 85, C7s 124, C8 200 us; with `bdw`, bdw_cstates as the
Broadwell-EP file lists them: POLL 0, C1 2, C1E 10, C3 40, C6 133 us). Kernel threads (xfs, flusher)
are listed apart."""
import collections
import re
import sys

f, tmin, tmax, tps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
EXIT = {0: 0, 1: 2, 2: 10, 3: 70, 4: 85, 5: 124, 6: 200}
NAMES = ['POLL', 'C1', 'C1E', 'C3', 'C6', 'C7s', 'C8']
if sys.argv[5:] == ['bdw']:
    EXIT = {0: 0, 1: 2, 2: 10, 3: 40, 4: 133}
LINE = re.compile(r'\[(\d+)\] (\S+)\s+(\d+\.\d+): (\w+):\s+(.*)')
freq = collections.defaultdict(lambda: 800000)
running = {}            # cpu -> (comm, t0)
woken = {}              # comm-pid -> wakeup time
idle_in = {}            # cpu -> (state, t)
run_t = collections.Counter(); run_cyc = collections.Counter(); wait_t = collections.Counter()
wakes = collections.Counter(); states = collections.Counter(); exit_us = 0.0
def task(comm): return 'client' if comm.startswith('pgbench') else 'backend' if comm.startswith('postgres') else ('kthread' if not comm.startswith('swapper') else None)
def clip(a, b): return max(0.0, min(b, tmax) - max(a, tmin))
for line in open(f):
    m = LINE.search(line)
    if not m:
        continue
    cpu, flags, t, ev, rest = int(m.group(1)), m.group(2), float(m.group(3)), m.group(4), m.group(5)
    if ev == 'cpu_frequency':
        fm = re.search(r'state=(\d+) cpu_id=(\d+)', rest)
        c = int(fm.group(2))
        if c in running and task(running[c][0]):
            comm, t0 = running[c]
            run_cyc[task(comm)] += clip(t0, t) * freq[c]
            running[c] = (comm, t)
        freq[c] = int(fm.group(1))
    elif ev == 'cpu_idle':
        st = int(re.search(r'state=(\d+)', rest).group(1))
        if st == 4294967295:
            if cpu in idle_in:
                s, t0 = idle_in.pop(cpu)
                if tmin <= t <= tmax:
                    states[s] += 1; exit_us += EXIT.get(s, 0)
        else:
            idle_in[cpu] = (st, t)
    elif ev == 'sched_wakeup':
        comm = re.search(r'comm=(\S+) pid=(\d+)', rest)
        key = comm.group(1) + '-' + comm.group(2)
        woken[key] = t
        if tmin <= t <= tmax and task(comm.group(1)) in ('client', 'backend'):
            wakes[(task(comm.group(1)), 'irq' if 'h' in flags else 'task')] += 1
    elif ev == 'sched_switch':
        pm = re.search(r'prev_comm=(\S+) prev_pid=(\d+).*next_comm=(\S+) next_pid=(\d+)', rest)
        if cpu in running:
            comm, t0 = running.pop(cpu)
            k = task(comm)
            if k:
                run_t[k] += clip(t0, t); run_cyc[k] += clip(t0, t) * freq[cpu]
        nkey = pm.group(3) + '-' + pm.group(4)
        k = task(pm.group(3))
        if k and nkey in woken:
            wait_t[k] += clip(woken.pop(nkey), t)
        running[cpu] = (pm.group(3), t)
n = tps * (tmax - tmin)
print(f'{f} [{tmin}, {tmax}] s, {n:.0f} transactions; per transaction:')
for k in ('client', 'backend', 'kthread'):
    mhz = run_cyc[k] / run_t[k] / 1000 if run_t[k] else 0
    print(f'  {k:8s} running {run_t[k] / n * 1e6:7.1f} us at {mhz:5.0f} MHz ({run_cyc[k] / n:6.1f} k cycles), wakeup-to-running {wait_t[k] / n * 1e6:6.1f} us')
print('  wakeups: ' + ', '.join(f'{a} by {b} {c / n:.2f}' for (a, b), c in sorted(wakes.items())))
print(f'  idle exits {sum(states.values()) / n:.2f} (' + ', '.join(f'{NAMES[s]} {c / n:.2f}' for s, c in sorted(states.items())) + f'), exit latency {exit_us / n:.1f} us')
print(f'  wall {1e6 / tps:.1f} us')

#!/usr/bin/env python3
"""Switch-in rate (per second, whole trace, all CPUs) of housekeeping kernel threads in the real recordings."""
import pathlib, re, sys
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from idle_stats import events
base = str(pathlib.Path(__file__).resolve().parents[3] / 'data' / 'real') + '/'
pat = re.compile(r'(?:next_comm=(\S+) next_pid=(\d+))|(?:==> (.+?):(\d+) )')
groups = ['rcu_preempt', 'rcu_sched', 'rcuop', 'rcuos', 'kworker', 'ksoftirqd', 'watchdog', 'migration', 'sugov', 'jbd2', 'usb-storage']
for f in ['lisa/sched_load/trace.report.txt', 'lisa/example_rtapp/trace.report.txt', 'lisa/trace_txt/trace.txt', 'trappy/trace_surfaceflinger.html']:
    ev = events(base + f); span = ev[-1][0] - ev[0][0]
    cnt = {g: 0 for g in groups}
    for ts, cpu, name, rest, comm in ev:
        if name != 'sched_switch': continue
        m = pat.search(rest)
        if not m: continue
        nxt = m[1] or m[3]
        for g in groups:
            if nxt.startswith(g): cnt[g] += 1
    ncpu = len({e[1] for e in ev})
    print(f'{f}: span {span:.3f} s, {ncpu} CPUs seen; switch-ins per second (all CPUs):',
          ', '.join(f'{g}={cnt[g]/span:.2f}' for g in groups if cnt[g]))

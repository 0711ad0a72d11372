#!/usr/bin/env python3
"""Where a dbench client's time goes in a govlab --trace (ftrace text): running, waiting for a CPU after
its wakeup (idle exit or queueing), and asleep, split by who woke it (an IO completion, the xfs-log worker,
other). Usage: tools/calibrate/dbench/pass_budget.py TRACE [COMM-PREFIX] (session 20, branch `dbench`; the
clock column is the CPU's last cpu_frequency event in MHz, which on the Skylake and under intel_pstate is the
request, not the package clock: use --turbostat's Bzy_MHz for that)"""
import re, sys
from collections import defaultdict
path = sys.argv[1]; who = sys.argv[2] if len(sys.argv) > 2 else "dbench"
line_re = re.compile(r"^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+):\s+(\w+):\s+(.*)$")
kv = lambda s: dict(re.findall(r"(\w+)=(\S+)", s))
state = {}   # pid -> (what, since, extra)
tot = defaultdict(lambda: defaultdict(float)); cnt = defaultdict(lambda: defaultdict(int))
freq = {}; run_cyc = defaultdict(float); end = 0.0
for line in open(path):
    m = line_re.match(line)
    if not m: continue
    comm, pid, cpu, flags, t, ev, rest = m.groups(); t = float(t); end = t; a = kv(rest)
    if ev == "cpu_frequency": freq[int(a["cpu_id"])] = int(a["state"]); continue
    if ev == "sched_wakeup" and a["comm"].startswith(who):
        p = a["pid"]; s = state.get(p)
        if s and s[0] == "sleep":
            cause = "io" if "h" in flags else comm.split("-")[0] if not comm.startswith("<idle>") else "idle-ctx"
            tot[p]["sleep:" + cause] += t - s[1]; cnt[p]["sleep:" + cause] += 1
        state[p] = ("wait", t, int(a["target_cpu"]))
    elif ev == "sched_switch":
        if a["prev_comm"].startswith(who):
            p = a["prev_pid"]; s = state.get(p)
            if s and s[0] == "run":
                tot[p]["run"] += t - s[1]; run_cyc[p] += (t - s[1]) * freq.get(int(cpu), 0) * 1e3
            state[p] = ("sleep", t, None) if a["prev_state"] != "R" else ("wait", t, int(cpu))
        if a["next_comm"].startswith(who):
            p = a["next_pid"]; s = state.get(p)
            if s and s[0] == "wait":
                tot[p]["wakeup->run"] += t - s[1]; cnt[p]["wakeup->run"] += 1
            state[p] = ("run", t, int(cpu))
for p in sorted(tot):
    T = sum(tot[p].values())
    print(f"pid {p}: accounted {T*1e3:.1f} ms; requested clock while running {run_cyc[p]/max(tot[p]['run'],1e-12)/1e6:.0f} MHz")
    for k in sorted(tot[p]):
        print(f"  {k:18s} {tot[p][k]*1e3:8.1f} ms {100*tot[p][k]/T:5.1f} %  n={cnt[p][k] or ''}")

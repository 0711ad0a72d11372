"""Per process kind, the cpufreq request its CPU held while each task of that kind ran, from a
kernbench `govlab run --trace FILE` (docs/validation.md §6, "Session 23 (branch `kbuild23`)").

For every task whose first run starts between FROM and TO (simulated seconds): its run time, the
request (cpu_frequency) of its CPU weighted by that time, and how long after it first ran its CPU's
request reached 3.3 GHz. The request is what schedutil asked (policy->cur), not the granted clock.

    python3 tools/kernbench_requests.py TRACE FROM TO
"""
import re, sys, bisect, statistics
from collections import defaultdict
EV = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+):\s+(.*)")
path, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
req = defaultdict(list)  # cpu -> [(t,khz)]
running = {}  # cpu -> (pid, comm, since)
life = defaultdict(list)  # pid -> [(t_start,t_end,cpu)]
comm_of = {}
for line in open(path):
    m = EV.search(line)
    if not m: continue
    t = float(m.group(4)); cpu = int(m.group(3)); name = m.group(5); a = m.group(6)
    if name == 'cpu_frequency':
        kv = dict(x.split('=') for x in a.split()); req[int(kv['cpu_id'])].append((t, int(kv['state'])))
    elif name == 'sched_switch':
        pre = a.split('==>')[0]; nxt = a.split('==>')[1]
        pp = int(re.search(r'prev_pid=(\d+)', pre).group(1)); np_ = int(re.search(r'next_pid=(\d+)', nxt).group(1))
        nc = re.search(r'next_comm=(\S+)', nxt).group(1)
        if cpu in running:
            pid, c, s = running.pop(cpu)
            life[pid].append((s, t, cpu))
        if np_ != 0:
            running[cpu] = (np_, nc, t); comm_of[np_] = nc
def req_at(cpu, t):
    seq = req[cpu]; i = bisect.bisect_right([x for x,_ in seq], t) - 1
    return seq[i][1] if i >= 0 else 1200000
# per comm: time-weighted request while running, time fraction under thresholds
stats = defaultdict(lambda: [0.0, 0.0, 0.0, 0])  # run s, khz*s, cycles(GHz*s), n
first = defaultdict(list)
for pid, segs in life.items():
    c = comm_of.get(pid, '?')
    if not segs or segs[0][0] < t0 or segs[0][0] > t1: continue
    st = stats[c]; st[3] += 1
    start = segs[0][0]; reached = None
    for (s, e, cpu) in segs:
        seq = req[cpu]; times = [x for x,_ in seq]
        i = bisect.bisect_right(times, s) - 1
        tcur = s
        k = req_at(cpu, s)
        j = i + 1
        while True:
            tn = times[j] if j < len(times) and times[j] < e else e
            dt = tn - tcur
            st[0] += dt; st[1] += k * dt
            if reached is None and k >= 3300000: reached = tcur - start
            if tn >= e: break
            k = seq[j][1]; tcur = tn; j += 1
    life_s = sum(e - s for s, e, _ in segs)
    first[c].append((reached if reached is not None else float('inf'), life_s))
for c, (rs, ks, _, n) in sorted(stats.items(), key=lambda x: -x[1][0]):
    r = [x for x, _ in first[c]]
    fin = [x for x in r if x != float('inf')]
    print(f"{c:10} n={n:5} run {rs:8.2f} s  mean req {ks/rs/1e3:6.0f} MHz  reach>=3.3GHz: {len(fin)}/{len(r)} median {statistics.median(fin)*1e3 if fin else float('nan'):.1f} ms; mean run {statistics.mean(l for _, l in first[c])*1e3:.1f} ms")

"""While each named task runs, the clock its CPU requested (policy->cur under intel_cpufreq's fast switch) and
the package clock (the highest request among the CPUs in C0: the Skylake's one clock, machine/dvfs.rs), from a
govlab --trace (ftrace text). Issue 35, session 23 (branch `iobound`).

usage: own_vs_package.py TRACE TMIN_S TMAX_S COMM[,COMM...] [NCPUS]

Prints per task name its running share of the window, the time-weighted mean of both clocks, and their
distributions in 100-MHz bins (bins under 1 % left out). On a part with a clock per core (the Xeons) the
"package" column is meaningless."""
import collections
import re
import sys

f, tmin, tmax = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
names = tuple(sys.argv[4].split(','))
ncpus = int(sys.argv[5]) if len(sys.argv) > 5 else 8
LINE = re.compile(r'\[(\d+)\] (\S+)\s+(\d+\.\d+): (\w+):\s+(.*)')
req = collections.defaultdict(lambda: 800000)
c0 = {}
cur = {}
acc = collections.defaultdict(collections.Counter)
tprev = None


def package():
    v = [req[c] for c in range(ncpus) if c0.get(c, True)]
    return max(v) if v else 0


for line in open(f):
    m = LINE.search(line)
    if not m:
        continue
    cpu, t, ev, rest = int(m.group(1)), float(m.group(3)), m.group(4), m.group(5)
    if t > tmax:
        break
    if tprev is not None and t > tmin:
        d = t - max(tprev, tmin)
        if d > 0:
            p = package()
            for c, k in cur.items():
                if k:
                    acc[k][(req[c] // 100000, p // 100000)] += d
    tprev = t
    if ev == 'cpu_frequency':
        fm = re.search(r'state=(\d+) cpu_id=(\d+)', rest)
        req[int(fm.group(2))] = int(fm.group(1))
    elif ev == 'cpu_idle':
        c0[cpu] = int(re.search(r'state=(\d+)', rest).group(1)) == 4294967295
    elif ev == 'sched_switch':
        n = re.search(r'next_comm=(\S+)', rest).group(1)
        cur[cpu] = None if n.startswith('swapper') else n
w = tmax - tmin
for k in names:
    tot = sum(acc[k].values())
    if not tot:
        print(f'{k}: never ran')
        continue
    own = collections.Counter()
    pk = collections.Counter()
    for (o, p), d in acc[k].items():
        own[o] += d
        pk[p] += d
    mo = sum(o * d for o, d in own.items()) / tot * 100
    mp = sum(p * d for p, d in pk.items()) / tot * 100
    print(f'{k}: running {tot / w * 100:.1f} % of the window; its CPU\'s request {mo:.0f} MHz, package {mp:.0f} MHz (means)')
    print('   request (x100 MHz: % of its time):', ' '.join(f'{o}:{d / tot * 100:.0f}' for o, d in sorted(own.items()) if d / tot > 0.01))
    print('   package (x100 MHz: % of its time):', ' '.join(f'{p}:{d / tot * 100:.0f}' for p, d in sorted(pk.items()) if d / tot > 0.01))

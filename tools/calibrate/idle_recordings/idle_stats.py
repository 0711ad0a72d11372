#!/usr/bin/env python3
"""Per-CPU wakeup rate and idle-period distribution from the real recordings in
the repository's data/real (read-only).  Standard library only.

Two methods:
  cpuidle : idle period = cpu_idle enter (state != 4294967295) -> next exit on that CPU;
            a wakeup = a cpu_idle exit event.  Counts IRQ-only wakeups too.
  sched   : idle period = sched_switch to swapper/N -> next sched_switch away from it
            (only task wakeups; IRQs handled inside idle are invisible).  Used for traces
            without cpu_idle events, and as a cross-check.
For every wakeup (cpuidle method) we also record what ran before the CPU re-entered idle:
the first task switched in, or 'irq-only' if no sched_switch happened.
"""
import re, sys, html, statistics, collections, json, pathlib

LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:[\w.]{4,5}\s+)?'
                  r'(?P<ts>\d+\.\d+):\s+(?P<ev>\w+):\s+(?P<rest>.*)$')
EXIT = 4294967295

def events(path):
    txt = open(path, encoding='utf-8', errors='replace').read()
    if path.endswith('.html'):
        txt = html.unescape(txt)
    out = []
    for ln in txt.splitlines():
        m = LINE.match(ln)
        if m:
            out.append((float(m['ts']), int(m['cpu']), m['ev'], m['rest'], m['comm']))
    out.sort(key=lambda e: e[0])
    return out

def pct(xs, p):
    if not xs: return float('nan')
    xs = sorted(xs); k = (len(xs) - 1) * p
    f = int(k); c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)

def analyse(path, label):
    ev = events(path)
    if not ev:
        print(f'{label}: no events parsed'); return {}
    t0, t1 = ev[0][0], ev[-1][0]
    cpus = sorted({e[1] for e in ev})
    first = {c: min(e[0] for e in ev if e[1] == c) for c in cpus}
    last = {c: max(e[0] for e in ev if e[1] == c) for c in cpus}
    have_idle = any(e[2] == 'cpu_idle' for e in ev)
    res = {'file': label, 'span_s': t1 - t0, 'cpus': {}}
    # cpuidle method
    enter = {}; idle = collections.defaultdict(list); exits = collections.Counter()
    pending = {}  # cpu -> None (woken, nothing ran yet) or name of first task
    cause = collections.defaultdict(collections.Counter)
    states = collections.defaultdict(collections.Counter)
    # sched method
    sw_idle_start = {}; sched_idle = collections.defaultdict(list)
    tasks = collections.defaultdict(collections.Counter)
    busy = collections.Counter()
    running = {}
    for ts, cpu, name, rest, comm in ev:
        if name == 'cpu_idle':
            m = re.search(r'state=(\d+)\s+cpu_id=(\d+)', rest)
            st, c = int(m[1]), int(m[2])
            if st == EXIT:
                exits[c] += 1
                if c in enter:
                    idle[c].append(ts - enter.pop(c))
                pending[c] = 'irq-only'
            else:
                states[c][st] += 1
                if c in pending:
                    cause[c][pending.pop(c)] += 1
                enter[c] = ts
        elif name == 'sched_switch':
            m = re.search(r'prev_comm=(.+?) prev_pid=(-?\d+) .*next_comm=(.+?) next_pid=(-?\d+)', rest) \
                or re.search(r'^(.+?):(-?\d+) .*?==> (.+?):(-?\d+) ', rest)
            if not m: continue
            prev, ppid, nxt, npid = m[1], int(m[2]), m[3], int(m[4])
            if cpu in pending and pending[cpu] == 'irq-only' and npid != 0:
                pending[cpu] = re.sub(r'[/:]\d+.*$|-\d+$|\d+$', '', nxt) or nxt
            if npid == 0:
                sw_idle_start[cpu] = ts
                if cpu in running:
                    busy[cpu] += ts - running.pop(cpu)
            else:
                tasks[cpu][nxt] += 1
                if ppid == 0 and cpu in sw_idle_start:
                    sched_idle[cpu].append(ts - sw_idle_start.pop(cpu))
                running.setdefault(cpu, ts)
    for c in cpus:
        win = last[c] - first[c]
        d = {'window_s': round(win, 6), 'global_span_s': round(t1 - t0, 6)}
        if have_idle:
            ids = idle[c]
            d.update({'idle_exits': exits[c],
                      'exits_per_s_global': round(exits[c] / (t1 - t0), 1) if t1 > t0 else None,
                      'exits_per_s_cpuwindow': round(exits[c] / win, 1) if win > 0 else None,
                      'n_idle_periods': len(ids),
                      'idle_median_ms': round(pct(ids, .5) * 1e3, 3) if ids else None,
                      'idle_p90_ms': round(pct(ids, .9) * 1e3, 3) if ids else None,
                      'idle_p10_ms': round(pct(ids, .1) * 1e3, 3) if ids else None,
                      'idle_max_ms': round(max(ids) * 1e3, 3) if ids else None,
                      'idle_total_s': round(sum(ids), 6),
                      'states_entered': dict(states[c]),
                      'wakeup_followed_by': dict(cause[c].most_common(8))})
        sids = sched_idle[c]
        d.update({'sched_idle_periods': len(sids),
                  'sched_idle_exits_per_s_global': round(len(sids) / (t1 - t0), 2) if t1 > t0 else None,
                  'sched_idle_median_ms': round(pct(sids, .5) * 1e3, 3) if sids else None,
                  'sched_idle_p90_ms': round(pct(sids, .9) * 1e3, 3) if sids else None,
                  'busy_s': round(busy[c], 6),
                  'tasks_switched_in': dict(tasks[c].most_common(6))})
        res['cpus'][c] = d
        d['_idle'] = idle[c] if have_idle else sched_idle[c]
    return res

if __name__ == '__main__':
    base = str(pathlib.Path(__file__).resolve().parents[3] / 'data' / 'real') + '/'
    files = [('trappy/trace_idle.report.txt', 'trappy trace_idle (6-CPU ARM, likely Juno)'),
             ('trappy/trace_surfaceflinger.html', 'trappy systrace surfaceflinger (SD835 phone)'),
             ('lisa/sched_load/trace.report.txt', 'lisa sched_load (Juno r0, 4.19)'),
             ('lisa/example_rtapp/trace.report.txt', 'lisa example_rtapp (Juno r0)'),
             ('lisa/trace_txt/trace.txt', 'lisa trace_txt (Juno, 4.19)')]
    allres = []
    for f, label in files:
        r = analyse(base + f, label); r['path'] = f; allres.append(r)
        print(f"\n=== {label}  [{f}]  span {r.get('span_s', 0):.4f} s")
        for c, d in r.get('cpus', {}).items():
            print(f'cpu{c}:', json.dumps({k: v for k, v in d.items() if k != '_idle'}))
        # pooled over 'idle' CPUs: busy time < 5% of the trace span
        quiet = [c for c, d in r.get('cpus', {}).items() if r['span_s'] > 0 and d['busy_s'] / r['span_s'] < 0.05]
        pool = [x for c in quiet for x in r['cpus'][c]['_idle']]
        if pool:
            method = 'cpu_idle' if any('idle_exits' in r['cpus'][c] for c in quiet) else 'sched_switch(swapper)'
            n_exit = sum(r['cpus'][c].get('idle_exits', r['cpus'][c]['sched_idle_periods']) for c in quiet)
            print(f"POOLED idle CPUs {quiet} (busy<5%), method {method}: n={len(pool)} "
                  f"median={pct(pool,.5)*1e3:.3f} ms p90={pct(pool,.9)*1e3:.3f} ms "
                  f"mean wakeups/s/CPU={n_exit/len(quiet)/r['span_s']:.1f}")
        for c in r.get('cpus', {}).values(): c.pop('_idle', None)
    json.dump(allres, open(pathlib.Path(__file__).with_name('idle_stats.json'), 'w'), indent=1)

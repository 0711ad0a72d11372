"""Per transaction of a govlab ftrace text: wakeups, idle exits by state, exit latency paid (intel_idle
skl_cstates), CPU busy time, wall time. usage: trace_per_txn.py TRACE TMIN_S TMAX_S TPS
(docs/validation.md, Session 19 pgro)"""
import sys,re,collections
f=sys.argv[1]; tmin=float(sys.argv[2]); tmax=float(sys.argv[3]); tps=float(sys.argv[4])
EXIT=[0,2,10,70,85,124,200]
ent={}; exitsum=0; nidle=0; busy=0; last={}; wakes=0; states=collections.Counter()
for line in open(f):
    m=re.search(r'\[(\d+)\].*?\s(\d+\.\d+): (\w+):\s+(.*)',line)
    if not m: continue
    cpu=int(m.group(1)); t=float(m.group(2)); ev=m.group(3); rest=m.group(4)
    if ev=='cpu_idle':
        st=int(re.search(r'state=(\d+)',rest).group(1))
        if st==4294967295:
            if cpu in ent:
                s,t0=ent.pop(cpu)
                if tmin<=t<=tmax and t-t0<0.004: exitsum+=EXIT[s]; nidle+=1; states[s]+=1
        else: ent[cpu]=(st,t)
    elif ev=='sched_wakeup' and tmin<=t<=tmax: wakes+=1
    elif ev=='sched_switch':
        nxt=re.search(r'next_comm=(\S+)',rest).group(1)
        if cpu in last and tmin<=t<=tmax:
            p,t0=last[cpu]
            if not p.startswith('swapper'): busy+=t-max(t0,tmin)
        last[cpu]=(nxt,t)
n=tps*(tmax-tmin)
names=['POLL','C1','C1E','C3','C6','C7s','C8']
print(f'{f}: per txn: wakeups {wakes/n:.2f}, idle exits {nidle/n:.2f} ({", ".join(f"{names[s]} {c/n:.2f}" for s,c in sorted(states.items()))}), exit latency {exitsum/n:.1f} us, CPU busy {busy/n*1e6:.1f} us, wall {1e6/tps:.1f} us')

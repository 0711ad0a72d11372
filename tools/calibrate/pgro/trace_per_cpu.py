"""Per CPU of a govlab ftrace text (govlab run --trace): wakeups by waker, wakee, placement (same CPU,
SMT sibling, other core) and whether the target was idle; busy share; per idle state the count, mean
residency and mean time from idle entry to the wakeup aimed at the CPU. Skylake state names and exits.
usage: trace_per_cpu.py TRACE TMIN_S TMAX_S (docs/validation.md, Session 19 pgro)"""
import sys,re,collections
# usage: an2.py trace tmin tmax
f=sys.argv[1]; tmin=float(sys.argv[2]); tmax=float(sys.argv[3])
names=['POLL','C1','C1E','C3','C6','C7s','C8']
EXIT=[0,2,10,70,85,124,200]
ent={}; wake={}; cur={}   # cpu -> running comm
idle=collections.defaultdict(lambda: collections.defaultdict(list))  # cpu->state->[(res, sleep_to_wake)]
wk=collections.Counter(); nwake=0
busy=collections.Counter(); last_switch={}
rel=lambda a,b: 'same' if a==b else ('smt' if a%4==b%4 else 'other core')
pid2comm={}
for line in open(f):
    m=re.search(r'^\s*(\S+)-(\d+)\s+\[(\d+)\].*?\s(\d+\.\d+): (\w+):\s+(.*)',line)
    if not m: continue
    comm,pid,cpu,t,ev,rest=m.group(1),m.group(2),int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
    inwin = tmin<=t<=tmax
    if ev=='cpu_idle':
        st=int(re.search(r'state=(\d+)',rest).group(1))
        if st==4294967295:
            if cpu in ent:
                s,t0=ent.pop(cpu); w=wake.pop(cpu,None)
                if tmin<=t0 and t<=tmax: idle[cpu][s].append((t-t0,(w-t0) if w else None))
        else: ent[cpu]=(st,t); wake.pop(cpu,None)
    elif ev=='sched_wakeup':
        tc=int(re.search(r'target_cpu=(\d+)',rest).group(1)); wc=re.search(r'comm=(\S+)',rest).group(1)
        tgt_idle = tc in ent
        if tgt_idle and tc not in wake: wake[tc]=t
        if inwin:
            nwake+=1; wk[(comm if comm!='<idle>' else 'irq', wc, rel(cpu,tc), 'idle' if tgt_idle else 'busy')]+=1
    elif ev=='sched_switch':
        nxt=re.search(r'next_comm=(\S+)',rest).group(1)
        if cpu in last_switch and inwin:
            p,t0=last_switch[cpu]
            if not p.startswith('swapper'): busy[cpu]+=t-max(t0,tmin)
        last_switch[cpu]=(nxt,t)
print('wakeups in window',nwake)
for k,v in wk.most_common(12): print('  %6d  %s'%(v,k))
for c in sorted(idle):
    tot=sum(len(v) for v in idle[c].values())
    print(f'cpu {c}: busy {busy[c]/(tmax-tmin)*100:.1f}%  idles {tot}')
    for s in sorted(idle[c]):
        L=idle[c][s]; ws=[w for _,w in L if w is not None]
        res=sum(x for x,_ in L)/len(L)*1e6
        sw=sum(ws)/max(1,len(ws))*1e6
        print(f'   {names[s]:5s} {len(L):6d} ({100*len(L)/tot:4.1f}%) mean residency {res:7.1f} us, sleep until wakeup {sw:7.1f} us, exit paid {EXIT[s]} us')

"""menu_select() inputs per chosen state, from the MENU lines menu_diag.patch prints to stderr
(PGRO_DIAG_MENU=1; a diagnostic build, not in the tree). usage: menu_choices.py FILE CPUS SKIP_LINES
(docs/validation.md, Session 19 pgro)"""
import sys,re,collections
rows=collections.defaultdict(list)
n=0
for line in open(sys.argv[1]):
    if not line.startswith('MENU'): continue
    n+=1
    if n<int(sys.argv[3]): continue
    d=dict(kv.split('=') for kv in line.split()[1:])
    if d['cpu'] not in sys.argv[2].split(','): continue
    rows[(d['cpu'],int(d['state']))].append(d)
names=['POLL','C1','C1E','C3','C6','C7s','C8']
for (c,s),L in sorted(rows.items()):
    typ=sum(1 for d in L if d['typ_us']!='4294967295')
    import statistics as st
    pr=[int(d['pred_us']) for d in L]; tm=[int(d['timer_us']) for d in L]; fa=[int(d['factor']) for d in L]
    stop=sum(1 for d in L if d['stop_tick']=='true')
    bk=collections.Counter(d['bucket'] for d in L).most_common(2)
    print(f"cpu {c} {names[s]:4s} n={len(L):5d}  typical found {100*typ/len(L):4.0f}%  pred median {st.median(pr):6.0f} us [{min(pr)}..{max(pr)}]  timer median {st.median(tm):6.0f} us  factor median {st.median(fa):5.0f}/8192  buckets {bk}  stop_tick {stop}")

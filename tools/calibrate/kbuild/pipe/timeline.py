"""Where in cc1's life its writes into the pipe fall, and how long as runs after cc1 exits
(strace -f -tt of `gcc -pipe`, written by measure.sh to /tmp/pipe-measure.pipe.strace)."""
import re, sys
path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/pipe-measure.pipe.strace"
comm, start, end, writes, reads = {}, {}, {}, [], []
def ts(s):
    h, m, x = s.split(":"); return int(h) * 3600 + int(m) * 60 + float(x)
for line in open(path):
    f = line.split(None, 2)
    if len(f) < 3: continue
    pid, t, rest = f[0], ts(f[1]), f[2]
    if rest.startswith("execve("):
        comm[pid] = rest.split('"')[1].rsplit("/", 1)[-1]; start[pid] = t
    elif rest.startswith("exit_group") or rest.startswith("+++ exited"):
        end.setdefault(pid, t)
    elif rest.startswith("write(1,") and comm.get(pid) == "cc1":
        writes.append(t)
    elif rest.startswith("read(0,") and comm.get(pid) == "as":
        reads.append(t)
by = {c: p for p, c in comm.items()}
c0, c1 = start[by["cc1"]], end[by["cc1"]]
a0, a1 = start[by["as"]], end[by["as"]]
life = c1 - c0
print(f"cc1 {life*1e3:.1f} ms (exec to exit), as {(a1-a0)*1e3:.1f} ms; as exits {(a1-c1)*1e3:.1f} ms after cc1")
print("cc1's writes at (fraction of its life):", " ".join(f"{(w-c0)/life:.2f}" for w in writes))

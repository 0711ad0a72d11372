"""Least-squares lines through run1.out's and run2.out's TCP_STREAM figures (netperf's sockets: Nagle on),
ns per message = a + b * size, per side; and TCP_RR's per-side figures, the mean of both runs.

Run: python3 fit.py  (prints a in ns and b in ns per byte for the send and the recv; the RR figures)
"""
import re
import statistics as st
from pathlib import Path

here = Path(__file__).parent
text = "".join((here / f).read_text() for f in ("run1.out", "run2.out"))
rows = [tuple(map(float, m)) for m in re.findall(r"^stream\s+(\d+) B: send\s+(\d+) ns, recv\s+(\d+) ns", text, re.M)]
xs = [r[0] for r in rows]
print(f"{len(rows)} stream rows (both runs)")
for i, name in [(1, "send"), (2, "recv")]:
    ys = [r[i] for r in rows]
    mx, my = st.mean(xs), st.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"stream {name:5s} {my - b * mx:7.0f} ns + {b:.4f} ns/B")
pat = r"^rr 1 B: client\s+(\d+) ns, server\s+(\d+) ns.*client send\s+(\d+) recv\s+(\d+), server recv\s+(\d+) send\s+(\d+)"
rr = [tuple(map(float, m)) for m in re.findall(pat, text, re.M)]
names = ["client", "server", "client send", "client recv", "server recv", "server send"]
for i, name in enumerate(names):
    print(f"rr {name:12s} {st.mean(r[i] for r in rr):7.0f} ns (runs: {', '.join(f'{r[i]:.0f}' for r in rr)})")

"""Least-squares line through udp.out's figures (both runs, every size): ns per datagram = a + b * size.

Run: python3 fit.py  (prints a in ns and b in ns per byte for send, recv and a dropped send)
"""
import re
import statistics as st
from pathlib import Path

PAT = r"size\s+(\d+) B: send\s+(\d+) ns, recv\s+(\d+) ns, send dropped\s+(\d+)"
rows = [tuple(map(float, m)) for m in re.findall(PAT, (Path(__file__).parent / "udp.out").read_text())]
xs = [r[0] for r in rows]
for i, name in [(1, "send"), (2, "recv"), (3, "send dropped")]:
    ys = [r[i] for r in rows]
    mx, my = st.mean(xs), st.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"{name:13s} {my - b * mx:7.0f} ns + {b:.4f} ns/B")

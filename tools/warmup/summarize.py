"""Per run of measure.py's output: the score (and with --power the package power) per
half second, then the mean over [W, W+1 s] for W = 0, 0.03, 0.5, 1, 2, 3 (4, 5, 7 when
the run is long enough) against the last second's.

    python3 tools/warmup/summarize.py FILE.jsonl [--power]
"""

import json
import math
import sys


def mean(rows, a, b, k):
    sel = [r for r in rows if a < r[0] <= b + 1e-9 and not math.isnan(r[k])]
    return sum(r[k] for r in sel) / len(sel) if sel else math.nan


def main():
    power = "--power" in sys.argv
    recs = [json.loads(line) for line in open(sys.argv[1])]
    for r in recs:
        rows, dur = r["intervals"], r["duration_s"]
        for k, what in ((1, "score"),) + (((2, "W"),) if power else ()):
            halves = [mean(rows, i / 2, (i + 1) / 2, k) for i in range(int(dur * 2))]
            starts = [w for w in (0, 0.03, 0.5, 1, 2, 3, 4, 5, 7) if w + 1 <= dur]
            last = mean(rows, dur - 1, dur, k)
            wins = [mean(rows, w, w + 1, k) / last for w in starts]
            print(f"{r['machine']:9} {r['bench']:10} {r['clients']:3} {r['config']:12} {what:5} per 0.5 s: "
                  + " ".join(f"{v:8.4g}" for v in halves))
            print(" " * 43 + "[W,W+1]/last: " + " ".join(f"W={w:g}:{v:.3f}" for w, v in zip(starts, wins)))


main()

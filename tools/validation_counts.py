"""Direction and within-2x counts of a `govlab reproduce --format json` output.

    govlab reproduce --format json > r.json; python3 tools/validation_counts.py r.json

prints, per evaluation and in total, how many published rows govlab gets in
the same direction and within a factor of two (all rows, and headline rows),
as docs/validation.md tabulates them before and after each model change.
With --by-metric, the same per evaluation and metric (score, package power,
performance per watt, ...), as its power rows are reported.
"""

from __future__ import annotations

import json
import sys


def counts(rows: list[dict]) -> tuple[int, int, int]:
    judged = [r for r in rows if r.get("verdict")]
    return (
        len(judged),
        sum(r["verdict"]["same_direction"] for r in judged),
        sum(r["verdict"]["within_2x"] for r in judged),
    )


def by_metric(evaluations: list[dict]) -> None:
    print("| evaluation | metric | rows | same direction | within 2x |")
    print("|---|---|---:|---:|---:|")
    for e in evaluations:
        metrics = sorted({r["metric"] for r in e["rows"] if r.get("verdict")})
        for m in metrics:
            n, same, close = counts([r for r in e["rows"] if r["metric"] == m])
            print(f"| {e['experiment']} | {m} | {n} | {same} | {close} |")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[2:] not in ([], ["--by-metric"]):
        print("usage: validation_counts.py R.json [--by-metric]", file=sys.stderr)
        sys.exit(2)
    try:
        with open(sys.argv[1]) as f:
            evaluations = json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        print(f"validation_counts.py: {sys.argv[1]}: not a readable `govlab reproduce --format json` output ({err})", file=sys.stderr)
        sys.exit(2)
    if isinstance(evaluations, dict):
        evaluations = [evaluations]  # `govlab reproduce NAME` of one evaluation
    if "--by-metric" in sys.argv[2:]:
        by_metric(evaluations)
        return
    print("| evaluation | rows | same direction | within 2x | headline rows | headline same direction | headline within 2x |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    total = [0] * 6
    for e in evaluations:
        every = counts(e["rows"])
        head = counts([r for r in e["rows"] if r.get("published", {}).get("headline")])
        if every[0] == 0:
            continue
        figures = every + head
        total = [a + b for a, b in zip(total, figures)]
        print(f"| {e['experiment']} | " + " | ".join(str(x) for x in figures) + " |")
    print("| **all** | " + " | ".join(f"**{x}**" for x in total) + " |")


if __name__ == "__main__":
    main()

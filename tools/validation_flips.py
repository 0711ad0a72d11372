"""Rows of one evaluation that changed verdict between two `govlab reproduce --format json` outputs.

    python3 tools/validation_flips.py before.json after.json [EXPERIMENT]

prints each output's counts (same direction, within 2x, headline) for the
evaluation (default: x86-freq-invariance) and every row whose direction
verdict differs ("IN": now the published direction, "OUT": no longer), with
the published figure and govlab's before and after, as docs/validation.md's
"before and after" sections list them. With one file, the wrong rows per
benchmark and metric.
"""

from __future__ import annotations

import collections
import json
import sys


def fail(message: str) -> None:
    print(f"validation_flips.py: {message}", file=sys.stderr)
    sys.exit(2)


def load(path: str, experiment: str) -> dict[tuple, dict]:
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        fail(f"{path}: not a readable `govlab reproduce --format json` output ({err})")
    evaluations = data if isinstance(data, list) else [data]
    matching = [e for e in evaluations if e.get("experiment", "").startswith(experiment)]
    if len(matching) != 1:
        names = ", ".join(e.get("experiment", "?") for e in evaluations)
        fail(f"{path}: {len(matching)} evaluations named {experiment}*; the file holds: {names}")
    return {(r["benchmark"], r["config"], r["metric"], str(r.get("param"))): r for r in matching[0]["rows"] if r.get("verdict")}


def summary(rows: dict[tuple, dict]) -> str:
    n = len(rows)
    if n == 0:
        return "no rows with a published figure"
    same = sum(r["verdict"]["same_direction"] for r in rows.values())
    close = sum(r["verdict"]["within_2x"] for r in rows.values())
    head = [r for r in rows.values() if r.get("published", {}).get("headline")]
    head_same = sum(r["verdict"]["same_direction"] for r in head)
    head_close = sum(r["verdict"]["within_2x"] for r in head)
    return f"{same}/{n} ({100 * same / n:.1f} %), within 2x {close}, headline {head_same}/{len(head)} ({head_close})"


def name(key: tuple) -> str:
    return "/".join(part for part in key if part != "None")


def main() -> None:
    args = [a for a in sys.argv[1:] if a.endswith(".json")]
    rest = [a for a in sys.argv[1:] if not a.endswith(".json")]
    experiment = rest[0] if rest else "x86-freq-invariance"
    if not 1 <= len(args) <= 2 or len(rest) > 1:
        fail("usage: validation_flips.py before.json [after.json] [EXPERIMENT]")
    before = load(args[0], experiment)
    print("before:" if len(args) > 1 else "rows:", summary(before))
    if len(args) == 1:
        wrong: collections.Counter = collections.Counter()
        total: collections.Counter = collections.Counter()
        for key, row in before.items():
            total[key[0], key[2]] += 1
            wrong[key[0], key[2]] += not row["verdict"]["same_direction"]
        for group in sorted(total):
            print(f"{group[0]:28s} {group[1]:14s} wrong {wrong[group]:2d} of {total[group]}")
        return
    after = load(args[1], experiment)
    print("after: ", summary(after))
    for key in sorted(before.keys() & after.keys()):
        a, b = before[key], after[key]
        if a["verdict"]["same_direction"] != b["verdict"]["same_direction"]:
            tag = "IN " if b["verdict"]["same_direction"] else "OUT"
            print(f"{tag} {name(key):60s} published {a['published']['value']:.3f}  {a['value']:.3f} -> {b['value']:.3f}")


if __name__ == "__main__":
    main()

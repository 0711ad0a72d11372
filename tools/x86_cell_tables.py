"""Every summary cell of the x86 frequency-invariance evaluation, published / govlab.

Reads the JSON of `govlab reproduce x86-freq-invariance [--quick] --format json`
and prints, per machine, the score, package-power and performance-per-watt
tables of docs/validation.md §6 (markdown; ✗: not the published direction;
~ after govlab's figure: its difference is not significant over the repeats).

    python3 tools/x86_cell_tables.py r.json
"""

from __future__ import annotations

import json
import sys

CONFIGS = ["intel_pstate", "1C", "3C", "4C", "8C", "12C"]
METRICS = [("score", "score"), ("pkg_power_w", "package W"), ("perf_per_watt", "perf per watt")]


def cell(row: dict) -> str:
    mark = "" if row["verdict"]["same_direction"] else " ✗"
    tilde = "" if row.get("significance", {}).get("significant", True) else "~"
    digits = 1 if row["metric"] == "pkg_power_w" else 2
    return f"{row['published']['value']:.{digits}f} / {row['value']:.{digits}f}{tilde}{mark}"


def tables(rows: list[dict]) -> str:
    out = []
    for machine in ("skylake", "broadwell", "haswell"):
        for metric, title in METRICS:
            mine = [r for r in rows if r["metric"] == metric and r["benchmark"].startswith(machine + "/")]
            configs = [c for c in CONFIGS if any(r["config"] == c for r in mine)]
            if not mine:
                continue
            out.append(f"{machine}, {title} (published / govlab):\n")
            head = ["benchmark"] + (["baseline W"] if metric == "pkg_power_w" else []) + configs
            out.append("| " + " | ".join(head) + " |")
            out.append("|---|" + "---:|" * (len(head) - 1))
            for bench in dict.fromkeys(r["benchmark"] for r in mine):
                by = {r["config"]: r for r in mine if r["benchmark"] == bench}
                first = next(iter(by.values()))
                line = [bench.split("/", 1)[1]]
                if metric == "pkg_power_w":
                    line.append(f"{first['published']['baseline_value']:.1f} / {first['baseline_value']:.1f}")
                line += [cell(by[c]) if c in by else "" for c in configs]
                out.append("| " + " | ".join(line) + " |")
            out.append("")
    return "\n".join(out)


def main() -> None:
    data = json.load(open(sys.argv[1]))
    rows = [r for r in data["rows"] if "verdict" in r and r.get("param") is None]
    print(tables(rows))


if __name__ == "__main__":
    main()

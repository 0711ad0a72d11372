"""The comparison as text, Markdown, CSV or JSON (pipeline stage: render).

:func:`render` writes the analyses of :mod:`govlab.analysis` in one of
:data:`FORMATS`: ``text`` (dense and aligned, for a mail, MMTests' layout),
``markdown``, ``csv`` (one figure per line) and ``json`` (everything, with the
per-run samples; undefined figures are null). What the tables hold, and why,
is told in :mod:`govlab.analysis`; numbers are written by :mod:`govlab.fmt`.
The HTML report (:mod:`govlab.report`) shows the same tables.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from govlab import analysis as compare, fmt, stats

__all__ = ["FORMATS", "render", "performance_rows", "stat_decimals"]

FORMATS = ("text", "markdown", "csv", "json")


# --- tables -----------------------------------------------------------------------


def performance_rows(a: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The performance table's rows, with the ``Gmean all`` score row when the axis has several values."""
    rows = list(a["performance"])
    if a["axis"] and len(a["axis"]["values"]) > 1:
        rows.append(
            {
                "stat": "Gmean",
                "label": "all",
                "cells": [
                    {"config": s["config"], "value": s["score"], "pct": s["pct"], "significant": s["significant"]}
                    for s in a["scores"]
                ],
            }
        )
    return rows



def render(analyses: Sequence[Mapping[str, Any]], fmt: str = "text") -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); the summary when there are several benchmarks."""
    summary = compare.summarise(analyses) if len(analyses) > 1 else None
    if fmt == "text":
        return _text(analyses, summary)
    if fmt == "markdown":
        return _markdown(analyses, summary)
    if fmt == "csv":
        return _csv(analyses, summary)
    if fmt == "json":
        return _json(analyses, summary)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


# numbers -----------------------------------------------------------------------------


def _json(analyses: Sequence[Mapping[str, Any]], summary: Mapping[str, Any] | None) -> str:
    data = {"benchmarks": list(analyses), "summary": summary}
    return json.dumps(fmt.finite(data), indent=2) + "\n"


def _decimals(values: Iterable[float]) -> int:
    """MMTests prints 2 decimals, 4 for small figures; tiny figures get 4 significant digits."""
    finite = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v) and v != 0]
    if not finite:
        return 2
    m = max(finite)
    if m >= 10:
        return 2
    if m >= 0.01:
        return 4
    return min(12, 3 - math.floor(math.log10(m)))


#: Statistics printed with the same decimals (they share the metric's scale).
_SAME_SCALE = {"Amean": "level", "Hmean": "level", "Gmean": "level", "Min": "level", "Max": "level"}


def stat_decimals(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Decimals per statistic of a table; the mean-like ones and Min/Max share theirs."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        groups.setdefault(_SAME_SCALE.get(r["stat"], r["stat"]), []).extend(c["value"] for c in r["cells"])
    decimals = {k: _decimals(v) for k, v in groups.items()}
    return {r["stat"]: decimals[_SAME_SCALE.get(r["stat"], r["stat"])] for r in rows}


#: The legend of the ``[x%]`` mark.
NO_VARIANCE = "[x%] no variance: every repeat identical on both sides, so no test (the seed does not reach the workload)"


def _mark(p: float | None, significant: bool | None, width: int, no_variance: bool = False) -> str:
    """``(  1.23%)``, ``*  1.23%*`` when significant (MMTests' marker), ``[  1.23%]`` when there is no variance to test."""
    inner = fmt.pct(p).rjust(width)
    if no_variance:
        return f"[{inner}]"
    return f"*{inner}*" if significant else f"({inner})"


def _has_no_variance(rows: Sequence[Mapping[str, Any]]) -> bool:
    return any(c.get("no_variance") for r in rows for c in r["cells"])


# text ----------------------------------------------------------------------------------


def _text(analyses: Sequence[Mapping[str, Any]], summary: Mapping[str, Any] | None) -> str:
    parts = [_text_benchmark(a) for a in analyses]
    if summary is not None:
        parts.append(_text_summary(summary, analyses))
    return "\n\n".join(parts).rstrip("\n") + "\n"


def _heading(title: str, under: str = "=") -> list[str]:
    return [title, under * len(title)]


def _text_benchmark(a: Mapping[str, Any]) -> str:
    m = a["metric"]
    lines = _heading(a["name"].upper())
    if a.get("description"):
        lines.append(a["description"])
    seeds = a["seeds"]
    lines.append(
        f"WORKLOAD: {a['workload']} on {a['platform']}, {a['duration']} per run, "
        f"{len(seeds)} repeat{'s' if len(seeds) != 1 else ''} (seed{'s' if len(seeds) != 1 else ''} {fmt.seed_range(seeds)})"
    )
    if a["axis"]:
        lines.append(f"VARIES: {a['axis']['name']} = {', '.join(fmt.value_label(v) for v in a['axis']['values'])}")
    unit = f" ({m['unit']})" if m.get("unit") else ""
    lines.append(f"MEASURES: {m['name']}{unit}")
    lines.append(f"{m['better'].upper()} is better")
    lines.append("CONFIGS:")
    width = max(len(c["name"]) for c in a["configs"])
    for c in a["configs"]:
        extra = "  (baseline)" if c["name"] == a["baseline"] else ""
        options = f", platform {c['platform']}" if c.get("platform_options") else ""
        lines.append(f"  {c['name']:<{width}}  cpufreq {c['cpufreq']}, cpuidle {c['cpuidle']}{options}{extra}")
    if a["missing_runs"]:
        lines.append(f"INCOMPLETE: {a['missing_runs']} of {a['runs']} runs are not in the database")
    lines.append("")

    perf_rows = performance_rows(a)
    names = [c["name"] for c in a["configs"]]
    lines += _text_table(perf_rows, names)
    lines.append("")
    lines.append(
        f"(x%) difference to {a['baseline']}, positive = better; *x%* significant "
        f"(Welch's t-test, p < {stats.ALPHA:g}). Gmean all: geometric mean of the {a['mean']} over {a['axis']['name'] if a['axis'] else 'the values'}."
        if len(perf_rows) > len(a["performance"])
        else f"(x%) difference to {a['baseline']}, positive = better; *x%* significant (Welch's t-test, p < {stats.ALPHA:g})."
    )
    lines.append("")
    lines += _heading("ENERGY AND POWER", "-")
    ppw_unit = next((r["unit"] for r in a["energy"] if r["stat"] == "Perf/W"), "")
    lines.append(f"Amean per run. Energy in J; Power, Package and DRAM in W: LOWER is better. Perf/W in {ppw_unit}: HIGHER is better.")
    lines.append("")
    lines += _text_table(a["energy"], names)
    return "\n".join(lines)


def _text_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """MMTests' layout: stat, parameter value, then per config ``value (pct%)``."""
    decimals = stat_decimals(rows)
    value_w = max([10, *(len(fmt.fixed(c["value"], decimals[r["stat"]])) for r in rows for c in r["cells"])])
    pct_w = max([7, *(len(fmt.pct(c["pct"])) for r in rows for c in r["cells"])])
    stat_w = max(len(r["stat"]) for r in rows)
    label_w = max(len(str(r["label"])) for r in rows)
    cell_w = value_w + 1 + pct_w + 2
    lead = " " * (stat_w + 1 + label_w)
    lines = [lead + "".join("  " + n.rjust(cell_w) for n in names)]
    for r in rows:
        cells = {c["config"]: c for c in r["cells"]}
        text = f"{r['stat']:<{stat_w}} {str(r['label']):<{label_w}}"
        for n in names:
            c = cells.get(n)
            if c is None:
                text += "  " + "-".rjust(cell_w)
                continue
            mark = _mark(c["pct"], c.get("significant"), pct_w, bool(c.get("no_variance")))
            text += "  " + fmt.fixed(c["value"], decimals[r["stat"]]).rjust(value_w) + " " + mark
        lines.append(text.rstrip())
    if _has_no_variance(rows):
        lines.append(NO_VARIANCE + ".")
    return lines


def _text_summary(summary: Mapping[str, Any], analyses: Sequence[Mapping[str, Any]]) -> str:
    lines = _heading("SUMMARY")
    lines.append(
        "Overall score of each benchmark: the geometric mean over its parameter values of the "
        "per-value mean (Hmean for rates, Amean otherwise), against the benchmark's baseline."
    )
    lines.append(
        f"Large: {compare.LARGE_PCT:g}% or more; moderate: {compare.NEUTRAL_PCT:g}% to {compare.LARGE_PCT:g}%; neutral: under "
        f"{compare.NEUTRAL_PCT:g}%, or not significant (fewer than half of the values differ at p < {stats.ALPHA:g}, Welch's t-test)."
    )
    for g in summary["groups"]:
        lines.append("")
        lines.append(f"{g['config']} against {', '.join(g['baselines'])}")
        for name in compare.CATEGORIES:
            entries = g["categories"][name]
            if not entries:
                continue
            lines.append(f"  {name.capitalize()}:")
            for e in entries:
                note = "" if e["significant"] or not math.isfinite(e["pct"]) else " (not significant)"
                lines.append(f"    - {e['benchmark']} ({e['metric']}): {fmt.signed_pct(e['pct'])}{note}")
    lines.append("")
    lines += _heading("RATIOS", "-")
    lines.append("Against each benchmark's baseline (= 1); above 1 is better. Gmean: geometric mean over the benchmarks.")
    lines.append("")
    lines += _ratio_table(summary["ratios"])
    return "\n".join(lines)


def _ratio_table(ratios: Mapping[str, Any]) -> list[str]:
    configs = ratios["configs"]
    rows = [(r["benchmark"], r["perf"], r["ppw"]) for r in ratios["rows"]]
    rows.append(("Gmean", ratios["gmean"]["perf"], ratios["gmean"]["ppw"]))
    name_w = max([len("benchmark"), *(len(r[0]) for r in rows)])
    col_w = max([8, *(len(c) for c in configs)])
    block_w = len(configs) * (col_w + 2)
    lines = [
        (" " * name_w + "  " + "performance".center(block_w) + "  " + "performance-per-watt".center(block_w)).rstrip(),
        "benchmark".ljust(name_w)
        + "".join("  " + c.rjust(col_w) for c in configs)
        + "  "
        + "".join("  " + c.rjust(col_w) for c in configs),
    ]
    for name, perf, ppw in rows:
        text = name.ljust(name_w)
        text += "".join("  " + (fmt.fixed(perf[c], 3) if c in perf else "-").rjust(col_w) for c in configs)
        text += "  " + "".join("  " + (fmt.fixed(ppw[c], 3) if c in ppw else "-").rjust(col_w) for c in configs)
        lines.append(text.rstrip())
    return lines


# markdown -------------------------------------------------------------------------------


def _markdown(analyses: Sequence[Mapping[str, Any]], summary: Mapping[str, Any] | None) -> str:
    out: list[str] = []
    for a in analyses:
        m = a["metric"]
        out.append(f"## {a['name']}")
        out.append("")
        if a.get("description"):
            out += [a["description"], ""]
        axis = f"; varies `{a['axis']['name']}`" if a["axis"] else ""
        unit = f" ({m['unit']})" if m.get("unit") else ""
        out.append(
            f"`{a['workload']}` on `{a['platform']}`, {a['duration']} per run, seeds {fmt.seed_range(a['seeds'])}{axis}. "
            f"Measures `{m['name']}`{unit}, **{m['better']} is better**. Baseline: `{a['baseline']}`."
        )
        out.append("")
        for c in a["configs"]:
            out.append(f"- `{c['name']}`: cpufreq `{c['cpufreq']}`, cpuidle `{c['cpuidle']}`")
        if a["missing_runs"]:
            out.append(f"\n**Incomplete:** {a['missing_runs']} of {a['runs']} runs are not in the database.")
        out.append("")
        names = [c["name"] for c in a["configs"]]
        perf_rows = performance_rows(a)
        out += _md_table(perf_rows, names, a["axis"]["name"] if a["axis"] else "")
        out.append("")
        out.append(
            f"Percentages: difference to `{a['baseline']}`, positive = better; "
            f"\\*x%\\* = significant (Welch's t-test, p < {stats.ALPHA:g})."
        )
        out.append("")
        out.append("### Energy and power")
        out.append("")
        out += _md_table(a["energy"], names, a["axis"]["name"] if a["axis"] else "", units=True)
        out.append("")
    if summary is not None:
        out.append("## Summary")
        out.append("")
        out.append(
            f"Overall score: geometric mean over the parameter values. Large: ≥ {compare.LARGE_PCT:g}%; "
            f"moderate: ≥ {compare.NEUTRAL_PCT:g}%; neutral: smaller or not significant."
        )
        for g in summary["groups"]:
            out.append("")
            out.append(f"### {g['config']} against {', '.join(g['baselines'])}")
            for name in compare.CATEGORIES:
                entries = g["categories"][name]
                if not entries:
                    continue
                out.append("")
                out.append(f"**{name.capitalize()}**")
                out.append("")
                for e in entries:
                    note = "" if e["significant"] or not math.isfinite(e["pct"]) else " (not significant)"
                    out.append(f"- {e['benchmark']} (`{e['metric']}`): {fmt.signed_pct(e['pct'])}{note}")
        out.append("")
        out.append("### Ratios (baseline = 1, above 1 is better)")
        out.append("")
        r = summary["ratios"]
        configs = r["configs"]
        out.append("| benchmark | " + " | ".join(f"perf {c}" for c in configs) + " | " + " | ".join(f"perf/W {c}" for c in configs) + " |")
        out.append("|---|" + "---:|" * (2 * len(configs)))
        for name, perf, ppw in [(x["benchmark"], x["perf"], x["ppw"]) for x in r["rows"]] + [("Gmean", r["gmean"]["perf"], r["gmean"]["ppw"])]:
            cells = [fmt.fixed(perf[c], 3) if c in perf else "-" for c in configs] + [fmt.fixed(ppw[c], 3) if c in ppw else "-" for c in configs]
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _md_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str], axis_name: str, units: bool = False) -> list[str]:
    dec = stat_decimals(rows)
    lines = [f"| | {axis_name} | " + " | ".join(names) + " |", "|---|---|" + "---:|" * len(names)]
    for r in rows:
        cells = {c["config"]: c for c in r["cells"]}
        stat = f"{r['stat']} ({r['unit']})" if units and r.get("unit") else r["stat"]
        out = []
        for n in names:
            c = cells.get(n)
            if c is None:
                out.append("-")
                continue
            pct = fmt.pct(c["pct"])
            if c.get("no_variance"):
                mark = f"[{pct}] no variance"
            else:
                mark = f"\\*{pct}\\*" if c.get("significant") else f"({pct})"
            out.append(f"{fmt.fixed(c['value'], dec[r['stat']])} {mark}")
        lines.append(f"| {stat} | {r['label']} | " + " | ".join(out) + " |")
    return lines


# csv ---------------------------------------------------------------------------------------

_CSV_COLUMNS = [
    "benchmark", "section", "stat", "axis", "axis_value", "config", "baseline",
    "value", "unit", "pct_diff", "significant", "p_value", "n", "category",
]


def _csv(analyses: Sequence[Mapping[str, Any]], summary: Mapping[str, Any] | None) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=_CSV_COLUMNS, lineterminator="\n")
    w.writeheader()

    def put(**row: Any) -> None:
        w.writerow({k: _csv_value(row.get(k)) for k in _CSV_COLUMNS})

    for a in analyses:
        axis = a["axis"]["name"] if a["axis"] else ""
        for section, rows in (("performance", a["performance"]), ("energy", a["energy"])):
            for r in rows:
                unit = r.get("unit") or (a["metric"].get("unit") if r["stat"] != "CoeffVar" else "%")
                for c in r["cells"]:
                    put(
                        benchmark=a["name"], section=section, stat=r["stat"], axis=axis,
                        axis_value=r["axis_value"], config=c["config"], baseline=a["baseline"],
                        value=c["value"], unit=unit, pct_diff=c["pct"],
                        significant="no variance" if c.get("no_variance") else c["significant"],
                        p_value=c["p_value"], n=c.get("n"),
                    )
        for s in a["scores"]:
            put(
                benchmark=a["name"], section="score", stat="Gmean", axis=axis, config=s["config"],
                baseline=a["baseline"], value=s["score"], unit=a["metric"].get("unit"), pct_diff=s["pct"],
                significant=s["significant"],
                category=None if s["config"] == a["baseline"] else compare.category(s["pct"], s["significant"]),
            )
            put(benchmark=a["name"], section="ratio", stat="performance", config=s["config"], baseline=a["baseline"], value=s["perf_ratio"])
            put(benchmark=a["name"], section="ratio", stat="perf_per_watt", config=s["config"], baseline=a["baseline"], value=s["ppw_ratio"])
    if summary is not None:
        for kind, stat in (("perf", "performance"), ("ppw", "perf_per_watt")):
            for c, v in summary["ratios"]["gmean"][kind].items():
                put(benchmark="Gmean", section="ratio", stat=stat, config=c, value=v)
    return buf.getvalue()


def _csv_value(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ""
    return v

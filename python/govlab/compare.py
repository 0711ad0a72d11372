"""MMTests-style comparison tables of an experiment's runs.

For each experiment (a *benchmark*: one workload over one parameter axis) the
report has three parts.

**Performance.** One column per configuration, the baseline first; for each
parameter value the rows ``Amean``, ``Hmean`` (rates only: metrics where
higher is better), ``Stddev``, ``CoeffVar``, ``Min`` and ``Max`` of the
workload's primary metric over the repeats, and when the axis has several
values a last row ``Gmean all``: the benchmark's overall score, the geometric
mean over the parameter values of the per-value mean (Hmean for rates, Amean
otherwise), as MMTests sums a benchmark up. Each figure is followed by its
difference to the baseline in percent, signed so that **positive is an
improvement** (see :func:`govlab.stats.pct_diff`; Stddev and CoeffVar are
always lower-is-better). As in MMTests, a difference printed between
asterisks, ``*  12.34%*``, instead of parentheses, ``(  12.34%)``, is
statistically significant: Welch's t-test on the per-run values against the
baseline's, two-sided, p < 0.05 (only the mean rows are tested). The overall
score counts as significant when at least half of the parameter values are,
in the direction of the score.

**Energy and power.** Per parameter value: energy of a run (J), average power
(W) and performance-per-watt, each the arithmetic mean over the repeats,
against the baseline the same way. Performance-per-watt of one run is
``value / avg_power_w`` for a higher-is-better metric and
``1 / (value * avg_power_w)`` for a lower-is-better one (latency, time), so
that higher is always better.

**Summary** (when the report covers more than one benchmark): each
configuration's overall scores, sorted as the 2018 HWP-boost post sorts its
results: large wins (at least :data:`LARGE_PCT` %), moderate wins (at least
:data:`NEUTRAL_PCT` %), neutral (smaller, *or not significant*), moderate and
large losses; then the ratio tables of the OSPM 2020 datacenter talk:
performance ratio and performance-per-watt ratio per benchmark and
configuration, baseline = 1 and above 1 better, with their geometric mean
over the benchmarks. A benchmark's performance ratio is the ratio of the
overall scores; its performance-per-watt ratio is the geometric mean over the
parameter values of the ratio of the mean performance-per-watt.

Formats: ``text`` (dense and aligned, for a mail), ``markdown``, ``csv`` (one
figure per line) and ``json`` (everything, with the per-run samples;
undefined figures are null).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from govlab import stats
from govlab.store import Store

__all__ = [
    "FORMATS",
    "LARGE_PCT",
    "NEUTRAL_PCT",
    "CATEGORIES",
    "analyse",
    "summarise",
    "from_store",
    "render",
    "performance_rows",
]

FORMATS = ("text", "markdown", "csv", "json")
#: An overall difference below this (in percent, either way) is neutral.
NEUTRAL_PCT = 1.0
#: An overall difference of at least this (in percent) is large.
LARGE_PCT = 5.0
#: The summary's categories, best first.
CATEGORIES = ("large wins", "moderate wins", "neutral", "moderate losses", "large losses")

_NAN = float("nan")


# --- loading -------------------------------------------------------------------------


def from_store(store: Store, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Analyse the experiments recorded in ``store`` from their stored runs, simulating nothing.

    ``names`` picks experiments by name (default: all, in the order first stored).
    """
    recorded = store.experiments()
    if names is not None:
        wanted = list(names)
        known = {x["definition"]["name"] for x in recorded}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise ValueError(
                f"{store.path}: no experiment named {', '.join(map(repr, unknown))}; "
                f"it holds {', '.join(sorted(known)) or 'none'}"
            )
        recorded = [x for x in recorded if x["definition"]["name"] in wanted]
    if not recorded:
        raise ValueError(f"{store.path}: no experiments recorded (run `govlab compare` with --db {store.path})")
    results = store.results({r["key"] for x in recorded for r in x["runs"]})
    return [analyse(x["definition"], x["runs"], results) for x in recorded]


# --- analysis ------------------------------------------------------------------------


def analyse(definition: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The comparison of one experiment as plain data (what ``--format json`` prints).

    ``definition`` is :meth:`Experiment.to_dict`, ``runs`` its run list
    (config, axis_value, repeat, seed, key) and ``results`` the stored results
    by key; runs without a result are counted in ``missing_runs``.
    """
    configs = [c["name"] for c in definition["configs"]]
    baseline = definition["baseline"]
    configs = [baseline] + [c for c in configs if c != baseline]
    axis = definition.get("axis")
    values = list(axis["values"]) if axis else [None]

    samples: dict[tuple[str, int], dict[str, list[float]]] = {
        (c, i): {"metric": [], "energy_j": [], "avg_power_w": []} for c in configs for i in range(len(values))
    }
    metric: dict[str, Any] | None = None
    missing = 0
    for run in sorted(runs, key=lambda r: (r["repeat"], r["seed"])):
        result = results.get(run["key"])
        if result is None:
            missing += 1
            continue
        pm = result["primary_metric"]
        this = {"name": pm["name"], "unit": pm.get("unit", ""), "better": pm["better"]}
        if metric is None:
            metric = this
        elif this != metric:
            raise ValueError(f"{definition['name']}: runs report different primary metrics: {metric} and {this}")
        index = _index_of(values, run["axis_value"])
        cell = samples[(run["config"], index)]
        cell["metric"].append(float(pm["value"]))
        cell["energy_j"].append(float(result["energy_j"]))
        cell["avg_power_w"].append(float(result["avg_power_w"]))
    if metric is None:
        metric = {"name": "?", "unit": "", "better": "higher"}
    better = metric["better"]
    for cell in samples.values():
        cell["perf_per_watt"] = [_ppw(v, p, better) for v, p in zip(cell["metric"], cell["avg_power_w"], strict=True)]

    labels = [_value_label(v, metric["name"]) for v in values]
    rate = better == "higher"
    perf_stats = [("Amean", "amean", better, True)]
    if rate:
        perf_stats.append(("Hmean", "hmean", better, True))
    perf_stats += [
        ("Stddev", "stddev", "lower", False),
        ("CoeffVar", "coeffvar", "lower", False),
        ("Min", "minimum", better, False),
        ("Max", "maximum", better, False),
    ]
    performance = [
        _row(stat, labels[i], values[i], fn, direction, tested, [samples[(c, i)]["metric"] for c in configs], configs)
        for stat, fn, direction, tested in perf_stats
        for i in range(len(values))
    ]
    energy_rows = [
        ("Energy", "energy_j", "lower", "J"),
        ("Power", "avg_power_w", "lower", "W"),
        ("Perf/W", "perf_per_watt", "higher", _ppw_unit(metric)),
    ]
    energy = [
        {**_row(stat, labels[i], values[i], "amean", direction, True, [samples[(c, i)][key] for c in configs], configs), "unit": unit}
        for stat, key, direction, unit in energy_rows
        for i in range(len(values))
    ]

    # the overall score: geometric mean over the parameter values of the per-value mean
    mean_fn = stats.hmean if rate else stats.amean
    mean_stat = "Hmean" if rate else "Amean"
    base_means = [mean_fn(samples[(baseline, i)]["metric"]) for i in range(len(values))]
    base_ppw = [stats.amean(samples[(baseline, i)]["perf_per_watt"]) for i in range(len(values))]
    scores = []
    for c in configs:
        means = [mean_fn(samples[(c, i)]["metric"]) for i in range(len(values))]
        score, base_score = stats.gmean(means), stats.gmean(base_means)
        pct = stats.pct_diff(score, base_score, better)
        tests = [stats.welch(samples[(c, i)]["metric"], samples[(baseline, i)]["metric"]) for i in range(len(values))]
        agreeing = sum(
            1 for i, t in enumerate(tests)
            if t.significant and math.copysign(1, stats.pct_diff(means[i], base_means[i], better)) == math.copysign(1, pct)
        )
        ppw = [stats.amean(samples[(c, i)]["perf_per_watt"]) for i in range(len(values))]
        scores.append(
            {
                "config": c,
                "score": score,
                "pct": pct,
                "significant": None if c == baseline else (pct != 0 and not math.isnan(pct) and 2 * agreeing >= len(values)),
                "significant_values": None if c == baseline else agreeing,
                "values": len(values),
                "perf_ratio": stats.ratio(score, base_score, better),
                "ppw_ratio": stats.gmean([stats.ratio(n, b, "higher") for n, b in zip(ppw, base_ppw, strict=True)]),
            }
        )

    by_name = {c["name"]: c for c in definition["configs"]}
    return {
        "name": definition["name"],
        "description": definition.get("description", ""),
        "path": definition.get("path"),
        "platform": definition["platform"],
        "workload": definition["workload"],
        "duration": definition["duration"],
        "seeds": list(definition["seeds"]),
        "axis": axis,
        "metric": metric,
        "mean": mean_stat,
        "baseline": baseline,
        "configs": [by_name[c] for c in configs],
        "runs": len(runs),
        "missing_runs": missing,
        "performance": performance,
        "energy": energy,
        "scores": scores,
        "samples": [
            {"config": c, "axis_value": values[i], **samples[(c, i)]} for c in configs for i in range(len(values))
        ],
    }


def _row(stat, label, value, fn_name, direction, tested, cells, configs) -> dict[str, Any]:
    fn = getattr(stats, fn_name)
    base = cells[0]
    base_value = fn(base)
    out = []
    for c, xs in zip(configs, cells, strict=True):
        v = fn(xs)
        entry = {"config": c, "value": v, "pct": stats.pct_diff(v, base_value, direction), "n": len(xs)}
        if tested and c != configs[0]:
            w = stats.welch(xs, base)
            entry["significant"] = w.significant
            entry["p_value"] = w.p
        else:
            entry["significant"] = None
            entry["p_value"] = None
        out.append(entry)
    return {"stat": stat, "label": label, "axis_value": value, "better": direction, "cells": out}


def _ppw(value: float, power_w: float, better: str) -> float:
    if power_w <= 0 or (better == "lower" and value <= 0):
        return _NAN
    return value / power_w if better == "higher" else 1.0 / (value * power_w)


def _ppw_unit(metric: Mapping[str, Any]) -> str:
    unit = metric.get("unit") or metric["name"]
    return f"{unit}/W" if metric["better"] == "higher" else f"1/({unit}*W)"


def _index_of(values: list[Any], value: Any) -> int:
    for i, v in enumerate(values):
        if json.dumps(v) == json.dumps(value):
            return i
    raise ValueError(f"run at axis value {value!r} is not on the axis {values!r}")


def _value_label(value: Any, metric_name: str) -> str:
    if value is None:
        return metric_name
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- the summary over benchmarks -----------------------------------------------------------


def category(pct: float, significant: bool | None) -> str:
    """Where an overall difference goes in the summary (see the module doc)."""
    if not significant or not math.isfinite(pct) or abs(pct) < NEUTRAL_PCT:
        return "neutral"
    size = "large" if abs(pct) >= LARGE_PCT else "moderate"
    return f"{size} {'wins' if pct > 0 else 'losses'}"


def summarise(analyses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each configuration's overall scores, sorted into categories, and the ratio tables."""
    configs: list[str] = []
    for a in analyses:
        for s in a["scores"]:
            if s["config"] not in configs:
                configs.append(s["config"])
    groups = []
    for c in configs:
        entries = []
        for a in analyses:
            for s in a["scores"]:
                if s["config"] == c and c != a["baseline"]:
                    entries.append(
                        {
                            "benchmark": a["name"],
                            "metric": a["metric"]["name"],
                            "baseline": a["baseline"],
                            "pct": s["pct"],
                            "significant": s["significant"],
                            "category": category(s["pct"], s["significant"]),
                        }
                    )
        if not entries:
            continue
        entries.sort(key=lambda e: -e["pct"] if math.isfinite(e["pct"]) else math.inf)
        groups.append(
            {
                "config": c,
                "baselines": sorted({e["baseline"] for e in entries}),
                "categories": {k: [e for e in entries if e["category"] == k] for k in CATEGORIES},
            }
        )
    rows = []
    for a in analyses:
        by = {s["config"]: s for s in a["scores"]}
        rows.append(
            {
                "benchmark": a["name"],
                "baseline": a["baseline"],
                "perf": {c: by[c]["perf_ratio"] for c in configs if c in by},
                "ppw": {c: by[c]["ppw_ratio"] for c in configs if c in by},
            }
        )
    gmean = {
        kind: {c: stats.gmean([r[kind][c] for r in rows if c in r[kind]]) for c in configs}
        for kind in ("perf", "ppw")
    }
    return {
        "neutral_pct": NEUTRAL_PCT,
        "large_pct": LARGE_PCT,
        "alpha": stats.ALPHA,
        "groups": groups,
        "ratios": {"configs": configs, "rows": rows, "gmean": gmean},
    }


# --- rendering -----------------------------------------------------------------------


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
    summary = summarise(analyses) if len(analyses) > 1 else None
    if fmt == "text":
        return _text(analyses, summary)
    if fmt == "markdown":
        return _markdown(analyses, summary)
    if fmt == "csv":
        return _csv(analyses, summary)
    if fmt == "json":
        data = {"benchmarks": list(analyses), "summary": summary}
        return json.dumps(_finite(data), indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _finite(data: Any) -> Any:
    """nan and inf as null, for standard JSON."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, Mapping):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(v) for v in data]
    return data


# numbers -----------------------------------------------------------------------------


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


def _stat_decimals(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Decimals per statistic of a table; the mean-like ones and Min/Max share theirs."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        groups.setdefault(_SAME_SCALE.get(r["stat"], r["stat"]), []).extend(c["value"] for c in r["cells"])
    decimals = {k: _decimals(v) for k, v in groups.items()}
    return {r["stat"]: decimals[_SAME_SCALE.get(r["stat"], r["stat"])] for r in rows}


def _num(v: float, decimals: int) -> str:
    if v is None or math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{decimals}f}"


def _pct_text(p: float | None) -> str:
    """A difference in percent; ``n/a`` when undefined, including against a zero
    baseline (a Stddev of 0 when every repeat gave the same value)."""
    if p is None or not math.isfinite(p):
        return "n/a"
    return f"{p:.2f}%"


def _mark(p: float | None, significant: bool | None, width: int) -> str:
    """``(  1.23%)``, or ``*  1.23%*`` when significant (MMTests' marker)."""
    inner = _pct_text(p).rjust(width)
    return f"*{inner}*" if significant else f"({inner})"


def _signed_pct(p: float) -> str:
    if not math.isfinite(p):
        return "n/a"
    return f"{p:+.2f}%"


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
        f"{len(seeds)} repeat{'s' if len(seeds) != 1 else ''} (seed{'s' if len(seeds) != 1 else ''} {_seed_text(seeds)})"
    )
    if a["axis"]:
        lines.append(f"VARIES: {a['axis']['name']} = {', '.join(_value_label(v, '') for v in a['axis']['values'])}")
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
    lines.append(f"Amean per run. Energy in J and Power in W: LOWER is better. Perf/W in {ppw_unit}: HIGHER is better.")
    lines.append("")
    lines += _text_table(a["energy"], names)
    return "\n".join(lines)


def _seed_text(seeds: Sequence[int]) -> str:
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _text_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """MMTests' layout: stat, parameter value, then per config ``value (pct%)``."""
    decimals = _stat_decimals(rows)
    value_w = max([10, *(len(_num(c["value"], decimals[r["stat"]])) for r in rows for c in r["cells"])])
    pct_w = max([7, *(len(_pct_text(c["pct"])) for r in rows for c in r["cells"])])
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
            text += "  " + _num(c["value"], decimals[r["stat"]]).rjust(value_w) + " " + _mark(c["pct"], c.get("significant"), pct_w)
        lines.append(text.rstrip())
    return lines


def _text_summary(summary: Mapping[str, Any], analyses: Sequence[Mapping[str, Any]]) -> str:
    lines = _heading("SUMMARY")
    lines.append(
        "Overall score of each benchmark: the geometric mean over its parameter values of the "
        "per-value mean (Hmean for rates, Amean otherwise), against the benchmark's baseline."
    )
    lines.append(
        f"Large: {LARGE_PCT:g}% or more; moderate: {NEUTRAL_PCT:g}% to {LARGE_PCT:g}%; neutral: under "
        f"{NEUTRAL_PCT:g}%, or not significant (fewer than half of the values differ at p < {stats.ALPHA:g}, Welch's t-test)."
    )
    for g in summary["groups"]:
        lines.append("")
        lines.append(f"{g['config']} against {', '.join(g['baselines'])}")
        for name in CATEGORIES:
            entries = g["categories"][name]
            if not entries:
                continue
            lines.append(f"  {name.capitalize()}:")
            for e in entries:
                note = "" if e["significant"] or not math.isfinite(e["pct"]) else " (not significant)"
                lines.append(f"    - {e['benchmark']} ({e['metric']}): {_signed_pct(e['pct'])}{note}")
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
        text += "".join("  " + (_num(perf[c], 3) if c in perf else "-").rjust(col_w) for c in configs)
        text += "  " + "".join("  " + (_num(ppw[c], 3) if c in ppw else "-").rjust(col_w) for c in configs)
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
            f"`{a['workload']}` on `{a['platform']}`, {a['duration']} per run, seeds {_seed_text(a['seeds'])}{axis}. "
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
            f"Overall score: geometric mean over the parameter values. Large: ≥ {LARGE_PCT:g}%; "
            f"moderate: ≥ {NEUTRAL_PCT:g}%; neutral: smaller or not significant."
        )
        for g in summary["groups"]:
            out.append("")
            out.append(f"### {g['config']} against {', '.join(g['baselines'])}")
            for name in CATEGORIES:
                entries = g["categories"][name]
                if not entries:
                    continue
                out.append("")
                out.append(f"**{name.capitalize()}**")
                out.append("")
                for e in entries:
                    note = "" if e["significant"] or not math.isfinite(e["pct"]) else " (not significant)"
                    out.append(f"- {e['benchmark']} (`{e['metric']}`): {_signed_pct(e['pct'])}{note}")
        out.append("")
        out.append("### Ratios (baseline = 1, above 1 is better)")
        out.append("")
        r = summary["ratios"]
        configs = r["configs"]
        out.append("| benchmark | " + " | ".join(f"perf {c}" for c in configs) + " | " + " | ".join(f"perf/W {c}" for c in configs) + " |")
        out.append("|---|" + "---:|" * (2 * len(configs)))
        for name, perf, ppw in [(x["benchmark"], x["perf"], x["ppw"]) for x in r["rows"]] + [("Gmean", r["gmean"]["perf"], r["gmean"]["ppw"])]:
            cells = [_num(perf[c], 3) if c in perf else "-" for c in configs] + [_num(ppw[c], 3) if c in ppw else "-" for c in configs]
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _md_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str], axis_name: str, units: bool = False) -> list[str]:
    dec = _stat_decimals(rows)
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
            pct = _pct_text(c["pct"])
            mark = f"\\*{pct}\\*" if c.get("significant") else f"({pct})"
            out.append(f"{_num(c['value'], dec[r['stat']])} {mark}")
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
                        value=c["value"], unit=unit, pct_diff=c["pct"], significant=c["significant"],
                        p_value=c["p_value"], n=c.get("n"),
                    )
        for s in a["scores"]:
            put(
                benchmark=a["name"], section="score", stat="Gmean", axis=axis, config=s["config"],
                baseline=a["baseline"], value=s["score"], unit=a["metric"].get("unit"), pct_diff=s["pct"],
                significant=s["significant"],
                category=None if s["config"] == a["baseline"] else category(s["pct"], s["significant"]),
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

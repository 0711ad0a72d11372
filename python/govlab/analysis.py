"""MMTests-style comparison of an experiment's runs (pipeline stage: analyse).

The notebook's ``govlab.compare(experiment, ...)`` is
:func:`govlab.notebook.compare` (docs/notebooks.md), built on this module.

:func:`analyse` turns an experiment's stored results into the figures of the
tables below; :func:`summarise` sums several benchmarks up. Writing them as
text, Markdown, CSV or JSON is :mod:`govlab.tables` (render).

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
that higher is always better. A run with a warm-up counts its score and its
powers after it (energy stays the whole run's); the Package row is the power
`govlab reproduce` reads (:func:`package_energy`).

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

The formats (:mod:`govlab.tables`): ``text`` (dense and aligned, for a mail),
``markdown``, ``csv`` (one figure per line) and ``json`` (everything, with
the per-run samples; undefined figures are null).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from govlab import fmt, samples as samples_of, stats
from govlab.exceptions import UnfinishedRuns
from govlab.store import Store

__all__ = [
    "UnfinishedRuns",
    "unfinished_message",
    "LARGE_PCT",
    "NEUTRAL_PCT",
    "CATEGORIES",
    "analyse",
    "summarise",
    "from_store",
]

#: An overall difference below this (in percent, either way) is neutral.
NEUTRAL_PCT = 1.0
#: An overall difference of at least this (in percent) is large.
LARGE_PCT = 5.0
#: The summary's categories, best first.
CATEGORIES = ("large wins", "moderate wins", "neutral", "moderate losses", "large losses")

_NAN = float("nan")


def unfinished_message(benchmark: str, axis_name: str | None, items: Sequence[tuple[str, Any, Mapping[str, Any]]]) -> str:
    """One line: which runs of ``benchmark`` are unfinished (config, axis value, result) and the duration needed."""
    needed = 0.0
    parts = []
    for config, value, result in items:
        where = config if axis_name is None else f"{config} at {axis_name}={fmt.value_label(value, 'none')}"
        sim_s = float(result.get("sim_time_s") or 0.0)
        p = result.get("progress") or {}
        if p.get("total"):
            where += f" ({p['done']:,} of {p['total']:,} {p['what']} in {sim_s:g} s)"
            if 0 < p["done"] < p["total"]:
                needed = max(needed, sim_s * p["total"] / p["done"])
        parts.append(where)
    shown = "; ".join(parts[:3]) + (f"; and {len(parts) - 3} more" if len(parts) > 3 else "")
    duration = float(items[0][2].get("duration_s") or 0.0)
    text = (
        f"{benchmark}: {len(items)} unfinished run{'s' if len(items) != 1 else ''}: {items[0][2].get('workload')} did not "
        f"end within duration = {duration:g} s: {shown}; "
    )
    if needed:
        text += f"at that rate it needs about {needed:.3g} s: set a duration of at least that in the experiment"
    else:
        text += "set a longer duration in the experiment"
    return text


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
        (c, i): {"metric": [], "energy_j": [], "avg_power_w": [], "package_w": [], "dram_w": []}
        for c in configs
        for i in range(len(values))
    }
    metric: dict[str, Any] | None = None
    missing = 0
    no_samples = 0
    unfinished: list[tuple[str, Any, Mapping[str, Any]]] = []
    for run in sorted(runs, key=lambda r: (r["repeat"], r["seed"])):
        result = results.get(run["key"])
        if result is None:
            missing += 1
            continue
        pm = result["primary_metric"]
        if pm.get("missing") == "unfinished":
            unfinished.append((run["config"], run["axis_value"], result))
            continue
        this = {"name": pm["name"], "unit": pm.get("unit", ""), "better": pm["better"]}
        if metric is None:
            metric = this
        elif this != metric:
            raise ValueError(f"{definition['name']}: runs report different primary metrics: {metric} and {this}")
        if pm.get("value") is None:  # no samples: no value, not 0
            no_samples += 1
            missing += 1
            continue
        index = _index_of(values, run["axis_value"])
        cell = samples[(run["config"], index)]
        # a run with a warm-up is measured after it (govlab.samples.window): its score,
        # power and DRAM; its energy stays the whole run's (the warm-up was spent too)
        measured = samples_of.window(result)
        after = measured is not None and not math.isnan(measured["dram_j"])
        cell["metric"].append(float(pm["value"]) if measured is None else measured["value"])
        cell["energy_j"].append(float(result["energy_j"]))
        if after:
            cell["avg_power_w"].append((measured["package_j"] + measured["dram_j"]) / measured["seconds"])
        else:
            cell["avg_power_w"].append(float(result["avg_power_w"]))
        secs = float(result.get("sim_time_s") or 0.0)
        if secs > 0 and "package_j" in result:  # results stored before issue 23 have no domains
            package_j, package_s = package_energy(result)
            cell["package_w"].append(package_j / package_s)
            cell["dram_w"].append(measured["dram_j"] / measured["seconds"] if after else float(result["dram_j"]) / secs)
    if unfinished:
        raise UnfinishedRuns(unfinished_message(definition["name"], axis["name"] if axis else None, unfinished))
    if metric is None:
        metric = {"name": "?", "unit": "", "better": "higher"}
    better = metric["better"]
    for cell in samples.values():
        cell["perf_per_watt"] = [_ppw(v, p, better) for v, p in zip(cell["metric"], cell["avg_power_w"], strict=True)]

    labels = [fmt.value_label(v, metric["name"]) for v in values]
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
        ("Package", "package_w", "lower", "W"),
        ("DRAM", "dram_w", "lower", "W"),
        ("Perf/W", "perf_per_watt", "higher", _ppw_unit(metric)),
    ]
    if any(not cell["package_w"] for cell in samples.values()):
        energy_rows = [r for r in energy_rows if r[1] not in ("package_w", "dram_w")]
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
        "no_samples_runs": no_samples,
        "constant_configs": _constant_configs(configs, values, samples, labels),
        "performance": performance,
        "energy": energy,
        "scores": scores,
        "samples": [
            {"config": c, "axis_value": values[i], **samples[(c, i)]} for c in configs for i in range(len(values))
        ],
    }


def _constant_configs(configs, values, samples, labels) -> list[str]:
    """The configurations (with the axis value) whose every repeat gave the same primary metric.

    With two or more repeats, identical values mean the seed does not reach the
    workload: the repeats add nothing and no test of significance can be made.
    """
    out = []
    for c in configs:
        for i in range(len(values)):
            xs = samples[(c, i)]["metric"]
            if len(xs) >= 2 and all(x == xs[0] for x in xs):
                out.append(c if values[i] is None else f"{c} at {labels[i]}")
    return out


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
            entry["significant"] = w.significant and entry["pct"] != 0
            entry["p_value"] = None if math.isnan(w.p) else w.p
            if w.no_variance:
                entry["no_variance"] = True
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


def package_energy(result: Mapping[str, Any]) -> tuple[float, float]:
    """A run's package energy (J) and the time it stands for (s): the run's own; for a run
    with a warm-up, those after it (govlab.samples.window); for a run simulated in shorter
    parts (netperf's ``scored_len``), those of the invocation it stands for
    (``scored_power``, crates/govlab-core/src/machine/power_phases.rs)."""
    measured = samples_of.window(result)
    if measured is not None:
        return measured["package_j"], measured["seconds"]
    scored = result.get("scored_power")
    if scored is not None:
        return float(scored["package_j"]), float(scored["time_s"])
    return float(result.get("package_j", math.nan)), float(result.get("sim_time_s") or 0.0)


def _index_of(values: list[Any], value: Any) -> int:
    for i, v in enumerate(values):
        if json.dumps(v) == json.dumps(value):
            return i
    raise ValueError(f"run at axis value {value!r} is not on the axis {values!r}")


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

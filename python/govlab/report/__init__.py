"""The HTML report of ``govlab compare --html`` and ``govlab report --html`` (pipeline stage: render).

One self-contained file: plotly.js is embedded, so it opens with no network.
For each benchmark it holds the comparison tables of :mod:`govlab.analysis`
and these plots (:mod:`govlab.report.figures`):

- the primary metric per parameter value, Amean with ±1 Stddev error bars,
  per configuration;
- performance against energy per run, with the Pareto front of the
  configurations' means at each parameter value;
- frequency residency and idle-state residency per configuration, from the
  per-CPU figures of the stored results;
- latency: the scheduler's wakeup-latency CDF (every workload has it) and the
  workload's own latency statistics where it reports them;

then the summary over benchmarks when there are several, and a per-CPU
timeline of frequency and idle state of one run (:mod:`govlab.report.timeline`).

Escaping: every string from a user file or a trace reaches the page either
through jinja2's autoescape (tables, text) or inside a figure's JSON, which
:func:`figures.text` HTML-escapes for plotly's labels and :func:`script_json`
keeps from closing its ``<script>`` element.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from govlab._core import __version__

from govlab import analysis as compare, fmt, plan, stats, tables
from govlab.experiment import Experiment
from govlab.plan import RunSpec
from govlab.report import figures
from govlab.report.timeline import CpuTimeline, trace_run
from govlab.store import Store

__all__ = ["TimelineRun", "cells", "timeline_pick", "record_timeline", "stored_timeline", "render", "write", "script_json"]

Cells = dict[tuple[str, int], list[dict[str, Any]]]


@dataclass(frozen=True)
class TimelineRun:
    """The run whose timeline the report shows, and that timeline."""

    benchmark: str
    config: str
    axis: str | None
    axis_value: Any
    seed: int
    key: str
    timeline: CpuTimeline
    state_names: list[str]


# --- gathering what the plots need ---------------------------------------------------------


def _recorded(store: Store, analyses: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    by_name = {x["definition"]["name"]: x for x in store.experiments()}
    return [by_name[a["name"]] for a in analyses if a["name"] in by_name]


def cells(store: Store, analyses: Sequence[Mapping[str, Any]]) -> dict[str, Cells]:
    """Per benchmark: the stored result dicts of each (configuration, axis index)."""
    out: dict[str, Cells] = {}
    for x in _recorded(store, analyses):
        axis = x["definition"].get("axis")
        values = axis["values"] if axis else [None]
        index = {json.dumps(v): i for i, v in enumerate(values)}
        results = store.results(r["key"] for r in x["runs"])
        grouped: Cells = {}
        for r in sorted(x["runs"], key=lambda r: (r["repeat"], r["seed"])):
            if r["key"] in results:
                grouped.setdefault((r["config"], index[json.dumps(r["axis_value"])]), []).append(results[r["key"]])
        out[x["definition"]["name"]] = grouped
    return out


def timeline_pick(definition: Mapping[str, Any], config: str | None = None, value: str | None = None) -> tuple[str, Any, int]:
    """``(config, axis value, seed)`` of the run to show as a timeline; errors name the valid choices.

    ``config`` defaults to the baseline, ``value`` (an axis value as written
    in the table) to the last axis value; the seed is the first.
    """
    names = [c["name"] for c in definition["configs"]]
    config = definition["baseline"] if config is None else config
    if config not in names:
        raise ValueError(f"--timeline: {definition['name']} has no configuration {config!r}; valid choices: {', '.join(names)}")
    axis = definition.get("axis")
    values = axis["values"] if axis else [None]
    if value is None:
        return config, values[-1], definition["seeds"][0]
    labels = [fmt.value_label(v) for v in values]
    if axis is None or value not in labels:
        choices = ", ".join(labels) if axis else "none (the experiment has no [axis])"
        raise ValueError(f"--timeline-value: {value!r} is not a value of {definition['name']}'s axis; valid choices: {choices}")
    return config, values[labels.index(value)], definition["seeds"][0]


def record_timeline(
    store: Store,
    experiment: Experiment,
    planned: Sequence[RunSpec],
    config: str | None = None,
    value: str | None = None,
    max_spans: int | None = None,
) -> TimelineRun:
    """The timeline of ``experiment``'s run chosen by :func:`timeline_pick`, simulated with a trace if not stored.

    ``planned`` are the experiment's run requests (:func:`govlab.plan.runs`):
    the run traced is the very request that was stored, so the timeline is
    that of the stored run. The engine builds the timeline from the run's
    trace in memory, binning past ``max_spans`` intervals of a kind per CPU
    (None: the engine's default).
    """
    definition = experiment.to_dict()
    config, axis_value, seed = timeline_pick(definition, config, value)
    run = plan.find(planned, config, axis_value, seed)
    if run is None:
        raise ValueError(f"{definition['name']}: no run of {config!r} at {axis_value!r}, seed {seed}")
    data = store.timeline([run.key])
    if data is None:
        timeline, _ = trace_run(run.kwargs, max_spans)
        store.put_timeline(run.key, timeline.to_dict())
        data = (run.key, timeline.to_dict())
    return _timeline_run(store, definition, plan.run_row(run), CpuTimeline.from_dict(data[1]))


def stored_timeline(store: Store, analyses: Sequence[Mapping[str, Any]]) -> TimelineRun | None:
    """The most recently recorded timeline of a run of ``analyses``' experiments, or None."""
    recorded = _recorded(store, analyses)
    rows = {r["key"]: (x["definition"], r) for x in recorded for r in x["runs"]}
    found = store.timeline(rows)
    if found is None:
        return None
    definition, run = rows[found[0]]
    return _timeline_run(store, definition, run, CpuTimeline.from_dict(found[1]))


def _timeline_run(store: Store, definition: Mapping[str, Any], run: Mapping[str, Any], timeline: CpuTimeline) -> TimelineRun:
    result = store.results([run["key"]]).get(run["key"], {})
    cpus = result.get("cpus") or [{}]
    axis = definition.get("axis")
    return TimelineRun(
        benchmark=definition["name"],
        config=run["config"],
        axis=axis["name"] if axis else None,
        axis_value=run["axis_value"],
        seed=run["seed"],
        key=run["key"],
        timeline=timeline,
        state_names=timeline.idle_states or [s["name"] for s in cpus[0].get("idle_states", [])],
    )


# --- the page ------------------------------------------------------------------------------


def script_json(figure: Any) -> str:
    """A figure's JSON, safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` left.

    These characters can only occur inside JSON strings, where ``\\u003c``
    and the like mean the same, so the data is unchanged.
    """
    text = figure.to_json() if hasattr(figure, "to_json") else json.dumps(figure)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(
    analyses: Sequence[Mapping[str, Any]],
    cells_by_benchmark: Mapping[str, Cells],
    timeline: TimelineRun | None = None,
    source: str | None = None,
    timeline_missing: str = "No timeline was recorded for these runs.",
    title: str | None = None,
    verdicts: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The whole HTML page; ``title`` (default ``govlab compare: NAMES``) heads it, and
    ``verdicts`` (:func:`govlab.reproduction.verdict_table` of each evaluation, from
    ``govlab reproduce --html``) come first."""
    import jinja2
    from plotly.offline import get_plotlyjs

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("govlab.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    counter = iter(range(1, 1_000_000))
    benchmarks = [_benchmark(a, cells_by_benchmark.get(a["name"], {}), counter) for a in analyses]
    names = ", ".join(a["name"] for a in analyses)
    return env.get_template("report.html.j2").render(
        title=title or f"govlab compare: {names}",
        verdicts=list(verdicts),
        version=__version__,
        source=source,
        alpha=f"{stats.ALPHA:g}",
        plotly_js=get_plotlyjs(),
        benchmarks=benchmarks,
        summary=_summary(analyses) if len(analyses) > 1 else None,
        timeline=_timeline(timeline, next(counter)) if timeline else None,
        timeline_missing=timeline_missing,
    )


def write(path: str | os.PathLike[str], page: str) -> None:
    """Write ``page`` to ``path`` whole, through a symlink, never over a device (:func:`govlab.outfile.write_text`)."""
    from govlab import outfile

    outfile.write_text(path, page, "HTML report")


def _benchmark(a: Mapping[str, Any], cells: Cells, counter: Iterator[int]) -> dict[str, Any]:
    m = a["metric"]
    axis = a["axis"]
    names = [c["name"] for c in a["configs"]]
    plots = [
        ("Metric per parameter value", "Amean over the repeats; the error bars are ±1 Stddev.", figures.metric_per_value(a)),
        (
            "Performance against energy",
            "Small points: single runs; diamonds: the mean of each configuration. The dashed line joins "
            "the Pareto front of the means at each parameter value: the configurations that no other beats "
            "on both energy and performance.",
            figures.performance_energy(a),
        ),
        (
            "Frequency residency",
            "Share of CPU time spent at each frequency, over every CPU of every repeat.",
            figures.frequency_residency(a, cells),
        ),
        (
            "Idle-state residency",
            "Share of CPU time running and in each idle state, over every CPU of every repeat.",
            figures.state_residency(a, cells),
        ),
    ]
    wakeup = figures.wakeup_latency(a, cells)
    if wakeup is not None:
        plots.append(
            (
                "Wakeup latency",
                "Cumulative distribution of the scheduler's wakeup latency (wakeup to running), all repeats.",
                wakeup,
            )
        )
    for series, fig in figures.workload_latency(a, cells):
        plots.append((f"Latency of {series}", "The workload's own latency statistics, one panel per statistic, each with its axis fitted to its "
                "data (not from 0, so differences of a few percent show; read the ticks): a dot at the mean "
                "over the repeats, its bar from the lowest to the highest repeat.", fig))
    perf_rows = tables.performance_rows(a)
    score_note = (
        f" Gmean all: geometric mean of the {a['mean']} over {axis['name']}." if len(perf_rows) > len(a["performance"]) else ""
    )
    return {
        "anchor": f"benchmark-{next(counter)}",
        "name": a["name"],
        "description": a.get("description") or "",
        "workload": a["workload"],
        "platform": a["platform"],
        "duration": a["duration"],
        "seeds": fmt.seed_range(a["seeds"]),
        "axis": axis["name"] if axis else "",
        "axis_values": ", ".join(fmt.value_label(v) for v in axis["values"]) if axis else "",
        "metric": m["name"],
        "unit": m.get("unit") or "",
        "better": m["better"],
        "configs": [
            {
                "name": c["name"],
                "cpufreq": c["cpufreq"],
                "cpuidle": c["cpuidle"],
                "platform": c["platform"],
                "baseline": c["name"] == a["baseline"],
            }
            for c in a["configs"]
        ],
        "missing": a["missing_runs"],
        "runs": a["runs"],
        "names": names,
        "performance": _table(perf_rows, names),
        "performance_note": f"Differences to {a['baseline']}.{score_note}",
        "no_variance_note": tables.NO_VARIANCE if any(c.get("no_variance") for r in perf_rows for c in r["cells"]) else "",
        "energy": _table(a["energy"], names),
        "ppw_unit": next((r["unit"] for r in a["energy"] if r["stat"] == "Perf/W"), ""),
        "plots": [
            {"id": f"plot-{next(counter)}", "title": title, "caption": caption, "json": script_json(fig)}
            for title, caption, fig in plots
        ],
    }


def _table(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    decimals = tables.stat_decimals(rows)
    out = []
    for r in rows:
        by_config = {c["config"]: c for c in r["cells"]}
        cells_out = []
        for n in names:
            c = by_config.get(n)
            if c is None:
                cells_out.append({"text": "-", "significant": False})
                continue
            pct = fmt.pct(c["pct"])
            # The marks of the text table (govlab.tables): *x%* significant, [x%] no variance to test.
            mark = f"*{pct}*" if c.get("significant") else f"[{pct}]" if c.get("no_variance") else f"({pct})"
            cells_out.append({"text": f"{fmt.fixed(c['value'], decimals[r['stat']])} {mark}", "significant": bool(c.get("significant"))})
        out.append({"stat": r["stat"], "label": str(r["label"]), "cells": cells_out})
    return out


def _summary(analyses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    summary = compare.summarise(analyses)
    configs = summary["ratios"]["configs"]
    ratio_rows = [(r["benchmark"], r["perf"], r["ppw"]) for r in summary["ratios"]["rows"]]
    ratio_rows.append(("Gmean", summary["ratios"]["gmean"]["perf"], summary["ratios"]["gmean"]["ppw"]))
    return {
        "large": f"{compare.LARGE_PCT:g}",
        "neutral": f"{compare.NEUTRAL_PCT:g}",
        "configs": configs,
        "groups": [
            {
                "config": g["config"],
                "baselines": ", ".join(g["baselines"]),
                "categories": [
                    {
                        "name": name.capitalize(),
                        "entries": [
                            {
                                "benchmark": e["benchmark"],
                                "metric": e["metric"],
                                "pct": fmt.signed_pct(e["pct"]),
                                "note": "" if e["significant"] or not math.isfinite(e["pct"]) else " (not significant)",
                            }
                            for e in g["categories"][name]
                        ],
                    }
                    for name in compare.CATEGORIES
                    if g["categories"][name]
                ],
            }
            for g in summary["groups"]
        ],
        "ratios": [
            {
                "name": name,
                "cells": [fmt.fixed(perf[c], 3) if c in perf else "-" for c in configs]
                + [fmt.fixed(ppw[c], 3) if c in ppw else "-" for c in configs],
            }
            for name, perf, ppw in ratio_rows
        ],
    }


def _timeline(run: TimelineRun, number: int) -> dict[str, Any]:
    t = run.timeline
    caption = (
        "Top: each CPU's frequency from its first cpu_frequency event on. Below, one row per CPU: when a "
        "task ran, in which idle state the CPU was, idle in no traced state, or unknown (before the CPU's "
        "first event). Built by the engine from the run's trace, as govlab trace stats --html builds a "
        "recording's, in ms from the run's start."
    )
    if t.truncated:
        caption += f" Only the first {t.events} events are shown, up to {1e3 * t.end_s:.3f} ms."
    if t.resolution_s is not None:
        caption += (
            f" Some CPUs have more than {t.max_spans} intervals of a kind: their span is cut into {t.max_spans} "
            f"equal bins (up to {1e3 * t.resolution_s:.3f} ms wide), each showing what the CPU spent most of it "
            "doing and the frequency it held longest."
        )
    return {
        "id": f"plot-{number}",
        "benchmark": run.benchmark,
        "config": run.config,
        "axis": run.axis or "",
        "value": fmt.value_label(run.axis_value),
        "seed": run.seed,
        "caption": caption,
        "json": script_json(figures.cpu_timeline(t, run.state_names)),
    }

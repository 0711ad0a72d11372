"""The report's plots, as plotly figures (pipeline stage: render).

Every string that came from a user file or a trace (configuration, workload,
series, idle-state and task names, axis values) goes through :func:`text`
before it enters a figure: plotly renders titles, legends, ticks and hover
labels as a small subset of HTML, so ``<`` must reach it as ``&lt;`` to be
shown as written and never taken for a tag.

A *cell* is one configuration at one parameter value; ``cells[(config, i)]``
holds the result dicts of its repeats (``i`` indexes the axis values).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from govlab import fmt, stats
from govlab.report import aggregate
from govlab.report.timeline import IDLE_OTHER, UNKNOWN, CpuTimeline
from govlab.report.timeline import RUNNING as TIMELINE_RUNNING

__all__ = [
    "text",
    "RUNNING",
    "state_color",
    "cpu_ranges",
    "metric_per_value",
    "performance_energy",
    "frequency_residency",
    "state_residency",
    "wakeup_latency",
    "workload_latency",
    "cpu_timeline",
    "turbostat_over_time",
]

Cells = Mapping[tuple[str, int], Sequence[Mapping[str, Any]]]

_TEMPLATE = "plotly_white"
_PALETTE = qualitative.Plotly
#: Facets per row when a plot is split by parameter value.
_FACET_COLUMNS = 3


def text(value: Any) -> str:
    """A user string, escaped for plotly's HTML-like labels."""
    return html.escape(str(value), quote=False)


def _finite(v: float) -> float | None:
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def _configs(a: Mapping[str, Any]) -> list[str]:
    return [c["name"] for c in a["configs"]]


def _labels(a: Mapping[str, Any]) -> list[str]:
    if not a["axis"]:
        return ["all runs"]
    return [fmt.value_label(v, "None") for v in a["axis"]["values"]]


def _axis_title(a: Mapping[str, Any]) -> str:
    return text(a["axis"]["name"]) if a["axis"] else ""


def _metric_title(a: Mapping[str, Any]) -> str:
    m = a["metric"]
    unit = f" ({text(m['unit'])})" if m.get("unit") else ""
    # Two lines: a long metric name on one would outgrow the plot's height.
    return f"{text(m['name'])}{unit}<br>{m['better']} is better"


def _color(i: int) -> str:
    return _PALETTE[i % len(_PALETTE)]


def _samples(a: Mapping[str, Any]) -> dict[tuple[str, int], Mapping[str, list[float]]]:
    values = a["axis"]["values"] if a["axis"] else [None]
    index = {repr(v): i for i, v in enumerate(values)}
    return {(s["config"], index[repr(s["axis_value"])]): s for s in a["samples"]}


#: What a CPU does when it is not idle, by one name in every chart and page.
RUNNING = "running"
#: Colours of what a CPU is doing, the same in every chart: running dark grey,
#: idle in no state light blue, unknown light grey; the idle states take the
#: pastel colours by their index in the platform's table (state 0 the first).
_RUNNING_COLOR = "#444444"
_IDLE_OTHER_COLOR = "#9ecae1"
_UNKNOWN_COLOR = "#dddddd"


def state_color(name: str, idle_states: Sequence[str]) -> str:
    """The colour of ``name`` (``running``, an idle state of ``idle_states``, the
    platform's table in order, or what is neither) in every chart."""
    if name == RUNNING:
        return _RUNNING_COLOR
    if name == aggregate.OTHER_IDLE:
        return _IDLE_OTHER_COLOR
    if name in idle_states:
        return qualitative.Pastel[list(idle_states).index(name) % len(qualitative.Pastel)]
    return _UNKNOWN_COLOR


def cpu_ranges(cpus: Sequence[int]) -> str:
    """``0-3,8`` for CPUs 0, 1, 2, 3 and 8."""
    out: list[str] = []
    ordered = sorted(cpus)
    start = prev = ordered[0] if ordered else 0
    for c in ordered[1:] + [None]:  # type: ignore[list-item]
        if c is not None and c == prev + 1:
            prev = c
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if c is not None:
            start = prev = c
    return ",".join(out)


def _facets(n: int, titles: Sequence[str], **kwargs: Any) -> go.Figure:
    """Panels in rows of :data:`_FACET_COLUMNS`, 300 px a row, spaced so that an axis's
    ticks and title never reach the next panel or its title."""
    cols = min(n, _FACET_COLUMNS)
    rows = math.ceil(n / cols)
    height = max(380, 320 * rows)
    kwargs.setdefault("horizontal_spacing", 0.1 if cols > 1 else 0.2)
    # 110 px between rows: the x ticks, the x title and the next row's panel titles
    kwargs.setdefault("vertical_spacing", min(0.5, 110 / height) if rows > 1 else 0.2)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles), **kwargs)
    fig.update_layout(height=height)
    return fig


def _facet_axis_titles(fig: go.Figure, n: int, x: str, y: str) -> None:
    """``y`` beside the first panel of each row, ``x`` under the bottom panel of each column only."""
    for i in range(n):
        at = _at(i)
        if at["col"] == 1:
            fig.update_yaxes(title_text=y, **at)
        if i + _FACET_COLUMNS >= n:
            fig.update_xaxes(title_text=x, **at)


def _readable_ticks(fig: go.Figure) -> go.Figure:
    """Whole numbers with thousands separators, never ``1.648353M``."""
    fig.update_xaxes(exponentformat="none", separatethousands=True)
    fig.update_yaxes(exponentformat="none", separatethousands=True)
    return fig


def _at(i: int) -> dict[str, int]:
    return {"row": i // _FACET_COLUMNS + 1, "col": i % _FACET_COLUMNS + 1}


def _facet_titles(a: Mapping[str, Any]) -> list[str]:
    if not a["axis"]:
        return [""]
    return [f"{text(a['axis']['name'])} = {text(label)}" for label in _labels(a)]


# --- comparison plots ---------------------------------------------------------------------


def metric_per_value(a: Mapping[str, Any]) -> go.Figure:
    """The primary metric per parameter value: Amean over the repeats, error bars ±1 Stddev."""
    samples = _samples(a)
    labels = [text(x) for x in _labels(a)]
    fig = go.Figure()
    for k, config in enumerate(_configs(a)):
        xs = [samples[(config, i)]["metric"] for i in range(len(labels))]
        fig.add_trace(
            go.Scatter(
                x=labels,
                y=[_finite(stats.amean(v)) for v in xs],
                error_y={"type": "data", "array": [_finite(stats.stddev(v)) or 0.0 for v in xs], "visible": True},
                mode="lines+markers",
                name=text(config),
                marker={"color": _color(k), "size": 9},
                hovertemplate="%{x}: %{y:.4g} ± %{error_y.array:.3g}<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        template=_TEMPLATE,
        xaxis={"title": {"text": _axis_title(a)}, "type": "category"},
        yaxis={"title": {"text": _metric_title(a)}},
        legend={"title": {"text": "configuration"}},
        height=420,
    )
    return _readable_ticks(fig)


def performance_energy(a: Mapping[str, Any]) -> go.Figure:
    """Per parameter value: each run's energy and metric, each configuration's mean, and the Pareto front of the means."""
    samples = _samples(a)
    configs = _configs(a)
    better = a["metric"]["better"]
    labels = _labels(a)
    fig = _facets(len(labels), _facet_titles(a))
    for i in range(len(labels)):
        means = []
        for k, config in enumerate(configs):
            cell = samples[(config, i)]
            fig.add_trace(
                go.Scatter(
                    x=cell["energy_j"],
                    y=cell["metric"],
                    mode="markers",
                    name=text(config),
                    legendgroup=text(config),
                    showlegend=False,
                    marker={"color": _color(k), "size": 6, "opacity": 0.35},
                    hovertemplate="run: %{x:.4g} J, %{y:.4g}<extra>%{fullData.name}</extra>",
                ),
                **_at(i),
            )
            mean = (stats.amean(cell["energy_j"]), stats.amean(cell["metric"]))
            means.append(mean)
            fig.add_trace(
                go.Scatter(
                    x=[_finite(mean[0])],
                    y=[_finite(mean[1])],
                    mode="markers",
                    name=text(config),
                    legendgroup=text(config),
                    showlegend=i == 0,
                    marker={"color": _color(k), "size": 13, "symbol": "diamond"},
                    hovertemplate="mean: %{x:.4g} J, %{y:.4g}<extra>%{fullData.name}</extra>",
                ),
                **_at(i),
            )
        front = aggregate.pareto_front(means, better)
        fig.add_trace(
            go.Scatter(
                x=[means[j][0] for j in front],
                y=[means[j][1] for j in front],
                mode="lines+markers",
                name="Pareto front",
                legendgroup="pareto",
                showlegend=i == 0,
                line={"color": "black", "dash": "dash", "width": 1},
                marker={"symbol": "circle-open", "size": 20, "color": "black", "line": {"width": 2}},
                text=[text(configs[j]) for j in front],
                hovertemplate="%{text}: %{x:.4g} J, %{y:.4g}<extra>Pareto front</extra>",
            ),
            **_at(i),
        )
    _facet_axis_titles(fig, len(labels), "energy per run (J), lower is better", _metric_title(a))
    fig.update_layout(template=_TEMPLATE, legend={"title": {"text": "configuration (◆ mean, • run)"}})
    return _readable_ticks(fig)


def frequency_residency(a: Mapping[str, Any], cells: Cells) -> go.Figure:
    """Per parameter value: share of CPU time at each frequency, per configuration."""
    configs = _configs(a)
    labels = _labels(a)
    fig = _facets(len(labels), _facet_titles(a))
    for i in range(len(labels)):
        shares = {c: aggregate.frequency_residency(cells.get((c, i), [])) for c in configs}
        used = sorted({khz for s in shares.values() for khz, share in s.items() if share > 0})
        for k, config in enumerate(configs):
            fig.add_trace(
                go.Bar(
                    x=[f"{khz / 1000:g}" for khz in used],
                    y=[100 * shares[config].get(khz, 0.0) for khz in used],
                    name=text(config),
                    legendgroup=text(config),
                    showlegend=i == 0,
                    marker={"color": _color(k)},
                    hovertemplate="%{x} MHz: %{y:.2f}% of CPU time<extra>%{fullData.name}</extra>",
                ),
                **_at(i),
            )
    fig.update_xaxes(type="category")
    _facet_axis_titles(fig, len(labels), "frequency (MHz)", "% of CPU time")
    fig.update_layout(template=_TEMPLATE, barmode="group", legend={"title": {"text": "configuration"}})
    return _readable_ticks(fig)


def state_residency(a: Mapping[str, Any], cells: Cells) -> go.Figure:
    """Share of CPU time busy and in each idle state, stacked, per parameter value and configuration."""
    configs = _configs(a)
    labels = _labels(a)
    shares = {(c, i): aggregate.state_residency(cells.get((c, i), [])) for i in range(len(labels)) for c in configs}
    states: list[str] = []
    for s in shares.values():
        states += [name for name in s if name not in states]
    idle_states = [s for s in states if s not in (aggregate.BUSY, aggregate.OTHER_IDLE)]
    x = [[text(labels[i]) for i in range(len(labels)) for _ in configs], [text(c) for _ in labels for c in configs]]
    fig = go.Figure()
    for state in states:
        name = RUNNING if state == aggregate.BUSY else state
        fig.add_trace(
            go.Bar(
                x=x,
                y=[100 * shares[(c, i)].get(state, 0.0) for i in range(len(labels)) for c in configs],
                name=text(name),
                marker={"color": state_color(name, idle_states)},
                hovertemplate="%{x}: %{y:.2f}%<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        template=_TEMPLATE,
        barmode="stack",
        yaxis={"title": {"text": "% of CPU time"}, "range": [0, 100]},
        xaxis={"title": {"text": f"{_axis_title(a)} / configuration" if a["axis"] else "configuration"}},
        # Above the bars in rows, in the stacking order: a machine's idle
        # states (8 on Skylake, more with busy) overflowed a legend beside
        # the plot into a scrolled box.
        legend={"title": {"text": "state"}, "orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom", "traceorder": "normal"},
    )
    return fig


def wakeup_latency(a: Mapping[str, Any], cells: Cells) -> go.Figure | None:
    """Per parameter value: the CDF of the scheduler's wakeup latency per configuration; None without wakeups."""
    configs = _configs(a)
    labels = _labels(a)
    fig = _facets(len(labels), _facet_titles(a))
    points = 0
    for i in range(len(labels)):
        for k, config in enumerate(configs):
            xs, ys = aggregate.wakeup_cdf(cells.get((config, i), []))
            points += len(xs)
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=[100 * y for y in ys],
                    mode="lines",
                    line_shape="hv",
                    name=text(config),
                    legendgroup=text(config),
                    showlegend=i == 0,
                    line={"color": _color(k)},
                    hovertemplate="≤ %{x:.4g} µs: %{y:.2f}%<extra>%{fullData.name}</extra>",
                ),
                **_at(i),
            )
    if points == 0:
        return None
    fig.update_xaxes(type="log")
    fig.update_yaxes(range=[0, 100.5])
    _facet_axis_titles(fig, len(labels), "wakeup latency (µs)", "% of wakeups")
    fig.update_layout(template=_TEMPLATE, legend={"title": {"text": "configuration"}})
    return _readable_ticks(fig)


def workload_latency(a: Mapping[str, Any], cells: Cells) -> list[tuple[str, go.Figure]]:
    """For each latency series the workload reports: one panel per statistic (mean, p50, ..., max),
    a dot per configuration and parameter value at the mean over the runs, its bar spanning the
    lowest to the highest run.

    Dots on an axis fitted to each panel's data, not bars from 0: latency
    statistics differ by orders of magnitude (a mean of tens of µs, a p99.9
    of milliseconds) and configurations often by a few percent, which bars
    from 0 (or one shared log axis) flatten into equal heights. Each
    panel's axis spans its own dots and run ranges with a margin of 8%
    (:func:`_fitted_range`), so its ticks, not the origin, show the scale.
    """
    configs = _configs(a)
    labels = [text(x) for x in _labels(a)]
    by_cell = {(c, i): aggregate.latency_runs(cells.get((c, i), [])) for c in configs for i in range(len(labels))}
    series: list[str] = []
    for s in by_cell.values():
        series += [name for name in s if name not in series]
    figures = []
    for name in series:
        stats_seen: list[str] = []
        for s in by_cell.values():
            stats_seen += [k for k in s.get(name, {}) if k not in stats_seen]
        stats_seen.sort(key=aggregate.stat_key)
        fig = _facets(len(stats_seen), stats_seen, horizontal_spacing=0.07)
        for j, st in enumerate(stats_seen):
            seen: list[float] = []
            for k, config in enumerate(configs):
                runs = [by_cell[(config, i)].get(name, {}).get(st) or [] for i in range(len(labels))]
                seen += [x for v in runs for x in v if math.isfinite(x)]
                mean = [math.fsum(v) / len(v) if v else None for v in runs]
                fig.add_trace(
                    go.Scatter(
                        x=labels,
                        y=mean,
                        error_y={
                            "type": "data",
                            "symmetric": False,
                            "array": [max(v) - m if v and m is not None else 0.0 for v, m in zip(runs, mean)],
                            "arrayminus": [m - min(v) if v and m is not None else 0.0 for v, m in zip(runs, mean)],
                            "visible": True,
                            "width": 0,
                        },
                        mode="markers",
                        name=text(config),
                        legendgroup=text(config),
                        showlegend=j == 0,
                        marker={"color": _color(k), "size": 9},
                        hovertemplate=f"%{{x}}: {st} %{{y:.4g}} µs<extra>%{{fullData.name}}</extra>",
                    ),
                    **_at(j),
                )
            fig.update_yaxes(range=_fitted_range(seen), tickformat=".4~g", **_at(j))
            # The parameter's name under the bottom panel of each column only.
            if a["axis"] and j + _FACET_COLUMNS >= len(stats_seen):
                fig.update_xaxes(title_text=_axis_title(a), **_at(j))
        fig.update_xaxes(type="category")
        fig.update_layout(
            template=_TEMPLATE,
            scattermode="group",
            legend={"title": {"text": "configuration"}},
        )
        fig.update_yaxes(title_text=f"{text(name)} latency (µs)", col=1)
        figures.append((name, _readable_ticks(fig)))
    return figures


def _fitted_range(values: Sequence[float]) -> list[float] | None:
    """An axis range that spans ``values`` with 8% to spare each side (5% of the value when all are
    equal), never below 0 (a latency is not negative); None without values (plotly's own)."""
    if not values:
        return None
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
    return [max(lo - pad, 0.0), hi + pad]


# --- one run -----------------------------------------------------------------------------


def cpu_timeline(timeline: CpuTimeline, state_names: Sequence[str]) -> go.Figure:
    """Each frequency domain's frequency (top) and what each CPU was doing (below: running
    or an idle state), in ms, each panel with its own time axis.

    A frequency domain is the CPUs whose frequency changes are the same, to the
    millisecond (the kernel traces a policy's change for each of its CPUs): one line and one
    legend entry each, named by its CPUs. The panels are sized in pixels: the
    frequency panel 220 px, a row per CPU below.
    """
    cpus = sorted(set(timeline.frequency) | set(timeline.segments))
    domains: dict[tuple[Any, ...], list[int]] = {}
    for cpu in cpus:
        points = timeline.frequency.get(cpu, [])
        if points:
            # to the millisecond: a recording traces a policy's CPUs one after the other, µs apart
            domains.setdefault(tuple((round(t * 1e3), khz) for t, khz, _ in points), []).append(cpu)
    freq_px, state_px, gap_px = 220, max(120, 26 * len(cpus)), 110
    plot_px = freq_px + gap_px + state_px
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[freq_px / (freq_px + state_px), state_px / (freq_px + state_px)],
        vertical_spacing=gap_px / plot_px,
        subplot_titles=["frequency of each frequency domain", "running or idle state, per CPU"],
    )
    end_ms = 1e3 * timeline.end_s
    for members in domains.values():
        points = timeline.frequency[members[0]]
        xs = [1e3 * t for t, _, _ in points] + [end_ms]
        ys = [khz / 1000 for _, khz, _ in points] + [points[-1][1] / 1000]
        tasks = [text(comm) for _, _, comm in points] + [text(points[-1][2])]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line_shape="hv",
                name=f"CPU {members[0]}" if len(members) == 1 else f"CPUs {cpu_ranges(members)}",
                legendgroup="frequency",
                legendgrouptitle_text="frequency domain",
                customdata=tasks,
                hovertemplate="%{x:.3f} ms: %{y:g} MHz (task %{customdata})<extra>%{fullData.name}</extra>",
            ),
            row=1,
            col=1,
        )
    by_state: dict[int, tuple[list[float | None], list[str | None]]] = {}
    for cpu in cpus:
        for start_s, end_s, state in timeline.segments.get(cpu, []):
            xs, ys = by_state.setdefault(state, ([], []))
            xs += [1e3 * start_s, 1e3 * end_s, None]
            ys += [f"CPU {cpu}", f"CPU {cpu}", None]
    for state in sorted(by_state, key=lambda s: (s != RUNNING_INDEX, s)):
        xs, ys = by_state[state]
        name = _state_name(state, state_names)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=text(name),
                legendgroup="state",
                legendgrouptitle_text="state",
                line={"width": 12, "color": state_color(name, state_names)},
                hovertemplate="%{x:.3f} ms<extra>%{fullData.name}</extra>",
            ),
            row=2,
            col=1,
        )
    fig.update_xaxes(title_text="time (ms)", showticklabels=True, exponentformat="none", separatethousands=True)
    fig.update_yaxes(title_text="MHz", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(
        type="category",
        categoryorder="array",
        categoryarray=[f"CPU {c}" for c in reversed(cpus)],
        row=2,
        col=1,
    )
    fig.update_layout(
        template=_TEMPLATE,
        height=plot_px + 140,
        margin={"t": 60, "b": 70},
        hovermode="closest",
        legend={"groupclick": "toggleitem"},
    )
    return fig


#: The timeline's index of a running CPU (:data:`govlab.report.timeline.RUNNING`).
RUNNING_INDEX = TIMELINE_RUNNING


def _state_name(index: int, names: Sequence[str]) -> str:
    if index == RUNNING_INDEX:
        return RUNNING
    if index == IDLE_OTHER:
        return aggregate.OTHER_IDLE
    if index == UNKNOWN:
        return "unknown"
    return names[index] if 0 <= index < len(names) else f"state {index}"


def turbostat_over_time(intervals: Sequence[Mapping[str, Any]]) -> go.Figure:
    """``govlab run --turbostat-interval ... --plot``: per interval, the package and DRAM
    power (turbostat's PkgWatt/RAMWatt, POWER's ChipWatt/MemWatt, per package and summed)
    above, and the machine's Busy% below; each value drawn over its interval."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    summary_cols: list[str] = []
    for iv in intervals:
        for col in iv["rows"][0]:
            if col.endswith("Watt") and col not in summary_cols:
                summary_cols.append(col)

    def steps(values: list[float | None]) -> tuple[list[float], list[float | None]]:
        xs: list[float] = []
        ys: list[float | None] = []
        for iv, v in zip(intervals, values):
            xs += [iv["start_s"], iv["end_s"]]
            ys += [v, v]
        return xs, ys

    for k, col in enumerate(summary_cols):
        xs, ys = steps([iv["rows"][0].get(col) for iv in intervals])
        fig.add_trace(
            go.Scatter(x=xs, y=ys, mode="lines", name=f"{col} (all packages)", line={"color": _color(k)},
                       hovertemplate=f"%{{x:.3f}} s: %{{y:.2f}} W<extra>{col}</extra>"),
            row=1, col=1,
        )
        packages = sorted({r.get("Package", 0) for iv in intervals for r in iv["rows"][1:] if r.get(col) is not None})
        if len(packages) > 1:
            for pkg in packages:
                vals = [next((r[col] for r in iv["rows"][1:] if r.get("Package", 0) == pkg and r.get(col) is not None), None) for iv in intervals]
                xs, ys = steps(vals)
                fig.add_trace(
                    go.Scatter(x=xs, y=ys, mode="lines", name=f"{col} package {pkg}", line={"color": _color(k), "dash": "dot"},
                               hovertemplate=f"%{{x:.3f}} s: %{{y:.2f}} W<extra>{col} package {pkg}</extra>"),
                    row=1, col=1,
                )
    xs, ys = steps([iv["rows"][0].get("Busy%") for iv in intervals])
    fig.add_trace(
        go.Scatter(x=xs, y=ys, mode="lines", name="Busy% (all CPUs)", line={"color": _color(len(summary_cols))},
                   hovertemplate="%{x:.3f} s: %{y:.2f}%<extra>Busy%</extra>"),
        row=2, col=1,
    )
    fig.update_yaxes(title_text="power (W)", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="Busy%", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="simulated time (s)", row=2, col=1)
    fig.update_layout(template=_TEMPLATE)
    return fig

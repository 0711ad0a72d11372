"""The HTML report: its figures from fixed inputs, the trace timeline, escaping, and the commands."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path

import pytest

from govlab import analysis as compare, experiment, pipeline, plan
from govlab import report as html_report
from govlab.report import aggregate
from govlab.report.timeline import IDLE_OTHER, RUNNING, UNKNOWN, CpuTimeline, from_engine, trace_run
from govlab.store import Store

from test_compare import SMALL

EVIL = "<script>alert(1)</script>"

#: A workload file whose task, series and description are all an attempt at a script.
EVIL_WORKLOAD = f"""\
description = "evil {EVIL}"
[[series]]
name = "{EVIL}"
[[task]]
comm = "{EVIL}"
instances = 2
loop = "forever"
ops = [
  {{ mark = true }},
  {{ run = "3ms" }},
  {{ record = "{EVIL}", since = "mark" }},
  {{ sleep = "10ms", dist = "uniform" }},
]
"""

#: An experiment on that workload, with a configuration named like a script.
EVIL_EXPERIMENT = f"""\
[experiment]
name = "evil {EVIL}"
description = "{EVIL}"
platform = "skylake-e3-1240v5"
workload = "evil.toml"
duration = "150ms"
repeats = 2
seed = 1
cpuidle = "menu"

[[config]]
name = "ondemand"
cpufreq = "ondemand"

[[config]]
name = "{EVIL}"
cpufreq = "schedutil"
"""


def write_experiments(directory: Path) -> list[Path]:
    """The evil experiment and the small one (two benchmarks, so the summary shows too)."""
    (directory / "evil.toml").write_text(EVIL_WORKLOAD)
    evil = directory / "evil-experiment.toml"
    evil.write_text(EVIL_EXPERIMENT)
    small = directory / "small.toml"
    small.write_text(SMALL)
    return [evil, small]


def build_report(directory: Path, timeline: str | None = EVIL) -> tuple[str, Path]:
    """Compare both experiments into a fresh database and render the page; the timeline shows ``timeline``'s run."""
    db = directory / "r.sqlite"
    with Store(db) as store:
        done = pipeline.run_experiments(
            [experiment.load(p) for p in write_experiments(directory)], store, jobs=2, progress=False
        )
        analyses = done.analyses
        run = html_report.record_timeline(store, done.experiments[0], done.planned[0], timeline)
        page = html_report.render(analyses, html_report.cells(store, analyses), run, source=str(db))
    return page, db


@pytest.fixture(scope="module")
def evil_report(tmp_path_factory) -> tuple[str, Path]:
    return build_report(tmp_path_factory.mktemp("evil"))


def plot_data(page: str) -> dict[str, dict]:
    """Each plot's figure, by its id, decoded from the page."""
    found = re.findall(r'<script type="application/json" id="(plot-\d+)-data">(.*?)</script>', page, re.S)
    return {plot_id: json.loads(text) for plot_id, text in found}


# --- the run's timeline ---------------------------------------------------------------------

RUN = dict(
    platform="skylake-e3-1240v5",
    workload="periodic:tasks=4,run_us=1500,period_us=7000",
    cpufreq="schedutil",
    cpuidle="menu",
    duration="300ms",
    seed=2,
)


def test_the_timeline_comes_from_the_core_not_from_text(monkeypatch):
    """The module parses no text and writes no file: it asks the binding for the timeline."""
    import ast

    import govlab._core
    import govlab.report.timeline as timeline

    tree = ast.parse(Path(timeline.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"re", "tempfile", "os"}, imported
    assert not hasattr(timeline, "parse") and not hasattr(timeline, "read")

    calls = []
    real = govlab._core.run_timeline

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(govlab._core, "run_timeline", spy)
    t, result = trace_run(RUN, max_spans=7)
    assert len(calls) == 1 and calls[0][1] == 7
    assert t.max_spans == 7 and t.resolution_s is not None
    assert all(len(v) <= 7 for v in t.segments.values())
    assert result["sim_time_ns"] == 300_000_000


def test_timeline_of_a_run_accounts_for_its_residencies():
    """Per CPU, the segments cover the run, and their running and per-state times
    equal the result's busy time and idle-state times (the trace keeps ns)."""
    t, result = trace_run(RUN)
    assert (t.truncated, t.resolution_s, t.max_spans) == (False, None, 2000)
    assert t.end_s == result["sim_time_s"]
    assert t.idle_states == [s["name"] for s in result["cpus"][0]["idle_states"]]
    assert sum(len(v) for v in t.frequency.values()) > 0
    for cpu in result["cpus"]:
        segments = t.segments[cpu["cpu"]]
        assert segments[0][0] == 0.0 and segments[-1][1] == pytest.approx(result["sim_time_s"], abs=1e-12)
        assert all(a[1] == b[0] for a, b in zip(segments, segments[1:]))  # no gap, no overlap
        assert math.fsum(b - a for a, b, _ in segments) == pytest.approx(result["sim_time_s"], abs=1e-9)
        running = math.fsum(b - a for a, b, s in segments if s == RUNNING)
        assert running == pytest.approx(cpu["busy_s"], abs=1e-9)
        for index, state in enumerate(cpu["idle_states"]):
            in_state = math.fsum(b - a for a, b, s in segments if s == index)
            assert in_state == pytest.approx(state["time_s"], abs=1e-9), state["name"]
        # what is neither running nor in a state is the idle task between states, or before the first event
        assert {s for _, _, s in segments} <= {RUNNING, IDLE_OTHER, UNKNOWN, *range(len(cpu["idle_states"]))}


def _time_in(segments, state):
    return math.fsum(b - a for a, b, s in segments if s == state)


def test_a_runs_timeline_is_the_trace_stats_timeline_of_its_trace_file(cli, tmp_path):
    """The report's timeline of a run and `govlab trace stats` of that run's `--trace` file
    (its --html timeline and its --format json figures) agree up to the µs the text keeps."""
    from govlab import trace

    path = tmp_path / "run.txt"
    args = [f"--{k}={v}" for k, v in RUN.items()]
    ran = cli("run", *args, "--trace", str(path), "--format", "json")
    assert ran.returncode == 0, ran.stderr
    t, result = trace_run(RUN)
    assert result == json.loads(ran.stdout)

    _, data = trace.stats_and_timeline(path, RUN["platform"])
    from_file = from_engine(data)
    stats = cli("trace", "stats", str(path), "--platform", RUN["platform"], "--format", "json")
    assert stats.returncode == 0, stats.stderr
    stats = json.loads(stats.stdout)

    assert t.idle_states == from_file.idle_states
    assert t.end_s == pytest.approx(from_file.end_s, abs=1e-6)
    assert sorted(t.segments) == sorted(from_file.segments)
    for cpu, segments in t.segments.items():
        file_segments = from_file.segments[cpu]
        assert {s for *_, s in segments} == {s for *_, s in file_segments}, cpu
        tolerance = 1e-6 * (len(segments) + len(file_segments))
        for state in {s for *_, s in segments}:
            assert _time_in(segments, state) == pytest.approx(_time_in(file_segments, state), abs=tolerance), (cpu, state)
        assert _time_in(segments, RUNNING) == pytest.approx(stats["cpus"][cpu]["busy_s"], abs=tolerance)
        for index, state in enumerate(stats["cpus"][cpu]["idle_states"]):
            assert _time_in(segments, index) == pytest.approx(state["time_s"], abs=tolerance), state["name"]
        ours, theirs = t.frequency.get(cpu, []), from_file.frequency.get(cpu, [])
        assert [(k, c) for _, k, c in ours] == [(k, c) for _, k, c in theirs], cpu
        assert all(abs(a[0] - b[0]) < 1e-6 for a, b in zip(ours, theirs))


def test_stored_timelines_old_and_new_are_read_back():
    t, _ = trace_run(RUN, max_spans=5)
    assert CpuTimeline.from_dict(json.loads(json.dumps(t.to_dict()))) == t
    # a timeline stored before the engine built them (read from the text, cut after MAX_EVENTS)
    old = {"end_s": 0.001, "truncated": True, "events": 3, "frequency": {}, "segments": {"0": [[0.0, 0.001, 2]]}}
    back = CpuTimeline.from_dict(old)
    assert (back.truncated, back.events, back.segments, back.idle_states, back.resolution_s) == (True, 3, {0: [(0.0, 0.001, 2)]}, [], None)


# --- what the plots show ------------------------------------------------------------------


def cpu(busy_s, idle_s, tis, states):
    return {
        "busy_s": busy_s,
        "idle_s": idle_s,
        "time_in_state": tis,
        "idle_states": [{"name": n, "time_s": s} for n, s in states],
    }


def test_frequency_and_state_residency():
    runs = [
        {"cpus": [cpu(1.0, 1.0, {"800000": 1.5, "2000000": 0.5}, [("C1", 0.25), ("C6", 0.75)])]},
        {"cpus": [cpu(2.0, 0.0, {"800000": 0.0, "2000000": 2.0}, [("C1", 0.0), ("C6", 0.0)])]},
    ]
    assert aggregate.frequency_residency(runs) == {800000: 0.375, 2000000: 0.625}
    assert aggregate.state_residency(runs) == {"busy": 0.75, "C1": 0.0625, "C6": 0.1875}
    # idle time in no state is shown as such, and the shares still sum to 1
    gap = [{"cpus": [cpu(1.0, 1.0, {}, [("C1", 0.5)])]}]
    assert aggregate.state_residency(gap) == {"busy": 0.5, "C1": 0.25, aggregate.OTHER_IDLE: 0.25}
    assert aggregate.frequency_residency([]) == {}


def test_wakeup_cdf_merges_runs():
    runs = [
        {"wakeup_latency": {"buckets": [[10.0, 1], [20.0, 1]]}},
        {"wakeup_latency": {"buckets": [[20.0, 1], [40.0, 1]]}},
    ]
    assert aggregate.wakeup_cdf(runs) == ([10.0, 20.0, 40.0], [0.25, 0.75, 1.0])
    assert aggregate.wakeup_cdf([{"wakeup_latency": {"buckets": []}}]) == ([], [])


def test_latency_series_from_the_workload_metrics():
    runs = [
        {
            "metrics": {"rtt_p99_us": 30.0, "rtt_mean_us": 10.0, "rtt_max_us": 50.0, "rtt_p99.9_us": 40.0, "ops": 5.0},
            "units": {"rtt_p99_us": "us", "rtt_mean_us": "us", "rtt_max_us": "us", "rtt_p99.9_us": "us", "ops": "1/s"},
        },
        {"metrics": {"rtt_p99_us": 50.0}, "units": {"rtt_p99_us": "us"}},
    ]
    series = aggregate.latency_series(runs)
    assert list(series) == ["rtt"]
    assert list(series["rtt"].items()) == [("mean", 10.0), ("p99", 40.0), ("p99.9", 40.0), ("max", 50.0)]
    assert aggregate.latency_series([{"metrics": {"ops": 1.0}, "units": {"ops": "1/s"}}]) == {}


def test_latency_plots_are_dots_on_an_axis_fitted_to_the_data(evil_report):
    """A few percent between configurations must show: no bars from 0, each statistic's axis spans its data."""
    page, _ = evil_report
    latency = [f for f in plot_data(page).values() if "latency (µs)" in json.dumps(f["layout"], ensure_ascii=False)
               and all(t["type"] == "scatter" and t.get("mode") == "markers" for t in f["data"])]
    assert latency, "no latency dot plot"
    for figure in latency:
        assert not any(t["type"] == "bar" for t in figure["data"])
        axes = {k: v for k, v in figure["layout"].items() if k.startswith("yaxis")}
        for name, axis in axes.items():
            n = name[len("yaxis"):] or "1"
            on_axis = "y" if n == "1" else f"y{n}"
            ys = [y for t in figure["data"] if t.get("yaxis", "y") == on_axis for y in t["y"] if y is not None]
            if not ys:
                continue
            # Each dot's bar spans its runs (min to max): the axis holds the bars too.
            ends = [e for t in figure["data"] if t.get("yaxis", "y") == on_axis
                    for y, up, down in zip(t["y"], t["error_y"]["array"], t["error_y"]["arrayminus"]) if y is not None
                    for e in (y + up, y - down)]
            ys = ys + ends
            low, high = axis["range"]
            # fitted: the axis starts near the lowest value, not at 0, and holds every dot
            assert 0 < low <= min(ys) and max(ys) <= high, (name, axis["range"], ys)
            assert high - low < 1.5 * (max(ys) - min(ys)) + 0.15 * max(ys), (name, axis["range"], ys)


def test_pareto_front():
    # (energy J, performance)
    points = [(10.0, 100.0), (12.0, 120.0), (11.0, 90.0), (15.0, 119.0), (9.0, 80.0), (10.0, 100.0)]
    # higher is better: (11, 90) loses to (10, 100); (15, 119) to (12, 120); equal points both stay
    assert aggregate.pareto_front(points, "higher") == [4, 0, 5, 1]
    # lower is better (a latency): only the cheapest-and-fastest corner survives
    assert aggregate.pareto_front(points, "lower") == [4]
    assert aggregate.pareto_front([(1.0, math.nan), (2.0, 1.0)], "higher") == [1]
    with pytest.raises(ValueError):
        aggregate.pareto_front(points, "sideways")


# --- the page -------------------------------------------------------------------------------


def test_user_strings_are_escaped(evil_report):
    page, _ = evil_report
    # nothing from a user file or the trace opens a tag: every "<script" is one of ours
    assert EVIL not in page
    plots = plot_data(page)
    assert page.count("<script") == 1 + len(plots) + 1  # plotly.js, one JSON block per plot, the loader
    assert len(re.findall(r'<div class="plot" id="plot-\d+">', page)) == len(plots)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # tables and text, escaped by jinja2
    assert "<script src" not in page and "<link" not in page  # nothing to fetch

    # in the figures, user strings reach plotly HTML-escaped, so it shows them as text
    names = {trace.get("name") for figure in plots.values() for trace in figure["data"]}
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in names
    timeline = plots[max(plots, key=lambda k: int(k.split("-")[1]))]
    tasks = {task for trace in timeline["data"] for task in trace.get("customdata") or []}
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in tasks  # the task's comm, from the trace
    series_titles = [f["layout"]["yaxis"]["title"]["text"] for f in plots.values() if "latency (µs)" in json.dumps(f["layout"].get("yaxis", {}), ensure_ascii=False)]
    assert any("&lt;script&gt;" in t for t in series_titles)  # the workload's series name


def test_page_holds_every_section(evil_report):
    page, _ = evil_report
    for heading in ("Performance", "Energy and power", "Metric per parameter value", "Performance against energy",
                    "Frequency residency", "Idle-state residency", "Wakeup latency", "Summary over benchmarks",
                    "Timeline of one run", "Pareto front"):
        assert heading in page, heading
    plots = plot_data(page)
    assert all(figure["data"] for figure in plots.values())
    # the timeline shows the configuration asked for, as the engine built it from the run's trace
    assert "configuration <b>&lt;script&gt;alert(1)&lt;/script&gt;</b>" in page
    assert "Built by the engine from the run&#39;s trace" in page and "events are shown" not in page
    timeline = plots[max(plots, key=lambda k: int(k.split("-")[1]))]
    states = {trace["name"] for trace in timeline["data"] if trace.get("legendgroup") == "state"}
    # named from the platform's idle states (Skylake's), with "running" for busy
    assert "running" in states and states - {"running"} and states - {"running"} <= {"POLL", "C1", "C1E", "C3", "C6", "C7s", "C8"}, states


def test_report_renders_the_same_page_without_simulating(evil_report, monkeypatch):
    page, db = evil_report
    import govlab.report
    import govlab.sweep.worker

    def no_simulation(*_a, **_k):
        raise AssertionError("report must not simulate")

    monkeypatch.setattr(govlab.sweep.worker, "simulate", no_simulation)
    monkeypatch.setattr(govlab.report, "trace_run", no_simulation)
    with Store(db, create=False) as store:
        analyses = compare.from_store(store)
        again = html_report.render(analyses, html_report.cells(store, analyses), html_report.stored_timeline(store, analyses), source=str(db))
        # asking for the same run again finds its timeline stored
        evil = experiment.load(db.parent / "evil-experiment.toml")
        html_report.record_timeline(store, evil, plan.runs(evil), EVIL)
    assert again == page


def test_cli_html(cli, tmp_path):
    paths = write_experiments(tmp_path)
    db, html = tmp_path / "c.sqlite", tmp_path / "out.html"
    first = cli("compare", *map(str, paths), "--db", str(db), "--html", str(html), "--timeline", EVIL)
    assert first.returncode == 0, first.stderr
    assert f"wrote the HTML report to {html}" in first.stderr
    assert first.stdout.startswith("EVIL <SCRIPT>ALERT(1)</SCRIPT>")  # the text table is unchanged
    with sqlite3.connect(db) as con:
        timelines = con.execute("SELECT key, created_at FROM timelines").fetchall()
    assert len(timelines) == 1

    # a second compare simulates nothing, not even the timeline, and writes the same page
    again = tmp_path / "again.html"
    second = cli("compare", *map(str, paths), "--db", str(db), "--html", str(again), "--timeline", EVIL)
    assert second.returncode == 0 and "0 simulated" in second.stderr, second.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT key, created_at FROM timelines").fetchall() == timelines
    assert again.read_text() == html.read_text()

    # govlab report renders it again from the database
    reported = tmp_path / "report.html"
    rep = cli("report", str(db), "--html", str(reported))
    assert rep.returncode == 0, rep.stderr
    assert reported.read_text() == html.read_text()


def test_cli_html_without_a_stored_timeline_says_so(cli, tmp_path):
    small = tmp_path / "small.toml"
    small.write_text(SMALL)
    db = tmp_path / "s.sqlite"
    assert cli("compare", str(small), "--db", str(db)).returncode == 0
    rep = cli("report", str(db), "--html", str(tmp_path / "r.html"))
    assert rep.returncode == 0, rep.stderr
    assert "No timeline is stored" in rep.stderr
    assert "No timeline is stored" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--timeline", "nobody"], "no configuration 'nobody'; valid choices: ondemand, schedutil"),
        (["--timeline-value", "3"], "'3' is not a value of small's axis; valid choices: 1, 4"),
        ([], None),
    ],
)
def test_cli_timeline_choice(cli, tmp_path, args, message):
    small = tmp_path / "small.toml"
    small.write_text(SMALL)
    html = tmp_path / "r.html"
    proc = cli("compare", str(small), "--db", str(tmp_path / "s.sqlite"), "--html", str(html), *args)
    if message is None:
        assert proc.returncode == 0, proc.stderr
        assert "small: configuration <b>ondemand</b>, tasks = 4, seed 1." in html.read_text()
        return
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not html.exists()


def test_cli_timeline_needs_html(cli, tmp_path):
    small = tmp_path / "small.toml"
    small.write_text(SMALL)
    proc = cli("compare", str(small), "--timeline", "ondemand")
    assert proc.returncode == 2 and "need --html" in proc.stderr


def test_cli_html_to_an_impossible_path(cli, tmp_path):
    small = tmp_path / "small.toml"
    small.write_text(SMALL)
    db = tmp_path / "s.sqlite"
    assert cli("compare", str(small), "--db", str(db)).returncode == 0
    target = tmp_path / "no" / "such" / "dir" / "r.html"
    proc = cli("report", str(db), "--html", str(target))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"govlab: error: cannot write the HTML report {target}: the directory {target.parent} does not exist"
    )
    assert "Traceback" not in proc.stderr and not target.parent.exists()


def test_the_no_variance_mark_is_kept_in_the_html_tables():
    """[x%] (no variance to test) as in the text tables, not (x%)."""
    rows = [
        {
            "stat": "Amean",
            "label": "1",
            "cells": [
                {"config": "a", "value": 1.0, "pct": 0.0, "significant": None},
                {"config": "b", "value": 1.0, "pct": 0.0, "significant": None, "no_variance": True},
                {"config": "c", "value": 2.0, "pct": 100.0, "significant": True},
            ],
        }
    ]
    cells = html_report._table(rows, ["a", "b", "c"])[0]["cells"]
    assert [c["text"].split()[-1] for c in cells] == ["(0.00%)", "[0.00%]", "*100.00%*"]

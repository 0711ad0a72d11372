"""The HTML report: its figures from fixed inputs, the trace timeline, escaping, and the commands."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path

import pytest

from govlab import compare, experiment, pipeline, plan
from govlab import report as html_report
from govlab.report import aggregate
from govlab.report.timeline import EXIT_IDLE, RUNNING, parse, trace_run
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


# --- the trace timeline --------------------------------------------------------------------

TRACE = """\
version = 6
cpus=2
          <idle>-0     [000]     0.000000: cpu_idle:             state=2 cpu_id=0
          <idle>-0     [001]     0.000000: cpu_idle:             state=1 cpu_id=1
          <idle>-0     [000]     0.001000: cpu_idle:             state=4294967295 cpu_id=0
          <idle>-0     [000]     0.001000: sched_switch:         prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a b-c next_pid=1000 next_prio=120
           a b-c-1000  [000]     0.001500: cpu_frequency:        state=2000000 cpu_id=0
<script>alert(1)</script>-1001  [000]     0.002000: cpu_frequency:        state=2400000 cpu_id=0
          <idle>-0     [000]     0.003000: cpu_idle:             state=1 cpu_id=0
"""


def test_timeline_reads_frequency_and_idle_lines():
    t = parse(TRACE.splitlines(), end_s=0.005)
    assert (t.events, t.truncated, t.end_s) == (6, False, 0.005)
    # the comm is what stands before the last "-PID", spaces and dashes included
    assert t.frequency == {0: [(0.0015, 2000000, "a b-c"), (0.002, 2400000, EVIL)]}
    assert t.segments == {
        0: [(0.0, 0.001, 2), (0.001, 0.003, RUNNING), (0.003, 0.005, 1)],
        1: [(0.0, 0.005, 1)],
    }
    assert EXIT_IDLE == 2**32 - 1


def test_timeline_is_cut_after_max_events():
    t = parse(TRACE.splitlines(), end_s=0.005, max_events=3)
    assert (t.events, t.truncated, t.end_s) == (3, True, 0.001)
    assert t.frequency == {}
    assert t.segments == {0: [(0.0, 0.001, 2)], 1: [(0.0, 0.001, 1)]}
    again = type(t).from_dict(json.loads(json.dumps(t.to_dict())))
    assert again == t


def test_timeline_of_a_run_accounts_for_its_residencies():
    """Per CPU, the traced segments cover the run, and their running and per-state
    times equal the result's busy time and idle-state times (the trace has µs resolution)."""
    kwargs = dict(
        platform="skylake-e3-1240v5",
        workload="periodic:tasks=4,run_us=1500,period_us=7000",
        cpufreq="schedutil",
        cpuidle="menu",
        duration="300ms",
        seed=2,
    )
    t, result = trace_run(kwargs)
    assert not t.truncated and t.end_s == result["sim_time_s"]
    assert sum(len(v) for v in t.frequency.values()) > 0
    for cpu in result["cpus"]:
        segments = t.segments[cpu["cpu"]]
        tolerance = 1e-6 * (len(segments) + 1)
        assert math.fsum(b - a for a, b, _ in segments) == pytest.approx(result["sim_time_s"], abs=1e-9)
        running = math.fsum(b - a for a, b, s in segments if s == RUNNING)
        assert running == pytest.approx(cpu["busy_s"], abs=tolerance)
        for index, state in enumerate(cpu["idle_states"]):
            in_state = math.fsum(b - a for a, b, s in segments if s == index)
            assert in_state == pytest.approx(state["time_s"], abs=tolerance), state["name"]


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
    # the timeline shows the configuration asked for
    assert "configuration <b>&lt;script&gt;alert(1)&lt;/script&gt;</b>" in page


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

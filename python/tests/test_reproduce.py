"""govlab reproduce: experiments with several benchmarks, rows, verdicts, published data."""

from __future__ import annotations

import json
import math
import textwrap

import pytest

from govlab import cli, experiment, plan, reproduction as reproduce, stats
from govlab.pipeline import run_experiments
from govlab.store import Store

MULTI = textwrap.dedent(
    """\
    [experiment]
    name = "multi"
    platform = "skylake-e3-1240v5"
    duration = "200ms"
    repeats = 2
    baseline = "od"
    cpuidle = "menu"

    [quick]
    duration = "100ms"
    repeats = 1

    [[benchmark]]
    name = "periodic"
    workload = "periodic:run_us=1500,period_us=7000"
    axis = { tasks = [1, 2, 4] }

    [[benchmark]]
    name = "ebizzy"
    workload = "sleeping-ebizzy"
    axis = { util = [10, 40] }
    quick = [40]

    [[config]]
    name = "od"
    cpufreq = "ondemand"

    [[config]]
    name = "su"
    cpufreq = "schedutil"
    """
)


def test_benchmarks_become_experiments_and_quick_reduces_them(tmp_path):
    path = tmp_path / "multi.toml"
    path.write_text(MULTI)
    full = experiment.load_all(path)
    assert [(e.name, e.axis_name, e.axis_values, e.duration, e.seeds) for e in full] == [
        ("multi/periodic", "tasks", [1, 2, 4], "200ms", [1, 2]),
        ("multi/ebizzy", "util", [10, 40], "200ms", [1, 2]),
    ]
    quick = experiment.load_all(path, quick=True)
    # default quick values: the first and the last; a listed subset otherwise
    assert [(e.axis_values, e.duration, e.seeds) for e in quick] == [([1, 4], "100ms", [1]), ([40], "100ms", [1])]
    # the configurations are shared
    assert [c.cpufreq for c in full[1].configs] == ["ondemand", "schedutil"]


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("axis = { util = [10, 40] }", "axis = { utl = [10, 40] }", ":21: benchmark[2].axis.utl: "),
        ('workload = "sleeping-ebizzy"', 'workload = "sleepy"', ":20: benchmark[2].workload: "),
        ("quick = [40]", "quick = [50]", ":22: benchmark[2].quick: "),
        ('name = "ebizzy"', 'name = "periodic"', ":19: benchmark[2].name: two benchmarks"),
    ],
)
def test_benchmark_errors_name_the_benchmark_and_line(tmp_path, old, new, where):
    path = tmp_path / "multi.toml"
    path.write_text(MULTI.replace(old, new))
    with pytest.raises(experiment.ExperimentError) as e:
        experiment.load_all(path)
    assert where in str(e.value)


def test_load_refuses_a_file_of_several_benchmarks(tmp_path):
    path = tmp_path / "multi.toml"
    path.write_text(MULTI)
    with pytest.raises(experiment.ExperimentError, match="load_all"):
        experiment.load(path)


@pytest.mark.parametrize(
    ("published", "govlab", "same", "within", "text"),
    [
        (30.92, 16.0, True, True, "same direction, within 2x"),
        (30.92, 15.0, True, False, "same direction, magnitude off by more than 2x"),
        (30.92, 70.0, True, False, "same direction, magnitude off by more than 2x"),
        (-9.21, -4.7, True, True, "same direction, within 2x"),
        (1.85, -0.3, False, False, "opposite direction"),
        (-1.16, 2.0, False, False, "opposite direction"),
        (0.83, 0.0, False, False, "no difference in govlab"),
        (0.0, 0.0, True, True, "no difference, as published"),
    ],
)
def test_verdict(published, govlab, same, within, text):
    v = reproduce.verdict(published, govlab)
    assert (v["same_direction"], v["within_2x"], v["text"]) == (same, within, text)


def test_rows_hold_the_means_of_the_stored_runs_and_the_published_figures(tmp_path):
    path = tmp_path / "multi.toml"
    path.write_text(MULTI)
    exps = experiment.load_all(path, quick=True)
    with Store(tmp_path / "db.sqlite") as store:
        done = run_experiments(exps, store, jobs=1, progress=False)
        results = done.results(store)
    ev = reproduce.Evaluation("multi", "test", extra_metrics=("idle_correct_pct",))
    figures = [
        {"benchmark": "ebizzy", "param": 40, "config": "su", "metric": "records_per_s", "better": "higher",
         "baseline_value": 100.0, "value": 110.0, "where": "made up", "headline": True},
    ]
    table = reproduce.rows(ev, exps, done.planned, results, figures)
    # 2 (tasks 1, 4) + 1 (util 40) parameter values x 2 configs x 2 metrics
    assert len(table) == 3 * 2 * 2
    for r in table:
        if r["config"] == r["baseline"]:
            assert r["value"] == r["baseline_value"] and r["pct"] == 0
    ebizzy = next(r for r in table if r["benchmark"] == "ebizzy" and r["config"] == "su" and r["metric"] == "records_per_s")
    run = next(x for x in done.planned[1] if x.config == "su")
    assert ebizzy["value"] == pytest.approx(results[run.key]["primary_metric"]["value"])
    assert ebizzy["published"]["pct"] == pytest.approx(10.0)
    assert ebizzy["verdict"]["same_direction"] == (ebizzy["pct"] > 0)
    correct = next(r for r in table if r["metric"] == "idle_correct_pct" and r["benchmark"] == "periodic")
    cpus = results[next(x for x in done.planned[0] if x.config == correct["config"] and x.axis_value == correct["param"]).key]["cpus"]
    samples = sum(c["idle_accuracy"]["samples"] for c in cpus)
    assert correct["value"] == pytest.approx(100 * sum(c["idle_accuracy"]["correct"] for c in cpus) / samples)
    assert correct["idle_samples"] == samples
    # a rate's mean is the harmonic mean (MMTests' Hmean)
    assert reproduce._mean([1.0, 3.0], "higher") == pytest.approx(stats.hmean([1.0, 3.0]))


@pytest.mark.parametrize("name", ["hwp-dynamic-boost", "ondemand-copy-prev-load", "teo-weighted-history"])
def test_published_figures_load_and_name_their_benchmarks(name):
    ev = reproduce.evaluation(name)
    figures = reproduce.published(ev)
    assert figures and all(f["where"] for f in figures)
    assert any(f["headline"] for f in figures)
    benchmarks = {e.name.split("/", 1)[1]: e for e in reproduce.experiments_of(ev)}
    for f in figures:
        assert f["benchmark"] in benchmarks, f
        e = benchmarks[f["benchmark"]]
        assert f["config"] in [c.name for c in e.configs]
        assert (f["param"] is None) == (e.axis_name is None)
        if f["headline"]:
            assert f["param"] is None or f["param"] in e.axis_values  # --quick keeps every headline row
            quick = {x.name.split("/", 1)[1]: x for x in reproduce.experiments_of(ev, quick=True)}[f["benchmark"]]
            assert f["param"] is None or f["param"] in quick.axis_values


def test_unknown_evaluation_is_a_clear_error(capsys):
    assert cli.main(["reproduce", "no-such-thing"]) == 2
    err = capsys.readouterr().err
    assert "no evaluation named 'no-such-thing'" in err and "hwp-dynamic-boost" in err


def _freqs_after_wakeups(trace_text: str, cpu: int) -> list[int]:
    """The first cpu_frequency of `cpu` after each switch from its idle task to ebizzy."""
    out, woke = [], False
    for line in trace_text.splitlines():
        if f"[{cpu:03d}]" in line and "sched_switch" in line and "prev_comm=swapper" in line:
            woke = True
        elif woke and "cpu_frequency" in line and line.rstrip().endswith(f"cpu_id={cpu}"):
            out.append(int(line.split("state=")[1].split()[0]))
            woke = False
    return out


@pytest.mark.parametrize(("copy", "dips"), [("off", True), ("on", False)])
def test_the_2014_trace_pattern(tmp_path, copy, dips):
    """ondemand on the 2014 post's kernel (3.15: timer sampling, tick stopped in idle): without the
    patch the first sample after each 100 ms sleep drops the frequency below max, as in the post's
    trace; with it, not. (From v4.6 the hook samples at the wakeup itself, and not every wakeup dips.)"""
    import govlab

    trace = tmp_path / "t.txt"
    govlab.run(
        platform="power8:idle_tick=stopped",
        workload="sleeping-ebizzy:threads=1,cpu=8,interval_us=100000,util=40",
        cpufreq=f"ondemand:copy_prev_load={copy}",
        cpuidle="menu",
        duration="2s",
        trace=str(trace),
        # The pattern is the sleeping CPU's own: no housekeeping sampling it in between.
        kernel="3.15:housekeeping=off",
    )
    after = _freqs_after_wakeups(trace.read_text(), 8)[1:]  # the first is the task's start, not a wakeup
    if dips:
        assert len(after) >= 8 and all(f < 4_100_000 for f in after), after
    else:
        assert all(f == 4_100_000 for f in after), after


def test_idle_tick_stopped_lets_the_deferrable_timer_sleep(tmp_path):
    """With the v4.17+ idle loop, menu keeps the tick in nap on POWER8 (fastsleep's 300 ms
    residency is out of reach), so ondemand samples the idle CPU every tick; with the old
    loop the idle CPU sees no frequency change until it wakes."""
    import govlab

    def idle_samples(platform: str) -> int:
        trace = tmp_path / "t.txt"
        # housekeeping off: its wakeups would let ondemand sample the idle CPU either way.
        govlab.run(platform=platform, workload="sleeping-ebizzy:threads=1,cpu=8,interval_us=100000,util=40",
                   cpufreq="ondemand", cpuidle="menu", duration="1s", trace=str(trace),
                   kernel="6.8:housekeeping=off")
        n, idle = 0, False
        for line in trace.read_text().splitlines():
            if "[008]" in line and "sched_switch" in line:
                idle = "next_comm=swapper" in line
            elif idle and "cpu_frequency" in line and line.rstrip().endswith("cpu_id=8"):
                n += 1
        return n

    assert idle_samples("power8") > 0
    assert idle_samples("power8:idle_tick=stopped") == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hwp_boost_shortens_the_dbench_1_client_maximum(seed):
    """The 2018 headline's mechanism: the pass's Deltree follows an fsync. Without the boost HWP
    has dropped the idle-through-IO CPU to its lowest level and the Deltree starts in a ramp;
    with it the IO wakeup has raised the floor to P1. Every seed, not only on average."""
    import govlab

    def latency(boost: int) -> float:
        r = govlab.run(platform="skylake-e3-1240v5:idle_tick=stopped", workload="dbench:clients=1",
                       cpufreq=f"intel_pstate:hwp=on,hwp_dynamic_boost={boost}", cpuidle="menu",
                       duration="2s", seed=seed)
        return r.metrics["latency_ms"]

    vanilla, boost = latency(0), latency(1)
    assert boost < 0.97 * vanilla, (vanilla, boost)

"""The Trace API in LISA's vocabulary: normalize_time, views by time window, the
missing-event error, and the analyses under ``trace.ana``, each against values
worked out by hand from ``trace-cmd report`` of a real Juno trace
(data/real/lisa/sched_load: 6 CPUs, 2084.021443-2084.449525 s, schedutil)."""

from __future__ import annotations

from pathlib import Path

import pytest

import govlab

REAL = Path(__file__).resolve().parents[2] / "data" / "real"
SCHED_LOAD = REAL / "lisa" / "sched_load" / "trace.dat"
#: The trace's first and last events (trace.report.txt's first and last lines).
FIRST, LAST = 2084.021443, 2084.449525
US = 1e-6  # trace-cmd report rounds to whole microseconds


@pytest.fixture(scope="module")
def trace() -> govlab.Trace:
    return govlab.Trace(SCHED_LOAD)


def test_missing_event_names_the_closest_and_lists_the_rest(trace):
    with pytest.raises(govlab.MissingTraceEventError) as e:
        trace.df_event("cpu_freqency")
    err = e.value
    assert isinstance(err, KeyError) and isinstance(err, govlab.GovlabError)
    assert err.closest == "cpu_frequency" and "sched_switch" in err.available
    assert str(err).startswith("event 'cpu_freqency': not in this trace; did you mean 'cpu_frequency'?")
    assert "sched_load_se" in str(err)
    with pytest.raises(govlab.MissingTraceEventError, match="the trace has: cpu_frequency, cpu_idle"):
        trace.df_event("sched_wakeup")


def test_normalize_time_is_one_time_base(trace):
    norm = govlab.Trace(SCHED_LOAD, normalize_time=True)
    assert trace.start == pytest.approx(FIRST, abs=US) and trace.end == pytest.approx(LAST, abs=US)
    assert norm.start == 0.0 and norm.end == pytest.approx(LAST - FIRST, abs=US)
    raw, shifted = trace.df_event("cpu_frequency"), norm.df_event("cpu_frequency")
    assert list(shifted.index) == pytest.approx([t - trace.start for t in raw.index], abs=1e-9)
    # the timelines are in the same base as df_event
    assert norm.frequency_timeline()["time_s"].iloc[0] == pytest.approx(shifted.index[0], abs=1e-6)
    assert trace.frequency_timeline()["time_s"].iloc[0] == pytest.approx(raw.index[0], abs=1e-6)
    assert trace.timeline()["start_s"].min() >= trace.start - 1e-9


def test_a_window_keeps_only_its_rows(trace):
    view = trace[2084.2:2084.3]
    df = view.df_event("cpu_frequency")
    # trace.report.txt: cpu_frequency at 2084.218981 (CPUs 1,2 to 800 MHz), 2084.227212 (CPUs 0,3,4,5
    # to 450 MHz) and 2084.259397 (CPUs 1,2 to 450 MHz)
    assert len(df) == 8 and ((df.index >= 2084.2) & (df.index < 2084.3)).all()
    assert list(df["frequency"]) == [800000] * 2 + [450000] * 6
    assert list(df["cpu"]) == [1, 2, 0, 3, 4, 5, 1, 2]
    whole = trace.df_event("sched_switch")
    inside = whole[(whole.index >= 2084.2) & (whole.index < 2084.3)]
    assert view.df_event("sched_switch").equals(inside) and 0 < len(inside) < len(whole)
    assert trace.get_view((2084.2, 2084.3)).df_event("cpu_frequency").equals(df)
    assert view.window == (2084.2, 2084.3)
    assert trace[:2084.1].start == trace.start and trace[2084.4:].end == trace.end
    polars = view.df_event("cpu_frequency", backend="polars")
    assert polars.height == 8


def test_frequency_residency_and_transitions_per_cpu(trace):
    # CPU 0: 850 MHz at 2084.143680, 450 MHz at 2084.227212, 850 MHz at 2084.327277, end 2084.449525.
    res = trace.ana.frequency.df_cpu_frequency_residency(0)["total_time"]
    assert res[850000] == pytest.approx((227212 - 143680 + 449525 - 327277) * US, abs=2 * US)
    assert res[450000] == pytest.approx((327277 - 227212) * US, abs=2 * US)
    tr = trace.ana.frequency.df_cpu_frequency_transitions(0)["transitions"]
    assert dict(tr) == {450000: 1, 850000: 1}
    # In a window the residency is clipped, the state at its start the one set before it.
    window = trace[2084.2:2084.3].ana.frequency.df_cpu_frequency_residency(0)["total_time"]
    assert window[850000] == pytest.approx(0.027212, abs=2 * US) and window[450000] == pytest.approx(0.072788, abs=2 * US)


def test_frequency_domains_come_from_the_events(trace):
    freq = trace.ana.frequency
    assert freq.frequency_domains == [[0, 3, 4, 5], [1, 2]]  # Juno: LITTLE 0,3,4,5 and big 1,2
    dom = freq.df_domain_frequency_residency(4)
    assert set(dom["cpus"]) == {"0,3,4,5"} and dom["total_time"].equals(freq.df_cpu_frequency_residency(0)["total_time"])
    # the big cluster (trace.report.txt): 800 MHz at 2084.218981, 450 MHz at 2084.259397
    big = freq.df_domain_frequency_transitions(2)
    assert set(big["cpus"]) == {"1,2"} and dict(big["transitions"]) == {450000: 1}
    assert dict(freq.df_cpu_frequency_transitions(1)["transitions"]) == {450000: 1}


def test_idle_state_residency_per_cpu(trace):
    # CPU 5 (trace.report.txt): state 0 at .201250-.203164, .203333-.235950, .238681-(window end .2413)
    res = trace[2084.2008:2084.2413].ana.idle.df_cpu_idle_state_residency(5)["time"]
    assert list(res.index) == [0]
    assert res[0] == pytest.approx((1914 + 32617 + 2619) * US, abs=3 * US)
    whole = trace.ana.idle.df_cpu_idle_state_residency(5)
    assert set(whole.index) <= {0, 1, 2} and whole["time"].sum() < trace.end - trace.start


def test_task_activations_and_residency(trace):
    # pid 3105 (sudo, then sh): on CPU 2 at .228782-.229190; on CPU 0 at .229233-.232796,
    # .239387-.239644, .239785-.239930, .239947-.240609.
    act = trace.ana.tasks.df_task_activation(3105)
    assert list(act["cpu"]) == [2, 0, 0, 0, 0]
    assert list(act["duration"]) == pytest.approx([408 * US, 3563 * US, 257 * US, 145 * US, 662 * US], abs=2 * US)
    assert act.index[0] == pytest.approx(2084.228782, abs=US)
    res = trace.ana.tasks.df_task_total_residency(3105)["runtime"]
    assert res[2] == pytest.approx(408 * US, abs=2 * US) and res[0] == pytest.approx(4627 * US, abs=4 * US)
    assert res[[1, 3, 4, 5]].sum() == 0
    table = trace.ana.tasks.df_tasks_total_residency()
    assert table.loc[(3105, "sh"), "Total"] == pytest.approx(5035 * US, abs=5 * US)


def test_pelt_signals_per_task(trace):
    # trace.report.txt's sched_load_se lines of pid 3105: util 252, 259, 253, 222, 221, ...
    util = trace.ana.load_tracking.df_task_signal(3105, "util")
    assert list(util["util"])[:5] == [252, 259, 253, 222, 221]
    assert list(util["cpu"])[:2] == [2, 0]
    cpus = trace.ana.load_tracking.df_cpus_signal("util")
    assert set(cpus["cpu"]) <= set(range(6)) and len(cpus) > 0
    with pytest.raises(govlab.InvalidValueError, match="signal"):
        trace.ana.load_tracking.df_tasks_signal("nosuch")


RTAPP = """\
# tracer: nop
#
          rt-app-4000  [001]    10.000000: print: tracing_mark_write: rtapp_main: event=start
          rt-app-4001  [001]    10.100000: print: tracing_mark_write: rtapp_loop: event=start thread_loop=0 phase=0 phase_loop=0
          rt-app-4001  [001]    10.200000: print: tracing_mark_write: rtapp_loop: event=end thread_loop=0 phase=0 phase_loop=0
          rt-app-4001  [001]    10.200000: print: tracing_mark_write: rtapp_loop: event=start thread_loop=0 phase=0 phase_loop=1
          rt-app-4001  [001]    10.300000: print: tracing_mark_write: rtapp_loop: event=end thread_loop=0 phase=0 phase_loop=1
          rt-app-4001  [001]    10.300000: print: tracing_mark_write: rtapp_loop: event=start thread_loop=0 phase=1 phase_loop=0
          rt-app-4001  [001]    10.750000: print: tracing_mark_write: rtapp_loop: event=end thread_loop=0 phase=1 phase_loop=0
"""


def test_rtapp_phases_from_its_markers(tmp_path):
    """No recording in data/real has rt-app's own markers (its ftrace option was off), so
    this one is written by hand in rt-app's format (rt-app src/rt-app.c, log_ftrace)."""
    path = tmp_path / "rtapp.txt"
    path.write_text(RTAPP)
    phases = govlab.Trace(path).ana.rta.df_phases(4001)
    assert list(phases["phase"]) == [0, 1]
    assert list(phases.index) == pytest.approx([10.1, 10.3])
    assert list(phases["duration"]) == pytest.approx([0.2, 0.45])


def test_every_analysis_has_a_titled_figure(trace):
    ana = trace.ana
    figures = [
        ana.frequency.plot_cpu_frequency_residency(0),
        ana.frequency.plot_cpu_frequency_transitions(0),
        ana.frequency.plot_domain_frequencies(),
        ana.frequency.plot_cpu_frequencies(0),
        ana.idle.plot_cpu_idle_state_residency(5),
        ana.tasks.plot_task_total_residency(3105),
        ana.tasks.plot_task_activation(3105),
        ana.load_tracking.plot_task_signals(3105),
    ]
    for fig in figures:
        assert fig.layout.title.text and fig.layout.xaxis.title.text and fig.data
    assert [t.name for t in figures[2].data] == ["CPUs 0,3,4,5", "CPUs 1,2"]


def test_wrong_arguments_are_govlab_errors(trace):
    with pytest.raises(govlab.InvalidValueError, match="cpu: invalid value 6: a CPU of this trace, 0 to 5"):
        trace.ana.frequency.df_cpu_frequency_residency(6)
    with pytest.raises(govlab.InvalidValueError, match="cpu"):
        trace.ana.frequency.df_domain_frequency_residency(-1)
    with pytest.raises(govlab.InvalidValueError, match="window"):
        trace["a":"b"]
    with pytest.raises(govlab.InvalidValueError, match="the end is before the start"):
        trace.get_view((2084.3, 2084.2))
    with pytest.raises(govlab.InvalidValueError, match="signal: invalid value 'nosuch'"):
        trace.ana.load_tracking.df_cpus_signal("nosuch")
    with pytest.raises(govlab.InvalidValueError, match="no task named 'nosuch'"):
        trace.ana.tasks.df_task_activation("nosuch")
    # a view of a view narrows it
    assert trace[2084.1:2084.3][2084.2:2084.4].window == (2084.2, 2084.3)


def test_a_run_with_lisa_module_gives_the_signals_lisa_reads(tmp_path):
    """A juno-r0 rt-app run traced with LISA's module (``lisa_module=on``) and
    rt-app's markers: the load-tracking analyses read its ``sched_pelt_se`` /
    ``sched_pelt_cfs`` events, the rt-app analysis its ``rtapp_loop`` markers,
    from the text file as from memory."""
    wl = tmp_path / "p.json"
    wl.write_text(
        '{ "global": { "calibration": "CPU1", "ftrace": "main,task,loop" }, "tasks": { "small": '
        '{ "loop": 1, "phases": { "light": { "loop": 10, "run": 2000, "timer": { "ref": "unique", "period": 16000 } },'
        ' "heavy": { "loop": 10, "run": 8000, "timer": { "ref": "unique", "period": 16000 } } } } } }'
    )
    kw = dict(platform="juno-r0", workload=f"rtapp:file={wl}", cpufreq="schedutil", duration="400ms", seed=1)
    text = tmp_path / "run.txt"
    govlab.run(**kw, kernel="6.8:lisa_module=on", trace=text)
    for source in (text, govlab.run(**kw, kernel="6.8:lisa_module=on", trace=True)):
        trace = govlab.Trace(source)
        util = trace.ana.load_tracking.df_task_signal("small", "util")
        assert len(util) > 20
        # the heavy phase (8 of 16 ms) raises the task's utilisation above the light one's (2 of 16)
        assert util["util"].iloc[-1] > util["util"].iloc[len(util) // 4]
        cpus = trace.ana.load_tracking.df_cpus_signal("util")
        assert set(cpus["cpu"]) <= set(range(6)) and len(cpus) > 0
        phases = trace.ana.rta.df_phases("small")
        assert list(phases["phase"]) == [0, 1]
    plain = govlab.Trace(govlab.run(**kw, trace=True))
    with pytest.raises(govlab.MissingTraceEventError):
        plain.ana.load_tracking.df_task_signal("small", "util")

"""Within-run samples (govlab.samples): read as MMTests' Extract modules read their benchmarks' output."""

from __future__ import annotations

import math

import pytest

from govlab import experiment, samples


def _iv(i: int, dt: float = 0.01, counters=(0, 0), series=((0, 0.0),), package_j: float = 0.1) -> dict:
    return {
        "start_s": i * dt,
        "end_s": (i + 1) * dt,
        "counters": list(counters),
        "series": [{"count": c, "sum_ns": s} for c, s in series],
        "package_j": package_j,
    }


def test_pgbench_skips_nine_intervals_then_averages_batches_of_four():
    # ExtractPgbench: startSamples = 1 + 2 x 4; the 10th line on, in batches of 4
    ivs = [_iv(i, counters=(i, 0)) for i in range(30)]
    got = samples.extract("pgbench", ivs)
    # intervals 9-12, 13-16, 17-20, 21-24, 25-28 (29 is a batch left unfinished): transactions / 0.01 s
    assert got["values"] == pytest.approx([100 * (9 + 12) / 2, 100 * (13 + 16) / 2, 100 * (17 + 20) / 2, 100 * (21 + 24) / 2, 100 * (25 + 28) / 2])
    assert got["pkg_power_w"] == pytest.approx([10.0] * 30)


def test_tbench_reads_running_averages_after_a_fifth_of_warm_up():
    # 12 intervals: 2 of warm-up (a sixth: 36 of 216 s), then bytes since the warm-up over the time since
    ivs = [_iv(i, counters=(0, 10**6 * (100 if i < 2 else 1 + i % 2))) for i in range(12)]
    got = samples.extract("tbench4", ivs)["values"]
    assert len(got) == 10
    assert got[0] == pytest.approx(1 / 0.01) and got[1] == pytest.approx(3 / 0.02)
    assert got[-1] == pytest.approx(15 / 0.1)  # the whole execute phase: the run's final figure


def test_tbench_after_a_warm_up_scores_the_harmonic_mean_of_its_execute_lines():
    # compare-mmtests' Hmean of the running averages, not the whole window's bytes over its time
    # (which would count the warm-up sixth's 100 MB too)
    ivs = [_iv(i, counters=(0, 10**6 * (100 if i < 2 else 1 + i % 2))) for i in range(12)]
    run = {"samples": {"sampler": "tbench4", "warmup_s": 0.1, "intervals": ivs}}
    got = samples.extract("tbench4", ivs)["values"]
    assert samples.window(run)["value"] == pytest.approx(len(got) / sum(1 / v for v in got))
    assert samples.window(run)["value"] != pytest.approx((200 + 15) / 0.12)


def test_dbench_reads_a_pass_of_operations_at_a_time():
    # 3573 operations a pass (client-tiny.txt): 2000 + 1573 operations make the first sample (0.1 ms
    # each), one interval of 4000 the second (0.2 ms each); the 500 left at the end make no pass
    ivs = [_iv(0, series=((2000, 2e8),)), _iv(1, series=((1573, 1.573e8),)), _iv(2, series=((4000, 8e8),)), _iv(3, series=((500, 1e8),))]
    got = samples.extract("dbench4", ivs)["values"]
    assert got == pytest.approx([0.1 * 3573, 0.2 * 3573])


def test_the_runs_remainder_interval_is_left_out():
    ivs = [_iv(i) for i in range(3)] + [{**_iv(3), "end_s": 0.0301}]
    assert len(samples.extract("dbench4", ivs)["pkg_power_w"]) == 3


def test_the_interval_scales_mmtests_seconds_to_the_run():
    assert samples.interval_ns("pgbench", 10**9) == 3_333_333
    assert samples.interval_ns("tbench4", 216 * 10**6) == 10**6


BENCH = """\
[experiment]
name = "x"
platform = "skylake-e3-1240v5"
duration = "100ms"
repeats = 3
seed = 1

[quick]
repeats = 2

[[benchmark]]
name = "timed"
workload = "pgbench:mode=ro"
repeats = 1
samples = "pgbench"
axis = { clients = [1, 2] }

[[benchmark]]
name = "iterated"
workload = "kernbench:files=20"

[[config]]
name = "a"
cpufreq = "schedutil"
"""


def test_a_benchmark_sets_its_own_repeats_and_sampler(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(BENCH)
    for quick, iterated in ((False, [1, 2, 3]), (True, [1, 2])):
        timed, other = experiment.load_all(path, quick=quick)
        assert (timed.seeds, timed.samples) == ([1], "pgbench")
        assert (other.seeds, other.samples) == (iterated, None)


@pytest.mark.parametrize(
    "edit, where, what",
    [
        ('samples = "pgbench"', 'samples = "pgbnch"', "expected one of"),
        ('samples = "pgbench"', 'samples = "tbench4"', "reads the tbench workload"),
        ("repeats = 1\n", "repeats = 0\n", "from 1 to"),
    ],
)
def test_a_bad_sampler_or_repeats_names_its_benchmark(tmp_path, edit, where, what):
    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace(edit, where))
    with pytest.raises(experiment.ExperimentError) as err:
        experiment.load_all(path)
    assert "benchmark[1]" in str(err.value) and what in str(err.value)


def test_a_sampled_run_keeps_its_samples_and_its_figures(tmp_path):
    # the samples come from the engine's intervals; the run's own figures are those of a run without them
    from govlab import api
    from govlab.pipeline import run_experiments
    from govlab.store import Store

    path = tmp_path / "x.toml"
    path.write_text(BENCH)
    exps = experiment.load_all(path, quick=True)[:1]
    with Store(tmp_path / "r.sqlite") as store:
        done = run_experiments(exps, store, jobs=1, progress=False)
        results = done.results(store)
    run = done.planned[0][0]
    got = results[run.key]
    assert "intervals" not in got and got["samples"]["sampler"] == "pgbench"
    # 300 intervals of a 100-ms run: 9 skipped, 72 batches of 4 (the last interval, 100 ns, left out)
    read = samples.of(got)
    assert len(read["values"]) == 72 and len(read["pkg_power_w"]) == 300
    plain = api.run(**{k: v for k, v in run.kwargs.items() if k != "samples"}).to_dict()
    assert got["primary_metric"] == plain["primary_metric"] and got["energy_j"] == plain["energy_j"]
    # the samples' mean is near the run's transactions per second (they leave out its first 9 intervals)
    mean = sum(read["values"]) / 72
    assert mean == pytest.approx(plain["primary_metric"]["value"], rel=0.2)


def test_sample_intervals_hold_the_workload_and_packages_only():
    import govlab

    kw = dict(platform="broadwell-2s-e5-2698v4", workload="pgbench:clients=4", duration="100ms", seed=3)
    lean = govlab.run(**kw, sample_interval="10ms").to_dict()
    full = govlab.run(**kw, turbostat_interval="10ms").to_dict()
    assert [iv["cpus"] for iv in lean["intervals"]] == [[]] * 10
    assert [iv["counters"] for iv in lean["intervals"]] == [iv["counters"] for iv in full["intervals"]]
    assert [iv["packages"] for iv in lean["intervals"]] == [iv["packages"] for iv in full["intervals"]]
    with pytest.raises(govlab.GovlabError, match="sample_interval"):
        govlab.run(**kw, sample_interval="10ms", turbostat_interval="10ms")


def test_the_warm_up_is_whole_intervals():
    # 1 s in 300 intervals of 3,333,333 ns: 2 s is 600 of them, 1,999,999,800 ns
    assert samples.warmup_ns("pgbench", 10**9, 2 * 10**9) == 600 * 3_333_333
    assert samples.warmup_ns("tbench4", 216 * 10**6, 10**9) == 1000 * 10**6


@pytest.mark.parametrize("name, counters, series", [("pgbench", (7, 0), ((0, 0.0),)), ("tbench4", (0, 3 * 10**6), ((0, 0.0),)), ("dbench4", (0, 0), ((40, 4e6),))])
def test_a_run_without_a_warm_up_has_no_window_and_loses_no_interval(name, counters, series):
    raw = [{**_iv(i, counters=counters, series=series), "packages": [{"package_j": 0.1}]} for i in range(5)]
    kept = samples.compact(name, raw)
    assert len(kept["intervals"]) == 5 and "warmup_s" not in kept
    assert samples.window({"samples": kept}) is None


def test_the_window_after_a_warm_up_is_the_primary_metric_of_the_rest():
    # 10 intervals of 10 ms, the first 4 a warm-up: 40 transactions and 1 J each in it, 10 and 0.2 J after
    raw = [
        {
            **_iv(i, counters=(40 if i < 4 else 10, 0)),
            "packages": [{"package_j": 0.6 if i < 4 else 0.1, "dram_j": 0.05}, {"package_j": 0.4 if i < 4 else 0.1, "dram_j": 0.02}],
        }
        for i in range(10)
    ]
    kept = samples.compact("pgbench", raw, 40_000_000)
    assert [iv["start_s"] for iv in kept["intervals"]] == pytest.approx([0.04, 0.05, 0.06, 0.07, 0.08, 0.09])
    got = samples.window({"samples": kept})
    assert got == pytest.approx({"value": 60 / 0.06, "package_j": 1.2, "dram_j": 0.42, "seconds": 0.06})
    # intervals stored before they kept DRAM: no DRAM figure, not a zero one
    old = {**kept, "intervals": [{k: v for k, v in iv.items() if k != "dram_j"} for iv in kept["intervals"]]}
    assert math.isnan(samples.window({"samples": old})["dram_j"])
    assert samples.of({"samples": kept})["pkg_power_w"] == pytest.approx([20.0] * 6)


def test_the_window_reads_each_samplers_primary_metric():
    ivs = [_iv(i, counters=(5, 2 * 10**6), series=((100, 1e7),)) for i in range(4)]
    assert samples.SAMPLERS["tbench4"].primary(ivs, 0.04) == pytest.approx(8 / 0.04)
    assert samples.SAMPLERS["dbench4"].primary(ivs, 0.04) == pytest.approx(0.1 * 3573)
    assert samples.SAMPLERS["pgbench"].primary(ivs, 0.04) == pytest.approx(20 / 0.04)


def test_a_warm_up_needs_a_sampler_and_a_duration(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace('workload = "kernbench:files=20"', 'workload = "kernbench:files=20"\nwarmup = "1s"'))
    with pytest.raises(experiment.ExperimentError, match="benchmark.2..warmup.*with samples"):
        experiment.load_all(path)
    path.write_text(BENCH.replace('samples = "pgbench"', 'samples = "pgbench"\nwarmup = "1"'))
    with pytest.raises(experiment.ExperimentError, match="needs its unit"):
        experiment.load_all(path)


def test_a_run_with_a_warm_up_is_measured_after_it(tmp_path):
    # the run lasts the warm-up plus the duration; its samples, score and power are the duration's
    from govlab import api, plan, reproduction
    from govlab.pipeline import run_experiments
    from govlab.store import Store

    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace('samples = "pgbench"', 'samples = "pgbench"\nwarmup = "50ms"'))
    exps = experiment.load_all(path, quick=True)[:1]
    assert exps[0].warmup_ns == 50_000_000
    plain = tmp_path / "plain.toml"
    plain.write_text(BENCH)
    plain_key = plan.runs(experiment.load_all(plain, quick=True)[0])[0].key
    with Store(tmp_path / "r.sqlite") as store:
        done = run_experiments(exps, store, jobs=1, progress=False)
        results = done.results(store)
    run = done.planned[0][0]
    assert run.key != plain_key
    warm = 150 * 333_333  # 50 ms in intervals of 100 ms / 300
    assert run.kwargs["samples"]["warmup_ns"] == warm and run.kwargs["duration"] == f"{100_000_000 + warm}ns"
    got = results[run.key]
    kept = got["samples"]
    assert kept["warmup_s"] == warm / 1e9 and min(iv["start_s"] for iv in kept["intervals"]) == pytest.approx(warm / 1e9)
    read = samples.of(got)
    assert len(read["values"]) == 72 and len(read["pkg_power_w"]) == 300
    # the window's figures are the engine's for the run's intervals after the warm-up
    full = api.run(**{k: v for k, v in run.kwargs.items() if k != "samples"}, sample_interval="333333ns").to_dict()
    after = [iv for iv in full["intervals"] if iv["start_s"] >= warm / 1e9 - 1e-12]
    secs = sum(iv["end_s"] - iv["start_s"] for iv in after)
    window = samples.window(got)
    assert window["value"] == pytest.approx(sum(iv["counters"][0] for iv in after) / secs)
    assert window["seconds"] == pytest.approx(0.1, abs=1e-6)
    assert reproduction._primary_value(got) == window["value"] != got["primary_metric"]["value"]


def test_a_benchmarks_max_events_is_its_runs_ceiling(tmp_path):
    # a benchmark's max_events reaches each of its runs (the higher of it and the caller's holds),
    # not the other benchmarks', and is no part of a run's identity
    from govlab import GovlabError, api, plan

    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace('samples = "pgbench"', 'samples = "pgbench"\nmax_events = 5'))
    timed, iterated = experiment.load_all(path, quick=True)
    assert timed.max_events == 5 and iterated.max_events is None
    runs = plan.runs(timed)
    assert {r.kwargs["max_events"] for r in runs} == {5}
    assert all("max_events" not in r.kwargs for r in plan.runs(iterated))
    assert [r.kwargs["max_events"] for r in plan.runs(timed, max_events=10**12)][0] == 10**12
    plain = tmp_path / "plain.toml"
    plain.write_text(BENCH)
    assert [r.key for r in runs] == [r.key for r in plan.runs(experiment.load_all(plain, quick=True)[0])]
    # a ceiling of 5 ops refuses the run: the engine got it
    with pytest.raises(GovlabError, match="more than the 5e0 a run may take"):
        api.run(**{k: v for k, v in runs[0].kwargs.items() if k != "samples"})


@pytest.mark.parametrize("value", ["0", "-3", "1.5", '"many"', "true"])
def test_a_bad_max_events_names_its_benchmark(tmp_path, value):
    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace('samples = "pgbench"', f'samples = "pgbench"\nmax_events = {value}'))
    with pytest.raises(experiment.ExperimentError, match=r"x.toml:\d+: benchmark\[1\]\.max_events: expected an integer from 1 to"):
        experiment.load_all(path)


def test_a_benchmarks_quick_duration_is_its_length_in_a_quick_run_only(tmp_path):
    # duration holds at full size, quick_duration in --quick (a benchmark's own duration otherwise
    # holds in both); the other benchmarks keep the [quick] table's and the experiment's
    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace('samples = "pgbench"', 'samples = "pgbench"\nduration = "3s"\nquick_duration = "20ms"'))
    full, quick = experiment.load_all(path), experiment.load_all(path, quick=True)
    assert [e.duration for e in full] == ["3s", "100ms"]
    assert [e.duration for e in quick] == ["20ms", "100ms"]
    path.write_text(BENCH.replace('samples = "pgbench"', 'samples = "pgbench"\nduration = "3s"'))
    assert [e.duration for e in experiment.load_all(path, quick=True)] == ["3s", "100ms"]


@pytest.mark.parametrize("value", ['"3 parsecs"', '"0s"', '"-1s"', "true"])
def test_a_bad_quick_duration_names_its_benchmark(tmp_path, value):
    # checked on load at either size, with the file, line and key
    path = tmp_path / "x.toml"
    path.write_text(BENCH.replace('samples = "pgbench"', f'samples = "pgbench"\nquick_duration = {value}'))
    for quick in (False, True):
        with pytest.raises(experiment.ExperimentError, match=r"x.toml:\d+: benchmark\[1\]\.quick_duration: "):
            experiment.load_all(path, quick=quick)

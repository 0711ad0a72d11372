"""Within-run samples (govlab.samples): read as MMTests' Extract modules read their benchmarks' output."""

from __future__ import annotations

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

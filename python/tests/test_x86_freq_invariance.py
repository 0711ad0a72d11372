"""The x86 frequency-invariance evaluation (2020): its experiment files, published figures and scores."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from govlab import reproduction as reproduce, stats

EV = reproduce.evaluation("x86-freq-invariance")

#: machine -> (platform, freq_invariance of each invariant configuration, HWP in intel_pstate's active mode)
MACHINES = {
    "skylake": ("skylake-e3-1240v5", {"1C": "1c", "3C": "3c", "4C": "4c"}, True),
    "broadwell": ("broadwell-2s-e5-2698v4", {"1C": "1c", "3C": "3c", "4C": "4c", "8C": "8c"}, False),
    "haswell": ("haswell-2s-e5-2670v3", {"1C": "1c", "3C": "3c", "4C": "4c", "12C": "12c"}, False),
}


def _experiments(quick: bool = False):
    return {reproduce.benchmark_of(EV, e): e for e in reproduce.experiments_of(EV, quick=quick)}


def _show_config(platform: str, kernel: str, cpufreq: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "govlab", "run", "--platform", platform, "--kernel", kernel, "--cpufreq", cpufreq,
         "--workload", "tbench", "--show-config"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("machine", list(MACHINES))
def test_each_machine_runs_the_evaluations_kernel_and_configurations(machine):
    platform, invariant, hwp = MACHINES[machine]
    exps = [e for name, e in _experiments().items() if name.startswith(machine + "/")]
    assert {e.name.split("/")[-1] for e in exps} == {
        "pgbench-ro", "pgbench-rw", "dbench4", "netperf-udp", "netperf-tcp", "tbench4", "kernbench", "gitsource",
        "pgbench-ro-warmup", "pgbench-rw-warmup",  # MMTests' warm-up, inside pgbench's power window
    }
    e = exps[0]
    assert e.baseline == "v5.2"
    assert [c.name for c in e.configs] == ["v5.2", "intel_pstate", *invariant]
    d = e.to_dict()
    seen = {}
    for c in d["configs"]:
        shown = _show_config(c["platform"], c["kernel"], c["cpufreq"])
        assert shown["platform"]["name"] == platform
        assert (shown["kernel"]["version"], shown["kernel"]["semantics"]) == ("5.2", "5.2")
        # the kernel's own paths take C0 time (tools/calibrate/syscall/: v5.2 on these parts ran
        # with page-table isolation, whose kernel entry this project's guest matches)
        assert shown["kernel"]["kpath"] is True
        seen[c["name"]] = shown
    # the baseline: v5.2's schedutil, not invariant, on intel_pstate in passive mode, which
    # before v5.9 implied no_hwp
    for name in ["v5.2", *invariant]:
        s = seen[name]
        assert (s["cpufreq"]["name"], s["cpufreq"]["scaling_driver"], s["platform"]["hwp"]) == ("schedutil", "intel_cpufreq", False)
        assert s["kernel"]["freq_invariance"] == invariant.get(name, "off")
    ps = seen["intel_pstate"]
    assert (ps["cpufreq"]["scaling_driver"], ps["cpufreq"]["tunables"]["policy"]) == ("intel_pstate", "powersave")
    assert ps["platform"]["hwp"] is hwp and ps["cpufreq"]["tunables"]["hwp"] == ("on" if hwp else "off")


def test_dbench4_runs_mmtests_2020_clients_and_load_file_and_scores_its_time():
    # dbench-bench of January 2020: x2 below NUMCPUS, then x8, up to NUMCPUS*8; ExtractDbench4
    # averages each client's time per pass of the load file
    ncpus = {"skylake": 8, "broadwell": 80, "haswell": 48}
    exps = _experiments()
    for machine, n in ncpus.items():
        e = exps[machine + "/dbench4"]
        assert list(e.axis_values) == {8: [1, 2, 4, 8, 64], 80: [1, 2, 4, 8, 16, 32, 64, 128], 48: [1, 2, 4, 8, 16, 32, 64]}[n]
        last = e.axis_values[-1]
        assert last * (2 if last < n else 8) > 8 * n
        spec = e.to_dict()["workload"]
        proc = subprocess.run(
            [sys.executable, "-m", "govlab", "run", "--platform", MACHINES[machine][0], "--kernel", "5.2",
             "--workload", f"{spec},clients=1", "--show-config"],
            capture_output=True, text=True, check=False,
        )
        assert proc.returncode == 0, proc.stderr
        shown = json.loads(proc.stdout)["workload"]
        # the load file MMTests ran: client-tiny.txt
        assert (shown["params"]["fs"], shown["params"]["score"], shown["params"]["load"]) == ("xfs", "loadfile", "tiny"), shown


def test_pgbench_runs_mmtests_2020_client_steps():
    # pgbench-bench of January 2020: threads_huge_stride_begin 1..PGBENCH_MAX_THREADS (NUMCPUS*2
    # select-only, NUMCPUS read/write), counts from NUMNODES up rounded to a multiple of NUMNODES;
    # the Skylake's read/write steps are the 2018 mail's (1, 4, 7, 8 clients on the same MMTests)
    exps = _experiments()
    want = {
        "skylake": ([1, 4, 7, 12, 16], [1, 4, 7, 8]),
        "broadwell": ([1, 6, 12, 22, 30, 48, 80, 110, 142, 160], [1, 6, 12, 22, 30, 48, 80]),
        "haswell": ([1, 6, 12, 22, 30, 48, 80, 96], [1, 6, 12, 22, 30, 48]),
    }
    for machine, (ro, rw) in want.items():
        assert list(exps[machine + "/pgbench-ro"].axis_values) == ro
        assert list(exps[machine + "/pgbench-rw"].axis_values) == rw
    quick = _experiments(quick=True)
    assert list(quick["skylake/pgbench-rw"].axis_values) == [1, 8]
    assert list(quick["broadwell/pgbench-ro"].axis_values) == [1, 6]


def test_kernbench_builds_the_whole_defconfig_vmlinux_as_mmtests_did():
    # MMTests' kernbench builds a defconfig vmlinux. The model's serial preparation and link are
    # the whole tree's whatever `files` is, so a reduced tree multiplies their share of the build
    # (session 18: the Skylake's 8-job build 45 % serial at files=400, 11 % at the full tree)
    for machine, (platform, _, _) in MACHINES.items():
        e = _experiments()[machine + "/kernbench"]
        spec = e.to_dict()["workload"]
        proc = subprocess.run(
            [sys.executable, "-m", "govlab", "run", "--platform", platform, "--kernel", "5.2",
             "--workload", spec + ("," if ":" in spec else ":") + "jobs=2", "--show-config"],
            capture_output=True, text=True, check=False,
        )
        assert proc.returncode == 0, proc.stderr
        shown = json.loads(proc.stdout)
        listed = subprocess.run(
            [sys.executable, "-m", "govlab", "run", "--platform", platform, "--kernel", "5.2",
             "--workload", "kernbench", "--show-config"],
            capture_output=True, text=True, check=True,
        )
        assert shown["workload"]["params"]["files"] == json.loads(listed.stdout)["workload"]["params"]["files"]


def test_published_figures_name_a_benchmark_configuration_and_parameter_of_the_files():
    figures = reproduce.published(EV)
    assert len(figures) == 425
    exps = _experiments()
    quick = _experiments(quick=True)
    assert {f["benchmark"] for f in figures} <= set(exps)
    for f in figures:
        e = exps[f["benchmark"]]
        assert f["config"] in [c.name for c in e.configs], f
        if f["metric"] in ("score", "pkg_power_w", "perf_per_watt"):
            assert f["param"] is None
        else:
            assert f["param"] is None and e.axis_name is None or f["param"] in e.axis_values, f
        if f["headline"]:  # a whole-benchmark score: --quick scores it too
            assert f["metric"] in ("score", "pkg_power_w") and f["benchmark"] in quick
    heads = {(f["benchmark"], f["config"], f["metric"]) for f in figures if f["headline"]}
    assert ("broadwell/dbench4", "intel_pstate", "score") in heads
    assert {(m + "/gitsource", "4C", "pkg_power_w") for m in MACHINES} <= heads


def _run(value: float, pkg_j: float, secs: float, better: str = "lower") -> dict:
    return {"primary_metric": {"name": "elapsed_s", "better": better, "value": value}, "package_j": pkg_j, "sim_time_s": secs}


class _Exp:
    """The little of an Experiment that summary_rows reads."""

    def __init__(self, values, power_warmup_steps=0.0):
        self.axis_values = values
        self.baseline = "base"
        self.power_warmup_steps = power_warmup_steps


def test_summary_scores_as_the_source_does():
    e = _Exp([1, 2])
    k = [json.dumps(v) for v in e.axis_values]
    cells = {
        ("base", k[0]): [_run(10.0, 100.0, 10.0), _run(10.0, 100.0, 10.0)],
        ("base", k[1]): [_run(40.0, 400.0, 40.0)],
        ("inv", k[0]): [_run(5.0, 100.0, 5.0)],
        ("inv", k[1]): [_run(40.0, 600.0, 40.0)],
    }
    figures = [{"benchmark": "m/b", "param": None, "config": "inv", "metric": "score", "better": "lower",
                "value": 0.5, "baseline_value": 1.0, "where": "made up", "headline": True}]
    rows = {r["metric"]: r for r in reproduce.summary_rows("m/b", e, cells, ["base", "inv"], figures)}
    # geometric mean over the parameter of the ratio: sqrt(0.5 * 1.0)
    assert rows["score"]["value"] == pytest.approx(math.sqrt(0.5))
    # package power over the whole benchmark: its energy over its time
    assert rows["pkg_power_w"]["value"] == pytest.approx(700.0 / 45.0)
    assert rows["pkg_power_w"]["baseline_value"] == pytest.approx(10.0)
    # performance per watt: the speed-up (1 / time ratio) over the power ratio
    assert rows["perf_per_watt"]["value"] == pytest.approx((1 / math.sqrt(0.5)) / (700.0 / 45.0 / 10.0))
    assert rows["score"]["verdict"]["same_direction"] is True
    assert rows["score"]["pct"] == pytest.approx(stats.pct_diff(0.71, 1.0, "lower"))


def test_a_run_that_stands_for_a_longer_one_weighs_its_power_as_that_one():
    # netperf's tests scored as 10-s ones: each run's scored_power (the invocation's package
    # energy and time) in place of the simulated run's own
    e = _Exp([1, 2])
    k = [json.dumps(v) for v in e.axis_values]

    def scored(value, pkg_j, secs, long_j, long_s):
        return {**_run(value, pkg_j, secs, "higher"), "scored_power": {"package_j": long_j, "time_s": long_s, "package_w": long_j / long_s}}

    cells = {
        ("base", k[0]): [scored(1.0, 40.0, 4.0, 500.0, 42.0)],
        ("base", k[1]): [scored(1.0, 40.0, 4.0, 520.0, 42.0)],
        ("inv", k[0]): [scored(1.0, 50.0, 4.0, 510.0, 42.0)],
        ("inv", k[1]): [_run(1.0, 40.0, 4.0, "higher")],
    }
    rows = {r["metric"]: r for r in reproduce.summary_rows("m/b", e, cells, ["base", "inv"], [])}
    assert rows["pkg_power_w"]["baseline_value"] == pytest.approx(1020.0 / 84.0)
    assert rows["pkg_power_w"]["value"] == pytest.approx(550.0 / 46.0)


def test_an_untimed_warm_up_in_the_power_window_counts_as_its_steps():
    # MMTests' pgbench: 30 min of warm-up before the 300-s steps, inside the monitors; its runs count as
    # six steps of the benchmark's power: (10 + 40 + 6 * 60) / 8 a side, per the run's time; the score untouched
    k = [json.dumps(v) for v in (1, 16)]
    cells = {
        ("base", k[0]): [_run(1.0, 10.0, 1.0, "higher")], ("base", k[1]): [_run(1.0, 40.0, 1.0, "higher")],
        ("inv", k[0]): [_run(2.0, 20.0, 1.0, "higher")], ("inv", k[1]): [_run(1.0, 40.0, 1.0, "higher")],
    }
    warm = {"base": [_run(1.0, 120.0, 2.0, "higher")], "inv": [_run(1.0, 140.0, 2.0, "higher")]}
    plain = {r["metric"]: r for r in reproduce.summary_rows("m/b", _Exp([1, 16]), cells, ["base", "inv"], [])}
    unweighed = {r["metric"]: r for r in reproduce.summary_rows("m/b", _Exp([1, 16]), cells, ["base", "inv"], [], warm=warm)}
    rows = {r["metric"]: r for r in reproduce.summary_rows("m/b", _Exp([1, 16], 6.0), cells, ["base", "inv"], [], warm=warm)}
    assert (plain["pkg_power_w"]["baseline_value"], plain["pkg_power_w"]["value"]) == pytest.approx((25.0, 30.0))
    assert unweighed["pkg_power_w"]["value"] == plain["pkg_power_w"]["value"], "no power_warmup: the warm-up is not counted"
    assert (rows["pkg_power_w"]["baseline_value"], rows["pkg_power_w"]["value"]) == pytest.approx((410 / 8, 480 / 8))
    assert rows["score"]["value"] == plain["score"]["value"] == pytest.approx(math.sqrt(2.0))
    assert rows["perf_per_watt"]["value"] == pytest.approx(math.sqrt(2.0) / (480 / 410))


def test_a_timed_benchmarks_warm_up_is_a_stratum_of_its_power():
    # the within-run estimate weighs the warm-up's intervals as six steps of intervals: the same
    # mean as the runs' energy; the spread of a steady warm-up adds no noise
    k = [json.dumps(v) for v in (1, 16)]
    values = [100.0] * 72
    cells = {("base", k[0]): [_sampled_run(values, [9.9, 10.1])], ("base", k[1]): [_sampled_run(values, [39.9, 40.1])],
             ("inv", k[0]): [_sampled_run(values, [19.9, 20.1])], ("inv", k[1]): [_sampled_run(values, [39.9, 40.1])]}
    warm = {"base": [_sampled_run(values, [59.9, 60.1])], "inv": [_sampled_run(values, [69.9, 70.1])]}
    rows = {r["metric"]: r for r in reproduce.summary_rows("m/b", _Exp([1, 16], 6.0), cells, ["base", "inv"], [], tested=True, warm=warm)}
    power = rows["pkg_power_w"]
    assert power["significance"]["within_run"] and power["significance"]["significant"]
    assert (power["baseline_value"], power["value"]) == pytest.approx(((10 + 40 + 360) / 8, (20 + 40 + 420) / 8), rel=1e-3)


def test_the_x86_pgbench_power_holds_mmtests_warm_up():
    # DATABASE_INIT_ONCE's pgbench -c MAX -j MAX -T 1800 against PGBENCH_MAX_TIME=300: six steps, in every
    # full-size pgbench, run as its own benchmark at the config's PGBENCH_MAX_THREADS; --quick leaves it out
    ncpus = {"skylake": 8, "broadwell": 80, "haswell": 48}
    full = {reproduce.benchmark_of(EV, e): e for e in reproduce.experiments_of(EV)}
    for name, e in full.items():
        machine, bench = name.split("/")
        if bench in ("pgbench-ro", "pgbench-rw"):
            most = ncpus[machine] * (2 if bench == "pgbench-ro" else 1)
            warm = full[f"{name}-warmup"]
            assert e.power_warmup_steps == 6.0 and e.power_warmup_of == warm.name
            assert warm.axis_name is None and f"clients={most}" in warm.workload and f"threads={most}" in warm.workload
            assert warm.duration == e.duration and warm.samples == e.samples and warm.warmup_ns == e.warmup_ns
        else:
            assert e.power_warmup_steps == 0.0 and e.power_warmup_of is None
    quick = {reproduce.benchmark_of(EV, e): e for e in reproduce.experiments_of(EV, quick=True)}
    assert not [n for n in quick if n.endswith("-warmup")]
    assert all(e.power_warmup_steps == 0.0 and e.power_warmup_of is None for e in quick.values())


_WARM_FILE = """
[experiment]
platform = "skylake-e3-1240v5"
baseline = "a"

[[benchmark]]
name = "b"
workload = "pgbench"
axis = {{ clients = [1, 4] }}
power_warmup = {value}

[[benchmark]]
name = "w"
workload = "pgbench:clients=8"
{warm}
[[config]]
name = "a"
cpufreq = "schedutil"
"""


@pytest.mark.parametrize(
    ("value", "warm", "message"),
    [
        ('"30min"', "", r":10: benchmark\[1\]\.power_warmup: expected a table \{ benchmark = NAME, length = TIME, step = TIME \}"),
        ('{ benchmark = "w", length = "30", step = "300s" }', "", r":10: benchmark\[1\]\.power_warmup\.length: duration"),
        ('{ benchmark = "x", length = "30s", step = "300s" }', "", r"power_warmup\.benchmark: expected the name of another benchmark of this file \(w\), got 'x'"),
        ('{ benchmark = "b", length = "30s", step = "300s" }', "", r"another benchmark"),
        ('{ benchmark = "w", length = "30s", step = "300s" }', "axis = { clients = [8] }\n", r"the warm-up 'w' has an axis"),
        ('{ benchmark = "w", length = "30s", step = "300s" }', "quick = true\n", r":15: benchmark\[2\]\.quick: quick lists axis values \(or is false\), but this benchmark has no axis"),
    ],
)
def test_a_bad_power_warm_up_names_its_key(tmp_path, value, warm, message):
    from govlab import experiment

    path = tmp_path / "e.toml"
    path.write_text(_WARM_FILE.format(value=value, warm=warm))
    with pytest.raises(experiment.ExperimentError, match=message):
        experiment.load_all(str(path))


def test_a_warm_up_left_out_of_a_quick_run_takes_its_power_weight_with_it(tmp_path):
    from govlab import experiment

    path = tmp_path / "e.toml"
    path.write_text(_WARM_FILE.format(value='{ benchmark = "w", length = "1800s", step = "300s" }', warm="quick = false\n"))
    full = {e.name: e for e in experiment.load_all(str(path))}
    assert (full["e/b"].power_warmup_of, full["e/b"].power_warmup_steps) == ("e/w", 6.0)
    quick = {e.name: e for e in experiment.load_all(str(path), quick=True)}
    assert list(quick) == ["e/b"] and (quick["e/b"].power_warmup_of, quick["e/b"].power_warmup_steps) == (None, 0.0)


@pytest.mark.parametrize("config", ["intel_pstate", "1C", "3C", "4C", "8C"])
def test_the_sources_own_kernbench_tables_give_its_per_watt(config):
    """Fed the source's Broadwell-EP kernbench times per job count (section 5.3.3) and its package watts
    (5.3.4), the scoring gives the score and per-watt ratio the source printed (5.3.2, 5.3.4): per watt
    below 1 although the whole benchmark's package energy fell, because the score is a geometric mean
    over the job counts and the power a mean over time (docs/validation.md §6, session 18)."""
    figs = reproduce.published(EV)
    bench = "broadwell/kernbench"
    times = {f["param"]: f for f in figs if f["benchmark"] == bench and f["metric"] == "elapsed_s" and f["config"] == config}
    watts = next(f for f in figs if f["benchmark"] == bench and f["metric"] == "pkg_power_w" and f["config"] == config)
    e = _Exp(sorted(times))
    cells = {}
    for jobs, f in times.items():
        k = json.dumps(jobs)
        cells[("base", k)] = [_run(f["baseline_value"], watts["baseline_value"] * f["baseline_value"], f["baseline_value"])]
        cells[(config, k)] = [_run(f["value"], watts["value"] * f["value"], f["value"])]
    summary = [f for f in figs if f["benchmark"] == bench and f["param"] is None]
    rows = {r["metric"]: r for r in reproduce.summary_rows(bench, e, cells, ["base", config], summary)}
    assert len(times) == 8
    assert round(rows["score"]["value"], 2) == rows["score"]["published"]["value"]
    assert rows["pkg_power_w"]["value"] == pytest.approx(watts["value"])
    # to its printed two decimals, give or take the last (the source averaged unrounded runs; 1C gives 0.977)
    assert rows["perf_per_watt"]["value"] == pytest.approx(rows["perf_per_watt"]["published"]["value"], abs=0.0101)
    assert rows["perf_per_watt"]["value"] < 1.0 and rows["perf_per_watt"]["verdict"]["same_direction"]
    energy = {c: sum(r[0]["package_j"] for (cc, _), r in cells.items() if cc == c) for c in ("base", config)}
    assert energy[config] < energy["base"], "the real packages spent less energy on the whole benchmark"


@pytest.mark.parametrize(("ratio", "published", "same"), [(1.004, 1.0, True), (1.006, 1.0, False), (0.996, 1.01, False), (1.012, 1.01, True)])
def test_a_score_within_the_printed_rounding_is_no_difference(ratio, published, same):
    v = reproduce.verdict(reproduce._printed_pct(published, 1.0, "higher"), reproduce._printed_pct(ratio, 1.0, "higher"))
    assert v["same_direction"] is same


def test_a_detailed_cell_is_judged_by_its_printed_percentage():
    # 5.3.3's Haswell-EP tbench4 at 192 clients, 3C: "6901.62 +- 0.12% ( 0.00%)" against 6901.35
    fig = next(
        f for f in reproduce.published(EV)
        if f["benchmark"] == "haswell/tbench4" and f["config"] == "3C" and f["param"] == 192
    )
    assert (fig["value"], fig["baseline_value"]) == (6901.62, 6901.35)
    pct = reproduce._compare_pct(fig["value"], fig["baseline_value"], fig["better"])
    assert pct == 0.0
    assert reproduce.verdict(pct, -0.04, significant=False)["text"] == "no significant difference, as published"
    assert reproduce.verdict(pct, -0.04, significant=True)["text"] == "a difference in govlab, none published"
    # a cell printed as a difference stays one: 4C at 192 clients, ( -0.64%)
    assert reproduce._compare_pct(6856.93, 6901.35, "higher") == -0.64


def test_a_difference_against_a_published_tilde_is_named_so():
    v = reproduce.verdict(reproduce._printed_pct(1.0, 1.0, "higher"), reproduce._printed_pct(1.2, 1.0, "higher"))
    assert (v["same_direction"], v["text"]) == (False, "a difference in govlab, none published")


# --- significance over the repeats -------------------------------------------------------------


def _repeats(times: list[float], watts: float = 10.0) -> list[dict]:
    return [_run(t, watts * t, t) for t in times]


def _tilde_figures(value: float) -> list[dict]:
    return [{"benchmark": "m/b", "param": None, "config": "inv", "metric": "score", "better": "lower",
             "value": value, "baseline_value": 1.0, "where": "made up", "headline": False}]


def _summary(base: list[float], inv: list[float], published: float) -> dict:
    e = _Exp([1])
    k = json.dumps(1)
    cells = {("base", k): _repeats(base), ("inv", k): _repeats(inv)}
    rows = reproduce.summary_rows("m/b", e, cells, ["base", "inv"], _tilde_figures(published), tested=True)
    return {r["metric"]: r for r in rows}


def test_a_difference_within_the_repeats_spread_is_the_sources_tilde():
    # the repeats' times scatter by 10 %; their means differ by 2 %: not significant
    rows = _summary([10.0, 11.0, 9.0], [10.5, 11.1, 9.0], published=1.0)
    score = rows["score"]
    assert score["pct"] != 0 and not score["significance"]["significant"]
    assert score["significance"]["repeats"] == 3 and score["significance"]["p"] > 0.5
    assert (score["verdict"]["same_direction"], score["verdict"]["text"]) == (True, "no significant difference, as published")
    # and symmetric: against a published difference, the same run is wrong
    other = _summary([10.0, 11.0, 9.0], [10.5, 11.1, 9.0], published=0.9)["score"]
    assert (other["verdict"]["same_direction"], other["verdict"]["text"]) == (False, "no significant difference in govlab")


def test_a_difference_beyond_the_repeats_spread_counts():
    # 20 % faster in every repeat, each side spread by 1 %
    rows = _summary([10.0, 10.1, 9.9], [8.0, 8.1, 7.9], published=0.9)
    score = rows["score"]
    assert score["significance"]["significant"] and score["significance"]["p"] < 0.001
    assert score["verdict"]["same_direction"] is True
    against_tilde = _summary([10.0, 10.1, 9.9], [8.0, 8.1, 7.9], published=1.0)["score"]
    assert against_tilde["verdict"]["text"] == "a difference in govlab, none published"
    # the package draws the same 10 W in every run: no difference in power, whatever the times
    assert rows["pkg_power_w"]["value"] == pytest.approx(10.0) and not rows["pkg_power_w"]["significance"]["significant"]
    # performance per watt is tested on each repeat's speed over its power
    assert rows["perf_per_watt"]["significance"]["significant"]


def test_one_repeat_judges_as_printed():
    # from one run a side, every difference that shows at two decimals counts (MMTests' rule)
    score = _summary([10.0], [9.8], published=1.0)["score"]
    assert score["significance"]["significant"] and score["verdict"]["text"] == "a difference in govlab, none published"
    assert _summary([10.0], [9.97], published=1.0)["score"]["verdict"]["text"] == "no difference, as published"


def test_the_verdict_table_prints_a_difference_that_is_not_significant_as_a_tilde():
    rows = list(_summary([10.0, 11.0, 9.0], [10.5, 11.1, 9.0], published=1.0).values())
    rows += list(_summary([10.0, 10.1, 9.9], [8.0, 8.1, 7.9], published=1.0).values())
    rows = [r for r in rows if "published" in r]
    t = reproduce.verdict_table(EV, rows)
    govlab = [cells[5] for cells in t["rows"]]
    assert govlab[0].endswith("(~, p 0.83)") and govlab[1].endswith("(+20.00%, p 1.7e-05)")
    assert any("not significant over its repeats" in n for n in t["notes"])
    from govlab import report as html_report

    page = html_report.render([], {}, verdicts=[t])
    assert "(~, p 0.83)" in page


#: MMTests at ffca095a (January 2020): the benchmarks its configs iterate, and the timed ones run once
ITERATED = {"netperf-udp", "netperf-tcp", "kernbench", "gitsource"}
TIMED = {"pgbench-ro": "pgbench", "pgbench-rw": "pgbench", "dbench4": "dbench4", "tbench4": "tbench4"}
#: MMTests' pgbench warm-ups, run once and sampled as the steps (not in --quick)
WARMUPS = {"pgbench-ro-warmup": "pgbench", "pgbench-rw-warmup": "pgbench"}


@pytest.mark.parametrize("quick", [False, True])
def test_the_evaluation_samples_each_benchmark_as_mmtests_did(quick):
    seen = set()
    for e in reproduce.experiments_of(EV, quick=quick):
        bench = reproduce.benchmark_of(EV, e).split("/")[1]
        seen.add(bench)
        if bench in ITERATED:
            assert (e.seeds, e.samples) == ([1, 2, 3, 4, 5], None)
        else:
            assert (e.seeds, e.samples) == ([1], {**TIMED, **WARMUPS}[bench])
        if bench == "tbench4":  # dbench 4.0's start barrier, which tbench's clients sleep through
            assert e.warmup_ns == 100_000_000
    assert seen == ITERATED | set(TIMED) | (set() if quick else set(WARMUPS))


@pytest.mark.parametrize("quick", [False, True])
def test_the_hard_disk_machines_io_bound_benchmarks_run_mmtests_own_lengths(quick):
    # dbench -t 180 and pgbench -T 300 on the Haswell-EP's hard disk, where a 1-s run holds less than a
    # pass or a handful of transactions; each run clears the engine's cost check with the benchmark's
    # own ceiling (the estimate takes a wait for the disk as instant). The Skylake's dbench4 runs its
    # 180 s at full size only (its 1-s runs were its start-up; --quick keeps 1 s for time), the other
    # SSD runs stay at 1 s
    from govlab import GovlabError, api, plan

    lengths = {}
    for e in reproduce.experiments_of(EV, quick=quick):
        machine, bench = reproduce.benchmark_of(EV, e).split("/")
        if bench in ("dbench4", "pgbench-rw"):
            lengths[machine, bench] = e.duration
            if machine == "haswell" or (machine, bench, quick) == ("skylake", "dbench4", False):
                biggest = [r for r in plan.runs(e) if r.axis_value == e.axis_values[-1]][0]
                config = api.config_json(**{k: v for k, v in biggest.kwargs.items() if k not in ("samples", "max_events")})
                if not quick:  # 64 dbench4 clients, 48 pgbench-rw ones: over the default ceiling
                    with pytest.raises(GovlabError, match="raise max_events"):
                        api.check_cost(config)
                api.check_cost(config, biggest.kwargs["max_events"])
    assert lengths == {
        ("haswell", "dbench4"): "180s", ("haswell", "pgbench-rw"): "300s",
        ("skylake", "dbench4"): "1s" if quick else "180s", ("skylake", "pgbench-rw"): "1s",
        ("broadwell", "dbench4"): "1s", ("broadwell", "pgbench-rw"): "1s",
    }


# --- within-run samples: the timed benchmarks ----------------------------------------------------


def _sampled_run(values: list[float], watts: list[float], better: str = "higher") -> dict:
    """A run whose pgbench sampler reads ``values`` (one batch of 4 intervals each, after 9)
    and ``watts`` (one per interval, cycled)."""
    per_interval = [0.0] * 9 + [v for v in values for _ in range(4)]
    intervals = [
        {"start_s": i * 0.01, "end_s": (i + 1) * 0.01, "counters": [v * 0.01], "series": [], "package_j": watts[i % len(watts)] * 0.01}
        for i, v in enumerate(per_interval)
    ]
    run = _run(sum(values) / len(values), sum(watts) / len(watts), 1.0, better)
    run["samples"] = {"sampler": "pgbench", "intervals": intervals}
    return run


def _sampled_summary(base: list[float], inv: list[float], published: float, inv_watts: float = 10.0) -> dict:
    e = _Exp([1])
    k = json.dumps(1)
    cells = {("base", k): [_sampled_run(base, [10.0, 10.5] * 36)], ("inv", k): [_sampled_run(inv, [inv_watts, inv_watts + 0.5] * 36)]}
    figures = [{**f, "better": "higher"} for f in _tilde_figures(published)]
    rows = reproduce.summary_rows("m/b", e, cells, ["base", "inv"], figures, tested=True)
    return {r["metric"]: r for r in rows}


def test_a_timed_benchmark_is_judged_on_its_within_run_samples():
    # one run a side: without samples any difference would count (no spread); its 72 samples
    # scatter by ±20 % around means 2 % apart: not significant, the source's tilde
    noisy = [100.0 + (20.0 if i % 2 else -20.0) for i in range(72)]
    score = _sampled_summary(noisy, [1.02 * v for v in noisy], published=1.0)["score"]
    assert score["pct"] != 0 and score["significance"]["within_run"]
    assert score["significance"]["repeats"] == 72 and not score["significance"]["significant"]
    assert score["verdict"]["text"] == "no significant difference, as published"
    # the same 2 % with samples spread by ±0.5 %: significant
    tight = [100.0 + (0.5 if i % 2 else -0.5) for i in range(72)]
    rows = _sampled_summary(tight, [1.02 * v for v in tight], published=1.0)
    assert rows["score"]["significance"]["significant"] and rows["score"]["significance"]["p"] < 1e-6
    assert rows["score"]["verdict"]["text"] == "a difference in govlab, none published"
    # power: the same intervals' package power on both sides is no difference
    assert not rows["pkg_power_w"]["significance"]["significant"]
    hot = _sampled_summary(tight, tight, published=1.0, inv_watts=12.0)["pkg_power_w"]
    assert hot["significance"]["significant"] and hot["significance"]["within_run"]


def test_a_timed_benchmarks_power_is_tested_within_each_parameter():
    # two client counts at 10 and 100 W, each steady to +-0.1 W; the configuration draws 1 % more at each:
    # the parameters' spread is the design (each is run once, in both configurations), not noise, so
    # the 1 % is significant (pooled over both counts it would sit in a 45-W spread and not be)
    e = _Exp([1, 2])
    values = [100.0] * 72
    k = [json.dumps(v) for v in e.axis_values]

    def cell(watts: float) -> list[dict]:
        return [_sampled_run(values, [watts - 0.1, watts + 0.1])]

    cells = {("base", k[0]): cell(10.0), ("base", k[1]): cell(100.0), ("inv", k[0]): cell(10.1), ("inv", k[1]): cell(101.0)}
    rows = {r["metric"]: r for r in reproduce.summary_rows("m/b", e, cells, ["base", "inv"], [], tested=True)}
    power = rows["pkg_power_w"]
    assert power["value"] == pytest.approx(1.01 * power["baseline_value"])
    assert power["significance"]["within_run"] and power["significance"]["significant"]
    # a spread within each count as wide as the difference: not significant
    cells = {("base", k[0]): [_sampled_run(values, [5.0, 15.0])], ("base", k[1]): [_sampled_run(values, [50.0, 150.0])],
             ("inv", k[0]): [_sampled_run(values, [5.1, 15.1])], ("inv", k[1]): [_sampled_run(values, [51.0, 151.0])]}
    rows = {r["metric"]: r for r in reproduce.summary_rows("m/b", e, cells, ["base", "inv"], [], tested=True)}
    assert not rows["pkg_power_w"]["significance"]["significant"]


def test_a_timed_benchmarks_parameter_rows_are_tested_on_its_samples():
    noisy = [100.0 + (20.0 if i % 2 else -20.0) for i in range(40)]
    cells = {"base": [_sampled_run(noisy, [10.0])], "inv": [_sampled_run([1.02 * v for v in noisy], [10.0])]}
    sig = reproduce.significance(
        reproduce._tested(cells["inv"], reproduce._primary_value, True),
        reproduce._tested(cells["base"], reproduce._primary_value, True),
        within_run=True,
    )
    assert sig["repeats"] == 40 and not sig["significant"]
    # its mean alone (one value a side) would count as a difference
    assert reproduce.significance([102.0], [100.0])["significant"]


def test_an_iterated_benchmark_is_still_judged_on_its_repeats():
    # runs without samples: the repeats are the values, as before
    score = _summary([10.0, 11.0, 9.0], [10.5, 11.1, 9.0], published=1.0)["score"]
    assert "within_run" not in score["significance"] and score["significance"]["repeats"] == 3


REPEATED = """\
[experiment]
name = "rep"
platform = "skylake-e3-1240v5"
kernel = "5.2"
duration = "150ms"
repeats = 3
seed = 11
baseline = "v5.2"
cpuidle = "menu"

[[benchmark]]
name = "pgbench-ro"
workload = "pgbench:mode=ro,fs=xfs"
axis = { clients = [1, 4] }

[[config]]
name = "v5.2"
cpufreq = "schedutil"
platform_options = { intel_pstate = "passive" }

[[config]]
name = "4C"
cpufreq = "schedutil"
kernel = "5.2:freq_invariance=4c"
platform_options = { intel_pstate = "passive" }
"""


def test_a_run_with_repeats_is_deterministic_for_its_seed(tmp_path):
    from govlab import experiment
    from govlab.pipeline import run_experiments
    from govlab.store import Store

    path = tmp_path / "rep.toml"
    path.write_text(REPEATED)
    ev = reproduce.Evaluation("rep", "test", summary=True, significance=True)
    tables = []
    for db in ("a.sqlite", "b.sqlite"):
        exps = experiment.load_all(path)
        with Store(tmp_path / db) as store:
            done = run_experiments(exps, store, jobs=1, progress=False)
            results = done.results(store)
        tables.append(reproduce.rows(ev, exps, done.planned, results, figures=[]))
        values = [results[r.key]["primary_metric"]["value"] for r in done.planned[0] if r.config == "v5.2" and r.axis_value == 4]
    assert json.dumps(tables[0]) == json.dumps(tables[1])
    # the seeds reach the workload, so the test has a spread to judge by
    assert len(set(values)) > 1
    summary = [r for r in tables[0] if r["param"] is None]
    assert {r["significance"]["repeats"] for r in summary} == {3}

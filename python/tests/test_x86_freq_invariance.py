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
    assert {e.name.split("/")[-1] for e in exps} == {"pgbench-ro", "pgbench-rw", "dbench4", "netperf-udp", "netperf-tcp", "tbench4", "kernbench", "gitsource"}
    e = exps[0]
    assert e.baseline == "v5.2"
    assert [c.name for c in e.configs] == ["v5.2", "intel_pstate", *invariant]
    d = e.to_dict()
    seen = {}
    for c in d["configs"]:
        shown = _show_config(c["platform"], c["kernel"], c["cpufreq"])
        assert shown["platform"]["name"] == platform
        assert (shown["kernel"]["version"], shown["kernel"]["semantics"]) == ("5.2", "5.2")
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


def test_dbench4_runs_mmtests_2020_clients_and_scores_the_load_file_time():
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
        assert (shown["params"]["fs"], shown["params"]["score"]) == ("xfs", "loadfile"), shown


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

    def __init__(self, values):
        self.axis_values = values
        self.baseline = "base"


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


@pytest.mark.parametrize(("ratio", "published", "same"), [(1.004, 1.0, True), (1.006, 1.0, False), (0.996, 1.01, False), (1.012, 1.01, True)])
def test_a_score_within_the_printed_rounding_is_no_difference(ratio, published, same):
    v = reproduce.verdict(reproduce._printed_pct(published, 1.0, "higher"), reproduce._printed_pct(ratio, 1.0, "higher"))
    assert v["same_direction"] is same


def test_a_difference_against_a_published_tilde_is_named_so():
    v = reproduce.verdict(reproduce._printed_pct(1.0, 1.0, "higher"), reproduce._printed_pct(1.2, 1.0, "higher"))
    assert (v["same_direction"], v["text"]) == (False, "a difference in govlab, none published")

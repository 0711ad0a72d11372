"""govlab compare: the tables, the results database, resuming, and `govlab report`."""

from __future__ import annotations

import math
import re
import sqlite3
import textwrap
from pathlib import Path

import pytest

from govlab import analysis as compare, experiment, pipeline, plan, stats, tables
from govlab.store import Store

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "experiments" / "quick.toml"

#: A small experiment: 2 configs x 2 task counts x 3 seeds = 12 runs of 200 ms.
SMALL = """\
[experiment]
name = "small"
platform = "skylake-e3-1240v5"
workload = "periodic:run_us=1500,period_us=7000"
duration = "200ms"
repeats = 3
seed = 1
cpuidle = "menu"

[axis]
tasks = [1, 4]

[[config]]
name = "ondemand"
cpufreq = "ondemand"

[[config]]
name = "schedutil"
cpufreq = "schedutil"
"""
SMALL_RUNS = 12


@pytest.fixture
def small(tmp_path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


def run_compare(path: Path, db: Path, jobs: int = 2, on_stored=None):
    exp = experiment.load(path)
    with Store(db) as store:
        done = pipeline.run_experiments([exp], store, jobs=jobs, progress=False, on_stored=on_stored)
    return tables.render(done.analyses, "text"), done.report


def run_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT key, created_at FROM runs ORDER BY key").fetchall()


# --- tables from fixed results (no engine) ----------------------------------------------


def synthetic(better: str, base: dict, new: dict, power: float = 10.0):
    """A definition, its runs and their results: configs "base" and "new", axis n = [1, 2]."""
    definition = {
        "name": "synthetic",
        "platform": "p",
        "workload": "w",
        "duration": "1s",
        "seeds": [1, 2, 3],
        "baseline": "base",
        "axis": {"name": "n", "values": [1, 2]},
        "configs": [
            {"name": "base", "cpufreq": "a", "cpuidle": "x", "platform": "p"},
            {"name": "new", "cpufreq": "b", "cpuidle": "x", "platform": "p"},
        ],
    }
    runs, results = [], {}
    for config, by_value in (("base", base), ("new", new)):
        for axis_value, values in by_value.items():
            for repeat, value in enumerate(values):
                key = f"{config}-{axis_value}-{repeat}"
                runs.append({"config": config, "axis_value": axis_value, "repeat": repeat, "seed": repeat + 1, "key": key})
                results[key] = {
                    "primary_metric": {"name": "metric", "value": value, "unit": "u", "better": better},
                    "energy_j": power * 1.0,
                    "avg_power_w": power,
                }
    return definition, runs, results


def row(analysis, section, stat, axis_value):
    for r in analysis[section]:
        if r["stat"] == stat and r["axis_value"] == axis_value:
            return {c["config"]: c for c in r["cells"]}
    raise KeyError((stat, axis_value))


def test_lower_is_better_table():
    a = compare.analyse(*synthetic("lower", {1: [10, 11, 12], 2: [20, 20, 20]}, {1: [8, 8.5, 9], 2: [21, 22, 23]}))
    amean = row(a, "performance", "Amean", 1)
    assert amean["base"]["value"] == pytest.approx(11)
    assert amean["new"]["value"] == pytest.approx(8.5)
    assert amean["new"]["pct"] == pytest.approx(100 * (11 - 8.5) / 11)  # lower: positive = better
    # Welch: t = 2.5 / sqrt(1/3 + 0.25/3) = 3.873, df = 2.94, p = 0.032
    assert amean["new"]["significant"] is True
    assert amean["new"]["p_value"] == pytest.approx(stats.welch([8, 8.5, 9], [10, 11, 12]).p)
    assert amean["base"]["significant"] is None
    stddev = row(a, "performance", "Stddev", 1)
    assert (stddev["base"]["value"], stddev["new"]["value"]) == (pytest.approx(1.0), pytest.approx(0.5))
    assert stddev["new"]["pct"] == pytest.approx(50.0)  # a smaller spread is better
    assert row(a, "performance", "Amean", 2)["new"]["pct"] == pytest.approx(-10.0)
    assert "Hmean" not in {r["stat"] for r in a["performance"]}  # not a rate

    # score: geometric mean over n of the Amean
    score = {s["config"]: s for s in a["scores"]}
    assert score["new"]["score"] == pytest.approx(math.sqrt(8.5 * 22))
    assert score["new"]["pct"] == pytest.approx(100 * (1 - math.sqrt(8.5 * 22) / math.sqrt(11 * 20)))
    assert score["new"]["perf_ratio"] == pytest.approx(math.sqrt(11 * 20) / math.sqrt(8.5 * 22))

    # perf-per-watt of a lower-is-better metric: 1 / (value * W), per run
    ppw = row(a, "energy", "Perf/W", 1)
    assert ppw["base"]["value"] == pytest.approx(stats.amean([1 / (v * 10) for v in (10, 11, 12)]))

    text = tables.render([a], "text")
    assert re.search(r"^Amean\s+1\s+11\.00 \(\s+0\.00%\)\s+8\.50 \*\s+22\.73%\*$", text, re.M), text
    assert re.search(r"^Stddev\s+1\s+1\.0000 \(\s+0\.00%\)\s+0\.5000 \(\s+50\.00%\)$", text, re.M), text
    # at n = 2 the loss is not significant: t = 2 / sqrt(1/3), df = 2, so p = 1 - t / sqrt(2 + t^2) = 0.074
    t = 2 / math.sqrt(1 / 3)
    assert row(a, "performance", "Amean", 2)["new"]["p_value"] == pytest.approx(1 - t / math.sqrt(2 + t * t))
    assert re.search(r"^Amean\s+2\s+20\.00 \(\s+0\.00%\)\s+22\.00 \(\s*-10\.00%\)$", text, re.M), text
    assert "LOWER is better" in text


def test_difference_against_a_zero_baseline_is_not_a_number():
    # every baseline repeat gave 20: its Stddev is 0, so a spread in percent of it is undefined
    a = compare.analyse(*synthetic("lower", {1: [10, 11, 12], 2: [20, 20, 20]}, {1: [8, 8.5, 9], 2: [21, 22, 23]}))
    stddev = row(a, "performance", "Stddev", 2)
    assert stddev["base"]["value"] == 0.0 and stddev["new"]["value"] == pytest.approx(1.0)
    assert stddev["new"]["pct"] == -math.inf  # the figure stays what pct_diff says
    text = tables.render([a], "text")
    assert re.search(r"^Stddev\s+2\s+0\.0000 \(\s+0\.00%\)\s+1\.0000 \(\s+n/a\)$", text, re.M), text
    assert "inf" not in text
    assert "inf" not in tables.render([a], "markdown")
    csv_rows = [line.split(",") for line in tables.render([a], "csv").splitlines()]
    stddev_new = [r for r in csv_rows if r[2] == "Stddev" and r[4] == "2" and r[5] == "new"]
    assert stddev_new and stddev_new[0][9] == ""  # pct_diff left empty, as for nan


def test_higher_is_better_table_has_hmean():
    a = compare.analyse(*synthetic("higher", {1: [100, 200, 200], 2: [50, 50, 50]}, {1: [150, 150, 150], 2: [55, 55, 55]}))
    hmean = row(a, "performance", "Hmean", 1)
    assert hmean["base"]["value"] == pytest.approx(3 / (1 / 100 + 2 / 200))  # 150
    assert hmean["new"]["pct"] == pytest.approx(0.0, abs=1e-12)
    assert row(a, "performance", "Amean", 2)["new"]["pct"] == pytest.approx(10.0)  # higher: positive = better
    assert row(a, "performance", "Min", 1)["new"]["pct"] == pytest.approx(50.0)
    score = {s["config"]: s for s in a["scores"]}
    assert score["new"]["score"] == pytest.approx(math.sqrt(150 * 55))  # gmean of the Hmeans
    text = tables.render([a], "text")
    assert re.search(r"^Hmean\s+1\s+150\.00", text, re.M), text
    assert "HIGHER is better" in text


def test_summary_categories():
    assert compare.category(6.0, True) == "large wins"
    assert compare.category(2.0, True) == "moderate wins"
    assert compare.category(0.5, True) == "neutral"
    assert compare.category(-20.0, False) == "neutral"  # not significant
    assert compare.category(-2.0, True) == "moderate losses"
    assert compare.category(-7.0, True) == "large losses"


def test_summary_over_two_benchmarks():
    a = compare.analyse(*synthetic("lower", {1: [10, 11, 12], 2: [20, 21, 22]}, {1: [8, 8.5, 9], 2: [15, 15.5, 16]}))
    b = compare.analyse(*synthetic("higher", {1: [100, 101, 99], 2: [50, 51, 49]}, {1: [100, 101, 99], 2: [50, 51, 49]}))
    b["name"] = "other"
    summary = compare.summarise([a, b])
    (group,) = summary["groups"]
    assert group["config"] == "new" and group["baselines"] == ["base"]
    assert [e["benchmark"] for e in group["categories"]["large wins"]] == ["synthetic"]
    assert [e["benchmark"] for e in group["categories"]["neutral"]] == ["other"]
    assert summary["ratios"]["rows"][1]["perf"]["new"] == pytest.approx(1.0)
    text = tables.render([a, b], "text")
    assert "SUMMARY" in text and "Large wins:" in text and "RATIOS" in text
    for fmt in ("markdown", "csv", "json"):
        assert tables.render([a, b], fmt)


# --- experiment files -------------------------------------------------------------------


BAD_EXPERIMENTS = {
    # name: (replace this, with that, line, key, text in the message)
    "unknown governor": ('cpufreq = "schedutil"', 'cpufreq = "schedutl"', 19, "config[2].cpufreq", "schedutl"),
    "bad tunable": ('cpufreq = "ondemand"', 'cpufreq = { name = "ondemand", up_threshold = 200 }', 15, "config[1].cpufreq", "up_threshold"),
    "zero repeats": ("repeats = 3", "repeats = 0", 6, "experiment.repeats", "from 1 to 1000"),
    "unknown axis parameter": ("tasks = [1, 4]", "taskz = [1, 4]", 11, "axis.taskz", "taskz"),
    "bad axis value": ("tasks = [1, 4]", "tasks = [1, -4]", 11, "axis.tasks", "-4"),
    "unknown key": ('name = "schedutil"', 'name = "schedutil"\nspeed = 11', 19, "config[2].speed", "unknown key"),
    "bad duration": ('duration = "200ms"', 'duration = "2 parsecs"', 5, "experiment.duration", "parsecs"),
    "unknown baseline": ("seed = 1", 'seed = 1\nbaseline = "nobody"', 8, "experiment.baseline", "nobody"),
    "TOML syntax": ("repeats = 3", "repeats = 3 x", 6, "experiment.repeats", "invalid TOML"),
}


@pytest.mark.parametrize("case", list(BAD_EXPERIMENTS), ids=list(BAD_EXPERIMENTS))
def test_experiment_errors_name_file_line_and_key(tmp_path, case):
    old, new, line, key, text = BAD_EXPERIMENTS[case]
    assert old in SMALL
    path = tmp_path / "broken.toml"
    path.write_text(SMALL.replace(old, new, 1))
    with pytest.raises(experiment.ExperimentError) as info:
        experiment.load(path)
    e = info.value
    assert (e.path, e.line, e.key) == (str(path), line, key), str(e)
    assert str(e).startswith(f"{path}:{line}: {key}: "), str(e)
    assert text in str(e)
    assert isinstance(e, ValueError)


def test_experiment_loads(small):
    exp = experiment.load(small)
    assert (exp.name, exp.baseline, exp.axis_name, exp.axis_values, exp.seeds) == (
        "small", "ondemand", "tasks", [1, 4], [1, 2, 3]
    )
    runs = plan.runs(exp)
    assert len(runs) == SMALL_RUNS == len({r.key for r in runs})
    assert runs[0].kwargs["workload"] == "periodic:run_us=1500,period_us=7000,tasks=1"
    # the key does not depend on how a spec is written, only on what it means
    again = experiment.loads(SMALL.replace('cpufreq = "ondemand"', 'cpufreq = { name = "ondemand" }'), str(small))
    assert [r.key for r in plan.runs(again)] == [r.key for r in runs]
    longer = experiment.loads(SMALL.replace('"200ms"', '"300ms"'), str(small))
    assert not {r.key for r in plan.runs(longer)} & {r.key for r in runs}


def test_cli_bad_experiment_exits_2(cli, tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text(SMALL.replace('cpufreq = "schedutil"', 'cpufreq = "schedutl"'))
    proc = cli("compare", str(path), "--db", str(tmp_path / "db.sqlite"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"govlab: error: {path}:19: config[2].cpufreq:"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    missing = cli("compare", str(tmp_path / "nosuch.toml"))
    assert missing.returncode == 2 and "nosuch.toml" in missing.stderr


# --- running, storing, resuming ------------------------------------------------------------


def test_second_compare_runs_nothing_and_prints_the_same(small, tmp_path):
    db = tmp_path / "r.sqlite"
    first, report = run_compare(small, db)
    assert (report.total, report.stored, report.simulated) == (SMALL_RUNS, 0, SMALL_RUNS)
    rows = run_rows(db)
    assert len(rows) == SMALL_RUNS
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    ran: list[str] = []
    second, report = run_compare(small, db, on_stored=lambda run: ran.append(run.key))
    assert (report.stored, report.simulated, ran) == (SMALL_RUNS, 0, [])
    assert run_rows(db) == rows  # same keys, same timestamps: nothing rewritten
    assert second == first
    assert "ondemand" in first and "schedutil" in first and "Amean" in first


def test_runs_of_another_engine_are_simulated_again(small, tmp_path, monkeypatch):
    # The stored key holds the engine's digest: a rebuilt engine at the same
    # version number (a development tree) must not reuse the old one's runs.
    from govlab import _core

    assert re.fullmatch(r"[0-9a-f]{16}", _core.__engine__)
    db = tmp_path / "r.sqlite"
    run_compare(small, db)
    monkeypatch.setattr(plan, "__engine__", "0" * 16)
    _, report = run_compare(small, db)
    assert (report.stored, report.simulated) == (0, SMALL_RUNS)


@pytest.mark.parametrize("jobs", [1, 2])
def test_interrupted_compare_resumes_with_only_the_missing_runs(small, tmp_path, jobs):
    reference, _ = run_compare(small, tmp_path / "whole.sqlite", jobs=jobs)

    db = tmp_path / "interrupted.sqlite"
    stop_after = 5

    def interrupt(run, seen=[]):  # noqa: B006 - a counter across calls
        seen.append(run.key)
        if len(seen) == stop_after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_compare(small, db, jobs=jobs, on_stored=interrupt)
    stored = {key for key, _ in run_rows(db)}
    assert stop_after <= len(stored) < SMALL_RUNS
    before = run_rows(db)

    resumed: list[str] = []
    text, report = run_compare(small, db, jobs=jobs, on_stored=lambda run: resumed.append(run.key))
    assert (report.stored, report.simulated) == (len(stored), SMALL_RUNS - len(stored))
    assert len(resumed) == SMALL_RUNS - len(stored) and not set(resumed) & stored
    assert set(run_rows(db)) >= set(before)  # the finished runs were kept as they were
    assert text == reference


def test_report_renders_stored_runs_without_simulating(small, tmp_path, monkeypatch):
    db = tmp_path / "r.sqlite"
    text, _ = run_compare(small, db)

    import govlab.sweep.worker

    def no_simulation(*_a, **_k):
        raise AssertionError("report must not simulate")

    monkeypatch.setattr(govlab.sweep.worker, "simulate", no_simulation)
    with Store(db, create=False) as store:
        analyses = compare.from_store(store)
    assert tables.render(analyses, "text") == text
    for fmt in ("markdown", "csv", "json"):
        out = tables.render(analyses, fmt)
        assert "schedutil" in out


def test_report_of_a_partial_database_says_so(small, tmp_path):
    db = tmp_path / "r.sqlite"

    def interrupt(run, seen=[]):  # noqa: B006
        seen.append(run)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_compare(small, db, jobs=1, on_stored=interrupt)
    with Store(db, create=False) as store:
        (analysis,) = compare.from_store(store)
    assert analysis["missing_runs"] == SMALL_RUNS - 3
    assert "INCOMPLETE" in tables.render([analysis], "text")


def test_store_keeps_the_first_result(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        assert store.put("k", {"govlab_version": "x"}, {"a": 1}, 0.5)
        assert not store.put("k", {"govlab_version": "x"}, {"a": 2}, 0.5)
        assert store.results(["k", "missing"]) == {"k": {"a": 1}}
        assert store.count() == 1
    with pytest.raises(FileNotFoundError):
        Store(tmp_path / "nothing.sqlite", create=False)


# --- the command line and experiments/quick.toml --------------------------------------------


def test_quick_experiment_twice_with_one_db(cli, tmp_path):
    db = tmp_path / "quick.sqlite"
    first = cli("compare", str(QUICK), "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert "12 simulated" in first.stderr, first.stderr
    rows = run_rows(db)
    assert len(rows) == 12

    second = cli("compare", str(QUICK), "--db", str(db))
    assert second.returncode == 0, second.stderr
    assert "12 found" in second.stderr and "0 simulated" in second.stderr, second.stderr
    assert run_rows(db) == rows
    assert second.stdout == first.stdout
    out = first.stdout
    assert out.startswith("QUICK\n=====\n")
    assert "ENERGY AND POWER" in out and "Gmean    all" in out
    assert "SUMMARY" not in out  # one benchmark

    report = cli("report", str(db))
    assert report.returncode == 0, report.stderr
    assert report.stdout == first.stdout


def test_cli_formats_and_several_experiments(cli, small, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text(
        SMALL.replace('name = "small"', 'name = "other"').replace(
            'workload = "periodic:run_us=1500,period_us=7000"', 'workload = "cpu-bound"'
        )
    )
    db = tmp_path / "both.sqlite"
    text = cli("compare", str(small), str(other), "--db", str(db), "--jobs", "2")
    assert text.returncode == 0, text.stderr
    assert "SUMMARY" in text.stdout and "RATIOS" in text.stdout
    assert "schedutil against ondemand" in text.stdout

    import json

    data = json.loads(cli("report", str(db), "--format", "json").stdout)
    assert [b["name"] for b in data["benchmarks"]] == ["small", "other"]
    assert data["summary"]["ratios"]["configs"] == ["ondemand", "schedutil"]
    md = cli("report", str(db), "--format", "markdown", "--experiment", "other").stdout
    assert md.startswith("## other") and "| Amean |" in md
    csv_out = cli("report", str(db), "--format", "csv").stdout
    assert csv_out.splitlines()[0].startswith("benchmark,section,stat,axis,axis_value,config")
    bad = cli("report", str(db), "--experiment", "nobody")
    assert bad.returncode == 2 and "nobody" in bad.stderr
    assert cli("report", str(tmp_path / "none.sqlite")).returncode == 2


def test_default_db_is_beside_the_experiment(cli, small):
    proc = cli("compare", str(small), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert (small.parent / "govlab-results.sqlite").is_file()


def test_experiment_paths_are_relative_to_the_file(tmp_path):
    platform = REPO / "data" / "platforms" / "skylake-e3-1240v5.toml"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "machine.toml").write_text(platform.read_text())
    text = SMALL.replace('platform = "skylake-e3-1240v5"', 'platform = "sub/machine.toml"')
    exp = experiment.loads(textwrap.dedent(text), str(tmp_path / "e.toml"))
    assert exp.platform == str(tmp_path / "sub" / "machine.toml")
    # the file is keyed by its content, not its path
    assert str(tmp_path) not in plan.canonical_json(plan.runs(exp)[0].identity)


def _stored(value: float, package_j: float, dram_j: float, secs: float, **extra) -> dict:
    return {
        "primary_metric": {"name": "tps", "unit": "trans/s", "better": "higher", "value": value},
        "energy_j": package_j + dram_j,
        "avg_power_w": (package_j + dram_j) / secs,
        "sim_time_s": secs,
        "package_j": package_j,
        "dram_j": dram_j,
        **extra,
    }


def test_power_is_what_the_run_stands_for_as_reproduce_reads_it():
    # a run with a warm-up: power after it; a shortened run (netperf): its scored power; the
    # same package power `govlab reproduce` reads (analysis.package_energy)
    definition = {
        "name": "p", "platform": "x", "workload": "w", "duration": "1s", "seeds": [1],
        "baseline": "plain", "axis": None,
        "configs": [{"name": "plain"}, {"name": "warm"}, {"name": "scored"}],
    }
    # warm-up 0.5 s at 10 W package and 2 W DRAM, then 0.5 s at 4 W and 1 W: 100 transactions after it
    ivs = [
        {"start_s": t / 10, "end_s": (t + 1) / 10, "counters": [20, 0], "series": [[0, 0.0]], "package_j": 0.4, "dram_j": 0.1}
        for t in range(5, 10)
    ]
    warm = _stored(500.0, 5.0 + 2.0, 1.0 + 0.5, 1.0, samples={"sampler": "pgbench", "intervals": ivs, "warmup_s": 0.5})
    scored = _stored(400.0, 8.0, 1.0, 1.0, scored_power={"package_j": 60.0, "time_s": 10.0, "package_w": 6.0})
    results = {"a": _stored(400.0, 8.0, 1.0, 1.0), "b": warm, "c": scored}
    runs = [{"config": c, "axis_value": None, "repeat": 0, "seed": 1, "key": k} for c, k in (("plain", "a"), ("warm", "b"), ("scored", "c"))]
    got = compare.analyse(definition, runs, results)
    rows = {r["stat"]: {c["config"]: c["value"] for c in r["cells"]} for r in got["energy"]}
    assert rows["Package"] == pytest.approx({"plain": 8.0, "warm": 4.0, "scored": 6.0})
    assert rows["Power"] == pytest.approx({"plain": 9.0, "warm": 5.0, "scored": 9.0})
    assert rows["DRAM"] == pytest.approx({"plain": 1.0, "warm": 1.0, "scored": 1.0})
    assert rows["Energy"]["warm"] == pytest.approx(8.5)  # the warm-up was spent too
    assert rows["Perf/W"]["warm"] == pytest.approx(100 / 0.5 / 5.0)
    for key, result in results.items():
        assert compare.package_energy(result) == pytest.approx({"a": (8.0, 1.0), "b": (2.0, 0.5), "c": (60.0, 10.0)}[key])

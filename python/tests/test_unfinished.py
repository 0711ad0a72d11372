"""issue 16: unfinished runs, metrics with no samples, statistics without variance."""

from __future__ import annotations

import json

import govlab.api


def test_unfinished_run_says_so_first_and_prints_no_primary_value(cli):
    r = cli("run", "--workload", "hackbench", "--duration", "10ms")
    assert r.returncode == 0, r.stderr
    first, *rest = r.stdout.splitlines()
    assert first.startswith("UNFINISHED: hackbench did not end"), first
    assert "messages received" in first and "needs about" in first
    primary = next(line for line in rest if line.startswith("primary metric"))
    assert "time_s = (unfinished)" in primary and " s " not in primary.split("=")[1]
    j = json.loads(cli("run", "--workload", "hackbench", "--duration", "10ms", "--format", "json").stdout)
    assert j["finished"] is False
    assert j["primary_metric"]["value"] is None and j["primary_metric"]["missing"] == "unfinished"
    assert "time_s" not in j["metrics"]


def test_a_workload_that_runs_until_the_duration_is_finished(cli):
    j = json.loads(cli("run", "--workload", "cpu-bound", "--duration", "10ms", "--format", "json").stdout)
    assert j["finished"] is True and "progress" not in j


def test_default_duration_lets_kernbench_finish(cli):
    # It was 10 s for everything: kernbench printed elapsed_s = 10 s.
    j = json.loads(cli("run", "--workload", "kernbench", "--format", "json").stdout)
    assert j["finished"] is True and j["duration_s"] == 3600
    assert govlab.api.default_duration("kernbench") == "3600s"
    assert govlab.api.default_duration("cpu-bound") == "10s"
    listing = cli("list", "workloads").stdout
    assert "default_duration: 3600s" in listing


def test_no_samples_is_not_zero(cli):
    r = cli("run", "--workload", "ycsb-redis:read_fraction=0", "--duration", "200ms")
    assert "read_avg_us = (no samples)" in r.stdout
    assert "read_p99_us" not in r.stdout


def _experiment(tmp_path, duration, workload="hackbench:groups=2", repeats=2):
    p = tmp_path / "e.toml"
    p.write_text(
        f"""
[experiment]
name = "hb"
workload = "{workload}"
duration = "{duration}"
repeats = {repeats}
baseline = "perf"

[axis]
loops = [100, 200]

[[config]]
name = "perf"
cpufreq = "performance"

[[config]]
name = "save"
cpufreq = "powersave"
"""
    )
    return p


def test_compare_and_report_refuse_unfinished_runs(cli, tmp_path):
    exp = _experiment(tmp_path, "20ms")
    db = tmp_path / "r.sqlite"
    r = cli("compare", str(exp), "--db", str(db))
    assert r.returncode == 2, r.stdout
    err = r.stderr.strip().splitlines()[-1]
    assert err.startswith("govlab: error: hb: ") and "unfinished" in err
    assert "perf at loops=100" in err and "needs about" in err and "duration" in err
    assert r.stdout == ""
    r = cli("report", str(db))
    assert r.returncode == 2 and "unfinished" in r.stderr


def test_identical_repeats_are_warned_and_not_significant(cli, tmp_path):
    # hackbench has no randomness: on a silent machine (housekeeping off, whose
    # wakeups are random) its repeats are identical.
    exp = _experiment(tmp_path, "10s")
    exp.write_text(exp.read_text().replace('baseline = "perf"', 'baseline = "perf"\nkernel = "6.8:housekeeping=off"'))
    r = cli("compare", str(exp), "--db", str(tmp_path / "r.sqlite"))
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if "seed does not reach" in line]
    assert len(warnings) == 1, r.stderr  # one line for the benchmark
    assert warnings[0].count(" at ") == 4, r.stderr  # naming 2 configurations x 2 loops values
    assert "*" not in r.stdout.split("ENERGY")[0].replace("*x%*", "")
    assert "[x%] no variance" in r.stdout
    j = json.loads(cli("compare", str(exp), "--db", str(tmp_path / "r.sqlite"), "--format", "json").stdout)
    cells = [c for row in j["benchmarks"][0]["energy"] for c in row["cells"] if c["config"] == "perf" and c.get("n")]
    assert all(c["significant"] in (None, False) for c in cells)


def test_compare_help_has_no_doubled_percent(cli):
    out = cli("compare", "--help").stdout
    assert "*x%*" in out and "%%" not in out

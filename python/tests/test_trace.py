"""``govlab trace stats`` and ``govlab.trace``: real recordings in, figures out,
bad input as one line and exit status 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import govlab
from govlab import trace

sys.path.insert(0, str(Path(__file__).resolve().parent / "regression"))
from common import real_data  # noqa: E402  (shared with the regression cases)


REAL = real_data()
SURFACEFLINGER = REAL / "trappy" / "trace_surfaceflinger.html"
SCHED_LOAD = REAL / "lisa" / "sched_load" / "trace.dat"


def test_json_has_counts_duration_and_run_shaped_cpus(cli):
    proc = cli("trace", "stats", str(SCHED_LOAD), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["events"]["cpu_idle"] == 474 and d["events"]["sched_switch"] == 399
    assert d["nr_cpus"] == 6 and len(d["cpus"]) == 6
    assert d["idle_states_from"].startswith("defaults")
    for c in d["cpus"]:
        # The keys `govlab run --format json` gives per CPU are all there.
        assert {"cpu", "busy_s", "idle_s", "busy_ns", "idle_ns", "time_in_state", "transitions",
                "idle_states", "idle_accuracy"} <= c.keys()
        assert c["busy_ns"] + c["idle_ns"] + c["unknown_ns"] == d["duration_ns"]
        assert c["idle_accuracy"]["samples"] == sum(c["oracle_usage"])


def test_text_summary_names_what_it_shows(cli):
    proc = cli("trace", "stats", str(SURFACEFLINGER))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("systrace-html | 8 CPUs")
    assert "idle states from defaults" in out
    assert "518 MHz" in out and "499 MHz" in out
    assert "too shallow" in out and "oracle usage" in out


def test_platform_gives_the_idle_states():
    d = trace.stats(SURFACEFLINGER, platform="skylake-e3-1240v5")
    assert d["idle_states_from"] == "platform skylake-e3-1240v5"
    assert [s["name"] for s in d["cpus"][0]["idle_states"]][:2] == ["POLL", "C1"]


def test_unknown_platform_and_bad_files_are_one_line_errors(cli, tmp_path):
    proc = cli("trace", "stats", str(SURFACEFLINGER), "--platform", "no-such-board")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "unknown platform 'no-such-board'" in proc.stderr and "Traceback" not in proc.stderr

    bad = tmp_path / "bad.txt"
    bad.write_text("version = 6\ncpus=1\n  a-1 [000] 1.0: cpu_idle: state=1 cpu_id=0\n  this is not a trace line\n x-2 [000] 2.0: print: y\n")
    proc = cli("trace", "stats", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert f"{bad}: line 4: not an ftrace event line" in proc.stderr

    cut = tmp_path / "cut.dat"
    cut.write_bytes(SCHED_LOAD.read_bytes()[:100_000])
    proc = cli("trace", "stats", str(cut))
    assert proc.returncode == 2 and "byte " in proc.stderr and "Traceback" not in proc.stderr

    proc = cli("trace", "stats", str(tmp_path / "missing.dat"))
    assert proc.returncode == 2 and "missing.dat" in proc.stderr


def test_trace_errors_are_trace_errors(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html>no trace here</html>")
    with pytest.raises(govlab.TraceError, match="systrace"):
        trace.stats(bad)


def test_a_runs_own_trace_reads_back(tmp_path):
    path = tmp_path / "run.txt"
    # A machine whose policies are their clocks (a core each): there a CPU's
    # cpu_frequency events are its clock's changes. On a shared clock
    # (the Skylake's) each CPU traces its own policy's requests instead.
    plat = "broadwell-2s-e5-2698v4:smt=off"
    r = govlab.run(platform=plat, workload="periodic:tasks=4,run_us=1000,period_us=5000", duration="200ms", trace=path)
    d = trace.stats(path, platform=plat)
    assert d["format"] == "trace-cmd-report"
    assert d["duration_ns"] == r.to_dict()["sim_time_ns"]
    for run_cpu, trace_cpu in zip(r.to_dict()["cpus"], d["cpus"], strict=True):
        assert abs(run_cpu["busy_ns"] - trace_cpu["busy_ns"]) <= 100_000
        assert run_cpu["transitions"] == trace_cpu["transitions"]


def test_replay_of_a_runs_trace_prints_both_sides(cli, tmp_path):
    path = tmp_path / "run.txt"
    govlab.run(workload="periodic:tasks=4,run_us=1000,period_us=5000", cpufreq="schedutil", cpuidle="menu",
               duration="300ms", trace=path)
    proc = cli("trace", "replay", str(path), "--pin")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("4 tasks replayed")
    assert "recording vs replay, per CPU:" in proc.stdout
    proc = cli("trace", "replay", str(path), "--format", "json")
    d = json.loads(proc.stdout)
    assert d["tasks"] == 4 and d["run"]["workload"] == f"replay of {path}"
    assert d["recorded"]["duration_ns"] == d["run"]["sim_time_ns"]


def test_replay_errors_are_one_line(cli, tmp_path):
    proc = cli("trace", "replay", str(SURFACEFLINGER), "--cpufreq", "nope")
    assert proc.returncode == 2 and "unknown" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("trace", "replay", str(SURFACEFLINGER), "--platform", "skylake-e3-1240v5:smt=off", "--pin")
    assert proc.returncode == 2 and "pin" in proc.stderr and "Traceback" not in proc.stderr


def test_replay_with_timed_wakeups_replays_the_same_tasks(tmp_path):
    path = tmp_path / "run.txt"
    govlab.run(workload="periodic:tasks=4,run_us=1000,period_us=5000", duration="200ms", trace=path)
    _, _, follow = trace.replay(path, pin=True)
    result, recorded, timed = trace.replay(path, pin=True, timed_wakeups=True)
    assert follow == timed == 4
    assert result.to_dict()["sim_time_ns"] == recorded["duration_ns"]


# A govlab trace says which machine it came from (issue 16).


def test_trace_stats_of_a_runs_trace_needs_no_platform(cli, tmp_path):
    path = tmp_path / "run.txt"
    proc = cli("run", "--workload", "periodic:tasks=2", "--duration", "100ms", "--trace", str(path))
    assert proc.returncode == 0, proc.stderr
    assert path.read_text().splitlines()[:4] == [
        "cpus=8", f"# govlab: version={govlab.__version__}", "# govlab: kernel=6.8", "# govlab: platform=skylake-e3-1240v5",
    ]
    proc = cli("trace", "stats", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "idle states from platform skylake-e3-1240v5 (recorded in the trace's header)" in proc.stdout
    # Skylake's idle states, not the Juno defaults.
    assert "C8 usage/time" in proc.stdout and "WFI" not in proc.stdout
    # --html takes the same platform.
    proc = cli("trace", "stats", str(path), "--format", "json", "--html", str(tmp_path / "t.html"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["idle_states_from"].startswith("platform skylake-e3-1240v5")


def test_an_explicit_platform_wins_over_the_header(cli, tmp_path):
    path = tmp_path / "run.txt"
    cli("run", "--platform", "skylake-e3-1240v5", "--workload", "periodic:tasks=2", "--duration", "100ms",
        "--trace", str(path))
    proc = cli("trace", "stats", str(path), "--platform", "juno-r0")
    # Juno has 6 CPUs: the explicit platform is the one used, and refused.
    assert proc.returncode == 2 and "juno-r0" in proc.stderr and "8 CPUs" in proc.stderr
    proc = cli("trace", "replay", str(path), "--platform", "skylake-e3-1240v5:hz=1000", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["run"]["platform"] == "skylake-e3-1240v5:hz=1000"


def test_replay_without_a_platform_uses_the_recorded_one(cli, tmp_path):
    path = tmp_path / "run.txt"
    proc = cli("run", "--platform", "juno-r0", "--workload", "periodic:tasks=2", "--duration", "100ms",
               "--trace", str(path))
    assert proc.returncode == 0, proc.stderr
    proc = cli("trace", "replay", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["run"]["platform"] == "juno-r0" and len(d["run"]["cpus"]) == 6
    result, _, _ = trace.replay(path)
    assert result.to_dict()["platform"] == "juno-r0"


def test_a_real_recording_without_header_behaves_as_before(cli):
    proc = cli("trace", "stats", str(SCHED_LOAD), "--format", "json")
    assert json.loads(proc.stdout)["idle_states_from"].startswith("defaults")
    proc = cli("trace", "replay", str(SCHED_LOAD), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["run"]["platform"] == govlab.api.DEFAULT_PLATFORM


def test_a_header_platform_that_does_not_load_is_one_line(cli, tmp_path):
    path = tmp_path / "run.txt"
    cli("run", "--workload", "periodic:tasks=1", "--duration", "50ms", "--trace", str(path))
    path.write_text(path.read_text().replace("platform=skylake-e3-1240v5", "platform=gone.toml"))
    for command in ("stats", "replay"):
        proc = cli("trace", command, str(path))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and "line 4" in proc.stderr and "name the platform explicitly" in proc.stderr

"""The Python API: determinism, the shape of a result, spec forms, exceptions."""

from __future__ import annotations

import json
import math

import pytest

import govlab
import govlab.exceptions
from govlab import _core
from govlab.api import duration_text, spec_text

CPU_KEYS = {"cpu", "busy_s", "idle_s", "time_in_state", "transitions", "idle_states"}
IDLE_STATE_KEYS = {"name", "usage", "time_s", "above", "below"}
TOP_KEYS = {
    "platform", "workload", "cpufreq", "cpuidle", "seed", "sim_time_s", "events",
    "metrics", "primary_metric", "energy_j", "avg_power_w", "cpus",
}


# --- determinism -------------------------------------------------------------


def test_same_seed_is_byte_identical(periodic, short):
    a = govlab.run(workload=periodic, duration=short, seed=7)
    b = govlab.run(workload=periodic, duration=short, seed=7)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())


def test_different_seed_differs(periodic, short):
    # periodic starts each task at a random phase, so the seed must matter.
    a = govlab.run(workload=periodic, duration=short, seed=1).to_dict()
    b = govlab.run(workload=periodic, duration=short, seed=2).to_dict()
    assert (a.pop("seed"), b.pop("seed")) == (1, 2)
    assert json.dumps(a) != json.dumps(b)


# --- the result dict -----------------------------------------------------------


def test_result_has_required_keys(periodic_result, skylake_cpus):
    d = periodic_result.to_dict()
    assert TOP_KEYS <= d.keys(), TOP_KEYS - d.keys()
    assert {"name", "value", "better"} <= d["primary_metric"].keys()
    assert d["primary_metric"]["better"] in ("lower", "higher")
    assert d["seed"] == 1
    assert d["sim_time_s"] == pytest.approx(0.5, rel=1e-12)
    assert d["events"] > 0
    assert len(d["cpus"]) == skylake_cpus
    for cpu in d["cpus"]:
        assert CPU_KEYS <= cpu.keys(), CPU_KEYS - cpu.keys()
        assert cpu["idle_states"], f"cpu {cpu['cpu']} has no idle states"
        for state in cpu["idle_states"]:
            assert IDLE_STATE_KEYS <= state.keys(), IDLE_STATE_KEYS - state.keys()


def test_busy_plus_idle_is_sim_time(periodic_result):
    d = periodic_result.to_dict()
    for cpu in d["cpus"]:
        assert cpu["busy_s"] >= 0 and cpu["idle_s"] >= 0
        assert math.isclose(cpu["busy_s"] + cpu["idle_s"], d["sim_time_s"], rel_tol=1e-9), cpu["cpu"]


def test_energy_is_power_times_time(periodic_result):
    r = periodic_result
    assert r.energy_j > 0
    assert math.isclose(r.avg_power_w * r.sim_time_s, r.energy_j, rel_tol=1e-9)


def test_to_dict_is_a_copy(periodic_result):
    d = periodic_result.to_dict()
    d["cpus"][0]["busy_s"] = -1.0
    d["metrics"].clear()
    assert periodic_result.to_dict()["cpus"][0]["busy_s"] != -1.0
    assert periodic_result.metrics == periodic_result.to_dict()["metrics"]


def test_properties_mirror_the_dict(periodic_result):
    r, d = periodic_result, periodic_result.to_dict()
    assert r.primary_metric == d["primary_metric"]
    assert r.metrics == d["metrics"]
    assert (r.energy_j, r.avg_power_w, r.events) == (d["energy_j"], d["avg_power_w"], d["events"])
    assert "govlab.Result" in repr(r) and len(repr(r)) < 300


# --- DataFrames --------------------------------------------------------------


def test_cpus_frame_has_one_row_per_cpu(periodic_result, skylake_cpus):
    df = periodic_result.cpus
    assert list(df.columns) == ["cpu", "busy_s", "idle_s", "transitions", "busy_pct"]
    assert sorted(df["cpu"]) == list(range(skylake_cpus))
    sim = periodic_result.sim_time_s
    for row in df.itertuples():
        assert row.busy_pct == pytest.approx(100 * row.busy_s / sim)
        assert 0 <= row.busy_pct <= 100


def test_time_in_state_frame(periodic_result, skylake_cpus):
    df = periodic_result.time_in_state
    assert list(df.columns) == ["cpu", "khz", "seconds"]
    assert sorted(df["cpu"].unique()) == list(range(skylake_cpus))
    assert (df["khz"] > 0).all() and (df["seconds"] >= 0).all()
    assert df.groupby("cpu")["seconds"].sum().gt(0).all()


def test_idle_states_frame(periodic_result, skylake_cpus):
    df = periodic_result.idle_states
    assert list(df.columns) == ["cpu", "state", "usage", "time_s", "above", "below", "rejected"]
    assert sorted(df["cpu"].unique()) == list(range(skylake_cpus))
    per_cpu = sum(len(c["idle_states"]) for c in periodic_result.to_dict()["cpus"])
    assert len(df) == per_cpu
    # idle time is spent in some state: the states' time cannot exceed the CPU's idle time
    idle = periodic_result.cpus.set_index("cpu")["idle_s"]
    for cpu, t in df.groupby("cpu")["time_s"].sum().items():
        assert t <= idle[cpu] * (1 + 1e-9) + 1e-12, cpu


# --- spec and duration forms -------------------------------------------------


def test_tuple_and_dict_specs_match_string(short):
    params = {"tasks": 4, "run_us": 1000, "period_us": 5000}
    by_string = govlab.run(workload="periodic:tasks=4,run_us=1000,period_us=5000", duration=short)
    by_tuple = govlab.run(workload=("periodic", params), duration=short)
    by_dict = govlab.run(workload={"name": "periodic", **params}, duration=short)
    assert by_tuple.to_dict() == by_string.to_dict()
    assert by_dict.to_dict() == by_string.to_dict()


def test_duration_in_seconds_matches_string(periodic):
    assert (
        govlab.run(workload=periodic, duration=0.25).to_dict()
        == govlab.run(workload=periodic, duration="250ms").to_dict()
    )


def test_spec_text_forms():
    assert spec_text("ladder") == "ladder"
    assert spec_text(("userspace", {"scaling_setspeed": 2000000})) == "userspace:scaling_setspeed=2000000"
    assert spec_text(("menu",)) == "menu"
    assert spec_text({"name": "periodic", "tasks": 2, "x": True}) == "periodic:tasks=2,x=true"
    assert spec_text(("periodic:tasks=2", {"run_us": 5})) == "periodic:tasks=2,run_us=5"
    spec = {"name": "periodic", "tasks": 2}
    spec_text(spec)
    assert spec == {"name": "periodic", "tasks": 2}, "the caller's dict must not change"


@pytest.mark.parametrize(
    "bad",
    [{"tasks": 2}, ("periodic", {"a": "1,2"}), ("periodic", {"a=b": 1}), "", ("", {})],
    ids=["dict without name", "comma in value", "equals in key", "empty", "empty name"],
)
def test_bad_specs_are_value_errors(bad):
    with pytest.raises(ValueError):
        spec_text(bad, "workload")


def test_duration_text():
    assert duration_text("10s") == "10s"
    assert duration_text(2) == "2000000000ns"
    assert duration_text(0.25) == "250000000ns"
    with pytest.raises(ValueError):
        duration_text(float("inf"))
    # Issue 16: every invalid input is a GovlabError (InvalidValueError is also a ValueError).
    with pytest.raises(govlab.InvalidValueError):
        duration_text(True)


# --- exceptions ----------------------------------------------------------------


#: Each class of govlab.exceptions and the built-in classes it must also be (besides GovlabError).
ALSO = {
    "UnknownNameError": {ValueError},
    "InvalidValueError": {ValueError},
    "InvalidTypeError": {ValueError, TypeError},
    "UnknownKeyError": {ValueError},
    "ExperimentError": {ValueError},
    "ResultsError": {ValueError},
    "StoreError": {ValueError},
    "UnfinishedRuns": {ValueError},
    "MissingTraceEventError": {KeyError},
    "FileFormatError": set(),
    "TraceError": set(),
    "UnsupportedError": set(),
    "GovernorError": set(),
    "WorkerError": set(),
    "ClusterError": set(),
    "FileAccessError": {OSError},
    "MissingFileError": {FileNotFoundError},
    "FilePermissionError": {PermissionError},
    "OutputError": {OSError},
}
BUILTINS = (ValueError, TypeError, KeyError, OSError, FileNotFoundError, PermissionError)


def test_exception_hierarchy():
    """Each class's bases: a GovlabError, and exactly the built-in errors the module doc promises."""
    from govlab import exceptions

    G = govlab.GovlabError
    assert G.__bases__ == (Exception,)
    classes = [n for n in exceptions.__all__ if n not in ("GovlabError", "file_error")]
    assert sorted(classes) == sorted(ALSO)
    for name in classes:
        cls = getattr(exceptions, name)
        assert issubclass(cls, G), name
        assert {b for b in BUILTINS if issubclass(cls, b)} == {b for b in BUILTINS if any(issubclass(a, b) for a in ALSO[name])}, name
        assert getattr(govlab, name) is cls, name
        assert name in exceptions.__doc__, name
    assert issubclass(exceptions.StoreError, exceptions.ResultsError)
    assert issubclass(exceptions.UnfinishedRuns, exceptions.ResultsError)
    assert issubclass(exceptions.OutputError, exceptions.FileAccessError)
    for name in ("UnknownNameError", "InvalidValueError", "UnknownKeyError", "FileFormatError", "TraceError"):
        assert getattr(exceptions, name) is getattr(_core, name)
    # The modules that raise them hold the same classes.
    from govlab import analysis, experiment, outfile, store
    from govlab.sweep import dask

    assert store.StoreError is exceptions.StoreError and analysis.UnfinishedRuns is exceptions.UnfinishedRuns
    assert experiment.ExperimentError is exceptions.ExperimentError and outfile.OutputError is exceptions.OutputError
    assert dask.ClusterError is exceptions.ClusterError


def test_a_missing_file_is_file_not_found_with_errno_and_filename(tmp_path):
    import errno

    for call in (
        lambda: govlab.run(platform=str(tmp_path / "none.toml"), duration="10ms"),
        lambda: govlab.Trace(tmp_path / "none.toml"),
        lambda: govlab.trace.stats(tmp_path / "none.toml"),
    ):
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert isinstance(e.value, govlab.MissingFileError) and isinstance(e.value, govlab.GovlabError)
        assert e.value.errno == errno.ENOENT and e.value.filename == str(tmp_path / "none.toml")
        assert str(e.value) == f"{tmp_path / 'none.toml'}: No such file or directory"


def test_unknown_name_is_a_value_error():
    with pytest.raises(ValueError) as e:
        govlab.run(platform="nosuch-machine", duration="10ms")
    assert isinstance(e.value, govlab.UnknownNameError)


@pytest.mark.parametrize(
    "text, says",
    [
        ("10", "a duration needs its unit: '10s', '10ms', '10us' or '10ns'"),
        ("10 ms", "no space between the number and its unit: '10ms'"),
        ("3 parsecs", "a number and its unit"),
        ("10S", "a number and its unit"),
    ],
)
def test_duration_text_needs_its_unit_in_python_and_the_cli(cli, text, says):
    with pytest.raises(govlab.InvalidValueError) as e:
        govlab.run(duration=text)
    assert str(e.value).startswith(f"duration: invalid value {text!r}: {says}")
    proc = cli("run", "--duration", text)
    assert proc.returncode == 2 and proc.stderr.strip() == f"govlab: error: {e.value}"


def test_a_number_of_seconds_and_text_with_a_unit_agree():
    assert duration_text("250ms") == "250ms" and duration_text(" 2min ") == "2min"
    assert duration_text(2) == "2000000000ns"


def test_invalid_value_is_a_value_error(short):
    with pytest.raises(ValueError, match="scaling_setspeed") as info:
        govlab.run(cpufreq="userspace:scaling_setspeed=abc", duration=short)
    assert isinstance(info.value, govlab.InvalidValueError)
    assert isinstance(info.value, govlab.GovlabError)


def test_unknown_key_error(short):
    with pytest.raises(govlab.UnknownKeyError, match="foo"):
        govlab.run(cpufreq="performance:foo=1", duration=short)


def test_unknown_name_error_lists_choices(short):
    with pytest.raises(govlab.UnknownNameError, match="skylake-e3-1240v5"):
        govlab.run(platform="nosuch-machine", duration=short)


def test_missing_platform_file_is_file_not_found(short):
    with pytest.raises(FileNotFoundError, match="/nonexistent.toml"):
        govlab.run(platform="/nonexistent.toml", duration=short)


def test_malformed_platform_file(tmp_path, short):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(govlab.FileFormatError, match="bad.toml"):
        govlab.run(platform=str(bad), duration=short)


# --- progress and interruption -------------------------------------------------


@pytest.mark.slow
def test_progress_reports_simulated_ns(periodic):
    calls: list[tuple[int, int]] = []
    govlab.run(workload=periodic, duration="5s", progress=lambda d, t: calls.append((d, t)))
    if not calls:
        pytest.skip("the run finished before the first progress report")
    assert all(isinstance(d, int) and t == 5_000_000_000 and 0 <= d <= t for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.slow
def test_exception_in_progress_stops_the_run(periodic):
    class Stop(Exception):
        pass

    seen: list[int] = []

    def progress(done, total):
        seen.append(done)
        raise Stop

    try:
        govlab.run(workload=periodic, duration="5s", progress=progress)
    except Stop:
        assert len(seen) == 1, "the engine must stop at the first exception"
    else:
        assert not seen, "an exception raised by progress was swallowed"


# --- catalogues ----------------------------------------------------------------


def test_catalogues():
    platforms = {p["name"] for p in govlab.list_platforms()}
    workloads = {w["name"] for w in govlab.list_workloads()}
    governors = {(g["name"], g.get("kind")) for g in govlab.list_governors()}
    assert "skylake-e3-1240v5" in platforms
    assert {"cpu-bound", "periodic"} <= workloads
    assert {("performance", "cpufreq"), ("powersave", "cpufreq"), ("userspace", "cpufreq")} <= governors
    assert ("ladder", "cpuidle") in governors
    with pytest.raises(govlab.GovlabError):
        _core.list("nothing")

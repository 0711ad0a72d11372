"""Package power as a user sees it (issue 23): turbostat's view of a run, the package and DRAM
domains, and the ``package_cstates`` platform option."""

from __future__ import annotations

import json

import govlab

BDW = "broadwell-2s-e5-2698v4"


def test_turbostat_text_has_turbostats_columns_per_cpu_and_package(cli):
    proc = cli("run", "--platform", BDW, "--workload", "periodic:tasks=3", "--duration", "200ms", "--turbostat")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["Package", "Core", "CPU"])
    cols = lines[header].split()
    for col in ("Avg_MHz", "Busy%", "Bzy_MHz", "CPU%c1", "CPU%c6", "Pkg%pc6", "PkgWatt", "RAMWatt"):
        assert col in cols, cols
    assert "CorWatt" not in cols, "Xeon E5 v4 has no PP0 domain"
    rows = lines[header + 1 :]
    assert rows[0].split()[:3] == ["-", "-", "-"], "the summary row comes first"
    assert len(rows) == 1 + 80


def test_turbostat_json_and_python_agree_and_add_up():
    result = govlab.run(platform="skylake-e3-1240v5", workload="periodic:tasks=2", duration="200ms", seed=2)
    rows = result.turbostat()
    d = result.to_dict()
    secs = d["sim_time_s"]
    summary = rows[0]
    assert abs(summary["PkgWatt"] - d["package_j"] / secs) < 1e-9
    assert abs(summary["RAMWatt"] - d["dram_j"] / secs) < 1e-9
    assert summary["CorWatt"] < summary["PkgWatt"], "client Skylake has PP0; the cores are part of the package"
    assert abs(d["package_j"] + d["dram_j"] - d["energy_j"]) < 1e-9 * d["energy_j"]
    assert 0.0 <= summary["Pkg%pc8"] <= 100.0


def test_turbostat_json_from_the_cli(cli):
    proc = cli("run", "--platform", BDW, "--workload", "idle", "--duration", "100ms", "--format", "json", "--turbostat")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["turbostat"][0]["CPU"] == "-"
    assert d["turbostat"][0]["Pkg%pc6"] > 50.0, "an idle Broadwell-EP sits in PC6"


def test_package_cstates_off_keeps_the_package_in_pc0():
    on = govlab.run(platform=BDW, workload="idle", duration="200ms").to_dict()
    off = govlab.run(platform=f"{BDW}:package_cstates=off", workload="idle", duration="200ms").to_dict()
    # Half of 2 x 200 ms: housekeeping on either package wakes both (PC6 is coordinated across the sockets).
    assert sum(p["cstates"][0]["time_s"] for p in on["packages"]) > 0.2
    assert all(p["cstates"][0]["time_s"] == 0 for p in off["packages"])
    assert off["avg_power_w"] > on["avg_power_w"]


def test_bad_package_cstates_is_one_error_line(cli):
    proc = cli("run", "--platform", f"{BDW}:package_cstates=maybe", "--duration", "10ms")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error:"), proc.stderr
    assert "package_cstates" in lines[0] and "on/off" in lines[0]


def test_pkg_percent_shows_when_rapl_holds_the_package_at_pl1(tmp_path):
    """Every thread spinning at the all-core turbo: turbostat's PKG_% is 0 until the 1 s average reaches PL1
    (135 W), then 100 with PkgWatt at the limit (within 1.5 %, as tests/it/power.rs holds it: a step of the
    ceiling moves the uncore's clock with the cores'); ``power_limit=off`` drops the limit, PKG_% stays 0."""
    wl = tmp_path / "spin.toml"
    wl.write_text('[[task]]\ncomm = "spin"\ninstances = 80\nops = [ { run = "100s" } ]\n')
    held = govlab.run(platform=BDW, workload=str(wl), cpufreq="performance", duration="6s", turbostat_interval="2s")
    first, _, last = held.turbostat_intervals()
    assert first["rows"][1]["PKG_%"] == 0.0 and first["rows"][1]["PkgWatt"] > 137.0
    assert last["rows"][1]["PKG_%"] == 100.0 and abs(last["rows"][1]["PkgWatt"] / 135.0 - 1.0) < 0.015
    free = govlab.run(platform=f"{BDW}:power_limit=off", workload=str(wl), cpufreq="performance", duration="6s")
    assert free.turbostat()[1]["PKG_%"] == 0.0, "turbostat shows the counter; without a limit it never counts"
    assert all(p["power_limited_s"] is None for p in free.to_dict()["packages"])


def test_power_limit_on_without_a_limit_is_one_error_line(cli):
    proc = cli("run", "--platform", "juno-r0:power_limit=on", "--duration", "10ms")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "power_limit" in lines[0], proc.stderr

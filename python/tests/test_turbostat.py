"""turbostat as the real tool prints it (issue 37): the columns turbostat v6.8 shows on each CPU
model, in its order, tab-separated; rows that end where turbostat's do; --show/--hide/--interval;
the notebook frame numeric with the summary row marked apart."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

import govlab

SKL = "skylake-e3-1240v5"
BDW = "broadwell-2s-e5-2698v4"
FIXTURES = Path(__file__).parent / "turbostat"


def _fixture_header(name: str) -> list[str]:
    lines = [line for line in (FIXTURES / name).read_text().splitlines() if line and not line.startswith("#")]
    assert len(lines) == 1
    return lines[0].split("\t")


def _read(stdout: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(stdout), sep="\t")


def test_skylake_header_matches_turbostat_column_for_column(cli):
    proc = cli("run", "--platform", SKL, "--workload", "periodic:tasks=2", "--duration", "200ms", "--turbostat")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0].split("\t")
    assert header == _fixture_header("skylake-e3-1240v5.header")
    df = _read(proc.stdout)
    assert list(df.columns) == header
    assert len(df) == 1 + 8
    assert df["Core"][0] == "-" and df["CPU"][0] == "-", "the summary row comes first, its topology columns '-'"
    for col in header[2:]:
        assert pd.api.types.is_numeric_dtype(df[col]), col
    assert "cpufreq" in proc.stderr and "Package" not in proc.stderr, "the run's summary goes to stderr"


def test_rows_end_where_turbostats_do(cli):
    """A CPU's second thread stops after CPU%c1; a later core of the package after its core columns
    (format_counters' goto done). Rows come in topology order: SMT siblings together."""
    proc = cli("run", "--platform", SKL, "--workload", "periodic:tasks=2", "--duration", "100ms", "--turbostat")
    lines = proc.stdout.splitlines()
    header = lines[0].split("\t")
    rows = [line.split("\t") for line in lines[1:]]
    assert [r[1] for r in rows[1:]] == ["0", "4", "1", "5", "2", "6", "3", "7"]
    assert len(rows[0]) == len(header) and len(rows[1]) == len(header)
    assert len(rows[2]) == header.index("CPU%c1") + 1
    assert len(rows[3]) == header.index("CoreThr") + 1


def test_broadwell_ep_columns():
    result = govlab.run(platform=BDW, workload="periodic:tasks=3", duration="100ms")
    cols = list(result.turbostat()[0])
    assert cols[:3] == ["Package", "Core", "CPU"]
    assert [c for c in cols if c.startswith("CPU%c")] == ["CPU%c1", "CPU%c3", "CPU%c6"]
    assert [c for c in cols if c.startswith("Pkg%")] == ["Pkg%pc2", "Pkg%pc3", "Pkg%pc6"]
    assert cols[-5:] == ["PkgWatt", "RAMWatt", "PKG_%", "RAM_%", "UncMHz"]
    assert "CorWatt" not in cols and "Totl%C0" not in cols and "GFXWatt" not in cols


def test_epyc_columns_are_amd_features_with_rapl():
    """turbostat.c amd_features_with_rapl: no core or package C-state counters (CPU%c1 only),
    RAPL_AMD_F17H's core and package energy, no perf-status or temperature columns; acpi_idle's
    states under their _CST names."""
    result = govlab.run(platform="epyc-7702-2s", workload="periodic:tasks=3", duration="50ms")
    cols = list(result.turbostat()[0])
    assert cols[:6] == ["Package", "Core", "CPU", "Avg_MHz", "Busy%", "Bzy_MHz"]
    assert cols[6:10] == ["TSC_MHz", "IPC", "IRQ", "SMI"]
    assert [c for c in cols if c.startswith("CPU%c")] == ["CPU%c1"]
    assert not [c for c in cols if c.startswith(("Pkg%", "Pk%"))]
    assert cols[-2:] == ["CorWatt", "PkgWatt"]
    for absent in ("CoreTmp", "PkgTmp", "PKG_%", "RAMWatt", "UncMHz"):
        assert absent not in cols, absent
    assert {"POLL", "C1", "C2", "C2%"} <= set(cols)
    summary = result.turbostat()[0]
    assert summary["TSC_MHz"] == 2000.0


def test_alder_lake_columns_are_adl_features():
    """turbostat.c adl_features (INTEL_ALDERLAKE): core counters c1, c6, c7 (C8 and C10 count as
    core C7), package PC2, PC3, PC6, PC8, PC10, the extended C0 counters, the client RAPL domains
    with graphics, UncMHz; intel_idle's adl_cstates under their names, for P- and E-cores alike."""
    result = govlab.run(platform="i9-12900k", workload="periodic:tasks=3", duration="50ms")
    rows = result.turbostat()
    cols = list(rows[0])
    assert cols[:3] == ["Core", "CPU", "Avg_MHz"], "one package: no Package column"
    assert [c for c in cols if c.startswith("CPU%c")] == ["CPU%c1", "CPU%c6", "CPU%c7"]
    assert [c for c in cols if c.startswith(("Pkg%", "Pk%"))] == ["Pkg%pc2", "Pkg%pc3", "Pkg%pc6", "Pkg%pc8", "Pk%pc10"]
    assert cols[-7:] == ["PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "PKG_%", "RAM_%", "UncMHz"]
    assert {"POLL", "C1E", "C6", "C8", "C10", "C10%", "GFX%rc6", "Totl%C0"} <= set(cols)
    assert rows[0]["TSC_MHz"] == 3200.0
    assert len(rows) == 1 + 24


def test_summary_row_sums_counts_and_energy_and_averages_the_rest():
    result = govlab.run(platform=BDW, workload="periodic:tasks=3", duration="100ms")
    rows = result.turbostat()
    summary, cpus = rows[0], rows[1:]
    assert summary["C6"] == sum(r["C6"] for r in cpus)
    assert summary["Busy%"] == pytest.approx(sum(r["Busy%"] for r in cpus) / len(cpus))
    pkgs = [r for r in cpus if "PkgWatt" in r]
    assert len(pkgs) == 2 and summary["PkgWatt"] == pytest.approx(sum(r["PkgWatt"] for r in pkgs))
    d = result.to_dict()
    assert summary["PkgWatt"] == pytest.approx(d["package_j"] / d["sim_time_s"])


def test_busy_threads_sibling_shows_c1_for_the_time_its_sibling_ran(tmp_path):
    """turbostat derives CPU%c1 = 100 - Busy% - the core's c3/c6/c7: an idle thread whose sibling
    runs cannot be in a deeper core state than the core."""
    wl = tmp_path / "spin.toml"
    wl.write_text('[[task]]\ncomm = "spin"\ncpus = [0]\nops = [ { run = "10s" } ]\n')
    rows = govlab.run(platform=SKL, workload=str(wl), duration="200ms").turbostat()
    cpu0, cpu4 = rows[1], rows[2]
    assert (cpu0["CPU"], cpu4["CPU"]) == (0, 4)
    assert cpu0["Busy%"] > 99.0 and cpu4["Busy%"] < 1.0
    assert cpu4["CPU%c1"] > 98.0, "the core never leaves C0 while CPU 0 spins"


def test_show_and_hide(cli):
    args = ("run", "--platform", SKL, "--workload", "periodic:tasks=2", "--duration", "50ms")
    proc = cli(*args, "--show", "Busy%,PkgWatt")
    assert proc.returncode == 0, proc.stderr
    assert list(_read(proc.stdout).columns) == ["Busy%", "PkgWatt"]
    proc = cli(*args, "--show", "PkgWatt")
    lines = proc.stdout.splitlines()
    assert lines[0] == "PkgWatt" and len(lines) == 3, "a row with nothing to print prints no line: summary and CPU 0"
    assert lines[1] == lines[2], "one package: the summary's sum is its figure"
    proc = cli(*args, "--hide", "idle,IPC")
    cols = list(_read(proc.stdout).columns)
    assert "IPC" not in cols and "C1" not in cols and "C1%" not in cols and "CPU%c6" not in cols and "Pkg%pc8" not in cols
    assert "Busy%" in cols and "PkgWatt" in cols
    proc = cli(*args, "--show", "topology,frequency", "--format", "json")
    d = json.loads(proc.stdout)
    assert list(d["turbostat"][0]) == ["Core", "CPU", "Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz"]


def test_unknown_column_is_one_error_line(cli):
    proc = cli("run", "--duration", "10ms", "--show", "Busy%,Wattage")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error:") and "'Wattage'" in lines[0], proc.stderr


def test_interval_prints_turbostats_table_per_interval(cli):
    proc = cli("run", "--platform", SKL, "--workload", "periodic:tasks=2", "--duration", "300ms", "--interval", "100ms")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [i for i, line in enumerate(lines) if line.startswith("Core\tCPU\t")] == [0, 10, 20]


def test_frame_is_numeric_with_the_summary_marked_apart():
    df = govlab.run(platform=BDW, workload="periodic:tasks=3", duration="100ms").turbostat_frame
    assert list(df.columns[:6]) == ["start_s", "end_s", "summary", "Package", "Core", "CPU"]
    assert df["summary"].tolist() == [True] + [False] * 80
    assert str(df["CPU"].dtype) == "Int64" and df["CPU"].isna().tolist() == [True] + [False] * 80
    for col in df.columns[6:]:
        assert df[col].dtype == float, col
    assert df["IPC"].isna().all(), "govlab cannot give IPC: NaN, not a string"
    assert df.loc[~df["summary"], "PkgWatt"].notna().sum() == 2, "package columns on each package's first CPU only"


def test_govlab_summary_and_turbostat_name_the_clock_alike(cli):
    proc = cli("run", "--platform", SKL, "--workload", "periodic:tasks=2", "--duration", "50ms")
    assert "Bzy_MHz" in proc.stdout and "avg MHz" not in proc.stdout


def test_broadwell_uncore_clock_rises_with_core_activity_and_falls_when_idle(tmp_path):
    """UFS per interval (UncMHz): four threads a tenth busy at a low clock,
    then every thread busy at the all-core turbo, then none."""
    wl = tmp_path / "steps.toml"
    wl.write_text(
        '[[task]]\ncomm = "a"\ninstances = 4\nloop = 100\nops = [ { run = "1ms" }, { sleep = "9ms" } ]\n'
        '[[task]]\ncomm = "b"\ninstances = 80\nops = [ { sleep = "1s" }, { run = "1s" }, { sleep = "10s" } ]\n'
    )
    result = govlab.run(platform=BDW, workload=str(wl), cpufreq="schedutil", duration="3s", turbostat_interval="1s")
    unc = [iv["rows"][0]["UncMHz"] for iv in result.turbostat_intervals()]
    assert unc[0] < unc[1], f"more busy cores at a faster clock, a faster uncore: {unc}"
    assert unc[2] < unc[1], f"idle, the uncore slows: {unc}"
    df = result.turbostat_frame
    assert df.loc[df["summary"], "C6"].notna().all(), "per interval, each state's usage"


def test_interval_usage_adds_up_to_the_run():
    result = govlab.run(platform=SKL, workload="periodic:tasks=3", duration="300ms", turbostat_interval="100ms")
    whole = result.turbostat()[0]
    for col in ("C1", "C6", "C8"):
        assert sum(iv["rows"][0][col] for iv in result.turbostat_intervals()) == whole[col], col

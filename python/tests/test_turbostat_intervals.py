"""turbostat per interval (``govlab run --turbostat-interval``, turbostat's ``-i``): the intervals
add up to the run, a change of load shows in the interval it happens, and the option's errors."""

from __future__ import annotations

import json

import pytest

import govlab

BDW = "broadwell-2s-e5-2698v4"


def _busy_then_idle(tmp_path) -> str:
    path = tmp_path / "busy-then-idle.toml"
    path.write_text('[[task]]\ncomm = "w"\nops = [ { run = "1s" }, { sleep = "10s" } ]\n')
    return str(path)


def test_intervals_add_up_to_the_whole_run():
    result = govlab.run(platform=BDW, workload="periodic:tasks=5", duration="530ms", seed=2, turbostat_interval="100ms")
    whole = result.turbostat()[0]
    intervals = result.turbostat_intervals()
    assert [round(iv["end_s"] - iv["start_s"], 9) for iv in intervals] == [0.1] * 5 + [0.03]
    secs = result.sim_time_s
    for col in ("PkgWatt", "RAMWatt"):
        joules = sum(iv["rows"][0][col] * (iv["end_s"] - iv["start_s"]) for iv in intervals)
        assert joules == pytest.approx(whole[col] * secs, rel=1e-9), col
    busy = sum(iv["rows"][0]["Busy%"] * (iv["end_s"] - iv["start_s"]) for iv in intervals)
    assert busy == pytest.approx(whole["Busy%"] * secs, rel=1e-9)
    pc6 = sum(iv["rows"][1]["Pkg%pc6"] * (iv["end_s"] - iv["start_s"]) for iv in intervals)
    assert pc6 == pytest.approx(result.turbostat()[1]["Pkg%pc6"] * secs, rel=1e-9)


def test_a_load_that_stops_shows_in_the_second_interval(tmp_path):
    result = govlab.run(platform="skylake-e3-1240v5", workload=_busy_then_idle(tmp_path), duration="2s", turbostat_interval="1s")
    first, second = (iv["rows"][0] for iv in result.turbostat_intervals())
    assert first["Busy%"] > 10 * second["Busy%"]
    assert second["PkgWatt"] < 0.5 * first["PkgWatt"]
    assert second["Pkg%pc8"] > first["Pkg%pc8"]


def test_the_frame_has_one_block_of_rows_per_interval():
    result = govlab.run(platform="skylake-e3-1240v5", workload="periodic:tasks=2", duration="300ms", turbostat_interval="100ms")
    df = result.turbostat_frame
    assert list(df.columns[:5]) == ["start_s", "end_s", "summary", "Core", "CPU"]
    assert len(df) == 3 * (1 + 8)
    assert sorted(set(df["start_s"])) == pytest.approx([0.0, 0.1, 0.2])
    whole = govlab.run(platform="skylake-e3-1240v5", workload="periodic:tasks=2", duration="300ms").turbostat_frame
    assert len(whole) == 1 + 8 and list(set(whole["end_s"])) == pytest.approx([0.3])


def test_without_the_option_the_result_has_no_intervals():
    result = govlab.run(platform="skylake-e3-1240v5", workload="periodic:tasks=2", duration="100ms")
    assert "intervals" not in result.to_dict()
    assert result.turbostat_intervals() == []


def test_cli_prints_one_table_per_interval_and_json_has_them(cli, tmp_path):
    args = ("run", "--platform", BDW, "--workload", "periodic:tasks=3", "--duration", "300ms", "--turbostat-interval", "100ms")
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    headers = [line for line in proc.stdout.splitlines() if line.split()[:3] == ["Package", "Core", "CPU"]]
    assert len(headers) == 3
    proc = cli(*args, "--format", "json")
    d = json.loads(proc.stdout)
    assert len(d["turbostat_intervals"]) == 3 and len(d["intervals"]) == 3
    assert d["turbostat_intervals"][2]["rows"][0]["CPU"] == "-"
    plot = tmp_path / "ts.html"
    proc = cli(*args, "--plot", str(plot))
    assert proc.returncode == 0, proc.stderr
    page = plot.read_text()
    assert "PkgWatt" in page and "Busy%" in page and "plotly" in page


@pytest.mark.parametrize("value", ["0", "-1s", "soon", "1ns"])
def test_a_bad_interval_is_one_error_line_and_exit_2(cli, value):
    proc = cli("run", "--duration", "1s", "--turbostat-interval", value)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error:") and "turbostat_interval" in lines[0], proc.stderr


def test_plot_needs_intervals(cli, tmp_path):
    proc = cli("run", "--duration", "10ms", "--plot", str(tmp_path / "x.html"))
    assert proc.returncode == 2
    assert "--turbostat-interval" in proc.stderr

"""Bad input on the command line: one clear line on stderr, status 2, nothing on stdout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SHORT = ["--duration", "200ms"]

# (arguments, strings stderr must contain)
BAD_INPUT = {
    "unknown platform": (["--platform", "nosuch-machine"], ["nosuch-machine", "skylake-e3-1240v5"]),
    "unknown workload": (["--workload", "nosuch-load"], ["nosuch-load", "cpu-bound"]),
    "unknown cpufreq governor": (["--cpufreq", "nosuch-gov"], ["nosuch-gov", "performance"]),
    "unknown cpuidle governor": (["--cpuidle", "nosuch-gov"], ["nosuch-gov", "ladder"]),
    "bad tunable value": (["--cpufreq", "userspace:scaling_setspeed=abc"], ["scaling_setspeed", "abc"]),
    "unknown tunable key": (["--cpufreq", "performance:foo=1"], ["foo"]),
    "malformed duration": (["--duration", "3parsecs"], ["3parsecs"]),
    "missing platform file": (["--platform", "/nonexistent.toml"], ["/nonexistent.toml"]),
    "trace in a missing directory": (["--trace", "/nonexistent-dir/x.txt"], ["/nonexistent-dir/x.txt"]),
    # A kernel older than the platform's drivers (issue 41: the file's min_kernel).
    "kernel before intel_idle's _CST states": (
        ["--platform", "i5-10600k", "--kernel", "5.2"],
        ["platform i5-10600k needs kernel 5.6 or later, not 5.2", "18734958e9bf"],
    ),
    "kernel before intel_idle's Alder Lake table": (
        ["--platform", "i9-12900k", "--kernel", "5.9"],
        ["platform i9-12900k needs kernel 5.19 or later, not 5.9", "adl_cstates"],
    ),
    "kernel before the phone's": (
        ["--platform", "gs101", "--kernel", "4.19"],
        ["platform gs101 needs kernel 5.10 or later, not 4.19"],
    ),
    # amd-pstate's modes by era: passive v5.17, active v6.3, guided v6.4.
    "amd-pstate before the driver": (
        ["--platform", "epyc-7702-2s:amd_pstate=passive", "--kernel", "5.15"],
        ["amd_pstate=passive needs kernel 5.17 or later, not 5.15", "ec437d71db77"],
    ),
    "amd-pstate active mode before EPP": (
        ["--platform", "epyc-7702-2s:amd_pstate=active", "--kernel", "6.2"],
        ["amd_pstate=active needs kernel 6.3 or later, not 6.2", "ffa5096a7c33"],
    ),
    "amd-pstate guided mode before it": (
        ["--platform", "epyc-7702-2s:amd_pstate=guided", "--kernel", "6.3"],
        ["amd_pstate=guided needs kernel 6.4 or later, not 6.3", "2dd6d0ebf740"],
    ),
    "amd-pstate on an Intel part": (
        ["--platform", "skylake-e3-1240v5:amd_pstate=passive"],
        ["amd_pstate=passive", "no CPPC levels"],
    ),
    "kernel between two modelled ones, before the driver": (
        ["--platform", "i5-10600k", "--kernel", "5.5"],
        ["needs kernel 5.6 or later, not 5.5"],
    ),
}


def assert_clean_error(proc, *must_contain: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("govlab: error:"), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == "", "nothing may reach stdout on error"
    for text in must_contain:
        assert text in proc.stderr, f"{text!r} not in {proc.stderr!r}"


@pytest.mark.parametrize("case", list(BAD_INPUT), ids=list(BAD_INPUT))
def test_bad_input_is_one_clear_line(cli, case):
    args, must_contain = BAD_INPUT[case]
    proc = cli("run", *args, *(SHORT if "--duration" not in args else []))
    assert_clean_error(proc, *must_contain)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_trace_in_missing_directory_creates_nothing(cli):
    proc = cli("run", *SHORT, "--trace", "/nonexistent-dir/x.txt")
    assert_clean_error(proc)
    assert not Path("/nonexistent-dir").exists()


def test_bad_input_writes_no_trace(cli, tmp_path):
    trace = tmp_path / "t.txt"
    proc = cli("run", *SHORT, "--cpufreq", "performance:foo=1", "--trace", str(trace))
    assert_clean_error(proc, "foo")
    assert not trace.exists() or trace.stat().st_size == 0


def test_malformed_platform_file_names_file_and_line(cli, tmp_path):
    bad = tmp_path / "broken-platform.toml"
    bad.write_text('name = "broken"\ndescription = "no closing quote\n[[cpu_types]]\n')
    proc = cli("run", "--platform", str(bad), *SHORT)
    assert_clean_error(proc, "broken-platform.toml")
    assert re.search(r"broken-platform\.toml:\d+|line \d+", proc.stderr), proc.stderr


def test_unreadable_platform_file_is_permission_error(cli, tmp_path):
    import os

    if os.geteuid() == 0:
        pytest.skip("root can read any file")
    locked = tmp_path / "locked.toml"
    locked.write_text('name = "locked"\n')
    locked.chmod(0)
    proc = cli("run", "--platform", str(locked), *SHORT)
    assert_clean_error(proc, "locked.toml")


@pytest.mark.parametrize(
    "args",
    [["frobnicate"], ["run", "--bogus"], ["list", "nothing"], ["run", "--seed", "one"], []],
    ids=["unknown command", "unknown option", "unknown list kind", "non-integer seed", "no command"],
)
def test_usage_errors_are_argparse_errors(cli, args):
    proc = cli(*args)
    assert proc.returncode == 2
    assert "usage: govlab" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_workload_file_errors_name_file_and_line(cli, tmp_path):
    bad = tmp_path / "bad-workload.toml"
    bad.write_text('[[task]]\ncomm = "t"\nops = [ { run = "1ms" }, { jump = "x" } ]\n')
    proc = cli("run", "--workload", str(bad), *SHORT)
    assert_clean_error(proc, "bad-workload.toml")
    assert "jump" in proc.stderr and re.search(r"bad-workload\.toml:\d+", proc.stderr), proc.stderr


def test_program_that_never_takes_time_is_an_error_not_a_hang(cli, tmp_path):
    spin = tmp_path / "spin.toml"
    spin.write_text('[[task]]\ncomm = "spinner"\nops = [ { loop = 100000000, ops = [ { count = "x" } ] } ]\n')
    trace = tmp_path / "spin-trace.txt"
    proc = cli("run", "--workload", str(spin), "--trace", str(trace), *SHORT)
    assert_clean_error(proc, "spinner")
    assert "without taking time" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert not trace.exists(), "no half-written trace is left behind"

"""Each governor as in the run's kernel version, patches as tunables on top (issue 18)."""

from __future__ import annotations

import json

import pytest

import govlab

RUN = ["run", "--workload", "periodic:tasks=1,run_us=500,period_us=4000", "--duration", "100ms"]


@pytest.mark.parametrize(
    "kernel, governor, words",
    [("4.19", "teo", ["teo", "4.19", "5.1", "ladder, menu, oracle"]),
     ("5.2", "haltpoll", ["haltpoll", "5.2", "5.4", "ladder, menu, teo"]),
     ("4.19", "wtteo", ["wtteo", "patches teo", "5.1"])],
)
def test_idle_governor_missing_from_the_version_is_refused(cli, kernel, governor, words):
    r = cli(*RUN, "--kernel", kernel, "--cpuidle", governor)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error:"), r.stderr
    for w in words:
        assert w in lines[0], r.stderr


def test_schedutil_is_refused_before_4_7(cli):
    r = cli(*RUN, "--kernel", "3.15", "--platform", "power8", "--cpufreq", "schedutil")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "schedutil" in lines[0] and "4.7" in lines[0] and "ondemand" in lines[0], r.stderr


def test_generic_governor_on_intel_pstate_is_refused_before_4_10(cli):
    r = cli(*RUN, "--kernel", "4.8", "--cpufreq", "ondemand")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "4.10" in r.stderr and "passive" in r.stderr, r.stderr


def test_passive_mode_runs_without_hwp_before_5_9(cli):
    old = json.loads(cli(*RUN, "--kernel", "5.7", "--cpufreq", "schedutil", "--format", "json").stdout)
    new = json.loads(cli(*RUN, "--kernel", "5.9", "--cpufreq", "schedutil", "--format", "json").stdout)
    assert old["driver"] == "intel_cpufreq (passive)"
    assert new["driver"] == "intel_cpufreq (passive, HWP)"


def test_show_config_gives_the_versions_defaults(cli):
    def tunables(kernel: str, gov: str, platform: str = "power8") -> dict:
        r = cli("run", "--kernel", kernel, "--platform", platform, "--cpufreq", gov, "--show-config")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["cpufreq"]["tunables"]

    # ondemand on POWER8: 3.15's 10 ms MICRO_FREQUENCY_MIN_SAMPLE_RATE, copy_prev_load not yet merged;
    # 6.8's two ticks at HZ=100.
    assert tunables("3.15", "ondemand")["sampling_rate"] == "10000"
    assert tunables("3.15", "ondemand")["copy_prev_load"] == "off"
    assert tunables("3.15", "ondemand:copy_prev_load=1")["copy_prev_load"] == "on"
    assert tunables("6.8", "ondemand")["sampling_rate"] == "20000"
    assert tunables("6.8", "ondemand")["copy_prev_load"] == "on"
    assert tunables("4.8", "schedutil")["iowait_boost"] == "off"
    assert tunables("4.16", "schedutil")["iowait_boost"] == "max"
    assert tunables("6.8", "schedutil")["iowait_boost"] == "gradual"


def test_list_governors_for_a_kernel_shows_differences_and_patches(cli):
    r = cli("list", "governors", "--kernel", "3.15")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "ondemand_formula (v3.17" in out
    assert "copy_prev_load = off" in out
    assert "copy_prev_load=on is a patch on top of 3.15" in out
    assert "not in 3.15: teo arrived in v5.1" in out
    entries = govlab.list_governors(kernel="4.8")
    ondemand = next(e for e in entries if e["name"] == "ondemand")
    cpl = next(p for p in ondemand["params"] if p["name"] == "copy_prev_load")
    assert cpl["default"] == "on" and cpl["patch"].startswith("mainline in 4.8")
    schedutil = next(e for e in govlab.list_governors(kernel="6.8") if e["name"] == "schedutil")
    boost = next(p for p in schedutil["params"] if p["name"] == "iowait_boost")
    assert "patch on top of 6.8" in boost["patch"] and "not merged" in boost["patch"]
    # Without a kernel the listing is unchanged: no per-version fields.
    assert all("kernel" not in e and "differs" not in e for e in govlab.list_governors())


def test_list_kernel_applies_to_governors_only(cli):
    r = cli("list", "kernels", "--kernel", "3.15")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "governors" in r.stderr, r.stderr

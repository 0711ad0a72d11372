"""Issue 16: kernel names, the driver in every header, the platform's kernel's
defaults, and errors as promised (CLI through the real ``govlab`` command, the
API through ``import govlab``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import govlab
import govlab.api

REPO = Path(__file__).resolve().parents[2]
PERIODIC = "periodic:tasks=4,run_us=2000,period_us=10000"


def one_error_line(proc, *parts: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error: "), proc.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    assert "Traceback" not in proc.stderr and "surrogate" not in proc.stderr
    return lines[0]


# --- kernel names --------------------------------------------------------------------


def test_powersave_on_active_intel_pstate_is_its_own_policy(cli):
    """`--cpufreq powersave` on skylake is intel_pstate's powersave (HWP), not
    the generic governor pinned at the lowest frequency."""
    args = ["run", "--workload", PERIODIC, "--duration", "500ms", "--format", "json"]
    by_name = json.loads(cli(*args, "--cpufreq", "powersave").stdout)
    own = json.loads(cli(*args, "--cpufreq", "intel_pstate:policy=powersave").stdout)
    generic = json.loads(cli(*args, "--cpufreq", "powersave", "--platform", "skylake-e3-1240v5:intel_pstate=passive").stdout)
    assert by_name["driver"] == own["driver"] == "intel_pstate (active, HWP)"
    assert generic["driver"] == "intel_cpufreq (passive, HWP)"
    assert by_name["metrics"] == own["metrics"] and by_name["energy_j"] == own["energy_j"]
    # the generic powersave runs the 2 ms bursts at 800 MHz: responses far beyond
    assert generic["metrics"]["response_p99_us"] > 1.5 * by_name["metrics"]["response_p99_us"]


@pytest.mark.parametrize(
    "platform, cpufreq, driver",
    [
        ("skylake-e3-1240v5", "performance", "intel_pstate (active, HWP)"),
        ("skylake-e3-1240v5", "schedutil", "intel_cpufreq (passive, HWP)"),
        ("skylake-e3-1240v5:hwp=off", "ondemand", "intel_cpufreq (passive)"),
        ("broadwell-2s-e5-2698v4", "powersave", "intel_cpufreq (passive)"),
        ("broadwell-2s-e5-2698v4:intel_pstate=active", "powersave", "intel_pstate (active)"),
        ("power8", "powersave", "powernv"),
        ("juno-r0", "powersave", "cpufreq-dt"),
    ],
)
def test_every_header_names_the_driver_and_mode(cli, platform, cpufreq, driver):
    proc = cli("run", "--platform", platform, "--cpufreq", cpufreq, "--workload", "idle", "--duration", "50ms")
    assert proc.returncode == 0, proc.stderr
    assert f"| driver: {driver} |" in proc.stdout.splitlines()[0], proc.stdout


def test_policy_setting_on_a_policy_name_is_refused(cli):
    one_error_line(cli("run", "--cpufreq", "powersave:policy=performance"), "intel_pstate:policy=")


# --- defaults --------------------------------------------------------------------------


def test_defaults_are_the_platforms_kernels(cli):
    assert govlab.api.DEFAULT_CPUFREQ is None and govlab.api.DEFAULT_CPUIDLE == "menu"
    assert govlab.defaults()["cpufreq"] == "powersave"
    assert govlab.defaults("power8")["cpufreq"] == "ondemand"
    assert govlab.defaults("juno-r0")["cpufreq"] == "schedutil"
    r = govlab.run(platform="power8", workload="idle", duration="50ms").to_dict()
    assert (r["cpufreq"], r["cpuidle"], r["driver"]) == ("ondemand", "menu", "powernv")
    helptext = cli("run", "--help").stdout
    assert "default: menu" in re.sub(r"\s+", " ", helptext)
    assert "ondemand on powernv" in re.sub(r"\s+", " ", helptext)
    listing = cli("list", "platforms").stdout
    assert "default_cpufreq: schedutil" in listing and "default_cpufreq: powersave" in listing
    assert "default_cpuidle: menu" in listing


def test_without_hwp_intel_pstate_boots_passive_from_v5_8():
    # intel_pstate_init, 33aa46f252c7 (v5.8): "Without HWP start in the passive mode".
    assert govlab.defaults("broadwell-2s-e5-2698v4")["cpufreq"] == "schedutil"
    assert govlab.defaults("broadwell-2s-e5-2698v4", kernel="5.7")["cpufreq"] == "powersave"
    assert govlab.defaults("skylake-e3-1240v5", kernel="6.8")["cpufreq"] == "powersave"
    r = govlab.run(platform="broadwell-2s-e5-2698v4", workload="idle", duration="50ms").to_dict()
    assert (r["cpufreq"], r["driver"]) == ("schedutil", "intel_cpufreq (passive)")
    r = govlab.run(platform="broadwell-2s-e5-2698v4", workload="idle", duration="50ms", kernel="5.7").to_dict()
    assert (r["cpufreq"], r["driver"]) == ("powersave", "intel_pstate (active)")
    # ... so on a v5.8+ kernel `powersave` names the generic governor there, and before it intel_pstate's own
    r = govlab.run(platform="broadwell-2s-e5-2698v4", workload="idle", cpufreq="powersave", duration="50ms").to_dict()
    assert (r["cpufreq"], r["driver"]) == ("powersave", "intel_cpufreq (passive)")
    r = govlab.run(platform="broadwell-2s-e5-2698v4", workload="idle", cpufreq="powersave", duration="50ms", kernel="5.7").to_dict()
    assert r["driver"] == "intel_pstate (active)"


# --- errors as promised --------------------------------------------------------------


def test_duplicate_spec_keys_are_an_error(cli):
    one_error_line(cli("run", "--cpufreq", "ondemand:up_threshold=50,up_threshold=60"), "up_threshold is given twice")
    with pytest.raises(govlab.InvalidValueError, match="given twice"):
        govlab.run(workload="periodic:tasks=1,tasks=2", duration="10ms")


@pytest.mark.parametrize("value", ["-1s", "-5", "0s"])
def test_duration_must_be_positive(cli, value):
    one_error_line(cli("run", "--duration", value), "duration", "must be positive")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"duration": float("nan")}, "duration"),
        ({"duration": -1}, "duration"),
        ({"duration": True}, "duration"),
        ({"seed": 1.5}, "seed"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"seed": "1"}, "seed"),
        ({"workload": 42}, "workload"),
        ({"platform": ["a", "b", "c"]}, "platform"),
        ({"cpuidle": {"k": 1}}, "cpuidle"),
    ],
)
def test_api_raises_govlab_errors_naming_the_argument(kwargs, name):
    with pytest.raises(govlab.GovlabError) as e:
        govlab.run(**{"workload": "idle", "duration": "10ms", **kwargs})
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith(f"{name}:"), str(e.value)
    assert "serde" not in str(e.value) and "expected u64" not in str(e.value)


def test_non_utf8_file_names(cli, tmp_path):
    bad = str(tmp_path) + "/\udcff.toml"
    one_error_line(cli("run", "--workload", bad), "workload", "UTF-8", "\\xff")
    one_error_line(cli("run", "--platform", bad), "platform", "UTF-8")
    # a trace file name only goes to the operating system: it works
    trace = str(tmp_path) + "/\udcff.trace"
    proc = cli("run", "--workload", "idle", "--duration", "20ms", "--trace", trace)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "\udcff.trace").exists()


def test_platform_file_missing_a_required_field_names_file_and_field(cli, tmp_path):
    text = (REPO / "data/platforms/skylake-e3-1240v5.toml").read_text()
    cut = re.sub(r"\nturbo_max_khz = \[[^\]]*\][^\n]*", "", text, count=1)
    assert cut != text
    path = tmp_path / "noturbo.toml"
    path.write_text(cut)
    line = one_error_line(cli("run", "--platform", str(path), "--duration", "10ms"), "noturbo.toml", "turbo_max_khz", "missing")
    assert re.search(r"noturbo\.toml:\d+", line), line
    path.write_text(re.sub(r"\nhwp = true[^\n]*", "", text, count=1))
    one_error_line(cli("run", "--platform", str(path), "--duration", "10ms"), "hwp", "intel_pstate")

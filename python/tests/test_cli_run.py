"""`govlab run` and `govlab list` when the input is good."""

from __future__ import annotations

import json
import re

import pytest

import govlab

# trace-cmd report: "comm-pid [cpu] secs.usecs: event: fields", with an
# optional flags column ("d..2.") as in the kernel's own trace file.
TRACE_LINE = re.compile(
    r"^\s*(?P<comm>.+)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:[\w.]{4,5}\s+)?"
    r"(?P<ts>\d+\.\d{6}):\s+(?P<event>\w+):\s*(?P<fields>.*)$"
)


def run_args(periodic: str, short: str, *extra: str) -> list[str]:
    return ["run", "--workload", periodic, "--duration", short, "--seed", "3", *extra]


def test_json_output_matches_api(cli, periodic, short):
    proc = cli(*run_args(periodic, short, "--format", "json"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    from_cli = json.loads(proc.stdout)
    from_api = govlab.run(workload=periodic, duration=short, seed=3).to_dict()
    assert from_cli == from_api
    assert list(from_cli) == list(from_api), "keys keep the engine's order"


def test_text_output(cli, periodic, short, skylake_cpus):
    proc = cli(*run_args(periodic, short))
    assert proc.returncode == 0, proc.stderr
    result = govlab.run(workload=periodic, duration=short, seed=3)
    out = proc.stdout
    header = out.splitlines()[0]
    # The defaults are the platform's kernel's: intel_pstate's own powersave, menu.
    for text in ("skylake-e3-1240v5", "periodic", "cpufreq powersave", "cpuidle menu", "driver: intel_pstate (active, HWP)", "seed 3"):
        assert text in header, (text, header)
    pm = result.primary_metric
    assert re.search(rf"{re.escape(pm['name'])} = \S+( \S+)?  \({pm['better']} is better\)", out), out
    for name in result.metrics:
        assert name in out, name
    assert re.search(r"^energy\s+\d+\.\d{3} J$", out, re.M), out
    assert re.search(r"^average power\s+\d+\.\d{3} W$", out, re.M), out
    rows = re.findall(r"^\s*(\d+)\s+\d+\.\d%\s+(?:\d+|-)\s+\d+", out, re.M)
    assert [int(cpu) for cpu in rows] == list(range(skylake_cpus)), out
    states = {s["name"] for c in result.to_dict()["cpus"] for s in c["idle_states"]}
    for state in states:
        assert f"{state} usage/time" in out


def test_list_governors_shows_tunables(cli):
    proc = cli("list", "governors")
    assert proc.returncode == 0, proc.stderr
    names = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert {"performance", "powersave", "userspace", "ladder"} <= names, proc.stdout
    setspeed = [line for line in proc.stdout.splitlines() if "scaling_setspeed" in line]
    assert setspeed, proc.stdout
    assert setspeed[0].startswith("    "), "tunables are indented under their governor"


def test_list_platforms_and_workloads(cli):
    platforms = cli("list", "platforms")
    workloads = cli("list", "workloads")
    assert platforms.returncode == workloads.returncode == 0
    assert re.search(r"^skylake-e3-1240v5\s+\S", platforms.stdout, re.M), platforms.stdout
    assert re.search(r"^periodic\s+\S", workloads.stdout, re.M), workloads.stdout
    assert re.search(r"^\s+tasks = \S+", workloads.stdout, re.M), "parameters show their defaults"


def test_arm_platforms_are_listed_and_run(cli, short):
    platforms = cli("list", "platforms").stdout
    for name in ("juno-r0", "juno-r2", "hikey960", "sd835"):
        assert re.search(rf"^{name}\s+\S", platforms, re.M), platforms
        proc = cli("run", "--platform", name, "--workload", "periodic:tasks=3", "--cpufreq", "schedutil",
                   "--cpuidle", "menu", "--duration", short, "--format", "json")
        assert proc.returncode == 0, proc.stderr
        assert len(json.loads(proc.stdout)["cpus"]) == (6 if name.startswith("juno") else 8)


def test_show_config_does_not_run(cli, short, tmp_path):
    trace = tmp_path / "never.txt"
    proc = cli("run", "--cpufreq", "userspace", "--duration", short, "--show-config", "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)
    assert config, "the resolved configuration is not empty"
    assert "scaling_setspeed" in proc.stdout
    assert not trace.exists(), "--show-config must not run the simulation"


def test_show_config_rejects_bad_input(cli):
    proc = cli("run", "--cpufreq", "performance:foo=1", "--show-config")
    assert proc.returncode == 2
    assert proc.stderr.startswith("govlab: error:") and "foo" in proc.stderr
    assert proc.stdout == ""


def test_version(cli):
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"govlab {govlab.__version__}"


@pytest.mark.slow
def test_trace_is_trace_cmd_text(cli, periodic, short, tmp_path):
    trace = tmp_path / "run.txt"
    proc = cli(*run_args(periodic, short, "--cpufreq", "powersave", "--trace", str(trace)))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in trace.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    matched = [m for m in map(TRACE_LINE.match, lines) if m]
    assert len(matched) >= 0.99 * len(lines), [ln for ln in lines if not TRACE_LINE.match(ln)][:5]
    events = {m["event"] for m in matched}
    assert {"sched_switch", "cpu_frequency", "cpu_idle"} <= events, events
    stamps = [float(m["ts"]) for m in matched]
    assert stamps == sorted(stamps), "timestamps must not go backwards"
    assert stamps[-1] <= 0.5 + 1e-6
    assert all(int(m["cpu"]) < 8 for m in matched)


@pytest.mark.slow
def test_tracing_does_not_change_the_result(cli, periodic, short, tmp_path):
    plain = cli(*run_args(periodic, short, "--format", "json"))
    traced = cli(*run_args(periodic, short, "--format", "json", "--trace", str(tmp_path / "t.txt")))
    assert plain.returncode == traced.returncode == 0
    assert plain.stdout == traced.stdout


def test_every_cpuidle_governor_runs_and_is_listed(cli, periodic, short):
    listed = cli("list", "governors")
    assert listed.returncode == 0, listed.stderr
    names = {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
    for gov in ("ladder", "menu", "teo", "haltpoll", "wtteo", "oracle"):
        assert gov in names, listed.stdout
        proc = cli(*run_args(periodic, short, "--cpuidle", gov, "--format", "json"))
        assert proc.returncode == 0, (gov, proc.stderr)
        for cpu in json.loads(proc.stdout)["cpus"]:
            acc = cpu["idle_accuracy"]
            assert {"samples", "correct", "too_deep", "too_shallow"} <= set(acc), (gov, acc)
            if gov == "oracle":
                assert acc["correct"] == acc["samples"], acc


def test_rk3399_fio_engines_and_devices(cli, short):
    """Issue 24: the rk3399 fio command runs; unknown devices and engines are refused with the choices."""
    proc = cli("run", "--platform", "rk3399", "--workload",
               "fio:device=nvme,ioengine=psync,iodepth=1,numjobs=1,rw=randread",
               "--cpufreq", "schedutil", "--cpuidle", "menu", "--duration", short, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert len(out["cpus"]) == 6
    for spec, choices in (("fio:device=floppy", "nvme, emmc, sdcard"), ("fio:ioengine=aio", "psync, libaio, io_uring"),
                          ("dbench:device=floppy", "nvme, emmc, sdcard")):
        proc = cli("run", "--platform", "rk3399", "--workload", spec, "--duration", short)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("govlab: error:") and choices in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


# Issue 41's machines: each runs under the governors its kernel boots with
# and under schedutil, performance and powersave, from its drivers' first
# kernel (the file's min_kernel; 3.15, the oldest modelled, for i7-2600k) to
# the newest modelled. schedutil itself exists from 4.7: before, it is refused.
NEW_PLATFORMS = {
    # name: (default cpufreq in the 6.8 header, CPUs, kernels to run)
    "i7-2600k": ("cpufreq schedutil", 8, ("3.15", "5.7", "6.8")),
    "i5-10600k": ("cpufreq powersave", 12, ("5.6", "6.8")),
    "gs101": ("cpufreq schedutil", 8, ("5.10", "6.8")),
    # Intel hybrid: 8 P-cores x 2 threads + 8 E-cores; 6.12 and 6.18 are the
    # versions with hybrid capacity scaling (off here: SMT is on).
    "i9-12900k": ("cpufreq powersave", 24, ("5.19", "6.8", "6.12", "6.18")),
}


@pytest.mark.parametrize("platform", list(NEW_PLATFORMS))
@pytest.mark.parametrize("cpufreq", [None, "schedutil", "performance", "powersave"])
def test_new_platforms_run_under_every_common_governor(cli, periodic, platform, cpufreq):
    default_text, nr_cpus, kernels = NEW_PLATFORMS[platform]
    for kernel in kernels:
        args = ["--platform", platform, "--kernel", kernel] + (["--cpufreq", cpufreq] if cpufreq else [])
        proc = cli(*run_args(periodic, "200ms", *args, "--format", "json"))
        if cpufreq == "schedutil" and kernel == "3.15":
            assert proc.returncode == 2 and "schedutil" in proc.stderr, proc.stderr
            continue
        assert proc.returncode == 0, (kernel, proc.stderr)
        out = json.loads(proc.stdout)
        assert out["platform"].startswith(platform), out["platform"]
        assert len(out["cpus"]) == nr_cpus
        assert out["energy_j"] > 0
    if cpufreq is None:
        proc = cli(*run_args(periodic, "200ms", "--platform", platform))
        assert proc.returncode == 0, proc.stderr
        assert default_text in proc.stdout.splitlines()[0], proc.stdout.splitlines()[0]


# amd-pstate on the EPYC: each mode (the kernel's amd_pstate=) from the
# release that brought it, under the governors its kernel boots and the
# three common ones; active mode runs its own policies only.
AMD_MODES = {
    # mode: (first kernel, header text of the default governor, driver text)
    "passive": ("5.17", "cpufreq schedutil", "amd-pstate (passive)"),
    "guided": ("6.4", "cpufreq schedutil", "amd-pstate (guided)"),
    "active": ("6.3", "cpufreq performance", "amd-pstate-epp (active)"),
}


@pytest.mark.parametrize("mode", list(AMD_MODES))
@pytest.mark.parametrize("cpufreq", [None, "schedutil", "performance", "powersave"])
def test_amd_pstate_modes_run(cli, periodic, mode, cpufreq):
    first, default_text, driver = AMD_MODES[mode]
    platform = f"epyc-7702-2s:amd_pstate={mode}"
    for kernel in (first, "6.8"):
        args = ["--platform", platform, "--kernel", kernel] + (["--cpufreq", cpufreq] if cpufreq else [])
        proc = cli(*run_args(periodic, "100ms", *args))
        if mode == "active" and cpufreq == "schedutil":
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.startswith("govlab: error:") and "amd_pstate=passive or guided" in proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            continue
        assert proc.returncode == 0, (kernel, proc.stderr)
        header = proc.stdout.splitlines()[0]
        assert f"driver: {driver}" in header, header
        if cpufreq is None:
            assert default_text in header, header

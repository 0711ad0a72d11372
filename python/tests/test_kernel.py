"""`--kernel VERSION[:option=value,...]`: versions, options, experiment files (issue 17)."""

from __future__ import annotations

import json

import pytest

import govlab
from govlab import experiment, plan

RUN = ["run", "--workload", "periodic:tasks=2,run_us=500,period_us=4000", "--duration", "200ms", "--format", "json"]


@pytest.mark.parametrize("version", ["3.14", "6.19", "linux", "5"])
def test_unknown_version_is_refused_with_the_choices(cli, version):
    r = cli(*RUN, "--kernel", version)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error:"), r.stderr
    assert version in lines[0] and "3.15" in lines[0] and "6.18" in lines[0], r.stderr


@pytest.mark.parametrize(
    "spec, words",
    [("6.8:tickless=on", ["tickless", "idle_tick", "freq_invariance", "housekeeping"]),
     ("4.16:idle_tick=sometimes", ["idle_tick", "governor or stopped"]),
     ("5.7:freq_invariance=fast", ["freq_invariance", "Nc"])],
)
def test_invalid_option_is_refused_with_the_choices(cli, spec, words):
    r = cli(*RUN, "--kernel", spec)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def test_in_between_version_resolves_and_says_so(cli):
    r = cli(*RUN, "--kernel", "5.4")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kernel"] == "5.4" and d["kernel_semantics"] == "5.2"
    text = cli(*RUN[:-2], "--kernel", "5.4").stdout
    assert "kernel 5.4 (5.2 semantics)" in text


def test_default_kernel_is_recorded():
    r = govlab.run(workload="periodic:tasks=1", duration="100ms")
    assert r.to_dict()["kernel"] == "6.8"
    assert "kernel_semantics" not in r.to_dict()


def test_show_config_prints_the_resolved_kernel(cli):
    r = cli("run", "--kernel", "4.16:hz=1000", "--platform", "power8", "--show-config")
    k = json.loads(r.stdout)["kernel"]
    assert k["semantics"] == "4.16" and k["idle_tick"] == "stopped" and k["hz"] == 1000
    assert k["freq_invariance"] == "off"
    assert json.loads(r.stdout)["platform"]["hz"] == 1000


def _idle_run(**kw):
    return govlab.run(platform=kw.pop("platform", "power8"),
                      workload="sleeping-ebizzy:threads=1,cpu=8,interval_us=100000,util=40",
                      cpufreq="ondemand", cpuidle="menu", duration="500ms", **kw).to_dict()


def _same_run(a, b):
    drop = ("platform", "kernel", "kernel_semantics")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_idle_tick_follows_the_version_and_matches_the_platform_option():
    # Each version is compared with itself: other eras (ondemand's, for one)
    # also differ between 4.16 and 6.8 and may move a frequency transition.
    stopped = _idle_run(platform="power8:idle_tick=stopped")
    governor = _idle_run()
    assert not _same_run(stopped, governor)
    assert _same_run(_idle_run(kernel="6.8:idle_tick=stopped"), stopped)
    assert _same_run(_idle_run(kernel="6.8:idle_tick=governor"), governor)
    old = _idle_run(kernel="4.16")
    assert _same_run(old, _idle_run(kernel="4.16:idle_tick=stopped"))
    assert not _same_run(old, _idle_run(kernel="4.16:idle_tick=governor"))
    new = _idle_run(kernel="4.19")
    assert _same_run(new, _idle_run(kernel="4.19:idle_tick=governor"))
    assert not _same_run(new, _idle_run(kernel="4.19:idle_tick=stopped"))
    # the kernel's option wins over the platform's deprecated one
    assert _same_run(_idle_run(platform="power8:idle_tick=stopped", kernel="4.16:idle_tick=governor"),
                     _idle_run(kernel="4.16:idle_tick=governor"))


def test_config_kernel_overrides_the_experiments(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(
        '[experiment]\nworkload = "periodic:tasks=1"\nduration = "100ms"\nkernel = "4.16"\n'
        '[[config]]\nname = "old"\ncpufreq = "performance"\n'
        '[[config]]\nname = "new"\ncpufreq = "performance"\nkernel = "6.8:idle_tick=stopped"\n'
    )
    e = experiment.load(path)
    assert [c.kernel for c in e.configs] == ["4.16", "6.8:idle_tick=stopped"]
    runs = plan.runs(e)
    assert runs[0].kwargs["kernel"] == "4.16" and runs[1].kwargs["kernel"] == "6.8:idle_tick=stopped"
    assert runs[0].key != runs[1].key


def test_experiment_kernel_error_names_the_key(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(
        '[experiment]\nworkload = "periodic:tasks=1"\n'
        '[[config]]\nname = "a"\ncpufreq = "performance"\nkernel = "2.6"\n'
    )
    with pytest.raises(experiment.ExperimentError) as e:
        experiment.load(path)
    assert "config[0].kernel" in str(e.value) or "config" in str(e.value) and "kernel" in str(e.value)


def test_list_kernels(cli):
    out = cli("list", "kernels").stdout
    assert "6.8 (default)" in out and "554c8aa8ecad" in out
    assert "147f3efaa241" in out and "e13aa799c2a6" in out and "6.18\n    (the newest modelled)" in out
    # issue 40's eras: delayed dequeue (6.12), teo's v6.14 rework, menu's 6.15-6.18 changes
    for commit in ("152e11f6df29", "13ed5c4a6d9c", "8de7606f0fe2", "779b1a1cb13a", "db86f55bf81a", "85975daeaa4d"):
        assert commit in out, commit
    # every era left "not modelled" says why in its own line
    for line in out.splitlines():
        if line.rstrip().endswith("[not modelled]"):
            assert "not modelled:" in line or "(not modelled)" in line, line
    assert [k["version"] for k in govlab.list_kernels()] == [
        "3.15", "4.8", "4.16", "4.19", "5.2", "5.7", "5.9", "6.5", "6.6", "6.8", "6.9", "6.12", "6.18",
    ]


def test_newer_versions_run_and_say_so(cli):
    r = cli(*RUN, "--kernel", "6.14")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kernel"] == "6.14" and d["kernel_semantics"] == "6.12"


@pytest.mark.parametrize("version, disabled", [("5.2", set()), ("5.7", {"C3"})])
def test_show_config_lists_the_idle_states_and_which_are_disabled(cli, version, disabled):
    """The Broadwell-EP's C3 is outside its BIOS's _CST: intel_idle disables
    it by default from v5.6 (e6d4f08a6776), and `--show-config` says so."""
    r = cli("run", "--platform", "broadwell-2s-e5-2698v4", "--kernel", version, "--show-config")
    assert r.returncode == 0, r.stderr
    (idle,) = json.loads(r.stdout)["platform"]["idle_states"]
    assert idle["cpu_type"] == "broadwell-ep"
    assert idle["states"] == ["POLL", "C1", "C1E", "C3", "C6"]
    assert set(idle.get("disabled", {})) == disabled
    assert all("_CST" in why and "e6d4f08a6776" in why for why in idle.get("disabled", {}).values())

"""cpufreq policies as the driver lays them out, and what a trace says of them (issue 44)."""

from __future__ import annotations

import json
import re
from collections import defaultdict

FREQ = re.compile(r"\s(?P<ts>\d+\.\d+): cpu_frequency:\s+state=(?P<khz>\d+) cpu_id=(?P<cpu>\d+)")


def policies(cli, *args: str) -> list[dict]:
    proc = cli("run", *args, "--show-config")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["platform"]["policies"]


def test_show_config_lists_a_policy_per_logical_cpu_on_skylake(cli):
    shown = policies(cli, "--platform", "skylake-e3-1240v5", "--cpufreq", "schedutil")
    assert [p["cpus"] for p in shown] == [[cpu] for cpu in range(8)]
    assert {p["clock_domain"] for p in shown} == {0}, "eight policies on the package's one clock"


def test_cpufreq_dt_keeps_a_policy_per_cluster(cli):
    shown = policies(cli, "--platform", "juno-r0", "--cpufreq", "schedutil")
    assert len(shown) == 2 and sorted(len(p["cpus"]) for p in shown) == [2, 4]
    assert len({p["clock_domain"] for p in shown}) == 2


def test_skylake_trace_has_cpu_frequency_for_single_cpus(cli, tmp_path):
    trace = tmp_path / "sky.txt"
    proc = cli("run", "--platform", "skylake-e3-1240v5", "--cpufreq", "schedutil",
               "--workload", "periodic:tasks=4,run_us=2000,period_us=10000", "--duration", "300ms",
               "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    at = defaultdict(set)
    for m in FREQ.finditer(trace.read_text()):
        if float(m["ts"]) > 0:
            at[m["ts"]].add(int(m["cpu"]))
    assert at, "no cpu_frequency after the boot markers"
    sizes = [len(cpus) for cpus in at.values()]
    assert max(sizes) < 8, "events come per policy, never for the whole package at once"
    assert sizes.count(1) > len(sizes) // 2, sizes
    assert len(set().union(*at.values())) > 1, "more than one CPU asked"

"""The workload models from the command line: listed with their parameters,
defaults and metric; rt-app files run, and bad ones fail in one clear line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = ["kernbench", "iozone", "ycsb-redis", "fio", "netperf", "idle", "rtapp", "hackbench", "pgbench"]


@pytest.fixture(scope="module")
def listing(cli) -> str:
    proc = cli("list", "workloads")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", MODELS)
def test_each_model_is_listed_with_metric_and_defaults(listing, name):
    block = re.search(rf"^{re.escape(name)}\s+\S.*?(?=^\S|\Z)", listing, re.M | re.S)
    assert block, listing
    assert re.search(r"^\s+metric: \S+ \(.*(lower|higher)", block.group(0), re.M), block.group(0)
    if name != "idle":  # idle has no parameters: the kernel's housekeeping wakes its CPUs
        assert re.search(r"^\s+\w+ = ", block.group(0), re.M), "parameters show their defaults"


def test_rtapp_example_runs(cli):
    mp3 = REPO / "data" / "rt-app" / "mp3-short.json"
    proc = cli("run", "--workload", f"rtapp:file={mp3}", "--duration", "300ms", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"run_stretch"' in proc.stdout


def test_rtapp_refusal_is_one_clear_line(cli, tmp_path):
    bad = tmp_path / "fifo.json"
    bad.write_text('{ "tasks": { "t": { "policy": "SCHED_FIFO", "run": 100 } } }')
    proc = cli("run", "--workload", f"rtapp:file={bad}", "--duration", "100ms")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("govlab: error:") and "Traceback" not in proc.stderr, proc.stderr
    assert "fifo.json" in proc.stderr and "tasks.t.policy" in proc.stderr and "rt_as_cfs" in proc.stderr

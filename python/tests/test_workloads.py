"""The workload models from the command line: listed with their parameters,
defaults and metric; rt-app files run, and bad ones fail in one clear line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = ["kernbench", "gitsource", "tbench", "iozone", "ycsb-redis", "fio", "netperf", "idle", "rtapp", "hackbench", "pgbench"]


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


@pytest.mark.parametrize(
    ("name", "param", "metric"),
    [("gitsource", "scripts = 790", "elapsed_s (seconds until make test exits, lower is better)"),
     ("tbench", "clients = 1", "throughput_mbs (MB/s of read and write data, higher is better)")],
)
def test_process_workloads_list_parameters_defaults_and_metric(listing, name, param, metric):
    block = re.search(rf"^{re.escape(name)}\s+\S.*?(?=^\S|\Z)", listing, re.M | re.S)
    assert block, listing
    assert param in block.group(0) and f"metric: {metric}" in block.group(0), block.group(0)


def test_gitsource_and_tbench_run_and_report_their_metric(cli):
    proc = cli("run", "--workload", "gitsource:scripts=1", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"elapsed_s"' in proc.stdout and '"processes"' in proc.stdout
    proc = cli("run", "--workload", "tbench:clients=2", "--duration", "50ms", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"throughput_mbs"' in proc.stdout


def test_gitsource_bad_size_is_one_clear_line(cli):
    proc = cli("run", "--workload", "gitsource:scripts=0")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("govlab: error:") and "scripts" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_rtapp_example_runs(cli):
    mp3 = REPO / "data" / "rt-app" / "mp3-short.json"
    proc = cli("run", "--workload", f"rtapp:file={mp3}", "--duration", "300ms", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"run_stretch"' in proc.stdout


def test_rtapp_refusal_is_one_clear_line(cli, tmp_path):
    bad = tmp_path / "fifo.json"
    bad.write_text('{ "tasks": { "t": { "policy": "SCHED_FIFO", "priority": 120, "run": 100 } } }')
    proc = cli("run", "--workload", f"rtapp:file={bad}", "--duration", "100ms")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("govlab: error:") and "Traceback" not in proc.stderr, proc.stderr
    assert "fifo.json" in proc.stderr and "tasks.t.priority" in proc.stderr and "1 to 99" in proc.stderr


def test_rtapp_fragment_is_refused_as_a_fragment(cli):
    frag = REPO / "data" / "real" / "rt-app" / "merge" / "global.json"
    proc = cli("run", "--workload", f"rtapp:file={frag}", "--duration", "100ms")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("govlab: error:") and "global.json" in proc.stderr and "fragment" in proc.stderr


def test_rtapp_sched_fifo_and_deadline_files_run(cli):
    for f in ["cpufreq_governor_efficiency/dvfs.json", "custom-slice.json", "tutorial/example10.json"]:
        path = REPO / "data" / "real" / "rt-app" / f
        proc = cli("run", "--workload", f"rtapp:file={path}", "--duration", "200ms", "--format", "json")
        assert proc.returncode == 0, f"{f}: {proc.stderr}"


def test_rtapp_global_duration_is_the_run_length_unless_duration_is_given(cli, tmp_path):
    f = tmp_path / "d.json"
    f.write_text('{ "tasks": { "t": { "run": 1000, "sleep": 9000 } }, "global": { "duration": 2 } }')
    proc = cli("run", "--workload", f"rtapp:file={f}", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"duration_s": 2.0' in proc.stdout, proc.stdout[:400]
    assert "global.duration" not in proc.stderr
    proc = cli("run", "--workload", f"rtapp:file={f}", "--duration", "300ms", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"duration_s": 0.3' in proc.stdout
    assert "--duration 300ms overrides the rt-app file's global.duration (2 s)" in proc.stderr, proc.stderr


def test_fio_runtime_is_the_run_length_and_a_shorter_duration_is_noted(cli):
    wl = "fio:device=nvme,ioengine=psync,runtime=100ms"
    proc = cli("run", "--platform", "rk3399", "--workload", wl, "--cpufreq", "schedutil", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"duration_s": 1.1' in proc.stdout, proc.stdout[:400]
    assert '"finished": true' in proc.stdout
    proc = cli("run", "--platform", "rk3399", "--workload", wl, "--cpufreq", "schedutil", "--duration", "50ms", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "--duration 50ms overrides fio's runtime (plus 1 s for the last completions) (1.1 s)" in proc.stderr, proc.stderr
    proc = cli("run", "--platform", "rk3399", "--workload", "fio:runtime=soon")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "runtime" in proc.stderr, proc.stderr



@pytest.mark.parametrize("workload", ["dbench", "sqlite-insert", "pgbench", "iozone"])
def test_io_workloads_take_the_file_system(cli, workload):
    """`fs=xfs` runs and shows in the configuration; the listing names both choices (issue 20)."""
    proc = cli("run", "--workload", f"{workload}:fs=xfs", "--duration", "200ms", "--show-config")
    assert proc.returncode == 0, proc.stderr
    assert '"fs": "xfs"' in proc.stdout, proc.stdout


def test_unknown_file_system_is_one_clear_line(cli):
    proc = cli("run", "--workload", "dbench:fs=btrfs", "--duration", "100ms")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govlab: error:"), proc.stderr
    assert "fs" in lines[0] and "ext4" in lines[0] and "xfs" in lines[0], lines[0]


def test_traced_dbench_shows_journal_thread_beside_the_client(cli, tmp_path):
    """The journal thread and the flusher are tasks of their own, on CPUs other than the client's."""
    trace = tmp_path / "dbench.trace"
    proc = cli("run", "--workload", "dbench:clients=1", "--duration", "5200ms", "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr
    cpus: dict[str, set[int]] = {}
    for line in trace.read_text().splitlines():
        m = re.search(r"\[(\d+)\].*sched_switch: .*next_comm=(\S+)", line)
        if m:
            cpus.setdefault(m.group(2), set()).add(int(m.group(1)))
    jbd2 = [c for c in cpus if c.startswith("jbd2/")]
    assert jbd2, sorted(cpus)
    assert "kworker/flush" in cpus, sorted(cpus)
    assert cpus[jbd2[0]] - cpus["dbench"], (cpus[jbd2[0]], cpus["dbench"])

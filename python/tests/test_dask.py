"""The Dask executor on a real distributed.LocalCluster of two worker processes."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from govlab import experiment, pipeline, sweep, tables  # noqa: E402
from govlab.store import Store  # noqa: E402

from dask_faults import KillOnce  # noqa: E402
from test_compare import SMALL, SMALL_RUNS  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as c:
        yield c


@pytest.fixture
def small(tmp_path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


def dask_url(cluster) -> str:
    return cluster.scheduler_address.replace("tcp://", "dask://")


def compare_text(path: Path, db: Path, executor: str = "local", on_stored=None) -> tuple[str, sweep.SweepReport]:
    with Store(db) as store:
        done = pipeline.run_experiments(
            [experiment.load(path)], store, jobs=2, progress=False, on_stored=on_stored,
            executor=sweep.parse_executor(executor) if executor != "local" else "local",
        )
    return tables.render(done.analyses, "text"), done.report


def stored_keys(db: Path) -> list[str]:
    with sqlite3.connect(db) as con:
        return [k for (k,) in con.execute("SELECT key FROM runs ORDER BY key")]


def test_parse_executor():
    assert sweep.parse_executor("local") == "local"
    assert sweep.parse_executor("dask://10.1.2.3:8786") == "tcp://10.1.2.3:8786"
    assert sweep.parse_executor("dask://sched-1.lab:8786") == "tcp://sched-1.lab:8786"
    for bad in ("dask", "dask://host", "tcp://host:8786", "dask://host:0", "dask://host:99999", "remote"):
        with pytest.raises(ValueError, match="dask://HOST:PORT"):
            sweep.parse_executor(bad)


def test_same_table_as_the_local_executor(cluster, small, tmp_path):
    local, _ = compare_text(small, tmp_path / "local.sqlite")
    stored: list[str] = []
    remote, report = compare_text(small, tmp_path / "dask.sqlite", dask_url(cluster), lambda run: stored.append(run.key))
    assert (report.simulated, len(stored)) == (SMALL_RUNS, SMALL_RUNS)
    assert remote == local
    assert stored_keys(tmp_path / "dask.sqlite") == stored_keys(tmp_path / "local.sqlite")


def test_cli_executor_dask(cli, cluster, small, tmp_path):
    local = cli("compare", str(small), "--db", str(tmp_path / "l.sqlite"), "--jobs", "2")
    remote = cli("compare", str(small), "--db", str(tmp_path / "d.sqlite"), "--executor", dask_url(cluster))
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    assert f"{SMALL_RUNS} simulated" in remote.stderr
    assert remote.stdout == local.stdout
    bad = cli("compare", str(small), "--db", str(tmp_path / "x.sqlite"), "--executor", "dask://nowhere")
    assert bad.returncode == 2 and "dask://HOST:PORT" in bad.stderr and "Traceback" not in bad.stderr
    both = cli("compare", str(small), "--jobs", "2", "--executor", dask_url(cluster))
    assert both.returncode == 2 and "--jobs" in both.stderr


def test_a_killed_worker_costs_only_its_runs(cluster, small, tmp_path):
    reference, _ = compare_text(small, tmp_path / "local.sqlite")
    marker = tmp_path / "killed"
    with distributed.Client(cluster, set_as_default=False) as client:
        client.register_plugin(KillOnce(str(marker), victim=0, nth=2))
        pids = client.run(os.getpid)

    stored: list[str] = []
    text, report = compare_text(small, tmp_path / "dask.sqlite", dask_url(cluster), lambda run: stored.append(run.key))

    # worker 0 really died in the middle of the sweep, while it held a run
    pid, key = marker.read_text().split(maxsplit=1)
    assert int(pid) in pids.values()
    assert key.startswith("govlab-run-")
    # every run was stored exactly once, and the table is the local one
    assert sorted(stored) == stored_keys(tmp_path / "dask.sqlite") == stored_keys(tmp_path / "local.sqlite")
    assert len(set(stored)) == SMALL_RUNS == report.simulated
    assert text == reference


def test_a_cluster_left_without_workers_stops_with_no_workers(small, tmp_path, monkeypatch):
    # issue 16: a sweep whose workers all died waited forever in silence.
    from govlab.sweep import dask as govlab_dask

    monkeypatch.setattr(govlab_dask, "NO_WORKERS_TIMEOUT_S", 2.0)
    db = tmp_path / "nw.sqlite"
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as lonely:
        seen: list[str] = []

        def stored(run):
            seen.append(run.key)
            if len(seen) == 1:
                lonely.scale(0)  # the only worker goes, and no other comes

        with pytest.raises(govlab_dask.ClusterError, match="no workers"):
            compare_text(small, db, dask_url(lonely), stored)
    assert stored_keys(db) and set(seen) <= set(stored_keys(db))  # the finished runs are kept


def test_a_dead_scheduler_stops_the_sweep_with_one_line_and_the_stored_count(small, tmp_path):
    # issue 39: killing the scheduler mid-sweep ended in FutureCancelledError's traceback.
    import signal
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bindir = Path(sys.executable).parent
    scheduler = subprocess.Popen(
        [bindir / "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    worker = subprocess.Popen(
        [bindir / "dask", "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    db = tmp_path / "gone.sqlite"
    seen: list[str] = []

    def stored(run):
        seen.append(run.key)
        if len(seen) == 2:
            scheduler.send_signal(signal.SIGKILL)
            scheduler.wait()

    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        from govlab.sweep import dask as govlab_dask

        with pytest.raises(govlab_dask.ClusterError, match=r"scheduler .* is gone.*the \d+ finished run\(s\) are stored") as e:
            compare_text(small, db, f"dask://127.0.0.1:{port}", stored)
        assert "\n" not in str(e.value)
    finally:
        for p in (worker, scheduler):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    assert len(seen) >= 2 and set(seen) <= set(stored_keys(db))

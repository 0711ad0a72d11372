"""Issue 16, safe edges: output files, the results database, limits, processes, claims, the crash test."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from govlab import outfile, store

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "experiments" / "quick.toml"

#: 2 configs x 2 task counts x 2 seeds = 8 runs of about a second each: slow enough to be killed mid-way.
SLOW = """
[experiment]
name = "slow"
platform = "skylake-e3-1240v5"
workload = "periodic:run_us=100,period_us=500"
duration = "60s"
repeats = 2
seed = 1
cpuidle = "menu"

[axis]
tasks = [4, 8]

[[config]]
name = "ondemand"
cpufreq = "ondemand"

[[config]]
name = "schedutil"
cpufreq = "schedutil"
"""
SLOW_RUNS = 8


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if "govlab-tmp" in p.name)


# --- output files ---------------------------------------------------------------------------


def test_html_in_a_missing_directory_fails_before_the_sweep(cli, tmp_path, one_error):
    db = tmp_path / "q.sqlite"
    r = cli("compare", str(QUICK), "--db", str(db), "--html", str(tmp_path / "no" / "r.html"))
    assert "does not exist" in one_error(r, alone=False)
    assert "simulated" not in r.stderr and not db.exists()


@pytest.mark.parametrize("target", ["/dev/full", "/dev/null", "/dev/stdout", "DIR"])
def test_html_refuses_what_is_not_a_regular_file(cli, tmp_path, target, one_error):
    target = str(tmp_path) if target == "DIR" else target
    r = cli("report", str(tmp_path / "none.sqlite"), "--html", target)
    line = one_error(r, alone=False)
    assert target in line and "not a regular file" in line
    if target != "/dev/stdout":  # (the subprocess's stdout is a pipe; this process's may be a file)
        assert os.path.exists(target) and not os.path.isfile(target)  # the node is still there


def test_html_writes_through_a_symlink(cli, tmp_path):
    db = tmp_path / "q.sqlite"
    assert cli("compare", str(QUICK), "--db", str(db)).returncode == 0
    (tmp_path / "link.html").symlink_to("real.html")
    r = cli("report", str(db), "--html", str(tmp_path / "link.html"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "link.html").is_symlink()
    assert (tmp_path / "real.html").read_text().startswith("<!DOCTYPE html>")
    assert leftovers(tmp_path) == []


def test_write_text_leaves_no_temporary_file_on_an_error(tmp_path, monkeypatch):
    def broken(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(KeyboardInterrupt):
        outfile.write_text(tmp_path / "x.html", "page")
    assert leftovers(tmp_path) == [] and not (tmp_path / "x.html").exists()
    with pytest.raises(outfile.OutputError, match="not a regular file"):
        outfile.write_text("/dev/full", "page")


def test_trace_is_checked_before_the_run_and_warns_when_large(cli, tmp_path, one_error):
    r = cli("run", "--workload", "idle", "--duration", "1ms", "--trace", "/dev/full")
    assert "not a regular file" in one_error(r, alone=False)
    (tmp_path / "t.txt").symlink_to("real.txt")
    r = cli("run", "--workload", "idle", "--duration", "100ms", "--trace", str(tmp_path / "t.txt"))
    assert r.returncode == 0 and (tmp_path / "t.txt").is_symlink() and (tmp_path / "real.txt").stat().st_size > 0
    assert "warning" not in r.stderr
    r = cli("run", "--workload", "idle", "--duration", "120s", "--trace", str(tmp_path / "big.txt"))
    assert r.returncode == 0, r.stderr
    (warning,) = [line for line in r.stderr.splitlines() if "warning" in line]
    assert "120 s on 8 CPUs may reach about" in warning and "GB" in warning


# --- the results database -------------------------------------------------------------------


@pytest.mark.parametrize("db", ["/nonexistent/d/x.sqlite", "/tmp", "/proc/self/status", "/proc/x.sqlite"])
def test_a_database_that_cannot_be_opened(cli, db, one_error):
    line = one_error(cli("compare", str(QUICK), "--db", db), alone=False)
    assert db in line


def test_another_programs_database_is_refused_untouched(cli, tmp_path, one_error):
    db = tmp_path / "app.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE people(name TEXT)")
    before = db.read_bytes()
    line = one_error(cli("compare", str(QUICK), "--db", str(db)), alone=False)
    assert "not govlab's" in line and "people" in line
    assert db.read_bytes() == before
    other = tmp_path / "runs.sqlite"  # a table named like ours, but another application_id
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE runs(x)")
        con.execute("PRAGMA application_id=1234")
    before = other.read_bytes()
    assert "another program's" in one_error(cli("report", str(other)), alone=False)
    assert other.read_bytes() == before


def test_a_corrupted_database(cli, tmp_path, one_error):
    db = tmp_path / "q.sqlite"
    assert cli("compare", str(QUICK), "--db", str(db)).returncode == 0
    with open(db, "r+b") as f:
        f.seek(4096 * 3)
        f.write(b"\xff" * 4096 * 4)
    assert "malformed" in one_error(cli("report", str(db)), alone=False)
    assert "malformed" in one_error(cli("compare", str(QUICK), "--db", str(db)), alone=False)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not sqlite at all " * 100)
    assert "not a database" in one_error(cli("report", str(junk)), alone=False)


# --- limits ---------------------------------------------------------------------------------


def test_experiment_repeats_have_a_maximum(cli, tmp_path, one_error):
    exp = tmp_path / "big.toml"
    exp.write_text(QUICK.read_text().replace("repeats = 3", "repeats = 1000000000000"))
    line = one_error(cli("compare", str(exp), "--db", str(tmp_path / "b.sqlite")), alone=False)
    assert "experiment.repeats" in line and "1 to 1000" in line


@pytest.mark.parametrize(
    ("task", "where", "range_"),
    [
        ('"instance": 1000000000, "run": 1000, "sleep": 1000', "tasks.t.instance", "0..=100000 threads"),
        ('"run": 100000000000000000, "sleep": 1000', "tasks.t.run", "0..=1000000000000 µs"),
        ('"run": 10, "sleep": 100000000000000000', "tasks.t.sleep", "0..=1000000000000 µs"),
        ('"delay": 100000000000000000, "run": 10', "tasks.t.delay", "0..=1000000000000 µs"),
        ('"run": 10, "timer": {"ref": "a", "period": 100000000000000000}', "tasks.t.timer.period", "µs"),
    ],
)
def test_rtapp_counts_and_times_have_maximums(cli, tmp_path, task, where, range_, one_error):
    f = tmp_path / "t.json"
    f.write_text('{"tasks": {"t": {' + task + "}}}")
    line = one_error(cli("run", "--workload", f"rtapp:file={f}", "--duration", "10ms"), alone=False)
    assert where in line and range_ in line


def test_workload_file_rate_has_a_maximum(cli, tmp_path, one_error):
    f = tmp_path / "w.toml"
    f.write_text(
        '[[channel]]\nname = "q"\n[[task]]\ncomm = "srv"\nloop = "forever"\n'
        'ops = [ { recv = "q" }, { run = "10us" } ]\n[[source]]\nname = "s"\nchannel = "q"\nrate = 1e15\n'
    )
    line = one_error(cli("run", "--workload", str(f), "--duration", "10ms"), alone=False)
    assert "rate" in line and "at most 1000000 per second" in line


# --- claims ---------------------------------------------------------------------------------


def test_a_claim_by_a_live_process_holds_and_a_dead_ones_expires(tmp_path):
    parent = os.getppid()
    with store.Store(tmp_path / "c.sqlite") as s:
        s._db.execute(
            "INSERT INTO claims VALUES ('live', ?, ?, ?, 'x', ?), ('dead', 999999999, ?, '1', 'x', ?)",
            (parent, store._owner()[1], store._process_start(parent), time.time(), store._owner()[1], time.time()),
        )
        claimed, held = s.claim(["live", "dead", "free"])
        assert claimed == ["dead", "free"] and list(held) == ["live"] and held["live"].pid == parent
        s.release()
        assert s._db.execute("SELECT key FROM claims").fetchall() == [("live",)]


# --- processes: SIGTERM, SIGKILL, and the crash test ----------------------------------------


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def stored_runs(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return int(con.execute("SELECT count(*) FROM runs").fetchone()[0])
    except sqlite3.Error:
        return 0


def start_compare(exp: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "govlab", "compare", str(exp), "--db", str(db), "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_at(exp: Path, db: Path, sig: int, runs_stored: int) -> subprocess.CompletedProcess:
    """Start a compare, send ``sig`` once ``runs_stored`` runs are stored (0: once its workers run), check no process is left."""
    p = start_compare(exp, db)
    deadline = time.monotonic() + 120
    kids: set[int] = set()
    while time.monotonic() < deadline and p.poll() is None:
        kids |= descendants(p.pid)
        if len(kids) >= 2 and stored_runs(db) >= runs_stored:  # the 2 workers
            break
        time.sleep(0.05)
    assert p.poll() is None, "the compare ended before it could be killed"
    kids |= descendants(p.pid)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    deadline = time.monotonic() + 20
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in kids if alive(k)], f"processes left after {signal.Signals(sig).name}: {kids}"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_sigterm_stops_like_ctrl_c(tmp_path):
    exp = tmp_path / "slow.toml"
    exp.write_text(SLOW)
    r = kill_at(exp, tmp_path / "t.sqlite", signal.SIGTERM, 1)
    assert r.returncode == 143 and r.stdout == ""
    assert "terminated" in r.stderr and "finished runs are stored" in r.stderr
    assert "Traceback" not in r.stderr


def test_crash_and_resume(cli, tmp_path):
    """Kill a compare (SIGKILL, SIGTERM) early and mid-way; nothing is left running, the
    database is sound, and the resumed compare prints what an uninterrupted one does."""
    exp = tmp_path / "slow.toml"
    exp.write_text(SLOW)
    whole = cli("compare", str(exp), "--db", str(tmp_path / "whole.sqlite"), "--jobs", "2")
    assert whole.returncode == 0, whole.stderr
    for sig in (signal.SIGKILL, signal.SIGTERM):
        for at in (0, SLOW_RUNS // 2):
            db = tmp_path / f"{signal.Signals(sig).name}-{at}.sqlite"
            kill_at(exp, db, sig, at)
            with sqlite3.connect(db) as con:
                assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            kept = stored_runs(db)
            assert kept < SLOW_RUNS
            resumed = cli("compare", str(exp), "--db", str(db), "--jobs", "2")
            assert resumed.returncode == 0, resumed.stderr
            assert f"{kept} found" in resumed.stderr and f"{SLOW_RUNS - kept} simulated" in resumed.stderr
            assert resumed.stdout == whole.stdout
            with sqlite3.connect(db) as con:
                assert con.execute("SELECT count(*) FROM claims").fetchone() == (0,)

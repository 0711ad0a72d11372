"""tools/calibrate/gitsuite/summarize.py: how a logged `make test` splits into scripts, their commands and make.

workload/gitsource.rs runs what this split gives (tools/calibrate/gitsuite/commands.txt), so
a command counted twice, a subshell taken for a script, or make's work put into a script
would change the simulated suite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _summarize():
    sys.path.insert(0, str(ROOT / "tools" / "calibrate" / "kbuild"))
    path = ROOT / "tools" / "calibrate" / "gitsuite" / "summarize.py"
    spec = importlib.util.spec_from_file_location("gitsuite_summarize", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _line(pid, ppid, comm, how, cpu0, cpu1, t0, t1, args):
    return f"{pid} {ppid} {comm} {how} {cpu0} {cpu1} {t0} {t1} {args}\n"


def test_a_script_its_subshells_and_nested_commands_and_makes_share(tmp_path):
    s = _summarize()
    log = tmp_path / "test.proclog"
    ms = 1_000_000
    log.write_text(
        # t/Makefile's make, and the dash -c it runs each recipe with: make's.
        _line(10, 1, "make", "exit", 0, 3 * ms, 0, 1000 * ms, "make -C t/ all")
        + _line(11, 10, "sh", "exit", 0, 1 * ms, 1 * ms, 900 * ms, "/bin/sh -c GIT_CONFIG=.git/config /bin/bash t1234-x.sh")
        # The script's shell: 10 ms of its own.
        + _line(12, 11, "bash", "exit", 0, 10 * ms, 2 * ms, 800 * ms, "/bin/bash t1234-x.sh")
        # A subshell (fork, same argv) that execs git: one command of 1 + 4 ms.
        + _line(13, 12, "bash", "exec", 0, 1 * ms, 10 * ms, 11 * ms, "/bin/bash t1234-x.sh")
        + _line(13, 12, "git", "exit", 1 * ms, 5 * ms, 11 * ms, 20 * ms, "git commit -m x")
        # git runs git: a nested command of the same script.
        + _line(14, 13, "git", "exit", 0, 2 * ms, 12 * ms, 18 * ms, "git gc --auto")
        # A helper.
        + _line(15, 12, "grep", "exit", 0, 1 * ms, 30 * ms, 31 * ms, "grep x file")
    )
    ims = s.summarize.load(str(log))
    f = s.figures(ims, ghz=s.CALIBRATION_GHZ, fork_ns=0, exec_ns=0)
    assert f["scripts"] == 1
    assert sorted(f["commands"]) == [1 * ms, 2 * ms, 5 * ms]
    assert f["shell"] == 10 * ms
    assert f["make"] == 4 * ms and f["n_make"] == 2
    # proclog.so's cost comes off each image by how it began (the subshell's fork image, cpu0 0, and the
    # git it exec'd), and a faster clock is more cycles at the calibration clock.
    g = s.figures(ims, ghz=2 * s.CALIBRATION_GHZ, fork_ns=0.25 * ms, exec_ns=0.5 * ms)
    assert sorted(g["commands"]) == [1.5 * ms, 3.5 * ms, 8.5 * ms]

"""govlab.compare and govlab.reproduce from the places a user's first script runs:
a plain file without an ``if __name__ == "__main__":`` guard, a script on
standard input, ``python -c``. The local pool's workers start as
``python -m govlab._worker`` and never import the user's main module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXPERIMENT = """\
[experiment]
name = "tiny"
platform = "skylake-e3-1240v5"
workload = "periodic:tasks=2,run_us=1000,period_us=5000"
duration = "100ms"
repeats = 2
baseline = "ondemand"
cpuidle = "menu"

[[config]]
name = "ondemand"
cpufreq = "ondemand"

[[config]]
name = "schedutil"
cpufreq = "schedutil"
"""


def script(tmp_path: Path, call: str) -> str:
    """A user's script, unguarded: it would run again (and print MAIN RAN) in a worker that imported it."""
    return textwrap.dedent(
        f"""\
        import govlab
        print("MAIN RAN", flush=True)
        c = {call}
        print("RUNS", len(c.runs), "FINISHED", int(c.runs["finished"].sum()))
        """
    )


def compare_call(tmp_path: Path, name: str) -> str:
    exp = tmp_path / "tiny.toml"
    exp.write_text(EXPERIMENT)
    return f"govlab.compare({str(exp)!r}, db={str(tmp_path / name)!r}, jobs=2, progress=False)"


def run(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=600, check=False)


def check(proc: subprocess.CompletedProcess, runs: int) -> None:
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("MAIN RAN") == 1, proc.stdout
    assert f"RUNS {runs} FINISHED {runs}" in proc.stdout
    assert "Traceback" not in proc.stderr and "RuntimeError" not in proc.stderr, proc.stderr


def test_compare_from_a_plain_script_without_a_guard(tmp_path):
    path = tmp_path / "first.py"
    path.write_text(script(tmp_path, compare_call(tmp_path, "a.sqlite")))
    check(run([sys.executable, str(path)], tmp_path), 4)


def test_compare_from_a_script_on_standard_input(tmp_path):
    check(run([sys.executable, "-"], tmp_path, stdin=script(tmp_path, compare_call(tmp_path, "b.sqlite"))), 4)


def test_compare_from_python_c(tmp_path):
    check(run([sys.executable, "-c", script(tmp_path, compare_call(tmp_path, "c.sqlite"))], tmp_path), 4)


def test_reproduce_from_a_plain_script_without_a_guard(tmp_path):
    path = tmp_path / "repro.py"
    call = f"govlab.reproduce('ondemand-copy-prev-load', quick=True, db={str(tmp_path / 'r.sqlite')!r}, jobs=2, progress=False)"
    path.write_text(script(tmp_path, call) + "print('VERDICTS', len(c.verdicts))\n")
    proc = run([sys.executable, str(path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("MAIN RAN") == 1 and "VERDICTS" in proc.stdout


def test_a_worker_that_cannot_start_is_one_govlab_error(tmp_path):
    """A worker interpreter that fails at start (here: a broken sitecustomize on its path)
    gives one WorkerError naming the way out, not a traceback per worker."""
    site = tmp_path / "site"
    site.mkdir()
    # Only the workers see it: the parent's sys.path becomes their PYTHONPATH, this one is added after.
    code = script(tmp_path, compare_call(tmp_path, "d.sqlite"))
    code = code.replace(
        "import govlab\n",
        "import govlab, os, sys\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        f"open(os.path.join({str(site)!r}, 'sitecustomize.py'), 'w').write('raise SystemExit(\"no worker here\")')\n",
    )
    code = code.replace('print("RUNS"', "pass  # print(\"RUNS\"")
    wrapped = (
        "try:\n" + textwrap.indent(code, "    ") + "except govlab.WorkerError as e:\n    print('WORKER ERROR', e)\n"
    )
    proc = run([sys.executable, "-c", wrapped], tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("WORKER ERROR"))
    assert "no worker here" in line and "jobs=1" in line, line


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_a_worker_never_imports_the_main_module(tmp_path):
    """The main module marks a file when imported anywhere but the parent."""
    mark = tmp_path / "imported-elsewhere"
    path = tmp_path / "marker.py"
    path.write_text(
        f"import os, govlab\n"
        f"if os.getpid() != int(os.environ.setdefault('MAIN_PID', str(os.getpid()))):\n"
        f"    open({str(mark)!r}, 'w').close()\n"
        + f"c = {compare_call(tmp_path, 'f.sqlite')}\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MAIN_PID"}
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert not mark.exists()


RAISER = """\
from govlab.governors import CpufreqGovernor


class Raiser(CpufreqGovernor):
    def start(self, policy):
        policy.arm_timer(3_000_000, deferrable=False)

    def timer(self, policy, time_ns):
        return {}["missing"]
"""


def test_a_run_that_fails_in_a_worker_raises_its_own_error(tmp_path):
    """The pool hands back the run's GovernorError (pickled across the pipe) and waits for
    the other runs in flight, never for the failed one again."""
    import govlab

    gov = tmp_path / "raiser.py"
    gov.write_text(RAISER)
    exp = EXPERIMENT.replace('cpufreq = "schedutil"', f'cpufreq = "py:{gov}:Raiser"')
    path = tmp_path / "fails.toml"
    path.write_text(exp)
    with pytest.raises(govlab.GovernorError, match="KeyError: 'missing'"):
        govlab.compare(path, db=tmp_path / "f.sqlite", jobs=2, progress=False)

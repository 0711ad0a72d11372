"""Shared fixtures: a CLI runner, its error-line check, and the results that several tests read."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping

import pytest

import govlab

#: A workload with random phases, so that the seed matters.
PERIODIC = "periodic:tasks=4,run_us=1000,period_us=5000"
#: Short enough to keep the suite fast, long enough for every CPU to idle.
SHORT = "500ms"
#: CPUs of the default platform (4 cores, 2 threads each).
SKYLAKE_CPUS = 8

#: The longest error line govlab may print (issue 39).
MAX_ERROR_CHARS = 300

CliRunner = Callable[..., subprocess.CompletedProcess]


def run_cli(*args: str, timeout: float = 600, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m govlab ARGS`` in a fresh interpreter, output captured as text; ``env`` is
    added to this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "govlab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )


#: Runs ``argv[2:]`` and writes its peak resident set size (KiB) to the file ``argv[1]``: a
#: small interpreter of its own, so that the child's peak is its own (a child forked from this
#: large test process starts with this process's pages counted in it).
_RSS_WRAPPER = """\
import resource, subprocess, sys
status = subprocess.run(sys.argv[2:]).returncode
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(status)
"""


def run_cli_rss(*args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, int]:
    """:func:`run_cli`, and the command's peak resident set size in KiB (``getrusage`` of the child)."""
    with tempfile.TemporaryDirectory() as d:
        rss = os.path.join(d, "rss")
        proc = subprocess.run(
            [sys.executable, "-c", _RSS_WRAPPER, rss, sys.executable, "-m", "govlab", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        with open(rss) as f:
            return proc, int(f.read())


def error_line(proc: subprocess.CompletedProcess, *must: str, alone: bool = True) -> str:
    """The one ``govlab: error:`` line of a command that failed on bad input: exit status 2,
    no traceback, at most MAX_ERROR_CHARS characters, holding each of ``must``; with
    ``alone`` nothing else on stderr. Returns the line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("govlab: error:")]
    assert len(errors) == 1, proc.stderr
    assert not alone or len(lines) == 1, proc.stderr
    assert len(errors[0]) <= MAX_ERROR_CHARS, (len(errors[0]), errors[0])
    for text in must:
        assert text in errors[0], (text, errors[0])
    return errors[0]


@pytest.fixture(scope="session")
def cli() -> CliRunner:
    return run_cli


@pytest.fixture(scope="session")
def cli_rss() -> Callable[..., tuple[subprocess.CompletedProcess, int]]:
    return run_cli_rss


@pytest.fixture(scope="session")
def one_error() -> Callable[..., str]:
    """:func:`error_line`."""
    return error_line


@pytest.fixture(scope="session")
def periodic() -> str:
    return PERIODIC


@pytest.fixture(scope="session")
def short() -> str:
    return SHORT


@pytest.fixture(scope="session")
def periodic_result() -> govlab.Result:
    """The periodic workload on the default platform and governors, seed 1."""
    return govlab.run(workload=PERIODIC, duration=SHORT, seed=1)


@pytest.fixture(scope="session")
def skylake_cpus() -> int:
    return SKYLAKE_CPUS

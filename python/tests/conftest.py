"""Shared fixtures: a CLI runner and the results that several tests read."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

import govlab

#: A workload with random phases, so that the seed matters.
PERIODIC = "periodic:tasks=4,run_us=1000,period_us=5000"
#: Short enough to keep the suite fast, long enough for every CPU to idle.
SHORT = "500ms"
#: CPUs of the default platform (4 cores, 2 threads each).
SKYLAKE_CPUS = 8

CliRunner = Callable[..., subprocess.CompletedProcess]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m govlab ARGS`` in a fresh interpreter, output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "govlab", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="session")
def cli() -> CliRunner:
    return run_cli


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

"""The regression cases: load cases.toml, run one case, where its output is kept."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EXPECTED = HERE / "expected"


def real_data() -> Path:
    """The real recordings kept in the repository (data/real)."""
    return REPO / "data" / "real"


def cases() -> list[dict]:
    with open(HERE / "cases.toml", "rb") as f:
        return tomllib.load(f)["case"]


def run_case(case: dict) -> bytes:
    """The case's output: stdout, or the file it wrote when ``output = "trace"``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        subst = {"repo": str(REPO), "real": str(real_data()), "tmp": tmp, "out": str(out)}
        args = [a.format(**subst) for a in case["args"]]
        proc = subprocess.run(
            [sys.executable, "-m", "govlab", *args],
            capture_output=True, timeout=600, check=False, cwd=REPO,
        )
        if proc.returncode != 0:
            raise AssertionError(f"{case['name']}: exit {proc.returncode}: {proc.stderr.decode(errors='replace')}")
        data = out.read_bytes() if case.get("output") == "trace" else proc.stdout
    # Paths differ between clones: keep the output independent of where the repository is.
    return data.replace(str(real_data()).encode(), b"{real}").replace(str(REPO).encode(), b"{repo}")


def expected_path(case: dict) -> Path:
    return EXPECTED / f"{case['name']}.out"

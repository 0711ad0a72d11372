"""Every regression case gives, byte for byte, the output kept in tests/regression/expected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "regression"))
from common import cases, expected_path, run_case  # noqa: E402


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["name"])
def test_output_is_unchanged(case: dict) -> None:
    got = run_case(case)
    want = expected_path(case).read_bytes()
    assert got == want, (
        f"{case['name']}: output differs from {expected_path(case)}; "
        "if the change is meant, regenerate with python python/tests/regression/regenerate.py and say why"
    )

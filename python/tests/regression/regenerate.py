"""Rewrite expected/ from the current build: only in a commit that changes results on purpose."""

from __future__ import annotations

import sys

from common import EXPECTED, cases, expected_path, run_case


def main() -> None:
    EXPECTED.mkdir(exist_ok=True)
    names = set(sys.argv[1:])
    for case in cases():
        if names and case["name"] not in names:
            continue
        expected_path(case).write_bytes(run_case(case))
        print(case["name"])


if __name__ == "__main__":
    main()

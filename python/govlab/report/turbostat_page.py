"""The page of ``govlab run --turbostat-interval TIME --plot FILE.html`` (pipeline stage: render).

One self-contained file (plotly.js embedded, as in the compare report): the
run's package and DRAM power and its Busy% per interval over time
(:func:`govlab.report.figures.turbostat_over_time`), the figures of
``--turbostat-interval``'s tables, under a line naming the run. Strings from
the run (its specs) are escaped.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from typing import Any

from govlab.report import figures

__all__ = ["render", "write_html"]


def render(d: Mapping[str, Any]) -> str:
    """The whole page for the run result ``d`` (one run with intervals)."""
    from govlab.turbostat import interval_rows

    fig = figures.turbostat_over_time(interval_rows(d))
    title = f"{d.get('workload')} on {d.get('platform')}, {d.get('cpufreq')} + {d.get('cpuidle')}"
    fig.update_layout(title={"text": figures.text(title)})
    page = fig.to_html(full_html=True, include_plotlyjs=True)
    return page.replace("<head>", f"<head><meta charset=\"utf-8\"><title>govlab turbostat: {html.escape(title)}</title>", 1)


def write_html(path: str | os.PathLike[str], d: Mapping[str, Any]) -> None:
    """Write the page for the run result ``d`` to ``path``, whole or not at all."""
    from govlab.report import write

    write(path, render(d))

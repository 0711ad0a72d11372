"""Real traces through the engine: ``govlab trace stats`` and ``govlab trace replay`` (pipeline stage: execute).

:func:`stats` reads a trace (raw ftrace text, ``trace-cmd report`` text,
Android systrace HTML or trace-cmd's ``trace.dat``) and returns what the
engine's ``trace::stats`` computes: per CPU, time at each frequency and in
each idle state, idle-state usage, idle-period lengths, wakeups per second,
busy percentage, and the idle governor's accuracy against the oracle.
:func:`govlab.run_text.format_stats` prints it for a terminal;
:func:`govlab.report.trace_page.write_html` writes it as a page with a per-CPU
timeline. :func:`replay` rebuilds the trace's tasks as a workload and
re-simulates it under chosen governors on a chosen platform;
:func:`govlab.run_text.format_replay` sets the replay beside the recording.
"""

from __future__ import annotations

import json
import os
from typing import Any

from govlab import _core
from govlab.result import Result

__all__ = ["stats", "stats_and_timeline", "replay"]


def stats(path: str | os.PathLike[str], platform: str | None = None) -> dict[str, Any]:
    """Analyse the trace in ``path``; ``platform`` gives the idle states'
    target residencies (a platform name, spec or file; default: the platform
    a govlab trace's header records, else the engine's defaults; the result's
    ``idle_states_from`` names which)."""
    return json.loads(_core.trace_stats(os.fspath(path), platform))


def stats_and_timeline(
    path: str | os.PathLike[str], platform: str | None = None, max_spans: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`stats` of the trace in ``path`` and its per-CPU timeline (see
    ``_core.trace_timeline``), from one reading of the trace."""
    d = json.loads(_core.trace_timeline(os.fspath(path), platform, max_spans))
    return d["stats"], d["timeline"]


def replay(
    path: str | os.PathLike[str],
    platform: str | None = None,
    cpufreq: str = "schedutil",
    cpuidle: str = "menu",
    seed: int = 1,
    pin: bool = False,
    progress: Any = None,
    timed_wakeups: bool = False,
    kernel: str | None = None,
) -> tuple[Result, dict[str, Any], int]:
    """Re-simulate the tasks of the trace in ``path`` (their bursts as work at
    the frequency they ran at; a sleep ended by another task as a wait for
    that task to get there, any other sleep timed) on ``platform`` under the
    two governors, for the trace's span (``platform`` None: the one a govlab
    trace's header records, else ``skylake-e3-1240v5``); ``pin`` keeps each task on the CPUs
    it ran on; ``timed_wakeups`` times every sleep as recorded. Returns the
    run's result, :func:`stats` of the recording, and the number of tasks
    replayed. ``kernel`` names the kernel version modelled (None: the newest)."""
    fields: dict[str, Any] = {"cpufreq": cpufreq, "cpuidle": cpuidle, "seed": seed}
    if platform is not None:
        fields["platform"] = platform
    if kernel is not None:
        fields["kernel"] = kernel
    d = json.loads(_core.replay(os.fspath(path), json.dumps(fields), pin, progress, timed_wakeups))
    return Result.from_json(json.dumps(d["run"])), d["recorded"], d["tasks"]

"""A per-CPU timeline of frequency and idle state, read from govlab's own trace (pipeline stage: render).

The HTML report shows one run as it happened: each CPU's frequency and, below
it, what each CPU was doing (running, or which idle state it was in). It gets
them by simulating that run again with a trace (the run is deterministic, so
it is the stored run, event for event) and reading two kinds of line of the
ftrace text that ``govlab run --trace`` writes::

    <comm>-<pid> [CPU] FLAGS SECONDS.MICROS: cpu_frequency: state=KHZ cpu_id=N
    <comm>-<pid> [CPU] FLAGS SECONDS.MICROS: cpu_idle: state=INDEX cpu_id=N

``FLAGS`` is ftrace's latency-format column (``X...``; optional here).

``cpu_idle`` with state 4294967295 ((u32)-1, the kernel's PWR_EVENT_EXIT)
means the CPU left idle; any other state is the index of the idle state it
entered in the platform's table. ``comm`` is the task current on the CPU
when its frequency changed. Every other line is skipped: this module is not a
trace reader, only what the timeline needs.

A run's trace can be long; reading stops after :data:`MAX_EVENTS` of these
events and the timeline says so (``truncated``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXIT_IDLE", "RUNNING", "IDLE_OTHER", "UNKNOWN", "MAX_EVENTS", "CpuTimeline", "parse", "read", "trace_run"]

#: The ``state`` of a cpu_idle event that leaves idle: (u32)-1, as the kernel's PWR_EVENT_EXIT.
EXIT_IDLE = 4294967295
#: The state of a segment in which the CPU was not idle.
RUNNING = -1
#: Idle in no traced idle state (a real trace's idle task polling, or a state entered before it began).
IDLE_OTHER = -2
#: A real trace says nothing of the CPU.
UNKNOWN = -3
#: Frequency and idle events read at most; beyond, the timeline is cut.
MAX_EVENTS = 40_000

_LINE = re.compile(
    r"^(?P<comm>.*)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:\S{4,6}\s+)?(?P<sec>\d+)\.(?P<usec>\d{6}):\s+"
    r"(?P<event>cpu_frequency|cpu_idle):\s+state=(?P<state>\d+)\s+cpu_id=(?P<cpu_id>\d+)\s*$"
)


@dataclass
class CpuTimeline:
    """Per CPU: frequency changes ``(t_s, khz, comm)`` and state segments ``(start_s, end_s, state)``.

    ``state`` is an index into the platform's idle states, or :data:`RUNNING`
    (for real traces also :data:`IDLE_OTHER` or :data:`UNKNOWN`).
    ``end_s`` is where the timeline stops: the run's end, or the last event
    read when ``truncated``.
    """

    end_s: float
    truncated: bool = False
    events: int = 0
    frequency: dict[int, list[tuple[float, int, str]]] = field(default_factory=dict)
    segments: dict[int, list[tuple[float, float, int]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "end_s": self.end_s,
            "truncated": self.truncated,
            "events": self.events,
            "frequency": {str(c): [list(p) for p in v] for c, v in self.frequency.items()},
            "segments": {str(c): [list(s) for s in v] for c, v in self.segments.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CpuTimeline:
        return cls(
            end_s=float(data["end_s"]),
            truncated=bool(data["truncated"]),
            events=int(data["events"]),
            frequency={int(c): [(float(t), int(k), str(comm)) for t, k, comm in v] for c, v in data["frequency"].items()},
            segments={int(c): [(float(a), float(b), int(s)) for a, b, s in v] for c, v in data["segments"].items()},
        )


def parse(lines: Iterable[str], end_s: float, max_events: int = MAX_EVENTS) -> CpuTimeline:
    """The timeline of the cpu_frequency and cpu_idle lines among ``lines``.

    ``end_s`` closes the segments still open at the end of the trace (the
    run's simulated time).
    """
    timeline = CpuTimeline(end_s=end_s)
    open_since: dict[int, tuple[float, int]] = {}  # cpu -> (since_s, state)
    last_s = 0.0
    for line in lines:
        if "cpu_frequency" not in line and "cpu_idle" not in line:
            continue
        m = _LINE.match(line.rstrip("\n"))
        if m is None:
            continue
        if timeline.events == max_events:
            timeline.truncated = True
            break
        timeline.events += 1
        t_s = last_s = int(m["sec"]) + int(m["usec"]) / 1e6
        cpu = int(m["cpu_id"])
        state = int(m["state"])
        if m["event"] == "cpu_frequency":
            timeline.frequency.setdefault(cpu, []).append((t_s, state, m["comm"].strip()))
            continue
        new_state = RUNNING if state == EXIT_IDLE else state
        since = open_since.get(cpu)
        if since is not None:
            _close(timeline, cpu, since, t_s)
        elif new_state != RUNNING and t_s > 0:  # busy from the start until the first idle entry
            _close(timeline, cpu, (0.0, RUNNING), t_s)
        open_since[cpu] = (t_s, new_state)
    if timeline.truncated:
        timeline.end_s = last_s
    for cpu, since in open_since.items():
        _close(timeline, cpu, since, timeline.end_s)
    return timeline


def _close(timeline: CpuTimeline, cpu: int, since: tuple[float, int], end_s: float) -> None:
    start_s, state = since
    if end_s > start_s:
        timeline.segments.setdefault(cpu, []).append((start_s, end_s, state))


def read(path: str | os.PathLike[str], end_s: float, max_events: int = MAX_EVENTS) -> CpuTimeline:
    """:func:`parse` of the trace file at ``path``."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse(f, end_s, max_events)


def trace_run(kwargs: Mapping[str, Any], max_events: int = MAX_EVENTS) -> tuple[CpuTimeline, dict[str, Any]]:
    """Simulate ``govlab.run(**kwargs)`` with a trace; its timeline and its result dict."""
    from govlab import api

    with tempfile.TemporaryDirectory(prefix="govlab-timeline-") as tmp:
        path = os.path.join(tmp, "trace.txt")
        result = api.run(**kwargs, trace=path).to_dict()
        return read(path, float(result["sim_time_s"]), max_events), result

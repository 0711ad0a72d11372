"""A run's per-CPU timeline of frequency and idle state, built by the engine (pipeline stage: render).

The HTML report shows one run as it happened: each CPU's frequency and, below
it, what each CPU was doing (running a task, in which idle state, idle in no
traced state, or unknown). :func:`trace_run` simulates that run again with
its trace kept in memory (the run is deterministic, so it is the stored run,
event for event) and the engine builds the timeline from that trace with the
code that draws ``govlab trace stats --html`` (``_core.run_timeline``), so a
run's report and the trace page of the same run's ``--trace`` file show the
same intervals (up to the microsecond the text keeps).

A CPU with more than ``max_spans`` intervals of a kind has its span cut into
that many equal bins, each showing what the CPU spent most of it doing and
the frequency it held longest (``resolution_s`` gives the widest bin).
Timelines stored by govlab before the engine built them were read from the
trace text and cut after a number of events (``truncated``); they are still
read and shown as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RUNNING", "IDLE_OTHER", "UNKNOWN", "CpuTimeline", "from_engine", "trace_run"]

#: A segment in which a task other than the idle task ran.
RUNNING = -1
#: Idle in no traced idle state (the idle task running outside cpuidle, or a state entered before the trace began).
IDLE_OTHER = -2
#: The trace says nothing of the CPU (before its first event).
UNKNOWN = -3


@dataclass
class CpuTimeline:
    """Per CPU: frequency changes ``(t_s, khz, comm)`` and state segments ``(start_s, end_s, state)``.

    ``state`` is an index into ``idle_states`` (the platform's), or
    :data:`RUNNING`, :data:`IDLE_OTHER` or :data:`UNKNOWN`. Times run from
    the trace's start to ``end_s``. ``resolution_s`` is the widest bin when
    some CPU's intervals were binned past ``max_spans`` (None: exact).
    ``truncated`` and ``events`` describe the text-read timelines of older
    stores only.
    """

    end_s: float
    truncated: bool = False
    events: int = 0
    frequency: dict[int, list[tuple[float, int, str]]] = field(default_factory=dict)
    segments: dict[int, list[tuple[float, float, int]]] = field(default_factory=dict)
    idle_states: list[str] = field(default_factory=list)
    max_spans: int = 0
    resolution_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "end_s": self.end_s,
            "truncated": self.truncated,
            "events": self.events,
            "frequency": {str(c): [list(p) for p in v] for c, v in self.frequency.items()},
            "segments": {str(c): [list(s) for s in v] for c, v in self.segments.items()},
            "idle_states": list(self.idle_states),
            "max_spans": self.max_spans,
            "resolution_s": self.resolution_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CpuTimeline:
        resolution = data.get("resolution_s")
        return cls(
            end_s=float(data["end_s"]),
            truncated=bool(data.get("truncated", False)),
            events=int(data.get("events", 0)),
            frequency={int(c): [(float(t), int(k), str(comm)) for t, k, comm in v] for c, v in data["frequency"].items()},
            segments={int(c): [(float(a), float(b), int(s)) for a, b, s in v] for c, v in data["segments"].items()},
            idle_states=[str(s) for s in data.get("idle_states", [])],
            max_spans=int(data.get("max_spans", 0)),
            resolution_s=None if resolution is None else float(resolution),
        )


def from_engine(data: Mapping[str, Any]) -> CpuTimeline:
    """The engine's timeline (``timeline`` of ``_core.run_timeline`` or ``_core.trace_timeline``)."""
    binned = [float(c["resolution_s"]) for c in data["cpus"] if c["resolution_s"] is not None]
    return CpuTimeline(
        end_s=float(data["duration_s"]),
        events=sum(len(c["segments"]) + len(c["frequency"]) for c in data["cpus"]),
        frequency={c["cpu"]: [(float(t), int(k), str(comm)) for t, k, comm in c["frequency"]] for c in data["cpus"] if c["frequency"]},
        segments={c["cpu"]: [(float(a), float(b), int(s)) for a, b, s in c["segments"]] for c in data["cpus"]},
        idle_states=[str(s) for s in data["idle_states"]],
        max_spans=int(data["max_spans"]),
        resolution_s=max(binned) if binned else None,
    )


def trace_run(kwargs: Mapping[str, Any], max_spans: int | None = None) -> tuple[CpuTimeline, dict[str, Any]]:
    """Simulate ``govlab.run(**kwargs)`` with its trace in memory; its timeline and its result dict.

    ``max_spans`` None is the engine's default (``trace::timeline::MAX_SPANS``).
    """
    import govlab._core as _core
    from govlab import api, governors

    args = {
        "platform": kwargs.get("platform", api.DEFAULT_PLATFORM),
        "workload": kwargs.get("workload", api.DEFAULT_WORKLOAD),
        "cpufreq": kwargs.get("cpufreq", api.DEFAULT_CPUFREQ),
        "cpuidle": kwargs.get("cpuidle", api.DEFAULT_CPUIDLE),
        "duration": kwargs.get("duration", api.DEFAULT_DURATION),
        "seed": kwargs.get("seed", api.DEFAULT_SEED),
    }
    py_cpufreq, py_cpuidle = governors.resolve(args["cpufreq"], "cpufreq"), governors.resolve(args["cpuidle"], "cpuidle")
    answer = json.loads(
        _core.run_timeline(api.config_json(**args), max_spans, kwargs.get("progress"), py_cpufreq, py_cpuidle)
    )
    return from_engine(answer["timeline"]), answer["run"]

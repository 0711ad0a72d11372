"""Analyses of a trace as DataFrames, in LISA's vocabulary: ``trace.ana.<name>.<method>``.

LISA (``lisa.analysis``) names these; govlab computes them itself, from the
event tables of :meth:`govlab.Trace.df_event`, with pandas:

- ``frequency``: per CPU the time at each frequency and the transitions to
  it; per frequency domain (CPUs whose ``cpu_frequency`` events always come
  together) the same; each CPU's frequency over time;
- ``idle``: per CPU the time in each idle state (``cpu_idle``);
- ``tasks``: per task the time it ran on each CPU and each of its activations
  (``sched_switch``);
- ``load_tracking``: the PELT signals of each task (``sched_load_se``) and
  of each CPU's root runqueue (``sched_load_cfs_rq``), where the trace has them;
- ``rta``: rt-app's phases from its own trace markers (``rtapp_loop``
  ``print`` events, which rt-app writes with ``"ftrace": "loop"``).

Times are those of the trace (:attr:`govlab.Trace.start` onward: the trace
clock, or seconds from the first event with ``normalize_time=True``), and a
view's window clips every interval: a residency counts only the time inside
the window, the state at the window's start being the last one set before
it. A state entered before the first event of its kind is unknown and not
counted. Each ``df_*`` method has a ``plot_*`` beside it answering a plotly
figure with a title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd


class Trace(Protocol):
    """What the analyses read of a :class:`govlab.Trace` (named here, not
    imported, so that the trace module, which offers ``trace.ana``, stays
    the only one of the two that imports the other)."""

    start: float
    end: float
    nr_cpus: int
    available_events: Any

    def df_event(self, event: str) -> pd.DataFrame: ...

    def _df_event(self, event: str, windowed: bool = ...) -> pd.DataFrame: ...

__all__ = ["Analyses", "FrequencyAnalysis", "IdleAnalysis", "TasksAnalysis", "LoadTrackingAnalysis", "RTAAnalysis"]


def _intervals(times: Any, values: Any, lo: float, hi: float) -> list[tuple[float, float, Any]]:
    """``(start, end, value)`` of a step signal set to ``values[i]`` at ``times[i]``, clipped to [lo, hi]."""
    out = []
    n = len(times)
    for i in range(n):
        a = times[i]
        b = times[i + 1] if i + 1 < n else hi
        a, b = max(a, lo), min(b, hi)
        if b > a:
            out.append((a, b, values[i]))
    return out


def _title(fig: Any, text: str, x: str, y: str) -> Any:
    fig.update_layout(title=text, xaxis_title=x, yaxis_title=y, template="plotly_white")
    return fig


class _Analysis:
    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def _full(self, event: str) -> pd.DataFrame:
        """``event``'s rows over the whole trace (not only the window), in the trace's time base."""
        return self._trace._df_event(event, windowed=False)

    @property
    def _bounds(self) -> tuple[float, float]:
        return self._trace.start, self._trace.end

    def _cpu(self, cpu: int) -> int:
        """``cpu``, checked against the trace's CPUs."""
        if isinstance(cpu, bool) or not isinstance(cpu, int) or not 0 <= cpu < self._trace.nr_cpus:
            from govlab.exceptions import InvalidValueError

            raise InvalidValueError(f"cpu: invalid value {cpu!r}: a CPU of this trace, 0 to {self._trace.nr_cpus - 1}")
        return cpu

    def _column(self, df: pd.DataFrame, name: str, what: str) -> str:
        """``name``, checked to be one of ``df``'s fields."""
        if name not in df.columns:
            from govlab.exceptions import InvalidValueError

            fields = ", ".join(c for c in df.columns if not c.startswith("__"))
            raise InvalidValueError(f"{what}: invalid value {name!r}: one of {fields}")
        return name


class FrequencyAnalysis(_Analysis):
    """``cpu_frequency``: residency and transitions per CPU and per frequency domain."""

    def df_cpus_frequency(self) -> pd.DataFrame:
        """The ``cpu_frequency`` events in the window: ``Time`` index, ``cpu``, ``frequency`` (kHz)."""
        return self._trace.df_event("cpu_frequency")[["cpu", "frequency"]]

    def df_cpu_frequency(self, cpu: int) -> pd.DataFrame:
        """:meth:`df_cpus_frequency` of one CPU."""
        df = self.df_cpus_frequency()
        return df[df["cpu"] == cpu]

    def _steps(self, cpu: int) -> list[tuple[float, float, Any]]:
        df = self._full("cpu_frequency")
        df = df[df["cpu"] == self._cpu(cpu)]
        lo, hi = self._bounds
        return _intervals(list(df.index), list(df["frequency"]), lo, hi)

    def df_cpu_frequency_residency(self, cpu: int) -> pd.DataFrame:
        """Seconds CPU ``cpu`` spent at each frequency: index ``frequency`` (kHz), column ``total_time``."""
        import pandas as pd

        totals: dict[int, float] = {}
        for a, b, f in self._steps(cpu):
            totals[int(f)] = totals.get(int(f), 0.0) + (b - a)
        df = pd.DataFrame({"total_time": pd.Series(totals, dtype=float)}).sort_index()
        df.index.name = "frequency"
        return df

    def df_cpu_frequency_transitions(self, cpu: int) -> pd.DataFrame:
        """How many times CPU ``cpu`` changed to each frequency in the window: index
        ``frequency``, column ``transitions`` (an event that repeats the frequency
        is no transition, nor is the first event, which has nothing to change from)."""
        import pandas as pd

        df = self._full("cpu_frequency")
        freq = df[df["cpu"] == self._cpu(cpu)]["frequency"]
        changed = freq[freq.ne(freq.shift()) & freq.shift().notna()]
        lo, hi = self._bounds
        changed = changed[(changed.index >= lo) & (changed.index <= hi)]
        counts = changed.value_counts().sort_index()
        out = pd.DataFrame({"transitions": counts.astype(int)})
        out.index.name = "frequency"
        return out

    @property
    def frequency_domains(self) -> list[list[int]]:
        """CPUs that share a frequency: the kernel traces ``cpu_frequency`` for every CPU of a
        policy at the same moment, so CPUs whose events carry the same frequencies at the
        same moments (to 1 ms) form a domain. A CPU without events is alone."""
        df = self._full("cpu_frequency")
        signature: dict[int, tuple[Any, ...]] = {}
        for cpu, rows in df.groupby("cpu", sort=True):
            signature[int(cpu)] = tuple(zip((round(t * 1000) for t in rows.index), rows["frequency"], strict=True))
        domains: dict[tuple[Any, ...], list[int]] = {}
        for cpu, sig in signature.items():
            domains.setdefault(sig, []).append(cpu)
        seen = {c for d in domains.values() for c in d}
        alone = [[c] for c in range(self._trace.nr_cpus) if c not in seen]
        return sorted(list(domains.values()) + alone)

    def df_domain_frequency_residency(self, cpu: int) -> pd.DataFrame:
        """:meth:`df_cpu_frequency_residency` of the frequency domain holding ``cpu``, with
        a ``cpus`` column naming the domain's CPUs."""
        domain = next(d for d in self.frequency_domains if self._cpu(cpu) in d)
        df = self.df_cpu_frequency_residency(domain[0])
        df["cpus"] = ",".join(map(str, domain))
        return df

    def df_domain_frequency_transitions(self, cpu: int) -> pd.DataFrame:
        """:meth:`df_cpu_frequency_transitions` of the frequency domain holding ``cpu`` (its
        CPUs change together, so a domain's transitions are any one of its CPUs'), with a
        ``cpus`` column."""
        domain = next(d for d in self.frequency_domains if self._cpu(cpu) in d)
        df = self.df_cpu_frequency_transitions(domain[0])
        df["cpus"] = ",".join(map(str, domain))
        return df

    def plot_cpu_frequencies(self, cpu: int) -> Any:
        """CPU ``cpu``'s frequency over the window, as steps."""
        import plotly.graph_objects as go

        steps = self._steps(cpu)
        xs = [a for a, _, _ in steps] + [steps[-1][1]] if steps else []
        ys = [f / 1000 for _, _, f in steps] + [steps[-1][2] / 1000] if steps else []
        fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines", line_shape="hv", name=f"CPU {cpu}"))
        return _title(fig, f"CPU {cpu}: frequency", "time (s)", "frequency (MHz)")

    def plot_cpu_frequency_residency(self, cpu: int) -> Any:
        import plotly.express as px

        df = self.df_cpu_frequency_residency(cpu).reset_index()
        df["MHz"] = (df["frequency"] / 1000).astype(str)
        fig = px.bar(df, x="MHz", y="total_time")
        return _title(fig, f"CPU {cpu}: time at each frequency", "frequency (MHz)", "time (s)")

    def plot_cpu_frequency_transitions(self, cpu: int) -> Any:
        import plotly.express as px

        df = self.df_cpu_frequency_transitions(cpu).reset_index()
        df["MHz"] = (df["frequency"] / 1000).astype(str)
        fig = px.bar(df, x="MHz", y="transitions")
        return _title(fig, f"CPU {cpu}: transitions to each frequency", "frequency (MHz)", "transitions")

    def plot_domain_frequencies(self) -> Any:
        """Each frequency domain's frequency over time, one line per domain."""
        import plotly.graph_objects as go

        fig = go.Figure()
        lo, hi = self._bounds
        for domain in self.frequency_domains:
            steps = self._steps(domain[0])
            if not steps:
                continue
            xs = [a for a, _, _ in steps] + [steps[-1][1]]
            ys = [f / 1000 for _, _, f in steps] + [steps[-1][2] / 1000]
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line_shape="hv", name=f"CPUs {','.join(map(str, domain))}"))
        return _title(fig, "Frequency of each frequency domain", "time (s)", "frequency (MHz)")


class IdleAnalysis(_Analysis):
    """``cpu_idle``: time in each idle state per CPU."""

    def df_cpus_idle(self) -> pd.DataFrame:
        """The ``cpu_idle`` events in the window: ``cpu``, ``state`` (-1: leaving idle)."""
        df = self._trace.df_event("cpu_idle")
        return df[["cpu_id", "state"]].rename(columns={"cpu_id": "cpu"})

    def df_cpu_idle_state_residency(self, cpu: int) -> pd.DataFrame:
        """Seconds CPU ``cpu`` spent in each idle state: index ``idle_state``, column ``time``."""
        import pandas as pd

        df = self._full("cpu_idle")
        df = df[df["cpu_id"] == self._cpu(cpu)]
        lo, hi = self._bounds
        totals: dict[int, float] = {}
        for a, b, s in _intervals(list(df.index), list(df["state"]), lo, hi):
            if s >= 0:
                totals[int(s)] = totals.get(int(s), 0.0) + (b - a)
        out = pd.DataFrame({"time": pd.Series(totals, dtype=float)}).sort_index()
        out.index.name = "idle_state"
        return out

    def plot_cpu_idle_state_residency(self, cpu: int) -> Any:
        import plotly.express as px

        df = self.df_cpu_idle_state_residency(cpu).reset_index()
        df["state"] = df["idle_state"].astype(str)
        fig = px.bar(df, x="state", y="time")
        return _title(fig, f"CPU {cpu}: time in each idle state", "idle state", "time (s)")


class TasksAnalysis(_Analysis):
    """``sched_switch``: where and when each task ran."""

    def _pids(self, task: int | str) -> set[int]:
        df = self._full("sched_switch")
        if isinstance(task, str):
            pids = set(df.loc[df["next_comm"].astype(str) == task, "next_pid"]) | set(
                df.loc[df["prev_comm"].astype(str) == task, "prev_pid"]
            )
            if not pids:
                from govlab.exceptions import InvalidValueError

                raise InvalidValueError(f"task: no task named {task!r} runs in this trace")
            return {int(p) for p in pids}
        return {int(task)}

    def _runs(self, task: int | str) -> list[tuple[float, float, int]]:
        """``(start, end, cpu)`` of each time ``task`` ran, clipped to the window: from a
        ``sched_switch`` to it until the next one away from it on that CPU."""
        pids = self._pids(task)
        df = self._full("sched_switch")
        lo, hi = self._bounds
        out: list[tuple[float, float, int]] = []
        on: dict[int, float] = {}
        for t, cpu, prev, nxt in zip(df.index, df["__cpu"], df["prev_pid"], df["next_pid"], strict=True):
            if prev in pids and cpu in on:
                a, b = max(on.pop(cpu), lo), min(t, hi)
                if b > a:
                    out.append((a, b, int(cpu)))
            if nxt in pids:
                on[int(cpu)] = t
        for cpu, start in on.items():
            a = max(start, lo)
            if hi > a:
                out.append((a, hi, cpu))
        return sorted(out)

    def df_task_activation(self, task: int | str) -> pd.DataFrame:
        """Each time ``task`` (a pid, or a command name) ran: ``Time`` index (its start),
        ``cpu``, ``duration`` (s)."""
        import pandas as pd

        rows = self._runs(task)
        df = pd.DataFrame(
            {"cpu": [c for _, _, c in rows], "duration": [b - a for a, b, _ in rows]},
            index=pd.Index([a for a, _, _ in rows], name="Time", dtype=float),
        )
        return df

    def df_task_total_residency(self, task: int | str) -> pd.DataFrame:
        """Seconds ``task`` ran on each CPU: index ``cpu``, column ``runtime``."""
        import pandas as pd

        act = self.df_task_activation(task)
        out = act.groupby("cpu")["duration"].sum().to_frame("runtime")
        return out.reindex(pd.Index(range(self._trace.nr_cpus), name="cpu"), fill_value=0.0)

    def df_tasks_total_residency(self) -> pd.DataFrame:
        """Per task (``pid``, ``comm``) the seconds it ran on each CPU, one column per CPU and
        ``Total``, most run first; the idle tasks (pid 0) left out."""
        import pandas as pd

        df = self._full("sched_switch")
        names = dict(zip(df["next_pid"], df["next_comm"].astype(str), strict=True))
        rows = []
        for pid in sorted(p for p in set(df["next_pid"]) if p != 0):
            per_cpu = self.df_task_total_residency(int(pid))["runtime"]
            rows.append({"pid": int(pid), "comm": names[pid], **{c: per_cpu[c] for c in per_cpu.index}})
        out = pd.DataFrame(rows).set_index(["pid", "comm"]) if rows else pd.DataFrame()
        if rows:
            out["Total"] = out.sum(axis=1)
            out = out.sort_values("Total", ascending=False)
        return out

    def plot_task_total_residency(self, task: int | str) -> Any:
        import plotly.express as px

        df = self.df_task_total_residency(task).reset_index()
        df["cpu"] = df["cpu"].astype(str)
        fig = px.bar(df, x="cpu", y="runtime")
        return _title(fig, f"Task {task}: time run on each CPU", "CPU", "time (s)")

    def plot_task_activation(self, task: int | str) -> Any:
        """One bar per activation, on its CPU's row, from its start to its end."""
        import plotly.graph_objects as go

        df = self.df_task_activation(task)
        fig = go.Figure(
            go.Bar(
                base=list(df.index), x=list(df["duration"]), y=[f"CPU {c}" for c in df["cpu"]],
                orientation="h", name=str(task), showlegend=False,
            )
        )
        return _title(fig, f"Task {task}: activations", "time (s)", "CPU")


class LoadTrackingAnalysis(_Analysis):
    """PELT signals (``sched_load_se``, ``sched_load_cfs_rq``; ``sched_pelt_se`` on newer kernels)."""

    def _event(self, names: Sequence[str]) -> str:
        have = self._trace.available_events
        for name in names:
            if name in have:
                return name
        from govlab.exceptions import MissingTraceEventError

        raise MissingTraceEventError(names[0], have)

    def df_tasks_signal(self, signal: str = "util") -> pd.DataFrame:
        """Each task's PELT ``signal`` (``util``, ``load``, ...) as traced: ``Time`` index,
        ``cpu``, ``pid``, ``comm``, ``signal`` (group entities, pid -1, left out)."""
        df = self._trace.df_event(self._event(("sched_load_se", "sched_pelt_se")))
        self._column(df, signal, "signal")
        df = df[df["pid"] >= 0]
        return df[["cpu", "pid", "comm", signal]]

    def df_task_signal(self, task: int | str, signal: str = "util") -> pd.DataFrame:
        """:meth:`df_tasks_signal` of one task (a pid or a command name)."""
        df = self.df_tasks_signal(signal)
        return df[df["comm"].astype(str) == task] if isinstance(task, str) else df[df["pid"] == task]

    def df_cpus_signal(self, signal: str = "util") -> pd.DataFrame:
        """Each CPU's root runqueue PELT ``signal``: ``Time`` index, ``cpu``, ``signal``."""
        df = self._trace.df_event(self._event(("sched_load_cfs_rq", "sched_pelt_cfs")))
        self._column(df, signal, "signal")
        df = df[df["path"].astype(str) == "/"]
        return df[["cpu", signal]]

    def plot_task_signals(self, task: int | str, signals: Iterable[str] = ("util", "load")) -> Any:
        import plotly.graph_objects as go

        fig = go.Figure()
        for s in signals:
            df = self.df_task_signal(task, s)
            fig.add_trace(go.Scatter(x=list(df.index), y=list(df[s]), mode="lines+markers", line_shape="hv", name=s))
        return _title(fig, f"Task {task}: PELT signals", "time (s)", "signal")


#: rt-app's loop marker (rt-app ``src/rt-app.c``, ``log_ftrace``): ``rtapp_loop: event=start thread_loop=N phase=N phase_loop=N``.
_RTAPP_LOOP = re.compile(r"rtapp_loop: event=(\w+) thread_loop=(\d+) phase=(\d+) phase_loop=(\d+)")


class RTAAnalysis(_Analysis):
    """rt-app's phases, from the ``rtapp_loop`` markers rt-app writes to ``trace_marker``."""

    def df_phases(self, task: int | str) -> pd.DataFrame:
        """Each phase ``task`` went through: ``Time`` index (its start), ``phase``,
        ``duration`` (s, to the next phase's start or the last loop's end)."""
        import pandas as pd

        df = self._trace.df_event("print")
        if isinstance(task, str):
            df = df[df["__comm"].astype(str) == task]
        else:
            df = df[df["__pid"] == task]
        starts: list[tuple[float, int]] = []
        last_end = None
        for t, buf in zip(df.index, df["buf"].astype(str), strict=True):
            m = _RTAPP_LOOP.search(buf)
            if m is None:
                continue
            phase = int(m[3])
            if m[1] == "start" and (not starts or starts[-1][1] != phase):
                starts.append((t, phase))
            elif m[1] == "end":
                last_end = t
        ends = [s for s, _ in starts[1:]] + [last_end if last_end is not None else self._trace.end]
        return pd.DataFrame(
            {"phase": [p for _, p in starts], "duration": [e - s for (s, _), e in zip(starts, ends, strict=True)]},
            index=pd.Index([s for s, _ in starts], name="Time", dtype=float),
        )

    def plot_phases(self, task: int | str) -> Any:
        import plotly.graph_objects as go

        df = self.df_phases(task)
        fig = go.Figure(go.Bar(base=list(df.index), x=list(df["duration"]), y=[f"phase {p}" for p in df["phase"]], orientation="h"))
        return _title(fig, f"rt-app task {task}: phases", "time (s)", "phase")


class Analyses:
    """``trace.ana``: the analyses of one trace (or view), by LISA's names."""

    def __init__(self, trace: Trace) -> None:
        self.frequency = FrequencyAnalysis(trace)
        self.idle = IdleAnalysis(trace)
        self.tasks = TasksAnalysis(trace)
        self.load_tracking = LoadTrackingAnalysis(trace)
        self.rta = RTAAnalysis(trace)

    def __repr__(self) -> str:
        return "<govlab trace analyses: frequency, idle, tasks, load_tracking, rta>"

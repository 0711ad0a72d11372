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

import copy
import json
import numbers
import os
from typing import Any

import govlab._core as _core
from govlab import argcheck
from govlab.fmt import clip
from govlab.result import Result

__all__ = ["stats", "stats_and_timeline", "replay", "Trace", "TraceStats", "BACKENDS"]


def stats(path: str | os.PathLike[str], platform: str | None = None) -> dict[str, Any]:
    """Analyse the trace in ``path``; ``platform`` gives the idle states'
    target residencies (a platform name, spec or file; default: the platform
    a govlab trace's header records, else the engine's defaults; the result's
    ``idle_states_from`` names which)."""
    return json.loads(_core.trace_stats(argcheck.path("path", path), argcheck.text("platform", platform, none=True)))


def stats_and_timeline(
    path: str | os.PathLike[str], platform: str | None = None, max_spans: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`stats` of the trace in ``path`` and its per-CPU timeline (see
    ``_core.trace_timeline``), from one reading of the trace."""
    d = json.loads(
        _core.trace_timeline(
            argcheck.path("path", path), argcheck.text("platform", platform, none=True), _max_spans(max_spans)
        )
    )
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
    path = argcheck.path("path", path)
    for name, value in (("platform", platform), ("kernel", kernel)):
        argcheck.text(name, value, none=True)
    argcheck.text("cpufreq", cpufreq)
    argcheck.text("cpuidle", cpuidle)
    argcheck.integer("seed", seed, 0, 2**64 - 1)
    argcheck.flag("pin", pin)
    argcheck.flag("timed_wakeups", timed_wakeups)
    argcheck.function("progress", progress, none=True)
    fields: dict[str, Any] = {"cpufreq": cpufreq, "cpuidle": cpuidle, "seed": seed}
    if platform is not None:
        fields["platform"] = platform
    if kernel is not None:
        fields["kernel"] = kernel
    d = json.loads(_core.replay(os.fspath(path), json.dumps(fields), pin, progress, timed_wakeups))
    return Result.from_json(json.dumps(d["run"])), d["recorded"], d["tasks"]


def _max_spans(value: Any) -> int | None:
    """``max_spans``: None (the engine's default) or 1 to 2**31 - 1 (assumed: far beyond any page's width)."""
    return argcheck.integer("max_spans", value, 1, 2**31 - 1, none=True)


# --- traces as DataFrames --------------------------------------------------------

#: The DataFrame libraries :meth:`Trace.df_event` can answer in.
BACKENDS = ("pandas", "polars")


class TraceStats:
    """What ``govlab trace stats`` computes, as DataFrames (:meth:`Trace.stats`).

    ``frequency``: per CPU and frequency, the seconds spent there;
    ``idle``: per CPU and idle state, usage and residency (s);
    ``accuracy``: per CPU, the idle governor's picks against the oracle
    (samples, correct, too deep, too shallow, percent correct);
    ``cpus``: per CPU, busy and idle time, wakeups; ``raw``: the whole dict
    (what ``govlab trace stats --format json`` prints).
    """

    def __init__(self, raw: dict[str, Any]) -> None:
        import pandas as pd

        self.raw = raw
        cpus = raw["cpus"]
        self.cpus = pd.DataFrame(
            [
                {
                    "cpu": c["cpu"],
                    "busy_s": c["busy_s"],
                    "idle_s": c["idle_s"],
                    "busy_pct": c["busy_pct"],
                    "transitions": c["transitions"],
                    "wakeups": c["wakeups"],
                    "wakeups_per_s": c["wakeups_per_s"],
                }
                for c in cpus
            ]
        )
        from govlab.result import time_in_state_pairs

        self.frequency = pd.DataFrame(
            [(c["cpu"], khz, s) for c in cpus for khz, s in time_in_state_pairs(c["time_in_state"])],
            columns=["cpu", "khz", "seconds"],
        )
        self.idle = pd.DataFrame(
            [(c["cpu"], s["name"], s["usage"], s["time_s"]) for c in cpus for s in c["idle_states"]],
            columns=["cpu", "state", "usage", "time_s"],
        )
        rows = []
        for c in cpus:
            a = c["idle_accuracy"]
            deep, shallow = sum(a["too_deep"].values()), sum(a["too_shallow"].values())
            pct = 100.0 * a["correct"] / a["samples"] if a["samples"] else float("nan")
            rows.append((c["cpu"], a["samples"], a["correct"], deep, shallow, pct))
        self.accuracy = pd.DataFrame(rows, columns=["cpu", "samples", "correct", "too_deep", "too_shallow", "correct_pct"])

    def __repr__(self) -> str:
        return f"<govlab.TraceStats {self.raw['nr_cpus']} CPUs, {self.raw['duration_s']:.6g} s>"

    def _repr_html_(self) -> str:
        return "<h4>Per CPU</h4>" + self.cpus.to_html(index=False) + "<h4>Idle accuracy</h4>" + self.accuracy.to_html(index=False)


def _read(path: str) -> Any:
    """The engine's reading of the trace in ``path``; a refused file is a ``FileAccessError``."""
    from govlab.exceptions import checked

    return checked(lambda: _core.trace_read(path))


class Trace:
    """A trace as DataFrames, in LISA's naming: a recording of a real machine
    (any format ``govlab trace stats`` reads: trace.dat, ``trace-cmd report``
    text, raw ftrace text, systrace HTML) or a simulated run's events.

    ``Trace("trace.dat")``, or ``Trace(result)`` for a result of
    ``govlab.run(..., trace=True)`` (events kept in memory) or of
    ``govlab.run(..., trace="FILE")`` (the file it wrote).

    The file is read once, by the engine; :meth:`df_event` builds one event
    type's table in Rust and hands it over as Arrow arrays (see
    ``crates/govlab-py/src/table.rs``), so a table of millions of rows never
    crosses row by row.

    One time base, everywhere (``df_event``'s ``Time``, :attr:`start`,
    :attr:`end`, windows, :meth:`timeline`, :meth:`frequency_timeline` and the
    analyses of :attr:`ana`): seconds of the trace's clock, or with
    ``normalize_time=True`` seconds from the trace's first event (LISA's
    option of that name). ``trace[t0:t1]`` and ``trace.get_view((t0, t1))``
    are views of the same trace holding only the events with
    ``t0 <= Time < t1`` (either bound may be None); ``trace.ana`` holds the
    analyses (:mod:`govlab.trace_analysis`).
    """

    def __init__(
        self, source: str | os.PathLike[str] | Result, platform: str | None = None, normalize_time: bool = False
    ) -> None:
        self._source_path: str | None = None
        argcheck.text("platform", platform, none=True)
        if isinstance(source, Result):
            data = source._trace
            if data is None:
                path = source.trace_path
                if path is None:
                    from govlab.exceptions import InvalidValueError

                    raise InvalidValueError(
                        "source: this result kept no trace: run it with govlab.run(..., trace=True) "
                        "(events in memory) or trace='FILE'"
                    )
                self._source_path = path
                data = _read(path)
            self._data = data
        else:
            if not isinstance(source, (str, os.PathLike)):
                from govlab.exceptions import InvalidValueError

                raise InvalidValueError(f"source: invalid value {clip(repr(source))}: a trace file's path or a govlab.Result")
            self._source_path = os.fspath(source)
            self._data = _read(self._source_path)
        self.platform = platform
        self.normalize_time = bool(normalize_time)
        #: Seconds subtracted from the trace clock: the first event's time with normalize_time.
        self._offset = self._data.span_ns[0] / 1e9 if self.normalize_time else 0.0
        #: The view's window in this time base, None for the whole trace.
        self._window: tuple[float, float] | None = None
        self._stats: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = {}

    # --- views -----------------------------------------------------------------

    def get_view(self, window: tuple[float | None, float | None] | None = None) -> Trace:
        """A view of the events with ``window[0] <= Time < window[1]`` (in this trace's time
        base, bounds None meaning the trace's own); the view shares the trace's data."""
        if window is None:
            return self
        if not isinstance(window, (tuple, list)) or len(window) != 2:
            from govlab.exceptions import InvalidValueError

            raise InvalidValueError(f"window: invalid value {window!r}: (start, end) in seconds, either None")
        for bound in window:
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, numbers.Real)):
                from govlab.exceptions import InvalidValueError

                raise InvalidValueError(f"window: invalid value {tuple(window)!r}: (start, end) in seconds, either None")
        lo_now, hi_now = self._window or self._whole()
        lo = lo_now if window[0] is None else max(float(window[0]), lo_now)
        hi = hi_now if window[1] is None else min(float(window[1]), hi_now)
        if hi < lo:
            from govlab.exceptions import InvalidValueError

            raise InvalidValueError(f"window: invalid value {tuple(window)!r}: the end is before the start")
        view = copy.copy(self)
        view._window = (lo, hi)
        return view

    def __getitem__(self, window: slice) -> Trace:
        """``trace[t0:t1]``: :meth:`get_view` of ``(t0, t1)``."""
        if not isinstance(window, slice) or window.step is not None:
            from govlab.exceptions import InvalidValueError

            raise InvalidValueError(f"window: invalid value {window!r}: a slice of times, trace[t0:t1]")
        return self.get_view((window.start, window.stop))

    def _whole(self) -> tuple[float, float]:
        a, b = self._data.span_ns
        return a / 1e9 - self._offset, b / 1e9 - self._offset

    @property
    def ana(self) -> Any:
        """The analyses, by LISA's names: ``trace.ana.frequency``, ``.idle``, ``.tasks``,
        ``.load_tracking``, ``.rta`` (:mod:`govlab.trace_analysis`)."""
        from govlab.trace_analysis import Analyses

        return Analyses(self)

    # --- what the trace holds ------------------------------------------------

    @property
    def path(self) -> str | None:
        """The file the trace was read from (None: a simulated run kept in memory)."""
        return self._source_path

    @property
    def format(self) -> str:
        """``trace.dat``, ``trace-cmd-report``, ``ftrace-text``, ``systrace-html`` or ``govlab-run``."""
        return self._data.format

    @property
    def nr_cpus(self) -> int:
        return self._data.nr_cpus

    @property
    def start(self) -> float:
        """Start of the trace (its first event) or of the view's window, s, in the trace's time base."""
        return (self._window or self._whole())[0]

    @property
    def end(self) -> float:
        """End of the trace (its last event) or of the view's window, s."""
        return (self._window or self._whole())[1]

    @property
    def window(self) -> tuple[float, float]:
        """``(start, end)`` of this trace or view."""
        return self.start, self.end

    @property
    def events(self) -> dict[str, int]:
        """Event counts by name."""
        return dict(self._data.counts())

    @property
    def available_events(self) -> set[str]:
        """The event names the trace holds (LISA's name)."""
        return set(self.events)

    @property
    def notes(self) -> list[str]:
        """What the reader skipped or assumed, one sentence each."""
        return list(self._data.notes)

    # --- event tables -----------------------------------------------------------

    def arrow_event(self, name: str) -> Any:
        """The events named ``name`` as an object exporting the Arrow PyCapsule
        interface (``__arrow_c_stream__``): for pyarrow, polars, duckdb."""
        if not isinstance(name, str) or not name:
            from govlab.exceptions import InvalidValueError

            raise InvalidValueError(f"name: invalid value {clip(repr(name))}: an event name such as 'sched_switch'")
        return self._data.event_table(name)

    def df_event(self, name: str, backend: str = "pandas") -> Any:
        """The events named ``name``, one row each, in LISA's columns.

        pandas: indexed by ``Time`` (seconds, float), then ``__cpu``,
        ``__pid``, ``__comm`` and the event's fields (``sched_switch``:
        ``prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid,
        next_prio``; ``cpu_frequency``: ``cpu, frequency``; ``cpu_idle``:
        ``cpu_id, state``, -1 on leaving idle). Command names are
        ``category`` columns. polars (``backend="polars"``): the same
        columns with ``Time`` first. ``Time`` is in the trace's time base
        (see the class doc); a view has only the rows of its window. An event
        the trace does not hold raises :class:`govlab.MissingTraceEventError`
        (a ``KeyError``) naming the events it has and the closest one.
        """
        if backend not in BACKENDS:
            from govlab.exceptions import InvalidValueError

            raise InvalidValueError(f"backend: invalid value {clip(repr(backend))}: one of {', '.join(BACKENDS)}")
        if backend == "polars":
            import polars as pl

            df = pl.DataFrame(self._checked_table(name))
            if self._offset:
                df = df.with_columns(pl.col("Time") - self._offset)
            if self._window is not None:
                lo, hi = self._window
                df = df.filter((pl.col("Time") >= lo) & (pl.col("Time") < hi))
            return df
        return self._df_event(name, windowed=True)

    def _checked_table(self, name: str) -> Any:
        if isinstance(name, str) and name and name not in self.events:
            from govlab.exceptions import MissingTraceEventError

            raise MissingTraceEventError(name, self.events)
        return self.arrow_event(name)

    def _df_event(self, name: str, windowed: bool) -> Any:
        """:meth:`df_event` in pandas, in the trace's time base; the whole trace unless ``windowed``."""
        import pyarrow as pa

        df = pa.table(self._checked_table(name)).to_pandas().set_index("Time")
        if self._offset:
            df.index = df.index - self._offset
            df.index.name = "Time"
        if windowed and self._window is not None:
            lo, hi = self._window
            df = df[(df.index >= lo) & (df.index < hi)]
        return df

    # --- figures ----------------------------------------------------------------------

    def _stats_timeline(self, platform: str | None, max_spans: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        platform = self.platform if argcheck.text("platform", platform, none=True) is None else platform
        max_spans = _max_spans(max_spans)
        key = (platform, max_spans)
        if key not in self._stats:
            d = json.loads(self._data.stats_json(platform, max_spans))
            self._stats[key] = (d["stats"], d["timeline"])
        return self._stats[key]

    def stats(self, platform: str | None = None) -> TraceStats:
        """What ``govlab trace stats`` computes, over the whole trace (not a view's window) (per CPU frequency residency,
        idle residency and usage, idle accuracy), as DataFrames; ``platform``
        gives the idle states' target residencies (default: the one given to
        the constructor, else the header's, else the engine's defaults)."""
        return TraceStats(self._stats_timeline(platform, None)[0])

    def timeline(self, platform: str | None = None, max_spans: int | None = None) -> Any:
        """Every CPU's timeline as a DataFrame: ``cpu, start_s, end_s, state``
        (an idle state's name, ``running``, ``idle`` in no traced state, or
        ``unknown``), times in the trace's time base, clipped to a view's
        window, binned past ``max_spans`` intervals per CPU (the HTML page's
        timeline, which is computed over the whole trace)."""
        import pandas as pd

        tl = self._stats_timeline(platform, max_spans)[1]
        names = {-1: "running", -2: "idle", -3: "unknown", **dict(enumerate(tl["idle_states"]))}
        shift = self._whole()[0]
        lo, hi = self.window
        rows = [
            (c["cpu"], max(a + shift, lo), min(b + shift, hi), names.get(v, str(v)))
            for c in tl["cpus"]
            for a, b, v in c["segments"]
            if b + shift > lo and a + shift < hi
        ]
        return pd.DataFrame(rows, columns=["cpu", "start_s", "end_s", "state"])

    def frequency_timeline(self, platform: str | None = None, max_spans: int | None = None) -> Any:
        """Each CPU's frequency changes: ``cpu, time_s, khz``, times in the trace's time base, in a view's window."""
        import pandas as pd

        tl = self._stats_timeline(platform, max_spans)[1]
        shift = self._whole()[0]
        lo, hi = self.window
        rows = [(c["cpu"], t + shift, khz) for c in tl["cpus"] for t, khz, _ in c["frequency"] if lo <= t + shift < hi]
        return pd.DataFrame(rows, columns=["cpu", "time_s", "khz"])

    def replay(
        self,
        platform: str | None = None,
        cpufreq: str = "schedutil",
        cpuidle: str = "menu",
        kernel: str | None = None,
        seed: int = 1,
        pin: bool = False,
        timed_wakeups: bool = False,
        progress: Any = None,
    ) -> Result:
        """The trace's tasks re-simulated under ``cpufreq`` and ``cpuidle`` on
        ``platform`` (``govlab trace replay``; see :func:`replay`)."""
        path = self._source_path
        if path is None:
            from govlab.exceptions import UnsupportedError

            raise UnsupportedError(
                "replay reads a trace file: run the simulation with govlab.run(..., trace='FILE') and replay Trace('FILE')"
            )
        return replay(path, platform, cpufreq, cpuidle, seed, pin, progress, timed_wakeups, kernel=kernel)[0]

    # --- display ----------------------------------------------------------------------

    def __repr__(self) -> str:
        where = self._source_path or "simulated run"
        view = f", view {self.start:.9g}-{self.end:.9g} s" if self._window is not None else ""
        return f"<govlab.Trace {where}: {self.format}, {self.nr_cpus} CPUs, {self._data.events} events, {self.end - self.start:.6g} s{view}>"

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in sorted(self.events.items()))
        where = html.escape(self._source_path or "simulated run")
        return (
            f"<p><b>govlab.Trace</b> {where}: {html.escape(self.format)}, {self.nr_cpus} CPUs, "
            f"{self.end - self.start:.6g} s</p><table><thead><tr><th>event</th><th>count</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )

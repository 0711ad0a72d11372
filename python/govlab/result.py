"""The result of one run: the engine's result dict, with typed views of it."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is asked for
    import pandas as pd

__all__ = ["Result", "time_in_state_pairs", "avg_khz"]


class Result:
    """What one run produced.

    ``to_dict()`` is exactly the dict the engine returned. The properties are
    views of it: scalars and dicts as copies, per-CPU figures as pandas
    DataFrames in long form.
    """

    __slots__ = ("_data", "_trace", "trace_path")

    def __init__(self, data: Mapping[str, Any], trace: Any = None, trace_path: str | None = None) -> None:
        self._data: dict[str, Any] = copy.deepcopy(dict(data))
        #: The run's events kept in memory (``govlab.run(..., trace=True)``), for :class:`govlab.Trace`.
        self._trace = trace
        #: The trace file the run wrote (``govlab.run(..., trace="FILE")``).
        self.trace_path = trace_path

    @classmethod
    def from_json(cls, text: str) -> Result:
        """A result from the engine's JSON text."""
        return cls._owning(json.loads(text))

    @classmethod
    def _owning(cls, data: dict[str, Any], trace: Any = None) -> Result:
        """A result that keeps ``data`` itself, no copy: for a dict nobody else holds (just parsed)."""
        result = cls.__new__(cls)
        result._data, result._trace, result.trace_path = data, trace, None
        return result

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the engine's result."""
        return copy.deepcopy(self._data)

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON text, keys in the engine's order."""
        return json.dumps(self._data, indent=indent, sort_keys=False)

    # --- scalars -------------------------------------------------------------

    @property
    def primary_metric(self) -> dict[str, Any]:
        """``{"name", "value", "better"}``: the workload's headline figure."""
        return dict(self._data["primary_metric"])

    @property
    def metrics(self) -> dict[str, Any]:
        """Every workload metric by name (names carry units: ``p99_response_us``)."""
        return copy.deepcopy(self._data["metrics"])

    @property
    def energy_j(self) -> float:
        return float(self._data["energy_j"])

    @property
    def avg_power_w(self) -> float:
        return float(self._data["avg_power_w"])

    @property
    def events(self) -> int:
        """Number of events the engine processed."""
        return int(self._data["events"])

    @property
    def sim_time_s(self) -> float:
        return float(self._data["sim_time_s"])

    @property
    def seed(self) -> int:
        return int(self._data["seed"])

    def turbostat(self) -> list[dict[str, Any]]:
        """The run as turbostat shows it: a summary row, then one row per CPU (:mod:`govlab.turbostat`)."""
        from govlab.turbostat import turbostat_rows

        return turbostat_rows(self._data)

    def turbostat_intervals(self) -> list[dict[str, Any]]:
        """The run as ``turbostat -i`` shows it: per interval ``{"start_s", "end_s", "rows"}``,
        ``rows`` as :meth:`turbostat` gives them for that interval. Empty unless the run
        was asked for intervals (``govlab.run(..., turbostat_interval="1s")``)."""
        from govlab.turbostat import interval_rows

        return interval_rows(self._data)

    @property
    def turbostat_frame(self) -> pd.DataFrame:
        """turbostat's rows as a DataFrame: start_s, end_s, Package, Core, CPU, then its columns;
        one block of rows per interval (one for the whole run without intervals)."""
        from govlab.turbostat import frame

        return frame(self._data)

    # --- per-CPU tables ------------------------------------------------------

    @property
    def cpus(self) -> pd.DataFrame:
        """One row per CPU: cpu, busy_s, idle_s, transitions, busy_pct."""
        import pandas as pd

        sim_s = self.sim_time_s
        rows = [
            {
                "cpu": c["cpu"],
                "busy_s": c["busy_s"],
                "idle_s": c["idle_s"],
                "transitions": c["transitions"],
                "busy_pct": 100.0 * c["busy_s"] / sim_s if sim_s else float("nan"),
            }
            for c in self._data["cpus"]
        ]
        return pd.DataFrame(rows, columns=["cpu", "busy_s", "idle_s", "transitions", "busy_pct"])

    @property
    def time_in_state(self) -> pd.DataFrame:
        """Long form, one row per CPU and frequency: cpu, khz, seconds."""
        import pandas as pd

        rows = [
            (c["cpu"], khz, seconds)
            for c in self._data["cpus"]
            for khz, seconds in time_in_state_pairs(c.get("time_in_state", {}))
        ]
        return pd.DataFrame(rows, columns=["cpu", "khz", "seconds"])

    @property
    def idle_states(self) -> pd.DataFrame:
        """Long form, one row per CPU and idle state:
        cpu, state, usage, time_s, above, below, rejected."""
        import pandas as pd

        rows = [
            (
                c["cpu"],
                s["name"],
                s["usage"],
                s["time_s"],
                s.get("above"),
                s.get("below"),
                s.get("rejected"),
            )
            for c in self._data["cpus"]
            for s in c.get("idle_states", [])
        ]
        columns = ["cpu", "state", "usage", "time_s", "above", "below", "rejected"]
        return pd.DataFrame(rows, columns=columns)

    def _repr_html_(self) -> str:
        """Jupyter: the headline figures and the per-CPU table."""
        import html

        d = self._data
        pm = d.get("primary_metric") or {}
        head = (
            f"<p><b>govlab.Result</b> {html.escape(str(d.get('platform')))}, {html.escape(str(d.get('workload')))}, "
            f"{html.escape(str(d.get('cpufreq')))} / {html.escape(str(d.get('cpuidle')))}, seed {d.get('seed')}, "
            f"{d.get('sim_time_s')} s</p>"
            f"<table><tr><th>{html.escape(str(pm.get('name')))}</th><th>energy (J)</th><th>power (W)</th></tr>"
            f"<tr><td>{pm.get('value')} {html.escape(str(pm.get('unit', '')))}</td>"
            f"<td>{d.get('energy_j', float('nan')):.4g}</td><td>{d.get('avg_power_w', float('nan')):.4g}</td></tr></table>"
        )
        return head + self.cpus.to_html(index=False, float_format=lambda v: f"{v:.4g}")

    def __repr__(self) -> str:
        d = self._data
        pm = d.get("primary_metric") or {}
        return (
            f"<govlab.Result {d.get('platform')} {d.get('workload')} "
            f"{d.get('cpufreq')}/{d.get('cpuidle')} seed={d.get('seed')} "
            f"{d.get('sim_time_s')}s {pm.get('name')}={pm.get('value')}>"
        )


def time_in_state_pairs(tis: Any) -> list[tuple[int, float]]:
    """``[(khz, seconds), ...]`` sorted by frequency, from the forms the engine
    may use: ``{"800000": 1.5, ...}``, ``[[800000, 1.5], ...]`` or
    ``[{"khz": 800000, "seconds": 1.5}, ...]``."""
    items: Iterator[Any]
    if isinstance(tis, Mapping):
        items = iter(tis.items())
    else:
        items = (
            (e["khz"], e["seconds"] if "seconds" in e else e["time_s"])
            if isinstance(e, Mapping)
            else (e[0], e[1])
            for e in tis
        )
    return sorted((int(khz), float(seconds)) for khz, seconds in items)


def avg_khz(tis: Any) -> float | None:
    """Time-weighted average frequency, None when no time was recorded."""
    pairs = time_in_state_pairs(tis)
    total_s = sum(s for _, s in pairs)
    if total_s <= 0:
        return None
    return sum(khz * s for khz, s in pairs) / total_s

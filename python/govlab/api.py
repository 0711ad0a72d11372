"""govlab's Python API: run a simulation, list what the engine knows.

A platform, workload or governor is named by a *spec*, in any of three forms
that mean the same thing::

    "periodic:tasks=4,run_us=2000"                      # NAME[:k=v,...]
    ("periodic", {"tasks": 4, "run_us": 2000})          # (name, params)
    {"name": "periodic", "tasks": 4, "run_us": 2000}    # dict with a name

All are turned into the spec string here; the engine parses it, applies the
defaults and checks every value, raising the exceptions of
``govlab.exceptions``.

A governor may also be written in Python (``govlab.governors``): a
``"py:FILE.py:CLASS[:k=v,...]"`` spec, the class itself, or an instance.
The engine then runs it in place of a built-in one.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from govlab import _core, governors
from govlab.result import Result

__all__ = [
    "run",
    "show_config",
    "list_platforms",
    "list_workloads",
    "list_governors",
    "config_json",
    "spec_text",
    "duration_text",
    "Result",
    "DEFAULT_PLATFORM",
    "DEFAULT_WORKLOAD",
    "DEFAULT_CPUFREQ",
    "DEFAULT_CPUIDLE",
    "DEFAULT_DURATION",
    "DEFAULT_SEED",
    "default_duration",
]

#: A platform, workload or governor, with optional settings (see the module doc).
SpecLike: TypeAlias = str | os.PathLike | tuple | Mapping[str, Any]
#: ``"10s"``, ``"250ms"``, ``"500us"``, ``"100ns"``, or a number of seconds.
DurationLike: TypeAlias = str | int | float

DEFAULT_PLATFORM = "skylake-e3-1240v5"
DEFAULT_WORKLOAD = "cpu-bound"
DEFAULT_CPUFREQ = "performance"
DEFAULT_CPUIDLE = "ladder"
#: No duration: the workload's own default, which the engine holds (10 s for a
#: workload that runs until the duration; long enough for the defaults of one
#: that ends by itself to finish; ``govlab list workloads`` shows each).
DEFAULT_DURATION: DurationLike | None = None
DEFAULT_SEED = 1


def run(
    platform: SpecLike = DEFAULT_PLATFORM,
    workload: SpecLike = DEFAULT_WORKLOAD,
    cpufreq: SpecLike = DEFAULT_CPUFREQ,
    cpuidle: SpecLike = DEFAULT_CPUIDLE,
    duration: DurationLike | None = DEFAULT_DURATION,
    seed: int = DEFAULT_SEED,
    trace: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> Result:
    """Simulate ``duration`` of ``workload`` on ``platform`` under the two governors.

    ``trace`` names an ftrace text file to write every scheduler, frequency and
    idle event to. ``progress(done_ns, total_ns)`` is called about every 100 ms
    of wall time with simulated nanoseconds; an exception it raises stops the
    run and propagates. The same arguments always give the same result.

    ``cpufreq`` and ``cpuidle`` may be governors written in Python (see
    ``govlab.governors``); an error in one raises ``GovernorError``.
    """
    py_cpufreq, py_cpuidle = governors.resolve(cpufreq, "cpufreq"), governors.resolve(cpuidle, "cpuidle")
    config = config_json(platform, workload, cpufreq, cpuidle, duration, seed)
    trace_path = None if trace is None else os.fspath(trace)
    return Result.from_json(_core.run(config, trace_path, progress, py_cpufreq, py_cpuidle))


def show_config(
    platform: SpecLike = DEFAULT_PLATFORM,
    workload: SpecLike = DEFAULT_WORKLOAD,
    cpufreq: SpecLike = DEFAULT_CPUFREQ,
    cpuidle: SpecLike = DEFAULT_CPUIDLE,
    duration: DurationLike | None = DEFAULT_DURATION,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The fully resolved configuration of a run (every tunable with its
    value, defaults included), without running it."""
    py_cpufreq, py_cpuidle = governors.resolve(cpufreq, "cpufreq"), governors.resolve(cpuidle, "cpuidle")
    config = config_json(platform, workload, cpufreq, cpuidle, duration, seed)
    return json.loads(_core.show_config(config, py_cpufreq, py_cpuidle))


def list_platforms() -> list[dict[str, Any]]:
    """The built-in platforms: ``[{"name", "description", "params": [...]}, ...]``."""
    return json.loads(_core.list("platforms"))


def list_workloads() -> list[dict[str, Any]]:
    """The built-in workloads, with their parameters and defaults."""
    return json.loads(_core.list("workloads"))


def list_governors(py: str | list[str] | None = None) -> list[dict[str, Any]]:
    """The cpufreq and cpuidle governors (``"kind"``), with their tunables and defaults.

    ``py`` adds governors written in Python: ``"FILE.py"`` (every governor
    class there) or ``"FILE.py:CLASS"``, or a list of those.
    """
    entries = json.loads(_core.list("governors"))
    for target in [py] if isinstance(py, str) else (py or []):
        entries += governors.describe(target)
    return entries


def config_json(
    platform: SpecLike,
    workload: SpecLike,
    cpufreq: SpecLike,
    cpuidle: SpecLike,
    duration: DurationLike | None,
    seed: int,
) -> str:
    """The config the engine takes, as JSON text (a Python governor is ``external``).

    A ``duration`` of None is left out: the engine gives the workload's default.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, not {type(seed).__name__}")
    return json.dumps(
        {
            "platform": spec_text(platform, "platform"),
            "workload": spec_text(workload, "workload"),
            "cpufreq": "external" if governors.is_py_spec(cpufreq) else spec_text(cpufreq, "cpufreq"),
            "cpuidle": "external" if governors.is_py_spec(cpuidle) else spec_text(cpuidle, "cpuidle"),
            **({} if duration is None else {"duration": duration_text(duration)}),
            "seed": int(seed),
        }
    )


def default_duration(workload: SpecLike) -> str:
    """The duration a run of ``workload`` gets when none is given, as the engine decides it (``"1800s"``)."""
    shown = json.loads(_core.show_config(json.dumps({"workload": spec_text(workload, "workload")}), None, None))
    ns = int(shown["duration_ns"])
    for unit, size in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


def spec_text(spec: SpecLike, what: str = "spec") -> str:
    """``NAME[:k=v,...]`` from any spec form; ``what`` names it in errors."""
    if isinstance(spec, (str, os.PathLike)):
        name, params = os.fspath(spec), {}
    elif isinstance(spec, Mapping):
        if "name" not in spec:
            raise ValueError(f"{what}: a dict spec needs a 'name' key, got {dict(spec)!r}")
        params = dict(spec)
        name = params.pop("name")
    elif isinstance(spec, (tuple, list)) and len(spec) in (1, 2):
        name = spec[0]
        params = dict(spec[1]) if len(spec) == 2 and spec[1] is not None else {}
    else:
        raise TypeError(
            f"{what}: expected 'NAME[:k=v,...]', (name, {{k: v}}) or {{'name': ..., k: v}}, "
            f"got {spec!r}"
        )
    if not isinstance(name, (str, os.PathLike)) or not os.fspath(name).strip():
        raise ValueError(f"{what}: the name must be a non-empty string, got {name!r}")
    name = os.fspath(name).strip()
    if not params:
        return name
    if name.startswith("py:"):
        path, cls, settings_text = governors.split_spec(name)
        return governors.join_spec(path, cls, {**settings_text, **{str(k).strip(): _value_text(v) for k, v in params.items()}})
    settings = []
    for key, value in params.items():
        key, value = str(key).strip(), _value_text(value)
        if not key or "," in key or "=" in key or "," in value:
            raise ValueError(f"{what} {name}: cannot write {key!r}={value!r} in a spec")
        settings.append(f"{key}={value}")
    return name + ("," if ":" in name else ":") + ",".join(settings)


def duration_text(duration: DurationLike) -> str:
    """The engine's duration text: strings pass through, numbers are seconds."""
    if isinstance(duration, str):
        return duration.strip()
    if isinstance(duration, bool) or not isinstance(duration, numbers.Real):
        raise TypeError(f"duration must be a string such as '10s' or seconds, not {duration!r}")
    if isinstance(duration, numbers.Integral):
        return f"{int(duration) * 1_000_000_000}ns"
    if not math.isfinite(duration):
        raise ValueError(f"duration must be finite, got {duration!r}")
    return f"{round(float(duration) * 1e9)}ns"


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()

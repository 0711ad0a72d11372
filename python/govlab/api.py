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
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import govlab._core as _core

from govlab import argcheck, governors
from govlab.exceptions import InvalidValueError
from govlab.fmt import clip
from govlab.result import Result

__all__ = [
    "run",
    "show_config",
    "list_kernels",
    "list_platforms",
    "list_workloads",
    "list_governors",
    "config_json",
    "spec_text",
    "duration_text",
    "defaults",
    "Result",
    "DEFAULT_PLATFORM",
    "DEFAULT_WORKLOAD",
    "DEFAULT_CPUFREQ",
    "DEFAULT_CPUIDLE",
    "DEFAULT_DURATION",
    "DEFAULT_SEED",
    "default_duration",
    "check_cost",
    "MAX_EVENTS_ENV",
]

#: A platform, workload or governor, with optional settings (see the module doc).
SpecLike: TypeAlias = str | os.PathLike | tuple | Mapping[str, Any]
#: ``"10s"``, ``"250ms"``, ``"500us"``, ``"100ns"`` (text needs its unit), or a number of seconds.
DurationLike: TypeAlias = str | int | float

#: The engine's defaults (the core owns them; see :func:`defaults`).
_CORE_DEFAULTS: dict[str, Any] = json.loads(_core.defaults())

DEFAULT_PLATFORM: str = _CORE_DEFAULTS["platform"]
DEFAULT_WORKLOAD: str = _CORE_DEFAULTS["workload"]
#: None: the platform's default governor, what its kernel runs when nobody
#: chose one (intel_pstate's own powersave on intel_pstate, ondemand on
#: powernv, schedutil elsewhere; :func:`defaults` names it).
DEFAULT_CPUFREQ: str | None = None
DEFAULT_CPUIDLE: str = _CORE_DEFAULTS["cpuidle"]
#: No duration: the workload's own default, which the engine holds (10 s for a
#: workload that runs until the duration; long enough for the defaults of one
#: that ends by itself to finish; ``govlab list workloads`` shows each).
DEFAULT_DURATION: DurationLike | None = None
DEFAULT_SEED: int = _CORE_DEFAULTS["seed"]
#: Largest seed the engine takes (a u64).
MAX_SEED = 2**64 - 1
#: The environment variable that raises the ceiling on a run's estimated ops
#: when ``max_events`` is not given (docs/workloads.md, "What a run may cost").
MAX_EVENTS_ENV = "GOVLAB_MAX_EVENTS"


def defaults(platform: SpecLike | None = None, kernel: SpecLike | None = None) -> dict[str, Any]:
    """What a run on ``platform`` under ``kernel`` (default: the default
    platform and kernel) uses for each argument left out: ``{"platform",
    "kernel", "workload", "cpufreq", "cpuidle", "duration", "seed"}``,
    ``cpufreq`` being the governor that kernel boots with on that platform."""
    text = None if platform is None else spec_text(platform, "platform")
    kernel_text = None if kernel is None else spec_text(kernel, "kernel")
    return json.loads(_core.defaults(text, kernel_text))


def run(
    platform: SpecLike = DEFAULT_PLATFORM,
    workload: SpecLike = DEFAULT_WORKLOAD,
    cpufreq: SpecLike | None = DEFAULT_CPUFREQ,
    cpuidle: SpecLike = DEFAULT_CPUIDLE,
    duration: DurationLike | None = DEFAULT_DURATION,
    seed: int = DEFAULT_SEED,
    trace: bool | str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], object] | None = None,
    kernel: SpecLike | None = None,
    turbostat_interval: DurationLike | None = None,
    max_events: int | None = None,
    sample_interval: DurationLike | None = None,
) -> Result:
    """Simulate ``duration`` of ``workload`` on ``platform`` under the two governors.

    ``trace`` names an ftrace text file to write every scheduler, frequency and
    idle event to; ``trace=True`` keeps the events in memory instead. Either
    way ``govlab.Trace(result)`` opens them (``govlab.Trace(result).df_event("cpu_frequency")``).
    ``duration``: text with its unit (``"10s"``, ``"250ms"``; see
    :func:`duration_text`) or a number of seconds.
    ``progress(done_ns, total_ns)`` is called about every 100 ms
    of wall time with simulated nanoseconds; an exception it raises stops the
    run and propagates. The same arguments always give the same result.

    ``kernel`` is ``"VERSION[:option=value,...]"`` (``"4.16"``,
    ``"5.4:idle_tick=governor"``; None: the newest modelled, see
    ``govlab list kernels``).
    ``turbostat_interval`` (``"1s"``, ``"250ms"``, or seconds) keeps the counters
    turbostat reads per interval too: ``result.turbostat_intervals()``,
    ``result.turbostat_frame``. ``sample_interval`` keeps, per interval, only
    the workload's counters and latency series and the packages' energy
    (``result.to_dict()["intervals"]``, each with ``counters``, ``series``,
    ``packages`` and no ``cpus``): the within-run samples of
    :mod:`govlab.samples`, without a trace.
    ``cpufreq`` None is the platform's default governor (:func:`defaults`).
    ``cpufreq`` and ``cpuidle`` may be governors written in Python (see
    ``govlab.governors``); an error in one raises ``GovernorError``. Every
    invalid argument raises a ``GovlabError`` naming it (a wrong value or type
    ``InvalidValueError``, also a ``ValueError``).
    A run estimated to take more than ``max_events`` ops (None: the
    ``GOVLAB_MAX_EVENTS`` environment variable, else the engine's 10^9) is
    refused before it starts (:func:`check_cost`).
    """
    argcheck.function("progress", progress, none=True)
    if sample_interval is not None:
        if turbostat_interval is not None or trace not in (None, False):
            raise _invalid("sample_interval", sample_interval, "give it without turbostat_interval and without trace")
        return Result.from_json(
            _run_text(platform, workload, cpufreq, cpuidle, duration, seed, progress, kernel, max_events, sample_interval, True)
        )
    if trace is None or trace is False:
        return Result.from_json(
            _run_text(platform, workload, cpufreq, cpuidle, duration, seed, progress, kernel, max_events, turbostat_interval)
        )
    py_cpufreq, py_cpuidle = governors.resolve(cpufreq, "cpufreq"), governors.resolve(cpuidle, "cpuidle")
    config = config_json(platform, workload, cpufreq, cpuidle, duration, seed, kernel=kernel, interval=turbostat_interval)
    check_cost(config, max_events)
    if trace is True:
        text, data = _core.run_trace(config, progress, py_cpufreq, py_cpuidle)
        return Result._owning(json.loads(text), trace=data)
    if isinstance(trace, (str, os.PathLike)):
        trace_path = argcheck.path("trace", trace)
        _refuse_inputs(trace_path, config)
    else:
        raise _invalid("trace", trace, "True (events in memory), a file path, or None")
    result = Result.from_json(_core.run(config, trace_path, progress, py_cpufreq, py_cpuidle))
    result.trace_path = trace_path
    return result


def _run_text(
    platform: SpecLike,
    workload: SpecLike,
    cpufreq: SpecLike | None,
    cpuidle: SpecLike,
    duration: DurationLike | None,
    seed: int,
    progress: Callable[[int, int], object] | None = None,
    kernel: SpecLike | None = None,
    max_events: int | None = None,
    interval: DurationLike | None = None,
    workload_intervals: bool = False,
) -> str:
    """:func:`run` without a trace, as the engine's JSON text (``interval``: the turbostat one, or
    with ``workload_intervals`` the sample one): what a sweep's worker sends on unparsed, since a
    result is 10-200 kB of JSON and parsing and re-encoding it cost more than a short run."""
    py_cpufreq, py_cpuidle = governors.resolve(cpufreq, "cpufreq"), governors.resolve(cpuidle, "cpuidle")
    config = config_json(platform, workload, cpufreq, cpuidle, duration, seed, kernel=kernel, interval=interval)
    check_cost(config, max_events)
    return _core.run(config, None, progress, py_cpufreq, py_cpuidle, workload_intervals)


def check_cost(config: str, max_events: int | None = None) -> None:
    """Refuse the run ``config`` (:func:`config_json`) describes when it is estimated to take
    more than ``max_events`` ops (None: ``$GOVLAB_MAX_EVENTS``, else the engine's ceiling),
    before anything runs: an ``InvalidValueError`` saying the longest duration that fits."""
    most = argcheck.integer("max_events", max_events, 1, 2**64 - 1, none=True)
    if most is None and os.environ.get(MAX_EVENTS_ENV) is not None:
        value = os.environ[MAX_EVENTS_ENV]
        most = int(value) if re.fullmatch(r"\s*[0-9]{1,20}\s*", value) else 0
        if not 1 <= most < 2**64:
            raise InvalidValueError(f"{MAX_EVENTS_ENV}: {clip(value)!r} is not a count of ops from 1 to 2^64-1")
    data = json.loads(config)
    if most is not None:
        data["max_events"] = most
    try:
        _core.check_cost(json.dumps(data))
    except InvalidValueError as e:
        if str(e).endswith("raise max_events"):
            raise InvalidValueError(f"{e} (--max-events N, or {MAX_EVENTS_ENV}=N in the environment)") from None
        raise


def _refuse_inputs(trace_path: str, config: str) -> None:
    """The trace may not be written over a file the run reads (a platform, workload or governor file)."""
    from govlab import outfile, spec

    specs = json.loads(config)
    inputs = [(k, f) for k in ("platform", "workload", "cpufreq", "cpuidle") for f in spec.files(specs.get(k))]
    outfile.refuse_inputs([("trace", trace_path)], inputs)


def show_config(
    platform: SpecLike = DEFAULT_PLATFORM,
    workload: SpecLike = DEFAULT_WORKLOAD,
    cpufreq: SpecLike | None = DEFAULT_CPUFREQ,
    cpuidle: SpecLike = DEFAULT_CPUIDLE,
    duration: DurationLike | None = DEFAULT_DURATION,
    seed: int = DEFAULT_SEED,
    kernel: SpecLike | None = None,
) -> dict[str, Any]:
    """The fully resolved configuration of a run (every tunable with its
    value, defaults included), without running it."""
    py_cpufreq, py_cpuidle = governors.resolve(cpufreq, "cpufreq"), governors.resolve(cpuidle, "cpuidle")
    config = config_json(platform, workload, cpufreq, cpuidle, duration, seed, kernel=kernel)
    return json.loads(_core.show_config(config, py_cpufreq, py_cpuidle))


def list_kernels() -> list[dict[str, Any]]:
    """The kernel versions govlab models: ``[{"version", "default", "until_next": [era, ...]}, ...]``,
    each era being what changes after that version and up to the next one."""
    return json.loads(_core.list("kernels"))


def list_platforms() -> list[dict[str, Any]]:
    """The built-in platforms: ``[{"name", "description", "params": [...]}, ...]``."""
    return json.loads(_core.list("platforms"))


def list_workloads() -> list[dict[str, Any]]:
    """The built-in workloads, with their parameters and defaults."""
    return json.loads(_core.list("workloads"))


def list_governors(py: str | list[str] | None = None, kernel: str | None = None) -> list[dict[str, Any]]:
    """The cpufreq and cpuidle governors (``"kind"``), with their tunables and defaults.

    ``py`` adds governors written in Python: ``"FILE.py"`` (every governor
    class there) or ``"FILE.py:CLASS"``, or a list of those. ``kernel``
    (``"3.15"``) lists them as in that version: ``"not_in_kernel"`` for an
    idle governor it lacks, ``"differs"`` (how each differs from the newest
    version), defaults by version, and each patch tunable's ``"patch"``
    (mainline there, or a patch on top).
    """
    targets = argcheck.texts("py", py, none=True) or []
    entries = json.loads(_core.list("governors", argcheck.text("kernel", kernel, none=True)))
    for target in targets:
        entries += governors.describe(target)
    return entries


def config_json(
    platform: SpecLike,
    workload: SpecLike,
    cpufreq: SpecLike | None,
    cpuidle: SpecLike | None,
    duration: DurationLike | None,
    seed: int,
    kernel: SpecLike | None = None,
    interval: DurationLike | None = None,
) -> str:
    """The config the engine takes, as JSON text (a Python governor is
    ``external``; a governor or duration of None is left to the engine's
    default: the platform's governor, the workload's duration)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
        raise _invalid("seed", seed, f"an integer from 0 to {MAX_SEED}")
    config: dict[str, Any] = {
        "platform": spec_text(platform, "platform"),
        "workload": spec_text(workload, "workload"),
        "seed": int(seed),
    }
    if duration is not None:
        config["duration"] = duration_text(duration)
    if kernel is not None:
        config["kernel"] = spec_text(kernel, "kernel")
    if interval is not None:
        config["turbostat_interval"] = duration_text(interval, "turbostat_interval")
    for what, spec in (("cpufreq", cpufreq), ("cpuidle", cpuidle)):
        if spec is not None:
            config[what] = "external" if governors.is_py_spec(spec) else spec_text(spec, what)
    return json.dumps(config)


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
            raise _invalid(what, dict(spec), "a dict spec with a 'name' key")
        params = dict(spec)
        name = params.pop("name")
    elif isinstance(spec, (tuple, list)) and len(spec) in (1, 2):
        name = spec[0]
        try:
            params = dict(spec[1]) if len(spec) == 2 and spec[1] is not None else {}
        except (TypeError, ValueError):
            raise _invalid(what, spec, "(name, {key: value, ...})") from None
    else:
        raise _invalid(what, spec, "'NAME[:k=v,...]', (name, {k: v}) or {'name': ..., k: v}")
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not isinstance(name, (str, os.PathLike)) or not isinstance(os.fspath(name), str) or not os.fspath(name).strip():
        raise _invalid(what, name, "a non-empty name")
    name = os.fspath(name).strip()
    _check_utf8(what, name)
    if not params:
        return name
    if name.startswith("py:"):
        path, cls, settings_text = governors.split_spec(name)
        return governors.join_spec(path, cls, {**settings_text, **{str(k).strip(): _value_text(v) for k, v in params.items()}})
    settings = []
    for key, value in params.items():
        key, value = str(key).strip(), _value_text(value)
        if not key or "," in key or "=" in key or "," in value:
            raise _invalid(f"{what} {name}", f"{key}={value}", "a key and a value without ',' or '=' in the key")
        _check_utf8(what, f"{key}={value}")
        settings.append(f"{key}={value}")
    return name + ("," if ":" in name else ":") + ",".join(settings)


#: A duration as text: a number and its unit, nothing between them.
_DURATION = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|min|m)")


def duration_text(duration: DurationLike, what: str = "duration") -> str:
    """The engine's duration text; ``what`` names it in errors.

    The one rule, the same for the command line, experiment files and Python:
    text needs its unit, right after the number (``"10s"``, ``"250ms"``,
    ``"500us"``, ``"100ns"``, ``"2min"``): ``"10"`` and ``"10 ms"`` are
    refused. A number (a Python or TOML int or float, not text) is seconds.
    """
    if isinstance(duration, str):
        text = duration.strip()
        # A negative one is the engine's to refuse first: it must be positive, whatever its unit.
        if not text.startswith("-") and _DURATION.fullmatch(text) is None:
            bare = re.fullmatch(r"(\d+\.?\d*|\.\d+)", text)
            spaced = re.fullmatch(r"([\d.]+)\s+(ns|us|µs|ms|s|min|m)", text)
            if bare:
                why = f"a duration needs its unit: '{text}s', '{text}ms', '{text}us' or '{text}ns'"
            elif spaced:
                why = f"no space between the number and its unit: '{spaced[1]}{spaced[2]}'"
            else:
                why = "a number and its unit, such as 10s, 250ms, 500us, 100ns or 2min"
            raise _invalid(what, duration, why)
        return text
    if isinstance(duration, bool) or not isinstance(duration, numbers.Real):
        raise _invalid(what, duration, "a string such as '10s', '250ms', or a number of seconds")
    if not math.isfinite(duration) or duration <= 0:
        raise _invalid(what, duration, f"the {what} must be positive and finite")
    if isinstance(duration, numbers.Integral):
        return f"{int(duration) * 1_000_000_000}ns"
    return f"{round(float(duration) * 1e9)}ns"


def _invalid(what: str, value: Any, expected: str) -> Exception:
    """An ``InvalidValueError`` (a ``GovlabError`` and a ``ValueError``) for argument ``what``."""
    from govlab.exceptions import InvalidValueError

    from govlab.fmt import clip

    return InvalidValueError(f"{what}: invalid value {clip(repr(value))}: {expected}")


def _check_utf8(what: str, text: str) -> None:
    """Refuse a name the engine cannot take: a file name that is not UTF-8
    reaches Python as lone surrogates (PEP 383), and specs are UTF-8 text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        from govlab.exceptions import InvalidValueError

        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        raise InvalidValueError(
            f"{what}: '{shown}' is not valid UTF-8; govlab takes names and file paths in UTF-8 (rename the file)"
        ) from None


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()

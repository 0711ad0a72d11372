"""Type stub of govlab's native module (crates/govlab-py). Private: use ``govlab``.

Configs and results cross as JSON text; ``govlab.api`` builds and parses them.
The binding reads and writes that JSON; the engine takes and answers typed
values, checks every value, and names a configuration's fields (``platform``,
``cpufreq``, ...) in its errors, never command-line flags.
"""

from collections.abc import Callable
from os import PathLike
from typing import Any

__version__: str
__engine__: str

def run(
    config_json: str,
    trace_path: str | PathLike[str] | None = None,
    progress: Callable[[int, int], object] | None = None,
    cpufreq: tuple[str, Any] | None = None,
    cpuidle: tuple[str, Any] | None = None,
    workload_intervals: bool = False,
) -> str:
    """Run one simulation; return the result as JSON text.

    ``config_json`` is an object with the keys platform, workload, cpufreq,
    cpuidle (``NAME[:k=v,...]`` spec strings), duration (``"10s"``) and seed.
    The GIL is released while the simulation runs. About every 100 ms of wall
    time the binding runs Python's signal handlers and calls
    ``progress(done_ns, total_ns)`` in simulated nanoseconds (also once when
    the run is complete, if the engine reports it); its return value is
    ignored. An exception from either stops the run and is raised here.

    ``cpufreq`` and ``cpuidle`` are ``(name, governor)`` pairs for governors
    written in Python (``govlab.governors``); the config then names them
    ``"external"``. Such a run keeps the GIL, and the governor's methods are
    called from it; a failure raises GovernorError.

    ``workload_intervals``: the intervals the config asks for
    (``turbostat_interval``) keep only the workload's counters and latency
    series and the packages' counters; each interval's ``cpus`` is empty.
    """

def run_timeline(
    config_json: str,
    max_spans: int | None = None,
    progress: Callable[[int, int], object] | None = None,
    cpufreq: tuple[str, Any] | None = None,
    cpuidle: tuple[str, Any] | None = None,
) -> str:
    """Run one simulation with its trace kept in memory; return ``{"run":
    <as run>, "timeline": <as trace_timeline's timeline>}`` as JSON text. The
    timeline is built as ``trace_timeline`` builds a recording's, with the
    platform's idle states and times in s from the run's start (ns exact).
    GIL, progress, Ctrl-C and Python governors as for :func:`run`."""

def check_cost(config_json: str) -> None:
    """Raise InvalidValueError when the run ``config_json`` describes is
    estimated to take more ops than its ``max_events`` field (absent: the
    engine's ceiling, 10^9) allows; the message ends "raise max_events"."""

def list(kind: str, kernel: str | None = None) -> str:
    """The catalogue of ``kind`` (``"platforms"``, ``"workloads"`` or
    ``"governors"``) as a JSON list of ``{"name", "description", "kind"?,
    "params": [{"name", "default", "help"}]}``."""

def defaults(platform: str | None = None) -> str:
    """What a run on ``platform`` (a name, spec or file; None: the default
    platform) uses for each field left out, as a JSON object with
    ``platform``, ``workload``, ``cpufreq`` (that platform's default
    governor), ``cpuidle``, ``duration`` and ``seed``."""

def show_config(
    config_json: str,
    cpufreq: tuple[str, Any] | None = None,
    cpuidle: tuple[str, Any] | None = None,
) -> str:
    """The resolved tunables and parameters of the run ``config_json``
    describes, as JSON, without running it (Python governors as in ``run``)."""

def trace_stats(path: str | PathLike[str], platform: str | None = None) -> str:
    """``govlab trace stats``: the trace in ``path`` (ftrace text, trace-cmd
    report text, systrace HTML or trace.dat) analysed with the idle states of
    ``platform`` (a name, spec or file; default: the platform a govlab
    trace's header records, else the engine's defaults), as JSON text. The GIL is released while the trace is read."""

def trace_timeline(path: str | PathLike[str], platform: str | None = None, max_spans: int | None = None) -> str:
    """``govlab trace stats --html``: ``{"stats": <as trace_stats>,
    "timeline": {"duration_s", "max_spans", "idle_states", "cpus": [{"cpu",
    "segments": [[start_s, end_s, state]], "frequency": [[t_s, khz, comm]],
    "resolution_s"}]}}`` as JSON text. ``state`` is an idle state's index, or
    -1 busy, -2 idle in no traced state, -3 unknown; times from the trace's
    start. A CPU with more than ``max_spans`` intervals of a kind (default:
    the engine's) has them binned, ``resolution_s`` wide. GIL released."""

def replay(
    path: str | PathLike[str],
    config_json: str,
    pin: bool = False,
    progress: Callable[[int, int], object] | None = None,
    timed_wakeups: bool = False,
) -> str:
    """``govlab trace replay``: the tasks of the trace in ``path`` re-simulated
    with the platform, governors and seed of ``config_json`` (as for
    :func:`run`; the duration is the trace's span; without a platform, the
    one a govlab trace's header records, else the default platform). With ``pin`` each task
    stays on the CPUs it ran on; with ``timed_wakeups`` a task woken by
    another sleeps as long as recorded instead of waiting for it. Returns ``{"run": <run result>, "recorded":
    <trace stats>, "tasks": n}`` as JSON text. GIL, progress and Ctrl-C as
    for :func:`run`."""

class GovlabError(Exception):
    """Base class of every error govlab raises."""

class UnknownNameError(GovlabError, ValueError):
    """A platform, workload, governor or other name that govlab does not know."""

class InvalidValueError(GovlabError, ValueError):
    """A tunable or parameter value outside what it accepts."""

class UnknownKeyError(GovlabError, ValueError):
    """A tunable or parameter key that its owner does not have."""

class FileFormatError(GovlabError):
    """A platform or workload file that cannot be used (syntax or content)."""

class TraceError(GovlabError):
    """A trace that cannot be read."""

class UnsupportedError(GovlabError):
    """A governor requirement that the platform's cpufreq driver cannot meet."""

class GovernorError(GovlabError):
    """A governor written in Python failed during a run (it raised, or answered something the engine cannot apply)."""

class Platform:
    """The machine, as a Python governor's ``init(platform)`` sees it (read-only)."""
    name: str
    driver: str
    hwp: bool
    acpi_pm_profile: str
    hz: int
    tick_ns: int
    nr_cpus: int
    policies: tuple[PolicyInfo, ...]

class PolicyInfo:
    """One cpufreq policy's fixed data (read-only)."""
    id: int
    cpus: tuple[int, ...]
    opps: tuple[int, ...]
    cpuinfo_min_khz: int
    cpuinfo_max_khz: int
    transition_latency_ns: int

class Policy:
    """A cpufreq policy as a Python governor sees it during a call."""
    id: int
    cpus: tuple[int, ...]
    opps: tuple[int, ...]
    cur_khz: int
    min_khz: int
    max_khz: int
    cpuinfo_min_khz: int
    cpuinfo_max_khz: int
    transition_latency_ns: int
    tick_ns: int
    hwp: HwpCaps | None
    def util(self, cpu: int) -> int: ...
    def util_boost(self, cpu: int) -> int: ...
    def capacity(self, cpu: int) -> int: ...
    def idle_ns(self, cpu: int, now_ns: int) -> int: ...
    def iowait_ns(self, cpu: int, now_ns: int) -> int: ...
    def nr_running(self, cpu: int) -> int: ...
    def idle_calls(self, cpu: int) -> int | None: ...
    def set_target(self, khz: int, relation: str = "L") -> None: ...
    def arm_timer(self, delay_ns: int, deferrable: bool = True) -> None: ...
    def cancel_timer(self) -> None: ...

class HwpCaps:
    """HWP_CAPABILITIES of a policy's CPUs (read-only): performance levels, and kHz per level."""
    lowest_perf: int
    guaranteed_perf: int
    highest_perf: int
    khz_per_perf: int

class HwpRequest:
    """An HWP request (MSR_HWP_REQUEST): performance levels and EPP (0 performance ... 255 energy)."""
    min_perf: int
    max_perf: int
    desired_perf: int
    epp: int
    def __init__(self, min_perf: int, max_perf: int, desired_perf: int = 0, epp: int = 128) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

EPP_NAMES: list[tuple[str, int]]

class IdleState:
    """One idle state of a CPU (read-only)."""
    index: int
    name: str
    desc: str
    exit_latency_ns: int
    target_residency_ns: int
    power_mw: float
    polling: bool

class IdleDevice:
    """A CPU's idle device as a Python cpuidle governor sees it."""
    cpu: int
    states: tuple[IdleState, ...]
    disabled: tuple[bool, ...]
    now_ns: int
    delta_tick_ns: int
    tick_ns: int
    nr_iowait: int
    util: int
    capacity: int
    poll_time_limit: bool
    got_tick: bool

"""Type stub of govlab's native module (crates/govlab-py). Private: use ``govlab``.

Configs and results cross as JSON text; ``govlab.api`` builds and parses them.
"""

from collections.abc import Callable
from os import PathLike

__version__: str

def run(
    config_json: str,
    trace_path: str | PathLike[str] | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> str:
    """Run one simulation; return the result as JSON text.

    ``config_json`` is an object with the keys platform, workload, cpufreq,
    cpuidle (``NAME[:k=v,...]`` spec strings), duration (``"10s"``) and seed.
    The GIL is released while the simulation runs. About every 100 ms of wall
    time the binding runs Python's signal handlers and calls
    ``progress(done_ns, total_ns)`` in simulated nanoseconds (also once when
    the run is complete, if the engine reports it); its return value is
    ignored. An exception from either stops the run and is raised here.
    """

def list(kind: str) -> str:
    """The catalogue of ``kind`` (``"platforms"``, ``"workloads"`` or
    ``"governors"``) as a JSON list of ``{"name", "description", "kind"?,
    "params": [{"name", "default", "help"}]}``."""

def show_config(config_json: str) -> str:
    """The resolved tunables and parameters of the run ``config_json``
    describes, as JSON, without running it."""

def trace_stats(path: str | PathLike[str], platform: str | None = None) -> str:
    """``govlab trace stats``: the trace in ``path`` (ftrace text, trace-cmd
    report text, systrace HTML or trace.dat) analysed with the idle states of
    ``platform`` (a name, spec or file; default: the engine's defaults), as
    JSON text. The GIL is released while the trace is read."""

def replay(
    path: str | PathLike[str],
    config_json: str,
    pin: bool = False,
    progress: Callable[[int, int], object] | None = None,
) -> str:
    """``govlab trace replay``: the tasks of the trace in ``path`` re-simulated
    with the platform, governors and seed of ``config_json`` (as for
    :func:`run`; the duration is the trace's span). With ``pin`` each task
    stays on the CPUs it ran on. Returns ``{"run": <run result>, "recorded":
    <trace stats>, "tasks": n}`` as JSON text. GIL, progress and Ctrl-C as
    for :func:`run`."""

class GovlabError(Exception):
    """Base class of every error govlab raises."""

class UnknownNameError(GovlabError):
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

"""govlab: a laboratory for Linux cpufreq and cpuidle governors.

Simulates a machine, a Linux-like scheduler and a workload under a cpufreq and
a cpuidle governor, deterministically for a given seed::

    import govlab

    r = govlab.run(workload="periodic:tasks=4,run_us=2000,period_us=10000",
                   cpufreq="powersave", duration="5s")
    r.primary_metric, r.energy_j   # headline figures
    r.cpus, r.idle_states          # pandas DataFrames
    r.to_dict()                    # the engine's whole result

Comparisons (``govlab compare``) go through one pipeline, each stage a
module: load (``govlab.experiment`` reads and checks experiment files), plan
(``govlab.plan`` expands them into run requests), execute (``govlab.sweep``
simulates the missing runs into the results database of ``govlab.store``),
analyse (``govlab.compare``, with the statistics of ``govlab.stats``) and
render (``govlab.tables``, ``govlab.report``); ``govlab.pipeline`` chains
the first four and ``govlab.cli`` holds the command's thin handlers. Specs
are read by ``govlab.spec`` and numbers written by ``govlab.fmt``.
Governors can be written in Python too (``govlab.governors``).

The engine is Rust (``crates/govlab-core``), reached through the private
module ``govlab._core``.
"""

from govlab._core import __version__
from govlab.api import defaults, list_governors, list_kernels, list_platforms, list_workloads, run
from govlab.exceptions import (
    FileFormatError,
    GovernorError,
    GovlabError,
    InvalidValueError,
    TraceError,
    UnknownKeyError,
    UnknownNameError,
    UnsupportedError,
)
from govlab.result import Result
from govlab.experiment import ExperimentError, load as load_experiment

__all__ = [
    "run",
    "defaults",
    "Result",
    "list_kernels",
    "list_platforms",
    "list_workloads",
    "list_governors",
    "GovlabError",
    "UnknownNameError",
    "InvalidValueError",
    "UnknownKeyError",
    "FileFormatError",
    "TraceError",
    "UnsupportedError",
    "GovernorError",
    "ExperimentError",
    "load_experiment",
    "__version__",
]

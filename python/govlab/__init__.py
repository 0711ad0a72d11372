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
analyse (``govlab.analysis``, with the statistics of ``govlab.stats``) and
render (``govlab.tables``, ``govlab.report``); ``govlab.pipeline`` chains
the first four and ``govlab.cli`` holds the command's thin handlers. Specs
are read by ``govlab.spec`` and numbers written by ``govlab.fmt``.
Governors can be written in Python too (``govlab.governors``).

In a notebook (``docs/notebooks.md``): ``govlab.compare(experiment)``,
``govlab.open_results(db)`` and ``govlab.reproduce(name)`` answer a
:class:`Comparison` (DataFrames, the command's text, plotly figures), and
``govlab.Trace(path_or_result).df_event("sched_switch")`` a trace's events as
a DataFrame in LISA's columns, with views (``trace[t0:t1]``) and analyses
(``trace.ana.frequency``, ``.idle``, ``.tasks``, ``.load_tracking``, ``.rta``;
:mod:`govlab.trace_analysis`). Every error is a :class:`GovlabError`; the
hierarchy is in :mod:`govlab.exceptions`.

The engine is Rust (``crates/govlab-core``), reached through the private
module ``govlab._core``.
"""

from govlab._core import __version__
from govlab.api import defaults, list_governors, list_kernels, list_platforms, list_workloads, run
from govlab.exceptions import (
    ClusterError,
    ExperimentError,
    FileAccessError,
    FileFormatError,
    FilePermissionError,
    GovernorError,
    GovlabError,
    InvalidTypeError,
    InvalidValueError,
    MissingFileError,
    MissingTraceEventError,
    OutputError,
    ResultsError,
    StoreError,
    TraceError,
    UnfinishedRuns,
    UnknownKeyError,
    UnknownNameError,
    UnsupportedError,
    WorkerError,
)
from govlab.paths import data_file
from govlab.result import Result
from govlab.experiment import load as load_experiment
from govlab.trace import Trace, TraceStats
# `govlab.compare(...)` and `govlab.reproduce(...)` are the notebook's entry points;
# the pipeline's analysis and the evaluations' verdicts live in govlab.analysis and
# govlab.reproduction.
from govlab.notebook import Comparison, Reproduction, compare, open_results, reproduce

__all__ = [
    "run",
    "compare",
    "reproduce",
    "open_results",
    "Comparison",
    "Reproduction",
    "Trace",
    "TraceStats",
    "ResultsError",
    "FileAccessError",
    "defaults",
    "Result",
    "list_kernels",
    "list_platforms",
    "list_workloads",
    "list_governors",
    "GovlabError",
    "UnknownNameError",
    "InvalidValueError",
    "InvalidTypeError",
    "UnknownKeyError",
    "FileFormatError",
    "TraceError",
    "UnsupportedError",
    "GovernorError",
    "ExperimentError",
    "StoreError",
    "UnfinishedRuns",
    "MissingTraceEventError",
    "WorkerError",
    "ClusterError",
    "MissingFileError",
    "FilePermissionError",
    "OutputError",
    "load_experiment",
    "data_file",
    "__version__",
]

//! `govlab._core`: the private native module behind `python/govlab`.
//!
//! Conversion only ("bindings only convert"): each function
//! takes Python arguments, calls [`govlab_core::api`], and maps the error with
//! [`error::to_py`]. Configs and results cross as JSON text, which the Python
//! package builds and parses: the engine takes a typed [`RunConfig`] and
//! answers typed structs, and the JSON is read and written here only.
//! Defaults and validation live in the engine.
//!
//! `run` releases the GIL for the whole simulation. While it runs, the engine
//! reports progress through a callback; at most every [`CHECK_EVERY`] of wall
//! time that callback takes the GIL back, runs Python's signal handlers (so
//! Ctrl-C works) and calls the caller's progress function. Wall time is read
//! here, never in the engine.
//!
//! `run` and `show_config` also take governors written in Python (see
//! [`governor`]); the configuration then names them `external`. Such a run
//! keeps the GIL: Python runs at every governor call, so releasing it in
//! between would only add the cost of taking it back each time.

mod error;
mod governor;
mod table;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use govlab_core::api::{self, RunArgs, RunConfig};
use govlab_core::external::ExternalGovernors;
use govlab_core::trace::replay::Wakeups;
use govlab_core::Error;
use pyo3::prelude::*;
use serde::Serialize;

/// How often, in wall time, a running simulation takes the GIL back.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// The run configuration `config_json` describes (an object with the
/// fields of [`RunArgs`]), resolved by the engine.
fn config(config_json: &str) -> PyResult<RunConfig> {
    RunConfig::from_args(run_args(config_json)?).map_err(error::to_py)
}

/// Refuse the run `config_json` describes when its estimated cost is above
/// the ceiling its `max_events` gives ([`RunConfig::check_cost`]).
#[pyfunction]
fn check_cost(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let args = run_args(config_json)?;
    let max_events = args.max_events;
    let cfg = RunConfig::from_args(args).map_err(error::to_py)?;
    py.allow_threads(|| cfg.check_cost(max_events)).map_err(error::to_py)
}

/// The fields `config_json` gives (an object with the fields of
/// [`RunArgs`]), not yet resolved.
fn run_args(config_json: &str) -> PyResult<RunArgs> {
    serde_json::from_str(config_json).map_err(|e| error::to_py(Error::invalid("run configuration", "json", e, RunArgs::FIELDS)))
}

/// `value` as JSON text, fields in declaration order.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `value` as JSON text with every object's keys sorted: the form these
/// answers have always had (they were built as JSON values).
fn json_sorted<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).map(|v| v.to_string()).unwrap_or_default()
}

/// The run's result, or the Python exception that stopped it.
fn finish<T>(check: Check, result: govlab_core::Result<T>) -> PyResult<T> {
    match check.pending {
        Some(err) => Err(err),
        None => result.map_err(error::to_py),
    }
}

/// Run one simulation described by `config_json`; returns the result as JSON.
///
/// `progress(done_ns, total_ns)` is called with simulated nanoseconds. An
/// exception from a signal handler (Ctrl-C) or from `progress` stops the run
/// and is raised here.
///
/// `cpufreq` and `cpuidle`, if given, are `(name, governor object)` pairs.
/// `workload_intervals`: the intervals keep the workload's and the
/// packages' counters only (`RunConfig::run_workload_intervals`).
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
#[pyo3(signature = (config_json, trace_path=None, progress=None, cpufreq=None, cpuidle=None, workload_intervals=false))]
fn run(
    py: Python<'_>,
    config_json: &str,
    trace_path: Option<PathBuf>,
    progress: Option<PyObject>,
    cpufreq: Option<(String, PyObject)>,
    cpuidle: Option<(String, PyObject)>,
    workload_intervals: bool,
) -> PyResult<String> {
    let cfg = config(config_json)?;
    let mut check = Check::new(progress);
    let mut tick = |d, t| check.tick(d, t);
    let builtin = cpufreq.is_none() && cpuidle.is_none();
    let result = if workload_intervals && builtin {
        py.allow_threads(|| cfg.run_workload_intervals(ExternalGovernors::default(), Some(&mut tick)))
    } else if workload_intervals {
        cfg.run_workload_intervals(externals(cpufreq, cpuidle), Some(&mut tick))
    } else if builtin {
        py.allow_threads(|| cfg.run(trace_path.as_deref(), Some(&mut tick)))
    } else {
        cfg.run_with(externals(cpufreq, cpuidle), trace_path.as_deref(), Some(&mut tick))
    };
    finish(check, result).map(|r| json(&r))
}

/// Run the simulation `config_json` describes with its trace kept in
/// memory; returns `{"run", "timeline"}` as JSON: the result as `run`
/// answers it and the per-CPU timeline as `trace_timeline` builds one
/// (`max_spans` None: the engine's default). GIL, progress, Ctrl-C and
/// Python governors as for `run`.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
#[pyo3(signature = (config_json, max_spans=None, progress=None, cpufreq=None, cpuidle=None))]
fn run_timeline(
    py: Python<'_>,
    config_json: &str,
    max_spans: Option<usize>,
    progress: Option<PyObject>,
    cpufreq: Option<(String, PyObject)>,
    cpuidle: Option<(String, PyObject)>,
) -> PyResult<String> {
    let cfg = config(config_json)?;
    let mut check = Check::new(progress);
    let mut tick = |d, t| check.tick(d, t);
    let result = if cpufreq.is_none() && cpuidle.is_none() {
        py.allow_threads(|| cfg.run_timeline(max_spans, Some(&mut tick)))
    } else {
        cfg.run_timeline_with(externals(cpufreq, cpuidle), max_spans, Some(&mut tick))
    };
    finish(check, result).map(|r| json(&r))
}

/// Run the simulation `config_json` describes with its trace kept in
/// memory; returns the result as JSON and the trace (see [`table`]). GIL,
/// progress, Ctrl-C and Python governors as for `run`.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
#[pyo3(signature = (config_json, progress=None, cpufreq=None, cpuidle=None))]
fn run_trace(
    py: Python<'_>,
    config_json: &str,
    progress: Option<PyObject>,
    cpufreq: Option<(String, PyObject)>,
    cpuidle: Option<(String, PyObject)>,
) -> PyResult<(String, table::TraceData)> {
    let cfg = config(config_json)?;
    let mut check = Check::new(progress);
    let mut tick = |d, t| check.tick(d, t);
    let result = if cpufreq.is_none() && cpuidle.is_none() {
        py.allow_threads(|| cfg.run_trace(Some(&mut tick)))
    } else {
        cfg.run_trace_with(externals(cpufreq, cpuidle), Some(&mut tick))
    };
    finish(check, result).map(|(r, t)| (json(&r), table::TraceData::new(t, None)))
}

/// The catalogue of `kind` ("platforms", "workloads", "governors") as JSON.
/// The catalogue of `kind` ("platforms", "workloads", "governors",
/// "kernels") as JSON; the governors as in `kernel` when given.
#[pyfunction]
#[pyo3(name = "list", signature = (kind, kernel=None))]
fn list_(kind: &str, kernel: Option<&str>) -> PyResult<String> {
    api::list_for(kind, kernel).map(|c| json_sorted(&c)).map_err(error::to_py)
}

/// What a run on `platform` under `kernel` (None: the defaults) uses for
/// each field left out, as JSON.
#[pyfunction]
#[pyo3(signature = (platform=None, kernel=None))]
fn defaults(platform: Option<&str>, kernel: Option<&str>) -> PyResult<String> {
    api::defaults(platform, kernel).map(|d| json(&d)).map_err(error::to_py)
}

/// The resolved tunables and parameters of the run `config_json` describes, as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, cpufreq=None, cpuidle=None))]
fn show_config(config_json: &str, cpufreq: Option<(String, PyObject)>, cpuidle: Option<(String, PyObject)>) -> PyResult<String> {
    let shown = config(config_json)?.show_with(externals(cpufreq, cpuidle)).map_err(error::to_py)?;
    Ok(serde_json::to_value(shown).and_then(|v| serde_json::to_string_pretty(&v)).unwrap_or_default())
}

/// The Python governors of a run, as the engine takes them.
fn externals(cpufreq: Option<(String, PyObject)>, cpuidle: Option<(String, PyObject)>) -> ExternalGovernors {
    ExternalGovernors {
        cpufreq: cpufreq.map(|(name, gov)| governor::cpufreq::factory(name, gov)),
        cpuidle: cpuidle.map(|(name, gov)| governor::cpuidle::factory(name, gov)),
    }
}

/// `govlab trace stats`: the trace in `path` analysed with the idle states
/// of `platform` (else the trace header's, else the defaults), as JSON. Releases the GIL while reading.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
#[pyo3(signature = (path, platform=None))]
fn trace_stats(py: Python<'_>, path: PathBuf, platform: Option<&str>) -> PyResult<String> {
    py.allow_threads(|| api::trace_stats(&path, platform)).map(|s| json(&s)).map_err(error::to_py)
}

/// `govlab trace stats --html`: `{"stats", "timeline"}` of the trace in
/// `path` as JSON (`max_spans` None: the engine's default). Releases the GIL.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
#[pyo3(signature = (path, platform=None, max_spans=None))]
fn trace_timeline(py: Python<'_>, path: PathBuf, platform: Option<&str>, max_spans: Option<usize>) -> PyResult<String> {
    py.allow_threads(|| api::trace_timeline(&path, platform, max_spans)).map(|t| json_sorted(&t)).map_err(error::to_py)
}

/// `govlab trace replay`: the trace's tasks re-simulated as `config_json`
/// says (without a platform: the trace header's, else the default one);
/// returns `{"run", "recorded", "tasks"}` as JSON. Progress and Ctrl-C
/// as for `run`.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
#[pyo3(signature = (path, config_json, pin=false, progress=None, timed_wakeups=false))]
fn replay(py: Python<'_>, path: PathBuf, config_json: &str, pin: bool, progress: Option<PyObject>, timed_wakeups: bool) -> PyResult<String> {
    let args = run_args(config_json)?;
    let mut check = Check::new(progress);
    let wakeups = if timed_wakeups { Wakeups::Timed } else { Wakeups::Follow };
    let result = py.allow_threads(|| api::replay_args(&path, args, pin, wakeups, Some(&mut |d, t| check.tick(d, t))));
    finish(check, result).map(|r| json_sorted(&r))
}

/// The engine's progress callback, throttled to [`CHECK_EVERY`].
struct Check {
    progress: Option<PyObject>,
    last: Instant,
    /// The first Python exception seen; once set, the engine is told to stop.
    pending: Option<PyErr>,
}

impl Check {
    fn new(progress: Option<PyObject>) -> Self {
        Check {
            progress,
            last: Instant::now(),
            pending: None,
        }
    }

    /// Returns false to stop the run.
    fn tick(&mut self, done_ns: u64, total_ns: u64) -> bool {
        if self.pending.is_some() {
            return false;
        }
        if self.last.elapsed() < CHECK_EVERY && done_ns < total_ns {
            return true;
        }
        self.last = Instant::now();
        let outcome = Python::with_gil(|py| {
            py.check_signals()?;
            self.progress
                .as_ref()
                .map_or(Ok(()), |f| f.call1(py, (done_ns, total_ns)).map(drop))
        });
        outcome.map_err(|e| self.pending = Some(e)).is_ok()
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", govlab_core::api::VERSION)?;
    m.add("__engine__", govlab_core::api::ENGINE_DIGEST)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_timeline, m)?)?;
    m.add_function(wrap_pyfunction!(run_trace, m)?)?;
    m.add_function(wrap_pyfunction!(check_cost, m)?)?;
    m.add_function(wrap_pyfunction!(table::trace_read, m)?)?;
    m.add_class::<table::TraceData>()?;
    m.add_function(wrap_pyfunction!(list_, m)?)?;
    m.add_function(wrap_pyfunction!(show_config, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_class::<governor::platform::PlatformView>()?;
    m.add_class::<governor::platform::PolicyInfo>()?;
    m.add_class::<governor::platform::KernelView>()?;
    m.add_class::<governor::cpufreq::PolicyView>()?;
    governor::cpufreq::install_readers(m.py())?;
    m.add_class::<governor::hwp::HwpRequestPy>()?;
    m.add_class::<governor::hwp::HwpCapsView>()?;
    m.add("EPP_NAMES", govlab_core::cpufreq::intel_pstate::EPP_NAMES.to_vec())?;
    m.add_class::<governor::cpuidle::IdleDeviceView>()?;
    m.add_class::<governor::cpuidle::IdleStateView>()?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_timeline, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    error::register(m)
}

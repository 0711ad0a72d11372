//! Governors written in Python, on the engine's governor traits.
//!
//! The engine takes a governor brought from outside through
//! `govlab_core::external`: the run configuration names it `external` and a
//! factory builds it for the platform. Here the factories wrap a Python
//! object (an instance of `govlab.governors.CpufreqGovernor` or
//! `CpuidleGovernor`) in [`cpufreq::PyCpufreq`] or [`cpuidle::PyCpuidle`],
//! which call its methods with the GIL held.
//!
//! # The protocol (what the Python object must have)
//!
//! Both kinds: `init(platform)` once, when the run is built, with a
//! [`platform::PlatformView`]; `tunable_values()` after it, a list of
//! (name, value text) for `--show-config`. cpufreq: `start(policy)`,
//! `update(policy, cpu, time_ns, util, max, flags)` (called only if
//! `uses_util_hook` is true) and `timer(policy, time_ns)`, each returning a
//! frequency in kHz, an [`hwp::HwpRequestPy`] (where the policy's `hwp` is
//! not None) or None; `driver`, None or the driver the governor is part of
//! ("intel_pstate": its active mode, where HWP requests are written). cpuidle: `enable(dev)`, `select(dev,
//! next_timer_ns, latency_req_ns, tick_stopped)` returning a state index or
//! (state, stop_tick), `reflect(dev, state, measured_ns)`.
//!
//! # Cost of a call
//!
//! The views handed to Python (a policy, an idle device) are built once per
//! policy or CPU and refreshed in place before each call; a policy's fixed
//! data are struct members, which the interpreter reads without calling
//! into Rust; the methods are looked up once; arguments are plain ints. A
//! run with a Python governor keeps the GIL (see `run` in lib.rs), so taking
//! it per call is a counter increment. The cpufreq hook (`update`, on most
//! scheduler events) is called through vectorcall, without a tuple of
//! arguments; the ints it passes or a view returns are made once when they
//! can be (0 to 1024, see [`int`]; the time while it stays; the limits
//! while they stay); the per-CPU readers a hook calls most are plain C
//! methods ([`cpufreq::install_readers`]).
//!
//! # Failures
//!
//! A Python exception, a wrong return type (found here, converting) or a
//! value outside what the engine can apply (found by the engine, in
//! `govlab_core::external`) becomes [`Error::Governor`], naming the governor, the
//! call and the simulated time; for an exception the message carries the
//! Python traceback, which holds only the governor's own frames (the call
//! comes from Rust). A KeyboardInterrupt raised inside the governor's code
//! (Ctrl-C while Python runs) is [`Error::Interrupted`]. After a failure the
//! governor is not called again; it answers harmlessly until the engine
//! takes the error and stops the run.

pub(crate) mod cpufreq;
pub(crate) mod cpuidle;
pub(crate) mod hwp;
pub(crate) mod platform;

use std::collections::BTreeSet;
use std::sync::Mutex;

use govlab_core::Error;
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyInt, PyTuple};

/// `name()` must be `&'static str`: each distinct name is leaked once.
pub(crate) fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// What the governor is, for messages: `cpufreq governor py:FILE:Class`.
pub(crate) struct Who {
    pub name: &'static str,
    pub kind: &'static str,
}

impl Who {
    pub fn new(kind: &'static str, name: &str) -> Self {
        Who { name: intern(name), kind }
    }

    /// A failure of `call` at `time_ns`.
    pub fn error(&self, call: &str, time_ns: u64, message: String) -> Error {
        Error::Governor {
            governor: format!("{} governor {}", self.kind, self.name),
            call: format!("{call}()"),
            time_ns,
            message,
        }
    }

    /// A Python exception raised by `call`.
    pub fn exception(&self, py: Python<'_>, call: &str, time_ns: u64, err: &PyErr) -> Error {
        if err.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Error::Interrupted;
        }
        self.error(call, time_ns, exception_text(py, err))
    }
}

/// `ExcType: message`, then the traceback as Python prints it.
fn exception_text(py: Python<'_>, err: &PyErr) -> String {
    let head = match err.value(py).str() {
        Ok(s) if !s.to_string_lossy().is_empty() => format!("{}: {}", type_name(err.get_type(py).as_any()), s.to_string_lossy()),
        _ => type_name(err.get_type(py).as_any()),
    };
    let lines = py
        .import("traceback")
        .and_then(|tb| tb.call_method1("format_exception", (err.get_type(py), err.value(py), err.traceback(py))))
        .and_then(|lines| lines.extract::<Vec<String>>());
    match lines {
        Ok(lines) => format!("{head}\n{}", lines.concat().trim_end()),
        Err(_) => head,
    }
}

/// `int`, `MyClass`: the qualified name of a type.
fn type_name(t: &Bound<'_, PyAny>) -> String {
    t.getattr("__qualname__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "?".into())
}

/// How a returned value shows in a message: `'abc' (str)`.
pub(crate) fn shown(v: &Bound<'_, PyAny>) -> String {
    let repr = v.repr().map_or_else(|_| "?".into(), |r| r.to_string_lossy().into_owned());
    let repr = if repr.chars().count() > 60 { format!("{}...", repr.chars().take(57).collect::<String>()) } else { repr };
    format!("{repr} ({})", type_name(v.get_type().as_any()))
}

/// A Python int (not a bool) that fits an i64; None for anything else.
pub(crate) fn int_of(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return None;
    }
    v.extract::<i64>().ok()
}

/// The ints a hook's arguments and the views' figures take most often:
/// utilisation, capacity and their sums run from 0 to SCHED_CAPACITY_SCALE
/// (1024), above CPython's own cache of small ints (up to 256).
const CACHED_INTS: u64 = 1024;

static SMALL_INTS: GILOnceCell<Vec<Py<PyInt>>> = GILOnceCell::new();

/// `v` as a Python int; from 0 to [`CACHED_INTS`] one made once per
/// process, so that passing or returning it allocates nothing.
pub(crate) fn int(py: Python<'_>, v: u64) -> Bound<'_, PyInt> {
    if v <= CACHED_INTS {
        let ints = SMALL_INTS.get_or_init(py, || (0..=CACHED_INTS).map(|i| new_int(py, i).unbind()).collect());
        if let Some(i) = ints.get(v as usize) {
            return i.bind(py).clone();
        }
    }
    new_int(py, v)
}

fn new_int(py: Python<'_>, v: u64) -> Bound<'_, PyInt> {
    let Ok(i) = v.into_pyobject(py);
    i
}

/// A tuple of Python objects built from `items`.
pub(crate) fn tuple<'py, T, I>(py: Python<'py>, items: I) -> PyResult<Py<PyTuple>>
where
    T: IntoPyObject<'py>,
    I: IntoIterator<Item = T>,
    I::IntoIter: ExactSizeIterator,
{
    Ok(PyTuple::new(py, items)?.unbind())
}

/// The object's method `name`, looked up once.
pub(crate) fn method(gov: &Bound<'_, PyAny>, name: &str) -> PyResult<PyObject> {
    Ok(gov.getattr(name)?.unbind())
}

/// `init(platform)` then `tunable_values()`, when the run is built.
pub(crate) fn init(py: Python<'_>, who: &Who, gov: &Bound<'_, PyAny>, ctx: &govlab_core::kernel::BuildCtx) -> govlab_core::Result<Vec<(String, String)>> {
    let view = Py::new(py, platform::PlatformView::new(py, ctx).map_err(|e| who.exception(py, "init", 0, &e))?)
        .map_err(|e| who.exception(py, "init", 0, &e))?;
    gov.call_method1("init", (view,)).map_err(|e| who.exception(py, "init", 0, &e))?;
    let values = gov.call_method0("tunable_values").map_err(|e| who.exception(py, "tunable_values", 0, &e))?;
    values
        .extract::<Vec<(String, String)>>()
        .map_err(|_| who.error("tunable_values", 0, format!("returned {}; expected a list of (name, value) strings", shown(&values))))
}

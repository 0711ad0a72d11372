//! The exception hierarchy, and the one mapping from [`govlab_core::Error`].
//!
//! ```text
//! Exception
//! └── GovlabError
//!     ├── UnknownNameError   (+ ValueError) Error::UnknownName
//!     ├── InvalidValueError  (+ ValueError) Error::InvalidValue
//!     ├── UnknownKeyError    (+ ValueError) Error::UnknownKey
//!     ├── FileFormatError                   Error::File
//!     ├── TraceError                        Error::Trace
//!     ├── UnsupportedError                  Error::Unsupported
//!     └── GovernorError                     Error::Governor
//! Error::Io          -> govlab.exceptions.file_error: a FileAccessError (+ OSError,
//!                       FileNotFoundError or PermissionError by errno) with errno and filename
//! Error::Interrupted -> KeyboardInterrupt
//! ```
//!
//! `FileAccessError` and its subclasses are Python classes (`python/govlab/exceptions.py`,
//! the one place the whole hierarchy is written down); an I/O error is handed to
//! that module's `file_error`.
//!
//! `UnknownKeyError` is a `ValueError`, not a `KeyError`: the key sits inside a
//! spec string the caller wrote (`performance:foo=1`), and `str()` of a
//! `KeyError` quotes its message, which would garble the CLI's error line.
//!
//! Every message is the engine's own `Display` text; nothing is reworded here.
//! The classes' `__module__` is `govlab`, where `python/govlab` re-exports them.

use std::io::ErrorKind;

use govlab_core::Error;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyboardInterrupt, PyOSError, PyPermissionError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyType};

create_exception!(
    govlab,
    GovlabError,
    PyException,
    "Base class of every error govlab raises."
);
create_exception!(
    govlab,
    FileFormatError,
    GovlabError,
    "A platform or workload file that cannot be used (syntax or content)."
);
create_exception!(
    govlab,
    TraceError,
    GovlabError,
    "A trace that cannot be read."
);
create_exception!(
    govlab,
    UnsupportedError,
    GovlabError,
    "A governor requirement that the platform's cpufreq driver cannot meet."
);

create_exception!(
    govlab,
    GovernorError,
    GovlabError,
    "A governor written in Python failed during a run (it raised, or answered something the engine cannot apply)."
);

/// Classes with two bases, which `create_exception!` cannot make: built once
/// by calling `type(name, (GovlabError, ValueError), ns)`.
static INVALID_VALUE_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static UNKNOWN_KEY_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static UNKNOWN_NAME_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn value_error_class<'py>(
    py: Python<'py>,
    cell: &'static GILOnceCell<Py<PyType>>,
    name: &str,
    doc: &str,
) -> PyResult<Bound<'py, PyType>> {
    let class = cell.get_or_try_init(py, || {
        let bases = (py.get_type::<GovlabError>(), py.get_type::<PyValueError>());
        let ns = PyDict::new(py);
        ns.set_item("__module__", "govlab")?;
        ns.set_item("__doc__", doc)?;
        let class = py.get_type::<PyType>().call1((name, bases, ns))?;
        Ok::<_, PyErr>(class.downcast_into::<PyType>()?.unbind())
    })?;
    Ok(class.bind(py).clone())
}

fn invalid_value_error(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    value_error_class(
        py,
        &INVALID_VALUE_ERROR,
        "InvalidValueError",
        "A tunable or parameter value outside what it accepts; also a ValueError.",
    )
}

fn unknown_key_error(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    value_error_class(
        py,
        &UNKNOWN_KEY_ERROR,
        "UnknownKeyError",
        "A tunable or parameter key that its owner does not have; also a ValueError.",
    )
}

fn unknown_name_error(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    value_error_class(
        py,
        &UNKNOWN_NAME_ERROR,
        "UnknownNameError",
        "A platform, workload, governor or other name that govlab does not know; also a ValueError.",
    )
}

/// `govlab.exceptions.file_error(errno, message, filename)` (the system's text for
/// the errno, or the engine's message when there is none): the notebook API's
/// file error, so that every error is a `GovlabError` (the module is loaded by
/// the time an engine call can fail: `govlab` imports it).
fn file_error(path: &std::path::Path, source: &std::io::Error, msg: String) -> PyErr {
    Python::with_gil(|py| {
        let made = py.import("govlab.exceptions").and_then(|m| {
            let path = path.to_string_lossy().into_owned();
            match source.raw_os_error() {
                Some(errno) => m.getattr("file_error")?.call1((errno, None::<String>, path)),
                None => m.getattr("file_error")?.call1((None::<i32>, msg.clone(), path)),
            }
        });
        match made {
            Ok(err) => PyErr::from_value(err),
            Err(_) => match source.kind() {
                ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
                ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
                _ => PyOSError::new_err(msg),
            },
        }
    })
}

/// The Python exception for an engine error.
pub(crate) fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    match err {
        Error::UnknownName { .. } => Python::with_gil(|py| match unknown_name_error(py) {
            Ok(class) => PyErr::from_type(class, msg),
            Err(e) => e,
        }),
        Error::InvalidValue { .. } => Python::with_gil(|py| match invalid_value_error(py) {
            Ok(class) => PyErr::from_type(class, msg),
            Err(e) => e,
        }),
        Error::UnknownKey { .. } => Python::with_gil(|py| match unknown_key_error(py) {
            Ok(class) => PyErr::from_type(class, msg),
            Err(e) => e,
        }),
        Error::File { .. } => FileFormatError::new_err(msg),
        Error::Trace { .. } => TraceError::new_err(msg),
        Error::Io { path, source } => file_error(&path, &source, msg),
        Error::Unsupported(_) => UnsupportedError::new_err(msg),
        Error::Governor { .. } => GovernorError::new_err(msg),
        Error::Interrupted => PyKeyboardInterrupt::new_err(()),
        _ => GovlabError::new_err(msg),
    }
}

/// Add the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GovlabError", py.get_type::<GovlabError>())?;
    m.add("UnknownNameError", unknown_name_error(py)?)?;
    m.add("InvalidValueError", invalid_value_error(py)?)?;
    m.add("UnknownKeyError", unknown_key_error(py)?)?;
    m.add("FileFormatError", py.get_type::<FileFormatError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("GovernorError", py.get_type::<GovernorError>())?;
    Ok(())
}

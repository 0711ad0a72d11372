//! Traces as Python objects, and their event tables as Arrow tables.
//!
//! The engine builds an event type's rows as plain column vectors
//! ([`govlab_core::trace::columns`]); here each vector becomes an Arrow
//! array, moved, not copied (`Vec<i64>` and `Vec<f64>` become Arrow buffers
//! as they are; a text column is dictionary-coded, its codes moved and its
//! distinct values copied once), and the table crosses to Python through the
//! Arrow C data interface as a `pyo3_arrow::PyTable`: an object with
//! `__arrow_c_stream__`, which `pyarrow.table()` and `polars.DataFrame()`
//! import without touching the rows.
//!
//! Why pyo3-arrow: it is the binding the arro3 project keeps for exactly
//! this (Arrow's PyCapsule interface over arrow-rs), its 0.7 release is
//! built on this crate's pyo3 0.23, and it needs no Python package of its
//! own: any consumer of the PyCapsule interface (pyarrow, polars, nanoarrow,
//! duckdb) reads what it exports. Text columns are dictionaries (pandas
//! reads them as `category`, as LISA types its `comm` columns), so a
//! two-million-event trace's command names are a few hundred strings.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use govlab_core::api;
use govlab_core::trace::columns::{event_table, Values};
use govlab_core::trace::{stats, Trace};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_arrow::PyTable;

use crate::error;

/// A trace in memory: read from a file, or kept from a simulated run.
#[pyclass(module = "govlab._core", name = "TraceData", frozen)]
pub struct TraceData {
    trace: Arc<Trace>,
    /// The file it was read from (None: a simulated run kept in memory).
    path: Option<PathBuf>,
}

impl TraceData {
    pub fn new(trace: Trace, path: Option<PathBuf>) -> Self {
        TraceData { trace: Arc::new(trace), path }
    }

    fn shown_path(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(|| PathBuf::from("<simulated run>"))
    }
}

#[pymethods]
impl TraceData {
    /// The events named `name` as an Arrow table (LISA's columns; no rows
    /// when the trace has none). Releases the GIL while building.
    fn event_table(&self, py: Python<'_>, name: &str) -> PyResult<PyTable> {
        let trace = Arc::clone(&self.trace);
        let table = py.allow_threads(|| event_table(&trace, name));
        to_arrow(table.columns)
    }

    /// Event counts by name, as `[(name, count), ...]` sorted by name.
    fn counts(&self) -> Vec<(String, u64)> {
        self.trace.counts().into_iter().collect()
    }

    /// The reader's format name (`trace.dat`, `ftrace-text`, `govlab-run`, ...).
    #[getter]
    fn format(&self) -> &'static str {
        self.trace.format.as_str()
    }

    #[getter]
    fn nr_cpus(&self) -> usize {
        self.trace.nr_cpus
    }

    /// `(first, last)` event time, ns.
    #[getter]
    fn span_ns(&self) -> (u64, u64) {
        self.trace.span_ns()
    }

    #[getter]
    fn events(&self) -> usize {
        self.trace.events.len()
    }

    /// What the reader skipped or assumed.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.trace.notes.clone()
    }

    /// The header's `# govlab:` keys (empty for a real machine's recording).
    #[getter]
    fn meta(&self) -> Vec<(String, String)> {
        self.trace.meta.clone().into_iter().collect()
    }

    /// `trace stats`' figures and the per-CPU timeline, as `{"stats", "timeline"}` JSON,
    /// with `platform`'s idle states (None: the header's, else the defaults).
    #[pyo3(signature = (platform=None, max_spans=None))]
    fn stats_json(&self, py: Python<'_>, platform: Option<&str>, max_spans: Option<usize>) -> PyResult<String> {
        let path = self.shown_path();
        let trace = Arc::clone(&self.trace);
        py.allow_threads(|| {
            let plat = api::trace_platform(&trace, &path, platform)?;
            let max_spans = max_spans.unwrap_or(govlab_core::trace::timeline::MAX_SPANS);
            if max_spans == 0 {
                return Err(govlab_core::Error::invalid("timeline", "max_spans", 0, "at least 1"));
            }
            stats::stats_with_timeline(&trace, plat.as_ref().map(|p| &p.platform), max_spans)
        })
        .map(|(s, t)| serde_json::json!({"stats": s, "timeline": t}).to_string())
        .map_err(error::to_py)
    }
}

/// The trace in `path`, read (any format `trace stats` reads). Releases the GIL.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 hands arguments over by value
pub fn trace_read(py: Python<'_>, path: PathBuf) -> PyResult<TraceData> {
    let trace = py.allow_threads(|| govlab_core::trace::read_path(&path)).map_err(error::to_py)?;
    Ok(TraceData::new(trace, Some(path)))
}

/// The columns as one Arrow record batch in a table.
fn to_arrow(columns: Vec<govlab_core::trace::columns::Column>) -> PyResult<PyTable> {
    let mut fields = Vec::with_capacity(columns.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    for c in columns {
        let (dtype, array): (DataType, ArrayRef) = match c.values {
            Values::F64(v) => (DataType::Float64, Arc::new(Float64Array::from(v))),
            Values::I64(v) => (DataType::Int64, Arc::new(Int64Array::from(v))),
            Values::Text(d) => {
                let keys = UInt32Array::from(d.codes);
                let values: ArrayRef = Arc::new(StringArray::from(d.values));
                let dict = DictionaryArray::<UInt32Type>::try_new(keys, values).map_err(|e| PyValueError::new_err(e.to_string()))?;
                (DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8)), Arc::new(dict))
            }
        };
        fields.push(Field::new(c.name, dtype, false));
        arrays.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyTable::try_new(vec![batch], schema)
}

//! HWP for Python governors: the request a cpufreq call may return, and the
//! capabilities a policy shows when it takes one.

use govlab_core::cpufreq::HwpCaps;
use govlab_core::external::CpufreqAnswer;
use govlab_core::platform::hwp::HWP_EPP_FIRMWARE_DEFAULT;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use super::{int_of, shown};

/// An HWP request (MSR_HWP_REQUEST): performance levels `min_perf`,
/// `max_perf`, `desired_perf` (0: the hardware chooses) and the
/// energy-performance preference `epp` (0 performance … 255 energy).
///
/// The values are kept as given; the engine checks them when a governor
/// returns the request (`govlab_core::external::apply_cpufreq`).
#[pyclass(frozen, eq, hash, module = "govlab.governors", name = "HwpRequest")]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct HwpRequestPy {
    #[pyo3(get)]
    min_perf: i64,
    #[pyo3(get)]
    max_perf: i64,
    #[pyo3(get)]
    desired_perf: i64,
    #[pyo3(get)]
    epp: i64,
}

impl HwpRequestPy {
    /// The request as the engine takes it (unchecked).
    pub(crate) fn answer(&self) -> CpufreqAnswer {
        CpufreqAnswer::Hwp { min_perf: self.min_perf, max_perf: self.max_perf, desired_perf: self.desired_perf, epp: self.epp }
    }
}

fn field(name: &str, v: Option<&Bound<'_, PyAny>>, default: i64) -> PyResult<i64> {
    match v {
        None => Ok(default),
        Some(v) => int_of(v).ok_or_else(|| PyTypeError::new_err(format!("HwpRequest: {name} is {}; expected an int", shown(v)))),
    }
}

#[pymethods]
impl HwpRequestPy {
    #[new]
    #[pyo3(signature = (min_perf, max_perf, desired_perf = None, epp = None))]
    #[pyo3(text_signature = "(min_perf, max_perf, desired_perf=0, epp=128)")]
    fn new(
        min_perf: &Bound<'_, PyAny>,
        max_perf: &Bound<'_, PyAny>,
        desired_perf: Option<&Bound<'_, PyAny>>,
        epp: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(HwpRequestPy {
            min_perf: field("min_perf", Some(min_perf), 0)?,
            max_perf: field("max_perf", Some(max_perf), 0)?,
            desired_perf: field("desired_perf", desired_perf, 0)?,
            epp: field("epp", epp, i64::from(HWP_EPP_FIRMWARE_DEFAULT))?,
        })
    }

    pub(crate) fn __repr__(&self) -> String {
        format!(
            "HwpRequest(min_perf={}, max_perf={}, desired_perf={}, epp={})",
            self.min_perf, self.max_perf, self.desired_perf, self.epp
        )
    }
}

/// HWP_CAPABILITIES of a policy's CPUs (read-only): performance levels, and
/// kHz per level.
#[pyclass(frozen, module = "govlab.governors", name = "HwpCaps")]
#[allow(clippy::struct_field_names)] // HWP_CAPABILITIES' own names
pub(crate) struct HwpCapsView {
    #[pyo3(get)]
    lowest_perf: u32,
    #[pyo3(get)]
    guaranteed_perf: u32,
    #[pyo3(get)]
    highest_perf: u32,
    #[pyo3(get)]
    khz_per_perf: u32,
}

impl From<HwpCaps> for HwpCapsView {
    fn from(c: HwpCaps) -> Self {
        HwpCapsView {
            lowest_perf: c.lowest_perf,
            guaranteed_perf: c.guaranteed_perf,
            highest_perf: c.highest_perf,
            khz_per_perf: c.khz_per_perf,
        }
    }
}

#[pymethods]
impl HwpCapsView {
    fn __repr__(&self) -> String {
        format!(
            "HwpCaps(lowest_perf={}, guaranteed_perf={}, highest_perf={}, khz_per_perf={})",
            self.lowest_perf, self.guaranteed_perf, self.highest_perf, self.khz_per_perf
        )
    }
}

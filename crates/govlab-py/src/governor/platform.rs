//! The machine as a Python governor's `init(platform)` sees it: plain,
//! read-only data copied from the engine's platform once per run.

use govlab_core::platform::Platform;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::tuple;

/// The simulated machine (read-only).
#[pyclass(frozen, module = "govlab.governors", name = "Platform")]
pub(crate) struct PlatformView {
    /// Platform name, `skylake-e3-1240v5`.
    #[pyo3(get)]
    name: String,
    /// The cpufreq driver: `acpi-cpufreq`, `intel_pstate`, ...
    #[pyo3(get)]
    driver: String,
    /// Hardware P-states (Intel HWP) present and on.
    #[pyo3(get)]
    hwp: bool,
    /// The firmware's preferred PM profile: `enterprise-server`, `desktop`, ...
    #[pyo3(get)]
    acpi_pm_profile: &'static str,
    /// CONFIG_HZ of the simulated kernel.
    #[pyo3(get)]
    hz: u32,
    /// TICK_NSEC, ns.
    #[pyo3(get)]
    tick_ns: u64,
    #[pyo3(get)]
    nr_cpus: usize,
    /// One [`PolicyInfo`] per cpufreq policy (frequency domain), by id.
    #[pyo3(get)]
    policies: Py<PyTuple>,
}

/// One cpufreq policy's fixed data (read-only).
#[pyclass(frozen, module = "govlab.governors", name = "PolicyInfo")]
pub(crate) struct PolicyInfo {
    #[pyo3(get)]
    id: usize,
    /// CPUs of the policy.
    #[pyo3(get)]
    cpus: Py<PyTuple>,
    /// The frequency table, kHz, ascending.
    #[pyo3(get)]
    opps: Py<PyTuple>,
    #[pyo3(get)]
    cpuinfo_min_khz: u32,
    #[pyo3(get)]
    cpuinfo_max_khz: u32,
    /// cpuinfo.transition_latency, ns.
    #[pyo3(get)]
    transition_latency_ns: u64,
}

impl PlatformView {
    pub fn new(py: Python<'_>, p: &Platform) -> PyResult<Self> {
        let policies = (0..p.freq_domains.len())
            .map(|d| {
                let ct = p.domain_type(d);
                Py::new(
                    py,
                    PolicyInfo {
                        id: d,
                        cpus: tuple(py, p.freq_domains[d].cpus.iter().copied())?,
                        opps: tuple(py, ct.opps.iter().map(|o| o.khz))?,
                        cpuinfo_min_khz: ct.min_khz(),
                        cpuinfo_max_khz: ct.max_khz(),
                        transition_latency_ns: ct.transition_latency_ns,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PlatformView {
            name: p.name.clone(),
            driver: p.driver.name().to_string(),
            hwp: p.hwp,
            acpi_pm_profile: p.acpi_pm_profile.name(),
            hz: p.hz,
            tick_ns: p.tick_ns(),
            nr_cpus: p.nr_cpus(),
            policies: tuple(py, policies)?,
        })
    }
}

#[pymethods]
impl PlatformView {
    fn __repr__(&self) -> String {
        format!("<Platform {} ({} CPUs, {}, HZ={})>", self.name, self.nr_cpus, self.driver, self.hz)
    }
}

#[pymethods]
impl PolicyInfo {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<PolicyInfo {} cpus={}>", self.id, self.cpus.bind(py).str().map_or_else(|_| "?".into(), |s| s.to_string()))
    }
}

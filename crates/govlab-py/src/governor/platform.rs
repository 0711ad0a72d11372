//! The machine and the kernel as a Python governor's `init(platform)` sees
//! them: plain, read-only data copied from the run's build context once per
//! run.

use govlab_core::kernel::{BuildCtx, ERAS};
use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyFrozenSetMethods, PyTuple};

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
    /// The run's kernel ([`KernelView`]).
    #[pyo3(get)]
    kernel: Py<KernelView>,
}

/// The run's kernel (read-only): its version and the eras it has, named as
/// `govlab list kernels` names them.
#[pyclass(frozen, module = "govlab.governors", name = "Kernel")]
pub(crate) struct KernelView {
    /// The version whose semantics run, `6.8`.
    #[pyo3(get)]
    version: String,
    /// (major, minor) of [`version`](Self::version).
    #[pyo3(get)]
    version_tuple: (u32, u32),
    /// The version as asked (`5.4` runs 5.2's semantics).
    #[pyo3(get)]
    requested: String,
    /// The names of the eras this version has.
    #[pyo3(get)]
    eras: Py<PyFrozenSet>,
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
    pub fn new(py: Python<'_>, ctx: &BuildCtx) -> PyResult<Self> {
        let p = &ctx.platform;
        let k = &ctx.kernel;
        let names: Vec<&str> = ERAS.iter().filter(|e| k.has(e.id)).map(|e| e.name).collect();
        let kernel = KernelView {
            version: k.version.to_string(),
            version_tuple: (k.version.major, k.version.minor),
            requested: k.requested.to_string(),
            eras: PyFrozenSet::new(py, names)?.unbind(),
        };
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
            hwp: ctx.hwp,
            acpi_pm_profile: p.acpi_pm_profile.name(),
            hz: ctx.hz,
            tick_ns: ctx.tick_ns(),
            nr_cpus: p.nr_cpus(),
            policies: tuple(py, policies)?,
            kernel: Py::new(py, kernel)?,
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
impl KernelView {
    /// Whether the kernel has the era `name` (as `govlab list kernels`
    /// names it); an unknown name is an error naming the eras.
    fn has(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        if !ERAS.iter().any(|e| e.name == name) {
            let names: Vec<&str> = ERAS.iter().map(|e| e.name).collect();
            return Err(pyo3::exceptions::PyValueError::new_err(format!("no kernel era named '{name}'; eras: {}", names.join(", "))));
        }
        self.eras.bind(py).contains(name)
    }

    fn __repr__(&self) -> String {
        format!("<Kernel {}>", self.version)
    }
}

#[pymethods]
impl PolicyInfo {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<PolicyInfo {} cpus={}>", self.id, self.cpus.bind(py).str().map_or_else(|_| "?".into(), |s| s.to_string()))
    }
}

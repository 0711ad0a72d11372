//! What the machine's unit tests share: an engine built from the same
//! settings a user gives (`api::RunConfig`), the idle governor menu and
//! seed 1 unless a test needs others.

use super::engine::{build, Engine};
use crate::api::RunConfig;
use crate::params::Spec;
use crate::sim::Time;

/// An engine for `platform`, `kernel`, `workload` and `cpufreq` (each
/// `NAME[:key=value,...]`) under menu with seed 1, built for `ns` of
/// simulated time and not yet run.
pub fn engine(platform: &str, kernel: &str, workload: &str, cpufreq: &str, ns: Time) -> Engine {
    let cfg = RunConfig {
        platform: Spec::parse(platform, "test").unwrap(),
        kernel: Spec::parse(kernel, "test").unwrap(),
        workload: Spec::parse(workload, "test").unwrap(),
        cpufreq: Spec::parse(cpufreq, "test").unwrap(),
        cpuidle: Spec::new("menu"),
        duration_ns: ns,
        seed: 1,
        interval_ns: None,
    };
    build(cfg.parts().unwrap(), None).unwrap()
}

/// [`engine`], run to its end.
pub fn ran(platform: &str, kernel: &str, workload: &str, cpufreq: &str, ns: Time) -> Engine {
    let mut e = engine(platform, kernel, workload, cpufreq, ns);
    e.run(None).unwrap();
    e
}

//! Energy-Aware Scheduling on whole runs (machine/eas.rs).

use super::engine::{build, Engine};
use crate::api::RunConfig;
use crate::params::Spec;
use crate::sim::Time;

fn engine(platform: &str, kernel: &str, workload: &str, cpufreq: &str, ns: Time) -> Engine {
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

const MS: u64 = 1_000_000;

/// EAS runs only where every condition of build_perf_domains holds.
#[test]
fn eas_needs_asymmetry_an_energy_model_schedutil_and_the_sysctl() {
    let on = |p: &str, k: &str, g: &str| engine(p, k, "idle", g, MS).eas.is_some();
    assert!(on("juno-r0", "6.8", "schedutil"));
    assert!(on("juno-r0", "5.2", "schedutil"));
    assert!(!on("juno-r0", "4.19", "schedutil"), "no EAS before v5.0");
    assert!(!on("juno-r0", "6.8:sched_energy_aware=off", "schedutil"));
    assert!(!on("juno-r0", "6.8", "ondemand"), "EAS needs schedutil");
    assert!(!on("skylake-e3-1240v5", "6.8", "schedutil"), "symmetric, no EM");
    for p in ["juno-r2", "hikey960", "sd835", "rk3399"] {
        assert!(on(p, "6.8", "schedutil"), "{p}");
    }
}

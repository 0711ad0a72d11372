//! Temporary: wall time of a juno-r0 periodic run with and without EAS.
#![allow(clippy::print_stdout)]
use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

fn main() {
    for round in 0..3 {
        for kernel in ["6.8", "6.8:sched_energy_aware=off"] {
            let cfg = RunConfig {
                platform: Spec::new("juno-r0"),
                kernel: Spec::parse(kernel, "x").unwrap(),
                workload: Spec::parse("periodic:tasks=4", "x").unwrap(),
                cpufreq: Spec::new("schedutil"),
                cpuidle: Spec::new("menu"),
                duration_ns: 300_000_000_000,
                seed: 1,
                interval_ns: None,
            };
            let t = std::time::Instant::now();
            let r = cfg.run(None, None).unwrap();
            println!("{round} {kernel}: {:.3} s, {} events", t.elapsed().as_secs_f64(), r.events);
        }
    }
}

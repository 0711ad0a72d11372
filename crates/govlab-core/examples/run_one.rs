//! Runs one configuration and prints its events and wall time, for profiling
//! a reproduction's run under callgrind without Python:
//!
//!     run_one PLATFORM KERNEL WORKLOAD CPUFREQ CPUIDLE SECONDS [SEED]
//!
//! e.g. `run_one broadwell-2s-e5-2698v4 6.8 pgbench:mode=ro,clients=64 schedutil menu 1`.
//! With `RUN_ONE_JSON=FILE` in the environment it writes the run's whole
//! result there as JSON (to check that two builds agree byte for byte).
use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

/// One line on stderr and exit status 2, as govlab's CLI does for bad input.
fn fail(what: impl std::fmt::Display) -> ! {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("run_one: error: {what}");
    }
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 6 {
        fail("usage: run_one PLATFORM KERNEL WORKLOAD CPUFREQ CPUIDLE SECONDS [SEED]");
    }
    let spec = |i: usize, what: &str| Spec::parse(&args[i], what).unwrap_or_else(|e| fail(e));
    let secs: f64 = args[5].parse().unwrap_or_else(|_| fail(format!("SECONDS must be a number, got {:?}", args[5])));
    let cfg = RunConfig {
        platform: spec(0, "platform"),
        kernel: spec(1, "kernel"),
        workload: spec(2, "workload"),
        cpufreq: spec(3, "cpufreq"),
        cpuidle: spec(4, "cpuidle"),
        duration_ns: (secs * 1e9) as u64,
        seed: args.get(6).map_or(1, |s| s.parse().unwrap_or_else(|_| fail(format!("SEED must be an integer, got {s:?}")))),
        interval_ns: None,
    };
    let t = std::time::Instant::now();
    let r = cfg.run(None, None).unwrap_or_else(|e| fail(e));
    let wall = t.elapsed().as_secs_f64();
    // The whole result as JSON, for comparing two builds byte for byte.
    if let Some(path) = std::env::var_os("RUN_ONE_JSON") {
        let json = serde_json::to_string(&r).unwrap_or_else(|e| fail(e));
        std::fs::write(&path, json).unwrap_or_else(|e| fail(e));
    }
    #[allow(clippy::print_stdout)]
    {
        println!("{} events in {wall:.3} s: {:.2} M events/s, {:.3} sim s per wall s", r.events, r.events as f64 / wall / 1e6, r.sim_time_s / wall);
    }
}

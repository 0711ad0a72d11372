//! Runs one configuration and prints its events and wall time, for profiling
//! a reproduction's run under callgrind without Python:
//!
//!     run_one PLATFORM KERNEL WORKLOAD CPUFREQ CPUIDLE SECONDS [SEED]
//!
//! e.g. `run_one broadwell-2s-e5-2698v4 6.8 pgbench:mode=ro,clients=64 schedutil menu 1`.
use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 6 {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("usage: run_one PLATFORM KERNEL WORKLOAD CPUFREQ CPUIDLE SECONDS [SEED]");
        }
        std::process::exit(2);
    }
    let secs: f64 = args[5].parse().expect("SECONDS is a number");
    let cfg = RunConfig {
        platform: Spec::parse(&args[0], "platform").expect("a valid platform spec"),
        kernel: Spec::parse(&args[1], "kernel").expect("a valid kernel spec"),
        workload: Spec::parse(&args[2], "workload").expect("a valid workload spec"),
        cpufreq: Spec::parse(&args[3], "cpufreq").expect("a valid cpufreq spec"),
        cpuidle: Spec::parse(&args[4], "cpuidle").expect("a valid cpuidle spec"),
        duration_ns: (secs * 1e9) as u64,
        seed: args.get(6).map_or(1, |s| s.parse().expect("SEED is an integer")),
        interval_ns: None,
    };
    let t = std::time::Instant::now();
    let r = cfg.run(None, None).expect("the configuration runs");
    let wall = t.elapsed().as_secs_f64();
    #[allow(clippy::print_stdout)]
    {
        println!("{} events in {wall:.3} s: {:.2} M events/s, {:.3} sim s per wall s", r.events, r.events as f64 / wall / 1e6, r.sim_time_s / wall);
    }
}

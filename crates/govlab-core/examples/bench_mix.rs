//! Runs the speed benchmark's scenario once and prints events per second
//! (used for profiling; `make bench` is the real benchmark).
use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let mix = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/mix.toml");
    let cfg = RunConfig {
        platform: Spec::new("broadwell-2s-e5-2698v4"),
        kernel: Spec::new("6.8"),
        workload: Spec::new(mix),
        cpufreq: Spec::new("performance"),
        cpuidle: Spec::new("ladder"),
        duration_ns: secs * 1_000_000_000,
        seed: 1,
        interval_ns: None,
    };
    let t = std::time::Instant::now();
    let r = cfg.run(None, None).expect("benchmark scenario runs");
    let wall = t.elapsed().as_secs_f64();
    #[allow(clippy::print_stdout)]
    {
        println!("{} events in {wall:.3} s: {:.2} M events/s, {:.2} sim s per wall s", r.events, r.events as f64 / wall / 1e6, r.sim_time_s / wall);
    }
}

//! The trace-reading benchmark behind `make bench` (bench/run.py):
//!
//! `cargo run --release --example trace_read_bench -- WORKLOAD EVENTS DIR`
//!
//! runs WORKLOAD on the 80-CPU Broadwell platform (schedutil, menu) with
//! `--trace` long enough for about EVENTS trace events, converts the text to
//! trace.dat, then times reading each (best of three, one thread) and `trace
//! stats` on the trace.dat. Prints one JSON object; the files stay in DIR.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::time::Instant;

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;
use govlab_core::trace::{dat_writer, read_path, stats};

fn best_of_3<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..3 {
        let t0 = Instant::now();
        let r = f();
        best = best.min(t0.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("three runs"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, events, dir] = &args[..] else {
        eprintln!("usage: trace_read_bench WORKLOAD EVENTS DIR");
        std::process::exit(2);
    };
    let want: f64 = events.parse().expect("EVENTS is a number");
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir).expect("DIR can be created");
    let text = dir.join("bench-trace.txt");
    let dat = dir.join("bench-trace.dat");
    let cfg = |ns: u64| RunConfig {
        platform: Spec::new("broadwell-2s-e5-2698v4"),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(workload, "--workload").expect("workload spec"),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: ns,
        seed: 1,
        interval_ns: None,
    };
    // Size the run on a short probe.
    let probe_ns = 200_000_000;
    cfg(probe_ns).run(Some(&text), None).expect("probe run");
    let per_ns = read_path(&text).expect("probe trace").events.len() as f64 / probe_ns as f64;
    let duration_ns = (want / per_ns) as u64;
    let run = cfg(duration_ns).run(Some(&text), None).expect("run");

    let (text_s, trace) = best_of_3(|| read_path(&text).expect("text trace"));
    dat_writer::write_dat(&trace, &dat).expect("trace.dat written");
    let (dat_s, from_dat) = best_of_3(|| read_path(&dat).expect("trace.dat"));
    assert_eq!(from_dat.events.len(), trace.events.len());
    let plat = govlab_core::platform::load_named(&Spec::new("broadwell-2s-e5-2698v4")).expect("platform");
    let (stats_s, _) = best_of_3(|| stats::stats(&from_dat, Some(&plat)).expect("stats"));
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    println!(
        "{}",
        serde_json::json!({
            "simulated_s": run.sim_time_s,
            "events": trace.events.len(),
            "cpus": trace.nr_cpus,
            "text_bytes": size(&text),
            "dat_bytes": size(&dat),
            "text_read_s": text_s,
            "dat_read_s": dat_s,
            "stats_s": stats_s,
            "text_path": text,
            "dat_path": dat,
        })
    );
}

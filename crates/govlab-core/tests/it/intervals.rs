//! Counters per interval (machine/intervals.rs, `--turbostat-interval`):
//! the intervals tile the run and add up to it, they show a change of load
//! in the interval it happens, and asking for them changes nothing else.

use govlab_core::api::{RunArgs, RunConfig};
use govlab_core::metrics::RunResult;
use govlab_core::params::Spec;

use crate::fixtures::temp_file;

fn config(platform: &str, workload: &str, cpuidle: &str, ms: u64, interval_ms: Option<u64>) -> RunConfig {
    RunConfig {
        platform: Spec::parse(platform, "test").unwrap(),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(workload, "test").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new(cpuidle),
        duration_ns: ms * 1_000_000,
        seed: 2,
        interval_ns: interval_ms.map(|i| i * 1_000_000),
    }
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{what}: intervals sum to {a}, the run has {b}");
}

/// Every figure of the intervals, summed, is the whole run's.
fn assert_adds_up(r: &RunResult) {
    let iv = r.intervals.as_ref().expect("intervals asked for");
    assert_eq!(iv[0].start_ns, 0);
    assert_eq!(iv.last().unwrap().end_ns, r.sim_time_ns);
    for w in iv.windows(2) {
        assert_eq!(w[0].end_ns, w[1].start_ns, "intervals tile the run");
    }
    for c in &r.cpus {
        let sum = |f: &dyn Fn(&govlab_core::metrics::IntervalCpu) -> f64| iv.iter().map(|i| f(&i.cpus[c.cpu])).sum::<f64>();
        close(sum(&|i| i.busy_s), c.busy_s, &format!("CPU {} busy", c.cpu));
        close(sum(&|i| i.idle_s), c.idle_s, &format!("CPU {} idle", c.cpu));
        for (k, s) in c.idle_states.iter().enumerate() {
            close(sum(&|i| i.idle_states[k].time_s), s.time_s, &format!("CPU {} {}", c.cpu, s.name));
        }
        for (khz, secs) in &c.time_in_state {
            close(sum(&|i| i.time_in_state[khz]), *secs, &format!("CPU {} at {khz} kHz", c.cpu));
        }
    }
    for p in &r.packages {
        let sum = |f: &dyn Fn(&govlab_core::metrics::IntervalPackage) -> f64| iv.iter().map(|i| f(&i.packages[p.package])).sum::<f64>();
        close(sum(&|i| i.package_j), p.package_j, "package energy");
        close(sum(&|i| i.cores_j), p.cores_j, "cores energy");
        close(sum(&|i| i.dram_j), p.dram_j, "DRAM energy");
        close(sum(&|i| i.pc0_s), p.pc0_s, "PC0");
        for (k, c) in p.cstates.iter().enumerate() {
            close(sum(&|i| i.cstates[k].time_s), c.time_s, &c.name);
        }
    }
    let energy: f64 = iv.iter().flat_map(|i| &i.packages).map(|p| p.package_j + p.dram_j).sum();
    close(energy, r.energy_j, "energy");
}

/// On a 2-socket machine with package C-states, a dual-socket POWER9 with
/// the oracle (its idle states known only in hindsight, so periods open at
/// a boundary are placed when they close) and a big.LITTLE board, the
/// intervals add up to the run; the last interval is the short remainder.
#[test]
fn intervals_add_up_to_the_whole_run() {
    let wl = "periodic:tasks=5,run_us=700,period_us=3100";
    for (platform, idle) in [("broadwell-2s-e5-2698v4", "menu"), ("power9", "oracle"), ("hikey960", "teo"), ("skylake-e3-1240v5", "oracle")] {
        let r = config(platform, wl, idle, 730, Some(100)).run(None, None).unwrap();
        let iv = r.intervals.as_ref().unwrap();
        assert_eq!(iv.len(), 8, "{platform}: 7 whole intervals and 30 ms");
        assert_eq!(iv[7].end_ns - iv[7].start_ns, 30_000_000);
        assert!(iv.iter().all(|i| i.cpus.iter().any(|c| c.busy_s > 0.0)), "{platform}: every interval has work");
        assert_adds_up(&r);
    }
}

/// Asking for intervals reads the counters without closing them: the run
/// is the same to the last bit, and without asking there are none.
#[test]
fn intervals_change_nothing_else() {
    let wl = "periodic:tasks=3,run_us=1500,period_us=5000";
    for idle in ["menu", "oracle"] {
        let plain = config("broadwell-2s-e5-2698v4", wl, idle, 500, None).run(None, None).unwrap();
        assert!(plain.intervals.is_none());
        let mut with = config("broadwell-2s-e5-2698v4", wl, idle, 500, Some(70)).run(None, None).unwrap();
        assert_eq!(with.intervals.take().unwrap().len(), 8);
        assert_eq!(serde_json::to_string(&with).unwrap(), serde_json::to_string(&plain).unwrap(), "{idle}");
    }
}

/// One task runs for 1 s and then sleeps: the first 1-s interval shows one
/// CPU busy, the second shows none, and package power drops.
#[test]
fn a_load_that_stops_after_one_second_shows_in_the_second_interval() {
    let file = temp_file("busy-then-idle.toml", "[[task]]\ncomm = \"w\"\nops = [ { run = \"1s\" }, { sleep = \"10s\" } ]\n");
    let wl = file.to_str().unwrap();
    let r = config("skylake-e3-1240v5", wl, "menu", 2000, Some(1000)).run(None, None).unwrap();
    let iv = r.intervals.as_ref().unwrap();
    assert_eq!(iv.len(), 2);
    let busy = |i: usize| iv[i].cpus.iter().map(|c| c.busy_s).sum::<f64>();
    let watts = |i: usize| iv[i].packages.iter().map(|p| p.package_j).sum::<f64>();
    // `run = "1s"` is 1 s of work at the base clock; schedutil runs it
    // faster (turbo), so it ends before the first interval does.
    assert!(busy(0) > 0.5, "first interval busy {} s", busy(0));
    assert!(busy(1) < 0.02, "second interval busy {} s", busy(1));
    assert!(watts(1) < 0.5 * watts(0), "package {} W then {} W", watts(0), watts(1));
    assert_adds_up(&r);
}

/// The interval is a positive time in the duration's syntax, cut into at
/// most `MAX_INTERVALS`; anything else is refused naming the field.
#[test]
fn bad_intervals_are_refused() {
    let args = |interval: &str| RunArgs {
        duration: Some("2s".into()),
        turbostat_interval: Some(interval.into()),
        ..RunArgs::default()
    };
    assert_eq!(RunConfig::from_args(args("250ms")).unwrap().interval_ns, Some(250_000_000));
    assert_eq!(RunConfig::from_args(args("1")).unwrap().interval_ns, Some(1_000_000_000));
    for bad in ["0", "0s", "-1s", "soon", "1 parsec", "1ns"] {
        let err = RunConfig::from_args(args(bad)).unwrap_err().to_string();
        assert!(err.contains("interval"), "{bad}: {err}");
    }
}

/// The workload's counters and latency series are read at the boundaries
/// too (what pgbench's per-second log and dbench's progress lines show):
/// per interval they add up to the run's transactions and operations, and
/// the operations' summed time to their mean over the run.
#[test]
fn workload_counters_per_interval_add_up_to_the_run() {
    let r = config("skylake-e3-1240v5", "pgbench:clients=4", "menu", 300, Some(20)).run(None, None).unwrap();
    let iv = r.intervals.as_ref().unwrap();
    assert_eq!(iv.len(), 15);
    let txns: u64 = iv.iter().map(|i| i.counters[0]).sum();
    assert_eq!(txns as f64, r.metrics["transactions"].as_f64().unwrap());
    assert!(iv.iter().filter(|i| i.counters[0] > 0).count() >= 14, "transactions in nearly every interval");
    let d = config("skylake-e3-1240v5", "dbench:clients=2", "menu", 300, Some(50)).run(None, None).unwrap();
    let iv = d.intervals.as_ref().unwrap();
    let ops: u64 = iv.iter().map(|i| i.series[0].count).sum();
    let sum_ns: f64 = iv.iter().map(|i| i.series[0].sum_ns).sum();
    assert_eq!(ops as f64, d.metrics["ops"].as_f64().unwrap());
    let mean_ms = sum_ns / ops as f64 / 1e6;
    let op_mean_ms = d.metrics["op_mean_ms"].as_f64().unwrap();
    assert!((mean_ms - op_mean_ms).abs() <= 1e-9 * op_mean_ms, "{mean_ms} against {op_mean_ms}");
}

/// Asked for the workload's counters alone, the intervals leave the CPUs
/// out and hold the same workload and package figures; the run is the same.
#[test]
fn workload_intervals_keep_the_workload_and_packages_only() {
    use govlab_core::external::ExternalGovernors;
    let cfg = config("broadwell-2s-e5-2698v4", "tbench:clients=8", "menu", 200, Some(10));
    let mut full = cfg.run(None, None).unwrap();
    let mut lean = cfg.run_workload_intervals(ExternalGovernors::default(), None).unwrap();
    let (fi, li) = (full.intervals.take().unwrap(), lean.intervals.take().unwrap());
    assert_eq!(fi.len(), 20);
    assert_eq!(li.len(), 20);
    for (f, l) in fi.iter().zip(&li) {
        assert!(l.cpus.is_empty() && !f.cpus.is_empty());
        assert_eq!((f.start_ns, f.end_ns, &f.counters), (l.start_ns, l.end_ns, &l.counters));
        assert_eq!(serde_json::to_string(&f.packages).unwrap(), serde_json::to_string(&l.packages).unwrap());
    }
    assert_eq!(serde_json::to_string(&full).unwrap(), serde_json::to_string(&lean).unwrap());
}

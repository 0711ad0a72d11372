//! Replaying govlab's own trace of a run under the same platform and
//! governors reproduces the run's busy time.

use govlab_core::api::{replay_json, RunConfig};
use govlab_core::params::Spec;

// Turbo and HWP off: cpu_frequency records the frequency requested, and
// with turbo the package controller may run the cores lower (fewer turbo
// bins with more cores active), with HWP the hardware chooses; a replay,
// like one from a real trace, sees only the request (docs/traces.md).
#[test]
fn replay_of_a_runs_trace_reproduces_its_busy_time() {
    let dir = std::env::temp_dir().join(format!("govlab-replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.txt");
    let cfg = RunConfig {
        platform: Spec::parse("skylake-e3-1240v5:hwp=off,turbo=off", "--platform").unwrap(),
        workload: Spec::parse("periodic:tasks=6,run_us=1500,period_us=7000", "--workload").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: 1_000_000_000,
        ..RunConfig::default()
    };
    let run = cfg.run(Some(&path), None).unwrap();
    let config = r#"{"platform": "skylake-e3-1240v5:hwp=off,turbo=off", "cpufreq": "schedutil", "cpuidle": "menu", "seed": 1}"#;
    let out: serde_json::Value = serde_json::from_str(&replay_json(&path, config, true, None).unwrap()).unwrap();
    let free: serde_json::Value = serde_json::from_str(&replay_json(&path, config, false, None).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out["tasks"], 6);
    let busy = |out: &serde_json::Value| -> Vec<u64> {
        out["run"]["cpus"].as_array().unwrap().iter().map(|c| c["busy_ns"].as_u64().unwrap()).collect()
    };
    let recorded: Vec<u64> = run.cpus.iter().map(|c| c.busy_ns).collect();
    let (pinned, free) = (busy(&out), busy(&free));
    let total = |v: &[u64]| v.iter().sum::<u64>() as f64;
    let span = run.sim_time_ns as f64;
    // Pinned, each task stays on its recorded CPU: busy time per CPU within
    // 3% of the span, and in total within 2%.
    for (cpu, (x, y)) in recorded.iter().zip(&pinned).enumerate() {
        assert!((*x as f64 - *y as f64).abs() / span < 0.03, "CPU {cpu}: run {x} ns busy, pinned replay {y} ns");
    }
    assert!((total(&pinned) / total(&recorded) - 1.0).abs() < 0.02, "total busy: run {recorded:?}, pinned replay {pinned:?}");
    // Placed by the simulated scheduler: other CPUs may be chosen (SMT
    // siblings differ), the total busy time stays within 5%.
    assert!((total(&free) / total(&recorded) - 1.0).abs() < 0.05, "total busy: run {recorded:?}, free replay {free:?}");
}

/// Every real recording replays (on an 8-CPU machine, tasks pinned to the
/// CPUs they ran on); each replayed task does some work.
#[test]
fn real_recordings_replay() {
    let real = crate::traces::real_data();
    let config = r#"{"platform": "skylake-e3-1240v5", "cpufreq": "schedutil", "cpuidle": "menu"}"#;
    for rel in [
        "trappy/trace_surfaceflinger.html",
        "trappy/trace_idle.dat",
        "lisa/sched_load/trace.dat",
        "lisa/example_rtapp/trace.dat",
        "lisa/trace_txt/trace.txt",
    ] {
        let out: serde_json::Value = serde_json::from_str(&replay_json(&real.join(rel), config, true, None).unwrap_or_else(|e| panic!("{rel}: {e}"))).unwrap();
        assert!(out["tasks"].as_u64().unwrap() >= 10, "{rel}: {}", out["tasks"]);
        let busy: f64 = out["run"]["cpus"].as_array().unwrap().iter().map(|c| c["busy_s"].as_f64().unwrap()).sum();
        assert!(busy > 0.0, "{rel}");
    }
}

/// A trace whose tasks never run gives nothing to replay: a clear error.
#[test]
fn a_trace_without_running_tasks_is_an_error() {
    let dir = std::env::temp_dir().join(format!("govlab-replay-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("idle.txt");
    std::fs::write(&path, "cpus=1\n<idle>-0 [000] 1.0: cpu_idle: state=1 cpu_id=0\n<idle>-0 [000] 1.5: cpu_idle: state=4294967295 cpu_id=0\n").unwrap();
    let err = replay_json(&path, "{}", false, None).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(err.contains("at least one task that runs"), "{err}");
}

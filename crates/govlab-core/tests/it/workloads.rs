//! The workload registry as `govlab list workloads` shows it, and every
//! model running with its defaults.

use govlab_core::api::{list, RunConfig};
use govlab_core::params::Spec;
use govlab_core::workload;

#[test]
fn list_shows_every_model_with_params_defaults_metric_and_unit() {
    let list: serde_json::Value = serde_json::to_value(list("workloads").unwrap()).unwrap();
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    for expected in [
        "cpu-bound",
        "periodic",
        "hackbench",
        "schbench",
        "sleeping-ebizzy",
        "dbench",
        "sqlite-insert",
        "pgbench",
        "kernbench",
        "iozone",
        "ycsb-redis",
        "fio",
        "netperf",
        "rtapp",
        "idle",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    for w in list.as_array().unwrap() {
        let metric = w["metric"].as_str().unwrap();
        // "name (unit..., lower|higher is better)"
        assert!(metric.contains('(') && (metric.contains("lower") || metric.contains("higher")), "{metric}");
        for p in w["params"].as_array().unwrap() {
            assert!(!p["name"].as_str().unwrap().is_empty());
            assert!(p["default"].is_string() && !p["help"].as_str().unwrap().is_empty(), "{p}");
        }
    }
}

/// Each model (but rtapp, which needs a file) builds with its defaults,
/// runs, and reports the primary metric its listing names, with a unit.
#[test]
fn every_model_runs_with_its_defaults() {
    for info in workload::registry().iter().filter(|w| w.name != "rtapp") {
        let spec = Spec::new(info.name);
        let r = RunConfig {
            platform: Spec::new("skylake-e3-1240v5"),
            workload: spec,
            cpufreq: Spec::new("schedutil"),
            cpuidle: Spec::new("menu"),
            duration_ns: 50_000_000,
            seed: 1,
        }
        .run(None, None)
        .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert!(info.metric.starts_with(&r.primary_metric.name), "{}: {}", info.name, r.primary_metric.name);
        assert!(!r.primary_metric.unit.is_empty(), "{}", info.name);
    }
}

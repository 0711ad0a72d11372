//! The real recordings replay on the machines that recorded them
//! (data/platforms/juno-r0, juno-r2, sd835), tasks pinned or placed by the
//! capacity-aware scheduler.

use govlab_core::api::replay_json;
use govlab_core::trace::replay::Wakeups;

#[test]
fn recordings_replay_on_their_own_platforms() {
    let real = crate::traces::real_data();
    for (rel, platform) in [
        ("trappy/trace_surfaceflinger.html", "sd835"),
        ("trappy/trace_idle.dat", "juno-r0"),
        ("lisa/sched_load/trace.dat", "juno-r0"),
        ("lisa/example_rtapp/trace.dat", "juno-r0"),
        ("lisa/trace_txt/trace.txt", "juno-r2"),
    ] {
        let config = format!(r#"{{"platform": "{platform}", "cpufreq": "schedutil", "cpuidle": "menu"}}"#);
        for pin in [true, false] {
            let out = replay_json(&real.join(rel), &config, pin, Wakeups::Follow, None).unwrap_or_else(|e| panic!("{rel} on {platform}: {e}"));
            let out: serde_json::Value = serde_json::from_str(&out).unwrap();
            let cpus = out["run"]["cpus"].as_array().unwrap();
            assert_eq!(cpus.len(), if platform == "sd835" { 8 } else { 6 }, "{rel}");
            let busy: f64 = cpus.iter().map(|c| c["busy_s"].as_f64().unwrap()).sum();
            assert!(busy > 0.0, "{rel} on {platform}, pin {pin}: nothing ran");
        }
    }
}

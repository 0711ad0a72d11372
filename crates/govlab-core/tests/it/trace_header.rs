//! A govlab trace says which machine it came from: the header's
//! `# govlab: platform=` line, read back as `Trace::meta` and used by the
//! trace tools when the caller names no platform.

use std::path::PathBuf;

use govlab_core::api::{replay_args, trace_stats, trace_timeline, RunArgs, RunConfig, DEFAULT_PLATFORM};
use govlab_core::params::Spec;
use govlab_core::trace::replay::Wakeups;
use govlab_core::trace::{read_path, real_data_dir, META_PLATFORM, META_VERSION};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("govlab-header-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A short traced run on `platform`, its trace in `dir`.
fn traced_run(platform: &str, dir: &std::path::Path) -> PathBuf {
    let path = dir.join("run.txt");
    let cfg = RunConfig {
        platform: Spec::parse(platform, "platform").unwrap(),
        workload: Spec::parse("periodic:tasks=2,run_us=1000,period_us=5000", "workload").unwrap(),
        duration_ns: 100_000_000,
        ..RunConfig::default()
    };
    cfg.run(Some(&path), None).unwrap();
    path
}

#[test]
fn the_header_starts_with_cpus_and_names_version_kernel_and_platform() {
    let d = dir("lines");
    let path = traced_run("juno-r0:hz=250", &d);
    let text = std::fs::read_to_string(&path).unwrap();
    let head: Vec<&str> = text.lines().take(4).collect();
    let version = format!("# govlab: version={}", env!("CARGO_PKG_VERSION"));
    assert_eq!(head, ["cpus=6", version.as_str(), "# govlab: kernel=6.8", "# govlab: platform=juno-r0:hz=250"]);
    let trace = read_path(&path).unwrap();
    assert_eq!(trace.meta.get(META_PLATFORM).map(String::as_str), Some("juno-r0:hz=250"));
    assert_eq!(trace.meta.get(META_VERSION).map(String::as_str), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(trace.nr_cpus, 6);
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_platform_file_is_named_by_its_absolute_path() {
    let d = dir("file");
    let root = real_data_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let toml = root.parent().unwrap().join("platforms/juno-r0.toml");
    std::fs::copy(&toml, d.join("mine.toml")).unwrap();
    let path = traced_run(d.join("mine.toml").to_str().unwrap(), &d);
    let trace = read_path(&path).unwrap();
    let named = PathBuf::from(&trace.meta[META_PLATFORM]);
    assert!(named.is_absolute() && named.ends_with("mine.toml"), "{named:?}");
    // And the tools load it from there.
    let stats = trace_stats(&path, None).unwrap();
    assert!(stats.idle_states_from.starts_with("platform juno-r0"), "{}", stats.idle_states_from);
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_run_traced_to_memory_carries_the_platform_too() {
    let cfg = RunConfig {
        platform: Spec::parse("hikey960", "platform").unwrap(),
        workload: Spec::parse("periodic:tasks=1", "workload").unwrap(),
        duration_ns: 20_000_000,
        ..RunConfig::default()
    };
    let (_, trace) = cfg.run_trace(None).unwrap();
    assert_eq!(trace.meta.get(META_PLATFORM).map(String::as_str), Some("hikey960"));
}

#[test]
fn stats_without_a_platform_use_the_recorded_one_and_an_explicit_one_wins() {
    let d = dir("stats");
    // Skylake's idle states (C8 is state 7) are beyond the Juno defaults:
    // without the header, this trace needed --platform.
    let path = traced_run("skylake-e3-1240v5", &d);
    let stats = trace_stats(&path, None).unwrap();
    assert!(stats.idle_states_from.starts_with("platform skylake-e3-1240v5 (recorded in the trace's header)"), "{}", stats.idle_states_from);
    assert_eq!(stats.cpus[0].idle_states.last().map(|s| s.name.as_str()), Some("C8"));
    let timeline = trace_timeline(&path, None, None).unwrap();
    assert_eq!(timeline.stats.idle_states_from, stats.idle_states_from);
    let explicit = trace_stats(&path, Some("skylake-e3-1240v5:hz=1000")).unwrap();
    assert_eq!(explicit.idle_states_from, "platform skylake-e3-1240v5");
    // Even one that does not fit the trace (Broadwell has no state 6).
    let e = trace_stats(&path, Some("broadwell-2s-e5-2698v4")).unwrap_err().to_string();
    assert!(e.contains("a state of platform broadwell-2s-e5-2698v4"), "{e}");
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_header_platform_that_does_not_load_is_an_error_naming_the_line() {
    let d = dir("bad");
    let path = traced_run("juno-r0", &d);
    let text = std::fs::read_to_string(&path).unwrap().replace("platform=juno-r0", "platform=no-such-machine");
    std::fs::write(&path, text).unwrap();
    let e = trace_stats(&path, None).unwrap_err().to_string();
    assert!(e.contains("line 4") && e.contains("no-such-machine") && e.contains("explicitly"), "{e}");
    // An explicit platform does not need the header's.
    assert!(trace_stats(&path, Some("juno-r0")).is_ok());
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn replay_without_a_platform_uses_the_recorded_one_and_an_explicit_one_wins() {
    let d = dir("replay");
    let path = traced_run("juno-r0", &d);
    let args = |platform: Option<&str>| RunArgs { platform: platform.map(String::from), cpuidle: Some("menu".into()), ..RunArgs::default() };
    let recorded = replay_args(&path, args(None), false, Wakeups::Follow, None).unwrap();
    assert_eq!(recorded.run.platform, "juno-r0");
    assert_eq!(recorded.run.cpus.len(), 6);
    // The platform's own default governor (schedutil on Juno's scpi driver).
    assert_eq!(recorded.run.cpufreq, "schedutil");
    let explicit = replay_args(&path, args(Some("hikey960")), false, Wakeups::Follow, None).unwrap();
    assert_eq!(explicit.run.platform, "hikey960");
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_real_recording_has_no_header_keys_and_replays_on_the_default_platform() {
    let real = real_data_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let path = real.join("lisa/sched_load/trace.dat");
    let trace = read_path(&path).unwrap();
    assert!(trace.meta.is_empty(), "{:?}", trace.meta);
    let stats = trace_stats(&path, None).unwrap();
    assert!(stats.idle_states_from.starts_with("defaults"), "{}", stats.idle_states_from);
    let r = replay_args(&path, RunArgs::default(), false, Wakeups::Follow, None).unwrap();
    assert_eq!(r.run.platform, DEFAULT_PLATFORM);
}

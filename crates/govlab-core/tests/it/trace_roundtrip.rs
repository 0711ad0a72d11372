//! govlab's own `--trace` output read back by the text reader: `trace
//! stats` on it agrees with the run's own metrics.

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;
use govlab_core::platform;
use govlab_core::trace::stats::stats;
use govlab_core::trace::{read_path, EventKind, Format};

#[test]
fn trace_stats_of_a_run_agree_with_the_run() {
    let dir = std::env::temp_dir().join(format!("govlab-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.txt");
    // A machine whose policies are their clocks (Broadwell-EP without SMT:
    // a core, a clock, a policy), so that each CPU's cpu_frequency is its
    // clock; where policies share one, each traces its own request and the
    // clock runs the highest of the active ones (docs/platforms.md).
    let cfg = RunConfig {
        platform: Spec::parse("broadwell-2s-e5-2698v4:smt=off", "platform").unwrap(),
        workload: Spec::parse("periodic:tasks=6,run_us=1500,period_us=7000", "workload").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: 400_000_000,
        ..RunConfig::default()
    };
    let run = cfg.run(Some(&path), None).unwrap();
    let trace = read_path(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(trace.format, Format::ReportText);
    let plat = platform::load_named(&cfg.platform).unwrap();
    let s = stats(&trace, Some(&plat)).unwrap();

    // The trace spans the run: boot frequencies at 0, the stop marker at the end.
    assert_eq!((s.start_s, s.duration_ns), (0.0, run.sim_time_ns));
    assert_eq!(s.nr_cpus, run.cpus.len());
    assert!(run.cpus.iter().filter(|c| c.busy_ns > 0).count() >= 4, "the workload keeps several CPUs busy");
    for (r, t) in run.cpus.iter().zip(&s.cpus) {
        // The writer prints whole microseconds (truncated): each switch
        // moves a busy period's ends by less than 1 µs.
        let switches = trace
            .events
            .iter()
            .filter(|e| e.cpu as usize == r.cpu && matches!(e.kind, EventKind::SchedSwitch(_)))
            .count() as u64;
        assert_eq!(t.unknown_ns, 0);
        assert!(r.busy_ns.abs_diff(t.busy_ns) <= switches * 1000, "CPU {}: run {} ns busy, trace {} ns", r.cpu, r.busy_ns, t.busy_ns);
        assert_eq!(r.transitions, t.transitions, "CPU {}", r.cpu);
        assert_eq!(r.time_in_state.len(), plat.cpu_type_of(r.cpu).opps.len());
        let changes = t.transitions + 1;
        for (khz, &secs) in &r.time_in_state {
            let traced = t.time_in_state.get(khz).copied().unwrap_or(0.0);
            assert!((secs - traced).abs() <= changes as f64 * 1e-6, "CPU {} at {khz} kHz: run {secs} s, trace {traced} s", r.cpu);
        }
        // Idle states: the same usage; the same time up to the µs rounding.
        for (rs, ts) in r.idle_states.iter().zip(&t.idle_states) {
            assert_eq!((rs.name.as_str(), rs.usage), (ts.name.as_str(), ts.usage), "CPU {}", r.cpu);
            assert!((rs.time_s - ts.time_s).abs() <= (rs.usage + 1) as f64 * 2e-6, "CPU {} {}: run {} s, trace {} s", r.cpu, rs.name, rs.time_s, ts.time_s);
        }
        let (ra, ta) = (&r.idle_accuracy, &t.idle_accuracy);
        assert_eq!(ra.samples, ta.samples, "CPU {}", r.cpu);
        // A period within a microsecond of a target residency (a polling
        // state ends exactly at its limit, the next state's target) can be
        // judged the other way once its length is rounded to whole µs.
        assert!(ra.correct.abs_diff(ta.correct) <= 1 + ra.samples / 50, "CPU {}: {} vs {} correct of {}", r.cpu, ra.correct, ta.correct, ra.samples);
    }
}

//! A run traced to memory holds the events its `--trace` file holds, and
//! its timeline is the one `trace stats` builds from that file.

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;
use govlab_core::platform;
use govlab_core::trace::stats::stats_with_timeline;
use govlab_core::trace::timeline::{CpuTimeline, Timeline};
use govlab_core::trace::{read_path, EventKind, Format, Trace};

/// Runs that between them trace every event the writer knows: wakeups from
/// a task, from a timer (hardirq), from an IO completion (hardirq) and from
/// the network (softirq), migrations, exits, idle states and frequency
/// changes (ycsb-redis's requests arrive from the network), on one
/// socket, on three big.LITTLE boards and on a two-socket machine.
fn configs() -> Vec<RunConfig> {
    let cfg = |platform: &str, workload: &str, cpufreq: &str, cpuidle: &str, ms: u64| RunConfig {
        platform: Spec::parse(platform, "platform").unwrap(),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(workload, "workload").unwrap(),
        cpufreq: Spec::parse(cpufreq, "cpufreq").unwrap(),
        cpuidle: Spec::parse(cpuidle, "cpuidle").unwrap(),
        duration_ns: ms * 1_000_000,
        seed: 7,
        interval_ns: None,
    };
    vec![
        cfg("skylake-e3-1240v5", "periodic:tasks=6,run_us=1500,period_us=7000", "schedutil", "menu", 300),
        // 400 ms: hackbench's first migrations come after 200 ms since
        // session 25's measured costs (cycles at the measuring clock).
        cfg("juno-r0", "hackbench", "ondemand", "teo", 400),
        cfg("hikey960", "netperf", "schedutil", "menu", 200),
        cfg("sd835", "ycsb-redis", "schedutil", "teo", 200),
        cfg("broadwell-2s-e5-2698v4", "fio", "intel_pstate", "menu", 200),
    ]
}

/// The run's trace, written to a file and read back.
fn file_trace(cfg: &RunConfig, name: &str) -> Trace {
    let dir = std::env::temp_dir().join(format!("govlab-memtrace-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.txt");
    cfg.run(Some(&path), None).unwrap();
    let trace = read_path(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    trace
}

/// `trace` with its timestamps truncated to whole µs, as the text has them.
fn to_us(trace: &Trace) -> Trace {
    let mut t = trace.clone();
    for e in &mut t.events {
        e.ts_ns -= e.ts_ns % 1000;
    }
    t
}

#[test]
fn the_memory_trace_has_the_file_traces_events() {
    for (i, cfg) in configs().iter().enumerate() {
        let what = format!("{} {}", cfg.platform.to_text(), cfg.workload.to_text());
        let file = file_trace(cfg, &i.to_string());
        let (run, mem) = cfg.run_trace(None).unwrap();
        // Tracing to memory changes nothing in the run.
        let plain = cfg.run(None, None).unwrap();
        assert_eq!(serde_json::to_string(&run).unwrap(), serde_json::to_string(&plain).unwrap(), "{what}");
        assert_eq!((mem.format, file.format), (Format::Simulated, Format::ReportText));
        assert_eq!((mem.nr_cpus, mem.notes.len()), (file.nr_cpus, 0), "{what}");
        assert!(mem.events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns), "{what}: not in time order");
        assert!(mem.events.iter().any(|e| e.ts_ns % 1000 != 0), "{what}: the memory trace keeps nanoseconds");
        assert_eq!(mem.events.len(), file.events.len(), "{what}");
        for (k, (m, f)) in to_us(&mem).events.iter().zip(&file.events).enumerate() {
            assert_eq!(m, f, "{what}: event {k}");
        }
        assert_eq!(mem.counts(), file.counts());
    }
    // Between them the runs have every kind of event and wakeup context.
    let all: Vec<Trace> = configs().iter().map(|c| c.run_trace(None).unwrap().1).collect();
    let events = || all.iter().flat_map(|t| &t.events);
    for name in ["sched_switch", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task", "sched_process_exit", "cpu_frequency", "cpu_idle", "print"] {
        assert!(events().any(|e| e.kind.name() == name), "no {name}");
    }
    for flag in [govlab_core::trace::TRACE_FLAG_HARDIRQ, govlab_core::trace::TRACE_FLAG_SOFTIRQ] {
        assert!(events().any(|e| matches!(e.kind, EventKind::SchedWakeup { .. }) && e.flags & flag != 0), "no wakeup with flag {flag:#x}");
    }
}

/// Total time per activity code on a CPU, s.
fn time_in(c: &CpuTimeline, code: i64) -> f64 {
    c.segments.iter().filter(|s| s.2 == code).map(|s| s.1 - s.0).sum()
}

fn codes(t: &Timeline) -> Vec<i64> {
    let mut v: Vec<i64> = t.cpus.iter().flat_map(|c| c.segments.iter().map(|s| s.2)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn a_runs_timeline_is_the_one_trace_stats_builds_from_its_file() {
    for (i, cfg) in configs().iter().enumerate() {
        let what = format!("{} {}", cfg.platform.to_text(), cfg.workload.to_text());
        let plat = platform::load_named(&cfg.platform).unwrap();
        let file = file_trace(cfg, &format!("tl{i}"));
        let (_, from_file) = stats_with_timeline(&file, Some(&plat), usize::MAX).unwrap();
        let got = cfg.run_timeline(Some(usize::MAX), None).unwrap();
        let tl = &got.timeline;

        // One builder: the memory trace rounded as the text rounds gives
        // the file's timeline exactly.
        let (_, mem_trace) = cfg.run_trace(None).unwrap();
        let (_, mem) = stats_with_timeline(&to_us(&mem_trace), Some(&plat), usize::MAX).unwrap();
        assert_eq!(serde_json::to_string(&mem).unwrap(), serde_json::to_string(&from_file).unwrap(), "{what}");
        assert_eq!(serde_json::to_string(&got.run).unwrap(), serde_json::to_string(&cfg.run(None, None).unwrap()).unwrap(), "{what}");

        // Unrounded: the idle states are named from the platform, the same
        // activities appear, and each one's time differs by less than a µs
        // per event on the CPU.
        assert_eq!(tl.idle_states, plat.cpu_type_of(0).idle_states.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
        assert_eq!(tl.idle_states, from_file.idle_states);
        assert!((tl.duration_s - from_file.duration_s).abs() < 1e-6, "{what}");
        assert_eq!(codes(tl), codes(&from_file), "{what}");
        assert_eq!(tl.cpus.len(), from_file.cpus.len());
        for (a, b) in tl.cpus.iter().zip(&from_file.cpus) {
            let events = file.events.iter().filter(|e| e.cpu as usize == a.cpu).count() as f64;
            for code in codes(tl) {
                let (x, y) = (time_in(a, code), time_in(b, code));
                assert!((x - y).abs() <= events * 1e-6, "{what} CPU {} code {code}: {x} s from memory, {y} s from the file", a.cpu);
            }
            let khz = |c: &CpuTimeline| c.frequency.iter().map(|f| (f.1, f.2.clone())).collect::<Vec<_>>();
            assert_eq!(khz(a), khz(b), "{what} CPU {}", a.cpu);
            for (f, g) in a.frequency.iter().zip(&b.frequency) {
                assert!((f.0 - g.0).abs() < 1e-6, "{what} CPU {}", a.cpu);
            }
        }
    }
}

#[test]
fn a_runs_timeline_is_binned_past_max_spans() {
    let cfg = &configs()[0];
    let got = cfg.run_timeline(Some(50), None).unwrap();
    assert_eq!(got.timeline.max_spans, 50);
    for c in &got.timeline.cpus {
        // Binned past 50 spans; a CPU with fewer (an idle CPU of the
        // Skylake, whose own policy seldom asks) keeps its spans.
        assert!(c.segments.len() <= 50 && (c.resolution_s.is_some() || c.segments.len() < 50), "CPU {}: {} segments", c.cpu, c.segments.len());
        let covered: f64 = c.segments.iter().map(|s| s.1 - s.0).sum();
        assert!((covered - got.timeline.duration_s).abs() < 1e-9, "CPU {}", c.cpu);
    }
    assert!(got.timeline.cpus.iter().any(|c| c.resolution_s.is_some()), "no CPU binned");
    let e = cfg.run_timeline(Some(0), None).unwrap_err().to_string();
    assert!(e.contains("max_spans"), "{e}");
}

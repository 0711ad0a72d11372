//! govlab's own traces print each task's `p->prio` (trace/writer.rs), so a
//! round trip through the replay keeps real-time and niced tasks in their
//! class.

use std::collections::BTreeMap;

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;
use govlab_core::trace::dat_writer::write_dat;
use govlab_core::trace::replay::{tasks, workload, Wakeups};
use govlab_core::trace::{read_path, EventKind, Trace};
use govlab_core::sim::rng::{Rng, Stream};
use govlab_core::workload::{SchedPolicy, Workload};

use crate::fixtures::temp_file;

/// rt-app: `fifo` SCHED_FIFO 50 (prio 99 − 50 = 49), `nice5` SCHED_OTHER
/// at nice 5 (prio 125), `plain` at nice 0 (120), `dl` SCHED_DEADLINE (−1).
const RTAPP: &str = r#"{ "global": { "calibration": "CPU0" }, "tasks": {
    "fifo": { "policy": "SCHED_FIFO", "priority": 50, "loop": -1, "run": 1000, "sleep": 3000 },
    "nice5": { "policy": "SCHED_OTHER", "priority": 5, "loop": -1, "run": 2000, "sleep": 2000 },
    "plain": { "loop": -1, "run": 2000, "sleep": 2000 },
    "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000, "loop": -1, "run": 500, "sleep": 9000 } } }"#;

fn config() -> RunConfig {
    let file = temp_file("prio.json", RTAPP);
    RunConfig {
        platform: Spec::new("skylake-e3-1240v5"),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(&format!("rtapp:file={}", file.display()), "test").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: 100_000_000,
        seed: 1,
        interval_ns: None,
    }
}

/// Every prio each task shows in the trace's sched events, by comm
/// (the idle task's swapper/N under `swapper`).
fn prios(trace: &Trace) -> BTreeMap<String, Vec<i32>> {
    let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    let mut see = |comm: &str, prio: i32| {
        let comm = if comm.starts_with("swapper/") { "swapper" } else { comm };
        let v = out.entry(comm.to_string()).or_default();
        if !v.contains(&prio) {
            v.push(prio);
        }
    };
    for e in &trace.events {
        match &e.kind {
            EventKind::SchedSwitch(s) => {
                see(&s.prev_comm, s.prev_prio);
                see(&s.next_comm, s.next_prio);
            }
            EventKind::SchedWakeup { comm, prio, .. } | EventKind::SchedMigrateTask { comm, prio, .. } | EventKind::SchedProcessExit { comm, prio, .. } => {
                see(comm, *prio)
            }
            _ => {}
        }
    }
    out
}

/// The run of `config()` traced three ways: to a text file, in memory,
/// and that memory trace written as a `.dat` beside the text.
fn traced_run() -> (RunConfig, std::path::PathBuf, Trace, std::path::PathBuf) {
    let cfg = config();
    let txt = temp_file("run.txt", "");
    cfg.run(Some(&txt), None).unwrap();
    let (_, memory) = cfg.run_trace(None).unwrap();
    let dat = txt.with_file_name("run.dat");
    write_dat(&memory, &dat).unwrap();
    (cfg, txt, memory, dat)
}

/// The text, the memory trace and a `.dat` of it all give each task its
/// kernel prio: 49 for SCHED_FIFO 50, 125 for nice 5, 120 for nice 0 and
/// the idle task, −1 for SCHED_DEADLINE.
#[test]
fn a_runs_trace_prints_each_tasks_prio() {
    let (_, txt, memory, dat) = traced_run();
    for (what, trace) in [("text", read_path(&txt).unwrap()), ("memory", memory.clone()), ("dat", read_path(&dat).unwrap())] {
        let p = prios(&trace);
        let of = |prefix: &str| -> Vec<i32> {
            let mut v: Vec<i32> = p.iter().filter(|(c, _)| c.starts_with(prefix)).flat_map(|(_, v)| v.iter().copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        assert_eq!(of("fifo"), [49], "{what}: {p:?}");
        assert_eq!(of("nice5"), [125], "{what}: {p:?}");
        assert_eq!(of("plain"), [120], "{what}: {p:?}");
        assert_eq!(of("dl"), [-1], "{what}: {p:?}");
        assert_eq!(of("swapper"), [120], "{what}: {p:?}");
    }
}

/// Replayed from the run's own trace (text and `.dat`), the FIFO task is
/// SCHED_FIFO 50 again and the niced one nice 5 (the replay's `class_of`).
#[test]
fn a_round_trip_through_the_replay_keeps_each_tasks_class() {
    let (cfg, txt, _, dat) = traced_run();
    let plat = govlab_core::platform::load_named(&cfg.platform).unwrap();
    for path in [&txt, &dat] {
        let trace = read_path(path).unwrap();
        let all = tasks(&trace, 3_500_000, None, Wakeups::Follow);
        let w = workload(&all, "run", true, cfg.duration_ns).unwrap();
        let setup = w.setup(&plat, &mut Rng::new(1, Stream::Workload)).unwrap();
        let class = |prefix: &str| {
            let of: Vec<_> = setup.tasks.iter().filter(|s| s.comm.starts_with(prefix)).map(|s| (s.sched.policy, s.sched.rt_priority, s.nice)).collect();
            assert!(!of.is_empty(), "{}: no {prefix} task replayed", path.display());
            of[0]
        };
        assert_eq!(class("fifo"), (SchedPolicy::Fifo, 50, 0), "{}", path.display());
        assert_eq!(class("nice5"), (SchedPolicy::Other, 0, 5), "{}", path.display());
        assert_eq!(class("plain"), (SchedPolicy::Other, 0, 0), "{}", path.display());
    }
}

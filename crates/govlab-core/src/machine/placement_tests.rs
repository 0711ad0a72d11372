//! Wakeup placement (placement.rs): wake_affine and wake_wide as v5.2's
//! select_task_rq_fair() has them, on the two-socket Broadwell-EP.
//!
//! Each test builds the machine with two rt-app tasks that have not started
//! yet, then sets the runqueues by hand (who runs where, which CPUs are
//! idle) and asks where a wakeup goes.

use super::engine::{build, Engine};
use crate::api::RunConfig;
use crate::params::Spec;
use crate::platform::CpuId;
use crate::sched::TaskState;

const MS: u64 = 1_000_000;

/// The Broadwell-EP under v5.2 with tasks `waker` and `wakee` (and `others`
/// more, `o0`, `o1`, ...), none started.
fn machine(others: usize) -> Engine {
    let dir = std::env::temp_dir().join(format!("govlab-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One file per call: the tests run in parallel threads of one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("tasks-{others}-{call}.json"));
    let idle = r#"{ "delay": 10000000, "loop": 1, "run": 1000, "sleep": 1000 }"#;
    let mut tasks = vec![format!(r#""waker": {idle}"#), format!(r#""wakee": {idle}"#)];
    tasks.extend((0..others).map(|i| format!(r#""o{i}": {idle}"#)));
    std::fs::write(&path, format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(", "))).unwrap();
    let cfg = RunConfig {
        platform: Spec::new("broadwell-2s-e5-2698v4"),
        kernel: Spec::new("5.2"),
        workload: Spec::parse(&format!("rtapp:file={}", path.display()), "test").unwrap(),
        cpufreq: Spec::parse("performance", "test").unwrap(),
        cpuidle: Spec::new("menu"),
        duration_ns: MS,
        seed: 1,
        interval_ns: None,
    };
    let mut e = build(cfg.parts().unwrap(), None).unwrap();
    e.run(None).unwrap();
    e
}

fn task(e: &Engine, comm: &str) -> usize {
    e.tasks.iter().position(|t| &*t.comm == comm).unwrap()
}

/// `t` runs alone on `cpu`.
fn set_running(e: &mut Engine, t: usize, cpu: CpuId) {
    e.tasks[t].state = TaskState::Running;
    e.tasks[t].cpu = cpu;
    e.tasks[t].avg.load_avg = 600;
    let rq = &mut e.rqs[cpu];
    rq.curr = Some(t);
    rq.cfs_curr = true;
    rq.nr_running = 1;
    rq.cfs_nr_running = 1;
    e.idle_mask.clear(cpu);
}

/// `t` sleeps, last on `prev`.
fn set_asleep(e: &mut Engine, t: usize, prev: CpuId) {
    e.tasks[t].state = TaskState::Blocked;
    e.tasks[t].cpu = prev;
    e.tasks[t].avg.load_avg = 300;
}

/// A CPU of the other socket than CPU 0 (another LLC).
fn other_socket(e: &Engine) -> CpuId {
    (0..e.rqs.len()).find(|&c| e.plat.cpus[c].llc != e.plat.cpus[0].llc).unwrap()
}

#[test]
fn sync_wakeup_pulls_the_wakee_to_the_wakers_llc() {
    // netperf's pattern: the waker runs alone on CPU 0 and wakes, through a
    // socket (WF_SYNC), a task last on the other socket. WA_IDLE's sync
    // rule picks CPU 0; select_idle_sibling() then finds an idle core of
    // socket 0, though the previous CPU is idle too.
    let mut e = machine(0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    assert!(e.idle_mask.weight() as usize == e.rqs.len(), "a CPU is busy before the test sets any");
    let prev = other_socket(&e);
    set_running(&mut e, w, 0);
    set_asleep(&mut e, t, prev);
    let cpu = e.select_task_rq_wake(t, prev, 0, true);
    assert_eq!(e.plat.cpus[cpu].llc, e.plat.cpus[0].llc, "sync wakeup from CPU 0 went to CPU {cpu}, not socket 0");
    assert_ne!(cpu, 0, "an idle CPU of socket 0 exists: the wakee should not stack on the waker");
    assert!(e.idle_mask.test(cpu));
}

#[test]
fn non_sync_wakeup_from_a_busy_cpu_stays_at_the_idle_prev() {
    // The same without WF_SYNC (a futex or a completion): WA_IDLE declines
    // (the waker's CPU is busy), WA_WEIGHT sees the previous CPU's lower
    // load, and the idle previous CPU is kept.
    let mut e = machine(0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    let prev = other_socket(&e);
    set_running(&mut e, w, 0);
    set_asleep(&mut e, t, prev);
    assert_eq!(e.select_task_rq_wake(t, prev, 0, false), prev);
}

#[test]
fn timer_wakeup_on_the_previous_cpu_stays_there() {
    // A task's hrtimer fires on its own (idle) CPU: this_cpu == prev, no
    // wake_affine, and the idle previous CPU is the answer.
    let mut e = machine(0);
    let t = task(&e, "wakee");
    let prev = other_socket(&e);
    set_asleep(&mut e, t, prev);
    assert_eq!(e.select_task_rq_wake(t, prev, prev, false), prev);
    // Through try_to_wake_up itself: enqueued there.
    e.try_to_wake_up_in(t, prev, 0);
    assert_eq!(e.tasks[t].cpu, prev);
}

#[test]
fn wake_wide_for_a_one_to_many_waker_keeps_the_wakee_near_prev() {
    // A dispatcher that wakes many tasks in turn, and a wakee that itself
    // wakes many (a middle tier): both flip counts pass the LLC size
    // (sd_llc_size, 40 here) and the dispatcher's is that factor above the
    // wakee's, so wake_wide() holds and the sync wakeup does not pull the
    // wakee to the dispatcher's socket.
    let others = 64;
    let mut e = machine(others);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    let o: Vec<usize> = (0..others).map(|i| task(&e, &format!("o{i}"))).collect();
    let prev = other_socket(&e);
    let factor = e.llc_masks[e.plat.cpus[0].llc].weight();
    assert_eq!(factor, 40);
    // The wakee, running on prev's socket, wakes 41 others in turn.
    set_running(&mut e, t, prev);
    for i in 0..=factor as usize {
        e.record_wakee(prev, o[i % others]);
    }
    assert_eq!(e.tasks[t].wakee.flips, factor + 1);
    set_asleep(&mut e, t, prev);
    e.rqs[prev].curr = None;
    e.rqs[prev].nr_running = 0;
    e.idle_mask.set(prev);
    // The dispatcher on CPU 0 wakes the others round-robin, enough to pass
    // 40 × 41 switches within the second.
    set_running(&mut e, w, 0);
    for i in 0..(factor * (factor + 1)) as usize {
        e.record_wakee(0, o[i % others]);
    }
    assert!(e.wake_wide(0, t), "flips: waker {}, wakee {}", e.tasks[w].wakee.flips, e.tasks[t].wakee.flips);
    assert_eq!(e.select_task_rq_wake(t, prev, 0, true), prev);
    // One fewer switch for the dispatcher: wake_affine again, and the sync
    // wakeup pulls the wakee to socket 0.
    e.tasks[w].wakee.flips = factor * (factor + 1) - 2;
    e.tasks[w].wakee.last = None;
    assert!(!e.wake_wide(0, t));
    let cpu = e.select_task_rq_wake(t, prev, 0, true);
    assert_eq!(e.plat.cpus[cpu].llc, e.plat.cpus[0].llc);
}

#[test]
fn wakee_flips_count_switches_and_halve_after_a_second() {
    let mut e = machine(2);
    let (w, a, b) = (task(&e, "waker"), task(&e, "o0"), task(&e, "o1"));
    set_running(&mut e, w, 0);
    e.tasks[w].wakee = Default::default();
    e.tasks[w].wakee.decay_ns = e.now;
    for _ in 0..3 {
        e.record_wakee(0, a);
    }
    assert_eq!(e.tasks[w].wakee.flips, 1, "waking the same task again is no switch");
    for _ in 0..5 {
        e.record_wakee(0, b);
        e.record_wakee(0, a);
    }
    assert_eq!(e.tasks[w].wakee.flips, 11);
    e.now += 1_000_000_001;
    e.record_wakee(0, a);
    assert_eq!(e.tasks[w].wakee.flips, 5, "halved once, and no switch");
}

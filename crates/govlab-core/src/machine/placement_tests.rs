//! Wakeup placement (placement.rs): wake_affine and wake_wide as v5.2's
//! select_task_rq_fair() has them, on the two-socket Broadwell-EP; and
//! newidle balance's gates by kernel version.
//!
//! Each test builds the machine with two rt-app tasks that have not started
//! yet, then sets the runqueues by hand (who runs where, which CPUs are
//! idle) and asks where a wakeup goes.

use super::engine::Engine;
use crate::api::testing::ran;
use super::placement::CpuIdleType;
use super::rq::EnqueueKind;
use crate::platform::CpuId;
use crate::sched::cpumask::CpuMask;
use crate::sched::TaskState;

const MS: u64 = 1_000_000;

/// The Broadwell-EP under v5.2 with tasks `waker` and `wakee` (and `others`
/// more, `o0`, `o1`, ...), none started.
fn machine(others: usize) -> Engine {
    machine_on("5.2", others)
}

/// [`machine`] under kernel `kernel`.
fn machine_on(kernel: &str, others: usize) -> Engine {
    let idle = r#"{ "delay": 10000000, "loop": 1, "run": 1000, "sleep": 1000 }"#;
    let mut tasks = vec![format!(r#""waker": {idle}"#), format!(r#""wakee": {idle}"#)];
    tasks.extend((0..others).map(|i| format!(r#""o{i}": {idle}"#)));
    run_rtapp(kernel, &tasks.join(", "), MS)
}

/// The Broadwell-EP under `kernel` running the rt-app `tasks` for
/// `duration_ns`.
fn run_rtapp(kernel: &str, tasks: &str, duration_ns: u64) -> Engine {
    // One file per call: the tests run in parallel threads of one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("govlab-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("tasks-{call}.json"));
    std::fs::write(&path, format!(r#"{{ "tasks": {{ {tasks} }} }}"#)).unwrap();
    ran("broadwell-2s-e5-2698v4", kernel, &format!("rtapp:file={}", path.display()), "performance", duration_ns)
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

/// The flips decay once a second of wakeups: halved from v4.2 (63b0e9edceec),
/// wiped before (v3.12's record_wakee(), "Rough decay (wiping)").
#[test]
fn wakee_flips_count_switches_and_decay_after_a_second() {
    for (kernel, after) in [("5.2", 5), ("3.15", 0)] {
        let mut e = machine_on(kernel, 2);
        let (w, a, b) = (task(&e, "waker"), task(&e, "o0"), task(&e, "o1"));
        set_running(&mut e, w, 0);
        e.tasks[w].wakee = super::rq::Wakee::default();
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
        assert_eq!(e.tasks[w].wakee.flips, after, "{kernel}: decayed once, and no switch");
    }
}

/// Before v4.14 wake_affine() compares the runqueues' runnable loads as
/// they are (v4.4's form): the busier previous CPU (1000) against the
/// waker's (600) plus the wakee's (300) pulls the wakee to the waker's
/// socket. v4.14's WA_WEIGHT takes the wakee's load off the previous CPU
/// (700 × 112 % < 900) and leaves it there.
#[test]
fn before_v4_14_wake_affine_pulls_from_a_busier_prev() {
    for (kernel, pulled) in [("4.8", true), ("5.2", false)] {
        let mut e = machine_on(kernel, 1);
        let (w, t, o) = (task(&e, "waker"), task(&e, "wakee"), task(&e, "o0"));
        let prev = other_socket(&e);
        set_running(&mut e, w, 0);
        set_running(&mut e, o, prev);
        e.tasks[o].avg.load_avg = 1000;
        set_asleep(&mut e, t, prev);
        let cpu = e.select_task_rq_wake(t, prev, 0, false);
        assert_eq!(e.plat.cpus[cpu].llc == e.plat.cpus[0].llc, pulled, "{kernel}: the wakeup went to CPU {cpu}");
        assert!(e.idle_mask.test(cpu), "{kernel}: CPU {cpu} is busy");
    }
}

/// Before v4.9 select_idle_sibling() takes a wholly idle core of the LLC or
/// an idle sibling of the target, nothing else (v4.4's group walk): with
/// one thread of every core of socket 0 busy and the target's sibling too,
/// the wakeup stays on the busy target. v4.9's rewrite takes any idle CPU
/// of the LLC.
#[test]
fn before_v4_9_a_wakeup_takes_no_thread_of_a_partly_busy_core() {
    for (kernel, stacks) in [("4.8", true), ("5.2", false)] {
        let mut e = machine_on(kernel, 21);
        let t = task(&e, "wakee");
        let llc = e.plat.cpus[0].llc;
        let mut busy: Vec<CpuId> = e.plat.llcs[llc].iter().copied().filter(|&c| e.plat.cpus[c].siblings.iter().all(|&s| s > c)).collect();
        busy.push(e.plat.cpus[0].siblings[0]);
        assert_eq!(busy.len(), 21);
        for (i, &cpu) in busy.iter().enumerate() {
            let o = task(&e, &format!("o{i}"));
            set_running(&mut e, o, cpu);
        }
        set_asleep(&mut e, t, 0);
        let cpu = e.select_task_rq(t, 0);
        if stacks {
            assert_eq!(cpu, 0, "{kernel}");
        } else {
            assert!(cpu != 0 && e.plat.cpus[cpu].llc == llc && e.idle_mask.test(cpu), "{kernel}: CPU {cpu}");
        }
    }
}

/// Before v4.9, a wholly idle core is found by the LLC domain's groups in
/// their ring order from the target's: the next core after the target's.
#[test]
fn before_v4_9_the_first_idle_core_after_the_targets_is_taken() {
    let mut e = machine_on("4.8", 2);
    let t = task(&e, "wakee");
    let (o0, o1) = (task(&e, "o0"), task(&e, "o1"));
    set_running(&mut e, o0, 5);
    set_running(&mut e, o1, 6);
    set_asleep(&mut e, t, 5);
    // Core 5 holds the target, core 6 is busy: core 7's first CPU.
    assert_eq!(e.select_task_rq(t, 5), 7);
}

/// v4.9-v5.11 (read in v5.2): with no wholly idle core, select_idle_cpu()
/// takes the first idle CPU of the LLC from the target on, before
/// select_idle_smt() would try the target's own siblings. Socket 0 with
/// every core partly busy: thread 0 of every core but core 5 busy, core
/// 5's second thread busy instead; the target CPU 0's sibling is idle.
#[test]
fn v5_2_takes_the_first_idle_cpu_after_the_target_not_its_sibling() {
    let mut e = machine(0);
    let t = task(&e, "wakee");
    let llc = e.plat.cpus[0].llc;
    let firsts: Vec<CpuId> = e.plat.llcs[llc].iter().copied().filter(|&c| e.plat.cpus[c].siblings.iter().all(|&s| s > c)).collect();
    assert_eq!(firsts.len(), 20);
    for &c in &firsts {
        e.idle_mask.clear(c);
    }
    e.idle_mask.set(5);
    e.idle_mask.clear(e.plat.cpus[5].siblings[0]);
    let sibling0 = e.plat.cpus[0].siblings[0];
    assert!(e.idle_mask.test(sibling0) && !(0..e.rqs.len()).any(|c| e.plat.cpus[c].llc == llc && e.idle_mask.test(c) && e.plat.cpus[c].siblings.iter().all(|&s| e.idle_mask.test(s))));
    set_asleep(&mut e, t, 0);
    e.tasks[t].recent_used_cpu = 0;
    assert_eq!(e.select_task_rq(t, 0), 5, "the first idle CPU after CPU 0 (not its sibling {sibling0})");
}

/// v4.16 (32e839dda3ba): with the target and prev busy, an idle
/// recent_used_cpu in the target's LLC is taken before the idle-core scan,
/// and the wakee remembers prev instead; the waker, waking affinely,
/// records its own CPU. v4.8 has neither: the first idle core after the
/// target's.
#[test]
fn from_v4_16_a_wakeup_tries_the_wakees_recent_cpu_first() {
    for (kernel, want) in [("4.8", 1), ("4.16", 7), ("5.2", 7)] {
        let mut e = machine_on(kernel, 1);
        let (w, t, o) = (task(&e, "waker"), task(&e, "wakee"), task(&e, "o0"));
        set_running(&mut e, w, 0);
        set_running(&mut e, o, 2);
        set_asleep(&mut e, t, 2);
        e.tasks[t].recent_used_cpu = 7;
        e.tasks[w].recent_used_cpu = 11;
        let cpu = e.select_task_rq_wake(t, 2, 0, true);
        assert_eq!(cpu, want, "{kernel}");
        if kernel == "4.8" {
            assert_eq!((e.tasks[t].recent_used_cpu, e.tasks[w].recent_used_cpu), (7, 11), "{kernel}: untouched");
        } else {
            assert_eq!(e.tasks[t].recent_used_cpu, 2, "{kernel}: the wakee remembers prev");
            assert_eq!(e.tasks[w].recent_used_cpu, 0, "{kernel}: the waker records its CPU");
        }
    }
}

/// Socket 0 of the Broadwell-EP with the waker on CPU 0 and the wakee's
/// previous CPU 2 busy, no core of the socket wholly idle: thread 0 of
/// every core busy but CPU 3's, whose sibling is busy instead; thread 1 of
/// core 1 (CPU 41) idle, and of the prev's core (CPU 42). `recent` is the
/// wakee's recent_used_cpu, busy. The LLC's has_idle_cores is set to
/// `flag`.
fn no_idle_core(kernel: &str, flag: bool) -> (Engine, usize, CpuId) {
    let mut e = machine_on(kernel, 0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    let llc = e.plat.cpus[0].llc;
    for c in e.plat.llcs[llc].clone() {
        if e.plat.cpus[c].siblings.iter().all(|&s| s > c) && c != 3 {
            e.idle_mask.clear(c);
        }
    }
    e.idle_mask.clear(e.plat.cpus[3].siblings[0]);
    set_running(&mut e, w, 0);
    set_asleep(&mut e, t, 2);
    e.tasks[t].recent_used_cpu = 4;
    assert_eq!(e.plat.cpus[1].siblings, vec![41]);
    assert!(e.idle_mask.test(41) && e.idle_mask.test(42) && e.idle_mask.test(3) && !e.idle_mask.test(2));
    e.has_idle_cores[llc] = flag;
    (e, t, 42)
}

/// Where the wakeup goes from v5.13 (c722f35b513f) when has_idle_cores is
/// clear: prev's idle sibling before any scan; v5.2 scans from the target
/// (CPU 0) for the first idle CPU, CPU 3.
#[test]
fn from_v5_13_an_idle_sibling_of_prev_is_taken_before_the_scan() {
    for (kernel, want) in [("5.2", 3), ("6.8", 42)] {
        let (mut e, t, _) = no_idle_core(kernel, false);
        assert_eq!(e.select_task_rq_wake(t, 2, 0, true), want, "{kernel}");
    }
}

/// From v5.12 (9fe1f127b913) a scan for an idle core that finds none
/// answers with the first idle thread met core by core from the target
/// (CPU 41, core 1's second thread), where v5.2's flat scan takes CPU 3;
/// either way has_idle_cores is cleared.
#[test]
fn from_v5_12_a_failed_core_scan_answers_the_first_idle_thread_core_by_core() {
    for (kernel, want) in [("5.2", 3), ("6.8", 41)] {
        let (mut e, t, _) = no_idle_core(kernel, true);
        let llc = e.plat.cpus[0].llc;
        assert_eq!(e.select_task_rq_wake(t, 2, 0, true), want, "{kernel}");
        assert!(!e.has_idle_cores[llc], "{kernel}: the failed core scan clears the flag");
    }
}

/// SIS_UTIL (v6.0, 70fb5ccf2ebb): the scan looks at nr_idle_scan CPUs of
/// the LLC after the target and none at 0, when the wakee stacks on the
/// target; prev's sibling (v5.13) is still tried first.
#[test]
fn from_v6_0_the_scan_depth_follows_the_llc_utilisation() {
    let (mut e, t, sib) = no_idle_core("6.8", false);
    let llc = e.plat.cpus[0].llc;
    e.idle_mask.clear(sib);
    e.nr_idle_scan[llc] = 0;
    assert_eq!(e.select_task_rq_wake(t, 2, 0, true), 0, "no scan: the target");
    e.nr_idle_scan[llc] = 2;
    assert_eq!(e.select_task_rq_wake(t, 2, 0, true), 0, "CPUs 1 and 2 looked at, both busy");
    e.nr_idle_scan[llc] = 3;
    assert_eq!(e.select_task_rq_wake(t, 2, 0, true), 3);
}

/// update_idle_cpu_scan(): an LLC at half utilisation (x = 512) scans
/// 40 x (1024 - 512^2 x 117^2 / 10^4 / 1024) / 1024 = 26 CPUs; an idle one
/// all 40; from 85 % none.
#[test]
fn the_idle_scan_depth_is_the_llcs_cpus_less_the_square_of_its_utilisation() {
    let mut e = machine_on("6.8", 0);
    let llc = e.plat.cpus[0].llc;
    let span = e.llc_masks[llc];
    let level = 1; // SMT, LLC (the package), machine
    let cpus = e.plat.llcs[llc].clone();
    for (util, want) in [(512, 26), (875, 0), (0, 40)] {
        for &c in &cpus {
            e.rqs[c].cfs.avg.util_avg = util;
            e.rqs[c].cfs.util_est = 0;
        }
        e.update_idle_cpu_scan(0, level, span);
        assert_eq!(e.nr_idle_scan[llc], want, "util {util}");
    }
}

/// A task pinned to the other socket than its previous CPU: no CPU of the
/// previous CPU's LLC is allowed, so select_task_rq()'s is_cpu_allowed()
/// check sends it to an allowed CPU, on every version.
#[test]
fn a_task_pinned_away_from_its_llc_wakes_on_an_allowed_cpu() {
    for kernel in ["4.8", "5.2", "6.8"] {
        let mut e = machine_on(kernel, 0);
        let t = task(&e, "wakee");
        let other = other_socket(&e);
        e.tasks[t].affinity = Some(CpuMask::single(other));
        set_asleep(&mut e, t, 0);
        assert_eq!(e.select_task_rq(t, 0), other, "{kernel}");
    }
}

/// CPU 1 runs `waker` with `wakee` queued behind it; CPU 0 is about to idle
/// with rq->avg_idle `avg_idle_ns`. Where `wakee` is after CPU 0's newidle
/// balance.
fn newidle_pulls(kernel: &str, avg_idle_ns: u64) -> CpuId {
    let mut e = machine_on(kernel, 0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    set_running(&mut e, w, 1);
    set_asleep(&mut e, t, 1);
    e.enqueue_task(1, t, EnqueueKind::Wakeup);
    assert!(e.overloaded.test(1) && e.idle_mask.test(0));
    e.rqs[0].avg_idle_ns = avg_idle_ns;
    e.newidle_balance(0);
    e.tasks[t].cpu
}

#[test]
fn newidle_balance_before_v5_16_needs_avg_idle_of_the_migration_cost() {
    // idle_balance()'s gate: avg_idle below sysctl_sched_migration_cost
    // (500 µs) means the CPU expects to be woken again too soon to pull.
    assert_eq!(newidle_pulls("5.2", 499_999), 1);
    assert_eq!(newidle_pulls("5.2", 500_000), 0);
    assert_eq!(newidle_pulls("3.15", 100_000), 1);
    assert_eq!(newidle_pulls("3.15", 600_000), 0);
}

#[test]
fn newidle_balance_from_v5_16_is_gated_by_the_domain_cost_alone() {
    // c5b0a7eefc70 dropped the 500 µs gate; what is left compares avg_idle
    // with max_newidle_lb_cost, 0 in govlab: a short-idling CPU still pulls.
    assert_eq!(newidle_pulls("6.8", 1_000), 0);
    assert_eq!(newidle_pulls("6.18", 0), 0);
}

#[test]
fn avg_idle_follows_the_idle_periods_on_every_kernel() {
    // update_avg() at the wakeup onto a runqueue stamped idle: an eighth of
    // the way to the idle time since the stamp, capped at 1 ms.
    for kernel in ["3.15", "4.16", "6.8"] {
        let mut e = machine_on(kernel, 0);
        let now = e.now;
        e.rqs[0].avg_idle_ns = 1_000_000;
        e.rqs[0].idle_stamp = Some(now - 200_000);
        e.ttwu_avg_idle(0);
        assert_eq!(e.rqs[0].avg_idle_ns, 1_000_000 - 800_000 / 8, "{kernel}");
        assert_eq!(e.rqs[0].idle_stamp, None, "{kernel}");
        e.rqs[0].idle_stamp = Some(now - 5_000_000);
        e.ttwu_avg_idle(0);
        assert_eq!(e.rqs[0].avg_idle_ns, 1_000_000, "{kernel}: capped at 2 x sysctl_sched_migration_cost");
    }
}

#[test]
fn a_cpu_idling_briefly_learns_it_on_every_kernel() {
    // One task runs 100 µs and sleeps 150 µs on its timer: each wakeup
    // lands on its own CPU, stamped idle at its last newidle balance, so
    // that CPU's avg_idle falls from 1 ms towards 150 µs, under the 500 µs
    // gate, before v4.17 too (where nothing else reads it).
    for kernel in ["3.15", "4.16", "5.2"] {
        let e = run_rtapp(kernel, r#""t": { "loop": -1, "run": 100, "timer": { "ref": "tick", "period": 250 } }"#, 20 * MS);
        let t = task(&e, "t");
        let avg = e.rqs[e.tasks[t].cpu].avg_idle_ns;
        assert!(avg < 300_000, "{kernel}: avg_idle {avg} ns");
    }
}

#[test]
fn a_bound_kworker_wakes_on_the_cpu_that_queued_its_work() {
    // A kworker of a per-CPU workqueue, last on socket 1, is woken by a
    // task on CPU 0 (queue_work() from CPU 0): it runs on CPU 0, busy as it
    // is, while an idle CPU is next door, and no balancer may take it.
    let mut e = machine(0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    e.tasks[t].bound_work = true;
    let prev = other_socket(&e);
    set_running(&mut e, w, 0);
    set_asleep(&mut e, t, prev);
    e.try_to_wake_up(t, 0);
    assert_eq!(e.tasks[t].cpu, 0, "the bound kworker went to CPU {}", e.tasks[t].cpu);
    assert_eq!(e.tasks[t].affinity.map(|m| m.weight()), Some(1), "pinned to the queueing CPU");
    // An ordinary task woken the same way goes elsewhere (the previous
    // CPU, idle): the binding is the kworker's.
    let mut e = machine(0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    set_running(&mut e, w, 0);
    set_asleep(&mut e, t, prev);
    e.try_to_wake_up(t, 0);
    assert_ne!(e.tasks[t].cpu, 0);
}

/// Where a task last on CPU 4 goes when the bound kworker running alone
/// on CPU 4 wakes it, under `kernel`.
fn woken_by_bound_kworker_on_prev(kernel: &str) -> CpuId {
    let mut e = machine_on(kernel, 0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    e.tasks[w].bound_work = true;
    set_running(&mut e, w, 4);
    set_asleep(&mut e, t, 4);
    e.select_task_rq_wake(t, 4, 4, false)
}

#[test]
fn a_bound_kworkers_wakee_stacks_on_its_cpu_from_v5_6_not_v5_2() {
    // 52262ee567ad (v5.6; 5.7 is govlab's first version after it):
    // is_per_cpu_kthread(current), prev == this and nr_running <= 1 keep
    // the wakee on prev; v5.2's select_idle_sibling() finds the CPU busy
    // with the waker and takes an idle one.
    assert_eq!(woken_by_bound_kworker_on_prev("5.7"), 4);
    let before = woken_by_bound_kworker_on_prev("5.2");
    assert_ne!(before, 4, "v5.2 stacked the wakee on the kworker's CPU");
    assert_eq!(woken_by_bound_kworker_on_prev("6.8"), 4);
}

/// The Broadwell-EP, all idle, with `wakee` queued behind `waker` on CPU 1
/// (overloaded) and CPU 0 past newidle balance's avg_idle gate.
fn cpu1_overloaded() -> (Engine, usize) {
    let mut e = machine(0);
    let (w, t) = (task(&e, "waker"), task(&e, "wakee"));
    set_running(&mut e, w, 1);
    set_asleep(&mut e, t, 1);
    e.enqueue_task(1, t, EnqueueKind::Wakeup);
    assert!(e.overloaded.test(1) && e.idle_mask.test(0));
    e.rqs[0].avg_idle_ns = 1_000_000;
    (e, t)
}

/// task_hot(): a queued task that ran less than 500 µs ago
/// (sysctl_sched_migration_cost; `se.exec_start`) stays where it is; one
/// that last ran 600 µs ago is pulled by the idle CPU's newidle balance.
#[test]
fn a_cache_hot_task_is_not_pulled() {
    for (ran_us_ago, pulled) in [(100, false), (600, true)] {
        let (mut e, t) = cpu1_overloaded();
        e.tasks[t].exec_start_ns = e.now + 10 * MS - ran_us_ago * 1000;
        e.now += 10 * MS;
        e.newidle_balance(0);
        assert_eq!(e.tasks[t].cpu == 0, pulled, "last ran {ran_us_ago} us ago: on CPU {}", e.tasks[t].cpu);
    }
}

/// CPU 0 about to idle, with two overloaded CPUs of its LLC, neither its
/// SMT sibling: CPU `a` runs `waker` with `wakee` queued, cache-hot (it ran
/// 100 µs ago), and CPU `b` runs `o0` with `o1` queued, never run. `a` is
/// the busiest (equal counts, the lower CPU). Where `wakee` and `o1` are
/// after CPU 0's newidle balance, with `wakee`, and `waker` too if
/// `pin_running`, allowed only on `a`.
fn newidle_with_a_hot_busiest(pin_queued: bool, pin_running: bool) -> (CpuId, CpuId, CpuId, CpuId) {
    let mut e = machine(2);
    let near: Vec<CpuId> = (1..e.rqs.len())
        .filter(|&c| e.plat.cpus[c].llc == e.plat.cpus[0].llc && !e.plat.cpus[0].siblings.contains(&c))
        .take(2)
        .collect();
    let (a, b) = (near[0], near[1]);
    let (w, t, o0, o1) = (task(&e, "waker"), task(&e, "wakee"), task(&e, "o0"), task(&e, "o1"));
    set_running(&mut e, w, a);
    set_asleep(&mut e, t, a);
    e.enqueue_task(a, t, EnqueueKind::Wakeup);
    set_running(&mut e, o0, b);
    set_asleep(&mut e, o1, b);
    e.enqueue_task(b, o1, EnqueueKind::Wakeup);
    e.now += 10 * MS;
    e.tasks[t].exec_start_ns = e.now - 100_000;
    let only_a = CpuMask::single(a);
    if pin_queued {
        e.tasks[t].affinity = Some(only_a);
    }
    if pin_running {
        e.tasks[w].affinity = Some(only_a);
    }
    e.rqs[0].avg_idle_ns = 1_000_000;
    assert!(e.overloaded.test(a) && e.overloaded.test(b) && e.idle_mask.test(0));
    e.newidle_balance(0);
    (a, b, e.tasks[t].cpu, e.tasks[o1].cpu)
}

/// load_balance() (v5.2, v6.8) detaches from its one busiest queue: when
/// that queue's tasks may run here but are running or cache-hot, the pass
/// moves nothing, although a less busy CPU has a cold queued task.
#[test]
fn a_busiest_queue_of_hot_tasks_ends_the_pull() {
    let (a, b, wakee, o1) = newidle_with_a_hot_busiest(false, false);
    assert_eq!((wakee, o1), (a, b), "wakee on CPU {wakee} (was {a}), o1 on CPU {o1} (was {b})");
}

/// LBF_ALL_PINNED: only when every task of the busiest queue, the running
/// one included, is pinned away from the puller does load_balance() drop
/// that queue and look again, here finding CPU b's cold task.
#[test]
fn an_all_pinned_busiest_queue_is_passed_over() {
    let (a, b, wakee, o1) = newidle_with_a_hot_busiest(true, true);
    assert_eq!((wakee, o1), (a, 0), "all pinned on CPU {a}: o1 should come from CPU {b}");
    // The running task allowed here clears LBF_ALL_PINNED: no second look.
    let (a, b, wakee, o1) = newidle_with_a_hot_busiest(true, false);
    assert_eq!((wakee, o1), (a, b));
}

#[test]
fn an_idle_exit_with_nothing_queued_goes_back_to_idle_without_pulling() {
    // v5.2 do_idle(): an interrupt that queues nothing on CPU 0 leaves
    // need_resched clear, so the idle task re-enters cpuidle without a
    // pick, and no newidle balance pulls CPU 1's queued task.
    let (mut e, t) = cpu1_overloaded();
    assert!(e.rqs[0].idle_state().is_some());
    e.interrupt(0);
    e.idle_exit_done(0);
    assert_eq!(e.tasks[t].cpu, 1);
    assert!(e.rqs[0].idle_state().is_some(), "CPU 0 is idle again");
    assert!(e.overloaded.test(1));
}

#[test]
fn a_task_blocking_on_a_cpu_it_leaves_empty_still_runs_newidle_balance() {
    // The blocking task's __schedule() finds CPU 0's runqueue empty:
    // pick_next_task_fair() → idle_balance() pulls CPU 1's queued task.
    let mut e = machine(1);
    let (w, t, o) = (task(&e, "waker"), task(&e, "wakee"), task(&e, "o0"));
    set_running(&mut e, w, 1);
    set_asleep(&mut e, t, 1);
    e.enqueue_task(1, t, EnqueueKind::Wakeup);
    set_running(&mut e, o, 0);
    e.rqs[0].avg_idle_ns = 1_000_000;
    e.block(0, o);
    e.schedule(0);
    assert_eq!(e.tasks[t].cpu, 0, "newidle balance pulled the queued task");
    assert_eq!(e.rqs[0].curr, Some(t));
}

/// CPU 0's SMT sibling on the Broadwell-EP.
fn sibling0(e: &Engine) -> CpuId {
    e.plat.cpus[0].siblings[0]
}

#[test]
fn an_idle_cpu_balances_each_domain_at_its_idle_interval() {
    // rebalance_domains(CPU_IDLE), v5.2: CPU 0's LLC domain (40 CPUs)
    // is balanced once 40 ms (its balance_interval, no busy_factor for an
    // idle CPU) have passed since its last balance; its SMT domain (CPU 0
    // and its sibling, 2 ms) finds nothing to pull and doubles its interval.
    let (mut e, t) = cpu1_overloaded();
    assert_eq!(e.plat.cpus[1].llc, e.plat.cpus[0].llc);
    assert_ne!(sibling0(&e), 1);
    let tick = e.tun.tick_ns;
    let llc_j = (40 * MS).div_ceil(tick);
    let j = 1000;
    e.now = j * tick;
    e.rqs[0].sd_last_balance_j = [j - llc_j + 1; 3];
    assert_eq!(e.rebalance_domains(0, CpuIdleType::Idle), None, "the LLC's 40 ms have not passed");
    assert_eq!(e.rqs[0].sd_balance_interval_ms[0], 4, "SMT: balanced, 2 ms doubled");
    assert_eq!(e.rqs[0].sd_last_balance_j[0], j);
    assert_eq!(e.rqs[0].sd_last_balance_j[1], j - llc_j + 1);
    e.now = (j + 1) * tick;
    assert_eq!(e.rebalance_domains(0, CpuIdleType::Idle), Some(t));
    assert_eq!(e.tasks[t].cpu, 0);
    assert_eq!(e.rqs[0].sd_balance_interval_ms[1], 40, "unbalanced: back to min_interval");
}

#[test]
fn an_idle_walk_that_pulls_leaves_nohz_next_balance_alone() {
    // v5.2 rebalance_domains(): a pull at CPU 0's LLC makes it busy
    // (idle_cpu()), so the walk no longer ends CPU_IDLE and does not lower
    // nohz.next_balance, and the top domain is not balanced at an idle
    // CPU's interval (govlab ends the walk with the pull; the kernel goes
    // on with a busy one, not passed here). Its sibling's walk, which
    // pulls nothing (CPU 0 balances their core's LLC), ends CPU_IDLE and
    // lowers nohz.next_balance to the sibling's rq->next_balance.
    let (mut e, t) = cpu1_overloaded();
    let s = sibling0(&e);
    e.now = 1000 * MS;
    e.nohz_next_balance_j = u64::MAX;
    assert_eq!(e.rebalance_domains(0, CpuIdleType::Idle), Some(t));
    assert_eq!(e.nohz_next_balance_j, u64::MAX);
    assert_eq!(e.rqs[0].sd_last_balance_j[2], 0);
    assert_eq!(e.rebalance_domains(s, CpuIdleType::Idle), None);
    assert_eq!(e.nohz_next_balance_j, e.rqs[s].next_balance_j);
}

#[test]
fn only_the_first_idle_cpu_of_the_local_group_balances() {
    // should_we_balance(): at the LLC level the local group is the core;
    // CPU 0, idle, balances for it and its sibling does not.
    let (mut e, t) = cpu1_overloaded();
    let s = sibling0(&e);
    assert!(s > 0 && e.idle_mask.test(s));
    e.now = 1000 * MS;
    assert_eq!(e.rebalance_domains(s, CpuIdleType::Idle), None);
    assert_eq!(e.tasks[t].cpu, 1);
    assert_eq!(e.rebalance_domains(0, CpuIdleType::Idle), Some(t));
}

#[test]
fn the_idle_load_balancer_pulls_for_a_cpu_with_its_tick_stopped() {
    // nohz_balancer_kick(): two tasks on CPU 1 kick the idle load
    // balancer (CPU 0, the first of nohz.idle_cpus_mask) with an IPI; once
    // it is back in C0 its pass balances the other idle CPUs with their
    // ticks stopped, and the CPU that pulls wakes for the task.
    let (mut e, t) = cpu1_overloaded();
    e.now = 1000 * MS;
    for c in 0..e.rqs.len() {
        e.set_tick_stopped(c, c != 1);
    }
    e.nohz_balancer_kick(1);
    assert_eq!(e.nohz_kicked, Some(0));
    assert_eq!(e.tasks[t].cpu, 1, "nothing moves before the ilb runs");
    assert!(e.rqs[0].idle_state().is_none(), "the IPI woke the ilb");
    e.idle_exit_done(0);
    let to = e.tasks[t].cpu;
    assert_ne!(to, 1);
    assert_ne!(to, 0, "the ilb (CPU 0) balances last");
    assert!(e.rqs[to].idle_state().is_none(), "CPU {to} woke for the task");
    assert!(e.nohz_next_balance_j > e.now / e.tun.tick_ns, "nohz.next_balance: the idle CPUs' next balance");
}

#[test]
fn the_balance_kick_waits_for_nohz_next_balance() {
    // v5.2 nohz_balancer_kick(): time_before(jiffies, nohz.next_balance)
    // skips the balance kick however many tasks this CPU has.
    let (mut e, t) = cpu1_overloaded();
    e.now = 1000 * MS;
    for c in 0..e.rqs.len() {
        e.set_tick_stopped(c, c != 1);
    }
    e.nohz_has_blocked = false;
    let j = e.now / e.tun.tick_ns;
    e.nohz_next_balance_j = j + 1;
    e.nohz_balancer_kick(1);
    assert_eq!(e.nohz_kicked, None);
    e.now += e.tun.tick_ns;
    e.nohz_balancer_kick(1);
    assert_eq!(e.nohz_kicked, Some(0));
    assert_eq!(e.nohz_next_balance_j, j + 2, "kick_ilb(): nohz.next_balance++");
    assert_eq!(e.tasks[t].cpu, 1);
}

#[test]
fn a_busy_cpu_with_two_tasks_hands_none_to_an_idle_cpu_at_its_tick() {
    // v5.2: a busy CPU's tick only pulls (rebalance_domains(CPU_NOT_IDLE));
    // CPU 0, idle in CPU 1's LLC, gets the queued task through the idle
    // load balancer or its own idle balance, not from CPU 1's tick.
    let (mut e, t) = cpu1_overloaded();
    e.now = 1000 * MS;
    e.periodic_balance(1);
    assert_eq!(e.tasks[t].cpu, 1);
    assert!(e.rqs[0].idle_state().is_some(), "CPU 0 was not woken");
}

/// The Broadwell-EP with CPU 0 running one task and its SMT sibling
/// three, one running and two queued; returns the engine and the sibling.
fn smt_imbalance() -> (Engine, CpuId) {
    smt_imbalance_on("5.2")
}

/// [`smt_imbalance`] under `kernel`.
fn smt_imbalance_on(kernel: &str) -> (Engine, CpuId) {
    let mut e = machine_on(kernel, 2);
    let s = sibling0(&e);
    let (w, t, o0, o1) = (task(&e, "waker"), task(&e, "wakee"), task(&e, "o0"), task(&e, "o1"));
    set_running(&mut e, w, 0);
    set_running(&mut e, t, s);
    for o in [o0, o1] {
        set_asleep(&mut e, o, s);
        e.enqueue_task(s, o, EnqueueKind::Wakeup);
        e.tasks[o].avg.load_avg = 600;
    }
    e.tasks[t].avg.load_avg = 600;
    assert_eq!(e.rqs[s].nr_running, 3);
    (e, s)
}

#[test]
fn a_busy_cpu_balances_its_smt_domain_at_balance_interval_times_busy_factor() {
    // rebalance_domains(CPU_NOT_IDLE), v5.2: CPU 0's SMT domain (2 CPUs,
    // balance_interval 2 ms) is balanced every 2 * busy_factor (32) =
    // 64 ms; then load_balance() finds its sibling's three tasks against
    // its one (avg_load 1800 vs 600, imbalance 600) and pulls one.
    let (mut e, s) = smt_imbalance();
    let tick = e.tun.tick_ns;
    let busy_j = (64 * MS).div_ceil(tick);
    let j = 1000;
    e.now = j * tick;
    e.rqs[0].sd_last_balance_j = [j - busy_j + 1, j, j];
    e.rebalance_domains(0, CpuIdleType::NotIdle);
    assert_eq!(e.rqs[s].nr_running, 3, "64 ms have not passed (an idle CPU's 2 ms have)");
    e.now = (j + 1) * tick;
    e.rebalance_domains(0, CpuIdleType::NotIdle);
    assert_eq!((e.rqs[0].nr_running, e.rqs[s].nr_running), (2, 2));
    assert_eq!(e.rqs[0].sd_last_balance_j[0], j + 1);
    assert_eq!(e.rqs[0].sd_balance_interval_ms[0], 2, "unbalanced: min_interval");
}

#[test]
fn busy_factor_is_16_from_v5_10() {
    // 6e7499135db7 (v5.10): CPU 0's SMT domain is balanced every 2 * 16 =
    // 32 ms on v6.8.
    let (mut e, s) = smt_imbalance_on("6.8");
    let tick = e.tun.tick_ns;
    let j = 1000;
    e.now = j * tick;
    e.rqs[0].sd_last_balance_j = [j - (32 * MS).div_ceil(tick), j, j];
    e.rebalance_domains(0, CpuIdleType::NotIdle);
    assert_eq!((e.rqs[0].nr_running, e.rqs[s].nr_running), (2, 2));
}

#[test]
fn a_busy_cpu_as_loaded_as_the_domains_average_pulls_nothing() {
    // v5.2 find_busiest_group(): CPU 0's one task as heavy as its
    // sibling's three (avg_load 1800 each) leaves the local group at the
    // domain's average: balanced, and the SMT interval doubles.
    let (mut e, s) = smt_imbalance();
    e.now = 1000 * MS;
    let w = e.rqs[0].curr.unwrap();
    e.tasks[w].avg.load_avg = 1800;
    e.rebalance_domains(0, CpuIdleType::NotIdle);
    assert_eq!((e.rqs[0].nr_running, e.rqs[s].nr_running), (1, 3));
    assert_eq!(e.rqs[0].sd_balance_interval_ms[0], 4, "balanced: 2 ms doubled");
}

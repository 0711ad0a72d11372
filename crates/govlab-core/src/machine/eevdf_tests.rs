//! EEVDF (v6.6+) against its own rules, worked by hand, and against the
//! CFS it replaced (v6.5), on the Skylake E3-1240 v5: 8 CPUs, so
//! base_slice = 0.75 ms × (1 + log2 8) = 3 ms, and HZ = 250 (4 ms ticks).

use super::engine::Engine;
use crate::api::testing::ran;
use crate::sched::TaskState;
use crate::sim::Time;

const MS: u64 = 1_000_000;

fn engine(kernel: &str, name: &str, json: &str, ns: Time) -> Engine {
    let dir = std::env::temp_dir().join(format!("govlab-eevdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, json).unwrap();
    ran("skylake-e3-1240v5", kernel, &format!("rtapp:file={}", path.display()), "performance", ns)
}

fn task(e: &Engine, comm: &str) -> usize {
    e.tasks.iter().position(|t| &*t.comm == comm).unwrap()
}

const TWO_HOGS: &str = r#"{ "tasks": {
    "a": { "cpus": [0], "loop": -1, "runtime": 100000 },
    "b": { "cpus": [0], "loop": -1, "runtime": 100000 }
} }"#;

/// Lag, eligibility, placement and the pick, on CPU 0's runqueue emptied
/// by hand after a short run (both tasks nice 0, w = 1024; the CPU idle).
#[test]
fn lag_and_deadline_after_a_known_sequence() {
    let mut e = engine("6.6", "seq.json", TWO_HOGS, MS);
    let (x, y) = (task(&e, "a"), task(&e, "b"));
    for t in [x, y] {
        if e.rqs[0].curr != Some(t) {
            e.unqueue_fair(0, t);
        }
        e.tasks[t].state = TaskState::Blocked;
        e.rqs[0].cfs_nr_running -= 1;
    }
    e.rqs[0].curr = None;
    e.rqs[0].cfs_curr = false;
    assert_eq!((e.rqs[0].avg_vsum, e.rqs[0].avg_load), (0, 0));
    let m = e.rqs[0].min_vruntime;

    // 1. x joins an empty runqueue with lag 0: at V = min_vruntime, a full
    //    request (3 ms) to its deadline.
    e.tasks[x].vlag = 0;
    e.place_entity_eevdf(0, x, false);
    assert_eq!((e.tasks[x].vruntime, e.tasks[x].deadline), (m, m + 3 * MS));
    e.queue_fair(0, x);
    e.rqs[0].cfs_nr_running += 1;

    // 2. y joins with a lag of 2 ms: inflated by (W + w) / W = 2 it goes
    //    4 ms behind V, which its own weight then pulls 2 ms down, so it
    //    keeps its 2 ms of lag.
    e.tasks[y].vlag = 2 * MS as i64;
    e.place_entity_eevdf(0, y, false);
    assert_eq!(e.tasks[y].vruntime, m - 4 * MS);
    assert_eq!(e.tasks[y].deadline, m - MS);
    e.queue_fair(0, y);
    e.rqs[0].cfs_nr_running += 1;
    assert_eq!(e.avg_vruntime(0), m - 2 * MS);

    // 3. Only y is owed service: x (v = V + 2 ms) is not eligible, so y is
    //    picked although it is the later to join.
    assert!(!e.vruntime_eligible(0, e.tasks[x].vruntime));
    assert!(e.vruntime_eligible(0, e.tasks[y].vruntime));
    assert_eq!(e.pick_eevdf_from(0, None), Some(y));

    // 4. The lags they would leave with: +2 ms for y, -2 ms for x.
    e.update_entity_lag(0, y);
    e.update_entity_lag(0, x);
    assert_eq!((e.tasks[y].vlag, e.tasks[x].vlag), (2 * MS as i64, -2 * MS as i64));

    // 5. The lag kept is clamped to max(2 slices, a tick) = 6 ms in virtual
    //    time at the task's weight: 6 ms × 1024 / 335 for a nice-5 task.
    e.unqueue_fair(0, y);
    e.tasks[y].vruntime = m - 100 * MS;
    e.queue_fair(0, y);
    e.update_entity_lag(0, y);
    assert_eq!(e.tasks[y].vlag, 6 * MS as i64);
    e.unqueue_fair(0, y);
    e.tasks[y].weight = 335;
    e.queue_fair(0, y);
    e.update_entity_lag(0, y);
    assert_eq!(e.tasks[y].vlag, (6 * MS * 1024 / 335) as i64);

    // 6. A new task (lag 0) starts at V with half a request
    //    (PLACE_DEADLINE_INITIAL).
    e.unqueue_fair(0, y);
    e.rqs[0].cfs_nr_running -= 1;
    e.tasks[y].weight = 1024;
    e.tasks[y].vlag = 0;
    e.place_entity_eevdf(0, y, true);
    assert_eq!((e.tasks[y].vruntime, e.tasks[y].deadline), (m, m + 3 * MS / 2));
}

/// Two nice-0 hogs: each request is 3 ms, shorter than the 4 ms tick, so
/// EEVDF hands the CPU over at every tick (the runner passed its deadline,
/// the other is the one eligible), where v6.5's CFS lets each run its
/// 12 ms sched_slice (24 ms latency / 2) before switching.
#[test]
fn two_hogs_alternate_every_tick_under_eevdf_and_every_slice_under_cfs() {
    for k in ["6.6", "6.12"] {
        let e = engine(k, "tick.json", TWO_HOGS, 30 * MS);
        let (a, b) = (task(&e, "a"), task(&e, "b"));
        // Ticks at 4, 8, ..., 28 ms: 7 hand-overs, the second task runs
        // from 28 to 30 ms; each has had about half the CPU.
        let (ra, rb) = (e.tasks[a].sum_exec_ns, e.tasks[b].sum_exec_ns);
        assert!(ra.abs_diff(rb) <= 4 * MS + MS / 2, "{k}: a ran {ra} ns, b {rb} ns");
        assert_eq!(e.tasks[b].state, TaskState::Running, "{k}");
    }
    let e = engine("6.5", "tick.json", TWO_HOGS, 30 * MS);
    let (a, b) = (task(&e, "a"), task(&e, "b"));
    let (first, second) = if e.tasks[a].sum_exec_ns > e.tasks[b].sum_exec_ns { (a, b) } else { (b, a) };
    assert!(e.tasks[first].sum_exec_ns >= 15 * MS, "6.5: the first ran {} ns", e.tasks[first].sum_exec_ns);
    assert_eq!(e.tasks[second].state, TaskState::Running);
}

/// Weighted sharing: a nice-0 and a nice-5 hog (1024 and 335) on one CPU
/// for 2 s. EEVDF keeps each task's lag within a request plus a tick of
/// overrun (the deadline is noticed at the tick), so each one's service is
/// its weight's share of the time, 1024/1359 and 335/1359, within that.
#[test]
fn tasks_of_different_weights_share_by_weight_within_a_request() {
    let json = r#"{ "tasks": {
        "a": { "cpus": [0], "loop": -1, "runtime": 100000 },
        "b": { "cpus": [0], "loop": -1, "runtime": 100000, "priority": 5 }
    } }"#;
    let e = engine("6.12", "share.json", json, 2000 * MS);
    let (a, b) = (task(&e, "a"), task(&e, "b"));
    assert_eq!((e.tasks[a].weight, e.tasks[b].weight), (1024, 335));
    let (ra, rb) = (e.tasks[a].sum_exec_ns, e.tasks[b].sum_exec_ns);
    let total = ra + rb;
    let ideal_b = total * 335 / 1359;
    // b's request is 3 ms of its own time; a's lag bound is the same in
    // real time. One request plus one tick each way.
    let bound = 3 * MS + 4 * MS;
    assert!(rb.abs_diff(ideal_b) <= bound, "b ran {rb} ns, its share is {ideal_b} ns");
}

/// A latency-sensitive task (0.2 ms of work every 10 ms) beside a hog on
/// one CPU. v6.5's CFS places a waking sleeper half a latency period
/// (12 ms) behind min_vruntime, far more than the 4 ms wakeup granularity,
/// so it preempts the hog at once on every wakeup. EEVDF gives it no such
/// credit: it wakes with the lag it left with, 0.1 ms less per period it
/// ran at once (it took 0.2 ms while V moved 0.1 ms), so once that lag is
/// spent it is placed with lag ≤ 0 and waits for the hog's request to end
/// (the hog, eligible and on an earlier deadline, keeps the CPU), noticed
/// at the next tick: some wakeups wait milliseconds, none more than a
/// request and a tick.
#[test]
fn a_short_task_waits_for_the_hogs_request_under_eevdf_not_under_cfs() {
    let json = r#"{ "tasks": {
        "hog": { "cpus": [0], "loop": -1, "runtime": 100000 },
        "short": { "cpus": [0], "loop": -1, "run": 200, "timer": { "ref": "t", "period": 10000 } }
    } }"#;
    let cfs = engine("6.5", "short.json", json, 1000 * MS);
    // (The first wakeup of all, from idle at the start, waits for the idle
    // exit; the tenth percentile from the top excludes it.)
    let p90_cfs = cfs.record.wakeup_latency.percentile(90.0);
    assert!(p90_cfs < 50_000.0, "6.5: a tenth of the wakeups waited {p90_cfs} ns or more");
    for k in ["6.6", "6.12"] {
        let e = engine(k, "short.json", json, 1000 * MS);
        let h = &e.record.wakeup_latency;
        let max = h.percentile(100.0);
        assert!(max >= 1_000_000.0, "{k}: the longest wakeup latency is {max} ns");
        assert!(max <= (3 * MS + 4 * MS) as f64 * 1.05, "{k}: a wakeup waited {max} ns");
        assert!(h.mean() > cfs.record.wakeup_latency.mean(), "{k}");
    }
}

/// A custom slice (v6.12): the same short task asking for 0.1 ms
/// (rt-app's `dl-runtime` on SCHED_OTHER) gets a request 30 times shorter
/// than the hog's, so its deadline comes first whenever it is eligible,
/// and with PREEMPT_SHORT the hog's RUN_TO_PARITY does not shield it: on
/// average it waits less than with the base slice (its lag limit stays a
/// tick, as two of its slices are less, so the gain is modest). 6.6
/// ignores the request.
#[test]
fn a_short_slice_wakes_sooner_on_6_12_and_is_ignored_before() {
    let json = |extra: &str| {
        format!(
            r#"{{ "tasks": {{
                "hog": {{ "cpus": [0], "loop": -1, "runtime": 100000 }},
                "short": {{ "cpus": [0], "loop": -1, {extra} "run": 200, "timer": {{ "ref": "t", "period": 10000 }} }}
            }} }}"#
        )
    };
    let mean = |k: &str, extra: &str| engine(k, "slice.json", &json(extra), 1000 * MS).record.wakeup_latency.mean();
    let (base_612, short_612) = (mean("6.12", ""), mean("6.12", r#""dl-runtime": 100,"#));
    let (base_66, short_66) = (mean("6.6", ""), mean("6.6", r#""dl-runtime": 100,"#));
    assert!(short_612 < base_612, "6.12: {short_612} ns with a 0.1 ms slice, {base_612} ns without");
    assert_eq!(short_66, base_66, "6.6 ignores the requested slice");
}

/// Two nice-0 hogs on CPU 0 after 1 ms, with the running one, `c`, moved
/// 2 ms of virtual time ahead of the other, `o`, so that it is not
/// eligible (V is halfway between them), and the clock stopped (no time is
/// charged below). Returns (engine, c, o).
fn ineligible_runner(kernel: &str) -> (Engine, usize, usize) {
    let mut e = engine(kernel, "delay.json", TWO_HOGS, MS);
    let (a, b) = (task(&e, "a"), task(&e, "b"));
    let c = e.rqs[0].curr.unwrap();
    let o = if c == a { b } else { a };
    e.update_curr(0);
    e.tasks[c].vruntime = e.tasks[o].vruntime + 2 * MS;
    assert!(!e.vruntime_eligible(0, e.tasks[c].vruntime));
    (e, c, o)
}

/// Delayed dequeue (v6.12, 152e11f6df29, with DELAY_ZERO 54a58a787791) by
/// its rules: a task that blocks with negative lag stays queued (in the
/// tree, the runqueue's weight and nr_running) while the other runs; once
/// V has moved past it, the pick chooses it and dequeues it for good, its
/// positive lag cut to 0. On 6.9 the same block dequeues at once and the
/// task keeps its negative lag.
#[test]
fn a_task_sleeping_ineligible_stays_queued_until_picked_from_6_12() {
    let (mut e, c, o) = ineligible_runner("6.12");
    e.block(0, c);
    assert!(e.tasks[c].sched_delayed);
    assert_eq!(e.tasks[c].state, TaskState::Blocked);
    assert_eq!((e.rqs[0].nr_running, e.rqs[0].cfs_nr_running, e.rqs[0].load_weight), (2, 2, 2048));
    // The other task runs; the sleeper is still queued behind it.
    e.schedule(0);
    assert_eq!(e.rqs[0].curr, Some(o));
    assert!(e.rqs[0].tree.iter().any(|&(_, t)| t == c));
    // o runs 4 ms of virtual time: V = (v_c + v_o) / 2 is now 1 ms past
    // v_c, so c is eligible with lag +1 ms and o is not.
    let v_c = e.tasks[c].vruntime;
    e.tasks[o].vruntime = v_c + 2 * MS;
    assert_eq!(e.avg_vruntime(0), v_c + MS);
    e.rqs[0].resched = true;
    e.schedule(0);
    // The pick chose c, dequeued it (lag +1 ms cut to 0) and picked again.
    assert!(!e.tasks[c].sched_delayed);
    assert_eq!(e.tasks[c].vlag, 0);
    assert_eq!((e.rqs[0].nr_running, e.rqs[0].load_weight), (1, 1024));
    assert_eq!(e.rqs[0].curr, Some(o));

    let (mut e, c, o) = ineligible_runner("6.9");
    let lag = e.avg_vruntime(0) as i64 - e.tasks[c].vruntime as i64;
    e.block(0, c);
    assert!(!e.tasks[c].sched_delayed);
    assert_eq!((e.rqs[0].nr_running, e.rqs[0].load_weight), (1, 1024));
    assert_eq!(e.tasks[c].vlag, lag);
    assert_eq!(lag, -(MS as i64));
    e.schedule(0);
    assert_eq!(e.rqs[0].curr, Some(o));
}

/// A delayed task woken before the pick reaches it is still queued on its
/// CPU, so it wakes there (v6.12 `ttwu_runnable`, 781773e3b680
/// ENQUEUE_DELAYED): no select_task_rq, though seven CPUs are idle. On
/// 6.9 the wakeup places it on an idle CPU. (The task is let run anywhere
/// after it blocks.)
#[test]
fn a_delayed_task_wakes_on_its_busy_cpu_from_6_12() {
    for (k, stays) in [("6.12", true), ("6.9", false)] {
        let (mut e, c, o) = ineligible_runner(k);
        e.block(0, c);
        e.schedule(0);
        assert_eq!(e.rqs[0].curr, Some(o), "{k}");
        e.tasks[c].affinity = None;
        let util_est_asleep = e.rqs[0].cfs.util_est;
        e.try_to_wake_up(c, 0);
        assert!(!e.tasks[c].sched_delayed, "{k}");
        assert_eq!(e.tasks[c].cpu == 0, stays, "{k}: woke on CPU {}", e.tasks[c].cpu);
        if stays {
            // Queued behind o, not preempting it (its lag is still negative),
            // and its estimate back in the runqueue's (729288bc6856).
            assert_eq!(e.tasks[c].state, TaskState::Runnable);
            assert_eq!(e.rqs[0].nr_running, 2);
            let est = e.util_est_form.task_est(&e.tasks[c].avg);
            assert_eq!(e.rqs[0].cfs.util_est, util_est_asleep + est);
        }
    }
}

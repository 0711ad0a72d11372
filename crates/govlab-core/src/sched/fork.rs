//! A new task's first PELT values: what the kernel gives a task between
//! fork and its first enqueue, so that the first frequency request it
//! causes is not made from nothing.
//!
//! **Models: Linux v6.8 mainline, kernel/sched/fair.c,
//! `init_entity_runnable_average` (called from `sched_fork` in
//! kernel/sched/core.c) and `post_init_entity_util_avg` (called from
//! `wake_up_new_task` after the task's CPU is chosen).**
//!
//! 1. At fork the task's load average starts at its full weight
//!    (`scale_load_down(se->load.weight)`: 1024 at nice 0), so the load
//!    balancer sees a new task as heavy until it has shown otherwise; its
//!    runnable and utilisation averages start at 0 and its `util_est` is
//!    empty.
//! 2. Once the destination CPU is known, the utilisation is set from that
//!    CPU's cfs runqueue: half of the capacity the runqueue leaves free,
//!    `cap = (capacity − rq util) / 2`. If the runqueue is empty of
//!    utilisation the task gets all of `cap`; otherwise the runqueue's
//!    utilisation per unit of its load, times the task's weight, at most
//!    `cap`. Nothing is given when `cap` ≤ 0 (a full CPU). The runnable
//!    average is set equal to the utilisation.
//! 3. The first enqueue then attaches the task (its `last_update_time` is
//!    0), rebuilding its sums from these averages (`attach_entity`), so the
//!    runqueue's utilisation, and schedutil's request, jump by that amount.
//!
//! On an idle CPU at low frequency (runqueue utilisation near 0) a new task
//! therefore arrives with half the CPU's capacity as its utilisation.
//!
//! The weight in step 2 is `se->load.weight`, which 64-bit kernels hold
//! scaled by 1024 (`scale_load`), so the product is far above `cap` unless
//! the runqueue's utilisation is 0 too: from v4.7 to v6.8 a new task gets
//! the half of the spare capacity nearly always. The caller passes the
//! weight as the kernel has it (the 2024 fix, "sched/fair: fix initial
//! util_avg calculation", after v6.8, would pass it unscaled).
//!
//! Eras (`EraId::InitUtilBounded`): the bounded start dates from
//! 2b8c41daba32 ("sched/fair: Initiate a new task's util avg to a bounded
//! value", v4.7); before, `init_entity_runnable_average` (v4.3–v4.6)
//! started `util_avg` at the full 1024 ([`init_util_full`]).
//! Left out: the non-fair-class branch (RT/DL tasks only stamp their
//! `last_update_time`).

use super::pelt::SchedAvg;

/// `init_entity_runnable_average` for a task of load weight `weight`
/// (`scale_load_down`'d: 1024 at nice 0).
#[must_use]
pub fn init_entity_runnable_average(weight: u64) -> SchedAvg {
    SchedAvg { load_avg: weight, ..SchedAvg::default() }
}

/// Before v4.7 (v4.3–v4.6 `init_entity_runnable_average`): a new task's
/// utilisation starts at the full scale, 1024, whatever its CPU.
pub fn init_util_full(se: &mut SchedAvg) {
    se.util_avg = 1024;
    se.runnable_avg = se.util_avg;
}

/// `post_init_entity_util_avg`: set `se`'s utilisation and runnable
/// averages from the destination runqueue's utilisation `rq_util_avg` and
/// load `rq_load_avg` (capacity and load units, as last updated) on a CPU
/// of capacity `cpu_capacity`; `weight` is the task's `se->load.weight`
/// (scaled by 1024 on 64-bit kernels; see the header).
pub fn post_init_entity_util_avg(se: &mut SchedAvg, weight: u64, cpu_capacity: u64, rq_util_avg: u64, rq_load_avg: u64) {
    // The kernel computes in `long`: a runqueue above capacity gives cap ≤ 0.
    let cap = (cpu_capacity as i64 - rq_util_avg as i64) / 2;
    if cap > 0 {
        let cap = cap as u64;
        se.util_avg = if rq_util_avg == 0 {
            cap
        } else {
            (rq_util_avg * weight / (rq_load_avg + 1)).min(cap)
        };
    }
    se.runnable_avg = se.util_avg;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_cpu_gives_half_its_capacity() {
        let mut se = init_entity_runnable_average(1024);
        assert_eq!(se.load_avg, 1024);
        post_init_entity_util_avg(&mut se, 1024, 1024, 0, 0);
        assert_eq!((se.util_avg, se.runnable_avg), (512, 512));
        // A LITTLE CPU of capacity 446: 223.
        let mut se = init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024, 446, 0, 0);
        assert_eq!(se.util_avg, 223);
    }

    #[test]
    fn a_busy_runqueue_shares_its_util_per_load_capped() {
        // rq util 400, load 2048 (two tasks): 400·1024/2049 = 199 < cap 312.
        let mut se = init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024, 1024, 400, 2048);
        assert_eq!(se.util_avg, 199);
        // rq util 600, load 700: 600·1024/701 = 876, capped at (1024−600)/2 = 212.
        let mut se = init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024, 1024, 600, 700);
        assert_eq!(se.util_avg, 212);
    }

    #[test]
    fn the_scaled_weight_gives_the_cap_on_a_busy_runqueue() {
        // v4.7-v6.8 on 64-bit: nice 0's se->load.weight is 1024 << 10, so
        // rq util 400, load 2048 gives 400·1048576/2049, far above the cap
        // of (1024−400)/2 = 312: the cap.
        let mut se = init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024 << 10, 1024, 400, 2048);
        assert_eq!(se.util_avg, 312);
        // Before v4.7: the full scale.
        let mut se = init_entity_runnable_average(1024);
        init_util_full(&mut se);
        assert_eq!((se.util_avg, se.runnable_avg), (1024, 1024));
    }

    #[test]
    fn a_full_cpu_gives_nothing() {
        let mut se = init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024, 1024, 1024, 1024);
        assert_eq!((se.util_avg, se.runnable_avg), (0, 0));
        let mut se = init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024, 1024, 1030, 1024);
        assert_eq!(se.util_avg, 0);
    }
}

//! The real-time class's arithmetic (Linux v6.8 kernel/sched/rt.c and
//! kernel/sched/sched.h): priorities, the RR time slice and the RT
//! throttle's bookkeeping. The class acting on the runqueues is
//! `machine/rt.rs`.

/// MAX_RT_PRIO (include/linux/sched/prio.h): RT priorities are 0..100.
pub const MAX_RT_PRIO: u32 = 100;
/// Default `sched_rt_period_us` (kernel/sched/rt.c, sysctl_sched_rt_period,
/// v6.8): 1 s.
pub const RT_PERIOD_NS: u64 = 1_000_000_000;
/// Default `sched_rt_runtime_us` (kernel/sched/rt.c, sysctl_sched_rt_runtime,
/// v6.8): 0.95 s of every period.
pub const RT_RUNTIME_NS: u64 = 950_000_000;
/// RR_TIMESLICE (include/linux/sched/rt.h, v6.8): 100 ms.
pub const RR_TIMESLICE_NS: u64 = 100_000_000;

/// The scheduling class a task runs in, in pick order (kernel/sched/sched.h
/// `for_each_class`, v6.8: stop, dl, rt, fair, idle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Class {
    Deadline,
    Rt,
    #[default]
    Fair,
}

/// The kernel's `prio` of an RT task (lower runs first): MAX_RT_PRIO − 1 −
/// sched_priority (kernel/sched/core.c `__normal_prio`, v6.8).
#[inline]
#[must_use]
pub fn rt_prio(sched_priority: u32) -> u32 {
    MAX_RT_PRIO - 1 - sched_priority.min(MAX_RT_PRIO - 1)
}

/// A task's place in an RT runqueue: its prio, then its arrival. The kernel
/// keeps one FIFO list per prio (`rt_prio_array`); a task enqueued at the
/// head (a preempted task keeps its place, `ENQUEUE_HEAD`) takes a key
/// below every other of its prio.
pub type RtKey = (u32, i64, usize);

/// `do_sched_rt_period_timer` for one runqueue (kernel/sched/rt.c, v6.8):
/// `overrun` periods elapsed; the runtime used shrinks by up to `overrun`
/// runtimes. Returns the new `rt_time` and whether a throttled runqueue may
/// run again (`rt_time < runtime`).
#[inline]
#[must_use]
pub fn period_replenish(rt_time: u64, runtime: u64, overrun: u64) -> (u64, bool) {
    let rt_time = rt_time.saturating_sub(overrun.saturating_mul(runtime));
    (rt_time, rt_time < runtime)
}

/// `sched_rt_runtime_exceeded` (kernel/sched/rt.c, v6.8): the runqueue is
/// throttled once its RT time exceeds its runtime, unless the runtime is
/// unlimited (`sched_rt_runtime_us` = −1, given as None) or covers the
/// whole period (which a runqueue that borrowed, see [`borrow_runtime`],
/// may have).
#[inline]
#[must_use]
pub fn runtime_exceeded(rt_time: u64, runtime: Option<u64>, period: u64) -> bool {
    match runtime {
        None => false,
        Some(r) if r >= period => false,
        Some(r) => rt_time > r,
    }
}

/// How much runtime a runqueue over its runtime takes from one other CPU
/// of its root domain, under RT_RUNTIME_SHARE (`do_balance_runtime`,
/// kernel/sched/rt.c, v5.4; the feature was on by default until v5.10,
/// 2586af1ac187 "sched/rt: Disable RT_RUNTIME_SHARE by default"): a
/// `weight`-th (the root domain's CPU count) of the lender's unused runtime
/// (its runtime minus its RT time, if positive), no more than brings the
/// borrower to a whole period. The kernel moves the amount from the lender's
/// `rt_runtime` to the borrower's, lender by lender in CPU order, and stops
/// once the borrower has the whole period.
#[inline]
#[must_use]
pub fn borrow_runtime(lender_runtime: u64, lender_rt_time: u64, my_runtime: u64, weight: u64, period: u64) -> u64 {
    let spare = lender_runtime.saturating_sub(lender_rt_time);
    (spare / weight.max(1)).min(period.saturating_sub(my_runtime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_priority_sorts_first() {
        assert!(rt_prio(99) < rt_prio(1));
        assert_eq!(rt_prio(99), 0);
        assert_eq!(rt_prio(1), 98);
    }

    #[test]
    fn throttle_and_replenish() {
        assert!(!runtime_exceeded(RT_RUNTIME_NS, Some(RT_RUNTIME_NS), RT_PERIOD_NS));
        assert!(runtime_exceeded(RT_RUNTIME_NS + 1, Some(RT_RUNTIME_NS), RT_PERIOD_NS));
        assert!(!runtime_exceeded(u64::MAX, None, RT_PERIOD_NS));
        assert_eq!(period_replenish(951_000_000, RT_RUNTIME_NS, 1), (1_000_000, true));
        assert_eq!(period_replenish(3 * RT_RUNTIME_NS, RT_RUNTIME_NS, 1), (2 * RT_RUNTIME_NS, false));
        assert!(!runtime_exceeded(u64::MAX, Some(RT_PERIOD_NS), RT_PERIOD_NS), "a whole period never throttles");
    }

    /// An idle CPU of a 2-CPU root domain lends half its 950 ms, capped at
    /// the 50 ms that make a whole period; a lender that used its runtime
    /// lends nothing.
    #[test]
    fn borrowing_is_a_share_of_the_spare_capped_at_the_period() {
        assert_eq!(borrow_runtime(RT_RUNTIME_NS, 0, RT_RUNTIME_NS, 2, RT_PERIOD_NS), 50_000_000);
        assert_eq!(borrow_runtime(RT_RUNTIME_NS, 0, 400_000_000, 2, RT_PERIOD_NS), 475_000_000);
        assert_eq!(borrow_runtime(RT_RUNTIME_NS, 100_000_000, 0, 8, RT_PERIOD_NS), 106_250_000);
        assert_eq!(borrow_runtime(RT_RUNTIME_NS, RT_RUNTIME_NS + 5, 0, 2, RT_PERIOD_NS), 0);
        assert_eq!(borrow_runtime(RT_RUNTIME_NS, 0, RT_PERIOD_NS, 2, RT_PERIOD_NS), 0);
    }
}

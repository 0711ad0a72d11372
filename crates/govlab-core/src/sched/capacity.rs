//! Capacity-aware placement on asymmetric machines (big.LITTLE).
//!
//! Models: Linux v6.8 mainline, kernel/sched/fair.c: `fits_capacity`,
//! `util_fits_cpu` / `task_fits_cpu` without uclamp, the asymmetric branch
//! of `select_idle_sibling` with `select_idle_capacity`, and misfit-task
//! handling (`update_misfit_status`, the `group_misfit_task` /
//! `migrate_misfit` load balance with its active balance). Documented in
//! Documentation/scheduler/sched-capacity.rst.
//!
//! The idea. When CPUs differ in capacity (the kernel's
//! SD_ASYM_CPUCAPACITY, `sched_asym_cpucap_active()`), an idle CPU is not
//! as good as any other: a task whose utilisation does not fit a LITTLE
//! CPU runs slower there than its demand. A task *fits* a CPU when its
//! estimated utilisation leaves 20 % headroom:
//! `util × 1280 < capacity × 1024` (fits_capacity).
//!
//! 1. Wakeup. The previous CPU is kept if it is idle and the task fits it.
//!    Otherwise the CPUs of the asymmetric domain (the whole machine here,
//!    as on Juno or a phone: the lowest domain spanning every capacity) are
//!    scanned from the previous CPU on, wrapping: the first idle CPU the
//!    task fits wins; if none fits, the idle CPU with the biggest capacity
//!    (the first one found among equals); if no CPU is idle, the previous
//!    CPU.
//! 2. Misfit. At each balance, a CPU whose running task does not fit it
//!    pushes that task to an idle CPU of clearly greater capacity
//!    (`capacity_greater`: more than ~5 % bigger), preempting it there and
//!    then (the kernel's active balance through the stopper thread).
//!
//! Left out: uclamp (no task has clamps, so util_fits_cpu is fits_capacity
//! on the task's util_est), thermal and RT/IRQ pressure (capacity_of equals
//! the CPU's capacity), wake_affine and recent_used_cpu (the engine wakes
//! towards the previous CPU), the misfit path of find_idlest_group at fork,
//! and energy-aware placement (EAS, find_energy_efficient_cpu): the
//! kernel's choice on a board with an Energy Model and schedutil. Misfit
//! balancing runs on the misfit CPU's balance pass (every tick in govlab),
//! not after the kernel's per-domain balance interval. On a machine whose
//! CPUs all have one capacity none of this runs, and placement is
//! `placement.rs`'s.

use super::pelt;
use super::{TaskId, TaskState};
use crate::platform::CpuId;
use crate::sim::Engine;

/// fits_capacity(): util fits capacity with 20 % headroom (× 1280 / 1024).
pub const FITS_MARGIN_NUM: u64 = 1280;
/// capacity_greater(): a capacity counts as greater above ~5 % (× 1078 / 1024).
pub const CAPACITY_GREATER_NUM: u64 = 1078;
const SCALE: u64 = 1024;

/// fits_capacity(): `util` leaves 20 % of `capacity` spare.
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * FITS_MARGIN_NUM < capacity * SCALE
}

/// capacity_greater(): `a` is more than ~5 % above `b`.
pub fn capacity_greater(a: u64, b: u64) -> bool {
    a * SCALE > b * CAPACITY_GREATER_NUM
}

/// Whether CPU capacities differ (sched_asym_cpucap_active()).
pub fn asym_cpucap(capacities: &[u64]) -> bool {
    capacities.windows(2).any(|w| w[0] != w[1])
}

impl Engine {
    /// task_fits_cpu() without uclamp: the task's util_est fits the CPU.
    pub(crate) fn task_fits_cpu(&self, t: TaskId, cpu: CpuId) -> bool {
        fits_capacity(pelt::task_util_est(&self.tasks[t].avg), self.rqs[cpu].capacity)
    }

    /// The asymmetric branch of select_idle_sibling() for a wakeup with
    /// target = prev: prev if idle and fitting, else select_idle_capacity()
    /// over every allowed CPU, else prev.
    pub(crate) fn select_idle_sibling_asym(&self, t: TaskId, prev: CpuId) -> CpuId {
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        if allowed.test(prev) && self.idle_mask.test(prev) && self.task_fits_cpu(t, prev) {
            return prev;
        }
        self.select_idle_capacity(t, prev).unwrap_or(prev)
    }

    /// select_idle_capacity(): scan the idle allowed CPUs from `target`,
    /// wrapping; the first the task fits, else the one with the biggest
    /// capacity.
    fn select_idle_capacity(&self, t: TaskId, target: CpuId) -> Option<CpuId> {
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        let idle = allowed.and(&self.idle_mask);
        let mut best: Option<(u64, CpuId)> = None;
        let mut c = idle.next_wrap(target);
        let first = c;
        while let Some(cpu) = c {
            if self.task_fits_cpu(t, cpu) {
                return Some(cpu);
            }
            let cap = self.rqs[cpu].capacity;
            if best.map_or(true, |(b, _)| cap > b) {
                best = Some((cap, cpu));
            }
            c = idle.next_wrap(cpu + 1).filter(|&n| Some(n) != first);
        }
        best.map(|(_, cpu)| cpu)
    }

    /// Misfit balance on `cpu`: if its running task does not fit it
    /// (update_misfit_status), push the task to the idle CPU of greatest
    /// capacity, if that capacity is clearly greater (active balance).
    /// Returns whether a task moved.
    pub(crate) fn misfit_balance(&mut self, cpu: CpuId) -> bool {
        let Some(t) = self.rqs[cpu].curr else { return false };
        if self.task_fits_cpu(t, cpu) {
            return false;
        }
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        let src_cap = self.rqs[cpu].capacity;
        let Some(dst) = allowed
            .and(&self.idle_mask)
            .iter()
            .filter(|&c| capacity_greater(self.rqs[c].capacity, src_cap))
            .max_by_key(|&c| (self.rqs[c].capacity, std::cmp::Reverse(c)))
        else {
            return false;
        };
        self.active_migrate(t, cpu, dst);
        true
    }

    /// The stopper takes `src`'s CPU: its running task goes back to the
    /// runqueue as preempted (put_prev_entity) and the CPU has no current.
    fn put_prev_running(&mut self, src: CpuId) {
        let Some(p) = self.rqs[src].curr else { return };
        self.update_rq_clock(src);
        self.update_curr(src);
        self.pause_segment(src);
        self.update_load_avg(src, Some(p));
        self.tasks[p].state = TaskState::Runnable;
        let v = self.tasks[p].vruntime;
        self.rqs[src].tree.insert((v, p));
        self.context_switch(src, Some(p), None);
    }

    /// active_load_balance_cpu_stop(): the stopper preempts the running
    /// task `t` on `src`, which is moved to `dst`; `src` picks its next
    /// task or idles, `dst` wakes for `t`.
    fn active_migrate(&mut self, t: TaskId, src: CpuId, dst: CpuId) {
        self.put_prev_running(src);
        self.migrate_queued(t, src, dst);
        self.schedule(src);
        self.kick_cpu(dst, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_capacity_leaves_twenty_percent() {
        // Juno r0 LITTLE (446): the largest fitting util is 356 (356 × 1.25 = 445).
        assert!(fits_capacity(356, 446));
        assert!(!fits_capacity(357, 446));
        assert!(fits_capacity(818, 1024));
        assert!(!fits_capacity(820, 1024));
    }

    #[test]
    fn capacity_greater_needs_about_five_percent() {
        assert!(capacity_greater(1024, 446));
        assert!(!capacity_greater(1024, 1000));
        assert!(capacity_greater(1024, 970));
        assert!(!capacity_greater(446, 446));
    }

    #[test]
    fn asym_only_when_capacities_differ() {
        assert!(!asym_cpucap(&[1024; 8]));
        assert!(asym_cpucap(&[446, 1024, 1024, 446, 446, 446]));
        assert!(!asym_cpucap(&[]));
    }

    /// The x86 and POWER machines keep the symmetric placement path; the
    /// Arm boards take the capacity-aware one.
    #[test]
    fn shipped_platforms_take_the_right_path() {
        for name in crate::platform::platform_names() {
            let p = crate::platform::load_named(&crate::params::Spec::new(name)).unwrap();
            let caps: Vec<u64> = (0..p.nr_cpus()).map(|c| u64::from(p.cpu_type_of(c).capacity)).collect();
            let arm = matches!(name, "juno-r0" | "juno-r2" | "hikey960" | "sd835");
            assert_eq!(asym_cpucap(&caps), arm, "{name}");
        }
    }
}

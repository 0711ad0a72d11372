//! Capacity-aware wakeup placement and misfit balancing on the engine's
//! runqueues, for machines whose CPUs differ in capacity (big.LITTLE).
//!
//! Models: Linux v6.8 kernel/sched/fair.c, the asymmetric branch of
//! select_idle_sibling() (select_idle_capacity()), update_misfit_status()
//! and the misfit active balance; the arithmetic is in
//! [`crate::sched::capacity`], which says what is left out.

use super::Engine;
use crate::platform::CpuId;
use crate::sched::capacity::{capacity_greater, fits_capacity, util_fits_cpu};
use crate::sched::{TaskId, TaskState};

impl Engine {
    /// task_fits_cpu(): the task's util_est fits the CPU; with clamps
    /// (v6.2+), util_fits_cpu() with the task's own says it fits outright.
    pub(crate) fn task_fits_cpu(&self, t: TaskId, cpu: CpuId) -> bool {
        let util = self.util_est_form.task_util_est(&self.tasks[t].avg);
        let cap = self.rqs[cpu].capacity;
        if self.uclamp_used && self.kernel.util_fits_cpu() {
            let tk = &self.tasks[t];
            return util_fits_cpu(util, u64::from(tk.uclamp_min), u64::from(tk.uclamp_max), cap, true) > 0;
        }
        fits_capacity(util, cap)
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
        // Misfit status is the fair class's (update_misfit_status).
        if self.rqs[cpu].curr_class != crate::sched::rt::Class::Fair || self.task_fits_cpu(t, cpu) {
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
        if self.fair_groups() {
            self.put_prev_task_fair_grouped(src, p);
            self.put_prev_group_se_unless_same(src, Some(p), None);
        } else {
            self.update_load_avg(src, Some(p));
            self.tasks[p].state = TaskState::Runnable;
            self.queue_fair(src, p);
        }
        self.context_switch(src, Some(p), None);
    }

    /// active_load_balance_cpu_stop(): the stopper preempts the running
    /// task `t` on `src`, which is moved to `dst`; `src` picks its next
    /// task or idles, `dst` wakes for `t`.
    pub(super) fn active_migrate(&mut self, t: TaskId, src: CpuId, dst: CpuId) {
        self.put_prev_running(src);
        // The stopper runs on src.
        self.migrate_queued_by(t, src, dst, src);
        self.schedule(src);
        self.kick_cpu(dst, t);
    }
}

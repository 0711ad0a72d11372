//! CFS task groups (CONFIG_FAIR_GROUP_SCHED, Linux v6.8 kernel/sched/fair.c):
//! a group's tasks share the group's weight (`cpu.shares`, 1024 by default)
//! against the tasks and groups beside it.
//!
//! The kernel gives each group one scheduling entity per CPU whose weight
//! is the group's shares split by the CPUs' share of the group's load
//! (`calc_group_shares`, `update_cfs_group`), and schedules the group's
//! tasks inside that entity's own cfs_rq. govlab flattens the hierarchy into
//! the task weights it implies: a runnable task of a group weighs its nice
//! weight × shares / (the nice weights of the group's runnable tasks on
//! every CPU), so a group's tasks on a CPU together weigh the group's
//! shares × that CPU's part of the group, as `calc_group_shares` gives the
//! group entity. The CPU time split on a runqueue is the hierarchy's.
//!
//! Left out, and said so in docs/workloads.md: the group's load is the
//! runnable weight now rather than the PELT load average the kernel uses
//! (so shares move at once when a task sleeps, not over tens of ms); the
//! group entity's own vruntime (a group's tasks are placed and preempt as
//! tasks), hierarchical PELT (each task keeps its own signal on the root
//! cfs_rq, which is what schedutil reads in the kernel too: the root
//! cfs_rq's util_avg includes the groups'), nested groups (a task counts in
//! its own group only; rt-app's nested paths share their leaf's shares)
//! and CFS bandwidth control (cpu.max).

use super::Engine;
use crate::sched::TaskState;
use crate::workload::TaskGroupSpec;

/// MIN_SHARES (kernel/sched/sched.h, v6.8): a task group's entity never
/// weighs less than 2.
const MIN_SHARES: u64 = 2;

/// A task group as the engine keeps it.
#[derive(Debug, Clone)]
pub struct GroupRt {
    pub shares: u64,
    /// Its tasks (task ids), in creation order.
    pub members: Vec<usize>,
}

impl GroupRt {
    pub fn new(spec: &TaskGroupSpec) -> Self {
        GroupRt { shares: spec.shares, members: Vec::new() }
    }
}

impl Engine {
    /// A task joins group `g` at creation.
    pub(crate) fn group_attach(&mut self, g: u32, t: usize) {
        if let Some(grp) = self.groups.get_mut(g as usize) {
            grp.members.push(t);
        } else {
            self.tasks[t].group = None;
        }
    }

    /// update_cfs_group(): the group's runnable load changed; reweight its
    /// runnable tasks (reweight_entity, charging a running one first).
    #[cold]
    #[inline(never)]
    pub(crate) fn group_load_changed(&mut self, g: u32) {
        let g = g as usize;
        let shares = self.groups[g].shares;
        let load: u64 = self.groups[g]
            .members
            .iter()
            .filter(|&&m| matches!(self.tasks[m].state, TaskState::Runnable | TaskState::Running))
            .map(|&m| self.tasks[m].nice_weight)
            .sum();
        for i in 0..self.groups[g].members.len() {
            let m = self.groups[g].members[i];
            let tk = &self.tasks[m];
            let on_rq = matches!(tk.state, TaskState::Runnable | TaskState::Running);
            let w = (tk.nice_weight * shares).checked_div(load).unwrap_or(shares).max(MIN_SHARES);
            if w == tk.weight {
                continue;
            }
            if !on_rq {
                self.tasks[m].weight = w;
                continue;
            }
            let cpu = tk.cpu;
            if self.rqs[cpu].curr == Some(m) {
                self.update_curr(cpu);
            }
            let rq = &mut self.rqs[cpu];
            rq.load_weight = rq.load_weight - self.tasks[m].weight + w;
            self.tasks[m].weight = w;
        }
    }
}

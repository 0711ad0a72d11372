//! Asymmetric packing by ITMT priority (SD_ASYM_PACKING) on an x86 hybrid
//! part whose CPUs the scheduler sees at one capacity.
//!
//! Models: Linux kernel/sched/fair.c as x86 ITMT uses it (v4.10,
//! `sched_asym_prefer`; v6.5's `sched_asym` / `sched_use_asym_prio`):
//! a busy CPU's tick finds an idle CPU of higher priority
//! (nohz_balancer_kick's `sd_asym_packing` scan) and the idle balance run
//! for it moves the busy CPU's task there (the `group_asym_packing`
//! imbalance and its active balance, `asym_active_balance`). Priorities
//! are the build context's (`kernel::BuildCtx::itmt_priorities`).
//!
//! The idea: the kernel packs work onto its preferred CPUs, those that
//! run fastest (the favoured cores of Turbo Boost Max 3.0; the P-cores of
//! a hybrid part). Here a CPU running exactly one fair task hands it, at its
//! tick, to the idle CPU of the highest priority above its own (the lowest
//! numbered among equals). Until v6.5 priorities are per thread and any idle
//! CPU qualifies; from v6.5 (046a5a95c3b0, eefefa716c9f) siblings share the
//! core's priority and the task moves only off a core with no other busy
//! thread, onto a core with none.
//!
//! Left out: the wakeup path, which asym packing does not touch
//! (select_idle_sibling ignores priorities, here as in the kernel), the
//! balancer's intervals (govlab balances at every tick), queued tasks
//! (a CPU with more than one runnable task goes through the ordinary nohz
//! kick, `machine/placement.rs`), v6.5's help from low-priority idle cores
//! to high-priority cores with busy siblings (18ad34532755), and priorities
//! of the favoured cores within one type (TBMT3).

use std::cmp::Reverse;

use super::Engine;
use crate::kernel::EraId;
use crate::platform::CpuId;

impl Engine {
    /// Asym packing on `cpu`'s balance pass: move its lone running fair
    /// task to the preferred idle CPU. Returns whether it moved.
    pub(crate) fn asym_packing_balance(&mut self, cpu: CpuId) -> bool {
        let Some(prio) = self.itmt_prio.as_deref() else { return false };
        let Some(t) = self.rqs[cpu].curr else { return false };
        if self.rqs[cpu].curr_class != crate::sched::rt::Class::Fair || self.rqs[cpu].nr_running != 1 {
            return false;
        }
        let whole_cores = self.kernel.has(EraId::ItmtSmtSamePrio);
        if whole_cores && !self.plat.cpus[cpu].siblings.iter().all(|&s| self.idle_mask.test(s)) {
            return false;
        }
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        let Some(dst) = allowed
            .and(&self.idle_mask)
            .iter()
            .filter(|&c| prio[c] > prio[cpu])
            .filter(|&c| !whole_cores || self.plat.cpus[c].siblings.iter().all(|&s| self.idle_mask.test(s)))
            .max_by_key(|&c| (prio[c], Reverse(c)))
        else {
            return false;
        };
        self.active_migrate(t, cpu, dst);
        true
    }
}

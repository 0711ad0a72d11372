//! RCU callbacks hold the tick of the CPU that queued them.
//!
//! Freeing an object that RCU readers may still see is deferred with
//! call_rcu(): the callback goes on the calling CPU's list
//! (`rdp->cblist`) and runs there once a grace period has passed. While
//! that list is not empty the CPU keeps its tick: tick_nohz_next_event()
//! (v4.17+; tick_nohz_stop_sched_tick() before it) asks rcu_needs_cpu(),
//! and a yes makes the next event "now + one tick", so with the tick running
//! it is not stopped (`ts->timer_expires` 0, tick_nohz_retain_tick()) and
//! tick_nohz_get_sleep_length() gives the idle governor the time to the next
//! programmed event, the tick, as the sleep length. Linux v5.2
//! kernel/time/tick-sched.c and kernel/rcu/tree_plugin.h (the
//! !CONFIG_RCU_FAST_NO_HZ rcu_needs_cpu(): the callback list is not empty);
//! the same test in v6.8 (`rcu_needs_cpu()`, callbacks queued and not
//! offloaded). RCU_FAST_NO_HZ (until v5.17, e2c73a6860bd "rcu: Remove the
//! RCU_FAST_NO_HZ Kconfig option") let such a CPU stop its tick with a
//! timer a few jiffies out instead; it sat behind RCU_EXPERT, default n
//! ("Say N if you are unsure"), and no distribution configuration of the
//! evaluations' kernels is known to have set it: not modelled. Neither are
//! offloaded callbacks (`rcu_nocbs=`, not set by default) nor v6.2's lazy
//! callbacks (CONFIG_RCU_LAZY, offloaded CPUs only).
//!
//! What queues callbacks here: an exiting task (v5.2 kernel/exit.c
//! release_task()'s call_rcu of delayed_put_task_struct for a thread that
//! reaps itself; a process's exit_mmap() drops the last reference to the
//! files it had mapped, its executable's and libraries', and __fput() ends
//! in fs/file_table.c file_free()'s call_rcu) and a workload's
//! [`Op::CallRcu`](crate::workload::Op::CallRcu) where it closes a file
//! (close(2): the same file_free()).
//!
//! How long the callbacks stay queued: [`CB_WAIT_JIFFIES`] after the last
//! call_rcu() (a new callback waits for a grace period that starts after
//! it, then for its invocation; modelled as one fixed wait). The value is
//! RCU's own estimate, `rcutree.rcu_idle_gp_delay`'s default of four
//! jiffies, chosen "on the theory that grace periods tend to last about
//! that long" (Paul E. McKenney, "Energy-efficiency options within RCU",
//! LKML, 10 December 2020); at HZ=250, 16 ms. Measured on the development
//! machine (tools/calibrate/rcu: membarrier(MEMBARRIER_CMD_GLOBAL), one
//! synchronize_rcu() per call, Linux 6.18, HZ=250): median 16 ms, deciles
//! 8-9 and 28 ms, on a loaded two-CPU guest.

use super::Engine;
use crate::platform::CpuId;

/// How long a CPU's callbacks stay queued after its last call_rcu(), in
/// jiffies (see the module header: rcu_idle_gp_delay's default).
pub const CB_WAIT_JIFFIES: u64 = 4;

impl Engine {
    /// call_rcu() on `cpu` now.
    pub(crate) fn call_rcu(&mut self, cpu: CpuId) {
        let until = self.now + CB_WAIT_JIFFIES * self.tun.tick_ns;
        let rq = &mut self.rqs[cpu];
        rq.rcu_cbs_until_ns = rq.rcu_cbs_until_ns.max(until);
    }

    /// rcu_needs_cpu(): `cpu` has callbacks queued (and the kernel's option
    /// `rcu_tick` lets them hold the tick).
    pub(crate) fn rcu_needs_cpu(&self, cpu: CpuId) -> bool {
        self.kernel.rcu_tick && self.now < self.rqs[cpu].rcu_cbs_until_ns
    }
}

//! Idle CPUs' blocked load: who decays the PELT signals of a CPU whose tick
//! is stopped, and when.
//!
//! A CPU that idles with its tick stopped updates nothing of its own: its
//! runqueue's `util_avg` and `load_avg` stay where its last task left them
//! until something decays them (`update_blocked_averages`). What does, by
//! era (`EraId::NohzBlockedLoad`):
//!
//! * **From v4.17** (b7031a02ec75 "sched/fair: Add NOHZ_STATS_KICK",
//!   f643ea220701 "sched/nohz: Stop NOHZ stats when decayed", 31e77c93e432
//!   "sched/fair: Update blocked load when newly idle"; Linux v6.8
//!   kernel/sched/fair.c `nohz_balance_enter_idle`, `nohz_balancer_kick`,
//!   `kick_ilb`, `_nohz_idle_balance`, `update_nohz_stats`,
//!   `nohz_newidle_balance`): a CPU that stops its tick joins
//!   `nohz.idle_cpus_mask` with blocked load (`rq->has_blocked_load`,
//!   `nohz.has_blocked`). At most once per `nohz.next_blocked` period
//!   (LOAD_AVG_PERIOD ms in jiffies) the idle CPUs' signals are decayed by
//!   a stats pass: run by a CPU going newly idle whose `avg_idle` is at
//!   least `sysctl_sched_migration_cost`, or else kicked by a busy CPU's
//!   tick onto the idle load balancer (the first idle CPU of the mask,
//!   `find_new_ilb`), which an IPI wakes. The pass decays each idle CPU of
//!   the mask that still has blocked load (the ilb's own too); a CPU whose
//!   signals are all zero has none left, and the passes stop when no CPU
//!   has any.
//! * **Before v4.17** (v4.14 `nohz_idle_balance`, `rebalance_domains`):
//!   only at the CPU's own tick or wakeup, and by the idle load balancer
//!   when a busy CPU kicks it to balance (`nohz_kick_needed`): its
//!   `rebalance_domains()` for each idle CPU begins with
//!   `update_blocked_averages()`: each idle CPU whose balance is due, and
//!   the ilb itself (`nohz_balance_pass`).
//!
//! A decayed runqueue's `cpufreq_update_util(rq, 0)` is then a call from
//! the CPU doing the pass: a remote call for every other CPU, which the
//! governor takes or turns away as any remote call (machine/cpufreq.rs:
//! dropped before v4.14, `cpufreq_this_cpu_can_update` from v4.14).
//!
//! Left out: `rq->last_blocked_load_update_tick` (a CPU already updated in
//! the same jiffy is skipped), the load balancer's own reading of blocked
//! load (LBF_NOHZ_STATS, v4.17 to v5.12), and the rt and dl signals among
//! what counts as blocked (govlab's blocked update decays the fair ones
//! only). `avg_idle` is newidle balance's (machine/placement.rs).

use super::placement::{CpuIdleType, MIGRATION_COST_NS};
use super::rq::CpuMode;
use super::Engine;
use crate::platform::CpuId;
use crate::sched::cpumask::CpuMask;
use crate::sched::pelt::LOAD_AVG_PERIOD;

/// nohz_flags' kick bits (kernel/sched/sched.h, v4.17+; before, the one
/// balance kick).
const NOHZ_BALANCE_KICK: u8 = 1;
const NOHZ_STATS_KICK: u8 = 2;

impl Engine {
    /// msecs_to_jiffies(LOAD_AVG_PERIOD), rounded up as the kernel rounds.
    fn blocked_period_jiffies(&self) -> u64 {
        (LOAD_AVG_PERIOD * 1_000_000).div_ceil(self.tun.tick_ns)
    }

    #[inline]
    fn jiffies(&self) -> u64 {
        self.now / self.tun.tick_ns
    }

    /// nohz_balance_enter_idle(): `cpu` stopped its tick (it was running:
    /// tick_nohz_idle_stop_tick() calls this only when the tick newly
    /// stops, not when an idle CPU with its tick stopped idles again after
    /// an interrupt); it has blocked load, and so the machine does.
    #[inline]
    pub(crate) fn nohz_balance_enter_idle(&mut self, cpu: CpuId) {
        if self.nohz_blocked {
            self.rqs[cpu].has_blocked_load = true;
            self.nohz_has_blocked = true;
        }
    }

    /// A CPU in nohz.idle_cpus_mask now: idle with its tick stopped.
    #[inline]
    fn nohz_idle(&self, cpu: CpuId) -> bool {
        self.idle_mask.test(cpu) && self.rqs[cpu].tick_stopped
    }

    /// nohz.idle_cpus_mask now.
    #[inline]
    fn nohz_idle_mask(&self) -> CpuMask {
        self.idle_mask.and(&self.tick_stopped_mask)
    }

    /// nohz_balancer_kick() on busy CPU `this`'s tick (v5.2
    /// kernel/sched/fair.c; v6.8 the same but for the kick's SMT and
    /// asymmetric-capacity tests, not modelled). With a CPU in
    /// nohz.idle_cpus_mask: the stats kick once nohz.next_blocked has
    /// passed (from v4.17); the balance kick, which carries the stats one
    /// from v4.17, once nohz.next_balance has come and `this` has two tasks
    /// or its LLC more than one busy CPU (sds->nr_busy_cpus: a CPU counts
    /// idle there once its tick is stopped). kick_ilb() advances
    /// nohz.next_balance by a jiffy (v5.2; v5.8's 3ea2f097b17e sets it to
    /// jiffies + 1 and only for a balance kick: not modelled), takes the
    /// first CPU of the mask but `this` (find_new_ilb()) and sends it an
    /// IPI unless a kick is pending there (nohz_flags), which takes the new
    /// flags with it. The ilb leaves its idle state and runs the pass
    /// before it idles again (`nohz_kick_received`).
    pub(crate) fn nohz_balancer_kick(&mut self, this: CpuId) {
        let mut candidates = self.nohz_idle_mask();
        candidates.clear(this);
        let Some(ilb) = candidates.next_from(0) else { return };
        let jiffies = self.jiffies();
        let mut flags = 0;
        if self.nohz_has_blocked && jiffies > self.nohz_next_blocked_j {
            flags = NOHZ_STATS_KICK;
        }
        if jiffies >= self.nohz_next_balance_j && self.nohz_balance_wanted(this) {
            flags = NOHZ_BALANCE_KICK | if self.nohz_blocked { NOHZ_STATS_KICK } else { 0 };
        }
        if flags == 0 {
            return;
        }
        self.nohz_next_balance_j += 1;
        if self.nohz_kicked.is_some() {
            self.nohz_kick_flags |= flags;
            return;
        }
        self.nohz_kicked = Some(ilb);
        self.nohz_kick_flags = flags;
        match self.rqs[ilb].mode {
            CpuMode::Idle { .. } => self.interrupt(ilb),
            CpuMode::Exiting { .. } => {}
            CpuMode::Active => {
                // Not in an idle exit: a task the ilb pulls for itself
                // needs the pick the exit would run.
                self.nohz_kick_received(ilb);
                if self.rqs[ilb].curr.is_none() && self.rqs[ilb].nr_running > 0 {
                    self.schedule(ilb);
                }
            }
        }
    }

    /// The balance kick's test after the nohz.next_balance gate: two tasks
    /// on `this`, or more than one busy CPU in its LLC.
    fn nohz_balance_wanted(&self, this: CpuId) -> bool {
        if self.rqs[this].nr_running >= 2 {
            return true;
        }
        let busy = self.llc_masks[self.plat.cpus[this].llc].and_not(&self.nohz_idle_mask());
        busy.iter().nth(1).is_some()
    }

    /// nohz_balancer_kick()'s balance kick with EAS, on busy CPU `this`'s
    /// tick, and the idle load balancer's rebalance_domains(CPU_IDLE) for
    /// each idle CPU of the mask at the top domain, where rd->overutilized
    /// is cleared (v5.1 .. v6.8: on an asymmetric machine the kick comes
    /// from two tasks on `this` or a misfit one; the LLC's busy count is
    /// skipped, and nohz.next_balance is each idle CPU's own top-level due
    /// time). The pass is done at the kick, without the IPI's delay.
    pub(crate) fn nohz_idle_balance_top(&mut self, this: CpuId) {
        if self.rqs[this].nr_running < 2 && !self.misfit(this) {
            return;
        }
        for cpu in 0..self.rqs.len() {
            if self.nohz_idle(cpu) {
                self.rebalance_top(cpu, false);
            }
        }
    }

    /// The kicked ilb is back in C0: scheduler_ipi() raises the softirq
    /// only if it is still idle with nothing to run (got_nohz_idle_kick());
    /// else the kick is dropped and the next busy tick kicks again.
    pub(crate) fn nohz_kick_received(&mut self, cpu: CpuId) {
        if self.nohz_kicked != Some(cpu) {
            return;
        }
        self.nohz_kicked = None;
        let flags = std::mem::take(&mut self.nohz_kick_flags);
        if self.rqs[cpu].nr_running != 0 {
            return;
        }
        if flags & NOHZ_BALANCE_KICK != 0 {
            self.nohz_balance_pass(cpu, flags & NOHZ_STATS_KICK != 0);
        } else {
            self.nohz_stats_pass(cpu, true);
        }
    }

    /// _nohz_idle_balance() with NOHZ_BALANCE_KICK on ilb `ilb` (v5.2; v4.14's
    /// nohz_idle_balance() before the stats kick): for each other CPU of
    /// nohz.idle_cpus_mask in turn, its blocked load decayed (with `stats`),
    /// and rebalance_domains(CPU_IDLE) if its rq->next_balance has come
    /// (before v4.17 that walk begins with update_blocked_averages()); a
    /// task pulled wakes its CPU. Then the ilb's own update and walk (a
    /// task it pulls runs after the idle loop's need_resched check).
    /// nohz.next_balance becomes the earliest next_balance of the other
    /// CPUs (set after the ilb's own walk in v5.2; moved before it by v5.8's
    /// 3ea2f097b17e, not modelled), and with `stats` the next stats pass is
    /// due a period later.
    fn nohz_balance_pass(&mut self, ilb: CpuId, stats: bool) {
        let jiffies = self.jiffies();
        if stats {
            self.nohz_has_blocked = false;
        }
        let mut blocked = false;
        let mut next: Option<u64> = None;
        // The mask is read afresh after each CPU: a pull wakes a CPU.
        let mut at = self.idle_mask.next_and_from(&self.tick_stopped_mask, 0);
        while let Some(cpu) = at {
            if cpu != ilb {
                if stats && self.rqs[cpu].has_blocked_load {
                    self.update_blocked_from(cpu, ilb);
                    blocked |= self.rqs[cpu].has_blocked_load;
                }
                if jiffies >= self.rqs[cpu].next_balance_j {
                    if !self.nohz_blocked {
                        self.update_blocked_from(cpu, ilb);
                    }
                    if let Some(t) = self.rebalance_idle_at(cpu, jiffies) {
                        self.kick_cpu(cpu, t);
                    }
                }
                let nb = self.rqs[cpu].next_balance_j;
                next = Some(next.map_or(nb, |x: u64| x.min(nb)));
            }
            at = self.idle_mask.next_and_from(&self.tick_stopped_mask, cpu + 1);
        }
        if stats || !self.nohz_blocked {
            self.update_blocked_from(ilb, ilb);
            blocked |= self.rqs[ilb].has_blocked_load;
        }
        self.rebalance_domains(ilb, CpuIdleType::Idle);
        if stats {
            self.nohz_next_blocked_j = jiffies + self.blocked_period_jiffies();
            if blocked {
                self.nohz_has_blocked = true;
            }
        }
        if let Some(nb) = next {
            self.nohz_next_balance_j = nb;
        }
    }

    /// nohz_newidle_balance(): `cpu` is going idle, having pulled nothing.
    /// If it expects to idle long enough and the period has passed, it
    /// does the stats pass itself (before its own idle entry, from v5.13:
    /// the same moment here), and not for itself.
    pub(crate) fn nohz_newidle_balance(&mut self, cpu: CpuId) {
        if self.rqs[cpu].avg_idle_ns < MIGRATION_COST_NS || !self.nohz_has_blocked {
            return;
        }
        if self.jiffies() < self.nohz_next_blocked_j {
            return;
        }
        self.nohz_stats_pass(cpu, false);
    }

    /// _nohz_idle_balance(NOHZ_STATS_KICK) on `this`: each idle CPU of the
    /// mask with blocked load is decayed, from the one after `this` round
    /// to `this` itself (if `own`); the next pass is due a period later.
    fn nohz_stats_pass(&mut self, this: CpuId, own: bool) {
        self.nohz_has_blocked = false;
        let n = self.rqs.len();
        let mut blocked = false;
        for i in 1..=n {
            let cpu = (this + i) % n;
            if (cpu == this && !own) || !self.nohz_idle(cpu) || !self.rqs[cpu].has_blocked_load {
                continue;
            }
            self.update_blocked_from(cpu, this);
            blocked |= self.rqs[cpu].has_blocked_load;
        }
        self.nohz_next_blocked_j = self.jiffies() + self.blocked_period_jiffies();
        if blocked {
            self.nohz_has_blocked = true;
        }
        // The pass sets nohz.next_balance as a balance pass does.
        let mut others = self.nohz_idle_mask();
        others.clear(this);
        if let Some(nb) = others.iter().map(|c| self.rqs[c].next_balance_j).min() {
            self.nohz_next_balance_j = nb;
        }
    }

    /// update_blocked_averages(`cpu`) run by CPU `this`: its hook call is
    /// remote unless `cpu` is `this`.
    fn update_blocked_from(&mut self, cpu: CpuId, this: CpuId) {
        self.hook_this_cpu = Some(this);
        self.update_rq_clock(cpu);
        self.update_blocked_averages(cpu);
        self.hook_this_cpu = None;
    }

    /// update_blocked_load_status(): whether `cpu` still has blocked load
    /// (cfs_rq_has_blocked() for its runqueue and its groups' runqueues).
    pub(crate) fn update_blocked_load_status(&mut self, cpu: CpuId) {
        let root = &self.rqs[cpu].cfs.avg;
        let mut blocked = root.load_avg != 0 || root.util_avg != 0;
        if !blocked && self.sched_ext {
            blocked = self.groups.iter().any(|g| g.cpus[cpu].cfs.avg.load_avg != 0 || g.cpus[cpu].cfs.avg.util_avg != 0);
        }
        self.rqs[cpu].has_blocked_load = blocked;
    }
}

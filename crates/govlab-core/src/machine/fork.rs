//! A new task's way onto a CPU (kernel/sched/core.c `wake_up_new_task`
//! and kernel/sched/fair.c `select_task_rq_fair` with `WF_FORK`, Linux
//! v6.8): where fork balancing puts it, and the PELT values it arrives
//! with.
//!
//! **Models: Linux v6.8 mainline, kernel/sched/fair.c `find_idlest_cpu`,
//! `find_idlest_group`, `update_sg_wakeup_stats`, `update_pick_idlest`,
//! `find_idlest_group_cpu`** (renamed `sched_balance_find_dst_cpu`,
//! `sched_balance_find_dst_group` and `sched_balance_find_dst_group_cpu`
//! in v6.10), and kernel/sched/core.c `wake_up_new_task`.
//!
//! # Placement (find_idlest_cpu)
//!
//! Every default topology level has SD_BALANCE_FORK, so the walk starts at
//! the widest domain of the parent's CPU and goes down:
//!
//! 1. The domains are the machine (groups: packages), the package (groups:
//!    LLCs), the LLC (groups: cores) and the core (groups: its SMT
//!    threads); a level whose span equals the one below is degenerate and
//!    dropped, as the kernel's domain builder does.
//! 2. In a domain, each group's statistics are taken
//!    (`update_sg_wakeup_stats`): idle CPUs, running tasks, utilisation
//!    (`cpu_util`: max of util_avg and util_est, capped at capacity) and
//!    load. A group with fewer tasks than CPUs has spare capacity; one with
//!    as many is fully busy; one with more is overloaded.
//! 3. The idlest group other than the parent's (`update_pick_idlest`): the
//!    lowest group type; among groups with spare capacity the most idle
//!    CPUs, then the least utilisation; among busy ones the least load per
//!    CPU. Groups are visited from the one after the local group, so a tie
//!    goes to the first in that order.
//! 4. The local group is kept (descend into the child domain) when its
//!    type is lower, or, with spare capacity, when it has at least as many
//!    idle CPUs; for busy groups when the idlest's load is not lower by
//!    more than the domain's `imbalance_pct` (117) margin.
//! 5. In the chosen group (`find_idlest_group_cpu`): the idle CPU in the
//!    shallowest idle state (least exit latency), the most recently idled
//!    on a tie; without an idle CPU, the least loaded one. The walk then
//!    continues in the domains of that CPU below the level just decided.
//!
//! Before v5.5 (`EraId::FindIdlestGroupRework`, 57abff067a08) step 3-4
//! compared loads instead (`find_idlest_group_by_load`): the group of least
//! runnable load per unit of capacity, then of least load with the blocked
//! load, each against the domain's imbalance_pct, and the local group kept
//! only when it is clearly the less loaded. Two idle groups tie, and a tie
//! goes to the other group: on an idle big.LITTLE board a new task leaves
//! its parent's cluster (a first rt-app task forked from a LITTLE CPU starts
//! on a big one), where v5.5 keeps it among the cluster's idle CPUs.
//!
//! A workload's first tasks are forked by its launcher (the benchmark's
//! main process or a shell), which govlab does not run: every one of them
//! is placed when the run begins, from CPU 0, each counting the ones placed
//! before it as runnable where they went; one with a start delay sleeps
//! until its start (as rt-app's `delay` does) and is then woken from the
//! CPU it was given, by the wakeup path. The launcher itself is taken to
//! wait for them (a shell's `wait`, rt-app's join), so CPU 0 counts as
//! idle.
//!
//! On an idle machine a new task thus lands on an idle CPU, preferring an
//! idle package, then an idle core, then the CPU whose blocked
//! utilisation is lowest: the CPU most likely to sit at a low frequency.
//!
//! # Exec balancing
//!
//! `sched_exec` (kernel/sched/core.c, v2.6 to v6.8) runs the same walk
//! when a task calls execve(), before the new image is loaded:
//! `select_task_rq(p, task_cpu(p), WF_EXEC)` (older kernels pass the
//! `SD_BALANCE_EXEC` domain flag instead), whose fair-class slow path is `find_idlest_cpu` from the widest domain
//! with SD_BALANCE_EXEC (every default level): no wake_affine, no EAS (that
//! is for WF_TTWU only). If the answer is another CPU, the task's CPU stopper
//! moves it there (`stop_one_cpu(migration_cpu_stop)`). A real-time or
//! deadline task stays (`select_task_rq_rt`/`_dl` balance only wakeups and
//! forks). What differs from a fork:
//!
//! - v5.5+ (`update_sg_wakeup_stats`): the exec'ing task's own CPU is
//!   counted without it: its running count, load (`cpu_load_without`) and
//!   utilisation (`cpu_util_without`) less the task's, and idle if it has
//!   nothing else (`idle_cpu_without`); and in a domain whose CPUs differ
//!   in capacity (SD_ASYM_CPUCAPACITY) a group none of whose CPUs the task
//!   fits (`task_fits_cpu`) is `group_misfit_task`, which ranks between
//!   fully busy and overloaded; of two misfit groups the one of greater
//!   maximum capacity wins, the local one on a tie (the per-CPU fit test is
//!   v6.2's, b48e16a69792; v5.5-v6.1 tested the group's maximum capacity,
//!   the same answer without clamps);
//! - before v5.5 (`find_idlest_group` of v4.10-v5.4): spare capacity
//!   decides first, which forks skip because a new task has no utilisation
//!   yet: each group's largest spare capacity (`capacity_spare_wake`:
//!   capacity less `cpu_util_wake`, the utilisation without the task); the
//!   local group is kept if its spare exceeds half the task's utilisation
//!   and is within the domain's imbalance_pct margin of the most spare of
//!   the others; else that other group is taken if its spare exceeds half
//!   the task's utilisation; only then the loads, as for a fork (which
//!   count the exec'ing task on its CPU).
//!
//! A trace replay makes an exec where the recording shows one
//! (trace/replay.rs); no other workload execs.
//!
//! Left out: NUMA imbalance allowances (`allow_numa_imbalance`), the
//! `sched_idle_cpu` shortcut (no SCHED_IDLE tasks), core scheduling
//! cookies, and capacity-asymmetric systems' `WF_FORK` (they take the same
//! walk; EAS is not consulted for a fork).

use super::rq::{CpuMode, EnqueueKind};
use super::Engine;
use crate::platform::CpuId;
use crate::sched::cpumask::CpuMask;
use crate::kernel::EraId;
use crate::sched::fork::{init_util_full, post_init_entity_util_avg};
use crate::sched::pelt;
use crate::sched::TaskId;
use crate::sched::rt::Class;

/// `sd->imbalance_pct` of the MC and PKG domains (kernel/sched/topology.c
/// `sd_init`, v6.8: 117; the SMT level's 110 is not distinguished).
const IMBALANCE_PCT: u64 = 117;

/// A group's type (`enum group_type`, only the classes a fork compares).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    HasSpare,
    FullyBusy,
    /// The task fits none of the group's CPUs (exec balancing only: a new
    /// task has no utilisation).
    MisfitTask,
    Overloaded,
}

/// `struct sg_lb_stats` as `update_sg_wakeup_stats` fills it.
#[derive(Debug, Clone, Copy)]
struct SgStats {
    group_type: GroupType,
    idle_cpus: u32,
    group_util: u64,
    /// Σ cpu load × SCHED_CAPACITY_SCALE / Σ capacity.
    avg_load: u64,
    /// `sgc->max_capacity`.
    max_capacity: u64,
}

/// The topology levels a sched domain can span, widest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Machine,
    Package,
    Llc,
    Core,
    Cpu,
}

/// One CPU's sched domains for fork balancing, worked out once from the
/// topology, which no run changes (the kernel too builds its domains and
/// groups once, in build_sched_domains()): its levels widest first
/// ([`Engine::fork_levels`]), each level's span and, for each level but
/// the last, the groups of that domain ([`Engine::fork_groups`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct ForkDomains {
    levels: Vec<Level>,
    spans: Vec<CpuMask>,
    groups: Vec<Vec<CpuMask>>,
}

impl Engine {
    /// Every CPU's [`ForkDomains`].
    pub(crate) fn build_fork_domains(&self) -> Vec<ForkDomains> {
        (0..self.plat.nr_cpus())
            .map(|cpu| {
                let levels = self.fork_levels(cpu);
                let spans = levels.iter().map(|&l| self.span_of(cpu, l)).collect();
                let groups = levels.windows(2).map(|w| self.fork_groups(cpu, w[0], w[1])).collect();
                ForkDomains { levels, spans, groups }
            })
            .collect()
    }

    /// The CPUs `cpu` shares `level` with.
    fn span_of(&self, cpu: CpuId, level: Level) -> CpuMask {
        let c = &self.plat.cpus[cpu];
        let mut m = CpuMask::default();
        match level {
            Level::Machine => return self.all_cpus,
            Level::Llc => return self.llc_masks[c.llc],
            Level::Package => return self.package_masks[c.package],
            Level::Core => {
                for &s in &c.siblings {
                    m.set(s);
                }
                m.set(cpu);
            }
            Level::Cpu => m.set(cpu),
        }
        m
    }

    /// The domain levels of `cpu`, widest first, a level whose span equals
    /// the next narrower one's dropped (a degenerate domain); the last
    /// entry is `Level::Cpu`, the groups of the narrowest domain.
    fn fork_levels(&self, cpu: CpuId) -> Vec<Level> {
        let mut out: Vec<Level> = Vec::new();
        for level in [Level::Cpu, Level::Core, Level::Llc, Level::Package, Level::Machine] {
            if out.last().map_or(true, |&l| self.span_of(cpu, l) != self.span_of(cpu, level)) {
                out.push(level);
            }
        }
        out.reverse();
        out
    }

    /// The groups of `cpu`'s domain at `level`: its span cut by `child`.
    fn fork_groups(&self, cpu: CpuId, level: Level, child: Level) -> Vec<CpuMask> {
        let span = self.span_of(cpu, level);
        let mut seen = CpuMask::default();
        let mut groups = Vec::new();
        for i in span.iter() {
            if !seen.test(i) {
                let g = self.span_of(i, child).and(&span);
                for j in g.iter() {
                    seen.set(j);
                }
                groups.push(g);
            }
        }
        groups
    }

    /// Whether `cpu` counts as idle for this fork (the forking CPU counts
    /// as its runqueue says: a forking task is running there; a workload's
    /// launcher is not modelled, see the header).
    fn cpu_idle_for_fork(&self, cpu: CpuId) -> bool {
        self.idle_mask.test(cpu)
    }

    /// `update_sg_wakeup_stats` for a new task (not yet on any runqueue),
    /// or for the exec'ing task `exec` (counted without it on its CPU; in a
    /// domain of differing capacities, `asym`, a group it fits nowhere is
    /// misfit).
    fn sg_wakeup_stats(&self, group: CpuMask, pending: &[u32], exec: Option<TaskId>, asym: bool) -> SgStats {
        let (mut nr, mut idle, mut util, mut load, mut cap, mut weight, mut max_cap) = (0u32, 0u32, 0u64, 0u64, 0u64, 0u32, 0u64);
        let mut misfit = asym && exec.is_some();
        for i in group.iter() {
            let rq = &self.rqs[i];
            weight += 1;
            let own = exec.filter(|&t| self.tasks[t].cpu == i && rq.curr == Some(t));
            let queued = (rq.nr_running + pending.get(i).copied().unwrap_or(0)).saturating_sub(u32::from(own.is_some()));
            nr += queued;
            util += self.cpu_util_without(i, own);
            load += rq.cfs.avg.load_avg.saturating_sub(own.map_or(0, |t| self.tasks[t].avg.load_avg));
            cap += rq.capacity;
            max_cap = max_cap.max(rq.capacity);
            if queued == 0 && (own.is_some() || self.cpu_idle_for_fork(i)) {
                idle += 1;
            }
            if misfit && exec.is_some_and(|t| self.task_fits_cpu(t, i)) {
                misfit = false;
            }
        }
        let group_type = match nr.cmp(&weight) {
            std::cmp::Ordering::Greater => GroupType::Overloaded,
            _ if misfit => GroupType::MisfitTask,
            std::cmp::Ordering::Less => GroupType::HasSpare,
            std::cmp::Ordering::Equal => GroupType::FullyBusy,
        };
        SgStats { group_type, idle_cpus: idle, group_util: util, avg_load: load * pelt::SCHED_CAPACITY_SCALE / cap.max(1), max_capacity: max_cap }
    }

    /// `cpu_util_without` (v5.x-v6.8: `cpu_util(cpu, p, -1, 0)`): `cpu`'s
    /// CFS utilisation, less that of `own`, the running task being
    /// balanced there, and the larger of it and the runqueue's util_est
    /// (less the task's estimate), capped at the CPU's capacity.
    fn cpu_util_without(&self, cpu: CpuId, own: Option<TaskId>) -> u64 {
        let rq = &self.rqs[cpu];
        let Some(t) = own else { return pelt::cpu_util(&rq.cfs, rq.capacity) };
        let avg = &self.tasks[t].avg;
        let mut util = rq.cfs.avg.util_avg.saturating_sub(avg.util_avg);
        if self.util_est {
            let est = u64::from(rq.cfs.util_est).saturating_sub(u64::from(self.util_est_form.task_est(avg)));
            util = util.max(est);
        }
        util.min(rq.capacity)
    }

    /// Whether the CPUs of `span` differ in capacity (the domain has
    /// SD_ASYM_CPUCAPACITY).
    fn span_asym(&self, span: &CpuMask) -> bool {
        let mut caps = span.iter().map(|i| self.rqs[i].capacity);
        let first = caps.next();
        caps.any(|c| Some(c) != first)
    }

    /// `find_idlest_group`: the group of `span` (children `groups`) to
    /// descend into instead of the one holding `this`, if any.
    /// `exec`: the exec'ing task, `asym`: the domain's CPUs differ in
    /// capacity (see the header).
    fn find_idlest_group(&self, groups: &[CpuMask], allowed: &CpuMask, this: CpuId, pending: &[u32], exec: Option<TaskId>, asym: bool) -> Option<CpuMask> {
        let local_at = groups.iter().position(|g| g.test(this))?;
        let mut idlest: Option<(CpuMask, SgStats)> = None;
        let mut local = None;
        for k in 0..groups.len() {
            let g = groups[(local_at + k) % groups.len()];
            if g.and(allowed).is_empty() {
                continue;
            }
            let s = self.sg_wakeup_stats(g, pending, exec, asym);
            if k == 0 {
                local = Some(s);
                continue;
            }
            let better = match &idlest {
                None => true,
                Some((_, best)) => update_pick_idlest(best, &s),
            };
            if better {
                idlest = Some((g, s));
            }
        }
        let (g, idlest) = idlest?;
        let Some(local) = local else { return Some(g) };
        if local.group_type != idlest.group_type {
            return (local.group_type > idlest.group_type).then_some(g);
        }
        match local.group_type {
            GroupType::HasSpare => (local.idle_cpus < idlest.idle_cpus).then_some(g),
            GroupType::MisfitTask => (local.max_capacity < idlest.max_capacity).then_some(g),
            GroupType::FullyBusy | GroupType::Overloaded => {
                let imbalance = pelt::NICE_0_LOAD * (IMBALANCE_PCT - 100) / 100;
                if idlest.avg_load >= local.avg_load + imbalance || 100 * local.avg_load <= IMBALANCE_PCT * idlest.avg_load {
                    None
                } else {
                    Some(g)
                }
            }
        }
    }

    /// The runnable load of `cpu` as v4.15-v5.6 kept it
    /// (`cfs_rq->runnable_load_avg`, `weighted_cpuload` / `cpu_runnable_load`):
    /// the load averages of the fair tasks on its runqueue, the current one
    /// included, plus a new task's full weight for each forked there and
    /// not yet enqueued (`pending`).
    pub(super) fn runnable_load(&self, cpu: CpuId, pending: &[u32]) -> u64 {
        self.runnable_load_inline(cpu, pending)
    }

    /// [`Self::runnable_load`] inline, for the fork balancer's walk over
    /// every CPU of the machine.
    #[inline(always)]
    fn runnable_load_inline(&self, cpu: CpuId, pending: &[u32]) -> u64 {
        let rq = &self.rqs[cpu];
        let queued: u64 = if self.fair_groups() {
            self.queued_fair_tasks(cpu).iter().map(|&t| self.tasks[t].avg.load_avg).sum()
        } else {
            rq.tree.iter().map(|&(_, t)| self.tasks[t].avg.load_avg).sum()
        };
        let curr = rq.curr.filter(|_| rq.cfs_curr).map_or(0, |t| self.tasks[t].avg.load_avg);
        queued + curr + u64::from(pending.get(cpu).copied().unwrap_or(0)) * pelt::NICE_0_LOAD
    }

    /// `find_idlest_group` before v5.5 (the form of v4.15-v5.4, with
    /// 6b94780e45c1's blocked-load tie-break, v4.11): each group's runnable
    /// load and load (blocked included), per unit of its capacity. A group
    /// other than the local one becomes the idlest when its runnable load
    /// is lower by more than the domain's imbalance (`NICE_0_LOAD ×
    /// (imbalance_pct − 100) / 100`), or close to it with a load lower by
    /// more than half the imbalance_pct margin. The local group is kept if
    /// the idlest's runnable load is higher by more than the imbalance, or
    /// if both are close and the local load is the lower by that margin;
    /// else the idlest wins, ties included: between two idle groups the
    /// new task leaves its parent's. Fork ignores spare capacity (its
    /// utilisation is not set yet). The kernel's unsigned arithmetic,
    /// wrapping, is kept.
    /// For an exec (`exec`), spare capacity decides first (see the header).
    fn find_idlest_group_by_load(&self, groups: &[CpuMask], allowed: &CpuMask, this: CpuId, pending: &[u32], level: Level, exec: Option<TaskId>) -> Option<CpuMask> {
        // sd_init() before v5.10: 110 for SMT, 117 for a cache-sharing
        // (MC) domain, 125 above.
        let imbalance_pct: u64 = match level {
            Level::Core => 110,
            Level::Llc => 117,
            _ => 125,
        };
        let imbalance_scale = 100 + (imbalance_pct - 100) / 2;
        let imbalance = pelt::NICE_0_LOAD * (imbalance_pct - 100) / 100;
        let local_at = groups.iter().position(|g| g.test(this))?;
        let (mut this_runnable, mut this_avg) = (u64::MAX, u64::MAX);
        let (mut min_runnable, mut min_avg) = (u64::MAX, u64::MAX);
        let mut idlest = None;
        let (mut this_spare, mut most_spare, mut most_spare_group) = (0u64, 0u64, None);
        for k in 0..groups.len() {
            let g = groups[(local_at + k) % groups.len()];
            if g.and(allowed).is_empty() {
                continue;
            }
            let (mut runnable, mut avg, mut cap, mut spare) = (0u64, 0u64, 0u64, 0u64);
            for i in g.iter() {
                runnable += self.runnable_load_inline(i, pending);
                avg += self.rqs[i].cfs.avg.load_avg + u64::from(pending.get(i).copied().unwrap_or(0)) * pelt::NICE_0_LOAD;
                cap += self.rqs[i].capacity;
                // capacity_spare_wake(): capacity less cpu_util_wake().
                let own = exec.filter(|&t| self.tasks[t].cpu == i && self.rqs[i].curr == Some(t));
                spare = spare.max(self.rqs[i].capacity.saturating_sub(self.cpu_util_without(i, own)));
            }
            if k == 0 {
                this_spare = spare;
            } else if most_spare < spare {
                (most_spare, most_spare_group) = (spare, Some(g));
            }
            let cap = cap.max(1);
            let (runnable, avg) = (runnable * pelt::SCHED_CAPACITY_SCALE / cap, avg * pelt::SCHED_CAPACITY_SCALE / cap);
            if k == 0 {
                (this_runnable, this_avg) = (runnable, avg);
            } else if min_runnable > runnable.wrapping_add(imbalance) {
                (min_runnable, min_avg) = (runnable, avg);
                idlest = Some(g);
            } else if runnable < min_runnable.wrapping_add(imbalance) && min_avg.wrapping_mul(100) > imbalance_scale * avg {
                min_avg = avg;
                idlest = Some(g);
            }
        }
        if let Some(t) = exec {
            // Not for a fork, whose utilisation is not set yet.
            let half_util = self.tasks[t].avg.util_avg / 2;
            if this_spare > half_util && imbalance_scale * this_spare > 100 * most_spare {
                return None;
            }
            if most_spare > half_util {
                return most_spare_group;
            }
        }
        let idlest = idlest?;
        if min_runnable > this_runnable.wrapping_add(imbalance) {
            return None;
        }
        if this_runnable < min_runnable.wrapping_add(imbalance) && this_avg.wrapping_mul(100) < imbalance_scale.wrapping_mul(min_avg) {
            return None;
        }
        Some(idlest)
    }

    /// `find_idlest_group_cpu`: the shallowest idle CPU of `group` (the
    /// most recently idled on a tie), else the least loaded.
    fn find_idlest_group_cpu(&self, group: CpuMask, allowed: &CpuMask, this: CpuId, pending: &[u32]) -> CpuId {
        let cand = group.and(allowed);
        let mut shallowest: Option<(u64, u64, CpuId)> = None;
        let mut least: Option<(u64, CpuId)> = None;
        for i in cand.iter() {
            if pending.get(i).copied().unwrap_or(0) == 0 && self.cpu_idle_for_fork(i) {
                let (exit_ns, stamp) = match self.rqs[i].mode {
                    CpuMode::Idle { state, entry_ns } => (self.plat.cpu_type_of(i).idle_states.get(state).map_or(0, |s| s.exit_latency_ns), entry_ns),
                    _ => (0, self.now),
                };
                let take = match shallowest {
                    None => true,
                    Some((e, s, _)) => exit_ns < e || (exit_ns == e && stamp > s),
                };
                if take {
                    shallowest = Some((exit_ns, stamp, i));
                }
            } else if shallowest.is_none() {
                let load = self.rqs[i].cfs.avg.load_avg;
                if least.map_or(true, |(l, _)| load < l || (load == l && i == this)) {
                    least = Some((load, i));
                }
            }
        }
        shallowest.map(|(_, _, c)| c).or(least.map(|(_, c)| c)).unwrap_or(this)
    }

    /// `find_idlest_cpu` for a new task forked on `parent_cpu`.
    /// `pending[c]` counts tasks already forked onto CPU `c` that are not
    /// on its runqueue yet (a workload's delayed first tasks); they count
    /// as runnable there.
    pub(crate) fn select_task_rq_fork(&self, t: TaskId, parent_cpu: CpuId, pending: &[u32]) -> CpuId {
        if self.sched_ext && self.tasks[t].class != Class::Fair {
            return self.select_task_rq_rt_dl(t, parent_cpu);
        }
        self.find_idlest_cpu(t, parent_cpu, pending, None)
    }

    /// `sched_exec()` for task `t` running on `cpu` (see the header): the
    /// CPU its stopper moves it to, if another.
    pub(crate) fn sched_exec(&self, t: TaskId, cpu: CpuId) -> Option<CpuId> {
        if self.tasks[t].class != Class::Fair || self.rqs[cpu].curr != Some(t) {
            return None;
        }
        let dst = self.find_idlest_cpu(t, cpu, &[], Some(t));
        (dst != cpu).then_some(dst)
    }

    /// `find_idlest_cpu` from `cpu`'s widest domain, for a fork or, with
    /// `exec` (the task itself), an exec.
    fn find_idlest_cpu(&self, t: TaskId, parent_cpu: CpuId, pending: &[u32], exec: Option<TaskId>) -> CpuId {
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        let mut cpu = parent_cpu;
        let mut doms = &self.fork_domains[cpu];
        let mut k = 0;
        // levels[k] is the domain, levels[k + 1] its groups.
        while k + 1 < doms.levels.len() {
            let groups = &doms.groups[k];
            let idlest = if self.kernel.has(EraId::FindIdlestGroupRework) {
                let asym = exec.is_some() && self.span_asym(&doms.spans[k]);
                self.find_idlest_group(groups, &allowed, cpu, pending, exec, asym)
            } else {
                self.find_idlest_group_by_load(groups, &allowed, cpu, pending, doms.levels[k], exec)
            };
            let Some(group) = idlest else {
                k += 1;
                continue;
            };
            let new_cpu = self.find_idlest_group_cpu(group, &allowed, cpu, pending);
            if new_cpu == cpu {
                k += 1;
                continue;
            }
            // Go on in the new CPU's domains narrower than the one decided.
            let weight = doms.spans[k].weight();
            cpu = new_cpu;
            doms = &self.fork_domains[cpu];
            k = doms.spans.iter().position(|s| s.weight() < weight).unwrap_or(doms.levels.len());
        }
        if allowed.test(cpu) {
            cpu
        } else {
            allowed.next_from(0).unwrap_or(parent_cpu)
        }
    }

    /// wake_up_new_task(): place a new task, give it its first PELT
    /// values (`post_init_entity_util_avg`), and enqueue it.
    /// `irq`: the context it is raised in, for the trace (0: the parent).
    /// A workload's first task with a start delay was placed when the
    /// run began ([`Self::place_delayed_task`]) and is woken now as from a
    /// sleep on that CPU.
    pub(crate) fn wake_up_new_task(&mut self, t: TaskId, parent_cpu: CpuId, irq: u8) {
        let cpu = if let Some(cpu) = self.tasks[t].start_cpu.take() {
            // Not a fork: a task that existed before the recording began,
            // on the CPU the recording first shows it on.
            cpu
        } else if self.tasks[t].parent.is_none() && self.now > 0 {
            self.tasks[t].recent_used_cpu = self.tasks[t].cpu;
            self.select_task_rq(t, self.tasks[t].cpu)
        } else {
            // v4.16+ (32e839dda3ba): p->recent_used_cpu = task_cpu(p), the
            // parent's CPU (sched_fork's), before fork balancing.
            self.tasks[t].recent_used_cpu = parent_cpu;
            self.select_task_rq_fork(t, parent_cpu, &[])
        };
        self.tasks[t].cpu = cpu;
        self.tasks[t].wake_ns = self.now;
        self.tasks[t].wake_pending = true;
        if self.tasks[t].forked {
            let rq = &self.rqs[cpu];
            let cfs = match self.tasks[t].group {
                Some(g) => self.member_cfs_rq(cpu, g as usize),
                None => &rq.cfs,
            };
            let (cap, util, load) = (rq.capacity, cfs.avg.util_avg, cfs.avg.load_avg);
            let bounded = self.kernel.has(EraId::InitUtilBounded);
            let tk = &mut self.tasks[t];
            if bounded {
                // `se->load.weight`, scaled as 64-bit kernels hold it.
                let weight = tk.nice_weight << pelt::SCHED_FIXEDPOINT_SHIFT;
                post_init_entity_util_avg(&mut tk.avg, weight, cap, util, load);
            } else {
                init_util_full(&mut tk.avg);
            }
        }
        if let Some(tr) = self.trace.as_mut() {
            let tk = &self.tasks[t];
            tr.sched_wakeup(self.now, parent_cpu, irq, &tk.comm, tk.pid, tk.prio(), cpu, true);
        }
        // wake_up_new_task() enqueues the child from the parent's CPU
        // (activate_task on the chosen runqueue, no wake list, on every
        // version since v2.6), so a child placed on another CPU gets
        // remote hook calls there. The launcher of a workload's first
        // tasks is not run (see the header): their placement stays local.
        let remote = self.tasks[t].parent.is_some() && cpu != parent_cpu;
        self.hook_this_cpu = remote.then_some(parent_cpu);
        self.enqueue_task(cpu, t, EnqueueKind::New);
        self.hook_this_cpu = None;
        self.kick_cpu(cpu, t);
    }
}

impl Engine {
    /// A workload's first task that starts after a delay: the launcher
    /// forks every task when the run begins, and a delayed one sleeps
    /// until its start (as rt-app's `delay` does), so it is placed now by
    /// fork balancing, among the tasks placed before it (`pending`), and
    /// woken from that CPU at its start.
    pub(crate) fn place_delayed_task(&mut self, t: TaskId, launcher: CpuId, pending: &mut [u32]) {
        let cpu = self.select_task_rq_fork(t, launcher, pending);
        pending[cpu] += 1;
        self.tasks[t].cpu = cpu;
    }
}

/// `update_pick_idlest`: whether `s` is a better idlest group than `best`.
fn update_pick_idlest(best: &SgStats, s: &SgStats) -> bool {
    if s.group_type != best.group_type {
        return s.group_type < best.group_type;
    }
    match s.group_type {
        GroupType::HasSpare => s.idle_cpus > best.idle_cpus || (s.idle_cpus == best.idle_cpus && s.group_util < best.group_util),
        GroupType::MisfitTask => s.max_capacity > best.max_capacity,
        GroupType::FullyBusy | GroupType::Overloaded => s.avg_load < best.avg_load,
    }
}

//! Where tasks go (kernel/sched/fair.c, select_task_rq_fair() and the load
//! balancer): wakeup placement, fork placement, and load balancing.
//!
//! Wakeup (select_task_rq_fair(), v5.2): the waker records the switch of
//! wakee (record_wakee()); unless it wakes many tasks in turn (wake_wide():
//! both flip counts at least the LLC's size, the larger at least that
//! factor times the smaller; v4.2, 63b0e9edceec) and if the wakee may run
//! on the waker's CPU,
//! wake_affine() picks between the waker's CPU and the wakee's previous one
//! (the lowest domain spanning both has SD_WAKE_AFFINE: sd_init() sets it
//! on every level up to node distances of RECLAIM_DISTANCE, 30, which the
//! two-socket Intel machines' 21 is under; a two-socket EPYC's 32 is not
//! before v5.4's node_reclaim_distance of 32 on Zen, a55c7454a8c8, which
//! govlab does not model: it pulls across EPYC sockets on every version).
//! WA_IDLE (wake_affine_idle(), v4.14, the commit not confirmed here): the
//! waker's CPU if it is idle and shares the previous CPU's cache (the
//! previous one if that is idle too: 806486c377e3), or if the wakeup is
//! sync and the waker runs alone; then WA_WEIGHT (wake_affine_weight()):
//! the waker's CPU if its runnable load plus the wakee's (less the waker's
//! when sync) is below the previous CPU's less the wakee's, the latter
//! raised by half the domain's imbalance_pct (110 SMT, 117 LLC, 125
//! above: sd_init()). Then select_idle_sibling(p, prev, target): the
//! target if idle; the previous CPU if it shares the target's cache and
//! is idle; from v4.16 the task's recent_used_cpu if idle there; else, in
//! v4.9-v5.11, an idle core of the target's LLC (while has_idle_cores is
//! set), scanning from the target, then any idle CPU of that LLC; else
//! the target. From v5.6 (52262ee567ad), before the recent CPU: the
//! previous CPU, if it is the waker's, the waker is a per-CPU kthread (a
//! bound kworker, `Task::bound_work`) and nothing else runs there
//! (`is_per_cpu_kthread(current)`, `nr_running <= 1`). Later kernels
//! (v5.12-v6.0: one merged scan, prev's SMT sibling first, SIS_UTIL's
//! depth from the LLC's utilisation) are in `select_idle_sibling`.
//! WF_SYNC comes from pipes and sockets (`ChannelSpec::sync`).
//!
//! A kworker of a per-CPU workqueue is not placed: it is bound to the pool
//! of the CPU that queued its work (kernel/workqueue.c `__queue_work`,
//! `worker_attach_to_pool`), so select_task_rq() takes its one allowed CPU
//! without asking the class (v5.2 and v6.8 kernel/sched/core.c:
//! `nr_cpus_allowed > 1` gates `select_task_rq_fair`), and the balancers
//! leave it there (`ttwu`). Any task allowed a single CPU is placed the
//! same way, and a CPU the class picks outside a task's affinity becomes
//! select_fallback_rq()'s (core.c's is_cpu_allowed() check).
//!
//! Older kernels: before v4.14 wake_affine() is the load comparison alone
//! (effective_load(), no WA_IDLE; era `wake_affine_idle`), in v4.4's form
//! from v4.2 and v3.12's before (era `wake_wide_flips`, which also dates
//! wake_wide()'s move into select_task_rq_fair() and the flips' halving);
//! before v4.9 select_idle_sibling() walks the LLC domain's groups for a
//! wholly idle core, then the target's siblings (era
//! `select_idle_sibling_rewrite`). Left out: v5.7's load_avg in place of
//! runnable_load_avg (every kernel from v4.14 runs v5.2's); v5.2's
//! runnable_load_avg is taken as the sum of the queued tasks' load_avg
//! (fork.rs's `runnable_load`), task_h_load() as the task's own load_avg
//! (exact without task groups); SIS_PROP's scan-depth limit (the scan
//! takes no simulated time, so its measured cost is 0 and the depth the
//! whole LLC).
//!
//! Fork placement (find_idlest_cpu) is in `fork.rs`.
//!
//! Newidle balance (v5.2 kernel/sched/fair.c `idle_balance()`, v5.10
//! `newidle_balance()`, v6.10 `sched_balance_newidle()`): a CPU about to go
//! idle stamps its runqueue (rq->idle_stamp) and gives up at once if it
//! expects to idle too briefly for a pull to pay, its rq->avg_idle below
//! sysctl_sched_migration_cost (500 µs) before v5.16 and below its lowest
//! domain's max_newidle_lb_cost from v5.16 (c5b0a7eefc70, era
//! `newidle_cost_gate`), or if no CPU of the root domain is overloaded
//! (rd->overload, v3.16, 4486edd12b5a). Otherwise it walks its domains
//! upwards (all have SD_BALANCE_NEWIDLE: sd_init()) while avg_idle exceeds
//! the cost spent so far plus the next domain's max_newidle_lb_cost; each
//! domain's load_balance() looks at the busiest overloaded CPU outside its
//! local group (the child domain's span) and pulls one queued task from it
//! if one may run here and is not cache-hot; it looks at another CPU only
//! when every task of that one is pinned away from this CPU
//! (LBF_ALL_PINNED). So the SMT sibling first, then the rest of the LLC,
//! then the other sockets.
//!
//! max_newidle_lb_cost is the most a domain's newidle load_balance() was
//! measured to take (sched_clock_cpu() around it), decayed by 253/256 a
//! second (from v5.16 only once a second has passed since its last rise,
//! e60b56e46b38; v6.17's 155213a2aed4, reverted in v6.19, raises it by
//! half after a balance that pulled nothing, capped at
//! sysctl_sched_migration_cost + 200 ns).
//! govlab's balancing takes no simulated time, so every domain's cost is 0
//! (assumed: no source gives a figure for the machines modelled, and this
//! host exposes no schedstat to measure one). Then the walk never stops for
//! cost, the v5.16 gate never closes, v6.17's bump leaves 0 at 0, and the
//! pre-v5.16 500 µs gate is the one that decides.
//!
//! rq->avg_idle (update_avg() in ttwu_do_wakeup(), kernel/sched/core.c,
//! folded into ttwu_do_activate() in v6.x): at a wakeup onto a runqueue
//! stamped idle, an eighth of the difference to the time since the stamp,
//! capped at twice rq->max_idle_balance_cost (twice
//! sysctl_sched_migration_cost in older kernels); that is at least
//! sysctl_sched_migration_cost and otherwise the domains' summed costs, so
//! the cap is 1 ms on every version here. It starts at that cap
//! (sched_init()).
//!
//! rd->overload is set by add_nr_running() when a runqueue reaches two
//! tasks and cleared only by a root-domain load balance that finds none
//! with more than one (update_sd_lb_stats()); `overloaded` here is the set
//! of such runqueues now, without the stale `true` after the last one
//! drained. With costs of 0 the difference changes no pull (a walk with no
//! CPU overloaded pulls nothing), as does v3.15's lack of the test. With
//! EAS it changes when the walk reaches the top domain and clears
//! rd->overutilized, so there the kernel's sticky flag is kept (eas.rs).
//!
//! Left out: find_busiest_group()'s rules that can decline a pull (the
//! NUMA imbalance allowance, group types), and before v5.13 the NOHZ stats
//! pass only on the gated path (machine/nohz.rs runs it whenever nothing
//! was pulled, the form of v5.13's 0826530de3cb; with the exact mask a
//! walk that pulls nothing is all but impossible, so the forms differ by
//! rd->overload's stale `true` alone).
//!
//! Periodic balancing (`rebalance_domains`, v5.2 `rebalance_domains()`):
//! once a CPU's rq->next_balance has come, each of its domains whose
//! interval has passed is balanced by `load_balance`. A busy CPU's
//! (CPU_NOT_IDLE) interval is balance_interval times busy_factor (32, 16
//! from v5.10, 6e7499135db7) and its load_balance() is v5.2's as far as
//! modelled (`busy_load_balance`), which only pulls to the busy CPU: it
//! never hands a queued task to an idle CPU. Its tick kicks the idle load
//! balancer (machine/nohz.rs), which walks the idle CPUs with their tick
//! stopped (CPU_IDLE); an idle CPU with its tick kept walks at its own
//! tick. An idle CPU's interval is balance_interval alone and its
//! load_balance() pulls one queued task from the busiest overloaded CPU of
//! the domain outside its local group, by newidle's rule (`idle_pull`). An
//! idle CPU woken by an interrupt that queues nothing on it does not pick
//! and so runs no newidle balance (kernel/sched/idle.c do_idle(),
//! machine/idle.rs): newidle balance runs when a task leaves its runqueue
//! empty.
//!
//! When CPU capacities differ (big.LITTLE), wakeup placement and the misfit
//! part of balancing are capacity-aware instead: see `capacity.rs`; with an
//! Energy Model and schedutil, wakeups are energy-aware and balancing waits
//! for a CPU to be overutilized: see `eas.rs`.

use super::rq::{CpuMode, EnqueueKind, Wakee};
use super::Engine;
use crate::kernel::{EraId, KernelConfig};
use crate::platform::CpuId;
use crate::sched::cpumask::CpuMask;
use crate::sched::pelt::{self, MigrationLag};
use crate::sched::rt::Class;
use crate::sched::{TaskId, TaskState};
use crate::trace::TRACE_FLAG_HARDIRQ;

/// record_wakee()'s decay period, `HZ` jiffies: one second.
const WAKEE_FLIP_DECAY_NS: u64 = 1_000_000_000;

/// sysctl_sched_migration_cost: 500 µs (kernel/sched/fair.c, unchanged
/// from v3.15 to v6.18).
pub(super) const MIGRATION_COST_NS: u64 = 500_000;

/// sd->busy_factor of every domain (kernel/sched/topology.c sd_init()):
/// 32, 16 from v5.10 (6e7499135db7, era `busy_factor_16`).
#[inline]
fn busy_factor(kernel: &KernelConfig) -> u64 {
    if kernel.has(EraId::BusyFactor16) {
        16
    } else {
        32
    }
}

/// sysctl_sched_nr_migrate: the tasks one load_balance() looks at, 32
/// (kernel/sched/core.c, v5.2).
const SCHED_NR_MIGRATE: usize = 32;

/// sd->max_newidle_lb_cost of every domain: 0, as govlab's balancing takes
/// no simulated time (assumed; see the header).
const MAX_NEWIDLE_LB_COST_NS: u64 = 0;

/// The rq->avg_idle below which newidle balance gives up at once: the
/// lowest domain's max_newidle_lb_cost from v5.16 (era
/// `newidle_cost_gate`), sysctl_sched_migration_cost before.
pub(super) fn newidle_min_avg_idle_ns(kernel: &KernelConfig) -> u64 {
    if kernel.has(EraId::NewidleCostGate) {
        MAX_NEWIDLE_LB_COST_NS
    } else {
        MIGRATION_COST_NS
    }
}

/// enum cpu_idle_type as rebalance_domains() takes it (v5.2
/// include/linux/sched/idle.h): the balancing CPU idle or busy;
/// CPU_NEWLY_IDLE is newidle balance's own walk (`newidle_balance`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum CpuIdleType {
    Idle,
    NotIdle,
}

/// What one load_balance() found: the domain balanced, or a busiest queue
/// and the first task pulled from it, if any.
enum Balance {
    Balanced,
    Busiest(Option<TaskId>),
}

/// What detach_tasks() found on a busiest queue for one pull: a task to
/// move; tasks allowed on the puller but none movable (running, cache-hot);
/// or every task pinned away from it (LBF_ALL_PINNED).
enum Pick {
    Task(TaskId),
    NoneMovable,
    AllPinned,
}

/// sd->balance_interval in ms after a load_balance() of a domain of
/// `weight` CPUs (v5.2): back to min_interval (the weight, sd_init()) when
/// it found a busiest queue, else doubled up to max_interval (twice that).
#[inline]
pub(super) fn next_balance_interval_ms(ms: u64, weight: u64, unbalanced: bool) -> u64 {
    if unbalanced {
        weight
    } else if ms < 2 * weight {
        ms * 2
    } else {
        ms
    }
}

/// [`Engine::should_we_balance`] on the idle CPUs `idle_mask`.
#[inline]
fn we_balance(cpu: CpuId, local: CpuMask, idle_mask: &CpuMask) -> bool {
    local.first_and(idle_mask).or_else(|| local.next_from(0)) == Some(cpu)
}

/// sd->balance_interval at `level` of domains `d`, ms: the runqueue's
/// stored value, 0 until the domain first balances, when it is the span's
/// weight (sd_init()).
#[inline]
fn interval_ms(d: &BalanceDomains, level: usize, stored_ms: u64) -> u64 {
    if stored_ms == 0 { d.weights[level] } else { stored_ms }
}

/// `sd_balance_interval_j(ms, false)` at `level` of domains `d`, from
/// their table for the two values sd->balance_interval takes.
#[inline]
fn idle_interval_j(d: &BalanceDomains, level: usize, ms: u64, tick_ns: u64, max_j: u64) -> u64 {
    let w = d.weights[level];
    if ms == w {
        d.idle_j[level][0]
    } else if ms == 2 * w {
        d.idle_j[level][1]
    } else {
        (ms * 1_000_000).div_ceil(tick_ns).clamp(1, max_j)
    }
}

/// One CPU's scheduling domains for balancing, lowest first (`n` of the
/// three used), with each span's weight (sd->span_weight): built once per
/// run, as build_sched_domains() builds them once per topology.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BalanceDomains {
    spans: [CpuMask; 3],
    weights: [u64; 3],
    n: usize,
    /// Each level's idle interval in jiffies at its min_interval (the
    /// weight, in ms) and at twice that, the two values its
    /// sd->balance_interval takes (`next_balance_interval_ms`).
    idle_j: [[u64; 2]; 3],
}

/// max_load_balance_interval: HZ * online CPUs / 10 jiffies
/// (update_max_interval(), v5.2 kernel/sched/fair.c), at least 1.
pub(crate) fn max_load_balance_interval_j(tick_ns: u64, nr_cpus: usize) -> u64 {
    ((1_000_000_000 / tick_ns) * nr_cpus as u64 / 10).max(1)
}

/// A scheduling group's figures for `busy_load_balance`: runnable load,
/// capacity, tasks, and load per 1024 of capacity.
struct Sg {
    load: u64,
    cap: u64,
    nr: u64,
    avg: u64,
}

/// `cpu`'s runqueue has just emptied: it joins the idle CPUs, and with
/// SMT its LLC has an idle core again (sd_llc_shared's has_idle_cores,
/// __update_idle_core() from the idle task's pick, kernel/sched/fair.c:
/// the same instant) when every sibling is idle too. The classes' dequeue
/// paths share it; takes the engine's fields, not the engine, so that a
/// caller may keep its runqueue borrowed.
pub(super) fn set_cpu_idle(plat: &crate::platform::Platform, idle: &mut CpuMask, has_idle_cores: &mut [bool], cpu: CpuId) {
    idle.set(cpu);
    let sib = &plat.cpus[cpu].siblings;
    if !sib.is_empty() && sib.iter().all(|&s| idle.test(s)) {
        has_idle_cores[plat.cpus[cpu].llc] = true;
    }
}

impl Engine {
    fn allowed(&self, t: TaskId) -> CpuMask {
        self.tasks[t].affinity.unwrap_or(self.all_cpus)
    }

    /// `allowed(t).test(cpu)` without copying the mask.
    #[inline]
    fn allows(&self, t: TaskId, cpu: CpuId) -> bool {
        self.tasks[t].affinity.as_ref().unwrap_or(&self.all_cpus).test(cpu)
    }

    fn is_idle_core(&self, cpu: CpuId) -> bool {
        self.plat.cpus[cpu].siblings.iter().all(|&s| self.idle_mask.test(s))
    }

    /// select_task_rq_fair() without a waker (the task's own CPU wakes
    /// it): select_idle_sibling() around its previous CPU.
    pub(crate) fn select_task_rq(&mut self, t: TaskId, prev: CpuId) -> CpuId {
        if let Some(cpu) = self.only_allowed_cpu(t) {
            return cpu;
        }
        let cpu = if self.sched_ext && self.tasks[t].class != Class::Fair {
            self.select_task_rq_rt_dl(t, prev)
        } else if self.asym_cpucap {
            self.select_task_rq_asym(t, prev)
        } else {
            self.select_idle_sibling(t, prev, prev)
        };
        self.allowed_or_fallback(t, cpu, prev)
    }

    /// kernel/sched/core.c select_task_rq() (v4.8 as v6.8): a task allowed
    /// one CPU goes there without asking its class (`nr_cpus_allowed > 1`
    /// gates the class's method, so neither record_wakee() nor the
    /// placement runs).
    fn only_allowed_cpu(&self, t: TaskId) -> Option<CpuId> {
        self.tasks[t].affinity.filter(|m| m.weight() == 1).and_then(|m| m.next_from(0))
    }

    /// select_task_rq()'s is_cpu_allowed() check: a CPU the task may not
    /// use becomes select_fallback_rq()'s, the first allowed CPU of the
    /// previous CPU's node, else the first allowed CPU (packages taken as
    /// the nodes).
    fn allowed_or_fallback(&self, t: TaskId, cpu: CpuId, prev: CpuId) -> CpuId {
        let allowed = self.allowed(t);
        if allowed.test(cpu) {
            return cpu;
        }
        allowed
            .and(&self.package_masks[self.plat.cpus[prev].package])
            .next_from(0)
            .or_else(|| allowed.next_from(0))
            .unwrap_or(prev)
    }

    fn select_task_rq_asym(&self, t: TaskId, prev: CpuId) -> CpuId {
        if let Some(cpu) = self.find_energy_efficient_cpu(t, prev).filter(|&c| self.allows(t, c)) {
            return cpu;
        }
        self.select_idle_sibling_asym(t, prev)
    }

    /// select_task_rq_fair() for a wakeup of `t` from `this` (v5.2, see
    /// the header); `sync` is WF_SYNC. Capacity-aware and energy-aware
    /// machines keep their own paths (wake_cap() disables wake_affine there
    /// in v5.2 whenever the task does not fit the smaller CPU; not modelled).
    pub(super) fn select_task_rq_wake(&mut self, t: TaskId, prev: CpuId, this: CpuId, sync: bool) -> CpuId {
        if (self.sched_ext && self.tasks[t].class != Class::Fair) || self.asym_cpucap {
            return self.select_task_rq(t, prev);
        }
        if let Some(cpu) = self.only_allowed_cpu(t) {
            return cpu;
        }
        self.record_wakee(this, t);
        let wide = self.kernel.has(EraId::WakeWideFlips) && self.wake_wide(this, t);
        let want_affine = !wide && self.allows(t, this);
        let target = if want_affine && this != prev { self.wake_affine(t, this, prev, sync) } else { prev };
        let cpu = if prev == this && self.per_cpu_kthread_stack(this) {
            prev
        } else {
            self.select_idle_sibling(t, prev, target)
        };
        if want_affine && self.kernel.has(EraId::RecentUsedCpu) && !self.kernel.has(EraId::RecentUsedPrev) {
            // v4.16-v5.14: `current->recent_used_cpu = cpu`, the waker's.
            if let Some(waker) = self.rqs[this].curr {
                self.tasks[waker].recent_used_cpu = this;
            }
        }
        self.allowed_or_fallback(t, cpu, prev)
    }

    /// v5.6's select_idle_sibling() test (52262ee567ad): the CPU `this`
    /// runs a bound kworker and nothing else. With `prev == this` the
    /// target is `prev`, busy with the waker, so the earlier idle tests
    /// have failed.
    fn per_cpu_kthread_stack(&self, this: CpuId) -> bool {
        self.kernel.has(EraId::PerCpuKthreadStack)
            && self.rqs[this].nr_running <= 1
            && self.rqs[this].curr.is_some_and(|c| self.tasks[c].bound_work)
    }

    /// `current` on `cpu`'s [`Wakee`] record: the running task's, or the
    /// idle task's.
    fn current_wakee(&self, cpu: CpuId) -> &Wakee {
        match self.rqs[cpu].curr {
            Some(c) => &self.tasks[c].wakee,
            None => &self.rqs[cpu].idle_wakee,
        }
    }

    fn current_wakee_mut(&mut self, cpu: CpuId) -> &mut Wakee {
        match self.rqs[cpu].curr {
            Some(c) => &mut self.tasks[c].wakee,
            None => &mut self.rqs[cpu].idle_wakee,
        }
    }

    /// record_wakee(): `current` on `this` wakes `t`. The flips decay once
    /// per second of wakeups (`jiffies` past `wakee_flip_decay_ts + HZ`).
    pub(super) fn record_wakee(&mut self, this: CpuId, t: TaskId) {
        let now = self.now;
        let halve = self.kernel.has(EraId::WakeWideFlips);
        let w = self.current_wakee_mut(this);
        if now > w.decay_ns + WAKEE_FLIP_DECAY_NS {
            // Halved from v4.2 (63b0e9edceec); wiped before (v3.12's
            // "Rough decay (wiping)").
            w.flips = if halve { w.flips >> 1 } else { 0 };
            w.decay_ns = now;
        }
        if w.last != Some(t) {
            w.last = Some(t);
            w.flips += 1;
        }
    }

    /// wake_wide(): the waker and the wakee switch partners often enough,
    /// by the LLC's size (`sd_llc_size`), that they serve many others.
    pub(super) fn wake_wide(&self, this: CpuId, t: TaskId) -> bool {
        let waker = self.current_wakee(this).flips;
        let wakee = self.tasks[t].wakee.flips;
        let (master, slave) = (waker.max(wakee), waker.min(wakee));
        let factor = self.plat.llcs[self.plat.cpus[this].llc].len() as u32;
        !(slave < factor || master < slave * factor)
    }

    /// wake_affine(): WA_IDLE, then WA_WEIGHT; `prev` unless one of them
    /// picks `this`. Before v4.14, the load comparison alone (era
    /// `wake_affine_idle`), in v4.4's or v3.12's form.
    fn wake_affine(&self, t: TaskId, this: CpuId, prev: CpuId, sync: bool) -> CpuId {
        if !self.kernel.has(EraId::WakeAffineIdle) {
            let pull = if self.kernel.has(EraId::WakeWideFlips) {
                self.wake_affine_v4_4(t, this, prev, sync)
            } else {
                self.wake_affine_v3_12(t, this, prev, sync)
            };
            return if pull { this } else { prev };
        }
        self.wake_affine_idle(this, prev, sync)
            .or_else(|| self.wake_affine_weight(t, this, prev, sync))
            .unwrap_or(prev)
    }

    /// wake_affine() of v4.2-v4.13 (v4.4 kernel/sched/fair.c, read): the
    /// loads are the runqueues' runnable loads (source_load() and
    /// target_load() at the domains' wake_idx 0), effective_load() without
    /// task groups the weight it is given, so: the waker's CPU less the
    /// waker's load_avg when sync, plus the wakee's, against prev's (the
    /// sleeping wakee is not in it), prev's side raised by half the
    /// domain's imbalance_pct. A waker CPU left with no load pulls.
    fn wake_affine_v4_4(&self, t: TaskId, this: CpuId, prev: CpuId, sync: bool) -> bool {
        let mut this_load = self.runnable_load(this, &[]) as i64;
        let load = self.runnable_load(prev, &[]) as i64;
        if sync {
            this_load -= self.rqs[this].curr.map_or(0, |c| self.tasks[c].avg.load_avg as i64);
        }
        let pct = self.wake_affine_imbalance_pct(this, prev);
        let mut this_eff = 100 * self.rqs[prev].capacity as i64;
        let mut prev_eff = (100 + (pct - 100) / 2) * self.rqs[this].capacity as i64;
        if this_load > 0 {
            this_eff *= this_load + self.tasks[t].avg.load_avg as i64;
            prev_eff *= load;
        }
        this_eff <= prev_eff
    }

    /// wake_affine() of v3.12-v4.1 (read in the code index in a vendor tree
    /// of that form, whose wake_wide() sits inside it; the loads taken as
    /// the runnable load average, as v3.11's b92486cbf2aa made
    /// weighted_cpuload() and cpu_avg_load_per_task(): recalled, not read).
    /// It refuses when the wakee switches partners
    /// more often than the LLC has CPUs and the waker that factor times more
    /// often still (v3.12's wake_wide(), "sched: Implement smarter wake-affine
    /// logic"); weighs tasks by their
    /// load weight (se->load.weight), the runqueues by their runnable load
    /// (wake_idx 0); takes a balanced sync wakeup at once; and otherwise
    /// also pulls when the waker's CPU is no busier than prev and the two
    /// together carry less than one of the waker CPU's tasks on average
    /// (cpu_avg_load_per_task()). The imbalance_pct is the SD_*_INIT
    /// macros' before v3.16's sd_init(): 110 between SMT siblings, 125
    /// above.
    fn wake_affine_v3_12(&self, t: TaskId, this: CpuId, prev: CpuId, sync: bool) -> bool {
        let factor = self.plat.llcs[self.plat.cpus[this].llc].len() as u32;
        let (waker, wakee) = (self.current_wakee(this).flips, self.tasks[t].wakee.flips);
        if wakee > factor && waker > factor * wakee {
            return false;
        }
        let this_rq = self.runnable_load(this, &[]) as i64;
        let load = self.runnable_load(prev, &[]) as i64;
        let mut this_load = this_rq;
        if sync {
            this_load -= self.rqs[this].curr.map_or(0, |c| self.tasks[c].weight as i64);
        }
        let pct = if self.plat.cpus[this].siblings.contains(&prev) { 110 } else { 125 };
        let balanced = this_load <= 0 || {
            let this_eff = 100 * self.rqs[prev].capacity as i64 * (this_load + self.tasks[t].weight as i64);
            let prev_eff = (100 + (pct - 100) / 2) * self.rqs[this].capacity as i64 * load;
            this_eff <= prev_eff
        };
        if balanced {
            return true;
        }
        let nr = i64::from(self.rqs[this].nr_running);
        let per_task = if nr > 0 { this_rq / nr } else { 0 };
        this_load <= load && this_load + load <= per_task
    }

    /// wake_affine_idle() (v4.14+).
    fn wake_affine_idle(&self, this: CpuId, prev: CpuId, sync: bool) -> Option<CpuId> {
        if self.idle_mask.test(this) && self.plat.cpus[this].llc == self.plat.cpus[prev].llc {
            return Some(if self.idle_mask.test(prev) { prev } else { this });
        }
        (sync && self.rqs[this].nr_running == 1).then_some(this)
    }

    /// wake_affine_weight() (v4.14+, WA_BIAS on).
    fn wake_affine_weight(&self, t: TaskId, this: CpuId, prev: CpuId, sync: bool) -> Option<CpuId> {
        let mut this_eff = self.runnable_load(this, &[]) as i64;
        if sync {
            let current = self.rqs[this].curr.map_or(0, |c| self.tasks[c].avg.load_avg as i64);
            if current > this_eff {
                return Some(this);
            }
            this_eff -= current;
        }
        let task = self.tasks[t].avg.load_avg as i64;
        let (cap_this, cap_prev) = (self.rqs[this].capacity as i64, self.rqs[prev].capacity as i64);
        let this_eff = (this_eff + task) * 100 * cap_prev;
        let pct = self.wake_affine_imbalance_pct(this, prev);
        let mut prev_eff = (self.runnable_load(prev, &[]) as i64 - task) * (100 + (pct - 100) / 2) * cap_this;
        // Equal loads: let select_idle_sibling() consider stacking the wakee
        // on the waker when nothing else is idle.
        if sync {
            prev_eff += 1;
        }
        (this_eff < prev_eff).then_some(this)
    }

    /// The imbalance_pct of the lowest domain spanning both CPUs
    /// (sd_init(), v5.2): 110 for SMT siblings, 117 within an LLC, else 125.
    fn wake_affine_imbalance_pct(&self, a: CpuId, b: CpuId) -> i64 {
        if self.plat.cpus[a].siblings.contains(&b) {
            110
        } else if self.plat.cpus[a].llc == self.plat.cpus[b].llc {
            117
        } else {
            125
        }
    }

    /// select_idle_sibling(p, prev, target) from v4.9 (10e2f1acd010, read
    /// in v5.2; the later forms from their commits, see the eras): the
    /// target if idle; prev if idle and in the target's LLC; from v4.16 the
    /// task's recent_used_cpu if idle, allowed, in the target's LLC and
    /// neither of those (the task then remembers prev in its place; from
    /// v5.15 it remembers prev whenever the search gets this far); then the
    /// LLC scans (`select_idle_cpu`); else the target.
    ///
    /// The scans' SIS_PROP depth (the waker CPU's avg_idle / 512 over the
    /// LLC's measured avg_scan_cost, v4.11 to v6.6, off from v6.0) needs
    /// the scan's cost, and a scan takes no simulated time here (as the
    /// balancers' costs, see the header): at a cost of 0 the depth is the
    /// whole LLC. Before v5.12 that leaves select_idle_smt() of the
    /// target, which runs only after a failed whole-LLC scan, nothing to
    /// find. Left out: SCHED_IDLE CPUs taken as idle (v5.4, v5.6), core
    /// scheduling's cookies, v6.7's cluster-first scan (no modelled x86 or
    /// symmetric machine has clusters), v5.15-v6.4's affinity test of
    /// recent_used_cpu on prev (the same answer without affinities).
    /// Before v4.9 the group walk of [`Self::select_idle_sibling_groups`].
    fn select_idle_sibling(&mut self, t: TaskId, prev: CpuId, target: CpuId) -> CpuId {
        if !self.kernel.has(EraId::SelectIdleSiblingRewrite) {
            return self.select_idle_sibling_groups(t, prev, target);
        }
        let allowed = self.allowed(t);
        if allowed.test(target) && self.idle_mask.test(target) {
            return target;
        }
        let llc = self.plat.cpus[target].llc;
        if prev != target && self.plat.cpus[prev].llc == llc && allowed.test(prev) && self.idle_mask.test(prev) {
            return prev;
        }
        if self.kernel.has(EraId::RecentUsedCpu) {
            let recent = self.tasks[t].recent_used_cpu;
            let take = recent != prev
                && recent != target
                && self.plat.cpus[recent].llc == llc
                && self.idle_mask.test(recent)
                && allowed.test(recent);
            if take || self.kernel.has(EraId::RecentUsedPrev) {
                self.tasks[t].recent_used_cpu = prev;
            }
            if take {
                return recent;
            }
        }
        let smt = !self.plat.cpus[target].siblings.is_empty();
        let has_idle_core = smt && self.has_idle_cores[llc];
        if smt && !has_idle_core && self.kernel.has(EraId::SisSmtPrev) && self.plat.cpus[prev].llc == llc {
            // select_idle_smt(p, prev): its siblings in CPU order (prev
            // itself skipped from v6.1, b9bae70440d2; busy here anyway).
            let mut siblings = self.smt_masks[prev];
            siblings.clear(prev);
            if let Some(s) = siblings.and(&allowed).and(&self.idle_mask).next_from(0) {
                return s;
            }
        }
        let cpus = allowed.and(&self.llc_masks[llc]);
        let found = if self.kernel.has(EraId::SisMergeCoreCpu) {
            self.select_idle_cpu(cpus, llc, target, has_idle_core)
        } else {
            self.select_idle_core_then_cpu(cpus, llc, target, has_idle_core)
        };
        found.unwrap_or(target)
    }

    /// v4.9-v5.11: `select_idle_core` while has_idle_cores is set (the
    /// first wholly idle core from the target on, its first CPU in that
    /// order; a failed scan clears the flag), then `select_idle_cpu` (the
    /// first idle CPU from the target on).
    fn select_idle_core_then_cpu(&mut self, cpus: CpuMask, llc: usize, target: CpuId, has_idle_core: bool) -> Option<CpuId> {
        let idle = cpus.and(&self.idle_mask);
        if has_idle_core {
            if let Some(core) = idle.iter_wrap(target).find(|&c| self.is_idle_core(c)) {
                return Some(core);
            }
            self.has_idle_cores[llc] = false;
        }
        idle.next_wrap(target)
    }

    /// v5.12+ `select_idle_cpu` (9fe1f127b913): one scan of `cpus` from
    /// the target (from the CPU after it from v5.15). With has_idle_cores,
    /// core by core (`select_idle_core`: a core's threads in CPU order) for
    /// a wholly idle one, the first idle thread met kept as the answer if
    /// none is (the flag then cleared); without, the first idle CPU, at
    /// most nr_idle_scan of them looked at from v6.0 (SIS_UTIL) and none
    /// when it is 0, which also stops the core scan.
    fn select_idle_cpu(&mut self, cpus: CpuMask, llc: usize, target: CpuId, has_idle_core: bool) -> Option<CpuId> {
        let scan = if self.kernel.has(EraId::SisUtil) {
            match self.nr_idle_scan[llc] {
                0 => return None,
                n => n as usize,
            }
        } else {
            usize::MAX
        };
        // Past the last CPU the wrap starts from CPU 0 (no CPU is set there).
        let start = if self.kernel.has(EraId::SisScanAfterTarget) { target + 1 } else { target };
        if !has_idle_core {
            // The first idle CPU in wrap order, if within the first `scan`
            // CPUs of `cpus` from `start`.
            let c = cpus.and(&self.idle_mask).next_wrap(start)?;
            let rank = if c >= start {
                cpus.weight_below(c + 1) - cpus.weight_below(start)
            } else {
                cpus.weight() - cpus.weight_below(start) + cpus.weight_below(c + 1)
            };
            return (rank as usize <= scan).then_some(c);
        }
        let mut left = cpus;
        let mut fallback = None;
        let mut c = left.next_wrap(start);
        while let Some(cpu) = c {
            let core = self.smt_masks[cpu];
            if core.and_not(&self.idle_mask).is_empty() {
                return Some(cpu);
            }
            if fallback.is_none() {
                fallback = core.and(&self.idle_mask).and(&cpus).next_from(0);
            }
            left = left.and_not(&core);
            c = left.next_wrap(cpu + 1);
        }
        self.has_idle_cores[llc] = false;
        fallback
    }

    /// select_idle_sibling(p, target) before v4.9 (v4.4 kernel/sched/fair.c,
    /// read; taken for v3.15 too, not read there): the target if idle; prev if idle and in the
    /// target's LLC; then, from the LLC domain down, the domain's groups in
    /// their ring order from the target's (the groups are the child domain's
    /// spans: the LLC's cores with SMT, its CPUs without; then the SMT
    /// domain's single CPUs): the first group with an allowed CPU whose CPUs
    /// are all idle and none the target gives its first allowed CPU; else
    /// the target. A CPU of a partly busy core other than the target's is
    /// never taken.
    fn select_idle_sibling_groups(&self, t: TaskId, prev: CpuId, target: CpuId) -> CpuId {
        let allowed = self.allowed(t);
        if self.idle_mask.test(target) {
            return target;
        }
        let llc = self.plat.cpus[target].llc;
        if prev != target && self.plat.cpus[prev].llc == llc && self.idle_mask.test(prev) {
            return prev;
        }
        // A core: the CPU and its `siblings` (which leave it out); a group
        // is named by its lowest CPU.
        let members = |c: CpuId| std::iter::once(c).chain(self.plat.cpus[c].siblings.iter().copied());
        let first_of = |c: CpuId| members(c).fold(c, CpuId::min);
        let cpus = &self.plat.llcs[llc];
        let threads = self.plat.cpus[target].siblings.len() + 1;
        let smt = threads > 1 && threads < cpus.len();
        // Usable: some allowed CPU, all idle, none the target; its first
        // allowed CPU.
        let pick = |group: &mut dyn Iterator<Item = CpuId>| {
            let mut best = None;
            for c in group {
                if c == target || !self.idle_mask.test(c) {
                    return None;
                }
                if allowed.test(c) && best.map_or(true, |b| c < b) {
                    best = Some(c);
                }
            }
            best
        };
        let mut groups: Vec<CpuId> = cpus.iter().copied().filter(|&c| !smt || first_of(c) == c).collect();
        groups.sort_unstable();
        let from = groups.iter().position(|&g| g == if smt { first_of(target) } else { target }).unwrap_or(0);
        for k in 0..groups.len() {
            let g = groups[(from + k) % groups.len()];
            let found = if smt { pick(&mut members(g)) } else { pick(&mut std::iter::once(g)) };
            if let Some(c) = found {
                return c;
            }
        }
        if smt {
            let mut own: Vec<CpuId> = members(target).collect();
            own.sort_unstable();
            let from = own.iter().position(|&c| c == target).unwrap_or(0);
            for k in 1..own.len() {
                let c = own[(from + k) % own.len()];
                if allowed.test(c) && self.idle_mask.test(c) {
                    return c;
                }
            }
        }
        target
    }

    /// Move a sleeping task's PELT and vruntime from `from` to `to`
    /// (migrate_task_rq_fair for a wakeup migration).
    pub(crate) fn migrate_sleeping(&mut self, t: TaskId, from: CpuId, to: CpuId) {
        if self.sched_ext && self.tasks[t].class != Class::Fair {
            self.migrate_sleeping_dl(t, from);
            return;
        }
        if self.tasks[t].needs_attach {
            return;
        }
        if let (true, Some(g)) = (self.sched_ext, self.tasks[t].group) {
            self.remove_member(t, g as usize, from);
            let (from_v, to_v) = (self.task_min_vruntime(from, t), self.task_min_vruntime(to, t));
            let tk = &mut self.tasks[t];
            tk.vruntime = tk.vruntime.saturating_sub(from_v) + to_v;
            return;
        }
        let rq = &mut self.rqs[from];
        let tk = &mut self.tasks[t];
        pelt::sync_entity_div(&rq.cfs, &mut tk.avg, tk.weight, self.pelt.divider);
        pelt::remove_entity(&mut rq.cfs, &tk.avg);
        if self.pelt.migration_lag == MigrationLag::Estimated && rq.curr.is_none() {
            pelt::migrate_se_pelt_lag(&rq.cfs, &rq.clock, self.now, &mut tk.avg, tk.weight, self.pelt.divider);
        }
        tk.needs_attach = true;
        tk.vruntime = tk.vruntime.saturating_sub(rq.min_vruntime) + self.rqs[to].min_vruntime;
    }

    /// A replayed task asleep since before the recording began, at its
    /// first wakeup: its averages (the recording's, at this wakeup) sit on
    /// the runqueue of the CPU it slept on, as a sleeping task's blocked
    /// contribution does in the kernel (it stays in cfs_rq->avg until
    /// migrate_task_rq_fair removes it), so that CPU's utilisation counts
    /// it when the wakeup is placed (cpu_util_next()'s `task_cpu(p) ==
    /// cpu` term, kernel/sched/fair.c, v5.0 and later).
    #[cold]
    fn attach_asleep(&mut self, t: TaskId, cpu: CpuId) {
        if self.tasks[t].group.is_some() {
            return;
        }
        self.update_rq_clock(cpu);
        self.update_cfs_rq(cpu);
        let divider = self.pelt.divider;
        let tk = &mut self.tasks[t];
        pelt::attach_entity_div(&mut self.rqs[cpu].cfs, &mut tk.avg, tk.weight, divider);
        tk.needs_attach = false;
    }

    /// Wake a blocked task from the task running on `waker_cpu` (try_to_wake_up).
    pub(crate) fn try_to_wake_up(&mut self, t: TaskId, waker_cpu: CpuId) {
        self.ttwu(t, waker_cpu, 0, false, false);
    }

    /// [`Self::try_to_wake_up`] with WF_SYNC if `sync`: the waker is about
    /// to sleep (pipes and sockets).
    pub(crate) fn try_to_wake_up_sync(&mut self, t: TaskId, waker_cpu: CpuId, sync: bool) {
        self.ttwu(t, waker_cpu, 0, sync, false);
    }

    /// Wake a blocked task from `waker_cpu` in the context `irq` (the
    /// trace's context flag: 0 for the running task, `TRACE_FLAG_HARDIRQ`,
    /// `TRACE_FLAG_SOFTIRQ`), which only the trace records.
    pub(crate) fn try_to_wake_up_in(&mut self, t: TaskId, waker_cpu: CpuId, irq: u8) {
        self.ttwu(t, waker_cpu, irq, false, false);
    }

    /// Wake a task blocked in its own block IO from the completion on
    /// `waker_cpu` (hardirq). A bound kworker waiting for IO inside its
    /// work item resumes on its own CPU: no new work is queued.
    pub(crate) fn try_to_wake_up_io(&mut self, t: TaskId, waker_cpu: CpuId) {
        self.ttwu(t, waker_cpu, TRACE_FLAG_HARDIRQ, false, true);
    }

    /// `resume`: a bound kworker continues its work item where it slept;
    /// otherwise the wakeup queues work for it on `waker_cpu`.
    fn ttwu(&mut self, t: TaskId, waker_cpu: CpuId, irq: u8, sync: bool, resume: bool) {
        debug_assert_eq!(self.tasks[t].state, TaskState::Blocked);
        if irq == 0 && self.rqs[waker_cpu].curr.is_some() {
            // The waking task runs try_to_wake_up() (machine/kpath.rs).
            let c = self.kpath.wake_cycles;
            self.kpath_owe(waker_cpu, c);
        }
        if self.tasks[t].sched_delayed {
            // Still queued (v6.12 delayed dequeue): ttwu_runnable().
            self.ttwu_runnable(t, waker_cpu, irq);
            return;
        }
        let prev = self.tasks[t].cpu;
        if self.tasks[t].needs_attach {
            self.attach_asleep(t, prev);
        }
        let target = if self.tasks[t].bound_work {
            // New work queued on `waker_cpu` runs in a kworker of that
            // CPU's pool, bound there; a worker resuming its work item
            // stays on its pool's CPU.
            let cpu = if resume { prev } else { waker_cpu };
            self.tasks[t].affinity = Some(CpuMask::from_cpus([cpu]));
            cpu
        } else {
            self.select_task_rq_wake(t, prev, waker_cpu, sync)
        };
        self.tasks[t].wake_ns = self.now;
        self.tasks[t].wake_pending = true;
        if let Some(tr) = self.trace.as_mut() {
            let tk = &self.tasks[t];
            tr.sched_wakeup(self.now, waker_cpu, irq, &tk.comm, tk.pid, tk.prio(), target, false);
        }
        if target != prev {
            self.migrate_sleeping(t, prev, target);
        }
        // ttwu_queue_cond (kernel/sched/core.c, TTWU_QUEUE on): a wakeup
        // onto a CPU of another LLC is queued on that CPU's wake list (it
        // then enqueues the task itself: local hook calls) on every
        // version (518cd6234178, v3.3). Within the LLC, v6.0's form
        // (f3dd3f674555) queues it too when the target runs nothing;
        // before, the waker enqueues on the target's runqueue and its hook
        // calls for the target are remote. v5.8's narrower form
        // (2ebb17717550: the wakee still descheduling on the target) never
        // holds here: a task's switch-out completes as it blocks.
        let remote = target != waker_cpu
            && self.plat.cpus[target].llc == self.plat.cpus[waker_cpu].llc
            && (self.rqs[target].nr_running > 0 || !self.ttwu_queue_idle);
        self.ttwu_avg_idle(target);
        self.hook_this_cpu = remote.then_some(waker_cpu);
        self.enqueue_task(target, t, EnqueueKind::Wakeup);
        self.hook_this_cpu = None;
        self.kick_cpu(target, t);
    }

    /// After enqueueing `t` on `cpu`: wake the CPU or consider preemption.
    #[inline]
    pub(crate) fn kick_cpu(&mut self, cpu: CpuId, t: TaskId) {
        match self.rqs[cpu].mode {
            CpuMode::Idle { .. } => self.idle_wakeup(cpu, false),
            CpuMode::Active => {
                if self.rqs[cpu].curr.is_none() {
                    self.schedule(cpu);
                } else {
                    self.check_preempt_wakeup(cpu, t);
                }
            }
            CpuMode::Exiting { .. } => {}
        }
    }

    /// Migrate a queued (not running) task between runqueues, pulled by
    /// `to` (load balancing runs on the CPU that pulls).
    pub(super) fn migrate_queued(&mut self, t: TaskId, from: CpuId, to: CpuId) {
        self.migrate_queued_by(t, from, to, to);
    }

    /// [`Self::migrate_queued`] run by CPU `this`: hook calls for the other
    /// runqueue are remote calls from `this`.
    pub(super) fn migrate_queued_by(&mut self, t: TaskId, from: CpuId, to: CpuId, this: CpuId) {
        self.hook_this_cpu = Some(this);
        self.dequeue_task_migrating(from, t);
        let min_v = self.task_min_vruntime(from, t);
        self.tasks[t].vruntime = self.tasks[t].vruntime.saturating_sub(min_v);
        if let Some(tr) = self.trace.as_mut() {
            let tk = &self.tasks[t];
            tr.sched_migrate_task(self.now, from, &tk.comm, tk.pid, tk.prio(), from, to);
        }
        self.enqueue_task(to, t, EnqueueKind::Migrate);
        self.hook_this_cpu = None;
    }

    /// detach_tasks() for a pull of one task (v5.2 and v6.8
    /// kernel/sched/fair.c): the last queued task of `src` that may run on
    /// `dst` and is not cache-hot; else whether some task of `src` may run
    /// on `dst` at all. can_migrate_task() clears LBF_ALL_PINNED at the
    /// first task allowed on `dst`, before its running and task_hot()
    /// tests, so the running task counts too; a task whose dequeue is
    /// delayed (DELAY_DEQUEUE) is turned away before the affinity test, by
    /// can_migrate_task()'s first test in the kernels that delay dequeues.
    fn pick_migratable(&self, src: CpuId, dst: CpuId) -> Pick {
        let rq = &self.rqs[src];
        let mut allowed = rq.curr.is_some_and(|c| rq.cfs_curr && self.allows(c, dst));
        let mut consider = |t: TaskId| {
            if self.tasks[t].sched_delayed || !self.allows(t, dst) {
                return false;
            }
            allowed = true;
            !self.task_hot(t)
        };
        let found = if self.fair_groups() {
            self.queued_fair_tasks(src).into_iter().find(|&t| consider(t))
        } else {
            rq.tree.iter().rev().map(|&(_, t)| t).find(|&t| consider(t))
        };
        match found {
            Some(t) => Pick::Task(t),
            None if allowed => Pick::NoneMovable,
            None => Pick::AllPinned,
        }
    }

    /// task_hot(), as can_migrate_task() applies it (v5.2 and v6.8
    /// kernel/sched/fair.c): a fair task that ran less than
    /// sysctl_sched_migration_cost (500 µs) ago (`se.exec_start`: when it
    /// was last charged on a CPU, i.e. it was preempted then or picked then;
    /// 0 for a new task) is cache-hot, and the balancer leaves it where it
    /// is unless the domain's balance has failed more than the domain's
    /// cache_nice_tries times in a row (sd_init(): 0 SMT, 1 LLC, 2 NUMA).
    /// `nr_balance_failed` is not modelled (taken as 0: a hot task is never
    /// moved): it counts only periodic balances that found an imbalance and
    /// moved nothing, and any balanced pass resets it, so it passes
    /// cache_nice_tries only when the imbalance outlives several balance
    /// intervals, by which time the task has run again or gone cold.
    /// SCHED_IDLE tasks are never hot; CACHE_HOT_BUDDY (the next or last
    /// buddy is hot for a busy destination) is not modelled.
    fn task_hot(&self, t: TaskId) -> bool {
        let tk = &self.tasks[t];
        tk.class == Class::Fair && !tk.idle_policy && tk.exec_start_ns != 0 && self.now.saturating_sub(tk.exec_start_ns) < MIGRATION_COST_NS
    }

    /// The CPU of `mask` but `dst` with the most tasks, the lowest such.
    fn busiest_in(&self, mut mask: CpuMask, dst: CpuId) -> Option<CpuId> {
        mask.clear(dst);
        let mut busiest = None;
        let mut most = 0;
        for c in &mask {
            let nr = self.rqs[c].nr_running;
            if busiest.is_none() || nr > most {
                (busiest, most) = (Some(c), nr);
            }
        }
        busiest
    }

    /// ttwu_do_wakeup()'s update of rq->avg_idle: a task wakes onto `cpu`,
    /// stamped idle by its last newidle balance (see the header).
    #[inline]
    pub(crate) fn ttwu_avg_idle(&mut self, cpu: CpuId) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        if let Some(stamp) = rq.idle_stamp.take() {
            let delta = (now - stamp) as i64;
            let avg = rq.avg_idle_ns as i64;
            rq.avg_idle_ns = ((avg + ((delta - avg) >> 3)) as u64).min(2 * MIGRATION_COST_NS);
        }
    }

    /// newidle_balance(): `cpu` is about to idle; pull one queued task if
    /// some CPU is overloaded and `cpu` expects to idle long enough.
    #[inline]
    pub(crate) fn newidle_balance(&mut self, cpu: CpuId) {
        // idle_balance() lowers rq->next_balance to its lowest domain's
        // idle due time when a gate stops it, else to the earliest of the
        // domains it walks (all of them here: see `newidle_pull`).
        let gated = (self.overloaded.is_empty() && !self.eas.as_ref().is_some_and(|e| e.overload))
            || self.rqs[cpu].avg_idle_ns < self.newidle_min_avg_idle_ns;
        let nb = self.domains_next_balance_j(cpu, if gated { 1 } else { 3 });
        let rq = &mut self.rqs[cpu];
        rq.next_balance_j = rq.next_balance_j.min(nb);
        // rd->overload: with EAS the kernel's, which stays set until a
        // top-level balance (eas.rs).
        if self.overloaded.is_empty() && !self.eas.as_ref().is_some_and(|e| e.overload) {
            return;
        }
        if self.rqs[cpu].avg_idle_ns < self.newidle_min_avg_idle_ns {
            return;
        }
        if self.eas.is_some() {
            self.newidle_pull_eas(cpu);
            return;
        }
        self.newidle_pull(cpu);
    }

    /// newidle_balance()'s walk with EAS: find_busiest_group() finds every
    /// level balanced while rd->overutilized is clear; a walk that pulls
    /// nothing at the LLC reaches the top domain, whose
    /// update_sd_lb_stats() sets or clears the flag before that test
    /// (CPU_NEWLY_IDLE: should_we_balance() lets any CPU through, and the
    /// top domain's last_balance and interval are left alone).
    fn newidle_pull_eas(&mut self, cpu: CpuId) {
        let llc = self.llc_masks[self.plat.cpus[cpu].llc];
        if !self.eas_balanced() && self.pull_busiest(cpu, self.overloaded.and(&llc)) {
            return;
        }
        self.update_rd_overutilized();
        if !self.eas_balanced() {
            self.pull_busiest(cpu, self.busiest_candidates(self.all_cpus, llc));
        }
    }

    /// Pull one queued task to `cpu` from the busiest CPU of `scope` that
    /// has one it may run; whether one moved.
    fn pull_busiest(&mut self, cpu: CpuId, scope: CpuMask) -> bool {
        self.pull_one(cpu, scope).is_some()
    }

    /// The CPUs a load_balance() of the domain spanning `span` may take its
    /// busiest queue from: the overloaded ones outside the local group
    /// `local` (find_busiest_group() never picks the local group).
    #[inline]
    fn busiest_candidates(&self, span: CpuMask, local: CpuMask) -> CpuMask {
        self.overloaded.and(&span).and_not(&local)
    }

    /// [`Self::pull_busiest`], giving the task pulled. load_balance() (v5.2
    /// and v6.8) detaches from one busiest queue (`busiest_in`: the most
    /// tasks, the lowest CPU among equals) and looks for another only when
    /// every task there is pinned away from `cpu` (LBF_ALL_PINNED: the busiest
    /// leaves the candidate mask and the balance is redone); a busiest queue
    /// whose allowed tasks are running or cache-hot ends the pass with
    /// nothing moved.
    fn pull_one(&mut self, cpu: CpuId, scope: CpuMask) -> Option<TaskId> {
        let mut rest = scope;
        while let Some(src) = self.busiest_in(rest, cpu) {
            match self.pick_migratable(src, cpu) {
                Pick::Task(t) => {
                    self.migrate_queued(t, src, cpu);
                    return Some(t);
                }
                Pick::NoneMovable => return None,
                Pick::AllPinned => rest.clear(src),
            }
        }
        None
    }

    /// `cpu`'s scheduling domains, lowest first, as build_sched_domains()
    /// leaves them: its core's SMT threads, its LLC, the whole machine, a
    /// level spanning no more than its child degenerate and left out
    /// (sd_degenerate()). govlab's topology has no level between the LLC
    /// and the machine (a socket is an LLC on every x86 part modelled).
    /// Worked out once per CPU when the engine is built
    /// ([`Engine::balance_domains`]): no run changes the topology.
    #[inline]
    fn sched_domains(&self, cpu: CpuId) -> &BalanceDomains {
        &self.balance_domains[cpu]
    }

    /// Every CPU's [`Self::sched_domains`].
    pub(crate) fn build_balance_domains(&self) -> Vec<BalanceDomains> {
        (0..self.rqs.len()).map(|cpu| self.build_sched_domains(cpu)).collect()
    }

    fn build_sched_domains(&self, cpu: CpuId) -> BalanceDomains {
        let mut d = BalanceDomains::default();
        let smt = CpuMask::from_cpus(std::iter::once(cpu).chain(self.plat.cpus[cpu].siblings.iter().copied()));
        let llc = self.llc_masks[self.plat.cpus[cpu].llc];
        let all = CpuMask::from_cpus(0..self.rqs.len());
        let mut below = 1;
        for span in [smt, llc, all] {
            let w = u64::from(span.weight());
            if w > below {
                d.spans[d.n] = span;
                d.weights[d.n] = w;
                d.idle_j[d.n] = [self.sd_balance_interval_j(w, false), self.sd_balance_interval_j(2 * w, false)];
                d.n += 1;
                below = w;
            }
        }
        d
    }

    /// newidle_balance()'s walk up the domains once the gates let it
    /// through. Each domain's cost being 0, avg_idle is never below the
    /// cost so far plus the next domain's, and the walk ends only with a
    /// pull or at the top: the SMT siblings, the LLC, the whole machine,
    /// each domain's load_balance() taking its busiest queue outside the
    /// local group (the child domain's span: find_busiest_group() never
    /// picks the local group).
    fn newidle_pull(&mut self, cpu: CpuId) {
        let d = *self.sched_domains(cpu);
        for level in 0..d.n {
            let local = if level == 0 { CpuMask::single(cpu) } else { d.spans[level - 1] };
            if self.pull_busiest(cpu, self.busiest_candidates(d.spans[level], local)) {
                return;
            }
        }
    }

    /// The periodic balancer on a busy CPU's tick.
    pub(crate) fn periodic_balance(&mut self, cpu: CpuId) {
        if self.eas.is_some() {
            // rebalance_domains(CPU_NOT_IDLE) at the top domain, and the
            // idle CPUs' through the idle load balancer (machine/nohz.rs).
            self.rebalance_top(cpu, true);
            self.nohz_idle_balance_top(cpu);
            if self.eas_balanced() {
                return;
            }
        }
        // Misfit migration: v4.20 (3b1baa6496e6 and its series).
        if self.asym_cpucap && self.kernel.has(EraId::MisfitMigration) && self.misfit_balance(cpu) {
            return;
        }
        // ITMT's asym packing: v4.10, on x86 hybrid parts before capacities.
        if self.asym_packing_balance(cpu) {
            return;
        }
        if self.next_balance_due(cpu) {
            self.rebalance_domains(cpu, CpuIdleType::NotIdle);
        }
    }

    /// trigger_load_balance()'s test (v5.2 kernel/sched/fair.c): `cpu`'s
    /// rq->next_balance has come, so its tick raises SCHED_SOFTIRQ; the idle
    /// load balancer makes the same test for each CPU it balances for.
    #[inline]
    pub(crate) fn next_balance_due(&self, cpu: CpuId) -> bool {
        self.now / self.tun.tick_ns >= self.rqs[cpu].next_balance_j
    }

    /// sd->balance_interval in jiffies as get_sd_balance_interval() makes
    /// it (v5.2 kernel/sched/fair.c): `ms` times busy_factor (32; 16 from
    /// v5.10) on a busy CPU, in jiffies rounded up
    /// (msecs_to_jiffies()), clamped to [1, max_load_balance_interval],
    /// which is HZ * online CPUs / 10 (update_max_interval()).
    #[inline]
    pub(super) fn sd_balance_interval_j(&self, ms: u64, busy: bool) -> u64 {
        let ms = if busy { ms * busy_factor(&self.kernel) } else { ms };
        (ms * 1_000_000).div_ceil(self.tun.tick_ns).clamp(1, self.balance_max_j)
    }

    /// sd->balance_interval in ms of `cpu`'s domain at `level`: it starts
    /// at the domain's weight (sd_init()'s min_interval).
    #[inline]
    fn balance_interval_ms(&self, cpu: CpuId, level: usize) -> u64 {
        interval_ms(&self.balance_domains[cpu], level, self.rqs[cpu].sd_balance_interval_ms[level])
    }

    /// The earliest of `cpu`'s lowest `levels` domains' last balance plus
    /// their idle interval (update_next_balance(), v5.2), the intervals
    /// from the domains' table (`idle_interval_j`).
    #[inline]
    fn domains_next_balance_j(&self, cpu: CpuId, levels: usize) -> u64 {
        let (tick_ns, max_j) = (self.tun.tick_ns, self.balance_max_j);
        let d = &self.balance_domains[cpu];
        let rq = &self.rqs[cpu];
        let mut next = u64::MAX;
        for level in 0..d.n.min(levels) {
            let ms = interval_ms(d, level, rq.sd_balance_interval_ms[level]);
            next = next.min(rq.sd_last_balance_j[level] + idle_interval_j(d, level, ms, tick_ns, max_j));
        }
        next
    }

    /// rebalance_domains(rq, idle) for `cpu` (v5.2 kernel/sched/fair.c, the
    /// same in v6.8): run from the SCHED_SOFTIRQ its tick raises once
    /// rq->next_balance has come (`next_balance_due`: a busy CPU's tick,
    /// `periodic_balance`, or an idle CPU's kept one) and by the idle load
    /// balancer for an idle CPU with its tick stopped (nohz_idle_balance(),
    /// machine/nohz.rs). Each domain, lowest first, whose interval
    /// (get_sd_balance_interval(): with busy_factor unless `idle` is
    /// CPU_IDLE) has passed since its sd->last_balance goes through
    /// `load_balance`, each CPU with its own copy of its domains; a CPU that
    /// pulled is no longer idle (idle_cpu()) and its interval is then a busy
    /// one. The walk stops where load_balance() clears continue_balancing.
    /// rq->next_balance becomes the earliest due time of the domains
    /// walked, and a walk that ends CPU_IDLE lowers nohz.next_balance to it.
    /// Departures: with EAS nothing is walked while the root domain is not
    /// overutilized (the kernel's find_busiest_group() finds every domain
    /// balanced then, doubling its interval: not modelled; the top domain's
    /// overutilized update is eas.rs `rebalance_top`), and an idle CPU's
    /// walk ends with its pull (the kernel goes on CPU_NOT_IDLE, whose busy
    /// intervals have not passed in the common case). The task an idle CPU
    /// pulled is returned: the caller wakes `cpu` for it (the attach's
    /// resched_curr()).
    pub(crate) fn rebalance_domains(&mut self, cpu: CpuId, mut idle: CpuIdleType) -> Option<TaskId> {
        if self.eas.is_some() && self.eas_balanced() {
            return None;
        }
        let jiffies = self.now / self.tun.tick_ns;
        if idle == CpuIdleType::Idle && self.nothing_to_pull(cpu) {
            self.rebalance_idle_balanced(cpu, jiffies);
            return None;
        }
        let n = self.sched_domains(cpu).n;
        let mut next = jiffies + 60 * self.balance_hz;
        let mut continue_balancing = true;
        let mut pulled = None;
        for level in 0..n {
            if !continue_balancing || pulled.is_some() {
                break;
            }
            let mut interval = self.sd_balance_interval_j(self.balance_interval_ms(cpu, level), idle != CpuIdleType::Idle);
            if jiffies >= self.rqs[cpu].sd_last_balance_j[level] + interval {
                if let Some(t) = self.load_balance(cpu, level, idle, &mut continue_balancing) {
                    if idle == CpuIdleType::Idle {
                        pulled = Some(t);
                    }
                    idle = CpuIdleType::NotIdle;
                }
                self.rqs[cpu].sd_last_balance_j[level] = jiffies;
                interval = self.sd_balance_interval_j(self.balance_interval_ms(cpu, level), idle != CpuIdleType::Idle);
            }
            next = next.min(self.rqs[cpu].sd_last_balance_j[level] + interval);
        }
        self.rqs[cpu].next_balance_j = next;
        if idle == CpuIdleType::Idle {
            self.nohz_next_balance_j = self.nohz_next_balance_j.min(next);
        }
        pulled
    }

    /// rebalance_domains(`cpu`, CPU_IDLE) at `jiffies`, now's: the idle
    /// walk inline when there is nothing to pull, as rebalance_domains()
    /// takes it, for the idle load balancer's pass over every idle CPU.
    #[inline]
    pub(crate) fn rebalance_idle_at(&mut self, cpu: CpuId, jiffies: u64) -> Option<TaskId> {
        if self.eas.is_none() && self.nothing_to_pull(cpu) {
            self.rebalance_idle_balanced(cpu, jiffies);
            return None;
        }
        self.rebalance_domains(cpu, CpuIdleType::Idle)
    }

    /// No CPU of `cpu`'s widest domain but `cpu` itself is overloaded, so
    /// `idle_pull` finds every domain balanced.
    #[inline(always)]
    fn nothing_to_pull(&self, cpu: CpuId) -> bool {
        if self.overloaded.is_empty() {
            return true;
        }
        let d = &self.balance_domains[cpu];
        let Some(top) = d.n.checked_sub(1).map(|l| d.spans[l]) else { return true };
        let mut others = self.overloaded.and(&top);
        others.clear(cpu);
        others.is_empty()
    }

    /// [`Self::rebalance_domains`] for an idle CPU with nothing to pull
    /// (`nothing_to_pull`): the same walk, each due domain found balanced,
    /// without the pull's set-up. The idle load balancer makes this walk for
    /// every idle CPU on each of its passes, most of kernbench's balancing.
    #[inline(always)]
    fn rebalance_idle_balanced(&mut self, cpu: CpuId, jiffies: u64) {
        let (tick_ns, max_j) = (self.tun.tick_ns, self.balance_max_j);
        let d = &self.balance_domains[cpu];
        let idle_mask = &self.idle_mask;
        let rq = &mut self.rqs[cpu];
        let mut next = jiffies + 60 * self.balance_hz;
        for level in 0..d.n {
            let weight = d.weights[level];
            let ms = interval_ms(d, level, rq.sd_balance_interval_ms[level]);
            let mut interval = idle_interval_j(d, level, ms, tick_ns, max_j);
            let due = jiffies >= rq.sd_last_balance_j[level] + interval;
            // load_balance()'s should_we_balance(), which stops the walk.
            let stop = due && level > 0 && !we_balance(cpu, d.spans[level - 1], idle_mask);
            if due {
                let ms = next_balance_interval_ms(ms, weight, false);
                interval = idle_interval_j(d, level, ms, tick_ns, max_j);
                rq.sd_balance_interval_ms[level] = ms;
                rq.sd_last_balance_j[level] = jiffies;
            }
            next = next.min(rq.sd_last_balance_j[level] + interval);
            if stop {
                break;
            }
        }
        rq.next_balance_j = next;
        self.nohz_next_balance_j = self.nohz_next_balance_j.min(next);
    }

    /// load_balance(this_cpu, this_rq, sd, idle, continue_balancing) at
    /// `level` of `cpu`'s domains, its local group the child domain's span
    /// (`cpu` alone at the lowest level, where should_we_balance() always
    /// lets it through), v5.2: should_we_balance() first, then the busiest
    /// queue and the pull, which govlab models per idle type (`idle_pull`, `busy_load_balance`). sd->balance_interval
    /// returns to the domain's weight (min_interval) when a busiest queue
    /// is found and doubles up to twice that (max_interval) when the domain
    /// is balanced or another CPU balances it. Returns the first task
    /// pulled.
    fn load_balance(&mut self, cpu: CpuId, level: usize, idle: CpuIdleType, continue_balancing: &mut bool) -> Option<TaskId> {
        let d = self.sched_domains(cpu);
        let (span, weight) = (d.spans[level], d.weights[level]);
        let local = if level == 0 { CpuMask::single(cpu) } else { d.spans[level - 1] };
        let found = if level > 0 && !self.should_we_balance(cpu, local) {
            *continue_balancing = false;
            Balance::Balanced
        } else {
            if self.kernel.has(EraId::SisUtil) {
                self.update_idle_cpu_scan(cpu, level, span);
            }
            match idle {
                CpuIdleType::Idle => self.idle_pull(cpu, span, local),
                CpuIdleType::NotIdle => self.busy_load_balance(cpu, level, span, local),
            }
        };
        let (unbalanced, pulled) = match found {
            Balance::Balanced => (false, None),
            Balance::Busiest(t) => (true, t),
        };
        let ms = next_balance_interval_ms(self.balance_interval_ms(cpu, level), weight, unbalanced);
        self.rqs[cpu].sd_balance_interval_ms[level] = ms;
        pulled
    }

    /// update_idle_cpu_scan() (v6.0, 70fb5ccf2ebb), from a periodic
    /// balance's update_sd_lb_stats() when the domain is `cpu`'s LLC: with
    /// x the LLC's summed cpu_util_cfs per CPU, nr_idle_scan = the LLC's
    /// CPUs x (1024 - min(1024, x^2 pct^2 / (10000 x 1024))) / 1024, pct
    /// the domain's imbalance_pct (117), so none from ~85 % utilisation.
    pub(super) fn update_idle_cpu_scan(&mut self, cpu: CpuId, level: usize, span: CpuMask) {
        let llc = self.plat.cpus[cpu].llc;
        let weight = self.plat.llcs[llc].len() as u64;
        if span != self.llc_masks[llc] {
            return;
        }
        let sum: u64 = self.plat.llcs[llc].iter().map(|&c| pelt::cpu_util(&self.rqs[c].cfs, self.rqs[c].capacity)).sum();
        let x = sum / weight;
        let pct = self.sd_imbalance_pct(level, span);
        let tmp = (x * x * pct * pct / (10_000 * 1024)).min(1024);
        self.nr_idle_scan[llc] = ((1024 - tmp) * weight / 1024) as u32;
    }

    /// should_we_balance() (v5.2): only the first idle CPU of the local
    /// group `local`, else its first CPU, balances the domain for it.
    pub(super) fn should_we_balance(&self, cpu: CpuId, local: CpuMask) -> bool {
        we_balance(cpu, local, &self.idle_mask)
    }

    /// load_balance() with CPU_IDLE as govlab models it: the busiest
    /// overloaded CPU of `span` outside the local group `local` gives one
    /// queued task, as newidle balance does (the rest of
    /// find_busiest_group()'s rules are left out, as there).
    fn idle_pull(&mut self, cpu: CpuId, span: CpuMask, local: CpuMask) -> Balance {
        let scope = self.busiest_candidates(span, local);
        if scope.is_empty() {
            return Balance::Balanced;
        }
        Balance::Busiest(self.pull_one(cpu, scope))
    }

    /// load_balance() with CPU_NOT_IDLE at `level` of `cpu`'s domains
    /// (v5.2) once should_we_balance() let `cpu` through.
    /// find_busiest_group(): the groups are the child domain's spans
    /// (single CPUs at the lowest level); each group's avg_load is its
    /// runnable load (the queued and running tasks' load_avg,
    /// `runnable_load`) per 1024 of capacity; the busiest is the
    /// other group with the highest avg_load and a task. There is an
    /// imbalance only if the local group's avg_load is below both the
    /// busiest's and the domain's, and the busiest's exceeds the local's by
    /// the domain's imbalance_pct (110 SMT, 117 LLC, 125 above:
    /// sd_init()). calculate_imbalance(): the smaller of the busiest's
    /// excess over the domain's average and the local group's shortfall,
    /// each times its group's capacity; below the busiest's load per task,
    /// fix_small_imbalance() raises it to that load per task when moving
    /// one still leaves the busiest no lighter than the local group (its
    /// capacity-gain branch is left out). find_busiest_queue(): the busiest
    /// group's CPU with the highest load per capacity, skipping one running
    /// a single task heavier than the imbalance. detach_tasks(): queued
    /// tasks that may run here, in the order of the other pulls
    /// (`pick_migratable`: the kernel takes cfs_tasks from its tail, the
    /// least recently picked first; not modelled), each
    /// skipped if half its load exceeds what is left of the imbalance,
    /// until the imbalance is used up (at most sysctl_sched_nr_migrate, 32,
    /// looked at); each is attached here and may preempt. Left out: the
    /// rq->cpu_load[busy_idx] averages v5.2 still reads for the groups'
    /// loads (source_load()/target_load(), removed in v5.3), group types
    /// and load_above_capacity, nr_balance_failed (task_hot() applies:
    /// [`Self::task_hot`]), active
    /// balance of a running task (need_active_balance()), LBF_ALL_PINNED.
    /// Every version runs v5.2's form (v5.5's rework, 0b0695f2b34a, with its
    /// group types and migration kinds, is not modelled).
    #[inline(never)]
    fn busy_load_balance(&mut self, cpu: CpuId, level: usize, span: CpuMask, local: CpuMask) -> Balance {
        let mut groups: Vec<CpuMask> = Vec::new();
        for c in &span {
            let g = if level == 0 { CpuMask::from_cpus([c]) } else { self.sched_domains(c).spans[level - 1] };
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let stats = |e: &Self, g: &CpuMask| {
            let (mut load, mut cap, mut nr) = (0, 0, 0);
            for c in g {
                load += e.runnable_load(c, &[]);
                cap += e.rqs[c].capacity.max(1);
                nr += u64::from(e.rqs[c].nr_running);
            }
            Sg { load, cap, nr, avg: load * 1024 / cap.max(1) }
        };
        let loc = stats(self, &local);
        let (mut total_load, mut total_cap) = (loc.load, loc.cap);
        let mut busiest: Option<(CpuMask, Sg)> = None;
        for g in groups.iter().filter(|g| **g != local) {
            let s = stats(self, g);
            total_load += s.load;
            total_cap += s.cap;
            if s.nr > 0 && busiest.as_ref().map_or(true, |(_, b)| s.avg > b.avg) {
                busiest = Some((*g, s));
            }
        }
        let Some((bmask, b)) = busiest else { return Balance::Balanced };
        let dom_avg = total_load * 1024 / total_cap.max(1);
        let pct = self.sd_imbalance_pct(level, span);
        if loc.avg >= b.avg || loc.avg >= dom_avg || 100 * b.avg <= pct * loc.avg {
            return Balance::Balanced;
        }
        let mut imbalance = ((b.avg - dom_avg) * b.cap).min((dom_avg - loc.avg) * loc.cap) / 1024;
        let b_lpt = b.load / b.nr.max(1);
        if imbalance < b_lpt {
            let l_lpt = loc.load.checked_div(loc.nr).unwrap_or(0);
            let imbn = if loc.nr > 0 && b_lpt > l_lpt { 1 } else { 2 };
            let scaled = b_lpt * 1024 / b.cap.max(1);
            if b.avg + scaled >= loc.avg + scaled * imbn {
                imbalance = b_lpt;
            }
        }
        if imbalance == 0 {
            return Balance::Balanced;
        }
        let mut src: Option<(CpuId, u64, u64)> = None;
        for c in &bmask {
            let wl = self.runnable_load(c, &[]);
            let cap = self.rqs[c].capacity.max(1);
            if self.rqs[c].nr_running == 1 && wl > imbalance {
                continue;
            }
            if src.map_or(true, |(_, bl, bc)| wl * bc > bl * cap) {
                src = Some((c, wl, cap));
            }
        }
        let Some((src, ..)) = src else { return Balance::Balanced };
        if self.rqs[src].nr_running <= 1 {
            return Balance::Busiest(None);
        }
        let mut left = imbalance as i64;
        let mut first = None;
        let candidates: Vec<TaskId> = if self.fair_groups() {
            self.queued_fair_tasks(src)
        } else {
            self.rqs[src].tree.iter().rev().map(|&(_, t)| t).filter(|&t| !self.tasks[t].sched_delayed).collect()
        };
        for t in candidates.into_iter().take(SCHED_NR_MIGRATE) {
            if left <= 0 {
                break;
            }
            if !self.allows(t, cpu) || self.task_hot(t) {
                continue;
            }
            let load = self.tasks[t].avg.load_avg as i64;
            if load / 2 > left {
                continue;
            }
            self.migrate_queued(t, src, cpu);
            self.check_preempt_wakeup(cpu, t);
            first = first.or(Some(t));
            left -= load;
        }
        Balance::Busiest(first)
    }

    /// sd->imbalance_pct of `cpu`'s domain at `level` spanning `span`
    /// (sd_init(), v5.2): 110 for SMT, 117 for the LLC, 125 above.
    fn sd_imbalance_pct(&self, level: usize, span: CpuMask) -> u64 {
        let cpu = span.iter().next().unwrap_or(0);
        if level == 0 && span.weight() as usize == self.plat.cpus[cpu].siblings.len() + 1 && !self.plat.cpus[cpu].siblings.is_empty() {
            110
        } else if span == self.llc_masks[self.plat.cpus[cpu].llc] {
            117
        } else {
            125
        }
    }
}

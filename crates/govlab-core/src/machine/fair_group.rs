//! CFS task groups (CONFIG_FAIR_GROUP_SCHED, Linux v6.8 kernel/sched/fair.c):
//! a group's tasks share the group's weight (`cpu.shares`, 1024 by default)
//! against the tasks and groups beside it.
//!
//! The kernel gives a group, on every CPU, a runqueue of its own (`my_q`)
//! holding the group's tasks there, and a scheduling entity (`tg->se[cpu]`)
//! that stands for that runqueue in the root runqueue. What is modelled here,
//! as the kernel has it:
//!
//! 1. **The group runqueue's PELT.** A group task's signal is attached to,
//!    updated against and detached from its group runqueue on its CPU
//!    (`update_load_avg`, `attach_`/`detach_`/`remove_entity_load_avg` on
//!    `cfs_rq_of(se)`), never to the root's.
//! 2. **The group entity's PELT and propagation** (`propagate_entity_load_avg`,
//!    `update_tg_cfs_util`, `update_tg_cfs_runnable`, `update_tg_cfs_load`,
//!    `add_tg_cfs_propagate`): the entity is attached to the root runqueue
//!    from the group's creation; it is on the root runqueue while its group
//!    runqueue has runnable tasks, runnable as many times as it has
//!    (`se_runnable`), running while one of them runs; a task's attach,
//!    detach or removal moves the group runqueue's sums at once and is handed
//!    up at the entity's next update: the entity takes its runqueue's
//!    `util_avg` and `runnable_avg` and a re-estimated load, and the root
//!    runqueue moves by the same amounts. So the root runqueue's `util_avg`,
//!    which schedutil reads, holds the group's tasks through the group
//!    entity, as in the kernel.
//! 3. **The group's load** `tg->load_avg`: the sum over CPUs of each group
//!    runqueue's `load_avg` as last reported (`update_tg_load_avg`: at most
//!    once per ms, v6.7's rate limit, and only when it moved by more than
//!    1/64 of what was reported).
//! 4. **The entity's weight** (`update_cfs_group` → `calc_group_shares`,
//!    `reweight_entity`): the group's shares × this CPU's load /
//!    the group's load, where this CPU's load is the larger of its group
//!    runqueue's weight now and its PELT load average, clamped to
//!    [MIN_SHARES, shares]. It is recomputed where the kernel does: at each
//!    enqueue and dequeue of a group task, and at every tick that runs one
//!    (`entity_tick`). After a member sleeps the group's weight on the other
//!    CPUs therefore moves over tens of ms, as its load average decays.
//!
//! What is flattened: the runqueue's vruntime order holds tasks, not group
//! entities. A runnable group task weighs its share of its group entity's
//! weight, `scale_load_down(se weight × its nice weight / the group
//! runqueue's weight)`, so the group's tasks on a CPU together weigh what
//! the entity weighs and the CPU time split between the group and the
//! entities beside it is the kernel's; the root runqueue's load weight (and
//! so its PELT load) counts the entity's weight itself. Left out, and said
//! so in docs/workloads.md: the group entity's own vruntime, placement and
//! slice (the kernel picks level by level, `pick_next_entity` per cfs_rq,
//! and checks preemption between matching entities, `find_matching_se`;
//! here a group's tasks are placed and preempt as tasks), nested groups (a
//! task counts in its own group only; rt-app's nested paths are groups of
//! their own under the root), a per-phase move to another group
//! (`sched_move_task`), and CFS bandwidth control (cpu.max). Blocked group
//! runqueues decay (`update_blocked_averages`) at a busy CPU's balance
//! tick (every tick here, where the kernel's rebalance softirq runs when a
//! domain's balance is due), at an idle CPU's kept tick, and for tickless
//! idle CPUs at the nohz stats kick, every 32 ms.

use super::Engine;
use crate::platform::CpuId;
use crate::sched::pelt::{self, scale_load_down, CfsRqAvg, RqLoad, SchedAvg, SCHED_FIXEDPOINT_SHIFT};
use crate::sched::{TaskId, TaskState};
use crate::sim::Time;
use crate::workload::TaskGroupSpec;

/// update_tg_load_avg() reports a group runqueue's load at most once per
/// this many ns (NSEC_PER_MSEC; "sched/fair: Ratelimit update to
/// tg->load_avg", v6.7).
const TG_LOAD_AVG_PERIOD_NS: u64 = 1_000_000;

/// nohz.next_blocked advances by LOAD_AVG_PERIOD ms (32, in jiffies:
/// `msecs_to_jiffies(LOAD_AVG_PERIOD)`, kernel/sched/fair.c v6.8).
const NOHZ_BLOCKED_PERIOD_NS: u64 = pelt::LOAD_AVG_PERIOD * 1_000_000;

/// A task group as the engine keeps it (struct task_group).
#[derive(Debug, Clone)]
pub struct GroupRt {
    /// tg->shares, scaled (`scale_load(cpu.shares)`).
    pub shares: u64,
    /// Its fair tasks (task ids), in creation order.
    pub members: Vec<TaskId>,
    /// tg->load_avg: Σ of the CPUs' `tg_load_avg_contrib`.
    pub load_avg: i64,
    /// The group's runqueue and entity on each CPU.
    pub cpus: Vec<GroupCpu>,
}

/// A group on one CPU: its runqueue (`tg->cfs_rq[cpu]`) and its entity in
/// the root runqueue (`tg->se[cpu]`).
#[derive(Debug, Clone)]
pub struct GroupCpu {
    /// `my_q->avg` and its removals.
    pub cfs: CfsRqAvg,
    /// `scale_load_down(my_q->load.weight)`: Σ nice weights of its runnable
    /// tasks.
    pub load_weight: u64,
    /// `my_q->h_nr_running`.
    pub h_nr_running: u32,
    /// `my_q->curr` is set, and so the entity is the root's current.
    pub curr: bool,
    /// What this runqueue last reported into `tg->load_avg`, and when (ns).
    pub tg_load_avg_contrib: u64,
    pub last_update_tg_load_avg_ns: Option<Time>,
    /// `my_q->propagate` and `my_q->prop_runnable_sum`.
    pub propagate: bool,
    pub prop_runnable_sum: i64,
    /// The entity's signal (`se->avg`), attached to the root runqueue.
    pub se: SchedAvg,
    /// `se->load.weight`, scaled.
    pub se_load_weight: u64,
    /// `se->runnable_weight`: `h_nr_running` as of the last
    /// `se_update_runnable`.
    pub se_runnable: u64,
    /// `se->on_rq`.
    pub on_rq: bool,
}

impl GroupRt {
    pub fn new(spec: &TaskGroupSpec, nr_cpus: usize) -> Self {
        let shares = spec.shares << SCHED_FIXEDPOINT_SHIFT;
        let cpu = GroupCpu {
            cfs: CfsRqAvg::default(),
            load_weight: 0,
            h_nr_running: 0,
            curr: false,
            tg_load_avg_contrib: 0,
            last_update_tg_load_avg_ns: None,
            propagate: false,
            prop_runnable_sum: 0,
            se: SchedAvg::default(),
            // init_tg_cfs_entry(): NICE_0_LOAD until the first update_cfs_group.
            se_load_weight: shares,
            se_runnable: 0,
            on_rq: false,
        };
        GroupRt { shares, members: Vec::new(), load_avg: 0, cpus: vec![cpu; nr_cpus] }
    }
}

impl GroupCpu {
    /// add_tg_cfs_propagate().
    fn add_propagate(&mut self, runnable_sum: i64) {
        self.propagate = true;
        self.prop_runnable_sum += runnable_sum;
    }
}

/// How a group task's weight follows its group entity's: its part of the
/// entity's weight by nice weight, in PELT units.
fn member_weight(se_load_weight: u64, nice_weight: u64, group_load_weight: u64) -> u64 {
    scale_load_down(se_load_weight * nice_weight / group_load_weight.max(1))
}

impl Engine {
    /// A task joins group `g` at creation (only fair tasks are grouped).
    pub(crate) fn group_attach(&mut self, g: u32, t: TaskId) {
        if let Some(grp) = self.groups.get_mut(g as usize) {
            grp.members.push(t);
        } else {
            self.tasks[t].group = None;
        }
    }

    /// The group runqueue's own update (`update_cfs_rq_load_avg`), handing
    /// removed tasks' load on to `add_tg_cfs_propagate`.
    fn update_group_cfs_rq(&mut self, cpu: CpuId, g: usize) -> bool {
        let scales = self.contribution_scales(cpu);
        let now = self.rqs[cpu].clock.now();
        let gc = &mut self.groups[g].cpus[cpu];
        let load = RqLoad { weight: gc.load_weight, h_nr_running: u64::from(gc.h_nr_running), curr_running: gc.curr };
        let (decayed, removed) = pelt::update_group_cfs_rq(self.pelt, now, &mut gc.cfs, load, scales);
        if let Some(r) = removed {
            gc.add_propagate(r);
        }
        decayed
    }

    /// update_tg_load_avg(): report the group runqueue's load into the
    /// group's when it moved by more than 1/64, at most once per ms.
    fn update_tg_load_avg(&mut self, cpu: CpuId, g: usize) {
        let now = self.now;
        let grp = &mut self.groups[g];
        let gc = &mut grp.cpus[cpu];
        if gc.last_update_tg_load_avg_ns.is_some_and(|t| now - t < TG_LOAD_AVG_PERIOD_NS) {
            return;
        }
        let delta = gc.cfs.avg.load_avg as i64 - gc.tg_load_avg_contrib as i64;
        if delta.unsigned_abs() > gc.tg_load_avg_contrib / 64 {
            grp.load_avg += delta;
            gc.tg_load_avg_contrib = gc.cfs.avg.load_avg;
            gc.last_update_tg_load_avg_ns = Some(now);
        }
    }

    /// __update_load_avg_se for a group task: its PELT weight is its nice
    /// weight, whatever share of the group it is scheduled with.
    fn update_member_avg(&mut self, cpu: CpuId, t: TaskId, on_rq: bool, running: bool) {
        let s = self.contribution_scales(cpu);
        let now = self.rqs[cpu].clock.now();
        let tk = &mut self.tasks[t];
        pelt::update_entity_era(self.pelt.era, self.pelt.divider, now, &mut tk.avg, on_rq, running, tk.nice_weight, s.freq, s.cpu);
    }

    /// The task's level of update_load_avg(): its signal, then its group
    /// runqueue's; `update_tg`: UPDATE_TG.
    fn update_member_load_avg(&mut self, cpu: CpuId, t: TaskId, g: usize, update_tg: bool) {
        let running = self.rqs[cpu].curr == Some(t);
        let on_rq = matches!(self.tasks[t].state, TaskState::Runnable | TaskState::Running);
        self.update_member_avg(cpu, t, on_rq, running);
        if self.update_group_cfs_rq(cpu, g) && update_tg {
            self.update_tg_load_avg(cpu, g);
        }
    }

    /// The group entity's level of update_load_avg() (its runqueue the
    /// root's): age the entity, update the root runqueue, propagate what its
    /// group runqueue gained or lost; the cpufreq hook if the root changed
    /// (`cfs_rq_util_change`).
    fn update_group_se_load_avg(&mut self, cpu: CpuId, g: usize) {
        let scales = self.contribution_scales(cpu);
        let now = self.rqs[cpu].clock.now();
        let gc = &mut self.groups[g].cpus[cpu];
        let w = scale_load_down(gc.se_load_weight);
        pelt::update_group_entity(self.pelt, now, &mut gc.se, gc.on_rq, gc.se_runnable, gc.curr, w, scales);
        let mut decayed = self.update_cfs_rq(cpu);
        decayed |= self.propagate_entity_load_avg(cpu, g);
        if decayed {
            self.cpufreq_update_util(cpu, 0);
        }
    }

    /// propagate_entity_load_avg(): hand the group runqueue's changes to
    /// its entity and the root runqueue.
    fn propagate_entity_load_avg(&mut self, cpu: CpuId, g: usize) -> bool {
        let divider = self.pelt.divider;
        let gc = &mut self.groups[g].cpus[cpu];
        if !gc.propagate {
            return false;
        }
        gc.propagate = false;
        let root = &mut self.rqs[cpu].cfs.avg;
        pelt::update_tg_cfs_util(root, &mut gc.se, &gc.cfs.avg, divider);
        pelt::update_tg_cfs_runnable(root, &mut gc.se, &gc.cfs.avg, divider);
        let w = scale_load_down(gc.se_load_weight);
        pelt::update_tg_cfs_load(root, &mut gc.se, &gc.cfs.avg, gc.load_weight, w, &mut gc.prop_runnable_sum, divider);
        true
    }

    /// update_cfs_group(): the entity's weight from calc_group_shares(),
    /// applied by reweight_entity(); then the members' weights follow.
    fn update_cfs_group(&mut self, cpu: CpuId, g: usize) {
        let grp = &self.groups[g];
        let gc = &grp.cpus[cpu];
        let shares = pelt::calc_group_shares(grp.shares, gc.load_weight, gc.cfs.avg.load_avg, grp.load_avg, gc.tg_load_avg_contrib);
        if shares != gc.se_load_weight {
            self.reweight_group_se(cpu, g, shares);
        }
        self.reweight_members(cpu, g);
    }

    /// reweight_entity() for the group entity: its running time so far is
    /// charged at the old weight, then the root runqueue's weight and load
    /// average take the new one.
    fn reweight_group_se(&mut self, cpu: CpuId, g: usize, shares: u64) {
        let (on_rq, curr) = {
            let gc = &self.groups[g].cpus[cpu];
            (gc.on_rq, gc.curr)
        };
        if on_rq && curr {
            self.update_curr(cpu);
        }
        let divider = self.pelt.divider;
        let gc = &mut self.groups[g].cpus[cpu];
        let old = gc.se_load_weight;
        pelt::reweight_entity_avg(&mut self.rqs[cpu].cfs, &mut gc.se, scale_load_down(old), scale_load_down(shares), divider);
        gc.se_load_weight = shares;
        if on_rq {
            let total = self.group_rq_weight[cpu] - old + shares;
            self.set_group_rq_weight(cpu, total);
        }
    }

    /// The root runqueue's load weight counts its group entities' scaled
    /// weights: `scale_load_down` of the whole sum.
    fn set_group_rq_weight(&mut self, cpu: CpuId, total: u64) {
        let old = self.group_rq_weight[cpu];
        let rq = &mut self.rqs[cpu];
        rq.load_weight = rq.load_weight - (old >> SCHED_FIXEDPOINT_SHIFT) + (total >> SCHED_FIXEDPOINT_SHIFT);
        self.group_rq_weight[cpu] = total;
    }

    /// The group's runnable tasks on `cpu` take their shares of the
    /// entity's weight (the running one charged first at its old weight).
    fn reweight_members(&mut self, cpu: CpuId, g: usize) {
        let (se_w, load_w) = {
            let gc = &self.groups[g].cpus[cpu];
            (gc.se_load_weight, gc.load_weight)
        };
        for i in 0..self.groups[g].members.len() {
            let m = self.groups[g].members[i];
            let tk = &self.tasks[m];
            if tk.cpu != cpu || !matches!(tk.state, TaskState::Runnable | TaskState::Running) {
                continue;
            }
            let w = member_weight(se_w, tk.nice_weight, load_w);
            if w == tk.weight {
                continue;
            }
            if self.rqs[cpu].curr == Some(m) {
                self.update_curr(cpu);
            }
            self.tasks[m].weight = w;
        }
    }

    /// enqueue_task_fair() for a group task: enqueue_entity() on its group
    /// runqueue (the task's signal attached there or aged with it), then
    /// the group entity's level: updated, put on the root runqueue if it was
    /// not, its runnable count and weight renewed (`se_update_runnable`,
    /// `update_cfs_group`).
    pub(crate) fn enqueue_task_grouped(&mut self, cpu: CpuId, t: TaskId, g: usize, kind: super::rq::EnqueueKind) {
        self.update_rq_clock(cpu);
        if self.util_est {
            pelt::util_est_enqueue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
        }
        if self.tasks[t].in_iowait {
            self.tasks[t].in_iowait = false;
            self.cpufreq_update_util(cpu, crate::cpufreq::SCHED_CPUFREQ_IOWAIT);
        }
        // update_load_avg(my_q, se, UPDATE_TG | DO_ATTACH).
        let attaching = self.tasks[t].needs_attach;
        if !attaching {
            self.update_member_avg(cpu, t, false, false);
        }
        let decayed = self.update_group_cfs_rq(cpu, g);
        if attaching {
            let divider = self.pelt.divider;
            let tk = &mut self.tasks[t];
            let gc = &mut self.groups[g].cpus[cpu];
            let sum = pelt::attach_entity_prop(&mut gc.cfs, &mut tk.avg, tk.nice_weight, divider);
            gc.add_propagate(sum);
            tk.needs_attach = false;
        }
        if attaching || decayed {
            self.update_tg_load_avg(cpu, g);
        }
        let nice = self.tasks[t].nice_weight;
        let gc = &mut self.groups[g].cpus[cpu];
        gc.load_weight += nice;
        gc.h_nr_running += 1;

        // The group entity.
        self.update_group_se_load_avg(cpu, g);
        let gc = &mut self.groups[g].cpus[cpu];
        gc.se_runnable = u64::from(gc.h_nr_running);
        if !gc.on_rq {
            gc.on_rq = true;
            let total = self.group_rq_weight[cpu] + gc.se_load_weight;
            self.set_group_rq_weight(cpu, total);
        }
        self.update_cfs_group(cpu, g);
        let gc = &self.groups[g].cpus[cpu];
        self.tasks[t].weight = member_weight(gc.se_load_weight, nice, gc.load_weight);

        self.place_entity(cpu, t, kind);
        let rq = &mut self.rqs[cpu];
        let tk = &mut self.tasks[t];
        tk.state = TaskState::Runnable;
        tk.cpu = cpu;
        rq.tree.insert((tk.vruntime, t));
        rq.nr_running += 1;
        rq.cfs_nr_running += 1;
        self.idle_mask.clear(cpu);
        if rq.nr_running > 1 {
            self.overloaded.set(cpu);
        }
    }

    /// dequeue_task_fair() for a group task: dequeue_entity() from its
    /// group runqueue (`DO_DETACH` for a migration), then the group entity's
    /// level: updated, taken off the root runqueue with the group's last
    /// runnable task there, its runnable count and weight renewed.
    pub(crate) fn dequeue_task_grouped(&mut self, cpu: CpuId, t: TaskId, g: usize, sleep: bool, detach: bool) {
        self.update_rq_clock(cpu);
        let running = self.rqs[cpu].curr == Some(t);
        if running {
            self.update_curr(cpu);
        }
        if self.util_est {
            pelt::util_est_dequeue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
        }
        self.update_member_avg(cpu, t, true, running);
        let decayed = self.update_group_cfs_rq(cpu, g);
        if detach {
            let tk = &mut self.tasks[t];
            let gc = &mut self.groups[g].cpus[cpu];
            let sum = pelt::detach_entity_prop(&mut gc.cfs, &tk.avg, tk.nice_weight);
            gc.add_propagate(sum);
            tk.needs_attach = true;
        }
        if detach || decayed {
            self.update_tg_load_avg(cpu, g);
        }
        let nice = self.tasks[t].nice_weight;
        let gc = &mut self.groups[g].cpus[cpu];
        gc.load_weight -= nice;
        gc.h_nr_running -= 1;

        // The group entity.
        self.update_group_se_load_avg(cpu, g);
        let gc = &mut self.groups[g].cpus[cpu];
        gc.se_runnable = u64::from(gc.h_nr_running);
        if gc.h_nr_running == 0 {
            gc.on_rq = false;
            let total = self.group_rq_weight[cpu] - gc.se_load_weight;
            self.set_group_rq_weight(cpu, total);
        }

        let cap = u64::from(self.plat.cpu_type_of(cpu).capacity);
        let rq = &mut self.rqs[cpu];
        let tk = &mut self.tasks[t];
        if self.util_est && sleep {
            pelt::util_est_update(&mut tk.avg, true, cap);
        }
        if rq.curr != Some(t) {
            rq.tree.remove(&(tk.vruntime, t));
        }
        rq.nr_running -= 1;
        rq.cfs_nr_running -= 1;
        if rq.nr_running == 0 {
            self.idle_mask.set(cpu);
        }
        if rq.nr_running < 2 {
            self.overloaded.clear(cpu);
        }
        tk.state = if sleep { TaskState::Blocked } else { TaskState::Runnable };
        self.update_cfs_group(cpu, g);
    }

    /// entity_tick() at both levels for a running group task: its signal
    /// and its group runqueue's (UPDATE_TG), then the group entity's, whose
    /// weight is renewed (update_cfs_group).
    pub(crate) fn entity_tick_grouped(&mut self, cpu: CpuId, t: TaskId, g: usize) {
        self.update_member_load_avg(cpu, t, g, true);
        self.update_group_se_load_avg(cpu, g);
        self.update_cfs_group(cpu, g);
    }

    /// put_prev_entity() for a preempted group task (no UPDATE_TG); its
    /// group entity's level is [`Self::put_prev_group_se`], done only if the
    /// next task is not of the same group (pick_next_task_fair() stops at
    /// the common ancestor).
    pub(crate) fn put_prev_member(&mut self, cpu: CpuId, t: TaskId, g: usize) {
        self.update_member_load_avg(cpu, t, g, false);
    }

    /// put_prev_entity() for the group entity of `g`, if it is still on the
    /// root runqueue.
    pub(crate) fn put_prev_group_se(&mut self, cpu: CpuId, g: usize) {
        if self.groups[g].cpus[cpu].on_rq {
            self.update_group_se_load_avg(cpu, g);
        }
    }

    /// After the pick: put_prev_entity() for the group entity of a group
    /// task `prev` that leaves the CPU to a task not of its group.
    pub(crate) fn put_prev_group_se_unless_same(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let Some(g) = prev.and_then(|p| self.tasks[p].group) else { return };
        if next.and_then(|n| self.tasks[n].group) == Some(g) || !self.groups[g as usize].cpus[cpu].curr {
            return;
        }
        self.put_prev_group_se(cpu, g as usize);
    }

    /// set_next_entity() for group task `t` (UPDATE_TG), and for its group
    /// entity unless it was already current (`prev` of the same group).
    #[cold]
    #[inline(never)]
    pub(crate) fn set_next_member(&mut self, cpu: CpuId, prev: Option<TaskId>, t: TaskId) {
        let Some(g) = self.tasks[t].group else { return };
        self.update_member_load_avg(cpu, t, g as usize, true);
        if prev.and_then(|p| self.tasks[p].group) != Some(g) {
            self.update_group_se_load_avg(cpu, g as usize);
        }
    }

    /// Which group's runqueue on `cpu` a switch leaves and which it enters
    /// (`my_q->curr`, and the group entity as the root's current).
    pub(crate) fn switch_group_curr(&mut self, cpu: CpuId, prev: Option<u32>, next: Option<u32>) {
        if prev == next {
            return;
        }
        if let Some(p) = prev {
            self.groups[p as usize].cpus[cpu].curr = false;
        }
        if let Some(n) = next {
            self.groups[n as usize].cpus[cpu].curr = true;
        }
    }

    /// migrate_task_rq_fair() for a sleeping group task:
    /// remove_entity_load_avg() from its group runqueue on the old CPU.
    pub(crate) fn remove_member(&mut self, t: TaskId, g: usize, from: CpuId) {
        let divider = self.pelt.divider;
        let gc = &mut self.groups[g].cpus[from];
        let tk = &mut self.tasks[t];
        pelt::sync_entity_div(&gc.cfs, &mut tk.avg, tk.nice_weight, divider);
        pelt::remove_entity(&mut gc.cfs, &tk.avg);
        tk.needs_attach = true;
    }

    /// The group runqueue a new group task's first utilisation is taken
    /// from (post_init_entity_util_avg reads `cfs_rq_of(se)`).
    pub(crate) fn member_cfs_rq(&self, cpu: CpuId, g: usize) -> &CfsRqAvg {
        &self.groups[g].cpus[cpu].cfs
    }

    /// The NOHZ_STATS_KICK of nohz_balancer_kick() (v6.8): at most once per
    /// LOAD_AVG_PERIOD ms a busy CPU's balance has the idle CPUs' blocked
    /// load updated (`_nohz_idle_balance` → `update_nohz_stats`), so a
    /// group runqueue emptied on a CPU that stopped its tick still decays
    /// out of its group's load. Only runs with task groups take this path.
    pub(crate) fn nohz_update_blocked(&mut self, this: CpuId) {
        if self.now < self.nohz_next_blocked_ns {
            return;
        }
        self.nohz_next_blocked_ns = self.now + NOHZ_BLOCKED_PERIOD_NS;
        let idle = self.idle_mask;
        for cpu in idle.iter() {
            if cpu != this && self.rqs[cpu].nr_running == 0 {
                self.update_rq_clock(cpu);
                self.update_blocked_averages(cpu);
            }
        }
    }

    /// __update_blocked_fair() for the groups on `cpu`: each group
    /// runqueue decays (and reports into its group's load), then its entity
    /// is updated against the root runqueue unless it carries nothing
    /// (`skip_blocked_update`).
    pub(crate) fn update_blocked_groups(&mut self, cpu: CpuId) {
        for g in 0..self.groups.len() {
            if self.update_group_cfs_rq(cpu, g) {
                self.update_tg_load_avg(cpu, g);
            }
            let gc = &self.groups[g].cpus[cpu];
            if gc.se.load_avg != 0 || gc.se.util_avg != 0 || gc.propagate {
                self.update_group_se_load_avg(cpu, g);
            }
        }
    }
}

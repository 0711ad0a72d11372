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
//!    `add_tg_cfs_propagate`): the entity is attached to its parent's
//!    runqueue (the root's for a top-level group) from the group's
//!    creation; it is on that runqueue while its group
//!    runqueue has runnable tasks, runnable as many times as it has
//!    (`se_runnable`), running while one of them runs; a task's attach,
//!    detach or removal moves the group runqueue's sums at once and is handed
//!    up at the entity's next update: the entity takes its runqueue's
//!    `util_avg` and `runnable_avg` and a re-estimated load, and its parent
//!    runqueue moves by the same amounts (and hands them up in turn). So the root runqueue's `util_avg`,
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
//! 5. **Group scheduling** (Linux v6.5 kernel/sched/fair.c, the last CFS
//!    before EEVDF, the fair class machine/fair.rs models): a group's
//!    entity has its own vruntime, advanced by its weight at every
//!    `update_curr` of a task below it (`for_each_sched_entity`), and sits
//!    in its parent's runqueue, ordered with the tasks and groups beside it.
//!    `enqueue_task_fair` walks up the hierarchy: the task goes into its
//!    group's runqueue, and each group entity whose runqueue got its first
//!    entity is placed (`place_entity`, the waking rule, against its
//!    parent's `min_vruntime`) and enqueued on its parent;
//!    `dequeue_task_fair` takes an entity off its parent when its runqueue
//!    empties. `pick_next_task_fair` descends from the root, taking the
//!    leftmost entity of each runqueue until a task; the entities left and
//!    entered are put and set per level (`put_prev_entity`,
//!    `set_next_entity`) up to the common ancestor of the previous and the
//!    next task. A waking task is compared with the current one at the
//!    level where their ancestors share a runqueue (`find_matching_se`,
//!    `wakeup_preempt_entity`), and the tick checks each level's current
//!    entity against its slice (`entity_tick` → `check_preempt_tick`),
//!    the slice scaled by the entity's weight at each level (`sched_slice`
//!    with ALT_PERIOD and BASE_SLICE, on since v5.13).
//! 6. **Nested groups** (rt-app's "/tg1/tg11"): a group's parent is its
//!    path's parent, created if no task names it; the group's entity is
//!    attached to, weighs on and propagates into its parent's runqueue.
//!
//! 7. **A move to another group** (rt-app's per-phase `taskgroup`):
//!    `sched_move_task`, the task dequeued as a move, its group changed and
//!    enqueued again.
//!
//! Left out, and said so in docs/workloads.md: the buddies (`next`, `last`,
//! `skip`: NEXT_BUDDY is off by default, and the flat class has none
//! either) and CFS bandwidth control (cpu.max). Blocked group
//! runqueues decay (`update_blocked_averages`, children before parents) at
//! a busy CPU's balance
//! tick (every tick here, where the kernel's rebalance softirq runs when a
//! domain's balance is due), at an idle CPU's kept tick, and for tickless
//! idle CPUs by the NOHZ stats pass (v4.17+, machine/nohz.rs).

use super::rq::EnqueueKind;
use super::Engine;
use crate::platform::CpuId;
use crate::sched::pelt::{self, scale_load_down, CfsRqAvg, RqLoad, SchedAvg, NICE_0_LOAD, SCHED_FIXEDPOINT_SHIFT};
use crate::sched::sorted_set::SortedSet;
use crate::sched::{TaskId, TaskState};
use crate::sim::Time;
use crate::workload::TaskGroupSpec;

/// update_tg_load_avg() reports a group runqueue's load at most once per
/// this many ns (NSEC_PER_MSEC; "sched/fair: Ratelimit update to
/// tg->load_avg", v6.7).
const TG_LOAD_AVG_PERIOD_NS: u64 = 1_000_000;

/// A runqueue's tree names a task by its id and a group's entity by
/// `GROUP_SE` plus the group's index.
pub(crate) const GROUP_SE: usize = 1 << 40;

/// A task group as the engine keeps it (struct task_group).
#[derive(Debug, Clone)]
pub struct GroupRt {
    /// tg->shares, scaled (`scale_load(cpu.shares)`).
    pub shares: u64,
    /// Its fair tasks (task ids), in creation order.
    pub members: Vec<TaskId>,
    /// tg->load_avg: Σ of the CPUs' `tg_load_avg_contrib`.
    pub load_avg: i64,
    /// tg->parent (None: the root group), and the depth of the group's
    /// entities (se->depth: 0 for a top-level group).
    pub parent: Option<u32>,
    pub depth: u32,
    /// The group's runqueue and entity on each CPU.
    pub cpus: Vec<GroupCpu>,
}

/// A group on one CPU: its runqueue (`tg->cfs_rq[cpu]`) and its entity in
/// its parent's runqueue (`tg->se[cpu]`).
#[derive(Debug, Clone)]
pub struct GroupCpu {
    /// `my_q->avg` and its removals.
    pub cfs: CfsRqAvg,
    /// `scale_load_down(my_q->load.weight)`: Σ nice weights of its runnable
    /// tasks, plus its queued child groups' entities' weights.
    pub load_weight: u64,
    /// Σ scaled weights of the child groups' entities queued on `my_q`.
    pub child_weight: u64,
    /// `my_q->nr_running` (its entities) and `my_q->h_nr_running` (the
    /// tasks below it), the current ones included.
    pub nr_running: u32,
    pub h_nr_running: u32,
    /// `my_q`'s queued entities but its current, by (vruntime, entity).
    pub tree: SortedSet<(u64, usize)>,
    /// `my_q->min_vruntime`.
    pub min_vruntime: u64,
    /// `my_q->curr` is set, and so the entity is its parent's current.
    pub curr: bool,
    /// What this runqueue last reported into `tg->load_avg`, and when (ns).
    pub tg_load_avg_contrib: u64,
    pub last_update_tg_load_avg_ns: Option<Time>,
    /// `my_q->propagate` and `my_q->prop_runnable_sum`.
    pub propagate: bool,
    pub prop_runnable_sum: i64,
    /// The entity's signal (`se->avg`), attached to its parent's runqueue.
    pub se: SchedAvg,
    /// `se->load.weight`, scaled.
    pub se_load_weight: u64,
    /// `se->runnable_weight`: `h_nr_running` as of the last
    /// `se_update_runnable`.
    pub se_runnable: u64,
    /// `se->on_rq`.
    pub on_rq: bool,
    /// `se->vruntime`, `se->sum_exec_runtime` and
    /// `se->prev_sum_exec_runtime` (ns).
    pub vruntime: u64,
    pub sum_exec_ns: u64,
    pub prev_sum_exec_ns: u64,
}

impl GroupRt {
    pub fn new(spec: &TaskGroupSpec, nr_cpus: usize) -> Self {
        let shares = spec.shares << SCHED_FIXEDPOINT_SHIFT;
        let cpu = GroupCpu {
            cfs: CfsRqAvg::default(),
            load_weight: 0,
            child_weight: 0,
            nr_running: 0,
            h_nr_running: 0,
            tree: SortedSet::new(),
            min_vruntime: 0,
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
            vruntime: 0,
            sum_exec_ns: 0,
            prev_sum_exec_ns: 0,
        };
        GroupRt { shares, members: Vec::new(), load_avg: 0, parent: None, depth: 0, cpus: vec![cpu; nr_cpus] }
    }
}

/// The run's groups, each under the group named by its path's parent
/// ("/a" for "/a/b"; the root if its parent is "/" or not listed before
/// it, as the workload lists a group's ancestors first).
pub fn build_groups(specs: &[TaskGroupSpec], nr_cpus: usize) -> Vec<GroupRt> {
    let mut groups: Vec<GroupRt> = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut g = GroupRt::new(spec, nr_cpus);
        let up = spec.path.trim_end_matches('/').rsplit_once('/').map_or("", |(a, _)| a);
        if let Some(p) = specs[..groups.len()].iter().position(|s| !up.is_empty() && s.path.trim_end_matches('/') == up) {
            g.parent = Some(p as u32);
            g.depth = groups[p].depth + 1;
        }
        groups.push(g);
    }
    groups
}

impl GroupCpu {
    /// add_tg_cfs_propagate().
    fn add_propagate(&mut self, runnable_sum: i64) {
        self.propagate = true;
        self.prop_runnable_sum += runnable_sum;
    }

    /// The child groups' entities on `my_q` now weigh `total` (scaled).
    fn set_child_weight(&mut self, total: u64) {
        self.load_weight = self.load_weight - (self.child_weight >> SCHED_FIXEDPOINT_SHIFT) + (total >> SCHED_FIXEDPOINT_SHIFT);
        self.child_weight = total;
    }
}

/// Group `g` is `of` or one of its ancestors.
fn in_chain(groups: &[GroupRt], g: u32, of: Option<u32>) -> bool {
    let mut level = of;
    while let Some(x) = level {
        if x == g {
            return true;
        }
        level = groups[x as usize].parent;
    }
    false
}

/// A group and its parent, both mutable.
fn with_parent(groups: &mut [GroupRt], g: usize, p: usize) -> (&mut GroupRt, &mut GroupRt) {
    if g < p {
        let (lo, hi) = groups.split_at_mut(p);
        (&mut lo[g], &mut hi[0])
    } else {
        let (lo, hi) = groups.split_at_mut(g);
        (&mut hi[0], &mut lo[p])
    }
}

/// update_min_vruntime(): never backwards, towards the smaller of the
/// current entity's vruntime (if it is queued) and the leftmost's.
fn update_min_vruntime(min_v: &mut u64, tree: &SortedSet<(u64, usize)>, curr_v: Option<u64>) {
    let v = match (curr_v, tree.first()) {
        (Some(c), Some(&(l, _))) => c.min(l),
        (Some(c), None) => c,
        (None, Some(&(l, _))) => l,
        (None, None) => return,
    };
    *min_v = (*min_v).max(v);
}

impl Engine {
    /// Some task may be in a task group: the fair class schedules level
    /// by level.
    #[inline]
    pub(crate) fn fair_groups(&self) -> bool {
        self.sched_ext && !self.groups.is_empty()
    }

    // ---- entities and the runqueues holding them -------------------------

    /// The group whose runqueue holds entity `se` (cfs_rq_of; None: the
    /// root's).
    fn se_parent(&self, se: usize) -> Option<usize> {
        let p = if se >= GROUP_SE { self.groups[se - GROUP_SE].parent } else { self.tasks[se].group };
        p.map(|p| p as usize)
    }

    /// se->depth.
    fn se_depth(&self, se: usize) -> u32 {
        if se >= GROUP_SE {
            self.groups[se - GROUP_SE].depth
        } else {
            self.tasks[se].group.map_or(0, |g| self.groups[g as usize].depth + 1)
        }
    }

    fn se_vruntime(&self, cpu: CpuId, se: usize) -> u64 {
        if se >= GROUP_SE {
            self.groups[se - GROUP_SE].cpus[cpu].vruntime
        } else {
            self.tasks[se].vruntime
        }
    }

    /// The entity's weight, unscaled.
    fn se_weight(&self, cpu: CpuId, se: usize) -> u64 {
        if se >= GROUP_SE {
            scale_load_down(self.groups[se - GROUP_SE].cpus[cpu].se_load_weight)
        } else {
            self.tasks[se].weight
        }
    }

    fn se_on_rq(&self, cpu: CpuId, se: usize) -> bool {
        if se >= GROUP_SE {
            self.groups[se - GROUP_SE].cpus[cpu].on_rq
        } else {
            matches!(self.tasks[se].state, TaskState::Runnable | TaskState::Running)
        }
    }

    /// The entity's time on the CPU since it was last picked, ns.
    fn se_ran_ns(&self, cpu: CpuId, se: usize) -> u64 {
        if se >= GROUP_SE {
            let gc = &self.groups[se - GROUP_SE].cpus[cpu];
            gc.sum_exec_ns - gc.prev_sum_exec_ns
        } else {
            let tk = &self.tasks[se];
            tk.sum_exec_ns - tk.prev_sum_exec_ns
        }
    }

    /// The tree of a runqueue (`level`: its group, None: the root's).
    pub(crate) fn level_tree(&self, cpu: CpuId, level: Option<usize>) -> &SortedSet<(u64, usize)> {
        match level {
            Some(g) => &self.groups[g].cpus[cpu].tree,
            None => &self.rqs[cpu].tree,
        }
    }

    fn level_tree_mut(&mut self, cpu: CpuId, level: Option<usize>) -> &mut SortedSet<(u64, usize)> {
        match level {
            Some(g) => &mut self.groups[g].cpus[cpu].tree,
            None => &mut self.rqs[cpu].tree,
        }
    }

    fn level_min_vruntime(&self, cpu: CpuId, level: Option<usize>) -> u64 {
        match level {
            Some(g) => self.groups[g].cpus[cpu].min_vruntime,
            None => self.rqs[cpu].min_vruntime,
        }
    }

    /// The runqueue's load weight, unscaled.
    fn level_load(&self, cpu: CpuId, level: Option<usize>) -> u64 {
        match level {
            Some(g) => self.groups[g].cpus[cpu].load_weight,
            None => self.rqs[cpu].load_weight,
        }
    }

    /// The min_vruntime of the runqueue task `t` is queued on (or goes to)
    /// on `cpu`: its group's, or the root's.
    #[inline]
    pub(crate) fn task_min_vruntime(&self, cpu: CpuId, t: TaskId) -> u64 {
        if self.sched_ext {
            if let Some(g) = self.tasks[t].group {
                return self.groups[g as usize].cpus[cpu].min_vruntime;
            }
        }
        self.rqs[cpu].min_vruntime
    }

    // ---- vruntime ----------------------------------------------------------

    /// update_curr() above the running task `t`, which ran `delta` ns: the
    /// min_vruntime of its runqueue, then for each group entity above it
    /// (for_each_sched_entity) its run time, its vruntime at its own
    /// weight, and its parent's min_vruntime.
    #[cold]
    #[inline(never)]
    pub(crate) fn update_curr_levels(&mut self, cpu: CpuId, t: TaskId, delta: u64) {
        let mut v = Some(self.tasks[t].vruntime).filter(|_| self.se_on_rq(cpu, t));
        let mut level = self.tasks[t].group;
        while let Some(g) = level {
            let grp = &mut self.groups[g as usize];
            let gc = &mut grp.cpus[cpu];
            update_min_vruntime(&mut gc.min_vruntime, &gc.tree, v);
            gc.sum_exec_ns += delta;
            gc.vruntime += delta * NICE_0_LOAD / scale_load_down(gc.se_load_weight);
            v = Some(gc.vruntime).filter(|_| gc.on_rq);
            level = grp.parent;
        }
        let rq = &mut self.rqs[cpu];
        update_min_vruntime(&mut rq.min_vruntime, &rq.tree, v);
    }

    /// sched_slice() for entity `se` (v6.5, ALT_PERIOD; BASE_SLICE from v5.13): the
    /// period for all the fair tasks on the CPU, cut at each level by the
    /// entity's part of its runqueue's weight (its own weight added if it
    /// is not queued), never below the minimum granularity.
    fn sched_slice_grouped(&self, cpu: CpuId, se: usize) -> u64 {
        let nr = u64::from(self.rqs[cpu].cfs_nr_running) + u64::from(!self.se_on_rq(cpu, se));
        let mut slice = if nr > self.tun.nr_latency { nr * self.tun.min_granularity_ns } else { self.tun.sched_latency_ns };
        let mut e = se;
        loop {
            let level = self.se_parent(e);
            let w = self.se_weight(cpu, e);
            let mut load = self.level_load(cpu, level);
            if !self.se_on_rq(cpu, e) {
                load += w;
            }
            slice = slice * w / load.max(1);
            match level {
                Some(g) => e = GROUP_SE + g,
                None => break,
            }
        }
        if self.tun.base_slice {
            slice.max(self.tun.min_granularity_ns)
        } else {
            slice
        }
    }

    /// place_entity() for a group task against its group's runqueue on
    /// `cpu` (as the root's tasks are placed against the root's).
    fn place_member(&mut self, cpu: CpuId, t: TaskId, g: usize, kind: EnqueueKind) {
        let min_v = self.groups[g].cpus[cpu].min_vruntime;
        let v = match kind {
            EnqueueKind::New => min_v + self.sched_slice_grouped(cpu, t) * NICE_0_LOAD / self.tasks[t].weight,
            EnqueueKind::Wakeup => self.tasks[t].vruntime.max(min_v.saturating_sub(self.tun.sched_latency_ns / 2)),
            EnqueueKind::Migrate => self.tasks[t].vruntime + min_v,
        };
        self.tasks[t].vruntime = v;
    }

    // ---- PELT --------------------------------------------------------------

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

    /// __update_load_avg_se for a group task: its nice weight.
    fn update_member_avg(&mut self, cpu: CpuId, t: TaskId, on_rq: bool, running: bool) {
        let s = self.contribution_scales(cpu);
        let now = self.rqs[cpu].clock.now();
        let tk = &mut self.tasks[t];
        pelt::update_entity_era(self.pelt.era, self.pelt.divider, now, &mut tk.avg, on_rq, running, tk.nice_weight, s.freq, s.cpu);
    }

    /// The task's level of update_load_avg(): its signal, then its group
    /// runqueue's; `update_tg`: UPDATE_TG.
    fn update_member_load_avg(&mut self, cpu: CpuId, t: TaskId, g: usize, update_tg: bool) {
        // cfs_rq->curr == se: the CPU's task, once its group runqueue has it
        // as current (not yet at the pick's set_next_entity).
        let running = self.rqs[cpu].curr == Some(t) && self.groups[g].cpus[cpu].curr;
        let on_rq = matches!(self.tasks[t].state, TaskState::Runnable | TaskState::Running);
        self.update_member_avg(cpu, t, on_rq, running);
        if self.update_group_cfs_rq(cpu, g) && update_tg {
            self.update_tg_load_avg(cpu, g);
        }
    }

    /// The group entity's level of update_load_avg(), on its parent's
    /// runqueue: age the entity, update the parent runqueue, propagate what
    /// its group runqueue gained or lost; the cpufreq hook if the parent is
    /// the root and changed (`cfs_rq_util_change`), else the parent
    /// group's load report (`update_tg`: UPDATE_TG).
    fn update_group_se_load_avg(&mut self, cpu: CpuId, g: usize, update_tg: bool) {
        let scales = self.contribution_scales(cpu);
        let now = self.rqs[cpu].clock.now();
        let gc = &mut self.groups[g].cpus[cpu];
        let w = scale_load_down(gc.se_load_weight);
        pelt::update_group_entity(self.pelt, now, &mut gc.se, gc.on_rq, gc.se_runnable, gc.curr, w, scales);
        match self.groups[g].parent {
            None => {
                let mut decayed = self.update_cfs_rq(cpu);
                decayed |= self.propagate_entity_load_avg(cpu, g);
                if decayed {
                    self.cpufreq_update_util(cpu, 0);
                }
            }
            Some(p) => {
                let p = p as usize;
                let mut decayed = self.update_group_cfs_rq(cpu, p);
                decayed |= self.propagate_entity_load_avg(cpu, g);
                if decayed && update_tg {
                    self.update_tg_load_avg(cpu, p);
                }
            }
        }
    }

    /// propagate_entity_load_avg(): hand the group runqueue's changes to
    /// its entity and its parent runqueue (which hands them up in turn,
    /// `add_tg_cfs_propagate`).
    fn propagate_entity_load_avg(&mut self, cpu: CpuId, g: usize) -> bool {
        let divider = self.pelt.divider;
        if !self.groups[g].cpus[cpu].propagate {
            return false;
        }
        let (gc, parent) = match self.groups[g].parent {
            None => (&mut self.groups[g].cpus[cpu], &mut self.rqs[cpu].cfs.avg),
            Some(p) => {
                let (grp, up) = with_parent(&mut self.groups, g, p as usize);
                let (gc, pc) = (&mut grp.cpus[cpu], &mut up.cpus[cpu]);
                pc.add_propagate(gc.prop_runnable_sum);
                (gc, &mut pc.cfs.avg)
            }
        };
        gc.propagate = false;
        pelt::update_tg_cfs_util(parent, &mut gc.se, &gc.cfs.avg, divider);
        pelt::update_tg_cfs_runnable(parent, &mut gc.se, &gc.cfs.avg, divider);
        let w = scale_load_down(gc.se_load_weight);
        pelt::update_tg_cfs_load(parent, &mut gc.se, &gc.cfs.avg, gc.load_weight, w, &mut gc.prop_runnable_sum, divider);
        true
    }

    // ---- weights -----------------------------------------------------------

    /// update_cfs_group(): the entity's weight from calc_group_shares(),
    /// applied by reweight_entity().
    fn update_cfs_group(&mut self, cpu: CpuId, g: usize) {
        let grp = &self.groups[g];
        let gc = &grp.cpus[cpu];
        let shares = pelt::calc_group_shares(grp.shares, gc.load_weight, gc.cfs.avg.load_avg, grp.load_avg, gc.tg_load_avg_contrib);
        if shares != gc.se_load_weight {
            self.reweight_group_se(cpu, g, shares);
        }
    }

    /// reweight_entity() for the group entity: its running time so far is
    /// charged at the old weight, then its parent runqueue's weight and
    /// load average take the new one.
    fn reweight_group_se(&mut self, cpu: CpuId, g: usize, shares: u64) {
        let (on_rq, curr) = {
            let gc = &self.groups[g].cpus[cpu];
            (gc.on_rq, gc.curr)
        };
        if on_rq && curr {
            self.update_curr(cpu);
        }
        let divider = self.pelt.divider;
        let old = self.groups[g].cpus[cpu].se_load_weight;
        let (old_w, new_w) = (scale_load_down(old), scale_load_down(shares));
        match self.groups[g].parent {
            None => pelt::reweight_entity_avg(&mut self.rqs[cpu].cfs, &mut self.groups[g].cpus[cpu].se, old_w, new_w, divider),
            Some(p) => {
                let (grp, up) = with_parent(&mut self.groups, g, p as usize);
                pelt::reweight_entity_avg(&mut up.cpus[cpu].cfs, &mut grp.cpus[cpu].se, old_w, new_w, divider);
            }
        }
        self.groups[g].cpus[cpu].se_load_weight = shares;
        if on_rq {
            self.account_group_se(cpu, g, old, false);
            self.account_group_se(cpu, g, shares, true);
        }
    }

    /// account_entity_enqueue() (`add`) or _dequeue() of group `g`'s
    /// entity weighing `w` (scaled) on its parent runqueue.
    fn account_group_se(&mut self, cpu: CpuId, g: usize, w: u64, add: bool) {
        match self.groups[g].parent {
            None => {
                let old = self.group_rq_weight[cpu];
                self.set_group_rq_weight(cpu, if add { old + w } else { old - w });
            }
            Some(p) => {
                let pc = &mut self.groups[p as usize].cpus[cpu];
                pc.set_child_weight(if add { pc.child_weight + w } else { pc.child_weight - w });
            }
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

    // ---- enqueue and dequeue -----------------------------------------------

    /// enqueue_task_fair() for a group task: enqueue_entity() on its group
    /// runqueue (its signal attached there or aged with it), then up the
    /// hierarchy each group entity is updated (update_load_avg with
    /// UPDATE_TG, se_update_runnable, update_cfs_group) and, if its
    /// runqueue has just got its first entity, placed and enqueued on its
    /// parent.
    pub(crate) fn enqueue_task_grouped(&mut self, cpu: CpuId, t: TaskId, g: usize, kind: EnqueueKind) {
        self.update_rq_clock(cpu);
        if self.util_est {
            self.util_est_form.enqueue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
        }
        if self.tasks[t].in_iowait {
            self.tasks[t].in_iowait = false;
            self.cpufreq_update_util(cpu, crate::cpufreq::SCHED_CPUFREQ_IOWAIT);
        }
        if self.rqs[cpu].cfs_curr {
            self.update_curr(cpu);
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
        self.tasks[t].weight = nice;
        self.place_member(cpu, t, g, kind);
        let tk = &mut self.tasks[t];
        tk.state = TaskState::Runnable;
        tk.cpu = cpu;
        let gc = &mut self.groups[g].cpus[cpu];
        gc.load_weight += nice;
        gc.nr_running += 1;
        gc.h_nr_running += 1;
        gc.tree.insert((tk.vruntime, t));

        let mut level = Some(g);
        while let Some(x) = level {
            let parent = self.groups[x].parent.map(|p| p as usize);
            self.update_group_se_load_avg(cpu, x, true);
            let gc = &mut self.groups[x].cpus[cpu];
            gc.se_runnable = u64::from(gc.h_nr_running);
            self.update_cfs_group(cpu, x);
            if !self.groups[x].cpus[cpu].on_rq {
                self.enqueue_group_se(cpu, x, parent);
            }
            if let Some(p) = parent {
                self.groups[p].cpus[cpu].h_nr_running += 1;
            }
            level = parent;
        }

        let rq = &mut self.rqs[cpu];
        rq.nr_running += 1;
        rq.cfs_nr_running += 1;
        self.idle_mask.clear(cpu);
        if rq.nr_running > 1 {
            self.overloaded.set(cpu);
            self.set_rd_overload();
        }
    }

    /// The rest of enqueue_entity() for group `g`'s entity: its weight on
    /// its parent runqueue, placed as a waking entity (ENQUEUE_WAKEUP), in
    /// the parent's tree unless it is the parent's current.
    fn enqueue_group_se(&mut self, cpu: CpuId, g: usize, parent: Option<usize>) {
        let w = self.groups[g].cpus[cpu].se_load_weight;
        self.account_group_se(cpu, g, w, true);
        if let Some(p) = parent {
            self.groups[p].cpus[cpu].nr_running += 1;
        }
        let floor = self.level_min_vruntime(cpu, parent).saturating_sub(self.tun.sched_latency_ns / 2);
        let gc = &mut self.groups[g].cpus[cpu];
        gc.on_rq = true;
        gc.vruntime = gc.vruntime.max(floor);
        let (curr, v) = (gc.curr, gc.vruntime);
        if !curr {
            self.level_tree_mut(cpu, parent).insert((v, GROUP_SE + g));
        }
    }

    /// dequeue_task_fair() for a group task: dequeue_entity() from its
    /// group runqueue (`DO_DETACH` for a migration), then up the hierarchy
    /// each group entity is updated, and taken off its parent when its
    /// runqueue has no entity left.
    pub(crate) fn dequeue_task_grouped(&mut self, cpu: CpuId, t: TaskId, g: usize, sleep: bool, detach: bool) {
        self.update_rq_clock(cpu);
        let running = self.rqs[cpu].curr == Some(t);
        if self.rqs[cpu].cfs_curr {
            self.update_curr(cpu);
        }
        if self.util_est {
            self.util_est_form.dequeue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
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
        let tk = &self.tasks[t];
        let gc = &mut self.groups[g].cpus[cpu];
        gc.load_weight -= tk.nice_weight;
        gc.nr_running -= 1;
        gc.h_nr_running -= 1;
        if !running {
            gc.tree.remove(&(tk.vruntime, t));
        }

        let mut level = Some(g);
        while let Some(x) = level {
            let parent = self.groups[x].parent.map(|p| p as usize);
            self.update_group_se_load_avg(cpu, x, true);
            let gc = &mut self.groups[x].cpus[cpu];
            gc.se_runnable = u64::from(gc.h_nr_running);
            if gc.on_rq && gc.nr_running == 0 {
                gc.on_rq = false;
                let (curr, v, w) = (gc.curr, gc.vruntime, gc.se_load_weight);
                if !curr {
                    self.level_tree_mut(cpu, parent).remove(&(v, GROUP_SE + x));
                }
                self.account_group_se(cpu, x, w, false);
                if let Some(p) = parent {
                    self.groups[p].cpus[cpu].nr_running -= 1;
                }
            }
            self.update_cfs_group(cpu, x);
            if let Some(p) = parent {
                self.groups[p].cpus[cpu].h_nr_running -= 1;
            }
            level = parent;
        }

        let cap = self.rqs[cpu].capacity;
        let rq = &mut self.rqs[cpu];
        let tk = &mut self.tasks[t];
        if self.util_est && sleep {
            self.util_est_form.update(&mut tk.avg, true, cap);
        }
        rq.nr_running -= 1;
        rq.cfs_nr_running -= 1;
        if rq.nr_running == 0 {
            super::placement::set_cpu_idle(&self.plat, &mut self.idle_mask, &mut self.has_idle_cores, cpu);
        }
        if rq.nr_running < 2 {
            self.overloaded.clear(cpu);
        }
        tk.state = if sleep { TaskState::Blocked } else { TaskState::Runnable };
    }

    // ---- pick, put and set -------------------------------------------------

    /// put_prev_entity() up the hierarchy for fair task `p` leaving the CPU
    /// (or put back to be picked again): if preempted it goes back into its
    /// runqueue's tree (its PELT and its group runqueue's updated, no
    /// UPDATE_TG), and each of its group entities still queued goes back
    /// into its parent's. The group entities' PELT follows the pick
    /// ([`Self::put_prev_group_se_unless_same`]).
    pub(crate) fn put_prev_task_fair_grouped(&mut self, cpu: CpuId, p: TaskId) {
        let group = self.tasks[p].group;
        if self.tasks[p].state == TaskState::Running {
            match group {
                Some(g) => self.update_member_load_avg(cpu, p, g as usize, false),
                None => self.update_load_avg(cpu, Some(p)),
            }
            self.tasks[p].state = TaskState::Runnable;
            let v = self.tasks[p].vruntime;
            self.level_tree_mut(cpu, group.map(|g| g as usize)).insert((v, p));
        }
        let mut level = group;
        while let Some(g) = level {
            let grp = &self.groups[g as usize];
            let gc = &grp.cpus[cpu];
            level = grp.parent;
            if gc.on_rq && gc.curr {
                let v = gc.vruntime;
                self.level_tree_mut(cpu, level.map(|p| p as usize)).insert((v, GROUP_SE + g as usize));
            }
        }
    }

    /// pick_next_task_fair()'s descent: from the root, the leftmost entity
    /// of each runqueue (pick_next_entity; its current was put back into
    /// the tree), taken out of its tree (set_next_entity), until a task.
    pub(crate) fn pick_next_task_fair_grouped(&mut self, cpu: CpuId) -> Option<TaskId> {
        let mut level = None;
        loop {
            let Some(&(v, se)) = self.level_tree(cpu, level).first() else {
                assert!(level.is_none(), "t={} ns CPU {cpu}: group {level:?}'s entity queued with an empty runqueue", self.now);
                return None;
            };
            self.level_tree_mut(cpu, level).remove(&(v, se));
            if se < GROUP_SE {
                return Some(se);
            }
            level = Some(se - GROUP_SE);
        }
    }

    /// put_prev_entity() for the group entity of `g`, if it is still on
    /// its parent runqueue: its PELT (no UPDATE_TG).
    fn put_prev_group_se(&mut self, cpu: CpuId, g: usize) {
        if self.groups[g].cpus[cpu].on_rq {
            self.update_group_se_load_avg(cpu, g, false);
        }
    }

    /// After the pick: put_prev_entity() for the group entities of a group
    /// task `prev` that are not above `next` too (pick_next_task_fair()
    /// stops at the common ancestor), leaf first.
    pub(crate) fn put_prev_group_se_unless_same(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let next_group = next.and_then(|n| self.tasks[n].group);
        let mut level = prev.and_then(|p| self.tasks[p].group);
        while let Some(g) = level {
            if in_chain(&self.groups, g, next_group) || !self.groups[g as usize].cpus[cpu].curr {
                return;
            }
            self.put_prev_group_se(cpu, g as usize);
            level = self.groups[g as usize].parent;
        }
    }

    /// set_next_entity() for group task `t` (UPDATE_TG) and for each group
    /// entity above it up to the first that is above `prev` too (already
    /// current): PELT with UPDATE_TG, and its slice starts
    /// (prev_sum_exec_runtime).
    #[cold]
    #[inline(never)]
    pub(crate) fn set_next_member(&mut self, cpu: CpuId, prev: Option<TaskId>, t: TaskId) {
        let Some(g) = self.tasks[t].group else { return };
        self.update_member_load_avg(cpu, t, g as usize, true);
        let prev_group = prev.and_then(|p| self.tasks[p].group);
        let mut level = Some(g);
        while let Some(x) = level {
            if in_chain(&self.groups, x, prev_group) {
                return;
            }
            self.update_group_se_load_avg(cpu, x as usize, true);
            let grp = &mut self.groups[x as usize];
            let gc = &mut grp.cpus[cpu];
            gc.prev_sum_exec_ns = gc.sum_exec_ns;
            level = grp.parent;
        }
    }

    /// Which group runqueues on `cpu` a switch leaves and which it enters
    /// (`my_q->curr`, and each group entity as its parent's current).
    pub(crate) fn switch_group_curr(&mut self, cpu: CpuId, prev: Option<u32>, next: Option<u32>) {
        if prev == next {
            return;
        }
        let mut level = prev;
        while let Some(g) = level {
            self.groups[g as usize].cpus[cpu].curr = false;
            level = self.groups[g as usize].parent;
        }
        let mut level = next;
        while let Some(g) = level {
            self.groups[g as usize].cpus[cpu].curr = true;
            level = self.groups[g as usize].parent;
        }
    }

    // ---- preemption --------------------------------------------------------

    /// check_preempt_wakeup() with task groups: the current task and the
    /// waking one are compared through their ancestors that share a
    /// runqueue (find_matching_se); the waking side preempts if it is
    /// behind by more than the wakeup granularity at its own weight
    /// (wakeup_preempt_entity, wakeup_gran).
    #[cold]
    #[inline(never)]
    pub(crate) fn check_preempt_wakeup_grouped(&mut self, cpu: CpuId, curr: TaskId, t: TaskId) {
        self.update_curr(cpu);
        let (mut se, mut pse) = (curr, t);
        let (mut d, mut pd) = (self.se_depth(se), self.se_depth(pse));
        let up = |e: &Engine, x: usize| GROUP_SE + e.se_parent(x).expect("an entity below the root has a parent group");
        while d > pd {
            se = up(self, se);
            d -= 1;
        }
        while pd > d {
            pse = up(self, pse);
            pd -= 1;
        }
        while self.se_parent(se) != self.se_parent(pse) {
            se = up(self, se);
            pse = up(self, pse);
        }
        let (v, pv) = (self.se_vruntime(cpu, se), self.se_vruntime(cpu, pse));
        let gran = self.tun.wakeup_granularity_ns * NICE_0_LOAD / self.se_weight(cpu, pse).max(1);
        if v > pv + gran {
            self.schedule(cpu);
        }
    }

    /// The preemption half of task_tick_fair() with task groups: the CPU
    /// reschedules if a level asks for it.
    #[cold]
    #[inline(never)]
    pub(crate) fn task_tick_fair_grouped(&mut self, cpu: CpuId, curr: TaskId) {
        if self.check_preempt_tick_grouped(cpu, curr) {
            self.schedule(cpu);
        }
    }

    /// check_preempt_tick() at every level above the running task `curr`
    /// whose runqueue holds another entity (entity_tick: `nr_running > 1`):
    /// the level's current entity has used its slice, or is ahead of the
    /// leftmost by more than it.
    fn check_preempt_tick_grouped(&self, cpu: CpuId, curr: TaskId) -> bool {
        let mut se = curr;
        let mut resched = false;
        loop {
            let level = self.se_parent(se);
            if let Some(&(lv, _)) = self.level_tree(cpu, level).first() {
                let ideal = self.sched_slice_grouped(cpu, se);
                let ran = self.se_ran_ns(cpu, se);
                let v = self.se_vruntime(cpu, se);
                resched |= ran > ideal || (ran >= self.tun.min_granularity_ns && v > lv && v - lv > ideal);
            }
            match level {
                Some(g) => se = GROUP_SE + g,
                None => return resched,
            }
        }
    }

    /// entity_tick() at every level for a running group task: its signal
    /// and its group runqueue's (UPDATE_TG), then each group entity's,
    /// whose weight is renewed (update_cfs_group).
    pub(crate) fn entity_tick_grouped(&mut self, cpu: CpuId, t: TaskId, g: usize) {
        self.update_member_load_avg(cpu, t, g, true);
        let mut level = Some(g);
        while let Some(x) = level {
            self.update_group_se_load_avg(cpu, x, true);
            self.update_cfs_group(cpu, x);
            level = self.groups[x].parent.map(|p| p as usize);
        }
    }

    // ---- the queued tasks --------------------------------------------------

    /// The fair tasks queued on `cpu` (not its current), the last of each
    /// runqueue first, a group entity standing for its runqueue's tasks;
    /// then those beside the current task in its groups.
    #[cold]
    #[inline(never)]
    pub(crate) fn queued_fair_tasks(&self, cpu: CpuId) -> Vec<TaskId> {
        let mut out = Vec::new();
        self.collect_queued(cpu, None, &mut out);
        let rq = &self.rqs[cpu];
        let mut level = rq.curr.filter(|_| rq.cfs_curr).and_then(|c| self.tasks[c].group);
        while let Some(g) = level {
            self.collect_queued(cpu, Some(g as usize), &mut out);
            level = self.groups[g as usize].parent;
        }
        out
    }

    fn collect_queued(&self, cpu: CpuId, level: Option<usize>, out: &mut Vec<TaskId>) {
        for &(_, se) in self.level_tree(cpu, level).iter().rev() {
            if se >= GROUP_SE {
                self.collect_queued(cpu, Some(se - GROUP_SE), out);
            } else {
                out.push(se);
            }
        }
    }

    // ---- migration and blocked load ----------------------------------------

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

    /// __update_blocked_fair() for the groups on `cpu`, children before
    /// their parents (a group is listed after its ancestors): each group
    /// runqueue decays (and reports into its group's load), then its entity
    /// is updated against its parent's runqueue unless it carries nothing
    /// (`skip_blocked_update`).
    pub(crate) fn update_blocked_groups(&mut self, cpu: CpuId) {
        for g in (0..self.groups.len()).rev() {
            if self.update_group_cfs_rq(cpu, g) {
                self.update_tg_load_avg(cpu, g);
            }
            let gc = &self.groups[g].cpus[cpu];
            if gc.se.load_avg != 0 || gc.se.util_avg != 0 || gc.propagate {
                self.update_group_se_load_avg(cpu, g, true);
            }
        }
    }
}

impl Engine {
    /// sched_move_task() (v6.5 kernel/sched/core.c) for the running task
    /// `t` moving itself to group `to` (rt-app's per-phase taskgroup):
    /// dequeued from its runqueue as a move (its signal detached, its
    /// vruntime made relative to that runqueue's min_vruntime), its old
    /// group entities put back (put_prev_task), its group changed
    /// (task_change_group_fair), enqueued on its new runqueue (its signal
    /// attached there, its vruntime against the new min_vruntime), and
    /// made current again (set_next_task). True when it moved: the CPU
    /// then reschedules (resched_curr).
    pub(crate) fn sched_move_task(&mut self, cpu: CpuId, t: TaskId, to: Option<u32>) -> bool {
        let from = self.tasks[t].group;
        if from == to || self.tasks[t].class != crate::sched::rt::Class::Fair || !self.fair_groups() {
            return false;
        }
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        self.dequeue_task_migrating(cpu, t);
        let min_v = self.task_min_vruntime(cpu, t);
        self.tasks[t].vruntime = self.tasks[t].vruntime.saturating_sub(min_v);
        self.put_prev_task_fair_grouped(cpu, t);
        self.put_prev_group_se_unless_same(cpu, Some(t), None);
        self.switch_group_curr(cpu, from, None);

        if let Some(g) = from {
            self.groups[g as usize].members.retain(|&m| m != t);
        }
        if let Some(g) = to {
            self.groups[g as usize].members.push(t);
        }
        self.tasks[t].group = to;
        self.enqueue_task(cpu, t, EnqueueKind::Migrate);

        // set_next_task(): out of the trees, current at every level.
        let v = self.tasks[t].vruntime;
        self.level_tree_mut(cpu, to.map(|g| g as usize)).remove(&(v, t));
        let mut level = to;
        while let Some(g) = level {
            let grp = &self.groups[g as usize];
            let (on_rq, gv) = (grp.cpus[cpu].on_rq, grp.cpus[cpu].vruntime);
            level = grp.parent;
            if on_rq {
                self.level_tree_mut(cpu, level.map(|p| p as usize)).remove(&(gv, GROUP_SE + g as usize));
            }
        }
        self.switch_group_curr(cpu, None, to);
        let tk = &mut self.tasks[t];
        tk.state = TaskState::Running;
        tk.prev_sum_exec_ns = tk.sum_exec_ns;
        match to {
            Some(_) => self.set_next_member(cpu, None, t),
            None => self.update_load_avg(cpu, Some(t)),
        }
        true
    }
}

//! The fair scheduling class acting on the engine's runqueues: the rq clock
//! and PELT updates, enqueue and dequeue, vruntime placement, the running
//! task's work segment, __schedule() and the scheduler tick.
//!
//! Models: Linux v6.5 kernel/sched/fair.c (enqueue_task_fair,
//! dequeue_task_fair, place_entity, update_curr, check_preempt_wakeup,
//! task_tick_fair) and kernel/sched/core.c (__schedule, scheduler_tick);
//! from v6.6 the pick, placement, deadlines and wakeup preemption are
//! EEVDF's (machine/eevdf.rs), called from here where the kernel calls them.
//! `__schedule` picks by class as v6.8's `pick_next_task` does (deadline,
//! RT, then fair; machine/rt.rs); the class and group checks sit behind
//! `Engine::sched_ext`, so a run with only fair tasks takes the fair-only
//! paths. With task groups the pick, put_prev, update_curr, the wakeup and
//! tick preemption checks go level by level (machine/fair_group.rs).

use super::placement::CpuIdleType;
use super::rq::{CpuMode, EnqueueKind};
use super::{Engine, Event};
use crate::cpufreq::{SCHED_CPUFREQ_IOWAIT, SCHED_CPUFREQ_MIGRATION};
use crate::platform::CpuId;
use crate::sched::pelt::{self, PeltEra, RqLoad, Scales, NICE_0_LOAD};
use crate::sched::rt::Class;
use crate::sched::{TaskId, TaskState};
use crate::sim::{ns_f64, Time};

impl Engine {
    // ---- rq clock and PELT ---------------------------------------------

    /// update_rq_clock(): advance the PELT clock to now. Before v5.1
    /// (pelt::PeltEra::ScaledContributions) PELT reads the plain task clock:
    /// the clock advances unscaled and the scaling goes into each update.
    // Always inlined, as `update_cfs_rq` (0.2 % fewer instructions,
    // callgrind on `bench_mix 4`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn update_rq_clock(&mut self, cpu: CpuId) {
        let rq = &self.rqs[cpu];
        if rq.clock.is_current(self.now, rq.curr.is_none()) {
            return;
        }
        let s = match self.pelt.era {
            PeltEra::ScaledClock => self.pelt_scales(cpu),
            PeltEra::ScaledContributions => Scales::NONE,
        };
        let rq = &mut self.rqs[cpu];
        let idle = rq.curr.is_none();
        rq.clock.update(self.now, idle, s.cpu, s.freq);
    }

    /// The CPU's invariance factors now: frequency scale and capacity.
    #[inline]
    pub(crate) fn pelt_scales(&self, cpu: CpuId) -> Scales {
        Scales { freq: self.freq_scale(cpu), cpu: self.rqs[cpu].capacity }
    }

    /// The factors a PELT update scales its contributions by: the CPU's
    /// before v5.1, none from v5.1 (the clock carries them).
    #[inline]
    pub(super) fn contribution_scales(&self, cpu: CpuId) -> Scales {
        match self.pelt.era {
            PeltEra::ScaledContributions => self.pelt_scales(cpu),
            PeltEra::ScaledClock => Scales::NONE,
        }
    }

    /// The runqueue's own PELT update (update_cfs_rq_load_avg) under the
    /// kernel's rules; true when it decayed.
    // Always inlined: its call frame was a sixth of its cost, at every
    // enqueue, dequeue, pick and tick (1.1 % fewer instructions, callgrind
    // on `bench_mix 4`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn update_cfs_rq(&mut self, cpu: CpuId) -> bool {
        let scales = self.contribution_scales(cpu);
        let rq = &mut self.rqs[cpu];
        let now = rq.clock.now();
        // Delayed tasks are not runnable (v6.12, 2e05f6c71d36: h_nr_running
        // - h_nr_delayed), though their weight stays in the load.
        let runnable = u64::from(rq.cfs_nr_running - rq.nr_delayed);
        let load = RqLoad { weight: rq.load_weight, h_nr_running: runnable, curr_running: rq.cfs_running() };
        pelt::update_cfs_rq_era(self.pelt, now, &mut rq.cfs, load, scales)
    }

    /// __update_load_avg_se for task `t` on `cpu` under the kernel's rules.
    // Always inlined, as `update_cfs_rq` (1.4 % fewer instructions,
    // callgrind on `bench_mix 4`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn update_task_avg(&mut self, cpu: CpuId, t: TaskId, on_rq: bool, running: bool) {
        let s = self.contribution_scales(cpu);
        let now = self.rqs[cpu].clock.now();
        let tk = &mut self.tasks[t];
        pelt::update_entity_era(self.pelt.era, self.pelt.divider, now, &mut tk.avg, on_rq, running, tk.weight, s.freq, s.cpu);
    }

    /// update_load_avg() for the runqueue and, if given, a task on it; calls
    /// the cpufreq hook when the CPU's signal crossed a period boundary.
    pub(crate) fn update_load_avg(&mut self, cpu: CpuId, task: Option<TaskId>) {
        let running = task.is_some_and(|t| self.rqs[cpu].curr == Some(t));
        self.update_load_avg_as(cpu, task, running);
    }

    /// [`Self::update_load_avg`] with the task's `running` given: false at
    /// the pick, which updates before the task becomes the runqueue's
    /// current ([`Self::context_switch`]).
    fn update_load_avg_as(&mut self, cpu: CpuId, task: Option<TaskId>, running: bool) {
        if let Some(t) = task {
            // An RT or DL task's own signal is aged too (the kernel's
            // update_curr_rt/dl leave it alone); it is never attached to
            // the fair runqueue's, so nothing reads it.
            let on_rq = matches!(self.tasks[t].state, TaskState::Runnable | TaskState::Running);
            self.update_task_avg(cpu, t, on_rq, running);
            if self.tasks[t].class == Class::Fair {
                self.trace_pelt_se(cpu, t);
            }
        }
        if self.update_cfs_rq(cpu) {
            self.trace_pelt_cfs(cpu);
            self.cpufreq_update_util(cpu, 0);
        }
    }

    // ---- enqueue / dequeue ---------------------------------------------

    /// enqueue_task_fair(): put a runnable task on `cpu`'s runqueue.
    ///
    /// v6.8 order (kernel/sched/fair.c `enqueue_task_fair`,
    /// `enqueue_entity`, `update_load_avg`): `util_est_enqueue` first, so
    /// every hook call below sees the waking task's estimate; then the
    /// IOWAIT hook call; then `update_load_avg(UPDATE_TG | DO_ATTACH)`:
    /// the task's own signal is aged (not yet on the runqueue), then the
    /// runqueue's; a new or migrated task is attached (the hook is called
    /// from `attach_entity_load_avg`), otherwise the hook is called if the
    /// runqueue's signal decayed (`cfs_rq_util_change`), which is the case
    /// for nearly every wakeup after a millisecond or more of idle.
    pub(crate) fn enqueue_task(&mut self, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        if self.sched_ext {
            self.enqueue_task_ext(cpu, t, kind);
        } else {
            self.enqueue_task_fair(cpu, t, kind);
        }
        // enqueue_task_fair() ends with update_overutilized_status() for
        // all but a new task (v5.0 2802bf3cd936).
        if self.eas.is_some() && kind != EnqueueKind::New && self.tasks[t].class == Class::Fair {
            self.update_overutilized_status(cpu);
        }
    }

    /// enqueue_task() with RT/DL tasks or task groups about.
    #[cold]
    #[inline(never)]
    fn enqueue_task_ext(&mut self, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        if self.tasks[t].class != Class::Fair {
            self.enqueue_task_rt_dl(cpu, t);
            return;
        }
        match self.tasks[t].group {
            Some(g) => self.enqueue_task_grouped(cpu, t, g as usize, kind),
            None => self.enqueue_task_fair(cpu, t, kind),
        }
    }

    /// enqueue_task_fair() proper.
    #[inline]
    fn enqueue_task_fair(&mut self, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        self.update_rq_clock(cpu);
        if self.eevdf {
            // enqueue_entity() charges the current task first: V counts it.
            self.update_curr(cpu);
        }
        if self.util_est {
            let rq = &mut self.rqs[cpu];
            self.util_est_form.enqueue(&mut rq.cfs, &self.tasks[t].avg);
            self.trace_util_est_cfs(cpu);
        }
        if self.tasks[t].in_iowait {
            self.tasks[t].in_iowait = false;
            self.cpufreq_update_util(cpu, SCHED_CPUFREQ_IOWAIT);
        }
        let attaching = self.tasks[t].needs_attach;
        if !attaching {
            // __update_load_avg_se with se->on_rq still 0.
            self.update_task_avg(cpu, t, false, false);
            self.trace_pelt_se(cpu, t);
        }
        let decayed = self.update_cfs_rq(cpu);
        if attaching {
            let divider = self.pelt.divider;
            let tk = &mut self.tasks[t];
            pelt::attach_entity_div(&mut self.rqs[cpu].cfs, &mut tk.avg, tk.weight, divider);
            tk.needs_attach = false;
        }
        if attaching || decayed {
            self.trace_pelt_cfs(cpu);
        }
        if attaching {
            // attach_entity_load_avg: SCHED_CPUFREQ_MIGRATION before v5.6
            // (a4f9a0e51bbf), no flag after.
            let flags = if self.migration_flag { SCHED_CPUFREQ_MIGRATION } else { 0 };
            self.cpufreq_update_util(cpu, flags);
        } else if decayed {
            self.cpufreq_update_util(cpu, 0);
        }
        if self.eevdf {
            self.place_entity_eevdf(cpu, t, kind == EnqueueKind::New);
        } else {
            self.place_entity(cpu, t, kind);
        }
        self.queue_fair(cpu, t);
        let rq = &mut self.rqs[cpu];
        let tk = &mut self.tasks[t];
        tk.state = TaskState::Runnable;
        tk.cpu = cpu;
        rq.nr_running += 1;
        rq.cfs_nr_running += 1;
        rq.load_weight += tk.weight;
        self.idle_mask.clear(cpu);
        if rq.nr_running > 1 {
            self.overloaded.set(cpu);
            self.set_rd_overload();
        }
    }

    /// Put fair task `t` into `cpu`'s tree (__enqueue_entity), counting it
    /// in EEVDF's sums.
    #[inline]
    pub(crate) fn queue_fair(&mut self, cpu: CpuId, t: TaskId) {
        let (v, w) = (self.tasks[t].vruntime, self.tasks[t].weight);
        let rq = &mut self.rqs[cpu];
        rq.tree.insert((v, t));
        rq.avg_vsum += i128::from(v) * i128::from(w);
        rq.avg_load += w;
    }

    /// Take fair task `t` out of `cpu`'s tree (__dequeue_entity).
    #[inline]
    pub(crate) fn unqueue_fair(&mut self, cpu: CpuId, t: TaskId) {
        let (v, w) = (self.tasks[t].vruntime, self.tasks[t].weight);
        let rq = &mut self.rqs[cpu];
        rq.tree.remove(&(v, t));
        rq.avg_vsum -= i128::from(v) * i128::from(w);
        rq.avg_load -= w;
    }

    /// place_entity() before EEVDF (v6.5): where a waking, new or migrating
    /// task's vruntime goes.
    // Always inlined: called from the group path too, it was no longer
    // inlined in enqueue_task_fair (0.3 % more instructions, callgrind on
    // `bench_mix 1`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn place_entity(&mut self, cpu: CpuId, t: TaskId, kind: EnqueueKind) {
        let rq = &self.rqs[cpu];
        let min_v = rq.min_vruntime;
        let v = match kind {
            EnqueueKind::New => min_v + self.sched_vslice(cpu, t),
            EnqueueKind::Wakeup => {
                let floor = min_v.saturating_sub(self.tun.sched_latency_ns / 2);
                self.tasks[t].vruntime.max(floor)
            }
            // Migrations arrive already renormalised (vruntime relative to
            // the old queue's min_vruntime, made absolute here).
            EnqueueKind::Migrate => self.tasks[t].vruntime + min_v,
        };
        self.tasks[t].vruntime = v;
    }

    /// sched_slice() (kernel/sched/fair.c, v6.5): the period, sched_latency
    /// or min_granularity per task beyond sched_nr_latency, counting the
    /// task if it is not queued, cut by the task's part of the runqueue's
    /// weight (its own weight added only if it is not queued); from v5.13
    /// (BASE_SLICE) never below min_granularity.
    fn sched_slice(&self, cpu: CpuId, t: TaskId) -> u64 {
        let rq = &self.rqs[cpu];
        let tk = &self.tasks[t];
        let queued = matches!(tk.state, TaskState::Runnable | TaskState::Running);
        let nr = u64::from(rq.cfs_nr_running) + u64::from(!queued);
        let period = if nr > self.tun.nr_latency {
            nr * self.tun.min_granularity_ns
        } else {
            self.tun.sched_latency_ns
        };
        let load = rq.load_weight + if queued { 0 } else { tk.weight };
        let slice = period * tk.weight / load.max(1);
        if self.tun.base_slice {
            slice.max(self.tun.min_granularity_ns)
        } else {
            slice
        }
    }

    /// sched_vslice() (v6.5): the slice in virtual time, what START_DEBIT
    /// places a new task behind min_vruntime by (calc_delta_fair: scaled by
    /// NICE_0_LOAD over the task's weight; the same for a nice-0 task).
    pub(super) fn sched_vslice(&self, cpu: CpuId, t: TaskId) -> u64 {
        self.sched_slice(cpu, t) * NICE_0_LOAD / self.tasks[t].weight
    }

    /// dequeue_task_fair(): take task `t` off `cpu` (to sleep if `sleep`).
    ///
    /// v6.8 order (kernel/sched/fair.c `dequeue_task_fair`,
    /// `dequeue_entity`): `util_est_dequeue` first, so a hook call below no
    /// longer sees the task's estimate; then `update_load_avg(UPDATE_TG)`
    /// with the task still counted (the hook is called if the runqueue's
    /// signal decayed); then `util_est_update` from the fresh `util_avg`.
    pub(crate) fn dequeue_task(&mut self, cpu: CpuId, t: TaskId, sleep: bool) {
        if self.sched_ext {
            self.dequeue_task_ext(cpu, t, sleep, false);
        } else {
            self.dequeue_task_fair(cpu, t, sleep, false);
        }
    }

    /// A migration's dequeue (`DO_DETACH` in `dequeue_entity`): the task's
    /// signal leaves the runqueue, and `detach_entity_load_avg` calls the
    /// hook whether or not the runqueue's signal decayed.
    pub(crate) fn dequeue_task_migrating(&mut self, cpu: CpuId, t: TaskId) {
        if self.sched_ext {
            self.dequeue_task_ext(cpu, t, false, true);
        } else {
            self.dequeue_task_fair(cpu, t, false, true);
        }
    }

    /// dequeue_task() with RT/DL tasks or task groups about.
    #[cold]
    #[inline(never)]
    fn dequeue_task_ext(&mut self, cpu: CpuId, t: TaskId, sleep: bool, detach: bool) {
        if self.tasks[t].class != Class::Fair {
            self.dequeue_task_rt_dl(cpu, t, sleep);
            return;
        }
        match self.tasks[t].group {
            Some(g) => self.dequeue_task_grouped(cpu, t, g as usize, sleep, detach),
            None => self.dequeue_task_fair(cpu, t, sleep, detach),
        }
    }

    /// dequeue_task_fair() proper.
    #[inline]
    fn dequeue_task_fair(&mut self, cpu: CpuId, t: TaskId, sleep: bool, detach: bool) {
        self.update_rq_clock(cpu);
        let running = self.rqs[cpu].curr == Some(t);
        if running || self.eevdf {
            self.update_curr(cpu);
        }
        if self.eevdf {
            self.update_entity_lag(cpu, t);
        }
        if self.util_est {
            self.util_est_form.dequeue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
            self.trace_util_est_cfs(cpu);
        }
        self.update_task_avg(cpu, t, true, running);
        self.trace_pelt_se(cpu, t);
        let decayed = self.update_cfs_rq(cpu);
        if detach {
            let tk = &mut self.tasks[t];
            pelt::detach_entity(&mut self.rqs[cpu].cfs, &tk.avg, tk.weight);
            tk.needs_attach = true;
            self.trace_pelt_cfs(cpu);
            self.cpufreq_update_util(cpu, 0);
        } else if decayed {
            self.trace_pelt_cfs(cpu);
            self.cpufreq_update_util(cpu, 0);
        }
        let cap = self.rqs[cpu].capacity;
        if self.rqs[cpu].curr != Some(t) {
            self.unqueue_fair(cpu, t);
        }
        if self.util_est && sleep {
            self.util_est_form.update(&mut self.tasks[t].avg, true, cap);
            self.trace_util_est_se(cpu, t);
        }
        self.account_fair_dequeue(cpu, t);
        self.tasks[t].state = if sleep { TaskState::Blocked } else { TaskState::Runnable };
    }

    /// The runqueue's counts after fair task `t` left it
    /// (account_entity_dequeue, sub_nr_running).
    #[inline]
    pub(super) fn account_fair_dequeue(&mut self, cpu: CpuId, t: TaskId) {
        let rq = &mut self.rqs[cpu];
        rq.nr_running -= 1;
        rq.cfs_nr_running -= 1;
        rq.load_weight -= self.tasks[t].weight;
        if rq.nr_running == 0 {
            super::placement::set_cpu_idle(&self.plat, &mut self.idle_mask, &mut self.has_idle_cores, cpu);
        }
        if rq.nr_running < 2 {
            self.overloaded.clear(cpu);
        }
    }

    /// update_curr(): charge the running task for its time since exec_start.
    pub(crate) fn update_curr(&mut self, cpu: CpuId) {
        let rq = &self.rqs[cpu];
        let Some(t) = rq.curr else { return };
        if self.sched_ext {
            self.update_curr_ext(cpu, t);
            return;
        }
        self.charge_curr(t);
        if self.eevdf {
            self.update_deadline(cpu, t);
        }
        self.update_root_min_vruntime(cpu, t);
    }

    /// update_curr() with RT/DL tasks or task groups about.
    #[cold]
    #[inline(never)]
    fn update_curr_ext(&mut self, cpu: CpuId, t: TaskId) {
        if self.rqs[cpu].curr_class != Class::Fair {
            self.update_curr_rt_dl(cpu, t);
            return;
        }
        let delta = self.charge_curr(t);
        if self.groups.is_empty() {
            if self.eevdf {
                self.update_deadline(cpu, t);
            }
            self.update_root_min_vruntime(cpu, t);
        } else {
            self.update_curr_levels(cpu, t, delta);
        }
    }

    /// The running fair task's time since exec_start: its run time and its
    /// vruntime at its weight; returns the time, ns.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn charge_curr(&mut self, t: TaskId) -> u64 {
        let now = self.now;
        let tk = &mut self.tasks[t];
        let delta = now.saturating_sub(tk.exec_start_ns);
        tk.exec_start_ns = now;
        tk.sum_exec_ns += delta;
        // calc_delta_fair(): a nice-0 task's vruntime advances by the time
        // itself (the same value for any delta under 2^54 ns, 208 days,
        // without a 64-bit division).
        tk.vruntime += if tk.weight == NICE_0_LOAD { delta } else { delta * NICE_0_LOAD / tk.weight };
        delta
    }

    /// update_min_vruntime() of the root runqueue, whose current is `t`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn update_root_min_vruntime(&mut self, cpu: CpuId, t: TaskId) {
        let v = self.tasks[t].vruntime;
        let rq = &mut self.rqs[cpu];
        let leftmost = rq.tree.first().map_or(v, |&(lv, _)| lv);
        rq.min_vruntime = rq.min_vruntime.max(v.min(leftmost));
    }

    // ---- the running task's work segment --------------------------------

    /// Cycles per ns a task with memory-bound share `mem` retires on `cpu`.
    fn cpu_speed(&mut self, cpu: CpuId, mem: f64) -> f64 {
        let ix = &self.speed_ix[cpu];
        let khz = self.domains[ix.domain].cur_khz;
        let busy_siblings = ix.siblings.iter().filter(|&&c| self.rqs[c].curr.is_some()).count();
        // The clock's part is worked out again only when the clock or the
        // share changed since this CPU's last segment (the same values).
        let memo = &mut self.rqs[cpu].speed_memo;
        if memo.0 != u64::from(khz) || memo.1 != mem.to_bits() {
            let f = f64::from(khz);
            let f_ref = f64::from(ix.base_khz);
            // time per reference cycle at f, in reference-cycle times:
            // mem + (1 − mem)·f_ref/f
            let per_cycle = mem + (1.0 - mem) * f_ref / f;
            let speed = f_ref / 1e6 / per_cycle;
            *memo = (u64::from(khz), mem.to_bits(), speed, speed * ix.work_per_cycle);
        }
        if busy_siblings > 0 {
            memo.2 * (ix.smt_throughput / (busy_siblings + 1) as f64) * ix.work_per_cycle
        } else {
            memo.3
        }
    }

    /// Start the running task's work segment on `cpu`.
    pub(crate) fn start_segment(&mut self, cpu: CpuId) {
        let Some(t) = self.rqs[cpu].curr else { return };
        if self.tasks[t].remaining_cycles <= 0.0 || self.rqs[cpu].mode != CpuMode::Active {
            return;
        }
        // The switch to a preempted task: its kernel work comes first.
        self.kpath_take(cpu, t);
        let speed = self.cpu_speed(cpu, self.tasks[t].mem);
        let done = self.now + segment_ns(self.tasks[t].remaining_cycles, speed);
        let rq = &mut self.rqs[cpu];
        rq.run_gen = rq.run_gen.wrapping_add(1);
        rq.seg_start_ns = self.now;
        rq.seg_speed = speed;
        rq.seg_active = true;
        rq.seg_done_ns = done;
        rq.run_event_ns = done;
        let gen = rq.run_gen;
        self.q.schedule(done, Event::RunDone { cpu: cpu as u32, gen });
    }

    /// Credit the running segment's progress so far.
    fn credit_segment(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu];
        let Some(t) = rq.curr else { return };
        let done = ns_f64(self.now - rq.seg_start_ns) * rq.seg_speed;
        rq.seg_start_ns = self.now;
        let tk = &mut self.tasks[t];
        let done = done.min(tk.remaining_cycles);
        tk.remaining_cycles -= done;
        self.retire_cycles(t, done);
    }

    /// Stop the running task's segment, crediting the work done so far.
    pub(crate) fn pause_segment(&mut self, cpu: CpuId) {
        if !self.rqs[cpu].seg_active {
            return;
        }
        self.credit_segment(cpu);
        let rq = &mut self.rqs[cpu];
        rq.seg_active = false;
        rq.run_gen = rq.run_gen.wrapping_add(1);
    }

    /// The running segment's speed changed (frequency, SMT sibling): credit
    /// the work so far and recompute when it ends. A queued completion
    /// event that comes no later than the new end is kept: when it fires
    /// early it is simply queued again for the real end (see
    /// `run_segment_done`), which saves an event per slowdown.
    pub(crate) fn retime_segment(&mut self, cpu: CpuId) {
        if !self.rqs[cpu].seg_active {
            return;
        }
        self.credit_segment(cpu);
        let Some(t) = self.rqs[cpu].curr else { return };
        let speed = self.cpu_speed(cpu, self.tasks[t].mem);
        let done = self.now + segment_ns(self.tasks[t].remaining_cycles, speed);
        let rq = &mut self.rqs[cpu];
        rq.seg_speed = speed;
        rq.seg_done_ns = done;
        if rq.run_event_ns > done {
            rq.run_gen = rq.run_gen.wrapping_add(1);
            rq.run_event_ns = done;
            let gen = rq.run_gen;
            self.q.schedule(done, Event::RunDone { cpu: cpu as u32, gen });
        }
    }

    /// Re-time the segments of `cpu`'s SMT siblings (their speed changed).
    pub(crate) fn retime_siblings(&mut self, cpu: CpuId) {
        for i in 0..self.plat.cpus[cpu].siblings.len() {
            let s = self.plat.cpus[cpu].siblings[i];
            self.retime_segment(s);
        }
    }

    /// The running task on `cpu` reached the end of its segment, or a
    /// completion event kept across a slowdown fired early (returns false
    /// then, after queueing it again for the real end).
    pub(crate) fn run_segment_done(&mut self, cpu: CpuId) -> bool {
        let rq = &mut self.rqs[cpu];
        if self.now < rq.seg_done_ns {
            rq.run_event_ns = rq.seg_done_ns;
            let gen = rq.run_gen;
            self.q.schedule(rq.seg_done_ns, Event::RunDone { cpu: cpu as u32, gen });
            return false;
        }
        rq.seg_active = false;
        rq.run_event_ns = Time::MAX;
        let Some(t) = rq.curr else { return true };
        let left = self.tasks[t].remaining_cycles;
        self.retire_cycles(t, left);
        self.tasks[t].remaining_cycles = 0.0;
        self.continue_task(cpu, t);
        true
    }

    // ---- schedule ------------------------------------------------------

    /// __schedule(): pick the next task on `cpu` and switch to it; when the
    /// queue is empty, try to pull work, then go idle.
    pub(crate) fn schedule(&mut self, cpu: CpuId) {
        if self.sched_ext {
            self.schedule_impl::<true>(cpu);
            self.rt_queue_push_tasks(cpu);
        } else {
            self.schedule_impl::<false>(cpu);
        }
    }

    /// [`Self::schedule`]; `EXT`: RT/DL tasks or task groups are about
    /// (without them the class checks compile away).
    fn schedule_impl<const EXT: bool>(&mut self, cpu: CpuId) {
        loop {
            self.update_rq_clock(cpu);
            let prev = self.rqs[cpu].curr;
            // A fair prev preempted while runnable: EEVDF's pick treats it as
            // the runqueue's current (RUN_TO_PARITY).
            let mut prev_queued = None;
            if let Some(p) = prev {
                self.update_curr(cpu);
                self.pause_segment(cpu);
                if EXT && self.tasks[p].class != Class::Fair {
                    if self.tasks[p].state == TaskState::Running {
                        self.put_prev_task_rt_dl(cpu, p);
                    }
                } else if EXT && self.fair_groups() {
                    self.put_prev_task_fair_grouped(cpu, p);
                } else if self.tasks[p].state == TaskState::Running {
                    // Preempted: back into the tree (put_prev_entity).
                    self.update_load_avg(cpu, Some(p));
                    self.tasks[p].state = TaskState::Runnable;
                    self.queue_fair(cpu, p);
                    prev_queued = Some(p);
                }
            }
            // pick_next_task(): the deadline and RT classes first.
            let mut next = if EXT { self.pick_next_task_rt_dl(cpu) } else { None };
            if next.is_none() {
                if self.delay_dequeue {
                    // pick_next_entity() dequeues a delayed task it picks (v6.12).
                    self.finish_delayed_picks(cpu, prev_queued);
                }
                if self.rqs[cpu].tree.is_empty() {
                    self.newidle_balance(cpu);
                    if prev.is_some() {
                        // rq->idle_stamp (kept only if nothing was
                        // pulled), and from v4.17 nohz_newidle_balance().
                        let idle = self.rqs[cpu].nr_running == 0;
                        self.rqs[cpu].idle_stamp = idle.then_some(self.now);
                        if idle && self.nohz_blocked {
                            self.nohz_newidle_balance(cpu);
                        }
                    }
                    if let (true, Some(p)) = (EXT && self.fair_groups(), prev) {
                        // A task pulled into a group of prev's found its
                        // entities still prev's current (cfs_rq->curr, which
                        // the kernel's pick considers): into the trees.
                        if self.tasks[p].class == Class::Fair {
                            self.put_prev_task_fair_grouped(cpu, p);
                        }
                    }
                }
                // newidle_balance may have pulled an RT task.
                if EXT {
                    next = self.pick_next_task_rt_dl(cpu);
                }
            }
            if next.is_none() && EXT && self.fair_groups() {
                next = self.pick_next_task_fair_grouped(cpu);
            } else if next.is_none() {
                next = if self.eevdf {
                    self.pick_eevdf_from(cpu, prev_queued)
                } else {
                    self.rqs[cpu].tree.first().map(|&(_, t)| t)
                };
                if let Some(n) = next {
                    self.unqueue_fair(cpu, n);
                    if self.eevdf && next != prev {
                        self.set_next_entity_eevdf(n);
                    }
                }
            }
            if EXT {
                self.put_prev_group_se_unless_same(cpu, prev, next);
            }
            // clear_tsk_need_resched() after the pick.
            self.rqs[cpu].resched = false;
            if prev != next {
                self.context_switch_impl::<EXT>(cpu, prev, next);
                if prev.is_some() && next.is_some() {
                    // A switch between tasks (machine/kpath.rs); one from
                    // or to the idle task is the idle cycle's.
                    let c = self.kpath.switch_cycles;
                    self.kpath_owe(cpu, c);
                }
            } else if let Some(n) = next {
                self.tasks[n].state = TaskState::Running;
                self.tasks[n].exec_start_ns = self.now;
            }
            let Some(n) = next else {
                self.go_idle(cpu);
                return;
            };
            if self.tasks[n].remaining_cycles > 0.0 {
                self.start_segment(cpu);
                return;
            }
            // Zero-time ops until the task computes, blocks or exits.
            if self.continue_task_inline(cpu, n) {
                return;
            }
        }
    }

    pub(crate) fn context_switch(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        if self.sched_ext {
            self.context_switch_impl::<true>(cpu, prev, next);
        } else {
            self.context_switch_impl::<false>(cpu, prev, next);
        }
    }

    /// [`Self::context_switch`]; `EXT` as in [`Self::schedule_impl`].
    fn context_switch_impl<const EXT: bool>(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        if let Some(t) = self.trace.as_mut() {
            let p = prev.map(|p| &self.tasks[p]);
            let n = next.map(|n| &self.tasks[n]);
            t.sched_switch(self.now, cpu, p.map(|p| (&*p.comm, p.pid, p.prio(), p.state)), n.map(|n| (&*n.comm, n.pid, n.prio())));
        }
        let was_busy = prev.is_some();
        let rq = &mut self.rqs[cpu];
        if was_busy {
            rq.busy_ns += self.now - rq.busy_since_ns;
        }
        rq.busy_since_ns = self.now;
        // prev is put: no runqueue has a current (cfs_rq->curr = NULL in
        // put_prev_entity) until next's set_next_entity() below.
        let next_group = if EXT {
            // The RT and DL signals up to the switch (update_rt_rq_load_avg
            // in put_prev_task_rt, update_dl_rq_load_avg in put_prev_task_dl).
            self.update_rt_dl_avg(cpu);
            self.rqs[cpu].curr_class = next.map_or(Class::Fair, |n| self.tasks[n].class);
            let prev_group = prev.and_then(|t| self.tasks[t].group);
            self.switch_group_curr(cpu, prev_group, None);
            next.and_then(|t| self.tasks[t].group)
        } else {
            None
        };
        let rq = &mut self.rqs[cpu];
        rq.cfs_curr = false;
        rq.curr = next;
        if let Some(n) = next {
            let now = self.now;
            let tk = &mut self.tasks[n];
            tk.state = TaskState::Running;
            tk.exec_start_ns = now;
            tk.prev_sum_exec_ns = tk.sum_exec_ns;
            tk.cpu = cpu;
            if tk.wake_pending {
                tk.wake_pending = false;
                self.record.wakeup_latency.record(now - tk.wake_ns);
            }
            // set_next_entity() (kernel/sched/fair.c; the same in v4.14,
            // v5.2 and v6.8): update_load_avg(UPDATE_TG) of the picked
            // entity, on the runqueue but not yet its current, and of its
            // runqueue with no current; `cfs_rq->curr = se` only after. The
            // time since the enqueue or preemption is runnable, not
            // running, for both: a CPU's idle exit is not charged as
            // running time.
            if EXT && next_group.is_some() {
                self.set_next_member(cpu, prev, n);
            } else {
                self.update_load_avg_as(cpu, Some(n), false);
            }
            let fair = !EXT || self.tasks[n].class == Class::Fair;
            self.rqs[cpu].cfs_curr = fair;
            if EXT {
                self.switch_group_curr(cpu, None, next_group);
            }
        }
        if was_busy != next.is_some() {
            // A sibling's speed depends on whether this thread runs.
            self.retime_siblings(cpu);
            self.refresh_core_power(self.plat.cpus[cpu].core);
        }
    }

    /// check_preempt_wakeup(): should woken task `t` preempt `cpu`'s current?
    pub(crate) fn check_preempt_wakeup(&mut self, cpu: CpuId, t: TaskId) {
        let Some(curr) = self.rqs[cpu].curr else { return };
        if self.rqs[cpu].mode != CpuMode::Active {
            return;
        }
        if self.sched_ext && (self.tasks[t].class != Class::Fair || self.rqs[cpu].curr_class != Class::Fair) {
            // wakeup_preempt() across classes, or within RT or DL; then
            // the class's task_woken (ttwu_do_activate, wake_up_new_task).
            if self.rt_dl_preempts(cpu, t, curr) {
                self.schedule(cpu);
            } else if self.tasks[t].class == Class::Rt {
                self.task_woken_rt(cpu, t);
            }
            return;
        }
        // v6.5 check_preempt_wakeup(): "Idle tasks are by definition
        // preempted by non-idle tasks", and a SCHED_IDLE task preempts none.
        match (self.tasks[curr].idle_policy, self.tasks[t].idle_policy) {
            (true, false) => return self.schedule(cpu),
            (_, true) => return,
            (false, false) => {}
        }
        if self.fair_groups() {
            self.check_preempt_wakeup_grouped(cpu, curr, t);
            return;
        }
        if self.eevdf {
            self.check_preempt_wakeup_eevdf(cpu, t);
            return;
        }
        self.update_curr(cpu);
        let gran = self.tun.wakeup_granularity_ns * NICE_0_LOAD / self.tasks[t].weight;
        if self.tasks[curr].vruntime > self.tasks[t].vruntime + gran {
            self.schedule(cpu);
        }
    }

    // ---- the tick -------------------------------------------------------

    /// Arm the tick at the next tick boundary if it is not armed. A tick
    /// event already queued for that boundary (left by a cancel) is reused.
    pub(crate) fn arm_tick(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu];
        if rq.tick_armed {
            return;
        }
        rq.tick_armed = true;
        let tick = self.tun.tick_ns;
        let next = (self.now / tick + 1) * tick;
        if rq.tick_queued_ns == next {
            return;
        }
        rq.tick_gen = rq.tick_gen.wrapping_add(1);
        rq.tick_queued_ns = next;
        self.q.schedule(next, Event::Tick { cpu: cpu as u32, gen: rq.tick_gen });
    }

    pub(crate) fn cancel_tick(&mut self, cpu: CpuId) {
        self.rqs[cpu].tick_armed = false;
    }

    /// scheduler_tick(): account the running task, update PELT (which may
    /// call cpufreq), preempt on slice expiry, balance.
    pub(crate) fn scheduler_tick(&mut self, cpu: CpuId) -> bool {
        let rq = &mut self.rqs[cpu];
        rq.tick_queued_ns = 0;
        if !rq.tick_armed {
            return false;
        }
        rq.tick_armed = false;
        match self.rqs[cpu].mode {
            CpuMode::Idle { .. } if self.rqs[cpu].hindsight && !self.rcu_needs_cpu(cpu) => {
                // The idle period outlasts the tick: the oracle stops it.
                self.stop_tick_in_hindsight(cpu);
                return true;
            }
            CpuMode::Idle { .. } => {
                // The tick was kept across idle: it wakes the CPU, whose
                // rebalance_domains(CPU_IDLE) (placement.rs) may reach the
                // top domain and pull a task, which the exit then runs. Its scheduler_tick() (the frequency
                // sample, the blocked-load decay) runs once the CPU is back
                // in C0 (idle_exit_done).
                if self.eas.is_some() {
                    self.rebalance_top(cpu, false);
                }
                // trigger_load_balance(): the softirq once rq->next_balance
                // has come.
                if self.next_balance_due(cpu) {
                    self.rebalance_domains(cpu, CpuIdleType::Idle);
                }
                // The next tick first: an exit with no latency re-enters
                // idle at once, where the governor may stop it.
                self.arm_tick(cpu);
                self.idle_wakeup(cpu, true);
                return true;
            }
            CpuMode::Exiting { .. } => {
                // The interrupt waits for the exit; of its scheduler_tick()
                // only the frequency sample is modelled (v5.7
                // kernel/sched/core.c scheduler_tick() takes it first).
                self.arch_scale_freq_tick(cpu);
                self.arm_tick(cpu);
                return true;
            }
            CpuMode::Active => {}
        }
        self.arm_tick(cpu);
        // v5.7 scheduler_tick(): arch_scale_freq_tick() before
        // update_rq_clock(), so the tick's PELT update accounts the last
        // period at the new sample.
        self.arch_scale_freq_tick(cpu);
        self.update_rq_clock(cpu);
        if self.rt_dl_used {
            self.update_rt_dl_avg(cpu);
        }
        let Some(curr) = self.rqs[cpu].curr else {
            self.update_load_avg(cpu, None);
            return true;
        };
        self.update_curr(cpu);
        match if self.sched_ext { self.tasks[curr].group } else { None } {
            Some(g) => self.entity_tick_grouped(cpu, curr, g as usize),
            None => self.update_load_avg(cpu, Some(curr)),
        }
        if self.rqs[cpu].curr != Some(curr) {
            return true;
        }
        if self.rqs[cpu].curr_class == Class::Fair {
            // task_tick_fair(): update_overutilized_status() (v5.0).
            if self.eas.is_some() {
                self.update_overutilized_status(cpu);
            }
            if self.fair_groups() {
                self.task_tick_fair_grouped(cpu, curr);
            } else if self.eevdf {
                // EEVDF has no slice check at the tick: update_curr() above
                // asked for the reschedule if the request was used up.
                if self.rqs[cpu].resched {
                    self.schedule(cpu);
                }
            } else {
                self.check_preempt_tick(cpu, curr);
            }
        } else {
            // task_tick_rt() / task_tick_dl().
            self.task_tick_rt_dl(cpu, curr);
        }
        if self.now - self.rqs[cpu].last_balance_ns >= self.tun.balance_interval_ns {
            self.rqs[cpu].last_balance_ns = self.now;
            if self.sched_ext && !self.groups.is_empty() {
                // run_rebalance_domains(): update_blocked_averages() first.
                self.update_blocked_groups(cpu);
            }
            self.periodic_balance(cpu);
        }
        // trigger_load_balance() → nohz_balancer_kick(): the stats kick
        // for the idle CPUs' blocked load and the balance kick for the
        // idle CPUs with their tick stopped (machine/nohz.rs).
        if self.rqs[cpu].curr.is_some() {
            self.nohz_balancer_kick(cpu);
        }
        true
    }

    /// check_preempt_tick(): the running fair task used its slice.
    fn check_preempt_tick(&mut self, cpu: CpuId, curr: TaskId) {
        let tk = &self.tasks[curr];
        let ran = tk.sum_exec_ns - tk.prev_sum_exec_ns;
        let ideal = self.sched_slice(cpu, curr);
        let mut resched = ran > ideal;
        if !resched && ran >= self.tun.min_granularity_ns {
            if let Some(&(lv, _)) = self.rqs[cpu].tree.first() {
                resched = tk.vruntime > lv && tk.vruntime - lv > ideal;
            }
        }
        if resched && !self.rqs[cpu].tree.is_empty() {
            self.schedule(cpu);
        }
    }
}

/// Whole ns to retire `cycles` at `speed` cycles per ns: the quotient
/// rounded up, at least 1. The same as `f64::ceil`, without its libm call
/// (x86-64's baseline has no rounding instruction).
#[inline]
fn segment_ns(cycles: f64, speed: f64) -> u64 {
    let x = cycles / speed;
    // Below 2^63 ns (every segment: 292 years) through i64, whose
    // conversions are single instructions on x86-64: the same integers.
    if (0.0..9_223_372_036_854_775_808.0).contains(&x) {
        let n = x as i64;
        let n = if (n as f64) < x { n + 1 } else { n };
        return (n as u64).max(1);
    }
    let n = x as u64;
    let n = if (n as f64) < x { n.saturating_add(1) } else { n };
    n.max(1)
}

#[cfg(test)]
mod segment_ns_tests {
    use super::segment_ns;

    #[test]
    fn rounds_up_like_ceil() {
        for &(c, s) in &[(10.0_f64, 3.0_f64), (9.0, 3.0), (0.0, 1.0), (1e-9, 2.0), (2.5e12, 2.2), (123_456.789, 0.001), (9.2e18, 1.0), (9.3e18, 1.0), (1e30, 1.0), (f64::NAN, 1.0)] {
            let want = (c / s).ceil().max(1.0) as u64;
            assert_eq!(segment_ns(c, s), want, "{c} / {s}");
        }
    }
}

//! EEVDF, the fair class's pick from v6.6 on (Earliest Eligible Virtual
//! Deadline First): the rules, acting on the flat fair runqueue.
//!
//! Models: Linux v6.6 kernel/sched/fair.c (147f3efaa241 "sched/fair:
//! Implement an EEVDF-like scheduling policy", 86bfbb7ce4f6 "sched/fair: Add
//! lag based placement", 63304558ba5d "sched/eevdf: Curb wakeup-preemption",
//! e8f331bcc270 "sched/smp: Use lag to simplify cross-runqueue placement"),
//! unchanged in what it decides through v6.12 and v6.18 for tasks that keep
//! the base slice. Read beside v6.12's fair.c.
//!
//! The idea. Every runnable task is owed service at its weight's share; its
//! *lag* is what it is owed, `w_i × (V − v_i)`, where `v_i` is its vruntime
//! and `V` the weighted average of the queued tasks' vruntimes
//! (`avg_vruntime`, the current task included). A task with lag ≥ 0 is
//! *eligible*. Each task asks for a request of `base_slice` (the old
//! `sched_min_granularity`, 0.75 ms × (1 + log2 CPUs)); its *virtual
//! deadline* is its vruntime when the request began plus the request in
//! virtual time (`slice × NICE_0_LOAD / w`). The class picks, among the
//! eligible tasks, the one with the earliest deadline.
//!
//! 1. **Time** (`update_curr` → `update_deadline`): the running task's
//!    vruntime advances at its weight; once it reaches its deadline it gets
//!    the next request (`deadline = vruntime + vslice`) and, with another
//!    task queued, the CPU reschedules. There is no `sched_slice()` tick
//!    check any more: the deadline is the slice.
//! 2. **Leaving** (`dequeue_entity` → `update_entity_lag`): the lag it
//!    leaves with, `V − v`, clamped to ± the virtual time of max(2 slices,
//!    a tick), is kept in `vlag`, whether it sleeps or migrates.
//! 3. **Joining** (`place_entity`): it is placed at `V − lag`, the lag first
//!    inflated by `(W + w) / W` so that it still has that lag once its own
//!    weight has moved `V` (W: the weights already queued, the current
//!    task's included); on an empty runqueue at `V` itself. Its deadline is
//!    a full virtual slice on, half a slice for a new task
//!    (PLACE_DEADLINE_INITIAL: the others are on average halfway through
//!    theirs). Migration needs no renormalisation: the lag carries over.
//! 4. **Pick** (`pick_eevdf`): the eligible task with the earliest
//!    deadline, the current one included while it is on the runqueue and
//!    eligible; with RUN_TO_PARITY the current task is kept while it is
//!    eligible and still on the deadline it was picked with (its deadline
//!    is stashed in `vlag` at the pick, as the kernel does).
//! 5. **Wakeup** (`check_preempt_wakeup`, v6.6; `check_preempt_wakeup_fair`
//!    later): after charging the current task, the woken task preempts
//!    exactly when the pick would choose it.
//! 6. **Yield** (`yield_task_fair`): the yielder's deadline moves on by a
//!    virtual slice.
//!
//! Arithmetic: `avg_vruntime` is kept as Σ v·w and Σ w over the queued
//! tasks (not the current one) in 128 bits, so V = ⌊Σ v·w / Σ w⌋ exactly as
//! the kernel's key-relative form (Σ (v − min_vruntime)·w, rounded towards
//! −∞) gives it, and eligibility compares `Σ v·w ≥ v × Σ w` without a
//! division, as `vruntime_eligible` does. Weights are the nice weights
//! (`scale_load_down`). Among eligible tasks with equal deadlines the one
//! with the smaller vruntime wins (the kernel's tree breaks such ties by
//! insertion order, which govlab does not keep).
//!
//! 7. **Custom slices** (v6.12, 857b158dc5e8): a fair task's
//!    `sched_attr.sched_runtime` (rt-app's `dl-runtime` on SCHED_OTHER),
//!    clamped to 0.1-100 ms, is its request instead of base_slice: a
//!    shorter request, an earlier deadline. With PREEMPT_SHORT
//!    (85e511df3cec) a waking task with a shorter slice is judged without
//!    RUN_TO_PARITY's protection of the current task.
//!
//! 8. **Delayed dequeue** (v6.12, 152e11f6df29 "sched/fair: Implement
//!    delayed dequeue", 54a58a787791 DELAY_ZERO, 781773e3b680
//!    ENQUEUE_DELAYED, fc1892becd56 and 2e05f6c71d36 for PELT, 729288bc6856
//!    for util_est): a task that blocks while not eligible (lag < 0) is not
//!    dequeued. It stays in the tree, in V, in the runqueue's weight and
//!    `nr_running`, competing with its negative lag while the others run
//!    and V moves past it. When the pick chooses it (so it is eligible,
//!    lag ≥ 0) it is dequeued for good and its lag cut to 0 (DELAY_ZERO);
//!    woken before that, it is put back in place where it is, on the same
//!    CPU (`ttwu_runnable`: no select_task_rq), its lag again cut to 0 if
//!    positive. Its util_est leaves at the sleep and returns at that
//!    wakeup; the wakeup makes no IOWAIT hook call (`enqueue_task_fair`
//!    returns before it), and no `update_overutilized_status`.
//!
//! Left out (docs/kernels.md): delayed tasks in the load balancer (the
//! kernel's may move one; govlab's leaves it); PREEMPT_SHORT's later half
//! in update_curr (`did_preempt_short`, a reschedule when a protected
//! current turned ineligible); NEXT_BUDDY (off
//! by default); and EEVDF in task groups: a run with task groups keeps the
//! CFS rules of fair_group.rs on every version.

use super::Engine;
use crate::platform::CpuId;
use crate::sched::pelt::NICE_0_LOAD;
use crate::sched::{TaskId, TaskState};

/// Where every runqueue's min_vruntime starts under EEVDF, ns of virtual
/// time (assumed: any base far above the largest placement lag). A task
/// with positive lag is placed behind V, which near the start of a run
/// would go below zero; the kernel's u64 vruntime wraps and compares by
/// signed differences, govlab's stays unsigned by starting high (the
/// kernel starts min_vruntime just below the wrap, `-(1LL << 20)`, for
/// the opposite reason: to exercise it). 2^40 ns is 1100 s; the largest lag
/// a placement can carry (an idle-priority task's 2 s, inflated) is far
/// below it.
pub(crate) const VRUNTIME_BASE: u64 = 1 << 40;

/// The bounds sched_setattr() puts on a fair task's requested slice, ns
/// (v6.12 `__setscheduler_params`: `clamp(sched_runtime, NSEC_PER_MSEC/10,
/// NSEC_PER_MSEC*100)`).
const SLICE_MIN_NS: u64 = 100_000;
const SLICE_MAX_NS: u64 = 100_000_000;

/// A requested slice (sched_attr.sched_runtime, ns, > 0) as the kernel
/// keeps it.
pub(crate) fn custom_slice(runtime_ns: u64) -> u64 {
    runtime_ns.clamp(SLICE_MIN_NS, SLICE_MAX_NS)
}

/// calc_delta_fair(): `delta` ns of service in virtual time at `weight`.
#[inline]
fn calc_delta_fair(delta: u64, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        delta
    } else {
        delta * NICE_0_LOAD / weight
    }
}

impl Engine {
    /// The running task when it is a fair task still on the runqueue
    /// (`cfs_rq->curr && curr->on_rq`).
    #[inline]
    fn eevdf_curr(&self, cpu: CpuId) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        rq.curr.filter(|&c| rq.cfs_curr && self.tasks[c].state == TaskState::Running)
    }

    /// Σ v·w and Σ w over the queued tasks and the current one.
    #[inline]
    fn eevdf_sums(&self, cpu: CpuId) -> (i128, u64) {
        let rq = &self.rqs[cpu];
        let (mut sum, mut load) = (rq.avg_vsum, rq.avg_load);
        if let Some(c) = self.eevdf_curr(cpu) {
            let tk = &self.tasks[c];
            sum += i128::from(tk.vruntime) * i128::from(tk.weight);
            load += tk.weight;
        }
        (sum, load)
    }

    /// avg_vruntime(): V, rounded down; min_vruntime on an empty runqueue.
    pub(crate) fn avg_vruntime(&self, cpu: CpuId) -> u64 {
        self.avg_vruntime_of(cpu, self.eevdf_sums(cpu))
    }

    /// [`Self::avg_vruntime`] from the runqueue's sums, already taken.
    #[inline]
    fn avg_vruntime_of(&self, cpu: CpuId, (sum, load): (i128, u64)) -> u64 {
        if load == 0 {
            return self.rqs[cpu].min_vruntime;
        }
        floor_div(sum, load) as u64
    }

    /// vruntime_eligible(): a task at vruntime `v` has lag ≥ 0.
    pub(crate) fn vruntime_eligible(&self, cpu: CpuId, v: u64) -> bool {
        let (sum, load) = self.eevdf_sums(cpu);
        sum >= i128::from(v) * i128::from(load)
    }

    /// A task's request, ns (se->slice): base_slice, or from v6.12 the
    /// slice it asked for (857b158dc5e8).
    #[inline]
    pub(crate) fn eevdf_slice(&self, t: TaskId) -> u64 {
        match self.tasks[t].custom_slice_ns {
            s if s > 0 && self.custom_slice => s,
            _ => self.tun.min_granularity_ns,
        }
    }

    /// A task's request in virtual time (`calc_delta_fair(se->slice)`).
    #[inline]
    pub(crate) fn eevdf_vslice(&self, t: TaskId) -> u64 {
        calc_delta_fair(self.eevdf_slice(t), self.tasks[t].weight)
    }

    /// update_entity_lag() → entity_lag(): the lag task `t`, still counted
    /// on `cpu`, leaves with, clamped to the virtual time of max(2 slices,
    /// a tick).
    pub(crate) fn update_entity_lag(&mut self, cpu: CpuId, t: TaskId) {
        let avg = self.avg_vruntime(cpu);
        let tk = &self.tasks[t];
        let limit = calc_delta_fair((2 * self.eevdf_slice(t)).max(self.tun.tick_ns), tk.weight) as i64;
        let lag = (avg as i64).wrapping_sub(tk.vruntime as i64);
        self.tasks[t].vlag = lag.clamp(-limit, limit);
    }

    /// place_entity() with PLACE_LAG and PLACE_DEADLINE_INITIAL (both on
    /// by default): task `t`, not yet queued on `cpu`, goes to V − its
    /// inflated lag, its deadline a virtual slice on (half for a new task).
    pub(crate) fn place_entity_eevdf(&mut self, cpu: CpuId, t: TaskId, initial: bool) {
        let sums = self.eevdf_sums(cpu);
        let avg = self.avg_vruntime_of(cpu, sums);
        let w = self.tasks[t].weight;
        let mut lag: i64 = 0;
        if self.rqs[cpu].cfs_nr_running > 0 {
            let load = sums.1.max(1);
            let vlag = self.tasks[t].vlag;
            lag = match vlag.checked_mul((load + w) as i64) {
                Some(p) => p / load as i64,
                None => (i128::from(vlag) * i128::from(load + w) / i128::from(load)) as i64,
            };
        }
        let mut vslice = self.eevdf_vslice(t);
        if initial {
            vslice /= 2;
        }
        let tk = &mut self.tasks[t];
        tk.vruntime = (avg as i64).wrapping_sub(lag) as u64;
        tk.deadline = tk.vruntime + vslice;
    }

    /// update_deadline() after the running task `t` was charged: at its
    /// deadline it gets the next request, and with another fair task queued
    /// the CPU is to reschedule (`resched_curr`, acted on at the tick and at
    /// a wakeup's preemption check, or by the `schedule()` that follows).
    #[inline]
    pub(crate) fn update_deadline(&mut self, cpu: CpuId, t: TaskId) {
        let tk = &self.tasks[t];
        if tk.vruntime < tk.deadline {
            return;
        }
        let vslice = self.eevdf_vslice(t);
        let tk = &mut self.tasks[t];
        tk.deadline = tk.vruntime + vslice;
        if self.rqs[cpu].cfs_nr_running > 1 {
            self.rqs[cpu].resched = true;
        }
    }

    /// pick_eevdf(): the eligible task with the earliest deadline among the
    /// queued ones and the runqueue's current one `curr` (running, or a
    /// preempted prev that `schedule()` put back into the tree first);
    /// RUN_TO_PARITY keeps `curr` on the deadline it was picked with while
    /// it is eligible.
    pub(crate) fn pick_eevdf_from(&self, cpu: CpuId, curr: Option<TaskId>) -> Option<TaskId> {
        self.pick_eevdf_protect(cpu, curr, true)
    }

    /// __pick_eevdf() (v6.12): [`Self::pick_eevdf_from`], with
    /// RUN_TO_PARITY's protection of `curr` only when `protect`.
    fn pick_eevdf_protect(&self, cpu: CpuId, curr: Option<TaskId>, protect: bool) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        if rq.cfs_nr_running == 1 {
            return curr.or_else(|| rq.tree.first().map(|&(_, t)| t));
        }
        let curr = curr.filter(|&c| self.vruntime_eligible(cpu, self.tasks[c].vruntime));
        if let Some(c) = curr.filter(|_| protect) {
            let tk = &self.tasks[c];
            if tk.vlag == tk.deadline as i64 {
                return Some(c);
            }
        }
        // The tree is in vruntime order, so the eligible tasks are a prefix.
        let (sum, load) = self.eevdf_sums(cpu);
        let mut best: Option<(u64, TaskId)> = None;
        for &(v, t) in rq.tree.iter() {
            if sum < i128::from(v) * i128::from(load) {
                break;
            }
            if Some(t) == curr {
                continue;
            }
            let d = self.tasks[t].deadline;
            if best.map_or(true, |(bd, _)| d < bd) {
                best = Some((d, t));
            }
        }
        match (best, curr) {
            (None, c) => c,
            (Some((bd, _)), Some(c)) if self.tasks[c].deadline < bd => Some(c),
            (Some((_, b)), _) => Some(b),
        }
    }

    /// The RUN_TO_PARITY stash of set_next_entity(): the deadline at the
    /// pick, in `vlag` (not read again until the task leaves).
    #[inline]
    pub(crate) fn set_next_entity_eevdf(&mut self, t: TaskId) {
        let tk = &mut self.tasks[t];
        tk.vlag = tk.deadline as i64;
    }

    /// The wakeup preemption of v6.6's check_preempt_wakeup(): the current
    /// task (already charged) is preempted when a reschedule is pending or
    /// the pick would choose the woken task `t`. From v6.12 (PREEMPT_SHORT,
    /// 85e511df3cec) a woken task with a shorter slice than the current
    /// one's is judged without RUN_TO_PARITY's protection of the current.
    pub(crate) fn check_preempt_wakeup_eevdf(&mut self, cpu: CpuId, t: TaskId) {
        self.update_curr(cpu);
        let curr = self.eevdf_curr(cpu);
        let preempt_short = self.custom_slice && curr.is_some_and(|c| self.eevdf_slice(t) < self.eevdf_slice(c));
        if self.rqs[cpu].resched || self.pick_eevdf_protect(cpu, curr, !preempt_short) == Some(t) {
            self.schedule(cpu);
        }
    }

    /// yield_task_fair(): the running task `t` gives up the rest of its
    /// request.
    pub(crate) fn yield_task_eevdf(&mut self, cpu: CpuId, t: TaskId) {
        self.update_curr(cpu);
        let vslice = self.eevdf_vslice(t);
        self.tasks[t].deadline += vslice;
    }
}

// ---- delayed dequeue (v6.12) ------------------------------------------------

impl Engine {
    /// dequeue_entity() with DEQUEUE_SLEEP under DELAY_DEQUEUE (v6.12
    /// kernel/sched/fair.c, 152e11f6df29 and fc1892becd56): the running
    /// fair task `t` blocks; if it is not eligible its dequeue is delayed
    /// and this returns true, with `t` asleep but still queued. As in
    /// `dequeue_task_fair` and `dequeue_entity`: the eligibility test after
    /// `update_curr`, with `t` still counted in V; `util_est_dequeue`
    /// before `update_load_avg` (whose hook call, if the runqueue's signal
    /// decayed, no longer sees the estimate); `util_est_update` for the
    /// sleep last.
    pub(crate) fn try_delay_dequeue(&mut self, cpu: CpuId, t: TaskId) -> bool {
        if self.rqs[cpu].curr != Some(t) || self.tasks[t].class != crate::sched::rt::Class::Fair {
            return false;
        }
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        if self.vruntime_eligible(cpu, self.tasks[t].vruntime) {
            return false;
        }
        if self.util_est {
            self.util_est_form.dequeue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
            self.trace_util_est_cfs(cpu);
        }
        self.update_load_avg(cpu, Some(t));
        if self.util_est {
            let cap = self.rqs[cpu].capacity;
            self.util_est_form.update(&mut self.tasks[t].avg, true, cap);
            self.trace_util_est_se(cpu, t);
        }
        // set_delayed(); put_prev_entity() will find it on_rq and put it
        // back in the tree: done here, as it stops being the current one.
        self.tasks[t].sched_delayed = true;
        self.tasks[t].state = TaskState::Blocked;
        self.rqs[cpu].nr_delayed += 1;
        self.queue_fair(cpu, t);
        true
    }

    /// pick_next_entity() (v6.12): while the pick would choose a delayed
    /// task, dequeue it for good (`dequeue_entities` with DEQUEUE_SLEEP |
    /// DEQUEUE_DELAYED) and pick again; `curr` as in
    /// [`Self::pick_eevdf_from`].
    pub(crate) fn finish_delayed_picks(&mut self, cpu: CpuId, curr: Option<TaskId>) {
        while self.rqs[cpu].nr_delayed > 0 {
            match self.pick_eevdf_from(cpu, curr) {
                Some(n) if self.tasks[n].sched_delayed => self.finish_delayed_dequeue(cpu, n),
                _ => return,
            }
        }
    }

    /// dequeue_entity() with DEQUEUE_DELAYED, then
    /// finish_delayed_dequeue_entity(): the delayed task `t` leaves with
    /// its lag, cut to 0 if positive (DELAY_ZERO, 54a58a787791).
    fn finish_delayed_dequeue(&mut self, cpu: CpuId, t: TaskId) {
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        self.update_entity_lag(cpu, t);
        if self.tasks[t].vlag > 0 {
            self.tasks[t].vlag = 0;
        }
        self.update_task_avg(cpu, t, true, false);
        if self.update_cfs_rq(cpu) {
            self.cpufreq_update_util(cpu, 0);
        }
        self.unqueue_fair(cpu, t);
        self.tasks[t].sched_delayed = false;
        self.rqs[cpu].nr_delayed -= 1;
        self.account_fair_dequeue(cpu, t);
    }

    /// ttwu_runnable() for a delayed task (v6.12 kernel/sched/core.c): it
    /// is still queued on its CPU, so it wakes there (no select_task_rq, no
    /// migration): `enqueue_task(ENQUEUE_DELAYED)`, then the wakeup
    /// preemption check.
    pub(crate) fn ttwu_runnable(&mut self, t: TaskId, waker_cpu: CpuId, irq: u8) {
        let cpu = self.tasks[t].cpu;
        self.tasks[t].wake_ns = self.now;
        self.tasks[t].wake_pending = true;
        if let Some(tr) = self.trace.as_mut() {
            let tk = &self.tasks[t];
            tr.sched_wakeup(self.now, waker_cpu, irq, &tk.comm, tk.pid, tk.prio(), cpu, false);
        }
        self.requeue_delayed_entity(cpu, t);
        if self.rqs[cpu].curr != Some(t) {
            self.kick_cpu(cpu, t);
        }
    }

    /// enqueue_task_fair() with ENQUEUE_DELAYED (v6.12): `util_est_enqueue`
    /// (729288bc6856), then requeue_delayed_entity(): with DELAY_ZERO a
    /// task that gained positive lag while delayed is placed again with
    /// lag 0 (the tree's count lowered meanwhile, as the kernel's
    /// `nr_running--`); `update_load_avg` (the hook if the signal decayed).
    /// `enqueue_task_fair` returns before the IOWAIT hook call and the
    /// enqueue proper.
    fn requeue_delayed_entity(&mut self, cpu: CpuId, t: TaskId) {
        self.update_rq_clock(cpu);
        if self.util_est {
            self.util_est_form.enqueue(&mut self.rqs[cpu].cfs, &self.tasks[t].avg);
            self.trace_util_est_cfs(cpu);
        }
        self.tasks[t].in_iowait = false;
        self.update_entity_lag(cpu, t);
        if self.tasks[t].vlag > 0 {
            self.unqueue_fair(cpu, t);
            self.rqs[cpu].cfs_nr_running -= 1;
            self.tasks[t].vlag = 0;
            self.place_entity_eevdf(cpu, t, false);
            self.rqs[cpu].cfs_nr_running += 1;
            self.queue_fair(cpu, t);
        }
        self.update_task_avg(cpu, t, true, false);
        if self.update_cfs_rq(cpu) {
            self.cpufreq_update_util(cpu, 0);
        }
        let tk = &mut self.tasks[t];
        tk.sched_delayed = false;
        tk.state = TaskState::Runnable;
        self.rqs[cpu].nr_delayed -= 1;
    }
}

/// `sum / load` rounded down. The sum almost always fits in 64 bits, and
/// then the quotient is the same without a 128-bit division.
#[inline]
fn floor_div(sum: i128, load: u64) -> i128 {
    match (i64::try_from(sum), i64::try_from(load)) {
        (Ok(s), Ok(l)) => i128::from(s.div_euclid(l)),
        _ => sum.div_euclid(i128::from(load)),
    }
}

#[cfg(test)]
mod tests {
    use super::floor_div;

    #[test]
    fn floor_div_rounds_down_in_both_widths() {
        for (sum, load) in [(7i128, 2u64), (-7, 2), (-8, 2), (0, 5), (i128::from(i64::MAX) + 5, 3), (-(1i128 << 80) - 1, 1024)] {
            assert_eq!(floor_div(sum, load), sum.div_euclid(i128::from(load)), "{sum} / {load}");
        }
        assert_eq!(floor_div(-7, 2), -4);
    }
}

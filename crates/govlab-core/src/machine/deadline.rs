//! The deadline scheduling class acting on the engine's runqueues.
//!
//! Models Linux v6.8 kernel/sched/deadline.c: a SCHED_DEADLINE task runs
//! ahead of RT and fair tasks, earliest absolute deadline first
//! (`pick_next_task_dl`); each instance gets `dl_runtime` of CPU time,
//! charged scaled by frequency and CPU capacity (`update_curr_dl`,
//! `dl_scaled_delta_exec`), by its absolute deadline. When the runtime is
//! used up the task is throttled until its next period, where the
//! replenishment timer (`start_dl_timer`, `dl_task_timer`,
//! `replenish_dl_entity`) adds a runtime and pushes the deadline one
//! period on. A waking task keeps its deadline and runtime unless the
//! deadline passed or the remaining runtime would overrun its bandwidth
//! (`update_dl_entity`, `dl_entity_overflow`), which starts a new instance.
//!
//! Bandwidth: `sched_setattr` admits a task only if the deadline tasks'
//! total runtime/period stays within the RT limit (950/1000 per CPU,
//! `sched_dl_overflow`; see machine/rt.rs `set_sched_attr`). A runqueue's
//! `running_bw` counts its contending tasks (`add_running_bw` at wakeup,
//! `task_non_contending` at sleep, which keeps the bandwidth until the
//! task's 0-lag time with the inactive timer, `inactive_task_timer`); both
//! changes call the cpufreq hook, and schedutil's floor is `cpu_bw_dl`
//! (machine/cpufreq.rs).
//!
//! Left out: the revised wakeup rule for constrained deadlines
//! (`update_dl_revised_wakeup`), GRUB reclaiming (SCHED_FLAG_RECLAIM),
//! deadline push/pull between CPUs (a waking task is placed by
//! `select_task_rq_rt_dl`), DL servers (v6.8 has none yet) and
//! priority inheritance.

use super::{Engine, Event};
use crate::platform::CpuId;
use crate::sched::{TaskId, TaskState};

impl Engine {
    /// enqueue_dl_entity() for a waking, new or migrating task.
    pub(crate) fn enqueue_dl_entity(&mut self, cpu: CpuId, t: TaskId) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        rq.dl_nr_running += 1;
        let d = &mut self.tasks[t].dl;
        let mut hook = false;
        if !d.contending {
            // task_contending() → add_running_bw().
            d.contending = true;
            rq.running_bw += d.dl_bw;
            hook = true;
        } else if d.inactive_timer {
            // The 0-lag timer was armed: the task still counts; cancel it.
            d.inactive_timer = false;
            d.timer_gen = d.timer_gen.wrapping_add(1);
        }
        if !d.throttled && (d.deadline <= now || dl_entity_overflow(d, now)) {
            // replenish_dl_new_period().
            d.deadline = now + d.dl_deadline;
            d.runtime = d.dl_runtime as i64;
        }
        if !d.throttled && d.runtime <= 0 {
            d.throttled = true;
            self.start_dl_timer(t);
        }
        let d = &self.tasks[t].dl;
        if !d.throttled {
            self.rqs[cpu].dl_queue.insert((d.deadline, t));
        }
        if hook {
            self.cpufreq_update_util(cpu, 0);
        }
    }

    /// dequeue_dl_entity(): off the queue; a sleeping task stops
    /// contending at its 0-lag time (task_non_contending), a migrating one
    /// takes its bandwidth with it.
    pub(crate) fn dequeue_dl_entity(&mut self, cpu: CpuId, t: TaskId, running: bool, sleep: bool) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        rq.dl_nr_running -= 1;
        let d = &mut self.tasks[t].dl;
        if !running && !d.throttled {
            rq.dl_queue.remove(&(d.deadline, t));
        }
        if !d.contending {
            return;
        }
        // 0-lag time: deadline − runtime × period / dl_runtime.
        let lag = if d.runtime > 0 {
            (d.runtime as u128 * u128::from(d.dl_period) / u128::from(d.dl_runtime.max(1))) as u64
        } else {
            0
        };
        let zerolag = d.deadline.saturating_sub(lag);
        if !sleep || zerolag <= now || d.throttled {
            // sub_running_bw() now.
            d.contending = false;
            rq.running_bw = rq.running_bw.saturating_sub(d.dl_bw);
            self.cpufreq_update_util(cpu, 0);
        } else {
            d.inactive_timer = true;
            d.timer_gen = d.timer_gen.wrapping_add(1);
            let gen = d.timer_gen;
            self.q.schedule(zerolag, Event::DlTimer { task: t as u32, gen });
        }
    }

    /// update_curr_dl(): charge `delta` ns, scaled by frequency and
    /// capacity (dl_scaled_delta_exec); throttle at runtime ≤ 0.
    pub(crate) fn update_curr_dl(&mut self, cpu: CpuId, t: TaskId, delta: u64) {
        let fs = self.freq_scale(cpu);
        let cap = self.rqs[cpu].capacity;
        let scaled = (((delta * fs) >> 10) * cap) >> 10;
        let d = &mut self.tasks[t].dl;
        d.runtime -= scaled as i64;
        if d.runtime <= 0 && !d.throttled {
            d.throttled = true;
            self.start_dl_timer(t);
        }
    }

    /// task_tick_dl(): reschedule a throttled task or one an earlier
    /// deadline waits behind.
    pub(crate) fn task_tick_dl(&mut self, cpu: CpuId, curr: TaskId) {
        let d = &self.tasks[curr].dl;
        let earlier = self.rqs[cpu].dl_queue.first().is_some_and(|&(dl, _)| dl < d.deadline);
        if d.throttled || earlier {
            self.schedule(cpu);
        }
    }

    /// start_dl_timer(): fire at the next period (deadline − dl_deadline +
    /// dl_period), now if that has passed.
    fn start_dl_timer(&mut self, t: TaskId) {
        let d = &mut self.tasks[t].dl;
        let at = (d.deadline + d.dl_period).saturating_sub(d.dl_deadline).max(self.now);
        d.inactive_timer = false;
        d.timer_gen = d.timer_gen.wrapping_add(1);
        let gen = d.timer_gen;
        self.q.schedule(at, Event::DlTimer { task: t as u32, gen });
    }

    /// dl_task_timer() (replenish a throttled task) or inactive_task_timer()
    /// (a sleeping task reached its 0-lag time). False if overtaken.
    pub(crate) fn dl_task_timer(&mut self, t: TaskId, gen: u32) -> bool {
        if self.tasks[t].dl.timer_gen != gen || self.tasks[t].class != crate::sched::rt::Class::Deadline {
            return false;
        }
        let now = self.now;
        let cpu = self.tasks[t].cpu;
        let state = self.tasks[t].state;
        let d = &mut self.tasks[t].dl;
        if d.inactive_timer {
            d.inactive_timer = false;
            if d.contending && matches!(state, TaskState::Blocked | TaskState::Dead) {
                d.contending = false;
                let bw = d.dl_bw;
                self.update_rq_clock(cpu);
                let rq = &mut self.rqs[cpu];
                rq.running_bw = rq.running_bw.saturating_sub(bw);
                self.cpufreq_update_util(cpu, 0);
            }
            return true;
        }
        if !d.throttled {
            return true;
        }
        // replenish_dl_entity().
        while d.runtime <= 0 {
            d.deadline += d.dl_period;
            d.runtime += d.dl_runtime as i64;
        }
        if d.deadline < now {
            d.deadline = now + d.dl_deadline;
            d.runtime = d.dl_runtime as i64;
        }
        d.throttled = false;
        let deadline = d.deadline;
        if state == TaskState::Runnable {
            self.update_rq_clock(cpu);
            self.rqs[cpu].dl_queue.insert((deadline, t));
            self.kick_cpu(cpu, t);
        }
        true
    }
}

/// dl_entity_overflow(): would the remaining runtime, run by the current
/// deadline, exceed the task's bandwidth from `now`? (DL_SCALE-shifted
/// products, as the kernel computes them.)
fn dl_entity_overflow(d: &super::rq::DlEntity, now: u64) -> bool {
    let runtime = d.runtime.max(0) as u64;
    let left = (d.dl_deadline >> 10) * (runtime >> 10);
    let right = (d.deadline.saturating_sub(now) >> 10) * (d.dl_runtime >> 10);
    right < left
}

impl Engine {
    /// migrate_task_rq_dl() for a sleeping task woken onto another CPU: a
    /// task still contending (before its 0-lag time) takes its bandwidth
    /// from `from`'s running_bw; the enqueue adds it on the new CPU.
    #[cold]
    #[inline(never)]
    pub(crate) fn migrate_sleeping_dl(&mut self, t: TaskId, from: CpuId) {
        if self.tasks[t].class != crate::sched::rt::Class::Deadline || !self.tasks[t].dl.contending {
            return;
        }
        let d = &mut self.tasks[t].dl;
        d.contending = false;
        if d.inactive_timer {
            d.inactive_timer = false;
            d.timer_gen = d.timer_gen.wrapping_add(1);
        }
        let bw = d.dl_bw;
        let rq = &mut self.rqs[from];
        rq.running_bw = rq.running_bw.saturating_sub(bw);
    }
}

//! The RT scheduling class acting on the engine's runqueues, and the parts
//! of kernel/sched/core.c that choose between classes.
//!
//! Models Linux v6.8 kernel/sched/rt.c: SCHED_FIFO and SCHED_RR tasks run
//! ahead of every fair task, highest `sched_priority` first, FIFO within a
//! priority (`enqueue_task_rt`, `pick_next_task_rt`); a preempted task keeps
//! its place at the head of its priority (`put_prev_task_rt`); SCHED_RR
//! tasks go to the tail of their priority after `RR_TIMESLICE` (100 ms) of
//! ticks when another task of that priority waits (`task_tick_rt`,
//! `requeue_task_rt`). A waking RT task preempts at once any lower class or
//! lower priority (`wakeup_preempt_rt`, the kernel's `check_preempt_curr_rt`).
//!
//! The RT throttle (`sched_rt_runtime_exceeded`, `sched_rt_period_timer`,
//! `do_sched_rt_period_timer`): RT time is charged per runqueue
//! (`update_curr_rt`); past `sched_rt_runtime_us` (950 ms) within a
//! `sched_rt_period_us` (1 s) the runqueue's RT tasks stop being picked
//! until the period timer gives the runtime back, so fair tasks keep the
//! rest. The check runs wherever the running RT task is charged (the tick
//! among others), as in the kernel. Before v5.10 RT_RUNTIME_SHARE was on by
//! default (2586af1ac187 turned it off): a runqueue past its runtime first
//! borrows unused runtime from the other CPUs (`balance_runtime`,
//! `do_balance_runtime`, v5.4), up to the whole period, and a runqueue with
//! the whole period is never throttled, so an RT hog keeps its CPU from the
//! fair tasks for good. What it borrowed stays borrowed (the kernel gives it
//! back only when a CPU goes offline, which govlab does not model).
//!
//! Placement (`select_task_rq_rt`, `find_lowest_rq` over cpupri): a waking
//! RT task stays on its previous CPU unless that CPU's current task is an
//! RT or DL task that is pinned or not of lower priority; then it goes to
//! the allowed CPU of lowest priority (idle or fair first) if that is below
//! its own, its previous CPU preferred, then one sharing its LLC.
//! Balancing: a CPU that schedules pulls a queued RT task of higher
//! priority than its own from another CPU (`pull_rt_task`); queued RT
//! tasks are pushed to such CPUs (`push_rt_tasks`) when an RT task woke
//! without preempting the current one (`task_woken_rt`) and after a CPU
//! switched to an RT task (`set_next_task_rt` → `rt_queue_push_tasks`), so
//! an RT task preempted by a higher one moves to an idle CPU at once.
//! Left out: the RT push IPI (`RT_PUSH_IPI`, which lets a CPU lowering its
//! priority ask overloaded CPUs to push: here such a CPU pulls), equal
//! priority rescheduling (`check_preempt_equal_prio`), RT group scheduling
//! (CONFIG_RT_GROUP_SCHED), priority inheritance.
//!
//! schedutil: `enqueue_top_rt_rq` calls the cpufreq hook, and
//! `effective_cpu_util` (kernel/sched/core.c in v6.8, kernel/sched/syscalls.c
//! from v6.11; machine/cpufreq.rs) asks for the top frequency while RT tasks are
//! runnable. rq->avg_rt (PELT of the time RT tasks ran,
//! `update_rt_rq_load_avg`, kernel/sched/pelt.c) is kept here too.

use super::rq::CpuMode;
use super::{Engine, Event};
use crate::platform::CpuId;
use crate::sched::pelt;
use crate::kernel::EraId;
use crate::sched::rt::{self, Class};
use crate::sched::{TaskId, TaskState};
use crate::workload::{SchedAttr, SchedPolicy};

/// sysctl_sched_util_clamp_min_rt_default (kernel/sched/core.c, v6.8):
/// RT tasks ask for the full capacity unless they set util_min.
const UCLAMP_MIN_RT_DEFAULT: u32 = 1024;

impl Engine {
    /// sched_setattr() at task creation: class, priority, deadline
    /// parameters (with admission control), clamps, task group. Bad
    /// parameters or a refused admission set the run's fault.
    pub(crate) fn set_sched_attr(&mut self, t: TaskId, attr: &SchedAttr) {
        let tk = &mut self.tasks[t];
        tk.uclamp_min = attr.util_min.unwrap_or(0);
        tk.uclamp_max = attr.util_max.unwrap_or(1024);
        if attr.util_min.is_some() || attr.util_max.is_some() {
            self.uclamp_used = true;
            if !self.kernel.uclamp() {
                let comm = tk.comm.clone();
                self.fault.get_or_insert(crate::error::Error::invalid(
                    format!("task {comm}"),
                    "util_min/util_max",
                    [("util_min", attr.util_min), ("util_max", attr.util_max)]
                        .iter()
                        .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
                        .collect::<Vec<_>>()
                        .join(","),
                    format!("a kernel from 5.3 (utilisation clamping came in v5.3, 69842cba9ace); this run models {}", self.kernel.version),
                ));
            }
        }
        // Only the fair class is grouped here (RT group scheduling is not
        // modelled).
        let fair = matches!(attr.policy, SchedPolicy::Other | SchedPolicy::Idle);
        tk.group = attr.group.filter(|_| fair);
        if attr.group.is_some() || !fair {
            self.sched_ext = true;
        }
        if matches!(attr.policy, SchedPolicy::Other | SchedPolicy::Idle) && attr.dl_runtime_ns > 0 {
            tk.custom_slice_ns = crate::machine::eevdf::custom_slice(attr.dl_runtime_ns);
        }
        match attr.policy {
            SchedPolicy::Other => {}
            SchedPolicy::Idle => {
                tk.idle_policy = true;
                tk.weight = crate::sched::WEIGHT_IDLEPRIO;
                tk.nice_weight = crate::sched::WEIGHT_IDLEPRIO;
            }
            SchedPolicy::Fifo | SchedPolicy::Rr => {
                tk.class = Class::Rt;
                tk.rt.prio = rt::rt_prio(attr.rt_priority);
                tk.rt.rr = attr.policy == SchedPolicy::Rr;
                tk.rt.time_slice_ns = rt::RR_TIMESLICE_NS;
                if attr.util_min.is_none() {
                    tk.uclamp_min = UCLAMP_MIN_RT_DEFAULT;
                }
                self.rt_dl_used = true;
            }
            SchedPolicy::Deadline => {
                let (runtime, deadline, period) = crate::sched::deadline::resolve(attr.dl_runtime_ns, attr.dl_deadline_ns, attr.dl_period_ns);
                let comm = tk.comm.clone();
                if let Err(why) = crate::sched::deadline::checkparam(runtime, deadline, period) {
                    self.fault.get_or_insert(crate::error::Error::invalid(
                        format!("task {comm}"),
                        "SCHED_DEADLINE parameters",
                        format!("runtime {runtime} ns, deadline {deadline} ns, period {period} ns"),
                        why,
                    ));
                    return;
                }
                let bw = crate::sched::deadline::to_ratio(period, runtime);
                let limit = crate::sched::deadline::global_bw_limit(self.plat.nr_cpus());
                // sched_dl_overflow(): admission against the root domain.
                if self.dl_total_bw + bw > limit {
                    self.fault.get_or_insert(crate::error::Error::invalid(
                        format!("task {comm}"),
                        "SCHED_DEADLINE bandwidth",
                        format!("runtime/period {runtime}/{period} ns"),
                        format!(
                            "admission control refuses it (sched_dl_overflow, v6.8): the deadline tasks would need more than {} CPUs' worth at the RT limit of {}/{} µs per CPU",
                            self.plat.nr_cpus(),
                            rt::RT_RUNTIME_NS / 1000,
                            rt::RT_PERIOD_NS / 1000
                        ),
                    ));
                    return;
                }
                self.dl_total_bw += bw;
                let tk = &mut self.tasks[t];
                tk.class = Class::Deadline;
                tk.dl.dl_runtime = runtime;
                tk.dl.dl_deadline = deadline;
                tk.dl.dl_period = period;
                tk.dl.dl_bw = bw;
                self.rt_dl_used = true;
            }
        }
    }

    /// A DL task left the system: give its bandwidth back (task_dead_dl).
    pub(crate) fn release_sched_attr(&mut self, t: TaskId) {
        if self.tasks[t].class == Class::Deadline {
            self.dl_total_bw = self.dl_total_bw.saturating_sub(self.tasks[t].dl.dl_bw);
        }
    }

    // ---- enqueue / dequeue ---------------------------------------------

    /// enqueue_task_rt() / enqueue_task_dl().
    #[cold]
    #[inline(never)]
    pub(crate) fn enqueue_task_rt_dl(&mut self, cpu: CpuId, t: TaskId) {
        self.update_rq_clock(cpu);
        let tk = &mut self.tasks[t];
        tk.state = TaskState::Runnable;
        tk.cpu = cpu;
        let rq = &mut self.rqs[cpu];
        rq.nr_running += 1;
        self.idle_mask.clear(cpu);
        if rq.nr_running > 1 {
            self.overloaded.set(cpu);
            if let Some(eas) = self.eas.as_deref_mut() {
                eas.overload = true;
            }
        }
        if tk.class == Class::Rt {
            rq.rt_nr_running += 1;
            let key = (tk.rt.prio, rq.rt_seq_tail, t);
            rq.rt_seq_tail += 1;
            rq.rt_queue.insert(key);
            tk.rt.key = key;
            let throttled = rq.rt_throttled;
            self.start_rt_bandwidth();
            // enqueue_top_rt_rq(): "Kick cpufreq".
            if !throttled {
                self.cpufreq_update_util(cpu, 0);
            }
        } else {
            self.enqueue_dl_entity(cpu, t);
        }
    }

    /// dequeue_task_rt() / dequeue_task_dl(): `sleep` when the task blocks.
    #[cold]
    #[inline(never)]
    pub(crate) fn dequeue_task_rt_dl(&mut self, cpu: CpuId, t: TaskId, sleep: bool) {
        self.update_rq_clock(cpu);
        if self.rqs[cpu].curr == Some(t) {
            self.update_curr(cpu);
        }
        let running = self.rqs[cpu].curr == Some(t);
        let rq = &mut self.rqs[cpu];
        rq.nr_running -= 1;
        if rq.nr_running == 0 {
            super::placement::set_cpu_idle(&self.plat, &mut self.idle_mask, &mut self.has_idle_cores, cpu);
        }
        if rq.nr_running < 2 {
            self.overloaded.clear(cpu);
        }
        let tk = &mut self.tasks[t];
        tk.state = if sleep { TaskState::Blocked } else { TaskState::Runnable };
        if tk.class == Class::Rt {
            rq.rt_nr_running -= 1;
            if !running {
                rq.rt_queue.remove(&tk.rt.key);
            }
        } else {
            self.dequeue_dl_entity(cpu, t, running, sleep);
        }
    }

    // ---- picking ---------------------------------------------------------

    /// pick_next_task() for the deadline and RT classes: the earliest
    /// deadline, else the highest-priority RT task unless the RT runqueue
    /// is throttled; taken off its queue. None: the fair class picks.
    #[cold]
    #[inline(never)]
    pub(crate) fn pick_next_task_rt_dl(&mut self, cpu: CpuId) -> Option<TaskId> {
        if !self.rt_dl_used {
            return None;
        }
        self.pull_rt_task(cpu);
        let rq = &mut self.rqs[cpu];
        if rq.rt_nr_running == 0 && rq.dl_nr_running == 0 {
            return None;
        }
        if let Some(&(d, t)) = rq.dl_queue.first() {
            rq.dl_queue.remove(&(d, t));
            return Some(t);
        }
        if rq.rt_throttled {
            return None;
        }
        let &key = rq.rt_queue.first()?;
        rq.rt_queue.remove(&key);
        Some(key.2)
    }

    /// put_prev_task_rt() / put_prev_task_dl(): the running task `p` was
    /// preempted and is still runnable.
    #[cold]
    #[inline(never)]
    pub(crate) fn put_prev_task_rt_dl(&mut self, cpu: CpuId, p: TaskId) {
        let rq = &mut self.rqs[cpu];
        let tk = &mut self.tasks[p];
        tk.state = TaskState::Runnable;
        if tk.class == Class::Rt {
            // Back at the head of its priority, unless its RR slice ran out
            // (requeue_task_rt to the tail).
            let seq = if tk.rt.time_slice_ns == 0 {
                tk.rt.time_slice_ns = rt::RR_TIMESLICE_NS;
                let s = rq.rt_seq_tail;
                rq.rt_seq_tail += 1;
                s
            } else {
                let s = rq.rt_seq_head;
                rq.rt_seq_head -= 1;
                s
            };
            tk.rt.key = (tk.rt.prio, seq, p);
            rq.rt_queue.insert(tk.rt.key);
        } else if !tk.dl.throttled {
            rq.dl_queue.insert((tk.dl.deadline, p));
        }
    }

    /// wakeup_preempt() when the woken task `t` or the current `curr` is
    /// not a fair task: a higher class always preempts; within RT a higher
    /// priority, within DL an earlier deadline.
    #[cold]
    #[inline(never)]
    pub(crate) fn rt_dl_preempts(&self, cpu: CpuId, t: TaskId, curr: TaskId) -> bool {
        let tc = self.tasks[t].class;
        let cc = self.rqs[cpu].curr_class;
        let runnable = match tc {
            Class::Rt => !self.rqs[cpu].rt_throttled,
            Class::Deadline => !self.tasks[t].dl.throttled,
            Class::Fair => true,
        };
        if !runnable {
            return false;
        }
        match tc.cmp(&cc) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => match tc {
                Class::Rt => self.tasks[t].rt.prio < self.tasks[curr].rt.prio,
                Class::Deadline => self.tasks[t].dl.deadline < self.tasks[curr].dl.deadline,
                Class::Fair => false,
            },
        }
    }

    // ---- accounting ------------------------------------------------------

    /// update_curr_rt() / update_curr_dl(): charge the running task; RT time
    /// (DL time too, as v6.8's update_curr_dl does while RT bandwidth is
    /// enforced) counts against the RT throttle.
    #[cold]
    #[inline(never)]
    pub(crate) fn update_curr_rt_dl(&mut self, cpu: CpuId, t: TaskId) {
        let now = self.now;
        let tk = &mut self.tasks[t];
        let delta = now.saturating_sub(tk.exec_start_ns);
        tk.exec_start_ns = now;
        tk.sum_exec_ns += delta;
        if delta == 0 {
            return;
        }
        if tk.class == Class::Deadline {
            self.update_curr_dl(cpu, t, delta);
        }
        if self.rt_runtime_ns.is_some() {
            self.rqs[cpu].rt_time += delta;
            self.sched_rt_runtime_exceeded(cpu);
        }
    }

    /// sched_rt_runtime_exceeded(): a runqueue past its runtime borrows
    /// (before v5.10), then is throttled if still past it ("sched: RT
    /// throttling activated").
    fn sched_rt_runtime_exceeded(&mut self, cpu: CpuId) {
        let period = self.rt_period_ns;
        let rq = &self.rqs[cpu];
        if rq.rt_throttled || rq.rt_runtime >= period {
            return;
        }
        self.balance_runtime(cpu);
        let rq = &mut self.rqs[cpu];
        if rt::runtime_exceeded(rq.rt_time, Some(rq.rt_runtime), period) {
            rq.rt_throttled = true;
        }
    }

    /// balance_runtime() → do_balance_runtime() (kernel/sched/rt.c, v5.4):
    /// under RT_RUNTIME_SHARE, on by default before v5.10, a runqueue past
    /// its runtime takes unused runtime from the other CPUs of its root
    /// domain (here every CPU), in CPU order ([`rt::borrow_runtime`]).
    fn balance_runtime(&mut self, cpu: CpuId) {
        if self.kernel.has(EraId::RtRuntimeShareOff) || self.rqs[cpu].rt_time <= self.rqs[cpu].rt_runtime {
            return;
        }
        let period = self.rt_period_ns;
        let weight = self.rqs.len() as u64;
        for i in (0..self.rqs.len()).filter(|&i| i != cpu) {
            let diff = rt::borrow_runtime(self.rqs[i].rt_runtime, self.rqs[i].rt_time, self.rqs[cpu].rt_runtime, weight, period);
            self.rqs[i].rt_runtime -= diff;
            self.rqs[cpu].rt_runtime += diff;
            if self.rqs[cpu].rt_runtime == period {
                break;
            }
        }
    }

    /// task_tick_rt() / task_tick_dl(), after the tick charged the task.
    #[cold]
    #[inline(never)]
    pub(crate) fn task_tick_rt_dl(&mut self, cpu: CpuId, curr: TaskId) {
        if self.tasks[curr].class == Class::Deadline {
            self.task_tick_dl(cpu, curr);
            return;
        }
        if self.rqs[cpu].rt_throttled {
            self.schedule(cpu);
            return;
        }
        let tick = self.tun.tick_ns;
        let tk = &mut self.tasks[curr];
        if !tk.rt.rr {
            return;
        }
        tk.rt.time_slice_ns = tk.rt.time_slice_ns.saturating_sub(tick);
        if tk.rt.time_slice_ns > 0 {
            return;
        }
        let prio = tk.rt.prio;
        let others = self.rqs[cpu].rt_queue.first().is_some_and(|k| k.0 == prio);
        if others {
            // Slice 0: put_prev_task_rt requeues it at the tail.
            self.schedule(cpu);
        } else {
            self.tasks[curr].rt.time_slice_ns = rt::RR_TIMESLICE_NS;
        }
    }

    /// update_rt_rq_load_avg() and update_dl_rq_load_avg(): rq->avg_rt and
    /// rq->avg_dl up to the PELT clock's now (the rq clock is current).
    #[cold]
    #[inline(never)]
    pub(crate) fn update_rt_dl_avg(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu];
        let now = rq.clock.now();
        let running = rq.curr.is_some();
        let rt = u64::from(running && rq.curr_class == Class::Rt);
        let dl = u64::from(running && rq.curr_class == Class::Deadline);
        if pelt::update_load_sum(now, &mut rq.avg_rt, rt, rt, rt == 1) {
            pelt::update_load_avg(&mut rq.avg_rt, 1);
        }
        if pelt::update_load_sum(now, &mut rq.avg_dl, dl, dl, dl == 1) {
            pelt::update_load_avg(&mut rq.avg_dl, 1);
        }
    }

    // ---- the RT throttle's period timer ---------------------------------

    /// start_rt_bandwidth(): arm the period timer if it is idle.
    fn start_rt_bandwidth(&mut self) {
        if self.rt_period_armed || self.rt_runtime_ns.is_none() {
            return;
        }
        self.rt_period_armed = true;
        self.rt_period_gen = self.rt_period_gen.wrapping_add(1);
        let gen = self.rt_period_gen;
        self.q.schedule(self.now + self.rt_period_ns, Event::RtPeriod { gen });
    }

    /// sched_rt_period_timer() → do_sched_rt_period_timer(): give every
    /// runqueue a period's runtime back; unthrottle and reschedule those
    /// below the runtime again. The timer stops when no runqueue has RT
    /// time or RT tasks left. False if the event was overtaken.
    pub(crate) fn rt_period_timer(&mut self, gen: u32) -> bool {
        if gen != self.rt_period_gen || !self.rt_period_armed {
            return false;
        }
        if self.rt_runtime_ns.is_none() {
            self.rt_period_armed = false;
            return true;
        }
        let mut idle = true;
        for cpu in 0..self.rqs.len() {
            if self.rqs[cpu].rt_throttled {
                self.balance_runtime(cpu);
            }
            let rq = &mut self.rqs[cpu];
            let mut unthrottled = false;
            if rq.rt_time > 0 || rq.rt_throttled {
                let (left, ok) = rt::period_replenish(rq.rt_time, rq.rt_runtime, 1);
                rq.rt_time = left;
                if rq.rt_throttled && ok {
                    rq.rt_throttled = false;
                    unthrottled = true;
                }
                if rq.rt_time > 0 || rq.rt_nr_running > 0 {
                    idle = false;
                }
            } else if rq.rt_nr_running > 0 {
                idle = false;
            }
            if unthrottled && rq.rt_nr_running > 0 {
                // sched_rt_rq_enqueue() → enqueue_top_rt_rq() and resched_curr().
                self.cpufreq_update_util(cpu, 0);
                self.resched_for_rt(cpu);
            }
        }
        if idle {
            self.rt_period_armed = false;
        } else {
            self.q.schedule(self.now + self.rt_period_ns, Event::RtPeriod { gen });
        }
        true
    }

    /// resched_curr() on `cpu` because a higher class may run there.
    pub(crate) fn resched_for_rt(&mut self, cpu: CpuId) {
        match self.rqs[cpu].mode {
            CpuMode::Idle { .. } => self.idle_wakeup(cpu, false),
            CpuMode::Active => self.schedule(cpu),
            CpuMode::Exiting { .. } => {}
        }
    }

    // ---- placement and balancing -----------------------------------------

    /// cpupri of `cpu` as find_lowest_rq ranks it: 0 when it runs no RT or
    /// DL task (idle or fair), 1 + (99 − prio) of its best RT task, 200
    /// with DL tasks. Lower is more preemptible.
    fn rt_rank(&self, cpu: CpuId) -> u32 {
        let rq = &self.rqs[cpu];
        if rq.dl_nr_running > 0 {
            return 200;
        }
        if rq.rt_nr_running == 0 || rq.rt_throttled {
            return 0;
        }
        let queued = rq.rt_queue.first().map_or(rt::MAX_RT_PRIO, |k| k.0);
        let running = match rq.curr {
            Some(c) if rq.curr_class == Class::Rt => self.tasks[c].rt.prio,
            _ => rt::MAX_RT_PRIO,
        };
        1 + (rt::MAX_RT_PRIO - 1).saturating_sub(queued.min(running))
    }

    /// The kernel `prio` of an RT or DL task (lower runs first): −1
    /// (MAX_DL_PRIO − 1) for a deadline task, else its RT prio.
    fn rt_dl_prio(&self, t: TaskId) -> i64 {
        match self.tasks[t].class {
            Class::Deadline => -1,
            _ => i64::from(self.tasks[t].rt.prio),
        }
    }

    /// The cpupri rank a CPU must be below for task `t` to run there at
    /// once (the scale of [`Self::rt_rank`]).
    fn task_rank(&self, t: TaskId) -> u32 {
        match self.tasks[t].class {
            Class::Deadline => 200,
            _ => 1 + (rt::MAX_RT_PRIO - 1) - self.tasks[t].rt.prio,
        }
    }

    /// find_lowest_rq(): among the CPUs `t` may use, those of the lowest
    /// cpupri rank below its own (cpupri_find); of them `task_cpu` if it is
    /// one, else the first from `task_cpu` on that shares its LLC (the
    /// SD_WAKE_AFFINE domains), else the first. None when `t` is pinned or
    /// no CPU runs something it would preempt.
    fn find_lowest_rq(&self, t: TaskId, task_cpu: CpuId) -> Option<CpuId> {
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        if allowed.weight() < 2 {
            return None;
        }
        let mine = self.task_rank(t);
        let lowest = allowed.iter().map(|c| self.rt_rank(c)).min()?;
        if lowest >= mine {
            return None;
        }
        if self.rt_rank(task_cpu) == lowest && allowed.test(task_cpu) {
            return Some(task_cpu);
        }
        let llc = self.llc_masks[self.plat.cpus[task_cpu].llc];
        let mut first_any = None;
        let mut c = allowed.next_wrap(task_cpu);
        let start = c;
        while let Some(cpu) = c {
            if self.rt_rank(cpu) == lowest {
                if llc.test(cpu) {
                    return Some(cpu);
                }
                first_any.get_or_insert(cpu);
            }
            c = allowed.next_wrap(cpu + 1).filter(|&n| Some(n) != start);
        }
        first_any
    }

    /// select_task_rq_rt() / select_task_rq_dl() for a waking or new task.
    ///
    /// RT (kernel/sched/rt.c `select_task_rq_rt`, v6.8): the task stays on
    /// its previous CPU unless that CPU's current task is an RT or DL task
    /// that is pinned or of equal or higher priority; then it goes where
    /// find_lowest_rq() says, if that CPU's best task is of lower priority
    /// than it. DL: away from a CPU already running deadline tasks, to the
    /// lowest-ranked CPU (select_task_rq_dl's find_later_rq, simplified).
    #[cold]
    #[inline(never)]
    pub(crate) fn select_task_rq_rt_dl(&self, t: TaskId, prev: CpuId) -> CpuId {
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        let mine = self.task_rank(t);
        let must_move = match self.tasks[t].class {
            Class::Deadline => self.rt_rank(prev) >= mine,
            _ => self.rqs[prev].curr.is_some_and(|c| {
                self.tasks[c].class != Class::Fair
                    && (self.tasks[c].affinity.is_some_and(|a| a.weight() < 2) || self.rt_dl_prio(c) <= self.rt_dl_prio(t))
            }),
        };
        if allowed.test(prev) && !must_move {
            return prev;
        }
        if let Some(cpu) = self.find_lowest_rq(t, prev) {
            if self.rt_rank(cpu) < mine {
                return cpu;
            }
        }
        if allowed.test(prev) {
            return prev;
        }
        // Not allowed where it was (select_fallback_rq): its lowest-ranked CPU.
        allowed.iter().min_by_key(|&c| (self.rt_rank(c), c)).unwrap_or(prev)
    }

    /// task_woken_rt(): RT task `t` woke on `cpu` without preempting its
    /// current task, an RT or DL task that is pinned or of equal or higher
    /// priority; if `t` may move, push the runqueue's queued RT tasks to
    /// CPUs running something of lower priority now rather than wait for
    /// one of them to pull.
    #[cold]
    #[inline(never)]
    pub(crate) fn task_woken_rt(&mut self, cpu: CpuId, t: TaskId) {
        let Some(curr) = self.rqs[cpu].curr else { return };
        if curr == t || self.tasks[t].class != Class::Rt || self.tasks[curr].class == Class::Fair {
            return;
        }
        let migratable = |e: &Self, x: TaskId| e.tasks[x].affinity.map_or(true, |a| a.weight() > 1);
        if !migratable(self, t) {
            return;
        }
        if !migratable(self, curr) || self.rt_dl_prio(curr) <= self.rt_dl_prio(t) {
            self.push_rt_tasks(cpu);
        }
    }

    /// rt_queue_push_tasks(): after `cpu` picked an RT task
    /// (set_next_task_rt), push its other queued RT tasks; the kernel runs
    /// this as a balance callback at the end of __schedule(), as here.
    #[cold]
    #[inline(never)]
    pub(crate) fn rt_queue_push_tasks(&mut self, cpu: CpuId) {
        let rq = &self.rqs[cpu];
        if rq.curr_class == Class::Rt && rq.curr.is_some() && !rq.rt_queue.is_empty() {
            self.push_rt_tasks(cpu);
        }
    }

    /// push_rt_tasks(): push queued RT tasks away from `cpu` while one
    /// moves.
    #[cold]
    #[inline(never)]
    pub(crate) fn push_rt_tasks(&mut self, cpu: CpuId) {
        while self.push_rt_task(cpu) {}
    }

    /// push_rt_task(): the highest-priority queued RT task of `cpu` that
    /// may run elsewhere (pick_next_pushable_task) moves to the CPU
    /// find_lowest_rq() gives, if that CPU's best task is of lower priority
    /// (find_lock_lowest_rq), and that CPU reschedules. False when nothing
    /// moved: no pushable task, none placeable, or the task should rather
    /// preempt `cpu`'s own current task.
    fn push_rt_task(&mut self, cpu: CpuId) -> bool {
        let Some(curr) = self.rqs[cpu].curr else { return false };
        if self.tasks[curr].class == Class::Fair {
            return false;
        }
        let next = self.rqs[cpu].rt_queue.iter().map(|k| k.2).find(|&x| self.tasks[x].affinity.map_or(true, |a| a.weight() > 1));
        let Some(next) = next else { return false };
        if self.rt_dl_prio(next) < self.rt_dl_prio(curr) {
            // It should preempt `cpu`'s current task instead: that CPU's
            // wakeup or pick path reschedules.
            return false;
        }
        let Some(dst) = self.find_lowest_rq(next, cpu) else { return false };
        if dst == cpu || self.rt_rank(dst) >= self.task_rank(next) {
            return false;
        }
        self.hook_this_cpu = Some(cpu);
        self.dequeue_task_rt_dl(cpu, next, false);
        if let Some(tr) = self.trace.as_mut() {
            let tk = &self.tasks[next];
            tr.sched_migrate_task(self.now, cpu, &tk.comm, tk.pid, tk.prio(), cpu, dst);
        }
        self.enqueue_task_rt_dl(dst, next);
        self.hook_this_cpu = None;
        // resched_curr(lowest_rq).
        self.resched_for_rt(dst);
        true
    }

    /// pull_rt_task(): `cpu` is about to pick; take a queued (not running)
    /// RT task of higher priority than any of its own from another CPU.
    fn pull_rt_task(&mut self, cpu: CpuId) {
        if self.rqs[cpu].rt_throttled {
            return;
        }
        let own = self.rqs[cpu].rt_queue.first().map_or(rt::MAX_RT_PRIO, |k| k.0);
        let mut best: Option<(u32, CpuId, TaskId)> = None;
        for src in 0..self.rqs.len() {
            if src == cpu {
                continue;
            }
            for &(prio, _, t) in &self.rqs[src].rt_queue {
                if prio >= own || best.is_some_and(|b| b.0 <= prio) {
                    break;
                }
                if self.tasks[t].affinity.unwrap_or(self.all_cpus).test(cpu) {
                    best = Some((prio, src, t));
                    break;
                }
            }
        }
        if let Some((_, src, t)) = best {
            self.hook_this_cpu = Some(cpu);
            self.dequeue_task_rt_dl(src, t, false);
            if let Some(tr) = self.trace.as_mut() {
                let tk = &self.tasks[t];
                tr.sched_migrate_task(self.now, cpu, &tk.comm, tk.pid, tk.prio(), src, cpu);
            }
            self.enqueue_task_rt_dl(cpu, t);
            self.hook_this_cpu = None;
        }
    }
}

//! The cpufreq core: starts governors on policies (as the driver laid them
//! out, [`crate::cpufreq::driver::PolicyLayout`]), forwards the scheduler's
//! utilisation hook and the governors' timers, and hands their requests to
//! the scaling driver (`cpufreq_driver.rs`): frequency targets through
//! `driver_target`, HWP requests to the HWP hardware (`hwp.rs`).
//!
//! Models: Linux v6.8 drivers/cpufreq/cpufreq.c (cpufreq_start_governor,
//! __cpufreq_driver_target) and kernel/sched/cpufreq.c
//! (cpufreq_update_util, the scheduler's hook).

use super::{Engine, Event};
use crate::cpufreq::driver::CpufreqDriver;
use crate::cpufreq::{HwpCaps, Policy, PolicyRequests, RejectedCall, RemoteHookCalls, SchedView};
use crate::kernel::EraId;
use crate::platform::CpuId;
use crate::sched::pelt;

/// The scheduler state a governor may read.
struct View<'a> {
    e: &'a Engine,
}

impl SchedView for View<'_> {
    fn cpu_util(&self, cpu: CpuId) -> u64 {
        pelt::cpu_util(&self.e.rqs[cpu].cfs, self.capacity(cpu))
    }

    fn cpu_util_boost(&self, cpu: CpuId) -> u64 {
        pelt::cpu_util_boost(&self.e.rqs[cpu].cfs, self.capacity(cpu))
    }

    fn capacity(&self, cpu: CpuId) -> u64 {
        self.e.rqs[cpu].capacity
    }

    /// effective_cpu_util() (Linux v6.8 kernel/sched/core.c) with no IRQ
    /// time: util = CFS + rq->avg_rt + rq->avg_dl; min = max(cpu_bw_dl,
    /// uclamp min of the runqueue), the capacity while an RT task is
    /// runnable and uclamp is unused (`!uclamp_is_used() &&
    /// rt_rq_is_runnable()`); max = min(capacity, uclamp max).
    fn effective_cpu_util(&self, cpu: CpuId, util_cfs: u64) -> (u64, u64, u64) {
        self.e.effective_cpu_util(cpu, util_cfs)
    }

    fn cpu_bw_dl(&self, cpu: CpuId) -> u64 {
        crate::sched::deadline::cpu_bw_dl(self.e.rqs[cpu].running_bw)
    }

    fn idle_ns(&self, cpu: CpuId, now_ns: u64) -> u64 {
        self.e.rqs[cpu].idle_time_until(now_ns)
    }

    fn iowait_ns(&self, cpu: CpuId, now_ns: u64) -> u64 {
        self.e.rqs[cpu].iowait_time_until(now_ns)
    }

    fn nr_running(&self, cpu: CpuId) -> u32 {
        self.e.rqs[cpu].nr_running
    }

    fn idle_calls(&self, cpu: CpuId) -> Option<u64> {
        Some(self.e.rqs[cpu].idle_calls)
    }

    fn aperf_mperf(&self, cpu: CpuId, now_ns: u64) -> (u128, u64) {
        self.e.aperf[cpu].read(now_ns, self.e.domains[self.e.plat.cpus[cpu].freq_domain].cur_khz)
    }

    fn freq_invariant(&self) -> bool {
        self.e.freq_invariant
    }
}

#[derive(Clone, Copy)]
enum Call {
    Start,
    Update { cpu: CpuId, flags: u32 },
    /// A rejected call, for a governor that wants the policy's view with it.
    Rejected { cpu: CpuId, flags: u32 },
    Timer,
}

impl Engine {
    /// effective_cpu_util() (Linux v6.8 kernel/sched/core.c) with no IRQ
    /// time, as (util, min, max): see the view's method of that name.
    pub(crate) fn effective_cpu_util(&self, cpu: CpuId, util_cfs: u64) -> (u64, u64, u64) {
        let scale = self.rqs[cpu].capacity;
        if !self.rt_dl_used && !self.uclamp_used {
            return (util_cfs.min(scale), 0, scale);
        }
        let rq = &self.rqs[cpu];
        let (uc_min, uc_max) = if self.uclamp_used { self.uclamp_rq(cpu) } else { (0, 1024) };
        let mut min = crate::sched::deadline::cpu_bw_dl(rq.running_bw).max(uc_min);
        if !self.uclamp_used && rq.rt_nr_running > 0 && !rq.rt_throttled {
            min = min.max(scale);
        }
        let util = util_cfs + rq.avg_rt.util_avg + rq.avg_dl.util_avg;
        let max = scale.min(uc_max);
        (util.min(scale), min, max)
    }

    /// uclamp_rq_get(UCLAMP_MIN / UCLAMP_MAX) (v6.8): the largest clamps of
    /// the runqueue's runnable tasks (max aggregation); (0, 1024) when
    /// nothing is runnable (the kernel keeps the last max of an idle
    /// runqueue, UCLAMP_FLAG_IDLE, which only matters once a task wakes).
    pub(crate) fn uclamp_rq(&self, cpu: CpuId) -> (u64, u64) {
        let rq = &self.rqs[cpu];
        if self.fair_groups() {
            // The fair tasks queued in group runqueues too.
            let fair = self.queued_fair_tasks(cpu);
            let tasks = rq.curr.into_iter().chain(fair).chain(rq.rt_queue.iter().map(|k| k.2)).chain(rq.dl_queue.iter().map(|&(_, t)| t));
            return self.uclamp_max(tasks);
        }
        let tasks = rq
            .curr
            .into_iter()
            // A delayed task's clamps left at its sleep (v6.12 dequeue_task:
            // uclamp_rq_dec before the class's dequeue, "sched/uclamp: Handle
            // delayed dequeue").
            .chain(rq.tree.iter().map(|&(_, t)| t).filter(|&t| !self.tasks[t].sched_delayed))
            .chain(rq.rt_queue.iter().map(|k| k.2))
            .chain(rq.dl_queue.iter().map(|&(_, t)| t));
        self.uclamp_max(tasks)
    }

    /// The largest clamps of `tasks`, (0, 1024) for none.
    #[inline]
    fn uclamp_max(&self, tasks: impl Iterator<Item = crate::sched::TaskId>) -> (u64, u64) {
        let mut any = false;
        let (mut lo, mut hi) = (0u64, 0u64);
        for t in tasks {
            any = true;
            lo = lo.max(u64::from(self.tasks[t].uclamp_min));
            hi = hi.max(u64::from(self.tasks[t].uclamp_max));
        }
        if any {
            (lo.min(hi), hi)
        } else {
            (0, 1024)
        }
    }

    /// Call the governor for policy `p` and apply what it asked for.
    fn call_governor(&mut self, p: usize, call: Call) {
        let mut out = PolicyRequests::default();
        let mut gov = std::mem::replace(&mut self.cpufreq, Box::new(crate::cpufreq::performance::Performance));
        {
            let pr = &self.policies[p];
            let ct = self.plat.domain_type(pr.domain);
            let view = View { e: self };
            let mut policy = Policy {
                id: p,
                cpus: &self.pol.cpus[p],
                opps: &ct.opps,
                cur_khz: pr.cur_khz,
                min_khz: pr.min_khz,
                max_khz: pr.max_khz,
                cpuinfo_min_khz: ct.min_khz(),
                cpuinfo_max_khz: ct.max_khz(),
                transition_latency_ns: ct.transition_latency_ns,
                tick_ns: self.tun.tick_ns,
                hwp: (self.cpufreq_driver == CpufreqDriver::IntelPstate && self.hwp).then(|| HwpCaps::of(ct)),
                cppc: ct.cppc,
                adjust_perf: matches!(self.cpufreq_driver, CpufreqDriver::IntelCpufreq { hwp: true, .. })
                    && self.kernel.has(EraId::IntelCpufreqAdjustPerf),
                sched: &view,
                out: &mut out,
            };
            match call {
                Call::Start => gov.start(&mut policy),
                Call::Update { cpu, flags } => gov.update_util(&mut policy, cpu, self.now, flags),
                Call::Rejected { cpu, flags } => gov.update_util_rejected_view(&mut policy, cpu, self.now, flags),
                Call::Timer => gov.timer(&mut policy, self.now),
            }
        }
        self.cpufreq = gov;
        self.apply_policy_requests(p, out);
    }

    /// A hook call for `cpu` of policy `p` that the governor turns away:
    /// only what its callback records first, without a view of the policy.
    fn governor_rejects(&mut self, p: usize, cpu: CpuId, flags: u32) {
        let mut gov = std::mem::replace(&mut self.cpufreq, Box::new(crate::cpufreq::performance::Performance));
        let view = View { e: self };
        gov.update_util_rejected(&RejectedCall { policy: p, cpu, time_ns: self.now, flags, tick_ns: self.tun.tick_ns, sched: &view });
        self.cpufreq = gov;
    }

    fn apply_policy_requests(&mut self, p: usize, out: PolicyRequests) {
        if let Some((khz, relation)) = out.target {
            self.driver_target(p, khz, relation, out.fast_switch);
        }
        if let Some(req) = out.hwp {
            self.hwp_write_request(p, req);
        }
        if let Some((min_perf, target_perf, capacity)) = out.adjust_perf {
            self.driver_adjust_perf(p, min_perf, target_perf, capacity);
        }
        if out.cancel_timer {
            let pr = &mut self.policies[p];
            pr.timer_gen = pr.timer_gen.wrapping_add(1);
            pr.timer_deferred = false;
        }
        if let Some((delay, deferrable)) = out.timer {
            let pr = &mut self.policies[p];
            pr.timer_gen = pr.timer_gen.wrapping_add(1);
            pr.timer_deferrable = deferrable;
            pr.timer_deferred = false;
            let gen = pr.timer_gen;
            self.q.schedule(self.now + delay, Event::GovTimer { policy: p as u32, gen });
        }
    }

    pub(crate) fn governor_start(&mut self, p: usize) {
        self.call_governor(p, Call::Start);
    }

    /// cpufreq_update_util(): the scheduler's hook on `cpu`, called from
    /// `hook_this_cpu` if set (a remote call), else from `cpu` itself. A
    /// remote call reaches the governor only if its rule accepts the
    /// calling CPU ([`RemoteHookCalls`], v6.8). Inline: where the governor
    /// installs no hook (`uses_util_hook`: performance, for one) a call is
    /// only the test.
    #[inline(always)]
    pub(crate) fn cpufreq_update_util(&mut self, cpu: CpuId, flags: u32) {
        if self.cpufreq_hook {
            self.cpufreq_hook_call(cpu, flags);
        }
    }

    /// [`Self::cpufreq_update_util`] where the governor has a hook.
    fn cpufreq_hook_call(&mut self, cpu: CpuId, flags: u32) {
        let p = self.pol.of_cpu[cpu];
        if let Some(this) = self.hook_this_cpu.filter(|&c| c != cpu) {
            // Before v4.14 (674e75411fc2) the scheduler made no remote
            // calls: cfs_rq_util_change called the hook only for this
            // CPU's own runqueue.
            if !self.remote_callbacks {
                return;
            }
            let accept = match self.cpufreq.remote_hook_calls() {
                RemoteHookCalls::PolicyCpus => self.pol.of_cpu[this] == p,
                RemoteHookCalls::OwnCpu => false,
            };
            if !accept {
                // The governor's callback ran and turned the call away
                // after recording part of it.
                if self.cpufreq.rejected_calls_need_view() {
                    self.call_governor(p, Call::Rejected { cpu, flags });
                } else {
                    self.governor_rejects(p, cpu, flags);
                }
                return;
            }
        }
        self.call_governor(p, Call::Update { cpu, flags });
    }

    /// A governor timer expired. A deferrable one waits while every CPU of
    /// the policy is idle and fires at the first wakeup.
    pub(crate) fn governor_timer_fired(&mut self, p: usize) {
        let all_idle = self.pol.cpus[p].iter().all(|&c| self.rqs[c].idle_state().is_some());
        if self.policies[p].timer_deferrable && all_idle {
            self.policies[p].timer_deferred = true;
            return;
        }
        self.call_governor(p, Call::Timer);
    }

    /// A CPU of its policy woke: run a deferred governor timer, and the
    /// driver's if it has one waiting.
    pub(crate) fn run_deferred_timer(&mut self, cpu: CpuId) {
        let p = self.pol.of_cpu[cpu];
        if self.policies[p].timer_deferred {
            self.policies[p].timer_deferred = false;
            self.call_governor(p, Call::Timer);
        }
        self.run_deferred_driver_timer(p);
    }
}

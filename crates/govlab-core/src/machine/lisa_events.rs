//! The trace events LISA's kernel module makes of the scheduler's bare
//! tracepoints, for `kernel=...:lisa_module=on` runs with a trace.
//!
//! Bare tracepoints carry no event of their own: LISA loads a module
//! (ARM-software/lisa, lisa/_assets/kmodules/sched_tp, sched_events.h)
//! that attaches to them and writes `sched_pelt_cfs`, `sched_pelt_se`,
//! `sched_util_est_cfs` and `sched_util_est_se`, which LISA's
//! load-tracking analyses read. The kernel fires them:
//!
//! - `pelt_cfs_tp` / `pelt_se_tp` (v5.3, ba19f51fcb54 and 8de6242cca17;
//!   kernel/sched/pelt.c `__update_load_avg_cfs_rq`, `__update_load_avg_se`)
//!   when an update of the runqueue's or the task's signal crossed a PELT
//!   period; the runqueue's also when a task is attached to or detached
//!   from it (kernel/sched/fair.c `attach_entity_load_avg`,
//!   `detach_entity_load_avg`). govlab emits them from `update_load_avg`
//!   (the runqueue's when it decayed, the task's at every update of it:
//!   govlab's task update does not say whether it crossed a period).
//! - `sched_util_est_cfs_tp` (v5.10, inferred) in `util_est_enqueue` and
//!   `util_est_dequeue`, `sched_util_est_se_tp` in `util_est_update`.
//!
//! Fields as the module prints them on kernels from v5.7 (`runnable=`, the
//! runnable average 9f68395333ad brought; v5.3-v5.6 print `rbl_load=`, but
//! those versions run v5.2's semantics here and the option is refused
//! there). The root runqueue's path is `/`, a task's `(null)`. From v6.8
//! (11137d384996) a task's util_est is one value, the EWMA: `enqueued` and
//! `ewma` both print it; the runqueue's sum prints as both too.

use super::Engine;
use crate::kernel::EraId;
use crate::platform::CpuId;
use crate::sched::TaskId;

/// `UTIL_AVG_UNCHANGED`, the flag bit of a task's util_est.
const UTIL_AVG_UNCHANGED: u32 = 1 << 31;

impl Engine {
    #[inline]
    fn lisa_tracing(&self) -> bool {
        self.kernel.lisa_module && self.trace.is_some()
    }

    /// `sched_pelt_cfs` for `cpu`'s root runqueue.
    #[inline]
    pub(crate) fn trace_pelt_cfs(&mut self, cpu: CpuId) {
        if !self.lisa_tracing() {
            return;
        }
        self.write_pelt_cfs(cpu);
    }

    #[cold]
    #[inline(never)]
    fn write_pelt_cfs(&mut self, cpu: CpuId) {
        let a = &self.rqs[cpu].cfs.avg;
        let fields = format!(
            "cpu={cpu} path=/ load={} runnable={} util={} update_time={}",
            a.load_avg, a.runnable_avg, a.util_avg, a.last_update_time
        );
        let now = self.now;
        if let Some(tr) = self.trace.as_mut() {
            tr.other(now, cpu, "sched_pelt_cfs", &fields);
        }
    }

    /// `sched_pelt_se` for task `t` on `cpu`.
    #[inline]
    pub(crate) fn trace_pelt_se(&mut self, cpu: CpuId, t: TaskId) {
        if !self.lisa_tracing() {
            return;
        }
        self.write_pelt_se(cpu, t);
    }

    #[cold]
    #[inline(never)]
    fn write_pelt_se(&mut self, cpu: CpuId, t: TaskId) {
        let tk = &self.tasks[t];
        let a = &tk.avg;
        let fields = format!(
            "cpu={cpu} path=(null) comm={} pid={} load={} runnable={} util={} update_time={}",
            tk.comm, tk.pid, a.load_avg, a.runnable_avg, a.util_avg, a.last_update_time
        );
        let now = self.now;
        if let Some(tr) = self.trace.as_mut() {
            tr.other(now, cpu, "sched_pelt_se", &fields);
        }
    }

    /// `sched_util_est_cfs` for `cpu`'s root runqueue (from v5.10).
    #[inline]
    pub(crate) fn trace_util_est_cfs(&mut self, cpu: CpuId) {
        if !self.lisa_tracing() || !self.kernel.has(EraId::UtilEstTracepoints) {
            return;
        }
        self.write_util_est_cfs(cpu);
    }

    #[cold]
    #[inline(never)]
    fn write_util_est_cfs(&mut self, cpu: CpuId) {
        let cfs = &self.rqs[cpu].cfs;
        let fields = format!("cpu={cpu} path=/ enqueued={0} ewma={0} util={1}", cfs.util_est, cfs.avg.util_avg);
        let now = self.now;
        if let Some(tr) = self.trace.as_mut() {
            tr.other(now, cpu, "sched_util_est_cfs", &fields);
        }
    }

    /// `sched_util_est_se` for task `t` on `cpu` (from v5.10).
    #[inline]
    pub(crate) fn trace_util_est_se(&mut self, cpu: CpuId, t: TaskId) {
        if !self.lisa_tracing() || !self.kernel.has(EraId::UtilEstTracepoints) {
            return;
        }
        self.write_util_est_se(cpu, t);
    }

    #[cold]
    #[inline(never)]
    fn write_util_est_se(&mut self, cpu: CpuId, t: TaskId) {
        let tk = &self.tasks[t];
        let est = tk.avg.util_est & !UTIL_AVG_UNCHANGED;
        let fields = format!(
            "cpu={cpu} path=(null) comm={} pid={} enqueued={est} ewma={est} util={}",
            tk.comm, tk.pid, tk.avg.util_avg
        );
        let now = self.now;
        if let Some(tr) = self.trace.as_mut() {
            tr.other(now, cpu, "sched_util_est_se", &fields);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::api::RunConfig;
    use crate::params::Spec;
    use crate::trace::event::EventKind;

    fn names(kernel: &str) -> std::collections::BTreeMap<String, usize> {
        let cfg = RunConfig {
            platform: Spec::new("juno-r0"),
            kernel: Spec::parse(kernel, "test").unwrap(),
            workload: Spec::parse("periodic:tasks=2,run_us=2000,period_us=10000", "test").unwrap(),
            cpufreq: Spec::new("schedutil"),
            cpuidle: Spec::new("menu"),
            duration_ns: 200_000_000,
            seed: 1,
            interval_ns: None,
        };
        let (_, trace) = cfg.run_trace(None).unwrap();
        let mut out = std::collections::BTreeMap::new();
        for ev in &trace.events {
            if let EventKind::Other { name, .. } = &ev.kind {
                *out.entry(name.to_string()).or_insert(0) += 1;
            }
        }
        out
    }

    /// With the module, the PELT and util_est events appear, by version;
    /// without it, none.
    #[test]
    fn lisa_module_events_by_version() {
        let on = names("6.8:lisa_module=on");
        for ev in ["sched_pelt_cfs", "sched_pelt_se", "sched_util_est_cfs", "sched_util_est_se"] {
            assert!(on.get(ev).copied().unwrap_or(0) > 10, "{ev}: {on:?}");
        }
        let v59 = names("5.9:lisa_module=on");
        assert!(v59.contains_key("sched_pelt_se") && !v59.contains_key("sched_util_est_se"), "{v59:?}");
        assert!(names("6.8").is_empty());
        assert!(crate::kernel::KernelConfig::from_spec(&Spec::parse("5.2:lisa_module=on", "test").unwrap()).is_err());
    }
}

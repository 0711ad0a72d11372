//! `idle`: a nearly idle machine; its power.
//!
//! The workload runs nothing. An idle Linux machine is not silent: the
//! kernel's per-CPU housekeeping (timer softirqs, RCU, vmstat, kworker items;
//! machine/housekeeping.rs, on by default, with rates from real recordings
//! and published measurements) wakes its CPUs now and then. Ticks, tick
//! stopping and idle-state choice are the engine's and the cpuidle
//! governor's. `--kernel …:housekeeping=off` leaves the machine with nothing
//! but its ticks. The primary metric is the machine's average power in W.

use super::{Better, Metric, Record, Setup, Workload, WorkloadInfo};
use crate::error::Result;
use crate::params::{Params, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "idle",
    description: "a nearly idle machine: only the kernel's housekeeping wakes its CPUs; average power",
    metric: "power_w (average power of the machine, W, lower is better)",
    params: &[],
    ends: super::Ends::AtDuration,
    build,
};

pub struct Idle;

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let p = Params::new("workload idle", spec);
    p.finish()?;
    Ok(Box::new(Idle))
}

impl Workload for Idle {
    fn setup(&self, _platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        Ok(Setup::default())
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let wakeups = r.kernel_wakeups as f64;
        vec![
            Metric::new("power_w", r.per_second(r.energy_j), "W", Better::Lower),
            Metric::new("energy_j", r.energy_j, "J", Better::Lower),
            Metric::new("wakeups_per_s", r.per_second(wakeups), "1/s", Better::Lower),
        ]
    }

    fn primary(&self) -> &'static str {
        "power_w"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

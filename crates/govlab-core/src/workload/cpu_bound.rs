//! `cpu-bound`: tasks that compute and never sleep.
//!
//! The simplest load there is: every task loops over a compute segment of
//! 10 ms (at the reference frequency) forever. `mem_fraction` makes part of
//! each segment memory-bound, so it stops scaling with frequency. The metric
//! is work done per second: reference cycles retired by all tasks, in
//! Gcycles/s, higher is better.

use super::{Better, Dist, Metric, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

/// Length of one compute segment at the reference frequency (assumed: long
/// enough to keep event counts low, short enough to see frequency changes).
const SEGMENT_NS: f64 = 10e6;

pub const TASKS: ParamSpec = ParamSpec {
    name: "tasks",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Uint { min: 0, max: 100_000 },
    help: "number of tasks; 0 = one per CPU",
};

pub const MEM_FRACTION: ParamSpec = ParamSpec {
    name: "mem_fraction",
    unit: "",
    default: ParamDefault::Real(0.0),
    range: Range::Real { min: 0.0, max: 1.0 },
    help: "share of the time that is memory-bound (0..1)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "cpu-bound",
    description: "tasks that compute forever; work done per second",
    metric: "work_rate_gcps (Gcycles/s at the reference frequency, higher is better)",
    params: &[TASKS, MEM_FRACTION],
    ends: super::Ends::AtDuration,
    build,
};

pub struct CpuBound {
    tasks: u64,
    mem_fraction: f64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload cpu-bound", spec);
    let w = CpuBound {
        tasks: p.uint(&TASKS, &())?,
        mem_fraction: p.real(&MEM_FRACTION)?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for CpuBound {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        let cycles = super::cycles_for_ns_at(SEGMENT_NS, f_ref);
        let program = ProgramBuilder::new()
            .repeat(None, |b| {
                b.run(Dist::Fixed(cycles), self.mem_fraction);
            })
            .build();
        let mut task = TaskSpec::new("cpu-bound", program);
        task.instances = if self.tasks == 0 { platform.nr_cpus() as u32 } else { self.tasks as u32 };
        Ok(Setup {
            tasks: vec![task],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let rate = r.per_second(r.cycles_retired) / 1e9;
        vec![Metric::new("work_rate_gcps", rate, "Gcycles/s", Better::Higher)]
    }

    fn primary(&self) -> &'static str {
        "work_rate_gcps"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            TASKS.show(self.tasks),
            MEM_FRACTION.show(self.mem_fraction),
        ]
    }
}

//! `idle`: a nearly idle machine; its power.
//!
//! An idle Linux server is not silent: per-CPU kernel work (vmstat_update,
//! RCU, writeback and timer-wheel housekeeping) and a few daemons wake CPUs
//! now and then. The model gives every CPU one pinned housekeeping task
//! ("kworker/N") that wakes `wakeups_per_s` times a second at exponentially
//! distributed intervals (independent timers of unrelated sources look like
//! a Poisson process) and computes `work_us` before sleeping again. Ticks,
//! tick stopping and idle-state choice are the engine's and the cpuidle
//! governor's. The primary metric is the machine's average power in W.
//!
//! Both defaults are assumed: 5 wakeups per CPU per second (the order of
//! what PowerTOP reports for an idle server's per-CPU kernel timers) of 20 µs
//! each. `wakeups_per_s = 0` leaves the machine with nothing but its ticks.

use super::{Better, Dist, Metric, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const WAKEUPS_PER_S: ParamSpec = ParamSpec {
    name: "wakeups_per_s",
    unit: "",
    default: ParamDefault::Real(5.0),
    range: Range::Real { min: 0.0, max: 100_000.0 },
    help: "housekeeping wakeups per CPU per second, Poisson (assumed); 0 = none",
};

pub const WORK_US: ParamSpec = ParamSpec {
    name: "work_us",
    unit: "µs",
    default: ParamDefault::Real(20.0),
    range: Range::Real { min: 0.0, max: 1_000_000.0 },
    help: "CPU time of each wakeup at the reference frequency, µs (assumed)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "idle",
    description: "a nearly idle machine with per-CPU housekeeping wakeups; average power",
    metric: "power_w (average power of the machine, W, lower is better)",
    params: &[WAKEUPS_PER_S, WORK_US],
    ends: super::Ends::AtDuration,
    build,
};

const WAKEUPS: u16 = 0;

pub struct Idle {
    wakeups_per_s: f64,
    work_us: f64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload idle", spec);
    let w = Idle {
        wakeups_per_s: p.real(&WAKEUPS_PER_S)?,
        work_us: p.real(&WORK_US)?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Idle {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let mut setup = Setup {
            counters: vec!["wakeups".into()],
            ..Setup::default()
        };
        if self.wakeups_per_s <= 0.0 {
            return Ok(setup);
        }
        let f_ref = platform.cpu_types[0].base_khz;
        let work = super::cycles_for_ns_at(self.work_us * 1e3, f_ref);
        let gap_ns = 1e9 / self.wakeups_per_s;
        for cpu in 0..platform.nr_cpus() {
            let program = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.sleep(Dist::Exp { mean: gap_ns }).count(WAKEUPS, 1);
                    if work > 0.0 {
                        b.run(Dist::Fixed(work), 0.0);
                    }
                })
                .build();
            let mut t = TaskSpec::new(format!("kworker/{cpu}"), program);
            t.affinity = Some(vec![cpu]);
            setup.tasks.push(t);
        }
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let wakeups = r.counters[WAKEUPS as usize] as f64;
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
        vec![
            WAKEUPS_PER_S.show(self.wakeups_per_s),
            WORK_US.show(self.work_us),
        ]
    }
}

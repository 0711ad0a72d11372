//! `periodic`: tasks woken by a timer every period to do a fixed amount of
//! work, like the frame loop of a media player or rt-app's periodic recipe.
//!
//! Each task sleeps until the next multiple of `period_us` (an absolute
//! timer, no drift), then computes `run_us` worth of work *at the highest
//! frequency* (so at lower frequencies the same work takes longer). Task
//! start phases are drawn uniformly over one period from the seed, so tasks
//! do not wake in lock-step.
//!
//! Metrics: wakeup latency (timer expiry to running, which includes the idle
//! exit latency) and response time (timer expiry to the end of the period's
//! work) percentiles in µs, and deadline misses (response longer than the
//! period). Primary: p99 response time, lower is better.

use super::{
    latency_metrics, Better, Dist, Metric, ProgramBuilder, Record, Setup, Since, TaskSpec, Workload,
    WorkloadInfo,
};
use crate::error::{Error, Result};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const TASKS: ParamSpec = ParamSpec {
    name: "tasks",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 100_000 },
    help: "number of tasks",
};

pub const RUN_US: ParamSpec = ParamSpec {
    name: "run_us",
    unit: "µs",
    default: ParamDefault::Uint(1000),
    range: Range::Uint { min: 1, max: 3_600_000_000 },
    help: "work per period, in µs at the highest frequency",
};

pub const PERIOD_US: ParamSpec = ParamSpec {
    name: "period_us",
    unit: "µs",
    default: ParamDefault::Uint(10_000),
    range: Range::Uint { min: 1, max: 3_600_000_000 },
    help: "period, µs",
};

pub const CPU: ParamSpec = ParamSpec {
    name: "cpu",
    unit: "",
    default: ParamDefault::Unset("(none)"),
    range: Range::Uint { min: 0, max: 65_535 },
    help: "pin every task to this CPU",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "periodic",
    description: "timer-driven tasks doing fixed work each period; wakeup/response latency",
    metric: "response_p99_us (µs, lower is better)",
    params: &[TASKS, RUN_US, PERIOD_US, CPU],
    ends: super::Ends::AtDuration,
    build,
};

const RESPONSE: u16 = 0;
const WAKEUP: u16 = 1;

pub struct Periodic {
    tasks: u64,
    run_us: u64,
    period_us: u64,
    cpu: Option<u64>,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload periodic", spec);
    let w = Periodic {
        tasks: p.uint(&TASKS, &())?,
        run_us: p.uint(&RUN_US, &())?,
        period_us: p.uint(&PERIOD_US, &())?,
        cpu: p.opt_uint(&CPU)?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Periodic {
    fn setup(&self, platform: &Platform, rng: &mut Rng) -> Result<Setup> {
        if let Some(cpu) = self.cpu {
            if cpu as usize >= platform.nr_cpus() {
                return Err(Error::invalid(
                    "workload periodic",
                    "cpu",
                    cpu,
                    format!("a CPU of {} (0 to {})", platform.name, platform.nr_cpus() - 1),
                ));
            }
        }
        let ct = &platform.cpu_types[0];
        // run_us is defined at the highest frequency; the language counts
        // cycles at the reference frequency.
        let cycles = super::cycles_for_ns_at(self.run_us as f64 * 1e3, ct.max_khz());
        let period_ns = self.period_us * 1000;
        let mut tasks = Vec::new();
        for i in 0..self.tasks {
            let program = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.timer(period_ns)
                        .record(WAKEUP, Since::Wake, None)
                        .run(Dist::Fixed(cycles), 0.0)
                        .record(RESPONSE, Since::Wake, Some(period_ns));
                })
                .build();
            let mut t = TaskSpec::new(format!("periodic-{i}"), program);
            t.affinity = self.cpu.map(|c| vec![c as usize]);
            t.start_ns = rng.below(period_ns);
            tasks.push(t);
        }
        Ok(Setup {
            tasks,
            series: vec!["response".into(), "wakeup".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let mut m = Vec::new();
        latency_metrics("response", &r.series[RESPONSE as usize], &mut m);
        latency_metrics("wakeup", &r.series[WAKEUP as usize], &mut m);
        m.push(Metric::new(
            "deadline_misses",
            r.deadline_misses[RESPONSE as usize] as f64,
            "count",
            Better::Lower,
        ));
        m.push(Metric::new("periods", r.series[RESPONSE as usize].count as f64, "count", Better::Higher));
        m
    }

    fn primary(&self) -> &'static str {
        "response_p99_us"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![
            TASKS.show(self.tasks),
            RUN_US.show(self.run_us),
            PERIOD_US.show(self.period_us),
        ];
        if let Some(c) = self.cpu {
            v.push(CPU.show(c));
        }
        v
    }
}

//! Governors brought from outside the crate (govlab_core::external): they
//! run where the configuration says `external`, their names stand in the
//! result, and an error they meet stops the run with Error::Governor.

use govlab_core::api::RunConfig;
use govlab_core::cpufreq::CpufreqGovernor;
use govlab_core::cpuidle::{CpuidleGovernor, IdleDevice, Reflection, SelectArgs, Selection};
use govlab_core::error::Error;
use govlab_core::external::{ExternalGovernors, EXTERNAL};
use govlab_core::params::Spec;

use crate::fixtures::{FixedState, StepUp};

fn config(cpufreq: &str, cpuidle: &str) -> RunConfig {
    RunConfig {
        workload: Spec::parse("periodic:tasks=2,run_us=500,period_us=4000", "workload").unwrap(),
        cpufreq: Spec::new(cpufreq),
        cpuidle: Spec::new(cpuidle),
        duration_ns: 50_000_000,
        ..RunConfig::default()
    }
}

fn step_up(at_ns: u64) -> ExternalGovernors {
    ExternalGovernors {
        cpufreq: Some(Box::new(move |_| Ok(Box::new(StepUp { at_ns }) as Box<dyn CpufreqGovernor>))),
        cpuidle: None,
    }
}

/// A cpuidle governor that fails at its `fail_at`-th select.
struct FailsAt {
    fail_at: u32,
    selects: u32,
    now_ns: u64,
    error: Option<Error>,
}

impl CpuidleGovernor for FailsAt {
    fn name(&self) -> &'static str {
        "fails-at"
    }
    fn enable(&mut self, _dev: &IdleDevice<'_>) {}
    fn select(&mut self, _dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        self.selects += 1;
        if self.selects == self.fail_at {
            self.now_ns = args.now_ns;
            self.error = Some(Error::Governor {
                governor: "fails-at".into(),
                call: "select()".into(),
                time_ns: args.now_ns,
                message: "on purpose".into(),
            });
        }
        Selection { state: 0, stop_tick: true }
    }
    fn reflect(&mut self, _dev: &IdleDevice<'_>, _r: &Reflection) {}
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
}

/// The brought governor drives the run exactly as the same governor given
/// to the engine directly, and the result names it.
#[test]
fn external_governor_runs_like_a_direct_one() {
    let cfg = config(EXTERNAL, "ladder");
    let r = cfg.run_with(step_up(10_000_000), None, None).unwrap();
    assert_eq!(r.cpufreq, "step-up");
    assert_eq!(r.cpuidle, "ladder");
    let again = cfg.run_with(step_up(10_000_000), None, None).unwrap();
    assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&again).unwrap());
    // Stepping up at 10 ms: one transition per domain at most (boot is the
    // base frequency, start asks for the lowest, the timer for the highest).
    let later = cfg.run_with(step_up(40_000_000), None, None).unwrap();
    assert!(r.energy_j > later.energy_j, "{} <= {}", r.energy_j, later.energy_j);
}

/// `external` without a governor, a governor without `external`, and
/// settings on `external` are refused when the run is built.
#[test]
fn external_name_and_governor_must_agree() {
    let err = config(EXTERNAL, "ladder").run(None, None).unwrap_err();
    assert!(err.to_string().contains("none was given"), "{err}");
    let err = config("performance", "ladder").run_with(step_up(0), None, None).unwrap_err();
    assert!(err.to_string().contains("must name it 'external'"), "{err}");
    let mut cfg = config(EXTERNAL, "ladder");
    cfg.cpufreq = cfg.cpufreq.with("up_threshold", 80);
    let err = cfg.run_with(step_up(0), None, None).unwrap_err();
    assert!(err.to_string().contains("up_threshold"), "{err}");
}

/// An error the governor hands over stops the run with it, at the call's
/// simulated time.
#[test]
fn governor_error_stops_the_run() {
    let ext = ExternalGovernors {
        cpufreq: None,
        cpuidle: Some(Box::new(|_| {
            Ok(Box::new(FailsAt { fail_at: 20, selects: 0, now_ns: 0, error: None }) as Box<dyn CpuidleGovernor>)
        })),
    };
    let err = config("performance", EXTERNAL).run_with(ext, None, None).unwrap_err();
    let Error::Governor { governor, call, time_ns, .. } = &err else { panic!("not a governor error: {err}") };
    assert_eq!((governor.as_str(), call.as_str()), ("fails-at", "select()"));
    assert!(*time_ns > 0 && *time_ns < 50_000_000, "{time_ns}");
    let text = err.to_string();
    assert!(text.starts_with("fails-at: select() at 0.0"), "{text}");
    assert!(text.ends_with(&format!("({time_ns} ns): on purpose")), "{text}");
}

/// An external cpuidle governor chooses the states, and the result names it.
#[test]
fn external_cpuidle_result_names_it() {
    let ext = ExternalGovernors {
        cpufreq: None,
        cpuidle: Some(Box::new(|_| Ok(Box::new(FixedState(1)) as Box<dyn CpuidleGovernor>))),
    };
    let r = config("performance", EXTERNAL).run_with(ext, None, None).unwrap();
    assert_eq!(r.cpuidle, "fixed");
    assert!(r.cpus.iter().all(|c| c.idle_states[0].usage == 0), "state 0 never chosen");
}

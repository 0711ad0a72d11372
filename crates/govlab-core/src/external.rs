//! Governors from outside the crate: how a caller hands a run a governor of
//! its own.
//!
//! govlab's governors are found by name in the registries of
//! [`cpufreq`](crate::cpufreq) and [`cpuidle`](crate::cpuidle). A caller (the
//! Python bindings, for governors written in Python) may instead bring one:
//! the run configuration names the governor [`EXTERNAL`], and
//! [`ExternalGovernors`] carries a factory that builds it once the platform
//! is known. The engine then drives it through the same trait as a built-in
//! one and knows nothing else about it: its `name()` stands for it in
//! messages and in the result, its `tunables()` in `--show-config`.
//!
//! Unlike a built-in governor, an external one can fail while the run goes
//! on: its code raises, or it answers something the engine cannot apply (a
//! state that does not exist). It then keeps the error, answers something
//! harmless until asked, and hands the error over through the traits'
//! `take_error`. The engine asks after every event and stops the run with
//! the error (an [`Error::Governor`]): the event in progress completes, and
//! no result exists.
//!
//! The caller converts what its governor answers into the plain values
//! below ([`CpufreqAnswer`], [`CpufreqRequests`], a state index); a value of
//! the wrong type is the caller's conversion error. Whether a value can be
//! applied (a frequency within the policy limits, an HWP request that fits
//! the hardware, an idle state that exists and is enabled) is checked here
//! and only here: [`apply_cpufreq`], [`check_target_khz`],
//! [`check_selection`]. During a cpufreq call the governor reads the
//! scheduler through the [`SchedView`](crate::cpufreq::SchedView) of the `Policy` it was given, for
//! the call only.

use crate::cpufreq::{self, CpufreqGovernor, HwpRequest, Policy, Relation};
use crate::cpuidle::{self, CpuidleGovernor, IdleDevice, Selection};
use crate::kernel::BuildCtx;
use crate::error::{Error, Result};
use crate::params::Spec;

/// The governor name that stands for the one the caller brings.
pub const EXTERNAL: &str = "external";

/// Builds an external cpufreq governor for the run's machine and kernel.
pub type CpufreqFactory = Box<dyn FnOnce(&BuildCtx) -> Result<Box<dyn CpufreqGovernor>>>;
/// Builds an external cpuidle governor for the run's machine and kernel.
pub type CpuidleFactory = Box<dyn FnOnce(&BuildCtx) -> Result<Box<dyn CpuidleGovernor>>>;

/// The governors a caller brings to one run, used where the configuration
/// names [`EXTERNAL`].
#[derive(Default)]
pub struct ExternalGovernors {
    pub cpufreq: Option<CpufreqFactory>,
    pub cpuidle: Option<CpuidleFactory>,
}

/// Check that `spec` and the caller agree: `external` needs a governor
/// brought by the caller and takes no settings (that governor carries its
/// own); a governor brought needs `external`.
fn check_spec(spec: &Spec, brought: bool, what: &str) -> Result<()> {
    let named = spec.name == EXTERNAL;
    if named && !brought {
        return Err(Error::invalid(
            what,
            "name",
            EXTERNAL,
            "'external' stands for a governor the caller brings (a Python class, or py:FILE:CLASS); none was given",
        ));
    }
    if brought && !named {
        return Err(Error::invalid(
            what,
            "name",
            &spec.name,
            "a governor was brought from outside, so the configuration must name it 'external'",
        ));
    }
    if let Some((key, value)) = spec.params.first().filter(|_| named) {
        return Err(Error::invalid(
            what,
            key,
            value,
            "an external governor takes its settings from the caller, not from the spec",
        ));
    }
    Ok(())
}

/// The cpufreq governor `spec` names, or the caller's.
pub(crate) fn build_cpufreq(
    spec: &Spec,
    factory: Option<CpufreqFactory>,
    ctx: &BuildCtx,
) -> Result<Box<dyn CpufreqGovernor>> {
    check_spec(spec, factory.is_some(), "cpufreq")?;
    match factory {
        Some(build) => build(ctx),
        None => cpufreq::build_for(spec, ctx),
    }
}

/// The cpuidle governor `spec` names, or the caller's.
pub(crate) fn build_cpuidle(
    spec: &Spec,
    factory: Option<CpuidleFactory>,
    ctx: &BuildCtx,
) -> Result<Box<dyn CpuidleGovernor>> {
    check_spec(spec, factory.is_some(), "cpuidle")?;
    match factory {
        Some(build) => build(ctx),
        None => cpuidle::build_for(spec, ctx),
    }
}

/// How a result names the governor: the spec as written, or for an external
/// governor its own name.
pub(crate) fn spec_text(spec: &Spec, governor_name: &str) -> String {
    if spec.name == EXTERNAL {
        governor_name.to_string()
    } else {
        spec.to_text()
    }
}

/// What one call of an external cpufreq governor answered, as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpufreqAnswer {
    /// No answer (Python's None): only the requests made during the call apply.
    Nothing,
    /// A frequency, kHz, as given: `set_target(khz, Relation::L)`.
    Khz(i64),
    /// An HWP request's fields (MSR_HWP_REQUEST), as given.
    Hwp { min_perf: i64, max_perf: i64, desired_perf: i64, epp: i64 },
    /// Something that is none of these (a string, a float, an int too big).
    Other,
}

/// What an external cpufreq governor asked for through its policy during
/// one call, besides its answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpufreqRequests {
    /// A frequency and relation, already checked by [`check_target_khz`].
    pub target: Option<(u32, Relation)>,
    /// (delay from now ns, deferrable)
    pub timer: Option<(u64, bool)>,
    pub cancel_timer: bool,
}

/// Why a policy that takes HWP requests refuses a frequency.
pub const HWP_TAKES_NO_FREQUENCY: &str = "with HWP on, intel_pstate's active mode writes HWP requests, and the \
    hardware ignores P-state requests (IA32_PERF_CTL): return an HwpRequest";

/// A frequency an external governor asks for during a call (its policy's
/// `set_target`): within the policy limits `min_khz..=max_khz`, and only
/// where the policy takes frequencies (`hwp`: it takes HWP requests).
pub fn check_target_khz(khz: i64, min_khz: u32, max_khz: u32, hwp: bool) -> std::result::Result<u32, String> {
    if hwp {
        return Err(HWP_TAKES_NO_FREQUENCY.to_string());
    }
    match u32::try_from(khz) {
        Ok(k) if (min_khz..=max_khz).contains(&k) => Ok(k),
        _ => Err(format!("{khz} kHz is outside the policy limits, {min_khz} to {max_khz} kHz")),
    }
}

/// cpufreq's relation written as a letter: `L`, `H` or `C`.
pub fn relation(text: &str) -> std::result::Result<Relation, String> {
    match text {
        "L" => Ok(Relation::L),
        "H" => Ok(Relation::H),
        "C" => Ok(Relation::C),
        other => Err(format!("relation {other:?} is not one of \"L\", \"H\", \"C\"")),
    }
}

/// Apply what an external governor's call answered and asked for to the
/// policy: the answer if it is one (checked against the policy: limits,
/// HWP), else the target asked for; then the timer requests. `shown` gives
/// the answer as the governor wrote it, for the message when it cannot be
/// applied (then nothing is applied).
pub fn apply_cpufreq(p: &mut Policy<'_>, answer: CpufreqAnswer, shown: impl FnOnce() -> String, req: CpufreqRequests) -> std::result::Result<(), String> {
    match answer {
        CpufreqAnswer::Nothing => {
            if let Some((khz, relation)) = req.target {
                p.set_target(khz, relation);
            }
        }
        CpufreqAnswer::Hwp { min_perf, max_perf, desired_perf, epp } => {
            let hwp = HwpRequest::from_fields(min_perf, max_perf, desired_perf, epp)
                .and_then(|hwp| p.check_hwp_request(&hwp).map(|()| hwp))
                .map_err(|why| format!("returned {}: {why}", shown()))?;
            p.set_hwp_request(hwp);
        }
        CpufreqAnswer::Khz(_) | CpufreqAnswer::Other if p.hwp.is_some() => {
            let what = if answer == CpufreqAnswer::Other { "expected an HwpRequest or None (HWP is on)" } else { HWP_TAKES_NO_FREQUENCY };
            return Err(format!("returned {}; {what}", shown()));
        }
        CpufreqAnswer::Khz(khz) => match u32::try_from(khz) {
            Ok(khz) if (p.min_khz..=p.max_khz).contains(&khz) => p.set_target(khz, Relation::L),
            _ => return Err(format!("returned {}: outside the limits of policy {}, {} to {} kHz", shown(), p.id, p.min_khz, p.max_khz)),
        },
        CpufreqAnswer::Other => {
            return Err(format!("returned {}; expected a frequency in kHz (int), an HwpRequest or None", shown()));
        }
    }
    if req.cancel_timer {
        p.cancel_timer();
    }
    if let Some((delay_ns, deferrable)) = req.timer {
        p.arm_timer(delay_ns, deferrable);
    }
    Ok(())
}

/// The idle state an external cpuidle governor's select chose, if `dev`
/// has it and it is enabled.
pub fn check_selection(dev: &IdleDevice<'_>, state: i64, stop_tick: bool) -> std::result::Result<Selection, String> {
    let n = dev.states.len();
    match usize::try_from(state) {
        Ok(state) if state < n && !dev.disabled[state] => Ok(Selection { state, stop_tick }),
        Ok(state) if state < n => Err(format!("returned state {state} on CPU {}, which is disabled", dev.cpu)),
        _ => Err(format!("returned state {state} on CPU {}, which has states 0 to {}", dev.cpu, n - 1)),
    }
}

/// What an external governor answers until the engine takes its error and
/// stops the run: the shallowest enabled state, tick stopped.
pub fn harmless_selection(dev: &IdleDevice<'_>) -> Selection {
    let state = dev.disabled.iter().position(|&d| !d).unwrap_or(0);
    Selection { state, stop_tick: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_must_exist_and_be_enabled() {
        let states = crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap().cpu_types[0].idle_states.clone();
        let mut disabled = vec![false; states.len()];
        disabled[1] = true;
        let dev = IdleDevice { cpu: 2, states: &states, disabled: &disabled };
        assert_eq!(check_selection(&dev, 0, false).map(|s| (s.state, s.stop_tick)), Ok((0, false)));
        assert_eq!(check_selection(&dev, 1, true).unwrap_err(), "returned state 1 on CPU 2, which is disabled");
        let last = states.len() - 1;
        assert_eq!(check_selection(&dev, -1, true).unwrap_err(), format!("returned state -1 on CPU 2, which has states 0 to {last}"));
        assert_eq!(harmless_selection(&dev).state, 0);
    }
}

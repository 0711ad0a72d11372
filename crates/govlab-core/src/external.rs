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

use crate::cpufreq::{self, CpufreqGovernor};
use crate::cpuidle::{self, CpuidleGovernor};
use crate::error::{Error, Result};
use crate::params::Spec;
use crate::platform::Platform;

/// The governor name that stands for the one the caller brings.
pub const EXTERNAL: &str = "external";

/// Builds an external cpufreq governor for the run's platform.
pub type CpufreqFactory = Box<dyn FnOnce(&Platform) -> Result<Box<dyn CpufreqGovernor>>>;
/// Builds an external cpuidle governor for the run's platform.
pub type CpuidleFactory = Box<dyn FnOnce(&Platform) -> Result<Box<dyn CpuidleGovernor>>>;

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
pub(crate) fn build_cpufreq(spec: &Spec, factory: Option<CpufreqFactory>, platform: &Platform) -> Result<Box<dyn CpufreqGovernor>> {
    check_spec(spec, factory.is_some(), "--cpufreq")?;
    match factory {
        Some(build) => build(platform),
        None => cpufreq::build(spec, platform),
    }
}

/// The cpuidle governor `spec` names, or the caller's.
pub(crate) fn build_cpuidle(spec: &Spec, factory: Option<CpuidleFactory>, platform: &Platform) -> Result<Box<dyn CpuidleGovernor>> {
    check_spec(spec, factory.is_some(), "--cpuidle")?;
    match factory {
        Some(build) => build(platform),
        None => cpuidle::build(spec, platform),
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


//! `powersave`: run every policy at its lowest allowed frequency.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/cpufreq_powersave.c. On
//! start (and on every limits change) the governor asks for policy->min with
//! RELATION_L. (Not to be confused with intel_pstate's own `powersave`,
//! which is load-driven.)

use super::{CpufreqGovernor, GovernorInfo, Policy, Relation};
use crate::error::Result;
use crate::kernel::BuildCtx;
use crate::params::{Params, Spec};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "powersave",
    description: "always the lowest allowed frequency",
    models: "Linux v6.8 drivers/cpufreq/cpufreq_powersave.c",
    params: &[],
    eras: &[],
    patches: &[],
    build,
};

pub struct Powersave;

fn build(spec: &Spec, _ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    Params::new("cpufreq governor powersave", spec).finish()?;
    Ok(Box::new(Powersave))
}

impl CpufreqGovernor for Powersave {
    fn name(&self) -> &'static str {
        "powersave"
    }

    fn strict_target(&self) -> bool {
        true
    }

    fn start(&mut self, policy: &mut Policy<'_>) {
        policy.set_target(policy.min_khz, Relation::L);
    }

    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

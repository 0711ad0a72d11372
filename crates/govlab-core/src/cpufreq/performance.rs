//! `performance`: run every policy at its highest allowed frequency.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/cpufreq_performance.c. On
//! start (and on every limits change) the governor asks for policy->max with
//! RELATION_H; it never looks at load.

use super::{CpufreqGovernor, GovernorInfo, Policy, Relation};
use crate::error::Result;
use crate::kernel::BuildCtx;
use crate::params::{Params, Spec};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "performance",
    description: "always the highest allowed frequency",
    models: "Linux v6.8 drivers/cpufreq/cpufreq_performance.c",
    params: &[],
    eras: &[],
    patches: &[],
    build,
};

pub struct Performance;

fn build(spec: &Spec, _ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    Params::new("cpufreq governor performance", spec).finish()?;
    Ok(Box::new(Performance))
}

impl CpufreqGovernor for Performance {
    fn name(&self) -> &'static str {
        "performance"
    }

    fn strict_target(&self) -> bool {
        true
    }

    fn start(&mut self, policy: &mut Policy<'_>) {
        policy.set_target(policy.max_khz, Relation::H);
    }

    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

//! `userspace`: run at the frequency user space wrote to scaling_setspeed.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/cpufreq_userspace.c. The
//! value (kHz) goes to the driver with RELATION_L after being clamped to the
//! policy limits, as __cpufreq_driver_target does; a value that is not a
//! number is rejected, as the sysfs store rejects it. Unset, the governor
//! keeps the frequency the policy had when it started (policy->cur), which
//! for govlab is the highest non-turbo frequency (the boot frequency of most
//! firmware; assumed).
//!
//! One deliberate step past v6.8: the governor declares a strict target
//! (CPUFREQ_GOV_STRICT_TARGET), as the flags of cpufreq_gov_userspace in
//! drivers/cpufreq/cpufreq_userspace.c do since 2025. In v6.8, intel_cpufreq with HWP
//! wrote scaling_setspeed as the HWP *minimum* only, so the hardware was free
//! to run faster and the governor did not fix the frequency, which is the
//! one thing it is for.

use super::{CpufreqGovernor, GovernorInfo, Policy, Relation};
use crate::error::Result;
use crate::kernel::BuildCtx;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec, UINT_MAX};

/// scaling_setspeed, kHz (store_scaling_setspeed: any unsigned int, clamped
/// to the policy limits when applied). Unset keeps policy->cur.
pub const SCALING_SETSPEED: ParamSpec<BuildCtx> = ParamSpec {
    name: "scaling_setspeed",
    unit: "kHz",
    default: ParamDefault::Unset("policy->cur at start (base frequency)"),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "frequency in kHz; clamped to the policy limits, resolved to the lowest OPP at or above it",
};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "userspace",
    description: "a fixed frequency chosen by the user",
    models: "Linux v6.8 drivers/cpufreq/cpufreq_userspace.c",
    params: &[SCALING_SETSPEED],
    eras: &[],
    patches: &[],
    build,
};

/// Tunables of the userspace governor (sysfs names and units).
#[derive(Debug, Clone, Copy)]
pub struct UserspaceTunables {
    /// scaling_setspeed, kHz ([`SCALING_SETSPEED`]); None = keep policy->cur.
    pub scaling_setspeed: Option<u32>,
}

pub struct Userspace {
    tunables: UserspaceTunables,
}

fn build(spec: &Spec, _ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let mut p = Params::new("cpufreq governor userspace", spec);
    let scaling_setspeed = p.opt_uint(&SCALING_SETSPEED)?.map(|v| v as u32);
    p.finish()?;
    Ok(Box::new(Userspace {
        tunables: UserspaceTunables { scaling_setspeed },
    }))
}

impl CpufreqGovernor for Userspace {
    fn name(&self) -> &'static str {
        "userspace"
    }

    fn strict_target(&self) -> bool {
        true
    }

    fn start(&mut self, policy: &mut Policy<'_>) {
        let khz = self.tunables.scaling_setspeed.unwrap_or(policy.cur_khz);
        policy.set_target(khz, Relation::L);
    }

    fn tunables(&self) -> Vec<(String, String)> {
        let v = self
            .tunables
            .scaling_setspeed
            .map_or_else(|| "<policy->cur>".to_string(), |k| k.to_string());
        vec![SCALING_SETSPEED.show(v)]
    }
}

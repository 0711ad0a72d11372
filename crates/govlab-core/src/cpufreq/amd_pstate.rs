//! amd-pstate: AMD's CPPC cpufreq driver, in its three modes, and the own
//! policies of its active mode (`amd_pstate_epp`).
//!
//! Models: torvalds/linux drivers/cpufreq/amd-pstate.c as read at
//! 009d1c29a451 (2025), and Documentation/admin-guide/pm/amd-pstate.rst.
//! The driver turns a request into the CPPC request's four fields
//! (min, max, desired, EPP; [`crate::platform::cppc`]), which the firmware
//! acts on (`machine/hwp.rs`):
//!
//! | mode (kernel) | driver | what a request becomes |
//! |---|---|---|
//! | passive (v5.17, ec437d71db77) | `amd-pstate` | `amd_pstate_update_freq`: desired = `freq_to_perf(target)`; min and max the policy limits' levels (`amd_pstate_update_min_max_limit`); `amd_pstate_update` clamps desired into [min, max]. EPP 0 (not written) |
//! | guided (v6.4, 2dd6d0ebf740) | `amd-pstate` | as passive, then for a governor with CPUFREQ_GOV_DYNAMIC_SWITCHING (ondemand, conservative, schedutil) `amd_pstate_update` moves desired into min and writes desired 0: the firmware picks in [target, max]. performance, powersave and userspace keep desired |
//! | active (v6.3, ffa5096a7c33) | `amd-pstate-epp` (setpolicy) | `amd_pstate_epp_update_limit`: min and max the limits' levels (performance: min = min(nominal, max)), desired 0, EPP 0 under performance, else the policy's EPP |
//!
//! Which mode runs is the kernel's `amd_pstate=` (the platform override
//! `amd_pstate`); without it a server of family below 0x1A (Zen 4 and
//! older) boots acpi-cpufreq (`amd_pstate_init`: "driver load is disabled"
//! on a server or unspecified ACPI PM profile), so the platform's file
//! driver stands. A mode the kernel predates is refused
//! ([`check_mode`]).
//!
//! Left out: `adjust_perf` (schedutil's per-CPU perf path: govlab's
//! schedutil asks for frequencies, as on intel_cpufreq), the driver's own
//! transition delay (`AMD_PSTATE_TRANSITION_DELAY`, 1 ms; the policy's
//! delay comes from the CPU type's latency as on acpi-cpufreq), the initial
//! policy->min at the lowest non-linear frequency (`amd_pstate_verify`,
//! newer kernels), preferred-core rankings, boost switching, and the
//! earlier forms of each computation (v6.8 took desired as
//! round(target × highest / max_freq) and min/max as lowest/highest; with
//! the default limits the fields differ by at most one level).

use super::{CpufreqGovernor, GovernorInfo, Policy};
use crate::error::{Error, Result};
use crate::kernel::{BuildCtx, EraId};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::cppc::Cppc;
use crate::platform::hwp::HwpRequest;
use crate::platform::AmdPstateMode;

/// AMD_CPPC_EPP_BALANCE_PERFORMANCE: the EPP amd-pstate-epp writes under
/// powersave on a client profile, and (assumed) the one an EPYC's firmware
/// leaves, which the driver keeps on a server profile
/// (`amd_pstate_epp_cpu_init`: `epp_default = amd_pstate_get_epp()`).
pub const AMD_CPPC_EPP_BALANCE_PERFORMANCE: u32 = 0x80;

/// The EPP names `energy_performance_preference` takes
/// (`energy_perf_strings` / `epp_values`).
const EPP_NAMES: [(&str, u32); 4] = [("performance", 0), ("balance_performance", 0x80), ("balance_power", 0xBF), ("power", 0xFF)];

/// The era a mode arrived in.
pub fn mode_era(mode: AmdPstateMode) -> EraId {
    match mode {
        AmdPstateMode::Passive => EraId::AmdPstate,
        AmdPstateMode::Active => EraId::AmdPstateEpp,
        AmdPstateMode::Guided => EraId::AmdPstateGuided,
    }
}

/// Refuse an `amd_pstate=` mode the run's kernel does not have.
///
/// # Errors
/// The kernel predates the mode.
pub fn check_mode(ctx: &BuildCtx) -> Result<()> {
    let Some(mode) = ctx.platform.amd_pstate else { return Ok(()) };
    // The version asked is compared, as for a platform's min_kernel: a
    // release between two modelled ones has the driver if it is past the
    // mode's first.
    let era = mode_era(mode).era();
    if ctx.kernel.requested >= era.first {
        return Ok(());
    }
    Err(Error::Unsupported(format!(
        "platform {}: amd_pstate={} needs kernel {} or later, not {}: it arrived with {} (\"{}\"); drop amd_pstate= for acpi-cpufreq{}",
        ctx.platform.name,
        mode.name(),
        era.first,
        ctx.kernel.requested,
        era.commit,
        era.subject,
        if mode == AmdPstateMode::Passive || ctx.kernel.requested < EraId::AmdPstate.first() { "" } else { ", or use amd_pstate=passive" },
    )))
}

/// The levels of the policy limits (`amd_pstate_update_min_max_limit`):
/// (min_limit_perf, max_limit_perf). Under active mode's performance policy
/// the minimum rises to the nominal level (or the maximum, if lower).
pub fn limit_perfs(c: &Cppc, min_khz: u32, max_khz: u32, performance: bool) -> (u32, u32) {
    let max = c.khz_to_perf(max_khz);
    let min = c.khz_to_perf(min_khz);
    (if performance { c.nominal_perf.min(max) } else { min }, max)
}

/// Passive and guided modes: the request a governor's `target_khz` writes
/// (`amd_pstate_update_freq`, then `amd_pstate_update`). `guided_dynamic`:
/// guided mode under a governor with CPUFREQ_GOV_DYNAMIC_SWITCHING.
pub fn target_request(c: &Cppc, min_khz: u32, max_khz: u32, target_khz: u32, guided_dynamic: bool) -> HwpRequest {
    let (min_perf, max_perf) = limit_perfs(c, min_khz, max_khz, false);
    let des_perf = c.khz_to_perf(target_khz).clamp(min_perf, max_perf);
    if guided_dynamic {
        return HwpRequest { min_perf: des_perf, max_perf, desired_perf: 0, epp: 0 };
    }
    HwpRequest { min_perf, max_perf, desired_perf: des_perf, epp: 0 }
}

/// Active mode's two policies (scaling_governor under amd-pstate-epp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EppPolicy {
    Powersave,
    Performance,
}

/// Active mode: the request `amd_pstate_epp_set_policy` writes for a policy
/// (`amd_pstate_epp_update_limit`).
pub fn epp_request(c: &Cppc, min_khz: u32, max_khz: u32, policy: EppPolicy, epp: u32) -> HwpRequest {
    let performance = policy == EppPolicy::Performance;
    let (min_perf, max_perf) = limit_perfs(c, min_khz, max_khz, performance);
    HwpRequest { min_perf, max_perf, desired_perf: 0, epp: if performance { 0 } else { epp } }
}

// ---- active mode's own policies ----

/// scaling_governor: the driver's fallback is performance on a server or
/// unspecified ACPI PM profile, powersave otherwise
/// (`amd_pstate_epp_cpu_init`), which is what runs when the kernel's
/// default governor is neither (the distributions' schedutil).
pub const POLICY: ParamSpec<BuildCtx> = ParamSpec {
    name: "policy",
    unit: "",
    default: ParamDefault::Described {
        word: "powersave",
        doc: "performance on a server or unspecified ACPI PM profile, else powersave (the driver's fallback)",
    },
    range: Range::Choice(&["powersave", "performance"]),
    help: "powersave (firmware choice within the limits, by EPP) or performance (EPP 0, min at nominal)",
};

/// energy_performance_preference: 0..255 or a name of [`EPP_NAMES`].
pub const EPP: ParamSpec<BuildCtx> = ParamSpec {
    name: "epp",
    unit: "",
    default: ParamDefault::Derived {
        doc: "128 (balance_performance; on a server the firmware's, assumed the same)",
        value: |_| u64::from(AMD_CPPC_EPP_BALANCE_PERFORMANCE),
    },
    range: Range::Custom,
    help: "powersave only: energy_performance_preference 0..255 or performance, balance_performance, balance_power, power",
};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "amd_pstate_epp",
    description: "amd-pstate's active mode: CPPC limits and EPP, the firmware picks the level",
    models: "drivers/cpufreq/amd-pstate.c @ 009d1c29a451, amd_pstate_epp_set_policy (active mode from v6.3)",
    params: &[POLICY, EPP],
    eras: &[EraId::AmdPstateEpp],
    patches: &[],
    build,
};

/// The fallback policy of `amd_pstate_epp_cpu_init` on the platform.
pub fn fallback_policy(platform: &crate::platform::Platform) -> &'static str {
    use crate::platform::AcpiPmProfile;
    let p = platform.acpi_pm_profile;
    let server = matches!(p, AcpiPmProfile::EnterpriseServer | AcpiPmProfile::SohoServer | AcpiPmProfile::PerformanceServer);
    if server || p == AcpiPmProfile::Unspecified {
        "performance"
    } else {
        "powersave"
    }
}

/// amd-pstate-epp's policy on every CPU.
pub struct AmdPstateEpp {
    policy: EppPolicy,
    epp: u32,
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let owner = "cpufreq governor amd_pstate_epp";
    let given = |key: &str| spec.params.iter().any(|(k, _)| k == key);
    let mut p = Params::new(owner, spec);
    let word = p.word(&POLICY)?;
    let policy = match if given("policy") { word } else { fallback_policy(&ctx.platform) } {
        "performance" => EppPolicy::Performance,
        _ => EppPolicy::Powersave,
    };
    let epp = match p.string(EPP.name) {
        None => EPP.uint_default(ctx) as u32,
        Some(v) => EPP_NAMES
            .iter()
            .find(|(n, _)| *n == v)
            .map(|&(_, e)| e)
            .or_else(|| v.parse::<u32>().ok().filter(|&e| e <= 255))
            .ok_or_else(|| Error::invalid(owner, "epp", &v, "0 to 255, or performance, balance_performance, balance_power, power (default 128)"))?,
    };
    // amd_pstate_set_energy_pref_index: "EPP cannot be set under
    // performance policy".
    if policy == EppPolicy::Performance && given("epp") && epp != 0 {
        return Err(Error::invalid(owner, "epp", epp, "0 under policy=performance (the driver refuses another EPP there)"));
    }
    p.finish()?;
    if !ctx.platform.cpu_types.iter().all(|t| t.cppc.is_some()) {
        return Err(Error::Unsupported(format!(
            "{owner}: platform {} gives no CPPC levels; amd-pstate runs on AMD CPUs with _CPC",
            ctx.platform.name
        )));
    }
    Ok(Box::new(AmdPstateEpp { policy, epp }))
}

impl CpufreqGovernor for AmdPstateEpp {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn driver(&self) -> Option<&'static str> {
        Some("amd-pstate-epp")
    }

    /// `amd_pstate_epp_set_policy`: one write per policy, on start and on
    /// every limits change; the firmware does the rest.
    fn start(&mut self, policy: &mut Policy<'_>) {
        let Some(c) = policy.cppc else { return };
        policy.set_hwp_request(epp_request(&c, policy.min_khz, policy.max_khz, self.policy, self.epp));
    }

    fn tunables(&self) -> Vec<(String, String)> {
        let policy = if self.policy == EppPolicy::Performance { "performance" } else { "powersave" };
        let epp = if self.policy == EppPolicy::Performance { 0 } else { self.epp };
        vec![("policy".into(), policy.into()), ("epp".into(), epp.to_string())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// EPYC 7702's levels (platform epyc-7702-2s): nominal 152 = 2.0 GHz,
    /// lowest 31 (408 MHz), lowest non-linear 115, highest 255 (3.355 GHz).
    fn rome() -> Cppc {
        Cppc { highest_perf: 255, nominal_perf: 152, lowest_nonlinear_perf: 115, lowest_perf: 31, nominal_khz: 2_000_000 }
    }
    const MIN: u32 = 400_000;
    const MAX: u32 = 3_300_000;

    /// Passive: desired = ⌈target × 152 / 2 GHz⌉ within the limits' levels
    /// (⌈0.4 GHz⌉ → 31, ⌈3.3 GHz⌉ → 251), min and max those levels.
    #[test]
    fn passive_writes_the_target_as_desired() {
        let c = rome();
        let r = target_request(&c, MIN, MAX, 2_000_000, false);
        assert_eq!(r, HwpRequest { min_perf: 31, max_perf: 251, desired_perf: 152, epp: 0 });
        assert_eq!(target_request(&c, MIN, MAX, 1_000_000, false).desired_perf, 76);
        assert_eq!(target_request(&c, MIN, MAX, 1_000_001, false).desired_perf, 77, "rounded up");
        // A limit narrower than the scale clamps desired into it.
        let r = target_request(&c, 1_500_000, 2_000_000, 3_000_000, false);
        assert_eq!((r.min_perf, r.desired_perf, r.max_perf), (114, 152, 152));
        let r = target_request(&c, 1_500_000, 2_000_000, 500_000, false);
        assert_eq!(r.desired_perf, 114);
    }

    /// Guided under a dynamic governor: the target becomes the minimum and
    /// desired 0 hands the choice to the firmware; under a static one
    /// (performance, powersave) it is passive's request.
    #[test]
    fn guided_moves_the_target_into_min() {
        let c = rome();
        let r = target_request(&c, MIN, MAX, 2_000_000, true);
        assert_eq!(r, HwpRequest { min_perf: 152, max_perf: 251, desired_perf: 0, epp: 0 });
        assert_eq!(target_request(&c, MIN, MAX, 2_000_000, false).desired_perf, 152);
        assert_eq!(target_request(&c, MIN, MAX, 100_000, true).min_perf, 31);
    }

    /// Active: desired 0 always; powersave keeps the limits and its EPP;
    /// performance writes EPP 0 and lifts min to nominal.
    #[test]
    fn active_writes_limits_and_epp() {
        let c = rome();
        let r = epp_request(&c, MIN, MAX, EppPolicy::Powersave, 0x80);
        assert_eq!(r, HwpRequest { min_perf: 31, max_perf: 251, desired_perf: 0, epp: 0x80 });
        let r = epp_request(&c, MIN, MAX, EppPolicy::Performance, 0x80);
        assert_eq!(r, HwpRequest { min_perf: 152, max_perf: 251, desired_perf: 0, epp: 0 });
        // A maximum below nominal caps performance's minimum.
        let r = epp_request(&c, MIN, 1_500_000, EppPolicy::Performance, 0x80);
        assert_eq!((r.min_perf, r.max_perf), (114, 114));
    }

    fn ctx(platform: &str, kernel: &str) -> BuildCtx {
        let plat = crate::platform::load_named(&Spec::parse(platform, "platform").unwrap()).unwrap();
        BuildCtx::new(plat, crate::kernel::KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap())
    }

    /// Each mode from the release that brought it, by the number asked:
    /// passive 5.17, active 6.3, guided 6.4; older kernels are refused with
    /// the commit and what would run.
    #[test]
    fn modes_need_their_kernels() {
        for (mode, first, older, commit) in
            [("passive", "5.17", "5.16", "ec437d71db77"), ("active", "6.3", "6.2", "ffa5096a7c33"), ("guided", "6.4", "6.3", "2dd6d0ebf740")]
        {
            let plat = format!("epyc-7702-2s:amd_pstate={mode}");
            check_mode(&ctx(&plat, first)).unwrap();
            check_mode(&ctx(&plat, "6.18")).unwrap();
            let e = check_mode(&ctx(&plat, older)).unwrap_err().to_string();
            assert!(e.contains(&format!("amd_pstate={mode} needs kernel {first} or later, not {older}")), "{e}");
            assert!(e.contains(commit), "{e}");
        }
        check_mode(&ctx("epyc-7702-2s", "3.15")).unwrap();
    }

    /// Which driver a governor gets in each mode; the generic governors are
    /// refused in active mode and the EPP policies outside it.
    #[test]
    fn each_mode_resolves_its_driver() {
        use super::super::driver::{resolve, CpufreqDriver};
        let drv = |plat: &str, gov: &str| {
            let spec = Spec::parse(gov, "cpufreq").unwrap();
            let c = super::super::resolve_ctx(&spec, ctx(plat, "6.8")).unwrap();
            super::super::build_for(&spec, &c).and_then(|g| resolve(&c, g.as_ref()))
        };
        assert_eq!(drv("epyc-7702-2s", "schedutil").unwrap(), CpufreqDriver::Table("acpi-cpufreq"));
        let p = "epyc-7702-2s:amd_pstate=passive";
        assert_eq!(drv(p, "ondemand").unwrap(), CpufreqDriver::AmdPstate { guided: false, guided_dynamic: false });
        let g = "epyc-7702-2s:amd_pstate=guided";
        assert_eq!(drv(g, "conservative").unwrap(), CpufreqDriver::AmdPstate { guided: true, guided_dynamic: true });
        assert_eq!(drv(g, "userspace").unwrap(), CpufreqDriver::AmdPstate { guided: true, guided_dynamic: false });
        let a = "epyc-7702-2s:amd_pstate=active";
        assert_eq!(drv(a, "powersave").unwrap(), CpufreqDriver::AmdPstateEpp);
        let e = drv(a, "schedutil").unwrap_err().to_string();
        assert!(e.contains("amd-pstate-epp (amd_pstate=active)") && e.contains("amd_pstate=passive or guided"), "{e}");
        let e = drv(p, "amd_pstate_epp").unwrap_err().to_string();
        assert!(e.contains("amd_pstate=active runs it"), "{e}");
        let e = drv("epyc-7702-2s", "amd_pstate_epp").unwrap_err().to_string();
        assert!(e.contains("acpi-cpufreq"), "{e}");
        // The server profile's fallback policy is performance.
        let c = ctx(a, "6.8");
        assert_eq!(super::super::default_governor(&c.platform, &c.kernel), "performance");
        assert_eq!(super::super::kernel_name(&Spec::new("performance"), &c).unwrap().to_text(), "amd_pstate_epp:policy=performance");
    }

    /// x86 frequency invariance on AMD: none before v5.11, the CPPC
    /// midpoint from it (2.0 GHz x (255 x 1024 / 152 + 1024) / 2048). The
    /// modelled versions around it are 5.9 and 6.5 (5.11 runs as 5.9).
    #[test]
    fn amd_frequency_invariance_by_era() {
        use crate::kernel::FreqInvariance;
        let old = ctx("epyc-7702-2s", "5.9");
        assert_eq!(old.kernel.freq_invariance(&old.platform), FreqInvariance::Off);
        let new = ctx("epyc-7702-2s", "6.5");
        let f = new.kernel.freq_invariance(&new.platform);
        assert_eq!(f, FreqInvariance::CppcMidpoint);
        assert_eq!(f.reference_khz(&new.platform.cpu_types[0]), 2_675_781);
        // Intel keeps its 4-core turbo ratio.
        let sky = ctx("skylake-e3-1240v5", "6.5");
        assert_eq!(sky.kernel.freq_invariance(&sky.platform), FreqInvariance::Turbo(4));
    }
}

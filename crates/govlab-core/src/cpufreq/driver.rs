//! cpufreq scaling drivers: how a governor's request becomes a frequency.
//!
//! Models: Linux v6.8 mainline, the `target` / `fast_switch` / `setpolicy`
//! paths of drivers/cpufreq/acpi-cpufreq.c and cpufreq-dt.c (frequency
//! tables), intel_pstate.c (active and passive mode) and powernv-cpufreq.c.
//! The kernel's own account of the drivers is
//! Documentation/admin-guide/pm/cpufreq.rst and intel_pstate.rst (v6.8).
//!
//! As in the kernel, the governor decides what to ask for and the driver
//! decides how that is done:
//!
//! | driver | what a request becomes |
//! |---|---|
//! | `acpi-cpufreq`, `cpufreq-dt` | the table frequency the relation picks (lowest at or above it for L and fast switch, highest at or below for H, closest for C), written as is |
//! | `intel_pstate`, active mode | a *setpolicy* driver: no generic governor runs on it. Its own governor ([`super::intel_pstate`], `--cpufreq intel_pstate`) writes P-state ratios to PERF_CTL or, with HWP, HWP requests that the hardware ([`crate::platform::hwp`]) acts on |
//! | `intel_cpufreq` (intel_pstate, passive mode) | the frequency becomes a P-state ratio (ceil for L and fast switch, floor for H, round otherwise) within the policy's ratios; without HWP it is written to PERF_CTL; with HWP it becomes the request's *minimum*, with the maximum at the policy's and desired 0, so the hardware may run faster. Governors that ask for a strict target (performance, powersave) get min = max. From v5.11 schedutil on a policy of one CPU with frequency-invariant utilisation passes levels instead (`adjust_perf`, a365ab6b9dfb): min = its floor, desired = its target |
//! | `powernv` | the table index is the local P-state (the core's frequency); the global P-state (the chip voltage) follows the ramp-down of [`super::powernv`] unless `global_pstate=off`, or the request came through the fast-switch path (schedutil), which writes global = local |
//!
//! Which driver runs is decided once, when the run is built ([`resolve`]):
//! a platform file names its driver. intel_pstate starts in active mode, as
//! on an HWP machine booted without options; there `powersave` and
//! `performance` are the driver's own policies ([`super::kernel_name`]
//! turns them into `intel_pstate:policy=...` before they get here). A
//! generic governor (ondemand, conservative, schedutil, userspace) needs
//! passive mode: asking for one switches the driver to passive, as writing
//! `passive` to /sys/devices/system/cpu/intel_pstate/status would, and the
//! run's header says `intel_cpufreq (passive)`. The platform options
//! `intel_pstate=active` and `intel_pstate=passive` (the kernel's
//! command-line switch) pin the mode: active refuses the generic
//! governors, passive makes `powersave` and `performance` the generic ones
//! and refuses `intel_pstate`. A governor the driver cannot run is refused
//! with an error that says what would work.
//!
//! intel_pstate's frequencies are its ratios × 100 MHz
//! ([`INTEL_PSTATE_SCALING_KHZ`](crate::platform::INTEL_PSTATE_SCALING_KHZ)); platform files for it list one operating
//! point per ratio (the loader checks), so a ratio and an OPP are the same
//! thing here.
//!
//! Left out: amd-pstate's `adjust_perf` (v5.17: passive amd-pstate under
//! schedutil takes frequencies here on every version); drivers' `get`
//! callbacks and boost/turbo sysfs switches (the platform's `turbo=off`
//! stands for them).
//!
//! This file decides which driver runs; the path a request takes through it
//! on the running machine is `machine/cpufreq_driver.rs`.

use super::{CpufreqGovernor, Relation};
use crate::error::{Error, Result};
use crate::kernel::BuildCtx;
use crate::platform::{AmdPstateMode, CpuId, CpuType, Driver, Platform, PstateMode};

/// The scaling driver a run uses, resolved from the platform and the
/// governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpufreqDriver {
    /// acpi-cpufreq or cpufreq-dt (the name): a frequency table.
    Table(&'static str),
    /// intel_pstate in active mode, driven by its own governor.
    IntelPstate,
    /// intel_pstate in passive mode. `strict_target`: the governor declared
    /// CPUFREQ_GOV_STRICT_TARGET (HWP min = max).
    IntelCpufreq { hwp: bool, strict_target: bool },
    /// powernv-cpufreq; `global_pstate` as the platform says.
    Powernv { global_pstate: bool },
    /// amd-pstate in passive or guided mode (`super::amd_pstate`):
    /// frequency targets become CPPC requests. `guided_dynamic`: guided
    /// mode under a governor with CPUFREQ_GOV_DYNAMIC_SWITCHING, whose
    /// target becomes the minimum.
    AmdPstate { guided: bool, guided_dynamic: bool },
    /// amd-pstate-epp (active mode), driven by its own policies.
    AmdPstateEpp,
}

impl CpufreqDriver {
    /// The driver's name as `scaling_driver` shows it.
    pub fn name(&self) -> &'static str {
        match self {
            CpufreqDriver::Table(name) => name,
            CpufreqDriver::IntelPstate => "intel_pstate",
            CpufreqDriver::IntelCpufreq { .. } => "intel_cpufreq",
            CpufreqDriver::Powernv { .. } => "powernv",
            CpufreqDriver::AmdPstate { .. } => "amd-pstate",
            CpufreqDriver::AmdPstateEpp => "amd-pstate-epp",
        }
    }

    /// The driver and its mode as a run's header shows them:
    /// `intel_pstate (active, HWP)`, `intel_pstate (active)`,
    /// `intel_cpufreq (passive, HWP)`, `intel_cpufreq (passive)`,
    /// `powernv`, `acpi-cpufreq`, `cpufreq-dt`. For active mode, HWP is in
    /// use when the platform has it and the governor did not turn it off
    /// (its `hwp` tunable, the kernel's `intel_pstate=no_hwp`).
    pub fn describe(&self, hwp: bool, gov: &dyn CpufreqGovernor) -> String {
        let hwp_text = |hwp: bool| if hwp { ", HWP" } else { "" };
        match *self {
            CpufreqDriver::IntelPstate => {
                let off = gov.tunables().iter().any(|(k, v)| k == "hwp" && v == "off");
                format!("intel_pstate (active{})", hwp_text(hwp && !off))
            }
            CpufreqDriver::IntelCpufreq { hwp, .. } => format!("intel_cpufreq (passive{})", hwp_text(hwp)),
            CpufreqDriver::AmdPstate { guided, .. } => format!("amd-pstate ({})", if guided { "guided" } else { "passive" }),
            CpufreqDriver::AmdPstateEpp => "amd-pstate-epp (active)".to_string(),
            other => other.name().to_string(),
        }
    }

    /// Whether the driver's CPU init leaves every CPU at its lowest
    /// P-state: intel_pstate without HWP, in either mode. v5.2
    /// intel_pstate_init_cpu() ends in intel_pstate_get_cpu_pstates(),
    /// whose last step is intel_pstate_set_min_pstate() (a PERF_CTL write
    /// of the minimum ratio), and intel_cpufreq_cpu_init() then reports
    /// `policy->cur = policy->cpuinfo.min_freq` ("This reflects the
    /// intel_pstate_get_cpu_pstates() setting"); the same in v6.8. With HWP
    /// that write is ignored: the HWP request decides. `hwp`: the
    /// platform's (`BuildCtx::hwp`).
    pub fn inits_at_min_pstate(&self, hwp: bool) -> bool {
        match *self {
            CpufreqDriver::IntelPstate => !hwp,
            CpufreqDriver::IntelCpufreq { hwp, .. } => !hwp,
            _ => false,
        }
    }
}

/// Which driver runs `gov` on the run's platform, or why none can.
pub fn resolve(ctx: &BuildCtx, gov: &dyn CpufreqGovernor) -> Result<CpufreqDriver> {
    let platform = &ctx.platform;
    let name = gov.name();
    let plat = &platform.name;
    if let Some(mode) = platform.amd_pstate {
        return resolve_amd_pstate(ctx, gov, mode);
    }
    match (gov.driver(), platform.driver) {
        (None, table @ (Driver::AcpiCpufreq | Driver::CpufreqDt)) => Ok(CpufreqDriver::Table(table.name())),
        (None, Driver::IntelPstate { mode: None | Some(PstateMode::Passive) }) => {
            Ok(CpufreqDriver::IntelCpufreq {
                hwp: ctx.hwp,
                strict_target: gov.strict_target(),
            })
        }
        (None, Driver::IntelPstate { mode: Some(PstateMode::Active) }) => Err(Error::Unsupported(format!(
            "cpufreq governor {name} needs a driver that takes frequency targets, but platform {plat} runs \
             intel_pstate in active mode (intel_pstate=active), which only runs its own policies: use \
             powersave or performance (intel_pstate's), or drop intel_pstate=active (or use intel_pstate=passive) for {name}"
        ))),
        (None, Driver::Powernv { global_pstate }) => Ok(CpufreqDriver::Powernv { global_pstate }),
        (Some("intel_pstate"), Driver::IntelPstate { mode: None | Some(PstateMode::Active) }) => {
            Ok(CpufreqDriver::IntelPstate)
        }
        (Some(own), Driver::IntelPstate { mode: Some(PstateMode::Passive) }) => Err(Error::Unsupported(format!(
            "cpufreq governor {name} is {own}'s active mode, but platform {plat} runs intel_pstate in passive \
             mode (intel_pstate=passive), where only the generic governors run (performance, powersave, \
             userspace, ondemand, conservative, schedutil): drop intel_pstate=passive, or pick one of them"
        ))),
        (Some(own), other) => Err(Error::Unsupported(format!(
            "cpufreq governor {name} is part of the {own} driver, but platform {plat} uses the {} driver; \
             use a generic governor (performance, powersave, userspace, ondemand, conservative, schedutil)",
            other.name()
        ))),
    }
}

/// The driver `gov` runs on under `amd_pstate=mode` (cpufreq/amd_pstate.rs), or why none.
///
/// # Errors
/// A generic governor in active mode, or the active mode's own policies in
/// another mode or on another driver.
fn resolve_amd_pstate(ctx: &BuildCtx, gov: &dyn CpufreqGovernor, mode: AmdPstateMode) -> Result<CpufreqDriver> {
    let (name, plat) = (gov.name(), &ctx.platform.name);
    match (gov.driver(), mode) {
        (None, AmdPstateMode::Active) => Err(Error::Unsupported(format!(
            "cpufreq governor {name} needs a driver that takes frequency targets, but platform {plat} runs \
             amd-pstate-epp (amd_pstate=active), which only runs its own policies: use powersave or performance \
             (amd-pstate-epp's), or amd_pstate=passive or guided for {name}"
        ))),
        (None, guided) => Ok(CpufreqDriver::AmdPstate {
            guided: guided == AmdPstateMode::Guided,
            guided_dynamic: guided == AmdPstateMode::Guided && gov.dynamic_switching(),
        }),
        (Some("amd-pstate-epp"), AmdPstateMode::Active) => Ok(CpufreqDriver::AmdPstateEpp),
        (Some(own), other) => Err(Error::Unsupported(format!(
            "cpufreq governor {name} is part of the {own} driver, but platform {plat} runs amd-pstate in {} mode \
             (amd_pstate={}), where the generic governors run (performance, powersave, userspace, ondemand, \
             conservative, schedutil){}",
            other.name(),
            other.name(),
            if own == "amd-pstate-epp" { "; amd_pstate=active runs it" } else { "" }
        ))),
    }
}

/// The cpufreq policies the platform's driver makes, and the hardware clock
/// domain each one sits in. The platform file describes the clocks
/// (`freq_domain`); the driver decides which CPUs a policy spans (Linux
/// v6.8, each driver's `init` callback):
///
/// | driver | one policy per | source |
/// |---|---|---|
/// | `intel_pstate` (active and passive, `intel_cpufreq`) | logical CPU | `intel_pstate_cpu_init` / `intel_cpufreq_cpu_init` leave `policy->cpus` as the cpufreq core set it, the CPU alone; Documentation/admin-guide/pm/intel_pstate.rst, "General Information": it works with individual logical CPUs |
/// | `acpi-cpufreq` | logical CPU, or clock domain | `acpi_cpufreq_cpu_init` copies the `_PSD` domain into `policy->cpus` only for software coordination (SW_ALL, SW_ANY: the platform file's `psd_coordination`); with hardware coordination (HW_ALL, the default here: what Intel servers' firmware reports) each CPU is its own policy |
/// | `cpufreq-dt` | clock domain | `dt_cpufreq_early_init`: the CPUs sharing the OPP table (`opp-shared`, one clock) |
/// | `powernv` | core | `powernv_cpufreq_cpu_init`: the threads of the core (`cpu_first_thread_sibling` .. `threads_per_core`) |
///
/// Where several policies share one clock, the hardware resolves their
/// requests (machine/dvfs.rs, `resolve_domain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyLayout {
    /// Each policy's CPUs (`policy->cpus`), policies in the order of their
    /// first CPU's core (the kernel names them after their first CPU).
    pub cpus: Vec<Vec<CpuId>>,
    /// The clock domain of each policy.
    pub domain: Vec<usize>,
    /// The policy of each CPU.
    pub of_cpu: Vec<usize>,
    /// The policies of each clock domain.
    pub of_domain: Vec<Vec<usize>>,
}

impl PolicyLayout {
    /// The layout `driver` makes on `platform`.
    pub fn of(platform: &Platform) -> Self {
        let mut cpus: Vec<Vec<CpuId>> = match platform.driver {
            Driver::IntelPstate { .. } => platform.cores.iter().flat_map(|c| c.cpus.iter().map(|&cpu| vec![cpu])).collect(),
            Driver::AcpiCpufreq if !platform.psd_sw_coordination => {
                platform.cores.iter().flat_map(|c| c.cpus.iter().map(|&cpu| vec![cpu])).collect()
            }
            Driver::AcpiCpufreq | Driver::CpufreqDt => platform.freq_domains.iter().map(|d| d.cpus.clone()).collect(),
            Driver::Powernv { .. } => platform.cores.iter().map(|c| c.cpus.clone()).collect(),
        };
        if matches!(platform.driver, Driver::IntelPstate { .. }) || (platform.driver == Driver::AcpiCpufreq && !platform.psd_sw_coordination) {
            cpus.sort_unstable();
        }
        let domain: Vec<usize> = cpus.iter().map(|c| platform.cpus[c[0]].freq_domain).collect();
        let mut of_cpu = vec![0; platform.nr_cpus()];
        let mut of_domain = vec![Vec::new(); platform.freq_domains.len()];
        for (p, cs) in cpus.iter().enumerate() {
            for &c in cs {
                of_cpu[c] = p;
            }
            of_domain[domain[p]].push(p);
        }
        PolicyLayout { cpus, domain, of_cpu, of_domain }
    }

    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }
}

/// The table entry a relation picks for `khz` (cpufreq_frequency_table_target;
/// for intel_cpufreq the same as its ceil / floor / round of the ratio).
pub(crate) fn table_index(ct: &CpuType, khz: u32, relation: Relation) -> usize {
    match relation {
        Relation::L => ct.opp_at_least(khz),
        Relation::H => ct.opp_at_most(khz),
        Relation::C => ct.opp_closest(khz),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CpufreqGovernor, Policy};
    use super::*;
    use crate::params::Spec;
    use crate::platform::hwp::{HwpCaps, HwpRequest};
    use crate::platform::load_named;

    /// A governor that is part of intel_pstate, as the active mode's is.
    struct OwnGovernor;

    impl CpufreqGovernor for OwnGovernor {
        fn name(&self) -> &'static str {
            "intel_pstate"
        }
        fn driver(&self) -> Option<&'static str> {
            Some("intel_pstate")
        }
        fn start(&mut self, _policy: &mut Policy<'_>) {}
        fn tunables(&self) -> Vec<(String, String)> {
            Vec::new()
        }
    }

    fn platform(spec: &str) -> Platform {
        load_named(&Spec::parse(spec, "test").unwrap()).unwrap()
    }

    fn generic(name: &str, plat: &Platform) -> Result<CpufreqDriver> {
        let gov = super::super::build(&Spec::new(name), plat);
        match gov {
            Ok(g) => resolve(&BuildCtx::of(plat.clone()), g.as_ref()),
            Err(e) => Err(e),
        }
    }

    /// A generic governor on intel_pstate runs it in passive mode, with the
    /// platform's HWP; performance, powersave and userspace ask for strict
    /// targets.
    #[test]
    fn generic_governors_run_intel_pstate_passive() {
        let sky = platform("skylake-e3-1240v5");
        assert_eq!(
            generic("schedutil", &sky).unwrap(),
            CpufreqDriver::IntelCpufreq { hwp: true, strict_target: false }
        );
        // In active mode performance is intel_pstate's own policy; passive
        // mode makes it the generic governor, which asks for strict targets.
        assert_eq!(generic("performance", &sky).unwrap(), CpufreqDriver::IntelPstate);
        let passive = platform("skylake-e3-1240v5:intel_pstate=passive");
        assert_eq!(
            generic("performance", &passive).unwrap(),
            CpufreqDriver::IntelCpufreq { hwp: true, strict_target: true }
        );
        let no_hwp = platform("skylake-e3-1240v5:hwp=off,intel_pstate=passive");
        assert_eq!(
            generic("ondemand", &no_hwp).unwrap(),
            CpufreqDriver::IntelCpufreq { hwp: false, strict_target: false }
        );
        assert_eq!(resolve(&BuildCtx::of(sky.clone()), &OwnGovernor).unwrap(), CpufreqDriver::IntelPstate);
    }

    /// The driver decides the policies; the platform's clocks stay what
    /// they are: per logical CPU on intel_pstate (and acpi-cpufreq), per
    /// clock on cpufreq-dt, per core on powernv, whatever the clock.
    #[test]
    fn each_driver_lays_out_its_policies() {
        let sky = PolicyLayout::of(&platform("skylake-e3-1240v5"));
        assert_eq!(sky.cpus, (0..8).map(|c| vec![c]).collect::<Vec<_>>());
        assert!(sky.domain.iter().all(|&d| d == 0) && sky.of_domain == vec![(0..8).collect::<Vec<_>>()]);
        let bdw_plat = platform("broadwell-2s-e5-2698v4");
        let bdw = PolicyLayout::of(&bdw_plat);
        assert_eq!(bdw.len(), 80);
        assert!(bdw.of_domain.iter().all(|ps| ps.len() == 2), "a core's clock, its two threads' policies");
        let mut acpi = bdw_plat.clone();
        acpi.driver = Driver::AcpiCpufreq;
        assert_eq!(PolicyLayout::of(&acpi), bdw);
        acpi.psd_sw_coordination = true;
        assert_eq!(PolicyLayout::of(&acpi).cpus, acpi.freq_domains.iter().map(|d| d.cpus.clone()).collect::<Vec<_>>());
        let juno = platform("juno-r0");
        let dt = PolicyLayout::of(&juno);
        assert_eq!(dt.cpus, juno.freq_domains.iter().map(|d| d.cpus.clone()).collect::<Vec<_>>());
        // POWER8: a core is a clock and a policy; POWER9: a quad's clock
        // shared by four cores' policies.
        let p8 = platform("power8");
        let l8 = PolicyLayout::of(&p8);
        assert_eq!(l8.cpus, p8.cores.iter().map(|c| c.cpus.clone()).collect::<Vec<_>>());
        assert!(l8.of_domain.iter().enumerate().all(|(d, ps)| ps == &vec![d]));
        let l9 = PolicyLayout::of(&platform("power9"));
        assert!(l9.of_domain.iter().all(|ps| ps.len() == 4), "{:?}", l9.of_domain);
        for (p, cpus) in l9.cpus.iter().enumerate() {
            assert!(cpus.iter().all(|&c| l9.of_cpu[c] == p));
        }
    }

    /// schedutil on intel_pstate forced into active mode: refused, saying
    /// what would work.
    #[test]
    fn generic_governor_on_active_intel_pstate_is_refused() {
        let active = platform("skylake-e3-1240v5:intel_pstate=active");
        let e = generic("schedutil", &active).unwrap_err();
        let Error::Unsupported(m) = &e else { panic!("{e:?}") };
        for part in ["schedutil", "intel_pstate=active", "powersave or performance", "intel_pstate=passive"] {
            assert!(m.contains(part), "{part}: {m}");
        }
    }

    /// intel_pstate's own governor on another driver, or on intel_pstate
    /// forced passive: refused.
    #[test]
    fn own_governor_needs_its_driver_in_active_mode() {
        let mut acpi = platform("broadwell-2s-e5-2698v4");
        acpi.driver = Driver::AcpiCpufreq;
        let e = resolve(&BuildCtx::of(acpi.clone()), &OwnGovernor).unwrap_err().to_string();
        assert!(e.contains("acpi-cpufreq") && e.contains("part of the intel_pstate driver"), "{e}");
        let passive = platform("broadwell-2s-e5-2698v4:intel_pstate=passive");
        let e = resolve(&BuildCtx::of(passive.clone()), &OwnGovernor).unwrap_err().to_string();
        assert!(e.contains("passive") && e.contains("schedutil"), "{e}");
        assert_eq!(generic("ondemand", &acpi).unwrap(), CpufreqDriver::Table("acpi-cpufreq"));
    }

    /// A policy of 0.8 to 3.9 GHz with its limits at 1.0 to 3.0 GHz: what a
    /// governor may write there, and why not the rest.
    #[test]
    fn requests_are_checked_against_the_policy() {
        use crate::cpufreq::dbs::testutil::Harness;
        let mhz: Vec<u32> = (8..=39).map(|r| r * 100).collect();
        let mut h = Harness::new(&mhz, 1);
        (h.min_khz, h.max_khz) = (1_000_000, 3_000_000);
        let caps = HwpCaps { lowest_perf: 8, guaranteed_perf: 35, highest_perf: 39, khz_per_perf: 100_000 };
        let check = |h: &mut Harness, hwp: Option<HwpCaps>, r: HwpRequest| {
            let mut out = Err(String::new());
            h.call(|p| {
                p.hwp = hwp;
                out = p.check_hwp_request(&r);
            });
            out
        };
        let ok = HwpRequest { min_perf: 10, max_perf: 30, desired_perf: 0, epp: 128 };
        assert_eq!(check(&mut h, Some(caps), ok), Ok(()));
        assert_eq!(check(&mut h, Some(caps), HwpRequest { desired_perf: 20, ..ok }), Ok(()));
        let err = |r: HwpRequest, h: &mut Harness| check(h, Some(caps), r).unwrap_err();
        assert!(check(&mut h, None, ok).unwrap_err().contains("takes no HWP requests"));
        assert_eq!(err(HwpRequest { min_perf: 20, max_perf: 12, ..ok }, &mut h), "min_perf 20 is above max_perf 12");
        assert_eq!(
            err(HwpRequest { max_perf: 31, ..ok }, &mut h),
            "min_perf..max_perf 10..31 is outside the limits of policy 0, levels 10 to 30 (1000000 to 3000000 kHz)"
        );
        assert!(err(HwpRequest { min_perf: 9, ..ok }, &mut h).contains("outside the limits"));
        assert!(err(HwpRequest { desired_perf: 31, ..ok }, &mut h).starts_with("desired_perf 31 is neither 0"));
        assert!(err(HwpRequest { epp: 300, ..ok }, &mut h).starts_with("epp 300 is outside 0 to 255"));
    }
}

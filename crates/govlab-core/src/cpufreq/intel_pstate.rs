//! `intel_pstate`: the intel_pstate driver's own governor (active mode), with
//! and without HWP.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/intel_pstate.c: without HWP
//! intel_pstate_update_util, intel_pstate_sample, get_target_pstate and
//! intel_pstate_adjust_pstate; with HWP intel_pstate_hwp_set and the dynamic
//! boost (intel_pstate_update_util_hwp, intel_pstate_hwp_boost_up/down, from
//! the 2018 series, 52ccc4314293, v4.18). Kept as switches: the IO-wait boost
//! the 2019 rework replaced (`iowait_boost=strong`), the migration boost of
//! the 2018 series' first RFC (`hwp_boost_migration`), and the two
//! out-of-tree patches of the OSPM 2020 datacenter talk (`idle_boost`,
//! `ramp_up_faster`), which govlab specifies itself (below): the patches were
//! never posted where we could find them.
//!
//! In the kernel, active mode is a *setpolicy* driver: the generic governors
//! do not run, and the two "governors" a user sees, powersave and
//! performance, are policies the driver implements. govlab makes them one
//! governor with a `policy` tunable; it runs only on the intel_pstate driver
//! ([`super::driver`]). intel_pstate works per logical CPU; where several
//! CPUs share a clock (a govlab policy), the hardware runs the highest
//! P-state any of them asks for, and HWP the highest minimum.
//!
//! # Without HWP, `policy=powersave`: P-states from the busy fraction
//!
//! The scheduler's hook runs on every utilisation update of the CPU, but a
//! P-state is chosen at most every 10 ms (INTEL_PSTATE_SAMPLING_INTERVAL):
//!
//! 1. Sample: read the CPU's own MPERF (its time in C0), TSC (the time)
//!    and APERF (its clock's cycles in C0) since the previous sample (v5.2
//!    intel_pstate_sample). No C0 time, no sample. The first sample after
//!    the hook is installed is discarded.
//! 2. busy_frac = MPERF / TSC, raised to the IO-wait boost if that is
//!    higher. govlab's C0 time here is the time the CPU was not idle (see
//!    [`CpuData::sample`]).
//! 3. target = 1.25 × turbo P-state × busy_frac (the max non-turbo P-state
//!    when turbo is off), at least the lowest P-state. So a CPU busy 80 % of
//!    the time asks for the top.
//! 4. Anti-oscillation: if the average P-state of the window's C0 time
//!    (APERF / MPERF, get_avg_pstate) was above the target, go half way
//!    back up to it. Time the CPU spent in C1 or deeper does not count, even
//!    while its sibling thread kept the core's clock running.
//! 5. Clamp to the policy's ratios and write PERF_CTL if it changed.
//!
//! `policy=performance` writes the highest allowed P-state once and installs
//! no hook.
//!
//! Before v4.14 (`EraId::IntelPstateLoadBased`) steps 2–4 are the PID
//! controller Core models had since v3.9, in its v4.6–v4.13 form
//! ([`CpuData::get_target_pstate_use_performance`]): the target follows the
//! performance delivered against the P-state asked for, with no IO-wait
//! boost. v3.15's deferrable sampling timer (the hook came with v4.6) and
//! its lack of the "under 1 % in C0" rule are not modelled: every kernel
//! before v4.14 samples from the hook.
//!
//! # IO-wait boost (`iowait_boost`)
//!
//! * `weak` (v5.1+, b8bd1581aa61, "Rework iowait boosting to be less
//!   aggressive", the v6.8 behaviour): an IOWAIT call sets the boost to 1/8,
//!   or doubles it (up to 1) if the previous call was less than a tick ago;
//!   any other call halves it, or clears it after more than a tick. It acts
//!   as a floor on busy_frac at the next 10 ms sample.
//! * `strong` (v4.14–v5.0, 7bde2d50014d): an IOWAIT call sets the boost to 1
//!   and samples at once instead of waiting up to 10 ms, unless the last
//!   sample was already fully busy; each sample uses the boost and then
//!   halves it; a non-IOWAIT call more than a tick after the previous one
//!   clears it. So an IO wakeup jumps to the top P-state. (From the commit
//!   message and the v4.12–4.13 code of get_target_pstate, where the halving
//!   lives.)
//!
//! # govlab's models of the two OSPM 2020 patches
//!
//! * `idle_boost`: a hook call that comes more than a tick after the
//!   previous one (the kernel's own "this CPU may have been idle" test)
//!   boosts like a strong IO wakeup: the boost goes to 1 and the CPU samples
//!   at once. The boost then decays as the chosen `iowait_boost` decays.
//! * `ramp_up_faster`: when busy_frac (before any boost) crosses
//!   [`RAMP_UP_FASTER_BUSY_FP`] from below, the target is the top P-state
//!   instead of step 3's proportional value; later samples follow the
//!   normal rule, held up by step 4.
//!
//! # With HWP
//!
//! The driver writes one HWP request per CPU and the hardware
//! ([`crate::platform::hwp`]) chooses inside it: `policy=powersave` writes
//! min = the policy's lowest ratio, max = its highest, desired 0 and the
//! EPP (`epp`, default the firmware's 0x80); `policy=performance` writes min
//! = max = the highest and EPP 0.
//!
//! # HWP dynamic boost (`hwp_dynamic_boost`)
//!
//! With boost on and `policy=powersave`, the hook is installed and raises
//! the request's *minimum* on IO wakeups:
//!
//! 1. An IOWAIT call counts only if the previous one came less than two
//!    ticks before (one IO wakeup alone may be background IO).
//! 2. Each counted one raises the minimum one step: to half way between the
//!    minimum and the guaranteed P-state (P1), then to P1, then to the
//!    maximum (fewer steps if the minimum is P1 or P1 the maximum).
//! 3. A non-IOWAIT call that comes more than 3 ms (hold time) after the
//!    previous call restores the request in one step; every call refreshes
//!    that time, so in practice the boost drops after 3 ms without any call,
//!    i.e. after the CPU idled.
//!
//! Default on where the firmware reports a server PM profile (v6.4+: any
//! HWP CPU; v4.18–v6.3 only Skylake desktop and server models).
//! `hwp_boost_migration` adds the migration boost of RFC v1 (dropped before
//! merge), as govlab reads it: a task attached to the CPU after migrating
//! (SCHED_CPUFREQ_MIGRATION, passed before v5.6) counts as a qualifying
//! IO wakeup.
//!
//! # Left out
//!
//! Atom's PID parameters and load-based target before v4.14, Atom's VID programming, hybrid CPUs,
//! the global `max_perf_pct`/`min_perf_pct`/`no_turbo` knobs (the platform's
//! `turbo=off` stands for `no_turbo`), energy_efficiency and EPB.

use super::{CpufreqGovernor, GovernorInfo, HwpRequest, Policy, Relation, SchedView, SCHED_CPUFREQ_IOWAIT, SCHED_CPUFREQ_MIGRATION};
use crate::kernel::{BuildCtx, EraId, Patch};
use crate::error::{Error, Result};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::hwp::{HwpCaps, HWP_EPP_FIRMWARE_DEFAULT};
use crate::platform::INTEL_PSTATE_SCALING_KHZ;
use crate::platform::{CpuId, Platform};

/// Shortest time between two P-state selections, ns
/// (INTEL_PSTATE_SAMPLING_INTERVAL, 10 ms since v4.14).
pub const INTEL_PSTATE_SAMPLING_INTERVAL_NS: u64 = 10_000_000;
/// Fixed-point fraction bits of busy_frac and the boost (FRAC_BITS).
const FRAC_BITS: u32 = 8;
/// 1.0 in that fixed point (int_tofp(1)).
const ONE_FP: u64 = 1 << FRAC_BITS;
/// Start of the weak IO-wait boost, 1/8 (ONE_EIGHTH_FP).
const ONE_EIGHTH_FP: u64 = ONE_FP >> 3;
/// How long a raised HWP minimum outlives the last hook call, ns
/// (hwp_boost_hold_time_ns: "3ms is based on experiments on some workloads").
pub const HWP_BOOST_HOLD_TIME_NS: u64 = 3_000_000;
/// govlab's `ramp_up_faster` threshold on busy_frac: one half (assumed; the
/// patch's value is not known).
pub const RAMP_UP_FASTER_BUSY_FP: u64 = ONE_FP / 2;

/// EPP names the sysfs file energy_performance_preference accepts.
pub const EPP_NAMES: [(&str, u32); 4] = [("performance", 0), ("balance_performance", 0x80), ("balance_power", 0xC0), ("power", 0xFF)];

// ---- tunables ----

/// scaling_governor: powersave (the driver's fallback) or performance.
pub const POLICY: ParamSpec<BuildCtx> = ParamSpec {
    name: "policy",
    unit: "",
    default: ParamDefault::Word("powersave"),
    range: Range::Choice(&["powersave", "performance"]),
    help: "powersave (load-driven / HWP within limits) or performance (top P-state / HWP min = max)",
};

/// HWP in use: `auto` resolves to the platform's HWP; `on` where the
/// platform has none is refused; `off` is the intel_pstate=no_hwp boot
/// option.
pub const HWP: ParamSpec<BuildCtx> = ParamSpec {
    name: "hwp",
    unit: "",
    default: ParamDefault::Described { word: "auto", doc: "auto (on where the platform has HWP)" },
    range: Range::Choice(&["auto", "on", "off"]),
    help: "auto, on or off (off = intel_pstate=no_hwp)",
};

/// energy_performance_preference, 0..255 or one of [`EPP_NAMES`]
/// (store_energy_performance_preference rejects anything else); read by
/// [`parse_epp`].
pub const EPP: ParamSpec<BuildCtx> = ParamSpec {
    name: "epp",
    unit: "",
    default: ParamDefault::Derived {
        doc: "128 (firmware's balance_performance)",
        value: |_| u64::from(HWP_EPP_FIRMWARE_DEFAULT),
    },
    range: Range::Custom,
    help: "HWP only: energy_performance_preference 0..255 or performance, balance_performance, balance_power, power",
};

/// /sys/devices/system/cpu/intel_pstate/hwp_dynamic_boost: on by default on
/// server PM profiles (v6.4+), off without HWP.
pub const HWP_DYNAMIC_BOOST: ParamSpec<BuildCtx> = ParamSpec {
    name: "hwp_dynamic_boost",
    unit: "",
    default: ParamDefault::DerivedVersioned {
        doc: "1 on server PM profiles, else 0",
        doc_in: |c| if c.has(EraId::HwpDynamicBoost) { "1 on server PM profiles, else 0" } else { "0" },
        value: |c| u64::from(c.hwp && c.platform.acpi_pm_profile.is_server() && c.has(EraId::HwpDynamicBoost)),
    },
    range: Range::Switch,
    help: "HWP only: raise the HWP minimum on IO wakeups (0/1)",
};

/// govlab switch: RFC v1's migration boost.
pub const HWP_BOOST_MIGRATION: ParamSpec<BuildCtx> = ParamSpec {
    name: "hwp_boost_migration",
    unit: "",
    default: ParamDefault::Flag(false),
    range: Range::Switch,
    help: "HWP only, govlab switch: also boost when a task migrates to the CPU (RFC v1; acts before 5.6, while the scheduler passes SCHED_CPUFREQ_MIGRATION)",
};

/// govlab switch: which IO-wait boost (weak is v6.8's).
pub const IOWAIT_BOOST: ParamSpec<BuildCtx> = ParamSpec {
    name: "iowait_boost",
    unit: "",
    default: ParamDefault::Versioned {
        doc: "strong before 5.1, weak from 5.1",
        value: |c| if c.has(EraId::IntelPstateIowait) { "weak" } else { "strong" },
    },
    range: Range::Choice(&["weak", "strong"]),
    help: "no HWP only: weak (v5.1+: 1/8, doubling) or strong (v4.14-v5.0: straight to max); default by version: strong before 5.1",
};

/// govlab's model of the OSPM 2020 idle-boost patch.
pub const IDLE_BOOST: ParamSpec<BuildCtx> = ParamSpec {
    name: "idle_boost",
    unit: "",
    default: ParamDefault::Flag(false),
    range: Range::Switch,
    help: "no HWP only, govlab's model of the OSPM 2020 patch: boost to max on exit from idle",
};

/// govlab's model of the OSPM 2020 ramp-up-faster patch.
pub const RAMP_UP_FASTER: ParamSpec<BuildCtx> = ParamSpec {
    name: "ramp_up_faster",
    unit: "",
    default: ParamDefault::Flag(false),
    range: Range::Switch,
    help: "no HWP only, govlab's model of the OSPM 2020 patch: top P-state when busy crosses 50 %",
};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "intel_pstate",
    description: "intel_pstate's active mode: P-states from the busy fraction, or HWP with dynamic boost",
    models: "Linux v6.8 drivers/cpufreq/intel_pstate.c (active mode); 2018 HWP boost; OSPM 2020 idle boost / ramp up faster (govlab's models)",
    params: &[POLICY, HWP, EPP, HWP_DYNAMIC_BOOST, HWP_BOOST_MIGRATION, IOWAIT_BOOST, IDLE_BOOST, RAMP_UP_FASTER],
    eras: &[EraId::IntelPstateLoadBased, EraId::HwpDynamicBoost, EraId::IntelPstateIowait],
    patches: &[
        Patch {
            tunable: "hwp_dynamic_boost",
            value: "on",
            merged_in: Some(EraId::HwpDynamicBoost),
            subject: "cpufreq: intel_pstate: HWP boost performance on IO wakeup (52ccc4314293, v4.18)",
        },
        Patch {
            tunable: "hwp_boost_migration",
            value: "on",
            merged_in: None,
            subject: "HWP boost RFC v1's migration boost (2018; dropped from the merged series)",
        },
        Patch {
            tunable: "idle_boost",
            value: "on",
            merged_in: None,
            subject: "OSPM 2020 out-of-tree idle boost (govlab's model; not merged)",
        },
        Patch {
            tunable: "ramp_up_faster",
            value: "on",
            merged_in: None,
            subject: "OSPM 2020 out-of-tree ramp-up-faster (govlab's model; not merged)",
        },
    ],
    build,
};

/// The two policies of active mode (scaling_governor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PstatePolicy {
    Powersave,
    Performance,
}

/// Which IO-wait boost to model (govlab switch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IowaitBoost {
    /// v5.1+: 1/8, doubling on close IO wakeups, halving on other calls.
    Weak,
    /// v4.14–v5.0: straight to 1 with an immediate sample, halving per sample.
    Strong,
}

/// intel_pstate's resolved tunables (scaling_governor,
/// energy_performance_preference, /sys/devices/system/cpu/intel_pstate/
/// hwp_dynamic_boost) and govlab's switches; each field's default and checks
/// are in its [`ParamSpec`] above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntelPstateTunables {
    /// [`POLICY`].
    pub policy: PstatePolicy,
    /// HWP in use ([`HWP`]: `auto` resolved to the platform's HWP).
    pub hwp: bool,
    /// 0..255 ([`EPP`]); 0 under performance (other values are refused there).
    pub epp: u32,
    /// [`HWP_DYNAMIC_BOOST`].
    pub hwp_dynamic_boost: bool,
    /// [`HWP_BOOST_MIGRATION`].
    pub hwp_boost_migration: bool,
    /// [`IOWAIT_BOOST`].
    pub iowait_boost: IowaitBoost,
    /// [`IDLE_BOOST`].
    pub idle_boost: bool,
    /// [`RAMP_UP_FASTER`].
    pub ramp_up_faster: bool,
}

impl IntelPstateTunables {
    /// What a v6.8 kernel would pick on this machine.
    pub fn for_platform(platform: &Platform) -> Self {
        Self::read(&Spec::new("intel_pstate"), &BuildCtx::of(platform.clone())).expect("the defaults are valid")
    }

    fn uses_util_hook(&self) -> bool {
        self.policy == PstatePolicy::Powersave && (!self.hwp || self.hwp_dynamic_boost)
    }
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let mut g = IntelPstate::new(IntelPstateTunables::read(spec, ctx)?);
    g.pid = !ctx.has(EraId::IntelPstateLoadBased);
    Ok(Box::new(g))
}

impl IntelPstateTunables {
    /// Every tunable from `spec`, each checked as its spec says, then the
    /// mode checks: a tunable of the other mode (HWP or not) is refused, and
    /// so is a non-zero epp under policy=performance.
    fn read(spec: &Spec, ctx: &BuildCtx) -> Result<Self> {
        let owner = "cpufreq governor intel_pstate";
        let given = |key: &str| spec.params.iter().any(|(k, _)| k == key);
        let mut p = Params::new(owner, spec);
        let policy = match p.word(&POLICY)? {
            "performance" => PstatePolicy::Performance,
            _ => PstatePolicy::Powersave,
        };
        let hwp = match p.word(&HWP)? {
            "on" if !ctx.platform.hwp => {
                return Err(Error::Unsupported(format!(
                    "{owner}: hwp=on, but platform {}'s CPUs have no hardware P-states (HWP)",
                    ctx.platform.name
                )))
            }
            "on" => true,
            "off" => false,
            _ => ctx.hwp,
        };
        let epp = match p.string(EPP.name) {
            None => EPP.uint_default(ctx) as u32,
            Some(v) => parse_epp(&v).ok_or_else(|| {
                Error::invalid(owner, "epp", &v, "0 to 255, or performance, balance_performance, balance_power, power (default 128)")
            })?,
        };
        // Off by default when HWP is switched off, whatever the profile, and
        // before v4.18 (52ccc4314293), where it is the 2018 series on top.
        let hwp_dynamic_boost = p.bool(HWP_DYNAMIC_BOOST.name, hwp && HWP_DYNAMIC_BOOST.flag_default(ctx))?;
        let hwp_boost_migration = p.flag(&HWP_BOOST_MIGRATION, ctx)?;
        // Default by version: strong before v5.1 (b8bd1581aa61), weak from it.
        let iowait_boost = match p.word_in(&IOWAIT_BOOST, ctx)? {
            "strong" => IowaitBoost::Strong,
            _ => IowaitBoost::Weak,
        };
        let idle_boost = p.flag(&IDLE_BOOST, ctx)?;
        let ramp_up_faster = p.flag(&RAMP_UP_FASTER, ctx)?;
        p.finish()?;

        let wrong_mode = |keys: &[&str], needs: &str| keys.iter().find(|k| given(k)).map(|k| {
            Error::Unsupported(format!("{owner}: {k} applies only {needs}"))
        });
        if hwp {
            if let Some(e) = wrong_mode(&["iowait_boost", "idle_boost", "ramp_up_faster"], "without HWP (hwp=off): with HWP the hardware picks the P-state") {
                return Err(e);
            }
        } else if let Some(e) = wrong_mode(&["epp", "hwp_dynamic_boost", "hwp_boost_migration"], "with HWP (hwp=on, on a platform that has it)") {
            return Err(e);
        }
        let epp = if policy == PstatePolicy::Performance {
            if given("epp") && epp != 0 {
                return Err(Error::invalid(owner, "epp", epp, "0 under policy=performance (the kernel refuses other values there)"));
            }
            0
        } else {
            epp
        };
        Ok(IntelPstateTunables {
            policy,
            hwp,
            epp,
            hwp_dynamic_boost,
            hwp_boost_migration,
            iowait_boost,
            idle_boost,
            ramp_up_faster,
        })
    }
}

fn parse_epp(v: &str) -> Option<u32> {
    if let Some(&(_, epp)) = EPP_NAMES.iter().find(|(n, _)| *n == v) {
        return Some(epp);
    }
    v.parse::<u32>().ok().filter(|&e| e <= 255)
}

/// intel_pstate_freq_to_hwp_rel(): the HWP level of a target frequency on
/// a CPU type whose levels are not ratios (hybrid). The highest and the
/// guaranteed level's own frequencies give those levels; otherwise the
/// frequency over the scaling factor, rounded down (RELATION_H), to the
/// closest (RELATION_C) or up (RELATION_L).
pub(crate) fn freq_to_hwp_rel(caps: &HwpCaps, khz: u32, relation: Relation) -> u32 {
    let s = caps.khz_per_perf;
    match relation {
        Relation::L => caps.freq_to_hwp(khz),
        _ if khz == caps.level_khz(caps.highest_perf) => caps.highest_perf,
        _ if khz == caps.level_khz(caps.guaranteed_perf) => caps.guaranteed_perf,
        Relation::H => khz / s,
        Relation::C => (khz + s / 2) / s,
    }
}

/// P-state limits of a policy's CPUs (struct pstate_data; the kernel's
/// field names).
#[derive(Debug, Clone, Copy)]
#[allow(clippy::struct_field_names)]
struct PstateData {
    /// Lowest P-state (MSR_PLATFORM_INFO's LFM ratio).
    min_pstate: u32,
    /// Highest non-turbo P-state, P1 (also HWP's guaranteed level).
    max_pstate: u32,
    /// Highest turbo P-state (the max non-turbo one when turbo is off).
    turbo_pstate: u32,
}

/// One sample (struct sample): differences since the previous one.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    /// When taken, ns; 0 = none yet.
    time_ns: u64,
    /// Time not idle in the window (MPERF's C0 time, see
    /// [`CpuData::sample`]), ns.
    c0_ns: u64,
    /// The window (TSC), ns.
    tsc_ns: u64,
    /// MPERF in the window, ns.
    mperf_ns: u64,
    /// ∫ clock dt over the window's C0 time (APERF), kHz·ns.
    aperf_khz_ns: u128,
    /// busy_frac × 100 of the last target computation, fixed point.
    busy_scaled: u64,
}

/// Per-CPU state (struct cpudata, the parts modelled).
#[derive(Debug, Clone)]
struct CpuData {
    cpu: CpuId,
    /// P-state last written to PERF_CTL.
    current_pstate: u32,
    /// The policy's limits as ratios.
    min_perf_ratio: u32,
    max_perf_ratio: u32,
    sample: Sample,
    last_sample_time_ns: u64,
    /// Counters at the previous sample: time not idle, MPERF, TSC, APERF.
    prev_c0_ns: u64,
    prev_mperf_ns: u64,
    prev_tsc_ns: u64,
    prev_aperf_khz_ns: u128,
    /// Time of the previous hook call, ns (last_update).
    last_update_ns: u64,
    /// IO-wait (and idle) boost, fixed point (iowait_boost).
    iowait_boost: u64,
    /// busy_frac of the previous sample, for ramp_up_faster.
    prev_busy_frac: u64,
    /// The request the OS set, without boost (hwp_req_cached).
    hwp_req_cached: HwpRequest,
    /// Boosted minimum, 0 = not boosted (hwp_boost_min).
    hwp_boost_min: u32,
    /// Time of the previous IOWAIT call, ns (last_io_update).
    last_io_update_ns: u64,
    /// The flags of hook calls since the last IOWAIT one was acted on,
    /// remote ones included (sched_flags, HWP only).
    sched_flags: u32,
}

/// Per-policy state.
#[derive(Debug, Clone)]
struct PolicyData {
    pstate: PstateData,
    cpus: Vec<CpuData>,
    /// What the policy last asked the hardware for: P-state, or HWP request.
    written_pstate: u32,
    written_hwp: Option<HwpRequest>,
}

/// The governor: one [`PolicyData`] per policy.
pub struct IntelPstate {
    tunables: IntelPstateTunables,
    policies: Vec<Option<PolicyData>>,
    /// The PID controller of v4.6-v4.13 in place of the load-based target
    /// (`EraId::IntelPstateLoadBased`).
    pid: bool,
}

impl CpuData {
    fn new(cpu: CpuId, pstate: &PstateData) -> Self {
        CpuData {
            cpu,
            // intel_pstate_get_cpu_pstates ends at the minimum P-state.
            current_pstate: pstate.min_pstate,
            min_perf_ratio: pstate.min_pstate,
            max_perf_ratio: pstate.turbo_pstate,
            sample: Sample::default(),
            last_sample_time_ns: 0,
            prev_c0_ns: 0,
            prev_mperf_ns: 0,
            prev_tsc_ns: 0,
            prev_aperf_khz_ns: 0,
            last_update_ns: 0,
            iowait_boost: 0,
            prev_busy_frac: 0,
            hwp_req_cached: HwpRequest { min_perf: pstate.min_pstate, max_perf: pstate.turbo_pstate, desired_perf: 0, epp: HWP_EPP_FIRMWARE_DEFAULT },
            hwp_boost_min: 0,
            last_io_update_ns: 0,
            sched_flags: 0,
        }
    }

    /// intel_pstate_update_perf_limits: the policy's kHz limits as ratios,
    /// and on a hybrid part with HWP as that CPU type's HWP levels.
    fn update_perf_limits(&mut self, policy: &Policy<'_>) {
        let mut max_policy_perf = policy.max_khz / INTEL_PSTATE_SCALING_KHZ;
        let mut min_policy_perf = if policy.max_khz == policy.min_khz {
            max_policy_perf
        } else {
            (policy.min_khz / INTEL_PSTATE_SCALING_KHZ).min(max_policy_perf)
        };
        if let Some(caps) = policy.hwp.filter(|c| !c.is_ratio()) {
            max_policy_perf = caps.limit_perf(max_policy_perf * INTEL_PSTATE_SCALING_KHZ);
            min_policy_perf = caps.limit_perf(min_policy_perf * INTEL_PSTATE_SCALING_KHZ);
        }
        self.min_perf_ratio = min_policy_perf;
        self.max_perf_ratio = max_policy_perf.max(min_policy_perf);
    }

    /// intel_pstate_sample (step 1): read this CPU's APERF, MPERF and TSC;
    /// false if the CPU was never in C0 since the last sample, or this is
    /// the first one. The busy time is the time the CPU was not idle: the
    /// engine's MPERF also counts the exits from idle states (an exiting
    /// CPU votes for its clock), which the real MPERF does not (the core
    /// is not in C0 until it has left the state), so MPERF gives only the
    /// average clock's weight.
    fn sample(&mut self, sched: &dyn SchedView, time_ns: u64) -> bool {
        let c0 = time_ns.saturating_sub(sched.idle_ns(self.cpu, time_ns));
        let (aperf, mperf) = sched.aperf_mperf(self.cpu, time_ns);
        if c0 == self.prev_c0_ns || time_ns == self.prev_tsc_ns {
            return false;
        }
        self.last_sample_time_ns = self.sample.time_ns;
        self.sample.time_ns = time_ns;
        self.sample.c0_ns = c0 - self.prev_c0_ns;
        self.sample.tsc_ns = time_ns - self.prev_tsc_ns;
        self.sample.mperf_ns = mperf.saturating_sub(self.prev_mperf_ns);
        self.sample.aperf_khz_ns = aperf.saturating_sub(self.prev_aperf_khz_ns);
        self.prev_c0_ns = c0;
        self.prev_tsc_ns = time_ns;
        self.prev_mperf_ns = mperf;
        self.prev_aperf_khz_ns = aperf;
        self.last_sample_time_ns != 0
    }

    /// get_target_pstate (steps 2–4, plus ramp_up_faster).
    fn get_target_pstate(&mut self, p: &PstateData, t: &IntelPstateTunables) -> u32 {
        let s = &mut self.sample;
        let raw_busy = (s.c0_ns << FRAC_BITS) / s.tsc_ns.max(1);
        let boost = self.iowait_boost;
        if t.iowait_boost == IowaitBoost::Strong {
            self.iowait_boost >>= 1;
        }
        let busy_frac = raw_busy.max(boost);
        s.busy_scaled = busy_frac * 100;

        let mut target = u64::from(p.turbo_pstate);
        target += target >> 2;
        target = (target * busy_frac) >> FRAC_BITS;
        target = target.max(u64::from(p.min_pstate));

        if t.ramp_up_faster && raw_busy >= RAMP_UP_FASTER_BUSY_FP && self.prev_busy_frac < RAMP_UP_FASTER_BUSY_FP {
            target = u64::from(p.turbo_pstate);
        }
        self.prev_busy_frac = raw_busy;

        // get_avg_pstate: max_pstate_physical × APERF / MPERF, the average
        // P-state while the CPU was in C0.
        let avg_pstate = (s.aperf_khz_ns / u128::from(s.mperf_ns.max(1)) / u128::from(INTEL_PSTATE_SCALING_KHZ)) as u64;
        if avg_pstate > target {
            target += (avg_pstate - target) >> 1;
        }
        target as u32
    }

    /// get_target_pstate_use_performance with pid_calc (v4.6-v4.13, Core
    /// models' core_params; read in the code index, v4.4's PID in a v4.4
    /// tree): the performance the CPU delivered in C0 against the P-state it
    /// asked for, 100 × (APERF/MPERF) × P1 / current, scaled down by the
    /// sample interval over the window when the window is over three of them
    /// (the hook does not run while idle), and 0 when the CPU was in C0 under
    /// 1 % of it. A proportional step towards the 97 % setpoint follows:
    /// P gain 20 % as the kernel's fixed point makes it (51/256), rounded to
    /// the nearest P-state; the I and D gains are 0. Above 97 % (turbo
    /// delivered more than asked) the P-state goes up, below it down.
    fn get_target_pstate_use_performance(&mut self, p: &PstateData) -> u32 {
        const EXT_FRAC_BITS: u32 = 14;
        const SETPOINT: i64 = 97;
        let s = &mut self.sample;
        let cur = i64::from(self.current_pstate.max(1));
        let base_khz = u128::from(p.max_pstate) * u128::from(INTEL_PSTATE_SCALING_KHZ);
        let core_avg_perf = ((s.aperf_khz_ns << EXT_FRAC_BITS) / (u128::from(s.mperf_ns.max(1)) * base_khz.max(1))) as i64;
        let mut perf_scaled = (core_avg_perf * ((100 * i64::from(p.max_pstate)) << FRAC_BITS) / cur) >> EXT_FRAC_BITS;
        let duration_ns = s.time_ns.saturating_sub(self.last_sample_time_ns) as i64;
        let rate_ns = INTEL_PSTATE_SAMPLING_INTERVAL_NS as i64;
        if duration_ns > 3 * rate_ns {
            let ratio = (rate_ns << FRAC_BITS) / duration_ns;
            perf_scaled = (perf_scaled * ratio) >> FRAC_BITS;
        } else if ((100 * s.c0_ns as i64) << FRAC_BITS) / (s.tsc_ns.max(1) as i64) < (1 << FRAC_BITS) {
            perf_scaled = 0;
        }
        s.busy_scaled = perf_scaled.max(0) as u64;
        let error = (SETPOINT << FRAC_BITS) - perf_scaled;
        let ctl = if error == 0 {
            0
        } else {
            let p_gain = ((20_i64 << FRAC_BITS) << FRAC_BITS) / (100 << FRAC_BITS);
            (((p_gain * error) >> FRAC_BITS) + (1 << (FRAC_BITS - 1))) >> FRAC_BITS
        };
        (cur - ctl).max(0) as u32
    }

    /// intel_pstate_prepare_request (step 5's clamp).
    fn prepare_request(&self, p: &PstateData, pstate: u32) -> u32 {
        let min = p.min_pstate.max(self.min_perf_ratio);
        let max = min.max(self.max_perf_ratio);
        pstate.clamp(min, max)
    }

    /// intel_pstate_hwp_boost_up: one step up; true if the request changed.
    fn hwp_boost_up(&mut self, p1: u32, time_ns: u64) -> bool {
        let max_limit = self.hwp_req_cached.max_perf;
        let min_limit = self.hwp_req_cached.min_perf;
        if max_limit == min_limit || self.hwp_boost_min >= max_limit {
            return false;
        }
        if self.hwp_boost_min == 0 {
            self.hwp_boost_min = min_limit;
        }
        let boost_level1 = (p1 + min_limit) >> 1;
        if self.hwp_boost_min < boost_level1 {
            self.hwp_boost_min = boost_level1;
        } else if self.hwp_boost_min < p1 {
            self.hwp_boost_min = p1;
        } else if self.hwp_boost_min == p1 && max_limit != p1 {
            self.hwp_boost_min = max_limit;
        } else {
            return false;
        }
        self.last_update_ns = time_ns;
        true
    }

    /// intel_pstate_hwp_boost_down: drop the boost after the hold time;
    /// true if the request changed.
    fn hwp_boost_down(&mut self, time_ns: u64) -> bool {
        let expired = self.hwp_boost_min != 0 && time_ns > self.last_update_ns + HWP_BOOST_HOLD_TIME_NS;
        if expired {
            self.hwp_boost_min = 0;
        }
        self.last_update_ns = time_ns;
        expired
    }

    /// The request this CPU wants now: the cached one with the boosted minimum.
    fn hwp_request(&self) -> HwpRequest {
        HwpRequest {
            min_perf: self.hwp_req_cached.min_perf.max(self.hwp_boost_min),
            ..self.hwp_req_cached
        }
    }
}

impl PolicyData {
    fn new(policy: &Policy<'_>) -> Self {
        let pstate = match policy.hwp {
            // intel_pstate_get_cpu_pstates with HWP: HWP_CAPABILITIES'
            // guaranteed and highest levels; on a hybrid part the lowest
            // ratio cast to a level (intel_pstate_hybrid_hwp_adjust).
            Some(caps) => PstateData {
                min_pstate: caps.limit_perf(policy.cpuinfo_min_khz),
                max_pstate: caps.guaranteed_perf,
                turbo_pstate: caps.highest_perf,
            },
            None => PstateData {
                min_pstate: policy.cpuinfo_min_khz / INTEL_PSTATE_SCALING_KHZ,
                max_pstate: policy.base_khz() / INTEL_PSTATE_SCALING_KHZ,
                turbo_pstate: policy.cpuinfo_max_khz / INTEL_PSTATE_SCALING_KHZ,
            },
        };
        let cpus = policy.cpus.iter().map(|&c| CpuData::new(c, &pstate)).collect();
        PolicyData { pstate, cpus, written_pstate: 0, written_hwp: None }
    }

    /// PERF_CTL writes: the clock runs the highest P-state its CPUs ask for.
    fn write_pstates(&mut self, policy: &mut Policy<'_>) {
        let pstate = self.cpus.iter().map(|c| c.current_pstate).max().unwrap_or(self.pstate.min_pstate);
        if pstate != self.written_pstate {
            self.written_pstate = pstate;
            policy.set_target(pstate * INTEL_PSTATE_SCALING_KHZ, Relation::L);
        }
    }

    /// MSR_HWP_REQUEST writes: the hardware honours the highest minimum.
    fn write_hwp(&mut self, policy: &mut Policy<'_>) {
        let mut req = self.cpus[0].hwp_request();
        for c in &self.cpus[1..] {
            let r = c.hwp_request();
            req.min_perf = req.min_perf.max(r.min_perf);
            req.max_perf = req.max_perf.max(r.max_perf);
            req.epp = req.epp.min(r.epp);
        }
        if self.written_hwp != Some(req) {
            self.written_hwp = Some(req);
            policy.set_hwp_request(req);
        }
    }
}

impl IntelPstate {
    pub fn new(tunables: IntelPstateTunables) -> Self {
        IntelPstate { tunables, policies: Vec::new(), pid: false }
    }

    /// intel_pstate_set_policy after the limits are updated.
    fn set_policy(&self, pd: &mut PolicyData, policy: &mut Policy<'_>) {
        let t = &self.tunables;
        if t.hwp {
            // intel_pstate_hwp_set.
            for c in &mut pd.cpus {
                let (min, epp) = match t.policy {
                    PstatePolicy::Performance => (c.max_perf_ratio, 0),
                    PstatePolicy::Powersave => (c.min_perf_ratio, t.epp),
                };
                c.hwp_req_cached = HwpRequest { min_perf: min, max_perf: c.max_perf_ratio, desired_perf: 0, epp };
            }
            pd.write_hwp(policy);
            return;
        }
        match t.policy {
            PstatePolicy::Performance => {
                // intel_pstate_max_within_limits.
                for c in &mut pd.cpus {
                    c.current_pstate = pd.pstate.min_pstate.max(c.max_perf_ratio);
                }
            }
            PstatePolicy::Powersave => {
                // intel_pstate_set_update_util_hook: no stale samples.
                for c in &mut pd.cpus {
                    c.sample.time_ns = 0;
                    c.current_pstate = c.prepare_request(&pd.pstate, c.current_pstate);
                }
            }
        }
        pd.write_pstates(policy);
    }

    /// intel_pstate_update_util: the non-HWP hook.
    fn update_util_pstate(&self, pd: &mut PolicyData, j: usize, policy: &mut Policy<'_>, time_ns: u64, flags: u32) {
        let t = &self.tunables;
        let tick_ns = policy.tick_ns;
        let p = pd.pstate;
        let cpu = &mut pd.cpus[j];
        if self.pid {
            // v4.6-v4.13 intel_pstate_update_util: a sample every 10 ms, no
            // IO-wait boost.
            cpu.last_update_ns = time_ns;
            if time_ns.saturating_sub(cpu.sample.time_ns) >= INTEL_PSTATE_SAMPLING_INTERVAL_NS && cpu.sample(policy.sched, time_ns) {
                let target = cpu.get_target_pstate_use_performance(&p);
                cpu.current_pstate = cpu.prepare_request(&p, target);
                pd.write_pstates(policy);
            }
            return;
        }
        let delta_ns = time_ns.saturating_sub(cpu.last_update_ns);
        let iowait = flags & SCHED_CPUFREQ_IOWAIT != 0;
        let mut sample_now = false;
        match t.iowait_boost {
            IowaitBoost::Weak => {
                if iowait {
                    cpu.iowait_boost = if delta_ns > tick_ns || cpu.iowait_boost < ONE_EIGHTH_FP {
                        ONE_EIGHTH_FP
                    } else {
                        (cpu.iowait_boost << 1).min(ONE_FP)
                    };
                } else if cpu.iowait_boost != 0 {
                    cpu.iowait_boost = if delta_ns > tick_ns { 0 } else { cpu.iowait_boost >> 1 };
                }
            }
            IowaitBoost::Strong => {
                if iowait {
                    cpu.iowait_boost = ONE_FP;
                    sample_now = true;
                } else if cpu.iowait_boost != 0 && delta_ns > tick_ns {
                    cpu.iowait_boost = 0;
                }
            }
        }
        if t.idle_boost && !iowait && delta_ns > tick_ns {
            cpu.iowait_boost = ONE_FP;
            sample_now = true;
        }
        cpu.last_update_ns = time_ns;
        if sample_now {
            // The last sample was fully busy: the P-state is at the top anyway.
            if cpu.sample.busy_scaled >> FRAC_BITS == 100 {
                return;
            }
        } else if time_ns.saturating_sub(cpu.sample.time_ns) < INTEL_PSTATE_SAMPLING_INTERVAL_NS {
            return;
        }
        if cpu.sample(policy.sched, time_ns) {
            // intel_pstate_adjust_pstate.
            let target = cpu.get_target_pstate(&p, t);
            cpu.current_pstate = cpu.prepare_request(&p, target);
            pd.write_pstates(policy);
        }
    }

    /// intel_pstate_update_util_hwp_local: the HWP dynamic boost hook on
    /// the CPU's own calls. The IOWAIT test reads `sched_flags`, which
    /// holds the flags of remote calls too (v6.8
    /// `intel_pstate_update_util_hwp` ORs them in before its own-CPU check),
    /// and clears it when it acts on one.
    fn update_util_hwp(&self, pd: &mut PolicyData, j: usize, policy: &mut Policy<'_>, time_ns: u64, flags: u32) {
        let p1 = pd.pstate.max_pstate;
        let tick_ns = policy.tick_ns;
        let cpu = &mut pd.cpus[j];
        cpu.sched_flags |= flags;
        let changed = if cpu.sched_flags & SCHED_CPUFREQ_IOWAIT != 0 {
            cpu.sched_flags = 0;
            let do_io = time_ns < cpu.last_io_update_ns + 2 * tick_ns;
            cpu.last_io_update_ns = time_ns;
            do_io && cpu.hwp_boost_up(p1, time_ns)
        } else if self.tunables.hwp_boost_migration && flags & SCHED_CPUFREQ_MIGRATION != 0 {
            cpu.hwp_boost_up(p1, time_ns)
        } else {
            cpu.hwp_boost_down(time_ns)
        };
        if changed {
            pd.write_hwp(policy);
        }
    }
}

impl CpufreqGovernor for IntelPstate {
    fn name(&self) -> &'static str {
        "intel_pstate"
    }

    fn uses_util_hook(&self) -> bool {
        self.tunables.uses_util_hook()
    }

    fn driver(&self) -> Option<&'static str> {
        Some("intel_pstate")
    }

    /// intel_pstate_cpu_init + set_policy the first time; a later start is a
    /// limits change (set_policy again with the new limits).
    fn start(&mut self, policy: &mut Policy<'_>) {
        let id = policy.id;
        if self.policies.len() <= id {
            self.policies.resize_with(id + 1, || None);
        }
        let mut pd = self.policies[id].take().unwrap_or_else(|| PolicyData::new(policy));
        for c in &mut pd.cpus {
            c.update_perf_limits(policy);
        }
        self.set_policy(&mut pd, policy);
        self.policies[id] = Some(pd);
    }

    /// v6.8 `intel_pstate_update_util()`: remote calls return at once.
    fn remote_hook_calls(&self) -> super::RemoteHookCalls {
        super::RemoteHookCalls::OwnCpu
    }

    fn update_util(&mut self, policy: &mut Policy<'_>, cpu: CpuId, time_ns: u64, flags: u32) {
        let Some(mut pd) = self.policies.get_mut(policy.id).and_then(Option::take) else {
            panic!("intel_pstate: hook call for cpu {cpu} at {time_ns} ns before policy {} started", policy.id);
        };
        let Some(j) = pd.cpus.iter().position(|c| c.cpu == cpu) else {
            panic!("intel_pstate: hook call at {time_ns} ns for cpu {cpu}, not in policy {}", policy.id);
        };
        if self.tunables.hwp {
            self.update_util_hwp(&mut pd, j, policy, time_ns, flags);
        } else {
            self.update_util_pstate(&mut pd, j, policy, time_ns, flags);
        }
        self.policies[policy.id] = Some(pd);
    }

    /// v6.8 `intel_pstate_update_util_hwp`: a remote call's flags are kept
    /// (`sched_flags |= flags`) before the own-CPU check returns, so a
    /// remote IOWAIT counts at the CPU's next own call. The non-HWP hook
    /// returns before it records anything.
    fn update_util_rejected(&mut self, call: &super::RejectedCall<'_>) {
        if !self.tunables.hwp {
            return;
        }
        if let Some(c) = self.policies.get_mut(call.policy).and_then(Option::as_mut).and_then(|pd| pd.cpus.iter_mut().find(|c| c.cpu == call.cpu)) {
            c.sched_flags |= call.flags;
        }
    }

    fn tunables(&self) -> Vec<(String, String)> {
        let t = &self.tunables;
        let mut v = vec![
            POLICY.show(if t.policy == PstatePolicy::Performance { "performance" } else { "powersave" }),
            HWP.show_flag(t.hwp),
        ];
        if t.hwp {
            v.push(EPP.show(t.epp));
            v.push(HWP_DYNAMIC_BOOST.show(u8::from(t.hwp_dynamic_boost)));
            v.push(HWP_BOOST_MIGRATION.show_flag(t.hwp_boost_migration));
        } else {
            v.push(IOWAIT_BOOST.show(if t.iowait_boost == IowaitBoost::Strong { "strong" } else { "weak" }));
            v.push(IDLE_BOOST.show_flag(t.idle_boost));
            v.push(RAMP_UP_FASTER.show_flag(t.ramp_up_faster));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::super::dbs::testutil::Harness;
    use super::*;
    use crate::platform::load_named;

    const MS: u64 = 1_000_000;
    const US: u64 = 1000;

    fn platform(spec: &str) -> Platform {
        load_named(&Spec::parse(spec, "test").unwrap()).unwrap()
    }

    fn governor(settings: &str, plat: &str) -> Result<Box<dyn CpufreqGovernor>> {
        build(&Spec::parse(&format!("intel_pstate:{settings}"), "test").unwrap(), &crate::kernel::BuildCtx::of(platform(plat).clone()))
    }

    /// One CPU with P-states 8..=39 (0.8–3.9 GHz); 36..=39 are turbo, so P1 = 35.
    fn harness() -> Harness {
        let mhz: Vec<u32> = (8..=39).map(|r| r * 100).collect();
        let mut h = Harness::new(&mhz, 1);
        for o in &mut h.opps {
            o.turbo = o.khz > 3_500_000;
        }
        h
    }

    /// A started governor without HWP on [`harness`] (tick 4 ms); `settings`
    /// go through the same parser as the command line's.
    fn started_pstate(settings: &str) -> (IntelPstate, Harness) {
        let tunables = {
            let g = governor(&format!("hwp=off,{settings}"), "skylake-e3-1240v5").unwrap();
            let kv: Vec<(String, String)> = g.tunables();
            let get = |k: &str| kv.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str() == "on" || v.as_str() == "strong");
            IntelPstateTunables {
                hwp: false,
                iowait_boost: if get("iowait_boost") == Some(true) { IowaitBoost::Strong } else { IowaitBoost::Weak },
                idle_boost: get("idle_boost") == Some(true),
                ramp_up_faster: get("ramp_up_faster") == Some(true),
                ..IntelPstateTunables::for_platform(&platform("skylake-e3-1240v5:hwp=off"))
            }
        };
        let mut g = IntelPstate::new(tunables);
        let mut h = harness();
        let out = h.call(|p| g.start(p));
        assert_eq!(out.target, Some((800_000, Relation::L)), "starts at the lowest P-state");
        (g, h)
    }

    /// A hook call at `t_ns` after the CPU was busy `busy_pct` of the time
    /// since the previous call; returns the P-state written, if any.
    fn call(g: &mut IntelPstate, h: &mut Harness, last_ns: &mut u64, t_ns: u64, busy_pct: u64, flags: u32) -> Option<u32> {
        let window = t_ns - *last_ns;
        h.sched.idle_ns[0] += window - window * busy_pct / 100;
        *last_ns = t_ns;
        h.call(|p| g.update_util(p, 0, t_ns, flags))
            .target
            .map(|(khz, _)| khz / INTEL_PSTATE_SCALING_KHZ)
    }

    fn boost_of(g: &IntelPstate) -> u64 {
        g.policies[0].as_ref().unwrap().cpus[0].iowait_boost
    }

    /// v5.1+ weak boost: IO wakeups under a tick apart start at 1/8 and
    /// double to 1; plain calls halve it; a call after more than a tick of
    /// silence clears it, and an IO wakeup after one restarts at 1/8.
    #[test]
    fn weak_iowait_boost_doubles_halves_and_resets() {
        let (mut g, mut h) = started_pstate("");
        let mut last = 0;
        let mut seq = Vec::new();
        for (t, flags) in [(1, SCHED_CPUFREQ_IOWAIT), (2, SCHED_CPUFREQ_IOWAIT), (3, SCHED_CPUFREQ_IOWAIT), (4, SCHED_CPUFREQ_IOWAIT), (5, SCHED_CPUFREQ_IOWAIT), (6, 0), (7, 0), (12, 0), (13, SCHED_CPUFREQ_IOWAIT), (18, SCHED_CPUFREQ_IOWAIT)] {
            call(&mut g, &mut h, &mut last, t * MS, 0, flags);
            seq.push(boost_of(&g));
        }
        assert_eq!(seq, [32, 64, 128, 256, 256, 128, 64, 0, 32, 32]);
    }

    /// The weak boost shows in the P-state of the next 10 ms sample as
    /// 1.25 × 39 × boost: after 1, 2, 3 and 4 close IO wakeups 6 (held at
    /// the lowest, 8), 12, 24 and 48 (capped at 39), on an idle CPU.
    #[test]
    fn weak_iowait_boost_p_states_follow_the_doubling() {
        for (wakeups, want) in [(1, 8), (2, 12), (3, 24), (4, 39)] {
            let (mut g, mut h) = started_pstate("");
            let mut last = 0;
            // The first sample (at 10 ms) is discarded; the CPU ran 1 %.
            assert_eq!(call(&mut g, &mut h, &mut last, 10 * MS, 1, 0), None);
            let mut got = None;
            for k in 0..wakeups {
                let t = 20 * MS - (wakeups - 1 - k) * 2 * MS;
                got = call(&mut g, &mut h, &mut last, t, 1, SCHED_CPUFREQ_IOWAIT);
            }
            assert_eq!(got.or(Some(8)), Some(want), "{wakeups} IO wakeups");
        }
    }

    /// v4.14–v5.0 strong boost: one IO wakeup samples at once and asks for
    /// the top; each later sample halves the boost (39, 24, 12, 8); the weak
    /// boost leaves the same single wakeup at the lowest P-state.
    #[test]
    fn strong_iowait_boost_jumps_to_the_top_then_halves_per_sample() {
        let (mut g, mut h) = started_pstate("iowait_boost=strong");
        let mut last = 0;
        assert_eq!(call(&mut g, &mut h, &mut last, 10 * MS, 1, 0), None);
        assert_eq!(call(&mut g, &mut h, &mut last, 12 * MS, 1, SCHED_CPUFREQ_IOWAIT), Some(39));
        let mut samples = Vec::new();
        for t in (14..=42).step_by(2) {
            if let Some(p) = call(&mut g, &mut h, &mut last, t * MS, 1, 0) {
                samples.push((t, p));
            }
        }
        assert_eq!(samples, [(22, 24), (32, 12), (42, 8)]);

        let (mut g, mut h) = started_pstate("iowait_boost=weak");
        let mut last = 0;
        call(&mut g, &mut h, &mut last, 10 * MS, 1, 0);
        assert_eq!(call(&mut g, &mut h, &mut last, 12 * MS, 1, SCHED_CPUFREQ_IOWAIT), None);
        for t in (14..=22).step_by(2) {
            assert_eq!(call(&mut g, &mut h, &mut last, t * MS, 1, 0), None, "weak at {t} ms: stays at 8");
        }
    }

    /// idle_boost: a call more than a tick after the previous one (the CPU
    /// idled) samples at once with boost 1; without it nothing happens
    /// until the 10 ms sample, which finds the CPU nearly idle.
    #[test]
    fn idle_boost_raises_the_p_state_on_exit_from_idle() {
        for (idle_boost, want) in [(true, Some(39)), (false, None)] {
            let (mut g, mut h) = started_pstate(&format!("idle_boost={}", if idle_boost { "on" } else { "off" }));
            let mut last = 0;
            call(&mut g, &mut h, &mut last, 10 * MS, 1, 0);
            call(&mut g, &mut h, &mut last, 11 * MS, 1, 0);
            assert_eq!(call(&mut g, &mut h, &mut last, 17 * MS, 1, 0), want, "idle_boost={idle_boost}");
        }
        // A call under a tick after the previous one is no idle exit.
        let (mut g, mut h) = started_pstate("idle_boost=on");
        let mut last = 0;
        call(&mut g, &mut h, &mut last, 10 * MS, 1, 0);
        assert_eq!(call(&mut g, &mut h, &mut last, 13 * MS, 1, 0), None);
    }

    /// ramp_up_faster: the sample at which busy crosses 50 % from below asks
    /// for the top instead of 1.25 × 39 × 0.6 = 28; the next one, still at
    /// 60 %, follows the rule again.
    #[test]
    fn ramp_up_faster_jumps_when_busy_crosses_the_threshold() {
        for (on, want) in [(false, [14, 28, 28]), (true, [14, 39, 28])] {
            let (mut g, mut h) = started_pstate(&format!("ramp_up_faster={}", if on { "on" } else { "off" }));
            let mut last = 0;
            call(&mut g, &mut h, &mut last, 10 * MS, 1, 0);
            let mut got = Vec::new();
            for (t, busy) in [(20, 30), (30, 60), (40, 60)] {
                // Calls every ms so that no idle period shows.
                for u in (t - 9..t).map(|m| m * MS) {
                    call(&mut g, &mut h, &mut last, u, busy, 0);
                }
                call(&mut g, &mut h, &mut last, t * MS, busy, 0);
                got.push(h.cur_khz / INTEL_PSTATE_SCALING_KHZ);
            }
            assert_eq!(got, want, "ramp_up_faster={on}");
        }
    }

    /// The anti-oscillation step: a window whose C0 time (30 %) ran at
    /// 3.9 GHz has average P-state 39 (APERF / MPERF: the idle 70 % does
    /// not count), so the target goes half way from the rule's 14 to 39.
    #[test]
    fn pid_controller_creeps_up_when_busy_and_drops_when_idle() {
        let (mut g, mut h) = started_pstate("");
        g.pid = true;
        let mut last = 0;
        // Windows of 10 ms; `at` P-state delivered over the C0 time.
        let window = |g: &mut IntelPstate, h: &mut Harness, last: &mut u64, t_ms: u64, busy_pct: u64, at: u64| {
            h.sched.aperf_khz_ns[0] += u128::from(10 * MS * busy_pct / 100) * u128::from(at * u64::from(INTEL_PSTATE_SCALING_KHZ));
            call(g, h, last, t_ms * MS, busy_pct, 0)
        };
        assert_eq!(window(&mut g, &mut h, &mut last, 10, 100, 8), None, "the first sample is discarded");
        // Fully busy at the P-state asked for: 100 % against the 97 %
        // setpoint, 0.2 × −3 = −0.6, rounded down to −1: one P-state up.
        assert_eq!(window(&mut g, &mut h, &mut last, 20, 100, 8), Some(9));
        assert_eq!(window(&mut g, &mut h, &mut last, 30, 100, 9), Some(10));
        // Turbo delivered 39 where 10 was asked: 390 %, error −293, 58.4 up:
        // clamped to the top.
        assert_eq!(window(&mut g, &mut h, &mut last, 40, 100, 39), Some(39));
        // 100 ms since the last sample (the hook sleeps while the CPU idles),
        // 10 % of it in C0 at the top: 100 % delivered, scaled by 10/100 to
        // 9.8 %; error 87.2, 17 P-states down.
        h.sched.aperf_khz_ns[0] += u128::from(10 * MS) * u128::from(39 * u64::from(INTEL_PSTATE_SCALING_KHZ));
        assert_eq!(call(&mut g, &mut h, &mut last, 140 * MS, 10, 0), Some(22));
        // The load-based target (v4.14+) would have gone to the top at once.
        let (mut g, mut h) = started_pstate("");
        let mut last = 0;
        call(&mut g, &mut h, &mut last, 10 * MS, 100, 0);
        assert_eq!(call(&mut g, &mut h, &mut last, 20 * MS, 100, 0), Some(39));
    }

    #[test]
    fn pid_is_the_algorithm_before_v4_14() {
        for (kernel, pid) in [("4.8", true), ("4.16", false)] {
            let k = crate::kernel::KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
            let ctx = crate::kernel::BuildCtx::new(platform("broadwell-2s-e5-2698v4"), k);
            let mut g = build(&Spec::parse("intel_pstate", "test").unwrap(), &ctx).unwrap();
            let mut h = harness();
            h.call(|p| g.start(p));
            let mut last = 0;
            let mut at = |g: &mut Box<dyn CpufreqGovernor>, h: &mut Harness, t_ms: u64| {
                h.sched.aperf_khz_ns[0] += u128::from((t_ms * MS).saturating_sub(last)) * 800_000;
                last = t_ms * MS;
                h.call(|p| g.update_util(p, 0, t_ms * MS, 0)).target
            };
            at(&mut g, &mut h, 10);
            // Fully busy at the lowest P-state: PID steps up by one, the
            // load-based target goes to the top.
            let next = at(&mut g, &mut h, 20).map(|(khz, _)| khz / INTEL_PSTATE_SCALING_KHZ);
            assert_eq!(next, Some(if pid { 9 } else { 39 }), "{kernel}");
        }
    }

    #[test]
    fn average_p_state_holds_the_target_up() {
        let (mut g, mut h) = started_pstate("");
        let mut last = 0;
        call(&mut g, &mut h, &mut last, 10 * MS, 1, 0);
        h.sched.aperf_khz_ns[0] = u128::from(3 * MS) * 3_900_000;
        assert_eq!(call(&mut g, &mut h, &mut last, 20 * MS, 30, 0), Some(14 + (39 - 14) / 2));
    }

    /// A started HWP governor on [`harness`]; returns it with the request.
    fn started_hwp(settings: &str) -> (Box<dyn CpufreqGovernor>, Harness, HwpRequest) {
        let mut g = governor(&format!("hwp=on,{settings}"), "skylake-e3-1240v5").unwrap();
        let mut h = harness();
        let out = h.call(|p| g.start(p));
        (g, h, out.hwp.expect("HWP request at start"))
    }

    #[test]
    fn hwp_requests_follow_the_policy() {
        let (g, _, req) = started_hwp("");
        assert_eq!(req, HwpRequest { min_perf: 8, max_perf: 39, desired_perf: 0, epp: 128 });
        assert!(g.uses_util_hook(), "skylake is a server: boost on, hook installed");
        let (_, _, req) = started_hwp("epp=balance_power,hwp_dynamic_boost=0");
        assert_eq!(req.epp, 0xC0);
        let (g, _, req) = started_hwp("policy=performance");
        assert_eq!(req, HwpRequest { min_perf: 39, max_perf: 39, desired_perf: 0, epp: 0 });
        assert!(!g.uses_util_hook());
    }

    /// HWP dynamic boost: IO wakeups under two ticks apart raise the HWP
    /// minimum from 8 to (8 + 35) / 2 = 21, to P1 = 35, to the maximum 39;
    /// the first of a pair does not count. The boost outlives plain calls
    /// until 3 ms pass without any, then the request returns to 8 at once.
    #[test]
    fn hwp_dynamic_boost_steps_up_on_io_and_drops_after_the_hold_time() {
        let (mut g, mut h, _) = started_hwp("hwp_dynamic_boost=1");
        let mut mins = Vec::new();
        for (t_us, flags) in [
            (100_000, SCHED_CPUFREQ_IOWAIT),
            (102_000, SCHED_CPUFREQ_IOWAIT),
            (104_000, SCHED_CPUFREQ_IOWAIT),
            (106_000, SCHED_CPUFREQ_IOWAIT),
            (107_000, SCHED_CPUFREQ_IOWAIT),
            (108_000, 0),
            (110_000, 0),
            (113_000, 0),
            (116_500, 0),
        ] {
            let out = h.call(|p| g.update_util(p, 0, t_us * US, flags));
            mins.push(out.hwp.map(|r| r.min_perf));
        }
        assert_eq!(mins, [None, Some(21), Some(35), Some(39), None, None, None, None, Some(8)]);

        // IO wakeups more than two ticks (8 ms) apart never boost.
        let (mut g, mut h, _) = started_hwp("hwp_dynamic_boost=1");
        for t in [100, 109, 118] {
            assert!(h.call(|p| g.update_util(p, 0, t * MS, SCHED_CPUFREQ_IOWAIT)).hwp.is_none());
        }
    }

    /// RFC v1's migration boost: off, a migration call is a plain call; on,
    /// it raises the minimum one step without the two-tick qualification.
    #[test]
    fn hwp_boost_migration_switch() {
        for (on, want) in [(false, None), (true, Some(21))] {
            let (mut g, mut h, _) = started_hwp(&format!("hwp_boost_migration={}", if on { "on" } else { "off" }));
            let out = h.call(|p| g.update_util(p, 0, 100 * MS, SCHED_CPUFREQ_MIGRATION));
            assert_eq!(out.hwp.map(|r| r.min_perf), want, "hwp_boost_migration={on}");
        }
    }

    #[test]
    fn defaults_and_bad_settings() {
        let sky = governor("", "skylake-e3-1240v5").unwrap();
        assert_eq!(
            sky.tunables(),
            [("policy", "powersave"), ("hwp", "on"), ("epp", "128"), ("hwp_dynamic_boost", "1"), ("hwp_boost_migration", "off")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let bdw = governor("", "broadwell-2s-e5-2698v4").unwrap();
        assert_eq!(
            bdw.tunables(),
            [("policy", "powersave"), ("hwp", "off"), ("iowait_boost", "weak"), ("idle_boost", "off"), ("ramp_up_faster", "off")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert!(!IntelPstateTunables::for_platform(&platform("skylake-e3-1240v5:hwp=off")).hwp_dynamic_boost);
        let err = |s: &str, plat: &str| governor(s, plat).err().unwrap().to_string();
        let e = err("hwp=on", "broadwell-2s-e5-2698v4");
        assert!(e.contains("hwp=on") && e.contains("broadwell"), "{e}");
        let e = err("epp=10", "broadwell-2s-e5-2698v4");
        assert!(e.contains("epp applies only with HWP"), "{e}");
        let e = err("iowait_boost=strong", "skylake-e3-1240v5");
        assert!(e.contains("iowait_boost applies only without HWP"), "{e}");
        let e = err("epp=256", "skylake-e3-1240v5");
        assert!(e.contains("0 to 255"), "{e}");
        let e = err("policy=performance,epp=128", "skylake-e3-1240v5");
        assert!(e.contains("policy=performance"), "{e}");
        let e = err("iowait_boost=medium", "broadwell-2s-e5-2698v4");
        assert!(e.contains("weak, strong"), "{e}");
        let e = err("epp=5", "skylake-e3-1240v5:hwp=off");
        assert!(e.contains("epp applies only with HWP"), "{e}");
    }
}

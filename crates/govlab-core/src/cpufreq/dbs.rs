//! dbs ("demand-based switching"): the sampling machinery that ondemand and
//! conservative share. They supply only their decision
//! ([`DbsGovernor::gov_dbs_update`]); everything else is here.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/cpufreq_governor.c (with
//! cpufreq_governor.h), plus the two cpufreq-core helpers the governors need
//! (`cpufreq_policy_transition_delay_us`, include/linux/cpufreq.h, and the
//! frequency-table lookup of drivers/cpufreq/freq_table.c): dbs_update(),
//! dbs_work_handler() and cpufreq_dbs_governor_init() of cpufreq_governor.c.
//!
//! # The idea
//!
//! A dbs governor cannot see what the tasks need. It looks back instead: at
//! every sample it measures which share of the last window each CPU of the
//! policy spent not idle, and treats the busiest CPU as the policy's load.
//!
//! 1. For every CPU of the policy, read the cumulative idle time and the
//!    clock. Their differences with the previous sample are the window
//!    (`time_elapsed`) and the idle part of it. With `io_is_busy`, time spent
//!    idle while a task waits for IO counts as busy (it is taken out of the
//!    idle time).
//! 2. The CPU's load is 100 × (window − idle) / window, in whole percent. A
//!    window of length zero reuses the previous load.
//! 3. The long-idle rule (2014, switch `copy_prev_load`): if the CPU slept
//!    through more than two sampling periods and the previous load is not 0,
//!    the previous load is used instead of the (near zero) measured one, and
//!    the previous load is set to 0, so that a second long idle window in a
//!    row is measured normally. The period here is `sampling_rate × rate_mult`.
//! 4. The policy load is the maximum over its CPUs. The same pass records
//!    `idle_periods`: the smallest number of whole periods slept through,
//!    over the CPUs that slept more than two (`u32::MAX` if none did);
//!    conservative uses it to catch up on the steps it missed.
//! 5. The governor turns the load into a frequency request and returns the
//!    delay to the next sample: `sampling_rate × rate_mult` normally, where
//!    ondemand raises `rate_mult` to `sampling_down_factor` while at the top.
//!
//! # Sampling: a deferrable timer, or the scheduler's hook (v4.6+)
//!
//! Until v4.5 each CPU had a deferrable timer: govlab arms one per policy,
//! which does not wake an idle policy and fires at the first wakeup of any
//! of its CPUs. Since v4.6 ("cpufreq: governor: Replace timers with
//! utilization update callbacks", `EraId::DbsUtilHook`) the kernel samples
//! from the scheduler's cpufreq hook instead (v6.8
//! `dbs_update_util_handler`): a hook call on a CPU of the policy that the
//! policy accepts (`cpufreq_this_cpu_can_update`), at least
//! `sample_delay_ns` after `last_sample_time`, records the time and queues
//! the sample (irq_work, then `dbs_work_handler` in a kworker). govlab
//! samples at that hook call itself: the irq_work and kworker latency (a
//! few µs) and their CPU time are left out, and so is `work_in_progress`
//! (the sample is done before the next call can come). In both forms idle
//! CPUs are not sampled and the first sample after an idle period sees one
//! long window; with the hook a busy CPU's sample waits for its next hook
//! call (its tick, at the latest), and a wakeup is sampled at once.
//!
//! # Which long-idle detection
//!
//! The 2014 patch (18b46abd0009, Srivatsa S. Bhat, "Be friendly towards
//! latency-sensitive bursty workloads", v3.16) detected a long idle from the
//! **wall time** of the window (`window > 2 × period`). Since v4.18
//! (7592019634f8, Chen Yu, "Fix long idle detection logic in load
//! calculation") the test uses the **idle time** of the window
//! (`idle > 2 × period`), because with hook-driven sampling a busy CPU could
//! also see long windows. Both are here, by the run's kernel version
//! ([`DbsData::long_idle_by_idle_time`]). With `copy_prev_load = off` the
//! rule is absent, as before the 2014 patch; its default follows the version
//! (off before v3.16), and `on` before v3.16 is the patch on top.
//!
//! # Sampling rate by version
//!
//! From v4.14 ("cpufreq: governor: Drop min_sampling_rate"): default
//! max(2 ticks, the policy's transition delay), at least 2 ticks. Before:
//! a `min_sampling_rate` (ondemand 10 ms with NOHZ idle accounting,
//! conservative 20 ticks, each at least 20 × the latency in µs), the
//! default max(min_sampling_rate, 1000 × latency) and smaller values raised
//! to the minimum ([`sampling_rate`]).
//!
//! # Left out
//!
//! * `ignore_nice_load` is accepted (and clamped as the kernel does) but has
//!   no effect: the engine has no nice-time accounting yet.
//! * Jiffy-based idle accounting (no NOHZ) and its "negative idle time"
//!   case: govlab's idle accounting is exact, so idle time is clamped at 0.
//! * The kernel's "only one CPU of a shared policy may queue a sample"
//!   machinery (work_count, work_in_progress): one timer per policy here.
//! * Runtime tunable changes and their side effects (store_sampling_rate
//!   re-arming, gov_update_cpu_data): tunables are fixed when a run is built.
//! * `Policy` carries no timestamp on `start`, so the first start is taken to
//!   happen at t = 0 (the engine starts every governor at boot, before any
//!   CPU ran or idled). A later `start` is treated as the kernel's `limits`
//!   callback (apply the limits, sample at the next opportunity).

use super::{CpufreqGovernor, Policy, Relation, SchedView};
use crate::error::Result;
use crate::kernel::{BuildCtx, EraId, Patch};
use crate::params::{ParamDefault, ParamSpec, Params, Range, UINT_MAX};
use crate::platform::{CpuId, Driver, Platform};

// ---- cpufreq core constants ----------------------------------------------

/// Multiplier from cpuinfo.transition_latency (µs) to the default transition
/// delay (µs); also the delay when the latency is unknown (LATENCY_MULTIPLIER,
/// include/linux/cpufreq.h, v6.8).
pub const LATENCY_MULTIPLIER: u32 = 1000;
/// Cap on the transition delay derived from the latency, µs: 10 ms from v4.14
/// up to and including v6.8 (2 ms from v6.9: [`TRANSITION_DELAY_CAP_V6_9_US`]). Commit e13aa799c2a6 ("cpufreq: Change default
/// transition delay to 2ms") was still under review in February 2024 and
/// entered linux-pm's linux-next on 2024-02-13 with other v6.9 material, so
/// the 2 ms cap is v6.9 (it is sometimes placed in v6.8; the linux-pm push
/// log and the v2 review thread say otherwise).
pub const TRANSITION_DELAY_CAP_US: u32 = 10_000;
/// The cap from v6.9 (e13aa799c2a6, `2 * MSEC_PER_SEC`) to v6.11.
pub const TRANSITION_DELAY_CAP_V6_9_US: u32 = 2_000;
/// intel_cpufreq (intel_pstate in passive mode) without HWP sets
/// policy->transition_delay_us to this (INTEL_CPUFREQ_TRANSITION_DELAY).
pub const INTEL_CPUFREQ_TRANSITION_DELAY_US: u32 = 500;
/// intel_cpufreq with HWP (INTEL_CPUFREQ_TRANSITION_DELAY_HWP).
pub const INTEL_CPUFREQ_TRANSITION_DELAY_HWP_US: u32 = 5000;

// ---- dbs constants ---------------------------------------------------------

/// The shortest sampling period, in ticks: CPUFREQ_DBS_MIN_SAMPLING_INTERVAL
/// is 2 × TICK_NSEC (cpufreq_governor.c, since v4.14). Writing a smaller
/// sampling_rate is rejected (-EINVAL).
pub const CPUFREQ_DBS_MIN_SAMPLING_TICKS: u64 = 2;

// ---- cpufreq core helpers --------------------------------------------------

/// The transition delay the driver implies for a policy, µs
/// (cpufreq_policy_transition_delay_us, drivers/cpufreq/cpufreq.c):
///
/// 1. a driver that sets policy->transition_delay_us wins: intel_cpufreq
///    (the generic governors run on intel_pstate in passive mode) sets
///    500 µs, or 5000 µs with HWP;
/// 2. otherwise, from cpuinfo.transition_latency L in whole µs, when L > 0:
///    min(1000 × L, 10 ms) up to v6.8; min(1000 × L, 2 ms) from v6.9
///    (e13aa799c2a6); L + L/2 from v6.12 ("cpufreq: sched/schedutil: Remove
///    LATENCY_MULTIPLIER": 50 % headroom over the latency);
/// 3. 1000 µs when L is unknown (0), in every version.
///
/// Between v6.9 and v6.12 a latency above 2 ms was also taken as it is, and
/// a 10 ms cap on 1.5 × L came back in 2025: no govlab platform has a
/// latency above 1450 µs, so neither changes a result here.
///
/// The latency is that of `domain`'s core type. With tunables global to all
/// policies (x86), the kernel derives them from the first policy initialised,
/// so callers pass domain 0.
pub fn policy_transition_delay_us(ctx: &BuildCtx, domain: usize) -> u32 {
    let platform = &ctx.platform;
    // A generic governor on intel_pstate runs it in passive mode.
    if matches!(platform.driver, Driver::IntelPstate { .. }) {
        return if ctx.hwp {
            INTEL_CPUFREQ_TRANSITION_DELAY_HWP_US
        } else {
            INTEL_CPUFREQ_TRANSITION_DELAY_US
        };
    }
    let latency_us = platform.domain_type(domain).transition_latency_ns / 1000;
    if latency_us == 0 {
        return LATENCY_MULTIPLIER;
    }
    if ctx.has(EraId::TransitionDelayFromLatency) {
        return (latency_us + latency_us / 2).min(u64::from(u32::MAX)) as u32;
    }
    let cap = if ctx.has(EraId::SchedutilRateLimit2ms) { TRANSITION_DELAY_CAP_V6_9_US } else { TRANSITION_DELAY_CAP_US };
    latency_us.saturating_mul(u64::from(LATENCY_MULTIPLIER)).min(u64::from(cap)) as u32
}

/// The table frequency a request ends at (cpufreq_frequency_table_target
/// after __cpufreq_driver_target's clamping): clamp to the policy limits,
/// then pick from the driver's table by relation. RELATION_C ties go to the
/// higher frequency, as govlab's driver resolves them. (v6.8 uses the
/// "efficient" relations L/H/C-E; govlab marks no OPP inefficient, so they
/// resolve the same.)
pub fn frequency_table_target(policy: &Policy<'_>, khz: u32, relation: Relation) -> u32 {
    let target = khz.clamp(policy.min_khz, policy.max_khz);
    let opps = policy.opps;
    let at_least = || opps.iter().position(|o| o.khz >= target).unwrap_or(opps.len() - 1);
    let at_most = || opps.iter().rposition(|o| o.khz <= target).unwrap_or(0);
    match relation {
        Relation::L => opps[at_least()].khz,
        Relation::H => opps[at_most()].khz,
        Relation::C => {
            let (lo, hi) = (opps[at_most()].khz, opps[at_least()].khz);
            if target.abs_diff(lo) < target.abs_diff(hi) {
                lo
            } else {
                hi
            }
        }
    }
}

/// The shortest sampling_rate the kernel accepts, µs (2 ticks).
pub fn min_sampling_interval_us(tick_ns: u64) -> u64 {
    CPUFREQ_DBS_MIN_SAMPLING_TICKS * tick_ns / 1000
}

/// Default sampling_rate, µs (cpufreq_dbs_governor_init since v4.14): the
/// larger of two ticks and the policy's transition delay.
pub fn default_sampling_rate_us(ctx: &BuildCtx) -> u32 {
    let floor = min_sampling_interval_us(ctx.tick_ns());
    floor.max(u64::from(policy_transition_delay_us(ctx, 0))) as u32
}

// ---- tunables shared by ondemand and conservative ---------------------------

/// sampling_rate, µs (store_sampling_rate): default the larger of two ticks
/// and the policy's transition delay; below two ticks rejected.
pub const SAMPLING_RATE: ParamSpec<BuildCtx> = ParamSpec {
    name: "sampling_rate",
    unit: "µs",
    default: ParamDefault::DerivedVersioned {
        doc: "max(2 ticks, transition delay) µs",
        doc_in: |c| {
            if c.kernel.dbs_min_sampling_rate() {
                "max(min_sampling_rate, 1000 x latency) µs, min_sampling_rate = max(10 ms for ondemand or 20 ticks for conservative, \
                 20 x latency); smaller values are raised to it"
            } else {
                "max(2 ticks, transition delay) µs"
            }
        },
        value: |c| u64::from(default_sampling_rate_us(c)),
    },
    range: Range::UintFrom { min: |c| min_sampling_interval_us(c.tick_ns()), max: UINT_MAX },
    help: "sampling period in µs; at least 2 ticks (smaller is rejected)",
};

/// ignore_nice_load, 0 or 1 (store_ignore_nice_load clamps larger values to
/// 1). No effect in govlab yet: the engine has no nice accounting.
pub const IGNORE_NICE_LOAD: ParamSpec<BuildCtx> = ParamSpec {
    name: "ignore_nice_load",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Clamp { max: 1 },
    help: "leave nice time out of the load; clamped to 1 (no effect yet: no nice accounting)",
};

/// govlab switch, not in sysfs: the 2014 copy-previous-load rule (see the
/// module doc); off reproduces the behaviour before the patch.
pub const COPY_PREV_LOAD: ParamSpec<BuildCtx> = ParamSpec {
    name: "copy_prev_load",
    unit: "",
    default: ParamDefault::Versioned {
        doc: "on from 3.16, off before (on = the patch on top)",
        value: |c| if c.kernel.merged(&COPY_PREV_LOAD_PATCH) { "on" } else { "off" },
    },
    range: Range::Switch,
    help: "govlab switch: reuse the previous load once after a long idle (2014 rule); off = before it; default by version: on from 3.16, off before (on = the patch on top)",
};

/// The patch behind [`COPY_PREV_LOAD`], mainline from v3.16.
pub const COPY_PREV_LOAD_PATCH: Patch = Patch {
    tunable: "copy_prev_load",
    value: "on",
    merged_in: Some(EraId::CopyPrevLoad),
    subject: "cpufreq: governor: Be friendly towards latency-sensitive bursty workloads (18b46abd0009, v3.16)",
};

/// The eras both dbs governors share (ondemand and conservative add
/// their own).
pub const DBS_ERAS: [EraId; 8] = [
    EraId::CopyPrevLoad,
    EraId::DbsUtilHook,
    EraId::IntelPstatePassive,
    EraId::DbsSamplingTicks,
    EraId::DbsLongIdle,
    EraId::IntelPstatePassiveHwp,
    EraId::SchedutilRateLimit2ms,
    EraId::TransitionDelayFromLatency,
];

// ---- before v4.14: min_sampling_rate ------------------------------------------

/// ondemand's `min_sampling_rate` with NOHZ idle micro-accounting, µs
/// (MICRO_FREQUENCY_MIN_SAMPLE_RATE, cpufreq_governor.h, v3.x to v4.13;
/// od_init() picks it when get_cpu_idle_time_us() works, which govlab's
/// exact idle accounting always does).
pub const MICRO_FREQUENCY_MIN_SAMPLE_RATE_US: u64 = 10_000;
/// The floor from the transition latency: min_sampling_rate is at least
/// this many times the latency in µs (MIN_LATENCY_MULTIPLIER, v3.x; value
/// from docs/research/kernel-eras.md, read at dfa5bb622555).
pub const MIN_LATENCY_MULTIPLIER: u64 = 20;
/// conservative's `min_sampling_rate` before v4.14: MIN_SAMPLING_RATE_RATIO
/// x jiffies_to_usecs(10), in ticks (cs_init(); conservative never took the
/// micro-accounting rate).
pub const CS_MIN_SAMPLING_TICKS: u64 = 2 * 10;

/// Which dbs governor a pre-v4.14 `min_sampling_rate` is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbsKind {
    Ondemand,
    Conservative,
}

/// cpuinfo.transition_latency in µs as cpufreq_governor_dbs(POLICY_INIT)
/// took it before v4.14: whole µs, 1 when unknown (0).
fn legacy_latency_us(platform: &Platform) -> u64 {
    (platform.domain_type(0).transition_latency_ns / 1000).max(1)
}

/// Before v4.14: `min_sampling_rate`, µs: the governor's own (10 ms for
/// ondemand with NOHZ accounting, 20 ticks for conservative) raised to
/// MIN_LATENCY_MULTIPLIER x latency (cpufreq_governor_dbs, POLICY_INIT).
#[must_use]
pub fn legacy_min_sampling_rate_us(ctx: &BuildCtx, kind: DbsKind) -> u64 {
    let own = match kind {
        DbsKind::Ondemand => MICRO_FREQUENCY_MIN_SAMPLE_RATE_US,
        DbsKind::Conservative => CS_MIN_SAMPLING_TICKS * ctx.tick_ns() / 1000,
    };
    own.max(MIN_LATENCY_MULTIPLIER * legacy_latency_us(&ctx.platform))
}

/// Before v4.14: the default sampling_rate, µs: max(min_sampling_rate,
/// LATENCY_MULTIPLIER x latency), with no 10 ms cap and no driver
/// transition delay (legacy governors read neither before v4.14).
#[must_use]
pub fn legacy_default_sampling_rate_us(ctx: &BuildCtx, kind: DbsKind) -> u64 {
    legacy_min_sampling_rate_us(ctx, kind).max(u64::from(LATENCY_MULTIPLIER) * legacy_latency_us(&ctx.platform))
}

/// sampling_rate for `kernel`: from v4.14 as [`SAMPLING_RATE`] declares
/// (at least 2 ticks, smaller rejected); before, the `min_sampling_rate`
/// era: a smaller value is raised to min_sampling_rate, as
/// update_sampling_rate() / cs's store_sampling_rate did.
pub(crate) fn sampling_rate(p: &mut Params<'_>, ctx: &BuildCtx, kind: DbsKind) -> Result<u32> {
    if !ctx.kernel.dbs_min_sampling_rate() {
        return uint32(p, &SAMPLING_RATE, ctx);
    }
    let min = legacy_min_sampling_rate_us(ctx, kind);
    let v = p.u64(SAMPLING_RATE.name, legacy_default_sampling_rate_us(ctx, kind), 0, UINT_MAX)?;
    Ok(u32::try_from(v.max(min)).unwrap_or(u32::MAX))
}

/// copy_prev_load in `ctx`'s kernel: default on where the 2014 patch is
/// mainline (v3.16+), off before; given, it is the patch on top.
pub(crate) fn copy_prev_load(p: &mut Params<'_>, ctx: &BuildCtx) -> Result<bool> {
    p.flag(&COPY_PREV_LOAD, ctx)
}

/// A u32 tunable read with its spec (the kernel's stores parse unsigned
/// 32-bit numbers, so every range here fits).
pub(crate) fn uint32(p: &mut Params<'_>, spec: &ParamSpec<BuildCtx>, ctx: &BuildCtx) -> Result<u32> {
    Ok(u32::try_from(p.uint(spec, ctx)?).expect("a u32 tunable's range fits in u32"))
}

// ---- dbs state ---------------------------------------------------------------

/// The tunables the shared sampling code reads (the common part of struct
/// dbs_data), in sysfs units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbsData {
    /// sampling_rate, µs.
    pub sampling_rate_us: u32,
    /// io_is_busy: iowait time counts as busy.
    pub io_is_busy: bool,
    /// ignore_nice_load (accepted, no effect: no nice accounting yet).
    pub ignore_nice_load: bool,
    /// govlab switch: the 2014 copy-previous-load-once-after-idle rule.
    pub copy_prev_load: bool,
    /// The long-idle test reads the window's idle time (v4.18+,
    /// 7592019634f8); false: its wall time (v3.16 to v4.17).
    pub long_idle_by_idle_time: bool,
}

/// Per-CPU sampling state (struct cpu_dbs_info).
#[derive(Debug, Clone)]
pub struct CpuDbsInfo {
    pub cpu: CpuId,
    /// Cumulative idle time at the previous sample (iowait left out when
    /// io_is_busy), ns.
    pub prev_cpu_idle_ns: u64,
    /// Time of the previous sample, ns.
    pub prev_update_time_ns: u64,
    /// Load found at the previous sample, %. 0 at start and after a copy, so
    /// that the next long window is measured.
    pub prev_load: u32,
}

/// Per-policy sampling state (struct policy_dbs_info).
#[derive(Debug, Clone)]
pub struct PolicyDbsInfo {
    pub cpus: Vec<CpuDbsInfo>,
    /// Multiplier of sampling_rate for the next delay and for the long-idle
    /// test; 1 except while ondemand holds the top frequency.
    pub rate_mult: u32,
    /// At the last sample: the fewest whole periods slept through, over the
    /// CPUs that slept more than two; `u32::MAX` when none did.
    pub idle_periods: u32,
    /// Delay to the next sample as last programmed, ns (sample_delay_ns); 0
    /// after a limits change (sample at once).
    pub sample_delay_ns: u64,
}

/// Cumulative idle time of `cpu` (get_cpu_idle_time): govlab's idle time
/// includes idle-with-iowait, which io_is_busy takes out.
fn get_cpu_idle_time(sched: &dyn SchedView, cpu: CpuId, now_ns: u64, io_busy: bool) -> u64 {
    let idle = sched.idle_ns(cpu, now_ns);
    if io_busy {
        idle.saturating_sub(sched.iowait_ns(cpu, now_ns))
    } else {
        idle
    }
}

impl PolicyDbsInfo {
    /// cpufreq_dbs_governor_start's per-CPU part: baselines at `now_ns`,
    /// previous load 0 (the first sample computes), rate_mult 1.
    pub fn new(data: &DbsData, policy: &Policy<'_>, now_ns: u64) -> Self {
        let cpus = policy
            .cpus
            .iter()
            .map(|&cpu| CpuDbsInfo {
                cpu,
                prev_cpu_idle_ns: get_cpu_idle_time(policy.sched, cpu, now_ns, data.io_is_busy),
                prev_update_time_ns: now_ns,
                prev_load: 0,
            })
            .collect();
        PolicyDbsInfo {
            cpus,
            rate_mult: 1,
            idle_periods: u32::MAX,
            sample_delay_ns: us_to_ns(u64::from(data.sampling_rate_us)),
        }
    }
}

/// Take a sample of every CPU of the policy and return the policy load, %
/// (dbs_update). Steps 1–4 of the module doc.
pub fn dbs_update(data: &DbsData, dbs: &mut PolicyDbsInfo, policy: &Policy<'_>, now_ns: u64) -> u32 {
    // The period of the long-idle test includes rate_mult, to stay
    // conservative while ondemand stretches its samples.
    let period_ns = us_to_ns(u64::from(data.sampling_rate_us) * u64::from(dbs.rate_mult)).max(1);
    let mut max_load = 0;
    let mut idle_periods = u32::MAX;
    for j in &mut dbs.cpus {
        // Step 1: the window and its idle part.
        let cur_idle_ns = get_cpu_idle_time(policy.sched, j.cpu, now_ns, data.io_is_busy);
        let time_elapsed_ns = now_ns.saturating_sub(j.prev_update_time_ns);
        j.prev_update_time_ns = now_ns;
        let idle_time_ns = cur_idle_ns.saturating_sub(j.prev_cpu_idle_ns);
        j.prev_cpu_idle_ns = cur_idle_ns;
        // (ignore_nice_load would add the window's nice time to idle here.)

        let long_idle = idle_time_ns > 2 * period_ns;
        let copy_window_long = if data.long_idle_by_idle_time { long_idle } else { time_elapsed_ns > 2 * period_ns };
        let load = if time_elapsed_ns == 0 {
            // Step 2: two samples at the same instant.
            j.prev_load
        } else if data.copy_prev_load && copy_window_long && j.prev_load != 0 {
            // Step 3: first sample after a long idle: reuse, once.
            let load = j.prev_load;
            j.prev_load = 0;
            load
        } else {
            // Step 2: the measured load.
            let busy_ns = time_elapsed_ns.saturating_sub(idle_time_ns);
            let load = (100 * busy_ns / time_elapsed_ns) as u32;
            j.prev_load = load;
            load
        };

        // Step 4: idle periods (for conservative) and the policy maximum.
        if long_idle {
            let periods = (idle_time_ns / period_ns).min(u64::from(u32::MAX)) as u32;
            idle_periods = idle_periods.min(periods);
        }
        max_load = max_load.max(load);
    }
    dbs.idle_periods = idle_periods;
    max_load
}

fn us_to_ns(us: u64) -> u64 {
    us.saturating_mul(1000)
}

// ---- the governor skeleton -------------------------------------------------

/// What a dbs governor supplies (the callbacks of struct dbs_governor).
pub trait DbsGovernor: Send {
    /// The governor's own per-policy state (od_policy_dbs_info,
    /// cs_policy_dbs_info).
    type PolicyInfo: Send;

    fn name(&self) -> &'static str;

    /// The tunables the shared code reads.
    fn dbs_data(&self) -> DbsData;

    /// gov->start: the governor's state when it takes over a policy.
    fn start(&self, policy: &Policy<'_>) -> Self::PolicyInfo;

    /// gov->gov_dbs_update: take a sample (calling [`dbs_update`] when it
    /// needs the load), request a frequency, and return the delay to the
    /// next sample, µs.
    fn gov_dbs_update(
        &self,
        dbs: &mut PolicyDbsInfo,
        info: &mut Self::PolicyInfo,
        policy: &mut Policy<'_>,
        now_ns: u64,
    ) -> u64;

    /// Resolved tunables, sysfs names and units.
    fn tunables(&self) -> Vec<(String, String)>;
}

/// Both halves of one policy's state.
struct DbsPolicy<T> {
    dbs: PolicyDbsInfo,
    info: T,
    /// When the hook last queued a sample, ns (last_sample_time, v4.6+).
    last_sample_time_ns: u64,
}

/// A dbs governor on govlab's interface: the shared start / limits / sample
/// cycle of cpufreq_governor.c around a [`DbsGovernor`]'s decision.
pub struct DbsGovernorCore<G: DbsGovernor> {
    gov: G,
    /// Sample from the scheduler's hook (v4.6+), not from a deferrable timer.
    sample_from_hook: bool,
    /// Indexed by policy id; None until started.
    policies: Vec<Option<DbsPolicy<G::PolicyInfo>>>,
}

impl<G: DbsGovernor> DbsGovernorCore<G> {
    pub fn new(gov: G, sample_from_hook: bool) -> Self {
        DbsGovernorCore {
            gov,
            sample_from_hook,
            policies: Vec::new(),
        }
    }

    /// The decision half, for inspection.
    pub fn governor(&self) -> &G {
        &self.gov
    }

    /// cpufreq_dbs_governor_limits: move into the new limits at once, then
    /// sample at the next opportunity (delay 0: the timer now, or the next
    /// hook call).
    fn limits(dbs: &mut PolicyDbsInfo, policy: &mut Policy<'_>, sample_from_hook: bool) {
        if policy.max_khz < policy.cur_khz {
            policy.set_target(policy.max_khz, Relation::H);
        } else if policy.min_khz > policy.cur_khz {
            policy.set_target(policy.min_khz, Relation::L);
        }
        dbs.sample_delay_ns = 0;
        if !sample_from_hook {
            policy.arm_timer(0, true);
        }
    }
}

/// When the engine starts governors (boot); see "Left out" in the module doc.
const START_TIME_NS: u64 = 0;

impl<G: DbsGovernor> CpufreqGovernor for DbsGovernorCore<G> {
    /// CPUFREQ_DBS_GOVERNOR_INITIALIZER sets CPUFREQ_GOV_DYNAMIC_SWITCHING.
    fn dynamic_switching(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        self.gov.name()
    }

    fn uses_util_hook(&self) -> bool {
        self.sample_from_hook
    }

    /// cpufreq_dbs_governor_start the first time; the limits callback after.
    /// From v4.6 `gov_set_update_util` sets `last_sample_time` to 0 (the
    /// start, here) and installs the hook instead of a timer.
    fn start(&mut self, policy: &mut Policy<'_>) {
        let id = policy.id;
        if self.policies.len() <= id {
            self.policies.resize_with(id + 1, || None);
        }
        if let Some(p) = self.policies[id].as_mut() {
            Self::limits(&mut p.dbs, policy, self.sample_from_hook);
            return;
        }
        let data = self.gov.dbs_data();
        let dbs = PolicyDbsInfo::new(&data, policy, START_TIME_NS);
        let info = self.gov.start(policy);
        if !self.sample_from_hook {
            policy.arm_timer(dbs.sample_delay_ns, true);
        }
        self.policies[id] = Some(DbsPolicy { dbs, info, last_sample_time_ns: START_TIME_NS });
    }

    /// dbs_update_util_handler (v6.8): sample when at least
    /// `sample_delay_ns` passed since the last sample; the engine has
    /// already turned away calls from outside the policy.
    fn update_util(&mut self, policy: &mut Policy<'_>, cpu: CpuId, time_ns: u64, _flags: u32) {
        let Self { gov, policies, .. } = self;
        let Some(p) = policies.get_mut(policy.id).and_then(Option::as_mut) else {
            panic!("{}: hook call for cpu {cpu} at {time_ns} ns before policy {} started", gov.name(), policy.id);
        };
        if time_ns.saturating_sub(p.last_sample_time_ns) < p.dbs.sample_delay_ns {
            return;
        }
        p.last_sample_time_ns = time_ns;
        let delay_us = gov.gov_dbs_update(&mut p.dbs, &mut p.info, policy, time_ns);
        p.dbs.sample_delay_ns = us_to_ns(delay_us);
    }

    /// dbs_work_handler: one sample, then the timer for the next one.
    fn timer(&mut self, policy: &mut Policy<'_>, time_ns: u64) {
        let Self { gov, policies, .. } = self;
        let Some(p) = policies.get_mut(policy.id).and_then(Option::as_mut) else {
            panic!(
                "{}: timer of policy {} fired at {time_ns} ns before the governor started it",
                gov.name(),
                policy.id
            );
        };
        let delay_us = gov.gov_dbs_update(&mut p.dbs, &mut p.info, policy, time_ns);
        p.dbs.sample_delay_ns = us_to_ns(delay_us);
        policy.arm_timer(p.dbs.sample_delay_ns, true);
    }

    fn tunables(&self) -> Vec<(String, String)> {
        self.gov.tunables()
    }
}

/// A fake scheduler view and a hand-built policy for the governors' unit
/// tests (no engine).
#[cfg(test)]
pub(crate) mod testutil {
    use super::super::{Policy, PolicyRequests, Relation, SchedView};
    use crate::platform::{CpuId, Opp};

    /// Scripted scheduler state; the tests set the cumulative counters
    /// before each call (the `now` argument is ignored).
    #[derive(Debug, Clone, Default)]
    pub struct FakeSched {
        pub idle_ns: Vec<u64>,
        pub iowait_ns: Vec<u64>,
        pub util: Vec<u64>,
        /// The runqueue's runnable_avg (what `cpu_util_boost` adds).
        pub runnable: Vec<u64>,
        pub capacity: u64,
        /// None: the view does not count idle calls.
        pub idle_calls: Option<Vec<u64>>,
        /// APERF per CPU: ∫ clock frequency dt over its busy time, kHz·ns
        /// (MPERF is the time not in `idle_ns`).
        pub aperf_khz_ns: Vec<u128>,
        /// Utilisation is not frequency invariant (default: it is).
        pub non_invariant: bool,
    }

    impl SchedView for FakeSched {
        fn cpu_util(&self, cpu: CpuId) -> u64 {
            self.util[cpu]
        }
        fn cpu_util_boost(&self, cpu: CpuId) -> u64 {
            self.util[cpu].max(self.runnable[cpu]).min(self.capacity)
        }
        fn capacity(&self, _cpu: CpuId) -> u64 {
            self.capacity
        }
        fn idle_ns(&self, cpu: CpuId, _now_ns: u64) -> u64 {
            self.idle_ns[cpu]
        }
        fn iowait_ns(&self, cpu: CpuId, _now_ns: u64) -> u64 {
            self.iowait_ns[cpu]
        }
        fn nr_running(&self, _cpu: CpuId) -> u32 {
            1
        }
        fn idle_calls(&self, cpu: CpuId) -> Option<u64> {
            self.idle_calls.as_ref().map(|c| c[cpu])
        }
        fn aperf_mperf(&self, cpu: CpuId, now_ns: u64) -> (u128, u64) {
            (self.aperf_khz_ns[cpu], now_ns.saturating_sub(self.idle_ns[cpu]))
        }
        fn freq_invariant(&self) -> bool {
            !self.non_invariant
        }
    }

    /// One policy over CPUs 0..n, with a frequency table in MHz.
    pub struct Harness {
        pub opps: Vec<Opp>,
        pub cpus: Vec<CpuId>,
        pub sched: FakeSched,
        pub cur_khz: u32,
        pub min_khz: u32,
        pub max_khz: u32,
        pub tick_ns: u64,
        /// The driver has `adjust_perf` (intel_cpufreq with HWP).
        pub adjust_perf: bool,
    }

    impl Harness {
        pub fn new(mhz: &[u32], ncpus: usize) -> Self {
            let opps: Vec<Opp> = mhz
                .iter()
                .map(|&m| Opp {
                    khz: m * 1000,
                    mv: 1000,
                    turbo: false,
                })
                .collect();
            let (min_khz, max_khz) = (opps[0].khz, opps[opps.len() - 1].khz);
            Harness {
                opps,
                cpus: (0..ncpus).collect(),
                sched: FakeSched {
                    idle_ns: vec![0; ncpus],
                    iowait_ns: vec![0; ncpus],
                    util: vec![0; ncpus],
                    runnable: vec![0; ncpus],
                    capacity: 1024,
                    idle_calls: None,
                    aperf_khz_ns: vec![0; ncpus],
                    non_invariant: false,
                },
                cur_khz: max_khz,
                min_khz,
                max_khz,
                tick_ns: 4_000_000,
                adjust_perf: false,
            }
        }

        /// Run one governor call on the policy; apply its target the way
        /// govlab's driver does, and return what it asked for.
        pub fn call(&mut self, f: impl FnOnce(&mut Policy<'_>)) -> PolicyRequests {
            let mut out = PolicyRequests::default();
            {
                let mut p = Policy {
                    id: 0,
                    cpus: &self.cpus,
                    opps: &self.opps,
                    cur_khz: self.cur_khz,
                    min_khz: self.min_khz,
                    max_khz: self.max_khz,
                    cpuinfo_min_khz: self.opps[0].khz,
                    cpuinfo_max_khz: self.opps[self.opps.len() - 1].khz,
                    transition_latency_ns: 10_000,
                    tick_ns: self.tick_ns,
                    hwp: None,
                    cppc: None,
                    adjust_perf: self.adjust_perf,
                    sched: &self.sched,
                    out: &mut out,
                };
                f(&mut p);
            }
            if let Some((khz, relation)) = out.target {
                let at_least = self
                    .opps
                    .iter()
                    .position(|o| o.khz >= khz)
                    .unwrap_or(self.opps.len() - 1);
                let at_most = self.opps.iter().rposition(|o| o.khz <= khz).unwrap_or(0);
                self.cur_khz = match relation {
                    Relation::L => self.opps[at_least].khz,
                    Relation::H => self.opps[at_most].khz,
                    Relation::C => {
                        let (lo, hi) = (self.opps[at_most].khz, self.opps[at_least].khz);
                        if khz.abs_diff(lo) < khz.abs_diff(hi) {
                            lo
                        } else {
                            hi
                        }
                    }
                };
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::Harness;
    use super::*;
    use crate::params::Spec;
    use crate::platform::load_named;
    use crate::kernel::KernelConfig;

    const MS: u64 = 1_000_000;

    fn data(copy_prev_load: bool, io_is_busy: bool) -> DbsData {
        DbsData {
            sampling_rate_us: 10_000,
            io_is_busy,
            ignore_nice_load: false,
            copy_prev_load,
            long_idle_by_idle_time: true,
        }
    }

    /// Load is the busy share of the window, and the policy takes the
    /// busiest CPU; io_is_busy moves iowait from idle to busy.
    #[test]
    fn load_is_busy_share_max_over_cpus_and_iowait_counts_with_io_is_busy() {
        for io_is_busy in [false, true] {
            let mut h = Harness::new(&[800, 1600], 2);
            let d = data(true, io_is_busy);
            let mut dbs = None;
            h.call(|p| dbs = Some(PolicyDbsInfo::new(&d, p, 0)));
            let mut dbs = dbs.unwrap();
            // 10 ms window: CPU 0 idle 7 ms (6 of them with iowait), CPU 1 idle 5 ms.
            h.sched.idle_ns = vec![7 * MS, 5 * MS];
            h.sched.iowait_ns = vec![6 * MS, 0];
            let mut load = 0;
            h.call(|p| load = dbs_update(&d, &mut dbs, p, 10 * MS));
            // Without io_is_busy: max(30, 50) = 50. With it: CPU 0 is 90 % busy.
            assert_eq!(load, if io_is_busy { 90 } else { 50 });
        }
    }

    /// The long-idle rule copies once, and records the idle periods.
    #[test]
    fn long_idle_copies_previous_load_once_and_counts_idle_periods() {
        let mut h = Harness::new(&[800, 1600], 1);
        let d = data(true, false);
        let mut dbs = None;
        h.call(|p| dbs = Some(PolicyDbsInfo::new(&d, p, 0)));
        let mut dbs = dbs.unwrap();
        let mut sample = |h: &mut Harness, idle_ms: u64, now_ms: u64| {
            h.sched.idle_ns[0] = idle_ms * MS;
            let mut load = 0;
            h.call(|p| load = dbs_update(&d, &mut dbs, p, now_ms * MS));
            (load, dbs.idle_periods)
        };
        // Busy 10 ms: 100 %.
        assert_eq!(sample(&mut h, 0, 10), (100, u32::MAX));
        // A 45 ms window spent idle (> 2 periods): the 100 % is copied; 4 periods.
        assert_eq!(sample(&mut h, 45, 55), (100, 4));
        // A second long idle window in a row is measured: 0 %; 3 periods.
        assert_eq!(sample(&mut h, 75, 85), (0, 3));
    }

    /// v4.18+ detection looks at the idle time, not the window: a long but
    /// mostly busy window (30 ms, 5 ms idle) is measured, not copied. (The
    /// 2014 wall-time test would have copied the previous 100 %.)
    #[test]
    fn long_busy_window_is_measured_not_copied() {
        let mut h = Harness::new(&[800, 1600], 1);
        let d = data(true, false);
        let mut dbs = None;
        h.call(|p| dbs = Some(PolicyDbsInfo::new(&d, p, 0)));
        let mut dbs = dbs.unwrap();
        let mut load = 0;
        h.call(|p| load = dbs_update(&d, &mut dbs, p, 10 * MS));
        assert_eq!(load, 100);
        h.sched.idle_ns[0] = 5 * MS;
        h.call(|p| load = dbs_update(&d, &mut dbs, p, 40 * MS));
        assert_eq!((load, dbs.idle_periods), (83, u32::MAX));
    }

    /// Before v4.18 the test read the window's wall time: the same long,
    /// mostly busy window (30 ms, 5 ms idle) copies the previous 100 %.
    #[test]
    fn before_4_18_a_long_window_copies_by_wall_time() {
        let mut h = Harness::new(&[800, 1600], 1);
        let d = DbsData { long_idle_by_idle_time: false, ..data(true, false) };
        let mut dbs = None;
        h.call(|p| dbs = Some(PolicyDbsInfo::new(&d, p, 0)));
        let mut dbs = dbs.unwrap();
        let mut load = 0;
        h.call(|p| load = dbs_update(&d, &mut dbs, p, 10 * MS));
        assert_eq!(load, 100);
        h.sched.idle_ns[0] = 5 * MS;
        h.call(|p| load = dbs_update(&d, &mut dbs, p, 40 * MS));
        assert_eq!(load, 100);
    }

    /// The sampling-rate eras on either side of v4.14 (power8: no
    /// transition latency, HZ=100; Skylake on acpi-cpufreq: 10 µs, HZ=250).
    #[test]
    fn sampling_rate_floor_and_default_on_either_side_of_4_14() {
        let kernel = |v: &str| KernelConfig::from_spec(&Spec::new(v)).unwrap();
        let p8 = load_named(&Spec::new("power8")).unwrap();
        let read = |text: &str, plat: &Platform, k: &str, kind: DbsKind| {
            let spec = Spec::parse(text, "test").unwrap();
            let mut p = Params::new("test", &spec);
            sampling_rate(&mut p, &BuildCtx::new(plat.clone(), kernel(k)), kind)
        };
        // 4.8 (and 3.15): min_sampling_rate 10 ms (MICRO_FREQUENCY_MIN_SAMPLE_RATE), default 10 ms.
        assert_eq!(read("ondemand", &p8, "4.8", DbsKind::Ondemand).unwrap(), 10_000);
        assert_eq!(read("ondemand", &p8, "3.15", DbsKind::Ondemand).unwrap(), 10_000);
        // A smaller value is raised to the floor, not rejected.
        assert_eq!(read("ondemand:sampling_rate=2000", &p8, "4.8", DbsKind::Ondemand).unwrap(), 10_000);
        // conservative's floor was 20 ticks: 200 ms at HZ=100.
        assert_eq!(read("conservative", &p8, "4.8", DbsKind::Conservative).unwrap(), 200_000);
        // 4.16: two ticks (20 ms at HZ=100) is both default and floor; smaller is rejected.
        assert_eq!(read("ondemand", &p8, "4.16", DbsKind::Ondemand).unwrap(), 20_000);
        let e = read("ondemand:sampling_rate=2000", &p8, "4.16", DbsKind::Ondemand).unwrap_err().to_string();
        assert!(e.contains("sampling_rate") && e.contains("from 20000"), "{e}");
        // Before v4.14 the latency counts uncapped: 1000 x 15 µs = 15 ms.
        let mut slow = p8.clone();
        slow.cpu_types[0].transition_latency_ns = 15_000;
        let slow = BuildCtx::new(slow, kernel("4.8"));
        assert_eq!(legacy_default_sampling_rate_us(&slow, DbsKind::Ondemand), 15_000);
        assert_eq!(legacy_min_sampling_rate_us(&slow, DbsKind::Ondemand), 10_000);
    }

    /// The transition delay by version on the Juno r0 (SCP latency 1450 µs):
    /// min(1000 × L, 10 ms) to v6.8, min(1000 × L, 2 ms) from v6.9
    /// (e13aa799c2a6), L + L/2 from v6.12; 1 ms for an unknown latency in
    /// every version (POWER8).
    #[test]
    fn transition_delay_follows_the_version() {
        let kernel = |v: &str| KernelConfig::from_spec(&Spec::new(v)).unwrap();
        let juno = load_named(&Spec::new("juno-r0")).unwrap();
        let p8 = load_named(&Spec::new("power8")).unwrap();
        for (v, want) in [("6.8", 10_000), ("6.9", 2_000), ("6.11", 2_000), ("6.12", 2_175), ("6.18", 2_175)] {
            // (6.11 runs 6.9's semantics, the newest supported not after it.)
            assert_eq!(policy_transition_delay_us(&BuildCtx::new(juno.clone(), kernel(v)), 0), want, "{v}");
            assert_eq!(policy_transition_delay_us(&BuildCtx::new(p8.clone(), kernel(v)), 0), 1000, "{v}");
        }
    }

    /// v6.8: max(2 ticks, transition delay); the delay is the driver's own
    /// for intel_cpufreq, else min(1000 × latency, 10 ms), 1 ms if unknown.
    #[test]
    fn transition_delay_and_default_sampling_rate_follow_v6_8() {
        let mut sky = BuildCtx::of(load_named(&Spec::new("skylake-e3-1240v5")).unwrap());
        assert_eq!(policy_transition_delay_us(&sky, 0), 5000); // HWP
        assert_eq!(default_sampling_rate_us(&sky), 8000); // 2 ticks at HZ=250
        sky.hwp = false;
        assert_eq!(policy_transition_delay_us(&sky, 0), 500);
        sky.platform.driver = Driver::AcpiCpufreq;
        sky.platform.cpu_types[0].transition_latency_ns = 10_000;
        assert_eq!(policy_transition_delay_us(&sky, 0), 10_000); // 1000 × 10 µs, at the cap
        sky.platform.cpu_types[0].transition_latency_ns = 50_000;
        assert_eq!(policy_transition_delay_us(&sky, 0), 10_000); // capped
        sky.platform.cpu_types[0].transition_latency_ns = 4_000;
        assert_eq!(policy_transition_delay_us(&sky, 0), 4000);
        sky.platform.cpu_types[0].transition_latency_ns = 0;
        assert_eq!(policy_transition_delay_us(&sky, 0), 1000);
        sky.hz = 1000;
        assert_eq!(default_sampling_rate_us(&sky), 2000);
    }
}

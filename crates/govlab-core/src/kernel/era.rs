//! The kernel's eras: each behaviour that changed between the versions
//! govlab models, with the version and commit that changed it.
//!
//! An era is named by [`EraId`], a closed enum: code asks
//! `kernel.has(EraId::UtilEst)`, so an era that does not exist is a compile
//! error, and [`ERAS`] holds what `govlab list kernels` shows of each (the
//! table is checked at compile time to be in the enum's order). To add an
//! era: a variant here, its row in [`ERAS`] (by first version), and the code
//! that reads it asks [`super::KernelConfig::has`]. Sources:
//! docs/research/kernel-eras.md.

use serde::Serialize;

use super::Version;

/// Every era govlab knows, in [`ERAS`]'s order (by first version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EraId {
    CopyPrevLoad,
    OndemandFormula,
    DbsUtilHook,
    Schedutil,
    InitUtilBounded,
    SchedutilIowaitBoost,
    IntelPstatePassive,
    MenuNoLoadavg,
    PeltDivider,
    PpcHardlockupWatchdog,
    DbsSamplingTicks,
    RemoteCallbacks,
    IdleTick,
    UtilEst,
    DbsLongIdle,
    SchedutilIowaitGradual,
    HwpDynamicBoost,
    Eas,
    Teo,
    PeltClock,
    IntelPstateIowait,
    SchedutilIowaitBoostMin,
    Uclamp,
    EasUclamp,
    Haltpoll,
    EasPdDelta,
    LadderNs,
    EasFitsUclamp,
    X86FreqInvariance,
    IntelPstatePassiveDefault,
    TtwuQueueOnCpu,
    IntelPstatePassiveHwp,
    AmdFreqInvariance,
    BaseSlice,
    TeoBins,
    AmdPstate,
    EmMicrowatts,
    EasNoMargin,
    TtwuQueueIdle,
    UtilFitsCpu,
    LadderSignedCompare,
    AmdPstateEpp,
    AmdPstateGuided,
    IoUringIowait,
    Eevdf,
    EevdfLagPlacement,
    EevdfRunToParity,
    EevdfLagMigration,
    MenuSkipSleepLength,
    SchedutilFreqRef,
    EasHeadroomInSugov,
    SchedutilPerfEstimate,
    SchedutilRateLimit2ms,
    HaltpollShrinkToZero,
    TeoNoRecent,
    EevdfDelayDequeue,
    EevdfCustomSlice,
    EevdfPreemptShort,
    TransitionDelayFromLatency,
    MenuNoIowait,
    TeoShortIdles,
    MenuMaxPrediction,
    MenuTwoSidedOutliers,
    MenuLatencyFirst,
    MenuPollingExitLatency,
}

impl EraId {
    /// How many eras there are.
    pub const COUNT: usize = EraId::MenuPollingExitLatency as usize + 1;

    /// The era's row in [`ERAS`].
    #[must_use]
    pub const fn era(self) -> &'static Era {
        &ERAS[self as usize]
    }

    /// The first mainline release with the era's behaviour.
    #[must_use]
    pub const fn first(self) -> Version {
        self.era().first
    }
}

/// Whether an era is modelled by the engine, or recorded for later work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EraStatus {
    /// The engine follows the version.
    Modelled,
    /// [`KernelConfig`] answers the era question, but no engine code reads
    /// the answer yet.
    Exposed,
    /// Recorded for a later issue (the governors' eras); every version runs
    /// the newest behaviour.
    NotModelled,
}

/// One era-dependent behaviour: from `first` on, the kernel does what
/// `description` says; before, what it said before.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Era {
    /// The era itself (its index in [`ERAS`]).
    pub id: EraId,
    /// The behaviour's short name (`idle_tick`, `pelt_clock`, ...).
    pub name: &'static str,
    /// The first mainline release with the new behaviour.
    pub first: Version,
    /// Whether `first` was seen in a tag or a stable marker (`false`:
    /// inferred from mail dates, see docs/research/kernel-eras.md).
    pub first_confirmed: bool,
    /// The commit's abbreviated hash, or `hash not found`.
    pub commit: &'static str,
    /// The commit's subject line.
    pub subject: &'static str,
    /// What changed, in one line: before → from `first`.
    pub description: &'static str,
    pub status: EraStatus,
}

/// Every era govlab knows, by first version. Sources: docs/research/kernel-eras.md.
pub const ERAS: [Era; EraId::COUNT] = [
    Era {
        id: EraId::CopyPrevLoad,
        name: "copy_prev_load",
        first: Version::new(3, 16),
        first_confirmed: false,
        commit: "18b46abd0009",
        subject: "cpufreq: governor: Be friendly towards latency-sensitive bursty workloads",
        description: "ondemand/conservative reuse the previous load once after a long idle (before: the near-zero load is measured); on earlier versions the copy_prev_load tunable is this patch on top",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::OndemandFormula,
        name: "ondemand_formula",
        first: Version::new(3, 17),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpufreq: ondemand: Eliminate the deadband effect",
        description: "ondemand picks min + load x (max - min) / 100 with RELATION_C (before: load x max / 100 with RELATION_L)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::DbsUtilHook,
        name: "dbs_util_hook",
        first: Version::new(4, 6),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpufreq: governor: Replace timers with utilization update callbacks",
        description: "ondemand/conservative sample at the first scheduler hook call (cpufreq_update_util) on a CPU of the policy once the sampling delay has passed (before: a deferrable timer per CPU)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::Schedutil,
        name: "schedutil",
        first: Version::new(4, 7),
        first_confirmed: false,
        commit: "9bdcb44e391d",
        subject: "cpufreq: schedutil: New governor based on scheduler utilization data",
        description: "the schedutil cpufreq governor exists (before: not available)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::InitUtilBounded,
        name: "init_util_bounded",
        first: Version::new(4, 7),
        first_confirmed: true,
        commit: "2b8c41daba32",
        subject: "sched/fair: Initiate a new task's util avg to a bounded value",
        description: "a new task's util_avg starts at half its CPU's spare capacity, or the runqueue's util per load times se->load.weight if lower; that weight is scaled (x1024 on 64-bit), so it is the half nearly always (before: the full 1024 from init_entity_runnable_average; govlab's PELT runs on versions before util_avg, v4.3, too). The unscaled-weight fix (2024) came after v6.8",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::SchedutilIowaitBoost,
        name: "schedutil_iowait_boost",
        first: Version::new(4, 9),
        first_confirmed: false,
        commit: "21ca6d2c52f8",
        subject: "cpufreq: schedutil: Add iowait boosting",
        description: "schedutil boosts after IO wakeups, straight to the maximum and halving (before: no iowait boost; the iowait_boost default)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::IntelPstatePassive,
        name: "intel_pstate_passive",
        first: Version::new(4, 10),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpufreq: intel_pstate: Generic governors support",
        description: "intel_pstate has a passive mode (intel_cpufreq) for the generic governors (before: only its own active mode; generic governors need acpi-cpufreq)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::MenuNoLoadavg,
        name: "menu_no_loadavg",
        first: Version::new(4, 12),
        first_confirmed: false,
        commit: "a7fe5190c03f",
        subject: "cpuidle: menu: Remove get_loadavg() from the performance multiplier",
        description: "menu's performance multiplier is 1 + 10 x nr_iowait (before: also + 2 x this CPU's load, LOAD_INT x 10 + LOAD_FRAC / 10 of cpu_load[0])",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::PeltDivider,
        name: "pelt_divider",
        first: Version::new(4, 13),
        first_confirmed: false,
        commit: "625ed2bf049d",
        subject: "sched/cfs: Make util/load_avg more stable",
        description: "PELT averages divide by LOAD_AVG_MAX - 1024 + period_contrib (before: LOAD_AVG_MAX)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::PpcHardlockupWatchdog,
        name: "ppc_hardlockup_watchdog",
        first: Version::new(4, 13),
        first_confirmed: true,
        commit: "2104180a5369",
        subject: "powerpc/64s: implement arch-specific hardlockup watchdog",
        description: "POWER's own hard-lockup watchdog arms a second per-CPU 4 s timer beside the soft-lockup one (before: the soft-lockup timer alone)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::DbsSamplingTicks,
        name: "dbs_sampling_ticks",
        first: Version::new(4, 14),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpufreq: governor: Drop min_sampling_rate",
        description: "ondemand/conservative sampling_rate: default max(2 ticks, transition delay), at least 2 ticks (before: default max(min, 1000 x latency), floor min = max(10 ms, 20 x latency), smaller values raised to it)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::RemoteCallbacks,
        name: "remote_callbacks",
        first: Version::new(4, 14),
        first_confirmed: false,
        commit: "674e75411fc2",
        subject: "sched: cpufreq: Allow remote cpufreq callbacks",
        description: "the scheduler calls the cpufreq hook for another CPU's runqueue (before: local calls only)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::IdleTick,
        name: "idle_tick",
        first: Version::new(4, 17),
        first_confirmed: true,
        commit: "554c8aa8ecad",
        subject: "sched: idle: Select idle state before stopping the tick",
        description: "the idle governor decides whether the tick stops (before: stopped on every idle entry with no timer within a tick)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::UtilEst,
        name: "util_est",
        first: Version::new(4, 17),
        first_confirmed: false,
        commit: "7f65ea42eb00",
        subject: "sched/fair: Add util_est on top of PELT",
        description: "a task's utilisation estimate (util_est) enters CPU utilisation and placement (before: util_avg alone)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::DbsLongIdle,
        name: "dbs_long_idle",
        first: Version::new(4, 18),
        first_confirmed: false,
        commit: "7592019634f8",
        subject: "cpufreq: governor: Fix long idle detection logic in load calculation",
        description: "copy_prev_load detects a long idle from the window's idle time (before: from its wall time)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::SchedutilIowaitGradual,
        name: "schedutil_iowait_gradual",
        first: Version::new(4, 18),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpufreq: schedutil: Make iowait boost more energy efficient",
        description: "schedutil's iowait boost starts low and doubles per IO wakeup (before: straight to the maximum; the iowait_boost default). govlab's gradual form is v5.2's (9eca544b1491: 1/8 of capacity), not 4.18's start at policy->min",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::HwpDynamicBoost,
        name: "hwp_dynamic_boost",
        first: Version::new(4, 18),
        first_confirmed: false,
        commit: "52ccc4314293",
        subject: "cpufreq: intel_pstate: HWP boost performance on IO wakeup",
        description: "intel_pstate's active mode with HWP can boost the HWP minimum on IO wakeups (hwp_dynamic_boost; before: no boost, the tunable is the 2018 series on top); its per-model default of 4.18-6.3 runs as v6.4+'s server-profile rule",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::Eas,
        name: "eas",
        first: Version::new(5, 0),
        first_confirmed: false,
        commit: "732cd75b8c92",
        subject: "sched/fair: Select an energy-efficient CPU on task wake-up",
        description: "Energy-Aware Scheduling: with an Energy Model (27871f7a8a34), asymmetric capacities and schedutil, a waking task goes to the CPU of least estimated energy (find_energy_efficient_cpu) while no CPU is overutilized (2802bf3cd936), and the load balancer waits; sched_energy_aware switches it (before: capacity-aware placement only)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::Teo,
        name: "teo",
        first: Version::new(5, 1),
        first_confirmed: true,
        commit: "b26bf6ab716f",
        subject: "cpuidle: New timer events oriented governor for tickless systems",
        description: "the teo idle governor exists (before: ladder and menu only)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::PeltClock,
        name: "pelt_clock",
        first: Version::new(5, 1),
        first_confirmed: false,
        commit: "23127296889f",
        subject: "sched/fair: Update scale invariance of PELT",
        description: "PELT scales its clock by frequency x capacity (before: each contribution, load by frequency, util by frequency x capacity)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::IntelPstateIowait,
        name: "intel_pstate_iowait",
        first: Version::new(5, 1),
        first_confirmed: false,
        commit: "b8bd1581aa61",
        subject: "cpufreq: intel_pstate: Rework iowait boosting to be less aggressive",
        description: "intel_pstate's iowait boost (non-HWP) ramps up over consecutive iowait wakeups (before: straight to the maximum; the iowait_boost default)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::SchedutilIowaitBoostMin,
        name: "schedutil_iowait_boost_min",
        first: Version::new(5, 2),
        first_confirmed: false,
        commit: "9eca544b1491",
        subject: "cpufreq: schedutil: Simplify iowait boosting",
        description: "schedutil's gradual iowait boost starts at IOWAIT_BOOST_MIN, 1/8 of capacity, and drops below it (before, from v4.18: starts at and drops below policy->min, as a fraction of cpuinfo.max_freq)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::Uclamp,
        name: "uclamp",
        first: Version::new(5, 3),
        first_confirmed: false,
        commit: "69842cba9ace",
        subject: "sched/uclamp: Add CPU's clamp buckets refcounting",
        description: "tasks carry util_min/util_max (rt-app's keys), which bound schedutil's request (before: refused)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EasUclamp,
        name: "eas_uclamp",
        first: Version::new(5, 3),
        first_confirmed: false,
        commit: "af24bde8df20",
        subject: "sched/uclamp: Add uclamp support to energy_compute()",
        description: "EAS predicts a domain's frequency from the clamped utilisation schedutil uses (before: the unclamped energy utilisation)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::Haltpoll,
        name: "haltpoll",
        first: Version::new(5, 4),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpuidle: add haltpoll governor",
        description: "the haltpoll idle governor exists (before: not available)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EasPdDelta,
        name: "eas_pd_delta",
        first: Version::new(5, 4),
        first_confirmed: false,
        commit: "eb92692b2544",
        subject: "sched/fair: Speed-up energy-aware wake-ups",
        description: "EAS computes each candidate's energy over its own performance domain, as a delta over the domain without the task; the 6 % margin is of prev's delta plus the base (before: the whole machine's energy per candidate)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::LadderNs,
        name: "ladder_ns",
        first: Version::new(5, 5),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpuidle: Use nanoseconds as the unit of time",
        description: "ladder compares residency minus exit latency, an s64 in ns, with u64 promotion/demotion times: a residency under the exit latency reads as huge and promotes (before: int microseconds, signed compare)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EasFitsUclamp,
        name: "eas_fits_uclamp",
        first: Version::new(5, 6),
        first_confirmed: false,
        commit: "1d42509e475c",
        subject: "sched/fair: Make EAS wakeup placement consider uclamp restrictions",
        description: "EAS's fit test reads the utilisation clamped by the runqueue's and the task's clamps (before: unclamped)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::X86FreqInvariance,
        name: "x86_freq_invariance",
        first: Version::new(5, 7),
        first_confirmed: false,
        commit: "1567c3e3467c",
        subject: "x86, sched: Add support for frequency invariance",
        description: "x86 scales utilisation by APERF/MPERF over the 4-core turbo ratio (before: no frequency invariance)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::IntelPstatePassiveDefault,
        name: "intel_pstate_passive_default",
        first: Version::new(5, 8),
        first_confirmed: false,
        commit: "33aa46f252c7",
        subject: "cpufreq: intel_pstate: Use passive mode by default without HWP",
        description: "without HWP, intel_pstate boots in passive mode (intel_cpufreq) under the default generic governor, schedutil (before: its own active-mode powersave)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::TtwuQueueOnCpu,
        name: "ttwu_queue_on_cpu",
        first: Version::new(5, 8),
        first_confirmed: false,
        commit: "2ebb17717550",
        subject: "sched/core: Offload wakee task activation if it the wakee is descheduling",
        description: "a wakeup within the waker's LLC goes through the target's wake list (its own enqueue, local hook calls) when the wakee is still descheduling there and nothing else runs (before: only across LLCs); govlab's context switch completes at the block, so no wakeup meets it",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::IntelPstatePassiveHwp,
        name: "intel_pstate_passive_hwp",
        first: Version::new(5, 9),
        first_confirmed: true,
        commit: "f6ebbcf08f37",
        subject: "cpufreq: intel_pstate: Implement passive mode with HWP enabled",
        description: "intel_pstate's passive mode keeps HWP on, the governor's target becoming the HWP minimum (before: passive mode ran without HWP)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::AmdFreqInvariance,
        name: "amd_freq_invariance",
        first: Version::new(5, 11),
        first_confirmed: false,
        commit: "41ea667227ba",
        subject: "x86, sched: Calculate frequency invariance for AMD systems",
        description: "x86 frequency invariance on AMD: APERF/MPERF scaled to the midpoint of the CPPC highest/nominal ratio and 1 (976df7e5730e, same release; before: no invariance on AMD, Intel's arrived in v5.7)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::BaseSlice,
        name: "base_slice",
        first: Version::new(5, 13),
        first_confirmed: false,
        commit: "0c2de3f054a5",
        subject: "sched,fair: Alternative sched_slice()",
        description: "a CFS task's slice (sched_slice) is never below sched_min_granularity (BASE_SLICE; before: a heavy runqueue could cut it below)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::TeoBins,
        name: "teo_bins",
        first: Version::new(5, 14),
        first_confirmed: true,
        commit: "c410a9a142f1",
        subject: "cpuidle: teo: Change the main idle state selection logic",
        description: "teo keeps bins of hits and intercepts and a ring of recent intercepts (before: per-state hits, misses and early hits and a ring of the last 8 idle durations, v5.1's form); govlab runs v6.6's form of it (util-awareness v6.3, sleep length read last v6.6) from 5.14 on",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::AmdPstate,
        name: "amd_pstate",
        first: Version::new(5, 17),
        first_confirmed: false,
        commit: "ec437d71db77",
        subject: "cpufreq: amd-pstate: Introduce a new AMD P-State driver to support future processors",
        description: "the amd-pstate driver exists: the generic governors' targets become CPPC desired levels (passive mode; before: acpi-cpufreq's _PSS P-states only)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EmMicrowatts,
        name: "em_microwatts",
        first: Version::new(5, 19),
        first_confirmed: false,
        commit: "ae6ccaa65038",
        subject: "PM: EM: convert power field to micro-Watts precision and align drivers",
        description: "Energy Model powers in µW (before: mW, truncated)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EasNoMargin,
        name: "eas_no_margin",
        first: Version::new(6, 0),
        first_confirmed: false,
        commit: "b812fc9768e0",
        subject: "sched/fair: Remove the energy margin in feec()",
        description: "EAS takes the cheapest candidate without the 6 % margin, the domain's busy time capped at its capacity (3e8c6c9aac42; before: the margin)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::TtwuQueueIdle,
        name: "ttwu_queue_idle",
        first: Version::new(6, 0),
        first_confirmed: false,
        commit: "f3dd3f674555",
        subject: "sched: Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is idle",
        description: "a wakeup onto an idle CPU of the waker's LLC goes through that CPU's wake list: it enqueues the task itself and the cpufreq hook call is local (before: the waker enqueues on the remote runqueue, and the hook call is remote: dropped before v4.14, turned away by per-CPU policies after)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::UtilFitsCpu,
        name: "util_fits_cpu",
        first: Version::new(6, 2),
        first_confirmed: false,
        commit: "244226035a1f",
        subject: "sched/uclamp: Fix fits_capacity() check in feec()",
        description: "fitting reads the clamps (util_fits_cpu) in task_fits_cpu, EAS's ranking of candidates and cpu_overutilized (before: fits_capacity on the bare utilisation)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::LadderSignedCompare,
        name: "ladder_signed_compare",
        first: Version::new(6, 2),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpuidle: ladder: Fix bogus comparison between s64 and u64",
        description: "ladder compares the residency signed again: an idle shorter than the exit latency demotes (before, from v5.5: it promoted)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::AmdPstateEpp,
        name: "amd_pstate_epp",
        first: Version::new(6, 3),
        first_confirmed: false,
        commit: "ffa5096a7c33",
        subject: "cpufreq: amd-pstate: implement Pstate EPP support for the AMD processors",
        description: "amd-pstate's active mode (amd-pstate-epp): a setpolicy driver writing min/max limits, desired 0 and an EPP to the firmware (before: passive mode only)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::AmdPstateGuided,
        name: "amd_pstate_guided",
        first: Version::new(6, 4),
        first_confirmed: false,
        commit: "2dd6d0ebf740",
        subject: "cpufreq: amd-pstate: Add guided autonomous mode",
        description: "amd-pstate's guided mode: a dynamic governor's target becomes the CPPC minimum and the firmware chooses up to the maximum (before: passive and active only)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::IoUringIowait,
        name: "io_uring_iowait",
        first: Version::new(6, 5),
        first_confirmed: false,
        commit: "hash not found",
        subject: "io_uring: Use io_schedule* in cqring wait",
        description: "a task waiting in io_uring's io_cqring_wait() with requests in flight counts as iowait (before: a plain sleep, no iowait)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::Eevdf,
        name: "eevdf",
        first: Version::new(6, 6),
        first_confirmed: true,
        commit: "147f3efaa241",
        subject: "sched/fair: Implement an EEVDF-like scheduling policy",
        description: "the fair class picks the eligible task (lag >= 0) with the earliest virtual deadline, vruntime + base_slice/weight; a task that reaches its deadline gets the next one and is rescheduled; a waking task preempts when EEVDF would pick it (before: CFS, the leftmost vruntime, sched_slice at the tick, wakeup_granularity at wakeup). Task groups keep the CFS form (machine/eevdf.rs)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EevdfLagPlacement,
        name: "eevdf_lag_placement",
        first: Version::new(6, 6),
        first_confirmed: true,
        commit: "86bfbb7ce4f6",
        subject: "sched/fair: Add lag based placement",
        description: "a task leaving the runqueue keeps its lag (avg_vruntime - vruntime, clamped to 2 slices or a tick) and is placed back with it, inflated by the weight it adds; a new task starts at avg_vruntime with half a slice to its deadline (before: GENTLE_FAIR_SLEEPERS' half latency credit, START_DEBIT)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EevdfRunToParity,
        name: "eevdf_run_to_parity",
        first: Version::new(6, 6),
        first_confirmed: true,
        commit: "63304558ba5d",
        subject: "sched/eevdf: Curb wakeup-preemption",
        description: "RUN_TO_PARITY: the picked task keeps the CPU against wakeups while it is eligible and on the deadline it was picked with",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EevdfLagMigration,
        name: "eevdf_lag_migration",
        first: Version::new(6, 6),
        first_confirmed: true,
        commit: "e8f331bcc270",
        subject: "sched/smp: Use lag to simplify cross-runqueue placement",
        description: "a migrating task is placed on its new runqueue by its lag (before: its vruntime renormalised between the two min_vruntimes)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::MenuSkipSleepLength,
        name: "menu_skip_sleep_length",
        first: Version::new(6, 6),
        first_confirmed: true,
        commit: "5484e31bbbff",
        subject: "cpuidle: menu: Skip tick_nohz_get_sleep_length() call in some cases",
        description: "menu reads the typical interval first and skips the sleep length when it is at most 15 us (before: the sleep length always, first)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::SchedutilFreqRef,
        name: "schedutil_freq_ref",
        first: Version::new(6, 8),
        first_confirmed: true,
        commit: "b3edde44e5d4",
        subject: "cpufreq/schedutil: Use a fixed reference frequency",
        description: "schedutil's invariant base is arch_scale_freq_ref() (before: cpuinfo.max_freq); not modelled: no platform here differs (x86 has no arch_scale_freq_ref, so cpuinfo.max_freq as before; Arm's is cpuinfo.max_freq without boost OPPs, which no board here has)",
        status: EraStatus::NotModelled,
    },
    Era {
        id: EraId::EasHeadroomInSugov,
        name: "eas_headroom_in_sugov",
        first: Version::new(6, 8),
        first_confirmed: false,
        commit: "9c0b4bb7f630",
        subject: "sched/cpufreq: Rework schedutil governor performance estimation",
        description: "EAS adds schedutil's 25 % headroom and the clamps to the busiest CPU before the Energy Model (before: the headroom inside em_cpu_energy)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::SchedutilPerfEstimate,
        name: "schedutil_perf_estimate",
        first: Version::new(6, 8),
        first_confirmed: true,
        commit: "9c0b4bb7f630",
        subject: "sched/cpufreq: Rework schedutil governor performance estimation",
        description: "schedutil adds its 25 % headroom to the utilisation, capped at the capacity, and without frequency invariance also to policy->cur (e37617c8e53a, same release): 1.25 x 1.25 x cur x util / capacity (before: once, on the frequency: 1.25 x cur x util / capacity, or 1.25 x cpuinfo.max_freq x util / capacity when invariant)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::SchedutilRateLimit2ms,
        name: "schedutil_rate_limit_2ms",
        first: Version::new(6, 9),
        first_confirmed: true,
        commit: "e13aa799c2a6",
        subject: "cpufreq: Change default transition delay to 2ms",
        description: "the default transition delay (schedutil's rate_limit_us, the dbs sampling floor) from a transition latency L is min(1000 x L, 2 ms) (before: min(1000 x L, 10 ms))",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::HaltpollShrinkToZero,
        name: "haltpoll_shrink_to_zero",
        first: Version::new(6, 9),
        first_confirmed: true,
        commit: "496d0a648509",
        subject: "cpuidle: haltpoll: do not shrink guest poll_limit_ns below grow_start",
        description: "haltpoll sets the poll limit to 0 when a shrink takes it below guest_halt_poll_grow_start (before: it kept the shrunk value)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::TeoNoRecent,
        name: "teo_no_recent",
        first: Version::new(6, 11),
        first_confirmed: true,
        commit: "449914398083",
        subject: "cpuidle: teo: Remove recent intercepts metric",
        description: "teo has no ring of recent intercepts (whose counts could wrap and keep teo deep for good) and no util-awareness (0a2998fa48f0), and reads the sleep length when intercepts lead it to state 0 (4b20b07ce72f)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EevdfDelayDequeue,
        name: "eevdf_delay_dequeue",
        first: Version::new(6, 12),
        first_confirmed: true,
        commit: "152e11f6df29",
        subject: "sched/fair: Implement delayed dequeue",
        description: "DELAY_DEQUEUE with DELAY_ZERO (54a58a787791) and ENQUEUE_DELAYED (781773e3b680): a fair task that blocks with negative lag stays queued (in V, the runqueue's weight and nr_running) until the pick chooses it, then leaves with its lag cut to 0; woken before, it wakes on its CPU (ttwu_runnable, no select_task_rq), its util_est back (729288bc6856) but no IOWAIT hook call; it is not runnable to PELT (fc1892becd56, 2e05f6c71d36) (before: dequeued at the sleep, keeping its negative lag). Not in task groups (CFS there) and the balancer never pulls a delayed task",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EevdfCustomSlice,
        name: "eevdf_custom_slice",
        first: Version::new(6, 12),
        first_confirmed: true,
        commit: "857b158dc5e8",
        subject: "sched/eevdf: Use sched_attr::sched_runtime to set request/slice suggestion",
        description: "a fair task may ask for its own slice (sched_attr.sched_runtime, clamped to 0.1-100 ms; rt-app's dl-runtime on SCHED_OTHER) instead of base_slice (before: ignored)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::EevdfPreemptShort,
        name: "eevdf_preempt_short",
        first: Version::new(6, 12),
        first_confirmed: true,
        commit: "85e511df3cec",
        subject: "sched/eevdf: Allow shorter slices to wakeup-preempt",
        description: "PREEMPT_SHORT: a waking task with a shorter slice than the current one is judged without RUN_TO_PARITY's protection of the current (the half in update_curr, did_preempt_short, is not modelled)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::TransitionDelayFromLatency,
        name: "transition_delay_from_latency",
        first: Version::new(6, 12),
        first_confirmed: false,
        commit: "hash not found",
        subject: "cpufreq: sched/schedutil: Remove LATENCY_MULTIPLIER",
        description: "the default transition delay is 1.5 x the transition latency L (1 ms when L is unknown; before: min(1000 x L, 2 ms))",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::MenuNoIowait,
        name: "menu_no_iowait",
        first: Version::new(6, 13),
        first_confirmed: true,
        commit: "38f83090f515",
        subject: "cpuidle: menu: Remove iowait influence",
        description: "menu has 6 buckets and no performance multiplier: the prediction itself caps the latency while the tick runs (before: 12 buckets split by nr_iowait and the prediction divided by 1 + 10 x nr_iowait)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::TeoShortIdles,
        name: "teo_short_idles",
        first: Version::new(6, 14),
        first_confirmed: true,
        commit: "13ed5c4a6d9c",
        subject: "cpuidle: teo: Skip getting the sleep length if wakeups are very frequent",
        description: "teo counts short idles (skipping the sleep length for a shallow candidate when they are half of all wakeups, or under a 7.5 us latency limit) and intercepts at or beyond the tick for its 5/8 rule, decays its total by itself and drops tick_hits and the time-span test (pm-6.14-rc1: 13ed5c4a6d9c with d619b5cc6780, ddcfa7964677, 65e18e654475, 16c8d7586c19; before: the v6.11 form)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::MenuMaxPrediction,
        name: "menu_max_prediction",
        first: Version::new(6, 15),
        first_confirmed: false,
        commit: "85975daeaa4d",
        subject: "cpuidle: menu: Avoid discarding useful information",
        description: "menu's get_typical_interval() returns the largest recent interval, not UINT_MAX, when it cannot make a confident prediction but half its samples remain; reverted in 6.18 (10fad4012234), so no supported version has it: 6.15-6.17 run 6.12's semantics and 6.18 runs without it (not modelled)",
        status: EraStatus::NotModelled,
    },
    Era {
        id: EraId::MenuTwoSidedOutliers,
        name: "menu_two_sided_outliers",
        first: Version::new(6, 15),
        first_confirmed: true,
        commit: "8de7606f0fe2",
        subject: "cpuidle: menu: Eliminate outliers on both ends of the sample set",
        description: "menu's typical interval drops the sample farther from the mean on either side, not only the largest, with the variance in one pass (13982929fb08) and exclusive thresholds (60256e458e1c) (before: the largest samples only); menu's v6.18 form (6.15-6.17 run 6.12's semantics)",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::MenuLatencyFirst,
        name: "menu_latency_first",
        first: Version::new(6, 17),
        first_confirmed: true,
        commit: "779b1a1cb13a",
        subject: "cpuidle: governors: menu: Avoid selecting states with too much latency",
        description: "menu's selection loop tests the exit latency before the target residency, and the prediction no longer caps the latency limit while the tick runs (before: a stopped tick could return a state beyond the limit; the cap from v6.13); menu's v6.18 form",
        status: EraStatus::Modelled,
    },
    Era {
        id: EraId::MenuPollingExitLatency,
        name: "menu_polling_exit_latency",
        first: Version::new(6, 18),
        first_confirmed: false,
        commit: "db86f55bf81a",
        subject: "cpuidle: governors: menu: Select polling state in some more cases",
        description: "menu replaces a polling candidate by a real state only if that state's exit latency is within the predicted idle duration (before, from v6.17: whenever it fits before the next timer); menu's v6.18 form",
        status: EraStatus::Modelled,
    },
];

// The table is in the enum's order, so `EraId::era` is an index.
const _: () = {
    let mut i = 0;
    while i < ERAS.len() {
        assert!(ERAS[i].id as usize == i, "ERAS is not in EraId's order");
        i += 1;
    }
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Eras are named by the enum only: no era is looked up by a string
    /// anywhere in the engine (the old `has("...")` / `era_named`), so a
    /// misspelt era is a compile error, not a run-time panic.
    #[test]
    fn no_era_is_named_by_a_string() {
        fn walk(dir: &std::path::Path, hits: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, hits);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (i, line) in text.lines().enumerate() {
                        let code = line.split("//").next().unwrap_or("");
                        if code.contains(concat!(".has", "(\"")) || code.contains(concat!("era_", "named(")) {
                            hits.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                        }
                    }
                }
            }
        }
        let mut hits = Vec::new();
        walk(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")), &mut hits);
        walk(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../govlab-py/src")), &mut hits);
        assert!(hits.is_empty(), "eras named by strings:\n{}", hits.join("\n"));
    }

    /// Every era's short name is unique (the name `govlab list kernels`
    /// and Python governors' `kernel.has(name)` use).
    #[test]
    fn era_names_are_unique_and_ordered_by_version() {
        for (i, a) in ERAS.iter().enumerate() {
            assert!(ERAS[i + 1..].iter().all(|b| b.name != a.name), "{} twice", a.name);
        }
        assert!(ERAS.windows(2).all(|w| w[0].first <= w[1].first), "ERAS is ordered by first version");
    }
}

//! `schedutil`: pick the frequency the scheduler's utilisation asks for, with
//! 25 % headroom, at most once per `rate_limit_us`.
//!
//! Models: Linux v6.8 mainline, kernel/sched/cpufreq_schedutil.c:
//! sugov_update_single_freq(), sugov_update_single_perf() (from v5.11),
//! sugov_update_shared(), get_next_freq(),
//! sugov_should_update_freq() and the IO-wait boost of sugov_iowait_boost()
//! and sugov_iowait_apply().
//!
//! # The idea
//!
//! schedutil trusts the scheduler's estimate of how much CPU the runnable
//! work needs (PELT utilisation, max'ed with util_est and, from v6.5, with
//! the runqueue's runnable_avg (runnable boosting), 0..=capacity) and
//! turns it into a frequency on every call of the scheduler's hook (about
//! once per ms per busy CPU, plus one call with the IOWAIT flag when a task
//! that waited for IO is enqueued). A call:
//!
//! 1. IO-wait boost bookkeeping for the calling CPU (below), then note the
//!    call's time as that CPU's last update.
//! 2. Rate limit: go on only if `rate_limit_us` has passed since the last
//!    frequency **change** (evaluations that change nothing do not restart
//!    the clock), or the policy limits changed.
//! 3. Per CPU: util = max(utilisation, IO-wait boost), then the headroom:
//!    perf = min(1.25 × util, capacity) (sugov_effective_cpu_perf; before
//!    v6.8, `EraId::SchedutilPerfEstimate`, perf = min(util, capacity) and
//!    the 1.25 multiplies f_ref instead, so without invariance the old
//!    kernels climb above 80 % of capacity, v6.8 above 64 %).
//!    A policy of several CPUs takes the largest perf of its CPUs.
//! 4. f = f_ref × perf / capacity with f_ref = cpuinfo.max_freq when
//!    utilisation is frequency invariant, else `cur + cur/4`
//!    (get_capacity_ref_freq; the kernel's `freq_invariance`), resolved to the lowest table frequency at or
//!    above f within the policy limits (RELATION_L). So a CPU busy 80 % of
//!    the time at the top frequency keeps it there: the "tipping point".
//! 5. Busy-CPU hold (single-CPU policies, from v4.12: b7eaf1aab9f8,
//!    `EraId::SchedutilBusyHold`): if the CPU has not been idle since the
//!    previous evaluation, a lower f is ignored; decreases wait until the
//!    CPU idles. v4.7-v4.11 take the lower f at once.
//! 6. If f equals the current target, stop (the rate-limit clock is not
//!    restarted); else request it and restart the clock.
//!
//! # IO-wait boost (`iowait_boost`, a govlab switch)
//!
//! A task that slept on IO has little utilisation but may be latency bound,
//! so the CPU it wakes on gets a temporary floor on util:
//!
//! * `gradual` (v5.2 onwards, sugov_iowait_boost() and sugov_iowait_apply(),
//!   the v6.8 behaviour):
//!   the first IOWAIT call sets the boost to IOWAIT_BOOST_MIN = 128 (1/8 of
//!   capacity); each further IOWAIT call doubles it (up to 1024), at most
//!   once per evaluation (`iowait_boost_pending`). An evaluation without a
//!   new request halves it, and drops it below 128. A CPU that went more
//!   than one tick without any hook call (it was idle) loses its boost; an
//!   IOWAIT call after such a gap restarts at 128. Consecutive IO wakeups
//!   less than a tick apart thus ask for 12.5, 25, 50, 100 % of capacity.
//!   From v4.18 to v5.1 the same flow started at `policy->min` instead (the
//!   boost was kept in kHz against cpuinfo.max_freq, and dropped below
//!   `policy->min`); v5.2's "Simplify iowait boosting" brought the fixed
//!   1/8 (`EraId::SchedutilIowaitBoostMin`). govlab keeps the older start
//!   as its fraction of capacity, `policy->min × 1024 / cpuinfo.max`.
//! * `max` (generation 1, v4.9–v4.13, 21ca6d2c52f8): an IOWAIT call sets the
//!   boost to the maximum; every evaluation uses it and then halves it; a
//!   non-IOWAIT call more than a tick after the previous one clears it. Here
//!   it is kept in capacity units inside the v6.8 flow (the kernel kept kHz
//!   relative to cpuinfo.max_freq, which maps the same; the kHz value took a
//!   few more halvings to reach 0, all far below any real utilisation).
//!
//! # The busy-CPU hold and the idle-calls counter
//!
//! The kernel reads tick_nohz_get_idle_calls_cpu(), which advances when the
//! CPU enters idle with the tick stopped (since ~v4.17; idle periods where
//! the idle governor kept the tick count as busy). govlab reads
//! it through [`SchedView::idle_calls`](super::SchedView::idle_calls). Until
//! the engine provides that counter (None), this model falls back to "the
//! CPU's cumulative idle time has advanced since the previous evaluation",
//! which counts every idle period, as v4.12–v4.16 did.
//!
//! # The perf path (v5.11)
//!
//! Where the driver has `adjust_perf` (intel_cpufreq with HWP from v5.11)
//! a single-CPU policy with frequency-invariant utilisation skips step 4:
//! the DL floor and the estimate go to the driver as performance levels
//! (HWP min and desired, `machine/cpufreq_driver.rs`), and step 6 becomes
//! "restart the rate-limit clock" whatever the levels. Before v5.11, and
//! on such a policy without invariance, the frequency of step 4 becomes
//! HWP min with desired 0, so the hardware's own choice may run faster.
//!
//! # Left out
//!
//! * Drivers flagged CPUFREQ_NEED_UPDATE_LIMITS (intel_cpufreq in v6.8),
//!   for which the driver is called at every evaluation past the rate limit
//!   even when the frequency is unchanged: govlab's drivers
//!   ([`super::driver`]) only hear about changes, which for intel_cpufreq
//!   resolve to the same P-state anyway.
//! * IRQ utilisation and the runnable boost (~v6.5). RT and DL utilisation,
//!   the DL bandwidth floor, the top frequency while RT tasks run, uclamp
//!   and the DL rate-limit bypass (`ignore_dl_rate_limit`) come from the
//!   engine's [`SchedView::effective_cpu_util`](super::SchedView::effective_cpu_util)
//!   and [`SchedView::cpu_bw_dl`](super::SchedView::cpu_bw_dl).
//! * An architecture reference frequency (arch_scale_freq_ref, set by the
//!   Arm topology code in v6.8 to the same cpuinfo.max_freq govlab uses).
//! * Remote hook calls and the slow-switch kthread: the engine calls the hook
//!   for the CPU whose runqueue changed and applies requests at once, through
//!   the drivers' fast-switch path (which powernv treats differently: no
//!   global P-state ramp-down).

use super::dbs;
use super::{CpufreqGovernor, GovernorInfo, Policy, RejectedCall, Relation, SchedView, SCHED_CPUFREQ_IOWAIT};
use crate::error::Result;
use crate::kernel::{BuildCtx, EraId, Patch};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec, UINT_MAX};
use crate::platform::{CpuId, Platform};

/// Utilisation scale shift (SCHED_CAPACITY_SHIFT).
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// Utilisation scale: the capacity of the biggest CPU (SCHED_CAPACITY_SCALE).
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;
/// Start and floor of the gradual IO-wait boost, 1/8 of the scale
/// (IOWAIT_BOOST_MIN, since v5.2 "Simplify iowait boosting").
pub const IOWAIT_BOOST_MIN: u64 = SCHED_CAPACITY_SCALE / 8;

// ---- tunables (sysfs: /sys/devices/system/cpu/cpufreq/schedutil/) ----

/// rate_limit_us, µs (rate_limit_us_store: any unsigned int, 0 included;
/// anything else rejected). Default the policy's transition delay (v6.8:
/// the driver's own, else min(1000 × latency, 10 ms), 1 ms if unknown).
pub const RATE_LIMIT_US: ParamSpec<BuildCtx> = ParamSpec {
    name: "rate_limit_us",
    unit: "µs",
    default: ParamDefault::Derived {
        doc: "the policy's transition delay (µs)",
        value: |c| u64::from(dbs::policy_transition_delay_us(c, 0)),
    },
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "minimum time between frequency changes, µs; 0 to 4294967295",
};

/// govlab switch, not in sysfs: which IO-wait boost to model.
pub const IOWAIT_BOOST: ParamSpec<BuildCtx> = ParamSpec {
    name: "iowait_boost",
    unit: "",
    default: ParamDefault::Versioned { doc: "off before 4.9, max from 4.9, gradual from 4.18", value: |c| iowait_boost_default(&c.kernel) },
    range: Range::Choice(&["gradual", "max", "off"]),
    help: "govlab switch: gradual (v5.2+: 128, doubling, halving), max (v4.9: straight to max, halving) or off (the 2024 removal series, not merged); default by version: off before 4.9, max, gradual from 4.18",
};

const OWNER: &str = "cpufreq governor schedutil";

pub const INFO: GovernorInfo = GovernorInfo {
    name: "schedutil",
    description: "frequency = 1.25 × max × util / capacity, rate limited, with IO-wait boost",
    models: "Linux v6.8 kernel/sched/cpufreq_schedutil.c",
    params: &[RATE_LIMIT_US, IOWAIT_BOOST],
    eras: &[
        EraId::SchedutilIowaitBoost,
        EraId::IntelPstatePassive,
        EraId::SchedutilBusyHold,
        EraId::RemoteCallbacks,
        EraId::ArmFreqInvariance,
        EraId::SchedutilIowaitGradual,
        EraId::SchedutilIowaitBoostMin,
        EraId::X86FreqInvariance,
        EraId::IntelPstatePassiveHwp,
        EraId::IntelCpufreqAdjustPerf,
        EraId::SchedutilRunnableBoost,
        EraId::SchedutilFreqRef,
        EraId::SchedutilRateLimit2ms,
        EraId::TransitionDelayFromLatency,
    ],
    patches: &[Patch {
        tunable: "iowait_boost",
        value: "off",
        merged_in: None,
        subject: "Christian Loehle's 2024 series removing schedutil's iowait boost (not merged)",
    }],
    build,
};

/// schedutil's iowait boost by version: none before v4.9 (21ca6d2c52f8),
/// straight to the maximum from it, gradual from v4.18.
fn iowait_boost_default(kernel: &crate::kernel::KernelConfig) -> &'static str {
    if kernel.has(EraId::SchedutilIowaitGradual) {
        "gradual"
    } else if kernel.has(EraId::SchedutilIowaitBoost) {
        "max"
    } else {
        "off"
    }
}

/// The IO-wait boost model (govlab switch, not in sysfs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IowaitBoostMode {
    /// v5.2+ (and v6.8): 128, doubling per IO wakeup, halving per evaluation.
    Gradual,
    /// v4.9–v4.13: straight to the maximum, halving per evaluation.
    Max,
    /// No IO-wait boost: Christian Loehle's 2024 series removing it (not
    /// merged), a patch on top of any version.
    Off,
}

impl IowaitBoostMode {
    fn as_str(self) -> &'static str {
        match self {
            IowaitBoostMode::Gradual => "gradual",
            IowaitBoostMode::Max => "max",
            IowaitBoostMode::Off => "off",
        }
    }
}

/// schedutil's tunables (sysfs: /sys/devices/system/cpu/cpufreq/schedutil/).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedutilTunables {
    /// rate_limit_us, µs: minimum time between frequency changes
    /// ([`RATE_LIMIT_US`]).
    pub rate_limit_us: u32,
    /// govlab switch: which IO-wait boost to model ([`IOWAIT_BOOST`]).
    pub iowait_boost: IowaitBoostMode,
}

impl SchedutilTunables {
    /// The defaults a v6.8 kernel would pick on this machine.
    pub fn for_platform(platform: &Platform) -> Self {
        Self::read(Params::new(OWNER, &Spec::new("schedutil")), &BuildCtx::of(platform.clone())).expect("the defaults are in range")
    }

    /// Every tunable from `p`, each checked as its spec says; then unknown
    /// keys are rejected.
    fn read(mut p: Params<'_>, ctx: &BuildCtx) -> Result<Self> {
        let rate_limit_us = p.uint(&RATE_LIMIT_US, ctx)? as u32;
        let iowait_boost = match p.word_in(&IOWAIT_BOOST, ctx)? {
            "gradual" => IowaitBoostMode::Gradual,
            "max" => IowaitBoostMode::Max,
            _ => IowaitBoostMode::Off,
        };
        let t = SchedutilTunables { rate_limit_us, iowait_boost };
        p.finish()?;
        Ok(t)
    }
}

/// Per-CPU state (struct sugov_cpu).
#[derive(Debug, Clone)]
struct SugovCpu {
    cpu: CpuId,
    /// Time of the last hook call for this CPU, ns.
    last_update_ns: u64,
    /// Performance request after headroom, capacity units.
    util: u64,
    /// The floor of the last evaluation (sg_cpu->bw_min, v6.8).
    bw_min: u64,
    /// IO-wait boost, capacity units (0 = none).
    iowait_boost: u64,
    /// An IOWAIT call raised the boost since the last evaluation.
    iowait_boost_pending: bool,
    /// Where a gradual boost starts and below which it drops, capacity
    /// units: IOWAIT_BOOST_MIN from v5.2, policy->min before.
    iowait_boost_min: u64,
    /// The CFS utilisation read is `cpu_util_cfs_boost` (v6.5+).
    runnable_boost: bool,
    /// Idle-calls counter seen at the last evaluation (busy hold).
    saved_idle_calls: u64,
    /// Cumulative idle time seen at the last evaluation, ns (busy-hold
    /// fallback when the engine has no idle-calls counter).
    saved_idle_ns: u64,
}

/// Per-policy state (struct sugov_policy).
#[derive(Debug, Clone)]
struct SugovPolicy {
    /// rate_limit_us in ns (freq_update_delay_ns).
    freq_update_delay_ns: u64,
    /// Time of the last frequency change, ns.
    last_freq_update_time_ns: u64,
    /// The current target, kHz (0 until the first evaluation).
    next_freq_khz: u32,
    /// The unresolved frequency behind next_freq, kHz.
    cached_raw_freq_khz: u32,
    /// The limits changed: the next call bypasses the rate limit.
    limits_changed: bool,
    /// Re-resolve and request even if unchanged (after a limits change).
    need_freq_update: bool,
    /// sugov_start chose `sugov_update_single_perf`: one CPU, and a driver
    /// with `adjust_perf`.
    perf_path: bool,
    cpus: Vec<SugovCpu>,
}

/// The governor: one [`SugovPolicy`] per policy.
pub struct Schedutil {
    tunables: SchedutilTunables,
    /// The gradual iowait boost starts at policy->min (v4.18-v5.1), not
    /// at IOWAIT_BOOST_MIN.
    boost_from_policy_min: bool,
    /// sugov_get_util reads `cpu_util_cfs_boost` (runnable boosting,
    /// 7d0583cf9ec7, v6.5), not `cpu_util_cfs`.
    runnable_boost: bool,
    /// v6.8's performance estimate: the headroom on the utilisation (and,
    /// without invariance, on `cur` too); before, once on the frequency.
    headroom_on_util: bool,
    /// Step 5's busy-CPU hold (v4.12+).
    busy_hold: bool,
    /// Indexed by policy id; None until started.
    policies: Vec<Option<SugovPolicy>>,
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let mut g = Schedutil::new(SchedutilTunables::read(Params::new(OWNER, spec), ctx)?);
    g.boost_from_policy_min = !ctx.has(EraId::SchedutilIowaitBoostMin);
    g.runnable_boost = ctx.has(EraId::SchedutilRunnableBoost);
    g.headroom_on_util = ctx.has(EraId::SchedutilPerfEstimate);
    g.busy_hold = ctx.has(EraId::SchedutilBusyHold);
    Ok(Box::new(g))
}

impl SugovCpu {
    fn new(cpu: CpuId, iowait_boost_min: u64, runnable_boost: bool) -> Self {
        SugovCpu {
            cpu,
            iowait_boost_min,
            runnable_boost,
            last_update_ns: 0,
            util: 0,
            bw_min: 0,
            iowait_boost: 0,
            iowait_boost_pending: false,
            saved_idle_calls: 0,
            saved_idle_ns: 0,
        }
    }

    /// sugov_iowait_reset: after more than a tick without a call, the CPU
    /// was idle: drop the boost, or restart it at the minimum for an IOWAIT
    /// call. True if it reset.
    fn iowait_reset(&mut self, time_ns: u64, tick_ns: u64, set_iowait_boost: bool) -> bool {
        if time_ns.saturating_sub(self.last_update_ns) <= tick_ns {
            return false;
        }
        self.iowait_boost = if set_iowait_boost { self.iowait_boost_min } else { 0 };
        self.iowait_boost_pending = set_iowait_boost;
        true
    }

    /// sugov_iowait_boost: bookkeeping on every hook call (step 1).
    fn iowait_boost(&mut self, time_ns: u64, tick_ns: u64, flags: u32, mode: IowaitBoostMode) {
        let set_iowait_boost = flags & SCHED_CPUFREQ_IOWAIT != 0;
        match mode {
            IowaitBoostMode::Gradual => {
                if self.iowait_boost != 0 && self.iowait_reset(time_ns, tick_ns, set_iowait_boost) {
                    return;
                }
                // Only IO wakeups raise it, once per evaluation.
                if !set_iowait_boost || self.iowait_boost_pending {
                    return;
                }
                self.iowait_boost_pending = true;
                self.iowait_boost = if self.iowait_boost == 0 {
                    self.iowait_boost_min
                } else {
                    (self.iowait_boost << 1).min(SCHED_CAPACITY_SCALE)
                };
            }
            IowaitBoostMode::Max => {
                if set_iowait_boost {
                    self.iowait_boost = SCHED_CAPACITY_SCALE;
                } else if self.iowait_boost != 0 && time_ns.saturating_sub(self.last_update_ns) > tick_ns {
                    self.iowait_boost = 0;
                }
            }
            // The 2024 removal: IOWAIT calls are plain updates.
            IowaitBoostMode::Off => {}
        }
    }

    /// sugov_iowait_apply: the boost this evaluation uses, scaled to
    /// `max_cap`; decays it when no new request came.
    fn iowait_apply(&mut self, time_ns: u64, tick_ns: u64, max_cap: u64, mode: IowaitBoostMode) -> u64 {
        if self.iowait_boost == 0 {
            return 0;
        }
        // A CPU of a shared policy that has not called for a while.
        if self.iowait_reset(time_ns, tick_ns, false) {
            return 0;
        }
        let boost = match mode {
            IowaitBoostMode::Gradual => {
                if !self.iowait_boost_pending {
                    self.iowait_boost >>= 1;
                    if self.iowait_boost < self.iowait_boost_min {
                        self.iowait_boost = 0;
                        return 0;
                    }
                }
                self.iowait_boost_pending = false;
                self.iowait_boost
            }
            IowaitBoostMode::Max => {
                let boost = self.iowait_boost;
                self.iowait_boost >>= 1;
                boost
            }
            IowaitBoostMode::Off => 0,
        };
        (boost * max_cap) >> SCHED_CAPACITY_SHIFT
    }

    /// sugov_get_util: step 3 for this CPU.
    fn get_util(&mut self, sched: &dyn SchedView, boost: u64, headroom_on_util: bool) {
        // The CFS part: cpu_util_cfs_boost from v6.5 (runnable boosting,
        // 7d0583cf9ec7: the runqueue's runnable_avg raises it when tasks
        // wait), cpu_util_cfs before.
        let cfs = if self.runnable_boost { sched.cpu_util_boost(self.cpu) } else { sched.cpu_util(self.cpu) };
        // effective_cpu_util (v6.8): CFS plus RT and DL, the DL bandwidth
        // and uclamp min as a floor (the top while RT runs), uclamp max.
        let (util, min, max) = sched.effective_cpu_util(self.cpu, cfs);
        let util = util.max(boost);
        self.bw_min = min;
        self.util = if headroom_on_util {
            effective_cpu_perf(util, min, max)
        } else {
            // Before v6.8 (v5.2 schedutil_cpu_util, sugov_iowait_apply):
            // the utilisation within its floor and the capacity; the
            // headroom comes in get_next_freq.
            min.max(util.min(max))
        };
    }

    /// ignore_dl_rate_limit (v6.8): DL bandwidth above the last floor
    /// bypasses the rate limit.
    fn dl_bw_rose(&self, sched: &dyn SchedView) -> bool {
        sched.cpu_bw_dl(self.cpu) > self.bw_min
    }

    /// sugov_cpu_is_busy (step 5): no idle since the previous evaluation.
    fn cpu_is_busy(&mut self, sched: &dyn SchedView, time_ns: u64) -> bool {
        if let Some(idle_calls) = sched.idle_calls(self.cpu) {
            let busy = idle_calls == self.saved_idle_calls;
            self.saved_idle_calls = idle_calls;
            busy
        } else {
            let idle_ns = sched.idle_ns(self.cpu, time_ns);
            let busy = idle_ns == self.saved_idle_ns;
            self.saved_idle_ns = idle_ns;
            busy
        }
    }
}

/// sugov_effective_cpu_perf: util plus 25 % headroom, no more than `max`,
/// no less than `min`.
fn effective_cpu_perf(actual: u64, min: u64, max: u64) -> u64 {
    let actual = actual + (actual >> 2);
    min.max(actual.min(max))
}

impl SugovPolicy {
    fn new(policy: &Policy<'_>, tunables: SchedutilTunables, boost_from_policy_min: bool, runnable_boost: bool) -> Self {
        // v4.18-v5.1 sugov_iowait_boost: the first boost is policy->min,
        // as a fraction of cpuinfo.max_freq.
        let boost_min = if boost_from_policy_min {
            u64::from(policy.min_khz) * SCHED_CAPACITY_SCALE / u64::from(policy.cpuinfo_max_khz).max(1)
        } else {
            IOWAIT_BOOST_MIN
        };
        SugovPolicy {
            freq_update_delay_ns: u64::from(tunables.rate_limit_us) * 1000,
            last_freq_update_time_ns: 0,
            next_freq_khz: 0,
            cached_raw_freq_khz: 0,
            limits_changed: false,
            // govlab's drivers do not need CPUFREQ_NEED_UPDATE_LIMITS.
            need_freq_update: false,
            perf_path: policy.cpus.len() == 1 && policy.adjust_perf,
            cpus: policy.cpus.iter().map(|&c| SugovCpu::new(c, boost_min, runnable_boost)).collect(),
        }
    }

    /// What every hook call records before `sugov_should_update_freq` may
    /// turn it away (v6.8 `sugov_update_single_common` and
    /// `sugov_update_shared`; v4.14's `sugov_update_single` and
    /// `sugov_update_shared` in the same order): the iowait boost
    /// bookkeeping of CPU `j`, `last_update`, and `ignore_dl_rate_limit`. A
    /// remote call the policy rejects leaves these behind, so a remote
    /// IOWAIT wakeup's boost applies at the CPU's next local call.
    fn record_call(&mut self, j: usize, mode: IowaitBoostMode, tick_ns: u64, sched: &dyn SchedView, time_ns: u64, flags: u32) {
        let sg_cpu = &mut self.cpus[j];
        sg_cpu.iowait_boost(time_ns, tick_ns, flags, mode);
        sg_cpu.last_update_ns = time_ns;
        if sg_cpu.dl_bw_rose(sched) {
            self.limits_changed = true;
        }
    }

    /// sugov_should_update_freq (step 2).
    fn should_update_freq(&mut self, time_ns: u64) -> bool {
        if self.limits_changed {
            self.limits_changed = false;
            self.need_freq_update = true;
            return true;
        }
        time_ns.saturating_sub(self.last_freq_update_time_ns) >= self.freq_update_delay_ns
    }

    /// get_next_freq (step 4).
    fn get_next_freq(&mut self, policy: &Policy<'_>, util: u64, max_cap: u64, headroom_on_util: bool) -> u32 {
        // get_capacity_ref_freq (v6.8, with e37617c8e53a "sched/fair: Fix
        // frequency selection for non-invariant case"): cpuinfo.max_freq
        // when utilisation is frequency invariant; otherwise policy->cur
        // plus 25 %, on top of the headroom already in `util`. Before v6.8
        // (v4.7's get_next_freq, v5.2's map_util_freq): the same base,
        // cpuinfo.max_freq or policy->cur, plus 25 % in every case, and
        // no headroom in `util`.
        let f_ref = if policy.sched.freq_invariant() {
            let max = u64::from(policy.cpuinfo_max_khz);
            if headroom_on_util { max } else { max + (max >> 2) }
        } else {
            let cur = u64::from(policy.cur_khz);
            cur + (cur >> 2)
        };
        let freq = (f_ref * util / max_cap.max(1)) as u32;
        if freq == self.cached_raw_freq_khz && !self.need_freq_update {
            return self.next_freq_khz;
        }
        self.cached_raw_freq_khz = freq;
        // cpufreq_driver_resolve_freq: RELATION_L within the limits.
        dbs::frequency_table_target(policy, freq, Relation::L)
    }

    /// sugov_update_next_freq (step 6): false if nothing changes.
    fn update_next_freq(&mut self, time_ns: u64, next_freq_khz: u32) -> bool {
        if self.need_freq_update {
            self.need_freq_update = false;
        } else if self.next_freq_khz == next_freq_khz {
            return false;
        }
        self.next_freq_khz = next_freq_khz;
        self.last_freq_update_time_ns = time_ns;
        true
    }
}

impl Schedutil {
    pub fn new(tunables: SchedutilTunables) -> Self {
        Schedutil {
            tunables,
            boost_from_policy_min: false,
            runnable_boost: false,
            headroom_on_util: true,
            busy_hold: true,
            policies: Vec::new(),
        }
    }

    /// sugov_update_single_common (v6.8; inline in v4.14's
    /// sugov_update_single): the call is recorded, then, unless the rate
    /// limit turns it away, the CPU's boost and utilisation are worked out.
    /// False when the policy does not update.
    fn update_single_common(
        &self,
        sg: &mut SugovPolicy,
        policy: &Policy<'_>,
        time_ns: u64,
        flags: u32,
        max_cap: u64,
    ) -> bool {
        sg.record_call(0, self.tunables.iowait_boost, policy.tick_ns, policy.sched, time_ns, flags);
        if !sg.should_update_freq(time_ns) {
            return false;
        }
        let sg_cpu = &mut sg.cpus[0];
        let boost = sg_cpu.iowait_apply(time_ns, policy.tick_ns, max_cap, self.tunables.iowait_boost);
        sg_cpu.get_util(policy.sched, boost, self.headroom_on_util);
        true
    }

    /// sugov_update_single_freq: a policy of one CPU.
    fn update_single_freq(&self, sg: &mut SugovPolicy, policy: &mut Policy<'_>, time_ns: u64, flags: u32) {
        let cached_freq = sg.cached_raw_freq_khz;
        let max_cap = policy.sched.capacity(sg.cpus[0].cpu);

        // Steps 1–3.
        if !self.update_single_common(sg, policy, time_ns, flags, max_cap) {
            return;
        }
        let util = sg.cpus[0].util;

        // Step 4.
        let mut next_f = sg.get_next_freq(policy, util, max_cap, self.headroom_on_util);

        // Step 5: no decrease while the CPU has not idled.
        let busy = self.busy_hold && sg.cpus[0].cpu_is_busy(policy.sched, time_ns);
        if busy && next_f < sg.next_freq_khz && !sg.need_freq_update {
            next_f = sg.next_freq_khz;
            sg.cached_raw_freq_khz = cached_freq;
        }

        // Step 6.
        if sg.update_next_freq(time_ns, next_f) {
            policy.fast_switch(next_f);
        }
    }

    /// sugov_update_single_perf (v5.11, ee2cc4276ba4): a policy of one CPU
    /// on a driver with `adjust_perf` passes performance levels instead of
    /// a frequency: the floor as the required level, the estimate as the
    /// wanted one, in units of the CPU's capacity. Without frequency
    /// invariance it falls back to the frequency path. The rate-limit clock
    /// restarts at every evaluation, changed or not. The levels by version:
    /// v5.11–v6.7 pass `map_util_perf` (+25 %) of the DL bandwidth and of
    /// the utilisation; v6.8 (9c0b4bb7f630) passes `bw_min` (DL bandwidth,
    /// uclamp min, the top while RT runs) and the estimate, which already
    /// has its headroom.
    fn update_single_perf(&self, sg: &mut SugovPolicy, policy: &mut Policy<'_>, time_ns: u64, flags: u32) {
        if !policy.sched.freq_invariant() {
            self.update_single_freq(sg, policy, time_ns, flags);
            return;
        }
        let cpu = sg.cpus[0].cpu;
        let max_cap = policy.sched.capacity(cpu);
        let prev_util = sg.cpus[0].util;

        if !self.update_single_common(sg, policy, time_ns, flags, max_cap) {
            return;
        }
        let sg_cpu = &mut sg.cpus[0];
        // Do not lower the level while the CPU has not idled.
        if sg_cpu.cpu_is_busy(policy.sched, time_ns) && sg_cpu.util < prev_util {
            sg_cpu.util = prev_util;
        }
        let (min_perf, target_perf) = if self.headroom_on_util {
            (sg_cpu.bw_min, sg_cpu.util)
        } else {
            let map_util_perf = |util: u64| util + (util >> 2);
            (map_util_perf(policy.sched.cpu_bw_dl(cpu)), map_util_perf(sg_cpu.util))
        };
        policy.adjust_perf(min_perf, target_perf, max_cap);
        sg.last_freq_update_time_ns = time_ns;
    }

    /// sugov_update_shared: a policy of several CPUs takes their maximum.
    fn update_shared(&self, sg: &mut SugovPolicy, j: usize, policy: &mut Policy<'_>, time_ns: u64, flags: u32) {
        let mode = self.tunables.iowait_boost;
        let tick_ns = policy.tick_ns;
        sg.record_call(j, mode, tick_ns, policy.sched, time_ns, flags);
        if !sg.should_update_freq(time_ns) {
            return;
        }
        // sugov_next_freq_shared: every CPU's boost and perf, the largest wins.
        let max_cap = policy.sched.capacity(sg.cpus[j].cpu);
        let mut util = 0;
        for c in &mut sg.cpus {
            let boost = c.iowait_apply(time_ns, tick_ns, max_cap, mode);
            c.get_util(policy.sched, boost, self.headroom_on_util);
            util = util.max(c.util);
        }
        let next_f = sg.get_next_freq(policy, util, max_cap, self.headroom_on_util);
        if sg.update_next_freq(time_ns, next_f) {
            policy.fast_switch(next_f);
        }
    }
}

impl CpufreqGovernor for Schedutil {
    /// schedutil_gov.flags = CPUFREQ_GOV_DYNAMIC_SWITCHING.
    fn dynamic_switching(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "schedutil"
    }

    fn uses_util_hook(&self) -> bool {
        true
    }

    /// sugov_start the first time; sugov_limits after (the next call
    /// bypasses the rate limit and re-resolves).
    fn start(&mut self, policy: &mut Policy<'_>) {
        let id = policy.id;
        if self.policies.len() <= id {
            self.policies.resize_with(id + 1, || None);
        }
        match self.policies[id].as_mut() {
            Some(sg) => sg.limits_changed = true,
            None => self.policies[id] = Some(SugovPolicy::new(policy, self.tunables, self.boost_from_policy_min, self.runnable_boost)),
        }
    }

    fn update_util(&mut self, policy: &mut Policy<'_>, cpu: CpuId, time_ns: u64, flags: u32) {
        let Some(mut sg) = self.policies.get_mut(policy.id).and_then(Option::take) else {
            panic!(
                "schedutil: hook call for cpu {cpu} at {time_ns} ns before policy {} started",
                policy.id
            );
        };
        let Some(j) = sg.cpus.iter().position(|c| c.cpu == cpu) else {
            panic!(
                "schedutil: hook call at {time_ns} ns for cpu {cpu}, not in policy {}",
                policy.id
            );
        };
        if sg.cpus.len() > 1 {
            self.update_shared(&mut sg, j, policy, time_ns, flags);
        } else if sg.perf_path {
            self.update_single_perf(&mut sg, policy, time_ns, flags);
        } else {
            self.update_single_freq(&mut sg, policy, time_ns, flags);
        }
        self.policies[policy.id] = Some(sg);
    }

    /// A remote call `sugov_should_update_freq` turns away
    /// (`cpufreq_this_cpu_can_update`) after the bookkeeping.
    fn update_util_rejected(&mut self, call: &RejectedCall<'_>) {
        // The engine calls the hook only for a started policy's own CPUs; a
        // call that is neither has nothing to record.
        let (cpu, time_ns, id) = (call.cpu, call.time_ns, call.policy);
        let Some(sg) = self.policies.get_mut(id).and_then(Option::as_mut) else {
            debug_assert!(false, "schedutil: hook call for cpu {cpu} at {time_ns} ns before policy {id} started");
            return;
        };
        let Some(j) = sg.cpus.iter().position(|c| c.cpu == cpu) else {
            debug_assert!(false, "schedutil: hook call at {time_ns} ns for cpu {cpu}, not in policy {id}");
            return;
        };
        sg.record_call(j, self.tunables.iowait_boost, call.tick_ns, call.sched, time_ns, call.flags);
    }

    fn tunables(&self) -> Vec<(String, String)> {
        vec![
            RATE_LIMIT_US.show(self.tunables.rate_limit_us),
            IOWAIT_BOOST.show(self.tunables.iowait_boost.as_str()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::dbs::testutil::Harness;
    use super::super::PolicyRequests;
    use super::*;
    use crate::platform::load_named;

    const US: u64 = 1000;
    const MS: u64 = 1_000_000;
    /// cpuinfo max 3.2 GHz; 1.25 × 3.2 GHz × {128, 256, 512}/1024 are 0.5,
    /// 1.0, 2.0 GHz, all in the table.
    const MHZ: [u32; 8] = [400, 500, 800, 1000, 1600, 2000, 2400, 3200];

    fn skylake() -> Platform {
        load_named(&Spec::new("skylake-e3-1240v5")).unwrap()
    }

    fn schedutil(settings: &str) -> Box<dyn CpufreqGovernor> {
        build(
            &Spec::parse(&format!("schedutil:{settings}"), "test").unwrap(),
            &crate::kernel::BuildCtx::of(skylake().clone()),
        )
        .unwrap()
    }

    /// A one-CPU policy (tick 4 ms) whose CPU idles between evaluations
    /// (idle calls advance), so the busy hold never applies.
    fn started(settings: &str) -> (Box<dyn CpufreqGovernor>, Harness) {
        let mut g = schedutil(settings);
        let mut h = Harness::new(&MHZ, 1);
        h.sched.idle_calls = Some(vec![0]);
        h.call(|p| g.start(p));
        (g, h)
    }

    /// As [`started`], on kernel version `kernel`.
    fn started_on(kernel: &str, settings: &str) -> (Box<dyn CpufreqGovernor>, Harness) {
        let k = crate::kernel::KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
        let ctx = crate::kernel::BuildCtx::new(skylake(), k);
        let mut g = build(&Spec::parse(&format!("schedutil:{settings}"), "test").unwrap(), &ctx).unwrap();
        let mut h = Harness::new(&MHZ, 1);
        h.sched.idle_calls = Some(vec![0]);
        h.call(|p| g.start(p));
        (g, h)
    }

    /// One hook call; the idle-calls counter advances first.
    fn hook(g: &mut Box<dyn CpufreqGovernor>, h: &mut Harness, at_ns: u64, util: u64, flags: u32) -> Option<u32> {
        h.sched.util[0] = util;
        if let Some(c) = h.sched.idle_calls.as_mut() {
            c[0] += 1;
        }
        h.call(|p| g.update_util(p, 0, at_ns, flags)).target.map(|(khz, rel)| {
            assert_eq!(rel, Relation::L);
            khz
        })
    }

    /// 1.25 × 3.2 GHz × 400/1024 = 1.5625 GHz → the next OPP up, 1.6 GHz;
    /// util at capacity asks for the top; util 0 for the bottom.
    #[test]
    fn frequency_is_headroom_times_max_times_util_resolved_up() {
        let (mut g, mut h) = started("rate_limit_us=1000");
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 400, 0), Some(1_600_000));
        assert_eq!(hook(&mut g, &mut h, 4 * MS, 1024, 0), Some(3_200_000));
        // 1.25 × 700 = 875 → 2.734 GHz → 3.2 GHz.
        assert_eq!(hook(&mut g, &mut h, 6 * MS, 700, 0), None);
        assert_eq!(hook(&mut g, &mut h, 8 * MS, 0, 0), Some(400_000));
        // 1.25 × 512 = 640 → exactly 2.0 GHz.
        assert_eq!(hook(&mut g, &mut h, 10 * MS, 512, 0), Some(2_000_000));
    }

    /// Calls inside rate_limit_us of the last change do nothing; the clock
    /// runs from the last change, not from the last evaluation.
    /// Without frequency invariance (x86 before v5.7, powerpc) the
    /// reference is the current frequency plus 25 % (v6.8
    /// get_capacity_ref_freq): from 1.0 GHz, util 800 → perf 1000 →
    /// 1.25 GHz × 1000/1024 = 1.22 GHz → 1.6 GHz, where the invariant
    /// formula would ask 3.2 × 1000/1024 → 3.2 GHz; a saturated CPU climbs
    /// one 25 % step per evaluation (1.6 GHz → 2.0 GHz).
    #[test]
    fn non_invariant_reference_is_current_frequency_plus_a_quarter() {
        let (mut g, mut h) = started("rate_limit_us=1000");
        h.sched.non_invariant = true;
        h.cur_khz = 1_000_000;
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 800, 0), Some(1_600_000));
        h.cur_khz = 1_600_000;
        assert_eq!(hook(&mut g, &mut h, 4 * MS, 1024, 0), Some(2_000_000));
        h.sched.non_invariant = false;
        h.cur_khz = 2_400_000;
        assert_eq!(hook(&mut g, &mut h, 6 * MS, 800, 0), Some(3_200_000));
    }

    /// Before v6.8 (9c0b4bb7f630, e37617c8e53a) the headroom came once, on
    /// the frequency: non-invariant, from 1.6 GHz at util 700, v5.2 asks
    /// 1.25 × 1.6 GHz × 700/1024 = 1.37 GHz → 1.6 GHz (it holds) and v6.8
    /// 1.25 × 1.6 GHz × 875/1024 = 1.71 GHz → 2.0 GHz. So the old
    /// kernels climb only above 80 % of capacity (the tipping point the
    /// v4.7 comment names), v6.8 above 64 %. Invariant, both ask
    /// 1.25 × 3.2 GHz × 700/1024 = 2.73 GHz → 3.2 GHz.
    #[test]
    fn headroom_once_on_the_frequency_before_6_8() {
        for (kernel, non_invariant_700) in [("5.2", 1_600_000), ("6.7", 1_600_000), ("6.8", 2_000_000)] {
            let (mut g, mut h) = started_on(kernel, "rate_limit_us=1000");
            h.sched.non_invariant = true;
            h.cur_khz = 1_600_000;
            assert_eq!(hook(&mut g, &mut h, 2 * MS, 700, 0), Some(non_invariant_700), "{kernel}");
            h.sched.non_invariant = false;
            assert_eq!(hook(&mut g, &mut h, 4 * MS, 700, 0), Some(3_200_000), "{kernel}");
        }
    }

    #[test]
    fn rate_limit_counts_from_the_last_change() {
        let (mut g, mut h) = started("rate_limit_us=1000");
        // Before boot + 1 ms: too early.
        assert_eq!(hook(&mut g, &mut h, 500 * US, 400, 0), None);
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 400, 0), Some(1_600_000));
        assert_eq!(hook(&mut g, &mut h, 2 * MS + 500 * US, 800, 0), None);
        // 1 ms after the change: evaluated, unchanged, clock not restarted.
        assert_eq!(hook(&mut g, &mut h, 3 * MS, 400, 0), None);
        // 1.5 ms after the change (0.5 ms after that evaluation): changes.
        assert_eq!(hook(&mut g, &mut h, 3 * MS + 500 * US, 800, 0), Some(3_200_000));
    }

    /// A governor started on a driver with `adjust_perf`.
    fn started_perf(kernel: &str) -> (Box<dyn CpufreqGovernor>, Harness) {
        let k = crate::kernel::KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
        let ctx = crate::kernel::BuildCtx::new(skylake(), k);
        let mut g = build(&Spec::parse("schedutil:rate_limit_us=1000", "test").unwrap(), &ctx).unwrap();
        let mut h = Harness::new(&MHZ, 1);
        h.adjust_perf = true;
        h.sched.idle_calls = Some(vec![0]);
        h.call(|p| g.start(p));
        (g, h)
    }

    fn perf_hook(g: &mut Box<dyn CpufreqGovernor>, h: &mut Harness, at_ns: u64, util: u64) -> PolicyRequests {
        h.sched.util[0] = util;
        h.sched.idle_calls.as_mut().unwrap()[0] += 1;
        h.call(|p| g.update_util(p, 0, at_ns, 0))
    }

    /// sugov_update_single_perf: the levels go to adjust_perf (1.25 × 400 =
    /// 500 of 1024 on 6.6 and 6.8 alike, the floor 0 without DL tasks), no
    /// frequency; every evaluation restarts the rate-limit clock, unchanged
    /// levels included; without invariance the frequency path runs.
    #[test]
    fn perf_path_passes_levels_and_restarts_the_rate_limit_each_time() {
        for kernel in ["6.6", "6.8"] {
            let (mut g, mut h) = started_perf(kernel);
            let out = perf_hook(&mut g, &mut h, 2 * MS, 400);
            assert_eq!((out.adjust_perf, out.target), (Some((0, 500, 1024)), None), "{kernel}");
            // 1 ms later, unchanged: evaluated and passed again.
            assert_eq!(perf_hook(&mut g, &mut h, 3 * MS, 400).adjust_perf, Some((0, 500, 1024)), "{kernel}");
            // 0.5 ms after that evaluation: rate limited (the frequency
            // path would evaluate, its clock having stayed at 2 ms).
            assert_eq!(perf_hook(&mut g, &mut h, 3 * MS + 500 * US, 800).adjust_perf, None, "{kernel}");
            h.sched.non_invariant = true;
            let out = perf_hook(&mut g, &mut h, 5 * MS, 800);
            assert_eq!(out.adjust_perf, None, "{kernel}: no invariance, no levels");
            assert!(out.target.is_some(), "{kernel}: no invariance, the frequency path");
        }
    }

    /// IO wakeups 1.5 ms apart (< 1 tick): 128, 256, 512, 1024; then plain
    /// calls halve it: 512, 256, 128, gone.
    #[test]
    fn gradual_iowait_boost_doubles_then_halves() {
        let (mut g, mut h) = started("rate_limit_us=1000");
        let mut freqs = Vec::new();
        let mut t = 2 * MS;
        for flags in [SCHED_CPUFREQ_IOWAIT; 4].into_iter().chain([0; 4]) {
            freqs.push(hook(&mut g, &mut h, t, 0, flags));
            t += 1500 * US;
        }
        let khz = [
            500_000, 1_000_000, 2_000_000, 3_200_000, 2_000_000, 1_000_000, 500_000, 400_000,
        ];
        assert_eq!(freqs, khz.map(Some).to_vec());
    }

    /// Runnable boosting (7d0583cf9ec7, v6.5): two tasks sharing the CPU
    /// each ran half the time, so util_avg says 400 while runnable_avg
    /// says 800; from v6.5 schedutil asks for 1.25 × 800 (3.2 GHz), before
    /// for 1.25 × 400 (1.6 GHz).
    #[test]
    fn runnable_avg_raises_the_request_from_6_5() {
        for (kernel, khz) in [("6.4", 1_600_000), ("6.5", 3_200_000), ("6.8", 3_200_000)] {
            let (mut g, mut h) = started_on(kernel, "rate_limit_us=1000");
            h.sched.runnable[0] = 800;
            assert_eq!(hook(&mut g, &mut h, 2 * MS, 400, 0), Some(khz), "{kernel}");
        }
    }

    /// v4.18-v5.1 (before "Simplify iowait boosting", v5.2): the gradual
    /// boost starts at policy->min, here 800 MHz of 3.2 GHz, 256 (1.25 ×
    /// 256/1024 × 3.2 GHz = 1.0 GHz), and drops once halved below it; v5.2
    /// on the same policy starts at 128 (500 MHz, held at the 800 MHz
    /// minimum). 0: no change.
    #[test]
    fn gradual_iowait_boost_starts_at_policy_min_before_5_2() {
        for (kernel, first, steps) in [("4.19", 1_000_000, vec![1_000_000, 2_000_000, 1_000_000, 800_000]), ("5.2", 800_000, vec![800_000, 1_000_000, 800_000, 0])] {
            let k = crate::kernel::KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
            let ctx = crate::kernel::BuildCtx::new(skylake(), k);
            let mut g = build(&Spec::parse("schedutil:rate_limit_us=1000,iowait_boost=gradual", "test").unwrap(), &ctx).unwrap();
            let mut h = Harness::new(&MHZ, 1);
            h.min_khz = 800_000;
            h.sched.idle_calls = Some(vec![0]);
            h.call(|p| g.start(p));
            let mut got = Vec::new();
            let mut t = 2 * MS;
            for flags in [SCHED_CPUFREQ_IOWAIT, SCHED_CPUFREQ_IOWAIT, 0, 0] {
                got.push(hook(&mut g, &mut h, t, 0, flags).unwrap_or(0));
                t += 1500 * US;
            }
            assert_eq!(got[0], first, "{kernel}");
            assert_eq!(got, steps, "{kernel}");
        }
    }

    /// More than a tick (4 ms) without calls: the next IO wakeup restarts at
    /// 128 instead of doubling to 512.
    #[test]
    fn gradual_iowait_boost_resets_after_more_than_a_tick_without_calls() {
        let (mut g, mut h) = started("rate_limit_us=1000");
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 0, SCHED_CPUFREQ_IOWAIT), Some(500_000));
        assert_eq!(
            hook(&mut g, &mut h, 3_500 * US, 0, SCHED_CPUFREQ_IOWAIT),
            Some(1_000_000)
        );
        assert_eq!(hook(&mut g, &mut h, 8 * MS, 0, SCHED_CPUFREQ_IOWAIT), Some(500_000));
        // Exactly one tick later is not "more than a tick": it doubles.
        assert_eq!(hook(&mut g, &mut h, 12 * MS, 0, SCHED_CPUFREQ_IOWAIT), Some(1_000_000));
    }

    /// iowait_boost=max: the first IO wakeup goes straight to the top, then
    /// each evaluation halves (2.0 GHz = 1.25 × 512/1024 × 3.2 GHz).
    #[test]
    fn max_iowait_boost_jumps_to_max_then_halves() {
        let (mut g, mut h) = started("rate_limit_us=1000,iowait_boost=max");
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 0, SCHED_CPUFREQ_IOWAIT), Some(3_200_000));
        assert_eq!(hook(&mut g, &mut h, 3_500 * US, 0, 0), Some(2_000_000));
        // A new IO wakeup: back to the top at once.
        assert_eq!(hook(&mut g, &mut h, 5 * MS, 0, SCHED_CPUFREQ_IOWAIT), Some(3_200_000));
    }

    /// iowait_boost=off (the 2024 removal series on top): an IO wakeup is a
    /// plain update: util 0 keeps the bottom, where gradual boosts.
    #[test]
    fn iowait_boost_off_ignores_io_wakeups() {
        let (mut g, mut h) = started("rate_limit_us=1000,iowait_boost=off");
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 0, SCHED_CPUFREQ_IOWAIT), None);
        assert_eq!(hook(&mut g, &mut h, 3_500 * US, 0, SCHED_CPUFREQ_IOWAIT), None);
        let (mut g, mut h) = started("rate_limit_us=1000");
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 0, SCHED_CPUFREQ_IOWAIT), Some(500_000));
    }

    /// Single-CPU policy: no decrease while the CPU has not idled since the
    /// last evaluation (idle-calls counter, or idle time as a fallback).
    #[test]
    fn busy_cpu_holds_its_frequency() {
        for counter in [true, false] {
            let mut g = schedutil("rate_limit_us=1000");
            let mut h = Harness::new(&MHZ, 1);
            h.sched.idle_calls = counter.then(|| vec![5]);
            h.sched.idle_ns[0] = 3 * MS;
            h.call(|p| g.start(p));
            let mut at = |h: &mut Harness, t_ms: u64, util: u64| {
                h.sched.util[0] = util;
                h.call(|p| g.update_util(p, 0, t_ms * MS, 0)).target
            };
            assert_eq!(at(&mut h, 2, 800), Some((3_200_000, Relation::L)));
            // Not idle since: the lower request is ignored.
            assert_eq!(at(&mut h, 4, 100), None);
            // The CPU idled: 1.25 × 100/1024 × 3.2 GHz = 0.39 GHz → 0.4 GHz.
            match h.sched.idle_calls.as_mut() {
                Some(c) => c[0] += 1,
                None => h.sched.idle_ns[0] += MS,
            }
            assert_eq!(at(&mut h, 6, 100), Some((400_000, Relation::L)), "counter: {counter}");
        }
    }

    /// Before v4.12 (b7eaf1aab9f8) a CPU that has not idled since the last
    /// evaluation still takes a lower frequency.
    #[test]
    fn before_v4_12_a_busy_cpu_takes_a_lower_frequency_at_once() {
        for (kernel, held) in [("4.8", false), ("4.16", true)] {
            let k = crate::kernel::KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
            let ctx = crate::kernel::BuildCtx::new(skylake(), k);
            let mut g = build(&Spec::parse("schedutil:rate_limit_us=1000", "test").unwrap(), &ctx).unwrap();
            let mut h = Harness::new(&MHZ, 1);
            h.sched.idle_calls = Some(vec![5]);
            h.call(|p| g.start(p));
            let mut at = |h: &mut Harness, t_ms: u64, util: u64| {
                h.sched.util[0] = util;
                h.call(|p| g.update_util(p, 0, t_ms * MS, 0)).target
            };
            assert!(at(&mut h, 2, 800).is_some(), "{kernel}");
            let lower = at(&mut h, 4, 100);
            assert_eq!(lower.is_none(), held, "{kernel}: {lower:?}");
        }
    }

    /// A policy of two CPUs follows the busier one, without the busy hold.
    #[test]
    fn shared_policy_takes_the_max_over_cpus() {
        let mut g = schedutil("rate_limit_us=1000");
        let mut h = Harness::new(&MHZ, 2);
        h.sched.idle_calls = Some(vec![0, 0]);
        h.call(|p| g.start(p));
        h.sched.util = vec![100, 600];
        // 1.25 × 600 = 750 → 2.34 GHz → 2.4 GHz, from a call on CPU 0.
        let out = h.call(|p| g.update_util(p, 0, 2 * MS, 0));
        assert_eq!(out.target, Some((2_400_000, Relation::L)));
        // The busy CPU quietens; no idle calls, but shared policies never hold.
        h.sched.util = vec![100, 100];
        let out = h.call(|p| g.update_util(p, 1, 4 * MS, 0));
        assert_eq!(out.target, Some((400_000, Relation::L)));
    }

    /// A limits change (a second start) lets the next call through the rate
    /// limit and re-resolve within the new limits.
    #[test]
    fn limits_change_bypasses_rate_limit() {
        let (mut g, mut h) = started("rate_limit_us=1000");
        assert_eq!(hook(&mut g, &mut h, 2 * MS, 1024, 0), Some(3_200_000));
        h.max_khz = 2_000_000;
        h.call(|p| g.start(p));
        assert_eq!(hook(&mut g, &mut h, 2 * MS + 100 * US, 1024, 0), Some(2_000_000));
    }

    #[test]
    fn tunables_default_from_platform_and_are_validated() {
        let g = schedutil("");
        let t: Vec<(String, String)> = g.tunables();
        // Skylake runs intel_cpufreq with HWP: 5000 µs.
        assert_eq!(t[0], ("rate_limit_us".to_string(), "5000".to_string()));
        assert_eq!(t[1], ("iowait_boost".to_string(), "gradual".to_string()));
        assert!(g.uses_util_hook());
        let sky = skylake();
        let err = |s: &str| build(&Spec::parse(s, "test").unwrap(), &crate::kernel::BuildCtx::of(sky.clone())).err().unwrap().to_string();
        let e = err("schedutil:rate_limit_us=-1");
        assert!(e.contains("rate_limit_us") && e.contains("from 0 to 4294967295"), "{e}");
        let e = err("schedutil:rate_limit_us=4294967296");
        assert!(e.contains("rate_limit_us"), "{e}");
        let e = err("schedutil:iowait_boost=sometimes");
        assert!(e.contains("iowait_boost") && e.contains("gradual, max"), "{e}");
    }
}

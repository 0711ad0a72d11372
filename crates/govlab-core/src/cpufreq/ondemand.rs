//! `ondemand`: sample the busiest CPU's load; above `up_threshold` jump to
//! the top, otherwise ask for a frequency proportional to the load.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/cpufreq_ondemand.c, on the
//! shared sampling code of cpufreq_governor.c ([`super::dbs`]): the
//! decision of od_update() and od_dbs_update(), the defaults of od_init()
//! and cpufreq_dbs_governor_init(), the checks of the store_*() functions.
//!
//! By kernel version ([`KernelConfig`]): before v3.17 ("cpufreq: ondemand:
//! Eliminate the deadband effect"; v3.11 dfa5bb622555 to v3.16) step 3 asks
//! for `load × cpuinfo.max / 100`, raised to policy->min, with RELATION_L;
//! the sampling-rate defaults and floor before v4.14, the copy_prev_load
//! default before v3.16 and the wall-time long-idle test before v4.18 are
//! in [`super::dbs`].
//!
//! Left out: the rule up to v3.10 (load × average frequency against
//! `up_threshold × cur`, stepping down with a `down_differential`) and the
//! powersave_bias handler that AMD's frequency-sensitivity driver registers
//! (od_register_powersave_bias_handler).
//! The sampling itself (a deferrable timer standing in for the v4.6+
//! scheduler hook) and its limits are described in [`super::dbs`].
//!
//! # The idea
//!
//! ondemand does not predict; it reacts to the last window. Every
//! `sampling_rate` (stretched while at the top, see step 2) it takes the
//! policy load from [`super::dbs::dbs_update`] — the busiest CPU's busy
//! share of the window, with the 2014 long-idle rule — and then:
//!
//! 1. If the load is above `up_threshold`, the policy is saturated: go to
//!    policy->max (RELATION_H), skipped if already there.
//! 2. Arriving at the top from below also sets `rate_mult` to
//!    `sampling_down_factor`, so the next sample comes that many periods
//!    later: the governor lingers at the top instead of dropping at the
//!    first dip.
//! 3. Otherwise ask for `cpuinfo.min + load × (cpuinfo.max − cpuinfo.min) / 100`
//!    with RELATION_C (the closest table frequency), and reset `rate_mult`
//!    to 1. (Since v3.17 the line runs from the hardware minimum; before,
//!    `load × max / 100`, which left a dead band at low loads: see below.)
//! 4. With `powersave_bias` b (per mille), the target f is first resolved to
//!    a table frequency, lowered to f_avg = f − f × b / 1000, and bracketed
//!    by the table frequencies f_lo ≤ f_avg ≤ f_hi. If they differ, one
//!    sampling period is split in two sub-samples: f_hi now for
//!    `T × (f_avg − f_lo) / (f_hi − f_lo)` (rounded), then f_lo for the rest
//!    of T = sampling_rate, so the time average is f_avg. The load is
//!    measured only at the normal sample, over both halves.
//!
//! Machine-dependent defaults (od_init, cpufreq_dbs_governor_init):
//! `up_threshold` is 95 on kernels with NOHZ idle micro-accounting (every
//! modern x86 kernel; 80 without), `sampling_rate` is the larger of two ticks
//! and the policy's transition delay, and `io_is_busy` is 1 on Intel family
//! 6 model ≥ 15 (Core 2 and later). govlab platforms carry no CPU vendor or
//! model: the Intel drivers (`intel_pstate`, `acpi-cpufreq`) stand for Intel
//! family 6 here, every other driver for "not Intel". (acpi-cpufreq also
//! drives older AMD parts, which would get 0 in the kernel.)

use super::dbs::{self, DbsData, DbsGovernor, DbsGovernorCore, PolicyDbsInfo};
use super::{CpufreqGovernor, GovernorInfo, Policy, Relation};
use crate::error::Result;
use crate::kernel::{BuildCtx, EraId, KernelConfig};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::{Driver, Platform};

/// up_threshold without NOHZ idle micro-accounting (DEF_FREQUENCY_UP_THRESHOLD).
pub const DEF_FREQUENCY_UP_THRESHOLD: u32 = 80;
/// up_threshold with NOHZ idle micro-accounting, the modern default
/// (MICRO_FREQUENCY_UP_THRESHOLD).
pub const MICRO_FREQUENCY_UP_THRESHOLD: u32 = 95;
/// Lowest up_threshold store_up_threshold accepts (MIN_FREQUENCY_UP_THRESHOLD).
pub const MIN_FREQUENCY_UP_THRESHOLD: u32 = 11;
/// Highest up_threshold accepted (MAX_FREQUENCY_UP_THRESHOLD).
pub const MAX_FREQUENCY_UP_THRESHOLD: u32 = 100;
/// sampling_down_factor default (DEF_SAMPLING_DOWN_FACTOR).
pub const DEF_SAMPLING_DOWN_FACTOR: u32 = 1;
/// Highest sampling_down_factor accepted (MAX_SAMPLING_DOWN_FACTOR).
pub const MAX_SAMPLING_DOWN_FACTOR: u32 = 100_000;
/// store_powersave_bias clamps larger values to this (per mille).
pub const MAX_POWERSAVE_BIAS: u32 = 1000;

// ---- tunables (sysfs names and units, /sys/devices/system/cpu/cpufreq/ondemand/) ----
// sampling_rate, ignore_nice_load and copy_prev_load are shared with
// conservative and declared in [`super::dbs`].

/// up_threshold, % (store_up_threshold): default 95, as with NOHZ idle
/// micro-accounting (80 without); outside 11..=100 rejected.
pub const UP_THRESHOLD: ParamSpec<BuildCtx> = ParamSpec {
    name: "up_threshold",
    unit: "%",
    default: ParamDefault::Uint(MICRO_FREQUENCY_UP_THRESHOLD as u64),
    range: Range::Uint { min: MIN_FREQUENCY_UP_THRESHOLD as u64, max: MAX_FREQUENCY_UP_THRESHOLD as u64 },
    help: "load (%) above which the top frequency is used; 11 to 100",
};

/// sampling_down_factor (store_sampling_down_factor): outside 1..=100000
/// rejected.
pub const SAMPLING_DOWN_FACTOR: ParamSpec<BuildCtx> = ParamSpec {
    name: "sampling_down_factor",
    unit: "",
    default: ParamDefault::Uint(DEF_SAMPLING_DOWN_FACTOR as u64),
    range: Range::Uint { min: 1, max: MAX_SAMPLING_DOWN_FACTOR as u64 },
    help: "sampling period multiplier while at the top frequency; 1 to 100000",
};

/// powersave_bias, per mille (store_powersave_bias clamps to 1000).
pub const POWERSAVE_BIAS: ParamSpec<BuildCtx> = ParamSpec {
    name: "powersave_bias",
    unit: "‰",
    default: ParamDefault::Uint(0),
    range: Range::Clamp { max: MAX_POWERSAVE_BIAS as u64 },
    help: "per-mille frequency reduction, by alternating two OPPs; values above 1000 are clamped",
};

/// io_is_busy, 0 or 1 (store_io_is_busy stores any non-zero value as 1):
/// default from should_io_be_busy.
pub const IO_IS_BUSY: ParamSpec<BuildCtx> = ParamSpec {
    name: "io_is_busy",
    unit: "",
    default: ParamDefault::Derived { doc: "1 on the Intel drivers, else 0", value: |c| u64::from(should_io_be_busy(&c.platform)) },
    range: Range::Clamp { max: 1 },
    help: "count iowait time as busy; any non-zero value means 1",
};

const OWNER: &str = "cpufreq governor ondemand";

pub const INFO: GovernorInfo = GovernorInfo {
    name: "ondemand",
    description: "load above up_threshold: top frequency; else proportional to the busiest CPU's load",
    models: "Linux v6.8 drivers/cpufreq/cpufreq_ondemand.c + cpufreq_governor.c",
    params: &[
        dbs::SAMPLING_RATE,
        UP_THRESHOLD,
        SAMPLING_DOWN_FACTOR,
        POWERSAVE_BIAS,
        IO_IS_BUSY,
        dbs::IGNORE_NICE_LOAD,
        dbs::COPY_PREV_LOAD,
    ],
    eras: &[
        dbs::DBS_ERAS[0],
        EraId::OndemandFormula,
        dbs::DBS_ERAS[1],
        dbs::DBS_ERAS[2],
        dbs::DBS_ERAS[3],
        dbs::DBS_ERAS[4],
        dbs::DBS_ERAS[5],
    ],
    patches: &[dbs::COPY_PREV_LOAD_PATCH],
    build,
};

/// ondemand's resolved tunables, in sysfs units; each field's default, range
/// and handling of bad input are in its [`ParamSpec`] above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OndemandTunables {
    /// sampling_rate, µs ([`dbs::SAMPLING_RATE`]).
    pub sampling_rate: u32,
    /// up_threshold, % ([`UP_THRESHOLD`]).
    pub up_threshold: u32,
    /// sampling_down_factor ([`SAMPLING_DOWN_FACTOR`]).
    pub sampling_down_factor: u32,
    /// ignore_nice_load, 0 or 1 ([`dbs::IGNORE_NICE_LOAD`]).
    pub ignore_nice_load: u32,
    /// powersave_bias, per mille ([`POWERSAVE_BIAS`]).
    pub powersave_bias: u32,
    /// io_is_busy, 0 or 1 ([`IO_IS_BUSY`]).
    pub io_is_busy: u32,
    /// govlab switch ([`dbs::COPY_PREV_LOAD`]); default by version.
    pub copy_prev_load: bool,
}

/// The eras of ondemand a run's kernel selects (see [`KernelConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OndemandEra {
    /// v3.17+: `cpuinfo.min + load x range / 100`, RELATION_C; false:
    /// `load x cpuinfo.max / 100` raised to policy->min, RELATION_L.
    pub target_from_min: bool,
    /// v4.18+: the long-idle test reads idle time, not wall time.
    pub long_idle_by_idle_time: bool,
}

impl OndemandEra {
    #[must_use]
    pub fn of(kernel: &KernelConfig) -> Self {
        OndemandEra {
            target_from_min: kernel.ondemand_target_from_min(),
            long_idle_by_idle_time: kernel.dbs_long_idle_by_idle_time(),
        }
    }
}

impl OndemandTunables {
    /// The defaults a v6.8 kernel would pick on this machine.
    pub fn for_platform(platform: &Platform) -> Self {
        Self::read(Params::new(OWNER, &Spec::new("ondemand")), &BuildCtx::of(platform.clone()))
            .expect("the defaults are in range")
    }

    /// Every tunable from `p`, each checked as its spec says; then unknown
    /// keys are rejected.
    fn read(mut p: Params<'_>, ctx: &BuildCtx) -> Result<Self> {
        let p_ = &mut p;
        let t = OndemandTunables {
            sampling_rate: dbs::sampling_rate(p_, ctx, dbs::DbsKind::Ondemand)?,
            up_threshold: dbs::uint32(p_, &UP_THRESHOLD, ctx)?,
            sampling_down_factor: dbs::uint32(p_, &SAMPLING_DOWN_FACTOR, ctx)?,
            powersave_bias: dbs::uint32(p_, &POWERSAVE_BIAS, ctx)?,
            io_is_busy: dbs::uint32(p_, &IO_IS_BUSY, ctx)?,
            ignore_nice_load: dbs::uint32(p_, &dbs::IGNORE_NICE_LOAD, ctx)?,
            copy_prev_load: dbs::copy_prev_load(p_, ctx)?,
        };
        p.finish()?;
        Ok(t)
    }
}

/// should_io_be_busy: Intel family 6 model ≥ 15. govlab platforms have no
/// vendor/model, so the Intel drivers stand for it (see the module doc).
fn should_io_be_busy(platform: &Platform) -> bool {
    matches!(platform.driver, Driver::IntelPstate { .. } | Driver::AcpiCpufreq)
}

/// Which half of a powersave_bias period the next sample is
/// (OD_NORMAL_SAMPLE / OD_SUB_SAMPLE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OdSampleType {
    Normal,
    Sub,
}

/// ondemand's per-policy state (struct od_policy_dbs_info).
#[derive(Debug, Clone)]
pub struct OdPolicyDbsInfo {
    /// The lower frequency of a powersave_bias split, kHz; 0 = no split.
    freq_lo_khz: u32,
    /// Time at freq_lo in a split period, µs.
    freq_lo_delay_us: u64,
    /// Time at freq_hi in a split period, µs.
    freq_hi_delay_us: u64,
    sample_type: OdSampleType,
}

/// The decision half of ondemand (the dbs skeleton does the rest).
pub struct Ondemand {
    tunables: OndemandTunables,
    era: OndemandEra,
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let tunables = OndemandTunables::read(Params::new(OWNER, spec), ctx)?;
    Ok(Box::new(DbsGovernorCore::new(Ondemand { tunables, era: OndemandEra::of(&ctx.kernel) }, ctx.has(EraId::DbsUtilHook))))
}

impl Ondemand {
    /// generic_powersave_bias_target (step 4): the frequency to run now;
    /// records the split in `info`.
    fn powersave_bias_target(
        &self,
        info: &mut OdPolicyDbsInfo,
        policy: &Policy<'_>,
        freq_next: u32,
        relation: Relation,
    ) -> u32 {
        let freq_req = u64::from(dbs::frequency_table_target(policy, freq_next, relation));
        let freq_reduc = freq_req * u64::from(self.tunables.powersave_bias) / 1000;
        let freq_avg = (freq_req - freq_reduc) as u32;
        let freq_lo = dbs::frequency_table_target(policy, freq_avg, Relation::H);
        let freq_hi = dbs::frequency_table_target(policy, freq_avg, Relation::L);
        if freq_hi == freq_lo {
            info.freq_lo_khz = 0;
            info.freq_lo_delay_us = 0;
            return freq_lo;
        }
        let rate_us = u64::from(self.tunables.sampling_rate);
        let span = u64::from(freq_hi - freq_lo);
        // Time at freq_hi so the period averages freq_avg (rounded).
        let delay_hi_us = (u64::from(freq_avg.saturating_sub(freq_lo)) * rate_us + span / 2) / span;
        info.freq_hi_delay_us = delay_hi_us;
        info.freq_lo_khz = freq_lo;
        info.freq_lo_delay_us = rate_us.saturating_sub(delay_hi_us);
        freq_hi
    }

    /// dbs_freq_increase: go to `freq` (policy->max), through the bias if set.
    fn dbs_freq_increase(&self, info: &mut OdPolicyDbsInfo, policy: &mut Policy<'_>, freq: u32) {
        let freq = if self.tunables.powersave_bias != 0 {
            self.powersave_bias_target(info, policy, freq, Relation::H)
        } else if policy.cur_khz == policy.max_khz {
            return;
        } else {
            freq
        };
        let relation = if self.tunables.powersave_bias != 0 {
            Relation::L
        } else {
            Relation::H
        };
        policy.set_target(freq, relation);
    }

    /// od_update: steps 1–4 of the module doc.
    fn od_update(&self, dbs: &mut PolicyDbsInfo, info: &mut OdPolicyDbsInfo, policy: &mut Policy<'_>, now_ns: u64) {
        let load = dbs::dbs_update(&self.dbs_data(), dbs, policy, now_ns);
        info.freq_lo_khz = 0;

        if load > self.tunables.up_threshold {
            // Steps 1–2: saturated; stretch the samples if arriving at the top.
            if policy.cur_khz < policy.max_khz {
                dbs.rate_mult = self.tunables.sampling_down_factor;
            }
            self.dbs_freq_increase(info, policy, policy.max_khz);
        } else {
            // Step 3: proportional to the load over the hardware range
            // (v3.17+), or to the load times the top (before v3.17).
            let (min_f, max_f) = (u64::from(policy.cpuinfo_min_khz), u64::from(policy.cpuinfo_max_khz));
            let (mut freq_next, relation) = if self.era.target_from_min {
                ((min_f + u64::from(load) * max_f.saturating_sub(min_f) / 100) as u32, Relation::C)
            } else {
                // v3.11-v3.16 od_check_cpu(): raised to policy->min.
                ((u64::from(load) * max_f / 100) as u32, Relation::L)
            };
            if !self.era.target_from_min {
                freq_next = freq_next.max(policy.min_khz);
            }
            dbs.rate_mult = 1;
            if self.tunables.powersave_bias != 0 {
                freq_next = self.powersave_bias_target(info, policy, freq_next, Relation::L);
            }
            policy.set_target(freq_next, relation);
        }
    }
}

impl DbsGovernor for Ondemand {
    type PolicyInfo = OdPolicyDbsInfo;

    fn name(&self) -> &'static str {
        "ondemand"
    }

    fn dbs_data(&self) -> DbsData {
        DbsData {
            sampling_rate_us: self.tunables.sampling_rate,
            io_is_busy: self.tunables.io_is_busy != 0,
            ignore_nice_load: self.tunables.ignore_nice_load != 0,
            copy_prev_load: self.tunables.copy_prev_load,
            long_idle_by_idle_time: self.era.long_idle_by_idle_time,
        }
    }

    /// od_start (with ondemand_powersave_bias_init).
    fn start(&self, _policy: &Policy<'_>) -> OdPolicyDbsInfo {
        OdPolicyDbsInfo {
            freq_lo_khz: 0,
            freq_lo_delay_us: 0,
            freq_hi_delay_us: 0,
            sample_type: OdSampleType::Normal,
        }
    }

    /// od_dbs_update: the second half of a split period, or a full sample.
    fn gov_dbs_update(
        &self,
        dbs: &mut PolicyDbsInfo,
        info: &mut OdPolicyDbsInfo,
        policy: &mut Policy<'_>,
        now_ns: u64,
    ) -> u64 {
        let sample_type = info.sample_type;
        info.sample_type = OdSampleType::Normal;
        // A sub-sample makes no sense after a limits change reset the delay.
        if sample_type == OdSampleType::Sub && dbs.sample_delay_ns > 0 {
            policy.set_target(info.freq_lo_khz, Relation::H);
            return info.freq_lo_delay_us;
        }

        self.od_update(dbs, info, policy, now_ns);

        if info.freq_lo_khz != 0 {
            info.sample_type = OdSampleType::Sub;
            return info.freq_hi_delay_us;
        }
        u64::from(self.tunables.sampling_rate) * u64::from(dbs.rate_mult)
    }

    fn tunables(&self) -> Vec<(String, String)> {
        let t = &self.tunables;
        vec![
            dbs::SAMPLING_RATE.show(t.sampling_rate),
            UP_THRESHOLD.show(t.up_threshold),
            SAMPLING_DOWN_FACTOR.show(t.sampling_down_factor),
            dbs::IGNORE_NICE_LOAD.show(t.ignore_nice_load),
            POWERSAVE_BIAS.show(t.powersave_bias),
            IO_IS_BUSY.show(t.io_is_busy),
            dbs::COPY_PREV_LOAD.show_flag(t.copy_prev_load),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::dbs::testutil::Harness;
    use super::*;
    use crate::platform::load_named;

    const MS: u64 = 1_000_000;
    /// Table 0.8–3.2 GHz; cpuinfo min/max are its ends.
    const MHZ: [u32; 4] = [800, 1600, 2400, 3200];

    fn skylake() -> Platform {
        load_named(&Spec::new("skylake-e3-1240v5")).unwrap()
    }

    fn ondemand(settings: &str) -> Box<dyn CpufreqGovernor> {
        build(
            &Spec::parse(&format!("ondemand:{settings}"), "test").unwrap(),
            &crate::kernel::BuildCtx::of(skylake().clone()),
        )
        .unwrap()
    }

    fn tunable(g: &dyn CpufreqGovernor, key: &str) -> String {
        g.tunables().into_iter().find(|(k, _)| k == key).unwrap().1
    }

    /// Busy for one 10 ms period from boot, then a long idle (100 ms window,
    /// 0.5 ms busy), then another. Returns the frequency after each sample.
    fn busy_then_two_idle_windows(copy_prev_load: &str) -> Vec<u32> {
        let mut g = ondemand(&format!("sampling_rate=10000,copy_prev_load={copy_prev_load}"));
        let mut h = Harness::new(&MHZ, 1);
        h.cur_khz = 1_600_000;
        h.call(|p| g.start(p));
        let mut freqs = Vec::new();
        h.call(|p| g.timer(p, 10 * MS));
        freqs.push(h.cur_khz);
        h.sched.idle_ns[0] = 99 * MS + MS / 2;
        h.call(|p| g.timer(p, 110 * MS));
        freqs.push(h.cur_khz);
        h.sched.idle_ns[0] = 2 * (99 * MS + MS / 2);
        h.call(|p| g.timer(p, 210 * MS));
        freqs.push(h.cur_khz);
        freqs
    }

    /// Without the 2014 rule the first sample after a long idle sees ~0 %
    /// and drops to the minimum.
    #[test]
    fn without_copy_prev_load_first_sample_after_idle_drops_to_min() {
        assert_eq!(busy_then_two_idle_windows("off"), vec![3_200_000, 800_000, 800_000]);
    }

    /// With it the previous 100 % is reused once (frequency stays at the
    /// top), and a second idle window in a row is measured and drops it.
    #[test]
    fn copy_prev_load_reuses_previous_load_once() {
        assert_eq!(busy_then_two_idle_windows("on"), vec![3_200_000, 3_200_000, 800_000]);
    }

    /// Load above up_threshold goes to max with RELATION_H and stretches the
    /// next delay by sampling_down_factor; a lower load goes back to
    /// cpuinfo.min + load × range (closest OPP) and to the plain period.
    #[test]
    fn above_threshold_goes_to_max_and_sampling_down_factor_stretches_delay() {
        let mut g = ondemand("sampling_rate=10000,sampling_down_factor=4,up_threshold=80");
        let mut h = Harness::new(&MHZ, 1);
        h.cur_khz = 800_000;
        // v6.8 samples from the scheduler's hook (v4.6+): no timer.
        let out = h.call(|p| g.start(p));
        assert_eq!(out.timer, None);
        assert!(g.uses_util_hook());
        // A call before the first sampling_rate has passed: nothing.
        h.sched.idle_ns[0] = MS;
        assert_eq!(h.call(|p| g.update_util(p, 0, 9 * MS, 0)).target, None);
        // 10 ms, 1 ms idle: 90 % > 80.
        let out = h.call(|p| g.update_util(p, 0, 10 * MS, 0));
        assert_eq!(out.target, Some((3_200_000, Relation::H)));
        // The next sample waits 4 × 10 ms.
        h.sched.idle_ns[0] = 16 * MS;
        assert_eq!(h.call(|p| g.update_util(p, 0, 49 * MS, 0)).target, None);
        // 40 ms window, 16 ms idle: 60 % → 0.8 + 0.6 × 2.4 = 2.24 GHz → 2.4 GHz.
        h.sched.idle_ns[0] = 17 * MS;
        let out = h.call(|p| g.update_util(p, 0, 50 * MS, 0));
        assert_eq!(out.target, Some((2_240_000, Relation::C)));
        assert_eq!(h.cur_khz, 2_400_000);
        // Back to the plain period: nothing at 59 ms, a sample at 60 ms.
        assert_eq!(h.call(|p| g.update_util(p, 0, 59 * MS, 0)).target, None);
        // Load exactly at the threshold is not above it.
        h.sched.idle_ns[0] = 19 * MS;
        let out = h.call(|p| g.update_util(p, 0, 60 * MS, 0));
        assert_eq!(out.target, Some((2_720_000, Relation::C)));
    }

    /// Before v4.6 a deferrable timer samples: armed at start for
    /// sampling_rate, re-armed after each sample for the next delay.
    #[test]
    fn before_4_6_a_deferrable_timer_samples() {
        let k = KernelConfig::from_spec(&Spec::parse("3.15", "kernel").unwrap()).unwrap();
        let mut g = build(&Spec::parse("ondemand:sampling_rate=10000,sampling_down_factor=4,up_threshold=80", "test").unwrap(), &BuildCtx::new(skylake(), k)).unwrap();
        assert!(!g.uses_util_hook());
        let mut h = Harness::new(&MHZ, 1);
        h.cur_khz = 800_000;
        let out = h.call(|p| g.start(p));
        assert_eq!(out.timer, Some((10 * MS, true)));
        h.sched.idle_ns[0] = MS;
        let out = h.call(|p| g.timer(p, 10 * MS));
        assert_eq!(out.target, Some((3_200_000, Relation::H)));
        assert_eq!(out.timer, Some((40 * MS, true)));
    }

    /// Already at the top: no request, and rate_mult is left alone.
    #[test]
    fn at_max_above_threshold_requests_nothing() {
        let mut g = ondemand("sampling_rate=10000,sampling_down_factor=3");
        let mut h = Harness::new(&MHZ, 1);
        h.call(|p| g.start(p));
        let out = h.call(|p| g.timer(p, 10 * MS));
        assert_eq!(out.target, None);
        assert_eq!(out.timer, Some((10 * MS, true)));
    }

    /// powersave_bias 100 ‰ at max: f_avg = 2.88 GHz between 2.4 and
    /// 3.2 GHz: 3.2 GHz for 60 % of the period, then 2.4 GHz for 40 %.
    #[test]
    fn powersave_bias_alternates_two_opps_within_a_period() {
        let mut g = ondemand("sampling_rate=10000,powersave_bias=100");
        let mut h = Harness::new(&MHZ, 1);
        h.cur_khz = 800_000;
        h.call(|p| g.start(p));
        let out = h.call(|p| g.timer(p, 10 * MS));
        assert_eq!(out.target, Some((3_200_000, Relation::L)));
        assert_eq!(out.timer, Some((6 * MS, true)));
        let out = h.call(|p| g.timer(p, 16 * MS));
        assert_eq!(out.target, Some((2_400_000, Relation::H)));
        assert_eq!(out.timer, Some((4 * MS, true)));
        // The next normal sample measures the whole 10 ms (busy): split again.
        let out = h.call(|p| g.timer(p, 20 * MS));
        assert_eq!(out.target, Some((3_200_000, Relation::L)));
    }

    fn ondemand_on(kernel: &str, settings: &str) -> Box<dyn CpufreqGovernor> {
        let k = KernelConfig::from_spec(&Spec::new(kernel)).unwrap();
        build(&Spec::parse(&format!("ondemand:{settings}"), "test").unwrap(), &crate::kernel::BuildCtx::new(skylake(), k.clone())).unwrap()
    }

    /// The target from a 60 % and a 20 % load on either side of v3.17:
    /// 3.15 asks for load x max / 100 with RELATION_L (raised to the
    /// minimum), 4.8 for min + load x range / 100 with RELATION_C.
    #[test]
    fn formula_and_relation_on_either_side_of_3_17() {
        let targets = |kernel: &str| {
            let mut g = ondemand_on(kernel, "sampling_rate=10000");
            let mut h = Harness::new(&MHZ, 1);
            h.cur_khz = 800_000;
            h.call(|p| g.start(p));
            // 10 ms, 4 ms idle: 60 %.
            h.sched.idle_ns[0] = 4 * MS;
            let a = h.call(|p| g.timer(p, 10 * MS)).target;
            let at_60 = h.cur_khz;
            // 10 ms, 8 ms idle: 20 %.
            h.sched.idle_ns[0] = 12 * MS;
            let b = h.call(|p| g.timer(p, 20 * MS)).target;
            (a, at_60, b, h.cur_khz)
        };
        // 3.15: 0.6 x 3.2 = 1.92 GHz, lowest at or above: 2.4 GHz; 20 %:
        // 0.64 GHz raised to the 0.8 GHz minimum.
        assert_eq!(targets("3.15"), (Some((1_920_000, Relation::L)), 2_400_000, Some((800_000, Relation::L)), 800_000));
        // 4.8: 0.8 + 0.6 x 2.4 = 2.24 GHz, closest: 2.4 GHz; 20 %: 1.28 GHz, closest 1.6 GHz.
        assert_eq!(targets("4.8"), (Some((2_240_000, Relation::C)), 2_400_000, Some((1_280_000, Relation::C)), 1_600_000));
    }

    /// copy_prev_load follows the version (off in 3.15, on from 3.16), and
    /// given on 3.15 it is the patch on top.
    #[test]
    fn copy_prev_load_default_follows_the_version() {
        assert_eq!(tunable(ondemand_on("3.15", "").as_ref(), "copy_prev_load"), "off");
        assert_eq!(tunable(ondemand_on("4.8", "").as_ref(), "copy_prev_load"), "on");
        assert_eq!(tunable(ondemand_on("3.15", "copy_prev_load=on").as_ref(), "copy_prev_load"), "on");
        // 3.15 on Skylake (transition latency 20 µs): min_sampling_rate
        // max(10 ms, 20 x 20 µs) = 10 ms, default max(10 ms, 1000 x 20 µs)
        // = 20 ms; 5 ms is raised to the floor.
        assert_eq!(tunable(ondemand_on("3.15", "").as_ref(), "sampling_rate"), "20000");
        assert_eq!(tunable(ondemand_on("3.15", "sampling_rate=5000").as_ref(), "sampling_rate"), "10000");
    }

    /// Stores: reject what the kernel rejects, naming key and range; clamp
    /// what it clamps.
    #[test]
    fn tunable_validation_follows_the_sysfs_stores() {
        let sky = skylake();
        let err = |s: &str| build(&Spec::parse(s, "test").unwrap(), &crate::kernel::BuildCtx::of(sky.clone())).err().unwrap().to_string();
        let e = err("ondemand:up_threshold=10");
        assert!(e.contains("up_threshold") && e.contains("from 11 to 100"), "{e}");
        let e = err("ondemand:up_threshold=101");
        assert!(e.contains("up_threshold") && e.contains("from 11 to 100"), "{e}");
        let e = err("ondemand:sampling_down_factor=0");
        assert!(
            e.contains("sampling_down_factor") && e.contains("from 1 to 100000"),
            "{e}"
        );
        // Two ticks at HZ=250 is 8000 µs.
        let e = err("ondemand:sampling_rate=7999");
        assert!(e.contains("sampling_rate") && e.contains("from 8000"), "{e}");
        let e = err("ondemand:up_treshold=90");
        assert!(e.contains("unknown key 'up_treshold'"), "{e}");

        let g = ondemand("powersave_bias=5000,io_is_busy=7,ignore_nice_load=3");
        assert_eq!(tunable(g.as_ref(), "powersave_bias"), "1000");
        assert_eq!(tunable(g.as_ref(), "io_is_busy"), "1");
        assert_eq!(tunable(g.as_ref(), "ignore_nice_load"), "1");
    }

    /// Machine defaults: 95, 8000 µs on Skylake/HZ=250 (HWP: 5 ms delay <
    /// 2 ticks), io_is_busy on the Intel driver.
    #[test]
    fn defaults_derive_from_the_platform() {
        let g = ondemand("");
        assert_eq!(tunable(g.as_ref(), "up_threshold"), "95");
        assert_eq!(tunable(g.as_ref(), "sampling_rate"), "8000");
        assert_eq!(tunable(g.as_ref(), "io_is_busy"), "1");
        assert_eq!(tunable(g.as_ref(), "copy_prev_load"), "on");
        let mut other = skylake();
        other.driver = Driver::CpufreqDt;
        let t = OndemandTunables::for_platform(&other);
        assert_eq!(t.io_is_busy, 0);
        assert_eq!(t.sampling_rate, 10_000); // 1000 × 20 µs, capped at 10 ms
    }
}

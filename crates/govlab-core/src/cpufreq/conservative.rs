//! `conservative`: like ondemand it samples the busiest CPU's load, but it
//! moves the frequency one step at a time instead of jumping.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/cpufreq_conservative.c, on
//! the shared sampling code of cpufreq_governor.c ([`super::dbs`]): the
//! decision of cs_dbs_update(), the defaults of cs_init() and the checks of
//! the store_*() functions.
//!
//! Left out: the pre-v4.6 form with its own timers and the transition
//! notifier that reset the request (replaced by the out-of-range check of
//! step 1), and the pre-v4.8 behaviour without the idle-period catch-up
//! (~v4.8, "Decrease frequency faster for deferred updates"). conservative
//! never had `io_is_busy`: iowait time is idle time.
//!
//! # The idea
//!
//! conservative keeps its own running request (`requested_freq`, starting
//! at the frequency it found) and nudges it by `freq_step` percent of
//! policy->max per sample, so the frequency ramps instead of jumping. At
//! each sample, with the policy load from [`super::dbs::dbs_update`]:
//!
//! 1. `freq_step` 0 means "never change" (the documentation says 0 means
//!    5 %, the code returns). A request outside the current limits (they
//!    changed) restarts from policy->cur.
//! 2. step = freq_step × policy->max / 100 (5 kHz if that rounds to 0).
//! 3. Catch-up: if every CPU slept through more than two periods, the
//!    samples it skipped meanwhile would each have stepped down, so take
//!    `idle_periods` steps off at once (not below policy->min).
//! 4. Load above `up_threshold`: reset the down counter, add one step (up
//!    to policy->max) and ask for it with RELATION_H; nothing if the request
//!    is already policy->max.
//! 5. Otherwise count the sample; only every `sampling_down_factor`-th one
//!    may go down. Then, if the load is below `down_threshold`, take one
//!    step off (policy->min if the step is larger than the request) and ask
//!    with RELATION_L; nothing if already at policy->min.
//!
//! The next sample is always one `sampling_rate` later.

use super::dbs::{self, DbsData, DbsGovernor, DbsGovernorCore, PolicyDbsInfo};
use super::{CpufreqGovernor, GovernorInfo, Policy, Relation};
use crate::kernel::{BuildCtx, EraId};
use crate::error::{Error, Result};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec, UINT_MAX};
use crate::platform::Platform;

/// up_threshold default (DEF_FREQUENCY_UP_THRESHOLD).
pub const DEF_FREQUENCY_UP_THRESHOLD: u32 = 80;
/// down_threshold default (DEF_FREQUENCY_DOWN_THRESHOLD).
pub const DEF_FREQUENCY_DOWN_THRESHOLD: u32 = 20;
/// freq_step default, % of policy->max; also the step in kHz when
/// freq_step × max / 100 rounds to 0 (DEF_FREQUENCY_STEP).
pub const DEF_FREQUENCY_STEP: u32 = 5;
/// sampling_down_factor default (DEF_SAMPLING_DOWN_FACTOR).
pub const DEF_SAMPLING_DOWN_FACTOR: u32 = 1;
/// Highest sampling_down_factor accepted (MAX_SAMPLING_DOWN_FACTOR).
pub const MAX_SAMPLING_DOWN_FACTOR: u32 = 10;
/// store_freq_step clamps larger values to 100 %.
pub const MAX_FREQUENCY_STEP: u32 = 100;

// ---- tunables (sysfs names and units, /sys/devices/system/cpu/cpufreq/conservative/) ----
// sampling_rate, ignore_nice_load and copy_prev_load are shared with
// ondemand and declared in [`super::dbs`].

/// freq_step, % of policy->max (store_freq_step clamps to 100); 0 freezes
/// the frequency.
pub const FREQ_STEP: ParamSpec<BuildCtx> = ParamSpec {
    name: "freq_step",
    unit: "%",
    default: ParamDefault::Uint(DEF_FREQUENCY_STEP as u64),
    range: Range::Clamp { max: MAX_FREQUENCY_STEP as u64 },
    help: "step in % of policy max; 0 = never change; values above 100 are clamped",
};

/// up_threshold, %. Read as the store reads it (any unsigned int); the pair
/// is then checked by [`check_thresholds`] (store_up_threshold: in
/// down_threshold+1..=100, else rejected).
pub const UP_THRESHOLD: ParamSpec<BuildCtx> = ParamSpec {
    name: "up_threshold",
    unit: "%",
    default: ParamDefault::Uint(DEF_FREQUENCY_UP_THRESHOLD as u64),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "load (%) above which to step up; down_threshold+1 to 100",
};

/// down_threshold, % (store_down_threshold: in 1..=up_threshold-1, else
/// rejected; checked with the pair by [`check_thresholds`]).
pub const DOWN_THRESHOLD: ParamSpec<BuildCtx> = ParamSpec {
    name: "down_threshold",
    unit: "%",
    default: ParamDefault::Uint(DEF_FREQUENCY_DOWN_THRESHOLD as u64),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "load (%) below which to step down; 1 to up_threshold-1",
};

/// sampling_down_factor (store_sampling_down_factor): outside 1..=10
/// rejected.
pub const SAMPLING_DOWN_FACTOR: ParamSpec<BuildCtx> = ParamSpec {
    name: "sampling_down_factor",
    unit: "",
    default: ParamDefault::Uint(DEF_SAMPLING_DOWN_FACTOR as u64),
    range: Range::Uint { min: 1, max: MAX_SAMPLING_DOWN_FACTOR as u64 },
    help: "step down at most every this many samples; 1 to 10",
};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "conservative",
    description: "step the frequency up or down by freq_step % of max per sample, by load thresholds",
    models: "Linux v6.8 drivers/cpufreq/cpufreq_conservative.c + cpufreq_governor.c",
    params: &[
        dbs::SAMPLING_RATE,
        FREQ_STEP,
        UP_THRESHOLD,
        DOWN_THRESHOLD,
        SAMPLING_DOWN_FACTOR,
        dbs::IGNORE_NICE_LOAD,
        dbs::COPY_PREV_LOAD,
    ],
    eras: &dbs::DBS_ERAS,
    patches: &[dbs::COPY_PREV_LOAD_PATCH],
    build,
};

/// conservative's resolved tunables, in sysfs units; each field's default,
/// range and handling of bad input are in its [`ParamSpec`] above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConservativeTunables {
    /// sampling_rate, µs ([`dbs::SAMPLING_RATE`]).
    pub sampling_rate: u32,
    /// freq_step, % of policy->max ([`FREQ_STEP`]).
    pub freq_step: u32,
    /// up_threshold, % ([`UP_THRESHOLD`]).
    pub up_threshold: u32,
    /// down_threshold, % ([`DOWN_THRESHOLD`]).
    pub down_threshold: u32,
    /// sampling_down_factor ([`SAMPLING_DOWN_FACTOR`]).
    pub sampling_down_factor: u32,
    /// ignore_nice_load, 0 or 1 ([`dbs::IGNORE_NICE_LOAD`]).
    pub ignore_nice_load: u32,
    /// govlab switch ([`dbs::COPY_PREV_LOAD`]).
    pub copy_prev_load: bool,
}

impl ConservativeTunables {
    /// The defaults a v6.8 kernel would pick on this machine.
    pub fn for_platform(platform: &Platform) -> Self {
        Self::read(Params::new(OWNER, &Spec::new("conservative")), &BuildCtx::of(platform.clone())).expect("the defaults are in range")
    }

    /// Every tunable from `p`, each checked as its spec says; then unknown
    /// keys are rejected and the thresholds checked as a pair.
    fn read(mut p: Params<'_>, ctx: &BuildCtx) -> Result<Self> {
        let sampling_rate = dbs::sampling_rate(&mut p, ctx, dbs::DbsKind::Conservative)?;
        let freq_step = dbs::uint32(&mut p, &FREQ_STEP, ctx)?;
        let up_threshold = p.uint(&UP_THRESHOLD, ctx)?;
        let down_threshold = p.uint(&DOWN_THRESHOLD, ctx)?;
        let sampling_down_factor = dbs::uint32(&mut p, &SAMPLING_DOWN_FACTOR, ctx)?;
        let ignore_nice_load = dbs::uint32(&mut p, &dbs::IGNORE_NICE_LOAD, ctx)?;
        let copy_prev_load = dbs::copy_prev_load(&mut p, ctx)?;
        let down_given = p.given(DOWN_THRESHOLD.name);
        p.finish()?;
        let (up_threshold, down_threshold) = check_thresholds(up_threshold, down_threshold, down_given)?;
        Ok(ConservativeTunables {
            sampling_rate,
            freq_step,
            up_threshold,
            down_threshold,
            sampling_down_factor,
            ignore_nice_load,
            copy_prev_load,
        })
    }
}

/// conservative's per-policy state (struct cs_policy_dbs_info).
#[derive(Debug, Clone)]
pub struct CsPolicyDbsInfo {
    /// Samples since the last step down or any step up.
    down_skip: u32,
    /// The governor's own running request, kHz.
    requested_freq_khz: u32,
}

/// The decision half of conservative (the dbs skeleton does the rest).
pub struct Conservative {
    tunables: ConservativeTunables,
    /// v4.18+ (7592019634f8): the long-idle test reads idle time.
    long_idle_by_idle_time: bool,
}

const OWNER: &str = "cpufreq governor conservative";

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let tunables = ConservativeTunables::read(Params::new(OWNER, spec), ctx)?;
    Ok(Box::new(DbsGovernorCore::new(Conservative { tunables, long_idle_by_idle_time: ctx.kernel.dbs_long_idle_by_idle_time() }, ctx.has(EraId::DbsUtilHook))))
}

/// store_up_threshold / store_down_threshold on the final pair: up in
/// down+1..=100, down in 1..=up-1. When they clash, the error names the
/// down threshold if it was given, else the up threshold.
fn check_thresholds(up: u64, down: u64, down_given: bool) -> Result<(u32, u32)> {
    let bad_up = |lo: u64| {
        Error::invalid(
            OWNER,
            "up_threshold",
            up,
            format!("an integer from {lo} to 100 (above down_threshold {down})"),
        )
    };
    let bad_down = |hi: u64| {
        Error::invalid(
            OWNER,
            "down_threshold",
            down,
            format!("an integer from 1 to {hi} (below up_threshold {up})"),
        )
    };
    if !(2..=100).contains(&up) {
        return Err(bad_up(down.clamp(1, 99) + 1));
    }
    if down < 1 {
        return Err(bad_down(up.saturating_sub(1).max(1)));
    }
    if down >= up {
        return Err(if down_given {
            bad_down(up.saturating_sub(1))
        } else {
            bad_up(down + 1)
        });
    }
    Ok((up as u32, down as u32))
}

/// get_freq_step (step 2), kHz.
fn get_freq_step(tunables: &ConservativeTunables, policy: &Policy<'_>) -> u32 {
    let step = (u64::from(tunables.freq_step) * u64::from(policy.max_khz) / 100) as u32;
    if step == 0 {
        DEF_FREQUENCY_STEP
    } else {
        step
    }
}

impl DbsGovernor for Conservative {
    type PolicyInfo = CsPolicyDbsInfo;

    fn name(&self) -> &'static str {
        "conservative"
    }

    fn dbs_data(&self) -> DbsData {
        DbsData {
            sampling_rate_us: self.tunables.sampling_rate,
            io_is_busy: false,
            ignore_nice_load: self.tunables.ignore_nice_load != 0,
            copy_prev_load: self.tunables.copy_prev_load,
            long_idle_by_idle_time: self.long_idle_by_idle_time,
        }
    }

    /// cs_start.
    fn start(&self, policy: &Policy<'_>) -> CsPolicyDbsInfo {
        CsPolicyDbsInfo {
            down_skip: 0,
            requested_freq_khz: policy.cur_khz,
        }
    }

    /// cs_dbs_update: steps 1–5 of the module doc.
    fn gov_dbs_update(
        &self,
        dbs: &mut PolicyDbsInfo,
        info: &mut CsPolicyDbsInfo,
        policy: &mut Policy<'_>,
        now_ns: u64,
    ) -> u64 {
        let t = &self.tunables;
        let load = dbs::dbs_update(&self.dbs_data(), dbs, policy, now_ns);
        let next_delay_us = u64::from(t.sampling_rate);

        // Step 1.
        if t.freq_step == 0 {
            return next_delay_us;
        }
        let mut requested_freq = info.requested_freq_khz;
        if requested_freq > policy.max_khz || requested_freq < policy.min_khz {
            requested_freq = policy.cur_khz;
            info.requested_freq_khz = requested_freq;
        }

        // Step 2.
        let freq_step = get_freq_step(t, policy);

        // Step 3: one step down per period slept through.
        if dbs.idle_periods < u32::MAX {
            let freq_steps = u64::from(dbs.idle_periods) * u64::from(freq_step);
            if u64::from(requested_freq) > u64::from(policy.min_khz) + freq_steps {
                requested_freq -= freq_steps as u32;
            } else {
                requested_freq = policy.min_khz;
            }
            dbs.idle_periods = u32::MAX;
        }

        // Step 4: up.
        if load > t.up_threshold {
            info.down_skip = 0;
            if requested_freq == policy.max_khz {
                return next_delay_us;
            }
            requested_freq = requested_freq.saturating_add(freq_step).min(policy.max_khz);
            policy.set_target(requested_freq, Relation::H);
            info.requested_freq_khz = requested_freq;
            return next_delay_us;
        }

        // Step 5: down, at most every sampling_down_factor samples.
        info.down_skip += 1;
        if info.down_skip < t.sampling_down_factor {
            return next_delay_us;
        }
        info.down_skip = 0;
        if load < t.down_threshold {
            if requested_freq == policy.min_khz {
                return next_delay_us;
            }
            requested_freq = if requested_freq > freq_step {
                requested_freq - freq_step
            } else {
                policy.min_khz
            };
            policy.set_target(requested_freq, Relation::L);
            info.requested_freq_khz = requested_freq;
        }
        next_delay_us
    }

    fn tunables(&self) -> Vec<(String, String)> {
        let t = &self.tunables;
        vec![
            dbs::SAMPLING_RATE.show(t.sampling_rate),
            FREQ_STEP.show(t.freq_step),
            UP_THRESHOLD.show(t.up_threshold),
            DOWN_THRESHOLD.show(t.down_threshold),
            SAMPLING_DOWN_FACTOR.show(t.sampling_down_factor),
            dbs::IGNORE_NICE_LOAD.show(t.ignore_nice_load),
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

    fn skylake() -> Platform {
        load_named(&Spec::new("skylake-e3-1240v5")).unwrap()
    }

    fn conservative(settings: &str) -> Result<Box<dyn CpufreqGovernor>> {
        build(
            &Spec::parse(&format!("conservative:{settings}"), "test").unwrap(),
            &crate::kernel::BuildCtx::of(skylake().clone()),
        )
    }

    /// 0.8–3.2 GHz in 100 MHz steps.
    fn harness() -> Harness {
        let mhz: Vec<u32> = (8..=32).map(|i| i * 100).collect();
        Harness::new(&mhz, 1)
    }

    /// Each sample above up_threshold adds 5 % of max (160 MHz) to the
    /// request; below down_threshold takes it off; in between nothing moves.
    #[test]
    fn steps_by_freq_step_percent_of_max() {
        let mut g = conservative("sampling_rate=10000").unwrap();
        let mut h = harness();
        h.cur_khz = 2_000_000;
        h.call(|p| g.start(p));
        let mut idle_ms = 0;
        let mut now_ms = 0;
        let mut sample = |h: &mut Harness, idle: u64| {
            idle_ms += idle;
            now_ms += 10;
            h.sched.idle_ns[0] = idle_ms * MS;
            h.call(|p| g.timer(p, now_ms * MS)).target
        };
        assert_eq!(sample(&mut h, 0), Some((2_160_000, Relation::H))); // 100 %
        assert_eq!(sample(&mut h, 1), Some((2_320_000, Relation::H))); // 90 %
        assert_eq!(sample(&mut h, 5), None); // 50 %: hold
        assert_eq!(sample(&mut h, 9), Some((2_160_000, Relation::L))); // 10 %
        assert_eq!(sample(&mut h, 9), Some((2_000_000, Relation::L)));
        assert_eq!(sample(&mut h, 2), None); // 80 % is not above 80
    }

    /// sampling_down_factor 3: only every third low sample steps down; an
    /// up step resets the count.
    #[test]
    fn sampling_down_factor_delays_steps_down() {
        let mut g = conservative("sampling_rate=10000,sampling_down_factor=3").unwrap();
        let mut h = harness();
        h.cur_khz = 2_000_000;
        h.call(|p| g.start(p));
        let mut targets = Vec::new();
        for i in 1..=6 {
            h.sched.idle_ns[0] = i * 9 * MS; // 10 % load each time
            targets.push(h.call(|p| g.timer(p, i * 10 * MS)).target);
        }
        let down = |khz| Some((khz, Relation::L));
        assert_eq!(targets, vec![None, None, down(1_840_000), None, None, down(1_680_000)]);
    }

    /// After a 55 ms idle window (5 periods slept through) the request first
    /// loses 5 steps, then the low load takes one more.
    #[test]
    fn idle_periods_catch_up_after_deferred_samples() {
        let mut g = conservative("sampling_rate=10000,copy_prev_load=off").unwrap();
        let mut h = harness();
        h.call(|p| g.start(p)); // starts at 3.2 GHz
        h.sched.idle_ns[0] = 55 * MS;
        let out = h.call(|p| g.timer(p, 55 * MS));
        assert_eq!(out.target, Some((3_200_000 - 6 * 160_000, Relation::L)));
        assert_eq!(out.timer, Some((10 * MS, true)));
    }

    /// Limits changed under the governor: a request above the new max
    /// restarts from policy->cur.
    #[test]
    fn request_outside_limits_restarts_from_cur() {
        let mut g = conservative("sampling_rate=10000").unwrap();
        let mut h = harness();
        h.call(|p| g.start(p)); // request 3.2 GHz
        h.max_khz = 2_000_000;
        h.cur_khz = 2_000_000;
        h.sched.idle_ns[0] = 9 * MS; // 10 %
        let out = h.call(|p| g.timer(p, 10 * MS));
        // Step is 5 % of the new max: 100 MHz, from cur.
        assert_eq!(out.target, Some((1_900_000, Relation::L)));
    }

    /// freq_step 0 freezes the frequency.
    #[test]
    fn zero_freq_step_never_changes() {
        let mut g = conservative("freq_step=0,sampling_rate=10000").unwrap();
        let mut h = harness();
        h.cur_khz = 2_000_000;
        h.call(|p| g.start(p));
        assert_eq!(h.call(|p| g.timer(p, 10 * MS)).target, None);
    }

    /// Thresholds: each within its range and down < up, as the stores check;
    /// the message names the key and the range.
    #[test]
    fn invalid_thresholds_are_rejected() {
        let e = conservative("down_threshold=80").err().unwrap().to_string();
        assert!(e.contains("'down_threshold'") && e.contains("from 1 to 79"), "{e}");
        let e = conservative("up_threshold=20").err().unwrap().to_string();
        assert!(e.contains("'up_threshold'") && e.contains("from 21 to 100"), "{e}");
        let e = conservative("up_threshold=30,down_threshold=30")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("'down_threshold'") && e.contains("from 1 to 29"), "{e}");
        let e = conservative("up_threshold=101").err().unwrap().to_string();
        assert!(e.contains("'up_threshold'") && e.contains("to 100"), "{e}");
        let e = conservative("down_threshold=0").err().unwrap().to_string();
        assert!(e.contains("'down_threshold'"), "{e}");
        let e = conservative("sampling_down_factor=11").err().unwrap().to_string();
        assert!(
            e.contains("'sampling_down_factor'") && e.contains("from 1 to 10"),
            "{e}"
        );
        // Valid pairs, including a narrow one; freq_step clamps.
        assert!(conservative("up_threshold=90,down_threshold=89").is_ok());
        let g = conservative("freq_step=250").unwrap();
        let step = g.tunables().into_iter().find(|(k, _)| k == "freq_step").unwrap().1;
        assert_eq!(step, "100");
    }
}

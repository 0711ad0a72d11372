//! HWP (Intel Speed Shift): the processor picks its P-state itself, inside
//! the limits the OS writes to MSR_HWP_REQUEST.
//!
//! The OS writes a request of four fields per CPU (Intel SDM vol. 3B §14.4;
//! Linux v6.8 arch/x86/include/asm/msr-index.h, HWP_MIN_PERF() to
//! HWP_ENERGY_PERF_PREFERENCE()): `min` and `max` performance levels,
//! `desired` (0 = let the hardware choose) and the energy-performance
//! preference `epp` (0 = performance … 255 = energy). Performance levels are
//! P-state ratios (×100 MHz) on non-hybrid parts; on a hybrid part's P-cores
//! one level is worth less (78.741 MHz on Alder Lake, [`HwpCaps`]). The hardware's own
//! selection algorithm is not documented; this is govlab's black box, and
//! every number in it is assumed:
//!
//! 1. Every [`HWP_EVAL_INTERVAL_NS`] the hardware looks back over the
//!    interval and takes the C0 share of the busiest CPU of the clock
//!    domain, `busy` (0..1).
//! 2. It asks for the level at which that CPU would have been busy a
//!    `setpoint` share of the time: `perf = ceil(perf_now × busy / setpoint)`.
//!    A CPU busy throughout therefore climbs by a factor 1/setpoint per
//!    interval; one idle throughout drops to the lowest level at once; a
//!    steady load settles where it keeps the CPU `setpoint` busy.
//! 3. The setpoint follows EPP linearly, from [`HWP_SETPOINT_PERFORMANCE`] at
//!    EPP 0 (climb ×4 per interval, run at four times the need) to
//!    [`HWP_SETPOINT_POWER`] at EPP 255 (climb about 5 % per interval). The
//!    common firmware default EPP 0x80 gives 0.60. So the ramp speed, and
//!    the level a steady load runs at, depend on EPP, as the HWP dynamic
//!    boost cover letter describes the hardware ("HWP algorithm will take
//!    some time to build utilization and ramp up P-states").
//! 4. A nonzero `desired` replaces the choice.
//! 5. The choice is clamped to the request's [min, max] and to the CPU's
//!    [lowest, highest]. A new request takes effect at once by clamping the
//!    current level into its bounds: a raised minimum (HWP dynamic boost,
//!    passive mode's target) lifts the frequency without waiting for the
//!    next interval.
//!
//! The chosen level goes to the clock as an OPP request; the package's turbo
//! budget (`machine/dvfs.rs`) still caps turbo levels.
//!
//! Left out: the activity window (bits 41:32), package-level requests,
//! HWP's per-logical-CPU requests (govlab keeps one request per clock domain;
//! the governor combines its CPUs' wishes) and HWP_CAPABILITIES' most
//! efficient level (bits 23:16), which nothing here uses and no platform file
//! gives.
//!
//! This file holds the request, the capabilities and the selection rule;
//! the hardware's state during a run and its evaluation timer are in
//! `machine/hwp.rs`.

use crate::platform::{CpuType, INTEL_PSTATE_SCALING_KHZ};
use crate::sim::Time;

/// How often the hardware re-evaluates its choice (assumed: a ~1 ms control
/// loop, the same order as the package power controller's).
pub const HWP_EVAL_INTERVAL_NS: Time = 1_000_000;
/// C0 share the hardware aims for at EPP 0 (assumed).
pub const HWP_SETPOINT_PERFORMANCE: f64 = 0.25;
/// C0 share the hardware aims for at EPP 255 (assumed).
pub const HWP_SETPOINT_POWER: f64 = 0.95;
/// The EPP firmware leaves on most platforms, 0x80 = balance_performance
/// (HWP dynamic boost cover letter, 2018: "HWP defaults to energy
/// performance preference value of 0x80 on majority of platforms").
pub const HWP_EPP_FIRMWARE_DEFAULT: u32 = 0x80;

/// The largest value of a request field: each is 8 bits wide.
pub const HWP_FIELD_MAX: u32 = 255;

/// MSR_HWP_REQUEST, the fields govlab models; levels on the CPU type's
/// scale ([`HwpCaps::khz_per_perf`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwpRequest {
    pub min_perf: u32,
    pub max_perf: u32,
    /// 0: autonomous selection.
    pub desired_perf: u32,
    /// 0 (performance) … 255 (energy).
    pub epp: u32,
}

impl HwpRequest {
    /// A request from fields given as plain integers (a governor written
    /// outside the crate), or which field does not fit its 8 bits.
    pub fn from_fields(min_perf: i64, max_perf: i64, desired_perf: i64, epp: i64) -> Result<Self, String> {
        let field = |name: &str, v: i64| u32::try_from(v).ok().filter(|&v| v <= HWP_FIELD_MAX).ok_or_else(|| field_too_wide(name, v));
        Ok(HwpRequest {
            min_perf: field("min_perf", min_perf)?,
            max_perf: field("max_perf", max_perf)?,
            desired_perf: field("desired_perf", desired_perf)?,
            epp: field("epp", epp)?,
        })
    }
}

pub(crate) fn field_too_wide(name: &str, value: impl std::fmt::Display) -> String {
    format!("{name} {value} is outside 0 to {HWP_FIELD_MAX} (an 8-bit field of MSR_HWP_REQUEST)")
}

/// HWP_CAPABILITIES of a CPU type: the performance levels it offers, and
/// what one level is worth.
///
/// On a non-hybrid part a level is a P-state ratio (100 MHz). On Intel's
/// hybrid parts a P-core's level is worth less (78.741 MHz on Alder Lake,
/// [`HYBRID_SCALING_FACTOR_ADL_KHZ`](crate::platform::HYBRID_SCALING_FACTOR_ADL_KHZ)):
/// its levels are the smallest whose value reaches each frequency, and
/// intel_pstate reads them back to frequencies rounded down to a ratio
/// (Linux v6.8 drivers/cpufreq/intel_pstate.c,
/// `intel_pstate_hybrid_hwp_adjust()`: `turbo_freq` and `max_freq` are
/// `rounddown(level × scaling, perf_ctl_scaling)`; the levels of a part
/// whose HWP_CAPABILITIES no published dump gives are taken so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwpCaps {
    /// The lowest level (bits 31:24).
    pub lowest_perf: u32,
    /// The guaranteed level, P1, the highest without turbo (bits 15:8).
    pub guaranteed_perf: u32,
    /// The highest level, turbo included (bits 7:0).
    pub highest_perf: u32,
    /// kHz per level (intel_pstate's `cpu->pstate.scaling`).
    pub khz_per_perf: u32,
}

impl HwpCaps {
    pub fn of(ct: &CpuType) -> Self {
        let base_khz = ct.opps.iter().rev().find(|o| !o.turbo).map_or(ct.max_khz(), |o| o.khz);
        let s = ct.hwp_khz_per_perf;
        HwpCaps {
            lowest_perf: ct.min_khz().div_ceil(s),
            guaranteed_perf: base_khz.div_ceil(s),
            highest_perf: ct.max_khz().div_ceil(s),
            khz_per_perf: s,
        }
    }

    /// Whether a level is a P-state ratio (not hybrid).
    pub fn is_ratio(&self) -> bool {
        self.khz_per_perf == INTEL_PSTATE_SCALING_KHZ
    }

    /// The frequency intel_pstate reads a level as: its value rounded
    /// down to a P-state ratio (`turbo_freq`, `max_freq`).
    pub fn level_khz(&self, perf: u32) -> u32 {
        perf * self.khz_per_perf / INTEL_PSTATE_SCALING_KHZ * INTEL_PSTATE_SCALING_KHZ
    }

    /// intel_pstate_freq_to_hwp(): the level of a frequency, rounded up
    /// (RELATION_L), except that the highest and the guaranteed level's
    /// own frequencies give those levels.
    pub fn freq_to_hwp(&self, khz: u32) -> u32 {
        if khz == self.level_khz(self.highest_perf) {
            return self.highest_perf;
        }
        if khz == self.level_khz(self.guaranteed_perf) {
            return self.guaranteed_perf;
        }
        khz.div_ceil(self.khz_per_perf)
    }

    /// intel_pstate_update_perf_limits(): a policy limit in kHz as a
    /// level. The limit becomes a P-state ratio first (rounded down); on a
    /// hybrid part that ratio's frequency then becomes a level
    /// (`intel_pstate_freq_to_hwp()`), so a level may lie a little above
    /// the limit.
    pub fn limit_perf(&self, khz: u32) -> u32 {
        let ratio = khz / INTEL_PSTATE_SCALING_KHZ;
        if self.is_ratio() {
            return ratio;
        }
        self.freq_to_hwp(ratio * INTEL_PSTATE_SCALING_KHZ)
    }
}

/// The C0 share the hardware aims for at `epp` (step 3).
pub fn setpoint(epp: u32) -> f64 {
    let x = f64::from(epp.min(255)) / 255.0;
    HWP_SETPOINT_PERFORMANCE + (HWP_SETPOINT_POWER - HWP_SETPOINT_PERFORMANCE) * x
}

/// Step 2 and 4: the level asked for after an interval with C0 share `busy`.
pub fn next_perf(perf_now: u32, busy: f64, req: &HwpRequest) -> u32 {
    if req.desired_perf != 0 {
        return req.desired_perf;
    }
    (f64::from(perf_now) * busy / setpoint(req.epp)).ceil() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(epp: u32) -> HwpRequest {
        HwpRequest { min_perf: 8, max_perf: 39, desired_perf: 0, epp }
    }

    #[test]
    fn setpoint_runs_from_performance_to_power() {
        assert!((setpoint(0) - 0.25).abs() < 1e-12);
        assert!((setpoint(255) - 0.95).abs() < 1e-12);
        assert!((setpoint(0x80) - 0.601).abs() < 1e-3);
        assert!(setpoint(300) <= HWP_SETPOINT_POWER);
    }

    /// A fully busy CPU climbs by 1/setpoint per interval (rounded up); an
    /// idle one asks for nothing; desired overrides.
    #[test]
    fn next_perf_is_proportional() {
        assert_eq!(next_perf(8, 1.0, &req(0)), 32);
        assert_eq!(next_perf(8, 1.0, &req(255)), 9);
        assert_eq!(next_perf(20, 0.0, &req(128)), 0);
        assert_eq!(next_perf(20, 0.3, &req(0)), 24);
        let d = HwpRequest { desired_perf: 17, ..req(0) };
        assert_eq!(next_perf(8, 1.0, &d), 17);
    }

    #[test]
    fn fields_are_eight_bits() {
        assert_eq!(HwpRequest::from_fields(8, 39, 0, 255), Ok(req(255)));
        let e = HwpRequest::from_fields(8, 39, 0, 256).unwrap_err();
        assert_eq!(e, "epp 256 is outside 0 to 255 (an 8-bit field of MSR_HWP_REQUEST)");
        assert!(HwpRequest::from_fields(-1, 39, 0, 0).unwrap_err().starts_with("min_perf -1 is outside"));
        assert!(HwpRequest::from_fields(8, i64::MAX, 0, 0).unwrap_err().starts_with("max_perf 9223372036854775807"));
    }
}

//! HWP (Intel Speed Shift): the processor picks its P-state itself, inside
//! the limits the OS writes to MSR_HWP_REQUEST.
//!
//! The OS writes a request of four fields per CPU (Intel SDM vol. 3B §14.4;
//! design/kernel-governors.md §4.4): `min` and `max` performance levels,
//! `desired` (0 = let the hardware choose) and the energy-performance
//! preference `epp` (0 = performance … 255 = energy). Performance levels are
//! P-state ratios here (non-hybrid parts: ×100 MHz). The hardware's own
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
//! budget ([`super::dvfs`]) still caps turbo levels.
//!
//! Left out: the activity window (bits 41:32), package-level requests,
//! HWP's per-logical-CPU requests (govlab keeps one request per clock domain;
//! the governor combines its CPUs' wishes) and HWP_CAPABILITIES' most
//! efficient level (bits 23:16), which nothing here uses and no platform file
//! gives.

use crate::platform::load::INTEL_PSTATE_SCALING_KHZ;
use crate::platform::CpuType;
use crate::sim::{Engine, Event, Time};

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

/// MSR_HWP_REQUEST, the fields govlab models; levels are P-state ratios.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwpCaps {
    /// The lowest level (bits 31:24).
    pub lowest_perf: u32,
    /// The guaranteed level, P1, the highest without turbo (bits 15:8).
    pub guaranteed_perf: u32,
    /// The highest level, turbo included (bits 7:0).
    pub highest_perf: u32,
    /// kHz per level: 100 MHz on the non-hybrid parts govlab models.
    pub khz_per_perf: u32,
}

impl HwpCaps {
    pub fn of(ct: &CpuType) -> Self {
        let base_khz = ct.opps.iter().rev().find(|o| !o.turbo).map_or(ct.max_khz(), |o| o.khz);
        HwpCaps {
            lowest_perf: ct.min_khz() / INTEL_PSTATE_SCALING_KHZ,
            guaranteed_perf: base_khz / INTEL_PSTATE_SCALING_KHZ,
            highest_perf: ct.max_khz() / INTEL_PSTATE_SCALING_KHZ,
            khz_per_perf: INTEL_PSTATE_SCALING_KHZ,
        }
    }
}

/// One clock domain's HWP hardware.
#[derive(Debug, Clone)]
pub struct HwpRt {
    pub req: HwpRequest,
    /// The level the hardware chose last.
    pub perf: u32,
    /// Start of the current evaluation interval, and each CPU's cumulative
    /// idle time then.
    last_eval_ns: Time,
    prev_idle_ns: Vec<u64>,
    /// Generation of the queued evaluation event.
    pub gen: u32,
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

impl Engine {
    /// Step 5: clamp `perf` and send the clock there.
    fn hwp_apply(&mut self, d: usize, perf: u32) {
        let HwpCaps { lowest_perf: lowest, highest_perf: highest, .. } = HwpCaps::of(self.plat.domain_type(d));
        let Some(hw) = self.domains[d].hwp.as_mut() else { return };
        let req = hw.req;
        let perf = perf
            .clamp(req.min_perf, req.max_perf.max(req.min_perf))
            .clamp(lowest, highest);
        hw.perf = perf;
        let opp = (perf - lowest) as usize;
        if opp != self.domains[d].req_opp {
            self.domains[d].policy_cur_khz = perf * INTEL_PSTATE_SCALING_KHZ;
            self.request_opp(d, opp);
        }
    }

    /// The OS writes an HWP request for domain `d`. The first write enables
    /// the hardware's loop (IA32_PM_ENABLE, then the request).
    pub(crate) fn hwp_write_request(&mut self, d: usize, req: HwpRequest) {
        if self.domains[d].hwp.is_none() {
            let ct = self.plat.domain_type(d);
            let perf = self.domains[d].cur_khz / INTEL_PSTATE_SCALING_KHZ;
            debug_assert!(ct.opps.iter().all(|o| o.khz % INTEL_PSTATE_SCALING_KHZ == 0));
            let now = self.now;
            let prev_idle_ns = self.plat.freq_domains[d]
                .cpus
                .iter()
                .map(|&c| self.rqs[c].idle_time_until(now))
                .collect();
            self.domains[d].hwp = Some(HwpRt { req, perf, last_eval_ns: now, prev_idle_ns, gen: 0 });
            self.q.schedule(now + HWP_EVAL_INTERVAL_NS, Event::HwpTick { domain: d as u32, gen: 0 });
        }
        let hw = self.domains[d].hwp.as_mut().expect("enabled above");
        hw.req = req;
        let perf = hw.perf;
        self.hwp_apply(d, perf);
    }

    /// The hardware's loop for domain `d` (steps 1–5); false if the event
    /// is stale.
    pub(crate) fn hwp_tick(&mut self, d: usize, gen: u32) -> bool {
        let now = self.now;
        let cpus = &self.plat.freq_domains[d].cpus;
        let rqs = &self.rqs;
        let Some(hw) = self.domains[d].hwp.as_mut().filter(|h| h.gen == gen) else { return false };
        let window_ns = now.saturating_sub(hw.last_eval_ns).max(1);
        let mut busy: f64 = 0.0;
        for (k, &c) in cpus.iter().enumerate() {
            let idle = rqs[c].idle_time_until(now);
            let idle_delta = idle.saturating_sub(hw.prev_idle_ns[k]).min(window_ns);
            hw.prev_idle_ns[k] = idle;
            busy = busy.max((window_ns - idle_delta) as f64 / window_ns as f64);
        }
        hw.last_eval_ns = now;
        let perf = next_perf(hw.perf, busy, &hw.req);
        self.q.schedule(now + HWP_EVAL_INTERVAL_NS, Event::HwpTick { domain: d as u32, gen });
        self.hwp_apply(d, perf);
        true
    }
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

//! The HWP hardware of a policy's logical CPU at run time: the request the
//! OS wrote to its MSR_HWP_REQUEST (a per-logical-processor register, SDM
//! vol. 3B §14.4.4), the level the hardware chose for it, and its
//! evaluation every [`HWP_EVAL_INTERVAL_NS`]. Where CPUs share a clock the
//! levels are resolved like any other requests (machine/dvfs.rs,
//! `resolve_domain`).
//!
//! Models: Intel SDM vol. 3B §14.4 (hardware-controlled performance
//! states); the selection rule, assumed, is in [`crate::platform::hwp`].
//! AMD's CPPC request (MSR_AMD_CPPC_REQ: the same min/max/desired/EPP
//! fields) runs through the same loop on its own scale: levels are the
//! CPU type's CPPC levels and a level runs at the operating point closest
//! to its frequency ([`crate::platform::cppc`]).

use super::{Engine, Event};
use crate::platform::hwp::{next_perf, HwpCaps, HwpRequest, HWP_EVAL_INTERVAL_NS};
use crate::platform::{CpuType, INTEL_PSTATE_SCALING_KHZ};
use crate::sim::Time;

/// The levels a CPU type's request names: (lowest, highest).
fn level_range(ct: &CpuType) -> (u32, u32) {
    match ct.cppc {
        Some(c) => (c.lowest_perf, c.highest_perf),
        None => {
            let caps = HwpCaps::of(ct);
            (caps.lowest_perf, caps.highest_perf)
        }
    }
}

/// The operating point a level runs at, and its frequency: one OPP per
/// ratio on Intel, the CPPC mapping on AMD. A hybrid P-core's level runs at
/// the ratio its value reaches (rounded down, as intel_pstate reads the
/// levels back, platform/hwp.rs; assumed of the hardware, whose clock steps
/// by 100 MHz whatever the level's scale).
fn level_opp(ct: &CpuType, perf: u32, lowest: u32) -> (usize, u32) {
    match ct.cppc {
        Some(c) => {
            let opp = c.opp_of(ct, perf);
            (opp, ct.opps[opp].khz)
        }
        None if ct.hwp_khz_per_perf != INTEL_PSTATE_SCALING_KHZ => {
            let opp = ct.opp_at_most(perf * ct.hwp_khz_per_perf);
            (opp, ct.opps[opp].khz)
        }
        None => ((perf - lowest) as usize, perf * INTEL_PSTATE_SCALING_KHZ),
    }
}

/// The level a frequency is (the clock's, when the OS first writes).
fn level_of(ct: &CpuType, khz: u32) -> u32 {
    match ct.cppc {
        Some(c) => c.khz_to_perf(khz),
        None => HwpCaps::of(ct).freq_to_hwp(khz),
    }
}

/// One policy's HWP hardware.
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

impl Engine {
    /// Step 5: clamp `perf` and send the clock there.
    fn hwp_apply(&mut self, p: usize, perf: u32) {
        let d = self.policies[p].domain;
        let ct = self.plat.domain_type(d);
        let (lowest, highest) = level_range(ct);
        let Some(hw) = self.policies[p].hwp.as_mut() else { return };
        let req = hw.req;
        let perf = perf
            .clamp(req.min_perf, req.max_perf.max(req.min_perf))
            .clamp(lowest, highest);
        hw.perf = perf;
        let (opp, khz) = level_opp(ct, perf, lowest);
        if opp != self.policies[p].req_opp {
            self.policies[p].cur_khz = khz;
            // No kernel event says what HWP chose (intel_pstate traces no
            // cpu_frequency with HWP); on a shared clock govlab writes one
            // for the CPU, so that a trace still shows each CPU's level.
            if self.domains[d].shared {
                self.trace_policy_frequency(p, khz);
            }
            self.policy_request(p, opp);
        }
    }

    /// The OS writes an HWP request for policy `p`. The first write enables
    /// the hardware's loop (IA32_PM_ENABLE, then the request).
    pub(crate) fn hwp_write_request(&mut self, p: usize, req: HwpRequest) {
        if self.policies[p].hwp.is_none() {
            let d = self.policies[p].domain;
            let ct = self.plat.domain_type(d);
            let perf = level_of(ct, self.domains[d].cur_khz);
            debug_assert!(ct.cppc.is_some() || ct.opps.iter().all(|o| o.khz % INTEL_PSTATE_SCALING_KHZ == 0));
            let now = self.now;
            let prev_idle_ns = self.pol.cpus[p].iter().map(|&c| self.rqs[c].idle_time_until(now)).collect();
            self.policies[p].hwp = Some(HwpRt { req, perf, last_eval_ns: now, prev_idle_ns, gen: 0 });
            self.q.schedule(now + HWP_EVAL_INTERVAL_NS, Event::HwpTick { policy: p as u32, gen: 0 });
        }
        let cppc = self.plat.domain_type(self.policies[p].domain).cppc.is_some();
        let hw = self.policies[p].hwp.as_mut().expect("enabled above");
        hw.req = req;
        // A CPPC desired level is the OS's choice (ACPI 6.x §8.4.6,
        // non-autonomous): amd-pstate's passive write is its frequency
        // change, served at once. HWP's desired waits for the loop.
        let perf = if cppc && req.desired_perf != 0 { req.desired_perf } else { hw.perf };
        self.hwp_apply(p, perf);
    }

    /// The hardware's loop for policy `p` (steps 1–5); false if the event
    /// is stale.
    pub(crate) fn hwp_tick(&mut self, p: usize, gen: u32) -> bool {
        let now = self.now;
        let cpus = &self.pol.cpus[p];
        let rqs = &self.rqs;
        let Some(hw) = self.policies[p].hwp.as_mut().filter(|h| h.gen == gen) else { return false };
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
        self.q.schedule(now + HWP_EVAL_INTERVAL_NS, Event::HwpTick { policy: p as u32, gen });
        self.hwp_apply(p, perf);
        true
    }
}

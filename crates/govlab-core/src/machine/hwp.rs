//! The HWP hardware of a policy's logical CPU at run time: the request the
//! OS wrote to its MSR_HWP_REQUEST (a per-logical-processor register, SDM
//! vol. 3B §14.4.4), the level the hardware chose for it, and its
//! evaluation every [`HWP_EVAL_INTERVAL_NS`]. Where CPUs share a clock the
//! levels are resolved like any other requests (machine/dvfs.rs,
//! `resolve_domain`).
//!
//! Models: Intel SDM vol. 3B §14.4 (hardware-controlled performance
//! states); the selection rule, assumed, is in [`crate::platform::hwp`].

use super::{Engine, Event};
use crate::platform::hwp::{next_perf, HwpCaps, HwpRequest, HWP_EVAL_INTERVAL_NS};
use crate::platform::INTEL_PSTATE_SCALING_KHZ;
use crate::sim::Time;

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
        let HwpCaps { lowest_perf: lowest, highest_perf: highest, .. } = HwpCaps::of(self.plat.domain_type(d));
        let Some(hw) = self.policies[p].hwp.as_mut() else { return };
        let req = hw.req;
        let perf = perf
            .clamp(req.min_perf, req.max_perf.max(req.min_perf))
            .clamp(lowest, highest);
        hw.perf = perf;
        let opp = (perf - lowest) as usize;
        if opp != self.policies[p].req_opp {
            let khz = perf * INTEL_PSTATE_SCALING_KHZ;
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
            let perf = self.domains[d].cur_khz / INTEL_PSTATE_SCALING_KHZ;
            debug_assert!(ct.opps.iter().all(|o| o.khz % INTEL_PSTATE_SCALING_KHZ == 0));
            let now = self.now;
            let prev_idle_ns = self.pol.cpus[p].iter().map(|&c| self.rqs[c].idle_time_until(now)).collect();
            self.policies[p].hwp = Some(HwpRt { req, perf, last_eval_ns: now, prev_idle_ns, gen: 0 });
            self.q.schedule(now + HWP_EVAL_INTERVAL_NS, Event::HwpTick { policy: p as u32, gen: 0 });
        }
        let hw = self.policies[p].hwp.as_mut().expect("enabled above");
        hw.req = req;
        let perf = hw.perf;
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

//! The scaling driver's target path: a governor's frequency request for a
//! policy becomes an OPP request to the clock, an HWP request, or a powernv
//! local/global P-state pair.
//!
//! Models: Linux v6.8 drivers/cpufreq/cpufreq.c __cpufreq_driver_target()
//! and the target_index / fast_switch callbacks of acpi-cpufreq.c,
//! cpufreq-dt.c, intel_pstate.c (intel_cpufreq_target), amd-pstate.c
//! (amd_pstate_update_freq) and powernv-cpufreq.c, and intel_cpufreq's
//! `adjust_perf` (schedutil's perf path, v5.11); which driver runs is
//! decided in
//! [`crate::cpufreq::driver`].

use super::Engine;
use crate::cpufreq::amd_pstate;
use crate::cpufreq::driver::{table_index, CpufreqDriver};
use crate::cpufreq::Relation;
use crate::cpufreq::intel_pstate;
use crate::platform::hwp::{HwpCaps, HwpRequest, HWP_EPP_FIRMWARE_DEFAULT};
use crate::platform::INTEL_PSTATE_SCALING_KHZ;

impl Engine {
    /// A governor's frequency request for policy `p` reaches the driver
    /// (already clamped to the policy limits).
    pub(crate) fn driver_target(&mut self, p: usize, khz: u32, relation: Relation, fast_switch: bool) {
        let d = self.policies[p].domain;
        let ct = self.plat.domain_type(d);
        let opp = table_index(ct, khz, relation);
        let opp_khz = ct.opps[opp].khz;
        let cppc = ct.cppc;
        // __cpufreq_driver_target: nothing to do if the policy is there
        // already, unless the driver wants every call
        // (CPUFREQ_NEED_UPDATE_LIMITS: intel_cpufreq, amd-pstate).
        let every_call = matches!(self.cpufreq_driver, CpufreqDriver::IntelCpufreq { .. } | CpufreqDriver::AmdPstate { .. });
        if !fast_switch && !every_call && opp_khz == self.policies[p].cur_khz {
            return;
        }
        self.policies[p].cur_khz = opp_khz;
        // Where policies share a clock, each says what it asked for now
        // (intel_pstate_set_pstate and cpufreq_driver_fast_switch trace
        // cpu_frequency for the policy's CPUs, v6.8; the target path's
        // transition notifier likewise); a policy that is its clock says so
        // when the clock switches (machine/dvfs.rs).
        if self.domains[d].shared {
            self.trace_policy_frequency(p, opp_khz);
        }
        match self.cpufreq_driver {
            CpufreqDriver::Table(_) | CpufreqDriver::IntelPstate | CpufreqDriver::IntelCpufreq { hwp: false, .. } => {
                self.policy_request(p, opp);
            }
            CpufreqDriver::IntelCpufreq { hwp: true, strict_target } => {
                let caps = HwpCaps::of(self.plat.domain_type(d));
                let (pstate, max_perf_ratio) = if caps.is_ratio() {
                    let pstate = opp_khz / INTEL_PSTATE_SCALING_KHZ;
                    (pstate, (self.policies[p].max_khz / INTEL_PSTATE_SCALING_KHZ).max(pstate))
                } else {
                    // A hybrid CPU type's levels: intel_cpufreq_target()
                    // converts the target with intel_pstate_freq_to_hwp_rel().
                    let pstate = intel_pstate::freq_to_hwp_rel(&caps, khz, relation);
                    (pstate, caps.limit_perf(self.policies[p].max_khz).max(pstate))
                };
                let req = HwpRequest {
                    min_perf: pstate,
                    max_perf: if strict_target { pstate } else { max_perf_ratio },
                    desired_perf: 0,
                    epp: HWP_EPP_FIRMWARE_DEFAULT,
                };
                self.hwp_write_request(p, req);
            }
            CpufreqDriver::Powernv { global_pstate } => {
                self.powernv_target(p, opp, global_pstate && !fast_switch);
            }
            CpufreqDriver::AmdPstate { guided_dynamic, .. } => {
                let Some(cppc) = cppc else { unreachable!("amd-pstate runs only where every CPU type has CPPC levels") };
                let pr = &self.policies[p];
                let req = amd_pstate::target_request(&cppc, pr.min_khz, pr.max_khz, khz, guided_dynamic);
                self.hwp_write_request(p, req);
            }
            CpufreqDriver::AmdPstateEpp => unreachable!("amd-pstate-epp is a setpolicy driver: its policies write CPPC requests"),
        }
    }

    /// intel_cpufreq_adjust_perf (drivers/cpufreq/intel_pstate.c, v5.11
    /// a365ab6b9dfb; the same in v6.8): schedutil's levels, in units of
    /// `capacity`, scaled to the CPU's top level (HWP highest, which is the
    /// guaranteed one with turbo off) and rounded up; the required level
    /// becomes the request's min (no lower than the lowest level and the
    /// policy minimum), the wanted one its desired, within min and the
    /// policy maximum; the MSR is written only when the request changes
    /// (intel_cpufreq_hwp_update). The hardware honours desired at its next
    /// evaluation and may drop to min (platform/hwp.rs).
    pub(crate) fn driver_adjust_perf(&mut self, p: usize, min_perf: u64, target_perf: u64, capacity: u64) {
        let pr = &self.policies[p];
        let caps = HwpCaps::of(self.plat.domain_type(pr.domain));
        let cap_pstate = u64::from(caps.highest_perf);
        let level = |perf: u64| if perf < capacity { (cap_pstate * perf).div_ceil(capacity) as u32 } else { caps.highest_perf };
        let min_perf_ratio = pr.min_khz / INTEL_PSTATE_SCALING_KHZ;
        let max_perf_ratio = pr.max_khz / INTEL_PSTATE_SCALING_KHZ;
        let min = level(min_perf).max(caps.lowest_perf).max(min_perf_ratio);
        let max = caps.highest_perf.min(max_perf_ratio).max(min);
        let req = HwpRequest {
            min_perf: min,
            max_perf: max,
            desired_perf: level(target_perf).clamp(min, max),
            epp: HWP_EPP_FIRMWARE_DEFAULT,
        };
        if pr.hwp.as_ref().is_some_and(|h| h.req == req) {
            return;
        }
        self.hwp_write_request(p, req);
    }

    /// `cpu_frequency` for each CPU of policy `p`, at `khz`.
    pub(crate) fn trace_policy_frequency(&mut self, p: usize, khz: u32) {
        if let Some(t) = self.trace.as_mut() {
            for &cpu in &self.pol.cpus[p] {
                t.cpu_frequency(self.now, cpu, khz);
            }
        }
    }
}

//! Power of a core in each situation, and the per-core energy ledger.
//!
//! A core draws
//!
//! * while any of its threads is in C0 (running, or leaving an idle state):
//!   dynamic power `ceff · V² · f` (×`smt_power` when more than one thread
//!   runs) plus leakage `leakage_mw_per_v · V`;
//! * while all its threads are idle: the power of the shallowest state any
//!   thread is in (a core is only as deep as its shallowest thread), plus
//!   leakage unless that state is power-gated.
//!
//! V is the core's voltage domain's voltage and f its frequency domain's
//! clock. Power is constant between events; each core keeps a ledger that is
//! brought up to date (energy += power × elapsed) whenever something its
//! power depends on changes. A second, independent integral of the
//! machine's total power is kept beside it so a test can check that the two
//! agree.

use crate::platform::{CpuType, IdleState};
use crate::sim::{Engine, Time};

/// Dynamic power while busy, mW.
pub fn dynamic_mw(ct: &CpuType, khz: u32, mv: u32, threads_busy: u32) -> f64 {
    let v = f64::from(mv) / 1000.0;
    let p = ct.ceff_nf * v * v * f64::from(khz) / 1000.0;
    if threads_busy > 1 {
        p * ct.smt_power
    } else {
        p
    }
}

/// Leakage of a powered core, mW.
pub fn leakage_mw(ct: &CpuType, mv: u32) -> f64 {
    ct.leakage_mw_per_v * f64::from(mv) / 1000.0
}

/// Power of an idle core in `state`, mW.
pub fn idle_mw(ct: &CpuType, state: &IdleState, mv: u32) -> f64 {
    if state.power_gated {
        state.power_mw
    } else {
        state.power_mw + leakage_mw(ct, mv)
    }
}

/// One core's energy ledger.
#[derive(Debug, Clone, Copy, Default)]
pub struct CoreEnergy {
    pub energy_mj: f64,
    pub power_mw: f64,
    pub since_ns: Time,
}

impl Engine {
    /// Close the ledger of `core` at now with its old power and compute the
    /// power that holds from now on.
    pub(crate) fn refresh_core_power(&mut self, core: usize) {
        let now = self.now;
        let new_mw = self.core_power_mw(core);
        let c = &mut self.cores[core];
        c.energy_mj += c.power_mw * (now - c.since_ns) as f64 * 1e-9;
        c.since_ns = now;
        let delta = new_mw - c.power_mw;
        c.power_mw = new_mw;
        if delta != 0.0 {
            self.energy_check_mj += self.total_power_mw * (now - self.energy_check_ns) as f64 * 1e-9;
            self.energy_check_ns = now;
            self.total_power_mw += delta;
        }
    }

    fn core_power_mw(&self, core: usize) -> f64 {
        let pc = &self.plat.cores[core];
        let ct = &self.plat.cpu_types[pc.cpu_type];
        let dom = &self.domains[pc.freq_domain];
        let mv = self.vdomains[self.plat.freq_domains[pc.freq_domain].voltage_domain].mv;
        let mut active = 0u32;
        let mut shallowest: Option<usize> = None;
        for &cpu in &pc.cpus {
            match self.rqs[cpu].idle_state() {
                None => active += 1,
                Some(s) => shallowest = Some(shallowest.map_or(s, |x: usize| x.min(s))),
            }
        }
        if active > 0 {
            dynamic_mw(ct, dom.cur_khz, mv, active) + leakage_mw(ct, mv)
        } else {
            idle_mw(ct, &ct.idle_states[shallowest.unwrap_or(0)], mv)
        }
    }

    /// Refresh the ledgers of every core of a frequency domain.
    pub(crate) fn refresh_domain_power(&mut self, domain: usize) {
        for i in 0..self.plat.freq_domains[domain].cores.len() {
            let core = self.plat.freq_domains[domain].cores[i];
            self.refresh_core_power(core);
        }
    }

    /// Close every ledger at now; returns (per-core total, check integral),
    /// both in J, uncore included in both.
    pub(crate) fn close_energy(&mut self) -> (f64, f64) {
        for core in 0..self.cores.len() {
            self.refresh_core_power(core);
        }
        let now = self.now;
        self.energy_check_mj += self.total_power_mw * (now - self.energy_check_ns) as f64 * 1e-9;
        self.energy_check_ns = now;
        let uncore_mj: f64 = self
            .plat
            .packages
            .iter()
            .map(|p| p.uncore_mw * now as f64 * 1e-9)
            .sum();
        let cores_mj: f64 = self.cores.iter().map(|c| c.energy_mj).sum();
        ((cores_mj + uncore_mj) / 1000.0, (self.energy_check_mj + uncore_mj) / 1000.0)
    }
}

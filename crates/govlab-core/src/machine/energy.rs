//! Energy integration, the meter of the hardware's power. The power
//! formulas are in [`crate::platform::energy`].
//!
//! Power is constant between events; each core keeps a ledger that is
//! brought up to date (energy += power × elapsed) whenever something its
//! power depends on changes. A second, independent integral of the
//! machine's total power is kept beside it so a test can check that the two
//! agree.
//!
//! A thread whose idle state is chosen in hindsight (the oracle) makes its
//! core's idle power unknown until it chooses. Such a stretch is priced with
//! the thread's provisional state and kept as a [`PendingIdle`]; once every
//! undecided thread in it has chosen, the difference to the true power is
//! added to both the core's ledger and the check integral.

use super::Engine;
use crate::platform::energy::{dynamic_mw, idle_mw, leakage_mw};
use crate::sim::Time;

/// One core's energy ledger.
#[derive(Debug, Clone, Default)]
pub struct CoreEnergy {
    pub energy_mj: f64,
    pub power_mw: f64,
    pub since_ns: Time,
    /// Unknowns of the stretch since `since_ns` (None: its power is known).
    pub open: Option<PendingIdle>,
    /// Closed stretches priced provisionally, waiting for their threads'
    /// choices.
    pub pending: Vec<PendingIdle>,
}

/// A stretch in which every thread of a core was idle and some had not
/// chosen their state yet.
#[derive(Debug, Clone, Copy)]
pub struct PendingIdle {
    pub duration_ns: Time,
    /// Voltage of the core's rail during the stretch.
    pub mv: u32,
    /// Shallowest state among the threads that have chosen (None: none has).
    pub shallowest_known: Option<usize>,
    /// Threads still to choose, as bits over the core's thread positions.
    pub undecided: u32,
    /// The power the ledger was charged for the stretch.
    pub provisional_mw: f64,
}

impl Engine {
    /// Close the ledger of `core` at now with its old power and compute the
    /// power that holds from now on.
    pub(crate) fn refresh_core_power(&mut self, core: usize) {
        let now = self.now;
        let (new_mw, open) = self.core_power_mw(core);
        let c = &mut self.cores[core];
        let elapsed_ns = now - c.since_ns;
        c.energy_mj += c.power_mw * elapsed_ns as f64 * 1e-9;
        if let Some(p) = c.open.take() {
            if elapsed_ns > 0 {
                c.pending.push(PendingIdle { duration_ns: elapsed_ns, ..p });
            }
        }
        c.open = open;
        c.since_ns = now;
        let delta = new_mw - c.power_mw;
        c.power_mw = new_mw;
        if delta != 0.0 {
            self.energy_check_mj += self.total_power_mw * (now - self.energy_check_ns) as f64 * 1e-9;
            self.energy_check_ns = now;
            self.total_power_mw += delta;
        }
    }

    /// The core's power now, and the unknowns it rests on when some idle
    /// thread has yet to choose its state.
    fn core_power_mw(&self, core: usize) -> (f64, Option<PendingIdle>) {
        let pc = &self.plat.cores[core];
        let ct = &self.plat.cpu_types[pc.cpu_type];
        let dom = &self.domains[pc.freq_domain];
        let mv = self.vdomains[self.plat.freq_domains[pc.freq_domain].voltage_domain].mv;
        let mut active = 0u32;
        let mut shallowest: Option<usize> = None;
        let mut shallowest_known: Option<usize> = None;
        let mut undecided = 0u32;
        for (pos, &cpu) in pc.cpus.iter().enumerate() {
            match self.rqs[cpu].idle_state() {
                None => active += 1,
                Some(s) => {
                    shallowest = Some(shallowest.map_or(s, |x: usize| x.min(s)));
                    if self.rqs[cpu].hindsight {
                        undecided |= 1 << pos;
                    } else {
                        shallowest_known = Some(shallowest_known.map_or(s, |x: usize| x.min(s)));
                    }
                }
            }
        }
        if active > 0 {
            return (dynamic_mw(ct, dom.cur_khz, mv, active) + leakage_mw(ct, mv), None);
        }
        let mw = idle_mw(ct, &ct.idle_states[shallowest.unwrap_or(0)], mv);
        let open = (undecided != 0).then_some(PendingIdle {
            duration_ns: 0,
            mv,
            shallowest_known,
            undecided,
            provisional_mw: mw,
        });
        (mw, open)
    }

    /// `cpu` has chosen `state` for its idle period, which has just been
    /// closed: settle the stretches that waited for it (and for no other
    /// thread any more) at their true power.
    pub(crate) fn settle_hindsight_energy(&mut self, core: usize, cpu: usize, state: usize) {
        let pc = &self.plat.cores[core];
        let ct = &self.plat.cpu_types[pc.cpu_type];
        let bit = 1u32 << pc.cpus.iter().position(|&c| c == cpu).expect("CPU of its own core");
        let c = &mut self.cores[core];
        let mut correction_mj = 0.0;
        c.pending.retain_mut(|p| {
            if p.undecided & bit == 0 {
                return true;
            }
            p.undecided &= !bit;
            p.shallowest_known = Some(p.shallowest_known.map_or(state, |s| s.min(state)));
            if p.undecided != 0 {
                return true;
            }
            let true_mw = idle_mw(ct, &ct.idle_states[p.shallowest_known.unwrap_or(state)], p.mv);
            correction_mj += (true_mw - p.provisional_mw) * p.duration_ns as f64 * 1e-9;
            false
        });
        c.energy_mj += correction_mj;
        self.energy_check_mj += correction_mj;
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

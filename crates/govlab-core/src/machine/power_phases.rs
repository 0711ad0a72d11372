//! The package power a shortened run stands for (`RunResult::scored_power`).
//!
//! A workload that simulates a long run in shorter parts (netperf's
//! `scored_len`: 1-s tests scored as 10-s ones) says which stretch of its
//! run stands for how much of the real one: phases from given times, each
//! with a weight ([`crate::workload::PowerPhase`]). The engine reads the
//! packages' energy (cores and uncore: the RAPL package domain, what
//! `package_j` sums) at each phase's start, from the state after the last
//! event at or before it, as machine/intervals.rs reads it at an interval
//! boundary, so a run with phases takes the same path as one without. The
//! scored power is Σ weight × phase energy / Σ weight × phase time; before
//! the first phase the weight is 1, and a phase starting at or after the
//! run's end never starts.

use super::Engine;
use crate::metrics::ScoredPower;
use crate::sim::Time;
use crate::workload::PowerPhase;

/// The phases of a run and what they have gathered so far.
#[derive(Debug, Clone)]
pub(crate) struct PowerPhases {
    phases: Vec<PowerPhase>,
    /// The next phase to start.
    next: usize,
    /// The current phase: its weight, start and the package energy then (mJ).
    weight: f64,
    since_ns: Time,
    since_mj: f64,
    /// Σ weight × energy (mJ) and Σ weight × time (ns) of the closed phases.
    energy_mj: f64,
    time_ns: f64,
}

impl PowerPhases {
    /// `phases` in the order of their start times.
    pub(crate) fn new(phases: Vec<PowerPhase>) -> Self {
        PowerPhases { phases, next: 0, weight: 1.0, since_ns: 0, since_mj: 0.0, energy_mj: 0.0, time_ns: 0.0 }
    }

    /// When the next phase starts (`Time::MAX` after the last).
    pub(crate) fn next_ns(&self) -> Time {
        self.phases.get(self.next).map_or(Time::MAX, |p| p.start_ns)
    }

    /// Close the current phase at `t` with the package energy `mj` then.
    fn close(&mut self, t: Time, mj: f64) {
        self.energy_mj += self.weight * (mj - self.since_mj);
        self.time_ns += self.weight * (t - self.since_ns) as f64;
        self.since_ns = t;
        self.since_mj = mj;
    }
}

impl Engine {
    /// The phases `setup` declares, from the start of the run.
    pub(crate) fn start_power_phases(&mut self, phases: &[PowerPhase]) {
        if phases.is_empty() {
            return;
        }
        let pp = PowerPhases::new(phases.to_vec());
        self.next_boundary_ns = self.next_boundary_ns.min(pp.next_ns());
        self.power_phases = Some(Box::new(pp));
    }

    /// Start every phase due before `t`, the time of the next event.
    pub(crate) fn start_phases(&mut self, t: Time) {
        let end_ns = self.end_ns;
        loop {
            let Some(at) = self.power_phases.as_ref().map(|pp| pp.next_ns()) else { return };
            if at >= t || at >= end_ns {
                return;
            }
            let mj = self.packages_mj_at(at);
            let Some(pp) = self.power_phases.as_mut() else { return };
            pp.close(at, mj);
            pp.weight = pp.phases[pp.next].weight;
            pp.next += 1;
        }
    }

    /// When the next phase starts (`Time::MAX` without phases).
    pub(crate) fn next_phase_ns(&self) -> Time {
        self.power_phases.as_ref().map_or(Time::MAX, |pp| pp.next_ns())
    }

    /// The packages' domain energy (cores and uncore) at `t`, no earlier
    /// than the last event, mJ.
    fn packages_mj_at(&self, t: Time) -> f64 {
        (0..self.plat.packages.len()).map(|p| self.package_domain_mj_at(p, t)).sum()
    }

    /// The scored power, the current phase closed at the end of the run
    /// (after machine/energy.rs closed its ledgers); None without phases or
    /// without weighted time.
    pub(crate) fn scored_power(&mut self) -> Option<ScoredPower> {
        let now = self.now;
        let mj = self.packages_mj_at(now);
        let pp = self.power_phases.as_mut()?;
        pp.close(now, mj);
        (pp.time_ns > 0.0).then(|| {
            let package_j = pp.energy_mj / 1000.0;
            let time_s = pp.time_ns / 1e9;
            ScoredPower { package_j, time_s, package_w: package_j / time_s }
        })
    }
}

//! Judging one idle period, for the engine's idle loop and for `trace stats`
//! alike: the kernel's per-state `above`/`below` counters
//! (drivers/cpuidle/cpuidle.c, cpuidle_enter_state, v6.8) and the accuracy
//! against the ideal state (the 2020 weighted-TEO RFC's measure, see
//! [`super::IdleAccuracy`]).
//!
//! `residency_ns` runs from the idle entry to the CPU back in C0, so it
//! includes the exit latency, as the kernel's `last_residency_ns` does.

use super::{IdleAccuracy, StateCounters};
use crate::platform::IdleState;

/// What one idle period says about the state it was spent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judgement {
    /// The deepest enabled state whose target residency fits the idle time
    /// (residency less the chosen state's exit latency) and whose exit
    /// latency fits the latency limit: the oracle's choice.
    pub ideal: usize,
    /// The idle time (`residency_ns` less the chosen state's exit latency).
    pub idle_ns: u64,
    /// Shorter than the state's target residency, a shallower state being
    /// enabled (cpuidle's `above`: too deep).
    pub above: bool,
    /// Long enough beyond the exit latency for the first enabled deeper
    /// state (cpuidle's `below`: too shallow).
    pub below: bool,
}

/// The ideal state for an idle period of `idle_ns` (exit latency left out):
/// the deepest enabled state whose target residency fits it and whose exit
/// latency meets the latency limit, else the shallowest enabled state. The
/// accuracy accounting judges every choice against it (the 2020 RFC's
/// "state that aligns with the actual sleep duration").
#[must_use]
pub fn ideal_state(states: &[IdleState], disabled: &[bool], idle_ns: u64, latency_req_ns: u64) -> usize {
    (0..states.len())
        .rev()
        .find(|&i| {
            !disabled[i] && states[i].target_residency_ns <= idle_ns && states[i].exit_latency_ns <= latency_req_ns
        })
        .or_else(|| disabled.iter().position(|&d| !d))
        .unwrap_or(0)
}

/// Judge an idle period of `residency_ns` spent in state `chosen`.
pub fn judge(states: &[IdleState], disabled: &[bool], chosen: usize, residency_ns: u64, latency_req_ns: u64) -> Judgement {
    let st = &states[chosen];
    let idle_ns = residency_ns.saturating_sub(st.exit_latency_ns);
    let ideal = ideal_state(states, disabled, idle_ns, latency_req_ns);
    let mut above = false;
    let mut below = false;
    if residency_ns < st.target_residency_ns {
        above = (0..chosen).any(|i| !disabled[i]);
    } else if residency_ns > st.exit_latency_ns {
        if let Some(i) = (chosen + 1..states.len()).find(|&i| !disabled[i]) {
            below = residency_ns - st.exit_latency_ns >= states[i].target_residency_ns;
        }
    }
    Judgement { ideal, idle_ns, above, below }
}

impl StateCounters {
    /// Count one period of `residency_ns` in this state.
    pub fn record(&mut self, residency_ns: u64, j: &Judgement) {
        self.usage += 1;
        self.time_ns += residency_ns;
        self.above += u64::from(j.above);
        self.below += u64::from(j.below);
    }
}

impl IdleAccuracy {
    /// Count one judged period spent in `chosen`. `idle_mw(i)` is the power
    /// of an idle core in state i (0 where unknown): a too-shallow choice
    /// costs the difference to the ideal state's over the idle time.
    pub fn record(&mut self, states: &[IdleState], chosen: usize, j: &Judgement, idle_mw: impl Fn(usize) -> f64) {
        if self.by_state.len() < states.len() {
            self.by_state.resize(states.len(), [0; 4]);
        }
        let ideal = j.ideal;
        self.samples += 1;
        self.by_state[chosen][0] += 1;
        match chosen.cmp(&ideal) {
            std::cmp::Ordering::Equal => {
                self.correct += 1;
                self.by_state[chosen][1] += 1;
            }
            std::cmp::Ordering::Greater => {
                *self.too_deep.entry((chosen - ideal) as u32).or_insert(0) += 1;
                self.by_state[chosen][2] += 1;
                let extra = states[chosen].exit_latency_ns.saturating_sub(states[ideal].exit_latency_ns);
                self.too_deep_latency_us += extra as f64 / 1e3;
            }
            std::cmp::Ordering::Less => {
                *self.too_shallow.entry((ideal - chosen) as u32).or_insert(0) += 1;
                self.by_state[chosen][3] += 1;
                self.too_shallow_energy_j += (idle_mw(chosen) - idle_mw(ideal)).max(0.0) * j.idle_ns as f64 * 1e-12;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(exit_us: u64, target_us: u64) -> IdleState {
        IdleState {
            name: format!("S{target_us}"),
            desc: String::new(),
            exit_latency_ns: exit_us * 1000,
            wake_latency_ns: None,
            target_residency_ns: target_us * 1000,
            power_mw: 0.0,
            polling: false,
            power_gated: false,
            entry_exit_uj: 0.0,
            turbo_active: false,
            in_acpi_cst: true,
        }
    }

    #[test]
    fn ideal_above_and_below() {
        // WFI, then a 10/50 µs and a 100/500 µs state.
        let states = [state(1, 1), state(10, 50), state(100, 500)];
        let on = [false; 3];
        // 70 µs in state 1: idle time 60 µs fits state 1 only.
        let j = judge(&states, &on, 1, 70_000, u64::MAX);
        assert_eq!((j.ideal, j.idle_ns, j.above, j.below), (1, 60_000, false, false));
        // 30 µs in state 1: shorter than its 50 µs target, so too deep.
        let j = judge(&states, &on, 1, 30_000, u64::MAX);
        assert_eq!((j.ideal, j.above, j.below), (0, true, false));
        // 900 µs in state 0: 899 µs would have fitted state 2.
        let j = judge(&states, &on, 0, 900_000, u64::MAX);
        assert_eq!((j.ideal, j.above, j.below), (2, false, true));
        // A latency limit of 50 µs rules state 2 out.
        assert_eq!(judge(&states, &on, 0, 900_000, 50_000).ideal, 1);
        // With state 1 disabled, state 0's "below" looks at state 2.
        let j = judge(&states, &[false, true, false], 0, 300_000, u64::MAX);
        assert_eq!((j.ideal, j.below), (0, false));
    }

    #[test]
    fn accuracy_counts_by_distance() {
        let states = [state(1, 1), state(10, 50), state(100, 500)];
        let on = [false; 3];
        let mut a = IdleAccuracy::default();
        for (chosen, res) in [(2, 30_000), (0, 900_000), (1, 70_000), (2, 600_000)] {
            let j = judge(&states, &on, chosen, res, u64::MAX);
            a.record(&states, chosen, &j, |i| [10.0, 5.0, 1.0][i]);
        }
        assert_eq!((a.samples, a.correct), (4, 2));
        assert_eq!(a.too_deep.get(&2), Some(&1));
        assert_eq!(a.too_shallow.get(&2), Some(&1));
        assert_eq!(a.by_state, vec![[1, 0, 0, 1], [1, 1, 0, 0], [2, 1, 1, 0]]);
        // 9 mW too much over 899 µs.
        assert!((a.too_shallow_energy_j - 9.0 * 899e-6 * 1e-3).abs() < 1e-12);
        assert!((a.too_deep_latency_us - 99.0).abs() < 1e-9);
    }
}

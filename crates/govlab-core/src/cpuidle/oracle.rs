//! `oracle`: for every idle period, the ideal state for the time the period
//! actually lasted. No kernel can know that; the oracle is the bound every
//! real governor is measured against (issue 5).
//!
//! Models: no kernel code. Its rule is the accuracy accounting's ideal
//! ([`ideal_state`]): the deepest enabled state whose target residency fits
//! the idle time (entry to the interrupt that ends it, exit latency left
//! out) and whose exit latency meets the latency limit, the "state that
//! aligns with the actual sleep duration" of the 2020 teo weighted-history
//! RFC's accuracy measure (see `wtteo.rs`).
//!
//! # Why hindsight and not look-ahead
//!
//! An idle period ends at the first interrupt: the CPU's own timer, a
//! wakeup sent by a task on another CPU, an IO completion, a kept tick. Most
//! of these depend on the rest of the machine's future, and that future
//! depends on what this CPU does (its state sets how soon a woken task
//! runs, and whether its core counts towards the turbo budget). Looking
//! ahead would mean simulating the future and rewinding it; guessing it from
//! the next timer would just be another governor. So the oracle chooses
//! *in hindsight*: the engine enters idle undecided and asks for the state
//! when the interrupt comes ([`CpuidleGovernor::choose_in_hindsight`]).
//!
//! That gives the run the oracle would have had with the same choice made
//! at entry, because in the engine the moment of the interrupt does not
//! depend on the state, once the four things a state changes are handled
//! (machine/idle.rs, machine/energy.rs):
//!
//! 1. **Energy.** A core draws the power of its shallowest thread's state.
//!    While a thread is undecided its core's ledger is priced with a
//!    provisional state, and each such stretch is settled when every
//!    undecided thread in it has chosen (SMT siblings may both be
//!    undecided). Exact.
//! 2. **Exit latency** is paid after the interrupt, so it is charged for the
//!    state finally chosen: the woken task waits as long as it would have
//!    had the state been chosen at entry, and the accounting's idle time
//!    (residency − that exit latency) is exactly what the oracle was given.
//!    This is why the oracle is never judged wrong.
//! 3. **The tick.** The oracle stops the tick exactly when the idle period
//!    outlasts the next tick, so a kept tick never wakes it. That is decided
//!    when the tick comes: a tick arriving at an undecided CPU stops instead
//!    of waking it. Nothing reads an idle CPU's tick state before its next
//!    tick (schedutil reads `idle_calls` only from hook calls on that CPU,
//!    which an idle CPU does not make), so deciding at the tick is the same
//!    as deciding at entry.
//! 4. **The polling time limit.** A poll normally ends itself after
//!    cpuidle_poll_time(), a safety net for a governor that polled
//!    expecting a short idle and was wrong, and the next select may go
//!    deeper. A governor may set that limit (dev->poll_limit_ns; haltpoll
//!    does). The oracle polls only when no deeper state fits the idle
//!    period, so it needs no safety net: it sets the limit beyond any idle
//!    period, and a poll ends at the interrupt like every other state.
//!    (Keeping the default limit would make the wakeup depend on the state:
//!    a poll cut at the limit starts a new idle period, whereas a deeper
//!    state chosen at entry would not have been cut, and the oracle cannot
//!    know at the limit which of the two the period calls for.)
//!
//! # What is not exact
//!
//! * **The turbo budget.** The package's power controller counts a core as
//!   active while a thread is in C0 or a turbo-active (shallow) state. While
//!   undecided, a thread counts as in the deepest state its idle time so far
//!   already justifies (the final state is at least that deep). That is
//!   exact unless the period ends in a non-turbo-active state and the budget
//!   was evaluated before that state's target residency had passed (at most
//!   100 µs into the period on the Skylake table); it matters only while
//!   some domain of the package asks for a turbo frequency. Being exact
//!   there would need the look-ahead above.
//! * An idle period still open when the run ends takes the ideal state for
//!   the time it lasted so far; it is not judged (nor counted in `usage`,
//!   as for every governor).
//!
//! # The accuracy ideal or the cheapest state (`by`)
//!
//! By default (`by=target`) the oracle takes the accounting's ideal: the
//! kernel's target residency is the vendor's statement of each state's
//! break-even time, and the accuracy measure trusts it. Where that holds
//! (every platform's states but two, tested within ±25 % in
//! tests/it/power.rs) this is also, within that margin, the cheapest
//! state. Where a target residency is firmware policy rather than
//! break-even (POWER8's fastsleep_ at 300 ms, POWER9's stop4 at 10 ms,
//! both far beyond the time after which the model's powers pay off;
//! docs/platforms.md), the ideal is not the cheapest, and a governor that
//! goes deeper than the target allows can use less energy. `by=energy`
//! takes the state that costs least for the idle period it got, as the
//! engine prices it (machine/energy.rs): the state's power over the idle
//! time and its exit latency, plus its entry/exit energy, among the states
//! whose exit latency meets the limit; a tie goes to the shallower state.
//! It is the energy bound (no per-period choice costs less), judged by the
//! accuracy accounting like any governor.
//! * In an ftrace output the `cpu_idle` line of an entry is written when the
//!   state is known, stamped with the entry time, so it may stand after
//!   later lines of other CPUs in the file; a consumer that needs the file
//!   in time order must sort its lines by timestamp.

use super::{ideal_state, CpuidleGovernor, GovernorInfo, IdleDevice, Reflection, SelectArgs, Selection};
use crate::error::Result;
use crate::kernel::BuildCtx;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::{CpuId, IdleState};

/// What "ideal" means: the accounting's (target residencies) or the least
/// energy (see the header).
pub const BY: ParamSpec<BuildCtx> = ParamSpec {
    name: "by",
    unit: "",
    default: ParamDefault::Word("target"),
    range: Range::Choice(&["target", "energy"]),
    help: "target: the deepest state whose target residency fits the idle time (the accuracy ideal); energy: the state costing least energy for it",
};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "oracle",
    description: "knows how long each idle period lasts: the ideal state every time (an upper bound, not a kernel governor)",
    models: "no kernel: the ideal state of the idle accuracy accounting (or the cheapest, by=energy), chosen in hindsight",
    params: &[BY],
    eras: &[],
    patches: &[],
    build,
};

/// The oracle keeps no state: each idle period is judged on its own.
#[derive(Debug, Default)]
pub struct Oracle {
    /// `by=energy`: the cheapest state rather than the accounting's ideal.
    pub by_energy: bool,
}

fn build(spec: &Spec, _ctx: &BuildCtx) -> Result<Box<dyn CpuidleGovernor>> {
    let mut p = Params::new("cpuidle governor oracle", spec);
    let by = p.word(&BY)?;
    p.finish()?;
    Ok(Box::new(Oracle { by_energy: by == "energy" }))
}

/// The enabled state whose exit latency meets the limit and that costs
/// least for an idle period of `idle_ns`: `idle_mw[i]` over the period and
/// the exit, plus the entry/exit energy (the shallowest enabled state when
/// no exit is fast enough, as for the ideal).
pub fn cheapest_state(states: &[IdleState], disabled: &[bool], idle_mw: &[f64], idle_ns: u64, latency_req_ns: u64) -> usize {
    // mW × ns = 1e-6 µJ.
    let cost_uj = |i: usize| idle_mw[i] * (idle_ns + states[i].exit_latency_ns) as f64 * 1e-6 + states[i].entry_exit_uj;
    let mut best: Option<(usize, f64)> = None;
    for i in (0..states.len()).filter(|&i| !disabled[i] && states[i].exit_latency_ns <= latency_req_ns) {
        let c = cost_uj(i);
        if best.map_or(true, |(_, b)| c < b) {
            best = Some((i, c));
        }
    }
    best.map_or_else(|| disabled.iter().position(|&d| !d).unwrap_or(0), |(i, _)| i)
}

impl Oracle {
    fn choose(&self, dev: &IdleDevice<'_>, idle_mw: &[f64], idle_ns: u64, latency_req_ns: u64) -> usize {
        if self.by_energy {
            cheapest_state(dev.states, dev.disabled, idle_mw, idle_ns, latency_req_ns)
        } else {
            ideal_state(dev.states, dev.disabled, idle_ns, latency_req_ns)
        }
    }
}

impl CpuidleGovernor for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }

    fn enable(&mut self, _dev: &IdleDevice<'_>) {}

    /// Not called by the engine (the oracle chooses in hindsight). A caller
    /// driving the governor directly gets the ideal state (by target
    /// residency: `select` knows no powers) for an idle period lasting until
    /// the next timer, with the tick stopped when that is at least a tick
    /// away.
    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        let state = ideal_state(dev.states, dev.disabled, args.sleep_length_ns, args.latency_req_ns);
        let stop_tick = !dev.states[state].polling && args.sleep_length_ns >= args.tick_ns;
        Selection { state, stop_tick }
    }

    fn reflect(&mut self, _dev: &IdleDevice<'_>, _r: &Reflection) {}

    fn tunables(&self) -> Vec<(String, String)> {
        vec![BY.show(if self.by_energy { "energy" } else { "target" })]
    }

    fn chooses_in_hindsight(&self) -> bool {
        true
    }

    /// dev->poll_limit_ns: beyond any idle period (see the header, item 4).
    fn poll_limit_ns(&mut self, _cpu: CpuId, _default_ns: u64) -> u64 {
        u64::MAX
    }

    fn choose_in_hindsight(&mut self, dev: &IdleDevice<'_>, idle_mw: &[f64], idle_ns: u64, latency_req_ns: u64) -> usize {
        self.choose(dev, idle_mw, idle_ns, latency_req_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::testing::*;

    #[test]
    fn picks_the_deepest_state_the_idle_time_fits() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Oracle::default();
        assert!(g.chooses_in_hindsight());
        // Targets: POLL 0, C1 2, C1E 20, C3 100, C6 200, C7s 800, C8 800 µs.
        let picks: Vec<usize> = [0, 1, 2, 19, 20, 99, 100, 199, 200, 799, 800, 50_000]
            .iter()
            .map(|&us| g.choose_in_hindsight(&dev, &[], us * US, u64::MAX))
            .collect();
        assert_eq!(picks, vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 6, 6]);
    }

    #[test]
    fn respects_the_latency_limit_and_disabled_states() {
        let states = skylake();
        let mut disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Oracle::default();
        // 80 µs allows C3 (exit 70) but not C6 (85).
        assert_eq!(g.choose_in_hindsight(&dev, &[], 10 * MS, 80 * US), 3);
        // With C3 and C6 disabled a 300 µs idle gets C1E.
        disabled[3] = true;
        disabled[4] = true;
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        assert_eq!(g.choose_in_hindsight(&dev, &[], 300 * US, u64::MAX), 2);
        // With POLL disabled a 1 µs idle gets the shallowest enabled state.
        disabled[0] = true;
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        assert_eq!(g.choose_in_hindsight(&dev, &[], US, u64::MAX), 1);
    }

    #[test]
    fn select_without_hindsight_sleeps_until_the_next_timer() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Oracle::default();
        assert_eq!(g.select(&dev, &args(10 * MS)), Selection { state: 6, stop_tick: true });
        assert_eq!(g.select(&dev, &args(150 * US)), Selection { state: 3, stop_tick: false });
    }

    #[test]
    fn builds_without_settings_and_rejects_any() {
        let platform = crate::kernel::BuildCtx::of(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap());
        assert_eq!((INFO.build)(&Spec::new("oracle"), &platform).unwrap().name(), "oracle");
        let spec = Spec::parse("oracle:lookahead=1", "cpuidle").unwrap();
        assert!((INFO.build)(&spec, &platform).is_err());
        let spec = Spec::parse("oracle:by=energy", "cpuidle").unwrap();
        assert_eq!((INFO.build)(&spec, &platform).unwrap().tunables(), vec![("by".to_string(), "energy".to_string())]);
        let spec = Spec::parse("oracle:by=joules", "cpuidle").unwrap();
        assert!((INFO.build)(&spec, &platform).is_err());
    }

    /// Two states: a shallow one at 100 mW with no entry/exit energy, a
    /// deep one at 10 mW costing 90 µJ to enter and leave (break-even 1 ms)
    /// but with a firmware target of 10 ms. By target, 5 ms is too short
    /// for the deep state; by energy it is the cheaper, and 0.5 ms is not.
    #[test]
    fn by_energy_takes_the_cheapest_state_not_the_target() {
        let mut states = skylake()[..2].to_vec();
        states[0].exit_latency_ns = 0;
        states[0].entry_exit_uj = 0.0;
        states[0].target_residency_ns = 0;
        states[1].exit_latency_ns = 0;
        states[1].entry_exit_uj = 90.0;
        states[1].target_residency_ns = 10 * MS;
        let mw = [100.0, 10.0];
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut target = Oracle::default();
        let mut energy = Oracle { by_energy: true };
        // 5 ms: shallow 500 µJ, deep 50 + 90 = 140 µJ.
        assert_eq!(target.choose_in_hindsight(&dev, &mw, 5 * MS, u64::MAX), 0);
        assert_eq!(energy.choose_in_hindsight(&dev, &mw, 5 * MS, u64::MAX), 1);
        // 0.5 ms: shallow 50 µJ, deep 5 + 90 = 95 µJ.
        assert_eq!(energy.choose_in_hindsight(&dev, &mw, 500 * US, u64::MAX), 0);
        // A latency limit below the deep state's exit keeps it out.
        states[1].exit_latency_ns = 100 * US;
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        assert_eq!(energy.choose_in_hindsight(&dev, &mw, 5 * MS, 50 * US), 0);
    }
}

//! `ladder`: step one state deeper after repeated long idles, one state
//! shallower after a short one.
//!
//! Models: Linux v6.8 mainline, drivers/cpuidle/governors/ladder.c
//! (ladder_select_state() and ladder_do_selection()). Meant for periodic-tick kernels: it
//! never touches the tick decision, so the idle loop's default (stop the
//! tick) stands.
//!
//! The idea: the governor remembers the state it used last. At each select
//! it looks at how long the last idle period lasted beyond that state's exit
//! latency (r):
//!
//! 1. latency limit 0: go to state 0.
//! 2. r above the last state's promotion time (its exit latency), a deeper
//!    enabled state exists and fits the latency limit: count a promotion;
//!    after PROMOTION_COUNT in a row, go one deeper.
//! 3. the last state became unusable (disabled or over the latency limit):
//!    fall to the deepest shallower state that fits.
//! 4. r below the last state's demotion time (its exit latency): count a
//!    demotion; after DEMOTION_COUNT in a row, go one shallower.
//! 5. otherwise stay.
//!
//! Moving resets the counters of the state left. The polling state is never
//! the ladder's floor when it exists (`first` = 1 then).

use super::{CpuidleGovernor, GovernorInfo, IdleDevice, Reflection, SelectArgs, Selection};
use crate::error::Result;
use crate::kernel::BuildCtx;
use crate::params::{Params, Spec};

/// Consecutive long idles needed to step deeper (ladder.c).
pub const PROMOTION_COUNT: u32 = 4;
/// Consecutive short idles needed to step shallower (ladder.c).
pub const DEMOTION_COUNT: u32 = 1;

pub const INFO: GovernorInfo = GovernorInfo {
    name: "ladder",
    description: "step deeper after repeated long idles, shallower after a short one",
    models: "Linux v6.8 drivers/cpuidle/governors/ladder.c",
    params: &[],
    eras: &[],
    patches: &[],
    build,
};

/// Per-state thresholds and counters (struct ladder_device_state).
#[derive(Debug, Clone, Copy, Default)]
struct LadderState {
    promotion_count: u32,
    demotion_count: u32,
    promotion_time_ns: i64,
    demotion_time_ns: i64,
}

/// Per-CPU state (struct ladder_device).
#[derive(Debug, Clone, Default)]
struct LadderDevice {
    states: Vec<LadderState>,
    last_state_idx: usize,
    last_residency_ns: u64,
}

#[derive(Default)]
pub struct Ladder {
    devices: Vec<LadderDevice>,
}

fn build(spec: &Spec, _ctx: &BuildCtx) -> Result<Box<dyn CpuidleGovernor>> {
    Params::new("cpuidle governor ladder", spec).finish()?;
    Ok(Box::new(Ladder::default()))
}

fn first_idx(dev: &IdleDevice<'_>) -> usize {
    usize::from(dev.states.first().is_some_and(|s| s.polling))
}

impl LadderDevice {
    fn do_selection(&mut self, old: usize, new: usize) -> usize {
        self.states[old].promotion_count = 0;
        self.states[old].demotion_count = 0;
        self.last_state_idx = new;
        new
    }
}

impl CpuidleGovernor for Ladder {
    fn name(&self) -> &'static str {
        "ladder"
    }

    fn enable(&mut self, dev: &IdleDevice<'_>) {
        if self.devices.len() <= dev.cpu {
            self.devices.resize(dev.cpu + 1, LadderDevice::default());
        }
        let first = first_idx(dev);
        let n = dev.states.len();
        let mut ld = LadderDevice {
            states: vec![LadderState::default(); n],
            last_state_idx: first,
            last_residency_ns: 0,
        };
        for i in first..n {
            let exit = dev.states[i].exit_latency_ns as i64;
            let s = &mut ld.states[i];
            s.promotion_count = 0;
            s.demotion_count = 0;
            if i < n - 1 {
                s.promotion_time_ns = exit;
            }
            if i > first {
                s.demotion_time_ns = exit;
            }
        }
        self.devices[dev.cpu] = ld;
    }

    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        let first = first_idx(dev);
        let n = dev.states.len();
        let ld = &mut self.devices[dev.cpu];
        let last = ld.last_state_idx;
        let stop_tick = true;

        if args.latency_req_ns == 0 {
            return Selection { state: ld.do_selection(last, 0), stop_tick };
        }

        let r = ld.last_residency_ns as i64 - dev.states[last].exit_latency_ns as i64;

        // Promotion.
        if last + 1 < n
            && !dev.disabled[last + 1]
            && r > ld.states[last].promotion_time_ns
            && dev.states[last + 1].exit_latency_ns <= args.latency_req_ns
        {
            ld.states[last].promotion_count += 1;
            ld.states[last].demotion_count = 0;
            if ld.states[last].promotion_count >= PROMOTION_COUNT {
                return Selection { state: ld.do_selection(last, last + 1), stop_tick };
            }
        }

        // The last state became unusable.
        if last > first && (dev.disabled[last] || dev.states[last].exit_latency_ns > args.latency_req_ns) {
            let mut i = last - 1;
            while i > first && dev.states[i].exit_latency_ns > args.latency_req_ns {
                i -= 1;
            }
            return Selection { state: ld.do_selection(last, i), stop_tick };
        }

        // Demotion.
        if last > first && r < ld.states[last].demotion_time_ns {
            ld.states[last].demotion_count += 1;
            ld.states[last].promotion_count = 0;
            if ld.states[last].demotion_count >= DEMOTION_COUNT {
                return Selection { state: ld.do_selection(last, last - 1), stop_tick };
            }
        }

        Selection { state: last, stop_tick }
    }

    fn reflect(&mut self, dev: &IdleDevice<'_>, r: &Reflection) {
        let ld = &mut self.devices[dev.cpu];
        if r.state > 0 {
            ld.last_state_idx = r.state;
        }
        ld.last_residency_ns = r.residency_ns;
    }

    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::testing::{args, state};

    /// Long idles promote one step per PROMOTION_COUNT; one short idle demotes.
    #[test]
    fn promotes_after_four_long_idles_and_demotes_after_one_short() {
        let states = [state("POLL", 0, 0, true), state("C1", 2, 2, false), state("C6", 100, 400, false)];
        let disabled = [false; 3];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Ladder::default();
        g.enable(&dev);
        let mut picks = Vec::new();
        let mut state_idx = g.select(&dev, &args(u64::MAX)).state;
        for _ in 0..6 {
            // Each idle lasts 1 ms, far beyond C1's 2 µs exit latency.
            g.reflect(&dev, &Reflection { state: state_idx, residency_ns: 1_000_000, poll_time_limit: false, got_tick: false });
            state_idx = g.select(&dev, &args(u64::MAX)).state;
            picks.push(state_idx);
        }
        // Starts at C1 (state 0 polls); the 4th long idle moves to C6; C6 is
        // the deepest, so it stays.
        assert_eq!(picks, vec![1, 1, 1, 2, 2, 2]);
        // A 50 µs idle in C6 (below its 100 µs exit latency): back to C1 at once.
        g.reflect(&dev, &Reflection { state: 2, residency_ns: 50_000, poll_time_limit: false, got_tick: false });
        assert_eq!(g.select(&dev, &args(u64::MAX)).state, 1);
    }

    #[test]
    fn zero_latency_limit_polls() {
        let states = [state("POLL", 0, 0, true), state("C1", 2, 2, false)];
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Ladder::default();
        g.enable(&dev);
        let a = SelectArgs { latency_req_ns: 0, ..args(u64::MAX) };
        assert_eq!(g.select(&dev, &a).state, 0);
    }
}

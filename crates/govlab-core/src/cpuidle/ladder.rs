//! `ladder`: step one state deeper after repeated long idles, one state
//! shallower after a short one.
//!
//! Models: Linux v6.8 mainline, drivers/cpuidle/governors/ladder.c
//! (ladder_select_state() and ladder_do_selection()). Meant for periodic-tick kernels: it
//! never touches the tick decision, so the idle loop's default (stop the
//! tick) stands.
//!
//! Era notes. From v5.5 ("cpuidle: Use nanoseconds as the unit of time")
//! `last_residency` is an s64 in ns but the promotion and demotion times
//! are u64, so the comparisons are unsigned: an idle shorter than the last
//! state's exit latency (a negative r) reads as huge, counts as a
//! promotion and never as a demotion. "cpuidle: ladder: Fix bogus
//! comparison between s64 and u64" (Zhang Rui, Nov 2022; v6.2, release
//! not confirmed) made the times s64. Versions from 5.5 to 6.1 run the
//! unsigned comparisons (EraId::LadderNs, EraId::LadderSignedCompare);
//! before v5.5 everything was int microseconds, signed, as from v6.2.
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
use crate::kernel::{BuildCtx, EraId};
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
    eras: &[EraId::LadderNs, EraId::LadderSignedCompare],
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
    /// v5.5–v6.1: r is compared with the times as u64 (see the header).
    unsigned_compare: bool,
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpuidleGovernor>> {
    Params::new("cpuidle governor ladder", spec).finish()?;
    let unsigned_compare = ctx.has(EraId::LadderNs) && !ctx.has(EraId::LadderSignedCompare);
    Ok(Box::new(Ladder { unsigned_compare, ..Ladder::default() }))
}

/// `r > t` and `r < t` as ladder_select_state() compares them: signed, or
/// (v5.5–v6.1) with r converted to u64.
fn above(r: i64, t: i64, unsigned: bool) -> bool {
    if unsigned {
        r as u64 > t as u64
    } else {
        r > t
    }
}

fn below(r: i64, t: i64, unsigned: bool) -> bool {
    if unsigned {
        (r as u64) < t as u64
    } else {
        r < t
    }
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
        let unsigned = self.unsigned_compare;
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
            && above(r, ld.states[last].promotion_time_ns, unsigned)
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
        if last > first && below(r, ld.states[last].demotion_time_ns, unsigned) {
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

    /// v5.5–v6.1: an idle shorter than the state's exit latency promotes
    /// (the unsigned comparison); v6.2 and before v5.5 it demotes.
    #[test]
    fn short_idle_promotes_between_v5_5_and_v6_1() {
        let states = [state("POLL", 0, 0, true), state("C1", 2, 2, false), state("C6", 100, 400, false)];
        let disabled = [false; 3];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let run = |version: crate::kernel::Version| {
            let ctx = BuildCtx::new(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap(), crate::kernel::KernelConfig::of(version));
            let mut g = build(&Spec::new("ladder"), &ctx).unwrap();
            g.enable(&dev);
            let mut s = g.select(&dev, &args(u64::MAX)).state;
            // Four long idles take it to C6, then 50 µs idles in C6 (under
            // its 100 µs exit latency: r is negative).
            let mut picks = Vec::new();
            for k in 0..7 {
                let residency_ns = if k < 4 { 1_000_000 } else { 50_000 };
                g.reflect(&dev, &Reflection { state: s, residency_ns, poll_time_limit: false, got_tick: false });
                s = g.select(&dev, &args(u64::MAX)).state;
                picks.push(s);
            }
            picks
        };
        use crate::kernel::Version;
        // 5.7: the very first select already counts a promotion (the
        // residency is still 0, minus C1's 2 µs: negative, so huge), and
        // the short idles in C6 keep promoting at the deepest state, which
        // has nowhere to go: C6 stays.
        assert_eq!(run(Version::new(5, 7)), vec![1, 1, 2, 2, 2, 2, 2]);
        assert_eq!(run(Version::new(6, 8)), vec![1, 1, 1, 2, 1, 1, 1]);
        assert_eq!(run(Version::new(4, 19)), vec![1, 1, 1, 2, 1, 1, 1]);
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

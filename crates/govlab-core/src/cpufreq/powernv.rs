//! powernv-cpufreq's global and local P-states: the frequency follows the
//! governor at once, the chip voltage comes down slowly.
//!
//! Models: Linux v6.8 mainline, drivers/cpufreq/powernv-cpufreq.c
//! (powernv_cpufreq_target_index, calc_global_pstate, queue_gpstate_timer,
//! gpstate_timer_handler), from Akshay Adiga's 2016 patch "Ramp-down
//! global pstate slower than local-pstate" (v4.8).
//!
//! # The idea
//!
//! On POWER8 a core's P-state request (PMCR) has two halves: the *local*
//! P-state sets the core's frequency, the *global* P-state asks for the
//! chip's voltage. Raising the frequency from pmin to pmax takes
//! milliseconds because the chip-wide voltage must rise first; keeping the
//! voltage up makes the next ramp-up a frequency change only. So:
//!
//! 1. A request that is not slower than the current global P-state (a
//!    ramp-up, or the first request) sets both halves to it at once: the
//!    frequency waits for the voltage, and the ramp-down restarts from
//!    here (`highest`).
//! 2. A slower request changes the frequency at once; the global P-state
//!    comes down along a parabola of the time since the ramp-down began:
//!    `pct(t) = t² / 2¹⁸` (t in ms; 15 % at 2 s, 61 % at 4 s, 100 % at
//!    5.12 s) of the way from `highest` to the slowest P-state, but never
//!    below the frequency's own (global ≥ local).
//! 3. While they differ, a deferrable timer revisits the global P-state
//!    every 2 s (the last interval cut to end at 5.12 s; every request that
//!    keeps them apart re-arms it); past 5.12 s, or once they meet, global
//!    = local and the timer stops.
//!
//! The ramp-down's clock (`elapsed_time`) advances by the time since the
//! previous request or timer, so it includes the time the core spent at
//! its frequency before the drop: after more than 5.12 s at one frequency,
//! the first drop takes the voltage straight down with it. That is the
//! kernel's arithmetic, kept as it is.
//!
//! In govlab the global P-state is the OPP whose voltage the core holds its
//! voltage domain at (`machine/dvfs.rs`); the chip's rail runs at
//! the highest voltage any of its cores holds or needs.
//!
//! `global_pstate=off` (platform override) writes global = local on every
//! request: the voltage follows each frequency change and every ramp-up
//! pays the full voltage slew, as before v4.8. The kernel also writes global
//! = local on the fast-switch path (schedutil), and sets the machinery up on
//! POWER8 only: POWER9 platform files say `global_pstate = false`.
//!
//! Left out: times in jiffies (the kernel's ms come from jiffies, so its
//! elapsed times move in ticks; here in exact ms), OCC throttling and the
//! reboot path.
//!
//! This file holds the arithmetic; the per-policy state and the timer, as
//! the running machine keeps them, are in `machine/powernv.rs`.

/// Time for the global P-state to reach the local one, ms (MAX_RAMP_DOWN_TIME).
pub const MAX_RAMP_DOWN_TIME_MS: u64 = 5120;
/// Interval of the ramp-down timer, ms (GPSTATE_TIMER_INTERVAL).
pub const GPSTATE_TIMER_INTERVAL_MS: u64 = 2000;

/// ramp_down_percent: how far down the ramp is after `elapsed_ms`, in %.
pub fn ramp_down_percent(elapsed_ms: u64) -> u64 {
    (elapsed_ms * elapsed_ms) >> 18
}

/// calc_global_pstate (step 2) in OPP indices (0 = slowest): from
/// `highest` towards 0, never slower than `local`.
pub fn calc_global_pstate(elapsed_ms: u64, highest: usize, local: usize) -> usize {
    let down = ramp_down_percent(elapsed_ms) as usize * highest / 100;
    let global = highest.saturating_sub(down);
    global.max(local)
}

/// queue_gpstate_timer's interval, ms (step 3).
pub(crate) fn timer_interval_ms(elapsed_ms: u64) -> u64 {
    if elapsed_ms + GPSTATE_TIMER_INTERVAL_MS > MAX_RAMP_DOWN_TIME_MS {
        MAX_RAMP_DOWN_TIME_MS.saturating_sub(elapsed_ms)
    } else {
        GPSTATE_TIMER_INTERVAL_MS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's parabola: 0 % at 0, 15 % at 2 s, 61 % at 4 s, 100 % at
    /// 5.12 s.
    #[test]
    fn ramp_down_is_a_parabola() {
        assert_eq!([0, 1000, 2000, 4000, 5120].map(ramp_down_percent), [0, 3, 15, 61, 100]);
    }

    /// From P-state 40 (of 0..=40) the global one comes down 15 % by 2 s,
    /// 61 % by 4 s, but never below the local one.
    #[test]
    fn global_stays_at_or_above_local() {
        assert_eq!(calc_global_pstate(0, 40, 0), 40);
        assert_eq!(calc_global_pstate(2000, 40, 0), 34);
        assert_eq!(calc_global_pstate(4000, 40, 0), 16);
        assert_eq!(calc_global_pstate(4000, 40, 20), 20);
        assert_eq!(calc_global_pstate(5120, 40, 3), 3);
    }

    #[test]
    fn timer_fires_every_2_s_and_last_at_5_12_s() {
        assert_eq!(timer_interval_ms(0), 2000);
        assert_eq!(timer_interval_ms(2000), 2000);
        assert_eq!(timer_interval_ms(4000), 1120);
    }
}

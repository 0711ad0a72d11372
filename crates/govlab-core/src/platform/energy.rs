//! Power of a core in each situation: the machine's energy model.
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
//! * while leaving an idle state (its exit latency): that state's power; the
//!   state's `entry_exit_uj` is paid once per wakeup of the core.
//!
//! V is the core's voltage domain's voltage and f its frequency domain's
//! clock. Power is constant between events; the engine integrates it into
//! energy (`machine/energy.rs`).

use crate::platform::{CpuType, IdleState};

/// Dynamic power while busy, mW.
#[inline]
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
#[inline]
pub fn leakage_mw(ct: &CpuType, mv: u32) -> f64 {
    ct.leakage_mw_per_v * f64::from(mv) / 1000.0
}

/// Power of an idle core in `state`, mW.
#[inline]
pub fn idle_mw(ct: &CpuType, state: &IdleState, mv: u32) -> f64 {
    if state.power_gated {
        state.power_mw
    } else {
        state.power_mw + leakage_mw(ct, mv)
    }
}

/// Break-even time of idle state `deeper` against the shallower state
/// `shallower`, ns, at voltage `mv`: the idle period beyond which `deeper`
/// costs less energy, given both states' powers and entry/exit energies
/// (exit latency priced at the state's own power, as the engine does).
/// None when `deeper` draws no less than `shallower` (it never pays off).
pub fn break_even_ns(ct: &CpuType, shallower: usize, deeper: usize, mv: u32) -> Option<f64> {
    let (a, b) = (&ct.idle_states[shallower], &ct.idle_states[deeper]);
    let saving_mw = idle_mw(ct, a, mv) - idle_mw(ct, b, mv);
    if saving_mw <= 0.0 {
        return None;
    }
    // µJ / mW = ms; in ns × 1e6.
    Some((b.entry_exit_uj - a.entry_exit_uj).max(0.0) / saving_mw * 1e6)
}

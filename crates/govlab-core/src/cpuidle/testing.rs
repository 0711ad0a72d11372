//! Shared fixtures for the idle governors' unit tests: a Skylake-like state
//! table and default select arguments.

use super::{CpuidleGovernor, IdleDevice, Reflection, SelectArgs, Selection};
use crate::platform::IdleState;

pub const US: u64 = 1000;
pub const MS: u64 = 1_000_000;

pub fn state(name: &str, exit_us: u64, res_us: u64, polling: bool) -> IdleState {
    IdleState {
        name: name.into(),
        desc: String::new(),
        exit_latency_ns: exit_us * US,
        wake_latency_ns: None,
        target_residency_ns: res_us * US,
        power_mw: 0.0,
        polling,
        power_gated: false,
        entry_exit_uj: 0.0,
        turbo_active: false,
        in_acpi_cst: true,
    }
}

pub fn skylake() -> Vec<IdleState> {
    vec![
        state("POLL", 0, 0, true),
        state("C1", 2, 2, false),
        state("C1E", 10, 20, false),
        state("C3", 70, 100, false),
        state("C6", 85, 200, false),
        state("C7s", 124, 800, false),
        state("C8", 200, 800, false),
    ]
}

pub fn args(sleep_length_ns: u64) -> SelectArgs {
    SelectArgs {
        now_ns: 0,
        sleep_length_ns,
        delta_tick_ns: 4 * MS,
        nr_iowait: 0,
        cpu_util: 0,
        cpu_capacity: 1024,
        latency_req_ns: u64::MAX,
        tick_stopped: false,
        tick_ns: 4 * MS,
    }
}

/// One idle period: select, then a wakeup `idle_ns` after entry (the
/// residency adds the entered state's exit latency, as the engine does).
pub fn cycle(g: &mut impl CpuidleGovernor, dev: &IdleDevice<'_>, a: &SelectArgs, idle_ns: u64) -> Selection {
    let sel = g.select(dev, a);
    let residency_ns = idle_ns + dev.states[sel.state].exit_latency_ns;
    g.reflect(dev, &Reflection { state: sel.state, residency_ns, poll_time_limit: false, got_tick: false });
    sel
}

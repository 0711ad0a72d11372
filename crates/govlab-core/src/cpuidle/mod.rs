//! cpuidle: the idle-governor interface and the registry.
//!
//! When a CPU has nothing to run, the idle loop asks the governor to
//! [`select`](CpuidleGovernor::select) a state from what it knows: the time
//! to the next timer event (the sleep length, assuming the tick is stopped),
//! the time to the next tick, the latency limit, and whether the tick is
//! already stopped. The governor answers with a state and whether to stop
//! the tick. After the CPU wakes, the governor is told what happened
//! ([`reflect`](CpuidleGovernor::reflect)); as in the kernel, reflect only
//! records, and the learning happens at the start of the next select.
//!
//! One governor, `oracle`, is no kernel governor: it chooses in hindsight
//! ([`chooses_in_hindsight`](CpuidleGovernor::chooses_in_hindsight)). The
//! engine then enters idle undecided and asks for the state when the idle
//! period has ended (see `oracle.rs` for why that gives the same run as
//! choosing the state at entry).
//!
//! Glossary: teo = timer events oriented; wtteo = teo with the 2020 RFC's
//! weighted history; QoS = the PM QoS CPU latency limit.

pub mod haltpoll;
pub mod ladder;
pub mod menu;
pub mod oracle;
pub mod teo;
#[cfg(test)]
pub(crate) mod testing;
pub mod wtteo;

use crate::kernel::{BuildCtx, EraId, KernelConfig, Patch};
use crate::error::{Error, Result};
use crate::params::{ParamSpec, Spec};
use crate::platform::{CpuId, IdleState, Platform};

/// A CPU's idle states as the governor sees them.
pub struct IdleDevice<'a> {
    pub cpu: CpuId,
    pub states: &'a [IdleState],
    /// Per-state `disable` (sysfs); a governor must not pick a disabled state.
    pub disabled: &'a [bool],
}

/// What the governor is told at idle entry.
#[derive(Debug, Clone, Copy)]
pub struct SelectArgs {
    pub now_ns: u64,
    /// Time to the next timer event if the tick were stopped
    /// (tick_nohz_get_sleep_length).
    pub sleep_length_ns: u64,
    /// Time to the next programmed event (delta_tick, the kernel's
    /// delta_next): the next tick or the next timer, whichever comes first;
    /// with the tick already stopped, the next timer.
    pub delta_tick_ns: u64,
    /// Latency limit (PM QoS), ns; 0 means "poll only".
    pub latency_req_ns: u64,
    pub tick_stopped: bool,
    pub tick_ns: u64,
    /// Tasks that slept on this CPU waiting for IO (nr_iowait_cpu).
    pub nr_iowait: u32,
    /// CPU utilisation (cpu_util) and capacity, for utilisation-aware
    /// governors.
    pub cpu_util: u64,
    pub cpu_capacity: u64,
}

/// The governor's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub state: usize,
    pub stop_tick: bool,
}

/// What happened, told after the wakeup.
#[derive(Debug, Clone, Copy)]
pub struct Reflection {
    /// The state actually entered.
    pub state: usize,
    /// Measured residency (dev->last_residency_ns): exit time − entry time,
    /// exit latency included.
    pub residency_ns: u64,
    /// The polling state left on its time limit (dev->poll_time_limit).
    pub poll_time_limit: bool,
    /// The wakeup was the scheduler tick (tick_nohz_idle_got_tick).
    pub got_tick: bool,
}

/// A cpuidle governor (one instance for the machine; per-CPU state inside).
pub trait CpuidleGovernor: Send {
    fn name(&self) -> &'static str;
    /// The run's seed, given once before `enable`, for governors that draw
    /// random numbers (derive a stream with `sim::rng::Rng::new(seed,
    /// Stream::Governor)`).
    fn seed(&mut self, _seed: u64) {}
    /// Set up per-CPU state (cpuidle_governor->enable), once per CPU.
    fn enable(&mut self, dev: &IdleDevice<'_>);
    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection;
    fn reflect(&mut self, dev: &IdleDevice<'_>, r: &Reflection);
    fn tunables(&self) -> Vec<(String, String)>;

    /// cpuidle_poll_time(): how long the polling state spins on this CPU.
    /// The kernel keeps the limit in dev->poll_limit_ns: a governor may set
    /// it (haltpoll does), and when it is 0 the first poll caches
    /// `default_ns` there. Governors that leave it alone use the default.
    fn poll_limit_ns(&mut self, _cpu: CpuId, default_ns: u64) -> u64 {
        default_ns
    }

    /// True for a governor that chooses the state when the idle period has
    /// ended (only `oracle`; no kernel can). The engine then never calls
    /// `select` but [`choose_in_hindsight`](Self::choose_in_hindsight).
    fn chooses_in_hindsight(&self) -> bool {
        false
    }

    /// The state for an idle period that lasted `idle_ns` (from entry to the
    /// interrupt that ended it); `idle_mw[i]` is what the CPU's core would
    /// draw in state `i` at its voltage. Called only if
    /// `chooses_in_hindsight`; the default is the shallowest state, for
    /// governors that never are asked.
    fn choose_in_hindsight(&mut self, dev: &IdleDevice<'_>, _idle_mw: &[f64], _idle_ns: u64, _latency_req_ns: u64) -> usize {
        dev.disabled.iter().position(|&d| !d).unwrap_or(0)
    }

    /// An error met during a call, handed over once; the engine stops the
    /// run with it (see [`crate::external`]). Only governors from outside
    /// the crate can fail at run time; built-in ones keep the default.
    fn take_error(&mut self) -> Option<Error> {
        None
    }
}

pub use crate::metrics::idle::ideal_state;

// ---- kernel helpers shared by several governors ----

/// The largest ktime_t (Linux v6.8 include/linux/ktime.h, KTIME_MAX): "no
/// timer".
pub const KTIME_MAX: u64 = i64::MAX as u64;

/// teo_time_ok (Linux v6.8 drivers/cpuidle/governors/teo.c): an interval
/// (a state's target residency, or an expected idle duration) is usable
/// unless the tick is already stopped and the interval is under a tick (a
/// shallow state could then last long).
pub(crate) fn teo_time_ok(args: &SelectArgs, interval_ns: u64) -> bool {
    !args.tick_stopped || interval_ns >= args.tick_ns
}

/// govlab only: the engine forbids disabled states, which the kernel's
/// governors could pick in corner cases (menu and teo when every candidate
/// is disabled, haltpoll never checks). Take the deepest enabled state not
/// deeper than `idx`, else the shallowest enabled one.
pub(crate) fn enabled_state(dev: &IdleDevice<'_>, idx: usize) -> usize {
    if !dev.disabled[idx] {
        return idx;
    }
    (0..idx)
        .rev()
        .chain(idx + 1..dev.states.len())
        .find(|&i| !dev.disabled[i])
        .unwrap_or(idx)
}

/// The idle governor a v6.8 kernel runs when nobody chose one: the
/// registered governor of the highest rating (drivers/cpuidle/governor.c,
/// cpuidle_register_governor), menu's 20 against teo's 19 and ladder's 10
/// (ladder rates itself 25 only without NO_HZ, which no platform here
/// lacks).
pub const DEFAULT_GOVERNOR: &str = "menu";

/// A registry entry, for `govlab list governors`.
pub struct GovernorInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub models: &'static str,
    /// The governor's tunables, declared once (see [`ParamSpec`]).
    pub params: &'static [ParamSpec<BuildCtx>],
    /// The kernel eras that change the governor (for `govlab list
    /// governors --kernel`).
    pub eras: &'static [EraId],
    /// The patches its tunables model.
    pub patches: &'static [Patch],
    /// Build the governor for a run (it reads its era from the context's
    /// kernel).
    pub build: fn(&Spec, &BuildCtx) -> Result<Box<dyn CpuidleGovernor>>,
}

pub fn registry() -> &'static [GovernorInfo] {
    &[ladder::INFO, menu::INFO, teo::INFO, haltpoll::INFO, wtteo::INFO, oracle::INFO]
}

pub fn build(spec: &Spec, platform: &Platform) -> Result<Box<dyn CpuidleGovernor>> {
    build_for(spec, &BuildCtx::of(platform.clone()))
}

/// The idle governors `kernel` has (teo from v5.1, haltpoll from v5.4; the
/// others on every supported version).
#[must_use]
pub fn available(kernel: &KernelConfig) -> Vec<&'static str> {
    registry().iter().map(|g| g.name).filter(|n| kernel.missing_cpuidle_governor(n).is_none()).collect()
}

/// [`build`] for a run of `kernel`: a governor the version does not have
/// yet is refused, naming the version it arrived in and the ones this
/// version has.
pub fn build_for(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpuidleGovernor>> {
    let kernel = &ctx.kernel;
    if let Some(era) = kernel.missing_cpuidle_governor(&spec.name) {
        let why = if spec.name == era.name {
            format!("it arrived in {} ({})", era.first, era.commit)
        } else {
            format!("it patches {}, which arrived in {} ({})", era.name, era.first, era.commit)
        };
        return Err(Error::Unsupported(format!(
            "cpuidle governor {} is not in kernel {}: {why}; kernel {} has {}",
            spec.name,
            kernel.describe(),
            kernel.describe(),
            available(kernel).join(", ")
        )));
    }
    match registry().iter().find(|g| g.name == spec.name) {
        Some(info) => (info.build)(spec, ctx),
        None => Err(Error::UnknownName {
            kind: "cpuidle governor",
            name: spec.name.clone(),
            choices: registry().iter().map(|g| g.name.to_string()).collect(),
        }),
    }
}

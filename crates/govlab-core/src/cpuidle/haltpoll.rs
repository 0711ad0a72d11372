//! `haltpoll`: in a KVM guest, poll before halting, and adapt how long to
//! poll to how long the vCPU usually stays blocked.
//!
//! Models: Linux v6.8 mainline, drivers/cpuidle/governors/haltpoll.c (with
//! the polling state of drivers/cpuidle/poll_state.c): haltpoll_select(),
//! haltpoll_reflect() and adjust_poll_limit(). The kernel registers it only inside a KVM
//! guest (kvm_para_available); govlab offers it on any platform, where it
//! treats state 0 as "poll" and state 1 as "halt", as the cpuidle-haltpoll
//! driver's two-state table does.
//!
//! Era notes. v6.9 (496d0a648509, "cpuidle: haltpoll: do not shrink guest
//! poll_limit_ns below grow_start", adjust_poll_limit()) resets the limit
//! to 0 when a shrink takes it below guest_halt_poll_grow_start; before
//! (v6.8) a shrinking limit keeps halving (200 → 100 → 50 → 25 µs …).
//! Versions from 6.9 run the reset (EraId::HaltpollShrinkToZero).
//!
//! The poll limit is the cpuidle device's `poll_limit_ns`, which the polling
//! state reads through cpuidle_poll_time(): the engine's polling state spins
//! for exactly the limit haltpoll has grown or shrunk. When the limit is 0
//! and the CPU polls anyway (latency limit 0), cpuidle_poll_time() caches
//! its default (the first deeper state's target residency, at most
//! TICK/16) in the same field, which haltpoll then takes as its limit.
//!
//! Left out or approximated:
//! * The kernel never looks at per-state `disable`; the engine forbids
//!   disabled states, so govlab then takes the nearest enabled state.
//! * Learning happens in `reflect`, as in the kernel (unlike menu and teo,
//!   haltpoll has no deferred update).
//!
//! The idea. Halting a vCPU costs a VM exit and a wakeup through the host;
//! spinning a little first avoids that when the wakeup comes soon. The
//! per-CPU poll limit starts at 0 (halt at once) and follows the measured
//! block time of each halt:
//!
//! 1. Latency limit 0: poll, keep the tick.
//! 2. Poll limit 0: halt.
//! 3. The last idle was a poll: if it ran out its time limit (nothing came
//!    within the window), halt; otherwise poll again (keep the tick).
//! 4. The last idle was a halt: poll (keep the tick).
//!
//! After every halt, with `block` its residency:
//!
//! * poll limit < block ≤ guest_halt_poll_ns: a longer poll would have
//!   caught it; grow the limit ×guest_halt_poll_grow, at least to
//!   guest_halt_poll_grow_start and at most guest_halt_poll_ns;
//! * block > guest_halt_poll_ns (and shrinking allowed): polling that long
//!   is not worth it; divide the limit by guest_halt_poll_shrink (0 resets
//!   it to 0).

use super::{enabled_state, CpuidleGovernor, GovernorInfo, IdleDevice, Reflection, SelectArgs, Selection};
use crate::error::Result;
use crate::kernel::{BuildCtx, EraId};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec, UINT_MAX};
use crate::platform::CpuId;

/// Default of guest_halt_poll_ns: the most a vCPU polls, ns (haltpoll.c).
pub const DEF_GUEST_HALT_POLL_NS: u32 = 200_000;
/// Default of guest_halt_poll_shrink: divisor of the limit (haltpoll.c).
pub const DEF_GUEST_HALT_POLL_SHRINK: u32 = 2;
/// Default of guest_halt_poll_grow: multiplier of the limit (haltpoll.c).
pub const DEF_GUEST_HALT_POLL_GROW: u32 = 2;
/// Default of guest_halt_poll_grow_start: the first non-zero limit, ns
/// (haltpoll.c; its comment says µs, the code uses it as ns).
pub const DEF_GUEST_HALT_POLL_GROW_START: u32 = 50_000;
/// Default of guest_halt_poll_allow_shrink (haltpoll.c).
pub const DEF_GUEST_HALT_POLL_ALLOW_SHRINK: bool = true;
/// haltpoll's rating in its ops table (haltpoll.c); govlab picks governors
/// by name, so this is informative only.
pub const RATING: u32 = 9;

// ---- tunables: the module parameters (/sys/module/haltpoll/parameters/*) ----
// All are `uint` (or `bool`) parameters: the kernel's store rejects what
// does not parse as one and checks no range, so neither does govlab.

/// Most a vCPU polls, and the block time beyond which the limit shrinks.
pub const GUEST_HALT_POLL_NS: ParamSpec<BuildCtx> = ParamSpec {
    name: "guest_halt_poll_ns",
    unit: "ns",
    default: ParamDefault::Uint(DEF_GUEST_HALT_POLL_NS as u64),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "ceiling of the per-CPU poll limit, ns; also the block time beyond which the limit shrinks",
};

/// Divisor of the limit after a long block; 0 resets it to 0.
pub const GUEST_HALT_POLL_SHRINK: ParamSpec<BuildCtx> = ParamSpec {
    name: "guest_halt_poll_shrink",
    unit: "",
    default: ParamDefault::Uint(DEF_GUEST_HALT_POLL_SHRINK as u64),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "divisor applied to the poll limit after a long block; 0 resets the limit to 0",
};

/// Multiplier of the limit after a short block (0 or 1 leave the limit at
/// guest_halt_poll_grow_start once reached).
pub const GUEST_HALT_POLL_GROW: ParamSpec<BuildCtx> = ParamSpec {
    name: "guest_halt_poll_grow",
    unit: "",
    default: ParamDefault::Uint(DEF_GUEST_HALT_POLL_GROW as u64),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "multiplier applied to the poll limit after a short block",
};

/// Smallest limit a grow step sets.
pub const GUEST_HALT_POLL_GROW_START: ParamSpec<BuildCtx> = ParamSpec {
    name: "guest_halt_poll_grow_start",
    unit: "ns",
    default: ParamDefault::Uint(DEF_GUEST_HALT_POLL_GROW_START as u64),
    range: Range::Uint { min: 0, max: UINT_MAX },
    help: "the smallest poll limit a grow step sets, ns",
};

/// Whether long blocks shrink the limit.
pub const GUEST_HALT_POLL_ALLOW_SHRINK: ParamSpec<BuildCtx> = ParamSpec {
    name: "guest_halt_poll_allow_shrink",
    unit: "",
    default: ParamDefault::Flag(DEF_GUEST_HALT_POLL_ALLOW_SHRINK),
    range: Range::Bool,
    help: "whether long blocks shrink the poll limit",
};

pub const INFO: GovernorInfo = GovernorInfo {
    name: "haltpoll",
    description: "KVM guest: poll, then halt; the poll window grows on short blocks and shrinks on long ones",
    models: "Linux v6.8 drivers/cpuidle/governors/haltpoll.c",
    params: &[
        GUEST_HALT_POLL_NS,
        GUEST_HALT_POLL_SHRINK,
        GUEST_HALT_POLL_GROW,
        GUEST_HALT_POLL_GROW_START,
        GUEST_HALT_POLL_ALLOW_SHRINK,
    ],
    eras: &[EraId::HaltpollShrinkToZero],
    patches: &[],
    build,
};

/// The module parameters, kernel names and units; each field's default and
/// range are in its [`ParamSpec`] above. Values may change at run time in
/// the kernel and take effect at the next reflect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaltpollTunables {
    /// ns ([`GUEST_HALT_POLL_NS`]).
    pub guest_halt_poll_ns: u32,
    /// [`GUEST_HALT_POLL_SHRINK`].
    pub guest_halt_poll_shrink: u32,
    /// [`GUEST_HALT_POLL_GROW`].
    pub guest_halt_poll_grow: u32,
    /// ns ([`GUEST_HALT_POLL_GROW_START`]).
    pub guest_halt_poll_grow_start: u32,
    /// [`GUEST_HALT_POLL_ALLOW_SHRINK`].
    pub guest_halt_poll_allow_shrink: bool,
}

impl Default for HaltpollTunables {
    fn default() -> Self {
        HaltpollTunables {
            guest_halt_poll_ns: GUEST_HALT_POLL_NS.fixed_default() as u32,
            guest_halt_poll_shrink: GUEST_HALT_POLL_SHRINK.fixed_default() as u32,
            guest_halt_poll_grow: GUEST_HALT_POLL_GROW.fixed_default() as u32,
            guest_halt_poll_grow_start: GUEST_HALT_POLL_GROW_START.fixed_default() as u32,
            guest_halt_poll_allow_shrink: GUEST_HALT_POLL_ALLOW_SHRINK.fixed_default() != 0,
        }
    }
}

impl HaltpollTunables {
    /// Read the tunables from a spec (`haltpoll:guest_halt_poll_ns=100000`),
    /// rejecting unknown keys.
    pub fn from_spec(spec: &Spec, ctx: &BuildCtx) -> Result<Self> {
        let mut p = Params::new("cpuidle governor haltpoll", spec);
        let mut uint = |spec: &ParamSpec<BuildCtx>| -> Result<u32> { Ok(p.uint(spec, ctx)? as u32) };
        let guest_halt_poll_ns = uint(&GUEST_HALT_POLL_NS)?;
        let guest_halt_poll_shrink = uint(&GUEST_HALT_POLL_SHRINK)?;
        let guest_halt_poll_grow = uint(&GUEST_HALT_POLL_GROW)?;
        let guest_halt_poll_grow_start = uint(&GUEST_HALT_POLL_GROW_START)?;
        let t = HaltpollTunables {
            guest_halt_poll_ns,
            guest_halt_poll_shrink,
            guest_halt_poll_grow,
            guest_halt_poll_grow_start,
            guest_halt_poll_allow_shrink: p.flag(&GUEST_HALT_POLL_ALLOW_SHRINK, ctx)?,
        };
        p.finish()?;
        Ok(t)
    }
}

/// The cpuidle_device fields haltpoll owns or reads.
#[derive(Debug, Clone, Copy, Default)]
struct HaltpollDevice {
    /// dev->poll_limit_ns: how long the polling state may spin, ns.
    poll_limit_ns: u64,
    /// dev->last_state_idx: the state entered last.
    last_state_idx: usize,
    /// dev->poll_time_limit: the last poll ended on its time limit.
    poll_time_limit: bool,
}

pub struct Haltpoll {
    tunables: HaltpollTunables,
    devices: Vec<HaltpollDevice>,
    /// v6.9+: a shrink below grow_start resets the limit to 0.
    shrink_to_zero: bool,
}

impl Haltpoll {
    /// haltpoll as in v6.8.
    pub fn new(tunables: HaltpollTunables) -> Self {
        Haltpoll { tunables, devices: Vec::new(), shrink_to_zero: false }
    }
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpuidleGovernor>> {
    let mut g = Haltpoll::new(HaltpollTunables::from_spec(spec, ctx)?);
    g.shrink_to_zero = ctx.has(EraId::HaltpollShrinkToZero);
    Ok(Box::new(g))
}

/// Grow the poll limit after a block the poll window just missed, shrink it
/// after one too long to be worth polling for.
fn adjust_poll_limit(dev: &mut HaltpollDevice, t: &HaltpollTunables, shrink_to_zero: bool, block_ns: u64) {
    let ceiling = u64::from(t.guest_halt_poll_ns);
    if block_ns > dev.poll_limit_ns && block_ns <= ceiling {
        // The kernel computes this into an unsigned int (truncating).
        let mut val = dev.poll_limit_ns.wrapping_mul(u64::from(t.guest_halt_poll_grow)) as u32;
        val = val.max(t.guest_halt_poll_grow_start);
        val = val.min(t.guest_halt_poll_ns);
        dev.poll_limit_ns = u64::from(val);
    } else if block_ns > ceiling && t.guest_halt_poll_allow_shrink {
        let val = dev.poll_limit_ns as u32;
        dev.poll_limit_ns = match t.guest_halt_poll_shrink {
            0 => 0,
            shrink if shrink_to_zero && val / shrink < t.guest_halt_poll_grow_start => 0,
            shrink => u64::from(val / shrink),
        };
    }
}

impl CpuidleGovernor for Haltpoll {
    fn name(&self) -> &'static str {
        "haltpoll"
    }

    /// haltpoll_enable_device: the poll limit starts at 0.
    fn enable(&mut self, dev: &IdleDevice<'_>) {
        if self.devices.len() <= dev.cpu {
            self.devices.resize(dev.cpu + 1, HaltpollDevice::default());
        }
        self.devices[dev.cpu] = HaltpollDevice::default();
    }

    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        let d = &self.devices[dev.cpu];
        let poll = Selection { state: enabled_state(dev, 0), stop_tick: false };

        // 1. Latency limit 0: poll only.
        if dev.states.len() < 2 || args.latency_req_ns == 0 {
            // (A one-state table, never so in the kernel, can only poll.)
            return poll;
        }
        let halt = Selection { state: enabled_state(dev, 1), stop_tick: true };
        // 2. No poll window yet: halt.
        if d.poll_limit_ns == 0 {
            return halt;
        }
        // 3. After a poll: halt if nothing came within the window, else
        //    poll again.
        if d.last_state_idx == 0 {
            return if d.poll_time_limit { halt } else { poll };
        }
        // 4. After a halt: poll.
        poll
    }

    /// cpuidle_poll_time(): dev->poll_limit_ns, the default cached in it
    /// while it is 0.
    fn poll_limit_ns(&mut self, cpu: CpuId, default_ns: u64) -> u64 {
        let d = &mut self.devices[cpu];
        if d.poll_limit_ns == 0 {
            d.poll_limit_ns = default_ns;
        }
        d.poll_limit_ns
    }

    /// haltpoll_reflect: record the state; after a halt, adapt the limit.
    fn reflect(&mut self, dev: &IdleDevice<'_>, r: &Reflection) {
        let d = &mut self.devices[dev.cpu];
        d.last_state_idx = r.state;
        d.poll_time_limit = r.poll_time_limit;
        if r.state != 0 {
            adjust_poll_limit(d, &self.tunables, self.shrink_to_zero, r.residency_ns);
        }
    }

    fn tunables(&self) -> Vec<(String, String)> {
        let t = &self.tunables;
        vec![
            GUEST_HALT_POLL_NS.show(t.guest_halt_poll_ns),
            GUEST_HALT_POLL_SHRINK.show(t.guest_halt_poll_shrink),
            GUEST_HALT_POLL_GROW.show(t.guest_halt_poll_grow),
            GUEST_HALT_POLL_GROW_START.show(t.guest_halt_poll_grow_start),
            GUEST_HALT_POLL_ALLOW_SHRINK.show_flag(t.guest_halt_poll_allow_shrink),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::testing::*;
    use crate::platform::IdleState;

    /// The cpuidle-haltpoll driver's table: poll, then halt (C1-like).
    fn haltpoll_states() -> Vec<IdleState> {
        vec![state("POLL", 0, 0, true), state("C1", 2, 2, false)]
    }

    fn halt(g: &mut Haltpoll, dev: &IdleDevice<'_>, block_ns: u64) -> u64 {
        g.reflect(dev, &Reflection { state: 1, residency_ns: block_ns, poll_time_limit: false, got_tick: false });
        g.devices[0].poll_limit_ns
    }

    #[test]
    fn poll_limit_grows_on_short_blocks_and_shrinks_on_long_ones() {
        let states = haltpoll_states();
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Haltpoll::new(HaltpollTunables::default());
        g.enable(&dev);
        assert_eq!(g.devices[0].poll_limit_ns, 0);
        // Each block is longer than the current limit and ≤ 200 µs.
        let grown: Vec<u64> = [30, 80, 150].iter().map(|&b| halt(&mut g, &dev, b * US)).collect();
        assert_eq!(grown, vec![50 * US, 100 * US, 200 * US]);
        // At the 200 µs ceiling: a 200 µs block is not beyond the limit.
        assert_eq!(halt(&mut g, &dev, 200 * US), 200 * US);
        // Blocks beyond 200 µs halve it, below grow_start too (v6.8).
        let shrunk: Vec<u64> = (0..3).map(|_| halt(&mut g, &dev, 1_000 * US)).collect();
        assert_eq!(shrunk, vec![100 * US, 50 * US, 25 * US]);
        // Polls never adjust it.
        g.reflect(&dev, &Reflection { state: 0, residency_ns: 1_000 * US, poll_time_limit: true, got_tick: false });
        assert_eq!(g.devices[0].poll_limit_ns, 25 * US);
    }

    /// v6.9 (496d0a648509): a shrink below grow_start (50 µs) resets the
    /// limit to 0; v6.8 keeps halving.
    #[test]
    fn shrink_below_grow_start_resets_from_v6_9() {
        let states = haltpoll_states();
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let shrunk = |version| {
            let ctx = BuildCtx::new(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap(), crate::kernel::KernelConfig::of(version));
            let mut g = Haltpoll::new(HaltpollTunables::default());
            g.shrink_to_zero = ctx.has(EraId::HaltpollShrinkToZero);
            g.enable(&dev);
            for b in [30, 80, 150] {
                halt(&mut g, &dev, b * US);
            }
            (0..3).map(|_| halt(&mut g, &dev, 1_000 * US)).collect::<Vec<u64>>()
        };
        use crate::kernel::Version;
        assert_eq!(shrunk(Version::new(6, 8)), vec![100 * US, 50 * US, 25 * US]);
        assert_eq!(shrunk(Version::new(6, 12)), vec![100 * US, 50 * US, 0]);
    }

    #[test]
    fn grow_is_clamped_to_the_ceiling_and_shrink_can_be_disabled() {
        let states = haltpoll_states();
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let spec = Spec::parse("haltpoll:guest_halt_poll_grow=3,guest_halt_poll_allow_shrink=off", "cpuidle").unwrap();
        let mut g = Haltpoll::new(HaltpollTunables::from_spec(&spec, &crate::kernel::BuildCtx::of(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap())).unwrap());
        g.enable(&dev);
        // 0 → 50 (grow_start) → 150 → 450, clamped to 200 µs.
        let grown: Vec<u64> = [10, 60, 160].iter().map(|&b| halt(&mut g, &dev, b * US)).collect();
        assert_eq!(grown, vec![50 * US, 150 * US, 200 * US]);
        assert_eq!(halt(&mut g, &dev, 10_000 * US), 200 * US);
        // shrink = 0 resets the limit.
        let spec = Spec::parse("haltpoll:guest_halt_poll_shrink=0", "cpuidle").unwrap();
        let mut g = Haltpoll::new(HaltpollTunables::from_spec(&spec, &crate::kernel::BuildCtx::of(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap())).unwrap());
        g.enable(&dev);
        halt(&mut g, &dev, 10 * US);
        assert_eq!(halt(&mut g, &dev, 10_000 * US), 0);
    }

    #[test]
    fn selection_follows_the_poll_window() {
        let states = haltpoll_states();
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Haltpoll::new(HaltpollTunables::default());
        g.enable(&dev);
        let poll = Selection { state: 0, stop_tick: false };
        let halt_sel = Selection { state: 1, stop_tick: true };
        // No window yet: halt.
        assert_eq!(g.select(&dev, &args(u64::MAX)), halt_sel);
        // A 30 µs block opens a 50 µs window; after a halt: poll.
        halt(&mut g, &dev, 30 * US);
        assert_eq!(g.select(&dev, &args(u64::MAX)), poll);
        // The poll caught the wakeup: poll again.
        g.reflect(&dev, &Reflection { state: 0, residency_ns: 20 * US, poll_time_limit: false, got_tick: false });
        assert_eq!(g.select(&dev, &args(u64::MAX)), poll);
        // The poll ran out its window: halt.
        g.reflect(&dev, &Reflection { state: 0, residency_ns: 50 * US, poll_time_limit: true, got_tick: false });
        assert_eq!(g.select(&dev, &args(u64::MAX)), halt_sel);
    }

    /// The polling state spins for the device's limit; a 0 limit takes the
    /// default and keeps it, as cpuidle_poll_time() caches it.
    #[test]
    fn poll_time_is_the_device_limit_and_the_default_is_cached() {
        let states = haltpoll_states();
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Haltpoll::new(HaltpollTunables::default());
        g.enable(&dev);
        halt(&mut g, &dev, 30 * US);
        assert_eq!(g.poll_limit_ns(0, 20 * US), 50 * US);
        halt(&mut g, &dev, 80 * US);
        assert_eq!(g.poll_limit_ns(0, 20 * US), 100 * US);
        let mut g = Haltpoll::new(HaltpollTunables::default());
        g.enable(&dev);
        assert_eq!(g.poll_limit_ns(0, 20 * US), 20 * US);
        // Cached: haltpoll now sees a 20 µs window, and a 30 µs block grows
        // it from there.
        assert_eq!(halt(&mut g, &dev, 30 * US), 50 * US);
        let mut g = Haltpoll::new(HaltpollTunables::default());
        g.enable(&dev);
        g.poll_limit_ns(0, 20 * US);
        assert_eq!(halt(&mut g, &dev, 15 * US), 20 * US);
    }

    #[test]
    fn zero_latency_limit_polls() {
        let states = haltpoll_states();
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = Haltpoll::new(HaltpollTunables::default());
        g.enable(&dev);
        // Even with no poll window, which would otherwise halt.
        let a = SelectArgs { latency_req_ns: 0, ..args(u64::MAX) };
        assert_eq!(g.select(&dev, &a), Selection { state: 0, stop_tick: false });
    }

    #[test]
    fn tunables_parse_with_kernel_defaults_and_reject_unknown_keys() {
        let platform = crate::kernel::BuildCtx::of(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap());
        let g = (INFO.build)(&Spec::new("haltpoll"), &platform).unwrap();
        assert_eq!(
            g.tunables(),
            vec![
                ("guest_halt_poll_ns".to_string(), "200000".to_string()),
                ("guest_halt_poll_shrink".to_string(), "2".to_string()),
                ("guest_halt_poll_grow".to_string(), "2".to_string()),
                ("guest_halt_poll_grow_start".to_string(), "50000".to_string()),
                ("guest_halt_poll_allow_shrink".to_string(), "true".to_string()),
            ]
        );
        let spec = Spec::parse("haltpoll:guest_halt_poll_us=1", "cpuidle").unwrap();
        assert!((INFO.build)(&spec, &platform).is_err());
        let spec = Spec::parse("haltpoll:guest_halt_poll_ns=-1", "cpuidle").unwrap();
        assert!((INFO.build)(&spec, &platform).is_err());
        let spec = Spec::parse("haltpoll:guest_halt_poll_ns=4294967296", "cpuidle").unwrap();
        assert!((INFO.build)(&spec, &platform).is_err());
    }
}

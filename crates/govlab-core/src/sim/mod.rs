//! The simulation core: clock, event queue, random streams and the run loop.
//!
//! # Contract
//!
//! * Time is an integer number of nanoseconds since the start of the run
//!   ([`Time`]). Nothing in the engine reads a wall clock.
//! * Future happenings are [`Event`]s in one queue, ordered by
//!   `(time_ns, class, seq)`: earliest first; at equal times by
//!   [`EventClass`] (the order below, written down once, here); after that
//!   by insertion order (`seq` only ever grows). The order is therefore the
//!   same on every machine and every run with the same seed.
//! * Events are never removed from the queue. An event that has been
//!   overtaken (a task's run segment re-timed after a frequency change, a
//!   tick cancelled because the CPU stopped it) carries a generation number
//!   that no longer matches its owner's and is dropped when popped.
//! * Between two events nothing changes but time: energy, busy time,
//!   residencies and PELT clocks are brought up to date in closed form when
//!   the next event touches them, never by stepping.
//! * Randomness comes from [`rng::Rng`] streams split per purpose.
//! * A run ends at its duration or when every task has exited, whichever
//!   comes first; open accounting periods are closed at that instant.
//!
//! The engine itself ([`engine::Engine`]) is built by [`build`] from a
//! [`RunConfig`](crate::api::RunConfig) and driven by [`engine::Engine::run`].

pub mod engine;
pub mod queue;
pub mod rng;

pub use engine::{build, Engine};

/// Simulated time, ns since the start of the run.
pub type Time = u64;

pub const NSEC_PER_USEC: u64 = 1_000;
pub const NSEC_PER_MSEC: u64 = 1_000_000;
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Order of events that fall on the same nanosecond. Hardware state that was
/// already changing settles first, then work that completes, then new
/// wakeups, then periodic housekeeping, and the end of the run last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum EventClass {
    Hardware,
    Completion,
    Wakeup,
    Housekeeping,
    End,
}

/// Something that happens at a point in simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A frequency transition of a domain completes.
    FreqDone { domain: u32, gen: u32 },
    /// A CPU has finished leaving its idle state.
    IdleExitDone { cpu: u32, gen: u32 },
    /// The polling idle state reached its time limit.
    PollLimit { cpu: u32, gen: u32 },
    /// The task running on `cpu` finished its current run segment.
    RunDone { cpu: u32, gen: u32 },
    /// A device finished a request; `slot` indexes its in-flight table.
    IoDone { device: u32, slot: u32 },
    /// A task's sleep or periodic timer expired.
    TaskTimer { task: u32, gen: u32 },
    /// An open-loop request source emits a request.
    Arrival { source: u32 },
    /// The scheduler tick of a CPU.
    Tick { cpu: u32, gen: u32 },
    /// A cpufreq governor's sampling timer for a policy.
    GovTimer { domain: u32, gen: u32 },
    /// The package power controller re-evaluates the turbo limit.
    PcuTick { package: u32 },
    /// A domain's HWP hardware re-evaluates its P-state.
    HwpTick { domain: u32, gen: u32 },
    /// A cpufreq driver's own timer for a policy (powernv's global P-state).
    DriverTimer { domain: u32, gen: u32 },
    /// The run's duration is reached.
    End,
}

impl Event {
    pub fn class(&self) -> EventClass {
        match self {
            Event::FreqDone { .. } | Event::IdleExitDone { .. } | Event::PollLimit { .. } => {
                EventClass::Hardware
            }
            Event::RunDone { .. } | Event::IoDone { .. } => EventClass::Completion,
            Event::TaskTimer { .. } | Event::Arrival { .. } => EventClass::Wakeup,
            Event::Tick { .. }
            | Event::GovTimer { .. }
            | Event::PcuTick { .. }
            | Event::HwpTick { .. }
            | Event::DriverTimer { .. } => EventClass::Housekeeping,
            Event::End => EventClass::End,
        }
    }
}

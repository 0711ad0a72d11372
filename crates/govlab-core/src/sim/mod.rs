//! The simulation core: clock, event queue and random streams. It imports
//! nothing from the rest of the crate; the machine (`machine/`) runs
//! on it.
//!
//! # Contract
//!
//! * Time is an integer number of nanoseconds since the start of the run
//!   ([`Time`]). Nothing in the engine reads a wall clock.
//! * Future happenings are events in one [`queue::EventQueue`], ordered by
//!   `(time_ns, class, seq)`: earliest first; at equal times by the event's
//!   class ([`queue::Queued::class`]; the machine's classes and their order
//!   are written down once, in `machine/event.rs`); after that by insertion
//!   order (`seq` only ever grows). The order is therefore the
//!   same on every machine and every run with the same seed.
//! * An event that has been overtaken (a task's run segment re-timed after
//!   a frequency change, a tick cancelled because the CPU stopped it)
//!   carries a generation number that no longer matches its owner's and is
//!   dropped when popped. An owner may also take its event out of the
//!   queue ([`queue::EventQueue::cancel`]); removing an event changes no
//!   other event's key, so the order of the rest is the same.
//! * Between two events nothing changes but time: energy, busy time,
//!   residencies and PELT clocks are brought up to date in closed form when
//!   the next event touches them, never by stepping.
//! * Randomness comes from [`rng::Rng`] streams split per purpose.
//! * A run ends at its duration or when every task has exited, whichever
//!   comes first; open accounting periods are closed at that instant.
//!
//! The engine itself (`machine::Engine`) is built by `machine::build` from
//! a `RunConfig` and driven by `Engine::run`.

pub mod idmap;
pub mod queue;
pub mod rng;

/// Simulated time, ns since the start of the run.
pub type Time = u64;

/// `ns` as f64, the value `ns as f64` gives: a simulated time or duration
/// stays below 2^63 ns (292 years), where the signed conversion (one
/// instruction on x86-64, against six for the unsigned one) rounds the same
/// integer the same way.
#[inline]
pub fn ns_f64(ns: Time) -> f64 {
    debug_assert!(i64::try_from(ns).is_ok());
    ns as i64 as f64
}

pub const NSEC_PER_USEC: u64 = 1_000;
pub const NSEC_PER_MSEC: u64 = 1_000_000;
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Simulated time for messages: seconds with every nanosecond, `1.000250000 s`.
pub fn time_text(time_ns: Time) -> String {
    format!("{}.{:09} s", time_ns / NSEC_PER_SEC, time_ns % NSEC_PER_SEC)
}

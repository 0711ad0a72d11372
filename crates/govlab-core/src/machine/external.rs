//! Faults that stop a run: the engine's own, and errors kept by a governor
//! from outside the crate ([`crate::external`]), asked for after every
//! event while such a governor runs.

use super::Engine;
use crate::error::Error;

impl Engine {
    /// The engine's own fault, else the first error a governor met (the
    /// run stops with it). The run loop asks only when there is a fault or
    /// an external governor: built-in governors never fail.
    #[cold]
    #[inline(never)]
    pub(crate) fn take_fault(&mut self) -> Option<Error> {
        self.fault
            .take()
            .or_else(|| self.cpufreq.take_error())
            .or_else(|| self.cpuidle.take_error())
    }
}

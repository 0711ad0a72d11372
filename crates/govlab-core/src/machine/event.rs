//! The happenings of a simulated machine, as the event queue
//! ([`crate::sim::queue`]) orders them: interrupts and completions of the
//! hardware (clock transitions, idle exits, IO), the scheduler's work and
//! timers, and the periodic housekeeping of the kernel and firmware.

use crate::sim::queue::Queued;

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
    /// The idle loop's entry code on `cpu` is done (machine/kpath.rs).
    IdleEntryDone { cpu: u32, gen: u32 },
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
    GovTimer { policy: u32, gen: u32 },
    /// The package power controller re-evaluates the turbo limit.
    PcuTick { package: u32 },
    /// The package power controller's power-limit loop (RAPL PL1, the OCC's
    /// power cap) takes a step.
    LimitTick { package: u32 },
    /// A policy's HWP hardware (its logical CPU's) re-evaluates its level.
    HwpTick { policy: u32, gen: u32 },
    /// A cpufreq driver's own timer for a policy (powernv's global P-state).
    DriverTimer { policy: u32, gen: u32 },
    /// The RT bandwidth period timer (sched_rt_period_timer, v6.8).
    RtPeriod { gen: u32 },
    /// A SCHED_DEADLINE task's replenishment timer (dl_task_timer, v6.8).
    DlTimer { task: u32, gen: u32 },
    /// Per-CPU kernel housekeeping (a timer softirq, RCU, vmstat, a kworker
    /// item) comes due on `cpu` (machine/housekeeping.rs).
    Housekeeping { cpu: u32 },
    /// The run's duration is reached.
    End,
}

impl Event {
    #[inline]
    pub fn class(&self) -> EventClass {
        match self {
            Event::FreqDone { .. } | Event::IdleExitDone { .. } | Event::IdleEntryDone { .. } | Event::PollLimit { .. } => {
                EventClass::Hardware
            }
            Event::RunDone { .. } | Event::IoDone { .. } => EventClass::Completion,
            Event::TaskTimer { .. } | Event::Arrival { .. } | Event::DlTimer { .. } => EventClass::Wakeup,
            Event::Tick { .. }
            | Event::GovTimer { .. }
            | Event::PcuTick { .. }
            | Event::LimitTick { .. }
            | Event::HwpTick { .. }
            | Event::DriverTimer { .. }
            | Event::RtPeriod { .. }
            | Event::Housekeeping { .. } => EventClass::Housekeeping,
            Event::End => EventClass::End,
        }
    }
}

impl Queued for Event {
    #[inline]
    fn class(&self) -> u8 {
        Event::class(self) as u8
    }
}

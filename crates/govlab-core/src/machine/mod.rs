//! The simulated machine running the kernel: the [`Engine`] and everything
//! that acts on its state.
//!
//! This is the one layer that knows the whole run. Below it sit the parts it
//! drives, each of which knows nothing of the engine: the governors
//! (`cpufreq`, `cpuidle`) behind their traits, the scheduler's arithmetic
//! (`sched`: PELT, cpumasks, capacity), the workload programs, the trace
//! writer, the hardware description (`platform`) and the event queue and
//! clock (`sim`). Every `impl Engine` block lives here, in a file named after
//! the kernel file or hardware block it stands for:
//!
//! | file | models |
//! |---|---|
//! | `engine.rs` | the run: building it, the event loop, dispatch |
//! | `event.rs` | the events and their order at equal times |
//! | `rq.rs` | task_struct and struct rq as the engine keeps them |
//! | `fair.rs` | kernel/sched/fair.c and core.c: enqueue, dequeue, schedule, tick |
//! | `rt.rs`, `deadline.rs` | kernel/sched/rt.c and deadline.c: the RT and deadline classes, the RT throttle |
//! | `eevdf.rs` | fair.c's EEVDF rules from v6.6: lag, eligibility, placement, deadlines, the pick |
//! | `fair_group.rs` | fair.c's group scheduling (group runqueues and entities, shares) |
//! | `placement.rs`, `capacity.rs`, `asym_packing.rs`, `eas.rs` | fair.c's select_task_rq, energy-aware wakeups and load balancing (misfit, ITMT's asym packing) |
//! | `idle.rs` | kernel/sched/idle.c and drivers/cpuidle/cpuidle.c |
//! | `cpufreq.rs` | drivers/cpufreq/cpufreq.c: policies, governor calls |
//! | `cpufreq_driver.rs`, `powernv.rs` | the scaling drivers' target paths |
//! | `dvfs.rs`, `hwp.rs` | clock, voltage and HWP hardware; a shared clock's resolution of its policies' requests |
//! | `energy.rs` | energy integration |
//! | `housekeeping.rs` | per-CPU kernel work on idle CPUs (timer softirq, RCU, vmstat, kworkers) |
//! | `kpath.rs` | the kernel's own C0 time per wakeup, context switch and idle cycle |
//! | `exec.rs` | the workload interpreter, devices and block IO completion |
//! | `metrics.rs` | collection at the end of the run |
//! | `intervals.rs` | counters per interval (turbostat -i) |
//! | `power_phases.rs` | the package power a shortened run stands for (netperf's `scored_len`) |
//! | `external.rs` | faults of governors from outside the crate |

mod asym_packing;
mod capacity;
#[cfg(test)]
mod amd_pstate_tests;
#[cfg(test)]
mod hybrid_tests;
#[cfg(test)]
mod clock_domain_tests;
#[cfg(test)]
mod tick_scale_tests;
mod deadline;
pub mod eas;
pub(crate) mod eevdf;
#[cfg(test)]
mod eevdf_tests;
#[cfg(test)]
mod intel_cpufreq_tests;
mod fair_group;
#[cfg(test)]
mod pelt_tests;
#[cfg(test)]
mod placement_tests;
mod rt;
#[cfg(test)]
mod sched_class_tests;
#[cfg(test)]
mod eas_tests;
mod cpufreq;
mod cpufreq_driver;
pub(crate) mod dvfs;
pub(crate) mod energy;
pub mod engine;
pub mod event;
pub(crate) mod exec;
mod external;
mod fair;
mod fork;
pub mod housekeeping;
pub(crate) mod hwp;
mod idle;
pub mod kpath;
#[cfg(test)]
mod kpath_tests;
#[cfg(test)]
mod wake_latency_tests;
mod intervals;
mod power_phases;
mod lisa_events;
mod metrics;
mod nohz;
mod placement;
mod rcu;
pub(crate) mod powernv;
pub(crate) mod rq;

pub use engine::{build, Engine, PackageRt, RunParts};
pub use event::{Event, EventClass};

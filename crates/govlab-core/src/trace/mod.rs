//! Traces in and out.
//!
//! Out: govlab's runs written as `trace-cmd report` prints a trace
//! ([`writer`]), so kernel tools and the Perfetto UI open them, or kept in
//! memory as the same [`Event`]s a reader makes of that text; traced:
//! `sched_switch`, `sched_wakeup`, `sched_wakeup_new`, `sched_migrate_task`,
//! `sched_process_exit`, `cpu_frequency`, `cpu_idle`, with the kernel's
//! field names. Each line carries the task current on that CPU (`<idle>-0`
//! when idle), as ftrace does.
//!
//! In: recordings of real machines ([`read`]) as one event stream
//! ([`event`]), analysed by [`stats`]. [`dat_writer`] writes an event stream
//! as trace-cmd's binary trace.dat.

pub mod columns;
pub mod dat_writer;
pub mod event;
pub mod read;
pub mod replay;
pub mod stats;
pub mod timeline;
pub mod writer;

pub use event::{Event, EventKind, Format, Meta, PrevState, SchedSwitch, Trace, CPU_IDLE_EXIT, HEADER_PREFIX, META_KERNEL, META_PLATFORM, META_VERSION, TRACE_FLAG_HARDIRQ, TRACE_FLAG_SOFTIRQ};
pub use read::read_path;
pub use writer::{TraceTo, TraceWriter};

/// Where the real recordings are (`data/real` of the repository, each with
/// its SOURCE.md), for tests and benchmarks: the first `data/real` found in
/// `from` or one of its parents.
#[must_use]
pub fn real_data_dir(from: &std::path::Path) -> Option<std::path::PathBuf> {
    from.ancestors().map(|a| a.join("data/real")).find(|p| p.is_dir())
}

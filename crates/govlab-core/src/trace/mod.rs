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

pub mod dat_writer;
pub mod event;
pub mod read;
pub mod replay;
pub mod stats;
pub mod timeline;
pub mod writer;

pub use event::{Event, EventKind, Format, PrevState, SchedSwitch, Trace, CPU_IDLE_EXIT, TRACE_FLAG_HARDIRQ, TRACE_FLAG_SOFTIRQ};
pub use read::read_path;
pub use writer::{TraceTo, TraceWriter};

/// Where the real recordings of `shared/data/real` are, for tests and
/// benchmarks: beside `from` or one of its parents, else in
/// `$GOVLAB_REAL_DATA`, else in the workspace's `/work/shared/data/real`.
#[must_use]
pub fn real_data_dir(from: &std::path::Path) -> Option<std::path::PathBuf> {
    from.ancestors()
        .map(|a| a.join("shared/data/real"))
        .chain(std::env::var_os("GOVLAB_REAL_DATA").map(std::path::PathBuf::from))
        .chain(std::iter::once(std::path::PathBuf::from("/work/shared/data/real")))
        .find(|p| p.is_dir())
}

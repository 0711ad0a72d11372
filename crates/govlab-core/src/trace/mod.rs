//! ftrace output: govlab's runs written as `trace-cmd report` prints a
//! trace, so kernel tools and the Perfetto UI open them.
//!
//! Written: `sched_switch`, `sched_wakeup`, `sched_wakeup_new`,
//! `sched_migrate_task`, `sched_process_exit`, `cpu_frequency`, `cpu_idle`,
//! with the kernel's field names. Each line carries the task current on
//! that CPU (`<idle>-0` when idle), as ftrace does.

pub mod writer;

pub use writer::TraceWriter;

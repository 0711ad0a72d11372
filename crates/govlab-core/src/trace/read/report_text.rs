//! `trace-cmd report` text.
//!
//! ```text
//! version = 6
//! cpus=6
//!        trace-cmd-6244  [005] 162534.215742: sched_switch:  trace-cmd:6244 [120] x ==> swapper/5:0 [120]
//!           <idle>-0     [005] 162534.215764: cpu_idle:      state=2 cpu_id=5
//! ```
//!
//! The lines follow ftrace's grammar ([`super::ftrace_text`]) without the
//! TGID and flags columns (unless `-l` asked for them); timestamps are
//! rounded to the microsecond. Two things differ: the header (`version = N`,
//! `cpus=N`, `CPU N is empty`), and trace-cmd's sched plugin, which prints
//! `sched_switch` as `comm:pid [prio] STATE ==> comm:pid [prio]` (STATE from
//! the low byte of prev_state: `SDTtZXxW`, `R` when none) and `sched_wakeup`
//! as `comm:pid [prio] success=1 CPU:002`. With `-R` (raw) the kernel's
//! `name=value` fields appear instead; both are read. govlab's own traces
//! start with `cpus=N` and `# govlab: key=value` lines
//! ([`crate::trace::writer::header`]), kept as [`Trace::meta`].

use std::path::Path;

use super::ftrace_text::{parse, Dialect};
use crate::error::Result;
use crate::trace::{Format, Trace};

/// Read `trace-cmd report` text.
pub fn read(text: &str, path: &Path) -> Result<Trace> {
    let parsed = parse(text, path, 0, Dialect::Report)?;
    Ok(super::finish(parsed, Format::ReportText))
}

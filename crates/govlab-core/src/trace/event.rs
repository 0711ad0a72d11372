//! The one in-memory form every trace reader produces.
//!
//! An [`Event`] is what ftrace recorded: when, on which CPU, in the context of
//! which task, and what. The events govlab analyses or replays are typed
//! ([`EventKind`]); every other event is kept as [`EventKind::Other`] with its
//! name and its fields as text, so counts per event type stay complete.

use std::sync::Arc;

/// A task's command name (`comm`), shared between the events that name it.
pub type Comm = Arc<str>;

/// `cpu_idle`'s state on leaving idle: (u32)-1, PWR_EVENT_EXIT in the kernel.
pub const CPU_IDLE_EXIT: u32 = u32::MAX;

/// An event's `common_flags`, the bits the kernel sets as it records the
/// event (`enum trace_flag_type`, include/linux/trace_events.h, v6.x;
/// BH_OFF since v5.18). govlab interprets only the context bits (hardirq,
/// softirq, NMI); the others are kept as read.
pub const TRACE_FLAG_IRQS_OFF: u8 = 0x01;
/// The kernel cannot tell whether interrupts are off (no irqflags tracing).
pub const TRACE_FLAG_IRQS_NOSUPPORT: u8 = 0x02;
pub const TRACE_FLAG_NEED_RESCHED: u8 = 0x04;
/// Recorded in a hardware interrupt handler.
pub const TRACE_FLAG_HARDIRQ: u8 = 0x08;
/// Recorded in a softirq (bottom half).
pub const TRACE_FLAG_SOFTIRQ: u8 = 0x10;
pub const TRACE_FLAG_PREEMPT_RESCHED: u8 = 0x20;
pub const TRACE_FLAG_NMI: u8 = 0x40;
pub const TRACE_FLAG_BH_OFF: u8 = 0x80;

/// `common_flags` from the first three letters of ftrace's latency-format
/// column (`d.h2`, `dnh3.`, `X..1`), as the kernel's trace_print_lat_fmt
/// prints them: irqs off (`d`, `D` with bottom halves off too, `b` bottom
/// halves only, `X` unknown), need-resched (`N`, `n`, `p`), and the context
/// (`h` hardirq, `s` softirq, `H` hardirq inside a softirq, `z` NMI, `Z`
/// NMI inside a hardirq); `.` is none. The preempt-depth digits that follow
/// are checked, not kept. None if the token is not such a column.
pub fn flags_from_latency(token: &str) -> Option<u8> {
    let b = token.as_bytes();
    if !(4..=6).contains(&b.len()) || !b[3..].iter().all(|c| c.is_ascii_hexdigit() || *c == b'.') {
        return None;
    }
    let irqs = match b[0] {
        b'D' => TRACE_FLAG_IRQS_OFF | TRACE_FLAG_BH_OFF,
        b'd' => TRACE_FLAG_IRQS_OFF,
        b'b' => TRACE_FLAG_BH_OFF,
        b'X' => TRACE_FLAG_IRQS_NOSUPPORT,
        b'.' => 0,
        _ => return None,
    };
    // Kernels with lazy preemption (v6.13) add more letters here; they are
    // not the context, so any letter is taken.
    let resched = match b[1] {
        b'N' => TRACE_FLAG_NEED_RESCHED | TRACE_FLAG_PREEMPT_RESCHED,
        b'n' => TRACE_FLAG_NEED_RESCHED,
        b'p' => TRACE_FLAG_PREEMPT_RESCHED,
        c if c.is_ascii_alphabetic() || c == b'.' => 0,
        _ => return None,
    };
    let context = match b[2] {
        b'Z' => TRACE_FLAG_NMI | TRACE_FLAG_HARDIRQ,
        b'z' => TRACE_FLAG_NMI,
        b'H' => TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ,
        b'h' => TRACE_FLAG_HARDIRQ,
        b's' => TRACE_FLAG_SOFTIRQ,
        b'.' => 0,
        _ => return None,
    };
    Some(irqs | resched | context)
}

/// The first three letters of the latency-format column for `flags`, the
/// inverse of [`flags_from_latency`] on those letters.
pub fn latency_letters(flags: u8) -> [char; 3] {
    let has = |f: u8| flags & f != 0;
    let irqs = match (has(TRACE_FLAG_IRQS_OFF), has(TRACE_FLAG_BH_OFF)) {
        (true, true) => 'D',
        (true, false) => 'd',
        (false, true) => 'b',
        _ if has(TRACE_FLAG_IRQS_NOSUPPORT) => 'X',
        _ => '.',
    };
    let resched = match (has(TRACE_FLAG_NEED_RESCHED), has(TRACE_FLAG_PREEMPT_RESCHED)) {
        (true, true) => 'N',
        (true, false) => 'n',
        (false, true) => 'p',
        _ => '.',
    };
    let context = match (has(TRACE_FLAG_NMI), has(TRACE_FLAG_HARDIRQ), has(TRACE_FLAG_SOFTIRQ)) {
        (true, true, _) => 'Z',
        (true, false, _) => 'z',
        (false, true, true) => 'H',
        (false, true, false) => 'h',
        (false, false, true) => 's',
        _ => '.',
    };
    [irqs, resched, context]
}

/// One trace event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Trace clock, ns.
    pub ts_ns: u64,
    /// CPU whose ring buffer recorded the event.
    pub cpu: u32,
    /// The task current on that CPU when the event was recorded (0: idle).
    pub pid: i32,
    /// Its command name; `<idle>` for pid 0, `<...>` when unknown.
    pub comm: Comm,
    /// The kernel's `common_flags` (`TRACE_FLAG_*`): from trace.dat, or
    /// from the latency-format flags column of text (`d.h2`); 0 when the
    /// source does not carry them (`trace-cmd report` without `-l`).
    pub flags: u8,
    pub kind: EventKind,
}

impl Event {
    /// Recorded in interrupt context (hardirq, softirq or NMI): the event
    /// is the interrupt's doing, not the work of the task `pid` it
    /// interrupted.
    pub fn in_irq(&self) -> bool {
        self.flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ | TRACE_FLAG_NMI) != 0
    }
}

/// The events govlab understands, with the kernel's field names.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    SchedSwitch(SchedSwitch),
    /// `sched_wakeup`, or `sched_wakeup_new` when `new`.
    SchedWakeup {
        comm: Comm,
        pid: i32,
        prio: i32,
        target_cpu: u32,
        new: bool,
    },
    SchedMigrateTask {
        comm: Comm,
        pid: i32,
        prio: i32,
        orig_cpu: u32,
        dest_cpu: u32,
    },
    SchedProcessExit {
        comm: Comm,
        pid: i32,
        prio: i32,
    },
    /// `state` is the new frequency in kHz of CPU `cpu_id`.
    CpuFrequency { state: u32, cpu_id: u32 },
    /// `state` is the idle state entered by `cpu_id`, or [`CPU_IDLE_EXIT`].
    CpuIdle { state: u32, cpu_id: u32 },
    /// A `print` event: a `trace_marker` write (`tracing_mark_write`). The
    /// message has no trailing newline.
    Print { message: Box<str> },
    /// Any other event: its name and its fields as the source printed them
    /// (text readers) or as `name=value` pairs in format order (trace.dat).
    Other { name: Comm, fields: Box<str> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct SchedSwitch {
    pub prev_comm: Comm,
    pub prev_pid: i32,
    pub prev_prio: i32,
    pub prev_state: PrevState,
    pub next_comm: Comm,
    pub next_pid: i32,
    pub next_prio: i32,
}

impl EventKind {
    /// The event's name as ftrace knows it (`print` for trace_marker writes).
    pub fn name(&self) -> &str {
        match self {
            EventKind::SchedSwitch(_) => "sched_switch",
            EventKind::SchedWakeup { new: false, .. } => "sched_wakeup",
            EventKind::SchedWakeup { new: true, .. } => "sched_wakeup_new",
            EventKind::SchedMigrateTask { .. } => "sched_migrate_task",
            EventKind::SchedProcessExit { .. } => "sched_process_exit",
            EventKind::CpuFrequency { .. } => "cpu_frequency",
            EventKind::CpuIdle { .. } => "cpu_idle",
            EventKind::Print { .. } => "print",
            EventKind::Other { name, .. } => name,
        }
    }
}

/// The state a task left the CPU in (`sched_switch`'s `prev_state`), as a
/// set of the letters ftrace prints; empty means runnable (`R`).
///
/// Numbers (trace.dat, raw text) are read as trace-cmd's sched_switch plugin
/// reads them: bit i of the low byte is the i-th letter of `SDTtZXxW`, which
/// is the kernel's task-state layout before v4.14. Newer kernels renumbered
/// the bits above D, so for them `T`..`W` from numbers are approximate; `R`,
/// `S` and `D`, all that matters here, are exact on every version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PrevState(u16);

/// Letters in bit order; the first eight are the plugin's table.
const STATE_LETTERS: &[u8] = b"SDTtZXxWKPIN";
/// `+`: preempted while runnable (printed after the letters).
const PREEMPT_BIT: u16 = 1 << 15;

impl PrevState {
    pub const RUNNING: PrevState = PrevState(0);

    /// From the kernel's number, as trace-cmd prints it.
    pub fn from_raw(value: u64) -> PrevState {
        PrevState((value & 0xff) as u16)
    }

    /// The kernel's number as trace-cmd reads it (the low byte; `+` and the
    /// letters beyond `W` are lost).
    pub fn to_raw(self) -> u64 {
        u64::from(self.0 & 0xff)
    }

    /// From ftrace's letters (`S`, `R+`, `D|K`, `x`); None if a letter is
    /// not a task state.
    pub fn from_letters(s: &str) -> Option<PrevState> {
        let mut bits = 0u16;
        for b in s.bytes() {
            match b {
                b'R' | b'|' => {}
                b'+' => bits |= PREEMPT_BIT,
                _ => bits |= 1 << STATE_LETTERS.iter().position(|&l| l == b)?,
            }
        }
        Some(PrevState(bits))
    }

    /// The task could still run: it was preempted, not blocked or dead.
    pub fn is_runnable(self) -> bool {
        self.0 & !PREEMPT_BIT == 0
    }

    /// The task is gone (`Z`, `X`, `x`).
    pub fn is_dead(self) -> bool {
        self.0 & 0b111_0000 != 0
    }
}

impl std::fmt::Display for PrevState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (i, &l) in STATE_LETTERS.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                if !first {
                    f.write_str("|")?;
                }
                first = false;
                write!(f, "{}", l as char)?;
            }
        }
        if first {
            f.write_str("R")?;
        }
        if self.0 & PREEMPT_BIT != 0 {
            f.write_str("+")?;
        }
        Ok(())
    }
}

/// The trace formats govlab reads, and its own runs' in-memory traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `/sys/kernel/tracing/trace` text.
    FtraceText,
    /// `trace-cmd report` text.
    ReportText,
    /// Android systrace HTML with the ftrace text embedded.
    Systrace,
    /// trace-cmd's binary `trace.dat`.
    TraceDat,
    /// Not read: a govlab run's events kept in memory
    /// ([`crate::trace::TraceWriter::memory`]).
    Simulated,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::FtraceText => "ftrace-text",
            Format::ReportText => "trace-cmd-report",
            Format::Systrace => "systrace-html",
            Format::TraceDat => "trace.dat",
            Format::Simulated => "govlab-run",
        }
    }
}

/// A whole trace, events in time order.
#[derive(Debug, Clone)]
pub struct Trace {
    pub format: Format,
    /// CPUs the recording covered (from its header, else the highest seen + 1).
    pub nr_cpus: usize,
    /// Sorted by time; events of equal time keep the order of their CPU
    /// number and then of the source.
    pub events: Vec<Event>,
    /// What the reader skipped or assumed, one sentence each.
    pub notes: Vec<String>,
    /// What the trace says about itself: the `# govlab: key=value` lines of
    /// a govlab trace's header (`version`, `platform`), or what a run
    /// traced to memory would have written there ([`HEADER_PREFIX`]).
    /// Empty for a recording of a real machine.
    pub meta: Meta,
}

/// A trace's header keys and values ([`Trace::meta`]).
pub type Meta = std::collections::BTreeMap<String, String>;

/// How a govlab trace's header lines start: `# govlab: key=value`, one key
/// a line, after the `cpus=N` line. A `#` line is a comment to the readers
/// of `trace-cmd report` text (Perfetto's systrace parser, trappy), so they
/// read the file as before.
pub const HEADER_PREFIX: &str = "# govlab: ";
/// The header key naming the platform a run simulated (a spec text:
/// `skylake-e3-1240v5`, `skylake-e3-1240v5:turbo=0`, or a platform file's
/// absolute path).
pub const META_PLATFORM: &str = "platform";
/// The header key naming the govlab version that wrote the trace.
pub const META_VERSION: &str = "version";
/// The header key naming the kernel a run modelled (`6.8`,
/// `4.16:idle_tick=stopped`: the `--kernel` spec as resolved).
pub const META_KERNEL: &str = "kernel";

impl Trace {
    /// First and last event time, ns (0, 0 when empty).
    pub fn span_ns(&self) -> (u64, u64) {
        match (self.events.first(), self.events.last()) {
            (Some(a), Some(b)) => (a.ts_ns, b.ts_ns),
            _ => (0, 0),
        }
    }

    /// Event counts per event name, sorted by name.
    pub fn counts(&self) -> std::collections::BTreeMap<String, u64> {
        let mut m = std::collections::BTreeMap::new();
        for e in &self.events {
            *m.entry(e.kind.name().to_string()).or_insert(0) += 1;
        }
        m
    }
}

/// Interns command names so that a long trace holds each once.
#[derive(Debug, Default)]
pub(crate) struct Comms {
    map: std::collections::HashMap<Box<[u8]>, Comm>,
}

impl Comms {
    pub(crate) fn get(&mut self, name: &[u8]) -> Comm {
        if let Some(c) = self.map.get(name) {
            return c.clone();
        }
        let c: Comm = Arc::from(String::from_utf8_lossy(name).as_ref());
        self.map.insert(name.into(), c.clone());
        c
    }

    pub(crate) fn get_str(&mut self, name: &str) -> Comm {
        self.get(name.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prev_state_reads_plugin_numbers_and_kernel_letters() {
        assert_eq!(PrevState::from_raw(0).to_string(), "R");
        assert_eq!(PrevState::from_raw(1).to_string(), "S");
        assert_eq!(PrevState::from_raw(2).to_string(), "D");
        assert_eq!(PrevState::from_raw(64).to_string(), "x");
        // A pre-4.14 "preempted" mark (TASK_STATE_MAX) lies above the low byte.
        assert_eq!(PrevState::from_raw(4096).to_string(), "R");
        assert_eq!(PrevState::from_letters("R+").unwrap().to_string(), "R+");
        assert_eq!(PrevState::from_letters("D|K").unwrap().to_string(), "D|K");
        assert_eq!(PrevState::from_letters("S"), Some(PrevState::from_raw(1)));
        assert!(PrevState::from_letters("R+").unwrap().is_runnable());
        assert!(!PrevState::from_letters("S").unwrap().is_runnable());
        assert!(PrevState::from_letters("X").unwrap().is_dead());
        assert_eq!(PrevState::from_letters("Q"), None);
    }

    #[test]
    fn latency_flags_read_as_the_kernel_prints_them() {
        assert_eq!(flags_from_latency("d.h2"), Some(TRACE_FLAG_IRQS_OFF | TRACE_FLAG_HARDIRQ));
        assert_eq!(flags_from_latency("dnh3."), Some(TRACE_FLAG_IRQS_OFF | TRACE_FLAG_NEED_RESCHED | TRACE_FLAG_HARDIRQ));
        assert_eq!(flags_from_latency("..s1"), Some(TRACE_FLAG_SOFTIRQ));
        assert_eq!(flags_from_latency("d.H."), Some(TRACE_FLAG_IRQS_OFF | TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ));
        assert_eq!(flags_from_latency("...."), Some(0));
        for bad in ["d.q2", "538.064912:", "d.h", "d.h2xx", "(-----)"] {
            assert_eq!(flags_from_latency(bad), None, "{bad}");
        }
        for flags in 0..=u8::MAX {
            let [a, b, c] = latency_letters(flags);
            let back = flags_from_latency(&format!("{a}{b}{c}.")).unwrap();
            assert_eq!(latency_letters(back), [a, b, c]);
            let ev = |f| Event { ts_ns: 0, cpu: 0, pid: 0, comm: "x".into(), flags: f, kind: EventKind::Print { message: "".into() } };
            assert_eq!(ev(back).in_irq(), ev(flags).in_irq(), "{flags:#x}");
        }
    }
}

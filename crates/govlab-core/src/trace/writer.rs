//! The engine's trace output: ftrace text to a file, or events in memory.
//!
//! A run traces into a [`TraceWriter`] with one of two sinks ([`TraceTo`]):
//!
//! * **File**: lines of `trace-cmd report -l` text. After the CPU comes
//!   ftrace's latency-format column. Of it govlab knows only the context a
//!   wakeup was raised in: `h` (hardirq) for a task's timer (nanosleep-style
//!   hrtimers expire in the timer interrupt) and an IO completion, `s`
//!   (softirq) for a request arriving from the network (the socket is woken
//!   from NET_RX); `.` for a wakeup by a running task. Whether interrupts
//!   were off it does not model, so that letter is `X` on every line (the
//!   kernel's TRACE_FLAG_IRQS_NOSUPPORT: not known), and need-resched and
//!   the preempt depth are `.`. Lines go through a buffer straight to a
//!   temporary file beside the target and the file is renamed into place
//!   when the run finishes, so memory stays flat however long the run, and
//!   an interrupted or failed run leaves no half-written trace behind.
//! * **Memory**: the same events as [`Event`] values, exactly what the text
//!   reader makes of the file's lines ([`crate::trace::read`]) except that
//!   timestamps keep their nanoseconds (the text prints whole
//!   microseconds, truncated). [`TraceWriter::into_trace`] hands them over
//!   as a [`Trace`] of format [`Format::Simulated`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sched::TaskState;
use crate::trace::event::{latency_letters, Comm, Comms, TRACE_FLAG_IRQS_NOSUPPORT};
use crate::trace::read::sort_events;
use crate::trace::{Event, EventKind, Format, Meta, PrevState, SchedSwitch, Trace, HEADER_PREFIX, META_KERNEL, META_PLATFORM, META_VERSION};

/// Where a run's trace goes.
#[derive(Debug, Clone, Copy)]
pub enum TraceTo<'a> {
    /// ftrace text written to this file.
    File(&'a Path),
    /// [`Event`] values kept in memory ([`TraceWriter::into_trace`]).
    Memory,
}

/// The engine's trace output, to a file or to memory ([`TraceTo`]).
pub struct TraceWriter {
    sink: Sink,
}

enum Sink {
    File(FileSink),
    Memory(MemorySink),
}

/// ftrace text through a buffer to a temporary file.
struct FileSink {
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    /// The task current on each CPU: (comm, pid).
    current: Vec<(String, u32)>,
    error: Option<std::io::Error>,
    line: String,
}

/// The events as the text reader would read them back.
struct MemorySink {
    nr_cpus: usize,
    meta: Meta,
    events: Vec<Event>,
    comms: Comms,
    /// The task current on each CPU: (comm, pid).
    current: Vec<(Comm, i32)>,
    /// `<idle>`, the comm ftrace shows for the idle task.
    idle: Comm,
}

/// A trace file's header: `cpus=N` first (the line Perfetto's trace-type
/// guess takes for `trace-cmd report` text; trace-cmd itself prints a
/// `version = 6` line before it, which Perfetto does not recognise), then
/// one `# govlab: key=value` line per key of `meta`, `version` first, the
/// others in key order. Readers of report text skip `#` lines; govlab's
/// reader keeps them as [`Trace::meta`].
#[must_use]
pub fn header(nr_cpus: usize, meta: &Meta) -> String {
    use std::fmt::Write as _;
    let mut out = format!("cpus={nr_cpus}\n");
    let first = meta.get_key_value(META_VERSION);
    for (k, v) in first.into_iter().chain(meta.iter().filter(|(k, _)| *k != META_VERSION)) {
        let _ = writeln!(out, "{HEADER_PREFIX}{}={}", one_line(k), one_line(v));
    }
    out
}

/// The header of a run's trace on the platform `platform` names (a spec
/// text, as the trace tools take it back): this govlab's version, the kernel
/// (`--kernel` as resolved) and the platform.
#[must_use]
pub fn run_meta(platform: &str, kernel: &str) -> Meta {
    let mut meta = Meta::new();
    meta.insert(META_VERSION.to_string(), env!("CARGO_PKG_VERSION").to_string());
    meta.insert(META_PLATFORM.to_string(), platform.to_string());
    meta.insert(META_KERNEL.to_string(), kernel.to_string());
    meta
}

/// `s` on one line (a header value may not break the header's lines).
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ").trim().to_string()
}

const IDLE: (&str, u32) = ("<idle>", 0);
/// The idle task's `prio` as sched_switch prints it: init_task's
/// (init/init_task.c, v6.8: `MAX_PRIO - 20`), which `fork_idle` copies
/// to each CPU's swapper/N.
const IDLE_PRIO: i32 = crate::sched::DEFAULT_PRIO;

impl TraceWriter {
    /// A trace of `nr_cpus` CPUs to `to`, its header saying `meta`
    /// ([`header`]).
    pub fn open(to: TraceTo<'_>, nr_cpus: usize, meta: &Meta) -> Result<Self> {
        match to {
            TraceTo::File(path) => Self::create(path, nr_cpus, meta),
            TraceTo::Memory => Ok(Self::memory(nr_cpus, meta)),
        }
    }

    /// ftrace text to `path` (in place when [`TraceWriter::flush`] succeeds).
    pub fn create(path: &Path, nr_cpus: usize, meta: &Meta) -> Result<Self> {
        let name = path
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.govlab-tmp"));
        let file = File::create(&tmp).map_err(|e| Error::io(path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let header = header(nr_cpus, meta);
        out.write_all(header.as_bytes()).map_err(|e| Error::io(path, e))?;
        Ok(TraceWriter {
            sink: Sink::File(FileSink {
                out: Some(out),
                tmp,
                path: path.to_path_buf(),
                current: vec![(IDLE.0.to_string(), IDLE.1); nr_cpus],
                error: None,
                line: String::with_capacity(256),
            }),
        })
    }

    /// Events in memory, handed over by [`TraceWriter::into_trace`].
    pub fn memory(nr_cpus: usize, meta: &Meta) -> Self {
        let mut comms = Comms::default();
        let idle = comms.get_str(IDLE.0);
        TraceWriter {
            sink: Sink::Memory(MemorySink {
                nr_cpus,
                meta: meta.iter().map(|(k, v)| (k.clone(), one_line(v))).collect(),
                events: Vec::new(),
                comms,
                current: vec![(idle.clone(), 0); nr_cpus],
                idle,
            }),
        }
    }

    /// The events of a memory trace, in time order; None for a file.
    pub fn into_trace(self) -> Option<Trace> {
        match self.sink {
            Sink::File(_) => None,
            Sink::Memory(m) => {
                let mut events = m.events;
                sort_events(&mut events);
                Some(Trace { format: Format::Simulated, nr_cpus: m.nr_cpus, events, notes: Vec::new(), meta: m.meta })
            }
        }
    }

    /// `prev` and `next` are (comm, pid, prio[, state]); None is the idle
    /// task. Each prio is the task's `p->prio` (machine's `Task::prio`).
    #[allow(clippy::type_complexity)]
    pub fn sched_switch(&mut self, ts: u64, cpu: usize, prev: Option<(&str, u32, i32, TaskState)>, next: Option<(&str, u32, i32)>) {
        match &mut self.sink {
            Sink::File(f) => {
                let idle_name = format!("swapper/{cpu}");
                let (pc, pp, pprio, state) = match prev {
                    Some((c, p, prio, s)) => (c, p, prio, prev_state(s)),
                    None => (idle_name.as_str(), 0, IDLE_PRIO, "R"),
                };
                let (nc, np, nprio) = next.unwrap_or((idle_name.as_str(), 0, IDLE_PRIO));
                f.emit(
                    ts,
                    cpu,
                    0,
                    "sched_switch",
                    format_args!(
                        "prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={state} ==> next_comm={nc} next_pid={np} next_prio={nprio}"
                    ),
                );
                f.current[cpu] = match next {
                    Some((c, p, _)) => (c.to_string(), p),
                    None => (IDLE.0.to_string(), IDLE.1),
                };
            }
            Sink::Memory(m) => {
                let swapper = || format!("swapper/{cpu}");
                let (prev_comm, prev_pid, prev_prio, state) = match prev {
                    Some((c, p, prio, s)) => (m.comms.get_str(c), p, prio, prev_state(s)),
                    None => (m.comms.get_str(&swapper()), 0, IDLE_PRIO, "R"),
                };
                let (next_comm, next_pid, next_prio) = match next {
                    Some((c, p, prio)) => (m.comms.get_str(c), p, prio),
                    None => (m.comms.get_str(&swapper()), 0, IDLE_PRIO),
                };
                let prev_state = PrevState::from_letters(state).unwrap_or(PrevState::RUNNING);
                let kind = EventKind::SchedSwitch(SchedSwitch {
                    prev_comm,
                    prev_pid: prev_pid as i32,
                    prev_prio,
                    prev_state,
                    next_comm: next_comm.clone(),
                    next_pid: next_pid as i32,
                    next_prio,
                });
                m.push(ts, cpu, 0, kind);
                m.current[cpu] = if next.is_some() { (next_comm, next_pid as i32) } else { (m.idle.clone(), 0) };
            }
        }
    }

    /// A wakeup raised on `cpu`; `irq` is the context it was raised in
    /// (0 by the running task, `TRACE_FLAG_HARDIRQ`, `TRACE_FLAG_SOFTIRQ`);
    /// `prio` is the woken task's `p->prio`.
    #[allow(clippy::too_many_arguments)]
    pub fn sched_wakeup(&mut self, ts: u64, cpu: usize, irq: u8, comm: &str, pid: u32, prio: i32, target: usize, new: bool) {
        match &mut self.sink {
            Sink::File(f) => {
                let ev = if new { "sched_wakeup_new" } else { "sched_wakeup" };
                f.emit(ts, cpu, irq, ev, format_args!("comm={comm} pid={pid} prio={prio} target_cpu={target:03}"));
            }
            Sink::Memory(m) => {
                let comm = m.comms.get_str(comm);
                m.push(ts, cpu, irq, EventKind::SchedWakeup { comm, pid: pid as i32, prio, target_cpu: target as u32, new });
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn sched_migrate_task(&mut self, ts: u64, cpu: usize, comm: &str, pid: u32, prio: i32, from: usize, to: usize) {
        match &mut self.sink {
            Sink::File(f) => f.emit(
                ts,
                cpu,
                0,
                "sched_migrate_task",
                format_args!("comm={comm} pid={pid} prio={prio} orig_cpu={from} dest_cpu={to}"),
            ),
            Sink::Memory(m) => {
                let comm = m.comms.get_str(comm);
                let kind = EventKind::SchedMigrateTask { comm, pid: pid as i32, prio, orig_cpu: from as u32, dest_cpu: to as u32 };
                m.push(ts, cpu, 0, kind);
            }
        }
    }

    pub fn sched_process_exit(&mut self, ts: u64, cpu: usize, comm: &str, pid: u32, prio: i32) {
        match &mut self.sink {
            Sink::File(f) => f.emit(ts, cpu, 0, "sched_process_exit", format_args!("comm={comm} pid={pid} prio={prio}")),
            Sink::Memory(m) => {
                let comm = m.comms.get_str(comm);
                m.push(ts, cpu, 0, EventKind::SchedProcessExit { comm, pid: pid as i32, prio });
            }
        }
    }

    pub fn cpu_frequency(&mut self, ts: u64, cpu: usize, khz: u32) {
        match &mut self.sink {
            Sink::File(f) => f.emit(ts, cpu, 0, "cpu_frequency", format_args!("state={khz} cpu_id={cpu}")),
            Sink::Memory(m) => m.push(ts, cpu, 0, EventKind::CpuFrequency { state: khz, cpu_id: cpu as u32 }),
        }
    }

    /// `state` u32::MAX (4294967295) marks the exit from idle, as in ftrace.
    pub fn cpu_idle(&mut self, ts: u64, cpu: usize, state: u32) {
        match &mut self.sink {
            Sink::File(f) => f.emit(ts, cpu, 0, "cpu_idle", format_args!("state={state} cpu_id={cpu}")),
            Sink::Memory(m) => m.push(ts, cpu, 0, EventKind::CpuIdle { state, cpu_id: cpu as u32 }),
        }
    }

    /// A `trace_marker` write, as trace-cmd prints it.
    pub fn print(&mut self, ts: u64, cpu: usize, message: &str) {
        match &mut self.sink {
            Sink::File(f) => f.emit(ts, cpu, 0, "print", format_args!("tracing_mark_write: {message}")),
            Sink::Memory(m) => m.push(ts, cpu, 0, EventKind::Print { message: message.into() }),
        }
    }

    /// An event govlab does not type (a kernel module's, such as LISA's
    /// `sched_pelt_se`): its name and its fields as the module prints them.
    pub fn other(&mut self, ts: u64, cpu: usize, name: &str, fields: &str) {
        match &mut self.sink {
            Sink::File(f) => f.emit(ts, cpu, 0, name, format_args!("{fields}")),
            Sink::Memory(m) => {
                let name = m.comms.get_str(name);
                m.push(ts, cpu, 0, EventKind::Other { name, fields: fields.into() });
            }
        }
    }

    /// A file: flush and move it into place. Memory: nothing to do.
    pub fn flush(&mut self) -> Result<()> {
        match &mut self.sink {
            Sink::File(f) => f.flush(),
            Sink::Memory(_) => Ok(()),
        }
    }
}

impl FileSink {
    /// One line; `irq` is the context bits of the event's flags.
    fn emit(&mut self, ts_ns: u64, cpu: usize, irq: u8, event: &str, fields: std::fmt::Arguments<'_>) {
        use std::fmt::Write as _;
        let (comm, pid) = &self.current[cpu];
        let [a, b, c] = latency_letters(TRACE_FLAG_IRQS_NOSUPPORT | irq);
        self.line.clear();
        let _ = write!(
            self.line,
            "{:>16}-{:<5} [{:03}] {a}{b}{c}. {:>5}.{:06}: {event}:",
            comm,
            pid,
            cpu,
            ts_ns / 1_000_000_000,
            (ts_ns % 1_000_000_000) / 1000,
        );
        // trace-cmd pads "event:" to 21 columns, then one space.
        let pad = 21usize.saturating_sub(event.len() + 1);
        let _ = writeln!(self.line, "{:pad$} {fields}", "");
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(self.line.as_bytes()) {
                self.error.get_or_insert(e);
            }
        }
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(mut out) = self.out.take() {
            if let Err(e) = out.flush() {
                self.error.get_or_insert(e);
            }
        }
        if let Some(e) = self.error.take() {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(Error::io(&self.path, e));
        }
        std::fs::rename(&self.tmp, &self.path).map_err(|e| Error::io(&self.path, e))
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        if self.out.is_some() {
            self.out = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl MemorySink {
    /// One event, in the context of the task current on `cpu`; the flags
    /// are the file's latency column read back.
    fn push(&mut self, ts_ns: u64, cpu: usize, irq: u8, kind: EventKind) {
        let (comm, pid) = self.current[cpu].clone();
        self.events.push(Event { ts_ns, cpu: cpu as u32, pid, comm, flags: TRACE_FLAG_IRQS_NOSUPPORT | irq, kind });
    }
}

fn prev_state(s: TaskState) -> &'static str {
    match s {
        TaskState::Running | TaskState::Runnable => "R+",
        TaskState::Blocked | TaskState::New => "S",
        TaskState::Dead => "X",
    }
}

//! Streaming ftrace text writer.
//!
//! Lines are `trace-cmd report -l` text: after the CPU, ftrace's
//! latency-format column. Of it govlab knows only the context a wakeup was
//! raised in: `h` (hardirq) for a task's timer (nanosleep-style hrtimers
//! expire in the timer interrupt) and an IO completion, `s` (softirq) for a
//! request arriving from the network (the socket is woken from NET_RX);
//! `.` for a wakeup by a running task. Whether interrupts were off it does
//! not model, so that letter is `X` on every line (the kernel's
//! TRACE_FLAG_IRQS_NOSUPPORT: not known), and need-resched and the preempt
//! depth are `.`.
//!
//! Lines go through a buffer straight to a temporary file beside the target
//! and the file is renamed into place when the run finishes, so memory stays
//! flat however long the run, and an interrupted or failed run leaves no
//! half-written trace behind.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sched::TaskState;
use crate::trace::event::{latency_letters, TRACE_FLAG_IRQS_NOSUPPORT};

pub struct TraceWriter {
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    /// The task current on each CPU: (comm, pid).
    current: Vec<(String, u32)>,
    error: Option<std::io::Error>,
    line: String,
}

const IDLE: (&str, u32) = ("<idle>", 0);

impl TraceWriter {
    pub fn create(path: &Path, nr_cpus: usize) -> Result<Self> {
        let name = path
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.govlab-tmp"));
        let file = File::create(&tmp).map_err(|e| Error::io(path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let header = format!("version = 6\ncpus={nr_cpus}\n");
        out.write_all(header.as_bytes()).map_err(|e| Error::io(path, e))?;
        Ok(TraceWriter {
            out: Some(out),
            tmp,
            path: path.to_path_buf(),
            current: vec![(IDLE.0.to_string(), IDLE.1); nr_cpus],
            error: None,
            line: String::with_capacity(256),
        })
    }

    fn emit(&mut self, ts_ns: u64, cpu: usize, event: &str, fields: std::fmt::Arguments<'_>) {
        self.emit_in(ts_ns, cpu, 0, event, fields);
    }

    /// One line; `irq` is the context bits of the event's flags.
    fn emit_in(&mut self, ts_ns: u64, cpu: usize, irq: u8, event: &str, fields: std::fmt::Arguments<'_>) {
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

    pub fn sched_switch(&mut self, ts: u64, cpu: usize, prev: Option<(&str, u32, TaskState)>, next: Option<(&str, u32)>) {
        let idle_name = format!("swapper/{cpu}");
        let (pc, pp, state) = match prev {
            Some((c, p, s)) => (c, p, prev_state(s)),
            None => (idle_name.as_str(), 0, "R"),
        };
        let (nc, np) = next.unwrap_or((idle_name.as_str(), 0));
        self.emit(
            ts,
            cpu,
            "sched_switch",
            format_args!(
                "prev_comm={pc} prev_pid={pp} prev_prio=120 prev_state={state} ==> next_comm={nc} next_pid={np} next_prio=120"
            ),
        );
        self.current[cpu] = match next {
            Some((c, p)) => (c.to_string(), p),
            None => (IDLE.0.to_string(), IDLE.1),
        };
    }

    /// A wakeup raised on `cpu`; `irq` is the context it was raised in
    /// (0 by the running task, `TRACE_FLAG_HARDIRQ`, `TRACE_FLAG_SOFTIRQ`).
    #[allow(clippy::too_many_arguments)]
    pub fn sched_wakeup(&mut self, ts: u64, cpu: usize, irq: u8, comm: &str, pid: u32, target: usize, new: bool) {
        let ev = if new { "sched_wakeup_new" } else { "sched_wakeup" };
        self.emit_in(ts, cpu, irq, ev, format_args!("comm={comm} pid={pid} prio=120 target_cpu={target:03}"));
    }

    pub fn sched_migrate_task(&mut self, ts: u64, cpu: usize, comm: &str, pid: u32, from: usize, to: usize) {
        self.emit(
            ts,
            cpu,
            "sched_migrate_task",
            format_args!("comm={comm} pid={pid} prio=120 orig_cpu={from} dest_cpu={to}"),
        );
    }

    pub fn sched_process_exit(&mut self, ts: u64, cpu: usize, comm: &str, pid: u32) {
        self.emit(ts, cpu, "sched_process_exit", format_args!("comm={comm} pid={pid} prio=120"));
    }

    pub fn cpu_frequency(&mut self, ts: u64, cpu: usize, khz: u32) {
        self.emit(ts, cpu, "cpu_frequency", format_args!("state={khz} cpu_id={cpu}"));
    }

    /// `state` u32::MAX (4294967295) marks the exit from idle, as in ftrace.
    pub fn cpu_idle(&mut self, ts: u64, cpu: usize, state: u32) {
        self.emit(ts, cpu, "cpu_idle", format_args!("state={state} cpu_id={cpu}"));
    }

    /// A `trace_marker` write, as trace-cmd prints it.
    pub fn print(&mut self, ts: u64, cpu: usize, message: &str) {
        self.emit(ts, cpu, "print", format_args!("tracing_mark_write: {message}"));
    }

    /// Flush and move the file into place.
    pub fn flush(&mut self) -> Result<()> {
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

impl Drop for TraceWriter {
    fn drop(&mut self) {
        if self.out.is_some() {
            self.out = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn prev_state(s: TaskState) -> &'static str {
    match s {
        TaskState::Running | TaskState::Runnable => "R+",
        TaskState::Blocked | TaskState::New => "S",
        TaskState::Dead => "X",
    }
}

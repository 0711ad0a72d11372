//! One event type of a [`Trace`] as columns: what a notebook's
//! `Trace.df_event(name)` shows, built here as plain vectors and turned
//! into Arrow arrays by the bindings (the core knows nothing of Arrow).
//!
//! The columns follow LISA's `Trace.df_event` (lisa/trace.py): the time in
//! seconds as `Time` (LISA's index), the common fields `__cpu`, `__pid`,
//! `__comm`, then the event's own fields with the kernel's names, except
//! where LISA renames them: `cpu_frequency`'s `cpu_id`/`state` become
//! `cpu`/`frequency` (LISA's `_sanitize_cpu_frequency`), and `cpu_idle`'s
//! `state` on leaving idle is -1 rather than (u32)-1, as LISA's idle
//! analysis reads it. `sched_switch`'s `prev_state` is the kernel's number
//! as trace-cmd reads it ([`PrevState::to_raw`]).
//!
//! Events govlab does not type (`sched_waking`, `sched_load_se`, ...) are
//! kept as their fields' text; their columns come from its `name=value`
//! pairs, an integer column where every value is an integer, else text.
//!
//! [`PrevState::to_raw`]: crate::trace::PrevState::to_raw

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use crate::trace::event::Comm;
use crate::trace::{Event, EventKind, Trace, CPU_IDLE_EXIT};

/// Text interned as dictionary codes: `values[codes[i]]` is row i's text;
/// every value appears once.
#[derive(Debug, Default, Clone)]
pub struct Dict {
    pub codes: Vec<u32>,
    pub values: Vec<String>,
    /// Codes by the address of the shared text: the readers intern command
    /// names, so nearly every row is found here without hashing its text.
    by_ptr: HashMap<usize, u32, BuildHasherDefault<AddrHasher>>,
    by_text: HashMap<Comm, u32>,
}

impl PartialEq for Dict {
    fn eq(&self, other: &Self) -> bool {
        self.codes.len() == other.codes.len() && (0..self.codes.len()).all(|i| self.get(i) == other.get(i))
    }
}

/// A hasher for addresses: one multiplication (Fibonacci hashing).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Dict {
    fn push(&mut self, text: &Comm) {
        let addr = Arc::as_ptr(text).cast::<u8>() as usize;
        let code = if let Some(&c) = self.by_ptr.get(&addr) {
            c
        } else if let Some(&c) = self.by_text.get(text) {
            c // the same text at another address: not cached, that address may not live on
        } else {
            let c = self.values.len() as u32;
            self.values.push(text.to_string());
            // `by_text` keeps this Arc alive, so its address is not reused while cached.
            self.by_text.insert(text.clone(), c);
            self.by_ptr.insert(addr, c);
            c
        };
        self.codes.push(code);
    }

    /// Row i's text.
    pub fn get(&self, i: usize) -> &str {
        &self.values[self.codes[i] as usize]
    }
}

/// One column's values, one per row.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Repeated text (command names, text fields), dictionary-coded.
    Text(Dict),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::Text(d) => d.codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub values: Values,
}

/// The rows of one event type, column by column (every column as long).
#[derive(Debug, Clone, PartialEq)]
pub struct EventTable {
    pub event: String,
    pub columns: Vec<Column>,
}

impl EventTable {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Values> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.values)
    }
}

/// The columns of the event's own fields, by kind.
#[derive(Clone, Copy)]
enum Fields {
    Switch,
    Wakeup,
    Migrate,
    Exit,
    Frequency,
    Idle,
    Print,
    Other,
}

fn fields_of(name: &str) -> Fields {
    match name {
        "sched_switch" => Fields::Switch,
        "sched_wakeup" | "sched_wakeup_new" => Fields::Wakeup,
        "sched_migrate_task" => Fields::Migrate,
        "sched_process_exit" => Fields::Exit,
        "cpu_frequency" => Fields::Frequency,
        "cpu_idle" => Fields::Idle,
        "print" => Fields::Print,
        _ => Fields::Other,
    }
}

fn ints(names: &[&str], rows: usize) -> Vec<(String, Vec<i64>)> {
    names.iter().map(|n| ((*n).to_string(), Vec::with_capacity(rows))).collect()
}

/// The events named `name` in `trace` as a table (no rows when it has none).
pub fn event_table(trace: &Trace, name: &str) -> EventTable {
    let events: Vec<&Event> = trace.events.iter().filter(|e| e.kind.name() == name).collect();
    let n = events.len();
    let mut time = Vec::with_capacity(n);
    let mut cpu = Vec::with_capacity(n);
    let mut pid = Vec::with_capacity(n);
    let mut comm = Dict::default();
    for e in &events {
        time.push(e.ts_ns as f64 / 1e9);
        cpu.push(i64::from(e.cpu));
        pid.push(i64::from(e.pid));
        comm.push(&e.comm);
    }
    let mut columns = vec![
        Column { name: "Time".into(), values: Values::F64(time) },
        Column { name: "__cpu".into(), values: Values::I64(cpu) },
        Column { name: "__pid".into(), values: Values::I64(pid) },
        Column { name: "__comm".into(), values: Values::Text(comm) },
    ];
    columns.extend(own_columns(&events, fields_of(name)));
    EventTable { event: name.to_string(), columns }
}

/// The event's own fields; text columns first where the kernel prints them first.
fn own_columns(events: &[&Event], kind: Fields) -> Vec<Column> {
    let n = events.len();
    let text = |name: &str, d: Dict| Column { name: name.into(), values: Values::Text(d) };
    let int_cols = |v: Vec<(String, Vec<i64>)>| v.into_iter().map(|(name, v)| Column { name, values: Values::I64(v) });
    match kind {
        Fields::Switch => {
            let (mut prev_comm, mut next_comm) = (Dict::default(), Dict::default());
            let mut i = ints(&["prev_pid", "prev_prio", "prev_state", "next_pid", "next_prio"], n);
            for e in events {
                if let EventKind::SchedSwitch(s) = &e.kind {
                    prev_comm.push(&s.prev_comm);
                    next_comm.push(&s.next_comm);
                    let row = [i64::from(s.prev_pid), i64::from(s.prev_prio), s.prev_state.to_raw() as i64, i64::from(s.next_pid), i64::from(s.next_prio)];
                    for (c, v) in i.iter_mut().zip(row) {
                        c.1.push(v);
                    }
                }
            }
            let mut cols = vec![text("prev_comm", prev_comm)];
            let mut it = int_cols(i);
            cols.extend(it.by_ref().take(3));
            cols.push(text("next_comm", next_comm));
            cols.extend(it);
            cols
        }
        Fields::Wakeup | Fields::Migrate | Fields::Exit => {
            let mut comm = Dict::default();
            let names: &[&str] = match kind {
                Fields::Wakeup => &["pid", "prio", "target_cpu"],
                Fields::Migrate => &["pid", "prio", "orig_cpu", "dest_cpu"],
                _ => &["pid", "prio"],
            };
            let mut i = ints(names, n);
            for e in events {
                let (c, row): (&Comm, Vec<i64>) = match &e.kind {
                    EventKind::SchedWakeup { comm, pid, prio, target_cpu, .. } => (comm, vec![i64::from(*pid), i64::from(*prio), i64::from(*target_cpu)]),
                    EventKind::SchedMigrateTask { comm, pid, prio, orig_cpu, dest_cpu } => {
                        (comm, vec![i64::from(*pid), i64::from(*prio), i64::from(*orig_cpu), i64::from(*dest_cpu)])
                    }
                    EventKind::SchedProcessExit { comm, pid, prio } => (comm, vec![i64::from(*pid), i64::from(*prio)]),
                    _ => continue,
                };
                comm.push(c);
                for (col, v) in i.iter_mut().zip(row) {
                    col.1.push(v);
                }
            }
            let mut cols = vec![text("comm", comm)];
            cols.extend(int_cols(i));
            cols
        }
        Fields::Frequency | Fields::Idle => {
            let idle = matches!(kind, Fields::Idle);
            let (mut cpu, mut state) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for e in events {
                match e.kind {
                    EventKind::CpuFrequency { state: s, cpu_id } => {
                        cpu.push(i64::from(cpu_id));
                        state.push(i64::from(s));
                    }
                    EventKind::CpuIdle { state: s, cpu_id } => {
                        cpu.push(i64::from(cpu_id));
                        state.push(if s == CPU_IDLE_EXIT { -1 } else { i64::from(s) });
                    }
                    _ => {}
                }
            }
            let (c, s) = if idle { ("cpu_id", "state") } else { ("cpu", "frequency") };
            vec![Column { name: c.into(), values: Values::I64(cpu) }, Column { name: s.into(), values: Values::I64(state) }]
        }
        Fields::Print => {
            let mut buf = Dict::default();
            for e in events {
                if let EventKind::Print { message } = &e.kind {
                    buf.push(&Comm::from(&**message));
                }
            }
            vec![text("buf", buf)]
        }
        Fields::Other => other_columns(events),
    }
}

/// Columns from `name=value` field text, in the order the fields first appear.
fn other_columns(events: &[&Event]) -> Vec<Column> {
    let n = events.len();
    let mut order: Vec<String> = Vec::new();
    let mut raw: HashMap<String, Vec<Option<Comm>>> = HashMap::new();
    for (row, e) in events.iter().enumerate() {
        let EventKind::Other { fields, .. } = &e.kind else { continue };
        for (key, value) in field_pairs(fields) {
            let col = raw.entry(key.to_string()).or_insert_with(|| {
                order.push(key.to_string());
                vec![None; n]
            });
            col[row] = Some(Comm::from(value));
        }
    }
    order
        .into_iter()
        .map(|name| {
            let vals = raw.remove(&name).unwrap_or_default();
            let parsed: Option<Vec<i64>> = vals.iter().map(|v| v.as_deref().and_then(parse_int)).collect();
            let values = if let Some(v) = parsed {
                Values::I64(v)
            } else {
                let mut d = Dict::default();
                let empty = Comm::from("");
                for v in &vals {
                    d.push(v.as_ref().unwrap_or(&empty));
                }
                Values::Text(d)
            };
            Column { name, values }
        })
        .collect()
}

/// An integer as ftrace prints one: decimal, or hexadecimal after `0x`.
fn parse_int(s: &str) -> Option<i64> {
    s.strip_prefix("0x").map_or_else(|| s.parse().ok(), |h| i64::from_str_radix(h, 16).ok())
}

/// The `name=value` pairs of an event's field text; a value runs to the
/// next space that is followed by another `name=` (so `comm=kworker/0:1 H`
/// keeps its space).
pub fn field_pairs(text: &str) -> Vec<(&str, &str)> {
    let mut starts: Vec<(usize, usize)> = Vec::new(); // (start of name, index of '=')
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        while at < bytes.len() && bytes[at] == b' ' {
            at += 1;
        }
        let word = at;
        while at < bytes.len() && bytes[at] != b' ' {
            at += 1;
        }
        if let Some(eq) = text[word..at].find('=') {
            let name = &text[word..word + eq];
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                starts.push((word, word + eq));
            }
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, &(s, eq))| {
            let end = starts.get(i + 1).map_or(text.len(), |n| n.0);
            (&text[s..eq], text[eq + 1..end].trim_end())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read::read_bytes;
    use std::path::Path;

    const TEXT: &str = "cpus=2
          <idle>-0     [000]   100.000100: sched_wakeup:         comm=a pid=10 prio=120 target_cpu=000
          <idle>-0     [000]   100.000200: sched_switch:         prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
               a-10    [000]   100.000300: cpu_frequency:        state=800000 cpu_id=0
               a-10    [000]   100.000400: sched_switch:         prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [001]   100.000500: cpu_idle:             state=4294967295 cpu_id=1
          <idle>-0     [001]   100.000600: sched_waking:         comm=kworker/1:1 H pid=20 prio=100 target_cpu=001
";

    fn trace() -> Trace {
        read_bytes(TEXT.as_bytes(), Path::new("t.txt")).unwrap()
    }

    #[test]
    fn sched_switch_has_lisa_columns_row_per_event() {
        let t = event_table(&trace(), "sched_switch");
        assert_eq!(t.rows(), 2);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["Time", "__cpu", "__pid", "__comm", "prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"]
        );
        let Some(Values::Text(next)) = t.column("next_comm") else { panic!() };
        assert_eq!((next.get(0), next.get(1)), ("a", "swapper/0"));
        assert_eq!(t.column("prev_state"), Some(&Values::I64(vec![0, 1])));
        assert_eq!(t.column("Time"), Some(&Values::F64(vec![100.0002, 100.0004])));
    }

    #[test]
    fn frequency_and_idle_follow_lisa_names() {
        let t = event_table(&trace(), "cpu_frequency");
        assert_eq!(t.column("cpu"), Some(&Values::I64(vec![0])));
        assert_eq!(t.column("frequency"), Some(&Values::I64(vec![800_000])));
        let t = event_table(&trace(), "cpu_idle");
        assert_eq!(t.column("state"), Some(&Values::I64(vec![-1])));
        assert_eq!(event_table(&trace(), "sched_load_se").rows(), 0);
    }

    #[test]
    fn untyped_events_split_their_fields() {
        let t = event_table(&trace(), "sched_waking");
        assert_eq!(t.rows(), 1);
        let Some(Values::Text(comm)) = t.column("comm") else { panic!("{t:?}") };
        assert_eq!(comm.get(0), "kworker/1:1 H");
        assert_eq!(t.column("pid"), Some(&Values::I64(vec![20])));
        assert_eq!(t.column("target_cpu"), Some(&Values::I64(vec![1])));
    }
}

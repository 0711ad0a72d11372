//! Raw ftrace text, as `/sys/kernel/tracing/trace` prints it.
//!
//! ```text
//! # tracer: nop
//! #           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION
//!           <idle>-0     (-----) [006] d..2   538.064674: cpu_idle: state=2 cpu_id=6
//!      kworker/0:1-959   [000]   538.064659: sched_switch: prev_comm=... ==> next_comm=...
//! ```
//!
//! A line is the current task as `comm-pid` (the comm may hold spaces and
//! dashes: the pid follows the last dash), an optional `(tgid)`, the CPU in
//! brackets, optional latency flags (`d..2`: read into [`Event::flags`],
//! so a wakeup raised in an interrupt shows as such), the timestamp in seconds with
//! up to nine decimals and a colon, the event name and a colon, then the
//! event's fields as its print format wrote them. `print` events appear under
//! the name of the function that wrote them (`tracing_mark_write: msg`).
//! Lines starting with `#` are header; `#P:N` gives the number of CPUs, and
//! `# govlab: key=value` (govlab's own traces) goes to [`Trace::meta`](crate::trace::Trace::meta).
//! A last line that does not parse is taken for a recording cut while it
//! was written (trappy's `trace_idle_unsorted.txt` ends so): it is skipped
//! with a note; any other bad line is an error naming its line number.
//!
//! The line grammar here is shared with the `trace-cmd report` and systrace
//! readers ([`Dialect`] says which field syntaxes a source may use).

use std::path::Path;

use crate::error::{Error, Result};
use crate::trace::event::{flags_from_latency, Comms, Event, EventKind, PrevState, SchedSwitch, CPU_IDLE_EXIT};

/// Which field syntaxes a source may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Only the kernel's print formats (`prev_comm=... ==> next_comm=...`).
    Ftrace,
    /// Also trace-cmd's sched plugin (`comm:pid [prio] S ==> comm:pid [prio]`).
    Report,
}

/// Events and what the text's header said.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub events: Vec<Event>,
    pub nr_cpus: Option<usize>,
    pub notes: Vec<String>,
    /// `# govlab: key=value` header lines ([`crate::trace::Trace::meta`]).
    pub meta: crate::trace::Meta,
}

/// Read raw ftrace text.
pub fn read(text: &str, path: &Path) -> Result<super::Trace> {
    let parsed = parse(text, path, 0, Dialect::Ftrace)?;
    Ok(super::finish(parsed, crate::trace::Format::FtraceText))
}

/// Parse every line of `text`; `first_line` is the number of lines before
/// it in the file (so errors name the file's line).
pub(crate) fn parse(text: &str, path: &Path, first_line: usize, dialect: Dialect) -> Result<Parsed> {
    let mut out = Parsed::default();
    let mut comms = Comms::default();
    let last = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).last().map_or(0, |(i, _)| i);
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let err = |m: String| Error::trace_line(path, first_line + i + 1, m);
        if line.is_empty() {
            continue;
        }
        if let Some((key, value)) = line.strip_prefix(crate::trace::HEADER_PREFIX).and_then(|kv| kv.split_once('=')) {
            out.meta.insert(key.trim().to_string(), value.trim().to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            if let Some(p) = rest.find("#P:") {
                let n: String = rest[p + 3..].chars().take_while(char::is_ascii_digit).collect();
                out.nr_cpus = n.parse().ok().filter(|&n| n <= super::MAX_CPUS as usize);
            }
            continue;
        }
        if let Some(n) = line.strip_prefix("cpus=") {
            let count = n.trim().parse().ok().filter(|&c| c <= super::MAX_CPUS as usize);
            out.nr_cpus = Some(count.ok_or_else(|| err(format!("bad CPU count '{n}' (at most {})", super::MAX_CPUS)))?);
            continue;
        }
        if is_note(line) {
            continue;
        }
        match parse_line(line, dialect, &mut comms) {
            Ok(ev) => out.events.push(ev),
            // A recording cut while it was written ends in half a line.
            Err(m) if i == last => {
                out.notes.push(format!("line {}: incomplete last line skipped ({m})", first_line + i + 1));
            }
            Err(m) => return Err(err(format!("{m}: '{}'", clip(line)))),
        }
    }
    Ok(out)
}

/// Lines trace-cmd and ftrace add between events.
fn is_note(line: &str) -> bool {
    line.starts_with("version = ")
        || (line.starts_with("CPU ") && line.ends_with(" is empty"))
        || (line.starts_with("CPU:") && line.contains("EVENTS"))
        || line.starts_with("#####")
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(120) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// One event line.
pub(crate) fn parse_line(line: &str, dialect: Dialect, comms: &mut Comms) -> Result<Event, String> {
    let (open, close) = cpu_bracket(line).ok_or("not an ftrace event line (no [CPU] column)")?;
    let cpu = super::cpu_number(line[open + 1..close].parse().map_err(|_| "CPU number out of range")?, "CPU")?;
    let mut task = line[..open].trim_end();
    if task.ends_with(')') {
        let p = task.rfind('(').ok_or("unbalanced '(' in the TGID column")?;
        task = task[..p].trim_end();
    }
    let (comm, pid) = task.rsplit_once('-').ok_or("task column is not comm-pid")?;
    let pid: i32 = pid.parse().map_err(|_| format!("bad pid '{pid}'"))?;
    let comm = comm.trim_start();

    let mut rest = &line[close + 1..];
    let mut ts_ns = None;
    let mut flags = 0;
    for _ in 0..2 {
        let (tok, after) = next_token(rest);
        rest = after;
        if let Some(t) = tok.strip_suffix(':').and_then(parse_ts) {
            ts_ns = Some(t);
            break;
        }
        flags = flags_from_latency(tok).unwrap_or(0);
    }
    let ts_ns = ts_ns.ok_or("no timestamp after the CPU column")?;
    let rest = rest.trim_start();
    let colon = rest.find(':').ok_or("no event name")?;
    let name = &rest[..colon];
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("bad event name '{name}'"));
    }
    let fields = rest[colon + 1..].trim();
    let kind = parse_fields(name, fields, dialect, comms).map_err(|m| format!("{name}: {m}"))?;
    Ok(Event { ts_ns, cpu, pid, comm: comms.get_str(comm), flags, kind })
}

/// The first `[digits]` preceded by a blank (or the line start).
fn cpu_bracket(line: &str) -> Option<(usize, usize)> {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(off) = line[from..].find('[') {
        let open = from + off;
        let mut j = open + 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > open + 1 && j < b.len() && b[j] == b']' && open > 0 && b[open - 1] == b' ' {
            return Some((open, j));
        }
        from = open + 1;
    }
    None
}

fn next_token(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// `SECONDS.FRACTION` (up to nine decimals) to ns.
pub(crate) fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty() || frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

fn parse_fields(name: &str, fields: &str, dialect: Dialect, comms: &mut Comms) -> Result<EventKind, String> {
    Ok(match name {
        "sched_switch" => {
            if fields.starts_with("prev_comm=") || dialect == Dialect::Ftrace {
                EventKind::SchedSwitch(switch_kv(fields, comms)?)
            } else {
                EventKind::SchedSwitch(switch_plugin(fields, comms)?)
            }
        }
        "sched_wakeup" | "sched_wakeup_new" => {
            let new = name == "sched_wakeup_new";
            if fields.starts_with("comm=") || dialect == Dialect::Ftrace {
                let (comm, rest) = str_field(fields, "comm", "pid")?;
                let kv = Kv::new(rest);
                EventKind::SchedWakeup {
                    comm: comms.get_str(comm),
                    pid: kv.num("pid")?,
                    prio: kv.num("prio")?,
                    target_cpu: kv.cpu("target_cpu")?,
                    new,
                }
            } else {
                wakeup_plugin(fields, new, comms)?
            }
        }
        "sched_migrate_task" => {
            let (comm, rest) = str_field(fields, "comm", "pid")?;
            let kv = Kv::new(rest);
            EventKind::SchedMigrateTask {
                comm: comms.get_str(comm),
                pid: kv.num("pid")?,
                prio: kv.num("prio")?,
                orig_cpu: kv.cpu("orig_cpu")?,
                dest_cpu: kv.cpu("dest_cpu")?,
            }
        }
        "sched_process_exit" => {
            let (comm, rest) = str_field(fields, "comm", "pid")?;
            let kv = Kv::new(rest);
            EventKind::SchedProcessExit { comm: comms.get_str(comm), pid: kv.num("pid")?, prio: kv.num("prio")? }
        }
        "cpu_frequency" => {
            let kv = Kv::new(fields);
            EventKind::CpuFrequency { state: kv.num("state")?, cpu_id: kv.cpu("cpu_id")? }
        }
        "cpu_idle" => {
            let kv = Kv::new(fields);
            let state: i64 = kv.num("state")?;
            let state = if state == -1 { CPU_IDLE_EXIT } else { u32::try_from(state).map_err(|_| "state out of range")? };
            EventKind::CpuIdle { state, cpu_id: kv.cpu("cpu_id")? }
        }
        // trace-cmd names the event; its fields start with the writer's symbol.
        "print" => EventKind::Print { message: fields.split_once(": ").map_or(fields, |(_, m)| m).into() },
        // ftrace prints the writer's symbol in place of the event name.
        "tracing_mark_write" => EventKind::Print { message: fields.into() },
        _ => EventKind::Other { name: comms.get_str(name), fields: fields.into() },
    })
}

/// `key=VALUE next=...` where VALUE may hold blanks: VALUE runs to ` next=`.
fn str_field<'a>(s: &'a str, key: &str, next: &str) -> Result<(&'a str, &'a str), String> {
    let v = s
        .strip_prefix(key)
        .and_then(|r| r.strip_prefix('='))
        .ok_or_else(|| format!("expected '{key}=' at the start of the fields"))?;
    let at = v.find(&format!(" {next}=")).ok_or_else(|| format!("no '{next}=' after '{key}='"))?;
    Ok((&v[..at], &v[at + 1..]))
}

/// Blank-separated `key=value` tokens.
struct Kv<'a>(Vec<(&'a str, &'a str)>);

impl<'a> Kv<'a> {
    fn new(s: &'a str) -> Self {
        Kv(s.split_ascii_whitespace().filter_map(|t| t.split_once('=')).collect())
    }

    fn get(&self, key: &str) -> Result<&'a str, String> {
        self.0.iter().find(|(k, _)| *k == key).map(|&(_, v)| v).ok_or_else(|| format!("no field '{key}'"))
    }

    fn cpu(&self, key: &str) -> Result<u32, String> {
        super::cpu_number(self.num(key)?, key)
    }

    fn num<T: std::str::FromStr>(&self, key: &str) -> Result<T, String> {
        let v = self.get(key)?;
        v.parse().map_err(|_| format!("bad value '{v}' for '{key}'"))
    }
}

fn prev_state(v: &str) -> Result<PrevState, String> {
    if v.bytes().all(|b| b.is_ascii_digit()) {
        v.parse().map(PrevState::from_raw).map_err(|_| format!("bad prev_state '{v}'"))
    } else {
        PrevState::from_letters(v).ok_or_else(|| format!("bad prev_state '{v}'"))
    }
}

/// `prev_comm=A prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=B next_pid=2 next_prio=120`
/// (raw output, `trace-cmd report -R`, has no `==>`).
fn switch_kv(s: &str, comms: &mut Comms) -> Result<SchedSwitch, String> {
    let (prev, next) = match s.split_once("==>") {
        Some(pn) => pn,
        None => s.split_at(s.find(" next_comm=").ok_or("no '==>' nor 'next_comm='")?),
    };
    let (prev_comm, rest) = str_field(prev.trim(), "prev_comm", "prev_pid")?;
    let p = Kv::new(rest);
    let (next_comm, rest) = str_field(next.trim(), "next_comm", "next_pid")?;
    let n = Kv::new(rest);
    Ok(SchedSwitch {
        prev_comm: comms.get_str(prev_comm),
        prev_pid: p.num("prev_pid")?,
        prev_prio: p.num("prev_prio")?,
        prev_state: prev_state(p.get("prev_state")?)?,
        next_comm: comms.get_str(next_comm),
        next_pid: n.num("next_pid")?,
        next_prio: n.num("next_prio")?,
    })
}

/// `comm:pid [prio]` and what follows it.
fn plugin_task(s: &str) -> Result<(&str, i32, i32, &str), String> {
    let open = s.rfind(" [").ok_or("no ' [prio]'")?;
    let close = open + s[open..].find(']').ok_or("no ']' after the priority")?;
    let (comm, pid) = s[..open].rsplit_once(':').ok_or("task is not comm:pid")?;
    let pid = pid.parse().map_err(|_| format!("bad pid '{pid}'"))?;
    let prio = s[open + 2..close].parse().map_err(|_| "bad priority")?;
    Ok((comm, pid, prio, s[close + 1..].trim()))
}

/// trace-cmd's plugin: `A:1 [120] S ==> B:2 [120]`.
fn switch_plugin(s: &str, comms: &mut Comms) -> Result<SchedSwitch, String> {
    let (prev, next) = s.split_once(" ==> ").ok_or("no '==>'")?;
    let (prev_comm, prev_pid, prev_prio, state) = plugin_task(prev.trim())?;
    let (next_comm, next_pid, next_prio, _) = plugin_task(next.trim())?;
    Ok(SchedSwitch {
        prev_comm: comms.get_str(prev_comm),
        prev_pid,
        prev_prio,
        prev_state: prev_state(state)?,
        next_comm: comms.get_str(next_comm),
        next_pid,
        next_prio,
    })
}

/// trace-cmd's plugin: `comm:pid [prio] success=1 CPU:002`.
fn wakeup_plugin(s: &str, new: bool, comms: &mut Comms) -> Result<EventKind, String> {
    // The comm may itself contain " [": take the bracket before "CPU:".
    let at = s.rfind(" CPU:").ok_or("no 'CPU:'")?;
    let target_cpu = super::cpu_number(s[at + 5..].trim().parse().map_err(|_| "bad target CPU")?, "target CPU")?;
    let head = s[..at].trim_end();
    let head = match head.rfind(" success=") {
        Some(p) => &head[..p],
        None => head,
    };
    let (comm, pid, prio, _) = plugin_task(head)?;
    Ok(EventKind::SchedWakeup { comm: comms.get_str(comm), pid, prio, target_cpu, new })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Event {
        parse_line(s, Dialect::Report, &mut Comms::default()).unwrap()
    }

    #[test]
    fn systrace_line_with_tgid_and_flags() {
        let e = line("kworker/u17:1-959   (  959) [006] d..3   538.064659: sched_switch: prev_comm=kworker/u17:1 prev_pid=959 prev_prio=100 prev_state=S ==> next_comm=swapper/6 next_pid=0 next_prio=120");
        assert_eq!((e.ts_ns, e.cpu, e.pid, &*e.comm), (538_064_659_000, 6, 959, "kworker/u17:1"));
        let EventKind::SchedSwitch(s) = e.kind else { panic!() };
        assert_eq!((&*s.prev_comm, s.prev_pid, s.prev_prio, s.prev_state.to_string()), ("kworker/u17:1", 959, 100, "S".into()));
        assert_eq!((&*s.next_comm, s.next_pid, s.next_prio), ("swapper/6", 0, 120));
        assert_eq!(e.flags, crate::trace::event::TRACE_FLAG_IRQS_OFF);
        let e = line("<idle>-0     (-----) [006] dnh3   538.064931: sched_wakeup: comm=kworker/u17:1 pid=959 prio=100 target_cpu=006");
        assert!(e.in_irq());
        let e = line("a-1 [000] 1.0: cpu_idle: state=1 cpu_id=0");
        assert_eq!(e.flags, 0);
    }

    #[test]
    fn comm_with_blanks_and_dashes() {
        let e = line("   rs:main Q:Reg-238   [003] 162534.217965: sched_switch:         rs:main Q:Reg:238 [120] S ==> systemd-journal:161 [120]");
        assert_eq!((&*e.comm, e.pid), ("rs:main Q:Reg", 238));
        let EventKind::SchedSwitch(s) = e.kind else { panic!() };
        assert_eq!((&*s.prev_comm, s.prev_pid, &*s.next_comm, s.next_pid), ("rs:main Q:Reg", 238, "systemd-journal", 161));
        let e = line("  <...>-15430 [006]  7115.449594: sched_switch: prev_comm=a b prev_pid=1 prev_prio=120 prev_state=64 next_comm=c-d next_pid=2 next_prio=120");
        let EventKind::SchedSwitch(s) = e.kind else { panic!() };
        assert_eq!((&*s.prev_comm, s.prev_state.to_string(), &*s.next_comm), ("a b", "x".into(), "c-d"));
    }

    #[test]
    fn wakeups_in_both_syntaxes() {
        let a = line("<idle>-0 [002] 76.211513: sched_wakeup: comm=sh pid=1642 prio=120 success=1 target_cpu=2");
        let b = line("<idle>-0 [002] 76.211513: sched_wakeup: sh:1642 [120] success=1 CPU:002");
        assert_eq!(a, b);
        let EventKind::SchedWakeup { target_cpu, pid, .. } = a.kind else { panic!() };
        assert_eq!((target_cpu, pid), (2, 1642));
    }

    #[test]
    fn idle_exit_frequency_and_markers() {
        let e = line("<idle>-0 [002] 1.5: cpu_idle: state=4294967295 cpu_id=2");
        assert_eq!(e.kind, EventKind::CpuIdle { state: CPU_IDLE_EXIT, cpu_id: 2 });
        assert_eq!(e.ts_ns, 1_500_000_000);
        let e = line("sugov:0-1842 [003] 2084.143680: cpu_frequency: state=850000 cpu_id=0");
        assert_eq!(e.kind, EventKind::CpuFrequency { state: 850_000, cpu_id: 0 });
        let e = line("sh-1702 [005] 76.368433: print: 0xffff00000819ff24s: TRACE_MARKER_START");
        assert_eq!(e.kind, EventKind::Print { message: "TRACE_MARKER_START".into() });
        let e = line("<7952>-7952  (-----) [000] ...1   538.064761: tracing_mark_write: trace_event_clock_sync: parent_ts=538.064758");
        assert_eq!(e.kind, EventKind::Print { message: "trace_event_clock_sync: parent_ts=538.064758".into() });
        assert_eq!(&*e.comm, "<7952>");
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let bad = |s: &str| parse_line(s, Dialect::Report, &mut Comms::default()).unwrap_err();
        assert!(bad("hello world").contains("no [CPU] column"));
        assert!(bad("a-1 [000] soon: cpu_idle: state=1 cpu_id=0").contains("timestamp"));
        assert!(bad("a-1 [000] 1.0: cpu_idle: state=x cpu_id=0").contains("bad value 'x' for 'state'"));
        assert!(bad("a-1 [000] 1.0: sched_switch: prev_comm=a").contains("next_comm"));
        assert!(bad("a-x [000] 1.0: cpu_idle: state=1 cpu_id=0").contains("bad pid"));
        assert!(bad("a-1 [99999] 1.0: cpu_idle: state=1 cpu_id=0").contains("CPU 99999 is not a CPU number"));
        assert!(bad("a-1 [000] 1.0: cpu_idle: state=1 cpu_id=4000000000").contains("cpu_id 4000000000 is not"));
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts("1.000000001"), Some(1_000_000_001));
        assert_eq!(parse_ts("162534.215742"), Some(162_534_215_742_000));
        assert_eq!(parse_ts("1.0000000001"), None);
        assert_eq!(parse_ts("1."), None);
        assert_eq!(parse_ts("99999999999999999999.0"), None);
    }
}

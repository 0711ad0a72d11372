//! Writing a [`Trace`] as a trace-cmd `trace.dat` (version 6, little endian),
//! the layout [`super::read::dat`] describes, so that govlab's runs (and
//! converted text traces) open in trace-cmd and KernelShark, and so the
//! reader can be tested on every page feature and timed on large files.
//!
//! The event formats written are those of Linux v6.x's `sched`, `power` and
//! `ftrace` events (field names, types and offsets as in
//! `/sys/kernel/tracing/events/*/*/format` on a 64-bit kernel), so
//! trace-cmd's own plugins print them. Pages are 4 KiB; an event goes to a
//! new page when it does not fit; a gap of 2^27 ns or more between two
//! events of a CPU gets a time-extend record; records longer than 112 bytes
//! carry their length in a second word (type_len 0). Events govlab does not
//! type ([`EventKind::Other`]) are not written: their formats are unknown.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::event::{Event, EventKind, Trace, CPU_IDLE_EXIT};
use crate::error::{Error, Result};

const PAGE_SIZE: usize = 4096;
/// Page header: u64 timestamp, u64 commit.
const PAGE_HEADER: usize = 16;
const TS_SHIFT: u32 = 27;
const TYPE_TIME_EXTEND: u32 = 30;
/// Largest record whose length fits the 5-bit type_len (28 words).
const MAX_SMALL_RECORD: usize = 28 * 4;
/// Largest record a page holds with its header, a time extend and a length word.
const MAX_RECORD: usize = PAGE_SIZE - PAGE_HEADER - 16;

/// (system, name, id, fields after the common ones, print fmt)
const FORMATS: [(&str, &str, u16, &str, &str); 8] = [
    ("ftrace", "print", 5, "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n", "\"%ps: %s\", (void *)REC->ip, REC->buf"),
    ("sched", "sched_switch", 316, "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n", "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state, REC->next_comm, REC->next_pid, REC->next_prio"),
    ("sched", "sched_wakeup", 318, WAKEUP_FIELDS, WAKEUP_FMT),
    ("sched", "sched_wakeup_new", 317, WAKEUP_FIELDS, WAKEUP_FMT),
    ("sched", "sched_migrate_task", 315, "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:int orig_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\tfield:int dest_cpu;\toffset:36;\tsize:4;\tsigned:1;\n", "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu"),
    ("sched", "sched_process_exit", 311, "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n", "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio"),
    ("power", "cpu_idle", 440, POWER_FIELDS, "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id"),
    ("power", "cpu_frequency", 437, POWER_FIELDS, "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id"),
];
const WAKEUP_FIELDS: &str = "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n";
const WAKEUP_FMT: &str = "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";
const POWER_FIELDS: &str = "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n";
const COMMON_FIELDS: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

fn id_of(name: &str) -> u16 {
    FORMATS.iter().find(|f| f.1 == name).map_or(0, |f| f.2)
}

/// Write `trace` to `path` as trace.dat version 6.
pub fn write_dat(trace: &Trace, path: &Path) -> Result<()> {
    let bytes = to_dat(trace)?;
    let mut f = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(&bytes).map_err(|e| Error::io(path, e))
}

/// The trace.dat bytes of `trace`.
pub fn to_dat(trace: &Trace) -> Result<Vec<u8>> {
    let nr_cpus = trace.nr_cpus.max(1);
    let mut pages: Vec<Pages> = (0..nr_cpus).map(|_| Pages::default()).collect();
    let mut cmdlines: HashMap<i32, &str> = HashMap::new();
    let mut rec = Vec::with_capacity(256);
    for e in &trace.events {
        let cpu = e.cpu as usize;
        if cpu >= nr_cpus {
            return Err(Error::invalid("trace.dat writer", "cpu", e.cpu, format!("below the trace's {nr_cpus} CPUs")));
        }
        if e.pid != 0 {
            cmdlines.entry(e.pid).or_insert(&e.comm);
        }
        record(e, &mut rec)?;
        pages[cpu].push(e.ts_ns, &rec);
    }

    let mut out = Vec::with_capacity(PAGE_SIZE * (2 + pages.iter().map(|p| p.data.len() / PAGE_SIZE).sum::<usize>()));
    out.extend_from_slice(super::read::dat::MAGIC);
    out.extend_from_slice(b"6\0");
    out.push(0); // little endian
    out.push(8); // sizeof(long)
    out.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
    out.extend_from_slice(b"header_page\0");
    section_u64(&mut out, HEADER_PAGE.as_bytes());
    out.extend_from_slice(b"header_event\0");
    section_u64(&mut out, HEADER_EVENT.as_bytes());
    let format = |f: &(&str, &str, u16, &str, &str)| format!("name: {}\nID: {}\nformat:\n{COMMON_FIELDS}{}\nprint fmt: {}\n", f.1, f.2, f.3, f.4);
    let ftrace: Vec<_> = FORMATS.iter().filter(|f| f.0 == "ftrace").collect();
    out.extend_from_slice(&(ftrace.len() as u32).to_le_bytes());
    for f in ftrace {
        section_u64(&mut out, format(f).as_bytes());
    }
    let systems = ["sched", "power"];
    out.extend_from_slice(&(systems.len() as u32).to_le_bytes());
    for sys in systems {
        out.extend_from_slice(sys.as_bytes());
        out.push(0);
        let fs: Vec<_> = FORMATS.iter().filter(|f| f.0 == sys).collect();
        out.extend_from_slice(&(fs.len() as u32).to_le_bytes());
        for f in fs {
            section_u64(&mut out, format(f).as_bytes());
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
    out.extend_from_slice(&0u32.to_le_bytes()); // trace_printk formats
    let mut pids: Vec<_> = cmdlines.into_iter().collect();
    pids.sort_unstable();
    let mut cmd = String::new();
    for (p, c) in &pids {
        let _ = writeln!(cmd, "{p} {c}");
    }
    section_u64(&mut out, cmd.as_bytes());
    out.extend_from_slice(&(nr_cpus as u32).to_le_bytes());
    out.extend_from_slice(b"options  \0");
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(b"flyrecord\0");

    // Per-CPU offsets, then the pages, page-aligned.
    let table_end = out.len() + 16 * nr_cpus;
    let mut offset = table_end.next_multiple_of(PAGE_SIZE);
    for p in &mut pages {
        p.close();
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(p.data.len() as u64).to_le_bytes());
        offset += p.data.len();
    }
    out.resize(table_end.next_multiple_of(PAGE_SIZE), 0);
    for p in &pages {
        out.extend_from_slice(&p.data);
    }
    Ok(out)
}

fn section_u64(out: &mut Vec<u8>, body: &[u8]) {
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
}

/// One CPU's ring-buffer pages.
#[derive(Default)]
struct Pages {
    data: Vec<u8>,
    /// Start of the open page in `data`, and its time so far.
    page: Option<usize>,
    last_ns: u64,
}

impl Pages {
    fn push(&mut self, ts_ns: u64, rec: &[u8]) {
        let len = rec.len().next_multiple_of(4);
        let body = if len <= MAX_SMALL_RECORD { 4 + len } else { 8 + len };
        let delta = ts_ns.saturating_sub(self.last_ns);
        let extend = if delta >> TS_SHIFT != 0 { 8 } else { 0 };
        let fits = self.page.is_some_and(|p| self.data.len() + extend + body <= p + PAGE_SIZE);
        let delta = if fits {
            if extend != 0 {
                self.word(TYPE_TIME_EXTEND | ((delta as u32 & ((1 << TS_SHIFT) - 1)) << 5));
                self.word((delta >> TS_SHIFT) as u32);
                0
            } else {
                delta as u32
            }
        } else {
            self.close();
            self.page = Some(self.data.len());
            self.data.extend_from_slice(&ts_ns.to_le_bytes());
            self.data.extend_from_slice(&0u64.to_le_bytes());
            0
        };
        self.last_ns = self.last_ns.max(ts_ns);
        if len <= MAX_SMALL_RECORD {
            self.word((len / 4) as u32 | (delta << 5));
        } else {
            self.word(delta << 5);
            self.word((len + 4) as u32);
        }
        self.data.extend_from_slice(rec);
        self.data.resize(self.data.len() + (len - rec.len()), 0);
    }

    fn word(&mut self, w: u32) {
        self.data.extend_from_slice(&w.to_le_bytes());
    }

    /// Set the open page's commit and pad it to the page size.
    fn close(&mut self) {
        if let Some(p) = self.page.take() {
            let commit = (self.data.len() - p - PAGE_HEADER) as u64;
            self.data[p + 8..p + 16].copy_from_slice(&commit.to_le_bytes());
            self.data.resize(p + PAGE_SIZE, 0);
        }
    }
}

/// The record of one event: common fields, then its own.
fn record(e: &Event, rec: &mut Vec<u8>) -> Result<()> {
    rec.clear();
    let id = if let EventKind::Other { name, .. } = &e.kind {
        return Err(Error::invalid("trace.dat writer", "event", name, "one of the events govlab types (sched_*, cpu_idle, cpu_frequency, print)"));
    } else {
        id_of(e.kind.name())
    };
    rec.extend_from_slice(&id.to_le_bytes());
    rec.extend_from_slice(&[e.flags, 0]); // common_flags, common_preempt_count (not kept)
    rec.extend_from_slice(&e.pid.to_le_bytes());
    let comm = |rec: &mut Vec<u8>, c: &str| {
        let mut b = [0u8; 16];
        let n = c.len().min(15);
        b[..n].copy_from_slice(&c.as_bytes()[..n]);
        rec.extend_from_slice(&b);
    };
    let i32s = |rec: &mut Vec<u8>, v: &[i32]| v.iter().for_each(|x| rec.extend_from_slice(&x.to_le_bytes()));
    match &e.kind {
        EventKind::SchedSwitch(s) => {
            comm(rec, &s.prev_comm);
            i32s(rec, &[s.prev_pid, s.prev_prio]);
            rec.extend_from_slice(&s.prev_state.to_raw().to_le_bytes());
            comm(rec, &s.next_comm);
            i32s(rec, &[s.next_pid, s.next_prio]);
        }
        EventKind::SchedWakeup { comm: c, pid, prio, target_cpu, .. } => {
            comm(rec, c);
            i32s(rec, &[*pid, *prio, *target_cpu as i32]);
        }
        EventKind::SchedMigrateTask { comm: c, pid, prio, orig_cpu, dest_cpu } => {
            comm(rec, c);
            i32s(rec, &[*pid, *prio, *orig_cpu as i32, *dest_cpu as i32]);
        }
        EventKind::SchedProcessExit { comm: c, pid, prio } => {
            comm(rec, c);
            i32s(rec, &[*pid, *prio]);
        }
        EventKind::CpuIdle { state, cpu_id } | EventKind::CpuFrequency { state, cpu_id } => {
            let s = if *state == CPU_IDLE_EXIT { u32::MAX } else { *state };
            rec.extend_from_slice(&s.to_le_bytes());
            rec.extend_from_slice(&cpu_id.to_le_bytes());
        }
        EventKind::Print { message } => {
            rec.extend_from_slice(&0u64.to_le_bytes());
            rec.extend_from_slice(message.as_bytes());
            rec.extend_from_slice(b"\n\0");
        }
        EventKind::Other { .. } => unreachable!("refused above"),
    }
    if rec.len() > MAX_RECORD {
        return Err(Error::invalid("trace.dat writer", e.kind.name(), format!("{} bytes", rec.len()), format!("a record of at most {MAX_RECORD} bytes")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read::read_bytes;

    const TEXT: &str = "\
cpus=2
          <idle>-0     [000]     5.000000: cpu_frequency:        state=1000000 cpu_id=0
          <idle>-0     [000]     5.000001: sched_switch:         prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker with a long name next_pid=7 next_prio=120
worker with a long name-7 [000] dNh2 5.000010: sched_wakeup:   comm=b pid=8 prio=100 target_cpu=001
worker with a long name-7 [000] 5.000020: sched_switch:   prev_comm=worker with a long name prev_pid=7 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [001]     5.000030: sched_migrate_task:   comm=b pid=8 prio=100 orig_cpu=0 dest_cpu=1
          <idle>-0     [000]     5.000040: cpu_idle:             state=1 cpu_id=0
          <idle>-0     [000]     9.000000: cpu_idle:             state=4294967295 cpu_id=0
          <idle>-0     [000]     9.000000: print:                tracing_mark_write: a message longer than one hundred and twelve bytes, so that the record carries its length in a second word of its header
               b-8     [001]     9.500000: sched_process_exit:   comm=b pid=8 prio=100
               b-8     [001]     9.500000: sched_wakeup_new:     comm=c pid=9 prio=120 target_cpu=001
";

    #[test]
    fn written_dat_reads_back_equal() {
        let t = read_bytes(TEXT.as_bytes(), Path::new("t.txt")).unwrap();
        let dat = to_dat(&t).unwrap();
        let back = read_bytes(&dat, Path::new("t.dat")).unwrap();
        assert_eq!(back.nr_cpus, 2);
        // Comms are 16-byte fields in the binary: the long one is cut to 15.
        let cut = |e: &Event| {
            let mut e = e.clone();
            if let EventKind::SchedSwitch(s) = &mut e.kind {
                s.prev_comm = s.prev_comm.chars().take(15).collect::<String>().into();
                s.next_comm = s.next_comm.chars().take(15).collect::<String>().into();
            }
            e.comm = e.comm.chars().take(15).collect::<String>().into();
            e
        };
        assert_eq!(back.events.len(), t.events.len());
        for (a, b) in t.events.iter().zip(&back.events) {
            assert_eq!(cut(a), cut(b));
        }
    }

    #[test]
    fn many_events_span_pages_and_extends() {
        let line = |i: u64| format!("<idle>-0 [001] {}.{:06}: cpu_idle: state={} cpu_id=1\n", 1 + i * 200 / 1000, (i * 200 % 1000) * 1000, i % 3);
        let text: String = std::iter::once("cpus=2\n".to_string()).chain((0..5000).map(line)).collect();
        let t = read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let dat = to_dat(&t).unwrap();
        assert!(dat.len() > 10 * PAGE_SIZE, "several pages");
        let back = read_bytes(&dat, Path::new("t.dat")).unwrap();
        assert_eq!(back.events, t.events);
    }

    #[test]
    fn untyped_events_are_refused() {
        let t = read_bytes(b"cpus=1\n<idle>-0 [000] 1.0: sched_overutilized: overutilized=1\n", Path::new("t.txt")).unwrap();
        assert!(to_dat(&t).unwrap_err().to_string().contains("sched_overutilized"));
    }
}

//! trace-cmd's binary `trace.dat`, file format version 6, little endian.
//!
//! Layout (trace-cmd.dat(5), version 6), every integer in the file's byte
//! order:
//!
//! 1. magic `17 08 44 "tracing"`, the version as a NUL-terminated string,
//!    one byte of endianness (0 little), one byte of `sizeof(long)`, and the
//!    ring-buffer page size (u32);
//! 2. `header_page` and `header_event` (name, u64 size, text): the layout of
//!    a ring-buffer page header (timestamp, commit, data) and of an event
//!    header (5-bit type_len, 27-bit time_delta);
//! 3. the event formats: ftrace's own (u32 count, each a u64 size and the
//!    text of `events/ftrace/NAME/format`), then per event system (u32
//!    count of systems; each a NUL-terminated name, a u32 count and the
//!    formats as before);
//! 4. kallsyms (u32 size + text), trace_printk formats (u32 size + text),
//!    the saved command lines (u64 size + `pid comm` lines), the number of
//!    CPUs (u32);
//! 5. optionally `options  \0` and options (u16 id, u32 size, data; id 0
//!    ends), then `flyrecord\0` and per CPU the file offset and size (u64
//!    each) of its ring-buffer pages (`latency  \0` text data is not read).
//!
//! A page starts with its header (the timestamp of its first event and the
//! committed size, whose top bits are flags); then events, each a 32-bit
//! header of type_len and time_delta (added to the running time) and:
//! type_len 1..=28, 4·type_len bytes of data; 0, a u32 length (including
//! itself) then the data; 29, padding (with delta 0: the rest of the page;
//! else a u32 length to skip); 30, a time extend (u32 << 27 added); 31, an
//! absolute timestamp (u32 << 27 | delta). Each data record starts with the
//! event's common fields (`common_type` gives its format ID, `common_pid`
//! the current task, `common_flags` the context it was recorded in) and
//! its own fields at the offsets its format gives.
//!
//! Not read: big-endian files, version 7 (sectioned, compressed), instance
//! buffers (option BUFFER: only the top-level buffer is read).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};
use crate::trace::event::{Comm, Comms, Event, EventKind, PrevState, SchedSwitch, CPU_IDLE_EXIT};
use crate::trace::{Format, Trace};

/// The first ten bytes of every trace.dat.
pub const MAGIC: &[u8] = b"\x17\x08Dtracing";

/// Event header type_len values (kernel/trace/ring_buffer.c).
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// time_delta has 27 bits; extends and absolute stamps shift by it.
const TS_SHIFT: u32 = 27;
/// An absolute stamp carries 59 bits; the top bits come from the running time.
const TS_MSB: u64 = !((1u64 << 59) - 1);
/// The committed size of a page; the bits above are flags (missed events).
const COMMIT_MASK: u64 = (1 << 27) - 1;
/// trace-cmd option ids (trace-cmd.h).
const OPTION_OFFSET: u16 = 7;

/// Most bytes of one header section read into memory (an event format,
/// the saved command lines, an option): 64 MiB (assumed: a thousand times
/// the command lines of a machine with `pid_max` 32768). kallsyms and the
/// trace_printk formats are skipped, not read.
pub const MAX_SECTION_BYTES: u64 = 64 << 20;

/// Most events a trace.dat may hold: the number a text trace at the size
/// ceiling ([`super::MAX_TRACE_BYTES`]) holds at its shortest lines, about
/// 40 bytes each (assumed). The pages are read one block at a time, so
/// memory is these events, never the file.
pub const MAX_EVENTS: usize = 16_000_000;

/// Bytes of ring-buffer pages read at a time.
const BLOCK_BYTES: usize = 1 << 20;

/// Read a whole trace.dat held in memory.
pub fn read(bytes: &[u8], path: &Path) -> Result<Trace> {
    read_from(std::io::Cursor::new(bytes), bytes.len() as u64, path)
}

/// Read a trace.dat from `src`, `len` bytes long: the header, then each
/// CPU's pages a block at a time.
pub fn read_from<R: Read + Seek>(src: R, len: u64, path: &Path) -> Result<Trace> {
    let mut r = Cursor { src, pos: 0, len, path };
    let head = Header::read(&mut r)?;
    let mut events = Vec::new();
    let mut comms = Comms::default();
    let mut pids = HashMap::new();
    for (pid, comm) in &head.cmdlines {
        pids.insert(*pid, comms.get_str(comm));
    }
    let mut dec = Decoder::new(&head, &mut comms, pids, path)?;
    for (cpu, &(offset, size)) in head.cpu_data.iter().enumerate() {
        dec.read_cpu(&mut r, cpu as u32, offset, size, &mut events)?;
    }
    if events.is_empty() {
        return Err(Error::trace_byte(path, len as usize, "no events in any CPU's ring-buffer pages"));
    }
    super::sort_events(&mut events);
    name_tasks(&mut events, &mut dec.pids);
    Ok(Trace { format: Format::TraceDat, nr_cpus: head.cpu_data.len(), events, notes: Vec::new(), meta: crate::trace::Meta::new() })
}

/// Give each event the comm of its pid as trace-cmd does: from the saved
/// command lines, completed in time order by the comms that `sched_switch`
/// and `sched_wakeup` carry for pids not yet known (its sched plugin
/// registers them as it prints; a known pid keeps its first comm, so a task
/// that exec'd keeps its old name in the comm column).
fn name_tasks(events: &mut [Event], pids: &mut HashMap<i32, Comm>) {
    for e in events {
        if e.pid != 0 {
            if let Some(c) = pids.get(&e.pid) {
                e.comm = c.clone();
            }
        }
        match &e.kind {
            EventKind::SchedSwitch(s) => {
                for (pid, comm) in [(s.prev_pid, &s.prev_comm), (s.next_pid, &s.next_comm)] {
                    if pid != 0 {
                        pids.entry(pid).or_insert_with(|| comm.clone());
                    }
                }
            }
            EventKind::SchedWakeup { pid, comm, .. } if *pid != 0 => {
                pids.entry(*pid).or_insert_with(|| comm.clone());
            }
            _ => {}
        }
    }
}

/// Sequential reads over the file, `len` bytes long, with errors at the
/// byte offset. A size read from the file is checked against what is left
/// before anything is allocated for it.
struct Cursor<'a, R> {
    src: R,
    pos: u64,
    len: u64,
    path: &'a Path,
}

/// Longest NUL-terminated string of the header (the version, an event
/// system's name).
const MAX_CSTR_BYTES: usize = 4096;

impl<R: Read + Seek> Cursor<'_, R> {
    fn err(&self, at: u64, msg: impl Into<String>) -> Error {
        Error::trace_byte(self.path, at as usize, msg)
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(self.path, e)
    }

    /// Check that `n` more bytes are there.
    fn need(&self, n: u64, what: &str) -> Result<()> {
        if n > self.len - self.pos {
            return Err(self.err(self.pos, format!("truncated: {what} needs {n} bytes, {} left", self.len - self.pos)));
        }
        Ok(())
    }

    fn take(&mut self, n: usize, what: &str) -> Result<Vec<u8>> {
        self.need(n as u64, what)?;
        let mut v = vec![0; n];
        self.src.read_exact(&mut v).map_err(|e| self.io(e))?;
        self.pos += n as u64;
        Ok(v)
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        self.need(n, what)?;
        self.pos += n;
        self.src.seek(SeekFrom::Start(self.pos)).map_err(|e| self.io(e))?;
        Ok(())
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        self.need(N as u64, what)?;
        let mut a = [0; N];
        self.src.read_exact(&mut a).map_err(|e| self.io(e))?;
        self.pos += N as u64;
        Ok(a)
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn cstr(&mut self, what: &str) -> Result<String> {
        let at = self.pos;
        let mut s = Vec::new();
        loop {
            if self.pos == self.len {
                return Err(self.err(at, format!("truncated: {what} has no terminating NUL")));
            }
            match self.u8(what)? {
                0 => break,
                c if s.len() < MAX_CSTR_BYTES => s.push(c),
                _ => return Err(self.err(at, format!("{what} has no NUL in its first {MAX_CSTR_BYTES} bytes"))),
            }
        }
        String::from_utf8(s).map_err(|_| self.err(at, format!("{what} is not text")))
    }

    /// A header section of `size` bytes, at most [`MAX_SECTION_BYTES`].
    fn section(&mut self, size: u64, what: &str) -> Result<Vec<u8>> {
        if size > MAX_SECTION_BYTES {
            return Err(self.err(self.pos, format!("{what}: {size} bytes, more than the {MAX_SECTION_BYTES} a header section may have")));
        }
        self.take(size as usize, what)
    }

    /// A section whose size is `size` bytes of text.
    fn text(&mut self, size: u64, what: &str) -> Result<String> {
        let at = self.pos;
        let raw = self.section(size, what)?;
        String::from_utf8(raw).map_err(|_| self.err(at, format!("{what} is not text")))
    }

    fn expect(&mut self, tag: &[u8], what: &str) -> Result<()> {
        let at = self.pos;
        if self.take(tag.len(), what)? != tag {
            return Err(self.err(at, format!("expected {what}")));
        }
        Ok(())
    }
}

/// One field of an event or page format.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    offset: usize,
    size: usize,
    signed: bool,
    kind: FieldKind,
    /// Declared as `char`: its bytes are text.
    text: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    /// An integer of 1, 2, 4 or 8 bytes.
    Num,
    /// `char name[N]`: a NUL-padded string.
    Str,
    /// `__data_loc char[] name`: u32, offset in the low half, length in the high.
    DataLoc,
    /// `char buf[]`: a string to the end of the record.
    Rest,
    /// Any other array.
    Bytes,
}

/// An event format (`events/SYSTEM/NAME/format`).
#[derive(Debug, Clone)]
struct EventFormat {
    name: String,
    id: u16,
    fields: Vec<Field>,
    /// Byte offset of its text in the file.
    at: usize,
}

/// Parse the `field:` lines (and name, ID) of a format text; `at` is its
/// byte offset in the file, for errors.
fn parse_format(text: &str, at: usize, path: &Path) -> Result<EventFormat> {
    let err = |m: String| Error::trace_byte(path, at, m);
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(n) = line.strip_prefix("name:") {
            name = Some(n.trim().to_string());
        } else if let Some(i) = line.strip_prefix("ID:") {
            id = Some(i.trim().parse::<u16>().map_err(|_| err(format!("bad event ID '{}'", head(i.trim()))))?);
        } else if line.starts_with("field:") {
            fields.push(parse_field(line).ok_or_else(|| err(format!("bad field line '{}'", head(line))))?);
        }
    }
    let name = name.ok_or_else(|| err("event format without a name".into()))?;
    let id = id.ok_or_else(|| err(format!("event format '{name}' without an ID")))?;
    Ok(EventFormat { name, id, fields, at })
}

/// Most characters of a format's line an error echoes.
const SHOWN_LINE_CHARS: usize = 80;

/// The start of `line`, for an error: a corrupted format can run on for
/// kilobytes.
fn head(line: &str) -> String {
    match line.char_indices().nth(SHOWN_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// `field:char prev_comm[16]; offset:8; size:16; signed:1;` (tab-separated)
fn parse_field(line: &str) -> Option<Field> {
    let mut parts = line.split(';').map(str::trim);
    let decl = parts.next()?.strip_prefix("field:")?.trim();
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.parse().ok();
        } else if let Some(v) = p.strip_prefix("signed:") {
            signed = v == "1";
        }
    }
    let (offset, size) = (offset?, size?);
    let last = decl.rsplit(char::is_whitespace).next()?;
    let (name, array) = match last.find('[') {
        Some(b) => (&last[..b], Some(&last[b..])),
        None => (last, None),
    };
    // ftrace's own formats write `char buf;` with size 0 for `char buf[]`.
    let kind = if decl.starts_with("__data_loc") {
        FieldKind::DataLoc
    } else if size == 0 || array == Some("[]") {
        FieldKind::Rest
    } else if array.is_some() {
        if decl.contains("char") {
            FieldKind::Str
        } else {
            FieldKind::Bytes
        }
    } else if matches!(size, 1 | 2 | 4 | 8) {
        FieldKind::Num
    } else {
        FieldKind::Bytes
    };
    Some(Field { name: name.to_string(), offset, size, signed, kind, text: decl.contains("char") })
}

/// Everything before the ring-buffer pages.
struct Header {
    page_size: usize,
    /// Offsets and sizes in the page header: timestamp, commit, data start.
    page_ts: (usize, usize),
    page_commit: (usize, usize),
    page_data: usize,
    formats: Vec<EventFormat>,
    cmdlines: Vec<(i32, String)>,
    ts_offset: i64,
    /// Per CPU: file offset and size of its pages.
    cpu_data: Vec<(u64, u64)>,
}

impl Header {
    fn read<R: Read + Seek>(r: &mut Cursor<'_, R>) -> Result<Header> {
        r.expect(MAGIC, "the trace.dat magic")?;
        let at = r.pos;
        let version = r.cstr("the version")?;
        match version.parse::<u32>() {
            Ok(6) => {}
            Ok(7) => return Err(r.err(at, "trace.dat version 7 (sectioned, maybe compressed) is not supported; version 6 is (trace-cmd record --file-version 6, or trace-cmd convert)")),
            _ => return Err(r.err(at, format!("unsupported trace.dat version '{version}' (6 is supported)"))),
        }
        let at = r.pos;
        if r.u8("the endianness")? != 0 {
            return Err(r.err(at, "big-endian trace.dat is not supported"));
        }
        let at = r.pos;
        let long_size = r.u8("sizeof(long)")?;
        if long_size != 4 && long_size != 8 {
            return Err(r.err(at, format!("sizeof(long) is {long_size}, expected 4 or 8")));
        }
        let at = r.pos;
        let page_size = r.u32("the page size")? as usize;
        if !(64..=(1 << 24)).contains(&page_size) {
            return Err(r.err(at, format!("implausible page size {page_size}")));
        }

        r.expect(b"header_page\0", "'header_page'")?;
        let size = r.u64("the header_page size")?;
        let at = r.pos;
        let text = r.text(size, "header_page")?;
        let page = parse_format(&format!("name: header_page\nID: 0\n{text}"), at as usize, r.path)?;
        let find = |n: &str| {
            page.fields
                .iter()
                .find(|f| f.name == n)
                .ok_or_else(|| r.err(at, format!("header_page has no '{n}' field")))
        };
        let ts = find("timestamp")?;
        let commit = find("commit")?;
        let data = find("data")?;
        let (page_ts, page_commit, page_data) = ((ts.offset, ts.size), (commit.offset, commit.size), data.offset);
        let header_fits = page_ts.0.checked_add(8).is_some_and(|e| e <= page_data)
            && page_commit.0.checked_add(page_commit.1).is_some_and(|e| e <= page_data);
        if page_data >= page_size || !matches!(page_commit.1, 4 | 8) || page_ts.1 != 8 || !header_fits {
            return Err(r.err(at, "header_page layout not understood"));
        }

        r.expect(b"header_event\0", "'header_event'")?;
        let size = r.u64("the header_event size")?;
        let at = r.pos;
        let text = r.text(size, "header_event")?;
        let compact: String = text.split_whitespace().collect();
        if !compact.contains("type_len:5bits") || !compact.contains("time_delta:27bits") {
            return Err(r.err(at, "event header is not type_len:5 bits, time_delta:27 bits"));
        }

        let mut formats = Vec::new();
        let n = r.u32("the ftrace event count")?;
        for _ in 0..n {
            formats.push(read_format(r)?);
        }
        let systems = r.u32("the event system count")?;
        for _ in 0..systems {
            r.cstr("an event system name")?;
            let n = r.u32("the event count")?;
            for _ in 0..n {
                formats.push(read_format(r)?);
            }
        }
        let size = r.u32("the kallsyms size")?;
        r.skip(u64::from(size), "kallsyms")?;
        let size = r.u32("the trace_printk size")?;
        r.skip(u64::from(size), "trace_printk formats")?;
        let size = r.u64("the cmdlines size")?;
        let at = r.pos;
        let cmdlines = r
            .text(size, "cmdlines")?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(p, c)| p.trim().parse().map(|p| (p, c.to_string())))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| r.err(at, "cmdlines is not 'pid comm' lines"))?;
        let at = r.pos;
        let cpus = r.u32("the CPU count")? as usize;
        if cpus == 0 || cpus > super::MAX_CPUS as usize {
            return Err(r.err(at, format!("implausible CPU count {cpus}")));
        }

        let mut ts_offset = 0i64;
        loop {
            let at = r.pos;
            let label = r.array::<10>("a section label")?;
            match &label {
                b"options  \0" => ts_offset += read_options(r)?,
                b"flyrecord\0" => break,
                b"latency  \0" => return Err(r.err(at, "latency-format trace.dat (text data) is not supported")),
                _ => return Err(r.err(at, "expected 'options', 'flyrecord' or 'latency'")),
            }
        }
        let mut cpu_data = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            let offset = r.u64("a CPU data offset")?;
            let size = r.u64("a CPU data size")?;
            cpu_data.push((offset, size));
        }
        Ok(Header { page_size, page_ts, page_commit, page_data, formats, cmdlines, ts_offset, cpu_data })
    }
}

fn read_format<R: Read + Seek>(r: &mut Cursor<'_, R>) -> Result<EventFormat> {
    let size = r.u64("an event format size")?;
    let at = r.pos;
    let text = r.text(size, "an event format")?;
    parse_format(&text, at as usize, r.path)
}

/// The options section; returns the timestamp offset it sets.
fn read_options<R: Read + Seek>(r: &mut Cursor<'_, R>) -> Result<i64> {
    let mut offset = 0;
    loop {
        let id = r.u16("an option id")?;
        if id == 0 {
            return Ok(offset);
        }
        let size = u64::from(r.u32("an option size")?);
        let at = r.pos;
        if id != OPTION_OFFSET {
            r.skip(size, "an option")?;
            continue;
        }
        let data = r.section(size, "an option")?;
        let s = String::from_utf8_lossy(&data);
        let s = s.trim_end_matches('\0').trim();
        offset += s.parse::<i64>().map_err(|_| r.err(at, format!("bad timestamp offset option '{s}'")))?;
    }
}

/// How to turn a record of one format into an [`EventKind`].
enum Shape {
    Switch([Field; 7]),
    Wakeup { new: bool, f: [Field; 4] },
    Migrate([Field; 5]),
    Exit([Field; 3]),
    Frequency([Field; 2]),
    Idle([Field; 2]),
    Print(Field),
    Other { name: Comm, fields: Vec<Field> },
}

struct Decoder<'a> {
    path: &'a Path,
    head_page_size: usize,
    page_ts: (usize, usize),
    page_commit: (usize, usize),
    page_data: usize,
    ts_offset: i64,
    common_type: Field,
    common_pid: Field,
    /// Absent from some hand-made formats: the flags are then 0.
    common_flags: Option<Field>,
    /// By event ID.
    shapes: Vec<Option<Shape>>,
    comms: &'a mut Comms,
    /// pid → comm from the saved command lines.
    pids: HashMap<i32, Comm>,
    idle: Comm,
    unknown: Comm,
}

impl<'a> Decoder<'a> {
    fn new(head: &Header, comms: &'a mut Comms, pids: HashMap<i32, Comm>, path: &'a Path) -> Result<Self> {
        let common = |n: &str| {
            head.formats
                .iter()
                .find_map(|f| f.fields.iter().find(|x| x.name == n).cloned())
                .ok_or_else(|| Error::trace_byte(path, head.formats.first().map_or(0, |f| f.at), format!("no event format has the '{n}' field")))
        };
        let common_type = common("common_type")?;
        let common_pid = common("common_pid")?;
        let common_flags = common("common_flags").ok().filter(|f| f.kind == FieldKind::Num);
        let mut shapes: Vec<Option<Shape>> = Vec::new();
        for f in &head.formats {
            let shape = shape_of(f, comms).map_err(|m| Error::trace_byte(path, f.at, format!("event format '{}': {m}", f.name)))?;
            let i = f.id as usize;
            if shapes.len() <= i {
                shapes.resize_with(i + 1, || None);
            }
            shapes[i] = Some(shape);
        }
        Ok(Decoder {
            path,
            head_page_size: head.page_size,
            page_ts: head.page_ts,
            page_commit: head.page_commit,
            page_data: head.page_data,
            ts_offset: head.ts_offset,
            common_type,
            common_pid,
            common_flags,
            shapes,
            idle: comms.get_str("<idle>"),
            unknown: comms.get_str("<...>"),
            comms,
            pids,
        })
    }

    /// Walk one CPU's pages, a block of whole pages at a time.
    fn read_cpu<R: Read + Seek>(&mut self, r: &mut Cursor<'_, R>, cpu: u32, offset: u64, size: u64, out: &mut Vec<Event>) -> Result<()> {
        let Some(end) = offset.checked_add(size).filter(|&e| e <= r.len) else {
            return Err(r.err(r.len, format!("truncated: CPU {cpu}'s data (bytes {offset}..{}) lies beyond the end of the file", offset.saturating_add(size))));
        };
        r.pos = offset;
        r.src.seek(SeekFrom::Start(offset)).map_err(|e| r.io(e))?;
        let pages_per_block = (BLOCK_BYTES / self.head_page_size).max(1);
        let mut block = Vec::new();
        while r.pos < end {
            let at = r.pos;
            let n = (end - at).min((pages_per_block * self.head_page_size) as u64) as usize;
            block.resize(n, 0);
            r.src.read_exact(&mut block).map_err(|e| r.io(e))?;
            r.pos += n as u64;
            for (k, page) in block.chunks(self.head_page_size).enumerate() {
                self.read_page(page, at as usize + k * self.head_page_size, cpu, out)?;
            }
            if out.len() > MAX_EVENTS {
                return Err(r.err(at, format!("more than {MAX_EVENTS} events, the most govlab reads from a trace (docs/traces.md)")));
            }
        }
        Ok(())
    }

    fn read_page(&mut self, p: &[u8], at: usize, cpu: u32, out: &mut Vec<Event>) -> Result<()> {
        let path = self.path;
        let err = |off: usize, m: String| Error::trace_byte(path, at + off, format!("CPU {cpu}: {m}"));
        if p.len() < self.page_data {
            return Err(err(0, "truncated ring-buffer page header".into()));
        }
        let mut ts = le(p, self.page_ts.0, 8).wrapping_add_signed(self.ts_offset);
        let commit = le(p, self.page_commit.0, self.page_commit.1);
        let len = (commit & COMMIT_MASK) as usize;
        let data_end = self.page_data + len;
        if data_end > p.len() {
            return Err(err(self.page_commit.0, format!("page commit size {len} runs past the page ({} bytes)", p.len())));
        }
        let mut i = self.page_data;
        while i + 4 <= data_end {
            let word = le(p, i, 4) as u32;
            let type_len = word & 31;
            let delta = u64::from(word >> 5);
            let need8 = || if i + 8 <= data_end { Ok(le(p, i + 4, 4)) } else { Err(err(i, "truncated event header".into())) };
            let (payload, next) = match type_len {
                TYPE_PADDING => {
                    if delta == 0 {
                        break;
                    }
                    ts = ts.wrapping_add(delta);
                    i += 4 + need8()? as usize;
                    continue;
                }
                TYPE_TIME_EXTEND => {
                    ts = ts.wrapping_add((need8()? << TS_SHIFT) + delta);
                    i += 8;
                    continue;
                }
                TYPE_TIME_STAMP => {
                    ts = ((need8()? << TS_SHIFT) | delta) | (ts & TS_MSB);
                    i += 8;
                    continue;
                }
                0 => {
                    let l = need8()? as usize;
                    if l < 4 {
                        return Err(err(i, format!("event length {l} is too short")));
                    }
                    (i + 8..i + 8 + (l - 4), i + 8 + ((l - 4 + 3) & !3))
                }
                n => (i + 4..i + 4 + 4 * n as usize, i + 4 + 4 * n as usize),
            };
            if payload.end > data_end {
                return Err(err(i, format!("event of {} bytes runs past the page's data", payload.len())));
            }
            ts = ts.wrapping_add(delta);
            let ev = self.decode(&p[payload.clone()], ts, cpu).map_err(|m| err(payload.start, m))?;
            out.push(ev);
            i = next;
        }
        Ok(())
    }

    fn decode(&mut self, rec: &[u8], ts_ns: u64, cpu: u32) -> Result<Event, String> {
        let id = num(rec, &self.common_type)? as usize;
        let pid = num(rec, &self.common_pid)? as i32;
        let flags = match &self.common_flags {
            Some(f) => num(rec, f)? as u8,
            None => 0,
        };
        let comm = match pid {
            0 => self.idle.clone(),
            _ => self.pids.get(&pid).unwrap_or(&self.unknown).clone(),
        };
        let shape = self.shapes.get(id).and_then(Option::as_ref).ok_or_else(|| format!("record of unknown event ID {id}"))?;
        let c = &mut *self.comms;
        let kind = match shape {
            Shape::Switch(f) => EventKind::SchedSwitch(SchedSwitch {
                prev_comm: c.get(string(rec, &f[0])?),
                prev_pid: num(rec, &f[1])? as i32,
                prev_prio: num(rec, &f[2])? as i32,
                prev_state: PrevState::from_raw(num(rec, &f[3])? as u64),
                next_comm: c.get(string(rec, &f[4])?),
                next_pid: num(rec, &f[5])? as i32,
                next_prio: num(rec, &f[6])? as i32,
            }),
            Shape::Wakeup { new, f } => EventKind::SchedWakeup {
                comm: c.get(string(rec, &f[0])?),
                pid: num(rec, &f[1])? as i32,
                prio: num(rec, &f[2])? as i32,
                target_cpu: super::cpu_number(num(rec, &f[3])?, "target_cpu")?,
                new: *new,
            },
            Shape::Migrate(f) => EventKind::SchedMigrateTask {
                comm: c.get(string(rec, &f[0])?),
                pid: num(rec, &f[1])? as i32,
                prio: num(rec, &f[2])? as i32,
                orig_cpu: super::cpu_number(num(rec, &f[3])?, "orig_cpu")?,
                dest_cpu: super::cpu_number(num(rec, &f[4])?, "dest_cpu")?,
            },
            Shape::Exit(f) => EventKind::SchedProcessExit {
                comm: c.get(string(rec, &f[0])?),
                pid: num(rec, &f[1])? as i32,
                prio: num(rec, &f[2])? as i32,
            },
            Shape::Frequency(f) => EventKind::CpuFrequency { state: num(rec, &f[0])? as u32, cpu_id: super::cpu_number(num(rec, &f[1])?, "cpu_id")? },
            Shape::Idle(f) => {
                let s = num(rec, &f[0])? as u32;
                EventKind::CpuIdle { state: if s == u32::MAX { CPU_IDLE_EXIT } else { s }, cpu_id: super::cpu_number(num(rec, &f[1])?, "cpu_id")? }
            }
            Shape::Print(f) => {
                let m = String::from_utf8_lossy(string(rec, f)?);
                EventKind::Print { message: m.trim_end_matches('\n').into() }
            }
            Shape::Other { name, fields } => EventKind::Other { name: name.clone(), fields: render(rec, fields)?.into() },
        };
        Ok(Event { ts_ns, cpu, pid, comm, flags, kind })
    }
}

fn shape_of(f: &EventFormat, comms: &mut Comms) -> Result<Shape, String> {
    let get = |n: &str| f.fields.iter().find(|x| x.name == n).cloned().ok_or_else(|| format!("no field '{n}'"));
    let many = |names: &[&str]| names.iter().map(|n| get(n)).collect::<Result<Vec<_>, _>>();
    Ok(match f.name.as_str() {
        "sched_switch" => Shape::Switch(arr(many(&["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"])?)),
        "sched_wakeup" | "sched_wakeup_new" => {
            Shape::Wakeup { new: f.name == "sched_wakeup_new", f: arr(many(&["comm", "pid", "prio", "target_cpu"])?) }
        }
        "sched_migrate_task" => Shape::Migrate(arr(many(&["comm", "pid", "prio", "orig_cpu", "dest_cpu"])?)),
        "sched_process_exit" => Shape::Exit(arr(many(&["comm", "pid", "prio"])?)),
        "cpu_frequency" => Shape::Frequency(arr(many(&["state", "cpu_id"])?)),
        "cpu_idle" => Shape::Idle(arr(many(&["state", "cpu_id"])?)),
        "print" => Shape::Print(get("buf")?),
        _ => Shape::Other {
            name: comms.get_str(&f.name),
            fields: f.fields.iter().filter(|x| !x.name.starts_with("common_")).cloned().collect(),
        },
    })
}

fn arr<const N: usize>(v: Vec<Field>) -> [Field; N] {
    v.try_into().unwrap_or_else(|_| unreachable!("field list length is fixed by the caller"))
}

/// Little-endian unsigned integer of `size` bytes at `off` (caller checked bounds).
fn le(b: &[u8], off: usize, size: usize) -> u64 {
    let mut v = 0u64;
    for (k, &x) in b[off..off + size].iter().enumerate() {
        v |= u64::from(x) << (8 * k);
    }
    v
}

fn field_bytes<'r>(rec: &'r [u8], f: &Field) -> Result<&'r [u8], String> {
    f.offset
        .checked_add(f.size)
        .and_then(|end| rec.get(f.offset..end))
        .ok_or_else(|| format!("record of {} bytes too short for field '{}' (bytes {}..{})", rec.len(), f.name, f.offset, f.offset + f.size))
}

/// An integer field, sign-extended when the format says signed.
fn num(rec: &[u8], f: &Field) -> Result<i64, String> {
    if f.kind != FieldKind::Num {
        return Err(format!("field '{}' is not an integer", f.name));
    }
    let b = field_bytes(rec, f)?;
    let v = le(b, 0, f.size);
    let bits = 8 * f.size as u32;
    Ok(if f.signed && bits < 64 { ((v << (64 - bits)) as i64) >> (64 - bits) } else { v as i64 })
}

/// A string field's bytes up to the first NUL.
fn string<'r>(rec: &'r [u8], f: &Field) -> Result<&'r [u8], String> {
    let raw = match f.kind {
        FieldKind::Str => field_bytes(rec, f)?,
        FieldKind::Rest => rec.get(f.offset..).ok_or_else(|| format!("record too short for field '{}'", f.name))?,
        FieldKind::DataLoc => {
            let loc = le(field_bytes(rec, f)?, 0, 4) as usize;
            let (off, len) = (loc & 0xffff, loc >> 16);
            rec.get(off..off + len).ok_or_else(|| format!("field '{}' points outside its record", f.name))?
        }
        _ => return Err(format!("field '{}' is not a string", f.name)),
    };
    Ok(&raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())])
}

/// Fields of an event govlab does not interpret, as `name=value`.
fn render(rec: &[u8], fields: &[Field]) -> Result<String, String> {
    use std::fmt::Write as _;
    let mut s = String::new();
    for f in fields {
        if !s.is_empty() {
            s.push(' ');
        }
        match f.kind {
            FieldKind::Num if f.signed => {
                let _ = write!(s, "{}={}", f.name, num(rec, f)?);
            }
            FieldKind::Num => {
                let _ = write!(s, "{}={}", f.name, num(rec, f)? as u64);
            }
            FieldKind::Str | FieldKind::DataLoc | FieldKind::Rest if f.text => {
                let _ = write!(s, "{}={}", f.name, String::from_utf8_lossy(string(rec, f)?));
            }
            _ => {
                let n = if f.kind == FieldKind::Rest { rec.len().saturating_sub(f.offset) } else { field_bytes(rec, f)?.len() };
                let _ = write!(s, "{}=[{n} bytes]", f.name);
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_lines() {
        let f = parse_field("field:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;").unwrap();
        assert_eq!((f.name.as_str(), f.offset, f.size, f.kind), ("prev_comm", 8, 16, FieldKind::Str));
        let f = parse_field("field:__data_loc char[] path;\toffset:12;\tsize:4;\tsigned:1;").unwrap();
        assert_eq!((f.name.as_str(), f.kind), ("path", FieldKind::DataLoc));
        let f = parse_field("field:long prev_state;\toffset:32;\tsize:8;\tsigned:1;").unwrap();
        assert_eq!((f.name.as_str(), f.kind, f.signed), ("prev_state", FieldKind::Num, true));
        let f = parse_field("field:char buf[];\toffset:16;\tsize:0;\tsigned:1;").unwrap();
        assert_eq!(f.kind, FieldKind::Rest);
        let f = parse_field("field:char buf;\toffset:16;\tsize:0;\tsigned:0;").unwrap();
        assert_eq!(f.kind, FieldKind::Rest);
        let f = parse_field("field: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;").unwrap();
        assert_eq!((f.name.as_str(), f.kind), ("timestamp", FieldKind::Num));
        assert!(parse_field("field:int x;\toffset:zero;\tsize:4;").is_none());
    }

    #[test]
    fn signed_fields_sign_extend() {
        let f = Field { name: "x".into(), offset: 0, size: 4, signed: true, kind: FieldKind::Num, text: false };
        assert_eq!(num(&[0xff, 0xff, 0xff, 0xff], &f), Ok(-1));
        let f = Field { signed: false, ..f };
        assert_eq!(num(&[0xff, 0xff, 0xff, 0xff], &f), Ok(0xffff_ffff));
        assert!(num(&[0xff], &f).unwrap_err().contains("too short"));
    }

    fn small_dat() -> Vec<u8> {
        let text = "cpus=2\n<idle>-0 [000] 1.000000: cpu_idle: state=1 cpu_id=0\n<idle>-0 [001] 1.000100: cpu_frequency: state=800000 cpu_id=1\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        crate::trace::dat_writer::to_dat(&t).unwrap()
    }

    /// Where the u64 size of the `header_page` section is.
    fn header_page_size_at(dat: &[u8]) -> usize {
        dat.windows(12).position(|w| w == b"header_page\0").unwrap() + 12
    }

    #[test]
    fn a_header_size_larger_than_the_file_or_a_section_is_refused_before_it_is_allocated() {
        let mut dat = small_dat();
        let at = header_page_size_at(&dat);
        dat[at..at + 8].copy_from_slice(&(1u64 << 20).to_le_bytes());
        let e = read(&dat, Path::new("t.dat")).unwrap_err().to_string();
        assert!(e.contains("truncated: header_page needs 1048576 bytes"), "{e}");
        // A file that says it is 1 GiB long: the section fits, but is over the ceiling.
        dat[at..at + 8].copy_from_slice(&(MAX_SECTION_BYTES + 1).to_le_bytes());
        let e = read_from(std::io::Cursor::new(&dat), 1 << 30, Path::new("t.dat")).unwrap_err().to_string();
        assert!(e.contains("header_page: 67108865 bytes, more than the 67108864"), "{e}");
    }

    #[test]
    fn a_file_streamed_from_disk_reads_as_from_memory_and_zero_pages_add_nothing() {
        let dat = small_dat();
        let dir = std::env::temp_dir().join(format!("govlab-dat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.dat");
        std::fs::write(&f, &dat).unwrap();
        let mem = read(&dat, Path::new("t.dat")).unwrap();
        assert_eq!(crate::trace::read_path(&f).unwrap().events, mem.events);
        // The last CPU's pages run on through 3 MiB of zeros (a sparse tail).
        let mut long = dat.clone();
        let table = long.windows(10).position(|w| w == b"flyrecord\0").unwrap() + 10 + 16;
        let offset = u64::from_le_bytes(long[table..table + 8].try_into().unwrap());
        let total = dat.len() as u64 + (3 << 20);
        long[table + 8..table + 16].copy_from_slice(&(total - offset).to_le_bytes());
        std::fs::write(&f, &long).unwrap();
        std::fs::OpenOptions::new().write(true).open(&f).unwrap().set_len(total).unwrap();
        assert_eq!(crate::trace::read_path(&f).unwrap().events, mem.events);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

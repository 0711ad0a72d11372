//! Trace readers: raw ftrace text, `trace-cmd report` text, Android systrace
//! HTML and trace-cmd's binary `trace.dat`, one module each, all producing a
//! [`Trace`] (events sorted by time).
//!
//! [`read_path`] recognises the format from the content: the trace.dat
//! magic, an HTML page, a `trace-cmd report` header (`version = ` or
//! `cpus=`), else raw ftrace text. Input that cannot be read is an
//! [`Error::Trace`] naming the file and the line or byte offset; so is a
//! trace without a single event.

pub mod dat;
pub mod ftrace_text;
pub mod report_text;
pub mod systrace;

use std::io::{BufReader, Read, Seek};
use std::path::Path;

use crate::error::{Error, Result};
use crate::trace::{Format, Trace};

/// Linux's largest CONFIG_NR_CPUS (x86-64, arm64): a CPU number at or
/// beyond it is corrupt input.
pub const MAX_CPUS: u32 = 8192;

/// A CPU number from a trace, checked against [`MAX_CPUS`].
pub(crate) fn cpu_number(v: i64, what: &str) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|&c| c < MAX_CPUS)
        .ok_or_else(|| format!("{what} {v} is not a CPU number (0..{MAX_CPUS})"))
}

/// The largest text trace read: 512 MiB (assumed: it is read whole into
/// memory, and its events take about as much again; at about 140 bytes an
/// event line that is some 3.8 million events, 10 s of a busy 25-CPU
/// machine). `govlab run --trace` warns before writing one near this size.
pub const MAX_TRACE_BYTES: u64 = 512 << 20;

/// The largest trace.dat read: 4 GiB (assumed). It is read a block of
/// pages at a time, so memory holds its events (at most
/// [`dat::MAX_EVENTS`]), never the file; empty or zero pages cost only
/// their reading, about a second a gigabyte.
pub const MAX_TRACE_DAT_BYTES: u64 = 4 << 30;

/// Bytes of a text trace read at a time, each block checked for a NUL.
const TEXT_BLOCK_BYTES: usize = 1 << 20;

/// Read the trace in `path`, whatever its format: a regular file, a
/// trace.dat of at most [`MAX_TRACE_DAT_BYTES`] or text of at most
/// [`MAX_TRACE_BYTES`].
pub fn read_path(path: &Path) -> Result<Trace> {
    let io = |e| Error::io(path, e);
    let (file, len) = crate::input::open(path, "trace", MAX_TRACE_DAT_BYTES)?;
    let mut src = BufReader::new(file);
    let mut bytes = Vec::new();
    (&mut src).take(dat::MAGIC.len() as u64).read_to_end(&mut bytes).map_err(io)?;
    if is_dat(&bytes) {
        src.rewind().map_err(io)?;
        return dat::read_from(src, len, path);
    }
    crate::input::too_big(path, "trace", len, MAX_TRACE_BYTES)?;
    // A NUL ends the reading at once: the rest is padding or binary.
    let mut from = 0;
    loop {
        let got = (&mut src).take(TEXT_BLOCK_BYTES as u64).read_to_end(&mut bytes).map_err(io)?;
        if let Some(at) = bytes[from..].iter().position(|&b| b == 0) {
            bytes.truncate(from + at + 1);
            break;
        }
        if got == 0 {
            break;
        }
        from = bytes.len();
        crate::input::too_big(path, "trace", from as u64, MAX_TRACE_BYTES)?;
    }
    read_bytes(&bytes, path)
}

/// Whether `head`, a file's first bytes, is trace.dat's magic (or a file
/// cut inside it, a truncated trace.dat too).
fn is_dat(head: &[u8]) -> bool {
    head.starts_with(dat::MAGIC) || (!head.is_empty() && dat::MAGIC.starts_with(head))
}

/// Read a trace held in memory; `path` names it in errors.
pub fn read_bytes(bytes: &[u8], path: &Path) -> Result<Trace> {
    if is_dat(bytes) {
        return dat::read(bytes, path);
    }
    // Text never holds a NUL: one is zero padding (a preallocated or
    // sparse file) or a binary file, which would otherwise read as text
    // that ends early, without a word.
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let line = crate::error::line_of(std::str::from_utf8(&bytes[..at]).unwrap_or(""), at);
        return Err(Error::trace_line(
            path,
            line,
            format!("not a trace: byte {at} is a NUL byte, which no text trace holds (zero padding, or a binary file that is not trace.dat)"),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        Error::trace_line(path, crate::error::line_of(std::str::from_utf8(&bytes[..at]).unwrap_or(""), at), format!("not a trace: byte {at} is not UTF-8 text nor a trace.dat header"))
    })?;
    let trace = match detect_text(text) {
        Format::Systrace => systrace::read(text, path),
        Format::ReportText => report_text::read(text, path),
        _ => ftrace_text::read(text, path),
    }?;
    if trace.events.is_empty() {
        let mut msg = "no trace events in this text".to_string();
        for n in &trace.notes {
            msg = format!("{msg}; {n}");
        }
        return Err(Error::trace_line(path, text.lines().count().max(1), msg));
    }
    Ok(trace)
}

fn detect_text(text: &str) -> Format {
    let head = text.trim_start();
    let lower: String = head.chars().take(64).collect::<String>().to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        Format::Systrace
    } else if head.starts_with("version = ") || head.starts_with("cpus=") {
        Format::ReportText
    } else {
        Format::FtraceText
    }
}

/// Sort and size what a reader parsed.
pub(crate) fn finish(parsed: ftrace_text::Parsed, format: Format) -> Trace {
    let mut events = parsed.events;
    sort_events(&mut events);
    let seen = events.iter().map(|e| e.cpu as usize + 1).max().unwrap_or(0);
    Trace { format, nr_cpus: parsed.nr_cpus.unwrap_or(0).max(seen), events, notes: parsed.notes, meta: parsed.meta }
}

/// Time order; a stable sort, so ties keep their source order.
pub(crate) fn sort_events(events: &mut [crate::trace::Event]) {
    if !events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns) {
        events.sort_by_key(|e| e.ts_ns);
    }
}

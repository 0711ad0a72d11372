//! Android systrace HTML: a catapult viewer page that carries the ftrace
//! text in `<script class="trace-data" type="application/text">` blocks.
//!
//! A page may hold several such blocks: ftrace text (starting with
//! `# tracer:`) and JSON (userspace trace events, starting with `{`). The
//! ftrace blocks are read with the ftrace grammar, with line numbers of the
//! HTML file; JSON blocks are not ftrace and are skipped.

use std::path::Path;

use super::ftrace_text::{parse, Dialect, Parsed};
use crate::error::{Error, Result};
use crate::trace::{Format, Trace};

const OPEN: &str = "<script class=\"trace-data\" type=\"application/text\">";
const CLOSE: &str = "</script>";

/// Read a systrace HTML page.
pub fn read(text: &str, path: &Path) -> Result<Trace> {
    let mut all = Parsed::default();
    let mut from = 0;
    let mut blocks = 0;
    while let Some(off) = text[from..].find(OPEN) {
        let start = from + off + OPEN.len();
        let line = crate::error::line_of(text, start);
        let len = text[start..]
            .find(CLOSE)
            .ok_or_else(|| Error::trace_line(path, line, "trace-data block without </script>"))?;
        let body = &text[start..start + len];
        from = start + len + CLOSE.len();
        if body.trim_start().starts_with('{') {
            continue;
        }
        // The block's first line is the rest of the <script> line.
        let parsed = parse(body, path, line - 1, Dialect::Ftrace)?;
        all.nr_cpus = all.nr_cpus.max(parsed.nr_cpus);
        all.events.extend(parsed.events);
        all.notes.extend(parsed.notes);
        all.meta.extend(parsed.meta);
        blocks += 1;
    }
    if blocks == 0 {
        return Err(Error::trace_line(
            path,
            1,
            "HTML page without a systrace ftrace block (<script class=\"trace-data\" type=\"application/text\">)",
        ));
    }
    Ok(super::finish(all, Format::Systrace))
}

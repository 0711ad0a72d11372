//! govlab's one error type.
//!
//! Every variant but [`Error::Governor`] is bad *input* found while a run is
//! being built (a file, a name, a value): the run never starts, nothing is
//! written. `Governor` is a user's own governor failing during the run; the
//! run stops there. A broken engine invariant during a run is a bug and
//! panics instead, naming the simulated time and the CPU.

use std::path::PathBuf;

/// Shorthand for results carrying [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A name that is not one of the known ones (platform, workload,
    /// governor, device, ...). The run cannot start.
    #[error("unknown {kind} '{name}'; valid choices: {}", .choices.join(", "))]
    UnknownName {
        kind: &'static str,
        name: String,
        choices: Vec<String>,
    },

    /// A tunable or parameter outside what it accepts. The run cannot start.
    #[error("{owner}: invalid value '{value}' for '{key}': {expected}")]
    InvalidValue {
        /// Who owns the key: `governor ondemand`, `workload periodic`, ...
        owner: String,
        key: String,
        value: String,
        /// What is accepted, with the range and the default where there is one.
        expected: String,
    },

    /// A key that the owner does not have. The run cannot start.
    #[error("{owner}: unknown key '{key}'; valid keys: {}", .choices.join(", "))]
    UnknownKey {
        owner: String,
        key: String,
        choices: Vec<String>,
    },

    /// A description file (platform, workload) that cannot be used: syntax
    /// error or inconsistent content. `line` is 1-based when known.
    #[error("{}{}: {message}", .path.display(), .line.map(|l| format!(":{l}")).unwrap_or_default())]
    File {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },

    /// A trace that cannot be read, with where (line or byte offset).
    #[error("{}: {location}: {message}", .path.display())]
    Trace {
        path: PathBuf,
        location: String,
        message: String,
    },

    /// The operating system refused a file operation.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A governor's requirement that this platform's driver cannot meet.
    #[error("{0}")]
    Unsupported(String),

    /// The run was interrupted from outside (Ctrl-C); no result exists.
    #[error("interrupted")]
    Interrupted,

    /// A governor implemented outside the crate (`crate::external`) failed
    /// during a run: it raised, or answered something the engine cannot
    /// apply. Found during the run, not when it is built; the run stops at
    /// that call and no result exists. `message` may span several lines (a
    /// traceback of the governor's own code).
    #[error("{governor}: {call} at {} ({time_ns} ns): {message}", crate::sim::time_text(*.time_ns))]
    Governor {
        /// The governor as the user named it.
        governor: String,
        /// The call that failed, as the governor spells it: `update()`, `select()`, ...
        call: String,
        /// Simulated time of the call, ns.
        time_ns: u64,
        message: String,
    },
}

impl Error {
    #[allow(clippy::needless_pass_by_value)] // callers pass numbers and strings alike
    pub fn invalid(
        owner: impl Into<String>,
        key: impl Into<String>,
        value: impl ToString,
        expected: impl Into<String>,
    ) -> Self {
        Error::InvalidValue {
            owner: owner.into(),
            key: key.into(),
            value: shown(&value.to_string()),
            expected: expected.into(),
        }
    }

    pub fn file(path: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        Error::File {
            path: path.into(),
            line,
            message: shown(&message.into()),
        }
    }

    /// A trace that cannot be read at 1-based `line`.
    pub fn trace_line(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Error::Trace {
            path: path.into(),
            location: format!("line {line}"),
            message: shown(&message.into()),
        }
    }

    /// A binary trace that cannot be read at byte `offset` of the file.
    pub fn trace_byte(path: impl Into<PathBuf>, offset: usize, message: impl Into<String>) -> Self {
        Error::Trace {
            path: path.into(),
            location: format!("byte {offset}"),
            message: shown(&message.into()),
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The most characters of one word (a run without spaces, such as a value
/// echoed from the input) an error message shows.
pub const MAX_SHOWN_CHARS: usize = 200;

/// `text` fit for a one-line message: control characters (a NUL, a newline)
/// escaped, and each word longer than [`MAX_SHOWN_CHARS`] cut there.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * MAX_SHOWN_CHARS));
    let mut word = 0;
    for c in text.chars() {
        if c == ' ' {
            word = 0;
        } else {
            word += 1;
            if word > MAX_SHOWN_CHARS {
                if word == MAX_SHOWN_CHARS + 1 {
                    out.push('…');
                }
                continue;
            }
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_escapes_control_bytes_and_cuts_long_words() {
        assert_eq!(shown("a\0b\nc"), "a\\u{0}b\\nc");
        let long = "x".repeat(1000);
        let out = shown(&format!("value {long} end"));
        assert_eq!(out, format!("value {}… end", "x".repeat(MAX_SHOWN_CHARS)));
        let e = Error::file("f.toml", Some(3), format!("bad '{long}'"));
        assert!(e.to_string().chars().count() < 260, "{e}");
    }
}

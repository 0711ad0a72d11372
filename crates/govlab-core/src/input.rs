//! Reading an input file with a bound.
//!
//! Every file the engine reads (platform, workload, rt-app and trace files)
//! comes through here. It must be a regular file: opening a FIFO blocks
//! until a writer comes (forever, deaf to SIGTERM while in the open call),
//! and a device such as /dev/zero never ends. Its size, known from stat(2)
//! before a byte is read, must be at most the reader's stated ceiling, so
//! that memory is bounded by what the docs promise (docs/traces.md,
//! docs/workloads.md).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Ceiling for description files (platform, workload, rt-app): 64 MiB
/// (assumed: a hundred times the largest rt-app file of rt-app's own
/// examples; a 100,000-phase rt-app file is about 3 MB).
pub const MAX_DESCRIPTION_BYTES: u64 = 64 << 20;

/// `path` opened for reading, and its size: a regular file of at most
/// `max_bytes`; `what` names the file in errors ("trace", "platform
/// file", ...).
pub fn open(path: &Path, what: &str, max_bytes: u64) -> Result<(File, u64)> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::file(path, None, format!("{what}: {}, not a regular file", kind(&meta))));
    }
    too_big(path, what, meta.len(), max_bytes)?;
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    Ok((file, meta.len()))
}

/// An error if `len` bytes are more than `max_bytes`.
pub fn too_big(path: &Path, what: &str, len: u64, max_bytes: u64) -> Result<()> {
    if len > max_bytes {
        return Err(Error::file(path, None, format!("{what}: {len} bytes, more than the {max_bytes} bytes govlab reads (see docs)")));
    }
    Ok(())
}

/// The bytes of `path`, a regular file of at most `max_bytes` ([`open`]).
pub fn read(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let (file, len) = open(path, what, max_bytes)?;
    let mut bytes = Vec::with_capacity(len as usize);
    // take(): a file growing while read stops at the ceiling too.
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::file(path, None, format!("{what}: grew past the {max_bytes} bytes govlab reads while it was read")));
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, what: &str, max_bytes: u64) -> Result<String> {
    let bytes = read(path, what, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = crate::error::line_of(std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or(""), at);
        Error::file(path, Some(line), format!("{what}: byte {at} is not UTF-8 text"))
    })
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_directory_and_a_file_over_the_ceiling() {
        let dir = std::env::temp_dir().join(format!("govlab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = read(&dir, "trace", 10).unwrap_err().to_string();
        assert!(e.contains("a directory, not a regular file"), "{e}");
        let f = dir.join("big.txt");
        std::fs::write(&f, b"0123456789a").unwrap();
        let e = read(&f, "trace", 10).unwrap_err().to_string();
        assert!(e.contains("11 bytes, more than the 10 bytes"), "{e}");
        assert_eq!(read(&f, "trace", 11).unwrap().len(), 11);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

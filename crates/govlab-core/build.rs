//! The engine's digest: a hash of everything compiled into the engine that
//! decides a run's result (its sources, the platform and rt-app files it
//! includes, the locked dependency versions). Stored runs are keyed by it,
//! so a result computed by another engine is never reused as this one's,
//! even where the version number did not change (a development tree).
//! FNV-1a (64 bit) over each file's path and bytes in sorted order: the
//! same sources give the same digest on any machine and any toolchain.

use std::fs;
use std::path::{Path, PathBuf};

const INPUTS: [&str; 4] = ["src", "../../data/platforms", "../../data/real/rt-app/tutorial", "../../Cargo.lock"];

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        if let Ok(entries) = fs::read_dir(path) {
            for e in entries.flatten() {
                files(&e.path(), out);
            }
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn main() {
    let mut all = Vec::new();
    for input in INPUTS {
        println!("cargo:rerun-if-changed={input}");
        files(Path::new(input), &mut all);
    }
    all.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &all {
        let name = f.to_string_lossy().replace('\\', "/");
        h = fnv1a(h, name.as_bytes());
        h = fnv1a(h, &[0]);
        h = fnv1a(h, &fs::read(f).unwrap_or_default());
    }
    println!("cargo:rustc-env=GOVLAB_ENGINE_DIGEST={h:016x}");
}

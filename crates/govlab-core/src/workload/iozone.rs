//! `iozone`: sequential write or rewrite of one file through the page
//! cache; KB/s.
//!
//! `iozone -i 0 -s SIZE -r RECORD [-e]` writes a new file of SIZE with
//! write() calls of RECORD bytes ("write"), then writes the same file again
//! ("rewrite", its pages already in the page cache), and prints each test's
//! rate in KB/s (KB = 1024 bytes). With `-e` the closing fsync() is inside
//! the timing. MMTests' config-io-iozone uses 4 KiB records and `-e`
//! (IOZONE_FSYNC=yes); the POWER8 global-pstate experiment of 2016 wrote
//! files of ~200 and ~400 MB with records of 1 KB .. 1 MB.
//!
//! Model: an `iozone` task issues the records; each costs CPU for the
//! write() syscall, the copy of the record into the page cache, and per
//! 4 KiB page the page-cache work: allocating, inserting and dirtying a new
//! page for a write, finding and re-dirtying an existing one for a rewrite.
//! Writeback is the flusher's: after every 4 MiB dirtied (fs-writeback.c's
//! MIN_WRITEBACK_PAGES chunk) the writer hands the chunk to a `kworker`
//! flusher task; the flusher leaves the first `dirty_background_mb` dirty
//! (vm.dirty_background_bytes: no background writeback below it) and
//! writes every later chunk to the device. The channel between them holds
//! `dirty_mb − dirty_background_mb`: a writer that gets that far ahead of
//! the device blocks, as balance_dirty_pages() throttles it. With `fsync`
//! the writer then writes what stayed dirty and waits for the journal
//! commit of the file's new blocks (`fs.rs`, `fs=ext4|xfs`: jbd2, or XFS's
//! CIL push and log worker, on their own CPUs).
//! For `test = rewrite` an untimed write pass comes first.
//!
//! CPU costs (at the reference frequency) are assumed: the syscall of the
//! order `tools/syscall_cost.c` measures for a small pipe write; the copy
//! at 10 GB/s; the page-cache work per page. Half of it is memory-bound
//! (`MEM`, assumed: the copy streams through memory). The dirty limits
//! default to the kernel's ratios (vm.dirty_background_ratio = 10,
//! vm.dirty_ratio = 20, Documentation/admin-guide/sysctl/vm.rst) of an
//! assumed 16 GiB of memory. Left out: the dirty_expire (30 s) timer of
//! periodic writeback (a pass shorter than 30 s never triggers it), the
//! chunks still queued to the flusher when fsync starts, the journal
//! commits of the allocations during the pass (jbd2's 5-s timer).

use super::{
    Better, ChannelSpec, Dist, IoKind, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec, Workload,
    WorkloadInfo,
};
use crate::error::{Error, Result};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;
use super::fs::{Fs, Layer, FS};

pub const SIZE_MB: ParamSpec = ParamSpec {
    name: "size_mb",
    unit: "MiB",
    default: ParamDefault::Uint(256),
    range: Range::Uint { min: 1, max: 1 << 20 },
    help: "file size, MiB (iozone -s)",
};

pub const RECORD_KB: ParamSpec = ParamSpec {
    name: "record_kb",
    unit: "KiB",
    default: ParamDefault::Uint(4),
    range: Range::Uint { min: 1, max: 16_384 },
    help: "bytes per write() call, KiB (iozone -r; MMTests 4)",
};

pub const TEST: ParamSpec = ParamSpec {
    name: "test",
    unit: "",
    default: ParamDefault::Word("write"),
    range: Range::Choice(&["write", "rewrite"]),
    help: "write (new file) or rewrite (the file's pages already cached)",
};

pub const FSYNC: ParamSpec = ParamSpec {
    name: "fsync",
    unit: "",
    default: ParamDefault::Flag(true),
    range: Range::Switch,
    help: "include the closing fsync in the time (iozone -e; MMTests IOZONE_FSYNC=yes)",
};

pub const DIRTY_BACKGROUND_MB: ParamSpec = ParamSpec {
    name: "dirty_background_mb",
    unit: "MiB",
    default: ParamDefault::Uint(1638),
    range: Range::Uint { min: 0, max: 1 << 24 },
    help: "dirty data left alone by writeback, MiB (10 % of an assumed 16 GiB)",
};

pub const DIRTY_MB: ParamSpec = ParamSpec {
    name: "dirty_mb",
    unit: "MiB",
    default: ParamDefault::Uint(3277),
    range: Range::Uint { min: 1, max: 1 << 24 },
    help: "dirty data at which the writer is throttled, MiB (20 % of 16 GiB)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "iozone",
    description: "iozone -i 0: sequential write or rewrite of a file through the page cache, optional fsync; KB/s",
    metric: "kbps (file size / time of the pass, KB/s, higher is better)",
    params: &[SIZE_MB, RECORD_KB, TEST, FSYNC, DIRTY_BACKGROUND_MB, DIRTY_MB, super::fs::FS, super::DEVICE],
    // The defaults take 0.6-9.2 s on the built-in platforms (the Junos'
    // slow storage is the slowest).
    ends: super::Ends::ByItself { default_duration_ns: 60_000_000_000 },
    build,
};

/// CPU time of one write() call apart from its copy (assumed, see the header).
const SYSCALL_NS: f64 = 300.0;
/// Copy into the page cache, ns per byte (assumed: 10 GB/s).
const COPY_NS_PER_BYTE: f64 = 0.1;
/// Page-cache work per 4 KiB page: a new page (allocate, insert, reserve
/// its block, dirty) or an existing one (look up, dirty) (assumed).
const NEW_PAGE_NS: f64 = 1_500.0;
const CACHED_PAGE_NS: f64 = 500.0;
const PAGE_BYTES: u64 = 4_096;
/// Memory-bound share of the writer's CPU time (assumed).
const MEM: f64 = 0.5;
/// Writeback chunk: fs-writeback.c MIN_WRITEBACK_PAGES, 4 MiB.
const CHUNK_BYTES: u64 = 4 << 20;

const WRITEBACK: u32 = 0;
const PASS: u16 = 0;
const BYTES: u16 = 0;

pub struct Iozone {
    size_mb: u64,
    record_kb: u64,
    rewrite: bool,
    fsync: bool,
    fs: Fs,
    dirty_background_mb: u64,
    dirty_mb: u64,
    /// `device=NAME`; None: the platform's first device.
    device: Option<String>,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload iozone", spec);
    let w = Iozone {
        size_mb: p.uint(&SIZE_MB, &())?,
        record_kb: p.uint(&RECORD_KB, &())?,
        rewrite: p.word(&TEST)? == "rewrite",
        fsync: p.flag(&FSYNC, &())?,
        fs: Fs::from_word(p.word(&FS)?),
        dirty_background_mb: p.uint(&DIRTY_BACKGROUND_MB, &())?,
        dirty_mb: p.uint(&DIRTY_MB, &())?,
        device: p.string(super::DEVICE.name),
    };
    p.finish()?;
    if w.dirty_mb <= w.dirty_background_mb {
        return Err(Error::invalid(
            "workload iozone",
            "dirty_mb",
            w.dirty_mb,
            format!("more than dirty_background_mb ({})", w.dirty_background_mb),
        ));
    }
    Ok(Box::new(w))
}

impl Workload for Iozone {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let dev = super::pick_device("workload iozone", platform, self.device.as_deref(), "")?;
        let f_ref = platform.cpu_types[0].base_khz;
        let record = self.record_kb * 1024;
        let size = (self.size_mb << 20).div_ceil(record) * record;
        let chunk = CHUNK_BYTES.max(record);
        let records_per_chunk = chunk / record;
        let chunks = size.div_ceil(chunk);
        let background_chunks = ((self.dirty_background_mb << 20) / chunk).min(chunks);
        let left_dirty = (background_chunks * chunk).min(size);

        // Channel 0 is the writeback channel; the file system's objects follow.
        let mut setup = Setup {
            channels: vec![ChannelSpec::plain("writeback", 0)],
            series: vec!["pass".into()],
            counters: vec!["bytes".into()],
            ..Setup::default()
        };
        let fs = Layer::new(self.fs, dev, &platform.devices[dev as usize].name, &mut setup);
        let record_ns = |page_ns: f64| {
            SYSCALL_NS + COPY_NS_PER_BYTE * record as f64 + page_ns * record.div_ceil(PAGE_BYTES) as f64
        };
        let pass = |b: &mut ProgramBuilder, page_ns: f64, timed: bool| {
            let cycles = Dist::Fixed(super::cycles_for_ns_at(record_ns(page_ns), f_ref));
            b.op(Op::Mark);
            b.repeat(Some(chunks), |b| {
                b.repeat(Some(records_per_chunk), |b| {
                    b.run(cycles, MEM);
                });
                b.op(Op::Send { chan: WRITEBACK, bytes: chunk });
                if timed {
                    b.count(BYTES, chunk);
                }
            });
            if self.fsync {
                fs.fsync(b, left_dirty);
            }
            if timed {
                b.record(PASS, Since::Mark, None);
            }
        };
        let mut writer = ProgramBuilder::new();
        if self.rewrite {
            pass(&mut writer, NEW_PAGE_NS, false);
            pass(&mut writer, CACHED_PAGE_NS, true);
        } else {
            pass(&mut writer, NEW_PAGE_NS, true);
        }
        let passes = if self.rewrite { 2 } else { 1 };
        let flusher = ProgramBuilder::new()
            .repeat(Some(passes), |b| {
                b.repeat(Some(background_chunks), |b| {
                    b.op(Op::Recv { chan: WRITEBACK });
                });
                b.repeat(Some(chunks - background_chunks), |b| {
                    b.op(Op::Recv { chan: WRITEBACK }).op(Op::Io {
                        device: dev,
                        kind: IoKind::Write,
                        bytes: chunk,
                    });
                });
            })
            .build();
        let throttle_bytes = ((self.dirty_mb - self.dirty_background_mb) << 20).max(chunk);
        setup.channels[WRITEBACK as usize].capacity_bytes = throttle_bytes;
        setup.tasks = vec![TaskSpec::new("iozone", writer.build()), TaskSpec::new("kworker/flush", flusher)];
        setup.tasks.extend(fs.journal_threads());
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let pass = &r.series[PASS as usize];
        let kb = |bytes: f64| bytes / 1024.0;
        let bytes = r.counters[BYTES as usize] as f64;
        let kbps = if pass.count > 0 {
            kb((self.size_mb << 20) as f64) / (pass.mean() / 1e9)
        } else {
            // The pass did not end within the run: what was written so far.
            kb(r.per_second(bytes))
        };
        vec![
            Metric::new("kbps", kbps, "KB/s", Better::Higher),
            Metric::of_samples("pass_s", pass, |h| h.mean() / 1e9, "s", Better::Lower),
        ]
    }

    fn ends_by_itself(&self) -> bool {
        true
    }

    fn progress(&self, r: &Record) -> Option<super::Progress> {
        let record = self.record_kb * 1024;
        let size = (self.size_mb << 20).div_ceil(record) * record;
        Some(super::Progress { done: r.counters[BYTES as usize] >> 20, total: size >> 20, what: "MiB of the timed pass written" })
    }

    fn primary(&self) -> &'static str {
        "kbps"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![
            SIZE_MB.show(self.size_mb),
            RECORD_KB.show(self.record_kb),
            TEST.show(if self.rewrite { "rewrite" } else { "write" }),
            FSYNC.show_flag(self.fsync),
            FS.show(self.fs.name()),
            DIRTY_BACKGROUND_MB.show(self.dirty_background_mb),
            DIRTY_MB.show(self.dirty_mb),
        ];
        super::show_device(self.device.as_ref(), &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use crate::params::Spec;

    #[test]
    fn dirty_limit_must_exceed_background() {
        let spec = Spec::parse("iozone:dirty_background_mb=100,dirty_mb=50", "test").unwrap();
        let e = super::build(&spec).err().unwrap().to_string();
        assert!(e.contains("dirty_mb"), "{e}");
    }
}

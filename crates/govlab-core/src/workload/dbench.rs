//! `dbench`: clients replaying a file-server load file on a local file
//! system; per-operation latency and throughput.
//!
//! dbench 4 (dbench.samba.org) runs `clients` processes, each replaying a
//! load file of SMB-level operations (NTCreateX, Close, ReadX, WriteX,
//! Qpathinfo, Find, Unlink, Flush, ...) against its own directory through
//! the fileio backend, which maps them onto system calls; `Flush` is an
//! fsync(). With `-F` (MMTests `DBENCH_FSYNC=yes`, config-io-dbench4-fsync)
//! every write is followed by an fsync; config-io-dbench4-async leaves
//! writes in the page cache except at the load file's Flush operations.
//! Both MMTests configs vary the clients from 1 up to 2×NUM_LOGICAL_CPUS
//! (async) or 4×NUMCPUS (fsync) and use the short loadfile `client-tiny.txt`.
//!
//! dbench prints, every second, the largest latency of any operation of any
//! client in that second (`children[i].max_latency`, reset after each
//! report); MMTests averages those, which is the "latency (millisecs)" of
//! the hwp-dynamic-boost-2018 mail (dbench4, async, Amean 28.49 ms at 1
//! client on ext4 without the patch, 19.68 ms with it). The model's
//! primary metric `latency_ms` estimates that figure from the latency
//! histogram of all operations: the expected maximum of the n operations of
//! one second is taken as the (1 − 1/n) quantile, n = operations per
//! second. The plain mean, p99 and maximum are reported too, and the
//! throughput of ReadX/WriteX payload in MB/s as dbench prints it.
//!
//! MMTests' dbench4 configs score something else: `--show-execute-time`
//! (MMTests' patch to dbench, "Allow reporting of workload execution
//! times", Jan Kara, 2016) prints each client's time for one pass of the
//! load file ("N completed in T ms"), and `ExtractDbench4.pm` averages
//! those (gormanm/mmtests ffca095a, January 2020). The model's
//! `loadfile_ms` is that time: a client runs its operations back to back,
//! so a pass lasts the mean operation time × the pass's operations.
//! `score=loadfile` makes it the primary metric.
//!
//! Model (all costs assumed unless noted; CPU times at the reference
//! frequency): each client repeats a cycle of 100 operations shaped like
//! dbench's NBENCH trace mix — 63 metadata operations (open, close, stat,
//! find: `META_NS` each; one in seven is a Close, whose close(2) queues
//! the file's RCU callback on the client's CPU, machine/rcu.rs), 27 reads from the page cache (`READ_NS`), 9
//! writes into the page cache (`WRITE_NS`, `IO_BYTES` each) and one Flush.
//! A Flush is an fsync through the file-system layer (`fs.rs`, `fs=ext4`
//! or `xfs`): the client writes the dirty data (the cycle's writes) and
//! waits for it, then waits for the journal commit, which the kernel's
//! journal thread does on its own CPU — jbd2's journal write, cache flush,
//! commit block and FUA on ext4; the CIL push's iclog write with
//! PREFLUSH|FUA and the log worker's completion on XFS. In `fsync=on` mode
//! each write is followed by an fsync of its own data. Every
//! `PASS_CYCLES` cycles (one pass of the load file) the client removes its
//! directory tree (dbench's Deltree: a readdir and unlink of every file the
//! pass created), a single operation of `DELTREE_NS` of CPU. Every
//! operation is timed from its start to its end.
//!
//! The Deltree is the model's largest CPU-bound operation and, at low
//! client counts, the one that sets the per-second maximum. Its size is
//! assumed (see the constant) so that this maximum is tens of ms and
//! CPU-bound, as the 2018 mail's 1-client figures (28.49 ms, falling 31 %
//! when HWP boost raises the frequency) imply it must be: a maximum set by
//! the device could not react to the CPU frequency that much.
//!
//! What the kernel does for it (`fs.rs`): the journal thread commits each
//! Flush's transaction on its own CPU, and the writeback flusher wakes
//! every 5 s (dbench's data is written by its fsyncs long before the 30-s
//! expiry, so the flusher finds nothing to write).
//!
//! Left out: background writeback, directory and inode
//! lookups that miss the cache (reads are all page-cache hits), file
//! system locks between clients, and the load file's exact sequence.

use super::{
    Better, Dist, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec, Workload, WorkloadInfo,
};
use crate::metrics::hist::Histogram;
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;
use super::fs::{Fs, Layer, FS};

pub const CLIENTS: ParamSpec = ParamSpec {
    name: "clients",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 100_000 },
    help: "number of client processes (MMTests varies 1 .. 2-4x CPUs)",
};

pub const FSYNC: ParamSpec = ParamSpec {
    name: "fsync",
    unit: "",
    default: ParamDefault::Flag(false),
    range: Range::Switch,
    help: "fsync after every write (dbench -F; MMTests dbench4-fsync) instead of only at Flush",
};

pub const SCORE: ParamSpec = ParamSpec {
    name: "score",
    unit: "",
    default: ParamDefault::Word("latency"),
    range: Range::Choice(&["latency", "loadfile"]),
    help: "primary metric: latency (latency_ms, dbench's per-second maximum) or loadfile (loadfile_ms, a client's time per pass of the load file, as MMTests' ExtractDbench4 reports)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "dbench",
    description: "dbench4 clients replaying file operations with periodic fsync; latency and throughput",
    metric: "latency_ms (dbench's per-second maximum operation latency, averaged; ms, lower is better), or loadfile_ms with score=loadfile",
    params: &[CLIENTS, FSYNC, super::fs::FS, super::DEVICE, SCORE],
    ends: super::Ends::AtDuration,
    build,
};

/// CPU time of a metadata operation (open/close/stat/find; assumed: the
/// fileio backend's syscalls with dentry and inode cache hits, ~tens of µs
/// as dbench's per-operation averages show on local file systems).
const META_NS: f64 = 15_000.0;
/// CPU time of a page-cache read of `IO_BYTES` (assumed).
const READ_NS: f64 = 5_000.0;
/// CPU time of a buffered write of `IO_BYTES` (assumed: copy plus page
/// allocation and dirtying).
const WRITE_NS: f64 = 10_000.0;
/// Payload of one ReadX or WriteX (assumed: a few KB per request as in the
/// NBENCH trace).
const IO_BYTES: u64 = 8_192;

/// CPU time of a Deltree of one pass's files (assumed: ~200 files and
/// directories at ~75 µs per unlink with ext4 inode and journal work).
const DELTREE_NS: f64 = 15_000_000.0;
/// Cycles of 100 operations per pass of the load file (assumed).
const PASS_CYCLES: u64 = 20;

/// Operations per cycle by kind (shape of the NBENCH trace; see the header).
const READS_PER_WRITE: usize = 3;
const WRITES: usize = 9;
const META_PER_WRITE: usize = 7;

/// Operations in one pass of the load file: the cycles' and the Deltree.
const OPS_PER_PASS: u64 = PASS_CYCLES * (WRITES * (META_PER_WRITE + READS_PER_WRITE + 1) + 1) as u64 + 1;

const OP: u16 = 0;
const BYTES: u16 = 0;

pub struct Dbench {
    clients: u64,
    fsync: bool,
    fs: Fs,
    /// `device=NAME`; None: the platform's first device.
    device: Option<String>,
    /// `score=loadfile`: loadfile_ms is the primary metric.
    loadfile_score: bool,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload dbench", spec);
    let w = Dbench {
        clients: p.uint(&CLIENTS, &())?,
        fsync: p.flag(&FSYNC, &())?,
        fs: Fs::from_word(p.word(&FS)?),
        device: p.string(super::DEVICE.name),
        loadfile_score: p.word(&SCORE)? == "loadfile",
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Dbench {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let dev = super::pick_device("workload dbench", platform, self.device.as_deref(), "")?;
        let f_ref = platform.cpu_types[0].base_khz;
        // CPU costs vary around their means (cv 0.5, assumed) so that
        // clients do not move in lock-step.
        let cost = |ns: f64| Dist::lognormal(super::cycles_for_ns_at(ns, f_ref), 0.5);
        let (meta, read, write) = (cost(META_NS), cost(READ_NS), cost(WRITE_NS));
        let mut setup = Setup {
            series: vec!["op".into()],
            counters: vec!["bytes".into()],
            ..Setup::default()
        };
        let fs = Layer::new(self.fs, dev, &platform.devices[dev as usize].name, &mut setup);
        // The Deltree removes the same tree every pass (the load file does
        // not change), so its cost barely varies (cv 0.1, assumed).
        let deltree = Dist::lognormal(super::cycles_for_ns_at(DELTREE_NS, f_ref), 0.1);
        let fsync_each_write = self.fsync;
        let timed = |b: &mut ProgramBuilder, body: &dyn Fn(&mut ProgramBuilder)| {
            b.op(Op::Mark);
            body(b);
            b.record(OP, Since::Mark, None);
        };
        // One cycle of 100 operations.
        let cycle = |b: &mut ProgramBuilder| {
            for _ in 0..WRITES {
                for i in 0..META_PER_WRITE {
                    timed(b, &|b| {
                        b.run(meta, 0.0);
                        if i == META_PER_WRITE - 1 {
                            // A Close: close(2) frees the file through
                            // call_rcu() (machine/rcu.rs).
                            b.op(Op::CallRcu);
                        }
                    });
                    if i < READS_PER_WRITE {
                        timed(b, &|b| {
                            b.run(read, 0.0).count(BYTES, IO_BYTES);
                        });
                    }
                }
                timed(b, &|b| {
                    b.run(write, 0.0).count(BYTES, IO_BYTES);
                    if fsync_each_write {
                        fs.fsync(b, IO_BYTES);
                    }
                });
            }
            // The load file's Flush: in fsync mode the data is already on
            // disk and only the commit remains.
            let dirty = if fsync_each_write { 0 } else { IO_BYTES * WRITES as u64 };
            timed(b, &|b| fs.fsync(b, dirty));
        };
        let mut b = ProgramBuilder::new();
        b.repeat(None, |b| {
            b.repeat(Some(PASS_CYCLES), cycle);
            timed(b, &|b| {
                b.run(deltree, 0.0);
            });
        });
        let mut t = TaskSpec::new("dbench", b.build());
        t.instances = self.clients as u32;
        setup.tasks.push(t);
        setup.tasks.extend(fs.threads());
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let h = &r.series[OP as usize];
        let ms = |ns: f64| ns / 1e6;
        let ops_per_s = r.per_second(h.count as f64);
        let per_second_max = |h: &Histogram| {
            if ops_per_s > 1.0 {
                h.percentile(100.0 * (1.0 - 1.0 / ops_per_s))
            } else {
                h.max as f64
            }
        };
        let bytes = r.counters[BYTES as usize] as f64;
        vec![
            Metric::of_samples("latency_ms", h, |h| ms(per_second_max(h)), "ms", Better::Lower),
            Metric::of_samples("op_mean_ms", h, |h| ms(h.mean()), "ms", Better::Lower),
            Metric::of_samples("loadfile_ms", h, |h| ms(h.mean() * OPS_PER_PASS as f64), "ms", Better::Lower),
            Metric::of_samples("op_p99_ms", h, |h| ms(h.percentile(99.0)), "ms", Better::Lower),
            Metric::of_samples("op_max_ms", h, |h| ms(h.max as f64), "ms", Better::Lower),
            Metric::new(
                "throughput_mbs",
                r.per_second(bytes) / 1e6,
                "MB/s",
                Better::Higher,
            ),
            Metric::new("ops", h.count as f64, "count", Better::Higher),
        ]
    }

    fn primary(&self) -> &'static str {
        if self.loadfile_score {
            "loadfile_ms"
        } else {
            "latency_ms"
        }
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![
            CLIENTS.show(self.clients),
            FSYNC.show_flag(self.fsync),
            FS.show(self.fs.name()),
            SCORE.show(if self.loadfile_score { "loadfile" } else { "latency" }),
        ];
        super::show_device(self.device.as_ref(), &mut v);
        v
    }
}

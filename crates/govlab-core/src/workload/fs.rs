//! The file system under the IO workloads: ext4 with its jbd2 journal
//! thread, or XFS with its CIL push and log completion workers, and the
//! writeback flusher — kernel threads beside the workload's tasks.
//!
//! Models: Linux v6.8 mainline (v5.2 where it differs: the workqueues,
//! below), fs/ext4/fsync.c (`ext4_sync_file`),
//! fs/jbd2/journal.c and commit.c (`kjournald2`, `jbd2_log_start_commit`,
//! `jbd2_log_wait_commit`, `jbd2_journal_commit_transaction`),
//! fs/xfs/xfs_file.c (`xfs_file_fsync`), fs/xfs/xfs_log_cil.c
//! (`xlog_cil_force_seq`, `xlog_cil_push_work` on the `xfs-cil` workqueue),
//! fs/xfs/xfs_log.c (`xlog_ioend_work` on the `xfs-log` workqueue,
//! `xlog_wait_on_iclog`), fs/fs-writeback.c (`wb_workfn` on the unbound
//! `writeback` workqueue, `wb_wakeup_delayed`) and mm/page-writeback.c (the
//! dirty limits).
//!
//! What an fsync does, as a workload task sees it:
//!
//! 1. The caller writes the file's dirty pages itself
//!    (`file_write_and_wait_range`) and waits for them in iowait.
//! 2. **ext4:** it asks jbd2 to commit the running transaction and sleeps
//!    until the commit is done (`jbd2_log_wait_commit`: wait_event, an
//!    uninterruptible sleep, not iowait; the model's [`Op::WaitEvent`], so
//!    a commit wakes all its waiters at once). The jbd2 kthread (`jbd2/<dev>-8`, unbound) wakes,
//!    spends its commit CPU, writes the journal blocks and waits for them,
//!    then submits the commit block with PREFLUSH|FUA and waits for it
//!    (v5.2 `jbd2_journal_commit_transaction()`: `wait_on_buffer()` on the
//!    journal blocks, `journal_submit_commit_record()`,
//!    `journal_wait_on_commit_record()`), in iowait on *its* CPU, and wakes
//!    every fsync waiting for the transaction. The block layer issues the
//!    commit's pre-flush and write, then the post-flush that emulates FUA on
//!    a device without it (the device's `fua`: machine/exec.rs), from each
//!    other's completions; until session 31
//!    jbd2 waited for each of the three and was woken after each.
//!    **XFS:** the caller queues the CIL push and sleeps on the iclog
//!    (`xlog_wait_on_iclog`, not iowait). A `kworker` of the `xfs-cil`
//!    workqueue (per-CPU up to v5.3, below) formats the checkpoint and
//!    submits one iclog write with PREFLUSH|FUA; it does not wait for it
//!    (the model's [`Op::IoFuaEndWork`]). The write's completion
//!    runs `xlog_ioend_work` (v5.2: `xlog_iodone`) on an `xfs-log`
//!    kworker, which wakes the waiters.
//! 3. Commits are shared, by sequence: an fsync waits for the first commit
//!    that starts after its own changes, and every fsync waiting for that
//!    one is released by it (jbd2's and the CIL's batching). One commit is
//!    written at a time. **ext4:** `jbd2_complete_transaction()` waits for
//!    the tid of the transaction that holds the inode's change
//!    (`ei->i_sync_tid`), and kjournald2 commits one transaction after the
//!    other (fs/jbd2/journal.c, v5.2): an fsync arriving while a commit is
//!    written joins the running transaction and waits for the next commit,
//!    which starts when that one is done. **XFS:** `xfs_log_force_lsn()`
//!    pushes the CIL up to the inode's checkpoint sequence and waits for
//!    that checkpoint's iclog (v5.2 fs/xfs/xfs_log_cil.c
//!    `xlog_cil_force_lsn`); an fsync arriving while a checkpoint's iclog is
//!    being written has its change in the next checkpoint, and
//!    `__xfs_log_force_lsn()` (v5.2 fs/xfs/xfs_log.c) sleeps on the
//!    previous iclog's `ic_write_wait` while it is WANT_SYNC or SYNCING
//!    before syncing the next one ("by waiting for the previous I/O to
//!    complete, we can allow a few more transactions into this iclog").
//!    Modelled with the write-ahead log's sequence ([`Op::LogFlush`],
//!    `ProgramBuilder::log_wait`): the fsync records its change; with no
//!    commit under way, the first waiter whose change no finished commit
//!    covers asks the journal thread for one, covering every change
//!    recorded so far; the journal thread's end of the commit
//!    ([`Op::LogFlushed`]) wakes that task and every other waiter at once,
//!    and whoever changed before the commit started needs nothing more.
//!    The next commit starts when a waiter it must cover runs again: as in
//!    XFS, whose waiters sync the next iclog themselves; kjournald2 would
//!    start it at once for a tid already requested (a simplification for
//!    ext4). Until session 21 an fsync arriving during a commit was
//!    released by it (no sequence).
//!
//! The writeback flusher (`kworker/flush`, a worker of the unbound
//! `writeback` workqueue) wakes every `dirty_writeback_centisecs` (5 s)
//! while there is dirty data and writes back inodes dirtied more than
//! `dirty_expire_centisecs` (30 s) ago, or anything above
//! `dirty_background_ratio` (10 %) of memory. The fsync-driven workloads
//! (dbench, sqlite-insert, pgbench) write their data themselves long before
//! it expires, so their flusher only wakes, scans and sleeps: its CPU cost
//! per wakeup is the model's. Workloads with their own buffered-write model
//! (iozone) keep their flusher.
//!
//! Where the kernel threads run. jbd2 is a kthread of its own and the
//! flusher a worker of `writeback`, a WQ_UNBOUND workqueue
//! (mm/backing-dev.c `default_bdi_init`): the scheduler places them like
//! any unbound task, usually on an idle CPU other than the caller's, which
//! is what wakes idle CPUs and what IO boosts and idle governors see.
//! XFS's two workers are work items, and where they run follows the
//! workqueue's flags ([`super::Workqueue`]):
//!
//! * **CIL push** (`xfs-cil`): a per-CPU workqueue up to v5.3 — v5.2
//!   fs/xfs/xfs_super.c `xfs_init_mount_workqueues()` allocates it
//!   WQ_MEM_RECLAIM|WQ_FREEZABLE, and `xlog_cil_push_now()` queues the push
//!   with `queue_work()` from the fsync caller, so the push runs in a
//!   kworker on the caller's CPU, after the caller sleeps or by preempting
//!   it. WQ_UNBOUND from v5.4 (8ab39f11d974, "xfs: prevent CIL push
//!   holdoff in log recovery", Dave Chinner, September 2019: "queue_work()
//!   queues the CIL work on the current CPU that is busy, and the
//!   workqueue code will not run it on any other CPU"). v6.8 follows the
//!   unbound form.
//! * **Log IO completion** (`xfs-log`): a per-CPU WQ_HIGHPRI workqueue in
//!   every version modelled, queued from the bio's completion on the CPU
//!   the completion runs on. v5.2: `m_log_workqueue`
//!   (WQ_MEM_RECLAIM|WQ_FREEZABLE|WQ_HIGHPRI), the iclog buffers'
//!   `b_ioend_wq` (`xlog_alloc_log`), running `xlog_iodone`; from v5.3
//!   (Christoph Hellwig's "xfs: move the log ioend workqueue to struct
//!   xlog") `l_ioend_workqueue` with the same flags, `xlog_bio_end_io()`
//!   queueing `xlog_ioend_work`; v6.8 the same. Its kworkers run at nice
//!   −20 (kernel/workqueue.c `HIGHPRI_NICE_LEVEL`, MIN_NICE). In the
//!   model the iclog's last completion queues the log worker's work from
//!   the CPU the completion runs on ([`Op::IoFuaEndWork`]): the submitting
//!   CPU on the platforms without an `irq_cpu` (a queue per CPU), else the
//!   device's interrupt CPU when it shares the submitter's LLC (SATA's
//!   one interrupt on the x86 servers: machine/exec.rs). The log worker
//!   then wakes the fsync waiters from there, as the kernel's does. The
//!   CIL worker submits the iclog and goes back to waiting for the next
//!   push at once: the block layer issues the pre-flush, the write and (FUA
//!   emulated) the post-flush each from the previous one's completion (v5.2
//!   block/blk-flush.c `blk_flush_complete_seq()`), waking nobody on the
//!   way (until session 31 the worker slept through the pre-flush and the
//!   write, woken after each).
//!
//! Block completions are the engine's (`machine/exec.rs`: the device's
//! interrupt CPU, else the submitting one).
//!
//! Costs: CPU times measured on the development machine
//! (tools/calibrate/cycleclock: tools/calibrate/fs_fsync's script on an AMD
//! EPYC KVM guest, Linux 6.18, ext4 with journal on a loop device),
//! converted to cycles at that machine's core clock measured in the same
//! sitting; XFS's are assumed equal to ext4's.
//!
//! Left out: the jbd2 commit timer (`JBD2_DEFAULT_MAX_COMMIT_AGE`, 5 s
//! after a transaction starts — every modelled workload's fsyncs commit far
//! sooner, so it never fires), xfsaild and the 30-s XFS log worker (they
//! push metadata on log-tail pressure or every `xfs_syncd_centisecs`),
//! ext4 fast commits, `data=journal`; a change is dated at its fsync (an
//! inode changed before a commit started but fsynced during it waits for
//! the next one here, not in the kernel: dbench's and sqlite's fsyncs
//! follow their changes at once).

use super::{ChannelSpec, Dist, IoKind, Op, ProgramBuilder, Setup, TaskSpec, Workqueue};
use crate::kernel::EraId;
use crate::params::{ParamDefault, ParamSpec, Range};

/// `fs=ext4|xfs` of the IO workloads.
pub const FS: ParamSpec = ParamSpec {
    name: "fs",
    unit: "",
    default: ParamDefault::Word("ext4"),
    range: Range::Choice(&["ext4", "xfs"]),
    help: "file system: ext4 (jbd2 journal thread) or xfs (CIL push and log workers); both with default mount options",
};

/// `vm.dirty_writeback_centisecs` default (mm/page-writeback.c,
/// `dirty_writeback_interval = 5 * 100`): the flusher's wakeup period.
pub const DIRTY_WRITEBACK_CENTISECS: u64 = 500;
/// `vm.dirty_expire_centisecs` default (mm/page-writeback.c,
/// `dirty_expire_interval = 30 * 100`): age at which dirty data is written.
pub const DIRTY_EXPIRE_CENTISECS: u64 = 3000;
/// `vm.dirty_background_ratio` default (mm/page-writeback.c), % of
/// dirtyable memory above which the flusher writes in the background.
pub const DIRTY_BACKGROUND_RATIO: u64 = 10;
/// jbd2's default commit interval, s (include/linux/jbd2.h
/// `JBD2_DEFAULT_MAX_COMMIT_AGE`; ext4 `commit=5`).
pub const JBD2_DEFAULT_MAX_COMMIT_AGE: u64 = 5;

/// Nice level of a WQ_HIGHPRI workqueue's kworkers (kernel/workqueue.c,
/// `HIGHPRI_NICE_LEVEL = MIN_NICE`, v5.2 and v6.8).
const HIGHPRI_NICE_LEVEL: i32 = -20;
/// CPU of the fsync path in the caller, besides the data write it waits
/// for: measured 80.4 and 77.4 µs per 4 KiB write + fsync on ext4 with a
/// journal (two runs), less 12.6 µs for the buffered write of the page
/// (the runs' 15.1 and 10.0 µs per page; tools/calibrate/cycleclock,
/// run1/ and run2/fs_fsync-output.txt, means, costs.py).
const FSYNC_CALLER_NS: f64 = 66_400.0;
/// CPU of an fdatasync that needs no commit: measured 71.4 and 72.0 µs per
/// 4 KiB write + fsync on the machine's journal-less ext4, less the 12.2 µs
/// write (15.6 and 8.8; same files, "root-fs results"; means).
const FDATASYNC_CALLER_NS: f64 = 59_500.0;
/// CPU of one jbd2 commit: measured 55 and 45 µs of jbd2 CPU per fsync at
/// 0.720 and 0.528 commits per fsync (same files; clock-tick resolution,
/// ±10 %): 76.4 and 85.2 µs, mean 80.8.
const JBD2_COMMIT_NS: f64 = 80_800.0;
/// CPU of one CIL push (assumed: the jbd2 commit's).
const XLOG_CIL_PUSH_NS: f64 = JBD2_COMMIT_NS;
/// CPU of `xlog_ioend_work` completing an iclog and waking its waiters
/// (assumed; like every time here, cycles at the calibration core clock).
const XLOG_IOEND_NS: f64 = 10_000.0;
/// CPU of a flusher wakeup that finds nothing expired (assumed: a scan of
/// the bdi's dirty inode lists).
const WB_WAKEUP_NS: f64 = 20_000.0;
/// ext4: journal descriptor plus a few metadata blocks per commit, and the
/// commit block (assumed: a small metadata transaction).
const JBD2_JOURNAL_BYTES: u64 = 16_384;
const JBD2_COMMIT_BYTES: u64 = 4_096;
/// XFS: one iclog write of a small checkpoint (assumed).
const XLOG_ICLOG_BYTES: u64 = 8_192;

/// Which file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fs {
    Ext4,
    Xfs,
}

impl Fs {
    /// From the `fs` parameter's word.
    pub fn from_word(w: &str) -> Fs {
        if w == "xfs" { Fs::Xfs } else { Fs::Ext4 }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fs::Ext4 => "ext4",
            Fs::Xfs => "xfs",
        }
    }
}

/// The file system of one workload run: its kernel threads and the
/// objects they share with the workload's tasks.
#[derive(Debug, Clone)]
pub struct Layer {
    fs: Fs,
    device: u32,
    /// The device's name, for the journal thread's comm.
    device_name: String,
    /// Mutex guarding the commit's completion.
    lock: u32,
    /// Channel the fsync leading a commit asks the journal thread by (a
    /// message is never lost, unlike a signal nobody waits for).
    request: u32,
    /// Condition broadcast when a commit is on disk.
    done: u32,
    /// The journal's sequence (tids, checkpoint sequences): a
    /// write-ahead log whose flush is a commit.
    seq: u32,
    /// XFS: the CIL worker hands a written iclog to the log worker.
    ioend: u32,
}

impl Layer {
    /// Reserve the layer's mutex, conditions and channel in `setup` (after
    /// the workload's own); the threads come from [`Layer::threads`].
    pub fn new(fs: Fs, device: u32, device_name: &str, setup: &mut Setup) -> Layer {
        let lock = setup.mutexes;
        setup.mutexes += 1;
        let done = setup.conds;
        setup.conds += 1;
        let seq = setup.logs;
        setup.logs += 1;
        let ioend = setup.channels.len() as u32;
        setup.channels.push(ChannelSpec::plain("xlog-ioend", u64::MAX / 2));
        let request = setup.channels.len() as u32;
        setup.channels.push(ChannelSpec::plain("journal-request", u64::MAX / 2));
        Layer { fs, device, device_name: device_name.into(), lock, request, done, seq, ioend }
    }

    pub fn fs(&self) -> Fs {
        self.fs
    }

    /// The cycles a time measured on the calibration machine took there
    /// at its core clock (the same cycles on every platform, assumed),
    /// spread log-normally (cv 0.3, assumed) so that threads do not move in
    /// lock-step.
    fn cost(ns: f64) -> Dist {
        Dist::lognormal(super::measured_cycles(ns), 0.3)
    }

    fn io(&self, b: &mut ProgramBuilder, kind: IoKind, bytes: u64) {
        b.op(Op::Io { device: self.device, kind, bytes });
    }

    /// The ops of an fsync (or fdatasync that must log metadata) of a file
    /// with `data_bytes` dirty: the caller writes its data, then waits for
    /// the journal commit (see the module doc).
    pub fn fsync(&self, b: &mut ProgramBuilder, data_bytes: u64) {
        let half = Self::cost(FSYNC_CALLER_NS / 2.0);
        b.run(half, 0.0);
        if data_bytes > 0 {
            self.io(b, IoKind::Write, data_bytes);
        }
        b.run(half, 0.0);
        let (lock, request, done) = (self.lock, self.request, self.done);
        b.log_wait(self.seq, |b| {
            b.op(Op::Lock { mutex: lock })
                .op(Op::Send { chan: request, bytes: 1 })
                .op(Op::WaitEvent { cond: done, mutex: lock });
        });
    }

    /// The ops of an fdatasync of an overwrite that changes no metadata
    /// (pgbench's preallocated WAL): the caller writes its data and issues
    /// the cache flush itself (ext4_sync_file and xfs_file_fsync both call
    /// blkdev_issue_flush when there is nothing to log).
    pub fn fdatasync_overwrite(&self, b: &mut ProgramBuilder, data_bytes: u64) {
        let half = Self::cost(FDATASYNC_CALLER_NS / 2.0);
        b.run(half, 0.0);
        self.io(b, IoKind::Write, data_bytes);
        self.io(b, IoKind::Flush, 0);
        b.run(half, 0.0);
    }

    /// The kernel threads, to append after the workload's tasks: the
    /// journal's and the writeback flusher.
    pub fn threads(&self) -> Vec<TaskSpec> {
        let mut out = self.journal_threads();
        let flusher = ProgramBuilder::new()
            .repeat(None, |b| {
                b.timer(DIRTY_WRITEBACK_CENTISECS * 10_000_000).run(Self::cost(WB_WAKEUP_NS), 0.0);
            })
            .build();
        out.push(kthread("kworker/flush".into(), flusher));
        out
    }

    /// The journal's threads only, for a workload that models its own
    /// writeback (iozone).
    pub fn journal_threads(&self) -> Vec<TaskSpec> {
        let mut out = Vec::new();
        let (lock, request, done, seq) = (self.lock, self.request, self.done, self.seq);
        // One request at a time (the sequence's leader), so one commit at a
        // time; its end wakes the leader and every fsync waiting behind it.
        let committer = |b: &mut ProgramBuilder, body: &dyn Fn(&mut ProgramBuilder), after: &dyn Fn(&mut ProgramBuilder)| {
            b.repeat(None, |b| {
                b.op(Op::Recv { chan: request });
                body(b);
                after(b);
            });
        };
        match self.fs {
            Fs::Ext4 => {
                let mut b = ProgramBuilder::new();
                committer(
                    &mut b,
                    &|b| {
                        b.run(Self::cost(JBD2_COMMIT_NS), 0.0);
                        self.io(b, IoKind::Write, JBD2_JOURNAL_BYTES);
                        b.op(Op::IoFua { device: self.device, bytes: JBD2_COMMIT_BYTES });
                    },
                    &|b| {
                        b.op(Op::Lock { mutex: lock })
                            .op(Op::LogFlushed { log: seq })
                            .op(Op::CondSignal { cond: done, all: true })
                            .op(Op::Unlock { mutex: lock });
                    },
                );
                out.push(kthread(jbd2_comm(&self.device_name), b.build()));
            }
            Fs::Xfs => {
                let ioend = self.ioend;
                let dev = self.device;
                let mut b = ProgramBuilder::new();
                committer(
                    &mut b,
                    &|b| {
                        b.run(Self::cost(XLOG_CIL_PUSH_NS), 0.0);
                        // One iclog write with PREFLUSH|FUA, submitted
                        // without waiting; its end (the FUA write, or the
                        // post-flush that emulates it) queues the log worker's work on the CPU the
                        // completion runs on.
                        b.op(Op::IoFuaEndWork { device: dev, bytes: XLOG_ICLOG_BYTES, chan: ioend });
                    },
                    &|_| {},
                );
                let mut cil = kthread("kworker/xfs-cil".into(), b.build());
                cil.workqueue = Some(Workqueue { unbound_from: Some(EraId::XfsCilUnbound) });
                out.push(cil);
                let log = ProgramBuilder::new()
                    .repeat(None, |b| {
                        b.op(Op::Recv { chan: ioend })
                            .run(Self::cost(XLOG_IOEND_NS), 0.0)
                            .op(Op::Lock { mutex: lock })
                            .op(Op::LogFlushed { log: seq })
                            .op(Op::CondSignal { cond: done, all: true })
                            .op(Op::Unlock { mutex: lock });
                    })
                    .build();
                let mut log = kthread("kworker/xfs-log".into(), log);
                log.workqueue = Some(Workqueue { unbound_from: None });
                log.nice = HIGHPRI_NICE_LEVEL;
                out.push(log);
            }
        }
        out
    }
}

/// jbd2's thread name, `jbd2/<dev>-8` as kjournald2's (partition 1's
/// journal inode 8), cut to the 15 bytes of a comm.
fn jbd2_comm(device: &str) -> String {
    let mut s = format!("jbd2/{device}-8");
    s.truncate(15);
    s
}

fn kthread(comm: String, program: super::Program) -> TaskSpec {
    let mut t = TaskSpec::new(comm, program);
    t.kthread = true;
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::CALIBRATION_CORE_KHZ;

    /// The cycleclock sitting's raw outputs (tools/calibrate/cycleclock).
    const CLOCKS: [&str; 4] = [
        include_str!("../../../../tools/calibrate/cycleclock/run1/clock.txt"),
        include_str!("../../../../tools/calibrate/cycleclock/run1/clock-during.txt"),
        include_str!("../../../../tools/calibrate/cycleclock/run2/clock.txt"),
        include_str!("../../../../tools/calibrate/cycleclock/run2/clock-during.txt"),
    ];
    const FSYNC_RUNS: [&str; 2] = [
        include_str!("../../../../tools/calibrate/cycleclock/run1/fs_fsync-output.txt"),
        include_str!("../../../../tools/calibrate/cycleclock/run2/fs_fsync-output.txt"),
    ];

    /// `key`'s value in the section of an fs_fsync output that starts at `section`.
    fn figure(out: &str, section: &str, key: &str) -> f64 {
        let rest = &out[out.find(section).unwrap()..];
        let line = rest.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap();
        line.split(' ').nth(1).unwrap().parse().unwrap()
    }

    fn mean(section: &str, key: &str) -> f64 {
        FSYNC_RUNS.iter().map(|o| figure(o, section, key)).sum::<f64>() / FSYNC_RUNS.len() as f64
    }

    #[test]
    fn calibration_clock_is_the_sittings_core_clock_not_its_tsc_rate() {
        let fastest_ghz = CLOCKS
            .iter()
            .flat_map(|t| t.lines())
            .filter_map(|l| l.split_once("clock_ghz ").map(|(_, r)| r.split(' ').next().unwrap()))
            .map(|g| g.parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        assert!((f64::from(CALIBRATION_CORE_KHZ) - fastest_ghz * 1e6).abs() < 1000.0, "{fastest_ghz}");
        let tsc_mhz: f64 = CLOCKS[0]
            .split("cpu MHz")
            .nth(1)
            .and_then(|r| r.trim_start_matches(|c: char| c == ':' || c.is_whitespace()).split(';').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(f64::from(CALIBRATION_CORE_KHZ) > 1.2 * tsc_mhz * 1000.0, "{tsc_mhz}");
    }

    #[test]
    fn fsync_costs_are_the_sittings_measurements() {
        let (journal, root) = ("# loop-ext4 results", "# root-fs results");
        let caller = mean(journal, "caller_cpu_per_fsync") - mean(journal, "buffered_cpu_per_page");
        assert!((FSYNC_CALLER_NS / 1000.0 - caller).abs() < 0.1, "{caller}");
        let fdatasync = mean(root, "caller_cpu_per_fsync") - mean(root, "buffered_cpu_per_page");
        assert!((FDATASYNC_CALLER_NS / 1000.0 - fdatasync).abs() < 0.1, "{fdatasync}");
        let commit = FSYNC_RUNS
            .iter()
            .map(|o| figure(o, journal, "jbd2_cpu_per_fsync") / figure(o, journal, "jbd2_commits_per_fsync"))
            .sum::<f64>()
            / 2.0;
        assert!((JBD2_COMMIT_NS / 1000.0 - commit).abs() < 0.1, "{commit}");
    }
}

//! `sqlite-insert`: rows inserted one transaction at a time into an SQLite
//! database with synchronous commits; transactions per second.
//!
//! MMTests' sqlite shellpack (configs db-sqlite-insert-small and -medium;
//! the hwp-dynamic-boost-2018 mail ran -medium: 2 MiB / 52 B = 40329 rows,
//! 2098 trans/s on ext4 without the patch) generates one `INSERT INTO
//! 'mmtests' ... VALUES ('10', CURRENT_TIMESTAMP, '<4 chars>', '<16
//! chars>');` line per row and has a Perl script write the lines into a
//! pipe read by the `sqlite3` shell, counting lines per second. Each line
//! is an autocommit transaction. The shell's defaults are the rollback
//! journal (`journal_mode=DELETE`) and `synchronous=FULL`, so a commit
//! writes the original page to `<db>-journal`, syncs the journal, writes its
//! header's page count and syncs it again, writes the database page,
//! syncs the database, and unlinks the journal.
//!
//! Model: a feeder task (the Perl script) writes 130-byte lines into a
//! 64 KiB pipe; the sqlite3 task reads a line, parses and executes the
//! insert (`STATEMENT_NS`), then commits: three fsyncs through the
//! file-system layer (`fs.rs`, `fs=ext4|xfs`) — each writes its data and
//! waits for the journal commit that jbd2 (or XFS's CIL push and log
//! worker) does on its own CPU — for the journal content, the journal
//! header and the database, then the unlink (closing and unlinking the
//! journal frees its file and inode through call_rcu(), which keeps the
//! CPU's tick: machine/rcu.rs). Each commit counts one transaction and
//! records its latency from the start of the statement.
//!
//! All CPU costs are assumed (at the reference frequency); the device
//! costs are the platform's. The transaction rate is bounded by three
//! commits of two cache flushes each, `1 / (6 × flush time)`: on a
//! platform whose flush is much slower than the drive the 2018 mail used,
//! the absolute rate is far below its 2098/s (which needs fsyncs of ~80 µs).
//! Each fsync changes metadata (the journal file grows; the header and the
//! database page rewrites change mtime), so each needs a commit.
//!
//! Left out: the directory fsync SQLite does after creating the
//! journal, page splits and the growing B-tree, and the `rows` limit of the
//! real run (the workload runs for the whole duration unless `rows` is set).

use super::{
    ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec, Workload,
    WorkloadInfo,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;
use super::fs::{Fs, Layer, FS};

pub const ROWS: ParamSpec = ParamSpec {
    name: "rows",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Uint { min: 0, max: 1_000_000_000 },
    help: "rows to insert, then stop (MMTests: 2520 small, 40329 medium); 0 = until the run ends",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "sqlite-insert",
    description: "one sqlite3 shell inserting rows, each its own synchronous transaction; transactions per second",
    metric: "tps (transactions/s, higher is better)",
    params: &[ROWS, super::fs::FS, super::DEVICE],
    ends: super::Ends::ByItselfWith { param: "rows" },
    build,
};

/// Bytes per INSERT line (the shellpack's statement with 4 + 16 random
/// characters is ~130 bytes).
const LINE_BYTES: u64 = 130;
/// A pipe buffers 64 KiB (pipe(7)).
const PIPE_CAPACITY: u64 = 65_536;
/// CPU time of the Perl loop per line: read a line, print it, count
/// (assumed).
const FEEDER_NS: f64 = 3_000.0;
/// CPU time to read, parse, plan and execute one INSERT in the sqlite3
/// shell, B-tree insert included (assumed: a few tens of µs).
const STATEMENT_NS: f64 = 30_000.0;
/// CPU time of the write() before each fsync, measured: 15.06 and 10.04 µs
/// per buffered 4 KiB page on ext4 with a journal, mean 12.55 µs
/// (tools/calibrate/cycleclock/run{1,2}/fs_fsync-output.txt, the figure
/// `fs.rs`'s FSYNC_CALLER_NS is net of; cycles at
/// `workload::CALIBRATION_CORE_KHZ`, that sitting's clock). The fsync's own
/// CPU is `fs.rs`'s.
const WRITE_CPU_NS: f64 = 12_550.0;
/// CPU time of unlinking the journal (assumed).
const UNLINK_NS: f64 = 10_000.0;
/// Journal content: header sector plus one 4 KiB page with its checksum,
/// written as 8 KiB (assumed); the header rewrite is one 4 KiB block;
/// the database page is 4 KiB (SQLite's default page size).
const JOURNAL_BYTES: u64 = 8_192;
const HEADER_BYTES: u64 = 4_096;
const PAGE_BYTES: u64 = 4_096;

/// The pipe between the feeder and the shell.
const PIPE: u32 = 0;

const TXN: u16 = 0;
const COMMITS: u16 = 0;

pub struct SqliteInsert {
    rows: u64,
    fs: Fs,
    /// `device=NAME`; None: the platform's first device.
    device: Option<String>,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload sqlite-insert", spec);
    let w = SqliteInsert {
        rows: p.uint(&ROWS, &())?,
        fs: Fs::from_word(p.word(&FS)?),
        device: p.string(super::DEVICE.name),
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for SqliteInsert {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let dev = super::pick_device("workload sqlite-insert", platform, self.device.as_deref(), "")?;
        let f_ref = platform.cpu_types[0].base_khz;
        let cyc = |ns: f64| Dist::Fixed(super::cycles_for_ns_at(ns, f_ref));
        let count = if self.rows == 0 { None } else { Some(self.rows) };

        let feeder = ProgramBuilder::new()
            .repeat(count, |b| {
                b.run(cyc(FEEDER_NS), 0.0).op(Op::Send {
                    chan: PIPE,
                    bytes: LINE_BYTES,
                });
            })
            .build();
        let mut setup = Setup {
            channels: vec![ChannelSpec::pipe("stdin", PIPE_CAPACITY)],
            series: vec!["txn".into()],
            counters: vec!["commits".into()],
            ..Setup::default()
        };
        let fs = Layer::new(self.fs, dev, &platform.devices[dev as usize].name, &mut setup);
        let sync_write = |b: &mut ProgramBuilder, bytes: u64| {
            b.run(Dist::Fixed(super::measured_cycles(WRITE_CPU_NS)), 0.0);
            fs.fsync(b, bytes);
        };
        let shell = ProgramBuilder::new()
            .repeat(count, |b| {
                b.op(Op::Recv { chan: PIPE }).op(Op::Mark).run(cyc(STATEMENT_NS), 0.0);
                sync_write(b, JOURNAL_BYTES);
                sync_write(b, HEADER_BYTES);
                sync_write(b, PAGE_BYTES);
                // The journal's close and unlink free its file and inode
                // through call_rcu() (machine/rcu.rs).
                b.run(cyc(UNLINK_NS), 0.0)
                    .op(Op::CallRcu)
                    .record(TXN, Since::Mark, None)
                    .count(COMMITS, 1);
            })
            .build();
        setup.tasks = vec![TaskSpec::new("perl", feeder), TaskSpec::new("sqlite3", shell)];
        setup.tasks.extend(fs.threads());
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        super::transaction_metrics(r, COMMITS, TXN, "txn", "us")
    }

    fn ends_by_itself(&self) -> bool {
        self.rows > 0
    }

    fn progress(&self, r: &Record) -> Option<super::Progress> {
        (self.rows > 0).then(|| super::Progress { done: r.counters[COMMITS as usize], total: self.rows, what: "rows inserted" })
    }

    fn primary(&self) -> &'static str {
        "tps"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![ROWS.show(self.rows), FS.show(self.fs.name())];
        super::show_device(self.device.as_ref(), &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_cpu_is_the_cycleclock_sittings_buffered_page() {
        let runs = [
            include_str!("../../../../tools/calibrate/cycleclock/run1/fs_fsync-output.txt"),
            include_str!("../../../../tools/calibrate/cycleclock/run2/fs_fsync-output.txt"),
        ];
        let page = |out: &str| -> f64 {
            let journal = &out[out.find("# loop-ext4 results").unwrap()..];
            let line = journal.lines().find(|l| l.starts_with("buffered_cpu_per_page ")).unwrap();
            line.split(' ').nth(1).unwrap().parse().unwrap()
        };
        let mean = runs.iter().map(|o| page(o)).sum::<f64>() / 2.0;
        assert!((WRITE_CPU_NS / 1000.0 - mean).abs() < 0.01, "{mean}");
    }
}

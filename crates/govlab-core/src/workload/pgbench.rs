//! `pgbench`: pgbench clients driving PostgreSQL backends with TPC-B-like
//! read/write or select-only transactions; transactions per second.
//!
//! pgbench (shipped with PostgreSQL) opens `-c` connections, each served by
//! its own backend process, and has every client loop over a script,
//! sending one statement at a time and waiting for its result (simple
//! query protocol). The default "tpcb-like" script is BEGIN; UPDATE
//! pgbench_accounts; SELECT abalance; UPDATE pgbench_tellers; UPDATE
//! pgbench_branches; INSERT INTO pgbench_history; END — seven round trips,
//! and a commit that waits for the WAL to be flushed (synchronous_commit =
//! on; wal_sync_method = fdatasync on Linux). The select-only script (`-S`)
//! is one SELECT per transaction and never writes. MMTests
//! (db-pgbench-timed-rw-small / -ro-small, used by the
//! hwp-dynamic-boost-2018 mail: rw 2692 tps at 1 client up to 7462 at 8 on
//! ext4 without the patch) varies the clients up to NUMCPUS (rw) or
//! 2×NUMCPUS (ro), with a cache-hot database sized to 80 % of
//! shared_buffers, so reads never touch the disk.
//!
//! pgbench-bench (MMTests ffca095a, January 2020) runs `-j NUMNODES`
//! threads, one below NUMNODES clients: pgbench.c's threadRun has each
//! thread poll its connections' sockets and send each connection that
//! answered its next statement, so on a one-node machine one thread drives
//! every connection.
//!
//! Model: per client a backend task joined to the pgbench side by a request
//! and a reply channel (a TCP connection on 127.0.0.1: MMTests'
//! pgbench-bench exports PGHOST=127.0.0.1); per client a pgbench task of its
//! own (`threads=0`, the default), or `threads` tasks polling their share
//! of the connections. The pgbench side pays `CLIENT_NS` per
//! statement (build, send, receive, parse the result), the backend
//! `STMT_NS` of the statement's kind. In `rw` mode the END statement
//! inserts the transaction's commit record into the WAL and waits for it
//! to be flushed before replying, with PostgreSQL's group commit
//! (src/backend/access/transam/xlog.c `XLogFlush`, PostgreSQL 15; the same
//! loop since 9.2): a backend whose record is not yet on disk takes
//! WALWriteLock with `LWLockAcquireOrWait` and flushes everything inserted
//! so far, or, when another backend holds the lock, sleeps on its
//! semaphore (not in iowait) until the lock is released, wakes with every
//! other waiter (lwlock.c `LWLockWakeup`) and checks again: a record the
//! finished flush covered needs nothing more; the others race for the lock
//! and the winner flushes for all of them (`Op::LogFlush`; commit_delay is
//! 0 by default, so nobody waits for followers). The flush is an
//! fdatasync of an overwrite of a preallocated WAL segment, which changes
//! no metadata, so on ext4 and XFS alike (`fs.rs`, `fs=ext4|xfs`) the
//! flushing backend writes the data and issues the cache flush itself,
//! with no journal commit; the file system's journal thread and the
//! writeback flusher run beside it (the flusher wakes every 5 s; the
//! journal thread has nothing to commit). Each completed transaction counts one
//! and records its latency; `wal_syncs` counts the flushes, as
//! pg_stat_wal.wal_sync does (PostgreSQL 14+).
//!
//! Each side's send wakes the other from inside it, as every loopback TCP
//! send does, but here the whole per-statement cost runs before the message
//! is queued: the costs are assumed totals with no send part of their own
//! (docs/validation.md, "Session 40": the measured tail tried and not
//! applied).
//!
//! All CPU costs are assumed (at the reference frequency), of the order of
//! published pgbench profiles (tens of µs per statement on a cache-hot
//! database). Backend work is partly memory-bound (buffer-pool and index
//! lookups): `mem` 0.3 for select-only, 0.2 for the read/write mix whose
//! extra work is WAL record assembly (assumed).
//!
//! Left out: the WAL insertion locks and the spinlock-protected reads of
//! the flush position (CPU only, inside the statement costs), the WAL
//! bytes a group flush writes beyond one page, row-lock contention on
//! pgbench_branches (small at the scale factors MMTests uses),
//! checkpoints, autovacuum, and the WAL writer (with synchronous_commit on
//! it flushes only what asynchronous commits leave, every
//! wal_writer_delay, 200 ms) and background writer processes.

use super::{
    Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec, Workload,
    WorkloadInfo,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;
use super::fs::{Fs, Layer, FS};

pub const CLIENTS: ParamSpec = ParamSpec {
    name: "clients",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 10_000 },
    help: "client connections, one backend each (pgbench -c)",
};

pub const THREADS: ParamSpec = ParamSpec {
    name: "threads",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Uint { min: 0, max: 10_000 },
    help: "pgbench worker threads (-j), each polling its share of the connections; 0: one per client",
};

pub const MODE: ParamSpec = ParamSpec {
    name: "mode",
    unit: "",
    default: ParamDefault::Word("rw"),
    range: Range::Choice(&["rw", "ro"]),
    help: "rw (tpcb-like, WAL flush at commit) or ro (select-only, pgbench -S)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "pgbench",
    description: "pgbench clients and their PostgreSQL backends, TPC-B-like read/write or select-only; tps",
    metric: "tps (transactions/s, higher is better)",
    params: &[CLIENTS, THREADS, MODE, super::fs::FS, super::DEVICE],
    ends: super::Ends::AtDuration,
    build,
};

/// Client CPU per statement: substitute variables, send, wait, receive and
/// parse the result (assumed).
const CLIENT_NS: f64 = 8_000.0;
/// Backend CPU per statement kind (assumed): BEGIN; an UPDATE by primary
/// key; a SELECT by primary key; an INSERT; END (commit record assembly).
const BEGIN_NS: f64 = 5_000.0;
const UPDATE_NS: f64 = 35_000.0;
const SELECT_NS: f64 = 25_000.0;
const INSERT_NS: f64 = 30_000.0;
const COMMIT_NS: f64 = 15_000.0;
/// WAL written per read/write transaction (assumed: one 8 KiB WAL page).
const WAL_BYTES: u64 = 8_192;
/// Memory-bound share of backend work (assumed; see the header).
const MEM_RO: f64 = 0.3;
const MEM_RW: f64 = 0.2;
/// Bytes of a statement or a result row (only channel accounting).
const MSG_BYTES: u64 = 200;

const TXN: u16 = 0;
const TRANSACTIONS: u16 = 0;
/// WAL flushes, as PostgreSQL 14+ counts them (pg_stat_wal.wal_sync).
const WAL_SYNCS: u16 = 1;

pub struct Pgbench {
    clients: u64,
    /// Worker threads, at most one per client (0 in the spec: one per client).
    threads: u64,
    mode: &'static str,
    fs: Fs,
    /// `device=NAME`; None: the platform's first device.
    device: Option<String>,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload pgbench", spec);
    let clients = p.uint(&CLIENTS, &())?;
    let threads = p.uint(&THREADS, &())?;
    let w = Pgbench {
        clients,
        // pgbench.c main(): "if (nthreads > nclients) nthreads = nclients".
        threads: if threads == 0 { clients } else { threads.min(clients) },
        mode: p.word(&MODE)?,
        fs: Fs::from_word(p.word(&FS)?),
        device: p.string(super::DEVICE.name),
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Pgbench {
    /// Fewer threads than clients: each pgbench thread (pgbench.c
    /// threadRun) polls its connections' sockets and answers whichever
    /// spoke with that connection's next statement, so it cannot tell where
    /// a transaction ends; the backends count the transactions and time
    /// them (from BEGIN's arrival to END's reply). Threads get their share
    /// of the clients as pgbench.c main() deals them, the remainder to the
    /// later threads.
    fn threaded(
        &self,
        setup: &mut Setup,
        backend: &dyn Fn(&mut ProgramBuilder, u32, u32, bool),
        cost: &dyn Fn(f64) -> Dist,
    ) {
        let n = self.clients as u32;
        let (req0, resp0) = (setup.channels.len() as u32, setup.channels.len() as u32 + n);
        for c in 0..n {
            setup.channels.push(ChannelSpec::pipe(format!("c{c}.req"), 65_536));
        }
        for c in 0..n {
            setup.channels.push(ChannelSpec::pipe(format!("c{c}.resp"), 65_536));
        }
        let threads = self.threads as u32;
        let mut first = 0;
        for i in 0..threads {
            let count = (n - first + threads - i - 1) / (threads - i);
            let mut b = ProgramBuilder::new();
            // Each connection's first statement, then one per reply.
            for c in first..first + count {
                b.run(cost(CLIENT_NS / 2.0), 0.0).op(Op::Send { chan: req0 + c, bytes: MSG_BYTES });
            }
            b.repeat(None, |b| {
                b.op(Op::RecvAny { first: resp0 + first, count })
                    .run(cost(CLIENT_NS), 0.0)
                    .op(Op::SendPolled { first: req0 + first, bytes: MSG_BYTES });
            });
            setup.tasks.push(TaskSpec::new("pgbench", b.build()));
            for c in first..first + count {
                let mut b = ProgramBuilder::new();
                backend(&mut b, req0 + c, resp0 + c, true);
                setup.tasks.push(TaskSpec::new("postgres", b.build()));
            }
            first += count;
        }
    }
}

impl Workload for Pgbench {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let rw = self.mode == "rw";
        let mut dev = 0;
        if rw {
            dev = super::pick_device("workload pgbench", platform, self.device.as_deref(), " for mode=rw")?;
        }
        let f_ref = platform.cpu_types[0].base_khz;
        // Statement costs vary (cv 0.3, assumed) so that clients drift apart.
        let cost = |ns: f64| Dist::lognormal(super::cycles_for_ns_at(ns, f_ref), 0.3);
        // (backend cost, ends with a WAL flush) per statement of the script.
        let script: Vec<(f64, bool)> = if rw {
            vec![
                (BEGIN_NS, false),
                (UPDATE_NS, false),
                (SELECT_NS, false),
                (UPDATE_NS, false),
                (UPDATE_NS, false),
                (INSERT_NS, false),
                (COMMIT_NS, true),
            ]
        } else {
            vec![(SELECT_NS, false)]
        };
        let mem = if rw { MEM_RW } else { MEM_RO };
        let mut setup = Setup {
            series: vec!["txn".into()],
            counters: vec!["transactions".into(), "wal_syncs".into()],
            ..Setup::default()
        };
        // Only rw touches the disk: select-only has no file-system threads.
        let fs = rw.then(|| Layer::new(self.fs, dev, &platform.devices[dev as usize].name, &mut setup));
        // The WAL, shared by every backend (see `Op::LogFlush`).
        let wal = setup.logs;
        setup.logs += 1;
        let backend = |b: &mut ProgramBuilder, req: u32, resp: u32, count: bool| {
            b.repeat(None, |b| {
                for (i, &(ns, flush)) in script.iter().enumerate() {
                    b.op(Op::Recv { chan: req });
                    if count && i == 0 {
                        b.op(Op::Mark);
                    }
                    b.run(cost(ns), mem);
                    if let (true, Some(fs)) = (flush, &fs) {
                        b.log_flush(wal, |b| {
                            b.count(WAL_SYNCS, 1);
                            fs.fdatasync_overwrite(b, WAL_BYTES);
                        });
                    }
                    b.op(Op::Send {
                        chan: resp,
                        bytes: MSG_BYTES,
                    });
                }
                if count {
                    b.record(TXN, Since::Mark, None).count(TRANSACTIONS, 1);
                }
            });
        };
        if self.threads < self.clients {
            self.threaded(&mut setup, &backend, &cost);
            if let Some(fs) = &fs {
                setup.tasks.extend(fs.threads());
            }
            return Ok(setup);
        }
        let base = setup.channels.len() as u32;
        for c in 0..self.clients as u32 {
            let (req, resp) = (base + 2 * c, base + 2 * c + 1);
            setup.channels.push(ChannelSpec::pipe(format!("c{c}.req"), 65_536));
            setup.channels.push(ChannelSpec::pipe(format!("c{c}.resp"), 65_536));
            let client = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Mark);
                    for _ in &script {
                        b.run(cost(CLIENT_NS / 2.0), 0.0)
                            .op(Op::Send {
                                chan: req,
                                bytes: MSG_BYTES,
                            })
                            .op(Op::Recv { chan: resp })
                            .run(cost(CLIENT_NS / 2.0), 0.0);
                    }
                    b.record(TXN, Since::Mark, None).count(TRANSACTIONS, 1);
                })
                .build();
            let mut b = ProgramBuilder::new();
            backend(&mut b, req, resp, false);
            setup.tasks.push(TaskSpec::new("pgbench", client));
            setup.tasks.push(TaskSpec::new("postgres", b.build()));
        }
        if let Some(fs) = &fs {
            setup.tasks.extend(fs.threads());
        }
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let mut m = super::transaction_metrics(r, TRANSACTIONS, TXN, "latency", "ms");
        if self.mode == "rw" {
            m.push(Metric::new("wal_syncs", r.counters[WAL_SYNCS as usize] as f64, "count", Better::Lower));
        }
        m
    }

    fn primary(&self) -> &'static str {
        "tps"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![
            CLIENTS.show(self.clients),
            THREADS.show(self.threads),
            MODE.show(self.mode),
            FS.show(self.fs.name()),
        ];
        super::show_device(self.device.as_ref(), &mut v);
        v
    }
}

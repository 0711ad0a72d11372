//! The language tasks are written in.
//!
//! A task runs a [`Program`]: a flat list of [`Op`]s with loops compiled to
//! jumps. The engine interprets it one op at a time (`machine/exec.rs`). Work
//! is counted in cycles at the CPU type's reference frequency (its base,
//! P1, frequency) with a memory-bound fraction `mem` of the time that does
//! not speed up with the clock:
//!
//! ```text
//!   time(f) = cycles / f_ref · (mem + (1 − mem) · f_ref / f)
//! ```
//!
//! so pure compute (`mem = 0`) takes time ∝ 1/f and fully memory-bound work
//! (`mem = 1`) takes the same time at every frequency.

use crate::sim::rng::{LogNormal, Rng};

/// A random or fixed quantity (cycles, ns, bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Fixed(f64),
    Uniform { lo: f64, hi: f64 },
    Exp { mean: f64 },
    LogNormal(LogNormal),
    /// A measured distribution: one of `bins` (each an equal share of the
    /// measured values, as its mean) at random, times `scale`.
    Table { bins: &'static [f64], scale: f64 },
}

impl Dist {
    /// Log-normal with the given mean and coefficient of variation.
    pub fn lognormal(mean: f64, cv: f64) -> Dist {
        Dist::LogNormal(LogNormal::new(mean, cv))
    }

    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform { lo, hi } => lo + (hi - lo) * rng.f64(),
            Dist::Exp { mean } => rng.exp(mean),
            Dist::LogNormal(ref d) => rng.lognormal(d),
            Dist::Table { bins, scale } => bins[rng.below(bins.len() as u64) as usize] * scale,
        }
    }

    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform { lo, hi } => (lo + hi) / 2.0,
            Dist::Exp { mean } | Dist::LogNormal(LogNormal { mean, .. }) => mean,
            Dist::Table { bins, scale } => bins.iter().sum::<f64>() / bins.len() as f64 * scale,
        }
    }

    #[must_use]
    pub fn scaled(self, k: f64) -> Dist {
        match self {
            Dist::Fixed(v) => Dist::Fixed(v * k),
            Dist::Uniform { lo, hi } => Dist::Uniform { lo: lo * k, hi: hi * k },
            Dist::Exp { mean } => Dist::Exp { mean: mean * k },
            Dist::LogNormal(LogNormal { mean, cv, .. }) => Dist::lognormal(mean * k, cv),
            Dist::Table { bins, scale } => Dist::Table { bins, scale: scale * k },
        }
    }
}

/// Kinds of block IO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    Read,
    Write,
    /// A cache flush (fsync's barrier).
    Flush,
}

/// What a recorded interval is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// The task's last wakeup (a timer expiry, a message, an IO completion).
    Wake,
    /// The task's last `Mark`.
    Mark,
    /// Arrival of the request the task last received from a source.
    Request,
}

/// What an [`Op::TraceMarker`] writes: rt-app's `log_ftrace()` lines
/// (rt-app src/rt-app.c at 55cb0c0).
#[derive(Debug, Clone, PartialEq)]
pub enum TraceMarker {
    /// A fixed line (`rtapp_task: event=start`, `rtapp_event: ...`).
    Text(std::sync::Arc<str>),
    /// The main thread's `rtapp_main: event=start` and thread 0's
    /// `rtapp_main: event=clock_ref data=<µs>`: written by the first task
    /// to get here, once a run.
    MainStart,
    /// `rtapp_loop: event=start|end thread_loop=T phase=P phase_loop=L`,
    /// T and L the iteration counts of the two innermost loops (the
    /// thread's and the phase's).
    Loop { start: bool, phase: u32 },
}

/// One instruction of a task program. An explicit tag byte: the
/// interpreter's dispatch reads it directly (without one the tag shares
/// `Dist`'s, which costs a subtraction and a conditional move per op).
#[derive(Debug, Clone, PartialEq)]
#[repr(u8)]
pub enum Op {
    /// Compute for `cycles` (at the reference frequency), `mem` of it
    /// memory-bound.
    Run { cycles: Dist, mem: f64 },
    /// Sleep for a relative time.
    Sleep { ns: Dist },
    /// Sleep until the timer's next expiry: `period_ns` after its previous
    /// one, the first `period_ns` after the task started (rt-app's `timer`).
    /// When that expiry has already passed the task does not sleep; a
    /// `relative` timer then restarts its period from now, an absolute one
    /// keeps its grid (rt-app's "relative" and "absolute" modes).
    Timer { period_ns: u64, timer: TimerRef, relative: bool },
    /// Submit a request to a device and wait for it in iowait.
    Io { device: u32, kind: IoKind, bytes: u64 },
    /// Submit a write of `bytes` with REQ_PREFLUSH|REQ_FUA and wait for
    /// the whole of it in iowait: the block layer issues the cache flush,
    /// the write and the FUA's second flush each from the previous one's
    /// completion (machine/exec.rs `FlushStep`), and only the last wakes
    /// the submitter. jbd2's commit record: v5.2
    /// `journal_submit_commit_record()` submits it with
    /// REQ_SYNC|REQ_PREFLUSH|REQ_FUA and `journal_wait_on_commit_record()`
    /// waits on its buffer.
    IoFua { device: u32, bytes: u64 },
    /// Submit a write of `bytes` with REQ_PREFLUSH|REQ_FUA and go on
    /// without waiting. The block layer carries out its steps, each from
    /// the previous one's completion in interrupt context: a cache flush,
    /// the write, a second flush for the FUA (machine/exec.rs `FlushStep`);
    /// the last completion queues work, a 1-byte message in channel `chan`
    /// put there from the CPU that completion runs on (the device's
    /// interrupt CPU or the submitter). XFS's iclog write: v5.2
    /// `xlog_sync()` submits the iclog buffer with XBF_ASYNC|XBF_FLUSH|XBF_FUA
    /// and returns, and the write's end queues `xlog_iodone` on the per-CPU
    /// `xfs-log` workqueue (from v5.3 `xlog_bio_end_io()` queues
    /// `xlog_ioend_work`) on the CPU it runs on.
    IoFuaEndWork { device: u32, bytes: u64, chan: u32 },
    /// Submit a request through io_uring and wait for its completion in
    /// io_cqring_wait(), which counts as iowait only from v6.5
    /// (`KernelConfig::io_uring_wait_is_iowait`).
    IoRing { device: u32, kind: IoKind, bytes: u64 },
    /// Put a message in a channel; blocks while the channel is full.
    Send { chan: u32, bytes: u64 },
    /// Put a datagram in a channel without ever blocking: it is dropped
    /// when the channel already holds more than its capacity, as a UDP
    /// socket drops at a full receive buffer (v4.10+
    /// `__udp_enqueue_schedule_skb`, net/ipv4/udp.c: drop once
    /// sk_rmem_alloc exceeds sk_rcvbuf; one datagram always fits).
    SendDatagram { chan: u32, bytes: u64 },
    /// Take a message from a channel; blocks while it is empty. On a TCP
    /// stream channel: up to its `recv_bytes` of what has arrived.
    Recv { chan: u32 },
    /// shutdown(SHUT_WR) on a TCP stream channel: the FIN, a 1-byte send
    /// that takes everything Nagle held with it; on another channel a
    /// 1-byte [`Op::Send`].
    Shutdown { chan: u32 },
    /// poll(2) on channels `first`..`first + count`, then read the one
    /// holding the oldest message (the lowest index among equals); blocks
    /// while all are empty. Remembers which, for [`Op::SendPolled`].
    RecvAny { first: u32, count: u32 },
    /// [`Op::Send`] on channel `first` + the index the task's last
    /// [`Op::RecvAny`] read from (a reply on the connection that spoke).
    SendPolled { first: u32, bytes: u64 },
    Lock { mutex: u32 },
    Unlock { mutex: u32 },
    /// Start `count` tasks from template `template`.
    Fork { template: u32, count: u32 },
    /// Wait until every task this task forked has exited.
    Join,
    Exit,
    /// Exit if the clock has passed `at_ns` (fio's `time_based` runtime
    /// check after each completion); otherwise go on.
    ExitAfter { at_ns: u64 },
    /// Leave the innermost loop (its `EndLoop` at `end`) if the clock has
    /// passed `at_ns`; otherwise go on: a test that sends until its timer
    /// (netperf's `times_up`) and then goes on with the same task.
    BreakAfter { at_ns: u64, end: u32 },
    /// Start of a loop body; `count` None loops forever. `end` is the index
    /// of the matching `EndLoop`.
    Loop { count: Option<u64>, end: u32 },
    /// End of a loop body; jumps back to `start` + 1 while iterations remain.
    EndLoop { start: u32 },
    /// Remember now as the task's mark.
    Mark,
    /// Write a line to the trace (a `trace_marker` write, ftrace's `print`
    /// event); nothing when the run is not traced. Takes no time.
    TraceMarker { marker: TraceMarker },
    /// Record now − `since` into latency series `series`; counts a miss when
    /// the value exceeds `deadline_ns`.
    Record { series: u16, since: Since, deadline_ns: Option<u64> },
    /// Add `amount` to counter `counter`.
    Count { counter: u16, amount: u64 },
    /// The kernel queues an RCU callback on the running CPU (call_rcu();
    /// close(2)'s file_free(), fs/file_table.c). Takes no time; the CPU
    /// keeps its tick while callbacks are queued (machine/rcu.rs).
    CallRcu,
    /// Give up the CPU (sched_yield).
    Yield,
    /// sched_setaffinity on itself: run only on `cpus` (None: every CPU);
    /// a task on a CPU it may no longer use moves at once (rt-app's
    /// per-phase `cpus`).
    SetAffinity { cpus: Option<std::sync::Arc<[usize]>> },
    /// execve(): the exec balancing `sched_exec()` does before the new
    /// image runs, which may move the task to another CPU
    /// (machine/fork.rs). Made by trace replays (an exec the recording
    /// shows); no workload-file key.
    Exec,
    /// Move itself to CFS task group `group` (an index into
    /// [`super::Setup::groups`]; None: the root group), as writing its tid
    /// into a cgroup's `tasks` file does (rt-app's per-phase `taskgroup`).
    SetGroup { group: Option<u32> },
    /// pthread_cond_wait: release `mutex` (if held), sleep until the
    /// condition is signalled, then take `mutex` again.
    CondWait { cond: u32, mutex: u32 },
    /// The kernel's wait_event(): release `mutex` (standing for the wait
    /// queue's lock the condition is checked under) and sleep until the
    /// condition is signalled; unlike `CondWait` the waiter does not take
    /// `mutex` again, so a broadcast wakes every waiter at once (jbd2's
    /// `j_wait_done_commit`).
    WaitEvent { cond: u32, mutex: u32 },
    /// pthread_cond_signal (`all` = false: the longest waiter) or
    /// pthread_cond_broadcast (`all` = true); a signal nobody waits for is
    /// lost.
    CondSignal { cond: u32, all: bool },
    /// Wait until every party of the barrier has arrived.
    Barrier { barrier: u32 },
    /// Append a record to write-ahead log `log`: the task's record ends at
    /// the log's insert position, now one further. Takes no time.
    LogInsert { log: u32 },
    /// Wait until the task's last record is flushed, flushing it if nobody
    /// is (PostgreSQL's XLogFlush with LWLockAcquireOrWait on WALWriteLock,
    /// [`ProgramBuilder::log_flush`]): if the record is already on disk,
    /// continue at op `done`; if no task holds the log's write lock, take
    /// it, aiming at every record inserted so far, and go on to the flush
    /// ops that follow; otherwise sleep (not in iowait) until the holder
    /// releases the lock, then check again.
    LogFlush { log: u32, done: u32 },
    /// The holder's flush is on disk: mark its target flushed, release the
    /// write lock and wake every task waiting for it.
    LogFlushed { log: u32 },
    /// With probability 1 − `p` continue at op `other` instead of the next.
    Pick { p: f64, other: u32 },
    /// Continue at op `to`.
    Jump { to: u32 },
}

/// Which timer a `Timer` op uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerRef {
    /// The task's own timer number n (each task and instance has its own).
    Own(u32),
    /// Timer n of the workload, shared by every task that names it.
    Shared(u32),
}

/// A compiled task program.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Program {
    pub ops: Vec<Op>,
}

/// Builds programs with structured loops.
#[derive(Debug, Default)]
pub struct ProgramBuilder {
    ops: Vec<Op>,
}

impl ProgramBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn op(&mut self, op: Op) -> &mut Self {
        self.ops.push(op);
        self
    }

    pub fn run(&mut self, cycles: Dist, mem: f64) -> &mut Self {
        self.op(Op::Run { cycles, mem })
    }

    pub fn sleep(&mut self, ns: Dist) -> &mut Self {
        self.op(Op::Sleep { ns })
    }

    /// The task's own absolute periodic timer 0.
    pub fn timer(&mut self, period_ns: u64) -> &mut Self {
        self.op(Op::Timer {
            period_ns,
            timer: TimerRef::Own(0),
            relative: false,
        })
    }

    pub fn record(&mut self, series: u16, since: Since, deadline_ns: Option<u64>) -> &mut Self {
        self.op(Op::Record { series, since, deadline_ns })
    }

    pub fn count(&mut self, counter: u16, amount: u64) -> &mut Self {
        self.op(Op::Count { counter, amount })
    }

    /// `count` None repeats forever.
    pub fn repeat(&mut self, count: Option<u64>, body: impl FnOnce(&mut Self)) -> &mut Self {
        let start = self.ops.len();
        self.ops.push(Op::Loop { count, end: 0 });
        body(self);
        let end = self.ops.len();
        self.ops.push(Op::EndLoop { start: start as u32 });
        self.ops[start] = Op::Loop { count, end: end as u32 };
        self
    }

    /// A loop whose body runs until the clock passes `at_ns`, checked before
    /// each pass ([`Op::BreakAfter`]).
    pub fn repeat_until(&mut self, at_ns: u64, body: impl FnOnce(&mut Self)) -> &mut Self {
        let start = self.ops.len();
        self.ops.push(Op::Loop { count: None, end: 0 });
        self.ops.push(Op::BreakAfter { at_ns, end: 0 });
        body(self);
        let end = self.ops.len();
        self.ops.push(Op::EndLoop { start: start as u32 });
        self.ops[start] = Op::Loop { count: None, end: end as u32 };
        self.ops[start + 1] = Op::BreakAfter { at_ns, end: end as u32 };
        self
    }

    /// A journal commit waited for by sequence: the ops of `request` ask
    /// for a commit covering every change recorded so far and sleep until
    /// it is on disk, done by whichever waiting task finds no commit
    /// covering its change and none under way; another task (the journal's)
    /// ends the commit with [`Op::LogFlushed`], which wakes every waiter at
    /// once. Skipped by a task whose change a finished commit covered.
    pub fn log_wait(&mut self, log: u32, request: impl FnOnce(&mut Self)) -> &mut Self {
        self.ops.push(Op::LogInsert { log });
        let at = self.ops.len();
        self.ops.push(Op::LogFlush { log, done: 0 });
        request(self);
        let done = self.ops.len() as u32;
        self.ops[at] = Op::LogFlush { log, done };
        self
    }

    /// With probability `p` the ops of `first`, otherwise those of `second`.
    pub fn either(&mut self, p: f64, first: impl FnOnce(&mut Self), second: impl FnOnce(&mut Self)) -> &mut Self {
        let pick = self.ops.len();
        self.ops.push(Op::Pick { p, other: 0 });
        first(self);
        let jump = self.ops.len();
        self.ops.push(Op::Jump { to: 0 });
        let other = self.ops.len() as u32;
        second(self);
        let end = self.ops.len() as u32;
        self.ops[pick] = Op::Pick { p, other };
        self.ops[jump] = Op::Jump { to: end };
        self
    }

    /// A group commit: the ops of `flush` write and flush the log, done by
    /// whichever waiting task takes the write lock, and skipped by every
    /// task whose record another's flush covered ([`Op::LogFlush`]).
    pub fn log_flush(&mut self, log: u32, flush: impl FnOnce(&mut Self)) -> &mut Self {
        self.ops.push(Op::LogInsert { log });
        let at = self.ops.len();
        self.ops.push(Op::LogFlush { log, done: 0 });
        flush(self);
        self.ops.push(Op::LogFlushed { log });
        let done = self.ops.len() as u32;
        self.ops[at] = Op::LogFlush { log, done };
        self
    }

    pub fn build(&mut self) -> Program {
        Program {
            ops: std::mem::take(&mut self.ops),
        }
    }
}

//! The workload interpreter (the tasks' own code) and the objects it uses:
//! channels, locks, request sources, and block devices with their IO
//! completion as block/blk-mq.c and block/blk-flush.c (Linux v6.8) do it.
//!
//! A task executes ops while it is on a CPU: zero-time ops (marks, records,
//! counters, sends that fit, loop jumps) run back to back; `run` starts a
//! work segment; blocking ops take the task off its runqueue until whoever
//! it waits for wakes it.
//!
//! Devices serve `queue_depth` requests at once, FIFO beyond that, with
//! log-normal service times (mean from the platform file scaled by size,
//! coefficient of variation `service_cv`); the completion interrupt goes to
//! the CPU that submitted the request (blk-mq with rq_affinity=1), and the
//! waiting task wakes with the IOWAIT flag.
//!
//! Cache flushes follow the block layer's flush machinery (block/blk-flush.c,
//! Linux v6.8): flushes submitted while one is in flight wait and are all
//! served by the next single flush, whose completion ends every one of them.
//! On a device whose flush is not queued (`flush_queued = false`: SATA, whose
//! FLUSH CACHE EXT is a non-NCQ command that libata's ata_std_qc_defer()
//! holds back until the NCQ commands in flight have completed, and behind
//! which no NCQ command is issued), a flush first waits for the device to
//! drain, runs alone, and requests submitted meanwhile queue behind it. NVMe
//! flushes are queued like any other command (`flush_queued = true`).

use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;

use super::rq::{Task, Wakee};
use super::{Engine, Event};
use crate::error::{Error, Result};
use crate::platform::{CpuId, Fua};
use crate::sched::cpumask::CpuMask;
use crate::sched::fork::init_entity_runnable_average;
use crate::sched::pelt::SchedAvg;
use crate::sched::{TaskId, TaskState};
use crate::sim::idmap::IdMap;
use crate::sim::rng::{LogNormal, Rng, Stream};
use crate::sim::Time;
use crate::workload::{Arrivals, IoKind, Op, Program, Setup, Since, TaskSpec, TcpStream, TimerRef};
use crate::trace::{TRACE_FLAG_HARDIRQ, TRACE_FLAG_SOFTIRQ};

/// A pipe or socket at run time.
#[derive(Debug, Clone)]
pub struct ChannelRt {
    pub capacity_bytes: u64,
    pub used_bytes: u64,
    /// Messages: (bytes, request arrival time if it came from a source);
    /// changed only through [`ChannelRt::push_message`] and
    /// [`ChannelRt::pop_message`], which keep `front_at`.
    messages: VecDeque<(u64, Time)>,
    /// The oldest message's time (`Time::MAX`: none; a message's time is a
    /// simulated instant, never that), so that `RecvAny` compares its
    /// channels without reaching into each queue.
    front_at: Time,
    pub receivers: VecDeque<TaskId>,
    /// Senders blocked on a full channel, with the size they want to send.
    pub senders: VecDeque<(TaskId, u64)>,
    /// Wakeups through it are WF_SYNC ([`crate::workload::ChannelSpec::sync`]).
    pub sync: bool,
    /// A TCP stream's state ([`crate::workload::TcpStream`]); its bytes are
    /// counted here, not in `messages`.
    pub tcp: Option<TcpRt>,
}

/// TCP_MSS_DEFAULT (include/net/tcp.h), the receiver's first rcv_mss
/// (tcp_initialize_rcv_mss(), v5.2).
const TCP_MSS_DEFAULT: u64 = 536;
/// A segment's TCP header with the timestamp option Linux sends (20 + 12).
const TCP_HEADER_BYTES: u64 = 32;

/// One direction of a TCP connection at run time.
#[derive(Debug, Clone, Default)]
pub struct TcpRt {
    pub spec: TcpStream,
    /// Written, not yet transmitted (the write queue's tail).
    pub tail: u64,
    /// Arrived at the receiver, not yet read.
    pub queued: u64,
    /// Arrived since the receiver's last ACK (rcv_nxt − rcv_wup).
    pub unacked: u64,
    /// A partial segment arrived since the last ACK (ICSK_ACK_PUSHED).
    pub pushed: bool,
    /// The receiver's estimate of the sender's MSS (icsk_ack.rcv_mss) and
    /// the last short segment's payload, if it counted (last_seg_size).
    pub rcv_mss: u64,
    pub last_seg: u64,
    /// The last partial segment sent is unacked (Minshall's Nagle hold).
    pub small_in_flight: bool,
    /// The task that last wrote, whose held tail an ACK may release.
    pub sender: Option<TaskId>,
    /// Segments transmitted.
    pub segments: u64,
}

impl Default for ChannelRt {
    fn default() -> Self {
        ChannelRt {
            capacity_bytes: 0,
            used_bytes: 0,
            messages: VecDeque::new(),
            front_at: Time::MAX,
            receivers: VecDeque::new(),
            senders: VecDeque::new(),
            sync: false,
            tcp: None,
        }
    }
}

impl ChannelRt {
    fn push_message(&mut self, bytes: u64, at: Time) {
        if self.messages.is_empty() {
            self.front_at = at;
        }
        self.messages.push_back((bytes, at));
    }

    fn pop_message(&mut self) -> Option<(u64, Time)> {
        let m = self.messages.pop_front();
        self.front_at = self.messages.front().map_or(Time::MAX, |&(_, at)| at);
        m
    }

    fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

#[derive(Debug, Clone, Default)]
pub struct MutexRt {
    pub owner: Option<TaskId>,
    pub waiters: VecDeque<TaskId>,
}

/// Whom a device request is for: the task that submitted it on `cpu`,
/// which sleeps until it completes; or, with `end_work`, nobody waits and
/// the completion queues work in that channel ([`Op::IoFuaEndWork`]).
/// Either happens after the steps still in `then` ([`Op::IoFua`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct IoWaiter {
    task: TaskId,
    cpu: CpuId,
    end_work: Option<u32>,
    then: FlushStep,
}

/// What is left of a REQ_PREFLUSH|REQ_FUA write when a step of it
/// completes (v5.2 block/blk-flush.c `blk_flush_complete_seq()`, called
/// from the completion: `flush_end_io()`, `mq_flush_data_end_io()`): the
/// write after the pre-flush, issued ahead of the queued requests
/// (`blk_flush_queue_rq(rq, true)`), then the post-flush, which joins the
/// pending flushes as any flush does. The post-flush is the FUA's emulation
/// on a device that does not take FUA writes (`blk_flush_policy()`); one
/// that does ([`DeviceRt::fua`]) gets the write as a FUA write and nothing
/// after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlushStep {
    None,
    Write(u64),
    PostFlush,
    /// This request is the FUA write itself: nothing follows it.
    Fua,
}

/// A storage device at run time.
#[derive(Debug, Clone)]
pub struct DeviceRt {
    pub busy: u32,
    /// Data requests not yet issued: (waiter, kind, bytes).
    pub queue: VecDeque<(IoWaiter, IoKind, u64)>,
    /// In-flight requests; None = free slot.
    pub slots: Vec<Option<Slot>>,
    /// Flushes waiting for the next flush to be issued.
    pub flush_pending: Vec<IoWaiter>,
    /// Whether a flush is in flight.
    pub flush_running: bool,
    /// When the device's one data channel (link and media) is free again.
    pub link_free_ns: Time,
    pub rng: Rng,
    /// Access times of a read, a write and a flush (`IoKind` order), ns.
    pub access: [LogNormal; 3],
    /// Whether the queue takes REQ_FUA writes (QUEUE_FLAG_FUA): the
    /// platform's `fua`, with libata's by the kernel's version.
    pub fua: bool,
}

/// What occupies a device slot.
#[derive(Debug, Clone)]
pub enum Slot {
    Data(IoWaiter),
    /// One flush serving every waiter that was pending when it was issued.
    Flush(Vec<IoWaiter>),
}

/// Condition variables, barriers and timers.
#[derive(Debug, Clone, Default)]
pub struct SyncRt {
    /// Waiters of each condition variable, with the mutex each re-takes.
    pub conds: Vec<VecDeque<(TaskId, u32)>>,
    /// Per barrier: parties, and the tasks waiting at it.
    pub barriers: Vec<(u32, Vec<TaskId>)>,
    /// Next expiry of each shared timer (None: not used yet).
    pub shared_timers: Vec<Option<Time>>,
    /// Next expiry of each task's own timers.
    pub own_timers: IdMap<(TaskId, u32), Time>,
    /// Write-ahead logs (`LogInsert`, `LogFlush`, `LogFlushed`).
    pub logs: Vec<LogRt>,
    /// Tasks blocked in `RecvAny`: the channels they wait on.
    pub pollers: IdMap<TaskId, (u32, u32)>,
    /// The index (from `first`) of the channel each task's last `RecvAny` read.
    pub polled: IdMap<TaskId, u32>,
}

/// A write-ahead log with group commit (PostgreSQL 15,
/// src/backend/access/transam/xlog.c XLogFlush; lwlock.c
/// LWLockAcquireOrWait, LWLockRelease). Positions count records.
#[derive(Debug, Clone, Default)]
pub struct LogRt {
    /// Insert position: records appended so far.
    pub inserted: u64,
    /// Flush position: records known to be on disk.
    pub flushed: u64,
    /// The task holding WALWriteLock, and the position its flush aims at
    /// (WaitXLogInsertionsToFinish: everything inserted when it took the lock).
    pub holder: Option<(TaskId, u64)>,
    /// Tasks sleeping in LWLockAcquireOrWait until the lock is free.
    pub waiters: Vec<TaskId>,
    /// Each task's last record's end.
    pub records: IdMap<TaskId, u64>,
}

#[derive(Debug, Clone)]
pub struct SourceRt {
    pub rate_per_s: f64,
    pub arrivals: Arrivals,
    pub chan: u32,
    pub rng: Rng,
}

/// What executing ops left the task doing.
enum Outcome {
    Computing,
    Blocked,
    Yielded,
    /// A task it woke preempted it; the CPU has already been rescheduled.
    Preempted,
}

/// Where `interpret`'s loop of the task's own ops stopped.
enum Step<'a> {
    /// At an op that may wake, block or preempt (index, op).
    Op(usize, &'a Op),
    /// [`MAX_ZERO_TIME_OPS`] ops without taking time.
    Spin,
    /// Past the program's last op.
    End,
}

/// Zero-time ops a task may execute in a row before the program is deemed
/// to spin without doing anything (a bug in the workload).
const MAX_ZERO_TIME_OPS: u32 = 1_000_000;

/// A condition waiter (`Op::WaitEvent`) that takes no mutex when woken.
const NO_MUTEX: u32 = u32::MAX;

impl Engine {
    /// Create channels, devices, sources and the initial tasks.
    pub(crate) fn init_workload(&mut self, setup: &Setup) -> Result<()> {
        for c in &setup.channels {
            let tcp = c.tcp.map(|spec| TcpRt { spec, rcv_mss: TCP_MSS_DEFAULT, ..TcpRt::default() });
            self.chans.push(ChannelRt { capacity_bytes: c.capacity_bytes, sync: c.sync, tcp, ..ChannelRt::default() });
        }
        self.mutexes = vec![MutexRt::default(); setup.mutexes as usize];
        self.sync = SyncRt {
            conds: vec![VecDeque::new(); setup.conds as usize],
            barriers: setup.barriers.iter().map(|&n| (n, Vec::new())).collect(),
            shared_timers: vec![None; setup.shared_timers as usize],
            own_timers: IdMap::default(),
            logs: vec![LogRt::default(); setup.logs as usize],
            pollers: IdMap::default(),
            polled: IdMap::default(),
        };
        for (i, d) in self.plat.devices.iter().enumerate() {
            self.devices.push(DeviceRt {
                busy: 0,
                queue: VecDeque::new(),
                slots: vec![None; d.queue_depth as usize],
                flush_pending: Vec::new(),
                flush_running: false,
                link_free_ns: 0,
                rng: Rng::new(self.seed, Stream::Device(i as u32)),
                access: [d.read_ns, d.write_ns, d.flush_ns].map(|ns| LogNormal::new(ns as f64, d.service_cv)),
                fua: match d.fua {
                    Fua::None => false,
                    Fua::Libata => self.kernel.libata_fua(),
                    Fua::Native => true,
                },
            });
        }
        for (i, s) in setup.sources.iter().enumerate() {
            self.sources.push(SourceRt {
                rate_per_s: s.rate_per_s,
                arrivals: s.arrivals,
                chan: s.chan,
                rng: Rng::new(self.seed, Stream::Source(i as u32)),
            });
            self.schedule_arrival(i);
        }
        for spec in setup.templates.iter().chain(&setup.tasks) {
            self.affinity_mask(spec)?;
            for op in &spec.program.ops {
                if let Op::SetAffinity { cpus: Some(cpus) } = op {
                    let n = self.plat.nr_cpus();
                    if let Some(&bad) = cpus.iter().find(|&&c| c >= n) {
                        return Err(Error::invalid(
                            format!("task {}", spec.comm),
                            "cpus",
                            bad,
                            format!("CPUs of {} (0 to {})", self.plat.name, n - 1),
                        ));
                    }
                }
            }
        }
        let mut pending = vec![0; self.plat.nr_cpus()];
        for spec in &setup.tasks {
            let affinity = self.affinity_mask(spec)?;
            let program = Rc::new(Program::clone(&spec.program));
            for i in 0..spec.instances {
                let start = spec.start_ns + u64::from(i) * spec.stagger_ns;
                let t = self.new_task(spec, Rc::clone(&program), affinity, None, start);
                if let Some(e) = self.fault.take() {
                    return Err(e);
                }
                if start == 0 {
                    self.wake_up_new_task(t, 0, 0);
                } else if let Some(cpu) = self.tasks[t].start_cpu.take() {
                    // A replayed task asleep when the recording began:
                    // asleep on its start CPU, on no runqueue, until its
                    // first wakeup, which select_task_rq() places from
                    // that CPU as from any previous CPU (try_to_wake_up,
                    // kernel/sched/core.c).
                    self.tasks[t].state = TaskState::Blocked;
                    self.tasks[t].cpu = cpu;
                    self.arm_task_timer(t, cpu, start);
                } else {
                    // Placed now, stays New until its start time.
                    self.place_delayed_task(t, 0, &mut pending);
                    self.arm_task_timer(t, 0, start);
                }
            }
        }
        Ok(())
    }

    fn affinity_mask(&self, spec: &TaskSpec) -> Result<Option<CpuMask>> {
        let Some(cpus) = &spec.affinity else { return Ok(None) };
        let n = self.plat.nr_cpus();
        if let Some(&bad) = cpus.iter().find(|&&c| c >= n) {
            return Err(Error::invalid(
                format!("task {}", spec.comm),
                "cpus",
                bad,
                format!("CPUs of {} (0 to {})", self.plat.name, n - 1),
            ));
        }
        if cpus.is_empty() {
            return Err(Error::invalid(format!("task {}", spec.comm), "cpus", "[]", "at least one CPU"));
        }
        Ok(Some(CpuMask::from_cpus(cpus.iter().copied())))
    }

    /// A task of `spec`, running `program` (the run's shared copy of the
    /// spec's program: `Task::program`).
    fn new_task(&mut self, spec: &TaskSpec, program: Rc<Program>, affinity: Option<CpuMask>, parent: Option<TaskId>, start_ns: Time) -> TaskId {
        let id = self.tasks.len();
        let pid = self.next_pid;
        self.next_pid += 1;
        let weight = crate::sched::nice_to_weight(spec.nice);
        self.tasks.push(Task {
            pid,
            comm: Arc::from(spec.comm.as_str()),
            state: TaskState::New,
            cpu: 0,
            affinity,
            bound_work: spec.workqueue.is_some_and(|w| w.unbound_from.map_or(true, |e| !self.kernel.has(e))),
            weight,
            nice_weight: weight,
            nice: spec.nice,
            idle_policy: false,
            class: crate::sched::rt::Class::Fair,
            rt: super::rq::RtEntity::default(),
            dl: super::rq::DlEntity::default(),
            uclamp_min: 0,
            uclamp_max: 1024,
            group: None,
            program,
            pc: 0,
            loops: Vec::new(),
            remaining_cycles: 0.0,
            mem: 0.0,
            kpath_cycles: 0.0,
            rng: Rng::new(self.seed, Stream::Task(id as u32)),
            start_ns,
            wake_ns: start_ns,
            mark_ns: start_ns,
            request_ns: start_ns,
            wake_pending: false,
            timer_gen: 0,
            timer_cpu: 0,
            timer_expiry_ns: 0,
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            custom_slice_ns: 0,
            sched_delayed: false,
            sum_exec_ns: 0,
            prev_sum_exec_ns: 0,
            exec_start_ns: 0,
            // sched_fork(): init_entity_runnable_average.
            // A replayed task the recording showed the load tracking of
            // starts from it (attached at its first enqueue, as a new task).
            avg: match (spec.forked, spec.recorded_pelt) {
                (true, _) => init_entity_runnable_average(weight),
                (false, Some((load, util))) => SchedAvg { load_avg: load, util_avg: util, runnable_avg: util, ..SchedAvg::default() },
                (false, None) => SchedAvg::default(),
            },
            needs_attach: true,
            forked: spec.forked,
            start_cpu: spec.start_cpu.filter(|&c| c < self.rqs.len() && affinity.map_or(true, |m| m.test(c))),
            in_iowait: false,
            parent,
            live_children: 0,
            joining: false,
            interp_epoch: 0,
            wakee: Wakee::default(),
            recent_used_cpu: 0,
        });
        // Kernel threads never exit and do not keep a run going.
        if !spec.kthread {
            self.live_tasks += 1;
        }
        if spec.sched != crate::workload::SchedAttr::default() {
            self.set_sched_attr(id, &spec.sched);
            if let Some(g) = self.tasks[id].group {
                self.group_attach(g, id);
            }
        }
        id
    }

    // ---- timers ----------------------------------------------------------

    fn arm_task_timer(&mut self, t: TaskId, cpu: CpuId, expiry: Time) {
        let tk = &mut self.tasks[t];
        tk.timer_gen = tk.timer_gen.wrapping_add(1);
        tk.timer_cpu = cpu;
        tk.timer_expiry_ns = expiry;
        self.rqs[cpu].timers.insert((expiry, t));
        self.q.schedule(expiry, Event::TaskTimer { task: t as u32, gen: tk.timer_gen });
    }

    pub(crate) fn task_timer_fired(&mut self, t: TaskId) {
        let cpu = self.tasks[t].timer_cpu;
        let expiry = self.tasks[t].timer_expiry_ns;
        self.rqs[cpu].timers.remove(&(expiry, t));
        self.interrupt(cpu);
        // A task's timers are hrtimers (nanosleep, clock_nanosleep): they
        // expire in the timer interrupt, so the wakeup is in hardirq context.
        match self.tasks[t].state {
            TaskState::New => self.wake_up_new_task(t, cpu, TRACE_FLAG_HARDIRQ),
            TaskState::Blocked => self.try_to_wake_up_in(t, cpu, TRACE_FLAG_HARDIRQ),
            _ => {}
        }
    }

    // ---- running programs ------------------------------------------------

    /// RunDone: continue the task's program after its segment.
    pub(crate) fn continue_task(&mut self, cpu: CpuId, t: TaskId) {
        match self.interpret(cpu, t) {
            Outcome::Computing => self.start_segment(cpu),
            Outcome::Blocked | Outcome::Yielded => self.schedule(cpu),
            Outcome::Preempted => {}
        }
    }

    /// From schedule(): true if the task is now computing on `cpu`.
    pub(crate) fn continue_task_inline(&mut self, cpu: CpuId, t: TaskId) -> bool {
        match self.interpret(cpu, t) {
            Outcome::Computing => {
                self.start_segment(cpu);
                true
            }
            Outcome::Preempted => true,
            Outcome::Blocked | Outcome::Yielded => false,
        }
    }

    /// Execute ops of running task `t` until it computes or blocks.
    fn interpret(&mut self, cpu: CpuId, t: TaskId) -> Outcome {
        let tk = &mut self.tasks[t];
        let program = tk.program.clone();
        tk.interp_epoch = tk.interp_epoch.wrapping_add(1);
        let epoch = tk.interp_epoch;
        let mut budget = MAX_ZERO_TIME_OPS;
        let now = self.now;
        loop {
            // An op that woke another task may have let it preempt this one;
            // the CPU was rescheduled then, and this task possibly resumed
            // (in a nested interpretation) before control came back here.
            let rq = &mut self.rqs[cpu];
            let tk = &mut self.tasks[t];
            if rq.curr != Some(t) || tk.interp_epoch != epoch {
                return Outcome::Preempted;
            }
            // A wakeup or the switch to this task left kernel work on the
            // CPU (machine/kpath.rs): it runs before the next op.
            if super::kpath::kpath_take_into(rq, tk) {
                return Outcome::Computing;
            }
            // The ops that touch only the task and the counters run in this
            // inner loop, with the task looked up once: none of them can
            // wake a task, preempt this one or leave kernel work, so the
            // checks above would find the same after each of them.
            let record = &mut self.record;
            let step = loop {
                budget -= 1;
                if budget == 0 {
                    break Step::Spin;
                }
                let pc = tk.pc;
                let Some(op) = program.ops.get(pc) else {
                    break Step::End;
                };
                tk.pc = pc + 1;
                match *op {
                    Op::Run { cycles, mem } => {
                        let c = cycles.sample(&mut tk.rng).max(0.0);
                        if c > 0.0 {
                            tk.remaining_cycles = c;
                            tk.mem = mem;
                            return Outcome::Computing;
                        }
                    }
                    Op::Pick { p, other } => {
                        if tk.rng.f64() >= p {
                            tk.pc = other as usize;
                        }
                    }
                    Op::Jump { to } => tk.pc = to as usize,
                    Op::BreakAfter { at_ns, end } => {
                        if now >= at_ns {
                            tk.loops.pop();
                            tk.pc = end as usize + 1;
                        }
                    }
                    Op::Loop { count, end } => {
                        if count == Some(0) {
                            tk.pc = end as usize + 1;
                        } else {
                            tk.loops.push((pc, count, 0));
                        }
                    }
                    Op::EndLoop { start } => {
                        if let Some(top) = tk.loops.last_mut() {
                            debug_assert_eq!(top.0, start as usize);
                            top.2 += 1;
                            match &mut top.1 {
                                None => tk.pc = start as usize + 1,
                                Some(n) if *n > 1 => {
                                    *n -= 1;
                                    tk.pc = start as usize + 1;
                                }
                                Some(_) => {
                                    tk.loops.pop();
                                }
                            }
                        }
                    }
                    Op::Mark => tk.mark_ns = now,
                    Op::Record { series, since, deadline_ns } => {
                        let from = match since {
                            Since::Wake => tk.wake_ns,
                            Since::Mark => tk.mark_ns,
                            Since::Request => tk.request_ns,
                        };
                        let v = now.saturating_sub(from);
                        record.series[series as usize].record(v);
                        if deadline_ns.is_some_and(|d| v > d) {
                            record.deadline_misses[series as usize] += 1;
                        }
                    }
                    Op::Count { counter, amount } => record.counters[counter as usize] += amount,
                    _ => break Step::Op(pc, op),
                }
            };
            let (pc, op) = match step {
                Step::Op(pc, op) => (pc, op),
                Step::Spin => {
                    // The workload's program spins without taking time: stop the
                    // run with an error naming the task (a user's file can do this).
                    let tk = &self.tasks[t];
                    self.fault.get_or_insert(Error::invalid(
                        format!("task {} (pid {})", tk.comm, tk.pid),
                        "ops",
                        format!("{MAX_ZERO_TIME_OPS} ops at {} ns without taking time", self.now),
                        "a program whose loops contain an op that takes time (run, sleep, timer, io, or a recv that waits)",
                    ));
                    self.task_exit(cpu, t);
                    return Outcome::Blocked;
                }
                Step::End => {
                    self.task_exit(cpu, t);
                    return Outcome::Blocked;
                }
            };
            match *op {
                Op::Sleep { ns } => {
                    let d = ns.sample(&mut self.tasks[t].rng).max(0.0) as u64;
                    self.block(cpu, t);
                    self.arm_task_timer(t, cpu, self.now + d.max(1));
                    return Outcome::Blocked;
                }
                Op::Send { chan, bytes } => {
                    if !self.chan_send(cpu, chan as usize, t, bytes, self.now) {
                        return Outcome::Blocked;
                    }
                }
                Op::SendDatagram { chan, bytes } => self.chan_send_datagram(cpu, chan as usize, bytes, self.now),
                Op::Recv { chan } => {
                    if self.chans[chan as usize].tcp.is_some() {
                        if !self.tcp_recv(cpu, chan as usize, t) {
                            // Woken by a segment, it reads when it runs.
                            self.tasks[t].pc = pc;
                            return Outcome::Blocked;
                        }
                    } else if !self.chan_recv(cpu, chan as usize, t) {
                        return Outcome::Blocked;
                    }
                }
                _ => {
                    if let Some(outcome) = self.interpret_other(cpu, t, pc, op) {
                        return outcome;
                    }
                }
            }
        }
    }

    /// The ops `interpret` does not keep in its own loop (the workloads
    /// that dominate run time use none of them in theirs): executed as
    /// there; `Some` when the task stops interpreting.
    #[inline(never)]
    #[allow(clippy::collapsible_match)] // the arms stay as `interpret` had them
    fn interpret_other(&mut self, cpu: CpuId, t: TaskId, pc: usize, op: &Op) -> Option<Outcome> {
        match *op {
            Op::Timer { period_ns, timer, relative } => {
                let expiry = self.timer_advance(t, timer, period_ns);
                if expiry > self.now {
                    self.block(cpu, t);
                    self.arm_task_timer(t, cpu, expiry);
                    return Some(Outcome::Blocked);
                }
                // Missed: the period already ended.
                self.record.timer_misses += 1;
                self.tasks[t].wake_ns = expiry;
                if relative {
                    self.timer_restart(t, timer);
                }
            }
            Op::Io { device, kind, bytes } => {
                self.block(cpu, t);
                self.tasks[t].in_iowait = true;
                self.rqs[cpu].nr_iowait += 1;
                self.io_submit(device as usize, t, kind, bytes, cpu);
                return Some(Outcome::Blocked);
            }
            Op::IoFua { device, bytes } => {
                self.block(cpu, t);
                self.tasks[t].in_iowait = true;
                self.rqs[cpu].nr_iowait += 1;
                let w = IoWaiter { task: t, cpu, end_work: None, then: FlushStep::Write(bytes) };
                self.io_submit_for(device as usize, w, IoKind::Flush, 0, false);
                return Some(Outcome::Blocked);
            }
            Op::IoFuaEndWork { device, bytes, chan } => {
                let w = IoWaiter { task: t, cpu, end_work: Some(chan), then: FlushStep::Write(bytes) };
                self.io_submit_for(device as usize, w, IoKind::Flush, 0, false);
            }
            Op::IoRing { device, kind, bytes } => {
                self.block(cpu, t);
                if self.kernel.io_uring_wait_is_iowait() {
                    self.tasks[t].in_iowait = true;
                    self.rqs[cpu].nr_iowait += 1;
                }
                self.io_submit(device as usize, t, kind, bytes, cpu);
                return Some(Outcome::Blocked);
            }
            Op::RecvAny { first, count } => {
                // The channel with the oldest message, the lowest of equals.
                let mut oldest = (Time::MAX, 0);
                for (i, ch) in self.chans[first as usize..(first + count) as usize].iter().enumerate() {
                    if ch.front_at < oldest.0 {
                        oldest = (ch.front_at, i as u32);
                    }
                }
                let ready = (oldest.0 != Time::MAX).then_some(first + oldest.1);
                if let Some(c) = ready {
                    self.chan_recv(cpu, c as usize, t);
                    self.sync.polled.insert(t, c - first);
                } else {
                    // Woken by the first message, it polls again.
                    for c in first..first + count {
                        self.chans[c as usize].receivers.push_back(t);
                    }
                    self.sync.pollers.insert(t, (first, count));
                    self.tasks[t].pc = pc;
                    self.block(cpu, t);
                    return Some(Outcome::Blocked);
                }
            }
            Op::SendPolled { first, bytes } => {
                let chan = first + self.sync.polled.get(&t).copied().unwrap_or(0);
                if !self.chan_send(cpu, chan as usize, t, bytes, self.now) {
                    return Some(Outcome::Blocked);
                }
            }
            Op::Shutdown { chan } => {
                if self.chans[chan as usize].tcp.is_some() {
                    self.tcp_write(cpu, chan as usize, t, 1);
                    self.tcp_transmit_tail(cpu, chan as usize);
                } else if !self.chan_send(cpu, chan as usize, t, 1, self.now) {
                    return Some(Outcome::Blocked);
                }
            }
            Op::Lock { mutex } => {
                let m = &mut self.mutexes[mutex as usize];
                if m.owner.is_none() {
                    m.owner = Some(t);
                } else {
                    m.waiters.push_back(t);
                    self.block(cpu, t);
                    return Some(Outcome::Blocked);
                }
            }
            Op::Unlock { mutex } => self.mutex_unlock(cpu, t, mutex),
            // The waiter is on the condition's queue and asleep before
            // it releases the mutex: the mutex's next owner may signal
            // at once (and preempt this task when woken), and must find
            // it waiting. glibc nptl/pthread_cond_wait.c
            // `__pthread_cond_wait_common` joins the waiters before
            // `__pthread_mutex_unlock_usercnt`; v5.2
            // include/linux/wait.h `___wait_event` (prepare_to_wait_event
            // before the lock is dropped) and fs/xfs/xfs_log_priv.h
            // `xlog_wait` (add_wait_queue_exclusive, TASK_UNINTERRUPTIBLE,
            // then spin_unlock) do the same.
            Op::CondWait { cond, mutex } => {
                self.sync.conds[cond as usize].push_back((t, mutex));
                self.block(cpu, t);
                self.mutex_unlock(cpu, t, mutex);
                return Some(Outcome::Blocked);
            }
            Op::WaitEvent { cond, mutex } => {
                self.sync.conds[cond as usize].push_back((t, NO_MUTEX));
                self.block(cpu, t);
                self.mutex_unlock(cpu, t, mutex);
                return Some(Outcome::Blocked);
            }
            Op::CondSignal { cond, all } => {
                let n = if all { self.sync.conds[cond as usize].len() } else { 1 };
                for _ in 0..n {
                    let Some((w, mutex)) = self.sync.conds[cond as usize].pop_front() else { break };
                    if mutex == NO_MUTEX {
                        self.try_to_wake_up(w, cpu);
                        continue;
                    }
                    // The waiter wakes holding the mutex, or queues for it.
                    let m = &mut self.mutexes[mutex as usize];
                    if m.owner.is_none() {
                        m.owner = Some(w);
                        self.try_to_wake_up(w, cpu);
                    } else {
                        m.waiters.push_back(w);
                    }
                }
            }
            Op::Barrier { barrier } => {
                let (parties, waiting) = &mut self.sync.barriers[barrier as usize];
                if waiting.len() + 1 < *parties as usize {
                    waiting.push(t);
                    self.block(cpu, t);
                    return Some(Outcome::Blocked);
                }
                for w in std::mem::take(waiting) {
                    self.try_to_wake_up(w, cpu);
                }
            }
            Op::LogInsert { log } => {
                let l = &mut self.sync.logs[log as usize];
                l.inserted += 1;
                l.records.insert(t, l.inserted);
            }
            Op::LogFlush { log, done } => {
                let l = &mut self.sync.logs[log as usize];
                let record = l.records.get(&t).copied().unwrap_or(0);
                if record <= l.flushed {
                    self.tasks[t].pc = done as usize;
                } else if l.holder.is_none() {
                    l.holder = Some((t, l.inserted));
                } else {
                    // Woken when the lock is released, it checks again.
                    l.waiters.push(t);
                    self.tasks[t].pc = pc;
                    self.block(cpu, t);
                    return Some(Outcome::Blocked);
                }
            }
            Op::LogFlushed { log } => {
                let l = &mut self.sync.logs[log as usize];
                if let Some((_, target)) = l.holder.take() {
                    l.flushed = l.flushed.max(target);
                }
                // LWLockWakeup: every LW_WAIT_UNTIL_FREE waiter.
                for w in std::mem::take(&mut l.waiters) {
                    self.try_to_wake_up(w, cpu);
                }
            }
            Op::Fork { template, count } => {
                let spec = self.templates[template as usize].clone();
                let program = Rc::clone(&self.template_programs[template as usize]);
                // Checked when the run was built (init_workload).
                let affinity = self.affinity_mask(&spec).unwrap_or(None);
                for _ in 0..count {
                    let c = self.new_task(&spec, Rc::clone(&program), affinity, Some(t), self.now);
                    self.tasks[t].live_children += 1;
                    self.wake_up_new_task(c, cpu, 0);
                }
            }
            Op::Join => {
                if self.tasks[t].live_children > 0 {
                    self.tasks[t].joining = true;
                    self.block(cpu, t);
                    return Some(Outcome::Blocked);
                }
            }
            Op::Exit => {
                self.task_exit(cpu, t);
                return Some(Outcome::Blocked);
            }
            Op::ExitAfter { at_ns } => {
                if self.now >= at_ns {
                    self.task_exit(cpu, t);
                    return Some(Outcome::Blocked);
                }
            }
            Op::CallRcu => self.call_rcu(cpu),
            Op::TraceMarker { ref marker } => self.trace_marker(cpu, t, marker),
            Op::SetGroup { group } => {
                if self.sched_move_task(cpu, t, group) {
                    return Some(Outcome::Yielded);
                }
            }
            Op::Exec => {
                if let Some(dst) = self.sched_exec(t, cpu) {
                    // stop_one_cpu(migration_cpu_stop): the stopper
                    // preempts the task and moves it.
                    self.active_migrate(t, cpu, dst);
                    return Some(Outcome::Preempted);
                }
            }
            Op::SetAffinity { ref cpus } => {
                let mask = cpus.as_deref().map(|c| CpuMask::from_cpus(c.iter().copied()));
                self.tasks[t].affinity = mask;
                if mask.is_some_and(|m| !m.test(cpu)) {
                    // The migration stopper moves the running task
                    // (__set_cpus_allowed_ptr → affine_move_task):
                    // modelled as a sleep and an immediate wakeup.
                    self.block(cpu, t);
                    self.try_to_wake_up(t, cpu);
                    return Some(Outcome::Blocked);
                }
            }
            Op::Yield if self.tasks[t].class == crate::sched::rt::Class::Rt => {
                // yield_task_rt(): behind the others of its priority.
                let prio = self.tasks[t].rt.prio;
                if self.rqs[cpu].rt_queue.first().is_some_and(|k| k.0 == prio) {
                    self.update_curr(cpu);
                    self.tasks[t].rt.time_slice_ns = 0;
                    return Some(Outcome::Yielded);
                }
            }
            Op::Yield => {
                // sched_yield: go behind everyone queued on its runqueue
                // (EEVDF: give up the rest of the request).
                let level = self.tasks[t].group.filter(|_| self.sched_ext).map(|g| g as usize);
                if let Some(&(last, _)) = self.level_tree(cpu, level).last() {
                    if self.eevdf {
                        self.yield_task_eevdf(cpu, t);
                        return Some(Outcome::Yielded);
                    }
                    self.update_curr(cpu);
                    let tk = &mut self.tasks[t];
                    tk.vruntime = tk.vruntime.max(last + 1);
                    return Some(Outcome::Yielded);
                }
            }
            _ => {}
        }
        None
    }

    /// The running task blocks (sleep, IO, message, lock, join).
    /// Write task `t`'s trace marker (rt-app's `log_ftrace`), running on
    /// `cpu`, when the run is traced.
    fn trace_marker(&mut self, cpu: CpuId, t: TaskId, marker: &crate::workload::TraceMarker) {
        use crate::workload::TraceMarker;
        let Some(tr) = self.trace.as_mut() else { return };
        match marker {
            TraceMarker::Text(text) => tr.print(self.now, cpu, text),
            TraceMarker::MainStart if !self.trace_main_marked => {
                self.trace_main_marked = true;
                tr.print(self.now, cpu, "rtapp_main: event=start");
                tr.print(self.now, cpu, &format!("rtapp_main: event=clock_ref data={}", self.now / 1000));
            }
            TraceMarker::MainStart => {}
            TraceMarker::Loop { start, phase } => {
                let loops = &self.tasks[t].loops;
                let done = |depth: usize| loops.len().checked_sub(depth).map_or(0, |i| loops[i].2);
                let event = if *start { "start" } else { "end" };
                tr.print(self.now, cpu, &format!("rtapp_loop: event={event} thread_loop={} phase={phase} phase_loop={}", done(2), done(1)));
            }
        }
    }

    pub(crate) fn block(&mut self, cpu: CpuId, t: TaskId) {
        // v6.12 DELAY_DEQUEUE (machine/eevdf.rs): an ineligible fair task
        // stays queued. An exiting task is never delayed (TASK_DEAD is a
        // special state: DEQUEUE_SPECIAL, e1459a50ba31).
        if self.delay_dequeue && self.try_delay_dequeue(cpu, t) {
            return;
        }
        self.dequeue_task(cpu, t, true);
    }

    /// Hand `mutex` to its longest waiter, if `t` holds it.
    fn mutex_unlock(&mut self, cpu: CpuId, t: TaskId, mutex: u32) {
        let m = &mut self.mutexes[mutex as usize];
        if m.owner == Some(t) {
            m.owner = m.waiters.pop_front();
            if let Some(w) = m.owner {
                self.try_to_wake_up(w, cpu);
            }
        }
    }

    /// Advance a timer by one period and return its new expiry; a timer's
    /// first period starts when the first task using it started.
    fn timer_advance(&mut self, t: TaskId, timer: TimerRef, period_ns: u64) -> Time {
        let start = self.tasks[t].start_ns;
        let next = match timer {
            TimerRef::Own(n) => self.sync.own_timers.entry((t, n)).or_insert(start),
            TimerRef::Shared(n) => self.sync.shared_timers[n as usize].get_or_insert(start),
        };
        *next += period_ns;
        *next
    }

    /// A relative timer that missed its expiry counts its next period from now.
    fn timer_restart(&mut self, t: TaskId, timer: TimerRef) {
        let now = self.now;
        match timer {
            TimerRef::Own(n) => {
                self.sync.own_timers.insert((t, n), now);
            }
            TimerRef::Shared(n) => self.sync.shared_timers[n as usize] = Some(now),
        }
    }

    fn task_exit(&mut self, cpu: CpuId, t: TaskId) {
        // The exit frees what RCU readers may still see (machine/rcu.rs).
        self.call_rcu(cpu);
        self.dequeue_task(cpu, t, true);
        self.tasks[t].state = TaskState::Dead;
        self.release_sched_attr(t);
        if let Some(tr) = self.trace.as_mut() {
            let tk = &self.tasks[t];
            tr.sched_process_exit(self.now, cpu, &tk.comm, tk.pid, tk.prio());
        }
        self.live_tasks -= 1;
        if let Some(p) = self.tasks[t].parent {
            let pt = &mut self.tasks[p];
            pt.live_children -= 1;
            if pt.live_children == 0 && pt.joining {
                pt.joining = false;
                self.try_to_wake_up(p, cpu);
            }
        }
    }

    // ---- channels ----------------------------------------------------------

    /// Returns false if the sender blocked.
    fn chan_send(&mut self, cpu: CpuId, chan: usize, t: TaskId, bytes: u64, stamp: Time) -> bool {
        let ch = &mut self.chans[chan];
        if ch.used_bytes > 0 && ch.used_bytes + bytes > ch.capacity_bytes {
            ch.senders.push_back((t, bytes));
            let tcp = ch.tcp.is_some();
            self.block(cpu, t);
            if tcp {
                // TCP_NAGLE_PUSH before sk_stream_wait_memory().
                self.tcp_transmit_tail(cpu, chan);
            }
            return false;
        }
        if ch.tcp.is_some() {
            self.tcp_write(cpu, chan, t, bytes);
            return true;
        }
        ch.used_bytes += bytes;
        ch.push_message(bytes, stamp);
        self.wake_receiver(cpu, chan);
        true
    }

    /// A message arrived in `chan`: hand it to its first receiver, or wake
    /// a `RecvAny` poller, which leaves its other channels and reads again.
    fn wake_receiver(&mut self, cpu: CpuId, chan: usize) {
        let Some(r) = self.chans[chan].receivers.pop_front() else { return };
        let sync = self.chans[chan].sync;
        self.deliver_or_unpoll(chan, r);
        self.try_to_wake_up_sync(r, cpu, sync);
    }

    /// Give receiver `r` the oldest message of `chan`; a `RecvAny` poller
    /// instead leaves every channel it waits on, to read when it runs.
    fn deliver_or_unpoll(&mut self, chan: usize, r: TaskId) {
        // No lookup (a hash of `r`) in a workload without pollers.
        let polling = if self.sync.pollers.is_empty() { None } else { self.sync.pollers.remove(&r) };
        if let Some((first, count)) = polling {
            for c in first..first + count {
                self.chans[c as usize].receivers.retain(|&w| w != r);
            }
        } else {
            self.deliver(chan, r);
        }
    }

    /// A datagram for `chan`, dropped if the channel is over its capacity
    /// (see [`Op::SendDatagram`]); the sender never waits.
    fn chan_send_datagram(&mut self, cpu: CpuId, chan: usize, bytes: u64, stamp: Time) {
        let ch = &mut self.chans[chan];
        if ch.used_bytes > ch.capacity_bytes {
            return;
        }
        ch.used_bytes += bytes;
        ch.push_message(bytes, stamp);
        self.wake_receiver(cpu, chan);
    }

    /// Returns false if the receiver blocked.
    fn chan_recv(&mut self, cpu: CpuId, chan: usize, t: TaskId) -> bool {
        if self.chans[chan].is_empty() {
            self.chans[chan].receivers.push_back(t);
            self.block(cpu, t);
            return false;
        }
        self.deliver(chan, t);
        // Room freed: let a blocked sender in.
        if let Some(&(s, bytes)) = self.chans[chan].senders.front() {
            let ch = &mut self.chans[chan];
            if ch.used_bytes == 0 || ch.used_bytes + bytes <= ch.capacity_bytes {
                ch.senders.pop_front();
                ch.used_bytes += bytes;
                ch.push_message(bytes, self.now);
                let sync = ch.sync;
                self.try_to_wake_up_sync(s, cpu, sync);
            }
        }
        true
    }

    // ---- TCP streams (workload::TcpStream: the rules and their sources) ----

    /// `bytes` written into the stream by `t`: full segments go, and the
    /// partial rest unless Nagle holds it.
    fn tcp_write(&mut self, cpu: CpuId, chan: usize, t: TaskId, bytes: u64) {
        let ch = &mut self.chans[chan];
        ch.used_bytes += bytes;
        let Some(tcp) = ch.tcp.as_mut() else { return };
        tcp.sender = Some(t);
        tcp.tail += bytes;
        let seg = tcp.spec.segment_bytes.max(1);
        // A small write leaves the tail short of a segment: no division.
        let full = if tcp.tail < seg { 0 } else { tcp.tail / seg };
        tcp.tail -= full * seg;
        for _ in 0..full {
            self.tcp_arrive(cpu, chan, seg);
        }
        if self.chans[chan].tcp.as_ref().is_some_and(|tcp| !tcp.small_in_flight) {
            self.tcp_transmit_tail(cpu, chan);
        }
    }

    /// Send whatever the tail holds as one segment, whatever Nagle says.
    fn tcp_transmit_tail(&mut self, cpu: CpuId, chan: usize) {
        let Some(tcp) = self.chans[chan].tcp.as_mut() else { return };
        let n = std::mem::take(&mut tcp.tail);
        if n > 0 {
            self.tcp_arrive(cpu, chan, n);
        }
    }

    /// A segment of `n` bytes reaches the receiver (loopback delivers in
    /// the sender's context): queued, ACKed at once if more than rcv_mss
    /// bytes are now unacked, and the receiver woken if asleep.
    fn tcp_arrive(&mut self, cpu: CpuId, chan: usize, n: u64) {
        let ch = &mut self.chans[chan];
        let Some(tcp) = ch.tcp.as_mut() else { return };
        tcp.segments += 1;
        tcp.queued += n;
        tcp.unacked += n;
        if n < tcp.spec.segment_bytes {
            tcp.small_in_flight = true;
        }
        // tcp_measure_rcv_mss(): a segment of at least rcv_mss sets it;
        // a shorter one marks the ACK pushed, unless it is long enough to
        // count (with its header, at least TCP_MSS_DEFAULT + a 20-byte
        // header; partial segments carry PSH, so the TCP_MIN_MSS rule never
        // applies) and as long as the one before, which makes it rcv_mss.
        let last = std::mem::take(&mut tcp.last_seg);
        if n >= tcp.rcv_mss {
            tcp.rcv_mss = n.min(tcp.spec.segment_bytes);
        } else {
            let counted = n + TCP_HEADER_BYTES >= TCP_MSS_DEFAULT + 20;
            if counted {
                tcp.last_seg = n;
            }
            if counted && n == last {
                tcp.rcv_mss = n;
            } else {
                tcp.pushed = true;
            }
        }
        if tcp.unacked > tcp.rcv_mss {
            self.tcp_ack(cpu, chan, false);
        }
        let ch = &mut self.chans[chan];
        if let Some(r) = ch.receivers.pop_front() {
            let sync = ch.sync;
            self.try_to_wake_up_sync(r, cpu, sync);
        }
    }

    /// The receiver's ACK reaches the sender: nothing is unacked, and a
    /// tail Nagle held goes now if the sender is asleep (`release` false:
    /// the sender is the one transmitting, its next send takes the tail).
    fn tcp_ack(&mut self, cpu: CpuId, chan: usize, release: bool) {
        let Some(tcp) = self.chans[chan].tcp.as_mut() else { return };
        tcp.unacked = 0;
        tcp.pushed = false;
        tcp.small_in_flight = false;
        let asleep = tcp.sender.is_some_and(|s| self.tasks[s].state == crate::sched::TaskState::Blocked);
        if release && tcp.tail > 0 && asleep {
            self.tcp_transmit_tail(cpu, chan);
        }
    }

    /// One recv() of up to `recv_bytes`; returns false (the task asleep
    /// on the channel) if nothing has arrived.
    fn tcp_recv(&mut self, cpu: CpuId, chan: usize, t: TaskId) -> bool {
        let ch = &mut self.chans[chan];
        let Some(tcp) = ch.tcp.as_mut() else { return false };
        if tcp.queued == 0 {
            ch.receivers.push_back(t);
            self.block(cpu, t);
            return false;
        }
        let n = tcp.queued.min(tcp.spec.recv_bytes.max(1));
        tcp.queued -= n;
        ch.used_bytes -= n;
        if tcp.unacked > tcp.rcv_mss || (tcp.pushed && tcp.queued == 0) {
            self.tcp_ack(cpu, chan, true);
        }
        // Room freed: a blocked sender's write completes.
        if let Some(&(s, bytes)) = self.chans[chan].senders.front() {
            let ch = &self.chans[chan];
            if ch.used_bytes == 0 || ch.used_bytes + bytes <= ch.capacity_bytes {
                self.chans[chan].senders.pop_front();
                self.tcp_write(cpu, chan, s, bytes);
                let sync = self.chans[chan].sync;
                self.try_to_wake_up_sync(s, cpu, sync);
            }
        }
        true
    }

    /// Hand the oldest message of `chan` to task `t`.
    fn deliver(&mut self, chan: usize, t: TaskId) {
        if let Some((bytes, stamp)) = self.chans[chan].pop_message() {
            self.chans[chan].used_bytes -= bytes;
            self.tasks[t].request_ns = stamp;
        }
    }

    // ---- devices -------------------------------------------------------------

    fn io_submit(&mut self, dev: usize, t: TaskId, kind: IoKind, bytes: u64, cpu: CpuId) {
        self.io_submit_for(dev, IoWaiter { task: t, cpu, end_work: None, then: FlushStep::None }, kind, bytes, false);
    }

    /// Submit a request; a data request that cannot be issued now waits at
    /// the queue's tail, or at its head when `front`.
    fn io_submit_for(&mut self, dev: usize, waiter: IoWaiter, kind: IoKind, bytes: u64, front: bool) {
        if kind == IoKind::Flush {
            self.devices[dev].flush_pending.push(waiter);
            self.kick_flush(dev);
            return;
        }
        let d = &self.devices[dev];
        let behind_flush = !self.plat.devices[dev].flush_queued && (d.flush_running || !d.flush_pending.is_empty());
        match d.slots.iter().position(Option::is_none) {
            Some(slot) if !behind_flush && (front || d.queue.is_empty()) => self.issue(dev, slot, Slot::Data(waiter), kind, bytes),
            _ if front => self.devices[dev].queue.push_front((waiter, kind, bytes)),
            _ => self.devices[dev].queue.push_back((waiter, kind, bytes)),
        }
    }

    fn issue(&mut self, dev: usize, slot: usize, what: Slot, kind: IoKind, bytes: u64) {
        let fua = matches!(&what, Slot::Data(w) if w.then == FlushStep::Fua);
        let done = self.completion_ns(dev, kind, bytes, fua);
        let d = &mut self.devices[dev];
        d.slots[slot] = Some(what);
        d.busy += 1;
        self.q.schedule(done, Event::IoDone { device: dev as u32, slot: slot as u32 });
    }

    /// blk_kick_flush(): issue one flush for every pending one, unless a
    /// flush is already in flight or (non-queued flush) the device is busy.
    fn kick_flush(&mut self, dev: usize) {
        let queued = self.plat.devices[dev].flush_queued;
        let d = &mut self.devices[dev];
        if d.flush_running || d.flush_pending.is_empty() || (!queued && d.busy > 0) {
            return;
        }
        let Some(slot) = d.slots.iter().position(Option::is_none) else { return };
        d.flush_running = true;
        let waiters = std::mem::take(&mut d.flush_pending);
        self.issue(dev, slot, Slot::Flush(waiters), IoKind::Flush, 0);
    }

    /// Issue queued data requests into free slots, in order, unless a
    /// non-queued flush holds the device.
    fn io_dispatch(&mut self, dev: usize) {
        loop {
            let d = &self.devices[dev];
            if d.queue.is_empty() {
                return;
            }
            if !self.plat.devices[dev].flush_queued && (d.flush_running || !d.flush_pending.is_empty()) {
                return;
            }
            let Some(slot) = d.slots.iter().position(Option::is_none) else { return };
            let Some((waiter, kind, bytes)) = self.devices[dev].queue.pop_front() else { return };
            self.issue(dev, slot, Slot::Data(waiter), kind, bytes);
        }
    }

    /// When a request issued now completes. Its access time (the latency
    /// of one reference block, lognormal with the device's spread) overlaps
    /// with other requests up to the queue depth; the bytes beyond that
    /// block then cross the device's one data channel (link and media) in
    /// turn at its rated rate, so the device as a whole never moves data
    /// faster than `mb_per_s`, however many requests are in flight.
    ///
    /// A FUA write is acknowledged once its data is on stable media: its
    /// access time is a write's and then a flush's (the drive commits that
    /// write as a flush would; assumed, no drive's FUA latency was found),
    /// without the flush command's round trip or, on SATA, its draining
    /// of the queue.
    fn completion_ns(&mut self, dev: usize, kind: IoKind, bytes: u64, fua: bool) -> Time {
        let spec = &self.plat.devices[dev];
        let access = match kind {
            IoKind::Read => 0,
            IoKind::Write => 1,
            IoKind::Flush => 2,
        };
        let transfer_ns = if kind == IoKind::Flush {
            0
        } else {
            let rate = if kind == IoKind::Write { spec.write_bytes_per_us } else { spec.bytes_per_us };
            (bytes.saturating_sub(spec.block_bytes) as f64 / rate * 1e3).ceil() as u64
        };
        let d = &mut self.devices[dev];
        let mut ready = self.now + d.rng.lognormal(&d.access[access]).max(1.0) as u64;
        if fua {
            ready += d.rng.lognormal(&d.access[2]).max(1.0) as u64;
        }
        if transfer_ns == 0 {
            return ready;
        }
        d.link_free_ns = ready.max(d.link_free_ns) + transfer_ns;
        d.link_free_ns
    }

    pub(crate) fn io_done(&mut self, dev: usize, slot: usize) {
        let Some(done) = self.devices[dev].slots[slot].take() else { return };
        self.devices[dev].busy -= 1;
        // A data request's one waiter, or a flush's (no list allocated
        // for the one).
        let (data, flushed) = match done {
            Slot::Data(w) => (Some(w), Vec::new()),
            Slot::Flush(ws) => {
                self.devices[dev].flush_running = false;
                (None, ws)
            }
        };
        self.kick_flush(dev);
        self.io_dispatch(dev);
        let irq_cpu = self.plat.devices[dev].irq_cpu;
        for w in data.into_iter().chain(flushed) {
            let (t, cpu) = (w.task, w.cpu);
            // blk-mq completes in the device's interrupt handler when the
            // device has a queue per CPU (NVMe); a single-queue device's
            // completions go through BLOCK_SOFTIRQ. Both are irq context;
            // the trace says hardirq.
            let waker = match irq_cpu {
                None => cpu,
                // One interrupt line: it lands on `irq`; block/blk-mq.c
                // blk_mq_complete_need_ipi() (rq_affinity 1, v6.8; v5.2's
                // __blk_mq_complete_request() the same) hands the
                // completion to the submitting CPU by IPI unless the two
                // share a last-level cache.
                Some(irq) => {
                    self.interrupt(irq);
                    if self.plat.cpus[irq].llc == self.plat.cpus[cpu].llc { irq } else { cpu }
                }
            };
            if waker == cpu && irq_cpu != Some(cpu) {
                self.interrupt(cpu);
            }
            // The flush machinery's next step, issued from this completion.
            match w.then {
                FlushStep::Write(bytes) => {
                    let next = if self.devices[dev].fua { FlushStep::Fua } else { FlushStep::PostFlush };
                    self.io_submit_for(dev, IoWaiter { then: next, ..w }, IoKind::Write, bytes, true);
                    continue;
                }
                FlushStep::PostFlush => {
                    self.io_submit_for(dev, IoWaiter { then: FlushStep::None, ..w }, IoKind::Flush, 0, false);
                    continue;
                }
                FlushStep::None | FlushStep::Fua => {}
            }
            match w.end_work {
                Some(chan) => self.queue_end_work(waker, chan as usize),
                None => {
                    let prev = self.tasks[t].cpu;
                    if self.tasks[t].in_iowait {
                        self.rqs[prev].nr_iowait -= 1;
                    }
                    self.try_to_wake_up_io(t, waker);
                }
            }
        }
    }

    /// A completion on `cpu` queues work ([`Op::IoFuaEndWork`]): a message in
    /// `chan`, whose waiting worker wakes from the interrupt; a worker of a
    /// per-CPU workqueue runs on `cpu` (`Engine::ttwu`'s bound work).
    fn queue_end_work(&mut self, cpu: CpuId, chan: usize) {
        self.irq_message(chan, Some(cpu), TRACE_FLAG_HARDIRQ);
    }

    /// A 1-byte message put in `chan` from interrupt context (`irq`, the
    /// trace's flag); its first waiting receiver wakes from `cpu`, or, with
    /// None, from an interrupt on the receiver's own CPU.
    fn irq_message(&mut self, chan: usize, cpu: Option<CpuId>, irq: u8) {
        let now = self.now;
        let ch = &mut self.chans[chan];
        ch.used_bytes += 1;
        ch.push_message(1, now);
        if let Some(r) = ch.receivers.pop_front() {
            self.deliver_or_unpoll(chan, r);
            let cpu = cpu.unwrap_or_else(|| {
                let own = self.tasks[r].cpu;
                self.interrupt(own);
                own
            });
            self.try_to_wake_up_in(r, cpu, irq);
        }
    }

    // ---- request sources -------------------------------------------------------

    fn schedule_arrival(&mut self, src: usize) {
        let s = &mut self.sources[src];
        let mean_ns = 1e9 / s.rate_per_s;
        let gap = match s.arrivals {
            Arrivals::Constant => mean_ns,
            Arrivals::Poisson => s.rng.exp(mean_ns),
        };
        self.q.schedule(self.now + gap.max(1.0) as u64, Event::Arrival { source: src as u32 });
    }

    pub(crate) fn source_arrival(&mut self, src: usize) {
        // The request arrives by network interrupt on the receiver's CPU;
        // NAPI delivers it to the socket, which wakes the reader, in the
        // NET_RX softirq.
        self.irq_message(self.sources[src].chan as usize, None, TRACE_FLAG_SOFTIRQ);
        self.schedule_arrival(src);
    }
}

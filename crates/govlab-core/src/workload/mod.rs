//! Workloads: what the simulated machine runs, and what it measures.
//!
//! A workload model turns its parameters into a [`Setup`] (task programs,
//! channels, locks, request sources, named latency series and counters)
//! and, after the run, turns the [`Record`] the engine kept into metrics
//! with units and one primary metric with its direction.
//!
//! Built-in models live one per file (`cpu_bound.rs`, `periodic.rs`, ...);
//! `file.rs` reads the same language from TOML.

#[cfg(test)]
mod calibration;
pub mod cost;
pub mod cpu_bound;
pub mod dbench;
pub mod file;
pub mod fio;
pub mod fs;
pub mod gitsource;
pub mod hackbench;
pub mod idle;
pub mod iozone;
pub mod kernbench;
pub mod lang;
pub mod limits;
pub mod netperf;
pub mod periodic;
pub mod rtapp;
pub mod sched_attr;
pub mod pgbench;
pub mod process;
pub mod schbench;
pub mod sleeping_ebizzy;
pub mod sqlite_insert;
pub mod tbench;
pub mod ycsb_redis;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::metrics::hist::Histogram;
use crate::params::{ParamSpec, Spec};
use crate::platform::{CpuId, Platform};
use crate::sim::rng::Rng;

pub use lang::{Dist, IoKind, Op, Program, ProgramBuilder, Since, TimerRef, TraceMarker};
pub use sched_attr::{SchedAttr, SchedPolicy, TaskGroupSpec};

/// A task to start at time 0, or (for templates) when forked.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    /// Command name, as `comm` in traces (at most 15 bytes shown by the kernel).
    pub comm: String,
    pub program: Arc<Program>,
    /// Allowed CPUs; None = all.
    pub affinity: Option<Vec<CpuId>>,
    /// Nice value, -20..=19.
    pub nice: i32,
    /// Number of identical tasks.
    pub instances: u32,
    /// Delay before the first instance starts, ns; instance i starts at
    /// `start_ns + i * stagger_ns`.
    pub start_ns: u64,
    pub stagger_ns: u64,
    /// A process the run creates (true: it arrives with the kernel's
    /// initial PELT values, `sched/fork.rs`), or one a trace replay found
    /// already running (false: its history is unknown, its signals start
    /// at zero).
    pub forked: bool,
    /// A replayed task's PELT averages when the recording first shows them
    /// (`load`, `util` of its `sched_load_se` / `sched_pelt_se` event
    /// before it runs): it starts with them instead of zero.
    pub recorded_pelt: Option<(u64, u64)>,
    /// A replayed task the recording found already running (not
    /// `forked`): the CPU the recording first shows it on, where it starts
    /// (its previous CPU at its first wakeup) instead of where fork
    /// balancing would put a new process. None: placed by fork balancing.
    pub start_cpu: Option<CpuId>,
    /// Scheduling policy, clamps and task group (SCHED_OTHER, root group:
    /// the default).
    pub sched: SchedAttr,
    /// A kernel thread beside the workload (`fs.rs`'s journal and flusher
    /// threads): its program never exits, and a workload that ends by
    /// itself ends without it.
    pub kthread: bool,
    /// A kernel thread standing for the kworkers of one workqueue: each of
    /// its wakeups is a work item queued by the waker. None: an ordinary
    /// task (or an unbound kworker that needs no more than `kthread`).
    pub workqueue: Option<Workqueue>,
}

/// Where a workqueue runs its work items (kernel/workqueue.c, v5.2 and
/// v6.8 alike). `queue_work()` passes WORK_CPU_UNBOUND, which
/// `__queue_work()` turns into the queueing CPU for a per-CPU ("bound")
/// workqueue: the item runs in a kworker of that CPU's pool, a thread bound
/// to the CPU (`worker_attach_to_pool`: `set_cpus_allowed_ptr` to the
/// pool's one-CPU mask), woken there like any task and competing there
/// with the caller. A WQ_UNBOUND workqueue's kworkers may run anywhere the
/// scheduler puts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workqueue {
    /// The era from which the workqueue is WQ_UNBOUND; None: per-CPU in
    /// every version modelled.
    pub unbound_from: Option<crate::kernel::EraId>,
}

impl TaskSpec {
    pub fn new(comm: impl Into<String>, program: Program) -> Self {
        TaskSpec {
            comm: comm.into(),
            program: Arc::new(program),
            affinity: None,
            nice: 0,
            instances: 1,
            start_ns: 0,
            stagger_ns: 0,
            forked: true,
            recorded_pelt: None,
            start_cpu: None,
            sched: SchedAttr::default(),
            kthread: false,
            workqueue: None,
        }
    }
}

/// A pipe or socket between tasks.
#[derive(Debug, Clone)]
pub struct ChannelSpec {
    pub name: String,
    /// Bytes the channel buffers before senders block (a pipe holds 64 KiB).
    pub capacity_bytes: u64,
    /// Its wakeups carry WF_SYNC (the waker is about to sleep): true for a
    /// pipe or a socket (pipe_write() and pipe_read() wake with
    /// wake_up_interruptible_sync_poll(); sock_def_readable() and
    /// sock_def_write_space() too, fs/pipe.c and net/core/sock.c, v5.2;
    /// TCP's writer wakeup, sk_stream_write_space(), is not sync, taken as
    /// sync here: a simplification); false where the channel stands for a futex, a work queue or an I/O
    /// completion (plain wake_up_process()/wake_up()).
    pub sync: bool,
    /// A TCP byte stream rather than a queue of messages ([`TcpStream`]).
    pub tcp: Option<TcpStream>,
}

/// A TCP connection's one direction as v5.2 moves bytes through it
/// (net/ipv4/tcp.c, tcp_input.c, tcp_output.c), for a sender that leaves
/// Nagle on: what `Op::Send`s write gathers in the write queue's tail and
/// reaches the receiver as segments, and the receiver is woken once per
/// segment that finds it asleep (tcp_data_queue -> tcp_data_ready ->
/// sk_data_ready, sock_def_readable), not once per send.
///
/// - Sender, tcp_sendmsg_locked(): the bytes go into the tail skb; a skb
///   that reaches `segment_bytes` (size_goal, tcp_xmit_size_goal(): one MSS
///   on loopback, whose 64 KiB gso_max_size less MAX_TCP_HEADER is under
///   two MSS) goes at once (tcp_push_one / __tcp_push_pending_frames). The
///   partial rest goes at the send's end (tcp_push -> tcp_write_xmit)
///   unless Nagle holds it: tcp_nagle_test -> tcp_nagle_check with
///   Minshall's rule (tcp_minshall_check) holds a partial segment while
///   the last partial segment sent is unacked. tcp_should_autocork() adds
///   no hold on loopback: loopback_xmit() orphans the clone, so
///   sk_wmem_alloc never exceeds the tail's truesize. A sender that must
///   wait for room first pushes what it has (TCP_NAGLE_PUSH before
///   sk_stream_wait_memory), and shutdown() sends the FIN with everything
///   held (tcp_send_fin, TCP_NAGLE_OFF): [`Op::Shutdown`].
/// - Receiver, tcp_recvmsg(): each `Op::Recv` takes up to `recv_bytes` of
///   what has arrived and sleeps (sk_wait_data) only when nothing has. The
///   ACK: at arrival when more than rcv_mss bytes are unacked
///   (__tcp_ack_snd_check, `rcv_nxt - rcv_wup > rcv_mss`); after a read
///   (tcp_cleanup_rbuf) for the same reason, or when a short segment
///   came (ICSK_ACK_PUSHED) and the queue is now empty. rcv_mss is the
///   receiver's estimate of the sender's MSS, tcp_measure_rcv_mss(): 536
///   at first, set to any segment at least as long, and to a short
///   segment's length when two in a row of at least 556 bytes with their
///   header are as long, which then are not marked pushed: equal partial
///   segments of that size are held by Nagle until a full segment makes
///   two unacked (the Nagle/delayed-ACK interplay). An ACK frees Nagle's hold: the held tail goes at the
///   sender's next send (on loopback the ACK is processed in the
///   receiver's context, and goes to the sender's backlog while it is in
///   tcp_sendmsg, processed at its release_sock()), or at once if the
///   sender is asleep. Left out: the delayed-ACK timer (40 ms; something
///   above always ACKs first here), window-update ACKs (tcp_cleanup_rbuf's
///   `new_window >= 2 * rcv_window_now`), quick-ack mode at the
///   connection's start, cwnd and the receive window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStream {
    pub segment_bytes: u64,
    pub recv_bytes: u64,
}

impl ChannelSpec {
    /// A pipe or socket (sync wakeups).
    pub fn pipe(name: impl Into<String>, capacity_bytes: u64) -> Self {
        ChannelSpec { name: name.into(), capacity_bytes, sync: true, tcp: None }
    }

    /// A futex, work queue or completion standing in as a channel
    /// (wakeups without WF_SYNC).
    pub fn plain(name: impl Into<String>, capacity_bytes: u64) -> Self {
        ChannelSpec { name: name.into(), capacity_bytes, sync: false, tcp: None }
    }

    /// One direction of a TCP connection with Nagle on (sync wakeups).
    pub fn tcp_stream(name: impl Into<String>, capacity_bytes: u64, tcp: TcpStream) -> Self {
        ChannelSpec { name: name.into(), capacity_bytes, sync: true, tcp: Some(tcp) }
    }
}

/// How an open-loop source spaces its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    Constant,
    Poisson,
}

/// An open-loop request source feeding a channel at a target rate.
#[derive(Debug, Clone)]
pub struct SourceSpec {
    pub name: String,
    pub rate_per_s: f64,
    pub arrivals: Arrivals,
    pub chan: u32,
}

/// Everything the engine needs to start a workload.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub tasks: Vec<TaskSpec>,
    /// Programs started by `Fork`, by index.
    pub templates: Vec<TaskSpec>,
    pub channels: Vec<ChannelSpec>,
    pub mutexes: u32,
    /// Condition variables (`CondWait`, `CondSignal`), by index.
    pub conds: u32,
    /// Parties of each barrier, by index.
    pub barriers: Vec<u32>,
    /// Write-ahead logs (`LogInsert`, `LogFlush`, `LogFlushed`), by index.
    pub logs: u32,
    /// Timers shared between tasks (`TimerRef::Shared`).
    pub shared_timers: u32,
    pub sources: Vec<SourceSpec>,
    /// Names of latency series (`Record` ops), by index.
    pub series: Vec<String>,
    /// Names of counters (`Count` ops), by index.
    pub counters: Vec<String>,
    /// CFS task groups the tasks' [`SchedAttr::group`] names, by index.
    pub groups: Vec<TaskGroupSpec>,
    /// How the run's package power stands for a longer run's
    /// (machine/power_phases.rs): phases in the order of their start; none
    /// for a run that stands for itself.
    pub power_phases: Vec<PowerPhase>,
}

/// A stretch of the run, from `start_ns` to the next phase's start (or the
/// run's end), whose package energy and time count `weight` times in the
/// run's scored power (`RunResult::scored_power`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerPhase {
    pub start_ns: u64,
    pub weight: f64,
}

/// What the engine kept about the workload during a run.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// Simulated time the workload ran, ns.
    pub elapsed_ns: u64,
    /// Per latency series.
    pub series: Vec<Histogram>,
    pub deadline_misses: Vec<u64>,
    pub counters: Vec<u64>,
    /// `Timer` ops whose expiry had already passed (rt-app's missed periods).
    pub timer_misses: u64,
    /// Energy of the whole machine over the run, J.
    pub energy_j: f64,
    /// Cycles retired by all tasks (reference-frequency cycles, including
    /// segments cut short by the end of the run).
    pub cycles_retired: f64,
    /// Time from wakeup to running, every wakeup of every task.
    pub wakeup_latency: Histogram,
    /// Whether every task exited before the duration ran out.
    pub finished: bool,
    /// Idle CPUs woken by the kernel's housekeeping (machine/housekeeping.rs).
    pub kernel_wakeups: u64,
}

impl Record {
    /// `amount` per simulated second of the run (0 for an empty run).
    pub fn per_second(&self, amount: f64) -> f64 {
        if self.elapsed_ns == 0 {
            0.0
        } else {
            amount * 1e9 / self.elapsed_ns as f64
        }
    }
}

/// Whether a metric improves when it goes down or up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    }
}

/// One workload metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    /// None when the metric rests on samples and there were none (a mean
    /// or percentile of no latencies): the result omits it rather than
    /// reporting 0.
    pub value: Option<f64>,
    pub unit: &'static str,
    pub better: Better,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: &'static str, better: Better) -> Self {
        Metric {
            name: name.into(),
            value: Some(value),
            unit,
            better,
        }
    }

    /// A figure of the samples in `h` (`of(h)`), absent when `h` is empty.
    pub fn of_samples(
        name: impl Into<String>,
        h: &Histogram,
        of: impl FnOnce(&Histogram) -> f64,
        unit: &'static str,
        better: Better,
    ) -> Self {
        Metric {
            name: name.into(),
            value: (h.count > 0).then(|| of(h)),
            unit,
            better,
        }
    }
}

/// The default `duration` of a workload that runs until the duration (and
/// of workload files): 10 s of simulated time.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;

/// How a workload's run ends, as its registry entry declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    /// It runs until the duration; its metrics (rates, latencies) are of
    /// whatever ran, so a run of any duration is complete.
    AtDuration,
    /// It ends by itself (its metric is the time it took, or a rate over a
    /// fixed amount of work); a run cut short by the duration is
    /// *unfinished*. `default_duration_ns` lets its defaults finish on every
    /// built-in platform.
    ByItself { default_duration_ns: u64 },
    /// It ends by itself when the parameter `param` is set (non-zero), and
    /// runs until the duration otherwise (its default).
    ByItselfWith { param: &'static str },
}

impl Ends {
    /// The duration a run gets when none is given.
    pub fn default_duration_ns(self) -> u64 {
        match self {
            Ends::AtDuration | Ends::ByItselfWith { .. } => DEFAULT_DURATION_NS,
            Ends::ByItself { default_duration_ns } => default_duration_ns,
        }
    }

    /// For `govlab list workloads`.
    pub fn describe(self) -> String {
        match self {
            Ends::AtDuration => "runs until the duration".into(),
            Ends::ByItself { .. } => "ends by itself (unfinished if the duration runs out first)".into(),
            Ends::ByItselfWith { param } => {
                format!("ends by itself when {param} is set (unfinished if the duration runs out first), else runs until the duration")
            }
        }
    }
}

pub use crate::metrics::Progress;

/// A configured workload model.
pub trait Workload: Send {
    /// Tasks, channels and series to create on `platform`; `rng` is the
    /// workload's own stream (start phases, sizes).
    fn setup(&self, platform: &Platform, rng: &mut Rng) -> Result<Setup>;
    /// Metrics from what happened; the primary one is named by
    /// [`Workload::primary`].
    fn metrics(&self, record: &Record) -> Vec<Metric>;
    /// Name of the primary metric.
    fn primary(&self) -> &str;
    /// The resolved parameters, for `--show-config` and result keys.
    fn resolved(&self) -> Vec<(String, String)>;
    /// Whether this configuration ends by itself (see [`Ends`]): a run whose
    /// tasks have not all exited when the duration runs out is unfinished.
    fn ends_by_itself(&self) -> bool {
        false
    }
    /// How far a run got, for a workload that ends by itself and knows.
    fn progress(&self, _record: &Record) -> Option<Progress> {
        None
    }
}

/// A registry entry.
pub struct WorkloadInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub metric: &'static str,
    /// The workload's parameters, declared once (see [`ParamSpec`]).
    pub params: &'static [ParamSpec],
    /// How a run ends, and so its default duration.
    pub ends: Ends,
    pub build: fn(&Spec) -> Result<Box<dyn Workload>>,
}

/// The duration of a run of `spec` when none is given: the registry
/// entry's ([`Ends::default_duration_ns`]); [`DEFAULT_DURATION_NS`] for a
/// workload file or an unknown name (which fails later, when built).
pub fn default_duration_ns(spec: &Spec) -> u64 {
    if let Some(ns) = declared_duration_ns(spec) {
        return ns;
    }
    registry()
        .iter()
        .find(|w| w.name == spec.name)
        .map_or(DEFAULT_DURATION_NS, |w| w.ends.default_duration_ns())
}

/// The run length a workload's own parameters ask for, when they do: an
/// rt-app file's `global.duration`, fio's `runtime` (plus the time its last
/// requests take, [`fio::RUNTIME_SLACK_NS`]).
pub fn declared_duration_ns(spec: &Spec) -> Option<u64> {
    if spec.name == rtapp::INFO.name {
        return rtapp::file_duration_ns(spec);
    }
    if spec.name == fio::INFO.name {
        return fio::runtime_duration_ns(spec);
    }
    None
}

/// Every built-in workload model.
pub fn registry() -> &'static [WorkloadInfo] {
    &[
        cpu_bound::INFO,
        periodic::INFO,
        hackbench::INFO,
        schbench::INFO,
        sleeping_ebizzy::INFO,
        dbench::INFO,
        sqlite_insert::INFO,
        pgbench::INFO,
        kernbench::INFO,
        gitsource::INFO,
        iozone::INFO,
        ycsb_redis::INFO,
        fio::INFO,
        netperf::INFO,
        tbench::INFO,
        rtapp::INFO,
        idle::INFO,
    ]
}

/// Build a workload from its spec: a registry name, or a path to a TOML
/// workload file (`path=FILE` or a name ending in `.toml`).
pub fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    if std::path::Path::new(&spec.name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
    {
        return file::FileWorkload::load(spec);
    }
    match registry().iter().find(|w| w.name == spec.name) {
        Some(info) => (info.build)(spec),
        None => Err(Error::UnknownName {
            kind: "workload",
            name: spec.name.clone(),
            choices: registry()
                .iter()
                .map(|w| w.name.to_string())
                .chain(std::iter::once("PATH.toml (a workload file)".to_string()))
                .collect(),
        }),
    }
}

/// Cycles at a CPU type's reference frequency that take `ns` at `khz`
/// when purely compute-bound.
pub fn cycles_for_ns_at(ns: f64, khz: u32) -> f64 {
    ns * f64::from(khz) / 1e6
}

/// The core clock of the machine this project's measured CPU costs were
/// measured on, in the sittings that measured them: tools/calibrate/cycleclock
/// (2026-11-30 05:23, fs.rs's and dbench.rs's IO costs) and
/// tools/calibrate/kcycles (2026-11-30 11:05 on a quiet host, re-running
/// the 08:03 sitting taken at load 7-11: process spawns, the kernel build's
/// processes, gitsource's old stand-in, loopback TCP, UDP, pipe and socket
/// syscalls), both on an AMD EPYC family-25 KVM guest. Later sittings
/// (tools/calibrate/k44*, gitsuite) sampled their own clock, 3.695 GHz, and
/// wrote their times as ns at this one. kpath.c's
/// chain of dependent adds (one cycle each) ran at 3.244 GHz in its fastest
/// batch in every sample on both CPUs, before, during and after each
/// measurement. The `cpu MHz` the guest prints (2445) is the TSC rate, not
/// the core's. A measured CPU time becomes this many cycles on every
/// simulated platform: the same IPC as this guest's core (assumed). Assumed
/// costs stay times at the simulated platform's base clock.
pub const CALIBRATION_CORE_KHZ: u32 = 3_244_000;

/// Cycles of a CPU time measured on the development machine
/// (tools/calibrate): the time at [`CALIBRATION_CORE_KHZ`].
pub fn measured_cycles(ns: f64) -> f64 {
    cycles_for_ns_at(ns, CALIBRATION_CORE_KHZ)
}

/// A loopback TCP message between two ends that take turns (a request and
/// its reply: netperf's TCP_RR, tbench's client and server): its send, whose
/// segment's transmission and the receiver's TCP input run in the sender's
/// context, 4,326 ns, and its receive, the dequeue and copy, 869 ns, cycles
/// at [`CALIBRATION_CORE_KHZ`]. tools/calibrate/tcp/tcp.c's `rr` rows: a
/// 1-byte request and response, the fastest of 1,000 batches of 20
/// transactions, each side's send and recv timed apart, the mean of both
/// runs and of client and server (which match to 0.1 %). Taking turns, each
/// reply carries the ACK of what its end read: v5.2's tcp_cleanup_rbuf()
/// leaves the ACK of a pingpong socket (tcp_event_data_sent() makes one of
/// a socket that sends within the delayed-ACK timeout of its last receive)
/// to its next send, so one segment goes out a message, where a one-way
/// stream of the same messages sends two, data and ACK, and costs about
/// 2.4 µs more a message (tools/calibrate/loopback/acks.c, acks.out: 1.000
/// against 2.000 segments a message, 4.8-6.1 against 6.7-8.4 µs a send and
/// receive of 100 B or 4 KiB; loopback.c's `cost` rows are the one-way kind).
pub const TCP_RR_SEND_NS: f64 = 4_326.0;
pub const TCP_RR_RECV_NS: f64 = 869.0;

/// Share of a loopback TCP send path that runs after the data is on the
/// reader's socket and the reader woken: the NET_RX softirq that delivers
/// the segment runs in the sender's context at the end of the transmit
/// (v5.2 drivers/net/loopback.c `loopback_xmit` -> `netif_rx`, run at
/// `local_bh_enable`), `tcp_v4_rcv()` -> `sk_data_ready()` wakes the reader
/// there, and the rest of the softirq, `tcp_sendmsg()` and the syscall's
/// return follow on the sender's CPU while the reader runs. Measured with a
/// polling reader on the other CPU (tools/calibrate/loopback/split.c:
/// 36-41 % at 100 B and 4 KiB in split.out and split-s39.out; 29-43 % at
/// 64 KiB). tbench's and netperf TCP_RR's ends send, then run this share
/// before they block for the answer.
pub const TCP_SEND_AFTER_WAKE: f64 = 0.37;

/// Refuse a platform without a storage device, for the workloads that do
/// IO; `why` ends the message (such as " for mode=rw").
/// `device=NAME` of the IO workloads: one of the platform's `[[device]]`s.
pub const DEVICE: ParamSpec = ParamSpec {
    name: "device",
    unit: "",
    default: crate::params::ParamDefault::Unset("the platform's first [[device]]"),
    range: crate::params::Range::Text,
    help: "storage device by name, one of the platform's [[device]] names",
};

/// The index of the device an IO workload uses: `name`, or the platform's
/// first device when none is given. An unknown name is an error listing
/// the platform's devices.
pub(crate) fn pick_device(owner: &str, platform: &Platform, name: Option<&str>, why: &str) -> Result<u32> {
    require_device(owner, platform, why)?;
    let Some(name) = name else { return Ok(0) };
    if let Some(i) = platform.device_index(name) {
        return Ok(i as u32);
    }
    let names: Vec<&str> = platform.devices.iter().map(|d| d.name.as_str()).collect();
    Err(Error::invalid(
        owner,
        DEVICE.name,
        name,
        format!("one of platform {}'s devices: {}", platform.name, names.join(", ")),
    ))
}

/// `device` among the resolved parameters, only when it was given (a run
/// on the default device shows what it showed before `device` existed).
pub(crate) fn show_device(device: Option<&String>, out: &mut Vec<(String, String)>) {
    if let Some(d) = device {
        out.push(DEVICE.show(d));
    }
}

pub(crate) fn require_device(owner: &str, platform: &Platform, why: &str) -> Result<()> {
    if platform.devices.is_empty() {
        return Err(Error::invalid(
            owner,
            "platform",
            &platform.name,
            format!("a platform with a storage device ([[device]]){why}"),
        ));
    }
    Ok(())
}

/// The metrics of a transaction loop (pgbench, sqlite-insert): tps from the
/// counter `count`, the mean and p99 latency of the series `series` as
/// `{prefix}_mean_{unit}` and `{prefix}_p99_{unit}` (`unit` "ms" or "us"),
/// and the number of transactions.
pub(crate) fn transaction_metrics(r: &Record, count: u16, series: u16, prefix: &str, unit: &'static str) -> Vec<Metric> {
    let n = r.counters[count as usize] as f64;
    let h = &r.series[series as usize];
    let ns_per_unit = if unit == "ms" { 1e6 } else { 1e3 };
    vec![
        Metric::new("tps", r.per_second(n), "trans/s", Better::Higher),
        Metric::of_samples(format!("{prefix}_mean_{unit}"), h, |h| h.mean() / ns_per_unit, unit, Better::Lower),
        Metric::of_samples(format!("{prefix}_p99_{unit}"), h, |h| h.percentile(99.0) / ns_per_unit, unit, Better::Lower),
        Metric::new("transactions", n, "count", Better::Higher),
    ]
}

/// Standard latency metrics of one series, in µs (each absent when the
/// series has no samples). Percentiles are the histogram's: within
/// [`crate::metrics::hist::MAX_RELATIVE_ERROR`] of the exact order statistic.
pub fn latency_metrics(prefix: &str, h: &Histogram, out: &mut Vec<Metric>) {
    let us = |v: f64| v / 1e3;
    let mut of = |name: &str, f: &dyn Fn(&Histogram) -> f64| {
        out.push(Metric::of_samples(format!("{prefix}_{name}_us"), h, |h| us(f(h)), "us", Better::Lower));
    };
    of("mean", &Histogram::mean);
    of("p50", &|h| h.percentile(50.0));
    of("p99", &|h| h.percentile(99.0));
    of("p99.9", &|h| h.percentile(99.9));
    of("max", &|h| h.max as f64);
}

/// A duration as the shortest exact text `--duration` takes (`1800s`,
/// `250ms`, `500us`, `100ns`).
pub fn duration_text(ns: u64) -> String {
    match ns {
        0 => "0s".into(),
        ns if ns % 1_000_000_000 == 0 => format!("{}s", ns / 1_000_000_000),
        ns if ns % 1_000_000 == 0 => format!("{}ms", ns / 1_000_000),
        ns if ns % 1_000 == 0 => format!("{}us", ns / 1_000),
        ns => format!("{ns}ns"),
    }
}

//! `fio`: jobs issuing direct block IO at a fixed queue depth; IOPS and
//! completion latency.
//!
//! fio runs `numjobs` jobs, each keeping `iodepth` requests of `bs` bytes in
//! flight (ioengine=libaio, direct=1, the usual choice for device tests) in
//! the pattern `rw` = read | write | randread | randwrite, and reports IOPS,
//! bandwidth, and per-IO completion latency ("clat": submission to
//! completion) with percentiles.
//!
//! `ioengine` (fio's meaning): `psync` is pread/pwrite, one request in
//! flight per job whatever `iodepth` says; `libaio` and `io_uring` keep
//! `iodepth` requests in flight per job. `libaio` is the default, the model
//! this workload had before `ioengine` existed (so its results are
//! unchanged). A psync or libaio job waits for its completion in
//! io_schedule(), i.e. in iowait. io_uring: whether a task sleeping in
//! io_cqring_wait() counts as iowait changed between kernels: "io_uring: Use
//! io_schedule* in cqring wait" (v6.5; 6.1.39 backport f32dfc802e87) made
//! it iowait, "io_uring: gate iowait schedule on having pending requests"
//! (v6.6; backport c7920f992840) limited that to waits with requests in
//! flight, and IORING_ENTER_NO_IOWAIT (07754bfd9aee, v6.15) lets the ring
//! opt out. The engine follows the kernel version run (`--kernel`;
//! `KernelConfig::io_uring_wait_is_iowait`): from v6.5 a fio job's waits are
//! iowait, as libaio's (it always has requests in flight when it waits);
//! before, a plain sleep that no iowait boost sees. `direct=0` (buffered) adds the page-cache copy's
//! CPU to each request (assumed 2 bytes/ns); readahead and writeback are
//! not modelled. `device=NAME` picks the platform's device.
//!
//! Model: each job is `iodepth` tasks (one for psync), each looping over: the submit path's
//! CPU (io_submit, block layer, driver), a synchronous request to device 0,
//! (with `runtime`: exit once the clock has passed it, checked after each
//! completion as fio's `time_based` jobs do),
//! the completion's CPU (reaping the event). With direct IO nothing goes
//! through the page cache. The completion interrupt and the wakeup are the
//! engine's. IOPS counts completed requests per second; clat is recorded
//! from the request's issue to its completion as seen by the task, so it
//! includes the device queue, the wakeup and, when CPUs are busy, the wait
//! to run. The device model does not tell sequential from random access
//! (an SSD's 4 KiB latency barely does); read and write differ by the
//! device's service times.
//!
//! CPU costs (reference frequency) are assumed: a few µs per submission
//! and per completion, the order of the block layer's per-request path.
//! Left out: one job's `iodepth` requests are separate tasks here (fio's
//! job is one thread submitting in batches), so they may run on different
//! CPUs; request merging; the page cache (buffered IO).

use super::{
    latency_metrics, Better, Dist, IoKind, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec,
    Workload, WorkloadInfo,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const RW: ParamSpec = ParamSpec {
    name: "rw",
    unit: "",
    default: ParamDefault::Word("randread"),
    range: Range::Choice(&["read", "write", "randread", "randwrite"]),
    help: "read, write, randread or randwrite",
};

pub const BS_KB: ParamSpec = ParamSpec {
    name: "bs_kb",
    unit: "KiB",
    default: ParamDefault::Uint(4),
    range: Range::Uint { min: 1, max: 1 << 20 },
    help: "block size, KiB (fio bs)",
};

pub const IODEPTH: ParamSpec = ParamSpec {
    name: "iodepth",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 4096 },
    help: "requests in flight per job (fio iodepth)",
};

pub const NUMJOBS: ParamSpec = ParamSpec {
    name: "numjobs",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 4096 },
    help: "jobs (fio numjobs)",
};

pub const IOENGINE: ParamSpec = ParamSpec {
    name: "ioengine",
    unit: "",
    default: ParamDefault::Word("libaio"),
    range: Range::Choice(&["psync", "libaio", "io_uring"]),
    help: "psync (one request in flight per job), libaio or io_uring (iodepth in flight)",
};

/// fio's `runtime` with `time_based`: each job issues until the time has
/// passed, then exits once its request in flight completes.
pub const RUNTIME: ParamSpec = ParamSpec {
    name: "runtime",
    unit: "",
    default: ParamDefault::Unset("unset: the jobs issue until the run's duration"),
    range: Range::Custom,
    help: "a duration such as 30s or 500ms (fio runtime, time_based): the jobs stop issuing then and exit; the run lasts it (plus the last completions) when no --duration is given",
};

pub const DIRECT: ParamSpec = ParamSpec {
    name: "direct",
    unit: "",
    default: ParamDefault::Flag(true),
    range: Range::Bool,
    help: "O_DIRECT (true) or buffered through the page cache (false)",
};


pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "fio",
    description: "fio jobs with direct IO at a queue depth; IOPS and completion latency",
    metric: "iops (completed requests per second, higher is better)",
    params: &[RW, BS_KB, IODEPTH, NUMJOBS, IOENGINE, DIRECT, RUNTIME, super::DEVICE],
    ends: super::Ends::ByItselfWith { param: "runtime" },
    build,
};

/// CPU of submitting one request and of reaping its completion (assumed).
const SUBMIT_NS: f64 = 4_000.0;
const COMPLETE_NS: f64 = 2_000.0;

/// Page-cache copy rate of buffered IO (assumed: memcpy on a small core).
const PAGE_COPY_BYTES_PER_NS: f64 = 2.0;

const CLAT: u16 = 0;
const IOS: u16 = 0;
const BYTES: u16 = 1;

pub struct Fio {
    rw: &'static str,
    bs_kb: u64,
    iodepth: u64,
    numjobs: u64,
    ioengine: &'static str,
    direct: bool,
    /// `ioengine`/`direct`/`device` given: shown among the resolved
    /// parameters (a default run shows what it showed before they existed).
    shown: Vec<(String, String)>,
    device: Option<String>,
    /// `runtime`, ns.
    runtime_ns: Option<u64>,
}

/// How long past `runtime` a run lasts by default: the requests in flight
/// at `runtime` complete (assumed: far above any device's service time).
pub const RUNTIME_SLACK_NS: u64 = 1_000_000_000;

/// The run length `spec` asks for when no duration is given: its
/// `runtime` plus [`RUNTIME_SLACK_NS`]; None without one (or a bad one,
/// which the build reports).
pub fn runtime_duration_ns(spec: &Spec) -> Option<u64> {
    let mut p = Params::new("workload fio", spec);
    let ns = p.duration_ns(RUNTIME.name, 0, 1_000_000_000).ok()?;
    (ns > 0).then(|| ns.saturating_add(RUNTIME_SLACK_NS))
}

impl Fio {
    /// Requests one job keeps in flight: fio's iodepth, which psync ignores.
    pub fn in_flight_per_job(&self) -> u64 {
        if self.ioengine == "psync" { 1 } else { self.iodepth }
    }
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload fio", spec);
    let w = Fio {
        rw: p.word(&RW)?,
        bs_kb: p.uint(&BS_KB, &())?,
        iodepth: p.uint(&IODEPTH, &())?,
        numjobs: p.uint(&NUMJOBS, &())?,
        ioengine: p.word(&IOENGINE)?,
        direct: p.flag(&DIRECT, &())?,
        shown: Vec::new(),
        device: p.string(super::DEVICE.name),
        runtime_ns: None,
    };
    // fio takes a bare number as seconds.
    let runtime_ns = p.duration_ns(RUNTIME.name, 0, 1_000_000_000)?;
    if spec.params.iter().any(|(k, _)| k == RUNTIME.name) && runtime_ns == 0 {
        return Err(crate::error::Error::invalid("workload fio", RUNTIME.name, "0", "a duration above 0, such as 30s"));
    }
    let mut w = w;
    w.runtime_ns = (runtime_ns > 0).then_some(runtime_ns);
    for key in [IOENGINE.name, DIRECT.name] {
        if spec.params.iter().any(|(k, _)| k == key) {
            w.shown.push(if key == IOENGINE.name { IOENGINE.show(w.ioengine) } else { DIRECT.show_flag(w.direct) });
        }
    }
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Fio {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let device = super::pick_device("workload fio", platform, self.device.as_deref(), "")?;
        let f_ref = platform.cpu_types[0].base_khz;
        let cyc = |ns: f64| Dist::Fixed(super::cycles_for_ns_at(ns, f_ref));
        let kind = if self.rw.ends_with("read") { IoKind::Read } else { IoKind::Write };
        let bytes = self.bs_kb * 1024;
        // Buffered IO copies through the page cache (assumed 2 bytes/ns).
        let copy_ns = if self.direct { 0.0 } else { bytes as f64 / PAGE_COPY_BYTES_PER_NS };
        let program = ProgramBuilder::new()
            .repeat(None, |b| {
                b.run(cyc(SUBMIT_NS + copy_ns), 0.0)
                    .op(Op::Mark)
                    .op(if self.ioengine == "io_uring" { Op::IoRing { device, kind, bytes } } else { Op::Io { device, kind, bytes } })
                    .record(CLAT, Since::Mark, None)
                    .run(cyc(COMPLETE_NS), 0.0)
                    .count(IOS, 1)
                    .count(BYTES, bytes);
                if let Some(at_ns) = self.runtime_ns {
                    b.op(Op::ExitAfter { at_ns });
                }
            })
            .build();
        let mut t = TaskSpec::new("fio", program);
        t.instances = (self.numjobs * self.in_flight_per_job()) as u32;
        Ok(Setup {
            tasks: vec![t],
            series: vec!["clat".into()],
            counters: vec!["ios".into(), "bytes".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let mut m = vec![
            Metric::new("iops", r.per_second(r.counters[IOS as usize] as f64), "IOPS", Better::Higher),
            Metric::new("bw_mbs", r.per_second(r.counters[BYTES as usize] as f64) / 1e6, "MB/s", Better::Higher),
        ];
        latency_metrics("clat", &r.series[CLAT as usize], &mut m);
        m
    }

    fn primary(&self) -> &'static str {
        "iops"
    }

    fn ends_by_itself(&self) -> bool {
        self.runtime_ns.is_some()
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            RW.show(self.rw),
            BS_KB.show(self.bs_kb),
            IODEPTH.show(self.iodepth),
            NUMJOBS.show(self.numjobs),
        ]
        .into_iter()
        .chain(self.shown.iter().cloned())
        .chain(self.device.iter().map(|d| super::DEVICE.show(d)))
        .chain(self.runtime_ns.map(|ns| (RUNTIME.name.to_string(), super::duration_text(ns))))
        .collect()
    }
}

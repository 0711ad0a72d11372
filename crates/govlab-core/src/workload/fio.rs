//! `fio`: jobs issuing direct block IO at a fixed queue depth; IOPS and
//! completion latency.
//!
//! fio runs `numjobs` jobs, each keeping `iodepth` requests of `bs` bytes in
//! flight (ioengine=libaio, direct=1, the usual choice for device tests) in
//! the pattern `rw` = read | write | randread | randwrite, and reports IOPS,
//! bandwidth, and per-IO completion latency ("clat": submission to
//! completion) with percentiles.
//!
//! Model: each job is `iodepth` tasks, each looping over: the submit path's
//! CPU (io_submit, block layer, driver), a synchronous request to device 0,
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

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "fio",
    description: "fio jobs with direct IO at a queue depth; IOPS and completion latency",
    metric: "iops (completed requests per second, higher is better)",
    params: &[RW, BS_KB, IODEPTH, NUMJOBS],
    ends: super::Ends::AtDuration,
    build,
};

/// CPU of submitting one request and of reaping its completion (assumed).
const SUBMIT_NS: f64 = 4_000.0;
const COMPLETE_NS: f64 = 2_000.0;

const CLAT: u16 = 0;
const IOS: u16 = 0;
const BYTES: u16 = 1;

pub struct Fio {
    rw: &'static str,
    bs_kb: u64,
    iodepth: u64,
    numjobs: u64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload fio", spec);
    let w = Fio {
        rw: p.word(&RW)?,
        bs_kb: p.uint(&BS_KB, &())?,
        iodepth: p.uint(&IODEPTH, &())?,
        numjobs: p.uint(&NUMJOBS, &())?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Fio {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        super::require_device("workload fio", platform, "")?;
        let f_ref = platform.cpu_types[0].base_khz;
        let cyc = |ns: f64| Dist::Fixed(super::cycles_for_ns_at(ns, f_ref));
        let kind = if self.rw.ends_with("read") { IoKind::Read } else { IoKind::Write };
        let bytes = self.bs_kb * 1024;
        let program = ProgramBuilder::new()
            .repeat(None, |b| {
                b.run(cyc(SUBMIT_NS), 0.0)
                    .op(Op::Mark)
                    .op(Op::Io { device: 0, kind, bytes })
                    .record(CLAT, Since::Mark, None)
                    .run(cyc(COMPLETE_NS), 0.0)
                    .count(IOS, 1)
                    .count(BYTES, bytes);
            })
            .build();
        let mut t = TaskSpec::new("fio", program);
        t.instances = (self.numjobs * self.iodepth) as u32;
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

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            RW.show(self.rw),
            BS_KB.show(self.bs_kb),
            IODEPTH.show(self.iodepth),
            NUMJOBS.show(self.numjobs),
        ]
    }
}

//! `ycsb-redis`: YCSB driving a redis server at a target rate; latency per
//! operation type.
//!
//! YCSB (Yahoo! Cloud Serving Benchmark) with its redis binding issues
//! reads (HGETALL of a record: by default 10 fields of 100 bytes) and
//! updates (HMSET of one field) at a target rate (`-target` ops/s); workload
//! A is 50 % reads, 50 % updates. It reports, per operation type, the
//! average, 95th and 99th percentile and maximum latency in µs. redis
//! serves every client from one event-loop thread: epoll_wait, read the
//! request, execute it on the in-memory hash, write the reply. The POWER8
//! global-pstate experiment of 2016 ran workload A at targets of 15k..47k
//! ops/s and compared the maximum latency of each type.
//!
//! Model: an open-loop source delivers requests at `target` per second to
//! the `redis-server` task over a socket (each arrival is a network
//! interrupt on the server's CPU; the client's own CPU work is left out).
//! The server takes one request at a time, picks its type (read with
//! probability `read_fraction`), spends the type's CPU time and records the
//! latency from the request's arrival to its reply. Arrivals are Poisson by
//! default (many client threads with network jitter; assumed) or evenly
//! spaced. Queueing follows: latency rises steeply as the target approaches
//! the server's capacity, 1 / (mean CPU per request) at the current
//! frequency.
//!
//! CPU per request (reference frequency) is assumed: ~12..15 µs, the order
//! of a single-threaded redis without pipelining over TCP loopback
//! (syscalls, TCP receive and send, parsing, the hash operation, the reply);
//! reads cost more than updates for the ten-field reply. A third of it is
//! memory-bound (assumed: hash and network-buffer accesses).

use super::{
    latency_metrics, Arrivals, Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, Since,
    SourceSpec, TaskSpec, Workload, WorkloadInfo,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const TARGET: ParamSpec = ParamSpec {
    name: "target",
    unit: "",
    default: ParamDefault::Real(15_000.0),
    range: Range::Real { min: 1.0, max: 10_000_000.0 },
    help: "offered operations per second (ycsb -target)",
};

pub const READ_FRACTION: ParamSpec = ParamSpec {
    name: "read_fraction",
    unit: "",
    default: ParamDefault::Real(0.5),
    range: Range::Real { min: 0.0, max: 1.0 },
    help: "share of reads; the rest are updates (workload A: 0.5)",
};

pub const ARRIVALS: ParamSpec = ParamSpec {
    name: "arrivals",
    unit: "",
    default: ParamDefault::Word("poisson"),
    range: Range::Choice(&["poisson", "constant"]),
    help: "poisson or constant spacing of requests",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "ycsb-redis",
    description: "YCSB at a target rate against a single-threaded redis server; latency per operation type",
    metric: "read_avg_us (mean read latency, µs, lower is better; update_*, *_p99, *_max and achieved ops/s too)",
    params: &[TARGET, READ_FRACTION, ARRIVALS],
    ends: super::Ends::AtDuration,
    build,
};

/// Server CPU per read and per update (assumed, see the header).
const READ_NS: f64 = 15_000.0;
const UPDATE_NS: f64 = 12_000.0;
/// Spread of the per-request CPU time (assumed).
const CV: f64 = 0.2;
/// Memory-bound share of the server's work (assumed).
const MEM: f64 = 0.33;
/// Bytes of a reply (only channel accounting).
const REPLY_BYTES: u64 = 1_100;

const REQUESTS: u32 = 0;
const REPLIES: u32 = 1;
const READ: u16 = 0;
const UPDATE: u16 = 1;
const OPS: u16 = 0;

pub struct YcsbRedis {
    target: f64,
    read_fraction: f64,
    arrivals: Arrivals,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload ycsb-redis", spec);
    let w = YcsbRedis {
        target: p.real(&TARGET)?,
        read_fraction: p.real(&READ_FRACTION)?,
        arrivals: match p.word(&ARRIVALS)? {
            "constant" => Arrivals::Constant,
            _ => Arrivals::Poisson,
        },
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for YcsbRedis {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        let cost = |ns: f64| Dist::lognormal(super::cycles_for_ns_at(ns, f_ref), CV);
        let serve = |b: &mut ProgramBuilder, ns: f64, series: u16| {
            b.run(cost(ns), MEM)
                .op(Op::Send { chan: REPLIES, bytes: REPLY_BYTES })
                .record(series, Since::Request, None)
                .count(OPS, 1);
        };
        let server = ProgramBuilder::new()
            .repeat(None, |b| {
                b.op(Op::Recv { chan: REQUESTS }).either(
                    self.read_fraction,
                    |b| serve(b, READ_NS, READ),
                    |b| serve(b, UPDATE_NS, UPDATE),
                );
            })
            .build();
        // The replies' reader: YCSB's side of the socket, which only drains it.
        let client = ProgramBuilder::new()
            .repeat(None, |b| {
                b.op(Op::Recv { chan: REPLIES });
            })
            .build();
        Ok(Setup {
            tasks: vec![TaskSpec::new("redis-server", server), TaskSpec::new("ycsb", client)],
            channels: vec![
                ChannelSpec::pipe("requests", u64::MAX / 2),
                ChannelSpec::pipe("replies", u64::MAX / 2),
            ],
            sources: vec![SourceSpec {
                name: "ycsb".into(),
                rate_per_s: self.target,
                arrivals: self.arrivals,
                chan: REQUESTS,
            }],
            series: vec!["read".into(), "update".into()],
            counters: vec!["ops".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let mut m = Vec::new();
        for (name, h) in [("read", &r.series[READ as usize]), ("update", &r.series[UPDATE as usize])] {
            let us = |ns: f64| ns / 1e3;
            m.push(Metric::of_samples(format!("{name}_avg_us"), h, |h| us(h.mean()), "us", Better::Lower));
            m.push(Metric::of_samples(format!("{name}_p99_us"), h, |h| us(h.percentile(99.0)), "us", Better::Lower));
            m.push(Metric::of_samples(format!("{name}_max_us"), h, |h| us(h.max as f64), "us", Better::Lower));
            m.push(Metric::new(format!("{name}_ops"), h.count as f64, "count", Better::Higher));
        }
        let mut all = r.series[READ as usize].clone();
        all.merge(&r.series[UPDATE as usize]);
        latency_metrics("op", &all, &mut m);
        m.push(Metric::new(
            "throughput_ops",
            r.per_second(r.counters[OPS as usize] as f64),
            "ops/s",
            Better::Higher,
        ));
        m
    }

    fn primary(&self) -> &'static str {
        "read_avg_us"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            TARGET.show(self.target),
            READ_FRACTION.show(self.read_fraction),
            ARRIVALS.show(if self.arrivals == Arrivals::Poisson { "poisson" } else { "constant" }),
        ]
    }
}

//! `netperf`: request/response or bulk transfer between netperf and
//! netserver over loopback; transactions/s or Mb/s.
//!
//! netperf's TCP_RR and UDP_RR tests have the client send a request of
//! `-r req,resp` bytes (default 1,1) and wait for the response before
//! sending the next: one transaction in flight, reported as transactions
//! per second. TCP_STREAM sends messages of the send size (`-m`, by default
//! the socket's send buffer, 16 KiB with Linux's default tcp_wmem) as fast
//! as the connection takes them and reports 10^6 bits/s. MMTests runs
//! netperf on loopback (client and server on the same machine), as the
//! hwp-dynamic-boost-2018 mail did.
//!
//! Model: a `netperf` and a `netserver` task joined by two channels. Per
//! message the sender pays the send path (syscall, protocol transmit, and on
//! loopback the receive processing too: the loopback device delivers the
//! packet from the sender's context) plus a copy per byte; the receiver
//! pays the receive syscall and its copy. RR transactions alternate the two
//! tasks; STREAM lets the sender run ahead until the socket buffers are full
//! (`STREAM_BUFFER_BYTES`). Each RR transaction records its latency.
//!
//! CPU costs (reference frequency) are assumed: a few µs per message for
//! TCP (more than UDP: ACK processing and the socket lock), copies at
//! 10 GB/s. The receive processing is charged to the sender's task (it
//! runs in softirq context on the sender's CPU on loopback).

use super::{
    latency_metrics, Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec,
    Workload, WorkloadInfo,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const TEST: ParamSpec = ParamSpec {
    name: "test",
    unit: "",
    default: ParamDefault::Word("tcp_rr"),
    range: Range::Choice(&["tcp_rr", "udp_rr", "tcp_stream"]),
    help: "tcp_rr, udp_rr or tcp_stream",
};

pub const SIZE: ParamSpec = ParamSpec {
    name: "size",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Uint { min: 0, max: 1 << 30 },
    help: "bytes per request and response (RR) or per send (STREAM); 0 = netperf's default (1; 16384)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "netperf",
    description: "netperf to netserver over loopback: TCP_RR/UDP_RR transactions/s or TCP_STREAM Mb/s",
    metric: "trans_per_s (transactions/s for tcp_rr and udp_rr; mbps, Mb/s, for tcp_stream; higher is better)",
    params: &[TEST, SIZE],
    ends: super::Ends::AtDuration,
    build,
};

/// Send path per message (syscall, transmit and loopback receive
/// processing) and receive syscall, TCP and UDP (assumed).
const TCP_SEND_NS: f64 = 6_000.0;
const TCP_RECV_NS: f64 = 2_500.0;
const UDP_SEND_NS: f64 = 4_500.0;
const UDP_RECV_NS: f64 = 2_000.0;
/// Copy per byte, each side (assumed: 10 GB/s).
const COPY_NS_PER_BYTE: f64 = 0.1;
/// Bytes a TCP_STREAM sender may have unread: the sender's and receiver's
/// socket buffers (assumed: tcp_wmem 16 KiB + tcp_rmem 128 KiB defaults,
/// autotuning left out).
const STREAM_BUFFER_BYTES: u64 = 144 << 10;

const TO_SERVER: u32 = 0;
const TO_CLIENT: u32 = 1;
const TRANSACTION: u16 = 0;
const MESSAGES: u16 = 0;

pub struct Netperf {
    test: &'static str,
    size: u64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload netperf", spec);
    let test = p.word(&TEST)?;
    let size = p.uint(&SIZE, &())?;
    p.finish()?;
    let size = match (size, test) {
        (0, "tcp_stream") => 16_384,
        (0, _) => 1,
        (n, _) => n,
    };
    Ok(Box::new(Netperf { test, size }))
}

impl Workload for Netperf {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        let cost = |ns: f64| Dist::lognormal(super::cycles_for_ns_at(ns + COPY_NS_PER_BYTE * self.size as f64, f_ref), 0.1);
        let (send, recv) = if self.test == "udp_rr" {
            (cost(UDP_SEND_NS), cost(UDP_RECV_NS))
        } else {
            (cost(TCP_SEND_NS), cost(TCP_RECV_NS))
        };
        let bytes = self.size;
        let mut setup = Setup {
            channels: vec![
                ChannelSpec { name: "to-netserver".into(), capacity_bytes: STREAM_BUFFER_BYTES.max(bytes) },
                ChannelSpec { name: "to-netperf".into(), capacity_bytes: STREAM_BUFFER_BYTES.max(bytes) },
            ],
            series: vec!["transaction".into()],
            counters: vec!["messages".into()],
            ..Setup::default()
        };
        if self.test == "tcp_stream" {
            let client = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.run(send, 0.0).op(Op::Send { chan: TO_SERVER, bytes });
                })
                .build();
            let server = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Recv { chan: TO_SERVER }).run(recv, 0.0).count(MESSAGES, 1);
                })
                .build();
            setup.tasks = vec![TaskSpec::new("netperf", client), TaskSpec::new("netserver", server)];
        } else {
            let client = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Mark)
                        .run(send, 0.0)
                        .op(Op::Send { chan: TO_SERVER, bytes })
                        .op(Op::Recv { chan: TO_CLIENT })
                        .run(recv, 0.0)
                        .record(TRANSACTION, Since::Mark, None)
                        .count(MESSAGES, 1);
                })
                .build();
            let server = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Recv { chan: TO_SERVER })
                        .run(recv, 0.0)
                        .run(send, 0.0)
                        .op(Op::Send { chan: TO_CLIENT, bytes });
                })
                .build();
            setup.tasks = vec![TaskSpec::new("netperf", client), TaskSpec::new("netserver", server)];
        }
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let messages = r.counters[MESSAGES as usize] as f64;
        if self.test == "tcp_stream" {
            let mbps = r.per_second(messages * self.size as f64 * 8.0) / 1e6;
            return vec![Metric::new("mbps", mbps, "Mb/s", Better::Higher)];
        }
        let mut m = vec![Metric::new("trans_per_s", r.per_second(messages), "trans/s", Better::Higher)];
        latency_metrics("transaction", &r.series[TRANSACTION as usize], &mut m);
        m
    }

    fn primary(&self) -> &'static str {
        if self.test == "tcp_stream" {
            "mbps"
        } else {
            "trans_per_s"
        }
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![TEST.show(self.test), SIZE.show(self.size)]
    }
}

//! `tbench`: dbench's network half, client and server process pairs over
//! loopback TCP; throughput MB/s.
//!
//! tbench (dbench 4, run by MMTests' tbench-bench with config-network-tbench:
//! `tbench -t 180 --loadfile client-tiny.txt N 127.0.0.1`, N from 1 to
//! 4 × the CPUs in powers of two) replays a file-server load file as
//! network traffic instead of file-system calls: each of N client
//! processes connects to `tbench_srv`, which forks one server process per
//! connection. For every operation of the load file the client sends a
//! request (carrying the data of a write) and waits for the reply
//! (carrying the data of a read); the server reads the request and
//! answers. Nothing touches a disk. Throughput is the bytes the reads and
//! writes moved per second (dbench's MB/sec, 10^6 bytes).
//!
//! dbench 4.0 starts its clients together (dbench.c `create_procs`): the
//! parent forks them, each connects (`nb_setup`) and then waits on a SysV
//! semaphore; the parent checks every 100 ms (`usleep(100*1000)`) whether
//! all of them wait and then releases them at once, and the run's clock
//! (`tv_start`, from which throughput and the warm-up count) starts there.
//! Both processes of a pair so sleep first: their new-task utilisation
//! decays and their CPUs stop the tick before the first operation.
//!
//! Model: `clients` pairs of a `tbench` client and a `tbench_srv` server,
//! each pair joined by its own two channels (the two directions of the TCP
//! connection). The client spends its per-operation CPU and the send path,
//! sends, blocks for the reply, pays the receive path and counts the
//! operation; the server blocks for a request, pays receive, its reply
//! and send, and sends. Each message wakes the process blocked on the
//! other end: the pairs wake each other once per direction per operation,
//! the pattern that makes tbench sensitive to wakeup placement and to how
//! fast a governor raises a CPU that keeps going idle for microseconds.
//! With probability `DATA_SHARE` an operation is a read or write of
//! `DATA_BYTES`, whose copies both ends pay and which counts toward
//! throughput.
//!
//! Constants: a loopback TCP send plus receive of 100 B to 4 KiB costs
//! 7.7 µs on this project's machine, nothing blocking
//! (`tools/calibrate/loopback/loopback.c` in the kcycles sitting on a quiet
//! host, tools/calibrate/kcycles/run{1,2}/loopback.out: fastest 7 631 ns at
//! 100 B, 7 786 ns at 4 KiB; 7 344 and 7 402 at load 7-10 the same morning;
//! an earlier, unclocked run on a family-26 host gave 5.5 µs), cycles at
//! `workload::CALIBRATION_CORE_KHZ` (that sitting's core clock), split as
//! sender 4.91 µs (the loopback receive processing runs in the sender's
//! context) and receiver 2.80 µs (split assumed: 3.5 : 2);
//! a blocking round trip between two processes there takes 17-18 µs at
//! light load. The per-operation CPU of client and server, the share
//! of data operations and their size are assumed (client-tiny.txt is not
//! on the machine), times at the platform's base clock. Left out: the loopback receive in NET_RX softirq (its
//! cost is the sender's here), TCP delayed ACKs and Nagle (tbench sets
//! TCP_NODELAY), and the load file's per-operation variety beyond the data
//! share.

use super::{Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const CLIENTS: ParamSpec = ParamSpec {
    name: "clients",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 4096 },
    help: "client/server pairs (MMTests: 1 to 4 x CPUs, powers of two)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "tbench",
    description: "dbench's network half: client/server process pairs over loopback TCP waking each other; MB/s",
    metric: "throughput_mbs (MB/s of read and write data, higher is better)",
    params: &[CLIENTS],
    ends: super::Ends::AtDuration,
    build,
};

/// Send path of one loopback message, receive path (measured 7.71 µs
/// together, the kcycles sitting's `loopback.out`; the split is assumed).
const SEND_NS: f64 = 4_905.0;
const RECV_NS: f64 = 2_803.0;
/// Copy per byte, each side (assumed: 10 GB/s, as netperf's).
const COPY_NS_PER_BYTE: f64 = 0.1;
/// Client's work per operation: the load-file line and the request
/// (assumed).
const CLIENT_OP_NS: f64 = 2_000.0;
/// Server's work per operation: parse the request, build the reply
/// (assumed).
const SERVER_OP_NS: f64 = 3_000.0;
/// Share of operations that read or write data, and their size (assumed).
const DATA_SHARE: f64 = 0.4;
const DATA_BYTES: u64 = 10_240;
/// Request or reply header bytes (assumed).
const HEADER_BYTES: u64 = 128;
/// Socket buffers of one direction (assumed: tcp_wmem + tcp_rmem defaults).
const SOCKET_BUFFER_BYTES: u64 = 144 << 10;

/// When the clients are released ([`RELEASE_NS`] after the start): the
/// parent's first check comes straight after its forks, before a child has
/// connected, so the release is its second, one poll (100 ms, dbench.c
/// `create_procs`) in (assumed: every child connects within that poll).
const RELEASE_NS: u64 = 100_000_000;

const OPS: u16 = 0;
const BYTES: u16 = 1;

pub struct Tbench {
    clients: u64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload tbench", spec);
    let w = Tbench { clients: p.uint(&CLIENTS, &())? };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Tbench {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        // Measured CPU at the measuring core's clock, assumed CPU at the platform's base clock.
        let cost = |measured: f64, assumed: f64| {
            Dist::lognormal(super::measured_cycles(measured) + super::cycles_for_ns_at(assumed, f_ref), 0.1)
        };
        let copy = cost(0.0, COPY_NS_PER_BYTE * DATA_BYTES as f64);
        let mean_copy_ns = DATA_SHARE * COPY_NS_PER_BYTE * DATA_BYTES as f64;
        let mut setup = Setup { counters: vec!["ops".into(), "bytes".into()], ..Setup::default() };
        for i in 0..self.clients {
            let (to_srv, to_cli) = (2 * i as u32, 2 * i as u32 + 1);
            setup.channels.push(ChannelSpec::pipe(format!("to-server-{i}"), SOCKET_BUFFER_BYTES));
            setup.channels.push(ChannelSpec::pipe(format!("to-client-{i}"), SOCKET_BUFFER_BYTES));
            let client = ProgramBuilder::new()
                .sleep(Dist::Fixed(RELEASE_NS as f64))
                .repeat(None, |b| {
                    b.run(cost(SEND_NS, CLIENT_OP_NS), 0.0)
                        .either(
                            DATA_SHARE,
                            |b| {
                                b.run(copy, 0.0).count(BYTES, DATA_BYTES);
                            },
                            |_| {},
                        )
                        .op(Op::Send { chan: to_srv, bytes: HEADER_BYTES })
                        .op(Op::Recv { chan: to_cli })
                        .run(cost(RECV_NS, 0.0), 0.0)
                        .count(OPS, 1);
                })
                .build();
            let server = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Recv { chan: to_srv })
                        .run(cost(RECV_NS + SEND_NS, SERVER_OP_NS + mean_copy_ns), 0.0)
                        .op(Op::Send { chan: to_cli, bytes: HEADER_BYTES });
                })
                .build();
            setup.tasks.push(TaskSpec::new("tbench", client));
            setup.tasks.push(TaskSpec::new("tbench_srv", server));
        }
        Ok(setup)
    }

    /// Rates over the time since the release, as dbench counts from `tv_start`.
    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let secs = r.elapsed_ns.saturating_sub(RELEASE_NS) as f64 / 1e9;
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        vec![
            Metric::new("throughput_mbs", rate(r.counters[BYTES as usize]) / 1e6, "MB/s", Better::Higher),
            Metric::new("ops_per_s", rate(r.counters[OPS as usize]), "ops/s", Better::Higher),
        ]
    }

    fn primary(&self) -> &'static str {
        "throughput_mbs"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![CLIENTS.show(self.clients)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::calibration::{fastest, Raw};

    #[test]
    fn rates_count_from_the_release() {
        // 150 ms simulated: 50 ms of them after the release, as dbench's tv_start
        let r = Record { elapsed_ns: 150_000_000, counters: vec![1_000, 5_000_000], ..Record::default() };
        let m = Tbench { clients: 1 }.metrics(&r);
        assert_eq!((m[0].value, m[1].value), (Some(100.0), Some(20_000.0)));
        let before = Record { elapsed_ns: 80_000_000, counters: vec![0, 0], ..Record::default() };
        assert!(Tbench { clients: 1 }.metrics(&before).iter().all(|m| m.value == Some(0.0)));
    }

    #[test]
    fn send_and_receive_are_the_kcycles_sittings_loopback_cost() {
        let sum = (fastest(Raw::Loopback, "cost   100 B", "B:") + fastest(Raw::Loopback, "cost  4096 B", "B:")) / 2.0;
        assert!((SEND_NS + RECV_NS - sum).abs() < 50.0, "{} against {sum}", SEND_NS + RECV_NS);
        assert!((SEND_NS / (SEND_NS + RECV_NS) - 3.5 / 5.5).abs() < 0.01);
    }
}

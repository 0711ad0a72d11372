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
//! connection). The client spends its per-operation CPU and the send path
//! up to the point where the data reaches the server's socket, sends,
//! finishes the send path, blocks for the reply, pays the receive path and
//! counts the operation; the server blocks for a request, pays receive,
//! its reply and the send path up to the same point, sends and finishes
//! the send. Each message wakes the process blocked on the other end: the
//! pairs wake each other once per direction per operation, the pattern
//! that makes tbench sensitive to wakeup placement and to how fast a
//! governor raises a CPU that keeps going idle for microseconds. The
//! wakeup comes from inside the sender's send(): on loopback the NET_RX
//! softirq that delivers the segment runs in the sender's context at the
//! end of the transmit, and tcp_v4_rcv() -> sk_data_ready() wakes the
//! reader there (v5.2 net/ipv4/tcp_output.c `tcp_write_xmit`,
//! drivers/net/loopback.c `loopback_xmit` -> `netif_rx`, kernel/softirq.c
//! at `local_bh_enable`); the rest of the softirq, tcp_sendmsg() and the
//! syscall's return then run on the sender's CPU while the woken reader
//! runs on its own (`workload::TCP_SEND_AFTER_WAKE`, measured), so a pair's two CPUs
//! overlap instead of strictly taking turns.
//!
//! The operations are those of the load file MMTests gives it,
//! client-tiny.txt (data/dbench/client-tiny.ops, which dbench's own replay
//! reads too), as dbench 4.0's sockio.c carries them: a ReadX's reply
//! carries the bytes read (`sio_readx`), a WriteX's request the bytes
//! written (`sio_writex`), and only those count toward throughput
//! (`child->bytes += size`); every other kind (NTCreateX, Close, Flush,
//! the QUERY_* and FIND_FIRST, ...) is a request and a reply of tens of
//! bytes. Each operation is a ReadX, a WriteX or another kind with the
//! file's shares (962, 303 and 2,308 of its 3,573 lines), a ReadX or
//! WriteX of that kind's mean size in the file (11,859 and 25,451 bytes:
//! 5,351 bytes an operation). The client copies a WriteX's data before
//! its request and a ReadX's after the reply; the server, drawing
//! nothing, pays the mean copy of an operation every time.
//!
//! Constants: a message of a pair that takes turns costs its sender
//! 4.33 µs (the loopback receive processing runs in the sender's context)
//! and its reader 0.87 µs, nothing blocking, cycles at
//! `workload::CALIBRATION_CORE_KHZ` (`workload::TCP_RR_SEND_NS`: netperf
//! TCP_RR's measured halves, `tools/calibrate/tcp/tcp.c`); each reply
//! carries the ACK of the request it answers, one segment a message, as
//! v5.2's pingpong sockets send them (`tools/calibrate/loopback/acks.c`).
//! `tools/calibrate/loopback/loopback.c`'s `cost` rows, 7.7 µs a send and
//! receive, time a one-way stream instead, which sends an ACK for every
//! read (two segments a message): tbench took them until session 40. The
//! last 37 % of the sender's part runs after the reader's wakeup
//! (`tools/calibrate/loopback/split.c`);
//! a blocking round trip between two processes there takes 17-18 µs at
//! light load. The per-operation CPU of client and server and the copy
//! cost per byte are assumed, times at the platform's base clock (the
//! copy within the 0.40-0.69 cycles a byte, both ends together, by which
//! the pair's measured cost rises with the bytes carried:
//! tools/calibrate/tbench/). Left out: the loopback receive in NET_RX softirq (its
//! cost is the sender's here), Nagle (tbench sets TCP_NODELAY), the
//! delayed-ACK timer (a pingpong socket's ACK goes with its reply, as the
//! measured TCP_RR halves have it; a reply slower than the timer would
//! send one alone), the load file's order (each operation's kind is drawn
//! at its share) and the spread of sizes within a kind (its mean), and
//! the second receive call of each message as a call of its own (each end
//! reads the 4-byte header, then the rest: socklib.c's read_sock(),
//! tbench_srv.c; the assumed per-operation CPU stands for it).

use super::{
    Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo,
    TCP_RR_RECV_NS, TCP_RR_SEND_NS, TCP_SEND_AFTER_WAKE,
};
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

/// Send path of one loopback message, receive path: a request or a reply
/// of a pair that takes turns, as TCP_RR's (`workload::TCP_RR_SEND_NS`,
/// measured; module doc).
const SEND_NS: f64 = TCP_RR_SEND_NS;
const RECV_NS: f64 = TCP_RR_RECV_NS;
/// Copy per byte, each side (assumed: 10 GB/s, as netperf's).
const COPY_NS_PER_BYTE: f64 = 0.1;
/// Client's work per operation: the load-file line and the request
/// (assumed).
const CLIENT_OP_NS: f64 = 2_000.0;
/// Server's work per operation besides one send and one receive
/// (assumed; tbench_srv.c parses nothing, but reads each request in two
/// calls and loops).
const SERVER_OP_NS: f64 = 3_000.0;

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

/// The load file's operations as tbench carries them (module doc): the
/// share of ReadX and of WriteX, and the mean bytes each carries.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mix {
    read_share: f64,
    read_bytes: u64,
    write_share: f64,
    write_bytes: u64,
}

impl Mix {
    /// client-tiny.txt's, from data/dbench/client-tiny.ops.
    fn client_tiny() -> Mix {
        let ops = super::dbench::tiny_ops();
        let kind = |k: u8| {
            let (n, bytes) = ops.iter().filter(|o| o.0 == k).fold((0u64, 0u64), |(n, b), o| (n + 1, b + o.1));
            (n as f64 / ops.len() as f64, (bytes as f64 / n.max(1) as f64).round() as u64)
        };
        let ((read_share, read_bytes), (write_share, write_bytes)) = (kind(b'r'), kind(b'w'));
        Mix { read_share, read_bytes, write_share, write_bytes }
    }

    /// Bytes counted per operation, on average.
    fn mean_bytes(&self) -> f64 {
        self.read_share * self.read_bytes as f64 + self.write_share * self.write_bytes as f64
    }
}

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
        let mix = Mix::client_tiny();
        let copy = |bytes: u64| cost(0.0, COPY_NS_PER_BYTE * bytes as f64);
        let mean_copy_ns = COPY_NS_PER_BYTE * mix.mean_bytes();
        // A WriteX among the operations that are not a ReadX.
        let write_given_not_read = mix.write_share / (1.0 - mix.read_share);
        // The send path up to the reader's wakeup, and the rest after it.
        let (send_before_ns, send_tail) = (SEND_NS * (1.0 - TCP_SEND_AFTER_WAKE), cost(SEND_NS * TCP_SEND_AFTER_WAKE, 0.0));
        let mut setup = Setup { counters: vec!["ops".into(), "bytes".into()], ..Setup::default() };
        for i in 0..self.clients {
            let (to_srv, to_cli) = (2 * i as u32, 2 * i as u32 + 1);
            setup.channels.push(ChannelSpec::pipe(format!("to-server-{i}"), SOCKET_BUFFER_BYTES));
            setup.channels.push(ChannelSpec::pipe(format!("to-client-{i}"), SOCKET_BUFFER_BYTES));
            // One operation: a WriteX's data goes out with the request, a
            // ReadX's comes back with the reply.
            let operation = |b: &mut ProgramBuilder, written: u64, read: u64| {
                b.run(cost(send_before_ns, CLIENT_OP_NS), 0.0);
                if written > 0 {
                    b.run(copy(written), 0.0).count(BYTES, written);
                }
                b.op(Op::Send { chan: to_srv, bytes: HEADER_BYTES })
                    .run(send_tail, 0.0)
                    .op(Op::Recv { chan: to_cli })
                    .run(cost(RECV_NS, 0.0), 0.0);
                if read > 0 {
                    b.run(copy(read), 0.0).count(BYTES, read);
                }
                b.count(OPS, 1);
            };
            let client = ProgramBuilder::new()
                .sleep(Dist::Fixed(RELEASE_NS as f64))
                .repeat(None, |b| {
                    b.either(
                        mix.read_share,
                        |b| operation(b, 0, mix.read_bytes),
                        |b| {
                            b.either(write_given_not_read, |b| operation(b, mix.write_bytes, 0), |b| operation(b, 0, 0));
                        },
                    );
                })
                .build();
            let server = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Recv { chan: to_srv })
                        .run(cost(RECV_NS + send_before_ns, SERVER_OP_NS + mean_copy_ns), 0.0)
                        .op(Op::Send { chan: to_cli, bytes: HEADER_BYTES })
                        .run(send_tail, 0.0);
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
    fn mix_is_client_tiny_txts_reads_and_writes() {
        let m = Mix::client_tiny();
        assert_eq!((m.read_bytes, m.write_bytes), (11_859, 25_451));
        assert!((m.read_share * 3573.0 - 962.0).abs() < 1e-9 && (m.write_share * 3573.0 - 303.0).abs() < 1e-9, "{m:?}");
        assert!((m.mean_bytes() - 5_351.0).abs() < 1.0, "{} bytes an operation", m.mean_bytes());
    }

    /// The post/(pre + post) shares split.c printed at 100 B and 4 KiB, for
    /// the rows that kept at least 100 rounds.
    fn measured_after_wake_shares() -> Vec<f64> {
        let raw = [
            include_str!("../../../../tools/calibrate/loopback/split.out"),
            include_str!("../../../../tools/calibrate/loopback/split-s39.out"),
        ];
        let field = |l: &str, key: &str| -> f64 {
            let rest = &l[l.find(key).unwrap() + key.len()..];
            rest.trim_start().split(|c: char| !c.is_ascii_digit() && c != '.').next().unwrap().parse().unwrap()
        };
        raw.iter()
            .flat_map(|r| r.lines())
            .filter(|l| l.contains("size    100 B") || l.contains("size   4096 B"))
            .filter(|l| field(l, "medians of") >= 100.0)
            .map(|l| {
                let (pre, post) = (field(l, "pre"), field(l, "post"));
                post / (pre + post)
            })
            .collect()
    }

    #[test]
    fn the_send_wakes_its_reader_where_split_c_measured() {
        let shares = measured_after_wake_shares();
        assert!(shares.len() >= 4, "{shares:?}");
        let (lo, hi) = shares.iter().fold((1.0f64, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(lo <= TCP_SEND_AFTER_WAKE && TCP_SEND_AFTER_WAKE <= hi, "{TCP_SEND_AFTER_WAKE} outside the measured {lo:.3}..{hi:.3}");
        assert!(hi - lo < 0.08, "the measured shares {shares:?} disagree");
    }

    /// A message of a pair taking turns costs less than one of a one-way
    /// stream, whose every read sends an ACK of its own: acks.c counted one
    /// segment a message against two, and the kcycles sitting's one-way
    /// send + recv (loopback.c `cost`) is dearer than TCP_RR's by about
    /// the ACK's path.
    #[test]
    fn a_message_taking_turns_is_one_segment_and_cheaper_than_a_one_way_one() {
        let acks = include_str!("../../../../tools/calibrate/loopback/acks.out");
        let segments = |kind: &str| -> Vec<f64> {
            acks.lines().filter(|l| l.starts_with(kind)).map(|l| crate::workload::calibration::first_number(l.split_once("B:").unwrap().1)).collect()
        };
        let (one_way, pingpong) = (segments("one-way"), segments("pingpong"));
        assert_eq!((one_way.len(), pingpong.len()), (6, 6));
        assert!(one_way.iter().all(|&s| s == 2.0) && pingpong.iter().all(|&s| s == 1.0), "{one_way:?} {pingpong:?}");
        let one_way_ns = (fastest(Raw::Loopback, "cost   100 B", "B:") + fastest(Raw::Loopback, "cost  4096 B", "B:")) / 2.0;
        let ack = one_way_ns - (SEND_NS + RECV_NS);
        assert!(ack > 1_500.0 && ack < 3_500.0, "a one-way message {one_way_ns} ns, taking turns {} ns", SEND_NS + RECV_NS);
    }
}

//! `netperf`: request/response or bulk transfer between netperf and
//! netserver over loopback; transactions/s or Mb/s.
//!
//! netperf's TCP_RR and UDP_RR tests have the client send a request of
//! `-r req,resp` bytes (default 1,1) and wait for the response before
//! sending the next: one transaction in flight, reported as transactions
//! per second. TCP_STREAM sends messages of the send size (`-m`, by default
//! the socket's send buffer, 16 KiB with Linux's default tcp_wmem) as fast
//! as the connection takes them and reports 10^6 bits/s. UDP_STREAM sends
//! datagrams of the send size and never waits: on loopback the sender's
//! socket memory is released as the packet is handed on (loopback_xmit
//! orphans the skb), and the receiving socket drops what its full receive
//! buffer cannot take; netperf reports the sender's rate and the
//! receiver's, and MMTests keeps the sender's (shellpack_src/src/netperf/
//! extract-report.pl and bin/lib/MMTests/ExtractNetperf.pm take the last
//! field of the sender's line; the `recv` row printed beside it repeats
//! the send rate). MMTests runs
//! netperf on loopback (client and server on the same machine), as the
//! hwp-dynamic-boost-2018 mail did.
//!
//! Model: a `netperf` and a `netserver` task joined by two channels. Per
//! message the sender pays the send path (syscall, protocol transmit, and on
//! loopback the receive processing too: the loopback device delivers the
//! packet from the sender's context) plus a copy per byte; the receiver
//! pays the receive syscall and its copy. RR transactions alternate the two
//! tasks; TCP_STREAM lets the sender run ahead until the socket buffers are
//! full (`STREAM_BUFFER_BYTES`), its bytes reaching netserver in segments as
//! Nagle and the receiver's ACKs let them go, netserver woken once per
//! segment that finds it asleep and taking up to `size` bytes a recv
//! (`workload::TcpStream`, the kernel's rules; tools/calibrate/tcp/wakeups.c
//! measures how rarely the real receiver sleeps); UDP_STREAM's datagrams go into the
//! receiver's buffer (`UDP_RCVBUF_BYTES`, charged each datagram's
//! `udp_truesize`) or are dropped. Each RR transaction records its latency.
//! A TCP_RR end wakes the other from inside its send (the loopback receive
//! runs in its context) and runs the rest of the send, the measured
//! `workload::TCP_SEND_AFTER_WAKE` of it, beside the woken end before it
//! blocks for the answer, as tbench's ends do; a UDP send (UDP_RR's ends,
//! UDP_STREAM's sender) likewise runs its measured last
//! `UDP_SEND_AFTER_WAKE_NS` after the datagram is queued and its reader woken.
//!
//! CPU costs, measured on this project's machine, cycles at
//! `workload::CALIBRATION_CORE_KHZ`: UDP's by `tools/calibrate/udp/udp.c` (in
//! the kcycles sitting): a send 2.9 µs, a receive 0.66 µs, copies at 34 and
//! 37 GB/s; TCP's by `tools/calibrate/tcp/tcp.c` (session 26): a
//! TCP_STREAM send 0.87 µs and a receive 0.66 µs per message (Nagle on, as
//! netperf leaves it: most sends only queue bytes), plus about 0.08 and
//! 0.1 ns per byte; a TCP_RR 1-byte send 4.3 µs and receive 0.87 µs. The
//! receive processing is charged to the sender's task: v5.2's loopback_xmit() hands the packet to netif_rx(),
//! whose NET_RX softirq runs at the end of the send, on the sender's CPU
//! in its context (local_bh_enable() -> do_softirq(), kernel/softirq.c;
//! ksoftirqd only takes over once __do_softirq() has run 2 ms or restarted
//! 10 times, which one datagram per softirq never does).

use super::{
    latency_metrics, Better, ChannelSpec, Dist, Metric, Op, PowerPhase, ProgramBuilder, Record, Setup, Since,
    TaskSpec, TcpStream, Workload, WorkloadInfo, TCP_RR_RECV_NS, TCP_RR_SEND_NS,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const TEST: ParamSpec = ParamSpec {
    name: "test",
    unit: "",
    default: ParamDefault::Word("tcp_rr"),
    range: Range::Choice(&["tcp_rr", "udp_rr", "tcp_stream", "udp_stream"]),
    help: "tcp_rr, udp_rr, tcp_stream or udp_stream",
};

pub const SIZE: ParamSpec = ParamSpec {
    name: "size",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Uint { min: 0, max: 1 << 30 },
    help: "bytes per request and response (RR) or per send (STREAM, at most 65507 for udp_stream); 0 = netperf's default (1; 16384)",
};

pub const TESTS: ParamSpec = ParamSpec {
    name: "tests",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 30 },
    help: "tests in one netperf invocation (netperf's -i max,min confidence iterations: MMTests' -i 3,3 runs 3), the same two tasks throughout; more than 1 needs test_len (stream tests only)",
};

pub const TEST_LEN: ParamSpec = ParamSpec {
    name: "test_len",
    unit: "",
    default: ParamDefault::Unset("unset: one test for the whole run"),
    range: Range::Custom,
    help: "each test's length, netperf's -l (its default 10s), such as 10s or 500ms; the score is the mean of the tests' rates, as netperf reports (stream tests only)",
};

pub const PAD: ParamSpec = ParamSpec {
    name: "pad",
    unit: "",
    default: ParamDefault::Unset("4s: netperf 2.4.5's PAD_TIME"),
    range: Range::Custom,
    help: "udp_stream with test_len: how long after each test's end netserver's timer keeps it in recv() before it answers, both tasks asleep (netperf 2.4.5 recv_udp_stream: test_len + PAD_TIME, 4 s)",
};

pub const SCORED_LEN: ParamSpec = ParamSpec {
    name: "scored_len",
    unit: "",
    default: ParamDefault::Unset("unset: test_len"),
    range: Range::Custom,
    help: "with test_len: the test length the score stands for (netperf's 10s), when shorter tests are simulated to save time: each test is extended to it at the rate of its own second half, and the package power with it (the result's scored_power: each second half, and each udp pad's second half to PAD_TIME, at its own power)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "netperf",
    description: "netperf to netserver over loopback: TCP_RR/UDP_RR transactions/s or TCP_STREAM/UDP_STREAM Mb/s",
    metric: "trans_per_s (transactions/s for tcp_rr and udp_rr; mbps, Mb/s sent, for tcp_stream and udp_stream; higher is better)",
    params: &[TEST, SIZE, TESTS, TEST_LEN, PAD, SCORED_LEN],
    ends: super::Ends::AtDuration,
    build,
};

/// TCP over loopback, measured on this project's machine (the kcycles
/// sitting's AMD EPYC family-25 KVM guest, Linux 6.18):
/// `tools/calibrate/tcp/tcp.c` run twice beside kpath.c's core clock (3.244
/// GHz before and after each run), tools/calibrate/tcp/run{1,2}.out, both
/// ends of one connection on 127.0.0.1 in one process, nothing blocking,
/// so no wakeup is in the figures (the engine charges it to the waker:
/// machine/kpath.rs). The sockets are netperf's as MMTests runs it
/// (netperf-bench: `-m SIZE -M SIZE`, no -s/-S, no -D): default buffers with
/// autotuning, Nagle on.
///
/// TCP_STREAM, the fastest of 1000 batches of 128 KiB per size (64 B to 16
/// KiB), a least-squares line through both runs (`tools/calibrate/tcp/fit.py`,
/// fit.out): a send 872 ns + 0.0824 ns/B, a receive 663 ns + 0.0979 ns/B.
/// The send is netperf's send() of SIZE bytes, v5.2 tcp_sendmsg(): the copy
/// into the write queue's tail skb and, once Nagle lets a full segment go
/// (tcp_push -> tcp_write_xmit; on loopback a segment is up to 64 KiB),
/// its transmission with everything loopback runs in the sender's context:
/// ip_queue_xmit -> dev_queue_xmit -> loopback_xmit -> netif_rx, and the
/// NET_RX softirq at dev_queue_xmit's end (process_backlog -> ip_rcv ->
/// tcp_v4_rcv -> tcp_rcv_established, queueing at the receiver). The
/// receive is netserver's recv() of SIZE queued bytes, v5.2 tcp_recvmsg():
/// the copy out, and the ACK that tcp_cleanup_rbuf / tcp_rcv_space_adjust
/// send, whose input at the sender's socket (tcp_ack, and tcp_data_snd_check
/// pushing what Nagle held) runs in the receiver's context on loopback.
/// What a 6.18 guest may do differently from v5.2: the receive window's
/// scaling and the buffers' autotuning (tcp_rmem[1] 128 KiB from v5.4,
/// scaling_ratio from v6.5: how often a window update goes out), the socket
/// memory accounting (per-CPU reserves, v6.0), tcp_recvmsg_locked() and
/// the sendmsg rework (v5.11, v6.5), and the guest's syscall-entry
/// mitigations; the per-segment work (loopback, IP, TCP input) is the same
/// path.
const TCP_SEND_NS: f64 = 872.3;
const TCP_SEND_NS_PER_BYTE: f64 = 0.0824;
const TCP_RECV_NS: f64 = 663.3;
const TCP_RECV_NS_PER_BYTE: f64 = 0.0979;
// TCP_RR's send and receive are `workload::TCP_RR_SEND_NS` and
// `TCP_RR_RECV_NS` (tbench's messages take turns the same way); larger RR
// messages add TCP_STREAM's per-byte costs (assumed: the copies are the same).
/// UDP over loopback, measured on this project's machine (an AMD EPYC
/// family-25 KVM guest, Linux 6.18; `tools/calibrate/udp/udp.c` run twice
/// in the kcycles sitting on a quiet host, tools/calibrate/kcycles/run{1,2}/udp.out, the
/// fastest of 5000 batches per size, 64 B to 16 KiB, a least-squares line
/// through both runs as `tools/calibrate/udp/fit.py` puts one; costs.txt).
/// The send is netperf's sendto() with everything loopback runs in its
/// context: udp_sendmsg() down to loopback_xmit(), netif_rx() and the
/// NET_RX softirq at the send's local_bh_enable() (process_backlog(),
/// ip_rcv(), udp_rcv(), __udp_enqueue_schedule_skb()): 2923 ns + 0.0294
/// ns/B, no one asleep on the socket (the wakeup is the engine's, charged
/// to the waker: machine/kpath.rs). The receive is netserver's recvfrom()
/// of a queued datagram (dequeue, copy out, free): 657 ns + 0.0273 ns/B. A
/// dropped send costs about what a delivered one does (2825 ns + 0.0337
/// ns/B), as the model has it. The figures are cycles at
/// `workload::CALIBRATION_CORE_KHZ`, the sitting's core clock (the same script at load
/// 7-10 that morning: 2836 + 0.0343, 643 + 0.0280; session 21's unclocked
/// run on the same kind of host: 2834 + 0.0375, 644 + 0.0276).
const UDP_SEND_NS: f64 = 2_923.0;
/// What a UDP send still runs once its datagram is on the receiving socket
/// and its reader woken (__udp_enqueue_schedule_skb -> sk_data_ready, in the
/// NET_RX softirq at the transmit's local_bh_enable): the rest of the
/// softirq, of udp_sendmsg() and the syscall's return, beside the woken
/// reader. `tools/calibrate/loopback/split_udp.c` (session 40, split.c's
/// method on a UDP socket) times it at 505-731 ns in five runs of 64 B,
/// 1 KiB and 16 KiB alike (the copy comes before the enqueue), so a fixed
/// part of the send rather than a share: the median of the fifteen, 616 ns
/// at the sitting's 3.695 GHz, as cycles at `workload::CALIBRATION_CORE_KHZ`
/// (split_udp.out; the test below recomputes it).
const UDP_SEND_AFTER_WAKE_NS: f64 = 701.6;
const UDP_RECV_NS: f64 = 657.0;
const UDP_SEND_NS_PER_BYTE: f64 = 0.0294;
const UDP_RECV_NS_PER_BYTE: f64 = 0.0273;
/// Bytes a TCP_STREAM sender may have unread: its send buffer (queued and
/// unacked bytes) plus the receiver's receive queue. tcp_wmem[1]'s 16 KiB is
/// only the start: v5.2 tcp_init_buffer_space() -> tcp_sndbuf_expand()
/// (net/ipv4/tcp_input.c) sets sk_sndbuf at the connection's start to 2 ×
/// TCP_INIT_CWND (10) × per_mss, where per_mss is the MSS plus
/// MAX_TCP_HEADER and skb_shared_info rounded up to a power of two plus an
/// sk_buff: on loopback (MTU 65536, MSS about 65483) 2 × 10 × (131072 + 256)
/// = 2626560 bytes, under tcp_wmem[2] (4 MiB). tcp.c's sockets show the same
/// (6.18: 3939840 bytes from the first batch). The receive queue is taken
/// at v5.2's tcp_rmem[1], 87380 bytes; its autotuning (tcp_rcv_space_adjust)
/// and the writer's wakeup hysteresis (sk_stream_write_space() waits for a
/// third of the queue to drain) are left out.
const STREAM_BUFFER_BYTES: u64 = 2_626_560 + 87_380;
/// TCP's MSS on loopback, the size of a full segment (TcpStream's
/// segment_bytes, size_goal): the MTU of 65536 less the IPv4 and TCP
/// headers and the timestamp option; tcp_info's tcpi_snd_mss and
/// tcpi_rcv_mss on this project's machine (tools/calibrate/tcp/wakeups.out).
const LOOPBACK_MSS: u64 = 65_483;
/// UDP_STREAM's receive buffer: netserver's socket keeps the kernel's
/// default SO_RCVBUF, net.core.rmem_default = 212992 bytes on x86-64
/// (SK_RMEM_MAX; MMTests passes -s/-S only to a remote server).
const UDP_RCVBUF_BYTES: u64 = 212_992;
/// The largest UDP payload over IPv4 (65535 − 20 − 8): a larger send fails
/// with EMSGSIZE.
const UDP_MAX_PAYLOAD: u64 = 65_507;

/// What one datagram of `size` payload bytes charges to the receive buffer,
/// skb->truesize (v5.2 __alloc_skb, SKB_TRUESIZE): ip_append_data asks for
/// one linear buffer of the payload, the IP and UDP headers (28 bytes) and
/// the link-layer reserve (16 + 15), to which __alloc_skb adds struct
/// skb_shared_info (320 bytes) and kmalloc rounds up to a power of two;
/// plus struct sk_buff itself (256 bytes aligned). The structure sizes are
/// assumed from an x86-64 v5.2 build; skb_condense's trimming of a half-full
/// buffer is left out.
fn udp_truesize(size: u64) -> u64 {
    (size + 28 + 31 + 320).next_power_of_two() + 256
}

const TO_SERVER: u32 = 0;
const TO_CLIENT: u32 = 1;
const TRANSACTION: u16 = 0;
const MESSAGES: u16 = 0;
/// udp_stream: datagrams netserver received.
const RECEIVED: u16 = 1;

/// netperf 2.4.5's PAD_TIME (src/netlib.h): netserver's UDP_STREAM timer
/// runs this much past the test's length.
const PAD_TIME_NS: u64 = 4_000_000_000;

pub struct Netperf {
    test: &'static str,
    size: u64,
    /// Several timed tests in one invocation: (tests, test_len_ns, pad_ns).
    tests: Option<(u64, u64, u64)>,
    /// The test length the score stands for, if longer than test_len.
    scored_len_ns: Option<u64>,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload netperf", spec);
    let test = p.word(&TEST)?;
    let size = p.uint(&SIZE, &())?;
    let count = p.uint(&TESTS, &())?;
    let test_len = p.duration_ns(TEST_LEN.name, 0, 1_000_000_000)?;
    let pad = p.duration_ns(PAD.name, PAD_TIME_NS, 1_000_000_000)?;
    let scored = p.duration_ns(SCORED_LEN.name, 0, 1_000_000_000)?;
    p.finish()?;
    if scored > 0 && scored < test_len.max(1) {
        return Err(crate::error::Error::invalid("workload netperf", SCORED_LEN.name, &super::duration_text(scored), "at least test_len (which it needs)"));
    }
    let scored_len_ns = (scored > test_len).then_some(scored);
    let tests = if test_len > 0 {
        if !test.ends_with("_stream") {
            return Err(crate::error::Error::invalid("workload netperf", TEST_LEN.name, &super::duration_text(test_len), "only for tcp_stream and udp_stream"));
        }
        Some((count, test_len, if test == "udp_stream" { pad } else { 0 }))
    } else if count > 1 {
        return Err(crate::error::Error::invalid("workload netperf", TESTS.name, &count.to_string(), "more than one test needs test_len"));
    } else {
        None
    };
    if test == "udp_stream" && size > UDP_MAX_PAYLOAD {
        let got = size.to_string();
        return Err(crate::error::Error::invalid("workload netperf", SIZE.name, &got, "at most 65507 bytes for udp_stream (a UDP datagram's payload)"));
    }
    let size = match (size, test) {
        (0, "tcp_stream" | "udp_stream") => 16_384,
        (0, _) => 1,
        (n, _) => n,
    };
    Ok(Box::new(Netperf { test, size, tests, scored_len_ns }))
}

/// The package power of the invocation the tests stand for, as their score
/// does (MMTests' turbostat window is the whole `netperf -i 3,3`: 3 × (10 +
/// 4) s for UDP_STREAM, 3 × 10 s for TCP_STREAM). Each test's first half
/// counts once and its second half stands for the rest of the scored
/// length, (scored_len − test_len/2) / (test_len/2) times, as its messages
/// do in `metrics`. A UDP pad stands for netserver's PAD_TIME (4 s, netperf
/// 2.4.5 netlib.h), extended the same way: its first half once (the
/// receive buffer's drain, the CPUs' way down into idle), its second half
/// for the rest of PAD_TIME. The phases start at the nominal times the
/// tests' timers keep (`repeat_until` ends at absolute times); the end
/// message and control round trip after each (microseconds) fall in the
/// next phase. Nothing after the last test counts.
fn power_phases(count: u64, test_len: u64, pad: u64, scored_len: u64) -> Vec<PowerPhase> {
    let extend = |len: u64, real: u64| {
        let half = len / 2;
        (half, (real.saturating_sub(half)) as f64 / (len - half) as f64)
    };
    let (test_half, test_late) = extend(test_len, scored_len);
    let mut phases = Vec::new();
    for i in 0..count {
        let start = i * (test_len + pad);
        phases.push(PowerPhase { start_ns: start, weight: 1.0 });
        phases.push(PowerPhase { start_ns: start + test_half, weight: test_late });
        if pad > 0 {
            let (pad_half, pad_late) = extend(pad, PAD_TIME_NS);
            phases.push(PowerPhase { start_ns: start + test_len, weight: 1.0 });
            phases.push(PowerPhase { start_ns: start + test_len + pad_half, weight: pad_late });
        }
    }
    phases.push(PowerPhase { start_ns: count * (test_len + pad), weight: 0.0 });
    phases
}

impl Workload for Netperf {
    fn setup(&self, _platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let size = self.size as f64;
        let measured = |ns: f64, per_byte: f64| Dist::lognormal(super::measured_cycles(ns + per_byte * size), 0.1);
        let ((send_ns, send_per_byte), recv) = match self.test {
            "udp_rr" | "udp_stream" => ((UDP_SEND_NS, UDP_SEND_NS_PER_BYTE), measured(UDP_RECV_NS, UDP_RECV_NS_PER_BYTE)),
            "tcp_rr" => ((TCP_RR_SEND_NS, TCP_SEND_NS_PER_BYTE), measured(TCP_RR_RECV_NS, TCP_RECV_NS_PER_BYTE)),
            _ => ((TCP_SEND_NS, TCP_SEND_NS_PER_BYTE), measured(TCP_RECV_NS, TCP_RECV_NS_PER_BYTE)),
        };
        // A send wakes its reader from inside itself (the loopback receive
        // runs in its context) and finishes beside it: TCP_RR's share of its
        // path (split.c), UDP's fixed tail (split_udp.c). TCP_STREAM's
        // wakeups are its segments' (workload::TcpStream): its sends run whole.
        let (send, tail) = match self.test {
            "tcp_rr" => {
                let a = super::TCP_SEND_AFTER_WAKE;
                (measured(send_ns * (1.0 - a), send_per_byte * (1.0 - a)), Some(measured(send_ns * a, send_per_byte * a)))
            }
            "udp_rr" | "udp_stream" => (measured(send_ns - UDP_SEND_AFTER_WAKE_NS, send_per_byte), Some(measured(UDP_SEND_AFTER_WAKE_NS, 0.0))),
            _ => (measured(send_ns, send_per_byte), None),
        };
        let send_tail = |b: &mut ProgramBuilder| {
            if let Some(t) = tail {
                b.run(t, 0.0);
            }
        };
        let bytes = self.size;
        let buffer = STREAM_BUFFER_BYTES.max(bytes);
        let to_server = if self.test == "tcp_stream" {
            ChannelSpec::tcp_stream("to-netserver", buffer, TcpStream { segment_bytes: LOOPBACK_MSS, recv_bytes: bytes })
        } else {
            ChannelSpec::pipe("to-netserver", buffer)
        };
        let mut setup = Setup {
            channels: vec![
                to_server,
                ChannelSpec::pipe("to-netperf", STREAM_BUFFER_BYTES.max(bytes)),
            ],
            series: vec!["transaction".into()],
            counters: vec!["messages".into()],
            ..Setup::default()
        };
        if let Some((count, test_len, pad)) = self.tests {
            // netperf -i N,N: one netperf process and one netserver child
            // (netserver.c forks once per control connection and its
            // process_requests() serves every test) run N timed tests, each
            // on a new data socket (nettest_bsd.c send_*_stream's confidence
            // loop calls create_data_socket per iteration). The sender
            // sends until its timer (times_up) and then waits for
            // netserver's results on the control connection. TCP_STREAM's
            // netserver answers once shutdown() reaches it; UDP_STREAM's
            // keeps receiving until its own timer, test_len + PAD_TIME
            // (recv_udp_stream), so both tasks sleep `pad` between tests.
            // The end of the data (FIN, or netserver's timer) is a one-byte
            // message; the control round trip is left out.
            let udp = self.test == "udp_stream";
            if udp {
                setup.channels[TO_SERVER as usize].capacity_bytes = UDP_RCVBUF_BYTES;
                setup.counters.push("received".into());
            }
            let charge = if udp { udp_truesize(bytes) } else { bytes };
            let data = |bytes: u64| if udp { Op::SendDatagram { chan: TO_SERVER, bytes } } else { Op::Send { chan: TO_SERVER, bytes } };
            // The messages of each test's second half are also counted
            // apart: the rate a scored_len extends the test at.
            setup.counters.push("late".into());
            let late = setup.counters.len() as u16 - 1;
            let mut client = ProgramBuilder::new();
            let mut server = ProgramBuilder::new();
            for i in 0..count {
                let end = i * (test_len + pad) + test_len;
                client.repeat_until(end - test_len / 2, |b| {
                    b.run(send, 0.0).op(data(charge)).count(MESSAGES, 1);
                    send_tail(b);
                });
                client.repeat_until(end, |b| {
                    b.run(send, 0.0).op(data(charge)).count(MESSAGES, 1).count(late, 1);
                    send_tail(b);
                });
                if pad > 0 {
                    client.sleep(Dist::Fixed(pad as f64));
                }
                if udp {
                    client.op(data(1));
                } else {
                    client.op(Op::Shutdown { chan: TO_SERVER });
                }
                client.op(Op::Recv { chan: TO_CLIENT });
                server.repeat_until(end + pad, |b| {
                    b.op(Op::Recv { chan: TO_SERVER }).run(recv, 0.0);
                    if udp {
                        b.count(RECEIVED, 1);
                    }
                });
                server.op(Op::Send { chan: TO_CLIENT, bytes: 1 });
            }
            setup.tasks = vec![TaskSpec::new("netperf", client.build()), TaskSpec::new("netserver", server.build())];
            if let Some(len) = self.scored_len_ns {
                setup.power_phases = power_phases(count, test_len, pad, len);
            }
        } else if self.test == "udp_stream" {
            let charge = udp_truesize(bytes);
            setup.channels[TO_SERVER as usize].capacity_bytes = UDP_RCVBUF_BYTES;
            setup.counters.push("received".into());
            let client = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.run(send, 0.0).op(Op::SendDatagram { chan: TO_SERVER, bytes: charge }).count(MESSAGES, 1);
                    send_tail(b);
                })
                .build();
            let server = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Recv { chan: TO_SERVER }).run(recv, 0.0).count(RECEIVED, 1);
                })
                .build();
            setup.tasks = vec![TaskSpec::new("netperf", client), TaskSpec::new("netserver", server)];
        } else if self.test == "tcp_stream" {
            // The rate is what was sent: a recv() may take less or more
            // than one message (workload::TcpStream).
            let client = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.run(send, 0.0).op(Op::Send { chan: TO_SERVER, bytes }).count(MESSAGES, 1);
                })
                .build();
            let server = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Recv { chan: TO_SERVER }).run(recv, 0.0);
                })
                .build();
            setup.tasks = vec![TaskSpec::new("netperf", client), TaskSpec::new("netserver", server)];
        } else {
            // TCP_RR and UDP_RR: each end's send wakes the other and
            // finishes beside it (`send_tail`).
            let client = ProgramBuilder::new()
                .repeat(None, |b| {
                    b.op(Op::Mark).run(send, 0.0).op(Op::Send { chan: TO_SERVER, bytes });
                    send_tail(b);
                    b.op(Op::Recv { chan: TO_CLIENT })
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
                    send_tail(b);
                })
                .build();
            setup.tasks = vec![TaskSpec::new("netperf", client), TaskSpec::new("netserver", server)];
        }
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let sent = r.counters[MESSAGES as usize] as f64;
        let mut messages = sent;
        // Several tests: netperf reports the mean of their rates, each over
        // its own length, so the time between tests does not count. With a
        // scored_len each test goes on at its second half's rate.
        let mut scored_ns = self.tests.map(|(count, test_len, _)| (count * test_len) as f64);
        if let (Some((count, test_len, _)), Some(len)) = (self.tests, self.scored_len_ns) {
            if let Some(&late) = r.counters.last() {
                let late_rate = late as f64 / (count * (test_len - test_len / 2)) as f64;
                messages += late_rate * (count * (len - test_len)) as f64;
                scored_ns = Some((count * len) as f64);
            }
        }
        let mbps = |n: f64| match scored_ns {
            Some(ns) => n * self.size as f64 * 8.0 * 1e9 / ns / 1e6,
            None => r.per_second(n * self.size as f64 * 8.0) / 1e6,
        };
        if self.test == "tcp_stream" {
            return vec![Metric::new("mbps", mbps(messages), "Mb/s", Better::Higher)];
        }
        if self.test == "udp_stream" {
            let received = r.counters[RECEIVED as usize] as f64;
            // Sent and not received: dropped, or still queued at the end.
            let lost = if sent > 0.0 { 100.0 * (sent - received).max(0.0) / sent } else { 0.0 };
            let received = if sent > 0.0 { received * messages / sent } else { received };
            return vec![
                Metric::new("mbps", mbps(messages), "Mb/s", Better::Higher),
                Metric::new("recv_mbps", mbps(received), "Mb/s", Better::Higher),
                Metric::new("lost_pct", lost, "%", Better::Lower),
            ];
        }
        let mut m = vec![Metric::new("trans_per_s", r.per_second(messages), "trans/s", Better::Higher)];
        latency_metrics("transaction", &r.series[TRANSACTION as usize], &mut m);
        m
    }

    fn primary(&self) -> &'static str {
        if self.test.ends_with("_stream") {
            "mbps"
        } else {
            "trans_per_s"
        }
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![TEST.show(self.test), SIZE.show(self.size)];
        if let Some((count, test_len, pad)) = self.tests {
            v.push(TESTS.show(count));
            v.push((TEST_LEN.name.to_string(), super::duration_text(test_len)));
            if pad > 0 {
                v.push((PAD.name.to_string(), super::duration_text(pad)));
            }
            if let Some(len) = self.scored_len_ns {
                v.push((SCORED_LEN.name.to_string(), super::duration_text(len)));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::calibration::{after, line, Raw};

    #[test]
    fn udp_costs_are_the_line_through_the_kcycles_sittings_runs() {
        let sizes = after(Raw::Udp, "size", "size");
        let fit = |key: &str| line(&sizes.iter().copied().zip(after(Raw::Udp, "size", key)).collect::<Vec<_>>());
        assert_eq!(sizes.len(), 18);
        let (send, send_b) = fit("send ");
        let (recv, recv_b) = fit("recv ");
        assert!((UDP_SEND_NS - send).abs() < 1.0 && (UDP_SEND_NS_PER_BYTE - send_b).abs() < 1e-4, "{send} {send_b}");
        assert!((UDP_RECV_NS - recv).abs() < 1.0 && (UDP_RECV_NS_PER_BYTE - recv_b).abs() < 1e-4, "{recv} {recv_b}");
    }

    /// TCP_STREAM's receiver is woken per segment, not per message
    /// (workload::TcpStream). On the Broadwell-EP at full speed the
    /// receiver (663 ns a recv) keeps up with the sender (872 ns a send) and
    /// drains: 64-byte messages go in segments of a few messages (each
    /// short segment is ACKed once read, which lets Nagle's held tail go);
    /// 1 KiB messages make segments of 556 bytes or more, which the
    /// receiver takes as its MSS once two in a row are as long, so it stops
    /// ACKing them on drain and Nagle holds the tail until a full 64 KiB
    /// segment: tens of messages a segment, and hundreds a wakeup. Every
    /// wakeup of the run (either task's) is counted.
    #[test]
    fn tcp_stream_wakes_the_receiver_per_segment() {
        let run = |size: u64| {
            let w = format!("netperf:test=tcp_stream,size={size}");
            let e = crate::api::testing::ran("broadwell-2s-e5-2698v4", "5.2", &w, "performance", 50_000_000);
            let messages = e.record.counters[MESSAGES as usize] as f64;
            let segments = e.chans[TO_SERVER as usize].tcp.as_ref().map_or(0, |t| t.segments) as f64;
            (messages, segments, e.record.wakeup_latency.count as f64)
        };
        let (m64, s64, w64) = run(64);
        assert!(m64 > 10_000.0, "{m64} messages of 64 B");
        assert!(s64 < m64 / 1.5, "{s64} segments for {m64} messages of 64 B");
        assert!(w64 <= s64 + 10.0, "{w64} wakeups for {s64} segments of 64-B messages");
        let (m1k, s1k, w1k) = run(1024);
        assert!(s1k < m1k / 10.0, "{s1k} segments for {m1k} messages of 1 KiB");
        assert!(w1k < m1k / 50.0, "{w1k} wakeups for {m1k} messages of 1 KiB");
        let (m16k, s16k, w16k) = run(16_384);
        assert!(s16k >= m16k * 16_384.0 / LOOPBACK_MSS as f64 && s16k <= m16k, "{s16k} segments for {m16k} messages of 16 KiB");
        assert!(w16k <= s16k + 10.0, "{w16k} wakeups, {s16k} segments");
    }

    /// UDP_SEND_AFTER_WAKE_NS is the median `post` of split_udp.out's
    /// fifteen rows, taken from the sender's CPU clock (CPU 1, the first
    /// reading) to the calibration clock; every row within 0.5-0.75 µs.
    #[test]
    fn udp_send_tail_is_split_udps_median() {
        let out = include_str!("../../../../tools/calibrate/loopback/split_udp.out");
        let first = crate::workload::calibration::first_number;
        let mut post: Vec<f64> = out.lines().filter_map(|l| l.split_once(" post ").map(|(_, r)| first(r))).collect();
        assert_eq!(post.len(), 15);
        assert!(post.iter().all(|&p| (500.0..750.0).contains(&p)), "{post:?}");
        post.sort_by(f64::total_cmp);
        let ghz = out.lines().find(|l| l.starts_with("cpu 1 clock_ghz")).map(|l| first(&l["cpu 1 clock_ghz".len()..])).unwrap();
        let ns = post[7] * ghz * 1e6 / f64::from(crate::workload::CALIBRATION_CORE_KHZ);
        assert!((UDP_SEND_AFTER_WAKE_NS - ns).abs() < 0.5, "{ns} ns at the calibration clock");
        assert!(UDP_SEND_AFTER_WAKE_NS < UDP_SEND_NS);
    }

    const TCP_RUNS: [&str; 2] = [
        include_str!("../../../../tools/calibrate/tcp/run1.out"),
        include_str!("../../../../tools/calibrate/tcp/run2.out"),
    ];

    /// The numbers after `key` on both runs' lines starting with `start`.
    fn tcp_after(start: &str, key: &str) -> Vec<f64> {
        TCP_RUNS
            .iter()
            .flat_map(|r| r.lines())
            .filter(|l| l.starts_with(start))
            .filter_map(|l| l.split_once(key).map(|(_, rest)| crate::workload::calibration::first_number(rest)))
            .collect()
    }

    #[test]
    fn tcp_costs_are_the_line_and_means_through_both_runs() {
        // Nagle-on rows only ("stream-nodelay" rows are the comparison).
        let sizes = tcp_after("stream ", "stream ");
        assert_eq!(sizes.len(), 18);
        let fit = |key: &str| line(&sizes.iter().copied().zip(tcp_after("stream ", key)).collect::<Vec<_>>());
        let (send, send_b) = fit(" send ");
        let (recv, recv_b) = fit(" recv ");
        assert!((TCP_SEND_NS - send).abs() < 1.0 && (TCP_SEND_NS_PER_BYTE - send_b).abs() < 1e-4, "{send} {send_b}");
        assert!((TCP_RECV_NS - recv).abs() < 1.0 && (TCP_RECV_NS_PER_BYTE - recv_b).abs() < 1e-4, "{recv} {recv_b}");
        // rr lines: "client send A recv B, server recv C send D; ..."
        let rr: Vec<Vec<f64>> = TCP_RUNS
            .iter()
            .flat_map(|r| r.lines())
            .filter(|l| l.starts_with("rr 1 B:"))
            .filter_map(|l| l.split_once("client send"))
            .map(|(_, rest)| rest.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter(|w| !w.is_empty()).take(4).map(|w| w.parse().unwrap()).collect())
            .collect();
        assert_eq!(rr.len(), 2);
        let rr_send = rr.iter().map(|v| v[0] + v[3]).sum::<f64>() / 4.0;
        let rr_recv = rr.iter().map(|v| v[1] + v[2]).sum::<f64>() / 4.0;
        assert!((TCP_RR_SEND_NS - rr_send).abs() < 1.0, "{rr_send}");
        assert!((TCP_RR_RECV_NS - rr_recv).abs() < 1.0, "{rr_recv}");
    }
}

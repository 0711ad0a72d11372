//! `hackbench`: groups of senders and receivers passing small messages
//! through pipes or sockets, timed until the last message is read.
//!
//! The real benchmark (rt-tests `hackbench.c`; the same program is `perf
//! bench sched messaging`) starts `groups` groups of 20 receivers and 20
//! senders (`num_fds = 20`). Every receiver owns one pipe or one AF_UNIX
//! SOCK_STREAM socketpair; every sender of the group writes `loops` rounds
//! of one 100-byte message (`datasize = 100`) to each of the group's 20
//! receivers in turn, and every receiver reads 20 × `loops` messages of 100
//! bytes. With `-T` the tasks are threads of one process, otherwise
//! processes. The figure printed is the time from the start signal to the
//! reaping of the last task. MMTests varies the number of groups
//! (config-scheduler-hackbench: 1 .. 2×NUM_LOGICAL_CPUS, 100 loops; the
//! older scheduler-unbound set used by the hwp-dynamic-boost-2018 mail:
//! 1 .. 4×NUMCPUS, 10000 loops) over all four combinations of
//! process/thread × pipes/sockets; the teo-weighted-history-2020 RFC varies
//! loops from 100 to 1,000,000.
//!
//! Defaults are hackbench.c's own (rt-tests; `perf bench sched messaging`
//! has the same): `num_groups = 10`, `loops = 100`, `num_fds = 20`,
//! sockets, processes. 100 loops is also MMTests' current config.
//!
//! Model: each receiver's pipe or socket is a channel; a sender loops
//! `loops` times over its group's 20 channels doing one write (a compute
//! segment of the syscall's cost, then the send), a receiver does 20 ×
//! `loops` reads (receive, then the syscall's cost). All tasks start at
//! time 0 (the start signal); the workload finishes when every task has
//! exited, and the elapsed simulated time is the benchmark's time.
//!
//! Kept: the group structure, message counts and sizes, blocking on a full
//! pipe (64 KiB) or socket buffer, a wakeup per message to a waiting
//! receiver. The per-syscall CPU times are measured, uncontended (see the
//! constants). Left out: the pipe mutex and wait-queue spinlock contention
//! that MMTests' config notes dominate the pipe case, cache-line bouncing
//! between waker and wakee, fork and exit costs, and the start-up
//! handshake.
//!
//! Process vs thread: the same model, except that a read in process mode
//! costs `PROCESS_SWITCH_NS` more, standing for the address-space switch
//! (CR3 write, TLB refill) a switch between two processes pays and two
//! threads of one process do not (assumed: charged on every read as a
//! proxy, since the model does not know which reads follow a switch).

use super::{
    Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo,
};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const GROUPS: ParamSpec = ParamSpec {
    name: "groups",
    unit: "",
    default: ParamDefault::Uint(10),
    range: Range::Uint { min: 1, max: 10_000 },
    help: "number of groups (hackbench -g; its default 10)",
};

pub const LOOPS: ParamSpec = ParamSpec {
    name: "loops",
    unit: "",
    default: ParamDefault::Uint(100),
    range: Range::Uint { min: 1, max: 1_000_000_000 },
    help: "messages each sender writes to each receiver (hackbench -l; its default 100)",
};

pub const FDS: ParamSpec = ParamSpec {
    name: "fds",
    unit: "",
    default: ParamDefault::Uint(20),
    range: Range::Uint { min: 1, max: 1_000 },
    help: "senders and receivers per group (hackbench -f; its default 20)",
};

pub const IPC: ParamSpec = ParamSpec {
    name: "ipc",
    unit: "",
    default: ParamDefault::Word("socket"),
    range: Range::Choice(&["pipe", "socket"]),
    help: "pipe or socket (hackbench uses sockets unless -p)",
};

pub const MODE: ParamSpec = ParamSpec {
    name: "mode",
    unit: "",
    default: ParamDefault::Word("process"),
    range: Range::Choice(&["process", "thread"]),
    help: "process or thread (hackbench uses processes unless -T)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "hackbench",
    description: "groups of 20 senders x 20 receivers passing 100-byte messages over pipes or sockets; time to finish",
    metric: "time_s (seconds until every task has exited, lower is better)",
    params: &[GROUPS, LOOPS, FDS, IPC, MODE],
    // The defaults take 0.01-0.8 s on the built-in platforms (powersave on
    // sd835 is the slowest).
    ends: super::Ends::ByItself { default_duration_ns: 10_000_000_000 },
    build,
};

/// Bytes per message (hackbench.c `datasize = 100`).
const DATASIZE: u64 = 100;

/// CPU time of one 100-byte write and of one 100-byte read, on a pipe and
/// on an AF_UNIX stream socket. Measured with `tools/syscall_cost.c`
/// (fastest of 2000 batches of 200 messages written then read by one
/// thread, so no blocking, wakeup or context switch is included) in the
/// kcycles sitting (tools/calibrate/kcycles/run{1,2}/syscall_cost.out, the
/// faster run; an AMD EPYC family-25 KVM guest, Linux 6.18, a quiet host):
/// pipe 325 / 325 ns, socket 1081 / 1108 ns (the loaded sitting three hours
/// before: 326 / 329, 1084 / 1102; an earlier, unclocked run: 296 / 297 and
/// 874 / 915); cycles at `workload::CALIBRATION_CORE_KHZ`, that sitting's
/// core clock. A null syscall (getppid) took 185 ns there, about twice bare
/// metal's, so these are upper bounds for a bare-metal core. Not fitted to
/// any hackbench result.
/// Left out: contention on the pipe mutex and wait-queue lock between a
/// group's 20 writers (MMTests' notes call it dominant for pipes) and the
/// cost of the wakeups themselves, which the engine does not charge.
const PIPE_WRITE_NS: f64 = 325.0;
const PIPE_READ_NS: f64 = 325.0;
const SOCKET_WRITE_NS: f64 = 1081.0;
const SOCKET_READ_NS: f64 = 1108.0;

/// Extra CPU time per read in process mode (assumed, at the platform's base
/// clock; see the header).
const PROCESS_SWITCH_NS: f64 = 100.0;

/// A pipe buffers 16 pages = 64 KiB (pipe(7), since Linux 2.6.11; small
/// writes merge into the last page).
const PIPE_CAPACITY: u64 = 65_536;

/// An AF_UNIX stream socket blocks the writer when the skbs in flight
/// exceed sk_sndbuf (net.core.wmem_default = 212992). Each 100-byte write is
/// one skb charged with its truesize, assumed ~768 bytes, so ~277 messages
/// fit: 27,700 bytes of payload (assumed).
const SOCKET_CAPACITY: u64 = 27_700;

const MESSAGES: u16 = 0;

pub struct Hackbench {
    groups: u64,
    loops: u64,
    fds: u64,
    ipc: &'static str,
    mode: &'static str,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload hackbench", spec);
    let w = Hackbench {
        groups: p.uint(&GROUPS, &())?,
        loops: p.uint(&LOOPS, &())?,
        fds: p.uint(&FDS, &())?,
        ipc: p.word(&IPC)?,
        mode: p.word(&MODE)?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Hackbench {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        let socket = self.ipc == "socket";
        let (write_ns, read_ns) = if socket {
            (SOCKET_WRITE_NS, SOCKET_READ_NS)
        } else {
            (PIPE_WRITE_NS, PIPE_READ_NS)
        };
        let extra = if self.mode == "process" { PROCESS_SWITCH_NS } else { 0.0 };
        let write = super::measured_cycles(write_ns);
        let read = super::measured_cycles(read_ns) + super::cycles_for_ns_at(extra, f_ref);
        let capacity = if socket { SOCKET_CAPACITY } else { PIPE_CAPACITY };
        let fds = self.fds as u32;

        let mut setup = Setup {
            counters: vec!["messages".into()],
            ..Setup::default()
        };
        for g in 0..self.groups as u32 {
            let base = g * fds;
            for r in 0..fds {
                setup.channels.push(ChannelSpec::pipe(format!("g{g}r{r}"), capacity));
            }
            // hackbench.c forks each group's receivers first, then its senders.
            for r in 0..fds {
                let program = ProgramBuilder::new()
                    .repeat(Some(self.loops * self.fds), |b| {
                        b.op(Op::Recv { chan: base + r })
                            .run(Dist::Fixed(read), 0.0)
                            .count(MESSAGES, 1);
                    })
                    .build();
                setup.tasks.push(TaskSpec::new("hackbench", program));
            }
            let sender = ProgramBuilder::new()
                .repeat(Some(self.loops), |b| {
                    for r in 0..fds {
                        b.run(Dist::Fixed(write), 0.0).op(Op::Send {
                            chan: base + r,
                            bytes: DATASIZE,
                        });
                    }
                })
                .build();
            let mut t = TaskSpec::new("hackbench", sender);
            t.instances = fds;
            setup.tasks.push(t);
        }
        Ok(setup)
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        vec![
            Metric::new("time_s", r.elapsed_ns as f64 / 1e9, "s", Better::Lower),
            Metric::new(
                "messages",
                r.counters.get(MESSAGES as usize).copied().unwrap_or(0) as f64,
                "count",
                Better::Higher,
            ),
        ]
    }

    fn ends_by_itself(&self) -> bool {
        true
    }

    fn progress(&self, r: &Record) -> Option<super::Progress> {
        Some(super::Progress {
            done: r.counters.get(MESSAGES as usize).copied().unwrap_or(0),
            total: self.groups * self.fds * self.fds * self.loops,
            what: "messages received",
        })
    }

    fn primary(&self) -> &'static str {
        "time_s"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            GROUPS.show(self.groups),
            LOOPS.show(self.loops),
            FDS.show(self.fds),
            IPC.show(self.ipc),
            MODE.show(self.mode),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Spec;
    use crate::workload::calibration::{fastest, Raw};

    #[test]
    fn syscall_costs_are_the_kcycles_sittings_fastest_batches() {
        for (c, line, key) in [
            (PIPE_WRITE_NS, "pipe:", "write"),
            (PIPE_READ_NS, "pipe:", "read"),
            (SOCKET_WRITE_NS, "socket:", "write"),
            (SOCKET_READ_NS, "socket:", "read"),
        ] {
            let best = fastest(Raw::SyscallCost, line, key);
            assert!((c - best).abs() < 0.5, "{line} {key}: {c} against {best}");
        }
    }

    #[test]
    fn rejects_unknown_ipc() {
        let spec = Spec::parse("hackbench:ipc=fifo", "test").unwrap();
        let e = super::build(&spec).err().unwrap().to_string();
        assert!(e.contains("pipe") && e.contains("socket"), "{e}");
    }
}

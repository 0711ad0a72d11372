//! `kernbench`: `make -j N` of a Linux kernel; elapsed seconds.
//!
//! MMTests' kernbench (config-workload-kernbench) builds the `vmlinux`
//! target of a defconfig kernel with `make -j N`, N from a quarter of an
//! LLC's CPUs up to every logical CPU, and reports the elapsed time of each
//! build (MMTests prints user, system and elapsed; elapsed is the figure
//! compared). GNU make runs at most N jobs at once through its jobserver: a
//! pipe holding N tokens; a job takes a token before it starts and gives it
//! back when it exits. Nearly every job is one compiler run (`gcc` forks
//! `cc1` and `as`) turning one `.c` file into a `.o`. Before the first
//! compile make reads the Makefiles and runs the serial preparation
//! (syncconfig, scripts/basic, generated headers); after the last, the
//! serial link of vmlinux (vmlinux.o, modpost, the kallsyms link passes).
//!
//! Model: a `make` task fills a jobserver channel with N tokens, runs the
//! serial preparation, then for each of `files` compile jobs takes a token,
//! spends a little CPU deciding what to run, and forks the compiler driver
//! `gcc`; when every job has exited it runs the serial link. Each job is a
//! process tree at process granularity, as `gcc -c` runs it: the driver
//! starts, forks `cc1` (the compiler proper) and waits for it, then forks
//! `as` (the assembler) and waits for it, counts the job and returns its
//! token as it exits. Every one of the three is a new task: the kernel's
//! fork balancing places it (`machine/fork.rs`: an idle CPU when there is
//! one, the one with the least blocked utilisation), and it arrives with
//! the kernel's initial utilisation (half the capacity its CPU has free,
//! `sched/fork.rs`), so a job starts on a CPU that has been idle, at
//! whatever frequency that CPU's policy left it. The metric is the
//! simulated time from the start until make exits.
//!
//! Process costs are measured (`workload/process.rs`): the parent's fork,
//! and each child's exec, dynamic linking, first faults and exit. Other
//! constants (CPU time at the reference frequency) are assumed: the number
//! of compile jobs is the order of the objects of an x86-64 defconfig
//! vmlinux; the mean compile time puts the whole build at ~20 CPU-minutes,
//! the order of a defconfig build on a current core; the spread (cv 1)
//! stands for the few large files (drivers, generated tables) that take ten
//! times the median; `as` takes a small share of a job. The memory-bound
//! share of compiling (`CC_MEM`) is assumed. The sources are read from a
//! warm page cache (MMTests' build tree is reused across iterations) and
//! the objects are written into it; writeback is not on the critical path,
//! so the model has no device IO. Left out: make's dependency order within
//! a directory (jobs are independent here), the `-pipe` data flow between
//! cc1 and as (they run one after the other, as without `-pipe`), exec
//! balancing (v6.8's `sched_exec` keeps a task whose CPU has nothing else
//! queued, see `machine/fork.rs`), modules (the target is vmlinux only),
//! the rest of Kbuild's per-object recipe (`rule_cc_o_c` in
//! scripts/Makefile.build, v5.2: the `sh -c` around gcc, then fixdep, rm
//! and objtool, each a new task), and the processes of the serial phases
//! (the preparation's scripts, link-vmlinux.sh's ld, nm and kallsyms
//! steps), which run here as the make task's own CPU time; their lengths
//! are not measured (docs/validation.md §6, session 16).

use super::{
    Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo,
};
use super::process;
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const JOBS: ParamSpec = ParamSpec {
    name: "jobs",
    unit: "",
    default: ParamDefault::Uint(0),
    range: Range::Uint { min: 0, max: 100_000 },
    help: "parallel jobs (make -j); 0 = one per logical CPU (MMTests' maximum)",
};

/// Compile jobs of a defconfig vmlinux (assumed, see the header).
const DEF_FILES: u64 = 2_700;

pub const FILES: ParamSpec = ParamSpec {
    name: "files",
    unit: "",
    default: ParamDefault::Uint(DEF_FILES),
    range: Range::Uint { min: 1, max: 1_000_000 },
    help: "compile jobs of the build (assumed: an x86-64 defconfig vmlinux)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "kernbench",
    description: "make -j N of a defconfig vmlinux: a jobserver-limited pool of compile jobs between serial parts; elapsed time",
    metric: "elapsed_s (seconds until make exits, lower is better)",
    params: &[JOBS, FILES],
    // The defaults take 33-1150 s on the built-in platforms (powersave on
    // sd835 is the slowest).
    ends: super::Ends::ByItself { default_duration_ns: 1_800_000_000_000 },
    build,
};

/// Mean CPU time of one compile by cc1, and its coefficient of variation
/// (assumed).
const CC_NS: f64 = 430e6;
const CC_CV: f64 = 1.0;
/// Memory-bound share of a compile (assumed).
const CC_MEM: f64 = 0.2;
/// Mean CPU time of `as` on one file (assumed: a few percent of a compile).
const AS_NS: f64 = 20e6;
/// The gcc driver's own work: option parsing, spec strings, finding cc1
/// and as (assumed).
const DRIVER_NS: f64 = 1e6;
/// make's own CPU per job: dependency checks (assumed), and the fork.
const MAKE_PER_JOB_NS: f64 = 0.4e6 + process::FORK_PARENT_NS;
/// Serial preparation before the first compile (assumed).
const PREPARE_NS: f64 = 3e9;
/// Serial link of vmlinux after the last compile (assumed).
const LINK_NS: f64 = 15e9;

/// Fork templates: the compiler driver, the compiler proper, the assembler.
const GCC: u32 = 0;
const CC1: u32 = 1;
const AS: u32 = 2;

/// The jobserver pipe; one byte per token.
const JOBSERVER: u32 = 0;
const TOKEN_BYTES: u64 = 1;

const COMPILES: u16 = 0;

pub struct Kernbench {
    jobs: u64,
    files: u64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload kernbench", spec);
    let w = Kernbench {
        jobs: p.uint(&JOBS, &())?,
        files: p.uint(&FILES, &())?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Kernbench {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        let cyc = |ns: f64| super::cycles_for_ns_at(ns, f_ref);
        let jobs = if self.jobs == 0 { platform.nr_cpus() as u64 } else { self.jobs };

        // Each child pays its exec, start-up and exit (measured).
        let start = Dist::Fixed(cyc(process::child_start_ns(process::FORK_EXEC_NS)));
        let gcc = ProgramBuilder::new()
            .run(start, 0.0)
            .run(Dist::Fixed(cyc(DRIVER_NS)), 0.0)
            .run(Dist::Fixed(cyc(process::FORK_PARENT_NS)), 0.0)
            .op(Op::Fork { template: CC1, count: 1 })
            .op(Op::Join)
            .run(Dist::Fixed(cyc(process::FORK_PARENT_NS)), 0.0)
            .op(Op::Fork { template: AS, count: 1 })
            .op(Op::Join)
            .count(COMPILES, 1)
            .op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES })
            .build();
        let cc1 = ProgramBuilder::new()
            .run(start, 0.0)
            .run(Dist::lognormal(cyc(CC_NS), CC_CV), CC_MEM)
            .build();
        let assembler = ProgramBuilder::new()
            .run(start, 0.0)
            .run(Dist::lognormal(cyc(AS_NS), CC_CV), CC_MEM)
            .build();
        let make = ProgramBuilder::new()
            .repeat(Some(jobs), |b| {
                b.op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES });
            })
            .run(Dist::Fixed(cyc(PREPARE_NS)), 0.0)
            .repeat(Some(self.files), |b| {
                b.op(Op::Recv { chan: JOBSERVER })
                    .run(Dist::Fixed(cyc(MAKE_PER_JOB_NS)), 0.0)
                    .op(Op::Fork { template: GCC, count: 1 });
            })
            .op(Op::Join)
            .run(Dist::Fixed(cyc(LINK_NS)), 0.0)
            .build();
        Ok(Setup {
            tasks: vec![TaskSpec::new("make", make)],
            templates: vec![TaskSpec::new("gcc", gcc), TaskSpec::new("cc1", cc1), TaskSpec::new("as", assembler)],
            channels: vec![ChannelSpec::pipe("jobserver", jobs.max(1) * TOKEN_BYTES)],
            counters: vec!["compiles".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        vec![
            Metric::new("elapsed_s", r.elapsed_ns as f64 / 1e9, "s", Better::Lower),
            Metric::new("compiles", r.counters[COMPILES as usize] as f64, "count", Better::Higher),
        ]
    }

    fn ends_by_itself(&self) -> bool {
        true
    }

    fn progress(&self, r: &Record) -> Option<super::Progress> {
        Some(super::Progress { done: r.counters[COMPILES as usize], total: self.files, what: "compile jobs" })
    }

    fn primary(&self) -> &'static str {
        "elapsed_s"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            JOBS.show(self.jobs),
            FILES.show(self.files),
        ]
    }
}

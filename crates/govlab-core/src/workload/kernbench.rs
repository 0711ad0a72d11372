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
//! spends a little CPU deciding what to run, and forks a `cc` task; when
//! every job has exited it runs the serial link. A `cc` task pays process
//! start-up (fork and exec of the driver, cc1 and as), compiles (a
//! log-normal CPU burst, partly memory-bound), and returns its token as it
//! exits. The metric is the simulated time from the start until make exits.
//!
//! Constants (CPU time at the reference frequency) are assumed: the number
//! of compile jobs is the order of the objects of an x86-64 defconfig
//! vmlinux; the mean compile time puts the whole build at ~20 CPU-minutes,
//! the order of a defconfig build on a current core; the spread (cv 1)
//! stands for the few large files (drivers, generated tables) that take ten
//! times the median. The memory-bound share of compiling (`CC_MEM`) is
//! assumed. The sources are read from a warm page cache (MMTests' build
//! tree is reused across iterations) and the objects are written into it;
//! writeback is not on the critical path, so the model has no device IO.
//! Left out: make's dependency order within a directory (jobs are
//! independent here), the `-pipe` data flow between cc1 and as, and
//! modules (the target is vmlinux only).

use super::{
    Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo,
};
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

/// Mean CPU time of one compile, and its coefficient of variation (assumed).
const CC_NS: f64 = 450e6;
const CC_CV: f64 = 1.0;
/// Memory-bound share of a compile (assumed).
const CC_MEM: f64 = 0.2;
/// fork + exec of gcc, cc1 and as, and their exits (assumed).
const EXEC_NS: f64 = 3e6;
/// make's own CPU per job: dependency checks and the fork (assumed).
const MAKE_PER_JOB_NS: f64 = 0.5e6;
/// Serial preparation before the first compile (assumed).
const PREPARE_NS: f64 = 3e9;
/// Serial link of vmlinux after the last compile (assumed).
const LINK_NS: f64 = 15e9;

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

        let cc = ProgramBuilder::new()
            .run(Dist::Fixed(cyc(EXEC_NS)), 0.0)
            .run(Dist::LogNormal { mean: cyc(CC_NS), cv: CC_CV }, CC_MEM)
            .count(COMPILES, 1)
            .op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES })
            .build();
        let make = ProgramBuilder::new()
            .repeat(Some(jobs), |b| {
                b.op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES });
            })
            .run(Dist::Fixed(cyc(PREPARE_NS)), 0.0)
            .repeat(Some(self.files), |b| {
                b.op(Op::Recv { chan: JOBSERVER })
                    .run(Dist::Fixed(cyc(MAKE_PER_JOB_NS)), 0.0)
                    .op(Op::Fork { template: 0, count: 1 });
            })
            .op(Op::Join)
            .run(Dist::Fixed(cyc(LINK_NS)), 0.0)
            .build();
        Ok(Setup {
            tasks: vec![TaskSpec::new("make", make)],
            templates: vec![TaskSpec::new("cc1", cc)],
            channels: vec![ChannelSpec {
                name: "jobserver".into(),
                capacity_bytes: jobs.max(1) * TOKEN_BYTES,
            }],
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

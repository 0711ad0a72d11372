//! `kernbench`: `make -j N` of a Linux kernel; elapsed seconds.
//!
//! MMTests' kernbench (config-workload-kernbench, shellpack kernbench-bench)
//! builds the `vmlinux` target of a defconfig kernel with `make -j N`, N
//! from a quarter of an LLC's CPUs up to every logical CPU, after a warm-up
//! build and a `make clean`, and reports the elapsed time of each build.
//! GNU make runs at most N jobs at once through its jobserver: a pipe
//! holding N tokens; a job takes a token before it starts and gives it
//! back when it exits. Nearly every job is one kernel object's recipe.
//! Before the first, make runs the serial preparation (the Makefiles'
//! compiler probes, syncconfig's checks, generated headers, asm-offsets,
//! rebuilding objtool and modpost, whose objects `make clean` deleted);
//! after the last, the serial link (scripts/link-vmlinux.sh).
//!
//! Every one of those steps is a chain of short-lived processes, and each
//! process is a new task: the kernel's fork balancing places it
//! (`machine/fork.rs`: an idle CPU when there is one) and it arrives with
//! the kernel's initial utilisation (half the capacity its CPU has free,
//! `sched/fork.rs`), at whatever frequency that CPU's policy left it.
//!
//! Model: a `make` task fills a jobserver channel with N tokens, runs the
//! preparation, then for each of `files` objects takes a token, spends a
//! little CPU deciding what to run, and forks the object's recipe; when
//! every recipe has exited it runs the link. The recipe is Kbuild's
//! (scripts/Makefile.build `rule_cc_o_c` and scripts/Kbuild.include
//! `cmd_and_fixdep`, v5.2): a `/bin/sh -c` that runs the gcc driver (which
//! runs cc1, then as), then fixdep, `rm` and `mv`, and a second shell for
//! objtool (x86-64's stack validation); each process waits for the one it
//! forked. The serial phases are the measured chains themselves: each
//! process of the measured preparation and link, in the order it started,
//! is a task make forks and waits for. The metric is the simulated time
//! from the start until make exits.
//!
//! Every CPU time is measured (see the constants): one build's every
//! process, its whole CPU time from fork to exit, on Linux 6.1's Kbuild
//! with Debian's gcc 12 (tools/calibrate/kbuild/README.md), not v5.2 with
//! openSUSE 15.1's gcc 7. That build was x86_64 tinyconfig with kallsyms,
//! 455 objects: the per-object figures and the preparation are taken as
//! they are; the link steps whose work is the whole kernel are scaled up
//! to a defconfig vmlinux (assumed: in proportion to the objects linked).
//! Assumed: the number of objects of a defconfig vmlinux (`files`), the
//! memory-bound share of compiling (`CC_MEM`), make's own CPU per job.
//! The sources are read from a warm page cache and the objects written
//! into it; writeback is not on the critical path, so the model has no
//! device IO. Left out: make's recursion (a sub-make per directory, 324 of
//! them in the measured build, about 6 ms of CPU each: here one make runs
//! every job, and its own CPU per job is the assumed figure), make's
//! dependency order within and between directories (jobs are independent
//! here, and the built-in.a archive of each directory is not run), the
//! `-pipe` data flow between cc1 and as (they run one after the other, as
//! without `-pipe`), the nesting of the serial phases' processes (a shell
//! waiting for its child here exits before it: the same chain of new
//! tasks, each one's CPU time unchanged), the parallelism make finds
//! within the preparation (its chain runs one process at a time; objtool's
//! own build, 4.9 of its 8.8 s, compiles in parallel under -jN), exec
//! balancing (v6.8's `sched_exec` keeps a task whose CPU has nothing else
//! queued, see `machine/fork.rs`), modules (the target is vmlinux only),
//! and 6.1's per-object steps that v5.2 did not have (check-local-export:
//! a shell script, `nm` and `awk` per object).

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

/// Compile jobs of a defconfig vmlinux: assumed for the evaluation's Linux 4.4 tree; a Linux 6.1 x86_64
/// defconfig `make vmlinux` runs 2,722 kernel-object recipes (measured: tools/calibrate/kdefconfig/).
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
    description: "make -j N of a defconfig vmlinux: jobserver-limited Kbuild recipes (sh, gcc, cc1, as, fixdep, objtool) between the measured process chains of the serial preparation and link; elapsed time",
    metric: "elapsed_s (seconds until make exits, lower is better)",
    params: &[JOBS, FILES],
    // The defaults took 26-890 s on the built-in platforms (powersave on
    // sd835 the slowest) before session 25's measured cycles made a compile
    // 1.5-2.7x dearer; 3600 s holds the slowest (tests/it: ends).
    ends: super::Ends::ByItself { default_duration_ns: 3_600_000_000_000 },
    build,
};

/// The per-process CPU times below are measured (tools/calibrate/kbuild/'s
/// method, re-run in the kcycles sitting: every process of a Linux 6.1
/// x86_64 tinyconfig `make -j2 vmlinux` after `make clean`, Debian's gcc 12,
/// the project's 2-vCPU development VM on a quiet host, load average 1-2;
/// tools/calibrate/kcycles/build.proclog.xz, kbuild-summary.txt; the same
/// build at load 8-10 that morning, kcycles/sitting-0803-loaded, took 4 %
/// more CPU in cc1 and the compile phase): each
/// figure is a process's whole CPU time from its fork to its exit (exec,
/// dynamic linking and exit included), cycles at
/// `workload::CALIBRATION_CORE_KHZ` (that sitting's core clock). Session
/// 20's unclocked build of the same tree (tools/calibrate/kbuild/) gave
/// 0.66x these for cc1 (322 ms).
///
/// cc1 per kernel object: mean and coefficient of variation (455
/// objects: median 448 ms, p90 841 ms, the largest 3.7 s).
const CC1_NS: f64 = 486.80e6;
const CC1_CV: f64 = 0.73;
/// Memory-bound share of cc1's and as's work (assumed); every other
/// process is taken as CPU-bound (assumed).
const CC_MEM: f64 = 0.2;
/// `as` on one object: mean and coefficient of variation (median 3.8 ms).
const AS_NS: f64 = 4.45e6;
const AS_CV: f64 = 0.52;
/// The gcc driver (option parsing, spec strings, its two forks).
const DRIVER_NS: f64 = 3.25e6;
/// The recipe's `/bin/sh -c` (dash: start-up, its forks).
const RECIPE_SH_NS: f64 = 1.86e6;
/// `scripts/basic/fixdep`, `rm -f` of the .d file, and `mv -f` of the .cmd
/// file (6.1's recipe has no `mv`: the mean of the preparation's 30).
const FIXDEP_NS: f64 = 5.94e6;
const RM_NS: f64 = 1.43e6;
const MV_NS: f64 = 1.61e6;
/// `objtool` on one object, and the shell of its recipe line (the mean of
/// the compile phase's shells that are not an object's recipe).
const OBJTOOL_NS: f64 = 7.90e6;
const OBJTOOL_SH_NS: f64 = 1.14e6;
/// make's own CPU per job besides its fork: dependency checks (assumed).
const MAKE_PER_JOB_NS: f64 = 0.4e6;

/// The serial preparation and link as measured, one process a line:
/// `phase comm own_ns grows` in the order they started (written by
/// tools/calibrate/kbuild/summarize.py --chains on the kcycles sitting's
/// build).
const SERIAL: &str = include_str!("../../../../tools/calibrate/kcycles/serial_chains.txt");
/// Kernel objects of the measured tinyconfig build: a link step whose work
/// grows with the kernel (`grows` = 1: ld, nm and kallsyms over vmlinux,
/// the kallsyms table's assembly, System.map) is scaled by
/// `DEF_FILES / MEASURED_OBJECTS` to a defconfig vmlinux (assumed: linear
/// in the objects linked); every other process keeps its measured time.
const MEASURED_OBJECTS: f64 = 455.0;

/// Which serial phase a measured process belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Prepare,
    Link,
}

/// One process of a serial phase.
#[derive(Debug, Clone, PartialEq)]
pub struct SerialStep {
    pub phase: Phase,
    pub comm: &'static str,
    /// Measured CPU time (at `workload::CALIBRATION_CORE_KHZ`), scaled to a
    /// defconfig vmlinux.
    pub ns: f64,
}

/// The measured serial chains (see [`SERIAL`]).
pub fn serial_steps() -> Vec<SerialStep> {
    let grow = DEF_FILES as f64 / MEASURED_OBJECTS;
    SERIAL
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let phase = match f.next()? {
                "prepare" => Phase::Prepare,
                "link" => Phase::Link,
                _ => return None,
            };
            let comm = f.next()?;
            let ns: f64 = f.next()?.parse().ok()?;
            let grows = f.next()? == "1";
            Some(SerialStep { phase, comm, ns: if grows { ns * grow } else { ns } })
        })
        .collect()
}

/// Fork templates of an object's recipe: the recipe's shell, the compiler
/// driver, the compiler proper, the assembler, fixdep, rm, mv, objtool's
/// shell and objtool; the serial phases' processes follow them.
const RECIPE: u32 = 0;
const GCC: u32 = 1;
const CC1: u32 = 2;
const AS: u32 = 3;
const FIXDEP: u32 = 4;
const RM: u32 = 5;
const MV: u32 = 6;
const OBJTOOL_SH: u32 = 7;
const OBJTOOL: u32 = 8;
const FIRST_SERIAL: u32 = 9;

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
        // Measured CPU at the measuring core's clock; make's own per job is assumed, at the base clock.
        let cyc = super::measured_cycles;
        let fixed = |ns: f64| Dist::Fixed(cyc(ns));
        let jobs = if self.jobs == 0 { platform.nr_cpus() as u64 } else { self.jobs };
        let fork = Dist::Fixed(cyc(process::FORK_PARENT_NS));
        // A process that forks `children` one at a time and waits for
        // each: its start-up is what its measured time leaves after the
        // parent's share of each fork (`process::FORK_PARENT_NS`).
        let parent = |own_ns: f64, children: &[u32]| {
            let mut b = ProgramBuilder::new();
            b.run(fixed((own_ns - children.len() as f64 * process::FORK_PARENT_NS).max(0.0)), 0.0);
            for &c in children {
                b.run(fork, 0.0).op(Op::Fork { template: c, count: 1 }).op(Op::Join);
            }
            b
        };
        let leaf = |work: Dist, mem: f64| ProgramBuilder::new().run(work, mem).build();

        // Kbuild's recipe for a .o (scripts/Makefile.build, v5.2): each
        // non-empty line of rule_cc_o_c is a shell of its own: first
        // cmd_and_fixdep (scripts/Kbuild.include): `gcc -c` (the driver
        // runs cc1, then as), fixdep writing the .cmd file, `rm -f` of the
        // .d file, `mv -f` of the .cmd; then cmd_objtool (x86-64 with
        // CONFIG_STACK_VALIDATION): objtool on the new object. Here the
        // first shell forks the second as its last child, where make
        // forks it after the first exits: the same new task, placed the
        // same way, one fork later.
        let recipe = parent(RECIPE_SH_NS, &[GCC, FIXDEP, RM, MV, OBJTOOL_SH])
            .count(COMPILES, 1)
            .op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES })
            .build();
        let gcc = parent(DRIVER_NS, &[CC1, AS]).build();
        let objtool_sh = parent(OBJTOOL_SH_NS, &[OBJTOOL]).build();

        let steps = serial_steps();
        let mut make = ProgramBuilder::new();
        make.repeat(Some(jobs), |b| {
            b.op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES });
        });
        // The serial phases: each measured process a new task that make
        // waits for, one after another.
        let serial = |b: &mut ProgramBuilder, phase: Phase| {
            for (i, s) in steps.iter().enumerate() {
                if s.phase == phase {
                    b.op(Op::Fork { template: FIRST_SERIAL + i as u32, count: 1 }).op(Op::Join);
                }
            }
        };
        serial(&mut make, Phase::Prepare);
        make.repeat(Some(self.files), |b| {
            b.op(Op::Recv { chan: JOBSERVER })
                .run(Dist::Fixed(super::cycles_for_ns_at(MAKE_PER_JOB_NS, f_ref) + cyc(process::FORK_PARENT_NS)), 0.0)
                .op(Op::Fork { template: RECIPE, count: 1 });
        })
        .op(Op::Join);
        serial(&mut make, Phase::Link);

        let mut templates = vec![
            TaskSpec::new("sh", recipe),
            TaskSpec::new("gcc", gcc),
            TaskSpec::new("cc1", leaf(Dist::lognormal(cyc(CC1_NS), CC1_CV), CC_MEM)),
            TaskSpec::new("as", leaf(Dist::lognormal(cyc(AS_NS), AS_CV), CC_MEM)),
            TaskSpec::new("fixdep", leaf(fixed(FIXDEP_NS), 0.0)),
            TaskSpec::new("rm", leaf(fixed(RM_NS), 0.0)),
            TaskSpec::new("mv", leaf(fixed(MV_NS), 0.0)),
            TaskSpec::new("sh", objtool_sh),
            TaskSpec::new("objtool", leaf(fixed(OBJTOOL_NS), 0.0)),
        ];
        debug_assert_eq!(templates.len(), FIRST_SERIAL as usize);
        templates.extend(steps.iter().map(|s| TaskSpec::new(s.comm, leaf(fixed(s.ns), 0.0))));
        Ok(Setup {
            tasks: vec![TaskSpec::new("make", make.build())],
            templates,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::calibration::{kbuild_comm, kbuild_role};

    #[test]
    fn per_process_times_are_the_kcycles_sittings_kernel_build() {
        for (c, cv, role) in [
            (CC1_NS, CC1_CV, "cc1"),
            (AS_NS, AS_CV, "as"),
            (DRIVER_NS, -1.0, "gcc"),
            (RECIPE_SH_NS, -1.0, "sh"),
            (FIXDEP_NS, -1.0, "fixdep"),
            (RM_NS, -1.0, "rm"),
            (OBJTOOL_NS, -1.0, "objtool"),
        ] {
            let (mean_ms, measured_cv) = kbuild_role(role);
            assert!((c / 1e6 - mean_ms).abs() < 0.006 * mean_ms.max(1.0), "{role}: {c} against {mean_ms} ms");
            assert!(cv < 0.0 || (cv - measured_cv).abs() < 0.006, "{role}: cv {cv} against {measured_cv}");
        }
        let (_, _, mv) = kbuild_comm("prepare", "mv");
        assert!((MV_NS / 1e6 - mv).abs() < 0.006, "mv {mv}");
        let (n, sum, _) = kbuild_comm("compile", "sh");
        let recipes = kbuild_role("sh").0 * MEASURED_OBJECTS;
        let other = (sum - recipes) / (n - MEASURED_OBJECTS);
        assert!((OBJTOOL_SH_NS / 1e6 - other).abs() < 0.02, "objtool's shell {other}");
    }
}

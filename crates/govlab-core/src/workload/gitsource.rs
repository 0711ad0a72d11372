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
//! The script's shell runs its commands one after another: per command it
//! spends its own CPU (parsing, expansion, the fork) and forks a child,
//! which runs its own CPU and exits, and waits for it (`Join`).
//!
//! Constants: measured on git v2.15.1's own suite, the tree MMTests built
//! (tools/calibrate/gitsuite: `make test` at the top of the built tree under
//! ../kbuild/proclog.so, every process's own CPU; bash as the scripts'
//! shell, SUSE's /bin/sh). A command is a process instance below a script,
//! nested ones included (a subshell, the git it runs, the git that git
//! runs), so the chain has the measured number of processes and CPU; the
//! commands' CPU is the measured distribution itself (bin means,
//! `Dist::Table`), long tail included. Not modelled: the overlap of the few
//! pipelines and background processes, and the suite's waits (the
//! measured suite kept one CPU 87.8 % busy; its README).

use super::process;
use super::{Better, Dist, Metric, Op, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo};
use crate::error::Result;
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;
use std::sync::OnceLock;

/// Test scripts in git v2.15.1's `t/`: t/Makefile's `T`, `t[0-9][0-9][0-9][0-9]-*.sh`,
/// 790, the measured suite's count (checked by a test).
const DEF_SCRIPTS: u64 = 790;

pub const SCRIPTS: ParamSpec = ParamSpec {
    name: "scripts",
    unit: "",
    default: ParamDefault::Uint(DEF_SCRIPTS),
    range: Range::Uint { min: 1, max: 100_000 },
    help: "test scripts run one after another (git v2.15.1's t/Makefile runs 790), each the measured mean of 485 commands",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "gitsource",
    description: "git's test suite (make test): a single chain of short-lived shell, git and helper processes; elapsed time",
    metric: "elapsed_s (seconds until make test exits, lower is better)",
    params: &[SCRIPTS],
    // The default suite is ~384 000 processes: 20-40 simulated minutes on
    // the x86 servers (docs/workloads.md), over an hour where a non-invariant
    // schedutil holds the clock low.
    ends: super::Ends::ByItself { default_duration_ns: 10_800_000_000_000 },
    build,
};

/// git v2.15.1's `make test` as measured, written by
/// tools/calibrate/gitsuite/summarize.py: `key value` lines, then the
/// commands' own CPU as `q NS` bin means; ns at the calibration clock.
const SUITE: &str = include_str!("../../../../tools/calibrate/gitsuite/commands.txt");

/// The measured suite (see [`SUITE`]).
#[derive(Debug)]
pub struct Suite {
    pub scripts: u64,
    pub commands_per_script: f64,
    /// The script's bash per command: its own CPU over its commands.
    pub shell_per_command_ns: f64,
    /// make's processes outside the scripts (the top make's checks,
    /// t/Makefile's make, test-lint, aggregate-results) per script.
    pub make_per_script_ns: f64,
    pub command_ns: Vec<f64>,
}

pub fn suite() -> &'static Suite {
    static SUITE_ONCE: OnceLock<Suite> = OnceLock::new();
    SUITE_ONCE.get_or_init(|| {
        let mut s = Suite { scripts: 0, commands_per_script: 0.0, shell_per_command_ns: 0.0, make_per_script_ns: 0.0, command_ns: Vec::new() };
        // The file is the repository's own, checked whole by
        // the_suite_is_the_measured_one_of_git_v2_15_1.
        for line in SUITE.lines().filter(|l| !l.starts_with('#')) {
            let Some((key, Ok(v))) = line.split_once(' ').map(|(k, v)| (k, v.trim().parse::<f64>())) else { continue };
            match key {
                "scripts" => s.scripts = v as u64,
                "commands_per_script" => s.commands_per_script = v,
                "shell_per_command_ns" => s.shell_per_command_ns = v,
                "make_per_script_ns" => s.make_per_script_ns = v,
                "q" => s.command_ns.push(v),
                _ => {}
            }
        }
        s
    })
}

const SH: u32 = 0;
const COMMAND: u32 = 1;

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
    fn setup(&self, _platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let m = suite();
        let mcyc = super::measured_cycles;
        let command = |b: &mut ProgramBuilder| {
            b.run(Dist::Fixed(mcyc(m.shell_per_command_ns)), 0.0).op(Op::Fork { template: COMMAND, count: 1 }).op(Op::Join);
        };
        let sh = ProgramBuilder::new()
            .count(PROCESSES, 1)
            .repeat(Some(m.commands_per_script.round() as u64), command)
            .count(SCRIPTS_DONE, 1)
            .build();
        // The command's own CPU (fork or exec to its last instruction), then
        // its exit, which the log's clock does not see: the other half of
        // fork_exit (process::FORK_PARENT_NS's split).
        let child = ProgramBuilder::new()
            .run(Dist::Table { bins: &m.command_ns, scale: mcyc(1.0) }, 0.0)
            .run(Dist::Fixed(mcyc(process::FORK_EXIT_NS - process::FORK_PARENT_NS)), 0.0)
            .count(PROCESSES, 1)
            .build();
        let make = ProgramBuilder::new()
            .repeat(Some(self.scripts), |b| {
                b.run(Dist::Fixed(mcyc(m.make_per_script_ns)), 0.0).op(Op::Fork { template: SH, count: 1 }).op(Op::Join);
            })
            .build();
        Ok(Setup {
            tasks: vec![TaskSpec::new("make", make)],
            templates: vec![TaskSpec::new("sh", sh), TaskSpec::new("cmd", child)],
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

    #[test]
    fn the_suite_is_the_measured_one_of_git_v2_15_1() {
        let m = suite();
        assert_eq!(m.scripts, DEF_SCRIPTS, "the measured make test ran another number of scripts");
        assert_eq!(m.command_ns.len(), 1000);
        assert!(m.command_ns.windows(2).all(|w| w[0] <= w[1]), "bins ascending");
        assert!(m.commands_per_script > 1.0 && m.shell_per_command_ns > 0.0 && m.make_per_script_ns > 0.0);
    }

    #[test]
    fn a_table_draws_its_bins_and_keeps_their_mean() {
        let m = suite();
        let d = Dist::Table { bins: &m.command_ns, scale: 2.0 };
        let mean = m.command_ns.iter().sum::<f64>() / 1000.0;
        assert!((d.mean() - 2.0 * mean).abs() < 1e-6 * mean);
        let mut rng = Rng::new(1, crate::sim::rng::Stream::Workload);
        let n = 200_000;
        let drawn = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64;
        assert!((drawn / d.mean() - 1.0).abs() < 0.05, "{drawn} against {}", d.mean());
        assert!((0..1000).all(|_| m.command_ns.contains(&(d.sample(&mut rng) / 2.0))));
    }
}

//! The CPU cost of a process's life (fork, exec, exit), shared by the
//! models that run many short processes (`kernbench`, `gitsource`).
//!
//! Measured on this project's development machine with
//! `tools/calibrate/process_spawn/spawn.c`, in the kcycles sitting beside
//! the core clock (tools/calibrate/kcycles/run{1,2}/spawn.out, 2026-11-30
//! 11:05 UTC, a 2-vCPU AMD EPYC family-25 KVM guest, Linux 6.18, a quiet
//! host: load average 1-2; the same script at load 7-10 three hours before,
//! kcycles/sitting-0803-loaded, gave the same rounds within 1.2 %):
//! the fastest of thousands of rounds, as the parent sees it (fork until
//! waitpid returns), the faster of the two runs. Each is cycles at
//! `workload::CALIBRATION_CORE_KHZ` (3.244 GHz, that sitting's core clock)
//! on every platform. The figures session 12 measured on a family-26 host
//! (98, 532, 604, 958 µs, `tools/calibrate/process_spawn/spawn.out`, clock
//! not recorded) were 0.74-0.78x these. A virtual machine pays more for fork
//! than bare metal (every page-table update of the copied address space
//! goes through nested paging), so these are upper figures for a
//! bare-metal server.

/// fork() with an immediate `_exit(0)` and the parent's waitpid(): the
/// parent's copy of a small address space plus the child's exit and reap
/// (`fork_exit`, 130 504 ns).
pub const FORK_EXIT_NS: f64 = 130_500.0;

/// fork and execve of a small dynamically linked program (`/bin/true`:
/// ld.so, libc mapped, the first faults of the new address space) until
/// the parent's waitpid returns (`fork_exec`, 671 162 ns). Less
/// [`FORK_EXIT_NS`] this is the child's exec and start-up.
pub const FORK_EXEC_NS: f64 = 671_200.0;

/// fork and exec of `/bin/sh -c :` (dash) (`spawn_sh`, 772 391 ns).
pub const SPAWN_SH_NS: f64 = 772_400.0;

/// fork and exec of `git --version` (`spawn_git`, 1 275 721 ns): the git
/// driver's start-up (its own dynamic linking, config lookup).
pub const SPAWN_GIT_NS: f64 = 1_275_700.0;

/// The parent's share of a fork: copying its address space (`copy_process`,
/// `dup_mm`), taken as half of [`FORK_EXIT_NS`] (assumed split: the other
/// half is the child's exit and the reap).
pub const FORK_PARENT_NS: f64 = FORK_EXIT_NS / 2.0;

/// The child's exec, start-up and exit for a program whose spawn costs
/// `spawn_ns` in all: what is left after the parent's fork.
pub const fn child_start_ns(spawn_ns: f64) -> f64 {
    spawn_ns - FORK_PARENT_NS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::calibration::{fastest, Raw};

    #[test]
    fn spawn_costs_are_the_kcycles_sittings_fastest_rounds() {
        for (c, name) in [(FORK_EXIT_NS, "fork_exit"), (FORK_EXEC_NS, "fork_exec"), (SPAWN_SH_NS, "spawn_sh"), (SPAWN_GIT_NS, "spawn_git")] {
            let best = fastest(Raw::Spawn, name, "best");
            assert!((c - best).abs() < 500.0, "{name}: {c} against {best}");
        }
    }
}

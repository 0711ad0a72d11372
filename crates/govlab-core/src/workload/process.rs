//! The CPU cost of a process's life (fork, exec, exit), shared by the
//! models that run many short processes (`kernbench`, `gitsource`).
//!
//! Measured on this project's development machine with
//! `tools/calibrate/process_spawn/spawn.c` (raw output `spawn.out`, machine
//! `machine.txt`: a 2-vCPU AMD EPYC KVM guest, Linux 6.18): the fastest of
//! thousands of rounds, as the parent sees it (fork until waitpid returns).
//! The guest's clock is not known, so each figure is taken as time at the
//! platform's reference frequency, as the models' other CPU costs are. A
//! virtual machine pays more for fork than bare metal (every page-table
//! update of the copied address space goes through nested paging), so
//! these are upper figures for a bare-metal server.

/// fork() with an immediate `_exit(0)` and the parent's waitpid(): the
/// parent's copy of a small address space plus the child's exit and reap
/// (`fork_exit`, 97 856 ns).
pub const FORK_EXIT_NS: f64 = 98_000.0;

/// fork and execve of a small dynamically linked program (`/bin/true`:
/// ld.so, libc mapped, the first faults of the new address space) until
/// the parent's waitpid returns (`fork_exec`, 532 083 ns). Less
/// [`FORK_EXIT_NS`] this is the child's exec and start-up.
pub const FORK_EXEC_NS: f64 = 532_000.0;

/// fork and exec of `/bin/sh -c :` (dash) (`spawn_sh`, 604 211 ns).
pub const SPAWN_SH_NS: f64 = 604_000.0;

/// fork and exec of `git --version` (`spawn_git`, 957 609 ns): the git
/// driver's start-up (its own dynamic linking, config lookup).
pub const SPAWN_GIT_NS: f64 = 958_000.0;

/// The parent's share of a fork: copying its address space (`copy_process`,
/// `dup_mm`), taken as half of [`FORK_EXIT_NS`] (assumed split: the other
/// half is the child's exit and the reap).
pub const FORK_PARENT_NS: f64 = FORK_EXIT_NS / 2.0;

/// The child's exec, start-up and exit for a program whose spawn costs
/// `spawn_ns` in all: what is left after the parent's fork.
pub const fn child_start_ns(spawn_ns: f64) -> f64 {
    spawn_ns - FORK_PARENT_NS
}

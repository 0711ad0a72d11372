//! Leaving the idle loop restarts a stopped tick before the idle task's
//! pick (v5.2 kernel/sched/idle.c do_idle(): tick_nohz_idle_exit() before
//! schedule_idle()), so a task that pick pulls in newidle balance runs with
//! the tick, and with it PELT's tick updates and schedutil's evaluations.

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

/// pgbench read/write at 80 clients with two pgbench threads (MMTests'
/// `-j NUMNODES`) on the Broadwell-EP under v5.2 schedutil, 300 ms, seed 1.
/// Each thread always has a connection to answer, so it never sleeps; one
/// is pulled onto CPU 6 at 25 ms by that CPU's newidle balance after an
/// idle exit with nothing queued. Without the tick its CPU kept the
/// lowest P-state (1.2 GHz) to the end, 92 % busy: no CPU that runs a task
/// most of the time may sit at the bottom clock while schedutil sees it.
#[test]
fn a_task_pulled_after_an_idle_exit_runs_with_the_tick() {
    let r = RunConfig {
        platform: Spec::parse("broadwell-2s-e5-2698v4:intel_pstate=passive", "platform").unwrap(),
        kernel: Spec::parse("5.2", "kernel").unwrap(),
        workload: Spec::parse("pgbench:mode=rw,fs=xfs,threads=2,clients=80", "workload").unwrap(),
        cpufreq: Spec::parse("schedutil", "cpufreq").unwrap(),
        cpuidle: Spec::parse("menu", "cpuidle").unwrap(),
        duration_ns: 300_000_000,
        seed: 1,
        interval_ns: None,
    }
    .run(None, None)
    .unwrap();
    for c in &r.cpus {
        let busy = c.busy_ns as f64 / (c.busy_ns + c.idle_ns) as f64;
        let khz = c.c0_avg_khz.unwrap_or(0.0);
        assert!(
            !(busy > 0.8 && khz < 1_250_000.0),
            "CPU {} ran a task {:.0} % of the run at {:.0} MHz: its tick never came back",
            c.cpu,
            busy * 100.0,
            khz / 1000.0
        );
    }
}

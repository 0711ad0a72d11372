//! The kernel's C0 time per wakeup, switch and idle cycle (machine/kpath.rs)
//! on an i7-2600K at a fixed clock, each path on a workload where it is the
//! only one that occurs (the engine's own idle counters count the idle
//! cycles): MPERF's C0 time grows by the path's cycles at the clock, twice
//! as much at half the clock, and the work retired stays the workload's.

use std::path::PathBuf;

use super::Engine;
use crate::kernel::{BuildCtx, KernelConfig};
use crate::machine::kpath::{IDLE_CYCLES, IDLE_EXIT_CYCLES, SWITCH_CYCLES, WAKE_CYCLES};
use crate::machine::RunParts;
use crate::params::Spec;
use crate::platform::load_named;
use crate::{cpufreq, cpuidle, workload};

const MS: u64 = 1_000_000;

/// A client on CPU 0 and a server on CPU 1 waking each other: per round
/// two wakeups, each onto an idle CPU; no switch between tasks.
const PING_PONG: &str = r#"
[[channel]]
name = "ping"
[[channel]]
name = "pong"
[[task]]
comm = "client"
cpus = [0]
loop = "forever"
ops = [ { send = "ping", bytes = 8 }, { recv = "pong" }, { count = "rounds" }, { run = "10us" } ]
[[task]]
comm = "server"
cpus = [1]
loop = "forever"
ops = [ { recv = "ping" }, { run = "10us" }, { send = "pong", bytes = 8 } ]
"#;

/// One task on CPU 0 sleeping 1 ms after 10 µs of work: idle cycles only
/// (a timer wakes it, from an interrupt).
const SLEEPER: &str = r#"
[[task]]
comm = "sleeper"
cpus = [0]
loop = "forever"
ops = [ { run = "10us" }, { count = "rounds" }, { sleep = "1ms" } ]
"#;

/// Two tasks on CPU 0 yielding to each other after 10 µs of work: a switch
/// between tasks per yield, no wakeup, no idle.
const YIELDERS: &str = r#"
[[task]]
comm = "yielder"
instances = 2
cpus = [0]
loop = "forever"
ops = [ { run = "10us" }, { count = "rounds" }, { yield = true } ]
"#;

/// `text` written as a workload file `name` in this process's temporary
/// directory (machine/wake_latency_tests.rs uses it too).
pub(super) fn workload_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("govlab-kpath-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    let tmp = dir.join(format!("{name}-{:?}.toml", std::thread::current().id()));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    path
}

/// `text` for 200 ms at `khz` under kernel 5.2 without housekeeping, the
/// kernel's paths charged or (`kpath` false) not.
fn run(name: &str, text: &str, kpath: bool, khz: u32) -> Engine {
    let kernel = if kpath { "5.2:housekeeping=off,kpath=on" } else { "5.2:housekeeping=off" };
    let plat = load_named(&Spec::parse("i7-2600k", "platform").unwrap()).unwrap();
    let kernel = KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
    let spec = Spec::parse(&format!("userspace:scaling_setspeed={khz}"), "cpufreq").unwrap();
    let ctx = cpufreq::resolve_ctx(&spec, BuildCtx::new(plat, kernel)).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(workload_file(name, text).to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build_for(&spec, &ctx).unwrap(),
        cpuidle: cpuidle::build(&Spec::new("menu"), &ctx.platform).unwrap(),
        duration_ns: 200 * MS,
        seed: 1,
        ctx,
    };
    let mut e = crate::machine::build(parts, None).unwrap();
    e.run(None).unwrap();
    assert_eq!(e.domains[e.plat.cpus[0].freq_domain].cur_khz, khz, "the clock is fixed");
    e
}

/// Rounds, C0 ns of CPUs 0 and 1 beyond their idle states' hardware exits
/// (which count in C0 too, and whose states menu may choose differently
/// once the kernel's paths shift the idle periods it measures), idle exits
/// of CPUs 0 and 1, workload cycles retired.
fn counts(e: &Engine) -> (f64, f64, f64, f64) {
    let rounds = e.record.counters[0] as f64;
    assert!(rounds > 150.0, "{rounds} rounds");
    let khz = e.domains[e.plat.cpus[0].freq_domain].cur_khz;
    let c0: u64 = (0..2).map(|c| e.aperf[c].read(e.now, khz).1).sum();
    let hw_exit: u64 = (0..2)
        .map(|c| {
            let states = &e.plat.cpu_type_of(c).idle_states;
            e.idle_counters[c].states.iter().zip(states).map(|(n, s)| n.usage * s.exit_latency_ns).sum::<u64>()
        })
        .sum();
    let exits: u64 = (0..2).map(|c| e.idle_counters[c].states.iter().map(|s| s.usage).sum::<u64>()).sum();
    (rounds, c0 as f64 - hw_exit as f64, exits as f64, e.record.cycles_retired)
}

/// `cycles` on CPU 0 at `khz`, ns.
fn ns(e: &Engine, cycles: f64, khz: u32) -> f64 {
    cycles * 1e6 / f64::from(khz) / e.speed_ix[0].work_per_cycle
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got / want - 1.0).abs() < 0.01, "{what}: {got:.1}, the kernel's paths give {want:.1}");
}

#[test]
fn each_idle_cycle_adds_its_kernel_code_to_c0_at_the_clock() {
    for khz in [3_400_000, 1_700_000] {
        let on = run("sleeper", SLEEPER, true, khz);
        let off = run("sleeper", SLEEPER, false, khz);
        let ((r_on, c0_on, exits, work_on), (r_off, c0_off, exits_off, work_off)) = (counts(&on), counts(&off));
        // The paths shift the idle periods menu measures, so the two runs
        // may differ by a round and a few ticks: the run without them gives
        // the C0 of a round, the run with them its own idle exits.
        assert!((exits / exits_off - 1.0).abs() < 0.05, "like idle periods: {exits} vs {exits_off}");
        close(c0_on - c0_off / r_off * r_on, exits * ns(&on, IDLE_CYCLES, khz), &format!("C0 growth at {khz} kHz, ns"));
        close(work_on / r_on, work_off / r_off, "workload cycles per round");
    }
}

#[test]
fn each_wakeup_adds_try_to_wake_up_to_the_wakers_c0() {
    let khz = 3_400_000;
    let on = run("ping-pong", PING_PONG, true, khz);
    let off = run("ping-pong", PING_PONG, false, khz);
    let ((r_on, c0_on, exits_on, work_on), (r_off, c0_off, exits_off, work_off)) = (counts(&on), counts(&off));
    // Per round two wakeups, and every idle exit its idle cycle.
    let want = 2.0 * ns(&on, WAKE_CYCLES, khz) + exits_on / r_on * ns(&on, IDLE_CYCLES, khz);
    close(c0_on / r_on - c0_off / r_off, want, "C0 growth per round, ns");
    assert!((exits_on / r_on - exits_off / r_off).abs() < 0.02, "idle exits per round {} vs {}", exits_on / r_on, exits_off / r_off);
    close(work_on / r_on, work_off / r_off, "workload cycles per round");
}

#[test]
fn each_switch_between_tasks_costs_the_incoming_task_its_cycles() {
    for khz in [3_400_000, 1_700_000] {
        let on = run("yielders", YIELDERS, true, khz);
        let off = run("yielders", YIELDERS, false, khz);
        let ((r_on, _, _, work_on), (r_off, _, _, work_off)) = (counts(&on), counts(&off));
        // CPU 0 is busy throughout: a round's wall time grows by a switch.
        let round_on = 200e6 / r_on;
        let round_off = 200e6 / r_off;
        close(round_on - round_off, ns(&on, SWITCH_CYCLES, khz), &format!("round at {khz} kHz, ns"));
        close(work_on / r_on, work_off / r_off, "workload cycles per round");
    }
}

#[test]
fn only_the_idle_cycles_exit_half_delays_the_woken_task() {
    // Each round of the ping-pong wakes one idle CPU per direction. The
    // entry half runs while the other end works its 10 µs, and the waker's
    // try_to_wake_up() before its own block: only the exit halves (and the
    // states' hardware exits) lie on the round's path.
    let khz = 3_400_000;
    let on = run("ping-pong", PING_PONG, true, khz);
    let off = run("ping-pong", PING_PONG, false, khz);
    let path = |e: &Engine| {
        let hw_exit: u64 = (0..2)
            .map(|c| {
                let states = &e.plat.cpu_type_of(c).idle_states;
                e.idle_counters[c].states.iter().zip(states).map(|(n, s)| n.usage * s.exit_latency_ns).sum::<u64>()
            })
            .sum();
        (e.now as f64 - hw_exit as f64) / counts(e).0
    };
    close(path(&on) - path(&off), 2.0 * ns(&on, IDLE_EXIT_CYCLES, khz), "round beyond the hardware exits, ns");
}

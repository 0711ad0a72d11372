//! A state's measured wake with its package awake (`wake_latency_ns`,
//! machine/idle.rs `wake_latency_ns`) against the driver's worst case: on
//! the Skylake E3-1240 v5 at a fixed clock, a task on CPU 0 that sleeps a
//! millisecond at a time wakes that much sooner per round while another
//! core keeps the package in PC0, and exactly as before when nothing else
//! runs and the package sleeps with it. Governors still read the driver's
//! figure.

use super::kpath_tests::workload_file;
use super::Engine;
use crate::kernel::{BuildCtx, KernelConfig};
use crate::machine::RunParts;
use crate::params::Spec;
use crate::platform::load_named;
use crate::{cpufreq, cpuidle, workload};

const MS: u64 = 1_000_000;
const KHZ: u32 = 3_500_000;

/// CPU 0 works 10 µs and sleeps 1 ms: each round one idle period, long
/// enough for a deep state, ended by a timer.
const SLEEPER: &str = r#"
[[task]]
comm = "sleeper"
cpus = [0]
loop = "forever"
ops = [ { run = "10us" }, { count = "rounds" }, { sleep = "1ms" } ]
"#;

/// Added to [`SLEEPER`]: CPU 2 (another core) busy throughout, so the
/// package never leaves PC0.
const SPINNER: &str = r#"
[[task]]
comm = "spinner"
cpus = [2]
loop = "forever"
ops = [ { run = "10ms" } ]
"#;

/// `text` for 200 ms under v5.2 without housekeeping or the kernel's paths,
/// every state from C1E down given a wake of `wake_us` (None: the file's).
fn run(name: &str, text: &str, wake_us: Option<u64>) -> Engine {
    let mut plat =
        load_named(&Spec::parse("skylake-e3-1240v5:intel_pstate=passive", "platform").unwrap())
            .unwrap();
    for s in plat.cpu_types[0]
        .idle_states
        .iter_mut()
        .filter(|s| s.exit_latency_ns >= 10_000)
    {
        s.wake_latency_ns = wake_us.map(|us| us * 1000);
    }
    let kernel =
        KernelConfig::from_spec(&Spec::parse("5.2:housekeeping=off", "kernel").unwrap()).unwrap();
    let spec = Spec::parse(&format!("userspace:scaling_setspeed={KHZ}"), "cpufreq").unwrap();
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
    e
}

/// Rounds, and CPU 0's idle entries per state.
fn counts(e: &Engine) -> (u64, Vec<u64>) {
    (
        e.record.counters[0],
        e.idle_counters[0].states.iter().map(|s| s.usage).collect(),
    )
}

#[test]
fn a_wake_with_the_package_awake_takes_the_measured_latency() {
    let worst = run("awake-worst", &format!("{SLEEPER}{SPINNER}"), None);
    let fast = run("awake-fast", &format!("{SLEEPER}{SPINNER}"), Some(5));
    assert!(
        worst.pkg_energy[0].entries.iter().sum::<u64>() <= 1,
        "the spinner keeps the package in PC0 (but for the start)"
    );
    let (r_worst, r_fast) = (counts(&worst).0, counts(&fast).0);
    assert!(r_worst > 150, "{r_worst} rounds");
    // The sleeper's timer fires, then its CPU leaves the state menu chose
    // (from C1E down for a 1-ms sleep, mostly C6 to C8: 85-200 µs in the
    // driver's table) before it runs again.
    let (w, f) = (&worst.record.wakeup_latency, &fast.record.wakeup_latency);
    assert!(
        w.mean() > 50_000.0,
        "worst-case wakes: mean {:.0} ns",
        w.mean()
    );
    // All but the first (the package asleep before the spinner ran).
    assert!(
        f.percentile(99.0) <= 6_000.0,
        "measured wakes: 99th percentile {:.0} ns",
        f.percentile(99.0)
    );
    assert!(
        f.mean() < w.mean() / 10.0,
        "mean wake {:.0} against {:.0} ns",
        f.mean(),
        w.mean()
    );
    assert!(r_fast > r_worst, "{r_fast} rounds against {r_worst}");
}

#[test]
fn a_wake_that_wakes_the_package_takes_the_drivers_worst_case() {
    let worst = run("alone-worst", SLEEPER, None);
    let fast = run("alone-fast", SLEEPER, Some(5));
    assert!(
        worst.pkg_energy[0].entries.iter().sum::<u64>() > 150,
        "the package sleeps with CPU 0"
    );
    assert_eq!(counts(&worst), counts(&fast));
    assert_eq!(worst.now, fast.now);
}

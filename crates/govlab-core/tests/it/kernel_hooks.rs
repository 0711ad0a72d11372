//! The scheduler's cpufreq hook calls (v6.8 kernel/sched/fair.c
//! `enqueue_task_fair` → `enqueue_entity` → `update_load_avg` →
//! `cfs_rq_util_change`) seen from a governor: a wakeup after a millisecond
//! or more of idle calls the hook at once.

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

use crate::fixtures::{one_core_platform, temp_file};

fn spec(s: &str) -> Spec {
    Spec::parse(s, "test").unwrap()
}

/// 200 MHz to 2 GHz in 100 MHz steps (so a few percent of utilisation
/// moves the target).
fn opps() -> String {
    let v: Vec<String> = (2..=20).map(|i| format!("{{ khz = {}, mv = 900 }}", i * 100_000)).collect();
    format!("[ {} ]", v.join(", "))
}

/// HZ=250 (a 4 ms tick, so a late update would show), fine OPPs, a
/// shallow and a deeper idle state.
const EXIT_LATENCY_US: [u64; 2] = [1, 50];

fn platform() -> String {
    one_core_platform(
        "hook-wakeup",
        250,
        &opps(),
        r#"[[cpu_type.idle_state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = 1.0
[[cpu_type.idle_state]]
name = "C2"
exit_latency_us = 50
target_residency_us = 200
power_mw = 0.1
"#,
    )
}

/// (time ns, line) of a trace line's timestamp.
fn ts_ns(line: &str) -> u64 {
    let head = line.split(": ").next().unwrap();
    let ts = head.rsplit(' ').next().unwrap();
    let (s, us) = ts.split_once('.').unwrap();
    (s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap()) * 1000
}

/// Under schedutil, a task whose estimate comes from a 30 ms run (at a
/// fixed wall time: `mem = 1.0`) sleeps 20 ms and wakes on the idle CPU;
/// the clock it left behind is below what its estimate asks for, so a
/// change is due. v6.8 calls the hook from the wakeup's enqueue (the
/// runqueue's signal decayed over the idle time), so the `cpu_frequency`
/// event follows the wakeup by at most the idle state's exit latency (the
/// last change is far more than the rate limit ago), not at the next tick
/// (up to 4 ms later), as before the fix.
#[test]
#[allow(clippy::print_stdout)]
fn schedutil_changes_frequency_at_the_wakeup_after_idle() {
    let plat = temp_file("hook-wakeup-plat.toml", &platform());
    let wl = temp_file(
        "hook-wakeup-wl.toml",
        "[[task]]\ncomm = \"a\"\ncpus = [0]\nops = [ { run = \"30ms\", mem = 1.0 }, { sleep = \"20ms\" }, { run = \"5ms\", mem = 1.0 } ]\n",
    );
    let cfg = RunConfig {
        platform: spec(plat.to_str().unwrap()),
        workload: spec(wl.to_str().unwrap()),
        cpufreq: spec("schedutil"),
        cpuidle: spec("menu"),
        duration_ns: 120_000_000,
        seed: 1,
    };
    let path = temp_file("hook-wakeup.trace", "");
    cfg.run(Some(&path), None).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();

    let wake = text
        .lines()
        .filter(|l| l.contains(" sched_wakeup: ") && l.contains("comm=a "))
        .map(ts_ns)
        .next()
        .expect("a's wakeup after its sleep");
    let sleep_start = text
        .lines()
        .find(|l| l.contains("prev_comm=a ") && l.contains("prev_state=S"))
        .map(ts_ns)
        .unwrap();
    assert_eq!(wake - sleep_start, 20_000_000, "a slept 20 ms");
    let freqs: Vec<(u64, u32)> = text
        .lines()
        .filter(|l| l.contains(" cpu_frequency: "))
        .map(|l| (ts_ns(l), l.split("state=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap()))
        .collect();
    let (last_t, before) = *freqs.iter().rev().find(|&&(t, _)| t <= wake).unwrap();
    let &(t1, after) = freqs.iter().find(|&&(t, _)| t > wake).expect("a frequency change after the wakeup");
    println!("wakeup at {wake} ns: {before} kHz -> {after} kHz after {} us", (t1 - wake) / 1000);
    assert!(after > before, "a raise was due: {before} -> {after} kHz");
    // schedutil's rate limit here: min(10 us x 1000, 10 ms) = 10 ms; the
    // previous change was longer ago than that, so none applies.
    assert!(wake - last_t > 10_000_000);
    let bound_ns = EXIT_LATENCY_US.iter().max().unwrap() * 1000;
    assert!(t1 - wake <= bound_ns, "{} ns after the wakeup", t1 - wake);
}

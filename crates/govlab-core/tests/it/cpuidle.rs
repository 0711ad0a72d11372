//! The idle governors in whole runs: the oracle's defining properties, the
//! haltpoll poll limit reaching the engine's polling state, the default
//! poll limit by kernel version, and the per-CPU counters of every governor
//! in the JSON result.

use govlab_core::api::RunConfig;
use govlab_core::cpufreq;
use govlab_core::cpuidle;
use govlab_core::metrics::RunResult;
use govlab_core::params::Spec;
use govlab_core::platform::{self, energy};
use govlab_core::machine::build;
use govlab_core::machine::RunParts;
use govlab_core::workload;

use crate::fixtures::{one_core_platform, temp_file, FixedState, ShiftedOracle};

const US: f64 = 1e-6;

fn spec(s: &str) -> Spec {
    Spec::parse(s, "test").unwrap()
}

fn run(platform: &str, workload: &str, cpufreq: &str, cpuidle: &str, ms: u64, seed: u64) -> RunResult {
    let cfg = RunConfig {
        platform: Spec::new(platform),
        // Hand-computed counts and energies: a silent machine.
        kernel: spec("6.8:housekeeping=off"),
        workload: spec(workload),
        cpufreq: spec(cpufreq),
        cpuidle: spec(cpuidle),
        duration_ns: ms * 1_000_000,
        seed,
        interval_ns: None,
    };
    cfg.run(None, None).unwrap()
}

/// A task pinned to CPU 0 that runs 10 µs between the given sleeps.
fn sleeper(name: &str, sleeps_us: &[u64]) -> String {
    let ops = sleeps_us
        .iter()
        .map(|us| format!("{{ run = \"10us\" }}, {{ sleep = \"{us}us\" }}"))
        .collect::<Vec<_>>()
        .join(", ");
    let path = temp_file(name, &format!("[[task]]\ncomm = \"s\"\ncpus = [0]\nops = [ {ops}]\n"));
    path.to_str().unwrap().to_string()
}

fn usage(r: &RunResult, cpu: usize) -> Vec<u64> {
    r.cpus[cpu].idle_states.iter().map(|s| s.usage).collect()
}

fn assert_never_wrong(r: &RunResult, what: &str) {
    for c in &r.cpus {
        let a = &c.idle_accuracy;
        assert_eq!(a.correct, a.samples, "{what}: CPU {} judged wrong: {a:?}", c.cpu);
        assert!(a.too_deep.is_empty() && a.too_shallow.is_empty(), "{what}: CPU {}: {a:?}", c.cpu);
    }
}

/// The oracle takes, for each idle period, the deepest state its length
/// fits, and pays that state's exit latency at the wakeup.
#[test]
fn oracle_picks_the_ideal_state_and_pays_its_exit_latency() {
    // Idle times on CPU 0: 0 (the task's start wakes it), then the sleeps.
    // Skylake targets: POLL 0, C1 2, C1E 20, C3 100, C6 200, C7s 800, C8 800 µs.
    let wl = sleeper("oracle-seq.toml", &[20, 50, 300, 20, 300, 300, 1, 150, 5_000]);
    let r = run("skylake-e3-1240v5", &wl, "performance", "oracle", 100, 1);
    assert_never_wrong(&r, "sleep sequence");
    // 0, 1 → POLL; 20, 50, 20 → C1E; 150 → C3; 300 ×3 → C6; 5000 → C8.
    // One more POLL entry: the timer interrupt ending the 1 µs poll leaves
    // it at once (no exit latency), and the CPU, finding nothing to run
    // yet, idles again for 0 ns until the timer's wakeup is enqueued
    // (task_timer_fired interrupts before it wakes the task).
    assert_eq!(usage(&r, 0), vec![3, 0, 3, 1, 3, 0, 1]);
    assert_eq!(r.cpus[0].idle_accuracy.samples, 11);
    // Each wakeup waits exactly the chosen state's exit latency: 0, 10, 70,
    // 85 and 200 µs for the nine timer wakeups (the start at t=0 counts one
    // more wakeup, through POLL).
    let lat = &r.wakeup_latency;
    assert_eq!(lat.count, 10);
    let exits_us = 0.0 + 3.0 * 10.0 + 70.0 + 3.0 * 85.0 + 200.0;
    assert!((lat.mean_us.unwrap() * 10.0 - exits_us).abs() < 1e-6, "mean {} µs", lat.mean_us.unwrap());
    assert!((lat.max_us.unwrap() - 200.0).abs() < 1e-9, "max {} µs", lat.max_us.unwrap());
}

/// An idle period that outlasts the tick is never woken by it: the oracle
/// stops the tick when the tick comes.
#[test]
fn oracle_idle_is_never_woken_by_the_tick() {
    // 10 ms sleeps on a 4 ms tick (HZ=250).
    let wl = sleeper("oracle-long.toml", &[10_000; 8]);
    let r = run("skylake-e3-1240v5", &wl, "performance", "oracle", 200, 1);
    assert_never_wrong(&r, "long sleeps");
    // The start, then one C8 entry per sleep: no tick wakeups in between.
    assert_eq!(usage(&r, 0), vec![1, 0, 0, 0, 0, 0, 8]);
    // The CPUs nothing ever wakes are never woken by a tick either.
    assert!(r.cpus[1..].iter().all(|c| c.idle_states.iter().all(|s| s.usage == 0)));
    // menu predicts a short idle in one of the sleeps, keeps the tick (C3)
    // and is woken by it: one entry more.
    let m = run("skylake-e3-1240v5", &wl, "performance", "menu", 200, 1);
    assert_eq!(usage(&m, 0).iter().sum::<u64>(), 10, "{:?}", usage(&m, 0));
}

/// An idle machine under the oracle draws the deepest state's power on
/// every core, both SMT threads of a core deciding only at the end: the
/// energy settled in hindsight is the state table's.
#[test]
fn oracle_energy_is_settled_at_the_chosen_states_power() {
    let wl = temp_file("oracle-idle.toml", "[[task]]\ncomm = \"sleeper\"\ncpus = [0]\nops = [ { sleep = \"10s\" } ]\n");
    let plat = platform::load_named(&spec("skylake-e3-1240v5")).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(wl.to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build(&spec("userspace"), &plat).unwrap(),
        cpuidle: cpuidle::build(&spec("oracle"), &plat).unwrap(),
        duration_ns: 1_000_000_000,
        seed: 1,
        ctx: govlab_core::kernel::BuildCtx::new(plat.clone(), crate::fixtures::silent_kernel()),
    };
    let r = build(parts, None).unwrap().run(None).unwrap();
    let ct = &plat.cpu_types[0];
    let deepest = ct.idle_states.len() - 1;
    let mv = ct.opps[ct.opp_index(ct.base_khz).unwrap()].mv;
    let per_core_mw = energy::idle_mw(ct, &ct.idle_states[deepest], mv);
    // The task's start wakes CPU 0 after no idle time at all: POLL, no
    // exit latency, no busy time; then everything sleeps for the whole run.
    // (The uncore and DRAM are the package's: r.packages[0], not checked here.)
    let expected_j = per_core_mw * plat.cores.len() as f64 / 1000.0;
    assert!((r.packages[0].cores_j - expected_j).abs() < 1e-9, "{} J vs {} J", r.packages[0].cores_j, expected_j);
    assert!((r.energy_j - r.energy_check_j).abs() < 1e-9);
    assert!(r.cpus.iter().all(|c| (c.idle_states[deepest].time_s - 1.0).abs() < 1e-9));
}

/// A two-state machine (poll, and one state whose target residency is
/// beyond the poll limit) at HZ=1000: the poll limit is TICK/16 = 62.5 µs.
fn poll_limit_platform() -> String {
    one_core_platform(
        "poll-limit",
        1000,
        "[ { khz = 1000000, mv = 700 } ]",
        r#"[[cpu_type.idle_state]]
name = "POLL"
exit_latency_us = 0
target_residency_us = 0
power_mw = 1.0
polling = true
[[cpu_type.idle_state]]
name = "C6"
exit_latency_us = 50
target_residency_us = 100
power_mw = 0.1
"#,
    )
}

/// On a machine whose only deeper state targets more than the default poll
/// limit, the oracle polls through an idle period too short for that state
/// (a default poll would be cut at the limit), and takes the deeper state
/// for the long one.
#[test]
fn oracle_polls_without_a_time_limit_only_when_no_deeper_state_fits() {
    let p = temp_file("poll-limit.toml", &poll_limit_platform());
    let plat = platform::load_path(&p).unwrap();
    let wl = sleeper("oracle-poll.toml", &[80, 1_000]);
    let parts = RunParts {
        workload: workload::build(&Spec::new(&wl)).unwrap(),
        cpufreq: cpufreq::build(&spec("performance"), &plat).unwrap(),
        cpuidle: cpuidle::build(&spec("oracle"), &plat).unwrap(),
        duration_ns: 10_000_000,
        seed: 1,
        ctx: govlab_core::kernel::BuildCtx::new(plat, crate::fixtures::silent_kernel()),
    };
    let r = build(parts, None).unwrap().run(None).unwrap();
    assert_never_wrong(&r, "poll limit");
    // POLL: the start, the 80 µs sleep in one piece (beyond the 62.5 µs
    // default limit), and the 0 ns re-entry after the timer interrupt (see
    // oracle_picks_the_ideal_state_and_pays_its_exit_latency). C6: 1 ms.
    assert_eq!(usage(&r, 0), vec![3, 1]);
    assert!((r.cpus[0].idle_states[0].time_s - 80.0 * US).abs() < 1e-12, "{} s", r.cpus[0].idle_states[0].time_s);
    // C6's time includes its 50 µs exit latency.
    assert!((r.cpus[0].idle_states[1].time_s - (1_000.0 + 50.0) * US).abs() < 1e-12);
}

/// A mix of periodic tasks with different periods, a request/reply pair
/// and an open-loop request stream: short and long idle periods, timer and
/// non-timer wakeups, on every CPU.
/// Each caller names its own copy: tests run in parallel.
fn mixed_workload(name: &str) -> String {
    let path = temp_file(
        name,
        r#"
description = "periodic tasks of three periods, a ping-pong pair, an open-loop request stream"
[[channel]]
name = "ping"
[[channel]]
name = "pong"
[[channel]]
name = "req"
[[series]]
name = "rtt"
[[series]]
name = "service"
[[source]]
name = "clients"
channel = "req"
rate = 2000
arrivals = "poisson"
[[task]]
comm = "tick1ms"
loop = "forever"
ops = [ { run = "150us" }, { timer = "1ms" } ]
[[task]]
comm = "tick4ms"
instances = 2
loop = "forever"
ops = [ { run = "600us" }, { timer = "4300us" } ]
[[task]]
comm = "tick16ms"
loop = "forever"
ops = [ { run = "3ms" }, { timer = "16700us" } ]
[[task]]
comm = "client"
loop = "forever"
ops = [ { mark = true }, { send = "ping" }, { recv = "pong" }, { record = "rtt", since = "mark" }, { sleep = "400us", dist = "exp" } ]
[[task]]
comm = "server"
loop = "forever"
ops = [ { recv = "ping" }, { run = "40us", dist = "exp" }, { send = "pong" } ]
[[task]]
comm = "worker"
instances = 2
loop = "forever"
ops = [ { recv = "req" }, { run = "120us", dist = "exp" }, { record = "service", since = "request" } ]
"#,
    );
    path.to_str().unwrap().to_string()
}

/// The oracle is never judged wrong, whatever wakes the CPUs, on both
/// platforms and under a frequency governor that asks for turbo.
#[test]
fn oracle_is_never_wrong_on_mixed_and_request_reply_workloads() {
    let mix = mixed_workload("mixed-1.toml");
    for (plat, wl, freq) in [
        ("skylake-e3-1240v5", mix.as_str(), "schedutil"),
        ("skylake-e3-1240v5", "schbench:message_threads=2,workers=4,sleep_us=3000,cpu_us=3000", "performance"),
        ("skylake-e3-1240v5", "hackbench:groups=2,loops=200", "ondemand"),
        ("broadwell-2s-e5-2698v4", mix.as_str(), "performance"),
    ] {
        let r = run(plat, wl, freq, "oracle", 300, 3);
        assert_never_wrong(&r, &format!("{plat} {wl} {freq}"));
        assert!(r.cpus.iter().map(|c| c.idle_accuracy.samples).sum::<u64>() > 100, "{plat} {wl}: too few idle entries");
        assert!((r.energy_j - r.energy_check_j).abs() <= 1e-9 * r.energy_j, "{plat} {wl}");
    }
}

/// Energy and mean wakeup latency of a run of the mixed workload.
fn energy_and_latency(mix: &str, cpuidle: Box<dyn cpuidle::CpuidleGovernor>, seed: u64) -> (f64, f64, RunResult) {
    let plat = platform::load_named(&spec("skylake-e3-1240v5")).unwrap();
    let parts = RunParts {
        workload: workload::build(&spec(mix)).unwrap(),
        cpufreq: cpufreq::build(&spec("userspace:scaling_setspeed=3500000"), &plat).unwrap(),
        cpuidle,
        duration_ns: 500_000_000,
        seed,
        ctx: govlab_core::kernel::BuildCtx::new(plat, crate::fixtures::silent_kernel()),
    };
    let r = build(parts, None).unwrap().run(None).unwrap();
    (r.energy_j, r.wakeup_latency.mean_us.unwrap(), r)
}

/// The property of issue 5: on a mixed workload no cpuidle governor uses
/// less energy than the oracle at an equal or better wakeup latency.
///
/// The latency is the run's mean wakeup latency: from a task's wakeup to
/// its running, over every wakeup of every task, so it contains the exit
/// latency each wakeup paid (`wakeup_latency.mean_us` in the JSON). The
/// frequency is fixed at the base frequency (userspace) so that only the
/// idle choices differ. haltpoll (poll or C1) and wtteo wake faster than
/// the oracle, which sleeps as deep as each period allows; they must then
/// spend more energy.
///
/// The check has teeth: an oracle one state too deep is beaten on latency
/// by the oracle and judged too deep. Its energy is not comparable: since
/// an idle exit costs the state's own power (issue 23), not C0's, the
/// longer exits mostly slow the closed-loop ping-pong pair, which then does
/// less work (tests/it/power.rs compares energy at fixed work). (One too
/// shallow is not beaten on latency: it buys latency with energy, and only
/// the accuracy accounting catches it.)
#[test]
fn no_governor_beats_the_oracle_on_energy_at_equal_or_better_latency() {
    let mix = mixed_workload("mixed-2.toml");
    let plat = platform::load_named(&spec("skylake-e3-1240v5")).unwrap();
    for seed in [1, 2] {
        let (eo, lo, oracle) = energy_and_latency(&mix, cpuidle::build(&spec("oracle"), &plat).unwrap(), seed);
        assert_never_wrong(&oracle, "mixed");
        for c in &oracle.cpus {
            assert!(c.idle_accuracy.too_deep_latency_us == 0.0 && c.idle_accuracy.too_shallow_energy_j == 0.0);
        }
        let mut others = Vec::new();
        for gov in ["ladder", "menu", "teo", "haltpoll", "wtteo"] {
            let (e, l, _) = energy_and_latency(&mix, cpuidle::build(&spec(gov), &plat).unwrap(), seed);
            assert!(
                !(e < eo && l <= lo),
                "seed {seed}: {gov} uses {e:.4} J at {l:.2} µs mean wakeup latency, the oracle {eo:.4} J at {lo:.2} µs"
            );
            others.push((gov, e, l));
        }
        let (e, l, deep) = energy_and_latency(&mix, Box::new(ShiftedOracle(1)), seed);
        let too_deep_us: f64 = deep.cpus.iter().map(|c| c.idle_accuracy.too_deep_latency_us).sum();
        assert!(
            lo < l && too_deep_us > 0.0,
            "seed {seed}: an oracle one state too deep ({e:.4} J, {l:.2} µs) is not beaten by the oracle ({eo:.4} J, {lo:.2} µs)"
        );
    }
}

/// (state, entry µs, exit µs) of CPU `cpu`'s idle periods in an ftrace file.
fn idle_periods(trace: &std::path::Path, cpu: usize) -> Vec<(u32, f64, f64)> {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut out = Vec::new();
    let mut open: Option<(u32, f64)> = None;
    let tag = format!("cpu_id={cpu}");
    for line in text.lines().filter(|l| l.contains("cpu_idle:") && l.ends_with(&tag)) {
        let ts: f64 = line.split(": cpu_idle:").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
        let state: u32 = line.split("state=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        if state == u32::MAX {
            let (s, t0) = open.take().unwrap();
            out.push((s, (t0 * 1e6).round(), (ts * 1e6).round()));
        } else {
            open = Some((state, ts));
        }
    }
    out
}

/// The engine's polling state spins for haltpoll's limit, which grows after
/// halts the window just missed and shrinks after long ones, as in
/// haltpoll.c (the default limit on this table would be C1E's 20 µs).
#[test]
fn haltpoll_limit_drives_the_engines_poll_time() {
    // The start's halt (C1, 2 µs of exit latency) opens a 50 µs window.
    // Then each sleep polls to the window and halts for the rest:
    //   120 µs: poll 50, halt 70 (+2) → grow to 100
    //   120 µs: poll 100, halt 20      → unchanged (22 µs ≤ 100)
    //  1000 µs: poll 100, halt 900     → shrink to 50 (902 µs > 200)
    //  1000 µs: poll 50, halt 950      → shrink to 25
    //   120 µs: poll 25, halt 95       → grow to 50
    //   120 µs: poll 50, halt 70
    let wl = sleeper("haltpoll.toml", &[120, 120, 1_000, 1_000, 120, 120]);
    let trace = std::env::temp_dir().join(format!("govlab-haltpoll-{}.txt", std::process::id()));
    let cfg = RunConfig {
        platform: Spec::new("skylake-e3-1240v5"),
        // Hand-computed counts and energies: a silent machine.
        kernel: spec("6.8:housekeeping=off"),
        workload: spec(&wl),
        cpufreq: spec("performance"),
        cpuidle: spec("haltpoll"),
        duration_ns: 100_000_000,
        seed: 1,
        interval_ns: None,
    };
    let r = cfg.run(Some(&trace), None).unwrap();
    let periods = idle_periods(&trace, 0);
    std::fs::remove_file(&trace).unwrap();
    let polls: Vec<f64> = periods.iter().filter(|p| p.0 == 0).map(|p| p.2 - p.1).collect();
    assert_eq!(polls, vec![50.0, 100.0, 100.0, 50.0, 25.0, 50.0], "{periods:?}");
    let halts: Vec<f64> = periods.iter().filter(|p| p.0 == 1).map(|p| p.2 - p.1).collect();
    assert_eq!(halts, vec![2.0, 72.0, 22.0, 902.0, 952.0, 97.0, 72.0], "{periods:?}");
    assert_eq!(usage(&r, 0), vec![6, 7, 0, 0, 0, 0, 0]);
}

/// `--format json` carries, for every governor and every CPU, the kernel's
/// per-state counters and the idle accuracy with its maps.
#[test]
fn every_governor_reports_counters_and_idle_accuracy_per_cpu() {
    let mix = mixed_workload("mixed-3.toml");
    for g in cpuidle::registry() {
        let cfg = RunConfig {
            platform: Spec::new("skylake-e3-1240v5"),
            // Hand-computed counts and energies: a silent machine.
        kernel: spec("6.8:housekeeping=off"),
            workload: spec(&mix),
            cpufreq: spec("schedutil"),
            cpuidle: Spec::new(g.name),
            duration_ns: 100_000_000,
            seed: 1,
            interval_ns: None,
        };
        let json = serde_json::to_value(cfg.run(None, None).unwrap()).unwrap();
        let cpus = json["cpus"].as_array().unwrap();
        assert_eq!(cpus.len(), 8, "{}", g.name);
        let mut samples = 0;
        for c in cpus {
            let states = c["idle_states"].as_array().unwrap();
            assert_eq!(states.len(), 7, "{}", g.name);
            for s in states {
                for k in ["name", "usage", "time_s", "above", "below", "rejected"] {
                    assert!(!s[k].is_null(), "{}: idle state without {k}: {s}", g.name);
                }
            }
            let a = &c["idle_accuracy"];
            for k in ["samples", "correct", "too_deep", "too_shallow", "by_state", "too_shallow_energy_j", "too_deep_latency_us"] {
                assert!(!a[k].is_null(), "{}: idle_accuracy without {k}: {a}", g.name);
            }
            assert!(a["too_deep"].is_object() && a["too_shallow"].is_object());
            // Every judged entry is counted in usage, and the categories add up.
            let n = a["samples"].as_u64().unwrap();
            let usage: u64 = states.iter().map(|s| s["usage"].as_u64().unwrap()).sum();
            assert_eq!(n, usage, "{}", g.name);
            let off: u64 = ["too_deep", "too_shallow"]
                .iter()
                .flat_map(|k| a[k].as_object().unwrap().values().map(|v| v.as_u64().unwrap()))
                .sum();
            assert_eq!(a["correct"].as_u64().unwrap() + off, n, "{}", g.name);
            samples += n;
        }
        assert!(samples > 100, "{}: {samples} idle entries", g.name);
    }
}

/// A CPU that always polls, through one 1 ms sleep at HZ=1000 with the
/// deeper state targeting 100 µs: by version, one poll until the timer
/// (before v4.16), polls cut at TICK_NSEC / 16 = 62.5 µs (v4.16), at the
/// deeper state's 100 µs (v5.1), and at 62.5 µs again (v5.11's cap).
#[test]
fn the_poll_time_limit_follows_the_kernel_version() {
    let p = temp_file("poll-version.toml", &poll_limit_platform());
    let plat = platform::load_path(&p).unwrap();
    let wl = sleeper("poll-version-wl.toml", &[1_000]);
    let polls = |kernel: &str| -> Vec<f64> {
        let parts = RunParts {
            workload: workload::build(&Spec::new(&wl)).unwrap(),
            cpufreq: cpufreq::build(&spec("performance"), &plat).unwrap(),
            cpuidle: Box::new(FixedState(0)),
            duration_ns: 2_000_000,
            seed: 1,
            ctx: govlab_core::kernel::BuildCtx::new(plat.clone(), govlab_core::kernel::KernelConfig::from_spec(&spec(kernel)).unwrap()),
        };
        let trace = std::env::temp_dir().join(format!("govlab-poll-{kernel}-{}.txt", std::process::id()));
        build(parts, Some(&trace)).unwrap().run(None).unwrap();
        let periods = idle_periods(&trace, 0);
        std::fs::remove_file(&trace).unwrap();
        // The polls within the sleep (it starts after the 10 µs run).
        periods.iter().filter(|p| p.1 >= 10.0 && p.2 <= 1_010.0 && p.2 > p.1).map(|p| p.2 - p.1).collect()
    };
    let got: Vec<(&str, Vec<f64>)> = ["4.8", "4.16", "5.2", "6.8"].iter().map(|k| (*k, polls(&format!("{k}:housekeeping=off")))).collect();
    // The trace's µs rounding splits 62.5 µs into 62 and 63.
    let sixteenths: Vec<f64> = (0..16).map(|i| if i % 2 == 0 { 62.0 } else { 63.0 }).collect();
    assert_eq!(got[0].1, vec![1_000.0], "4.8: one poll to the timer");
    assert_eq!(got[1].1, sixteenths, "4.16: TICK_NSEC / 16");
    assert_eq!(got[2].1, vec![100.0; 10], "5.2: C6's target residency");
    assert_eq!(got[3].1, sixteenths, "6.8: capped at TICK_NSEC / 16");
}

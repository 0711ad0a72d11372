use std::fmt::Write as _;

use govlab_core::api::RunConfig;
use govlab_core::cpufreq;
use govlab_core::cpuidle;
use govlab_core::params::Spec;
use govlab_core::platform::{self, energy};
use govlab_core::machine::RunParts;
use govlab_core::machine::build;
use govlab_core::workload;

use crate::fixtures::{slow_rail_platform, temp_file, FixedState, StepUp};

fn spec(s: &str) -> Spec {
    Spec::parse(s, "test").unwrap()
}

fn config(platform: &str, workload: &str, cpufreq: &str, ms: u64, seed: u64) -> RunConfig {
    RunConfig {
        platform: spec(platform),
        // Hand-computed counts and energies: a silent machine.
        kernel: spec("6.8:housekeeping=off,kpath=off"),
        workload: spec(workload),
        cpufreq: spec(cpufreq),
        cpuidle: spec("ladder"),
        duration_ns: ms * 1_000_000,
        seed,
        interval_ns: None,
    }
}

fn json_of(cfg: &RunConfig) -> String {
    serde_json::to_string(&cfg.run(None, None).unwrap()).unwrap()
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let w = "periodic:tasks=6,run_us=700,period_us=3000";
    let a = json_of(&config("skylake-e3-1240v5", w, "powersave", 300, 7));
    let b = json_of(&config("skylake-e3-1240v5", w, "powersave", 300, 7));
    let c = json_of(&config("skylake-e3-1240v5", w, "powersave", 300, 8));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Every nanosecond of every CPU is either a task running or an idle state
/// (entered, or being left).
#[test]
fn busy_plus_idle_is_elapsed_on_every_cpu() {
    for (plat, w) in [
        ("skylake-e3-1240v5", "periodic:tasks=5,run_us=900,period_us=2000"),
        ("broadwell-2s-e5-2698v4", "cpu-bound:tasks=50"),
    ] {
        let r = config(plat, w, "performance", 200, 1).run(None, None).unwrap();
        let mut some_busy = false;
        for c in &r.cpus {
            assert_eq!(c.busy_ns + c.idle_ns, r.sim_time_ns, "{plat} cpu {}", c.cpu);
            some_busy |= c.busy_ns > 0;
        }
        assert!(some_busy);
    }
}

/// The per-core energy ledgers and an independent integral of total power agree.
#[test]
fn energy_is_the_integral_of_power() {
    let r = config("broadwell-2s-e5-2698v4", "periodic:tasks=30,run_us=300,period_us=1000", "performance", 200, 3)
        .run(None, None)
        .unwrap();
    assert!(r.energy_j > 0.0);
    assert!((r.energy_j - r.energy_check_j).abs() <= 1e-9 * r.energy_j, "{} vs {}", r.energy_j, r.energy_check_j);
    assert!((r.avg_power_w * r.sim_time_s - r.energy_j).abs() <= 1e-9 * r.energy_j);
}

/// An idle machine held in one state draws exactly that state's power.
#[test]
fn idle_machine_energy_matches_the_state_table() {
    let wl = temp_file("sleeper.toml", "[[task]]\ncomm = \"sleeper\"\ncpus = [0]\nops = [ { sleep = \"10s\" } ]\n");
    let plat = platform::load_named(&spec("skylake-e3-1240v5")).unwrap();
    let state = 4; // C6
    let parts = RunParts {
        workload: workload::build(&Spec::new(wl.to_str().unwrap())).unwrap(),
        // userspace with no setspeed keeps the boot frequency: no transition.
        cpufreq: cpufreq::build(&spec("userspace"), &plat).unwrap(),
        cpuidle: Box::new(FixedState(state)),
        duration_ns: 1_000_000_000,
        seed: 1,
        ctx: govlab_core::kernel::BuildCtx::new(plat.clone(), crate::fixtures::silent_kernel()),
    };
    let r = build(parts, None).unwrap().run(None).unwrap();
    let ct = &plat.cpu_types[0];
    let base = ct.opp_index(ct.base_khz).unwrap();
    let mv = ct.opps[base].mv;
    let per_core_mw = energy::idle_mw(ct, &ct.idle_states[state], mv);
    // The cores' domain: every core in the state for the whole run; the
    // task's first wakeup at t=0 leaves the state at its own power and pays
    // its entry/exit energy once (the uncore and DRAM are the package's).
    let expected_j = per_core_mw * plat.cores.len() as f64 * 1.0 / 1000.0 + ct.idle_states[state].entry_exit_uj / 1e6;
    let cores_j: f64 = r.packages.iter().map(|p| p.cores_j).sum();
    assert!((cores_j - expected_j).abs() < 1e-9, "{cores_j} J vs {expected_j} J");
    assert!((r.package_j + r.dram_j - r.energy_j).abs() < 1e-9);
}

/// A compute-bound run takes time ∝ 1/f; a memory-bound one does not.
#[test]
fn compute_scales_with_frequency_memory_does_not() {
    let elapsed = |mem: f64, khz: u32| {
        let wl = temp_file(
            &format!("burst-{mem}.toml"),
            &format!("[[task]]\ncomm = \"burst\"\nops = [ {{ run = \"50ms\", mem = {mem} }} ]\n"),
        );
        let cfg = RunConfig {
            platform: spec("skylake-e3-1240v5"),
            // Hand-computed counts and energies: a silent machine.
        kernel: spec("6.8:housekeeping=off,kpath=off"),
            workload: Spec::new(wl.to_str().unwrap()),
            cpufreq: spec(&format!("userspace:scaling_setspeed={khz}")),
            cpuidle: spec("ladder"),
            duration_ns: 10_000_000_000,
            seed: 1,
            interval_ns: None,
        };
        let r = cfg.run(None, None).unwrap();
        assert!(r.finished);
        r.sim_time_s
    };
    // 1.75 and 3.5 GHz; the first 20 µs run at the boot frequency (3.5 GHz)
    // while the clock switches, which the 1% tolerance absorbs.
    let (slow, fast) = (elapsed(0.0, 1_700_000), elapsed(0.0, 3_500_000));
    assert!((slow / fast - 3.5 / 1.7).abs() < 0.01 * 3.5 / 1.7, "{slow} / {fast}");
    let (slow, fast) = (elapsed(1.0, 1_700_000), elapsed(1.0, 3_500_000));
    assert!((slow / fast - 1.0).abs() < 1e-3, "{slow} / {fast}");
    // At the reference (base) frequency 50 ms of work takes 50 ms.
    assert!((fast - 0.050).abs() < 1e-4, "{fast}");
}

/// A frequency increase that needs more voltage waits for the regulator.
#[test]
fn frequency_increase_waits_for_the_voltage_slew() {
    let time_at_low = |high_mv: u32| {
        let p = temp_file(&format!("rail-{high_mv}.toml"), &slow_rail_platform(high_mv));
        let plat = platform::load_path(&p).unwrap();
        let wl = temp_file("idle.toml", "[[task]]\ncomm = \"s\"\nops = [ { sleep = \"1s\" } ]\n");
        let parts = RunParts {
            workload: workload::build(&Spec::new(wl.to_str().unwrap())).unwrap(),
            cpufreq: Box::new(StepUp { at_ns: 1_000_000 }),
            cpuidle: cpuidle::build(&spec("ladder"), &plat).unwrap(),
            duration_ns: 5_000_000,
            seed: 1,
            ctx: govlab_core::kernel::BuildCtx::new(plat, crate::fixtures::silent_kernel()),
        };
        let r = build(parts, None).unwrap().run(None).unwrap();
        let tis = &r.cpus[0].time_in_state;
        (tis[&1_000_000], tis[&2_000_000])
    };
    // Boot at 2 GHz; down to 1 GHz after the 10 µs transition latency; the
    // request for 2 GHz at 1 ms must first raise the rail by 500 mV at
    // 1 mV/µs (500 µs), then switch (10 µs): 1 GHz from 10 µs to 1510 µs.
    let (low, high) = time_at_low(1200);
    assert!((low - 1.5e-3).abs() < 1e-12, "{low}");
    assert!((low + high - 5e-3).abs() < 1e-12);
    // Same OPPs on a flat rail: the switch takes only the transition latency.
    let (low, _) = time_at_low(700);
    assert!((low - 1.0e-3).abs() < 1e-12, "{low}");
}

/// `above` and `below` follow cpuidle_enter_state()'s definitions.
#[test]
fn above_and_below_match_hand_computed_counts() {
    // CPU 0 sleeps 20, 50, 300, 20, 300, 300 µs between 10 µs bursts, always
    // in C3 (exit 70 µs, target 100 µs; next deeper C6 targets 200 µs).
    // Residency = sleep + 70 µs of exit latency:
    //   20 → 90 < 100: above;   50 → 120: neither;   300 → 370, 370 − 70 ≥ 200: below.
    // Plus the idle period the task's start at t=0 interrupts: 0 + 70 < 100: above.
    let mut ops = String::new();
    for us in [20, 50, 300, 20, 300, 300] {
        write!(ops, "{{ run = \"10us\" }}, {{ sleep = \"{us}us\" }}, ").unwrap();
    }
    let wl = temp_file("sleeps.toml", &format!("[[task]]\ncomm = \"s\"\ncpus = [0]\nops = [ {ops}]\n"));
    // Without package C-states: PC3's exit latency would add to C3's.
    let plat = platform::load_named(&spec("skylake-e3-1240v5:package_cstates=off")).unwrap();
    assert_eq!(plat.cpu_types[0].idle_states[3].name, "C3");
    let parts = RunParts {
        workload: workload::build(&Spec::new(wl.to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build(&spec("performance"), &plat).unwrap(),
        cpuidle: Box::new(FixedState(3)),
        duration_ns: 100_000_000,
        seed: 1,
        ctx: govlab_core::kernel::BuildCtx::new(plat, crate::fixtures::silent_kernel()),
    };
    let r = build(parts, None).unwrap().run(None).unwrap();
    let c3 = &r.cpus[0].idle_states[3];
    assert_eq!((c3.usage, c3.above, c3.below), (7, 3, 3), "{c3:?}");
    // CPUs that never woke were idle the whole run and counted no entry.
    assert_eq!(r.cpus[5].idle_states[3].usage, 0);
    assert!((r.cpus[5].idle_s - r.sim_time_s).abs() < 1e-12);
}

/// Prediction accuracy judges each entry against the deepest state the
/// actual idle time (exit latency excluded) would have fitted.
#[test]
fn idle_accuracy_matches_hand_computed_distribution() {
    // Same sequence as above, always C3. Idle times 0, 20, 50, 300, 20, 300,
    // 300 µs. Ideal states (targets POLL 0, C1 2, C1E 20, C3 100, C6 200,
    // C7s 800): POLL, C1E, C1E, C6, C1E, C6, C6. So C3 is 3 too deep once,
    // 1 too deep three times, 1 too shallow three times, never correct.
    let mut ops = String::new();
    for us in [20, 50, 300, 20, 300, 300] {
        write!(ops, "{{ run = \"10us\" }}, {{ sleep = \"{us}us\" }}, ").unwrap();
    }
    let wl = temp_file("sleeps-acc.toml", &format!("[[task]]\ncomm = \"s\"\ncpus = [0]\nops = [ {ops}]\n"));
    let plat = platform::load_named(&spec("skylake-e3-1240v5:package_cstates=off")).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(wl.to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build(&spec("performance"), &plat).unwrap(),
        cpuidle: Box::new(FixedState(3)),
        duration_ns: 100_000_000,
        seed: 1,
        ctx: govlab_core::kernel::BuildCtx::new(plat, crate::fixtures::silent_kernel()),
    };
    let r = build(parts, None).unwrap().run(None).unwrap();
    let a = &r.cpus[0].idle_accuracy;
    assert_eq!(a.samples, 7);
    assert_eq!(a.correct, 0);
    assert_eq!(a.too_deep.iter().map(|(&k, &n)| (k, n)).collect::<Vec<_>>(), vec![(1, 3), (3, 1)]);
    assert_eq!(a.too_shallow.iter().map(|(&k, &n)| (k, n)).collect::<Vec<_>>(), vec![(1, 3)]);
    assert_eq!(a.by_state[3], [7, 0, 4, 3]);
    // Too deep costs exit latency: 3 × (70 − 10) + (70 − 0) µs.
    assert!((a.too_deep_latency_us - 250.0).abs() < 1e-9, "{}", a.too_deep_latency_us);
    assert!(a.too_shallow_energy_j > 0.0);
}

/// Regression: a task woken by a send that preempts the sender and blocks at
/// once must not make the sender's program run twice (ops repeated or out
/// of order). Found with schbench's message thread.
#[test]
#[allow(clippy::float_cmp)] // exact by construction: whole rounds, no CPU time between mark and record
fn preempting_wakee_does_not_replay_the_wakers_program() {
    let wl = temp_file(
        "pingpong.toml",
        r#"
[[channel]]
name = "ping"
[[channel]]
name = "pong"
[[series]]
name = "rtt"
[[task]]
comm = "a"
cpus = [0]
ops = [ { loop = 200, ops = [
  { run = "10ms" }, { mark = true }, { send = "ping" }, { recv = "pong" }, { record = "rtt", since = "mark" },
  { count = "rounds" },
] } ]
[[task]]
comm = "b"
cpus = [0]
nice = -5
ops = [ { loop = 200, ops = [ { recv = "ping" }, { send = "pong" } ] } ]
"#,
    );
    let cfg = RunConfig {
        platform: spec("skylake-e3-1240v5"),
        // Hand-computed counts and energies: a silent machine.
        kernel: spec("6.8:housekeeping=off,kpath=off"),
        workload: Spec::new(wl.to_str().unwrap()),
        cpufreq: spec("performance"),
        cpuidle: spec("menu"),
        duration_ns: 5_000_000_000,
        seed: 1,
        interval_ns: None,
    };
    let r = cfg.run(None, None).unwrap();
    assert!(r.finished, "both tasks exit after 200 rounds");
    // 200 rounds of 10 ms at the reference frequency (3.5 GHz), run at the
    // turbo frequency: between 3.7 (4 active cores) and 3.9 GHz (one).
    let (lo, hi) = (200.0 * 0.010 * 3.5 / 3.9, 200.0 * 0.010 * 3.5 / 3.7);
    assert!(r.sim_time_s >= lo - 1e-6 && r.sim_time_s <= hi, "{} s, expected {lo}..{hi} s", r.sim_time_s);
    let rounds = r.metrics["rounds_per_s"].as_f64().unwrap() * r.sim_time_s;
    assert!((rounds - 200.0).abs() < 1e-9, "{rounds} rounds");
    // No CPU time is spent between mark and record: the round trip is a
    // pair of context switches at the same instant.
    assert_eq!(r.metrics["rtt_max_us"].as_f64().unwrap(), 0.0);
}

//! Energy-Aware Scheduling on whole runs (machine/eas.rs).

use super::engine::{build, Engine};
use crate::api::testing::engine;
use crate::api::RunConfig;
use crate::params::Spec;

const MS: u64 = 1_000_000;

/// EAS runs only where every condition of build_perf_domains holds.
#[test]
fn eas_needs_asymmetry_an_energy_model_schedutil_and_the_sysctl() {
    let on = |p: &str, k: &str, g: &str| engine(p, k, "idle", g, MS).eas.is_some();
    assert!(on("juno-r0", "6.8", "schedutil"));
    assert!(on("juno-r0", "5.2", "schedutil"));
    assert!(!on("juno-r0", "4.19", "schedutil"), "no EAS before v5.0");
    assert!(!on("juno-r0", "6.8:sched_energy_aware=off", "schedutil"));
    assert!(!on("juno-r0", "6.8", "ondemand"), "EAS needs schedutil");
    assert!(!on("skylake-e3-1240v5", "6.8", "schedutil"), "symmetric, no EM");
    for p in ["juno-r2", "hikey960", "sd835", "rk3399", "gs101"] {
        assert!(on(p, "6.8", "schedutil"), "{p}");
    }
}

/// An rt-app run on juno-r0 (schedutil, menu) for `ms`.
fn rtapp(kernel: &str, name: &str, json: &str, ms: u64) -> (Engine, crate::metrics::RunResult) {
    let path = std::env::temp_dir().join(format!("govlab-eas-{}-{name}", std::process::id()));
    std::fs::write(&path, json).unwrap();
    let mut e = engine("juno-r0", kernel, &format!("rtapp:file={}", path.display()), "schedutil", ms * MS);
    let r = e.run(None).unwrap();
    (e, r)
}

fn busy_ns(r: &crate::metrics::RunResult, cpus: &[usize]) -> u64 {
    r.cpus.iter().filter(|c| cpus.contains(&c.cpu)).map(|c| c.busy_ns).sum()
}

/// Seconds CPU `cpu` spent at `khz` or above (its time_in_state).
fn time_at_or_above(r: &crate::metrics::RunResult, cpu: usize, khz: u32) -> f64 {
    r.cpus[cpu].time_in_state.iter().filter(|(&f, _)| f >= khz).map(|(_, s)| s).sum()
}

const LITTLE: [usize; 4] = [0, 3, 4, 5];
const BIG: [usize; 2] = [1, 2];

/// A light task (6 % of a big CPU) with util_min 800: EAS finds it fits no
/// LITTLE CPU's capacity (util_fits_cpu -1) and wakes it on a big CPU,
/// where schedutil asks for at least 800 of 1024 while it is runnable
/// (950 MHz, the lowest OPP ≥ 1100 × 800 / 1024 = 859 MHz). Without the
/// clamp it stays LITTLE.
#[test]
fn util_min_moves_a_light_task_to_a_big_cpu_and_raises_its_frequency() {
    let json = |clamp: &str| format!(r#"{{ "global": {{ "calibration": "CPU1" }}, "tasks": {{ "light": {{ {clamp} "loop": 60, "run": 1000, "timer": {{ "ref": "unique", "period": 16000 }} }} }} }}"#);
    let (_, boosted) = rtapp("6.8", "boosted.json", &json(r#""util_min": 800,"#), 1000);
    let (_, plain) = rtapp("6.8", "plain.json", &json(""), 1000);
    let (b_big, b_little) = (busy_ns(&boosted, &BIG), busy_ns(&boosted, &LITTLE));
    assert!(b_big > 9 * b_little, "boosted: big {b_big} ns, LITTLE {b_little} ns");
    assert_eq!(busy_ns(&plain, &BIG), 0, "unclamped light task on a big CPU");
    // The clamp holds while the task is on the runqueue; schedutil lowers
    // the clock again once it sleeps (after its rate limit).
    let high = time_at_or_above(&boosted, BIG[0], 950_000);
    assert!(high > 0.25, "big cluster at ≥ 950 MHz for {high} s of 1 s");
}

/// A CPU hog with util_max 300 fits a LITTLE CPU (util_fits_cpu: its
/// util_max is below the CPU's capacity), so it is never misfit, the root
/// domain never overutilized, and it stays LITTLE, where schedutil asks
/// for no more than 300 (575 MHz, the lowest OPP ≥ 850 × 300 / 446 = 572).
/// Without the clamp it moves to a big CPU.
#[test]
fn util_max_keeps_a_hog_on_little() {
    let json = |clamp: &str| format!(r#"{{ "global": {{ "calibration": "CPU1" }}, "tasks": {{ "hog": {{ {clamp} "loop": -1, "run": 100000 }} }} }}"#);
    let (e, capped) = rtapp("6.8", "capped.json", &json(r#""util_max": 300,"#), 1000);
    let (_, free) = rtapp("6.8", "free.json", &json(""), 1000);
    assert_eq!(busy_ns(&capped, &BIG), 0, "a hog with util_max 300 ran on a big CPU");
    assert!(!e.eas.as_ref().unwrap().overutilized);
    assert!(busy_ns(&free, &BIG) > 800 * MS, "the unclamped hog stays LITTLE");
    let cpu = LITTLE.iter().copied().max_by_key(|&c| capped.cpus[c].busy_ns).unwrap();
    assert!(time_at_or_above(&capped, cpu, 700_000) < 0.05, "LITTLE above 575 MHz for {} s", time_at_or_above(&capped, cpu, 700_000));
}

/// Clamps are refused on a kernel before uclamp (v5.3).
#[test]
fn clamps_need_a_kernel_with_uclamp() {
    let path = std::env::temp_dir().join(format!("govlab-eas-{}-old.json", std::process::id()));
    std::fs::write(&path, r#"{ "tasks": { "t": { "util_min": 100, "loop": 1, "run": 1000 } } }"#).unwrap();
    let cfg = RunConfig {
        platform: Spec::new("juno-r0"),
        kernel: Spec::new("5.2"),
        workload: Spec::parse(&format!("rtapp:file={}", path.display()), "test").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: 10 * MS,
        seed: 1,
        interval_ns: None,
    };
    let Err(err) = build(cfg.parts().unwrap(), None) else { panic!("clamps accepted on 5.2") };
    let err = err.to_string();
    assert!(err.contains("util_min=100") && err.contains("5.3"), "{err}");
}

/// Fork placement by era on an idle juno-r0 (find_idlest_group): before
/// v5.5 two idle clusters tie on load and the tie goes to the other
/// cluster, so a first task forked from LITTLE CPU 0 starts on a big CPU;
/// from v5.5 the LITTLE cluster's four idle CPUs beat the big one's two and
/// it stays LITTLE. Without EAS, v5.2 leaves it there (its idle previous
/// CPU fits it); with EAS a wakeup brings it to a LITTLE CPU once its
/// util_est fits one (about 130 ms after the fork).
#[test]
fn a_first_fork_leaves_the_parents_cluster_before_v5_5() {
    let json = r#"{ "global": { "calibration": "CPU1" }, "tasks": { "t": { "loop": -1, "run": 3000, "timer": { "ref": "unique", "period": 16000 } } } }"#;
    // WFI only, as LISA runs it (a deeper state's exit latency would count
    // as running time and keep the task from fitting a LITTLE CPU).
    let cpu_of = |kernel: &str| {
        let path = std::env::temp_dir().join(format!("govlab-eas-{}-fork-{}", std::process::id(), kernel.replace([':', '=', ','], "_")));
        std::fs::write(&path, json).unwrap();
        let mut e = engine("juno-r0:deep_idle=off", kernel, &format!("rtapp:file={}", path.display()), "schedutil", 400 * MS);
        e.run(None).unwrap();
        e.tasks.iter().find(|t| &*t.comm == "t").map(|t| t.cpu).unwrap()
    };
    assert!(BIG.contains(&cpu_of("5.2:sched_energy_aware=off")));
    assert!(LITTLE.contains(&cpu_of("5.2")));
    assert!(LITTLE.contains(&cpu_of("6.8:sched_energy_aware=off")));
}

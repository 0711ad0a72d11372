//! Capacity-aware placement on big.LITTLE (sched/capacity.rs): a task too
//! big for a LITTLE CPU ends up on a big one, a small one stays LITTLE, and
//! a symmetric machine's runs do not depend on any of it.

use govlab_core::api::RunConfig;
use govlab_core::metrics::RunResult;
use govlab_core::params::Spec;

fn run(platform: &str, workload: &str, cpufreq: &str, ms: u64) -> RunResult {
    RunConfig {
        platform: Spec::parse(platform, "test").unwrap(),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(workload, "test").unwrap(),
        cpufreq: Spec::parse(cpufreq, "test").unwrap(),
        cpuidle: Spec::parse("menu", "test").unwrap(),
        duration_ns: ms * 1_000_000,
        seed: 1,
        interval_ns: None,
    }
    .run(None, None)
    .unwrap()
}

fn busy_ns(r: &RunResult, cpus: &[usize]) -> u64 {
    r.cpus.iter().filter(|c| cpus.contains(&c.cpu)).map(|c| c.busy_ns).sum()
}

/// Juno: LITTLE CPUs 0, 3, 4, 5 (capacity 446 on r0, 383 on r2), big 1, 2.
const JUNO_LITTLE: [usize; 4] = [0, 3, 4, 5];
const JUNO_BIG: [usize; 2] = [1, 2];

/// One task that never sleeps outgrows a LITTLE CPU (its util passes 356
/// of 446 within tens of ms) and is moved to a big CPU, where it stays.
#[test]
fn heavy_task_runs_on_a_big_cpu() {
    for plat in ["juno-r0", "juno-r2"] {
        let r = run(plat, "cpu-bound:tasks=1", "performance", 1000);
        let big = busy_ns(&r, &JUNO_BIG);
        let little = busy_ns(&r, &JUNO_LITTLE);
        assert!(big > 9 * r.sim_time_ns / 10, "{plat}: big busy {big} ns of {}", r.sim_time_ns);
        assert!(little < r.sim_time_ns / 10, "{plat}: LITTLE busy {little} ns");
    }
}

/// Two always-running tasks on Juno: both big CPUs end up busy (each
/// misfit goes to an idle big CPU), none of the LITTLE ones for long.
#[test]
fn two_heavy_tasks_take_both_big_cpus() {
    let r = run("juno-r0", "cpu-bound:tasks=2", "performance", 1000);
    for cpu in JUNO_BIG {
        let b = busy_ns(&r, &[cpu]);
        assert!(b > 8 * r.sim_time_ns / 10, "cpu {cpu} busy {b} ns");
    }
}

/// A task needing ~3 % of a big CPU fits a LITTLE one: once placed there it
/// is never moved to a big CPU.
#[test]
fn light_task_stays_on_little() {
    for plat in ["juno-r0", "juno-r2", "hikey960", "sd835"] {
        let r = run(plat, "periodic:tasks=1,run_us=300,period_us=10000", "schedutil", 1000);
        let big: Vec<usize> = match plat {
            "juno-r0" | "juno-r2" => JUNO_BIG.to_vec(),
            _ => (4..8).collect(),
        };
        assert_eq!(busy_ns(&r, &big), 0, "{plat}: a light task ran on a big CPU");
        assert!(r.cpus.iter().map(|c| c.busy_ns).sum::<u64>() > 0, "{plat}: nothing ran");
    }
}

/// Heavy periodic tasks (30 ms of work in 40 ms) move to big CPUs on every
/// asymmetric platform, with any governor.
#[test]
fn heavy_periodic_tasks_prefer_big_cpus() {
    for (plat, big) in [("juno-r2", JUNO_BIG.to_vec()), ("hikey960", (4..8).collect()), ("sd835", (4..8).collect())] {
        for gov in ["schedutil", "ondemand"] {
            let r = run(plat, "periodic:tasks=2,run_us=30000,period_us=40000", gov, 1000);
            let total: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
            let on_big = busy_ns(&r, &big);
            assert!(on_big > total * 7 / 10, "{plat} {gov}: {on_big} of {total} ns on big CPUs");
        }
    }
}

/// A CPU's capacity is its throughput at its own highest frequency: the
/// same work at full speed takes capacity(big) / capacity(LITTLE) times
/// longer on a LITTLE CPU (Juno r0: 1024 / 446), not that times the ratio
/// of the clusters' frequencies as well.
#[test]
fn work_at_full_speed_takes_the_capacity_ratio_longer_on_little() {
    let dir = std::env::temp_dir().join(format!("govlab-capacity-work-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let busy_on = |cpu: usize| {
        let path = dir.join(format!("cpu{cpu}.toml"));
        std::fs::write(&path, format!("description = \"fixed work\"\n[[task]]\ncomm = \"w\"\ncpus = [{cpu}]\nops = [{{ run_cycles = 100000000 }}]\n")).unwrap();
        busy_ns(&run("juno-r0", &path.display().to_string(), "performance", 1000), &[cpu]) as f64
    };
    let (big, little) = (busy_on(1), busy_on(0));
    std::fs::remove_dir_all(&dir).unwrap();
    // 1e8 cycles of the biggest type at 1.1 GHz: 90.9 ms.
    assert!((big / 1e6 - 90.9).abs() < 1.0, "big: {big} ns");
    let ratio = little / big;
    assert!((ratio - 1024.0 / 446.0).abs() < 0.02, "LITTLE / big busy time {ratio}, capacity ratio {}", 1024.0 / 446.0);
}

//! PELT against closed forms on whole runs: what the scheduler charges as
//! running time, and who decays an idle CPU's blocked load.

use super::engine::Engine;
use crate::api::testing::ran;
use crate::sim::Time;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// One 1024-capacity CPU at one frequency (so PELT's scales are 1 on every
/// version), a polling state and one idle state whose exit takes
/// `exit_us`.
fn one_cpu(exit_us: u64) -> String {
    format!(
        r#"
name = "pelt-one"
description = "test platform"
driver = "acpi-cpufreq"
hz = 250
[topology]
packages = 1
cpu_numbering = "threads-last"
[[topology.cluster]]
cpu_type = "t"
cores = 1
threads_per_core = 1
freq_domain = "core"
llc = "package"
[package]
uncore_mw = 0.0
[[cpu_type]]
name = "t"
capacity = 1024
transition_latency_us = 10
voltage_slew_mv_per_us = 1.0
ceff_nf = 1.0
leakage_mw_per_v = 0.0
opps = [ {{ khz = 1000000, mv = 800 }} ]
[[cpu_type.idle_state]]
name = "POLL"
exit_latency_us = 0
target_residency_us = 0
power_mw = 1.0
polling = true
[[cpu_type.idle_state]]
name = "C1"
exit_latency_us = {exit_us}
target_residency_us = {exit_us}
power_mw = 0.1
[[device]]
name = "ssd"
queue_depth = 1
read_us = 100
write_us = 100
flush_us = 100
block_kb = 4
mb_per_s = 500
"#
    )
}

fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("govlab-pelt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn run(kernel: &str, platform: &str, rtapp: &str, ns: Time) -> Engine {
    ran(platform, kernel, &format!("rtapp:file={rtapp}"), "performance", ns)
}

/// PELT's util_avg of a task running `run` out of every `period` in the
/// steady state, at the end of a run phase: 1024 (1 − y^run) / (1 − y^period)
/// with y^32 ms = 1/2 (time in 1024 µs periods).
fn peak_util(run_ns: u64, period_ns: u64) -> f64 {
    let y = 0.5_f64.powf(1.0 / 32.0);
    let p = |ns: u64| ns as f64 / 1_024_000.0;
    1024.0 * (1.0 - y.powf(p(run_ns))) / (1.0 - y.powf(p(period_ns)))
}

/// A task woken every 10 ms on an idle CPU whose exit takes 1.5 ms runs
/// 2.5 ms each time: set_next_entity() updates its signal (and its
/// runqueue's) before it becomes current, so the exit is runnable time, not
/// running time, and its util_avg is that of a 25 % task (≈ 274), not of
/// one running from its wakeup (4 ms of 10, ≈ 436), on each PELT form.
#[test]
fn the_wait_before_a_pick_is_not_running_time() {
    let plat = file("one.toml", &one_cpu(1500));
    let json = file("t.json", r#"{ "tasks": { "t": { "loop": -1, "runtime": 2500, "timer": { "ref": "t", "period": 10000 } } } }"#);
    // The run ends 9 ms into a period: the task is asleep, its signal as
    // its dequeue left it.
    let end = 400 * MS + 9 * MS;
    let want = peak_util(2500 * US, 10 * MS);
    let wrong = peak_util(4000 * US, 10 * MS);
    assert!(wrong - want > 100.0);
    // The same task in a task group (its pick goes level by level,
    // set_next_entity for the task and for its group's entity).
    let grouped = file("g.json", r#"{ "tasks": { "t": { "taskgroup": "/g", "loop": -1, "runtime": 2500, "timer": { "ref": "t", "period": 10000 } } } }"#);
    let runs = [("4.14:housekeeping=off", &json), ("5.2:housekeeping=off", &json), ("6.8:housekeeping=off", &json), ("6.8:housekeeping=off", &grouped)];
    for (kernel, rtapp) in runs {
        let e = run(kernel, &plat, rtapp, end);
        let t = e.tasks.iter().position(|t| &*t.comm == "t").unwrap();
        let got = e.tasks[t].avg.util_avg as f64;
        assert!((got - want).abs() < 12.0, "{kernel} {rtapp}: util_avg {got}, closed form {want:.0} (running from the wakeup: {wrong:.0})");
        // The runqueue's own util_avg ran only while the task did, too:
        // at the task's dequeue it held the same, decayed since.
        let cfs = &e.rqs[0].cfs.avg;
        let since = cfs.last_update_time.saturating_sub(e.tasks[t].avg.last_update_time) as f64;
        let want_cfs = want * 0.5_f64.powf(since / 32_768_000.0);
        let got_cfs = cfs.util_avg as f64;
        assert!((got_cfs - want_cfs).abs() < 12.0, "{kernel} {rtapp}: the runqueue's util_avg {got_cfs}, closed form {want_cfs:.0}");
    }
}

/// The runqueue's signal on CPU 2 of the Skylake after a task there ran
/// 20 ms and slept for good, beside a hog on CPU 0, at `ms`.
fn left_cpu(kernel: &str, ms: u64) -> (u64, u64) {
    let json = file(
        "left.json",
        r#"{ "tasks": {
            "hog": { "cpus": [0], "loop": -1, "runtime": 1000 },
            "b": { "cpus": [2], "loop": 1, "runtime": 20000, "sleep": 100000000 }
        } }"#,
    );
    let e = run(kernel, "skylake-e3-1240v5", &json, ms * MS);
    let avg = &e.rqs[2].cfs.avg;
    (avg.util_avg, avg.last_update_time)
}

/// From v4.17 (NOHZ_STATS_KICK) the busy CPU's tick has the idle load
/// balancer decay the tickless CPU's blocked load every LOAD_AVG_PERIOD
/// ms (HZ 250: 8 jiffies, due on the 9th) until it is all gone, then the
/// passes stop; before, nothing decays it while it sleeps.
#[test]
fn idle_blocked_load_decays_from_4_17_only() {
    let (util, last) = left_cpu("6.8:housekeeping=off", 300);
    assert!(last >= 260 * MS, "6.8: CPU 2 last decayed at {} ms", last / MS);
    assert!(util > 0 && util < 200, "6.8: CPU 2's util_avg {util} at 300 ms");
    let (util, last) = left_cpu("6.8:housekeeping=off", 1500);
    assert_eq!(util, 0, "6.8: CPU 2's util_avg at 1.5 s");
    assert!(last < 700 * MS, "6.8: passes went on after the decay, the last at {} ms", last / MS);
    let (util, last) = left_cpu("4.16:housekeeping=off", 300);
    assert!(last < 40 * MS, "4.16: CPU 2 decayed at {} ms", last / MS);
    assert!(util > 200, "4.16: CPU 2's util_avg {util} at 300 ms");
}

/// A task that ran about 50 ms on LITTLE CPU 0 of juno-r0 (affinity {0}), then
/// widens its affinity to {0, 1} and sleeps 200 ms: nothing updates CPU 0's
/// runqueue while the machine sleeps, and at the wakeup its utilisation does
/// not fit CPU 0 (util_est), so it wakes on big CPU 1. Returns its util_avg
/// after a 2 ms run there.
fn woken_onto_big(kernel: &str) -> u64 {
    let json = file(
        "lag.json",
        r#"{ "tasks": { "t": { "loop": 1, "phases": {
            "little": { "cpus": [0], "run": 30000 },
            "wide": { "cpus": [0, 1], "sleep1": 200000, "run": 2000, "sleep2": 1000000 }
        } } } }"#,
    );
    let e = run(kernel, "juno-r0", &json, 310 * MS);
    let t = e.tasks.iter().position(|t| &*t.comm == "t").unwrap();
    assert_eq!(e.tasks[t].cpu, 1, "{kernel}: the task did not wake on big CPU 1");
    e.tasks[t].avg.util_avg
}

/// From v6.0 (e2f3e35f1f5a, migrate_se_pelt_lag) a task woken onto another
/// CPU from an idle one arrives decayed by its sleep; before, it carries
/// the utilisation its old runqueue last saw (about 520 here), the 200 ms
/// sleep undecayed. (5.19 and 6.0 are not supported versions: they resolve
/// to 5.9 and 6.5, the nearest on either side.)
#[test]
fn wakeup_migration_decays_the_sleep_from_6_0() {
    let before = woken_onto_big("5.9:housekeeping=off");
    let after = woken_onto_big("6.5:housekeeping=off");
    // 200 ms are 6.25 half-lives: what is left of any value below 1024 is
    // below 14, and the 2 ms run on CPU 1 adds about 44.
    assert!(after < 80, "6.5: util_avg {after} after the wakeup migration");
    assert!(before > 450, "5.9: util_avg {before} after the wakeup migration");
}


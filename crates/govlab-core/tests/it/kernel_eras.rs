//! The scheduler by kernel version, seen from a governor: PELT's
//! invariance before and after v5.1 (23127296889f), frequency invariance
//! by architecture and option (x86 from v5.7, 1567c3e3467c), util_est from
//! v4.17 (7f65ea42eb00) and remote cpufreq hook calls from v4.14
//! (674e75411fc2).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use govlab_core::api::RunConfig;
use govlab_core::cpufreq::{CpufreqGovernor, Policy, Relation};
use govlab_core::external::ExternalGovernors;
use govlab_core::params::Spec;
use govlab_core::platform::CpuId;

use crate::fixtures::{one_core_platform, temp_file};

/// One hook call as the governor saw it.
#[derive(Debug, Clone, Copy)]
struct Call {
    time_ns: u64,
    cpu: CpuId,
    util: u64,
    invariant: bool,
}

/// A governor that pins the clock at `khz` and records every hook call.
struct Probe {
    khz: u32,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl CpufreqGovernor for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn uses_util_hook(&self) -> bool {
        true
    }
    fn start(&mut self, p: &mut Policy<'_>) {
        p.set_target(self.khz, Relation::L);
    }
    fn update_util(&mut self, p: &mut Policy<'_>, cpu: CpuId, time_ns: u64, _flags: u32) {
        let c = Call { time_ns, cpu, util: p.sched.cpu_util(cpu), invariant: p.sched.freq_invariant() };
        self.calls.lock().unwrap().push(c);
    }
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// 1 and 2 GHz; x86 (acpi-cpufreq), no turbo table, so every invariance
/// but `off` takes 2 GHz as 1024. The firmware asks software to coordinate
/// the cluster's clock (`_PSD` SW_ANY): its CPUs are one policy, so a hook
/// call from one CPU for the other passes `cpufreq_this_cpu_can_update`.
fn platform(cores: u32) -> String {
    let text = one_core_platform(
        "eras",
        250,
        "[ { khz = 1000000, mv = 800 }, { khz = 2000000, mv = 1000 } ]",
        "[[cpu_type.idle_state]]\nname = \"WFI\"\nexit_latency_us = 1\ntarget_residency_us = 1\npower_mw = 1.0\n",
    );
    text.replace("cores = 1", &format!("cores = {cores}"))
        .replace("freq_domain = \"core\"", "freq_domain = \"cluster\"")
        .replacen("driver = \"acpi-cpufreq\"", "driver = \"acpi-cpufreq\"\npsd_coordination = \"sw_any\"", 1)
}

/// Run `workload` (a TOML text) under `kernel` with the clock pinned at
/// `khz`; every hook call.
fn probe(kernel: &str, cores: u32, workload: &str, khz: u32, duration_ms: u64) -> Vec<Call> {
    probe_traced(kernel, cores, workload, khz, duration_ms, None)
}

/// [`probe`], writing the run's trace to `trace`.
fn probe_traced(kernel: &str, cores: u32, workload: &str, khz: u32, duration_ms: u64, trace: Option<&std::path::Path>) -> Vec<Call> {
    // Tests run in parallel: a file per call.
    let n = FILES.fetch_add(1, Ordering::Relaxed);
    let plat = temp_file(&format!("eras-plat-{n}.toml"), &platform(cores));
    let wl = temp_file(&format!("eras-wl-{n}.toml"), workload);
    let cfg = RunConfig {
        platform: Spec::new(plat.to_str().unwrap()),
        kernel: Spec::parse(kernel, "kernel").unwrap(),
        workload: Spec::new(wl.to_str().unwrap()),
        cpufreq: Spec::new("external"),
        cpuidle: Spec::new("menu"),
        duration_ns: duration_ms * 1_000_000,
        seed: 1,
        interval_ns: None,
    };
    let calls = Arc::new(Mutex::new(Vec::new()));
    let c = Arc::clone(&calls);
    let ext = ExternalGovernors {
        cpufreq: Some(Box::new(move |_| Ok(Box::new(Probe { khz, calls: Arc::clone(&c) }) as Box<dyn CpufreqGovernor>))),
        cpuidle: None,
    };
    cfg.run_with(ext, trace, None).unwrap();
    let v = calls.lock().unwrap().clone();
    v
}

static FILES: AtomicUsize = AtomicUsize::new(0);

const HOG: &str = "[[task]]\ncomm = \"hog\"\ncpus = [0]\nops = [ { run = \"2s\", mem = 1.0 } ]\n";

/// The last utilisation the governor read for CPU 0 and whether it was
/// invariant, after 600 ms of an always-running task at half the top
/// frequency.
fn hog_util(kernel: &str) -> (u64, bool) {
    let calls = probe(kernel, 1, HOG, 1_000_000, 600);
    let last = calls.iter().rev().find(|c| c.cpu == 0).expect("hook calls");
    (last.util, last.invariant)
}

/// An always-running task at half the reference frequency: under v5.1+
/// PELT the clock runs at half speed but the task runs all of it, so its
/// utilisation saturates (1024 minus the last period's share); before
/// v5.1 each contribution is halved, so it settles at 512. Without
/// frequency invariance nothing is scaled: saturated in both eras.
#[test]
fn pelt_scales_the_clock_from_5_1_and_each_contribution_before() {
    let (new, inv) = hog_util("6.8:freq_invariance=max");
    assert!(inv);
    assert!(new > 1000, "v6.8 util {new}");
    let (old, inv) = hog_util("4.19:freq_invariance=max");
    assert!(inv);
    assert!((495..=512).contains(&old), "v4.19 util {old}");
}

/// x86 had no frequency invariance before v5.7: 4.19 on an acpi-cpufreq
/// machine reads a saturated, non-invariant utilisation; 5.7 an invariant
/// one (here 1.0 GHz against 2.0 GHz, the top of a part without a turbo
/// table); `freq_invariance=off` turns it off on any version.
#[test]
fn x86_frequency_invariance_by_version_and_option() {
    let (u, inv) = hog_util("4.19");
    assert!(!inv);
    assert!(u > 1000, "4.19 util {u}");
    let (u, inv) = hog_util("5.7");
    assert!(inv);
    assert!(u > 1000, "5.7 util {u}: saturated under clock_pelt");
    let (_, inv) = hog_util("6.8:freq_invariance=off");
    assert!(!inv);
    let (u, inv) = hog_util("4.16:freq_invariance=max");
    assert!(inv);
    assert!((495..=512).contains(&u), "4.16 util {u}");
}

/// A task that runs 8 ms every 40 ms leaves a utilisation estimate: at a
/// wakeup (the hook call the enqueue makes) v4.17+ reads at least the
/// estimate, ~v4.16 only the decayed util_avg.
#[test]
fn util_est_enters_utilisation_from_4_17() {
    let wl = "[[task]]\ncomm = \"p\"\ncpus = [0]\nloop = \"forever\"\nops = [ { run = \"8ms\", mem = 1.0 }, { sleep = \"32ms\" } ]\n";
    // The smallest utilisation read in the last 200 ms: right at a wakeup,
    // after the 32 ms sleep decayed util_avg.
    let low = |kernel: &str| {
        let calls = probe(kernel, 1, wl, 2_000_000, 600);
        calls.iter().filter(|c| c.cpu == 0 && c.time_ns > 400_000_000).map(|c| c.util).min().unwrap()
    };
    // The idle loop stops the tick as 4.16's does: menu before v5.4 keeps
    // it on a machine with one idle state (its state-0 shortcut), and the
    // idle CPU's tick calls would read the decaying util_avg in between.
    let with = low("4.19:freq_invariance=max,idle_tick=stopped");
    let without = low("4.16:freq_invariance=max");
    assert!(with > without + 20, "4.19 low {with}, 4.16 low {without}");
}

/// A task that runs 30 ms once, then 1 ms at a time, every 40 ms. At each
/// wakeup the hook reads the waking task's util_est. From v5.5
/// (UTIL_EST_FASTUP, b8c96361402a) the long run sets the EWMA to its
/// utilisation and the short ones take a quarter of the gap off at a time;
/// on 5.2 the EWMA had risen a quarter of the way only, and `enqueued`
/// drops to the first short run's utilisation at once: the wakeups after
/// short runs read less.
#[test]
fn util_est_ramps_up_at_once_from_5_5() {
    let wl = "[[task]]\ncomm = \"p\"\ncpus = [0]\nloop = \"forever\"\nops = [ { run = \"30ms\", mem = 1.0 }, { sleep = \"10ms\" }, \
        { run = \"1ms\", mem = 1.0 }, { sleep = \"39ms\" }, { run = \"1ms\", mem = 1.0 }, { sleep = \"39ms\" }, \
        { run = \"1ms\", mem = 1.0 }, { sleep = \"39ms\" }, { run = \"1ms\", mem = 1.0 }, { sleep = \"39ms\" } ]\n";
    // The reading at each wakeup: the first call after 5 ms without one
    // (the idle CPU's tick is stopped).
    let wakeups = |kernel: &str| {
        let calls: Vec<Call> = probe(kernel, 1, wl, 2_000_000, 1600).into_iter().filter(|c| c.cpu == 0).collect();
        calls.windows(2).filter(|w| w[1].time_ns > 400_000_000 && w[1].time_ns - w[0].time_ns > 5_000_000).map(|w| w[1].util).collect::<Vec<u64>>()
    };
    // 5.2's menu keeps the tick on this one-state machine (its state-0
    // shortcut, until v5.4): the idle loop stops it, as 5.7's menu does.
    let fast = wakeups("5.7:freq_invariance=max");
    let slow = wakeups("5.2:freq_invariance=max,idle_tick=stopped");
    assert_eq!(fast.len(), slow.len());
    let (f, s): (u64, u64) = (fast.iter().sum(), slow.iter().sum());
    assert!(f > s + 40 * fast.len() as u64, "5.7 {fast:?}, 5.2 {slow:?}");
}

/// A task on CPU 1 woken by a task on CPU 0 while CPU 1 runs a hog: the
/// waker enqueues it remotely (same LLC, busy target). From v4.14 the
/// scheduler calls CPU 1's hook from CPU 0 (a governor of the same policy
/// accepts it): a call for CPU 1 lands at each wakeup time; before, none.
#[test]
fn remote_hook_calls_from_4_14() {
    let wl = "[[channel]]\nname = \"c\"\n\
        [[task]]\ncomm = \"waker\"\ncpus = [0]\nloop = \"forever\"\nops = [ { sleep = \"7ms\" }, { send = \"c\", bytes = 8 } ]\n\
        [[task]]\ncomm = \"wakee\"\ncpus = [1]\nloop = \"forever\"\nops = [ { recv = \"c\" }, { run = \"100us\", mem = 1.0 } ]\n\
        [[task]]\ncomm = \"hog\"\ncpus = [1]\nops = [ { run = \"2s\", mem = 1.0 } ]\n";
    // Hook calls for CPU 1 made while CPU 0 runs the waker: off CPU 1's
    // 4 ms tick grid and at the send times (7 ms apart plus the waker's
    // send cost).
    let remote = |kernel: &str| {
        let calls = probe(kernel, 2, wl, 2_000_000, 300);
        let sends: Vec<u64> = calls.iter().filter(|c| c.cpu == 0).map(|c| c.time_ns).collect();
        calls.iter().filter(|c| c.cpu == 1 && c.time_ns % 4_000_000 != 0 && sends.iter().any(|&s| s.abs_diff(c.time_ns) < 50_000)).count()
    };
    let new = remote("6.8");
    let old = remote("4.8");
    assert!(new >= 10, "6.8: {new} remote calls");
    assert_eq!(old, 0, "4.8: {old} remote calls");
}

/// A queued task pulled to another CPU leaves with its signal
/// (`dequeue_entity` with `DO_DETACH` → `detach_entity_load_avg` →
/// `cfs_rq_util_change`): the source CPU's hook is called at the
/// migration whether or not its signal decayed.
#[test]
fn a_queued_migration_calls_the_source_cpus_hook() {
    // Three tasks that sleep now and then on two CPUs: a CPU left idle
    // pulls a queued task from the other (newidle and periodic balance).
    let wl = "[[task]]\ncomm = \"w\"\ninstances = 3\nloop = \"forever\"\nops = [ { run = \"10ms\", mem = 1.0 }, { sleep = \"3ms\" } ]\n";
    let n = FILES.fetch_add(1, Ordering::Relaxed);
    let path = temp_file(&format!("eras-migrate-{n}.trace"), "");
    let calls = probe_traced("6.8", 2, wl, 2_000_000, 1000, Some(&path));
    let text = std::fs::read_to_string(&path).unwrap();
    // A wakeup's migration (a sleeping task, `remove_entity_load_avg`, no
    // hook) follows its sched_wakeup at the same time; skip those.
    let wakeups: std::collections::HashSet<(u64, String)> = text
        .lines()
        .filter(|l| l.contains("sched_wakeup:"))
        .map(|l| (crate::kernel_hooks::ts_ns(l), pid_of(l)))
        .collect();
    let migrations: Vec<(u64, usize)> = text
        .lines()
        .filter(|l| l.contains("sched_migrate_task:"))
        .filter(|l| !wakeups.contains(&(crate::kernel_hooks::ts_ns(l), pid_of(l))))
        .map(|l| {
            let orig = l.split("orig_cpu=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
            (crate::kernel_hooks::ts_ns(l), orig)
        })
        .collect();
    assert!(!migrations.is_empty(), "no migration to check");
    for (t, from) in &migrations {
        // The trace's timestamps are in µs.
        assert!(
            calls.iter().any(|c| c.cpu == *from && c.time_ns / 1000 == t / 1000),
            "no hook call for CPU {from} at the migration at {t} ns"
        );
    }
}

/// The `pid=` field of a trace line.
fn pid_of(line: &str) -> String {
    line.split(" pid=").nth(1).unwrap().split(' ').next().unwrap().to_string()
}

/// A new task's initial utilisation by version (`post_init_entity_util_avg`,
/// 2b8c41daba32 in v4.7): a task sleeps 20 ms, then forks a child onto its
/// one CPU. From v4.7 the child brings half the CPU's spare capacity (the
/// scaled `se->load.weight` makes the util-per-load term far larger), so the
/// CPU's utilisation at the birth stays well below capacity; before, it
/// brings the full 1024 and the CPU reads as full.
#[test]
fn a_new_tasks_utilisation_by_version() {
    let wl = "[[task]]\ncomm = \"child\"\ntemplate = true\nops = [ { run = \"5ms\", mem = 1.0 } ]\n\n\
        [[task]]\ncomm = \"parent\"\nops = [ { sleep = \"20ms\" }, { fork = \"child\" }, { join = true } ]\n";
    let at_birth = |kernel: &str| {
        let calls = probe(kernel, 1, wl, 2_000_000, 40);
        calls.iter().filter(|c| (20_000_000..20_050_000).contains(&c.time_ns)).map(|c| c.util).max().expect("a call at the fork")
    };
    let old = at_birth("3.15");
    let bounded = at_birth("4.8");
    let new = at_birth("6.8");
    assert_eq!(old, 1024, "3.15: the child brings the full scale");
    assert!(bounded < 900 && new < 900, "4.8 {bounded}, 6.8 {new}: half the spare capacity");
}

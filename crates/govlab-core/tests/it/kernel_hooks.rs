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
pub(crate) fn ts_ns(line: &str) -> u64 {
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
        ..RunConfig::default()
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

/// The same machine with a 20 ms disk read.
fn slow_disk_platform() -> String {
    platform().replace("read_us = 100", "read_us = 20000")
}

/// One hook call: (time ns, cpu, flags, cpu_util of that CPU).
type Call = (u64, usize, u32, u64);

/// Records every hook call.
struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<Call>>>);

impl govlab_core::cpufreq::CpufreqGovernor for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn uses_util_hook(&self) -> bool {
        true
    }
    fn start(&mut self, _p: &mut govlab_core::cpufreq::Policy<'_>) {}
    fn update_util(&mut self, p: &mut govlab_core::cpufreq::Policy<'_>, cpu: usize, time_ns: u64, flags: u32) {
        let util = p.sched.cpu_util(cpu);
        self.0.lock().unwrap().push((time_ns, cpu, flags, util));
    }
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Run `workload_text` on `platform_text` with the [`Recorder`].
fn recorded(platform_text: &str, workload_text: &str, name: &str, ms: u64) -> Vec<Call> {
    use govlab_core::machine::{build, RunParts};
    let p = temp_file(&format!("{name}-plat.toml"), platform_text);
    let plat = govlab_core::platform::load_path(&p).unwrap();
    let wl = temp_file(&format!("{name}.toml"), workload_text);
    let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let parts = RunParts {
        workload: govlab_core::workload::build(&Spec::new(wl.to_str().unwrap())).unwrap(),
        cpufreq: Box::new(Recorder(calls.clone())),
        cpuidle: govlab_core::cpuidle::build(&spec("menu"), &plat).unwrap(),
        duration_ns: ms * 1_000_000,
        seed: 1,
        ctx: govlab_core::kernel::BuildCtx::new(plat, govlab_core::kernel::KernelConfig::default()),
    };
    build(parts, None).unwrap().run(None).unwrap();
    let v = calls.lock().unwrap().clone();
    v
}

/// v6.8 `enqueue_task_fair` adds the waking task's `util_est` before the
/// IOWAIT hook call. A task with an estimate from a 30 ms run waits 20 ms
/// for a read; 10 ms in, another task's wakeup decays the runqueue's
/// signal. At the read's completion the IOWAIT call must see the estimate,
/// as the decayed-signal call right after it does (before the fix it saw
/// the decayed signal alone).
#[test]
fn iowait_call_sees_the_waking_tasks_estimate() {
    let calls = recorded(
        &slow_disk_platform(),
        "[[task]]\ncomm = \"r\"\ncpus = [0]\nops = [ { run = \"30ms\", mem = 1.0 }, { io = \"read\" }, { run = \"5ms\", mem = 1.0 } ]\n\n\
         [[task]]\ncomm = \"b\"\ncpus = [0]\nops = [ { sleep = \"40ms\" }, { run = \"20us\" } ]\n",
        "hook-iowait-order",
        80,
    );
    let iowait = govlab_core::cpufreq::SCHED_CPUFREQ_IOWAIT;
    let &(t, _, _, util_io) = calls.iter().find(|c| c.2 & iowait != 0).expect("an IOWAIT call");
    let &(_, _, _, util_next) = calls
        .iter()
        .find(|c| c.0 == t && c.2 & iowait == 0)
        .expect("the decayed-signal call of the same enqueue");
    assert!(util_next > 0);
    assert_eq!(util_io, util_next, "IOWAIT call at {t} ns");
}

/// Two cores, one policy each, sharing the last-level cache.
fn two_policy_platform() -> String {
    platform().replace("cores = 1", "cores = 2")
}

/// A wakeup onto a busy CPU that shares the waker's cache is enqueued by
/// the waker (v6.8 `ttwu_queue_cond`), so its hook calls for the target are
/// remote; `cpufreq_this_cpu_can_update` (the default rule, schedutil's and
/// dbs's) drops them when the waker is outside the target's policy. Here a
/// task on CPU 0 wakes a task of CPU 1 every 5.15 ms while a hog runs
/// there: CPU 1's hook may only be called by CPU 1 itself, here at its
/// ticks (before the fix, each of those wakeups called it).
#[test]
fn remote_hook_calls_from_outside_the_policy_are_dropped() {
    let mut ops = String::new();
    for _ in 0..10 {
        ops.push_str("{ sleep = \"5100us\" }, { send = \"c\" }, ");
    }
    let mut recv = String::new();
    for _ in 0..10 {
        recv.push_str("{ recv = \"c\" }, { run = \"50us\" }, ");
    }
    let wl = format!(
        "[[channel]]\nname = \"c\"\n\n[[task]]\ncomm = \"hog\"\ncpus = [1]\nops = [ {{ run = \"80ms\", mem = 1.0 }} ]\n\n\
         [[task]]\ncomm = \"w\"\ncpus = [0]\nops = [ {ops}]\n\n\
         [[task]]\ncomm = \"t\"\ncpus = [1]\nops = [ {recv}]\n"
    );
    let calls = recorded(&two_policy_platform(), &wl, "hook-remote", 70);
    let cpu1: Vec<u64> = calls.iter().filter(|c| c.1 == 1).map(|c| c.0).collect();
    // CPU 1's own calls: its 4 ms ticks (the hog keeps it busy), and the
    // start. The wakeups come 5.15 ms apart, never on a tick.
    assert!(cpu1.len() > 10, "{cpu1:?}");
    let off_tick: Vec<u64> = cpu1.into_iter().filter(|t| t % 4_000_000 != 0).collect();
    assert!(off_tick.is_empty(), "remote calls for CPU 1 at {off_tick:?}");
}

// ---- remote calls turned away after they leave state behind (issue 34) ----

/// The mean frequency of `cpu` over the run, kHz (time in state, busy and idle).
fn mean_khz(r: &govlab_core::metrics::RunResult, cpu: usize) -> f64 {
    let tis = &r.cpus[cpu].time_in_state;
    let total: f64 = tis.values().sum();
    tis.iter().map(|(&k, &s)| f64::from(k) * s).sum::<f64>() / total
}

/// A task on CPU 1 reads, runs 2 ms and sleeps 20 ms; its reads complete
/// in the interrupt on CPU 0, which shares CPU 1's cache, so on 5.2 every
/// completion wakes it remotely (the waker enqueues: no wake list within
/// the LLC before v6.0), and CPU 1's per-CPU policy turns the IOWAIT call
/// away.
const REMOTE_IO: &str = "[[task]]\ncomm = \"r\"\ncpus = [1]\nloop = \"forever\"\n\
    ops = [ { io = \"read\" }, { run = \"2ms\", mem = 1.0 }, { sleep = \"20ms\" } ]\n";

/// 5.2 with frequency invariance (x86 had none before v5.7): schedutil's
/// target is then `1.25 x max x util / max`, so a full boost asks for the
/// top frequency, not for 1.25 x the current one.
const INVARIANT_5_2: &str = "5.2:housekeeping=off,freq_invariance=max";

fn remote_io_run(platform_text: &str, name: &str, kernel: &str, cpufreq: &str) -> govlab_core::metrics::RunResult {
    let plat = temp_file(&format!("{name}-plat.toml"), platform_text);
    let wl = temp_file(&format!("{name}-wl.toml"), REMOTE_IO);
    let cfg = RunConfig {
        platform: Spec::new(plat.to_str().unwrap()),
        kernel: spec(kernel),
        workload: Spec::new(wl.to_str().unwrap()),
        cpufreq: spec(cpufreq),
        cpuidle: spec("menu"),
        duration_ns: 500_000_000,
        seed: 1,
        interval_ns: None,
    };
    cfg.run(None, None).unwrap()
}

/// schedutil records the iowait boost and `last_update` before
/// `sugov_should_update_freq` turns a remote call away (v6.8
/// `sugov_update_single_common`; v4.14's `sugov_update_single` in the same
/// order), so the boost a remote IOWAIT wakeup set is applied at CPU 1's
/// next own call within a tick (a tick or the dequeue during its 2 ms
/// run): with `iowait_boost=max` CPU 1 spends time at the top frequency,
/// which its utilisation alone (2 ms in 22) never asks for. Dropping the
/// remote call before any state changes (before this fix) made the two
/// runs identical.
#[test]
fn schedutil_keeps_a_rejected_remote_iowait_boost() {
    let text = two_policy_platform().replace("block_kb = 4", "block_kb = 4\nirq_cpu = 0");
    let off = remote_io_run(&text, "sugov-remote-off", INVARIANT_5_2, "schedutil:iowait_boost=off");
    let max = remote_io_run(&text, "sugov-remote-max", INVARIANT_5_2, "schedutil:iowait_boost=max");
    let at_top = |r: &govlab_core::metrics::RunResult| r.cpus[1].time_in_state.get(&2_000_000).copied().unwrap_or(0.0);
    let (top_off, top_max) = (at_top(&off), at_top(&max));
    assert!(top_max > 3.0 * top_off + 0.005, "CPU 1 at 2 GHz for {top_max} s with the boost, {top_off} s without");
    assert!(mean_khz(&max, 1) > mean_khz(&off, 1));
}

/// intel_pstate with HWP ORs a call's flags into `sched_flags` before its
/// own-CPU check (v6.8 `intel_pstate_update_util_hwp`), so a remote IOWAIT
/// counts at CPU 1's next own call and HWP dynamic boost raises CPU 1's
/// minimum: with `hwp_dynamic_boost=1` CPU 1 runs faster than without.
/// Before the fix the remote call was dropped and the runs were the same.
#[test]
fn hwp_dynamic_boost_counts_a_rejected_remote_iowait() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/platforms/skylake-e3-1240v5.toml");
    let text = std::fs::read_to_string(root).unwrap();
    assert!(text.contains("\nirq_cpu = 0 "), "the Skylake's SATA interrupt goes to CPU 0");
    let off = remote_io_run(&text, "hwp-remote-off", "5.2:housekeeping=off", "intel_pstate:hwp_dynamic_boost=0");
    let on = remote_io_run(&text, "hwp-remote-on", "5.2:housekeeping=off", "intel_pstate:hwp_dynamic_boost=1");
    let (f_off, f_on) = (mean_khz(&off, 1), mean_khz(&on, 1));
    assert!(f_on > f_off * 1.05, "CPU 1 mean {f_on:.0} kHz boosted, {f_off:.0} kHz not");
}

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

//! Replaying govlab's own trace of a run under the same platform and
//! governors reproduces the run's busy time.

use govlab_core::api::{replay, RunArgs, RunConfig};
use govlab_core::params::Spec;
use govlab_core::trace::replay::Wakeups;

// Turbo and HWP off: cpu_frequency records the frequency requested, and
// with turbo the package controller may run the cores lower (fewer turbo
// bins with more cores active), with HWP the hardware chooses; a replay,
// like one from a real trace, sees only the request (docs/traces.md). For
// the same reason the machine is one whose policies are their clocks
// (Broadwell-EP without SMT: a core, a clock, a policy): where policies
// share a clock it runs the highest request of the active ones, which no
// single CPU's cpu_frequency says.
/// A replay's configuration: `platform` under schedutil and menu.
pub fn config(platform: &str) -> RunConfig {
    let args = RunArgs { platform: Some(platform.into()), cpufreq: Some("schedutil".into()), cpuidle: Some("menu".into()), ..RunArgs::default() };
    RunConfig::from_args(args).unwrap()
}

#[test]
fn replay_of_a_runs_trace_reproduces_its_busy_time() {
    let dir = std::env::temp_dir().join(format!("govlab-replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.txt");
    let cfg = RunConfig {
        platform: Spec::parse("broadwell-2s-e5-2698v4:smt=off,turbo=off", "platform").unwrap(),
        workload: Spec::parse("periodic:tasks=6,run_us=1500,period_us=7000", "workload").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: 1_000_000_000,
        ..RunConfig::default()
    };
    let run = cfg.run(Some(&path), None).unwrap();
    let config = &config("broadwell-2s-e5-2698v4:smt=off,turbo=off");
    let out = serde_json::to_value(replay(&path, config, true, Wakeups::Timed, None).unwrap()).unwrap();
    let free = serde_json::to_value(replay(&path, config, false, Wakeups::Timed, None).unwrap()).unwrap();
    let follow = serde_json::to_value(replay(&path, config, true, Wakeups::Follow, None).unwrap()).unwrap();
    assert_eq!(out["tasks"], 6);
    let busy = |out: &serde_json::Value| -> Vec<u64> {
        out["run"]["cpus"].as_array().unwrap().iter().map(|c| c["busy_ns"].as_u64().unwrap()).collect()
    };
    let recorded: Vec<u64> = run.cpus.iter().map(|c| c.busy_ns).collect();
    let (pinned, free, follow) = (busy(&out), busy(&free), busy(&follow));
    let total = |v: &[u64]| v.iter().sum::<u64>() as f64;
    let span = run.sim_time_ns as f64;
    // Pinned, sleeps timed, each stretch of a task on its recorded CPU:
    // busy time per CPU within 4% of the span, and in total within 2% (0.2%
    // measured). Per CPU 3.2% measured (1.0% when a task was allowed on all
    // its CPUs at once): four tasks ran their first burst on another CPU
    // than the rest, and the handover to the part on the new CPU delays the
    // rest of that task by a wakeup there, which shifts how its bursts
    // overlap those of the SMT sibling's task. 4.9% measured since new
    // tasks arrive with the kernel's initial utilisation (issue 21): the
    // run's tasks are born at the start, the replay's at their first
    // recorded event, so their first frequency requests differ.
    for (cpu, (x, y)) in recorded.iter().zip(&pinned).enumerate() {
        assert!((*x as f64 - *y as f64).abs() / span < 0.06, "CPU {cpu}: run {x} ns busy, pinned replay {y} ns");
    }
    // 3.2% measured since issue 21 (0.2% before): the two tasks replayed
    // on CPUs 1 and 5 take ~49 ms more each; the run's tasks arrive with
    // the kernel's initial utilisation, and of a task the replay cuts into
    // one task per CPU only the first part is a new process. Not yet
    // explained in detail.
    assert!((total(&pinned) / total(&recorded) - 1.0).abs() < 0.04, "total busy: run {recorded:?}, pinned replay {pinned:?}");
    // Placed by the simulated scheduler: other CPUs may be chosen (SMT
    // siblings differ), the total busy time stays within 5%.
    assert!((total(&free) / total(&recorded) - 1.0).abs() < 0.05, "total busy: run {recorded:?}, free replay {free:?}");
    // Pinned, following wakers: this workload's tasks are all timer-woken.
    // A timer that fires while another task runs on that CPU is recorded in
    // that task's context, but with the hardirq flag (`d.h.`), so the replay
    // does not take it for the task's wakeup: the replay is the timed one,
    // CPU for CPU. (Without the flags it was taken for one, and per-CPU busy
    // time moved by up to 3.2% of the span.)
    assert_eq!(follow, pinned, "following wakers: run {recorded:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    let timer_wakeups = text.lines().filter(|l| l.contains(" sched_wakeup:") && l.contains("] X.h. ")).count();
    assert!(timer_wakeups > 100, "the run's trace marks its timer wakeups hardirq: {timer_wakeups}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every real recording replays (on an 8-CPU machine, tasks pinned to the
/// CPUs they ran on); each replayed task does some work.
#[test]
fn real_recordings_replay() {
    let real = crate::traces::real_data();
    let config = &config("skylake-e3-1240v5");
    for rel in [
        "trappy/trace_surfaceflinger.html",
        "trappy/trace_idle.dat",
        "lisa/sched_load/trace.dat",
        "lisa/example_rtapp/trace.dat",
        "lisa/trace_txt/trace.txt",
    ] {
        let out = serde_json::to_value(replay(&real.join(rel), config, true, Wakeups::Follow, None).unwrap_or_else(|e| panic!("{rel}: {e}"))).unwrap();
        assert!(out["tasks"].as_u64().unwrap() >= 10, "{rel}: {}", out["tasks"]);
        let busy: f64 = out["run"]["cpus"].as_array().unwrap().iter().map(|c| c["busy_s"].as_f64().unwrap()).sum();
        assert!(busy > 0.0, "{rel}");
    }
}

/// A trace whose tasks never run gives nothing to replay: a clear error.
#[test]
fn a_trace_without_running_tasks_is_an_error() {
    let dir = std::env::temp_dir().join(format!("govlab-replay-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("idle.txt");
    std::fs::write(&path, "cpus=1\n<idle>-0 [000] 1.0: cpu_idle: state=1 cpu_id=0\n<idle>-0 [000] 1.5: cpu_idle: state=4294967295 cpu_id=0\n").unwrap();
    let err = replay(&path, &RunConfig::default(), false, Wakeups::Follow, None).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(err.contains("at least one task that runs"), "{err}");
}

/// A (pid 20) runs 6 ms at 2 GHz on CPU 0 and wakes B (21) 5 ms in; C (22)
/// is woken from idle at 8 ms on CPU 1.
const WAKES: &str = "\
cpus=2
          <idle>-0     [000]     1.000000: cpu_frequency:        state=2000000 cpu_id=0
          <idle>-0     [001]     1.000000: cpu_frequency:        state=2000000 cpu_id=1
          <idle>-0     [000]     1.000000: sched_switch:         swapper/0:0 [120] R ==> a:20 [120]
          <idle>-0     [001]     1.000000: sched_switch:         swapper/1:0 [120] R ==> b:21 [120]
               b-21    [001]     1.001000: sched_switch:         b:21 [120] S ==> swapper/1:0 [120]
               a-20    [000]     1.005000: sched_wakeup:         b:21 [120] success=1 CPU:001
          <idle>-0     [001]     1.005010: sched_switch:         swapper/1:0 [120] R ==> b:21 [120]
               a-20    [000]     1.006000: sched_switch:         a:20 [120] S ==> swapper/0:0 [120]
               b-21    [001]     1.006010: sched_switch:         b:21 [120] S ==> swapper/1:0 [120]
          <idle>-0     [001]     1.008000: sched_wakeup:         c:22 [120] success=1 CPU:001
          <idle>-0     [001]     1.008010: sched_switch:         swapper/1:0 [120] R ==> c:22 [120]
               c-22    [001]     1.009000: sched_switch:         c:22 [120] S ==> swapper/1:0 [120]
          <idle>-0     [000]     1.020000: cpu_idle:             state=1 cpu_id=0
";

/// When each replayed task last started running (ms), replaying `WAKES`
/// pinned on Skylake cores 0 and 1 with the clock fixed at `khz`.
fn last_starts(khz: u32) -> std::collections::BTreeMap<String, f64> {
    use govlab_core::trace::{replay, EventKind};
    let dir = std::env::temp_dir().join(format!("govlab-replay-wakes-{}-{khz}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, out) = (dir.join("wakes.txt"), dir.join("replay.txt"));
    std::fs::write(&src, WAKES).unwrap();
    let trace = govlab_core::trace::read_path(&src).unwrap();
    let tasks = replay::tasks(&trace, 2_000_000, None, replay::Wakeups::Follow);
    let workload = replay::workload(&tasks, "wakes.txt", true, 20_000_000).unwrap();
    let cfg = RunConfig {
        platform: Spec::parse("skylake-e3-1240v5:hwp=off,turbo=off,package_cstates=off", "platform").unwrap(),
        cpufreq: Spec::parse(&format!("userspace:scaling_setspeed={khz}"), "cpufreq").unwrap(),
        cpuidle: Spec::new("menu"),
        duration_ns: 20_000_000,
        // CFS: under EEVDF (6.6+) C, new and on half a request (1.5 ms),
        // has passed its deadline when B wakes beside it at 10 ms on the
        // slow clock, and B preempts it, so C's last start moves; this
        // test is about the replay's timing, not the pick.
        // The recorded runtimes hold the kernel's own paths
        // (machine/kpath.rs): not charged again.
        kernel: Spec::parse("6.5:kpath=off", "kernel").unwrap(),
        ..RunConfig::default()
    };
    cfg.run_workload(Box::new(workload), Some(&out), None).unwrap();
    let replayed = govlab_core::trace::read_path(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut starts = std::collections::BTreeMap::new();
    for e in &replayed.events {
        if let EventKind::SchedSwitch(s) = &e.kind {
            starts.insert(s.next_comm.to_string(), e.ts_ns as f64 / 1e6);
        }
    }
    starts
}

/// A task woken by another follows its waker: at half the recorded clock,
/// A reaches its wakeup of B twice as late, and B runs that much later. C,
/// woken from idle, keeps its recorded time.
#[test]
fn a_task_woken_by_another_follows_it_and_a_timer_woken_one_keeps_its_time() {
    let (fast, slow) = (last_starts(2_000_000), last_starts(1_000_000));
    let (b_fast, b_slow) = (fast["b-21"], slow["b-21"]);
    let (c_fast, c_slow) = (fast["c-22"], slow["c-22"]);
    assert!((b_fast - 5.0).abs() < 0.5, "B at the recorded clock: {b_fast} ms, recorded 5 ms");
    assert!((b_slow - 10.0).abs() < 0.5, "B at half the clock: {b_slow} ms, A's 5 ms of work take 10");
    assert!((c_fast - 8.0).abs() < 0.5 && (c_slow - c_fast).abs() < 0.1, "C: {c_fast} ms, then {c_slow} ms");
}

/// A task asleep when the recording began is on no runqueue: replayed
/// free, it sleeps on the CPU the recording first shows it on until its
/// recorded wakeup and is placed from there (try_to_wake_up →
/// select_task_rq), instead of being runnable at the start, where the
/// first CPU out of idle would pull it and it would begin its sleep there.
/// Here `s` wakes on LITTLE CPU 4 of an idle Juno at 20 ms.
#[test]
fn a_task_asleep_at_the_start_wakes_where_the_recording_shows_it() {
    let text = "cpus=6\n\
        <idle>-0 [000] 1.000000: sched_switch: swapper/0:0 [120] R ==> a:10 [120]\n\
        a-10 [000] 1.002000: sched_switch: a:10 [120] S ==> swapper/0:0 [120]\n\
        <idle>-0 [004] 1.020000: sched_wakeup: s:11 [120] success=1 CPU:004\n\
        <idle>-0 [004] 1.020010: sched_switch: swapper/4:0 [120] R ==> s:11 [120]\n\
        s-11 [004] 1.021000: sched_switch: s:11 [120] S ==> swapper/4:0 [120]\n\
        <idle>-0 [000] 1.030000: cpu_idle: state=0 cpu_id=0\n";
    let (at, cpu) = first_run_of_s(text, "6.8:housekeeping=off");
    assert!(at >= 20_000_000, "s first ran {at} ns into the replay, before its recorded wakeup");
    assert_eq!(cpu, 4, "s woke on CPU {cpu}");
}

/// The same task, its recorded utilisation 473 at that wakeup (LISA's
/// `sched_load_se`): under EAS the CPU it slept on counts that utilisation
/// as a sleeping task's blocked contribution (cpu_util_next, v5.0+), so
/// LITTLE CPU 4 (capacity 446) does not fit it and it wakes on a big CPU,
/// as sched_load's `sudo` did. (Its averages on no runqueue, CPU 4 looked
/// nearly idle to find_energy_efficient_cpu, which kept it there.)
#[test]
fn a_big_task_asleep_at_the_start_wakes_on_a_cpu_it_fits_under_eas() {
    let text = "cpus=6\n\
        <idle>-0 [000] 1.000000: sched_switch: swapper/0:0 [120] R ==> a:10 [120]\n\
        a-10 [000] 1.002000: sched_switch: a:10 [120] S ==> swapper/0:0 [120]\n\
        <idle>-0 [004] 1.019990: sched_load_se: cpu=4 path=(null) comm=s pid=11 load=1007 util=473\n\
        <idle>-0 [004] 1.020000: sched_wakeup: s:11 [120] success=1 CPU:004\n\
        <idle>-0 [004] 1.020010: sched_switch: swapper/4:0 [120] R ==> s:11 [120]\n\
        s-11 [004] 1.021000: sched_switch: s:11 [120] S ==> swapper/4:0 [120]\n\
        <idle>-0 [000] 1.030000: cpu_idle: state=0 cpu_id=0\n";
    for kernel in ["6.8:housekeeping=off", "5.2:housekeeping=off"] {
        let (at, cpu) = first_run_of_s(text, kernel);
        assert!(at >= 20_000_000, "{kernel}: s first ran {at} ns into the replay");
        assert!([1, 2].contains(&cpu), "{kernel}: s woke on LITTLE CPU {cpu}");
    }
}

/// Replay `text` (a Juno r0 recording) free under `kernel`: when and on
/// which CPU the task `s` (pid 11) first ran, ns from the start.
fn first_run_of_s(text: &str, kernel: &str) -> (u64, u32) {
    use govlab_core::trace::{read_path, replay as rp, EventKind};
    // A directory of its own per call: two tests replay under the same
    // kernel at once.
    let rec = crate::fixtures::temp_file("rec.txt", text);
    let out = rec.with_file_name("replay.txt");
    let trace = read_path(&rec).unwrap();
    let mut cfg = config("juno-r0");
    let p = govlab_core::platform::load_named(&cfg.platform).unwrap();
    let tasks = rp::tasks(&trace, p.cpu_types[0].base_khz, Some(&p), Wakeups::Follow);
    let w = rp::workload(&tasks, "rec.txt", false, 30_000_000).unwrap();
    cfg.duration_ns = 30_000_000;
    cfg.kernel = Spec::parse(kernel, "kernel").unwrap();
    cfg.run_workload(Box::new(w), Some(&out), None).unwrap();
    let replayed = read_path(&out).unwrap();
    std::fs::remove_dir_all(rec.parent().unwrap()).unwrap();
    let (t0, _) = replayed.span_ns();
    replayed
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::SchedSwitch(s) if s.next_comm.starts_with("s-11") => Some((e.ts_ns - t0, e.cpu)),
            _ => None,
        })
        .expect("s runs in the replay")
}

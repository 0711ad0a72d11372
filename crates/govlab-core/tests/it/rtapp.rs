//! rt-app files as users have them: the examples shipped in `data/rt-app/`
//! load and run, and what govlab cannot model is refused by name.

use std::path::PathBuf;

use govlab_core::api::RunConfig;
use govlab_core::metrics::RunResult;
use govlab_core::params::Spec;

use crate::fixtures::temp_file;

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/rt-app")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn run_with(workload: &str, cpufreq: &str, ms: u64) -> govlab_core::error::Result<RunResult> {
    RunConfig {
        platform: Spec::new("skylake-e3-1240v5"),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(workload, "test")?,
        cpufreq: Spec::parse(cpufreq, "test")?,
        cpuidle: Spec::new("menu"),
        duration_ns: ms * 1_000_000,
        seed: 1,
        interval_ns: None,
    }
    .run(None, None)
}

fn run(file: &str, ms: u64) -> RunResult {
    run_with(&format!("rtapp:file={}", data(file)), "schedutil", ms).unwrap()
}

fn metric(r: &RunResult, name: &str) -> f64 {
    r.metrics[name].as_f64().unwrap()
}

#[test]
fn shipped_examples_load_and_run() {
    for f in [
        "mp3-short.json",
        "browser-short.json",
        "video-short.json",
        "spreading-tasks.json",
        "camera-short.json",
        "tutorial/example1.json",
        "tutorial/example2.json",
        "tutorial/example3.json",
        "tutorial/example4.json",
        "tutorial/example7.json",
        "tutorial/example9.json",
    ] {
        let r = run(f, 500);
        assert_eq!(r.primary_metric.name, "run_stretch", "{f}");
        let s = metric(&r, "run_stretch");
        assert!(s >= 0.99, "{f}: run events faster than calibrated ({s})");
        assert!(r.cpus.iter().map(|c| c.busy_s).sum::<f64>() > 0.0, "{f}: nothing ran");
    }
}

#[test]
fn periodic_task_runs_its_duty_cycle() {
    // example2: run 10 ms every 100 ms (timer). Over 1 s: 10 periods, 10 %
    // busy at the calibration frequency (more at lower frequencies).
    let r = run_with(&format!("rtapp:file={}", data("tutorial/example2.json")), "performance", 1_000).unwrap();
    assert!((metric(&r, "run_count") - 10.0).abs() < 0.5, "{}", metric(&r, "run_count"));
    let busy: f64 = r.cpus.iter().map(|c| c.busy_s).sum();
    assert!((0.095..0.115).contains(&busy), "busy {busy} s");
    assert!(metric(&r, "timer_misses") < 0.5);
}

#[test]
fn run_is_fixed_work_and_runtime_fixed_time() {
    let w = |event: &str| {
        temp_file(
            &format!("{event}.json"),
            &format!("{{ \"tasks\": {{ \"t\": {{ \"loop\": 5, \"{event}\": 10000, \"sleep\": 10000 }} }} }}"),
        )
    };
    let stretch = |event: &str, gov: &str| {
        let r = run_with(&format!("rtapp:file={}", w(event).display()), gov, 1_000).unwrap();
        metric(&r, "run_stretch")
    };
    // `run` is calibrated at the highest frequency (3.9 GHz): at 800 MHz it
    // takes 3.9/0.8 as long. `runtime` takes its time at any frequency.
    let slow_run = stretch("run", "userspace:scaling_setspeed=800000");
    assert!((slow_run - 3.9 / 0.8).abs() < 0.1, "run stretch {slow_run}");
    let slow_runtime = stretch("runtime", "userspace:scaling_setspeed=800000");
    assert!((slow_runtime - 1.0).abs() < 0.01, "runtime stretch {slow_runtime}");
}

#[test]
fn barrier_makes_the_early_task_wait() {
    // example7 (runtime events, fixed time): both tasks leave FIRST at 3 ms
    // (task0: 1 + 2; task1: 2), SECOND at 6 (task0 5, task1 6), THIRD at 9
    // (task0 9, task1 8): a 9 ms loop for both, though alone task0 would
    // loop every 8 ms and task1 every 7. Over 90 ms at most 10 loops of 3
    // runtime events each per task, fewer by the wakeup latencies.
    let r = run_with(&format!("rtapp:file={}", data("tutorial/example7.json")), "performance", 90).unwrap();
    let runs = metric(&r, "run_count");
    assert!((51.0..=60.0).contains(&runs), "{runs} run events");
}

#[test]
fn suspend_and_resume_alternate_two_threads() {
    // example4: two threads run 10 ms and wake each other in turn: one
    // thread runs at a time.
    let r = run_with(&format!("rtapp:file={}", data("tutorial/example4.json")), "performance", 1_000).unwrap();
    let busy: f64 = r.cpus.iter().map(|c| c.busy_s).sum();
    assert!(busy < 1.05, "busy {busy} s: the two threads overlapped");
    assert!(busy > 0.5, "busy {busy} s: the ping-pong stalled");
}

#[test]
fn a_resume_before_the_suspend_is_lost() {
    let case = |name: &str, waker_sleep_us: u32| {
        let text = format!(
            r#"{{ "tasks": {{
                "waker": {{ "loop": 1, "sleep": {waker_sleep_us}, "resume": "sleeper", "run": 1000 }},
                "sleeper": {{ "loop": 1, "sleep": 5000, "suspend": "sleeper", "run": 1000 }} }} }}"#
        );
        let f = temp_file(name, &text);
        let r = run_with(&format!("rtapp:file={}", f.display()), "performance", 50).unwrap();
        metric(&r, "run_count")
    };
    // The sleeper suspends at 5 ms: a resume at 10 ms wakes it, one at
    // 1 ms finds nobody waiting and is lost (a condition variable has no
    // memory), so the sleeper never runs.
    assert!((case("resume-late.json", 10_000) - 2.0).abs() < 0.5);
    assert!((case("resume-early.json", 1_000) - 1.0).abs() < 0.5);
}

#[test]
fn fork_starts_a_thread() {
    // example9 over 500 ms: thread1 (no loop: forever) runs 10 ms, sleeps
    // 10 ms from the start: ~25 runs; thread3 forks a second thread1 at once
    // (~25 runs more), runs 10 + sleeps 10, forks thread2 (instance 0: only
    // forked) at 20 ms, whose 20 + 20 ms loop gives ~12 runs, then runs 20
    // and exits (2 runs). Without the forks: ~27.
    let r = run_with(&format!("rtapp:file={}", data("tutorial/example9.json")), "performance", 500).unwrap();
    let n = metric(&r, "run_count");
    assert!((58.0..=68.0).contains(&n), "{n} run events");
}

#[test]
fn refusals_name_the_file_and_the_key() {
    let cases = [
        (r#"{ "tasks": { "t": { "exec": 5000, "lock_order": ["m"] } } }"#, "tasks.t.lock_order[0]"),
        (r#"{ "tasks": { "t": { "exec": 5000, "period": 1000 } } }"#, "tasks.t.period"),
        (r#"{ "resources": { "m": {}, "w": { "type": "wait" } }, "tasks": { "t": { "exec": 50, "lock_order": ["w"] } } }"#, "no mutex before it"),
        (r#"{ "resources": { "s": { "type": "signal", "target": "w" }, "w": { "type": "wait" } }, "tasks": { "t": { "exec": 50 } } }"#, "resources.s.target"),
        (r#"{ "resources": { "r": { "type": "run" } }, "tasks": { "t": { "exec": 50, "lock_order": ["r"], "resources": { "r": { "duration": 60 } } } } }"#, "more than exec"),
        (r#"{ "tasks": { "t": { "period": 24000, "run": 10 } } }"#, "tasks.t.period"),
        (r#"{ "tasks": { "t": { "policy": "SCHED_FIFO", "priority": 100, "run": 10 } } }"#, "tasks.t.priority"),
        (r#"{ "tasks": { "t": { "policy": "SCHED_DEADLINE", "dl-runtime": 20, "dl-period": 10, "run": 10 } } }"#, "tasks.t.dl-runtime"),
        (r#"{ "global": { "duration": 5 } }"#, "fragment"),
        (r#"{ "tasks": { "t": { "run": "x" } } }"#, "tasks.t.run"),
        (r#"{ "tasks": { "t": { "run": 10 } }, "global": { "io_device": "/tmp/f" }, "x": 1 }"#, "x"),
        (r#"{ "tasks": { "t": { "fork": "nobody", "run": 10 } } }"#, "tasks.t.fork"),
    ];
    for (i, (text, key)) in cases.iter().enumerate() {
        let f = temp_file(&format!("bad{i}.json"), text);
        let e = run_with(&format!("rtapp:file={}", f.display()), "performance", 10).unwrap_err().to_string();
        assert!(e.contains(&format!("bad{i}.json")) && e.contains(key), "case {i}: {e}");
    }
    // Syntax errors carry the line.
    let f = temp_file("syntax.json", "{\n \"tasks\": {\n  \"t\": { \"run\" 10 }\n }\n}");
    let e = run_with(&format!("rtapp:file={}", f.display()), "performance", 10).unwrap_err().to_string();
    assert!(e.contains("syntax.json") && e.contains('3'), "{e}");
}

#[test]
fn fifo_runs_as_cfs_when_asked() {
    let w = format!("rtapp:file={},rt_as_cfs=on", data("dvfs.json"));
    // dvfs.json: CPU 1, 10 loops of a 1.2 s timer then a 0.9 s run.
    let r = run_with(&w, "performance", 3_000).unwrap();
    assert!(r.cpus[1].busy_s > 0.85, "CPU 1 busy {} s", r.cpus[1].busy_s);
    // Without rt_as_cfs it runs as SCHED_FIFO.
    assert!(run_with(&format!("rtapp:file={}", data("dvfs.json")), "performance", 10).is_ok());
}

/// Every rt-app file of the real recordings in data/real: each runs, or is refused with an error naming
/// the file (never a panic).
#[test]
fn shared_real_files_run_or_are_refused_by_name() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let real = govlab_core::trace::real_data_dir(&root).expect("data/real in the repository");
    let mut files = Vec::new();
    for dir in ["rt-app", "rt-app/tutorial", "rt-app/cpufreq_governor_efficiency", "wa-rt-app"] {
        let Ok(entries) = std::fs::read_dir(real.join(dir)) else { continue };
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")));
    }
    files.sort();
    let mut ran = 0;
    for f in &files {
        match run_with(&format!("rtapp:file={},rt_as_cfs=on", f.display()), "schedutil", 200) {
            Ok(_) => ran += 1,
            Err(e) => {
                let name = f.file_name().unwrap().to_str().unwrap();
                assert!(e.to_string().contains(name), "{}: {e}", f.display());
            }
        }
    }
    assert!(ran >= 3, "only {ran} of {} files ran", files.len());
}

#[test]
fn counts_and_times_above_their_limits_are_refused_at_load() {
    // Issue 16: an instance of 10^9 allocated gigabytes; a run of 10^17 µs
    // overflowed to runs of 0 µs.
    let cases = [
        (r#"{ "tasks": { "t": { "instance": 1000000000, "run": 10 } } }"#, "tasks.t.instance", "0..=100000 threads"),
        (r#"{ "tasks": { "a": { "instance": 60000, "run": 10 }, "b": { "instance": 60000, "run": 10 } } }"#, "tasks.b.instance", "100000 threads in all"),
        (r#"{ "tasks": { "t": { "run": 100000000000000000 } } }"#, "tasks.t.run", "0..=1000000000000 µs"),
        (r#"{ "tasks": { "t": { "runtime": 10, "sleep": 1000000000001 } } }"#, "tasks.t.sleep", "0..=1000000000000 µs"),
        (r#"{ "tasks": { "t": { "delay": 100000000000000000, "run": 10 } } }"#, "tasks.t.delay", "µs"),
        (r#"{ "tasks": { "t": { "run": 10, "timer": { "ref": "a", "period": 100000000000000000 } } } }"#, "tasks.t.timer.period", "µs"),
        (r#"{ "tasks": { "t": { "mem": 2000000000000, "run": 10 } } }"#, "tasks.t.mem", "bytes"),
    ];
    for (i, (text, key, range)) in cases.iter().enumerate() {
        let f = temp_file(&format!("limit{i}.json"), text);
        let e = run_with(&format!("rtapp:file={}", f.display()), "performance", 10).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(range), "case {i}: {e}");
    }
    // At the limit, a file loads.
    let f = temp_file("at_limit.json", r#"{ "tasks": { "t": { "instance": 2, "run": 1000000000000 } } }"#);
    run_with(&format!("rtapp:file={}", f.display()), "performance", 1).unwrap();
}

#[test]
fn workload_file_counts_and_rates_above_their_limits_are_refused_at_load() {
    // Issue 16: a source rate of 1e15 reached 7 GB before anything ran.
    let server = "[[channel]]\nname = \"q\"\n[[task]]\ncomm = \"srv\"\nloop = \"forever\"\nops = [ { recv = \"q\" }, { run = \"10us\" } ]\n";
    let cases = [
        (format!("{server}[[source]]\nname = \"s\"\nchannel = \"q\"\nrate = 1e15\n"), "at most 1000000 per second"),
        (server.replace("comm = \"srv\"", "comm = \"srv\"\ninstances = 100001"), "1..=100000 threads"),
        (format!("{server}[[task]]\ncomm = \"io\"\nops = [ {{ io = \"read\", bytes = 2000000000000 }} ]\n"), "bytes"),
        (format!("{server}[[task]]\ncomm = \"w\"\nops = [ {{ sleep = \"2000000s\" }} ]\n"), "at most 1000000 s"),
    ];
    for (i, (text, range)) in cases.iter().enumerate() {
        let f = temp_file(&format!("limit{i}.toml"), text);
        let e = run_with(&f.display().to_string(), "performance", 10).unwrap_err().to_string();
        assert!(e.contains(&format!("limit{i}.toml")) && e.contains(range), "case {i}: {e}");
    }
}

/// Every rt-app file of data/real that is a complete workload runs; the
/// merge fragments and the pre-2015 grammar are refused saying so.
#[test]
fn every_real_rtapp_file_that_is_a_workload_runs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/real");
    let mut files = Vec::new();
    for dir in ["rt-app", "rt-app/tutorial", "rt-app/cpufreq_governor_efficiency", "rt-app/merge", "wa-rt-app"] {
        for f in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert_eq!(files.len(), 31);
    let (mut ran, mut fragments, mut old) = (0, 0, 0);
    for f in &files {
        match run_with(&format!("rtapp:file={}", f.display()), "schedutil", 200) {
            Ok(_) => ran += 1,
            Err(e) if e.to_string().contains("fragment") => fragments += 1,
            Err(e) if e.to_string().contains("pre-v1.0") => old += 1,
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    // The merge/ thread pieces are fragments (data/real/rt-app/SOURCE.md):
    // their resources are in merge/resources.json. The one complete file in
    // the pre-v1.0 grammar, wa-rt-app/taskset.json, runs converted.
    assert_eq!((ran, fragments, old), (25, 6, 0));
}

/// wa-rt-app/taskset.json, rt-app's pre-v1.0 grammar: ThreadA (CPU 0, nice
/// -19) runs 5 ms every 24 ms (r0 1 ms, then trig1, then 4 ms); ThreadB
/// waits for trig1 each iteration, runs 0.3 ms, triggers ThreadC, and runs
/// on 3.7 ms in its two-loop phase2; ThreadC runs 1 + 0.15 ms then wakes
/// ThreadD (sync3), which runs 0.3 ms and wakes ThreadC back.
#[test]
fn pre_v1_taskset_chains_its_threads_on_thread_a_period() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/real/wa-rt-app/taskset.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let runs = |name: &str, text: &str| {
        let f = temp_file(name, text);
        let r = run_with(&format!("rtapp:file={}", f.display()), "performance", 240).unwrap();
        (metric(&r, "run_count"), metric(&r, "timer_misses"), r)
    };
    // 240 ms: ten periods of ThreadA. Run events per iteration: A 2 (r0 and
    // the rest), B 1 in phase1 and 2 in phase2 (p1 p2 p2 p1 …: 16 in ten),
    // C 2, D 1: 20 + 16 + 20 + 10 = 66 once every chain completes.
    let (n, misses, r) = runs("taskset.json", &text);
    assert!((64.0..=66.0).contains(&n), "{n} run events");
    assert!(misses < 0.5, "ThreadA missed {misses} periods");
    // ThreadA, pinned to CPU 0, runs 5 of every 24 ms there: 50 ms (plus
    // what the unpinned threads run there).
    let busy0 = r.cpus[0].busy_s;
    assert!((0.05..0.07).contains(&busy0), "CPU 0 busy {busy0} s");
    // Without ThreadA's trig1, ThreadB never wakes, so neither do C and D:
    // only ThreadA's 20 run events remain.
    let untriggered = text.replacen("\"r0\",\n                \"trig1\"", "\"r0\"", 1);
    assert_ne!(untriggered, text);
    let (n, _, _) = runs("taskset-untriggered.json", &untriggered);
    assert!((19.0..=20.0).contains(&n), "{n} run events without trig1");
    // ThreadA's period sets the chain's: at 48 ms instead of 24, half the
    // iterations (5 of A, B p1 p2 p2 p1 p2 = 8, C 10, D 5: 33).
    let slower = text.replacen("\"period\": 24000,\n            \"priority\": -19", "\"period\": 48000,\n            \"priority\": -19", 1);
    assert_ne!(slower, text);
    let (n, misses, _) = runs("taskset-48ms.json", &slower);
    assert!((31.0..=33.0).contains(&n), "{n} run events at a 48 ms period");
    assert!(misses < 0.5);
}

/// SCHED_IDLE is the fair class at WEIGHT_IDLEPRIO, 3 (kernel/sched/sched.h):
/// beside a nice-0 hog on one CPU it gets 3/1027 of the time, a fifth of what
/// nice 19 (weight 15) gets.
#[test]
fn sched_idle_runs_at_the_idle_weight_not_nice_19() {
    let share = |policy: &str| -> f64 {
        let f = temp_file(
            &format!("idle-{}.json", policy.replace(['"', ':', ' ', ','], "")),
            &format!(r#"{{ "tasks": {{ "hog": {{ "cpus": [0], "run": 1000 }}, "bg": {{ "cpus": [0], {policy}, "run": 1000 }} }} }}"#),
        );
        let cfg = RunConfig {
            platform: Spec::new("skylake-e3-1240v5"),
            kernel: Spec::parse("6.8:housekeeping=off", "test").unwrap(),
            workload: Spec::parse(&format!("rtapp:file={}", f.display()), "test").unwrap(),
            cpufreq: Spec::new("performance"),
            cpuidle: Spec::new("menu"),
            duration_ns: 4_000_000_000,
            seed: 1,
            interval_ns: None,
        };
        let (_, trace) = cfg.run_trace(None).unwrap();
        let (mut since, mut ran_ns) = (None, 0u64);
        for e in &trace.events {
            if let govlab_core::trace::EventKind::SchedSwitch(s) = &e.kind {
                if &*s.prev_comm == "bg" {
                    ran_ns += e.ts_ns - since.take().unwrap_or(e.ts_ns);
                }
                if &*s.next_comm == "bg" {
                    since = Some(e.ts_ns);
                }
            }
        }
        ran_ns as f64 / 4e9
    };
    let idle = share(r#""policy": "SCHED_IDLE""#);
    let nice19 = share(r#""policy": "SCHED_OTHER", "priority": 19"#);
    assert!(idle < 0.006 && idle > 0.0, "SCHED_IDLE share {idle:.4}");
    assert!(nice19 > 0.010, "nice 19 share {nice19:.4}");
}

/// `global.ftrace` makes the threads write rt-app's trace_marker lines
/// (rt-app src/rt-app.c: rtapp_main, rtapp_task, rtapp_loop around each
/// phase iteration with its counters, rtapp_event before each event with
/// its index, resource_t number and key), which LISA's rt-app analysis
/// reads; without it, none.
#[test]
fn ftrace_writes_rt_apps_markers() {
    let json = |ftrace: &str| {
        format!(
            r#"{{ "global": {{ "calibration": "CPU0" {ftrace} }}, "tasks": {{ "t": {{ "loop": 2, "phases": {{
                "a": {{ "loop": 2, "run": 1000, "timer": {{ "ref": "unique", "period": 4000 }} }},
                "b": {{ "run": 500, "sleep1": 100 }} }} }} }} }}"#
        )
    };
    let prints = |text: String| -> Vec<String> {
        let dir = std::env::temp_dir().join(format!("govlab-rtapp-ftrace-{}.json", std::process::id()));
        std::fs::write(&dir, text).unwrap();
        let cfg = govlab_core::api::RunConfig {
            platform: govlab_core::params::Spec::new("skylake-e3-1240v5"),
            kernel: govlab_core::params::Spec::new("6.8"),
            workload: govlab_core::params::Spec::parse(&format!("rtapp:file={}", dir.display()), "test").unwrap(),
            cpufreq: govlab_core::params::Spec::new("performance"),
            cpuidle: govlab_core::params::Spec::new("menu"),
            duration_ns: 100_000_000,
            seed: 1,
            interval_ns: None,
        };
        let (_, trace) = cfg.run_trace(None).unwrap();
        trace
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                govlab_core::trace::EventKind::Print { message } if message.starts_with("rtapp_") => Some(message.to_string()),
                _ => None,
            })
            .collect()
    };
    let lines = prints(json(r#", "ftrace": "main,task,loop,event""#));
    let want_head = [
        "rtapp_main: event=start",
        "rtapp_task: event=start",
        "rtapp_loop: event=start thread_loop=0 phase=0 phase_loop=0",
        "rtapp_event: id=0 type=6 desc=run",
        "rtapp_event: id=1 type=10 desc=timer",
        "rtapp_loop: event=end thread_loop=0 phase=0 phase_loop=0",
        "rtapp_loop: event=start thread_loop=0 phase=0 phase_loop=1",
    ];
    let head: Vec<&str> = lines.iter().map(String::as_str).filter(|l| !l.contains("clock_ref")).take(want_head.len()).collect();
    assert_eq!(head, want_head);
    assert!(lines.iter().any(|l| l.starts_with("rtapp_main: event=clock_ref data=")));
    assert!(lines.contains(&"rtapp_event: id=1 type=5 desc=sleep1".to_string()));
    assert!(lines.contains(&"rtapp_loop: event=end thread_loop=1 phase=1 phase_loop=0".to_string()));
    assert_eq!(lines.last().map(String::as_str), Some("rtapp_task: event=end"));
    assert!(prints(json("")).is_empty());
    assert!(prints(json(r#", "ftrace": "loop""#)).iter().all(|l| l.starts_with("rtapp_loop: ")));
}

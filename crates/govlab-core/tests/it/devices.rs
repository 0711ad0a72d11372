//! The storage device model: flushes are merged as blk-flush merges them,
//! and a non-queued (SATA) flush waits for the device to drain and holds
//! back the requests behind it.

use govlab_core::api::RunConfig;
use govlab_core::params::Spec;

use crate::fixtures::{slow_rail_platform, temp_file};

/// The one-CPU test platform with a device of fixed service times: a 4 KiB
/// write takes 100 µs, 1 MB more takes 2000 µs, a flush 1000 µs.
fn platform(name: &str, flush_queued: bool) -> String {
    let text = slow_rail_platform(700).replace(
        "flush_us = 100",
        &format!("flush_us = 1000\nflush_queued = {flush_queued}"),
    );
    let text = text.replace("queue_depth = 1", "queue_depth = 4").replace("mb_per_s = 500", "mb_per_s = 500\nservice_cv = 0.0");
    let path = temp_file(&format!("dev-plat-{name}.toml"), &text);
    path.to_str().unwrap().to_string()
}

/// `name` keeps the workload files of tests running in parallel apart.
fn run(name: &str, platform: String, workload: &str) -> govlab_core::metrics::RunResult {
    run_on(name, platform, "6.8", workload)
}

fn run_on(name: &str, platform: String, kernel: &str, workload: &str) -> govlab_core::metrics::RunResult {
    let wl = temp_file(&format!("dev-{name}.toml"), workload);
    RunConfig {
        platform: Spec::new(platform),
        kernel: Spec::new(kernel),
        workload: Spec::new(wl.to_str().unwrap()),
        cpufreq: Spec::new("performance"),
        cpuidle: Spec::new("ladder"),
        duration_ns: 100_000_000,
        seed: 1,
        interval_ns: None,
    }
    .run(None, None)
    .unwrap()
}

fn max_us(r: &govlab_core::metrics::RunResult, series: &str) -> f64 {
    r.metrics[&format!("{series}_max_us")].as_f64().unwrap()
}

#[test]
fn flushes_submitted_during_a_flush_share_the_next() {
    let w = r#"
[[series]]
name = "flush"
[[task]]
comm = "f"
instances = 4
ops = [ { mark = true }, { io = "flush" }, { record = "flush", since = "mark" } ]
"#;
    for queued in [false, true] {
        let name = format!("merge-{queued}");
        let r = run(&name, platform(&name, queued), w);
        assert!(r.finished);
        // The first flush is issued at once; the three submitted while it
        // runs cannot be covered by it and share the next one: two device
        // flushes in a row, not four.
        let m = max_us(&r, "flush");
        assert!((2000.0..2010.0).contains(&m), "queued={queued}: max {m} µs");
        let mean = r.metrics["flush_mean_us"].as_f64().unwrap();
        assert!((1750.0..1760.0).contains(&mean), "queued={queued}: mean {mean} µs");
    }
}

/// A 1 MB write at 0, a flush at 100 µs, a 4 KiB write at 200 µs.
const WRITE_FLUSH_WRITE: &str = r#"
[[series]]
name = "flush"
[[series]]
name = "small"
[[task]]
comm = "big"
ops = [ { io = "write", bytes = 1004096 } ]
[[task]]
comm = "sync"
start = "100us"
ops = [ { mark = true }, { io = "flush" }, { record = "flush", since = "mark" } ]
[[task]]
comm = "small"
start = "200us"
ops = [ { mark = true }, { io = "write", bytes = 4096 }, { record = "small", since = "mark" } ]
"#;

#[test]
fn sata_flush_waits_for_the_drain_and_holds_later_requests() {
    let r = run("sata", platform("sata", false), WRITE_FLUSH_WRITE);
    // The flush starts when the big write ends (2100 µs) and ends at 3100.
    let f = max_us(&r, "flush");
    assert!((2999.0..3010.0).contains(&f), "flush {f} µs");
    // The small write queues behind the flush: issued at 3100, done at 3200.
    let s = max_us(&r, "small");
    assert!((2999.0..3010.0).contains(&s), "small write {s} µs");
}

#[test]
fn queued_flush_runs_beside_other_requests() {
    let r = run("nvme", platform("nvme", true), WRITE_FLUSH_WRITE);
    let f = max_us(&r, "flush");
    assert!((999.0..1010.0).contains(&f), "flush {f} µs");
    let s = max_us(&r, "small");
    assert!((99.0..110.0).contains(&s), "small write {s} µs");
}

/// A REQ_PREFLUSH|REQ_FUA write at 0 on an idle SATA device (flush 1000 µs,
/// write 100 µs, non-queued flush), a 4 KiB write at 1150 µs: its pre-flush
/// ends at 1000 and its write is issued then. Emulated (`fua = "none"`, and
/// libata before v6.2), the write ends at 1100 and the post-flush runs
/// alone to 2100, holding the small write until then; as a FUA write
/// (`native`; libata from v6.2, whose first modelled kernel is 6.5) the write takes a write and a flush
/// (1000-2100) as an NCQ command, beside which the small write runs.
const FUA_THEN_WRITE: &str = r#"
[[series]]
name = "commit"
[[series]]
name = "small"
[[task]]
comm = "jbd2"
ops = [ { mark = true }, { io = "fua" }, { record = "commit", since = "mark" } ]
[[task]]
comm = "writer"
start = "1150us"
ops = [ { mark = true }, { io = "write" }, { record = "small", since = "mark" } ]
"#;

#[test]
fn a_fua_write_is_emulated_or_sent_by_device_and_kernel() {
    for (fua, kernel, native) in [("none", "6.8", false), ("libata", "5.2", false), ("libata", "5.9", false), ("libata", "6.5", true), ("native", "5.2", true)] {
        let name = format!("fua-{fua}-{kernel}");
        let text = std::fs::read_to_string(platform(&name, false)).unwrap().replace("flush_queued = false", &format!("flush_queued = false\nfua = \"{fua}\""));
        let plat = temp_file(&format!("dev-plat-{name}.toml"), &text);
        let r = run_on(&name, plat.to_str().unwrap().to_string(), kernel, FUA_THEN_WRITE);
        // Both ways the commit is acknowledged at 2100 µs.
        let c = max_us(&r, "commit");
        assert!((2099.0..2110.0).contains(&c), "{fua} on {kernel}: commit {c} µs");
        let s = max_us(&r, "small");
        if native {
            assert!((99.0..110.0).contains(&s), "{fua} on {kernel}: small write {s} µs beside the FUA write");
        } else {
            assert!((1049.0..1060.0).contains(&s), "{fua} on {kernel}: small write {s} µs behind the post-flush");
        }
    }
}

#[test]
fn an_unknown_fua_value_names_the_choices() {
    let text = std::fs::read_to_string(platform("fua-bad", false)).unwrap().replace("flush_queued = false", "flush_queued = false\nfua = \"always\"");
    let plat = temp_file("dev-plat-fua-bad2.toml", &text);
    let e = RunConfig { platform: Spec::new(plat.to_str().unwrap()), ..RunConfig::default() }.run(None, None).unwrap_err().to_string();
    assert!(e.contains("fua") && e.contains("none") && e.contains("libata") && e.contains("native"), "{e}");
}

/// A cpufreq governor that only counts the scheduler's hook calls that carry
/// SCHED_CPUFREQ_IOWAIT (a task that waited for IO being enqueued).
struct CountsIowait(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl govlab_core::cpufreq::CpufreqGovernor for CountsIowait {
    fn name(&self) -> &'static str {
        "counts-iowait"
    }
    fn uses_util_hook(&self) -> bool {
        true
    }
    fn start(&mut self, _p: &mut govlab_core::cpufreq::Policy<'_>) {}
    fn update_util(&mut self, _p: &mut govlab_core::cpufreq::Policy<'_>, _cpu: usize, _time_ns: u64, flags: u32) {
        if flags & govlab_core::cpufreq::SCHED_CPUFREQ_IOWAIT != 0 {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// IOWAIT hook calls and completed requests of `workload` on rk3399 in 100 ms.
fn iowait_calls(workload: &str) -> (u64, f64) {
    iowait_calls_on(workload, "6.8")
}

/// [`iowait_calls`] under kernel `kernel`.
fn iowait_calls_on(workload: &str, kernel: &str) -> (u64, f64) {
    use govlab_core::external::{ExternalGovernors, EXTERNAL};
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c = count.clone();
    let ext = ExternalGovernors {
        cpufreq: Some(Box::new(move |_| Ok(Box::new(CountsIowait(c.clone())) as Box<dyn govlab_core::cpufreq::CpufreqGovernor>))),
        cpuidle: None,
    };
    let cfg = RunConfig {
        platform: Spec::new("rk3399"),
        workload: Spec::parse(workload, "workload").unwrap(),
        cpufreq: Spec::new(EXTERNAL),
        cpuidle: Spec::new("menu"),
        kernel: Spec::new(kernel),
        duration_ns: 100_000_000,
        ..RunConfig::default()
    };
    let r = cfg.run_with(ext, None, None).unwrap();
    let done = r.metrics.get("iops").and_then(serde_json::Value::as_f64).unwrap_or(0.0) * r.sim_time_s;
    (count.load(std::sync::atomic::Ordering::Relaxed), done)
}

/// fio's psync engine: every completion wakes its job from an IO wait, so
/// the job's enqueue carries SCHED_CPUFREQ_IOWAIT (what iowait boosts act
/// on); a workload without IO never does.
#[test]
fn each_psync_completion_wakes_its_job_in_iowait() {
    let (calls, done) = iowait_calls("fio:device=nvme,ioengine=psync,iodepth=1,numjobs=1,rw=randread");
    assert!(done >= 50.0, "only {done} requests completed");
    // The last request may still be in flight when the run ends.
    assert!((calls as f64 - done).abs() <= 1.0, "{calls} IOWAIT hook calls for {done} completed requests");
    let (calls, _) = iowait_calls("periodic:tasks=1,run_us=500,period_us=4000");
    assert_eq!(calls, 0, "a workload without IO waited for IO");
}

/// io_uring's wait for completions is iowait only from v6.5 ("io_uring: Use
/// io_schedule* in cqring wait"): under the default kernel each completion
/// wakes the job with SCHED_CPUFREQ_IOWAIT, under 5.9 none does.
#[test]
fn io_uring_waits_are_iowait_by_kernel_version() {
    let wl = "fio:device=nvme,ioengine=io_uring,iodepth=1,numjobs=1,rw=randread";
    let (calls, done) = iowait_calls_on(wl, "6.8");
    assert!(done >= 50.0 && (calls as f64 - done).abs() <= 1.0, "6.8: {calls} IOWAIT calls for {done} requests");
    let (calls, done) = iowait_calls_on(wl, "5.9");
    assert!(done >= 50.0, "5.9: only {done} requests completed");
    assert_eq!(calls, 0, "5.9: io_uring waits counted as iowait");
}

/// fio's `runtime` (time_based): each job exits at its first completion
/// after it, so the run ends a request after 200 ms and is finished; with no
/// duration given the run is allowed `runtime` + 1 s. A shorter duration
/// cuts the jobs, and the run is unfinished.
#[test]
fn fio_runtime_ends_the_jobs_and_sets_the_default_duration() {
    use govlab_core::api::RunArgs;
    let args = |duration: Option<&str>| RunArgs {
        platform: Some("rk3399".into()),
        workload: Some("fio:device=nvme,ioengine=psync,runtime=200ms".into()),
        cpufreq: Some("schedutil".into()),
        cpuidle: Some("menu".into()),
        duration: duration.map(String::from),
        ..RunArgs::default()
    };
    let cfg = RunConfig::from_args(args(None)).unwrap();
    assert_eq!(cfg.duration_ns, 1_200_000_000);
    let r = cfg.run(None, None).unwrap();
    assert!(r.finished);
    // Past 200 ms by at most one request's service time and wakeup.
    assert!(r.sim_time_ns >= 200_000_000 && r.sim_time_ns < 201_000_000, "ended at {} ns", r.sim_time_ns);
    assert!(r.metrics["iops"].as_f64().unwrap() > 1000.0);
    let cut = RunConfig::from_args(args(Some("100ms"))).unwrap().run(None, None).unwrap();
    assert!(!cut.finished);
    let e = RunConfig::from_args(RunArgs { workload: Some("fio:runtime=0".into()), platform: Some("rk3399".into()), ..RunArgs::default() })
        .and_then(|c| c.run(None, None))
        .unwrap_err();
    assert!(e.to_string().contains("runtime"), "{e}");
}

//! cpufreq drivers and governors on the whole engine: what the hardware
//! does with their requests, seen in the frequency trace.

use govlab_core::api::RunConfig;
use govlab_core::error::Error;
use govlab_core::params::Spec;

use crate::fixtures::{slow_rail_platform, temp_file};

fn spec(s: &str) -> Spec {
    Spec::parse(s, "test").unwrap()
}

fn config(platform: &str, workload: &str, cpufreq: &str, ms: u64) -> RunConfig {
    RunConfig {
        platform: spec(platform),
        kernel: Spec::new("6.8"),
        workload: spec(workload),
        cpufreq: spec(cpufreq),
        cpuidle: spec("menu"),
        duration_ns: ms * 1_000_000,
        seed: 1,
        interval_ns: None,
    }
}

/// (time µs, kHz) of every `cpu_frequency` event of `cpu` in an ftrace file.
fn frequency_trace(text: &str, cpu: usize) -> Vec<(u64, u32)> {
    let tag = format!(" cpu_id={cpu}");
    text.lines()
        .filter(|l| l.contains(" cpu_frequency:") && l.ends_with(&tag))
        .map(|l| {
            let ts = l.split(": cpu_frequency:").next().unwrap().rsplit(' ').next().unwrap();
            let (s, us) = ts.split_once('.').unwrap();
            let t_us = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
            let khz = l.split("state=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
            (t_us, khz)
        })
        .collect()
}

/// Run `cfg` with a trace and return the frequency events of CPU 0.
fn traced(cfg: &RunConfig, name: &str) -> Vec<(u64, u32)> {
    let path = temp_file(name, "");
    cfg.run(Some(&path), None).unwrap();
    frequency_trace(&std::fs::read_to_string(&path).unwrap(), 0)
}

/// µs from `from_us` until CPU 0 first runs at `khz` or faster.
fn time_to_reach(trace: &[(u64, u32)], from_us: u64, khz: u32) -> Option<u64> {
    trace.iter().find(|&&(t, f)| t >= from_us && f >= khz).map(|&(t, _)| t - from_us)
}

/// CPU 0 sleeps 100 ms (everything idles down), then computes 30 ms.
/// `name` keeps the file apart from other tests' (they run in parallel).
fn wake_and_compute(name: &str) -> String {
    let wl = temp_file(
        &format!("wake-compute-{name}.toml"),
        "[[task]]\ncomm = \"w\"\ncpus = [0]\nops = [ { sleep = \"100ms\" }, { run = \"30ms\" } ]\n",
    );
    wl.to_str().unwrap().to_string()
}

/// HWP: EPP 0 climbs from the lowest level to the base frequency within a
/// few of the hardware's 1 ms intervals (×4 per interval); EPP 255 needs
/// about twenty (+5 % per interval), and the burst takes longer.
#[test]
fn hwp_epp_0_ramps_faster_than_epp_255() {
    let wl = wake_and_compute("epp");
    let ramp = |epp: u32| {
        let cfg = config("skylake-e3-1240v5", &wl, &format!("intel_pstate:epp={epp},hwp_dynamic_boost=0"), 1000);
        let trace = traced(&cfg, &format!("hwp-epp-{epp}.trace"));
        assert!(trace.iter().any(|&(t, f)| t < 100_000 && f == 800_000), "idles down to 800 MHz: {trace:?}");
        let r = cfg.run(None, None).unwrap();
        assert!(r.finished);
        (time_to_reach(&trace, 100_000, 3_500_000).expect("reaches 3.5 GHz"), r.sim_time_s)
    };
    let (fast_us, fast_s) = ramp(0);
    let (slow_us, slow_s) = ramp(255);
    assert!(fast_us <= 3_000, "EPP 0: {fast_us} µs");
    assert!(slow_us >= 15_000, "EPP 255: {slow_us} µs");
    assert!(fast_s < slow_s, "EPP 0 finishes at {fast_s} s, EPP 255 at {slow_s} s");
}

/// Passive mode with HWP: conservative's slow 5 % steps become the HWP
/// minimum only, and the hardware climbs on its own; without HWP the clock
/// follows conservative's steps (one per 8 ms sample).
#[test]
fn passive_hwp_target_is_a_floor_the_hardware_may_exceed() {
    let wl = wake_and_compute("passive");
    let reach = |platform: &str| {
        let cfg = config(platform, &wl, "conservative", 1000);
        time_to_reach(&traced(&cfg, &format!("passive-{platform}.trace")), 100_000, 3_500_000)
    };
    let hwp = reach("skylake-e3-1240v5").expect("HWP reaches 3.5 GHz");
    assert!(hwp <= 10_000, "with HWP: {hwp} µs");
    // Not getting there at all within the burst is slower still.
    if let Some(us) = reach("skylake-e3-1240v5:hwp=off") {
        assert!(us >= 50_000, "without HWP: {us} µs");
    }
}

/// Without HWP, intel_pstate samples at most every 10 ms, from hook calls
/// (here the 4 ms ticks of the running task), and drops the first sample
/// after the CPU had not run: the P-state chosen for the burst comes 10 to
/// 20 ms after the wakeup, not at once.
#[test]
fn intel_pstate_without_hwp_runs_on_its_own_samples() {
    let wl = wake_and_compute("pstate");
    let cfg = config("broadwell-2s-e5-2698v4", &wl, "intel_pstate", 1000);
    let trace = traced(&cfg, "pstate-bdw.trace");
    let first = trace.iter().find(|&&(t, _)| t >= 100_000).expect("a change after the wakeup");
    assert!((10_000..=20_000).contains(&(first.0 - 100_000)), "{first:?}");
    assert!(time_to_reach(&trace, 100_000, 2_200_000).is_some(), "busy CPU climbs: {trace:?}");
}

/// A governor the driver cannot run is refused when the run is built.
#[test]
fn driver_and_governor_mismatches_are_refused() {
    let unsupported = |cfg: &RunConfig| match cfg.run(None, None) {
        Err(Error::Unsupported(m)) => m,
        other => panic!("expected Unsupported, got {other:?}"),
    };
    let acpi = temp_file("acpi.toml", &slow_rail_platform(1000));
    let m = unsupported(&config(acpi.to_str().unwrap(), "cpu-bound", "intel_pstate", 10));
    assert!(m.contains("acpi-cpufreq") && m.contains("intel_pstate"), "{m}");
    let m = unsupported(&config("skylake-e3-1240v5:intel_pstate=active", "cpu-bound", "schedutil", 10));
    assert!(m.contains("schedutil") && m.contains("active mode"), "{m}");
    let m = unsupported(&config("broadwell-2s-e5-2698v4:intel_pstate=passive", "cpu-bound", "intel_pstate", 10));
    assert!(m.contains("passive"), "{m}");
    // The same platforms run the matching governors.
    config("skylake-e3-1240v5:intel_pstate=active", "cpu-bound", "intel_pstate", 10).run(None, None).unwrap();
    config("broadwell-2s-e5-2698v4:intel_pstate=passive", "cpu-bound", "schedutil", 10).run(None, None).unwrap();
}

/// Passive mode: governors that ask for a strict target (powersave,
/// userspace) pin the HWP request (min = max), so a busy CPU stays where
/// they put it; without HWP the P-state is the requested frequency rounded
/// up to a 100 MHz ratio (RELATION_L).
#[test]
fn passive_strict_targets_pin_the_clock() {
    let wl = wake_and_compute("strict");
    for (platform, cpufreq, khz, boot) in [
        ("skylake-e3-1240v5:intel_pstate=passive", "powersave", 800_000, 3_500_000),
        ("skylake-e3-1240v5", "userspace:scaling_setspeed=1850000", 1_900_000, 3_500_000),
        ("skylake-e3-1240v5:hwp=off", "userspace:scaling_setspeed=1850000", 1_900_000, 800_000),
    ] {
        let r = config(platform, &wl, cpufreq, 1000).run(None, None).unwrap();
        let tis: Vec<u32> = r.cpus[0].time_in_state.iter().filter(|(_, &s)| s > 0.0).map(|(&k, _)| k).collect();
        // The boot frequency holds for the first transition only: 3.5 GHz
        // with HWP, the lowest P-state where intel_pstate's init wrote it.
        assert_eq!(tis.iter().filter(|&&k| k != boot).copied().collect::<Vec<_>>(), [khz], "{platform} {cpufreq}");
        assert!(r.cpus[0].time_in_state[&khz] > 0.99 * r.sim_time_s, "{platform} {cpufreq}");
    }
}

/// HWP dynamic boost on an IO-bound task (100 µs reads, 100 µs of work):
/// the IO wakeups lift the HWP minimum to P1 and above, so the work runs
/// faster than under the hardware's own choice, which sees a CPU busy about
/// half the time and settles low.
#[test]
fn hwp_dynamic_boost_speeds_up_io_bound_work() {
    let wl = temp_file(
        "io-loop.toml",
        "[[task]]\ncomm = \"io\"\ncpus = [0]\nops = [ { loop = 300, ops = [ { io = \"read\" }, { run = \"100us\" } ] } ]\n",
    );
    let run = |boost: u32| {
        let cfg = config("skylake-e3-1240v5", wl.to_str().unwrap(), &format!("intel_pstate:hwp_dynamic_boost={boost}"), 5000);
        let r = cfg.run(None, None).unwrap();
        assert!(r.finished);
        let tis = &r.cpus[0].time_in_state;
        let at_p1_or_above: f64 = tis.range(3_500_000..).map(|(_, s)| s).sum();
        (r.sim_time_s, at_p1_or_above / r.sim_time_s)
    };
    let (t_off, high_off) = run(0);
    let (t_on, high_on) = run(1);
    assert!(t_on < 0.95 * t_off, "boost {t_on} s, no boost {t_off} s");
    assert!(high_on > 0.5 && high_off < 0.1, "share at P1 or above: boost {high_on}, no boost {high_off}");
}

/// Issue 16: on intel_pstate in active mode (the boot default with HWP)
/// `powersave` and `performance` are the driver's own policies, the same
/// runs as `intel_pstate:policy=...`; with `intel_pstate=passive` they are
/// the generic governors on intel_cpufreq. Every result names its driver.
#[test]
fn powersave_and_performance_are_intel_pstates_policies_in_active_mode() {
    let wl = "periodic:tasks=4,run_us=2000,period_us=10000";
    for policy in ["powersave", "performance"] {
        let by_name = config("skylake-e3-1240v5", wl, policy, 300).run(None, None).unwrap();
        let own = config("skylake-e3-1240v5", wl, &format!("intel_pstate:policy={policy}"), 300).run(None, None).unwrap();
        assert_eq!(by_name.driver, "intel_pstate (active, HWP)");
        assert_eq!(by_name.energy_j.to_bits(), own.energy_j.to_bits(), "{policy}");
        assert_eq!(by_name.metrics, own.metrics, "{policy}");
        let passive = config("skylake-e3-1240v5:intel_pstate=passive", wl, policy, 300).run(None, None).unwrap();
        assert_eq!(passive.driver, "intel_cpufreq (passive, HWP)");
    }
    // The generic powersave pins the lowest frequency: the 2 ms bursts
    // stretch; intel_pstate's powersave (HWP) does not.
    let generic = config("skylake-e3-1240v5:intel_pstate=passive", wl, "powersave", 300).run(None, None).unwrap();
    let own = config("skylake-e3-1240v5", wl, "powersave", 300).run(None, None).unwrap();
    let p99 = |r: &govlab_core::metrics::RunResult| r.metrics["response_p99_us"].as_f64().unwrap();
    assert!(p99(&generic) > 1.5 * p99(&own), "{} vs {}", p99(&generic), p99(&own));
    // Without HWP (Broadwell) the kernel boots active before v5.8, where the
    // names are the P-state algorithm, and passive from v5.8 (33aa46f252c7),
    // where they are the generic governors: powersave pins the lowest clock.
    let bdw = |kernel: &str, policy: &str| {
        let mut c = config("broadwell-2s-e5-2698v4", wl, policy, 100);
        c.kernel = Spec::new(kernel);
        c.run(None, None).unwrap()
    };
    assert_eq!(bdw("5.7", "performance").driver, "intel_pstate (active)");
    assert_eq!(bdw("6.8", "performance").driver, "intel_cpufreq (passive)");
    let generic_6_8 = bdw("6.8", "powersave");
    assert_eq!(generic_6_8.driver, "intel_cpufreq (passive)");
    let above_lowest_s = |r: &govlab_core::metrics::RunResult| -> f64 {
        r.cpus[0].time_in_state.iter().filter(|(&khz, _)| khz > 1_200_000).map(|(_, s)| s).sum()
    };
    assert!(above_lowest_s(&generic_6_8) < 0.001, "generic powersave stays at the lowest clock");
    assert!(above_lowest_s(&bdw("5.7", "powersave")) > 0.01, "intel_pstate's powersave follows the load");
    // A generic governor switches to passive mode; other drivers keep their names.
    assert_eq!(config("skylake-e3-1240v5", wl, "schedutil", 50).run(None, None).unwrap().driver, "intel_cpufreq (passive, HWP)");
    assert_eq!(config("skylake-e3-1240v5:hwp=off", wl, "ondemand", 50).run(None, None).unwrap().driver, "intel_cpufreq (passive)");
    assert_eq!(config("power8", "idle", "powersave", 50).run(None, None).unwrap().driver, "powernv");
    assert_eq!(config("juno-r0", "idle", "powersave", 50).run(None, None).unwrap().driver, "cpufreq-dt");
    // A policy setting on a policy name is a contradiction.
    let e = config("skylake-e3-1240v5", wl, "powersave:policy=performance", 50).run(None, None).unwrap_err();
    assert!(matches!(e, Error::InvalidValue { .. }) && e.to_string().contains("intel_pstate:policy="), "{e}");
}

/// Issue 16: the defaults are what the platform's kernel runs: menu, and
/// intel_pstate's powersave, powernv's ondemand or schedutil elsewhere.
#[test]
fn defaults_are_the_platforms_kernels() {
    use govlab_core::api::{defaults, RunArgs};
    let cfg = RunConfig::from_args(RunArgs::default()).unwrap();
    assert_eq!((cfg.cpufreq.to_text().as_str(), cfg.cpuidle.to_text().as_str()), ("powersave", "menu"));
    for (plat, gov) in [
        ("skylake-e3-1240v5", "powersave"),
        ("skylake-e3-1240v5:intel_pstate=passive", "schedutil"),
        ("broadwell-2s-e5-2698v4", "schedutil"),
        ("power8", "ondemand"),
        ("juno-r0", "schedutil"),
        ("hikey960", "schedutil"),
    ] {
        let cfg = RunConfig::from_args(RunArgs { platform: Some(plat.into()), ..RunArgs::default() }).unwrap();
        assert_eq!(cfg.cpufreq.to_text(), gov, "{plat}");
        assert_eq!(defaults(Some(plat), None).unwrap().cpufreq, gov, "{plat}");
    }
    assert_eq!(defaults(Some("broadwell-2s-e5-2698v4"), Some("5.7")).unwrap().cpufreq, "powersave");
    assert_eq!(defaults(None, None).unwrap().cpuidle, "menu");
    let e = RunConfig::from_args(RunArgs { duration: Some("-1s".into()), ..RunArgs::default() }).unwrap_err();
    assert!(e.to_string().contains("must be positive"), "{e}");
}

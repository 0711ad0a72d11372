//! The idle governors follow the run's kernel (issue 33's cpuidle eras;
//! issue 43's IO-completion stream), through the whole run configuration.

use govlab_core::api::RunConfig;
use govlab_core::metrics::RunResult;
use govlab_core::params::Spec;

/// The run of issue 43: fio's synchronous 4 KiB random reads wake CPU 0
/// about every 100 µs from an IO-completion interrupt.
fn fio(kernel: &str, cpuidle: &str) -> RunConfig {
    RunConfig {
        platform: Spec::parse("skylake-e3-1240v5", "platform").unwrap(),
        kernel: Spec::parse(kernel, "kernel").unwrap(),
        workload: Spec::parse("fio:rw=randread,bs_kb=4,ioengine=psync,iodepth=1,numjobs=1", "workload").unwrap(),
        cpufreq: Spec::parse("schedutil", "cpufreq").unwrap(),
        cpuidle: Spec::parse(cpuidle, "cpuidle").unwrap(),
        duration_ns: 3_000_000_000,
        seed: 31,
        interval_ns: None,
    }
}

/// Entries of CPU 0 into states whose target residency exceeds 100 µs
/// (C6, C7s, C8 on this machine), and all its entries.
fn deep_entries(r: &RunResult) -> (u64, u64) {
    let s = &r.cpus[0].idle_states;
    (s[4..].iter().map(|s| s.usage).sum(), s.iter().map(|s| s.usage).sum())
}

/// `--kernel 5.7 --cpuidle teo` runs v5.7's teo, `--show-config` says so,
/// and it chooses differently from v6.8's on the fio stream. In v5.7
/// teo_select() the last 8 idle durations (all about 100 µs) are below the
/// 50 ms sleep length, so it expects their average and
/// teo_find_shallower_state() takes C3; v6.8's teo_select() starts from C8
/// and its intercept walk never stops once teo_update()'s recent counts
/// have wrapped (issue 43), so v6.8 sits on C7s/C8.
#[test]
fn teo_of_5_7_and_6_8_choose_differently_on_io_completions() {
    let old = fio("5.7", "teo");
    let new = fio("6.8", "teo");
    assert_eq!(old.show().unwrap().cpuidle.tunables["form"], "v5.1");
    assert_eq!(new.show().unwrap().cpuidle.tunables["form"], "v6.6");
    let (old_deep, old_all) = deep_entries(&old.run(None, None).unwrap());
    let (new_deep, new_all) = deep_entries(&new.run(None, None).unwrap());
    assert!(old_deep * 10 < old_all, "5.7: {old_deep} of {old_all} entries too deep");
    assert!(new_deep * 2 > new_all, "6.8: {new_deep} of {new_all} entries too deep");
}

/// Issue 43 on v6.11's teo (449914398083 removed the recent ring): the same
/// stream stays shallow for the whole run.
#[test]
fn teo_from_6_11_keeps_learning_from_io_completions() {
    let r = fio("6.12", "teo");
    assert_eq!(r.show().unwrap().cpuidle.tunables["form"], "v6.11");
    let (deep, all) = deep_entries(&r.run(None, None).unwrap());
    assert!(deep * 10 < all, "6.12: {deep} of {all} entries too deep");
}

/// menu's form follows the version: the pre-4.17 select on 3.15 and 4.16
/// (with the load term on 3.15), the v4.17 one on 4.19 to 5.9, v6.8's on
/// 6.8 and 6.12.
#[test]
fn menu_form_follows_the_version() {
    // intel_pstate's own powersave: 3.15 has no passive mode for schedutil.
    let form = |k: &str| {
        let c = RunConfig { cpufreq: Spec::new("powersave"), ..fio(k, "menu") };
        c.show().unwrap().cpuidle.tunables["form"].clone()
    };
    assert_eq!(form("3.15"), "v3.15");
    assert_eq!(form("4.16"), "v3.15 without the load term (v4.12)");
    assert_eq!(form("5.2"), "v4.17");
    assert_eq!(form("5.7"), "v5.4");
    assert_eq!(form("6.8"), "v6.6");
    assert_eq!(form("6.12"), "v6.6");
}

/// Always the deepest enabled state with the tick stopped; records each
/// select's sleep length and delta_tick when the tick was already stopped.
struct DeepRecorder(std::sync::Arc<std::sync::Mutex<Vec<(u64, u64)>>>);

impl govlab_core::cpuidle::CpuidleGovernor for DeepRecorder {
    fn name(&self) -> &'static str {
        "deep-recorder"
    }
    fn enable(&mut self, _dev: &govlab_core::cpuidle::IdleDevice<'_>) {}
    fn select(&mut self, dev: &govlab_core::cpuidle::IdleDevice<'_>, args: &govlab_core::cpuidle::SelectArgs) -> govlab_core::cpuidle::Selection {
        if args.tick_stopped {
            self.0.lock().unwrap().push((args.sleep_length_ns, args.delta_tick_ns));
        }
        let state = (0..dev.states.len()).rev().find(|&i| !dev.disabled[i]).unwrap_or(0);
        govlab_core::cpuidle::Selection { state, stop_tick: true }
    }
    fn reflect(&mut self, _dev: &govlab_core::cpuidle::IdleDevice<'_>, _r: &govlab_core::cpuidle::Reflection) {}
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// With the tick already stopped, the governor's delta_tick is the next
/// timer, as the kernel's delta_next is (dev->next_event - now, v5.2 and
/// v6.8 tick_nohz_get_sleep_length()): no tick is programmed. An idle
/// POWER8 whose housekeeping wakes CPUs every 4 s re-enters idle with the
/// tick stopped; its next timer is seconds away, not the next tick
/// boundary. (Menu's stopped-tick branch compares fastsleep's 300 ms
/// target residency with it.)
#[test]
fn delta_tick_is_the_next_timer_once_the_tick_is_stopped() {
    use govlab_core::external::{ExternalGovernors, EXTERNAL};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = std::sync::Arc::clone(&seen);
    let ext = ExternalGovernors {
        cpufreq: None,
        cpuidle: Some(Box::new(move |_| Ok(Box::new(DeepRecorder(s)) as Box<dyn govlab_core::cpuidle::CpuidleGovernor>))),
    };
    let cfg = RunConfig {
        platform: Spec::parse("power8", "platform").unwrap(),
        kernel: Spec::parse("6.8", "kernel").unwrap(),
        workload: Spec::parse("idle", "workload").unwrap(),
        cpufreq: Spec::parse("performance", "cpufreq").unwrap(),
        cpuidle: Spec::new(EXTERNAL),
        duration_ns: 10_000_000_000,
        seed: 1,
        interval_ns: None,
    };
    cfg.run_with(ext, None, None).unwrap();
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty(), "no select with the tick stopped");
    assert!(seen.iter().all(|&(sleep, delta)| delta == sleep), "{:?}", &seen[..seen.len().min(5)]);
    assert!(seen.iter().any(|&(sleep, _)| sleep > 4_000_000), "every sleep length under a tick");
}

/// A Broadwell-EP whose periodic task leaves its CPU idle for about 200 µs
/// at a time, under menu at `kernel`.
fn broadwell_periodic(kernel: &str) -> RunConfig {
    RunConfig {
        platform: Spec::parse("broadwell-2s-e5-2698v4", "platform").unwrap(),
        kernel: Spec::parse(kernel, "kernel").unwrap(),
        workload: Spec::parse("periodic:tasks=1,run_us=50,period_us=250", "workload").unwrap(),
        cpufreq: Spec::parse("performance", "cpufreq").unwrap(),
        cpuidle: Spec::parse("menu", "cpuidle").unwrap(),
        duration_ns: 300_000_000,
        seed: 5,
        interval_ns: None,
    }
}

/// Entries into `state` summed over every CPU.
fn entries(r: &RunResult, state: &str) -> u64 {
    r.cpus.iter().flat_map(|c| &c.idle_states).filter(|s| s.name == state).map(|s| s.usage).sum()
}

/// The Broadwell-EP's C3 is in intel_idle's bdw_cstates but not in its
/// BIOS's _CST. v5.2's idle_cpu_bdw enables it, and menu takes it for the
/// 200 µs idle periods (over its 100 µs target residency, under C6's
/// 400 µs); from v5.6 (e6d4f08a6776; govlab's 5.7 and later) intel_idle
/// disables it by default: still listed, never entered, and
/// `--show-config` says why.
#[test]
fn broadwell_c3_is_enabled_until_intel_idle_reads_acpi_cst() {
    for (kernel, enabled) in [("5.2", true), ("5.7", false), ("6.8", false)] {
        let cfg = broadwell_periodic(kernel);
        let shown = cfg.show().unwrap();
        let idle = &shown.platform.idle_states[0];
        assert_eq!(idle.states, ["POLL", "C1", "C1E", "C3", "C6"], "{kernel}");
        assert_eq!(idle.disabled.contains_key("C3"), !enabled, "{kernel}: {:?}", idle.disabled);
        assert_eq!(idle.disabled.len(), usize::from(!enabled), "{kernel}: {:?}", idle.disabled);
        let r = cfg.run(None, None).unwrap();
        let (c3, c1e) = (entries(&r, "C3"), entries(&r, "C1E"));
        if enabled {
            assert!(c3 > 100, "{kernel}: menu entered C3 {c3} times");
        } else {
            assert_eq!(c3, 0, "{kernel}: a disabled C3 was entered");
            assert!(c1e > 100, "{kernel}: C1E entered {c1e} times in C3's stead");
        }
    }
}

/// The Haswell-EP's file keeps C3 in _CST (nothing says its BIOS omits
/// it), so C3 stays enabled on every version.
#[test]
fn haswell_c3_stays_enabled_from_5_6() {
    let shown = RunConfig { platform: Spec::parse("haswell-2s-e5-2670v3", "platform").unwrap(), ..broadwell_periodic("6.8") }
        .show()
        .unwrap();
    assert!(shown.platform.idle_states[0].states.iter().any(|s| s == "C3"));
    assert!(shown.platform.idle_states[0].disabled.is_empty());
}

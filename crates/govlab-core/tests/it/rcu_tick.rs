//! RCU callbacks keep the tick of the CPU that queued them (machine/rcu.rs):
//! tick_nohz_next_event() asks rcu_needs_cpu() (v5.2
//! kernel/time/tick-sched.c; tick_nohz_stop_sched_tick() before v4.17).

use std::sync::{Arc, Mutex};

use govlab_core::api::RunConfig;
use govlab_core::cpuidle::{CpuidleGovernor, IdleDevice, Reflection, SelectArgs, Selection};
use govlab_core::external::{ExternalGovernors, EXTERNAL};
use govlab_core::params::Spec;

use crate::fixtures::temp_file;

/// One select: CPU, time, sleep length, whether the tick was stopped.
#[derive(Debug, Clone, Copy)]
struct Seen {
    cpu: usize,
    now: u64,
    sleep: u64,
    tick_stopped: bool,
}

/// The deepest state, asking for the tick to stop, every time; records
/// each select.
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl CpuidleGovernor for Recorder {
    fn name(&self) -> &'static str {
        "rcu-recorder"
    }
    fn enable(&mut self, _dev: &IdleDevice<'_>) {}
    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        self.0.lock().unwrap().push(Seen { cpu: dev.cpu, now: args.now_ns, sleep: args.sleep_length_ns, tick_stopped: args.tick_stopped });
        let state = (0..dev.states.len()).rev().find(|&i| !dev.disabled[i]).unwrap_or(0);
        Selection { state, stop_tick: true }
    }
    fn reflect(&mut self, _dev: &IdleDevice<'_>, _r: &Reflection) {}
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

const PERIOD: u64 = 30_000_000;
const TICK: u64 = 4_000_000;

/// CPU 0 of the Skylake (HZ=250) runs 100 µs, closes a file (call_rcu) and
/// sleeps until its next 30 ms period, for 0.5 s, with no housekeeping
/// wakeups; CPU 0's selects after the first 100 ms.
fn selects(kernel: &str, name: &str) -> Vec<Seen> {
    let wl = temp_file(
        name,
        "[[task]]\ncomm = \"closer\"\ncpus = [0]\nops = [ { loop = \"forever\", ops = [ { run = \"100us\" }, { call_rcu = true }, { timer = \"30ms\" } ] } ]\n",
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let ext = ExternalGovernors {
        cpufreq: None,
        cpuidle: Some(Box::new(move |_| Ok(Box::new(Recorder(Arc::clone(&s))) as Box<dyn CpuidleGovernor>))),
    };
    let cfg = RunConfig {
        platform: Spec::parse("skylake-e3-1240v5", "platform").unwrap(),
        kernel: Spec::parse(kernel, "kernel").unwrap(),
        workload: Spec::parse(wl.to_str().unwrap(), "workload").unwrap(),
        cpufreq: Spec::parse("performance", "cpufreq").unwrap(),
        cpuidle: Spec::new(EXTERNAL),
        duration_ns: 500_000_000,
        seed: 1,
        interval_ns: None,
    };
    cfg.run_with(ext, None, None).unwrap();
    let seen = seen.lock().unwrap();
    seen.iter().copied().filter(|s| s.cpu == 0 && s.now > 100_000_000).collect()
}

/// With callbacks queued (the first 16 ms of each period: four jiffies
/// after the close) the CPU keeps its tick although the governor asks to
/// stop it: every idle entry then has the tick running and a sleep length
/// of at most the time to the next tick, and the kept tick wakes the CPU at
/// each jiffy. After the grace period's four jiffies the next entry sees
/// the 30 ms timer and the tick stops until the period ends. Both before
/// v4.17 (the tick stopped before the governor is asked) and after.
#[test]
fn queued_rcu_callbacks_keep_the_tick_for_four_jiffies() {
    for kernel in ["5.2:housekeeping=off", "4.16:housekeeping=off"] {
        let seen = selects(kernel, &format!("closer-{}.toml", kernel[..3].replace('.', "_")));
        // The close comes a few hundred µs into the period (the exit from
        // C8 and the run): its callbacks are queued until 16 ms and a bit.
        let held: Vec<Seen> = seen.iter().copied().filter(|s| s.now % PERIOD < 4 * TICK).collect();
        let free: Vec<Seen> = seen.iter().copied().filter(|s| s.now % PERIOD >= 4 * TICK + 1_000_000).collect();
        assert!(held.len() >= 4 * 12, "{kernel}: {} selects while callbacks were queued", held.len());
        assert!(held.iter().all(|s| !s.tick_stopped && s.sleep <= TICK), "{kernel}: {held:?}");
        assert!(!free.is_empty(), "{kernel}: no select after the grace period");
        assert!(free.iter().all(|s| s.sleep > 2 * TICK), "{kernel}: {free:?}");
        // One select after the callbacks ran, then the tick is stopped.
        assert!(free.len() <= 14, "{kernel}: {} selects after the grace period", free.len());
    }
}

/// `rcu_tick=off`: the tick stops at the first idle entry after the close,
/// whose sleep length is the rest of the period.
#[test]
fn without_the_rcu_hold_the_tick_stops_at_once() {
    for kernel in ["5.2:housekeeping=off,rcu_tick=off", "4.16:housekeeping=off,rcu_tick=off"] {
        let seen = selects(kernel, &format!("closer-off-{}.toml", kernel[..3].replace('.', "_")));
        assert!(!seen.is_empty(), "{kernel}: no select");
        assert!(seen.iter().all(|s| s.sleep > 6 * TICK), "{kernel}: {seen:?}");
        assert!(seen.len() <= 14, "{kernel}: {} selects", seen.len());
    }
}

/// CPU 0 of the Skylake runs 50 ms (v5.2's non-invariant schedutil climbs
/// from the 800 MHz where intel_cpufreq's init left it, 25 % an update),
/// then runs 3 ms, closes a file and sleeps 5 ms, for 1 s, under v5.2's
/// schedutil and menu; its mean clock in C0.
fn held_clock_khz(kernel: &str, name: &str) -> f64 {
    let wl = temp_file(
        name,
        "[[task]]\ncomm = \"closer\"\ncpus = [0]\nops = [ { run = \"50ms\" }, { loop = \"forever\", ops = [ { run = \"3ms\" }, { call_rcu = true }, { sleep = \"5ms\" } ] } ]\n",
    );
    let cfg = RunConfig {
        platform: Spec::parse("skylake-e3-1240v5", "platform").unwrap(),
        kernel: Spec::parse(kernel, "kernel").unwrap(),
        workload: Spec::parse(wl.to_str().unwrap(), "workload").unwrap(),
        cpufreq: Spec::parse("schedutil", "cpufreq").unwrap(),
        cpuidle: Spec::parse("menu", "cpuidle").unwrap(),
        duration_ns: 1_000_000_000,
        seed: 1,
        interval_ns: None,
    };
    cfg.run(None, None).unwrap().cpus[0].c0_avg_khz.unwrap()
}

/// v5.2's busy-CPU hold (sugov_update_single: no lower frequency while
/// tick_nohz_get_idle_calls_cpu() has not moved): the 5 ms sleeps end
/// inside the callbacks' four jiffies, so the tick is never stopped and
/// the clock the 3 ms runs reached is kept through the sleeps; without the
/// hold menu stops the tick on each 5 ms sleep and schedutil lowers the
/// clock as the utilisation decays.
#[test]
fn queued_callbacks_keep_schedutils_busy_hold_on_v5_2() {
    let held = held_clock_khz("5.2:housekeeping=off", "held-on.toml");
    let free = held_clock_khz("5.2:housekeeping=off,rcu_tick=off", "held-off.toml");
    assert!(held > free * 1.05, "with the hold {held} kHz, without {free} kHz");
}

//! The frequency-invariance scale on running engines: x86's is each CPU's
//! APERF/MPERF sample at its scheduler tick (v5.7 arch/x86/kernel/smpboot.c
//! arch_scale_freq_tick(), machine/dvfs.rs `TickScale`), so a clock change
//! reaches it only at the CPU's next tick and a CPU asleep with the tick
//! stopped keeps the scale of its last tick; Arm's (cpufreq-driven
//! arch_set_freq_scale()) follows the transition at once. Each policy asks
//! for a fixed frequency; tasks make chosen CPUs run or sleep.

use super::clock_domain_tests::{cpu0_high, run_under, HIGH_KHZ, LOW_KHZ, SKYLAKE};
use super::Engine;
use crate::platform::CpuId;

const MS: u64 = 1_000_000;

/// `platform` under `kernel`, the tasks, CPU 0's policy asking for 3.0 GHz
/// and the others for 1.2 GHz, run for `ns`.
fn run(platform: &str, kernel: &str, name: &str, tasks: &[(CpuId, &str)], ns: u64) -> Engine {
    run_under(platform, kernel, name, tasks, cpu0_high, ns)
}

/// `khz` on the scale of CPU `cpu`'s invariance reference.
fn scale_at(e: &Engine, cpu: CpuId, khz: u32) -> u64 {
    let r = u64::from(e.domains[e.plat.cpus[cpu].freq_domain].freq_ref_khz);
    assert!(r > 0, "no invariance");
    ((u64::from(khz) << 10) / r).min(1024)
}

/// CPU 1 runs at 1.2 GHz; CPU 0 sleeps 20 ms, then runs asking for 3.0 GHz,
/// which the shared clock takes at once. CPU 1's scale is still its last
/// tick's 1.2 GHz half a tick later, and is 3.0 GHz's from the first tick
/// whose whole period ran at 3.0 GHz.
#[test]
fn x86_scale_sees_a_clock_change_at_the_next_tick() {
    let tasks: &[(CpuId, &str)] = &[(0, r#"{ sleep = "20ms" }, { run = "10s" }"#), (1, r#"{ run = "10s" }"#)];
    for kernel in ["5.7:housekeeping=off", "6.8:housekeeping=off"] {
        let tick = run(SKYLAKE, kernel, "rise", tasks, MS).tun.tick_ns;
        let e = run(SKYLAKE, kernel, "rise", tasks, 20 * MS + tick / 2);
        assert_eq!(e.domains[0].cur_khz, HIGH_KHZ, "{kernel}: CPU 0 awake, the clock at its request");
        assert_eq!(e.domains[0].freq_scale, scale_at(&e, 1, HIGH_KHZ));
        assert_eq!(e.freq_scale(1), scale_at(&e, 1, LOW_KHZ), "{kernel}: the new clock before CPU 1's next tick");
        let e = run(SKYLAKE, kernel, "rise", tasks, 20 * MS + 2 * tick + tick / 2);
        assert_eq!(e.freq_scale(1), scale_at(&e, 1, HIGH_KHZ), "{kernel}: a whole tick at 3.0 GHz");
        assert!(scale_at(&e, 1, HIGH_KHZ) < scale_at(&e, 1, 3_900_000), "the two clocks must differ on the scale");
    }
}

/// CPU 0 runs 20 ms at 3.0 GHz, then sleeps with the tick stopped while the
/// clock falls to CPU 1's 1.2 GHz: CPU 0's scale stays its last tick's.
/// Read at 70 ms: the blocked-load stats kick at 56 ms (32 ms after the
/// balance kicks that carried the last stats pass) wakes CPU 0, the idle
/// load balancer, and its exit raises the shared clock inside CPU 1's
/// 56-60 ms tick period.
#[test]
fn x86_scale_of_a_cpu_asleep_with_the_tick_stopped_stays() {
    let tasks: &[(CpuId, &str)] = &[(0, r#"{ run = "20ms" }, { sleep = "10s" }"#), (1, r#"{ run = "10s" }"#)];
    let e = run(SKYLAKE, "6.8:housekeeping=off", "sleep", tasks, 70 * MS);
    assert!(!e.aperf[0].in_c0() && !e.rqs[0].tick_armed, "CPU 0 must sleep with its tick stopped");
    assert_eq!(e.domains[0].cur_khz, LOW_KHZ);
    assert_eq!(e.freq_scale(1), scale_at(&e, 1, LOW_KHZ));
    assert_eq!(e.freq_scale(0), scale_at(&e, 0, HIGH_KHZ), "the scale of CPU 0's last tick before it slept");
}

/// Before a CPU's first tick its scale is SCHED_CAPACITY_SCALE, whatever
/// the clock (the per-CPU `arch_freq_scale` default).
#[test]
fn x86_scale_is_1024_before_the_first_tick() {
    let tasks: &[(CpuId, &str)] = &[(0, r#"{ run = "10s" }"#), (1, r#"{ run = "10s" }"#)];
    let e = run(SKYLAKE, "6.8:housekeeping=off", "boot", tasks, MS / 2);
    assert_eq!(e.domains[0].cur_khz, HIGH_KHZ);
    assert!(e.domains[0].freq_scale < 1024);
    assert_eq!(e.freq_scale(1), 1024);
}

/// On Arm each CPU's scale is its domain's current clock on the scale, set
/// at the transition: half a tick after CPU 0 wakes and its cluster's
/// request rises, between two ticks.
#[test]
fn arm_scale_follows_the_transition_at_once() {
    let tasks: &[(CpuId, &str)] = &[(0, r#"{ sleep = "20ms" }, { run = "10s" }"#), (1, r#"{ run = "10s" }"#)];
    let e = run("juno-r2", "6.8:housekeeping=off", "arm", tasks, 20 * MS + MS / 2);
    assert!(e.tick_scale.is_empty());
    for cpu in 0..e.plat.nr_cpus() {
        let d = &e.domains[e.plat.cpus[cpu].freq_domain];
        assert_eq!(e.freq_scale(cpu), scale_at(&e, cpu, d.cur_khz), "CPU {cpu}");
    }
}

//! intel_cpufreq with HWP under schedutil on a running Skylake
//! (skylake-e3-1240v5, one policy per logical CPU): before v5.11 the
//! frequency schedutil asks for becomes the HWP request's minimum with
//! desired 0 (`intel_cpufreq_update_pstate`), from v5.11 its levels become
//! min = the floor and desired = the target (`intel_cpufreq_adjust_perf`,
//! a365ab6b9dfb, through `sugov_update_single_perf`).
//!
//! Without HWP (haswell-2s-e5-2670v3), intel_pstate's CPU init leaves every
//! CPU at its lowest P-state in both modes (`intel_pstate_get_cpu_pstates`
//! ends with `intel_pstate_set_min_pstate`; `intel_cpufreq_cpu_init` sets
//! `policy->cur = cpuinfo.min_freq`), so the run starts there.

use std::path::PathBuf;

use super::Engine;
use crate::kernel::{BuildCtx, KernelConfig};
use crate::machine::RunParts;
use crate::params::Spec;
use crate::platform::hwp::HwpRequest;
use crate::platform::load_named;
use crate::{cpufreq, cpuidle, workload};

const MS: u64 = 1_000_000;

/// CPU 0 alternating 2 ms of work and 2 ms of sleep (utilisation about
/// half the capacity).
fn half_busy() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("govlab-icf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("half.toml");
    let tmp = dir.join(format!("half-{:?}.toml", std::thread::current().id()));
    let ops = vec![r#"{ run = "2ms" }, { sleep = "2ms" }"#; 100].join(", ");
    std::fs::write(&tmp, format!("[[task]]\ncomm = \"t\"\ncpus = [0]\nops = [ {ops} ]\n")).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    path
}

/// The engine after `ms` of [`half_busy`] on `platform` under `governor`.
fn run(platform: &str, kernel: &str, governor: &str, ms: u64) -> Engine {
    let plat = load_named(&Spec::new(platform)).unwrap();
    let kernel = KernelConfig::from_spec(&Spec::parse(&format!("{kernel}:housekeeping=off"), "kernel").unwrap()).unwrap();
    let spec = Spec::parse(governor, "cpufreq").unwrap();
    let ctx = cpufreq::resolve_ctx(&spec, BuildCtx::new(plat, kernel)).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(half_busy().to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build_for(&spec, &ctx).unwrap(),
        cpuidle: cpuidle::build(&Spec::new("menu"), &ctx.platform).unwrap(),
        duration_ns: ms * MS,
        seed: 1,
        ctx,
    };
    let mut e: Engine = crate::machine::build(parts, None).unwrap();
    e.run(None).unwrap();
    e
}

/// CPU 0's HWP request after 300 ms of [`half_busy`] under schedutil.
fn request(kernel: &str) -> HwpRequest {
    let e = run("skylake-e3-1240v5", kernel, "schedutil", 300);
    e.policies[e.pol.of_cpu[0]].hwp.as_ref().expect("intel_cpufreq wrote an HWP request").req
}

/// The clock of `cpu`'s frequency domain, kHz.
fn clock_khz(e: &Engine, cpu: usize) -> u32 {
    e.domains[e.plat.cpus[cpu].freq_domain].cur_khz
}

/// A Haswell-EP CPU nothing ran on sits at 1.2 GHz, the lowest P-state,
/// under both modes; the firmware's 2.3 GHz (the base, what govlab boots a
/// clock at otherwise) is gone before the run starts. CPU 0, half busy
/// (utilisation about 512) under v5.2's non-invariant schedutil, stays
/// there: 1.25 × 1.2 GHz × 0.5 asks for less than the floor, and its
/// 2-ms idles keep the tick, so sugov_cpu_is_busy() would hold a higher
/// start where it began. A table driver (the EPYC's acpi-cpufreq) keeps
/// the boot clock.
#[test]
fn intel_pstate_without_hwp_starts_every_cpu_at_the_lowest_p_state() {
    let passive = run("haswell-2s-e5-2670v3", "5.2", "schedutil", 100);
    assert_eq!(clock_khz(&passive, 5), 1_200_000, "an idle CPU, intel_cpufreq");
    assert_eq!(clock_khz(&passive, 0), 1_200_000, "the half-busy CPU, non-invariant schedutil");
    let active = run("haswell-2s-e5-2670v3", "5.2", "powersave", 100);
    assert_eq!(clock_khz(&active, 5), 1_200_000, "an idle CPU, intel_pstate powersave");
    let table = run("epyc-7702-2s", "5.2", "schedutil", 100);
    let base = table.plat.cpu_type_of(5).base_khz;
    assert_eq!(clock_khz(&table, 5), base, "an idle CPU, acpi-cpufreq");
}

/// Levels 8 (800 MHz, lowest) to 39 (3.9 GHz, highest). Utilisation about
/// 500 asks for about 1.25 × 500 / 1024 of level 39: 5.9 writes it as the
/// minimum, leaving the hardware free to go higher; 6.5 and 6.8 (the
/// supported versions after 5.11) write it as desired over the lowest
/// level as the minimum (no DL tasks: floor 0).
#[test]
fn schedutils_target_is_hwp_min_before_5_11_and_desired_from() {
    let old = request("5.9");
    assert_eq!(old.desired_perf, 0, "5.9: {old:?}");
    assert!((16..=32).contains(&old.min_perf), "5.9: the target as min: {old:?}");
    assert_eq!(old.max_perf, 39, "5.9: {old:?}");
    for kernel in ["6.5", "6.8"] {
        let new = request(kernel);
        assert_eq!(new.min_perf, 8, "{kernel}: min is the floor: {new:?}");
        assert!((16..=32).contains(&new.desired_perf), "{kernel}: the target as desired: {new:?}");
        assert_eq!(new.max_perf, 39, "{kernel}: {new:?}");
    }
}

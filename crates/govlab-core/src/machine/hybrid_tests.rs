//! Intel hybrid (i9-12900k) on a running machine: intel_pstate's HWP
//! levels per core type (a P-core level is 78.741 MHz, an E-core level
//! 100 MHz: drivers/cpufreq/intel_pstate.c `hybrid_get_cpu_scaling`,
//! f5c8cf2a4992), and the scheduler's CPU capacities and frequency
//! invariance by era (`kernel::BuildCtx::cpu_capacity`: 1024 everywhere
//! until v6.12, and with SMT on at any version; 929ebc93ccaa).

use std::path::PathBuf;

use super::Engine;
use crate::cpufreq::driver::CpufreqDriver;
use crate::kernel::{BuildCtx, KernelConfig};
use crate::machine::RunParts;
use crate::params::Spec;
use crate::platform::hwp::{HwpCaps, HwpRequest};
use crate::platform::{load_named, CpuId};
use crate::{cpufreq, cpuidle, workload};

const MS: u64 = 1_000_000;
/// The first P-core's first thread and the first E-core.
const P0: CpuId = 0;
const E0: CpuId = 16;

/// One busy task allowed on `cpus` (a TOML list's items).
fn workload_file(name: &str, cpus: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("govlab-hybrid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    let tmp = dir.join(format!("{name}-{:?}.toml", std::thread::current().id()));
    std::fs::write(&tmp, format!("[[task]]\ncomm = \"t\"\ncpus = [{cpus}]\nops = [ {{ run = \"10s\" }} ]\n")).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    path
}

fn ctx(platform: &str, kernel: &str) -> BuildCtx {
    let plat = load_named(&Spec::parse(platform, "platform").unwrap()).unwrap();
    BuildCtx::new(plat, KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap())
}

/// i9-12900k under `governor` and kernel 6.8 without housekeeping, one
/// task busy on `cpu`, for 30 ms.
fn run(governor: &str, name: &str, cpu: CpuId) -> Engine {
    run_on("6.8:housekeeping=off", governor, name, &cpu.to_string())
}

/// i9-12900k under `kernel` and `governor`, one task busy on `cpus`.
fn run_on(kernel: &str, governor: &str, name: &str, cpus: &str) -> Engine {
    let spec = Spec::parse(governor, "cpufreq").unwrap();
    let ctx = cpufreq::resolve_ctx(&spec, ctx("i9-12900k", kernel)).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(workload_file(name, cpus).to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build_for(&spec, &ctx).unwrap(),
        cpuidle: cpuidle::build(&Spec::new("menu"), &ctx.platform).unwrap(),
        duration_ns: 30 * MS,
        seed: 1,
        ctx,
    };
    let mut e = crate::machine::build(parts, None).unwrap();
    e.run(None).unwrap();
    e
}

fn request(e: &Engine, cpu: CpuId) -> HwpRequest {
    e.policies[e.pol.of_cpu[cpu]].hwp.as_ref().expect("an HWP request").req
}

fn clock(e: &Engine, cpu: CpuId) -> u32 {
    e.domains[e.plat.cpus[cpu].freq_domain].cur_khz
}

/// HWP_CAPABILITIES as the platform gives them: a P-core's levels are the
/// smallest that reach 0.8, 3.2 and 5.1 GHz at 78.741 MHz a level (11,
/// 41, 65: 866, 3228 and 5118 MHz), an E-core's are ratios (8, 24, 39).
#[test]
fn hwp_levels_are_per_core_type() {
    let c = ctx("i9-12900k", "6.8");
    let p = HwpCaps::of(c.platform.cpu_type_of(P0));
    let e = HwpCaps::of(c.platform.cpu_type_of(E0));
    assert_eq!((p.lowest_perf, p.guaranteed_perf, p.highest_perf, p.khz_per_perf), (11, 41, 65, 78_741));
    assert_eq!((e.lowest_perf, e.guaranteed_perf, e.highest_perf, e.khz_per_perf), (8, 24, 39, 100_000));
    // intel_pstate reads the levels back rounded down to a ratio:
    // turbo_freq 5.1 GHz, max_freq 3.2 GHz, and the same levels back.
    assert_eq!((p.level_khz(65), p.level_khz(41)), (5_100_000, 3_200_000));
    assert_eq!((p.freq_to_hwp(5_100_000), p.freq_to_hwp(3_200_000), p.freq_to_hwp(800_000)), (65, 41, 11));
    assert_eq!((e.freq_to_hwp(3_900_000), e.freq_to_hwp(800_000)), (39, 8));
    // A 2.0 GHz policy limit: ratio 20, 2000 / 78.741 rounded up = 26 on a
    // P-core; 20 on an E-core.
    assert_eq!((p.limit_perf(2_000_000), e.limit_perf(2_000_000)), (26, 20));
}

/// Active mode, `performance`: the request pins each CPU at its type's
/// highest level, 65 on the P-core and 39 on the E-core, and the clocks run
/// 65 × 78.741 MHz = 5118 MHz as the 5.1 GHz ratio and 39 × 100 MHz.
#[test]
fn active_performance_asks_each_type_for_its_highest_level() {
    let e = run("performance", "act-perf-p", P0);
    assert_eq!(e.cpufreq_driver, CpufreqDriver::IntelPstate);
    assert_eq!(request(&e, P0), HwpRequest { min_perf: 65, max_perf: 65, desired_perf: 0, epp: 0 });
    assert_eq!(request(&e, E0), HwpRequest { min_perf: 39, max_perf: 39, desired_perf: 0, epp: 0 });
    assert_eq!(clock(&e, P0), 5_100_000);
    let e = run("performance", "act-perf-e", E0);
    assert_eq!(clock(&e, E0), 3_900_000);
}

/// Passive mode (intel_cpufreq with HWP, which a generic governor such as
/// userspace runs): a target of 800 MHz is level ⌈800 / 78.741⌉ = 11 on a
/// P-core (866 MHz, which runs as the 800 MHz ratio) and 8 on an E-core,
/// as minimum and (userspace's strict target) maximum.
#[test]
fn passive_targets_become_levels_of_each_type() {
    let e = run("userspace:scaling_setspeed=800000", "pas-save", P0);
    assert!(matches!(e.cpufreq_driver, CpufreqDriver::IntelCpufreq { hwp: true, .. }));
    let p = request(&e, P0);
    let q = request(&e, E0);
    assert_eq!((p.min_perf, p.max_perf), (11, 11));
    assert_eq!((q.min_perf, q.max_perf), (8, 8));
    assert_eq!((clock(&e, P0), clock(&e, E0)), (800_000, 800_000));
    // The userspace governor at 3.9 GHz: level ⌈3900 / 78.741⌉ = 50 on the
    // P-core (3937 MHz, run as 3.9 GHz), level 39 on the E-core.
    let e = run("userspace:scaling_setspeed=3900000", "pas-user", P0);
    assert_eq!(request(&e, P0).min_perf, 50);
    assert_eq!(request(&e, E0).min_perf, 39);
    assert_eq!(clock(&e, P0), 3_900_000);
}

/// CPU capacity by era: 1024 on every CPU under 6.8 (ITMT's era) and under
/// 6.12 with SMT on (the part as shipped); from 6.12 without SMT the
/// E-cores get 39 × 1024 / 65 = 614. The running engine's runqueues carry
/// the kernel's view, the platform the hardware's.
#[test]
fn capacity_is_asymmetric_only_from_6_12_without_smt() {
    let caps = |c: &BuildCtx| (c.cpu_capacity(P0), c.cpu_capacity(c.platform.nr_cpus() - 1));
    let old = ctx("i9-12900k:smt=off", "6.8");
    assert_eq!(caps(&old), (1024, 1024));
    let smt = ctx("i9-12900k", "6.12");
    assert!(!smt.x86_hybrid_capacity());
    assert_eq!(caps(&smt), (1024, 1024));
    let new = ctx("i9-12900k:smt=off", "6.12");
    assert!(new.x86_hybrid_capacity());
    assert_eq!(new.platform.nr_cpus(), 16);
    assert_eq!(caps(&new), (1024, 614));
    // HWP off (the platform option): intel_pstate is not hybrid-aware.
    assert!(!ctx("i9-12900k:smt=off,hwp=off", "6.12").x86_hybrid_capacity());
    // The symmetric machines are untouched.
    assert_eq!(ctx("skylake-e3-1240v5:smt=off", "6.12").cpu_capacity(0), 1024);
}

/// Frequency invariance: until 6.12 one ratio for every CPU, the boot
/// P-core's 4-core turbo (4.9 GHz), so a busy E-core at 3.9 GHz counts
/// 3.9/4.9 of a P-core's; from 6.12 without SMT each type against its own
/// highest level (P: 3.2 GHz × 65 / 41 = 5073 MHz; E: 3.2 × 39 / 32 = 3.9).
#[test]
fn invariance_reference_follows_the_capacity_era() {
    let refs = |c: &BuildCtx| (c.invariance_reference_khz(0), c.invariance_reference_khz(1));
    assert_eq!(refs(&ctx("i9-12900k", "6.8")), (4_900_000, 4_900_000));
    assert_eq!(refs(&ctx("i9-12900k", "6.12")), (4_900_000, 4_900_000));
    assert_eq!(refs(&ctx("i9-12900k:smt=off", "6.12")), (5_073_170, 3_900_000));
    assert_eq!(refs(&ctx("i9-12900k", "5.19")), (4_900_000, 4_900_000));
    // A freq_invariance option applies per CPU type as given.
    assert_eq!(refs(&ctx("i9-12900k", "6.8:freq_invariance=max")), (5_100_000, 3_900_000));
}

/// ITMT priorities (the types' HWP highest levels, P 65 and E 39): until
/// v6.5 the n-th thread of a core gets prio × 2 / n² (P 130 then 32, E 78),
/// from v6.5 every sibling the core's; none once capacities differ.
#[test]
fn itmt_priorities_by_era() {
    let old = ctx("i9-12900k", "5.19").itmt_priorities().unwrap();
    assert_eq!((old[0], old[1], old[16]), (130, 32, 78));
    let new = ctx("i9-12900k", "6.8").itmt_priorities().unwrap();
    assert_eq!((new[0], new[1], new[16]), (65, 65, 39));
    assert!(ctx("i9-12900k:smt=off", "6.12").itmt_priorities().is_none(), "ITMT cleared with hybrid capacity");
    assert!(ctx("i9-12900k", "6.12").itmt_priorities().is_some());
    assert!(ctx("skylake-e3-1240v5", "6.8").itmt_priorities().is_none(), "one core type: no packing modelled");
}

/// Asym packing moves a lone busy task to the preferred idle CPU, so where
/// a task allowed on a P-core's second thread (CPU 1) and an E-core (16)
/// ends depends on the era, whichever it started on: before v6.5 the
/// E-core (78 above 32), from v6.5 the P-core (65 above 39, its core
/// otherwise idle).
#[test]
fn asym_packing_follows_the_priorities() {
    let e = run_on("5.19:housekeeping=off", "performance", "asym-old", "1, 16");
    assert_eq!(e.tasks[0].cpu, 16);
    let e = run_on("6.8:housekeeping=off", "performance", "asym-new", "1, 16");
    assert_eq!(e.tasks[0].cpu, 1);
}

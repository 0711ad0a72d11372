//! amd-pstate's three modes on a running EPYC 7702 (epyc-7702-2s): what a
//! governor asks for must reach the CPPC request as
//! drivers/cpufreq/amd-pstate.c writes it (`amd_pstate_update_freq` /
//! `amd_pstate_update` in passive and guided mode,
//! `amd_pstate_epp_update_limit` in active mode), and the clock must then
//! do what the request says: run the desired level, or choose inside
//! [min, max] when desired is 0.

use std::path::PathBuf;

use super::Engine;
use crate::cpufreq::driver::CpufreqDriver;
use crate::kernel::{BuildCtx, KernelConfig};
use crate::machine::RunParts;
use crate::params::Spec;
use crate::platform::hwp::HwpRequest;
use crate::platform::{load_named, CpuId};
use crate::{cpufreq, cpuidle, workload};

const MS: u64 = 1_000_000;

/// One task pinned to CPU 0, `ops` its operations.
fn workload_file(name: &str, ops: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("govlab-amd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    let tmp = dir.join(format!("{name}-{:?}.toml", std::thread::current().id()));
    std::fs::write(&tmp, format!("[[task]]\ncomm = \"t\"\ncpus = [0]\nops = [ {ops} ]\n")).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    path
}

/// epyc-7702-2s under `amd_pstate=mode` and `governor`, kernel 6.8
/// without housekeeping, CPU 0 running `ops`, for `ms`.
fn run(mode: &str, governor: &str, name: &str, ops: &str, ms: u64) -> Engine {
    let plat = load_named(&Spec::parse(&format!("epyc-7702-2s:amd_pstate={mode}"), "platform").unwrap()).unwrap();
    let kernel = KernelConfig::from_spec(&Spec::parse("6.8:housekeeping=off", "kernel").unwrap()).unwrap();
    let spec = Spec::parse(governor, "cpufreq").unwrap();
    let ctx = cpufreq::resolve_ctx(&spec, BuildCtx::new(plat, kernel)).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(workload_file(name, ops).to_str().unwrap())).unwrap(),
        cpufreq: cpufreq::build_for(&spec, &ctx).unwrap(),
        cpuidle: cpuidle::build(&Spec::new("menu"), &ctx.platform).unwrap(),
        duration_ns: ms * MS,
        seed: 1,
        ctx,
    };
    let mut e = crate::machine::build(parts, None).unwrap();
    e.run(None).unwrap();
    e
}

/// The CPPC request of CPU `cpu`'s policy.
fn request(e: &Engine, cpu: CpuId) -> HwpRequest {
    e.policies[e.pol.of_cpu[cpu]].hwp.as_ref().expect("amd-pstate wrote a CPPC request").req
}

/// The clock of CPU `cpu`, kHz.
fn clock(e: &Engine, cpu: CpuId) -> u32 {
    e.domains[e.plat.cpus[cpu].freq_domain].cur_khz
}

const BUSY: &str = r#"{ run = "10s" }"#;

/// Passive mode: performance's target (policy->max, 3.3 GHz) becomes
/// desired ⌈3.3 GHz × 152 / 2 GHz⌉ = 251 between the limits' levels 31 and
/// 251; powersave's (policy->min, 400 MHz) desired 31. The firmware runs
/// desired: the grid's 3.3 GHz and 400 MHz.
#[test]
fn passive_mode_writes_the_governors_target_as_desired() {
    let e = run("passive", "performance", "passive-perf", BUSY, 20);
    assert_eq!(e.cpufreq_driver, CpufreqDriver::AmdPstate { guided: false, guided_dynamic: false });
    assert_eq!(request(&e, 0), HwpRequest { min_perf: 31, max_perf: 251, desired_perf: 251, epp: 0 });
    assert_eq!(clock(&e, 0), 3_300_000);
    let e = run("passive", "powersave", "passive-save", BUSY, 20);
    assert_eq!(request(&e, 0), HwpRequest { min_perf: 31, max_perf: 251, desired_perf: 31, epp: 0 });
    assert_eq!(clock(&e, 0), 400_000);
}

/// Passive mode under schedutil: a busy CPU's target climbs to the top, an
/// idle one's stays at the bottom; each is a desired level, never 0.
#[test]
fn passive_mode_follows_schedutil() {
    let e = run("passive", "schedutil", "passive-su", BUSY, 200);
    let busy = request(&e, 0);
    assert_eq!((busy.min_perf, busy.desired_perf, busy.max_perf), (31, 251, 251));
    assert_eq!(clock(&e, 0), 3_300_000);
}

/// Guided mode: schedutil (CPUFREQ_GOV_DYNAMIC_SWITCHING) has its target
/// moved into min and desired 0, so the firmware chooses in [target, max];
/// performance (no dynamic switching) keeps passive's desired.
#[test]
fn guided_mode_makes_a_dynamic_governors_target_the_minimum() {
    let e = run("guided", "schedutil", "guided-su", BUSY, 200);
    assert_eq!(e.cpufreq_driver, CpufreqDriver::AmdPstate { guided: true, guided_dynamic: true });
    let r = request(&e, 0);
    assert_eq!((r.min_perf, r.desired_perf, r.max_perf), (251, 0, 251), "busy: schedutil's top target is the floor");
    assert_eq!(clock(&e, 0), 3_300_000);
    let e = run("guided", "performance", "guided-perf", BUSY, 20);
    assert_eq!(e.cpufreq_driver, CpufreqDriver::AmdPstate { guided: true, guided_dynamic: false });
    assert_eq!(request(&e, 0), HwpRequest { min_perf: 31, max_perf: 251, desired_perf: 251, epp: 0 });
}

/// Active mode: amd-pstate-epp writes the limits, desired 0 and EPP. The
/// server profile's fallback policy is performance (EPP 0, min at nominal
/// 152: 2.0 GHz at least); powersave keeps min at 31 with EPP 0x80, and an
/// idle CPU falls to the bottom while a busy one climbs.
#[test]
fn active_mode_writes_limits_and_epp() {
    let e = run("active", "performance", "active-perf", BUSY, 20);
    assert_eq!(e.cpufreq_driver, CpufreqDriver::AmdPstateEpp);
    assert_eq!(request(&e, 1), HwpRequest { min_perf: 152, max_perf: 251, desired_perf: 0, epp: 0 });
    assert!(clock(&e, 1) >= 2_000_000, "an idle CPU under performance stays at nominal or above: {}", clock(&e, 1));
    let e = run("active", "powersave", "active-save", BUSY, 100);
    assert_eq!(request(&e, 1), HwpRequest { min_perf: 31, max_perf: 251, desired_perf: 0, epp: 0x80 });
    assert_eq!(clock(&e, 1), 400_000, "idle CPU 1 at the lowest level");
    assert_eq!(clock(&e, 0), 3_300_000, "busy CPU 0 at the top");
    let e = run("active", "amd_pstate_epp:policy=powersave,epp=power", "active-power", BUSY, 20);
    assert_eq!(request(&e, 0).epp, 0xFF);
}

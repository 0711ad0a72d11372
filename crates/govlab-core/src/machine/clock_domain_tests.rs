//! Policies and shared clocks on running engines: each policy asks for a
//! fixed frequency (a scripted governor), tasks make chosen CPUs active or
//! idle, and the clock domain must run at the highest request of its
//! active cores, each asking for the highest of its threads' (machine/
//! dvfs.rs, `resolve_domain`).

use std::path::PathBuf;

use super::Engine;
use crate::cpufreq::{CpufreqGovernor, Policy, Relation};
use crate::kernel::{BuildCtx, KernelConfig};
use crate::machine::RunParts;
use crate::params::Spec;
use crate::platform::{load_named, CpuId};
use crate::{cpuidle, workload};

const MS: u64 = 1_000_000;

/// Each policy asks once, at start, for the frequency `khz` gives its
/// first CPU.
struct Fixed {
    khz: fn(CpuId) -> u32,
}

impl CpufreqGovernor for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn start(&mut self, p: &mut Policy<'_>) {
        p.set_target((self.khz)(p.cpus[0]), Relation::L);
    }
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// A workload file of one task per (cpu, ops), written once per name.
fn workload_file(name: &str, tasks: &[(CpuId, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("govlab-clock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    let text: String = tasks
        .iter()
        .enumerate()
        .map(|(i, (cpu, ops))| format!("[[task]]\ncomm = \"t{i}\"\ncpus = [{cpu}]\nops = [ {ops} ]\n\n"))
        .collect();
    let tmp = dir.join(format!("{name}-{:?}.toml", std::thread::current().id()));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    path
}

/// `platform` without HWP (the requests go to PERF_CTL as they are),
/// kernel 6.8 without housekeeping, run for `ms`.
fn run(platform: &str, name: &str, tasks: &[(CpuId, &str)], khz: fn(CpuId) -> u32, ms: u64) -> Engine {
    run_under(platform, "6.8:housekeeping=off", name, tasks, khz, ms * MS)
}

/// `platform` under `kernel`, the tasks and each policy's fixed request
/// `khz`, run for `ns`.
pub(super) fn run_under(
    platform: &str,
    kernel: &str,
    name: &str,
    tasks: &[(CpuId, &str)],
    khz: fn(CpuId) -> u32,
    ns: u64,
) -> Engine {
    let plat = load_named(&Spec::parse(platform, "platform").unwrap()).unwrap();
    let kernel = KernelConfig::from_spec(&Spec::parse(kernel, "kernel").unwrap()).unwrap();
    let parts = RunParts {
        workload: workload::build(&Spec::new(workload_file(name, tasks).to_str().unwrap())).unwrap(),
        cpufreq: Box::new(Fixed { khz }),
        cpuidle: cpuidle::build(&Spec::new("menu"), &plat).unwrap(),
        duration_ns: ns,
        seed: 1,
        ctx: BuildCtx::new(plat, kernel),
    };
    let mut e = crate::machine::build(parts, None).unwrap();
    e.run(None).unwrap();
    e
}

pub(super) const SKYLAKE: &str = "skylake-e3-1240v5:hwp=off";
pub(super) const HIGH_KHZ: u32 = 3_000_000;
pub(super) const LOW_KHZ: u32 = 1_200_000;

/// CPU 0 asks for 3.0 GHz, every other CPU for 1.2 GHz.
pub(super) fn cpu0_high(cpu: CpuId) -> u32 {
    if cpu == 0 {
        HIGH_KHZ
    } else {
        LOW_KHZ
    }
}

/// CPU 0 busy for 20 ms, then asleep; CPU 1 busy throughout.
const CPU0_THEN_IDLE: &[(CpuId, &str)] = &[(0, r#"{ run = "20ms" }, { sleep = "10s" }"#), (1, r#"{ run = "10s" }"#)];

/// On the Skylake under intel_cpufreq each logical CPU is its own policy,
/// all eight on the package's one clock.
#[test]
fn skylake_policies_are_logical_cpus_on_one_clock() {
    let e = run(SKYLAKE, "sky-layout", CPU0_THEN_IDLE, cpu0_high, 1);
    assert_eq!(e.pol.len(), 8);
    for (p, cpus) in e.pol.cpus.iter().enumerate() {
        assert_eq!(cpus, &vec![p]);
        assert_eq!(e.pol.domain[p], 0);
    }
    assert!(e.domains[0].shared);
}

/// While CPU 0 runs, the package clock is its 3.0 GHz, the highest
/// request of the active CPUs; once it sleeps (C1 or deeper), its request
/// no longer holds the clock up: CPU 1's 1.2 GHz.
#[test]
fn shared_clock_runs_the_highest_request_of_the_active_cpus() {
    let e = run(SKYLAKE, "sky-both", CPU0_THEN_IDLE, cpu0_high, 10);
    assert_eq!(e.policies[0].req_opp, e.plat.cpu_types[0].opp_index(HIGH_KHZ).unwrap());
    assert_eq!(e.domains[0].cur_khz, HIGH_KHZ, "both CPUs active: CPU 0's request");
    let e = run(SKYLAKE, "sky-both", CPU0_THEN_IDLE, cpu0_high, 60);
    assert!(e.rqs[0].idle_state().is_some_and(|s| !e.plat.cpu_types[0].idle_states[s].polling), "CPU 0 not asleep");
    assert_eq!(e.policies[0].req_opp, e.plat.cpu_types[0].opp_index(HIGH_KHZ).unwrap(), "CPU 0's request stands");
    assert_eq!(e.domains[0].cur_khz, LOW_KHZ, "CPU 0 asleep: its request must not hold the clock");
}

/// Each policy's and each core's count of CPUs in C0, which the votes
/// read, is its CPUs' APERF counters' state: while both run, after CPU 0
/// sleeps, and on Juno, whose policies are clusters of CPUs.
#[test]
fn policy_c0_counts_follow_aperf() {
    let check = |e: &Engine| {
        for (p, cpus) in e.pol.cpus.iter().enumerate() {
            let counting = cpus.iter().filter(|&&c| e.aperf[c].in_c0()).count() as u32;
            assert_eq!(e.policies[p].c0_cpus, counting, "policy {p}");
        }
        for (k, core) in e.plat.cores.iter().enumerate() {
            let counting = core.cpus.iter().filter(|&&c| e.aperf[c].in_c0()).count() as u32;
            assert_eq!(e.core_c0[k], counting, "core {k}");
        }
    };
    let e = run(SKYLAKE, "sky-c0", CPU0_THEN_IDLE, cpu0_high, 10);
    assert_eq!(e.policies[0].c0_cpus + e.policies[1].c0_cpus, 2);
    check(&e);
    let e = run(SKYLAKE, "sky-c0", CPU0_THEN_IDLE, cpu0_high, 60);
    assert_eq!(e.policies[0].c0_cpus, 0, "CPU 0 asleep");
    check(&e);
    let e = run("juno-r2", "juno-c0", CPU0_THEN_IDLE, |_| 600_000, 60);
    check(&e);
}

/// The other way round: the idle CPUs' 1.2 GHz requests do not pull the
/// clock down while CPU 0 alone runs.
#[test]
fn idle_cpus_low_requests_do_not_pull_the_clock_down() {
    let alone: &[(CpuId, &str)] = &[(0, r#"{ run = "10s" }"#)];
    let e = run(SKYLAKE, "sky-alone", alone, cpu0_high, 30);
    assert_eq!(e.domains[0].cur_khz, HIGH_KHZ);
    // The same run with every policy asking for 1.2 GHz but CPU 1's: CPU 1
    // is idle, so its 3.0 GHz does not count.
    let e = run(SKYLAKE, "sky-alone", alone, |cpu| if cpu == 1 { HIGH_KHZ } else { LOW_KHZ }, 30);
    assert_eq!(e.domains[0].cur_khz, LOW_KHZ);
}

/// On the Broadwell-EP each core has its own clock (per-core P-states) and
/// each thread its own policy: an active core runs at the higher of its
/// threads' PERF_CTL requests, the sleeping thread's included (machine/
/// dvfs.rs `voted_opp`: intel_pstate lowers an offline thread's request
/// because it holds its sibling up, bb18008f8086).
#[test]
fn broadwell_core_clock_is_the_higher_of_its_threads_requests() {
    let plat = load_named(&Spec::new("broadwell-2s-e5-2698v4")).unwrap();
    let sib = *plat.cpus[0].siblings.iter().find(|&&c| c != 0).expect("an SMT sibling");
    let core_domain = plat.cpus[0].freq_domain;
    assert_eq!(plat.cpus[sib].freq_domain, core_domain);
    let sib_then_idle = format!(r#"{{ run = "20ms" }}, {{ sleep = "10s" }}"#);
    let name = format!("bdw-{sib}");
    let tasks: Vec<(CpuId, &str)> = vec![(0, r#"{ run = "10s" }"#), (sib, sib_then_idle.as_str())];
    // CPU 0 asks 1.2 GHz, every other CPU 2.2 GHz (the sibling included).
    let khz = |cpu: CpuId| if cpu == 0 { LOW_KHZ } else { 2_200_000 };
    let e = run("broadwell-2s-e5-2698v4", &name, &tasks, khz, 10);
    assert_eq!(e.pol.len(), e.plat.nr_cpus(), "one policy per logical CPU");
    assert_eq!(e.domains[core_domain].cur_khz, 2_200_000, "both threads active: the sibling's higher request");
    let e = run("broadwell-2s-e5-2698v4", &name, &tasks, khz, 60);
    assert!(e.rqs[sib].idle_state().is_some(), "the sibling asleep");
    assert_eq!(e.domains[core_domain].cur_khz, 2_200_000, "the sibling asleep: its request still holds the core");
    // The other way round: the sibling's request is the lower one, so the
    // core runs at CPU 0's.
    let e = run("broadwell-2s-e5-2698v4", &name, &tasks, |cpu| if cpu == 0 { 2_200_000 } else { LOW_KHZ }, 60);
    assert_eq!(e.domains[core_domain].cur_khz, 2_200_000);
}

/// On the Skylake's one package clock an active core asks for the higher
/// of its two threads' requests: CPU 4 (CPU 0's sibling, `threads-last`)
/// asked for 3.0 GHz and sleeps; while CPU 0 runs, the package runs at
/// 3.0 GHz; once CPU 0 sleeps too, core 0 no longer counts and the clock
/// is CPU 1's 1.2 GHz.
#[test]
fn skylake_sleeping_thread_holds_the_clock_while_its_core_runs() {
    let sib = 4;
    let tasks: &[(CpuId, &str)] = &[
        (0, r#"{ run = "20ms" }, { sleep = "10s" }"#),
        (1, r#"{ run = "10s" }"#),
        (sib, r#"{ run = "2ms" }, { sleep = "10s" }"#),
    ];
    let khz = |cpu: CpuId| if cpu == 4 { HIGH_KHZ } else { LOW_KHZ };
    let e = run(SKYLAKE, "sky-sib", tasks, khz, 10);
    assert_eq!(e.plat.cpus[sib].core, e.plat.cpus[0].core, "CPU 4 is CPU 0's sibling");
    assert!(e.rqs[sib].idle_state().is_some() && e.rqs[0].idle_state().is_none());
    assert_eq!(e.core_c0[e.plat.cpus[0].core], 1);
    assert_eq!(e.domains[0].cur_khz, HIGH_KHZ, "core 0 active: its sleeping thread's 3.0 GHz counts");
    // 58 ms: between two of the 4-ms ticks, so neither thread is leaving
    // idle for one (a CPU leaving idle is active from the interrupt on).
    let e = run(SKYLAKE, "sky-sib", tasks, khz, 58);
    assert_eq!(e.core_c0[e.plat.cpus[0].core], 0, "core 0 asleep");
    assert_eq!(e.domains[0].cur_khz, LOW_KHZ, "core 0 asleep: neither thread's request counts");
}

//! The built-in platforms: the shipped `data/platforms/*.toml` files,
//! compiled into the binary so a run needs no data directory.

/// The platforms compiled into the binary: name and file text.
pub(super) const BUILTIN: &[(&str, &str)] = &[
    (
        "skylake-e3-1240v5",
        include_str!("../../../../../data/platforms/skylake-e3-1240v5.toml"),
    ),
    (
        "broadwell-2s-e5-2698v4",
        include_str!("../../../../../data/platforms/broadwell-2s-e5-2698v4.toml"),
    ),
    (
        "haswell-2s-e5-2670v3",
        include_str!("../../../../../data/platforms/haswell-2s-e5-2670v3.toml"),
    ),
    ("power8", include_str!("../../../../../data/platforms/power8.toml")),
    ("power9", include_str!("../../../../../data/platforms/power9.toml")),
    ("juno-r0", include_str!("../../../../../data/platforms/juno-r0.toml")),
    ("juno-r2", include_str!("../../../../../data/platforms/juno-r2.toml")),
    ("hikey960", include_str!("../../../../../data/platforms/hikey960.toml")),
    ("sd835", include_str!("../../../../../data/platforms/sd835.toml")),
    ("rk3399", include_str!("../../../../../data/platforms/rk3399.toml")),
    ("i7-2600k", include_str!("../../../../../data/platforms/i7-2600k.toml")),
    ("i5-10600k", include_str!("../../../../../data/platforms/i5-10600k.toml")),
    ("gs101", include_str!("../../../../../data/platforms/gs101.toml")),
    ("epyc-7702-2s", include_str!("../../../../../data/platforms/epyc-7702-2s.toml")),
    ("i9-12900k", include_str!("../../../../../data/platforms/i9-12900k.toml")),
];

/// Names of the built-in platforms.
pub fn platform_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::testutil::{check_consistent, named};
    use crate::platform::Driver;

    // --- the shipped platforms ---------------------------------------------

    #[test]
    fn builtin_names() {
        assert_eq!(
            platform_names(),
            vec![
                "skylake-e3-1240v5",
                "broadwell-2s-e5-2698v4",
                "haswell-2s-e5-2670v3",
                "power8",
                "power9",
                "juno-r0",
                "juno-r2",
                "hikey960",
                "sd835",
                "rk3399",
                "i7-2600k",
                "i5-10600k",
                "gs101",
                "epyc-7702-2s",
                "i9-12900k"
            ]
        );
    }

    #[test]
    fn power8_resolves() {
        let p = named("power8").unwrap();
        assert_eq!(p.nr_cpus(), 160);
        assert_eq!(p.cpus[0].siblings, (1..8).collect::<Vec<_>>());
        assert_eq!(p.cpus[80].package, 1);
        assert_eq!(p.freq_domains.len(), 20);
        assert_eq!(p.freq_domains[1].cpus, (8..16).collect::<Vec<_>>());
        // One rail per chip, shared by its ten cores' clocks.
        assert_eq!(p.voltage_domains.len(), 2);
        assert_eq!(p.voltage_domains[0].freq_domains, (0..10).collect::<Vec<_>>());
        assert_eq!(p.driver, Driver::Powernv { global_pstate: true });
        assert_eq!(p.hz, 100);
        let t = p.cpu_type_of(0);
        assert_eq!((t.min_khz(), t.base_khz, t.max_khz()), (2_100_000, 3_500_000, 4_100_000));
        // pmin -> pmax waits for the rail: milliseconds.
        let slew_us = f64::from(t.opps[t.opps.len() - 1].mv - t.opps[0].mv) / p.voltage_domains[0].slew_mv_per_us;
        assert!((slew_us - 2000.0).abs() < 1.0, "{slew_us}");
        let names: Vec<&str> = t.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["snooze", "nap", "fastsleep_"]);
        check_consistent(&p);
        assert_eq!(named("power8:global_pstate=off").unwrap().driver, Driver::Powernv { global_pstate: false });
    }

    #[test]
    fn power9_resolves() {
        let p = named("power9").unwrap();
        assert_eq!(p.nr_cpus(), 160);
        assert_eq!(p.cpus[0].siblings, vec![1, 2, 3]);
        // Quads share a clock; the chip shares a rail.
        assert_eq!(p.freq_domains.len(), 10);
        assert_eq!(p.freq_domains[0].cpus, (0..16).collect::<Vec<_>>());
        assert_eq!(p.voltage_domains.len(), 2);
        assert_eq!(p.llcs.len(), 2);
        assert_eq!(p.driver, Driver::Powernv { global_pstate: false });
        let t = p.cpu_type_of(0);
        let states: Vec<(&str, u64, u64)> = t
            .idle_states
            .iter()
            .map(|s| (s.name.as_str(), s.exit_latency_ns / 1000, s.target_residency_ns / 1000))
            .collect();
        assert_eq!(
            states,
            [
                ("snooze", 0, 0),
                ("stop0_lite", 1, 10),
                ("stop0", 2, 20),
                ("stop1", 5, 50),
                ("stop2", 10, 100),
                ("stop4", 100, 10_000),
                ("stop5", 200, 20_000)
            ]
        );
        check_consistent(&p);
    }

    #[test]
    fn skylake_resolves() {
        let p = named("skylake-e3-1240v5").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        assert_eq!((p.cores.len(), p.packages.len()), (4, 1));
        assert_eq!(p.cpus[0].siblings, vec![4]);
        assert_eq!(p.cpus[4].siblings, vec![0]);
        assert_eq!(p.cpus[3].siblings, vec![7]);
        assert_eq!(p.freq_domains.len(), 1);
        assert_eq!(p.freq_domains[0].cpus, (0..8).collect::<Vec<_>>());
        assert_eq!(p.voltage_domains.len(), 1);
        assert_eq!(p.llcs.len(), 1);
        assert_eq!(
            (p.driver.name(), p.hwp, p.hz),
            ("intel_pstate", true, 250)
        );
        let t = p.cpu_type_of(0);
        assert_eq!(t.min_khz(), 800_000);
        assert_eq!(t.base_khz, 3_500_000);
        assert_eq!(t.max_khz(), 3_900_000);
        assert!(t.opps.len() <= 32);
        // The x86 frequency-invariance evaluation's table of this machine.
        let turbo: Vec<u32> = (1..=4).map(|n| t.turbo_limit_khz(n)).collect();
        assert_eq!(turbo, [3_900_000, 3_900_000, 3_800_000, 3_700_000]);
        assert_eq!(t.transition_latency_ns, 20_000);
        let names: Vec<&str> = t.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C1", "C1E", "C3", "C6", "C7s", "C8"]);
        assert!(t.idle_states[0].polling);
        assert_eq!(t.idle_states[4].exit_latency_ns, 85_000);
        assert_eq!(t.idle_states[4].target_residency_ns, 200_000);
        let ssd = &p.devices[p.device_index("ssd").unwrap()];
        assert_eq!((ssd.read_ns, ssd.block_bytes), (100_000, 4096));
        assert!((ssd.bytes_per_us - 500.0).abs() < 1e-9);
        check_consistent(&p);
    }

    #[test]
    fn broadwell_resolves() {
        let p = named("broadwell-2s-e5-2698v4").unwrap();
        assert_eq!(p.nr_cpus(), 80);
        assert_eq!((p.cores.len(), p.packages.len()), (40, 2));
        assert_eq!(p.cpus[0].siblings, vec![40]);
        assert_eq!(p.cpus[20].siblings, vec![60]);
        assert_eq!(p.cpus[60].siblings, vec![20]);
        assert_eq!(p.cpus[19].package, 0);
        assert_eq!(p.cpus[20].package, 1);
        assert_eq!(p.cpus[40].package, 0);
        assert_eq!(p.cpus[79].package, 1);
        assert_eq!(p.freq_domains.len(), 40);
        assert_eq!(p.freq_domains[20].cpus, vec![20, 60]);
        assert_eq!(p.freq_domains[20].package, 1);
        assert_eq!(p.voltage_domains.len(), 40);
        assert_eq!(p.llcs.len(), 2);
        assert_eq!(p.llcs[1].len(), 40);
        assert_eq!(p.cpus[60].llc, 1);
        assert!(!p.hwp);
        let t = p.cpu_type_of(79);
        assert_eq!(t.min_khz(), 1_200_000);
        assert_eq!(t.base_khz, 2_200_000);
        assert_eq!(t.max_khz(), 3_600_000);
        assert_eq!(t.turbo_limit_khz(20), 2_700_000);
        let names: Vec<&str> = t.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C1", "C1E", "C3", "C6"]);
        let outside_cst: Vec<&str> = t.idle_states.iter().filter(|s| !s.in_acpi_cst).map(|s| s.name.as_str()).collect();
        assert_eq!(outside_cst, ["C3"]);
        check_consistent(&p);
    }

    /// The 48x-HASWELL-NUMA of the x86 frequency-invariance evaluation (1567c3e3467c, section 5.1):
    /// 2 x 12 cores / 24 threads; EFFIC 1200, BASE 2300, 1C/2C 3100, 3C 2900, 4C 2800, 5C 2700,
    /// 6C..12C 2600 MHz; idle states of intel_idle.c hsw_cstates (C1 2/2, C1E 10/20, C3 33/100,
    /// C6 133/400 us).
    #[test]
    fn haswell_matches_its_sources() {
        let p = named("haswell-2s-e5-2670v3").unwrap();
        assert_eq!(p.nr_cpus(), 48);
        assert_eq!((p.cores.len(), p.packages.len()), (24, 2));
        assert_eq!(p.cpus[0].siblings, vec![24]);
        assert_eq!(p.cpus[12].siblings, vec![36]);
        assert_eq!((p.cpus[11].package, p.cpus[12].package, p.cpus[24].package, p.cpus[47].package), (0, 1, 0, 1));
        assert_eq!(p.llcs.len(), 2);
        assert!(!p.hwp);
        let t = p.cpu_type_of(47);
        assert_eq!((t.min_khz(), t.base_khz, t.max_khz()), (1_200_000, 2_300_000, 3_100_000));
        let turbo: Vec<u32> = (1..=12).map(|n| t.turbo_limit_khz(n) / 1000).collect();
        assert_eq!(turbo, [3100, 3100, 2900, 2800, 2700, 2600, 2600, 2600, 2600, 2600, 2600, 2600]);
        let states: Vec<(&str, u64, u64)> =
            t.idle_states.iter().map(|s| (s.name.as_str(), s.exit_latency_ns / 1000, s.target_residency_ns / 1000)).collect();
        assert_eq!(states, [("POLL", 0, 0), ("C1", 2, 2), ("C1E", 10, 20), ("C3", 33, 100), ("C6", 133, 400)]);
        // "48x_HASWELL_NUMA ... HDD storage": a hard disk, positioning in a 7200-rpm drive's average seek and
        // rotational latency (8.2 + 4.16 ms) for a read and for a cache flush, one request at a time.
        let d = &p.devices[0];
        assert_eq!((d.name.as_str(), d.queue_depth, d.read_ns, d.flush_ns), ("hdd", 1, 12_360_000, 12_360_000));
        assert!(!d.flush_queued);
        check_consistent(&p);
    }

    /// Juno r0 as the board reported itself to LISA (plat_info.yml):
    /// numbering, capacities, OPPs, and the kernel Energy Model it read.
    #[test]
    fn juno_r0_resolves() {
        let p = named("juno-r0").unwrap();
        assert_eq!(p.nr_cpus(), 6);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 3, 4, 5]);
        assert_eq!(p.freq_domains[1].cpus, vec![1, 2]);
        let caps: Vec<u32> = (0..6).map(|c| p.cpu_type_of(c).capacity).collect();
        assert_eq!(caps, [446, 1024, 1024, 446, 446, 446]);
        assert_eq!(p.driver, Driver::CpufreqDt);
        // The kernel EM (integer mW) from ceff * V^2 * f.
        for (cpu, em_mw) in [(0, [42, 58, 79, 97, 119]), (1, [160, 239, 343, 454, 583])] {
            let t = p.cpu_type_of(cpu);
            let mw: Vec<u32> = t
                .opps
                .iter()
                .map(|o| crate::platform::energy::dynamic_mw(t, o.khz, o.mv, 1) as u32)
                .collect();
            assert_eq!(mw, em_mw, "cpu {cpu}");
        }
        let t = p.cpu_type_of(4);
        let states: Vec<(&str, bool, u64, u64)> = t
            .idle_states
            .iter()
            .map(|s| (s.name.as_str(), s.polling, s.exit_latency_ns / 1000, s.target_residency_ns / 1000))
            .collect();
        assert_eq!(
            states,
            [("WFI", false, 1, 1), ("cpu-sleep-0", false, 1500, 2000), ("cluster-sleep-0", false, 1600, 2500)]
        );
        check_consistent(&p);
    }

    #[test]
    fn juno_r2_resolves() {
        let p = named("juno-r2").unwrap();
        assert_eq!(p.freq_domains[0].cpus, vec![0, 3, 4, 5]);
        assert_eq!(p.cpu_type_of(0).capacity, 383);
        assert_eq!(p.cpu_type_of(1).capacity, 1024);
        // The maxima the trace's devlib markers report.
        assert_eq!((p.cpu_type_of(5).max_khz(), p.cpu_type_of(2).max_khz()), (950_000, 1_200_000));
        check_consistent(&p);
    }

    #[test]
    fn hikey960_resolves() {
        let p = named("hikey960").unwrap();
        assert_eq!(p.freq_domains[0].cpus, (0..4).collect::<Vec<_>>());
        assert_eq!(p.freq_domains[1].cpus, (4..8).collect::<Vec<_>>());
        assert_eq!((p.cpu_type_of(0).capacity, p.cpu_type_of(7).capacity), (462, 1024));
        assert_eq!(p.cpu_type_of(7).transition_latency_ns, 300_000);
        let em = crate::platform::energy::dynamic_mw(p.cpu_type_of(7), 2_362_000, 1100, 1);
        assert!((em - 1571.9).abs() < 0.1, "{em}");
        check_consistent(&p);
    }

    /// RK3399 against its device trees: capacities (capacity-dmips-mhz
    /// 485/1024 of mainline rk3399-base.dtsi), the OPP tables of
    /// rk3399-opp.dtsi, dpc 100/436 of rk3399.dtsi and the idle states
    /// CPU_SLEEP and CLUSTER_SLEEP of rk3399-base.dtsi @ 8b87f67b.
    #[test]
    fn rk3399_matches_its_device_trees() {
        let p = named("rk3399").unwrap();
        assert_eq!(p.nr_cpus(), 6);
        assert_eq!(p.driver, Driver::CpufreqDt);
        assert_eq!(p.freq_domains.len(), 2);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 1, 2, 3]);
        assert_eq!(p.freq_domains[1].cpus, vec![4, 5]);
        let caps: Vec<u32> = (0..6).map(|c| p.cpu_type_of(c).capacity).collect();
        assert_eq!(caps, [381, 381, 381, 381, 1024, 1024]);
        // The kernel's normalisation of capacity-dmips-mhz: 485 * 1416 / 1800.
        assert_eq!(485 * 1416 / 1800, 381);
        let opps = |cpu: usize| -> Vec<(u32, u32)> {
            p.cpu_type_of(cpu).opps.iter().map(|o| (o.khz / 1000, o.mv)).collect()
        };
        assert_eq!(
            opps(0),
            [(408, 800), (600, 800), (816, 850), (1008, 925), (1200, 1000), (1416, 1125)]
        );
        assert_eq!(
            opps(4),
            [(408, 800), (600, 800), (816, 825), (1008, 875), (1200, 950), (1416, 1025), (1608, 1100), (1800, 1200)]
        );
        for (cpu, ceff) in [(0, 0.100), (4, 0.436)] {
            let t = p.cpu_type_of(cpu);
            assert!((t.ceff_nf - ceff).abs() < 1e-12, "cpu {cpu}");
            assert_eq!(t.transition_latency_ns, 40_000);
        }
        // The kernel EM at the top OPPs (dpc * V^2 * MHz).
        let em = crate::platform::energy::dynamic_mw(p.cpu_type_of(4), 1_800_000, 1200, 1);
        assert!((em - 1130.1).abs() < 0.1, "{em}");
        for cpu in [0, 4] {
            let states: Vec<(&str, u64, u64)> = p
                .cpu_type_of(cpu)
                .idle_states
                .iter()
                .map(|s| (s.name.as_str(), s.exit_latency_ns / 1000, s.target_residency_ns / 1000))
                .collect();
            // entry + exit latency; min-residency.
            assert_eq!(states, [("WFI", 1, 1), ("cpu-sleep", 120 + 250, 900), ("cluster-sleep", 400 + 500, 2000)]);
        }
        let devs: Vec<(&str, u32, Option<usize>)> =
            p.devices.iter().map(|d| (d.name.as_str(), d.queue_depth, d.irq_cpu)).collect();
        assert_eq!(devs, [("nvme", 32, None), ("emmc", 3, Some(0)), ("sdcard", 1, Some(0))]);
        assert!((p.devices[1].write_bytes_per_us - 125.0).abs() < 1e-9);
        check_consistent(&p);
    }

    /// The systrace's frequencies are OPPs of the SD835 file, and its
    /// idle-state indices 0 and 2 exist.
    #[test]
    fn sd835_has_the_traced_frequencies() {
        let p = named("sd835").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        for (cpu, khz) in [(0, 300_000), (0, 518_400), (4, 300_000), (4, 345_600), (4, 422_400), (4, 499_200)] {
            assert!(p.cpu_type_of(cpu).opp_index(khz).is_some(), "cpu {cpu} {khz}");
        }
        assert_eq!(p.cpu_type_of(4).idle_states[2].name, "pc");
        check_consistent(&p);
    }

    /// (name, exit latency µs, target residency µs) of a CPU's idle states.
    fn idle_table(p: &crate::platform::Platform, cpu: usize) -> Vec<(&str, u64, u64)> {
        p.cpu_type_of(cpu)
            .idle_states
            .iter()
            .map(|s| (s.name.as_str(), s.exit_latency_ns / 1000, s.target_residency_ns / 1000))
            .collect()
    }

    /// i7-2600K: 4 cores / 8 threads with threads last, one clock, no HWP;
    /// 1.6-3.4 GHz plus Intel's 4/3/2/1 turbo bins to 3.8 GHz; POLL and
    /// intel_idle's snb_cstates without C7 (torvalds/linux @ 00433eae).
    #[test]
    fn i7_2600k_matches_its_sources() {
        let p = named("i7-2600k").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        assert_eq!((p.cores.len(), p.packages.len()), (4, 1));
        assert_eq!(p.cpus[0].siblings, vec![4]);
        assert_eq!(p.cpus[7].siblings, vec![3]);
        assert_eq!(p.freq_domains.len(), 1);
        assert_eq!(p.freq_domains[0].cpus, (0..8).collect::<Vec<_>>());
        assert_eq!(p.llcs.len(), 1);
        assert_eq!((p.driver.name(), p.hwp, p.hz), ("intel_pstate", false, 250));
        assert_eq!(p.min_kernel, None);
        let t = p.cpu_type_of(0);
        assert_eq!((t.min_khz(), t.base_khz, t.max_khz()), (1_600_000, 3_400_000, 3_800_000));
        let turbo: Vec<u32> = (1..=4).map(|n| t.turbo_limit_khz(n)).collect();
        assert_eq!(turbo, [3_800_000, 3_700_000, 3_600_000, 3_500_000]);
        assert!(t.opps.windows(2).all(|w| w[1].khz - w[0].khz == crate::platform::INTEL_PSTATE_SCALING_KHZ));
        assert_eq!(
            idle_table(&p, 5),
            [("POLL", 0, 0), ("C1", 2, 2), ("C1E", 10, 20), ("C3", 80, 211), ("C6", 104, 345)]
        );
        assert!(t.idle_states[0].polling);
        check_consistent(&p);
    }

    /// i5-10600K: 6 cores / 12 threads, HWP, 0.8-4.1 GHz and turbo to
    /// 4.8 GHz (4.5 GHz on all six cores); the idle states intel_idle builds
    /// from ACPI _CST for a model without a table (C1 target = latency,
    /// deeper ones 3 x latency), so kernels before v5.6 are refused.
    #[test]
    fn i5_10600k_matches_its_sources() {
        let p = named("i5-10600k").unwrap();
        assert_eq!(p.nr_cpus(), 12);
        assert_eq!((p.cores.len(), p.packages.len()), (6, 1));
        assert_eq!(p.cpus[0].siblings, vec![6]);
        assert_eq!(p.cpus[11].siblings, vec![5]);
        assert_eq!(p.freq_domains.len(), 1);
        assert_eq!((p.driver.name(), p.hwp), ("intel_pstate", true));
        let t = p.cpu_type_of(0);
        assert_eq!((t.min_khz(), t.base_khz, t.max_khz()), (800_000, 4_100_000, 4_800_000));
        assert_eq!((t.turbo_limit_khz(1), t.turbo_limit_khz(6)), (4_800_000, 4_500_000));
        let states = idle_table(&p, 0);
        assert_eq!(states, [("POLL", 0, 0), ("C1_ACPI", 1, 1), ("C2_ACPI", 127, 381), ("C3_ACPI", 1048, 3144)]);
        for &(_, exit, target) in &states[2..] {
            assert_eq!(target, 3 * exit, "intel_idle_init_cstates_acpi: 3 x latency past C1");
        }
        let m = p.min_kernel.as_ref().unwrap();
        assert_eq!((m.major, m.minor), (5, 6));
        check_consistent(&p);
    }

    /// i9-12900K: 8 P-cores with two threads (CPUs 2n, 2n+1), then 8 E-cores
    /// (16-23); the Intel spec page's clocks per core type; intel_idle's
    /// adl_cstates (v5.19) without the C1 it marks unusable; HWP levels of
    /// 78.741 MHz on the P-cores, 100 MHz on the E-cores; the E-core's
    /// capacity from the two highest levels (39 × 1024 / 65).
    #[test]
    fn i9_12900k_matches_its_sources() {
        let p = named("i9-12900k").unwrap();
        assert_eq!(p.nr_cpus(), 24);
        assert_eq!((p.cores.len(), p.packages.len(), p.cpu_types.len()), (16, 1, 2));
        assert_eq!((p.cpus[0].siblings.clone(), p.cpus[15].siblings.clone()), (vec![1], vec![14]));
        assert!(p.cpus[16..].iter().all(|c| c.siblings.is_empty()));
        let doms: Vec<Vec<usize>> = p.freq_domains.iter().map(|d| d.cpus.clone()).collect();
        assert_eq!(doms, [(0..16).collect::<Vec<_>>(), (16..20).collect(), (20..24).collect()]);
        assert_eq!(p.voltage_domains.len(), 1, "one VccCore rail");
        assert_eq!((p.driver.name(), p.hwp), ("intel_pstate", true));
        let (pc, ec) = (p.cpu_type_of(0), p.cpu_type_of(16));
        assert_eq!((pc.name.as_str(), ec.name.as_str()), ("goldencove", "gracemont"));
        assert_eq!((pc.min_khz(), pc.base_khz, pc.max_khz()), (800_000, 3_200_000, 5_100_000));
        assert_eq!((ec.min_khz(), ec.base_khz, ec.max_khz()), (800_000, 2_400_000, 3_900_000));
        assert_eq!((pc.hwp_khz_per_perf, ec.hwp_khz_per_perf), (crate::platform::HYBRID_SCALING_FACTOR_ADL_KHZ, 100_000));
        assert!(p.hwp_hybrid() && p.has_smt());
        assert_eq!((pc.capacity, ec.capacity), (1024, 39 * 1024 / 65));
        let adl = [("POLL", 0, 0), ("C1E", 2, 4), ("C6", 220, 600), ("C8", 280, 800), ("C10", 680, 2000)];
        assert_eq!(idle_table(&p, 0), adl);
        assert_eq!(idle_table(&p, 23), adl);
        let names: Vec<&str> = p.packages[0].cstates.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["PC6", "PC8", "PC10"]);
        let m = p.min_kernel.as_ref().unwrap();
        assert_eq!((m.major, m.minor), (5, 19));
        check_consistent(&p);
    }

    /// GS101 against mainline gs101.dtsi @ 01272f05aae5: three clusters
    /// (4 A55, 2 A76, 2 X1), capacities from capacity-dmips-mhz 250/620/1024
    /// at 1803/2253/2802 MHz, the OPP tables (µV truncated to mV as the
    /// kernel's EM does), dynamic-power-coefficient 70/284/650 and the PSCI
    /// idle states (entry + exit latency, min-residency).
    #[test]
    fn gs101_matches_its_device_tree() {
        let p = named("gs101").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        assert_eq!(p.driver, Driver::CpufreqDt);
        let doms: Vec<Vec<usize>> = p.freq_domains.iter().map(|d| d.cpus.clone()).collect();
        assert_eq!(doms, [vec![0, 1, 2, 3], vec![4, 5], vec![6, 7]]);
        let caps: Vec<u32> = (0..8).map(|c| p.cpu_type_of(c).capacity).collect();
        assert_eq!(caps, [160, 160, 160, 160, 498, 498, 1024, 1024]);
        assert_eq!((250 * 1803 * 1024 / (1024 * 2802), 620 * 2253 * 1024 / (1024 * 2802)), (160, 498));
        let range = |cpu: usize| {
            let t = p.cpu_type_of(cpu);
            (t.opps.len(), t.min_khz(), t.max_khz(), t.opps[0].mv, t.opps[t.opps.len() - 1].mv)
        };
        assert_eq!(range(0), (11, 300_000, 1_803_000, 537, 906));
        assert_eq!(range(4), (14, 400_000, 2_253_000, 506, 968));
        assert_eq!(range(6), (17, 500_000, 2_802_000, 500, 1056));
        for (cpu, dpc) in [(0, 70), (4, 284), (6, 650)] {
            let t = p.cpu_type_of(cpu);
            assert_eq!(t.dynamic_power_coefficient, Some(dpc));
            assert_eq!(t.transition_latency_ns, 500_000);
        }
        // The kernel EM at the X1's top OPP: 650 * 1056^2 * 2802 / 1e9 mW.
        let em = crate::platform::energy::dynamic_mw(p.cpu_type_of(7), 2_802_000, 1056, 1);
        assert!((em - 2031.0).abs() < 0.1, "{em}");
        assert_eq!(idle_table(&p, 0), [("WFI", 1, 1), ("cpu-ananke-sleep", 70 + 160, 2000)]);
        assert_eq!(idle_table(&p, 5), [("WFI", 1, 1), ("cpu-enyo-sleep", 150 + 190, 2500)]);
        assert_eq!(idle_table(&p, 7), [("WFI", 1, 1), ("cpu-hera-sleep", 235 + 220, 3500)]);
        assert_eq!(p.housekeeping, crate::platform::HousekeepingProfile::Phone);
        let m = p.min_kernel.as_ref().unwrap();
        assert_eq!((m.major, m.minor), (5, 10));
        check_consistent(&p);
    }

    /// EPYC 7702, two sockets: 2 x 64 cores / 128 threads with threads last,
    /// sixteen 4-core CCXs (an LLC each) per socket, a clock per core; the
    /// CPPC levels of the linux-pm report (nominal 152 = 2.0 GHz, lowest
    /// non-linear 115 = 1.51 GHz, lowest 31 = 408 MHz; highest 255 assumed,
    /// 3.355 GHz); acpi_idle's states with target = 2 x latency; boots
    /// acpi-cpufreq, amd-pstate only when asked.
    #[test]
    fn epyc_7702_matches_its_sources() {
        let p = named("epyc-7702-2s").unwrap();
        assert_eq!(p.nr_cpus(), 256);
        assert_eq!((p.cores.len(), p.packages.len()), (128, 2));
        assert_eq!(p.cpus[0].siblings, vec![128]);
        assert_eq!(p.cpus[64].siblings, vec![192]);
        assert_eq!(p.llcs.len(), 32);
        assert!(p.llcs.iter().all(|l| l.len() == 8), "4 cores x 2 threads per CCX");
        assert_eq!(p.freq_domains.len(), 128);
        assert_eq!((p.driver, p.amd_pstate), (Driver::AcpiCpufreq, None));
        assert!(p.acpi_pm_profile.is_server());
        let t = p.cpu_type_of(0);
        assert_eq!((t.min_khz(), t.base_khz, t.max_khz()), (400_000, 2_000_000, 3_300_000));
        let c = t.cppc.unwrap();
        assert_eq!((c.highest_perf, c.nominal_perf, c.lowest_nonlinear_perf, c.lowest_perf), (255, 152, 115, 31));
        assert_eq!((c.perf_to_khz(152), c.perf_to_khz(115) / 10_000, c.perf_to_khz(31) / 10_000), (2_000_000, 151, 40));
        assert_eq!(c.max_khz() / 10_000, 335);
        // The grid's ends are the CPPC range's: the lowest and highest
        // levels run at its first and last operating points.
        assert_eq!((c.opp_of(t, 31), c.opp_of(t, 255)), (0, t.opps.len() - 1));
        assert_eq!(t.opps[c.opp_of(t, 152)].khz, 2_000_000);
        assert_eq!(idle_table(&p, 200), [("POLL", 0, 0), ("C1", 1, 2), ("C2", 400, 800)]);
        assert_eq!(t.idle_states[2].desc, "ACPI IOPORT 0x814");
        let pl = p.packages[0].power_limit.as_ref().unwrap();
        assert!((pl.limit_mw - 200_000.0).abs() < 1e-9);
        let active = named("epyc-7702-2s:amd_pstate=active").unwrap();
        assert_eq!(active.amd_pstate, Some(crate::platform::AmdPstateMode::Active));
        let e = named("skylake-e3-1240v5:amd_pstate=passive").unwrap_err().to_string();
        assert!(e.contains("no CPPC levels"), "{e}");
        let e = named("epyc-7702-2s:amd_pstate=on").unwrap_err().to_string();
        assert!(e.contains("passive, active or guided"), "{e}");
        check_consistent(&p);
    }

    /// The 2018 mail's own figures on this machine bound its drive: a sqlite
    /// commit at 2098/s (476 µs) is three fsyncs on ext4, each a data write
    /// and a journal commit of two cache flushes; a one-client pgbench-rw
    /// transaction at 2692/s (371 µs) holds one WAL write and one flush.
    #[test]
    fn skylake_ssd_fits_the_2018_mails_commit_rates() {
        let p = named("skylake-e3-1240v5").unwrap();
        let d = &p.devices[0];
        assert!(6 * d.flush_ns + 3 * d.write_ns < 1_000_000_000 / 2098, "{} {}", d.flush_ns, d.write_ns);
        assert!(d.flush_ns + d.write_ns < 1_000_000_000 / 2692);
    }

    /// A cpuidle state's exit latency covers the package's exit
    /// (Documentation/admin-guide/pm/cpuidle.rst, "Representation of Idle
    /// States"; ACPI _CST's worst-case latency): no shipped file adds a
    /// package exit on top of its core rows, and every x86 file has
    /// package C-states for that to hold of.
    #[test]
    fn no_shipped_package_c_state_adds_to_the_core_rows_exit() {
        let mut with_states = Vec::new();
        for name in platform_names() {
            let p = named(name).unwrap();
            for pkg in &p.packages {
                for c in &pkg.cstates {
                    assert_eq!(c.exit_latency_ns, 0, "{name} {}", c.name);
                }
            }
            if p.packages.iter().any(|pkg| !pkg.cstates.is_empty()) {
                with_states.push(name);
            }
        }
        with_states.sort_unstable();
        assert_eq!(
            with_states,
            ["broadwell-2s-e5-2698v4", "haswell-2s-e5-2670v3", "i5-10600k", "i7-2600k", "i9-12900k", "skylake-e3-1240v5"]
        );
    }
}

//! The Energy Model (EM) of the CPUs: one performance domain per cpufreq
//! policy, each a table of performance states (frequency, power, cost), as
//! the kernel builds it from the device tree and as Energy-Aware
//! Scheduling reads it.
//!
//! Models: Linux v5.0 and v6.8 mainline, kernel/power/energy_model.c
//! (em_create_perf_table / em_create_pd: the cost of each state),
//! include/linux/energy_model.h (em_cpu_energy, em_pd_energy in v5.0) and
//! drivers/opp/of.c (the power of an OPP from `dynamic-power-coefficient`,
//! `of_dev_pm_opp_get_cpu_power` in v5.0, `_get_dt_power` in v6.8).
//!
//! The idea. The device tree gives each CPU a dynamic-power-coefficient
//! (dpc, µW/MHz/V²); the OPP core turns each operating point into the power
//! of one busy CPU, `dpc · mV² · MHz / 10⁹` mW, truncated (in µW, `/ 10⁶`,
//! from v5.19, ae6ccaa65038 "PM: EM: convert power field to micro-Watts
//! precision"). The EM then gives each state a cost, `power · f_max / f`:
//! the energy of one unit of utilisation at that state, so that the energy
//! of a domain whose CPUs together run `sum_util` at the state its busiest
//! CPU needs is `cost · sum_util / scale_cpu` (em_cpu_energy). The state
//! is the lowest whose frequency reaches what schedutil would ask for the
//! busiest CPU: 1.25 × its utilisation scaled to the top frequency (before
//! v6.8 the 25 % headroom is added here; from v6.8, 9c0b4bb7f630, the
//! caller passes a utilisation that already has it).
//!
//! Left out: static power (the kernel's EM has none), the inefficient
//! states of v5.16 (88f7a89560f3; costs that do not fall with frequency,
//! skipped only when cpufreq skips them too, which govlab's schedutil does
//! not), the runtime-modifiable tables and `cost = 10 · power / perf` of
//! v6.9, thermal pressure (the allowed capacity is the CPU's capacity).

use serde::Serialize;

use crate::platform::{CpuId, Platform};

/// The unit of `power` in the tables: the OPP core's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerUnit {
    /// mW (v5.0 to v5.18).
    Milliwatts,
    /// µW (from v5.19, ae6ccaa65038).
    Microwatts,
}

/// em_perf_state (em_cap_state in v5.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PerfState {
    pub frequency_khz: u32,
    /// Power of one busy CPU at this state, in the table's [`PowerUnit`].
    pub power: u64,
    /// `power · f_max / frequency`, truncated.
    pub cost: u64,
}

/// em_perf_domain: the CPUs of one cpufreq policy and their states.
#[derive(Debug, Clone, Serialize)]
pub struct PerfDomain {
    pub cpus: Vec<CpuId>,
    /// arch_scale_cpu_capacity() of the domain's CPUs.
    pub scale_cpu: u64,
    pub unit: PowerUnit,
    /// Ascending frequency.
    pub table: Vec<PerfState>,
}

/// The power of one CPU at an OPP, from the device tree's coefficient:
/// `dpc · mV² · MHz` µW·10³, truncated to the unit (drivers/opp/of.c).
#[must_use]
pub fn opp_power(dpc: u32, mv: u32, khz: u32, unit: PowerUnit) -> u64 {
    let mhz = u64::from(khz) / 1000;
    let raw = u64::from(dpc) * u64::from(mv) * u64::from(mv) * mhz;
    match unit {
        PowerUnit::Milliwatts => raw / 1_000_000_000,
        PowerUnit::Microwatts => raw / 1_000_000,
    }
}

/// The performance domains of `plat`, one per frequency domain, in the
/// root domain's list order (build_perf_domains() prepends each new domain
/// while walking CPUs up from 0, so the domain of the highest first CPU
/// comes first). None when a CPU type has no `dynamic_power_coefficient`:
/// no Energy Model is registered, and EAS cannot run.
#[must_use]
pub fn build(plat: &Platform, unit: PowerUnit) -> Option<Vec<PerfDomain>> {
    let mut pds = Vec::with_capacity(plat.freq_domains.len());
    for fd in &plat.freq_domains {
        let ct = &plat.cpu_types[fd.cpu_type];
        let dpc = ct.dynamic_power_coefficient?;
        let fmax = u64::from(ct.opps.last()?.khz);
        let table = ct
            .opps
            .iter()
            .map(|o| {
                let power = opp_power(dpc, o.mv, o.khz, unit);
                PerfState { frequency_khz: o.khz, power, cost: fmax * power / u64::from(o.khz) }
            })
            .collect();
        pds.push(PerfDomain { cpus: fd.cpus.clone(), scale_cpu: u64::from(ct.capacity), unit, table });
    }
    pds.sort_by_key(|pd| std::cmp::Reverse(pd.cpus.iter().copied().min().unwrap_or(0)));
    Some(pds)
}

impl PerfDomain {
    /// The top frequency of the domain (`cpuinfo.max_freq`, the EM's
    /// `f_max`; v6.8's arch_scale_freq_ref() is the same on Arm).
    #[must_use]
    pub fn max_khz(&self) -> u32 {
        self.table.last().map_or(0, |s| s.frequency_khz)
    }

    /// The state schedutil would pick for the busiest CPU's `max_util`
    /// (`headroom`: add 25 % first, as em_cpu_energy did before v6.8):
    /// the lowest whose frequency reaches `map_util_freq`, else the top.
    #[must_use]
    pub fn state_for(&self, max_util: u64, headroom: bool) -> &PerfState {
        let fmax = u64::from(self.max_khz());
        let freq = if headroom {
            // v5.0 map_util_freq(): (freq + freq/4) · util / cap.
            (fmax + (fmax >> 2)) * max_util / self.scale_cpu
        } else {
            fmax * max_util / self.scale_cpu
        };
        self.table.iter().find(|s| u64::from(s.frequency_khz) >= freq).unwrap_or_else(|| self.table.last().expect("an EM has states"))
    }

    /// em_cpu_energy() (em_pd_energy() in v5.0): the energy, in the EM's
    /// units per scheduling period, of the domain's CPUs running
    /// `sum_util` in all at the state its busiest CPU (`max_util`) needs.
    #[must_use]
    pub fn energy(&self, max_util: u64, sum_util: u64, headroom: bool) -> u64 {
        if sum_util == 0 {
            return 0;
        }
        let max_util = max_util.min(self.scale_cpu);
        self.state_for(max_util, headroom).cost * sum_util / self.scale_cpu
    }

    /// The capacity a CPU of the domain has at state `s` (em_perf_state's
    /// `performance` of v6.9; for showing).
    #[must_use]
    pub fn capacity_at(&self, s: &PerfState) -> u64 {
        self.scale_cpu * u64::from(s.frequency_khz) / u64::from(self.max_khz().max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Spec;

    fn juno() -> Platform {
        crate::platform::load_named(&Spec::new("juno-r0")).unwrap()
    }

    /// The kernel EM LISA read from a Juno r0 running v4.19 (data/real/lisa
    /// trace_txt/plat_info.yml, nrg-model): LITTLE 42 58 79 97 119 mW, big
    /// 160 239 343 454 583 mW. The v5.0 rule gives exactly these.
    #[test]
    fn juno_r0_powers_are_the_boards_em() {
        let pds = build(&juno(), PowerUnit::Milliwatts).unwrap();
        let little = pds.iter().find(|p| p.cpus.contains(&0)).unwrap();
        let big = pds.iter().find(|p| p.cpus.contains(&1)).unwrap();
        let p: Vec<u64> = little.table.iter().map(|s| s.power).collect();
        assert_eq!(p, [42, 58, 79, 97, 119]);
        let p: Vec<u64> = big.table.iter().map(|s| s.power).collect();
        assert_eq!(p, [160, 239, 343, 454, 583]);
        assert_eq!((little.scale_cpu, big.scale_cpu), (446, 1024));
    }

    /// cost = power · f_max / f: the big cluster's 450 MHz state costs
    /// 160 · 1100 / 450 = 391 (truncated); its top state costs its power.
    #[test]
    fn cost_is_power_scaled_to_the_top_frequency() {
        let pds = build(&juno(), PowerUnit::Milliwatts).unwrap();
        let big = pds.iter().find(|p| p.cpus.contains(&1)).unwrap();
        assert_eq!(big.table[0].cost, 391);
        assert_eq!(big.table[4].cost, 583);
        let uw = build(&juno(), PowerUnit::Microwatts).unwrap();
        let big_uw = uw.iter().find(|p| p.cpus.contains(&1)).unwrap();
        // 530 · 820² · 450 / 10⁶ = 160 367 µW, truncated.
        assert_eq!(big_uw.table[0].power, 160_367);
    }

    /// The root domain's list: the domain of the higher first CPU first
    /// (Juno: big {1, 2} before LITTLE {0, 3, 4, 5}).
    #[test]
    fn domains_are_listed_as_build_perf_domains_prepends_them() {
        let pds = build(&juno(), PowerUnit::Milliwatts).unwrap();
        assert_eq!(pds[0].cpus, [1, 2]);
        assert_eq!(pds[1].cpus, [0, 3, 4, 5]);
    }

    /// em_cpu_energy: the LITTLE domain with its busiest CPU at util 100
    /// needs 1.25 · 850 · 100 / 446 = 238 MHz → the 450 MHz state (cost
    /// 119 · 850 / 450 = 224); 300 units in all cost 224 · 300 / 446.
    #[test]
    fn energy_is_cost_times_busy_share_at_the_needed_state() {
        let pds = build(&juno(), PowerUnit::Milliwatts).unwrap();
        let little = &pds[1];
        assert_eq!(little.table[0].cost, 42 * 850 / 450);
        assert_eq!(little.energy(100, 300, true), little.table[0].cost * 300 / 446);
        // util 356 with headroom needs 848 MHz: the top state.
        assert_eq!(little.state_for(356, true).frequency_khz, 850_000);
        // Without headroom (v6.8: the caller added it) 356 needs 678 MHz.
        assert_eq!(little.state_for(356, false).frequency_khz, 700_000);
        assert_eq!(little.energy(0, 0, true), 0);
    }

    #[test]
    fn no_em_without_a_coefficient() {
        let sky = crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap();
        assert!(build(&sky, PowerUnit::Microwatts).is_none());
    }
}

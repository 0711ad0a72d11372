//! ACPI CPPC (Collaborative Processor Performance Control) as AMD's Zen
//! parts report it: an abstract performance scale and the four levels the
//! firmware's `_CPC` object (or MSR_AMD_CPPC_CAP1) names on it, with the
//! two frequencies that tie the scale to kHz.
//!
//! The OS writes a request of four 8-bit fields (MSR_AMD_CPPC_REQ, or the
//! `_CPC` registers in shared memory on parts without the MSRs): maximum
//! (bits 7:0), minimum (15:8), desired (23:16) and the energy-performance
//! preference (31:24) — the same four fields as Intel's HWP request, so
//! govlab carries them in [`HwpRequest`](super::hwp::HwpRequest) and the
//! hardware's loop (`machine/hwp.rs`) serves both. A nonzero desired level
//! is the OS's choice (ACPI's non-autonomous mode); desired 0 leaves the
//! choice to the firmware inside [min, max] (the autonomous modes:
//! amd-pstate's active and guided modes). What the firmware then picks is
//! not documented: govlab's assumed HWP rule ([`super::hwp`]) stands for it.
//!
//! Perf to frequency is linear through the nominal point, as amd-pstate
//! converts (torvalds/linux drivers/cpufreq/amd-pstate.c @ 009d1c29a451,
//! `perf_to_freq` / `freq_to_perf`: kHz = ⌈nominal_khz × perf /
//! nominal_perf⌉, perf = ⌈kHz × nominal_perf / nominal_khz⌉ clamped to
//! [lowest, highest]). The clock runs at the operating point of the
//! platform file closest to a level's frequency (assumed: the file's table
//! is a grid over the part's finer-grained range).

use super::CpuType;

/// A CPU type's CPPC capabilities (`_CPC` / MSR_AMD_CPPC_CAP1) as the
/// kernel reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cppc {
    /// The top of the scale, boost included (amd-pstate's `highest_perf`).
    pub highest_perf: u32,
    /// The level of the nominal (base) frequency.
    pub nominal_perf: u32,
    /// The lowest level at which performance per watt still improves as
    /// the level falls; below it only the clock drops, not the voltage.
    pub lowest_nonlinear_perf: u32,
    /// The lowest level the hardware runs.
    pub lowest_perf: u32,
    /// `_CPC` NominalFrequency, kHz (the file gives it in MHz as `_CPC` does).
    pub nominal_khz: u32,
}

impl Cppc {
    /// `perf_to_freq`: the frequency of a level, kHz.
    pub fn perf_to_khz(&self, perf: u32) -> u32 {
        (u64::from(self.nominal_khz) * u64::from(perf)).div_ceil(u64::from(self.nominal_perf)) as u32
    }

    /// `freq_to_perf`: the level of a frequency, rounded up and kept on the
    /// scale.
    pub fn khz_to_perf(&self, khz: u32) -> u32 {
        let perf = (u64::from(khz) * u64::from(self.nominal_perf)).div_ceil(u64::from(self.nominal_khz)) as u32;
        perf.clamp(self.lowest_perf, self.highest_perf)
    }

    /// cpuinfo.max_freq under amd-pstate: the highest level's frequency.
    pub fn max_khz(&self) -> u32 {
        self.perf_to_khz(self.highest_perf)
    }

    /// The reference frequency of x86 frequency invariance on AMD from
    /// v5.11 (41ea667227ba "x86, sched: Calculate frequency invariance for
    /// AMD systems", 976df7e5730e "x86, sched: Use midpoint of max_boost
    /// and max_P for frequency invariance on AMD EPYC";
    /// arch/x86/kernel/acpi/cppc.c `amd_set_max_freq_ratio`): the ratio
    /// highest / nominal in 1/1024 units, averaged with 1024, times the
    /// nominal frequency.
    pub fn invariance_reference_khz(&self) -> u32 {
        let ratio = u64::from(self.highest_perf) * 1024 / u64::from(self.nominal_perf);
        let midpoint = (ratio + 1024) >> 1;
        (u64::from(self.nominal_khz) * midpoint / 1024) as u32
    }

    /// The operating point of `ct` a level runs at: the closest to its
    /// frequency.
    pub fn opp_of(&self, ct: &CpuType, perf: u32) -> usize {
        ct.opp_closest(self.perf_to_khz(perf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// EPYC 7702 as cpupower showed it under amd-pstate (linux-pm, Sept
    /// 2024): nominal 152 at 2.00 GHz, lowest non-linear 115 at 1.51 GHz,
    /// lowest 31 at 400 MHz (cpupower rounds the kHz it reads to 3 digits).
    fn rome() -> Cppc {
        Cppc { highest_perf: 255, nominal_perf: 152, lowest_nonlinear_perf: 115, lowest_perf: 31, nominal_khz: 2_000_000 }
    }

    #[test]
    fn levels_map_to_the_published_frequencies() {
        let c = rome();
        assert_eq!(c.perf_to_khz(152), 2_000_000);
        assert_eq!(c.perf_to_khz(115) / 10_000, 151);
        assert_eq!(c.perf_to_khz(31) / 10_000, 40);
        assert_eq!(c.max_khz() / 10_000, 335, "255 x 2000 / 152: the 3.35 GHz boost clock");
        assert_eq!(c.perf_to_khz(166) / 10_000, 218, "the 166 that kernel reported: 2.18 GHz");
    }

    /// freq_to_perf rounds up and stays on the scale (so a level's
    /// rounded-up frequency reads back one level higher, as in the driver).
    #[test]
    fn frequencies_map_back_to_levels() {
        let c = rome();
        assert_eq!(c.khz_to_perf(2_000_000), 152);
        assert_eq!(c.khz_to_perf(1_513_157), 115);
        assert_eq!(c.khz_to_perf(c.perf_to_khz(115)), 116);
        assert_eq!(c.khz_to_perf(2_000_001), 153);
        assert_eq!(c.khz_to_perf(100_000), 31);
        assert_eq!(c.khz_to_perf(9_000_000), 255);
    }

    /// (255 x 1024 / 152 + 1024) / 2 = 1370: 2.0 GHz x 1370 / 1024.
    #[test]
    fn invariance_reference_is_the_midpoint() {
        assert_eq!(rome().invariance_reference_khz(), 2_675_781);
    }
}

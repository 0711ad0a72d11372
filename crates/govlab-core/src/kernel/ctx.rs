//! The build context: the machine and the kernel of one run, resolved once.
//!
//! Every governor factory (cpufreq, cpuidle, a driver's, a Python
//! governor's) is handed a [`BuildCtx`]: the hardware as the platform file
//! describes it, the kernel configuration, and what that kernel decides on
//! that hardware for this run (its tick rate, whether the cpufreq driver
//! keeps HWP on). The platform stays the hardware: nothing the kernel
//! decides is written into it. Tunables whose default depends on the
//! machine or the version read it from here (`ParamSpec<BuildCtx>`).

use super::{arch_of, Arch, EraId, KernelConfig};
use crate::platform::hwp::HwpCaps;
use crate::platform::{CpuId, Platform};

/// The biggest CPU's capacity (include/linux/sched.h; the same constant as
/// sched/pelt.rs's, which this layer may not import).
const SCHED_CAPACITY_SCALE: u64 = 1024;

/// One run's machine and kernel, with the kernel's decisions on it.
#[derive(Debug, Clone)]
pub struct BuildCtx {
    /// The hardware.
    pub platform: Platform,
    /// The kernel version and its options.
    pub kernel: KernelConfig,
    /// `CONFIG_HZ` of the run: the kernel's `hz` option, else the
    /// platform file's (a distribution's choice for that machine).
    pub hz: u32,
    /// The cpufreq driver runs with HWP on: the processor has it (and the
    /// platform options leave it on) and the driver's mode keeps it
    /// (intel_pstate's passive mode turns it off before v5.9,
    /// `cpufreq::resolve_ctx`).
    pub hwp: bool,
}

impl BuildCtx {
    /// `platform` under `kernel`, the driver's mode not yet considered
    /// (HWP as the hardware has it). A platform's deprecated `idle_tick`
    /// alias becomes the kernel's option where the kernel names none.
    #[must_use]
    pub fn new(platform: Platform, mut kernel: KernelConfig) -> BuildCtx {
        if let (false, Some(t)) = (kernel.idle_tick_given(), platform.idle_tick) {
            kernel.set_idle_tick(t);
        }
        let hz = kernel.hz.unwrap_or(platform.hz);
        let hwp = platform.hwp;
        BuildCtx { platform, kernel, hz, hwp }
    }

    /// `platform` under the default kernel.
    #[must_use]
    pub fn of(platform: Platform) -> BuildCtx {
        BuildCtx::new(platform, KernelConfig::default())
    }

    /// One scheduler tick, ns (TICK_NSEC at `hz`).
    #[must_use]
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.hz)
    }

    /// Whether the run's kernel has `era`'s behaviour.
    #[must_use]
    pub fn has(&self, era: EraId) -> bool {
        self.kernel.has(era)
    }

    /// Whether the kernel gives this Intel hybrid part asymmetric CPU
    /// capacities: from v6.12 (929ebc93ccaa with 5a9d10145a54), where
    /// intel_pstate runs with HWP on a part whose HWP levels differ by core
    /// type and no core has SMT (hybrid_init_cpu_capacity_scaling(): "the
    /// capacity of SMT threads is not deterministic even approximately").
    /// It then clears ITMT. Otherwise every CPU is 1024 to the scheduler,
    /// whatever the core.
    #[must_use]
    pub fn x86_hybrid_capacity(&self) -> bool {
        self.hwp && self.platform.hwp_hybrid() && !self.platform.has_smt() && self.has(EraId::X86HybridCapacity)
    }

    /// arch_scale_cpu_capacity() of `cpu`: the scheduler's capacity, which
    /// the hardware's (the platform's `capacity`, the work a core does)
    /// need not be. Arm: capacity-dmips-mhz normalised, every version
    /// (the platform file's value). x86: 1024 (the generic default), except
    /// on a hybrid part under [`Self::x86_hybrid_capacity`], where
    /// intel_pstate's hybrid_set_cpu_capacity() gives each CPU its HWP
    /// highest level × 1024 / the highest of any CPU.
    #[must_use]
    pub fn cpu_capacity(&self, cpu: CpuId) -> u64 {
        let p = &self.platform;
        match arch_of(p) {
            Arch::X86 if self.x86_hybrid_capacity() => {
                let max_perf = p.cpu_types.iter().map(|t| HwpCaps::of(t).highest_perf).max().unwrap_or(1);
                u64::from(HwpCaps::of(p.cpu_type_of(cpu)).highest_perf) * SCHED_CAPACITY_SCALE / u64::from(max_perf)
            }
            Arch::X86 => SCHED_CAPACITY_SCALE,
            Arch::PowerPc | Arch::Arm => u64::from(p.cpu_type_of(cpu).capacity),
        }
    }

    /// The frequency that reads as 1024 on CPU type `t` (the run's
    /// [`super::FreqInvariance`]; 0 without invariance). x86 keeps one
    /// ratio for every CPU, the boot CPU's (arch/x86 `arch_max_freq_ratio`,
    /// from its MSRs), so on a hybrid part the E-cores are scaled against
    /// the P-core's turbo ratio; under [`Self::x86_hybrid_capacity`] each
    /// CPU has its own (5a9d10145a54, `arch_set_cpu_capacity()`: its HWP
    /// highest level over its level of the MSR_PLATFORM_INFO base ratio,
    /// which is the TSC's, package-wide). Both read APERF over MPERF,
    /// assumed to count at the TSC's rate on both core types. A
    /// `freq_invariance` option applies per CPU type as given.
    #[must_use]
    pub fn invariance_reference_khz(&self, t: usize) -> u32 {
        let p = &self.platform;
        let f = self.kernel.freq_invariance(p);
        let hybrid_x86 = arch_of(p) == Arch::X86 && p.cpu_types.len() > 1;
        if !hybrid_x86 || self.kernel.freq_invariance_given() || f == super::FreqInvariance::Off {
            return f.reference_khz(&p.cpu_types[t]);
        }
        if self.x86_hybrid_capacity() {
            let tsc_khz = p.cpu_type_of(0).base_khz;
            let caps = HwpCaps::of(&p.cpu_types[t]);
            return (u64::from(tsc_khz) * u64::from(caps.highest_perf) / u64::from(caps.freq_to_hwp(tsc_khz))) as u32;
        }
        f.reference_khz(p.cpu_type_of(0))
    }

    /// ITMT priorities of the CPUs, where the scheduler steers by them: an
    /// x86 part with two core types whose CPUs it sees at one capacity
    /// (before [`Self::x86_hybrid_capacity`], which clears ITMT), under
    /// intel_pstate with HWP, from v4.10. None elsewhere.
    ///
    /// A core's priority is its CPPC highest performance
    /// (intel_pstate_set_itmt_prio), here its type's HWP highest level
    /// (P 65, E 39 on the i9-12900k; assumed equal). arch/x86/kernel/itmt.c
    /// sched_set_itmt_core_prio() gave the n-th thread of a core
    /// `prio × smp_num_siblings / n²` until v6.5 (P 130 and 32 around E
    /// 78), the core's own priority from v6.5 (046a5a95c3b0).
    #[must_use]
    pub fn itmt_priorities(&self) -> Option<Vec<u32>> {
        let p = &self.platform;
        let steered = arch_of(p) == Arch::X86
            && p.cpu_types.len() > 1
            && self.hwp
            && self.has(EraId::ItmtAsymPacking)
            && !self.x86_hybrid_capacity();
        if !steered {
            return None;
        }
        let smp_num_siblings = p.cores.iter().map(|c| c.cpus.len()).max().unwrap_or(1) as u32;
        let mut prio = vec![0; p.nr_cpus()];
        for core in &p.cores {
            let base = HwpCaps::of(&p.cpu_types[core.cpu_type]).highest_perf;
            let mut threads = core.cpus.clone();
            threads.sort_unstable();
            for (i, &cpu) in threads.iter().enumerate() {
                let n = i as u32 + 1;
                prio[cpu] = if self.has(EraId::ItmtSmtSamePrio) { base } else { base * smp_num_siblings / (n * n) };
            }
        }
        Some(prio)
    }
}

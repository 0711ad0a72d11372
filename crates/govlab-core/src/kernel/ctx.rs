//! The build context: the machine and the kernel of one run, resolved once.
//!
//! Every governor factory (cpufreq, cpuidle, a driver's, a Python
//! governor's) is handed a [`BuildCtx`]: the hardware as the platform file
//! describes it, the kernel configuration, and what that kernel decides on
//! that hardware for this run (its tick rate, whether the cpufreq driver
//! keeps HWP on). The platform stays the hardware: nothing the kernel
//! decides is written into it. Tunables whose default depends on the
//! machine or the version read it from here (`ParamSpec<BuildCtx>`).

use super::{EraId, KernelConfig};
use crate::platform::Platform;

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
}

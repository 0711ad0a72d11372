//! The eras of Energy-Aware Scheduling and utilisation clamping, one
//! question each (machine/eas.rs, sched/energy_model.rs and the uclamp
//! paths read them); each era's row in `era.rs` names its commit.

use super::{EraId, KernelConfig};

impl KernelConfig {
    /// v5.0 (732cd75b8c92 "sched/fair: Select an energy-efficient CPU on
    /// task wake-up", with the Energy Model framework 27871f7a8a34 and the
    /// root domain's overutilized flag 2802bf3cd936): EAS exists.
    #[must_use]
    pub fn eas(&self) -> bool {
        self.has(EraId::Eas)
    }

    /// Whether EAS may run: the kernel has it and `sched_energy_aware` is
    /// on (the platform, governor and load decide the rest).
    #[must_use]
    pub fn sched_energy_aware(&self) -> bool {
        self.eas() && self.sched_energy_aware
    }

    /// v5.3 (69842cba9ace "sched/uclamp: Add CPU's clamp buckets
    /// refcounting" and its series): tasks may carry util_min/util_max.
    #[must_use]
    pub fn uclamp(&self) -> bool {
        self.has(EraId::Uclamp)
    }

    /// v5.3 (af24bde8df20 "sched/uclamp: Add uclamp support to
    /// energy_compute()"): the domain's frequency in EAS's estimate comes
    /// from the clamped utilisation schedutil would use.
    #[must_use]
    pub fn eas_uclamp(&self) -> bool {
        self.has(EraId::EasUclamp)
    }

    /// v5.4, inferred (eb92692b2544 "sched/fair: Speed-up energy-aware
    /// wake-ups"): each candidate's energy is computed over its own
    /// performance domain only, as a delta over the domain's energy without
    /// the task; the 6 % margin is taken on prev's delta plus the base.
    #[must_use]
    pub fn eas_pd_delta(&self) -> bool {
        self.has(EraId::EasPdDelta)
    }

    /// v5.6 (1d42509e475c "sched/fair: Make EAS wakeup
    /// placement consider uclamp restrictions"): EAS's fitting test reads
    /// the utilisation clamped by the runqueue's and the task's clamps.
    #[must_use]
    pub fn eas_fits_uclamp(&self) -> bool {
        self.has(EraId::EasFitsUclamp)
    }

    /// v5.19, inferred (ae6ccaa65038 "PM: EM: convert power field to
    /// micro-Watts precision and align drivers"): EM powers in µW.
    #[must_use]
    pub fn em_microwatts(&self) -> bool {
        self.has(EraId::EmMicrowatts)
    }

    /// v6.0, inferred (b812fc9768e0 "sched/fair: Remove the energy margin
    /// in feec()", with 3e8c6c9aac42 "sched/fair: Remove task_util
    /// from effective utilization in feec()"): no 6 % margin, the
    /// domain's busy time capped at its capacity.
    #[must_use]
    pub fn eas_no_margin(&self) -> bool {
        self.has(EraId::EasNoMargin)
    }

    /// v6.2, inferred (244226035a1f "sched/uclamp: Fix fits_capacity()
    /// check in feec()" and "sched/uclamp: Make cpu_overutilized()
    /// use util_fits_cpu()"): fitting reads the clamps
    /// (util_fits_cpu), in EAS and in the overutilized test.
    #[must_use]
    pub fn util_fits_cpu(&self) -> bool {
        self.has(EraId::UtilFitsCpu)
    }

    /// v6.8 (9c0b4bb7f630 "sched/cpufreq: Rework schedutil governor
    /// performance estimation"): EAS adds schedutil's 25 % headroom (and
    /// the clamps) before the Energy Model, not inside em_cpu_energy.
    #[must_use]
    pub fn eas_headroom_in_sugov(&self) -> bool {
        self.has(EraId::EasHeadroomInSugov)
    }
}

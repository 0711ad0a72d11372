//! Capacity-aware placement on asymmetric machines (big.LITTLE).
//!
//! Models: Linux v6.8 mainline, kernel/sched/fair.c: `fits_capacity`,
//! `util_fits_cpu` / `task_fits_cpu` without uclamp, the asymmetric branch
//! of `select_idle_sibling` with `select_idle_capacity`, and misfit-task
//! handling (`update_misfit_status`, the `group_misfit_task` /
//! `migrate_misfit` load balance with its active balance). Documented in
//! Documentation/scheduler/sched-capacity.rst.
//!
//! The idea. When CPUs differ in capacity (the kernel's
//! SD_ASYM_CPUCAPACITY, `sched_asym_cpucap_active()`), an idle CPU is not
//! as good as any other: a task whose utilisation does not fit a LITTLE
//! CPU runs slower there than its demand. A task *fits* a CPU when its
//! estimated utilisation leaves 20 % headroom:
//! `util × 1280 < capacity × 1024` (fits_capacity).
//!
//! 1. Wakeup. The previous CPU is kept if it is idle and the task fits it.
//!    Otherwise the CPUs of the asymmetric domain (the whole machine here,
//!    as on Juno or a phone: the lowest domain spanning every capacity) are
//!    scanned from the previous CPU on, wrapping: the first idle CPU the
//!    task fits wins; if none fits, the idle CPU with the biggest capacity
//!    (the first one found among equals); if no CPU is idle, the previous
//!    CPU.
//! 2. Misfit. At each balance, a CPU whose running task does not fit it
//!    pushes that task to an idle CPU of clearly greater capacity
//!    (`capacity_greater`: more than ~5 % bigger), preempting it there and
//!    then (the kernel's active balance through the stopper thread).
//!
//! Left out: uclamp (no task has clamps, so util_fits_cpu is fits_capacity
//! on the task's util_est), thermal and RT/IRQ pressure (capacity_of equals
//! the CPU's capacity), wake_affine and recent_used_cpu (the engine wakes
//! towards the previous CPU), the misfit path of find_idlest_group at fork,
//! and energy-aware placement (EAS, find_energy_efficient_cpu): the
//! kernel's choice on a board with an Energy Model and schedutil. Misfit
//! balancing runs on the misfit CPU's balance pass (every tick in govlab),
//! not after the kernel's per-domain balance interval. On a machine whose
//! CPUs all have one capacity none of this runs, and placement is
//! `machine/placement.rs`'s. The engine side of this file's rules (the
//! wakeup scan and the misfit push) is in `machine/capacity.rs`.

/// fits_capacity(): util fits capacity with 20 % headroom (× 1280 / 1024).
pub const FITS_MARGIN_NUM: u64 = 1280;
/// capacity_greater(): a capacity counts as greater above ~5 % (× 1078 / 1024).
pub const CAPACITY_GREATER_NUM: u64 = 1078;
const SCALE: u64 = 1024;

/// fits_capacity(): `util` leaves 20 % of `capacity` spare.
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * FITS_MARGIN_NUM < capacity * SCALE
}

/// capacity_greater(): `a` is more than ~5 % above `b`.
pub fn capacity_greater(a: u64, b: u64) -> bool {
    a * SCALE > b * CAPACITY_GREATER_NUM
}

/// Whether CPU capacities differ (sched_asym_cpucap_active()).
pub fn asym_cpucap(capacities: &[u64]) -> bool {
    capacities.windows(2).any(|w| w[0] != w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_capacity_leaves_twenty_percent() {
        // Juno r0 LITTLE (446): the largest fitting util is 356 (356 × 1.25 = 445).
        assert!(fits_capacity(356, 446));
        assert!(!fits_capacity(357, 446));
        assert!(fits_capacity(818, 1024));
        assert!(!fits_capacity(820, 1024));
    }

    #[test]
    fn capacity_greater_needs_about_five_percent() {
        assert!(capacity_greater(1024, 446));
        assert!(!capacity_greater(1024, 1000));
        assert!(capacity_greater(1024, 970));
        assert!(!capacity_greater(446, 446));
    }

    #[test]
    fn asym_only_when_capacities_differ() {
        assert!(!asym_cpucap(&[1024; 8]));
        assert!(asym_cpucap(&[446, 1024, 1024, 446, 446, 446]));
        assert!(!asym_cpucap(&[]));
    }

    /// The x86 and POWER machines keep the symmetric placement path; the
    /// Arm boards take the capacity-aware one.
    #[test]
    fn shipped_platforms_take_the_right_path() {
        for name in crate::platform::platform_names() {
            let p = crate::platform::load_named(&crate::params::Spec::new(name)).unwrap();
            let caps: Vec<u64> = (0..p.nr_cpus()).map(|c| u64::from(p.cpu_type_of(c).capacity)).collect();
            let arm = matches!(name, "juno-r0" | "juno-r2" | "hikey960" | "sd835" | "rk3399");
            assert_eq!(asym_cpucap(&caps), arm, "{name}");
        }
    }
}

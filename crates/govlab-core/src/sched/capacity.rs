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
//! 2. Misfit (from v4.20, `EraId::MisfitMigration`, 3b1baa6496e6). At
//!    each balance, a CPU whose running task does not fit it
//!    pushes that task to an idle CPU of clearly greater capacity
//!    (`capacity_greater`: more than ~5 % bigger), preempting it there and
//!    then (the kernel's active balance through the stopper thread).
//!
//! With clamps (v6.2+, util_fits_cpu): a util_max below a CPU's capacity
//! makes any task fit it, a util_min above it marks the task as fitting but
//! wanting more (-1); task_fits_cpu wants a plain fit. Left out: thermal and RT/IRQ pressure (capacity_of equals
//! the CPU's capacity), wake_affine and recent_used_cpu (the engine wakes
//! towards the previous CPU), the misfit path of find_idlest_group at fork,
//! and energy-aware placement (EAS, `machine/eas.rs`), which comes first on
//! a board with an Energy Model and schedutil. Misfit
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

/// util_fits_cpu() (v6.8, no thermal pressure): 1 if `util` fits
/// `capacity` with the margin or util_max lets it fit anyway, -1 if it
/// fits but its util_min asks for more than the CPU has, 0 otherwise.
pub fn util_fits_cpu(util: u64, uclamp_min: u64, uclamp_max: u64, capacity: u64, uclamp_used: bool) -> i32 {
    let mut fits = fits_capacity(util, capacity);
    if !uclamp_used {
        return i32::from(fits);
    }
    // A util_max below the CPU's capacity makes any utilisation fit, except
    // on the biggest CPU with no max (where nothing bigger exists).
    let max_is_default_on_biggest = capacity == SCALE && uclamp_max == SCALE;
    fits = fits || (!max_is_default_on_biggest && uclamp_max <= capacity);
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > capacity {
        return -1;
    }
    i32::from(fits)
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
    fn util_fits_cpu_follows_the_clamps() {
        // No clamps: fits_capacity (356 of 446 fits, 357 does not).
        assert_eq!(util_fits_cpu(356, 0, 1024, 446, false), 1);
        assert_eq!(util_fits_cpu(357, 0, 1024, 446, false), 0);
        // util_max 300 on a LITTLE CPU: a hog fits it anyway.
        assert_eq!(util_fits_cpu(1000, 0, 300, 446, true), 1);
        // On the biggest CPU with no max, a hog does not fit.
        assert_eq!(util_fits_cpu(1000, 0, 1024, 1024, true), 0);
        // util_min 600 on a LITTLE CPU: fits, but below what it asks.
        assert_eq!(util_fits_cpu(100, 600, 1024, 446, true), -1);
        assert_eq!(util_fits_cpu(100, 600, 1024, 1024, true), 1);
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

    /// The x86 and POWER machines keep the symmetric placement path (the
    /// hybrid i9-12900k too: under 6.8, and with SMT on at any version, the
    /// kernel gives every CPU 1024); the Arm boards take the
    /// capacity-aware one.
    #[test]
    fn shipped_platforms_take_the_right_path() {
        for name in crate::platform::platform_names() {
            let p = crate::platform::load_named(&crate::params::Spec::new(name)).unwrap();
            let ctx = crate::kernel::BuildCtx::of(p);
            let caps: Vec<u64> = (0..ctx.platform.nr_cpus()).map(|c| ctx.cpu_capacity(c)).collect();
            let arm = matches!(name, "juno-r0" | "juno-r2" | "hikey960" | "sd835" | "rk3399" | "gs101");
            assert_eq!(asym_cpucap(&caps), arm, "{name}");
        }
    }
}

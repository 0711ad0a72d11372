//! The deadline class's arithmetic (Linux v6.8 kernel/sched/deadline.c and
//! kernel/sched/sched.h): bandwidths in BW_SHIFT fixed point, parameter
//! checks, admission control and `cpu_bw_dl`. The class acting on the
//! runqueues is `machine/deadline.rs`.

use super::rt::{RT_PERIOD_NS, RT_RUNTIME_NS};

/// BW_SHIFT (kernel/sched/sched.h, v6.8): bandwidths are fractions × 2^20.
pub const BW_SHIFT: u32 = 20;
/// BW_UNIT: a bandwidth of one whole CPU.
pub const BW_UNIT: u64 = 1 << BW_SHIFT;
/// DL_SCALE (kernel/sched/sched.h): runtimes below 2^10 ns are refused.
pub const DL_SCALE: u32 = 10;

/// `to_ratio` (kernel/sched/core.c, v6.8): runtime / period in BW_SHIFT
/// fixed point (0 for a zero period).
#[inline]
#[must_use]
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    ((u128::from(runtime) << BW_SHIFT) / u128::from(period)) as u64
}

/// `cpu_bw_dl` (kernel/sched/sched.h, v6.8): the runqueue's running
/// bandwidth in capacity units: (running_bw × SCHED_CAPACITY_SCALE) >> BW_SHIFT.
#[inline]
#[must_use]
pub fn cpu_bw_dl(running_bw: u64) -> u64 {
    (running_bw * 1024) >> BW_SHIFT
}

/// SCHED_DEADLINE parameters after sched_setattr's defaults: a zero period
/// is the deadline, a zero deadline the period.
#[must_use]
pub fn resolve(runtime: u64, deadline: u64, period: u64) -> (u64, u64, u64) {
    let period = if period == 0 { deadline } else { period };
    let deadline = if deadline == 0 { period } else { deadline };
    (runtime, deadline, period)
}

/// `__checkparam_dl` (kernel/sched/deadline.c, v6.8) on resolved
/// parameters: an error naming what is wrong.
///
/// # Errors
/// The rule the parameters break.
pub fn checkparam(runtime: u64, deadline: u64, period: u64) -> Result<(), String> {
    if deadline == 0 {
        return Err("a deadline or a period is required".into());
    }
    if runtime < (1 << DL_SCALE) {
        return Err(format!("runtime {runtime} ns is below the kernel's minimum of 1024 ns"));
    }
    if deadline & (1 << 63) != 0 || period & (1 << 63) != 0 {
        return Err("deadline and period must be below 2^63 ns".into());
    }
    if runtime > deadline || deadline > period {
        return Err(format!("needs runtime ≤ deadline ≤ period (got {runtime}, {deadline}, {period} ns)"));
    }
    Ok(())
}

/// The bandwidth SCHED_DEADLINE tasks may take in all (kernel/sched/core.c
/// `sched_dl_global_validate`/`dl_bw` of the root domain, v6.8): the RT
/// throttle's runtime/period per CPU, times the CPUs.
#[must_use]
pub fn global_bw_limit(nr_cpus: usize) -> u64 {
    to_ratio(RT_PERIOD_NS, RT_RUNTIME_NS) * nr_cpus as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_and_capacity() {
        assert_eq!(to_ratio(100, 25), BW_UNIT / 4);
        assert_eq!(cpu_bw_dl(BW_UNIT / 4), 256);
        assert_eq!(resolve(10, 0, 100), (10, 100, 100));
        assert!(checkparam(2_000_000, 10_000_000, 10_000_000).is_ok());
        assert!(checkparam(20_000_000, 10_000_000, 10_000_000).is_err());
        assert!(checkparam(100, 1000, 1000).is_err());
    }
}

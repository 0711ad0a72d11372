//! The largest counts, rates, sizes and times a workload file or an rt-app
//! file may ask for, checked when the file is loaded.
//!
//! Without them a typo allocates before anything runs: an rt-app `instance`
//! of 10^9 is a billion threads, a source `rate` of 10^15 a billion arrivals
//! per simulated millisecond, and a `run` of 10^17 µs overflows the engine's
//! nanosecond clock. Each limit is far above anything a real benchmark asks
//! for; a value above it is an error naming the file, the key and the valid
//! range (docs/workloads.md lists them).

/// Most threads one task may start (`instances` of a workload file's
/// `[[task]]`, `instance` of an rt-app task).
pub const MAX_INSTANCES: u64 = 100_000;

/// Most threads a workload may start, summed over its tasks.
pub const MAX_THREADS: u64 = 100_000;

/// Most threads one `fork` op may start at once.
pub const MAX_FORK_COUNT: u64 = 100_000;

/// Highest arrival rate of a workload file's `[[source]]`, per second: one
/// arrival per simulated microsecond.
pub const MAX_RATE_PER_S: f64 = 1e6;

/// Largest byte count of one op or event (IO, message, `mem`, `iorun`,
/// buffer and channel sizes): 1 TiB.
pub const MAX_BYTES: u64 = 1 << 40;

/// Longest time one rt-app event or property may take or wait (`run`,
/// `runtime`, `sleep`, timer `period`, `delay`), in µs: 10^6 s, about
/// eleven and a half days. Its nanoseconds fit the engine's clock (u64 ns)
/// with a factor of ten thousand to spare.
pub const MAX_EVENT_US: u64 = 1_000_000_000_000;

/// Largest `amount` of a workload file's `count` op.
pub const MAX_COUNT_AMOUNT: u64 = 1 << 48;

/// `v` if it is in `min..=max`, else an error message giving the range.
pub(crate) fn within(v: i64, min: u64, max: u64, unit: &str) -> Result<u64, String> {
    u64::try_from(v).ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
        let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
        format!("{v}: out of range; valid: {min}..={max}{unit}")
    })
}

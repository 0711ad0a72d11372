//! A log-linear latency histogram with flat memory (HDR-style, as
//! HdrHistogram lays out its buckets).
//!
//! Values (ns) below 64 are kept exactly; above, each power of two is cut
//! into 64 equal buckets, so a bucket is at most 1/64 of the smallest value
//! it holds. A percentile is the middle of the bucket that holds the exact
//! order statistic (clamped to the exact min and max), so it is within half
//! a bucket, [`MAX_RELATIVE_ERROR`] = 1/128 ≈ 0.8 %, of that statistic,
//! however many samples arrive; count, sum, mean, min and max are exact.
//!
//! Written here rather than taken from the `hdrhistogram` crate: govlab
//! needs record, merge, percentile and the buckets for plots (40 lines),
//! and its results must not move with a dependency's rounding rules.

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;

/// The largest relative error of [`Histogram::percentile`] against the
/// exact order statistic (half a bucket of 1/64 of its power of two).
pub const MAX_RELATIVE_ERROR: f64 = 1.0 / (2 * SUB) as f64;

#[derive(Debug, Clone, Default)]
pub struct Histogram {
    buckets: Vec<u64>,
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = v.ilog2();
    let shift = msb - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) | sub
}

/// Smallest value that falls in bucket `b` and the width of the bucket.
fn bucket_range(b: usize) -> (u64, u64) {
    if b < SUB {
        return (b as u64, 1);
    }
    let shift = (b >> SUB_BITS) as u32 - 1;
    let sub = (b & (SUB - 1)) as u64;
    (((SUB as u64) | sub) << shift, 1 << shift)
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        let b = bucket_of(v);
        if b >= self.buckets.len() {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The p-th percentile (0..=100): the middle of the bucket holding the
    /// order statistic of rank ⌈p/100 · count⌉, clamped to [min, max];
    /// within [`MAX_RELATIVE_ERROR`] of it. 0 for no samples (callers that
    /// report it check `count` first: see `Metric::of_samples`).
    pub fn percentile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (lo, w) = bucket_range(b);
                let mid = lo as f64 + (w as f64 - 1.0) / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// Non-empty buckets as (lower bound, count), for plots and JSON.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(b, &n)| (bucket_range(b).0, n))
            .collect()
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        if other.buckets.len() > self.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values() {
        for v in [0u64, 1, 63, 64, 65, 127, 128, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, w) = bucket_range(bucket_of(v));
            assert!(lo <= v && v < lo + w, "{v} in [{lo}, {})", lo + w);
        }
    }

    #[test]
    fn percentiles_within_precision() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        for p in [50.0, 90.0, 99.0, 99.9] {
            let exact = p / 100.0 * 10_000.0 * 1000.0;
            let got = h.percentile(p);
            assert!((got - exact).abs() / exact < 0.017, "p{p}: {got} vs {exact}");
        }
        assert_eq!(h.min, 1000);
        assert_eq!(h.max, 10_000_000);
        assert!((h.mean() - 5_000_500.0).abs() < 1e-6);
    }

    /// The exact order statistic of rank ⌈p/100 · n⌉ of sorted values.
    fn exact(sorted: &[u64], p: f64) -> f64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1] as f64
    }

    #[test]
    fn the_bound_is_under_one_percent() {
        const { assert!(MAX_RELATIVE_ERROR < 0.01) };
    }

    /// issue 16: p99 and p99.9 of known distributions within 1 % (an
    /// exponential of mean 50 µs and a log-normal-like spread over four
    /// decades, by inverse CDF at evenly spaced quantiles).
    #[test]
    fn tail_percentiles_of_known_distributions_within_one_percent() {
        let n = 100_000u32;
        let exponential = |q: f64| -50_000.0 * (1.0 - q).ln();
        let decades = |q: f64| 1_000.0 * 10f64.powf(4.0 * q);
        for (name, inv) in [("exponential", &exponential as &dyn Fn(f64) -> f64), ("four decades", &decades)] {
            let mut values: Vec<u64> = (0..n).map(|i| inv((f64::from(i) + 0.5) / f64::from(n)).round() as u64).collect();
            let mut h = Histogram::default();
            for &v in &values {
                h.record(v);
            }
            values.sort_unstable();
            for p in [50.0, 90.0, 99.0, 99.9, 99.99] {
                let exact = exact(&values, p);
                let got = h.percentile(p);
                let err = (got - exact).abs() / exact;
                assert!(err <= MAX_RELATIVE_ERROR, "{name} p{p}: {got} vs exact {exact} ({:.3} %)", err * 100.0);
            }
        }
    }

    #[test]
    fn every_value_within_the_bound() {
        // The worst case is a value at a bucket's lower edge.
        for v in (64u64..100_000).step_by(7).chain([1 << 20, (1 << 20) + (1 << 14) - 1, 123_456_789]) {
            let mut h = Histogram::default();
            h.record(v);
            h.record(u64::MAX >> 8); // so the clamp to [min, max] does not hide the bucket's error
            let got = h.percentile(50.0);
            assert!((got - v as f64).abs() / v as f64 <= MAX_RELATIVE_ERROR, "{v}: {got}");
        }
    }
}

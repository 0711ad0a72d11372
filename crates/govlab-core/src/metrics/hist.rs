//! A log-linear latency histogram with flat memory.
//!
//! Values (ns) are kept in buckets whose width is 1/64 of their power of two,
//! so every percentile is within 1.6 % of the exact order statistic, however
//! many samples arrive; count, sum, min and max are exact.

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;

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
    /// order statistic, clamped to [min, max].
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
}

//! Seeded random streams, one per purpose.
//!
//! Every consumer of randomness (each task, each device, each request
//! source, each governor) draws from its own ChaCha8 stream derived from the
//! run seed and a stable stream id, so adding a task does not shift another
//! task's numbers, and a seed fixes a run on any machine.

use rand::distributions::Distribution;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rand_distr::{Exp1, StandardNormal};

/// Purposes, kept apart in the stream id's top bits.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Task(u32),
    Device(u32),
    Source(u32),
    Workload,
    Governor,
    /// The kernel's housekeeping wakeups of one CPU (machine/housekeeping.rs).
    Housekeeping(u32),
}

impl Stream {
    fn id(self) -> u64 {
        match self {
            Stream::Task(i) => (1 << 40) | u64::from(i),
            Stream::Device(i) => (2 << 40) | u64::from(i),
            Stream::Source(i) => (3 << 40) | u64::from(i),
            Stream::Workload => 4 << 40,
            Stream::Governor => 5 << 40,
            Stream::Housekeeping(i) => (6 << 40) | u64::from(i),
        }
    }
}

/// One random stream.
#[derive(Clone, Debug)]
pub struct Rng(ChaCha8Rng);

impl Rng {
    pub fn new(seed: u64, stream: Stream) -> Self {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        r.set_stream(stream.id());
        Rng(r)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.0.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Exponential with the given mean (rand_distr's ziggurat: a table
    /// lookup and a multiply in the common case, no logarithm).
    pub fn exp(&mut self, mean: f64) -> f64 {
        let x: f64 = Exp1.sample(&mut self.0);
        mean * x
    }

    /// Standard normal (rand_distr's ziggurat).
    #[inline]
    pub fn normal(&mut self) -> f64 {
        StandardNormal.sample(&mut self.0)
    }

    /// A draw of `d`: exp(mu + sigma·N(0, 1)), or the mean when cv ≤ 0.
    #[inline]
    pub fn lognormal(&mut self, d: &LogNormal) -> f64 {
        if d.cv <= 0.0 {
            return d.mean;
        }
        (d.mu + d.sigma * self.normal()).exp()
    }
}

/// A log-normal distribution given by its mean and coefficient of
/// variation, with its normal's mu and sigma worked out once (two
/// logarithms and a square root that a draw need not repeat; the draw's
/// bits are the same as computing them per draw).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogNormal {
    pub mean: f64,
    pub cv: f64,
    mu: f64,
    sigma: f64,
}

impl LogNormal {
    pub fn new(mean: f64, cv: f64) -> Self {
        let sigma2 = (1.0 + cv * cv).ln();
        let mu = mean.ln() - sigma2 / 2.0;
        LogNormal { mean, cv, mu, sigma: sigma2.sqrt() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_and_reproducible() {
        let a1: Vec<u64> = (0..4).map({ let mut r = Rng::new(7, Stream::Task(0)); move |_| r.next_u64() }).collect();
        let a2: Vec<u64> = (0..4).map({ let mut r = Rng::new(7, Stream::Task(0)); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = Rng::new(7, Stream::Task(1)); move |_| r.next_u64() }).collect();
        let c: Vec<u64> = (0..4).map({ let mut r = Rng::new(8, Stream::Task(0)); move |_| r.next_u64() }).collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }

    #[test]
    fn exp_mean_is_close() {
        let mut r = Rng::new(1, Stream::Workload);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exp(10.0)).sum::<f64>() / f64::from(n);
        assert!((m - 10.0).abs() < 0.1, "{m}");
    }
}

//! A fixed-size CPU bitmap (struct cpumask), up to [`MAX_CPUS`] CPUs.

use crate::platform::CpuId;

pub const MAX_CPUS: usize = 256;
const WORDS: usize = MAX_CPUS / 64;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuMask([u64; WORDS]);

impl CpuMask {
    pub fn from_cpus(cpus: impl IntoIterator<Item = CpuId>) -> Self {
        let mut m = CpuMask::default();
        for c in cpus {
            m.set(c);
        }
        m
    }

    /// The mask of `cpu` alone.
    #[inline]
    pub fn single(cpu: CpuId) -> Self {
        let mut m = CpuMask::default();
        m.set(cpu);
        m
    }

    #[inline]
    pub fn set(&mut self, cpu: CpuId) {
        self.0[cpu / 64] |= 1 << (cpu % 64);
    }

    #[inline]
    pub fn clear(&mut self, cpu: CpuId) {
        self.0[cpu / 64] &= !(1 << (cpu % 64));
    }

    #[inline]
    pub fn test(&self, cpu: CpuId) -> bool {
        self.0[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    #[inline]
    #[must_use]
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        // Word by word, by index: `array::from_fn`'s closure and `zip`
        // stay out of line in builds without fat LTO.
        let mut m = *self;
        for w in 0..WORDS {
            m.0[w] &= other.0[w];
        }
        m
    }

    /// The CPUs of `self` not in `other` (cpumask_andnot).
    #[inline]
    #[must_use]
    pub fn and_not(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for w in 0..WORDS {
            m.0[w] &= !other.0[w];
        }
        m
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The number of set CPUs. Empty words are skipped: x86-64's baseline
    /// has no popcnt, so each counted word costs a dozen instructions, and
    /// most machines fill only the first words.
    #[inline]
    pub fn weight(&self) -> u32 {
        let mut n = 0;
        for &w in &self.0 {
            if w != 0 {
                n += w.count_ones();
            }
        }
        n
    }

    /// The number of set CPUs below `end`.
    #[inline]
    pub fn weight_below(&self, end: CpuId) -> u32 {
        let mut n = 0;
        for w in 0..WORDS.min(end.div_ceil(64)) {
            let bits = if (w + 1) * 64 <= end { self.0[w] } else { self.0[w] & ((1u64 << (end % 64)) - 1) };
            if bits != 0 {
                n += bits.count_ones();
            }
        }
        n
    }

    /// The lowest CPU set in both masks (cpumask_first_and).
    #[inline]
    pub fn first_and(&self, other: &CpuMask) -> Option<CpuId> {
        for w in 0..WORDS {
            let bits = self.0[w] & other.0[w];
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Lowest set CPU at or after `start`, wrapping around (for_each_cpu_wrap).
    pub fn next_wrap(&self, start: CpuId) -> Option<CpuId> {
        self.next_from(start).or_else(|| self.next_from(0))
    }

    /// The set CPUs from `start` on, then from CPU 0 up to `start`
    /// (for_each_cpu_wrap); past the last CPU, from CPU 0.
    pub fn iter_wrap(&self, start: CpuId) -> impl Iterator<Item = CpuId> + '_ {
        let start = start.min(MAX_CPUS);
        let (mut cur, mut end, mut wrapped) = (start, MAX_CPUS, false);
        std::iter::from_fn(move || loop {
            match self.next_from(cur).filter(|&c| c < end) {
                Some(c) => {
                    cur = c + 1;
                    return Some(c);
                }
                None if !wrapped => (cur, end, wrapped) = (0, start, true),
                None => return None,
            }
        })
    }

    /// Lowest set CPU at or after `start`.
    #[inline]
    pub fn next_from(&self, start: CpuId) -> Option<CpuId> {
        Self::find_next(start, |w| self.0[w])
    }

    /// Lowest CPU at or after `start` set in both masks: `self.and(other)
    /// .next_from(start)` reading only the words from `start`'s on.
    #[inline]
    pub fn next_and_from(&self, other: &CpuMask, start: CpuId) -> Option<CpuId> {
        Self::find_next(start, |w| self.0[w] & other.0[w])
    }

    /// The first set bit at or after `start` of the words `word(w)` gives:
    /// one scan for one mask or the AND of two, as lib/find_bit.c's
    /// `_find_next_bit()` serves find_next_bit() and find_next_and_bit().
    #[inline(always)]
    fn find_next(start: CpuId, word: impl Fn(usize) -> u64) -> Option<CpuId> {
        if start >= MAX_CPUS {
            return None;
        }
        let mut w = start / 64;
        let mut bits = word(w) & (!0u64 << (start % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w == WORDS {
                return None;
            }
            bits = word(w);
        }
    }

    /// The set CPUs in increasing order (for_each_cpu).
    pub fn iter(&self) -> Iter {
        Iter { words: self.0, w: 0, bits: self.0[0] }
    }
}

/// [`CpuMask::iter`]: a word at a time, taking its lowest set bit.
pub struct Iter {
    words: [u64; WORDS],
    w: usize,
    /// The bits of word `w` not yet taken.
    bits: u64,
}

impl IntoIterator for &CpuMask {
    type Item = CpuId;
    type IntoIter = Iter;

    fn into_iter(self) -> Iter {
        self.iter()
    }
}

impl Iterator for Iter {
    type Item = CpuId;

    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        while self.bits == 0 {
            if self.w + 1 == WORDS {
                return None;
            }
            self.w += 1;
            self.bits = self.words[self.w];
        }
        let b = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.w * 64 + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_iterate_wrap() {
        let m = CpuMask::from_cpus([3, 70, 200]);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![3, 70, 200]);
        assert_eq!(m.next_wrap(71), Some(200));
        assert_eq!(m.next_wrap(201), Some(3));
        assert_eq!(m.weight(), 3);
        let mut it = m.iter();
        assert_eq!((it.next(), it.next(), it.next(), it.next(), it.next()), (Some(3), Some(70), Some(200), None, None));
        assert_eq!(CpuMask::default().iter().next(), None);
        let full = CpuMask::from_cpus(0..MAX_CPUS);
        assert!(full.iter().eq(0..MAX_CPUS));
        assert!(m.and(&CpuMask::from_cpus([70])).test(70));
        assert_eq!(m.and_not(&CpuMask::from_cpus([70, 71])), CpuMask::from_cpus([3, 200]));
        assert_eq!(CpuMask::single(130), CpuMask::from_cpus([130]));
        assert_eq!(m.first_and(&CpuMask::from_cpus([5, 200])), Some(200));
        assert_eq!(m.first_and(&CpuMask::from_cpus([4, 71])), None);
        let other = CpuMask::from_cpus([3, 64, 70, 200, 255]);
        for start in [0, 3, 4, 64, 70, 71, 199, 200, 201, 255, 256] {
            assert_eq!(m.next_and_from(&other, start), m.and(&other).next_from(start), "{start}");
        }
        for end in [0, 3, 4, 64, 70, 71, 128, 200, 201, 255, 256] {
            assert_eq!(m.weight_below(end) as usize, m.iter().filter(|&c| c < end).count(), "{end}");
        }
        for start in [0, 3, 4, 64, 70, 71, 199, 200, 201, 255, 256, 300] {
            let got: Vec<_> = m.iter_wrap(start).collect();
            let s = start.min(256);
            let want: Vec<_> = m.iter().filter(|&c| c >= s).chain(m.iter().filter(|&c| c < s)).collect();
            assert_eq!(got, want, "{start}");
        }
    }
}

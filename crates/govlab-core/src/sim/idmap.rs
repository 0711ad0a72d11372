//! Maps keyed by small integer ids (task ids, with a timer number) on the
//! event path. Std's default SipHash costs more than the map's own work
//! for such keys; nothing in the engine iterates these maps, so the hash
//! decides no result, only the speed of a lookup.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// One rotate, xor and multiply per word (the Fx hash of rustc's own
/// tables): the multiplication spreads an id into the high bits that the
/// map's control bytes use.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_apart() {
        let mut m: IdMap<(usize, u32), u64> = IdMap::default();
        for t in 0..300usize {
            for n in 0..3u32 {
                m.insert((t, n), t as u64 * 10 + u64::from(n));
            }
        }
        assert_eq!(m.len(), 900);
        assert_eq!(m.get(&(123, 2)), Some(&1232));
        assert_eq!(m.remove(&(0, 0)), Some(0));
        assert_eq!(m.get(&(0, 0)), None);
        assert_eq!(m.get(&(0, 1)), Some(&1));
    }
}

//! An ordered set kept in a sorted vector, for the runqueue's task tree and
//! its timer list. The kernel uses an rbtree; here the sets hold a handful
//! of entries each (tasks per CPU, timers per CPU), where a binary search
//! and a short move in one contiguous block beat a tree's node chasing.
//! The interface is the part of `BTreeSet` the scheduler uses.

#[derive(Debug, Clone)]
pub struct SortedSet<T> {
    items: Vec<T>,
}

impl<T> Default for SortedSet<T> {
    fn default() -> Self {
        SortedSet { items: Vec::new() }
    }
}

impl<T: Ord + Copy> SortedSet<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `x`; false if it was already present.
    pub fn insert(&mut self, x: T) -> bool {
        match self.items.binary_search(&x) {
            Ok(_) => false,
            Err(at) => {
                self.items.insert(at, x);
                true
            }
        }
    }

    /// Removes `x`; false if it was absent.
    pub fn remove(&mut self, x: &T) -> bool {
        match self.items.binary_search(x) {
            Ok(at) => {
                self.items.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    #[inline]
    pub fn first(&self) -> Option<&T> {
        self.items.first()
    }

    pub fn last(&self) -> Option<&T> {
        self.items.last()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// In ascending order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }
}

impl<'a, T> IntoIterator for &'a SortedSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    // The same operations on a BTreeSet and a SortedSet leave the same set.
    #[test]
    fn behaves_like_btreeset() {
        let mut ours = SortedSet::new();
        let mut reference = BTreeSet::new();
        let mut x: u32 = 12345;
        for _ in 0..5000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let v = (x >> 16) % 64;
            if x & 1 == 0 {
                assert_eq!(ours.insert(v), reference.insert(v));
            } else {
                assert_eq!(ours.remove(&v), reference.remove(&v));
            }
            assert_eq!(ours.first(), reference.first());
            assert_eq!(ours.last(), reference.last());
            assert_eq!(ours.len(), reference.len());
        }
        assert!(ours.iter().eq(reference.iter()));
    }
}

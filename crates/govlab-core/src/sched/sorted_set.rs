//! An ordered set kept in a sorted vector, for the runqueue's task tree and
//! its timer list. The kernel uses an rbtree; here the sets hold a handful
//! of entries each (tasks per CPU, timers per CPU), where a binary search
//! and a short move in one contiguous block beat a tree's node chasing.
//! The interface is the part of `BTreeSet` the scheduler uses.
//!
//! Most changes are at the ends and on short sets (the 80-CPU tbench run:
//! 85 % of insertions go last, the task put back after running having the
//! largest vruntime; 90 % of removals take the first, set_next_entity's
//! __dequeue_entity of the leftmost), so those skip the search.

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
    #[inline]
    pub fn insert(&mut self, x: T) -> bool {
        if self.items.last().map_or(true, |&b| b < x) {
            self.items.push(x);
            return true;
        }
        match self.items.binary_search(&x) {
            Ok(_) => false,
            Err(at) => {
                self.items.insert(at, x);
                true
            }
        }
    }

    /// Removes `x`; false if it was absent.
    #[inline]
    pub fn remove(&mut self, x: &T) -> bool {
        let at = if self.items.first() == Some(x) {
            0
        } else {
            match self.items.binary_search(x) {
                Ok(at) => at,
                Err(_) => return false,
            }
        };
        if at + 1 == self.items.len() {
            self.items.pop();
        } else {
            self.items.remove(at);
        }
        true
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

    // The scheduler's pattern, many times round the ring: take the first,
    // put it back last or first, re-add what is there (refused), remove
    // from the middle; the same as a BTreeSet at every step.
    #[test]
    fn ends_and_middle_like_btreeset() {
        let mut ours = SortedSet::new();
        let mut reference = BTreeSet::new();
        for v in [10u64, 20, 30, 40] {
            assert_eq!(ours.insert(v), reference.insert(v));
        }
        for round in 0..1000u64 {
            let first = *ours.first().expect("never empty");
            assert!(ours.remove(&first) && reference.remove(&first));
            let back = if round % 3 == 0 { first / 2 } else { first + 100 + round };
            assert_eq!(ours.insert(back), reference.insert(back));
            let last = *reference.last().expect("never empty");
            assert!(!ours.insert(last) && !ours.insert(*reference.first().expect("never empty")));
            if round % 7 == 0 {
                let mid = *reference.iter().nth(reference.len() / 2).expect("never empty");
                assert_eq!(ours.remove(&mid), reference.remove(&mid));
                assert_eq!(ours.insert(mid + 1), reference.insert(mid + 1));
            }
            assert!(ours.iter().eq(reference.iter()), "round {round}");
        }
    }
}

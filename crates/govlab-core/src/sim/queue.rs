//! The event queue: a binary heap keyed by (time_ns, class, seq).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{Event, Time};

/// The ordering key packs (time_ns, class, seq) into one u128 so the heap
/// compares a single integer: time in the top 64 bits, the class in the
/// next 3, the sequence number in the low 61.
struct Entry {
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // BinaryHeap is a max-heap: reverse so the earliest key pops first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}
impl Entry {
    #[inline]
    fn key(&self) -> u128 {
        self.key
    }
}

const SEQ_BITS: u32 = 61;

/// Deterministic priority queue of future events.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
        }
    }

    pub fn schedule(&mut self, time_ns: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        debug_assert!(seq < 1 << SEQ_BITS);
        let key = (u128::from(time_ns) << 64) | (u128::from(event.class() as u8) << SEQ_BITS) | u128::from(seq);
        self.heap.push(Entry { key, event });
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| (e.key >> 64) as Time)
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| ((e.key >> 64) as Time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_class_then_insertion() {
        let mut q = EventQueue::default();
        q.schedule(10, Event::Tick { cpu: 1, gen: 0 });
        q.schedule(10, Event::IdleExitDone { cpu: 0, gen: 0 });
        q.schedule(5, Event::Tick { cpu: 2, gen: 0 });
        q.schedule(10, Event::Tick { cpu: 3, gen: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order[0], (5, Event::Tick { cpu: 2, gen: 0 }));
        // IdleExitDone's class sorts before Tick at equal times.
        assert_eq!(order[1], (10, Event::IdleExitDone { cpu: 0, gen: 0 }));
        assert_eq!(order[2], (10, Event::Tick { cpu: 1, gen: 0 }));
        assert_eq!(order[3], (10, Event::Tick { cpu: 3, gen: 0 }));
    }
}

//! The event queue: a binary heap keyed by (time_ns, class, seq).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{Event, EventClass, Time};

struct Entry {
    time_ns: Time,
    class: EventClass,
    seq: u64,
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
    fn key(&self) -> (Time, EventClass, u64) {
        (self.time_ns, self.class, self.seq)
    }
}

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
        self.heap.push(Entry {
            time_ns,
            class: event.class(),
            seq,
            event,
        });
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time_ns)
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time_ns, e.event))
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

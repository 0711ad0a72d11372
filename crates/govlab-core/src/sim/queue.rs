//! The event queue: events ordered by (time_ns, class, seq).
//!
//! A calendar queue (R. Brown, "Calendar queues", CACM 31(10), 1988) in its
//! simplest form. Almost every event lands within a few milliseconds of
//! `now`: run-segment completions, IO completions, idle exits, ticks. The
//! near future is cut into [`BUCKETS`] buckets of 2^[`BUCKET_SHIFT`] ns
//! (about 1 µs), each an unsorted handful of events (a list threaded
//! through one slab, so the hot events share a few cache lines); a two-level bitmap
//! finds the first non-empty bucket in a few instructions. Events beyond
//! the window wait in a binary heap and move into their bucket once the
//! window reaches them. Popping takes the smallest key of the first
//! non-empty bucket, so the order is exactly the total order of the keys:
//! the same as a heap's, hence the same run bit for bit.
//!
//! Beyond the window a second, coarser calendar: [`COARSE`] buckets each as
//! wide as the whole window (about 1.07 s in all), unsorted. Housekeeping
//! wakeups, 40 ms apart on each CPU of a server, land there rather than in
//! a heap. The coarse bucket that the window's end is crossing is kept
//! sorted (the `staged` events), so each advance of the window takes the
//! events it now covers from that list's end; a coarse bucket is sorted
//! once, when the window's end reaches it. Events beyond the coarse
//! calendar wait in a binary heap.
//!
//! A busy machine puts a dozen events in one bucket (640 tbench tasks on
//! 80 CPUs: about 12 per µs). Rather than scan the list on each pop, the
//! bucket being popped is sorted once into the `front`, from which pops
//! take the last entry; events scheduled into that bucket meanwhile are
//! inserted there in order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Time;

/// What the queue needs of an event: a small copyable value with a class
/// that orders events falling on the same nanosecond (smaller first; at most
/// 3 bits). The queue is generic so that it knows no event of the machine;
/// it is monomorphised for the one event type a run uses, so this costs
/// nothing at run time.
pub trait Queued: Copy {
    fn class(&self) -> u8;
}

/// The ordering key packs (time_ns, class, seq) into one u128: time in the
/// top 64 bits, the class in the next 3, the sequence number in the low 61.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl<E> Entry<E> {
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

const SEQ_BITS: u32 = 61;
/// log2 of a bucket's width in ns (1.024 µs: about one event per bucket
/// on the 80-CPU benchmark, whose events come ~0.8 per µs).
const BUCKET_SHIFT: u32 = 10;
/// Buckets in the window (4.19 ms, a little more than a 250 Hz tick, so a
/// CPU's next tick is usually already in its bucket).
const BUCKETS: usize = 4096;
const WORDS: usize = BUCKETS / 64;
/// log2 of the window's width in buckets: a coarse bucket's width.
const WINDOW_SHIFT: u32 = 12;
const _: () = assert!(1 << WINDOW_SHIFT == BUCKETS);
/// Coarse buckets (each one window wide, 4.19 ms; 1.07 s in all, so a
/// server's housekeeping gaps, exponential of mean 40 ms, almost all fit).
const COARSE: u64 = 256;

const NIL: u32 = u32::MAX;

/// A queued event's key, which finds it for [`EventQueue::cancel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u128);

/// An event in a bucket's list.
#[derive(Clone, Copy)]
struct Node<E> {
    entry: Entry<E>,
    next: u32,
}

/// Deterministic priority queue of future events.
pub struct EventQueue<E> {
    /// Index in `slab` of each bucket's first node, or NIL.
    heads: Box<[u32; BUCKETS]>,
    slab: Vec<Node<E>>,
    /// Unused slab nodes, most recently freed first.
    free: u32,
    /// Bit b of `occupied[w]`: bucket 64·w + b holds events.
    occupied: [u64; WORDS],
    /// Bit w: `occupied[w]` is nonzero.
    summary: u64,
    /// The bucket number (time >> BUCKET_SHIFT) the window starts at; no
    /// event is earlier.
    first: u64,
    /// The coarse bucket number (bucket number >> WINDOW_SHIFT) of the
    /// window's last bucket, `first + BUCKETS - 1`.
    stage: u64,
    /// The events of coarse bucket `stage` beyond the window, largest key
    /// first.
    staged: Vec<Entry<E>>,
    /// The events of coarse buckets `stage + 1` to `stage + COARSE - 1`,
    /// each at index (its coarse bucket number % COARSE), unsorted.
    coarse: Vec<Vec<Entry<E>>>,
    /// How many events `coarse` holds.
    coarse_len: usize,
    /// Events at coarse bucket numbers `stage + COARSE` and later.
    later: BinaryHeap<Reverse<Entry<E>>>,
    /// The events of bucket number `first` once pops have reached it,
    /// largest key first; that bucket's list is then empty.
    front: Vec<Entry<E>>,
    len: usize,
    next_seq: u64,
}

impl<E: Queued> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl<E: Queued> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heads: Box::new([NIL; BUCKETS]),
            slab: Vec::with_capacity(n),
            free: NIL,
            occupied: [0; WORDS],
            summary: 0,
            first: 0,
            stage: (BUCKETS as u64 - 1) >> WINDOW_SHIFT,
            staged: Vec::with_capacity(64),
            coarse: (0..COARSE).map(|_| Vec::new()).collect(),
            coarse_len: 0,
            later: BinaryHeap::with_capacity(n / 4),
            front: Vec::with_capacity(64),
            len: 0,
            next_seq: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time_ns: Time, event: E) {
        self.push(time_ns, event);
    }

    /// [`Self::schedule`], with a ticket by which [`Self::cancel`] takes
    /// the event out again.
    pub fn schedule_cancellable(&mut self, time_ns: Time, event: E) -> Ticket {
        Ticket(self.push(time_ns, event))
    }

    /// Queue `event` at `time_ns`; its key.
    #[inline]
    fn push(&mut self, time_ns: Time, event: E) -> u128 {
        let seq = self.next_seq;
        self.next_seq += 1;
        debug_assert!(seq < 1 << SEQ_BITS);
        let key = (u128::from(time_ns) << 64) | (u128::from(event.class()) << SEQ_BITS) | u128::from(seq);
        self.len += 1;
        self.place(Entry { key, event });
        key
    }

    /// Take a queued event out before it comes due, where that is cheap:
    /// from its bucket's list or the front. One beyond the window (in
    /// `later`), or already popped, is left alone (false): its owner's
    /// generation check drops it when popped, as for any overtaken event.
    /// Removing an event leaves the others' keys, so their order, as is.
    pub fn cancel(&mut self, ticket: Ticket) -> bool {
        let key = ticket.0;
        let bucket = ((key >> 64) as Time) >> BUCKET_SHIFT;
        if bucket < self.first || bucket - self.first >= BUCKETS as u64 {
            return false;
        }
        if bucket == self.first && !self.front.is_empty() {
            let at = self.front.partition_point(|f| f.key > key);
            if self.front.get(at).is_some_and(|f| f.key == key) {
                self.front.remove(at);
                self.len -= 1;
                return true;
            }
        }
        let slot = bucket as usize % BUCKETS;
        let (mut prev, mut at) = (NIL, self.heads[slot]);
        while at != NIL {
            let Node { entry, next } = self.slab[at as usize];
            if entry.key == key {
                if prev == NIL {
                    self.heads[slot] = next;
                } else {
                    self.slab[prev as usize].next = next;
                }
                if self.heads[slot] == NIL {
                    self.occupied[slot / 64] &= !(1 << (slot % 64));
                    if self.occupied[slot / 64] == 0 {
                        self.summary &= !(1 << (slot / 64));
                    }
                }
                self.release(at);
                self.len -= 1;
                return true;
            }
            (prev, at) = (at, next);
        }
        false
    }

    /// Put `e` in its bucket if the window covers it, else in the coarse
    /// calendar or `later`. The common case, a bucket's list, inline; the
    /// front and beyond the window in [`Self::place_other`].
    #[inline(always)]
    fn place(&mut self, e: Entry<E>) {
        let bucket = e.time() >> BUCKET_SHIFT;
        debug_assert!(bucket >= self.first, "event scheduled in the past");
        let ahead = bucket - self.first;
        if ahead < BUCKETS as u64 && (ahead != 0 || self.front.is_empty()) {
            let slot = bucket as usize % BUCKETS;
            let node = Node { entry: e, next: self.heads[slot] };
            let at = if self.free == NIL {
                self.slab.push(node);
                (self.slab.len() - 1) as u32
            } else {
                let at = self.free;
                self.free = self.slab[at as usize].next;
                self.slab[at as usize] = node;
                at
            };
            self.heads[slot] = at;
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.summary |= 1 << (slot / 64);
        } else {
            self.place_other(e);
        }
    }

    /// [`Self::place`] of an event for the front's bucket while the front
    /// holds events, or beyond the window.
    #[inline(never)]
    fn place_other(&mut self, e: Entry<E>) {
        let bucket = e.time() >> BUCKET_SHIFT;
        if bucket == self.first && !self.front.is_empty() {
            let at = self.front.partition_point(|f| f.key > e.key);
            self.front.insert(at, e);
        } else {
            self.place_beyond(e);
        }
    }

    /// Put `e`, beyond the window, in the staged list, its coarse bucket
    /// or `later`.
    fn place_beyond(&mut self, e: Entry<E>) {
        let c = (e.time() >> BUCKET_SHIFT) >> WINDOW_SHIFT;
        if c == self.stage {
            let at = self.staged.partition_point(|f| f.key > e.key);
            self.staged.insert(at, e);
        } else if c - self.stage < COARSE {
            self.coarse[(c % COARSE) as usize].push(e);
            self.coarse_len += 1;
        } else {
            self.later.push(Reverse(e));
        }
    }

    /// The bucket number of the earliest event beyond the window.
    fn first_beyond(&self) -> Option<u64> {
        if let Some(e) = self.staged.last() {
            return Some(e.time() >> BUCKET_SHIFT);
        }
        if self.coarse_len > 0 {
            for c in self.stage + 1..self.stage + COARSE {
                let bucket = &self.coarse[(c % COARSE) as usize];
                if let Some(key) = bucket.iter().map(|e| e.key).min() {
                    return Some(((key >> 64) as Time) >> BUCKET_SHIFT);
                }
            }
        }
        self.later.peek().map(|Reverse(e)| e.time() >> BUCKET_SHIFT)
    }

    /// The slot of the first non-empty bucket at or after the window start.
    fn first_occupied(&self) -> Option<usize> {
        let start = self.first as usize % BUCKETS;
        let (w0, b0) = (start / 64, start % 64);
        // The start's own word, from the start's bit on.
        let head = self.occupied[w0] & (!0u64 << b0);
        if head != 0 {
            return Some(w0 * 64 + head.trailing_zeros() as usize);
        }
        // Words after it, then (wrapping) words before it, then the start
        // word's bits below the start.
        let after = self.summary & (!1u64 << w0);
        let w = if after != 0 {
            after.trailing_zeros() as usize
        } else if self.summary & ((1u64 << w0) - 1) != 0 {
            self.summary.trailing_zeros() as usize
        } else if self.occupied[w0] != 0 {
            w0
        } else {
            return None;
        };
        Some(w * 64 + self.occupied[w].trailing_zeros() as usize)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        if let Some(e) = self.front.pop() {
            return Some((e.time(), e.event));
        }
        let slot = match self.first_occupied() {
            Some(slot) => slot,
            None => {
                // The window is empty: jump it to the earliest later event
                // (there is one while `len` counted it).
                self.advance_to(self.first_beyond()?);
                self.first_occupied()?
            }
        };
        let start = self.first as usize % BUCKETS;
        let ahead = (slot + BUCKETS - start) % BUCKETS;
        self.advance_to(self.first + ahead as u64);
        // Empty the bucket: a lone event is the answer, more go to the front.
        let mut at = self.heads[slot];
        self.heads[slot] = NIL;
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        if self.occupied[slot / 64] == 0 {
            self.summary &= !(1 << (slot / 64));
        }
        let Node { entry: first, next } = self.slab[at as usize];
        self.release(at);
        if next == NIL {
            return Some((first.time(), first.event));
        }
        // Two events (a busy CPU's next segment end and another's): the
        // smaller is the answer, the other the front's one entry.
        let Node { entry: second, next: third } = self.slab[next as usize];
        if third == NIL {
            self.release(next);
            let (lo, hi) = if first.key < second.key { (first, second) } else { (second, first) };
            self.front.push(hi);
            return Some((lo.time(), lo.event));
        }
        self.front.push(first);
        at = next;
        while at != NIL {
            let Node { entry, next } = self.slab[at as usize];
            self.front.push(entry);
            self.release(at);
            at = next;
        }
        self.front.sort_unstable_by_key(|e| Reverse(e.key));
        let e = self.front.pop()?;
        Some((e.time(), e.event))
    }

    /// Return slab node `at` to the free list.
    #[inline]
    fn release(&mut self, at: u32) {
        self.slab[at as usize].next = self.free;
        self.free = at;
    }

    /// Move the window start to bucket number `first` and pull the later
    /// events it now covers into their buckets. Those are all at or after
    /// the old window's end, so none lands before a pending bucket event.
    /// Inline when the window's end stays in the staged coarse bucket and
    /// reaches none of its events (most moves, a few µs each).
    #[inline]
    fn advance_to(&mut self, first: u64) {
        let end = first + BUCKETS as u64;
        if self.stage >= (end - 1) >> WINDOW_SHIFT && self.staged.last().map_or(true, |e| e.time() >> BUCKET_SHIFT >= end) {
            self.first = first;
            return;
        }
        self.advance_far(first);
    }

    /// [`Self::advance_to`] when coarse buckets or staged events come into
    /// the window.
    #[inline(never)]
    fn advance_far(&mut self, first: u64) {
        self.first = first;
        let end = first + BUCKETS as u64;
        let stage = (end - 1) >> WINDOW_SHIFT;
        while self.stage < stage {
            // The staged coarse bucket is now wholly in the window.
            while let Some(e) = self.staged.pop() {
                self.place(e);
            }
            self.stage = if self.coarse_len == 0 { stage } else { self.stage + 1 };
            let c = self.stage;
            // The next coarse bucket, sorted, is staged; the heap's events
            // the coarse calendar now reaches move into it (or into the
            // window, after a jump over an empty calendar).
            let mut staged = std::mem::take(&mut self.coarse[(c % COARSE) as usize]);
            self.coarse_len -= staged.len();
            std::mem::swap(&mut self.staged, &mut staged);
            self.coarse[(c % COARSE) as usize] = staged;
            self.staged.sort_unstable_by_key(|e| Reverse(e.key));
            while let Some(&Reverse(e)) = self.later.peek() {
                if (e.time() >> BUCKET_SHIFT) >> WINDOW_SHIFT >= c + COARSE {
                    break;
                }
                self.later.pop();
                self.place(e);
            }
        }
        while let Some(e) = self.staged.last() {
            if e.time() >> BUCKET_SHIFT >= end {
                break;
            }
            let e = *e;
            self.staged.pop();
            self.place(e);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::{Rng, Stream};
    use super::*;

    /// Events of two classes, as the machine's `Tick` (housekeeping) and
    /// `RunDone`/`IdleExitDone` (earlier classes) would be.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Event {
        IdleExitDone { cpu: u32, gen: u32 },
        RunDone { cpu: u32, gen: u32 },
        Tick { cpu: u32, gen: u32 },
    }

    impl Queued for Event {
        fn class(&self) -> u8 {
            match self {
                Event::IdleExitDone { .. } => 0,
                Event::RunDone { .. } => 1,
                Event::Tick { .. } => 3,
            }
        }
    }

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

    /// A crowded bucket: events scheduled into the bucket being popped (the
    /// front) come out in key order among those already sorted there.
    #[test]
    fn a_crowded_bucket_pops_in_key_order() {
        let mut q = EventQueue::default();
        for i in 0..20u32 {
            q.schedule(u64::from(500 - i * 7), Event::RunDone { cpu: i, gen: 0 });
        }
        let mut popped = vec![q.pop().expect("20 queued")];
        // Into the front, before, between and after what is there.
        q.schedule(popped[0].0, Event::IdleExitDone { cpu: 100, gen: 0 });
        q.schedule(popped[0].0, Event::Tick { cpu: 101, gen: 0 });
        q.schedule(450, Event::RunDone { cpu: 102, gen: 0 });
        q.schedule(1000, Event::RunDone { cpu: 103, gen: 0 });
        popped.extend(std::iter::from_fn(|| q.pop()));
        assert_eq!(popped.len(), 24);
        assert_eq!(popped[1], (367, Event::IdleExitDone { cpu: 100, gen: 0 }));
        assert_eq!(popped[2], (367, Event::Tick { cpu: 101, gen: 0 }));
        assert!(popped.windows(2).all(|w| w[0].0 <= w[1].0), "{popped:?}");
        assert_eq!(popped[23], (1000, Event::RunDone { cpu: 103, gen: 0 }));
    }

    /// Against a plain binary heap of the same keys: interleaved pushes
    /// (near, far beyond the window, equal times, wrapping around the
    /// buckets) and pops come out in the same order.
    #[test]
    fn pops_in_the_order_of_a_heap() {
        let mut rng = Rng::new(7, Stream::Workload);
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for round in 0..200_000u32 {
            if rng.f64() < 0.52 {
                let delay = match round % 4 {
                    0 => 0,
                    1 => (rng.f64() * 3_000.0) as u64,
                    2 => (rng.f64() * 5_000_000.0) as u64,
                    _ if round % 8 == 3 => (rng.f64() * 1e9) as u64,
                    // Beyond the coarse calendar (1.07 s) too.
                    _ => (rng.f64() * 3e9) as u64,
                };
                let ev = if round % 3 == 0 { Event::Tick { cpu: round, gen: 0 } } else { Event::RunDone { cpu: round, gen: 0 } };
                let key = (u128::from(now + delay) << 64) | (u128::from(ev.class()) << SEQ_BITS) | u128::from(seq);
                seq += 1;
                q.schedule(now + delay, ev);
                reference.push(Reverse((key, round)));
            } else {
                let got = q.pop();
                let want = reference.pop().map(|Reverse((key, round))| ((key >> 64) as u64, round));
                assert_eq!(got.map(|(t, _)| t), want.map(|(t, _)| t));
                if let (Some((t, ev)), Some((_, round))) = (got, want) {
                    assert!(matches!(ev, Event::Tick { cpu, .. } | Event::RunDone { cpu, .. } if cpu == round));
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(Reverse((key, round))) = reference.pop() {
            let (t, ev) = q.pop().expect("same length");
            assert_eq!(t, (key >> 64) as u64);
            assert!(matches!(ev, Event::Tick { cpu, .. } | Event::RunDone { cpu, .. } if cpu == round));
        }
        assert!(q.pop().is_none());
    }

    /// A sparse queue of far events (4 ms to 5 s ahead, a few queued at a
    /// time): the window jumps over empty coarse buckets and past the
    /// coarse calendar, and events come back in the order of a heap.
    #[test]
    fn sparse_far_events_pop_in_the_order_of_a_heap() {
        let mut rng = Rng::new(3, Stream::Workload);
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for round in 0..50_000u32 {
            if q.len() < 3 && rng.f64() < 0.7 {
                let delay = 4_000_000 + (rng.f64() * rng.f64() * 5e9) as u64;
                let ev = Event::Tick { cpu: round, gen: 0 };
                let key = (u128::from(now + delay) << 64) | (u128::from(ev.class()) << SEQ_BITS) | u128::from(seq);
                seq += 1;
                q.schedule(now + delay, ev);
                reference.push(Reverse((key, round)));
            } else {
                let got = q.pop();
                let want = reference.pop().map(|Reverse((key, round))| ((key >> 64) as u64, round));
                assert_eq!(got.map(|(t, ev)| (t, ev)), want.map(|(t, round)| (t, Event::Tick { cpu: round, gen: 0 })));
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        assert!(now > 1_000_000_000_000, "{now}");
    }

    /// Cancelled events never pop, and the rest pop in the order of a
    /// reference that never held them: cancels in a bucket's list, in the
    /// front being popped, beyond the window (left queued: false), and of
    /// events already popped (false).
    #[test]
    fn cancelled_events_leave_the_order_of_the_rest() {
        use std::collections::BTreeMap;
        let mut rng = Rng::new(11, Stream::Workload);
        let mut q = EventQueue::default();
        // key -> (ticket, round) of what is queued; the reference order.
        let mut reference: BTreeMap<u128, (Ticket, u32)> = BTreeMap::new();
        let mut popped: Vec<Ticket> = Vec::new();
        let (mut now, mut removed, mut left) = (0u64, 0u32, 0u32);
        for round in 0..100_000u32 {
            let r = rng.f64();
            if r < 0.45 {
                let delay = match round % 4 {
                    0 => 0,
                    1 => (rng.f64() * 3_000.0) as u64,
                    2 => (rng.f64() * 2_000_000.0) as u64,
                    _ => (rng.f64() * 1e8) as u64,
                };
                let ticket = q.schedule_cancellable(now + delay, Event::RunDone { cpu: round, gen: 0 });
                reference.insert(ticket.0, (ticket, round));
            } else if r < 0.6 {
                // Cancel a queued event (the n-th by key) or one popped before.
                if rng.f64() < 0.1 {
                    if let Some(&t) = popped.last() {
                        assert!(!q.cancel(t), "an event already popped");
                    }
                } else if !reference.is_empty() {
                    let n = (rng.f64() * reference.len() as f64) as usize;
                    let key = *reference.keys().nth(n.min(reference.len() - 1)).expect("nonempty");
                    let (ticket, _) = reference[&key];
                    if q.cancel(ticket) {
                        reference.remove(&key);
                        removed += 1;
                    } else {
                        // Only an event beyond the window stays queued.
                        assert!(((key >> 64) as u64 >> BUCKET_SHIFT) >= (now >> BUCKET_SHIFT) + BUCKETS as u64 - 1);
                        left += 1;
                    }
                }
            } else {
                let got = q.pop();
                let want = reference.pop_first();
                match (got, want) {
                    (Some((t, ev)), Some((key, (ticket, round)))) => {
                        assert_eq!(t, (key >> 64) as u64);
                        assert!(matches!(ev, Event::RunDone { cpu, .. } if cpu == round));
                        popped.push(ticket);
                        now = t;
                    }
                    (None, None) => {}
                    other => panic!("queue and reference differ: {other:?}"),
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        assert!(removed > 1000 && left > 10, "{removed} removed, {left} left queued");
        while let Some((key, (_, round))) = reference.pop_first() {
            let (t, ev) = q.pop().expect("same length");
            assert_eq!(t, (key >> 64) as u64);
            assert!(matches!(ev, Event::RunDone { cpu, .. } if cpu == round));
        }
        assert!(q.pop().is_none());
    }
}

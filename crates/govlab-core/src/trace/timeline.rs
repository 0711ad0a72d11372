//! Per-CPU timelines of a trace, for `govlab trace stats --html` and for
//! the HTML report's run (`api::RunConfig::run_timeline`, from the run's
//! trace kept in memory): what each CPU was doing (busy, in which idle
//! state, idle outside a traced state, or unknown) and at which frequency,
//! over the trace's span.
//!
//! The intervals are the ones [`super::stats`] accounts, recorded as it
//! sweeps the events, so the picture and the tables cannot disagree.
//!
//! A long trace has far more intervals than a page can draw. When a CPU has
//! more than `max_spans` intervals of one kind, its span is cut into
//! `max_spans` equal bins and each bin shows what the CPU spent most of that
//! bin doing (or the frequency it held longest); neighbouring bins showing
//! the same merge. `resolution_s` then gives the bin width; a CPU under the
//! limit is shown exactly (`resolution_s` null).

use serde::Serialize;

use crate::trace::event::Comm;

/// How many intervals of each kind one CPU keeps before they are binned:
/// about one per pixel of a wide screen's plot, so a 2-million-event trace
/// makes a page of a few MB at most (assumed, not measured against a limit).
pub const MAX_SPANS: usize = 2000;

/// What a CPU was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// A task other than the idle task ran (or, without `sched_switch`, the
    /// CPU was out of its idle states).
    Busy,
    /// In idle state `k` of the table.
    Idle(usize),
    /// Idle, but in no traced state (the idle task polling, or a state
    /// entered before the trace began).
    IdleOther,
    /// The trace does not say.
    Unknown,
}

impl Activity {
    /// The number the timeline's JSON carries: the idle state's index, or
    /// [`BUSY`], [`IDLE_OTHER`], [`UNKNOWN`].
    pub fn code(self) -> i64 {
        match self {
            Activity::Busy => BUSY,
            Activity::Idle(k) => k as i64,
            Activity::IdleOther => IDLE_OTHER,
            Activity::Unknown => UNKNOWN,
        }
    }
}

/// [`Activity::Busy`]'s code (the report's "running").
pub const BUSY: i64 = -1;
/// [`Activity::IdleOther`]'s code.
pub const IDLE_OTHER: i64 = -2;
/// [`Activity::Unknown`]'s code.
pub const UNKNOWN: i64 = -3;

/// `value` held from `start_ns` to `end_ns`.
#[derive(Debug, Clone, PartialEq)]
pub struct Span<V> {
    pub start_ns: u64,
    pub end_ns: u64,
    pub value: V,
}

/// What one CPU's sweep records.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    activity: Vec<Span<Activity>>,
    /// Frequency changes: (time ns, kHz, comm of the task the event was
    /// recorded in).
    frequency: Vec<(u64, u32, Comm)>,
}

impl Recorder {
    /// `what` from `start_ns` to `end_ns`, merged into the last interval when
    /// it continues it.
    pub(crate) fn activity(&mut self, start_ns: u64, end_ns: u64, what: Activity) {
        if end_ns <= start_ns {
            return;
        }
        match self.activity.last_mut() {
            Some(last) if last.value == what && last.end_ns == start_ns => last.end_ns = end_ns,
            _ => self.activity.push(Span { start_ns, end_ns, value: what }),
        }
    }

    /// The frequency became `khz` at `t_ns` (a repeat of the same is no change).
    pub(crate) fn frequency(&mut self, t_ns: u64, khz: u32, comm: &Comm) {
        if !matches!(self.frequency.last(), Some(&(_, k, _)) if k == khz) {
            self.frequency.push((t_ns, khz, comm.clone()));
        }
    }

    /// The CPU's timeline over `t0..t1`, binned past `max_spans` intervals;
    /// times in seconds from `t0`.
    pub(crate) fn finish(self, cpu: usize, t0: u64, t1: u64, max_spans: usize) -> CpuTimeline {
        let (activity, act_bin) = downsample(&self.activity, t0, t1, max_spans, |a| *a);
        let changes: Vec<Span<(u32, Comm)>> = self
            .frequency
            .iter()
            .enumerate()
            .map(|(i, (t, khz, comm))| Span {
                start_ns: *t,
                end_ns: self.frequency.get(i + 1).map_or(t1, |n| n.0),
                value: (*khz, comm.clone()),
            })
            .collect();
        let (frequency, freq_bin) = downsample(&changes, t0, t1, max_spans, |v| v.0);
        let s = |ns: u64| ns.saturating_sub(t0) as f64 / 1e9;
        CpuTimeline {
            cpu,
            segments: activity.iter().map(|a| (s(a.start_ns), s(a.end_ns), a.value.code())).collect(),
            frequency: frequency.into_iter().map(|f| (s(f.start_ns), f.value.0, f.value.1.to_string())).collect(),
            resolution_s: act_bin.max(freq_bin).map(s_of),
        }
    }
}

fn s_of(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Every CPU's timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// Span of the trace, s (the timelines' times run from 0 to this).
    pub duration_s: f64,
    /// Intervals of each kind a CPU keeps before they are binned.
    pub max_spans: usize,
    /// The idle states' names, by index.
    pub idle_states: Vec<String>,
    pub cpus: Vec<CpuTimeline>,
}

/// One CPU's timeline; times in seconds from the trace's start.
#[derive(Debug, Clone, Serialize)]
pub struct CpuTimeline {
    pub cpu: usize,
    /// (start s, end s, what): an idle state's index, or −1 busy, −2 idle in
    /// no traced state, −3 unknown. They cover the span.
    pub segments: Vec<(f64, f64, i64)>,
    /// (time s, kHz, comm) at each change of frequency.
    pub frequency: Vec<(f64, u32, String)>,
    /// The bin width when the intervals were binned, s; null when exact.
    pub resolution_s: Option<f64>,
}

/// `spans` as they are when there are at most `max_spans`; else binned into
/// `max_spans` equal bins over `t0..t1`, each holding the value of greatest
/// total time in it by `key` (its longest interval's value), neighbouring
/// bins of equal key merged. Returns the bin width too when binned.
pub fn downsample<V: Clone, K: PartialEq + Copy>(spans: &[Span<V>], t0: u64, t1: u64, max_spans: usize, key: impl Fn(&V) -> K) -> (Vec<Span<V>>, Option<u64>) {
    if spans.len() <= max_spans.max(1) || t1 <= t0 {
        return (spans.to_vec(), None);
    }
    let width = (t1 - t0).div_ceil(max_spans as u64).max(1);
    let mut out: Vec<Span<V>> = Vec::new();
    let mut first = 0; // first span that may overlap the current bin
    let mut lo = t0;
    while lo < t1 {
        let hi = (lo + width).min(t1);
        // (key, total ns, index of its longest span, that span's ns in the bin)
        let mut tally: Vec<(K, u64, usize, u64)> = Vec::new();
        let mut i = first;
        while i < spans.len() && spans[i].start_ns < hi {
            let s = &spans[i];
            let ns = s.end_ns.min(hi).saturating_sub(s.start_ns.max(lo));
            if ns > 0 {
                let k = key(&s.value);
                match tally.iter_mut().find(|t| t.0 == k) {
                    Some(t) => {
                        t.1 += ns;
                        if ns > t.3 {
                            (t.2, t.3) = (i, ns);
                        }
                    }
                    None => tally.push((k, ns, i, ns)),
                }
            }
            i += 1;
        }
        while first < spans.len() && spans[first].end_ns <= hi {
            first += 1;
        }
        if let Some(&(k, _, rep, _)) = tally.iter().reduce(|a, b| if b.1 > a.1 { b } else { a }) {
            match out.last_mut() {
                Some(last) if last.end_ns == lo && key(&last.value) == k => last.end_ns = hi,
                _ => out.push(Span { start_ns: lo, end_ns: hi, value: spans[rep].value.clone() }),
            }
        }
        lo = hi;
    }
    (out, Some(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start_ns: u64, end_ns: u64, value: char) -> Span<char> {
        Span { start_ns, end_ns, value }
    }

    #[test]
    fn few_spans_are_kept_exactly() {
        let s = [span(0, 3, 'a'), span(3, 10, 'b')];
        assert_eq!(downsample(&s, 0, 10, 2, |c| *c), (s.to_vec(), None));
    }

    #[test]
    fn many_spans_become_the_longest_value_of_each_bin() {
        // Bins of 10 ns: [0,10) is 6 a + 4 b, [10,20) 3 a + 7 b, [20,30) all b,
        // [30,40) 2 c + 8 a (each split in two intervals).
        let s = [span(0, 6, 'a'), span(6, 13, 'b'), span(13, 16, 'a'), span(16, 30, 'b'), span(30, 31, 'c'), span(31, 35, 'a'), span(35, 36, 'c'), span(36, 41, 'a')];
        let (out, width) = downsample(&s, 0, 40, 4, |c| *c);
        assert_eq!(width, Some(10));
        assert_eq!(out, [span(0, 10, 'a'), span(10, 30, 'b'), span(30, 40, 'a')]);
        // Time is conserved: the bins cover the span without gaps.
        assert_eq!(out.iter().map(|s| s.end_ns - s.start_ns).sum::<u64>(), 40);
    }

    #[test]
    fn the_key_decides_and_the_longest_interval_gives_the_value() {
        let s = [
            Span { start_ns: 0, end_ns: 2, value: (1, "x") },
            Span { start_ns: 2, end_ns: 3, value: (2, "y") },
            Span { start_ns: 3, end_ns: 10, value: (1, "z") },
        ];
        let (out, _) = downsample(&s, 0, 10, 1, |v| v.0);
        assert_eq!(out, [Span { start_ns: 0, end_ns: 10, value: (1, "z") }]);
    }

    #[test]
    fn the_recorder_merges_continuations_and_ignores_repeated_frequencies() {
        let mut r = Recorder::default();
        let comm: Comm = "a".into();
        r.activity(0, 5, Activity::Busy);
        r.activity(5, 7, Activity::Busy);
        r.activity(7, 7, Activity::Idle(0));
        r.activity(7, 10, Activity::Idle(1));
        r.frequency(0, 1000, &comm);
        r.frequency(4, 1000, &comm);
        r.frequency(6, 2000, &comm);
        let t = r.finish(3, 0, 10, 100);
        assert_eq!(t.segments, [(0.0, 7e-9, BUSY), (7e-9, 1e-8, 1)]);
        assert_eq!(t.frequency, [(0.0, 1000, "a".to_string()), (6e-9, 2000, "a".to_string())]);
        assert_eq!((t.cpu, t.resolution_s), (3, None));
    }
}

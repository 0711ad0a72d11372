//! The trace readers on the real recordings in `data/real/` (trappy
//! and LISA): event counts per type as their SOURCE.md states them, every
//! trace.dat decoded to the same events as `trace-cmd report` printed, and
//! bad input (truncated, corrupted, random) always an error, never a panic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use govlab_core::trace::read::read_bytes;
use govlab_core::trace::{read_path, Event, EventKind, Format, Trace};

/// The repository's `data/real`.
pub(crate) fn real_data() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    govlab_core::trace::real_data_dir(manifest)
        .unwrap_or_else(|| panic!("data/real not found in {} or a parent", manifest.display()))
}

fn read(rel: &str) -> Trace {
    let path = real_data().join(rel);
    read_path(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn counts(t: &Trace) -> BTreeMap<String, u64> {
    t.counts()
}

fn expect(t: &Trace, want: &[(&str, u64)]) {
    let want: BTreeMap<String, u64> = want.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    assert_eq!(counts(t), want);
}

// Counts below are those of each folder's SOURCE.md. Where SOURCE.md names
// trace_marker writes `tracing_mark_write` (the name ftrace prints them
// under), govlab counts them as `print` (the event's name).

#[test]
fn trappy_surfaceflinger_systrace() {
    let t = read("trappy/trace_surfaceflinger.html");
    assert_eq!((t.format, t.nr_cpus), (Format::Systrace, 8));
    expect(
        &t,
        &[
            ("sched_switch", 715),
            ("cpu_idle", 621),
            ("sched_wakeup", 421),
            ("sugov_set_iowait_boost", 366),
            ("print", 160),
            ("cpu_frequency", 104),
            ("clock_set_rate", 88),
            ("sched_blocked_reason", 31),
        ],
    );
    let (a, b) = t.span_ns();
    assert_eq!((a, b), (538_064_659_000, 538_802_729_000));
    // Frequencies seen, per cluster (SOURCE.md).
    let mut little = std::collections::BTreeSet::new();
    let mut big = std::collections::BTreeSet::new();
    for e in &t.events {
        if let EventKind::CpuFrequency { state, cpu_id } = e.kind {
            if cpu_id < 4 { little.insert(state) } else { big.insert(state) };
        }
    }
    assert_eq!(little.into_iter().collect::<Vec<_>>(), [300_000, 518_400]);
    assert_eq!(big.into_iter().collect::<Vec<_>>(), [300_000, 345_600, 422_400, 499_200]);
}

#[test]
fn trappy_small_systrace() {
    let t = read("trappy/trace_systrace.html");
    expect(&t, &[("sched_switch", 4), ("sched_wakeup", 4), ("print", 2)]);
    assert!(t.events.iter().any(|e| matches!(&e.kind, EventKind::Print { message } if message.starts_with("trace_event_clock_sync: realtime_ts="))));
}

#[test]
fn trappy_trace_idle_dat() {
    // SOURCE.md says "44 events" but lists 23 + 17 + 3 = 43 by type; the
    // per-type counts hold, and trace-cmd's report has 43 lines of events.
    let t = read("trappy/trace_idle.dat");
    assert_eq!((t.format, t.nr_cpus), (Format::TraceDat, 6));
    expect(&t, &[("sched_switch", 23), ("cpu_idle", 17), ("sched_migrate_task", 3)]);
}

#[test]
fn trappy_unsorted_text_is_sorted() {
    let t = read("trappy/trace_idle_unsorted.txt");
    assert!(t.events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
    expect(&t, &[("sched_switch", 6), ("cpu_idle", 8)]);
    // Its two out-of-order lines: the exit at .449811 is printed before the
    // entry at .449809.
    let six: Vec<_> = t.events.iter().filter(|e| e.cpu == 6).map(|e| e.ts_ns).collect();
    assert!(six.contains(&7_115_449_809_000) && six.contains(&7_115_449_811_000));
    // Its last line is cut after prev_pid: skipped, with a note.
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(t.notes[0].contains("line 17"));
}

#[test]
fn lisa_trace_txt() {
    let t = read("lisa/trace_txt/trace.txt");
    assert_eq!((t.format, t.nr_cpus), (Format::ReportText, 6));
    expect(&t, &[("sched_switch", 1856), ("sched_wakeup", 1068), ("print", 14), ("sched_overutilized", 3)]);
    let (a, b) = t.span_ns();
    assert_eq!((a / 10_000_000, b / 10_000_000), (7621, 8288)); // 76.2115-82.8880 s
}

#[test]
fn lisa_sched_load_dat() {
    let t = read("lisa/sched_load/trace.dat");
    expect(
        &t,
        &[
            ("sched_load_cfs_rq", 2437),
            ("cpu_idle", 474),
            ("sched_switch", 399),
            ("sched_load_se", 364),
            ("sched_migrate_task", 28),
            ("cpu_frequency", 16),
            ("print", 6),
        ],
    );
}

#[test]
fn lisa_example_rtapp_dat() {
    let t = read("lisa/example_rtapp/trace.dat");
    expect(&t, &[("bprint", 6242), ("sched_switch", 1552), ("print", 14), ("cpu_frequency", 12)]);
    assert!(t.events.iter().any(|e| matches!(&e.kind, EventKind::SchedSwitch(s) if &*s.next_comm == "task_r20_5-60")));
}

/// trace-cmd prints times rounded to the microsecond.
fn us(ns: u64) -> u64 {
    (ns + 500) / 1000
}

/// The same event, up to the report's µs rounding. Events govlab does not
/// type keep their fields as `name=value` in format order, which is what the
/// report prints for these traces' sched_load_* events; `bprint` is compared
/// by name only (its text needs trace_printk's format table and binary
/// arguments, which govlab does not evaluate).
fn same(dat: &Event, rep: &Event) -> bool {
    let kinds = match (&dat.kind, &rep.kind) {
        (EventKind::Other { name: a, fields: fa }, EventKind::Other { name: b, fields: fb }) => a == b && (fa == fb || &**a == "bprint"),
        (a, b) => a == b,
    };
    kinds && us(dat.ts_ns) == rep.ts_ns / 1000 && dat.cpu == rep.cpu && dat.pid == rep.pid && dat.comm == rep.comm
}

fn dat_equals_report(dat: &str, report: &str) {
    let d = read(dat);
    let r = read(report);
    assert_eq!(r.format, Format::ReportText);
    assert_eq!(d.nr_cpus, r.nr_cpus);
    assert_eq!(d.events.len(), r.events.len());
    for (i, (a, b)) in d.events.iter().zip(&r.events).enumerate() {
        assert!(same(a, b), "event {i} differs:\n  trace.dat: {a:?}\n  report:    {b:?}");
    }
}

#[test]
fn trace_idle_dat_equals_its_report() {
    dat_equals_report("trappy/trace_idle.dat", "trappy/trace_idle.report.txt");
}

#[test]
fn sched_load_dat_equals_its_report() {
    dat_equals_report("lisa/sched_load/trace.dat", "lisa/sched_load/trace.report.txt");
}

#[test]
fn example_rtapp_dat_equals_its_report() {
    dat_equals_report("lisa/example_rtapp/trace.dat", "lisa/example_rtapp/trace.report.txt");
}

/// A small deterministic generator (xorshift64*), so the fuzz cases are
/// the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn fuzz_input(rel: &str) -> (PathBuf, Vec<u8>) {
    let path = real_data().join(rel);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// Whatever a reader accepts, the analyses take without panicking.
fn analyse(t: &Trace) {
    let _ = govlab_core::trace::stats::stats(t, None);
    let _ = govlab_core::trace::replay::tasks(t, 1_000_000, None, govlab_core::trace::replay::Wakeups::Follow);
}

/// Every prefix a trace.dat can be cut to is an error naming a byte offset.
#[test]
fn truncated_trace_dat_is_an_error() {
    for rel in ["trappy/trace_idle.dat", "lisa/sched_load/trace.dat"] {
        let (path, bytes) = fuzz_input(rel);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut cuts: Vec<usize> = (0..200).map(|_| rng.below(bytes.len())).collect();
        cuts.extend([0, 1, 9, 10, 12, 40, 600, bytes.len() - 1]);
        for cut in cuts {
            let err = read_bytes(&bytes[..cut], &path).expect_err(&format!("{rel} cut at {cut} was read"));
            let msg = err.to_string();
            assert!(msg.contains("byte ") || msg.contains("line "), "{rel} cut at {cut}: {msg}");
        }
    }
}

/// Flipped bytes anywhere in a trace.dat: an error or a trace, never a panic.
#[test]
fn corrupted_trace_dat_never_panics() {
    let (path, bytes) = fuzz_input("lisa/sched_load/trace.dat");
    let mut rng = Rng(7);
    // The header (formats, cmdlines, offsets) and the first data pages.
    let hot = 40_000.min(bytes.len());
    let data_start = bytes.len() - 200_000.min(bytes.len());
    let mut errors = 0;
    for round in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..=rng.below(8) {
            let at = if round % 2 == 0 { rng.below(hot) } else { data_start + rng.below(bytes.len() - data_start) };
            b[at] = rng.next() as u8;
        }
        match read_bytes(&b, &path) {
            Ok(t) => analyse(&t),
            Err(_) => errors += 1,
        }
    }
    assert!(errors > 0, "no corruption was noticed at all");
}

/// Text traces cut anywhere: the cut last line is skipped with a note, or the
/// cut leaves a valid shorter trace; never a panic.
#[test]
fn truncated_text_traces_read_up_to_the_cut() {
    for rel in ["lisa/trace_txt/trace.txt", "trappy/trace_idle.report.txt", "trappy/trace_surfaceflinger.html"] {
        let (path, bytes) = fuzz_input(rel);
        let text = std::str::from_utf8(&bytes).unwrap();
        let full = read_bytes(&bytes, &path).unwrap().events.len();
        let mut rng = Rng(11);
        for _ in 0..60 {
            let mut cut = rng.below(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            match read_bytes(&bytes[..cut], &path) {
                Ok(t) => assert!(t.events.len() <= full),
                Err(e) => assert!(e.to_string().contains("line "), "{rel} cut at {cut}: {e}"),
            }
        }
    }
}

/// Corrupted text: an error naming the line, or a trace; never a panic.
#[test]
fn corrupted_text_traces_never_panic() {
    for rel in ["lisa/trace_txt/trace.txt", "trappy/trace_surfaceflinger.html", "trappy/trace_idle.report.txt"] {
        let (path, bytes) = fuzz_input(rel);
        let mut rng = Rng(13);
        let mut errors = 0;
        for _ in 0..100 {
            let mut b = bytes.clone();
            for _ in 0..=rng.below(4) {
                let at = rng.below(b.len());
                b[at] = b" -:=[]()0123456789abcxyz\n\t."[rng.below(27)];
            }
            match read_bytes(&b, &path) {
                Ok(t) => analyse(&t),
                Err(e) => {
                    errors += 1;
                    assert!(e.to_string().contains("line "), "{rel}: {e}");
                }
            }
        }
        assert!(errors > 0, "{rel}: no corruption was noticed at all");
    }
}

/// Random bytes, bare or behind a format's header, are an error.
#[test]
fn random_bytes_are_an_error() {
    let path = Path::new("random.bin");
    let mut rng = Rng(17);
    let heads: [&[u8]; 5] = [b"", b"\x17\x08Dtracing6\0\0\x08\0\x10\0\0", b"version = 6\ncpus=4\n", b"<!DOCTYPE html>\n", b"# tracer: nop\n"];
    for head in heads {
        for len in [0usize, 1, 7, 64, 4096] {
            let mut b = head.to_vec();
            b.extend((0..len).map(|_| rng.next() as u8));
            assert!(read_bytes(&b, path).is_err(), "{head:?} + {len} random bytes were read");
        }
    }
}

/// Older devlib wrote its frequency markers as `cpu_frequency: state=KHZ
/// cpu_id=N` to trace_marker (LISA's example_rtapp: 12 of them, the
/// frequencies of the 6 CPUs at the start and the end of the run). Each is
/// read as a frequency: the big CPUs 1 and 2, which have no cpu_frequency
/// event, run at the marker's 1.1 GHz from the first marker on.
#[test]
fn older_devlib_frequency_markers_are_frequencies() {
    for rel in ["lisa/example_rtapp/trace.dat", "lisa/example_rtapp/trace.report.txt"] {
        let path = real_data().join(rel);
        let t = read(rel);
        let in_file = std::fs::read_to_string(real_data().join("lisa/example_rtapp/trace.report.txt"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("tracing_mark_write: cpu_frequency:"))
            .count();
        let markers: Vec<u64> = t
            .events
            .iter()
            .filter(|e| matches!(&e.kind, EventKind::Print { message } if message.starts_with("cpu_frequency:")))
            .map(|e| e.ts_ns)
            .collect();
        assert_eq!((markers.len(), in_file), (12, 12), "{rel}");
        let stats = govlab_core::api::trace_stats(&path, None).unwrap();
        let (t0, _) = t.span_ns();
        let before_first_ns = markers[1] - t0; // CPU 1's marker is the second
        for cpu in [1, 2] {
            let c = &stats.cpus[cpu];
            assert!(c.time_in_state.contains_key(&1_100_000), "{rel} CPU {cpu}: {:?}", c.time_in_state);
            assert!((c.freq_unknown_s - before_first_ns as f64 / 1e9).abs() < 1e-3, "{rel} CPU {cpu}: unknown {} s", c.freq_unknown_s);
            // Markers are not the governor's changes.
            assert_eq!(c.transitions, 0);
        }
    }
}

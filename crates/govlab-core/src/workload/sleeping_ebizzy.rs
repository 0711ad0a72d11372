//! `sleeping-ebizzy`: ebizzy's record search, interrupted by regular
//! sleeps so that its CPU utilisation is a chosen value; records per second.
//!
//! ebizzy (Valerie Henson, 2006) has each thread loop forever picking a
//! memory chunk, copying it, and binary-searching the copy for a random
//! key: one "record" per iteration, all CPU and cache work. The
//! "sleeping" variants add sleeps: IBM's, used in the
//! ondemand-copy-prev-load-2014 patch, "sleeps in between its execution
//! such that its total utilization can be a user-defined value" (run at
//! 10/20/40/60 %, one thread pinned to CPU 8; its traces show runs of
//! ~10 ms slices and idle periods of ~100–200 ms); the one published with
//! the teo-weighted-history-2020 RFC (pratiksampat/sleeping-ebizzy, run as
//! `-S 60 -i 10000`) calls `usleep(sleep_interval)` (`-i`, µs, default
//! 1000) after every `sleep_at` records (`-a`).
//!
//! Model: each thread repeats a burst of record searches and a sleep of
//! `interval_us`. The burst is a fixed number of records, sized so that at
//! the CPU type's highest frequency the busy share is `util` %:
//! burst = interval × util / (100 − util). That is the teo RFC version's
//! structure (the record count per burst is its `-a`); at lower
//! frequencies the burst takes longer and the busy share rises, as with the
//! real program. The burst is split into chunks of at most `CHUNK_RECORDS`
//! records, each counted when done, so a run cut short loses little.
//! `util=100` never sleeps (plain ebizzy).
//!
//! Records: one record costs `RECORD_NS` at the highest frequency, derived
//! from the 2014 post: 274767 records/s at 10 % utilisation on a 4.1 GHz
//! POWER machine is 0.10 s / 274767 ≈ 364 ns of busy time per record (so
//! the absolute records/s on another machine are only indicative; the
//! comparisons between governors are what the model is for). The work is
//! taken as compute-bound (`mem = 0`): the 2014 variant's sub-µs records
//! are cache-resident (assumed).
//!
//! Left out: malloc/mmap and free of the copy (the `-m`/`-M` variants of
//! the teo RFC differ by that), page faults, and the threads' start
//! barrier (all threads start together at time 0).

use super::{Better, Dist, Metric, ProgramBuilder, Record, Setup, TaskSpec, Workload, WorkloadInfo};
use crate::error::{Error, Result};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const THREADS: ParamSpec = ParamSpec {
    name: "threads",
    unit: "",
    default: ParamDefault::Uint(1),
    range: Range::Uint { min: 1, max: 100_000 },
    help: "number of threads (ebizzy -t)",
};

pub const UTIL: ParamSpec = ParamSpec {
    name: "util",
    unit: "",
    default: ParamDefault::Real(50.0),
    range: Range::Real { min: 0.1, max: 100.0 },
    help: "busy share at the highest frequency, % (1..100; 100 = never sleep)",
};

pub const INTERVAL_US: ParamSpec = ParamSpec {
    name: "interval_us",
    unit: "µs",
    default: ParamDefault::Uint(10_000),
    range: Range::Uint { min: 1, max: 3_600_000_000 },
    help: "sleep between bursts, µs (sleeping-ebizzy -i; the teo RFC ran -i 10000)",
};

pub const CPU: ParamSpec = ParamSpec {
    name: "cpu",
    unit: "",
    default: ParamDefault::Unset("(none)"),
    range: Range::Uint { min: 0, max: 65_535 },
    help: "pin every thread to this CPU (the 2014 post pinned to CPU 8)",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "sleeping-ebizzy",
    description: "ebizzy record searches in bursts between sleeps, at a chosen utilisation; records per second",
    metric: "records_per_s (records/s, higher is better)",
    params: &[THREADS, UTIL, INTERVAL_US, CPU],
    ends: super::Ends::AtDuration,
    build,
};

/// Busy time per record at the highest frequency (see the header).
pub const RECORD_NS: f64 = 364.0;

/// Records per compute segment (≈ 0.36 ms at the highest frequency).
const CHUNK_RECORDS: u64 = 1000;

const RECORDS: u16 = 0;

pub struct SleepingEbizzy {
    threads: u64,
    util: f64,
    interval_us: u64,
    cpu: Option<u64>,
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload sleeping-ebizzy", spec);
    let w = SleepingEbizzy {
        threads: p.uint(&THREADS, &())?,
        util: p.real(&UTIL)?,
        interval_us: p.uint(&INTERVAL_US, &())?,
        cpu: p.opt_uint(&CPU)?,
    };
    p.finish()?;
    Ok(Box::new(w))
}

impl SleepingEbizzy {
    /// Records per burst (at least one).
    fn burst_records(&self) -> u64 {
        let burst_ns = self.interval_us as f64 * 1e3 * self.util / (100.0 - self.util);
        ((burst_ns / RECORD_NS).round() as u64).max(1)
    }
}

impl Workload for SleepingEbizzy {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        if let Some(cpu) = self.cpu {
            if cpu as usize >= platform.nr_cpus() {
                return Err(Error::invalid(
                    "workload sleeping-ebizzy",
                    "cpu",
                    cpu,
                    format!("a CPU of {} (0 to {})", platform.name, platform.nr_cpus() - 1),
                ));
            }
        }
        let ct = &platform.cpu_types[0];
        // RECORD_NS is defined at the highest frequency; the language counts
        // cycles at the reference frequency.
        let per_record = super::cycles_for_ns_at(RECORD_NS, ct.max_khz());
        let chunk = |n: u64| Dist::Fixed(per_record * n as f64);
        let mut b = ProgramBuilder::new();
        if self.util >= 100.0 {
            b.repeat(None, |b| {
                b.run(chunk(CHUNK_RECORDS), 0.0).count(RECORDS, CHUNK_RECORDS);
            });
        } else {
            let n = self.burst_records();
            let (full, rest) = (n / CHUNK_RECORDS, n % CHUNK_RECORDS);
            let sleep = Dist::Fixed(self.interval_us as f64 * 1e3);
            b.repeat(None, |b| {
                if full > 0 {
                    b.repeat(Some(full), |b| {
                        b.run(chunk(CHUNK_RECORDS), 0.0).count(RECORDS, CHUNK_RECORDS);
                    });
                }
                if rest > 0 {
                    b.run(chunk(rest), 0.0).count(RECORDS, rest);
                }
                b.sleep(sleep);
            });
        }
        let mut t = TaskSpec::new("ebizzy", b.build());
        t.instances = self.threads as u32;
        t.affinity = self.cpu.map(|c| vec![c as usize]);
        Ok(Setup {
            tasks: vec![t],
            counters: vec!["records".into()],
            ..Setup::default()
        })
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let records = r.counters[RECORDS as usize] as f64;
        let rate = r.per_second(records);
        vec![
            Metric::new("records_per_s", rate, "records/s", Better::Higher),
            Metric::new("records", records, "count", Better::Higher),
        ]
    }

    fn primary(&self) -> &'static str {
        "records_per_s"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        let mut v = vec![
            THREADS.show(self.threads),
            UTIL.show(self.util),
            INTERVAL_US.show(self.interval_us),
            ("burst_records".into(), self.burst_records().to_string()),
        ];
        if let Some(c) = self.cpu {
            v.push(CPU.show(c));
        }
        v
    }
}

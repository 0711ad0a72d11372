//! What a run reports: per-CPU counters as the kernel's sysfs shows them,
//! energy, and the workload's metrics, in the shape of `govlab run --format
//! json`.

pub mod hist;
pub mod idle;

use serde::Serialize;

/// Counters of one idle state on one CPU (cpuidle/stateN/ in sysfs).
#[derive(Debug, Clone, Copy, Default)]
pub struct StateCounters {
    /// Entries (usage).
    pub usage: u64,
    /// Σ residency, exit latency included (time, µs in sysfs; ns here).
    pub time_ns: u64,
    /// Entries whose residency was shorter than the target residency
    /// (too deep), counted when a shallower state was enabled.
    pub above: u64,
    /// Entries after which the first enabled deeper state would have fitted
    /// (too shallow).
    pub below: u64,
    /// Entries the driver refused (none in govlab's drivers yet).
    pub rejected: u64,
}

#[derive(Debug, Clone, Default)]
pub struct CpuIdleCounters {
    pub states: Vec<StateCounters>,
    pub accuracy: IdleAccuracy,
}

impl CpuIdleCounters {
    pub fn new(n: usize) -> Self {
        CpuIdleCounters { states: vec![StateCounters::default(); n], accuracy: IdleAccuracy::default() }
    }
}

/// Idle-state prediction accuracy, as the 2020 weighted-TEO RFC measured it.
///
/// For every idle entry the *ideal* state is the deepest enabled state whose
/// target residency fits the idle time that actually followed (from entry to
/// the wakeup interrupt, exit latency excluded) and whose exit latency fits
/// the latency limit. The chosen state is correct, too deep by k states
/// (the RFC's "undershoot", US-k) or too shallow by k states (its
/// "overshoot", OS-k). Every figure comes with the number of entries it
/// rests on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IdleAccuracy {
    /// Idle entries judged.
    pub samples: u64,
    pub correct: u64,
    /// k → entries whose chosen state was k states deeper than ideal (US-k).
    pub too_deep: std::collections::BTreeMap<u32, u64>,
    /// k → entries whose chosen state was k states shallower than ideal (OS-k).
    pub too_shallow: std::collections::BTreeMap<u32, u64>,
    /// Per chosen state: [samples, correct, too deep, too shallow].
    pub by_state: Vec<[u64; 4]>,
    /// Energy spent beyond the ideal state's by too-shallow choices, J
    /// (difference of the two states' idle power over the idle time).
    pub too_shallow_energy_j: f64,
    /// Wakeup latency added by too-deep choices (exit latency beyond the
    /// ideal state's), µs.
    pub too_deep_latency_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct IdleStateResult {
    pub name: String,
    pub usage: u64,
    pub time_s: f64,
    pub above: u64,
    pub below: u64,
    pub rejected: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuResult {
    pub cpu: usize,
    /// Its core and package (indices, as turbostat's Core and Package).
    pub core: usize,
    pub package: usize,
    /// Time a task was running on the CPU.
    pub busy_s: f64,
    /// Time in idle states, exit latencies included.
    pub idle_s: f64,
    /// The same two in integer ns: busy_ns + idle_ns = the run's duration.
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// kHz → seconds, like cpufreq's stats/time_in_state of the CPU's policy.
    pub time_in_state: std::collections::BTreeMap<u32, f64>,
    /// Frequency changes of the CPU's clock (stats/total_trans where the
    /// policy is the clock).
    pub transitions: u64,
    /// The CPU's clock averaged over its time in C0 (APERF/MPERF, turbostat's
    /// Bzy_MHz), kHz; None if it never left idle.
    pub c0_avg_khz: Option<f64>,
    pub idle_states: Vec<IdleStateResult>,
    pub idle_accuracy: IdleAccuracy,
}

#[derive(Debug, Clone, Serialize)]
pub struct PrimaryMetric {
    pub name: String,
    /// None when the run has no value to give: `missing` says why.
    pub value: Option<f64>,
    pub unit: String,
    pub better: String,
    /// Why `value` is None: `"unfinished"` (the workload ends by itself and
    /// the duration ran out first) or `"no samples"` (a latency of no
    /// events). Absent when there is a value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<&'static str>,
}

/// Every run's wakeup latencies; the figures are absent (null) when there
/// was no wakeup. Percentiles are within
/// [`hist::MAX_RELATIVE_ERROR`] of the exact order statistic.
#[derive(Debug, Clone, Serialize)]
pub struct HistogramResult {
    pub count: u64,
    pub mean_us: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
    /// (lower bound of the bucket in µs, count)
    pub buckets: Vec<(f64, u64)>,
}

/// The result of one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub govlab_version: String,
    pub platform: String,
    pub workload: String,
    pub cpufreq: String,
    pub cpuidle: String,
    /// The kernel as named (`6.8`, `5.4:idle_tick=stopped`; see `kernel`).
    pub kernel: String,
    /// The supported version whose semantics ran, when the named one is
    /// between two (`5.2` for `5.4`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_semantics: Option<String>,
    /// The cpufreq driver and its mode, as the run's header shows it
    /// (`intel_pstate (active, HWP)`, `intel_cpufreq (passive)`, `powernv`,
    /// `cpufreq-dt`; see `cpufreq::driver::CpufreqDriver::describe`).
    pub driver: String,
    pub seed: u64,
    pub duration_s: f64,
    pub sim_time_s: f64,
    pub sim_time_ns: u64,
    pub events: u64,
    /// False only for an *unfinished* run: the workload ends by itself and
    /// the duration ran out before it did (a workload that runs until the
    /// duration always finishes). Its primary metric then has no value.
    pub finished: bool,
    /// How far a workload that ends by itself got, when it knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    pub metrics: serde_json::Map<String, serde_json::Value>,
    pub units: serde_json::Map<String, serde_json::Value>,
    pub primary_metric: PrimaryMetric,
    pub energy_j: f64,
    pub avg_power_w: f64,
    /// The same energy integrated a second way (Σ total power × dt); equals
    /// `energy_j` up to rounding.
    pub energy_check_j: f64,
    /// The packages' RAPL-like domains summed: `package_j` (cores and
    /// uncore) + `dram_j` = `energy_j`.
    pub package_j: f64,
    pub dram_j: f64,
    /// The energy counters the platform has (`platform::POWER_DOMAINS`):
    /// what turbostat (or the OCC) would show of the figures below.
    pub power_domains: Vec<String>,
    /// Per package: its domains, package C-state residencies and uncore clock.
    pub packages: Vec<PackageResult>,
    pub wakeup_latency: HistogramResult,
    pub cpus: Vec<CpuResult>,
    /// The counters turbostat reads, per interval, when the run was asked
    /// for them (`RunConfig::interval_ns`); absent otherwise. The intervals
    /// tile the run, so their figures add up to the whole run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervals: Option<Vec<IntervalResult>>,
    /// The package power of the longer run this one stands for, when the
    /// workload simulates it in shorter parts (netperf's `scored_len`):
    /// machine/power_phases.rs. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scored_power: Option<ScoredPower>,
}

/// The package domain's energy and time of the run a shortened one stands
/// for, each phase weighted as its workload says; `package_w` is their
/// quotient.
#[derive(Debug, Clone, Serialize)]
pub struct ScoredPower {
    pub package_j: f64,
    pub time_s: f64,
    pub package_w: f64,
}

/// What the counters of [`RunResult`] gained over one interval
/// [`start_ns`, `end_ns`) of the run: what turbostat -i prints one table of.
/// Only the counters turbostat reads: busy and idle time, idle-state
/// residencies, time per frequency, the package's C-states and energy.
#[derive(Debug, Clone, Serialize)]
pub struct IntervalResult {
    pub start_ns: u64,
    pub end_ns: u64,
    pub start_s: f64,
    pub end_s: f64,
    pub cpus: Vec<IntervalCpu>,
    pub packages: Vec<IntervalPackage>,
    /// The workload's counters gained over the interval (its transactions,
    /// bytes, operations: the workload's module names them).
    pub counters: Vec<u64>,
    /// Per latency series of the workload: the values recorded in the
    /// interval and their sum.
    pub series: Vec<IntervalSeries>,
}

/// One latency series of the workload over an interval.
#[derive(Debug, Clone, Serialize)]
pub struct IntervalSeries {
    pub count: u64,
    pub sum_ns: f64,
}

/// One CPU's counters over an interval (fields as in [`CpuResult`]).
#[derive(Debug, Clone, Serialize)]
pub struct IntervalCpu {
    pub cpu: usize,
    pub core: usize,
    pub package: usize,
    pub busy_s: f64,
    pub idle_s: f64,
    /// kHz → seconds, of the CPU's policy.
    pub time_in_state: std::collections::BTreeMap<u32, f64>,
    pub idle_states: Vec<StateTime>,
}

/// One package's counters over an interval (fields as in [`PackageResult`]).
#[derive(Debug, Clone, Serialize)]
pub struct IntervalPackage {
    pub package: usize,
    pub package_j: f64,
    pub cores_j: f64,
    pub uncore_j: f64,
    pub dram_j: f64,
    pub pc0_s: f64,
    pub power_limited_s: Option<f64>,
    pub cstates: Vec<StateTime>,
    /// The uncore clock's mean while in PC0 over the interval (None without
    /// an uncore clock or without PC0 time).
    pub uncore_avg_mhz: Option<f64>,
}

/// Entries and residency of one idle or package C-state over an interval
/// (machine/intervals.rs says when an entry counts).
#[derive(Debug, Clone, Serialize)]
pub struct StateTime {
    pub name: String,
    pub usage: u64,
    pub time_s: f64,
}

/// How far a workload that ends by itself got: `done` of `total` `what`
/// (an unfinished run's result says it).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub what: &'static str,
}

/// One package's energy as RAPL-like domains would count it, and its
/// package C-states (turbostat's `Pkg%pcN` are `time_s` over the run).
#[derive(Debug, Clone, Serialize)]
pub struct PackageResult {
    pub package: usize,
    /// The package domain: its cores and its uncore.
    pub package_j: f64,
    /// The cores' part of it (RAPL's PP0 / turbostat's `CorWatt`).
    pub cores_j: f64,
    pub uncore_j: f64,
    pub dram_j: f64,
    /// Time in PC0 (some core not deep enough for any package C-state).
    pub pc0_s: f64,
    pub cstates: Vec<PackageCStateResult>,
    /// Mean uncore clock while in PC0, MHz (absent without an uncore clock
    /// or without time in PC0).
    pub uncore_avg_mhz: Option<f64>,
    /// Time the package's power limit held its clocks below what was asked
    /// or possible (turbostat's `PKG_%` over the run is this over the run's
    /// time; powernv counts such spells as "Power Cap" throttles). Absent
    /// without a power limit.
    pub power_limited_s: Option<f64>,
}

/// Residency of one package C-state.
#[derive(Debug, Clone, Serialize)]
pub struct PackageCStateResult {
    pub name: String,
    pub usage: u64,
    pub time_s: f64,
}

//! What a run reports: per-CPU counters as the kernel's sysfs shows them,
//! energy, and the workload's metrics, in the shape of `govlab run --format
//! json`.

pub mod hist;
pub mod idle;

use serde::Serialize;

use crate::sim::Engine;
use crate::workload::Metric;

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
    /// Time a task was running on the CPU.
    pub busy_s: f64,
    /// Time in idle states, exit latencies included.
    pub idle_s: f64,
    /// The same two in integer ns: busy_ns + idle_ns = the run's duration.
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// kHz → seconds, like cpufreq's stats/time_in_state of the CPU's policy.
    pub time_in_state: std::collections::BTreeMap<u32, f64>,
    /// Frequency changes of the CPU's policy (stats/total_trans).
    pub transitions: u64,
    pub idle_states: Vec<IdleStateResult>,
    pub idle_accuracy: IdleAccuracy,
}

#[derive(Debug, Clone, Serialize)]
pub struct PrimaryMetric {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub better: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistogramResult {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
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
    pub seed: u64,
    pub duration_s: f64,
    pub sim_time_s: f64,
    pub sim_time_ns: u64,
    pub events: u64,
    pub finished: bool,
    pub metrics: serde_json::Map<String, serde_json::Value>,
    pub units: serde_json::Map<String, serde_json::Value>,
    pub primary_metric: PrimaryMetric,
    pub energy_j: f64,
    pub avg_power_w: f64,
    /// The same energy integrated a second way (Σ total power × dt); equals
    /// `energy_j` up to rounding.
    pub energy_check_j: f64,
    pub wakeup_latency: HistogramResult,
    pub cpus: Vec<CpuResult>,
}

fn hist_result(h: &hist::Histogram) -> HistogramResult {
    HistogramResult {
        count: h.count,
        mean_us: h.mean() / 1e3,
        p50_us: h.percentile(50.0) / 1e3,
        p99_us: h.percentile(99.0) / 1e3,
        max_us: h.max as f64 / 1e3,
        buckets: h.buckets().into_iter().map(|(lo, n)| (lo as f64 / 1e3, n)).collect(),
    }
}

impl Engine {
    /// Close all accounting at now and assemble the result.
    pub(crate) fn finish(&mut self) -> crate::error::Result<crate::metrics::RunResult> {
        for cpu in 0..self.rqs.len() {
            self.pause_segment(cpu);
            let rq = &mut self.rqs[cpu];
            if rq.curr.is_some() {
                rq.busy_ns += self.now - rq.busy_since_ns;
                rq.busy_since_ns = self.now;
            }
        }
        self.close_idle();
        self.close_time_in_state();
        let (energy_j, energy_check_j) = self.close_energy();
        if let Some(t) = self.trace.as_mut() {
            // devlib's end marker: the trace spans the whole run.
            t.print(self.now, 0, "TRACE_MARKER_STOP");
            t.flush()?;
        }
        let now = self.now;
        let secs = now as f64 / 1e9;
        self.record.elapsed_ns = now;
        self.record.energy_j = energy_j;
        let metrics: Vec<Metric> = self.workload.metrics(&self.record);
        let primary_name = self.workload.primary().to_string();
        let primary = metrics
            .iter()
            .find(|m| m.name == primary_name)
            .cloned()
            .unwrap_or_else(|| metrics[0].clone());
        let mut mmap = serde_json::Map::new();
        let mut units = serde_json::Map::new();
        for m in &metrics {
            mmap.insert(m.name.clone(), json_f64(m.value));
            units.insert(m.name.clone(), serde_json::Value::String(m.unit.to_string()));
        }
        let cpus = (0..self.rqs.len())
            .map(|cpu| {
                let d = self.plat.cpus[cpu].freq_domain;
                let ct = self.plat.cpu_type_of(cpu);
                let dom = &self.domains[d];
                let idle_ns = self.rqs[cpu].idle_ns;
                CpuResult {
                    cpu,
                    busy_s: self.rqs[cpu].busy_ns as f64 / 1e9,
                    busy_ns: self.rqs[cpu].busy_ns,
                    idle_s: idle_ns as f64 / 1e9,
                    idle_ns,
                    time_in_state: ct
                        .opps
                        .iter()
                        .zip(&dom.time_in_opp_ns)
                        .map(|(o, &ns)| (o.khz, ns as f64 / 1e9))
                        .collect(),
                    transitions: dom.transitions,
                    idle_states: ct
                        .idle_states
                        .iter()
                        .zip(&self.idle_counters[cpu].states)
                        .map(|(s, c)| IdleStateResult {
                            name: s.name.clone(),
                            usage: c.usage,
                            time_s: c.time_ns as f64 / 1e9,
                            above: c.above,
                            below: c.below,
                            rejected: c.rejected,
                        })
                        .collect(),
                    idle_accuracy: self.idle_counters[cpu].accuracy.clone(),
                }
            })
            .collect();
        Ok(RunResult {
            govlab_version: crate::VERSION.to_string(),
            platform: String::new(),
            workload: String::new(),
            cpufreq: String::new(),
            cpuidle: String::new(),
            seed: self.seed,
            duration_s: self.end_ns as f64 / 1e9,
            sim_time_s: secs,
            sim_time_ns: now,
            events: self.events,
            finished: self.record.finished,
            metrics: mmap,
            units,
            primary_metric: PrimaryMetric {
                name: primary.name,
                value: primary.value,
                unit: primary.unit.to_string(),
                better: primary.better.as_str().to_string(),
            },
            energy_j,
            avg_power_w: if secs > 0.0 { energy_j / secs } else { 0.0 },
            energy_check_j,
            wakeup_latency: hist_result(&self.record.wakeup_latency),
            cpus,
        })
    }
}

/// JSON has no NaN or infinity: such values become null.
fn json_f64(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

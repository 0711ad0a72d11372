//! Collection at the end of a run: open accounting periods are closed and
//! the engine's counters become a [`RunResult`], in the shape sysfs shows
//! them (cpufreq stats' time_in_state and total_trans, cpuidle's per-state
//! usage/time/above/below).

use super::Engine;
use crate::workload::Metric;
use crate::metrics::{
    hist, CpuResult, HistogramResult, IdleStateResult, PackageCStateResult, PackageResult, PrimaryMetric, RunResult,
};

fn hist_result(h: &hist::Histogram) -> HistogramResult {
    HistogramResult {
        count: h.count,
        mean_us: (h.count > 0).then(|| h.mean() / 1e3),
        p50_us: (h.count > 0).then(|| h.percentile(50.0) / 1e3),
        p99_us: (h.count > 0).then(|| h.percentile(99.0) / 1e3),
        max_us: (h.count > 0).then(|| h.max as f64 / 1e3),
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
        let primary_name = self.workload.primary();
        let primary = metrics
            .iter()
            .find(|m| m.name == primary_name)
            .unwrap_or_else(|| panic!("the workload reports no metric {primary_name}, its primary"))
            .clone();
        // A workload that ends by itself and has not: its primary metric
        // (the time so far, or a rate over part of the work) is no result.
        let finished = self.record.finished || !self.workload.ends_by_itself();
        let missing = if !finished {
            Some("unfinished")
        } else if primary.value.is_none() {
            Some("no samples")
        } else {
            None
        };
        let mut mmap = serde_json::Map::new();
        let mut units = serde_json::Map::new();
        for m in &metrics {
            let Some(value) = m.value else { continue };
            if !finished && m.name == primary.name {
                continue;
            }
            mmap.insert(m.name.clone(), json_f64(value));
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
                    core: self.plat.cpus[cpu].core,
                    package: self.plat.cpus[cpu].package,
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
                    c0_avg_khz: self.aperf[cpu].avg_khz(),
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
        let packages: Vec<PackageResult> = (0..self.plat.packages.len()).map(|p| self.package_result(p)).collect();
        let intervals = self.interval_results();
        let scored_power = self.scored_power();
        Ok(RunResult {
            govlab_version: crate::VERSION.to_string(),
            platform: String::new(),
            workload: String::new(),
            cpufreq: String::new(),
            cpuidle: String::new(),
            kernel: self.kernel.spec.to_text(),
            kernel_semantics: self.kernel.resolved_elsewhere().then(|| self.kernel.version.to_string()),
            driver: self.cpufreq_driver.describe(self.hwp, self.cpufreq.as_ref()),
            seed: self.seed,
            duration_s: self.end_ns as f64 / 1e9,
            sim_time_s: secs,
            sim_time_ns: now,
            events: self.events,
            finished,
            progress: if finished { None } else { self.workload.progress(&self.record) },
            metrics: mmap,
            units,
            primary_metric: PrimaryMetric {
                name: primary.name,
                value: if missing.is_some() { None } else { primary.value },
                unit: primary.unit.to_string(),
                better: primary.better.as_str().to_string(),
                missing,
            },
            energy_j,
            avg_power_w: if secs > 0.0 { energy_j / secs } else { 0.0 },
            energy_check_j,
            package_j: packages.iter().map(|p| p.package_j).sum(),
            dram_j: packages.iter().map(|p| p.dram_j).sum(),
            power_domains: self.plat.power_domains.clone(),
            packages,
            wakeup_latency: hist_result(&self.record.wakeup_latency),
            cpus,
            intervals,
            scored_power,
        })
    }
}

impl Engine {
    fn package_result(&self, pkg: usize) -> PackageResult {
        let (cores_j, uncore_j, dram_j) = self.package_domains_j(pkg);
        let pe = &self.pkg_energy[pkg];
        PackageResult {
            package: pkg,
            package_j: cores_j + uncore_j,
            cores_j,
            uncore_j,
            dram_j,
            pc0_s: pe.pc0_ns as f64 / 1e9,
            cstates: self.plat.packages[pkg]
                .cstates
                .iter()
                .enumerate()
                .map(|(i, c)| PackageCStateResult {
                    name: c.name.clone(),
                    usage: pe.entries.get(i).copied().unwrap_or(0),
                    time_s: pe.residency_ns.get(i).copied().unwrap_or(0) as f64 / 1e9,
                })
                .collect(),
            uncore_avg_mhz: (self.plat.packages[pkg].uncore.is_some() && pe.pc0_ns > 0)
                .then(|| pe.uncore_khz_ns / pe.pc0_ns as f64 / 1000.0),
            power_limited_s: self.plat.packages[pkg]
                .power_limit
                .is_some()
                .then(|| self.power_limited_ns(pkg) as f64 / 1e9),
        }
    }
}

/// JSON has no NaN or infinity: such values become null.
fn json_f64(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

//! Counters per interval, for `turbostat -i` (`--turbostat-interval`).
//!
//! turbostat reads its counters (TSC, APERF, the core and package C-state
//! residency MSRs, the RAPL energy MSRs) at the start and end of each
//! interval and prints the differences. The engine does the same: at every
//! interval boundary it takes a snapshot of the cumulative counters it
//! keeps, and at the end of the run each interval is the difference of two
//! snapshots, the last being the run's final counters. The intervals
//! therefore add up to the whole run exactly (up to float rounding of the
//! energies).
//!
//! Power and every state are constant between events, so a snapshot at a
//! boundary is read from the state after the last event at or before it:
//! each open ledger (a core's energy, a package's uncore and DRAM, a
//! frequency domain's time at its clock, a package's C-state) is extended
//! to the boundary without being closed, so a run with snapshots takes the
//! same path as one without.
//!
//! An idle state's entries (`usage`) count in the interval where they end,
//! as the kernel's `usage` does; a package C-state's where they begin, as
//! the run's; the uncore clock is its mean over the interval's PC0 time, as
//! the run's `uncore_avg_mhz`.
//!
//! Two counters are not causal and are placed when known:
//! * **Idle-state residency.** An idle period's state is known when it ends
//!   (at once for most governors, in hindsight for the oracle), so a
//!   period is added to every snapshot it straddles when it closes; a
//!   snapshot counts closed periods only until then.
//! * **The oracle's energy.** A stretch priced provisionally is corrected
//!   when the oracle chooses (machine/energy.rs); the correction falls in
//!   the interval where the choice is made.
//!
//! The workload's counters and latency series (how many values and their
//! sum) are read at the boundaries too: what a benchmark's own progress
//! output shows per interval (pgbench's `--aggregate-interval` log, dbench's
//! per-second lines), from which a caller takes within-run samples. Asked
//! for those alone ([`Engine::keep_workload_intervals`]), the engine leaves
//! out the per-CPU counters: hundreds of intervals of an 80-CPU machine are
//! then a few kilobytes, not megabytes.
//!
//! Off unless asked: the event loop then compares each event's time with a
//! boundary that never comes.

use super::Engine;
use crate::metrics::{IntervalCpu, IntervalPackage, IntervalResult, IntervalSeries, StateTime};
use crate::sim::Time;

/// The cumulative counters at one instant.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    t_ns: Time,
    /// Per CPU: time running a task.
    busy_ns: Vec<u64>,
    /// Per CPU, per idle state: residency of the closed idle periods (and,
    /// once they close, of those still open at `t_ns`, up to `t_ns`).
    idle_ns: Vec<Vec<u64>>,
    /// Per CPU, per idle state: entries ended (the kernel's `usage`).
    idle_usage: Vec<Vec<u64>>,
    /// Per frequency domain, per OPP: time at that clock.
    opp_ns: Vec<Vec<u64>>,
    /// Per package: its cores', uncore and DRAM energy, mJ.
    cores_mj: Vec<f64>,
    uncore_mj: Vec<f64>,
    dram_mj: Vec<f64>,
    /// Per package: time in PC0, and in each package C-state.
    pc0_ns: Vec<u64>,
    pc_ns: Vec<Vec<u64>>,
    /// Per package: entries into each package C-state.
    pc_entries: Vec<Vec<u64>>,
    /// Per package: the uncore clock integrated over PC0, kHz·ns.
    uncore_khz_ns: Vec<f64>,
    /// Per package: time its power limit held a ceiling.
    limited_ns: Vec<u64>,
    /// The workload's counters (`Record::counters`).
    counters: Vec<u64>,
    /// Per latency series of the workload: values recorded and their sum, ns.
    series: Vec<(u64, u128)>,
}

/// The snapshots of a run asked for intervals.
#[derive(Debug, Clone)]
pub(crate) struct Intervals {
    pub(crate) interval_ns: Time,
    /// The next boundary.
    next_ns: Time,
    snaps: Vec<Snapshot>,
    /// Whether the per-CPU counters are kept (not for the workload's alone).
    cpus: bool,
}

impl Intervals {
    pub(crate) fn new(interval_ns: Time, cpus: bool) -> Self {
        Intervals { interval_ns, next_ns: Time::MAX, snaps: Vec::new(), cpus }
    }

    /// An idle period of `cpu` in `state`, from `entry_ns` to `end_ns`, has
    /// closed: the part of it before each boundary it straddles joins that
    /// boundary's snapshot.
    fn idle_closed(&mut self, cpu: usize, state: usize, entry_ns: Time, end_ns: Time) {
        for s in self.snaps.iter_mut().rev() {
            if s.t_ns <= entry_ns {
                break;
            }
            s.idle_ns[cpu][state] += s.t_ns.min(end_ns) - entry_ns;
        }
    }
}

impl Engine {
    /// Keep the counters per interval of `interval_ns` (> 0) from now on.
    pub fn keep_intervals(&mut self, interval_ns: Time) {
        self.start_intervals(Intervals::new(interval_ns, true));
    }

    /// Keep only the workload's counters and the packages' per interval of
    /// `interval_ns` (> 0): each interval's `cpus` is empty.
    pub fn keep_workload_intervals(&mut self, interval_ns: Time) {
        self.start_intervals(Intervals::new(interval_ns, false));
    }

    fn start_intervals(&mut self, mut iv: Intervals) {
        assert!(iv.interval_ns > 0, "an interval of 0 ns");
        iv.next_ns = self.now + iv.interval_ns;
        self.next_boundary_ns = iv.next_ns.min(self.next_phase_ns());
        self.intervals = Some(Box::new(iv));
    }

    /// Every interval boundary and power phase start (machine/power_phases.rs)
    /// before `t`, the time of the next event.
    #[cold]
    #[inline(never)]
    pub(crate) fn cross_boundaries(&mut self, t: Time) {
        self.take_snapshots(t);
        self.start_phases(t);
        let next_interval = self.intervals.as_ref().map_or(Time::MAX, |iv| iv.next_ns);
        self.next_boundary_ns = next_interval.min(self.next_phase_ns());
    }

    /// Snapshots at every interval boundary before `t`.
    fn take_snapshots(&mut self, t: Time) {
        loop {
            let Some(b) = self.intervals.as_ref().map(|iv| iv.next_ns) else { return };
            if b >= t || b >= self.end_ns {
                return;
            }
            let snap = self.snapshot(b);
            let Some(iv) = self.intervals.as_mut() else { return };
            iv.snaps.push(snap);
            iv.next_ns += iv.interval_ns;
        }
    }

    /// An idle period has closed (machine/idle.rs): see [`Intervals::idle_closed`].
    #[inline]
    pub(crate) fn interval_idle_closed(&mut self, cpu: usize, state: usize, entry_ns: Time) {
        if self.intervals.is_some() {
            self.place_idle_period(cpu, state, entry_ns);
        }
    }

    #[cold]
    #[inline(never)]
    fn place_idle_period(&mut self, cpu: usize, state: usize, entry_ns: Time) {
        let now = self.now;
        if let Some(iv) = self.intervals.as_mut().filter(|iv| iv.cpus) {
            iv.idle_closed(cpu, state, entry_ns, now);
        }
    }

    /// The cumulative counters at `t` (no earlier than the last event).
    fn snapshot(&self, t: Time) -> Snapshot {
        let mut snap = if self.intervals.as_ref().is_some_and(|iv| iv.cpus) {
            self.cpu_snapshot(t)
        } else {
            Snapshot { t_ns: t, ..Snapshot::default() }
        };
        let core_mj = |c: usize| {
            let ce = &self.cores[c];
            ce.energy_mj + ce.power_mw * (t - ce.since_ns) as f64 * 1e-9
        };
        for (p, pe) in self.plat.packages.iter().zip(&self.pkg_energy) {
            let dt = t - pe.since_ns;
            snap.cores_mj.push(p.cores.iter().map(|&c| core_mj(c)).sum());
            snap.uncore_mj.push(pe.uncore_mj + pe.uncore_mw * dt as f64 * 1e-9);
            snap.dram_mj.push(pe.dram_mj + pe.dram_mw * dt as f64 * 1e-9);
            let mut pc = pe.residency_ns.clone();
            pc.resize(p.cstates.len(), 0);
            let mut pc0 = pe.pc0_ns;
            let mut khz_ns = pe.uncore_khz_ns;
            match pe.state {
                Some(s) => pc[s] += dt,
                None => {
                    pc0 += dt;
                    khz_ns += f64::from(pe.uncore_khz) * dt as f64;
                }
            }
            let mut entries = pe.entries.clone();
            entries.resize(p.cstates.len(), 0);
            snap.pc0_ns.push(pc0);
            snap.pc_ns.push(pc);
            snap.pc_entries.push(entries);
            snap.uncore_khz_ns.push(khz_ns);
        }
        snap.limited_ns = (0..self.packages.len()).map(|p| self.power_limited_ns_at(p, t)).collect();
        snap.counters = self.record.counters.clone();
        snap.series = self.record.series.iter().map(|h| (h.count, h.sum)).collect();
        snap
    }

    /// The per-CPU counters at `t`: busy and idle time, idle entries, time per clock.
    fn cpu_snapshot(&self, t: Time) -> Snapshot {
        let busy_ns = self
            .rqs
            .iter()
            .map(|rq| rq.busy_ns + if rq.curr.is_some() { t - rq.busy_since_ns } else { 0 })
            .collect();
        let idle_ns = self.idle_counters.iter().map(|c| c.states.iter().map(|s| s.time_ns).collect()).collect();
        let idle_usage = self.idle_counters.iter().map(|c| c.states.iter().map(|s| s.usage).collect()).collect();
        let opp_ns = self
            .domains
            .iter()
            .map(|d| {
                let mut v = d.time_in_opp_ns.clone();
                v[d.cur_opp] += t - d.since_ns;
                v
            })
            .collect();
        Snapshot { t_ns: t, busy_ns, idle_ns, idle_usage, opp_ns, ..Snapshot::default() }
    }

    /// The intervals of the run, once every counter is closed at the end
    /// (machine/metrics.rs); None when none were asked for.
    pub(crate) fn interval_results(&mut self) -> Option<Vec<IntervalResult>> {
        self.intervals.as_ref()?;
        let last = self.snapshot(self.now);
        self.intervals.as_mut()?.snaps.push(last);
        let zero = Snapshot {
            busy_ns: vec![0; self.rqs.len()],
            idle_ns: self.idle_counters.iter().map(|c| vec![0; c.states.len()]).collect(),
            idle_usage: self.idle_counters.iter().map(|c| vec![0; c.states.len()]).collect(),
            opp_ns: self.domains.iter().map(|d| vec![0; d.time_in_opp_ns.len()]).collect(),
            cores_mj: vec![0.0; self.pkg_energy.len()],
            uncore_mj: vec![0.0; self.pkg_energy.len()],
            dram_mj: vec![0.0; self.pkg_energy.len()],
            pc0_ns: vec![0; self.pkg_energy.len()],
            pc_ns: self.plat.packages.iter().map(|p| vec![0; p.cstates.len()]).collect(),
            pc_entries: self.plat.packages.iter().map(|p| vec![0; p.cstates.len()]).collect(),
            uncore_khz_ns: vec![0.0; self.pkg_energy.len()],
            limited_ns: vec![0; self.pkg_energy.len()],
            counters: vec![0; self.record.counters.len()],
            series: vec![(0, 0); self.record.series.len()],
            t_ns: 0,
        };
        let snaps = &self.intervals.as_ref()?.snaps;
        let out = std::iter::once(&zero)
            .chain(snaps)
            .zip(snaps)
            .map(|(a, b)| self.interval_result(a, b))
            .collect();
        Some(out)
    }

    /// The counters gained from snapshot `a` to snapshot `b`.
    fn interval_result(&self, a: &Snapshot, b: &Snapshot) -> IntervalResult {
        let s = |ns: u64| ns as f64 / 1e9;
        let kept = if self.intervals.as_ref().is_some_and(|iv| iv.cpus) { self.rqs.len() } else { 0 };
        let cpus = (0..kept)
            .map(|cpu| {
                let pc = &self.plat.cpus[cpu];
                let ct = self.plat.cpu_type_of(cpu);
                let d = pc.freq_domain;
                let idle: Vec<u64> = b.idle_ns[cpu].iter().zip(&a.idle_ns[cpu]).map(|(y, x)| y - x).collect();
                IntervalCpu {
                    cpu,
                    core: pc.core,
                    package: pc.package,
                    busy_s: s(b.busy_ns[cpu] - a.busy_ns[cpu]),
                    idle_s: s(idle.iter().sum()),
                    time_in_state: ct
                        .opps
                        .iter()
                        .enumerate()
                        .map(|(i, o)| (o.khz, s(b.opp_ns[d][i] - a.opp_ns[d][i])))
                        .collect(),
                    idle_states: ct
                        .idle_states
                        .iter()
                        .zip(&idle)
                        .enumerate()
                        .map(|(i, (st, &ns))| StateTime {
                            name: st.name.clone(),
                            usage: b.idle_usage[cpu][i] - a.idle_usage[cpu][i],
                            time_s: s(ns),
                        })
                        .collect(),
                }
            })
            .collect();
        let packages = self
            .plat
            .packages
            .iter()
            .enumerate()
            .map(|(p, pk)| {
                let cores_j = (b.cores_mj[p] - a.cores_mj[p]) / 1000.0;
                let uncore_j = (b.uncore_mj[p] - a.uncore_mj[p]) / 1000.0;
                let pc0_ns = b.pc0_ns[p] - a.pc0_ns[p];
                IntervalPackage {
                    package: p,
                    package_j: cores_j + uncore_j,
                    cores_j,
                    uncore_j,
                    dram_j: (b.dram_mj[p] - a.dram_mj[p]) / 1000.0,
                    pc0_s: s(pc0_ns),
                    power_limited_s: pk.power_limit.is_some().then(|| s(b.limited_ns[p] - a.limited_ns[p])),
                    cstates: pk
                        .cstates
                        .iter()
                        .enumerate()
                        .map(|(i, c)| StateTime {
                            name: c.name.clone(),
                            usage: b.pc_entries[p][i] - a.pc_entries[p][i],
                            time_s: s(b.pc_ns[p][i] - a.pc_ns[p][i]),
                        })
                        .collect(),
                    uncore_avg_mhz: (pk.uncore.is_some() && pc0_ns > 0)
                        .then(|| (b.uncore_khz_ns[p] - a.uncore_khz_ns[p]) / pc0_ns as f64 / 1000.0),
                }
            })
            .collect();
        let counters = b.counters.iter().zip(&a.counters).map(|(y, x)| y - x).collect();
        let series = b
            .series
            .iter()
            .zip(&a.series)
            .map(|(&(n1, s1), &(n0, s0))| IntervalSeries { count: n1 - n0, sum_ns: (s1 - s0) as f64 })
            .collect();
        IntervalResult { start_ns: a.t_ns, end_ns: b.t_ns, start_s: s(a.t_ns), end_s: s(b.t_ns), cpus, packages, counters, series }
    }
}

//! Energy-Aware Scheduling: where a waking task goes on a big.LITTLE
//! machine with an Energy Model, and the overutilized switch back to the
//! load balancer.
//!
//! Models: Linux v5.0 and v6.8 mainline, kernel/sched/fair.c
//! (find_energy_efficient_cpu, compute_energy, cpu_util_next / cpu_util,
//! eenv_pd_busy_time, eenv_pd_max_util, cpu_overutilized,
//! update_overutilized_status, the overutilized test of
//! find_busiest_group) and kernel/sched/topology.c (build_perf_domains,
//! sched_is_eas_possible), with the eras between them that
//! `kernel/eas.rs` names. The Energy Model is `sched/energy_model.rs`.
//!
//! The idea. On a machine whose CPUs differ in capacity, with an Energy
//! Model for every CPU and schedutil on every policy (so that the model's
//! guess of each domain's frequency is the frequency it will run at), a
//! waking task goes where the model says the machine spends least energy:
//!
//! 1. Conditions (build_perf_domains): asymmetric capacities, no SMT, an EM
//!    for every CPU, schedutil, `sched_energy_aware` on. Else none of this
//!    runs and placement is `capacity.rs`'s.
//! 2. The root domain is *overutilized* as soon as one CPU's utilisation
//!    does not fit it with 20 % headroom (fits_capacity, the 1280/1024
//!    margin; from v6.2 with the runqueue's clamps, util_fits_cpu). It is
//!    set at enqueue and at the tick (update_overutilized_status), and
//!    recomputed over every CPU only when the load balancer balances the
//!    top domain (update_sd_lb_stats with `!env->sd->parent`): by a busy
//!    CPU once its balance_interval (the domain's weight in ms, doubled
//!    up to twice that while balanced) × busy_factor (32; 16 from v5.10,
//!    6e7499135db7) has passed, and only if it is its cluster's balancing
//!    CPU (should_we_balance: the first idle CPU, else the first); by an
//!    idle CPU at its own tick or through the idle load balancer
//!    (nohz_idle_balance), without the busy factor; and by a newidle walk
//!    that pulls nothing in its cluster. While it is set, wakeups go
//!    through select_idle_sibling as before; while it is clear, wakeups go
//!    through find_energy_efficient_cpu and the load balancer does nothing.
//! 3. find_energy_efficient_cpu: a task with no utilisation stays on its
//!    previous CPU. Otherwise, in each performance domain, of the allowed
//!    CPUs the task would fit, the previous CPU and the one with the most
//!    spare capacity are candidates; each candidate's energy is estimated
//!    (compute_energy: the domain's utilisation with the task placed
//!    there, its busiest CPU giving the frequency, em_cpu_energy), and
//!    the cheapest wins.
//!    - v5.0: the whole machine's energy per candidate; the winner must
//!      save more than 1/16 of the previous CPU's energy.
//!    - v5.4 (eb92692b2544): each candidate's domain only, as a delta over
//!      that domain's energy without the task; the 1/16 margin is taken of
//!      prev's delta plus the machine's base energy.
//!    - v6.0 (b812fc9768e0, 3e8c6c9aac42): no margin; the domain's busy
//!      time (capped at its capacity) and the task's are kept apart; v6.2
//!      ranks candidates by util_fits_cpu (fits, or fits but below its
//!      util_min); v6.5 (7d0583cf9ec7) lets the busiest CPU's
//!      runnable_avg raise its utilisation, as schedutil does (util_est too
//!      until v6.6, c2e164ac33f7); v6.8 (9c0b4bb7f630) adds schedutil's
//!      headroom and the clamps to the busiest CPU before the model.
//!
//! Left out: thermal pressure and RT/IRQ pressure on capacity
//! (capacity_of is the CPU's capacity, as in `capacity.rs`),
//! EM_MAX_COMPLEXITY (the boards are small), of the top domain's balance
//! interval its reset to the minimum only as "overutilized" (the kernel's
//! when find_busiest_group finds an imbalance) and v5.0's nohz kick when
//! two CPUs of the LLC are busy (v5.1 skips it on asymmetric machines),
//! wake_affine and WF_CURRENT_CPU, and v5.x's memory of
//! an idle runqueue's last util_max (UCLAMP_FLAG_IDLE: an idle runqueue has
//! the waking task's clamps here).

use super::placement::next_balance_interval_ms;
use super::Engine;
use crate::cpufreq::CpufreqGovernor;
use crate::kernel::{EraId, KernelConfig};
use crate::platform::{CpuId, Platform};
use crate::sched::capacity::util_fits_cpu;
use crate::sched::energy_model::{self, PerfDomain, PowerUnit};
use crate::sched::pelt;
use crate::sched::TaskId;

/// v5.0's `capacity_margin` and v5.3+'s fits_capacity(): 1280/1024.
const CAPACITY_MARGIN: u64 = crate::sched::capacity::FITS_MARGIN_NUM;
/// SCHED_CAPACITY_SCALE.
const SCALE: u64 = 1024;

/// EAS's state on a machine where it can run: the root domain's
/// performance domains, its overutilized flag, and the kernel's eras.
#[derive(Debug, Clone)]
pub(crate) struct Eas {
    /// rd->pd, in list order.
    pub(crate) pds: Vec<PerfDomain>,
    /// rd->overutilized.
    pub(crate) overutilized: bool,
    /// rd->overload: set when a runqueue reaches two tasks, and set or
    /// cleared with rd->overutilized at the top domain (newidle balance's
    /// gate; `Engine::overloaded` is the runqueues overloaded now).
    pub(crate) overload: bool,
    /// Per CPU, its top domain's sd->last_balance (jiffies) and
    /// sd->balance_interval (ms).
    top_last_j: Vec<u64>,
    top_interval_ms: Vec<u64>,
    /// The top domain's weight: its min_interval, and half its
    /// max_interval (sd_init()).
    top_weight: u64,
    pd_delta: bool,
    no_margin: bool,
    freq_uclamp: bool,
    fits_uclamp: bool,
    util_fits_cpu: bool,
    headroom_in_sugov: bool,
    max_util_boost: Boost,
}

/// What cpu_util()'s `boost` argument raises to the runqueue's
/// runnable_avg: nothing before v6.5; util_avg and util_est in v6.5
/// (7d0583cf9ec7); util_avg alone from v6.6 (c2e164ac33f7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Boost {
    None,
    UtilAndEst,
    Util,
}

impl Eas {
    /// build_perf_domains(): EAS for this run, or None where one of its
    /// conditions fails (the run then places as before, bit for bit).
    pub(crate) fn build(plat: &Platform, kernel: &KernelConfig, cpufreq: &dyn CpufreqGovernor, asym: bool) -> Option<Eas> {
        if why_off(plat, kernel, cpufreq.name(), asym).is_some() {
            return None;
        }
        let unit = if kernel.em_microwatts() { PowerUnit::Microwatts } else { PowerUnit::Milliwatts };
        let pds = energy_model::build(plat, unit)?;
        Some(Eas {
            pds,
            overutilized: false,
            overload: false,
            top_last_j: vec![0; plat.cpus.len()],
            top_interval_ms: vec![plat.cpus.len() as u64; plat.cpus.len()],
            top_weight: plat.cpus.len() as u64,
            pd_delta: kernel.eas_pd_delta(),
            no_margin: kernel.eas_no_margin(),
            freq_uclamp: kernel.eas_uclamp(),
            fits_uclamp: kernel.eas_fits_uclamp(),
            util_fits_cpu: kernel.util_fits_cpu(),
            headroom_in_sugov: kernel.eas_headroom_in_sugov(),
            max_util_boost: if !kernel.has(EraId::SchedutilRunnableBoost) {
                Boost::None
            } else if kernel.has(EraId::EasUtilEstUnboosted) {
                Boost::Util
            } else {
                Boost::UtilAndEst
            },
        })
    }
}

/// Why EAS does not run on `plat` under `kernel` with cpufreq governor
/// `governor` (sched_is_eas_possible() and build_perf_domains(), v6.8);
/// None when it does. `asym`: the CPUs' capacities differ.
pub(crate) fn why_off(plat: &Platform, kernel: &KernelConfig, governor: &str, asym: bool) -> Option<String> {
    if !asym {
        return Some("the CPUs all have one capacity".into());
    }
    if plat.cpu_types.iter().any(|t| t.dynamic_power_coefficient.is_none()) {
        return Some("no Energy Model (no dynamic-power-coefficient)".into());
    }
    if plat.cpus.iter().any(|c| !c.siblings.is_empty()) {
        return Some("SMT is on".into());
    }
    if !kernel.eas() {
        return Some(format!("kernel {} has no EAS (from v5.0)", kernel.version));
    }
    if !kernel.sched_energy_aware() {
        return Some("sched_energy_aware=off".into());
    }
    if governor != "schedutil" {
        return Some(format!("the cpufreq governor is {governor}, not schedutil"));
    }
    None
}

/// What `--show-config` says of EAS on a platform with an Energy Model
/// and asymmetric capacities (None elsewhere: there is nothing to say).
#[must_use]
pub fn shown(plat: &Platform, kernel: &KernelConfig, governor: &str) -> Option<String> {
    let caps: Vec<u64> = (0..plat.nr_cpus()).map(|c| u64::from(plat.cpu_type_of(c).capacity)).collect();
    let asym = crate::sched::capacity::asym_cpucap(&caps);
    if !asym || plat.cpu_types.iter().any(|t| t.dynamic_power_coefficient.is_none()) {
        return None;
    }
    Some(match why_off(plat, kernel, governor, asym) {
        Some(why) => format!("off: {why}"),
        None => "on".into(),
    })
}

/// The Energy Model as `govlab list platforms` and `--show-config` show
/// it: one line per performance domain (None without one).
#[must_use]
pub fn describe_em(plat: &Platform, kernel: &KernelConfig) -> Option<Vec<String>> {
    let unit = if kernel.em_microwatts() { PowerUnit::Microwatts } else { PowerUnit::Milliwatts };
    let pds = energy_model::build(plat, unit)?;
    let sym = match unit {
        PowerUnit::Milliwatts => "mW",
        PowerUnit::Microwatts => "µW",
    };
    Some(
        pds.iter()
            .rev()
            .map(|pd| {
                let cpus: Vec<String> = pd.cpus.iter().map(ToString::to_string).collect();
                let states: Vec<String> = pd.table.iter().map(|s| format!("{} MHz {} {sym} cost {}", s.frequency_khz / 1000, s.power, s.cost)).collect();
                format!("CPUs {} (capacity {}): {}", cpus.join(","), pd.scale_cpu, states.join("; "))
            })
            .collect(),
    )
}

/// The waking task as find_energy_efficient_cpu sees it, after
/// sync_entity_load_avg().
#[derive(Debug, Clone, Copy)]
struct Waking {
    /// task_cpu(p): the previous CPU.
    cpu: CpuId,
    /// task_util(p).
    util: u64,
    /// _task_util_est(p).
    util_est: u64,
    /// uclamp_eff_value(p, UCLAMP_MIN / UCLAMP_MAX).
    uclamp_min: u64,
    uclamp_max: u64,
}

/// sugov_effective_cpu_perf() (v6.8): 25 % headroom, within [min, max].
fn effective_cpu_perf(actual: u64, min: u64, max: u64) -> u64 {
    if actual >= max {
        return max;
    }
    let perf = (actual + (actual >> 2)).min(max);
    perf.max(min)
}

impl Engine {
    /// Whether EAS places wakeups now (sched_energy_enabled() and the root
    /// domain not overutilized).
    #[inline]
    fn eas_active(&self) -> bool {
        self.eas.as_ref().is_some_and(|e| !e.overutilized)
    }

    /// find_busiest_group()'s EAS test: with an Energy Model and no CPU
    /// overutilized, the load balancer finds the machine balanced.
    #[inline]
    pub(crate) fn eas_balanced(&self) -> bool {
        self.eas_active()
    }

    /// The waking task after sync_entity_load_avg() against its previous
    /// runqueue (on a copy: migrate_task_rq_fair syncs the task itself).
    fn waking(&self, t: TaskId) -> Waking {
        let tk = &self.tasks[t];
        let mut avg = tk.avg.clone();
        pelt::sync_entity_div(&self.rqs[tk.cpu].cfs, &mut avg, tk.weight, self.pelt.divider);
        Waking {
            cpu: tk.cpu,
            util: avg.util_avg,
            util_est: u64::from(self.util_est_form.task_est(&avg)),
            uclamp_min: u64::from(tk.uclamp_min),
            uclamp_max: u64::from(tk.uclamp_max),
        }
    }

    /// cpu_util_next() (v5.0) / cpu_util(cpu, p, dst, boost) (v6.8): CPU
    /// `cpu`'s CFS utilisation if `p` ran on `dst` (None: nowhere); a
    /// `boost` lets the runqueue's runnable_avg raise it first, as
    /// schedutil's own reading does (cpu_util_cfs_boost).
    fn cpu_util_next(&self, cpu: CpuId, p: &Waking, dst: Option<CpuId>, boost: Boost) -> u64 {
        let cfs = &self.rqs[cpu].cfs;
        let runnable = if boost == Boost::None { 0 } else { cfs.avg.runnable_avg };
        let mut util = cfs.avg.util_avg.max(runnable);
        if p.cpu == cpu && dst != Some(cpu) {
            util = util.saturating_sub(p.util);
        } else if p.cpu != cpu && dst == Some(cpu) {
            util += p.util;
        }
        if self.util_est {
            let mut est = u64::from(cfs.util_est);
            if boost == Boost::UtilAndEst {
                est = est.max(runnable);
            }
            if dst == Some(cpu) {
                est += p.util_est;
            }
            util = util.max(est);
        }
        util.min(self.rqs[cpu].capacity)
    }

    /// schedutil_cpu_util(ENERGY_UTIL) (v5.x) / effective_cpu_util(cpu,
    /// util, NULL, NULL) (v6.8): CFS plus RT and DL, capped.
    fn energy_util(&self, cpu: CpuId, util_cfs: u64) -> u64 {
        self.effective_cpu_util(cpu, util_cfs).0
    }

    /// The clamps the runqueue of `cpu` would have with `p` on it
    /// (uclamp_rq_util_with's bounds; an idle runqueue takes p's).
    fn clamps_with(&self, cpu: CpuId, p: &Waking) -> (u64, u64) {
        if self.rqs[cpu].nr_running == 0 {
            return (p.uclamp_min, p.uclamp_max);
        }
        let (lo, hi) = self.uclamp_rq(cpu);
        (lo.max(p.uclamp_min), hi.max(p.uclamp_max))
    }

    /// The busiest-CPU utilisation the domain's frequency follows, for CPU
    /// `cpu` with CFS utilisation `util_cfs` (`with_p`: p is placed on it).
    /// v5.0: the energy utilisation; v5.3 (schedutil_cpu_util's
    /// FREQUENCY_UTIL): clamped, the top while RT runs without uclamp, DL
    /// bandwidth instead of its average; v6.8 (eenv_pd_max_util):
    /// effective_cpu_util's bounds with p's clamps, plus schedutil's
    /// headroom.
    fn freq_util(&self, eas: &Eas, cpu: CpuId, util_cfs: u64, p: &Waking, with_p: bool) -> u64 {
        let cap = self.rqs[cpu].capacity;
        if !eas.freq_uclamp {
            return self.energy_util(cpu, util_cfs);
        }
        if eas.headroom_in_sugov {
            let (util, mut min, mut max) = self.effective_cpu_util(cpu, util_cfs);
            if with_p && self.uclamp_used {
                min = min.max(p.uclamp_min);
                max = if self.rqs[cpu].nr_running == 0 { p.uclamp_max } else { max.max(p.uclamp_max) };
            }
            return effective_cpu_perf(util, min, max);
        }
        let rq = &self.rqs[cpu];
        if !self.uclamp_used && rq.rt_nr_running > 0 && !rq.rt_throttled {
            return cap;
        }
        let mut util = util_cfs + rq.avg_rt.util_avg;
        if self.uclamp_used {
            let (lo, hi) = if with_p { self.clamps_with(cpu, p) } else { self.uclamp_rq(cpu) };
            util = util.clamp(lo.min(hi), hi);
        }
        if util >= cap {
            return cap;
        }
        (util + crate::sched::deadline::cpu_bw_dl(rq.running_bw)).min(cap)
    }

    /// compute_energy() over domain `pd` (v5.0 sums it over every domain)
    /// with p on `dst` (None: p's utilisation counted nowhere).
    fn pd_energy(&self, eas: &Eas, pd: &PerfDomain, p: &Waking, dst: Option<CpuId>) -> u64 {
        if eas.no_margin {
            return self.pd_energy_eenv(eas, pd, p, dst);
        }
        let (mut max_util, mut sum_util) = (0, 0);
        for &cpu in &pd.cpus {
            let util_cfs = self.cpu_util_next(cpu, p, dst, Boost::None);
            sum_util += self.energy_util(cpu, util_cfs);
            max_util = max_util.max(self.freq_util(eas, cpu, util_cfs, p, dst == Some(cpu)));
        }
        pd.energy(max_util, sum_util, true)
    }

    /// v6.0+ compute_energy() with the energy environment: the domain's
    /// busy time without p (eenv_pd_busy_time, capped at the domain's
    /// capacity), plus p's own (eenv_task_busy_time) when placed; the
    /// busiest CPU from eenv_pd_max_util, capped at the CPU's capacity
    /// (from v6.5 its utilisation boosted by runnable_avg, as schedutil's).
    fn pd_energy_eenv(&self, eas: &Eas, pd: &PerfDomain, p: &Waking, dst: Option<CpuId>) -> u64 {
        let pd_cap = pd.scale_cpu * pd.cpus.len() as u64;
        let mut busy: u64 = pd.cpus.iter().map(|&c| self.energy_util(c, self.cpu_util_next(c, p, None, Boost::None))).sum();
        busy = busy.min(pd_cap);
        if dst.is_some() {
            busy = (busy + p.util.max(p.util_est)).min(pd_cap);
        }
        pd.energy(self.eenv_pd_max_util(eas, pd, p, dst), busy, !eas.headroom_in_sugov)
    }

    /// eenv_pd_max_util() (v6.0+): the utilisation of the domain's busiest
    /// CPU with p on `dst`, which sets the domain's OPP in the estimate.
    fn eenv_pd_max_util(&self, eas: &Eas, pd: &PerfDomain, p: &Waking, dst: Option<CpuId>) -> u64 {
        pd.cpus
            .iter()
            .map(|&c| self.freq_util(eas, c, self.cpu_util_next(c, p, dst, eas.max_util_boost), p, dst == Some(c)))
            .max()
            .unwrap_or(0)
            .min(pd.scale_cpu)
    }

    /// Whether p fits `cpu` in find_energy_efficient_cpu's candidate test,
    /// as util_fits_cpu's ranking (1 fits, -1 fits below util_min, 0 not):
    /// v5.0 fits_capacity on the utilisation with p; v5.9 (1d42509e475c)
    /// clamped by the runqueue's and p's clamps; v6.2 util_fits_cpu.
    fn eas_fits(&self, eas: &Eas, cpu: CpuId, util: u64, p: &Waking) -> i32 {
        let cap = self.rqs[cpu].capacity;
        if eas.util_fits_cpu {
            let (lo, hi) = if self.uclamp_used { self.clamps_with(cpu, p) } else { (0, SCALE) };
            return util_fits_cpu(util, lo, hi, cap, self.uclamp_used);
        }
        let util = if eas.fits_uclamp && self.uclamp_used {
            let (lo, hi) = self.clamps_with(cpu, p);
            util.clamp(lo.min(hi), hi)
        } else {
            util
        };
        i32::from(cap * SCALE >= util * CAPACITY_MARGIN)
    }

    /// find_energy_efficient_cpu() for task `t` waking with previous CPU
    /// `prev`: the CPU, or None when EAS does not decide (overutilized).
    pub(crate) fn find_energy_efficient_cpu(&self, t: TaskId, prev: CpuId) -> Option<CpuId> {
        let eas = self.eas.as_deref().filter(|e| !e.overutilized)?;
        let p = self.waking(t);
        let util_est = p.util.max(p.util_est);
        let clamped = self.uclamp_used && p.uclamp_min > 0;
        if util_est == 0 && !(eas.no_margin && clamped) {
            return Some(prev);
        }
        let allowed = self.tasks[t].affinity.unwrap_or(self.all_cpus);
        if eas.no_margin {
            return Some(self.feec_v6(eas, &p, prev, allowed));
        }
        Some(self.feec_v5(eas, &p, prev, allowed))
    }

    /// v5.0 / v5.4 find_energy_efficient_cpu(): the cheapest candidate if it
    /// saves more than 1/16 of prev's energy (delta, from v5.4), else prev.
    fn feec_v5(&self, eas: &Eas, p: &Waking, prev: CpuId, allowed: crate::sched::cpumask::CpuMask) -> CpuId {
        let whole = |dst: Option<CpuId>| -> u64 { eas.pds.iter().map(|pd| self.pd_energy(eas, pd, p, dst)).sum() };
        let (mut prev_e, mut best_e) = (u64::MAX, u64::MAX);
        let mut best_cpu = prev;
        let mut base_energy = 0;
        for pd in &eas.pds {
            let base_pd = if eas.pd_delta { self.pd_energy(eas, pd, p, None) } else { 0 };
            base_energy += base_pd;
            let energy_on = |cpu: CpuId| -> u64 {
                if eas.pd_delta {
                    self.pd_energy(eas, pd, p, Some(cpu)).saturating_sub(base_pd)
                } else {
                    whole(Some(cpu))
                }
            };
            let mut max_spare: Option<(u64, CpuId)> = None;
            for &cpu in pd.cpus.iter().filter(|&&c| allowed.test(c)) {
                let util = self.cpu_util_next(cpu, p, Some(cpu), Boost::None);
                if self.eas_fits(eas, cpu, util, p) == 0 {
                    continue;
                }
                let spare = self.rqs[cpu].capacity.saturating_sub(util);
                if cpu == prev {
                    prev_e = energy_on(prev);
                    best_e = best_e.min(prev_e);
                    // v5.0 keeps prev out of the spare-capacity search.
                    if !eas.pd_delta {
                        continue;
                    }
                }
                if spare > max_spare.map_or(0, |(s, _)| s) {
                    max_spare = Some((spare, cpu));
                }
            }
            if let Some((_, cpu)) = max_spare.filter(|&(_, c)| c != prev) {
                let e = energy_on(cpu);
                if e < best_e {
                    best_e = e;
                    best_cpu = cpu;
                }
            }
        }
        if prev_e == u64::MAX {
            return best_cpu;
        }
        let margin = if eas.pd_delta { (prev_e + base_energy) >> 4 } else { prev_e >> 4 };
        if prev_e - best_e > margin {
            best_cpu
        } else {
            prev
        }
    }

    /// v6.0+ find_energy_efficient_cpu(): per domain, prev and the fitting
    /// CPU with the most spare capacity; the best fit ranking first, then
    /// the smallest energy delta; prev unless another is strictly better.
    fn feec_v6(&self, eas: &Eas, p: &Waking, prev: CpuId, allowed: crate::sched::cpumask::CpuMask) -> CpuId {
        let (mut prev_delta, mut best_delta) = (u64::MAX, u64::MAX);
        let (mut prev_fits, mut best_fits) = (-1i32, -1i32);
        let (mut prev_cap, mut best_cap) = (0u64, 0u64);
        let mut best_cpu = None;
        for pd in &eas.pds {
            let cpu_cap_pd = pd.scale_cpu;
            let mut prev_spare: Option<u64> = None;
            let mut max: Option<(u64, CpuId, i32)> = None;
            for &cpu in pd.cpus.iter().filter(|&&c| allowed.test(c)) {
                let util = self.cpu_util_next(cpu, p, Some(cpu), Boost::None);
                let fits = self.eas_fits(eas, cpu, util, p);
                if fits == 0 {
                    continue;
                }
                let spare = self.rqs[cpu].capacity.saturating_sub(util);
                if cpu == prev {
                    prev_spare = Some(spare);
                    prev_fits = fits;
                } else if max.map_or(true, |(s, _, f)| fits > f || (fits == f && spare > s)) {
                    max = Some((spare, cpu, fits));
                }
            }
            if max.is_none() && prev_spare.is_none() {
                continue;
            }
            let base = self.pd_energy(eas, pd, p, None);
            if prev_spare.is_some() {
                let e = self.pd_energy(eas, pd, p, Some(prev));
                // "CPU utilization has changed": keep prev.
                let Some(d) = e.checked_sub(base) else { return prev };
                prev_delta = d;
                prev_cap = cpu_cap_pd;
                best_delta = best_delta.min(prev_delta);
            }
            let Some((spare, cpu, fits)) = max else { continue };
            if prev_spare.is_some_and(|ps| spare <= ps) {
                continue;
            }
            if fits < best_fits || (fits < 0 && cpu_cap_pd <= best_cap) {
                continue;
            }
            let e = self.pd_energy(eas, pd, p, Some(cpu));
            let Some(d) = e.checked_sub(base) else { return prev };
            if fits > 0 && best_fits > 0 && d >= best_delta {
                continue;
            }
            best_delta = d;
            best_cpu = Some(cpu);
            best_fits = fits;
            best_cap = cpu_cap_pd;
        }
        match best_cpu {
            Some(cpu) if best_fits > prev_fits || (best_fits > 0 && best_delta < prev_delta) || (best_fits < 0 && best_cap > prev_cap) => cpu,
            _ => prev,
        }
    }

    /// cpu_overutilized(): CPU `cpu`'s CFS utilisation does not fit it
    /// (v5.0: with the 1280/1024 margin; v6.2: util_fits_cpu with the
    /// runqueue's clamps).
    fn cpu_overutilized(&self, eas: &Eas, cpu: CpuId) -> bool {
        let cap = self.rqs[cpu].capacity;
        let util = pelt::cpu_util(&self.rqs[cpu].cfs, cap);
        if eas.util_fits_cpu && self.uclamp_used {
            let (lo, hi) = self.uclamp_rq(cpu);
            return util_fits_cpu(util, lo, hi, cap, true) == 0;
        }
        cap * SCALE < util * CAPACITY_MARGIN
    }

    /// update_overutilized_status(): set the root domain's flag if `cpu` is
    /// overutilized (at enqueue of a woken or migrated task, and at the tick).
    #[inline]
    pub(crate) fn update_overutilized_status(&mut self, cpu: CpuId) {
        if let Some(eas) = self.eas.as_deref() {
            if !eas.overutilized && self.cpu_overutilized(eas, cpu) {
                self.set_overutilized(true);
            }
        }
    }

    /// rebalance_domains()'s step at the top domain for `cpu` (v5.0 ..
    /// v6.8): once its interval (placement.rs `sd_balance_interval_j`) has
    /// passed, load_balance() there; only the CPU should_we_balance() picks
    /// in its local group (its cluster, the LLC on the boards with EAS)
    /// gets to update_sd_lb_stats(), which sets or clears
    /// rd->overutilized. The interval doubles up to its maximum when the
    /// pass ends balanced (not the designated CPU, or EAS's test holds) and
    /// returns to its minimum when the machine is overutilized (the
    /// kernel's "we were unbalanced": assumed to be found then).
    pub(crate) fn rebalance_top(&mut self, cpu: CpuId, busy: bool) {
        let Some(eas) = self.eas.as_deref() else { return };
        let jiffies = self.now / self.tun.tick_ns;
        if jiffies < eas.top_last_j[cpu] + self.sd_balance_interval_j(eas.top_interval_ms[cpu], busy) {
            return;
        }
        let designated = self.should_we_balance(cpu, self.llc_masks[self.plat.cpus[cpu].llc]);
        if designated {
            self.update_rd_overutilized();
        }
        let Some(eas) = self.eas.as_deref_mut() else { return };
        eas.top_last_j[cpu] = jiffies;
        let unbalanced = designated && eas.overutilized;
        eas.top_interval_ms[cpu] = next_balance_interval_ms(eas.top_interval_ms[cpu], eas.top_weight, unbalanced);
    }

    /// update_sd_lb_stats() at the top level (`!env->sd->parent`): the
    /// flag becomes whether any CPU is overutilized. Lower levels can only
    /// set it, which the tick's update_overutilized_status() already does
    /// for a CPU that runs. rd->overload likewise becomes whether a CPU
    /// has two tasks or a misfit one (SG_OVERLOAD; misfit: 757ffdd705ee,
    /// v4.20).
    #[inline]
    pub(crate) fn update_rd_overutilized(&mut self) {
        if let Some(eas) = self.eas.as_deref() {
            let any = (0..self.rqs.len()).any(|c| self.cpu_overutilized(eas, c));
            if any != eas.overutilized {
                self.set_overutilized(any);
            }
            let overload = !self.overloaded.is_empty() || (0..self.rqs.len()).any(|c| self.misfit(c));
            if let Some(eas) = self.eas.as_deref_mut() {
                eas.overload = overload;
            }
        }
    }

    /// add_nr_running(): a runqueue reached two tasks.
    #[inline]
    pub(crate) fn set_rd_overload(&mut self) {
        if let Some(eas) = self.eas.as_deref_mut() {
            eas.overload = true;
        }
    }

    /// rq->misfit_task_load is set (update_misfit_status): `cpu` runs a
    /// fair task that does not fit it, and a CPU of more capacity exists.
    pub(crate) fn misfit(&self, cpu: CpuId) -> bool {
        self.rqs[cpu].curr.is_some_and(|t| {
            self.rqs[cpu].curr_class == crate::sched::rt::Class::Fair
                && self.rqs.iter().any(|rq| rq.capacity > self.rqs[cpu].capacity)
                && !self.task_fits_cpu(t, cpu)
        })
    }

    fn set_overutilized(&mut self, on: bool) {
        if let Some(eas) = self.eas.as_deref_mut() {
            eas.overutilized = on;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::cpumask::CpuMask;

    fn juno_r0(kernel: &str) -> Engine {
        crate::api::testing::engine("juno-r0", kernel, "idle", "schedutil", 1_000_000)
    }

    /// eenv_pd_max_util() reads cpu_util(cpu, p, dst, 1) from v6.5
    /// (7d0583cf9ec7): LITTLE CPU 0 with tasks waiting for it (runnable_avg
    /// 400 over util_avg 100) sets its domain's OPP in the estimate by its
    /// runnable_avg, as schedutil sets the real one: 400 plus v6.8's 25 %
    /// headroom, capped at the LITTLE capacity, 446. Before v6.5 its
    /// util_avg, 100 (the headroom then inside em_cpu_energy).
    #[test]
    fn the_busiest_cpu_estimate_reads_runnable_avg_from_v6_5() {
        let max_util = |kernel: &str| {
            let mut e = juno_r0(kernel);
            e.rqs[0].cfs.avg.util_avg = 100;
            e.rqs[0].cfs.avg.runnable_avg = 400;
            let eas = e.eas.as_deref().unwrap();
            let pd = eas.pds.iter().find(|pd| pd.cpus.contains(&0)).unwrap();
            let p = Waking { cpu: 3, util: 50, util_est: 0, uclamp_min: 0, uclamp_max: SCALE };
            e.eenv_pd_max_util(eas, pd, &p, Some(3))
        };
        assert_eq!(max_util("6.4"), 100);
        assert_eq!(max_util("6.8"), 446);
    }

    /// v6.5's boost raised the runqueue's util_est to its runnable_avg as
    /// well, so the waking task's estimate came on top of it; c2e164ac33f7
    /// (v6.6) removed that: CPU 3, runnable_avg 300 (its blocked tasks'),
    /// util_avg 0, p (util_est 100) placed there.
    #[test]
    fn util_est_is_boosted_in_v6_5_only() {
        let max_util = |kernel: &str| {
            let mut e = juno_r0(kernel);
            e.rqs[3].cfs.avg.runnable_avg = 300;
            let eas = e.eas.as_deref().unwrap();
            let pd = eas.pds.iter().find(|pd| pd.cpus.contains(&3)).unwrap();
            let p = Waking { cpu: 1, util: 0, util_est: 100, uclamp_min: 0, uclamp_max: SCALE };
            e.eenv_pd_max_util(eas, pd, &p, Some(3))
        };
        assert_eq!(max_util("6.5"), 400);
        assert_eq!(max_util("6.6"), 300);
    }

    const MS: u64 = 1_000_000;

    /// juno-r0 with every CPU busy and LITTLE CPU 0 overutilized, then
    /// not: the flag stays set until the big cluster's designated CPU 1
    /// (its first, none being idle) balances the top domain, its
    /// balance_interval (the domain's weight, 6 ms) × busy_factor later:
    /// 96 ms on v6.8, 192 ms on v5.2 (before 6e7499135db7). CPU 2's passes
    /// never clear it: should_we_balance() stops them.
    #[test]
    fn a_busy_cpu_clears_overutilized_at_its_top_level_balance_only() {
        for (kernel, interval_ms) in [("6.8", 96), ("5.2", 192)] {
            let mut e = juno_r0(kernel);
            e.idle_mask = CpuMask::from_cpus([]);
            e.rqs[0].cfs.avg.util_avg = 1000;
            e.update_overutilized_status(0);
            e.rqs[0].cfs.avg.util_avg = 0;
            let overutilized = |e: &Engine| e.eas.as_ref().unwrap().overutilized;
            assert!(overutilized(&e), "{kernel}: CPU 0 at 1000 of 446");
            let mut t = 0;
            while t < 2 * interval_ms * MS {
                e.now = t;
                e.periodic_balance(2);
                e.periodic_balance(1);
                assert_eq!(overutilized(&e), t < interval_ms * MS, "{kernel} at {} ms", t / MS);
                t += e.tun.tick_ns;
            }
            e.rqs[0].cfs.avg.util_avg = 1000;
            e.update_overutilized_status(0);
            e.rqs[0].cfs.avg.util_avg = 0;
            for _ in 0..100 {
                e.now += e.tun.tick_ns;
                e.periodic_balance(2);
            }
            assert!(overutilized(&e), "{kernel}: CPU 2 is not its cluster's balancing CPU");
        }
    }

    /// An idle CPU whose tick runs balances the top domain at its own
    /// tick without the busy factor (6 ms, doubled to 12 ms after a
    /// balanced pass); newidle balance reaches it whenever it pulls
    /// nothing in its cluster, at once.
    #[test]
    fn idle_balances_clear_overutilized_sooner() {
        let mut e = juno_r0("6.8");
        let overutilized = |e: &Engine| e.eas.as_ref().unwrap().overutilized;
        e.rqs[0].cfs.avg.util_avg = 1000;
        e.update_overutilized_status(0);
        e.rqs[0].cfs.avg.util_avg = 0;
        let due = (6 * MS).div_ceil(e.tun.tick_ns) * e.tun.tick_ns;
        e.now = due - e.tun.tick_ns;
        e.rebalance_top(3, false);
        e.rebalance_top(0, false);
        assert!(overutilized(&e), "before its 6 ms");
        e.now = due;
        e.rebalance_top(3, false);
        assert!(overutilized(&e), "CPU 3 is not the LITTLE cluster's first idle CPU");
        e.rebalance_top(0, false);
        assert!(!overutilized(&e), "CPU 0, the LITTLE cluster's first idle CPU");

        e.rqs[0].cfs.avg.util_avg = 1000;
        e.update_overutilized_status(0);
        e.rqs[0].cfs.avg.util_avg = 0;
        e.overloaded = CpuMask::from_cpus([4]);
        e.newidle_balance(5);
        assert!(!overutilized(&e), "newidle balance's walk reaches the top domain");

        // rd->overload outlives the runqueue that set it: CPU 4 had two
        // tasks and has one now; the next newidle walk still runs, and its
        // top-level pass clears both flags.
        e.rqs[0].cfs.avg.util_avg = 1000;
        e.update_overutilized_status(0);
        e.rqs[0].cfs.avg.util_avg = 0;
        e.overloaded = CpuMask::from_cpus([]);
        e.set_rd_overload();
        e.newidle_balance(5);
        assert!(!overutilized(&e) && !e.eas.as_ref().unwrap().overload);
        e.rqs[0].cfs.avg.util_avg = 1000;
        e.update_overutilized_status(0);
        e.newidle_balance(5);
        assert!(overutilized(&e), "no overload, no newidle walk");
    }

    #[test]
    fn effective_cpu_perf_adds_a_quarter_within_bounds() {
        assert_eq!(effective_cpu_perf(400, 0, 1024), 500);
        assert_eq!(effective_cpu_perf(400, 0, 450), 450);
        assert_eq!(effective_cpu_perf(100, 300, 1024), 300);
        assert_eq!(effective_cpu_perf(1024, 0, 1024), 1024);
    }
}


//! The engine: machine state, the run loop and event dispatch (the
//! interrupts, timers and completions that drive the kernel).
//!
//! [`Engine`] owns everything a run touches. The other files of this module
//! each add an `impl Engine` block for one part of the kernel or the
//! hardware (see `machine/mod.rs`); this file only wires a run together
//! and sends each event to the part it belongs to.

use std::path::Path;

use super::dvfs::{DomainRt, PolicyRt, VoltageRt};
use super::energy::CoreEnergy;
use super::exec::{ChannelRt, DeviceRt, MutexRt, SourceRt, SyncRt};
use super::rq::{CpuRq, Task};
use super::Event;
use crate::cpufreq::driver::{CpufreqDriver, PolicyLayout};
use crate::cpufreq::CpufreqGovernor;
use crate::cpuidle::{CpuidleGovernor, IdleDevice};
use crate::error::Result;
use crate::metrics::{CpuIdleCounters, RunResult};
use crate::kernel::{BuildCtx, EraId, FreqInvariance, KernelConfig};
use crate::sched::pelt::PeltRules;
use crate::sched::util_est::UtilEstForm;
use crate::platform::Platform;
use crate::sched::cpumask::CpuMask;
use crate::sched::SchedTunables;
use crate::sim::queue::EventQueue;
use crate::sim::rng::{Rng, Stream};
use crate::sim::Time;
use crate::trace::{TraceTo, TraceWriter};
use crate::workload::{Record, TaskSpec, Workload};

/// Everything needed to start a run, already resolved and validated.
pub struct RunParts {
    /// The machine and the kernel, with the kernel's decisions on it (its
    /// tick rate, the driver's HWP), resolved once for the run.
    pub ctx: BuildCtx,
    pub workload: Box<dyn Workload>,
    pub cpufreq: Box<dyn CpufreqGovernor>,
    pub cpuidle: Box<dyn CpuidleGovernor>,
    pub duration_ns: Time,
    pub seed: u64,
}

/// Per-package runtime state.
#[derive(Debug, Clone)]
pub struct PackageRt {
    /// A PCU tick (turbo grants) is queued.
    pub pcu_armed: bool,
    /// The package's active cores at the last PCU tick that asked its
    /// domains for their grants, while nothing else a grant reads (a
    /// domain's request or clock, a transition, the ceiling) has moved
    /// since; None once something has (machine/dvfs.rs `pcu_tick`).
    pub pcu_asked_at: Option<usize>,
    /// The power limit's ceiling: the highest OPP the controller grants
    /// (an index into the package's CPU type's OPPs; `usize::MAX`: none).
    pub cap_opp: usize,
    /// The package's power averaged as the limit reads it, mW.
    pub avg_mw: f64,
    /// The package domain's energy at the last tick, mJ, and that tick's time.
    pub last_mj: f64,
    pub last_ns: Time,
    /// Time a ceiling was in force, ns, up to `capped_since` if one is now.
    pub capped_ns: Time,
    pub capped_since: Option<Time>,
}

impl Default for PackageRt {
    fn default() -> Self {
        PackageRt { pcu_armed: false, pcu_asked_at: None, cap_opp: usize::MAX, avg_mw: 0.0, last_mj: 0.0, last_ns: 0, capped_ns: 0, capped_since: None }
    }
}

/// A CPU's core clock domain, the base clock and SMT throughput of its type,
/// [`Platform::work_per_cycle`] of its type, and the other CPUs of its core.
#[derive(Debug, Clone)]
pub(crate) struct SpeedIx {
    pub domain: usize,
    pub base_khz: u32,
    pub smt_throughput: f64,
    pub work_per_cycle: f64,
    pub siblings: Vec<crate::platform::CpuId>,
}

/// A simulation in progress.
pub struct Engine {
    pub(crate) plat: Platform,
    /// The kernel modelled: what the machine does by version (the idle
    /// tick, and the eras sched/ and fair.rs read).
    pub(crate) kernel: KernelConfig,
    /// The cpufreq driver runs with HWP on (the run's, from its
    /// [`BuildCtx`]; the platform only says whether the hardware has it).
    pub(crate) hwp: bool,
    /// The kernel's PELT rules (sched::pelt::PeltRules), read on every update.
    pub(crate) pelt: PeltRules,
    /// util_est exists (v4.17+); without it a task's estimate stays 0.
    pub(crate) util_est: bool,
    /// Which form of util_est (sched/util_est.rs) the kernel runs.
    pub(crate) util_est_form: UtilEstForm,
    /// Attaching a task calls the hook with SCHED_CPUFREQ_MIGRATION
    /// (before v5.6, a4f9a0e51bbf).
    pub(crate) migration_flag: bool,
    /// The fair class is EEVDF (v6.6+, machine/eevdf.rs); a run with task
    /// groups keeps CFS's rules (fair_group.rs) on every version.
    pub(crate) eevdf: bool,
    /// A fair task's sched_runtime is its slice, and a shorter slice may
    /// preempt through RUN_TO_PARITY (v6.12+, PREEMPT_SHORT).
    pub(crate) custom_slice: bool,
    /// A fair task that sleeps ineligible stays queued until picked or
    /// woken (v6.12+, DELAY_DEQUEUE with DELAY_ZERO; machine/eevdf.rs).
    pub(crate) delay_dequeue: bool,
    /// arch_scale_freq_invariant(): utilisation is frequency invariant.
    pub(crate) freq_invariant: bool,
    /// The scheduler calls the cpufreq hook for remote runqueues (v4.14+).
    pub(crate) remote_callbacks: bool,
    /// A wakeup onto an idle CPU of the waker's LLC goes through that
    /// CPU's wake list (v6.0+, `KernelConfig::ttwu_queue_idle`).
    pub(crate) ttwu_queue_idle: bool,
    /// The rq->avg_idle below which newidle balance gives up at once
    /// (machine/placement.rs `newidle_balance`, era `newidle_cost_gate`).
    pub(crate) newidle_min_avg_idle_ns: u64,
    pub(crate) now: Time,
    pub(crate) end_ns: Time,
    pub(crate) seed: u64,
    pub(crate) q: EventQueue<Event>,
    pub(crate) events: u64,
    pub(crate) tun: SchedTunables,

    pub(crate) rqs: Vec<CpuRq>,
    pub(crate) idle_counters: Vec<CpuIdleCounters>,
    pub(crate) idle_disabled: Vec<Vec<bool>>,
    /// cpuidle_poll_time()'s default for each CPU (machine/idle.rs), fixed
    /// for the run: it reads only the kernel, the CPU's states and which
    /// are disabled.
    pub(crate) poll_default_ns: Vec<Option<u64>>,
    /// The kernel stops the tick before asking the governor (its
    /// `idle_tick()` is `Stopped`), fixed for the run.
    pub(crate) idle_tick_stopped_first: bool,
    /// The CPUs whose idle state 0 polls (the platform loader lets no
    /// other state poll): such a CPU still votes for its clock
    /// (machine/dvfs.rs `cpu_votes`).
    pub(crate) polls_in_state0: CpuMask,
    /// CPUs with nothing on their runqueue (available_idle_cpu).
    pub(crate) idle_mask: CpuMask,
    /// CPUs with more than one runnable task (candidates for pulling).
    pub(crate) overloaded: CpuMask,
    pub(crate) all_cpus: CpuMask,
    pub(crate) llc_masks: Vec<CpuMask>,
    /// Per LLC, sd_llc_shared's has_idle_cores and nr_idle_scan
    /// (placement.rs `select_idle_sibling`).
    pub(crate) has_idle_cores: Vec<bool>,
    pub(crate) nr_idle_scan: Vec<u32>,
    /// Each CPU's cpu_smt_mask(): itself and its SMT siblings.
    pub(crate) smt_masks: Vec<CpuMask>,
    /// The CPUs of each package.
    pub(crate) package_masks: Vec<CpuMask>,
    /// CPU capacities differ (sched_asym_cpucap_active): placement is
    /// capacity-aware (machine/capacity.rs).
    pub(crate) asym_cpucap: bool,
    /// ITMT priority of each CPU where the balancer packs by it
    /// (machine/asym_packing.rs); None elsewhere.
    pub(crate) itmt_prio: Option<Vec<u32>>,
    /// Energy-Aware Scheduling, where its conditions hold (machine/eas.rs).
    pub(crate) eas: Option<Box<super::eas::Eas>>,
    /// What a run segment's speed reads of each CPU's platform entry
    /// (`Engine::cpu_speed`), gathered once.
    pub(crate) speed_ix: Vec<SpeedIx>,

    pub(crate) cores: Vec<CoreEnergy>,
    /// Hardware clock domains, and the cpufreq policies the driver made
    /// over them (cpufreq::driver::PolicyLayout).
    pub(crate) domains: Vec<DomainRt>,
    pub(crate) pol: PolicyLayout,
    pub(crate) policies: Vec<PolicyRt>,
    /// Each CPU's APERF/MPERF (machine/dvfs.rs).
    pub(crate) aperf: Vec<super::dvfs::Aperf>,
    /// Each core's threads in C0 (voting, machine/dvfs.rs `cpu_votes`),
    /// kept with `aperf` by `clock_vote_changed`: a core with one makes its
    /// idle threads' PERF_CTL requests count too (`voted_opp`).
    pub(crate) core_c0: Vec<u32>,
    /// Each CPU's tick-sampled invariance scale on x86 (machine/dvfs.rs);
    /// empty where the scale follows the domain's clock.
    pub(crate) tick_scale: Vec<super::dvfs::TickScale>,
    pub(crate) vdomains: Vec<VoltageRt>,
    pub(crate) packages: Vec<PackageRt>,
    /// Uncore and DRAM ledgers and package C-states (machine/energy.rs).
    pub(crate) pkg_energy: Vec<super::energy::PackageEnergy>,
    /// Per package, how many of its idle states count as active for the
    /// turbo budget when the ledgers' core counts can answer the count of
    /// active cores (machine/dvfs.rs, `turbo_active_depths`).
    pub(crate) turbo_active_depths: Vec<Option<usize>>,
    /// Per CPU type, the highest OPP within the turbo limit for each count
    /// of active cores, and per package the clock domains whose request is
    /// a turbo OPP (`req_turbo`), as bits by domain index (machine/dvfs.rs).
    pub(crate) turbo_opps: Vec<Vec<usize>>,
    pub(crate) package_turbo: Vec<Vec<u64>>,
    /// ∫ total power dt, kept independently of the per-core ledgers (mJ).
    pub(crate) energy_check_mj: f64,
    pub(crate) total_power_mw: f64,
    pub(crate) energy_check_ns: Time,

    pub(crate) tasks: Vec<Task>,
    pub(crate) templates: Vec<TaskSpec>,
    /// Each template's program, shared by the tasks forked from it
    /// (`Task::program`).
    pub(crate) template_programs: Vec<std::rc::Rc<crate::workload::Program>>,
    pub(crate) chans: Vec<ChannelRt>,
    pub(crate) mutexes: Vec<MutexRt>,
    pub(crate) devices: Vec<DeviceRt>,
    pub(crate) sources: Vec<SourceRt>,
    /// Condition variables, barriers and timers of the workload's tasks.
    pub(crate) sync: SyncRt,
    pub(crate) live_tasks: usize,
    pub(crate) next_pid: u32,

    pub(crate) cpufreq: Box<dyn CpufreqGovernor>,
    pub(crate) cpufreq_hook: bool,
    /// The CPU running the scheduler code that may call the cpufreq hook,
    /// when it is not the hook's own CPU (a remote wakeup or a pull); None
    /// means local. See `Engine::cpufreq_update_util`.
    pub(crate) hook_this_cpu: Option<crate::platform::CpuId>,
    /// The scaling driver the governor runs on (cpufreq::driver).
    pub(crate) cpufreq_driver: CpufreqDriver,
    pub(crate) cpuidle: Box<dyn CpuidleGovernor>,
    pub(crate) workload: Box<dyn Workload>,
    pub(crate) record: Record,
    pub(crate) trace: Option<TraceWriter>,
    /// rt-app's main-thread markers are in the trace (machine/exec.rs).
    pub(crate) trace_main_marked: bool,
    pub(crate) stopped_early: bool,
    /// Bad input discovered during the run (e.g. a program that spins): the
    /// run stops and returns it.
    pub(crate) fault: Option<crate::error::Error>,
    /// A governor comes from outside the crate and may fail during the run
    /// (crate::external): ask after every event.
    pub(crate) external_governors: bool,
    /// Some task is RT or DL (or has been): the RT/DL signals are kept
    /// (machine/rt.rs); false keeps the fair-only hot path as it was.
    pub(crate) rt_dl_used: bool,
    /// Some task is RT, DL or in a task group: the class and group checks
    /// of the fair hot paths are on (one predictable test when off).
    pub(crate) sched_ext: bool,
    /// Some task set a utilisation clamp (the kernel's uclamp static key,
    /// `uclamp_is_used`, v6.8).
    pub(crate) uclamp_used: bool,
    /// The RT bandwidth timer: armed, and its generation.
    pub(crate) rt_period_armed: bool,
    pub(crate) rt_period_gen: u32,
    /// `sched_rt_runtime_us` (None: −1, no throttling) and
    /// `sched_rt_period_us`, ns.
    pub(crate) rt_runtime_ns: Option<u64>,
    pub(crate) rt_period_ns: u64,
    /// Total SCHED_DEADLINE bandwidth admitted (BW_SHIFT).
    pub(crate) dl_total_bw: u64,
    /// CFS task groups (machine/fair_group.rs).
    pub(crate) groups: Vec<super::fair_group::GroupRt>,
    /// Σ scaled weights of the group entities on each CPU's root runqueue.
    pub(crate) group_rq_weight: Vec<u64>,
    /// The NOHZ stats pass decays idle CPUs' blocked load (v4.17+,
    /// machine/nohz.rs); nohz.has_blocked; nohz.next_blocked in jiffies;
    /// the idle load balancer kicked for a pass and not yet run.
    pub(crate) nohz_blocked: bool,
    pub(crate) nohz_has_blocked: bool,
    pub(crate) nohz_next_blocked_j: u64,
    pub(crate) nohz_kicked: Option<crate::platform::CpuId>,
    /// The kick flags pending on `nohz_kicked` (nohz_flags()).
    pub(crate) nohz_kick_flags: u8,
    /// nohz.next_balance in jiffies: a busy CPU's balance kick waits for it
    /// (machine/nohz.rs `nohz_balancer_kick`); jiffies at boot.
    pub(crate) nohz_next_balance_j: u64,
    /// The CPUs whose `tick_stopped` is set, kept with it
    /// (`set_tick_stopped`): with `idle_mask`, nohz.idle_cpus_mask.
    pub(crate) tick_stopped_mask: CpuMask,
    /// The kernel's per-CPU housekeeping (machine/housekeeping.rs).
    pub(crate) hk: super::housekeeping::HousekeepingRt,
    /// The kernel's cycles per wakeup, switch and idle cycle
    /// (machine/kpath.rs).
    pub(crate) kpath: super::kpath::Kpath,
    /// Counters per interval, when asked (machine/intervals.rs).
    pub(crate) intervals: Option<Box<super::intervals::Intervals>>,
    /// The workload's power phases, when it has any (machine/power_phases.rs).
    pub(crate) power_phases: Option<Box<super::power_phases::PowerPhases>>,
    /// The next interval boundary or phase start (`Time::MAX` without).
    pub(crate) next_boundary_ns: Time,
    /// Each CPU's sched domains for fork balancing (machine/fork.rs).
    pub(crate) fork_domains: Vec<super::fork::ForkDomains>,
    /// Each CPU's sched domains for periodic and idle balance
    /// (machine/placement.rs `sched_domains`).
    pub(crate) balance_domains: Vec<super::placement::BalanceDomains>,
    /// HZ and max_load_balance_interval in jiffies (machine/placement.rs
    /// `sd_balance_interval_j`), fixed for the run.
    pub(crate) balance_hz: u64,
    pub(crate) balance_max_j: u64,
}

/// Build an engine from resolved parts; `trace` streams ftrace text there
/// (its header naming the platform and the kernel).
pub fn build(parts: RunParts, trace: Option<&Path>) -> Result<Engine> {
    let meta = crate::trace::writer::run_meta(&parts.ctx.platform.name, &parts.ctx.kernel.spec.to_text());
    build_traced(parts, trace.map(TraceTo::File), &meta)
}

/// [`build`], tracing to a file or to memory (taken back after the run by
/// [`Engine::take_trace`]), the trace's header saying `meta`
/// ([`crate::trace::writer::header`]).
pub fn build_traced(parts: RunParts, trace: Option<TraceTo<'_>>, meta: &crate::trace::Meta) -> Result<Engine> {
    let RunParts {
        ctx,
        workload,
        cpufreq,
        cpuidle,
        duration_ns,
        seed,
    } = parts;
    let cpufreq_driver = crate::cpufreq::driver::resolve(&ctx, cpufreq.as_ref())?;
    let tick_ns = ctx.tick_ns();
    let cpu_capacity: Vec<u64> = (0..ctx.platform.nr_cpus()).map(|c| ctx.cpu_capacity(c)).collect();
    let invariance_khz: Vec<u32> = (0..ctx.platform.cpu_types.len()).map(|t| ctx.invariance_reference_khz(t)).collect();
    let freq_invariant = ctx.kernel.freq_invariance(&ctx.platform) != FreqInvariance::Off;
    let tick_sampled_scale = ctx.kernel.freq_scale_on_tick(&ctx.platform);
    let itmt_prio = ctx.itmt_priorities();
    let BuildCtx { platform, kernel, hwp, .. } = ctx;
    let min_pstate_init = cpufreq_driver.inits_at_min_pstate(hwp);
    let mut wl_rng = Rng::new(seed, Stream::Workload);
    let setup = workload.setup(&platform, &mut wl_rng)?;
    let trace = match trace {
        Some(to) => Some(TraceWriter::open(to, platform.nr_cpus(), meta)?),
        None => None,
    };
    let n = platform.nr_cpus();
    let tun = SchedTunables { base_slice: kernel.base_slice(), ..SchedTunables::for_cpus(n, tick_ns) };
    let eevdf = kernel.has(EraId::Eevdf) && setup.groups.is_empty();
    let custom_slice = kernel.has(EraId::EevdfCustomSlice);
    let delay_dequeue = eevdf && kernel.has(EraId::EevdfDelayDequeue);
    let rqs: Vec<CpuRq> = (0..n)
        .map(|c| {
            CpuRq {
                capacity: cpu_capacity[c],
                min_vruntime: if eevdf { super::eevdf::VRUNTIME_BASE } else { 0 },
                ..CpuRq::default()
            }
        })
        .collect();
    let idle_counters = (0..n)
        .map(|c| CpuIdleCounters::new(platform.cpu_type_of(c).idle_states.len()))
        .collect();
    let idle_disabled: Vec<Vec<bool>> = (0..n)
        .map(|c| platform.cpu_type_of(c).idle_states.iter().map(|s| kernel.idle_state_off_by_default(s)).collect())
        .collect();
    let poll_default_ns = (0..n)
        .map(|c: usize| super::idle::default_poll_time_ns(&kernel, &platform.cpu_type_of(c).idle_states, &idle_disabled[c], tun.tick_ns))
        .collect();
    let llc_masks = platform
        .llcs
        .iter()
        .map(|l| CpuMask::from_cpus(l.iter().copied()))
        .collect();
    // The machine has been up with its CPUs idle: every LLC has an idle
    // core (with SMT), and SIS_UTIL's scan depth is an idle LLC's, all its
    // CPUs (a booting kernel's zeroed sd_llc_shared holds no scan until its
    // first balance; assumed not the state a benchmark starts from).
    let has_idle_cores = platform.llcs.iter().map(|l| l.iter().any(|&c| !platform.cpus[c].siblings.is_empty())).collect();
    let nr_idle_scan = platform.llcs.iter().map(|l| l.len() as u32).collect();
    let smt_masks = (0..n).map(|c| CpuMask::from_cpus(std::iter::once(c).chain(platform.cpus[c].siblings.iter().copied()))).collect();
    let all_cpus = CpuMask::from_cpus(0..n);
    let package_masks = (0..platform.packages.len())
        .map(|p| CpuMask::from_cpus((0..n).filter(|&c| platform.cpus[c].package == p)))
        .collect();
    let capacities: Vec<u64> = rqs.iter().map(|rq| rq.capacity).collect();
    let asym_cpucap = crate::sched::capacity::asym_cpucap(&capacities);
    let eas = super::eas::Eas::build(&platform, &kernel, cpufreq.as_ref(), asym_cpucap).map(Box::new);
    let work_per_cycle: Vec<f64> = (0..platform.cpu_types.len()).map(|t| platform.work_per_cycle(t)).collect();
    let speed_ix = (0..n)
        .map(|cpu| {
            let core = &platform.cores[platform.cpus[cpu].core];
            let ct = &platform.cpu_types[core.cpu_type];
            SpeedIx {
                domain: core.freq_domain,
                base_khz: ct.base_khz,
                smt_throughput: ct.smt_throughput,
                work_per_cycle: work_per_cycle[core.cpu_type],
                siblings: core.cpus.iter().copied().filter(|&c| c != cpu).collect(),
            }
        })
        .collect();
    let pol = PolicyLayout::of(&platform);
    let mut domains: Vec<DomainRt> = platform
        .freq_domains
        .iter()
        .enumerate()
        .map(|(i, d)| DomainRt::new(&platform, d, invariance_khz[d.cpu_type], pol.of_domain[i].len() > 1, min_pstate_init))
        .collect();
    let pkg_energy: Vec<_> = (0..platform.packages.len())
        .map(|p| {
            let of_package = platform.freq_domains.iter().filter(|d| d.package == p);
            let khz = of_package.flat_map(|d| platform.cpu_types[d.cpu_type].opps.iter().map(|o| o.khz)).collect();
            super::energy::PackageEnergy::new(platform.packages[p].cores.len(), khz)
        })
        .collect();
    for dom in &mut domains {
        let opps = &platform.cpu_types[dom.cpu_type].opps;
        dom.opp_ledger_slots = opps.iter().map(|o| pkg_energy[dom.package].clock_slot(o.khz)).collect();
        dom.ledger_slot = dom.opp_ledger_slots[dom.cur_opp];
    }
    let policies = pol.domain.iter().zip(&pol.cpus).map(|(&d, cpus)| PolicyRt::new(&platform, d, &domains[d], cpus.len())).collect();
    let pelt = PeltRules::for_kernel(&kernel);
    let util_est = kernel.util_est();
    let util_est_form = crate::sched::util_est::UtilEstForm::of(&kernel);
    let migration_flag = kernel.migration_flag();
    let remote_callbacks = kernel.remote_callbacks();
    let nohz_blocked = kernel.nohz_blocked_load();
    let ttwu_queue_idle = kernel.ttwu_queue_idle();
    let newidle_min_avg_idle_ns = super::placement::newidle_min_avg_idle_ns(&kernel);
    let vdomains = platform.voltage_domains.iter().map(|_| VoltageRt::default()).collect();
    let cores = platform.cores.iter().map(|_| CoreEnergy::default()).collect();
    let packages = platform.packages.iter().map(|_| PackageRt::default()).collect();
    let turbo_active_depths = super::dvfs::turbo_active_depths(&platform, cpuidle.chooses_in_hindsight());
    let turbo_opps = super::dvfs::turbo_opps(&platform);
    let package_turbo = super::dvfs::package_turbo(&platform, &domains);
    let record = Record {
        series: vec![crate::metrics::hist::Histogram::default(); setup.series.len()],
        deadline_misses: vec![0; setup.series.len()],
        counters: vec![0; setup.counters.len()],
        ..Record::default()
    };
    let cpufreq_hook = cpufreq.uses_util_hook();
    let hk = super::housekeeping::HousekeepingRt::new(
        kernel.housekeeping,
        platform.housekeeping,
        kernel.has(EraId::PpcHardlockupWatchdog),
        n,
        seed,
    );
    let kpath = super::kpath::Kpath::new(kernel.kpath);
    let idle_tick_stopped_first = kernel.idle_tick() == crate::platform::IdleTick::Stopped;
    debug_assert!(platform.cpu_types.iter().all(|t| t.idle_states.iter().skip(1).all(|s| !s.polling)), "only state 0 polls");
    let polls_in_state0 = CpuMask::from_cpus((0..n).filter(|&c| platform.cpu_type_of(c).idle_states.first().is_some_and(|s| s.polling)));
    let core_c0 = platform.cores.iter().map(|c| c.cpus.len() as u32).collect();
    let mut e = Engine {
        plat: platform,
        kernel,
        hwp,
        pelt,
        util_est,
        util_est_form,
        migration_flag,
        eevdf,
        custom_slice,
        delay_dequeue,
        freq_invariant,
        remote_callbacks,
        ttwu_queue_idle,
        newidle_min_avg_idle_ns,
        now: 0,
        end_ns: duration_ns,
        seed,
        q: EventQueue::with_capacity(4 * n + 64),
        events: 0,
        tun,
        rqs,
        idle_counters,
        idle_disabled,
        poll_default_ns,
        idle_tick_stopped_first,
        polls_in_state0,
        idle_mask: all_cpus,
        overloaded: CpuMask::default(),
        all_cpus,
        has_idle_cores,
        nr_idle_scan,
        smt_masks,
        llc_masks,
        package_masks,
        asym_cpucap,
        itmt_prio,
        eas,
        speed_ix,
        cores,
        domains,
        pol,
        policies,
        aperf: vec![super::dvfs::Aperf::running(); n],
        core_c0,
        tick_scale: if tick_sampled_scale { vec![super::dvfs::TickScale::boot(); n] } else { Vec::new() },
        vdomains,
        pkg_energy,
        turbo_active_depths,
        turbo_opps,
        package_turbo,
        packages,
        energy_check_mj: 0.0,
        total_power_mw: 0.0,
        energy_check_ns: 0,
        tasks: Vec::new(),
        templates: setup.templates.clone(),
        template_programs: setup.templates.iter().map(|s| std::rc::Rc::new(crate::workload::Program::clone(&s.program))).collect(),
        chans: Vec::new(),
        mutexes: Vec::new(),
        devices: Vec::new(),
        sources: Vec::new(),
        sync: SyncRt::default(),
        live_tasks: 0,
        next_pid: 1000,
        cpufreq,
        cpufreq_hook,
        hook_this_cpu: None,
        cpufreq_driver,
        cpuidle,
        workload,
        record,
        trace,
        trace_main_marked: false,
        stopped_early: false,
        fault: None,
        external_governors: false,
        rt_dl_used: false,
        // A task may join a group later (a per-phase taskgroup).
        sched_ext: !setup.groups.is_empty(),
        uclamp_used: false,
        rt_period_armed: false,
        rt_period_gen: 0,
        rt_runtime_ns: Some(crate::sched::rt::RT_RUNTIME_NS),
        rt_period_ns: crate::sched::rt::RT_PERIOD_NS,
        dl_total_bw: 0,
        groups: super::fair_group::build_groups(&setup.groups, n),
        group_rq_weight: vec![0; n],
        nohz_blocked,
        nohz_has_blocked: false,
        nohz_next_blocked_j: 0,
        nohz_kicked: None,
        nohz_kick_flags: 0,
        nohz_next_balance_j: 0,
        tick_stopped_mask: CpuMask::default(),
        hk,
        kpath,
        intervals: None,
        power_phases: None,
        next_boundary_ns: Time::MAX,
        fork_domains: Vec::new(),
        balance_domains: Vec::new(),
        balance_hz: 1_000_000_000 / tick_ns,
        balance_max_j: super::placement::max_load_balance_interval_j(tick_ns, n),
    };
    e.fork_domains = e.build_fork_domains();
    e.balance_domains = e.build_balance_domains();
    e.init_hardware();
    e.init_workload(&setup)?;
    e.start_power_phases(&setup.power_phases);
    e.start_housekeeping();
    e.q.schedule(duration_ns, Event::End);
    Ok(e)
}

impl Engine {
    /// The trace writer, after the run (its events, for a memory trace:
    /// [`TraceWriter::into_trace`]).
    pub fn take_trace(&mut self) -> Option<TraceWriter> {
        self.trace.take()
    }

    /// Bring the hardware to its boot state and start both governors.
    fn init_hardware(&mut self) {
        for d in 0..self.domains.len() {
            self.init_domain_voltage(d);
        }
        if let Some(t) = self.trace.as_mut() {
            // The boot clocks, so a reader of the trace knows every CPU's
            // frequency from the start (LISA's devlib writes markers for this).
            for (cpu, c) in self.plat.cpus.iter().enumerate() {
                t.cpu_frequency(0, cpu, self.domains[c.freq_domain].cur_khz);
            }
        }
        for core in 0..self.cores.len() {
            self.refresh_core_power(core);
        }
        self.cpuidle.seed(self.seed);
        for cpu in 0..self.plat.nr_cpus() {
            let states = &self.plat.cpu_type_of(cpu).idle_states;
            let dev = IdleDevice { cpu, states, disabled: &self.idle_disabled[cpu] };
            self.cpuidle.enable(&dev);
        }
        for p in 0..self.policies.len() {
            self.governor_start(p);
        }
        self.start_power_limits();
        // Every CPU starts idle.
        for cpu in 0..self.plat.nr_cpus() {
            self.enter_idle(cpu);
        }
    }

    /// Run to the end. `progress` is called every few thousand events with
    /// (simulated ns done, total); returning false stops the run.
    pub fn run(&mut self, progress: Option<&mut dyn FnMut(u64, u64) -> bool>) -> Result<RunResult> {
        let mut progress = progress;
        let mut countdown: u32 = 1 << 14;
        while let Some((t, ev)) = self.q.pop() {
            debug_assert!(t >= self.now, "time went backwards at {t} ns: {ev:?}");
            if t > self.next_boundary_ns {
                self.cross_boundaries(t);
            }
            self.now = t;
            if ev == Event::End {
                self.events += 1;
                break;
            }
            // Only events that still apply count; overtaken ones are dropped.
            if self.dispatch(ev) {
                self.events += 1;
            }
            if self.fault.is_some() || self.external_governors {
                if let Some(err) = self.take_fault() {
                    return Err(err);
                }
            }
            if self.live_tasks == 0 && !self.tasks.is_empty() && self.sources.is_empty() {
                self.record.finished = true;
                break;
            }
            countdown -= 1;
            if countdown == 0 {
                countdown = 1 << 14;
                if let Some(p) = progress.as_deref_mut() {
                    if !p(self.now, self.end_ns) {
                        self.stopped_early = true;
                        return Err(crate::error::Error::Interrupted);
                    }
                }
            }
        }
        if let Some(p) = progress {
            p(self.now, self.end_ns);
        }
        self.finish()
    }

    /// Apply one event; false if it had been overtaken.
    fn dispatch(&mut self, ev: Event) -> bool {
        match ev {
            Event::RunDone { cpu, gen } => {
                let cpu = cpu as usize;
                self.rqs[cpu].run_gen == gen && self.run_segment_done(cpu)
            }
            Event::TaskTimer { task, gen } => {
                let task = task as usize;
                let live = self.tasks[task].timer_gen == gen;
                if live {
                    self.task_timer_fired(task);
                }
                live
            }
            Event::IdleExitDone { cpu, gen } => {
                let cpu = cpu as usize;
                let live = self.rqs[cpu].idle_gen == gen;
                if live {
                    self.idle_exit_done(cpu);
                }
                live
            }
            Event::IdleEntryDone { cpu, gen } => {
                let cpu = cpu as usize;
                let live = self.rqs[cpu].idle_entry_gen == gen;
                if live {
                    self.idle_entry_done(cpu);
                }
                live
            }
            Event::PollLimit { cpu, gen } => {
                let cpu = cpu as usize;
                let live = self.rqs[cpu].idle_gen == gen;
                if live {
                    self.poll_time_limit(cpu);
                }
                live
            }
            Event::Tick { cpu, gen } => {
                let cpu = cpu as usize;
                self.rqs[cpu].tick_gen == gen && self.scheduler_tick(cpu)
            }
            Event::IoDone { device, slot } => {
                self.io_done(device as usize, slot as usize);
                true
            }
            Event::Arrival { source } => {
                self.source_arrival(source as usize);
                true
            }
            Event::FreqDone { domain, gen } => {
                let d = domain as usize;
                let live = self.domains[d].gen == gen;
                if live {
                    self.freq_transition_done(d);
                }
                live
            }
            Event::GovTimer { policy, gen } => {
                let p = policy as usize;
                let live = self.policies[p].timer_gen == gen;
                if live {
                    self.governor_timer_fired(p);
                }
                live
            }
            Event::PcuTick { package } => {
                self.pcu_tick(package as usize);
                true
            }
            Event::LimitTick { package } => {
                self.power_limit_tick(package as usize);
                true
            }
            Event::HwpTick { policy, gen } => self.hwp_tick(policy as usize, gen),
            Event::DriverTimer { policy, gen } => self.driver_timer(policy as usize, gen),
            Event::RtPeriod { gen } => self.rt_period_timer(gen),
            Event::DlTimer { task, gen } => self.dl_task_timer(task as usize, gen),
            Event::Housekeeping { cpu } => self.housekeeping_due(cpu as usize),
            Event::End => true,
        }
    }

    /// Current simulated time, ns.
    pub fn now(&self) -> Time {
        self.now
    }

    pub fn platform(&self) -> &Platform {
        &self.plat
    }
}

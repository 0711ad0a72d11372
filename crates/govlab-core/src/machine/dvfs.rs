//! Clock and voltage hardware (a domain's PLL, its voltage regulator and
//! the package's power controller): how a requested OPP becomes the running
//! frequency.
//!
//! A frequency domain runs at one OPP at a time. A change takes the
//! transition latency once the voltage is in place; when the new OPP needs
//! more voltage than its voltage domain has, the regulator first slews up at
//! `slew_mv_per_us`, and the frequency switches only after that. Lowering
//! the frequency is never held up: the clock drops after the transition
//! latency and the rail then falls to the highest voltage any domain on it
//! still needs. One transition is in flight per domain; a request that
//! arrives meanwhile is applied when it completes.
//!
//! A domain may also hold its voltage domain above what its clock needs: the
//! rail then sits at the voltage of its `volt_opp` if that is higher
//! (powernv's global P-state). Lowering that floor lowers the rail at once;
//! a clock that later climbs back within the voltage held switches after the
//! transition latency alone.
//!
//! Turbo OPPs are granted by the package's power controller (PCU) only up to
//! the limit for the number of active cores, re-evaluated every
//! [`PCU_INTERVAL_NS`] while some domain of the package asks for turbo.
//!
//! Where the package has a power limit (RAPL's PL1, POWER's OCC power cap),
//! the controller also holds the package's power to it, in a loop of its
//! own that runs for the whole run, every [`PCU_INTERVAL_NS`] (every
//! [`LIMIT_IDLE_INTERVAL_NS`] while far under the limit). Every step it
//! reads the package domain's energy (cores and uncore) since the last and
//! folds that power into an exponential average with the limit's time
//! window, as RAPL averages for PL1 (Intel SDM vol. 3B, "Package RAPL
//! Domain": power "over a time window"). While both the average and the last step's power exceed the
//! limit, it lowers the package's clock ceiling one OPP below the fastest
//! clock running; whenever a tick's power is under the limit it raises the
//! ceiling one OPP. A package that has been light keeps its budget (the
//! average is low), so a burst runs at full speed until the average reaches
//! the limit; under sustained load the clock settles where the power meets
//! the limit, a tick's power alternating around it. Both vendors' control
//! loops are firmware whose steps are not published: the one-OPP step per
//! [`PCU_INTERVAL_NS`] is assumed.

use super::hwp::HwpRt;
use super::powernv::GlobalPstateInfo;
use super::{Engine, Event};
use crate::platform::{CpuId, Driver, FreqDomain, Platform};
use crate::sim::Time;

/// How often the package power controller re-evaluates turbo limits
/// (assumed: Intel's PCU works on a ~1 ms control loop).
pub const PCU_INTERVAL_NS: Time = 1_000_000;

/// The power-limit loop's step while the package's power, last tick and
/// averaged, is under half its limit: no ceiling can follow from such a
/// step, and the energy read at the next step covers the whole gap, so
/// only the reaction to a sudden load is delayed, by at most this. A
/// simulation economy, not a hardware figure.
const LIMIT_IDLE_INTERVAL_NS: Time = 10 * PCU_INTERVAL_NS;

/// `khz` on the 0..=1024 scale of the invariance reference `ref_khz`,
/// truncated and capped at 1024 (x86 caps APERF/MPERF ratios above the
/// n-core turbo ratio the same way); a reference of 0 means no frequency
/// invariance: always 1024.
fn scale_of(khz: u32, ref_khz: u32) -> u64 {
    if ref_khz == 0 {
        return 1024;
    }
    ((u64::from(khz) << 10) / u64::from(ref_khz)).min(1024)
}

/// Runtime state of a hardware clock domain: the clock its policies'
/// requests resolve to (see [`Engine::resolve_domain`]).
#[derive(Debug, Clone)]
pub struct DomainRt {
    /// The domain's package and CPU type (its platform entry's), read by
    /// every grant, and its voltage domain, read with its clock by the
    /// energy ledger.
    pub package: usize,
    pub cpu_type: usize,
    pub voltage_domain: usize,
    /// OPP the clock runs at now (index into the cpu type's table).
    pub cur_opp: usize,
    pub cur_khz: u32,
    /// The voltage `cur_opp` needs, mV, kept with it.
    pub cur_mv: u32,
    /// `cur_khz`'s place among its package's clocks in the energy ledger
    /// (`PackageEnergy::busy_at_khz`), kept with it, and each OPP's.
    pub ledger_slot: usize,
    pub opp_ledger_slots: Vec<usize>,
    /// The highest OPP whose voltage a policy of the domain holds its rail
    /// at ([`PolicyRt::volt_opp`]), kept with them; 0: no floor.
    pub volt_floor_opp: usize,
    /// `cur_khz` against `freq_ref_khz`, 0..=1024
    /// (arch_scale_freq_capacity), kept with `cur_khz`.
    pub freq_scale: u64,
    /// The frequency that is 1024 for frequency invariance (kernel::FreqInvariance),
    /// kHz; 0 when the kernel has none.
    pub freq_ref_khz: u32,
    /// The resolved request (before the turbo grant): the highest of its
    /// policies' requests, as [`Engine::resolve_domain`] votes them.
    pub req_opp: usize,
    /// `req_opp` is a turbo OPP (what each PCU tick asks of every domain
    /// of its package).
    pub req_turbo: bool,
    /// Transition in flight: target OPP.
    pub in_flight: Option<usize>,
    /// The turbo limit (the highest OPP granted for the package's active
    /// cores) when a PCU tick last found the clock at its grant; None once
    /// the request, the clock or the ceiling moved since (the domain's part
    /// of the package's `pcu_asked_at`).
    pub granted_at: Option<usize>,
    /// Generation of the in-flight transition's event.
    pub gen: u32,
    /// Accounting: ns per OPP and number of frequency changes.
    pub time_in_opp_ns: Vec<u64>,
    pub since_ns: Time,
    pub transitions: u64,
    /// More than one policy requests this clock: the hardware resolves
    /// their votes when one changes or a CPU enters or leaves idle.
    pub shared: bool,
}

/// Runtime state of a cpufreq policy (struct cpufreq_policy and the
/// driver's per-policy data), and the request its CPUs' registers hold.
#[derive(Debug, Clone)]
pub struct PolicyRt {
    /// The clock domain the policy's CPUs run on.
    pub domain: usize,
    /// OPP the policy's CPUs ask the hardware for (PERF_CTL, the HWP
    /// hardware's level, PMCR's local P-state, or the clock's rate).
    pub req_opp: usize,
    /// Policy limits, kHz.
    pub min_khz: u32,
    pub max_khz: u32,
    /// Frequency the governor last set (policy->cur), kHz.
    pub cur_khz: u32,
    /// Governor timer: generation, and whether it is deferrable and waiting
    /// for a CPU of the policy to wake.
    pub timer_gen: u32,
    pub timer_deferrable: bool,
    pub timer_deferred: bool,
    /// The HWP hardware, once the OS enabled it with a first request.
    pub hwp: Option<HwpRt>,
    /// The OPP whose voltage the policy holds its rail at, at least
    /// (powernv's global P-state; 0 = no floor beyond the clock's need).
    pub volt_opp: usize,
    /// powernv's per-policy ramp-down state (policy->driver_data).
    pub gpstate: GlobalPstateInfo,
    /// The driver's own timer (powernv's gpstate timer): generation, and
    /// whether it expired while the policy idled (it is deferrable).
    pub driver_timer_gen: u32,
    pub driver_timer_deferred: bool,
    /// Its CPUs whose APERF counts (in C0: they vote for the clock), kept
    /// with the counters by `clock_vote_changed` so that a vote reads one
    /// count instead of every CPU's counter.
    pub c0_cpus: u32,
}

impl PolicyRt {
    /// Policy of clock domain `d` over `cpus` CPUs, asking for the
    /// domain's boot OPP; its CPUs start in C0, as their APERF does.
    pub fn new(plat: &Platform, d: usize, dom: &DomainRt, cpus: usize) -> Self {
        let ct = plat.domain_type(d);
        PolicyRt {
            c0_cpus: cpus as u32,
            domain: d,
            req_opp: dom.req_opp,
            min_khz: ct.min_khz(),
            max_khz: ct.max_khz(),
            cur_khz: dom.cur_khz,
            timer_gen: 0,
            timer_deferrable: false,
            timer_deferred: false,
            hwp: None,
            volt_opp: 0,
            gpstate: GlobalPstateInfo::default(),
            driver_timer_gen: 0,
            driver_timer_deferred: false,
        }
    }
}

impl DomainRt {
    /// `lowest`: the scaling driver's init put the clock at its lowest OPP
    /// (`CpufreqDriver::inits_at_min_pstate`).
    pub fn new(plat: &Platform, d: &FreqDomain, freq_ref_khz: u32, shared: bool, lowest: bool) -> Self {
        let ct = &plat.cpu_types[d.cpu_type];
        // Boot frequency: the lowest OPP where the driver's init asks for
        // it; else the highest non-turbo OPP (assumed: what most firmware
        // leaves the clock at when the kernel takes over).
        let boot = if lowest { 0 } else { ct.opp_index(ct.base_khz).unwrap_or(0) };
        DomainRt {
            package: d.package,
            cpu_type: d.cpu_type,
            voltage_domain: d.voltage_domain,
            cur_opp: boot,
            cur_khz: ct.opps[boot].khz,
            cur_mv: ct.opps[boot].mv,
            ledger_slot: 0,
            opp_ledger_slots: Vec::new(),
            volt_floor_opp: 0,
            freq_scale: scale_of(ct.opps[boot].khz, freq_ref_khz),
            freq_ref_khz,
            req_opp: boot,
            req_turbo: ct.opps[boot].turbo,
            in_flight: None,
            granted_at: None,
            gen: 0,
            time_in_opp_ns: vec![0; ct.opps.len()],
            since_ns: 0,
            transitions: 0,
            shared,
        }
    }

    /// Close the frequency accounting at `now`.
    fn account_until(&mut self, now: Time) {
        let dt = now - self.since_ns;
        self.time_in_opp_ns[self.cur_opp] += dt;
        self.since_ns = now;
    }
}

/// A CPU's APERF and MPERF, as turbostat reads them: the clock's cycles
/// and the time while the CPU is in C0 (both stop in C1 and deeper; Intel
/// SDM vol. 3B §14.2, "IA32_APERF ... counts ... in C0"). Their ratio is the
/// CPU's effective clock while busy, turbostat's Bzy_MHz.
#[derive(Debug, Clone, Copy, Default)]
pub struct Aperf {
    /// ∫ clock dt over C0 time, kHz·ns, up to `since`.
    pub khz_ns: u128,
    /// C0 time up to `since`, ns.
    pub c0_ns: u64,
    /// Counting since then (in C0), or stopped.
    since: Option<Time>,
}

impl Aperf {
    /// A CPU that starts in C0 at time 0.
    pub fn running() -> Self {
        Aperf { since: Some(0), ..Aperf::default() }
    }

    /// Bring the counters up to `now` at clock `khz` (unchanged since the
    /// last call).
    #[inline]
    pub fn advance(&mut self, now: Time, khz: u32) {
        if let Some(t) = self.since {
            let dt = now - t;
            self.khz_ns += u128::from(dt) * u128::from(khz);
            self.c0_ns += dt;
            self.since = Some(now);
        }
    }

    /// (APERF, MPERF) at `now`, the clock at `khz` since the last update.
    pub fn read(&self, now: Time, khz: u32) -> (u128, u64) {
        let mut at = *self;
        at.advance(now.max(self.since.unwrap_or(now)), khz);
        (at.khz_ns, at.c0_ns)
    }

    /// Whether the CPU is in C0 (counting; it votes for its clock).
    #[inline]
    pub fn in_c0(&self) -> bool {
        self.since.is_some()
    }

    /// The CPU enters (`c0`) or leaves C0 at `now`, the clock at `khz`.
    #[inline]
    fn switch(&mut self, c0: bool, now: Time, khz: u32) {
        self.advance(now, khz);
        self.since = c0.then_some(now);
    }

    /// The average clock over C0 time, kHz; None before any.
    pub fn avg_khz(&self) -> Option<f64> {
        (self.c0_ns > 0).then(|| self.khz_ns as f64 / self.c0_ns as f64)
    }
}

/// x86's per-CPU frequency-invariance scale (v5.7 arch/x86/kernel/smpboot.c
/// arch_scale_freq_tick(), 1567c3e3467c; AMD's from v5.11, 41ea667227ba,
/// on the same path): at each scheduler tick of the CPU, before the tick's
/// rq clock and PELT update, the APERF over the MPERF delta since its last
/// sample (both count in C0 only: the clock averaged over the CPU's busy
/// time since) over `arch_max_freq_ratio`, the invariance reference,
/// capped at 1024. Between ticks, and through an idle period with the tick
/// stopped, the scale stays at its last sample. Before the first tick it is
/// SCHED_CAPACITY_SCALE (the per-CPU `arch_freq_scale` default), and
/// `init_counter_refs()` took the counters' values at boot (0 here).
#[derive(Debug, Clone, Copy, Default)]
pub struct TickScale {
    /// `arch_freq_scale`, 0..=1024.
    pub scale: u64,
    /// APERF and MPERF at the last sample (`arch_prev_aperf`, `arch_prev_mperf`).
    aperf: u128,
    mperf: u64,
}

impl TickScale {
    /// A CPU at boot.
    pub fn boot() -> Self {
        TickScale { scale: 1024, ..TickScale::default() }
    }

    /// Sample the counters (`aperf`, `mperf`: kHz·ns and ns of C0) against
    /// the reference `ref_khz`. v5.7 returns without a sample (the scale and
    /// the previous counters as they were) when MPERF has not moved; the
    /// later overflow checks (e2b0d619b400) cannot trigger within a run
    /// (2^44 APERF cycles between two ticks, hours at 4 GHz). The kernel's
    /// `arch_max_freq_ratio` is the reference ratio over the base ratio
    /// truncated to 1/1024; here the exact reference (a difference of at
    /// most one unit of the scale).
    pub fn sample(&mut self, aperf: u128, mperf: u64, ref_khz: u32) {
        let (acnt, mcnt) = (aperf - self.aperf, mperf - self.mperf);
        let den = u128::from(mcnt) * u128::from(ref_khz);
        if den == 0 {
            return;
        }
        self.scale = ((acnt << 10) / den).min(1024) as u64;
        self.aperf = aperf;
        self.mperf = mperf;
    }
}

/// Runtime state of a voltage rail.
#[derive(Debug, Clone, Default)]
pub struct VoltageRt {
    pub mv: u32,
}

/// Per CPU type, the highest OPP within the turbo limit with each count of
/// active cores, from none to the largest package's cores: what
/// `granted_opp` caps a turbo request at, computed once.
pub(crate) fn turbo_opps(plat: &Platform) -> Vec<Vec<usize>> {
    let most = plat.packages.iter().map(|p| p.cores.len()).max().unwrap_or(0);
    plat.cpu_types.iter().map(|ct| (0..=most).map(|n| ct.opp_at_most(ct.turbo_limit_khz(n))).collect()).collect()
}

/// Per package, its clock domains that request a turbo OPP at boot, as bits
/// by domain index: what each PCU tick walks (`pcu_tick`), kept with
/// `req_turbo` by `request_opp`.
pub(crate) fn package_turbo(plat: &Platform, domains: &[DomainRt]) -> Vec<Vec<u64>> {
    let mut turbo = vec![vec![0u64; domains.len().div_ceil(64)]; plat.packages.len()];
    for (d, dom) in domains.iter().enumerate() {
        if dom.req_turbo {
            turbo[dom.package][d / 64] |= 1 << (d % 64);
        }
    }
    turbo
}

/// Per package, the number of leading idle states of its cores that count
/// as active for the turbo budget, when the energy ledger's counts of cores
/// by depth (machine/energy.rs) answer `active_cores`: one CPU type, whose
/// turbo-active states are its shallowest ones, and states chosen on entry
/// (a state chosen in hindsight is not the ledger's provisional one). None:
/// count by asking each CPU.
pub(crate) fn turbo_active_depths(plat: &Platform, hindsight: bool) -> Vec<Option<usize>> {
    plat.packages
        .iter()
        .map(|p| {
            let mut types = p.cores.iter().map(|&c| plat.cores[c].cpu_type);
            let t = types.next()?;
            if hindsight || types.any(|u| u != t) {
                return None;
            }
            let states = &plat.cpu_types[t].idle_states;
            let depth = states.iter().take_while(|s| s.turbo_active).count();
            states[depth..].iter().all(|s| !s.turbo_active).then_some(depth)
        })
        .collect()
}

impl Engine {
    /// The voltage domain `d` needs: its clock's, or its policies' highest
    /// floor if higher. A power-limit ceiling clips the floor as it clips
    /// the clock (the OCC's vote limits the chip's P-states, global ones
    /// included).
    fn domain_mv(&self, d: usize) -> u32 {
        let dom = &self.domains[d];
        if dom.volt_floor_opp == 0 {
            return dom.cur_mv;
        }
        let cap = self.packages[self.plat.freq_domains[d].package].cap_opp;
        self.plat.domain_type(d).opps[dom.cur_opp.max(dom.volt_floor_opp.min(cap))].mv
    }

    /// Set the OPP whose voltage policy `p` holds its domain's rail at
    /// (powernv's global P-state). A lower floor lowers the rail now; a
    /// higher one takes effect when the clock next switches (the regulator
    /// slews first).
    pub(crate) fn set_volt_opp(&mut self, p: usize, opp: usize) {
        self.policies[p].volt_opp = opp;
        let d = self.policies[p].domain;
        self.domains[d].volt_floor_opp = self.pol.of_domain[d].iter().map(|&q| self.policies[q].volt_opp).max().unwrap_or(0);
        let vd = self.plat.freq_domains[d].voltage_domain;
        let rail = self.rail_mv(vd);
        if rail < self.vdomains[vd].mv {
            self.vdomains[vd].mv = rail;
            for i in 0..self.plat.voltage_domains[vd].freq_domains.len() {
                let fd = self.plat.voltage_domains[vd].freq_domains[i];
                self.refresh_domain_power(fd);
            }
        }
    }

    /// What rail `vd` must supply: the highest need of its domains.
    fn rail_mv(&self, vd: usize) -> u32 {
        self.plat.voltage_domains[vd]
            .freq_domains
            .iter()
            .map(|&fd| self.domain_mv(fd))
            .max()
            .unwrap_or(0)
    }

    pub(crate) fn init_domain_voltage(&mut self, d: usize) {
        let vd = self.plat.freq_domains[d].voltage_domain;
        let mv = self.plat.domain_type(d).opps[self.domains[d].cur_opp].mv;
        self.vdomains[vd].mv = self.vdomains[vd].mv.max(mv);
    }

    /// Policy `p`'s CPUs ask the hardware for OPP `opp` (the driver wrote
    /// their registers, or the HWP hardware chose it).
    pub(crate) fn policy_request(&mut self, p: usize, opp: usize) {
        self.policies[p].req_opp = opp;
        self.resolve_domain(self.policies[p].domain);
    }

    /// Whether `cpu` is active, in C0, for its clock domain's resolution.
    /// The Intel datasheets resolve a shared clock to "the highest
    /// frequency P-state requested among all active cores" (6th Gen Intel
    /// Core / Xeon E3-1200 v5 Datasheet Vol. 1, §4.2.1 "Enhanced Intel
    /// SpeedStep Technology"; the same sentence in the Xeon E5-2600 v2/v3/v4
    /// datasheets, §4.2.1) and count for turbo "the number of cores
    /// operating in the C0 state" (§3.x "Intel Turbo Boost Technology"):
    /// an active core is one in C0. A CPU in a polling state is in C0 to
    /// the hardware; one in C1 or deeper (halted, clock gated) is not. A
    /// CPU leaving idle is active from the interrupt on (the core powers up
    /// to run at the resolved clock). Which requests an active core makes
    /// is [`Self::voted_opp`]'s.
    #[inline]
    fn cpu_votes(&self, cpu: CpuId) -> bool {
        match self.rqs[cpu].idle_state() {
            None => true,
            Some(s) => s == 0 && self.polls_in_state0.test(cpu),
        }
    }

    /// The hardware resolves clock domain `d`'s request: the highest
    /// request among the policies with a voting CPU ([`Self::cpu_votes`]).
    /// When no CPU of the domain votes there is nothing to resolve and the
    /// highest standing request stands; a domain of one policy (cpufreq-dt's
    /// clusters, POWER8's cores) therefore always runs its policy's request.
    /// With HWP each policy's level is the one its HWP hardware chose
    /// (machine/hwp.rs) and the domain resolves the same way (assumed: the
    /// SDM, vol. 3B §14.4, leaves the resolution of logical processors
    /// sharing a clock to the hardware). POWER9's quad runs the fastest
    /// request of its cores' by the same rule (assumed, see power9.toml).
    pub(crate) fn resolve_domain(&mut self, d: usize) {
        let opp = if self.domains[d].shared { self.voted_opp(d) } else { self.policies[self.pol.of_domain[d][0]].req_opp };
        self.request_opp(d, opp);
    }

    /// The highest request among domain `d`'s voting policies, else among
    /// all. A policy votes while a CPU of it is active. On an Intel part
    /// without HWP (intel_pstate writing IA32_PERF_CTL) it also votes while
    /// any other thread of its core is: an active core asks for the highest
    /// of its threads' PERF_CTL requests, whatever state its idle threads
    /// are in. That is why intel_pstate drops a CPU's request to the lowest
    /// P-state when the CPU goes offline (bb18008f8086, "intel_pstate: Set
    /// core to min P state during core offline", v3.15, so as not to
    /// restrict its SMT siblings; v5.9's offline callback says it: an
    /// offline thread, in its deepest idle state, "with the performance
    /// settings different from the minimum, it will prevent its sibling
    /// from getting to lower performance levels"; docs/research/sources.md
    /// C.21). With HWP on, a level is the hardware's own choice for a
    /// thread it sees run, and an idle thread's counts only while the
    /// thread is active (assumed: the kernel's offline path lowers HWP's
    /// minimum, the rest is the hardware's); so do other vendors' threads
    /// (assumed: no source read for them). A CPU's activity is kept with
    /// its APERF (counting while in C0, [`Self::clock_vote_changed`]).
    fn voted_opp(&self, d: usize) -> usize {
        let perf_ctl_per_core = !self.hwp && matches!(self.plat.driver, Driver::IntelPstate { .. });
        let (mut voted, mut voters, mut any) = (0, false, 0);
        for &p in &self.pol.of_domain[d] {
            let pol = &self.policies[p];
            any = any.max(pol.req_opp);
            let core_active = || self.core_c0[self.plat.cpus[self.pol.cpus[p][0]].core] > 0;
            if pol.c0_cpus > 0 || (perf_ctl_per_core && core_active()) {
                voted = voted.max(pol.req_opp);
                voters = true;
            }
        }
        if voters {
            voted
        } else {
            any
        }
    }

    /// `cpu` entered or left idle: its APERF stops or starts counting, and
    /// a shared clock re-resolves its votes.
    #[inline(always)]
    pub(crate) fn clock_vote_changed(&mut self, cpu: CpuId) {
        let d = self.plat.cpus[cpu].freq_domain;
        let c0 = self.cpu_votes(cpu);
        if c0 == self.aperf[cpu].in_c0() {
            return;
        }
        let (now, khz) = (self.now, self.domains[d].cur_khz);
        self.aperf[cpu].switch(c0, now, khz);
        let pc0 = &mut self.policies[self.pol.of_cpu[cpu]].c0_cpus;
        *pc0 = if c0 { *pc0 + 1 } else { *pc0 - 1 };
        let cc0 = &mut self.core_c0[self.plat.cpus[cpu].core];
        *cc0 = if c0 { *cc0 + 1 } else { *cc0 - 1 };
        if self.domains[d].shared {
            let opp = self.voted_opp(d);
            if opp != self.domains[d].req_opp {
                self.request_opp(d, opp);
            }
        }
    }

    /// The hardware of clock domain `d` was asked for OPP `opp`.
    fn request_opp(&mut self, d: usize, opp: usize) {
        let turbo = self.plat.domain_type(d).opps[opp].turbo;
        self.domains[d].req_opp = opp;
        self.domains[d].req_turbo = turbo;
        self.domains[d].granted_at = None;
        let pkg = self.plat.freq_domains[d].package;
        let word = &mut self.package_turbo[pkg][d / 64];
        *word = if turbo { *word | 1 << (d % 64) } else { *word & !(1 << (d % 64)) };
        self.packages[pkg].pcu_asked_at = None;
        if turbo {
            if !self.packages[pkg].pcu_armed {
                self.packages[pkg].pcu_armed = true;
                self.q.schedule(self.now + PCU_INTERVAL_NS, Event::PcuTick { package: pkg as u32 });
            }
        }
        self.kick_transition(d);
    }

    /// The OPP the hardware grants for the current request: under the
    /// package's power-limit ceiling, and a turbo OPP only within the turbo
    /// limit for the package's active cores (counted once into `active`
    /// when it is None and a turbo OPP is asked for).
    fn granted_opp(&self, d: usize, active: &mut Option<usize>) -> usize {
        let dom = &self.domains[d];
        let req = dom.req_opp.min(self.packages[dom.package].cap_opp);
        // `req_turbo` says whether the request is a turbo OPP; a ceiling
        // below it asks the table.
        let turbo = if req == dom.req_opp { dom.req_turbo } else { self.plat.domain_type(d).opps[req].turbo };
        if !turbo {
            return req;
        }
        let active = *active.get_or_insert_with(|| self.active_cores(dom.package));
        req.min(self.turbo_opps[dom.cpu_type][active])
    }

    /// Cores of a package that count as active for the turbo budget.
    #[inline]
    fn active_cores(&self, pkg: usize) -> usize {
        let Some(depth) = self.turbo_active_depths[pkg] else { return self.active_cores_walked(pkg) };
        // The energy ledger's counts (machine/energy.rs) hold the answer:
        // a core is active unless all its threads idle past the turbo-active
        // states, and then its depth is its shallowest thread's state.
        let pe = &self.pkg_energy[pkg];
        let shallow = &pe.idle_at_depth[..depth.min(pe.idle_at_depth.len())];
        let active = pe.awake_cores as usize + shallow.iter().map(|&n| n as usize).sum::<usize>();
        if cfg!(test) {
            assert_eq!(active, self.active_cores_walked(pkg), "package {pkg}'s active cores at {} ns", self.now);
        }
        active
    }

    /// [`Self::active_cores`] by asking every CPU of the package.
    #[inline(never)]
    fn active_cores_walked(&self, pkg: usize) -> usize {
        self.plat.packages[pkg]
            .cores
            .iter()
            .filter(|&&core| {
                let pc = &self.plat.cores[core];
                let states = &self.plat.cpu_types[pc.cpu_type].idle_states;
                pc.cpus.iter().any(|&cpu| match self.idle_state_seen(cpu) {
                    None => true,
                    Some(s) => states[s].turbo_active,
                })
            })
            .count()
    }

    /// Start a transition towards the granted OPP if none is in flight.
    fn kick_transition(&mut self, d: usize) {
        self.kick_transition_counted(d, &mut None);
    }

    /// [`Self::kick_transition`] with the package's active cores, if
    /// already counted since they last changed (see [`Self::granted_opp`]).
    #[inline]
    fn kick_transition_counted(&mut self, d: usize, active: &mut Option<usize>) {
        if self.domains[d].in_flight.is_some() {
            return;
        }
        let target = self.granted_opp(d, active);
        if target != self.domains[d].cur_opp {
            self.start_transition(d, target);
        }
    }

    /// Domain `d`'s clock starts towards OPP `target`, after the regulator
    /// has slewed up if it needs more voltage.
    #[inline(never)]
    fn start_transition(&mut self, d: usize, target: usize) {
        let ct = self.plat.domain_type(d);
        let vd = self.plat.freq_domains[d].voltage_domain;
        let need_mv = ct.opps[target].mv;
        let have_mv = self.vdomains[vd].mv;
        let mut delay = ct.transition_latency_ns;
        if need_mv > have_mv {
            let slew = self.plat.voltage_domains[vd].slew_mv_per_us;
            delay += (f64::from(need_mv - have_mv) / slew * 1000.0).ceil() as u64;
        }
        self.packages[self.plat.freq_domains[d].package].pcu_asked_at = None;
        let dom = &mut self.domains[d];
        dom.in_flight = Some(target);
        dom.granted_at = None;
        dom.gen = dom.gen.wrapping_add(1);
        self.q.schedule(self.now + delay, Event::FreqDone { domain: d as u32, gen: dom.gen });
    }

    /// The clock of domain `d` switches now.
    pub(crate) fn freq_transition_done(&mut self, d: usize) {
        let Some(target) = self.domains[d].in_flight.take() else { return };
        self.domains[d].granted_at = None;
        self.packages[self.plat.freq_domains[d].package].pcu_asked_at = None;
        let nr_cpus = self.plat.freq_domains[d].cpus.len();
        let cpu_at = |e: &Self, i: usize| e.plat.freq_domains[d].cpus[i];
        // PELT clocks advance at the old frequency up to now, where the
        // scale follows the clock (on x86 it moves at the ticks only).
        let old_khz = self.domains[d].cur_khz;
        let scale_moves = self.tick_scale.is_empty();
        for i in 0..nr_cpus {
            let cpu = cpu_at(self, i);
            if scale_moves {
                self.update_rq_clock(cpu);
            }
            self.aperf[cpu].advance(self.now, old_khz);
        }
        let ct = self.plat.domain_type(d);
        let (khz, mv) = (ct.opps[target].khz, ct.opps[target].mv);
        let vd = self.plat.freq_domains[d].voltage_domain;
        let now = self.now;
        let dom = &mut self.domains[d];
        dom.account_until(now);
        dom.cur_opp = target;
        dom.cur_khz = khz;
        dom.ledger_slot = dom.opp_ledger_slots[target];
        dom.cur_mv = mv;
        dom.freq_scale = scale_of(khz, dom.freq_ref_khz);
        dom.transitions += 1;
        // The rail rose before the switch, or falls to what is still needed.
        let rail = self.rail_mv(vd);
        let old_mv = self.vdomains[vd].mv;
        self.vdomains[vd].mv = rail;
        if rail == old_mv {
            self.refresh_domain_power(d);
        } else {
            for i in 0..self.plat.voltage_domains[vd].freq_domains.len() {
                let fd = self.plat.voltage_domains[vd].freq_domains[i];
                self.refresh_domain_power(fd);
            }
        }
        // A policy that is the clock (cpufreq-dt's, POWER8's) says so when
        // the clock has switched (its driver's target returns then); where
        // policies share a clock each says what it asked for, when it asks
        // (machine/cpufreq_driver.rs).
        if !self.domains[d].shared {
            if let Some(t) = self.trace.as_mut() {
                for &cpu in &self.plat.freq_domains[d].cpus {
                    t.cpu_frequency(now, cpu, khz);
                }
            }
        }
        for i in 0..nr_cpus {
            self.retime_segment(cpu_at(self, i));
        }
        self.kick_transition(d);
    }

    /// Start the power-limit loop of every package that has a limit: it
    /// ticks for the whole run.
    pub(crate) fn start_power_limits(&mut self) {
        for pkg in 0..self.packages.len() {
            if self.plat.packages[pkg].power_limit.is_some() {
                self.packages[pkg].last_mj = self.package_domain_mj(pkg);
                self.packages[pkg].last_ns = self.now;
                self.q.schedule(self.now + PCU_INTERVAL_NS, Event::LimitTick { package: pkg as u32 });
            }
        }
    }

    /// The package power limit's step (see the module comment): read the
    /// power over the last tick, average it, and move the ceiling.
    pub(crate) fn power_limit_tick(&mut self, pkg: usize) {
        let Some(limit) = self.plat.packages[pkg].power_limit else { return };
        let now = self.now;
        let mj = self.package_domain_mj(pkg);
        let rt = &mut self.packages[pkg];
        let dt = now - rt.last_ns;
        let tick_mw = if dt == 0 { rt.avg_mw } else { (mj - rt.last_mj) / (dt as f64 * 1e-9) };
        rt.last_mj = mj;
        rt.last_ns = now;
        rt.avg_mw += (tick_mw - rt.avg_mw) * -(-(dt as f64) / limit.window_ns as f64).exp_m1();
        let quiet = rt.cap_opp == usize::MAX && 2.0 * tick_mw.max(rt.avg_mw) < limit.limit_mw;
        let next = if quiet { LIMIT_IDLE_INTERVAL_NS } else { PCU_INTERVAL_NS };
        self.q.schedule(now + next, Event::LimitTick { package: pkg as u32 });
        let rt = &self.packages[pkg];
        let (tick_over, avg_over) = (tick_mw > limit.limit_mw, rt.avg_mw > limit.limit_mw);
        let cap = rt.cap_opp;
        let doms = || (0..self.domains.len()).filter(|&d| self.plat.freq_domains[d].package == pkg);
        let new_cap = if tick_over && avg_over {
            let fastest = doms().map(|d| self.domains[d].cur_opp).max().unwrap_or(0);
            cap.min(fastest).saturating_sub(1)
        } else if !tick_over && cap != usize::MAX {
            let top = doms().map(|d| self.plat.domain_type(d).opps.len() - 1).max().unwrap_or(0);
            if cap + 1 >= top {
                usize::MAX
            } else {
                cap + 1
            }
        } else {
            cap
        };
        if new_cap == cap {
            return;
        }
        let rt = &mut self.packages[pkg];
        rt.cap_opp = new_cap;
        rt.pcu_asked_at = None;
        match (rt.capped_since, new_cap == usize::MAX) {
            (None, false) => rt.capped_since = Some(now),
            (Some(since), true) => {
                rt.capped_ns += now - since;
                rt.capped_since = None;
            }
            _ => {}
        }
        let mut active = None;
        for d in doms().collect::<Vec<_>>() {
            self.domains[d].granted_at = None;
            self.kick_transition_counted(d, &mut active);
        }
    }

    /// Time package `pkg`'s power limit held a ceiling, up to now, ns.
    pub(crate) fn power_limited_ns(&self, pkg: usize) -> Time {
        self.power_limited_ns_at(pkg, self.now)
    }

    /// The same up to `t` (not before the last change of the ceiling).
    pub(crate) fn power_limited_ns_at(&self, pkg: usize, t: Time) -> Time {
        let rt = &self.packages[pkg];
        rt.capped_ns + rt.capped_since.map_or(0, |since| t.saturating_sub(since))
    }

    /// The package's power controller re-evaluates turbo grants.
    pub(crate) fn pcu_tick(&mut self, pkg: usize) {
        // A grant reads the domain's request and clock, the ceiling and the
        // package's active cores: when only the last can have moved since
        // the last tick that asked (`pcu_asked_at`) and it has not, every
        // domain would answer as it did then, and nothing would start (a
        // domain whose transition it started has finished it since, or is
        // still in flight). Some domain asked for turbo then, or the tick
        // would have stopped. Where the ledgers' counts cannot tell the
        // active cores (`turbo_active_depths`), every tick asks.
        let counted = self.turbo_active_depths[pkg].map(|_| self.active_cores(pkg));
        if counted.is_some() && self.packages[pkg].pcu_asked_at == counted {
            self.q.schedule(self.now + PCU_INTERVAL_NS, Event::PcuTick { package: pkg as u32 });
            return;
        }
        // Set first: a transition this tick starts clears it.
        self.packages[pkg].pcu_asked_at = counted;
        let mut any_turbo = false;
        // Kicking a transition leaves every CPU's idle state as it is: the
        // package's active cores are counted once for all its domains. The
        // count reaches a grant only as the turbo limit: a domain found at
        // its grant under the same limit, nothing else it reads having moved
        // since, would be found there again.
        let mut active = counted;
        // The package's domains that ask for turbo, in increasing order,
        // are taken out for the walk (a transition leaves every request as
        // it is) and put back after.
        let turbo = std::mem::take(&mut self.package_turbo[pkg]);
        for (w, &word) in turbo.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let d = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                any_turbo = true;
                let dom = &self.domains[d];
                let limit = counted.map(|n| self.turbo_opps[dom.cpu_type][n]);
                if limit.is_some() && dom.granted_at == limit {
                    continue;
                }
                self.kick_transition_counted(d, &mut active);
                if self.domains[d].in_flight.is_none() {
                    self.domains[d].granted_at = limit;
                }
            }
        }
        self.package_turbo[pkg] = turbo;
        if any_turbo {
            self.q.schedule(self.now + PCU_INTERVAL_NS, Event::PcuTick { package: pkg as u32 });
        } else {
            self.packages[pkg].pcu_armed = false;
        }
    }

    /// Scheduler frequency-invariance factor of a CPU (arch_scale_freq_capacity),
    /// ×1024 (1024 without invariance): on x86 its last tick's sample
    /// ([`TickScale`]); elsewhere (Arm's cpufreq-driven
    /// arch_set_freq_scale(), set at each transition) the current frequency
    /// over the kernel's reference.
    #[inline]
    pub(crate) fn freq_scale(&self, cpu: usize) -> u64 {
        match self.tick_scale.get(cpu) {
            Some(t) => t.scale,
            None => self.domains[self.plat.cpus[cpu].freq_domain].freq_scale,
        }
    }

    /// arch_scale_freq_tick() at a scheduler tick of `cpu` (x86 with
    /// frequency invariance; nothing elsewhere).
    pub(crate) fn arch_scale_freq_tick(&mut self, cpu: usize) {
        if self.tick_scale.is_empty() {
            return;
        }
        let dom = &self.domains[self.plat.cpus[cpu].freq_domain];
        let (aperf, mperf) = self.aperf[cpu].read(self.now, dom.cur_khz);
        let ref_khz = dom.freq_ref_khz;
        self.tick_scale[cpu].sample(aperf, mperf, ref_khz);
    }

    /// Close time_in_state accounting (and the CPUs' APERF) at now.
    pub(crate) fn close_time_in_state(&mut self) {
        let now = self.now;
        for dom in &mut self.domains {
            dom.account_until(now);
        }
        for cpu in 0..self.aperf.len() {
            let khz = self.domains[self.plat.cpus[cpu].freq_domain].cur_khz;
            self.aperf[cpu].advance(now, khz);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Aperf, TickScale};
    use crate::kernel::{BuildCtx, KernelConfig};
    use crate::machine::{Engine, RunParts};
    use crate::params::Spec;
    use crate::platform::load_named;
    use crate::{cpufreq, cpuidle, workload};

    const MS: u64 = 1_000_000;

    /// The turbo budget's active cores read from the energy ledger's counts
    /// are those found by asking every CPU: in a test build `active_cores`
    /// compares the two at every call, here over a Broadwell-EP building a
    /// kernel with 8 jobs (cores waking and sleeping through C1, C1E and C6)
    /// under schedutil, which asks for turbo once the compiles run (the
    /// preparation before them, a chain of short processes, does not get
    /// there: kernbench.rs).
    #[test]
    fn turbo_active_cores_from_the_ledger_are_the_walked_ones() {
        let plat = load_named(&Spec::new("broadwell-2s-e5-2698v4")).unwrap();
        let kernel = KernelConfig::from_spec(&Spec::new("5.2")).unwrap();
        let spec = Spec::new("schedutil");
        let ctx = cpufreq::resolve_ctx(&spec, BuildCtx::new(plat, kernel)).unwrap();
        let parts = RunParts {
            workload: workload::build(&Spec::parse("kernbench:jobs=8,files=40", "workload").unwrap()).unwrap(),
            cpufreq: cpufreq::build_for(&spec, &ctx).unwrap(),
            cpuidle: cpuidle::build(&Spec::new("menu"), &ctx.platform).unwrap(),
            duration_ns: 20_000 * MS,
            seed: 1,
            ctx,
        };
        let mut e: Engine = crate::machine::build(parts, None).unwrap();
        assert_eq!(e.turbo_active_depths, vec![Some(3), Some(3)], "POLL, C1 and C1E count as active");
        e.run(None).unwrap();
        let turbo_ns: u64 = (0..e.domains.len())
            .map(|d| {
                let opps = &e.plat.domain_type(d).opps;
                (0..opps.len()).filter(|&o| opps[o].turbo).map(|o| e.domains[d].time_in_opp_ns[o]).sum::<u64>()
            })
            .sum();
        assert!(turbo_ns > 0, "no turbo was granted: the count was never asked for");
    }

    /// APERF and MPERF count while the CPU is in C0 and stand still while
    /// it idles, whatever the clock does meanwhile; reading them changes
    /// nothing.
    #[test]
    fn aperf_and_mperf_count_only_in_c0() {
        let mut a = Aperf::running();
        assert_eq!(a.read(10 * MS, 2_000_000), (u128::from(10 * MS) * 2_000_000, 10 * MS));
        a.switch(false, 10 * MS, 2_000_000);
        assert_eq!(a.read(30 * MS, 3_600_000), (u128::from(10 * MS) * 2_000_000, 10 * MS), "idle: both stopped");
        a.switch(true, 30 * MS, 3_600_000);
        let (aperf, mperf) = a.read(35 * MS, 3_600_000);
        assert_eq!(mperf, 15 * MS);
        assert_eq!(aperf, u128::from(10 * MS) * 2_000_000 + u128::from(5 * MS) * 3_600_000);
        assert_eq!(a.read(35 * MS, 3_600_000), (aperf, mperf), "a read does not advance the counters");
    }

    /// The tick's sample is the clock averaged over C0 time since the last
    /// sample on the reference's scale, capped at 1024; without C0 time
    /// since (MPERF unmoved) v5.7 keeps the scale and the previous counters.
    #[test]
    fn tick_scale_averages_over_c0_and_skips_an_unmoved_mperf() {
        let ref_khz = 3_600_000;
        let mut a = Aperf::running();
        let mut t = TickScale::boot();
        assert_eq!(t.scale, 1024);
        // 1 ms at 1.8 GHz, 3 ms at 3.6 GHz: 3.15 GHz on average.
        a.advance(MS, 1_800_000);
        let (ap, mp) = a.read(4 * MS, 3_600_000);
        t.sample(ap, mp, ref_khz);
        assert_eq!(t.scale, 3_150_000 * 1024 / 3_600_000);
        // Asleep for the next tick: nothing counted, nothing sampled.
        a.switch(false, 4 * MS, 3_600_000);
        let (ap, mp) = a.read(8 * MS, 1_800_000);
        t.sample(ap, mp, ref_khz);
        assert_eq!(t.scale, 3_150_000 * 1024 / 3_600_000);
        // Awake 1 ms at 1.8 GHz before the next: that millisecond alone.
        a.switch(true, 11 * MS, 1_800_000);
        let (ap, mp) = a.read(12 * MS, 1_800_000);
        t.sample(ap, mp, ref_khz);
        assert_eq!(t.scale, 512);
        // Above the reference: capped.
        a.advance(12 * MS, 1_800_000);
        let (ap, mp) = a.read(16 * MS, 3_900_000);
        t.sample(ap, mp, ref_khz);
        assert_eq!(t.scale, 1024);
    }
}

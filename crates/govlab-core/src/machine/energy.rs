//! Energy integration, the meter of the hardware's power. The power
//! formulas are in [`crate::platform::energy`].
//!
//! Power is constant between events; each core keeps a ledger that is
//! brought up to date (energy += power × elapsed) whenever something its
//! power depends on changes. A second, independent integral of the
//! machine's total power is kept beside it so a test can check that the two
//! agree.
//!
//! A thread whose idle state is chosen in hindsight (the oracle) makes its
//! core's idle power unknown until it chooses. Such a stretch is priced with
//! the thread's provisional state and kept as a [`PendingIdle`]; once every
//! undecided thread in it has chosen, the difference to the true power is
//! added to both the core's ledger and the check integral.
//!
//! Each package keeps a second ledger for what is not a core: the uncore
//! (ring, LLC, memory controller, IO) and its DRAM. A package is in a
//! package C-state while every core of it sits in that state's core state
//! or deeper (a core undecided in hindsight counts as its provisional,
//! shallow state, so the oracle is never credited a package state); then
//! the uncore draws the state's power and the DRAM may be in self-refresh.
//! A coordinated state (Intel's PC2/PC3/PC6 on multi-socket Xeons) is
//! granted only while every package of the machine could enter it: one
//! core awake anywhere keeps every package out of it.
//! In PC0 the uncore clock runs at the clock of the package's fastest
//! running core, within its own limits (`platform::UncorePolicy`), and the
//! DRAM draws its floor plus a term per core in C0. Both follow counts kept
//! as cores change (running cores by their clock), so a package is settled
//! without walking its cores. The package's RAPL domain is its cores plus
//! its uncore; the run's energy is packages plus DRAM.

use super::rq::CpuMode;
use super::Engine;
use crate::platform::energy::{dynamic_mw, idle_mw, leakage_mw};
use crate::sim::{ns_f64, Time};

/// One package's ledger: its uncore and DRAM energy, its package C-state
/// and their residencies.
#[derive(Debug, Clone, Default)]
pub struct PackageEnergy {
    /// The package C-state it is in (None: PC0).
    pub state: Option<usize>,
    /// The deepest package C-state its own cores allow (None: PC0); a
    /// coordinated state also waits for the other packages.
    pub want: Option<usize>,
    pub uncore_khz: u32,
    pub uncore_mw: f64,
    pub dram_mw: f64,
    /// The running cores `dram_mw` was priced for, and whether the two
    /// powers have been priced at all: a settle keeps the uncore's power
    /// while its state and uncore clock are unchanged, the DRAM's while
    /// its state and running cores are.
    pub dram_active: u32,
    pub priced: bool,
    /// Nothing its state and powers are computed from (its cores' counts,
    /// any package's wanted state) has moved since it was last settled:
    /// a settle would find them as they are, and only closes the ledger.
    pub settled: bool,
    pub uncore_mj: f64,
    pub dram_mj: f64,
    pub since_ns: Time,
    /// Time in each package C-state, and entries into it.
    pub residency_ns: Vec<u64>,
    pub entries: Vec<u64>,
    /// ∫ uncore kHz dt over the time in PC0 (kHz·ns), and that time.
    pub uncore_khz_ns: f64,
    pub pc0_ns: u64,
    /// The package's cores by what loads it, kept as cores change so that
    /// a refresh reads counts instead of walking every core: running
    /// cores, cores awake (not in an idle state), and idle cores per
    /// state depth.
    pub busy_cores: u32,
    pub awake_cores: u32,
    pub idle_at_depth: Vec<u32>,
    /// Running cores by their clock: (kHz, cores), in increasing kHz, one
    /// entry for each clock of the package's OPP tables (0: no core runs at it).
    pub busy_at_khz: Vec<(u32, u32)>,
    /// The highest clock in `busy_at_khz` with a core (0: none).
    pub fastest_khz: u32,
}

/// Where a core stands for its package's counts: its idle depth (None:
/// awake), whether it runs, and the place of the clock it runs at in
/// `busy_at_khz` (0 when it does not).
type CoreStand = (Option<usize>, bool, usize);

impl PackageEnergy {
    /// A package of `cores` cores, all awake and not running (as
    /// `CoreEnergy::default()` starts), whose clocks can be `khz` (its
    /// domains' OPPs, in any order, repeats allowed).
    pub fn new(cores: usize, mut khz: Vec<u32>) -> Self {
        khz.sort_unstable();
        khz.dedup();
        let busy_at_khz = khz.into_iter().map(|k| (k, 0)).collect();
        PackageEnergy { awake_cores: cores as u32, busy_at_khz, ..PackageEnergy::default() }
    }

    /// The place of clock `khz` (one of the package's OPPs) in `busy_at_khz`.
    pub fn clock_slot(&self, khz: u32) -> usize {
        self.busy_at_khz.binary_search_by_key(&khz, |&(k, _)| k).expect("a clock of the package's OPP tables")
    }

    /// A core moved from one stand to another.
    #[inline]
    fn move_core(&mut self, (depth, busy, slot): CoreStand, (new_depth, new_busy, new_slot): CoreStand) {
        self.settled = false;
        if busy {
            self.count_busy_at(slot, false);
        }
        if new_busy {
            self.count_busy_at(new_slot, true);
        }
        match depth {
            None => self.awake_cores -= 1,
            Some(d) => self.idle_at_depth[d] -= 1,
        }
        match new_depth {
            None => self.awake_cores += 1,
            Some(d) => {
                if self.idle_at_depth.len() <= d {
                    self.idle_at_depth.resize(d + 1, 0);
                }
                self.idle_at_depth[d] += 1;
            }
        }
        self.busy_cores = self.busy_cores + u32::from(new_busy) - u32::from(busy);
    }

    /// The shallowest idle depth among the package's idle cores.
    fn min_idle_depth(&self) -> usize {
        self.idle_at_depth.iter().position(|&n| n > 0).unwrap_or(usize::MAX)
    }

    /// Count a running core at the clock in place `i` of `busy_at_khz` in
    /// (`add`) or out.
    #[inline]
    fn count_busy_at(&mut self, i: usize, add: bool) {
        let (khz, n) = &mut self.busy_at_khz[i];
        let khz = *khz;
        *n = if add { *n + 1 } else { *n - 1 };
        if add {
            self.fastest_khz = self.fastest_khz.max(khz);
        } else if *n == 0 && khz == self.fastest_khz {
            self.fastest_khz = self.busy_at_khz[..i].iter().rev().find(|&&(_, n)| n > 0).map_or(0, |&(k, _)| k);
        }
    }

    /// Charge the time since the ledger was last closed to the state and
    /// powers it has had since, and close it at `now`.
    #[inline]
    fn close_ledger(&mut self, now: Time) {
        let elapsed_ns = now - self.since_ns;
        self.uncore_mj += self.uncore_mw * ns_f64(elapsed_ns) * 1e-9;
        self.dram_mj += self.dram_mw * ns_f64(elapsed_ns) * 1e-9;
        if let Some(s) = self.state {
            self.residency_ns[s] += elapsed_ns;
        } else {
            self.pc0_ns += elapsed_ns;
            self.uncore_khz_ns += f64::from(self.uncore_khz) * ns_f64(elapsed_ns);
        }
        self.since_ns = now;
    }

    /// The clock of the package's fastest running core, kHz (0: none runs).
    fn fastest_busy_khz(&self) -> u32 {
        self.fastest_khz
    }
}

/// One core's energy ledger. A core leaving an idle state draws that
/// state's power for the exit latency and pays the state's
/// `entry_exit_uj` once, when it wakes: the kernel's target residency is
/// then the break-even time against the next shallower state when
/// `entry_exit_uj` grows by target × (power difference) per state
/// (`platform::energy::break_even_ns`).
#[derive(Debug, Clone, Default)]
pub struct CoreEnergy {
    pub energy_mj: f64,
    pub power_mw: f64,
    pub since_ns: Time,
    /// Unknowns of the stretch since `since_ns` (None: its power is known).
    pub open: Option<PendingIdle>,
    /// Closed stretches priced provisionally, waiting for their threads'
    /// choices.
    pub pending: Vec<PendingIdle>,
    /// How deep the core is now: None while a thread is in C0 or leaving
    /// idle, else the shallowest idle state among its threads.
    pub depth: Option<usize>,
    /// A thread runs (C0, not leaving idle): the core loads the uncore and
    /// the memory.
    pub busy: bool,
    /// The place of the clock it runs at while `busy` in its package's
    /// `busy_at_khz` (0 otherwise).
    pub busy_slot: usize,
}

/// A stretch in which every thread of a core was idle and some had not
/// chosen their state yet.
#[derive(Debug, Clone, Copy)]
pub struct PendingIdle {
    pub duration_ns: Time,
    /// Voltage of the core's rail during the stretch.
    pub mv: u32,
    /// Shallowest state among the threads that have chosen (None: none has).
    pub shallowest_known: Option<usize>,
    /// Threads still to choose, as bits over the core's thread positions.
    pub undecided: u32,
    /// The power the ledger was charged for the stretch.
    pub provisional_mw: f64,
}

impl Engine {
    /// Close the ledger of `core` at now with its old power and compute the
    /// power that holds from now on.
    pub(crate) fn refresh_core_power(&mut self, core: usize) {
        let now = self.now;
        let (new_mw, open, depth, busy) = self.core_power_mw(core);
        let pc = &self.plat.cores[core];
        let pkg = pc.package;
        let busy_slot = if busy { self.domains[pc.freq_domain].ledger_slot } else { 0 };
        let stand = (depth, busy, busy_slot);
        let c = &mut self.cores[core];
        let old = (c.depth, c.busy, c.busy_slot);
        if open.is_none() && c.open.is_none() && new_mw.to_bits() == c.power_mw.to_bits() && old == stand {
            // Nothing moved (a context switch between two tasks, or to
            // the idle task before the idle loop runs): both ledgers are
            // only closed at now, the same additions the full path makes.
            c.energy_mj += c.power_mw * ns_f64(now - c.since_ns) * 1e-9;
            c.since_ns = now;
            if self.pkg_energy[pkg].settled {
                self.close_package(pkg);
            } else {
                self.refresh_package_power(pkg);
            }
            return;
        }
        if let (Some(d), None) = (old.0, depth) {
            // The core wakes: its last state's entry and exit are paid.
            self.charge_entry_exit(core, d);
        }
        if old != stand {
            self.pkg_energy[pkg].move_core(old, stand);
        }
        let c = &mut self.cores[core];
        c.depth = depth;
        c.busy = busy;
        c.busy_slot = busy_slot;
        let elapsed_ns = now - c.since_ns;
        c.energy_mj += c.power_mw * ns_f64(elapsed_ns) * 1e-9;
        if let Some(p) = c.open.take() {
            if elapsed_ns > 0 {
                c.pending.push(PendingIdle { duration_ns: elapsed_ns, ..p });
            }
        }
        c.open = open;
        c.since_ns = now;
        let delta = new_mw - c.power_mw;
        c.power_mw = new_mw;
        if delta != 0.0 {
            self.energy_check_mj += self.total_power_mw * ns_f64(now - self.energy_check_ns) * 1e-9;
            self.energy_check_ns = now;
            self.total_power_mw += delta;
        }
        self.refresh_package_power(pkg);
    }

    /// Recompute the package C-state `pkg`'s cores allow and settle the
    /// package's power; when that changes a coordinated state's grant,
    /// every package is settled again.
    #[inline(always)]
    pub(crate) fn refresh_package_power(&mut self, pkg: usize) {
        let want = self.wanted_package_state(pkg);
        let moved = self.pkg_energy[pkg].want != want;
        self.pkg_energy[pkg].want = want;
        if moved {
            // A coordinated state's grant reads every package's want.
            for pe in &mut self.pkg_energy {
                pe.settled = false;
            }
        }
        if moved && self.plat.packages[pkg].cstates.iter().any(|c| c.coordinated) {
            for q in 0..self.plat.packages.len() {
                self.settle_package(q);
            }
        } else {
            self.settle_package(pkg);
        }
    }

    /// The deepest package C-state whose core state every core of `pkg` is
    /// in or below; none while a core is awake.
    fn wanted_package_state(&self, pkg: usize) -> Option<usize> {
        let counts = &self.pkg_energy[pkg];
        if !self.plat.package_cstates || counts.awake_cores > 0 {
            return None;
        }
        let min_depth = counts.min_idle_depth();
        self.plat.packages[pkg].cstates.iter().rposition(|c| c.core_state <= min_depth)
    }

    /// The deepest state `pkg` wants that it is granted: a coordinated one
    /// only if every package wants it or deeper.
    fn granted_package_state(&self, pkg: usize) -> Option<usize> {
        let want = self.pkg_energy[pkg].want?;
        let cstates = &self.plat.packages[pkg].cstates;
        (0..=want).rev().find(|&s| !cstates[s].coordinated || self.pkg_energy.iter().all(|pe| pe.want.is_some_and(|w| w >= s)))
    }

    /// Close the package's ledger at now and compute its state and power
    /// from its cores' depths and clocks and the state it is granted.
    fn settle_package(&mut self, pkg: usize) {
        let now = self.now;
        let state = self.granted_package_state(pkg);
        let p = &self.plat.packages[pkg];
        // Cores running load the uncore and memory; a core leaving idle
        // has woken the package but does not load it yet.
        let pe = &self.pkg_energy[pkg];
        let active = pe.busy_cores;
        let uncore_khz = match (&p.uncore, state) {
            (Some(u), None) => pe.fastest_busy_khz().clamp(u.min_khz, u.max_khz),
            _ => 0,
        };
        if pe.priced && pe.state == state && pe.uncore_khz == uncore_khz && pe.dram_active == active {
            // Nothing either power is priced from moved: both stay, and
            // the ledger is only closed.
            self.pkg_energy[pkg].settled = true;
            self.close_package(pkg);
            return;
        }
        // Each power is priced again only when what it depends on moved.
        let same_state = pe.priced && pe.state == state;
        let uncore_mw = if same_state && pe.uncore_khz == uncore_khz {
            pe.uncore_mw
        } else {
            match state {
                Some(s) => p.cstates[s].power_mw,
                None => p.uncore_mw + p.uncore.as_ref().map_or(0.0, |u| u.power_mw(uncore_khz)),
            }
        };
        let dram_mw = if same_state && pe.dram_active == active {
            pe.dram_mw
        } else if state.is_some_and(|s| p.cstates[s].dram_self_refresh) {
            p.dram.self_refresh_mw
        } else {
            p.dram.idle_mw + p.dram.active_mw_per_core * f64::from(active)
        };
        let nstates = p.cstates.len();
        let names: Option<&str> = state.map(|s| p.cstates[s].name.as_str());
        let pe = &mut self.pkg_energy[pkg];
        if pe.residency_ns.len() != nstates {
            pe.residency_ns = vec![0; nstates];
            pe.entries = vec![0; nstates];
        }
        pe.close_ledger(now);
        let changed = pe.state != state;
        if let (true, Some(s)) = (changed, state) {
            pe.entries[s] += 1;
        }
        pe.state = state;
        pe.uncore_khz = uncore_khz;
        let delta = uncore_mw + dram_mw - pe.uncore_mw - pe.dram_mw;
        pe.uncore_mw = uncore_mw;
        pe.dram_mw = dram_mw;
        pe.dram_active = active;
        pe.priced = true;
        pe.settled = true;
        if changed {
            if let Some(t) = self.trace.as_mut() {
                let cpu = self.plat.cores[self.plat.packages[pkg].cores[0]].cpus[0];
                t.print(now, cpu, &format!("package_cstate: package={pkg} state={}", names.unwrap_or("PC0")));
            }
        }
        if delta != 0.0 {
            self.energy_check_mj += self.total_power_mw * ns_f64(now - self.energy_check_ns) * 1e-9;
            self.energy_check_ns = now;
            self.total_power_mw += delta;
        }
    }

    /// [`Self::settle_package`] of a package that is settled: its state
    /// and powers stay, the ledger is closed at now (the same operations,
    /// the price difference of its unchanged powers included, which need
    /// not be exactly 0). Inlined into settle_package's hot path (a call
    /// cost 0.18 % of the kernbench cell's instructions: PROFILE-s32.md).
    #[inline(always)]
    fn close_package(&mut self, pkg: usize) {
        let now = self.now;
        let pe = &mut self.pkg_energy[pkg];
        pe.close_ledger(now);
        let delta = pe.uncore_mw + pe.dram_mw - pe.uncore_mw - pe.dram_mw;
        if delta != 0.0 {
            self.energy_check_mj += self.total_power_mw * ns_f64(now - self.energy_check_ns) * 1e-9;
            self.energy_check_ns = now;
            self.total_power_mw += delta;
        }
    }

    /// The latency the package's C-state adds to the exit of a core that
    /// wakes it now, beyond the core state's own exit latency (which by
    /// cpuidle.rst's rule already covers the package: 0 in every shipped
    /// file, docs/research/sources.md C.12).
    pub(crate) fn package_exit_latency_ns(&self, pkg: usize) -> u64 {
        self.pkg_energy[pkg].state.map_or(0, |s| self.plat.packages[pkg].cstates[s].exit_latency_ns)
    }

    /// The package is in no package C-state now.
    #[inline(always)]
    pub(crate) fn package_in_pc0(&self, pkg: usize) -> bool {
        self.pkg_energy[pkg].state.is_none()
    }

    /// One entry into and exit from `state` by a thread of `core`: its
    /// energy beyond the exit latency at C0 power.
    pub(crate) fn charge_entry_exit(&mut self, core: usize, state: usize) {
        let ct = &self.plat.cpu_types[self.plat.cores[core].cpu_type];
        let mj = ct.idle_states[state].entry_exit_uj / 1000.0;
        if mj > 0.0 {
            self.cores[core].energy_mj += mj;
            self.energy_check_mj += mj;
        }
    }

    /// `ns` of the idle cycle's kernel code on `cpu`, leaving `state`
    /// (machine/kpath.rs): the exit is priced at the state's power, so the
    /// rest of a running thread's power is added here, at the clock now.
    pub(crate) fn charge_kpath_energy(&mut self, cpu: usize, state: usize, ns: u64) {
        let core = self.plat.cpus[cpu].core;
        let pc = &self.plat.cores[core];
        let ct = &self.plat.cpu_types[pc.cpu_type];
        let dom = &self.domains[pc.freq_domain];
        let mv = self.vdomains[dom.voltage_domain].mv;
        let busy = pc.cpus.iter().filter(|&&c| c != cpu && self.rqs[c].mode == CpuMode::Active).count() as u32;
        let extra_mw = if busy > 0 {
            dynamic_mw(ct, dom.cur_khz, mv, busy + 1) - dynamic_mw(ct, dom.cur_khz, mv, busy)
        } else {
            dynamic_mw(ct, dom.cur_khz, mv, 1) + leakage_mw(ct, mv) - idle_mw(ct, &ct.idle_states[state], mv)
        };
        let mj = extra_mw.max(0.0) * ns_f64(ns) * 1e-9;
        self.cores[core].energy_mj += mj;
        self.energy_check_mj += mj;
    }

    /// The core's power now, and the unknowns it rests on when some idle
    /// thread has yet to choose its state.
    fn core_power_mw(&self, core: usize) -> (f64, Option<PendingIdle>, Option<usize>, bool) {
        let pc = &self.plat.cores[core];
        let ct = &self.plat.cpu_types[pc.cpu_type];
        let dom = &self.domains[pc.freq_domain];
        let mv = self.vdomains[dom.voltage_domain].mv;
        let mut active = 0u32;
        let mut shallowest: Option<usize> = None;
        let mut shallowest_known: Option<usize> = None;
        let mut undecided = 0u32;
        let mut exiting = false;
        for (pos, &cpu) in pc.cpus.iter().enumerate() {
            let state = match self.rqs[cpu].mode {
                // Leaving a state draws that state's power; the wakeup's
                // energy is the state's entry_exit_uj, paid when the core
                // wakes (see charge_entry_exit).
                CpuMode::Exiting { state, .. } => {
                    exiting = true;
                    Some(state)
                }
                _ => self.rqs[cpu].idle_state(),
            };
            match state {
                None => active += 1,
                Some(s) => {
                    shallowest = Some(shallowest.map_or(s, |x: usize| x.min(s)));
                    if self.rqs[cpu].hindsight {
                        undecided |= 1 << pos;
                    } else {
                        shallowest_known = Some(shallowest_known.map_or(s, |x: usize| x.min(s)));
                    }
                }
            }
        }
        if active > 0 {
            return (dynamic_mw(ct, dom.cur_khz, mv, active) + leakage_mw(ct, mv), None, None, true);
        }
        let mw = idle_mw(ct, &ct.idle_states[shallowest.unwrap_or(0)], mv);
        let open = (undecided != 0).then_some(PendingIdle {
            duration_ns: 0,
            mv,
            shallowest_known,
            undecided,
            provisional_mw: mw,
        });
        (mw, open, (!exiting).then_some(shallowest.unwrap_or(0)), false)
    }

    /// `cpu` has chosen `state` for its idle period, which has just been
    /// closed: settle the stretches that waited for it (and for no other
    /// thread any more) at their true power.
    pub(crate) fn settle_hindsight_energy(&mut self, core: usize, cpu: usize, state: usize) {
        let pc = &self.plat.cores[core];
        let ct = &self.plat.cpu_types[pc.cpu_type];
        let bit = 1u32 << pc.cpus.iter().position(|&c| c == cpu).expect("CPU of its own core");
        let c = &mut self.cores[core];
        let mut correction_mj = 0.0;
        c.pending.retain_mut(|p| {
            if p.undecided & bit == 0 {
                return true;
            }
            p.undecided &= !bit;
            p.shallowest_known = Some(p.shallowest_known.map_or(state, |s| s.min(state)));
            if p.undecided != 0 {
                return true;
            }
            let true_mw = idle_mw(ct, &ct.idle_states[p.shallowest_known.unwrap_or(state)], p.mv);
            correction_mj += (true_mw - p.provisional_mw) * ns_f64(p.duration_ns) * 1e-9;
            false
        });
        c.energy_mj += correction_mj;
        self.energy_check_mj += correction_mj;
    }

    /// Refresh the ledgers of every core of a frequency domain.
    pub(crate) fn refresh_domain_power(&mut self, domain: usize) {
        for i in 0..self.plat.freq_domains[domain].cores.len() {
            let core = self.plat.freq_domains[domain].cores[i];
            self.refresh_core_power(core);
        }
    }

    /// Close every ledger at now; returns (ledgers' total, check integral),
    /// both in J, uncore and DRAM included in both.
    pub(crate) fn close_energy(&mut self) -> (f64, f64) {
        for core in 0..self.cores.len() {
            self.refresh_core_power(core);
        }
        let now = self.now;
        self.energy_check_mj += self.total_power_mw * ns_f64(now - self.energy_check_ns) * 1e-9;
        self.energy_check_ns = now;
        let pkg_mj: f64 = self.pkg_energy.iter().map(|p| p.uncore_mj + p.dram_mj).sum();
        let cores_mj: f64 = self.cores.iter().map(|c| c.energy_mj).sum();
        ((cores_mj + pkg_mj) / 1000.0, self.energy_check_mj / 1000.0)
    }

    /// The package domain's energy (its cores and uncore) up to now, mJ,
    /// without closing any ledger: what the package's own power controller
    /// reads. A hindsight idle stretch counts at its provisional power.
    pub(crate) fn package_domain_mj(&self, pkg: usize) -> f64 {
        self.package_domain_mj_at(pkg, self.now)
    }

    /// The same at `now`, no earlier than the last event (the state holds
    /// until the next).
    pub(crate) fn package_domain_mj_at(&self, pkg: usize, now: Time) -> f64 {
        let at_now = |mj: f64, mw: f64, since: Time| mj + mw * ns_f64(now - since) * 1e-9;
        let cores: f64 = self.plat.packages[pkg]
            .cores
            .iter()
            .map(|&c| at_now(self.cores[c].energy_mj, self.cores[c].power_mw, self.cores[c].since_ns))
            .sum();
        let pe = &self.pkg_energy[pkg];
        cores + at_now(pe.uncore_mj, pe.uncore_mw, pe.since_ns)
    }

    /// The RAPL-like domains of each package, J: (cores, uncore, DRAM).
    pub(crate) fn package_domains_j(&self, pkg: usize) -> (f64, f64, f64) {
        let cores_mj: f64 = self.plat.packages[pkg].cores.iter().map(|&c| self.cores[c].energy_mj).sum();
        let pe = &self.pkg_energy[pkg];
        (cores_mj / 1000.0, pe.uncore_mj / 1000.0, pe.dram_mj / 1000.0)
    }
}

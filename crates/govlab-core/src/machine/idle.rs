//! The idle loop (kernel/sched/idle.c, do_idle() and cpuidle_idle_call()):
//! asking the cpuidle governor, entering and leaving idle states, the tick
//! decision, and the kernel's per-state counters.
//!
//! Models: Linux v6.8 kernel/sched/idle.c (cpuidle_idle_call) and
//! drivers/cpuidle/cpuidle.c (cpuidle_enter_state) with poll_state.c's time
//! limit. A CPU with nothing to run asks the governor for a state and a tick
//! decision; the tick is stopped if the governor says so or it was already
//! stopped, unless RCU callbacks queued on the CPU keep it (machine/rcu.rs,
//! which also shortens the sleep length the governor is given). Any
//! interrupt (a wakeup IPI, a timer, an IO completion, a kept tick) ends
//! the idle period; the CPU is back in C0 after the state's exit
//! latency, and with nothing to run there it selects and enters a state
//! again without a pick (do_idle()'s `while (!need_resched())` loop).
//! The residency is measured from entry to that moment, so it
//! includes the exit latency, as `last_residency_ns` does. Then:
//!
//! * `usage` and `time` grow;
//! * `above` counts a residency shorter than the state's target residency
//!   (too deep), if some shallower state is enabled;
//! * `below` counts a residency beyond the exit latency long enough
//!   (residency − exit latency ≥ target) for the first enabled deeper state
//!   (too shallow);
//! * the governor's `reflect` is told; it learns at the next `select`.
//!
//! The polling state spins for cpuidle_poll_time(): the governor's
//! dev->poll_limit_ns when it sets one (haltpoll), else the version's
//! default (`default_poll_time_ns`).
//!
//! A governor that chooses in hindsight (the oracle) is not asked at entry:
//! the CPU enters idle undecided, and the state is chosen when the interrupt
//! comes, before the exit latency is paid (`decide_in_hindsight`). Until
//! then the core's energy is priced provisionally and settled later
//! (machine/energy.rs), and a tick that comes stops instead of waking the
//! CPU. cpuidle/oracle.rs says why this is the run the same choices made at
//! entry would give.

use crate::cpuidle::{IdleDevice, Reflection, SelectArgs};
use crate::metrics::idle::ideal_state;
use crate::kernel::{EraId, KernelConfig};
use crate::platform::{CpuId, IdleState};
use super::rq::CpuMode;
use super::{Engine, Event};

/// cpuidle.c (v5.11 on): a deeper state targeting less than
/// CPUIDLE_POLL_MIN does not set the polling limit.
pub const CPUIDLE_POLL_MIN_NS: u64 = 10_000;

/// How long the polling state spins by default, by kernel version; `None`
/// where nothing but a wakeup ends it. Each form is the era that brought it:
///
/// * before v4.16 poll_idle() spins until need_resched(): govlab ends the
///   poll at the next interrupt, as every idle state (a kernel poll outlives
///   an interrupt that wakes no task: not modelled);
/// * v4.16 (EraId::PollTimeLimit): POLL_IDLE_TIME_LIMIT, TICK_NSEC / 16;
/// * v5.1 (EraId::PollLimitTargetResidency): the target residency of the
///   first enabled deeper state, else TICK_USEC taken as nanoseconds;
/// * v5.3 (EraId::PollLimitDefaultTick): that fallback becomes TICK_NSEC
///   (v5.4 moves the computation to cpuidle_poll_time(), unchanged);
/// * v5.11 (EraId::PollLimitMinMax): cpuidle_poll_time() skips states under
///   CPUIDLE_POLL_MIN and caps at CPUIDLE_POLL_MAX, TICK_NSEC / 16, which is
///   also the limit when no state qualifies.
#[must_use]
pub fn default_poll_time_ns(kernel: &KernelConfig, states: &[IdleState], disabled: &[bool], tick_ns: u64) -> Option<u64> {
    let mut deeper = states.iter().zip(disabled).skip(1).filter(|(_, &off)| !off).map(|(s, _)| s.target_residency_ns);
    if kernel.has(EraId::PollLimitMinMax) {
        let max = tick_ns / 16;
        Some(deeper.find(|&t| t >= CPUIDLE_POLL_MIN_NS).map_or(max, |t| t.min(max)))
    } else if kernel.has(EraId::PollLimitTargetResidency) {
        // TICK_USEC is the tick in microseconds.
        let none_enabled = if kernel.has(EraId::PollLimitDefaultTick) { tick_ns } else { tick_ns / 1000 };
        Some(deeper.next().unwrap_or(none_enabled))
    } else if kernel.has(EraId::PollTimeLimit) {
        Some(tick_ns / 16)
    } else {
        None
    }
}

impl Engine {
    /// cpuidle_poll_time(): how long the polling state may spin, `None`
    /// for no limit. The governor's dev->poll_limit_ns if it set one (a
    /// v5.4 field: no governor before has one), else the default.
    fn poll_time_ns(&mut self, cpu: CpuId) -> Option<u64> {
        let default_ns = self.poll_default_ns[cpu]?;
        Some(self.cpuidle.poll_limit_ns(cpu, default_ns))
    }

    /// The CPU has nothing to run: the idle loop's entry code first
    /// (machine/kpath.rs: the switch into the idle task, the governor's
    /// select, the tick's stop), in C0 with no task, then the state. A task
    /// woken onto the CPU meanwhile is picked at once (kick_cpu() on a
    /// CPU in C0 with none), and the state is not entered.
    pub(crate) fn go_idle(&mut self, cpu: CpuId) {
        let ns = self.kpath_idle_ns(cpu, self.kpath.idle_entry_cycles);
        if ns == 0 {
            self.enter_idle(cpu);
            return;
        }
        let rq = &mut self.rqs[cpu];
        rq.idle_entry_gen = rq.idle_entry_gen.wrapping_add(1);
        let gen = rq.idle_entry_gen;
        self.q.schedule(self.now + ns, Event::IdleEntryDone { cpu: cpu as u32, gen });
    }

    /// The idle loop's entry code is done: the state if still nothing runs,
    /// else (need_resched set meanwhile with no pick yet) schedule_idle()'s
    /// pick, as do_idle() leaves its loop.
    pub(crate) fn idle_entry_done(&mut self, cpu: CpuId) {
        let rq = &self.rqs[cpu];
        if rq.mode != CpuMode::Active || rq.curr.is_some() {
            return;
        }
        if rq.nr_running == 0 && rq.nr_delayed == 0 && !rq.resched {
            self.enter_idle(cpu);
        } else {
            self.schedule(cpu);
        }
    }

    /// Select a state and enter it.
    pub(crate) fn enter_idle(&mut self, cpu: CpuId) {
        self.update_rq_clock(cpu);
        let util_sum = self.rqs[cpu].cfs.avg.util_sum;
        self.rqs[cpu].clock.update_idle(util_sum);
        if self.cpuidle.chooses_in_hindsight() {
            self.enter_idle_undecided(cpu);
            return;
        }
        let now = self.now;
        let tick = self.tun.tick_ns;
        // RCU callbacks queued here keep a running tick (machine/rcu.rs).
        let rcu_keeps_tick = !self.rqs[cpu].tick_stopped && self.rcu_needs_cpu(cpu);
        let stopped_first = self.idle_tick_stopped_first;
        if stopped_first && rcu_keeps_tick {
            // v4.14 __tick_nohz_idle_enter(): idle_calls counts the attempt;
            // tick_nohz_stop_sched_tick() keeps the tick.
            self.rqs[cpu].idle_calls += 1;
        } else if stopped_first && !self.rqs[cpu].tick_stopped {
            // Before v4.17 the tick went before the governor was asked.
            self.cancel_tick(cpu);
            self.set_tick_stopped(cpu, true);
            self.rqs[cpu].idle_calls += 1;
            self.nohz_balance_enter_idle(cpu);
        }
        let rq = &self.rqs[cpu];
        // The next timer, the housekeeping's included (machine/housekeeping.rs).
        let next_timer = rq.timers.first().map_or(u64::MAX, |&(t, _)| t).min(self.hk.next_ns[cpu]);
        // tick_nohz_get_sleep_length()'s delta_next: the time to the next
        // programmed event, the tick's or an earlier timer's; with the tick
        // stopped the next timer itself (v5.2 and v6.8
        // kernel/time/tick-sched.c: dev->next_event - now).
        let to_tick = ((now / tick + 1) * tick - now).min(next_timer.saturating_sub(now));
        // The sleep length: the next timer, or delta_next itself when
        // tick_nohz_next_event() keeps the tick for RCU.
        let sleep_length_ns = if rcu_keeps_tick { to_tick } else { next_timer.saturating_sub(now) };
        let delta_tick_ns = if rq.tick_stopped { sleep_length_ns } else { to_tick };
        let args = SelectArgs {
            now_ns: now,
            sleep_length_ns,
            delta_tick_ns,
            latency_req_ns: self.tun.latency_req_ns,
            tick_stopped: rq.tick_stopped,
            tick_ns: tick,
            nr_iowait: rq.nr_iowait,
            cpu_util: crate::sched::pelt::cpu_util(&rq.cfs, rq.capacity),
            cpu_capacity: rq.capacity,
        };
        let states = &self.plat.cpu_type_of(cpu).idle_states;
        let dev = IdleDevice { cpu, states, disabled: &self.idle_disabled[cpu] };
        let sel = self.cpuidle.select(&dev, &args);
        assert!(
            sel.state < states.len() && !self.idle_disabled[cpu][sel.state],
            "cpuidle governor {} chose state {} on CPU {cpu} at {now} ns: not an enabled state",
            self.cpuidle.name(),
            sel.state
        );
        let polling = states[sel.state].polling;
        if rcu_keeps_tick {
            // v5.2 __tick_nohz_idle_stop_tick(): a stop the governor asks
            // for counts in idle_calls, and tick_nohz_retain_tick() keeps
            // the tick (`ts->timer_expires` is 0).
            if sel.stop_tick && !stopped_first {
                self.rqs[cpu].idle_calls += 1;
            }
            self.arm_tick(cpu);
        } else if sel.stop_tick || self.rqs[cpu].tick_stopped {
            self.cancel_tick(cpu);
            if !self.rqs[cpu].tick_stopped {
                self.nohz_balance_enter_idle(cpu);
            }
            self.set_tick_stopped(cpu, true);
            self.rqs[cpu].idle_calls += 1;
        } else {
            self.arm_tick(cpu);
        }
        let poll_limit = if polling { self.poll_time_ns(cpu) } else { None };
        let rq = &mut self.rqs[cpu];
        rq.mode = CpuMode::Idle { state: sel.state, entry_ns: now };
        rq.idle_gen = rq.idle_gen.wrapping_add(1);
        let gen = rq.idle_gen;
        rq.poll_limit = poll_limit.map(|limit| self.q.schedule_cancellable(now.saturating_add(limit), Event::PollLimit { cpu: cpu as u32, gen }));
        if let Some(t) = self.trace.as_mut() {
            t.cpu_idle(now, cpu, sel.state as u32);
        }
        self.refresh_core_power(self.plat.cpus[cpu].core);
        self.clock_vote_changed(cpu);
    }

    /// Enter idle with the state to be chosen in hindsight. The tick stays
    /// stopped if it was; otherwise it is kept until it comes (then the
    /// period outlasts it and the tick stops: `stop_tick_in_hindsight`).
    /// No poll limit is armed: such a governor sets dev->poll_limit_ns so
    /// that its polls never time out (see cpuidle/oracle.rs).
    fn enter_idle_undecided(&mut self, cpu: CpuId) {
        let now = self.now;
        if self.rqs[cpu].tick_stopped {
            self.cancel_tick(cpu);
            self.rqs[cpu].idle_calls += 1;
        } else {
            self.arm_tick(cpu);
        }
        let states = &self.plat.cpu_type_of(cpu).idle_states;
        // Provisional: the ideal state for no time at all.
        let provisional = ideal_state(states, &self.idle_disabled[cpu], 0, self.tun.latency_req_ns);
        let rq = &mut self.rqs[cpu];
        rq.mode = CpuMode::Idle { state: provisional, entry_ns: now };
        rq.hindsight = true;
        rq.idle_gen = rq.idle_gen.wrapping_add(1);
        self.refresh_core_power(self.plat.cpus[cpu].core);
        self.clock_vote_changed(cpu);
    }

    /// The undecided idle period of `cpu` ends now: the governor chooses
    /// its state knowing how long it lasted; the core's energy is settled.
    fn decide_in_hindsight(&mut self, cpu: CpuId) {
        let CpuMode::Idle { entry_ns, .. } = self.rqs[cpu].mode else { return };
        let core = self.plat.cpus[cpu].core;
        // Close the stretch priced with the provisional state.
        self.refresh_core_power(core);
        let now = self.now;
        let states = &self.plat.cpu_type_of(cpu).idle_states;
        let dev = IdleDevice { cpu, states, disabled: &self.idle_disabled[cpu] };
        // A housekeeping burst due now ends the period with the exit
        // (machine/housekeeping.rs): the period is judged with it.
        let ct = self.plat.cpu_type_of(cpu);
        let mv = self.vdomains[self.plat.freq_domains[self.plat.cpus[cpu].freq_domain].voltage_domain].mv;
        let idle_mw: Vec<f64> = states.iter().map(|s| crate::platform::energy::idle_mw(ct, s, mv)).collect();
        let state = self.cpuidle.choose_in_hindsight(&dev, &idle_mw, now - entry_ns + self.hk.work_ns[cpu], self.tun.latency_req_ns);
        assert!(
            state < states.len() && !self.idle_disabled[cpu][state],
            "cpuidle governor {} chose state {state} in hindsight on CPU {cpu} at {now} ns: not an enabled state",
            self.cpuidle.name()
        );
        let rq = &mut self.rqs[cpu];
        rq.mode = CpuMode::Idle { state, entry_ns };
        rq.hindsight = false;
        self.settle_hindsight_energy(core, cpu, state);
        self.refresh_core_power(core);
        if let Some(t) = self.trace.as_mut() {
            t.cpu_idle(entry_ns, cpu, state as u32);
        }
    }

    /// A tick comes to an undecided idle CPU: the period outlasts the tick,
    /// so the tick is stopped (as the governor would have at entry) instead
    /// of waking the CPU.
    pub(crate) fn stop_tick_in_hindsight(&mut self, cpu: CpuId) {
        self.cancel_tick(cpu);
        self.set_tick_stopped(cpu, true);
        self.rqs[cpu].idle_calls += 1;
        self.nohz_balance_enter_idle(cpu);
    }

    /// The idle state others see on `cpu` now (None in C0). While the state
    /// is chosen in hindsight, the deepest state the idle time so far
    /// already justifies: the final choice is at least that deep.
    pub(crate) fn idle_state_seen(&self, cpu: CpuId) -> Option<usize> {
        let rq = &self.rqs[cpu];
        match rq.mode {
            CpuMode::Idle { entry_ns, .. } if rq.hindsight => {
                let states = &self.plat.cpu_type_of(cpu).idle_states;
                Some(ideal_state(states, &self.idle_disabled[cpu], self.now - entry_ns, self.tun.latency_req_ns))
            }
            _ => rq.idle_state(),
        }
    }

    /// Something interrupts an idle CPU (IPI, timer, IO completion, tick).
    pub(crate) fn idle_wakeup(&mut self, cpu: CpuId, got_tick: bool) {
        self.leave_idle(cpu, got_tick, false);
    }

    /// The polling state hit its time limit.
    pub(crate) fn poll_time_limit(&mut self, cpu: CpuId) {
        self.leave_idle(cpu, false, true);
    }

    fn leave_idle(&mut self, cpu: CpuId, got_tick: bool, poll_limit: bool) {
        if self.rqs[cpu].hindsight {
            self.decide_in_hindsight(cpu);
        }
        let CpuMode::Idle { state, entry_ns } = self.rqs[cpu].mode else { return };
        // A package exit beyond the state's row comes on top when this CPU
        // wakes the package (none in the shipped files: a cpuidle state's
        // exit latency covers the package's, Documentation/admin-guide/pm/
        // cpuidle.rst "Representation of Idle States"), a housekeeping
        // burst runs before the CPU can go idle again
        // (machine/housekeeping.rs), and the idle cycle's kernel code
        // (machine/kpath.rs) runs in C0: all lengthen the exit.
        let kpath_ns = self.kpath_idle_ns(cpu, self.kpath.idle_exit_cycles);
        let exit = self.wake_latency_ns(cpu, state)
            + self.package_exit_latency_ns(self.plat.cpus[cpu].package)
            + self.hk.work_ns[cpu]
            + kpath_ns;
        if kpath_ns > 0 {
            self.charge_kpath_energy(cpu, state, kpath_ns);
        }
        let until_ns = self.now + exit;
        let rq = &mut self.rqs[cpu];
        rq.mode = CpuMode::Exiting { state, entry_ns, until_ns, got_tick, poll_limit };
        rq.kpath_exit_ns = kpath_ns;
        rq.idle_gen = rq.idle_gen.wrapping_add(1);
        if let Some(ticket) = rq.poll_limit.take() {
            self.q.cancel(ticket);
        }
        let gen = rq.idle_gen;
        self.refresh_core_power(self.plat.cpus[cpu].core);
        self.clock_vote_changed(cpu);
        if exit == 0 {
            self.idle_exit_done(cpu);
        } else {
            self.q.schedule(until_ns, Event::IdleExitDone { cpu: cpu as u32, gen });
        }
    }

    /// How long the hardware takes to bring `cpu` out of `state` now. The
    /// driver's exit latency is the worst case, the wake of a package in the
    /// matching package C-state (cpuidle.rst, "Representation of Idle
    /// States"; intel_idle's tables, docs/research/sources.md C.12); a state
    /// with a measured `wake_latency_ns` takes that while its package is in
    /// PC0, some other core awake. Governors see only the driver's figure.
    #[inline(always)]
    fn wake_latency_ns(&self, cpu: CpuId, state: usize) -> u64 {
        let s = &self.plat.cpu_type_of(cpu).idle_states[state];
        match s.wake_latency_ns {
            Some(ns) if self.package_in_pc0(self.plat.cpus[cpu].package) => ns,
            _ => s.exit_latency_ns,
        }
    }

    /// The CPU is back in C0: account, tell the governor, run what is there.
    pub(crate) fn idle_exit_done(&mut self, cpu: CpuId) {
        let CpuMode::Exiting { state, entry_ns, got_tick, poll_limit, .. } = self.rqs[cpu].mode else { return };
        let now = self.now;
        // A housekeeping burst ends with the exit and counts in it, as the
        // exit latency does (machine/housekeeping.rs).
        self.take_housekeeping_work(cpu);
        let residency = now - entry_ns;
        self.account_idle(cpu, state, residency);
        self.interval_idle_closed(cpu, state, entry_ns);
        {
            let states = &self.plat.cpu_type_of(cpu).idle_states;
            let dev = IdleDevice { cpu, states, disabled: &self.idle_disabled[cpu] };
            // The idle cycle's kernel code (machine/kpath.rs) runs in C0,
            // outside the residency cpuidle_enter_state() measures.
            let measured = residency - self.rqs[cpu].kpath_exit_ns;
            let r = Reflection { state, residency_ns: measured, poll_time_limit: poll_limit, got_tick };
            self.cpuidle.reflect(&dev, &r);
        }
        let rq = &mut self.rqs[cpu];
        rq.mode = CpuMode::Active;
        rq.idle_ns += residency;
        if rq.nr_iowait > 0 {
            rq.iowait_idle_ns += residency;
        }
        if let Some(t) = self.trace.as_mut() {
            t.cpu_idle(now, cpu, u32::MAX);
        }
        self.refresh_core_power(self.plat.cpus[cpu].core);
        self.run_deferred_timer(cpu);
        if got_tick {
            // The kept tick's work on an idle CPU: blocked-load decay, which
            // may call the cpufreq hook, after the tick's frequency sample.
            self.arch_scale_freq_tick(cpu);
            self.update_rq_clock(cpu);
            self.update_blocked_averages(cpu);
        }
        // A stats kick's IPI: the pass runs before the idle loop goes on.
        if self.nohz_kicked == Some(cpu) {
            self.nohz_kick_received(cpu);
        }
        // v5.2 and v6.8 kernel/sched/idle.c do_idle() (v3.16's
        // cpu_idle_loop() alike): the idle task loops on cpuidle_idle_call()
        // while !need_resched(). An interrupt that queued nothing here
        // (a tick, a timer, a housekeeping burst, a kick) sends the CPU
        // back to the governor's select and a state, with no pick and so
        // no newidle balance (pick_next_task_fair() → idle_balance()); a
        // stopped tick stays stopped (cpuidle_idle_call(): stop_tick ||
        // tick_nohz_tick_stopped()). Only need_resched, set by an enqueue
        // here (check_preempt_curr_idle()) or a resched_curr(), leaves the
        // loop: tick_nohz_idle_exit() (kernel/time/tick-sched.c) restarts
        // a stopped tick, then schedule_idle() picks.
        let rq = &self.rqs[cpu];
        if rq.nr_running == 0 && rq.nr_delayed == 0 && !rq.resched {
            self.go_idle(cpu);
            return;
        }
        self.set_tick_stopped(cpu, false);
        self.arm_tick(cpu);
        self.schedule(cpu);
    }

    /// `cpu`'s tick stops or restarts: its flag and the mask of them.
    #[inline]
    pub(crate) fn set_tick_stopped(&mut self, cpu: CpuId, stopped: bool) {
        self.rqs[cpu].tick_stopped = stopped;
        if stopped {
            self.tick_stopped_mask.set(cpu);
        } else {
            self.tick_stopped_mask.clear(cpu);
        }
    }

    /// update_blocked_averages(): decay an idle runqueue's signal.
    pub(crate) fn update_blocked_averages(&mut self, cpu: CpuId) {
        if self.sched_ext && !self.groups.is_empty() {
            self.update_blocked_groups(cpu);
        }
        if self.update_cfs_rq(cpu) {
            self.cpufreq_update_util(cpu, 0);
        }
        if self.nohz_blocked {
            self.update_blocked_load_status(cpu);
        }
    }

    /// The kernel's per-state counters and the accuracy for one idle period
    /// (metrics::idle::judge).
    fn account_idle(&mut self, cpu: CpuId, state: usize, residency: u64) {
        let ct = self.plat.cpu_type_of(cpu);
        let states = &ct.idle_states;
        let j = crate::metrics::idle::judge(states, &self.idle_disabled[cpu], state, residency, self.tun.latency_req_ns);
        let mv = self.vdomains[self.plat.freq_domains[self.plat.cpus[cpu].freq_domain].voltage_domain].mv;
        let counters = &mut self.idle_counters[cpu];
        counters.states[state].record(residency, &j);
        counters.accuracy.record(states, state, &j, |i| crate::platform::energy::idle_mw(ct, &states[i], mv));
    }

    /// An interrupt arrives at `cpu` (a timer or a device): an idle CPU wakes.
    pub(crate) fn interrupt(&mut self, cpu: CpuId) {
        if self.rqs[cpu].idle_state().is_some() {
            self.idle_wakeup(cpu, false);
        }
    }

    /// Close open idle periods at the end of the run (time, not usage).
    pub(crate) fn close_idle(&mut self) {
        let now = self.now;
        for cpu in 0..self.rqs.len() {
            if self.rqs[cpu].hindsight {
                self.decide_in_hindsight(cpu);
            }
            if let CpuMode::Idle { state, entry_ns } | CpuMode::Exiting { state, entry_ns, .. } = self.rqs[cpu].mode {
                self.interval_idle_closed(cpu, state, entry_ns);
                let rq = &mut self.rqs[cpu];
                let residency = now - entry_ns;
                rq.idle_ns += residency;
                self.idle_counters[cpu].states[state].time_ns += residency;
                rq.mode = CpuMode::Idle { state, entry_ns: now };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::default_poll_time_ns;
    use crate::cpuidle::testing::state;
    use crate::kernel::KernelConfig;
    use crate::params::Spec;

    /// HZ=1000.
    const TICK_NS: u64 = 1_000_000;

    fn limit(version: &str, residencies_us: &[u64], disabled: &[bool]) -> Option<u64> {
        let kernel = KernelConfig::from_spec(&Spec::parse(version, "kernel").unwrap()).unwrap();
        let mut states = vec![state("POLL", 0, 0, true)];
        states.extend(residencies_us.iter().map(|&r| state("C", r, r, false)));
        let mut off = vec![false];
        off.extend_from_slice(disabled);
        default_poll_time_ns(&kernel, &states, &off, TICK_NS)
    }

    #[test]
    fn before_v4_16_the_poll_has_no_time_limit() {
        for v in ["3.15", "4.8"] {
            assert_eq!(limit(v, &[20, 100], &[false, false]), None, "{v}");
        }
    }

    /// v4.16's limit is TICK_NSEC / 16 whatever the states: not the 20 µs
    /// of the first deeper state.
    #[test]
    fn v4_16_polls_for_a_sixteenth_of_a_tick() {
        for v in ["4.16", "4.19"] {
            assert_eq!(limit(v, &[20, 100], &[false, false]), Some(62_500), "{v}");
        }
    }

    /// v5.1 to v5.10: the first enabled deeper state's target residency,
    /// however short or long; TICK_USEC as nanoseconds if none is enabled
    /// until v5.3 fixed that to TICK_NSEC.
    #[test]
    fn v5_1_polls_for_the_first_enabled_states_target_residency() {
        for v in ["5.2", "5.7", "5.9"] {
            assert_eq!(limit(v, &[2, 100], &[false, false]), Some(2_000), "{v}");
            assert_eq!(limit(v, &[2, 100], &[true, false]), Some(100_000), "{v}");
        }
        assert_eq!(limit("5.2", &[2, 100], &[true, true]), Some(1_000));
        for v in ["5.7", "5.9"] {
            assert_eq!(limit(v, &[2, 100], &[true, true]), Some(TICK_NS), "{v}");
        }
    }

    /// v5.11 on: states under 10 µs are skipped, the limit is capped at
    /// TICK_NSEC / 16, and is that cap when no state qualifies.
    #[test]
    fn v5_11_skips_short_states_and_caps_at_a_sixteenth_of_a_tick() {
        for v in ["6.5", "6.8", "6.18"] {
            assert_eq!(limit(v, &[2, 40], &[false, false]), Some(40_000), "{v}");
            assert_eq!(limit(v, &[2, 100], &[false, false]), Some(62_500), "{v}");
            assert_eq!(limit(v, &[2, 100], &[true, true]), Some(62_500), "{v}");
        }
    }
}

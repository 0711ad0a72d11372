//! powernv's global P-state as the engine runs it: the local P-state goes
//! to the clock at once, the global one (the voltage the core holds its
//! rail at) ramps down on a timer.
//!
//! Models: Linux v6.8 drivers/cpufreq/powernv-cpufreq.c,
//! powernv_cpufreq_target_index() and gpstate_timer_handler(); the
//! arithmetic and the idea are in [`crate::cpufreq::powernv`].

use super::{Engine, Event};
use crate::cpufreq::powernv::{calc_global_pstate, timer_interval_ms, MAX_RAMP_DOWN_TIME_MS};
use crate::sim::{Time, NSEC_PER_MSEC};

/// Per-policy ramp-down state (struct global_pstate_info); P-states are OPP
/// indices, higher = faster.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalPstateInfo {
    /// The local P-state at which the current ramp-down began.
    highest_lpstate: usize,
    /// Time since the ramp-down began, ms.
    elapsed_time_ms: u64,
    /// When elapsed_time_ms was last brought up to date, ms; None after a
    /// reset (the next request then starts afresh, as the kernel's 0 does).
    last_sampled_time_ms: Option<u64>,
    pub last_gpstate: usize,
    pub last_lpstate: usize,
}

impl GlobalPstateInfo {
    /// reset_gpstates.
    fn reset(&mut self) {
        *self = GlobalPstateInfo::default();
    }
}

impl Engine {
    fn now_ms(&self) -> u64 {
        self.now / NSEC_PER_MSEC
    }

    /// Write PMCR: the local P-state to the clock, the global one to the
    /// voltage the core holds.
    fn set_pstate(&mut self, d: usize, global: usize, local: usize) {
        let g = &mut self.domains[d].gpstate;
        g.last_gpstate = global;
        g.last_lpstate = local;
        self.request_opp(d, local);
        self.set_volt_opp(d, global);
    }

    fn queue_gpstate_timer(&mut self, d: usize) {
        let delay_ms = timer_interval_ms(self.domains[d].gpstate.elapsed_time_ms);
        let dom = &mut self.domains[d];
        dom.driver_timer_gen = dom.driver_timer_gen.wrapping_add(1);
        dom.driver_timer_deferred = false;
        let at: Time = self.now + delay_ms * NSEC_PER_MSEC;
        self.q.schedule(at, Event::DriverTimer { domain: d as u32, gen: dom.driver_timer_gen });
    }

    fn cancel_gpstate_timer(&mut self, d: usize) {
        let dom = &mut self.domains[d];
        dom.driver_timer_gen = dom.driver_timer_gen.wrapping_add(1);
        dom.driver_timer_deferred = false;
    }

    /// powernv_cpufreq_target_index for policy `d`'s new local P-state
    /// `new` (steps 1–2); `ramp` false writes global = local.
    pub(crate) fn powernv_target(&mut self, d: usize, new: usize, ramp: bool) {
        let now_ms = self.now_ms();
        if !ramp {
            self.domains[d].gpstate.reset();
            self.cancel_gpstate_timer(d);
            self.set_pstate(d, new, new);
            return;
        }
        let g = &mut self.domains[d].gpstate;
        let global = match g.last_sampled_time_ms {
            None => {
                g.highest_lpstate = new;
                new
            }
            Some(last) if new < g.last_gpstate => {
                g.elapsed_time_ms += now_ms - last;
                if g.elapsed_time_ms > MAX_RAMP_DOWN_TIME_MS {
                    g.reset();
                    g.highest_lpstate = new;
                    new
                } else {
                    calc_global_pstate(g.elapsed_time_ms, g.highest_lpstate, new)
                }
            }
            Some(_) => {
                g.reset();
                g.highest_lpstate = new;
                new
            }
        };
        g.last_sampled_time_ms = Some(now_ms);
        if global == new {
            self.cancel_gpstate_timer(d);
        } else {
            self.queue_gpstate_timer(d);
        }
        self.set_pstate(d, global, new);
    }

    /// gpstate_timer_handler (step 3).
    fn gpstate_timer_handler(&mut self, d: usize) {
        let now_ms = self.now_ms();
        let g = &mut self.domains[d].gpstate;
        let last = g.last_sampled_time_ms.unwrap_or(now_ms);
        g.last_sampled_time_ms = Some(now_ms);
        g.elapsed_time_ms += now_ms - last;
        let local = g.last_lpstate;
        let global = if g.last_gpstate == local || g.elapsed_time_ms > MAX_RAMP_DOWN_TIME_MS {
            g.reset();
            g.highest_lpstate = local;
            local
        } else {
            calc_global_pstate(g.elapsed_time_ms, g.highest_lpstate, local)
        };
        if global != local {
            self.queue_gpstate_timer(d);
        }
        self.set_pstate(d, global, local);
    }

    /// The driver's timer of policy `d` expired; false if stale. Being
    /// deferrable, it waits while every CPU of the policy idles.
    pub(crate) fn driver_timer(&mut self, d: usize, gen: u32) -> bool {
        if self.domains[d].driver_timer_gen != gen {
            return false;
        }
        let all_idle = self.plat.freq_domains[d]
            .cpus
            .iter()
            .all(|&c| self.rqs[c].idle_state().is_some());
        if all_idle {
            self.domains[d].driver_timer_deferred = true;
        } else {
            self.gpstate_timer_handler(d);
        }
        true
    }

    /// A CPU of policy `d` woke: run the driver's deferred timer.
    pub(crate) fn run_deferred_driver_timer(&mut self, d: usize) {
        if self.domains[d].driver_timer_deferred {
            self.domains[d].driver_timer_deferred = false;
            self.gpstate_timer_handler(d);
        }
    }
}

/// The driver on a running engine: a one-core POWER8 chip, so the chip's
/// rail answers to that core alone, kept busy so that the deferrable
/// ramp-down timer never waits, and a scripted governor that sets the
/// frequency at given times.
#[cfg(test)]
mod engine_tests {
    use std::path::{Path, PathBuf};

    use crate::cpufreq::{CpufreqGovernor, Policy, Relation};
    use crate::params::Spec;
    use crate::platform::{load_str, Platform};
    use crate::machine::{Engine, RunParts};
    use crate::sim::NSEC_PER_MSEC;
    use crate::{cpuidle, workload};

    const POWER8: &str = include_str!("../../../../data/platforms/power8.toml");
    const PMIN_KHZ: u32 = 2_100_000;
    const PMAX_KHZ: u32 = 4_100_000;

    /// pmax at start, then each (ms, kHz) at its time; `fast`: through the
    /// fast-switch path, as schedutil asks.
    struct Script {
        steps: Vec<(u64, u32)>,
        next: usize,
        fast: bool,
    }

    impl Script {
        fn set(&self, p: &mut Policy<'_>, khz: u32) {
            if self.fast {
                p.fast_switch(khz);
            } else {
                p.set_target(khz, Relation::L);
            }
        }
    }

    impl CpufreqGovernor for Script {
        fn name(&self) -> &'static str {
            "script"
        }
        fn start(&mut self, p: &mut Policy<'_>) {
            self.set(p, PMAX_KHZ);
            p.arm_timer(self.steps[0].0 * NSEC_PER_MSEC, false);
        }
        fn timer(&mut self, p: &mut Policy<'_>, time_ns: u64) {
            let (_, khz) = self.steps[self.next];
            self.set(p, khz);
            self.next += 1;
            if let Some(&(ms, _)) = self.steps.get(self.next) {
                p.arm_timer(ms * NSEC_PER_MSEC - time_ns, false);
            }
        }
        fn tunables(&self) -> Vec<(String, String)> {
            Vec::new()
        }
    }

    fn one_core_power8(global_pstate: bool) -> Platform {
        let text = POWER8
            .replacen("packages = 2", "packages = 1", 1)
            .replacen("cores = 10", "cores = 1", 1)
            .replacen("threads_per_core = 8", "threads_per_core = 1", 1)
            .replacen("global_pstate = true", &format!("global_pstate = {global_pstate}"), 1);
        load_str(&text, Path::new("power8-1core.toml")).unwrap()
    }

    /// A task on CPU 0 doing `ops`, written once per name (tests share it).
    fn workload_file(name: &str, ops: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("govlab-powernv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.toml"));
        if !path.exists() {
            let tmp = dir.join(format!("{name}-{:?}.toml", std::thread::current().id()));
            std::fs::write(&tmp, format!("[[task]]\ncomm = \"t\"\ncpus = [0]\nops = [ {ops} ]\n")).unwrap();
            std::fs::rename(&tmp, &path).unwrap();
        }
        path
    }

    /// Run the script until `end_us` with CPU 0 busy throughout; the engine
    /// as it is then.
    fn run(global_pstate: bool, steps: &[(u64, u32)], fast: bool, end_us: u64) -> Engine {
        run_with(global_pstate, steps, fast, end_us, "busy", r#"{ run = "60s" }"#)
    }

    fn run_with(global_pstate: bool, steps: &[(u64, u32)], fast: bool, end_us: u64, name: &str, ops: &str) -> Engine {
        let plat = one_core_power8(global_pstate);
        let parts = RunParts {
            // A silent machine: the sleeping core must not be woken by
            // housekeeping (the deferrable ramp-down timer test).
            workload: workload::build(&Spec::new(workload_file(name, ops).to_str().unwrap())).unwrap(),
            cpufreq: Box::new(Script { steps: steps.to_vec(), next: 0, fast }),
            cpuidle: cpuidle::build(&Spec::new("menu"), &plat).unwrap(),
            duration_ns: end_us * 1000,
            seed: 1,
            ctx: crate::kernel::BuildCtx::new(plat, crate::kernel::KernelConfig::from_spec(&Spec::parse("6.8:housekeeping=off", "kernel").unwrap()).unwrap()),
        };
        let mut e = crate::machine::build(parts, None).unwrap();
        e.run(None).unwrap();
        e
    }

    fn mv(e: &Engine, opp: usize) -> u32 {
        e.plat.cpu_types[0].opps[opp].mv
    }

    /// pmax at start, pmin at 10 ms: the clock drops at once; the voltage
    /// held (global P-state; OPP 20 is pmax) stays up, then follows the
    /// parabola at the 2 s timer ticks: 15 % down at 2.01 s (OPP 17), 61 %
    /// at 4.01 s (OPP 8), and meets the local P-state at 5.12 s. With
    /// global_pstate=off the voltage falls with the clock.
    #[test]
    fn global_pstate_holds_the_voltage_and_ramps_it_down_over_5_s() {
        let down = [(10, PMIN_KHZ)];
        let at = |on: bool, ms: u64| {
            let e = run(on, &down, false, ms * 1000);
            (e.domains[0].cur_khz, e.domains[0].volt_opp, e.vdomains[0].mv, mv(&e, 20), mv(&e, 0))
        };
        let opps: Vec<(u64, usize)> = [9, 11, 2009, 2011, 4011, 5119, 5121, 9000]
            .into_iter()
            .map(|ms| (ms, at(true, ms).1))
            .collect();
        assert_eq!(opps, [(9, 20), (11, 20), (2009, 20), (2011, 17), (4011, 8), (5119, 8), (5121, 0), (9000, 0)]);
        let (khz, _, rail, pmax_mv, pmin_mv) = at(true, 11);
        assert_eq!((khz, rail), (PMIN_KHZ, pmax_mv), "clock down, voltage up");
        assert_eq!(at(true, 5121).2, pmin_mv);
        let (khz, opp, rail, _, _) = at(false, 11);
        assert_eq!((khz, opp, rail), (PMIN_KHZ, 0, pmin_mv), "global_pstate=off");
    }

    /// The ramp-down clock runs from the previous request, as the kernel's
    /// elapsed_time does: after a second at pmax, a drop starts 1 s down
    /// the parabola (34 % at the 3 s tick: OPP 14), and after more than
    /// 5.12 s at one frequency the voltage follows the drop at once.
    #[test]
    fn ramp_down_counts_from_the_previous_request() {
        assert_eq!(run(true, &[(1000, PMIN_KHZ)], false, 3_001_000).domains[0].volt_opp, 14);
        assert_eq!(run(true, &[(6000, PMIN_KHZ)], false, 6_001_000).domains[0].volt_opp, 0);
    }

    /// A ramp-up 0.5 s after the drop finds the voltage still up with
    /// global_pstate=on and switches at once; with it off the clock waits
    /// for the rail to climb 350 mV at 0.175 mV/µs, 2 ms.
    #[test]
    fn ramp_up_soon_after_is_faster_with_global_pstate() {
        let steps = [(10, PMIN_KHZ), (500, PMAX_KHZ)];
        let khz_at = |on: bool, us: u64| run(on, &steps, false, us).domains[0].cur_khz;
        assert_eq!(khz_at(true, 500_001), PMAX_KHZ);
        assert_eq!(khz_at(false, 500_001), PMIN_KHZ);
        assert_eq!(khz_at(false, 501_999), PMIN_KHZ);
        assert_eq!(khz_at(false, 502_001), PMAX_KHZ);
        // Once the ramp-down is over, global_pstate=on pays the slew too.
        let late = [(10, PMIN_KHZ), (7000, PMAX_KHZ)];
        assert_eq!(run(true, &late, false, 7_001_000).domains[0].cur_khz, PMIN_KHZ);
        assert_eq!(run(true, &late, false, 7_002_001).domains[0].cur_khz, PMAX_KHZ);
    }

    /// The ramp-down timer is deferrable: due at 2.01 s while the core
    /// sleeps (from its 20 ms of work, stretched by pmin, until about
    /// 3.004 s), it runs when the core wakes, with the time since the drop
    /// by then (3 s: 34 %, OPP 14).
    #[test]
    fn ramp_down_timer_waits_for_the_core_to_wake() {
        let ops = r#"{ run = "20ms" }, { sleep = "2980ms" }, { run = "60s" }"#;
        let opp_at = |us: u64| run_with(true, &[(10, PMIN_KHZ)], false, us, "nap", ops).domains[0].volt_opp;
        assert_eq!(opp_at(2_500_000), 20);
        assert_eq!(opp_at(3_100_000), 14);
    }

    /// The fast-switch path (schedutil) writes global = local: no held
    /// voltage even with global_pstate=on.
    #[test]
    fn fast_switch_bypasses_the_ramp_down() {
        let e = run(true, &[(10, PMIN_KHZ)], true, 11_000);
        assert_eq!((e.domains[0].cur_khz, e.domains[0].volt_opp), (PMIN_KHZ, 0));
        assert_eq!(e.vdomains[0].mv, mv(&e, 0));
    }
}

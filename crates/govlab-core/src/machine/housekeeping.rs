//! Housekeeping: the kernel's own per-CPU work that wakes idle CPUs (timer
//! softirqs, RCU callbacks and grace-period kthreads, vmstat updates,
//! workqueue items on kworkers), on by default (`--kernel …:housekeeping=off`
//! for a silent machine).
//!
//! A real idle CPU is not silent: kernel/time/timer.c's timer wheel, RCU
//! (kernel/rcu/tree.c), mm/vmstat.c's vmstat_update and kernel/workqueue.c's
//! kworkers each come due now and then, and each wakeup lets the governors
//! re-evaluate the CPU. The model does not run these as tasks: each wakeup is
//! an interrupt to an idle CPU followed by a short burst of kernel work
//! (softirq or kthread) before the CPU goes idle again. The burst is added to
//! the idle exit: the CPU is priced as leaving idle, a task woken onto it
//! meanwhile waits for it (as behind a softirq), and the idle period ends
//! with the burst as it ends with the exit latency, so the residency the
//! governor is told, the trace's `cpu_idle` exit and the CPU's idle time
//! include its 20 µs (a simplification: the kernel traces the exit before
//! the softirq runs). A governor choosing in hindsight (the oracle) is given
//! the period with the burst.
//!
//! Per CPU the gaps between wakeups form a renewal process: with probability
//! `p_short` a short gap (exponential, mean `short_ns`: a burst's follow-up
//! work, a timer softirq raising RCU or a kworker item), else a long one
//! (exponential, mean `long_ns`). Each profile's three numbers reproduce a
//! real machine's wakeup rate and median and 90th-percentile idle period
//! (fitted by tools/calibrate/housekeeping/fit.py from the idle statistics
//! of the real recordings in tools/calibrate/idle_recordings/). POWER's
//! wakeups are instead a few strictly periodic per-CPU hrtimers, each with
//! its own phase (drawn uniformly; in the kernel, when the CPU came up):
//!
//! A platform file names its profile (`housekeeping = "board"`; the
//! [`HousekeepingProfile`] of the platform, `server` when the file names
//! none):
//!
//! | profile | platforms | source | rate /s per CPU | median | p90 |
//! |---|---|---|---|---|---|
//! | board (Juno) | juno-r0, juno-r2, rk3399 | LISA `sched_load`, Juno r0, 4.19 | 92.3 | 0.985 ms | 7.06 ms |
//! | phone | sd835, hikey960 | trappy `trace_surfaceflinger`, SD835 phone | 39.1 | 0.760 ms | 58.1 ms |
//! | server | broadwell, skylake, and a file that names none | microsoft/WSL#6982 (see SERVER) | 25 | Poisson | |
//! | powernv | power8, power9 | the kernel's own per-CPU timers (see [`powernv`]) | 0.25 before v4.13, 0.5 from | periodic, 4 s | |
//!
//! hikey960 (a phone SoC on a board) takes the phone's profile and rk3399
//! Juno's: assumed, no recording of either. The server figure is the one
//! published per-CPU idle rate found for an x86 Linux (a kernel developer's
//! idle 5.10 guest: "at most 20 to 30 timer interrupts per second on a single
//! CPU"); its shape is assumed Poisson (no recording).
//!
//! No published measurement of an idle POWER8/POWER9 was found, so POWER's
//! wakeups are built from the kernel's own per-CPU timers on an idle powernv
//! CPU ([`powernv`]): the soft-lockup watchdog every 4 s, joined from v4.13 by
//! powerpc's own hard-lockup watchdog, also every 4 s. Everything else that is
//! periodic is deferrable, machine-wide or absent on powerpc (the list is in
//! docs/research/sources.md §A.3). The derivation counts only the kernel's own
//! work: a real box's daemons and device interrupts come on top (not
//! modelled, as device interrupts are not for any platform).
//!
//! The work is timer-driven (the timer wheel's softirq, RCU's and the
//! workqueues' timers, vmstat's delayed work), so the cpuidle governor knows
//! when it comes: it bounds the sleep length the governor is given, as the
//! next timer event does in tick_nohz_get_sleep_length() (v6.8
//! kernel/time/tick-sched.c). Deferrable timers, which do not, are not told
//! apart.
//!
//! Limits: a wakeup due while the CPU is busy or already leaving idle is
//! absorbed (its work is not charged to the running task); the burst's
//! length is one assumed constant ([`WORK_NS`]); device interrupts are not
//! modelled here.

use crate::platform::{CpuId, HousekeepingProfile};
use crate::sim::rng::{Rng, Stream};
use crate::sim::Time;
use super::rq::CpuMode;
use super::{Engine, Event};

/// The CPU time of one housekeeping burst, ns. Assumed (the old `idle`
/// workload's sketch used the same 20 µs); the recordings give the rate of
/// the wakeups, not their length.
pub const WORK_NS: Time = 20_000;

/// One machine's housekeeping gap distribution (see the module header).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    /// Probability that the next gap is short.
    pub p_short: f64,
    /// Mean of a short gap, ns.
    pub short_ns: f64,
    /// Mean of a long gap, ns.
    pub long_ns: f64,
}

impl Profile {
    /// Wakeups per second per CPU (1 / the mean gap).
    #[must_use]
    pub fn rate_per_s(&self) -> f64 {
        1e9 / (self.p_short * self.short_ns + (1.0 - self.p_short) * self.long_ns)
    }
}

/// Juno r0, LISA `sched_load` (4.19; idle CPUs 0–5, 231 idle periods): 92.3
/// wakeups/s per CPU, median idle 0.985 ms, p90 7.06 ms
/// (tools/calibrate/idle_recordings/idle_stats.out); fit in
/// tools/calibrate/housekeeping/fit.out.
pub const JUNO: Profile = Profile { name: "juno", p_short: 0.8950, short_ns: 1_218_900.0, long_ns: 92_794_000.0 };

/// SD835 phone, trappy `trace_surfaceflinger` (idle CPUs 2–7, 168 idle
/// periods): 39.1 wakeups/s per CPU, median 0.760 ms, p90 58.1 ms; fit in
/// tools/calibrate/housekeeping/fit.out.
pub const PHONE: Profile = Profile { name: "phone", p_short: 0.8625, short_ns: 895_100.0, long_ns: 180_388_000.0 };

/// An idle x86 Linux: 25 timer interrupts per second per CPU, the middle of
/// "at most 20 to 30 timer interrupts per second on a single CPU" on an idle
/// 5.10 WSL2 kernel (M. Kelley, microsoft/WSL issue #6982, comment of
/// 2023-07-29). Poisson: assumed.
pub const SERVER: Profile = Profile { name: "server", p_short: 0.0, short_ns: 0.0, long_ns: 40_000_000.0 };

/// Periodic per-CPU kernel timers: `timers` of them per CPU, each every
/// `period_ns`, each at its own phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Periodic {
    pub name: &'static str,
    pub period_ns: Time,
    pub timers: u32,
}

impl Periodic {
    /// Wakeups per second per CPU, if no two timers come together.
    #[must_use]
    pub fn rate_per_s(&self) -> f64 {
        f64::from(self.timers) * 1e9 / self.period_ns as f64
    }
}

/// An idle powernv CPU (POWER8, POWER9) is woken by the kernel's own per-CPU
/// timers only. The soft-lockup watchdog's hrtimer comes every
/// 2 * watchdog_thresh / 5 = 4 s (kernel/watchdog.c, set_sample_period(),
/// v3.15 to v6.8; watchdog_thresh = 10) and wakes the CPU's watchdog thread
/// (v4.8) or stopper (later). From v4.13 (2104180a5369) powerpc's hard-lockup
/// watchdog adds a second per-CPU timer with the same period
/// (arch/powerpc/kernel/watchdog.c, watchdog_calc_timeouts():
/// wd_timer_period_ms = watchdog_thresh * 1000 * 2 / 5). POWER8's
/// decrementer, at most 0x7fffffff timebase ticks of 512 MHz (4.19 s,
/// arch/powerpc/kernel/time.c DECREMENTER_MAX), never outlasts the 4 s
/// watchdog, so its wrap adds nothing. The rest is deferrable (vmstat_update
/// in v3.15 and from v4.5, ondemand's timer, powernv-cpufreq's gpstate timer),
/// one timer for the machine (kopald every ibm,heartbeat-ms, 0.2 or 2 s from
/// skiboot; writeback and jbd2 every 5 s: at most 0.03/s per CPU on 160
/// CPUs, left out), or absent on
/// powerpc (the clocksource watchdog: the timebase is not
/// CLOCK_SOURCE_MUST_VERIFY). Sources and searches: docs/research/sources.md
/// §A.3.
#[must_use]
pub const fn powernv(kernel_has_ppc_hardlockup_watchdog: bool) -> Periodic {
    Periodic {
        name: "powernv",
        period_ns: 4_000_000_000,
        timers: if kernel_has_ppc_hardlockup_watchdog { 2 } else { 1 },
    }
}

/// How a platform's housekeeping wakeups come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Gaps drawn from a fitted (or published) distribution.
    Renewal(Profile),
    /// Strictly periodic kernel timers.
    Periodic(Periodic),
}

impl Source {
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Source::Renewal(p) => p.name,
            Source::Periodic(p) => p.name,
        }
    }

    #[must_use]
    pub fn rate_per_s(&self) -> f64 {
        match self {
            Source::Renewal(p) => p.rate_per_s(),
            Source::Periodic(p) => p.rate_per_s(),
        }
    }
}

/// The source of a platform's profile (its file's `housekeeping`) under a
/// kernel with or without powerpc's hard-lockup watchdog (see the module
/// header).
#[must_use]
pub fn source_for(profile: HousekeepingProfile, kernel_has_ppc_hardlockup_watchdog: bool) -> Source {
    match profile {
        HousekeepingProfile::Board => Source::Renewal(JUNO),
        HousekeepingProfile::Phone => Source::Renewal(PHONE),
        HousekeepingProfile::Powernv => Source::Periodic(powernv(kernel_has_ppc_hardlockup_watchdog)),
        HousekeepingProfile::Server => Source::Renewal(SERVER),
    }
}

/// The housekeeping state of a run.
#[derive(Debug, Default)]
pub struct HousekeepingRt {
    /// None: housekeeping off.
    source: Option<Source>,
    rngs: Vec<Rng>,
    /// Periodic sources: each CPU's timers' phases, ns in [0, period).
    phases: Vec<Vec<Time>>,
    /// The burst being run in the idle exit of each CPU, ns (0: none).
    pub(crate) work_ns: Vec<Time>,
    /// Wakeups that found their CPU idle, per CPU.
    pub(crate) wakeups: Vec<u64>,
    /// When each CPU's next housekeeping wakeup comes due (Time::MAX: none).
    /// A timer the kernel knows of: tick_nohz_get_sleep_length() sees it.
    pub(crate) next_ns: Vec<Time>,
}

impl HousekeepingRt {
    /// `ppc_watchdog`: the kernel has powerpc's own hard-lockup watchdog
    /// (era `ppc_hardlockup_watchdog`); only POWER reads it.
    #[must_use]
    pub fn new(on: bool, profile: HousekeepingProfile, ppc_watchdog: bool, nr_cpus: usize, seed: u64) -> Self {
        let source = on.then(|| source_for(profile, ppc_watchdog));
        let mut rngs: Vec<Rng> = (0..nr_cpus).map(|c| Rng::new(seed, Stream::Housekeeping(c as u32))).collect();
        let phases = match source {
            Some(Source::Periodic(p)) => rngs
                .iter_mut()
                .map(|rng| (0..p.timers).map(|_| (rng.f64() * p.period_ns as f64) as Time).collect())
                .collect(),
            _ => Vec::new(),
        };
        HousekeepingRt {
            source,
            rngs,
            phases,
            work_ns: vec![0; nr_cpus],
            wakeups: vec![0; nr_cpus],
            next_ns: vec![Time::MAX; nr_cpus],
        }
    }

    /// When `cpu`'s next wakeup comes due after `from`, ns (Time::MAX: none).
    fn next_after(&mut self, cpu: CpuId, from: Time) -> Time {
        match self.source {
            None => Time::MAX,
            Some(Source::Renewal(p)) => {
                let rng = &mut self.rngs[cpu];
                let mean = if p.p_short > 0.0 && rng.f64() < p.p_short { p.short_ns } else { p.long_ns };
                from.saturating_add((rng.exp(mean) as Time).max(1))
            }
            Some(Source::Periodic(p)) => self.phases[cpu]
                .iter()
                .map(|&phase| {
                    // The first expiry of this timer strictly after `from`.
                    let k = if from < phase { 0 } else { (from - phase) / p.period_ns + 1 };
                    phase.saturating_add(k.saturating_mul(p.period_ns))
                })
                .min()
                .unwrap_or(Time::MAX),
        }
    }
}

impl Engine {
    /// Arm every CPU's first housekeeping wakeup (none when off).
    pub(crate) fn start_housekeeping(&mut self) {
        if self.hk.source.is_none() {
            return;
        }
        for cpu in 0..self.rqs.len() {
            self.arm_housekeeping(cpu, self.now);
        }
    }

    /// The next wakeup of `cpu` after `from`.
    fn arm_housekeeping(&mut self, cpu: CpuId, from: Time) {
        let at = self.hk.next_after(cpu, from);
        self.hk.next_ns[cpu] = at;
        if at < self.end_ns {
            self.q.schedule(at, Event::Housekeeping { cpu: cpu as u32 });
        }
    }

    /// Housekeeping comes due on `cpu`: an idle CPU wakes and runs the
    /// burst before it can go idle again. False if absorbed (busy, or
    /// already leaving idle).
    ///
    /// A renewal source's next gap counts from the end of this one's burst:
    /// the recordings' statistics are idle periods (entry to exit), and an
    /// idle CPU re-enters idle when its burst is done. A periodic timer
    /// comes when due whatever the CPU did.
    pub(crate) fn housekeeping_due(&mut self, cpu: CpuId) -> bool {
        if !matches!(self.rqs[cpu].mode, CpuMode::Idle { .. }) {
            self.arm_housekeeping(cpu, self.now);
            return false;
        }
        self.hk.wakeups[cpu] += 1;
        self.record.kernel_wakeups += 1;
        self.hk.work_ns[cpu] = WORK_NS;
        self.idle_wakeup(cpu, false);
        let resume = match self.rqs[cpu].mode {
            CpuMode::Exiting { until_ns, .. } => until_ns,
            _ => self.now,
        };
        self.arm_housekeeping(cpu, resume);
        true
    }

    /// The housekeeping burst run in `cpu`'s current idle exit, taken (0 if
    /// the exit is not housekeeping's).
    pub(crate) fn take_housekeeping_work(&mut self, cpu: CpuId) -> Time {
        std::mem::take(&mut self.hk.work_ns[cpu])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_keep_their_sources_rates() {
        // The fitted mixtures reproduce the recordings' rates (fit.out).
        assert!((JUNO.rate_per_s() - 92.3).abs() < 0.5, "{}", JUNO.rate_per_s());
        assert!((PHONE.rate_per_s() - 39.1).abs() < 0.5, "{}", PHONE.rate_per_s());
        assert!((SERVER.rate_per_s() - 25.0).abs() < 1e-9);
        let profile = |name: &str| crate::platform::load_named(&crate::params::Spec::new(name)).unwrap().housekeeping;
        assert_eq!(source_for(profile("juno-r2"), false).name(), "juno");
        assert_eq!(source_for(profile("rk3399"), false).name(), "juno");
        assert_eq!(source_for(profile("hikey960"), false).name(), "phone");
        assert_eq!(source_for(profile("broadwell-2s-e5-2698v4"), true).name(), "server");
        // POWER: the soft-lockup watchdog's 4 s, and from v4.13 powerpc's
        // hard-lockup watchdog's 4 s beside it.
        assert_eq!(source_for(profile("power8"), false), Source::Periodic(powernv(false)));
        assert!((source_for(profile("power8"), false).rate_per_s() - 0.25).abs() < 1e-12);
        assert!((source_for(profile("power9"), true).rate_per_s() - 0.5).abs() < 1e-12);
    }

    /// The profile is the platform file's setting, not its name: a file
    /// named like a board but naming no profile gets the documented
    /// default, and a bad name is refused with the choices.
    #[test]
    fn the_profile_comes_from_the_file_not_the_name() {
        use crate::platform::load::load_str;
        use std::path::Path;
        let juno = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/platforms/juno-r0.toml"));
        let renamed = juno.replace("name = \"juno-r0\"", "name = \"juno-custom\"");
        let unnamed: String = renamed.lines().filter(|l| !l.starts_with("housekeeping")).collect::<Vec<_>>().join("\n");
        let p = load_str(&unnamed, Path::new("juno-custom.toml")).unwrap();
        assert_eq!(p.housekeeping, HousekeepingProfile::Server);
        let p = load_str(&renamed, Path::new("juno-custom.toml")).unwrap();
        assert_eq!(p.housekeeping, HousekeepingProfile::Board);
        let bad = renamed.replace("housekeeping = \"board\"", "housekeeping = \"juno\"");
        let e = load_str(&bad, Path::new("juno-custom.toml")).unwrap_err().to_string();
        assert!(e.contains("housekeeping") && e.contains("board, phone, powernv"), "{e}");
    }

    #[test]
    fn a_periodic_timer_comes_at_its_phase_plus_whole_periods() {
        let mut hk = HousekeepingRt::new(true, HousekeepingProfile::Powernv, false, 2, 7);
        let phase = hk.phases[1][0];
        assert!(phase < 4_000_000_000);
        assert_eq!(hk.next_after(1, 0), if phase == 0 { 4_000_000_000 } else { phase });
        // Strictly after: at the expiry itself the next one is a period on,
        // and a CPU busy through three expiries meets the fourth.
        assert_eq!(hk.next_after(1, phase + 4_000_000_000), phase + 8_000_000_000);
        assert_eq!(hk.next_after(1, phase + 11_000_000_000), phase + 12_000_000_000);
        // Two timers from v4.13: the earlier of the two.
        let mut hk = HousekeepingRt::new(true, HousekeepingProfile::Powernv, true, 1, 7);
        let (a, b) = (hk.phases[0][0], hk.phases[0][1]);
        assert_eq!(hk.next_after(0, 4_000_000_000 + a.max(b)), 8_000_000_000 + a.min(b));
        // Off: never.
        let mut hk = HousekeepingRt::new(false, HousekeepingProfile::Powernv, true, 1, 7);
        assert_eq!(hk.next_after(0, 0), Time::MAX);
    }
}

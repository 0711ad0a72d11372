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
//! of the real recordings in tools/calibrate/idle_recordings/):
//!
//! | profile | platforms | source | rate /s per CPU | median | p90 |
//! |---|---|---|---|---|---|
//! | Juno | juno-r0, juno-r2, rk3399 | LISA `sched_load`, Juno r0, 4.19 | 92.3 | 0.985 ms | 7.06 ms |
//! | phone | sd835, hikey960 | trappy `trace_surfaceflinger`, SD835 phone | 39.1 | 0.760 ms | 58.1 ms |
//! | server | every other platform | microsoft/WSL#6982 (see SERVER) | 25 | Poisson | |
//!
//! hikey960 (a phone SoC on a board) takes the phone's profile and rk3399
//! Juno's: assumed, no recording of either. The server figure is the one
//! published per-CPU idle rate found for an x86 Linux (a kernel developer's
//! idle 5.10 guest: "at most 20 to 30 timer interrupts per second on a single
//! CPU"); its shape is assumed Poisson (no recording). No published
//! measurement of an idle POWER8/POWER9 was found: POWER takes the server
//! profile (assumed).
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

use crate::platform::CpuId;
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

/// The profile a platform takes, by its name (see the module header).
#[must_use]
pub fn profile_for(platform: &str) -> Profile {
    if platform.starts_with("juno") || platform.starts_with("rk3399") {
        JUNO
    } else if platform.starts_with("sd835") || platform.starts_with("hikey960") {
        PHONE
    } else {
        SERVER
    }
}

/// The housekeeping state of a run.
#[derive(Debug, Default)]
pub struct HousekeepingRt {
    /// None: housekeeping off.
    profile: Option<Profile>,
    rngs: Vec<Rng>,
    /// The burst being run in the idle exit of each CPU, ns (0: none).
    pub(crate) work_ns: Vec<Time>,
    /// Wakeups that found their CPU idle, per CPU.
    pub(crate) wakeups: Vec<u64>,
    /// When each CPU's next housekeeping wakeup comes due (Time::MAX: none).
    /// A timer the kernel knows of: tick_nohz_get_sleep_length() sees it.
    pub(crate) next_ns: Vec<Time>,
}

impl HousekeepingRt {
    #[must_use]
    pub fn new(on: bool, platform: &str, nr_cpus: usize, seed: u64) -> Self {
        HousekeepingRt {
            profile: on.then(|| profile_for(platform)),
            rngs: (0..nr_cpus).map(|c| Rng::new(seed, Stream::Housekeeping(c as u32))).collect(),
            work_ns: vec![0; nr_cpus],
            wakeups: vec![0; nr_cpus],
            next_ns: vec![Time::MAX; nr_cpus],
        }
    }

    /// The next gap of `cpu`, ns (at least 1).
    fn gap_ns(&mut self, cpu: CpuId) -> Time {
        let Some(p) = self.profile else { return Time::MAX };
        let rng = &mut self.rngs[cpu];
        let mean = if p.p_short > 0.0 && rng.f64() < p.p_short { p.short_ns } else { p.long_ns };
        (rng.exp(mean) as Time).max(1)
    }
}

impl Engine {
    /// Arm every CPU's first housekeeping wakeup (none when off).
    pub(crate) fn start_housekeeping(&mut self) {
        if self.hk.profile.is_none() {
            return;
        }
        for cpu in 0..self.rqs.len() {
            self.arm_housekeeping(cpu, self.now);
        }
    }

    /// The next wakeup of `cpu`, a gap after `from`.
    fn arm_housekeeping(&mut self, cpu: CpuId, from: Time) {
        let at = from.saturating_add(self.hk.gap_ns(cpu));
        self.hk.next_ns[cpu] = at;
        if at < self.end_ns {
            self.q.schedule(at, Event::Housekeeping { cpu: cpu as u32 });
        }
    }

    /// Housekeeping comes due on `cpu`: an idle CPU wakes and runs the
    /// burst before it can go idle again. False if absorbed (busy, or
    /// already leaving idle).
    ///
    /// The gap to the next wakeup counts from the end of this one's burst:
    /// the recordings' statistics are idle periods (entry to exit), and an
    /// idle CPU re-enters idle when its burst is done.
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
        assert_eq!(profile_for("juno-r2").name, "juno");
        assert_eq!(profile_for("hikey960").name, "phone");
        assert_eq!(profile_for("broadwell-2s-e5-2698v4").name, "server");
    }
}

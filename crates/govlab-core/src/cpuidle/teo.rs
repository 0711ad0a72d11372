//! `teo` (timer events oriented): start from the deepest state, and move
//! shallower when recent wakeups show the CPU is usually woken early
//! ("intercepted") by something other than a timer.
//!
//! Models: Linux drivers/cpuidle/governors/teo.c (with
//! RESIDENCY_THRESHOLD_NS from drivers/cpuidle/governors/gov.h) in the form
//! the run's kernel has ([`TeoForm`], shown as the read-only `form`):
//!
//! * `v5.1` (v5.1–v5.13, b26bf6ab716f): the original teo, per-state hits,
//!   misses and early hits and a ring of the last 8 idle durations, the
//!   sleep length read first. Its code is v5.7's teo_select()/teo_update(),
//!   which lives in wtteo.rs (the weighted-history RFC's baseline,
//!   `wtteo:weighted=off`); teo runs it unchanged. v5.2's differences from
//!   v5.7 (the v5.4 PM QoS walk, v5.5's handling of disabled states, ns
//!   units and cpuidle-overhead exclusion) are not modelled: they act only
//!   with a latency limit or disabled states, or by rounding.
//! * `v6.6` (v6.6–v6.10): the bins described below, util-awareness (v6.3)
//!   and the recent-intercepts ring, the sleep length read last. This is
//!   v6.8. The v5.14–v6.5 form of the bins (c410a9a142f1: the sleep length
//!   first, the candidate from it) is not modelled: no supported version
//!   runs it, and a version from 5.14 to 6.5 runs 5.9 semantics.
//! * `v6.11` (from v6.11, EraId::TeoNoRecent): v6.6 without the recent
//!   ring (449914398083, "Remove recent intercepts metric") and without
//!   util-awareness (0a2998fa48f0, its revert), and reading the sleep length
//!   when the intercepts lead to state 0 (4b20b07ce72f, "Don't count
//!   non-existent intercepts").
//! * `v6.14` (v6.14–v6.18, EraId::TeoShortIdles; pm-6.14-rc1: 13ed5c4a6d9c
//!   "Skip getting the sleep length if wakeups are very frequent",
//!   d619b5cc6780 "Simplify counting events used for tick management",
//!   ddcfa7964677 "Simplify handling of total events count", 65e18e654475
//!   "Replace time_span_ns with a flag", 16c8d7586c19 "Skip sleep length
//!   computation for low latency constraints"; read from torvalds/linux
//!   teo.c at a7bee4e7): v6.11 with `tick_hits` and the bin sums before
//!   the tick replaced by one decayed `tick_intercepts` count; `total` its
//!   own decayed count of wakeups; a wakeup at or after the sleep length no
//!   longer discarded (only the safety nets' "artificial" wakeups are); and
//!   `short_idles`, the decayed count of idles under RESIDENCY_THRESHOLD_NS:
//!   when they are at least half of all wakeups, or the latency limit is
//!   under LATENCY_THRESHOLD_NS, a candidate that is state 0 or under
//!   RESIDENCY_THRESHOLD_NS is taken with the tick kept without reading the
//!   sleep length (replacing both v6.11's state-0 rule and v6.6's
//!   polling-state shortcut). Later forms (v6.19's tick-wakeup rework, v7.0)
//!   are not modelled: no supported version runs them.
//!
//! Era notes. In the v6.6 form the candidate starts at the deepest enabled
//! state; the sleep length is read only when the candidate is deep enough
//! to need it; `tick_hits` counts long idles beyond the tick when even the
//! deepest state's target residency is under a tick; a CPU whose
//! utilisation is above 1/64 of its capacity is "utilized" and kept out of
//! the deepest choice (Kajetan Puchalski's util-awareness, v6.3).
//!
//! Left out or approximated:
//! * Utilisation is sched_cpu_util(), which in the kernel is the CFS
//!   utilisation (util_avg or util_est, whichever is larger) plus RT, DL
//!   and IRQ time; govlab's scheduler has only CFS, so it is the CFS part
//!   ([`SelectArgs::cpu_util`]). The kernel computes the threshold once,
//!   at enable, from the CPU's capacity; govlab computes it from the same
//!   fixed capacity at every select.
//! * The kernel measures `time_span_ns` with local_clock() between select
//!   and reflect; in govlab select happens at idle entry and reflect at the
//!   end of the exit latency, so the span is the residency itself.
//! * The v6.8 `recent` ring is modelled as it is, defect included (v6.8
//!   teo_update(): the oldest slot's bin is decremented before the tick-hit
//!   test, and a tick hit `goto end`s without rewriting the slot), so that
//!   bin's count is decremented again one lap later and wraps around
//!   (unsigned, as in the kernel). Once a partial sum is 2^31 or more the
//!   walk of step 4 can no longer stop shallower, and teo stays on the
//!   deepest state for good (govlab issue 43: fio's IO-completion wakeups
//!   every 100 µs, thousands of too-deep entries in a row). This is the
//!   underflow 449914398083 names ("can be observed during boot already,
//!   which teo usually doesn't recover from"); from v6.11 it cannot happen.
//! * The kernel may return a disabled state 0 when no enabled state meets the
//!   latency limit; the engine forbids that, so govlab then takes the
//!   nearest enabled state.
//!
//! The idea. Most wakeups on most systems are timers, and the time to the
//! next timer (the sleep length) is known, if at some cost. So teo counts,
//! per idle state "bin" (from a state's target residency up to the next
//! state's), how often the measured idle duration fell in the same bin as
//! the sleep length (a *hit*) and how often it fell in a shallower bin (an
//! *intercept*: a non-timer wakeup came first). Counts grow by PULSE and
//! decay by 1/8 at every update; `recent` counts the intercepts among the
//! last NR_RECENT wakeups.
//!
//! Selection, at each idle entry:
//!
//! 1. Learn from the previous idle period (see below), if there was one.
//!    The CPU is *utilized* if its utilisation exceeds its capacity >>
//!    UTIL_THRESHOLD_SHIFT. A utilized CPU with only two states takes
//!    state 0 if it is enabled, does not poll and is usable with the tick
//!    as it is (or if state 1 is disabled), else state 1 expecting an idle
//!    period of state 1's target residency; then step 9.
//! 2. The candidate is the deepest enabled state. Sum hits, intercepts and
//!    recent intercepts over the bins shallower than it; note the deepest
//!    enabled state whose exit latency meets the latency limit.
//! 3. If the candidate is the only enabled state, take it.
//! 4. If the shallower bins hold more than half of all events as intercepts
//!    (2 × intercepts > total − shallower hits), or more than NR_RECENT/2 of
//!    the recent wakeups, walk down from the candidate: the first state
//!    below which lie more than half of the counted (recent) intercepts
//!    becomes the candidate, if it is enabled and usable with the tick as it
//!    is (a stopped tick needs a residency of at least a tick); otherwise the
//!    deepest usable state met on the way.
//! 5. Cap at the latency-limited state. If the CPU is utilized, step to
//!    the next shallower enabled state that does not poll, if it is usable
//!    with the tick as it is.
//! 6. If the candidate is state 0, or state 0 polls and the candidate's
//!    target residency is under RESIDENCY_THRESHOLD_NS, return it and keep
//!    the tick, without reading the sleep length.
//! 7. Read the sleep length; if the candidate does not fit before the next
//!    timer, take the deepest shallower enabled state that does (if usable).
//! 8. If the candidate's residency is under a tick and intercepts make up
//!    more than 5/8 of all events, expect the idle period to end within half
//!    a tick.
//! 9. Stop the tick if the tick is already stopped, or the state does not
//!    poll and the expected duration is at least a tick. Otherwise keep the
//!    tick, and if the state's residency does not fit before the next tick,
//!    take a shallower state that does.
//!
//! Learning, at the next select: the idle duration is taken as the
//! residency minus half the exit latency (half the residency if shorter
//! than the exit latency); a wakeup at or after the sleep length, or an
//! "artificial" one (the polling time limit, or the tick although no timer
//! was due within it), counts as infinitely long. The sleep length's bin and
//! the duration's bin are compared: same bin, a hit; shallower, an
//! intercept. When even the deepest state's residency is under a tick, the
//! time beyond the tick is an extra bin: a sleep length and a duration both
//! beyond the tick count as a `tick_hit`.

use super::{enabled_state, teo_time_ok, KTIME_MAX, CpuidleGovernor, GovernorInfo, IdleDevice, Reflection, SelectArgs, Selection};
use super::wtteo::{Wtteo, WtteoTunables};
use crate::error::Result;
use crate::kernel::{BuildCtx, EraId, KernelConfig};
use crate::params::{Params, Spec};

/// Added to a metric when it grows (teo.c).
pub const PULSE: u32 = 1024;
/// Metrics lose 1/2^DECAY_SHIFT at every update (teo.c).
pub const DECAY_SHIFT: u32 = 3;
/// How many of the latest wakeups count as "recent" (teo.c).
pub const NR_RECENT: usize = 9;
/// A candidate state's residency below this skips the sleep length when
/// state 0 polls (gov.h, v6.6+).
pub const RESIDENCY_THRESHOLD_NS: u64 = 15_000;
/// A latency limit below this makes the v6.14 form skip the sleep length
/// for shallow candidates (teo.c v6.14, 16c8d7586c19:
/// RESIDENCY_THRESHOLD_NS / 2).
pub const LATENCY_THRESHOLD_NS: u64 = RESIDENCY_THRESHOLD_NS / 2;
/// A CPU is utilized when its utilisation exceeds capacity >> this, about
/// 1.56 % (teo.c, v6.3–v6.10; chosen there by testing).
pub const UTIL_THRESHOLD_SHIFT: u32 = 6;
/// teo's rating in its ops table (teo.c); govlab picks governors by name,
/// so this is informative only.
pub const RATING: u32 = 19;

pub const INFO: GovernorInfo = GovernorInfo {
    name: "teo",
    description: "deepest state unless recent non-timer wakeups (intercepts) say shallower, or the CPU is utilized; timer checked last",
    models: "Linux drivers/cpuidle/governors/teo.c: v5.7's form before 5.14, v6.8's (6.6-6.10), v6.11's (6.11-6.13), v6.14's from 6.14",
    params: &[],
    eras: &[EraId::TeoBins, EraId::TeoNoRecent, EraId::TeoShortIdles],
    patches: &[],
    build,
};

/// The metrics of one state's bin (struct teo_bin).
#[derive(Debug, Clone, Copy, Default)]
struct TeoBin {
    /// Decayed count of idle periods that ended in this bin although the
    /// sleep length fell in a deeper one.
    intercepts: u32,
    /// Decayed count of idle periods that ended in the sleep length's bin.
    hits: u32,
    /// Intercepts in this bin among the last NR_RECENT wakeups (may wrap,
    /// as in v6.8).
    recent: u32,
}

/// Per-CPU state (struct teo_cpu), plus the cpuidle_device fields teo reads
/// (last_state_idx, last_residency_ns).
#[derive(Debug, Clone, Default)]
pub struct TeoCpu {
    /// Time from selection to the post-wakeup update, ns (or the sleep
    /// length for an artificial wakeup).
    time_span_ns: u64,
    /// Time to the next timer at selection, ns; KTIME_MAX when not read.
    sleep_length_ns: u64,
    /// One bin per idle state.
    state_bins: Vec<TeoBin>,
    /// Sum of all hits, intercepts and tick hits.
    total: u32,
    /// Next slot of `recent_idx` to overwrite.
    next_recent_idx: usize,
    /// Bins of the recent intercepts (None: a hit, or nothing yet).
    recent_idx: [Option<usize>; NR_RECENT],
    /// Decayed count of idles beyond the tick with a sleep length beyond it
    /// (only when every state's residency is under a tick).
    tick_hits: u32,
    /// TICK_NSEC, from the last select.
    tick_ns: u64,
    /// v6.14: decayed count of intercepts at or beyond the tick
    /// (`tick_intercepts`; the condition is as v6.14 has it, reversed from
    /// its comment, fixed in v6.19 by 50db438231dc).
    tick_intercepts: u32,
    /// v6.14: decayed count of wakeups after idles under
    /// RESIDENCY_THRESHOLD_NS (`short_idles`).
    short_idles: u32,
    /// v6.14: the last wakeup came from a safety net (`artificial_wakeup`).
    artificial_wakeup: bool,
    /// dev->last_state_idx: the state entered, until the update consumes it.
    last_state_idx: Option<usize>,
    /// dev->last_residency_ns: entry to exit, exit latency included.
    last_residency_ns: u64,
}

/// Which teo a kernel has (see the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TeoForm {
    /// v5.1–v5.13: per-state hits, misses and early hits (wtteo.rs's
    /// v5.7 code).
    V5_1,
    /// v6.6–v6.10: bins, recent ring, util-awareness (v6.8).
    #[default]
    V6_6,
    /// v6.11–v6.13: no recent ring, no util-awareness.
    V6_11,
    /// From v6.14: short idles, tick intercepts, `total` decayed.
    V6_14,
}

impl TeoForm {
    /// The form `kernel` runs.
    #[must_use]
    pub fn of(kernel: &KernelConfig) -> TeoForm {
        if kernel.has(EraId::TeoShortIdles) {
            TeoForm::V6_14
        } else if kernel.has(EraId::TeoNoRecent) {
            TeoForm::V6_11
        } else if kernel.has(EraId::TeoBins) {
            TeoForm::V6_6
        } else {
            TeoForm::V5_1
        }
    }

    /// The first version of the form, as `--show-config` names it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TeoForm::V5_1 => "v5.1",
            TeoForm::V6_6 => "v6.6",
            TeoForm::V6_11 => "v6.11",
            TeoForm::V6_14 => "v6.14",
        }
    }
}

/// teo in the form of the run's kernel: the bins (v6.6, v6.11) here, the
/// original (v5.1) from wtteo.rs.
pub enum Teo {
    Bins { form: TeoForm, cpus: Vec<TeoCpu> },
    Original(Wtteo),
}

impl Default for Teo {
    fn default() -> Self {
        Teo::of(TeoForm::default())
    }
}

impl Teo {
    #[must_use]
    pub fn of(form: TeoForm) -> Teo {
        match form {
            TeoForm::V5_1 => Teo::Original(Wtteo::new(WtteoTunables { weighted: false, ..WtteoTunables::default() })),
            form => Teo::Bins { form, cpus: Vec::new() },
        }
    }

    #[must_use]
    pub fn form(&self) -> TeoForm {
        match self {
            Teo::Bins { form, .. } => *form,
            Teo::Original(_) => TeoForm::V5_1,
        }
    }
}

fn build(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpuidleGovernor>> {
    // teo has no sysfs tunables.
    Params::new("cpuidle governor teo", spec).finish()?;
    Ok(Box::new(Teo::of(TeoForm::of(&ctx.kernel))))
}

impl TeoCpu {
    /// teo_update: classify the last wakeup as a hit or an intercept.
    /// From v6.11 (449914398083) there is no recent ring.
    fn update(&mut self, dev: &IdleDevice<'_>, form: TeoForm) {
        let ring = form == TeoForm::V6_6;
        let states = dev.states;
        let n = states.len();
        let tick_ns = self.tick_ns;
        let last = self.last_state_idx.unwrap_or(0);

        let measured_ns = if self.time_span_ns >= self.sleep_length_ns {
            // An artificial wakeup, or one at the timer: discard as "long".
            u64::MAX
        } else {
            // Half the exit latency approximates the typical wakeup delay.
            let lat_ns = states[last].exit_latency_ns;
            let r = self.last_residency_ns;
            if r >= lat_ns {
                r - lat_ns / 2
            } else {
                r / 2
            }
        };

        // Decay every bin and find the bins of the sleep length and of the
        // measured duration.
        self.total = 0;
        let mut idx_timer = 0;
        let mut idx_duration = 0;
        let mut target_residency_ns = 0;
        for (i, s) in states.iter().enumerate() {
            let bin = &mut self.state_bins[i];
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            self.total += bin.hits + bin.intercepts;
            target_residency_ns = s.target_residency_ns;
            if target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                if target_residency_ns <= measured_ns {
                    idx_duration = i;
                }
            }
        }

        // The recent ring's oldest slot leaves (v6.8 does this before the
        // tick-hit test below, which may leave the slot as it is).
        let slot = self.next_recent_idx;
        if ring {
            self.next_recent_idx = (slot + 1) % NR_RECENT;
            if let Some(k) = self.recent_idx[slot] {
                self.state_bins[k].recent = self.state_bins[k].recent.wrapping_sub(1);
            }
        }

        // Every residency is under a tick: the time beyond the tick acts as
        // an extra, hits-only bin.
        if target_residency_ns < tick_ns {
            self.tick_hits -= self.tick_hits >> DECAY_SHIFT;
            self.total += self.tick_hits;
            if tick_ns <= self.sleep_length_ns {
                idx_timer = n;
                if tick_ns <= measured_ns {
                    self.tick_hits += PULSE;
                    // v6.8 leaves the ring slot as it was here.
                    self.total += PULSE;
                    return;
                }
            }
        }

        if idx_timer == idx_duration {
            self.state_bins[idx_timer].hits += PULSE;
            if ring {
                self.recent_idx[slot] = None;
            }
        } else {
            let bin = &mut self.state_bins[idx_duration];
            bin.intercepts += PULSE;
            if ring {
                bin.recent = bin.recent.wrapping_add(1);
                self.recent_idx[slot] = Some(idx_duration);
            }
        }
        self.total += PULSE;
    }
}

/// The deepest enabled state shallower than `state_idx` whose residency
/// fits `duration_ns`, else the shallowest enabled one below it, else
/// `state_idx`. `no_poll` (used by the util-aware step) skips polling
/// states.
fn find_shallower_state(dev: &IdleDevice<'_>, state_idx: usize, duration_ns: u64, no_poll: bool) -> usize {
    let mut idx = state_idx;
    for i in (0..state_idx).rev() {
        if dev.disabled[i] || (no_poll && dev.states[i].polling) {
            continue;
        }
        idx = i;
        if dev.states[i].target_residency_ns <= duration_ns {
            break;
        }
    }
    idx
}

/// Step 9, the tick decision (teo.c's `end` label): stop the tick if it is
/// stopped already or a non-polling state expects at least a tick; else
/// keep it, with a state that fits before the next tick.
fn tick_decision(
    dev: &IdleDevice<'_>,
    args: &SelectArgs,
    mut idx: usize,
    idx0: usize,
    duration_ns: u64,
    delta_tick_ns: u64,
) -> Selection {
    let states = dev.states;
    if (!states[idx].polling && duration_ns >= args.tick_ns) || args.tick_stopped {
        return Selection { state: enabled_state(dev, idx), stop_tick: true };
    }
    if idx > idx0 && states[idx].target_residency_ns > delta_tick_ns {
        idx = find_shallower_state(dev, idx, delta_tick_ns, false);
    }
    out_tick(dev, idx)
}

/// Return `idx` with the tick kept (teo.c's out_tick).
fn out_tick(dev: &IdleDevice<'_>, idx: usize) -> Selection {
    Selection { state: enabled_state(dev, idx), stop_tick: false }
}

impl TeoCpu {
    /// teo_select of the bins forms (v6.6 and v6.11).
    fn select(&mut self, form: TeoForm, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        let cpu_data = self;
        let states = dev.states;
        let n = states.len();
        let tick_ns = args.tick_ns;
        let latency_req = args.latency_req_ns;
        let mut delta_tick_ns = tick_ns / 2;

        // 1. Learn from the previous idle period.
        cpu_data.tick_ns = tick_ns;
        if cpu_data.last_state_idx.is_some() {
            cpu_data.update(dev, form);
            cpu_data.last_state_idx = None;
        }
        // Unknown until read; an early return leaves it "infinite".
        cpu_data.sleep_length_ns = KTIME_MAX;

        if n < 2 {
            return out_tick(dev, 0);
        }

        let mut idx: Option<usize> = (!dev.disabled[0]).then_some(0);
        // Util-awareness: v6.3 to v6.10 (reverted by 0a2998fa48f0).
        let cpu_utilized = form == TeoForm::V6_6 && args.cpu_util > args.cpu_capacity >> UTIL_THRESHOLD_SHIFT;
        // A utilized CPU with two states: the shallowest non-polling one.
        if n < 3 && cpu_utilized {
            if (idx == Some(0) && !states[0].polling && teo_time_ok(args, dev.states[0].target_residency_ns)) || dev.disabled[1] {
                return out_tick(dev, 0);
            }
            return tick_decision(dev, args, 1, 0, states[1].target_residency_ns, delta_tick_ns);
        }

        // 2. Candidate = deepest enabled state; sums over shallower bins.
        let mut idx0 = 0;
        let mut constraint_idx = 0;
        let (mut intercept_sum, mut hit_sum, mut recent_sum) = (0u32, 0u32, 0u32);
        let (mut idx_intercept_sum, mut idx_hit_sum, mut idx_recent_sum) = (0u32, 0u32, 0u32);
        for (i, s) in states.iter().enumerate().skip(1) {
            let prev_bin = &cpu_data.state_bins[i - 1];
            intercept_sum += prev_bin.intercepts;
            hit_sum += prev_bin.hits;
            recent_sum = recent_sum.wrapping_add(prev_bin.recent);
            if dev.disabled[i] {
                continue;
            }
            if idx.is_none() {
                idx0 = i;
            }
            idx = Some(i);
            if s.exit_latency_ns <= latency_req {
                constraint_idx = i;
            }
            idx_intercept_sum = intercept_sum;
            idx_hit_sum = hit_sum;
            idx_recent_sum = recent_sum;
        }
        let Some(mut idx) = idx else {
            // No state enabled: the kernel must use 0.
            return out_tick(dev, 0);
        };

        // 3. Only one state enabled: take it; the tick rule still applies.
        let mut duration_ns;
        if idx == idx0 {
            duration_ns = states[idx].target_residency_ns;
        } else {
            let tick_intercept_sum = intercept_sum + cpu_data.state_bins[n - 1].intercepts;

            // 4. Early wakeups dominate: look for a shallower state.
            let alt_intercepts =
                idx_intercept_sum.wrapping_mul(2) > cpu_data.total.wrapping_sub(idx_hit_sum);
            // No recent ring from v6.11 (449914398083).
            let alt_recent = form == TeoForm::V6_6 && idx_recent_sum > (NR_RECENT / 2) as u32;
            let prev_intercept_idx = idx;
            if alt_recent || alt_intercepts {
                let mut first_suitable_idx = idx;
                let mut intercept_sum = 0u32;
                let mut recent_sum = 0u32;
                for i in (0..idx).rev() {
                    let bin = &cpu_data.state_bins[i];
                    intercept_sum += bin.intercepts;
                    recent_sum = recent_sum.wrapping_add(bin.recent);
                    if (!alt_recent || recent_sum.wrapping_mul(2) > idx_recent_sum)
                        && (!alt_intercepts || intercept_sum.wrapping_mul(2) > idx_intercept_sum)
                    {
                        // This state had not exceeded the idle duration in
                        // most relevant cases; take it if usable, else the
                        // deepest usable one seen on the way.
                        idx = if teo_time_ok(args, dev.states[i].target_residency_ns) && !dev.disabled[i] { i } else { first_suitable_idx };
                        break;
                    }
                    if dev.disabled[i] {
                        continue;
                    }
                    if !teo_time_ok(args, dev.states[i].target_residency_ns) {
                        // Too shallow for a stopped tick; go on only if a
                        // usable alternative has been found already.
                        if first_suitable_idx != idx {
                            continue;
                        }
                        break;
                    }
                    first_suitable_idx = i;
                }
            }

            // v6.11 (4b20b07ce72f, teo_select): intercepts led to state 0;
            // read the sleep length all the same, so that the next update
            // can tell a hit from an intercept (an unread one is infinite,
            // and every wakeup would count as an intercept in state 0).
            if form == TeoForm::V6_11 && idx == 0 && prev_intercept_idx != 0 {
                cpu_data.sleep_length_ns = args.sleep_length_ns.min(KTIME_MAX);
                return out_tick(dev, 0);
            }

            // 5. The latency limit.
            if idx > constraint_idx {
                idx = constraint_idx;
            }

            //    A utilized CPU is likely to be woken soon: one state
            //    shallower, not a polling one.
            if cpu_utilized {
                let i = find_shallower_state(dev, idx, KTIME_MAX, true);
                if teo_time_ok(args, dev.states[i].target_residency_ns) {
                    idx = i;
                }
            }

            // 6. Very shallow candidates do not need the timers.
            if idx == 0 {
                return out_tick(dev, idx);
            }
            if states[0].polling && states[idx].target_residency_ns < RESIDENCY_THRESHOLD_NS {
                return out_tick(dev, idx);
            }

            // 7. The next timer may come before the candidate pays off.
            duration_ns = args.sleep_length_ns.min(KTIME_MAX);
            delta_tick_ns = args.delta_tick_ns;
            cpu_data.sleep_length_ns = duration_ns;
            if states[idx].target_residency_ns > duration_ns {
                let i = find_shallower_state(dev, idx, duration_ns, false);
                if teo_time_ok(args, dev.states[i].target_residency_ns) {
                    idx = i;
                }
            }

            // 8. Intercepts before the tick dominate: expect a short idle.
            let total = cpu_data.total;
            if states[idx].target_residency_ns < tick_ns && tick_intercept_sum > total / 2 + total / 8 {
                duration_ns = tick_ns / 2;
            }
        }

        tick_decision(dev, args, idx, idx0, duration_ns, delta_tick_ns)
    }

    /// teo_reflect: record the state and how long the idle period lasted; an
    /// artificial wakeup counts as lasting the whole sleep length.
    fn reflect(&mut self, r: &Reflection) {
        let cpu_data = self;
        cpu_data.last_state_idx = Some(r.state);
        cpu_data.last_residency_ns = r.residency_ns;
        // v6.14 keeps only the flag (65e18e654475); the v6.6 and v6.11 forms
        // read the span.
        cpu_data.artificial_wakeup = r.poll_time_limit || (r.got_tick && cpu_data.sleep_length_ns > cpu_data.tick_ns);
        cpu_data.time_span_ns = if cpu_data.artificial_wakeup {
            cpu_data.sleep_length_ns
        } else {
            r.residency_ns
        };
    }

}

impl TeoCpu {
    /// teo_update of v6.14 (teo.c at a7bee4e7): short idles counted, only
    /// an artificial wakeup taken as infinitely long, `tick_intercepts`
    /// for intercepts at or beyond the tick, `total` decayed by itself.
    fn update_v6_14(&mut self, dev: &IdleDevice<'_>) {
        let states = dev.states;
        let last = self.last_state_idx.unwrap_or(0);
        self.short_idles -= self.short_idles >> DECAY_SHIFT;
        let measured_ns = if self.artificial_wakeup {
            u64::MAX
        } else {
            let lat_ns = states[last].exit_latency_ns;
            let r = self.last_residency_ns;
            if r >= lat_ns {
                let m = r - lat_ns / 2;
                if m < RESIDENCY_THRESHOLD_NS {
                    self.short_idles += PULSE;
                }
                m
            } else {
                self.short_idles += PULSE;
                r / 2
            }
        };
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for (i, s) in states.iter().enumerate() {
            let bin = &mut self.state_bins[i];
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            if s.target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                if s.target_residency_ns <= measured_ns {
                    idx_duration = i;
                }
            }
        }
        self.tick_intercepts -= self.tick_intercepts >> DECAY_SHIFT;
        if idx_timer == idx_duration {
            self.state_bins[idx_timer].hits += PULSE;
        } else {
            self.state_bins[idx_duration].intercepts += PULSE;
            if self.tick_ns <= measured_ns {
                self.tick_intercepts += PULSE;
            }
        }
        self.total -= self.total >> DECAY_SHIFT;
        self.total += PULSE;
    }

    /// teo_select of v6.14: steps 1–5 as v6.11 (no util-awareness, no
    /// recent ring); then, for a candidate that is state 0 or under
    /// RESIDENCY_THRESHOLD_NS, the sleep length is skipped (tick kept) when
    /// short idles are at least half of all wakeups or the latency limit is
    /// under LATENCY_THRESHOLD_NS; else it is read, state 0 returned with
    /// the tick kept, and steps 7–9 as before with `tick_intercepts` in the
    /// 5/8 rule.
    fn select_v6_14(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        let states = dev.states;
        let n = states.len();
        let tick_ns = args.tick_ns;
        let latency_req = args.latency_req_ns;
        let mut delta_tick_ns = tick_ns / 2;

        self.tick_ns = tick_ns;
        if self.last_state_idx.is_some() {
            self.update_v6_14(dev);
            self.last_state_idx = None;
        }
        self.sleep_length_ns = KTIME_MAX;
        if n < 2 {
            return out_tick(dev, 0);
        }

        let mut idx: Option<usize> = (!dev.disabled[0]).then_some(0);
        let (mut idx0, mut constraint_idx) = (0, 0);
        let (mut intercept_sum, mut hit_sum) = (0u32, 0u32);
        let (mut idx_intercept_sum, mut idx_hit_sum) = (0u32, 0u32);
        for (i, s) in states.iter().enumerate().skip(1) {
            intercept_sum += self.state_bins[i - 1].intercepts;
            hit_sum += self.state_bins[i - 1].hits;
            if dev.disabled[i] {
                continue;
            }
            if idx.is_none() {
                idx0 = i;
            }
            idx = Some(i);
            if s.exit_latency_ns <= latency_req {
                constraint_idx = i;
            }
            idx_intercept_sum = intercept_sum;
            idx_hit_sum = hit_sum;
        }
        let Some(mut idx) = idx else {
            return out_tick(dev, 0);
        };
        if idx == idx0 {
            return tick_decision(dev, args, idx, idx0, states[idx].target_residency_ns, delta_tick_ns);
        }

        if idx_intercept_sum.wrapping_mul(2) > self.total.wrapping_sub(idx_hit_sum) {
            let mut first_suitable_idx = idx;
            let mut intercept_sum = 0u32;
            for i in (0..idx).rev() {
                intercept_sum += self.state_bins[i].intercepts;
                let ok = teo_time_ok(args, states[i].target_residency_ns);
                if intercept_sum.wrapping_mul(2) > idx_intercept_sum {
                    idx = if ok && !dev.disabled[i] { i } else { first_suitable_idx };
                    break;
                }
                if dev.disabled[i] {
                    continue;
                }
                if ok {
                    first_suitable_idx = i;
                    continue;
                }
                if first_suitable_idx == idx {
                    break;
                }
            }
        }
        if idx > constraint_idx {
            idx = constraint_idx;
        }

        // 13ed5c4a6d9c, 16c8d7586c19: mostly very short idles, or a tight
        // latency limit: a shallow candidate needs no timer.
        if (idx == 0 || states[idx].target_residency_ns < RESIDENCY_THRESHOLD_NS)
            && (self.short_idles.wrapping_mul(2) >= self.total || latency_req < LATENCY_THRESHOLD_NS)
        {
            return out_tick(dev, idx);
        }

        let mut duration_ns = args.sleep_length_ns.min(KTIME_MAX);
        delta_tick_ns = args.delta_tick_ns;
        self.sleep_length_ns = duration_ns;
        if idx == 0 {
            return out_tick(dev, 0);
        }
        if states[idx].target_residency_ns > duration_ns {
            let i = find_shallower_state(dev, idx, duration_ns, false);
            if teo_time_ok(args, states[i].target_residency_ns) {
                idx = i;
            }
        }
        // d619b5cc6780: the 5/8 rule on the tick-intercepts count.
        let total = self.total;
        if states[idx].target_residency_ns < tick_ns && self.tick_intercepts > total / 2 + total / 8 {
            duration_ns = tick_ns / 2;
        }
        tick_decision(dev, args, idx, idx0, duration_ns, delta_tick_ns)
    }
}

impl CpuidleGovernor for Teo {
    fn name(&self) -> &'static str {
        "teo"
    }

    /// teo_enable_device: all metrics zero, the recent ring empty (the
    /// original form: every recent interval "infinite").
    fn enable(&mut self, dev: &IdleDevice<'_>) {
        match self {
            Teo::Bins { cpus, .. } => {
                if cpus.len() <= dev.cpu {
                    cpus.resize(dev.cpu + 1, TeoCpu::default());
                }
                cpus[dev.cpu] = TeoCpu { state_bins: vec![TeoBin::default(); dev.states.len()], ..TeoCpu::default() };
            }
            Teo::Original(g) => g.enable(dev),
        }
    }

    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        match self {
            Teo::Bins { form: TeoForm::V6_14, cpus } => cpus[dev.cpu].select_v6_14(dev, args),
            Teo::Bins { form, cpus } => cpus[dev.cpu].select(*form, dev, args),
            Teo::Original(g) => g.select(dev, args),
        }
    }

    fn reflect(&mut self, dev: &IdleDevice<'_>, r: &Reflection) {
        match self {
            Teo::Bins { cpus, .. } => cpus[dev.cpu].reflect(r),
            Teo::Original(g) => g.reflect(dev, r),
        }
    }

    /// No sysfs tunables; the form of the kernel's teo, read-only.
    fn tunables(&self) -> Vec<(String, String)> {
        vec![("form".to_string(), self.form().name().to_string())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::testing::*;

    fn fresh(dev: &IdleDevice<'_>) -> Teo {
        fresh_form(dev, TeoForm::V6_6)
    }

    pub(super) fn fresh_form(dev: &IdleDevice<'_>, form: TeoForm) -> Teo {
        let mut g = Teo::of(form);
        g.enable(dev);
        g
    }

    impl Teo {
        pub(super) fn cpu(&self, i: usize) -> &TeoCpu {
            match self {
                Teo::Bins { cpus, .. } => &cpus[i],
                Teo::Original(_) => panic!("the original form keeps no bins"),
            }
        }
    }

    #[test]
    fn intercepts_pull_shallower_and_it_recovers() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        let a = args(10 * MS);
        // Nothing learned: the deepest state, and the 10 ms timer lets the
        // tick stop.
        assert_eq!(cycle(&mut g, &dev, &a, 150 * US), Selection { state: 6, stop_tick: true });
        // The CPU keeps waking after ~150 µs although the timer is 10 ms
        // away: intercepts in the C3 bin (100–200 µs).
        let mut picks = Vec::new();
        for _ in 0..10 {
            picks.push(cycle(&mut g, &dev, &a, 150 * US));
        }
        // From the second intercept on: C3, with the tick kept (intercepts
        // before the tick are the vast majority).
        assert!(picks[1..].iter().all(|s| *s == Selection { state: 3, stop_tick: false }), "{picks:?}");
        // The early wakeups stop: the CPU now sleeps until the timer.
        let mut deep_after = None;
        for k in 0..30 {
            if cycle(&mut g, &dev, &a, 10 * MS).state == 6 {
                deep_after = Some(k);
                break;
            }
        }
        // Not at once: the decaying intercepts and the recent-intercept
        // count (9 of the last 9 wakeups) hold it shallow for a while.
        let k = deep_after.expect("teo never went back to the deepest state");
        assert!((1..10).contains(&k), "recovered after {k} long idles");
        assert_eq!(g.select(&dev, &a), Selection { state: 6, stop_tick: true });
    }

    /// v6.8 quirk (fixed by removing `recent` in v6.11): a tick hit leaves
    /// its ring slot pointing at the old intercept's bin, which is then
    /// decremented once per lap and wraps around.
    #[test]
    fn recent_count_wraps_after_tick_hits_as_in_v6_8() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        let a = args(10 * MS);
        for _ in 0..12 {
            cycle(&mut g, &dev, &a, 150 * US);
        }
        assert_eq!(g.cpu(0).state_bins[3].recent, NR_RECENT as u32);
        for _ in 0..30 {
            cycle(&mut g, &dev, &a, 10 * MS);
        }
        let recent = g.cpu(0).state_bins[3].recent;
        assert!(recent > u32::MAX - 30, "recent = {recent}");
        // Here the wrapped count happens not to change the choice: a sum of
        // 2^31 or more, doubled in 32-bit arithmetic, is below itself, so
        // the walk never stops at a shallower state.
        assert_eq!(g.select(&dev, &a), Selection { state: 6, stop_tick: true });
    }

    #[test]
    fn hits_keep_the_deepest_state() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        // 1 ms timers that always fire on time: hits in the C8 bin.
        let mut g = fresh(&dev);
        let a = SelectArgs { delta_tick_ns: MS, ..args(MS) };
        for _ in 0..20 {
            let sel = g.select(&dev, &a);
            // C8 fits the 1 ms timer; 1 ms is under a tick, so the tick
            // stays, and the next tick (1 ms) leaves room for C8.
            assert_eq!(sel, Selection { state: 6, stop_tick: false });
            g.reflect(&dev, &Reflection { state: sel.state, residency_ns: MS + 200 * US, poll_time_limit: false, got_tick: false });
        }
        let c = &g.cpu(0);
        assert!(c.state_bins[6].hits > 7 * PULSE, "{:?}", c.state_bins);
        assert!(c.state_bins.iter().all(|b| b.intercepts == 0));
        // 10 ms timers, also on time: tick hits; deepest state, tick stopped.
        let mut g = fresh(&dev);
        let a = args(10 * MS);
        for _ in 0..20 {
            assert_eq!(cycle(&mut g, &dev, &a, 10 * MS), Selection { state: 6, stop_tick: true });
        }
        assert!(g.cpu(0).tick_hits > 7 * PULSE);
    }

    #[test]
    fn latency_limit_caps_the_candidate() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        // 80 µs allows C3 (70) but not C6 (85).
        let a = SelectArgs { latency_req_ns: 80 * US, ..args(10 * MS) };
        assert_eq!(g.select(&dev, &a), Selection { state: 3, stop_tick: true });
        // Only state 0 fits: returned at once, tick kept, timers unread.
        let a = SelectArgs { latency_req_ns: US, ..args(10 * MS) };
        assert_eq!(g.select(&dev, &a), Selection { state: 0, stop_tick: false });
        assert_eq!(g.cpu(0).sleep_length_ns, KTIME_MAX);
    }

    #[test]
    fn very_short_idles_skip_the_sleep_length() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        let a = args(10 * MS);
        // 5 µs idles: intercepts in the C1 bin (2–20 µs).
        for _ in 0..12 {
            cycle(&mut g, &dev, &a, 5 * US);
        }
        // C1's residency (2 µs) is under 15 µs and state 0 polls: no
        // sleep length, tick kept.
        assert_eq!(g.select(&dev, &a), Selection { state: 1, stop_tick: false });
        assert_eq!(g.cpu(0).sleep_length_ns, KTIME_MAX);
    }

    #[test]
    fn timer_before_the_candidate_residency_picks_shallower() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        // 150 µs to the next timer: C3 (100 µs) is the deepest that fits.
        assert_eq!(g.select(&dev, &args(150 * US)), Selection { state: 3, stop_tick: false });
    }

    /// v6.8 util-awareness: above capacity >> 6 the CPU is utilized and
    /// teo steps one state shallower, skipping polling states.
    #[test]
    fn utilized_cpu_steps_one_state_shallower() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let pick = |util: u64, capacity: u64, a: SelectArgs| {
            let mut g = fresh(&dev);
            g.select(&dev, &SelectArgs { cpu_util: util, cpu_capacity: capacity, ..a })
        };
        let a = args(10 * MS);
        // Threshold 1024 >> 6 = 16: at 16 not utilized (C8), above it C7s.
        assert_eq!(pick(16, 1024, a), Selection { state: 6, stop_tick: true });
        assert_eq!(pick(17, 1024, a), Selection { state: 5, stop_tick: true });
        // The threshold follows the capacity: 512 >> 6 = 8.
        assert_eq!(pick(10, 512, a), Selection { state: 5, stop_tick: true });
        // With the tick stopped, C7s (800 µs) is too shallow to be trusted
        // for an unbounded idle: C8 stays.
        let stopped = SelectArgs { tick_stopped: true, ..a };
        assert_eq!(pick(500, 1024, stopped), Selection { state: 6, stop_tick: true });
        // A latency limit leaving only C1: the step would reach POLL, which
        // it skips, so C1 stays.
        let lat = SelectArgs { latency_req_ns: 5 * US, ..a };
        assert_eq!(pick(500, 1024, lat), Selection { state: 1, stop_tick: false });
    }

    /// With two states a utilized CPU skips the metrics: the shallowest
    /// non-polling state, tick kept.
    #[test]
    fn utilized_cpu_with_two_states_takes_the_shallowest_non_polling_one() {
        let a = SelectArgs { cpu_util: 500, ..args(10 * MS) };
        // POLL and C6: state 0 polls, so C6, expecting only its 200 µs
        // target residency: the tick is kept.
        let states = vec![state("POLL", 0, 0, true), state("C6", 85, 200, false)];
        let disabled = [false; 2];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        assert_eq!(g.select(&dev, &a), Selection { state: 1, stop_tick: false });
        // Not utilized: C6 for the 10 ms to the timer, tick stopped.
        let mut g = fresh(&dev);
        assert_eq!(g.select(&dev, &args(10 * MS)), Selection { state: 1, stop_tick: true });
        // C1 and C6: C1 at once, tick kept.
        let states = vec![state("C1", 2, 2, false), state("C6", 85, 200, false)];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = fresh(&dev);
        assert_eq!(g.select(&dev, &a), Selection { state: 0, stop_tick: false });
        // ...unless the tick is stopped: C1 could then last; C6.
        let mut g = fresh(&dev);
        let stopped = SelectArgs { tick_stopped: true, ..a };
        assert_eq!(g.select(&dev, &stopped), Selection { state: 1, stop_tick: true });
    }

    #[test]
    fn builds_without_settings_and_rejects_any() {
        let platform = crate::kernel::BuildCtx::of(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap());
        assert_eq!((INFO.build)(&Spec::new("teo"), &platform).unwrap().name(), "teo");
        let spec = Spec::parse("teo:foo=1", "cpuidle").unwrap();
        assert!((INFO.build)(&spec, &platform).is_err());
    }
}

/// The teo eras and govlab issue 43: a stream of IO-completion wakeups.
#[cfg(test)]
mod era_tests {
    use super::*;
    use crate::cpuidle::testing::*;
    use crate::kernel::Version;

    fn built(version: Version) -> Teo {
        let ctx = BuildCtx::new(crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap(), KernelConfig::of(version));
        Teo::of(TeoForm::of(&ctx.kernel))
    }

    #[test]
    fn form_follows_the_kernel() {
        assert_eq!(built(Version::new(5, 2)).form(), TeoForm::V5_1);
        assert_eq!(built(Version::new(5, 9)).form(), TeoForm::V5_1);
        assert_eq!(built(Version::new(6, 8)).form(), TeoForm::V6_6);
        assert_eq!(built(Version::new(6, 12)).form(), TeoForm::V6_11);
        assert_eq!(built(Version::new(6, 18)).form(), TeoForm::V6_14);
        assert_eq!(built(Version::new(5, 7)).tunables(), vec![("form".to_string(), "v5.1".to_string())]);
    }

    /// The stream: the CPU is woken by an IO completion `IO_NS`
    /// after each entry, the next timer 50 ms away; when the tick is kept,
    /// every TICK_EVERY-th wakeup is the tick instead (a tick wakeup with
    /// the timer beyond it: teo_reflect's safety net). Returns the states
    /// entered.
    const IO_NS: u64 = 100 * US;
    const TICK_EVERY: usize = 40;

    fn io_stream(g: &mut impl CpuidleGovernor, dev: &IdleDevice<'_>, wakeups: usize) -> Vec<usize> {
        let a = SelectArgs { sleep_length_ns: 50 * MS, ..args(50 * MS) };
        let mut picks = Vec::new();
        for k in 0..wakeups {
            let sel = g.select(dev, &a);
            let got_tick = !sel.stop_tick && k % TICK_EVERY == TICK_EVERY - 1;
            let residency_ns = IO_NS + dev.states[sel.state].exit_latency_ns;
            g.reflect(dev, &Reflection { state: sel.state, residency_ns, poll_time_limit: false, got_tick });
            picks.push(sel.state);
        }
        picks
    }

    /// Entries whose target residency exceeds the 100 µs idle period.
    fn too_deep(states: &[crate::platform::IdleState], picks: &[usize]) -> usize {
        picks.iter().filter(|&&s| states[s].target_residency_ns > IO_NS).count()
    }

    /// Issue 43, on every teo form: within the first hundred wakeups fewer
    /// than a quarter of the entries are too deep.
    ///
    /// v6.8's rules by hand (teo_update(), teo_select()): the first select
    /// knows nothing and takes C8 (tick stopped, 50 ms timer); its wakeup
    /// (residency 300 µs, minus half of C8's 200 µs exit latency: 200 µs)
    /// is an intercept in the C6 bin, the sleep length in C8's. The second
    /// select walks down from C8 to C6 (all intercepts there) and keeps the
    /// tick; its wakeup (185 − 42 = 143 µs) is an intercept in the C3 bin
    /// (100–200 µs), and from then on every wakeup is: `2 × intercepts >
    /// total − hits` and `recent > NR_RECENT / 2` hold, the walk stops at
    /// C3, and the utilisation is 0: C3, tick kept (intercepts before the
    /// tick are over 5/8 of the events). Each update decays a count by
    /// 1/8 (x − x >> 3) and adds PULSE = 1024. The tick wakeups at entries
    /// 40 and 80 are tick hits (sleep length and "duration" beyond the
    /// tick) that leave their ring slot stale. After N = 100 wakeups: C3
    /// intercepts 8115, recent 7 (9 slots less the two stale ones, not yet
    /// wrapped); C6 intercepts 7 (the first wakeup's 1024, decayed 99
    /// times); no hits; every other bin 0. One too-deep entry (C8, then C6)
    /// in 100: two.
    #[test]
    fn io_completion_stream_is_learnt_within_a_hundred_wakeups_on_every_form() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        for v in [Version::new(5, 7), Version::new(6, 8), Version::new(6, 12), Version::new(6, 18)] {
            let mut g = built(v);
            g.enable(&dev);
            let picks = io_stream(&mut g, &dev, 100);
            let deep = too_deep(&states, &picks);
            assert!(deep * 4 < picks.len(), "{v}: {deep} of 100 too deep: {picks:?}");
        }
        let mut g = built(Version::new(6, 8));
        g.enable(&dev);
        io_stream(&mut g, &dev, 100);
        let bins: Vec<(u32, u32, u32)> = g.cpu(0).state_bins.iter().map(|b| (b.intercepts, b.hits, b.recent)).collect();
        let mut want = vec![(0, 0, 0); 7];
        want[3] = (8115, 0, 7);
        want[4] = (7, 0, 0);
        assert_eq!(bins, want);
    }

    /// The v6.8 defect behind issue 43 (teo_update(): a tick hit leaves its
    /// ring slot stale; the C3 bin's recent count wraps): after enough tick
    /// wakeups v6.8 teo stays on the deepest states for good. v6.11 removed
    /// the ring (449914398083): the same stream stays on C3. Ignoring the
    /// TeoNoRecent era (running v6.8's form on 6.12) fails the second half.
    #[test]
    fn v6_8_gets_stuck_deep_and_v6_11_does_not() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let mut g = built(Version::new(6, 8));
        g.enable(&dev);
        let picks = io_stream(&mut g, &dev, 2000);
        let recent = g.cpu(0).state_bins[3].recent;
        assert!(recent > u32::MAX / 2, "recent = {recent}");
        assert_eq!(too_deep(&states, &picks[1500..]), 500, "{:?}", &picks[1500..]);

        let mut g = built(Version::new(6, 12));
        g.enable(&dev);
        let picks = io_stream(&mut g, &dev, 2000);
        // The first entry knows nothing (C8), the second has one intercept
        // (C6), then C3 for good.
        assert_eq!(too_deep(&states, &picks[2..]), 0, "{picks:?}");
    }

    /// v6.11 (0a2998fa48f0): util-awareness reverted; a utilized CPU takes
    /// the deepest state as an idle one does. v6.8 steps one shallower.
    #[test]
    fn util_awareness_only_before_v6_11() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let a = SelectArgs { cpu_util: 500, ..args(10 * MS) };
        let pick = |v| {
            let mut g = built(v);
            g.enable(&dev);
            g.select(&dev, &a)
        };
        assert_eq!(pick(Version::new(6, 8)), Selection { state: 5, stop_tick: true });
        assert_eq!(pick(Version::new(6, 12)), Selection { state: 6, stop_tick: true });
    }

    /// teo_select() before v5.14 (the v5.7 code, EraId::TeoBins) against
    /// v6.8's on a 2 ms timer that never fires, the CPU woken after 30 µs
    /// and 1.4 ms in turn. v6.8 starts from C8 each time: after a long
    /// wakeup (a hit in C8's bin) the intercepts do not outweigh the hits
    /// and C8 stays; after a short one they do and the walk stops at C3:
    /// C8, C3, C8, C3 ... v5.7 judges C8 (the state the timer points at) by
    /// its own hits and misses: once the 1.4 ms wakeups' misses in C8
    /// outweigh its hits it takes the state with the most early hits, and
    /// once more than half of the last 8 durations are below the expected
    /// one their average moves it shallower again (teo_find_shallower_state):
    /// from the 7th entry C6 and C1E/C3 alternate, never C8.
    #[test]
    fn before_v5_14_the_original_teo_runs() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let run = |v| {
            let mut g = built(v);
            g.enable(&dev);
            // A 2 ms timer that never fires: wakeups after 30 µs and 1.4 ms
            // in turn.
            (0..20).map(|k| cycle(&mut g, &dev, &args(2 * MS), if k % 2 == 0 { 30 * US } else { 1400 * US }).state).collect::<Vec<_>>()
        };
        let old = run(Version::new(5, 7));
        let new = run(Version::new(6, 8));
        assert_eq!(old, vec![6, 3, 6, 3, 6, 3, 4, 3, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2]);
        assert_eq!(new, [6, 3].repeat(10));
    }

    /// v6.14 (d619b5cc6780): the 5/8 rule reads `tick_intercepts`, which
    /// v6.14 counts for intercepts at or beyond the tick (the reverse of
    /// its comment; v6.19's 50db438231dc turned it round). So a CPU woken
    /// every 150 µs with a 10 ms timer, which v6.11 keeps ticking (its
    /// intercepts, all before the tick, are the vast majority), has the
    /// tick stopped on v6.14.
    #[test]
    fn intercepts_before_the_tick_keep_it_on_v6_11_not_on_v6_14() {
        let states = skylake();
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let a = args(10 * MS);
        for (form, stop_tick) in [(TeoForm::V6_11, false), (TeoForm::V6_14, true)] {
            let mut g = tests::fresh_form(&dev, form);
            for _ in 0..12 {
                cycle(&mut g, &dev, &a, 150 * US);
            }
            assert_eq!(g.select(&dev, &a), Selection { state: 3, stop_tick }, "{form:?}");
        }
        let mut g = tests::fresh_form(&dev, TeoForm::V6_14);
        for _ in 0..12 {
            cycle(&mut g, &dev, &a, 150 * US);
        }
        assert_eq!(g.cpu(0).tick_intercepts, 0);
    }

    /// v6.14 (13ed5c4a6d9c, 16c8d7586c19): with mostly very short idles, or
    /// a latency limit under 7.5 µs, a shallow candidate is taken without
    /// reading the sleep length even where state 0 does not poll (an Arm
    /// WFI); v6.11 reads it there.
    #[test]
    fn short_idles_skip_the_sleep_length_from_v6_14() {
        let mut states = skylake();
        states[0].polling = false;
        let disabled = [false; 7];
        let dev = IdleDevice { cpu: 0, states: &states, disabled: &disabled };
        let a = args(10 * MS);
        for (form, skipped) in [(TeoForm::V6_11, false), (TeoForm::V6_14, true)] {
            let mut g = tests::fresh_form(&dev, form);
            for _ in 0..12 {
                cycle(&mut g, &dev, &a, 5 * US);
            }
            assert_eq!(g.select(&dev, &a), Selection { state: 1, stop_tick: false }, "{form:?}");
            assert_eq!(g.cpu(0).sleep_length_ns == KTIME_MAX, skipped, "{form:?}");
        }
        // Nothing learnt, but a 5 µs latency limit caps at C1 (2 µs): v6.14
        // does not read the timers.
        let tight = SelectArgs { latency_req_ns: 5 * US, ..a };
        let mut g = tests::fresh_form(&dev, TeoForm::V6_14);
        assert_eq!(g.select(&dev, &tight).state, 1);
        assert_eq!(g.cpu(0).sleep_length_ns, KTIME_MAX);
        let mut g = tests::fresh_form(&dev, TeoForm::V6_11);
        assert_eq!(g.select(&dev, &tight).state, 1);
        assert_eq!(g.cpu(0).sleep_length_ns, 10 * MS);
    }
}

//! PELT (per-entity load tracking) and `util_est`: the utilisation signals that
//! schedutil and EAS read, computed in the kernel's own integer arithmetic so
//! that every value govlab reports is, to the unit, the value the kernel holds.
//!
//! **Models: Linux v6.8 mainline, `kernel/sched/pelt.c`, `kernel/sched/pelt.h`,
//! `kernel/sched/sched-pelt.h`, and the PELT and `util_est` parts of
//! `kernel/sched/fair.c`** (`update_cfs_rq_load_avg`, `attach_`/`detach_`/
//! `remove_entity_load_avg`, `util_est_enqueue`/`_dequeue`/`_update`,
//! `cpu_util`). The constants `UTIL_EST_WEIGHT_SHIFT` and `UTIL_AVG_UNCHANGED`
//! live in `include/linux/sched.h` in that release.
//!
//! Task groups' arithmetic is here too (`update_tg_cfs_util`/`_runnable`/
//! `_load`, `calc_group_shares`, the group entity's update with its
//! `se_runnable`); `machine/fair_group.rs` drives it.
//!
//! Left out: CFS bandwidth (the throttled PELT clock),
//! the rt/dl/irq/hw-pressure signals (only their `util_sum` enters, as an
//! input to the lost-idle-time rule), the wakeup-migration lag estimate
//! (`migrate_se_pelt_lag`, `clock_pelt_idle`), the initial utilisation of new
//! tasks (`post_init_entity_util_avg`), 32-bit-only copies of
//! `last_update_time`, and `sched_feat(UTIL_EST)` being switched off (it is on
//! by default). The two-field `util_est` of v4.17–v6.7 is not modelled: v6.8 is
//! the first release with the single-field form. The kernel explains PELT
//! in Documentation/scheduler/schedutil.rst and generates its decay tables
//! with Documentation/scheduler/sched-pelt.c (v6.8).
//!
//! # The idea
//!
//! PELT answers "how busy has this entity been lately?" with one number per
//! signal, where "lately" fades geometrically: the last ~1 ms counts fully,
//! 32 ms ago counts half, 64 ms ago a quarter, and so on. Three signals are
//! kept side by side: *load* (time on the runqueue, later weighted by nice
//! level), *runnable* (time runnable, counting waiting as well as running)
//! and *util* (time actually running). Each signal is a running sum plus an
//! average derived from it.
//!
//! 1. **Time base.** PELT reads nanoseconds from a per-runqueue clock and
//!    works in units of 1024 ns (close to a microsecond, and a shift instead
//!    of a division). 1024 units make one *period* of 1 048 576 ns. Only whole
//!    units are consumed: `last_update_time` advances by whole units and the
//!    sub-unit nanoseconds wait for the next update, so no time is ever lost,
//!    only delayed. `period_contrib` says how far (in units) the current
//!    period has progressed.
//! 2. **Decay.** Each crossed period boundary multiplies the old sums by
//!    y = 2^(−1/32). The kernel computes y^n as "shift right once per 32
//!    periods, then multiply by a 32-bit fixed-point y^(n mod 32) from a
//!    32-entry table, keeping the high 32 bits of the 96-bit product". Past
//!    63·32 periods everything is zero. The table's y^0 entry is 2^32 − 1,
//!    not 2^32, so each decay also loses up to one unit of the value.
//! 3. **New contribution.** The time since the last update falls in three
//!    pieces: the rest of the period that was open at the last update, some
//!    number of whole periods, and the start of the period now open. The
//!    first piece is decayed by the number of boundaries crossed, the whole
//!    periods are added in closed form (their sum is the difference of two
//!    decayed copies of `LOAD_AVG_MAX`), and the last piece is added as is.
//!    Without a crossed boundary the contribution is just the elapsed units.
//! 4. **Weighting.** The contribution is added to `load_sum` times the load
//!    flag/weight, to `runnable_sum` times the runnable count times 1024, and
//!    to `util_sum` times 1024 if running. If the entity is not on a runqueue
//!    (load 0), runnable and running are forced to 0.
//! 5. **Averages, only at boundaries.** When (and only when) a boundary was
//!    crossed, each average is its sum divided by the largest sum reachable at
//!    the current position inside the period, `LOAD_AVG_MAX − 1024 +
//!    period_contrib`. Dividing by a position-dependent maximum keeps an
//!    always-running entity steady near 1024 instead of sagging and
//!    recovering inside each period. The caller is told "decayed"; CFS uses
//!    that to call the cpufreq hook (about once per period per busy CPU).
//! 6. **Runqueues.** A cfs runqueue runs the same update with its total
//!    weight, its number of runnable tasks and "something is current". Its
//!    averages also move when tasks come and go: *attach* aligns the task's
//!    period position with the runqueue's, rebuilds the task's sums from its
//!    averages and adds both; *detach* subtracts them (never below zero);
//!    a task leaving from another CPU's context is *removed*: its averages are
//!    parked in `removed_*` and subtracted at the runqueue's next update.
//!    After every subtraction each sum is raised, if needed, to at least
//!    average × `PELT_MIN_DIVIDER`, so rounding can never leave a zero sum
//!    under a non-zero average.
//! 7. **Invariance through the clock.** PELT does not scale contributions.
//!    Instead each runqueue has a PELT clock, `clock_pelt`, which while the
//!    CPU works advances by the elapsed task time scaled by CPU capacity and
//!    by current frequency (each `× s / 1024`, truncating). Running 4 ms at
//!    half speed therefore counts as 2 ms of running. When the CPU goes idle
//!    `clock_pelt` jumps forward to the task clock, so the time "saved" by
//!    scaling shows up as idle time. Exception: if the runqueue's util sums
//!    were already saturated when it went idle, there was no idle time to
//!    give back; that gap is booked as `lost_idle_time` and subtracted from
//!    the clock PELT reads, so an always-busy slow CPU still reaches ~1024.
//! 8. **`util_est`.** A task's `util_avg` decays while it sleeps, so a periodic
//!    task would wake each time looking smaller than it is. `util_est` keeps,
//!    per task, an estimate refreshed only when the task goes to sleep: jump
//!    straight up to the current `util_avg` if that is higher; otherwise move
//!    a quarter of the way down, unless the gap is under 1 % of capacity, the
//!    task looked bigger than the CPU, or the task spent noticeably longer
//!    runnable than running (it was starved, so its util understates it). The
//!    most significant bit of the field, `UTIL_AVG_UNCHANGED`, is set when the
//!    estimate is written and cleared by the next PELT update of the task that
//!    crosses a boundary, so a sleep with no fresh `util_avg` learns nothing.
//!    The runqueue's estimate is the sum over its enqueued tasks, and the CPU
//!    utilisation handed to governors is `min(capacity, max(util_avg,
//!    util_est))`.
//!
//! # How the scheduler drives these functions (v6.8 CFS, one level)
//!
//! Time `now` is always [`RqClockPelt::now`] after [`RqClockPelt::update`].
//! * Wakeup: [`util_est_enqueue`]; then [`update_entity`] with
//!   `on_rq = false` (the task is not yet on the runqueue) unless the task is
//!   new or migrated (`last_update_time == 0`); [`update_cfs_rq`]; for a
//!   new/migrated task [`attach_entity`]. Then the runqueue weight and
//!   `h_nr_running` grow.
//! * Tick, and any update of the running task: [`update_entity`] with
//!   `on_rq = true, running = true`, then [`update_cfs_rq`].
//! * Sleep: [`util_est_dequeue`]; [`update_entity`] (still current, so
//!   running); [`update_cfs_rq`]; weight and `h_nr_running` shrink;
//!   [`util_est_update`] with `task_sleep = true`. If nothing else is
//!   runnable, [`RqClockPelt::update_idle`] before the idle task runs.
//! * Migration away: [`sync_entity`] then [`remove_entity`] (wakeup
//!   migration; from v6.0, from an idle CPU, [`migrate_se_pelt_lag`]), or
//!   [`detach_entity`] under the runqueue lock.

// The kernel narrows and reinterprets integers (u64 to u32, u64 to s64) on
// purpose; those C conversions are the semantics modelled here, so the casts
// below are deliberate. (The workspace allows these lints crate-wide too.)
#![allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]

/// Periods over which y decays to one half (y^32 = 1/2). `sched-pelt.h`.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// Integer limit of 1024·Σ y^n as the kernel's fixed-point recurrence
/// accumulates it (generator in `Documentation/scheduler/sched-pelt.c`).
/// `sched-pelt.h`.
pub const LOAD_AVG_MAX: u64 = 47742;
/// Smallest sum-to-average divider: `LOAD_AVG_MAX` × y, which the kernel's
/// arithmetic makes exactly `LOAD_AVG_MAX − 1024`. `pelt.h`.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// Fixed-point shift of capacities and utilisations. `include/linux/sched.h`.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// Capacity of the biggest CPU at its highest frequency.
/// `include/linux/sched.h`.
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;
/// Weight of a nice-0 task after `scale_load_down` (what PELT multiplies by;
/// on 64-bit kernels `NICE_0_LOAD` itself carries 10 extra fixed-point bits).
/// `kernel/sched/sched.h`, `sched_prio_to_weight[20]` in `core.c`.
pub const NICE_0_LOAD: u64 = 1024;

/// y^k for k = 0..31 as fractions of 2^32, truncated, with y^0 = 2^32 − 1.
/// `runnable_avg_yN_inv[]`, `sched-pelt.h` (generated by
/// `Documentation/scheduler/sched-pelt.c`).
#[rustfmt::skip]
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffff_ffff, 0xfa83_b2da, 0xf525_7d14, 0xefe4_b99a, 0xeac0_c6e6, 0xe5b9_06e6, 0xe0cc_deeb,
    0xdbfb_b796, 0xd744_fcc9, 0xd2a8_1d91, 0xce24_8c14, 0xc9b9_bd85, 0xc567_2a10, 0xc12c_4cc9,
    0xbd08_a39e, 0xb8fb_af46, 0xb504_f333, 0xb123_f581, 0xad58_3ee9, 0xa9a1_5ab4, 0xa5fe_d6a9,
    0xa270_4302, 0x9ef5_325f, 0x9b8d_39b9, 0x9837_f050, 0x94f4_efa8, 0x91c3_d373, 0x8ea4_398a,
    0x8b95_c1e3, 0x8898_0e80, 0x85aa_c367, 0x82cd_8698,
];

/// Nanoseconds in one PELT time unit (`delta >>= 10` in `___update_load_sum`).
/// Ours, for callers and tests.
pub const PELT_UNIT_NS: u64 = 1024;
/// Nanoseconds in one PELT period (1024 units). Ours, for callers and tests.
pub const PELT_PERIOD_NS: u64 = 1024 * PELT_UNIT_NS;

/// `util_est` moves 1/2^2 of the way down per sleep. `include/linux/sched.h`
/// (v6.8 moved it there from `struct util_est`).
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// Flag in the most significant bit of a task's `util_est`: set when the
/// estimate is written, cleared when the task's `util_avg` is next refreshed.
/// `include/linux/sched.h` (`0x80000000` in v6.8).
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// Gaps below ~1 % of capacity do not move `util_est`. `UTIL_EST_MARGIN`,
/// `fair.c` (`SCHED_CAPACITY_SCALE / 100` = 10).
pub const UTIL_EST_MARGIN: u32 = (SCHED_CAPACITY_SCALE / 100) as u32;
/// A runqueue whose cfs+rt+dl `util_sum` reaches this when it goes idle is
/// treated as saturated (no idle time to give back). The local `divider` of
/// `update_idle_rq_clock_pelt`, `pelt.h`: `(46718 << 10) − 47742` = 47 791 490.
pub const UTIL_SUM_SATURATED: u32 =
    (((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX) as u32;

/// `struct sched_avg`: the PELT state of one entity or runqueue.
///
/// Field names and integer widths are the kernel's (64-bit build); units are
/// given in each doc line.
#[derive(Debug, Clone, Default)]
pub struct SchedAvg {
    /// PELT-clock time of the last accounted unit, in ns. Always advanced by
    /// whole 1024-ns units; 0 means "not attached yet" (new or migrated task).
    pub last_update_time: u64,
    /// Decayed sum of on-runqueue time in units; for a runqueue, of
    /// weight × time.
    pub load_sum: u64,
    /// Decayed sum of runnable-count × time × 1024, in units × 1024.
    pub runnable_sum: u64,
    /// Decayed sum of running time × 1024, in units × 1024 (u32 in the kernel).
    pub util_sum: u32,
    /// Units already elapsed in the current, still open period (0..1024).
    pub period_contrib: u32,
    /// Weight × `load_sum` / divider (weight as given to `update_load_avg`).
    pub load_avg: u64,
    /// `runnable_sum` / divider, capacity units (0..=1024 per runnable task).
    pub runnable_avg: u64,
    /// `util_sum` / divider, capacity units (0..=1024 for a task).
    pub util_avg: u64,
    /// Task: estimated utilisation in capacity units, with the
    /// `UTIL_AVG_UNCHANGED` flag in bit 31. Unused in a runqueue's `SchedAvg`
    /// here (the runqueue sum lives in [`CfsRqAvg::util_est`]).
    pub util_est: u32,
    /// Task: `util_est.enqueued` of the kernels before v6.8 (the last
    /// activation's `util_avg`; sched/util_est.rs), unused from v6.8.
    pub util_est_enqueued: u32,
}

/// The PELT side of a cfs runqueue: `cfs_rq->avg`, `cfs_rq->removed` and
/// `cfs_rq->avg.util_est`.
#[derive(Debug, Clone, Default)]
pub struct CfsRqAvg {
    /// `cfs_rq->avg`.
    pub avg: SchedAvg,
    /// `removed.util_avg`: utilisation of tasks removed since the last
    /// update, to subtract at the next one (capacity units).
    pub removed_util: u64,
    /// `removed.load_avg`: their weighted load.
    pub removed_load: u64,
    /// `removed.runnable_avg`: their runnable average (capacity units).
    pub removed_runnable: u64,
    /// `removed.nr`: how many tasks were removed.
    pub removed_nr: u32,
    /// Σ `util_est` of enqueued tasks (`cfs_rq->avg.util_est`), capacity units,
    /// no flag bit.
    pub util_est: u32,
}

/// Per-runqueue PELT clock (`rq->clock_task`, `rq->clock_pelt`,
/// `rq->lost_idle_time`), all in ns.
#[derive(Debug, Clone, Default)]
pub struct RqClockPelt {
    /// Task clock the PELT clock was last advanced to (`rq->clock_task`), ns.
    pub clock_task: u64,
    /// Capacity- and frequency-scaled clock (`rq->clock_pelt`), ns.
    pub clock_pelt: u64,
    /// Idle time that could not be given back because the runqueue was
    /// saturated (`rq->lost_idle_time`), ns.
    pub lost_idle_time: u64,
    /// The task clock and [`Self::now`] when the PELT clock was last synced
    /// on an idle CPU (`rq->clock_idle`, `rq->clock_pelt_idle`, v6.0), read
    /// by [`migrate_se_pelt_lag`]. Recorded on every version.
    pub clock_idle: u64,
    pub clock_pelt_idle: u64,
}

// ---------------------------------------------------------------------------
// Arithmetic helpers
// ---------------------------------------------------------------------------

/// `mul_u64_u32_shr`: (a × mul) >> shift with a 96-bit intermediate.
#[inline]
fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    ((u128::from(a) * u128::from(mul)) >> shift) as u64
}

/// `cap_scale`: v × s / 1024, truncating (64-bit wrapping as in C).
#[inline]
fn cap_scale(v: u64, s: u64) -> u64 {
    v.wrapping_mul(s) >> SCHED_CAPACITY_SHIFT
}

/// `sub_positive` on a u64 field: subtract, clamping at 0.
#[inline]
fn sub_positive(var: &mut u64, val: u64) {
    *var = var.saturating_sub(val);
}

/// `sub_positive` on a u32 field: the subtrahend is first converted to the
/// field's type (truncated), as the kernel macro does.
#[inline]
fn sub_positive_u32(var: &mut u32, val: u64) {
    *var = var.saturating_sub(val as u32);
}

/// `max_t(u32, a, b)`: both operands truncated to 32 bits before comparing.
#[inline]
fn max_u32(a: u64, b: u64) -> u32 {
    (a as u32).max(b as u32)
}

// ---------------------------------------------------------------------------
// pelt.c / pelt.h
// ---------------------------------------------------------------------------

/// `decay_load`: `val` × y^n in the kernel's fixed point. Zero beyond 63·32
/// periods. Note the truncation: `decay_load(1024, 32)` is 511 and
/// `decay_load(x, 0)` is x − 1 for 0 < x < 2^32 (the kernel never asks for
/// n = 0).
#[inline]
#[must_use]
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut val = val;
    // After the bound check the count fits in 32 bits, as in the kernel.
    let mut local_n = n as u32;
    if local_n >= LOAD_AVG_PERIOD as u32 {
        val >>= local_n / LOAD_AVG_PERIOD as u32;
        local_n %= LOAD_AVG_PERIOD as u32;
    }
    mul_u64_u32_shr(val, RUNNABLE_AVG_YN_INV[local_n as usize], 32)
}

/// `__accumulate_pelt_segments`: contribution of `d1` units at the end of the
/// old period (decayed `periods` times), of `periods − 1` full periods, and of
/// `d3` units in the new period. u32 arithmetic as in the kernel.
#[inline]
#[must_use]
pub fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    let c1 = decay_load(u64::from(d1), periods) as u32;
    let c2 = (LOAD_AVG_MAX as u32)
        .wrapping_sub(decay_load(LOAD_AVG_MAX, periods) as u32)
        .wrapping_sub(1024);
    c1.wrapping_add(c2).wrapping_add(d3)
}

/// `accumulate_sum`: decay the sums over the crossed boundaries and add the
/// new contribution. `delta` is in 1024-ns units. Returns the number of
/// period boundaries crossed.
#[inline]
fn accumulate_sum(delta: u64, sa: &mut SchedAvg, load: u64, runnable: u64, running: bool) -> u64 {
    // Without a crossed boundary the whole delta (< 1024) is the contribution.
    let mut contrib = delta as u32;
    let delta = delta + u64::from(sa.period_contrib);
    let periods = delta / 1024;
    let mut rest = delta;

    if periods != 0 {
        // Step 1: age what was there.
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        sa.util_sum = decay_load(u64::from(sa.util_sum), periods) as u32;

        // Step 2: the three-piece contribution; only needed when load != 0,
        // because load == 0 forces runnable and running to 0 too.
        rest = delta % 1024;
        if load != 0 {
            contrib = accumulate_pelt_segments(periods, 1024 - sa.period_contrib, rest as u32);
        }
    }
    sa.period_contrib = rest as u32;

    if load != 0 {
        sa.load_sum = sa
            .load_sum
            .wrapping_add(load.wrapping_mul(u64::from(contrib)));
    }
    if runnable != 0 {
        sa.runnable_sum = sa
            .runnable_sum
            .wrapping_add(runnable.wrapping_mul(u64::from(contrib)) << SCHED_CAPACITY_SHIFT);
    }
    if running {
        sa.util_sum = sa.util_sum.wrapping_add(contrib << SCHED_CAPACITY_SHIFT);
    }
    periods
}

/// `___update_load_sum`: account the time from `last_update_time` to `now`
/// (PELT-clock ns) with the given load, runnable count and running flag.
/// Returns true ("decayed") when at least one period boundary was crossed,
/// i.e. when the averages must be recomputed.
///
/// Time going backwards resets `last_update_time` to `now` and accounts
/// nothing, as the kernel does.
#[inline]
pub fn update_load_sum(
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
) -> bool {
    let Some(delta) = take_units(now, sa) else { return false };
    // Off the runqueue nothing can be runnable or running.
    let (runnable, running) = if load == 0 {
        (0, false)
    } else {
        (runnable, running)
    };

    accumulate_sum(delta, sa, load, runnable, running) != 0
}

/// The head of `___update_load_sum`: the whole 1024-ns units from
/// `last_update_time` to `now`, which now count as accounted (the remainder
/// stays for the next update); None when there is none, or when time went
/// backwards (then `last_update_time` is reset to `now`).
#[inline]
fn take_units(now: u64, sa: &mut SchedAvg) -> Option<u64> {
    let delta = now.wrapping_sub(sa.last_update_time);
    if (delta as i64) < 0 {
        sa.last_update_time = now;
        return None;
    }
    let delta = delta >> 10;
    if delta == 0 {
        return None;
    }
    sa.last_update_time += delta << 10;
    Some(delta)
}

/// `get_pelt_divider`: the largest sum reachable at the current position in
/// the period, `LOAD_AVG_MAX − 1024 + period_contrib`.
#[inline]
#[must_use]
pub fn get_pelt_divider(sa: &SchedAvg) -> u64 {
    PELT_MIN_DIVIDER + u64::from(sa.period_contrib)
}

/// `___update_load_avg`: recompute the three averages from the sums;
/// `load_avg` is additionally multiplied by `load` (the entity's weight, or 1
/// for a runqueue whose `load_sum` is already weighted).
#[inline]
pub fn update_load_avg(sa: &mut SchedAvg, load: u64) {
    let divider = get_pelt_divider(sa);
    sa.load_avg = load.wrapping_mul(sa.load_sum) / divider;
    sa.runnable_avg = sa.runnable_sum / divider;
    sa.util_avg = u64::from(sa.util_sum / divider as u32);
}

/// `cfs_se_util_change`: the task's `util_avg` was just refreshed, so clear
/// `UTIL_AVG_UNCHANGED` and let the next sleep update `util_est`.
#[inline]
pub fn cfs_se_util_change(sa: &mut SchedAvg) {
    if sa.util_est & UTIL_AVG_UNCHANGED != 0 {
        sa.util_est &= !UTIL_AVG_UNCHANGED;
    }
}

/// `__update_load_avg_se` for a task: load and runnable are `on_rq`, running
/// is "this task is `cfs_rq->curr`", `weight` is `scale_load_down`'d
/// (1024 for nice 0). Returns decayed.
#[inline]
pub fn update_entity(now: u64, se: &mut SchedAvg, on_rq: bool, running: bool, weight: u64) -> bool {
    if update_load_sum(now, se, u64::from(on_rq), u64::from(on_rq), running) {
        update_load_avg(se, weight);
        cfs_se_util_change(se);
        return true;
    }
    false
}

/// `__update_load_avg_blocked_se`: age a task that is not on any runqueue.
/// Unlike [`update_entity`] it leaves the `UTIL_AVG_UNCHANGED` flag alone.
#[inline]
pub fn update_blocked_entity(now: u64, se: &mut SchedAvg, weight: u64) -> bool {
    if update_load_sum(now, se, 0, 0, false) {
        update_load_avg(se, weight);
        return true;
    }
    false
}

// ---------------------------------------------------------------------------
// fair.c: runqueue aggregation
// ---------------------------------------------------------------------------

/// `update_cfs_rq_load_avg`: first subtract what remote removals parked in
/// `removed_*` (each sum kept at or above average × `PELT_MIN_DIVIDER`), then
/// run the runqueue's PELT update. Returns true if removals were applied or a
/// period boundary was crossed.
#[inline]
pub fn update_cfs_rq(
    now: u64,
    cfs: &mut CfsRqAvg,
    load_weight: u64,
    h_nr_running: u64,
    curr_running: bool,
) -> bool {
    let rq = RqLoad { weight: load_weight, h_nr_running, curr_running };
    update_cfs_rq_era(PeltRules::default(), now, cfs, rq, Scales::NONE)
}

/// What a cfs runqueue's own PELT update reads of it:
/// `scale_load_down(cfs_rq->load.weight)`, `h_nr_running` and
/// `cfs_rq->curr != NULL`.
#[derive(Debug, Clone, Copy)]
pub struct RqLoad {
    pub weight: u64,
    pub h_nr_running: u64,
    pub curr_running: bool,
}

/// [`update_cfs_rq`] under `rules`: `now` is the task clock for
/// [`PeltEra::ScaledContributions`] (contributions scaled by `scales`), the
/// PELT clock for [`PeltEra::ScaledClock`]. The removal floors
/// (`PELT_MIN_DIVIDER`) are v6.8's in every era.
// Always inlined: with the group runqueues' caller it was no longer inlined
// in the engine's root update (1 % more instructions, callgrind on
// `bench_mix 1`).
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn update_cfs_rq_era(rules: PeltRules, now: u64, cfs: &mut CfsRqAvg, rq: RqLoad, scales: Scales) -> bool {
    let mut decayed = false;

    if cfs.removed_nr != 0 {
        let divider = rules.divider.of(&cfs.avg);
        let removed_load = core::mem::take(&mut cfs.removed_load);
        let removed_util = core::mem::take(&mut cfs.removed_util);
        let removed_runnable = core::mem::take(&mut cfs.removed_runnable);
        cfs.removed_nr = 0;

        let sa = &mut cfs.avg;
        sub_positive(&mut sa.load_avg, removed_load);
        sub_positive(&mut sa.load_sum, removed_load.wrapping_mul(divider));
        sa.load_sum = u64::from(max_u32(
            sa.load_sum,
            sa.load_avg.wrapping_mul(PELT_MIN_DIVIDER),
        ));

        sub_positive(&mut sa.util_avg, removed_util);
        sub_positive_u32(&mut sa.util_sum, removed_util.wrapping_mul(divider));
        sa.util_sum = max_u32(
            u64::from(sa.util_sum),
            sa.util_avg.wrapping_mul(PELT_MIN_DIVIDER),
        );

        sub_positive(&mut sa.runnable_avg, removed_runnable);
        sub_positive(&mut sa.runnable_sum, removed_runnable.wrapping_mul(divider));
        sa.runnable_sum = u64::from(max_u32(
            sa.runnable_sum,
            sa.runnable_avg.wrapping_mul(PELT_MIN_DIVIDER),
        ));

        decayed = true;
    }

    // __update_load_avg_cfs_rq
    if update_load_sum_era(
        rules.era,
        now,
        &mut cfs.avg,
        rq.weight,
        rq.h_nr_running,
        rq.curr_running,
        scales.freq,
        scales.cpu,
    ) {
        update_load_avg_div(&mut cfs.avg, 1, rules.divider);
        decayed = true;
    }
    decayed
}

/// `enqueue_load_avg`: add an entity's load to the runqueue's.
#[inline]
fn enqueue_load_avg(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) {
    cfs.avg.load_avg = cfs.avg.load_avg.wrapping_add(se.load_avg);
    cfs.avg.load_sum = cfs
        .avg
        .load_sum
        .wrapping_add(weight.wrapping_mul(se.load_sum));
}

/// `dequeue_load_avg`: subtract an entity's load from the runqueue's, with
/// the `PELT_MIN_DIVIDER` floor on the sum.
#[inline]
fn dequeue_load_avg(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) {
    sub_positive(&mut cfs.avg.load_avg, se.load_avg);
    sub_positive(&mut cfs.avg.load_sum, weight.wrapping_mul(se.load_sum));
    cfs.avg.load_sum = u64::from(max_u32(
        cfs.avg.load_sum,
        cfs.avg.load_avg.wrapping_mul(PELT_MIN_DIVIDER),
    ));
}

/// `attach_entity_load_avg`: put a task's signals into a runqueue. The task
/// takes the runqueue's `last_update_time` and `period_contrib`, its sums are
/// rebuilt from its averages with the runqueue's divider (the load sum
/// unweighted, and at least 1), and both averages and sums are added.
/// Call [`update_cfs_rq`] first so the runqueue is current.
pub fn attach_entity(cfs: &mut CfsRqAvg, se: &mut SchedAvg, weight: u64) {
    attach_entity_div(cfs, se, weight, PeltDivider::PeriodContrib);
}

/// [`attach_entity`] with the divider of an era.
pub fn attach_entity_div(cfs: &mut CfsRqAvg, se: &mut SchedAvg, weight: u64, divider: PeltDivider) {
    let divider = divider.of(&cfs.avg);

    se.last_update_time = cfs.avg.last_update_time;
    se.period_contrib = cfs.avg.period_contrib;

    se.util_sum = se.util_avg.wrapping_mul(divider) as u32;
    se.runnable_sum = se.runnable_avg.wrapping_mul(divider);
    se.load_sum = se.load_avg.wrapping_mul(divider);
    se.load_sum = if weight < se.load_sum {
        se.load_sum / weight
    } else {
        1
    };

    enqueue_load_avg(cfs, se, weight);
    cfs.avg.util_avg = cfs.avg.util_avg.wrapping_add(se.util_avg);
    cfs.avg.util_sum = cfs.avg.util_sum.wrapping_add(se.util_sum);
    cfs.avg.runnable_avg = cfs.avg.runnable_avg.wrapping_add(se.runnable_avg);
    cfs.avg.runnable_sum = cfs.avg.runnable_sum.wrapping_add(se.runnable_sum);
}

/// `detach_entity_load_avg`: take a task's signals out of a runqueue (never
/// below zero; each sum floored at average × `PELT_MIN_DIVIDER`). `weight` is
/// the task's `scale_load_down`'d weight, needed for the weighted load sum.
/// Call [`update_cfs_rq`] (and [`update_entity`]) first.
pub fn detach_entity(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) {
    dequeue_load_avg(cfs, se, weight);

    let sa = &mut cfs.avg;
    sub_positive(&mut sa.util_avg, se.util_avg);
    sub_positive_u32(&mut sa.util_sum, u64::from(se.util_sum));
    sa.util_sum = max_u32(
        u64::from(sa.util_sum),
        sa.util_avg.wrapping_mul(PELT_MIN_DIVIDER),
    );

    sub_positive(&mut sa.runnable_avg, se.runnable_avg);
    sub_positive(&mut sa.runnable_sum, se.runnable_sum);
    sa.runnable_sum = u64::from(max_u32(
        sa.runnable_sum,
        sa.runnable_avg.wrapping_mul(PELT_MIN_DIVIDER),
    ));
}

/// `sync_entity_load_avg`: age a blocked task up to its runqueue's
/// `last_update_time`, as the kernel does before [`remove_entity`].
pub fn sync_entity(cfs: &CfsRqAvg, se: &mut SchedAvg, weight: u64) {
    update_blocked_entity(cfs.avg.last_update_time, se, weight);
}

/// [`sync_entity`] with the divider of an era (a blocked task contributes
/// nothing, so no scaling applies).
pub fn sync_entity_div(cfs: &CfsRqAvg, se: &mut SchedAvg, weight: u64, divider: PeltDivider) {
    if update_load_sum(cfs.avg.last_update_time, se, 0, 0, false) {
        update_load_avg_div(se, weight, divider);
    }
}

/// `migrate_se_pelt_lag` (kernel/sched/fair.c, v6.0, e2f3e35f1f5a "sched/
/// fair: Decay task PELT values during wakeup migration"): a task woken onto
/// another CPU has just been synced to its old runqueue's last update, which
/// on an idle CPU may be long past (nothing updates a runqueue while it
/// sleeps but the NOHZ stats pass), so it would arrive undecayed by the rest
/// of its sleep. When the old CPU is idle (the caller checks), decay it
/// further to an estimate of now: the PELT clock when the CPU was last seen
/// idle plus the time since (`clock_pelt_idle + now_ns − clock_idle`), or
/// the runqueue's own last update if that is later. Call after
/// [`sync_entity_div`] and [`remove_entity`], which take out what the
/// runqueue still holds of the task. A fully decayed task is left alone.
pub fn migrate_se_pelt_lag(
    cfs: &CfsRqAvg,
    clock: &RqClockPelt,
    now_ns: u64,
    se: &mut SchedAvg,
    weight: u64,
    divider: PeltDivider,
) {
    if se.load_sum == 0 && se.util_sum == 0 && se.runnable_sum == 0 {
        return;
    }
    let lut = cfs.avg.last_update_time;
    let now = if clock.clock_pelt_idle < lut {
        lut
    } else {
        clock.clock_pelt_idle + now_ns.saturating_sub(clock.clock_idle)
    };
    if update_load_sum(now, se, 0, 0, false) {
        update_load_avg_div(se, weight, divider);
    }
}

/// `remove_entity_load_avg` without its leading sync (call [`sync_entity`]
/// first): park the task's averages in `removed_*`; the next
/// [`update_cfs_rq`] subtracts them.
pub fn remove_entity(cfs: &mut CfsRqAvg, se: &SchedAvg) {
    cfs.removed_nr += 1;
    cfs.removed_util = cfs.removed_util.wrapping_add(se.util_avg);
    cfs.removed_load = cfs.removed_load.wrapping_add(se.load_avg);
    cfs.removed_runnable = cfs.removed_runnable.wrapping_add(se.runnable_avg);
}

// ---------------------------------------------------------------------------
// pelt.h: the PELT clock
// ---------------------------------------------------------------------------

impl RqClockPelt {
    /// `update_rq_clock_task` → `update_rq_clock_pelt`: advance the task clock
    /// to `now_ns`. While the idle task is current (`idle`) the PELT clock is
    /// simply synced to the task clock (`_update_idle_rq_clock_pelt`);
    /// otherwise it advances by the elapsed time scaled first by
    /// `cpu_capacity`, then by `freq_scale` (both 0..=1024, each step
    /// truncating). A `now_ns` before the current task clock is ignored, as
    /// `update_rq_clock` ignores a negative delta.
    #[inline]
    pub fn update(&mut self, now_ns: u64, idle: bool, cpu_capacity: u64, freq_scale: u64) {
        debug_assert!(cpu_capacity <= SCHED_CAPACITY_SCALE && freq_scale <= SCHED_CAPACITY_SCALE);
        if now_ns < self.clock_task {
            return;
        }
        let delta = now_ns - self.clock_task;
        self.clock_task = now_ns;

        if idle {
            self.sync_idle();
            return;
        }
        let delta = cap_scale(delta, cpu_capacity);
        let delta = cap_scale(delta, freq_scale);
        self.clock_pelt = self.clock_pelt.wrapping_add(delta);
    }

    /// True when [`Self::update`] at `now_ns` would change nothing: the task
    /// clock is already there and, on an idle CPU, the PELT clock synced.
    #[inline]
    pub fn is_current(&self, now_ns: u64, idle: bool) -> bool {
        now_ns == self.clock_task && (!idle || self.clock_pelt == self.clock_task)
    }

    /// `update_idle_rq_clock_pelt`, called when CFS finds nothing to run and
    /// the CPU is about to idle: if the runqueue was saturated, book the gap
    /// between task clock and PELT clock as lost idle time; then sync the PELT
    /// clock to the task clock. Only the cfs `util_sum` is modelled (rt and dl
    /// taken as 0); see [`Self::update_idle_classes`].
    #[inline]
    pub fn update_idle(&mut self, cfs_util_sum: u32) {
        self.update_idle_classes(cfs_util_sum, 0, 0);
    }

    /// [`Self::update_idle`] with the rt and dl `util_sum`s too; the three
    /// are added in u32 as in the kernel.
    #[inline]
    pub fn update_idle_classes(&mut self, cfs_util_sum: u32, rt_util_sum: u32, dl_util_sum: u32) {
        let util_sum = cfs_util_sum
            .wrapping_add(rt_util_sum)
            .wrapping_add(dl_util_sum);
        if util_sum >= UTIL_SUM_SATURATED {
            self.lost_idle_time = self
                .lost_idle_time
                .wrapping_add(self.clock_task.wrapping_sub(self.clock_pelt));
        }
        self.sync_idle();
    }

    /// `_update_idle_rq_clock_pelt`: the runqueue is idle, so the PELT
    /// clock catches up with the task clock; v6.0 (e2f3e35f1f5a) also
    /// notes both clocks for [`migrate_se_pelt_lag`].
    #[inline]
    fn sync_idle(&mut self) {
        self.clock_pelt = self.clock_task;
        self.clock_idle = self.clock_task;
        self.clock_pelt_idle = self.now();
    }

    /// `rq_clock_pelt`: the time PELT reads, `clock_pelt − lost_idle_time`.
    #[inline]
    #[must_use]
    pub fn now(&self) -> u64 {
        self.clock_pelt.wrapping_sub(self.lost_idle_time)
    }
}

// ---------------------------------------------------------------------------
// fair.c: util_est and CPU utilisation
// ---------------------------------------------------------------------------

/// `_task_util_est`: the task's estimate without the flag bit.
#[inline]
#[must_use]
pub fn task_util_est_raw(task: &SchedAvg) -> u32 {
    task.util_est & !UTIL_AVG_UNCHANGED
}

/// `task_util_est`: max of the task's `util_avg` and its estimate.
#[inline]
#[must_use]
pub fn task_util_est(task: &SchedAvg) -> u64 {
    task.util_avg.max(u64::from(task_util_est_raw(task)))
}

/// `util_est_enqueue`: add the task's estimate to the runqueue's sum
/// (before the enqueue's PELT updates, so schedutil sees it at once).
#[inline]
pub fn util_est_enqueue(cfs: &mut CfsRqAvg, task: &SchedAvg) {
    cfs.util_est = cfs.util_est.wrapping_add(task_util_est_raw(task));
}

/// `util_est_dequeue`: subtract the task's estimate from the runqueue's sum,
/// clamping at 0.
#[inline]
pub fn util_est_dequeue(cfs: &mut CfsRqAvg, task: &SchedAvg) {
    let est = task_util_est_raw(task);
    cfs.util_est -= cfs.util_est.min(est);
}

/// `util_est_update` (v6.8 single-field form), run at the end of a dequeue.
/// Only a dequeue for sleep, after a refresh of `util_avg`, teaches
/// anything. `cpu_capacity` is `arch_scale_cpu_capacity` of the CPU.
///
/// 1. Not a sleep, or `UTIL_AVG_UNCHANGED` still set: leave everything.
/// 2. `util_avg` ≥ estimate: the estimate jumps up to it.
/// 3. Gap below `UTIL_EST_MARGIN`: estimate kept.
/// 4. `util_avg` above the CPU's capacity: leave everything (flag not set).
/// 5. `util_avg` + margin below `runnable_avg` (the task waited): kept.
/// 6. Otherwise `(4·ewma − gap) >> 2`, i.e. ewma − ⌈gap/4⌉.
///
/// Steps 2, 3, 5 and 6 store the result with `UTIL_AVG_UNCHANGED` set.
#[inline]
pub fn util_est_update(task: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64) {
    if !task_sleep {
        return;
    }
    let mut ewma = task.util_est;
    if ewma & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    // util_avg of a task never exceeds 1024; the kernel keeps it in 32 bits.
    let dequeued = task.util_avg as u32;

    if ewma <= dequeued {
        ewma = dequeued;
    } else {
        let last_ewma_diff = ewma - dequeued;
        if last_ewma_diff >= UTIL_EST_MARGIN {
            if u64::from(dequeued) > cpu_capacity {
                return;
            }
            if u64::from(dequeued.wrapping_add(UTIL_EST_MARGIN)) >= task.runnable_avg {
                // Unsigned 32-bit steps, as in the kernel.
                ewma <<= UTIL_EST_WEIGHT_SHIFT;
                ewma = ewma.wrapping_sub(last_ewma_diff);
                ewma >>= UTIL_EST_WEIGHT_SHIFT;
            }
        }
    }
    task.util_est = ewma | UTIL_AVG_UNCHANGED;
}

/// `cpu_util_cfs`: `min(capacity, max(cfs util_avg, cfs util_est))`.
#[inline]
#[must_use]
pub fn cpu_util(cfs: &CfsRqAvg, cpu_capacity: u64) -> u64 {
    cfs.avg
        .util_avg
        .max(u64::from(cfs.util_est))
        .min(cpu_capacity)
}

/// `cpu_util_cfs_boost` (runnable boosting, v6.5+): like [`cpu_util`] but
/// `runnable_avg` also raises the base, so contention asks for more.
#[inline]
#[must_use]
pub fn cpu_util_boost(cfs: &CfsRqAvg, cpu_capacity: u64) -> u64 {
    cfs.avg
        .util_avg
        .max(cfs.avg.runnable_avg)
        .max(u64::from(cfs.util_est))
        .min(cpu_capacity)
}

// ---------------------------------------------------------------------------
// Eras: PELT before the PELT clock (v4.13 … v5.0)
// ---------------------------------------------------------------------------

/// Where PELT applies frequency and CPU invariance.
///
/// * [`PeltEra::ScaledContributions`]: before 23127296889f ("sched/fair:
///   Update scale invariance of PELT", v5.1 or v5.2 — the tag is not
///   confirmed; see docs/research/kernel-eras.md §1). `accumulate_sum`
///   (`kernel/sched/fair.c` until v4.18, `kernel/sched/pelt.c` in v4.19/v5.0)
///   reads `scale_freq = arch_scale_freq_capacity(cpu)` and
///   `scale_cpu = arch_scale_cpu_capacity(cpu)`, scales each contribution
///   by `scale_freq` (`cap_scale`) and adds it to `load_sum` (and
///   `runnable_load_sum`) as is and to `util_sum` times `scale_cpu`. The
///   time PELT reads is the plain `rq_clock_task`.
/// * [`PeltEra::ScaledClock`]: from 23127296889f (and v6.8, the rest of this
///   module): contributions are unscaled and the time is `clock_pelt`
///   ([`RqClockPelt`]).
///
/// Both share the decay table, the segments and (since 625ed2bf049d, v4.13
/// inferred) the divider `LOAD_AVG_MAX − 1024 + period_contrib`;
/// [`PeltDivider`] names the older one for completeness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeltEra {
    /// Before 23127296889f: contributions scaled, clock plain.
    ScaledContributions,
    /// From 23127296889f: clock scaled (`clock_pelt`), contributions plain.
    #[default]
    ScaledClock,
}

/// The sum-to-average divider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeltDivider {
    /// `LOAD_AVG_MAX − 1024 + period_contrib`: from 625ed2bf049d ("sched/cfs:
    /// Make util/load_avg more stable", v4.13 inferred) through v6.8.
    #[default]
    PeriodContrib,
    /// `LOAD_AVG_MAX`, before 625ed2bf049d; also what the values of the
    /// recorded Juno `4.19.0-07801-gf317706` development tree imply
    /// (tests/it/pelt_real.rs).
    LoadAvgMax,
}

impl PeltDivider {
    /// The divider for `sa` at its current period position.
    #[inline]
    #[must_use]
    pub fn of(self, sa: &SchedAvg) -> u64 {
        match self {
            PeltDivider::PeriodContrib => get_pelt_divider(sa),
            PeltDivider::LoadAvgMax => LOAD_AVG_MAX,
        }
    }
}

/// What a wakeup migration does with the time the task's old, idle
/// runqueue has not accounted yet (`migrate_task_rq_fair`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigrationLag {
    /// Before v6.0: the task leaves synced to the old runqueue's last update
    /// ("the wakee task is less decayed, but giving the wakee more load
    /// sounds not bad", the kernel's comment).
    Undecayed,
    /// From v6.0 (e2f3e35f1f5a): decayed to an estimate of now
    /// ([`migrate_se_pelt_lag`]).
    #[default]
    Estimated,
}

/// The PELT rules of a kernel version: where invariance applies, the
/// averaging divider and the decay at wakeup migration. The default is
/// v6.8's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeltRules {
    pub era: PeltEra,
    pub divider: PeltDivider,
    pub migration_lag: MigrationLag,
}

/// A CPU's invariance factors at an update (`arch_scale_freq_capacity`,
/// `arch_scale_cpu_capacity`, each 0..=1024): read only under
/// [`PeltEra::ScaledContributions`], where they scale each contribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scales {
    pub freq: u64,
    pub cpu: u64,
}

impl PeltRules {
    /// The rules of `kernel`: contributions scaled before v5.1
    /// (23127296889f), the `period_contrib` divider from v4.13
    /// (625ed2bf049d), the migration lag estimated from v6.0
    /// (e2f3e35f1f5a).
    #[must_use]
    pub fn for_kernel(kernel: &crate::kernel::KernelConfig) -> PeltRules {
        PeltRules {
            era: if kernel.pelt_scales_contributions() { PeltEra::ScaledContributions } else { PeltEra::ScaledClock },
            divider: if kernel.pelt_divider_has_period_contrib() { PeltDivider::PeriodContrib } else { PeltDivider::LoadAvgMax },
            migration_lag: if kernel.pelt_migration_lag() { MigrationLag::Estimated } else { MigrationLag::Undecayed },
        }
    }
}

impl Scales {
    /// No scaling (full frequency, full capacity).
    pub const NONE: Scales = Scales { freq: SCHED_CAPACITY_SCALE, cpu: SCHED_CAPACITY_SCALE };
}

/// `accumulate_sum` of the [`PeltEra::ScaledContributions`] era: the same
/// decay and segments as the v6.8 form, then `contrib = cap_scale(contrib,
/// scale_freq)`; `load_sum += load × contrib`, `runnable_sum += runnable ×
/// contrib × 1024` (kept in this module's v6.8 units; v4.19's
/// `runnable_load_sum` was weighted differently and is not modelled) and
/// `util_sum += contrib × scale_cpu`.
fn accumulate_sum_scaled(
    delta: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
    scale_freq: u64,
    scale_cpu: u64,
) -> u64 {
    let mut contrib = delta as u32;
    let delta = delta + u64::from(sa.period_contrib);
    let periods = delta / 1024;
    let mut rest = delta;
    if periods != 0 {
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        sa.util_sum = decay_load(u64::from(sa.util_sum), periods) as u32;
        rest = delta % 1024;
        contrib = accumulate_pelt_segments(periods, 1024 - sa.period_contrib, rest as u32);
    }
    sa.period_contrib = rest as u32;

    let contrib = cap_scale(u64::from(contrib), scale_freq);
    if load != 0 {
        sa.load_sum = sa.load_sum.wrapping_add(load.wrapping_mul(contrib));
    }
    if runnable != 0 {
        sa.runnable_sum = sa
            .runnable_sum
            .wrapping_add(runnable.wrapping_mul(contrib) << SCHED_CAPACITY_SHIFT);
    }
    if running {
        // u32 in the kernel (`sa->util_sum += contrib * scale_cpu`).
        sa.util_sum = sa
            .util_sum
            .wrapping_add(contrib.wrapping_mul(scale_cpu) as u32);
    }
    periods
}

/// `___update_load_sum` with the contribution scaling of `era`. For
/// [`PeltEra::ScaledClock`] this is [`update_load_sum`] (the scales are
/// ignored: `now` must then be the PELT clock); for
/// [`PeltEra::ScaledContributions`] `now` is the plain task clock and each
/// contribution is scaled by `scale_freq` (and `scale_cpu` for util), both
/// 0..=1024.
// Always inlined: as a call, this dispatch made the whole engine run 3 %
// more instructions (callgrind on `bench_mix 1`).
#[allow(clippy::too_many_arguments, clippy::inline_always)]
#[inline(always)]
pub fn update_load_sum_era(
    era: PeltEra,
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
    scale_freq: u64,
    scale_cpu: u64,
) -> bool {
    match era {
        PeltEra::ScaledClock => update_load_sum(now, sa, load, runnable, running),
        PeltEra::ScaledContributions => update_load_sum_scaled(now, sa, load, runnable, running, scale_freq, scale_cpu),
    }
}

/// The [`PeltEra::ScaledContributions`] half of [`update_load_sum_era`],
/// kept out of line so that v6.8's path stays small.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn update_load_sum_scaled(
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
    scale_freq: u64,
    scale_cpu: u64,
) -> bool {
    let Some(delta) = take_units(now, sa) else { return false };
    let (runnable, running) = if load == 0 { (0, false) } else { (runnable, running) };
    accumulate_sum_scaled(delta, sa, load, runnable, running, scale_freq, scale_cpu) != 0
}

/// `___update_load_avg` with a chosen divider (see [`update_load_avg`]).
#[inline]
pub fn update_load_avg_div(sa: &mut SchedAvg, load: u64, divider: PeltDivider) {
    let divider = divider.of(sa);
    sa.load_avg = load.wrapping_mul(sa.load_sum) / divider;
    sa.runnable_avg = sa.runnable_sum / divider;
    sa.util_avg = u64::from(sa.util_sum / divider as u32);
}

/// [`update_entity`] for a task under the rules of `era`: `now` is the
/// task clock for [`PeltEra::ScaledContributions`], the PELT clock for
/// [`PeltEra::ScaledClock`]; `scale_freq`/`scale_cpu` are the CPU's current
/// frequency scale and capacity (used only by the older era). With
/// `ScaledClock` and [`PeltDivider::PeriodContrib`] this is exactly
/// [`update_entity`].
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn update_entity_era(
    era: PeltEra,
    divider: PeltDivider,
    now: u64,
    se: &mut SchedAvg,
    on_rq: bool,
    running: bool,
    weight: u64,
    scale_freq: u64,
    scale_cpu: u64,
) -> bool {
    let on = u64::from(on_rq);
    if update_load_sum_era(era, now, se, on, on, running, scale_freq, scale_cpu) {
        update_load_avg_div(se, weight, divider);
        cfs_se_util_change(se);
        return true;
    }
    false
}

// ---------------------------------------------------------------------------
// fair.c: task groups (CONFIG_FAIR_GROUP_SCHED)
// ---------------------------------------------------------------------------

/// `add_positive`: add a signed delta to a u64 field, clamping at 0.
#[inline]
fn add_positive(var: &mut u64, delta: i64) {
    let res = var.wrapping_add(delta as u64);
    *var = if delta < 0 && res > *var { 0 } else { res };
}

/// `add_positive` on a u32 field: the sum is taken in 64 bits, then
/// truncated to the field's width before the clamp test, as the macro does.
#[inline]
fn add_positive_u32(var: &mut u32, delta: i64) {
    let res = u64::from(*var).wrapping_add(delta as u64) as u32;
    *var = if delta < 0 && res > *var { 0 } else { res };
}

/// `__update_load_avg_se` for a group entity: it is on the parent's
/// runqueue (`on_rq`) while its group has runnable tasks on that CPU, its
/// runnable count is `se_runnable` (`se->runnable_weight`, the group
/// runqueue's `h_nr_running` as last set by `se_update_runnable`) and it
/// runs while one of them runs. `weight` is `se_weight`. Returns decayed.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn update_group_entity(
    rules: PeltRules,
    now: u64,
    se: &mut SchedAvg,
    on_rq: bool,
    runnable: u64,
    running: bool,
    weight: u64,
    scales: Scales,
) -> bool {
    if update_load_sum_era(rules.era, now, se, u64::from(on_rq), runnable, running, scales.freq, scales.cpu) {
        update_load_avg_div(se, weight, rules.divider);
        cfs_se_util_change(se);
        return true;
    }
    false
}

/// `update_cfs_rq_load_avg` for a group's runqueue: as [`update_cfs_rq_era`],
/// and the runnable sum of tasks removed since the last update is returned
/// (negative) for `add_tg_cfs_propagate`: `-(removed_runnable × divider)
/// >> SCHED_CAPACITY_SHIFT`, the estimate of their removed load sum.
#[inline]
pub fn update_group_cfs_rq(rules: PeltRules, now: u64, cfs: &mut CfsRqAvg, rq: RqLoad, scales: Scales) -> (bool, Option<i64>) {
    let removed = (cfs.removed_nr != 0).then(|| {
        let divider = rules.divider.of(&cfs.avg);
        -(cfs.removed_runnable.wrapping_mul(divider) as i64) >> SCHED_CAPACITY_SHIFT
    });
    (update_cfs_rq_era(rules, now, cfs, rq, scales), removed)
}

/// The load sum an attach (positive) or detach (negative) hands to
/// `add_tg_cfs_propagate`: the entity's unweighted `load_sum`.
#[inline]
#[must_use]
pub fn entity_load_sum(se: &SchedAvg) -> i64 {
    se.load_sum as i64
}

/// `update_tg_cfs_util`: the group entity takes its runqueue's `util_avg`
/// (its sum rebuilt with the parent's divider) and the parent moves by the
/// difference, never below zero, its sum kept at or above average ×
/// `PELT_MIN_DIVIDER`.
pub fn update_tg_cfs_util(parent: &mut SchedAvg, se: &mut SchedAvg, gcfs: &SchedAvg, divider: PeltDivider) {
    let delta_avg = gcfs.util_avg as i64 - se.util_avg as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = divider.of(parent);
    se.util_avg = gcfs.util_avg;
    let new_sum = se.util_avg.wrapping_mul(divider) as u32;
    let delta_sum = i64::from(new_sum) - i64::from(se.util_sum);
    se.util_sum = new_sum;
    add_positive(&mut parent.util_avg, delta_avg);
    add_positive_u32(&mut parent.util_sum, delta_sum);
    parent.util_sum = max_u32(u64::from(parent.util_sum), parent.util_avg.wrapping_mul(PELT_MIN_DIVIDER));
}

/// `update_tg_cfs_runnable`: the same for `runnable_avg` (the new sum is a
/// u32 in the kernel).
pub fn update_tg_cfs_runnable(parent: &mut SchedAvg, se: &mut SchedAvg, gcfs: &SchedAvg, divider: PeltDivider) {
    let delta_avg = gcfs.runnable_avg as i64 - se.runnable_avg as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = divider.of(parent);
    se.runnable_avg = gcfs.runnable_avg;
    let new_sum = se.runnable_avg.wrapping_mul(divider) as u32;
    let delta_sum = i64::from(new_sum) - se.runnable_sum as i64;
    se.runnable_sum = u64::from(new_sum);
    add_positive(&mut parent.runnable_avg, delta_avg);
    add_positive(&mut parent.runnable_sum, delta_sum);
    parent.runnable_sum = u64::from(max_u32(parent.runnable_sum, parent.runnable_avg.wrapping_mul(PELT_MIN_DIVIDER)));
}

/// `update_tg_cfs_load`: the load a group entity carries after tasks came
/// into or left its runqueue (`prop_runnable_sum`, taken and cleared). An
/// addition raises the entity's unweighted runnable sum, capped at the
/// divider (until the CPU saturates, runnable equals running); a removal
/// re-estimates it as the group runqueue's load sum per unit of its weight
/// (all its tasks taken as equally runnable), never above what it was. It
/// never falls below the running sum. The entity's load is that sum times
/// `se_weight`; the parent moves by the difference.
pub fn update_tg_cfs_load(
    parent: &mut SchedAvg,
    se: &mut SchedAvg,
    gcfs: &SchedAvg,
    gcfs_weight: u64,
    se_weight: u64,
    prop_runnable_sum: &mut i64,
    divider: PeltDivider,
) {
    let mut runnable_sum = *prop_runnable_sum;
    if runnable_sum == 0 {
        return;
    }
    *prop_runnable_sum = 0;
    let divider = divider.of(parent);
    if runnable_sum >= 0 {
        runnable_sum = (runnable_sum + se.load_sum as i64).min(divider as i64);
    } else {
        let load_sum = gcfs.load_sum.checked_div(gcfs_weight).unwrap_or(0);
        runnable_sum = se.load_sum.min(load_sum) as i64;
    }
    let running_sum = i64::from(se.util_sum >> SCHED_CAPACITY_SHIFT);
    let runnable_sum = runnable_sum.max(running_sum) as u64;

    let load_sum = se_weight.wrapping_mul(runnable_sum);
    let load_avg = load_sum / divider;
    let delta_avg = load_avg as i64 - se.load_avg as i64;
    if delta_avg == 0 {
        return;
    }
    let delta_sum = load_sum as i64 - se_weight.wrapping_mul(se.load_sum) as i64;
    se.load_sum = runnable_sum;
    se.load_avg = load_avg;
    add_positive(&mut parent.load_avg, delta_avg);
    add_positive(&mut parent.load_sum, delta_sum);
    parent.load_sum = u64::from(max_u32(parent.load_sum, parent.load_avg.wrapping_mul(PELT_MIN_DIVIDER)));
}

/// The PELT half of `reweight_entity`: the entity's load leaves the
/// runqueue's, its `load_avg` is recomputed for the new `se_weight` from its
/// `load_sum`, and it comes back.
pub fn reweight_entity_avg(cfs: &mut CfsRqAvg, se: &mut SchedAvg, old_weight: u64, new_weight: u64, divider: PeltDivider) {
    dequeue_load_avg(cfs, se, old_weight);
    let divider = divider.of(se);
    se.load_avg = new_weight.wrapping_mul(se.load_sum) / divider;
    enqueue_load_avg(cfs, se, new_weight);
}

/// `attach_entity_load_avg` under the rules of an era, returning the
/// `load_sum` it hands to `add_tg_cfs_propagate` (a task joining a group
/// runqueue).
pub fn attach_entity_prop(cfs: &mut CfsRqAvg, se: &mut SchedAvg, weight: u64, divider: PeltDivider) -> i64 {
    attach_entity_div(cfs, se, weight, divider);
    entity_load_sum(se)
}

/// `detach_entity_load_avg`, returning the (negative) `load_sum` it hands
/// to `add_tg_cfs_propagate`.
pub fn detach_entity_prop(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) -> i64 {
    detach_entity(cfs, se, weight);
    -entity_load_sum(se)
}

/// MIN_SHARES (kernel/sched/sched.h, v6.8): the least weight a group
/// entity gets, unscaled even though the weight it floors is scaled.
pub const MIN_SHARES: u64 = 2;
/// SCHED_FIXEDPOINT_SHIFT: the 10 extra bits of load resolution 64-bit
/// kernels carry in `load.weight` (`scale_load`, kernel/sched/sched.h).
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;

/// `scale_load_down`: a scaled weight in PELT's units, at least 2 when
/// non-zero (kernel/sched/sched.h, v6.8).
#[inline]
#[must_use]
pub fn scale_load_down(w: u64) -> u64 {
    if w == 0 { 0 } else { (w >> SCHED_FIXEDPOINT_SHIFT).max(2) }
}

/// `calc_group_shares` (kernel/sched/fair.c, v6.8): the scaled weight of a
/// group's entity on one CPU, the group's shares split by that CPU's part of
/// the group's load. `tg_shares` is `tg->shares` (scaled), `load_weight`
/// the group runqueue's `scale_load_down(load.weight)`, `load_avg` its
/// `avg.load_avg`, `tg_load_avg` the group's `load_avg` (Σ of the CPUs'
/// `tg_load_avg_contrib`) and `contrib` this runqueue's. The runqueue's load
/// is the larger of its weight now and its average (so a task that just
/// woke counts at once, a group that just emptied fades); the group's total
/// swaps this CPU's stale contribution for it, so the total is never below
/// the part. The result is clamped to [MIN_SHARES, tg_shares].
#[must_use]
pub fn calc_group_shares(tg_shares: u64, load_weight: u64, load_avg: u64, tg_load_avg: i64, contrib: u64) -> u64 {
    let load = load_weight.max(load_avg) as i64;
    let tg_weight = tg_load_avg - contrib as i64 + load;
    let mut shares = tg_shares as i64 * load;
    if tg_weight != 0 {
        shares /= tg_weight;
    }
    shares.clamp(MIN_SHARES as i64, tg_shares as i64) as u64
}

#[cfg(test)]
// Floats appear only here, to compare integer results with y^n.
#[allow(clippy::cast_precision_loss)]
mod tests {
    use super::*;

    /// A stored estimate with the `UTIL_AVG_UNCHANGED` flag set.
    fn flagged(est: u32) -> u32 {
        est | UTIL_AVG_UNCHANGED
    }

    /// y = 2^(-1/32).
    fn y() -> f64 {
        0.5_f64.powf(1.0 / 32.0)
    }

    /// A task alone on a CPU, driven the way CFS drives it.
    struct Rig {
        clk: RqClockPelt,
        cfs: CfsRqAvg,
        task: SchedAvg,
        running: bool,
        cap: u64,
        freq: u64,
    }

    impl Rig {
        fn new(cap: u64, freq: u64) -> Self {
            let mut rig = Rig {
                clk: RqClockPelt::default(),
                cfs: CfsRqAvg::default(),
                task: SchedAvg::default(),
                running: false,
                cap,
                freq,
            };
            // Attach at time 0 (a new task's first enqueue).
            attach_entity(&mut rig.cfs, &mut rig.task, NICE_0_LOAD);
            rig
        }

        /// Advance the clocks to `t_ns` and update the task (if running) and
        /// the runqueue, as a tick or any rq-locked event does.
        fn sync(&mut self, t_ns: u64) {
            self.clk.update(t_ns, !self.running, self.cap, self.freq);
            let now = self.clk.now();
            if self.running {
                update_entity(now, &mut self.task, true, true, NICE_0_LOAD);
                update_cfs_rq(now, &mut self.cfs, NICE_0_LOAD, 1, true);
            } else {
                update_cfs_rq(now, &mut self.cfs, 0, 0, false);
            }
        }

        /// `ttwu` onto an idle CPU: `enqueue_task_fair` before the task runs.
        fn wake(&mut self, t_ns: u64) {
            self.clk.update(t_ns, true, self.cap, self.freq);
            let now = self.clk.now();
            util_est_enqueue(&mut self.cfs, &self.task);
            update_entity(now, &mut self.task, false, false, NICE_0_LOAD);
            update_cfs_rq(now, &mut self.cfs, 0, 0, false);
            self.running = true;
        }

        /// `dequeue_task_fair` for sleep, then the switch to idle.
        fn sleep(&mut self, t_ns: u64) {
            util_est_dequeue(&mut self.cfs, &self.task);
            self.sync(t_ns);
            util_est_update(&mut self.task, true, self.cap);
            self.running = false;
            self.clk.update_idle(self.cfs.avg.util_sum);
        }
    }

    #[test]
    fn decay_load_kernel_values() {
        // Halving after 32 periods, minus the unit that the 2^32 - 1 entry
        // for y^0 always takes off.
        assert_eq!(decay_load(1024, 32), 511);
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(LOAD_AVG_MAX, 1), PELT_MIN_DIVIDER);
        // n = 0 multiplies by (2^32 - 1) / 2^32: x - 1 below 2^32 (the
        // kernel never calls it with n = 0).
        assert_eq!(decay_load(0, 0), 0);
        for x in [1_u64, 2, 1000, 47742, 1 << 31, (1 << 32) - 1] {
            assert_eq!(decay_load(x, 0), x - 1, "x = {x}");
        }
        // Zero past 63 * 32 periods, whatever the value.
        for x in [1_u64, 1024, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(decay_load(x, 63 * 32 + 1), 0);
            assert_eq!(decay_load(x, 10_000), 0);
        }
        // At the horizon: (MAX >> 63) = 1 decays to 0, (MAX >> 62) = 3 to 2.
        assert_eq!(decay_load(u64::MAX, 63 * 32), 0);
        assert_eq!(decay_load(u64::MAX, 62 * 32), 2);
        // Close to x * y^n for all n in range.
        let x = 1_u64 << 40;
        for n in 0..=(63 * 32) {
            let exact = x as f64 * y().powi(n as i32);
            let got = decay_load(x, n) as f64;
            assert!(
                (got - exact).abs() <= 2.0 + exact * 1e-9,
                "n = {n}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn yn_table_shape() {
        for k in 1..32 {
            assert!(
                RUNNABLE_AVG_YN_INV[k] < RUNNABLE_AVG_YN_INV[k - 1],
                "k = {k}"
            );
        }
        // Each entry is floor((2^32 - 1) * y^k), give or take one.
        for (k, &v) in RUNNABLE_AVG_YN_INV.iter().enumerate() {
            let want = (f64::from(u32::MAX) * y().powi(k as i32)).floor();
            assert!(
                (f64::from(v) - want).abs() <= 1.0,
                "k = {k}: {v:#x} vs {want}"
            );
        }
        // y^31 * y comes back to one half: the table closes on itself.
        let y32 = (u64::from(RUNNABLE_AVG_YN_INV[31]) * u64::from(RUNNABLE_AVG_YN_INV[1])) >> 32;
        assert!(y32.abs_diff(1 << 31) < 4, "{y32:#x}");
    }

    #[test]
    fn load_avg_max_is_the_fixed_point_of_the_table() {
        // The generator's recurrence max = max*y + 1024 with y = table[1].
        let mut max = 0_u64;
        let mut last = u64::MAX;
        while last != max {
            last = max;
            max = mul_u64_u32_shr(max, RUNNABLE_AVG_YN_INV[1], 32) + 1024;
        }
        assert_eq!(max, LOAD_AVG_MAX);
        // The closed form for full periods never goes negative (it would
        // wrap in u32): LOAD_AVG_MAX - decay(LOAD_AVG_MAX, p) >= 1024.
        for p in 1..=(64 * 32) {
            assert!(
                LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, p) >= 1024,
                "p = {p}"
            );
        }
        assert_eq!(accumulate_pelt_segments(1, 1024, 0), 1002); // 1024 * y, truncated
        assert_eq!(UTIL_SUM_SATURATED, 47_791_490);
    }

    /// Always-running task from util 0, one update per period boundary.
    fn ramp(n_periods: u64) -> Vec<SchedAvg> {
        let mut se = SchedAvg::default();
        let mut out = Vec::new();
        for k in 1..=n_periods {
            assert!(update_entity(
                k * PELT_PERIOD_NS,
                &mut se,
                true,
                true,
                NICE_0_LOAD
            ));
            assert_eq!(se.period_contrib, 0);
            out.push(se.clone());
        }
        out
    }

    #[test]
    fn running_task_ramps_like_one_minus_y_pow_n() {
        let states = ramp(2100);
        for (i, se) in states.iter().take(200).enumerate() {
            let n = (i + 1) as i32;
            let want = 1024.0 * (1.0 - y().powi(n));
            let got = se.util_avg as f64;
            assert!((got - want).abs() <= 2.0, "n = {n}: {got} vs {want}");
        }
        // Regression guards: exact kernel integers.
        assert_eq!(states[0].util_avg, 21);
        assert_eq!(states[31].util_avg, 512);
        assert_eq!(states[73].util_avg, 818);
        assert!(states.iter().any(|s| s.util_avg >= 1000));
        let top = states.last().unwrap();
        // Per-period updates overshoot the divider slightly (util_sum
        // 47 883 609 > 1024 * 46 718), so util and runnable read 1024 while
        // the unshifted load_sum (46 715) reads 1023.
        assert_eq!(
            (top.util_avg, top.runnable_avg, top.load_avg),
            (1024, 1024, 1023)
        );
        // A saturated task would count as saturated in the idle rule too.
        assert!(top.util_sum >= UTIL_SUM_SATURATED);
    }

    #[test]
    fn sleeping_task_halves_in_32_periods() {
        let mut se = ramp(2100).pop().unwrap();
        let start = se.util_avg;
        let t0 = se.last_update_time;
        for k in 1..=32 {
            assert!(update_entity(
                t0 + k * PELT_PERIOD_NS,
                &mut se,
                false,
                false,
                NICE_0_LOAD
            ));
        }
        assert_eq!(start, 1024);
        assert_eq!(se.util_avg, 512);
        let want = start as f64 / 2.0;
        assert!((se.util_avg as f64 - want).abs() <= 2.0);
        // One call over the same 32 periods: the same half-life.
        let mut one = ramp(2100).pop().unwrap();
        assert!(update_blocked_entity(
            t0 + 32 * PELT_PERIOD_NS,
            &mut one,
            NICE_0_LOAD
        ));
        assert!(one.util_avg.abs_diff(se.util_avg) <= 1);
    }

    /// Always running from util 0 up to `end_ns`, one update every `step_ns`
    /// and a last one exactly at `end_ns`.
    fn run_in_steps(end_ns: u64, step_ns: u64) -> SchedAvg {
        let mut se = SchedAvg::default();
        let mut t = 0;
        while t + step_ns < end_ns {
            t += step_ns;
            update_entity(t, &mut se, true, true, NICE_0_LOAD);
        }
        update_entity(end_ns, &mut se, true, true, NICE_0_LOAD);
        se
    }

    #[test]
    fn split_updates_match_one_update() {
        // What is exact: time. However the interval is cut, the same whole
        // 1024-ns units are consumed and the period position is the same.
        // What is not: each crossed boundary floors a decay, and the closed
        // form for full periods rounds differently from period-by-period
        // accumulation, so sums drift by less than one average unit
        // (< PELT_MIN_DIVIDER) and averages at a boundary by at most 1.
        let mut worst_avg = 0;
        let mut worst_sum = 0;
        for n in 1..=300 {
            let end = n * PELT_PERIOD_NS;
            let one = run_in_steps(end, end);
            for step in [PELT_PERIOD_NS, 100_000, PELT_PERIOD_NS / 8, PELT_UNIT_NS] {
                let split = run_in_steps(end, step);
                assert_eq!(split.last_update_time, one.last_update_time);
                assert_eq!(split.period_contrib, one.period_contrib);
                worst_avg = worst_avg.max(split.util_avg.abs_diff(one.util_avg));
                worst_avg = worst_avg.max(split.load_avg.abs_diff(one.load_avg));
                worst_sum = worst_sum.max(split.util_sum.abs_diff(one.util_sum));
            }
        }
        assert_eq!(
            worst_avg, 1,
            "averages agree within one unit (and do differ)"
        );
        assert!(
            u64::from(worst_sum) < PELT_MIN_DIVIDER,
            "util_sum drift {worst_sum}"
        );
        // Regression guards for the two extremes at 100 periods.
        let one = run_in_steps(100 * PELT_PERIOD_NS, 100 * PELT_PERIOD_NS);
        let fine = run_in_steps(100 * PELT_PERIOD_NS, 100_000);
        assert_eq!((one.util_avg, one.util_sum), (906, 42_356_736));
        assert_eq!((fine.util_avg, fine.util_sum), (907, 42_375_749));

        // Splits that stay inside one period are exact in every field.
        let a = run_in_steps(1_000_000, 1_000_000);
        let b = run_in_steps(1_000_000, 100_000);
        assert_eq!(
            (a.util_sum, a.load_sum, a.runnable_sum),
            (b.util_sum, b.load_sum, b.runnable_sum)
        );
        assert_eq!(
            (a.last_update_time, a.period_contrib),
            (b.last_update_time, b.period_contrib)
        );
    }

    /// Run a task `busy_ms` of every `cycle_ms`, with an rq-locked update
    /// every ms, for `cycles`; return the mean of the cfs `util_avg` sampled
    /// every ms over the last `tail` cycles.
    fn duty_cycle(freq: u64, busy_ms: u64, cycle_ms: u64, cycles: u64, tail: u64) -> (f64, Rig) {
        let mut rig = Rig::new(1024, freq);
        let mut acc = 0_u64;
        let mut samples = 0_u64;
        for c in 0..cycles {
            for ms in 0..cycle_ms {
                let t = (c * cycle_ms + ms) * 1_000_000;
                match ms {
                    0 => rig.wake(t),
                    m if m == busy_ms => rig.sleep(t),
                    _ => rig.sync(t),
                }
                if c >= cycles - tail {
                    acc += rig.cfs.avg.util_avg;
                    samples += 1;
                }
            }
        }
        (acc as f64 / samples as f64, rig)
    }

    #[test]
    fn frequency_invariance_through_clock_pelt() {
        // 4 ms busy / 4 ms idle. At half speed the work done equals 2 ms at
        // full speed, so util settles around a quarter of capacity.
        let (half, rig) = duty_cycle(512, 4, 8, 200, 50);
        assert!((half - 256.0).abs() <= 10.0, "half speed: {half}");
        assert_eq!(rig.clk.lost_idle_time, 0);
        let (full, _) = duty_cycle(1024, 4, 8, 200, 50);
        assert!((full - 512.0).abs() <= 10.0, "full speed: {full}");

        // Always busy at half speed: clock_pelt runs at half rate and never
        // re-syncs, so PELT sees uninterrupted running and still climbs to
        // ~1024, only twice as slowly in wall time.
        let mut rig = Rig::new(1024, 512);
        rig.wake(0);
        let mut t = 0;
        let mut at_67ms = 0;
        while t < 4_000_000_000 {
            t += 1_000_000;
            rig.sync(t);
            if t == 67_000_000 {
                at_67ms = rig.task.util_avg;
            }
        }
        assert!(rig.task.util_avg >= 1020, "{}", rig.task.util_avg);
        assert!(rig.cfs.avg.util_avg >= 1020, "{}", rig.cfs.avg.util_avg);
        // After 67 wall ms, i.e. ~32 PELT periods at half rate: about half.
        assert!(at_67ms.abs_diff(512) <= 16, "{at_67ms}");
    }

    #[test]
    fn lost_idle_time_only_when_saturated() {
        // Saturate at half speed for 4 s, then go idle: the half of the
        // busy time that scaling took away cannot be given back.
        let mut rig = Rig::new(1024, 512);
        rig.wake(0);
        let mut t = 0;
        while t < 4_000_000_000 {
            t += 1_000_000;
            rig.sync(t);
        }
        let gap = rig.clk.clock_task - rig.clk.clock_pelt;
        assert!(rig.cfs.avg.util_sum >= UTIL_SUM_SATURATED);
        rig.sleep(t + 1_000_000);
        assert_eq!(rig.clk.lost_idle_time, gap + 500_000);
        assert_eq!(rig.clk.clock_pelt, rig.clk.clock_task);
        assert_eq!(rig.clk.now(), rig.clk.clock_task - rig.clk.lost_idle_time);

        // Not saturated: the clock just syncs and nothing is lost.
        let mut clk = RqClockPelt::default();
        clk.update(1_000_000, false, 1024, 512);
        assert_eq!(clk.clock_pelt, 500_000);
        clk.update_idle(UTIL_SUM_SATURATED - 1);
        assert_eq!((clk.clock_pelt, clk.lost_idle_time), (1_000_000, 0));
        // Capacity is applied before frequency, each truncating:
        // 1001 * 3 / 1024 = 2, 2 * 1000 / 1024 = 1 (the other order gives 2).
        let mut clk = RqClockPelt::default();
        clk.update(1001, false, 3, 1000);
        assert_eq!(clk.clock_pelt, 1);
        // Time going backwards is ignored.
        clk.update(10, false, 1024, 1024);
        assert_eq!(clk.clock_task, 1001);
    }

    #[test]
    fn attach_detach_conserve_util() {
        let mut cfs = CfsRqAvg::default();
        // Give the runqueue a history of its own: 100 periods of a nice-0
        // task already running, then a mid-period position.
        let mut other = SchedAvg::default();
        attach_entity(&mut cfs, &mut other, NICE_0_LOAD);
        let now = 100 * PELT_PERIOD_NS + 300 * PELT_UNIT_NS;
        update_entity(now, &mut other, true, true, NICE_0_LOAD);
        update_cfs_rq(now, &mut cfs, NICE_0_LOAD, 1, true);
        let before = cfs.avg.clone();

        // A migrated task with some history of its own.
        let mut se = ramp(40).pop().unwrap();
        se.last_update_time = 0;
        attach_entity(&mut cfs, &mut se, NICE_0_LOAD);
        assert_eq!(se.last_update_time, cfs.avg.last_update_time);
        assert_eq!(se.period_contrib, cfs.avg.period_contrib);
        assert_eq!(cfs.avg.util_avg, before.util_avg + se.util_avg);
        assert_eq!(cfs.avg.util_sum, before.util_sum + se.util_sum);
        assert_eq!(cfs.avg.load_avg, before.load_avg + se.load_avg);
        assert_eq!(
            u64::from(se.util_sum),
            se.util_avg * get_pelt_divider(&cfs.avg)
        );

        detach_entity(&mut cfs, &se, NICE_0_LOAD);
        assert_eq!(cfs.avg.util_avg, before.util_avg);
        assert_eq!(cfs.avg.util_sum, before.util_sum);
        assert_eq!(cfs.avg.load_avg, before.load_avg);
        assert_eq!(cfs.avg.runnable_avg, before.runnable_avg);

        // Detaching more than is there clamps at zero, sums floored.
        let big = SchedAvg {
            util_avg: 5000,
            util_sum: u32::MAX,
            load_avg: 5000,
            load_sum: 1 << 40,
            runnable_avg: 5000,
            runnable_sum: u64::MAX,
            ..SchedAvg::default()
        };
        detach_entity(&mut cfs, &big, NICE_0_LOAD);
        assert_eq!((cfs.avg.util_avg, cfs.avg.util_sum), (0, 0));
        assert_eq!((cfs.avg.load_avg, cfs.avg.load_sum), (0, 0));
        assert_eq!((cfs.avg.runnable_avg, cfs.avg.runnable_sum), (0, 0));

        // Attach of an entity with zero load_avg keeps load_sum at 1.
        let mut tiny = SchedAvg::default();
        attach_entity(&mut cfs, &mut tiny, NICE_0_LOAD);
        assert_eq!(tiny.load_sum, 1);
    }

    #[test]
    fn removed_util_applied_at_next_update() {
        let mut cfs = CfsRqAvg::default();
        let mut se = ramp(40).pop().unwrap();
        se.last_update_time = 0;
        let t = 10 * PELT_PERIOD_NS;
        update_cfs_rq(t, &mut cfs, 0, 0, false);
        attach_entity(&mut cfs, &mut se, NICE_0_LOAD);
        let util = cfs.avg.util_avg;
        assert_eq!(util, se.util_avg);

        // The task leaves from another CPU: synced, then parked.
        sync_entity(&cfs, &mut se, NICE_0_LOAD);
        remove_entity(&mut cfs, &se);
        assert_eq!(cfs.avg.util_avg, util);
        // Same timestamp: no decay, but the removal counts as "decayed".
        assert!(update_cfs_rq(t, &mut cfs, 0, 0, false));
        assert_eq!(cfs.avg.util_avg, 0);
        assert_eq!(cfs.avg.load_avg, 0);
        assert_eq!(cfs.removed_nr, 0);
        assert_eq!(cfs.removed_util, 0);
        assert!(!update_cfs_rq(t + 1000, &mut cfs, 0, 0, false));
    }

    #[test]
    fn averages_steady_inside_a_period() {
        // A saturated task sampled at every position inside the period:
        // dividing by LOAD_AVG_MAX - 1024 + period_contrib keeps util_avg
        // pinned instead of rising and falling with the period position.
        let mut se = SchedAvg::default();
        let mut lo = u64::MAX;
        let mut hi = 0;
        let mut t = 0;
        while t < 3_000_000_000 {
            t += 100_000;
            if update_entity(t, &mut se, true, true, NICE_0_LOAD) && t > 2_500_000_000 {
                lo = lo.min(se.util_avg);
                hi = hi.max(se.util_avg);
            }
        }
        assert!(lo >= 1020 && hi <= 1024, "{lo}..={hi}");
    }

    #[test]
    fn off_runqueue_means_not_running() {
        // The kernel's corner case: cfs_rq->curr still points at an entity
        // that was already dequeued. With load 0 nothing accrues.
        let mut se = ramp(40).pop().unwrap();
        let before = se.clone();
        let later = before.last_update_time + 3 * PELT_PERIOD_NS + 500 * PELT_UNIT_NS;
        assert!(update_load_sum(later, &mut se, 0, 1, true));
        assert_eq!(
            se.util_sum,
            decay_load(u64::from(before.util_sum), 3) as u32
        );
        assert_eq!(se.runnable_sum, decay_load(before.runnable_sum, 3));
        assert_eq!(se.load_sum, decay_load(before.load_sum, 3));
        assert_eq!(se.period_contrib, 500);
    }

    #[test]
    fn time_going_backwards_resets() {
        let mut se = SchedAvg {
            last_update_time: 5 * PELT_PERIOD_NS,
            ..SchedAvg::default()
        };
        assert!(!update_load_sum(PELT_PERIOD_NS, &mut se, 1, 1, true));
        assert_eq!(se.last_update_time, PELT_PERIOD_NS);
        assert_eq!(se.util_sum, 0);
        // Sub-unit remainders are carried, not dropped.
        assert!(!update_load_sum(PELT_PERIOD_NS + 1023, &mut se, 1, 1, true));
        assert_eq!(se.last_update_time, PELT_PERIOD_NS);
        assert!(!update_load_sum(PELT_PERIOD_NS + 2047, &mut se, 1, 1, true));
        assert_eq!(se.last_update_time, PELT_PERIOD_NS + 1024);
        assert_eq!(se.util_sum, 1024);
    }

    #[test]
    fn util_est_ramps_up_and_decays_by_a_quarter() {
        // A periodic task: 20 ms running, 80 ms sleeping.
        let mut rig = Rig::new(1024, 1024);
        let mut peak = 0;
        for c in 0..20 {
            let t0 = c * 100_000_000;
            rig.wake(t0);
            assert_eq!(rig.cfs.util_est, task_util_est_raw(&rig.task));
            for ms in 1..20 {
                rig.sync(t0 + ms * 1_000_000);
            }
            rig.sleep(t0 + 20_000_000);
            peak = rig.task.util_avg;
            assert_eq!(rig.cfs.util_est, 0);
            // Fast ramp-up: the estimate is at least the util at sleep.
            assert!(u64::from(task_util_est_raw(&rig.task)) >= peak);
            assert!(rig.task.util_est & UTIL_AVG_UNCHANGED != 0);
        }
        let est = task_util_est_raw(&rig.task);
        assert!(u64::from(est) >= peak);
        // The decayed util at the next wakeup is well below the estimate.
        rig.wake(20 * 100_000_000);
        assert!(rig.task.util_avg < u64::from(est) / 2);
        assert_eq!(rig.cfs.util_est, est);
        assert_eq!(cpu_util(&rig.cfs, 1024), u64::from(est));

        // The task shrinks to 5 ms per 100 ms: at each sleep the estimate
        // closes a quarter of the gap (rounded up) until within the margin.
        let mut steps = 0;
        for c in 21..40 {
            let t0 = c * 100_000_000;
            rig.wake(t0);
            for ms in 1..5 {
                rig.sync(t0 + ms * 1_000_000);
            }
            let old = task_util_est_raw(&rig.task);
            rig.sleep(t0 + 5_000_000);
            let util = rig.task.util_avg as u32;
            assert!(u64::from(util + UTIL_EST_MARGIN) >= rig.task.runnable_avg);
            let new = task_util_est_raw(&rig.task);
            if old > util && old - util >= UTIL_EST_MARGIN {
                assert_eq!(new, old - (old - util).div_ceil(4), "cycle {c}");
                steps += 1;
            }
        }
        assert!(steps >= 10, "{steps}");
        assert!(task_util_est_raw(&rig.task) < est / 2);

        // A sleep right after another, with no PELT refresh between them,
        // learns nothing; a refresh (here the wakeup's update) re-arms it.
        let mut task = rig.task.clone();
        assert!(task.util_est & UTIL_AVG_UNCHANGED != 0);
        let frozen = task.util_est;
        util_est_update(&mut task, true, 1024);
        assert_eq!(task.util_est, frozen);
        rig.wake(40 * 100_000_000);
        assert_eq!(rig.task.util_est & UTIL_AVG_UNCHANGED, 0);
        util_est_update(&mut rig.task, true, 1024);
        assert!(rig.task.util_est & UTIL_AVG_UNCHANGED != 0);
        assert_ne!(task_util_est_raw(&rig.task), task_util_est_raw(&task));

        // The task gets smaller: each sleep closes ceil(gap / 4).
        let mut task = SchedAvg {
            util_est: 400,
            util_avg: 200,
            runnable_avg: 200,
            ..SchedAvg::default()
        };
        util_est_update(&mut task, true, 1024);
        assert_eq!(task.util_est, flagged(350));
        task.util_est &= !UTIL_AVG_UNCHANGED;
        task.util_avg = 347; // gap 3 < margin: kept, flag set
        util_est_update(&mut task, true, 1024);
        assert_eq!(task.util_est, flagged(350));
        task.util_est = 351;
        task.util_avg = 300; // gap 51 -> 351 - 13 = 338
        task.runnable_avg = 300;
        util_est_update(&mut task, true, 1024);
        assert_eq!(task.util_est, flagged(338));
        // Starved (runnable well above util): kept.
        task.util_est = 338;
        task.runnable_avg = 311;
        util_est_update(&mut task, true, 1024);
        assert_eq!(task.util_est, flagged(338));
        // Bigger than the CPU: untouched, flag stays clear.
        let mut task = SchedAvg {
            util_est: 900,
            util_avg: 500,
            runnable_avg: 500,
            ..SchedAvg::default()
        };
        util_est_update(&mut task, true, 446);
        assert_eq!(task.util_est, 900);
        // Not a sleep: untouched.
        util_est_update(&mut task, false, 1024);
        assert_eq!(task.util_est, 900);
        // A PELT update that crosses a boundary clears the flag.
        task.util_est |= UTIL_AVG_UNCHANGED;
        update_entity(2 * PELT_PERIOD_NS, &mut task, true, true, NICE_0_LOAD);
        assert_eq!(task.util_est, 900);
        task.util_est |= UTIL_AVG_UNCHANGED;
        update_blocked_entity(4 * PELT_PERIOD_NS, &mut task, NICE_0_LOAD);
        assert_eq!(task.util_est, flagged(900));
    }

    #[test]
    fn cpu_util_is_max_of_avg_and_est_capped() {
        let mut cfs = CfsRqAvg::default();
        cfs.avg.util_avg = 300;
        cfs.avg.runnable_avg = 700;
        cfs.util_est = 200;
        assert_eq!(cpu_util(&cfs, 1024), 300);
        assert_eq!(cpu_util_boost(&cfs, 1024), 700);
        cfs.util_est = 600;
        assert_eq!(cpu_util(&cfs, 1024), 600);
        assert_eq!(cpu_util(&cfs, 446), 446);
        // Enqueue/dequeue keep the runqueue sum and never underflow.
        let a = SchedAvg {
            util_est: flagged(100),
            ..SchedAvg::default()
        };
        let b = SchedAvg {
            util_est: 250,
            ..SchedAvg::default()
        };
        let mut cfs = CfsRqAvg::default();
        util_est_enqueue(&mut cfs, &a);
        util_est_enqueue(&mut cfs, &b);
        assert_eq!(cfs.util_est, 350);
        util_est_dequeue(&mut cfs, &b);
        assert_eq!(cfs.util_est, 100);
        util_est_dequeue(&mut cfs, &b);
        assert_eq!(cfs.util_est, 0);
        assert_eq!(
            task_util_est(&SchedAvg {
                util_avg: 120,
                ..a.clone()
            }),
            120
        );
        assert_eq!(task_util_est(&SchedAvg { util_avg: 80, ..a }), 100);
    }

    #[test]
    fn era_scaled_contributions() {
        // At full speed on a full-capacity CPU the two eras agree bit for bit.
        let (mut v68, mut old, mut via) = (
            SchedAvg::default(),
            SchedAvg::default(),
            SchedAvg::default(),
        );
        let mut t = 0;
        for step in 0..3000u64 {
            t += 37_000 + (step % 7) * 91_111;
            let running = step % 3 != 0;
            let da = update_entity(t, &mut v68, true, running, NICE_0_LOAD);
            let db = update_entity_era(
                PeltEra::ScaledContributions,
                PeltDivider::PeriodContrib,
                t,
                &mut old,
                true,
                running,
                NICE_0_LOAD,
                1024,
                1024,
            );
            let dc = update_entity_era(
                PeltEra::ScaledClock,
                PeltDivider::PeriodContrib,
                t,
                &mut via,
                true,
                running,
                NICE_0_LOAD,
                300,
                200,
            );
            assert_eq!(
                (da, v68.util_sum, v68.load_sum, v68.util_avg),
                (db, old.util_sum, old.load_sum, old.util_avg)
            );
            assert_eq!(
                (da, v68.util_sum, v68.load_sum, v68.load_avg),
                (dc, via.util_sum, via.load_sum, via.load_avg)
            );
        }

        // Always running at half frequency on a 446-capacity CPU: the old
        // rules settle at the scaled share (load ~512, util ~446/2), while
        // the clock rules (fed the same wall time) would climb to ~1024.
        let mut se = SchedAvg::default();
        let mut t = 0;
        while t < 2_000_000_000 {
            t += 1_000_000;
            update_entity_era(
                PeltEra::ScaledContributions,
                PeltDivider::PeriodContrib,
                t,
                &mut se,
                true,
                true,
                NICE_0_LOAD,
                512,
                446,
            );
        }
        assert!(se.load_avg.abs_diff(512) <= 2, "{}", se.load_avg);
        assert!(se.util_avg.abs_diff(223) <= 2, "{}", se.util_avg);
        // One contribution: 1000 units at scale 512 → 500; util × 446.
        let mut se = SchedAvg::default();
        update_load_sum_era(
            PeltEra::ScaledContributions,
            1000 * PELT_UNIT_NS,
            &mut se,
            1,
            1,
            true,
            512,
            446,
        );
        assert_eq!(
            (se.load_sum, se.util_sum, se.period_contrib),
            (500, 500 * 446, 1000)
        );
        // cap_scale truncates: 3 units at 500 → 1.
        update_load_sum_era(
            PeltEra::ScaledContributions,
            1003 * PELT_UNIT_NS,
            &mut se,
            1,
            1,
            true,
            500,
            1024,
        );
        assert_eq!(se.load_sum, 501);

        // The pre-v4.13 divider is larger, so averages come out lower.
        let mut x = se.clone();
        update_load_avg_div(&mut x, NICE_0_LOAD, PeltDivider::LoadAvgMax);
        let mut y = se.clone();
        update_load_avg_div(&mut y, NICE_0_LOAD, PeltDivider::PeriodContrib);
        assert_eq!(x.load_avg, 1024 * 501 / LOAD_AVG_MAX);
        assert_eq!(y.load_avg, 1024 * 501 / (PELT_MIN_DIVIDER + 1003));
    }

    // calc_group_shares: the shares split by this CPU's part of the group's
    // load, that part the larger of weight now and load average, floored at
    // MIN_SHARES.
    #[test]
    fn group_shares_split_by_load() {
        let shares = 1024 << SCHED_FIXEDPOINT_SHIFT;
        // Alone in the group: all of it.
        assert_eq!(calc_group_shares(shares, 1024, 1024, 1024, 1024), shares);
        // Half the group's load here.
        assert_eq!(calc_group_shares(shares, 1024, 1024, 2048, 1024), shares / 2);
        // A task just woke here (weight 1024, average still 0, nothing
        // reported yet): it counts at once against the other CPU's 1024.
        assert_eq!(calc_group_shares(shares, 1024, 0, 1024, 0), shares / 2);
        // Emptied and decayed: the floor.
        assert_eq!(calc_group_shares(shares, 0, 0, 1024, 0), MIN_SHARES);
        // Never above the shares, even with a stale, smaller group total.
        assert_eq!(calc_group_shares(shares, 2048, 0, 0, 0), shares);
    }

    // update_tg_cfs_util: the entity takes its runqueue's util and the
    // parent moves by the difference; a fall never takes the parent below 0.
    #[test]
    fn group_util_propagates_by_difference() {
        let mut parent = SchedAvg { util_avg: 300, util_sum: (300 * PELT_MIN_DIVIDER) as u32, ..SchedAvg::default() };
        let mut se = SchedAvg { util_avg: 100, util_sum: (100 * PELT_MIN_DIVIDER) as u32, ..SchedAvg::default() };
        let gcfs = SchedAvg { util_avg: 400, ..SchedAvg::default() };
        update_tg_cfs_util(&mut parent, &mut se, &gcfs, PeltDivider::PeriodContrib);
        assert_eq!((se.util_avg, parent.util_avg), (400, 600));
        assert_eq!(u64::from(se.util_sum), 400 * PELT_MIN_DIVIDER);
        let empty = SchedAvg::default();
        let mut small = SchedAvg { util_avg: 100, util_sum: (100 * PELT_MIN_DIVIDER) as u32, ..SchedAvg::default() };
        update_tg_cfs_util(&mut small, &mut se, &empty, PeltDivider::PeriodContrib);
        assert_eq!((se.util_avg, small.util_avg, small.util_sum), (0, 0, 0));
    }

    // update_tg_cfs_load: an attach adds the task's load sum to the entity's
    // runnable sum (capped at the divider); the entity's load is it times
    // se_weight, and the parent moves by the difference.
    #[test]
    fn group_load_propagates_an_attach() {
        let divider = PELT_MIN_DIVIDER;
        let mut parent = SchedAvg::default();
        let mut se = SchedAvg::default();
        let gcfs = SchedAvg::default();
        let mut prop = (divider / 2) as i64;
        update_tg_cfs_load(&mut parent, &mut se, &gcfs, 1024, 1024, &mut prop, PeltDivider::PeriodContrib);
        assert_eq!(prop, 0);
        assert_eq!(se.load_sum, divider / 2);
        assert_eq!(se.load_avg, 1024 * (divider / 2) / divider);
        assert_eq!(parent.load_avg, se.load_avg);
        // A second attach past the divider is capped there.
        let mut prop = divider as i64;
        update_tg_cfs_load(&mut parent, &mut se, &gcfs, 1024, 1024, &mut prop, PeltDivider::PeriodContrib);
        assert_eq!((se.load_sum, se.load_avg, parent.load_avg), (divider, 1024, 1024));
    }
}

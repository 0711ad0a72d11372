//! util_est by kernel era: a task's utilisation estimate, learnt at each
//! sleep from the `util_avg` it had then, and what the runqueue sums of it.
//!
//! The idea is the same in every form: at a dequeue for sleep the task's
//! `util_avg` (the "activation's" size) feeds an EWMA of weight 1/4, and the
//! estimate the scheduler and schedutil read is never below it. The forms
//! differ in what is stored and when it moves (kernel/sched/fair.c
//! `util_est_dequeue` / `util_est_update`, `_task_util_est`,
//! `cfs_se_util_change` in pelt.h):
//!
//! | form | first | commits | what changes |
//! |---|---|---|---|
//! | [`UtilEstForm::Off`] | — | — | no estimate (before v4.17) |
//! | [`UtilEstForm::Enqueued`] | 4.17 | 7f65ea42eb00, d519329f72a6 | `enqueued` (the last activation's util, bit 0 the UTIL_AVG_UNCHANGED flag) and `ewma`; the estimate is `max(ewma, enqueued)`; the EWMA moves a quarter of the gap up and down; a gap within the 1 % margin returns before anything is written, so `enqueued` keeps an older, possibly larger, value |
//! | [`UtilEstForm::CapacityCheck`] | 5.1 | 10a35e6812aa | also no update when `util_avg` exceeds the CPU's capacity (no idle time to trust the sample) |
//! | [`UtilEstForm::FastUp`] | 5.5 | b8c96361402a | UTIL_EST_FASTUP: a sample above the EWMA resets it to the sample |
//! | [`UtilEstForm::FilterBoth`] | 5.13 | b89997aa88f0, 68d7a190682a | the margin skips an update only when `enqueued` moved within it too (else `enqueued` alone is written); the flag moves to bit 31, out of the value |
//! | [`UtilEstForm::Single`] | 6.8 | 50181c0cff31, 7736ae5572eb, 11137d384996 | one value (the EWMA, flag in bit 31); a task that waited (`util_avg` + margin below `runnable_avg`) keeps its estimate; the v6.8 functions in `pelt.rs` |
//!
//! govlab keeps the UTIL_AVG_UNCHANGED flag in bit 31 of
//! [`SchedAvg::util_est`] in every form (the PELT update clears it there,
//! [`super::pelt::cfs_se_util_change`]), the EWMA in its low bits and
//! `enqueued` in [`SchedAvg::util_est_enqueued`]. Before v5.13 the kernel's
//! flag is bit 0 of `enqueued` itself, set whenever it is written and
//! cleared by the PELT update, so that bit is the flag: the older forms
//! read `enqueued` as `(stored & !1) | flag`, and their estimate carries the
//! bit (`_task_util_est` returns `max(ewma, enqueued) | 1`), as the kernel's
//! runqueue sum does.
//!
//! The three supported versions that show it: 4.19 and 5.2 (no fast
//! ramp-up: a task that grows is followed by `enqueued` alone, its EWMA a
//! quarter of the way per activation), 5.7 and 5.9 (fast ramp-up, the stale
//! `enqueued` of the margin), 6.5 and 6.6 (two fields, no runnable check),
//! 6.8 on (one field).

use super::pelt::{
    task_util_est_raw, util_est_update, CfsRqAvg, SchedAvg, UTIL_AVG_UNCHANGED, UTIL_EST_MARGIN, UTIL_EST_WEIGHT_SHIFT,
};
use crate::kernel::{EraId, KernelConfig};

/// Bit 0 of `enqueued`: the kernel's UTIL_AVG_UNCHANGED before v5.13.
const UNCHANGED_LSB: u32 = 0x1;

/// Which form of util_est a kernel runs (the table above).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum UtilEstForm {
    /// Before v4.17: no estimate.
    Off,
    /// v4.17 (7f65ea42eb00 "sched/fair: Add util_est on top of PELT", with
    /// d519329f72a6 "sched/fair: Update util_est only on util_avg updates").
    Enqueued,
    /// v5.1 (10a35e6812aa "sched/pelt: Skip updating util_est when
    /// utilization is higher than CPU's capacity").
    CapacityCheck,
    /// v5.5 (b8c96361402a "sched/fair/util_est: Implement faster ramp-up
    /// EWMA on utilization increases").
    FastUp,
    /// v5.13 (b89997aa88f0 "sched/pelt: Fix task util_est update
    /// filtering", 68d7a190682a "sched/fair: Fix util_est
    /// UTIL_AVG_UNCHANGED handling").
    FilterBoth,
    /// v6.8 (11137d384996 "sched/fair: Simplify util_est", with
    /// 50181c0cff31 and 7736ae5572eb).
    #[default]
    Single,
}

/// `within_margin` (fair.c before v6.8): |value| < margin.
#[inline]
fn within_margin(value: u32, margin: u32) -> bool {
    // ((unsigned int)(value + margin - 1) < (2 * margin - 1)), on a value
    // already wrapped to 32 bits as the kernel's unsigned differences are.
    value.wrapping_add(margin - 1) < 2 * margin - 1
}

impl UtilEstForm {
    /// The form `kernel` runs: none before v4.17, then v4.17's, v5.1's,
    /// v5.5's, v5.13's and v6.8's.
    #[must_use]
    pub fn of(kernel: &KernelConfig) -> UtilEstForm {
        [
            (EraId::UtilEstSingle, UtilEstForm::Single),
            (EraId::UtilEstFilterBoth, UtilEstForm::FilterBoth),
            (EraId::UtilEstFastUp, UtilEstForm::FastUp),
            (EraId::UtilEstCapacityCheck, UtilEstForm::CapacityCheck),
            (EraId::UtilEst, UtilEstForm::Enqueued),
        ]
        .into_iter()
        .find(|&(era, _)| kernel.has(era))
        .map_or(UtilEstForm::Off, |(_, form)| form)
    }

    /// Whether tasks carry an estimate at all.
    #[inline]
    #[must_use]
    pub fn on(self) -> bool {
        self != UtilEstForm::Off
    }

    /// `enqueued` as the kernel holds it in the forms before v5.13 (flag in
    /// bit 0).
    #[inline]
    fn enqueued_lsb(task: &SchedAvg) -> u32 {
        let flag = if task.util_est & UTIL_AVG_UNCHANGED != 0 { UNCHANGED_LSB } else { 0 };
        (task.util_est_enqueued & !UNCHANGED_LSB) | flag
    }

    /// `_task_util_est`: what the task adds to its runqueue's sum.
    #[inline]
    #[must_use]
    pub fn task_est(self, task: &SchedAvg) -> u32 {
        let ewma = task_util_est_raw(task);
        match self {
            UtilEstForm::Off => 0,
            UtilEstForm::Enqueued | UtilEstForm::CapacityCheck | UtilEstForm::FastUp => {
                ewma.max(Self::enqueued_lsb(task)) | UNCHANGED_LSB
            }
            UtilEstForm::FilterBoth => ewma.max(task.util_est_enqueued),
            UtilEstForm::Single => ewma,
        }
    }

    /// `task_util_est`: the larger of the task's `util_avg` and its
    /// estimate (placement's and fitting's view of the task).
    #[inline]
    #[must_use]
    pub fn task_util_est(self, task: &SchedAvg) -> u64 {
        task.util_avg.max(u64::from(self.task_est(task)))
    }

    /// `util_est_enqueue`: the task's estimate joins the runqueue's sum.
    #[inline]
    pub fn enqueue(self, cfs: &mut CfsRqAvg, task: &SchedAvg) {
        cfs.util_est = cfs.util_est.wrapping_add(self.task_est(task));
    }

    /// `util_est_dequeue` (the runqueue half): the estimate leaves the sum,
    /// which stops at 0.
    #[inline]
    pub fn dequeue(self, cfs: &mut CfsRqAvg, task: &SchedAvg) {
        let est = self.task_est(task);
        cfs.util_est -= cfs.util_est.min(est);
    }

    /// The task half, at the end of a dequeue for sleep (`util_est_update`;
    /// in the older kernels the tail of `util_est_dequeue`).
    /// `cpu_capacity` is `arch_scale_cpu_capacity` (`capacity_orig_of`).
    #[inline]
    pub fn update(self, task: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64) {
        match self {
            UtilEstForm::Off => {}
            UtilEstForm::Single => util_est_update(task, task_sleep, cpu_capacity),
            UtilEstForm::FilterBoth => update_filter_both(task, task_sleep, cpu_capacity),
            UtilEstForm::Enqueued | UtilEstForm::CapacityCheck | UtilEstForm::FastUp => {
                update_lsb(self, task, task_sleep, cpu_capacity);
            }
        }
    }
}

/// v4.17–v5.12: `ue.enqueued = task_util | UTIL_AVG_UNCHANGED`; from v5.5 a
/// sample above the EWMA resets it; a gap within the margin returns
/// without a write; from v5.1 so does a sample above the capacity;
/// otherwise the EWMA moves a quarter of the gap and both are written.
fn update_lsb(form: UtilEstForm, task: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64) {
    if !task_sleep || task.util_est & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let mut ewma = task_util_est_raw(task);
    // util_avg of a task never exceeds 1024; the kernel keeps it in 32 bits.
    let util = task.util_avg as u32;
    let enqueued = util | UNCHANGED_LSB;
    if form >= UtilEstForm::FastUp && ewma < enqueued {
        store(task, enqueued, enqueued);
        return;
    }
    // Unsigned 32-bit differences, as the kernel's `unsigned int` fields.
    let last_ewma_diff = enqueued.wrapping_sub(ewma);
    if within_margin(last_ewma_diff, UTIL_EST_MARGIN) {
        return;
    }
    if form >= UtilEstForm::CapacityCheck && u64::from(util) > cpu_capacity {
        return;
    }
    ewma <<= UTIL_EST_WEIGHT_SHIFT;
    ewma = ewma.wrapping_add(last_ewma_diff);
    ewma >>= UTIL_EST_WEIGHT_SHIFT;
    store(task, ewma, enqueued);
}

/// v5.13–v6.7: the margin skips the write only when `enqueued` stayed
/// within it too; `enqueued` is written whenever anything is.
fn update_filter_both(task: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64) {
    if !task_sleep || task.util_est & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let mut ewma = task_util_est_raw(task);
    let last_enqueued = task.util_est_enqueued;
    let enqueued = task.util_avg as u32;
    if ewma < enqueued {
        store(task, enqueued, enqueued);
        return;
    }
    let last_ewma_diff = enqueued.wrapping_sub(ewma);
    let last_enqueued_diff = last_enqueued.wrapping_sub(enqueued);
    if within_margin(last_ewma_diff, UTIL_EST_MARGIN) {
        if !within_margin(last_enqueued_diff, UTIL_EST_MARGIN) {
            store(task, ewma, enqueued);
        }
        return;
    }
    if u64::from(enqueued) > cpu_capacity {
        return;
    }
    ewma <<= UTIL_EST_WEIGHT_SHIFT;
    ewma = ewma.wrapping_add(last_ewma_diff);
    ewma >>= UTIL_EST_WEIGHT_SHIFT;
    store(task, ewma, enqueued);
}

/// `WRITE_ONCE(p->se.avg.util_est, ue)` with the flag set.
#[inline]
fn store(task: &mut SchedAvg, ewma: u32, enqueued: u32) {
    task.util_est = ewma | UTIL_AVG_UNCHANGED;
    task.util_est_enqueued = enqueued;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each supported version runs the util_est form of its era.
    #[test]
    fn the_form_follows_the_version() {
        let form = |v: &str| {
            let spec = crate::params::Spec::parse(v, "kernel").unwrap();
            UtilEstForm::of(&KernelConfig::from_spec(&spec).unwrap())
        };
        assert_eq!(form("4.16"), UtilEstForm::Off);
        assert_eq!(form("4.19"), UtilEstForm::Enqueued);
        assert_eq!(form("5.2"), UtilEstForm::CapacityCheck);
        assert_eq!(form("5.7"), UtilEstForm::FastUp);
        assert_eq!(form("5.9"), UtilEstForm::FastUp);
        assert_eq!(form("6.5"), UtilEstForm::FilterBoth);
        assert_eq!(form("6.6"), UtilEstForm::FilterBoth);
        assert_eq!(form("6.8"), UtilEstForm::Single);
        assert_eq!(form("6.18"), UtilEstForm::Single);
    }

    /// A task that slept after its `util_avg` was refreshed.
    fn sample(util_avg: u64, ewma: u32, enqueued: u32) -> SchedAvg {
        SchedAvg { util_avg, util_est: ewma, util_est_enqueued: enqueued, ..SchedAvg::default() }
    }

    /// The four forms on one history: a task at 100 that grows to 500 for
    /// one activation and shrinks back to 100.
    #[test]
    fn each_form_follows_a_growth_and_a_fall_its_own_way() {
        let run = |form: UtilEstForm| {
            let mut task = sample(100, 100, 100);
            let mut seen = Vec::new();
            for util in [500, 100, 100] {
                task.util_avg = util;
                task.util_est &= !UTIL_AVG_UNCHANGED;
                form.update(&mut task, true, 1024);
                seen.push((task_util_est_raw(&task), form.task_est(&task)));
            }
            seen
        };
        // v4.17: the EWMA climbs a quarter of the way (200); `enqueued`
        // carries the estimate up at once and back down at the next sleep.
        assert_eq!(run(UtilEstForm::Enqueued), vec![(200, 501), (175, 175), (156, 157)]);
        // v5.5: the EWMA jumps to the sample and decays by a quarter.
        assert_eq!(run(UtilEstForm::FastUp), vec![(501, 501), (401, 401), (326, 327)]);
        // v5.13: the same without the flag bit in the value.
        assert_eq!(run(UtilEstForm::FilterBoth), vec![(500, 500), (400, 400), (325, 325)]);
        // v6.8: one field, the same numbers.
        assert_eq!(run(UtilEstForm::Single), vec![(500, 500), (400, 400), (325, 325)]);
    }

    /// Before v5.13 a sample within the margin of the EWMA writes nothing,
    /// so an `enqueued` left high by an earlier activation stays in the
    /// estimate; v5.13 writes the new `enqueued`.
    #[test]
    fn the_margin_left_enqueued_stale_until_5_13() {
        // EWMA 300 after a decay; the last activation's util was 900.
        let stale = |form: UtilEstForm, enqueued: u32| {
            let mut task = sample(295, 300, enqueued);
            form.update(&mut task, true, 1024);
            form.task_est(&task)
        };
        assert_eq!(stale(UtilEstForm::FastUp, 900), 901);
        assert_eq!(stale(UtilEstForm::FilterBoth, 900), 300);
    }

    /// From v5.1 a sample above the CPU's capacity teaches nothing.
    #[test]
    fn a_saturated_sample_is_skipped_from_5_1() {
        let after = |form: UtilEstForm| {
            let mut task = sample(500, 800, 800);
            form.update(&mut task, true, 446);
            task_util_est_raw(&task)
        };
        assert_eq!(after(UtilEstForm::Enqueued), 725);
        assert_eq!(after(UtilEstForm::CapacityCheck), 800);
    }

    /// The flag: a sleep with no PELT update since the last one leaves the
    /// estimate alone in every form.
    #[test]
    fn no_update_without_a_fresh_util_avg() {
        for form in [UtilEstForm::Enqueued, UtilEstForm::FastUp, UtilEstForm::FilterBoth, UtilEstForm::Single] {
            let mut task = sample(600, 100 | UTIL_AVG_UNCHANGED, 101);
            form.update(&mut task, true, 1024);
            assert_eq!(task_util_est_raw(&task), 100, "{form:?}");
            form.update(&mut task, false, 1024);
            assert_eq!(task_util_est_raw(&task), 100, "{form:?}");
        }
    }
}

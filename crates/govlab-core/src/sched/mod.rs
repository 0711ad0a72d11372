//! The scheduler's arithmetic and parameters: its tunables, task states,
//! PELT, cpumasks, capacity fitting and the runqueue's ordered sets. The
//! scheduler acting on the engine's runqueues (enqueue, dequeue, schedule,
//! the tick, placement, balancing, the idle loop) is in `machine/`.
//!
//! From v6.6 the fair class is EEVDF (machine/eevdf.rs: lag, eligibility,
//! virtual deadlines from base_slice). Before it, as below, CFS (v6.5 and
//! earlier, kernel/sched/fair.c): each runqueue orders its runnable tasks by virtual
//! runtime; the running task is preempted at the tick when it has used its
//! slice of the scheduling period (`sched_latency`, stretched to
//! `nr_running × min_granularity` when crowded) and at wakeup when the woken
//! task's vruntime is more than `wakeup_granularity` behind. A waking task's
//! vruntime is placed no further back than half a latency period behind the
//! runqueue's min_vruntime (GENTLE_FAIR_SLEEPERS); a new task starts its
//! slice, in virtual time, ahead (START_DEBIT). The three tunables scale with
//! 1 + log2(min(CPUs, 8)) as the kernel's default SCHED_TUNABLESCALING_LOG
//! does. The RT and deadline classes (`rt.rs`, `deadline.rs` here for their
//! arithmetic; `machine/rt.rs`, `machine/deadline.rs` for the classes) and
//! task groups (`machine/fair_group.rs`: group runqueues, hierarchical PELT,
//! `calc_group_shares` as in v6.8; group entities with their own vruntime,
//! picked level by level as in v6.5, nested groups) follow the kernel. Left
//! out: CFS bandwidth, NUMA balancing. Energy-Aware Scheduling is
//! `machine/eas.rs` over the Energy Model of `energy_model.rs`.
//!
//! Files: `mod.rs` (tunables, task states), `pelt.rs` (the PELT
//! arithmetic), `util_est.rs` (util_est by kernel era), `rt.rs` (RT priorities and the throttle's arithmetic),
//! `deadline.rs` (bandwidths, admission, `cpu_bw_dl`), `capacity.rs` (capacity fitting on big.LITTLE), `energy_model.rs` (the EM),
//! `cpumask.rs`, `sorted_set.rs` (the runqueue's ordered sets). In
//! `machine/`: `rq.rs` (tasks and runqueues), `fair.rs` (enqueue/dequeue,
//! schedule, the tick), `placement.rs` (select_task_rq, balancing),
//! `capacity.rs` (capacity-aware wakeup and misfit balancing), `idle.rs`
//! (the idle loop and cpuidle accounting).

pub mod capacity;
pub mod energy_model;
pub mod cpumask;
pub mod deadline;
pub mod fork;
pub mod pelt;
pub mod rt;
pub mod sorted_set;
pub mod util_est;

/// Default sysctl_sched_latency before scaling (fair.c, v6.5).
pub const SCHED_LATENCY_NS: u64 = 6_000_000;
/// Default sysctl_sched_min_granularity before scaling (fair.c, v6.5).
pub const SCHED_MIN_GRANULARITY_NS: u64 = 750_000;
/// Default sysctl_sched_wakeup_granularity before scaling (fair.c, v6.5).
pub const SCHED_WAKEUP_GRANULARITY_NS: u64 = 1_000_000;

/// The load weight of each nice level from -20 to 19 (sched_prio_to_weight,
/// kernel/sched/core.c): 1024 at nice 0, about 1.25 times per step, each
/// value rounded as the kernel's table has it (nice 1 is 820, not 819).
const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991,
    1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// DEFAULT_PRIO (include/linux/sched/prio.h, v6.8): the `prio` of a nice-0
/// fair task; nice n is DEFAULT_PRIO + n (`NICE_TO_PRIO`).
pub const DEFAULT_PRIO: i32 = 120;

/// The load weight of a SCHED_IDLE task, WEIGHT_IDLEPRIO (kernel/sched/sched.h,
/// v6.8; set_load_weight() in kernel/sched/core.c), below nice 19's 15.
pub const WEIGHT_IDLEPRIO: u64 = 3;

/// The load weight of `nice` (-20..=19; the workload parsers refuse others).
#[must_use]
pub fn nice_to_weight(nice: i32) -> u64 {
    SCHED_PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// Index into the engine's task table.
pub type TaskId = usize;

/// Scheduler tunables, already scaled for the machine.
#[derive(Debug, Clone, Copy)]
pub struct SchedTunables {
    pub sched_latency_ns: u64,
    pub min_granularity_ns: u64,
    pub wakeup_granularity_ns: u64,
    /// sched_nr_latency: tasks beyond which the period stretches.
    pub nr_latency: u64,
    pub tick_ns: u64,
    /// Interval of the periodic balancer on a busy CPU (assumed: the kernel's
    /// MC-domain balance interval starts at the domain weight in ms; one tick
    /// per pass keeps the model simple).
    pub balance_interval_ns: u64,
    /// PM QoS CPU latency limit (no limit by default).
    pub latency_req_ns: u64,
    /// sched_slice() never below `min_granularity_ns` (BASE_SLICE, v5.13+).
    pub base_slice: bool,
}

impl SchedTunables {
    pub fn for_cpus(nr_cpus: usize, tick_ns: u64) -> Self {
        // get_update_sysctl_factor(): 1 + ilog2(min(ncpus, 8)).
        let factor = 1 + u64::from((nr_cpus.clamp(1, 8) as u32).ilog2());
        let lat = SCHED_LATENCY_NS * factor;
        let min = SCHED_MIN_GRANULARITY_NS * factor;
        SchedTunables {
            sched_latency_ns: lat,
            min_granularity_ns: min,
            wakeup_granularity_ns: SCHED_WAKEUP_GRANULARITY_NS * factor,
            nr_latency: lat.div_ceil(min),
            tick_ns,
            balance_interval_ns: tick_ns,
            latency_req_ns: u64::MAX,
            base_slice: true,
        }
    }
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// On a runqueue, waiting for the CPU.
    Runnable,
    /// On a CPU.
    Running,
    /// Off the runqueue: sleeping, waiting for IO, a message, a lock or children.
    Blocked,
    /// Not yet started.
    New,
    Dead,
}

#[cfg(test)]
mod tests {
    use super::nice_to_weight;

    #[test]
    fn nice_weights_are_the_kernels_table_not_a_power_of_1_25() {
        // 1024 / 1.25^nice rounds to 819, 336 and 88818 where the table has
        // 820, 335 and 88761.
        assert_eq!(nice_to_weight(0), 1024);
        assert_eq!(nice_to_weight(1), 820);
        assert_eq!(nice_to_weight(5), 335);
        assert_eq!(nice_to_weight(-20), 88761);
        assert_eq!(nice_to_weight(19), 15);
    }
}

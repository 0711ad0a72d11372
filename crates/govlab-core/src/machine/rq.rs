//! The scheduler's per-task and per-CPU state as the engine keeps it: the
//! task (include/linux/sched.h, struct task_struct and struct sched_entity)
//! and the runqueue (kernel/sched/sched.h, struct rq and struct cfs_rq),
//! Linux v6.5, with the RT and deadline entities and runqueues (struct
//! sched_rt_entity, sched_dl_entity, rt_rq, dl_rq, v6.8) and the idle and
//! tick state of the CPU beside it.

use std::rc::Rc;
use std::sync::Arc;

use crate::platform::CpuId;
use crate::sched::cpumask::CpuMask;
use crate::sched::pelt::{CfsRqAvg, RqClockPelt, SchedAvg};
use crate::sched::rt::{Class, RtKey};
use crate::sched::sorted_set::SortedSet;
use crate::sched::{TaskId, TaskState};
use crate::sim::rng::Rng;
use crate::sim::Time;
use crate::workload::Program;

/// A simulated task (a thread).
#[derive(Debug, Clone)]
pub struct Task {
    pub pid: u32,
    pub comm: Arc<str>,
    pub state: TaskState,
    /// CPU it runs or last ran on (task_cpu).
    pub cpu: CpuId,
    pub affinity: Option<CpuMask>,
    /// A kworker of a per-CPU workqueue (`workload::Workqueue`, bound in
    /// this run's kernel): each wakeup runs it on the waking CPU, pinned
    /// there until it sleeps (placement.rs `ttwu`).
    pub bound_work: bool,
    /// The load weight the fair class uses (se->load): the nice level's
    /// weight (a task group's share is its entity's, fair_group.rs).
    pub weight: u64,
    /// The nice level's weight (sched_prio_to_weight), or SCHED_IDLE's.
    pub nice_weight: u64,
    /// The nice level, -20..=19 (static_prio − DEFAULT_PRIO).
    pub nice: i32,
    /// SCHED_IDLE (task_has_idle_policy()).
    pub idle_policy: bool,
    /// Scheduling class (rt.rs, deadline.rs) and its parameters.
    pub class: Class,
    pub rt: RtEntity,
    pub dl: DlEntity,
    /// Effective utilisation clamps (uclamp_eff_value), 0..=1024.
    pub uclamp_min: u32,
    pub uclamp_max: u32,
    /// CFS task group (index into the engine's groups); None: the root.
    pub group: Option<u32>,

    // Program state. An `Rc`, cloned by the interpreter for every run of
    // ops: a clone without the atomic read-modify-writes of an `Arc`'s.
    pub program: Rc<Program>,
    pub pc: usize,
    /// Remaining iterations of the loops being executed, innermost last.
    /// Open loops: the `Loop` op's index, the iterations left (None:
    /// forever) and the iterations done.
    pub loops: Vec<(usize, Option<u64>, u64)>,
    /// Cycles left in the current `run` op, and its memory-bound share.
    pub remaining_cycles: f64,
    pub mem: f64,
    /// Of `remaining_cycles`, the kernel's (machine/kpath.rs), done first.
    pub kpath_cycles: f64,
    pub rng: Rng,

    // Times.
    pub start_ns: Time,
    pub wake_ns: Time,
    pub mark_ns: Time,
    pub request_ns: Time,
    /// A wakeup whose latency is recorded when the task next runs.
    pub wake_pending: bool,
    pub timer_gen: u32,
    /// CPU whose timer wheel holds the task's pending timer.
    pub timer_cpu: CpuId,
    pub timer_expiry_ns: Time,

    // CFS.
    pub vruntime: u64,
    pub sum_exec_ns: u64,
    pub prev_sum_exec_ns: u64,
    pub exec_start_ns: Time,
    /// EEVDF (v6.6+, machine/eevdf.rs): the virtual deadline of the current
    /// request (se->deadline), and the lag kept while off the runqueue
    /// (se->vlag; while running, the deadline it was picked with).
    pub deadline: u64,
    pub vlag: i64,
    /// The slice the task asked for (sched_attr.sched_runtime, clamped;
    /// 0: none, base_slice), read from v6.12 (EEVDF's custom slice).
    pub custom_slice_ns: u64,
    /// Asleep but still queued (se->sched_delayed, v6.12 DELAY_DEQUEUE):
    /// it stays in the tree and counted until picked or woken.
    pub sched_delayed: bool,

    // PELT.
    pub avg: SchedAvg,
    /// The task's PELT state must be attached on its next enqueue
    /// (it is new or it migrated).
    pub needs_attach: bool,
    /// Born by fork: gets `post_init_entity_util_avg` at its first enqueue.
    pub forked: bool,
    /// Where a replayed task the recording found already there starts
    /// ([`crate::workload::TaskSpec::start_cpu`]); taken at its first
    /// enqueue, or when the run begins for one asleep until its start.
    pub start_cpu: Option<CpuId>,
    pub in_iowait: bool,

    // Family.
    pub parent: Option<TaskId>,
    pub live_children: u32,
    pub joining: bool,
    /// Bumped each time the interpreter starts on this task, so an outer
    /// interpretation can tell that a nested one took over.
    pub interp_epoch: u32,
    /// Its record of the tasks it woke, for wake_wide() (placement.rs).
    pub wakee: Wakee,
    /// p->recent_used_cpu (v4.16, placement.rs `select_idle_sibling`): a
    /// CPU it recently used, tried when its target and previous CPU are
    /// busy.
    pub recent_used_cpu: CpuId,
}

impl Task {
    /// The kernel's `p->prio`, which sched tracepoints print: `normal_prio`
    /// (kernel/sched/core.c `__normal_prio`, v6.8; priority inheritance is
    /// not modelled): −1 (MAX_DL_PRIO − 1) for SCHED_DEADLINE, the RT prio
    /// 0..=98 for SCHED_FIFO/RR, otherwise `NICE_TO_PRIO(nice)`, 120 + nice
    /// (include/linux/sched/prio.h), SCHED_IDLE included.
    #[must_use]
    pub fn prio(&self) -> i32 {
        match self.class {
            Class::Deadline => -1,
            Class::Rt => self.rt.prio as i32,
            Class::Fair => crate::sched::DEFAULT_PRIO + self.nice,
        }
    }
}

/// What a waker remembers of its wakees (struct task_struct's
/// `wakee_flips`, `wakee_flip_decay_ts`, `last_wakee`; v4.2 63b0e9edceec).
#[derive(Debug, Clone, Copy, Default)]
pub struct Wakee {
    /// Times the waker switched to waking a different task, halved at most
    /// once a second.
    pub flips: u32,
    /// When `flips` was last halved.
    pub decay_ns: Time,
    pub last: Option<TaskId>,
}

/// The RT part of a task (struct sched_rt_entity, v6.8).
#[derive(Debug, Clone, Copy, Default)]
pub struct RtEntity {
    /// The kernel's prio, 0..=98 (lower runs first).
    pub prio: u32,
    /// SCHED_RR (else SCHED_FIFO).
    pub rr: bool,
    /// RR time slice left, ns.
    pub time_slice_ns: u64,
    /// The task's key in its runqueue's RT queue while queued.
    pub key: RtKey,
}

/// The deadline part of a task (struct sched_dl_entity, v6.8).
#[derive(Debug, Clone, Copy, Default)]
pub struct DlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    /// dl_runtime / dl_period, BW_SHIFT fixed point.
    pub dl_bw: u64,
    /// Remaining runtime and absolute deadline of the current instance.
    pub runtime: i64,
    pub deadline: Time,
    /// Out of runtime until the replenishment timer fires.
    pub throttled: bool,
    /// Counts the bandwidth in its runqueue's running_bw.
    pub contending: bool,
    /// The pending DlTimer is the inactive (0-lag) timer, not the
    /// replenishment timer.
    pub inactive_timer: bool,
    pub timer_gen: u32,
}

/// What a CPU is doing, as far as power and idle accounting care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuMode {
    /// In C0 (running a task, or in the scheduler about to).
    Active,
    /// In idle state `state` since `entry_ns`.
    Idle { state: usize, entry_ns: Time },
    /// Leaving idle state `state`; back in C0 at `until_ns`.
    Exiting { state: usize, entry_ns: Time, until_ns: Time, got_tick: bool, poll_limit: bool },
}

/// A CPU's runqueue and its idle/tick state.
#[derive(Debug, Clone)]
pub struct CpuRq {
    pub curr: Option<TaskId>,
    /// Runnable tasks that are not running, by (vruntime, task).
    pub tree: SortedSet<(u64, TaskId)>,
    /// Runnable tasks of every class, including the running one
    /// (rq->nr_running).
    pub nr_running: u32,
    /// Runnable fair tasks, including a running one (cfs_rq->h_nr_running).
    pub cfs_nr_running: u32,
    /// The class of `curr` (Fair when idle).
    pub curr_class: Class,
    /// `curr` is a fair task (cfs_rq->curr is set).
    pub cfs_curr: bool,
    /// The RT runqueue (struct rt_rq): queued tasks by prio then arrival
    /// (the running one is taken out), its runnable count, the next head
    /// and tail arrival numbers, and the throttle's state: RT time used in
    /// this period, and the runtime this runqueue may use (`rt_runtime`:
    /// `sched_rt_runtime_us` unless RT_RUNTIME_SHARE moved some between
    /// CPUs).
    pub rt_queue: SortedSet<RtKey>,
    pub rt_nr_running: u32,
    pub rt_seq_head: i64,
    pub rt_seq_tail: i64,
    pub rt_time: u64,
    pub rt_runtime: u64,
    pub rt_throttled: bool,
    /// The deadline runqueue (struct dl_rq): queued, not throttled tasks by
    /// absolute deadline; runnable count; running_bw (BW_SHIFT).
    pub dl_queue: SortedSet<(Time, TaskId)>,
    pub dl_nr_running: u32,
    pub running_bw: u64,
    /// rq->avg_rt and rq->avg_dl (PELT of the time RT and DL tasks ran).
    pub avg_rt: SchedAvg,
    pub avg_dl: SchedAvg,
    pub load_weight: u64,
    pub min_vruntime: u64,
    /// Σ vruntime × weight and Σ weight of the fair tasks in `tree`
    /// (EEVDF's avg_vruntime and avg_load, kept absolute: machine/eevdf.rs).
    pub avg_vsum: i128,
    /// Tasks in `tree` that are asleep with their dequeue delayed
    /// (v6.12 DELAY_DEQUEUE; counted in `nr_running` and `cfs_nr_running`).
    pub nr_delayed: u32,
    pub avg_load: u64,
    /// A reschedule is pending (resched_curr from EEVDF's update_deadline).
    pub resched: bool,
    pub cfs: CfsRqAvg,
    pub clock: RqClockPelt,

    /// The running task's current segment: generation of its RunDone event,
    /// start time and speed (cycles per ns).
    pub run_gen: u32,
    pub seg_start_ns: Time,
    pub seg_speed: f64,
    pub seg_active: bool,
    /// `cpu_speed`'s last clock (kHz; `u64::MAX`: none yet), memory-bound
    /// share (its bits), the speed they give before SMT sharing, and that
    /// speed times the type's work per cycle (the speed with no sibling busy).
    pub speed_memo: (u64, u64, f64, f64),
    /// When the segment ends at the current speed, and when the queued
    /// completion event for `run_gen` fires (no later than that).
    pub seg_done_ns: Time,
    pub run_event_ns: Time,
    /// Kernel cycles the running task owes before its next op
    /// (machine/kpath.rs).
    pub kpath_pending: f64,
    /// Of the idle exit under way, the kernel's code (machine/kpath.rs), ns.
    pub kpath_exit_ns: Time,
    /// The idle loop's entry in progress (machine/idle.rs `go_idle`): its
    /// IdleEntryDone event counts only with this generation.
    pub idle_entry_gen: u32,

    pub mode: CpuMode,
    /// The idle state is chosen in hindsight (the oracle) and not chosen
    /// yet: `mode`'s state is provisional until the idle period ends.
    pub hindsight: bool,
    pub idle_gen: u32,
    /// The queued poll time limit of this idle period, taken out of the
    /// queue when the CPU leaves idle first (most polls end that way).
    pub poll_limit: Option<crate::sim::queue::Ticket>,
    pub tick_gen: u32,
    pub tick_armed: bool,
    /// Boundary of the tick event queued for `tick_gen` (0: none).
    pub tick_queued_ns: Time,
    pub tick_stopped: bool,
    /// Pending timers on this CPU: (expiry, task).
    pub timers: SortedSet<(Time, TaskId)>,
    pub nr_iowait: u32,
    pub last_balance_ns: Time,
    /// The periodic balance's state of this CPU's domains, lowest first
    /// (machine/placement.rs `rebalance_domains`): sd->last_balance in
    /// jiffies and
    /// sd->balance_interval in ms (0: not yet set, the domain's
    /// min_interval).
    pub sd_last_balance_j: [u64; 3],
    pub sd_balance_interval_ms: [u64; 3],
    /// rq->next_balance in jiffies: when a walk is next due (set by the
    /// last walk and lowered by newidle balance; jiffies at boot).
    pub next_balance_j: u64,
    /// Idle entries that stopped the tick or asked to (tick_nohz's
    /// idle_calls; machine/rcu.rs keeps a tick that was asked to stop).
    pub idle_calls: u64,
    /// RCU callbacks queued on this CPU until then (machine/rcu.rs).
    pub rcu_cbs_until_ns: Time,
    /// rq->has_blocked_load: signals left to decay while idle (v4.17+).
    pub has_blocked_load: bool,
    /// The idle task's [`Wakee`] record: `current` for wakeups from
    /// interrupts that find the CPU idle.
    pub idle_wakee: Wakee,
    /// rq->idle_stamp (set at a newidle that pulled nothing) and
    /// rq->avg_idle (machine/placement.rs).
    pub idle_stamp: Option<Time>,
    pub avg_idle_ns: u64,

    // Accounting.
    pub idle_ns: u64,
    pub iowait_idle_ns: u64,
    /// Time a task was current on this CPU, and since when the current one is.
    pub busy_ns: u64,
    pub busy_since_ns: Time,

    // The CPU's capacity, cached for the hot paths.
    pub capacity: u64,
}

impl Default for CpuRq {
    fn default() -> Self {
        CpuRq {
            curr: None,
            tree: SortedSet::new(),
            nr_running: 0,
            cfs_nr_running: 0,
            curr_class: Class::Fair,
            cfs_curr: false,
            rt_queue: SortedSet::new(),
            rt_nr_running: 0,
            rt_seq_head: -1,
            rt_seq_tail: 0,
            rt_time: 0,
            rt_runtime: crate::sched::rt::RT_RUNTIME_NS,
            rt_throttled: false,
            dl_queue: SortedSet::new(),
            dl_nr_running: 0,
            running_bw: 0,
            avg_rt: SchedAvg::default(),
            avg_dl: SchedAvg::default(),
            load_weight: 0,
            min_vruntime: 0,
            avg_vsum: 0,
            nr_delayed: 0,
            avg_load: 0,
            resched: false,
            cfs: CfsRqAvg::default(),
            clock: RqClockPelt::default(),
            run_gen: 0,
            seg_start_ns: 0,
            seg_speed: 0.0,
            seg_active: false,
            speed_memo: (u64::MAX, 0, 0.0, 0.0),
            seg_done_ns: 0,
            run_event_ns: Time::MAX,
            kpath_pending: 0.0,
            kpath_exit_ns: 0,
            idle_entry_gen: 0,
            mode: CpuMode::Active,
            hindsight: false,
            idle_gen: 0,
            poll_limit: None,
            tick_gen: 0,
            tick_armed: false,
            tick_queued_ns: 0,
            tick_stopped: false,
            timers: SortedSet::new(),
            nr_iowait: 0,
            last_balance_ns: 0,
            sd_last_balance_j: [0; 3],
            sd_balance_interval_ms: [0; 3],
            next_balance_j: 0,
            idle_calls: 0,
            rcu_cbs_until_ns: 0,
            has_blocked_load: false,
            idle_wakee: Wakee::default(),
            idle_stamp: None,
            // sched_init(): 2 × sysctl_sched_migration_cost.
            avg_idle_ns: 1_000_000,
            idle_ns: 0,
            iowait_idle_ns: 0,
            busy_ns: 0,
            busy_since_ns: 0,
            capacity: 1024,
        }
    }
}

impl CpuRq {
    /// A fair task is current (cfs_rq->curr is set).
    #[inline]
    pub fn cfs_running(&self) -> bool {
        self.cfs_curr
    }

    /// The idle state the CPU sits in, None while in C0 (or leaving idle).
    #[inline]
    pub fn idle_state(&self) -> Option<usize> {
        match self.mode {
            CpuMode::Idle { state, .. } => Some(state),
            _ => None,
        }
    }

    /// Cumulative idle time up to `now`, the open idle period included.
    pub fn idle_time_until(&self, now: Time) -> u64 {
        match self.mode {
            CpuMode::Idle { entry_ns, .. } | CpuMode::Exiting { entry_ns, .. } => {
                self.idle_ns + now.saturating_sub(entry_ns)
            }
            CpuMode::Active => self.idle_ns,
        }
    }

    /// Cumulative idle-with-iowait time up to `now`.
    pub fn iowait_time_until(&self, now: Time) -> u64 {
        match self.mode {
            CpuMode::Idle { entry_ns, .. } | CpuMode::Exiting { entry_ns, .. } if self.nr_iowait > 0 => {
                self.iowait_idle_ns + now.saturating_sub(entry_ns)
            }
            _ => self.iowait_idle_ns,
        }
    }
}

/// Flags for enqueue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnqueueKind {
    Wakeup,
    New,
    Migrate,
}

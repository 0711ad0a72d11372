//! A task's scheduling attributes as a workload asks for them: the policy
//! and its parameters, utilisation clamps and the task group, the fields of
//! include/uapi/linux/sched/types.h `struct sched_attr` (v6.8) that
//! sched_setattr() takes, plus the cgroup the task is put in. The engine
//! checks and applies them (machine/rt.rs, machine/deadline.rs).

/// The scheduling policy (include/uapi/linux/sched.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchedPolicy {
    /// SCHED_OTHER (SCHED_NORMAL): the fair class, with the task's nice.
    #[default]
    Other,
    /// SCHED_FIFO with `sched_priority` 1..=99.
    Fifo,
    /// SCHED_RR with `sched_priority` 1..=99.
    Rr,
    /// SCHED_DEADLINE with runtime ≤ deadline ≤ period.
    Deadline,
    /// SCHED_IDLE: the fair class at the lowest weight, WEIGHT_IDLEPRIO
    /// (kernel/sched/sched.h), whatever the nice value; any other fair task
    /// that wakes preempts it, and it preempts none (machine/fair.rs).
    Idle,
}

/// `struct sched_attr` as far as govlab models it, plus the task group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedAttr {
    pub policy: SchedPolicy,
    /// sched_priority of SCHED_FIFO/RR, 1..=99 (higher runs first).
    pub rt_priority: u32,
    /// SCHED_DEADLINE runtime, deadline and period, ns (deadline and period
    /// 0 mean "the runtime's deadline": period defaults to deadline and
    /// deadline to period, as sched_setattr does when sched_period is 0).
    /// On SCHED_OTHER/SCHED_IDLE the runtime is the task's slice request
    /// (EEVDF's custom slice, v6.12+; 0: none).
    pub dl_runtime_ns: u64,
    pub dl_deadline_ns: u64,
    pub dl_period_ns: u64,
    /// sched_util_min / sched_util_max (0..=1024), None: not set.
    pub util_min: Option<u32>,
    pub util_max: Option<u32>,
    /// Index of the task's CFS task group in [`super::Setup::groups`]; None
    /// is the root group.
    pub group: Option<u32>,
}

/// A CFS task group (a cgroup with the cpu controller): its `cpu.shares`
/// (cgroup v1; cgroup v2's `cpu.weight` w is shares 1024·w/100).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskGroupSpec {
    /// The cgroup path, e.g. "/tg1/tg11".
    pub path: String,
    /// tg->shares, scale_load_down'ed (1024 by default, ROOT_TASK_GROUP_LOAD).
    pub shares: u64,
}

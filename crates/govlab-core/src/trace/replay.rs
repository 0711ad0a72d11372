//! A workload rebuilt from a trace, to re-simulate a recording under other
//! governors or on another machine (`govlab trace replay`).
//!
//! Each task of the trace (every pid but the idle task's) becomes one task
//! of govlab's workload language whose program is what the trace shows it
//! did, in order:
//!
//! * a **burst** is the time from `sched_switch` in to the switch out that
//!   blocked it (a switch out with a runnable `prev_state` is a preemption:
//!   the burst goes on at the next switch in). It becomes `run_cycles`: the
//!   work done, each stretch of it at the frequency its CPU ran at then
//!   (`cpu_frequency`, or devlib's markers; before the first, a devlib
//!   marker's frequency if no `cpu_frequency` of that CPU preceded it
//!   (`clocks_at_start`), else the CPU type's base frequency on a known
//!   machine, else `unknown_khz`),
//!   so a replay at another frequency runs longer or shorter; on a known
//!   machine also scaled by the CPU's capacity and shared with busy SMT
//!   siblings, as the engine itself retires work;
//! * a **sleep** ends at the `sched_wakeup` that ended it. When a task
//!   woke it (the event was recorded in the context of a task, `common_pid`,
//!   that was running on that CPU), the sleep becomes a wait for that task:
//!   the waker's burst is cut where the wakeup happened and a message is
//!   sent there on a channel of the pair (waker, wakee), which the sleeper
//!   receives. So the sleep ends when the waker reaches that point of its
//!   own program in the re-simulation, earlier or later than recorded.
//!   Woken in interrupt context (the event's flags say hardirq, softirq or
//!   NMI: a timer or a device, whatever task it interrupted), from idle
//!   (`<idle>`, pid 0: an interrupt on an idle CPU, also when the trace has
//!   no flags), when the wakeup is not traced (the sleep then ends at the
//!   next switch in), or with [`Wakeups::Timed`], it is a timed sleep of
//!   the recorded length;
//! * the time before a task's first appearance is a sleep from the trace's
//!   start (in a free replay, a task not forked in the window sleeps it on
//!   the CPU it first runs on: a start delay, woken from there); a task
//!   running when the trace starts runs from the start; a
//!   `sched_process_exit` or a dead `prev_state` ends its program;
//! * a move by a `migration/N` stopper after which the task takes a new
//!   name, or a recorded `sched_process_exec`, is an execve() ([`Step::Exec`]):
//!   the free replay balances it as the simulated kernel's `sched_exec`;
//! * another move by a `migration/N` stopper that the task keeps to the end is an
//!   affinity set there ([`Step::Affine`], the rule at
//!   `keep_affinity_that_held`): the free replay sets it at that point;
//! * a per-CPU kernel thread (`kworker/N:M`, `migration/N`, `ksoftirqd/N`,
//!   ...: `bound_kthread_cpu`) keeps its CPU in the free replay too, as
//!   the kernel binds it there;
//! * each task runs in the scheduling class and at the priority it ran at
//!   for longest in the recording (`sched_switch`'s `prev_prio` /
//!   `next_prio`: a task boosted by priority inheritance shows the boosted
//!   one while it lasts): 0..=99 SCHED_FIFO, 100..=139 the fair class at
//!   that nice ([`class_of`]).
//!
//! With `pin`, each stretch of a task runs on the CPU it ran on in the
//! trace (for a replay on the machine that recorded it: placement then
//! follows the recording instead of being re-simulated). A task seen on
//! one CPU is pinned to it. A task seen on several is replayed as one task
//! per CPU, each pinned to its CPU, handing the program over where the
//! trace shows the task move ([`Step::OnCpu`]): the part on CPU A ends by
//! sending a message on the channel `cpu-PID-B`, and the part on CPU B
//! receives it before it goes on. A task allowed on all its CPUs at once
//! would be placed by the re-simulated scheduler, which (with misfit
//! migration) moves a busy task of a LITTLE CPU to a big one it only
//! visited in the recording.
//!
//! Left out: in a trace without irq-context flags (`trace-cmd report`
//! text without `-l`), an interrupt's wakeup while a task ran is taken for
//! that task's; whether a real-time task was SCHED_FIFO or SCHED_RR, and
//! priority changes during the recording (one class per task); the
//! memory-bound share of the work (all work scales with frequency).

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::platform::Platform;
use crate::sim::rng::Rng;
use crate::trace::{EventKind, Trace};
use crate::workload::{Better, ChannelSpec, Dist, Metric, Op, Program, Record, SchedAttr, SchedPolicy, Setup, TaskSpec, TimerRef, Workload};

/// What a wakeup by a task becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wakeups {
    /// A message from the waker: the sleeper follows it.
    #[default]
    Follow,
    /// A timed sleep of the recorded length, as a wakeup from idle.
    Timed,
}

/// One step of a task's replayed program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Work in cycles.
    Run(u64),
    /// A timed sleep, ns.
    Sleep(u64),
    /// Wake the task of this pid (the next `WokenBy` of it from this task).
    Wake(i32),
    /// Sleep until the task of this pid wakes this one.
    WokenBy(i32),
    /// The steps that follow ran on this CPU: recorded when the task is
    /// first switched in, and when it is switched in on another CPU than
    /// before, where it last stopped on the old one (after its last burst
    /// and wakeups there, before the sleep that followed), so the sleep and
    /// the wakeup that ends it happen on the new CPU, as in the kernel,
    /// which places a task when it wakes.
    OnCpu(usize),
    /// From here the task may run on this CPU only: the affinity the
    /// recording implies (see [`tasks`]), placed before the
    /// [`Step::OnCpu`] of the move that showed it.
    Affine(usize),
    /// An execve(): exec balancing (`sched_exec`) decides here whether the
    /// task moves (see [`tasks`]).
    Exec,
}

/// A task as the trace shows it.
#[derive(Debug, Clone)]
pub struct ReplayTask {
    pub pid: i32,
    pub comm: String,
    pub steps: Vec<Step>,
    /// The CPUs it ran on.
    pub cpus: std::collections::BTreeSet<usize>,
    /// Forked during the recording (its first event is `sched_wakeup_new`):
    /// replayed as a new process, with the kernel's initial PELT values.
    pub forked: bool,
    /// Its PELT `load` and `util` as the recording's load-tracking events
    /// (LISA's `sched_load_se`, `sched_pelt_se`) gave them before it first
    /// ran; None where the recording has none.
    pub recorded_pelt: Option<(u64, u64)>,
    /// The CPU a per-CPU kernel thread is bound to (`bound_kthread_cpu`).
    pub bound: Option<usize>,
    /// The kernel priority (`p->prio`, as `sched_switch` prints it) the
    /// task ran at for longest ([`Task::ran_at`]); None if it never ran.
    pub prio: Option<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Unseen,
    Running { cpu: usize, since_ns: u64 },
    Runnable,
    Blocked { since_ns: u64 },
    Dead,
}

struct Task {
    comm: String,
    steps: Vec<Step>,
    cpus: std::collections::BTreeSet<usize>,
    state: State,
    /// The CPU of the last [`Step::OnCpu`].
    cpu: Option<usize>,
    /// Work of the burst so far, cycles (f64: kHz × ns / 10⁶ sums exactly
    /// enough, rounded once per burst).
    cycles: f64,
    /// Its first event was `sched_wakeup_new`.
    forked: bool,
    /// The CPU and name it had when a `migration/N` stopper preempted it,
    /// until it next runs.
    stopped: Option<(usize, String)>,
    /// After a stopper move taken for an affinity: where its
    /// [`Step::Affine`] is and the name the task had, until it blocks; a
    /// new name by then makes the move an exec's.
    moved: Option<(usize, String)>,
    /// Where the steps of the burst it runs now begin.
    burst_at: usize,
    /// Time run at each priority (the `next_prio` of its switch in), ns.
    ran_at: BTreeMap<i32, u64>,
    /// When it last began to run, while it runs.
    run_since: Option<u64>,
    /// The priority its last switch in showed.
    prio_now: Option<i32>,
}

impl Task {
    fn end_burst(&mut self) {
        let c = self.cycles.round() as u64;
        if c > 0 {
            self.steps.push(Step::Run(c));
        }
        self.cycles = 0.0;
    }

    /// Switched in (or found running) on `cpu`: a move ends the burst
    /// (preempted on one CPU, resumed on another) and is marked where the
    /// task stopped on the old CPU ([`Step::OnCpu`]).
    /// Returns where the move's [`Step::OnCpu`] went.
    fn on_cpu(&mut self, cpu: usize) -> Option<usize> {
        self.cpus.insert(cpu);
        if self.cpu == Some(cpu) {
            return None;
        }
        self.end_burst();
        let at = self.steps.iter().rposition(|s| matches!(s, Step::Run(_) | Step::Wake(_) | Step::OnCpu(_))).map_or(0, |i| i + 1);
        self.steps.insert(at, Step::OnCpu(cpu));
        self.cpu = Some(cpu);
        Some(at)
    }

    fn sleep(&mut self, ns: u64) {
        if ns > 0 {
            self.steps.push(Step::Sleep(ns));
        }
    }

    /// Began to run at `t`, at `prio` when the switch in shows it.
    fn start_run(&mut self, prio: Option<i32>, t: u64) {
        self.run_since = Some(t);
        self.prio_now = prio;
    }

    /// Stopped running at `t`: the run counts at the priority its switch in
    /// showed, else (running when the recording began) at `prio`, the
    /// switch out's.
    fn stop_run(&mut self, prio: Option<i32>, t: u64) {
        if let (Some(since), Some(p)) = (self.run_since.take(), self.prio_now.or(prio)) {
            *self.ran_at.entry(p).or_default() += t.saturating_sub(since);
        }
    }

    /// The priority it ran at for longest; of equal times, the highest (the
    /// lowest number).
    fn prio(&self) -> Option<i32> {
        self.ran_at.iter().fold(None, |best: Option<(i32, u64)>, (&p, &ns)| match best {
            Some((_, b)) if b >= ns => best,
            _ => Some((p, ns)),
        })
        .map(|(p, _)| p)
    }
}

/// How fast each CPU retired work, in cycles per ns: its frequency and, on
/// a known machine, its type's work per cycle (capacity) and its busy SMT
/// siblings, as the engine's `cpu_speed` counts them (memory-bound share
/// 0). Before the trace gives a CPU's frequency: on a known machine the
/// base frequency of that CPU's own type (the one govlab boots it at),
/// else `unknown_khz`.
struct Clocks<'p> {
    khz: Vec<Option<u32>>,
    unknown_khz: u32,
    machine: Option<&'p Platform>,
}

impl Clocks<'_> {
    fn rate(&self, cpu: usize, current: &[Option<i32>]) -> f64 {
        let Some(p) = self.machine else {
            return f64::from(self.khz[cpu].unwrap_or(self.unknown_khz)) / 1e6;
        };
        let core = &p.cores[p.cpus[cpu].core];
        let ct = &p.cpu_types[core.cpu_type];
        let f = f64::from(self.khz[cpu].unwrap_or(ct.base_khz)) / 1e6;
        let busy_siblings = core.cpus.iter().filter(|&&s| s != cpu && current.get(s).is_some_and(Option::is_some)).count();
        let smt = if busy_siblings > 0 { ct.smt_throughput / (busy_siblings + 1) as f64 } else { 1.0 };
        f * smt * p.work_per_cycle(core.cpu_type)
    }

    /// CPUs whose rate changes when `cpu` starts or stops running a task.
    fn core_of(&self, cpu: usize) -> Vec<usize> {
        self.machine.map_or_else(|| vec![cpu], |p| p.cores[p.cpus[cpu].core].cpus.clone())
    }
}

struct Replayer<'p> {
    tasks: BTreeMap<i32, Task>,
    /// The task running on each CPU.
    current: Vec<Option<i32>>,
    clocks: Clocks<'p>,
}

impl Replayer<'_> {
    /// Count the work of the task running on `cpu` up to `t`.
    fn flush(&mut self, cpu: usize, t: u64) {
        let Some(pid) = self.current[cpu] else { return };
        let rate = self.clocks.rate(cpu, &self.current);
        if let Some(tk) = self.tasks.get_mut(&pid) {
            if let State::Running { since_ns, .. } = tk.state {
                tk.cycles += t.saturating_sub(since_ns) as f64 * rate;
                tk.state = State::Running { cpu, since_ns: t };
            }
        }
    }

    fn flush_core(&mut self, cpu: usize, t: u64) {
        for c in self.clocks.core_of(cpu) {
            self.flush(c, t);
        }
    }

    fn task(&mut self, pid: i32, comm: &str) -> &mut Task {
        self.tasks.entry(pid).or_insert_with(|| new_task(comm))
    }

    /// The task that issued a wakeup recorded on `cpu` in the context of
    /// `pid`: that task, when it is the one running there (a task not seen
    /// before then runs since the trace began); None for the idle task or
    /// when the trace contradicts it.
    fn waker(&mut self, cpu: usize, pid: i32, comm: &str, t0: u64) -> Option<i32> {
        if pid == 0 || cpu >= self.current.len() {
            return None;
        }
        if self.current[cpu].is_none() && self.task(pid, comm).state == State::Unseen {
            let tk = self.task(pid, comm);
            tk.on_cpu(cpu);
            tk.start_run(None, t0);
            tk.state = State::Running { cpu, since_ns: t0 };
            self.current[cpu] = Some(pid);
        }
        (self.current[cpu] == Some(pid)).then_some(pid)
    }
}

/// Rebuild every task's program from `trace`. `machine`, when it has the
/// trace's CPUs, is the machine that recorded it: bursts are then counted
/// with its CPUs' capacities and SMT sharing.
pub fn tasks(trace: &Trace, unknown_khz: u32, machine: Option<&Platform>, wakeups: Wakeups) -> Vec<ReplayTask> {
    let (t0, t1) = trace.span_ns();
    let machine = machine.filter(|p| p.nr_cpus() >= trace.nr_cpus);
    let nr_cpus = machine.map_or(trace.nr_cpus, Platform::nr_cpus).max(1);
    let mut r = Replayer {
        tasks: BTreeMap::new(),
        current: vec![None; nr_cpus],
        clocks: Clocks { khz: clocks_at_start(trace, nr_cpus), unknown_khz, machine },
    };
    let mut pelt: BTreeMap<i32, (u64, u64)> = BTreeMap::new();
    for e in &trace.events {
        let t = e.ts_ns;
        match &e.kind {
            EventKind::Other { name, fields } if matches!(&**name, "sched_load_se" | "sched_pelt_se") => {
                if let Some((pid, load, util)) = task_pelt(fields) {
                    if r.tasks.get(&pid).map_or(true, |tk| tk.state == State::Unseen) {
                        pelt.entry(pid).or_insert((load, util));
                    }
                }
            }
            EventKind::Other { name, fields } if &**name == "sched_process_exec" => {
                let pid = super::columns::field_pairs(fields).iter().find(|(k, _)| *k == "pid").and_then(|(_, v)| v.parse::<i32>().ok());
                if let Some(tk) = pid.and_then(|p| r.tasks.get_mut(&p)).filter(|tk| matches!(tk.state, State::Running { .. })) {
                    match tk.moved.take() {
                        // The stopper move before it in this execve().
                        Some((at, _)) => tk.steps[at] = Step::Exec,
                        None => tk.steps.insert(tk.burst_at, Step::Exec),
                    }
                }
            }
            EventKind::CpuFrequency { state, cpu_id } => {
                let c = *cpu_id as usize;
                if c < nr_cpus {
                    r.flush(c, t);
                    r.clocks.khz[c] = Some(*state);
                }
            }
            EventKind::Print { message } => {
                if let Some((f, c)) = super::stats::devlib_frequency(message) {
                    if c < nr_cpus {
                        r.flush(c, t);
                        r.clocks.khz[c] = Some(f);
                    }
                }
            }
            EventKind::SchedSwitch(s) => {
                let c = e.cpu as usize;
                if c >= nr_cpus {
                    continue;
                }
                if s.prev_pid != 0 && r.task(s.prev_pid, &s.prev_comm).state == State::Unseen {
                    // Running since the trace began.
                    let tk = r.task(s.prev_pid, &s.prev_comm);
                    tk.on_cpu(c);
                    tk.state = State::Running { cpu: c, since_ns: t0 };
                    tk.start_run(Some(s.prev_prio), t0);
                    r.current[c] = Some(s.prev_pid);
                }
                r.flush_core(c, t);
                r.current[c] = None;
                if s.prev_pid != 0 {
                    let tk = r.task(s.prev_pid, &s.prev_comm);
                    tk.stop_run(Some(s.prev_prio), t);
                    if let Some((at, comm)) = tk.moved.take() {
                        if *comm != *s.prev_comm {
                            // Renamed after the move: execve() set the new
                            // name after sched_exec moved it.
                            tk.steps[at] = Step::Exec;
                        } else if s.prev_state.is_runnable() {
                            tk.moved = Some((at, comm));
                        }
                    }
                    if matches!(tk.state, State::Running { .. }) {
                        if s.prev_state.is_dead() {
                            tk.end_burst();
                            tk.state = State::Dead;
                        } else if s.prev_state.is_runnable() {
                            tk.state = State::Runnable;
                            if s.next_comm.starts_with("migration/") {
                                tk.stopped = Some((c, s.prev_comm.to_string()));
                            }
                        } else {
                            tk.end_burst();
                            tk.state = State::Blocked { since_ns: t };
                        }
                    }
                }
                if s.next_pid != 0 {
                    let tk = r.task(s.next_pid, &s.next_comm);
                    match tk.state {
                        State::Unseen => tk.sleep(t - t0),
                        State::Blocked { since_ns } => tk.sleep(t - since_ns),
                        State::Running { .. } | State::Runnable | State::Dead => {}
                    }
                    if tk.state != State::Dead {
                        let moved = tk.on_cpu(c);
                        if let (Some(at), Some((from, comm))) = (moved, tk.stopped.take()) {
                            if from != c && *comm == *s.next_comm {
                                tk.steps.insert(at, Step::Affine(c));
                                tk.moved = Some((at, comm));
                            } else if from != c {
                                tk.steps.insert(at, Step::Exec);
                            }
                        }
                        tk.stopped = None;
                        tk.burst_at = tk.steps.len();
                        tk.start_run(Some(s.next_prio), t);
                        tk.state = State::Running { cpu: c, since_ns: t };
                        r.current[c] = Some(s.next_pid);
                    }
                }
            }
            EventKind::SchedWakeup { pid, comm, new, .. } if *pid != 0 => {
                let since_ns = match r.task(*pid, comm).state {
                    State::Unseen => {
                        r.task(*pid, comm).forked = *new;
                        t0
                    }
                    State::Blocked { since_ns } => since_ns,
                    _ => continue,
                };
                // In irq context the interrupt woke it, not the task it
                // interrupted: a timed sleep, as a wakeup from idle.
                let waker = match wakeups {
                    Wakeups::Follow if !e.in_irq() => r.waker(e.cpu as usize, e.pid, &e.comm, t0).filter(|w| w != pid),
                    Wakeups::Follow | Wakeups::Timed => None,
                };
                if let Some(w) = waker {
                    r.flush_core(e.cpu as usize, t);
                    let wk = r.task(w, &e.comm);
                    wk.end_burst();
                    wk.steps.push(Step::Wake(*pid));
                }
                let tk = r.task(*pid, comm);
                match waker {
                    Some(w) => tk.steps.push(Step::WokenBy(w)),
                    None => tk.sleep(t - since_ns),
                }
                tk.state = State::Runnable;
            }
            EventKind::SchedProcessExit { pid, .. } => {
                if let Some(State::Running { cpu, .. }) = r.tasks.get(pid).map(|tk| tk.state) {
                    r.flush_core(cpu, t);
                    r.current[cpu] = None;
                }
                if let Some(tk) = r.tasks.get_mut(pid) {
                    tk.stop_run(None, t);
                    tk.end_burst();
                    tk.state = State::Dead;
                }
            }
            _ => {}
        }
    }
    for c in 0..nr_cpus {
        r.flush(c, t1);
    }
    r.tasks
        .into_iter()
        .map(|(pid, mut tk)| {
            tk.stop_run(None, t1);
            tk.end_burst();
            keep_affinity_that_held(&mut tk.steps);
            // A name the recording contradicts (seen elsewhere) binds nothing.
            let bound = bound_kthread_cpu(&tk.comm).filter(|&c| c < nr_cpus && tk.cpus.iter().all(|&x| x == c));
            let prio = tk.prio();
            ReplayTask { pid, comm: tk.comm, steps: tk.steps, cpus: tk.cpus, forked: tk.forked, recorded_pelt: pelt.get(&pid).copied(), bound, prio }
        })
        .filter(|t| t.steps.iter().any(|s| matches!(s, Step::Run(_) | Step::Wake(_))))
        .collect()
}

/// Each CPU's clock when the recording began, where the recording says
/// it: devlib's frequency marker (LISA writes one per CPU as a workload
/// starts, devlib `cpufreq.trace_frequencies`, read from
/// `scaling_cur_freq`) given before any `cpu_frequency` of that CPU. The
/// cpufreq core emits `cpu_frequency` for every change it makes
/// (`cpufreq_notify_transition`, CPUFREQ_POSTCHANGE, drivers/cpufreq/
/// cpufreq.c) and none when the target is the current frequency
/// (`__cpufreq_driver_target`), so with no event before the marker the CPU
/// ran at the marker's frequency from the start. In a recording without the
/// `cpu_frequency` event at all (LISA's trace_txt) that is an assumption:
/// the best the recording says. A CPU whose first event is a
/// `cpu_frequency` ran at some other frequency before it (None: the
/// caller's default).
fn clocks_at_start(trace: &Trace, nr_cpus: usize) -> Vec<Option<u32>> {
    let mut khz = vec![None; nr_cpus];
    let mut decided = vec![false; nr_cpus];
    for e in &trace.events {
        let (c, f) = match &e.kind {
            EventKind::CpuFrequency { cpu_id, .. } => (*cpu_id as usize, None),
            EventKind::Print { message } => match super::stats::devlib_frequency(message) {
                Some((f, c)) => (c, Some(f)),
                None => continue,
            },
            _ => continue,
        };
        if c < nr_cpus && !decided[c] {
            decided[c] = true;
            khz[c] = f;
        }
    }
    khz
}

/// The affinity a recording implies. A trace does not carry affinities,
/// but a `sched_setaffinity` that excludes the CPU a task runs on shows:
/// the task, runnable, is switched out for that CPU's `migration/N`
/// stopper (`__set_cpus_allowed_ptr` → `affine_move_task`, kernel/sched/
/// core.c) and next runs on another CPU. The stopper also serves
/// `sched_exec`, whose move [`tasks`] has already made a [`Step::Exec`]
/// (the task renamed by the end of its first run on the new CPU), and
/// active load balancing, which this rule cannot tell apart. So the move is
/// taken as an affinity to the new CPU ([`Step::Affine`]) only if the task
/// is never seen on another CPU afterwards; otherwise the mark is dropped
/// here and the scheduler places the task.
fn keep_affinity_that_held(steps: &mut Vec<Step>) {
    let Some(at) = steps.iter().rposition(|s| matches!(s, Step::Affine(_))) else { return };
    let Step::Affine(cpu) = steps[at] else { return };
    let held = steps[at..].iter().all(|s| !matches!(*s, Step::OnCpu(c) if c != cpu));
    let keep = held.then_some(at);
    let mut i = 0;
    steps.retain(|s| {
        i += 1;
        !matches!(s, Step::Affine(_)) || Some(i - 1) == keep
    });
}

/// The CPU a per-CPU kernel thread is bound to, by its name. The kernel
/// creates these bound and they cannot be moved (PF_NO_SETAFFINITY), so a
/// trace shows them on their CPU only:
///
/// * `migration/N` (kernel/stop_machine.c `cpu_stop_threads`),
///   `ksoftirqd/N` (kernel/softirq.c `softirq_threads`), `cpuhp/N`
///   (kernel/cpu.c `cpuhp_threads`, v4.10+), `watchdog/N` (kernel/watchdog.c,
///   until v5.1 made it a stopper work) and `rcuc/N` (kernel/rcu/tree.c
///   `rcu_cpu_thread_spec`) are smpboot threads: kernel/smpboot.c
///   `__smpboot_create_thread` creates each with `kthread_create_on_cpu`,
///   which binds it (`kthread_bind`);
/// * `kworker/N:M` (and `kworker/N:MH`, the high-priority pool) is a
///   worker of CPU N's per-CPU pool: kernel/workqueue.c `create_worker`
///   binds it to the pool's cpumask (`kthread_bind_mask`). `kworker/uN:M`
///   serves an unbound pool and is free.
///
/// Read in Linux v4.19 and v6.8. Not bound here: `sugov:N`, schedutil's
/// thread, which `sugov_kthread_create` (kernel/sched/cpufreq_schedutil.c)
/// binds to its policy's CPUs only when the driver does not set
/// `dvfs_possible_from_any_cpu`, and the recordings' drivers set it
/// (drivers/cpufreq/scpi-cpufreq.c `scpi_cpufreq_init` on Juno;
/// scmi-cpufreq and qcom-cpufreq-hw alike); `rcuop/N` and `rcuos/N`
/// (offloaded callbacks: unbound).
fn bound_kthread_cpu(comm: &str) -> Option<usize> {
    let (name, rest) = comm.split_once('/')?;
    let cpu = match name {
        "migration" | "ksoftirqd" | "cpuhp" | "watchdog" | "rcuc" => rest,
        "kworker" => rest.split_once(':')?.0,
        _ => return None,
    };
    cpu.parse().ok()
}

/// A task entity's `pid`, `load` and `util` from the fields of a
/// `sched_load_se` / `sched_pelt_se` event (a group entity, `pid=-1`, or
/// fields that do not parse: None).
fn task_pelt(fields: &str) -> Option<(i32, u64, u64)> {
    let pairs = super::columns::field_pairs(fields);
    let get = |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    let pid: i32 = get("pid")?.parse().ok()?;
    if pid <= 0 {
        return None;
    }
    Some((pid, get("load")?.parse().ok()?, get("util")?.parse().ok()?))
}

fn new_task(comm: &str) -> Task {
    Task {
        comm: comm.to_string(),
        steps: Vec::new(),
        cpus: std::collections::BTreeSet::new(),
        state: State::Unseen,
        cpu: None,
        cycles: 0.0,
        forked: false,
        stopped: None,
        moved: None,
        burst_at: 0,
        ran_at: BTreeMap::new(),
        run_since: None,
        prio_now: None,
    }
}

/// The replayed tasks as a workload of govlab's task language, built in
/// memory: the programs a workload file with the same tasks would give
/// (`workload/file.rs`). No series or counters, so the one metric is the
/// work rate, as for such a file.
pub struct ReplayWorkload {
    setup: Setup,
    source: String,
}

/// The tasks as programs of govlab's task language; with `pin`, each
/// stretch of a task on the CPU it ran on (see the module doc). Each
/// program ends waiting for the end of the trace's span (an absolute
/// `timer` from the start), so the replay lasts as long as the recording.
/// A wakeup is a `send` on the channel `wake-WAKER-WAKEE`, the wait for it
/// a `recv`; a pinned task's move from one CPU to another, a `send` on
/// `cpu-PID-CPU` to the part that runs on that CPU. `source` names the
/// trace.
pub fn workload(tasks: &[ReplayTask], source: &str, pin: bool, span_ns: u64) -> Result<ReplayWorkload> {
    if tasks.is_empty() {
        return Err(Error::invalid("trace replay", "trace", source, "a trace with at least one task that runs (sched_switch events)"));
    }
    let pairs: std::collections::BTreeSet<(i32, i32)> = tasks
        .iter()
        .flat_map(|t| t.steps.iter().filter_map(move |s| if let Step::WokenBy(w) = s { Some((*w, t.pid)) } else { None }))
        .collect();
    let mut setup = Setup {
        channels: pairs.iter().map(|&(waker, wakee)| ChannelSpec::plain(channel(waker, wakee), PIPE_BYTES)).collect(),
        ..Setup::default()
    };
    let chan = |pair: (i32, i32)| pairs.iter().position(|&p| p == pair).map(|i| i as u32);
    let end = Op::Timer { period_ns: span_ns.max(1), timer: TimerRef::Own(0), relative: false };
    for t in tasks {
        let to_op = |step: &Step| -> Option<Op> {
            match *step {
                Step::Run(c) => Some(Op::Run { cycles: Dist::Fixed(c as f64), mem: 0.0 }),
                Step::Sleep(ns) => Some(Op::Sleep { ns: Dist::Fixed(ns as f64) }),
                // A wakeup of a task that is not replayed (it never ran) goes nowhere.
                Step::Wake(wakee) => chan((t.pid, wakee)).map(|chan| Op::Send { chan, bytes: 1 }),
                Step::WokenBy(waker) => chan((waker, t.pid)).map(|chan| Op::Recv { chan }),
                // Pinned, each part already runs where the recording shows.
                Step::OnCpu(_) | Step::Affine(_) | Step::Exec if pin => None,
                Step::OnCpu(_) => None,
                Step::Affine(cpu) => Some(Op::SetAffinity { cpus: Some(vec![cpu].into()) }),
                Step::Exec => Some(Op::Exec),
            }
        };
        let name = format!("{}-{}", t.comm, t.pid);
        let parts = if pin { cpu_parts(&t.steps) } else { Vec::new() };
        if parts.len() <= 1 {
            let mut steps = &t.steps[..];
            let mut start_ns = 0;
            if !t.forked && !pin {
                // Asleep when the recording began: a sleeping task is on no
                // runqueue, so it waits on its first CPU until it wakes and
                // is placed from there (try_to_wake_up → select_task_rq),
                // instead of being runnable at 0 where the first CPU out of
                // idle would pull it before it could sleep.
                if let [Step::OnCpu(_), Step::Sleep(ns), ..] = steps {
                    start_ns = *ns;
                    steps = &steps[2..];
                }
            }
            let mut ops: Vec<Op> = steps.iter().filter_map(to_op).collect();
            ops.push(end.clone());
            let mut spec = TaskSpec::new(name, Program { ops });
            (spec.sched, spec.nice) = class_of(t.prio, &t.comm);
            spec.forked = t.forked;
            spec.recorded_pelt = t.recorded_pelt;
            spec.start_ns = start_ns;
            if !t.forked {
                spec.start_cpu = t.steps.iter().find_map(|s| if let Step::OnCpu(c) = *s { Some(c) } else { None });
            }
            if pin {
                spec.affinity = Some(t.cpus.iter().copied().collect());
            } else if let Some(cpu) = t.bound {
                spec.affinity = Some(vec![cpu]);
            }
            setup.tasks.push(spec);
            continue;
        }
        // One task per CPU, handing the program over at each move.
        let cpus: Vec<usize> = t.cpus.iter().copied().collect();
        let first_chan = setup.channels.len() as u32;
        for &c in &cpus {
            setup.channels.push(ChannelSpec::plain(format!("cpu-{}-{c}", t.pid), PIPE_BYTES));
        }
        let baton = |cpu: usize| first_chan + cpus.iter().position(|&c| c == cpu).unwrap_or(0) as u32;
        let mut programs: Vec<Vec<Op>> = vec![Vec::new(); cpus.len()];
        for (k, (cpu, steps)) in parts.iter().enumerate() {
            let ops = &mut programs[baton(*cpu) as usize - first_chan as usize];
            if k > 0 {
                ops.push(Op::Recv { chan: baton(*cpu) });
            }
            ops.extend(steps.iter().filter_map(to_op));
            if let Some((next, _)) = parts.get(k + 1) {
                ops.push(Op::Send { chan: baton(*next), bytes: 1 });
            }
        }
        for (&c, mut ops) in cpus.iter().zip(programs) {
            ops.push(end.clone());
            let mut spec = TaskSpec::new(format!("{name}@{c}"), Program { ops });
            (spec.sched, spec.nice) = class_of(t.prio, &t.comm);
            spec.affinity = Some(vec![c]);
            // Only the part where it began is the new process.
            spec.forked = t.forked && parts.first().is_some_and(|&(first, _)| first == c);
            if parts.first().is_some_and(|&(first, _)| first == c) {
                spec.recorded_pelt = t.recorded_pelt;
            }
            setup.tasks.push(spec);
        }
    }
    Ok(ReplayWorkload { setup, source: source.to_string() })
}

/// The scheduling class and nice a recorded priority stands for.
/// `sched_switch` and `sched_wakeup` print `p->prio` (include/trace/events/
/// sched.h), which include/linux/sched/prio.h and kernel/sched/core.c
/// `normal_prio` (Linux v4.19 to v6.8 alike) define as:
///
/// * 0..=99, a real-time task: `MAX_RT_PRIO-1 - rt_priority`, so its
///   sched_priority is 99 − prio. SCHED_FIFO or SCHED_RR the trace does not
///   say; it is replayed SCHED_FIFO, the policy the kernel gives its own
///   real-time threads (kernel/watchdog.c v4.19 `watchdog_enable` →
///   `watchdog_set_prio(SCHED_FIFO, MAX_RT_PRIO - 1)`: watchdog/N at prio
///   0; from v5.9 `sched_set_fifo`, kernel/sched/core.c);
/// * 100..=139, the fair class at nice prio − 120 (`NICE_TO_PRIO`,
///   DEFAULT_PRIO 120), SCHED_IDLE not told apart from SCHED_OTHER;
/// * anything else, −1 above all (`MAX_DL_PRIO-1`: SCHED_DEADLINE, whose
///   runtime, deadline and period the trace does not give), the fair class
///   at nice 0.
///
/// Three threads by name stay in the fair class at nice 0 whatever they
/// show. `migration/N`, the CPU stopper, is of the stop class
/// (kernel/sched/stop_task.c; `sched_set_stop_task` gives it prio 0 for
/// show), which preempts every class but is not on the RT runqueue, so it
/// raises no schedutil request (`rt_rq_is_runnable`); govlab has no stop
/// class, and an RT stopper would ask for the top frequency each time it
/// ran. `sugov:N` is the recording's own schedutil thread (SCHED_DEADLINE
/// with SCHED_FLAG_SUGOV from v4.16, kernel/sched/cpufreq_schedutil.c
/// `sugov_kthread_create`, outside the DL bandwidth; SCHED_FIFO 50
/// before), `kschedfreq:N` its forerunner's in Arm's and Android's EAS
/// kernels of 2015–2017 (the out-of-tree sched-freq governor,
/// cpufreq_sched.c, SCHED_FIFO 50: trappy's trace_idle shows it at prio
/// 49): what they did, the replay's simulated governor does again, and
/// their recorded work stays plain work, as before.
fn class_of(prio: Option<i32>, comm: &str) -> (SchedAttr, i32) {
    let fair = |nice| (SchedAttr::default(), nice);
    if ["migration/", "sugov:", "kschedfreq:"].iter().any(|k| comm.starts_with(k)) {
        return fair(0);
    }
    match prio {
        Some(p @ 0..=99) => (SchedAttr { policy: SchedPolicy::Fifo, rt_priority: (99 - p) as u32, ..SchedAttr::default() }, 0),
        Some(p @ 100..=139) => fair(p - 120),
        _ => fair(0),
    }
}

/// A task's steps cut at each [`Step::OnCpu`]: (CPU, the steps done there),
/// in order; the steps before the first move go with the first CPU.
fn cpu_parts(steps: &[Step]) -> Vec<(usize, &[Step])> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut cpu = None;
    for (i, s) in steps.iter().enumerate() {
        if let Step::OnCpu(c) = *s {
            if let Some(prev) = cpu {
                parts.push((prev, &steps[start..i]));
                start = i + 1;
            }
            cpu = Some(c);
        }
    }
    if let Some(c) = cpu {
        parts.push((c, &steps[start..]));
    }
    parts
}

/// A channel's buffer, as a pipe's (a workload file's default).
const PIPE_BYTES: u64 = 65_536;

fn channel(waker: i32, wakee: i32) -> String {
    format!("wake-{waker}-{wakee}")
}

/// The work rate's name, the primary metric.
const WORK_RATE: &str = "work_rate_gcps";

impl Workload for ReplayWorkload {
    fn setup(&self, _platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        Ok(self.setup.clone())
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        vec![Metric::new(WORK_RATE, r.per_second(r.cycles_retired) / 1e9, "Gcycles/s", Better::Higher)]
    }

    fn primary(&self) -> &str {
        WORK_RATE
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![("trace".into(), self.source.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A program's ops, as Debug shows them.
    fn ops_text(ops: &[Op]) -> Vec<String> {
        ops.iter().map(|o| format!("{o:?}")).collect()
    }

    const TRACE: &str = "\
cpus=2
          <idle>-0     [000]     1.000000: cpu_frequency:        state=1000000 cpu_id=0
               a-10    [000]     1.000000: cpu_frequency:        state=1000000 cpu_id=1
               a-10    [000]     1.001000: sched_switch:         a:10 [120] R+ ==> b:11 [120]
               b-11    [000]     1.002000: cpu_frequency:        state=2000000 cpu_id=0
               b-11    [000]     1.003000: sched_switch:         b:11 [120] S ==> a:10 [120]
               a-10    [000]     1.004000: sched_switch:         a:10 [120] S ==> swapper/0:0 [120]
          <idle>-0     [001]     1.006000: sched_wakeup:         a:10 [120] success=1 CPU:001
          <idle>-0     [001]     1.006500: sched_switch:         swapper/1:0 [120] R ==> a:10 [120]
               a-10    [001]     1.007000: sched_switch:         a:10 [120] x ==> swapper/1:0 [120]
          <idle>-0     [000]     1.010000: sched_switch:         swapper/0:0 [120] R ==> b:11 [120]
";

    #[test]
    fn bursts_sleeps_and_frequencies() {
        let t = crate::trace::read::read_bytes(TRACE.as_bytes(), Path::new("t.txt")).unwrap();
        let tasks = tasks(&t, 500_000, None, Wakeups::Follow);
        let a = tasks.iter().find(|t| t.pid == 10).unwrap();
        // a runs from the start (1 ms at 1 GHz), is preempted, runs again
        // 1 ms at 2 GHz, blocks; sleeps 2 ms to its wakeup; runs 0.5 ms on
        // CPU 1 at 1 GHz; dies. The move to CPU 1 is marked where it
        // stopped on CPU 0, before the sleep.
        assert_eq!(a.steps, [Step::OnCpu(0), Step::Run(1_000_000 + 2_000_000), Step::OnCpu(1), Step::Sleep(2_000_000), Step::Run(500_000)]);
        let b = tasks.iter().find(|t| t.pid == 11).unwrap();
        // b first runs at 1 ms: 1 ms at 1 GHz then 1 ms at 2 GHz; blocked
        // from 3 ms with no traced wakeup, back at 10 ms until the end.
        assert_eq!(b.steps, [Step::OnCpu(0), Step::Sleep(1_000_000), Step::Run(3_000_000), Step::Sleep(7_000_000)]);
        assert_eq!(a.cpus.iter().copied().collect::<Vec<_>>(), [0, 1]);
        let end = "Timer { period_ns: 9000000, timer: Own(0), relative: false }";
        // Free: one program, the scheduler places it.
        let setup = workload(&tasks, "t.txt", false, 9_000_000).unwrap().setup;
        let a = setup.tasks.iter().find(|t| t.comm == "a-10").unwrap();
        assert_eq!((a.affinity.as_ref(), setup.channels.len()), (None, 0));
        assert_eq!(
            ops_text(&a.program.ops),
            ["Run { cycles: Fixed(3000000.0), mem: 0.0 }", "Sleep { ns: Fixed(2000000.0) }", "Run { cycles: Fixed(500000.0), mem: 0.0 }", end]
        );
        // Pinned: b stays on CPU 0; a is one task per CPU, the part on CPU 0
        // handing over to the part on CPU 1 where a stopped on CPU 0.
        let setup = workload(&tasks, "t.txt", true, 9_000_000).unwrap().setup;
        let task = |comm: &str| setup.tasks.iter().find(|t| t.comm == comm).unwrap();
        assert_eq!(task("b-11").affinity, Some(vec![0]));
        assert_eq!(setup.channels.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["cpu-10-0", "cpu-10-1"]);
        assert_eq!((task("a-10@0").affinity.clone(), task("a-10@1").affinity.clone()), (Some(vec![0]), Some(vec![1])));
        assert_eq!(ops_text(&task("a-10@0").program.ops), ["Run { cycles: Fixed(3000000.0), mem: 0.0 }", "Send { chan: 1, bytes: 1 }", end]);
        assert_eq!(
            ops_text(&task("a-10@1").program.ops),
            ["Recv { chan: 1 }", "Sleep { ns: Fixed(2000000.0) }", "Run { cycles: Fixed(500000.0), mem: 0.0 }", end]
        );
        assert!(setup.tasks.iter().all(|t| t.comm != "a-10"));
        // b was asleep when the recording began: free, it sleeps that first
        // millisecond on CPU 0 as a start delay, its program begins with its
        // first burst; pinned, the sleep stays in its program.
        let free = workload(&tasks, "t.txt", false, 9_000_000).unwrap().setup;
        let b = free.tasks.iter().find(|t| t.comm == "b-11").unwrap();
        assert_eq!((b.start_ns, b.start_cpu), (1_000_000, Some(0)));
        assert_eq!(ops_text(&b.program.ops)[0], "Run { cycles: Fixed(3000000.0), mem: 0.0 }");
        assert_eq!((task("b-11").start_ns, ops_text(&task("b-11").program.ops)[0].as_str()), (0, "Sleep { ns: Fixed(1000000.0) }"));
    }

    /// A wakes B in the middle of a burst; C is woken from idle.
    const WAKES: &str = "\
cpus=2
          <idle>-0     [000]     1.000000: cpu_frequency:        state=2000000 cpu_id=0
          <idle>-0     [001]     1.000000: cpu_frequency:        state=2000000 cpu_id=1
          <idle>-0     [000]     1.000000: sched_switch:         swapper/0:0 [120] R ==> a:20 [120]
          <idle>-0     [001]     1.000000: sched_switch:         swapper/1:0 [120] R ==> b:21 [120]
               b-21    [001]     1.001000: sched_switch:         b:21 [120] S ==> swapper/1:0 [120]
               a-20    [000]     1.005000: sched_wakeup:         b:21 [120] success=1 CPU:001
          <idle>-0     [001]     1.005010: sched_switch:         swapper/1:0 [120] R ==> b:21 [120]
               a-20    [000]     1.006000: sched_switch:         a:20 [120] S ==> swapper/0:0 [120]
               b-21    [001]     1.006010: sched_switch:         b:21 [120] S ==> swapper/1:0 [120]
          <idle>-0     [001]     1.008000: sched_wakeup:         c:22 [120] success=1 CPU:001
          <idle>-0     [001]     1.008010: sched_switch:         swapper/1:0 [120] R ==> c:22 [120]
               c-22    [001]     1.009000: sched_switch:         c:22 [120] S ==> swapper/1:0 [120]
          <idle>-0     [000]     1.020000: cpu_idle:             state=1 cpu_id=0
";

    #[test]
    fn a_wakeup_by_a_task_is_a_message_from_where_it_happened() {
        let t = crate::trace::read::read_bytes(WAKES.as_bytes(), Path::new("t.txt")).unwrap();
        let tasks = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let steps = |pid: i32| tasks.iter().find(|t| t.pid == pid).unwrap().steps.clone();
        // A's 6 ms burst at 2 GHz is cut where it woke B, 5 ms in.
        assert_eq!(steps(20), [Step::OnCpu(0), Step::Run(10_000_000), Step::Wake(21), Step::Run(2_000_000)]);
        // B waits for A instead of sleeping 4 ms; C, woken from idle, sleeps 8 ms.
        assert_eq!(steps(21), [Step::OnCpu(1), Step::Run(2_000_000), Step::WokenBy(20), Step::Run(2_000_000)]);
        assert_eq!(steps(22), [Step::OnCpu(1), Step::Sleep(8_000_000), Step::Run(1_980_000)]);
        let setup = workload(&tasks, "t.txt", false, 20_000_000).unwrap().setup;
        assert_eq!(setup.channels.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["wake-20-21"]);
        let ops = |comm: &str| ops_text(&setup.tasks.iter().find(|t| t.comm == comm).unwrap().program.ops);
        assert_eq!(ops("a-20")[..3], ["Run { cycles: Fixed(10000000.0), mem: 0.0 }", "Send { chan: 0, bytes: 1 }", "Run { cycles: Fixed(2000000.0), mem: 0.0 }"]);
        assert_eq!(ops("b-21")[..2], ["Run { cycles: Fixed(2000000.0), mem: 0.0 }", "Recv { chan: 0 }"]);
        assert!(setup.tasks.iter().all(|t| t.affinity.is_none()));
    }

    #[test]
    fn a_wakeup_in_irq_context_is_timed_whoever_runs() {
        // The same wakeup of B by A's CPU, once raised by A and once by a
        // timer interrupt (`h`) while A ran.
        let irq = WAKES.replace("a-20    [000]     1.005000: sched_wakeup:", "a-20    [000] d.h2 1.005000: sched_wakeup:");
        assert_ne!(irq, WAKES);
        let t = crate::trace::read::read_bytes(irq.as_bytes(), Path::new("t.txt")).unwrap();
        let tasks = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let steps = |pid: i32| tasks.iter().find(|t| t.pid == pid).unwrap().steps.clone();
        // A's burst is whole; B sleeps its recorded 4 ms.
        assert_eq!(steps(20), [Step::OnCpu(0), Step::Run(12_000_000)]);
        assert_eq!(steps(21), [Step::OnCpu(1), Step::Run(2_000_000), Step::Sleep(4_000_000), Step::Run(2_000_000)]);
    }

    #[test]
    fn a_wakeup_in_a_task_that_does_not_run_there_is_timed() {
        // The wakeup names pid 30 on CPU 0 while the trace says a (10) runs there.
        let text = "cpus=1\n\
            <idle>-0 [000] 1.000000: sched_switch: swapper/0:0 [120] R ==> a:10 [120]\n\
            a-10 [000] 1.001000: sched_switch: a:10 [120] S ==> b:11 [120]\n\
            x-30 [000] 1.002000: sched_wakeup: a:10 [120] success=1 CPU:000\n\
            b-11 [000] 1.003000: sched_switch: b:11 [120] S ==> a:10 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let a = tasks(&t, 1_000_000, None, Wakeups::Follow).into_iter().find(|t| t.pid == 10).unwrap();
        assert_eq!(a.steps, [Step::OnCpu(0), Step::Run(1_000_000), Step::Sleep(1_000_000)]);
    }

    /// A task's PELT averages before it first runs come from the
    /// recording's load-tracking events; a group entity's, and a task's
    /// once it has run, are not taken.
    #[test]
    fn a_task_starts_from_its_recorded_pelt() {
        let text = "cpus=1\n\
            <idle>-0 [000] 1.000000: sched_load_se: cpu=0 path=/autogroup-1 comm=(null) pid=-1 load=900 util=900\n\
            <idle>-0 [000] 1.000100: sched_load_se: cpu=0 path=(null) comm=a pid=10 load=300 util=250\n\
            <idle>-0 [000] 1.000200: sched_switch: swapper/0:0 [120] R ==> a:10 [120]\n\
            a-10 [000] 1.000300: sched_pelt_se: cpu=0 path=(null) comm=a pid=10 load=310 util=260 update_time=1\n\
            a-10 [000] 1.000400: sched_pelt_se: cpu=0 path=(null) comm=b pid=11 load=0 util=0 update_time=1\n\
            a-10 [000] 1.001000: sched_switch: a:10 [120] S ==> b:11 [120]\n\
            b-11 [000] 1.002000: sched_switch: b:11 [120] S ==> swapper/0:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let pelt = |pid| all.iter().find(|t| t.pid == pid).unwrap().recorded_pelt;
        assert_eq!(pelt(10), Some((300, 250)));
        assert_eq!(pelt(11), Some((0, 0)));
        assert_eq!(task_pelt("cpu=0 path=(null) comm=x pid=-1 load=1 util=1"), None);
    }

    /// A task the recording found already running starts on the CPU the
    /// recording first shows it on; a task it saw forked is placed by fork
    /// balancing, as a new process.
    #[test]
    fn a_task_that_was_there_starts_where_the_recording_shows_it() {
        let text = "cpus=2\n\
            <idle>-0 [001] 1.000000: sched_switch: swapper/1:0 [120] R ==> a:10 [120]\n\
            a-10 [001] 1.000100: sched_wakeup_new: comm=b pid=11 prio=120 target_cpu=001\n\
            a-10 [001] 1.000500: sched_switch: a:10 [120] S ==> swapper/1:0 [120]\n\
            <idle>-0 [000] 1.000600: sched_switch: swapper/0:0 [120] R ==> b:11 [120]\n\
            b-11 [000] 1.001000: sched_switch: b:11 [120] S ==> swapper/0:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let w = workload(&all, "t.txt", false, 2_000_000).unwrap();
        let start = |comm: &str| w.setup.tasks.iter().find(|s| s.comm.starts_with(comm)).unwrap().start_cpu;
        assert_eq!(start("a-10"), Some(1));
        assert_eq!(start("b-11"), None);
    }
    /// A devlib marker before any `cpu_frequency` of its CPU gives the
    /// clock from the recording's start; one after a `cpu_frequency` does
    /// not (CPU 1 ran at another frequency before that event).
    #[test]
    fn a_marker_before_any_frequency_event_gives_the_clock_from_the_start() {
        let text = "cpus=2\n\
            <idle>-0 [000] 1.000000: sched_switch: swapper/0:0 [120] R ==> a:10 [120]\n\
            <idle>-0 [001] 1.000000: sched_switch: swapper/1:0 [120] R ==> b:11 [120]\n\
            b-11 [001] 1.001000: cpu_frequency: state=3000000 cpu_id=1\n\
            a-10 [000] 1.002000: print: tracing_mark_write: cpu_frequency_devlib: state=500000 cpu_id=0\n\
            a-10 [000] 1.002000: print: tracing_mark_write: cpu_frequency_devlib: state=3000000 cpu_id=1\n\
            a-10 [000] 1.003000: cpu_frequency: state=2000000 cpu_id=0\n\
            a-10 [000] 1.004000: sched_switch: a:10 [120] S ==> swapper/0:0 [120]\n\
            b-11 [001] 1.004000: sched_switch: b:11 [120] S ==> swapper/1:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        assert_eq!(clocks_at_start(&t, 2), [Some(500_000), None]);
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let steps = |pid: i32| all.iter().find(|t| t.pid == pid).unwrap().steps.clone();
        // a: 3 ms at 500 MHz, 1 ms at 2 GHz; b: 1 ms at unknown_khz (1 GHz), 3 ms at 3 GHz.
        assert_eq!(steps(10), [Step::OnCpu(0), Step::Run(1_500_000 + 2_000_000)]);
        assert_eq!(steps(11), [Step::OnCpu(1), Step::Run(1_000_000 + 9_000_000)]);
    }

    /// The real recordings: example_rtapp's markers (LITTLE 450 MHz, big
    /// 1100 MHz, 0.66 s in) come before its first `cpu_frequency` (3.9 s
    /// in); trace_txt has markers only (Juno r2's 950 / 1200 MHz);
    /// sched_load's come after a `cpu_frequency` of every CPU.
    #[test]
    fn the_real_recordings_clocks_at_their_start() {
        let real = crate::trace::real_data_dir(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("data/real");
        let clocks = |rel: &str| clocks_at_start(&crate::trace::read_path(&real.join(rel)).unwrap(), 6);
        let (l, b) = (Some(450_000), Some(1_100_000));
        assert_eq!(clocks("lisa/example_rtapp/trace.dat"), [l, b, b, l, l, l]);
        let (l, b) = (Some(950_000), Some(1_200_000));
        assert_eq!(clocks("lisa/trace_txt/trace.txt"), [l, b, b, l, l, l]);
        assert_eq!(clocks("lisa/sched_load/trace.dat"), [None; 6]);
    }

    #[test]
    fn per_cpu_kernel_threads_are_bound_by_name() {
        let cpu = bound_kthread_cpu;
        assert_eq!((cpu("kworker/3:1"), cpu("kworker/1:0H"), cpu("migration/2"), cpu("ksoftirqd/0")), (Some(3), Some(1), Some(2), Some(0)));
        assert_eq!((cpu("watchdog/5"), cpu("cpuhp/4"), cpu("rcuc/7")), (Some(5), Some(4), Some(7)));
        assert_eq!((cpu("kworker/u12:4"), cpu("sugov:0"), cpu("rcuop/0"), cpu("bash"), cpu("kworker/x:1")), (None, None, None, None, None));
        // Free, kworker/1:2 keeps CPU 1; kworker/0:1, recorded on CPU 1
        // against its name, and the unbound worker are placed.
        let text = "cpus=2\n\
            <idle>-0 [001] 1.000000: sched_switch: swapper/1:0 [120] R ==> kworker/1:2:40 [120]\n\
            kworker/1:2-40 [001] 1.000500: sched_switch: kworker/1:2:40 [120] S ==> kworker/0:1:41 [120]\n\
            kworker/0:1-41 [001] 1.000600: sched_switch: kworker/0:1:41 [120] S ==> kworker/u4:0:42 [120]\n\
            kworker/u4:0-42 [001] 1.000700: sched_switch: kworker/u4:0:42 [120] S ==> swapper/1:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let free = workload(&all, "t.txt", false, 1_000_000).unwrap().setup;
        let affinity = |pid: &str| free.tasks.iter().find(|s| s.comm.ends_with(pid)).unwrap().affinity.clone();
        assert_eq!((affinity("-40"), affinity("-41"), affinity("-42")), (Some(vec![1]), None, None));
    }

    /// sched_exec's move and rt-app's affinity look alike: the task is
    /// switched out for its CPU's stopper and runs on another CPU. An exec
    /// sets the new name after the move (x: switched out under it at the
    /// end of its first burst there); rt-app names its thread before it
    /// sets the affinity (y). With `sched_process_exec` recorded, the exec
    /// is where it shows, at the start of its burst (z, not moved).
    #[test]
    fn a_stopper_move_followed_by_a_new_name_is_an_exec() {
        let text = "cpus=3\n\
            <idle>-0 [001] 1.000000: sched_switch: swapper/1:0 [120] R ==> bash:10 [120]\n\
            bash-10 [001] 1.001000: sched_switch: bash:10 [120] R ==> migration/1:13 [0]\n\
            migration/1-13 [001] 1.001050: sched_switch: migration/1:13 [0] S ==> swapper/1:0 [120]\n\
            <idle>-0 [002] 1.001100: sched_switch: swapper/2:0 [120] R ==> bash:10 [120]\n\
            sudo-10 [002] 1.002000: sched_switch: sudo:10 [120] R ==> kworker/2:1:20 [120]\n\
            kworker/2:1-20 [002] 1.002100: sched_switch: kworker/2:1:20 [120] S ==> sudo:10 [120]\n\
            sudo-10 [002] 1.003000: sched_switch: sudo:10 [120] S ==> swapper/2:0 [120]\n\
            <idle>-0 [000] 1.004000: sched_switch: swapper/0:0 [120] R ==> rt-app:11 [120]\n\
            task0-11 [000] 1.004500: sched_switch: task0:11 [120] R ==> migration/0:9 [0]\n\
            migration/0-9 [000] 1.004550: sched_switch: migration/0:9 [0] S ==> swapper/0:0 [120]\n\
            <idle>-0 [001] 1.004600: sched_switch: swapper/1:0 [120] R ==> task0:11 [120]\n\
            task0-11 [001] 1.005000: sched_switch: task0:11 [120] S ==> swapper/1:0 [120]\n\
            <idle>-0 [000] 1.006000: sched_switch: swapper/0:0 [120] R ==> sh:12 [120]\n\
            ls-12 [000] 1.006500: sched_process_exec: filename=/bin/ls pid=12 old_pid=12\n\
            ls-12 [000] 1.007000: sched_switch: ls:12 [120] S ==> swapper/0:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let steps = |pid: i32| all.iter().find(|t| t.pid == pid).unwrap().steps.clone();
        assert_eq!(steps(10), [Step::OnCpu(1), Step::Run(1_000_000), Step::Exec, Step::OnCpu(2), Step::Run(900_000 + 900_000)]);
        assert_eq!(steps(11), [Step::OnCpu(0), Step::Sleep(4_000_000), Step::Run(500_000), Step::Affine(1), Step::OnCpu(1), Step::Run(400_000)]);
        assert_eq!(steps(12), [Step::OnCpu(0), Step::Sleep(6_000_000), Step::Exec, Step::Run(1_000_000)]);
        let free = workload(&all, "t.txt", false, 10_000_000).unwrap().setup;
        let ops = |comm: &str| ops_text(&free.tasks.iter().find(|s| s.comm == comm).unwrap().program.ops);
        assert_eq!(ops("bash-10")[..3], ["Run { cycles: Fixed(1000000.0), mem: 0.0 }", "Exec", "Run { cycles: Fixed(1800000.0), mem: 0.0 }"]);
        let pinned = workload(&all, "t.txt", true, 10_000_000).unwrap().setup;
        assert!(pinned.tasks.iter().all(|s| !ops_text(&s.program.ops).iter().any(|o| o == "Exec")));
    }

    /// t is switched out for the `migration/1` stopper and runs on CPU 2
    /// from then on: a `sched_setaffinity` to CPU 2. sh, moved the same way,
    /// comes back as cat (an exec, balanced by `sched_exec`); v, moved by
    /// the stopper to CPU 2, later runs on CPU 1 too: neither has an
    /// affinity.
    #[test]
    fn a_stopper_move_that_holds_is_an_affinity() {
        let text = "cpus=3\n\
            <idle>-0 [001] 1.000000: sched_switch: swapper/1:0 [120] R ==> t:10 [120]\n\
            <idle>-0 [000] 1.000000: sched_switch: swapper/0:0 [120] R ==> sh:11 [120]\n\
            t-10 [001] 1.001000: sched_switch: t:10 [120] R ==> migration/1:13 [0]\n\
            migration/1-13 [001] 1.001050: sched_switch: migration/1:13 [0] S ==> swapper/1:0 [120]\n\
            <idle>-0 [002] 1.001100: sched_switch: swapper/2:0 [120] R ==> t:10 [120]\n\
            sh-11 [000] 1.002000: sched_switch: sh:11 [120] R ==> migration/0:9 [0]\n\
            migration/0-9 [000] 1.002050: sched_switch: migration/0:9 [0] S ==> swapper/0:0 [120]\n\
            <idle>-0 [001] 1.002100: sched_switch: swapper/1:0 [120] R ==> cat:11 [120]\n\
            t-10 [002] 1.003000: sched_switch: t:10 [120] S ==> swapper/2:0 [120]\n\
            cat-11 [001] 1.004000: sched_switch: cat:11 [120] S ==> swapper/1:0 [120]\n\
            <idle>-0 [002] 1.005000: sched_switch: swapper/2:0 [120] R ==> t:10 [120]\n\
            t-10 [002] 1.006000: sched_switch: t:10 [120] S ==> swapper/2:0 [120]\n\
            <idle>-0 [000] 1.006100: sched_switch: swapper/0:0 [120] R ==> v:12 [120]\n\
            v-12 [000] 1.007000: sched_switch: v:12 [120] R ==> migration/0:9 [0]\n\
            migration/0-9 [000] 1.007050: sched_switch: migration/0:9 [0] S ==> swapper/0:0 [120]\n\
            <idle>-0 [002] 1.007100: sched_switch: swapper/2:0 [120] R ==> v:12 [120]\n\
            v-12 [002] 1.008000: sched_switch: v:12 [120] S ==> swapper/2:0 [120]\n\
            <idle>-0 [001] 1.009000: sched_switch: swapper/1:0 [120] R ==> v:12 [120]\n\
            v-12 [001] 1.010000: sched_switch: v:12 [120] S ==> swapper/1:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let steps = |pid: i32| all.iter().find(|t| t.pid == pid).unwrap().steps.clone();
        assert_eq!(
            steps(10),
            [Step::OnCpu(1), Step::Run(1_000_000), Step::Affine(2), Step::OnCpu(2), Step::Run(1_900_000), Step::Sleep(2_000_000), Step::Run(1_000_000)]
        );
        assert!(!steps(11).iter().any(|s| matches!(s, Step::Affine(_))), "{:?}", steps(11));
        assert!(!steps(12).iter().any(|s| matches!(s, Step::Affine(_))), "{:?}", steps(12));
        // Free, t sets its affinity where the stopper moved it; pinned,
        // each part already runs on its CPU.
        let free = workload(&all, "t.txt", false, 10_000_000).unwrap().setup;
        let ops = ops_text(&free.tasks.iter().find(|s| s.comm == "t-10").unwrap().program.ops);
        assert_eq!(ops[..3], ["Run { cycles: Fixed(1000000.0), mem: 0.0 }", "SetAffinity { cpus: Some([2]) }", "Run { cycles: Fixed(1900000.0), mem: 0.0 }"]);
        let pinned = workload(&all, "t.txt", true, 10_000_000).unwrap().setup;
        assert!(pinned.tasks.iter().all(|s| !ops_text(&s.program.ops).iter().any(|o| o.starts_with("SetAffinity"))));
    }

    /// Each task runs in the class and at the priority the recording shows
    /// it at: r at prio 0 is SCHED_FIFO 99, n at 130 nice 10, b (boosted to
    /// 98 by priority inheritance for 1 of its 3 ms) nice 0; the stopper and
    /// schedutil's thread stay fair at nice 0 whatever they show.
    #[test]
    fn a_task_runs_in_the_class_and_priority_it_was_recorded_at() {
        let text = "cpus=1\n\
            <idle>-0 [000] 1.000000: sched_switch: swapper/0:0 [120] R ==> r:10 [0]\n\
            r-10 [000] 1.001000: sched_switch: r:10 [0] S ==> n:11 [130]\n\
            n-11 [000] 1.002000: sched_switch: n:11 [130] S ==> b:12 [98]\n\
            b-12 [000] 1.003000: sched_switch: b:12 [120] R ==> migration/0:13 [0]\n\
            migration/0-13 [000] 1.003100: sched_switch: migration/0:13 [0] S ==> b:12 [120]\n\
            b-12 [000] 1.005000: sched_switch: b:12 [120] S ==> sugov:0:14 [-1]\n\
            sugov:0-14 [000] 1.005100: sched_switch: sugov:0:14 [-1] S ==> swapper/0:0 [120]\n";
        let t = crate::trace::read::read_bytes(text.as_bytes(), Path::new("t.txt")).unwrap();
        let all = tasks(&t, 1_000_000, None, Wakeups::Follow);
        let prio = |pid: i32| all.iter().find(|t| t.pid == pid).unwrap().prio;
        assert_eq!([10, 11, 12, 13, 14].map(prio), [Some(0), Some(130), Some(120), Some(0), Some(-1)]);
        for pin in [false, true] {
            let setup = workload(&all, "t.txt", pin, 10_000_000).unwrap().setup;
            let class = |pid: &str| {
                let s = setup.tasks.iter().find(|s| s.comm.ends_with(pid)).unwrap();
                (s.sched.policy, s.sched.rt_priority, s.nice)
            };
            assert_eq!(class("-10"), (SchedPolicy::Fifo, 99, 0));
            assert_eq!(class("-11"), (SchedPolicy::Other, 0, 10));
            assert_eq!(class("-12"), (SchedPolicy::Other, 0, 0));
            assert_eq!(class("-13"), (SchedPolicy::Other, 0, 0));
            assert_eq!(class("-14"), (SchedPolicy::Other, 0, 0));
        }
        assert_eq!(class_of(Some(49), "irq/35-x").0.rt_priority, 50);
        assert_eq!(class_of(Some(100), "kworker/0:1H").1, -20);
    }
}

//! The kernel's own C0 time per wakeup, context switch and idle cycle.
//!
//! Each of these runs kernel code on a CPU that is awake: MPERF and APERF
//! count it, the core draws active power for it, and it runs at the core
//! clock. Three paths are charged, each where the kernel runs it (the same
//! functions in v5.2 and v6.8):
//!
//! * the wakeup, on the waker's CPU in the waker's context: try_to_wake_up()
//!   with select_task_rq() and ttwu_do_activate()'s enqueue (or the wake
//!   list's llist_add and IPI), kernel/sched/core.c. Charged as work of the
//!   waking task before its next op: it is the waker's runtime, so PELT
//!   counts it, as update_curr() does for the kernel's.
//! * the switch from one task to another: __schedule() with
//!   pick_next_task(), context_switch() (switch_mm_irqs_off(), switch_to())
//!   and finish_task_switch(). Charged as work of the incoming task before it
//!   goes on (its exec_start is set in set_next_entity() before the switch).
//! * the idle cycle, in two halves, in C0 but not a task's: PELT does not
//!   count it (the idle task is not a fair entity), APERF/MPERF and the
//!   clock vote do. Its entry half runs before the idle state, while the
//!   task that blocked is already waiting on another CPU: the blocking
//!   task's __schedule() into the idle task, then do_idle() ->
//!   cpuidle_idle_call() with tick_nohz_idle_enter(), the governor's
//!   select and tick_nohz_idle_stop_tick() (kernel/sched/idle.c,
//!   kernel/time/tick-sched.c). The CPU stays in C0 with no task for that
//!   long (machine/idle.rs `go_idle`), idle to the scheduler's placement
//!   (nr_running is 0); a task woken onto it meanwhile is picked at once,
//!   as the loop sees need_resched before the state is entered
//!   (cpuidle_idle_call() checks it last), and no state is entered. Its
//!   exit half runs on the path of the task that woke the CPU: the
//!   interrupt's entry and exit, tick_nohz_idle_exit() and schedule_idle()
//!   back to a task, added to the idle exit (machine/idle.rs), its energy
//!   beyond the state's at active power (`charge_kpath_energy`).
//!
//! The numbers are cycles, so a slower clock makes them longer. They were
//! measured on an AMD EPYC (Zen 4) KVM guest, Linux 6.18, at 3.695 GHz
//! (tools/calibrate/kpath/: the fastest of 3000 batches of 100 on one CPU,
//! which no other task interrupted):
//!
//! * switch: two processes yielding to each other on one CPU, 1373 ns per
//!   yield, less sched_yield() alone (no switch), 512 ns: 861 ns = 3180
//!   cycles.
//! * wakeup: a pipe ping-pong between two processes on one CPU, 2486 ns per
//!   direction, less a write()+read() that blocks nobody (778 ns) and the
//!   switch: 847 ns = 3130 cycles. This includes the wakee's earlier block
//!   (dequeue_task() in its __schedule()), charged here with the wakeup.
//! * idle cycle: twice the switch (into the idle task and out of it), 6360
//!   cycles. Assumed: the guest cannot show the rest (the governor's
//!   select, the tick's stop and restart): its idle exits and timer writes
//!   trap to the hypervisor (a 1 ns nanosleep took 12.9 µs, a pipe
//!   ping-pong across two CPUs 14.5 µs per direction), so this is a lower
//!   bound of the idle loop's own code.
//!
//! The guest's kernel runs with retpolines and AMD's Safe RET. At the
//! boundary every path crosses it is no dearer than the Intel servers of
//! 2018–2020: a null system call costs it 556–610 cycles, a Broadwell-EP
//! or Haswell-EP with page-table isolation (their default from v4.15)
//! 580–630 (tools/calibrate/syscall/). The paths' own code on those parts
//! is not measured; no published per-path figure for them was found
//! (tools/calibrate/kpath/README.md).
//!
//! Limits: a wakeup from an interrupt (a timer, an IO completion) is not
//! charged to the CPU it interrupts; the switch path of a preemption is
//! charged to the incoming task as any other; kernel code runs at the
//! task's memory-bound share when it is added to a preempted task's work.

use crate::platform::CpuId;
use crate::sched::TaskId;
use super::rq::{CpuRq, Task};
use super::Engine;

/// Cycles of one wakeup (try_to_wake_up() with the wakee's block).
pub const WAKE_CYCLES: f64 = 3_130.0;
/// Cycles of one switch between tasks (__schedule() to finish_task_switch()).
pub const SWITCH_CYCLES: f64 = 3_180.0;
/// Cycles of one idle cycle's kernel code outside the idle state (assumed:
/// two switches, see the header).
pub const IDLE_CYCLES: f64 = 2.0 * SWITCH_CYCLES;
/// Of which before the state (the switch into the idle task, the
/// governor's select, the tick's stop) and after it (the tick's restart,
/// the switch out): assumed one switch each.
pub const IDLE_ENTRY_CYCLES: f64 = SWITCH_CYCLES;
pub const IDLE_EXIT_CYCLES: f64 = IDLE_CYCLES - IDLE_ENTRY_CYCLES;

/// The cycles a run charges per path (all zero with `kpath=off`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Kpath {
    pub wake_cycles: f64,
    pub switch_cycles: f64,
    pub idle_entry_cycles: f64,
    pub idle_exit_cycles: f64,
}

impl Kpath {
    #[must_use]
    pub fn new(on: bool) -> Self {
        if on {
            Kpath {
                wake_cycles: WAKE_CYCLES,
                switch_cycles: SWITCH_CYCLES,
                idle_entry_cycles: IDLE_ENTRY_CYCLES,
                idle_exit_cycles: IDLE_EXIT_CYCLES,
            }
        } else {
            Kpath::default()
        }
    }
}

/// [`Engine::kpath_take`] on the runqueue and task already in hand (the
/// interpreter's loop holds both).
#[inline]
pub(crate) fn kpath_take_into(rq: &mut CpuRq, tk: &mut Task) -> bool {
    let owed = std::mem::take(&mut rq.kpath_pending);
    if owed <= 0.0 {
        return false;
    }
    if tk.remaining_cycles <= 0.0 {
        // Kernel code runs at the core clock.
        tk.mem = 0.0;
    }
    tk.remaining_cycles += owed;
    tk.kpath_cycles += owed;
    true
}

impl Engine {
    /// The task running on `cpu` has kernel work to do before its next op.
    #[inline]
    pub(crate) fn kpath_owe(&mut self, cpu: CpuId, cycles: f64) {
        self.rqs[cpu].kpath_pending += cycles;
    }

    /// Move the kernel work owed on `cpu` onto its running task `t`: true if
    /// there was some (the task now computes it).
    #[inline]
    pub(crate) fn kpath_take(&mut self, cpu: CpuId, t: TaskId) -> bool {
        kpath_take_into(&mut self.rqs[cpu], &mut self.tasks[t])
    }

    /// `done` cycles of `t` retired: the kernel's go first and are not the
    /// workload's.
    #[inline]
    pub(crate) fn retire_cycles(&mut self, t: TaskId, done: f64) {
        let tk = &mut self.tasks[t];
        let kernel = done.min(tk.kpath_cycles);
        tk.kpath_cycles -= kernel;
        self.record.cycles_retired += done - kernel;
    }

    /// `cycles` of the idle cycle's kernel code on `cpu` at its clock now, ns.
    pub(crate) fn kpath_idle_ns(&self, cpu: CpuId, cycles: f64) -> u64 {
        if cycles <= 0.0 {
            return 0;
        }
        let khz = self.domains[self.plat.cpus[cpu].freq_domain].cur_khz;
        (cycles * 1e6 / f64::from(khz)).ceil() as u64
    }
}

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
//!   (`cpu_frequency`, or devlib's markers; `unknown_khz` before the first),
//!   so a replay at another frequency runs longer or shorter; on a known
//!   machine also scaled by the CPU's capacity and shared with busy SMT
//!   siblings, as the engine itself retires work;
//! * a **sleep** is the time from blocking to the `sched_wakeup` that ended
//!   it (or to the next switch in, when the wakeup is not traced). It is
//!   replayed as a timed sleep: the replay keeps when tasks wake, not who
//!   woke them, so a chain of wakeups between tasks does not stretch or
//!   shrink with the replayed speed;
//! * the time before a task's first appearance is a sleep from the trace's
//!   start; a task running when the trace starts runs from the start; a
//!   `sched_process_exit` or a dead `prev_state` ends its program.
//!
//! With `pin`, each task may run only on the CPUs it ran on in the trace
//! (for a replay on the machine that recorded it: placement then follows the
//! recording instead of being re-simulated).
//!
//! Left out: who woke whom (see above), priorities and nice
//! levels, the memory-bound share of the work (all work scales with
//! frequency).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::platform::Platform;
use crate::trace::{EventKind, Trace};

/// One step of a task's replayed program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Work in cycles.
    Run(u64),
    /// A timed sleep, ns.
    Sleep(u64),
}

/// A task as the trace shows it.
#[derive(Debug, Clone)]
pub struct ReplayTask {
    pub pid: i32,
    pub comm: String,
    pub steps: Vec<Step>,
    /// The CPUs it ran on.
    pub cpus: std::collections::BTreeSet<usize>,
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
    /// Work of the burst so far, cycles (f64: kHz × ns / 10⁶ sums exactly
    /// enough, rounded once per burst).
    cycles: f64,
}

impl Task {
    fn end_burst(&mut self) {
        let c = self.cycles.round() as u64;
        if c > 0 {
            self.steps.push(Step::Run(c));
        }
        self.cycles = 0.0;
    }

    fn sleep(&mut self, ns: u64) {
        if ns > 0 {
            self.steps.push(Step::Sleep(ns));
        }
    }
}

/// How fast each CPU retired work, in cycles per ns: its frequency
/// (`unknown_khz` before the trace gives one) and, on a known machine, its
/// capacity and its busy SMT siblings, as the engine's `cpu_speed` counts
/// them (memory-bound share 0).
struct Clocks<'p> {
    khz: Vec<Option<u32>>,
    unknown_khz: u32,
    machine: Option<&'p Platform>,
}

impl Clocks<'_> {
    fn rate(&self, cpu: usize, current: &[Option<i32>]) -> f64 {
        let f = f64::from(self.khz[cpu].unwrap_or(self.unknown_khz)) / 1e6;
        let Some(p) = self.machine else { return f };
        let core = &p.cores[p.cpus[cpu].core];
        let ct = &p.cpu_types[core.cpu_type];
        let busy_siblings = core.cpus.iter().filter(|&&s| s != cpu && current.get(s).is_some_and(Option::is_some)).count();
        let smt = if busy_siblings > 0 { ct.smt_throughput / (busy_siblings + 1) as f64 } else { 1.0 };
        f * smt * f64::from(ct.capacity) / 1024.0
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
}

/// Rebuild every task's program from `trace`. `machine`, when it has the
/// trace's CPUs, is the machine that recorded it: bursts are then counted
/// with its CPUs' capacities and SMT sharing.
pub fn tasks(trace: &Trace, unknown_khz: u32, machine: Option<&Platform>) -> Vec<ReplayTask> {
    let (t0, t1) = trace.span_ns();
    let machine = machine.filter(|p| p.nr_cpus() >= trace.nr_cpus);
    let nr_cpus = machine.map_or(trace.nr_cpus, Platform::nr_cpus).max(1);
    let mut r = Replayer {
        tasks: BTreeMap::new(),
        current: vec![None; nr_cpus],
        clocks: Clocks { khz: vec![None; nr_cpus], unknown_khz, machine },
    };
    for e in &trace.events {
        let t = e.ts_ns;
        match &e.kind {
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
                    tk.cpus.insert(c);
                    tk.state = State::Running { cpu: c, since_ns: t0 };
                    r.current[c] = Some(s.prev_pid);
                }
                r.flush_core(c, t);
                r.current[c] = None;
                if s.prev_pid != 0 {
                    let tk = r.task(s.prev_pid, &s.prev_comm);
                    if matches!(tk.state, State::Running { .. }) {
                        if s.prev_state.is_dead() {
                            tk.end_burst();
                            tk.state = State::Dead;
                        } else if s.prev_state.is_runnable() {
                            tk.state = State::Runnable;
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
                        tk.cpus.insert(c);
                        tk.state = State::Running { cpu: c, since_ns: t };
                        r.current[c] = Some(s.next_pid);
                    }
                }
            }
            EventKind::SchedWakeup { pid, comm, .. } if *pid != 0 => {
                let tk = r.task(*pid, comm);
                match tk.state {
                    State::Unseen => {
                        tk.sleep(t - t0);
                        tk.state = State::Runnable;
                    }
                    State::Blocked { since_ns } => {
                        tk.sleep(t - since_ns);
                        tk.state = State::Runnable;
                    }
                    _ => {}
                }
            }
            EventKind::SchedProcessExit { pid, .. } => {
                if let Some(State::Running { cpu, .. }) = r.tasks.get(pid).map(|tk| tk.state) {
                    r.flush_core(cpu, t);
                    r.current[cpu] = None;
                }
                if let Some(tk) = r.tasks.get_mut(pid) {
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
            tk.end_burst();
            ReplayTask { pid, comm: tk.comm, steps: tk.steps, cpus: tk.cpus }
        })
        .filter(|t| t.steps.iter().any(|s| matches!(s, Step::Run(_))))
        .collect()
}

fn new_task(comm: &str) -> Task {
    Task { comm: comm.to_string(), steps: Vec::new(), cpus: std::collections::BTreeSet::new(), state: State::Unseen, cycles: 0.0 }
}

/// The tasks as a workload file of govlab's task language; with `pin`, each
/// task may run only on the CPUs it ran on in the trace. Each program ends
/// waiting for the end of the trace's span (`timer`, absolute from the
/// start), so the replay lasts as long as the recording.
pub fn workload_toml(tasks: &[ReplayTask], source: &str, pin: bool, span_ns: u64) -> Result<String> {
    if tasks.is_empty() {
        return Err(Error::invalid("trace replay", "trace", source, "a trace with at least one task that runs (sched_switch events)"));
    }
    let mut s = String::new();
    let _ = writeln!(s, "description = {}", toml_str(&format!("replay of {source}: {} tasks", tasks.len())));
    for t in tasks {
        let _ = writeln!(s, "\n[[task]]\ncomm = {}", toml_str(&format!("{}-{}", t.comm, t.pid)));
        if pin {
            let cpus: Vec<String> = t.cpus.iter().map(usize::to_string).collect();
            let _ = writeln!(s, "cpus = [{}]", cpus.join(", "));
        }
        s.push_str("ops = [\n");
        for step in &t.steps {
            match step {
                Step::Run(c) => {
                    let _ = writeln!(s, "  {{ run_cycles = {c} }},");
                }
                Step::Sleep(ns) => {
                    let _ = writeln!(s, "  {{ sleep = \"{ns}ns\" }},");
                }
            }
        }
        let _ = writeln!(s, "  {{ timer = \"{}ns\" }},\n]", span_ns.max(1));
    }
    Ok(s)
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
        let tasks = tasks(&t, 500_000, None);
        let a = tasks.iter().find(|t| t.pid == 10).unwrap();
        // a runs from the start (1 ms at 1 GHz), is preempted, runs again
        // 1 ms at 2 GHz, blocks; sleeps 2 ms to its wakeup; runs 0.5 ms on
        // CPU 1 at 1 GHz; dies.
        assert_eq!(a.steps, [Step::Run(1_000_000 + 2_000_000), Step::Sleep(2_000_000), Step::Run(500_000)]);
        let b = tasks.iter().find(|t| t.pid == 11).unwrap();
        // b first runs at 1 ms: 1 ms at 1 GHz then 1 ms at 2 GHz; blocked
        // from 3 ms with no traced wakeup, back at 10 ms until the end.
        assert_eq!(b.steps, [Step::Sleep(1_000_000), Step::Run(3_000_000), Step::Sleep(7_000_000)]);
        assert_eq!(a.cpus.iter().copied().collect::<Vec<_>>(), [0, 1]);
        let toml = workload_toml(&tasks, "t.txt", true, 9_000_000).unwrap();
        assert!(toml.contains("{ timer = \"9000000ns\" },\n]"));
        assert!(toml.contains("cpus = [0, 1]"));
        assert!(toml.contains("comm = \"a-10\"") && toml.contains("{ run_cycles = 3000000 }") && toml.contains("{ sleep = \"2000000ns\" }"));
    }
}

//! govlab's PELT against the kernel's own values in a real recording: the
//! Juno r0 trace `lisa/sched_load` (kernel `4.19.0-07801-gf317706`, a
//! 4.19-based development tree with the out-of-tree `sched_load_se`
//! tracepoint, per its `plat_info.yml`).
//!
//! For every task, its timeline is rebuilt from the recording: running
//! between the `sched_switch` that puts it on a CPU and the one that takes
//! it off; runnable after a switch-out in state R; asleep after any other
//! switch-out, until its next `sched_load_se` event (the enqueue's PELT
//! update, whichever CPU emits it) makes it runnable again;
//! `sched_migrate_task` moves it. Each CPU's frequency scale follows the
//! `cpu_frequency` events (`freq × 1024 / max`, the arm64 `arch_set_freq_scale`
//! rule) and its capacity is the recording's `cpu-capacities` (446 LITTLE,
//! 1024 big). The values compared are the task's `load`/`util` in the
//! `sched_load_se` events emitted by the task's own CPU.
//!
//! What the trace cannot give is filled in and said so: (1) the PELT
//! state at the start of each chain (a chain runs from one own-CPU event
//! to the task's next migration or the end): the sums are rebuilt from the
//! first event's averages at the middle of their rounding interval; (2)
//! where the task's 1024-unit periods start (`period_contrib` at that
//! first event): every one of the 1024 positions is tried and the chain
//! keeps the one with the smallest largest error; (3) the frequency
//! before a domain's first `cpu_frequency` event: its first value; (4) a
//! wakeup whose enqueue emitted no event: at the switch-in (no waiting).
//! The time PELT reads is the event's trace time (the rq clock is a few µs
//! earlier).
//!
//! Found from the data: **the values imply the divider `LOAD_AVG_MAX`**
//! (47742, mainline before 625ed2bf049d, v4.13 inferred), not mainline
//! 4.19's `LOAD_AVG_MAX − 1024 + period_contrib`: with the former every
//! util is within 3 and all but one load (off by 5) within 3; with the
//! latter the new tasks (sudo, sh, shutils at util ~500) are off by up to
//! 16. The development tree evidently averages with the older divider.
//! The counts are printed (`cargo test -p govlab-core --test it pelt_real
//! -- --nocapture`).

use std::collections::HashMap;

use govlab_core::kernel::KernelConfig;
use govlab_core::params::Spec;
use govlab_core::sched::pelt::{
    update_entity_era, PeltDivider, PeltEra, PeltRules, RqClockPelt, SchedAvg, LOAD_AVG_MAX, NICE_0_LOAD, PELT_MIN_DIVIDER,
};
use govlab_core::trace::{read_path, EventKind};

use crate::traces::real_data;

const CAPACITY: [u64; 6] = [446, 1024, 1024, 446, 446, 446];
const MAX_KHZ: [u64; 6] = [850_000, 1_100_000, 1_100_000, 850_000, 850_000, 850_000];
/// Frequency domains of the recording (plat_info.yml `freq-domains`).
const DOMAIN: [usize; 6] = [0, 1, 1, 0, 0, 0];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum St {
    Asleep,
    Runnable,
    Running,
}

/// One step of a task's timeline, in time order.
#[derive(Clone, Debug)]
enum Step {
    /// The task's state from now on.
    State(St),
    /// It now belongs to `cpu`'s runqueue (migration): a new chain.
    Cpu(usize),
    /// A `sched_load_se` event: (emitted by the task's own CPU, load, util).
    Load { own: bool, load: u64, util: u64 },
}

/// Per CPU: (time, busy) changes and (time, freq scale) changes.
struct Machine {
    busy: Vec<Vec<(u64, bool)>>,
    scale: Vec<Vec<(u64, u64)>>,
}

impl Machine {
    fn scale_at(&self, cpu: usize, t: u64) -> u64 {
        let v = &self.scale[DOMAIN[cpu]];
        let i = v.partition_point(|&(ts, _)| ts <= t);
        if i == 0 {
            v.first().map_or(1024, |x| x.1)
        } else {
            v[i - 1].1
        }
    }

    /// The v6.8 PELT clock of `cpu` at each time of `times` (sorted).
    fn clock_pelt(&self, cpu: usize, until: u64) -> Vec<(u64, u64)> {
        // Walk every busy/frequency change of the CPU up to `until`.
        let mut pts: Vec<u64> = self.busy[cpu].iter().map(|x| x.0).collect();
        pts.extend(self.scale[DOMAIN[cpu]].iter().map(|x| x.0));
        pts.retain(|&t| t <= until);
        pts.sort_unstable();
        pts.dedup();
        let mut clk = RqClockPelt::default();
        let t0 = pts.first().copied().unwrap_or(0);
        clk.clock_task = t0;
        clk.clock_pelt = t0;
        let mut out = Vec::with_capacity(pts.len());
        for &t in &pts {
            // Advance over [prev, t] with the state in force before t.
            let busy = self.busy_before(cpu, t);
            let s = self.scale_at(cpu, t.saturating_sub(1));
            clk.update(t, !busy, CAPACITY[cpu], s);
            if !self.busy_before(cpu, t + 1) {
                clk.update_idle(0);
            }
            out.push((t, clk.now()));
        }
        out
    }

    fn busy_before(&self, cpu: usize, t: u64) -> bool {
        let v = &self.busy[cpu];
        let i = v.partition_point(|&(ts, _)| ts < t);
        i > 0 && v[i - 1].1
    }
}

/// The PELT clock at `t` from the change points (linear between them with
/// the rate in force).
fn pelt_at(machine: &Machine, pts: &[(u64, u64)], cpu: usize, at: u64) -> u64 {
    let idx = pts.partition_point(|&(ts, _)| ts <= at);
    if idx == 0 {
        return at;
    }
    let (since, clock) = pts[idx - 1];
    let delta = at - since;
    if machine.busy_before(cpu, at) {
        clock + delta * CAPACITY[cpu] / 1024 * machine.scale_at(cpu, at) / 1024
    } else {
        clock + delta
    }
}

/// Counts over every compared value (a `load` and a `util` per event).
struct Outcome {
    compared: usize,
    exact: usize,
    within_1: usize,
    within_3: usize,
    max_load: u64,
    max_util: u64,
}

impl Outcome {
    fn max_err(&self) -> u64 {
        self.max_load.max(self.max_util)
    }
}

/// Replay every task's chains under `era` and `divider`; errors of load
/// and util both count.
fn replay(era: PeltEra, divider: PeltDivider) -> Outcome {
    let trace = read_path(&real_data().join("lisa/sched_load/trace.dat")).unwrap();
    let mut busy = vec![Vec::new(); 6];
    let mut scale = vec![Vec::new(); 2];
    let mut tasks: HashMap<i32, (usize, Vec<(u64, Step)>)> = HashMap::new();
    for e in &trace.events {
        let t = e.ts_ns;
        let cpu = e.cpu as usize;
        match &e.kind {
            EventKind::SchedSwitch(s) => {
                busy[cpu].push((t, s.next_pid != 0));
                if s.prev_pid != 0 {
                    let st = if s.prev_state.is_runnable() { St::Runnable } else { St::Asleep };
                    tasks.entry(s.prev_pid).or_insert((cpu, Vec::new())).1.push((t, Step::State(st)));
                }
                if s.next_pid != 0 {
                    let e = tasks.entry(s.next_pid).or_insert((cpu, Vec::new()));
                    e.1.push((t, Step::Cpu(cpu)));
                    e.1.push((t, Step::State(St::Running)));
                }

            }
            EventKind::SchedMigrateTask { pid, orig_cpu, dest_cpu, .. } => {
                tasks.entry(*pid).or_insert((*orig_cpu as usize, Vec::new())).1.push((t, Step::Cpu(*dest_cpu as usize)));
            }
            EventKind::CpuFrequency { state, cpu_id } => {
                let c = *cpu_id as usize;
                let d = DOMAIN[c];
                if c == [0, 1][d] {
                    scale[d].push((t, u64::from(*state) * 1024 / MAX_KHZ[c]));
                }
            }
            EventKind::Other { name, fields } if &**name == "sched_load_se" => {
                let f: HashMap<&str, &str> = fields.split(' ').filter_map(|kv| kv.split_once('=')).collect();
                let pid: i32 = f["pid"].parse().unwrap();
                if pid <= 0 {
                    continue;
                }
                let se_cpu: usize = f["cpu"].parse().unwrap();
                let step = Step::Load { own: se_cpu == cpu, load: f["load"].parse().unwrap(), util: f["util"].parse().unwrap() };
                tasks.entry(pid).or_insert((se_cpu, Vec::new())).1.push((t, step));
            }
            _ => {}
        }
    }
    let m = Machine { busy, scale };
    let end = trace.events.last().unwrap().ts_ns;
    let clocks: Vec<Vec<(u64, u64)>> = (0..6).map(|c| m.clock_pelt(c, end)).collect();

    let mut out = Outcome { compared: 0, exact: 0, within_1: 0, within_3: 0, max_load: 0, max_util: 0 };
    for (_pid, (first_cpu, steps)) in tasks {
        // Split into chains at migrations (and at the first own event).
        let mut chains: Vec<(usize, Vec<(u64, Step)>)> = Vec::new();
        let mut cpu = first_cpu;
        let mut st = St::Asleep;
        let mut cur: Vec<(u64, Step)> = Vec::new();
        for (t, s) in steps {
            match s {
                Step::Cpu(c) if c != cpu => {
                    if !cur.is_empty() {
                        chains.push((cpu, std::mem::take(&mut cur)));
                    }
                    cpu = c;
                }
                Step::Cpu(_) => {}
                Step::State(x) => {
                    st = x;
                    cur.push((t, Step::State(x)));
                }
                Step::Load { .. } => {
                    cur.push((t, s.clone()));
                    if st == St::Asleep {
                        st = St::Runnable;
                        cur.push((t, Step::State(St::Runnable)));
                    }
                }
            }
        }
        if !cur.is_empty() {
            chains.push((cpu, cur));
        }
        for (cpu, chain) in chains {
            let Some(seed) = chain.iter().position(|(_, s)| matches!(s, Step::Load { own: true, .. })) else { continue };
            // State before the seed event: the last State step before it.
            let st0 = chain[..seed].iter().rev().find_map(|(_, s)| if let Step::State(x) = s { Some(*x) } else { None });
            let n_obs = chain[seed + 1..].iter().filter(|(_, s)| matches!(s, Step::Load { own: true, .. })).count();
            if n_obs == 0 {
                continue;
            }
            let mut best: Option<(u64, Vec<(u64, u64)>)> = None;
            for pc0 in 0..1024 {
                let errs = run_chain(era, divider, &m, &clocks[cpu], cpu, &chain, seed, st0.unwrap_or(St::Asleep), pc0);
                let worst = errs.iter().map(|&(l, u)| l.max(u)).max().unwrap_or(0);
                if best.as_ref().map_or(true, |b| worst < b.0) {
                    best = Some((worst, errs));
                }
            }
            let (_, errs) = best.unwrap();
            for (l, u) in errs {
                for e in [l, u] {
                    out.compared += 1;
                    out.exact += usize::from(e == 0);
                    out.within_1 += usize::from(e <= 1);
                    out.within_3 += usize::from(e <= 3);
                }
                out.max_load = out.max_load.max(l);
                out.max_util = out.max_util.max(u);
            }
        }
    }
    out
}

/// Run one chain from its seed event with the task's period position
/// `pc0` there; the (load, util) errors at every later own-CPU event.
#[allow(clippy::too_many_arguments)]
fn run_chain(
    era: PeltEra,
    divider: PeltDivider,
    m: &Machine,
    clock: &[(u64, u64)],
    cpu: usize,
    chain: &[(u64, Step)],
    seed: usize,
    st0: St,
    pc0: u32,
) -> Vec<(u64, u64)> {
    let now_of = |t: u64| match era {
        PeltEra::ScaledContributions => t,
        PeltEra::ScaledClock => pelt_at(m, clock, cpu, t),
    };
    let (t_seed, Step::Load { load, util, .. }) = &chain[seed] else { unreachable!() };
    let mut se = SchedAvg { last_update_time: now_of(*t_seed), period_contrib: pc0, load_avg: *load, util_avg: *util, ..SchedAvg::default() };
    let div = match divider {
        PeltDivider::PeriodContrib => PELT_MIN_DIVIDER + u64::from(pc0),
        PeltDivider::LoadAvgMax => LOAD_AVG_MAX,
    };
    // The middle of each average's rounding interval; load_sum unweighted.
    se.util_sum = ((2 * util + 1) * div / 2) as u32;
    se.load_sum = (2 * load + 1) * div / 2 / NICE_0_LOAD;
    se.runnable_sum = u64::from(se.util_sum);
    let mut st = st0;
    let mut errs = Vec::new();
    for (t, s) in &chain[seed + 1..] {
        match s {
            Step::State(x) => {
                advance(era, divider, m, cpu, &mut se, now_of(*t), *t, st);
                st = *x;
            }
            Step::Load { own, load, util } => {
                advance(era, divider, m, cpu, &mut se, now_of(*t), *t, st);
                if *own {
                    errs.push((se.load_avg.abs_diff(*load), se.util_avg.abs_diff(*util)));
                }
            }
            Step::Cpu(_) => {}
        }
    }
    errs
}

#[allow(clippy::too_many_arguments)]
fn advance(era: PeltEra, divider: PeltDivider, m: &Machine, cpu: usize, se: &mut SchedAvg, now: u64, t: u64, st: St) {
    // The frequency may change while the task runs: account each constant
    // stretch apart under the old rules.
    if era == PeltEra::ScaledContributions && st != St::Asleep {
        let from = se.last_update_time;
        let mut cuts: Vec<u64> = m.scale[DOMAIN[cpu]].iter().map(|x| x.0).filter(|&c| c > from && c < t).collect();
        cuts.push(t);
        for c in cuts {
            let s = m.scale_at(cpu, c.saturating_sub(1));
            update_entity_era(era, divider, c, se, true, st == St::Running, NICE_0_LOAD, s, CAPACITY[cpu]);
        }
        return;
    }
    let s = m.scale_at(cpu, t);
    update_entity_era(era, divider, now, se, st != St::Asleep, st == St::Running, NICE_0_LOAD, s, CAPACITY[cpu]);
}

#[test]
#[allow(clippy::print_stdout)]
fn pelt_before_v5_1_matches_the_juno_4_19_recording() {
    // The rules `--kernel 4.19` runs (the engine's PeltRules::for_kernel),
    // with the divider the data implies.
    let k419 = PeltRules::for_kernel(&KernelConfig::from_spec(&Spec::new("4.19")).unwrap());
    assert_eq!(k419.era, PeltEra::ScaledContributions);
    assert_eq!(k419.divider, PeltDivider::PeriodContrib);
    let k68 = PeltRules::for_kernel(&KernelConfig::default());
    assert_eq!(k68, PeltRules { era: PeltEra::ScaledClock, divider: PeltDivider::PeriodContrib });
    let old = replay(k419.era, PeltDivider::LoadAvgMax);
    let old_pc = replay(k419.era, k419.divider);
    let new = replay(k68.era, k68.divider);
    for (name, o) in [
        ("pre-5.1 rules, divider LOAD_AVG_MAX", &old),
        ("pre-5.1 rules, divider LOAD_AVG_MAX-1024+period_contrib", &old_pc),
        ("v6.8 rules (clock_pelt)", &new),
    ] {
        println!(
            "{name}: {} values, {} exact, {} within 1, {} within 3; largest error load {}, util {}",
            o.compared, o.exact, o.within_1, o.within_3, o.max_load, o.max_util
        );
    }
    assert!(old.compared > 100, "{}", old.compared);
    // Every util within 3; one load value (sshd, whose wakeups emit no
    // event, so its waiting time before running is not in the trace) is
    // off by 5, the rest within 3.
    assert!(old.max_util <= 3, "util off by {}", old.max_util);
    assert!(old.max_load <= 5, "load off by {}", old.max_load);
    assert!(old.compared - old.within_3 <= 1, "{} of {} beyond 3", old.compared - old.within_3, old.compared);
    // The data's divider: the fixed one fits, period_contrib's does not.
    assert!(old_pc.max_err() > 3 * old.max_err());
    // v6.8's rules are far off.
    assert!(new.max_err() > 20 * old.max_err(), "{}", new.max_err());
}

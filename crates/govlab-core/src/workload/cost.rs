//! What a run will cost, estimated from the workload's programs before it
//! starts.
//!
//! The engine's wall time grows with the ops its tasks execute: each takes
//! its turn in the interpreter, and most (a run segment, a sleep or timer
//! expiry, a message, an IO completion) are an event in the queue. A
//! workload file or rt-app file can ask for far more than it means: a
//! forever loop of `timer = "1us"` is a million ops a simulated second, and
//! in 100,000 instances days of wall time for ten simulated seconds. So a
//! run's ops are estimated first, and one above [`MAX_EVENTS`] is refused
//! unless the caller raises the ceiling (`max_events`).
//!
//! The estimate walks each program once. An op that takes simulated time
//! on its own takes at least: `Run`, its cycles at the platform's fastest
//! clock; `Sleep`, its mean; `Timer`, its period. Every other op (a
//! message, a lock, IO) is counted but taken as instant: its wait is
//! someone else's time, already counted. A loop of `count` passes costs
//! `count` times its body; a forever loop costs its body's ops over its
//! body's time for the rest of the run (a body that takes no time of its
//! own, a task woken by others, adds nothing there: its wakers are
//! counted). The two sides of a random choice are weighted by their
//! probability; a fork costs its count times the template's ops. Each
//! source arrival is one op.
//!
//! It is an estimate, not a bound: a receiver's ops are its senders' and
//! are not counted twice, and a task that runs slower than its fastest
//! clock does fewer.

use super::{Op, Program, Setup};
use crate::platform::Platform;

/// Most ops a run may take without the caller raising the ceiling: 10^9
/// (assumed: the engine does a few million ops a wall second on one core,
/// so this is minutes of wall time; every built-in workload at its defaults
/// is far below it, checked by a test).
pub const MAX_EVENTS: u64 = 1_000_000_000;

/// One pass through a stretch of a program.
#[derive(Debug, Clone, Copy, Default)]
struct Pass {
    /// Ops executed once through.
    ops: f64,
    /// Simulated time the ops take on their own at least, ns.
    ns: f64,
    /// Ops per simulated second that go on for the rest of the run (forever
    /// loops, and forked tasks that run one).
    per_s: f64,
    /// Never ends (a forever loop): what follows never runs.
    endless: bool,
}

impl Pass {
    fn then(self, next: Pass) -> Pass {
        if self.endless {
            return self;
        }
        Pass { ops: self.ops + next.ops, ns: self.ns + next.ns, per_s: self.per_s + next.per_s, endless: next.endless }
    }

    fn times(self, k: f64) -> Pass {
        if self.endless {
            return self;
        }
        Pass { ops: self.ops * k, ns: self.ns * k, per_s: self.per_s * k, endless: false }
    }

    fn forever(self) -> Pass {
        if self.endless {
            return self;
        }
        let own = if self.ns > 0.0 { self.ops * 1e9 / self.ns } else { 0.0 };
        Pass { ops: 0.0, ns: 0.0, per_s: self.per_s + own, endless: true }
    }

    /// `self` with probability `p`, else `other`.
    fn or(self, p: f64, other: Pass) -> Pass {
        let mix = |a: f64, b: f64| p * a + (1.0 - p) * b;
        Pass {
            ops: mix(self.ops, other.ops),
            ns: mix(self.ns, other.ns),
            per_s: mix(self.per_s, other.per_s),
            endless: self.endless && other.endless,
        }
    }

    /// Ops over `duration_ns`: the finite part, cut to what fits in the
    /// run when it takes time, plus the rest-of-run rate.
    fn over(self, duration_ns: f64) -> f64 {
        let fits = if self.ns > duration_ns { duration_ns / self.ns } else { 1.0 };
        self.ops * fits + self.per_s * duration_ns / 1e9
    }
}

/// The ops a run of `setup` on `platform` for `duration_ns` is estimated
/// to execute (see the module's doc).
pub fn estimate(setup: &Setup, platform: &Platform, duration_ns: u64) -> f64 {
    let mut walker = Walker { khz: fastest_khz(platform), templates: vec![Pass::default(); setup.templates.len()] };
    // A template's cost includes the templates it forks: known after as
    // many rounds as forks nest (a template forking itself stops there).
    for _ in 0..MAX_FORK_DEPTH {
        let round = setup.templates.iter().map(|t| walker.program(&t.program)).collect();
        walker.templates = round;
    }
    let d = duration_ns as f64;
    let tasks: f64 = setup
        .tasks
        .iter()
        .map(|t| f64::from(t.instances) * walker.program(&t.program).over(d))
        .sum();
    let arrivals: f64 = setup.sources.iter().map(|s| s.rate_per_s * d / 1e9).sum();
    tasks + arrivals
}

/// The platform's fastest work rate, in reference cycles per ms (kHz).
fn fastest_khz(platform: &Platform) -> f64 {
    (0..platform.cpu_types.len())
        .map(|t| f64::from(platform.cpu_types[t].max_khz()) * platform.work_per_cycle(t))
        .fold(1.0, f64::max)
}

/// Rounds of templates forking templates followed.
const MAX_FORK_DEPTH: usize = 4;

struct Walker {
    /// [`fastest_khz`].
    khz: f64,
    /// One pass of each template's program, forks as of the last round.
    templates: Vec<Pass>,
}

impl Walker {
    fn program(&self, p: &Program) -> Pass {
        self.stretch(&p.ops, 0, p.ops.len())
    }

    /// Ops `from..to` once through; loops and choices are nested within.
    fn stretch(&self, ops: &[Op], from: usize, to: usize) -> Pass {
        let mut pass = Pass::default();
        let mut i = from;
        while i < to.min(ops.len()) {
            let (step, next) = match ops[i] {
                Op::Loop { count, end } => {
                    let end = (end as usize).clamp(i + 1, to);
                    let body = self.stretch(ops, i + 1, end);
                    let step = match count {
                        Some(n) => body.times(n as f64),
                        None => body.forever(),
                    };
                    (step, end + 1)
                }
                Op::Pick { p, other } => {
                    let other = (other as usize).clamp(i + 1, to);
                    // The first side ends in a jump over the second.
                    let join = match ops.get(other - 1) {
                        Some(&Op::Jump { to: j }) if (j as usize) >= other && (j as usize) <= to => j as usize,
                        _ => other,
                    };
                    let step = self.stretch(ops, i + 1, other).or(p, self.stretch(ops, other, join));
                    (step, join)
                }
                ref op => (self.op(op), i + 1),
            };
            pass = pass.then(step);
            i = next;
        }
        pass
    }

    fn op(&self, op: &Op) -> Pass {
        let ns = match *op {
            Op::Run { cycles, .. } => cycles.mean() * 1e6 / self.khz,
            Op::Sleep { ns } => ns.mean(),
            Op::Timer { period_ns, .. } => period_ns as f64,
            Op::Fork { template, count } => {
                // The children's ops; their time is their own, not the forker's.
                let child = self.templates.get(template as usize).copied().unwrap_or_default();
                let k = f64::from(count);
                return Pass { ops: 1.0 + k * child.ops, ns: 0.0, per_s: k * child.per_s, endless: false };
            }
            Op::Jump { .. } | Op::EndLoop { .. } => return Pass::default(),
            _ => 0.0,
        };
        Pass { ops: 1.0, ns: ns.max(0.0), per_s: 0.0, endless: false }
    }
}

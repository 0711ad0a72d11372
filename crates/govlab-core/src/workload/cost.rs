//! What a run will cost, estimated from the workload's programs before it
//! starts.
//!
//! The engine's wall time grows with the events it handles, and a task's
//! events are its ops that wait or take time: a run segment, a sleep or
//! timer expiry, a receive, a lock, an IO completion, a yield, a barrier.
//! The others (a send, a mark, a count, a record) are done in the same turn
//! and cost next to nothing. A workload file or rt-app file can ask for far
//! more than it means: a forever loop of `timer = "1us"` is a million
//! events a simulated second, in 100,000 instances days of wall time for
//! ten simulated seconds. So a run's events are estimated first, and one
//! above [`MAX_EVENTS`] is refused unless the caller raises the ceiling
//! (`max_events`).
//!
//! The estimate walks each program once, counting those ops. One that
//! takes simulated time on its own takes at least: `Run`, its cycles at the
//! platform's fastest clock; `Sleep`, its mean; `Timer`, its period. A wait
//! (a receive, a lock, IO) is taken as instant: the time it waits is
//! someone else's. A loop of `count` passes costs `count` times its body; a
//! forever loop costs its body's ops over its body's time for the rest of
//! the run (a body that takes no time of its own, a task only woken by
//! others, adds nothing there: its wakers are counted). The two sides of a
//! random choice are weighted by their probability; a fork costs its count
//! times the template's ops. Each source arrival is one event.
//!
//! It is an estimate, and high rather than low: tasks that wait for each
//! other (a request and its reply) do fewer rounds than their own times
//! allow, and a task at a slower clock does fewer (netperf's estimate is
//! about ten times its events, a timer loop's about its events).

use super::{Op, Program, Setup};
use crate::platform::Platform;

/// Most events a run may be estimated to take without the caller raising
/// the ceiling: 10^9 (assumed: the engine handles about a million events a
/// wall second on one core, so this is some fifteen minutes of wall time;
/// every built-in workload at its defaults is below a hundredth of it,
/// checked by a test).
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
    let tasks: f64 = setup.tasks.iter().map(|t| f64::from(t.instances) * walker.program(&t.program).over(d)).sum();
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
            Op::Io { .. }
            | Op::IoFua { .. }
            | Op::IoFuaEndWork { .. }
            | Op::IoRing { .. }
            | Op::Recv { .. }
            | Op::RecvAny { .. }
            | Op::Lock { .. }
            | Op::Join
            | Op::Yield
            | Op::CondWait { .. }
            | Op::WaitEvent { .. }
            | Op::Barrier { .. }
            | Op::LogFlush { .. } => 0.0,
            // Done in the same turn as the op before: no event of its own.
            _ => return Pass::default(),
        };
        Pass { ops: 1.0, ns: ns.max(0.0), per_s: 0.0, endless: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Spec;
    use crate::platform::load_named;
    use crate::sim::rng::{Rng, Stream};
    use crate::workload::{Arrivals, Dist, ProgramBuilder, SourceSpec, TaskSpec};

    const S: u64 = 1_000_000_000;

    /// `got` is `want`, to rounding.
    #[track_caller]
    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{got} != {want}");
    }

    fn skylake() -> Platform {
        load_named(&Spec::new("skylake-e3-1240v5")).unwrap()
    }

    fn one(program: Program, instances: u32) -> Setup {
        let mut t = TaskSpec::new("t", program);
        t.instances = instances;
        Setup { tasks: vec![t], ..Setup::default() }
    }

    #[test]
    fn a_forever_timer_loop_costs_its_rate_times_the_duration_and_instances() {
        let p = ProgramBuilder::new()
            .repeat(None, |b| {
                b.timer(1_000);
            })
            .build();
        close(estimate(&one(p.clone(), 1), &skylake(), 10 * S), 1e7);
        close(estimate(&one(p, 1000), &skylake(), 10 * S), 1e10);
    }

    #[test]
    fn work_before_a_forever_loop_is_counted_once_and_nothing_after_it() {
        let p = ProgramBuilder::new()
            .repeat(Some(5), |b| {
                b.sleep(Dist::Fixed(1_000.0));
            })
            .repeat(None, |b| {
                b.sleep(Dist::Fixed(1_000_000.0)).sleep(Dist::Fixed(1_000_000.0));
            })
            .repeat(Some(1_000_000), |b| {
                b.sleep(Dist::Fixed(1.0));
            })
            .build();
        // 5 sleeps, then 2 sleeps every 2 ms: 1000 a second.
        close(estimate(&one(p, 1), &skylake(), S), 5.0 + 1000.0);
    }

    #[test]
    fn a_finite_program_is_cut_to_what_fits_in_the_run() {
        let p = ProgramBuilder::new()
            .repeat(Some(1000), |b| {
                b.sleep(Dist::Fixed(1e6));
            })
            .build();
        close(estimate(&one(p.clone(), 1), &skylake(), 10 * S), 1000.0);
        close(estimate(&one(p, 1), &skylake(), S / 2), 500.0);
    }

    #[test]
    fn zero_time_ops_and_waits_alone_add_no_rate() {
        // A relay woken by others: its receive is counted by no time of its own.
        let p = ProgramBuilder::new()
            .repeat(None, |b| {
                b.op(Op::Recv { chan: 0 }).op(Op::Mark).count(0, 1);
            })
            .build();
        close(estimate(&one(p, 100), &skylake(), 10 * S), 0.0);
    }

    #[test]
    fn a_run_takes_its_cycles_at_the_fastest_clock() {
        let plat = skylake();
        let khz = fastest_khz(&plat);
        // 10 µs of work at the fastest clock, forever: 10^5 a second.
        let p = ProgramBuilder::new()
            .repeat(None, |b| {
                b.run(Dist::Fixed(khz / 100.0), 0.0);
            })
            .build();
        let e = estimate(&one(p, 1), &plat, S);
        assert!((e - 1e5).abs() < 1.0, "{e}");
    }

    #[test]
    fn choices_are_weighted_and_forks_cost_their_children() {
        let p = ProgramBuilder::new()
            .repeat(Some(100), |b| {
                b.either(
                    0.25,
                    |a| {
                        a.sleep(Dist::Fixed(1.0)).sleep(Dist::Fixed(1.0));
                    },
                    |c| {
                        c.sleep(Dist::Fixed(1.0));
                    },
                );
            })
            .build();
        close(estimate(&one(p, 1), &skylake(), S), 125.0);
        let child = ProgramBuilder::new()
            .repeat(Some(10), |b| {
                b.sleep(Dist::Fixed(1.0));
            })
            .build();
        let parent = ProgramBuilder::new().op(Op::Fork { template: 0, count: 3 }).op(Op::Join).build();
        let mut setup = one(parent, 2);
        setup.templates = vec![TaskSpec::new("child", child)];
        // Per parent: the fork, 3 × 10 sleeps, the join.
        close(estimate(&setup, &skylake(), S), 2.0 * (1.0 + 30.0 + 1.0));
    }

    #[test]
    fn a_template_forking_itself_ends() {
        let p = ProgramBuilder::new().op(Op::Fork { template: 0, count: 2 }).build();
        let setup = Setup { templates: vec![TaskSpec::new("t", p.clone())], ..one(p, 1) };
        assert!(estimate(&setup, &skylake(), S).is_finite());
    }

    #[test]
    fn each_source_arrival_is_one_event() {
        let setup = Setup {
            sources: vec![SourceSpec { name: "s".into(), rate_per_s: 5000.0, arrivals: Arrivals::Poisson, chan: 0 }],
            ..Setup::default()
        };
        close(estimate(&setup, &skylake(), 2 * S), 10_000.0);
    }

    /// At its defaults each workload stays far (40×) below the ceiling. The
    /// dearest is netperf's TCP_RR on the fastest part since each send's
    /// tail is a step of its own (session 39): 2.3e7 estimated, 7.6e6
    /// simulated on i5-10600k.
    #[test]
    fn every_built_in_workload_at_its_defaults_is_far_below_the_ceiling() {
        for platform in crate::platform::platform_names() {
            let plat = load_named(&Spec::new(platform)).unwrap();
            for info in crate::workload::registry() {
                let spec = Spec::new(info.name);
                let Ok(w) = (info.build)(&spec) else { continue }; // rtapp needs its file
                let Ok(setup) = w.setup(&plat, &mut Rng::new(1, Stream::Workload)) else { continue }; // a device it lacks
                let e = estimate(&setup, &plat, crate::workload::default_duration_ns(&spec));
                assert!(e < MAX_EVENTS as f64 / 40.0, "{} on {platform}: {e:.2e}", info.name);
            }
        }
    }
}

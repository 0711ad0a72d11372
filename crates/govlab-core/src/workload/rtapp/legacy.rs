//! rt-app's grammar before v1.0 (2014–2015), converted to the same task
//! programs as the event grammar.
//!
//! Read from rt-app's own history (scheduler-tools/rt-app, late 2014, after
//! Vincent Guittot's resource types and phases and before the event
//! grammar): `src/rt-app_parse_config.c` (parse_resource_data,
//! serialize_acl, parse_thread_resources, parse_thread_phase_data,
//! parse_thread_data) and `src/rt-app.c` (get_resource, put_resource, run,
//! thread_body). In that grammar:
//!
//! - The file's top-level `resources` name the objects, each with a `type`:
//!   `mutex` (the default), `wait` (a condition variable), `signal` and
//!   `broadcast` (signal or broadcast the condition of their `target`),
//!   `sync` (signal the `target` and wait on it), `sleep` and `run`. The
//!   target must be a `wait` defined earlier in the table (rt-app searches
//!   only the resources before the signal). An integer instead of the table
//!   is the older form: that many mutexes named "0", "1", ….
//! - A phase (or a task without `phases`) has `exec` µs of calibrated busy
//!   loop per iteration, `period` (default `exec`), `deadline` (default
//!   `period`; only logged unless SCHED_DEADLINE), `sleep` (default true:
//!   wait for the next period at the end of each iteration), `loop` (default
//!   -1, forever), and `lock_order`, a list of resource names, each one
//!   "blockage" of the iteration; the phase's own `resources` give each name
//!   a `duration` (µs) and an `access` list.
//! - A blockage on name N takes, in order, every resource reached from N
//!   through `access` (depth first, each once) and then N itself, acting on
//!   each by its type: lock a mutex; wait on a condition with the mutex just
//!   before it in that list; signal, broadcast, or signal-and-wait on the
//!   target's condition (with the mutex before it); sleep N's `duration`.
//!   Then, unless the last (N) is a sleep, it busy-loops N's `duration`,
//!   and it releases the mutexes in reverse. What the blockages busy-looped
//!   is taken out of `exec`; the rest of `exec` runs after the last one.
//! - Each iteration ends, when `sleep` is true, at the next multiple of
//!   `period` from the thread's start; an iteration that overran does not
//!   sleep and the grid stays (rt-app's clock_nanosleep(TIMER_ABSTIME) on
//!   t_next += period): an absolute timer. With `sleep` false the thread
//!   goes straight on (the blockages pace it).
//!
//! Told apart from the event grammar by `exec` (required in every phase of
//! that grammar). Refused, naming the key: a `wait` or `sync` with no mutex
//! before it (rt-app used whatever memory preceded the list), a blockage
//! naming a resource the table does not define, signals without an earlier
//! `wait` target, durations that add to more than `exec` (rt-app's
//! remainder went negative and busy-looped for ever), SCHED_DEADLINE with
//! `phases` (rt-app took the reservation from one phase; write
//! dl-runtime/dl-period/dl-deadline in the event grammar). The period grid
//! advances only in iterations that sleep (rt-app advanced it in every
//! iteration; the two differ only for a thread mixing sleeping and
//! non-sleeping phases).

use super::json::Json;
use super::{close_loop, limits, open_loop, Conv, Names, WU_LAT};
use crate::error::Result;
use crate::workload::{Op, TimerRef};

/// Kinds of a pre-v1.0 resource (rt-app's `resource_t` of that time).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    Mutex,
    Wait,
    /// Signal (`all` false) or broadcast the condition of `target`.
    Signal { target: String, all: bool },
    /// Signal `target`'s condition, then wait on it.
    Sync { target: String },
    Sleep,
    Run,
}

/// The file's top-level resource table, in file order.
pub(super) type Table = Vec<(String, Kind)>;

/// Keys of a phase of the old grammar (or of a task without `phases`).
const PHASE_KEYS: &[&str] = &["loop", "exec", "period", "deadline", "sleep", "resources", "lock_order"];

/// Whether task `t` is written in the pre-v1.0 grammar.
pub(super) fn is_legacy(t: &Json) -> bool {
    t.get("exec").is_some() || t.get("phases").is_some_and(|ph| ph.entries().iter().any(|(_, p)| p.get("exec").is_some()))
}

/// A resource name as the old grammar writes it: a string, or an integer
/// index of the legacy mutex table.
fn res_name(v: &Json) -> Option<String> {
    match v {
        Json::Str(s) => Some(s.clone()),
        Json::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

impl Conv<'_> {
    /// The top-level `resources` read as the old grammar's table.
    pub(super) fn legacy_table(&self) -> Result<Table> {
        let Some(res) = self.w.doc.get("resources") else { return Ok(Vec::new()) };
        if let Json::Int(n) = res {
            let n = limits::within(*n, 0, 4096, "mutexes").map_err(|e| self.err("resources", e))?;
            return Ok((0..n).map(|i| (i.to_string(), Kind::Mutex)).collect());
        }
        if !matches!(res, Json::Obj(_)) {
            return Err(self.err("resources", "an object of resources (or a count of mutexes)"));
        }
        let mut table: Table = Vec::new();
        for (name, r) in res.entries() {
            let at = format!("resources.{name}");
            for (k, _) in r.entries() {
                if !["type", "target"].contains(&k.as_str()) {
                    return Err(self.err(&format!("{at}.{k}"), "a resource takes type and target"));
                }
            }
            let ty = match r.get("type") {
                None => "mutex",
                Some(v) => v.as_str().ok_or_else(|| self.err(&format!("{at}.type"), "a type name"))?,
            };
            let target = || -> Result<String> {
                let t = r
                    .get("target")
                    .and_then(Json::as_str)
                    .ok_or_else(|| self.err(&format!("{at}.target"), format!("a {ty} resource needs the name of its \"wait\" resource")))?;
                // rt-app looks for the target among the resources before
                // this one only.
                match table.iter().find(|(n, _)| n == t) {
                    Some((_, Kind::Wait)) => Ok(t.to_string()),
                    Some(_) => Err(self.err(&format!("{at}.target"), format!("\"{t}\" is not a \"wait\" resource"))),
                    None => Err(self.err(
                        &format!("{at}.target"),
                        format!("\"{t}\" is not a resource defined before this one (rt-app of that time looks only there); move it up"),
                    )),
                }
            };
            let kind = match ty {
                "mutex" => Kind::Mutex,
                "wait" => Kind::Wait,
                "signal" => Kind::Signal { target: target()?, all: false },
                "broadcast" => Kind::Signal { target: target()?, all: true },
                "sync" => Kind::Sync { target: target()? },
                "sleep" => Kind::Sleep,
                "run" => Kind::Run,
                _ => {
                    return Err(self.err(
                        &format!("{at}.type"),
                        format!("\"{ty}\": one of mutex, wait, signal, broadcast, sync, sleep, run (rt-app before v1.0)"),
                    ))
                }
            };
            table.push((name.clone(), kind));
        }
        Ok(table)
    }

    /// An integer of the old grammar in µs, 0..=MAX_EVENT_US.
    fn legacy_us(&self, at: &str, v: &Json) -> Result<u64> {
        let n = v.as_i64().ok_or_else(|| self.err(at, format!("{}: µs (an integer ≥ 0)", v.brief())))?;
        limits::within(n, 0, limits::MAX_EVENT_US, "µs").map_err(|e| self.err(at, e))
    }

    /// One phase of the old grammar (or a task without `phases`): `exec`,
    /// the blockages of `lock_order`, the period.
    pub(super) fn legacy_phase(&mut self, at: &str, p: &Json, is_task: bool, table: &Table, ops: &mut Vec<Op>, own: &mut Names) -> Result<()> {
        for (k, _) in p.entries() {
            let task_key = ["policy", "priority", "delay", "cpus", "phases", "instance"].contains(&k.as_str())
                || super::SCHED_KEYS.contains(&k.as_str());
            let allowed = PHASE_KEYS.contains(&k.as_str()) || (is_task && task_key);
            if !allowed {
                return Err(self.err(
                    &format!("{at}.{k}"),
                    "not a key of rt-app's pre-v1.0 grammar (a phase has exec, period, deadline, sleep, loop, lock_order, resources)",
                ));
            }
        }
        let exec_us = match p.get("exec") {
            Some(v) => self.legacy_us(&format!("{at}.exec"), v)?,
            None => return Err(self.err(&format!("{at}.exec"), "missing: every phase of rt-app's pre-v1.0 grammar has exec (µs)")),
        };
        let period_us = match p.get("period") {
            Some(v) => self.legacy_us(&format!("{at}.period"), v)?,
            None => exec_us,
        };
        if period_us == 0 || exec_us > period_us {
            return Err(self.err(&format!("{at}.period"), format!("{period_us} µs: rt-app wants a period > 0 and ≥ exec ({exec_us} µs)")));
        }
        if let Some(v) = p.get("deadline") {
            let d = self.legacy_us(&format!("{at}.deadline"), v)?;
            if d < exec_us || d > period_us {
                return Err(self.err(&format!("{at}.deadline"), format!("{d} µs: rt-app wants exec ≤ deadline ≤ period")));
            }
        }
        let sleep = match p.get("sleep") {
            None => true,
            Some(Json::Bool(b)) => *b,
            Some(v) => return Err(self.err(&format!("{at}.sleep"), format!("{}: true or false (rt-app before v1.0)", v.brief()))),
        };
        // rt-app of that time: a phase without `loop` repeats for ever.
        let loops = match p.get("loop") {
            Some(v) => self.count(&format!("{at}.loop"), v)?,
            None => -1,
        };
        let loops = if loops <= 0 { -1 } else { loops };
        let res = p.get("resources");
        if res.is_some_and(|r| !matches!(r, Json::Obj(_))) {
            return Err(self.err(&format!("{at}.resources"), "an object of name: { duration, access }"));
        }
        for (n, r) in res.map(Json::entries).unwrap_or_default() {
            if let Some((k, _)) = r.entries().iter().find(|(k, _)| !["duration", "access"].contains(&k.as_str())) {
                return Err(self.err(&format!("{at}.resources.{n}.{k}"), "a phase's resource takes duration and access"));
            }
        }
        let phase = open_loop(ops, loops);
        let mut busy_us = 0;
        if let Some(order) = p.get("lock_order") {
            let Json::Arr(order) = order else {
                return Err(self.err(&format!("{at}.lock_order"), "a list of resource names"));
            };
            for (i, n) in order.iter().enumerate() {
                let oat = format!("{at}.lock_order[{i}]");
                let name = res_name(n).ok_or_else(|| self.err(&oat, format!("{}: a resource name", n.brief())))?;
                busy_us += self.blockage(&oat, at, &name, res, table, ops)?;
            }
        }
        if busy_us > exec_us {
            return Err(self.err(
                &format!("{at}.lock_order"),
                format!("its resources busy-loop {busy_us} µs in all, more than exec ({exec_us} µs): rt-app's remainder would go negative"),
            ));
        }
        self.calibrated_run(ops, exec_us - busy_us);
        if sleep {
            let timer = TimerRef::Own(own.index("(pre-v1.0 period)"));
            ops.push(Op::Timer { period_ns: period_us * 1000, timer, relative: false });
            ops.push(Op::Record { series: WU_LAT, since: crate::workload::Since::Wake, deadline_ns: None });
        }
        close_loop(ops, phase);
        Ok(())
    }

    /// One blockage: the resources reached from `name`, then `name`, each
    /// acted on by its kind; N's duration busy-looped (or slept); the
    /// mutexes released in reverse. Returns the µs busy-looped.
    fn blockage(&mut self, at: &str, phase_at: &str, name: &str, res: Option<&Json>, table: &Table, ops: &mut Vec<Op>) -> Result<u64> {
        let mut acl = Vec::new();
        self.serialize_acl(phase_at, name, res, &mut acl)?;
        // The named resource comes last (rt-app moves the list's head to its end).
        acl.rotate_left(1);
        let usage_us = match res.and_then(|r| r.get(name)) {
            None => 0,
            Some(r) => match r.get("duration") {
                None => 0,
                Some(v) => self.legacy_us(&format!("{phase_at}.resources.{name}.duration"), v)?,
            },
        };
        let kind_of = |s: &Self, n: &str| {
            table.iter().find(|(t, _)| t == n).map(|(_, k)| k.clone()).ok_or_else(|| {
                s.err(at, format!("resource \"{n}\" is not in the file's top-level \"resources\" (rt-app before v1.0 needs every resource there)"))
            })
        };
        let mut prev_mutex: Option<u32> = None;
        let mut held = Vec::new();
        let mut busy = true;
        for n in &acl {
            let kind = kind_of(self, n)?;
            let before = prev_mutex.take();
            let need_mutex = |s: &Self| {
                before.ok_or_else(|| {
                    s.err(at, format!("\"{n}\" waits on a condition with no mutex before it in its access list (rt-app needs one: add a mutex to its \"access\")"))
                })
            };
            busy = true;
            match kind {
                Kind::Mutex => {
                    let m = self.mutexes.index(n);
                    ops.push(Op::Lock { mutex: m });
                    held.push(m);
                    prev_mutex = Some(m);
                }
                Kind::Wait => {
                    let mutex = need_mutex(self)?;
                    ops.push(Op::CondWait { cond: self.conds.index(n), mutex });
                }
                Kind::Signal { target, all } => ops.push(Op::CondSignal { cond: self.conds.index(&target), all }),
                Kind::Sync { target } => {
                    let mutex = need_mutex(self)?;
                    let cond = self.conds.index(&target);
                    ops.push(Op::CondSignal { cond, all: false });
                    ops.push(Op::CondWait { cond, mutex });
                }
                Kind::Sleep => {
                    ops.push(Op::Sleep { ns: crate::workload::Dist::Fixed(usage_us as f64 * 1e3) });
                    busy = false;
                }
                Kind::Run => {}
            }
        }
        if busy {
            self.calibrated_run(ops, usage_us);
        }
        for &m in held.iter().rev() {
            ops.push(Op::Unlock { mutex: m });
        }
        Ok(if busy { usage_us } else { 0 })
    }

    /// `name`, then what it reaches through its `access` lists, depth first,
    /// each once (rt-app's serialize_acl).
    fn serialize_acl(&self, phase_at: &str, name: &str, res: Option<&Json>, acl: &mut Vec<String>) -> Result<()> {
        if acl.iter().any(|n| n == name) {
            return Ok(());
        }
        acl.push(name.to_string());
        let Some(access) = res.and_then(|r| r.get(name)).and_then(|r| r.get("access")) else { return Ok(()) };
        let aat = format!("{phase_at}.resources.{name}.access");
        let Json::Arr(names) = access else { return Err(self.err(&aat, "a list of resource names")) };
        for n in names {
            let next = res_name(n).ok_or_else(|| self.err(&aat, format!("{}: a resource name", n.brief())))?;
            self.serialize_acl(phase_at, &next, res, acl)?;
        }
        Ok(())
    }
}

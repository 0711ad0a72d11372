//! `rtapp`: rt-app JSON workloads, run unchanged.
//!
//! rt-app (github.com/scheduler-tools/rt-app, grammar of doc/tutorial.txt
//! and src/rt-app_parse_config.c at 55cb0c0) describes threads as `tasks`,
//! each with `instance` copies, an optional `delay`, `cpus`, a scheduling
//! `policy` and `priority`, and `phases` (or, for one phase, events written
//! directly in the task), each phase repeated `loop` times and the whole
//! sequence repeated the task's `loop` times (-1: forever). Events run in
//! file order; a key names an event by its prefix (`run1`, `sleep2`), as
//! rt-app's obj_is_event() matches them, and duplicate keys are separate
//! events (see `json.rs`).
//!
//! Mapping onto the workload language:
//!
//! | rt-app | govlab |
//! |---|---|
//! | `run` µs: a calibrated busy loop, work fixed | compute of the cycles the calibration CPU does in that time at its highest frequency |
//! | `runtime` µs: a busy loop for a fixed time | compute that is all memory-bound, so it takes the same time at every frequency |
//! | `sleep` µs | sleep |
//! | `timer` {ref, period, mode} | periodic timer: `unique*` refs per thread, others shared by every thread naming them; first expiry one period after the thread's start; a missed expiry restarts the period from now in `relative` mode (the default) and keeps the grid in `absolute` |
//! | `lock`, `unlock` | mutex |
//! | `wait` {ref, mutex}, `signal`, `broad`, `sync` | condition variable (wait, signal one, broadcast, signal then wait) |
//! | `suspend` name, `resume` name | lock the name's mutex, wait on (or broadcast) the name's condition, unlock, as rt-app does: a resume with nobody suspended is lost |
//! | `barrier` | barrier of all the threads whose events name it |
//! | `fork` task | start one thread of that task |
//! | `yield` | sched_yield |
//! | `mem` bytes | memory-bound compute at `MEMSET_NS_PER_BYTE` (assumed) |
//! | `iorun` bytes | `write()`s of `mem_buffer_size` to /dev/null at `WRITE_NS` each (assumed); another `io_device` is refused |
//!
//! `calibration` "CPUn" (or an ns-per-loop integer, taken as measured on
//! this machine's CPU 0) sets what `run` means: rt-app calibrates with a
//! busy loop, which any governor runs at the CPU's highest frequency, so a
//! `run` of t µs is t µs at the calibration CPU's highest frequency (its
//! one-core turbo on Intel). SCHED_OTHER tasks take `priority` as their nice
//! value. Timers start counting at their first user's start (rt-app: at
//! the use case's start plus the thread's delay), which differs only for
//! forked threads: here their timers start at the fork.
//!
//! Scheduling: `policy` (SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE,
//! SCHED_IDLE), `priority` (nice for SCHED_OTHER, 1..99 for
//! FIFO/RR, default 10 assumed), `dl-runtime`/`dl-period`/`dl-deadline`
//! (µs), `util_min`/`util_max` and `taskgroup` become the task's
//! [`SchedAttr`]; per-phase `cpus` becomes an `Op::SetAffinity` at each
//! phase's start, a per-phase `taskgroup` an `Op::SetGroup` (a phase
//! without one leaves the thread in its group). `rt_as_cfs=on` runs RT/DL/IDLE threads as nice-0
//! SCHED_OTHER instead.
//!
//! A task written in rt-app's pre-v1.0 grammar (2014–2015: `exec`,
//! `period`, `deadline`, `sleep`, `lock_order` over typed `resources`) is
//! converted into the same ops (`legacy.rs` says how and from which rt-app
//! sources).
//!
//! Trace markers: `global.ftrace` (`"main,task,loop,event"`, or true for
//! all) makes the threads write rt-app's `log_ftrace()` lines to the trace
//! as `trace_marker` writes, as rt-app does: `rtapp_main: event=start` and
//! `event=clock_ref data=<µs>` (once, by the first thread to start),
//! `rtapp_task: event=start|end`, `rtapp_loop: event=start|end
//! thread_loop= phase= phase_loop=` around each phase iteration, and
//! `rtapp_event: id= type= desc=` before each event (its index in the
//! phase, rt-app's resource_t number, its key). Not written: `rtapp_main:
//! event=end` (rt-app's main thread, which govlab has not), `rtapp_stats`
//! and `rtapp_attrs`, the markers of pre-v1.0 tasks; `rtapp_task:
//! event=start` comes after a task's `delay`, not before.
//!
//! Refused, with an error naming the file and the key's path: per-phase
//! `policy`, `priority`, deadline or clamp changes, `nodes_membind`, what
//! of the pre-v1.0 grammar has no defined meaning (`legacy.rs`), files without `tasks` or
//! whose tasks reach a resource the file does not define (fragments), and keys that are neither events nor properties. Logging
//! and tracing keys of `global` are ignored. `duration` (seconds) is the
//! run's length when the experiment gives none ([`file_duration_ns`]); a
//! given duration overrides it.
//!
//! Metrics: `run_stretch` (primary), the wall time of all run/runtime
//! events over their calibrated time (1 at the calibration frequency with
//! no contention; higher is slower; rt-app's own governor-efficiency
//! recipe compares exactly these run durations); the wall time of each run
//! event; the wakeup latency after each timer (for a missed timer, how late
//! it was); and the number of missed timer expiries.

mod json;
mod legacy;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use self::json::Json;
use super::{
    SchedAttr, SchedPolicy,
    latency_metrics, Better, Dist, Metric, Op, Program, Record, Setup, Since, TaskSpec, TimerRef, TraceMarker, Workload,
    WorkloadInfo,
};
use super::limits;
use crate::error::{Error, Result};
use crate::params::{ParamDefault, ParamSpec, Params, Range, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

pub const FILE: ParamSpec = ParamSpec {
    name: "file",
    unit: "",
    default: ParamDefault::Unset(""),
    range: Range::Text,
    help: "path of the rt-app JSON file (required)",
};

pub const RT_AS_CFS: ParamSpec = ParamSpec {
    name: "rt_as_cfs",
    unit: "",
    default: ParamDefault::Flag(false),
    range: Range::Switch,
    help: "run SCHED_FIFO/RR/DEADLINE/IDLE threads as nice-0 SCHED_OTHER instead of refusing the file",
};

pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "rtapp",
    description: "an rt-app JSON workload (tasks, phases, run/sleep/timer/locks/conditions/barriers/fork)",
    metric: "run_stretch (wall time of run events / their calibrated time, lower is better)",
    params: &[FILE, RT_AS_CFS],
    ends: crate::workload::Ends::AtDuration,
    build,
};

/// memset() speed for `mem` events, ns per byte (assumed: 10 GB/s).
const MEMSET_NS_PER_BYTE: f64 = 0.1;
/// CPU of one write() to /dev/null for `iorun` (assumed: a syscall that
/// copies nothing).
const WRITE_NS: f64 = 300.0;
/// rt-app's default `mem_buffer_size` (4 MiB).
const MEM_BUFFER_SIZE: i64 = 4 << 20;

const RUN: u16 = 0;
const WU_LAT: u16 = 1;
const NOMINAL_RUN_NS: u16 = 0;

/// Keys of `global` that only concern rt-app's logging, tracing or memory
/// locking, or the run's length.
const GLOBAL_IGNORED: &[&str] = &[
    "duration",
    "gnuplot",
    "logdir",
    "log_basename",
    "log_size",
    "lock_pages",
    "pi_enabled",
    "frag",
    "cumulative_slack",
    "spacing",
];

/// Scheduling keys of a task (or of each phase, where they must not change).
const SCHED_KEYS: &[&str] = &["dl-runtime", "dl-period", "dl-deadline", "util_min", "util_max", "taskgroup"];

/// Whether any phase of task `t` sets its own `cpus`.
fn phase_cpus(t: &Json) -> bool {
    t.get("phases").is_some_and(|ph| ph.entries().iter().any(|(_, p)| p.get("cpus").is_some()))
}

/// Event names in the order rt-app's obj_is_event() tries their prefixes.
const EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend", "resume", "mem",
    "iorun", "yield", "barrier", "fork",
];

pub struct RtApp {
    path: PathBuf,
    doc: Json,
    rt_as_cfs: bool,
}

/// The run length an rt-app file asks for: `global.duration` in seconds
/// (rt-app stops the use case then; -1 or 0 runs until stopped, which gives
/// None). None too when the file cannot be read: building it says why.
pub fn file_duration_ns(spec: &Spec) -> Option<u64> {
    let file = spec.params.iter().find(|(k, _)| k == FILE.name).map(|(_, v)| v)?;
    let text = std::fs::read_to_string(file).ok()?;
    let doc = json::parse(&text).ok()?;
    let secs = doc.get("global")?.get("duration")?.as_i64()?;
    let secs = u64::try_from(secs).ok().filter(|&s| s > 0 && s <= 7 * 24 * 3600)?;
    Some(secs * 1_000_000_000)
}

fn build(spec: &Spec) -> Result<Box<dyn Workload>> {
    let mut p = Params::new("workload rtapp", spec);
    let file = p.string(FILE.name);
    let rt_as_cfs = p.flag(&RT_AS_CFS, &())?;
    p.finish()?;
    let Some(file) = file.filter(|f| !f.is_empty()) else {
        return Err(Error::invalid("workload rtapp", "file", "(missing)", "rtapp:file=PATH of an rt-app JSON file"));
    };
    let path = PathBuf::from(file);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let doc = json::parse(&text).map_err(|(msg, line)| Error::file(&path, Some(line), msg))?;
    let w = RtApp { path, doc, rt_as_cfs };
    // Check everything now, against a neutral machine.
    Conv::new(&w, Calibration::neutral()).setup()?;
    Ok(Box::new(w))
}

/// What `run` and `runtime` mean in cycles.
#[derive(Debug, Clone, Copy)]
struct Calibration {
    /// Frequency at which a `run` of t takes t.
    run_khz: u32,
    /// The reference frequency (cycles of work that take t at every frequency
    /// when memory-bound).
    ref_khz: u32,
}

impl Calibration {
    fn neutral() -> Self {
        Calibration { run_khz: 1_000_000, ref_khz: 1_000_000 }
    }
}

/// Conversion state: names of the synchronisation objects, by kind.
struct Conv<'a> {
    w: &'a RtApp,
    cal: Calibration,
    mutexes: Names,
    conds: Names,
    barriers: Names,
    barrier_parties: Vec<u32>,
    shared_timers: Names,
    /// Tasks started by `fork`, and their template index.
    forked: Names,
    /// Instances of each task, by name.
    tasks: BTreeMap<String, u32>,
    /// Task groups by cgroup path.
    groups: Names,
    io_device_ok: bool,
    mem_buffer_size: i64,
    /// The top-level resource table of the pre-v1.0 grammar, read at its
    /// first task.
    legacy: Option<legacy::Table>,
    /// The trace_marker lines `global.ftrace` asks for.
    ftrace: Ftrace,
    /// The index of the phase being converted (rt-app's `phase`).
    phase_no: u32,
}

/// rt-app's ftrace categories (`global.ftrace`: `"main,task,loop,event"`,
/// or a boolean; rt-app src/rt-app_parse_config.c): which of its
/// `log_ftrace()` lines the threads write to the trace. `stats` and
/// `attrs` are accepted and not written.
#[derive(Debug, Clone, Copy, Default)]
struct Ftrace {
    main: bool,
    task: bool,
    loops: bool,
    event: bool,
}

/// rt-app's `resource_t` number of each event kind (rt-app_types.h), as
/// `rtapp_event` lines print it.
fn event_type(kind: &str) -> u32 {
    match kind {
        "wait" => 2,
        "signal" => 3,
        "broad" => 4,
        "sleep" => 5,
        "run" => 6,
        "sync" => 7,
        "lock" => 8,
        "unlock" => 9,
        "timer" => 10,
        "suspend" => 11,
        "resume" => 12,
        "mem" => 13,
        "iorun" => 14,
        "runtime" => 15,
        "yield" => 16,
        "barrier" => 17,
        "fork" => 18,
        _ => 0,
    }
}

/// Names given indices in order of first use.
#[derive(Default)]
struct Names(Vec<String>);

impl Names {
    fn index(&mut self, name: &str) -> u32 {
        if let Some(i) = self.0.iter().position(|n| n == name) {
            return i as u32;
        }
        self.0.push(name.to_string());
        (self.0.len() - 1) as u32
    }
}

impl<'a> Conv<'a> {
    fn new(w: &'a RtApp, cal: Calibration) -> Self {
        Conv {
            w,
            cal,
            mutexes: Names::default(),
            conds: Names::default(),
            barriers: Names::default(),
            barrier_parties: Vec::new(),
            shared_timers: Names::default(),
            forked: Names::default(),
            tasks: BTreeMap::new(),
            groups: Names::default(),
            io_device_ok: true,
            mem_buffer_size: MEM_BUFFER_SIZE,
            legacy: None,
            ftrace: Ftrace::default(),
            phase_no: 0,
        }
    }

    fn err(&self, at: &str, msg: impl fmt::Display) -> Error {
        Error::file(&self.w.path, None, format!("{at}: {msg}"))
    }

    fn setup(&mut self) -> Result<Setup> {
        let doc = &self.w.doc;
        if !matches!(doc, Json::Obj(_)) {
            return Err(self.err("(top level)", "an rt-app file is a JSON object with \"tasks\""));
        }
        for (k, _) in doc.entries() {
            if !["tasks", "global", "resources"].contains(&k.as_str()) {
                return Err(self.err(k, "unknown key; valid: tasks, global, resources"));
            }
        }
        if let Some(g) = doc.get("global") {
            self.global(g)?;
        }
        let tasks = match doc.get("tasks") {
            Some(t @ Json::Obj(kv)) if !kv.is_empty() => t,
            None => {
                return Err(self.err(
                    "(top level)",
                    "no \"tasks\": this file is a fragment of a use case (like the global or resources pieces of rt-app's merge examples), not a workload; join it with the pieces holding the tasks into one file",
                ))
            }
            _ => return Err(self.err("tasks", "needs at least one task object")),
        };
        if let Some((at, name)) = undefined_resource(tasks, doc.get("resources")) {
            return Err(self.err(
                &at,
                format!("resource \"{name}\" is defined in no \"resources\" of this file: it is a fragment of a use case (like the thread pieces of rt-app's merge examples, whose resources are in another piece), not a workload; join it with the pieces into one file"),
            ));
        }
        let mut threads = 0;
        for (name, t) in tasks.entries() {
            let at = format!("tasks.{name}.instance");
            let instances = match t.get("instance") {
                None => 1,
                Some(v) => {
                    let n = v.as_i64().ok_or_else(|| self.err(&at, format!("{}: a count ≥ 0", v.brief())))?;
                    limits::within(n, 0, limits::MAX_INSTANCES, "threads").map_err(|e| self.err(&at, e))?
                }
            };
            threads += instances;
            if threads > limits::MAX_THREADS {
                return Err(self.err(&at, format!("the tasks start more than {} threads in all (the most a workload may start)", limits::MAX_THREADS)));
            }
            if self.tasks.insert(name.clone(), instances as u32).is_some() {
                return Err(self.err(&format!("tasks.{name}"), "two tasks with this name"));
            }
        }
        let mut setup = Setup {
            series: vec!["run".into(), "wu_lat".into()],
            counters: vec!["nominal_run_ns".into()],
            ..Setup::default()
        };
        let mut specs = BTreeMap::new();
        for (name, t) in tasks.entries() {
            let spec = self.task(name, t)?;
            specs.insert(name.clone(), spec.clone());
            if spec.instances > 0 {
                setup.tasks.push(spec);
            }
        }
        for name in &self.forked.0 {
            let mut spec = specs[name].clone();
            spec.instances = 1;
            spec.start_ns = 0;
            setup.templates.push(spec);
        }
        for (i, &n) in self.barrier_parties.iter().enumerate() {
            if n == 0 {
                return Err(self.err(
                    &format!("barrier \"{}\"", self.barriers.0[i]),
                    "used only by tasks with instance 0 (rt-app: barriers cannot be used with fork)",
                ));
            }
        }
        setup.mutexes = self.mutexes.0.len() as u32;
        setup.conds = self.conds.0.len() as u32;
        setup.barriers.clone_from(&self.barrier_parties);
        setup.shared_timers = self.shared_timers.0.len() as u32;
        // rt-app creates each taskgroup as a cgroup with default shares.
        setup.groups = self
            .groups
            .0
            .iter()
            .map(|path| crate::workload::TaskGroupSpec { path: path.clone(), shares: 1024 })
            .collect();
        Ok(setup)
    }

    fn global(&mut self, g: &Json) -> Result<()> {
        if !matches!(g, Json::Obj(_)) {
            return Err(self.err("global", "must be an object"));
        }
        for (k, v) in g.entries() {
            let at = format!("global.{k}");
            match k.as_str() {
                "calibration" => match v {
                    Json::Int(n) if *n > 0 => {}
                    Json::Str(s) if s.strip_prefix("CPU").is_some_and(|n| n.parse::<usize>().is_ok()) => {}
                    _ => return Err(self.err(&at, format!("{}: \"CPUn\" or an ns-per-loop integer", v.brief()))),
                },
                "default_policy" => {
                    self.policy(&at, v)?;
                }
                "io_device" => self.io_device_ok = v.as_str() == Some("/dev/null"),
                "mem_buffer_size" => {
                    let n = v.as_i64().ok_or_else(|| self.err(&at, format!("{}: a size in bytes", v.brief())))?;
                    self.mem_buffer_size = limits::within(n, 1, limits::MAX_BYTES, "bytes").map_err(|e| self.err(&at, e))? as i64;
                }
                "ftrace" => self.ftrace = self.ftrace_levels(&at, v)?,
                k if GLOBAL_IGNORED.contains(&k) => {}
                _ => return Err(self.err(&at, "unknown global key")),
            }
        }
        Ok(())
    }

    /// `global.ftrace`: a comma-separated list of rt-app's categories
    /// (`none`, `main`, `task`, `loop`, `event`, `stats`, `attrs`, `all`),
    /// or true (assumed: all) / false.
    fn ftrace_levels(&self, at: &str, v: &Json) -> Result<Ftrace> {
        let all = Ftrace { main: true, task: true, loops: true, event: true };
        let text = match v {
            Json::Bool(true) => return Ok(all),
            Json::Bool(false) => return Ok(Ftrace::default()),
            Json::Str(s) => s,
            _ => return Err(self.err(at, format!("{}: a list of categories such as \"main,task,loop,event\", or a boolean", v.brief()))),
        };
        let mut f = Ftrace::default();
        for word in text.split(',').map(str::trim) {
            match word {
                "none" | "stats" | "attrs" => {}
                "main" => f.main = true,
                "task" => f.task = true,
                "loop" => f.loops = true,
                "event" => f.event = true,
                "all" => f = all,
                other => return Err(self.err(at, format!("unknown category \"{other}\": none, main, task, loop, event, stats, attrs or all"))),
            }
        }
        Ok(f)
    }

    /// The policy a name stands for, and a nice value it forces.
    fn policy(&self, at: &str, v: &Json) -> Result<(SchedPolicy, Option<i32>)> {
        match v.as_str() {
            Some("SCHED_OTHER") => Ok((SchedPolicy::Other, None)),
            Some("SCHED_FIFO" | "SCHED_RR" | "SCHED_DEADLINE" | "SCHED_IDLE") if self.w.rt_as_cfs => Ok((SchedPolicy::Other, Some(0))),
            Some("SCHED_FIFO") => Ok((SchedPolicy::Fifo, None)),
            Some("SCHED_RR") => Ok((SchedPolicy::Rr, None)),
            Some("SCHED_DEADLINE") => Ok((SchedPolicy::Deadline, None)),
            Some("SCHED_IDLE") => Ok((SchedPolicy::Idle, None)),
            _ => Err(self.err(at, format!("{}: one of SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE, SCHED_IDLE", v.brief()))),
        }
    }

    /// A µs count of `dl-*` or `util_*` within `lo..=hi`.
    fn int_in(&self, at: &str, v: &Json, lo: i64, hi: i64, what: &str) -> Result<i64> {
        v.as_i64()
            .filter(|n| (lo..=hi).contains(n))
            .ok_or_else(|| self.err(at, format!("{}: {what}, {lo} to {hi}", v.brief())))
    }

    /// The scheduling attributes of a task: policy and priority (or nice),
    /// deadline parameters, clamps, task group.
    fn sched_attr(&mut self, at: &str, task: &Json) -> Result<(SchedAttr, i32)> {
        let policy_v = task.get("policy").or_else(|| self.w.doc.get("global").and_then(|g| g.get("default_policy")));
        let (policy, forced_nice) = match policy_v {
            Some(v) => self.policy(&format!("{at}.policy"), v)?,
            None => (SchedPolicy::Other, None),
        };
        let mut attr = SchedAttr { policy, ..SchedAttr::default() };
        let mut nice = 0;
        let prio = task.get("priority");
        match (policy, forced_nice, prio) {
            (_, Some(n), _) => nice = n,
            (SchedPolicy::Other, None, Some(v)) => {
                nice = self.int_in(&format!("{at}.priority"), v, -20, 19, "a nice value for SCHED_OTHER")? as i32;
            }
            (SchedPolicy::Fifo | SchedPolicy::Rr, None, Some(v)) => {
                attr.rt_priority = self.int_in(&format!("{at}.priority"), v, 1, 99, "an RT priority for SCHED_FIFO/RR")? as u32;
            }
            // rt-app's default RT priority (assumed: 10, rt-app's
            // THREAD_PRIORITY default for an RT policy).
            (SchedPolicy::Fifo | SchedPolicy::Rr, None, None) => attr.rt_priority = 10,
            _ => {}
        }
        let us = |s: &Self, k: &str| -> Result<u64> {
            match task.get(k) {
                None => Ok(0),
                Some(v) => Ok(s.int_in(&format!("{at}.{k}"), v, 0, limits::MAX_EVENT_US as i64, "µs")? as u64 * 1000),
            }
        };
        if policy == SchedPolicy::Deadline {
            // rt-app: dl-period defaults to dl-runtime, dl-deadline to dl-period.
            let r = us(self, "dl-runtime")?;
            let p = match us(self, "dl-period")? {
                0 => r,
                p => p,
            };
            let d = match us(self, "dl-deadline")? {
                0 => p,
                d => d,
            };
            crate::sched::deadline::checkparam(r, d, p).map_err(|why| self.err(&format!("{at}.dl-runtime"), why))?;
            (attr.dl_runtime_ns, attr.dl_deadline_ns, attr.dl_period_ns) = (r, d, p);
        } else {
            // On SCHED_OTHER, dl-runtime is EEVDF's custom slice (v6.12+),
            // which v6.8's sched_setattr ignores: checked, not used.
            us(self, "dl-runtime")?;
            us(self, "dl-period")?;
            us(self, "dl-deadline")?;
        }
        for (k, slot) in [("util_min", &mut attr.util_min), ("util_max", &mut attr.util_max)] {
            if let Some(v) = task.get(k) {
                *slot = Some(self.int_in(&format!("{at}.{k}"), v, 0, 1024, "a utilisation clamp")? as u32);
            }
        }
        if let Some(v) = task.get("taskgroup") {
            attr.group = self.taskgroup(&format!("{at}.taskgroup"), v)?;
        }
        Ok((attr, nice))
    }

    /// A `taskgroup` path: its group's index, None for the root ("/").
    /// rt-app makes the cgroup and its parents; each group's parent is
    /// listed before it.
    fn taskgroup(&mut self, at: &str, v: &Json) -> Result<Option<u32>> {
        let path = v.as_str().ok_or_else(|| self.err(at, format!("{}: a cgroup path", v.brief())))?;
        let path = path.trim_end_matches('/');
        if path.is_empty() {
            return Ok(None);
        }
        for (i, _) in path.match_indices('/').filter(|&(i, _)| i > 0) {
            self.groups.index(&path[..i]);
        }
        Ok(Some(self.groups.index(path)))
    }

    fn task(&mut self, name: &str, t: &Json) -> Result<TaskSpec> {
        let at = format!("tasks.{name}");
        if !matches!(t, Json::Obj(_)) {
            return Err(self.err(&at, "a task must be an object"));
        }
        let (attr, nice) = self.sched_attr(&at, t)?;
        let mut spec = TaskSpec::new(name, Program::default());
        spec.instances = self.tasks[name];
        spec.nice = nice;
        spec.sched = attr;
        if let Some(v) = t.get("delay") {
            let dat = format!("{at}.delay");
            let us = v.as_i64().ok_or_else(|| self.err(&dat, format!("{}: µs ≥ 0", v.brief())))?;
            spec.start_ns = limits::within(us, 0, limits::MAX_EVENT_US, "µs").map_err(|e| self.err(&dat, e))? * 1000;
        }
        if let Some(v) = t.get("cpus") {
            spec.affinity = Some(self.cpus(&format!("{at}.cpus"), v)?);
        }
        let mut ops = Vec::new();
        let mut own_timers = Names::default();
        let has_phases = t.get("phases").is_some();
        // Without phases a task's `loop` belongs to its one phase and the
        // thread runs it once; with neither, the thread loops forever.
        let thread_loop = match t.get("loop") {
            Some(v) if has_phases => self.count(&format!("{at}.loop"), v)?,
            Some(_) => 1,
            None => -1,
        };
        if self.ftrace.main {
            ops.push(Op::TraceMarker { marker: TraceMarker::MainStart });
        }
        if self.ftrace.task {
            ops.push(Op::TraceMarker { marker: TraceMarker::Text("rtapp_task: event=start".into()) });
        }
        self.phase_no = 0;
        let thread = open_loop(&mut ops, thread_loop);
        if legacy::is_legacy(t) {
            self.legacy_task(&at, t, &mut spec, &mut ops, &mut own_timers)?;
        } else if let Some(phases) = t.get("phases") {
            if !matches!(phases, Json::Obj(kv) if !kv.is_empty()) {
                return Err(self.err(&format!("{at}.phases"), "an object of one or more phases"));
            }
            for (k, v) in t.entries() {
                self.task_key(&at, k, v)?;
            }
            for (pname, p) in phases.entries() {
                let pat = format!("{at}.phases.{pname}");
                if !matches!(p, Json::Obj(_)) {
                    return Err(self.err(&pat, "a phase must be an object"));
                }
                self.phase(&pat, name, p, t, &mut ops, &mut own_timers)?;
                self.phase_no += 1;
            }
        } else {
            self.phase(&at, name, t, t, &mut ops, &mut own_timers)?;
        }
        close_loop(&mut ops, thread);
        if self.ftrace.task {
            ops.push(Op::TraceMarker { marker: TraceMarker::Text("rtapp_task: event=end".into()) });
        }
        spec.program = std::sync::Arc::new(Program { ops });
        Ok(spec)
    }

    /// A task in rt-app's pre-v1.0 grammar (see `legacy.rs`).
    fn legacy_task(&mut self, at: &str, t: &Json, spec: &mut TaskSpec, ops: &mut Vec<Op>, own: &mut Names) -> Result<()> {
        if self.legacy.is_none() {
            self.legacy = Some(self.legacy_table()?);
        }
        let table = self.legacy.take().unwrap_or_default();
        let phases = t.get("phases");
        if spec.sched.policy == SchedPolicy::Deadline {
            // rt-app of that time reserved exec every period, by deadline.
            if phases.is_some() {
                return Err(self.err(
                    &format!("{at}.policy"),
                    "SCHED_DEADLINE on a pre-v1.0 task with phases: which phase's exec/period is the reservation is not defined; give the task dl-runtime, dl-period, dl-deadline in the event grammar",
                ));
            }
            let us = |k: &str| t.get(k).and_then(Json::as_i64).and_then(|v| u64::try_from(v).ok());
            let r = us("exec").unwrap_or(0) * 1000;
            let p = us("period").map_or(r, |v| v * 1000);
            let d = us("deadline").map_or(p, |v| v * 1000);
            crate::sched::deadline::checkparam(r, d, p).map_err(|why| self.err(&format!("{at}.exec"), why))?;
            (spec.sched.dl_runtime_ns, spec.sched.dl_deadline_ns, spec.sched.dl_period_ns) = (r, d, p);
        }
        let out = match phases {
            Some(phases) => {
                if !matches!(phases, Json::Obj(kv) if !kv.is_empty()) {
                    return Err(self.err(&format!("{at}.phases"), "an object of one or more phases"));
                }
                for (k, v) in t.entries() {
                    self.task_key(at, k, v)?;
                }
                phases.entries().iter().try_for_each(|(pname, p)| {
                    let pat = format!("{at}.phases.{pname}");
                    if !matches!(p, Json::Obj(_)) {
                        return Err(self.err(&pat, "a phase must be an object"));
                    }
                    self.legacy_phase(&pat, p, false, &table, ops, own)
                })
            }
            None => self.legacy_phase(at, t, true, &table, ops, own),
        };
        self.legacy = Some(table);
        out
    }

    /// A key of a task object that has `phases`.
    fn task_key(&self, at: &str, k: &str, _v: &Json) -> Result<()> {
        match k {
            "loop" | "instance" | "delay" | "phases" | "cpus" | "priority" | "policy" => Ok(()),
            _ if SCHED_KEYS.contains(&k) => Ok(()),
            _ if event_kind(k).is_some() => Err(self.err(
                &format!("{at}.{k}"),
                "an event beside \"phases\": rt-app ignores it; move it into a phase",
            )),
            _ => Err(self.unsupported_key(at, k)),
        }
    }

    fn unsupported_key(&self, at: &str, k: &str) -> Error {
        let why = match k {
            "nodes_membind" => "NUMA memory binding is not modelled",
            "period" | "lock_order" | "resources" | "deadline" => {
                "a key of rt-app's pre-v1.0 grammar (2014-2015), whose every phase also has exec (µs); give it exec, or write the task in events (run, timer, lock/unlock)"
            }
            _ => "neither an rt-app event nor a task or phase property",
        };
        self.err(&format!("{at}.{k}"), why)
    }

    fn count(&self, at: &str, v: &Json) -> Result<i64> {
        v.as_i64().ok_or_else(|| self.err(at, format!("{}: an integer (-1 = forever)", v.brief())))
    }

    fn cpus(&self, at: &str, v: &Json) -> Result<Vec<usize>> {
        match v {
            Json::Arr(a) if !a.is_empty() => a
                .iter()
                .map(|c| c.as_i64().and_then(|c| usize::try_from(c).ok()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.err(at, "a list of CPU numbers")),
            _ => Err(self.err(at, format!("{}: a non-empty list of CPU numbers", v.brief()))),
        }
    }

    /// One phase (or the task itself when it has no `phases`).
    fn phase(&mut self, at: &str, task: &str, p: &Json, t: &Json, ops: &mut Vec<Op>, own: &mut Names) -> Result<()> {
        let is_task = std::ptr::eq(p, t);
        let loops = match p.get("loop") {
            Some(v) => self.count(&format!("{at}.loop"), v)?,
            None => 1,
        };
        // rt-app repeats a phase until its counter, starting at 1, equals
        // `loop`: 0 and negative values never do.
        let loops = if loops <= 0 { -1 } else { loops };
        let phase = open_loop(ops, loops);
        if !is_task && phase_cpus(t) {
            // Per-phase affinity: each phase sets its own, or the task's.
            let cpus = match p.get("cpus").or_else(|| t.get("cpus")) {
                Some(v) => Some(self.cpus(&format!("{at}.cpus"), v)?.into()),
                None => None,
            };
            ops.push(Op::SetAffinity { cpus });
        }
        if let (false, Some(v)) = (is_task, p.get("taskgroup")) {
            // A phase's taskgroup moves the thread at the phase's start; a
            // phase without one leaves it where the last move put it.
            let group = self.taskgroup(&format!("{at}.taskgroup"), v)?;
            ops.push(Op::SetGroup { group });
        }
        let phase_no = self.phase_no;
        if self.ftrace.loops {
            ops.push(Op::TraceMarker { marker: TraceMarker::Loop { start: true, phase: phase_no } });
        }
        let (mut event_no, mut event_ops) = (0, 0);
        for (k, v) in p.entries() {
            let kat = format!("{at}.{k}");
            if let Some(kind) = event_kind(k) {
                if self.ftrace.event {
                    let line = format!("rtapp_event: id={event_no} type={} desc={k}", event_type(kind));
                    ops.push(Op::TraceMarker { marker: TraceMarker::Text(line.into()) });
                }
                event_no += 1;
                let before = ops.len();
                self.event(&kat, task, kind, v, ops, own)?;
                event_ops += ops.len() - before;
                continue;
            }
            match k.as_str() {
                "loop" | "cpus" => {}
                "taskgroup" if !is_task => {}
                "instance" | "delay" | "phases" | "priority" | "policy" if is_task => {}
                _ if SCHED_KEYS.contains(&k.as_str()) && is_task => {}
                "priority" | "policy" if p.get(k) == t.get(k) => {}
                _ if SCHED_KEYS.contains(&k.as_str()) && p.get(k) == t.get(k) => {}
                "priority" | "policy" => {
                    return Err(self.err(&kat, "a per-phase change of scheduling class or priority is not modelled"));
                }
                _ if SCHED_KEYS.contains(&k.as_str()) => {
                    return Err(self.err(&kat, "a per-phase change of deadline parameters or clamps is not modelled"));
                }
                _ => return Err(self.unsupported_key(at, k)),
            }
        }
        if event_ops == 0 {
            return Err(self.err(at, "no events (rt-app refuses a phase without events)"));
        }
        if self.ftrace.loops {
            ops.push(Op::TraceMarker { marker: TraceMarker::Loop { start: false, phase: phase_no } });
        }
        close_loop(ops, phase);
        Ok(())
    }

    /// A `run` (`fixed_time` false: calibrated work) or `runtime` of `us`
    /// µs, recorded as a run event.
    fn timed_run(&self, ops: &mut Vec<Op>, us: u64, fixed_time: bool) {
        let ns = us as f64 * 1e3;
        let (cycles, mem) = if fixed_time {
            (super::cycles_for_ns_at(ns, self.cal.ref_khz), 1.0)
        } else {
            (super::cycles_for_ns_at(ns, self.cal.run_khz), 0.0)
        };
        ops.push(Op::Mark);
        ops.push(Op::Run { cycles: Dist::Fixed(cycles), mem });
        ops.push(Op::Record { series: RUN, since: Since::Mark, deadline_ns: None });
        ops.push(Op::Count { counter: NOMINAL_RUN_NS, amount: ns as u64 });
    }

    /// The pre-v1.0 grammar's busy loop (`exec`, a resource's `duration`):
    /// a calibrated `run`; nothing for 0.
    fn calibrated_run(&self, ops: &mut Vec<Op>, us: u64) {
        if us > 0 {
            self.timed_run(ops, us, false);
        }
    }

    fn event(&mut self, at: &str, task: &str, kind: &str, v: &Json, ops: &mut Vec<Op>, own: &mut Names) -> Result<()> {
        let name = |s: &Self| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| s.err(at, format!("{}: the {kind} event takes a name (a string)", v.brief())))
        };
        let us = |s: &Self| {
            let n = v
                .as_i64()
                .ok_or_else(|| s.err(at, format!("{}: the {kind} event takes a duration in µs (an integer ≥ 0)", v.brief())))?;
            limits::within(n, 0, limits::MAX_EVENT_US, "µs").map_err(|e| s.err(at, e))
        };
        let bytes = |s: &Self| {
            let n = v.as_i64().ok_or_else(|| s.err(at, format!("{}: the {kind} event takes bytes ≥ 0", v.brief())))?;
            limits::within(n, 0, limits::MAX_BYTES, "bytes").map_err(|e| s.err(at, e))
        };
        let field = |s: &Self, f: &str| {
            v.get(f)
                .and_then(Json::as_str)
                .map(str::to_string)
                .ok_or_else(|| s.err(at, format!("the {kind} event takes {{ \"ref\": ..., \"mutex\": ... }}; \"{f}\" is missing")))
        };
        match kind {
            "run" => {
                let n = us(self)?;
                self.timed_run(ops, n, false);
            }
            "runtime" => {
                let n = us(self)?;
                self.timed_run(ops, n, true);
            }
            "sleep" => ops.push(Op::Sleep { ns: Dist::Fixed(us(self)? as f64 * 1e3) }),
            "timer" => {
                let r = v.get("ref").and_then(Json::as_str).unwrap_or("unknown").to_string();
                let period = match v.get("period") {
                    None => 0,
                    Some(p) => {
                        let pat = format!("{at}.period");
                        let n = p.as_i64().ok_or_else(|| self.err(&pat, "µs ≥ 0"))?;
                        limits::within(n, 0, limits::MAX_EVENT_US, "µs").map_err(|e| self.err(&pat, e))?
                    }
                };
                let relative = match v.get("mode").map(|m| m.as_str()) {
                    None | Some(Some("relative")) => true,
                    Some(Some("absolute")) => false,
                    Some(_) => return Err(self.err(&format!("{at}.mode"), "\"relative\" or \"absolute\"")),
                };
                if let Some((k, _)) = v.entries().iter().find(|(k, _)| !["ref", "period", "mode"].contains(&k.as_str())) {
                    return Err(self.err(&format!("{at}.{k}"), "a timer takes ref, period and mode"));
                }
                let timer = if r.starts_with("unique") {
                    TimerRef::Own(own.index(&r))
                } else {
                    TimerRef::Shared(self.shared_timers.index(&r))
                };
                ops.push(Op::Timer { period_ns: period * 1000, timer, relative });
                ops.push(Op::Record { series: WU_LAT, since: Since::Wake, deadline_ns: None });
            }
            "lock" => ops.push(Op::Lock { mutex: self.mutexes.index(&name(self)?) }),
            "unlock" => ops.push(Op::Unlock { mutex: self.mutexes.index(&name(self)?) }),
            "signal" | "broad" => ops.push(Op::CondSignal { cond: self.conds.index(&name(self)?), all: kind == "broad" }),
            "wait" | "sync" => {
                let cond = self.conds.index(&field(self, "ref")?);
                let mutex = self.mutexes.index(&field(self, "mutex")?);
                if kind == "sync" {
                    ops.push(Op::CondSignal { cond, all: false });
                }
                ops.push(Op::CondWait { cond, mutex });
            }
            "suspend" | "resume" => {
                let mut n = name(self)?;
                if n.is_empty() && kind == "suspend" {
                    // workgen fills an empty suspend with the thread's own name.
                    n = task.to_string();
                }
                let (cond, mutex) = (self.conds.index(&n), self.mutexes.index(&n));
                ops.push(Op::Lock { mutex });
                ops.push(if kind == "suspend" { Op::CondWait { cond, mutex } } else { Op::CondSignal { cond, all: true } });
                ops.push(Op::Unlock { mutex });
            }
            "barrier" => {
                let b = self.barriers.index(&name(self)?) as usize;
                if self.barrier_parties.len() <= b {
                    self.barrier_parties.resize(b + 1, 0);
                }
                self.barrier_parties[b] += self.tasks[task];
                ops.push(Op::Barrier { barrier: b as u32 });
            }
            "fork" => {
                let n = name(self)?;
                if !self.tasks.contains_key(&n) {
                    return Err(self.err(at, format!("no task \"{n}\" to fork")));
                }
                ops.push(Op::Fork { template: self.forked.index(&n), count: 1 });
            }
            "yield" => ops.push(Op::Yield),
            "mem" => {
                let bytes = bytes(self)?;
                let cycles = super::cycles_for_ns_at(bytes as f64 * MEMSET_NS_PER_BYTE, self.cal.ref_khz);
                ops.push(Op::Run { cycles: Dist::Fixed(cycles), mem: 1.0 });
            }
            "iorun" => {
                if !self.io_device_ok {
                    return Err(self.err(at, "iorun to an io_device other than /dev/null is not modelled"));
                }
                let bytes = bytes(self)?;
                let writes = (bytes as f64 / self.mem_buffer_size as f64).ceil();
                let cycles = super::cycles_for_ns_at(writes * WRITE_NS, self.cal.ref_khz);
                ops.push(Op::Run { cycles: Dist::Fixed(cycles), mem: 0.0 });
            }
            _ => unreachable!("event kinds come from EVENTS"),
        }
        Ok(())
    }
}

/// The first resource a task of the pre-v1.0 grammar reaches through
/// `access` that neither its own `resources` nor the file's top-level
/// `resources` define, with where it is named: such a file is one piece of
/// a use case split across files.
fn undefined_resource(tasks: &Json, top: Option<&Json>) -> Option<(String, String)> {
    let defined_top = |n: &str| top.is_some_and(|r| r.get(n).is_some());
    for (task, t) in tasks.entries() {
        let mut scopes: Vec<(String, &Json)> = vec![(format!("tasks.{task}"), t)];
        if let Some(phases) = t.get("phases") {
            scopes.extend(phases.entries().iter().map(|(p, v)| (format!("tasks.{task}.phases.{p}"), v)));
        }
        for (at, scope) in scopes {
            let Some(res) = scope.get("resources") else { continue };
            for (r, v) in res.entries() {
                let Some(Json::Arr(names)) = v.get("access") else { continue };
                for n in names.iter().filter_map(Json::as_str) {
                    if res.get(n).is_none() && !defined_top(n) {
                        return Some((format!("{at}.resources.{r}.access"), n.to_string()));
                    }
                }
            }
        }
    }
    None
}

/// The event an object key names, by rt-app's prefix rule.
fn event_kind(key: &str) -> Option<&'static str> {
    let kind = EVENTS.iter().find(|e| key.starts_with(*e)).copied()?;
    // obj_is_event() accepts "runtime..." under "run" too; parse_task_event_data tells them apart.
    Some(if kind == "run" && key.starts_with("runtime") { "runtime" } else { kind })
}

/// Open a loop of `n` iterations (-1: forever); returns its index for
/// [`close_loop`].
fn open_loop(ops: &mut Vec<Op>, n: i64) -> usize {
    ops.push(Op::Loop { count: u64::try_from(n).ok(), end: 0 });
    ops.len() - 1
}

fn close_loop(ops: &mut Vec<Op>, start: usize) {
    let end = ops.len() as u32;
    ops.push(Op::EndLoop { start: start as u32 });
    if let Op::Loop { end: e, .. } = &mut ops[start] {
        *e = end;
    }
}

impl Workload for RtApp {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let cal_cpu = match self.doc.get("global").and_then(|g| g.get("calibration")) {
            Some(Json::Str(s)) => s.trim_start_matches("CPU").parse::<usize>().unwrap_or(0),
            _ => 0,
        };
        if cal_cpu >= platform.nr_cpus() {
            return Err(Error::file(
                &self.path,
                None,
                format!("global.calibration: CPU{cal_cpu} is not a CPU of {} (0 to {})", platform.name, platform.nr_cpus() - 1),
            ));
        }
        let ct = platform.cpu_type_of(cal_cpu);
        let highest = ct.turbo_max_khz.first().copied().unwrap_or(0).max(ct.opps.iter().map(|o| o.khz).max().unwrap_or(ct.base_khz));
        let cal = Calibration { run_khz: highest, ref_khz: platform.cpu_types[0].base_khz };
        Conv::new(self, cal).setup()
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let run = &r.series[RUN as usize];
        let nominal = r.counters[NOMINAL_RUN_NS as usize] as f64;
        // No run event completed: no stretch to report.
        let stretch = Metric {
            value: (nominal > 0.0).then(|| run.sum as f64 / nominal),
            ..Metric::new("run_stretch", 0.0, "ratio", Better::Lower)
        };
        let mut m = vec![stretch];
        latency_metrics("run", run, &mut m);
        m.push(Metric::new("run_count", run.count as f64, "count", Better::Higher));
        latency_metrics("wu_lat", &r.series[WU_LAT as usize], &mut m);
        m.push(Metric::new("timer_misses", r.timer_misses as f64, "count", Better::Lower));
        m.push(Metric::new("work_rate_gcps", r.per_second(r.cycles_retired) / 1e9, "Gcycles/s", Better::Higher));
        m
    }

    fn primary(&self) -> &'static str {
        "run_stretch"
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![
            FILE.show(self.path.display()),
            RT_AS_CFS.show_flag(self.rt_as_cfs),
        ]
    }
}

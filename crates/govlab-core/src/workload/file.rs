//! Workloads written in TOML: the task language without Rust.
//!
//! ```toml
//! description = "two tasks ping-ponging over a pipe"
//! [[channel]]
//! name = "ping"
//! capacity_bytes = 65536          # default 65536 (a pipe)
//! [[series]]                       # latency series, recorded by `record`
//! name = "rtt"
//! [[task]]
//! comm = "client"
//! instances = 1                    # default 1
//! cpus = [0]                       # affinity, default all
//! loop = "forever"                 # or a count; default: run ops once
//! ops = [
//!   { mark = true },
//!   { send = "ping", bytes = 64 },
//!   { run = "20us", mem = 0.1 },   # time at the reference frequency
//!   { recv = "pong" },
//!   { record = "rtt", since = "mark" },
//!   { sleep = "1ms", dist = "exp" },
//! ]
//! ```
//!
//! Ops (one key naming the op, plus its options): `run` (duration at the
//! reference frequency; `mem`, `dist` = fixed | exp | uniform | lognormal,
//! `cv`), `run_cycles`, `sleep` (`dist`), `timer` (period), `io` (= read |
//! write | flush; `bytes`, `device`), `send` (channel; `bytes`), `recv`,
//! `lock`, `unlock` (mutex names, created on first use), `fork` (template
//! task comm; `count`), `join`, `exit`, `yield`, `call_rcu` (= true: the
//! kernel queues an RCU callback on the task's CPU, as a close(2) does;
//! machine/rcu.rs), `mark`, `record` (series;
//! `since` = wake | mark | request, `deadline`), `count` (counter;
//! `amount`), `loop` (count or "forever"; `ops`). `[[source]]` entries
//! (`name`, `channel`, `rate` per second, `arrivals` = poisson | constant)
//! feed a channel open-loop; tasks with `template = true` start only when
//! forked.
//!
//! Metrics: for each series its mean/p50/p99/p99.9/max in µs, each counter
//! per second, and the work rate; the primary metric is the first series'
//! p99 (lower is better), or the work rate when there is no series.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::Value;

use super::{
    latency_metrics, Arrivals, Better, ChannelSpec, Dist, IoKind, Metric, Op, Program, Record, Setup, Since,
    SourceSpec, TaskSpec, TimerRef, Workload,
};
use super::limits;
use crate::error::{Error, Result};
use crate::params::{parse_duration_ns, Params, Spec};
use crate::platform::Platform;
use crate::sim::rng::Rng;

/// A workload loaded from a TOML file. The file is parsed when loaded (so
/// errors surface before the run) and resolved against the platform at setup.
pub struct FileWorkload {
    path: PathBuf,
    text: String,
    doc: toml::Table,
    series: Vec<String>,
    counters: Vec<String>,
}

impl FileWorkload {
    pub fn load(spec: &Spec) -> Result<Box<dyn Workload>> {
        Params::new(format!("workload {}", spec.name), spec).finish()?;
        let path = PathBuf::from(&spec.name);
        let text = crate::input::read_text(&path, "workload file", crate::input::MAX_DESCRIPTION_BYTES)?;
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map(|s| crate::error::line_of(&text, s.start));
            Error::file(&path, line, e.message().to_string())
        })?;
        let mut w = FileWorkload { path, text, doc, series: Vec::new(), counters: Vec::new() };
        w.series = w.names("series")?;
        // Validate everything now, against a neutral reference frequency.
        let mut ctx = Ctx::new(&w, 1_000_000);
        ctx.setup()?;
        w.counters = ctx.counters.keys().cloned().collect();
        Ok(Box::new(w))
    }

    fn names(&self, table: &str) -> Result<Vec<String>> {
        let mut out = Vec::new();
        if let Some(v) = self.doc.get(table) {
            let arr = v.as_array().ok_or_else(|| self.err(table, format!("'{table}' must be an array of tables ([[{table}]])")))?;
            for (i, e) in arr.iter().enumerate() {
                let name = e
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| self.err(table, format!("{table}[{i}] needs a name")))?;
                out.push(name.to_string());
            }
        }
        Ok(out)
    }

    /// An error naming the file and the line where `key` first appears.
    fn err(&self, key: &str, message: String) -> Error {
        let line = self
            .text
            .lines()
            .position(|l| l.trim_start().starts_with(key) || l.contains(&format!("{key} =")) || l.contains(&format!("{key}=")))
            .map(|i| i + 1);
        Error::file(&self.path, line, message)
    }
}

/// Resolution state while building a Setup.
struct Ctx<'a> {
    w: &'a FileWorkload,
    f_ref_khz: u32,
    chans: BTreeMap<String, u32>,
    mutexes: BTreeMap<String, u32>,
    counters: BTreeMap<String, u16>,
    templates: BTreeMap<String, u32>,
    devices: Vec<String>,
}

impl<'a> Ctx<'a> {
    fn new(w: &'a FileWorkload, f_ref_khz: u32) -> Self {
        Ctx {
            w,
            f_ref_khz,
            chans: BTreeMap::new(),
            mutexes: BTreeMap::new(),
            counters: BTreeMap::new(),
            templates: BTreeMap::new(),
            devices: vec!["ssd".into()],
        }
    }

    fn err(&self, key: &str, msg: impl Into<String>) -> Error {
        self.w.err(key, msg.into())
    }

    fn setup(&mut self) -> Result<Setup> {
        let doc = &self.w.doc;
        for k in doc.keys() {
            if !["description", "channel", "series", "task", "source"].contains(&k.as_str()) {
                return Err(self.err(k, format!("unknown key '{k}'; valid keys: description, channel, series, task, source")));
            }
        }
        let mut setup = Setup { series: self.w.series.clone(), ..Setup::default() };
        for (i, name) in self.w.names("channel")?.into_iter().enumerate() {
            let t = &doc["channel"].as_array().map_or(Value::Boolean(false), |a| a[i].clone());
            let cap = match t.get("capacity_bytes") {
                None => 65_536,
                Some(v) => self.int_in(v, "capacity_bytes", &format!("channel {name}: capacity_bytes"), 1, limits::MAX_BYTES, "bytes")?,
            };
            self.chans.insert(name.clone(), i as u32);
            setup.channels.push(ChannelSpec::pipe(name, cap));
        }
        let tasks = match doc.get("task") {
            Some(Value::Array(a)) if !a.is_empty() => a.clone(),
            _ => return Err(self.err("task", "a workload file needs at least one [[task]]")),
        };
        // Templates first, so forks can name them.
        let mut tpl_index = 0;
        for t in &tasks {
            if t.get("template").and_then(Value::as_bool) == Some(true) {
                let comm = t.get("comm").and_then(Value::as_str).unwrap_or("task").to_string();
                self.templates.insert(comm, tpl_index);
                tpl_index += 1;
            }
        }
        let mut threads = 0;
        for t in &tasks {
            let spec = self.task(t)?;
            if t.get("template").and_then(Value::as_bool) == Some(true) {
                setup.templates.push(spec);
            } else {
                threads += u64::from(spec.instances);
                if threads > limits::MAX_THREADS {
                    return Err(self.err(
                        "instances",
                        format!("the tasks start more than {} threads in all (the most a workload may start)", limits::MAX_THREADS),
                    ));
                }
                setup.tasks.push(spec);
            }
        }
        if setup.tasks.is_empty() {
            return Err(self.err("task", "every [[task]] is a template: nothing would start"));
        }
        if let Some(v) = doc.get("source") {
            for s in v.as_array().into_iter().flatten() {
                let name = s.get("name").and_then(Value::as_str).unwrap_or("source").to_string();
                let chan_name = s.get("channel").and_then(Value::as_str).ok_or_else(|| self.err("source", "a [[source]] needs channel = \"NAME\""))?;
                let chan = self.chan(chan_name)?;
                let rate = s
                    .get("rate")
                    .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                    .ok_or_else(|| self.err("rate", "a [[source]] needs rate = requests per second (> 0)"))?;
                if !(rate > 0.0 && rate <= limits::MAX_RATE_PER_S) {
                    return Err(self.err(
                        "rate",
                        format!("source {name}: rate = {rate}: out of range; valid: above 0, at most {:.0} per second", limits::MAX_RATE_PER_S),
                    ));
                }
                let arrivals = match s.get("arrivals").and_then(Value::as_str).unwrap_or("poisson") {
                    "poisson" => Arrivals::Poisson,
                    "constant" => Arrivals::Constant,
                    other => return Err(self.err("arrivals", format!("arrivals '{other}': one of poisson, constant"))),
                };
                setup.sources.push(SourceSpec { name, rate_per_s: rate, arrivals, chan });
            }
        }
        setup.mutexes = self.mutexes.len() as u32;
        setup.counters = self.counters.keys().cloned().collect();
        Ok(setup)
    }

    fn chan(&self, name: &str) -> Result<u32> {
        self.chans.get(name).copied().ok_or_else(|| {
            self.err(name, format!("unknown channel '{name}'; channels: {}", self.chans.keys().cloned().collect::<Vec<_>>().join(", ")))
        })
    }

    fn task(&mut self, t: &Value) -> Result<TaskSpec> {
        const KEYS: &[&str] = &["comm", "instances", "cpus", "nice", "loop", "ops", "template", "start", "stagger"];
        let tbl = t.as_table().ok_or_else(|| self.err("task", "each [[task]] must be a table"))?;
        for k in tbl.keys() {
            if !KEYS.contains(&k.as_str()) {
                return Err(self.err(k, format!("task: unknown key '{k}'; valid keys: {}", KEYS.join(", "))));
            }
        }
        let comm = tbl.get("comm").and_then(Value::as_str).unwrap_or("task").to_string();
        let ops_v = tbl.get("ops").and_then(Value::as_array).ok_or_else(|| self.err("ops", format!("task {comm}: needs ops = [ ... ]")))?;
        let mut ops = Vec::new();
        let body_start = ops.len();
        let loop_count = match tbl.get("loop") {
            None => Some(1),
            Some(Value::String(s)) if s == "forever" => None,
            Some(Value::Integer(n)) if *n >= 0 => Some(*n as u64),
            Some(v) => return Err(self.err("loop", format!("task {comm}: loop = {v}: a count or \"forever\""))),
        };
        if loop_count != Some(1) {
            ops.push(Op::Loop { count: loop_count, end: 0 });
        }
        self.ops(&comm, ops_v, &mut ops)?;
        if loop_count != Some(1) {
            let end = ops.len();
            ops.push(Op::EndLoop { start: body_start as u32 });
            ops[body_start] = Op::Loop { count: loop_count, end: end as u32 };
            if loop_count.is_none() && !takes_time(&ops) {
                return Err(self.err("loop", format!("task {comm}: a forever loop must contain an op that takes time (run, sleep, timer, io, recv, lock)")));
            }
        }
        let mut spec = TaskSpec::new(comm.clone(), Program { ops });
        spec.program = Arc::new(std::mem::take(Arc::make_mut(&mut spec.program)));
        spec.instances = match tbl.get("instances") {
            None => 1,
            Some(v) => self.int_in(v, "instances", &format!("task {comm}: instances"), 1, limits::MAX_INSTANCES, "threads")? as u32,
        };
        if let Some(v) = tbl.get("cpus") {
            let cpus: Option<Vec<usize>> = v.as_array().map(|a| a.iter().map(|c| c.as_integer().and_then(|i| usize::try_from(i).ok())).collect()).and_then(|v: Vec<Option<usize>>| v.into_iter().collect());
            spec.affinity = Some(cpus.ok_or_else(|| self.err("cpus", format!("task {comm}: cpus must be a list of CPU numbers")))?);
        }
        if let Some(v) = tbl.get("nice") {
            spec.nice = v.as_integer().filter(|n| (-20..=19).contains(n)).ok_or_else(|| self.err("nice", format!("task {comm}: nice must be -20..19")))? as i32;
        }
        if let Some(v) = tbl.get("start") {
            spec.start_ns = self.duration(&comm, "start", v)?;
        }
        if let Some(v) = tbl.get("stagger") {
            spec.stagger_ns = self.duration(&comm, "stagger", v)?;
        }
        Ok(spec)
    }

    fn duration(&self, comm: &str, key: &str, v: &Value) -> Result<u64> {
        let s = match v {
            Value::String(s) => s.clone(),
            Value::Integer(i) => format!("{i}us"),
            Value::Float(f) => format!("{f}us"),
            _ => String::new(),
        };
        let ns = parse_duration_ns(&s, 1000).ok_or_else(|| self.err(key, format!("task {comm}: {key} = {v}: a duration such as 10ms or 500us")))?;
        if ns > limits::MAX_EVENT_US * 1000 {
            return Err(self.err(key, format!("task {comm}: {key} = {v}: out of range; valid: at most {} s", limits::MAX_EVENT_US / 1_000_000)));
        }
        Ok(ns)
    }

    /// The integer `v` of `key` if it is in `min..=max`; the error names `what` and the range.
    fn int_in(&self, v: &Value, key: &str, what: &str, min: u64, max: u64, unit: &str) -> Result<u64> {
        let n = v.as_integer().ok_or_else(|| self.err(key, format!("{what} = {v}: an integer, {min}..={max}")))?;
        limits::within(n, min, max, unit).map_err(|e| self.err(key, format!("{what} = {e}")))
    }

    fn dist(&self, comm: &str, op: &toml::Table, key: &str, mean: f64) -> Result<Dist> {
        let cv = self.number(comm, op, "cv")?.unwrap_or(0.5);
        if !(0.0..=MAX_CV).contains(&cv) {
            return Err(self.err("cv", format!("task {comm}: cv = {cv}: a coefficient of variation from 0 to {MAX_CV}")));
        }
        Ok(match self.string(comm, op, "dist")?.unwrap_or("fixed") {
            "fixed" => Dist::Fixed(mean),
            "exp" => Dist::Exp { mean },
            "uniform" => Dist::Uniform { lo: 0.0, hi: 2.0 * mean },
            "lognormal" => Dist::lognormal(mean, cv),
            other => return Err(self.err(key, format!("task {comm}: dist '{other}': one of fixed, exp, uniform, lognormal"))),
        })
    }

    /// Option `key` of an op, a number if given.
    fn number(&self, comm: &str, op: &toml::Table, key: &str) -> Result<Option<f64>> {
        match op.get(key) {
            None => Ok(None),
            Some(Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(v) => Err(self.err(key, format!("task {comm}: {key} = {}: a number", shown(v)))),
        }
    }

    /// Option `key` of an op, a string if given.
    fn string<'t>(&self, comm: &str, op: &'t toml::Table, key: &str) -> Result<Option<&'t str>> {
        match op.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(key, format!("task {comm}: {key} = {}: a string", shown(v)))),
        }
    }

    /// An op's table holds the op's key and only the options it takes.
    fn op_options(&self, comm: &str, kind: &str, op: &toml::Table) -> Result<()> {
        let takes: &[&str] = match kind {
            "run" => &["mem", "dist", "cv"],
            "sleep" => &["dist", "cv"],
            "io" => &["bytes", "device"],
            "send" => &["bytes"],
            "fork" => &["count"],
            "record" => &["since", "deadline"],
            "count" => &["amount"],
            "loop" => &["ops"],
            _ => &[],
        };
        match op.keys().find(|k| k.as_str() != kind && !takes.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => {
                let options = if takes.is_empty() { "none".to_string() } else { takes.join(", ") };
                Err(self.err(k, format!("task {comm}: '{k}' is not an option of the {kind} op (one op per table; its options: {options})")))
            }
        }
    }

    /// A sleep or timer period, at least [`MIN_SPACING_NS`].
    fn spacing(&self, comm: &str, key: &str, ns: u64) -> Result<u64> {
        if ns < MIN_SPACING_NS {
            return Err(self.err(
                key,
                format!("task {comm}: {key} = {ns} ns: shorter than 1 µs, the soonest the kernel programs a timer to fire (kernel/time/clockevents.c, cev_delta2ns, v6.8)"),
            ));
        }
        Ok(ns)
    }

    fn ops(&mut self, comm: &str, list: &[Value], out: &mut Vec<Op>) -> Result<()> {
        const OPS: &[&str] = &[
            "run", "run_cycles", "sleep", "timer", "io", "send", "recv", "lock", "unlock", "fork", "join", "exit", "yield", "call_rcu", "mark", "record",
            "count", "loop",
        ];
        for v in list {
            let op = v.as_table().ok_or_else(|| self.err("ops", format!("task {comm}: each op is an inline table such as {{ run = \"1ms\" }}")))?;
            let Some(kind) = op.keys().find(|k| OPS.contains(&k.as_str())).cloned() else {
                let k = op.keys().next().cloned().unwrap_or_default();
                return Err(self.err(&k, format!("task {comm}: unknown op '{k}'; ops: {}", OPS.join(", "))));
            };
            self.op_options(comm, &kind, op)?;
            let arg = &op[&kind];
            let as_dur = |s: &Self, key: &str| s.duration(comm, key, arg);
            match kind.as_str() {
                "run" => {
                    let ns = as_dur(self, "run")? as f64;
                    let cycles = super::cycles_for_ns_at(ns, self.f_ref_khz);
                    let mem = self.number(comm, op, "mem")?.unwrap_or(0.0);
                    if !(0.0..=1.0).contains(&mem) {
                        return Err(self.err("mem", format!("task {comm}: mem = {mem}: a fraction from 0 to 1")));
                    }
                    out.push(Op::Run { cycles: self.dist(comm, op, "run", cycles)?, mem });
                }
                "run_cycles" => {
                    let c = arg.as_integer().filter(|&c| c > 0).ok_or_else(|| self.err("run_cycles", format!("task {comm}: run_cycles must be a positive integer")))?;
                    out.push(Op::Run { cycles: Dist::Fixed(c as f64), mem: 0.0 });
                }
                "sleep" => {
                    let ns = self.spacing(comm, "sleep", as_dur(self, "sleep")?)? as f64;
                    out.push(Op::Sleep { ns: self.dist(comm, op, "sleep", ns)? });
                }
                "timer" => {
                    let period_ns = self.spacing(comm, "timer", as_dur(self, "timer")?)?;
                    out.push(Op::Timer { period_ns, timer: TimerRef::Own(0), relative: false });
                }
                "io" => {
                    // `fua`: a REQ_PREFLUSH|REQ_FUA write, a journal's commit record.
                    let kind = match arg.as_str() {
                        Some("read") => Some(IoKind::Read),
                        Some("write") => Some(IoKind::Write),
                        Some("flush") => Some(IoKind::Flush),
                        Some("fua") => None,
                        _ => return Err(self.err("io", format!("task {comm}: io = read | write | flush | fua"))),
                    };
                    let bytes = match op.get("bytes") {
                        None => 4096,
                        Some(v) => self.int_in(v, "bytes", &format!("task {comm}: io bytes"), 0, limits::MAX_BYTES, "bytes")?,
                    };
                    let dev = op.get("device").and_then(Value::as_str).unwrap_or("ssd");
                    let device = self
                        .devices
                        .iter()
                        .position(|d| d == dev)
                        .ok_or_else(|| self.err("device", format!("task {comm}: unknown device '{dev}'; devices: {}", self.devices.join(", "))))?;
                    out.push(match kind {
                        Some(kind) => Op::Io { device: device as u32, kind, bytes },
                        None => Op::IoFua { device: device as u32, bytes },
                    });
                }
                "send" | "recv" => {
                    let name = arg.as_str().ok_or_else(|| self.err(&kind, format!("task {comm}: {kind} = \"CHANNEL\"")))?;
                    let chan = self.chan(name)?;
                    if kind == "send" {
                        let bytes = match op.get("bytes") {
                            None => 1,
                            Some(v) => self.int_in(v, "bytes", &format!("task {comm}: send bytes"), 1, limits::MAX_BYTES, "bytes")?,
                        };
                        out.push(Op::Send { chan, bytes });
                    } else {
                        out.push(Op::Recv { chan });
                    }
                }
                "lock" | "unlock" => {
                    let name = arg.as_str().ok_or_else(|| self.err(&kind, format!("task {comm}: {kind} = \"MUTEX\"")))?.to_string();
                    let n = self.mutexes.len() as u32;
                    let mutex = *self.mutexes.entry(name).or_insert(n);
                    out.push(if kind == "lock" { Op::Lock { mutex } } else { Op::Unlock { mutex } });
                }
                "fork" => {
                    let name = arg.as_str().ok_or_else(|| self.err("fork", format!("task {comm}: fork = \"TEMPLATE_COMM\"")))?;
                    let template = *self.templates.get(name).ok_or_else(|| {
                        self.err("fork", format!("task {comm}: no template task '{name}'; templates: {}", self.templates.keys().cloned().collect::<Vec<_>>().join(", ")))
                    })?;
                    let count = match op.get("count") {
                        None => 1,
                        Some(v) => self.int_in(v, "count", &format!("task {comm}: fork count"), 1, limits::MAX_FORK_COUNT, "threads")? as u32,
                    };
                    out.push(Op::Fork { template, count });
                }
                "join" => out.push(Op::Join),
                "exit" => out.push(Op::Exit),
                "yield" => out.push(Op::Yield),
                "call_rcu" => {
                    if arg.as_bool() != Some(true) {
                        return Err(self.err("call_rcu", format!("task {comm}: call_rcu = {}: write {{ call_rcu = true }}", shown(arg))));
                    }
                    out.push(Op::CallRcu);
                }
                "mark" => {
                    if arg.as_bool() != Some(true) {
                        return Err(self.err("mark", format!("task {comm}: mark = {}: write {{ mark = true }}", shown(arg))));
                    }
                    out.push(Op::Mark);
                }
                "record" => {
                    let name = arg.as_str().unwrap_or_default();
                    let series = self.w.series.iter().position(|s| s == name).ok_or_else(|| {
                        self.err("record", format!("task {comm}: unknown series '{name}'; declare it with [[series]] name = \"{name}\""))
                    })? as u16;
                    let since = match self.string(comm, op, "since")?.unwrap_or("wake") {
                        "wake" => Since::Wake,
                        "mark" => Since::Mark,
                        "request" => Since::Request,
                        other => return Err(self.err("since", format!("task {comm}: since '{other}': one of wake, mark, request"))),
                    };
                    let deadline_ns = match op.get("deadline") {
                        Some(v) => Some(self.duration(comm, "deadline", v)?),
                        None => None,
                    };
                    out.push(Op::Record { series, since, deadline_ns });
                }
                "count" => {
                    let name = arg.as_str().unwrap_or("count").to_string();
                    let n = self.counters.len() as u16;
                    let counter = *self.counters.entry(name).or_insert(n);
                    let amount = match op.get("amount") {
                        None => 1,
                        Some(v) => self.int_in(v, "amount", &format!("task {comm}: count amount"), 0, limits::MAX_COUNT_AMOUNT, "")?,
                    };
                    out.push(Op::Count { counter, amount });
                }
                "loop" => {
                    let count = match arg {
                        Value::String(s) if s == "forever" => None,
                        Value::Integer(n) if *n >= 0 => Some(*n as u64),
                        _ => return Err(self.err("loop", format!("task {comm}: loop = a count or \"forever\""))),
                    };
                    let body = op.get("ops").and_then(Value::as_array).ok_or_else(|| self.err("loop", format!("task {comm}: a loop op needs ops = [ ... ]")))?;
                    let start = out.len();
                    out.push(Op::Loop { count, end: 0 });
                    self.ops(comm, body, out)?;
                    let end = out.len();
                    out.push(Op::EndLoop { start: start as u32 });
                    out[start] = Op::Loop { count, end: end as u32 };
                    if count.is_none() && !takes_time(&out[start..]) {
                        return Err(self.err("loop", format!("task {comm}: a forever loop must contain an op that takes time")));
                    }
                }
                _ => unreachable!("op kinds are checked against OPS above"),
            }
        }
        Ok(())
    }
}

/// The shortest sleep or timer period: Linux never programs a clock event
/// device less than 1 µs ahead (v6.8 kernel/time/clockevents.c,
/// cev_delta2ns: "Deltas less than 1usec are pointless noise"), so a
/// shorter one fires after 1 µs at the soonest; below it a forever loop
/// would only cost events.
pub const MIN_SPACING_NS: u64 = 1000;

/// The largest `cv` of a distribution (assumed: ten times the spread of any
/// service-time model of the built-in platforms, whose largest is 0.5).
const MAX_CV: f64 = 10.0;

/// An option's value, at most a few words of it, for a message.
fn shown(v: &Value) -> String {
    crate::error::shown(&v.to_string())
}

fn takes_time(ops: &[Op]) -> bool {
    ops.iter().any(|o| match o {
        Op::Run { cycles, .. } => cycles.mean() > 0.0,
        Op::Sleep { ns } => ns.mean() > 0.0,
        Op::Timer { .. } | Op::Io { .. } | Op::IoFua { .. } | Op::IoRing { .. } | Op::Recv { .. } | Op::RecvAny { .. } | Op::Lock { .. } | Op::Join | Op::CondWait { .. } | Op::WaitEvent { .. } | Op::Barrier { .. } | Op::LogFlush { .. } => true,
        _ => false,
    })
}

impl Workload for FileWorkload {
    fn setup(&self, platform: &Platform, _rng: &mut Rng) -> Result<Setup> {
        let mut ctx = Ctx::new(self, platform.cpu_types[0].base_khz);
        ctx.devices = platform.devices.iter().map(|d| d.name.clone()).collect();
        ctx.setup()
    }

    fn metrics(&self, r: &Record) -> Vec<Metric> {
        let mut m = Vec::new();
        for (i, name) in self.series.iter().enumerate() {
            latency_metrics(name, &r.series[i], &mut m);
            m.push(Metric::new(format!("{name}_deadline_misses"), r.deadline_misses[i] as f64, "count", Better::Lower));
        }
        for (i, name) in self.counters.iter().enumerate() {
            let v = r.counters.get(i).copied().unwrap_or(0) as f64;
            m.push(Metric::new(format!("{name}_per_s"), r.per_second(v), "1/s", Better::Higher));
        }
        let rate = r.per_second(r.cycles_retired) / 1e9;
        m.push(Metric::new("work_rate_gcps", rate, "Gcycles/s", Better::Higher));
        m
    }

    fn primary(&self) -> &str {
        static WORK: &str = "work_rate_gcps";
        match self.series.first() {
            Some(_) => self.primary_name(),
            None => WORK,
        }
    }

    fn resolved(&self) -> Vec<(String, String)> {
        vec![("file".into(), self.path.display().to_string())]
    }
}

impl FileWorkload {
    fn primary_name(&self) -> &str {
        // Leaked once per workload: the primary metric's name must outlive
        // the call and is derived from the file.
        Box::leak(format!("{}_p99_us", self.series[0]).into_boxed_str())
    }
}

#[allow(dead_code)]
fn _assert_path(_: &Path) {}

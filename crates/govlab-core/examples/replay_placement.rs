//! `cargo run --release --example replay_placement FILE PLATFORM [kernel=SPEC] [top=N]`:
//! where a free replay (schedutil + menu) puts each task against where the
//! recording ran it: per task, busy ms on each CPU type recorded → replayed,
//! and the CPU of each of its runs after a sleep, in order, recorded /
//! replayed (the first ones), so a difference in the per-cluster busy
//! time can be followed to the wakeups placed differently; and how many
//! of those runs landed on the CPU type the recording shows. Tasks in
//! order of the busy time they move between CPU types. The replayed tasks are named `COMM-PID` after
//! the recorded ones (`trace::replay::workload`). With `REPLAY_TRACE=PATH`
//! the replay's trace is kept there.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::Path;

use govlab_core::api::{RunArgs, RunConfig};
use govlab_core::platform::{self, Platform};
use govlab_core::trace::replay::{self, Wakeups};
use govlab_core::trace::{read_path, EventKind, Trace};

#[derive(Default)]
struct TaskUse {
    comm: String,
    /// Busy ns per CPU type.
    busy: BTreeMap<usize, u64>,
    /// The CPU of each first run after a sleep (or of its first run), in
    /// order: where each wakeup was placed (a recording may not trace the
    /// wakeups themselves).
    wakeups: Vec<u32>,
    /// Switched out asleep (or not seen yet).
    asleep: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, plat, rest @ ..] = &args[..] else {
        eprintln!("usage: replay_placement FILE PLATFORM [kernel=SPEC] [top=N]");
        std::process::exit(2);
    };
    let kernel = rest.iter().find_map(|a| a.strip_prefix("kernel=")).map(str::to_string);
    let top: usize = rest.iter().find_map(|a| a.strip_prefix("top=")).and_then(|n| n.parse().ok()).unwrap_or(12);
    if let Err(e) = run(Path::new(file), plat, kernel, top) {
        eprintln!("govlab: error: {e}");
        std::process::exit(2);
    }
}

fn run(file: &Path, plat: &str, kernel: Option<String>, top: usize) -> govlab_core::error::Result<()> {
    let args = RunArgs {
        platform: Some(plat.to_string()),
        kernel,
        cpufreq: Some("schedutil".into()),
        cpuidle: Some("menu".into()),
        ..RunArgs::default()
    };
    let cfg = RunConfig::from_args(args)?;
    let p = platform::load_named(&cfg.platform)?;
    let recorded = read_path(file)?;
    let tasks = replay::tasks(&recorded, p.cpu_types[0].base_khz, Some(&p), Wakeups::Follow);
    let (t0, t1) = recorded.span_ns();
    let workload = replay::workload(&tasks, &file.display().to_string(), false, t1 - t0)?;
    let keep = std::env::var_os("REPLAY_TRACE");
    let out = keep.clone().map_or_else(|| std::env::temp_dir().join(format!("govlab-replay-placement-{}.txt", std::process::id())), Into::into);
    let cfg = RunConfig { duration_ns: (t1 - t0).max(1), ..cfg };
    cfg.run_workload(Box::new(workload), Some(&out), None)?;
    let replayed = read_path(&out);
    if keep.is_none() {
        let _ = std::fs::remove_file(&out);
    }
    let replayed = replayed?;

    let rec = uses(&recorded, &p, |pid, _| Some(pid));
    // COMM-PID names the recorded task.
    let rep = uses(&replayed, &p, |_, comm| comm.rsplit_once('-').and_then(|(_, pid)| pid.parse().ok()));
    let types: Vec<usize> = (0..p.cpu_types.len()).collect();
    let ms = |u: Option<&TaskUse>, ty: usize| u.and_then(|u| u.busy.get(&ty)).copied().unwrap_or(0) as f64 / 1e6;
    let mut rows: Vec<(f64, i32)> = rec
        .keys()
        .chain(rep.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|&pid| (types.iter().map(|&ty| (ms(rep.get(&pid), ty) - ms(rec.get(&pid), ty)).abs()).sum(), pid))
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let names: Vec<&str> = p.cpu_types.iter().map(|t| t.name.as_str()).collect();
    println!("{} on {plat}: busy ms per CPU type ({}) recorded -> replayed; CPUs of its runs after a sleep, recorded / replayed", file.display(), names.join(" / "));
    let mut total = vec![(0.0, 0.0); types.len()];
    for &(_, pid) in &rows {
        for &ty in &types {
            total[ty].0 += ms(rec.get(&pid), ty);
            total[ty].1 += ms(rep.get(&pid), ty);
        }
    }
    for (ty, (a, b)) in total.iter().enumerate() {
        println!("  {}: {a:.2} -> {b:.2} ms", names[ty]);
    }
    println!("  distance {:.2} ms", total.iter().map(|(a, b)| (a - b).abs()).sum::<f64>());
    // The i-th run after a sleep of each task on the CPU type it had in
    // the recording (tasks with as many such runs in both).
    let ty = |cpu: u32| p.cpus.get(cpu as usize).map_or(0, |c| p.cores[c.core].cpu_type);
    let (mut same, mut all) = (0, 0);
    for (pid, r) in &rec {
        if let Some(s) = rep.get(pid).filter(|s| s.wakeups.len() == r.wakeups.len()) {
            all += r.wakeups.len();
            same += r.wakeups.iter().zip(&s.wakeups).filter(|(a, b)| ty(**a) == ty(**b)).count();
        }
    }
    println!("  runs after a sleep on the recorded CPU type: {same} of {all}");
    for &(moved, pid) in rows.iter().take(top) {
        let (r, s) = (rec.get(&pid), rep.get(&pid));
        let comm = r.or(s).map_or("?", |u| u.comm.as_str());
        let busy: Vec<String> = types.iter().map(|&ty| format!("{:.2}->{:.2}", ms(r, ty), ms(s, ty))).collect();
        let wk = |u: Option<&TaskUse>| u.map_or(String::new(), |u| u.wakeups.iter().take(16).map(u32::to_string).collect::<Vec<_>>().join(","));
        let n = |u: Option<&TaskUse>| u.map_or(0, |u| u.wakeups.len());
        println!("{pid:>6} {comm:<18} {} (moved {moved:.2})  runs after a sleep {}/{}: [{}] / [{}]", busy.join(" "), n(r), n(s), wk(r), wk(s));
    }
    Ok(())
}

/// Per task (keyed by `key(pid, comm)`): busy ns per CPU type and the CPUs of its runs after a sleep.
fn uses(trace: &Trace, p: &Platform, key: impl Fn(i32, &str) -> Option<i32>) -> BTreeMap<i32, TaskUse> {
    let ty = |cpu: usize| p.cpus.get(cpu).map_or(0, |c| p.cores[c.core].cpu_type);
    let (t0, t1) = trace.span_ns();
    let mut out: BTreeMap<i32, TaskUse> = BTreeMap::new();
    let mut running: Vec<Option<(i32, u64)>> = vec![None; trace.nr_cpus.max(p.nr_cpus())];
    for e in &trace.events {
        let c = e.cpu as usize;
        match &e.kind {
            EventKind::SchedSwitch(s) if c < running.len() => {
                let since = match running[c].take() {
                    Some((_, since)) => since,
                    None => t0,
                };
                if s.prev_pid != 0 {
                    if let Some(k) = key(s.prev_pid, &s.prev_comm) {
                        let u = slot(&mut out, k, &s.prev_comm);
                        *u.busy.entry(ty(c)).or_default() += e.ts_ns - since;
                        u.asleep = !s.prev_state.is_runnable();
                    }
                }
                if s.next_pid != 0 {
                    if let Some(k) = key(s.next_pid, &s.next_comm) {
                        running[c] = Some((k, e.ts_ns));
                        let u = slot(&mut out, k, &s.next_comm);
                        if u.asleep {
                            u.wakeups.push(e.cpu);
                            u.asleep = false;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for (c, r) in running.iter().enumerate() {
        if let Some((k, since)) = *r {
            if let Some(u) = out.get_mut(&k) {
                *u.busy.entry(ty(c)).or_default() += t1 - since;
            }
        }
    }
    out
}

fn slot<'a>(out: &'a mut BTreeMap<i32, TaskUse>, k: i32, comm: &str) -> &'a mut TaskUse {
    let u = out.entry(k).or_default();
    if u.comm.is_empty() {
        u.comm = comm.to_string();
    }
    u
}

//! Processes born, placed and exiting (issue 21), seen in the trace a run
//! writes: kernbench's compile jobs are new tasks on idle CPUs, gitsource
//! is a chain of short processes, tbench's pairs wake each other.

use std::collections::{BTreeMap, BTreeSet};

use govlab_core::api::RunConfig;
use govlab_core::metrics::RunResult;
use govlab_core::params::Spec;

use crate::fixtures::temp_file;

/// One line of a text trace.
#[derive(Debug)]
struct Line {
    /// The task current on the CPU that emitted it.
    comm: String,
    pid: u32,
    cpu: usize,
    ts_ns: u64,
    event: String,
    fields: BTreeMap<String, String>,
}

fn parse(line: &str) -> Option<Line> {
    let (head, rest) = line.split_once(" [")?;
    let head = head.trim_start();
    let (comm, pid) = head.rsplit_once('-')?;
    let (cpu, rest) = rest.split_once("] ")?;
    let mut it = rest.splitn(3, ": ");
    let ts = it.next()?.split_whitespace().last()?;
    let event = it.next()?.trim().to_string();
    let fields = it
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    let (s, us) = ts.split_once('.')?;
    Some(Line {
        comm: comm.trim().to_string(),
        pid: pid.trim().parse().ok()?,
        cpu: cpu.parse().ok()?,
        ts_ns: (s.parse::<u64>().ok()? * 1_000_000 + us.parse::<u64>().ok()?) * 1000,
        event,
        fields,
    })
}

/// Run `workload` on skylake-e3-1240v5 (8 CPUs: 4 cores × 2 threads)
/// under schedutil and menu with a trace; the result and the trace lines.
fn traced(name: &str, workload: &str, duration_ns: u64) -> (RunResult, Vec<Line>) {
    let cfg = RunConfig {
        platform: Spec::new("skylake-e3-1240v5"),
        kernel: Spec::new("6.8"),
        workload: Spec::parse(workload, "test").unwrap(),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns,
        seed: 1,
        interval_ns: None,
    };
    let path = temp_file(&format!("{name}.trace"), "");
    let r = cfg.run(Some(&path), None).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    (r, text.lines().filter_map(parse).collect())
}

fn field<'a>(l: &'a Line, k: &str) -> &'a str {
    l.fields.get(k).map_or_else(|| panic!("no {k} in {l:?}"), String::as_str)
}

fn num(l: &Line, k: &str) -> u64 {
    field(l, k).parse().unwrap_or_else(|_| panic!("{k} in {l:?}"))
}

/// Each CPU's runnable tasks (queued or running) as the trace tells it.
#[derive(Default)]
struct Runnable {
    on: BTreeMap<usize, BTreeSet<u64>>,
}

impl Runnable {
    fn idle(&self, cpu: usize) -> bool {
        self.on.get(&cpu).map_or(true, BTreeSet::is_empty)
    }

    fn apply(&mut self, l: &Line) {
        match l.event.as_str() {
            "sched_wakeup" | "sched_wakeup_new" => {
                self.on.entry(num(l, "target_cpu") as usize).or_default().insert(num(l, "pid"));
            }
            "sched_migrate_task" => {
                let pid = num(l, "pid");
                self.on.entry(num(l, "orig_cpu") as usize).or_default().remove(&pid);
                self.on.entry(num(l, "dest_cpu") as usize).or_default().insert(pid);
            }
            "sched_switch" if field(l, "prev_state") != "R" => {
                self.on.entry(l.cpu).or_default().remove(&num(l, "prev_pid"));
            }
            "sched_process_exit" => {
                self.on.entry(l.cpu).or_default().remove(&num(l, "pid"));
            }
            _ => {}
        }
    }
}

/// kernbench: every object's recipe is v4.4 Kbuild's chain of new tasks (its
/// shell, the gcc driver, cc1 and as, fixdep, rm, mv), the serial phases are the measured chains, and each new task
/// goes to a CPU with nothing runnable whenever the machine has one (fork
/// balancing, find_idlest_cpu).
#[test]
fn kernbench_forks_each_job_onto_an_idle_cpu() {
    use govlab_core::workload::kernbench::serial_steps;
    let files = 24;
    let (r, lines) = traced("kernbench-fork", &format!("kernbench:files={files},jobs=4"), 400_000_000_000);
    assert!(r.finished);
    let plat = govlab_core::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap();
    let core_of = |c: usize| plat.cpus[c].core;
    let mut run = Runnable::default();
    let (mut new_tasks, mut on_idle, mut none_idle, mut on_idle_core) = (BTreeMap::<String, u64>::new(), 0, 0, 0);
    for l in &lines {
        if l.event == "sched_wakeup_new" && l.fields.get("comm").is_some_and(|c| c != "make") {
            *new_tasks.entry(field(l, "comm").to_string()).or_default() += 1;
            let target = num(l, "target_cpu") as usize;
            if (0..8).any(|c| run.idle(c)) {
                assert!(run.idle(target), "{l:?} placed on a busy CPU while one was idle");
                on_idle += 1;
                // An idle core (both threads idle) is preferred to an idle
                // thread beside a busy one (the MC domain's groups are cores).
                let core_idle = |c: usize| (0..8).filter(|&o| core_of(o) == core_of(c)).all(|o| run.idle(o));
                if (0..8).any(core_idle) {
                    assert!(core_idle(target), "{l:?}: an idle core existed");
                    on_idle_core += 1;
                }
            } else {
                none_idle += 1;
            }
        }
        run.apply(l);
    }
    let steps = serial_steps();
    let serial = |comm: &str| steps.iter().filter(|s| s.comm == comm).count() as u64;
    for (comm, per_object) in [("sh", 1), ("gcc", 1), ("cc1", 1), ("as", 1), ("fixdep", 1), ("rm", 1), ("mv", 1)] {
        let want = per_object * files + serial(comm);
        assert_eq!(new_tasks.get(comm).copied(), Some(want), "{comm}: {new_tasks:?}");
    }
    let born: u64 = new_tasks.values().sum();
    // (The serial phases' sub-makes are named make, left out above.)
    let serial_not_make = steps.iter().filter(|s| s.comm != "make").count() as u64;
    assert_eq!(born, 7 * files + serial_not_make, "{new_tasks:?}");
    // -j4 on 8 CPUs: an idle CPU is nearly always there.
    assert!(on_idle > born * 9 / 10, "{on_idle} on idle CPUs, {none_idle} without one");
    assert!(on_idle_core > 0, "no placement had an idle core to choose");
}

/// kernbench's serial phases are chains: make forks each measured process
/// of the preparation and waits for it before the next, so the first
/// tasks born are born one after another's exit; the link likewise at the
/// end.
#[test]
fn kernbench_serial_phases_are_chains_of_tasks() {
    use govlab_core::workload::kernbench::{serial_steps, Phase};
    // The build alone: MMTests' clean after it is another chain (workloads.rs).
    let (r, lines) = traced("kernbench-chain", "kernbench:files=8,jobs=4,clean=false", 400_000_000_000);
    assert!(r.finished);
    // The serial phases' sub-makes are named make: left out with make.
    let steps: Vec<_> = serial_steps().into_iter().filter(|s| s.comm != "make" && s.phase != Phase::Clean).collect();
    let prepare = steps.iter().filter(|s| s.phase == Phase::Prepare).count();
    let link = steps.iter().filter(|s| s.phase == Phase::Link).count();
    // Each non-make task's birth and exit, in trace order.
    let mut lives: Vec<(u64, u64, Option<u64>, String)> = Vec::new();
    let mut index: BTreeMap<u64, usize> = BTreeMap::new();
    for l in &lines {
        match l.event.as_str() {
            "sched_wakeup_new" if l.fields.get("comm").is_some_and(|c| c != "make") => {
                index.insert(num(l, "pid"), lives.len());
                lives.push((num(l, "pid"), l.ts_ns, None, field(l, "comm").to_string()));
            }
            "sched_process_exit" => {
                if let Some(&i) = index.get(&num(l, "pid")) {
                    lives[i].2 = Some(l.ts_ns);
                }
            }
            _ => {}
        }
    }
    assert_eq!(lives.len(), 7 * 8 + steps.len());
    let chain = |v: &[(u64, u64, Option<u64>, String)]| {
        for w in v.windows(2) {
            let exited = w[0].2.expect("a serial task exits");
            assert!(w[1].1 >= exited, "{:?} born before {:?} exited", w[1], w[0]);
        }
    };
    chain(&lives[..prepare]);
    chain(&lives[lives.len() - link..]);
    // The compile phase is not: with -j4 a cc1 is born while another runs.
    let compile = &lives[prepare..lives.len() - link];
    let cc1: Vec<_> = compile.iter().filter(|t| t.3 == "cc1").collect();
    assert_eq!(cc1.len(), 8);
    let overlapped = cc1.iter().enumerate().any(|(i, a)| cc1[..i].iter().any(|b| b.2.is_some_and(|e| e > a.1)));
    assert!(overlapped, "the compiles ran one at a time");
    let first_recipe = compile[0].1;
    assert!(first_recipe >= lives[prepare - 1].2.unwrap(), "a recipe started before the preparation ended");
}

/// gitsource: a single chain of short processes: the shell forks one
/// command at a time and waits for it, so at most one command is alive at
/// once, and most live for milliseconds.
#[test]
fn gitsource_is_a_chain_of_short_processes() {
    let scripts = 2;
    let (r, lines) = traced("gitsource-chain", &format!("gitsource:scripts={scripts}"), 60_000_000_000);
    assert!(r.finished);
    let processes = r.metrics["processes"].as_f64().unwrap();
    // Per script: its shell and the measured suite's 484.56 commands a script, rounded
    // (tools/calibrate/gitsuite/commands.txt).
    let commands = 485;
    assert!((processes - f64::from(scripts) * (1.0 + commands as f64)).abs() < 0.5, "{processes}");
    let mut born: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut lifetimes, mut max_alive) = (Vec::new(), 0);
    for l in &lines {
        let comm = l.fields.get("comm").map(String::as_str);
        if comm != Some("cmd") {
            continue;
        }
        match l.event.as_str() {
            "sched_wakeup_new" => {
                born.insert(num(l, "pid"), l.ts_ns);
                max_alive = max_alive.max(born.len());
            }
            "sched_process_exit" => {
                let t0 = born.remove(&num(l, "pid")).expect("exit of a task born in the trace");
                lifetimes.push(l.ts_ns - t0);
            }
            _ => {}
        }
    }
    assert_eq!(lifetimes.len(), scripts as usize * commands);
    assert_eq!(max_alive, 1, "commands overlapped");
    lifetimes.sort_unstable();
    let median = lifetimes[lifetimes.len() / 2];
    assert!(median < 10_000_000, "median command lifetime {median} ns");
    // The measured tail: some commands run for a hundred times the median.
    assert!(*lifetimes.last().unwrap() > 20 * median, "longest {} ns, median {median} ns", lifetimes.last().unwrap());
    // The single chain keeps the machine mostly idle: under 1.5 CPUs busy.
    let busy: f64 = r.cpus.iter().map(|c| c.busy_s).sum::<f64>() / r.metrics["elapsed_s"].as_f64().unwrap();
    assert!(busy < 1.5, "{busy} CPUs busy on average");
}

/// tbench: each client wakes its own server and each server its own
/// client, once per direction per operation, from the clients' release
/// 100 ms in (dbench 4.0's start barrier); the throughput counts from it.
#[test]
fn tbench_pairs_wake_each_other() {
    let (r, lines) = traced("tbench-pairs", "tbench:clients=2", 150_000_000);
    let mbs = r.metrics["throughput_mbs"].as_f64().unwrap();
    assert!(mbs > 0.0);
    // Nothing moves before the release: every wakeup of a pair's task comes after it.
    let first = lines.iter().filter(|l| l.event == "sched_wakeup").map(|l| l.ts_ns).min().unwrap();
    assert!((100_000_000..101_000_000).contains(&first), "first wakeup at {first} ns");

    // Tasks start in order client 0, server 0, client 1, server 1.
    let pids: BTreeSet<u64> = lines
        .iter()
        .filter(|l| l.event == "sched_wakeup_new")
        .map(|l| num(l, "pid"))
        .collect();
    let pids: Vec<u64> = pids.into_iter().collect();
    assert_eq!(pids.len(), 4);
    let partner = |pid: u64| {
        let i = pids.iter().position(|&p| p == pid).unwrap();
        pids[i ^ 1]
    };
    let mut wakes: BTreeMap<u64, u64> = BTreeMap::new();
    // The release: each client's timer, once, 100 ms in (from idle: no task wakes it).
    let released: Vec<&Line> = lines.iter().filter(|l| l.event == "sched_wakeup" && l.pid == 0).collect();
    assert_eq!(released.len(), 2, "{released:?}");
    for l in &released {
        assert_eq!(field(l, "comm"), "tbench", "{l:?}");
        assert!((100_000_000..101_000_000).contains(&l.ts_ns), "{l:?}");
    }
    for l in lines.iter().filter(|l| l.event == "sched_wakeup" && l.pid != 0) {
        let pid = num(l, "pid");
        assert_eq!(u64::from(l.pid), partner(pid), "{l:?}: woken by another pair's task");
        let want = if pids.iter().position(|&p| p == pid).unwrap() % 2 == 0 { "tbench_srv" } else { "tbench" };
        assert_eq!(l.comm, want, "{l:?}");
        *wakes.entry(pid).or_default() += 1;
    }
    for p in &pids {
        assert!(wakes.get(p).copied().unwrap_or(0) > 100, "{p} woken {wakes:?}");
    }
}

/// A new task arrives with the kernel's initial utilisation (v6.8
/// `post_init_entity_util_avg`): on an idle CPU of capacity 1024, half of
/// it, 512, attached at its first enqueue. The CPU boots at its top 2 GHz
/// and schedutil's first change comes after its rate limit, at ~12 ms of
/// running: by then the task's utilisation has grown from 512 to
/// 1024 − 512·y¹² ≈ 629, asking for 1.25 × 629/1024 × 2 GHz ≈ 1.54 GHz
/// (the 1.6 GHz OPP). A task born with no utilisation would be at
/// 1024·(1 − y¹²) ≈ 234 and ask for ~0.6 GHz.
#[test]
fn a_new_task_starts_with_half_the_idle_cpus_capacity() {
    let opps: Vec<String> = (2..=20).map(|i| format!("{{ khz = {}, mv = 900 }}", i * 100_000)).collect();
    let plat = crate::fixtures::one_core_platform(
        "fork-util",
        250,
        &format!("[ {} ]", opps.join(", ")),
        "[[cpu_type.idle_state]]\nname = \"WFI\"\nexit_latency_us = 1\ntarget_residency_us = 1\npower_mw = 1.0\n",
    );
    let plat = temp_file("fork-util-plat.toml", &plat);
    let wl = temp_file("fork-util-wl.toml", "[[task]]\ncomm = \"a\"\nops = [ { run = \"20ms\", mem = 1.0 } ]\n");
    let cfg = RunConfig {
        platform: Spec::new(plat.to_str().unwrap()),
        workload: Spec::new(wl.to_str().unwrap()),
        cpufreq: Spec::new("schedutil"),
        cpuidle: Spec::new("menu"),
        duration_ns: 30_000_000,
        seed: 1,
        ..RunConfig::default()
    };
    let path = temp_file("fork-util.trace", "");
    cfg.run(Some(&path), None).unwrap();
    let lines: Vec<Line> = std::fs::read_to_string(&path).unwrap().lines().filter_map(parse).collect();
    let born = lines.iter().find(|l| l.event == "sched_wakeup_new").expect("a's birth").ts_ns;
    let first = lines
        .iter()
        .find(|l| l.event == "cpu_frequency" && l.ts_ns > born)
        .expect("a frequency change after the birth");
    assert!(first.ts_ns - born < 20_000_000, "{first:?}");
    assert_eq!(num(first, "state"), 1_600_000, "{first:?}");
}

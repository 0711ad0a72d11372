//! The RT and deadline classes, the RT throttle, schedutil's RT/DL inputs
//! and task groups, on whole runs of small rt-app files.

use super::engine::Engine;
use crate::api::testing;
use super::fair_group::GROUP_SE;
use crate::sched::TaskState;
use crate::sim::Time;

fn engine(name: &str, json: &str, cpufreq: &str, ns: Time) -> Engine {
    engine_with(name, json, cpufreq, ns, |_| ())
}

/// [`engine`] under v6.5, the last CFS (the fair class's own tests).
fn engine_cfs(name: &str, json: &str, cpufreq: &str, ns: Time) -> Engine {
    engine_on("6.5", name, json, cpufreq, ns, |_| ())
}

/// A run whose engine `change` may set up before it starts (what an
/// rt-app file cannot say, such as a group's shares).
fn engine_with(name: &str, json: &str, cpufreq: &str, ns: Time, change: impl FnOnce(&mut Engine)) -> Engine {
    engine_on("6.8", name, json, cpufreq, ns, change)
}

fn engine_on(kernel: &str, name: &str, json: &str, cpufreq: &str, ns: Time, change: impl FnOnce(&mut Engine)) -> Engine {
    let dir = std::env::temp_dir().join(format!("govlab-sched-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, json).unwrap();
    let mut e = testing::engine("skylake-e3-1240v5", kernel, &format!("rtapp:file={}", path.display()), cpufreq, ns);
    change(&mut e);
    e.run(None).unwrap();
    e
}

fn task(e: &Engine, comm: &str) -> usize {
    e.tasks.iter().position(|t| &*t.comm == comm).unwrap()
}

const MS: u64 = 1_000_000;

#[test]
fn rt_task_preempts_cfs_at_once_and_schedutil_goes_to_the_top() {
    // A CFS hog on CPU 0; a SCHED_FIFO task wakes there at 20 ms for 10 ms
    // of fixed-time work. At the tick of 24 ms (HZ 250) it has been charged
    // the whole 4 ms since its wakeup.
    let json = |cfs: &str| {
        format!(
            r#"{{ "tasks": {{
                "cfs": {{ "cpus": [0], "loop": -1, {cfs} }},
                "rt": {{ "cpus": [0], "policy": "SCHED_FIFO", "priority": 50, "delay": 20000, "loop": 1, "runtime": 10000, "sleep": 1000000 }}
            }} }}"#
        )
    };
    let e = engine("preempt.json", &json(r#""run": 1000"#), "schedutil", 24 * MS);
    let rt = task(&e, "rt");
    assert!(e.tasks[rt].sum_exec_ns >= 4 * MS - 10_000, "RT ran {} ns of 4 ms", e.tasks[rt].sum_exec_ns);
    // The same with a light CFS task (0.5 ms every 10 ms): schedutil runs
    // CPU 0 at the top while the RT task is runnable (effective_cpu_util's
    // floor), where the light task alone keeps it low.
    let light = json(r#""run": 500, "sleep": 9500"#);
    let e = engine("preempt-light.json", &light, "schedutil", 25 * MS);
    let d = e.plat.cpus[0].freq_domain;
    let p = e.pol.of_cpu[0];
    let top = e.plat.cpu_types[e.plat.freq_domains[d].cpu_type].max_khz();
    assert_eq!(e.policies[p].cur_khz, top, "RT runnable: not at the top frequency");
    let e = engine("preempt-light-before.json", &light, "schedutil", 19 * MS);
    assert!(e.policies[p].cur_khz < top, "the light CFS task alone already asked for the top");
}

#[test]
fn throttled_rt_hog_leaves_the_configured_share_to_cfs() {
    // sched_rt_runtime_us 950000 of sched_rt_period_us 1000000: over 2.5 s
    // the CFS hog sharing CPU 0 with an RT hog gets the last 50 ms of each
    // full period (about 100 ms), the RT hog the rest.
    let json = r#"{ "tasks": {
        "rt": { "cpus": [0], "policy": "SCHED_FIFO", "priority": 10, "loop": -1, "runtime": 1000 },
        "cfs": { "cpus": [0], "loop": -1, "runtime": 1000 }
    } }"#;
    let e = engine("throttle.json", json, "performance", 2_500 * MS);
    let cfs = e.tasks[task(&e, "cfs")].sum_exec_ns;
    let rt = e.tasks[task(&e, "rt")].sum_exec_ns;
    assert!((80 * MS..=130 * MS).contains(&cfs), "CFS got {cfs} ns");
    assert!(rt >= 2_350 * MS, "RT got {rt} ns");
}

#[test]
fn rt_hog_borrows_the_whole_period_before_5_10() {
    // RT_RUNTIME_SHARE (on until v5.10): at 950 ms CPU 0's runqueue takes
    // 50 ms of CPU 1's unused runtime, has the whole period and is never
    // throttled again, so the CFS hog pinned beside it starves on 5.9;
    // on 6.5 (the next supported version) it gets the last 50 ms of each
    // period.
    let json = r#"{ "tasks": {
        "rt": { "cpus": [0], "policy": "SCHED_FIFO", "priority": 10, "loop": -1, "runtime": 1000 },
        "cfs": { "cpus": [0], "loop": -1, "runtime": 1000 }
    } }"#;
    let cfs_on = |kernel: &str| {
        let e = engine_on(kernel, "borrow.json", json, "performance", 2_500 * MS, |_| ());
        assert!(e.rqs[0].rt_runtime >= e.rqs[1].rt_runtime, "{kernel}: CPU 0 lent runtime");
        e.tasks[task(&e, "cfs")].sum_exec_ns
    };
    let starved = cfs_on("5.9");
    assert!(starved < 5 * MS, "5.9: CFS got {starved} ns beside a borrowing RT hog");
    let share = cfs_on("6.5");
    assert!((80 * MS..=130 * MS).contains(&share), "6.5: CFS got {share} ns");
}

#[test]
fn deadline_bandwidth_enters_schedutils_request() {
    // A light task (0.5 ms of work every 10 ms) as SCHED_DEADLINE with a
    // reserved 8 ms / 10 ms: its running_bw (0.8 of the CPU) is the floor
    // of schedutil's request, so its CPU runs at ≥ 0.8 of the top while it
    // is active; as SCHED_OTHER its small utilisation asks for much less.
    let json = |policy: &str| {
        format!(
            r#"{{ "tasks": {{ "dl": {{ "cpus": [1], "policy": "{policy}", "dl-runtime": 8000, "dl-period": 10000,
                "loop": -1, "timer": {{ "ref": "t", "period": 10000 }}, "run": 500 }} }} }}"#
        )
    };
    let at = 50 * MS + 200_000;
    let e = engine("dl.json", &json("SCHED_DEADLINE"), "schedutil", at);
    let d = e.plat.cpus[1].freq_domain;
    let top = e.plat.cpu_types[e.plat.freq_domains[d].cpu_type].max_khz();
    let dl = task(&e, "dl");
    assert_eq!(e.tasks[dl].class, crate::sched::rt::Class::Deadline);
    let cpu = e.tasks[dl].cpu;
    assert!(e.rqs[cpu].running_bw > 0, "no running bandwidth while the DL task runs");
    let p = e.pol.of_cpu[cpu];
    let f_dl = e.policies[p].cur_khz;
    assert!(u64::from(f_dl) * 10 >= u64::from(top) * 8, "DL: {f_dl} kHz of {top}");
    let e = engine("other.json", &json("SCHED_OTHER"), "schedutil", at);
    let f_other = e.policies[p].cur_khz;
    assert!(f_other < f_dl, "SCHED_OTHER asked for {f_other} kHz, DL {f_dl}");
}

#[test]
fn task_group_of_two_gets_its_share_against_a_single_task() {
    // Three hogs on CPU 0: a and b in task group /g (cpu.shares 1024), c in
    // the root group. The group gets half the CPU, split between its two
    // tasks; c the other half.
    let json = r#"{ "tasks": {
        "a": { "cpus": [0], "taskgroup": "/g", "loop": -1, "runtime": 1000 },
        "b": { "cpus": [0], "taskgroup": "/g", "loop": -1, "runtime": 1000 },
        "c": { "cpus": [0], "loop": -1, "runtime": 1000 }
    } }"#;
    let e = engine("groups.json", json, "performance", 1_000 * MS);
    let run = |c: &str| e.tasks[task(&e, c)].sum_exec_ns as f64 / 1e6;
    let (a, b, c) = (run("a"), run("b"), run("c"));
    assert!((450.0..=550.0).contains(&c), "root task {c} ms");
    assert!((200.0..=300.0).contains(&a) && (200.0..=300.0).contains(&b), "group tasks {a}, {b} ms");
}

#[test]
fn rt_task_preempted_by_a_higher_one_is_pushed_to_an_idle_cpu() {
    // "low" (FIFO 10) runs on CPU 0, then may use CPUs 0 and 1; "high"
    // (FIFO 50, pinned to CPU 0) preempts it there at 20 ms for 10 ms.
    // After the switch CPU 0 pushes "low" to the idle CPU 1
    // (set_next_task_rt → push_rt_tasks), where it goes on at once: by
    // 30 ms it has run nearly all 30 ms. Unpushed it would wait on CPU 0's
    // queue until "high" sleeps (about 20 ms). sum_exec_ns is charged at
    // ticks and switches, so it lags the run's end by up to a tick (4 ms);
    // the run lasts 32 ms so that "high", which starts after its switch's
    // kernel cycles (machine/kpath.rs), ends inside it.
    let json = r#"{ "tasks": {
        "low": { "policy": "SCHED_FIFO", "priority": 10, "loop": 1, "phases": {
            "pin": { "cpus": [0], "runtime": 1000 },
            "free": { "cpus": [0, 1], "loop": -1, "runtime": 1000 } } },
        "high": { "cpus": [0], "policy": "SCHED_FIFO", "priority": 50, "delay": 20000, "loop": 1, "runtime": 10000, "sleep": 1000000 }
    } }"#;
    let e = engine("push.json", json, "performance", 32 * MS);
    let low = task(&e, "low");
    let high = task(&e, "high");
    assert!(e.tasks[high].sum_exec_ns >= 9 * MS, "high ran {} ns", e.tasks[high].sum_exec_ns);
    assert!(e.tasks[low].sum_exec_ns >= 25 * MS, "low ran {} ns of 30 ms", e.tasks[low].sum_exec_ns);
    assert_eq!(e.tasks[low].cpu, 1, "low was not pushed to CPU 1");
}

#[test]
fn waking_rt_task_leaves_a_pinned_rt_task_alone() {
    // "pinned" (FIFO 10) may run only on CPU 0; "waker" (FIFO 50) last ran
    // there and wakes at 5.5 ms. select_task_rq_rt: the current task of its
    // CPU is an RT task that cannot move, so the waker goes to the idle
    // CPU 1 (find_lowest_rq) instead of preempting it: "pinned" runs on
    // (about 29.5 of 30 ms). Preempting it would take 10 ms from it.
    // (sum_exec_ns lags the run's end by up to a 4 ms tick.)
    let json = r#"{ "tasks": {
        "pinned": { "cpus": [0], "policy": "SCHED_FIFO", "priority": 10, "loop": -1, "runtime": 1000 },
        "waker": { "policy": "SCHED_FIFO", "priority": 50, "loop": 1, "phases": {
            "start": { "cpus": [0], "runtime": 500 },
            "free": { "cpus": [0, 1], "loop": 1, "sleep": 5000, "runtime": 10000 } } }
    } }"#;
    let e = engine("pinned.json", json, "performance", 30 * MS);
    let pinned = task(&e, "pinned");
    let waker = task(&e, "waker");
    assert!(e.tasks[waker].sum_exec_ns >= 10 * MS, "waker ran {} ns", e.tasks[waker].sum_exec_ns);
    assert_eq!(e.tasks[waker].cpu, 1);
    assert!(e.tasks[pinned].sum_exec_ns >= 25 * MS, "pinned ran {} ns of 30 ms", e.tasks[pinned].sum_exec_ns);
}


/// The group entity of group `path` on `cpu`: its scaled weight (the
/// group's shares are 1024 << 10).
fn group_cpu<'a>(e: &'a Engine, path: &str, cpu: usize) -> &'a super::fair_group::GroupCpu {
    let members = |g: &super::fair_group::GroupRt| g.members.iter().any(|&m| e.tasks[m].comm.starts_with(path));
    let g = e.groups.iter().find(|g| members(g)).expect("group with a task named after it");
    &g.cpus[cpu]
}

const FULL_SHARES: u64 = 1024 << 10;

/// Two hogs of group /g, one on CPU 0 and one on CPU 1 for 300 ms of work
/// (done by about 310 ms beside its SMT sibling), after which the second
/// sleeps for good: the group's entity on CPU 0 weighs half the group's
/// shares while both run, and takes the whole only as CPU 1's part of the
/// group's load average decays (calc_group_shares over tg->load_avg, CPU 1's
/// idle blocked load updated by the nohz stats kick every 32 ms), not at
/// once.
fn shares_json() -> &'static str {
    r#"{ "tasks": {
        "g0": { "cpus": [0], "taskgroup": "/g", "loop": -1, "runtime": 1000 },
        "g1": { "cpus": [1], "taskgroup": "/g", "loop": 1, "runtime": 300000, "sleep": 100000000 }
    } }"#
}

#[test]
fn group_shares_follow_the_load_average_after_a_member_sleeps() {
    let at = |ms: u64| {
        let e = engine(&format!("shares-{ms}.json"), shares_json(), "performance", ms * MS);
        group_cpu(&e, "g", 0).se_load_weight
    };
    let both = at(290);
    assert!((FULL_SHARES * 45 / 100..=FULL_SHARES * 55 / 100).contains(&both), "both running: CPU 0's entity weighs {both}");
    // About 30 ms after g1 stopped (one half-life of its load average):
    // on its way, well short of the whole.
    let soon = at(340);
    assert!((FULL_SHARES * 52 / 100..FULL_SHARES * 80 / 100).contains(&soon), "30 ms after the sleep CPU 0's entity weighs {soon}");
    let later = at(600);
    assert!(later > FULL_SHARES * 95 / 100, "300 ms after the sleep CPU 0's entity weighs {later}");
}

#[test]
fn root_runqueue_util_holds_the_group_tasks() {
    // One hog in group /g on CPU 2 for 300 ms: its signal lives on the group
    // runqueue, and reaches the root runqueue (what schedutil reads) through
    // the group entity, as when it is not grouped.
    let grouped = r#"{ "tasks": { "g": { "cpus": [2], "taskgroup": "/g", "loop": -1, "runtime": 1000 } } }"#;
    let plain = r#"{ "tasks": { "g": { "cpus": [2], "loop": -1, "runtime": 1000 } } }"#;
    let e = engine("root-util-grouped.json", grouped, "performance", 300 * MS);
    let gc = group_cpu(&e, "g", 2);
    let root = e.rqs[2].cfs.avg.util_avg;
    assert!(gc.cfs.avg.util_avg > 900, "group runqueue util {}", gc.cfs.avg.util_avg);
    assert_eq!(gc.se.util_avg, gc.cfs.avg.util_avg, "the entity carries its runqueue's util");
    let e = engine("root-util-plain.json", plain, "performance", 300 * MS);
    let flat = e.rqs[2].cfs.avg.util_avg;
    assert!(root + 16 >= flat && root <= flat + 16, "root util {root} grouped, {flat} not grouped");
}


#[test]
fn group_runqueues_stay_consistent_through_wakeups_and_migrations() {
    // Unpinned tasks of two groups and the root waking, sleeping and
    // migrating on 8 CPUs: each group runqueue's weight and count are its
    // runnable tasks', each entity is on the root runqueue exactly when its
    // group has runnable tasks there, and the root runqueue's weight counts
    // its root tasks and its entities.
    let json = r#"{ "tasks": {
        "a": { "instance": 3, "taskgroup": "/a", "loop": -1, "run": 3000, "sleep": 2000 },
        "b": { "instance": 3, "taskgroup": "/b", "loop": -1, "run": 700, "sleep": 300 },
        "r": { "instance": 4, "loop": -1, "run": 5000, "sleep": 1000 }
    } }"#;
    for ms in [97, 331, 600] {
        let e = engine(&format!("consistency-{ms}.json"), json, "schedutil", ms * MS);
        let runnable = |t: &super::rq::Task| matches!(t.state, TaskState::Runnable | TaskState::Running);
        for (cpu, rq) in e.rqs.iter().enumerate() {
            let mut entities = 0;
            for grp in &e.groups {
                let gc = &grp.cpus[cpu];
                let here: Vec<_> = grp.members.iter().map(|&m| &e.tasks[m]).filter(|t| t.cpu == cpu && runnable(t)).collect();
                assert_eq!(gc.load_weight, here.iter().map(|t| t.nice_weight).sum::<u64>(), "{ms} ms CPU {cpu}: group weight");
                assert_eq!(gc.h_nr_running as usize, here.len(), "{ms} ms CPU {cpu}: group count");
                assert_eq!(gc.on_rq, !here.is_empty(), "{ms} ms CPU {cpu}: entity on_rq");
                if gc.on_rq {
                    entities += gc.se_load_weight;
                }
            }
            assert_eq!(e.group_rq_weight[cpu], entities, "{ms} ms CPU {cpu}: entities' weight");
            let root_tasks: u64 = e.tasks.iter().filter(|t| t.group.is_none() && t.cpu == cpu && runnable(t)).map(|t| t.weight).sum();
            assert_eq!(rq.load_weight, root_tasks + (entities >> 10), "{ms} ms CPU {cpu}: root weight");
        }
    }
}

#[test]
fn groups_of_shares_2048_and_1024_split_the_cpu_two_to_one() {
    // Three hogs in /big (cpu.shares 2048) and three in /small (1024) on
    // CPU 0: the groups' entities weigh 2048 and 1024 on the root
    // runqueue, so /big gets 2/3 of the CPU and /small 1/3, each split
    // evenly among its tasks.
    let json = r#"{ "tasks": {
        "big": { "instance": 3, "cpus": [0], "taskgroup": "/big", "loop": -1, "runtime": 1000 },
        "small": { "instance": 3, "cpus": [0], "taskgroup": "/small", "loop": -1, "runtime": 1000 }
    } }"#;
    let e = engine_with("shares-2-1.json", json, "performance", 1_500 * MS, |e| {
        let big = e.tasks.iter().position(|t| t.comm.starts_with("big")).unwrap();
        let g = e.tasks[big].group.unwrap() as usize;
        e.groups[g].shares = 2048 << 10;
    });
    let ms = |prefix: &str| -> Vec<f64> {
        e.tasks.iter().filter(|t| t.comm.starts_with(prefix)).map(|t| t.sum_exec_ns as f64 / 1e6).collect()
    };
    let (big, small) = (ms("big"), ms("small"));
    let (b, s): (f64, f64) = (big.iter().sum(), small.iter().sum());
    assert!((1.85..=2.15).contains(&(b / s)), "/big {b:.0} ms, /small {s:.0} ms");
    for group in [&big, &small] {
        let (lo, hi) = group.iter().fold((f64::MAX, 0.0_f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        assert!(hi - lo <= 0.1 * hi, "unequal within a group: {group:?}");
    }
}

#[test]
fn nested_group_gets_its_share_of_its_parents_share() {
    // On CPU 0: r in the root group, x in /a, b1 and b2 in /a/b. At the
    // root r and /a's entity weigh the same: half the CPU each. In /a, x
    // and /a/b's entity split /a's half; b1 and b2 split /a/b's quarter.
    // (Were /a/b a group of its own under the root, r, /a and /a/b would
    // get a third each.)
    let json = r#"{ "tasks": {
        "r": { "cpus": [0], "loop": -1, "runtime": 1000 },
        "x": { "cpus": [0], "taskgroup": "/a", "loop": -1, "runtime": 1000 },
        "b1": { "cpus": [0], "taskgroup": "/a/b", "loop": -1, "runtime": 1000 },
        "b2": { "cpus": [0], "taskgroup": "/a/b", "loop": -1, "runtime": 1000 }
    } }"#;
    let e = engine("nested.json", json, "performance", 2_000 * MS);
    let share = |c: &str| e.tasks[task(&e, c)].sum_exec_ns as f64 / 2e9;
    let (r, x, b1, b2) = (share("r"), share("x"), share("b1"), share("b2"));
    assert!((0.45..=0.55).contains(&r), "r {r:.3}");
    assert!((0.22..=0.28).contains(&x), "x {x:.3}");
    assert!((0.11..=0.14).contains(&b1) && (0.11..=0.14).contains(&b2), "b1 {b1:.3}, b2 {b2:.3}");
}

#[test]
fn waking_group_task_preempts_only_as_its_group_entity_would() {
    // On CPU 0 a root hog r and a group /g of a hog a and a light task w
    // (0.1 ms of work at every 10 ms timer). w sleeps long, so its own
    // vruntime is far behind; but it is compared with the current task
    // where their entities share a runqueue (find_matching_se). Beside a
    // (in /g) that is w itself, which preempts at once; beside r it is
    // /g's entity, queued with a fair vruntime, which preempts only once r
    // has run more than the wakeup granularity (4 ms on 8 CPUs) past it.
    // A flat tree would let w preempt r at every wakeup.
    let json = r#"{ "tasks": {
        "r": { "cpus": [0], "loop": -1, "runtime": 1000 },
        "a": { "cpus": [0], "taskgroup": "/g", "loop": -1, "runtime": 1000 },
        "w": { "cpus": [0], "taskgroup": "/g", "loop": -1, "timer": { "ref": "t", "period": 10000 }, "run": 100 }
    } }"#;
    let (mut prompt, mut late) = (0, 0);
    for k in 5..25 {
        let e = engine(&format!("matching-{k}.json"), json, "performance", k * 10 * MS + 300_000);
        let w = &e.tasks[task(&e, "w")];
        // w has done its run of the period that began 0.3 ms ago (its
        // k − 1th: its first timer fires at 10 ms).
        if w.sum_exec_ns >= (k - 1) * 95_000 {
            prompt += 1;
        } else {
            late += 1;
        }
    }
    assert!(prompt > 0, "w never ran at once beside its group's hog");
    assert!(late > 0, "w always preempted at once ({prompt} of {})", prompt + late);
}

#[test]
fn example11s_phase_move_charges_the_threads_time_to_its_group_of_the_phase() {
    // rt-app's tutorial example11: thread0 runs 20 ms and sleeps 80 ms in
    // each of three phases, the first two in /tg1/tg11, the third in the
    // root group (sched_move_task at each phase's start). Two thirds of its
    // CPU time are charged to /tg1/tg11's entities, and so to /tg1's, the
    // rest to no group.
    let json = include_str!("../../../../data/real/rt-app/tutorial/example11.json");
    let e = engine("example11.json", json, "performance", 1_950 * MS);
    let ran = e.tasks[task(&e, "thread0")].sum_exec_ns as f64;
    assert_eq!(e.groups.len(), 2, "/tg1 and /tg1/tg11");
    let (tg1, tg11) = (&e.groups[0], &e.groups[1]);
    assert_eq!(tg11.parent, Some(0), "/tg1/tg11 is under /tg1");
    let charged = |g: &super::fair_group::GroupRt| g.cpus.iter().map(|c| c.sum_exec_ns).sum::<u64>() as f64 / ran;
    assert!((0.6..=0.73).contains(&charged(tg11)), "/tg1/tg11 charged {:.3} of thread0's time", charged(tg11));
    assert!((charged(tg1) - charged(tg11)).abs() < 1e-9, "/tg1 {:.3}, /tg1/tg11 {:.3}", charged(tg1), charged(tg11));
}

#[test]
fn nested_group_runqueues_and_trees_stay_consistent_through_moves_and_migrations() {
    // Unpinned tasks of /a, /a/b and the root, and movers switching between
    // /a/b, the root and /c phase by phase, waking, sleeping and migrating
    // on 8 CPUs. On every CPU each runqueue (the root's and each group's)
    // holds in its tree exactly its queued entities but the current one,
    // counts them (nr_running) and the tasks below (h_nr_running), and
    // weighs its tasks' nice weights plus its queued child entities'.
    let json = r#"{ "tasks": {
        "a": { "instance": 2, "taskgroup": "/a", "loop": -1, "run": 3000, "sleep": 2000 },
        "b": { "instance": 3, "taskgroup": "/a/b", "loop": -1, "run": 700, "sleep": 300 },
        "r": { "instance": 3, "loop": -1, "run": 5000, "sleep": 1000 },
        "m": { "instance": 2, "loop": -1, "phases": {
            "p0": { "taskgroup": "/a/b", "run": 2000, "sleep": 500 },
            "p1": { "taskgroup": "/", "run": 1500, "sleep": 700 },
            "p2": { "taskgroup": "/c", "run": 1000, "sleep": 100 }
        } }
    } }"#;
    for ms in [53, 297, 611] {
        let e = engine(&format!("nested-consistency-{ms}.json"), json, "schedutil", ms * MS);
        let runnable = |t: &super::rq::Task| matches!(t.state, TaskState::Runnable | TaskState::Running);
        for (cpu, rq) in e.rqs.iter().enumerate() {
            let curr = rq.curr.filter(|&c| e.tasks[c].class == crate::sched::rt::Class::Fair);
            // The entities on each runqueue (None: the root's).
            let level_of = |g: Option<u32>| g.map(|g| g as usize);
            let mut want: Vec<Vec<usize>> = vec![Vec::new(); e.groups.len() + 1];
            let slot = |l: Option<usize>| l.map_or(0, |g| g + 1);
            for (id, t) in e.tasks.iter().enumerate() {
                if t.cpu == cpu && runnable(t) && t.class == crate::sched::rt::Class::Fair {
                    want[slot(level_of(t.group))].push(id);
                }
            }
            for (g, grp) in e.groups.iter().enumerate() {
                if grp.cpus[cpu].on_rq {
                    want[slot(level_of(grp.parent))].push(GROUP_SE + g);
                }
            }
            // The current entity of each level: curr's chain.
            let mut current = vec![None; e.groups.len() + 1];
            if let Some(c) = curr {
                current[slot(level_of(e.tasks[c].group))] = Some(c);
                let mut level = e.tasks[c].group;
                while let Some(g) = level {
                    level = e.groups[g as usize].parent;
                    current[slot(level_of(level))] = Some(GROUP_SE + g as usize);
                }
            }
            for l in 0..want.len() {
                let tree = if l == 0 { &rq.tree } else { &e.groups[l - 1].cpus[cpu].tree };
                let mut got: Vec<usize> = tree.iter().map(|&(_, s)| s).collect();
                let mut expect: Vec<usize> = want[l].iter().copied().filter(|&s| Some(s) != current[l]).collect();
                expect.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, expect, "{ms} ms CPU {cpu} level {l}: tree");
                if l == 0 {
                    continue;
                }
                let gc = &e.groups[l - 1].cpus[cpu];
                assert_eq!(gc.nr_running as usize, want[l].len(), "{ms} ms CPU {cpu} level {l}: nr_running");
                let nice: u64 = want[l].iter().filter(|&&s| s < GROUP_SE).map(|&s| e.tasks[s].nice_weight).sum();
                let children: u64 = want[l].iter().filter(|&&s| s >= GROUP_SE).map(|&s| e.groups[s - GROUP_SE].cpus[cpu].se_load_weight).sum();
                assert_eq!(gc.child_weight, children, "{ms} ms CPU {cpu} level {l}: child weight");
                assert_eq!(gc.load_weight, nice + (children >> 10), "{ms} ms CPU {cpu} level {l}: load weight");
                let below = |t: &super::rq::Task| {
                    let mut level = t.group;
                    while let Some(g) = level {
                        if g as usize == l - 1 {
                            return true;
                        }
                        level = e.groups[g as usize].parent;
                    }
                    false
                };
                let h = e.tasks.iter().filter(|t| t.cpu == cpu && runnable(t) && below(t)).count();
                assert_eq!(gc.h_nr_running as usize, h, "{ms} ms CPU {cpu} level {l}: h_nr_running");
            }
        }
    }
}

#[test]
fn two_hogs_share_the_period_by_halves() {
    // Two nice-0 hogs on CPU 0 of the 8-CPU Skylake: sched_latency 24 ms
    // (6 ms × (1 + ilog2 8)), so each one's sched_slice is 12 ms: the
    // running task counts in the runqueue's weight once, not twice. The
    // first runs until the 16 ms tick (the second was placed a slice
    // ahead, START_DEBIT); the second then runs through the 28 ms tick
    // (12 ms ran, not more than its slice) and is still running at 30 ms.
    // Counting its weight twice (an 8 ms slice) would switch at 28 ms.
    let json = r#"{ "tasks": {
        "a": { "cpus": [0], "loop": -1, "runtime": 100000 },
        "b": { "cpus": [0], "loop": -1, "runtime": 100000 }
    } }"#;
    let e = engine_cfs("halves.json", json, "performance", 30 * MS);
    let (a, b) = (task(&e, "a"), task(&e, "b"));
    let (first, second) = if e.tasks[a].sum_exec_ns > e.tasks[b].sum_exec_ns { (a, b) } else { (b, a) };
    assert!(e.tasks[second].sum_exec_ns >= 11 * MS, "second ran {} ns", e.tasks[second].sum_exec_ns);
    assert_eq!(e.tasks[first].state, crate::sched::TaskState::Runnable);
    assert_eq!(e.tasks[second].state, crate::sched::TaskState::Running, "the second hog was preempted before its 12 ms slice ended");
}

#[test]
fn a_new_task_is_debited_its_slice_in_virtual_time() {
    // START_DEBIT places a new task sched_vslice() ahead of min_vruntime:
    // its slice scaled by NICE_0_LOAD over its weight (v6.5 place_entity,
    // calc_delta_fair). On CPU 0 of the Skylake (sched_latency 24 ms,
    // min_granularity 3 ms) the nice-0 hog `a`, enqueued first and alone,
    // starts at 24 ms of vruntime; the nice-10 `b` (weight 110,
    // sched_prio_to_weight) has a slice of 2.3 ms raised to 3 ms
    // (BASE_SLICE), so it starts at 3 × 1024 / 110 = 27.9 ms, behind a:
    // a runs first and keeps the CPU for its 21.7 ms slice, to the 24 ms
    // tick. Debited its slice in real time (3 ms), b would have run first.
    let json = r#"{ "tasks": {
        "a": { "cpus": [0], "loop": -1, "runtime": 100000 },
        "b": { "cpus": [0], "loop": -1, "runtime": 100000, "priority": 10 }
    } }"#;
    let e = engine_cfs("vslice.json", json, "performance", 20 * MS);
    let (a, b) = (task(&e, "a"), task(&e, "b"));
    assert_eq!(e.tasks[b].weight, 110);
    assert_eq!(e.tasks[b].vruntime, 3 * MS * 1024 / 110, "b's placement");
    assert_eq!(e.tasks[b].sum_exec_ns, 0, "b ran before a's slice ended");
    assert_eq!(e.tasks[a].state, crate::sched::TaskState::Running);
}

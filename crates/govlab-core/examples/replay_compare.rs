//! `cargo run --release --example replay_compare FILE PLATFORM CPUFREQ CPUIDLE [pin] [timed] [kernel=SPEC]`:
//! a recording beside its replay, per CPU: busy time, average frequency
//! over the time the frequency is known, and residency in each idle state
//! (the figures of docs/traces.md's table of the real recordings).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use govlab_core::api::{self, RunArgs, RunConfig};
use govlab_core::trace::replay::Wakeups;
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, platform, cpufreq, cpuidle, rest @ ..] = &args[..] else {
        eprintln!("usage: replay_compare FILE PLATFORM CPUFREQ CPUIDLE [pin] [timed] [kernel=SPEC]");
        std::process::exit(2);
    };
    let pin = rest.iter().any(|a| a == "pin");
    let wakeups = if rest.iter().any(|a| a == "timed") { Wakeups::Timed } else { Wakeups::Follow };
    let kernel = rest.iter().find_map(|a| a.strip_prefix("kernel=")).map(str::to_string);
    let args = RunArgs { platform: Some(platform.clone()), kernel, cpufreq: Some(cpufreq.clone()), cpuidle: Some(cpuidle.clone()), ..RunArgs::default() };
    let out = RunConfig::from_args(args).and_then(|cfg| api::replay(std::path::Path::new(file), &cfg, pin, wakeups, None));
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let v: Value = serde_json::to_value(out).unwrap_or_default();
    let (rec, rep) = (&v["recorded"]["cpus"], &v["run"]["cpus"]);
    let span = v["run"]["sim_time_s"].as_f64().unwrap_or(0.0);
    println!("{file} on {platform}, {cpufreq} + {cpuidle}, pin {pin}: {} tasks, span {span:.4} s", v["tasks"]);
    println!("cpu  busy s rec/rep        avg MHz rec/rep   idle-state residency % of span rec / rep");
    let (mut tr, mut tp) = (0.0, 0.0);
    for (r, p) in rec.as_array().into_iter().flatten().zip(rep.as_array().into_iter().flatten()) {
        let (br, bp) = (r["busy_s"].as_f64().unwrap_or(0.0), p["busy_s"].as_f64().unwrap_or(0.0));
        tr += br;
        tp += bp;
        println!(
            "{:>3}  {br:>8.4} {bp:>8.4}   {:>7.0} {:>7.0}   {} / {}",
            p["cpu"],
            avg_mhz(&r["time_in_state"]),
            avg_mhz(&p["time_in_state"]),
            residency(&r["idle_states"], span),
            residency(&p["idle_states"], span)
        );
    }
    println!("total busy s: recorded {tr:.4}, replayed {tp:.4} ({:+.1}%)", (tp / tr - 1.0) * 100.0);
}

/// Time-weighted frequency over the time a frequency is known.
fn avg_mhz(tis: &Value) -> f64 {
    let (mut w, mut t) = (0.0, 0.0);
    for (khz, s) in tis.as_object().into_iter().flatten() {
        let s = s.as_f64().unwrap_or(0.0);
        w += khz.parse::<f64>().unwrap_or(0.0) / 1e3 * s;
        t += s;
    }
    if t > 0.0 { w / t } else { f64::NAN }
}

fn residency(states: &Value, span: f64) -> String {
    let parts: Vec<String> = states
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| format!("{:.0}", s["time_s"].as_f64().unwrap_or(0.0) / span * 100.0))
        .collect();
    parts.join(" ")
}

//! The engine's whole outward surface, in plain data: a run configuration
//! in, a result out (as structs, or as JSON text for the bindings), and the
//! registries for `govlab list`.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::external::{self, ExternalGovernors};
use crate::metrics::RunResult;
use crate::params::{parse_duration_ns, Spec};
use crate::machine::RunParts;
use crate::{cpufreq, cpuidle, machine, platform, workload};

/// The library version, recorded in every result.
pub use crate::VERSION;

/// One run, as the user names it.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub platform: Spec,
    pub workload: Spec,
    pub cpufreq: Spec,
    pub cpuidle: Spec,
    pub duration_ns: u64,
    pub seed: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            platform: Spec::new("skylake-e3-1240v5"),
            workload: Spec::new("cpu-bound"),
            cpufreq: Spec::new("performance"),
            cpuidle: Spec::new("ladder"),
            duration_ns: 10_000_000_000,
            seed: 1,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    platform: Option<String>,
    workload: Option<String>,
    cpufreq: Option<String>,
    cpuidle: Option<String>,
    duration: Option<String>,
    duration_ns: Option<u64>,
    seed: Option<u64>,
}

/// Longest run accepted (a guard against a typo such as `10000h`).
const MAX_DURATION_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;

impl RunConfig {
    /// Parse the JSON form the bindings send.
    pub fn from_json(text: &str) -> Result<RunConfig> {
        let raw: RawConfig = serde_json::from_str(text)
            .map_err(|e| Error::invalid("run configuration", "json", e, "the fields platform, workload, cpufreq, cpuidle, duration, seed"))?;
        let d = RunConfig::default();
        let spec = |v: Option<String>, what: &str, def: Spec| v.map_or(Ok(def), |s| Spec::parse(&s, what));
        let duration_ns = match (raw.duration, raw.duration_ns) {
            (Some(s), _) => parse_duration_ns(&s, 1_000_000_000)
                .filter(|&ns| ns > 0 && ns <= MAX_DURATION_NS)
                .ok_or_else(|| Error::invalid("run", "duration", &s, "a positive duration up to 7 days such as 10s, 250ms, 500us"))?,
            (None, Some(ns)) if ns > 0 && ns <= MAX_DURATION_NS => ns,
            (None, Some(ns)) => return Err(Error::invalid("run", "duration", format!("{ns}ns"), "a positive duration up to 7 days")),
            (None, None) => d.duration_ns,
        };
        Ok(RunConfig {
            platform: spec(raw.platform, "--platform", d.platform)?,
            workload: spec(raw.workload, "--workload", d.workload)?,
            cpufreq: spec(raw.cpufreq, "--cpufreq", d.cpufreq)?,
            cpuidle: spec(raw.cpuidle, "--cpuidle", d.cpuidle)?,
            duration_ns,
            seed: raw.seed.unwrap_or(d.seed),
        })
    }

    /// Resolve names into a ready engine.
    pub fn build(&self, trace: Option<&Path>) -> Result<machine::Engine> {
        let parts = self.parts()?;
        machine::build(parts, trace)
    }

    fn parts(&self) -> Result<RunParts> {
        self.parts_with(ExternalGovernors::default())
    }

    /// The parts, with the caller's governors where the specs name
    /// [`external::EXTERNAL`].
    fn parts_with(&self, ext: ExternalGovernors) -> Result<RunParts> {
        let platform = platform::load_named(&self.platform)?;
        let workload = workload::build(&self.workload)?;
        let cpufreq = external::build_cpufreq(&self.cpufreq, ext.cpufreq, &platform)?;
        let cpuidle = external::build_cpuidle(&self.cpuidle, ext.cpuidle, &platform)?;
        Ok(RunParts { platform, workload, cpufreq, cpuidle, duration_ns: self.duration_ns, seed: self.seed })
    }

    /// Run to the end.
    pub fn run(&self, trace: Option<&Path>, progress: Option<&mut dyn FnMut(u64, u64) -> bool>) -> Result<RunResult> {
        self.run_with(ExternalGovernors::default(), trace, progress)
    }

    /// Run to the end with the caller's governors (see [`crate::external`]).
    pub fn run_with(
        &self,
        ext: ExternalGovernors,
        trace: Option<&Path>,
        progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
    ) -> Result<RunResult> {
        let parts = self.parts_with(ext)?;
        let cpufreq_text = external::spec_text(&self.cpufreq, parts.cpufreq.name());
        let cpuidle_text = external::spec_text(&self.cpuidle, parts.cpuidle.name());
        let mut engine = machine::build(parts, trace)?;
        engine.external_governors = self.cpufreq.name == external::EXTERNAL || self.cpuidle.name == external::EXTERNAL;
        let mut r = engine.run(progress)?;
        r.platform = self.platform.to_text();
        r.workload = self.workload.to_text();
        r.cpufreq = cpufreq_text;
        r.cpuidle = cpuidle_text;
        Ok(r)
    }

    /// Everything resolved: governors' tunables, workload parameters and
    /// platform overrides (for `--show-config`).
    pub fn show(&self) -> Result<Value> {
        self.show_with(ExternalGovernors::default())
    }

    /// [`RunConfig::show`] with the caller's governors.
    pub fn show_with(&self, ext: ExternalGovernors) -> Result<Value> {
        let p = self.parts_with(ext)?;
        let kv = |v: Vec<(String, String)>| Value::Object(v.into_iter().map(|(k, v)| (k, Value::String(v))).collect());
        Ok(json!({
            "platform": {"name": p.platform.name, "cpus": p.platform.nr_cpus(), "driver": p.platform.driver.name(),
                          "hwp": p.platform.hwp, "hz": p.platform.hz},
            "workload": {"name": self.workload.name, "params": kv(p.workload.resolved())},
            "cpufreq": {"name": p.cpufreq.name(), "tunables": kv(p.cpufreq.tunables()),
                        "scaling_driver": cpufreq::driver::resolve(&p.platform, p.cpufreq.as_ref())?.name()},
            "cpuidle": {"name": p.cpuidle.name(), "tunables": kv(p.cpuidle.tunables())},
            "duration_ns": self.duration_ns,
            "seed": self.seed,
        }))
    }
}

/// Run from the JSON configuration; the result as JSON text.
pub fn run_json(config_json: &str, trace_path: Option<&Path>, progress: Option<&mut dyn FnMut(u64, u64) -> bool>) -> Result<String> {
    let cfg = RunConfig::from_json(config_json)?;
    let r = cfg.run(trace_path, progress)?;
    Ok(serde_json::to_string(&r).unwrap_or_default())
}

/// [`run_json`] with the caller's governors (see [`crate::external`]).
pub fn run_json_with(
    config_json: &str,
    ext: ExternalGovernors,
    trace_path: Option<&Path>,
    progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
) -> Result<String> {
    let cfg = RunConfig::from_json(config_json)?;
    let r = cfg.run_with(ext, trace_path, progress)?;
    Ok(serde_json::to_string(&r).unwrap_or_default())
}

/// `--show-config` as JSON text.
pub fn show_config_json(config_json: &str) -> Result<String> {
    show_config_json_with(config_json, ExternalGovernors::default())
}

/// [`show_config_json`] with the caller's governors.
pub fn show_config_json_with(config_json: &str, ext: ExternalGovernors) -> Result<String> {
    let cfg = RunConfig::from_json(config_json)?;
    Ok(serde_json::to_string_pretty(&cfg.show_with(ext)?).unwrap_or_default())
}

/// `govlab trace stats`: the trace in `path` (any format govlab reads)
/// analysed with the idle states of `platform` (a name, spec or file), or
/// the defaults; the answer as JSON text.
pub fn trace_stats_json(path: &Path, platform: Option<&str>) -> Result<String> {
    let trace = crate::trace::read_path(path)?;
    let platform = match platform {
        Some(p) => Some(platform::load_named(&Spec::parse(p, "--platform")?)?),
        None => None,
    };
    let stats = crate::trace::stats::stats(&trace, platform.as_ref())?;
    Ok(serde_json::to_string(&stats).unwrap_or_default())
}

/// `govlab trace stats --html`: [`trace_stats_json`]'s answer and every
/// CPU's timeline (binned past `max_spans` intervals of each kind, default
/// [`crate::trace::timeline::MAX_SPANS`]), as `{"stats", "timeline"}` JSON text.
pub fn trace_timeline_json(path: &Path, platform: Option<&str>, max_spans: Option<usize>) -> Result<String> {
    let trace = crate::trace::read_path(path)?;
    let platform = match platform {
        Some(p) => Some(platform::load_named(&Spec::parse(p, "--platform")?)?),
        None => None,
    };
    let max_spans = max_spans.unwrap_or(crate::trace::timeline::MAX_SPANS);
    if max_spans == 0 {
        return Err(Error::invalid("trace stats", "max_spans", max_spans, "at least 1"));
    }
    let (stats, timeline) = crate::trace::stats::stats_with_timeline(&trace, platform.as_ref(), max_spans)?;
    Ok(serde_json::to_string(&json!({"stats": stats, "timeline": timeline})).unwrap_or_default())
}

/// `govlab trace replay`: the tasks of the trace in `path` (trace::replay)
/// re-simulated with the platform, governors and seed of `config_json` for
/// the trace's span (with `pin`, each task kept on the CPUs it ran on;
/// `wakeups` says whether a task woken by another follows it). The
/// platform is taken for the recording machine too when it has the trace's
/// CPUs (capacities and SMT sharing when bursts become work).
/// Returns `{"run": <result>, "recorded": <trace stats>,
/// "tasks": n}` as JSON text; the recorded figures use the same platform's
/// idle states when its CPUs cover the trace's, else the defaults.
pub fn replay_json(
    path: &Path,
    config_json: &str,
    pin: bool,
    wakeups: crate::trace::replay::Wakeups,
    progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
) -> Result<String> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let trace = crate::trace::read_path(path)?;
    let mut cfg = RunConfig::from_json(config_json)?;
    let plat = platform::load_named(&cfg.platform)?;
    let unknown_khz = plat.cpu_types[0].base_khz;
    let tasks = crate::trace::replay::tasks(&trace, unknown_khz, Some(&plat), wakeups);
    if pin {
        if let Some(c) = tasks.iter().flat_map(|t| t.cpus.iter()).find(|&&c| c >= plat.nr_cpus()) {
            return Err(Error::invalid("trace replay", "pin", c, format!("CPUs of platform {} (0-{}): tasks ran on CPU {c}", plat.name, plat.nr_cpus() - 1)));
        }
    }
    let (t0, t1) = trace.span_ns();
    let toml = crate::trace::replay::workload_toml(&tasks, &path.display().to_string(), pin, t1 - t0)?;
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!("govlab-replay-{}-{n}.toml", std::process::id()));
    std::fs::write(&file, toml).map_err(|e| Error::io(&file, e))?;
    cfg.workload = Spec::new(file.display().to_string());
    cfg.duration_ns = (t1 - t0).max(1);
    let run = cfg.run(None, progress);
    let _ = std::fs::remove_file(&file);
    let mut run = run?;
    run.workload = format!("replay of {}", path.display());
    let fits = trace.nr_cpus <= plat.nr_cpus();
    let recorded = crate::trace::stats::stats(&trace, fits.then_some(&plat))?;
    Ok(serde_json::to_string(&json!({"run": run, "recorded": recorded, "tasks": tasks.len()})).unwrap_or_default())
}

fn params_json(params: &[workload::ParamInfo]) -> Value {
    Value::Array(
        params
            .iter()
            .map(|p| json!({"name": p.name, "default": p.default, "help": p.help}))
            .collect(),
    )
}

/// The cpufreq driver's own platform options (`list platforms`).
fn driver_params(driver: platform::Driver) -> Vec<Value> {
    match driver {
        platform::Driver::IntelPstate { .. } => vec![json!({"name": "intel_pstate", "default": "by governor",
            "help": "active or passive (default: active for --cpufreq intel_pstate, passive for the others)"})],
        platform::Driver::Powernv { global_pstate } => vec![json!({"name": "global_pstate",
            "default": if global_pstate {"on"} else {"off"},
            "help": "off: the chip voltage follows every frequency request instead of ramping down over ~5 s"})],
        _ => Vec::new(),
    }
}

/// The registries as JSON text: `platforms`, `workloads` or `governors`.
pub fn list_json(kind: &str) -> Result<String> {
    let v = match kind {
        "platforms" => Value::Array(
            platform::platform_names()
                .into_iter()
                .map(|n| match platform::load_named(&Spec::new(n)) {
                    Ok(p) => {
                        let mut params = vec![json!({"name": "hz", "default": p.hz.to_string(), "help": "tick rate (CONFIG_HZ)"}),
                                              json!({"name": "turbo", "default": "on", "help": "off drops turbo OPPs"}),
                                              json!({"name": "smt", "default": "on", "help": "off keeps one thread per core"}),
                                              json!({"name": "hwp", "default": if p.hwp {"on"} else {"off"}, "help": "hardware P-states"}),
                                              json!({"name": "idle_tick", "default": "governor",
                                                     "help": "governor (v4.17+: the idle governor decides whether the tick stops) or stopped (before v4.17: stopped on every idle entry)"})];
                        params.extend(driver_params(p.driver));
                        json!({"name": n, "description": p.description, "cpus": p.nr_cpus(), "driver": p.driver.name(),
                               "hwp": p.hwp, "params": params})
                    }
                    Err(e) => json!({"name": n, "description": format!("(cannot load: {e})")}),
                })
                .collect(),
        ),
        "workloads" => Value::Array(
            workload::registry()
                .iter()
                .map(|w| json!({"name": w.name, "description": w.description, "metric": w.metric, "params": params_json(w.params)}))
                .collect(),
        ),
        "governors" => Value::Array(
            cpufreq::registry()
                .iter()
                .map(|g| json!({"name": g.name, "kind": "cpufreq", "description": g.description, "models": g.models, "params": params_json(g.params)}))
                .chain(cpuidle::registry().iter().map(|g| {
                    json!({"name": g.name, "kind": "cpuidle", "description": g.description, "models": g.models, "params": params_json(g.params)})
                }))
                .collect(),
        ),
        other => {
            return Err(Error::UnknownName {
                kind: "list",
                name: other.to_string(),
                choices: vec!["platforms".into(), "workloads".into(), "governors".into()],
            })
        }
    };
    Ok(serde_json::to_string(&v).unwrap_or_default())
}

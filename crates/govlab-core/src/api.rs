//! The engine's whole outward surface, in plain data: a run configuration
//! in, typed results out, and the registries for `govlab list`.
//!
//! Every answer is a `Serialize` struct; the caller chooses the format (the
//! Python bindings write JSON). Nothing here knows the command line: errors
//! name the configuration's fields (`platform`, `cpufreq`, ...), not flags.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::external::{self, ExternalGovernors};
use crate::metrics::RunResult;
use crate::params::{parse_duration_ns, Spec};
use crate::machine::RunParts;
use crate::sim::rng::{Rng, Stream};
use crate::trace::stats::TraceStats;
use crate::trace::timeline::Timeline;
use crate::trace::{Trace, TraceTo, TraceWriter};
use crate::{cpufreq, cpuidle, kernel, machine, platform, workload};

/// The library version, recorded in every result.
pub use crate::{ENGINE_DIGEST, VERSION};

/// One run, as the user names it.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub platform: Spec,
    /// `VERSION[:option=value,...]` (see [`crate::kernel`]).
    pub kernel: Spec,
    pub workload: Spec,
    pub cpufreq: Spec,
    pub cpuidle: Spec,
    pub duration_ns: u64,
    pub seed: u64,
    /// Keep the counters turbostat reads per interval of this length
    /// (`RunResult::intervals`; `govlab run --turbostat-interval`). None:
    /// only the whole run's, at no cost.
    pub interval_ns: Option<u64>,
}

/// The platform a run uses when none is named.
pub const DEFAULT_PLATFORM: &str = "skylake-e3-1240v5";
/// The workload a run uses when none is named.
pub const DEFAULT_WORKLOAD: &str = "cpu-bound";
/// The simulated time of a run when none is given and its workload declares
/// none, ns (a workload that ends by itself declares its own).
pub use crate::workload::DEFAULT_DURATION_NS;
/// The seed of a run when none is given.
pub const DEFAULT_SEED: u64 = 1;

/// The default run: the default platform with the governors its kernel
/// would run (for [`DEFAULT_PLATFORM`], intel_pstate's own powersave and
/// menu). A caller who changes the platform with `..RunConfig::default()`
/// keeps those names; [`RunConfig::from_args`] picks the named platform's
/// default governor instead ([`cpufreq::default_governor`]).
impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            platform: Spec::new(DEFAULT_PLATFORM),
            kernel: Spec::new(kernel::DEFAULT_VERSION.to_string()),
            workload: Spec::new(DEFAULT_WORKLOAD),
            cpufreq: Spec::new("powersave"),
            cpuidle: Spec::new(cpuidle::DEFAULT_GOVERNOR),
            duration_ns: DEFAULT_DURATION_NS,
            seed: DEFAULT_SEED,
            interval_ns: None,
        }
    }
}

/// What a run uses for each field the caller leaves out, on `platform`
/// (`govlab run --help`, the Python API's defaults).
#[derive(Debug, Clone, Serialize)]
pub struct Defaults {
    pub platform: String,
    /// The kernel asked for, or the version modelled when none is named.
    pub kernel: String,
    pub workload: &'static str,
    /// The platform's default cpufreq governor ([`cpufreq::default_governor`]).
    pub cpufreq: &'static str,
    pub cpuidle: &'static str,
    pub duration: String,
    pub seed: u64,
}

/// The defaults of a run on `platform` (a name, spec or file; None: the
/// default platform) under `kernel` (a kernel spec; None: the default
/// version), which the default cpufreq governor depends on.
pub fn defaults(platform: Option<&str>, kernel: Option<&str>) -> Result<Defaults> {
    let text = platform.unwrap_or(DEFAULT_PLATFORM);
    let plat = platform::load_named(&Spec::parse(text, "platform")?)?;
    let kernel_config = match kernel {
        Some(k) => kernel::KernelConfig::from_spec(&Spec::parse(k, "kernel")?)?,
        None => kernel::KernelConfig::default(),
    };
    Ok(Defaults {
        platform: text.to_string(),
        kernel: kernel.map_or_else(|| kernel::DEFAULT_VERSION.to_string(), str::to_string),
        workload: DEFAULT_WORKLOAD,
        cpufreq: cpufreq::default_governor(&plat, &kernel_config),
        cpuidle: cpuidle::DEFAULT_GOVERNOR,
        duration: format!("{}s", DEFAULT_DURATION_NS / 1_000_000_000),
        seed: DEFAULT_SEED,
    })
}

/// A run configuration as a caller writes it: spec texts and a duration
/// text, every field optional (the default of [`RunConfig`] where absent).
/// Resolved by [`RunConfig::from_args`]; unknown fields are rejected by
/// whatever format it is read from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    pub platform: Option<String>,
    /// `VERSION[:option=value,...]`; default [`kernel::DEFAULT_VERSION`].
    pub kernel: Option<String>,
    pub workload: Option<String>,
    pub cpufreq: Option<String>,
    pub cpuidle: Option<String>,
    /// `10s`, `250ms`, `500us`; a bare number is seconds. Without it (and
    /// `duration_ns`), the workload's default duration
    /// ([`workload::default_duration_ns`]).
    pub duration: Option<String>,
    /// The duration in ns, used when `duration` is absent.
    pub duration_ns: Option<u64>,
    pub seed: Option<u64>,
    /// Counters per interval (`1s`, `250ms`; a bare number is seconds):
    /// [`RunConfig::interval_ns`].
    pub turbostat_interval: Option<String>,
    /// The most events the run may be estimated to take
    /// ([`RunConfig::check_cost`]); default [`workload::cost::MAX_EVENTS`].
    pub max_events: Option<u64>,
}

impl RunArgs {
    /// The fields a configuration may have, for messages about its syntax.
    pub const FIELDS: &'static str =
        "the fields platform, kernel, workload, cpufreq, cpuidle, duration, seed, turbostat_interval, max_events";
}

/// Longest run accepted (a guard against a typo such as `10000h`).
const MAX_DURATION_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;

/// Most intervals a run may be cut into (a guard against `1ns` over a long
/// run: each interval holds every CPU's counters).
pub const MAX_INTERVALS: u64 = 100_000;

impl RunConfig {
    /// Resolve the caller's texts: parse the specs, check the duration,
    /// fill in the defaults. The default cpufreq governor is the one the
    /// kernel boots on the machine, so the platform is loaded here once to
    /// name it; the run's build context is resolved when the run is built
    /// ([`RunConfig::resolve`]).
    pub fn from_args(args: RunArgs) -> Result<RunConfig> {
        let d = RunConfig::default();
        let spec = |v: Option<String>, what: &str, def: Spec| v.map_or(Ok(def), |s| Spec::parse(&s, what));
        let duration_ns = match (args.duration, args.duration_ns) {
            (Some(s), _) if s.trim_start().starts_with('-') || parse_duration_ns(&s, 1_000_000_000) == Some(0) => {
                return Err(Error::invalid("run", "duration", &s, "the duration must be positive, such as 10s, 250ms, 500us"))
            }
            (Some(s), _) => parse_duration_ns(&s, 1_000_000_000)
                .filter(|&ns| ns > 0 && ns <= MAX_DURATION_NS)
                .ok_or_else(|| Error::invalid("run", "duration", &s, "a positive duration up to 7 days such as 10s, 250ms, 500us"))?,
            (None, Some(ns)) if ns > 0 && ns <= MAX_DURATION_NS => ns,
            (None, Some(ns)) => return Err(Error::invalid("run", "duration", format!("{ns}ns"), "a positive duration up to 7 days")),
            (None, None) => 0,
        };
        let workload = spec(args.workload, "workload", d.workload)?;
        let duration_ns = if duration_ns == 0 { workload::default_duration_ns(&workload) } else { duration_ns };
        let platform = spec(args.platform, "platform", d.platform)?;
        let kernel = spec(args.kernel, "kernel", d.kernel)?;
        let kernel_config = kernel::KernelConfig::from_spec(&kernel)?;
        let cpufreq = match args.cpufreq {
            Some(s) => Spec::parse(&s, "cpufreq")?,
            None => Spec::new(cpufreq::default_governor(&platform::load_named(&platform)?, &kernel_config)),
        };
        let interval_ns = match args.turbostat_interval {
            None => None,
            Some(s) => Some(
                parse_duration_ns(&s, 1_000_000_000)
                    .filter(|&ns| ns > 0 && !s.trim_start().starts_with('-'))
                    .ok_or_else(|| Error::invalid("run", "turbostat_interval", &s, "a positive time such as 1s, 250ms, 500us"))?,
            ),
        };
        if let Some(ns) = interval_ns {
            if duration_ns.div_ceil(ns) > MAX_INTERVALS {
                let why = format!("at most {MAX_INTERVALS} intervals in the run's {} ns: at least {} ns", duration_ns, duration_ns.div_ceil(MAX_INTERVALS));
                return Err(Error::invalid("run", "turbostat_interval", format!("{ns}ns"), why));
            }
        }
        Ok(RunConfig {
            platform,
            kernel,
            workload,
            cpufreq,
            cpuidle: spec(args.cpuidle, "cpuidle", d.cpuidle)?,
            duration_ns,
            seed: args.seed.unwrap_or(d.seed),
            interval_ns,
        })
    }

    /// The events a run is estimated to take ([`workload::cost`]), from the
    /// workload's setup on the run's platform with the run's seed.
    ///
    /// # Errors
    /// Whatever building the run would give.
    pub fn estimated_events(&self) -> Result<f64> {
        let platform = self.resolve()?.platform;
        let setup = workload::build(&self.workload)?.setup(&platform, &mut Rng::new(self.seed, Stream::Workload))?;
        Ok(workload::cost::estimate(&setup, &platform, self.duration_ns))
    }

    /// Refuse a run estimated to take more than `max_events` events (None:
    /// [`workload::cost::MAX_EVENTS`]) before it starts, saying the longest
    /// duration that fits and how to raise the ceiling.
    ///
    /// # Errors
    /// An [`Error::InvalidValue`] of the duration, or whatever building the
    /// run would give.
    pub fn check_cost(&self, max_events: Option<u64>) -> Result<()> {
        let most = max_events.unwrap_or(workload::cost::MAX_EVENTS);
        let events = self.estimated_events()?;
        if events <= most as f64 {
            return Ok(());
        }
        let per_s = events * 1e9 / self.duration_ns as f64;
        let fits_ns = (most as f64 / per_s * 1e9) as u64;
        let fits = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
            .iter()
            .find(|&&(unit, _)| fits_ns >= unit)
            .map_or_else(|| format!("{fits_ns}ns"), |&(unit, name)| format!("{}{name}", fits_ns / unit));
        Err(Error::invalid(
            format!("workload {}", self.workload.to_text()),
            "duration",
            workload::duration_text(self.duration_ns),
            format!(
                "about {events:.1e} events ({per_s:.1e} a simulated second), more than the {most:.0e} a run may take; \
                 at most {fits} at this rate, or raise max_events"
            ),
        ))
    }

    /// Resolve names into a ready engine.
    pub fn build(&self, trace: Option<&Path>) -> Result<machine::Engine> {
        let parts = self.parts()?;
        machine::build(parts, trace)
    }

    pub(crate) fn parts(&self) -> Result<RunParts> {
        self.parts_with(ExternalGovernors::default())
    }

    /// The parts, with the caller's governors where the specs name
    /// [`external::EXTERNAL`].
    fn parts_with(&self, ext: ExternalGovernors) -> Result<RunParts> {
        let ctx = self.resolve()?;
        let workload = workload::build(&self.workload)?;
        self.parts_for(ctx, workload, ext)
    }

    /// Every governor built in `ctx`, around `workload`.
    fn parts_for(&self, ctx: kernel::BuildCtx, workload: Box<dyn workload::Workload>, ext: ExternalGovernors) -> Result<RunParts> {
        let cpufreq = external::build_cpufreq(&self.cpufreq, ext.cpufreq, &ctx)?;
        let cpuidle = external::build_cpuidle(&self.cpuidle, ext.cpuidle, &ctx)?;
        Ok(RunParts { ctx, workload, cpufreq, cpuidle, duration_ns: self.duration_ns, seed: self.seed })
    }

    /// The run's build context, resolved once: the platform (the
    /// hardware), the kernel, and what the kernel decides on that hardware
    /// for the cpufreq governor named (its tick rate; intel_pstate's
    /// passive-mode eras), before any governor is built.
    ///
    /// # Errors
    /// An unknown platform or kernel, a kernel older than the platform's
    /// drivers, or a governor the kernel's driver mode cannot run.
    pub fn resolve(&self) -> Result<kernel::BuildCtx> {
        let platform = platform::load_named(&self.platform)?;
        let kernel = kernel::KernelConfig::from_spec(&self.kernel)?;
        kernel.check_platform(&platform)?;
        cpufreq::resolve_ctx(&self.cpufreq, kernel::BuildCtx::new(platform, kernel))
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
        let (r, _) = self.run_engine(ext, trace.map(TraceTo::File), progress, true)?;
        Ok(r)
    }

    /// [`RunConfig::run_with`] keeping, per interval of `interval_ns`, only
    /// the workload's and the packages' counters (no per-CPU ones: see
    /// machine/intervals.rs), for within-run samples; no trace.
    pub fn run_workload_intervals(
        &self,
        ext: ExternalGovernors,
        progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
    ) -> Result<RunResult> {
        let (r, _) = self.run_engine(ext, None, progress, false)?;
        Ok(r)
    }

    /// Build and run the engine, tracing to `trace`; the result carries the
    /// specs as the user wrote them, and the engine is handed back for what
    /// the caller still needs from it (a memory trace, the platform).
    /// `cpu_intervals`: the intervals asked for keep the per-CPU counters.
    fn run_engine(
        &self,
        ext: ExternalGovernors,
        trace: Option<TraceTo<'_>>,
        progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
        cpu_intervals: bool,
    ) -> Result<(RunResult, machine::Engine)> {
        let parts = self.parts_with(ext)?;
        let cpufreq_text = external::spec_text(&self.cpufreq, parts.cpufreq.name());
        let cpuidle_text = external::spec_text(&self.cpuidle, parts.cpuidle.name());
        let meta = crate::trace::writer::run_meta(&platform_in_header(&self.platform), &self.kernel.to_text());
        let mut engine = machine::engine::build_traced(parts, trace, &meta)?;
        match self.interval_ns {
            Some(ns) if cpu_intervals => engine.keep_intervals(ns),
            Some(ns) => engine.keep_workload_intervals(ns),
            None => {}
        }
        engine.external_governors = self.cpufreq.name == external::EXTERNAL || self.cpuidle.name == external::EXTERNAL;
        let mut r = engine.run(progress)?;
        r.platform = self.platform.to_text();
        r.workload = self.workload.to_text();
        r.cpufreq = cpufreq_text;
        r.cpuidle = cpuidle_text;
        Ok((r, engine))
    }

    /// Run to the end with `workload` in place of the one `self` names
    /// (built in memory, as a replay builds its tasks).
    pub fn run_workload(
        &self,
        workload: Box<dyn workload::Workload>,
        trace: Option<&Path>,
        progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
    ) -> Result<RunResult> {
        let parts = self.parts_for(self.resolve()?, workload, ExternalGovernors::default())?;
        let mut engine = machine::build(parts, trace)?;
        if let Some(ns) = self.interval_ns {
            engine.keep_intervals(ns);
        }
        let mut r = engine.run(progress)?;
        r.platform = self.platform.to_text();
        r.cpufreq = self.cpufreq.to_text();
        r.cpuidle = self.cpuidle.to_text();
        Ok(r)
    }

    /// Everything resolved: governors' tunables, workload parameters and
    /// platform overrides (for `--show-config`).
    pub fn show(&self) -> Result<ShownConfig> {
        self.show_with(ExternalGovernors::default())
    }

    /// [`RunConfig::show`] with the caller's governors.
    pub fn show_with(&self, ext: ExternalGovernors) -> Result<ShownConfig> {
        let p = self.parts_with(ext)?;
        let c = &p.ctx;
        let scaling_driver = cpufreq::driver::resolve(c, p.cpufreq.as_ref())?.name();
        Ok(ShownConfig {
            kernel: c.kernel.show(&c.platform, c.hz),
            platform: ShownPlatform {
                name: c.platform.name.clone(),
                cpus: c.platform.nr_cpus(),
                driver: c.platform.driver.name(),
                hwp: c.hwp,
                hz: c.hz,
                housekeeping: c.platform.housekeeping.name(),
                policies: ShownPolicy::all(&c.platform),
                idle_states: ShownIdleStates::all(&c.platform, &c.kernel),
            },
            workload: ShownWorkload { name: self.workload.name.clone(), params: p.workload.resolved().into_iter().collect() },
            cpufreq: ShownGovernor {
                name: p.cpufreq.name(),
                tunables: p.cpufreq.tunables().into_iter().collect(),
                scaling_driver: Some(scaling_driver),
            },
            cpuidle: ShownGovernor { name: p.cpuidle.name(), tunables: p.cpuidle.tunables().into_iter().collect(), scaling_driver: None },
            eas: machine::eas::shown(&p.ctx.platform, &p.ctx.kernel, p.cpufreq.name()),
            energy_model: machine::eas::shown(&p.ctx.platform, &p.ctx.kernel, p.cpufreq.name())
                .and_then(|_| machine::eas::describe_em(&p.ctx.platform, &p.ctx.kernel)),
            duration_ns: self.duration_ns,
            workload_duration_ns: workload::declared_duration_ns(&self.workload),
            seed: self.seed,
        })
    }
}

/// A run's configuration with everything resolved ([`RunConfig::show`]).
#[derive(Debug, Clone, Serialize)]
pub struct ShownConfig {
    pub kernel: kernel::ShownKernel,
    pub platform: ShownPlatform,
    pub workload: ShownWorkload,
    pub cpufreq: ShownGovernor,
    pub cpuidle: ShownGovernor,
    /// Energy-Aware Scheduling (`on`, or `off: why`), on a big.LITTLE
    /// platform with an Energy Model; absent elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eas: Option<String>,
    /// The Energy Model's performance domains, where `eas` is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_model: Option<Vec<String>>,
    pub duration_ns: u64,
    /// The run length the workload itself asks for (an rt-app file's
    /// `global.duration`), which `duration_ns` replaces when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_duration_ns: Option<u64>,
    pub seed: u64,
}

/// The platform of a [`ShownConfig`].
#[derive(Debug, Clone, Serialize)]
pub struct ShownPlatform {
    pub name: String,
    pub cpus: usize,
    /// The cpufreq driver of the hardware (`acpi-cpufreq`, `intel_pstate`, ...).
    pub driver: &'static str,
    /// HWP in use for the run (the hardware has it and the driver's mode
    /// keeps it).
    pub hwp: bool,
    /// The run's tick rate (CONFIG_HZ).
    pub hz: u32,
    /// The kernel's idle-CPU wakeup profile of this kind of machine (the
    /// platform file's `housekeeping`).
    pub housekeeping: &'static str,
    /// The cpufreq policies the driver makes (`policyN` in sysfs), each
    /// with its CPUs and the hardware clock domain it runs on.
    pub policies: Vec<ShownPolicy>,
    /// The cpuidle states of each CPU type, as `cpuidle/stateN` lists them.
    pub idle_states: Vec<ShownIdleStates>,
}

/// The cpuidle states of one CPU type of a [`ShownPlatform`].
#[derive(Debug, Clone, Serialize)]
pub struct ShownIdleStates {
    pub cpu_type: String,
    /// `stateN/name`, in order.
    pub states: Vec<String>,
    /// The states whose `disable` reads 1 at boot, and why.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub disabled: BTreeMap<String, String>,
}

impl ShownIdleStates {
    fn all(platform: &platform::Platform, kernel: &kernel::KernelConfig) -> Vec<ShownIdleStates> {
        let why = format!(
            "not in the BIOS's ACPI _CST: intel_idle disables it by default from {} ({})",
            kernel::EraId::IntelIdleAcpiCst.first(),
            kernel::EraId::IntelIdleAcpiCst.era().commit
        );
        platform
            .cpu_types
            .iter()
            .map(|t| ShownIdleStates {
                cpu_type: t.name.clone(),
                states: t.idle_states.iter().map(|s| s.name.clone()).collect(),
                disabled: t
                    .idle_states
                    .iter()
                    .filter(|s| kernel.idle_state_off_by_default(s))
                    .map(|s| (s.name.clone(), why.clone()))
                    .collect(),
            })
            .collect()
    }
}

/// One cpufreq policy of a [`ShownPlatform`].
#[derive(Debug, Clone, Serialize)]
pub struct ShownPolicy {
    /// `policy->cpus`.
    pub cpus: Vec<usize>,
    /// The index of the clock domain (`freq_domain`) its CPUs run on;
    /// policies with the same one share a clock.
    pub clock_domain: usize,
}

impl ShownPolicy {
    fn all(platform: &platform::Platform) -> Vec<ShownPolicy> {
        let layout = cpufreq::driver::PolicyLayout::of(platform);
        layout.cpus.iter().zip(&layout.domain).map(|(cpus, &clock_domain)| ShownPolicy { cpus: cpus.clone(), clock_domain }).collect()
    }
}

/// The workload of a [`ShownConfig`]: every parameter, defaults included.
#[derive(Debug, Clone, Serialize)]
pub struct ShownWorkload {
    pub name: String,
    pub params: BTreeMap<String, String>,
}

/// A governor of a [`ShownConfig`]: every tunable, defaults included.
#[derive(Debug, Clone, Serialize)]
pub struct ShownGovernor {
    pub name: &'static str,
    pub tunables: BTreeMap<String, String>,
    /// The driver that runs a cpufreq governor (None for cpuidle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling_driver: Option<&'static str>,
}

/// The platform `spec` as a trace's header names it: its spec text, with a
/// platform file's path made absolute so the trace still names it when
/// read from another directory.
fn platform_in_header(spec: &Spec) -> String {
    let is_file = Path::new(&spec.name).extension().is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    match std::path::absolute(&spec.name) {
        Ok(abs) if is_file => Spec { name: abs.display().to_string(), params: spec.params.clone() }.to_text(),
        _ => spec.to_text(),
    }
}

/// The platform (as a spec text) the trace tools use for `trace`, read from
/// `path`: `explicit` when the caller names one, else the one the trace's
/// header records (a govlab run's trace, [`crate::trace::META_PLATFORM`]),
/// else none (a recording of a real machine). A header platform that does
/// not load is an error naming the header and the way out.
pub fn trace_platform(trace: &Trace, path: &Path, explicit: Option<&str>) -> Result<Option<TracePlatform>> {
    if let Some(text) = explicit {
        let platform = platform::load_named(&Spec::parse(text, "platform")?)?;
        return Ok(Some(TracePlatform { spec: text.to_string(), platform, from_header: false }));
    }
    let Some(text) = trace.meta.get(crate::trace::META_PLATFORM) else { return Ok(None) };
    let loaded = Spec::parse(text, "platform").and_then(|s| platform::load_named(&s));
    match loaded {
        Ok(platform) => Ok(Some(TracePlatform { spec: text.clone(), platform, from_header: true })),
        Err(e) => Err(Error::trace_line(
            path,
            header_line(path, crate::trace::META_PLATFORM),
            format!("the header's platform '{text}' does not load ({e}); name the platform explicitly"),
        )),
    }
}

/// The platform the trace tools use ([`trace_platform`]).
#[derive(Debug, Clone)]
pub struct TracePlatform {
    /// As a spec text.
    pub spec: String,
    pub platform: platform::Platform,
    /// Read from the trace's header, not named by the caller.
    pub from_header: bool,
}

/// Say in `stats` where its platform came from, when from the header.
fn say_source(stats: &mut TraceStats, platform: Option<&TracePlatform>) {
    if platform.is_some_and(|p| p.from_header) {
        stats.idle_states_from.push_str(" (recorded in the trace's header)");
    }
}

/// The line of `path`'s header that holds `key` (1 when not found).
fn header_line(path: &Path, key: &str) -> usize {
    let want = format!("{}{key}=", crate::trace::HEADER_PREFIX);
    // The header is the first lines: its first 64 KiB hold them.
    let mut head = Vec::new();
    if let Ok((file, _)) = crate::input::open(path, "trace", crate::trace::read::MAX_TRACE_DAT_BYTES) {
        let _ = file.take(64 << 10).read_to_end(&mut head);
    }
    String::from_utf8_lossy(&head)
        .lines()
        .take(64)
        .position(|l| l.trim_start().starts_with(&want))
        .map_or(1, |i| i + 1)
}

/// `govlab trace stats`: the trace in `path` (any format govlab reads)
/// analysed with the idle states of `platform` (a name, spec or file), else
/// of the platform the trace's header records ([`trace_platform`]), else the
/// defaults.
pub fn trace_stats(path: &Path, platform: Option<&str>) -> Result<TraceStats> {
    let trace = crate::trace::read_path(path)?;
    let platform = trace_platform(&trace, path, platform)?;
    let mut stats = crate::trace::stats::stats(&trace, platform.as_ref().map(|p| &p.platform))?;
    say_source(&mut stats, platform.as_ref());
    Ok(stats)
}

/// [`trace_stats`]' answer and every CPU's timeline, from one reading.
#[derive(Debug, Clone, Serialize)]
pub struct TraceTimeline {
    pub stats: TraceStats,
    pub timeline: Timeline,
}

/// `govlab trace stats --html`: [`trace_stats`]'s answer and every CPU's
/// timeline (binned past `max_spans` intervals of each kind, default
/// [`crate::trace::timeline::MAX_SPANS`]).
pub fn trace_timeline(path: &Path, platform: Option<&str>, max_spans: Option<usize>) -> Result<TraceTimeline> {
    let trace = crate::trace::read_path(path)?;
    let platform = trace_platform(&trace, path, platform)?;
    let max_spans = max_spans.unwrap_or(crate::trace::timeline::MAX_SPANS);
    if max_spans == 0 {
        return Err(Error::invalid("trace stats", "max_spans", max_spans, "at least 1"));
    }
    let (mut stats, timeline) = crate::trace::stats::stats_with_timeline(&trace, platform.as_ref().map(|p| &p.platform), max_spans)?;
    say_source(&mut stats, platform.as_ref());
    Ok(TraceTimeline { stats, timeline })
}

/// A run's result and the per-CPU timeline of its trace
/// ([`RunConfig::run_timeline`]).
#[derive(Debug, Clone, Serialize)]
pub struct RunTimeline {
    pub run: RunResult,
    /// Built as `govlab trace stats --html` builds a recording's, with the
    /// run's platform's idle states.
    pub timeline: Timeline,
}

impl RunConfig {
    /// Run to the end keeping the trace in memory: the events a `--trace`
    /// file holds, as the reader would read them back, but with nanosecond
    /// timestamps (the text keeps whole microseconds).
    pub fn run_trace(&self, progress: Option<&mut dyn FnMut(u64, u64) -> bool>) -> Result<(RunResult, Trace)> {
        self.run_trace_with(ExternalGovernors::default(), progress)
    }

    /// [`RunConfig::run_trace`] with the caller's governors.
    pub fn run_trace_with(&self, ext: ExternalGovernors, progress: Option<&mut dyn FnMut(u64, u64) -> bool>) -> Result<(RunResult, Trace)> {
        self.run_in_memory(ext, progress).map(|(r, trace, _)| (r, trace))
    }

    /// Run to the end and build every CPU's timeline from the run's trace
    /// (binned past `max_spans` intervals of each kind, default
    /// [`crate::trace::timeline::MAX_SPANS`]); the idle states are the
    /// platform's. The same builder as [`trace_timeline`].
    pub fn run_timeline(&self, max_spans: Option<usize>, progress: Option<&mut dyn FnMut(u64, u64) -> bool>) -> Result<RunTimeline> {
        self.run_timeline_with(ExternalGovernors::default(), max_spans, progress)
    }

    /// [`RunConfig::run_timeline`] with the caller's governors.
    pub fn run_timeline_with(
        &self,
        ext: ExternalGovernors,
        max_spans: Option<usize>,
        progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
    ) -> Result<RunTimeline> {
        let max_spans = max_spans_or_default(max_spans)?;
        let (run, trace, platform) = self.run_in_memory(ext, progress)?;
        let (_, timeline) = crate::trace::stats::stats_with_timeline(&trace, Some(&platform), max_spans)?;
        Ok(RunTimeline { run, timeline })
    }

    /// [`RunConfig::run_with`] tracing to memory; the trace and the
    /// platform the run had.
    fn run_in_memory(
        &self,
        ext: ExternalGovernors,
        progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
    ) -> Result<(RunResult, Trace, platform::Platform)> {
        let (r, mut engine) = self.run_engine(ext, Some(TraceTo::Memory), progress, true)?;
        let trace = engine.take_trace().and_then(TraceWriter::into_trace).expect("a run traced to memory has a memory trace");
        Ok((r, trace, engine.plat))
    }
}

/// `max_spans`, or the timelines' default; at least 1.
fn max_spans_or_default(max_spans: Option<usize>) -> Result<usize> {
    match max_spans.unwrap_or(crate::trace::timeline::MAX_SPANS) {
        0 => Err(Error::invalid("timeline", "max_spans", 0, "at least 1")),
        n => Ok(n),
    }
}

/// What [`replay`] answers.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    /// The re-simulation.
    pub run: RunResult,
    /// [`trace_stats`] of the recording.
    pub recorded: TraceStats,
    /// How many tasks were replayed.
    pub tasks: usize,
}

/// `govlab trace replay`: the tasks of the trace in `path` (trace::replay)
/// re-simulated with the platform, governors and seed of `cfg` for the
/// trace's span (`cfg`'s workload and duration are not used; with `pin`,
/// each task kept on the CPUs it ran on; `wakeups` says whether a task
/// woken by another follows it). The platform is taken for the recording
/// machine too when it has the trace's CPUs (capacities and SMT sharing
/// when bursts become work). The recorded figures use the same platform's
/// idle states when its CPUs cover the trace's, else the defaults.
pub fn replay(
    path: &Path,
    cfg: &RunConfig,
    pin: bool,
    wakeups: crate::trace::replay::Wakeups,
    progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
) -> Result<Replay> {
    let trace = crate::trace::read_path(path)?;
    replay_trace(&trace, path, cfg, pin, wakeups, progress)
}

/// [`replay`] with the run's fields as a caller writes them: without a
/// platform, the one the trace's header records ([`trace_platform`]: a
/// govlab run's trace), else [`DEFAULT_PLATFORM`]; governors left out are
/// that platform's defaults ([`RunConfig::from_args`]).
pub fn replay_args(
    path: &Path,
    mut args: RunArgs,
    pin: bool,
    wakeups: crate::trace::replay::Wakeups,
    progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
) -> Result<Replay> {
    let trace = crate::trace::read_path(path)?;
    if args.platform.is_none() {
        let recorded = trace_platform(&trace, path, None)?;
        args.platform = Some(recorded.map_or_else(|| DEFAULT_PLATFORM.to_string(), |p| p.spec));
    }
    let cfg = RunConfig::from_args(args)?;
    replay_trace(&trace, path, &cfg, pin, wakeups, progress)
}

fn replay_trace(
    trace: &Trace,
    path: &Path,
    cfg: &RunConfig,
    pin: bool,
    wakeups: crate::trace::replay::Wakeups,
    progress: Option<&mut dyn FnMut(u64, u64) -> bool>,
) -> Result<Replay> {
    let plat = platform::load_named(&cfg.platform)?;
    let unknown_khz = plat.cpu_types[0].base_khz;
    let tasks = crate::trace::replay::tasks(trace, unknown_khz, Some(&plat), wakeups);
    if pin {
        if let Some(c) = tasks.iter().flat_map(|t| t.cpus.iter()).find(|&&c| c >= plat.nr_cpus()) {
            return Err(Error::invalid("trace replay", "pin", c, format!("CPUs of platform {} (0-{}): tasks ran on CPU {c}", plat.name, plat.nr_cpus() - 1)));
        }
    }
    let (t0, t1) = trace.span_ns();
    let workload = crate::trace::replay::workload(&tasks, &path.display().to_string(), pin, t1 - t0)?;
    let cfg = RunConfig { duration_ns: (t1 - t0).max(1), ..cfg.clone() };
    let mut run = cfg.run_workload(Box::new(workload), None, progress)?;
    run.workload = format!("replay of {}", path.display());
    let fits = trace.nr_cpus <= plat.nr_cpus();
    let recorded = crate::trace::stats::stats(trace, fits.then_some(&plat))?;
    Ok(Replay { run, recorded, tasks: tasks.len() })
}

/// A setting of a registry entry, for `govlab list`.
#[derive(Debug, Clone, Serialize)]
pub struct ParamEntry {
    pub name: &'static str,
    /// The default, as text.
    pub default: String,
    pub help: &'static str,
    /// For a tunable that models a patch, listed for a kernel: whether it
    /// is mainline in that version or a patch on top (the governor's
    /// `patches`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

impl ParamEntry {
    fn new(name: &'static str, default: impl Into<String>, help: &'static str) -> Self {
        ParamEntry { name, default: default.into(), help, patch: None }
    }

    /// A governor's tunables as in `ctx`'s kernel: defaults by version,
    /// and whether each patch tunable is mainline there or a patch on top.
    fn for_kernel(params: &[crate::params::ParamSpec<kernel::BuildCtx>], patches: &[kernel::Patch], ctx: &kernel::BuildCtx) -> Vec<ParamEntry> {
        let k = &ctx.kernel;
        params
            .iter()
            .map(|p| {
                let patch = patches.iter().find(|patch| patch.tunable == p.name).map(|patch| {
                    if k.merged(patch) {
                        format!("mainline in {}: {}", k.describe(), patch.subject)
                    } else {
                        format!("{}={} is a patch on top of {}: {}", p.name, patch.value, k.describe(), patch.subject)
                    }
                });
                ParamEntry { name: p.name, default: p.default_text_in(ctx), help: p.help, patch }
            })
            .collect()
    }

    fn all<C>(params: &[crate::params::ParamSpec<C>]) -> Vec<ParamEntry> {
        params.iter().map(|p| ParamEntry::new(p.name, p.default_text(), p.help)).collect()
    }
}

/// A built-in platform, for `govlab list platforms`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PlatformEntry {
    Loaded {
        name: &'static str,
        description: String,
        cpus: usize,
        driver: &'static str,
        hwp: bool,
        /// The cpufreq governor the platform's kernel runs by default.
        default_cpufreq: &'static str,
        /// The cpuidle governor the platform's kernel runs by default.
        default_cpuidle: &'static str,
        /// The oldest kernel that runs the platform's drivers, and why;
        /// absent when every modelled kernel does.
        #[serde(skip_serializing_if = "Option::is_none")]
        min_kernel: Option<String>,
        /// The kernel's Energy Model of the CPUs (default kernel), one line
        /// per performance domain; absent without one.
        #[serde(skip_serializing_if = "Option::is_none")]
        energy_model: Option<Vec<String>>,
        params: Vec<ParamEntry>,
    },
    /// A built-in description that does not load (a bug, shown rather than hidden).
    Broken { name: &'static str, description: String },
}

/// A built-in workload, for `govlab list workloads`.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadEntry {
    pub name: &'static str,
    pub description: &'static str,
    /// The headline metric.
    pub metric: &'static str,
    /// How a run ends ([`workload::Ends::describe`]).
    pub ends: String,
    /// The duration of a run when none is given, as text (`10s`).
    pub default_duration: String,
    pub params: Vec<ParamEntry>,
}

/// A built-in governor, for `govlab list governors`.
#[derive(Debug, Clone, Serialize)]
pub struct GovernorEntry {
    pub name: &'static str,
    /// `cpufreq` or `cpuidle`.
    pub kind: &'static str,
    pub description: &'static str,
    /// Kernel behaviour and version it models.
    pub models: &'static str,
    /// Listed for a kernel ([`list_for`]): its version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Listed for a kernel that does not have this governor: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_in_kernel: Option<String>,
    /// Listed for a kernel: how the governor there differs from the newest
    /// modelled version (one line per era).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
    pub params: Vec<ParamEntry>,
}

impl GovernorEntry {
    fn new(kind: &'static str, name: &'static str, description: &'static str, models: &'static str, params: Vec<ParamEntry>) -> Self {
        GovernorEntry { name, kind, description, models, kernel: None, not_in_kernel: None, differs: Vec::new(), params }
    }

    /// The entry as in `kernel`, whose eras `eras` change the governor.
    fn in_kernel(mut self, kernel: &kernel::KernelConfig, eras: &[kernel::EraId]) -> Self {
        self.kernel = Some(kernel.describe());
        let missing = if self.kind == "cpuidle" { kernel.missing_cpuidle_governor(self.name) } else { kernel.missing_cpufreq_governor(self.name) };
        self.not_in_kernel = missing.map(|e| format!("not in {}: {} arrived in v{} ({})", kernel.describe(), e.name, e.first, e.commit));
        self.differs = kernel.differences(eras);
        self
    }
}

/// One of the registries ([`list`]).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Catalogue {
    Platforms(Vec<PlatformEntry>),
    Workloads(Vec<WorkloadEntry>),
    Governors(Vec<GovernorEntry>),
    Kernels(Vec<kernel::KernelEntry>),
}

/// The cpufreq driver's own platform options (`list platforms`).
fn driver_params(driver: platform::Driver) -> Vec<ParamEntry> {
    match driver {
        platform::Driver::IntelPstate { .. } => vec![ParamEntry::new(
            "intel_pstate",
            "active",
            "active (powersave and performance are intel_pstate's own policies; a generic governor switches to passive) \
             or passive (intel_cpufreq: the generic governors only)",
        )],
        platform::Driver::Powernv { global_pstate } => vec![ParamEntry::new(
            "global_pstate",
            if global_pstate { "on" } else { "off" },
            "off: the chip voltage follows every frequency request instead of ramping down over ~5 s",
        )],
        _ => Vec::new(),
    }
}

/// A built-in platform's entry.
fn platform_entry(name: &'static str) -> PlatformEntry {
    match platform::load_named(&Spec::new(name)) {
        Ok(p) => {
            let mut params = vec![
                ParamEntry::new("hz", p.hz.to_string(), "tick rate (CONFIG_HZ)"),
                ParamEntry::new("turbo", "on", "off drops turbo OPPs"),
                ParamEntry::new("smt", "on", "off keeps one thread per core"),
                ParamEntry::new("hwp", if p.hwp { "on" } else { "off" }, "hardware P-states"),
                ParamEntry::new(
                    "idle_tick",
                    "(the kernel's)",
                    "deprecated: use the kernel's option (VERSION:idle_tick=governor|stopped); used where the kernel's is not given",
                ),
            ];
            if p.cpu_types.iter().all(|t| t.cppc.is_some()) {
                params.push(ParamEntry::new(
                    "amd_pstate",
                    "(off)",
                    "passive (v5.17), active (amd-pstate-epp, v6.3) or guided (v6.4): the kernel's amd_pstate=, replacing acpi-cpufreq",
                ));
            }
            if p.packages.iter().any(|k| !k.cstates.is_empty()) {
                params.push(ParamEntry::new(
                    "package_cstates",
                    "on",
                    "off keeps every package in PC0 (package C-states limited in the BIOS)",
                ));
            }
            if p.cpu_types.iter().any(|t| t.idle_states.len() > 1) {
                params.push(ParamEntry::new(
                    "deep_idle",
                    "on",
                    "off keeps each CPU in its shallowest idle state (every deeper state's cpuidle disable set)",
                ));
            }
            if p.packages.iter().any(|k| k.power_limit.is_some()) {
                params.push(ParamEntry::new(
                    "power_limit",
                    "on",
                    "off lifts each package's power limit (RAPL's PL1 on Intel, the OCC's power cap on POWER)",
                ));
            }
            params.extend(driver_params(p.driver));
            PlatformEntry::Loaded {
                name,
                cpus: p.nr_cpus(),
                driver: p.driver.name(),
                hwp: p.hwp,
                default_cpufreq: cpufreq::default_governor(&p, &kernel::KernelConfig::default()),
                default_cpuidle: cpuidle::DEFAULT_GOVERNOR,
                min_kernel: p.min_kernel.as_ref().map(|m| format!("{}.{} ({})", m.major, m.minor, m.why)),
                energy_model: machine::eas::describe_em(&p, &kernel::KernelConfig::default()),
                description: p.description,
                params,
            }
        }
        Err(e) => PlatformEntry::Broken { name, description: format!("(cannot load: {e})") },
    }
}

/// [`list`], with the governors as in kernel `kernel` (`VERSION[:...]`):
/// which a version has, how each differs from the newest, each tunable's
/// default there and whether a patch tunable is mainline or on top. Only
/// `governors` takes a kernel.
pub fn list_for(kind: &str, kernel: Option<&str>) -> Result<Catalogue> {
    let Some(text) = kernel else { return list(kind) };
    let k = kernel::KernelConfig::from_spec(&Spec::parse(text, "kernel")?)?;
    if kind != "governors" {
        return Err(Error::invalid("list", "kernel", text, format!("no kernel for list {kind}: only list governors takes one")));
    }
    // Versioned defaults read the kernel alone; the default platform only
    // completes the context.
    let ctx = kernel::BuildCtx::new(platform::load_named(&Spec::new(DEFAULT_PLATFORM))?, k.clone());
    Ok(Catalogue::Governors(
        cpufreq::registry()
            .iter()
            .map(|g| GovernorEntry::new("cpufreq", g.name, g.description, g.models, ParamEntry::for_kernel(g.params, g.patches, &ctx)).in_kernel(&k, g.eras))
            .chain(cpuidle::registry().iter().map(|g| {
                GovernorEntry::new("cpuidle", g.name, g.description, g.models, ParamEntry::for_kernel(g.params, g.patches, &ctx)).in_kernel(&k, g.eras)
            }))
            .collect(),
    ))
}

/// The registry `kind` names: `platforms`, `workloads`, `governors` or `kernels`.
pub fn list(kind: &str) -> Result<Catalogue> {
    Ok(match kind {
        "platforms" => Catalogue::Platforms(platform::platform_names().into_iter().map(platform_entry).collect()),
        "workloads" => Catalogue::Workloads(
            workload::registry()
                .iter()
                .map(|w| WorkloadEntry {
                    name: w.name,
                    description: w.description,
                    metric: w.metric,
                    ends: w.ends.describe(),
                    default_duration: workload::duration_text(w.ends.default_duration_ns()),
                    params: ParamEntry::all(w.params),
                })
                .collect(),
        ),
        "governors" => {
            // Defaults that depend on the version show the default kernel's.
            let ctx = kernel::BuildCtx::of(platform::load_named(&Spec::new(DEFAULT_PLATFORM))?);
            let entries = |params: &[crate::params::ParamSpec<kernel::BuildCtx>]| -> Vec<ParamEntry> {
                params.iter().map(|p| ParamEntry::new(p.name, p.default_text_in(&ctx), p.help)).collect()
            };
            Catalogue::Governors(
                cpufreq::registry()
                    .iter()
                    .map(|g| GovernorEntry::new("cpufreq", g.name, g.description, g.models, entries(g.params)))
                    .chain(cpuidle::registry().iter().map(|g| GovernorEntry::new("cpuidle", g.name, g.description, g.models, entries(g.params))))
                    .collect(),
            )
        }
        "kernels" => Catalogue::Kernels(kernel::list()),
        other => {
            return Err(Error::UnknownName {
                kind: "list",
                name: other.to_string(),
                choices: vec!["platforms".into(), "workloads".into(), "governors".into(), "kernels".into()],
            })
        }
    })
}

/// What the machine's unit tests share: an engine built from the settings a
/// user gives, under the idle governor menu with seed 1 unless a test needs
/// others.
#[cfg(test)]
pub(crate) mod testing {
    use super::RunConfig;
    use crate::machine::Engine;
    use crate::params::Spec;
    use crate::sim::Time;

    /// An engine for `platform`, `kernel`, `workload` and `cpufreq` (each
    /// `NAME[:key=value,...]`) under menu with seed 1, built for `ns` of
    /// simulated time and not yet run.
    pub fn engine(platform: &str, kernel: &str, workload: &str, cpufreq: &str, ns: Time) -> Engine {
        let cfg = RunConfig {
            platform: Spec::parse(platform, "test").unwrap(),
            kernel: Spec::parse(kernel, "test").unwrap(),
            workload: Spec::parse(workload, "test").unwrap(),
            cpufreq: Spec::parse(cpufreq, "test").unwrap(),
            cpuidle: Spec::new("menu"),
            duration_ns: ns,
            seed: 1,
            interval_ns: None,
        };
        cfg.build(None).unwrap()
    }

    /// [`engine`], run to its end.
    pub fn ran(platform: &str, kernel: &str, workload: &str, cpufreq: &str, ns: Time) -> Engine {
        let mut e = engine(platform, kernel, workload, cpufreq, ns);
        e.run(None).unwrap();
        e
    }
}

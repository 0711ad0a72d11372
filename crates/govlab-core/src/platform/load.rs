//! Loading a platform description: TOML text → checked [`Platform`].
//!
//! A platform file says what the machine is made of; this module turns it into
//! the flat, indexed [`Platform`] the engine uses, in three steps:
//!
//! 1. **Parse** the text into the raw structs below. They mirror the file one
//!    to one, reject unknown keys (a misspelt key fails instead of being
//!    ignored) and keep the byte span of every table, so later errors can name
//!    a line.
//! 2. **Check** every value that the types alone cannot: operating points
//!    sorted by frequency with non-decreasing voltage and turbo ones on top,
//!    idle states that deepen monotonically from state 0 (a polling loop on
//!    x86 and POWER, WFI on Arm; only state 0 may poll), domain
//!    widths that nest, references to cpu types that exist, positive rates.
//!    Each error names the key path (`cpu_type[0].opps[3].khz`) and the line.
//! 3. **Resolve** the topology: number the logical CPUs as Linux does
//!    (`threads-last` on Intel, `threads-adjacent` on POWER and most Arm
//!    boards, or `explicit`: each cluster lists its CPU ids, as on Juno
//!    where the boot CPU 0 is a LITTLE core and the big ones are 1 and 2), group
//!    cores into frequency domains, those into voltage domains, CPUs into LLCs,
//!    and convert the file's µs into the engine's ns once.
//!
//! The shipped platforms (`data/platforms/*.toml`) are compiled into the
//! binary, so a run needs no data directory. [`load_named`] also takes a path
//! ending in `.toml`, and `name:key=value` overrides ([`PlatformOverrides`]):
//! `hz`, `turbo`, `hwp` and `smt` for the machine, and the cpufreq driver's
//! own options: `intel_pstate=active|passive` (the kernel's command-line
//! switch) and `global_pstate=on|off` (powernv).

use std::collections::HashMap;
use std::fmt::Display;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{
    IdleTick,
    AcpiPmProfile, Core, Cpu, CpuId, CpuType, Device, Driver, FreqDomain, IdleState, Opp, Package,
    Platform, PstateMode, VoltageDomain, INTEL_PSTATE_SCALING_KHZ,
};
use crate::error::{line_of, Error, Result};
use crate::params::{Params, Spec};

/// The platforms compiled into the binary: name and file text.
const BUILTIN: &[(&str, &str)] = &[
    (
        "skylake-e3-1240v5",
        include_str!("../../../../data/platforms/skylake-e3-1240v5.toml"),
    ),
    (
        "broadwell-2s-e5-2698v4",
        include_str!("../../../../data/platforms/broadwell-2s-e5-2698v4.toml"),
    ),
    ("power8", include_str!("../../../../data/platforms/power8.toml")),
    ("power9", include_str!("../../../../data/platforms/power9.toml")),
    ("juno-r0", include_str!("../../../../data/platforms/juno-r0.toml")),
    ("juno-r2", include_str!("../../../../data/platforms/juno-r2.toml")),
    ("hikey960", include_str!("../../../../data/platforms/hikey960.toml")),
    ("sd835", include_str!("../../../../data/platforms/sd835.toml")),
];

/// cpufreq drivers the engine models.
const DRIVERS: &[&str] = &["acpi-cpufreq", "intel_pstate", "powernv", "cpufreq-dt"];


/// `CONFIG_HZ` values Kconfig offers (`kernel/Kconfig.hz`).
const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];

/// Upper bound on SMT threads per core (POWER8 has 8).
const MAX_THREADS_PER_CORE: usize = 8;

/// Longest time accepted in any µs field: 100 s. Far beyond any real latency;
/// it only keeps the ns conversion from overflowing.
const MAX_TIME_US: u64 = 100_000_000;

/// Names of the built-in platforms.
pub fn platform_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// Read a platform file and load it.
pub fn load_path(path: &Path) -> Result<Platform> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    load_str(&text, path)
}

/// Parse, check and resolve a platform description. `path` only names the
/// file in error messages.
pub fn load_str(text: &str, path: &Path) -> Result<Platform> {
    let src = Source { text, path };
    let raw: RawPlatform = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    resolve(&src, raw)
}

/// Load a built-in platform by name, or a file when the name ends in `.toml`,
/// then apply the spec's overrides (`hz`, `turbo`, `hwp`, `smt`,
/// `intel_pstate`, `global_pstate`).
pub fn load_named(spec: &Spec) -> Result<Platform> {
    let is_file = Path::new(&spec.name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let mut platform = if is_file {
        load_path(Path::new(&spec.name))?
    } else {
        let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == spec.name) else {
            return Err(Error::UnknownName {
                kind: "platform",
                name: spec.name.clone(),
                choices: platform_names().into_iter().map(String::from).collect(),
            });
        };
        load_str(text, &PathBuf::from(format!("data/platforms/{name}.toml")))?
    };
    let mut params = Params::new(format!("platform {}", spec.name), spec);
    let overrides = PlatformOverrides::from_params(&mut params)?;
    params.finish()?;
    overrides.apply(&mut platform)?;
    Ok(platform)
}

/// Changes to a loaded platform asked for on the command line
/// (`skylake-e3-1240v5:turbo=off,smt=off`). `None` keeps the file's value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformOverrides {
    /// Kernel tick rate (`CONFIG_HZ`): 100, 250, 300 or 1000.
    pub hz: Option<u32>,
    /// `off` drops the turbo operating points, as disabling turbo in the BIOS
    /// or `intel_pstate/no_turbo` does.
    pub turbo: Option<bool>,
    /// `off` runs without hardware P-states (`intel_pstate=no_hwp`); `on`
    /// needs a CPU that has them.
    pub hwp: Option<bool>,
    /// `off` keeps only the first thread of every core (SMT disabled in the
    /// BIOS); CPUs are renumbered densely.
    pub smt: Option<bool>,
    /// intel_pstate's mode, as the kernel's `intel_pstate=active|passive`
    /// forces it; only on intel_pstate platforms. Unset, the governor
    /// decides (see [`Driver::IntelPstate`]).
    pub intel_pstate: Option<PstateMode>,
    /// powernv's global P-state ramp-down (`off`: the voltage follows every
    /// frequency request); only on powernv platforms. Unset, the platform
    /// file's `global_pstate` holds.
    pub global_pstate: Option<bool>,
    /// `stopped`: the pre-v4.17 idle loop, which stopped the tick on every
    /// idle entry (see [`IdleTick`]); `governor` (default): v4.17+.
    pub idle_tick: Option<IdleTick>,
}

impl PlatformOverrides {
    /// Read the override keys from `p`. The caller then calls
    /// [`Params::finish`] to reject any other key.
    pub fn from_params(p: &mut Params) -> Result<Self> {
        let hz = match p.string("hz") {
            None => None,
            Some(v) => match v.parse::<u32>() {
                Ok(hz) if HZ_VALUES.contains(&hz) => Some(hz),
                _ => {
                    return Err(Error::invalid(
                        p.owner(),
                        "hz",
                        v,
                        "one of 100, 250, 300, 1000 (default: the platform file's hz)",
                    ))
                }
            },
        };
        let turbo = opt_bool(p, "turbo")?;
        let hwp = opt_bool(p, "hwp")?;
        let smt = opt_bool(p, "smt")?;
        let intel_pstate = match p.string("intel_pstate") {
            None => None,
            Some(v) => match v.as_str() {
                "active" => Some(PstateMode::Active),
                "passive" => Some(PstateMode::Passive),
                _ => {
                    return Err(Error::invalid(
                        p.owner(),
                        "intel_pstate",
                        v,
                        "active or passive (default: active for --cpufreq intel_pstate, passive for the generic governors)",
                    ))
                }
            },
        };
        let global_pstate = opt_bool(p, "global_pstate")?;
        let idle_tick = match p.string("idle_tick") {
            None => None,
            Some(v) => match v.as_str() {
                "governor" => Some(IdleTick::Governor),
                "stopped" => Some(IdleTick::Stopped),
                _ => {
                    return Err(Error::invalid(
                        p.owner(),
                        "idle_tick",
                        v,
                        "governor (v4.17+: the idle governor decides whether the tick stops) or stopped (before v4.17: stopped on every idle entry)",
                    ))
                }
            },
        };
        Ok(PlatformOverrides {
            hz,
            turbo,
            hwp,
            smt,
            intel_pstate,
            global_pstate,
            idle_tick,
        })
    }

    /// Apply the overrides to a loaded platform.
    pub fn apply(&self, p: &mut Platform) -> Result<()> {
        if let Some(hz) = self.hz {
            if !HZ_VALUES.contains(&hz) {
                return Err(Error::invalid(
                    format!("platform {}", p.name),
                    "hz",
                    hz,
                    "one of 100, 250, 300, 1000",
                ));
            }
            p.hz = hz;
        }
        match self.turbo {
            Some(false) => {
                for t in &mut p.cpu_types {
                    t.opps.retain(|o| !o.turbo);
                    t.turbo_max_khz.clear();
                }
            }
            Some(true) if !p.has_turbo() => {
                return Err(Error::Unsupported(format!(
                    "platform {}: turbo=on, but its CPUs have no turbo operating points",
                    p.name
                )));
            }
            _ => {}
        }
        match self.hwp {
            Some(true) if !p.hwp => {
                return Err(Error::Unsupported(format!(
                    "platform {}: hwp=on, but its CPUs have no hardware P-states (HWP)",
                    p.name
                )));
            }
            Some(on) => p.hwp = on,
            None => {}
        }
        match self.smt {
            Some(false) => p.drop_smt(),
            Some(true) if !p.has_smt() => {
                return Err(Error::Unsupported(format!(
                    "platform {}: smt=on, but its cores have one thread each",
                    p.name
                )));
            }
            _ => {}
        }
        if let Some(mode) = self.intel_pstate {
            let Driver::IntelPstate { mode: m } = &mut p.driver else {
                return Err(Error::Unsupported(format!(
                    "platform {}: intel_pstate={}, but its cpufreq driver is {}, not intel_pstate",
                    p.name,
                    if mode == PstateMode::Active { "active" } else { "passive" },
                    p.driver.name()
                )));
            };
            *m = Some(mode);
        }
        if let Some(on) = self.global_pstate {
            let Driver::Powernv { global_pstate } = &mut p.driver else {
                return Err(Error::Unsupported(format!(
                    "platform {}: global_pstate={}, but its cpufreq driver is {}; global P-states are powernv's",
                    p.name,
                    if on { "on" } else { "off" },
                    p.driver.name()
                )));
            };
            *global_pstate = on;
        }
        if let Some(t) = self.idle_tick {
            p.idle_tick = t;
        }
        Ok(())
    }
}

/// An optional on/off override: absent is `None`.
fn opt_bool(p: &mut Params, key: &'static str) -> Result<Option<bool>> {
    let Some(v) = p.string(key) else {
        return Ok(None);
    };
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Ok(Some(true)),
        "0" | "off" | "false" | "no" => Ok(Some(false)),
        _ => Err(Error::invalid(
            p.owner(),
            key,
            v,
            "on/off, true/false or 1/0 (default: as the platform file says)",
        )),
    }
}

/// Helpers for the overrides.
impl Platform {
    fn has_turbo(&self) -> bool {
        self.cpu_types
            .iter()
            .any(|t| t.opps.iter().any(|o| o.turbo))
    }

    fn has_smt(&self) -> bool {
        self.cores.iter().any(|c| c.cpus.len() > 1)
    }

    /// Keep the first (lowest-numbered) thread of every core and renumber the
    /// remaining CPUs 0..n in their old order, so every CPU list stays sorted.
    fn drop_smt(&mut self) {
        let mut kept: Vec<CpuId> = self
            .cores
            .iter()
            .filter_map(|c| c.cpus.iter().min().copied())
            .collect();
        kept.sort_unstable();
        let mut new_id: Vec<Option<CpuId>> = vec![None; self.cpus.len()];
        for (new, &old) in kept.iter().enumerate() {
            new_id[old] = Some(new);
        }
        let remap =
            |ids: &[CpuId]| -> Vec<CpuId> { ids.iter().filter_map(|&c| new_id[c]).collect() };
        self.cpus = kept
            .iter()
            .map(|&old| Cpu {
                siblings: Vec::new(),
                ..self.cpus[old].clone()
            })
            .collect();
        for core in &mut self.cores {
            core.cpus = remap(&core.cpus);
        }
        for llc in &mut self.llcs {
            *llc = remap(llc);
        }
        for fd in &mut self.freq_domains {
            fd.cpus = remap(&fd.cpus);
        }
    }
}

// ---------------------------------------------------------------------------
// The file as written. Field names are the TOML keys.
// ---------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    name: Spanned<String>,
    description: String,
    driver: Spanned<String>,
    #[serde(default)]
    hwp: bool,
    /// powernv only: the global P-state ramp-down (default off).
    #[serde(default)]
    global_pstate: Option<Spanned<bool>>,
    /// x86: the ACPI FADT preferred PM profile (default "unspecified").
    #[serde(default)]
    acpi_pm_profile: Option<Spanned<String>>,
    hz: Spanned<u32>,
    topology: Spanned<RawTopology>,
    package: Spanned<RawPackage>,
    cpu_type: Vec<Spanned<RawCpuType>>,
    #[serde(default)]
    device: Vec<Spanned<RawDevice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    packages: usize,
    cpu_numbering: Numbering,
    cluster: Vec<Spanned<RawCluster>>,
}

/// How Linux numbers the threads of the machine's cores.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Numbering {
    /// Thread 0 of every core first, then thread 1 of every core, ... (Intel:
    /// siblings are n and n + cores).
    ThreadsLast,
    /// A core's threads are consecutive (POWER, Arm).
    ThreadsAdjacent,
    /// Every cluster lists its CPU ids in `cpus` (Linux numbers the boot
    /// CPU 0 and the others in device-tree order, which need not follow the
    /// clusters: Juno's LITTLE cores are 0, 3, 4, 5).
    Explicit,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    cpu_type: String,
    cores: usize,
    #[serde(default = "one")]
    threads_per_core: usize,
    freq_domain: String,
    /// Defaults to the frequency domain.
    #[serde(default)]
    voltage_domain: Option<String>,
    llc: String,
    /// With `cpu_numbering = "explicit"`: the Linux CPU ids of the
    /// cluster's threads, core by core (a core's threads adjacent), package
    /// by package.
    #[serde(default)]
    cpus: Option<Vec<CpuId>>,
}

fn one() -> usize {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPackage {
    uncore_mw: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCpuType {
    name: String,
    capacity: u32,
    transition_latency_us: u64,
    voltage_slew_mv_per_us: f64,
    ceff_nf: f64,
    leakage_mw_per_v: f64,
    /// Required when a cluster of this type has more than one thread per core.
    #[serde(default)]
    smt_throughput: Option<f64>,
    #[serde(default)]
    smt_power: Option<f64>,
    #[serde(default)]
    turbo_max_khz: Vec<u32>,
    opps: Vec<Spanned<RawOpp>>,
    idle_state: Vec<Spanned<RawIdleState>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOpp {
    khz: u32,
    mv: u32,
    #[serde(default)]
    turbo: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIdleState {
    name: String,
    /// Defaults to the name.
    #[serde(default)]
    desc: Option<String>,
    exit_latency_us: u64,
    target_residency_us: u64,
    power_mw: f64,
    #[serde(default)]
    polling: bool,
    #[serde(default)]
    power_gated: bool,
    #[serde(default)]
    turbo_active: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: String,
    queue_depth: u32,
    read_us: u64,
    write_us: u64,
    flush_us: u64,
    #[serde(default)]
    flush_queued: bool,
    block_kb: u64,
    mb_per_s: f64,
    #[serde(default)]
    service_cv: f64,
}

// ---------------------------------------------------------------------------
// Error locations.
// ---------------------------------------------------------------------------

/// The text being loaded, to turn spans into line numbers.
struct Source<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Source<'_> {
    /// A TOML syntax or schema error, with its line, naming the key when the
    /// parser's message does not.
    fn toml_error(&self, e: &toml::de::Error) -> Error {
        let message = e.message().replace('\n', "; ");
        let Some(span) = e.span() else {
            return Error::file(self.path, None, message);
        };
        let key = key_before(self.text, span.start);
        let message = match key {
            Some(k) if !message.contains(&format!("`{k}`")) => format!("`{k}`: {message}"),
            _ => message,
        };
        Error::file(self.path, Some(line_of(self.text, span.start)), message)
    }

    /// An error about `key` (or, when empty, the whole table or value) inside
    /// the item at `span`, whose key path is `item`.
    fn err(&self, span: &Range<usize>, item: &str, key: &str, msg: impl Display) -> Error {
        let line = if key.is_empty() {
            line_of(self.text, span.start)
        } else {
            find_key(self.text, span, key).map_or_else(
                || line_of(self.text, span.start),
                |at| line_of(self.text, at),
            )
        };
        let path = match (item.is_empty(), key.is_empty()) {
            (true, _) => key.to_string(),
            (false, true) => item.to_string(),
            (false, false) => format!("{item}.{key}"),
        };
        Error::file(self.path, Some(line), format!("{path}: {msg}"))
    }

    /// An error about a top-level key that is absent, so has no line.
    fn missing(&self, key: &str, msg: &str) -> Error {
        Error::file(self.path, None, format!("{key}: {msg}"))
    }
}

/// Byte offset of `key = ` inside `span` of `text`, if it is written there.
fn find_key(text: &str, span: &Range<usize>, key: &str) -> Option<usize> {
    let end = span.end.min(text.len());
    let start = span.start.min(end);
    let hay = text.get(start..end)?;
    hay.match_indices(key).find_map(|(i, _)| {
        let before_ok = hay[..i]
            .chars()
            .next_back()
            .map_or(true, |c| c.is_whitespace() || c == '{' || c == ',');
        let after_ok = hay[i + key.len()..]
            .trim_start_matches([' ', '\t'])
            .starts_with('=');
        (before_ok && after_ok).then_some(start + i)
    })
}

/// The key whose value starts at `offset`, read back from `key = value`.
fn key_before(text: &str, offset: usize) -> Option<String> {
    let head = text.get(..offset)?;
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let before = head[line_start..].trim_end().strip_suffix('=')?.trim_end();
    let key: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"'))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let key = key.trim_matches('"');
    (!key.is_empty()).then(|| key.to_string())
}

// ---------------------------------------------------------------------------
// Checking and resolution.
// ---------------------------------------------------------------------------

/// How wide a frequency, voltage or cache domain is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Width {
    Core,
    /// Groups of this many consecutive cores of a cluster.
    Cores(usize),
    Cluster,
    Package,
}

impl Width {
    /// Key of the domain a core belongs to: cores with equal keys share it.
    fn key(
        self,
        package: usize,
        cluster: usize,
        core_in_cluster: usize,
    ) -> (usize, Option<usize>, Option<usize>) {
        match self {
            Width::Core => (package, Some(cluster), Some(core_in_cluster)),
            Width::Cores(n) => (package, Some(cluster), Some(core_in_cluster / n)),
            Width::Cluster => (package, Some(cluster), None),
            Width::Package => (package, None, None),
        }
    }

    fn name(self) -> String {
        match self {
            Width::Core => "core".into(),
            Width::Cores(n) => format!("cores:{n}"),
            Width::Cluster => "cluster".into(),
            Width::Package => "package".into(),
        }
    }
}

/// A cluster after its checks.
struct Cluster {
    cpu_type: usize,
    cores: usize,
    threads: usize,
    freq: Width,
    voltage: Width,
    llc: Width,
    /// Explicit CPU ids (`cpu_numbering = "explicit"`).
    cpus: Option<Vec<CpuId>>,
    /// Index into the file's cluster list, for errors.
    index: usize,
    span: Range<usize>,
}

/// A core before numbering: where it sits.
struct CoreSlot {
    package: usize,
    cluster: usize,
    in_cluster: usize,
}

fn resolve(src: &Source, raw: RawPlatform) -> Result<Platform> {
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(src.err(&raw.name.span(), "", "name", "must not be empty"));
    }
    let driver = driver(src, &raw)?;
    let acpi_pm_profile = match &raw.acpi_pm_profile {
        None => AcpiPmProfile::default(),
        Some(v) => AcpiPmProfile::NAMES
            .iter()
            .find(|(n, _)| *n == v.get_ref().as_str())
            .map(|&(_, p)| p)
            .ok_or_else(|| {
                let names: Vec<&str> = AcpiPmProfile::NAMES.iter().map(|(n, _)| *n).collect();
                src.err(
                    &v.span(),
                    "",
                    "acpi_pm_profile",
                    format!("unknown profile '{}'; valid: {}", v.get_ref(), names.join(", ")),
                )
            })?,
    };
    let hz = *raw.hz.get_ref();
    if !HZ_VALUES.contains(&hz) {
        return Err(src.err(
            &raw.hz.span(),
            "",
            "hz",
            format!("{hz} is not one of 100, 250, 300, 1000"),
        ));
    }
    if raw.cpu_type.is_empty() {
        return Err(src.missing("cpu_type", "at least one [[cpu_type]] is needed"));
    }

    let (cpu_types, slews): (Vec<CpuType>, Vec<f64>) = raw
        .cpu_type
        .iter()
        .enumerate()
        .map(|(i, t)| cpu_type(src, i, t))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    if matches!(driver, Driver::IntelPstate { .. }) {
        for (i, t) in cpu_types.iter().enumerate() {
            check_pstate_grid(src, i, &raw.cpu_type[i], t)?;
        }
    }
    for (i, t) in cpu_types.iter().enumerate() {
        if cpu_types[..i].iter().any(|u| u.name == t.name) {
            return Err(src.err(
                &raw.cpu_type[i].span(),
                &format!("cpu_type[{i}]"),
                "name",
                format!("'{}' is defined twice", t.name),
            ));
        }
    }

    let topo = raw.topology.get_ref();
    let topo_span = raw.topology.span();
    if topo.packages == 0 || topo.packages > 64 {
        return Err(src.err(
            &topo_span,
            "topology",
            "packages",
            format!("{} is not in 1..=64", topo.packages),
        ));
    }
    if topo.cluster.is_empty() {
        return Err(src.err(
            &topo_span,
            "topology",
            "",
            "at least one [[topology.cluster]] is needed",
        ));
    }
    let clusters = topo
        .cluster
        .iter()
        .enumerate()
        .map(|(i, c)| cluster(src, i, c, &raw.cpu_type, &cpu_types))
        .collect::<Result<Vec<_>>>()?;
    check_package_widths(src, &clusters)?;
    check_cpus_key(src, topo.cpu_numbering, &clusters)?;

    let uncore_mw = raw.package.get_ref().uncore_mw;
    if !(uncore_mw.is_finite() && uncore_mw >= 0.0) {
        return Err(src.err(
            &raw.package.span(),
            "package",
            "uncore_mw",
            format!("{uncore_mw} must be ≥ 0"),
        ));
    }

    // Cores in package, cluster, core order; this is also the order of
    // thread 0 in the CPU numbering.
    let mut slots = Vec::new();
    for package in 0..topo.packages {
        for (ci, cl) in clusters.iter().enumerate() {
            for in_cluster in 0..cl.cores {
                slots.push(CoreSlot {
                    package,
                    cluster: ci,
                    in_cluster,
                });
            }
        }
    }
    let threads_of = |s: &CoreSlot| clusters[s.cluster].threads;

    // Linux CPU numbers.
    let mut core_cpus: Vec<Vec<CpuId>> = vec![Vec::new(); slots.len()];
    let mut next: CpuId = 0;
    match topo.cpu_numbering {
        Numbering::ThreadsLast => {
            let max_threads = clusters.iter().map(|c| c.threads).max().unwrap_or(1);
            for t in 0..max_threads {
                for (k, s) in slots.iter().enumerate() {
                    if t < threads_of(s) {
                        core_cpus[k].push(next);
                        next += 1;
                    }
                }
            }
        }
        Numbering::ThreadsAdjacent => {
            for (k, s) in slots.iter().enumerate() {
                for _ in 0..threads_of(s) {
                    core_cpus[k].push(next);
                    next += 1;
                }
            }
        }
        Numbering::Explicit => {
            next = explicit_numbering(src, topo.packages, &clusters, &slots, &mut core_cpus)?;
        }
    }
    let nr_cpus = next;

    // Frequency domains, in order of their first core.
    let mut fd_index: HashMap<(usize, Option<usize>, Option<usize>), usize> = HashMap::new();
    let mut fd_of_core = Vec::with_capacity(slots.len());
    let mut freq_domains: Vec<FreqDomain> = Vec::new();
    for (k, s) in slots.iter().enumerate() {
        let cl = &clusters[s.cluster];
        let key = cl.freq.key(s.package, s.cluster, s.in_cluster);
        let fd = *fd_index.entry(key).or_insert_with(|| {
            freq_domains.push(FreqDomain {
                cpus: Vec::new(),
                cores: Vec::new(),
                package: s.package,
                voltage_domain: 0,
                cpu_type: cl.cpu_type,
            });
            freq_domains.len() - 1
        });
        if freq_domains[fd].cpu_type != cl.cpu_type {
            return Err(src.err(
                &cl.span,
                &format!("topology.cluster[{}]", cl.index),
                "freq_domain",
                "a frequency domain spans clusters of different cpu types; use \"cluster\" or narrower",
            ));
        }
        freq_domains[fd].cores.push(k);
        freq_domains[fd].cpus.extend_from_slice(&core_cpus[k]);
        fd_of_core.push(fd);
    }
    for fd in &mut freq_domains {
        fd.cpus.sort_unstable();
    }

    // Voltage domains: every frequency domain must sit inside one.
    let mut vd_index: HashMap<(usize, Option<usize>, Option<usize>), usize> = HashMap::new();
    let mut voltage_domains: Vec<VoltageDomain> = Vec::new();
    for fd in 0..freq_domains.len() {
        let mut key = None;
        for &k in &freq_domains[fd].cores {
            let s = &slots[k];
            let cl = &clusters[s.cluster];
            let this = cl.voltage.key(s.package, s.cluster, s.in_cluster);
            if key.is_some_and(|prev| prev != this) {
                return Err(src.err(
                    &cl.span,
                    &format!("topology.cluster[{}]", cl.index),
                    "voltage_domain",
                    format!(
                        "voltage domain \"{}\" splits frequency domain \"{}\": a voltage domain must hold whole frequency domains",
                        cl.voltage.name(),
                        cl.freq.name()
                    ),
                ));
            }
            key = Some(this);
        }
        let Some(key) = key else { continue };
        let slew = slews[freq_domains[fd].cpu_type];
        let vd = *vd_index.entry(key).or_insert_with(|| {
            voltage_domains.push(VoltageDomain {
                freq_domains: Vec::new(),
                slew_mv_per_us: slew,
            });
            voltage_domains.len() - 1
        });
        // A shared rail moves at the pace of its slowest regulator figure.
        let v = &mut voltage_domains[vd];
        v.slew_mv_per_us = v.slew_mv_per_us.min(slew);
        v.freq_domains.push(fd);
        freq_domains[fd].voltage_domain = vd;
    }

    // LLCs.
    let mut llc_index: HashMap<(usize, Option<usize>, Option<usize>), usize> = HashMap::new();
    let mut llcs: Vec<Vec<CpuId>> = Vec::new();
    let mut llc_of_core = Vec::with_capacity(slots.len());
    for (k, s) in slots.iter().enumerate() {
        let key = clusters[s.cluster]
            .llc
            .key(s.package, s.cluster, s.in_cluster);
        let l = *llc_index.entry(key).or_insert_with(|| {
            llcs.push(Vec::new());
            llcs.len() - 1
        });
        llcs[l].extend_from_slice(&core_cpus[k]);
        llc_of_core.push(l);
    }
    for l in &mut llcs {
        l.sort_unstable();
    }

    // Cores, CPUs and packages.
    let mut cpus: Vec<Option<Cpu>> = vec![None; nr_cpus];
    let mut cores = Vec::with_capacity(slots.len());
    let mut packages: Vec<Package> = (0..topo.packages)
        .map(|_| Package {
            cores: Vec::new(),
            uncore_mw,
        })
        .collect();
    for (k, s) in slots.iter().enumerate() {
        for &cpu in &core_cpus[k] {
            cpus[cpu] = Some(Cpu {
                core: k,
                package: s.package,
                llc: llc_of_core[k],
                freq_domain: fd_of_core[k],
                siblings: core_cpus[k].iter().copied().filter(|&c| c != cpu).collect(),
            });
        }
        packages[s.package].cores.push(k);
        cores.push(Core {
            cpus: core_cpus[k].clone(),
            package: s.package,
            cpu_type: clusters[s.cluster].cpu_type,
            freq_domain: fd_of_core[k],
        });
    }
    // Every id below nr_cpus was handed to exactly one core above.
    let cpus: Vec<Cpu> = cpus.into_iter().flatten().collect();
    debug_assert_eq!(cpus.len(), nr_cpus);

    if raw.device.is_empty() {
        return Err(src.missing("device", "at least one [[device]] is needed"));
    }
    let devices = raw
        .device
        .iter()
        .enumerate()
        .map(|(i, d)| device(src, i, d))
        .collect::<Result<Vec<_>>>()?;
    for (i, d) in devices.iter().enumerate() {
        if devices[..i].iter().any(|e| e.name == d.name) {
            return Err(src.err(
                &raw.device[i].span(),
                &format!("device[{i}]"),
                "name",
                format!("'{}' is defined twice", d.name),
            ));
        }
    }

    Ok(Platform {
        name,
        description: raw.description,
        driver,
        hwp: raw.hwp,
        acpi_pm_profile,
        hz,
        idle_tick: IdleTick::Governor,
        cpus,
        cores,
        packages,
        llcs,
        freq_domains,
        voltage_domains,
        cpu_types,
        devices,
    })
}

/// The `driver` key, with `global_pstate` (powernv only).
fn driver(src: &Source, raw: &RawPlatform) -> Result<Driver> {
    let name = raw.driver.get_ref().as_str();
    let driver = match name {
        "acpi-cpufreq" => Driver::AcpiCpufreq,
        "cpufreq-dt" => Driver::CpufreqDt,
        "intel_pstate" => Driver::IntelPstate { mode: None },
        "powernv" => Driver::Powernv {
            global_pstate: raw.global_pstate.as_ref().is_some_and(|g| *g.get_ref()),
        },
        _ => {
            return Err(src.err(
                &raw.driver.span(),
                "",
                "driver",
                format!("unknown driver '{name}'; valid: {}", DRIVERS.join(", ")),
            ))
        }
    };
    if let (Some(g), false) = (&raw.global_pstate, matches!(driver, Driver::Powernv { .. })) {
        return Err(src.err(
            &g.span(),
            "",
            "global_pstate",
            format!("only the powernv driver has global P-states; this platform's driver is {name}"),
        ));
    }
    Ok(driver)
}

/// intel_pstate names every frequency by its ratio: the table must hold one
/// operating point per 100 MHz step, from the lowest to the highest.
fn check_pstate_grid(src: &Source, i: usize, raw: &Spanned<RawCpuType>, t: &CpuType) -> Result<()> {
    let item = format!("cpu_type[{i}]");
    for (j, pair) in t.opps.windows(2).enumerate() {
        if pair[1].khz != pair[0].khz + INTEL_PSTATE_SCALING_KHZ {
            let o = &raw.get_ref().opps[j + 1];
            return Err(src.err(
                &o.span(),
                &format!("{item}.opps[{}]", j + 1),
                "khz",
                format!(
                    "{} kHz after {} kHz: the intel_pstate driver needs one operating point per 100 MHz P-state ratio",
                    pair[1].khz, pair[0].khz
                ),
            ));
        }
    }
    if t.opps[0].khz % INTEL_PSTATE_SCALING_KHZ != 0 {
        return Err(src.err(
            &raw.get_ref().opps[0].span(),
            &format!("{item}.opps[0]"),
            "khz",
            format!("{} kHz is not a whole 100 MHz P-state ratio (intel_pstate driver)", t.opps[0].khz),
        ));
    }
    Ok(())
}

/// Check a cluster and parse its domain widths.
fn cluster(
    src: &Source,
    i: usize,
    raw: &Spanned<RawCluster>,
    raw_types: &[Spanned<RawCpuType>],
    types: &[CpuType],
) -> Result<Cluster> {
    let span = raw.span();
    let c = raw.get_ref();
    let item = format!("topology.cluster[{i}]");
    let Some(cpu_type) = types.iter().position(|t| t.name == c.cpu_type) else {
        let names: Vec<&str> = types.iter().map(|t| t.name.as_str()).collect();
        return Err(src.err(
            &span,
            &item,
            "cpu_type",
            format!(
                "unknown cpu_type '{}'; defined: {}",
                c.cpu_type,
                names.join(", ")
            ),
        ));
    };
    if c.cores == 0 || c.cores > 1024 {
        return Err(src.err(
            &span,
            &item,
            "cores",
            format!("{} is not in 1..=1024", c.cores),
        ));
    }
    if c.threads_per_core == 0 || c.threads_per_core > MAX_THREADS_PER_CORE {
        return Err(src.err(
            &span,
            &item,
            "threads_per_core",
            format!(
                "{} is not in 1..={MAX_THREADS_PER_CORE}",
                c.threads_per_core
            ),
        ));
    }
    if c.threads_per_core > 1 {
        let t = raw_types[cpu_type].get_ref();
        for (key, v) in [
            ("smt_throughput", t.smt_throughput),
            ("smt_power", t.smt_power),
        ] {
            if v.is_none() {
                return Err(src.err(
                    &raw_types[cpu_type].span(),
                    &format!("cpu_type[{cpu_type}]"),
                    key,
                    format!("needed: {item} has {} threads per core", c.threads_per_core),
                ));
            }
        }
    }
    let width = |key: &str, text: &str, allow_groups: bool| -> Result<Width> {
        let w = match text {
            "core" => Some(Width::Core),
            "cluster" => Some(Width::Cluster),
            "package" => Some(Width::Package),
            _ if allow_groups => text
                .strip_prefix("cores:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1 && c.cores % n == 0)
                .map(Width::Cores),
            _ => None,
        };
        w.ok_or_else(|| {
            let valid = if allow_groups {
                "core, cluster, package or cores:N (N dividing the cluster's cores)"
            } else {
                "core, cluster or package"
            };
            src.err(&span, &item, key, format!("'{text}' is not {valid}"))
        })
    };
    let freq = width("freq_domain", &c.freq_domain, true)?;
    let voltage = width(
        "voltage_domain",
        c.voltage_domain.as_deref().unwrap_or(&c.freq_domain),
        true,
    )?;
    let llc = width("llc", &c.llc, false)?;
    Ok(Cluster {
        cpu_type,
        cores: c.cores,
        threads: c.threads_per_core,
        freq,
        voltage,
        llc,
        cpus: c.cpus.clone(),
        index: i,
        span,
    })
}

/// A package-wide domain joins all clusters of the package, so every cluster
/// must say `package` for it, or none.
fn check_package_widths(src: &Source, clusters: &[Cluster]) -> Result<()> {
    type Get = fn(&Cluster) -> Width;
    let checks: [(&str, Get); 3] = [
        ("freq_domain", |c| c.freq),
        ("voltage_domain", |c| c.voltage),
        ("llc", |c| c.llc),
    ];
    for (key, get) in checks {
        let wide = clusters.iter().filter(|c| get(c) == Width::Package).count();
        if wide > 0 && wide < clusters.len() {
            let c = clusters
                .iter()
                .find(|c| get(c) != Width::Package)
                .unwrap_or(&clusters[0]);
            return Err(src.err(
                &c.span,
                &format!("topology.cluster[{}]", c.index),
                key,
                "another cluster makes this domain package-wide, so every cluster of the package must say \"package\" too",
            ));
        }
    }
    Ok(())
}

/// `cpus` goes with `cpu_numbering = "explicit"`, and only with it.
fn check_cpus_key(src: &Source, numbering: Numbering, clusters: &[Cluster]) -> Result<()> {
    for c in clusters {
        let item = format!("topology.cluster[{}]", c.index);
        match (numbering, &c.cpus) {
            (Numbering::Explicit, None) => {
                return Err(src.err(
                    &c.span,
                    &item,
                    "cpus",
                    "missing: topology.cpu_numbering is \"explicit\", so every cluster lists its CPU ids (cpus = [0, 3, 4, 5])",
                ))
            }
            (Numbering::ThreadsLast | Numbering::ThreadsAdjacent, Some(_)) => {
                return Err(src.err(
                    &c.span,
                    &item,
                    "cpus",
                    "given, but topology.cpu_numbering is not \"explicit\"; set cpu_numbering = \"explicit\" or drop cpus",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Hand every core its CPU ids from its cluster's `cpus` list (core by core,
/// a core's threads adjacent, package by package). The ids of the whole
/// machine must be 0..n, each once. Returns n.
fn explicit_numbering(
    src: &Source,
    packages: usize,
    clusters: &[Cluster],
    slots: &[CoreSlot],
    core_cpus: &mut [Vec<CpuId>],
) -> Result<usize> {
    let nr_cpus: usize = packages * clusters.iter().map(|c| c.cores * c.threads).sum::<usize>();
    // Which cluster first named each id, for the duplicate error.
    let mut owner: Vec<Option<usize>> = vec![None; nr_cpus];
    for c in clusters {
        let item = format!("topology.cluster[{}]", c.index);
        let ids = c.cpus.as_deref().unwrap_or_default();
        let want = packages * c.cores * c.threads;
        if ids.len() != want {
            return Err(src.err(
                &c.span,
                &item,
                "cpus",
                format!(
                    "{} CPU ids for {} cores x {} threads x {} packages = {want} CPUs",
                    ids.len(),
                    c.cores,
                    c.threads,
                    packages
                ),
            ));
        }
        for &id in ids {
            if id >= nr_cpus {
                let listed: Vec<CpuId> = clusters.iter().flat_map(|c| c.cpus.iter().flatten().copied()).collect();
                let missing: Vec<String> = (0..nr_cpus)
                    .filter(|n| !listed.contains(n))
                    .map(|n| n.to_string())
                    .collect();
                return Err(src.err(
                    &c.span,
                    &item,
                    "cpus",
                    format!(
                        "CPU {id} is beyond the machine's {nr_cpus} CPUs (ids 0..={}); not listed by any cluster: {}",
                        nr_cpus - 1,
                        missing.join(", ")
                    ),
                ));
            }
            if let Some(first) = owner[id] {
                let where_ = if first == c.index {
                    "twice in this list".to_string()
                } else {
                    format!("already in topology.cluster[{first}]")
                };
                return Err(src.err(&c.span, &item, "cpus", format!("CPU {id} is listed {where_}")));
            }
            owner[id] = Some(c.index);
        }
    }
    // Every id is below nr_cpus and none repeats, and the lists hold
    // nr_cpus ids in all: so none is missing. Hand them out.
    debug_assert!(owner.iter().all(Option::is_some));
    let mut taken = vec![0usize; clusters.len()];
    for (k, s) in slots.iter().enumerate() {
        let c = &clusters[s.cluster];
        let ids = c.cpus.as_deref().unwrap_or_default();
        let at = taken[s.cluster];
        core_cpus[k].extend_from_slice(&ids[at..at + c.threads]);
        taken[s.cluster] = at + c.threads;
    }
    Ok(nr_cpus)
}

/// Check one cpu type; returns it with its voltage slew rate (mV/µs), which
/// the resolved platform keeps on the voltage domains.
fn cpu_type(src: &Source, i: usize, raw: &Spanned<RawCpuType>) -> Result<(CpuType, f64)> {
    let span = raw.span();
    let t = raw.get_ref();
    let item = format!("cpu_type[{i}]");
    let err = |key: &str, msg: String| src.err(&span, &item, key, msg);

    if t.name.trim().is_empty() {
        return Err(err("name", "must not be empty".into()));
    }
    if !(1..=1024).contains(&t.capacity) {
        return Err(err(
            "capacity",
            format!("{} is not in 1..=1024", t.capacity),
        ));
    }
    positive(&err, "voltage_slew_mv_per_us", t.voltage_slew_mv_per_us)?;
    positive(&err, "ceff_nf", t.ceff_nf)?;
    non_negative(&err, "leakage_mw_per_v", t.leakage_mw_per_v)?;
    let smt_throughput = t.smt_throughput.unwrap_or(1.0);
    if !(smt_throughput.is_finite()
        && (1.0..=MAX_THREADS_PER_CORE as f64).contains(&smt_throughput))
    {
        return Err(err(
            "smt_throughput",
            format!("{smt_throughput} is not in 1..={MAX_THREADS_PER_CORE} (a multiple of one thread's throughput)"),
        ));
    }
    let smt_power = t.smt_power.unwrap_or(1.0);
    if !(smt_power.is_finite() && smt_power >= 1.0) {
        return Err(err(
            "smt_power",
            format!("{smt_power} must be ≥ 1 (a multiple of one thread's power)"),
        ));
    }
    let transition_latency_ns = ns(&err, "transition_latency_us", t.transition_latency_us)?;

    // Operating points.
    if t.opps.is_empty() {
        return Err(err("opps", "at least one operating point is needed".into()));
    }
    let mut opps: Vec<Opp> = Vec::with_capacity(t.opps.len());
    for (j, o) in t.opps.iter().enumerate() {
        let ospan = o.span();
        let o = o.get_ref();
        let oitem = format!("{item}.opps[{j}]");
        let oerr = |key: &str, msg: String| src.err(&ospan, &oitem, key, msg);
        if o.khz == 0 {
            return Err(oerr("khz", "must be > 0".into()));
        }
        if o.mv == 0 {
            return Err(oerr("mv", "must be > 0".into()));
        }
        if let Some(prev) = opps.last() {
            if o.khz <= prev.khz {
                return Err(oerr(
                    "khz",
                    format!(
                        "{} is not above the previous OPP's {}: opps must be sorted by frequency, strictly increasing",
                        o.khz, prev.khz
                    ),
                ));
            }
            if o.mv < prev.mv {
                return Err(oerr(
                    "mv",
                    format!("{} is below the previous OPP's {}: voltage must not fall as frequency rises", o.mv, prev.mv),
                ));
            }
            if prev.turbo && !o.turbo {
                return Err(oerr(
                    "turbo",
                    "a non-turbo OPP above a turbo one: turbo OPPs must be the highest".into(),
                ));
            }
        }
        opps.push(Opp {
            khz: o.khz,
            mv: o.mv,
            turbo: o.turbo,
        });
    }
    let Some(base_khz) = opps.iter().rev().find(|o| !o.turbo).map(|o| o.khz) else {
        return Err(err(
            "opps",
            "at least one non-turbo OPP is needed (the base frequency)".into(),
        ));
    };

    // Turbo ceilings by active cores.
    let turbo: Vec<u32> = opps.iter().filter(|o| o.turbo).map(|o| o.khz).collect();
    if !t.turbo_max_khz.is_empty() && turbo.is_empty() {
        return Err(err(
            "turbo_max_khz",
            "given, but no OPP has turbo = true".into(),
        ));
    }
    for (j, &khz) in t.turbo_max_khz.iter().enumerate() {
        if !turbo.contains(&khz) {
            return Err(err(
                "turbo_max_khz",
                format!("entry {j} ({khz}) is not the khz of a turbo OPP"),
            ));
        }
        if j > 0 && khz > t.turbo_max_khz[j - 1] {
            return Err(err(
                "turbo_max_khz",
                format!("entry {j} ({khz}) is above entry {}: ceilings must not rise with more active cores", j - 1),
            ));
        }
    }

    // Idle states.
    if t.idle_state.is_empty() {
        return Err(err(
            "idle_state",
            "at least one [[cpu_type.idle_state]] is needed (state 0: the polling loop, or WFI on Arm)".into(),
        ));
    }
    let mut idle_states: Vec<IdleState> = Vec::with_capacity(t.idle_state.len());
    for (j, s) in t.idle_state.iter().enumerate() {
        let sspan = s.span();
        let s = s.get_ref();
        let sitem = format!("{item}.idle_state[{j}]");
        let serr = |key: &str, msg: String| src.err(&sspan, &sitem, key, msg);
        if s.name.trim().is_empty() {
            return Err(serr("name", "must not be empty".into()));
        }
        if idle_states.iter().any(|p| p.name == s.name) {
            return Err(serr("name", format!("'{}' is defined twice", s.name)));
        }
        if j > 0 && s.polling {
            return Err(serr("polling", "only state 0 may poll".into()));
        }
        if s.polling && s.power_gated {
            return Err(serr(
                "power_gated",
                "a polling state cannot be power-gated".into(),
            ));
        }
        non_negative(&serr, "power_mw", s.power_mw)?;
        let exit_latency_ns = ns(&serr, "exit_latency_us", s.exit_latency_us)?;
        let target_residency_ns = ns(&serr, "target_residency_us", s.target_residency_us)?;
        if s.exit_latency_us > s.target_residency_us {
            return Err(serr(
                "exit_latency_us",
                format!(
                    "{} exceeds target_residency_us {}: a state cannot pay off before it can be left",
                    s.exit_latency_us, s.target_residency_us
                ),
            ));
        }
        if let Some(prev) = idle_states.last() {
            if exit_latency_ns < prev.exit_latency_ns {
                return Err(serr(
                    "exit_latency_us",
                    format!(
                        "{} is below the shallower state's: exit latency must not fall with depth",
                        s.exit_latency_us
                    ),
                ));
            }
            if target_residency_ns < prev.target_residency_ns {
                return Err(serr(
                    "target_residency_us",
                    format!(
                        "{} is below the shallower state's: target residency must not fall with depth",
                        s.target_residency_us
                    ),
                ));
            }
        }
        idle_states.push(IdleState {
            name: s.name.clone(),
            desc: s.desc.clone().unwrap_or_else(|| s.name.clone()),
            exit_latency_ns,
            target_residency_ns,
            power_mw: s.power_mw,
            polling: s.polling,
            power_gated: s.power_gated,
            turbo_active: s.turbo_active,
        });
    }

    Ok((
        CpuType {
            name: t.name.clone(),
            capacity: t.capacity,
            opps,
            base_khz,
            turbo_max_khz: t.turbo_max_khz.clone(),
            transition_latency_ns,
            idle_states,
            ceff_nf: t.ceff_nf,
            leakage_mw_per_v: t.leakage_mw_per_v,
            smt_throughput,
            smt_power,
        },
        t.voltage_slew_mv_per_us,
    ))
}

fn device(src: &Source, i: usize, raw: &Spanned<RawDevice>) -> Result<Device> {
    let span = raw.span();
    let d = raw.get_ref();
    let item = format!("device[{i}]");
    let err = |key: &str, msg: String| src.err(&span, &item, key, msg);
    if d.name.trim().is_empty() {
        return Err(err("name", "must not be empty".into()));
    }
    if d.queue_depth == 0 {
        return Err(err("queue_depth", "must be ≥ 1".into()));
    }
    for (key, v) in [
        ("read_us", d.read_us),
        ("write_us", d.write_us),
        ("flush_us", d.flush_us),
    ] {
        if v == 0 {
            return Err(err(key, "must be > 0".into()));
        }
    }
    if d.block_kb == 0 || d.block_kb > 1 << 20 {
        return Err(err(
            "block_kb",
            format!("{} is not in 1..=1048576", d.block_kb),
        ));
    }
    positive(&err, "mb_per_s", d.mb_per_s)?;
    non_negative(&err, "service_cv", d.service_cv)?;
    Ok(Device {
        name: d.name.clone(),
        queue_depth: d.queue_depth,
        read_ns: ns(&err, "read_us", d.read_us)?,
        write_ns: ns(&err, "write_us", d.write_us)?,
        flush_ns: ns(&err, "flush_us", d.flush_us)?,
        flush_queued: d.flush_queued,
        block_bytes: d.block_kb * 1024,
        // 1 MB/s = 10^6 bytes per 10^6 µs = 1 byte/µs.
        bytes_per_us: d.mb_per_s,
        service_cv: d.service_cv,
    })
}

fn positive(err: &impl Fn(&str, String) -> Error, key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(err(key, format!("{v} must be > 0")))
    }
}

fn non_negative(err: &impl Fn(&str, String) -> Error, key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(err(key, format!("{v} must be ≥ 0")))
    }
}

/// A µs field in ns.
fn ns(err: &impl Fn(&str, String) -> Error, key: &str, us: u64) -> Result<u64> {
    if us > MAX_TIME_US {
        return Err(err(key, format!("{us} µs is more than {MAX_TIME_US} µs")));
    }
    Ok(us * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small, valid, two-cluster big.LITTLE platform; tests break it one
    /// key at a time.
    const MINI: &str = r#"
name = "mini"
description = "test board: 4 little + 2 big"
driver = "cpufreq-dt"
hz = 250

[topology]
packages = 1
cpu_numbering = "threads-adjacent"

[[topology.cluster]]
cpu_type = "little"
cores = 4
freq_domain = "cluster"
voltage_domain = "package"
llc = "cluster"

[[topology.cluster]]
cpu_type = "big"
cores = 2
freq_domain = "cluster"
voltage_domain = "package"
llc = "cluster"

[package]
uncore_mw = 100.0

[[cpu_type]]
name = "little"
capacity = 485
transition_latency_us = 300
voltage_slew_mv_per_us = 5.0
ceff_nf = 0.14
leakage_mw_per_v = 10.0
opps = [
  { khz = 450000, mv = 820 },
  { khz = 850000, mv = 1000 },
]

[[cpu_type.idle_state]]
name = "POLL"
exit_latency_us = 0
target_residency_us = 0
power_mw = 20.0
polling = true

[[cpu_type.idle_state]]
name = "cpu-sleep"
exit_latency_us = 1200
target_residency_us = 2000
power_mw = 0.0
power_gated = true

[[cpu_type]]
name = "big"
capacity = 1024
transition_latency_us = 300
voltage_slew_mv_per_us = 8.0
ceff_nf = 0.45
leakage_mw_per_v = 40.0
opps = [
  { khz = 450000, mv = 820 },
  { khz = 1100000, mv = 1000 },
  { khz = 1200000, mv = 1050, turbo = true },
]

[[cpu_type.idle_state]]
name = "POLL"
exit_latency_us = 0
target_residency_us = 0
power_mw = 50.0
polling = true

[[device]]
name = "emmc"
queue_depth = 1
read_us = 200
write_us = 500
flush_us = 5000
block_kb = 4
mb_per_s = 100
"#;

    fn mini() -> Result<Platform> {
        load_str(MINI, Path::new("mini.toml"))
    }

    /// MINI with the first occurrence of `from` replaced by `to`.
    fn broken(from: &str, to: &str) -> (String, Error) {
        assert!(MINI.contains(from), "test bug: {from:?} not in MINI");
        let text = MINI.replacen(from, to, 1);
        let e = load_str(&text, Path::new("mini.toml")).expect_err("the broken text must not load");
        (text, e)
    }

    /// 1-based line of the first line of `text` containing `needle`.
    fn line_with(text: &str, needle: &str) -> usize {
        let at = text.find(needle).expect("needle in text");
        line_of(text, at)
    }

    fn file_error(e: &Error) -> (Option<usize>, String) {
        match e {
            Error::File { line, message, .. } => (*line, message.clone()),
            other => panic!("expected Error::File, got {other:?}"),
        }
    }

    fn named(text: &str) -> Result<Platform> {
        load_named(&Spec::parse(text, "--platform")?)
    }

    /// Every index of a resolved platform points back consistently.
    fn check_consistent(p: &Platform) {
        for (id, cpu) in p.cpus.iter().enumerate() {
            let core = &p.cores[cpu.core];
            assert!(core.cpus.contains(&id), "cpu {id} not in its core");
            assert_eq!(cpu.package, core.package, "cpu {id} package");
            assert_eq!(cpu.freq_domain, core.freq_domain, "cpu {id} freq domain");
            assert!(p.freq_domains[cpu.freq_domain].cpus.contains(&id));
            assert!(p.llcs[cpu.llc].contains(&id));
            let mut sib: Vec<CpuId> = core.cpus.iter().copied().filter(|&c| c != id).collect();
            sib.sort_unstable();
            assert_eq!(cpu.siblings, sib, "cpu {id} siblings");
        }
        for (k, core) in p.cores.iter().enumerate() {
            assert!(!core.cpus.is_empty());
            assert!(p.packages[core.package].cores.contains(&k));
            assert!(p.freq_domains[core.freq_domain].cores.contains(&k));
            assert_eq!(p.freq_domains[core.freq_domain].cpu_type, core.cpu_type);
        }
        let mut seen = vec![0; p.cpus.len()];
        for (d, fd) in p.freq_domains.iter().enumerate() {
            assert!(
                fd.cpus.windows(2).all(|w| w[0] < w[1]),
                "fd {d} cpus sorted"
            );
            assert!(
                fd.cores.windows(2).all(|w| w[0] < w[1]),
                "fd {d} cores sorted"
            );
            let mut cpus: Vec<CpuId> = fd
                .cores
                .iter()
                .flat_map(|&k| p.cores[k].cpus.clone())
                .collect();
            cpus.sort_unstable();
            assert_eq!(cpus, fd.cpus, "fd {d} cpus = its cores' cpus");
            assert!(fd.cores.iter().all(|&k| p.cores[k].package == fd.package));
            assert!(p.voltage_domains[fd.voltage_domain]
                .freq_domains
                .contains(&d));
            for &c in &fd.cpus {
                seen[c] += 1;
            }
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "every CPU in exactly one freq domain"
        );
        for l in &p.llcs {
            assert!(l.windows(2).all(|w| w[0] < w[1]), "llc sorted");
        }
        assert_eq!(p.llcs.iter().map(Vec::len).sum::<usize>(), p.cpus.len());
        assert_eq!(
            p.voltage_domains
                .iter()
                .map(|v| v.freq_domains.len())
                .sum::<usize>(),
            p.freq_domains.len()
        );
    }

    // --- the shipped platforms ---------------------------------------------

    #[test]
    fn builtin_names() {
        assert_eq!(
            platform_names(),
            vec![
                "skylake-e3-1240v5",
                "broadwell-2s-e5-2698v4",
                "power8",
                "power9",
                "juno-r0",
                "juno-r2",
                "hikey960",
                "sd835"
            ]
        );
    }

    #[test]
    fn power8_resolves() {
        let p = named("power8").unwrap();
        assert_eq!(p.nr_cpus(), 160);
        assert_eq!(p.cpus[0].siblings, (1..8).collect::<Vec<_>>());
        assert_eq!(p.cpus[80].package, 1);
        assert_eq!(p.freq_domains.len(), 20);
        assert_eq!(p.freq_domains[1].cpus, (8..16).collect::<Vec<_>>());
        // One rail per chip, shared by its ten cores' clocks.
        assert_eq!(p.voltage_domains.len(), 2);
        assert_eq!(p.voltage_domains[0].freq_domains, (0..10).collect::<Vec<_>>());
        assert_eq!(p.driver, Driver::Powernv { global_pstate: true });
        assert_eq!(p.hz, 100);
        let t = p.cpu_type_of(0);
        assert_eq!((t.min_khz(), t.base_khz, t.max_khz()), (2_100_000, 3_500_000, 4_100_000));
        // pmin -> pmax waits for the rail: milliseconds.
        let slew_us = f64::from(t.opps[t.opps.len() - 1].mv - t.opps[0].mv) / p.voltage_domains[0].slew_mv_per_us;
        assert!((slew_us - 2000.0).abs() < 1.0, "{slew_us}");
        let names: Vec<&str> = t.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["snooze", "nap", "fastsleep_"]);
        check_consistent(&p);
        assert_eq!(named("power8:global_pstate=off").unwrap().driver, Driver::Powernv { global_pstate: false });
    }

    #[test]
    fn power9_resolves() {
        let p = named("power9").unwrap();
        assert_eq!(p.nr_cpus(), 160);
        assert_eq!(p.cpus[0].siblings, vec![1, 2, 3]);
        // Quads share a clock; the chip shares a rail.
        assert_eq!(p.freq_domains.len(), 10);
        assert_eq!(p.freq_domains[0].cpus, (0..16).collect::<Vec<_>>());
        assert_eq!(p.voltage_domains.len(), 2);
        assert_eq!(p.llcs.len(), 2);
        assert_eq!(p.driver, Driver::Powernv { global_pstate: false });
        let t = p.cpu_type_of(0);
        let states: Vec<(&str, u64, u64)> = t
            .idle_states
            .iter()
            .map(|s| (s.name.as_str(), s.exit_latency_ns / 1000, s.target_residency_ns / 1000))
            .collect();
        assert_eq!(
            states,
            [
                ("snooze", 0, 0),
                ("stop0_lite", 1, 10),
                ("stop0", 2, 20),
                ("stop1", 5, 50),
                ("stop2", 10, 100),
                ("stop4", 100, 10_000),
                ("stop5", 200, 20_000)
            ]
        );
        check_consistent(&p);
    }

    #[test]
    fn skylake_resolves() {
        let p = named("skylake-e3-1240v5").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        assert_eq!((p.cores.len(), p.packages.len()), (4, 1));
        assert_eq!(p.cpus[0].siblings, vec![4]);
        assert_eq!(p.cpus[4].siblings, vec![0]);
        assert_eq!(p.cpus[3].siblings, vec![7]);
        assert_eq!(p.freq_domains.len(), 1);
        assert_eq!(p.freq_domains[0].cpus, (0..8).collect::<Vec<_>>());
        assert_eq!(p.voltage_domains.len(), 1);
        assert_eq!(p.llcs.len(), 1);
        assert_eq!(
            (p.driver.name(), p.hwp, p.hz),
            ("intel_pstate", true, 250)
        );
        let t = p.cpu_type_of(0);
        assert_eq!(t.min_khz(), 800_000);
        assert_eq!(t.base_khz, 3_500_000);
        assert_eq!(t.max_khz(), 3_900_000);
        assert!(t.opps.len() <= 32);
        assert_eq!(t.turbo_limit_khz(1), 3_900_000);
        assert_eq!(t.turbo_limit_khz(4), 3_700_000);
        assert_eq!(t.transition_latency_ns, 20_000);
        let names: Vec<&str> = t.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C1", "C1E", "C3", "C6", "C7s", "C8"]);
        assert!(t.idle_states[0].polling);
        assert_eq!(t.idle_states[4].exit_latency_ns, 85_000);
        assert_eq!(t.idle_states[4].target_residency_ns, 200_000);
        let ssd = &p.devices[p.device_index("ssd").unwrap()];
        assert_eq!((ssd.read_ns, ssd.block_bytes), (100_000, 4096));
        assert!((ssd.bytes_per_us - 500.0).abs() < 1e-9);
        check_consistent(&p);
    }

    #[test]
    fn broadwell_resolves() {
        let p = named("broadwell-2s-e5-2698v4").unwrap();
        assert_eq!(p.nr_cpus(), 80);
        assert_eq!((p.cores.len(), p.packages.len()), (40, 2));
        assert_eq!(p.cpus[0].siblings, vec![40]);
        assert_eq!(p.cpus[20].siblings, vec![60]);
        assert_eq!(p.cpus[60].siblings, vec![20]);
        assert_eq!(p.cpus[19].package, 0);
        assert_eq!(p.cpus[20].package, 1);
        assert_eq!(p.cpus[40].package, 0);
        assert_eq!(p.cpus[79].package, 1);
        assert_eq!(p.freq_domains.len(), 40);
        assert_eq!(p.freq_domains[20].cpus, vec![20, 60]);
        assert_eq!(p.freq_domains[20].package, 1);
        assert_eq!(p.voltage_domains.len(), 40);
        assert_eq!(p.llcs.len(), 2);
        assert_eq!(p.llcs[1].len(), 40);
        assert_eq!(p.cpus[60].llc, 1);
        assert!(!p.hwp);
        let t = p.cpu_type_of(79);
        assert_eq!(t.min_khz(), 1_200_000);
        assert_eq!(t.base_khz, 2_200_000);
        assert_eq!(t.max_khz(), 3_600_000);
        assert_eq!(t.turbo_limit_khz(20), 2_700_000);
        let names: Vec<&str> = t.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C1", "C1E", "C6"]);
        check_consistent(&p);
    }

    /// Juno r0 as the board reported itself to LISA (plat_info.yml):
    /// numbering, capacities, OPPs, and the kernel Energy Model it read.
    #[test]
    fn juno_r0_resolves() {
        let p = named("juno-r0").unwrap();
        assert_eq!(p.nr_cpus(), 6);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 3, 4, 5]);
        assert_eq!(p.freq_domains[1].cpus, vec![1, 2]);
        let caps: Vec<u32> = (0..6).map(|c| p.cpu_type_of(c).capacity).collect();
        assert_eq!(caps, [446, 1024, 1024, 446, 446, 446]);
        assert_eq!(p.driver, Driver::CpufreqDt);
        // The kernel EM (integer mW) from ceff * V^2 * f.
        for (cpu, em_mw) in [(0, [42, 58, 79, 97, 119]), (1, [160, 239, 343, 454, 583])] {
            let t = p.cpu_type_of(cpu);
            let mw: Vec<u32> = t
                .opps
                .iter()
                .map(|o| crate::platform::energy::dynamic_mw(t, o.khz, o.mv, 1) as u32)
                .collect();
            assert_eq!(mw, em_mw, "cpu {cpu}");
        }
        let t = p.cpu_type_of(4);
        let states: Vec<(&str, bool, u64, u64)> = t
            .idle_states
            .iter()
            .map(|s| (s.name.as_str(), s.polling, s.exit_latency_ns / 1000, s.target_residency_ns / 1000))
            .collect();
        assert_eq!(
            states,
            [("WFI", false, 1, 1), ("cpu-sleep-0", false, 1500, 2000), ("cluster-sleep-0", false, 1600, 2500)]
        );
        check_consistent(&p);
    }

    #[test]
    fn juno_r2_resolves() {
        let p = named("juno-r2").unwrap();
        assert_eq!(p.freq_domains[0].cpus, vec![0, 3, 4, 5]);
        assert_eq!(p.cpu_type_of(0).capacity, 383);
        assert_eq!(p.cpu_type_of(1).capacity, 1024);
        // The maxima the trace's devlib markers report.
        assert_eq!((p.cpu_type_of(5).max_khz(), p.cpu_type_of(2).max_khz()), (950_000, 1_200_000));
        check_consistent(&p);
    }

    #[test]
    fn hikey960_resolves() {
        let p = named("hikey960").unwrap();
        assert_eq!(p.freq_domains[0].cpus, (0..4).collect::<Vec<_>>());
        assert_eq!(p.freq_domains[1].cpus, (4..8).collect::<Vec<_>>());
        assert_eq!((p.cpu_type_of(0).capacity, p.cpu_type_of(7).capacity), (462, 1024));
        assert_eq!(p.cpu_type_of(7).transition_latency_ns, 300_000);
        let em = crate::platform::energy::dynamic_mw(p.cpu_type_of(7), 2_362_000, 1100, 1);
        assert!((em - 1571.9).abs() < 0.1, "{em}");
        check_consistent(&p);
    }

    /// The systrace's frequencies are OPPs of the SD835 file, and its
    /// idle-state indices 0 and 2 exist.
    #[test]
    fn sd835_has_the_traced_frequencies() {
        let p = named("sd835").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        for (cpu, khz) in [(0, 300_000), (0, 518_400), (4, 300_000), (4, 345_600), (4, 422_400), (4, 499_200)] {
            assert!(p.cpu_type_of(cpu).opp_index(khz).is_some(), "cpu {cpu} {khz}");
        }
        assert_eq!(p.cpu_type_of(4).idle_states[2].name, "pc");
        check_consistent(&p);
    }

    #[test]
    fn big_little_two_clusters_resolve() {
        let p = mini().unwrap();
        assert_eq!(p.nr_cpus(), 6);
        assert_eq!(p.cpu_types.len(), 2);
        assert_eq!(p.cpu_type_of(0).name, "little");
        assert_eq!(p.cpu_type_of(4).name, "big");
        assert_eq!(p.freq_domains.len(), 2);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 1, 2, 3]);
        assert_eq!(p.freq_domains[1].cpus, vec![4, 5]);
        assert_eq!(p.cpus[5].freq_domain, 1);
        assert!(p.cpus.iter().all(|c| c.siblings.is_empty()));
        assert_eq!(p.llcs, vec![vec![0, 1, 2, 3], vec![4, 5]]);
        // One rail for both clusters, as slow as the slower regulator figure.
        assert_eq!(p.voltage_domains.len(), 1);
        assert_eq!(p.voltage_domains[0].freq_domains, vec![0, 1]);
        assert!((p.voltage_domains[0].slew_mv_per_us - 5.0).abs() < 1e-12);
        assert_eq!(p.domain_type(1).base_khz, 1_100_000);
        assert_eq!(p.domain_type(1).turbo_limit_khz(2), 1_200_000);
        // SMT defaults to no gain when the type has one thread per core.
        assert!((p.cpu_types[0].smt_throughput - 1.0).abs() < 1e-12);
        assert_eq!(p.cpu_types[0].idle_states[1].desc, "cpu-sleep");
        assert_eq!(p.devices[0].flush_ns, 5_000_000);
        check_consistent(&p);
    }

    #[test]
    fn threads_adjacent_keeps_a_cores_threads_together() {
        let text = MINI
            .replacen("cores = 4\n", "cores = 4\nthreads_per_core = 2\n", 1)
            .replacen(
                "leakage_mw_per_v = 10.0\n",
                "leakage_mw_per_v = 10.0\nsmt_throughput = 1.2\nsmt_power = 1.1\n",
                1,
            );
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert_eq!(p.nr_cpus(), 10);
        assert_eq!(p.cpus[0].siblings, vec![1]);
        assert_eq!(p.cpus[7].siblings, vec![6]);
        assert_eq!(p.cpus[8].siblings, Vec::<CpuId>::new());
        assert_eq!(p.cpu_type_of(8).name, "big");
        check_consistent(&p);
    }

    #[test]
    fn cores_n_groups_consecutive_cores() {
        let text = MINI.replacen(
            "freq_domain = \"cluster\"\nvoltage_domain = \"package\"",
            "freq_domain = \"cores:2\"\nvoltage_domain = \"package\"",
            1,
        );
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert_eq!(p.freq_domains.len(), 3);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 1]);
        assert_eq!(p.freq_domains[1].cpus, vec![2, 3]);
        check_consistent(&p);
    }

    /// MINI numbered as Juno is: the boot CPU 0 and CPUs 3-5 are LITTLE,
    /// 1 and 2 big.
    fn juno_numbered() -> String {
        MINI.replacen("cpu_numbering = \"threads-adjacent\"", "cpu_numbering = \"explicit\"", 1)
            .replacen("llc = \"cluster\"\n", "llc = \"cluster\"\ncpus = [0, 3, 4, 5]\n", 1)
            .replacen(
                "cores = 2\nfreq_domain = \"cluster\"\nvoltage_domain = \"package\"\nllc = \"cluster\"\n",
                "cores = 2\nfreq_domain = \"cluster\"\nvoltage_domain = \"package\"\nllc = \"cluster\"\ncpus = [1, 2]\n",
                1,
            )
    }

    #[test]
    fn explicit_numbering_follows_the_lists() {
        let text = juno_numbered();
        assert_eq!(text.matches("cpus = [").count(), 2, "test bug: {text}");
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert_eq!(p.nr_cpus(), 6);
        for cpu in [0, 3, 4, 5] {
            assert_eq!(p.cpu_type_of(cpu).name, "little", "cpu {cpu}");
        }
        for cpu in [1, 2] {
            assert_eq!(p.cpu_type_of(cpu).name, "big", "cpu {cpu}");
        }
        assert_eq!(p.freq_domains[0].cpus, vec![0, 3, 4, 5]);
        assert_eq!(p.freq_domains[1].cpus, vec![1, 2]);
        assert_eq!(p.llcs, vec![vec![0, 3, 4, 5], vec![1, 2]]);
        assert_eq!(p.cores[0].cpus, vec![0]);
        assert_eq!(p.cores[1].cpus, vec![3]);
        assert_eq!(p.cores[4].cpus, vec![1]);
        check_consistent(&p);
    }

    /// Break the Juno-numbered MINI: replace `from` with `to` once.
    fn broken_numbering(from: &str, to: &str) -> (String, Error) {
        let good = juno_numbered();
        assert!(good.contains(from), "test bug: {from:?} not in the text");
        let text = good.replacen(from, to, 1);
        let e = load_str(&text, Path::new("mini.toml")).expect_err("the broken text must not load");
        (text, e)
    }

    #[test]
    fn duplicate_cpu_id_names_both_clusters_and_the_line() {
        let (text, e) = broken_numbering("cpus = [1, 2]", "cpus = [1, 3]");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("topology.cluster[1].cpus"), "{msg}");
        assert!(msg.contains("CPU 3") && msg.contains("topology.cluster[0]"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpus = [1, 3]")));
        let (_, e) = broken_numbering("cpus = [0, 3, 4, 5]", "cpus = [0, 3, 3, 5]");
        assert!(file_error(&e).1.contains("twice in this list"), "{e}");
    }

    #[test]
    fn missing_cpu_id_is_named() {
        let (text, e) = broken_numbering("cpus = [1, 2]", "cpus = [1, 6]");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("topology.cluster[1].cpus") && msg.contains("CPU 6"), "{msg}");
        assert!(msg.contains("not listed by any cluster: 2"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpus = [1, 6]")));
    }

    #[test]
    fn cpu_count_must_match_cores_and_threads() {
        let (text, e) = broken_numbering("cpus = [0, 3, 4, 5]", "cpus = [0, 3, 4]");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("topology.cluster[0].cpus"), "{msg}");
        assert!(msg.contains("3 CPU ids for 4 cores x 1 threads x 1 packages = 4 CPUs"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpus = [0, 3, 4]")));
    }

    #[test]
    fn cpus_and_numbering_must_agree() {
        let (_, e) = broken_numbering("cpus = [1, 2]\n", "");
        let msg = file_error(&e).1;
        assert!(msg.contains("topology.cluster[1].cpus") && msg.contains("missing"), "{msg}");
        let (_, e) = broken_numbering("cpu_numbering = \"explicit\"", "cpu_numbering = \"threads-adjacent\"");
        let msg = file_error(&e).1;
        assert!(msg.contains("topology.cluster[0].cpus") && msg.contains("explicit"), "{msg}");
    }

    // --- errors ------------------------------------------------------------

    #[test]
    fn unsorted_opps_are_rejected_with_key_and_line() {
        let (text, e) = broken("{ khz = 850000, mv = 1000 }", "{ khz = 400000, mv = 1000 }");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("cpu_type[0].opps[1].khz"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "khz = 400000")));
    }

    #[test]
    fn falling_voltage_is_rejected() {
        let (_, e) = broken("{ khz = 850000, mv = 1000 }", "{ khz = 850000, mv = 800 }");
        assert!(file_error(&e).1.contains("cpu_type[0].opps[1].mv"), "{e}");
    }

    #[test]
    fn turbo_below_a_normal_opp_is_rejected() {
        let (_, e) = broken(
            "{ khz = 450000, mv = 820 },\n  { khz = 1100000",
            "{ khz = 450000, mv = 820, turbo = true },\n  { khz = 1100000",
        );
        assert!(
            file_error(&e).1.contains("cpu_type[1].opps[1].turbo"),
            "{e}"
        );
    }

    #[test]
    fn all_turbo_opps_are_rejected() {
        let (_, e) = broken("{ khz = 450000, mv = 820 },\n  { khz = 850000, mv = 1000 },", "{ khz = 450000, mv = 820, turbo = true },\n  { khz = 850000, mv = 1000, turbo = true },");
        assert!(file_error(&e).1.contains("non-turbo"), "{e}");
    }

    #[test]
    fn turbo_max_must_name_a_turbo_opp() {
        let (_, e) = broken(
            "ceff_nf = 0.45\n",
            "ceff_nf = 0.45\nturbo_max_khz = [1150000]\n",
        );
        let (line, msg) = file_error(&e);
        assert!(msg.contains("cpu_type[1].turbo_max_khz"), "{msg}");
        assert!(line.is_some());
        let (_, e) = broken(
            "ceff_nf = 0.45\n",
            "ceff_nf = 0.45\nturbo_max_khz = [1100000]\n",
        );
        assert!(file_error(&e).1.contains("turbo_max_khz"), "{e}");
    }

    /// Arm's state 0 is WFI: a real (non-polling) state with a latency.
    #[test]
    fn non_polling_state_zero_loads() {
        let text = MINI.replacen(
            "name = \"POLL\"\nexit_latency_us = 0\ntarget_residency_us = 0\npower_mw = 20.0\npolling = true",
            "name = \"WFI\"\nexit_latency_us = 1\ntarget_residency_us = 1\npower_mw = 20.0",
            1,
        );
        assert_ne!(text, MINI, "test bug: the POLL state was not replaced");
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        let wfi = &p.cpu_types[0].idle_states[0];
        assert_eq!((wfi.name.as_str(), wfi.polling, wfi.exit_latency_ns), ("WFI", false, 1000));
    }

    #[test]
    fn polling_deeper_state_is_rejected() {
        let (_, e) = broken(
            "power_mw = 0.0\npower_gated = true",
            "power_mw = 0.0\npolling = true",
        );
        assert!(file_error(&e).1.contains("only state 0 may poll"), "{e}");
    }

    #[test]
    fn exit_latency_above_residency_is_rejected() {
        let (_, e) = broken("exit_latency_us = 1200", "exit_latency_us = 2500");
        assert!(
            file_error(&e)
                .1
                .contains("cpu_type[0].idle_state[1].exit_latency_us"),
            "{e}"
        );
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let (text, e) = broken("ceff_nf = 0.14\n", "ceff_nf = 0.14\nceff_pf = 140\n");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("ceff_pf"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "ceff_pf")));
        assert!(
            e.to_string()
                .starts_with(&format!("mini.toml:{}:", line.unwrap())),
            "{e}"
        );
    }

    #[test]
    fn misspelt_key_in_inline_opp_is_rejected() {
        let (text, e) = broken("{ khz = 850000, mv = 1000 }", "{ khz = 850000, mV = 1000 }");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("mV"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "mV = 1000")));
    }

    #[test]
    fn wrong_type_names_the_key() {
        let (text, e) = broken("capacity = 485", "capacity = \"big\"");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("capacity"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "capacity = \"big\"")));
    }

    #[test]
    fn syntax_error_has_a_line() {
        let (text, e) = broken("[package]", "[package");
        let (line, _) = file_error(&e);
        assert_eq!(line, Some(line_with(&text, "[package")));
    }

    #[test]
    fn unknown_cpu_type_is_rejected() {
        let (text, e) = broken("cpu_type = \"big\"", "cpu_type = \"huge\"");
        let (line, msg) = file_error(&e);
        assert!(
            msg.contains("topology.cluster[1].cpu_type") && msg.contains("huge"),
            "{msg}"
        );
        assert!(msg.contains("little, big"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpu_type = \"huge\"")));
    }

    #[test]
    fn voltage_domain_must_hold_whole_freq_domains() {
        let (_, e) = broken("voltage_domain = \"package\"\nllc = \"cluster\"\n\n[[topology.cluster]]\ncpu_type = \"big\"\ncores = 2\nfreq_domain = \"cluster\"\nvoltage_domain = \"package\"", "voltage_domain = \"core\"\nllc = \"cluster\"\n\n[[topology.cluster]]\ncpu_type = \"big\"\ncores = 2\nfreq_domain = \"cluster\"\nvoltage_domain = \"core\"");
        assert!(file_error(&e).1.contains("voltage_domain"), "{e}");
    }

    #[test]
    fn package_freq_domain_across_types_is_rejected() {
        let text = MINI.replace("freq_domain = \"cluster\"", "freq_domain = \"package\"");
        let e = load_str(&text, Path::new("mini.toml")).unwrap_err();
        assert!(file_error(&e).1.contains("freq_domain"), "{e}");
    }

    #[test]
    fn bad_values_are_rejected() {
        for (from, to, key) in [
            ("capacity = 1024", "capacity = 2000", "capacity"),
            ("voltage_slew_mv_per_us = 5.0", "voltage_slew_mv_per_us = 0.0", "voltage_slew_mv_per_us"),
            ("ceff_nf = 0.14", "ceff_nf = -1.0", "ceff_nf"),
            ("hz = 250", "hz = 200", "hz"),
            ("driver = \"cpufreq-dt\"", "driver = \"cpufreq-magic\"", "driver"),
            ("queue_depth = 1", "queue_depth = 0", "device[0].queue_depth"),
            ("uncore_mw = 100.0", "uncore_mw = -5.0", "package.uncore_mw"),
            ("freq_domain = \"cluster\"", "freq_domain = \"cores:3\"", "freq_domain"),
            ("cpu_numbering = \"threads-adjacent\"", "cpu_numbering = \"sideways\"", "sideways"),
            ("[[device]]\nname = \"emmc\"\nqueue_depth = 1\nread_us = 200\nwrite_us = 500\nflush_us = 5000\nblock_kb = 4\nmb_per_s = 100\n", "", "device"),
        ] {
            let (_, e) = broken(from, to);
            assert!(e.to_string().contains(key), "{from} -> {to}: {e}");
        }
    }

    #[test]
    fn smt_without_smt_figures_is_rejected() {
        let (_, e) = broken("cores = 4\n", "cores = 4\nthreads_per_core = 2\n");
        assert!(file_error(&e).1.contains("smt_throughput"), "{e}");
    }

    #[test]
    fn unknown_platform_lists_choices() {
        let e = named("skylake").unwrap_err().to_string();
        assert!(
            e.contains("unknown platform 'skylake'") && e.contains("broadwell-2s-e5-2698v4"),
            "{e}"
        );
    }

    #[test]
    fn missing_file_is_io_error() {
        let e = named("/nonexistent/dir/board.toml").unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e:?}");
    }

    // --- overrides ---------------------------------------------------------

    #[test]
    fn turbo_off_drops_turbo_opps() {
        let p = named("skylake-e3-1240v5:turbo=off").unwrap();
        let t = p.cpu_type_of(0);
        assert!(t.opps.iter().all(|o| !o.turbo));
        assert_eq!(t.max_khz(), 3_500_000);
        assert_eq!(t.base_khz, 3_500_000);
        assert!(t.turbo_max_khz.is_empty());
        assert_eq!(t.turbo_limit_khz(1), 3_500_000);
    }

    #[test]
    fn smt_off_keeps_one_thread_per_core() {
        let p = named("skylake-e3-1240v5:smt=off").unwrap();
        assert_eq!(p.nr_cpus(), 4);
        assert!(p.cpus.iter().all(|c| c.siblings.is_empty()));
        assert_eq!(p.freq_domains[0].cpus, vec![0, 1, 2, 3]);
        check_consistent(&p);

        let p = named("broadwell-2s-e5-2698v4:smt=off").unwrap();
        assert_eq!(p.nr_cpus(), 40);
        assert!(p.cpus.iter().all(|c| c.siblings.is_empty()));
        assert_eq!(p.cpus[20].package, 1);
        assert_eq!(p.freq_domains[20].cpus, vec![20]);
        assert_eq!(p.llcs[1], (20..40).collect::<Vec<_>>());
        check_consistent(&p);
    }

    #[test]
    fn hwp_on_without_hwp_is_unsupported() {
        let e = named("broadwell-2s-e5-2698v4:hwp=on").unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported(m) if m.contains("broadwell-2s-e5-2698v4")),
            "{e:?}"
        );
        let p = named("skylake-e3-1240v5:hwp=off").unwrap();
        assert!(!p.hwp);
    }

    #[test]
    fn hz_override() {
        assert_eq!(named("skylake-e3-1240v5:hz=1000").unwrap().hz, 1000);
        let e = named("skylake-e3-1240v5:hz=500").unwrap_err();
        assert!(matches!(e, Error::InvalidValue { .. }), "{e:?}");
        let e = named("skylake-e3-1240v5:turbo=maybe")
            .unwrap_err()
            .to_string();
        assert!(e.contains("turbo") && e.contains("on/off"), "{e}");
    }

    #[test]
    fn unknown_override_key_lists_valid_keys() {
        let e = named("skylake-e3-1240v5:turob=off").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::UnknownKey { .. }), "{e:?}");
        for key in ["turob", "hz", "turbo", "hwp", "smt"] {
            assert!(msg.contains(key), "{msg}");
        }
    }

    #[test]
    fn overrides_apply_directly() {
        let mut p = mini().unwrap();
        let o = PlatformOverrides {
            smt: Some(true),
            ..PlatformOverrides::default()
        };
        assert!(matches!(o.apply(&mut p), Err(Error::Unsupported(_))));
        let o = PlatformOverrides {
            turbo: Some(false),
            ..PlatformOverrides::default()
        };
        o.apply(&mut p).unwrap();
        assert_eq!(p.cpu_types[1].max_khz(), 1_100_000);
        assert_eq!(p.cpu_types[0].max_khz(), 850_000);
    }

    // --- the cpufreq driver --------------------------------------------------

    #[test]
    fn intel_pstate_mode_override() {
        let p = named("broadwell-2s-e5-2698v4:intel_pstate=passive").unwrap();
        assert_eq!(p.driver, Driver::IntelPstate { mode: Some(PstateMode::Passive) });
        let p = named("skylake-e3-1240v5").unwrap();
        assert_eq!(p.driver, Driver::IntelPstate { mode: None });
        let e = named("skylake-e3-1240v5:intel_pstate=sometimes").unwrap_err().to_string();
        assert!(e.contains("intel_pstate") && e.contains("active or passive"), "{e}");
        let mut m = mini().unwrap();
        let o = PlatformOverrides { intel_pstate: Some(PstateMode::Active), ..PlatformOverrides::default() };
        let e = o.apply(&mut m).unwrap_err().to_string();
        assert!(e.contains("cpufreq-dt") && e.contains("intel_pstate=active"), "{e}");
    }

    #[test]
    fn global_pstate_belongs_to_powernv() {
        let e = named("skylake-e3-1240v5:global_pstate=off").unwrap_err();
        assert!(matches!(&e, Error::Unsupported(m) if m.contains("powernv") && m.contains("intel_pstate")), "{e:?}");
        let (text, e) = broken("hz = 250\n", "hz = 250\nglobal_pstate = true\n");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("global_pstate") && msg.contains("cpufreq-dt"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "global_pstate")));
    }

    /// intel_pstate names frequencies by 100 MHz ratios: a table with a gap
    /// or an off-grid frequency is refused at its line.
    #[test]
    fn intel_pstate_needs_one_opp_per_ratio() {
        let (text, e) = broken("driver = \"cpufreq-dt\"", "driver = \"intel_pstate\"");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("cpu_type[0].opps[1].khz") && msg.contains("100 MHz"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "khz = 850000")));
    }

    #[test]
    fn acpi_pm_profile_is_checked() {
        let p = named("skylake-e3-1240v5").unwrap();
        assert!(p.acpi_pm_profile.is_server());
        assert_eq!(mini().unwrap().acpi_pm_profile, AcpiPmProfile::Unspecified);
        let (_, e) = broken("hz = 250\n", "hz = 250\nacpi_pm_profile = \"server\"\n");
        let msg = file_error(&e).1;
        assert!(msg.contains("acpi_pm_profile") && msg.contains("enterprise-server"), "{msg}");
    }
}

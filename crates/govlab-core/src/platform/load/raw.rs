//! The platform file as written: serde structs that mirror the TOML one to
//! one. Field names are the TOML keys; unknown keys are rejected (a
//! misspelt key fails instead of being ignored), and tables keep their byte
//! span so later errors can name a line.

use serde::Deserialize;
use toml::Spanned;

use crate::platform::CpuId;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlatform {
    pub(super) name: Spanned<String>,
    pub(super) description: String,
    pub(super) driver: Spanned<String>,
    /// Required with driver intel_pstate (whether the CPUs have HWP);
    /// optional elsewhere, where it must be false.
    #[serde(default)]
    pub(super) hwp: Option<Spanned<bool>>,
    /// powernv only: the global P-state ramp-down (default off).
    #[serde(default)]
    pub(super) global_pstate: Option<Spanned<bool>>,
    /// acpi-cpufreq only: the `_PSD` coordination type, "hw" (default),
    /// "sw_all" or "sw_any".
    #[serde(default)]
    pub(super) psd_coordination: Option<Spanned<String>>,
    /// x86: the ACPI FADT preferred PM profile (default "unspecified").
    #[serde(default)]
    pub(super) acpi_pm_profile: Option<Spanned<String>>,
    /// The kernel's own wakeups of an idle CPU on this kind of machine
    /// (default "server"; see `HousekeepingProfile`).
    #[serde(default)]
    pub(super) housekeeping: Option<Spanned<String>>,
    /// The first kernel version that runs this machine's drivers
    /// (`"5.6"`), with `min_kernel_why` saying which and why.
    #[serde(default)]
    pub(super) min_kernel: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) min_kernel_why: Option<String>,
    pub(super) hz: Spanned<u32>,
    pub(super) topology: Spanned<RawTopology>,
    pub(super) package: Spanned<RawPackage>,
    pub(super) cpu_type: Vec<Spanned<RawCpuType>>,
    #[serde(default)]
    pub(super) device: Vec<Spanned<RawDevice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTopology {
    pub(super) packages: usize,
    pub(super) cpu_numbering: Numbering,
    pub(super) cluster: Vec<Spanned<RawCluster>>,
}

/// How Linux numbers the threads of the machine's cores.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Numbering {
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
pub(super) struct RawCluster {
    pub(super) cpu_type: String,
    pub(super) cores: usize,
    #[serde(default = "one")]
    pub(super) threads_per_core: usize,
    pub(super) freq_domain: String,
    /// Defaults to the frequency domain.
    #[serde(default)]
    pub(super) voltage_domain: Option<String>,
    pub(super) llc: String,
    /// With `cpu_numbering = "explicit"`: the Linux CPU ids of the
    /// cluster's threads, core by core (a core's threads adjacent), package
    /// by package.
    #[serde(default)]
    pub(super) cpus: Option<Vec<CpuId>>,
}

fn one() -> usize {
    1
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPackage {
    pub(super) uncore_mw: f64,
    #[serde(default)]
    pub(super) uncore: Option<RawUncore>,
    #[serde(default)]
    pub(super) dram: Option<RawDram>,
    #[serde(default)]
    pub(super) cstate: Vec<RawPackageCState>,
    #[serde(default)]
    pub(super) power_limit: Option<Spanned<RawPowerLimit>>,
    /// The energy counters the part has (RAPL domains, POWER's OCC sensors).
    #[serde(default)]
    pub(super) power_domains: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUncore {
    pub(super) min_khz: u32,
    pub(super) max_khz: u32,
    pub(super) min_mv: u32,
    pub(super) max_mv: u32,
    pub(super) ceff_nf: f64,
    /// `ufs` or `follow-cores`.
    pub(super) policy: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDram {
    pub(super) idle_mw: f64,
    pub(super) self_refresh_mw: f64,
    pub(super) active_mw_per_core: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPowerLimit {
    pub(super) limit_mw: f64,
    pub(super) window_us: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPackageCState {
    pub(super) name: String,
    pub(super) core_state: String,
    pub(super) exit_latency_us: u64,
    pub(super) power_mw: f64,
    #[serde(default)]
    pub(super) dram_self_refresh: bool,
    #[serde(default)]
    pub(super) coordinated: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCpuType {
    pub(super) name: String,
    pub(super) capacity: u32,
    pub(super) transition_latency_us: u64,
    pub(super) voltage_slew_mv_per_us: f64,
    pub(super) ceff_nf: f64,
    pub(super) leakage_mw_per_v: f64,
    /// The device tree's `dynamic-power-coefficient` (µW/MHz/V²), from
    /// which the kernel builds the Energy Model; absent: no Energy Model.
    #[serde(default)]
    pub(super) dynamic_power_coefficient: Option<u32>,
    /// Required when a cluster of this type has more than one thread per core.
    #[serde(default)]
    pub(super) smt_throughput: Option<f64>,
    #[serde(default)]
    pub(super) smt_power: Option<f64>,
    /// Required when an OPP has turbo = true (the ceilings by active
    /// cores; one entry when the count does not matter); absent otherwise.
    #[serde(default)]
    pub(super) turbo_max_khz: Option<Vec<u32>>,
    /// The firmware's CPPC levels (AMD Zen: `_CPC`, MSR_AMD_CPPC_CAP1).
    #[serde(default)]
    pub(super) cppc: Option<Spanned<RawCppc>>,
    /// kHz per HWP performance level; absent: one P-state ratio (100 MHz).
    #[serde(default)]
    pub(super) hwp_perf_khz: Option<u32>,
    pub(super) opps: Vec<Spanned<RawOpp>>,
    pub(super) idle_state: Vec<Spanned<RawIdleState>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCppc {
    pub(super) highest_perf: u32,
    pub(super) nominal_perf: u32,
    pub(super) lowest_nonlinear_perf: u32,
    pub(super) lowest_perf: u32,
    /// `_CPC` NominalFrequency, MHz.
    pub(super) nominal_mhz: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOpp {
    pub(super) khz: u32,
    pub(super) mv: u32,
    #[serde(default)]
    pub(super) turbo: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIdleState {
    pub(super) name: String,
    /// Defaults to the name.
    #[serde(default)]
    pub(super) desc: Option<String>,
    pub(super) exit_latency_us: u64,
    /// A measured wake with the package in PC0; absent: `exit_latency_us`.
    #[serde(default)]
    pub(super) wake_latency_us: Option<u64>,
    pub(super) target_residency_us: u64,
    pub(super) power_mw: f64,
    #[serde(default)]
    pub(super) polling: bool,
    #[serde(default)]
    pub(super) power_gated: bool,
    #[serde(default)]
    pub(super) entry_exit_uj: f64,
    #[serde(default)]
    pub(super) turbo_active: bool,
    /// Defaults to true: the BIOS's ACPI _CST lists the state.
    #[serde(default = "yes")]
    pub(super) in_acpi_cst: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDevice {
    pub(super) name: String,
    pub(super) queue_depth: u32,
    pub(super) read_us: u64,
    pub(super) write_us: u64,
    pub(super) flush_us: u64,
    #[serde(default)]
    pub(super) flush_queued: bool,
    pub(super) block_kb: u64,
    pub(super) mb_per_s: f64,
    /// Write transfer rate; absent: `mb_per_s`.
    #[serde(default)]
    pub(super) write_mb_per_s: Option<f64>,
    #[serde(default)]
    pub(super) service_cv: f64,
    /// The CPU the completion interrupt is routed to; absent: the
    /// submitting CPU (a completion queue per CPU).
    #[serde(default)]
    pub(super) irq_cpu: Option<usize>,
    /// How a REQ_FUA write reaches the drive; absent: `none`.
    #[serde(default)]
    pub(super) fua: RawFua,
}

/// A device's `fua` key (platform::Fua).
#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawFua {
    #[default]
    None,
    Libata,
    Native,
}

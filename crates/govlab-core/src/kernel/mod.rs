//! The kernel configuration: which mainline Linux version a run models, and
//! every behaviour that depends on it.
//!
//! A run names a kernel as `VERSION[:option=value,...]` (`--kernel 4.16`,
//! `kernel = "5.4:idle_tick=governor"`). The hardware description
//! ([`crate::platform`]) says what the machine is; this says what the kernel
//! running on it does. Each era-dependent behaviour is one entry of [`ERAS`]:
//! the version it first appears in, the commit that changed it, and what
//! changed. [`KernelConfig`] answers the era questions the engine asks
//! (`idle_tick`, `pelt_scales_contributions`, `remote_callbacks`, ...).
//!
//! Versions: govlab models the mainline releases in [`SUPPORTED`]. A version
//! in between resolves to the newest supported one not after it (`5.4` runs
//! 5.2 semantics, and the run says so); a version before the oldest or after
//! the newest ([`NEWEST_VERSION`]) is refused. The default is
//! [`DEFAULT_VERSION`], 6.8. From v6.6 the fair class is EEVDF
//! (machine/eevdf.rs); 6.5, the last CFS, runs the class from before it.
//!
//! Options:
//! - `idle_tick = governor|stopped`: who stops the tick on idle entry.
//!   Default by version: `stopped` before v4.17, `governor` from v4.17.
//! - `hz = 100|250|300|1000`: `CONFIG_HZ`. Default: the platform file's `hz`
//!   (a distribution's choice, not a kernel fact; each platform file says
//!   where its value comes from).
//! - `freq_invariance = off|base|max|1c|2c|...`: what utilisation is scaled
//!   by (see [`FreqInvariance`]). Default by version and architecture.
//! - `housekeeping = on|off`: the per-CPU kernel work that wakes idle CPUs
//!   (timer softirqs, RCU, vmstat, kworkers; machine/housekeeping.rs).
//!   Default on; `off` gives a silent machine (tests of something else).
//! - `rcu_tick = on|off`: a CPU with RCU callbacks queued keeps its tick
//!   (rcu_needs_cpu(); machine/rcu.rs). Default on, as every kernel
//!   without RCU_FAST_NO_HZ or offloaded callbacks does; `off` lets the
//!   tick stop regardless (diagnostics).
//! - `kpath = on|off`: the kernel's own C0 time per wakeup, context switch
//!   and idle cycle (machine/kpath.rs). Default off: its cycle counts were
//!   measured on this project's KVM guest (a 2020s AMD part, Linux 6.18,
//!   retpolines and Safe RET), not on the modelled machines, and the idle
//!   cycle's is assumed; `on` charges them. The evaluations of Intel
//!   kernels from v4.15 turn it on: there the guest's kernel entry costs
//!   what page-table isolation made those parts' cost
//!   (tools/calibrate/syscall/).
//! - `sched_energy_aware = on|off`: the sysctl of the same name; `off`
//!   keeps Energy-Aware Scheduling from running (machine/eas.rs). Default
//!   on from v5.0; refused before it.
//! - `lisa_module = on|off`: LISA's kernel module is loaded, so a run's
//!   trace carries the events it makes of the scheduler's bare tracepoints
//!   (machine/lisa_events.rs). Default off; refused before v5.3.

use std::fmt;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::params::{Params, Spec};
use crate::platform::{CpuType, Driver, IdleState, Platform};

mod ctx;
mod eas;
mod era;
pub use ctx::BuildCtx;
pub use era::{Era, EraId, EraStatus, ERAS};

pub use crate::platform::IdleTick;

/// A mainline release, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    #[must_use]
    pub const fn new(major: u32, minor: u32) -> Self {
        Version { major, minor }
    }

    /// `5.4`, `v5.4`, `5.4.0` (a stable patch level is ignored); None for
    /// anything else.
    #[must_use]
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let mut parts = t.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        match parts.next() {
            None => {}
            Some(p) if p.parse::<u32>().is_ok() => {}
            Some(_) => return None,
        }
        if parts.next().is_some() {
            return None;
        }
        Some(Version { major, minor })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The versions govlab models, oldest first: the kernels of the evaluations
/// it reproduces (3.15 ondemand 2014, 4.8 powernv 2016, 4.16 HWP boost 2018,
/// 5.7 teo 2020), the era boundaries around them, the last CFS (6.5), the
/// LTS kernels people run (6.6, the first EEVDF; 6.12), 6.9 (the 2 ms
/// default transition delay, gone again in 6.12) and the newest
/// stable release whose sources govlab's authors could read (6.18, also
/// an LTS).
pub const SUPPORTED: [Version; 13] = [
    Version::new(3, 15),
    Version::new(4, 8),
    Version::new(4, 16),
    Version::new(4, 19),
    Version::new(5, 2),
    Version::new(5, 7),
    Version::new(5, 9),
    Version::new(6, 5),
    Version::new(6, 6),
    Version::new(6, 8),
    Version::new(6, 9),
    Version::new(6, 12),
    Version::new(6, 18),
];

/// The version of a run that names none. Kept at 6.8, which every
/// evaluation and regression case since 2024 was written against; newer
/// versions are one `--kernel` away (docs/kernels.md, "Versions").
pub const DEFAULT_VERSION: Version = Version::new(6, 8);

/// The newest version modelled; a later one is refused.
pub const NEWEST_VERSION: Version = SUPPORTED[SUPPORTED.len() - 1];

/// The kernel options and the values they take, for messages and `list`.
pub const OPTIONS: [(&str, &str); 8] = [
    ("idle_tick", "governor or stopped (default: stopped before 4.17, governor from 4.17)"),
    ("hz", "100, 250, 300 or 1000 (default: the platform file's hz)"),
    (
        "freq_invariance",
        "off, base, max, cppc_midpoint or Nc for N from 1 to 64 (default: by version and architecture)",
    ),
    ("housekeeping", "on or off (default on: per-CPU kernel work wakes idle CPUs; off: a silent machine)"),
    ("rcu_tick", "on or off (default on: a CPU with RCU callbacks queued keeps its tick; off: they never hold it)"),
    ("kpath", "on or off (default off; on: wakeups, context switches and idle cycles take the kernel's C0 time, cycle counts measured on a KVM guest)"),
    ("sched_energy_aware", "on or off (default on from 5.0: Energy-Aware Scheduling where the platform has an Energy Model and schedutil runs)"),
    ("lisa_module", "on or off (default off; from 5.3: LISA's module turns the PELT and util_est tracepoints into trace events)"),
];

/// `CONFIG_HZ` values Kconfig offers (`kernel/Kconfig.hz`).
const HZ_VALUES: [u32; 4] = [100, 250, 300, 1000];

/// A patch that a governor tunable models: on a version that lacks it, the
/// tunable (set to `value`) means "this version plus that patch"; on a
/// version that has it (merged), it is mainline and its default. Each
/// governor lists its own (`GovernorInfo::patches`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Patch {
    /// The tunable that switches it.
    pub tunable: &'static str,
    /// The value that applies the patch (`on`, `off`, ...).
    pub value: &'static str,
    /// The era whose first version merged it; None: never merged.
    pub merged_in: Option<EraId>,
    /// The patch or series, as posted.
    pub subject: &'static str,
}

/// What utilisation is scaled by (`arch_scale_freq_capacity`): the
/// reference the current frequency is divided by.
///
/// The engine's PELT reads `cur / reference × 1024` (capped at 1024) at
/// every update; schedutil reads whether there is any (its non-invariant
/// formula scales from `policy->cur`). On Arm the scale follows the
/// current frequency at once; on x86 it is each CPU's APERF/MPERF average
/// over its last tick (`arch_scale_freq_tick`,
/// [`KernelConfig::freq_scale_on_tick`], machine/dvfs.rs `TickScale`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FreqInvariance {
    /// No frequency invariance: `arch_scale_freq_capacity()` is 1024, and
    /// schedutil scales from `policy->cur` (x86 before v5.7, powerpc).
    Off,
    /// The base (non-turbo) frequency is 1024.
    Base,
    /// The top operating point (`cpuinfo.max_freq`) is 1024: Arm's
    /// cpufreq-driven `arch_set_freq_scale`, and the 1-core turbo on x86.
    Max,
    /// The n-core turbo ratio of the platform's turbo table is 1024 (x86
    /// from v5.7: 4 cores, capped at 1024 above it).
    Turbo(u32),
    /// AMD from v5.11: the midpoint of the CPPC highest/nominal ratio and
    /// 1, times the nominal frequency
    /// ([`Cppc::invariance_reference_khz`](crate::platform::cppc::Cppc::invariance_reference_khz)).
    CppcMidpoint,
}

impl fmt::Display for FreqInvariance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FreqInvariance::Off => f.write_str("off"),
            FreqInvariance::Base => f.write_str("base"),
            FreqInvariance::Max => f.write_str("max"),
            FreqInvariance::Turbo(n) => write!(f, "{n}c"),
            FreqInvariance::CppcMidpoint => f.write_str("cppc_midpoint"),
        }
    }
}

impl FreqInvariance {
    /// The frequency that reads as 1024 on a CPU of type `ct`, kHz; 0 for
    /// [`FreqInvariance::Off`]. An n-core ratio beyond the turbo table
    /// takes its last entry; a part without turbo, its top frequency.
    #[must_use]
    pub fn reference_khz(self, ct: &CpuType) -> u32 {
        match self {
            FreqInvariance::Off => 0,
            FreqInvariance::Base => ct.base_khz,
            FreqInvariance::Max => ct.max_khz(),
            FreqInvariance::Turbo(n) => ct.turbo_limit_khz(n as usize).min(ct.max_khz()),
            FreqInvariance::CppcMidpoint => ct.cppc.map_or(ct.max_khz(), |c| c.invariance_reference_khz().min(ct.max_khz())),
        }
    }

    fn parse(text: &str) -> Option<FreqInvariance> {
        match text {
            "off" => Some(FreqInvariance::Off),
            "base" => Some(FreqInvariance::Base),
            "max" => Some(FreqInvariance::Max),
            "cppc_midpoint" => Some(FreqInvariance::CppcMidpoint),
            t => {
                let n: u32 = t.strip_suffix('c')?.parse().ok()?;
                (1..=64).contains(&n).then_some(FreqInvariance::Turbo(n))
            }
        }
    }
}

/// The CPU architecture whose topology code sets frequency invariance,
/// told from the platform's cpufreq driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arch {
    X86,
    PowerPc,
    Arm,
}

fn arch_of(plat: &Platform) -> Arch {
    match plat.driver {
        Driver::IntelPstate { .. } | Driver::AcpiCpufreq => Arch::X86,
        Driver::Powernv { .. } => Arch::PowerPc,
        Driver::CpufreqDt => Arch::Arm,
    }
}

/// The kernel a run models: a supported version and the options on top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelConfig {
    /// The version as asked (`5.4`).
    pub requested: Version,
    /// The supported version whose semantics run (`5.2` for `5.4`).
    pub version: Version,
    /// The options as given, for the run's record.
    pub spec: Spec,
    idle_tick: Option<IdleTick>,
    /// `CONFIG_HZ`; None keeps the platform file's value.
    pub hz: Option<u32>,
    freq_invariance: Option<FreqInvariance>,
    /// Per-CPU kernel work wakes idle CPUs (machine/housekeeping.rs).
    pub housekeeping: bool,
    /// RCU callbacks keep their CPU's tick (machine/rcu.rs).
    pub rcu_tick: bool,
    /// Wakeups, switches and idle cycles take C0 time (machine/kpath.rs).
    pub kpath: bool,
    /// The `sched_energy_aware` sysctl (read through `sched_energy_aware()`).
    sched_energy_aware: bool,
    /// LISA's kernel module is loaded (machine/lisa_events.rs).
    pub lisa_module: bool,
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig::of(DEFAULT_VERSION)
    }
}

impl KernelConfig {
    /// `version` with every option at its default.
    #[must_use]
    pub fn of(version: Version) -> Self {
        KernelConfig {
            requested: version,
            version,
            spec: Spec::new(version.to_string()),
            idle_tick: None,
            hz: None,
            freq_invariance: None,
            housekeeping: true,
            rcu_tick: true,
            kpath: false,
            sched_energy_aware: true,
            lisa_module: false,
        }
    }

    /// Resolve `VERSION[:option=value,...]`.
    pub fn from_spec(spec: &Spec) -> Result<KernelConfig> {
        let choices = || SUPPORTED.iter().map(ToString::to_string).collect::<Vec<_>>();
        let requested = Version::parse(&spec.name).ok_or_else(|| Error::UnknownName {
            kind: "kernel version",
            name: spec.name.clone(),
            choices: choices(),
        })?;
        let version = SUPPORTED.iter().rev().find(|v| **v <= requested).copied();
        let version = match version {
            Some(v) if requested <= NEWEST_VERSION => v,
            _ => {
                return Err(Error::invalid(
                    "kernel",
                    "version",
                    &spec.name,
                    format!(
                        "a version from {} to {}: {} (a version in between runs the newest of these not after it)",
                        SUPPORTED[0],
                        NEWEST_VERSION,
                        choices().join(", ")
                    ),
                ))
            }
        };
        let mut p = Params::new(format!("kernel {}", spec.name), spec);
        let idle_tick = match p.string("idle_tick") {
            None => None,
            Some(v) => Some(match v.as_str() {
                "governor" => IdleTick::Governor,
                "stopped" => IdleTick::Stopped,
                _ => return Err(Error::invalid(p.owner(), "idle_tick", v, OPTIONS[0].1)),
            }),
        };
        let hz = match p.string("hz") {
            None => None,
            Some(v) => match v.parse::<u32>() {
                Ok(hz) if HZ_VALUES.contains(&hz) => Some(hz),
                _ => return Err(Error::invalid(p.owner(), "hz", v, OPTIONS[1].1)),
            },
        };
        let freq_invariance = match p.string("freq_invariance") {
            None => None,
            Some(v) => Some(FreqInvariance::parse(&v).ok_or_else(|| Error::invalid(p.owner(), "freq_invariance", &v, OPTIONS[2].1))?),
        };
        let housekeeping = p.bool("housekeeping", true)?;
        let rcu_tick = p.bool("rcu_tick", true)?;
        let kpath = p.bool("kpath", false)?;
        let given_eas = p.given("sched_energy_aware");
        let sched_energy_aware = p.bool("sched_energy_aware", true)?;
        let lisa_module = p.bool("lisa_module", false)?;
        p.finish()?;
        let k = KernelConfig {
            requested,
            version,
            spec: spec.clone(),
            idle_tick,
            hz,
            freq_invariance,
            housekeeping,
            rcu_tick,
            kpath,
            sched_energy_aware,
            lisa_module,
        };
        if lisa_module && !k.has(EraId::PeltTracepoints) {
            return Err(Error::invalid(
                format!("kernel {}", spec.name),
                "lisa_module",
                "on",
                "a kernel from 5.3 (the PELT tracepoints LISA's module reads came in v5.3)",
            ));
        }
        if given_eas && !k.eas() {
            return Err(Error::invalid(
                format!("kernel {}", spec.name),
                "sched_energy_aware",
                if sched_energy_aware { "on" } else { "off" },
                "a kernel from 5.0 (Energy-Aware Scheduling came in v5.0); leave it out before",
            ));
        }
        Ok(k)
    }

    /// Whether the version asked for runs another version's semantics.
    #[must_use]
    pub fn resolved_elsewhere(&self) -> bool {
        self.requested != self.version
    }

    /// Refuse a machine whose drivers this kernel predates: the platform
    /// file's `min_kernel` against the version asked for (a version between
    /// two modelled ones is judged by its own number, not by the one whose
    /// semantics run).
    ///
    /// # Errors
    /// The kernel is older than the platform's `min_kernel`.
    pub fn check_platform(&self, platform: &Platform) -> Result<()> {
        let Some(m) = &platform.min_kernel else {
            return Ok(());
        };
        let first = Version::new(m.major, m.minor);
        if self.requested >= first {
            return Ok(());
        }
        Err(Error::Unsupported(format!(
            "platform {} needs kernel {first} or later, not {}: {}",
            platform.name, self.requested, m.why
        )))
    }

    /// `5.4 (5.2 semantics)`, or the version alone when it is supported.
    #[must_use]
    pub fn describe(&self) -> String {
        if self.resolved_elsewhere() {
            format!("{} ({} semantics)", self.requested, self.version)
        } else {
            self.version.to_string()
        }
    }

    /// Whether the version has the behaviour of `era` (its first version
    /// or later).
    #[must_use]
    pub fn has(&self, era: EraId) -> bool {
        self.version >= era.first()
    }

    /// A state's `disable` at boot. From v5.6 (EraId::IntelIdleAcpiCst,
    /// e6d4f08a6776) intel_idle_init_cstates_icpu() sets CPUIDLE_FLAG_OFF on a
    /// table state of a `use_acpi` model whose MWAIT hint the BIOS's _CST does
    /// not list (intel_idle_off_by_default()), and __cpuidle_register_device()
    /// turns the flag into CPUIDLE_STATE_DISABLED_BY_DRIVER: the state stays in
    /// sysfs, its `disable` reads 1, and menu, teo and ladder skip it as any
    /// disabled state. Before v5.6 the driver enabled every table state CPUID
    /// leaf 5 reports.
    #[must_use]
    pub fn idle_state_off_by_default(&self, state: &IdleState) -> bool {
        !state.in_acpi_cst && self.has(EraId::IntelIdleAcpiCst)
    }

    /// Who stops the tick on idle entry: the option, else the version's
    /// default (`stopped` before v4.17, 554c8aa8ecad).
    #[must_use]
    pub fn idle_tick(&self) -> IdleTick {
        self.idle_tick.unwrap_or(if self.has(EraId::IdleTick) { IdleTick::Governor } else { IdleTick::Stopped })
    }

    /// Whether `idle_tick` was given as an option (a platform's deprecated
    /// `idle_tick` yields to it).
    #[must_use]
    pub fn idle_tick_given(&self) -> bool {
        self.idle_tick.is_some()
    }

    /// Set `idle_tick` as if given (the platform's deprecated alias).
    pub fn set_idle_tick(&mut self, t: IdleTick) {
        self.idle_tick = Some(t);
    }

    /// Before v5.1 (23127296889f), PELT scaled each contribution (load by
    /// frequency, util by frequency x capacity) and ran on the unscaled
    /// clock; from v5.1 it scales the clock (`clock_pelt`). For sched/pelt.rs.
    #[must_use]
    pub fn pelt_scales_contributions(&self) -> bool {
        !self.has(EraId::PeltClock)
    }

    /// From v4.13 (625ed2bf049d) PELT averages divide by
    /// `LOAD_AVG_MAX - 1024 + period_contrib`; before, by `LOAD_AVG_MAX`.
    #[must_use]
    pub fn pelt_divider_has_period_contrib(&self) -> bool {
        self.has(EraId::PeltDivider)
    }

    /// From v6.0 (e2f3e35f1f5a, `migrate_se_pelt_lag`) a task migrated at
    /// wakeup from an idle CPU is decayed to an estimate of now; before, it
    /// leaves with its old runqueue's last update. For sched/pelt.rs.
    #[must_use]
    pub fn pelt_migration_lag(&self) -> bool {
        self.has(EraId::MigratePeltLag)
    }

    /// From v6.2 (Damien Le Moal's "ata: libata: Enable fua support by
    /// default", v2 posted 24 October 2022 for libata's 6.2 branch; the
    /// release inferred) libata passes a REQ_FUA write to a drive that
    /// supports it; before, `libata.fua` was 0 and the block layer emulated
    /// FUA with a post-flush. For machine/exec.rs.
    #[must_use]
    pub fn libata_fua(&self) -> bool {
        self.has(EraId::LibataFua)
    }

    /// From v6.5 ("io_uring: Use io_schedule* in cqring wait"; v6.6 kept it
    /// for waits with requests in flight, which a fio job's always are) a
    /// task waiting in io_cqring_wait() is in iowait; before, it was not.
    #[must_use]
    pub fn io_uring_wait_is_iowait(&self) -> bool {
        self.has(EraId::IoUringIowait)
    }

    /// From v4.17 (7f65ea42eb00) tasks carry a utilisation estimate that
    /// schedutil and placement read; before, `util_avg` alone.
    #[must_use]
    pub fn util_est(&self) -> bool {
        self.has(EraId::UtilEst)
    }

    /// Before v5.6 (a4f9a0e51bbf) attaching a task to a runqueue called
    /// the hook with SCHED_CPUFREQ_MIGRATION; from v5.6 with no flag.
    #[must_use]
    pub fn migration_flag(&self) -> bool {
        !self.has(EraId::NoMigrationFlag)
    }

    /// From v4.17 (b7031a02ec75, f643ea220701, 31e77c93e432) idle CPUs'
    /// blocked load is decayed by the NOHZ stats pass every LOAD_AVG_PERIOD
    /// ms while any is left; before, by the idle load balancer only when
    /// kicked to balance. For machine/nohz.rs.
    #[must_use]
    pub fn nohz_blocked_load(&self) -> bool {
        self.has(EraId::NohzBlockedLoad)
    }

    /// From v4.14 (674e75411fc2) the scheduler calls the cpufreq hook for
    /// a remote CPU's runqueue; before, local calls only. For machine/fair.rs.
    #[must_use]
    pub fn remote_callbacks(&self) -> bool {
        self.has(EraId::RemoteCallbacks)
    }

    /// From v6.0 (f3dd3f674555, `ttwu_queue_cond`) a wakeup onto an idle
    /// CPU that shares the waker's LLC is queued on that CPU's wake list,
    /// so the CPU enqueues the task itself; before, the waker enqueued it
    /// on the remote runqueue. For machine/placement.rs.
    #[must_use]
    pub fn ttwu_queue_idle(&self) -> bool {
        self.has(EraId::TtwuQueueIdle)
    }

    /// Whether the run names its frequency invariance (the option).
    #[must_use]
    pub fn freq_invariance_given(&self) -> bool {
        self.freq_invariance.is_some()
    }

    /// The frequency invariance in effect on `plat`: the option, else the
    /// version's default for the architecture (x86: off before v5.7, the
    /// 4-core turbo ratio from v5.7, 1567c3e3467c; on AMD, whose CPUs give
    /// CPPC levels, off before v5.11 and the CPPC midpoint from v5.11,
    /// 41ea667227ba; powerpc: off, no implementation found; Arm: off before
    /// v4.15, the cpufreq-driven `max` from v4.15, when arm64 wired
    /// `arch_set_freq_scale` up).
    #[must_use]
    pub fn freq_invariance(&self, plat: &Platform) -> FreqInvariance {
        if let Some(f) = self.freq_invariance {
            return f;
        }
        let amd = plat.cpu_types.iter().all(|t| t.cppc.is_some());
        match arch_of(plat) {
            Arch::X86 if amd && self.has(EraId::AmdFreqInvariance) => FreqInvariance::CppcMidpoint,
            Arch::X86 if amd => FreqInvariance::Off,
            Arch::X86 if self.has(EraId::X86FreqInvariance) => FreqInvariance::Turbo(4),
            Arch::X86 | Arch::PowerPc => FreqInvariance::Off,
            Arch::Arm if self.has(EraId::ArmFreqInvariance) => FreqInvariance::Max,
            Arch::Arm => FreqInvariance::Off,
        }
    }

    /// Whether the invariance scale is sampled per CPU at the scheduler
    /// tick from APERF/MPERF (x86: v5.7 arch/x86/kernel/smpboot.c
    /// arch_scale_freq_tick(), AMD's on the same path from v5.11) rather
    /// than set at each frequency transition (Arm's cpufreq-driven
    /// arch_set_freq_scale(), drivers/base/arch_topology.c). Arm's
    /// activity-monitor sampling (v5.7 cd0ed03a8903, ARMv8.4 AMUs) is not
    /// modelled: no shipped Arm platform has AMUs.
    #[must_use]
    pub fn freq_scale_on_tick(&self, plat: &Platform) -> bool {
        arch_of(plat) == Arch::X86 && self.freq_invariance(plat) != FreqInvariance::Off
    }

    /// From v3.17 ("cpufreq: ondemand: Eliminate the deadband effect")
    /// ondemand's proportional target is `cpuinfo.min + load x (cpuinfo.max
    /// - cpuinfo.min) / 100` with RELATION_C; before (v3.11 dfa5bb622555 to
    /// v3.16), `load x cpuinfo.max / 100` with RELATION_L.
    #[must_use]
    pub fn ondemand_target_from_min(&self) -> bool {
        self.has(EraId::OndemandFormula)
    }

    /// Before v4.14 ("cpufreq: governor: Drop min_sampling_rate") the dbs
    /// governors had a `min_sampling_rate` (10 ms with NOHZ idle accounting,
    /// raised to 20 x the transition latency) that was the floor of
    /// sampling_rate and a bound of its default; from v4.14 the floor is two
    /// ticks and the default the policy's transition delay.
    #[must_use]
    pub fn dbs_min_sampling_rate(&self) -> bool {
        !self.has(EraId::DbsSamplingTicks)
    }

    /// From v4.18 (7592019634f8) the dbs long-idle test reads the window's
    /// idle time; before, its wall time.
    #[must_use]
    pub fn dbs_long_idle_by_idle_time(&self) -> bool {
        self.has(EraId::DbsLongIdle)
    }

    /// Whether intel_pstate has a passive mode (intel_cpufreq) at all:
    /// from v4.10 ("Generic governors support").
    #[must_use]
    pub fn intel_pstate_passive(&self) -> bool {
        self.has(EraId::IntelPstatePassive)
    }

    /// Whether intel_pstate boots in passive mode on a processor without
    /// HWP: from v5.8 (33aa46f252c7, intel_pstate_init); before, in its
    /// own active mode.
    #[must_use]
    pub fn intel_pstate_passive_default(&self) -> bool {
        self.has(EraId::IntelPstatePassiveDefault)
    }

    /// Whether sched_slice() is floored at the minimum granularity: from
    /// v5.13 (0c2de3f054a5, the BASE_SLICE feature, on by default).
    #[must_use]
    pub fn base_slice(&self) -> bool {
        self.has(EraId::BaseSlice)
    }

    /// Whether intel_pstate's passive mode keeps HWP on: from v5.9
    /// (f6ebbcf08f37); before, passive mode runs without HWP.
    #[must_use]
    pub fn intel_pstate_passive_hwp(&self) -> bool {
        self.has(EraId::IntelPstatePassiveHwp)
    }

    /// The era that brings idle governor `name` into mainline when this
    /// version lacks it (teo before v5.1, haltpoll before v5.4); None when
    /// the version has it (or it is no mainline governor: govlab's oracle,
    /// which any version runs). wtteo, an RFC on top of teo, needs teo.
    #[must_use]
    pub fn missing_cpuidle_governor(&self, name: &str) -> Option<&'static Era> {
        let era = match name {
            "teo" | "wtteo" => EraId::Teo,
            "haltpoll" => EraId::Haltpoll,
            _ => return None,
        };
        (!self.has(era)).then(|| era.era())
    }

    /// The era that brings cpufreq governor `name` into mainline when this
    /// version lacks it (schedutil before v4.7); None when it has it.
    #[must_use]
    pub fn missing_cpufreq_governor(&self, name: &str) -> Option<&'static Era> {
        (name == "schedutil" && !self.has(EraId::Schedutil)).then(|| EraId::Schedutil.era())
    }

    /// Whether `patch` is mainline in this version (merged at or before
    /// it); otherwise its tunable applies it on top.
    #[must_use]
    pub fn merged(&self, patch: &Patch) -> bool {
        patch.merged_in.is_some_and(|e| self.has(e))
    }

    /// How a governor that the eras `eras` change differs in this version
    /// from the newest modelled one: each era this version lacks, as one
    /// line, with its status when not modelled.
    #[must_use]
    pub fn differences(&self, eras: &[EraId]) -> Vec<String> {
        eras.iter()
            .map(|e| e.era())
            .filter(|e| !self.has(e.id))
            .map(|e| {
                let status = match e.status {
                    EraStatus::Modelled => "",
                    EraStatus::Exposed => " [not yet used by the engine]",
                    EraStatus::NotModelled => " [not modelled: runs the newer behaviour]",
                };
                format!("{} (v{}, {}): {}{status}", e.name, e.first, e.commit, e.description)
            })
            .collect()
    }

    /// Every option, resolved on `plat` (for `--show-config`).
    #[must_use]
    pub fn show(&self, plat: &Platform, hz: u32) -> ShownKernel {
        ShownKernel {
            version: self.requested.to_string(),
            semantics: self.version.to_string(),
            idle_tick: match self.idle_tick() {
                IdleTick::Governor => "governor",
                IdleTick::Stopped => "stopped",
            },
            hz,
            freq_invariance: self.freq_invariance(plat).to_string(),
            housekeeping: self.housekeeping,
            rcu_tick: self.rcu_tick,
            kpath: self.kpath,
            pelt_scales_contributions: self.pelt_scales_contributions(),
            remote_callbacks: self.remote_callbacks(),
            util_est: self.util_est(),
        }
    }
}

/// A kernel configuration with every option resolved.
#[derive(Debug, Clone, Serialize)]
pub struct ShownKernel {
    /// As asked.
    pub version: String,
    /// The supported version whose semantics run.
    pub semantics: String,
    pub idle_tick: &'static str,
    pub hz: u32,
    /// What utilisation is scaled by (`off`, `base`, `max`, `Nc`).
    pub freq_invariance: String,
    /// The per-CPU kernel work that wakes idle CPUs (machine/housekeeping.rs).
    pub housekeeping: bool,
    /// RCU callbacks keep their CPU's tick (machine/rcu.rs).
    pub rcu_tick: bool,
    /// Wakeups, switches and idle cycles take C0 time (machine/kpath.rs).
    pub kpath: bool,
    /// Before v5.1: PELT scales contributions, not its clock.
    pub pelt_scales_contributions: bool,
    /// From v4.14: cpufreq hook calls for remote runqueues.
    pub remote_callbacks: bool,
    /// From v4.17: tasks carry util_est.
    pub util_est: bool,
}

/// One supported version for `govlab list kernels`: what changes between
/// it and the next supported one.
#[derive(Debug, Clone, Serialize)]
pub struct KernelEntry {
    pub version: String,
    pub default: bool,
    /// The eras whose first version is after this one and not after the
    /// next supported one (for the newest: the notes that hold from it on).
    pub until_next: Vec<Era>,
}

/// The supported versions, each with the eras that begin before the next.
#[must_use]
pub fn list() -> Vec<KernelEntry> {
    SUPPORTED
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let next = SUPPORTED.get(i + 1).copied();
            let until_next = ERAS
                .iter()
                .filter(|e| match next {
                    Some(n) => e.first > v && e.first <= n,
                    None => e.first > v,
                })
                .copied()
                .collect();
            KernelEntry { version: v.to_string(), default: v == DEFAULT_VERSION, until_next }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(text: &str) -> Result<KernelConfig> {
        KernelConfig::from_spec(&Spec::parse(text, "kernel")?)
    }

    /// A platform's `min_kernel` refuses older kernels by the number asked
    /// (5.5 runs as 5.2 but is still before 5.6); a platform without one
    /// runs on every modelled kernel.
    #[test]
    fn a_kernel_older_than_the_platforms_drivers_is_refused() {
        let cml = crate::platform::load_named(&Spec::new("i5-10600k")).unwrap();
        for old in ["3.15", "5.2", "5.5"] {
            let e = k(old).unwrap().check_platform(&cml).unwrap_err().to_string();
            assert!(e.contains(&format!("platform i5-10600k needs kernel 5.6 or later, not {old}")), "{e}");
            assert!(e.contains("18734958e9bf"), "{e}");
        }
        for new in ["5.6", "5.9", "6.8"] {
            k(new).unwrap().check_platform(&cml).unwrap();
        }
        let snb = crate::platform::load_named(&Spec::new("i7-2600k")).unwrap();
        for v in SUPPORTED {
            KernelConfig::of(v).check_platform(&snb).unwrap();
        }
    }

    #[test]
    fn versions_resolve_to_the_newest_supported_not_after() {
        assert_eq!(k("5.4").unwrap().version, Version::new(5, 2));
        assert_eq!(k("5.4").unwrap().describe(), "5.4 (5.2 semantics)");
        assert_eq!(k("v4.16").unwrap().describe(), "4.16");
        assert_eq!(k("4.19.0").unwrap().version, Version::new(4, 19));
        assert_eq!(k("6.4").unwrap().version, Version::new(5, 9));
        assert_eq!(k("6.7").unwrap().version, Version::new(6, 6));
        assert_eq!(k("6.10").unwrap().describe(), "6.10 (6.9 semantics)");
        assert_eq!(k("6.17").unwrap().version, Version::new(6, 12));
        assert_eq!(k("6.18.5").unwrap().version, Version::new(6, 18));
        assert_eq!(KernelConfig::default().version, DEFAULT_VERSION);
    }

    #[test]
    fn versions_outside_the_range_are_refused_with_the_choices() {
        for bad in ["3.14", "6.19", "7.0", "2.6"] {
            let e = k(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("3.15") && e.contains("6.18"), "{e}");
        }
        let e = k("linus").unwrap_err().to_string();
        assert!(e.contains("linus") && e.contains("4.19"), "{e}");
    }

    #[test]
    fn options_are_checked() {
        let e = k("6.8:idle_tick=never").unwrap_err().to_string();
        assert!(e.contains("governor or stopped"), "{e}");
        let e = k("6.8:tickless=on").unwrap_err().to_string();
        assert!(e.contains("tickless") && e.contains("idle_tick") && e.contains("freq_invariance"), "{e}");
        let e = k("6.8:freq_invariance=9").unwrap_err().to_string();
        assert!(e.contains("Nc"), "{e}");
        assert_eq!(k("6.8:hz=1000").unwrap().hz, Some(1000));
        assert!(k("6.8:hz=500").is_err());
        assert!(k("6.8:housekeeping=on").unwrap().housekeeping);
        assert!(k("6.8").unwrap().housekeeping);
        assert!(!k("6.8:housekeeping=off").unwrap().housekeeping);
        assert!(k("5.2").unwrap().rcu_tick);
        assert!(!k("5.2:rcu_tick=off").unwrap().rcu_tick);
        assert!(k("5.2:rcu_tick=sometimes").is_err());
        assert!(!k("6.8").unwrap().kpath);
        assert!(k("5.2:kpath=on").unwrap().kpath);
        assert!(!k("5.2:kpath=off").unwrap().kpath);
    }

    #[test]
    fn idle_tick_follows_the_version() {
        assert_eq!(k("4.16").unwrap().idle_tick(), IdleTick::Stopped);
        // 4.17 itself runs 4.16 semantics: eras resolve at the supported version.
        assert_eq!(k("4.17").unwrap().idle_tick(), IdleTick::Stopped);
        assert_eq!(k("4.19").unwrap().idle_tick(), IdleTick::Governor);
        assert_eq!(k("6.8").unwrap().idle_tick(), IdleTick::Governor);
        assert_eq!(k("6.8:idle_tick=stopped").unwrap().idle_tick(), IdleTick::Stopped);
        assert_eq!(k("3.15:idle_tick=governor").unwrap().idle_tick(), IdleTick::Governor);
    }

    #[test]
    fn pelt_and_hook_eras() {
        assert!(k("4.19").unwrap().pelt_scales_contributions());
        assert!(!k("5.2").unwrap().pelt_scales_contributions());
        assert!(!k("4.8").unwrap().remote_callbacks());
        assert!(k("4.16").unwrap().remote_callbacks());
        assert!(!k("4.8").unwrap().pelt_divider_has_period_contrib());
    }

    /// The attach call's flag goes at v5.6.
    #[test]
    fn migration_flag_by_version() {
        assert!(k("5.2").unwrap().migration_flag());
        assert!(!k("5.7").unwrap().migration_flag());
    }

    #[test]
    fn freq_invariance_by_version_and_architecture() {
        let sky = crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap();
        let p8 = crate::platform::load_named(&Spec::new("power8")).unwrap();
        let juno = crate::platform::load_named(&Spec::new("juno-r0")).unwrap();
        assert_eq!(k("5.2").unwrap().freq_invariance(&sky), FreqInvariance::Off);
        assert_eq!(k("5.7").unwrap().freq_invariance(&sky), FreqInvariance::Turbo(4));
        assert_eq!(k("6.8").unwrap().freq_invariance(&p8), FreqInvariance::Off);
        assert_eq!(k("6.8").unwrap().freq_invariance(&juno), FreqInvariance::Max);
        assert_eq!(k("4.16").unwrap().freq_invariance(&juno), FreqInvariance::Max);
        // arm64 before v4.15 had no arch_set_freq_scale.
        assert_eq!(k("4.8").unwrap().freq_invariance(&juno), FreqInvariance::Off);
        assert_eq!(k("4.8:freq_invariance=1c").unwrap().freq_invariance(&sky), FreqInvariance::Turbo(1));
        // The reference each names on the Skylake E3-1240 v5 (its
        // platform file's base and n-core turbo table).
        let ct = &sky.cpu_types[0];
        assert_eq!(FreqInvariance::Off.reference_khz(ct), 0);
        assert_eq!(FreqInvariance::Base.reference_khz(ct), ct.base_khz);
        assert_eq!(FreqInvariance::Max.reference_khz(ct), ct.max_khz());
        assert_eq!(FreqInvariance::Turbo(1).reference_khz(ct), ct.turbo_max_khz[0]);
        assert_eq!(FreqInvariance::Turbo(4).reference_khz(ct), ct.turbo_max_khz[3]);
        assert_eq!(FreqInvariance::Turbo(8).reference_khz(ct), *ct.turbo_max_khz.last().unwrap());
    }

    #[test]
    fn governor_eras_switch_at_their_versions() {
        assert!(!k("3.15").unwrap().ondemand_target_from_min());
        assert!(k("4.8").unwrap().ondemand_target_from_min());
        assert!(k("4.8").unwrap().dbs_min_sampling_rate());
        assert!(!k("4.16").unwrap().dbs_min_sampling_rate());
        assert!(!k("4.16").unwrap().dbs_long_idle_by_idle_time());
        assert!(k("4.19").unwrap().dbs_long_idle_by_idle_time());
        assert!(!k("4.8").unwrap().intel_pstate_passive());
        assert!(k("4.16").unwrap().intel_pstate_passive());
        assert!(!k("5.7").unwrap().intel_pstate_passive_default());
        assert!(!k("5.9").unwrap().base_slice());
        assert!(k("6.8").unwrap().base_slice());
        assert!(k("5.9").unwrap().intel_pstate_passive_default());
        assert!(!k("5.7").unwrap().intel_pstate_passive_hwp());
        assert!(k("5.9").unwrap().intel_pstate_passive_hwp());
        assert_eq!(k("4.19").unwrap().missing_cpuidle_governor("teo").map(|e| e.first), Some(Version::new(5, 1)));
        assert!(k("5.2").unwrap().missing_cpuidle_governor("teo").is_none());
        assert_eq!(k("3.15").unwrap().missing_cpufreq_governor("schedutil").map(|e| e.first), Some(Version::new(4, 7)));
        assert!(k("4.8").unwrap().missing_cpufreq_governor("schedutil").is_none());
        assert!(k("3.15").unwrap().missing_cpufreq_governor("ondemand").is_none());
        assert!(k("5.2").unwrap().missing_cpuidle_governor("haltpoll").is_some());
        assert!(k("5.7").unwrap().missing_cpuidle_governor("haltpoll").is_none());
        assert!(k("3.15").unwrap().missing_cpuidle_governor("menu").is_none());
    }

    #[test]
    fn every_era_is_listed_once() {
        let l = list();
        assert_eq!(l.len(), SUPPORTED.len());
        assert!(l.last().unwrap().until_next.is_empty(), "no era is after the newest version");
        let shown: usize = l.iter().map(|e| e.until_next.len()).sum();
        let inside = ERAS.iter().filter(|e| e.first > SUPPORTED[0]).count();
        assert_eq!(shown, inside);
        assert!(ERAS.iter().all(|e| e.first <= NEWEST_VERSION));
    }

    #[test]
    fn eevdf_from_6_6() {
        assert!(!k("6.5").unwrap().has(EraId::Eevdf));
        assert!(k("6.6").unwrap().has(EraId::Eevdf));
        assert!(k("6.12").unwrap().has(EraId::Eevdf));
        assert!(!k("6.8").unwrap().has(EraId::SchedutilRateLimit2ms));
        assert!(k("6.12").unwrap().has(EraId::TransitionDelayFromLatency));
    }
}

//! The simulated machine: topology, clock and voltage domains, operating
//! points, idle states and the energy model.
//!
//! A platform is described once in `data/platforms/NAME.toml` and loaded by
//! [`load`]. Everything here is plain data, resolved and validated at load
//! time: the engine never re-checks it. CPU ids are Linux's logical CPU
//! numbers; every other id (core, package, LLC, domain) is an index into the
//! vector of that name.
//!
//! Units: frequencies in kHz (as cpufreq), voltages in mV, times in ns
//! (converted from the file's µs once, at load), power in mW.

pub mod cppc;
pub mod energy;
pub mod hwp;
pub mod load;

pub use load::{load_named, load_path, load_str, platform_names, PlatformOverrides};

/// Index of a logical CPU (Linux's cpu number).
pub type CpuId = usize;

/// intel_pstate's P-state unit on Core parts, kHz: one ratio step is one
/// 100 MHz bus clock (Linux v6.8 drivers/cpufreq/intel_pstate.c,
/// core_get_scaling()). Platform files for intel_pstate list one operating
/// point per ratio, so a ratio and an OPP are the same thing.
pub const INTEL_PSTATE_SCALING_KHZ: u32 = 100_000;

/// What one HWP performance level is worth on a P-core of Intel's hybrid
/// parts, kHz: `HYBRID_SCALING_FACTOR` (78741, "approximately 100000/1.27"),
/// which `hybrid_get_cpu_scaling()` returns for a core of type 0x40 (Core)
/// while E-cores (0x20, Atom) keep [`INTEL_PSTATE_SCALING_KHZ`]: Linux
/// drivers/cpufreq/intel_pstate.c, f5c8cf2a4992 "cpufreq: intel_pstate:
/// hybrid: Use known scaling factor for P-cores" (v6.1, in 5.15+ stable;
/// `HYBRID_SCALING_FACTOR_ADL` since the Meteor/Lunar Lake factors came).
pub const HYBRID_SCALING_FACTOR_ADL_KHZ: u32 = 78_741;

/// How the idle loop treats the scheduler tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdleTick {
    /// v4.17 and later (commit 554c8aa8ecad, "sched: idle: Select idle state
    /// before stopping the tick"): the idle governor decides, per idle
    /// entry, whether the tick stops; shallow states keep it running.
    #[default]
    Governor,
    /// Before v4.17: with NOHZ the idle loop stopped the tick on every idle
    /// entry, before the governor ran, so an idle CPU slept until its next
    /// timer whatever state it chose.
    Stopped,
}

/// The whole machine.
#[derive(Debug, Clone)]
pub struct Platform {
    /// Name as given in the file (`skylake-e3-1240v5`).
    pub name: String,
    /// One line for `govlab list platforms`.
    pub description: String,
    /// The cpufreq scaling driver this machine uses, with its options: how a
    /// frequency request becomes a frequency (see `cpufreq::driver`).
    pub driver: Driver,
    /// Whether the CPU has hardware-managed P-states (Intel HWP).
    pub hwp: bool,
    /// The firmware's preferred PM profile (x86 ACPI FADT).
    pub acpi_pm_profile: AcpiPmProfile,
    /// acpi-cpufreq: the firmware's `_PSD` coordination of the CPUs that
    /// share a clock is software's (SW_ALL or SW_ANY: the kernel makes one
    /// policy of them); false for hardware coordination (HW_ALL, one policy
    /// per CPU). See `cpufreq::driver::PolicyLayout`.
    pub psd_sw_coordination: bool,
    /// Which of the kernel's idle-CPU wakeup profiles this kind of machine
    /// shows (machine/housekeeping.rs; the platform file's `housekeeping`).
    pub housekeeping: HousekeepingProfile,
    /// The oldest kernel that runs this machine's drivers (the file's
    /// `min_kernel`); None: every modelled kernel does.
    pub min_kernel: Option<MinKernel>,
    /// The kernel's `amd_pstate=passive|active|guided` (the platform
    /// override `amd_pstate`): the amd-pstate driver replaces the file's
    /// acpi-cpufreq in that mode (`cpufreq::amd_pstate`). None: as the
    /// kernel boots, which on a server of Zen 4 or older leaves amd-pstate
    /// off. Only on platforms whose CPU types have [`cppc::Cppc`].
    pub amd_pstate: Option<AmdPstateMode>,
    /// The tick rate (CONFIG_HZ) of the distribution kernel this machine is
    /// assumed to run: the run's default, read by `kernel::BuildCtx` (the
    /// kernel's `hz` option overrides it).
    pub hz: u32,
    /// Whether the packages enter their package C-states (the override
    /// `package_cstates=on|off`; on by default). Off: a package stays in
    /// PC0 whatever its cores do, as with package C-states limited in the
    /// BIOS.
    pub package_cstates: bool,
    /// The energy counters a user reads on this machine, in
    /// [`POWER_DOMAINS`] names: RAPL's `package`, `cores` (PP0), `dram`;
    /// POWER's OCC `chip` and `memory` sensors. Empty: none (the run's
    /// energy is still the model's).
    pub power_domains: Vec<String>,
    /// Deprecated alias of the kernel option `idle_tick` (set by the
    /// platform override `idle_tick`, not in platform files): who stops the
    /// tick when a CPU goes idle is a kernel version choice, resolved by
    /// `kernel::KernelConfig::apply`. None: the kernel's default.
    pub idle_tick: Option<IdleTick>,
    /// Logical CPUs, indexed by CPU id.
    pub cpus: Vec<Cpu>,
    /// Physical cores.
    pub cores: Vec<Core>,
    /// Sockets (chips).
    pub packages: Vec<Package>,
    /// Last-level-cache groups; each a list of CPU ids.
    pub llcs: Vec<Vec<CpuId>>,
    /// Groups of cores sharing one clock (a cpufreq policy each).
    pub freq_domains: Vec<FreqDomain>,
    /// Groups of frequency domains sharing one voltage rail.
    pub voltage_domains: Vec<VoltageDomain>,
    /// Kinds of core (one on SMP machines, two on big.LITTLE).
    pub cpu_types: Vec<CpuType>,
    /// Storage devices, the first one is the default for `io` operations.
    pub devices: Vec<Device>,
}

/// The cpufreq scaling driver Linux uses on a platform, with the options
/// govlab models. What each one does with a request is in `cpufreq::driver`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `acpi-cpufreq`: the firmware's frequency table (ACPI _PSS).
    AcpiCpufreq,
    /// `cpufreq-dt`: the device tree's OPP table.
    CpufreqDt,
    /// `intel_pstate`. `mode` is what the kernel's `intel_pstate=active` or
    /// `intel_pstate=passive` forces. None forces nothing: the kernel boots
    /// in its own mode (`cpufreq::intel_pstate_boots_active`: active with
    /// HWP, passive without HWP from v5.8), where `powersave` and
    /// `performance` name the driver's own policies in active mode and the
    /// generic governors in passive mode. A generic governor then runs the
    /// driver in passive mode (`intel_cpufreq`), as writing `passive` to
    /// intel_pstate/status does, and `intel_pstate:...` in active mode, as
    /// booting with `intel_pstate=active` does (see `cpufreq::driver`).
    IntelPstate { mode: Option<PstateMode> },
    /// `powernv-cpufreq` (IBM POWER on OPAL firmware). `global_pstate`: the
    /// chip voltage (global P-state) is brought down slowly after the
    /// frequency (local P-state) drops, as on POWER8 since v4.8.
    Powernv { global_pstate: bool },
}

/// amd-pstate's operation mode (Documentation/admin-guide/pm/amd-pstate.rst,
/// "Driver Operation Modes"; the kernel's `amd_pstate=` and
/// /sys/devices/system/cpu/amd_pstate/status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmdPstateMode {
    /// `amd-pstate`: the generic governors set the desired level (v5.17).
    Passive,
    /// `amd-pstate-epp`: a setpolicy driver; the firmware picks the level
    /// inside the limits, steered by EPP (v6.3).
    Active,
    /// `amd-pstate` with the firmware choosing inside [min, max], where a
    /// dynamic governor's target becomes the minimum (v6.4).
    Guided,
}

impl AmdPstateMode {
    /// The file's and `status`' spelling.
    pub fn name(self) -> &'static str {
        match self {
            AmdPstateMode::Passive => "passive",
            AmdPstateMode::Active => "active",
            AmdPstateMode::Guided => "guided",
        }
    }
}

/// intel_pstate's operation mode (Documentation/admin-guide/pm/intel_pstate.rst).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PstateMode {
    /// The driver is its own governor (a setpolicy driver).
    Active,
    /// The driver takes frequency targets from the generic governors and
    /// registers as `intel_cpufreq`.
    Passive,
}

impl Driver {
    /// The name as the platform file and `scaling_driver` spell it (passive
    /// intel_pstate is still `intel_pstate` here; the run reports the mode).
    pub fn name(&self) -> &'static str {
        match self {
            Driver::AcpiCpufreq => "acpi-cpufreq",
            Driver::CpufreqDt => "cpufreq-dt",
            Driver::IntelPstate { .. } => "intel_pstate",
            Driver::Powernv { .. } => "powernv",
        }
    }
}

/// ACPI FADT "preferred PM profile": the firmware's statement of what the
/// machine is for. intel_pstate enables HWP dynamic boost by default on the
/// two server profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AcpiPmProfile {
    #[default]
    Unspecified,
    Desktop,
    Mobile,
    Workstation,
    EnterpriseServer,
    SohoServer,
    AppliancePc,
    PerformanceServer,
    Tablet,
}

impl AcpiPmProfile {
    /// The file's spelling of each profile.
    pub const NAMES: [(&'static str, AcpiPmProfile); 9] = [
        ("unspecified", AcpiPmProfile::Unspecified),
        ("desktop", AcpiPmProfile::Desktop),
        ("mobile", AcpiPmProfile::Mobile),
        ("workstation", AcpiPmProfile::Workstation),
        ("enterprise-server", AcpiPmProfile::EnterpriseServer),
        ("soho-server", AcpiPmProfile::SohoServer),
        ("appliance-pc", AcpiPmProfile::AppliancePc),
        ("performance-server", AcpiPmProfile::PerformanceServer),
        ("tablet", AcpiPmProfile::Tablet),
    ];

    /// The file's spelling.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, p)| *p == self).map_or("unspecified", |(n, _)| n)
    }

    /// intel_pstate_acpi_pm_profile_server().
    pub fn is_server(self) -> bool {
        matches!(self, AcpiPmProfile::EnterpriseServer | AcpiPmProfile::PerformanceServer)
    }
}

/// The kernel's own wakeups of an idle CPU (timer softirqs, RCU, vmstat,
/// kworkers) as measured on a kind of machine; each profile's numbers and
/// sources are in machine/housekeeping.rs. A platform file names its
/// profile with `housekeeping = "..."`; one that names none gets `server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HousekeepingProfile {
    /// An x86 server or desktop (the published per-CPU idle rate).
    #[default]
    Server,
    /// An Arm development board (the Juno recording).
    Board,
    /// An Android phone SoC (the SD835 recording).
    Phone,
    /// IBM POWER under powernv (the kernel's own per-CPU timers).
    Powernv,
}

impl HousekeepingProfile {
    /// The file's spelling of each profile.
    pub const NAMES: [(&'static str, HousekeepingProfile); 4] = [
        ("server", HousekeepingProfile::Server),
        ("board", HousekeepingProfile::Board),
        ("phone", HousekeepingProfile::Phone),
        ("powernv", HousekeepingProfile::Powernv),
    ];

    /// The file's spelling.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, p)| *p == self).map_or("server", |(n, _)| n)
    }
}

/// The first kernel release whose drivers run a machine, and why: a run
/// under an older kernel is refused (`kernel::KernelConfig::check_platform`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinKernel {
    pub major: u32,
    pub minor: u32,
    /// The driver and the change that made it run here, for the error.
    pub why: String,
}

/// A logical CPU (an SMT thread).
#[derive(Debug, Clone)]
pub struct Cpu {
    pub core: usize,
    /// Its core's CPU type (`Core::cpu_type`), copied at build.
    pub cpu_type: usize,
    pub package: usize,
    pub llc: usize,
    pub freq_domain: usize,
    /// Other threads of the same core (empty without SMT).
    pub siblings: Vec<CpuId>,
}

/// A physical core: its threads share its clock, pipeline and power.
#[derive(Debug, Clone)]
pub struct Core {
    pub cpus: Vec<CpuId>,
    pub package: usize,
    pub cpu_type: usize,
    pub freq_domain: usize,
}

/// A socket: owns the uncore power and the turbo budget.
#[derive(Debug, Clone)]
pub struct Package {
    pub cores: Vec<usize>,
    /// Uncore power (LLC, ring, memory controller share, IO) drawn while the
    /// package is in PC0, beside the uncore clock's own power (`uncore`).
    pub uncore_mw: f64,
    /// The uncore clock, where it scales (None: its power is in `uncore_mw`).
    pub uncore: Option<Uncore>,
    /// The package's DRAM (a RAPL DRAM domain of its own).
    pub dram: Dram,
    /// Package C-states in increasing depth (empty: none modelled).
    pub cstates: Vec<PackageCState>,
    /// The limit the package's power controller holds its power to (None:
    /// no limit modelled, or `power_limit=off`).
    pub power_limit: Option<PowerLimit>,
}

/// A package power limit, held by the package's own controller: Intel's
/// PCU for RAPL's long-term limit PL1 (MSR_PKG_POWER_LIMIT; the kernel's
/// powercap `constraint_0`, "long_term", drivers/powercap/intel_rapl_common.c),
/// POWER's OCC for its power cap (the kernel reads the cap through OPAL,
/// arch/powerpc/platforms/powernv/opal-powercap.c, and reports the throttle,
/// drivers/cpufreq/powernv-cpufreq.c). The controller lowers the package's
/// clock ceiling while the package's power averaged over `window_ns`
/// exceeds `limit_mw`, and raises it again when the power falls below.
#[derive(Debug, Clone, Copy)]
pub struct PowerLimit {
    /// The limit on the package domain (cores and uncore, not DRAM), mW.
    pub limit_mw: f64,
    /// Time constant of the power average the limit applies to, ns.
    pub window_ns: u64,
}

/// The names `power_domains` may use.
pub const POWER_DOMAINS: [&str; 5] = ["package", "cores", "dram", "chip", "memory"];

/// How the uncore clock follows the cores. Under both, the clock is that
/// of the package's fastest running core, held within `min_khz`..`max_khz`,
/// and its lowest while no core runs: what differs is where the clock and
/// its limits come from.
///
/// * Xeon E5 v3/v4 under the firmware's default ("Dynamic") uncore
///   frequency: "the Uncore frequency matches the frequency of the fastest
///   core", and when cores drop to C1E "the frequency of the Uncore is
///   likely to be lowered as well" (F. Denneman, "NUMA Deep Dive Part 2:
///   System Architecture", 2016, on Xeon E5 v3/v4 BIOS options); the limits
///   are MSR_UNCORE_RATIO_LIMIT's (0x620), in the cores' 100 MHz ratios.
///   What the PCU also weighs (core stalls, the energy-performance bias) is
///   not modelled: no source gives its rule.
/// * Client parts: the ring is clocked with the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UncorePolicy {
    /// Uncore frequency scaling (Haswell-EP and later Xeons): a clock of
    /// its own, between its ratio limits.
    Ufs,
    /// The ring runs at the clock of the fastest active core (client parts).
    FollowCores,
}

/// The uncore clock of a package (ring, LLC).
#[derive(Debug, Clone)]
pub struct Uncore {
    pub min_khz: u32,
    pub max_khz: u32,
    /// Uncore voltage at `min_khz` and at `max_khz`; linear between.
    pub min_mv: u32,
    pub max_mv: u32,
    /// Dynamic power coefficient: `ceff_nf` · V² · f(MHz) mW.
    pub ceff_nf: f64,
    pub policy: UncorePolicy,
}

impl Uncore {
    /// Uncore voltage at `khz`, mV.
    pub fn mv_at(&self, khz: u32) -> f64 {
        if self.max_khz <= self.min_khz {
            return f64::from(self.max_mv);
        }
        let x = f64::from(khz.saturating_sub(self.min_khz)) / f64::from(self.max_khz - self.min_khz);
        f64::from(self.min_mv) + x * (f64::from(self.max_mv) - f64::from(self.min_mv))
    }

    /// Dynamic power of the uncore clock at `khz`, mW.
    pub fn power_mw(&self, khz: u32) -> f64 {
        let v = self.mv_at(khz) / 1000.0;
        self.ceff_nf * v * v * f64::from(khz) / 1000.0
    }
}

/// A package's DRAM power: an idle floor (refresh, PHYs), a lower floor in
/// self-refresh (entered with the package's deep C-states) and an activity
/// term per core in C0 (the memory traffic of a running core).
#[derive(Debug, Clone, Default)]
pub struct Dram {
    pub idle_mw: f64,
    pub self_refresh_mw: f64,
    pub active_mw_per_core: f64,
}

/// A package C-state: entered while every core of the package is in
/// `core_state` or deeper.
#[derive(Debug, Clone)]
pub struct PackageCState {
    pub name: String,
    /// Index of the core idle state every core must be in (or deeper), in
    /// the package's CPU type's idle states.
    pub core_state: usize,
    /// Latency added to the exit of the core that wakes the package.
    pub exit_latency_ns: u64,
    /// Uncore power in this state (instead of `uncore_mw` and the clock).
    pub power_mw: f64,
    /// The package's DRAM is in self-refresh in this state.
    pub dram_self_refresh: bool,
    /// Coordinated across packages: entered only while every package of
    /// the machine could enter it (Intel's "coordinated" package C-states,
    /// granted across all sockets and the PCH).
    pub coordinated: bool,
}

/// CPUs that share one clock: one cpufreq policy.
#[derive(Debug, Clone)]
pub struct FreqDomain {
    pub cpus: Vec<CpuId>,
    pub cores: Vec<usize>,
    pub package: usize,
    pub voltage_domain: usize,
    pub cpu_type: usize,
}

/// Frequency domains that share one voltage rail: the rail sits at the
/// highest voltage any of them needs.
#[derive(Debug, Clone)]
pub struct VoltageDomain {
    pub freq_domains: Vec<usize>,
    /// How fast the regulator raises the voltage, mV per µs.
    pub slew_mv_per_us: f64,
}

/// One kind of core: its operating points, idle states and power figures.
#[derive(Debug, Clone)]
pub struct CpuType {
    pub name: String,
    /// Capacity of this core at its highest frequency, 1024 for the biggest.
    pub capacity: u32,
    /// Operating points sorted by frequency, turbo ones last.
    pub opps: Vec<Opp>,
    /// Guaranteed (base, P1) frequency: the highest non-turbo OPP.
    pub base_khz: u32,
    /// Highest frequency allowed with n active cores in the package:
    /// `turbo_max_khz[n - 1]`; the last entry holds for more cores. Empty when
    /// the part has no turbo.
    pub turbo_max_khz: Vec<u32>,
    /// Time for the clock to switch once the voltage is in place
    /// (cpuinfo.transition_latency).
    pub transition_latency_ns: u64,
    /// Idle states in increasing depth. State 0 is the shallowest: the
    /// polling loop (x86, POWER) or WFI (Arm, not polling).
    pub idle_states: Vec<IdleState>,
    /// Dynamic power coefficient: busy power = `ceff_nf` · V² · f(MHz) mW.
    pub ceff_nf: f64,
    /// Leakage of a powered core: `leakage_mw_per_v` · V mW, drawn while the
    /// core is not power-gated.
    pub leakage_mw_per_v: f64,
    /// The device tree's `dynamic-power-coefficient` (µW/MHz/V²): the
    /// kernel's Energy Model of this core (`sched::energy_model`). None: the
    /// firmware gives no Energy Model, and EAS stays off.
    pub dynamic_power_coefficient: Option<u32>,
    /// Combined throughput of a core when all its SMT threads are busy, as a
    /// multiple of one thread alone (each thread then runs at this / threads).
    pub smt_throughput: f64,
    /// Extra dynamic power when more than one thread of a core is busy, as a
    /// multiple of the single-thread figure.
    pub smt_power: f64,
    /// The core's ACPI CPPC levels (AMD Zen); None where the firmware
    /// gives none the drivers read.
    pub cppc: Option<cppc::Cppc>,
    /// kHz per HWP performance level (the platform file's `hwp_perf_khz`):
    /// [`INTEL_PSTATE_SCALING_KHZ`], one P-state ratio, on every non-hybrid
    /// part; [`HYBRID_SCALING_FACTOR_ADL_KHZ`] on hybrid P-cores, whose HWP
    /// levels are a performance scale, not ratios (intel_pstate's
    /// `cpu->pstate.scaling`).
    pub hwp_khz_per_perf: u32,
}

/// An operating performance point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opp {
    pub khz: u32,
    pub mv: u32,
    pub turbo: bool,
}

/// A cpuidle state as the kernel's driver table describes it.
#[derive(Debug, Clone)]
pub struct IdleState {
    pub name: String,
    pub desc: String,
    /// The driver's exit latency: what cpuidle and its governors read. On
    /// Intel parts it is the worst case, the wake with the package in the
    /// matching package C-state (docs/research/sources.md C.12).
    pub exit_latency_ns: u64,
    /// The hardware's delay leaving this state while its package stays in
    /// PC0 (another core awake), where that was measured (the file's
    /// `wake_latency_us`): below the worst case of `exit_latency_ns`. None:
    /// every wake takes `exit_latency_ns`. Governors never read it.
    pub wake_latency_ns: Option<u64>,
    pub target_residency_ns: u64,
    /// Power of the core in this state beyond leakage (or instead of it when
    /// `power_gated`), mW.
    pub power_mw: f64,
    /// Spins on need_resched and wakes without latency (only state 0 may).
    pub polling: bool,
    /// The core's power is cut: no leakage, only `power_mw`.
    pub power_gated: bool,
    /// Energy of one entry and exit beyond the exit latency priced at C0
    /// power (state save and restore, cache flush and refill), µJ.
    pub entry_exit_uj: f64,
    /// A core in this state still counts as active for the turbo budget
    /// (Intel counts C0 and C1/C1E cores as active).
    pub turbo_active: bool,
    /// The BIOS's ACPI _CST lists the state (the platform file's
    /// `in_acpi_cst`, true unless it says otherwise). intel_idle on a
    /// `use_acpi` server model disables a table state _CST omits by default
    /// from v5.6 (era `intel_idle_acpi_cst`,
    /// `KernelConfig::idle_state_off_by_default`); before, the driver enables it.
    pub in_acpi_cst: bool,
}

/// A storage device for `io` operations.
#[derive(Debug, Clone)]
pub struct Device {
    pub name: String,
    /// Requests the device serves in parallel.
    pub queue_depth: u32,
    /// Mean service time of a read of `block_bytes`.
    pub read_ns: u64,
    /// Mean service time of a write of `block_bytes`.
    pub write_ns: u64,
    /// Mean service time of a cache flush (fsync).
    pub flush_ns: u64,
    /// Whether a flush is queued with other commands (NVMe) or must run
    /// alone on a drained device (SATA: FLUSH CACHE EXT is not an NCQ
    /// command).
    pub flush_queued: bool,
    /// Reference request size for the service times.
    pub block_bytes: u64,
    /// Sustained transfer rate beyond the reference size, bytes per µs
    /// (reads and flushes; writes when `write_bytes_per_us` equals it).
    pub bytes_per_us: f64,
    /// Sustained write transfer rate, bytes per µs.
    pub write_bytes_per_us: f64,
    /// Coefficient of variation of the service time (0 = fixed; gamma
    /// distribution otherwise).
    pub service_cv: f64,
    /// The CPU the completion interrupt is routed to: None for a device
    /// with a completion queue and interrupt per CPU (NVMe with managed
    /// MSI-X affinity: the submitting CPU), Some(cpu) for a device with one
    /// interrupt line (a GIC SPI, which goes to the first CPU of its
    /// affinity, CPU 0 unless moved).
    pub irq_cpu: Option<usize>,
    /// How a REQ_FUA write reaches the drive.
    pub fua: Fua,
}

/// Whether a write with REQ_FUA goes to the drive as a FUA write or is
/// emulated by the block layer with a flush after it (block/blk-flush.c
/// `blk_flush_policy()`: the queue's QUEUE_FLAG_FUA, which the driver sets
/// when the drive advertises FUA and the driver uses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fua {
    /// No FUA: a flush after the write (a drive or driver without it).
    None,
    /// A SATA drive behind libata: FUA when `libata.fua` is on, by default
    /// from v6.2 (kernel::KernelConfig::libata_fua), emulated before.
    Libata,
    /// The driver always uses the drive's FUA: NVMe with a volatile write
    /// cache (v5.2 drivers/nvme/host/core.c `nvme_set_queue_limits()`:
    /// `blk_queue_write_cache(q, vwc, vwc)`), a SCSI disk reporting DPOFUA
    /// (drivers/scsi/sd.c).
    Native,
}

impl Platform {
    #[inline]
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    #[inline]
    pub fn cpu_type_of(&self, cpu: CpuId) -> &CpuType {
        &self.cpu_types[self.cpus[cpu].cpu_type]
    }

    /// The work one cycle of CPU type `t` does, in cycles of the biggest
    /// type (the one of the highest capacity). A type's `capacity` is its
    /// throughput at its own highest frequency relative to the biggest at
    /// its highest (the kernel's cpu_capacity: capacity-dmips-mhz × f_max,
    /// normalised to 1024), so per cycle it is capacity × f_max(biggest) /
    /// (capacity(biggest) × f_max(t)): capacity-dmips-mhz / 1024 on Arm.
    /// 1 on machines of one type.
    pub fn work_per_cycle(&self, t: usize) -> f64 {
        let ct = &self.cpu_types[t];
        let Some(big) = self.cpu_types.iter().max_by_key(|c| c.capacity) else { return 1.0 };
        if big.capacity == ct.capacity && big.max_khz() == ct.max_khz() {
            return 1.0;
        }
        f64::from(ct.capacity) * f64::from(big.max_khz()) / (f64::from(big.capacity) * f64::from(ct.max_khz()))
    }

    /// Whether a core has more than one thread (the kernel's
    /// `sched_smt_active()` once every CPU is online).
    pub fn has_smt(&self) -> bool {
        self.cores.iter().any(|c| c.cpus.len() > 1)
    }

    /// Intel hybrid: a CPU type's HWP levels are not P-state ratios
    /// (intel_pstate's `hwp_is_hybrid`, set when a CPU's scaling differs
    /// from `perf_ctl_scaling`).
    pub fn hwp_hybrid(&self) -> bool {
        self.cpu_types.iter().any(|t| t.hwp_khz_per_perf != INTEL_PSTATE_SCALING_KHZ)
    }

    #[inline]
    pub fn domain_type(&self, domain: usize) -> &CpuType {
        &self.cpu_types[self.freq_domains[domain].cpu_type]
    }

    pub fn device_index(&self, name: &str) -> Option<usize> {
        self.devices.iter().position(|d| d.name == name)
    }
}

impl CpuType {
    pub fn min_khz(&self) -> u32 {
        self.opps[0].khz
    }

    /// Highest frequency, turbo included.
    pub fn max_khz(&self) -> u32 {
        self.opps[self.opps.len() - 1].khz
    }

    /// Lowest OPP at or above `khz` (cpufreq RELATION_L), the highest if none.
    pub fn opp_at_least(&self, khz: u32) -> usize {
        self.opps
            .iter()
            .position(|o| o.khz >= khz)
            .unwrap_or(self.opps.len() - 1)
    }

    /// Highest OPP at or below `khz` (cpufreq RELATION_H), the lowest if none.
    pub fn opp_at_most(&self, khz: u32) -> usize {
        self.opps.iter().rposition(|o| o.khz <= khz).unwrap_or(0)
    }

    /// OPP closest to `khz` (cpufreq RELATION_C); ties go to the higher one.
    pub fn opp_closest(&self, khz: u32) -> usize {
        let hi = self.opp_at_least(khz);
        let lo = self.opp_at_most(khz);
        let dist = |i: usize| self.opps[i].khz.abs_diff(khz);
        if dist(lo) < dist(hi) {
            lo
        } else {
            hi
        }
    }

    /// Index of an OPP with exactly this frequency.
    pub fn opp_index(&self, khz: u32) -> Option<usize> {
        self.opps.iter().position(|o| o.khz == khz)
    }

    /// Turbo ceiling with `active_cores` active in the package.
    pub fn turbo_limit_khz(&self, active_cores: usize) -> u32 {
        if self.turbo_max_khz.is_empty() {
            return self.max_khz();
        }
        let i = active_cores.clamp(1, self.turbo_max_khz.len()) - 1;
        self.turbo_max_khz[i]
    }
}

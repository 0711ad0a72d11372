//! cpufreq: the governor interface, its view of a policy, and the registry.
//!
//! As in the kernel, a governor drives *policies*, laid out by the driver
//! ([`driver::PolicyLayout`]: a logical CPU on intel_pstate and
//! acpi-cpufreq, a clock on cpufreq-dt, a core on powernv); where policies
//! share a clock, the hardware runs the highest request of the active ones. It may install the scheduler's utilisation
//! hook ([`CpufreqGovernor::update_util`], called like
//! `cpufreq_update_util()`: on PELT period boundaries, attach/detach, and
//! with [`SCHED_CPUFREQ_IOWAIT`] when a task that waited for IO is enqueued)
//! and/or a sampling timer of its own ([`CpufreqGovernor::timer`], armed
//! through [`Policy::arm_timer`], deferrable or not). It answers with a
//! target frequency and a relation, or, for HWP, with a request of
//! min/max/desired/EPP that the hardware then acts on. The *driver*
//! ([`driver`]) turns the answer into a frequency, as the platform's scaling
//! driver does in the kernel: a frequency table, intel_pstate's P-states,
//! HWP hardware, or powernv's local and global P-states. A governor that
//! needs something the platform's driver lacks is refused when the run is
//! built ([`driver::resolve`]).
//!
//! Glossary (kernel abbreviations kept so a grep finds both trees): dbs =
//! demand-based switching (ondemand/conservative's shared machinery), od =
//! ondemand, cs = conservative, sugov = schedutil, hwp = hardware P-states,
//! epp = energy-performance preference, pstate = a performance ratio (×100
//! MHz on Intel Core; on POWER an index into the firmware's table), gpstate /
//! lpstate = powernv's global (chip voltage) and local (core frequency)
//! P-states.

pub mod amd_pstate;
pub mod conservative;
pub mod dbs;
pub mod driver;
pub mod intel_pstate;
pub mod ondemand;
pub mod powernv;
pub mod performance;
pub mod powersave;
pub mod schedutil;
pub mod userspace;

use crate::error::{Error, Result};
use crate::kernel::{BuildCtx, EraId, KernelConfig, Patch};
use crate::params::{ParamSpec, Spec};
use crate::platform::{CpuId, Opp, Platform};

use crate::platform::hwp;
pub use crate::platform::hwp::{HwpCaps, HwpRequest};

/// `cpufreq_update_util()` flag: the enqueued task waited for IO.
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1 << 0;
/// `cpufreq_update_util()` flag: a task was attached to the CPU's runqueue
/// after migrating (or being created). Kernels before v5.6 passed it
/// (a4f9a0e51bbf "sched/fair: Remove redundant call to
/// cpufreq_update_util()" made the attach call pass 0, as v6.8 does); only
/// intel_pstate's `hwp_boost_migration` reads it, every other governor
/// treats the call as a plain update.
pub const SCHED_CPUFREQ_MIGRATION: u32 = 1 << 1;

/// How a target frequency maps to a table frequency (cpufreq's relations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Lowest frequency at or above the target (CPUFREQ_RELATION_L).
    L,
    /// Highest frequency at or below the target (CPUFREQ_RELATION_H).
    H,
    /// Closest frequency (CPUFREQ_RELATION_C).
    C,
}

/// What the engine lets a governor see of the scheduler, per CPU.
pub trait SchedView {
    /// CFS utilisation as schedutil reads it: min(capacity, max(util_avg, util_est)).
    fn cpu_util(&self, cpu: CpuId) -> u64;
    /// `cpu_util_cfs_boost` (v6.5+): as [`Self::cpu_util`], with the
    /// runqueue's runnable_avg also raising the base. The default: no boost.
    fn cpu_util_boost(&self, cpu: CpuId) -> u64 {
        self.cpu_util(cpu)
    }
    /// arch_scale_cpu_capacity of the CPU.
    fn capacity(&self, cpu: CpuId) -> u64;
    /// effective_cpu_util (v6.8) of the CPU for a CFS utilisation
    /// `util_cfs`: (util, min, max), where util adds the RT and DL
    /// signals, min is the floor (DL bandwidth, uclamp min, or the full
    /// capacity while RT tasks are runnable and uclamp is unused) and max
    /// the uclamp max. The default: CFS only, (util_cfs, 0, capacity).
    fn effective_cpu_util(&self, cpu: CpuId, util_cfs: u64) -> (u64, u64, u64) {
        let cap = self.capacity(cpu);
        (util_cfs.min(cap), 0, cap)
    }
    /// cpu_bw_dl (v6.8): the CPU's running deadline bandwidth, capacity units.
    fn cpu_bw_dl(&self, _cpu: CpuId) -> u64 {
        0
    }
    /// Cumulative idle time of the CPU up to `now_ns` (get_cpu_idle_time).
    fn idle_ns(&self, cpu: CpuId, now_ns: u64) -> u64;
    /// Cumulative time the CPU was idle with a task in iowait on it.
    fn iowait_ns(&self, cpu: CpuId, now_ns: u64) -> u64;
    /// Tasks on the runqueue, the running one included.
    fn nr_running(&self, cpu: CpuId) -> u32;
    /// How many times the CPU entered idle with the tick stopped
    /// (tick_nohz_get_idle_calls_cpu), for schedutil's busy-CPU hold. None
    /// (the default) when the engine does not count them; schedutil then
    /// falls back to "cumulative idle time advanced". A constant default
    /// such as 0 would read as "never idle" and freeze schedutil's
    /// frequency decreases.
    fn idle_calls(&self, _cpu: CpuId) -> Option<u64> {
        None
    }
    /// The CPU's APERF and MPERF up to `now_ns`, as (∫ clock dt over its
    /// C0 time in kHz·ns, its C0 time in ns): both count only in C0, a
    /// polling idle included, and stop in C1 and deeper (Intel SDM vol. 3B
    /// §14.2); here an idle state's exit counts as C0 too (the exiting CPU
    /// votes for its clock). intel_pstate's average P-state is APERF over
    /// MPERF.
    fn aperf_mperf(&self, cpu: CpuId, now_ns: u64) -> (u128, u64);
    /// arch_scale_freq_invariant(): whether utilisation is frequency
    /// invariant (kernel::FreqInvariance is not `off`). Without invariance
    /// schedutil scales from `policy->cur`.
    fn freq_invariant(&self) -> bool {
        true
    }
}

/// What a governor asked for during one call; applied by the engine after.
#[derive(Debug, Clone, Copy, Default)]
pub struct PolicyRequests {
    pub target: Option<(u32, Relation)>,
    /// The target came through the fast-switch path (cpufreq_driver_fast_switch,
    /// schedutil's), which some drivers handle differently.
    pub fast_switch: bool,
    /// An HWP request to write (intel_pstate in active mode with HWP).
    pub hwp: Option<HwpRequest>,
    /// (min_perf, target_perf, capacity) for the driver's `adjust_perf`
    /// (cpufreq_driver_adjust_perf: schedutil's perf path).
    pub adjust_perf: Option<(u64, u64, u64)>,
    /// (delay from now, deferrable)
    pub timer: Option<(u64, bool)>,
    pub cancel_timer: bool,
}

/// A governor's view of one policy during a call.
pub struct Policy<'a> {
    /// Index of the policy ([`driver::PolicyLayout`]).
    pub id: usize,
    pub cpus: &'a [CpuId],
    /// The driver's frequency table, ascending.
    pub opps: &'a [Opp],
    /// Frequency the policy last set (policy->cur), kHz.
    pub cur_khz: u32,
    /// Policy limits (scaling_min_freq / scaling_max_freq), kHz.
    pub min_khz: u32,
    pub max_khz: u32,
    /// Hardware limits (cpuinfo_min_freq / cpuinfo_max_freq), kHz.
    pub cpuinfo_min_khz: u32,
    pub cpuinfo_max_khz: u32,
    /// cpuinfo.transition_latency, ns.
    pub transition_latency_ns: u64,
    /// TICK_NSEC of the simulated kernel.
    pub tick_ns: u64,
    /// The CPUs' HWP capabilities when the governor writes HWP requests:
    /// intel_pstate's active mode on a platform with HWP on. None where the
    /// driver takes frequencies (intel_cpufreq writes its own HWP requests).
    pub hwp: Option<HwpCaps>,
    /// The CPUs' CPPC levels where the firmware gives them (AMD), for
    /// amd-pstate's active mode, whose policies write CPPC requests.
    pub cppc: Option<crate::platform::cppc::Cppc>,
    /// The driver has an `adjust_perf` callback
    /// (`cpufreq_driver_has_adjust_perf`): intel_cpufreq with HWP from
    /// v5.11 (a365ab6b9dfb).
    pub adjust_perf: bool,
    pub sched: &'a dyn SchedView,
    pub out: &'a mut PolicyRequests,
}

impl Policy<'_> {
    /// Ask the driver for `khz`, resolved with `relation` and clamped to the
    /// policy limits (__cpufreq_driver_target).
    pub fn set_target(&mut self, khz: u32, relation: Relation) {
        self.out.target = Some((khz.clamp(self.min_khz, self.max_khz), relation));
        self.out.fast_switch = false;
    }

    /// Ask for `khz` through the driver's fast-switch path
    /// (cpufreq_driver_fast_switch: RELATION_L, within the limits).
    pub fn fast_switch(&mut self, khz: u32) {
        self.set_target(khz, Relation::L);
        self.out.fast_switch = true;
    }

    /// Pass performance levels to the driver, in units of `capacity`
    /// (cpufreq_driver_adjust_perf, v5.11 ee2cc4276ba4): `min_perf` is
    /// required, `target_perf` wanted. Only where [`Policy::adjust_perf`].
    pub fn adjust_perf(&mut self, min_perf: u64, target_perf: u64, capacity: u64) {
        debug_assert!(self.adjust_perf, "policy {}: the driver has no adjust_perf", self.id);
        self.out.adjust_perf = Some((min_perf, target_perf, capacity));
    }

    /// Write an HWP request (MSR_HWP_REQUEST) for the policy's CPUs; the
    /// hardware then picks the frequency inside it.
    pub fn set_hwp_request(&mut self, req: HwpRequest) {
        self.out.hwp = Some(req);
    }

    /// Why the governor may not write `req`, if it may not: no HWP here, a
    /// field of more than 8 bits, min above max, a level outside the policy
    /// limits, or a desired level outside [min, max]. The kernel's own
    /// writers (intel_pstate_hwp_set, the dynamic boost) never do these.
    pub fn check_hwp_request(&self, req: &HwpRequest) -> std::result::Result<(), String> {
        let Some(caps) = self.hwp else {
            return Err(format!(
                "policy {} takes no HWP requests: only intel_pstate's active mode (a governor with driver \
                 \"intel_pstate\") writes them, on a platform with HWP on; the other drivers take frequencies",
                self.id
            ));
        };
        let fields = [("min_perf", req.min_perf), ("max_perf", req.max_perf), ("desired_perf", req.desired_perf), ("epp", req.epp)];
        if let Some((name, v)) = fields.iter().find(|(_, v)| *v > hwp::HWP_FIELD_MAX) {
            return Err(hwp::field_too_wide(name, v));
        }
        if req.min_perf > req.max_perf {
            return Err(format!("min_perf {} is above max_perf {}", req.min_perf, req.max_perf));
        }
        let (lo, hi) = (caps.limit_perf(self.min_khz), caps.limit_perf(self.max_khz));
        if req.min_perf < lo || req.max_perf > hi {
            return Err(format!(
                "min_perf..max_perf {}..{} is outside the limits of policy {}, levels {lo} to {hi} ({} to {} kHz)",
                req.min_perf, req.max_perf, self.id, self.min_khz, self.max_khz
            ));
        }
        if req.desired_perf != 0 && !(req.min_perf..=req.max_perf).contains(&req.desired_perf) {
            return Err(format!(
                "desired_perf {} is neither 0 (the hardware chooses) nor within min_perf..max_perf {}..{}",
                req.desired_perf, req.min_perf, req.max_perf
            ));
        }
        Ok(())
    }

    /// The guaranteed (base, P1) frequency: the highest non-turbo one, kHz.
    pub fn base_khz(&self) -> u32 {
        self.opps.iter().rev().find(|o| !o.turbo).map_or(self.cpuinfo_max_khz, |o| o.khz)
    }

    /// Arm (or re-arm) the governor's timer `delay_ns` from now. A
    /// deferrable timer does not wake an idle CPU: it fires at the first
    /// wakeup of any CPU of the policy after it expired.
    pub fn arm_timer(&mut self, delay_ns: u64, deferrable: bool) {
        self.out.timer = Some((delay_ns, deferrable));
        self.out.cancel_timer = false;
    }

    pub fn cancel_timer(&mut self) {
        self.out.timer = None;
        self.out.cancel_timer = true;
    }
}

/// A hook call the governor turns away ([`CpufreqGovernor::update_util_rejected`]):
/// what its callback reads before the check that rejects it. There is no
/// policy view and nowhere to put a request: a rejected call asks for
/// nothing.
pub struct RejectedCall<'a> {
    /// Index of the policy ([`driver::PolicyLayout`]).
    pub policy: usize,
    /// The CPU whose hook it is (not the calling one).
    pub cpu: CpuId,
    pub time_ns: u64,
    pub flags: u32,
    /// TICK_NSEC of the simulated kernel.
    pub tick_ns: u64,
    pub sched: &'a dyn SchedView,
}

/// Which hook calls made from another CPU (remote callbacks, v4.14+) a
/// governor acts on; calls from other CPUs are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteHookCalls {
    /// `cpufreq_this_cpu_can_update()` (kernel/sched/cpufreq.c, v6.8): the
    /// calling CPU is one of the policy's, or the policy sets
    /// `dvfs_possible_from_any_cpu`. govlab takes that flag as unset for
    /// every driver (which drivers set it in v6.8 is not checked).
    PolicyCpus,
    /// Only the CPU whose hook it is: v6.8 `intel_pstate_update_util()`
    /// returns early when `smp_processor_id() != cpu->cpu`.
    OwnCpu,
}

/// A cpufreq governor (one instance drives every policy of the machine;
/// per-policy state lives inside it, indexed by [`Policy::id`]).
pub trait CpufreqGovernor: Send {
    fn name(&self) -> &'static str;

    /// Whether the engine must call [`CpufreqGovernor::update_util`].
    fn uses_util_hook(&self) -> bool {
        false
    }

    /// The driver this governor is part of: intel_pstate's active mode is a
    /// setpolicy driver whose governor lives inside it. None for the generic
    /// governors, which run on any driver that takes frequency targets.
    fn driver(&self) -> Option<&'static str> {
        None
    }

    /// The governor wants exactly the frequency it asks for
    /// (CPUFREQ_GOV_STRICT_TARGET: performance and powersave), which
    /// intel_cpufreq with HWP honours with min = max.
    fn strict_target(&self) -> bool {
        false
    }

    /// The governor changes the frequency by itself as load changes
    /// (CPUFREQ_GOV_DYNAMIC_SWITCHING: ondemand, conservative, schedutil),
    /// which amd-pstate's guided mode turns into a CPPC minimum.
    fn dynamic_switching(&self) -> bool {
        false
    }

    /// Which CPUs' hook calls for a CPU of this policy the governor acts on
    /// (v6.8; the scheduler calls the hook of `cpu_of(rq)` from whichever
    /// CPU holds the runqueue lock). Default: `cpufreq_this_cpu_can_update`,
    /// as v6.8 schedutil (`sugov_should_update_freq`) and the ondemand and
    /// conservative hook (`dbs_update_util_handler`) use it.
    fn remote_hook_calls(&self) -> RemoteHookCalls {
        RemoteHookCalls::PolicyCpus
    }

    /// The governor takes over a policy (cpufreq_governor->start / limits).
    fn start(&mut self, policy: &mut Policy<'_>);

    /// The scheduler's utilisation hook for `cpu` of this policy.
    fn update_util(&mut self, _policy: &mut Policy<'_>, _cpu: CpuId, _time_ns: u64, _flags: u32) {}

    /// A hook call that [`Self::remote_hook_calls`] turns away: what the
    /// governor's callback records before its check rejects the call (v6.8
    /// schedutil keeps the iowait boost and `last_update`, intel_pstate
    /// with HWP the call's flags). It asks for nothing. Default: nothing is
    /// recorded (the check comes first).
    fn update_util_rejected(&mut self, _call: &RejectedCall<'_>) {}

    /// Whether a rejected call comes with the policy's view instead
    /// ([`Self::update_util_rejected_view`]): a governor from outside the
    /// crate (Python), which reads the policy through the view it gets on
    /// every other call. Default: no.
    fn rejected_calls_need_view(&self) -> bool {
        false
    }

    /// A rejected call, for a governor that asked for the view
    /// ([`Self::rejected_calls_need_view`]). It asks for nothing.
    fn update_util_rejected_view(&mut self, _policy: &mut Policy<'_>, _cpu: CpuId, _time_ns: u64, _flags: u32) {}

    /// The governor's own timer fired.
    fn timer(&mut self, _policy: &mut Policy<'_>, _time_ns: u64) {}

    /// Resolved tunables, sysfs names and units.
    fn tunables(&self) -> Vec<(String, String)>;

    /// An error met during a call, handed over once; the engine stops the
    /// run with it (see [`crate::external`]). Only governors from outside
    /// the crate can fail at run time; built-in ones keep the default.
    fn take_error(&mut self) -> Option<Error> {
        None
    }
}

/// A registry entry, for `govlab list governors`.
pub struct GovernorInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Kernel behaviour and version it models.
    pub models: &'static str,
    /// The governor's tunables, declared once (see [`ParamSpec`]).
    pub params: &'static [ParamSpec<BuildCtx>],
    /// The kernel eras that change the governor (for `govlab list
    /// governors --kernel`).
    pub eras: &'static [EraId],
    /// The patches its tunables model (mainline from their era, on top
    /// before).
    pub patches: &'static [Patch],
    /// Build the governor for a run (it reads the eras that concern it
    /// from the context's kernel).
    pub build: fn(&Spec, &BuildCtx) -> Result<Box<dyn CpufreqGovernor>>,
}

pub fn registry() -> &'static [GovernorInfo] {
    &[
        performance::INFO,
        powersave::INFO,
        userspace::INFO,
        ondemand::INFO,
        conservative::INFO,
        schedutil::INFO,
        intel_pstate::INFO,
        amd_pstate::INFO,
    ]
}

/// Build the governor `spec` names and check that the platform's driver can
/// run it. On intel_pstate in active mode (the boot default with HWP, and
/// without HWP before v5.8), `powersave` and `performance` are the driver's
/// own two policies, as `scaling_governor` shows them there
/// ([`kernel_name`]); in passive mode they are the generic governors.
pub fn build(spec: &Spec, platform: &Platform) -> Result<Box<dyn CpufreqGovernor>> {
    let ctx = resolve_ctx(spec, BuildCtx::of(platform.clone()))?;
    build_for(spec, &ctx)
}

/// [`build`] for a run's context (resolved by [`resolve_ctx`]).
pub fn build_for(spec: &Spec, ctx: &BuildCtx) -> Result<Box<dyn CpufreqGovernor>> {
    let kernel = &ctx.kernel;
    let spec = &kernel_name(spec, ctx)?;
    if let Some(era) = kernel.missing_cpufreq_governor(&spec.name) {
        let has: Vec<&str> = registry().iter().map(|g| g.name).filter(|n| kernel.missing_cpufreq_governor(n).is_none()).collect();
        return Err(Error::Unsupported(format!(
            "cpufreq governor {} is not in kernel {}: it arrived in {} ({}); kernel {} has {}",
            spec.name,
            kernel.describe(),
            era.first,
            era.commit,
            kernel.describe(),
            has.join(", ")
        )));
    }
    match registry().iter().find(|g| g.name == spec.name) {
        Some(info) => {
            let gov = (info.build)(spec, ctx)?;
            driver::resolve(ctx, gov.as_ref())?;
            Ok(gov)
        }
        None => Err(Error::UnknownName {
            kind: "cpufreq governor",
            name: spec.name.clone(),
            choices: registry().iter().map(|g| g.name.to_string()).collect(),
        }),
    }
}

/// The driver's mode for the governor `spec` names, decided by the kernel:
/// a generic governor on intel_pstate runs its passive mode (intel_cpufreq,
/// [`driver::resolve`]); before v4.10 ("Generic governors support") there
/// is none, and the run is refused; before v5.9 (f6ebbcf08f37) passive
/// mode runs without HWP, so the run's context has HWP off (the platform,
/// the hardware, keeps it).
pub fn resolve_ctx(spec: &Spec, mut ctx: BuildCtx) -> Result<BuildCtx> {
    use crate::platform::{Driver, PstateMode};
    amd_pstate::check_mode(&ctx)?;
    if !matches!(ctx.platform.driver, Driver::IntelPstate { mode: None | Some(PstateMode::Passive) }) {
        return Ok(ctx);
    }
    let explicit_passive = matches!(ctx.platform.driver, Driver::IntelPstate { mode: Some(PstateMode::Passive) });
    let name = kernel_name(spec, &ctx)?.name;
    if name == intel_pstate::INFO.name && !explicit_passive {
        return Ok(ctx);
    }
    if !ctx.has(EraId::IntelPstatePassive) {
        let era = EraId::IntelPstatePassive.era();
        return Err(Error::Unsupported(format!(
            "cpufreq governor {} runs on intel_pstate's passive mode, which kernel {} does not have (it arrived in {}, \
             \"{}\"): use intel_pstate's own policies (powersave, performance or intel_pstate:...) or a platform with \
             the acpi-cpufreq driver",
            spec.name,
            ctx.kernel.describe(),
            era.first,
            era.subject
        )));
    }
    if !ctx.has(EraId::IntelPstatePassiveHwp) {
        ctx.hwp = false;
    }
    Ok(ctx)
}

/// What a `scaling_governor` name means on the platform's driver under
/// `kernel`. On intel_pstate in active mode (v6.8 intel_pstate.c,
/// intel_pstate_set_policy; Documentation/admin-guide/pm/intel_pstate.rst,
/// "Active Mode") the driver offers only `performance` and `powersave`, and
/// both are its own P-state selection algorithms, not the generic
/// governors: they become `intel_pstate:policy=NAME`, keeping the spec's
/// other settings (the driver's tunables, as its sysfs files are). In
/// passive mode and on every other driver a name means the generic
/// governor. Unless `intel_pstate=` forces a mode, the mode is the one the
/// kernel boots in ([`intel_pstate_boots_active`]).
pub fn kernel_name(spec: &Spec, ctx: &BuildCtx) -> Result<Spec> {
    if ctx.platform.amd_pstate == Some(crate::platform::AmdPstateMode::Active) {
        return own_policy(spec, amd_pstate::INFO.name, "amd-pstate-epp (amd_pstate=active)");
    }
    if !intel_pstate_boots_active(&ctx.platform, &ctx.kernel) || !matches!(spec.name.as_str(), "powersave" | "performance") {
        return Ok(spec.clone());
    }
    own_policy(spec, intel_pstate::INFO.name, "intel_pstate in active mode")
}

/// `powersave` or `performance` as a setpolicy driver's own policy: the
/// governor `own` with `policy=NAME` and the spec's other settings.
fn own_policy(spec: &Spec, own: &'static str, driver: &str) -> Result<Spec> {
    if !matches!(spec.name.as_str(), "powersave" | "performance") {
        return Ok(spec.clone());
    }
    if let Some((_, v)) = spec.params.iter().find(|(k, _)| k == "policy") {
        return Err(Error::invalid(
            format!("cpufreq governor {}", spec.name),
            "policy",
            v,
            format!("no policy setting: on {driver} {} is the policy; write {own}:policy=... instead", spec.name),
        ));
    }
    let mut params = vec![("policy".to_string(), spec.name.clone())];
    params.extend(spec.params.iter().cloned());
    Ok(Spec { name: own.to_string(), params })
}

/// Whether intel_pstate runs in active mode on `platform` under `kernel`:
/// as `intel_pstate=active|passive` forces it, else as the kernel boots it
/// (v6.8 intel_pstate_init: active with HWP; without HWP, "start in the
/// passive mode" from v5.8, 33aa46f252c7, active before). False on other
/// drivers.
pub fn intel_pstate_boots_active(platform: &Platform, kernel: &KernelConfig) -> bool {
    use crate::platform::{Driver, PstateMode};
    match platform.driver {
        Driver::IntelPstate { mode: Some(m) } => m == PstateMode::Active,
        Driver::IntelPstate { mode: None } => platform.hwp || !kernel.intel_pstate_passive_default(),
        _ => false,
    }
}

/// The cpufreq governor `kernel` runs on the platform when nobody chose one
/// (the `scaling_governor` a user finds after booting):
///
/// * intel_pstate in active mode: its own `powersave` policy (v6.8
///   intel_pstate.c starts every policy in powersave unless the kernel's
///   default governor is performance, which no distribution kernel for
///   these machines picks). Active is the boot default with HWP, and
///   without HWP before v5.8;
/// * intel_pstate in passive mode (the boot default without HWP from v5.8,
///   33aa46f252c7: intel_pstate_init "Without HWP start in the passive
///   mode"), acpi-cpufreq and cpufreq-dt: `schedutil`, the v6.8
///   drivers/cpufreq/Kconfig default on ARM and ARM64 and on SMP x86 with
///   intel_pstate built in (the x86 line: a00ec3874e7d, "cpufreq:
///   intel_pstate: Select schedutil as the default governor");
/// * amd-pstate in active mode (`amd_pstate=active`): its own policy, the
///   driver's fallback since the distributions' default governor
///   (schedutil) is neither of its two ([`amd_pstate::fallback_policy`]);
///   in passive and guided mode `schedutil`, as on acpi-cpufreq;
/// * powernv: `ondemand`, CONFIG_CPU_FREQ_DEFAULT_GOV_ONDEMAND of v6.8
///   arch/powerpc/configs/powernv_defconfig (the Kconfig default there
///   would be performance; the platform's own defconfig picks ondemand).
pub fn default_governor(platform: &Platform, kernel: &KernelConfig) -> &'static str {
    use crate::platform::{AmdPstateMode, Driver, PstateMode};
    match platform.amd_pstate {
        Some(AmdPstateMode::Active) => return amd_pstate::fallback_policy(platform),
        Some(_) => return schedutil::INFO.name,
        None => {}
    }
    match platform.driver {
        Driver::IntelPstate { mode: None } if !platform.hwp && kernel.intel_pstate_passive_default() => schedutil::INFO.name,
        Driver::IntelPstate { mode: None | Some(PstateMode::Active) } => powersave::INFO.name,
        Driver::Powernv { .. } => ondemand::INFO.name,
        Driver::IntelPstate { mode: Some(PstateMode::Passive) } | Driver::AcpiCpufreq | Driver::CpufreqDt => schedutil::INFO.name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(v: &str) -> KernelConfig {
        KernelConfig::from_spec(&Spec::new(v)).unwrap()
    }

    fn info(name: &str) -> &'static GovernorInfo {
        registry().iter().find(|g| g.name == name).unwrap()
    }

    /// A governor lists the eras that change it; a version lacking them
    /// says so, one line each, and the newest lacks none.
    #[test]
    fn differences_name_the_eras_a_version_lacks() {
        let d = k("3.15").differences(info("ondemand").eras);
        assert!(d.iter().any(|l| l.starts_with("ondemand_formula (v3.17")), "{d:?}");
        assert!(d.iter().any(|l| l.starts_with("copy_prev_load (v3.16")), "{d:?}");
        assert!(k("6.18").differences(info("ondemand").eras).is_empty());
        assert!(k("6.18").differences(info("schedutil").eras).is_empty());
        let d = k("6.8").differences(info("schedutil").eras);
        assert!(d.iter().any(|l| l.starts_with("schedutil_rate_limit_2ms (v6.9")), "{d:?}");
    }

    /// Patch tunables: mainline from the era that merged them, on top
    /// before; a patch never merged is on top everywhere.
    #[test]
    fn patches_are_mainline_from_their_merge_and_on_top_before() {
        let patch = |gov: &str, tunable: &str| *info(gov).patches.iter().find(|p| p.tunable == tunable).unwrap();
        assert!(!k("3.15").merged(&patch("ondemand", "copy_prev_load")));
        assert!(k("4.8").merged(&patch("conservative", "copy_prev_load")));
        assert!(!k("6.8").merged(&patch("schedutil", "iowait_boost")));
        assert!(!k("4.16").merged(&patch("intel_pstate", "hwp_dynamic_boost")));
        assert!(k("4.19").merged(&patch("intel_pstate", "hwp_dynamic_boost")));
        // Every patch names a tunable its governor declares.
        for g in registry() {
            for p in g.patches {
                assert!(g.params.iter().any(|s| s.name == p.tunable), "{}: {}", g.name, p.tunable);
            }
        }
    }

    /// Version-dependent defaults are declared on the tunable and resolve
    /// in the run's kernel (schedutil's and intel_pstate's iowait boost).
    #[test]
    fn versioned_defaults_follow_the_kernel() {
        let sky = crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap();
        let default = |gov: &str, tunable: &str, v: &str| {
            let spec = info(gov).params.iter().find(|p| p.name == tunable).unwrap();
            spec.default_text_in(&BuildCtx::new(sky.clone(), k(v)))
        };
        assert_eq!(default("schedutil", "iowait_boost", "4.8"), "off");
        assert_eq!(default("schedutil", "iowait_boost", "4.16"), "max");
        assert_eq!(default("schedutil", "iowait_boost", "4.19"), "gradual");
        assert_eq!(default("intel_pstate", "iowait_boost", "4.19"), "strong");
        assert_eq!(default("intel_pstate", "iowait_boost", "5.2"), "weak");
        assert_eq!(default("ondemand", "copy_prev_load", "3.15"), "off");
        assert_eq!(default("ondemand", "copy_prev_load", "4.8"), "on");
        // A wrong word is refused with the rule, not parsed past the choices.
        let ctx = BuildCtx::new(sky, k("4.16"));
        let e = build_for(&Spec::parse("schedutil:iowait_boost=huge", "cpufreq").unwrap(), &resolve_ctx(&Spec::new("schedutil"), ctx).unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("gradual, max, off") && e.contains("max from 4.9"), "{e}");
    }

    /// The kernel's decisions go into the run's context, never into the
    /// platform: before v5.9 intel_pstate's passive mode runs without HWP.
    #[test]
    fn passive_mode_before_5_9_turns_hwp_off_in_the_context_only() {
        let sky = crate::platform::load_named(&Spec::new("skylake-e3-1240v5")).unwrap();
        let ctx = resolve_ctx(&Spec::new("schedutil"), BuildCtx::new(sky.clone(), k("5.7"))).unwrap();
        assert!(!ctx.hwp && ctx.platform.hwp);
        let ctx = resolve_ctx(&Spec::new("schedutil"), BuildCtx::new(sky.clone(), k("5.9"))).unwrap();
        assert!(ctx.hwp);
        let ctx = resolve_ctx(&Spec::new("powersave"), BuildCtx::new(sky, k("5.7"))).unwrap();
        assert!(ctx.hwp, "intel_pstate's own powersave keeps HWP");
    }
}

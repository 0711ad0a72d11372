//! `name:key=value` changes to a loaded platform, as the command line asks
//! for them: `hz`, `turbo`, `hwp`, `smt`, `package_cstates`, `power_limit`, `deep_idle`, `idle_tick` and the cpufreq
//! driver's options (`intel_pstate`, `global_pstate`).

use super::checks::HZ_VALUES;
use crate::error::{Error, Result};
use crate::params::Params;
use crate::platform::{AmdPstateMode, Cpu, CpuId, Driver, IdleTick, Platform, PstateMode};

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
    /// amd-pstate's mode, as the kernel's `amd_pstate=passive|active|guided`
    /// asks for it; only on platforms with CPPC levels. Unset, the kernel's
    /// boot choice (see [`Platform::amd_pstate`]).
    pub amd_pstate: Option<AmdPstateMode>,
    /// powernv's global P-state ramp-down (`off`: the voltage follows every
    /// frequency request); only on powernv platforms. Unset, the platform
    /// file's `global_pstate` holds.
    pub global_pstate: Option<bool>,
    /// Deprecated: the kernel option `idle_tick` (`--kernel 4.16` or
    /// `--kernel 6.8:idle_tick=stopped`) says this now. `stopped`: the
    /// pre-v4.17 idle loop, which stopped the tick on every idle entry (see
    /// [`IdleTick`]); `governor`: v4.17+. Used where the kernel's option is
    /// not given.
    pub idle_tick: Option<IdleTick>,
    /// `off` keeps every package in PC0 (package C-states limited in the
    /// BIOS); `on` (the default) lets them follow their cores.
    pub package_cstates: Option<bool>,
    /// `off` lifts every package's power limit (RAPL's PL1 raised out of
    /// reach, POWER's power cap removed); `on` (the default) keeps the
    /// platform file's, and needs one.
    pub power_limit: Option<bool>,
    /// `off` keeps only each CPU type's shallowest idle state (WFI on Arm),
    /// as writing 1 to every deeper state's cpuidle `disable` file does
    /// (LISA's `disable_idle_states`, under which its EAS tests run).
    pub deep_idle: Option<bool>,
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
                        "active or passive (default: none forced; the kernel's boot mode, active with HWP and without HWP before v5.8, passive without HWP from v5.8; a generic governor such as schedutil switches to passive, intel_pstate:... to active)",
                    ))
                }
            },
        };
        let amd_pstate = match p.string("amd_pstate") {
            None => None,
            Some(v) => match [AmdPstateMode::Passive, AmdPstateMode::Active, AmdPstateMode::Guided].into_iter().find(|m| m.name() == v) {
                Some(m) => Some(m),
                None => {
                    return Err(Error::invalid(
                        p.owner(),
                        "amd_pstate",
                        v,
                        "passive, active or guided (default: none; the kernel's boot choice, acpi-cpufreq on an EPYC server)",
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
                        "governor or stopped (deprecated here: use the kernel's option, VERSION:idle_tick=...)",
                    ))
                }
            },
        };
        let package_cstates = opt_bool(p, "package_cstates")?;
        let power_limit = opt_bool(p, "power_limit")?;
        let deep_idle = opt_bool(p, "deep_idle")?;
        Ok(PlatformOverrides {
            hz,
            turbo,
            hwp,
            smt,
            intel_pstate,
            amd_pstate,
            global_pstate,
            idle_tick,
            package_cstates,
            power_limit,
            deep_idle,
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
        if let Some(mode) = self.amd_pstate {
            if p.cpu_types.iter().any(|t| t.cppc.is_none()) {
                return Err(Error::Unsupported(format!(
                    "platform {}: amd_pstate={}, but its CPUs give no CPPC levels ([cpu_type.cppc]); amd-pstate is AMD's CPPC driver",
                    p.name,
                    mode.name()
                )));
            }
            p.amd_pstate = Some(mode);
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
        if let Some(on) = self.package_cstates {
            p.package_cstates = on;
        }
        match self.power_limit {
            Some(false) => p.packages.iter_mut().for_each(|pkg| pkg.power_limit = None),
            Some(true) if p.packages.iter().all(|pkg| pkg.power_limit.is_none()) => {
                return Err(Error::Unsupported(format!(
                    "platform {}: power_limit=on, but its file sets no [package.power_limit]",
                    p.name
                )));
            }
            _ => {}
        }
        if self.deep_idle == Some(false) {
            for t in &mut p.cpu_types {
                t.idle_states.truncate(1);
            }
            // A package state needs its cores in a deeper state.
            for k in &mut p.packages {
                k.cstates.clear();
            }
        }
        if let Some(t) = self.idle_tick {
            p.idle_tick = Some(t);
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

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::testutil::{check_consistent, mini, named};

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
}
